// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * lab_syn: send bare TCP SYNs with a chosen source address, as a spoofing
 * attacker or an Internet scanner does: nothing answers their SYN-ACKs.
 * For floods and half-open tests in the lab only: the destination must be
 * inside 198.18.0.0/15, the sources too or in 127.0.0.0/8 (a spoofed
 * loopback source, which the lab's wire must never carry to a seat), and
 * every run is bounded in count and time.
 *
 *   lab_syn --src A --dst A --dport P [--sources N] [--count N] [--rate R]
 *           [--duration S] [--seq S] [--ack]
 *
 * Source i (i = 0..N-1) is --src + i; source ports start at 40000 and
 * advance per SYN.  --ack sends blind ACKs instead (the final ACK of a
 * handshake nobody began, acknowledging a guess): what a spoofer sends to
 * a level that seats at the ACK.  IPv4, raw socket (root).
 */
#define PROG "lab_syn"
#include "lab_cli.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_COUNT 20000000L
#define MAX_DURATION 900.0

static void usage(FILE *f)
{
	fprintf(f,
		"usage: lab_syn --src ADDR --dst ADDR --dport P [--sources N (default 1)]\n"
		"               [--count N (default 1)] [--rate R (SYN/s, default 100)]\n"
		"               [--duration S (default 30; hard bound)] [--seq S (default 0x1000)]\n"
		"               [--ack]\n\n"
		"Send bare TCP SYNs from --src (or --sources consecutive addresses from it),\n"
		"each from the next source port, at --rate until --count are sent or\n"
		"--duration passes.  Addresses must lie in 198.18.0.0/15 (the lab); sources\n"
		"may also be in 127.0.0.0/8 (spoofed loopback, as an attacker sends).\n"
		"--ack: blind ACKs (ack = a per-packet guess) instead of SYNs.\n"
		"Prints the number sent.  Exit 0, 1 on a send failure, 2 on usage error.\n");
}

static uint16_t csum_fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static uint32_t csum_add(uint32_t s, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(b[i] << 8 | b[i + 1]);
	if (n & 1)
		s += (uint32_t)(b[n - 1] << 8);
	return s;
}

static bool in_lab(uint32_t host_order)
{
	return (host_order & 0xfffe0000u) == 0xc6120000u; /* 198.18.0.0/15 */
}

/* A source: the lab's, or a spoofed loopback one (it goes to the lab's
 * server namespace all the same). */
static bool source_ok(uint32_t host_order)
{
	return in_lab(host_order) || (host_order >> 24) == 127;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"src", required_argument, NULL, 's'},    {"dst", required_argument, NULL, 'd'},
		{"dport", required_argument, NULL, 'p'},  {"sources", required_argument, NULL, 'n'},
		{"count", required_argument, NULL, 'c'},  {"rate", required_argument, NULL, 'r'},
		{"duration", required_argument, NULL, 't'}, {"seq", required_argument, NULL, 'q'},
		{"ack", no_argument, NULL, 'a'},          {"help", no_argument, NULL, 'h'},
		{0},
	};
	struct in_addr src = {0}, dst = {0};
	long dport = -1, sources = 1, count = 1;
	double rate = 100, duration = 30;
	uint32_t seq = 0x1000;
	int c, fd, one = 1;
	bool ack = false;

	while ((c = getopt_long(argc, argv, "s:d:p:n:c:r:t:q:ah", opts, NULL)) != -1) {
		switch (c) {
		case 's': if (inet_pton(AF_INET, optarg, &src) != 1) usage_error("--src: '%s' is not an IPv4 address", optarg); break;
		case 'd': if (inet_pton(AF_INET, optarg, &dst) != 1) usage_error("--dst: '%s' is not an IPv4 address", optarg); break;
		case 'p': dport = parse_long("dport", optarg, 1, 65535); break;
		case 'n': sources = parse_long("sources", optarg, 1, 65536); break;
		case 'c': count = parse_long("count", optarg, 1, MAX_COUNT); break;
		case 'r': rate = parse_double("rate", optarg, 1, 2e6); break;
		case 't': duration = parse_double("duration", optarg, 0.01, MAX_DURATION); break;
		case 'q': seq = (uint32_t)parse_long("seq", optarg, 0, 0xffffffffL); break;
		case 'a': ack = true; break;
		case 'h': usage(stdout); return 0;
		default: report_bad_option(argv[optind - 1]);
		}
	}
	if (!src.s_addr || !dst.s_addr || dport < 0)
		usage_error("--src, --dst and --dport are required");
	if (!source_ok(ntohl(src.s_addr)) || !source_ok(ntohl(src.s_addr) + (uint32_t)sources - 1) ||
	    !in_lab(ntohl(dst.s_addr)))
		usage_error("the destination must lie in 198.18.0.0/15, the sources there or in 127.0.0.0/8");
	fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	if (fd < 0 || setsockopt(fd, IPPROTO_IP, IP_HDRINCL, &one, sizeof(one))) {
		warn_errno("raw socket");
		return 1;
	}
	double t0 = now_s();
	long sent = 0;

	for (long i = 0; i < count; i++) {
		uint8_t pkt[40] = {0};
		uint32_t s_addr = htonl(ntohl(src.s_addr) + (uint32_t)(i % sources));
		uint16_t sport = (uint16_t)(40000 + i % 25000);
		struct sockaddr_in to = {.sin_family = AF_INET, .sin_addr = dst};
		double due = t0 + (double)i / rate, t;

		while ((t = now_s()) < due)
			if (due - t > 0.0005)
				usleep((useconds_t)((due - t) * 1e6 / 2));
		if (t - t0 > duration)
			break;
		pkt[0] = 0x45;
		pkt[3] = 40;
		pkt[6] = 0x40; /* DF */
		pkt[8] = 64;
		pkt[9] = IPPROTO_TCP;
		memcpy(pkt + 12, &s_addr, 4);
		memcpy(pkt + 16, &dst.s_addr, 4);
		pkt[20] = (uint8_t)(sport >> 8), pkt[21] = (uint8_t)sport;
		pkt[22] = (uint8_t)(dport >> 8), pkt[23] = (uint8_t)dport;
		pkt[24] = (uint8_t)(seq >> 24), pkt[25] = (uint8_t)(seq >> 16);
		pkt[26] = (uint8_t)(seq >> 8), pkt[27] = (uint8_t)seq;
		if (ack) {
			uint32_t guess = 0x9e3779b9u * (uint32_t)(i + 1);

			pkt[28] = (uint8_t)(guess >> 24), pkt[29] = (uint8_t)(guess >> 16);
			pkt[30] = (uint8_t)(guess >> 8), pkt[31] = (uint8_t)guess;
		}
		pkt[32] = 5 << 4;
		pkt[33] = ack ? 0x10 : 0x02; /* ACK or SYN */
		pkt[34] = 0xfa, pkt[35] = 0xf0;
		{
			uint32_t s = csum_add(0, pkt + 12, 8) + IPPROTO_TCP + 20;
			uint16_t tc = csum_fold(csum_add(s, pkt + 20, 20));
			uint16_t ic = csum_fold(csum_add(0, pkt, 20));

			pkt[36] = (uint8_t)(tc >> 8), pkt[37] = (uint8_t)tc;
			pkt[10] = (uint8_t)(ic >> 8), pkt[11] = (uint8_t)ic;
		}
		if (sendto(fd, pkt, sizeof(pkt), 0, (struct sockaddr *)&to, sizeof(to)) < 0) {
			warn_errno("sendto");
			close(fd);
			return 1;
		}
		sent++;
	}
	close(fd);
	printf("%ld\n", sent);
	return 0;
}
