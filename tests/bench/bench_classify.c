/*
 * Classification at scale (the operator with many tenants): N
 * FlowSchemas, each its own /24 and local port, one Queue level.  For each
 * N: the time to load the YAML and to build the plan (the compile), the
 * class-table entries and map memory it fills, whether it can be applied
 * at all (and why not), and the XDP cost of a SYN of the last tenant
 * (BPF_PROG_TEST_RUN, its 4-tuple already tracked, so the figure is
 * classification and lookups), as a ratio to the smallest N.  The growth
 * exponent is fitted over the sizes that compiled.  With --mixed every
 * other tenant is named by a ConnectionLabels rule and matched by its
 * label (a Labels subject), and a policy selects the tenants' ports with
 * two workloads: labels and policies through the same compile.  Reports,
 * asserts nothing (docs/BENCHMARKS.md).
 *
 *   bench_classify [--mixed] [N ...]     default 50 200 800 1600 3200 10000
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/config.h"
#include "dataplane/apply.h"
#include "dataplane/loader.h"
#include "engine/plan.h"
#include "frames.h"
#include "sluice.skel.h"

#define REPEAT 200000

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool mixed;

/* Tenant i: 10.(i/256).(i%256).0/24 to local port 10000 + i.  Mixed: odd
 * tenants are labelled tenant=tI by ConnectionLabels and matched by that
 * label; a policy selects port range 10000-29999 with two workloads. */
static char *tenants_yaml(unsigned n, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	if (!f)
		return NULL;
	fprintf(f, "apiVersion: sluice/v1\nkind: Server\nmetadata: {name: s}\n"
		   "spec: {serverConcurrencyLimit: 1000}\n---\n"
		   "apiVersion: sluice/v1\nkind: PriorityLevelConfiguration\nmetadata: {name: tenants}\n"
		   "spec:\n  type: Limited\n  limited:\n    nominalConcurrencyShares: 100\n"
		   "    limitResponse: {type: Queue, queuing: {queues: 64, handSize: 6, queueLengthLimit: 50}}\n");
	if (mixed) {
		fprintf(f, "---\napiVersion: sluice/v1\nkind: ConnectionLabels\nmetadata: {name: tenants}\n"
			   "spec:\n  rules:\n");
		for (unsigned i = 1; i < n; i += 2)
			fprintf(f, "  - sources: [10.%u.%u.0/24]\n    labels: {tenant: t%u}\n",
				(i / 256) % 256, i % 256, i);
		fprintf(f, "  - sources: [10.0.0.0/16]\n    labels: {tier: gold}\n"
			   "---\napiVersion: sluice/v1\nkind: AverageLatencySchedulingPolicy\n"
			   "metadata: {name: tenants}\nspec:\n  load_scheduling_core:\n"
			   "    aimd_load_scheduler:\n      load_scheduler:\n        selectors:\n"
			   "        - control_point: ingress\n          label_matcher:\n"
			   "            match_expressions: [{key: dst.port, operator: In, values: [\"10000-29999\"]}]\n"
			   "        scheduler:\n          workloads:\n"
			   "          - name: gold\n            label_matcher: {match_labels: {tier: gold}}\n"
			   "            parameters: {priority: 4}\n"
			   "          - name: odd\n            label_matcher:\n"
			   "              expression: {label_matches: {label: tenant, regex: \"^t[0-9]*[13579]$\"}}\n"
			   "            parameters: {priority: 2}\n");
	}
	for (unsigned i = 0; i < n; i++) {
		fprintf(f, "---\napiVersion: sluice/v1\nkind: FlowSchema\nmetadata: {name: t%u}\n"
			   "spec:\n  priorityLevelConfiguration: {name: tenants}\n  matchingPrecedence: %u\n"
			   "  rules:\n", i, 1000 + i % 9000);
		if (mixed && i % 2)
			fprintf(f, "  - subjects: [{kind: Labels, labels: {matchLabels: {tenant: t%u}}}]\n", i);
		else
			fprintf(f, "  - subjects: [{kind: Network, network: {cidrs: [10.%u.%u.0/24]}}]\n",
				(i / 256) % 256, i % 256);
		fprintf(f, "    destinations: [{ports: [%u]}]\n", 10000 + i);
	}
	fclose(f);
	return text;
}

/* One SYN from the last tenant, tracked already (the retransmit path). */
static double syn_cost(struct sluice *skel, unsigned n)
{
	int fd = bpf_program__fd(skel->progs.sluice_xdp);
	uint8_t frame[FR_MAX_LEN], out[FR_MAX_LEN];
	struct fr_spec sp;
	size_t len;
	LIBBPF_OPTS(bpf_test_run_opts, o, .repeat = REPEAT);

	fr_default_v4_syn(&sp);
	sp.saddr4[0] = 10;
	sp.saddr4[1] = (uint8_t)(((n - 1) / 256) % 256);
	sp.saddr4[2] = (uint8_t)((n - 1) % 256);
	sp.saddr4[3] = 7;
	sp.dport = (uint16_t)(10000 + n - 1);
	len = fr_build(&sp, frame, NULL);
	o.data_in = frame;
	o.data_size_in = (uint32_t)len;
	o.data_out = out;
	o.data_size_out = sizeof(out);
	o.repeat = 1; /* the first admits and tracks it */
	if (bpf_prog_test_run_opts(fd, &o) || o.retval != XDP_PASS)
		return NAN;
	o.repeat = REPEAT;
	o.data_size_out = sizeof(out);
	if (bpf_prog_test_run_opts(fd, &o) || o.retval != XDP_PASS)
		return NAN;
	return (double)o.duration;
}

int main(int argc, char **argv)
{
	static const unsigned defaults[] = {50, 200, 800, 1600, 3200, 10000};
	char names[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN] = {{0}};
	unsigned sizes[32];
	size_t n_sizes = 0;
	double fit_x[32], fit_y[32], base_ns = NAN;
	int n_fit = 0;
	struct sluice *skel;
	struct sl_maps maps;
	struct sluice_heartbeat hb = {0};
	__u32 zero = 0;

	for (int i = 1; i < argc && n_sizes < 32; i++) {
		if (!strcmp(argv[i], "--mixed")) {
			mixed = true;
			continue;
		}
		sizes[n_sizes++] = (unsigned)strtoul(argv[i], NULL, 10);
	}
	if (!n_sizes)
		for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
			sizes[n_sizes++] = defaults[i];
	skel = sluice__open_and_load();
	if (!skel) {
		fprintf(stderr, "bench_classify: cannot load the BPF object (root?)\n");
		return 1;
	}
	sl_maps_from_skel(skel, &maps);
	hb.mono_ns = sl_mono_ns() + 3600ULL * 1000000000ULL;
	bpf_map_update_elem(maps.fd[SL_MAP_HEARTBEAT], &zero, &hb, BPF_ANY);
	printf("%s\n", mixed ? "mixed: every other tenant by its ConnectionLabels label, a policy with two workloads"
			     : "each tenant its own /24 and port");
	printf("%8s %9s %10s %9s %11s %10s %9s %8s  %s\n", "schemas", "load_s", "compile_s", "entries",
	       "combinations", "map_KiB", "syn_ns", "x_50", "outcome");
	for (size_t k = 0; k < n_sizes; k++) {
		struct sl_diags d = SL_DIAGS_INIT;
		struct sl_config *cfg = NULL;
		struct sl_plan plan;
		size_t len;
		char *yaml = tenants_yaml(sizes[k], &len);
		double t0, t_load, t_compile = NAN, syn = NAN;
		char outcome[200] = "compiled and applied";
		size_t entries = 0, combos = 0, kib = 0;
		int err;

		if (!yaml)
			return 1;
		t0 = now_s();
		err = sl_config_load_buffer("tenants.yaml", yaml, len, &cfg, &d);
		t_load = now_s() - t0;
		free(yaml);
		if (err) {
			snprintf(outcome, sizeof(outcome), "does not load");
		} else {
			t0 = now_s();
			err = sl_plan_build(cfg, names, "bench", &plan, &d);
			t_compile = now_s() - t0;
			if (err) {
				snprintf(outcome, sizeof(outcome), "refused: %s",
					 d.count ? d.items[d.count - 1].message : "?");
			} else {
				entries = plan.classes.n_entries;
				combos = plan.classes.n_combinations;
				/* LPM entries (key + value), class entries, the two port arrays */
				kib = ((plan.classes.n_src + plan.classes.n_dst) *
					       (sizeof(struct sluice_lpm_key) + sizeof(struct sluice_lpm_val)) +
				       entries * (sizeof(struct sluice_class_key) + sizeof(struct sluice_class)) +
				       2 * 65536 * sizeof(__u32)) / 1024;
				if (sl_apply_plan(&maps, &plan))
					snprintf(outcome, sizeof(outcome), "compiled, not applied");
				else
					syn = syn_cost(skel, sizes[k]);
				if (isnan(base_ns) && !isnan(syn))
					base_ns = syn;
				if (t_compile > 0) {
					fit_x[n_fit] = log((double)sizes[k]);
					fit_y[n_fit++] = log(t_compile);
				}
				sl_plan_free(&plan);
			}
			sl_config_free(cfg);
		}
		printf("%8u %9.3f %10.3f %9zu %11zu %10zu %9.1f %8.2f  %s\n", sizes[k], t_load, t_compile,
		       entries, combos, kib, syn, syn / base_ns, outcome);
		fflush(stdout);
		sl_diags_free(&d);
	}
	if (n_fit >= 2) {
		double mx = 0, my = 0, sxy = 0, sxx = 0;

		for (int i = 0; i < n_fit; i++) {
			mx += fit_x[i] / n_fit;
			my += fit_y[i] / n_fit;
		}
		for (int i = 0; i < n_fit; i++) {
			sxy += (fit_x[i] - mx) * (fit_y[i] - my);
			sxx += (fit_x[i] - mx) * (fit_x[i] - mx);
		}
		printf("compile time grows as N^%.2f over the sizes that compiled (least squares, log-log)\n",
		       sxy / sxx);
	}
	sluice__destroy(skel);
	return 0;
}
