/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Classification of a connection with the tables the daemon compiled
 * (sluice_abi.h, sluice_class.h): class ids by address and port, then a
 * tuple space search over the masks in use.
 */
#ifndef SLUICE_BPF_CLASSIFY_H
#define SLUICE_BPF_CLASSIFY_H

#include "maps.h"
#include "parse.h"
#include "sluice_class.h"

/* The masks (a set of mask numbers, as in sluice_settings.masks) that test
 * each dimension: mask m tests dimension d when m & d. */
#define MASKS_TESTING_SRC   0xAAAA /* m & SLUICE_DIM_SRC (1) */
#define MASKS_TESTING_DST   0xCCCC /* m & SLUICE_DIM_DST (2) */
#define MASKS_TESTING_SPORT 0xF0F0 /* m & SLUICE_DIM_SPORT (4) */
#define MASKS_TESTING_DPORT 0xFF00 /* m & SLUICE_DIM_DPORT (8) */
_Static_assert(SLUICE_DIM_SRC == 1 && SLUICE_DIM_DST == 2 && SLUICE_DIM_SPORT == 4 &&
	       SLUICE_DIM_DPORT == 8 && SLUICE_MASKS == 16, "the masks above");

/* Classify a connection (its SYN, or its handshake's ACK) with the tables
 * the daemon compiled: up to four O(1) lookups give the class ids, then
 * one hash lookup per mask in use finds the lowest-ranked schema and
 * policy candidates under them (sluice_abi.h).
 * The result is built in *out.  A subprogram of its own: its keys would
 * otherwise share the deciding function's frame, and that frame, build_rst's
 * and the XDP program's together must fit the 512 bytes of BPF stack. */
static __noinline void
classify(const struct sluice_settings *cfg, const struct syn_pkt *p, struct sluice_class *out)
{
	const struct sluice_class *c;
	struct sluice_lpm_key lk;
	struct sluice_class_key ck, k; /* ck: the SYN's class ids; k: the key under one mask */
	struct sluice_lpm_val *lv;
	struct sluice_class_best best;
	__u32 base, idx, *pc;
	__u8 gen = cfg->generation & 1;
	__u16 used = cfg->masks;

	/* Field by field: an initialiser would become a .rodata template,
	 * an extra map that bpftool and the pin layout do not want. */
	__builtin_memset(&lk, 0, sizeof(lk));
	__builtin_memset(&ck, 0, sizeof(ck));
	__builtin_memset(&k, 0, sizeof(k));
	lk.prefixlen = SLUICE_LPM_FULL;
	lk.gen = gen;
	/* A dimension no entry tests needs no lookup (its class id is only
	 * read under a mask that tests it): the tries are the costly part of
	 * a SYN, and most configurations never name a local address. */
	if (used & MASKS_TESTING_SRC) {
		__builtin_memcpy(lk.addr, p->key.saddr, 16);
		lv = bpf_map_lookup_elem(&sl_src_cls, &lk);
		ck.src = lv ? (__u16)lv->cls : 0;
	}
	if (used & MASKS_TESTING_DST) {
		__builtin_memcpy(lk.addr, p->key.daddr, 16);
		lv = bpf_map_lookup_elem(&sl_dst_cls, &lk);
		ck.dst = lv ? (__u16)lv->cls : 0;
	}

	base = (__u32)gen * 2 * 65536;
	if (used & MASKS_TESTING_SPORT) {
		idx = base + SLUICE_PORT_SRC * 65536 + bpf_ntohs(p->key.sport);
		pc = bpf_map_lookup_elem(&sl_port_cls, &idx);
		ck.sport = pc ? (__u16)*pc : 0;
	}
	if (used & MASKS_TESTING_DPORT) {
		idx = base + SLUICE_PORT_DST * 65536 + bpf_ntohs(p->key.dport);
		pc = bpf_map_lookup_elem(&sl_port_cls, &idx);
		ck.dport = pc ? (__u16)*pc : 0;
	}

	/* Tuple space search: one lookup per mask in use; each entry may
	 * better the schema half, the policy half or both. */
	sluice_class_begin(out, &cfg->default_class, &best);
	for (__u32 m = 1; m < SLUICE_MASKS; m++) {
		if (!(used & (1u << m)))
			continue;
		k.src = (m & SLUICE_DIM_SRC) ? ck.src : 0;
		k.dst = (m & SLUICE_DIM_DST) ? ck.dst : 0;
		k.sport = (m & SLUICE_DIM_SPORT) ? ck.sport : 0;
		k.dport = (m & SLUICE_DIM_DPORT) ? ck.dport : 0;
		k.gen = gen;
		k.mask = (__u8)m;
		c = bpf_map_lookup_elem(&sl_classes, &k);
		if (c)
			sluice_class_consider(out, c, &best);
	}
}

#endif /* SLUICE_BPF_CLASSIFY_H */
