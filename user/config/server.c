// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* kind: Server (sluice's own): limits, timing, interfaces, pins, sizes,
 * listeners. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/config.h"
#include "config/decode.h"
#include "config/yaml_doc.h"
#include "sluice_abi.h"
#include "lib/hostport.h"

#define DEF_SERVER_CL        600
#define DEF_HEARTBEAT        (3 * SEC)
#define DEF_TICK             (100 * MSEC)
#define DEF_HANDSHAKE        (10 * SEC)
#define DEF_PIN_DIR          "/sys/fs/bpf/sluice"
#define DEF_CONNS            SLUICE_DEFAULT_CONNS
#define DEF_CLASSES          SLUICE_DEFAULT_CLASSES
#define DEF_CONTROL_SOCKET   "/run/sluice/sluiced.sock"
#define DEF_EVENTS           1000
/* Held SYN frames: a flood that fills the pending table (65,536) with
 * ~100-byte SYNs fits in the total. */
#define DEF_HELD_BYTES       (8ull << 20)
#define DEF_HELD_LEVEL_BYTES (4ull << 20)
#define DEF_ENGAGE_AFTER     4
#define DEF_HOLD             (30 * SEC)
#define DEF_MIN_HALF_OPEN    (200 * MSEC)

/* ---- kind: Server --------------------------------------------------------- */

static const struct enumval fail_modes[] = {
	{ "open", SL_FAIL_OPEN }, { "closed", SL_FAIL_CLOSED }, { "static", SL_FAIL_STATIC },
	{ NULL, 0 },
};

const char *sl_fail_mode_name(enum sl_fail_mode mode)
{
	for (const struct enumval *e = fail_modes; e->name; e++)
		if (e->value == (int)mode)
			return e->name;
	return "?";
}

enum {
	SV_LIMIT, SV_FAIL_MODE, SV_HEARTBEAT, SV_TICK, SV_HANDSHAKE,
	SV_INTERFACES, SV_PIN_DIR, SV_TABLE_SIZES, SV_METRICS, SV_EVENTS,
	SV_CONTROL, SV_SHADOW, SV_OVERBOOK, SV_HELD, SV_HALF_OPEN, SV_READ_GROUP, SV_CHAIN, SV_FLEET, SV_N
};

#define SRV struct sl_server_cfg
static const struct fdesc server_fields[SV_N] = {
	[SV_LIMIT] = F_INT("serverConcurrencyLimit", SRV, server_concurrency_limit, 1, INT32_MAX),
	[SV_FAIL_MODE] = F_ENUM("failMode", SRV, fail_mode, fail_modes),
	[SV_HEARTBEAT] = F_DUR("heartbeatTimeout", SRV, heartbeat_timeout_ns, 0, 24 * HOUR),
	[SV_TICK] = F_DUR("tick", SRV, tick_ns, 1 * MSEC, 10 * SEC),
	[SV_HANDSHAKE] = F_DUR("handshakeTimeout", SRV, handshake_timeout_ns, 1 * MSEC, 24 * HOUR),
	[SV_INTERFACES] = F_CUSTOM("interfaces", .type = "list of interface names, or auto (the default route's device)", .dflt = "none: sluiced --iface"),
	[SV_PIN_DIR] = F_STR("pinDir", SRV, pin_dir),
	[SV_TABLE_SIZES] = F_CUSTOM("tableSizes", .type = "mapping"),
	[SV_METRICS] = F_STR("metricsAddress", SRV, metrics_address),
	[SV_EVENTS] = F_INT("eventsPerSecond", SRV, events_per_second, 0, UINT32_MAX),
	[SV_CONTROL] = F_STR("controlSocket", SRV, control_socket),
	[SV_SHADOW] = F_BOOL("shadow", SRV, shadow),
	[SV_OVERBOOK] = F_NUM("ticketOverbooking", SRV, ticket_overbooking, 0, 16),
	[SV_HELD] = F_CUSTOM("heldSyns", .type = "mapping"),
	[SV_HALF_OPEN] = F_CUSTOM("halfOpen", .type = "mapping"),
	[SV_READ_GROUP] = F_STR("readGroup", SRV, read_group),
	[SV_CHAIN] = F_CUSTOM("xdpChain", .type = "mapping: sharing the interface with other XDP programs"),
	[SV_FLEET] = F_CUSTOM("fleet", .type = "mapping: this host in a fleet sharing levels' seats through etcd"),
};

enum { CH_NEXT, CH_ROOT, CH_SLOT, CH_N };
static const struct fdesc chain_fields[CH_N] = {
	[CH_NEXT] = F_STR("next", SRV, xdp_chain.next,
			  .type = "path of a pinned XDP program: it gets every frame sluice passes (tail call)"),
	[CH_ROOT] = F_STR("rootArray", SRV, xdp_chain.root_array,
			  .type = "path of a root program's pinned PROG_ARRAY: sluice takes a slot there instead of attaching"),
	[CH_SLOT] = F_INT("slot", SRV, xdp_chain.slot, 0, 65535),
};

static const struct enumval seat_ats[] = {
	{ "auto", SL_SEAT_AT_AUTO }, { "syn", SL_SEAT_AT_SYN }, { "ack", SL_SEAT_AT_ACK },
	{ NULL, 0 },
};

static const struct fdesc held_syn_fields[] = {
	F_INT("maxBytes", SRV, held_syns.max_bytes, 0, 1ll << 32),
	F_INT("maxBytesPerLevel", SRV, held_syns.max_bytes_per_level, 0, 1ll << 32),
};

enum { HO_SEAT_AT, HO_ENGAGE, HO_HOLD, HO_MIN_TIMEOUT, HO_N };
static const struct fdesc half_open_fields[HO_N] = {
	[HO_SEAT_AT] = F_ENUM("seatAt", SRV, half_open.seat_at, seat_ats),
	[HO_ENGAGE] = F_INT("engageAfter", SRV, half_open.engage_after, 1, 1000000),
	[HO_HOLD] = F_DUR("holdFor", SRV, half_open.hold_ns, 1 * SEC, 24 * HOUR),
	[HO_MIN_TIMEOUT] = F_DUR("minTimeout", SRV, half_open.min_timeout_ns, 1 * MSEC, 24 * HOUR),
};

static const struct fdesc table_size_fields[] = {
	F_INT("connections", SRV, table_sizes.connections, 1024, 16777216),
	F_INT("classes", SRV, table_sizes.classes, 1024, 1048576),
};
#undef SRV

int cd_server_defaults(struct sl_server_cfg *s)
{
	memset(s, 0, sizeof(*s));
	s->server_concurrency_limit = DEF_SERVER_CL;
	s->fail_mode = SL_FAIL_STATIC; /* BENCHMARKS part R: the limit holds, the most served */
	s->heartbeat_timeout_ns = DEF_HEARTBEAT;
	s->tick_ns = DEF_TICK;
	s->handshake_timeout_ns = DEF_HANDSHAKE;
	s->table_sizes.connections = DEF_CONNS;
	s->table_sizes.classes = DEF_CLASSES;
	s->events_per_second = DEF_EVENTS;
	s->held_syns.max_bytes = DEF_HELD_BYTES;
	s->held_syns.max_bytes_per_level = DEF_HELD_LEVEL_BYTES;
	s->half_open.seat_at = SL_SEAT_AT_AUTO;
	s->half_open.engage_after = DEF_ENGAGE_AFTER;
	s->half_open.hold_ns = DEF_HOLD;
	s->half_open.min_timeout_ns = DEF_MIN_HALF_OPEN;
	s->ticket_overbooking = 1;
	s->pin_dir = strdup(DEF_PIN_DIR);
	s->control_socket = strdup(DEF_CONTROL_SOCKET);
	cd_fleet_defaults(&s->fleet);
	return s->pin_dir && s->control_socket ? 0 : -ENOMEM;
}

/* For the schema: the defaults, with the strings as literals (the
 * schema is read, never freed). */
static void server_defaults(void *obj)
{
	struct sl_server_cfg *s = obj;

	cd_server_defaults(s);
	free(s->pin_dir);
	free(s->control_socket);
	s->pin_dir = (char *)DEF_PIN_DIR;
	s->control_socket = (char *)DEF_CONTROL_SOCKET;
}

const struct cd_schema cd_schema_server[] = {
	{ "Server", "spec", server_fields, SV_N, server_defaults, sizeof(struct sl_server_cfg) },
	{ "Server", "spec.heldSyns", held_syn_fields, ARRAY_SIZE(held_syn_fields), server_defaults,
	  sizeof(struct sl_server_cfg) },
	{ "Server", "spec.halfOpen", half_open_fields, HO_N, server_defaults, sizeof(struct sl_server_cfg) },
	{ "Server", "spec.tableSizes", table_size_fields, ARRAY_SIZE(table_size_fields), server_defaults,
	  sizeof(struct sl_server_cfg) },
	{ "Server", "spec.xdpChain", chain_fields, CH_N, server_defaults, sizeof(struct sl_server_cfg) },
	{ NULL },
};

void cd_server_release(struct sl_server_cfg *s)
{
	free(s->interfaces);
	free(s->pin_dir);
	free(s->metrics_address);
	free(s->control_socket);
	free(s->read_group);
	free(s->xdp_chain.next);
	free(s->xdp_chain.root_array);
	cd_fleet_release(&s->fleet);
	free(s->file);
	memset(s, 0, sizeof(*s));
}

/* Linux dev_valid_name(): 1..15 bytes, not "." or "..", no '/', ':' or
 * whitespace. */
static const char *ifname_problem(const char *s)
{
	size_t len = strlen(s);

	if (!len)
		return "must not be empty";
	if (len >= SL_IFNAME_SIZE)
		return NULL; /* reported with the length */
	if (!strcmp(s, ".") || !strcmp(s, ".."))
		return "is not a valid interface name";
	for (; *s; s++)
		if (*s == '/' || *s == ':' || *s == ' ' || (*s >= '\t' && *s <= '\r'))
			return "must not contain '/', ':' or whitespace";
	return NULL;
}

static void decode_interfaces(struct ctx *c, const struct sl_ynode *v,
			      struct sl_server_cfg *s)
{
	if (v->type != SL_Y_SEQ) {
		cd_err(c, v, "expected a list of interface names, got %s",
		    cd_describe(v).s);
		return;
	}
	s->interfaces_line = v->line;
	s->interfaces_column = v->column;
	if (!v->n_items)
		return;
	if (v->n_items > SL_MAX_INTERFACES) {
		cd_err(c, v, "%zu interfaces listed; at most %d allowed", v->n_items, SL_MAX_INTERFACES);
		return;
	}
	s->interfaces = calloc(v->n_items, sizeof(*s->interfaces));
	if (!s->interfaces) {
		cd_oom(c);
		return;
	}
	for (size_t i = 0; i < v->n_items; i++) {
		const struct sl_ynode *it = v->items[i];
		size_t old = cd_path_push_index(c, i);
		const char *name, *problem;
		QBUF;

		if (!cd_get_string(c, it, &name))
			goto next;
		if (strlen(name) >= SL_IFNAME_SIZE) {
			cd_err(c, it, "interface name '%s' is %zu characters long; at most %d allowed",
			    Q(it), strlen(name), SL_IFNAME_SIZE - 1);
			goto next;
		}
		if ((problem = ifname_problem(name))) {
			cd_err(c, it, "interface name '%s' %s", Q(it), problem);
			goto next;
		}
		for (size_t j = 0; j < i; j++) {
			const struct sl_ynode *o = v->items[j];

			if (o->type == SL_Y_STR && o->len == it->len &&
			    !memcmp(o->str, it->str, it->len)) {
				cd_err(c, it, "duplicate interface '%s'; also listed at %s:%u:%u",
				    Q(it), c->file, o->line, o->column);
				goto next;
			}
		}
		memcpy(s->interfaces[s->n_interfaces++], name, strlen(name) + 1);
next:
		cd_path_pop(c, old);
	}
}

static void decode_server_spec(struct ctx *c, const struct sl_ynode *spec,
			       struct sl_server_cfg *s)
{
	struct fhit h[SV_N], th[ARRAY_SIZE(table_size_fields)], hh[ARRAY_SIZE(held_syn_fields)];
	struct fhit ho[HO_N], ch[CH_N];
	size_t old = cd_path_push(c, "spec");

	if (!cd_decode_fields(c, spec, server_fields, SV_N, s, h))
		goto out;
	if (h[SV_INTERFACES].value) {
		size_t o2 = cd_path_push(c, "interfaces");

		decode_interfaces(c, h[SV_INTERFACES].value, s);
		cd_path_pop(c, o2);
	}
	if (h[SV_TABLE_SIZES].value) {
		size_t o2 = cd_path_push(c, "tableSizes");

		cd_decode_fields(c, h[SV_TABLE_SIZES].value, table_size_fields,
			      ARRAY_SIZE(table_size_fields), s, th);
		cd_path_pop(c, o2);
	}
	if (h[SV_HELD].value) {
		size_t o2 = cd_path_push(c, "heldSyns");

		cd_decode_fields(c, h[SV_HELD].value, held_syn_fields, ARRAY_SIZE(held_syn_fields),
				 s, hh);
		cd_path_pop(c, o2);
	}
	if (h[SV_HALF_OPEN].value) {
		size_t o2 = cd_path_push(c, "halfOpen");

		if (cd_decode_fields(c, h[SV_HALF_OPEN].value, half_open_fields, HO_N, s, ho) &&
		    ho[HO_MIN_TIMEOUT].value && ho[HO_MIN_TIMEOUT].ok && h[SV_HANDSHAKE].ok &&
		    s->half_open.min_timeout_ns > s->handshake_timeout_ns) {
			size_t o3 = cd_path_push(c, "minTimeout");

			cd_warn(c, ho[HO_MIN_TIMEOUT].value,
				"minTimeout %s is longer than handshakeTimeout %s; half-open seats last handshakeTimeout",
				cd_dur(s->half_open.min_timeout_ns).s, cd_dur(s->handshake_timeout_ns).s);
			cd_path_pop(c, o3);
		}
		cd_path_pop(c, o2);
	}
	if (h[SV_CHAIN].value) {
		size_t o2 = cd_path_push(c, "xdpChain");

		if (cd_decode_fields(c, h[SV_CHAIN].value, chain_fields, CH_N, s, ch)) {
			for (int i = CH_NEXT; i <= CH_ROOT; i++) {
				const char *path = i == CH_NEXT ? s->xdp_chain.next : s->xdp_chain.root_array;
				size_t o3;
				QBUF;

				if (!ch[i].value || !ch[i].ok || path[0] == '/')
					continue;
				o3 = cd_path_push(c, chain_fields[i].name);
				cd_err(c, ch[i].value, "must be the absolute path of a pin (bpffs), got '%s'",
				       Q(ch[i].value));
				cd_path_pop(c, o3);
			}
			if (ch[CH_SLOT].key && !ch[CH_ROOT].key) {
				size_t o3 = cd_path_push(c, "slot");

				cd_warn(c, ch[CH_SLOT].key, "ignored without rootArray (the slot is one of its)");
				cd_path_pop(c, o3);
			}
		}
		cd_path_pop(c, o2);
	}
	if (h[SV_FLEET].value)
		cd_decode_fleet(c, h[SV_FLEET].value, s);
	if (h[SV_PIN_DIR].value && h[SV_PIN_DIR].ok) {
		size_t o2 = cd_path_push(c, "pinDir");
		const struct sl_ynode *v = h[SV_PIN_DIR].value;
		QBUF;

		if (s->pin_dir[0] != '/')
			cd_err(c, v, "must be an absolute path, got '%s'", Q(v));
		else if (strlen(s->pin_dir) >= 1024)
			cd_err(c, v, "path is %zu characters long; at most 1023 allowed",
			    strlen(s->pin_dir));
		cd_path_pop(c, o2);
	}
	if (h[SV_CONTROL].value && h[SV_CONTROL].ok) {
		size_t o2 = cd_path_push(c, "controlSocket");
		const struct sl_ynode *v = h[SV_CONTROL].value;
		QBUF;

		if (s->control_socket[0] != '/')
			cd_err(c, v, "must be an absolute path, got '%s'", Q(v));
		else if (strlen(s->control_socket) >= 108)
			cd_err(c, v, "path is %zu bytes long; a Unix socket path holds at most 107",
			       strlen(s->control_socket));
		cd_path_pop(c, o2);
	}
	if (h[SV_READ_GROUP].value && h[SV_READ_GROUP].ok) {
		size_t o2 = cd_path_push(c, "readGroup");
		const char *g = s->read_group;
		bool ok = *g && strlen(g) <= 32 && (*g == '_' || (*g >= 'a' && *g <= 'z'));
		QBUF;

		for (const char *p = g; ok && *p; p++)
			ok = *p == '_' || *p == '-' || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
			     (*p == '$' && !p[1]);
		if (!ok)
			cd_err(c, h[SV_READ_GROUP].value,
			       "'%s' is not a group name (1..32 of a-z, 0-9, '_', '-', starting with a letter or '_')",
			       Q(h[SV_READ_GROUP].value));
		cd_path_pop(c, o2);
	}
	if (h[SV_METRICS].value && h[SV_METRICS].ok) {
		size_t o2 = cd_path_push(c, "metricsAddress");
		struct sockaddr_storage ss;
		socklen_t sl;
		char why[128];
		QBUF;

		if (!s->metrics_address[0])
			cd_err(c, h[SV_METRICS].value,
			    "must not be empty; expected host:port, e.g. 127.0.0.1:9464 (omit the field to disable metrics)");
		else if (sl_parse_hostport(s->metrics_address, &ss, &sl, why, sizeof(why)))
			cd_err(c, h[SV_METRICS].value, "'%s': %s", Q(h[SV_METRICS].value), why);
		cd_path_pop(c, o2);
	}
	/* Cross-field advice, only with valid values. */
	if (h[SV_HEARTBEAT].ok && h[SV_TICK].ok && s->heartbeat_timeout_ns &&
	    s->heartbeat_timeout_ns < 2 * s->tick_ns) {
		const char *field = h[SV_HEARTBEAT].value ? "heartbeatTimeout" : "tick";
		const struct sl_ynode *at = h[SV_HEARTBEAT].value ?
			h[SV_HEARTBEAT].value : h[SV_TICK].value;
		size_t o2 = cd_path_push(c, field);

		cd_warn(c, at ? at : spec,
		     "heartbeatTimeout %s is shorter than two ticks (tick %s); the failsafe may trigger between heartbeats",
		     cd_dur(s->heartbeat_timeout_ns).s,
		     cd_dur(s->tick_ns).s);
		cd_path_pop(c, o2);
	}
	if (h[SV_HEARTBEAT].value && h[SV_HEARTBEAT].ok && !s->heartbeat_timeout_ns) {
		size_t o2 = cd_path_push(c, "heartbeatTimeout");

		/* 0s reads as "no time-out" and is a fail-static nobody asked
		 * for (issue 26): say what it does. */
		cd_warn(c, h[SV_HEARTBEAT].value,
		     "0s turns the failsafe off: with the daemon dead, the data path keeps judging SYNs by its "
		     "last limits for good, nobody dispatches what it defers, and seats held by handshakes "
		     "that never complete are never given back");
		cd_path_pop(c, o2);
	}
	if (h[SV_FAIL_MODE].value && h[SV_FAIL_MODE].ok && h[SV_HEARTBEAT].ok &&
	    s->fail_mode != SL_FAIL_OPEN && !s->heartbeat_timeout_ns) {
		size_t o2 = cd_path_push(c, "failMode");

		cd_warn(c, h[SV_FAIL_MODE].value,
		     "failMode %s has no effect while heartbeatTimeout is 0s (failsafe disabled)",
		     sl_fail_mode_name(s->fail_mode));
		cd_path_pop(c, o2);
	}
out:
	cd_path_pop(c, old);
}

void cd_decode_server(struct load *L, const struct object *o)
{
	struct ctx *c = L->c;
	struct sl_server_cfg scratch, *s = &L->cfg->server;

	if (L->server_seen) {
		size_t old = cd_path_push(c, "kind");

		cd_err(c, o->kind, "only one Server object is allowed; also defined at %s:%u:%u",
		    c->file, L->server_line, L->server_col);
		cd_path_pop(c, old);
		/* decode anyway to report its own errors */
		if (cd_server_defaults(&scratch)) {
			cd_oom(c);
			return;
		}
		s = &scratch;
	} else {
		L->server_seen = true;
		L->server_line = o->kind->line;
		L->server_col = o->kind->column;
		s->present = true;
		s->line = o->root->line;
		s->column = o->root->column;
		if (!(s->file = strdup(c->file)))
			cd_oom(c);
	}
	if (o->spec)
		decode_server_spec(c, o->spec, s);
	if (s == &scratch)
		cd_server_release(&scratch);
}
