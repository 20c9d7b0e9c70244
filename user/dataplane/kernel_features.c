// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The kernel features sluice uses, probed.  See kernel_features.h. */
#include "dataplane/kernel_features.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <string.h>
#include <unistd.h>

#include "dataplane/xdp_features.h"
#include "lib/cgroup_path.h"
#include "sluice.skel.h"

const struct sl_feature sl_features[SL_FEAT__COUNT] = {
	[SL_FEAT_BTF] = {"BPF type information (/sys/kernel/btf/vmlinux)", "5.4", NULL},
	[SL_FEAT_CGROUP2] = {"cgroup v2, for sock_ops", "4.13", NULL},
	[SL_FEAT_HELPERS] = {"BPF ring buffer, bpf_loop, BPF timers in XDP", "5.17", NULL},
	[SL_FEAT_PROGRAMS] = {"sluice's programs pass the verifier", "6.1", NULL},
	[SL_FEAT_TCX] = {"tcx links for the refusal hand-off", "6.6",
			 "cls_bpf filters on a clsact qdisc: the same hand-off"},
	[SL_FEAT_XDP_FEATURES] = {"netdev xdp-features (does a device deliver XDP_TX?)", "6.3",
				  "XDP_TX unproven: refusals go by the tc hand-off"},
};

static enum sl_feature_state present_if(bool yes)
{
	return yes ? SL_FEAT_PRESENT : SL_FEAT_ABSENT;
}

static enum sl_feature_state probe_helpers(char *why, size_t len)
{
	static const struct { int id; const char *name; } helpers[] = {
		{BPF_FUNC_loop, "bpf_loop"},
		{BPF_FUNC_timer_init, "bpf_timer_init"},
		{BPF_FUNC_ringbuf_reserve, "bpf_ringbuf_reserve"},
	};

	int rb;

	/* Every supported kernel has XDP: a trivial one refused means this
	 * process may not load BPF, and the probes below would say "no". */
	if (libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_XDP, NULL) != 1) {
		snprintf(why, len, "cannot load any BPF program here: run as root");
		return SL_FEAT_UNKNOWN;
	}
	rb = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL);
	if (rb < 0) {
		snprintf(why, len, "cannot probe: %s%s", strerror(-rb),
			 rb == -EPERM ? " (run as root)" : "");
		return SL_FEAT_UNKNOWN;
	}
	if (rb == 0) {
		snprintf(why, len, "no ring buffer map");
		return SL_FEAT_ABSENT;
	}
	for (size_t i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++) {
		int rc = libbpf_probe_bpf_helper(BPF_PROG_TYPE_XDP, (enum bpf_func_id)helpers[i].id, NULL);

		if (rc < 0) {
			snprintf(why, len, "cannot probe %s: %s%s", helpers[i].name, strerror(-rc),
				 rc == -EPERM ? " (run as root)" : "");
			return SL_FEAT_UNKNOWN;
		}
		if (rc == 0) {
			snprintf(why, len, "no %s in XDP", helpers[i].name);
			return SL_FEAT_ABSENT;
		}
	}
	return SL_FEAT_PRESENT;
}

/* tcx: the kernel's own BTF names BPF_TCX_INGRESS among its attach types
 * (libbpf 1.1 and Debian 12's headers predate it: no compile-time guess). */
static enum sl_feature_state probe_tcx(char *why, size_t len)
{
	struct btf *btf = btf__load_vmlinux_btf();
	enum sl_feature_state st = SL_FEAT_ABSENT;
	const struct btf_type *t;
	__s32 id;

	if (!btf) {
		snprintf(why, len, "no kernel BTF to read attach types from");
		return SL_FEAT_UNKNOWN;
	}
	id = btf__find_by_name_kind(btf, "bpf_attach_type", BTF_KIND_ENUM);
	t = id > 0 ? btf__type_by_id(btf, (__u32)id) : NULL;
	for (__u16 i = 0; t && i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, btf_enum(t)[i].name_off), "BPF_TCX_INGRESS"))
			st = SL_FEAT_PRESENT;
	btf__free(btf);
	return st;
}

static enum sl_feature_state probe_programs(char *why, size_t len)
{
	struct sluice *skel = sluice__open();
	int err;

	if (!skel) {
		snprintf(why, len, "cannot open the object: %s", strerror(errno));
		return SL_FEAT_UNKNOWN;
	}
	err = sluice__load(skel);
	sluice__destroy(skel);
	if (!err)
		return SL_FEAT_PRESENT;
	if (err == -EPERM || err == -EACCES) {
		snprintf(why, len, "not allowed to load BPF (%s): run as root", strerror(-err));
		return SL_FEAT_UNKNOWN;
	}
	snprintf(why, len, "the kernel refused them: %s (sluiced -v says which and why)", strerror(-err));
	return SL_FEAT_ABSENT;
}

void sl_features_probe(struct sl_feature_probe *p, bool load_programs)
{
	/* The table says what failed; libbpf's own lines would only repeat it. */
	libbpf_print_fn_t libbpf_print = libbpf_set_print(NULL);
	struct sl_genl_netdev genl = {.fd = -1};
	char cg[256];

	memset(p, 0, sizeof(*p));
	p->state[SL_FEAT_BTF] = present_if(!access("/sys/kernel/btf/vmlinux", R_OK));
	p->state[SL_FEAT_CGROUP2] = present_if(!sl_cgroup2_root(cg, sizeof(cg)));
	p->state[SL_FEAT_HELPERS] = probe_helpers(p->detail[SL_FEAT_HELPERS], sizeof(p->detail[0]));
	p->state[SL_FEAT_TCX] = probe_tcx(p->detail[SL_FEAT_TCX], sizeof(p->detail[0]));
	if (sl_genl_netdev_open(&genl)) {
		p->state[SL_FEAT_XDP_FEATURES] = SL_FEAT_UNKNOWN;
		snprintf(p->detail[SL_FEAT_XDP_FEATURES], sizeof(p->detail[0]), "no generic netlink");
	} else {
		p->state[SL_FEAT_XDP_FEATURES] = present_if(genl.family);
	}
	sl_genl_netdev_close(&genl);
	if (load_programs)
		p->state[SL_FEAT_PROGRAMS] = probe_programs(p->detail[SL_FEAT_PROGRAMS],
							    sizeof(p->detail[0]));
	else
		p->state[SL_FEAT_PROGRAMS] = SL_FEAT_UNKNOWN;
	libbpf_set_print(libbpf_print);
}

bool sl_features_sufficient(const struct sl_feature_probe *p)
{
	for (int i = 0; i < SL_FEAT__COUNT; i++)
		if (!sl_features[i].without && p->state[i] != SL_FEAT_PRESENT)
			return false;
	return true;
}

void sl_features_print(FILE *f, const struct sl_feature_probe *p, const char *kernel)
{
	static const char *const word[] = {"no", "yes", "unknown"};

	fprintf(f, "Linux %s\n%-52s %-6s %-8s %s\n", kernel, "FEATURE", "SINCE", "HERE", "WITHOUT IT");
	for (int i = 0; i < SL_FEAT__COUNT; i++) {
		const struct sl_feature *ft = &sl_features[i];

		fprintf(f, "%-52s %-6s %-8s %s", ft->name, ft->since, word[p->state[i]],
			ft->without ? ft->without : "sluice cannot run");
		if (p->detail[i][0])
			fprintf(f, " (%s)", p->detail[i]);
		fputc('\n', f);
	}
	if (sl_features_sufficient(p))
		fprintf(f, "sluice can protect this host%s.\n",
			p->state[SL_FEAT_TCX] == SL_FEAT_PRESENT &&
				p->state[SL_FEAT_XDP_FEATURES] == SL_FEAT_PRESENT ? "" :
				", by the ways named above where a feature is missing");
	else
		fprintf(f, "sluice cannot protect this host: a feature it cannot do without is "
			   "missing or could not be checked (above).\n");
}

void sl_features_print_markdown(FILE *f)
{
	fprintf(f, "| Feature | Kernel | Without it |\n|---|---|---|\n");
	for (int i = 0; i < SL_FEAT__COUNT; i++)
		fprintf(f, "| %s | %s | %s |\n", sl_features[i].name, sl_features[i].since,
			sl_features[i].without ? sl_features[i].without : "sluice cannot run");
}
