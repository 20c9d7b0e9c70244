// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* sluicectl odds | deal: shuffle-sharding tools (Kubernetes shufflesharding.go; KEP-1040 "Probability of Collisions"). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl.h"
#include "ctl/options.h"
#include "lib/json_out.h"
#include "lib/shuffle.h"

#define MAX_ELEPHANT_COUNTS 64

struct elephant_counts {
	uint32_t k[MAX_ELEPHANT_COUNTS];
	size_t n;
};

/* "1,4,16": positive integers, comma-separated. */
static int parse_elephants(const char *arg, void *field, char *why, size_t len)
{
	struct elephant_counts *e = field;
	const char *p = arg;
	char *end;

	e->n = 0;
	for (;;) {
		unsigned long v;

		errno = 0;
		v = *p >= '1' && *p <= '9' ? strtoul(p, &end, 10) : 0;
		if (!v || errno || v > UINT32_MAX || (*end && *end != ',') || e->n == MAX_ELEPHANT_COUNTS) {
			snprintf(why, len, "'%s' is not a list of at most %d positive integers (1,4,16)",
				 arg, MAX_ELEPHANT_COUNTS);
			return -EINVAL;
		}
		e->k[e->n++] = (uint32_t)v;
		if (!*end)
			return 0;
		p = end + 1;
	}
}

struct shuffle_opts {
	uint32_t queues, hand_size;
	struct elephant_counts elephants;
	uint64_t hash;
	bool json;
};

#define SHUFFLE_QUEUES(H) SL_ROW_NUMBER(SL_OPT_U32, 'q', "queues", struct shuffle_opts, queues, "N", \
				     0, UINT32_MAX, H, SL_OPT_REQUIRED)
#define SHUFFLE_HAND \
	SL_ROW_NUMBER(SL_OPT_U32, 'H', "hand-size", struct shuffle_opts, hand_size, "H", 0, UINT32_MAX, \
		   "cards per hand (handSize)", SL_OPT_REQUIRED)

static const struct sl_opt odds_options[] = {
	SHUFFLE_QUEUES("queues in the level (queues)"),
	SHUFFLE_HAND,
	SL_ROW_CUSTOM('e', "elephants", struct shuffle_opts, elephants, "K", parse_elephants,
		   "elephant flows: a count or a comma-separated list (1,4,16)", SL_OPT_REQUIRED),
	CTL_JSON(struct shuffle_opts, json, "{\"queues\", \"hand_size\", \"odds\": [{\"elephants\", \"probability\"}]}"),
	SL_ROW_END,
};

static const struct sl_opt_doc odds_doc = {
	.prog = "sluicectl", .command = "odds",
	.description =
		"The probability that a mouse flow is crushed by K elephant flows: that its\n"
		"whole hand of H queues (out of N) lies inside the union of the elephants'\n"
		"hands, so every queue it could use is occupied (Kubernetes APF, KEP-1040\n"
		"\"Probability of Collisions\").  Printed to full double precision.\n",
};

int ctl_odds(int argc, char **argv)
{
	struct shuffle_opts o = {0};
	struct sl_opt_parsed parsed;
	char why[160];
	int rc;

	rc = ctl_parse_options(&odds_doc, odds_options, &o, argc, argv, &parsed);
	if (rc != CTL_PARSE_RUN)
		return rc;
	if (sl_shuffle_validate(o.queues, o.hand_size, why, sizeof(why))) {
		fprintf(stderr, "sluicectl odds: %s\n", why);
		return CTL_FAIL;
	}
	if (o.json) {
		struct json_out jo;

		jo_init(&jo, stdout, false);
		jo_obj_begin(&jo, NULL);
		jo_u64(&jo, "queues", o.queues);
		jo_u64(&jo, "hand_size", o.hand_size);
		jo_arr_begin(&jo, "odds");
		for (size_t i = 0; i < o.elephants.n; i++) {
			jo_obj_begin(&jo, NULL);
			jo_u64(&jo, "elephants", o.elephants.k[i]);
			jo_double(&jo, "probability", sl_shuffle_mouse_odds(o.queues, o.hand_size, o.elephants.k[i]));
			jo_obj_end(&jo);
		}
		jo_arr_end(&jo);
		jo_obj_end(&jo);
		jo_finish(&jo);
	} else {
		for (size_t i = 0; i < o.elephants.n; i++) {
			char buf[32];

			printf("queues %u handSize %u elephants %u: %s\n", o.queues, o.hand_size, o.elephants.k[i],
			       json_double_shortest(sl_shuffle_mouse_odds(o.queues, o.hand_size, o.elephants.k[i]), buf, sizeof(buf)));
		}
	}
	return CTL_OK;
}

static const struct sl_opt deal_options[] = {
	SHUFFLE_QUEUES("the deck: queues in the level"),
	SHUFFLE_HAND,
	SL_ROW_NUMBER(SL_OPT_U64, 0, "hash", struct shuffle_opts, hash, "V", 0, (double)UINT64_MAX,
		   "the flow's 64-bit hash, decimal or 0x hex", SL_OPT_REQUIRED),
	CTL_JSON(struct shuffle_opts, json, "{\"queues\", \"hand_size\", \"hash\", \"hand\": [...]}"),
	SL_ROW_END,
};

static const struct sl_opt_doc deal_doc = {
	.prog = "sluicectl", .command = "deal",
	.description =
		"The hand of queues dealt to a flow whose hash is V, as comma-separated\n"
		"queue indices in deal order (Kubernetes shufflesharding.go DealIntoHand).\n"
		"Invalid parameters exit 1 with the reason.\n",
};

int ctl_deal(int argc, char **argv)
{
	struct shuffle_opts o = {0};
	uint32_t cards[SL_SHUFFLE_MAX_HAND];
	struct sl_opt_parsed parsed;
	char why[160];
	int rc;

	rc = ctl_parse_options(&deal_doc, deal_options, &o, argc, argv, &parsed);
	if (rc != CTL_PARSE_RUN)
		return rc;
	if (sl_shuffle_validate(o.queues, o.hand_size, why, sizeof(why))) {
		fprintf(stderr, "sluicectl deal: %s\n", why);
		return CTL_FAIL;
	}
	sl_shuffle_deal(o.queues, o.hand_size, o.hash, cards);
	if (o.json) {
		struct json_out jo;

		jo_init(&jo, stdout, false);
		jo_obj_begin(&jo, NULL);
		jo_u64(&jo, "queues", o.queues);
		jo_u64(&jo, "hand_size", o.hand_size);
		{
			char hash[24];

			/* Hashes are strings (0x + 16 hex digits), as explain writes them. */
			snprintf(hash, sizeof(hash), "0x%016" PRIx64, o.hash);
			jo_str(&jo, "hash", hash);
		}
		jo_arr_begin(&jo, "hand");
		for (uint32_t i = 0; i < o.hand_size; i++)
			jo_u64(&jo, NULL, cards[i]);
		jo_arr_end(&jo);
		jo_obj_end(&jo);
		jo_finish(&jo);
	} else {
		for (uint32_t i = 0; i < o.hand_size; i++)
			printf("%s%u", i ? "," : "", cards[i]);
		printf("\n");
	}
	return CTL_OK;
}
