// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* kind: PriorityLevelConfiguration (Kubernetes flowcontrol v1), the
 * mandatory exempt and catch-all levels included. */
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
#include "lib/grow.h"
#include "lib/shuffle.h"
#include "lib/syn_retransmit.h"

#define MAX_ENTROPY_BITS SL_SHUFFLE_MAX_BITS /* shuffle sharding: a hand's entropy */
/* Kubernetes validation.go priorityLevelConfigurationQueuingMaxQueues
 * (10^7), below the dealer's own deck bound; the QueueSet refuses more. */
#define MAX_DECK_SIZE    10000000u

#define DEF_LIMITED_SHARES   30
#define DEF_QUEUES           64
#define DEF_HAND_SIZE        8
#define DEF_QUEUE_LEN        50
/* How long a deferred connection may wait at most, and the controlled
 * delay of its queue (engine/queueset.h sl_qs_shed): defaults for clients
 * that give up a connect after 3 s.  A burst waits up to the interval; a
 * standing queue sheds whoever waited past the target, but for its newest,
 * which the wait limit bounds. */
#define DEF_QUEUE_WAIT       SL_DEFERRED_WAIT_NS
#define DEF_DELAY_TARGET     SL_DEFERRED_DELAY_TARGET_NS
#define DEF_DELAY_INTERVAL   SL_DEFERRED_DELAY_INTERVAL_NS
#define CATCH_ALL_SHARES     5

/* ---- kind: PriorityLevelConfiguration ------------------------------------ */

static const struct enumval level_types[] = {
	{ "Exempt", SL_LEVEL_EXEMPT }, { "Limited", SL_LEVEL_LIMITED }, { NULL, 0 },
};

static const struct enumval limit_responses[] = {
	{ "Queue", SL_RESP_QUEUE }, { "Reject", SL_RESP_REJECT }, { NULL, 0 },
};

#define LVL struct sl_level_cfg

enum { PL_TYPE, PL_EXEMPT, PL_LIMITED, PL_PORTS, PL_SEATS, PL_N };
static const struct fdesc level_fields[PL_N] = {
	[PL_TYPE] = F_ENUM("type", LVL, type, level_types, .required = true),
	[PL_EXEMPT] = F_CUSTOM("exempt", .type = "mapping (type Exempt)"),
	[PL_LIMITED] = F_CUSTOM("limited", .type = "mapping (type Limited: required)"),
	/* moved to FlowSchema: known here only to say so */
	[PL_PORTS] = F_CUSTOM("ports", .type = "not here: FlowSchema rules[].destinations[].ports"),
	[PL_SEATS] = F_CUSTOM("seatsPerConnection", .type = "not here: FlowSchema spec.seatsPerConnection"),
};

static const struct fdesc exempt_fields[] = {
	F_INT("nominalConcurrencyShares", LVL, shares, 0, INT32_MAX),
	F_INT("lendablePercent", LVL, lendable_percent, 0, 100),
};

enum { LM_SHARES, LM_LENDABLE, LM_BORROWING, LM_RESPONSE, LM_FLEET, LM_N };
static const struct fdesc limited_fields[LM_N] = {
	[LM_SHARES] = F_INT("nominalConcurrencyShares", LVL, shares, 0, INT32_MAX),
	[LM_LENDABLE] = F_INT("lendablePercent", LVL, lendable_percent, 0, 100),
	[LM_BORROWING] = F_INT("borrowingLimitPercent", LVL, borrowing_limit_percent, 0, INT32_MAX,
			       .dflt = "no limit"),
	[LM_RESPONSE] = F_CUSTOM("limitResponse", .type = "mapping (required)"),
	[LM_FLEET] = F_CUSTOM("fleet", .type = "mapping: the level's seats shared by a fleet of hosts (Server spec.fleet)"),
};

/* flowcontrol.apiserver.k8s.io/v1beta1 and v1beta2: the shares are
 * assuredConcurrencyShares (the same number, renamed in v1beta3), and
 * there is no lending nor borrowing (0 and unset, the defaults). */
enum { LB_SHARES, LB_RESPONSE, LB_N };
static const struct fdesc limited_fields_beta[LB_N] = {
	[LB_SHARES] = F_INT("assuredConcurrencyShares", LVL, shares, 1, INT32_MAX),
	[LB_RESPONSE] = F_CUSTOM("limitResponse", .type = "mapping (required)"),
};

enum { LR_TYPE, LR_QUEUING, LR_N };
static const struct fdesc response_fields[LR_N] = {
	[LR_TYPE] = F_ENUM("type", LVL, limit_response, limit_responses, .required = true),
	[LR_QUEUING] = F_CUSTOM("queuing", .type = "mapping (type Queue only)"),
};

enum { QU_QUEUES, QU_HAND, QU_LENGTH, QU_WAIT, QU_TARGET, QU_INTERVAL, QU_N };
static const struct fdesc queuing_fields[QU_N] = {
	[QU_QUEUES] = F_INT("queues", LVL, queues, 1, MAX_DECK_SIZE,
			    .hint_low = "to turn queuing off, use limitResponse.type: Reject"),
	[QU_HAND] = F_INT("handSize", LVL, hand_size, 1, INT32_MAX),
	[QU_LENGTH] = F_INT("queueLengthLimit", LVL, queue_length_limit, 1, INT32_MAX),
	[QU_WAIT] = F_DUR("queueWaitLimit", LVL, queue_wait_limit_ns, 1 * MSEC, 1 * HOUR),
	[QU_TARGET] = F_DUR("queueDelayTarget", LVL, delay_target_ns, 1 * MSEC, 1 * HOUR),
	[QU_INTERVAL] = F_DUR("queueDelayInterval", LVL, delay_interval_ns, 1 * MSEC, 1 * HOUR),
};
#undef LVL

/*
 * Shuffle-sharding advice (KEP-1040 "Probability of Collisions"): warn when 4 elephant flows
 * cover a mouse flow's whole hand with probability above
 * SL_MOUSE_ODDS_WARN.  One queue is a plain FIFO by choice (no hashing),
 * not poor shuffle sharding: no advice there.
 */
static void check_mouse_odds(struct ctx *c, const struct sl_ynode *qnode,
			     const struct fhit *h, const struct sl_level_cfg *l)
{
	const struct sl_ynode *at = h[QU_HAND].value ? h[QU_HAND].value :
				    h[QU_QUEUES].value ? h[QU_QUEUES].value : qnode;
	double p1, p4;
	char better[160] = "";
	bool hand_helps;
	size_t old;

	if (l->queues <= 1)
		return;
	p4 = sl_shuffle_mouse_odds(l->queues, l->hand_size, 4);
	if (!(p4 > SL_MOUSE_ODDS_WARN))
		return;
	p1 = sl_shuffle_mouse_odds(l->queues, l->hand_size, 1);
	/* Suggest the fewest queues (doubling) that bring it under 1%. */
	for (uint64_t q = (uint64_t)l->queues * 2; q <= MAX_DECK_SIZE; q *= 2) {
		double pq;

		if (sl_shuffle_validate((uint32_t)q, l->hand_size, NULL, 0))
			break;
		pq = sl_shuffle_mouse_odds((uint32_t)q, l->hand_size, 4);
		if (pq >= 0 && pq <= 0.01) {
			snprintf(better, sizeof(better), " (e.g. %" PRIu64 " queues: %.3g)",
				 q, pq);
			break;
		}
	}
	/* A bigger hand helps only when queues are plenty. */
	hand_helps = !sl_shuffle_validate(l->queues, l->hand_size + 1, NULL, 0) &&
		     sl_shuffle_mouse_odds(l->queues, l->hand_size + 1, 4) < p4;
	old = c->plen;
	if (h[QU_HAND].value || h[QU_QUEUES].value)
		cd_path_push(c, h[QU_HAND].value ? "handSize" : "queues");
	cd_warn(c, at,
		"with %u queues and handSize %u, 4 elephant flows crush a mouse flow with probability %.3g (one elephant: %.3g); raise queues%s%s",
		l->queues, l->hand_size, p4, p1, better,
		hand_helps ? " or handSize" : "");
	cd_path_pop(c, old);
}

/* Kubernetes shuffle-sharding rules (validation.go, shufflesharding.go). */
static void check_queuing(struct ctx *c, const struct sl_ynode *qnode,
			  const struct fhit *h, const struct sl_level_cfg *l)
{
	const struct sl_ynode *hand = h[QU_HAND].value, *queues = h[QU_QUEUES].value;
	int bits;

	if (!h[QU_HAND].ok || !h[QU_QUEUES].ok)
		return;
	if (l->hand_size > l->queues) {
		if (hand) {
			size_t old = cd_path_push(c, "handSize");

			cd_err(c, hand, "must not exceed queues (%u), got %u",
			    l->queues, l->hand_size);
			cd_path_pop(c, old);
		} else {
			size_t old = cd_path_push(c, "queues");

			cd_err(c, queues ? queues : qnode,
			    "%u queues are fewer than the default handSize %u; set handSize to at most %u",
			    l->queues, l->hand_size, l->queues);
			cd_path_pop(c, old);
		}
		return;
	}
	bits = sl_shuffle_entropy_bits(l->queues, l->hand_size);
	if (bits <= MAX_ENTROPY_BITS &&
	    !sl_shuffle_validate(l->queues, l->hand_size, NULL, 0)) {
		check_mouse_odds(c, qnode, h, l);
		return;
	}
	if (hand || !queues) {
		size_t old = cd_path_push(c, "handSize");

		cd_err(c, hand ? hand : qnode,
		    "%u needs %d bits of entropy with %u queues; at most %d allowed",
		    l->hand_size, bits, l->queues, MAX_ENTROPY_BITS);
		cd_path_pop(c, old);
	} else {
		size_t old = cd_path_push(c, "queues");

		cd_err(c, queues,
		    "%u queues need %d bits of entropy with the default handSize %u; at most %d allowed",
		    l->queues, bits, l->hand_size, MAX_ENTROPY_BITS);
		cd_path_pop(c, old);
	}
}

/* The wait bounds (sluice's own fields): the target within its interval,
 * an interval the wait limit leaves room for, and a wait limit clients
 * live to see the end of. */
static void check_delay(struct ctx *c, const struct sl_ynode *q, const struct fhit *h,
			const struct sl_level_cfg *l)
{
	const struct sl_ynode *target = h[QU_TARGET].value, *interval = h[QU_INTERVAL].value;
	const struct sl_ynode *wait = h[QU_WAIT].value;
	size_t old;

	if (!h[QU_TARGET].ok || !h[QU_INTERVAL].ok || !h[QU_WAIT].ok)
		return;
	if (l->delay_target_ns > l->delay_interval_ns) {
		old = cd_path_push(c, target ? "queueDelayTarget" : "queueDelayInterval");
		cd_err(c, target ? target : interval ? interval : q,
		       "the delay target %s must not exceed queueDelayInterval (%s): a standing queue is one whose backlog has lasted the interval",
		       cd_dur(l->delay_target_ns).s, cd_dur(l->delay_interval_ns).s);
		cd_path_pop(c, old);
		return;
	}
	if (l->delay_interval_ns >= l->queue_wait_limit_ns && (interval || wait)) {
		old = cd_path_push(c, interval ? "queueDelayInterval" : "queueWaitLimit");
		cd_warn(c, interval ? interval : wait,
			"queueDelayInterval %s is not shorter than queueWaitLimit %s: no backlog stands long enough to be shed, every wait ends at the limit",
			cd_dur(l->delay_interval_ns).s, cd_dur(l->queue_wait_limit_ns).s);
		cd_path_pop(c, old);
	}
	if (wait && l->queue_wait_limit_ns >= SL_SYN_IMPATIENT_NS) {
		old = cd_path_push(c, "queueWaitLimit");
		cd_warn(c, wait,
			"%s is at or beyond " SL_SYN_IMPATIENT_TEXT "; a connection still waiting then ends in a silent time-out (keep it under your clients' connect timeout)",
			cd_dur(l->queue_wait_limit_ns).s);
		cd_path_pop(c, old);
	}
}

static void decode_queuing(struct ctx *c, const struct sl_ynode *q,
			   struct sl_level_cfg *l)
{
	struct fhit h[QU_N];
	size_t old = cd_path_push(c, "queuing");

	if (cd_decode_fields(c, q, queuing_fields, QU_N, l, h)) {
		check_queuing(c, q, h, l);
		check_delay(c, q, h, l);
	}
	cd_path_pop(c, old);
}

static void queuing_defaults(struct sl_level_cfg *l)
{
	l->queues = DEF_QUEUES;
	l->hand_size = DEF_HAND_SIZE;
	l->queue_length_limit = DEF_QUEUE_LEN;
	l->queue_wait_limit_ns = DEF_QUEUE_WAIT;
	l->delay_target_ns = DEF_DELAY_TARGET;
	l->delay_interval_ns = DEF_DELAY_INTERVAL;
}

static void queuing_clear(struct sl_level_cfg *l)
{
	l->queues = l->hand_size = l->queue_length_limit = 0;
	l->queue_wait_limit_ns = 0;
	l->delay_target_ns = l->delay_interval_ns = 0;
}

static void decode_limit_response(struct ctx *c, const struct sl_ynode *n,
				  struct sl_level_cfg *l)
{
	struct fhit h[LR_N];
	size_t old = cd_path_push(c, "limitResponse");

	l->limit_response = SL_RESP_REJECT;
	if (!cd_decode_fields(c, n, response_fields, LR_N, l, h))
		goto out;
	if (h[LR_TYPE].ok && l->limit_response == SL_RESP_QUEUE) {
		queuing_defaults(l);
		if (h[LR_QUEUING].value)
			decode_queuing(c, h[LR_QUEUING].value, l);
	} else if (h[LR_QUEUING].value) {
		struct sl_level_cfg scratch = { 0 };

		if (h[LR_TYPE].ok) {
			size_t o2 = cd_path_push(c, "queuing");

			cd_err(c, h[LR_QUEUING].key,
			    "only allowed when type is Queue (type is Reject)");
			cd_path_pop(c, o2);
		}
		queuing_defaults(&scratch);
		c->mute_warnings++;
		decode_queuing(c, h[LR_QUEUING].value, &scratch);
		c->mute_warnings--;
	}
	if (l->limit_response != SL_RESP_QUEUE)
		queuing_clear(l);
out:
	cd_path_pop(c, old);
}

static void limited_defaults(struct sl_level_cfg *l)
{
	l->shares = DEF_LIMITED_SHARES;
	l->lendable_percent = 0;
	l->borrowing_limit_percent = -1;
	l->limit_response = SL_RESP_REJECT;
	queuing_clear(l);
	cd_level_fleet_defaults(l);
}

static void exempt_defaults(struct sl_level_cfg *l)
{
	l->shares = 0;
	l->lendable_percent = 0;
	l->borrowing_limit_percent = -1;
	l->limit_response = SL_RESP_REJECT;
	queuing_clear(l);
}

static void schema_limited(void *obj) { limited_defaults(obj); }
static void schema_exempt(void *obj) { exempt_defaults(obj); }
static void schema_queuing(void *obj) { queuing_defaults(obj); }
static void schema_response(void *obj) { ((struct sl_level_cfg *)obj)->limit_response = SL_RESP_REJECT; }

const struct cd_schema cd_schema_level[] = {
	{ "PriorityLevelConfiguration", "spec", level_fields, PL_N, NULL, 0 },
	{ "PriorityLevelConfiguration", "spec.exempt", exempt_fields, ARRAY_SIZE(exempt_fields),
	  schema_exempt, sizeof(struct sl_level_cfg) },
	{ "PriorityLevelConfiguration", "spec.limited", limited_fields, LM_N, schema_limited,
	  sizeof(struct sl_level_cfg) },
	{ "PriorityLevelConfiguration", "spec.limited.limitResponse", response_fields, LR_N, schema_response,
	  sizeof(struct sl_level_cfg) },
	{ "PriorityLevelConfiguration", "spec.limited.limitResponse.queuing", queuing_fields, QU_N,
	  schema_queuing, sizeof(struct sl_level_cfg) },
	{ NULL },
};

/* required: the block is the level's own (its type is Limited, and it is
 * not a mandatory level, whose restatement check_mandatory_level judges):
 * a missing limitResponse is an error. */
static void decode_limited(struct ctx *c, const struct sl_ynode *n,
			   struct sl_level_cfg *l, bool required, enum cd_api api)
{
	bool beta = api == CD_API_K8S_V1BETA12;
	const struct fdesc *fields = beta ? limited_fields_beta : limited_fields;
	size_t n_fields = beta ? LB_N : LM_N;
	struct fhit h[LM_N];
	const struct fhit *response = &h[beta ? LB_RESPONSE : LM_RESPONSE];
	size_t old = cd_path_push(c, "limited");

	if (cd_decode_fields(c, n, fields, n_fields, l, h)) {
		if (!beta && h[LM_FLEET].value)
			cd_decode_level_fleet(c, h[LM_FLEET].value, l);
		if (response->value) {
			decode_limit_response(c, response->value, l);
		} else if (required) {
			/* Kubernetes refuses it (limitResponse.type: Unsupported
			 * value ""); sluice used to make it Reject silently. */
			size_t o2 = cd_path_push(c, "limitResponse");

			cd_err(c, response->key ? response->key : n,
			       "required: a Limited level says what happens over its limit, "
			       "limitResponse: {type: Reject} or {type: Queue, queuing: {...}}");
			cd_path_pop(c, o2);
		}
	}
	cd_path_pop(c, old);
}

static void decode_exempt(struct ctx *c, const struct sl_ynode *n,
			  struct sl_level_cfg *l)
{
	struct fhit h[ARRAY_SIZE(exempt_fields)];
	size_t old = cd_path_push(c, "exempt");

	cd_decode_fields(c, n, exempt_fields, ARRAY_SIZE(exempt_fields), l, h);
	cd_path_pop(c, old);
}

/* The built-in mandatory levels (Kubernetes bootstrap/default.go). */
int cd_mandatory_level(struct sl_level_cfg *l, int which)
{
	memset(l, 0, sizeof(*l));
	if (which == 0) {
		snprintf(l->name, sizeof(l->name), "%s", SL_EXEMPT_NAME);
		l->type = SL_LEVEL_EXEMPT;
		exempt_defaults(l);
	} else {
		snprintf(l->name, sizeof(l->name), "%s", SL_CATCH_ALL_NAME);
		l->type = SL_LEVEL_LIMITED;
		limited_defaults(l);
		l->shares = CATCH_ALL_SHARES;
	}
	l->mandatory = true;
	l->builtin = true;
	return 0;
}

/* Node at spec.<a>.<b>..., or NULL. */
static const struct sl_ynode *node_at(const struct sl_ynode *n, ...)
{
	va_list ap;
	const char *k;

	va_start(ap, n);
	while (n && (k = va_arg(ap, const char *)))
		n = sl_ymap_get(n, k);
	va_end(ap);
	return n;
}

/* A file restating a mandatory level may not change it, except the exempt
 * level's nominalConcurrencyShares and lendablePercent (Kubernetes registry/flowcontrol/ensurer:
 * Kubernetes restores mandatory objects to their built-in spec). */
static void check_mandatory_level(struct ctx *c, const struct object *o,
				  const struct sl_level_cfg *l, int which)
{
	struct sl_level_cfg want;
	const struct sl_ynode *spec = o->spec ? o->spec : o->root;
	const struct sl_ynode *lim = node_at(o->spec, "limited", NULL);
	const char *name = which ? SL_CATCH_ALL_NAME : SL_EXEMPT_NAME;
	struct {
		const char *field, *want, *got;
		const struct sl_ynode *at;
		bool differs, defaulted;
	} f[5];
	static const char *const paths[5] = {
		"spec.type", "spec.limited.nominalConcurrencyShares",
		"spec.limited.lendablePercent", "spec.limited.borrowingLimitPercent",
		"spec.limited.limitResponse.type",
	};
	char sh[24], lp[24], bp[24];
	size_t n = 0;

	if (!l->type)
		return; /* type already reported */
	cd_mandatory_level(&want, which);
	f[n++] = (typeof(f[0])){ "type", which ? "Limited" : "Exempt",
				 l->type == SL_LEVEL_EXEMPT ? "Exempt" : "Limited",
				 node_at(o->spec, "type", NULL), l->type != want.type, false };
	if (which && l->type == SL_LEVEL_LIMITED) {
		const struct sl_ynode *s = node_at(lim, "nominalConcurrencyShares", NULL);
		const struct sl_ynode *lend = node_at(lim, "lendablePercent", NULL);
		const struct sl_ynode *b = node_at(lim, "borrowingLimitPercent", NULL);
		const struct sl_ynode *r = node_at(lim, "limitResponse", "type", NULL);

		snprintf(sh, sizeof(sh), "%d", l->shares);
		snprintf(lp, sizeof(lp), "%d", l->lendable_percent);
		snprintf(bp, sizeof(bp), "%d", l->borrowing_limit_percent);
		f[n++] = (typeof(f[0])){ "nominalConcurrencyShares", "5", sh,
					 s, l->shares != want.shares, !s };
		f[n++] = (typeof(f[0])){ "lendablePercent", "0", lp,
					 lend, l->lendable_percent != 0, !lend };
		f[n++] = (typeof(f[0])){ "borrowingLimitPercent", "unset", bp,
					 b, l->borrowing_limit_percent != -1, false };
		f[n++] = (typeof(f[0])){ "limitResponse.type", "Reject",
					 l->limit_response == SL_RESP_QUEUE ? "Queue" : "Reject",
					 r, l->limit_response != SL_RESP_REJECT, false };
	}
	for (size_t i = 0; i < n; i++) {
		if (!f[i].differs)
			continue;
		cd_path_set(c, paths[i]);
		if (which)
			cd_err(c, f[i].at ? f[i].at : lim ? lim : spec,
			       "the mandatory level %s has %s %s and a file may not change it (kube-apiserver restores it), got %s%s",
			       name, f[i].field, f[i].want,
			       f[i].defaulted ? "the default " : "", f[i].got);
		else
			cd_err(c, f[i].at ? f[i].at : spec,
			       "the mandatory level %s has type Exempt; a file may change only its exempt.nominalConcurrencyShares and exempt.lendablePercent (kube-apiserver restores it)",
			       name);
	}
	/* A fleet shares a level of the operator's own. */
	if (l->fleet.set) {
		cd_path_set(c, "spec.limited.fleet");
		cd_err(c, node_at(lim, "fleet", NULL) ? node_at(lim, "fleet", NULL) : spec,
		       "the mandatory level %s takes no fleet: name a level of your own", name);
	}
	cd_path_pop(c, 0);
}

static void decode_level_spec(struct load *L, const struct object *o,
			      struct sl_level_cfg *l)
{
	struct ctx *c = L->c;
	struct sl_level_cfg scratch;
	struct fhit h[PL_N];
	size_t old = cd_path_push(c, "spec");
	bool mandatory = o->name && (!strcmp(o->name, SL_EXEMPT_NAME) ||
				     !strcmp(o->name, SL_CATCH_ALL_NAME));

	if (!cd_decode_fields(c, o->spec, level_fields, PL_N, l, h))
		goto out;
	if (!h[PL_TYPE].ok)
		l->type = 0;
	if (l->type == SL_LEVEL_EXEMPT)
		exempt_defaults(l);
	/* The block for the type goes into l, a block for the other type is
	 * an error but still decoded (into scratch) to report its problems. */
	if (h[PL_EXEMPT].value) {
		struct sl_level_cfg *dst = l;

		if (l->type != SL_LEVEL_EXEMPT) {
			if (l->type == SL_LEVEL_LIMITED) {
				size_t o2 = cd_path_push(c, "exempt");

				cd_err(c, h[PL_EXEMPT].key, "only allowed when type is Exempt (type is Limited)");
				cd_path_pop(c, o2);
			}
			memset(&scratch, 0, sizeof(scratch));
			dst = &scratch;
			c->mute_warnings++;
		}
		decode_exempt(c, h[PL_EXEMPT].value, dst);
		if (dst == &scratch)
			c->mute_warnings--;
	}
	if (h[PL_LIMITED].value) {
		struct sl_level_cfg *dst = l;

		if (l->type != SL_LEVEL_LIMITED) {
			if (l->type == SL_LEVEL_EXEMPT) {
				size_t o2 = cd_path_push(c, "limited");

				cd_err(c, h[PL_LIMITED].key, "only allowed when type is Limited (type is Exempt)");
				cd_path_pop(c, o2);
			}
			memset(&scratch, 0, sizeof(scratch));
			limited_defaults(&scratch);
			dst = &scratch;
			c->mute_warnings++;
		}
		decode_limited(c, h[PL_LIMITED].value, dst, dst == l && !mandatory, o->api);
		if (dst == &scratch)
			c->mute_warnings--;
	}
	if (l->type == SL_LEVEL_LIMITED && !h[PL_LIMITED].value && !mandatory) {
		size_t o2 = cd_path_push(c, "limited");

		/* At the type's line: that is what asks for the block. */
		cd_err(c, h[PL_TYPE].value ? h[PL_TYPE].value : o->spec,
		       "required when type is Limited (Kubernetes refuses the object without it): "
		       "limited: {nominalConcurrencyShares: N, limitResponse: {type: Reject}}");
		cd_path_pop(c, o2);
	}
	if (h[PL_PORTS].key) {
		size_t o2 = cd_path_push(c, "ports");

		cd_err(c, h[PL_PORTS].key,
		       "priority levels no longer own ports: FlowSchemas classify connections now; add a FlowSchema whose priorityLevelConfiguration.name is '%s' and list the ports in its spec.rules[].destinations[].ports",
		       l->name[0] ? l->name : "this level");
		cd_path_pop(c, o2);
	}
	if (h[PL_SEATS].key) {
		size_t o2 = cd_path_push(c, "seatsPerConnection");

		cd_err(c, h[PL_SEATS].key,
		       "seatsPerConnection is set per FlowSchema now (FlowSchema spec.seatsPerConnection)");
		cd_path_pop(c, o2);
	}
out:
	cd_path_pop(c, old);
}

/* flowcontrol.apiserver.k8s.io/v1beta3 read a Limited level's
 * nominalConcurrencyShares of 0 as unset: kube-apiserver stores the default
 * unless the annotation flowcontrol.k8s.io/v1beta3-preserve-zero keeps 0
 * (v1 reads 0 as 0, as sluice/v1 does). */
static void v1beta3_zero_shares(struct ctx *c, const struct object *o, struct sl_level_cfg *l)
{
	const struct sl_ynode *s = node_at(o->spec, "limited", "nominalConcurrencyShares", NULL);
	int64_t v;

	if (o->api != CD_API_K8S_V1BETA3 || l->type != SL_LEVEL_LIMITED || !s || sl_ynode_int(s, &v) ||
	    v != 0 || node_at(o->root, "metadata", "annotations", "flowcontrol.k8s.io/v1beta3-preserve-zero", NULL))
		return;
	l->shares = DEF_LIMITED_SHARES;
	cd_path_set(c, "spec.limited.nominalConcurrencyShares");
	cd_warn(c, s, "0 under flowcontrol.apiserver.k8s.io/v1beta3 means the default, %d, as "
		"kube-apiserver reads it (the annotation flowcontrol.k8s.io/v1beta3-preserve-zero keeps 0; "
		"under v1, 0 is 0)", DEF_LIMITED_SHARES);
	cd_path_pop(c, 0);
}

void cd_decode_level(struct load *L, const struct object *o)
{
	struct ctx *c = L->c;
	struct sl_config *cfg = L->cfg;
	struct sl_level_cfg tmp;
	int which = -1;
	size_t idx;

	cd_register_name(L, KIND_LEVEL, o);
	memset(&tmp, 0, sizeof(tmp));
	limited_defaults(&tmp);
	if (o->name)
		snprintf(tmp.name, sizeof(tmp.name), "%s", o->name);
	if (o->name && !strcmp(o->name, SL_EXEMPT_NAME))
		which = 0;
	else if (o->name && !strcmp(o->name, SL_CATCH_ALL_NAME))
		which = 1;
	if (o->spec) {
		decode_level_spec(L, o, &tmp);
		v1beta3_zero_shares(c, o, &tmp);
	}
	if (which >= 0) {
		struct sl_level_cfg *l = &cfg->levels[which];

		if (o->spec)
			check_mandatory_level(c, o, &tmp, which);
		if (L->mandatory_level_in_file[which])
			return; /* a duplicate: reported with the names */
		L->mandatory_level_in_file[which] = true;
		if (which == 0 && tmp.type == SL_LEVEL_EXEMPT) {
			l->shares = tmp.shares;
			l->lendable_percent = tmp.lendable_percent;
		}
		l->builtin = false;
		l->line = o->root->line;
		l->column = o->root->column;
		if (!(l->file = strdup(c->file)))
			cd_oom(c);
		L->level_src[which].name_line = o->name_node->line;
		L->level_src[which].name_col = o->name_node->column;
		return;
	}
	if (cfg->n_levels == SL_MAX_LEVELS) {
		size_t old = cd_path_push(c, "kind");

		cd_err(c, o->kind, "too many PriorityLevelConfiguration objects; at most %d are supported (the mandatory exempt and catch-all included)",
		       SL_MAX_LEVELS);
		cd_path_pop(c, old);
		return;
	}
	if (sl_grow((void **)&cfg->levels, &L->levels_cap, cfg->n_levels + 1, sizeof(*cfg->levels)) ||
	    sl_grow((void **)&L->level_src, &L->level_src_cap, cfg->n_levels + 1, sizeof(*L->level_src))) {
		cd_oom(c);
		return;
	}
	idx = cfg->n_levels++;
	cfg->levels[idx] = tmp;
	cfg->levels[idx].line = o->root->line;
	cfg->levels[idx].column = o->root->column;
	if (!(cfg->levels[idx].file = strdup(c->file)))
		cd_oom(c);
	L->level_src[idx] = (struct obj_src){
		.object = strdup(c->object),
		.name_line = o->name_node ? o->name_node->line : 0,
		.name_col = o->name_node ? o->name_node->column : 0,
	};
	if (!L->level_src[idx].object)
		cd_oom(c);
}

/* Lowercase letters, digits, '-' and '.', every dot-separated label
 * starting and ending with a letter or digit (Kubernetes DNS-1123
 * subdomain). */
