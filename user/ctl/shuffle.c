/* sluicectl odds | deal: shuffle-sharding tools (Kubernetes shufflesharding.go; KEP-1040 "Probability of Collisions"). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl.h"
#include "lib/json_out.h"
#include "lib/shuffle.h"

static int parse_u32(const char *cmd, const char *opt, const char *s, uint32_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (!*s || *end || errno || v > UINT32_MAX || s[0] == '-') {
		fprintf(stderr, "sluicectl %s: %s: '%s' is not a non-negative integer\n", cmd, opt, s);
		return -EINVAL;
	}
	*out = (uint32_t)v;
	return 0;
}

static void odds_usage(FILE *f)
{
	fprintf(f,
		"Usage: sluicectl odds --queues N --hand-size H --elephants K [--json]\n\n"
		"The probability that a mouse flow is crushed by K elephant flows: that its\n"
		"whole hand of H queues (out of N) lies inside the union of the elephants'\n"
		"hands, so every queue it could use is occupied (Kubernetes APF, KEP\n"
		"\"probability of collisions\").  Printed to full double precision.\n"
		"K may be a comma-separated list (1,4,16).\n");
}

int ctl_odds(int argc, char **argv)
{
	static const struct option opts[] = {
		{"queues", required_argument, NULL, 'q'},
		{"hand-size", required_argument, NULL, 'H'},
		{"elephants", required_argument, NULL, 'e'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	uint32_t queues = 0, hand = 0, ks[64];
	size_t nk = 0;
	bool json = false, have_q = false, have_h = false;
	char why[160];
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "q:H:e:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'q':
			if (parse_u32("odds", "--queues", optarg, &queues))
				return CTL_USAGE;
			have_q = true;
			break;
		case 'H':
			if (parse_u32("odds", "--hand-size", optarg, &hand))
				return CTL_USAGE;
			have_h = true;
			break;
		case 'e': {
			char *save = NULL, *tok, *copy = strdup(optarg);

			for (tok = strtok_r(copy, ",", &save); tok && nk < 64; tok = strtok_r(NULL, ",", &save)) {
				if (parse_u32("odds", "--elephants", tok, &ks[nk]) || !ks[nk]) {
					fprintf(stderr, "sluicectl odds: --elephants needs positive integers\n");
					free(copy);
					return CTL_USAGE;
				}
				nk++;
			}
			free(copy);
			break;
		}
		case 'j': json = true; break;
		case 'h': odds_usage(stdout); return CTL_OK;
		default: odds_usage(stderr); return CTL_USAGE;
		}
	}
	if (!have_q || !have_h || !nk || optind < argc) {
		fprintf(stderr, "sluicectl odds: --queues, --hand-size and --elephants are required\n");
		return CTL_USAGE;
	}
	if (sl_shuffle_validate(queues, hand, why, sizeof(why))) {
		fprintf(stderr, "sluicectl odds: %s\n", why);
		return CTL_FAIL;
	}
	if (json) {
		struct json_out jo;

		jo_init(&jo, stdout, true);
		jo_obj_begin(&jo, NULL);
		jo_u64(&jo, "queues", queues);
		jo_u64(&jo, "handSize", hand);
		jo_arr_begin(&jo, "odds");
		for (size_t i = 0; i < nk; i++) {
			jo_obj_begin(&jo, NULL);
			jo_u64(&jo, "elephants", ks[i]);
			jo_double(&jo, "probability", sl_shuffle_mouse_odds(queues, hand, ks[i]));
			jo_obj_end(&jo);
		}
		jo_arr_end(&jo);
		jo_obj_end(&jo);
		jo_finish(&jo);
	} else {
		for (size_t i = 0; i < nk; i++) {
			char buf[32];

			printf("queues %u handSize %u elephants %u: %s\n", queues, hand, ks[i],
			       json_double_shortest(sl_shuffle_mouse_odds(queues, hand, ks[i]), buf, sizeof(buf)));
		}
	}
	return CTL_OK;
}

static void deal_usage(FILE *f)
{
	fprintf(f,
		"Usage: sluicectl deal --queues N --hand-size H --hash V [--json]\n\n"
		"The hand of queues dealt to a flow whose hash is V (decimal or 0x hex),\n"
		"as comma-separated queue indices in deal order (Kubernetes shufflesharding.go DealIntoHand).\n"
		"Invalid parameters exit 1 with the reason.\n");
}

int ctl_deal(int argc, char **argv)
{
	static const struct option opts[] = {
		{"queues", required_argument, NULL, 'q'},
		{"hand-size", required_argument, NULL, 'H'},
		{"hash", required_argument, NULL, 'v'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	uint32_t queues = 0, hand = 0, cards[SL_SHUFFLE_MAX_HAND];
	uint64_t v = 0;
	bool json = false, have_q = false, have_h = false, have_v = false;
	char why[160], *end;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "q:H:v:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'q':
			if (parse_u32("deal", "--queues", optarg, &queues))
				return CTL_USAGE;
			have_q = true;
			break;
		case 'H':
			if (parse_u32("deal", "--hand-size", optarg, &hand))
				return CTL_USAGE;
			have_h = true;
			break;
		case 'v':
			errno = 0;
			v = strtoull(optarg, &end, 0);
			if (!*optarg || *end || errno || optarg[0] == '-') {
				fprintf(stderr, "sluicectl deal: --hash: '%s' is not a 64-bit value\n", optarg);
				return CTL_USAGE;
			}
			have_v = true;
			break;
		case 'j': json = true; break;
		case 'h': deal_usage(stdout); return CTL_OK;
		default: deal_usage(stderr); return CTL_USAGE;
		}
	}
	if (!have_q || !have_h || !have_v || optind < argc) {
		fprintf(stderr, "sluicectl deal: --queues, --hand-size and --hash are required\n");
		return CTL_USAGE;
	}
	if (sl_shuffle_validate(queues, hand, why, sizeof(why))) {
		fprintf(stderr, "sluicectl deal: %s\n", why);
		return CTL_FAIL;
	}
	sl_shuffle_deal(queues, hand, v, cards);
	if (json) {
		struct json_out jo;

		jo_init(&jo, stdout, false);
		jo_obj_begin(&jo, NULL);
		jo_u64(&jo, "queues", queues);
		jo_u64(&jo, "handSize", hand);
		jo_u64(&jo, "hash", v);
		jo_arr_begin(&jo, "hand");
		for (uint32_t i = 0; i < hand; i++)
			jo_u64(&jo, NULL, cards[i]);
		jo_arr_end(&jo);
		jo_obj_end(&jo);
		jo_finish(&jo);
	} else {
		for (uint32_t i = 0; i < hand; i++)
			printf("%s%u", i ? "," : "", cards[i]);
		printf("\n");
	}
	return CTL_OK;
}
