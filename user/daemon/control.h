/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The daemon's control socket: its protocol (both sides) and the socket's
 * set-up (adapter).  A Unix stream socket, mode 0600, in a directory that
 * belongs to the daemon's user and that nobody else may write.
 *
 * Protocol: one request line per connection, at most
 * SL_CONTROL_REQUEST_MAX bytes with its "\n"; the daemon answers with one
 * JSON object and closes.  Words match exactly (no prefixes):
 *
 *   levels [LEVEL]    SL_LEVELS_REPLY_KEYS, a LEVEL each: SL_LEVEL_KEYS
 *   queues [LEVEL]    SL_QUEUES_REPLY_KEYS, a QUEUE each: SL_QUEUE_KEYS
 *   flows  [LEVEL]    SL_FLOWS_REPLY_KEYS, a FLOW each: SL_FLOW_KEYS
 *   controller        {"policies":[..]}  (policy_rt.c's dump)
 *   hand SCHEMA=DIST  SL_HAND_KEYS: a flow's queues under the daemon's own
 *                     (per-boot) hash key
 *   reload            SL_PENDING_KEYS: started (or replacing the one
 *                     running); the outcome comes from
 *   reload-status N   the same, pending, until a reload covering request N
 *                     ended: SL_OUTCOME_KEYS
 *   shadow on|off     SL_OUTCOME_KEYS
 *
 * Anything else is answered with SL_OUTCOME_KEYS, "ok" false and the
 * reason in "message"; so is a change asked by anyone but the daemon's
 * user.  This file is the one contract: the key lists below are what both
 * sides name, and the writers of the change replies are here too.
 */
#ifndef SLUICE_CONTROL_H
#define SLUICE_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define SL_DEFAULT_CONTROL_SOCKET "/run/sluice/sluiced.sock"
#define SL_CONTROL_REQUEST_MAX    256

enum sl_control_cmd {
	SL_CTL_LEVELS,
	SL_CTL_QUEUES,
	SL_CTL_FLOWS,
	SL_CTL_CONTROLLER,
	SL_CTL_RELOAD,
	SL_CTL_SHADOW,
	SL_CTL_HAND,
	SL_CTL_RELOAD_STATUS,
};

struct sl_control_req {
	enum sl_control_cmd cmd;
	const char *word;  /* the request word, as in the table above */
	const char *arg;   /* LEVEL, "on"/"off", SCHEMA=DIST, N, or NULL */
};

/* Parse one request line (its "\n" stripped or not; the buffer is
 * modified).  0, or -EINVAL with *why saying what is wrong. */
int sl_control_parse(char *line, struct sl_control_req *out, const char **why);
/* The client's side: the request for cmd with its argument (NULL: none),
 * without its "\n" (sl_control_request adds it), checked by the same
 * parser the daemon runs.  0, -ENAMETOOLONG (its line over
 * SL_CONTROL_REQUEST_MAX, or len), or -EINVAL with why saying what the
 * daemon would refuse. */
int sl_control_format(char *buf, size_t len, enum sl_control_cmd cmd, const char *arg,
		      const char **why);

/* Listen on path.  Its directory is created 0700 when missing; an existing
 * one must be a directory owned by this user and writable by nobody else,
 * a socket left by a daemon that died is replaced, anything else at path
 * (a file, a live daemon's socket) is refused.  gid >= 0 (Server
 * spec.readGroup): the directory becomes 0750 and the socket 0660, both of
 * that group, whose members may then ask (the daemon answers changes only
 * to its own user: SL_CONTROL_CHANGES).  Returns the listening fd
 * (non-blocking) or a negative errno with why filled in. */
int sl_control_listen(const char *path, int gid, char *why, size_t why_len);
/* Whether a request changes the daemon (reload, shadow): for the daemon's
 * own user only; the read group gets the reports. */
#define SL_CONTROL_CHANGES(cmd) ((cmd) == SL_CTL_RELOAD || (cmd) == SL_CTL_SHADOW || \
				 (cmd) == SL_CTL_RELOAD_STATUS)

/* Client side: send request, read the whole answer into a malloc'd
 * string (*answer).  0 or a negative errno. */
int sl_control_request(const char *path, const char *request, char **answer);

/* ---- the replies' keys: both sides name them from here ----------------------
 *
 * Each list is one reply object's keys, all of them: the daemon writes
 * every key of its list and no other, sluicectl reads them by these names
 * (test_admission.c test_dump_keys_are_the_contract, test_control.c
 * test_change_replies_are_the_contract and test_policy_rt.c
 * test_controller_dump_is_the_contract fail when a reply and its list
 * disagree).  X(P, ID, "key"): P is the enum's prefix (SL_CTL_ENUM). */

/* `levels`: {"what":"levels","borrowing_regime","fair_prop","levels":[LEVEL]} */
#define SL_LEVELS_REPLY_KEYS(X, P) \
	X(P, WHAT, "what") X(P, BORROWING_REGIME, "borrowing_regime") X(P, FAIR_PROP, "fair_prop") \
	X(P, LEVELS, "levels")
/* One LEVEL: its limits, seats, counters, the bounds of a wait, its demand. */
#define SL_LEVEL_KEYS(X, P) \
	X(P, NAME, "name") X(P, TYPE, "type") X(P, ACTIVE, "active") \
	X(P, NOMINAL, "nominal") X(P, LENDABLE, "lendable") X(P, MIN, "min") X(P, MAX, "max") \
	X(P, LIMIT, "limit") X(P, SEATS_IN_USE, "seats_in_use") X(P, SEATS_DISPATCHED, "seats_dispatched") \
	X(P, SEATS_UNCLAIMED, "seats_unclaimed") X(P, OVERBOOK_CAP, "overbook_cap") \
	X(P, CLAIM_DELAY_MS, "claim_delay_ms") X(P, HOLD_MS, "hold_ms") X(P, WAITING, "waiting") \
	X(P, QUEUES, "queues") X(P, ADMITTED, "admitted") X(P, DEFERRED, "deferred") \
	X(P, REJECTED, "rejected") X(P, DISPATCHED_FROM_QUEUE, "dispatched_from_queue") \
	X(P, HELD_SYNS, "held_syns") X(P, HELD_SYN_BYTES, "held_syn_bytes") \
	X(P, REINJECTED, "reinjected") X(P, RESET_HELD, "reset_held") \
	X(P, RELEASED_UNSEATED, "released_unseated") X(P, TICKET_FALLBACKS, "ticket_fallbacks") \
	X(P, REJECTED_QUEUE_FULL, "rejected_queue_full") X(P, REJECTED_TIME_OUT, "rejected_time_out") \
	X(P, REJECTED_SHED, "rejected_shed") X(P, REJECTED_STALLED, "rejected_stalled") \
	X(P, STALLS, "stalls") X(P, CLOSED_UNSERVED, "closed_unserved") X(P, DROPPED_GONE, "dropped_gone") \
	X(P, DISPATCHED_AFTER_CLOSE, "dispatched_after_close") \
	X(P, DISPATCHED_AFTER_CLOSE_1MS, "dispatched_after_close_within_1ms") \
	X(P, QUEUE_WAIT_LIMIT_MS, "queue_wait_limit_ms") X(P, DELAY_TARGET_MS, "delay_target_ms") \
	X(P, DELAY_INTERVAL_MS, "delay_interval_ms") X(P, STALL_AFTER_MS, "stall_after_ms") \
	X(P, DEMAND_HWM, "demand_hwm") X(P, DEMAND_AVG, "demand_avg") X(P, DEMAND_SMOOTHED, "demand_smoothed")
/* A LEVEL's ticket_fallbacks: why a deferred connection fell back to a
 * ticket (no frame held, frame unparsed, bad checksum, over the budget,
 * re-injection failed). */
#define SL_FALLBACK_KEYS(X, P) \
	X(P, NO_FRAME, "no_frame") X(P, UNPARSED, "unparsed") X(P, CHECKSUM, "checksum") \
	X(P, BUDGET, "budget") X(P, INJECT_FAILED, "inject_failed")
/* `queues`: {"what":"queues","queues":[QUEUE]} */
#define SL_QUEUES_REPLY_KEYS(X, P) X(P, WHAT, "what") X(P, QUEUES, "queues")
#define SL_QUEUE_KEYS(X, P) \
	X(P, LEVEL, "level") X(P, INDEX, "index") X(P, WAITING, "waiting") X(P, EXECUTING, "executing") \
	X(P, SEATS_IN_USE, "seats_in_use") X(P, NEXT_DISPATCH_R, "next_dispatch_r") \
	X(P, MAX_SEATS_SUM, "max_seats_sum") X(P, TOTAL_WORK_SUM, "total_work_sum")
/* `flows`: {"what":"flows","flows":[FLOW]}; a FLOW's flow_schema, client
 * and local are left out when its pending record is gone. */
#define SL_FLOWS_REPLY_KEYS(X, P) X(P, WHAT, "what") X(P, FLOWS, "flows")
#define SL_FLOW_KEYS(X, P) \
	X(P, LEVEL, "level") X(P, FLOW_SCHEMA, "flow_schema") X(P, CLIENT, "client") X(P, LOCAL, "local") \
	X(P, QUEUE, "queue") X(P, POSITION, "position") X(P, EXECUTING, "executing") X(P, HELD, "held") \
	X(P, FLOW_HASH, "flow_hash") X(P, SEATS, "seats") X(P, ARRIVAL_NS, "arrival_ns") \
	X(P, START_NS, "start_ns")

/* `hand SCHEMA=DIST`: a flow's queues under the daemon's own hash key. */
#define SL_HAND_KEYS(X, P) \
	X(P, OK, "ok") X(P, FLOW_SCHEMA, "flow_schema") X(P, PRIORITY_LEVEL, "priority_level") \
	X(P, DISTINGUISHER, "distinguisher") X(P, HASH, "hash") X(P, QUEUES, "queues") X(P, HAND, "hand")
/* `reload`, `reload-status N` while it runs: started, not done. */
#define SL_PENDING_KEYS(X, P) \
	X(P, OK, "ok") X(P, PENDING, "pending") X(P, GENERATION, "generation") X(P, MESSAGE, "message") \
	X(P, CONFIG, "config")
/* `reload-status N` once it ended, `shadow on|off`, and any request
 * refused: the outcome, and the configuration's diagnostics
 * (config/diag.h's JSON). */
#define SL_OUTCOME_KEYS(X, P) \
	X(P, OK, "ok") X(P, MESSAGE, "message") X(P, SHADOW, "shadow") X(P, CONFIG, "config") \
	X(P, DIAGNOSTICS, "diagnostics")

/* ---- `controller`: both modes' dumps ---- */
/* `controller`: {"stage","policies":[POLICY]}; a POLICY has these keys,
 * and those of APERTURE_POLICY or SLUICE_POLICY by its "mode". */
#define SL_CONTROLLER_REPLY_KEYS(X, P) \
	X(P, STAGE, "stage") X(P, POLICIES, "policies")
#define SL_POLICY_KEYS(X, P) X(P, NAME, "name") X(P, MODE, "mode")
/* Mode aperture: the AIMD controller's last period (nulls before the
 * first), the load scheduler, the data path's gate, its workloads. */
#define SL_APERTURE_POLICY_KEYS(X, P) \
	X(P, PERIODS, "periods") X(P, PERIOD_MS, "period_ms") \
	X(P, SIGNAL_MS, "signal_ms") X(P, SETPOINT_MS, "setpoint_ms") X(P, OVERLOAD, "overload") X(P, GRADIENT, "gradient") \
	X(P, INTEGRATOR, "integrator") X(P, OBSERVED, "observed") X(P, LOAD_MULTIPLIER, "load_multiplier") X(P, PASS_THROUGH, "pass_through") \
	X(P, BOOTSTRAPPING, "bootstrapping") X(P, SCHEDULER_PASS_THROUGH, "scheduler_pass_through") X(P, FILL_RATE, "fill_rate") X(P, CAPACITY, "capacity") \
	X(P, AVAILABLE, "available") X(P, INCOMING_RATE, "incoming_rate") X(P, WAITING, "waiting") X(P, GATE, "gate") \
	X(P, GATE_CREDIT, "gate_credit") X(P, GATE_GRANTS, "gate_grants") X(P, WORKLOADS, "workloads")
/* An APERTURE_POLICY's workload. */
#define SL_APERTURE_WORKLOAD_KEYS(X, P) \
	X(P, NAME, "name") X(P, PRIORITY, "priority") X(P, TOKENS, "tokens") X(P, ADMITTED, "admitted") \
	X(P, ADMITTED_INLINE, "admitted_inline") X(P, DEFERRED, "deferred") X(P, REJECTED, "rejected") X(P, SHED, "shed") \
	X(P, WAITING, "waiting") X(P, SYNS, "syns") X(P, GATE_DEFERRED, "gate_deferred") X(P, TOKEN_ESTIMATE_MS, "token_estimate_ms") \
	X(P, ACCEPTED_TOKENS, "accepted_tokens") X(P, REJECTED_TOKENS, "rejected_tokens")
/* Mode sluice: the limit in flight ("limit" null in pass-through), the
 * gate (SLUICE_GATE), the last decision's reason (SLUICE_DECISION
 * once there was one), the decisions by reason, its workloads. */
#define SL_SLUICE_POLICY_KEYS(X, P) \
	X(P, PASS_THROUGH, "pass_through") X(P, LIMIT, "limit") \
	X(P, IN_FLIGHT, "in_flight") X(P, GATE, "gate") X(P, WAITING, "waiting") X(P, RECALLED, "recalled") \
	X(P, MAX_IN_FLIGHT, "max_in_flight") X(P, REASON, "reason") X(P, DECISIONS, "decisions") X(P, WORKLOADS, "workloads")
/* A SLUICE_POLICY's last decision, written beside its keys once made. */
#define SL_SLUICE_DECISION_KEYS(X, P) \
	X(P, SIGNAL_MS, "signal_ms") X(P, FRESH_MS, "fresh_ms") X(P, LITTLE_MS, "little_ms") X(P, BASELINE_MS, "baseline_ms") \
	X(P, TARGET_MS, "target_ms") X(P, THROUGHPUT, "throughput") X(P, GRADIENT, "gradient") X(P, LIMIT_BEFORE, "limit_before") \
	X(P, LIMIT_AFTER, "limit_after")
/* A SLUICE_POLICY's gate: the data path's slot count. */
#define SL_SLUICE_GATE_KEYS(X, P) \
	X(P, INDEX, "index") X(P, SLOTS_HELD, "slots_held") X(P, SLOT_LIMIT, "slot_limit")
/* A SLUICE_POLICY's workload: the data path's counts, then the queue's. */
#define SL_SLUICE_WORKLOAD_KEYS(X, P) \
	X(P, NAME, "name") X(P, PRIORITY, "priority") X(P, WAITING, "waiting") X(P, SYNS, "syns") \
	X(P, ADMITTED_INLINE, "admitted_inline") X(P, GATE_DEFERRED, "gate_deferred") X(P, ADMITTED_ON_ARRIVAL, "admitted_on_arrival") X(P, ADMITTED, "admitted") \
	X(P, REJECTED, "rejected") X(P, SHED, "shed") X(P, REFUSED, "refused")

/* Every reply object of the contract: its list's name, its table's. */
#define SL_CTL_OBJECTS(R) \
	R(LEVELS_REPLY, levels_reply) R(LEVEL, level) R(FALLBACK, fallback) \
	R(QUEUES_REPLY, queues_reply) R(QUEUE, queue) R(FLOWS_REPLY, flows_reply) \
	R(FLOW, flow) R(HAND, hand) R(PENDING, pending) \
	R(OUTCOME, outcome) R(CONTROLLER_REPLY, controller_reply) R(POLICY, policy) \
	R(APERTURE_POLICY, aperture_policy) R(APERTURE_WORKLOAD, aperture_workload) R(SLUICE_POLICY, sluice_policy) \
	R(SLUICE_DECISION, sluice_decision) R(SLUICE_GATE, sluice_gate) R(SLUICE_WORKLOAD, sluice_workload)

/* Each list as an enum (SL_LEVEL_K_SEATS_IN_USE, ..., SL_LEVEL_NKEYS) and
 * a table of its key strings (control.c). */
#define SL_CTL_ENUM_ITEM(P, id, key) P##id,
#define SL_CTL_ENUM(ID, id) enum sl_##id##_key { SL_##ID##_KEYS(SL_CTL_ENUM_ITEM, SL_##ID##_K_) SL_##ID##_NKEYS };
#define SL_CTL_EXTERN(ID, id) extern const char *const sl_##id##_keys[SL_##ID##_NKEYS];
SL_CTL_OBJECTS(SL_CTL_ENUM)
SL_CTL_OBJECTS(SL_CTL_EXTERN)

/* A key by its ID: SL_LEVEL_KEY(SEATS_IN_USE) is "seats_in_use". */
#define SL_LEVEL_KEY(id)    sl_level_keys[SL_LEVEL_K_##id]
#define SL_FALLBACK_KEY(id) sl_fallback_keys[SL_FALLBACK_K_##id]
#define SL_QUEUE_KEY(id)    sl_queue_keys[SL_QUEUE_K_##id]
#define SL_FLOW_KEY(id)     sl_flow_keys[SL_FLOW_K_##id]
#define SL_HAND_KEY(id)     sl_hand_keys[SL_HAND_K_##id]
#define SL_PENDING_KEY(id)  sl_pending_keys[SL_PENDING_K_##id]
#define SL_OUTCOME_KEY(id)  sl_outcome_keys[SL_OUTCOME_K_##id]
#define SL_LEVELS_REPLY_KEY(id) sl_levels_reply_keys[SL_LEVELS_REPLY_K_##id]
#define SL_QUEUES_REPLY_KEY(id) sl_queues_reply_keys[SL_QUEUES_REPLY_K_##id]
#define SL_FLOWS_REPLY_KEY(id)  sl_flows_reply_keys[SL_FLOWS_REPLY_K_##id]
#define SL_CONTROLLER_REPLY_KEY(id) sl_controller_reply_keys[SL_CONTROLLER_REPLY_K_##id]
#define SL_POLICY_KEY(id) sl_policy_keys[SL_POLICY_K_##id]
#define SL_APERTURE_POLICY_KEY(id) sl_aperture_policy_keys[SL_APERTURE_POLICY_K_##id]
#define SL_APERTURE_WORKLOAD_KEY(id) sl_aperture_workload_keys[SL_APERTURE_WORKLOAD_K_##id]
#define SL_SLUICE_POLICY_KEY(id) sl_sluice_policy_keys[SL_SLUICE_POLICY_K_##id]
#define SL_SLUICE_DECISION_KEY(id) sl_sluice_decision_keys[SL_SLUICE_DECISION_K_##id]
#define SL_SLUICE_GATE_KEY(id) sl_sluice_gate_keys[SL_SLUICE_GATE_K_##id]
#define SL_SLUICE_WORKLOAD_KEY(id) sl_sluice_workload_keys[SL_SLUICE_WORKLOAD_K_##id]


struct sl_diags;
/* The writers of the two replies every change gets (the daemon's side):
 * a reload started or still running (generation: the request's number),
 * and an outcome, with the diagnostics of the configuration it read (an
 * empty list when none). */
void sl_control_write_pending(FILE *f, unsigned long long generation, const char *message,
			      const char *config);
void sl_control_write_outcome(FILE *f, bool ok, const char *message, bool shadow, const char *config,
			      const struct sl_diags *diags);

#endif
