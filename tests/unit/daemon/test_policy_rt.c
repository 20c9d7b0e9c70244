// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The policy gate's daemon side (user/policy_rt.c) without a data path:
 * a policy's scheduler admits in pass-through, queues once its controller
 * throttles, hands queued flows back through the hooks; reloads keep or
 * replace controller and scheduler by name and parameters (a replaced
 * scheduler admits what waited in it); the external signal over a Unix
 * datagram socket is the mean of a period's samples; a refused flow's
 * tokens go back.  Time is simulated: every call takes its `now`.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "config/config.h"
#include "config/diag.h"
#include "engine/loadsched.h"
#include "lib/log.h"
#include "contract_keys.h"
#include "daemon/control.h"
#include "daemon/policy_rt.h"
#include "dataplane/dataplane.h"

#define SEC  1000000000ull
#define MSEC 1000000ull
#define T0   (1000 * SEC)

/* One policy in Aperture's mode, control period 1 s, two workloads (gold
 * priority 4). */
#define POLICY_YAML(name, bronze_timeout, signal)                                    \
	"apiVersion: sluice/v1\n"                                                    \
	"kind: AverageLatencySchedulingPolicy\n"                                     \
	"metadata: {name: " name "}\n"                                               \
	"spec:\n"                                                                    \
	"  mode: aperture\n"                                                         \
	"  load_scheduling_core:\n"                                                  \
	"    aimd_load_scheduler:\n"                                                 \
	"      load_scheduler:\n"                                                    \
	"        selectors: [{label_matcher: {match_labels: {dst.port: \"8080\"}}}]\n" \
	"        scheduler:\n"                                                       \
	"          workloads:\n"                                                     \
	"          - name: bronze\n"                                                 \
	"            label_matcher: {match_labels: {tier: bronze}}\n"                \
	"            parameters: {priority: 1, queue_timeout: " bronze_timeout "}\n" \
	"          - name: gold\n"                                                   \
	"            label_matcher: {match_labels: {tier: gold}}\n"                  \
	"            parameters: {priority: 4, queue_timeout: 10s}\n"                \
	"  signal: " signal "\n"                                                     \
	"  latency_baseliner:\n"                                                     \
	"    long_term_query_interval: 120s\n"                                       \
	"    long_term_query_periodic_interval: 1s\n"                                \
	"  control_period: 1s\n"

#define GONE_ID 999 /* a flow whose connection is gone when its turn comes */

struct hooks_seen {
	uint64_t admitted[4096], rejected[4096];
	size_t n_admitted, n_rejected;
};

static bool on_admit(void *ctx, uint64_t id, uint64_t now)
{
	struct hooks_seen *h = ctx;

	(void)now;
	assert_true(h->n_admitted < 4096);
	h->admitted[h->n_admitted++] = id;
	return id != GONE_ID;
}

static void on_reject(void *ctx, uint64_t id, uint64_t now, enum sl_ss_why why)
{
	struct hooks_seen *h = ctx;

	(void)now;
	(void)why;
	assert_true(h->n_rejected < 4096);
	h->rejected[h->n_rejected++] = id;
}

static struct sl_config *load(const char *yaml)
{
	struct sl_config *cfg = NULL;
	int err = sl_config_load_buffer("t.yaml", yaml, strlen(yaml), &cfg, NULL);

	if (err)
		fail_msg("config did not load: %d\n%s", err, yaml);
	return cfg;
}

static json_t *dump(struct sl_policies *ps, uint64_t now)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_error_t e;
	json_t *j;

	assert_non_null(f);
	sl_policies_dump(ps, f, now);
	fclose(f);
	j = json_loads(buf, 0, &e);
	if (!j)
		fail_msg("dump is not JSON: %s\n%s", e.text, buf);
	free(buf);
	return j;
}

static json_t *policy0(json_t *root)
{
	return json_array_get(json_object_get(root, "policies"), 0);
}

static json_t *workload(json_t *pol, const char *name)
{
	json_t *w;
	size_t i;

	json_array_foreach(json_object_get(pol, "workloads"), i, w)
		if (!strcmp(json_string_value(json_object_get(w, "name")), name))
			return w;
	fail_msg("no workload %s", name);
	return NULL;
}

static bool throttled(struct sl_policies *ps, uint64_t now)
{
	json_t *j = dump(ps, now);
	bool t = !json_is_true(json_object_get(policy0(j), "pass_through"));

	json_decref(j);
	return t;
}

/*
 * Drive a policy from creation into throttling: 35 s of arrivals at 20/s
 * (admitted: bootstrap, then pass-through) whose connections close after
 * 50 ms; then the connections take 2 s while arrivals go on, until the
 * controller throttles.  Returns the time reached; *queued counts the
 * arrivals of the second phase that had to wait.
 */
static uint64_t drive_to_throttle(struct sl_policies *ps, uint64_t *next_id, int *queued)
{
	uint64_t now = T0;

	*queued = 0;
	for (int step = 0; step < 35 * 20; step++) {
		now += 50 * MSEC;
		assert_int_equal(sl_policies_arrive(ps, 0, step % 2, (*next_id)++, now), SL_LS_ADMITTED);
		sl_policies_on_close(ps, 0, step % 2, 50 * MSEC, 0, 0, true, now);
		sl_policies_tick(ps, now);
	}
	for (int step = 0; step < 10 * 20 && !throttled(ps, now); step++) {
		now += 50 * MSEC;
		*queued += sl_policies_arrive(ps, 0, step % 2, (*next_id)++, now) == SL_LS_QUEUED;
		sl_policies_on_close(ps, 0, step % 2, 2 * SEC, 0, 0, true, now);
		sl_policies_tick(ps, now);
	}
	assert_true(throttled(ps, now));
	return now;
}

static void test_pass_through_then_throttle(void **state)
{
	struct sl_config *cfg = load(POLICY_YAML("svc", "3s", "{type: duration, window: 2s}"));
	struct hooks_seen *h = calloc(1, sizeof(*h));
	struct sl_policy_hooks hooks = {.admit = on_admit, .reject = on_reject, .ctx = h};
	struct sl_policies *ps;
	uint64_t id = 1, now;
	json_t *j, *p;
	int queued = 0, before;

	(void)state;
	assert_int_equal(sl_policies_create(&ps, NULL, &hooks), 0);
	assert_int_equal(sl_policies_configure(ps, cfg, T0), 0);
	assert_int_equal(sl_policies_count(ps), 1);
	j = dump(ps, T0);
	p = policy0(j);
	assert_true(json_is_true(json_object_get(p, "pass_through")));
	assert_true(json_is_true(json_object_get(p, "bootstrapping")));
	json_decref(j);

	now = drive_to_throttle(ps, &id, &before);
	j = dump(ps, now);
	p = policy0(j);
	assert_true(json_is_true(json_object_get(p, "overload")));
	assert_false(json_is_true(json_object_get(p, "pass_through")));
	assert_false(json_is_true(json_object_get(p, "scheduler_pass_through")));
	assert_true(json_number_value(json_object_get(p, "load_multiplier")) < 1);
	assert_true(json_number_value(json_object_get(p, "incoming_rate")) > 15);
	json_decref(j);

	/* Throttled: a burst of arrivals cannot all be admitted at once. */
	for (int k = 0; k < 200; k++)
		queued += sl_policies_arrive(ps, 0, k % 2, id++, now) == SL_LS_QUEUED;
	assert_true(queued > 0);
	j = dump(ps, now);
	p = policy0(j);
	queued += before;
	assert_int_equal(json_integer_value(json_object_get(p, "waiting")) +
			 (json_int_t)(h->n_admitted + h->n_rejected), queued);
	json_decref(j);
	/* Time passes: queued flows come back through the hooks, each once,
	 * admitted by the bucket or rejected at queue_timeout. */
	for (int t = 0; t < 120; t++) {
		now += 100 * MSEC;
		sl_policies_tick(ps, now);
	}
	assert_int_equal(h->n_admitted + h->n_rejected, queued);
	assert_true(h->n_admitted > 0);
	assert_true(h->n_rejected > 0);

	sl_policies_free(ps);
	sl_config_free(cfg);
	free(h);
}

/* Reloads: the same parameters keep the scheduler and what waits in it;
 * a changed workload replaces it, and what waited is admitted. */
static void test_reload_keeps_or_replaces(void **state)
{
	struct sl_config *cfg = load(POLICY_YAML("svc", "10s", "{type: duration, window: 2s}"));
	struct sl_config *same = load(POLICY_YAML("svc", "10s", "{type: duration, window: 2s}"));
	struct sl_config *changed = load(POLICY_YAML("svc", "9s", "{type: duration, window: 2s}"));
	struct hooks_seen *h = calloc(1, sizeof(*h));
	struct sl_policy_hooks hooks = {.admit = on_admit, .reject = on_reject, .ctx = h};
	struct sl_policies *ps;
	uint64_t id = 1, now, periods;
	int queued = 0, before;
	json_t *j, *p;

	(void)state;
	assert_int_equal(sl_policies_create(&ps, NULL, &hooks), 0);
	assert_int_equal(sl_policies_configure(ps, cfg, T0), 0);
	now = drive_to_throttle(ps, &id, &before);
	for (int k = 0; k < 100; k++)
		queued += sl_policies_arrive(ps, 0, 1, id++, now) == SL_LS_QUEUED;
	assert_true(queued > 0);
	/* What queued before has been decided or still waits. */
	queued += before - (int)(h->n_admitted + h->n_rejected);
	h->n_admitted = h->n_rejected = 0;
	j = dump(ps, now);
	periods = json_integer_value(json_object_get(policy0(j), "periods"));
	json_decref(j);

	assert_int_equal(sl_policies_configure(ps, same, now), 0);
	j = dump(ps, now);
	p = policy0(j);
	assert_int_equal(json_integer_value(json_object_get(p, "periods")), periods);
	assert_int_equal(json_integer_value(json_object_get(p, "waiting")), queued);
	assert_false(json_is_true(json_object_get(p, "bootstrapping")));
	json_decref(j);
	assert_int_equal(h->n_admitted + h->n_rejected, 0);

	/* bronze's queue_timeout changed: a new scheduler, fail-open. */
	assert_int_equal(sl_policies_configure(ps, changed, now), 0);
	assert_int_equal(h->n_admitted, queued);
	assert_int_equal(h->n_rejected, 0);
	j = dump(ps, now);
	p = policy0(j);
	assert_int_equal(json_integer_value(json_object_get(p, "waiting")), 0);
	assert_true(json_is_true(json_object_get(p, "bootstrapping")));
	/* The controller's parameters did not change: its history stays. */
	assert_int_equal(json_integer_value(json_object_get(p, "periods")), periods);
	json_decref(j);

	sl_policies_free(ps);
	sl_config_free(cfg);
	sl_config_free(same);
	sl_config_free(changed);
	free(h);
}

/* A level that refuses a flow the policy admitted gets its tokens back:
 * accepted tokens move to rejected. */
static void test_return_tokens(void **state)
{
	struct sl_config *cfg = load(POLICY_YAML("svc", "3s", "{type: duration, window: 2s}"));
	struct sl_policies *ps;
	json_t *j, *w;

	(void)state;
	assert_int_equal(sl_policies_create(&ps, NULL, NULL), 0);
	assert_int_equal(sl_policies_configure(ps, cfg, T0), 0);
	for (int k = 0; k < 3; k++)
		assert_int_equal(sl_policies_arrive(ps, 0, 1, (uint64_t)k + 1, T0), SL_LS_ADMITTED);
	sl_policies_return(ps, 0, 1, false, T0);
	j = dump(ps, T0);
	w = workload(policy0(j), "gold");
	assert_int_equal(json_integer_value(json_object_get(w, "admitted")), 3);
	assert_true(fabs(json_number_value(json_object_get(w, "accepted_tokens")) - 2) < 1e-9);
	assert_true(fabs(json_number_value(json_object_get(w, "rejected_tokens")) - 1) < 1e-9);
	json_decref(j);
	/* Unknown policy: refused, nothing changes. */
	assert_int_equal(sl_policies_arrive(ps, 7, 0, 99, T0), -ENOENT);
	sl_policies_free(ps);
	sl_config_free(cfg);
}

static void send_sample(const char *path, const char *text)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	assert_int_equal(sendto(fd, text, strlen(text), 0, (struct sockaddr *)&sa, sizeof(sa)),
			 (ssize_t)strlen(text));
	close(fd);
}

/* The external signal over a Unix datagram socket: bound at configure,
 * the mean of a period's samples, kept across a reload, removed when the
 * policy goes; a second policy cannot take the same path. */
static void test_external_socket(void **state)
{
	char dir[] = "/tmp/sluice-prt.XXXXXX", sock[128], yaml[4096], sig[256], two[8192];
	struct sl_config *cfg, *again, *dup = NULL, *none;
	struct sl_policies *ps;
	struct stat st;
	json_t *j;
	uint64_t now = T0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(sock, sizeof(sock), "%s/latency.sock", dir);
	snprintf(sig, sizeof(sig), "{type: external, external_socket: %s, window: 1s}", sock);
#define EXT_YAML(name) POLICY_YAML(name, "3s", "%s")
	snprintf(yaml, sizeof(yaml), EXT_YAML("app"), sig);
	cfg = load(yaml);
	again = load(yaml);
	snprintf(two, sizeof(two), EXT_YAML("app") "---\n" EXT_YAML("other"), sig, sig);
	{
		struct sl_diags d = SL_DIAGS_INIT;

		/* Two policies on one socket: refused by the loader, with where. */
		assert_int_equal(sl_config_load_buffer("t.yaml", two, strlen(two), &dup, &d), -EINVAL);
		const struct sl_diag *e = NULL;

		for (size_t k = 0; k < d.count && !e; k++)
			if (d.items[k].severity == SL_SEV_ERROR)
				e = &d.items[k];
		assert_non_null(e);
		if (!strstr(e->message, "already the external_socket of AverageLatencySchedulingPolicy/app (t.yaml:1:1)"))
			fail_msg("unexpected: %s", e->message);
		assert_string_equal(e->path, "spec.signal.external_socket");
		sl_diags_free(&d);
	}
	none = load(POLICY_YAML("app", "3s", "{type: duration}"));

	assert_int_equal(sl_policies_create(&ps, NULL, NULL), 0);
	assert_int_equal(sl_policies_configure(ps, cfg, now), 0);
	assert_int_equal(stat(sock, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	send_sample(sock, "20");
	send_sample(sock, "40.5");
	send_sample(sock, "fast"); /* ignored */
	now += SEC;
	sl_policies_tick(ps, now);
	j = dump(ps, now);
	assert_true(fabs(json_number_value(json_object_get(policy0(j), "signal_ms")) - 30.25) < 1e-9);
	json_decref(j);

	/* Nothing sent for a period: no valid signal. */
	now += SEC;
	sl_policies_tick(ps, now);
	j = dump(ps, now);
	assert_true(json_is_null(json_object_get(policy0(j), "signal_ms")));
	json_decref(j);

	/* A reload keeps the socket: samples sent before it count after it. */
	send_sample(sock, "70");
	assert_int_equal(sl_policies_configure(ps, again, now), 0);
	now += SEC;
	sl_policies_tick(ps, now);
	j = dump(ps, now);
	assert_true(fabs(json_number_value(json_object_get(policy0(j), "signal_ms")) - 70) < 1e-9);
	json_decref(j);

	/* A configuration whose socket cannot be bound changes nothing;
	 * one prepared and then aborted leaves no socket behind. */
	{
		char bad[4096], sig2[256], other[128];
		struct sl_config *nobind, *second;

		snprintf(sig2, sizeof(sig2), "{type: external, external_socket: %s/no/such/dir.sock}", dir);
		snprintf(bad, sizeof(bad), EXT_YAML("app"), sig2);
		nobind = load(bad);
		assert_true(sl_policies_configure(ps, nobind, now) < 0);
		assert_int_equal(sl_policies_count(ps), 1);
		snprintf(other, sizeof(other), "%s/other.sock", dir);
		snprintf(sig2, sizeof(sig2), "{type: external, external_socket: %s}", other);
		snprintf(bad, sizeof(bad), EXT_YAML("app2"), sig2);
		second = load(bad);
		assert_int_equal(sl_policies_prepare(ps, second, now), 0);
		assert_int_equal(stat(other, &st), 0);
		sl_policies_abort(ps);
		assert_int_equal(stat(other, &st), -1);
		sl_config_free(nobind);
		sl_config_free(second);
	}
	send_sample(sock, "10");
	now += SEC;
	sl_policies_tick(ps, now);
	j = dump(ps, now);
	assert_true(fabs(json_number_value(json_object_get(policy0(j), "signal_ms")) - 10) < 1e-9);
	json_decref(j);

	/* The policy stops using the socket: it is removed. */
	assert_int_equal(sl_policies_configure(ps, none, now), 0);
	assert_int_equal(stat(sock, &st), -1);
	sl_policies_free(ps);
	sl_config_free(cfg);
	sl_config_free(again);
	sl_config_free(none);
	rmdir(dir);
}

/* sluice's own mode over a gate (sl_pol_gate's memory, as the daemon
 * maps it): slots are taken and given back exactly, a deferral waits when
 * none is free and is admitted on the close that frees one; the count held
 * is the holders' alone, so a reload that keeps the policy, one that
 * changes its parameters (a new record) and one that removes it all leave
 * it as it is; the default mode is sluice. */
#define LIMIT_YAML(max)                                                              \
	"apiVersion: sluice/v1\nkind: AverageLatencySchedulingPolicy\nmetadata: {name: svc}\n" \
	"spec:\n  adaptive: {max_in_flight: " max "}\n"                               \
	"  load_scheduling_core:\n    aimd_load_scheduler:\n      load_scheduler:\n" \
	"        selectors: [{label_matcher: {match_labels: {dst.port: \"8080\"}}}]\n"

/* Slots the gate has free. */
static int64_t free_slots(const struct sl_dataplane *dp)
{
	return dp->gates[0].slot_limit - dp->gates[0].slots_held;
}

static void test_limit_mode_slots(void **state)
{
	struct sluice_policy_gate gates[SLUICE_MAX_POLICIES] = {{0}};
	struct sl_dataplane dp = {.gates = gates};
	struct sl_config *cfg = load(LIMIT_YAML("100")), *cfg2 = load(LIMIT_YAML("100"));
	struct sl_config *cfg3 = load(LIMIT_YAML("200")), *none = load("");
	struct hooks_seen seen = {0};
	struct sl_policy_hooks hooks = {.admit = on_admit, .reject = on_reject, .ctx = &seen};
	struct sl_policies *ps;
	json_t *j;

	(void)state;
	assert_int_equal(cfg->policies[0].mode, SL_POLICY_SLUICE);
	assert_int_equal(sl_policies_create(&ps, &dp, &hooks), 0);
	assert_int_equal(sl_policies_configure(ps, cfg, T0), 0);
	assert_true(sl_policies_take_slots(ps, 0));
	/* Pass-through: a limit no load reaches, in LIMIT mode, all free. */
	assert_int_equal(gates[0].mode, SLUICE_POLICY_LIMIT);
	assert_int_equal(gates[0].slot_limit, (int64_t)(1u << 24));
	assert_int_equal(gates[0].slots_held, 0);
	/* The data path held all but one slot; the daemon takes the last. */
	gates[0].slots_held = gates[0].slot_limit - 1;
	assert_int_equal(sl_policies_arrive(ps, 0, SLUICE_NONE16, 1, T0), SL_LS_ADMITTED);
	assert_int_equal(free_slots(&dp), 0);
	/* None left: the next two wait, and the data path is told. */
	assert_int_equal(sl_policies_arrive(ps, 0, SLUICE_NONE16, 2, T0), SL_LS_QUEUED);
	assert_int_equal(sl_policies_arrive(ps, 0, SLUICE_NONE16, 3, T0), SL_LS_QUEUED);
	assert_int_equal(gates[0].waiting, 2);
	/* A connection closes (the data path gives its slot back): the first
	 * in line gets it, at once. */
	gates[0].slots_held--;
	sl_policies_on_close(ps, 0, SLUICE_NONE16, 50 * MSEC, 0, 0, true, T0 + 50 * MSEC);
	assert_int_equal(seen.n_admitted, 1);
	assert_int_equal(seen.admitted[0], 2);
	assert_int_equal(free_slots(&dp), 0);
	assert_int_equal(gates[0].waiting, 1);
	/* The level refused it after all: its slot comes back. */
	sl_policies_return(ps, 0, SLUICE_NONE16, true, T0 + 60 * MSEC);
	assert_int_equal(free_slots(&dp), 1);
	sl_policies_tick(ps, T0 + 100 * MSEC);
	assert_int_equal(seen.n_admitted, 2);
	assert_int_equal(seen.admitted[1], 3);
	/* A flow gone by its turn: the slot taken for it comes back. */
	assert_int_equal(sl_policies_arrive(ps, 0, SLUICE_NONE16, GONE_ID, T0 + 110 * MSEC), SL_LS_QUEUED);
	gates[0].slots_held--;
	sl_policies_tick(ps, T0 + 120 * MSEC);
	assert_int_equal(seen.n_admitted, 3);
	assert_int_equal(free_slots(&dp), 1);
	/* A reload that keeps the policy keeps the count: the connections in
	 * flight still hold their slots. */
	gates[0].slots_held = 5;
	assert_int_equal(sl_policies_configure(ps, cfg2, T0 + 200 * MSEC), 0);
	assert_int_equal(gates[0].slots_held, 5);
	assert_int_equal(gates[0].mode, SLUICE_POLICY_LIMIT);
	j = dump(ps, T0 + 200 * MSEC);
	assert_string_equal(json_string_value(json_object_get(policy0(j), "mode")), "sluice");
	assert_true(json_is_true(json_object_get(policy0(j), "pass_through")));
	assert_int_equal(json_integer_value(json_object_get(policy0(j), "waiting")), 0);
	assert_int_equal(json_integer_value(json_object_get(policy0(j), "in_flight")), 5);
	{
		/* The default workload: one admitted at once on arrival (the
		 * last slot), three from the queue (one of them gone). */
		json_t *w = json_array_get(json_object_get(policy0(j), "workloads"), 0);

		assert_int_equal(json_integer_value(json_object_get(w, "admitted_on_arrival")), 1);
		assert_int_equal(json_integer_value(json_object_get(w, "admitted")), 3);
	}
	json_decref(j);
	/* New parameters, a new record: it counts the same five in flight
	 * (their slots were never given back), none admitted twice. */
	assert_int_equal(sl_policies_configure(ps, cfg3, T0 + 300 * MSEC), 0);
	assert_int_equal(gates[0].slots_held, 5);
	j = dump(ps, T0 + 300 * MSEC);
	assert_int_equal(json_integer_value(json_object_get(policy0(j), "in_flight")), 5);
	assert_int_equal(json_integer_value(json_object_get(policy0(j), "max_in_flight")), 200);
	json_decref(j);
	/* Removed: the gate opens, the count stays for its holders, and the
	 * policy back again starts from it. */
	assert_int_equal(sl_policies_configure(ps, none, T0 + 400 * MSEC), 0);
	assert_int_equal(gates[0].mode, SLUICE_POLICY_PASS);
	assert_int_equal(gates[0].slots_held, 5);
	assert_string_equal(gates[0].policy, "svc"); /* its connections drain */
	gates[0].slots_held -= 2; /* two close meanwhile */
	assert_int_equal(sl_policies_configure(ps, cfg, T0 + 500 * MSEC), 0);
	assert_int_equal(gates[0].mode, SLUICE_POLICY_LIMIT);
	assert_int_equal(gates[0].slots_held, 3);
	j = dump(ps, T0 + 500 * MSEC);
	assert_int_equal(json_integer_value(json_object_get(policy0(j), "in_flight")), 3);
	json_decref(j);
	/* Removed with nothing held: the gate forgets it. */
	gates[0].slots_held = 0;
	assert_int_equal(sl_policies_configure(ps, none, T0 + 600 * MSEC), 0);
	assert_string_equal(gates[0].policy, "");
	sl_policies_free(ps);
	sl_config_free(cfg);
	sl_config_free(cfg2);
	sl_config_free(cfg3);
	sl_config_free(none);
}

/* A reload that switches a policy's mode under the same name: the new
 * mode runs it at once (its gate, its dump, its metrics), nothing of the
 * other mode's is kept, and back again starts the first mode afresh. */
static void test_reload_switches_mode(void **state)
{
	struct sluice_policy_gate gates[SLUICE_MAX_POLICIES] = {{0}};
	struct sl_dataplane dp = {.gates = gates};
	struct sl_config *ap = load(POLICY_YAML("svc", "10s", "{type: duration, window: 2s}"));
	struct sl_config *lim = load(LIMIT_YAML("100"));
	struct hooks_seen *h = calloc(1, sizeof(*h));
	struct sl_policy_hooks hooks = {.admit = on_admit, .reject = on_reject, .ctx = h};
	struct sl_policies *ps;
	uint64_t id = 1, now;
	int before;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	json_t *j;

	(void)state;
	assert_int_equal(sl_policies_create(&ps, &dp, &hooks), 0);
	assert_int_equal(sl_policies_configure(ps, ap, T0), 0);
	assert_false(sl_policies_take_slots(ps, 0));
	now = drive_to_throttle(ps, &id, &before);
	j = dump(ps, now);
	assert_string_equal(json_string_value(json_object_get(policy0(j), "mode")), "aperture");
	assert_true(json_integer_value(json_object_get(policy0(j), "periods")) > 0);
	json_decref(j);

	/* To sluice's mode: what waited in Aperture's scheduler is admitted
	 * (fail-open), and the gate counts slots. */
	assert_int_equal(sl_policies_configure(ps, lim, now), 0);
	assert_true(sl_policies_take_slots(ps, 0));
	assert_int_equal(gates[0].mode, SLUICE_POLICY_LIMIT);
	assert_int_equal(h->n_rejected, 0);
	assert_int_equal(sl_policies_arrive(ps, 0, SLUICE_NONE16, id++, now), SL_LS_ADMITTED);
	j = dump(ps, now);
	assert_string_equal(json_string_value(json_object_get(policy0(j), "mode")), "sluice");
	json_decref(j);
	f = open_memstream(&text, &len);
	sl_policies_metrics(ps, f, now);
	fclose(f);
	assert_non_null(strstr(text, "policy_mode{policy=\"svc\",mode=\"sluice\"} 1"));
	assert_non_null(strstr(text, "policy_in_flight{policy=\"svc\"}"));
	free(text);

	/* And back: Aperture's controller starts afresh, not where it was. */
	assert_int_equal(sl_policies_configure(ps, ap, now + SEC), 0);
	assert_false(sl_policies_take_slots(ps, 0));
	j = dump(ps, now + SEC);
	assert_string_equal(json_string_value(json_object_get(policy0(j), "mode")), "aperture");
	assert_int_equal(json_integer_value(json_object_get(policy0(j), "periods")), 0);
	assert_true(json_is_true(json_object_get(policy0(j), "bootstrapping")));
	json_decref(j);

	sl_policies_free(ps);
	sl_config_free(ap);
	sl_config_free(lim);
	free(h);
}

/* Issue 23's collapse, in miniature: clients that gave up answer the
 * SYN-ACKs of their re-injected SYNs with RSTs, one round trip after
 * admission.  Those closes free their slots but are no samples: neither
 * mode's controller, baseline or signal sees them. */
static void test_unserved_closes_are_no_samples(void **state)
{
	struct sluice_policy_gate gates[SLUICE_MAX_POLICIES] = {{0}};
	struct sl_dataplane dp = {.gates = gates};
	struct sl_config *lim = load(LIMIT_YAML("100"));
	struct sl_config *ape = load(POLICY_YAML("api", "1s", "{type: duration}"));
	struct hooks_seen seen = {0};
	struct sl_policy_hooks hooks = {.admit = on_admit, .reject = on_reject, .ctx = &seen};
	struct sl_policies *ps;
	uint64_t now = T0;
	json_t *j, *last;

	(void)state;
	assert_int_equal(sl_policies_create(&ps, &dp, &hooks), 0);
	assert_int_equal(sl_policies_configure(ps, lim, now), 0);
	/* 2 s of nothing but gave-up clients (0.2 ms each): no baseline. */
	for (int i = 0; i < 2000; i++) {
		now += MSEC;
		sl_policies_on_close(ps, 0, SLUICE_NONE16, 200 * 1000, 0, 200, false, now);
		if (i % 100 == 99)
			sl_policies_tick(ps, now);
	}
	j = dump(ps, now);
	last = policy0(j);
	assert_string_equal(json_string_value(json_object_get(last, "reason")), "no-baseline");
	assert_true(json_is_null(json_object_get(last, "baseline_ms")) ||
		    !json_object_get(last, "baseline_ms") ||
		    json_number_value(json_object_get(last, "baseline_ms")) == 0);
	json_decref(j);
	/* Served connections of 50 ms, interleaved with ten times as many
	 * gave-up ones: the baseline is the served ones'. */
	for (int i = 0; i < 2000; i++) {
		now += MSEC;
		sl_policies_on_close(ps, 0, SLUICE_NONE16, 200 * 1000, 0, 200, false, now);
		if (i % 10 == 0)
			sl_policies_on_close(ps, 0, SLUICE_NONE16, 50 * MSEC, 0, 200, true, now);
		if (i % 100 == 99)
			sl_policies_tick(ps, now);
	}
	j = dump(ps, now);
	last = policy0(j);
	if (!(json_number_value(json_object_get(last, "baseline_ms")) > 45.0))
		fail_msg("baseline %.3f ms", json_number_value(json_object_get(last, "baseline_ms")));
	json_decref(j);

	/* Aperture's mode: its period's signal is the served connections'
	 * mean, whatever the gave-up ones say. */
	assert_int_equal(sl_policies_configure(ps, ape, now), 0);
	for (int i = 0; i < 3000; i++) {
		now += MSEC;
		sl_policies_on_close(ps, 0, 0, 200 * 1000, 0, 200, false, now);
		if (i % 10 == 0)
			sl_policies_on_close(ps, 0, 0, 50 * MSEC, 0, 200, true, now);
		if (i % 100 == 99)
			sl_policies_tick(ps, now);
	}
	j = dump(ps, now);
	{
		json_t *sig = json_object_get(policy0(j), "signal_ms");

		if (!json_is_number(sig))
			fail_msg("no signal after 3 control periods");
		assert_true(json_number_value(sig) > 45.0 && json_number_value(sig) < 55.0);
	}
	json_decref(j);
	sl_policies_free(ps);
	sl_config_free(lim);
	sl_config_free(ape);
}

/* A policy on another signal, without a mode, runs Aperture's; one that
 * names sluice with it is refused. */
static void test_mode_defaults(void **state)
{
	static const char srtt[] =
		"apiVersion: sluice/v1\nkind: AverageLatencySchedulingPolicy\nmetadata: {name: p}\n"
		"spec:\n  signal: {type: srtt}\n  load_scheduling_core:\n    aimd_load_scheduler:\n"
		"      load_scheduler:\n        selectors: [{}]\n";
	static const char bad[] =
		"apiVersion: sluice/v1\nkind: AverageLatencySchedulingPolicy\nmetadata: {name: p}\n"
		"spec:\n  mode: sluice\n  signal: {type: srtt}\n  load_scheduling_core:\n"
		"    aimd_load_scheduler:\n      load_scheduler:\n        selectors: [{}]\n";
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = load(srtt), *c2 = NULL;

	(void)state;
	assert_int_equal(cfg->policies[0].mode, SL_POLICY_APERTURE);
	assert_int_not_equal(sl_config_load_buffer("t.yaml", bad, strlen(bad), &c2, &d), 0);
	assert_non_null(strstr(d.items[0].message, "signal.type must be duration"));
	assert_string_equal(d.items[0].path, "spec.signal.type");
	sl_diags_free(&d);
	sl_config_free(cfg);
}

/* keys of a, then of b and c (either may be NULL): one object's list. */
static size_t join_keys(const char **out, const char *const *a, size_t na, const char *const *b,
			size_t nb, const char *const *c, size_t nc)
{
	size_t n = 0;

	for (size_t i = 0; i < na; i++)
		out[n++] = a[i];
	for (size_t i = 0; b && i < nb; i++)
		out[n++] = b[i];
	for (size_t i = 0; c && i < nc; i++)
		out[n++] = c[i];
	return n;
}

/* Each policy of a controller dump, against the contract (control.h):
 * its mode's keys, exactly; the decision's once one was made. */
static void assert_policy_contract(json_t *root, bool decided)
{
	const char *keys[64];
	json_t *p = policy0(root), *w;
	bool sluice = !strcmp(json_string_value(json_object_get(p, SL_POLICY_KEY(MODE))), "sluice");
	size_t n, i;

	assert_contract_keys(root, sl_controller_reply_keys, SL_CONTROLLER_REPLY_NKEYS, "controller reply");
	if (sluice) {
		n = join_keys(keys, sl_policy_keys, SL_POLICY_NKEYS, sl_sluice_policy_keys, SL_SLUICE_POLICY_NKEYS,
			      decided ? sl_sluice_decision_keys : NULL, SL_SLUICE_DECISION_NKEYS);
		assert_contract_keys(p, keys, n, "sluice policy");
		assert_contract_keys(json_object_get(p, SL_SLUICE_POLICY_KEY(GATE)), sl_sluice_gate_keys,
				     SL_SLUICE_GATE_NKEYS, "sluice policy's gate");
		json_array_foreach(json_object_get(p, SL_SLUICE_POLICY_KEY(WORKLOADS)), i, w)
			assert_contract_keys(w, sl_sluice_workload_keys, SL_SLUICE_WORKLOAD_NKEYS, "sluice workload");
	} else {
		n = join_keys(keys, sl_policy_keys, SL_POLICY_NKEYS, sl_aperture_policy_keys,
			      SL_APERTURE_POLICY_NKEYS, NULL, 0);
		assert_contract_keys(p, keys, n, "aperture policy");
		json_array_foreach(json_object_get(p, SL_APERTURE_POLICY_KEY(WORKLOADS)), i, w)
			assert_contract_keys(w, sl_aperture_workload_keys, SL_APERTURE_WORKLOAD_NKEYS,
					     "aperture workload");
	}
	assert_true(json_array_size(json_object_get(p, "workloads")) >= 1);
}

/* `sluicectl controller` reads what the daemon writes: both modes'
 * dumps, before and after their first decision, are the contract's. */
static void test_controller_dump_is_the_contract(void **state)
{
	struct sluice_policy_gate gates[SLUICE_MAX_POLICIES] = {{0}};
	struct sl_dataplane dp = {.gates = gates};
	struct sl_config *lim = load(LIMIT_YAML("100"));
	struct sl_config *ape = load(POLICY_YAML("api", "1s", "{type: duration}"));
	struct hooks_seen seen = {0};
	struct sl_policy_hooks hooks = {.admit = on_admit, .reject = on_reject, .ctx = &seen};
	struct sl_policies *ps;
	uint64_t now = T0;
	json_t *j;

	(void)state;
	assert_int_equal(sl_policies_create(&ps, &dp, &hooks), 0);
	assert_int_equal(sl_policies_configure(ps, lim, now), 0);
	j = dump(ps, now);
	assert_policy_contract(j, false);
	json_decref(j);
	for (int i = 0; i < 1000; i++) {
		now += MSEC;
		sl_policies_on_close(ps, 0, SLUICE_NONE16, 50 * MSEC, 0, 200, true, now);
		if (i % 100 == 99)
			sl_policies_tick(ps, now);
	}
	j = dump(ps, now);
	assert_policy_contract(j, true);
	json_decref(j);

	assert_int_equal(sl_policies_configure(ps, ape, now), 0);
	j = dump(ps, now);
	assert_policy_contract(j, false);
	json_decref(j);
	for (int i = 0; i < 3000; i++) {
		now += MSEC;
		sl_policies_on_close(ps, 0, 0, 50 * MSEC, 0, 200, true, now);
		if (i % 100 == 99)
			sl_policies_tick(ps, now);
	}
	j = dump(ps, now);
	assert_true(json_is_number(json_object_get(policy0(j), SL_APERTURE_POLICY_KEY(SIGNAL_MS))));
	assert_policy_contract(j, true);
	json_decref(j);
	sl_policies_free(ps);
	sl_config_free(lim);
	sl_config_free(ape);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pass_through_then_throttle),
		cmocka_unit_test(test_reload_keeps_or_replaces),
		cmocka_unit_test(test_return_tokens),
		cmocka_unit_test(test_external_socket),
		cmocka_unit_test(test_limit_mode_slots),
		cmocka_unit_test(test_reload_switches_mode),
		cmocka_unit_test(test_controller_dump_is_the_contract),
		cmocka_unit_test(test_unserved_closes_are_no_samples),
		cmocka_unit_test(test_mode_defaults),
	};

	sl_log_init("test_policy_rt", SL_LOG_ERROR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
