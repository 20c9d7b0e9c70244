// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sluicectl conns: the connections the data path admitted and still
 * tracks (sl_conns), read from the pinned map: who holds which level's
 * seats, since when, whether the handshake completed, their smoothed RTT.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl.h"
#include "ctl/daemon_paths.h"
#include "ctl/options.h"
#include "lib/fmt.h"
#include "lib/grow.h"
#include "lib/json_out.h"

struct conn_row {
	struct sluice_conn_key key;
	struct sluice_conn c;
};

struct conns_opts {
	const char *config;
	const char *pin_dir;
	const char *level;
	uint32_t limit;
	bool json;
};

static const struct sl_opt conns_options[] = {
	CTL_CONFIG(struct conns_opts, config),
	CTL_PIN_DIR(struct conns_opts, pin_dir),
	{.name = "level", .short_name = 'l', .kind = SL_OPT_STRING, .offset = offsetof(struct conns_opts, level),
	 .metavar = "NAME", .help = "give the level as the argument: sluicectl conns LEVEL", .flags = SL_OPT_DEPRECATED},
	SL_ROW_NUMBER(SL_OPT_U32, 0, "limit", struct conns_opts, limit, "N", 0, UINT32_MAX,
		   "show at most N connections (default 50; 0 = all)", 0),
	CTL_JSON(struct conns_opts, json, "one JSON object: {\"total\", \"shown\", \"conns\": [...]}"),
	SL_ROW_END,
};

static const struct sl_opt_doc conns_doc = {
	.prog = "sluicectl", .command = "conns", .args = "[LEVEL]", .max_args = 1,
	.description =
		"The connections sluice admitted and tracks until they close: client and\n"
		"local endpoint, priority level, seats, state (admitted: handshake pending;\n"
		"established), age, smoothed RTT, policy and workload indexes.  Oldest\n"
		"first.  Read from the pinned maps: no daemon needed.  LEVEL: only the\n"
		"connections holding seats of that priority level.\n",
};

static int by_age(const void *a, const void *b)
{
	const struct conn_row *x = a, *y = b;

	return x->c.admitted_ns < y->c.admitted_ns ? -1 : x->c.admitted_ns > y->c.admitted_ns;
}

static int by_key(const void *a, const void *b)
{
	const struct conn_row *x = a, *y = b;

	return memcmp(&x->key, &y->key, sizeof(x->key));
}

/* Rows collected by the walk. */
struct conn_rows {
	struct conn_row *v;
	size_t n, cap;
};

static int collect_row(void *ctx, const struct sluice_conn_key *key, const struct sluice_conn *c)
{
	struct conn_rows *r = ctx;

	if (sl_grow((void **)&r->v, &r->cap, r->n + 1, sizeof(*r->v)))
		return -ENOMEM;
	r->v[r->n].key = *key;
	r->v[r->n++].c = *c;
	return 0;
}

/* Every entry of sl_conns, through the daemon's own walk (sl_conns_each:
 * batched, bounded by twice the table's size while BPF churns it).  A key
 * seen twice is counted once (a get_next_key walk that restarted once
 * showed the soak 28 "established" connections where the kernel had 16). */
static int read_conns(const struct sl_maps *m, struct conn_row **out, size_t *n_out)
{
	struct conn_rows r = {0};
	size_t w = 0;
	int err = sl_conns_each(m, collect_row, &r);

	if (err && err != -EAGAIN) {
		free(r.v);
		return err;
	}
	if (r.n) {
		qsort(r.v, r.n, sizeof(*r.v), by_key);
		for (size_t i = 0; i < r.n; i++)
			if (!w || by_key(&r.v[w - 1], &r.v[i]))
				r.v[w++] = r.v[i];
	}
	*out = r.v;
	*n_out = w;
	return 0;
}

static void idx(char *buf, size_t len, unsigned v)
{
	if (v == SLUICE_NONE16)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%u", v);
}

int ctl_conns(int argc, char **argv)
{
	struct conns_opts o = {.limit = 50};
	char names[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN];
	unsigned long long now = sl_mono_ns();
	struct conn_row *rows = NULL;
	size_t n = 0, shown = 0, total = 0;
	struct sl_opt_parsed parsed;
	struct sl_maps m;
	int err;

	err = ctl_parse_options(&conns_doc, conns_options, &o, argc, argv, &parsed);
	if (err != CTL_PARSE_RUN)
		return err;
	if (parsed.first_arg < argc)
		o.level = argv[parsed.first_arg];
	if (ctl_daemon_paths("conns", o.config, &o.pin_dir, NULL))
		return CTL_FAIL;
	if (ctl_open_maps(o.pin_dir, &m))
		return CTL_FAIL;
	err = sl_maps_level_names(&m, names);
	if (!err)
		err = read_conns(&m, &rows, &n);
	sl_maps_close(&m);
	if (err) {
		fprintf(stderr, "sluicectl conns: read %s/maps: %s\n", o.pin_dir, strerror(-err));
		free(rows);
		return CTL_FAIL;
	}
	if (n)
		qsort(rows, n, sizeof(*rows), by_age);

	struct json_out jo;

	if (o.json) {
		jo_init(&jo, stdout, false);
		jo_obj_begin(&jo, NULL);
		jo_arr_begin(&jo, "conns");
	} else {
		printf("%-44s %-44s %-16s %5s %-11s %9s %9s %6s %8s\n", "CLIENT", "LOCAL", "LEVEL",
		       "SEATS", "STATE", "AGE_MS", "SRTT_US", "POLICY", "WORKLOAD");
	}
	for (size_t i = 0; i < n; i++) {
		const struct conn_row *r = &rows[i];
		const char *lname = r->c.level < SLUICE_MAX_LEVELS ? names[r->c.level] : "?";
		const char *state = r->c.state == SLUICE_CONN_ESTABLISHED ? "established" : "admitted";
		char cli[64], loc[64], pol[8], wl[8];
		double age = now > r->c.admitted_ns ? (double)(now - r->c.admitted_ns) / 1e6 : 0;

		if (o.level && strcmp(o.level, lname))
			continue;
		total++;
		if (o.limit && shown >= (size_t)o.limit)
			continue;
		shown++;
		sl_fmt_endpoint(r->key.saddr, r->key.sport, cli, sizeof(cli));
		sl_fmt_endpoint(r->key.daddr, r->key.dport, loc, sizeof(loc));
		if (o.json) {
			jo_obj_begin(&jo, NULL);
			jo_str(&jo, "client", cli);
			jo_str(&jo, "local", loc);
			jo_str(&jo, "level", lname);
			jo_u64(&jo, "seats", r->c.seats);
			jo_str(&jo, "state", state);
			jo_str(&jo, "seated_at", r->c.flags & SLUICE_CONNF_AT_ACK ? "ack" : "syn");
			jo_double(&jo, "age_ms", age);
			jo_u64(&jo, "srtt_us", r->c.srtt_us);
			if (r->c.policy == SLUICE_NONE16)
				jo_null(&jo, "policy");
			else
				jo_u64(&jo, "policy", r->c.policy);
			if (r->c.workload == SLUICE_NONE16)
				jo_null(&jo, "workload");
			else
				jo_u64(&jo, "workload", r->c.workload);
			jo_obj_end(&jo);
		} else {
			idx(pol, sizeof(pol), r->c.policy);
			idx(wl, sizeof(wl), r->c.workload);
			printf("%-44s %-44s %-16s %5u %-11s %9.0f %9u %6s %8s\n", cli, loc, lname,
			       r->c.seats, state, age, r->c.srtt_us, pol, wl);
		}
	}
	if (o.json) {
		jo_arr_end(&jo);
		jo_u64(&jo, "total", total);
		jo_u64(&jo, "shown", shown);
		jo_obj_end(&jo);
		jo_finish(&jo);
	} else {
		printf("(%zu of %zu connection%s)\n", shown, total, total == 1 ? "" : "s");
	}
	free(rows);
	return CTL_OK;
}
