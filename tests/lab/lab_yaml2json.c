// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * lab_yaml2json: every YAML document of FILE ('-': stdin) as one line of
 * JSON, so that jq can check Kubernetes manifests in the suite.  It reads
 * YAML the way sluice's configuration loader does (config/yaml_doc.h: the
 * YAML 1.2 core schema for plain scalars, quoted ones are strings) and
 * refuses a duplicate key or nesting past SL_YAML_MAX_DEPTH (a recursive
 * alias).
 */
#define PROG "lab_yaml2json"
#include "lab_cli.h"

#include <jansson.h>
#include <stdbool.h>

#include "config/yaml_doc.h"
#include "lib/read_file.h"

static json_t *node(const struct sl_ynode *n, int depth)
{
	json_t *out;

	if (depth > SL_YAML_MAX_DEPTH) {
		fprintf(stderr, PROG ": line %u: nested deeper than %d (a recursive alias?)\n", n->line,
			SL_YAML_MAX_DEPTH);
		return NULL;
	}
	switch (n->type) {
	case SL_Y_NULL:
		return json_null();
	case SL_Y_BOOL: {
		bool b = false;

		sl_ynode_bool(n, &b);
		return json_boolean(b);
	}
	case SL_Y_INT: {
		int64_t v;

		return sl_ynode_int(n, &v) ? json_stringn(n->str, n->len) : json_integer(v);
	}
	case SL_Y_FLOAT:
		return json_real(strtod(n->str, NULL));
	case SL_Y_STR:
		return json_stringn(n->str, n->len);
	case SL_Y_SEQ:
		out = json_array();
		for (size_t i = 0; i < n->n_items; i++) {
			json_t *item = node(n->items[i], depth + 1);

			if (!item) {
				json_decref(out);
				return NULL;
			}
			json_array_append_new(out, item);
		}
		return out;
	case SL_Y_MAP:
		out = json_object();
		for (size_t i = 0; i < n->n_pairs; i++) {
			const char *key = sl_ynode_str(n->pairs[i].key);
			json_t *value;

			if (!key || json_object_get(out, key)) {
				fprintf(stderr, PROG ": line %u: %s key\n", n->pairs[i].key->line,
					key ? "duplicate" : "a non-string");
				json_decref(out);
				return NULL;
			}
			value = node(n->pairs[i].value, depth + 1);
			if (!value) {
				json_decref(out);
				return NULL;
			}
			json_object_set_new(out, key, value);
		}
		return out;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct sl_diags diags = SL_DIAGS_INIT;
	struct sl_ystream ys = {0};
	char *buf = NULL;
	size_t len = 0;
	int rc = 0, err;

	if (argc != 2 || !strcmp(argv[1], "--help")) {
		printf("usage: " PROG " FILE|-\n\nEach YAML document of FILE as one line of JSON.\n"
		       "Exit 0, 1 on a parse error, 2 on usage error.\n");
		return argc == 2 ? 0 : 2;
	}
	err = sl_read_file(argv[1], 16u << 20, &buf, &len);
	if (err) {
		fprintf(stderr, PROG ": %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	if (sl_ystream_load(&ys, argv[1], buf, len, &diags)) {
		sl_diags_print(&diags, stderr);
		rc = 1;
	}
	for (size_t i = 0; !rc && i < ys.n_docs; i++) {
		json_t *doc = node(ys.docs[i].root, 0);

		if (!doc) {
			rc = 1;
			break;
		}
		json_dumpf(doc, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(doc);
	}
	sl_ystream_free(&ys);
	sl_diags_free(&diags);
	free(buf);
	return rc;
}
