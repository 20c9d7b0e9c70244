/*
 * lab_yaml2json: every YAML document of FILE ('-': stdin) as one line of
 * JSON, so that jq can check Kubernetes manifests in the suite.  Plain
 * scalars become null, booleans and numbers where YAML 1.2's core schema
 * says so; quoted ones stay strings.  Anchors and aliases are refused.
 */
#define PROG "lab_yaml2json"
#include "lab_cli.h"

#include <jansson.h>
#include <regex.h>
#include <stdbool.h>
#include <yaml.h>

static yaml_parser_t parser;

static bool next_event(yaml_event_t *ev)
{
	if (!yaml_parser_parse(&parser, ev)) {
		fprintf(stderr, PROG ": line %zu: %s\n", parser.problem_mark.line + 1,
			parser.problem ? parser.problem : "parse error");
		return false;
	}
	return true;
}

static bool matches(const char *re, const char *s)
{
	regex_t r;
	bool m;

	if (regcomp(&r, re, REG_EXTENDED | REG_NOSUB))
		return false;
	m = !regexec(&r, s, 0, NULL, 0);
	regfree(&r);
	return m;
}

/* YAML 1.2 core schema for plain scalars. */
static json_t *scalar(const yaml_event_t *ev)
{
	const char *v = (const char *)ev->data.scalar.value;

	if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return json_string(v);
	if (!*v || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") || !strcmp(v, "NULL"))
		return json_null();
	if (matches("^(true|True|TRUE)$", v))
		return json_true();
	if (matches("^(false|False|FALSE)$", v))
		return json_false();
	if (matches("^[-+]?[0-9]+$", v))
		return json_integer(strtoll(v, NULL, 10));
	if (matches("^[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?$", v))
		return json_real(strtod(v, NULL));
	return json_string(v);
}

/* The node that starts with ev (consumed). */
static json_t *node(yaml_event_t *ev)
{
	json_t *out = NULL;

	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		if (ev->data.scalar.anchor)
			goto alias;
		out = scalar(ev);
		break;
	case YAML_SEQUENCE_START_EVENT:
		if (ev->data.sequence_start.anchor)
			goto alias;
		out = json_array();
		for (;;) {
			yaml_event_t e;
			json_t *item;

			if (!next_event(&e))
				goto fail;
			if (e.type == YAML_SEQUENCE_END_EVENT) {
				yaml_event_delete(&e);
				break;
			}
			item = node(&e);
			if (!item)
				goto fail;
			json_array_append_new(out, item);
		}
		break;
	case YAML_MAPPING_START_EVENT:
		if (ev->data.mapping_start.anchor)
			goto alias;
		out = json_object();
		for (;;) {
			yaml_event_t k, v;
			json_t *value;
			char *key;

			if (!next_event(&k))
				goto fail;
			if (k.type == YAML_MAPPING_END_EVENT) {
				yaml_event_delete(&k);
				break;
			}
			if (k.type != YAML_SCALAR_EVENT) {
				fprintf(stderr, PROG ": line %zu: a key that is not a scalar\n",
					k.start_mark.line + 1);
				yaml_event_delete(&k);
				goto fail;
			}
			key = strdup((const char *)k.data.scalar.value);
			yaml_event_delete(&k);
			if (!next_event(&v) || !(value = node(&v))) {
				free(key);
				goto fail;
			}
			if (json_object_get(out, key)) {
				fprintf(stderr, PROG ": duplicate key '%s'\n", key);
				free(key);
				json_decref(value);
				goto fail;
			}
			json_object_set_new(out, key, value);
			free(key);
		}
		break;
	case YAML_ALIAS_EVENT:
		goto alias;
	default:
		fprintf(stderr, PROG ": line %zu: unexpected event\n", ev->start_mark.line + 1);
		break;
	}
	yaml_event_delete(ev);
	return out;
alias:
	fprintf(stderr, PROG ": line %zu: anchors and aliases are not supported\n",
		ev->start_mark.line + 1);
fail:
	yaml_event_delete(ev);
	json_decref(out);
	return NULL;
}

int main(int argc, char **argv)
{
	FILE *f;
	int rc = 0;

	if (argc != 2 || !strcmp(argv[1], "--help")) {
		printf("usage: " PROG " FILE|-\n\nEach YAML document of FILE as one line of JSON.\n"
		       "Exit 0, 1 on a parse error, 2 on usage error.\n");
		return argc == 2 ? 0 : 2;
	}
	f = strcmp(argv[1], "-") ? fopen(argv[1], "r") : stdin;
	if (!f) {
		warn_errno(argv[1]);
		return 1;
	}
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	for (;;) {
		yaml_event_t ev;
		json_t *doc;

		if (!next_event(&ev)) {
			rc = 1;
			break;
		}
		if (ev.type == YAML_STREAM_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		if (ev.type != YAML_DOCUMENT_START_EVENT) {
			yaml_event_delete(&ev);
			continue; /* stream start */
		}
		yaml_event_delete(&ev);
		if (!next_event(&ev)) {
			rc = 1;
			break;
		}
		if (ev.type == YAML_DOCUMENT_END_EVENT) {
			yaml_event_delete(&ev); /* an empty document */
			continue;
		}
		doc = node(&ev);
		if (!doc) {
			rc = 1;
			break;
		}
		json_dumpf(doc, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(doc);
		if (!next_event(&ev)) { /* document end */
			rc = 1;
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	if (f != stdin)
		fclose(f);
	return rc;
}
