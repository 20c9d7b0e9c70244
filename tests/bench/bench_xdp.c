/*
 * XDP cost per packet, measured with BPF_PROG_TEST_RUN (in-kernel timing,
 * `repeat` runs per call), against baselines measured in the same run:
 *   xdp_pass    the empty program
 *   parse_pass  sluice's parser, then pass
 *   sluice_xdp  non-SYN, SYN admitted inline, SYN retransmit, SYN deferred
 *               (level full), SYN rejected (RST built)
 * Prints a table and ratios; no assertion on time (docs/BENCHMARKS.md).
 */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "apply.h"
#include "loader.h"
#include "config.h"
#include "frames.h"
#include "plan.h"
#include "sluice.skel.h"

#define REPEAT 200000

static struct sluice *skel;
static struct sl_maps maps;

static double run_repeat(int prog, const uint8_t *frame, size_t len, unsigned repeat)
{
	uint8_t out[4096];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = (__u32)len,
		    .data_out = out, .data_size_out = sizeof(out), .repeat = repeat);

	if (bpf_prog_test_run_opts(prog, &o)) {
		fprintf(stderr, "test_run: %s\n", strerror(errno));
		exit(1);
	}
	return o.duration; /* ns per run, averaged by the kernel */
}

static size_t syn(uint8_t *buf, uint16_t sport, uint16_t dport, uint8_t flags)
{
	struct fr_layout lay;
	struct fr_spec s;

	fr_default_v4_syn(&s);
	s.sport = sport;
	s.dport = dport;
	s.tcp_flags = flags;
	memcpy(s.saddr4, (uint8_t[]){198, 18, 7, 2}, 4); /* a gold client in labels.yaml */
	memcpy(s.daddr4, (uint8_t[]){198, 18, 0, 1}, 4);
	return fr_build(&s, buf, &lay);
}

static void set_seats(unsigned slot, uint64_t n)
{
	struct sluice_seats s = {.seats_in_use = n};

	bpf_map_update_elem(maps.fd[SL_MAP_SEATS], &slot, &s, BPF_ANY);
}

static void set_response(unsigned slot, uint32_t resp)
{
	struct sluice_level l;

	bpf_map_lookup_elem(maps.fd[SL_MAP_LEVELS], &slot, &l);
	l.limit_response = resp;
	l.type = SLUICE_LEVEL_LIMITED;
	bpf_map_update_elem(maps.fd[SL_MAP_LEVELS], &slot, &l, BPF_ANY);
}

int main(int argc, char **argv)
{
	const char *config = argc > 1 ? argv[1] : "tests/packet/classify/labels.yaml";
	char names[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN] = {{0}};
	struct sl_diags d = SL_DIAGS_INIT;
	struct bpf_object *pass_obj, *parse_obj;
	struct sl_config *cfg = NULL;
	struct sl_plan plan;
	uint8_t frame[4096];
	int pass_fd, parse_fd, sl_fd;
	size_t len;
	unsigned slot, n = 20000;
	double t_pass, t_parse, t_ack, t_retx, t_defer, t_rst, t_admit = 0, t_pass1 = 0;
	struct sluice_heartbeat hb = {0};
	__u32 zero = 0;

	skel = sluice__open_and_load();
	pass_obj = bpf_object__open_file("bpf/xdp_pass.bpf.o", NULL);
	parse_obj = bpf_object__open_file("bpf/bench_baseline.bpf.o", NULL);
	if (!skel || !pass_obj || !parse_obj || bpf_object__load(pass_obj) || bpf_object__load(parse_obj)) {
		fprintf(stderr, "bench_xdp: cannot load the BPF objects (root? run from the repo root)\n");
		return 1;
	}
	pass_fd = bpf_program__fd(bpf_object__find_program_by_name(pass_obj, "xdp_pass"));
	parse_fd = bpf_program__fd(bpf_object__find_program_by_name(parse_obj, "parse_pass"));
	sl_fd = bpf_program__fd(skel->progs.sluice_xdp);
	sl_maps_from_skel(skel, &maps);
	if (sl_config_load_file(config, &cfg, &d) || sl_plan_build(cfg, names, "bench", &plan, &d) ||
	    sl_apply_plan(&maps, &plan)) {
		sl_diags_print(&d, stderr);
		return 1;
	}
	hb.mono_ns = sl_mono_ns() + 3600ULL * 1000000000ULL; /* fresh for the whole run */
	bpf_map_update_elem(maps.fd[SL_MAP_HEARTBEAT], &zero, &hb, BPF_ANY);

	len = syn(frame, 40000, 8080, TH_SYN);
	t_pass = run_repeat(pass_fd, frame, len, REPEAT);
	t_parse = run_repeat(parse_fd, frame, len, REPEAT);
	len = syn(frame, 40000, 8080, TH_ACK);
	t_ack = run_repeat(sl_fd, frame, len, REPEAT);

	/* Inline admission: distinct 4-tuples, one run each; the per-call
	 * in-kernel timing of the empty program over the same calls is
	 * subtracted as timer noise floor. */
	for (unsigned i = 0; i < n; i++) {
		len = syn(frame, (uint16_t)(1024 + i), 8080, TH_SYN);
		t_admit += run_repeat(sl_fd, frame, len, 1);
		t_pass1 += run_repeat(pass_fd, frame, len, 1);
	}
	t_admit /= n;
	t_pass1 /= n;
	len = syn(frame, 1024, 8080, TH_SYN); /* admitted above: a retransmit now */
	t_retx = run_repeat(sl_fd, frame, len, REPEAT);

	/* Over the limit: make the level of 198.18.7.x:8080 full. */
	{
		struct sluice_conn_key k = {0};
		struct sluice_conn c;

		k.saddr[10] = k.saddr[11] = 0xff;
		memcpy(k.saddr + 12, (uint8_t[]){198, 18, 7, 2}, 4);
		k.daddr[10] = k.daddr[11] = 0xff;
		memcpy(k.daddr + 12, (uint8_t[]){198, 18, 0, 1}, 4);
		k.sport = htons(1024);
		k.dport = htons(8080);
		k.family = 4;
		if (bpf_map_lookup_elem(maps.fd[SL_MAP_CONNS], &k, &c)) {
			fprintf(stderr, "bench_xdp: the admitted SYN is not tracked\n");
			return 1;
		}
		slot = c.level;
	}
	set_seats(slot, 1u << 30);
	set_response(slot, SLUICE_RESP_QUEUE);
	len = syn(frame, 60000, 8080, TH_SYN);
	t_defer = run_repeat(sl_fd, frame, len, REPEAT);
	/* A RST rewrites the frame in place, so a repeated run would see the
	 * RST, not the SYN: one run per call, floor subtracted as above. */
	set_response(slot, SLUICE_RESP_REJECT);
	t_rst = 0;
	for (unsigned i = 0; i < n; i++)
		t_rst += run_repeat(sl_fd, frame, len, 1);
	t_rst = t_rst / n - t_pass1 + t_pass;

	printf("XDP cost per packet (BPF_PROG_TEST_RUN, %d repeats; admission: %u distinct SYNs)\n", REPEAT, n);
	printf("config: %s (%zu table entries)\n\n", config, plan.classes.n_entries);
	printf("%-40s %9s %12s\n", "program / path", "ns/pkt", "vs parse");
	printf("%-40s %9.1f %12s\n", "xdp_pass (empty program)", t_pass, "-");
	printf("%-40s %9.1f %12s\n", "parse_pass (sluice parser, then pass)", t_parse, "1.00x");
	printf("%-40s %9.1f %11.2fx\n", "sluice_xdp: non-SYN (ACK)", t_ack, t_ack / t_parse);
	printf("%-40s %9.1f %11.2fx\n", "sluice_xdp: SYN retransmit (tracked)", t_retx, t_retx / t_parse);
	printf("%-40s %9.1f %11.2fx\n", "sluice_xdp: SYN deferred (level full)", t_defer, t_defer / t_parse);
	t_admit = t_admit - t_pass1 + t_pass;
	printf("%-40s %9.1f %11.2fx\n", "sluice_xdp: SYN rejected (RST built) *", t_rst, t_rst / t_parse);
	printf("%-40s %9.1f %11.2fx\n", "sluice_xdp: SYN admitted inline *", t_admit, t_admit / t_parse);
	printf("\n* one run per call (the path changes the state it runs on); the per-call\n"
	       "  timer floor (%.1f ns, measured with xdp_pass the same way) is subtracted\n"
	       "  and the empty program's repeated cost added back, like with like.\n", t_pass1);
	sl_plan_free(&plan);
	sl_config_free(cfg);
	sl_diags_free(&d);
	bpf_object__close(pass_obj);
	bpf_object__close(parse_obj);
	sluice__destroy(skel);
	return 0;
}
