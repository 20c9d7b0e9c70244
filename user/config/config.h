/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * sluice configuration: multi-document YAML in Kubernetes object style.
 *
 *   apiVersion: sluice/v1
 *   kind: Server | PriorityLevelConfiguration | FlowSchema |
 *         ConnectionLabels | AverageLatencySchedulingPolicy
 *   metadata: {name: ...}
 *   spec: {...}
 *
 * Any subset of objects is a valid file.  The mandatory `exempt` and
 * `catch-all` priority levels and flow schemas always exist (the loader
 * adds them; a file may restate them, and may change only the exempt
 * level's nominalConcurrencyShares and lendablePercent: Kubernetes registry/flowcontrol/ensurer).
 *
 * A load either returns a complete, validated configuration or nothing
 * (so a reload is all or nothing), and reports every problem it finds in
 * `diags` (see diag.h for the line format).  Pure code: no global state.
 */
#ifndef SLUICE_CONFIG_H
#define SLUICE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/diag.h"
#include "lib/labels.h"

#define SL_API_VERSION        "sluice/v1"
#define SL_LEVEL_NAME_SIZE    48 /* names are at most 47 characters */
#define SL_IFNAME_SIZE        16 /* IFNAMSIZ: names are 1..15 characters */
#define SL_MAX_INTERFACES     32 /* one daemon's interfaces */
#define SL_MAX_LEVELS         64 /* SLUICE_MAX_LEVELS, mandatory levels included */

/* Numeric values match enum sluice_fail_mode / sluice_level_type /
 * sluice_limit_response in sluice_abi.h. */
enum sl_fail_mode {
	SL_FAIL_OPEN   = 0,
	SL_FAIL_CLOSED = 1,
	SL_FAIL_STATIC = 2,
};

/* "open", "closed" or "static", as failMode spells it. */
const char *sl_fail_mode_name(enum sl_fail_mode mode);

enum sl_level_type {
	SL_LEVEL_EXEMPT  = 1,
	SL_LEVEL_LIMITED = 2,
};

enum sl_limit_response {
	SL_RESP_QUEUE  = 0,
	SL_RESP_REJECT = 1,
};

/* Server spec.halfOpen.seatAt: where a limited level's connections take
 * their seats (engine/halfopen.h decides, the data path enforces). */
enum sl_seat_at {
	SL_SEAT_AT_AUTO = 0, /* at the SYN; at the ACK while handshakes go unfinished */
	SL_SEAT_AT_SYN  = 1, /* always at the SYN */
	SL_SEAT_AT_ACK  = 2, /* always at the ACK */
};

/* Server spec.fleet: this host as a member of a fleet whose hosts share
 * levels' seats through etcd (config/fleet.c; engine/fleet_share.h). */
struct sl_fleet_cfg {
	bool set;                         /* spec.fleet given */
	char *name;                       /* name (required): the keys under /sluice/<name>/ */
	char *node;                       /* node: this host in the fleet, NULL: the host name */
	char **endpoints;                 /* endpoints: etcd's, http(s)://IP:port */
	size_t n_endpoints;
	uint64_t lease_ttl_ns;            /* leaseTTL, 6s (>= 2s) */
	uint64_t sync_period_ns;          /* syncPeriod, 200ms */
	uint64_t request_timeout_ns;      /* requestTimeout, 300ms */
	struct {
		char *ca_file, *cert_file, *key_file; /* tls: etcd's client-cert-auth, NULL: plain HTTP */
	} tls;
	unsigned line, column;            /* of spec.fleet */
};

/* kind: Server.  Every field holds its default when the object or the
 * field is absent. */
struct sl_server_cfg {
	bool present;                     /* a Server object was given */
	uint32_t server_concurrency_limit;/* serverConcurrencyLimit, 600 */
	enum sl_fail_mode fail_mode;      /* failMode, open */
	uint64_t heartbeat_timeout_ns;    /* heartbeatTimeout, 3s; 0 = failsafe off */
	uint64_t tick_ns;                 /* tick, 100ms (1ms..10s) */
	uint64_t handshake_timeout_ns;    /* handshakeTimeout, 10s */
	char (*interfaces)[SL_IFNAME_SIZE]; /* interfaces, NULL if none (at most SL_MAX_INTERFACES) */
	size_t n_interfaces;
	unsigned interfaces_line, interfaces_column; /* where the list is, for diagnostics */
	char *pin_dir;                    /* pinDir, "/sys/fs/bpf/sluice" */
	struct {
		uint32_t connections;     /* tableSizes.connections, 65536 (1024..16777216) */
		uint32_t classes;         /* tableSizes.classes: class-table entries a generation, 65536 (1024..1048576) */
	} table_sizes;
	char *metrics_address;            /* metricsAddress "host:port", NULL if unset */
	uint32_t events_per_second;       /* eventsPerSecond, 1000; 0 = no cap */
	char *control_socket;             /* controlSocket, "/run/sluice/sluiced.sock" (absolute, < 108 bytes) */
	char *read_group;                 /* readGroup: a group that may read the pins and ask the
					   * control socket for reports (not for changes); NULL: none */
	bool shadow;                      /* shadow: verdicts counted, none enforced (false) */
	double ticket_overbooking;        /* ticketOverbooking: a Queue level may dispatch beyond its
					     limit by up to this x the limit in unclaimed tickets (1; 0..16) */
	struct {
		enum sl_seat_at seat_at;  /* halfOpen.seatAt: auto | syn | ack, auto */
		uint32_t engage_after;    /* halfOpen.engageAfter: unfinished handshakes in 10 s
					     that move a level's seats to the ACK (auto), 4 */
		uint64_t hold_ns;         /* halfOpen.holdFor: back to the SYN after this long
					     without them, 30s */
		uint64_t min_timeout_ns;  /* halfOpen.minTimeout: floor of the measured half-open
					     time-out (4 x the p99 handshake, at most
					     handshakeTimeout), 200ms */
	} half_open;
	struct {
		uint64_t max_bytes;       /* heldSyns.maxBytes: every held SYN frame, 8 MiB */
		uint64_t max_bytes_per_level; /* heldSyns.maxBytesPerLevel, 4 MiB */
	} held_syns;
	struct {
		char *next;               /* xdpChain.next: a pinned XDP program that gets
					     what sluice passes (tail call), NULL: none */
		char *root_array;         /* xdpChain.rootArray: a root program's pinned
					     PROG_ARRAY sluice joins instead of attaching */
		uint32_t slot;            /* xdpChain.slot: sluice's slot in it, 0 */
	} xdp_chain;
	struct sl_fleet_cfg fleet;
	/* Changed only by a restart (the data path's attachment): pin_dir,
	 * interfaces, table sizes, xdp_chain. */
	char *file;                       /* where the object is defined */
	unsigned line, column;            /* (NULL/0 when not present) */
};

struct sl_port_range {
	uint16_t lo, hi; /* inclusive, 1 <= lo <= hi <= 65535 */
};

/* An address prefix.  IPv4 is stored v4-mapped (::ffff:a.b.c.d) with
 * prefix_len 96 + n; host bits are always zero (the loader refuses
 * "10.0.0.1/8").  A bare address in the file is a host (/32 or /128).
 * Being v4-mapped, IPv4 addresses lie inside "::/0" too. */
struct sl_cidr {
	uint8_t addr[16];   /* IPv4 as v4-mapped ::ffff:a.b.c.d */
	uint8_t prefix_len; /* 0..128; IPv4 /n is stored as 96+n */
};

/* Names of the mandatory objects (Kubernetes bootstrap/default.go). */
#define SL_EXEMPT_NAME    "exempt"
#define SL_CATCH_ALL_NAME "catch-all"

/* kind: PriorityLevelConfiguration.  cfg->levels[0] is always the
 * mandatory `exempt` level and cfg->levels[1] the mandatory `catch-all`;
 * the file's other levels follow in file order. */
struct sl_level_cfg {
	char name[SL_LEVEL_NAME_SIZE];    /* metadata.name: DNS-1123 subdomain, 1..47 chars, unique */
	enum sl_level_type type;
	/* spec.exempt or spec.limited */
	int32_t shares;                   /* nominalConcurrencyShares: Exempt 0, Limited 30 (catch-all 5) */
	int32_t lendable_percent;         /* lendablePercent 0..100, 0 */
	/* Limited only (Exempt: -1 / SL_RESP_REJECT / 0) */
	int32_t borrowing_limit_percent;  /* borrowingLimitPercent, -1 = unlimited */
	enum sl_limit_response limit_response; /* limitResponse.type, Reject */
	/* limitResponse.queuing: SL_RESP_QUEUE only, 0 otherwise */
	uint32_t queues;                  /* 64 (1..2^26; Reject is spelled type: Reject, not queues: 0) */
	uint32_t hand_size;               /* 8 */
	uint32_t queue_length_limit;      /* 50 */
	uint64_t queue_wait_limit_ns;     /* queueWaitLimit, 2s: the hard cap of a wait */
	/* Controlled delay (sluice's own, engine/queueset.h sl_qs_shed): a
	 * queue whose backlog has stood for the interval sheds whoever waited
	 * past the target. */
	uint64_t delay_target_ns;         /* queueDelayTarget, 100ms */
	uint64_t delay_interval_ns;       /* queueDelayInterval, 1s */
	/* limited.fleet: the level's seats are a fleet's budget, shared by its
	 * hosts (Server spec.fleet), of which this host holds a floor. */
	struct {
		bool set;
		uint32_t seats;           /* seats (required): the fleet's budget for the level */
		uint32_t floor;           /* floor, 0: this host's reserved seats (<= seats) */
		uint64_t drain_ns;        /* drainTimeout, 1s: how long a connection may outlive
					     its host's right to its seat */
		unsigned line, column;    /* of limited.fleet */
	} fleet;
	bool mandatory;                   /* `exempt` or `catch-all` */
	bool builtin;                     /* added by the loader (not in the file): file NULL, line 0 */
	/* where the object is defined (its first line) */
	char *file;
	unsigned line, column;
};

/* ---- kind: FlowSchema ------------------------------------------------------ */

enum sl_distinguisher {
	SL_DIST_NONE = 0,           /* distinguisherMethod absent: one flow per schema */
	SL_DIST_BY_SOURCE = 1,      /* BySource (alias ByUser): the client address, masked */
	SL_DIST_BY_DESTINATION = 2, /* ByDestination (alias ByNamespace): the local address */
};

enum sl_subject_kind {
	SL_SUBJECT_NETWORK = 1, /* kind: Network, network.cidrs: source addresses */
	SL_SUBJECT_LABELS = 2,  /* kind: Labels, labels: a Kubernetes LabelSelector over connection labels */
};

struct sl_subject {
	enum sl_subject_kind kind;
	struct sl_cidr *cidrs;          /* Network: non-empty */
	size_t n_cidrs;
	struct sl_label_matcher labels; /* Labels: matchLabels (as In with one value) + matchExpressions */
	unsigned line, column;
};

/* protocols is always TCP or "*" (sluice sees TCP connections), so it is
 * not stored. */
struct sl_destination {
	struct sl_port_range *ports;
	size_t n_ports;          /* n_ports == 0 means any port ("*", the default) */
	struct sl_cidr *addresses;
	size_t n_addresses;      /* local addresses; 0 = any */
	unsigned line, column;
};

/* A rule matches when any subject AND any destination match; both lists
 * are non-empty. */
struct sl_fs_rule {
	struct sl_subject *subjects;
	size_t n_subjects;
	struct sl_destination *destinations;
	size_t n_destinations;
	unsigned line, column;
};

struct sl_flow_schema {
	char name[SL_LEVEL_NAME_SIZE];
	char level_name[SL_LEVEL_NAME_SIZE]; /* spec.priorityLevelConfiguration.name */
	size_t level;                        /* index into cfg->levels */
	uint32_t precedence;                 /* matchingPrecedence 1..10000, 1000; 1 only for exempt */
	enum sl_distinguisher distinguisher;
	uint8_t prefix_len_v4;               /* BySource: prefixLength 0..32, 32 (0 otherwise) */
	uint8_t prefix_len_v6;               /* BySource: ipv6PrefixLength 0..128, 128 (0 otherwise) */
	uint32_t seats_per_conn;             /* seatsPerConnection 1..100, 1 */
	unsigned seats_line, seats_column;   /* where seatsPerConnection is (0: not given) */
	struct sl_fs_rule *rules;            /* any rule matches (none: matches nothing) */
	size_t n_rules;
	bool mandatory;                      /* `exempt` or `catch-all` */
	bool builtin;                        /* added by the loader: file NULL, line 0 */
	char *file;
	unsigned line, column;
};

/* ---- kind: ConnectionLabels ------------------------------------------------ */

/* Parts absent in the file are empty here and match anything; present
 * parts are ANDed.  Rules apply in order (objects in file order, rules in
 * order); a later rule overrides an earlier one for the same key. */
struct sl_label_rule {
	struct sl_cidr *sources;        /* client addresses, 0 = any */
	size_t n_sources;
	struct sl_cidr *destinations;   /* local addresses, 0 = any */
	size_t n_destinations;
	struct sl_port_range *ports;    /* local ports, 0 = any */
	size_t n_ports;
	struct sl_labels labels;        /* non-empty; keys valid and not built-in */
	unsigned line, column;
};

struct sl_label_object {
	char name[SL_LEVEL_NAME_SIZE];
	struct sl_label_rule *rules;
	size_t n_rules;
	char *file;
	unsigned line, column;
};

/* ---- kind: AverageLatencySchedulingPolicy ---------------------------------- */

/*
 * The ASM CRD's fields, verbatim:
 *
 *   spec.load_scheduling_core.aimd_load_scheduler:
 *     gradient: {slope: -1, min_gradient: 0.1, max_gradient: 1}
 *     load_multiplier_linear_increment: 0.025
 *     max_load_multiplier: 2
 *     min_load_multiplier: 0            (sluice: optional floor, < max)
 *     load_scheduler:
 *       selectors: [{control_point: ingress, service: any, agent_group: default,
 *                    label_matcher: {...}}]     (at least one; OR-ed)
 *       workload_latency_based_tokens: false
 *       scheduler:
 *         workloads: [{name, label_matcher, parameters: {priority: 1, tokens, queue_timeout,
 *                      queue_delay_target: 100ms, queue_delay_interval: 1s}}]
 *         default_workload_parameters: {priority: 1, tokens, queue_timeout, ...}
 *         workload_latency_based_tokens: false   (also accepted here)
 *
 * and sluice's own fields (spec level, snake_case like the CRD):
 *
 *   signal: {type: duration|srtt|external, external_path: /abs/path,
 *            external_socket: /abs/path, window: 30s}
 *       duration: mean accept-to-close time of the selected connections;
 *       srtt: their smoothed RTT; external: a number (ms) the application
 *       writes to external_path (read each period), or sends as datagrams
 *       to the Unix socket external_socket that sluiced binds (the mean of
 *       a period's datagrams); one of the two, for external only.  window
 *       is the SIGNAL averaging window.
 *   latency_baseliner: {latency_tolerance_multiplier: 1.25,
 *                       long_term_query_interval: 30m,
 *                       long_term_query_periodic_interval: 30s}
 *       Aperture's blueprint names: SETPOINT = mean over the long-term
 *       window x tolerance, refreshed every periodic interval.
 *   control_period: 10s   the AIMD period (integrator and decisions); tests
 *                         scale it down.
 */
enum sl_signal_type {
	SL_SIGNAL_DURATION = 0,
	SL_SIGNAL_SRTT = 1,
	SL_SIGNAL_EXTERNAL = 2,
};

struct sl_selector_cfg {
	char *control_point;            /* always "ingress" (the only control point at layer 4) */
	char *service;                  /* "any" (default) or the protected service's name */
	struct sl_label_matcher matcher;/* label_matcher; empty = every connection */
	char *agent_group;              /* always "default" (one agent per host) */
	unsigned line, column;          /* of the selector's item, for diagnostics */
};

/* queue_timeout has no default in Aperture (Aperture workload-scheduler/scheduler.go): unset is
 * SL_QUEUE_TIMEOUT_UNSET (bounded only by the client's SYN retries); 0s
 * means "admit only if tokens are available right now". */
#define SL_QUEUE_TIMEOUT_UNSET UINT64_MAX

struct sl_workload_params {
	double priority;           /* > 0, default 1 */
	double tokens;             /* >= 0; meaningful only when tokens_set */
	bool tokens_set;           /* tokens given and != 0 (0 means unset, as in Aperture) */
	uint64_t queue_timeout_ns; /* SL_QUEUE_TIMEOUT_UNSET when not given */
	bool queue_timeout_set;
	/* sluice's: the controlled delay of the workload's queue in its
	 * policy's scheduler (mode sluice), as a level's; target 0: none. */
	uint64_t queue_delay_target_ns;   /* default SL_DEFERRED_DELAY_TARGET_NS */
	uint64_t queue_delay_interval_ns; /* default SL_DEFERRED_DELAY_INTERVAL_NS */
};

/* How long a workload's connection may wait in its policy's scheduler
 * (either mode): its queue_timeout, at most SL_SYN_CLIENT_DEADLINE_NS
 * (waiting longer serves nobody); unset, SL_DEFERRED_WAIT_NS, as a level's
 * queueWaitLimit (lib/syn_retransmit.h). */
uint64_t sl_workload_wait_limit_ns(const struct sl_workload_params *wp);

struct sl_workload_cfg {
	char *name;                      /* NULL when not named (Aperture then uses the index) */
	struct sl_label_matcher matcher; /* label_matcher (required) */
	struct sl_workload_params params;
	unsigned line, column;           /* of the workload's item, for diagnostics */
};

/* spec.mode: which controller runs the policy. */
enum sl_policy_mode {
	SL_POLICY_SLUICE = 0,   /* sluice's own (the default): a gradient on a limit of
				 * connections in flight (engine/seat_gradient.h) */
	SL_POLICY_APERTURE = 1, /* Aperture's AIMD load multiplier on the admission rate, exactly */
};

struct sl_policy_cfg {
	char name[SL_LEVEL_NAME_SIZE];
	enum sl_policy_mode mode;                 /* spec.mode: sluice; aperture when not given
						     and the signal is srtt or external */
	uint32_t max_in_flight;                   /* spec.adaptive.max_in_flight (sluice mode): at
						     it and healthy, pass-through; 1000 */
	uint32_t min_in_flight;                   /* spec.adaptive.min_in_flight: the floor of a cut; 1 */
	double slope, min_gradient, max_gradient; /* -1, 0.1, 1; slope != 0, min <= max */
	double load_multiplier_linear_increment;  /* 0.025, > 0 */
	double max_load_multiplier;               /* 2, > 0 */
	double min_load_multiplier;               /* 0 = no floor (AIMD has none) */
	struct sl_selector_cfg *selectors;        /* >= 1, OR-ed */
	size_t n_selectors;
	struct sl_workload_cfg *workloads;        /* first match wins */
	size_t n_workloads;
	struct sl_workload_params default_params; /* scheduler.default_workload_parameters */
	bool workload_latency_based_tokens;       /* false */
	enum sl_signal_type signal;               /* signal.type, duration */
	char *external_path;                      /* signal.external_path (external only), else NULL */
	char *external_socket;                    /* signal.external_socket (external only), else NULL */
	uint64_t period_ns;                       /* control_period, 10s */
	uint64_t signal_window_ns;                /* signal.window, 30s */
	uint64_t baseline_window_ns;              /* latency_baseliner.long_term_query_interval, 30m */
	uint64_t baseline_period_ns;              /* latency_baseliner.long_term_query_periodic_interval, 30s */
	double tolerance;                         /* latency_baseliner.latency_tolerance_multiplier, 1.25 */
	bool baseline_includes_overload;          /* latency_baseliner.include_overloaded_periods (sluice's):
						     false = overloaded periods stay out of the baseline
						     (sluice's fix); true = Aperture's baseline */
	char *file;
	unsigned line, column;
};

struct sl_config {
	struct sl_server_cfg server;
	struct sl_level_cfg *levels;         /* [0] exempt, [1] catch-all, then file order */
	size_t n_levels;
	struct sl_flow_schema *schemas;      /* sorted by (precedence, name), dangling ones removed, mandatory included */
	size_t n_schemas;
	struct sl_label_object *label_objects; /* file order */
	size_t n_label_objects;
	struct sl_policy_cfg *policies;      /* file order (a reload keeps kept ones' indices) */
	size_t n_policies;
	char *source_file;                   /* display name given to the loader */
	size_t n_skipped;                    /* objects read but skipped (dangling FlowSchemas) */
};

/*
 * Shuffle-sharding advice: a Queue level gets a warning when 4 elephant
 * flows cover a mouse flow's whole hand with probability above this
 * (KEP-1040 "Probability of Collisions").  0.2 keeps quiet on every Kubernetes suggested level
 * (the worst is leader-election, 16 queues x handSize 4: 0.194).
 */
#define SL_MOUSE_ODDS_WARN 0.2

/*
 * Load and validate.  On success (no errors; warnings allowed) returns 0
 * and sets *out.  Otherwise *out is NULL and the result is -EINVAL for
 * configuration errors, -ENOMEM, or the errno of a file that cannot be read
 * (-ENOENT, -EACCES, -EISDIR, -EFBIG over 16 MiB, ...).  Every problem is
 * appended to diags (which may be NULL; earlier contents are kept and do not
 * affect the result); the diagnostics of one load are sorted by position.
 * out may be NULL to validate only.  The buffer need not be NUL-terminated.
 */
int sl_config_load_file(const char *path, struct sl_config **out,
			struct sl_diags *diags);

/*
 * Whether the daemon may take its configuration from path: a file its
 * group or anyone may write is refused (-EPERM, an error in diags naming
 * the mode and the fix), since whoever can write it steers sluice; one
 * owned by a user other than root and this process is a warning.  0 when
 * there is nothing to check (standard input, a missing file: the load says
 * why).  sluicectl validate does not ask: a file's contents are valid or
 * not wherever it lies.
 */
int sl_config_check_file_mode(const char *path, struct sl_diags *diags);
int sl_config_load_buffer(const char *display_name, const char *buf,
			  size_t len, struct sl_config **out,
			  struct sl_diags *diags);
void sl_config_free(struct sl_config *cfg);

/* Level, FlowSchema, ConnectionLabels object or policy by name, or NULL. */
const struct sl_level_cfg *sl_config_find_level(const struct sl_config *cfg,
						const char *name);
const struct sl_flow_schema *sl_config_find_schema(const struct sl_config *cfg,
						   const char *name);
const struct sl_label_object *sl_config_find_label_object(const struct sl_config *cfg,
							  const char *name);
const struct sl_policy_cfg *sl_config_find_policy(const struct sl_config *cfg,
						  const char *name);
/*
 * Reorder cfg->policies for a reload: a policy named in `in_use` (the
 * policies of the running configuration, in their order) keeps its index
 * while that index is still below n_policies; the others take the free
 * indices in file order.  A policy's index is its gate in the data path,
 * which counts the slots its connections hold: adding or reordering
 * policies moves none.  0, or -ENOMEM (cfg left in file order).
 */
int sl_config_keep_policy_indices(struct sl_config *cfg, const char (*in_use)[SL_LEVEL_NAME_SIZE],
				  size_t n_in_use);

#endif /* SLUICE_CONFIG_H */
