/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the configuration loader's tests share: YAML heads that put a field
 * on a known line and column, loaders that assert the diagnostics, the
 * table of bad examples and the runner that makes each row one test.
 */
#ifndef SLUICE_TEST_CONFIG_HELPERS_H
#define SLUICE_TEST_CONFIG_HELPERS_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "config/config.h"
#include "config/diag.h"
#include "config/duration.h"
#include "config/yaml_doc.h"

#define MS  ((uint64_t)MSEC) /* SEC and the other units: config/duration.h */

/* ---- YAML heads ------------------------------------------------------------- */

#define API "apiVersion: sluice/v1\n"
/* Server/main, spec body from line 5 */
#define SRV API "kind: Server\nmetadata: {name: main}\nspec:\n"
/* PriorityLevelConfiguration/<name>, spec body from line 5 */
#define PLN(name) API "kind: PriorityLevelConfiguration\nmetadata: {name: " name "}\nspec:\n"
#define PL PLN("web")
#define SRV_OBJ "Server/main"
#define PL_OBJ "PriorityLevelConfiguration/web"
/* Limited + Queue level: queuing fields from line 10, values at column
 * 9 + strlen(key) + 2 */
#define QUEUE PL "  type: Limited\n  limited:\n    limitResponse:\n      type: Queue\n      queuing:\n"
#define QPATH "spec.limited.limitResponse.queuing."

/* FlowSchema/<name>, spec body from line 5 */
#define FSN(name) API "kind: FlowSchema\nmetadata: {name: " name "}\nspec:\n"
#define FS_OBJ "FlowSchema/web"
/* FlowSchema/web to catch-all: one more field on line 6 */
#define FSP FSN("web") "  priorityLevelConfiguration: {name: catch-all}\n"
#define RULES_ANY "  rules: [{subjects: [{kind: Network, network: {cidrs: [0.0.0.0/0]}}], destinations: [{}]}]\n"
/* FlowSchema/web to catch-all: rules from line 7 */
#define FSR FSP "  rules:\n"
/* One rule whose subjects list (line 7, column 16) is given; any destination */
#define SUBJ(x) FSR "  - subjects: [" x "]\n    destinations: [{}]\n"
/* A Network subject: its first CIDR is at column 50 in SUBJ */
#define NET(x) "{kind: Network, network: {cidrs: [" x "]}}"
/* One rule, any subject, destinations list (line 8, column 20) given */
#define DEST(x) FSR "  - subjects: [{kind: Network, network: {cidrs: [0.0.0.0/0]}}]\n    destinations: [" x "]\n"
#define RULE0 "spec.rules[0]."
/* The mandatory exempt FlowSchema restated (precedence line 6, rules line 8) */
#define EXEMPT_FS(prec, level, cidrs) FSN("exempt") "  priorityLevelConfiguration: {name: " level "}\n" \
	"  matchingPrecedence: " prec "\n  rules:\n" \
	"  - subjects: [{kind: Network, network: {cidrs: [" cidrs "]}}]\n    destinations: [{}]\n"
/* ConnectionLabels/tiers: rules from line 6 */
#define CLN(name) API "kind: ConnectionLabels\nmetadata: {name: " name "}\nspec:\n  rules:\n"
#define CL CLN("tiers")
#define CL_OBJ "ConnectionLabels/tiers"
/* AverageLatencySchedulingPolicy/<name>, spec body from line 5 */
#define POLN(name) API "kind: AverageLatencySchedulingPolicy\nmetadata: {name: " name "}\nspec:\n"
#define POL_OBJ "AverageLatencySchedulingPolicy/p"
/* aimd_load_scheduler fields from line 7 (indent 6); AIMD_END adds the
 * required load_scheduler with one selector (2 lines) */
#define AIMD POLN("p") "  load_scheduling_core:\n    aimd_load_scheduler:\n"
#define AIMD_END "      load_scheduler:\n        selectors: [{}]\n"
#define AP "spec.load_scheduling_core.aimd_load_scheduler."
/* load_scheduler fields from line 8 (indent 8) */
#define LSCH AIMD "      load_scheduler:\n"
#define LP AP "load_scheduler."
#define SP LP "selectors[0]."
/* selector 0 with more fields from line 10 (indent 10) */
#define SEL LSCH "        selectors:\n        - control_point: ingress\n"
/* one selector; scheduler fields from line 10 (indent 10) */
#define SCHED LSCH "        selectors: [{}]\n        scheduler:\n"
#define SCP LP "scheduler."
/* a minimal policy; spec-level (sluice) fields from line 9 */
#define POLSPEC AIMD AIMD_END
#define POLICY POLSPEC

#define LONG64 "a234567890123456789012345678901234567890123456789012345678901234"
#define LONG107 LONG64 "a234567890123456789012345678901234567890123"


/* ---- loaders that assert -------------------------------------------------------- */

/* The fixture directory: $SLUICE_TEST_DATA, default tests/unit/configs. */
const char *data_dir(void);
void fixture(char *buf, size_t size, const char *name);
/* Load YAML as file "t.yaml". */
int load(const char *yaml, struct sl_config **cfg, struct sl_diags *d);
/* Loads YAML that must load without any diagnostic. */
struct sl_config *load_ok(const char *yaml);
/* Loads YAML that must load with exactly n_warn warnings and no error. */
struct sl_config *load_warned(const char *yaml, size_t n_warn);
void check_diag(const struct sl_diag *g, enum sl_severity sev, unsigned line, unsigned col,
		const char *object, const char *path, const char *msg);
/* The YAML must produce exactly one diagnostic, as described.  An error
 * fails the load (-EINVAL, no config); a warning does not. */
void expect_one(const char *yaml, enum sl_severity sev, unsigned line, unsigned col,
		const char *object, const char *path, const char *msg);
/* What fn wrote, as a malloc'd string. */
char *read_stream(void (*fn)(const struct sl_diags *, FILE *), const struct sl_diags *d);
/* "a.b.c.d/n" or "x::/n" as stored: v4-mapped, prefix 96 + n for IPv4 */
void check_cidr(const struct sl_cidr *c, const char *addr, unsigned plen);
/* The mandatory objects every configuration has (Kubernetes bootstrap/default.go). */
void check_mandatory(const struct sl_config *cfg);

/* ---- bad examples ------------------------------------------------------------------ */

/* A YAML that must produce exactly one error, at this line and column, in
 * this object and path, with this part of the message. */
struct bad_case {
	const char *name;
	const char *yaml;
	unsigned line, col;
	const char *object, *path, *msg;
};

/* Run the fixed tests, then one test per bad case.  main()'s return value. */
int run_config_suite(const char *name, const struct CMUnitTest *fixed, size_t n_fixed,
		     const struct bad_case *bad, size_t n_bad);

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

#endif
