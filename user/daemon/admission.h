/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Priority and fairness for deferred connections (the daemon's side of
 * Kubernetes APF): one QueueSet per Queue-type priority level, fed by the
 * data path's deferral events, each with the SYN's frame, which is held.
 * Dispatch records the connection as admitted and re-injects its SYN (or,
 * without a held SYN, reserves seats and writes an admit ticket for the
 * 4-tuple, which the client's SYN retransmit claims); queue full and
 * wait-limit time-outs answer a held SYN with its RST (or write a reject
 * ticket).  Completions (sock_ops close events) return the real service
 * time to the QueueSet.  Every 10 s the borrowing allocator moves seats
 * between levels by measured demand.
 *
 * It owns the engines (queueset, borrowing, pending, held) and writes to
 * the data path only through dataplane/ledger.h, dataplane/settings.h and dataplane/inject.h.
 */
#ifndef SLUICE_ADMISSION_H
#define SLUICE_ADMISSION_H

#include <stdint.h>
#include <stdio.h>

#include "config/config.h"
#include "dataplane/dataplane.h"
#include "engine/plan.h"

/*
 * How long a ticket waits for its claim.  A client retransmits its SYN at
 * least once a second early on (lib/syn_retransmit.h).  So the claim is due at the
 * earlier of "one second after the dispatch" and the next doubling-schedule
 * retransmit; a ticket still unclaimed SL_TICKET_SLACK_NS later belongs to
 * a client that gave up (or retransmits slower, and is queued again), and
 * its seats go back at once instead of idling.  Reject tickets (no seats)
 * live SL_TICKET_TTL_NS.
 */
#define SL_TICKET_SLACK_NS (300ULL * 1000000ULL)
#define SL_TICKET_TTL_NS   (35ULL * 1000000000ULL)

struct sl_admission;

/* When admission next needs the loop between ticks (a level that may be
 * stalled: engine/stall.h), CLOCK_MONOTONIC ns; UINT64_MAX for none.  The
 * loop wakes then and calls sl_adm_deadlines. */
uint64_t sl_adm_next_deadline(const struct sl_admission *adm);
void sl_adm_deadlines(struct sl_admission *adm, uint64_t now);

int sl_adm_create(struct sl_admission **out, struct sl_dataplane *dp, const uint8_t hash_key[16],
		  uint64_t now);
void sl_adm_free(struct sl_admission *adm);

/* A limited level's current limit (0: none, or exempt): a reload's plan
 * carries it, so the data path never sees NominalCL in between. */
uint32_t sl_adm_level_limit(const struct sl_admission *adm, unsigned slot);
/* Where a level seats now (SLUICE_LVL_SEAT_AT_ACK in its flags): its
 * connections then wait on their clients' retransmits, which its stall
 * rule must not take for a deadlock (engine/stall.h). */
void sl_adm_level_seating(struct sl_admission *adm, unsigned slot, uint32_t flags);
/* (Re)configure after a plan was applied: new levels get a QueueSet,
 * changed ones follow Kubernetes queueset.go setConfiguration, removed ones drain.  The
 * configuration must outlive the next configure call. */
int sl_adm_configure(struct sl_admission *adm, const struct sl_config *cfg,
		     const struct sl_plan *plan, uint64_t now);

/* A SYN the data path deferred (SLUICE_EV_DEFER): through its policy's
 * scheduler, if any, then its level. */
void sl_adm_defer(struct sl_admission *adm, const struct sluice_defer_event *de, uint64_t now);
/* A tracked connection closed (SLUICE_EV_CLOSE): its seats came back.
 * Returns how long it waited in its level's queue after its policy
 * admitted it, until its dispatch (0: at once, or no policy). */
uint64_t sl_adm_close(struct sl_admission *adm, const struct sluice_event *ev, uint64_t now);
void sl_adm_tick(struct sl_admission *adm, uint64_t now);

/* The load-scheduler gate: deferred connections a policy selects meet
 * their policy's scheduler first, then their level (both must admit). */
struct sl_policies;
struct sl_policy_hooks;
void sl_adm_set_policies(struct sl_admission *adm, struct sl_policies *ps);
/* The callbacks sl_policies_create needs to hand decided flows back. */
void sl_adm_policy_hooks(struct sl_admission *adm, struct sl_policy_hooks *h);

/* The borrowing period (10 s by default; tests shorten it). */
void sl_adm_set_borrow_period(struct sl_admission *adm, uint64_t period_ns);

/* What the last walk of the connection table counted per FlowSchema
 * (dataplane/expiry.h); a partial walk is ignored. */
struct sl_conn_census;
void sl_adm_census(struct sl_admission *adm, const struct sl_conn_census *c);

/* Prometheus text for the metrics listener: per level gauges and counters. */
void sl_adm_metrics(struct sl_admission *adm, FILE *f);

/* `hand SCHEMA=DISTINGUISHER`: the flow's hash with the daemon's per-boot
 * key and the queues its level deals it, as one JSON object
 * {"ok", "flow_schema", "priority_level", "distinguisher", "hash",
 * "queues", "hand"}; or -ENOENT with why (no such FlowSchema). */
int sl_adm_hand(struct sl_admission *adm, FILE *f, const char *schema, const char *dist,
		const char **why);

/* JSON dumps for sluicectl: "levels", "queues" and "flows" (level NULL:
 * every level).  sl_adm_dump writes it whole; a dump of many queues is
 * also written in parts: begin writes the first (NULL when that was all),
 * next each following one until it returns false; free at any point. */
void sl_adm_dump(struct sl_admission *adm, FILE *f, const char *what, const char *level);
struct sl_adm_dump;
struct sl_adm_dump *sl_adm_dump_begin(struct sl_admission *adm, FILE *f, const char *what,
				      const char *level);
bool sl_adm_dump_next(struct sl_adm_dump *d, FILE *f);
void sl_adm_dump_free(struct sl_adm_dump *d);

#endif
