/* sluicectl reload: ask the daemon to reload its configuration file. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/control.h"
#include "ctl/ctl.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: sluicectl reload [--socket PATH] [--json]\n\n"
		"Make sluiced reload its configuration file (like SIGHUP) and report the\n"
		"outcome.  An invalid file changes nothing: the old configuration keeps\n"
		"running and the errors are printed here.\n\n"
		"  --socket PATH   the daemon's control socket (default %s)\n"
		"  --json          print the daemon's answer as JSON\n"
		"Exit status: 0 reloaded, 1 not reloaded (or no daemon), 2 usage error.\n",
		SL_DEFAULT_CONTROL_SOCKET);
}

/* Human form: the message, then one line per diagnostic. */
static bool print_answer(const char *answer)
{
	json_t *root, *diags, *d;
	json_error_t jerr;
	bool ok;
	size_t i;

	root = json_loads(answer, 0, &jerr);
	if (!root) {
		fprintf(stderr, "sluicectl reload: the daemon's answer is not JSON: %s\n", jerr.text);
		return false;
	}
	ok = json_is_true(json_object_get(root, "ok"));
	printf("sluiced: %s\n", json_string_value(json_object_get(root, "message")) ?: "?");
	diags = json_object_get(root, "diagnostics");
	json_array_foreach(diags, i, d) {
		json_t *line = json_object_get(d, "line"), *col = json_object_get(d, "column");
		const char *obj = json_string_value(json_object_get(d, "object"));
		const char *path = json_string_value(json_object_get(d, "path"));

		printf("%s", json_string_value(json_object_get(d, "file")) ?: "");
		if (json_is_integer(line))
			printf(":%lld:%lld", json_integer_value(line), json_integer_value(col));
		printf(": %s: ", json_string_value(json_object_get(d, "severity")) ?: "");
		if (obj && *obj)
			printf("%s: ", obj);
		if (path && *path)
			printf("%s: ", path);
		printf("%s\n", json_string_value(json_object_get(d, "message")) ?: "");
	}
	json_decref(root);
	return ok;
}

int ctl_reload(int argc, char **argv)
{
	static const struct option opts[] = {
		{"socket", required_argument, NULL, 's'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	const char *sock = SL_DEFAULT_CONTROL_SOCKET;
	bool json = false, ok;
	char *answer = NULL;
	int c, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "s:jh", opts, NULL)) != -1) {
		switch (c) {
		case 's': sock = optarg; break;
		case 'j': json = true; break;
		case 'h': usage(stdout); return CTL_OK;
		default: usage(stderr); return CTL_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "sluicectl reload: unexpected argument '%s'\n", argv[optind]);
		return CTL_USAGE;
	}
	err = sl_control_request(sock, "reload", &answer);
	if (err) {
		fprintf(stderr, "sluicectl reload: %s: %s (is sluiced running? --socket)\n", sock,
			strerror(-err));
		return CTL_FAIL;
	}
	if (json) {
		json_t *root = json_loads(answer, 0, NULL);

		ok = root && json_is_true(json_object_get(root, "ok"));
		json_decref(root);
		fputs(answer, stdout);
	} else {
		ok = print_answer(answer);
	}
	free(answer);
	return ok ? CTL_OK : CTL_FAIL;
}
