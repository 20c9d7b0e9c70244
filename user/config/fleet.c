// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The fleet's configuration: Server spec.fleet (the etcd endpoints and
 * this host's name in the fleet), a Limited level's limited.fleet (its
 * seats shared by the fleet's hosts, of which this one holds a floor),
 * and the checks between them, after every object is read.
 *
 * A fleet level must never admit past the fleet's budget: the daemon's
 * absence is bounded (no failMode open, no heartbeatTimeout 0s), nothing
 * dispatches beyond a level's limit (no ticket overbooking), and a host
 * gives its grant up before its lease can expire: heartbeatTimeout +
 * drainTimeout + syncPeriod + margin < leaseTTL, margin = max(0.5s,
 * leaseTTL / 10) (lib/lease_margin.h, the grant's deadline's rule too).
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "config/decode.h"
#include "config/duration.h"
#include "lib/lease_margin.h"

#define DEF_LEASE_TTL (6 * SEC)
#define DEF_SYNC      (200 * MSEC)
#define DEF_TIMEOUT   (300 * MSEC)
#define DEF_DRAIN     (1 * SEC)
#define NAME_MAX_LEN  63 /* a DNS label: it is part of every key */

#define SRV struct sl_server_cfg
enum { FL_NAME, FL_NODE, FL_ENDPOINTS, FL_TTL, FL_SYNC, FL_TIMEOUT, FL_TLS, FL_N };
static const struct fdesc fleet_fields[FL_N] = {
	[FL_NAME] = F_STR("name", SRV, fleet.name, .required = true,
			  .type = "string (letters, digits, '-', '_', '.'; at most 63): the fleet's keys are under /sluice/NAME/"),
	[FL_NODE] = F_STR("node", SRV, fleet.node, .dflt = "the host name",
			  .type = "string (as name): this host in the fleet; one already live is refused"),
	[FL_ENDPOINTS] = F_CUSTOM("endpoints", .required = true,
				  .type = "list of etcd endpoints, http://IP:PORT (or https:// with tls)"),
	[FL_TTL] = F_DUR("leaseTTL", SRV, fleet.lease_ttl_ns, 2 * SEC, 1 * HOUR),
	[FL_SYNC] = F_DUR("syncPeriod", SRV, fleet.sync_period_ns, 10 * MSEC, 1 * MIN),
	[FL_TIMEOUT] = F_DUR("requestTimeout", SRV, fleet.request_timeout_ns, 10 * MSEC, 1 * MIN),
	[FL_TLS] = F_CUSTOM("tls", .type = "mapping: a client certificate for etcd's --client-cert-auth"),
};

enum { TL_CA, TL_CERT, TL_KEY, TL_N };
static const struct fdesc tls_fields[TL_N] = {
	[TL_CA] = F_STR("caFile", SRV, fleet.tls.ca_file, .required = true, .type = "path: etcd's CA (PEM)"),
	[TL_CERT] = F_STR("certFile", SRV, fleet.tls.cert_file, .required = true,
			  .type = "path: this host's client certificate (PEM)"),
	[TL_KEY] = F_STR("keyFile", SRV, fleet.tls.key_file, .required = true, .type = "path: its key (PEM)"),
};
#undef SRV

#define LVL struct sl_level_cfg
enum { LF_SEATS, LF_FLOOR, LF_DRAIN, LF_N };
static const struct fdesc level_fleet_fields[LF_N] = {
	[LF_SEATS] = F_INT("seats", LVL, fleet.seats, 1, INT32_MAX, .required = true,
			   .type = "integer: the fleet's budget for this level, in seats"),
	[LF_FLOOR] = F_INT("floor", LVL, fleet.floor, 0, INT32_MAX),
	[LF_DRAIN] = F_DUR("drainTimeout", LVL, fleet.drain_ns, 0, 1 * HOUR),
};
#undef LVL

void cd_fleet_defaults(struct sl_fleet_cfg *f)
{
	memset(f, 0, sizeof(*f));
	f->lease_ttl_ns = DEF_LEASE_TTL;
	f->sync_period_ns = DEF_SYNC;
	f->request_timeout_ns = DEF_TIMEOUT;
}

void cd_level_fleet_defaults(struct sl_level_cfg *l)
{
	memset(&l->fleet, 0, sizeof(l->fleet));
	l->fleet.drain_ns = DEF_DRAIN;
}

void cd_fleet_release(struct sl_fleet_cfg *f)
{
	free(f->name);
	free(f->node);
	for (size_t i = 0; i < f->n_endpoints; i++)
		free(f->endpoints[i]);
	free(f->endpoints);
	free(f->tls.ca_file);
	free(f->tls.cert_file);
	free(f->tls.key_file);
	memset(f, 0, sizeof(*f));
}

static void schema_server(void *obj)
{
	cd_fleet_defaults(&((struct sl_server_cfg *)obj)->fleet);
}

static void schema_level(void *obj)
{
	cd_level_fleet_defaults(obj);
}

const struct cd_schema cd_schema_fleet[] = {
	{ "Server", "spec.fleet", fleet_fields, FL_N, schema_server, sizeof(struct sl_server_cfg) },
	{ "Server", "spec.fleet.tls", tls_fields, TL_N, schema_server, sizeof(struct sl_server_cfg) },
	{ "PriorityLevelConfiguration", "spec.limited.fleet", level_fleet_fields, LF_N, schema_level,
	  sizeof(struct sl_level_cfg) },
	{ NULL },
};

/* A name that is one path component of every key. */
static void check_key_name(struct ctx *c, const struct fhit *h, const char *field, const char *v)
{
	size_t old, n;
	QBUF;

	if (!h->value || !h->ok || !v)
		return;
	n = strlen(v);
	old = cd_path_push(c, field);
	if (!n || n > NAME_MAX_LEN || strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != n ||
	    !strcmp(v, ".") || !strcmp(v, ".."))
		cd_err(c, h->value, "'%s' is not a name: 1 to %d letters, digits, '-', '_' or '.' (it is part "
		       "of every key)", Q(h->value), NAME_MAX_LEN);
	cd_path_pop(c, old);
}

/* "http://198.51.100.7:2379" or "https://[2001:db8::7]:2379": an address,
 * not a name (the client thread resolves nothing). */
static const char *endpoint_problem(const char *e, bool *https)
{
	char host[64];
	const char *rest, *colon;
	size_t hl;
	long port;
	char *end;
	unsigned char buf[16];

	*https = !strncmp(e, "https://", 8);
	if (!*https && strncmp(e, "http://", 7))
		return "must start with http:// or https://";
	rest = e + (*https ? 8 : 7);
	if (*rest == '[') {
		colon = strstr(rest, "]:");
		if (!colon)
			return "needs [IPv6]:PORT";
		hl = (size_t)(colon - rest - 1);
		if (hl >= sizeof(host))
			return "has no IP address";
		memcpy(host, rest + 1, hl);
		host[hl] = '\0';
		if (inet_pton(AF_INET6, host, buf) != 1)
			return "has no IPv6 address between the brackets";
		colon++;
	} else {
		colon = strrchr(rest, ':');
		if (!colon || (size_t)(colon - rest) >= sizeof(host))
			return "needs IP:PORT";
		hl = (size_t)(colon - rest);
		memcpy(host, rest, hl);
		host[hl] = '\0';
		if (inet_pton(AF_INET, host, buf) != 1)
			return "needs an IP address (names are not resolved)";
	}
	port = strtol(colon + 1, &end, 10);
	if (end == colon + 1 || port < 1 || port > 65535 || (*end && strcmp(end, "/")))
		return "needs a port 1-65535 (and no path)";
	return NULL;
}

static void decode_endpoints(struct ctx *c, const struct sl_ynode *v, struct sl_fleet_cfg *f,
			     int *scheme)
{
	size_t old = cd_path_push(c, "endpoints");

	*scheme = -1;
	if (!cd_expect_seq(c, v, "a list of etcd endpoints") || !v->n_items) {
		if (v->type == SL_Y_SEQ)
			cd_err(c, v, "needs at least one endpoint");
		goto out;
	}
	f->endpoints = calloc(v->n_items, sizeof(*f->endpoints));
	if (!f->endpoints) {
		cd_oom(c);
		goto out;
	}
	for (size_t i = 0; i < v->n_items; i++) {
		const struct sl_ynode *it = v->items[i];
		size_t o2 = cd_path_push_index(c, i);
		const char *e, *problem;
		bool https;
		QBUF;

		if (cd_get_string(c, it, &e)) {
			if ((problem = endpoint_problem(e, &https))) {
				cd_err(c, it, "'%s' %s", Q(it), problem);
			} else if (*scheme >= 0 && *scheme != https) {
				cd_err(c, it, "'%s': every endpoint takes the same scheme (http or https)", Q(it));
			} else {
				*scheme = https;
				f->endpoints[f->n_endpoints] = strdup(e);
				if (!f->endpoints[f->n_endpoints++])
					cd_oom(c);
			}
		}
		cd_path_pop(c, o2);
	}
out:
	cd_path_pop(c, old);
}

void cd_decode_fleet(struct ctx *c, const struct sl_ynode *map, struct sl_server_cfg *s)
{
	struct fhit h[FL_N], th[TL_N];
	size_t old = cd_path_push(c, "fleet");
	int https = -1;

	s->fleet.set = true;
	s->fleet.line = map->line;
	s->fleet.column = map->column;
	if (!cd_decode_fields(c, map, fleet_fields, FL_N, s, h))
		goto out;
	check_key_name(c, &h[FL_NAME], "name", s->fleet.name);
	check_key_name(c, &h[FL_NODE], "node", s->fleet.node);
	if (h[FL_ENDPOINTS].value)
		decode_endpoints(c, h[FL_ENDPOINTS].value, &s->fleet, &https);
	if (h[FL_TLS].value) {
		size_t o2 = cd_path_push(c, "tls");

		if (cd_decode_fields(c, h[FL_TLS].value, tls_fields, TL_N, s, th) && https == 0)
			cd_err(c, h[FL_TLS].key, "a client certificate over http:// would travel in the "
			       "clear: give the endpoints as https://");
		cd_path_pop(c, o2);
	} else if (https == 1) {
		size_t o2 = cd_path_push(c, "endpoints");

		cd_err(c, h[FL_ENDPOINTS].value, "https:// endpoints need tls: {caFile, certFile, keyFile} "
		       "(whoever can write the fleet's keys can starve every host)");
		cd_path_pop(c, o2);
	}
	if (h[FL_SYNC].ok && h[FL_TTL].ok && s->fleet.sync_period_ns * 2 > s->fleet.lease_ttl_ns) {
		size_t o2 = cd_path_push(c, "syncPeriod");

		cd_err(c, h[FL_SYNC].value ? h[FL_SYNC].value : map, "syncPeriod %s is over half the leaseTTL %s: "
		       "one late keepalive would lose the lease", cd_dur(s->fleet.sync_period_ns).s,
		       cd_dur(s->fleet.lease_ttl_ns).s);
		cd_path_pop(c, o2);
	}
out:
	cd_path_pop(c, old);
}

void cd_decode_level_fleet(struct ctx *c, const struct sl_ynode *map, struct sl_level_cfg *l)
{
	struct fhit h[LF_N];
	size_t old = cd_path_push(c, "fleet");

	l->fleet.set = true;
	l->fleet.line = map->line;
	l->fleet.column = map->column;
	if (cd_decode_fields(c, map, level_fleet_fields, LF_N, l, h) && h[LF_FLOOR].value &&
	    h[LF_FLOOR].ok && h[LF_SEATS].ok && l->fleet.floor > l->fleet.seats) {
		size_t o2 = cd_path_push(c, "floor");

		cd_err(c, h[LF_FLOOR].value, "floor %u is over the fleet's %u seats", l->fleet.floor,
		       l->fleet.seats);
		cd_path_pop(c, o2);
	}
	cd_path_pop(c, old);
}

/* The Server's settings that would let a fleet level admit past its
 * budget, said once at spec.fleet. */
static void check_server_bounds(struct ctx *c, const struct sl_server_cfg *s)
{
	snprintf(c->object, sizeof(c->object), "Server");
	if (s->fail_mode == SL_FAIL_OPEN) {
		cd_path_set(c, "spec.failMode");
		cd_err_at(c, SL_SEV_ERROR, s->fleet.line, s->fleet.column,
			  "failMode open with a fleet level: a dead daemon's host would admit past the "
			  "fleet's budget; use static (each host holds its floor) or closed");
	}
	if (!s->heartbeat_timeout_ns) {
		cd_path_set(c, "spec.heartbeatTimeout");
		cd_err_at(c, SL_SEV_ERROR, s->fleet.line, s->fleet.column,
			  "heartbeatTimeout 0s with a fleet level: a dead daemon's grant would never end");
	}
	if (s->ticket_overbooking > 1) {
		cd_path_set(c, "spec.ticketOverbooking");
		cd_err_at(c, SL_SEV_ERROR, s->fleet.line, s->fleet.column,
			  "ticketOverbooking %g with a fleet level: tickets would dispatch past the fleet's "
			  "budget; at most 1", s->ticket_overbooking);
	}
}

void cd_check_fleet(struct load *L)
{
	struct ctx *c = L->c;
	const struct sl_server_cfg *s = &L->cfg->server;
	bool any = false;

	for (size_t i = 0; i < L->cfg->n_levels; i++) {
		const struct sl_level_cfg *l = &L->cfg->levels[i];
		uint64_t need;

		/* (a mandatory level's fleet is refused where it is read) */
		if (!l->fleet.set || l->mandatory)
			continue;
		any = true;
		snprintf(c->object, sizeof(c->object), "PriorityLevelConfiguration/%s", l->name);
		cd_path_set(c, "spec.limited.fleet");
		if (!s->fleet.set) {
			cd_err_at(c, SL_SEV_ERROR, l->fleet.line, l->fleet.column,
				  "needs Server spec.fleet: the etcd endpoints and the fleet's name");
			continue;
		}
		need = s->heartbeat_timeout_ns + l->fleet.drain_ns + s->fleet.sync_period_ns +
		       sl_lease_margin_ns(s->fleet.lease_ttl_ns);
		if (need >= s->fleet.lease_ttl_ns) {
			cd_path_set(c, "spec.limited.fleet.drainTimeout");
			cd_err_at(c, SL_SEV_ERROR, l->fleet.line, l->fleet.column,
				  "heartbeatTimeout %s + drainTimeout %s + syncPeriod %s + margin %s = %s "
				  "must be under Server spec.fleet.leaseTTL %s, so that a host gives its "
				  "seats up before its lease can expire", cd_dur(s->heartbeat_timeout_ns).s,
				  cd_dur(l->fleet.drain_ns).s, cd_dur(s->fleet.sync_period_ns).s,
				  cd_dur(sl_lease_margin_ns(s->fleet.lease_ttl_ns)).s, cd_dur(need).s,
				  cd_dur(s->fleet.lease_ttl_ns).s);
		}
	}
	if (any && s->fleet.set)
		check_server_bounds(c, s);
	else if (s->fleet.set) {
		snprintf(c->object, sizeof(c->object), "Server");
		cd_path_set(c, "spec.fleet");
		cd_err_at(c, SL_SEV_WARNING, s->fleet.line, s->fleet.column,
			  "no level names the fleet (limited.fleet): it shares nothing");
	}
	c->object[0] = '\0';
	cd_path_set(c, "");
}
