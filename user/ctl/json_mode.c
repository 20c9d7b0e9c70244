// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sluicectl's JSON mode (-j, -p): errors as {"error": ...} on stdout, and
 * --pretty's indentation.  See ctl.h.
 *
 * In JSON mode stderr is collected while the command runs: a command that
 * fails leaves one JSON object on stdout with what it said; one that
 * succeeds has its warnings passed on to the real stderr.  With --pretty
 * stdout goes through a re-indenter that copies every token as written
 * (numbers keep their digits, strings their escapes) and only adds
 * newlines and two-space indentation, so it streams: `top --json --pretty`
 * shows each snapshot as it comes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl.h"
#include "ctl/options.h"
#include "lib/json_out.h"

/* ---- the re-indenter ---------------------------------------------------------- */

struct reindent {
	FILE *out;
	int depth;
	bool in_string, escape;
	bool open_pending; /* after { or [: newline, unless the container is empty */
};

static void newline(struct reindent *r, int depth)
{
	fputc('\n', r->out);
	for (int i = 0; i < depth; i++)
		fputs("  ", r->out);
}

static void reindent_char(struct reindent *r, char c)
{
	if (r->in_string) {
		fputc(c, r->out);
		if (r->escape)
			r->escape = false;
		else if (c == '\\')
			r->escape = true;
		else if (c == '"')
			r->in_string = false;
		return;
	}
	if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
		/* Layout is ours; a document ends with its newline. */
		if (c == '\n' && r->depth == 0 && !r->open_pending)
			fputc('\n', r->out);
		return;
	}
	if (r->open_pending) {
		r->open_pending = false;
		if (c == '}' || c == ']') {
			fputc(c, r->out);
			r->depth--;
			return;
		}
		newline(r, r->depth);
	}
	switch (c) {
	case '{':
	case '[':
		fputc(c, r->out);
		r->depth++;
		r->open_pending = true;
		break;
	case '}':
	case ']':
		r->depth = r->depth > 0 ? r->depth - 1 : 0;
		newline(r, r->depth);
		fputc(c, r->out);
		break;
	case ',':
		fputc(c, r->out);
		newline(r, r->depth);
		break;
	case ':':
		fputs(": ", r->out);
		break;
	case '"':
		r->in_string = true;
		fputc(c, r->out);
		break;
	default:
		fputc(c, r->out);
	}
}

static ssize_t reindent_write(void *cookie, const char *buf, size_t size)
{
	struct reindent *r = cookie;

	for (size_t i = 0; i < size; i++)
		reindent_char(r, buf[i]);
	fflush(r->out);
	return (ssize_t)size;
}

/* ---- the mode ----------------------------------------------------------------- */

void ctl_json_error(FILE *f, const char *message, int exit_status)
{
	struct json_out jo;

	jo_init(&jo, f, false);
	jo_obj_begin(&jo, NULL);
	jo_str(&jo, "error", message);
	jo_i64(&jo, "exit_status", exit_status);
	jo_obj_end(&jo);
	jo_finish(&jo);
}

int ctl_json_mode_begin(struct ctl_json_mode *jm)
{
	static struct reindent r;

	memset(jm, 0, sizeof(*jm));
	if (!ctl_global.json)
		return 0;
	jm->real_err = stderr;
	jm->err = open_memstream(&jm->err_text, &jm->err_len);
	if (!jm->err)
		return -1;
	stderr = jm->err;
	if (ctl_global.pretty) {
		cookie_io_functions_t io = {.write = reindent_write};

		memset(&r, 0, sizeof(r));
		r.out = stdout;
		jm->real_out = stdout;
		jm->out = fopencookie(&r, "w", io);
		if (jm->out) {
			setvbuf(jm->out, NULL, _IOLBF, 0);
			stdout = jm->out;
		}
	}
	return 0;
}

int ctl_json_mode_end(struct ctl_json_mode *jm, int rc)
{
	if (!jm->err)
		return rc;
	if (jm->out) {
		fclose(jm->out);
		stdout = jm->real_out;
	}
	fclose(jm->err);
	stderr = jm->real_err;
	if (rc != CTL_OK && jm->err_len) {
		/* One message: what the command said, its last newline cut. */
		while (jm->err_len && jm->err_text[jm->err_len - 1] == '\n')
			jm->err_text[--jm->err_len] = '\0';
		if (ctl_global.pretty) {
			struct reindent r = {.out = stdout};
			char *text = NULL;
			size_t len = 0;
			FILE *m = open_memstream(&text, &len);

			if (m) {
				ctl_json_error(m, jm->err_text, rc);
				fclose(m);
				for (size_t i = 0; i < len; i++)
					reindent_char(&r, text[i]);
				free(text);
			}
		} else {
			ctl_json_error(stdout, jm->err_text, rc);
		}
	} else if (jm->err_len) {
		fwrite(jm->err_text, 1, jm->err_len, stderr);
	}
	fflush(stdout);
	free(jm->err_text);
	return rc;
}
