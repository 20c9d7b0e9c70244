// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
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
 * label (a Labels subject), and a policy selects every tenant by label
 * with two workloads: labels and policies through the same compile.  Reports,
 * asserts nothing (docs/BENCHMARKS.md).
 *
 *   bench_classify [--mixed] [N ...]     default 50 200 800 3200 10000 20000
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/config.h"
#include "dataplane/settings.h"
#include "dataplane/dataplane.h"
#include "engine/plan.h"
#include "frames.h"
#include "tenants.h"
#include "sluice.skel.h"

#define REPEAT 200000

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool mixed;

/* One SYN from the last tenant, tracked already (the retransmit path):
 * the median of 7 runs of REPEAT, so one noisy run does not make a ratio. */
static double syn_cost(struct sluice *skel, unsigned n)
{
	int fd = bpf_program__fd(skel->progs.sluice_xdp);
	uint8_t frame[FR_MAX_LEN], out[FR_MAX_LEN];
	double runs[7];
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
	for (int r = 0; r < 7; r++) {
		o.repeat = REPEAT;
		o.data_size_out = sizeof(out);
		if (bpf_prog_test_run_opts(fd, &o) || o.retval != XDP_PASS)
			return NAN;
		runs[r] = (double)o.duration;
	}
	for (int i = 1; i < 7; i++) /* insertion sort: the median */
		for (int j = i; j > 0 && runs[j] < runs[j - 1]; j--) {
			double t = runs[j];

			runs[j] = runs[j - 1];
			runs[j - 1] = t;
		}
	return runs[3];
}

int main(int argc, char **argv)
{
	static const unsigned defaults[] = {50, 200, 800, 3200, 10000, 20000};
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
		char *end;

		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: bench_classify [--mixed] [N ...]   (root; N FlowSchemas a run, "
			       "default 50 200 800 3200 10000 20000)\n"
			       "  compile time, table size and the XDP cost per SYN by FlowSchema count;\n"
			       "  --mixed: with ConnectionLabels, label selectors and a policy\n");
			return 0;
		}
		if (!strcmp(argv[i], "--mixed")) {
			mixed = true;
			continue;
		}
		sizes[n_sizes] = (unsigned)strtoul(argv[i], &end, 10);
		if (*end || !sizes[n_sizes]) {
			fprintf(stderr, "bench_classify: %s: not a FlowSchema count (try --help)\n", argv[i]);
			return 2;
		}
		n_sizes++;
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
	printf("%8s %9s %10s %9s %9s %9s %10s %9s %8s  %s\n", "schemas", "load_s", "compile_s",
	       "apply_s", "entries", "terms", "map_KiB", "syn_ns", "x_50", "outcome");
	for (size_t k = 0; k < n_sizes; k++) {
		struct sl_diags d = SL_DIAGS_INIT;
		struct sl_config *cfg = NULL;
		struct sl_plan plan;
		size_t len;
		char *yaml = tenants_yaml(sizes[k], mixed, &len);
		double t0, t_load, t_compile = NAN, t_apply = NAN, syn = NAN;
		char outcome[200] = "compiled and applied";
		size_t entries = 0, terms = 0, kib = 0;
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
				terms = plan.classes.n_terms;
				/* LPM entries (key + value), class entries, the two port arrays */
				kib = ((plan.classes.n_src + plan.classes.n_dst) *
					       (sizeof(struct sluice_lpm_key) + sizeof(struct sluice_lpm_val)) +
				       entries * (sizeof(struct sluice_class_key) + sizeof(struct sluice_class)) +
				       2 * 65536 * sizeof(__u32)) / 1024;
				t0 = now_s();
				err = sl_apply_plan(&maps, &plan);
				t_apply = now_s() - t0;
				if (err)
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
		printf("%8u %9.3f %10.3f %9.3f %9zu %9zu %10zu %9.1f %8.2f  %s\n", sizes[k], t_load,
		       t_compile, t_apply, entries, terms, kib, syn, syn / base_ns, outcome);
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
