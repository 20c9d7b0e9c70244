// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sluicectl validate | limits | explain: the daemon's own configuration
 * code, run offline on a file.
 */
#include <errno.h>
#include <net/if.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <jansson.h>

#include "engine/classifier.h"
#include "engine/limits.h"
#include "config/config.h"
#include "ctl/ctl.h"
#include "ctl/daemon_paths.h"
#include "engine/plan.h"
#include "ctl/options.h"
#include "daemon/control.h"
#include "lib/flowhash.h"
#include "lib/fmt.h"
#include "lib/json_out.h"
#include "lib/shuffle.h"

/* ---- validate ------------------------------------------------------------ */

struct validate_opts {
	const char *config;
	bool json;
};

static const struct sl_opt validate_options[] = {
	SL_ROW_STRING('c', "config", struct validate_opts, config, "FILE",
		      "a configuration to check (as every command names one);\nmore may follow as arguments", 0),
	CTL_JSON(struct validate_opts, json,
		 "{\"valid\": bool, \"files\": [...], \"diagnostics\": [{file, line,\n"
		 "column, object, path, severity, message}]}"),
	SL_ROW_END,
};

static const struct sl_opt_doc validate_doc = {
	.prog = "sluicectl", .command = "validate",
	.args = "[FILE...]",
	.min_args = 0,
	.max_args = SL_OPT_ARGS_ANY,
	.description =
		"Check configuration files the way sluiced would load them.  Every error\n"
		"and warning names file:line:column, the object, the field and the cause.\n",
	.epilogue = "Exit status: 0 valid (warnings allowed), 1 any error, 2 usage error.\n",
};

/* The diagnostics as the same keys sl_diags_json writes, through the
 * writer of the rest: compact with -j, indented with -p. */
static void diags_json(struct json_out *jo, const struct sl_diags *d)
{
	jo_arr_begin(jo, "diagnostics");
	for (size_t i = 0; d && i < d->count; i++) {
		const struct sl_diag *g = &d->items[i];

		jo_obj_begin(jo, NULL);
		jo_str(jo, SL_DIAG_KEY_FILE, g->file);
		if (g->line)
			jo_u64(jo, SL_DIAG_KEY_LINE, g->line);
		else
			jo_null(jo, SL_DIAG_KEY_LINE);
		if (g->line && g->column)
			jo_u64(jo, SL_DIAG_KEY_COLUMN, g->column);
		else
			jo_null(jo, SL_DIAG_KEY_COLUMN);
		jo_str(jo, SL_DIAG_KEY_OBJECT, g->object);
		jo_str(jo, SL_DIAG_KEY_PATH, g->path);
		jo_str(jo, SL_DIAG_KEY_SEVERITY, sl_severity_name(g->severity));
		jo_str(jo, SL_DIAG_KEY_MESSAGE, g->message);
		jo_obj_end(jo);
	}
	jo_arr_end(jo);
}

/* Which controller each policy of a valid file runs: the mode is decided
 * by spec.mode, else by the apiVersion and the signal (config/policy.c),
 * and an operator should not have to work it out. */
struct policy_modes {
	size_t n;
	struct { char name[SL_LEVEL_NAME_SIZE]; bool aperture; } *p;
};

static void keep_policy_modes(struct policy_modes *pm, const struct sl_config *cfg)
{
	pm->p = calloc(cfg->n_policies ? cfg->n_policies : 1, sizeof(*pm->p));
	if (!pm->p)
		return;
	pm->n = cfg->n_policies;
	for (size_t k = 0; k < cfg->n_policies; k++) {
		snprintf(pm->p[k].name, sizeof(pm->p[k].name), "%s", cfg->policies[k].name);
		pm->p[k].aperture = cfg->policies[k].mode == SL_POLICY_APERTURE;
	}
}

static const char *mode_words(bool aperture)
{
	return aperture ? "Aperture's AIMD load multiplier (mode aperture)" :
			  "sluice's gradient on a limit in flight (mode sluice)";
}

int ctl_validate(int argc, char **argv)
{
	struct validate_opts o = {0};
	struct sl_diags all = SL_DIAGS_INIT;
	struct sl_opt_parsed parsed;
	struct json_out jo;
	bool valid = true;
	size_t *errors, *warnings;
	struct policy_modes *modes;
	int rc, nfiles;

	rc = ctl_parse_options(&validate_doc, validate_options, &o, argc, argv, &parsed);
	if (rc != CTL_PARSE_RUN)
		return rc;
	/* -c FILE is one more file, checked first: the slot before the
	 * arguments holds the last option, no longer needed. */
	if (o.config)
		argv[--parsed.first_arg] = (char *)o.config;
	argv += parsed.first_arg;
	nfiles = argc - parsed.first_arg;
	if (!nfiles) {
		fprintf(stderr, "sluicectl validate: needs -c FILE or FILE... (see --help)\n");
		return CTL_USAGE;
	}
	errors = calloc((size_t)nfiles, sizeof(*errors));
	warnings = calloc((size_t)nfiles, sizeof(*warnings));
	modes = calloc((size_t)nfiles, sizeof(*modes));
	if (!errors || !warnings || !modes) {
		free(errors);
		free(warnings);
		free(modes);
		return CTL_FAIL;
	}
	for (int i = 0; i < nfiles; i++) {
		size_t e0 = sl_diags_error_count(&all), w0 = sl_diags_warning_count(&all);

		struct sl_config *cfg = NULL;

		/* What the daemon would say too: the plan's diagnostics (class
		 * table size, seat caps) after the file's own. */
		if (!sl_config_load_file(argv[i], &cfg, &all) && cfg) {
			char names[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN] = {{0}};
			struct sl_plan plan;

			if (!sl_plan_build(cfg, names, cfg->server.n_interfaces ? cfg->server.interfaces[0] : "",
					   &plan, &all) && cfg->server.n_interfaces > 1) {
				const char *ifs[SL_MAX_INTERFACES];

				for (size_t k = 0; k < cfg->server.n_interfaces; k++)
					ifs[k] = cfg->server.interfaces[k];
				sl_plan_check_interfaces(cfg, &plan, ifs, cfg->server.n_interfaces, &all);
			}
			sl_plan_free(&plan);
			keep_policy_modes(&modes[i], cfg);
			sl_config_free(cfg);
		}
		errors[i] = sl_diags_error_count(&all) - e0;
		warnings[i] = sl_diags_warning_count(&all) - w0;
		if (errors[i])
			valid = false;
	}
	if (o.json) {
		jo_init(&jo, stdout, false);
		jo_obj_begin(&jo, NULL);
		jo_bool(&jo, "valid", valid);
		jo_arr_begin(&jo, "files");
		for (int i = 0; i < nfiles; i++) {
			jo_obj_begin(&jo, NULL);
			jo_str(&jo, "file", argv[i]);
			jo_bool(&jo, "valid", errors[i] == 0);
			jo_u64(&jo, "errors", errors[i]);
			jo_u64(&jo, "warnings", warnings[i]);
			jo_arr_begin(&jo, "policies");
			for (size_t k = 0; k < modes[i].n; k++) {
				jo_obj_begin(&jo, NULL);
				jo_str(&jo, "name", modes[i].p[k].name);
				jo_str(&jo, "mode", modes[i].p[k].aperture ? "aperture" : "sluice");
				jo_obj_end(&jo);
			}
			jo_arr_end(&jo);
			jo_obj_end(&jo);
		}
		jo_arr_end(&jo);
		diags_json(&jo, &all);
		jo_obj_end(&jo);
		jo_finish(&jo);
	} else {
		sl_diags_print(&all, stderr);
		for (int i = 0; i < nfiles; i++) {
			if (errors[i])
				printf("%s: invalid: %zu error%s, %zu warning%s\n", argv[i],
				       errors[i], errors[i] == 1 ? "" : "s", warnings[i],
				       warnings[i] == 1 ? "" : "s");
			else
				printf("%s: valid (%zu warning%s)\n", argv[i], warnings[i],
				       warnings[i] == 1 ? "" : "s");
			for (size_t k = 0; !errors[i] && k < modes[i].n; k++)
				printf("  AverageLatencySchedulingPolicy/%s runs %s\n", modes[i].p[k].name,
				       mode_words(modes[i].p[k].aperture));
		}
	}
	for (int i = 0; i < nfiles; i++)
		free(modes[i].p);
	free(modes);
	free(errors);
	free(warnings);
	sl_diags_free(&all);
	return valid ? CTL_OK : CTL_FAIL;
}

/* Load a config for limits/explain; diagnostics go to stderr. */
static struct sl_config *load_or_report(const char *cmd, const char *path)
{
	struct sl_diags diags = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;

	if (sl_config_load_file(path, &cfg, &diags)) {
		sl_diags_print(&diags, stderr);
		fprintf(stderr, "sluicectl %s: %s is not a valid configuration\n", cmd, path);
	}
	sl_diags_free(&diags);
	return cfg;
}

/* ---- limits -------------------------------------------------------------- */

struct limits_opts {
	const char *config;
	uint32_t server_concurrency;
	bool json;
};

static const struct sl_opt limits_options[] = {
	SL_ROW_STRING('c', "config", struct limits_opts, config, "FILE", "the configuration", SL_OPT_REQUIRED),
	SL_ROW_NUMBER(SL_OPT_U32, 0, "server-concurrency", struct limits_opts, server_concurrency, "N",
		   1, INT32_MAX, "override the Server's serverConcurrencyLimit", 0),
	CTL_JSON(struct limits_opts, json,
		 "{\"server_concurrency_limit\": N, \"levels\": [{\"name\",\n"
		 "\"type\", \"shares\", \"nominal\", \"lendable\", \"borrowing\",\n"
		 "\"min\", \"max\"}]}"),
	SL_ROW_END,
};

static const struct sl_opt_doc limits_doc = {
	.prog = "sluicectl", .command = "limits",
	.description =
		"Per priority level, the seats it is entitled to (Kubernetes APF):\n"
		"nominal = ceil(serverConcurrencyLimit x shares / sum of shares), lendable,\n"
		"borrowing limit, and the min and max its current limit can move between.\n",
};

int ctl_limits(int argc, char **argv)
{
	struct limits_opts o = {0};
	struct sl_limit_input *in = NULL;
	struct sl_level_limits *out = NULL;
	struct sl_opt_parsed parsed;
	struct sl_config *cfg;
	struct json_out jo;
	long server_cl;
	int rc;

	rc = ctl_parse_options(&limits_doc, limits_options, &o, argc, argv, &parsed);
	if (rc != CTL_PARSE_RUN)
		return rc;
	rc = CTL_FAIL;
	cfg = load_or_report("limits", o.config);
	if (!cfg)
		return CTL_FAIL;
	server_cl = o.server_concurrency;
	if (!server_cl)
		server_cl = cfg->server.server_concurrency_limit;
	in = calloc(cfg->n_levels, sizeof(*in));
	out = calloc(cfg->n_levels, sizeof(*out));
	if (!in || !out)
		goto done;
	for (size_t i = 0; i < cfg->n_levels; i++) {
		in[i].exempt = cfg->levels[i].type == SL_LEVEL_EXEMPT;
		in[i].shares = (uint32_t)cfg->levels[i].shares;
		in[i].lendable_percent = (uint32_t)cfg->levels[i].lendable_percent;
		in[i].borrowing_limit_percent = cfg->levels[i].borrowing_limit_percent;
	}
	if (sl_limits_compute((uint32_t)server_cl, in, cfg->n_levels, out)) {
		fprintf(stderr, "sluicectl limits: cannot compute limits\n");
		goto done;
	}
	if (o.json) {
		jo_init(&jo, stdout, false);
		jo_obj_begin(&jo, NULL);
		jo_u64(&jo, "server_concurrency_limit", (uint64_t)server_cl);
		jo_arr_begin(&jo, "levels");
		for (size_t i = 0; i < cfg->n_levels; i++) {
			jo_obj_begin(&jo, NULL);
			jo_str(&jo, "name", cfg->levels[i].name);
			jo_str(&jo, "type", cfg->levels[i].type == SL_LEVEL_EXEMPT ? "Exempt" : "Limited");
			jo_u64(&jo, "shares", in[i].shares);
			jo_u64(&jo, "nominal", out[i].nominal);
			jo_u64(&jo, "lendable", out[i].lendable);
			jo_u64(&jo, "borrowing", out[i].borrowing);
			jo_u64(&jo, "min", out[i].min);
			jo_u64(&jo, "max", out[i].max);
			jo_obj_end(&jo);
		}
		jo_arr_end(&jo);
		jo_obj_end(&jo);
		jo_finish(&jo);
	} else {
		uint64_t sum = 0;

		printf("serverConcurrencyLimit %ld\n", server_cl);
		printf("%-24s %-8s %6s %8s %9s %10s %6s %6s\n", "LEVEL", "TYPE", "SHARES", "NOMINAL",
		       "LENDABLE", "BORROWING", "MIN", "MAX");
		for (size_t i = 0; i < cfg->n_levels; i++) {
			printf("%-24s %-8s %6u %8u %9u %10u %6u %6u\n", cfg->levels[i].name,
			       in[i].exempt ? "Exempt" : "Limited", in[i].shares, out[i].nominal,
			       out[i].lendable, out[i].borrowing, out[i].min, out[i].max);
			sum += out[i].nominal;
		}
		printf("sum of nominal limits %" PRIu64 " (ceilings may exceed the budget slightly)\n", sum);
	}
	rc = CTL_OK;
done:
	free(in);
	free(out);
	sl_config_free(cfg);
	return rc;
}

/* ---- explain ------------------------------------------------------------- */

static int parse_addr_opt(const char *arg, void *field, char *why, size_t len)
{
	if (sl_parse_addr(arg, field) < 0) {
		snprintf(why, len, "'%s' is not an IPv4 or IPv6 address", arg);
		return -EINVAL;
	}
	return 0;
}

/* An interface name as the kernel has them: 1 to IFNAMSIZ - 1 bytes. */
static int parse_ifname_opt(const char *arg, void *field, char *why, size_t len)
{
	if (!*arg || strlen(arg) >= IFNAMSIZ) {
		snprintf(why, len, "an interface name has 1 to %d characters (got %zu)", IFNAMSIZ - 1,
			 strlen(arg));
		return -EINVAL;
	}
	*(const char **)field = arg;
	return 0;
}

static int parse_hex_key(const char *arg, void *field, char *why, size_t len)
{
	uint8_t *key = field;

	if (strlen(arg) != 32)
		goto bad;
	for (int i = 0; i < 16; i++) {
		unsigned v;

		if (!isxdigit((unsigned char)arg[2 * i]) || !isxdigit((unsigned char)arg[2 * i + 1]) ||
		    sscanf(arg + 2 * i, "%2x", &v) != 1)
			goto bad;
		key[i] = (uint8_t)v;
	}
	return 0;
bad:
	snprintf(why, len, "'%s' is not 32 hex digits", arg);
	return -EINVAL;
}

struct explain_opts {
	const char *config;
	uint8_t src[16], dst[16];
	uint16_t sport, dport;
	const char *iface;
	uint8_t hash_key[16];
	const char *socket;
	bool json;
};

static const struct sl_opt explain_options[] = {
	SL_ROW_STRING('c', "config", struct explain_opts, config, "FILE", "the configuration", SL_OPT_REQUIRED),
	SL_ROW_CUSTOM(0, "src", struct explain_opts, src, "ADDR", parse_addr_opt, "the client's address",
		   SL_OPT_REQUIRED),
	SL_ROW_NUMBER(SL_OPT_U16, 'S', "sport", struct explain_opts, sport, "PORT", 0, 65535,
		   "the client's port (default 40000)", 0),
	SL_ROW_CUSTOM('d', "dst", struct explain_opts, dst, "ADDR", parse_addr_opt,
		   "the local address it connects to", SL_OPT_REQUIRED),
	SL_ROW_NUMBER(SL_OPT_U16, 'D', "dport", struct explain_opts, dport, "PORT", 0, 65535,
		   "the local port it connects to", SL_OPT_REQUIRED),
	SL_ROW_CUSTOM('i', "iface", struct explain_opts, iface, "IFNAME", parse_ifname_opt,
		   "the interface the SYN arrives on", 0),
	SL_ROW_CUSTOM(0, "hash-key", struct explain_opts, hash_key, "HEX32", parse_hex_key,
		   "the 128-bit flow-hash key as 32 hex digits (the daemon\n"
		   "draws its own at random; default: ask the daemon, else\n"
		   "all zero)", 0),
	CTL_SOCKET(struct explain_opts, socket),
	CTL_JSON(struct explain_opts, json, "one JSON object"),
	SL_ROW_END,
};

static const struct sl_opt_doc explain_doc = {
	.prog = "sluicectl", .command = "explain",
	.description =
		"Why a connection lands where it does: its labels, the FlowSchema that matches\n"
		"it (which rule, subject and destination), the priority level, the flow\n"
		"distinguisher and its hash (and the queues dealt to it), and the\n"
		"AverageLatencySchedulingPolicy and workload that select it.\n\n"
		"The hash, and so the queues, depend on a 128-bit key that sluiced draws\n"
		"at random when it starts (clients cannot aim at a queue).  Without\n"
		"--hash-key, explain asks the running daemon (--socket) for the flow's\n"
		"real hash and queues; when it cannot, it says that its numbers come from\n"
		"a fixed all-zero key and are not the daemon's.\n",
};

/* Where the hash came from. */
enum hash_source { HASH_FIXED, HASH_GIVEN, HASH_DAEMON };

struct explain {
	struct sl_conn_tuple t;
	struct sl_labels labels;
	struct sl_class_result r;
	char distinguisher[64];
	uint64_t hash;
	uint32_t hand[SL_SHUFFLE_MAX_HAND];
	uint32_t hand_size;
	enum hash_source source;
	const char *socket; /* asked, for the note when it did not answer */
};

static const char *const source_names[] = {
	[HASH_FIXED] = "fixed", [HASH_GIVEN] = "given", [HASH_DAEMON] = "daemon",
};

/* The running daemon's hash and hand for the flow; false when it does not
 * answer (not running, another configuration, no access). */
static bool ask_daemon(struct explain *e, const char *schema, const char *socket)
{
	char req[SL_CONTROL_REQUEST_MAX], flow[SL_CONTROL_REQUEST_MAX], *answer = NULL;
	const char *why;
	json_t *root, *h, *c;
	bool ok = false;
	size_t i;

	if (snprintf(flow, sizeof(flow), "%s=%s", schema, e->distinguisher) >= (int)sizeof(flow) ||
	    sl_control_format(req, sizeof(req), SL_CTL_HAND, flow, &why) ||
	    sl_control_request(socket, req, &answer))
		return false;
	root = json_loads(answer, 0, NULL);
	free(answer);
	if (root && json_is_true(json_object_get(root, SL_HAND_KEY(OK))) &&
	    json_is_string(h = json_object_get(root, SL_HAND_KEY(HASH))) &&
	    json_array_size(json_object_get(root, SL_HAND_KEY(HAND))) <= SL_SHUFFLE_MAX_HAND) {
		e->hash = strtoull(json_string_value(h), NULL, 16);
		e->hand_size = 0;
		json_array_foreach(json_object_get(root, SL_HAND_KEY(HAND)), i, c)
			e->hand[e->hand_size++] = (uint32_t)json_integer_value(c);
		ok = true;
	}
	json_decref(root);
	return ok;
}

static void explain_json(const struct sl_config *cfg, const struct explain *e)
{
	const struct sl_flow_schema *fs = e->r.schema != SL_NONE ? &cfg->schemas[e->r.schema] : NULL;
	const struct sl_level_cfg *lvl = fs ? &cfg->levels[fs->level] : NULL;
	struct json_out jo;
	char buf[64];

	jo_init(&jo, stdout, false);
	jo_obj_begin(&jo, NULL);
	jo_obj_begin(&jo, "connection");
	jo_str(&jo, "src", sl_fmt_addr(e->t.saddr, buf, sizeof(buf)));
	jo_u64(&jo, "sport", e->t.sport);
	jo_str(&jo, "dst", sl_fmt_addr(e->t.daddr, buf, sizeof(buf)));
	jo_u64(&jo, "dport", e->t.dport);
	jo_obj_end(&jo);
	jo_obj_begin(&jo, "labels");
	for (size_t i = 0; i < e->labels.count; i++)
		jo_str(&jo, e->labels.items[i].key, e->labels.items[i].value);
	jo_obj_end(&jo);
	if (fs) {
		jo_obj_begin(&jo, "flow_schema");
		jo_str(&jo, "name", fs->name);
		jo_u64(&jo, "matching_precedence", fs->precedence);
		jo_u64(&jo, "rule", e->r.rule);
		jo_u64(&jo, "subject", e->r.subject);
		jo_u64(&jo, "destination", e->r.destination);
		jo_u64(&jo, "seats_per_connection", fs->seats_per_conn);
		jo_obj_end(&jo);
		jo_obj_begin(&jo, "priority_level");
		jo_str(&jo, "name", lvl->name);
		jo_str(&jo, "type", lvl->type == SL_LEVEL_EXEMPT ? "Exempt" : "Limited");
		jo_str(&jo, "limit_response", lvl->type == SL_LEVEL_EXEMPT ? NULL :
			     lvl->limit_response == SL_RESP_QUEUE ? "Queue" : "Reject");
		jo_obj_end(&jo);
		jo_obj_begin(&jo, "flow");
		jo_str(&jo, "distinguisher", e->distinguisher);
		snprintf(buf, sizeof(buf), "0x%016" PRIx64, e->hash);
		jo_str(&jo, "hash", buf);
		jo_str(&jo, "hash_key", source_names[e->source]);
		jo_arr_begin(&jo, "hand");
		for (uint32_t i = 0; i < e->hand_size; i++)
			jo_u64(&jo, NULL, e->hand[i]);
		jo_arr_end(&jo);
		jo_obj_end(&jo);
	} else {
		jo_null(&jo, "flow_schema");
		jo_null(&jo, "priority_level");
	}
	if (e->r.policy != SL_NONE) {
		const struct sl_policy_cfg *p = &cfg->policies[e->r.policy];

		jo_obj_begin(&jo, "policy");
		jo_str(&jo, "name", p->name);
		jo_str(&jo, "workload", e->r.workload != SL_NONE ? p->workloads[e->r.workload].name
								 : "default");
		jo_obj_end(&jo);
	} else {
		jo_null(&jo, "policy");
	}
	jo_obj_end(&jo);
	jo_finish(&jo);
}

static void explain_text(const struct sl_config *cfg, const struct explain *e)
{
	const struct sl_flow_schema *fs = e->r.schema != SL_NONE ? &cfg->schemas[e->r.schema] : NULL;
	char a[64], b[64], m[512];

	printf("connection  %s -> %s\n", sl_fmt_endpoint(e->t.saddr, htons(e->t.sport), a, sizeof(a)),
	       sl_fmt_endpoint(e->t.daddr, htons(e->t.dport), b, sizeof(b)));
	printf("labels     ");
	for (size_t i = 0; i < e->labels.count; i++)
		printf(" %s=%s", e->labels.items[i].key, e->labels.items[i].value);
	printf("\n");
	if (!fs) {
		printf("flowschema  none matches (no catch-all?)\n");
		return;
	}
	printf("flowschema  %s (precedence %u%s), rule %zu: subject %zu and destination %zu match\n",
	       fs->name, fs->precedence, fs->mandatory ? ", mandatory" : "", e->r.rule,
	       e->r.subject, e->r.destination);
	{
		const struct sl_subject *s = &fs->rules[e->r.rule].subjects[e->r.subject];

		if (s->kind == SL_SUBJECT_NETWORK) {
			printf("            subject: kind Network, cidrs");
			for (size_t i = 0; i < s->n_cidrs; i++)
				printf(" %s", sl_cidr_format(&s->cidrs[i], a, sizeof(a)));
			printf("\n");
		} else {
			sl_label_matcher_format(&s->labels, m, sizeof(m));
			printf("            subject: kind Labels, %s\n", m);
		}
	}
	{
		const struct sl_level_cfg *l = &cfg->levels[fs->level];

		printf("level       %s (%s%s), %u seat%s per connection\n", l->name,
		       l->type == SL_LEVEL_EXEMPT ? "Exempt" : "Limited",
		       l->type == SL_LEVEL_EXEMPT ? "" :
		       l->limit_response == SL_RESP_QUEUE ? ", Queue" : ", Reject",
		       fs->seats_per_conn, fs->seats_per_conn == 1 ? "" : "s");
	}
	printf("flow        distinguisher \"%s\", hash 0x%016" PRIx64, e->distinguisher, e->hash);
	if (e->hand_size) {
		printf(", queues");
		for (uint32_t i = 0; i < e->hand_size; i++)
			printf("%s%u", i ? "," : " ", e->hand[i]);
	}
	printf("\n");
	if (e->source == HASH_DAEMON)
		printf("            (hash and queues of the running daemon, asked on %s)\n", e->socket);
	else if (e->source == HASH_FIXED)
		printf("            (from a fixed all-zero key, not the daemon's per-boot key, so the\n"
		       "            daemon deals other queues; it did not answer on %s)\n", e->socket);
	if (e->r.policy != SL_NONE) {
		const struct sl_policy_cfg *p = &cfg->policies[e->r.policy];

		printf("policy      %s, workload %s\n", p->name,
		       e->r.workload != SL_NONE ? p->workloads[e->r.workload].name : "default");
	} else {
		printf("policy      none selects it\n");
	}
}

int ctl_explain(int argc, char **argv)
{
	struct explain_opts o = {.sport = 40000};
	struct explain e = {.labels = SL_LABELS_INIT};
	struct sl_opt_parsed parsed;
	struct sl_config *cfg;
	int rc;

	rc = ctl_parse_options(&explain_doc, explain_options, &o, argc, argv, &parsed);
	if (rc != CTL_PARSE_RUN)
		return rc;
	if (ctl_daemon_paths("explain", o.config, NULL, &o.socket))
		return CTL_FAIL;
	memcpy(e.t.saddr, o.src, sizeof(o.src));
	memcpy(e.t.daddr, o.dst, sizeof(o.dst));
	e.t.sport = o.sport;
	e.t.dport = o.dport;
	e.t.iface = o.iface;
	if (sl_addr_is_v4(e.t.saddr) != sl_addr_is_v4(e.t.daddr)) {
		fprintf(stderr, "sluicectl explain: --src and --dst must be the same family\n");
		return CTL_USAGE;
	}
	cfg = load_or_report("explain", o.config);
	if (!cfg)
		return CTL_FAIL;
	if (sl_conn_labels(cfg, &e.t, &e.labels)) {
		sl_config_free(cfg);
		return CTL_FAIL;
	}
	sl_labels_sort(&e.labels);
	sl_classify(cfg, &e.t, &e.labels, &e.r);
	if (e.r.schema != SL_NONE) {
		const struct sl_flow_schema *fs = &cfg->schemas[e.r.schema];
		const struct sl_level_cfg *l = &cfg->levels[fs->level];

		sl_flow_distinguisher(fs, &e.t, e.distinguisher, sizeof(e.distinguisher));
		e.hash = sl_flow_hash(o.hash_key, fs->name, e.distinguisher);
		if (l->type == SL_LEVEL_LIMITED && l->limit_response == SL_RESP_QUEUE &&
		    l->queues > 1 && !sl_shuffle_deal(l->queues, l->hand_size, e.hash, e.hand))
			e.hand_size = l->hand_size;
		e.socket = o.socket;
		if (sl_opt_given(explain_options, &parsed, "hash-key"))
			e.source = HASH_GIVEN;
		else if (ask_daemon(&e, fs->name, o.socket))
			e.source = HASH_DAEMON;
	}
	if (o.json)
		explain_json(cfg, &e);
	else
		explain_text(cfg, &e);
	sl_labels_free(&e.labels);
	sl_config_free(cfg);
	return CTL_OK;
}
