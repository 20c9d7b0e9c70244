/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The reference classifier (pure): which FlowSchema, priority level,
 * policy and workload a connection belongs to, and why.  The data path's
 * compiled tables (class_compiler.h) are built from this code, `sluicectl
 * explain` prints it, and the differential test holds BPF to it.
 */
#ifndef SLUICE_CLASSIFIER_H
#define SLUICE_CLASSIFIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "lib/labels.h"

struct sl_conn_tuple {
	uint8_t saddr[16]; /* client, v4-mapped for IPv4 */
	uint8_t daddr[16]; /* local */
	uint16_t sport;    /* host order */
	uint16_t dport;    /* host order */
	const char *iface; /* NULL: "" */
};

#define SL_NONE ((size_t)-1)

struct sl_class_result {
	size_t schema;      /* index into cfg->schemas; SL_NONE if nothing matched */
	size_t rule;        /* which rule, subject and destination matched */
	size_t subject;
	size_t destination;
	size_t level;       /* index into cfg->levels (SL_NONE with schema) */
	size_t policy;      /* index into cfg->policies, SL_NONE if no policy selects it */
	size_t workload;    /* index into the policy's workloads; SL_NONE: default workload */
	size_t also_policy; /* a second policy whose selectors match too, SL_NONE if none
			     * (Aperture would run both; the compiler refuses it) */
};

bool sl_cidr_contains(const struct sl_cidr *c, const uint8_t addr[16]);
bool sl_addr_is_v4(const uint8_t addr[16]);
/* A loopback address (127.0.0.0/8 v4-mapped, ::1): what the XDP program
 * passes before classifying (bpf/sluice.bpf.c loopback_source), since XDP
 * never runs on lo and such a source on a device is spoofed. */
bool sl_addr_is_loopback(const uint8_t addr[16]);
/* Every address of the CIDR is loopback: a source rule on it can never
 * match a SYN the data path classifies. */
bool sl_cidr_is_loopback(const struct sl_cidr *c);
/* "198.18.7.0/24", "fd00::/8". */
const char *sl_cidr_format(const struct sl_cidr *c, char *buf, size_t len);

/* The connection's labels: built-ins, then ConnectionLabels rules in order
 * (a later rule overrides an earlier one for the same key).  0 or -ENOMEM. */
int sl_conn_labels(const struct sl_config *cfg, const struct sl_conn_tuple *t,
		   struct sl_labels *out);

/* Classify with labels from sl_conn_labels. */
void sl_classify(const struct sl_config *cfg, const struct sl_conn_tuple *t,
		 const struct sl_labels *labels, struct sl_class_result *out);

/* The flow distinguisher value of a connection under a schema:
 * "198.18.7.0/24" (BySource with prefixLength 24), "198.18.0.1" (ByDestination),
 * "" (none). */
const char *sl_flow_distinguisher(const struct sl_flow_schema *fs, const struct sl_conn_tuple *t,
				  char *buf, size_t len);

#endif
