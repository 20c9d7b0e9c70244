/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * sluice configuration: multi-document YAML in Kubernetes object style.
 *
 *   apiVersion: sluice/v1
 *   kind: Server | PriorityLevelConfiguration
 *   metadata: {name: ...}
 *   spec: {...}
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

#include "diag.h"

#define SL_API_VERSION        "sluice/v1"
#define SL_LEVEL_NAME_SIZE    48 /* names are at most 47 characters */
#define SL_IFNAME_SIZE        16 /* IFNAMSIZ: names are 1..15 characters */
#define SL_MAX_LEVELS         64 /* SLUICE_MAX_LEVELS */
#define SL_MAX_PROTECTED_PORTS 1024 /* SLUICE_PORT_TABLE_SIZE */

/* Numeric values match enum sluice_fail_mode / sluice_level_type /
 * sluice_limit_response in sluice_abi.h. */
enum sl_fail_mode {
	SL_FAIL_OPEN   = 0,
	SL_FAIL_CLOSED = 1,
};

enum sl_level_type {
	SL_LEVEL_EXEMPT  = 1,
	SL_LEVEL_LIMITED = 2,
};

enum sl_limit_response {
	SL_RESP_QUEUE  = 0,
	SL_RESP_REJECT = 1,
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
	char (*interfaces)[SL_IFNAME_SIZE]; /* interfaces, NULL if none */
	size_t n_interfaces;
	char *pin_dir;                    /* pinDir, "/sys/fs/bpf/sluice" */
	struct {
		uint32_t connections;     /* tableSizes.connections, 65536 */
	} table_sizes;
	char *metrics_address;            /* metricsAddress "host:port", NULL if unset */
	uint32_t events_per_second;       /* eventsPerSecond, 1000; 0 = no cap */
	char *file;                       /* where the object is defined */
	unsigned line, column;            /* (NULL/0 when not present) */
};

struct sl_port_range {
	uint16_t lo, hi; /* inclusive, 1 <= lo <= hi <= 65535 */
};

/* kind: PriorityLevelConfiguration. */
struct sl_level_cfg {
	char name[SL_LEVEL_NAME_SIZE];    /* metadata.name: DNS-1123 subdomain, 1..47 chars, unique */
	enum sl_level_type type;
	/* spec.exempt or spec.limited */
	int32_t shares;                   /* nominalConcurrencyShares: Exempt 0, Limited 30 */
	int32_t lendable_percent;         /* lendablePercent 0..100, 0 */
	/* Limited only (Exempt: -1 / SL_RESP_REJECT / 0) */
	int32_t borrowing_limit_percent;  /* borrowingLimitPercent, -1 = unlimited */
	enum sl_limit_response limit_response; /* limitResponse.type, Reject */
	/* limitResponse.queuing: SL_RESP_QUEUE only, 0 otherwise */
	uint32_t queues;                  /* 64 */
	uint32_t hand_size;               /* 8 */
	uint32_t queue_length_limit;      /* 50 */
	uint64_t queue_wait_limit_ns;     /* queueWaitLimit, 15s */
	/* spec */
	uint32_t seats_per_conn;          /* seatsPerConnection 1..100, 1 */
	struct sl_port_range *ports;      /* spec.ports in file order */
	size_t n_ports;
	/* where the object is defined (its first line) */
	char *file;
	unsigned line, column;
};

struct sl_config {
	struct sl_server_cfg server;
	struct sl_level_cfg *levels; /* in file order */
	size_t n_levels;
	char *source_file;           /* display name given to the loader */
};

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
int sl_config_load_buffer(const char *display_name, const char *buf,
			  size_t len, struct sl_config **out,
			  struct sl_diags *diags);
void sl_config_free(struct sl_config *cfg);

/* Level by name, or NULL. */
const struct sl_level_cfg *sl_config_find_level(const struct sl_config *cfg,
						const char *name);

/*
 * Go-style durations ("250ms", "1m30s", "1.5s", "-" not allowed), units ns,
 * us, µs, ms, s, m, h; at least one number+unit.  A bare number (even "0")
 * is rejected: it needs a unit.  Returns 0, -EINVAL (syntax) or -ERANGE
 * (more than 2^63-1 ns, as in Go).
 */
int sl_parse_duration(const char *s, uint64_t *ns);

/* Shortest Go-style spelling of ns ("1m30s", "250ms", "0s"). snprintf
 * semantics. */
int sl_format_duration(uint64_t ns, char *buf, size_t size);

#endif /* SLUICE_CONFIG_H */
