/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Inside the daemon's admission (daemon/admission.c, which decides;
 * adm_carry.c, which carries the verdicts out; adm_configure.c,
 * adm_stall.c, level_rt.c, adm_report.c): the state they share.  Not for anyone else: the rest of
 * the daemon goes through admission.h.
 */
#ifndef SLUICE_ADMISSION_INT_H
#define SLUICE_ADMISSION_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "daemon/flow_metrics.h"
#include "dataplane/dataplane.h"
#include "dataplane/pinned_maps.h"
#include "engine/borrowing.h"
#include "engine/demand.h"
#include "engine/held.h"
#include "engine/limits.h"
#include "engine/pending.h"
#include "engine/queueset.h"
#include "engine/stall.h"

#define PENDING_CAPACITY  65536
/* G, the guessed seat-holding time of a dispatched connection: it holds
 * its seats from the dispatch (the admit ticket), through the client's
 * retransmit (up to a second later), until it closes. */
#define GUESS_NS          (1000ULL * 1000000ULL)
#define SWEEP_INTERVAL_NS 1000000000ULL

/* Why a deferred connection waits for its retransmit (a ticket) instead
 * of having its SYN held and re-injected. */
enum sl_fallback {
	SL_FALLBACK_NO_FRAME, /* the event carried none (longer than SLUICE_FRAME_MAX) */
	SL_FALLBACK_UNPARSED, /* not a SYN we can re-check (a routing header, ...) */
	SL_FALLBACK_CHECKSUM, /* corrupt: neither right nor a pseudo-header sum */
	SL_FALLBACK_BUDGET,   /* heldSyns budget full (or no memory to hold it) */
	SL_FALLBACK_INJECT,   /* re-injection failed (device gone, ...) */
	SL_FALLBACK_N,
};

/* The flows that held seats of a level when it was found stalled, sorted
 * (adm_stall.c adm_stall_step). */
struct seat_flows {
	const struct sl_admission *adm;
	unsigned level;
	uint64_t *hash;
	size_t n, cap;
	bool incomplete; /* the walk was cut short: every flow counts as holding */
	bool collecting; /* the walk goes on at the next tick (cur) */
	struct sl_conns_cursor cur;
};

struct level_rt {
	struct sl_admission *adm;
	unsigned slot;
	bool active;            /* in the current configuration */
	char name[SLUICE_LEVEL_NAME_LEN];
	enum sl_level_type type;
	enum sl_limit_response response;
	uint64_t wait_limit_ns; /* queueWaitLimit */
	uint64_t delay_target_ns, delay_interval_ns; /* queueDelayTarget, queueDelayInterval */
	struct sl_qs *qs;       /* Queue-type levels (and ones draining) */
	struct sl_level_limits lim;
	uint32_t current_cl;    /* after borrowing */
	uint64_t dispatched_seats;  /* seats held by connections we dispatched */
	uint64_t dispatched_total; /* seats dispatched on admit tickets, cumulative */
	/* Of dispatched connections that closed: how long the ticket waited
	 * for its claim and how long the connection then held its seats
	 * (moving averages, ns; 0 = no sample yet): lr_overbook_cap(). */
	double claim_delay_ns, hold_ns;
	struct sl_demand demand;
	uint64_t tickets_admit, tickets_reject;
	uint64_t reinjected;    /* held SYNs put back into the stack on dispatch */
	uint64_t reset_sent;    /* held SYNs answered with their RST on reject */
	uint64_t released_unseated; /* deferred at the SYN, dispatched once the level seated at
				     * the ACK: let through without a seat (held SYN injected) */
	uint64_t fallback[SL_FALLBACK_N]; /* deferrals that went the ticket way, by why */
	/* The data path's count of served closes and their log2 lifetimes
	 * (sluice_level_stats) at the last tick: the stall rule's samples are
	 * what came since. */
	uint64_t seen_served, seen_served_log2;
	struct sl_stall stall;  /* full while nothing closes (engine/stall.h) */
	uint64_t dropped_gone;  /* held SYNs dropped at their turn: the client had gone */
	/* Waiters started by a close, and of them, those started within a
	 * millisecond of it (the close's time in the data path to the
	 * daemon's dispatch): what the close events' wake-ups buy. */
	uint64_t after_close, after_close_1ms;
	uint64_t settling_close_ns; /* the close being settled, while it is (0: none) */
	uint64_t stalls;        /* times its waiters were refused for it */
	struct seat_flows stall_flows; /* the flows holding seats, walked once per stall episode */
};

struct sl_admission {
	struct sl_dataplane *dp;
	const struct sl_config *cfg;
	uint8_t hash_key[16];
	struct level_rt levels[SLUICE_MAX_LEVELS];
	struct sl_pending_table *pending;
	struct sl_policies *policies; /* the load-scheduler gate, or NULL */
	uint32_t server_cl;
	double overbooking;     /* Server spec.ticketOverbooking */
	uint64_t borrow_period_ns, last_borrow_ns, last_sweep_ns;
	uint64_t now;           /* of the tick in progress (for callbacks) */
	uint64_t clock_ns;      /* the latest reading an entry point was given (adm_clock) */
	struct sl_borrow_result last_borrow;
	struct sl_held *held;   /* the held SYN frames of waiting connections */
	uint64_t events_lost, events_lost_read_ns; /* the data path's, as read at a tick */
	struct sl_flow_metrics flows; /* per FlowSchema (adm_report.c renders them) */
	/* Per schema index, from the last complete walk of sl_conns. */
	uint32_t *executing, *executing_seats;
	size_t n_executing;
	/* Waiting in a level past its bound counted from the first deferral
	 * (a tick's sweep collects them, then refuses them). */
	uint64_t *late;
	size_t n_late, late_cap;
};

/* ---- level runtime (level_rt.c) ----------------------------------------------- */

uint64_t lr_seats_in_use(const struct level_rt *l);
uint64_t lr_unclaimed(const struct level_rt *l);
/* How far the QueueSet may dispatch beyond the limit while tickets wait
 * for their claim (see level_rt.c). */
uint64_t lr_overbook_cap(const struct level_rt *l);
void lr_ewma(double *avg, double sample);
/* A level after anything moved its seats or waiters, in three steps
 * (adm_level_settle): the QueueSet gets the level's capacity
 * (lr_give_capacity), the caller takes what it dispatched, then the data
 * path and the clocks learn the result (lr_publish). */
/* The admission's clock never goes back.  The loop stamps each event as it
 * handles it, and reads the clock for a tick before it drains the ring
 * buffer: a tick's reading can be older than the arrivals it then judges,
 * and "now - arrival" would wrap to centuries (a waiter refused at once as
 * late).  Every entry point takes its time through here. */
static inline uint64_t adm_clock(struct sl_admission *adm, uint64_t now)
{
	if (now < adm->clock_ns)
		return adm->clock_ns;
	adm->clock_ns = now;
	return now;
}

void lr_give_capacity(struct level_rt *l, uint64_t now);
void lr_publish(struct level_rt *l, uint64_t now);
/* The lifetimes the data path counted for the level since the last call,
 * into its stall rule (sample false: only note where the count stands, as
 * a new level does). */
void lr_take_lifetimes(struct level_rt *l, bool sample);
void lr_write_limit(struct sl_admission *adm, struct level_rt *l);
/* The borrowing allocation over the active levels; period_end: the
 * periodic run, which closes the demand statistics' period first.
 * Returns the levels whose limit changed, one bit per slot: the caller
 * settles them. */
uint64_t lr_borrow(struct sl_admission *adm, uint64_t now, bool period_end);
void lr_qs_config_of(const struct sl_level_cfg *lc, struct sl_qs_config *qc);

/* ---- admission.c's, for its rooms ------------------------------------------------ */

/* APF's flow of a connection: its FlowSchema and distinguisher. */
uint64_t adm_flow_hash(const struct sl_admission *adm, unsigned schema,
		       const struct sluice_conn_key *key);
/* The QueueSet removed a waiting request: refuse its connection now (a
 * RST from its held SYN), counted by why. */
void adm_refuse_removed(struct level_rt *l, uint64_t id, enum sl_reject_reason why);
/* A level after anything moved its seats or waiters: capacity for its
 * QueueSet, what that starts admitted, the result published. */
void adm_level_settle(struct level_rt *l, uint64_t now);
/* adm_level_settle for each level whose bit is set (lr_borrow's result). */
void adm_settle_levels(struct sl_admission *adm, uint64_t changed, uint64_t now);

/* ---- adm_carry.c: carrying out the verdicts ---------------------------------------- */

/* The connection's per-FlowSchema series, and how long it has waited. */
struct sl_flow_series *adm_series_of(struct sl_admission *adm, const struct sl_pending *p);
double adm_waited_s(const struct sl_pending *p, uint64_t now);
/* A deferred connection is done with: its record and its held frame. */
void adm_forget(struct sl_admission *adm, struct sl_pending *p);
/* Keep a deferral's frame with its connection, its TCP checksum made
 * whole (without one it queues all the same, and its retransmit claims a
 * ticket). */
void adm_hold_frame(struct sl_admission *adm, const struct sl_pending *p,
		    const struct sluice_defer_event *de);
/* Its policy admitted it; what the policy gave goes back if it is refused
 * or dropped after (Aperture's tokens, or sluice's slot). */
void adm_policy_admitted(struct sl_admission *adm, struct sl_pending *p, uint64_t now);
void adm_policy_give_back(struct sl_admission *adm, struct sl_pending *p, uint64_t now);
/* Admit: its held SYN back in with its record, else its seats reserved
 * (unless already) and a ticket for its retransmit; a gone client's is
 * dropped, an unproved one released unseated. */
void adm_admit(struct level_rt *l, struct sl_pending *p, uint64_t now, bool reserved);
/* Refuse: its RST from its held SYN, else a reject ticket. */
void adm_reject(struct level_rt *l, struct sl_pending *p, uint64_t now, enum sl_reject_reason why);

/* ---- adm_stall.c: the stall verdict ---------------------------------------------- */

/* What the verdict does through admission, which calls it (so that the
 * stall room calls nothing of admission's back). */
struct adm_stall_hooks {
	/* the flow a connection holding the level's seats belongs to */
	uint64_t (*flow_hash)(const struct sl_admission *adm, unsigned schema,
			      const struct sluice_conn_key *key);
	/* a waiter the verdict removed: refuse it now */
	void (*refuse)(struct level_rt *l, uint64_t id);
};

/* The level's stall verdict, when one is due: how many waiters it
 * refused (the caller then settles the level). */
size_t adm_stall_step(struct level_rt *l, uint64_t now, const struct adm_stall_hooks *h);

#endif
