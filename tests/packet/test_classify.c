// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Differential test: the data path's compiled classification against the
 * reference classifier (user/engine/classifier.c), on random tuples (half
 * of them aimed at the classes of a table entry), for several
 * configurations, 10,000 FlowSchemas among them, and across reloads
 * (generation flips).
 *
 * Each tuple becomes a real SYN frame run through sluice_xdp with
 * BPF_PROG_TEST_RUN.  Every level is made exempt so each SYN is admitted and
 * its sl_conns entry records the class BPF chose (level, schema, policy,
 * workload); the reference classifier must agree exactly.
 */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dataplane/settings.h"
#include "dataplane/dataplane.h"
#include "engine/classifier.h"
#include "config/config.h"
#include "lib/fmt.h"
#include "frames.h"
#include "tenants.h"
#include "../unit/load_config.h"
#include "engine/plan.h"
#include "sluice.skel.h"

#define DEFAULT_TUPLES 50000 /* per configuration: 4 configs + a reload, 225,000 in all */

static struct sluice *skel;
static struct sl_maps maps;
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static unsigned long tuples_per_config = DEFAULT_TUPLES;
static size_t schemas_hit; /* distinct schemas the last run_tuples reached */

static uint64_t rnd(void)
{
	/* xorshift64*: reproducible, seed printed */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static int group_setup(void **state)
{
	const char *n = getenv("SLUICE_DIFF_TUPLES"), *seed = getenv("SLUICE_DIFF_SEED");

	(void)state;
	if (n)
		tuples_per_config = strtoul(n, NULL, 0);
	if (seed)
		rng_state = strtoull(seed, NULL, 0) | 1;
	printf("# differential test: seed 0x%llx, %lu tuples per configuration "
	       "(SLUICE_DIFF_SEED / SLUICE_DIFF_TUPLES)\n", (unsigned long long)rng_state,
	       tuples_per_config);
	skel = sluice__open_and_load();
	if (!skel) {
		fprintf(stderr, "cannot load the BPF object: %s (root and BPF needed)\n", strerror(errno));
		return -1;
	}
	sl_maps_from_skel(skel, &maps);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	sluice__destroy(skel);
	return 0;
}

/* Apply like the daemon does, then make every level exempt so each SYN is
 * admitted and leaves its class in sl_conns. */
static void apply(const struct sl_config *cfg, struct sl_plan *plan)
{
	char names[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN];
	struct sl_diags d = SL_DIAGS_INIT;

	assert_int_equal(sl_maps_level_names(&maps, names), 0);
	if (sl_plan_build(cfg, names, "sl0", plan, &d)) {
		sl_diags_print(&d, stderr);
		fail_msg("plan failed");
	}
	sl_diags_free(&d);
	assert_int_equal(sl_apply_plan(&maps, plan), 0);
	for (unsigned slot = 0; slot < SLUICE_MAX_LEVELS; slot++) {
		struct sluice_level l;

		assert_int_equal(sl_maps_level(&maps, slot, &l), 0);
		if (l.type == SLUICE_LEVEL_UNUSED)
			continue;
		l.type = SLUICE_LEVEL_EXEMPT;
		assert_int_equal(bpf_map_update_elem(maps.fd[SL_MAP_LEVELS], &slot, &l, BPF_ANY), 0);
	}
}

/* A random address: half the time inside a prefix the config mentions
 * (host bits random), else anywhere in the family. */
/* 127.0.0.0/8 (v4-mapped) or ::1. */
static bool loopback_source(const uint8_t a[16])
{
	static const uint8_t v4map[12] = {[10] = 0xff, [11] = 0xff}, v6[16] = {[15] = 1};

	return (!memcmp(a, v4map, 12) && a[12] == 127) || !memcmp(a, v6, 16);
}

static void random_addr(const struct sl_prefix_class *pfx, size_t n, int family, uint8_t out[16])
{
	static const uint8_t v4map[12] = {[10] = 0xff, [11] = 0xff};
	uint64_t a = rnd(), b = rnd();

	memcpy(out, &a, 8);
	memcpy(out + 8, &b, 8);
	if (n && (rnd() & 1)) {
		const struct sl_prefix_class *p = &pfx[rnd() % n];
		bool v4 = !memcmp(p->addr, v4map, 12) && p->prefix_len >= 96;

		if ((family == 4) == v4) {
			for (unsigned bit = 0; bit < p->prefix_len; bit++) {
				uint8_t m = (uint8_t)(0x80 >> (bit % 8));

				out[bit / 8] = (uint8_t)((out[bit / 8] & ~m) | (p->addr[bit / 8] & m));
			}
			/* Sometimes the prefix address itself (a /32 label). */
			if (rnd() % 4 == 0)
				memcpy(out, p->addr, 16);
			return;
		}
	}
	if (family == 4)
		memcpy(out, v4map, 12);
	else if (!memcmp(out, v4map, 12))
		out[0] = 0xfd; /* keep it IPv6 */
}

static uint16_t random_port(const uint16_t *cls)
{
	uint16_t p = (uint16_t)rnd();

	/* Often land on a class boundary, where off-by-ones live. */
	if (rnd() & 1) {
		for (int tries = 0; tries < 64; tries++) {
			uint16_t q = (uint16_t)rnd();

			if (q > 0 && cls[q] != cls[q - 1])
				return (uint16_t)(q - (rnd() & 1));
		}
	}
	return p;
}

/* First and last port of each port class (classes are intervals). */
struct port_spans {
	uint16_t lo[65536], hi[65536];
};

static void port_spans(const uint16_t *cls, struct port_spans *s)
{
	for (unsigned p = 0; p < 65536; p++) {
		if (!p || cls[p] != cls[p - 1])
			s->lo[cls[p]] = (uint16_t)p;
		s->hi[cls[p]] = (uint16_t)p;
	}
}

static void addr_in(const struct sl_prefix_class *p, uint8_t out[16])
{
	uint64_t a = rnd(), b = rnd();

	memcpy(out, &a, 8);
	memcpy(out + 8, &b, 8);
	for (unsigned bit = 0; bit < p->prefix_len; bit++) {
		uint8_t m = (uint8_t)(0x80 >> (bit % 8));

		out[bit / 8] = (uint8_t)((out[bit / 8] & ~m) | (p->addr[bit / 8] & m));
	}
}

static bool prefix_is_v4(const struct sl_prefix_class *p)
{
	static const uint8_t v4map[12] = {[10] = 0xff, [11] = 0xff};

	return p->prefix_len >= 96 && !memcmp(p->addr, v4map, 12);
}

/* A tuple aimed at one entry of the compiled table: inside the prefixes
 * and port classes it names (the others at random), so with thousands of
 * schemas most tuples still land on a schema's own classes, not on the
 * catch-all.  false when the entry cannot be aimed at (class 0). */
static bool aimed_tuple(const struct sl_plan *plan, const struct port_spans *sp,
			const struct port_spans *dp, struct sl_conn_tuple *t)
{
	const struct sl_class_entry *e = &plan->classes.entries[rnd() % plan->classes.n_entries];
	const struct sl_prefix_class *src = NULL, *dst = NULL;
	int family;

	if (e->key.mask & SLUICE_DIM_SRC) {
		if (!e->key.src)
			return false;
		src = &plan->classes.src[e->key.src - 1];
	}
	if (e->key.mask & SLUICE_DIM_DST) {
		if (!e->key.dst)
			return false;
		dst = &plan->classes.dst[e->key.dst - 1];
	}
	family = src ? (prefix_is_v4(src) ? 4 : 6) : dst ? (prefix_is_v4(dst) ? 4 : 6) : 4;
	if ((src && dst && prefix_is_v4(src) != prefix_is_v4(dst)))
		return false;
	if (src)
		addr_in(src, t->saddr);
	else
		random_addr(plan->classes.src, plan->classes.n_src, family, t->saddr);
	if (dst)
		addr_in(dst, t->daddr);
	else
		random_addr(plan->classes.dst, plan->classes.n_dst, family, t->daddr);
	t->sport = (e->key.mask & SLUICE_DIM_SPORT) ?
			   (uint16_t)(sp->lo[e->key.sport] + rnd() % (sp->hi[e->key.sport] - sp->lo[e->key.sport] + 1u)) :
			   random_port(plan->classes.sport_cls);
	t->dport = (e->key.mask & SLUICE_DIM_DPORT) ?
			   (uint16_t)(dp->lo[e->key.dport] + rnd() % (dp->hi[e->key.dport] - dp->lo[e->key.dport] + 1u)) :
			   random_port(plan->classes.dport_cls);
	return true;
}

static void build_syn(const struct sl_conn_tuple *t, uint8_t *buf, size_t *len)
{
	struct fr_layout lay;
	struct fr_spec s;

	if (sl_addr_is_v4(t->saddr)) {
		fr_default_v4_syn(&s);
		memcpy(s.saddr4, t->saddr + 12, 4);
		memcpy(s.daddr4, t->daddr + 12, 4);
	} else {
		fr_default_v6_syn(&s);
		memcpy(s.saddr6, t->saddr, 16);
		memcpy(s.daddr6, t->daddr, 16);
	}
	s.sport = t->sport;
	s.dport = t->dport;
	*len = fr_build(&s, buf, &lay);
}

/* Run n random tuples; every disagreement is printed and counted. */
static unsigned long run_tuples(const struct sl_config *cfg, const struct sl_plan *plan,
				unsigned long n)
{
	struct sl_labels labels = SL_LABELS_INIT;
	unsigned long mismatches = 0;
	int prog = bpf_program__fd(skel->progs.sluice_xdp);
	struct port_spans *sp = malloc(sizeof(*sp)), *dp = malloc(sizeof(*dp));

	assert_non_null(sp);
	assert_non_null(dp);
	uint8_t *hit = calloc(cfg->n_schemas + 1, 1);

	assert_non_null(hit);
	schemas_hit = 0;
	port_spans(plan->classes.sport_cls, sp);
	port_spans(plan->classes.dport_cls, dp);
	for (unsigned long i = 0; i < n; i++) {
		struct sl_conn_tuple t = {.iface = "sl0"};
		struct sluice_conn_key k = {0};
		struct sl_class_result r;
		struct sluice_conn c;
		uint8_t frame[4096], out[4096];
		size_t len;
		int family = (rnd() % 10) < 7 ? 4 : 6;
		unsigned want_level, want_schema, want_policy, want_workload;
		LIBBPF_OPTS(bpf_test_run_opts, topts, .data_in = frame, .data_out = out,
			    .data_size_out = sizeof(out));

		/* Half aimed at a table entry, half anywhere. */
		if (!plan->classes.n_entries || (rnd() & 1) || !aimed_tuple(plan, sp, dp, &t)) {
			random_addr(plan->classes.src, plan->classes.n_src, family, t.saddr);
			random_addr(plan->classes.dst, plan->classes.n_dst, family, t.daddr);
			t.sport = random_port(plan->classes.sport_cls);
			t.dport = random_port(plan->classes.dport_cls);
		}
		if (!t.sport)
			t.sport = 1; /* port 0 is not a connection */
		build_syn(&t, frame, &len);
		topts.data_size_in = (__u32)len;
		assert_int_equal(bpf_prog_test_run_opts(prog, &topts), 0);
		assert_int_equal(topts.retval, XDP_PASS);

		memcpy(k.saddr, t.saddr, 16);
		memcpy(k.daddr, t.daddr, 16);
		k.sport = htons(t.sport);
		k.dport = htons(t.dport);
		k.family = sl_addr_is_v4(t.saddr) ? 4 : 6;
		if (loopback_source(t.saddr)) {
			/* Spoofed on a device: never seated (the exempt
			 * FlowSchema's loopback rule serves lo, where XDP does
			 * not run). */
			if (!bpf_map_lookup_elem(maps.fd[SL_MAP_CONNS], &k, &c)) {
				print_error("tuple %lu: a loopback source was tracked\n", i);
				bpf_map_delete_elem(maps.fd[SL_MAP_CONNS], &k);
				mismatches++;
			}
			continue;
		}
		if (bpf_map_lookup_elem(maps.fd[SL_MAP_CONNS], &k, &c)) {
			print_error("tuple %lu: BPF did not admit and track it\n", i);
			mismatches++;
			continue;
		}
		bpf_map_delete_elem(maps.fd[SL_MAP_CONNS], &k);

		assert_int_equal(sl_conn_labels(cfg, &t, &labels), 0);
		sl_classify(cfg, &t, &labels, &r);
		assert_true(r.schema != SL_NONE);
		schemas_hit += !hit[r.schema];
		hit[r.schema] = 1;
		want_schema = (unsigned)r.schema;
		want_level = plan->slot_of[cfg->schemas[r.schema].level];
		want_policy = r.policy == SL_NONE ? SLUICE_NONE16 : (unsigned)r.policy;
		want_workload = r.workload == SL_NONE ? SLUICE_NONE16 : (unsigned)r.workload;
		if (c.level != want_level || c.schema != want_schema || c.policy != want_policy ||
		    c.workload != want_workload || c.seats != cfg->schemas[r.schema].seats_per_conn) {
			char a[64], b[64];

			if (mismatches < 10)
				print_error("tuple %lu %s:%u -> %s:%u: BPF level %u schema %u policy %u "
					    "workload %u seats %u; reference level %u schema %u (%s) "
					    "policy %u workload %u seats %u\n", i,
					    sl_fmt_addr(t.saddr, a, sizeof(a)), t.sport,
					    sl_fmt_addr(t.daddr, b, sizeof(b)), t.dport, c.level,
					    c.schema, c.policy, c.workload, c.seats, want_level,
					    want_schema, cfg->schemas[r.schema].name, want_policy,
					    want_workload, cfg->schemas[r.schema].seats_per_conn);
			mismatches++;
		}
	}
	sl_labels_free(&labels);
	free(sp);
	free(dp);
	free(hit);
	return mismatches;
}

/* Entries of the class table that carry a policy half. */
static size_t entries_with_policy(const struct sl_compiled *c)
{
	size_t n = 0;

	for (size_t i = 0; i < c->n_entries; i++)
		n += c->entries[i].val.policy != SLUICE_NONE16;
	return n;
}

static void differential(const char *path)
{
	struct sl_config *cfg = load_config_file(path);
	struct sl_plan plan;
	unsigned long bad;

	apply(cfg, &plan);
	bad = run_tuples(cfg, &plan, tuples_per_config);
	printf("# %s: %lu tuples, %zu table entries from %zu terms (%zu combinations shadowed), "
	       "%lu mismatches\n", path, tuples_per_config, plan.classes.n_entries,
	       plan.classes.n_terms, plan.classes.n_shadowed, bad);
	sl_plan_free(&plan);
	sl_config_free(cfg);
	assert_int_equal(bad, 0);
}

static void test_networks(void **state) { (void)state; differential("tests/packet/classify/networks.yaml"); }
static void test_labels(void **state) { (void)state; differential("tests/packet/classify/labels.yaml"); }
static void test_default_config(void **state) { (void)state; differential("configs/default.yaml"); }
static void test_demo_config(void **state) { (void)state; differential("configs/demo.yaml"); }
static void test_mandatory_only(void **state) { (void)state; differential("tests/unit/configs/server-only.yaml"); }

static struct sl_config *load_tenants(unsigned n, bool mixed)
{
	size_t len;
	char *yaml = tenants_yaml(n, mixed, &len);
	struct sl_config *cfg;

	assert_non_null(yaml);
	cfg = load_config_text("tenants.yaml", yaml, len);
	free(yaml);
	return cfg;
}

/* 10,000 FlowSchemas, one per tenant, and the same with labels and a
 * policy; then back, across two generation flips. */
static void test_ten_thousand_tenants(void **state)
{
	struct sl_config *plain = load_tenants(10000, false), *mixed = load_tenants(10000, true);
	/* The reference classifier walks 10,000 schemas a tuple: fewer
	 * tuples, each aimed half the time, still reach thousands of them. */
	unsigned long n = tuples_per_config / 6, bad;
	struct sl_plan pp, pm;

	(void)state;
	apply(plain, &pp);
	assert_true(pp.classes.n_entries >= 10000);
	bad = run_tuples(plain, &pp, n);
	printf("# 10000 tenants: %lu tuples reached %zu schemas, %zu table entries, %lu mismatches\n",
	       n, schemas_hit, pp.classes.n_entries, bad);
	assert_int_equal(bad, 0);
	/* The tenants' own schemas, not only the catch-all (about 0.4 n are
	 * reached; half the tuples are aimed). */
	assert_true(schemas_hit > n / 4);

	apply(mixed, &pm);
	assert_true(entries_with_policy(&pm.classes) > 0);
	bad = run_tuples(mixed, &pm, n);
	printf("# 10000 tenants, mixed: %lu tuples reached %zu schemas, %zu table entries, "
	       "%lu mismatches\n", n, schemas_hit, pm.classes.n_entries, bad);
	assert_int_equal(bad, 0);
	assert_true(schemas_hit > n / 8); /* half the aimed tuples aim at policy entries */

	sl_plan_free(&pp);
	apply(plain, &pp);
	assert_int_equal(run_tuples(plain, &pp, n / 2), 0);
	sl_plan_free(&pp);
	sl_plan_free(&pm);
	sl_config_free(plain);
	sl_config_free(mixed);
}

/* Count LPM entries of one generation. */
static size_t lpm_entries(int fd, uint8_t gen)
{
	struct sluice_lpm_key key, next;
	void *prev = NULL;
	size_t n = 0;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		n += next.gen == gen;
		key = next;
		prev = &key;
	}
	return n;
}

/* A reload flips the generation and the new classification is in force
 * at once; the old generation stays behind it (nothing reads it) until the
 * next reload's stage writes that generation from scratch. */
static void test_reload_flips_generation(void **state)
{
	struct sl_config *a = load_config_file("tests/packet/classify/networks.yaml");
	struct sl_config *b = load_config_file("tests/packet/classify/labels.yaml");
	struct sluice_settings cfg;
	struct sl_plan pa, pb;
	uint32_t zero = 0;
	uint8_t gen_a;

	(void)state;
	apply(a, &pa);
	assert_int_equal(bpf_map_lookup_elem(maps.fd[SL_MAP_CONFIG], &zero, &cfg), 0);
	gen_a = (uint8_t)cfg.generation;
	assert_int_equal(run_tuples(a, &pa, tuples_per_config / 4), 0);

	apply(b, &pb);
	assert_int_equal(bpf_map_lookup_elem(maps.fd[SL_MAP_CONFIG], &zero, &cfg), 0);
	assert_int_equal(cfg.generation, gen_a ^ 1);
	assert_int_equal(lpm_entries(maps.fd[SL_MAP_SRC_CLS], gen_a), pa.classes.n_src);
	assert_int_equal(lpm_entries(maps.fd[SL_MAP_SRC_CLS], (uint8_t)(gen_a ^ 1)), pb.classes.n_src);
	assert_int_equal(run_tuples(b, &pb, tuples_per_config / 4), 0);

	/* Back to a: its generation is rewritten, not added to. */
	sl_plan_free(&pa);
	apply(a, &pa);
	assert_int_equal(bpf_map_lookup_elem(maps.fd[SL_MAP_CONFIG], &zero, &cfg), 0);
	assert_int_equal(cfg.generation, gen_a);
	assert_int_equal(lpm_entries(maps.fd[SL_MAP_SRC_CLS], gen_a), pa.classes.n_src);
	assert_int_equal(run_tuples(a, &pa, tuples_per_config / 4), 0);

	sl_plan_free(&pa);
	sl_plan_free(&pb);
	sl_config_free(a);
	sl_config_free(b);
}

/* A reload whose classification did not change (the same file again, or
 * only shares changed) writes no table and keeps the generation; the next
 * that changes it flips as usual. */
static void test_reload_keeps_unchanged_tables(void **state)
{
	struct sl_config *a = load_config_file("tests/packet/classify/networks.yaml");
	struct sl_config *b = load_config_file("tests/packet/classify/labels.yaml");
	struct sluice_settings cfg;
	struct sl_plan pa, pa2, pb;
	uint32_t zero = 0;
	uint8_t gen, staged;
	size_t idle_lpm;

	(void)state;
	apply(b, &pb);
	apply(a, &pa);
	assert_int_equal(bpf_map_lookup_elem(maps.fd[SL_MAP_CONFIG], &zero, &cfg), 0);
	gen = (uint8_t)cfg.generation;
	assert_true(cfg.class_digest == pa.classes.digest);
	idle_lpm = lpm_entries(maps.fd[SL_MAP_SRC_CLS], (uint8_t)(gen ^ 1));
	assert_int_equal(idle_lpm, pb.classes.n_src); /* b's tables still behind */

	assert_int_equal(sl_apply_stage(&maps, &pa, &staged), 0);
	assert_true(sl_apply_stage_kept(staged));
	apply(a, &pa2);
	assert_int_equal(bpf_map_lookup_elem(maps.fd[SL_MAP_CONFIG], &zero, &cfg), 0);
	assert_int_equal(cfg.generation, gen);
	assert_int_equal(lpm_entries(maps.fd[SL_MAP_SRC_CLS], (uint8_t)(gen ^ 1)), idle_lpm);
	assert_int_equal(run_tuples(a, &pa2, tuples_per_config / 4), 0);
	/* A kept stage is stale once another commit flipped. */
	sl_plan_free(&pb);
	apply(b, &pb);
	assert_int_equal(sl_apply_commit(&maps, &pa, staged), -ESTALE);
	assert_int_equal(bpf_map_lookup_elem(maps.fd[SL_MAP_CONFIG], &zero, &cfg), 0);
	assert_int_equal(cfg.generation, gen ^ 1);
	assert_int_equal(run_tuples(b, &pb, tuples_per_config / 4), 0);

	sl_plan_free(&pa);
	sl_plan_free(&pa2);
	sl_plan_free(&pb);
	sl_config_free(a);
	sl_config_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_networks),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_default_config),
		cmocka_unit_test(test_demo_config),
		cmocka_unit_test(test_mandatory_only),
		cmocka_unit_test(test_reload_flips_generation),
		cmocka_unit_test(test_reload_keeps_unchanged_tables),
		cmocka_unit_test(test_ten_thousand_tenants),
	};

	return cmocka_run_group_tests_name("classify_differential", tests, group_setup, group_teardown);
}
