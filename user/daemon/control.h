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
 * (tests/unit/daemon/test_admission.c test_dump_keys_are_the_contract
 * fails when a dump and its list disagree).  X(ID, "key"). */

/* `levels`: {"what":"levels","borrowing_regime","fair_prop","levels":[LEVEL]} */
#define SL_LEVELS_REPLY_KEYS(X) \
	X(WHAT, "what") X(BORROWING_REGIME, "borrowing_regime") X(FAIR_PROP, "fair_prop") \
	X(LEVELS, "levels")
/* One LEVEL: its limits, seats, counters, the bounds of a wait, its demand. */
#define SL_LEVEL_KEYS(X) \
	X(NAME, "name") X(TYPE, "type") X(ACTIVE, "active") \
	X(NOMINAL, "nominal") X(LENDABLE, "lendable") X(MIN, "min") X(MAX, "max") \
	X(LIMIT, "limit") X(SEATS_IN_USE, "seats_in_use") X(SEATS_DISPATCHED, "seats_dispatched") \
	X(SEATS_UNCLAIMED, "seats_unclaimed") X(OVERBOOK_CAP, "overbook_cap") \
	X(CLAIM_DELAY_MS, "claim_delay_ms") X(HOLD_MS, "hold_ms") X(WAITING, "waiting") \
	X(QUEUES, "queues") X(ADMITTED, "admitted") X(DEFERRED, "deferred") \
	X(REJECTED, "rejected") X(DISPATCHED_FROM_QUEUE, "dispatched_from_queue") \
	X(HELD_SYNS, "held_syns") X(HELD_SYN_BYTES, "held_syn_bytes") \
	X(REINJECTED, "reinjected") X(RESET_HELD, "reset_held") \
	X(RELEASED_UNSEATED, "released_unseated") X(TICKET_FALLBACKS, "ticket_fallbacks") \
	X(REJECTED_QUEUE_FULL, "rejected_queue_full") X(REJECTED_TIME_OUT, "rejected_time_out") \
	X(REJECTED_SHED, "rejected_shed") X(REJECTED_STALLED, "rejected_stalled") \
	X(STALLS, "stalls") X(CLOSED_UNSERVED, "closed_unserved") X(DROPPED_GONE, "dropped_gone") \
	X(QUEUE_WAIT_LIMIT_MS, "queue_wait_limit_ms") X(DELAY_TARGET_MS, "delay_target_ms") \
	X(DELAY_INTERVAL_MS, "delay_interval_ms") X(STALL_AFTER_MS, "stall_after_ms") \
	X(DEMAND_HWM, "demand_hwm") X(DEMAND_AVG, "demand_avg") X(DEMAND_SMOOTHED, "demand_smoothed")
/* A LEVEL's ticket_fallbacks: why a deferred connection fell back to a
 * ticket (no frame held, frame unparsed, bad checksum, over the budget,
 * re-injection failed). */
#define SL_FALLBACK_KEYS(X) \
	X(NO_FRAME, "no_frame") X(UNPARSED, "unparsed") X(CHECKSUM, "checksum") \
	X(BUDGET, "budget") X(INJECT_FAILED, "inject_failed")
/* `queues`: {"what":"queues","queues":[QUEUE]} */
#define SL_QUEUES_REPLY_KEYS(X) X(WHAT, "what") X(QUEUES, "queues")
#define SL_QUEUE_KEYS(X) \
	X(LEVEL, "level") X(INDEX, "index") X(WAITING, "waiting") X(EXECUTING, "executing") \
	X(SEATS_IN_USE, "seats_in_use") X(NEXT_DISPATCH_R, "next_dispatch_r") \
	X(MAX_SEATS_SUM, "max_seats_sum") X(TOTAL_WORK_SUM, "total_work_sum")
/* `flows`: {"what":"flows","flows":[FLOW]}; a FLOW's flow_schema, client
 * and local are left out when its pending record is gone. */
#define SL_FLOWS_REPLY_KEYS(X) X(WHAT, "what") X(FLOWS, "flows")
#define SL_FLOW_KEYS(X) \
	X(LEVEL, "level") X(FLOW_SCHEMA, "flow_schema") X(CLIENT, "client") X(LOCAL, "local") \
	X(QUEUE, "queue") X(POSITION, "position") X(EXECUTING, "executing") X(HELD, "held") \
	X(FLOW_HASH, "flow_hash") X(SEATS, "seats") X(ARRIVAL_NS, "arrival_ns") \
	X(START_NS, "start_ns")

/* `hand SCHEMA=DIST`: a flow's queues under the daemon's own hash key. */
#define SL_HAND_KEYS(X) \
	X(OK, "ok") X(FLOW_SCHEMA, "flow_schema") X(PRIORITY_LEVEL, "priority_level") \
	X(DISTINGUISHER, "distinguisher") X(HASH, "hash") X(QUEUES, "queues") X(HAND, "hand")
/* `reload`, `reload-status N` while it runs: started, not done. */
#define SL_PENDING_KEYS(X) \
	X(OK, "ok") X(PENDING, "pending") X(GENERATION, "generation") X(MESSAGE, "message") \
	X(CONFIG, "config")
/* `reload-status N` once it ended, `shadow on|off`, and any request
 * refused: the outcome, and the configuration's diagnostics
 * (config/diag.h's JSON). */
#define SL_OUTCOME_KEYS(X) \
	X(OK, "ok") X(MESSAGE, "message") X(SHADOW, "shadow") X(CONFIG, "config") \
	X(DIAGNOSTICS, "diagnostics")

#define SL_CTL_KEY_ENUM(prefix, id, key) prefix##id,
#define SL_LEVELS_REPLY_ENUM(id, key) SL_CTL_KEY_ENUM(SL_LEVELS_REPLY_, id, key)
#define SL_LEVEL_ENUM(id, key)        SL_CTL_KEY_ENUM(SL_LEVEL_K_, id, key)
#define SL_FALLBACK_ENUM(id, key)     SL_CTL_KEY_ENUM(SL_FALLBACK_K_, id, key)
#define SL_QUEUES_REPLY_ENUM(id, key) SL_CTL_KEY_ENUM(SL_QUEUES_REPLY_, id, key)
#define SL_QUEUE_ENUM(id, key)        SL_CTL_KEY_ENUM(SL_QUEUE_K_, id, key)
#define SL_FLOWS_REPLY_ENUM(id, key)  SL_CTL_KEY_ENUM(SL_FLOWS_REPLY_, id, key)
#define SL_FLOW_ENUM(id, key)         SL_CTL_KEY_ENUM(SL_FLOW_K_, id, key)
#define SL_HAND_ENUM(id, key)         SL_CTL_KEY_ENUM(SL_HAND_K_, id, key)
#define SL_PENDING_ENUM(id, key)      SL_CTL_KEY_ENUM(SL_PENDING_K_, id, key)
#define SL_OUTCOME_ENUM(id, key)      SL_CTL_KEY_ENUM(SL_OUTCOME_K_, id, key)
enum sl_levels_reply_key { SL_LEVELS_REPLY_KEYS(SL_LEVELS_REPLY_ENUM) SL_LEVELS_REPLY_N };
enum sl_level_key { SL_LEVEL_KEYS(SL_LEVEL_ENUM) SL_LEVEL_N };
enum sl_fallback_key { SL_FALLBACK_KEYS(SL_FALLBACK_ENUM) SL_FALLBACK_N_KEYS };
enum sl_queues_reply_key { SL_QUEUES_REPLY_KEYS(SL_QUEUES_REPLY_ENUM) SL_QUEUES_REPLY_N };
enum sl_queue_key { SL_QUEUE_KEYS(SL_QUEUE_ENUM) SL_QUEUE_N };
enum sl_flows_reply_key { SL_FLOWS_REPLY_KEYS(SL_FLOWS_REPLY_ENUM) SL_FLOWS_REPLY_N };
enum sl_flow_key { SL_FLOW_KEYS(SL_FLOW_ENUM) SL_FLOW_N };
enum sl_hand_key { SL_HAND_KEYS(SL_HAND_ENUM) SL_HAND_N };
enum sl_pending_key { SL_PENDING_KEYS(SL_PENDING_ENUM) SL_PENDING_N };
enum sl_outcome_key { SL_OUTCOME_KEYS(SL_OUTCOME_ENUM) SL_OUTCOME_N };

extern const char *const sl_levels_reply_keys[SL_LEVELS_REPLY_N];
extern const char *const sl_level_keys[SL_LEVEL_N];
extern const char *const sl_fallback_keys[SL_FALLBACK_N_KEYS];
extern const char *const sl_queues_reply_keys[SL_QUEUES_REPLY_N];
extern const char *const sl_queue_keys[SL_QUEUE_N];
extern const char *const sl_flows_reply_keys[SL_FLOWS_REPLY_N];
extern const char *const sl_flow_keys[SL_FLOW_N];
extern const char *const sl_hand_keys[SL_HAND_N];
extern const char *const sl_pending_keys[SL_PENDING_N];
extern const char *const sl_outcome_keys[SL_OUTCOME_N];

/* A key by its ID: SL_LEVEL_KEY(SEATS_IN_USE) is "seats_in_use". */
#define SL_LEVEL_KEY(id)    sl_level_keys[SL_LEVEL_K_##id]
#define SL_FALLBACK_KEY(id) sl_fallback_keys[SL_FALLBACK_K_##id]
#define SL_QUEUE_KEY(id)    sl_queue_keys[SL_QUEUE_K_##id]
#define SL_FLOW_KEY(id)     sl_flow_keys[SL_FLOW_K_##id]
#define SL_HAND_KEY(id)     sl_hand_keys[SL_HAND_K_##id]
#define SL_PENDING_KEY(id)  sl_pending_keys[SL_PENDING_K_##id]
#define SL_OUTCOME_KEY(id)  sl_outcome_keys[SL_OUTCOME_K_##id]
#define SL_LEVELS_REPLY_KEY(id) sl_levels_reply_keys[SL_LEVELS_REPLY_##id]
#define SL_QUEUES_REPLY_KEY(id) sl_queues_reply_keys[SL_QUEUES_REPLY_##id]
#define SL_FLOWS_REPLY_KEY(id)  sl_flows_reply_keys[SL_FLOWS_REPLY_##id]

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
