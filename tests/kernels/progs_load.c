// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * progs_load: load each program of a BPF object alone, with every map
 * created and the object's other programs left out, and print one TAP line
 * per program: the verifier's verdict and the instructions it processed.
 * A refused program's whole verifier log goes to DIR/<program>.verifier.log
 * and its last line before the statistics (the reason) to the TAP line.
 *
 *   progs_load OBJECT [DIR]
 *
 * The kernel matrix (tests/kernels/) runs it in each guest: a program one
 * verifier refuses fails there, with its reason, before any suite runs.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PROGS 32
#define LOG_SIZE  (64u << 20) /* 6.1 logs every state it walked before giving up */

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/* The verifier's reason: the last line before "processed N insns". */
static const char *refusal_reason(char *log)
{
	char *line, *save = NULL, *prev = NULL;

	for (line = strtok_r(log, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "processed ", 10) || !strncmp(line, "verification time", 17))
			break;
		prev = line;
	}
	return prev ? prev : "no verifier log (refused before the verifier ran)";
}

static void keep_log(const char *dir, const char *prog, const char *log)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.verifier.log", dir, prog);
	f = fopen(path, "w");
	if (!f)
		return;
	fputs(log, f);
	fclose(f);
}

/* Load PROG alone; 0 when the kernel took it. */
static int load_one(const char *obj_path, const char *prog, const char *dir, int n, char *log)
{
	struct bpf_object *obj = bpf_object__open_file(obj_path, NULL);
	struct bpf_program *p;
	int err;

	if (!obj) {
		printf("not ok %d - %s: open %s: %s\n", n, prog, obj_path, strerror(errno));
		return -1;
	}
	log[0] = '\0';
	bpf_object__for_each_program(p, obj) {
		bool me = !strcmp(bpf_program__name(p), prog);

		bpf_program__set_autoload(p, me);
		if (me) {
			bpf_program__set_log_buf(p, log, LOG_SIZE);
			bpf_program__set_log_level(p, 1);
		}
	}
	err = bpf_object__load(obj);
	if (err) {
		keep_log(dir, prog, log);
		printf("not ok %d - %s refused (%d): %s\n", n, prog, err, refusal_reason(log));
	} else {
		char *stats = strstr(log, "processed "), *nl = stats ? strchr(stats, '\n') : NULL;

		if (nl)
			*nl = '\0';
		printf("ok %d - %s loads (%s)\n", n, prog, stats ? stats : "no statistics");
	}
	bpf_object__close(obj);
	return err ? -1 : 0;
}

int main(int argc, char **argv)
{
	char names[MAX_PROGS][64];
	struct bpf_object *obj;
	struct bpf_program *p;
	const char *dir;
	int n = 0, bad = 0;
	char *log;

	if (argc < 2 || !strcmp(argv[1], "--help")) {
		fprintf(argc < 2 ? stderr : stdout, "usage: progs_load OBJECT [DIR]\n"
			"Load each program of OBJECT alone; TAP out, refused programs' logs in DIR (.)\n");
		return argc < 2 ? 2 : 0;
	}
	dir = argc > 2 ? argv[2] : ".";
	libbpf_set_print(quiet);
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "progs_load: open %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	bpf_object__for_each_program(p, obj) {
		if (n == MAX_PROGS)
			break;
		snprintf(names[n++], sizeof(names[0]), "%s", bpf_program__name(p));
	}
	bpf_object__close(obj);
	log = malloc(LOG_SIZE);
	if (!log) {
		fprintf(stderr, "progs_load: out of memory\n");
		return 2;
	}
	printf("1..%d\n", n);
	for (int i = 0; i < n; i++)
		bad += load_one(argv[1], names[i], dir, i + 1, log) ? 1 : 0;
	free(log);
	return bad ? 1 : 0;
}
