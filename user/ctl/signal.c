/*
 * sluicectl signal: send an external latency sample (milliseconds) to a
 * policy's `signal.external_socket`, the way an application does: one
 * datagram holding the number.  The controller uses the mean of the
 * samples it received in each control period.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl/ctl.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: sluicectl signal --socket PATH MS [MS ...]\n\n"
		   "Send latency samples (milliseconds, >= 0) to the Unix datagram socket a\n"
		   "policy with `signal: {type: external, external_socket: PATH}` listens on,\n"
		   "one datagram each.  Applications do the same from their own code:\n"
		   "each datagram is one number in ASCII.\n\n"
		   "  --socket PATH   the policy's external_socket\n");
}

int ctl_signal(int argc, char **argv)
{
	static const struct option opts[] = {
		{"socket", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	const char *path = NULL;
	int c, fd, rc = CTL_OK;

	optind = 1;
	while ((c = getopt_long(argc, argv, "s:h", opts, NULL)) != -1) {
		switch (c) {
		case 's': path = optarg; break;
		case 'h': usage(stdout); return CTL_OK;
		default: usage(stderr); return CTL_USAGE;
		}
	}
	if (!path || optind >= argc) {
		usage(stderr);
		return CTL_USAGE;
	}
	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "sluicectl signal: %s: path too long for a Unix socket\n", path);
		return CTL_USAGE;
	}
	for (int i = optind; i < argc; i++) {
		char *end;
		double v = strtod(argv[i], &end);

		if (end == argv[i] || *end || !isfinite(v) || v < 0) {
			fprintf(stderr, "sluicectl signal: '%s' is not a latency in ms (a number >= 0)\n",
				argv[i]);
			return CTL_USAGE;
		}
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "sluicectl signal: socket: %s\n", strerror(errno));
		return CTL_FAIL;
	}
	for (int i = optind; i < argc; i++) {
		if (sendto(fd, argv[i], strlen(argv[i]), 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			fprintf(stderr, "sluicectl signal: send to %s: %s%s\n", path, strerror(errno),
				errno == ECONNREFUSED || errno == ENOENT ?
				" (is sluiced running with a policy whose external_socket is this path?)" : "");
			rc = CTL_FAIL;
			break;
		}
	}
	close(fd);
	return rc;
}
