// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * lab_notify: stand in for systemd's notification socket.  Binds a Unix
 * datagram socket at PATH (give it to a daemon as NOTIFY_SOCKET) and
 * prints every datagram it receives as one line: milliseconds since start,
 * a space, then the message with its newlines as spaces.  Ends after
 * --duration seconds, or at the first message holding --until TEXT.
 */
#define PROG "lab_notify"
#include "lab_cli.h"

#include <poll.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void usage(void)
{
	printf("usage: " PROG " --socket PATH [--duration S (default 10; hard bound)] [--until TEXT]\n\n"
	       "Receive sd_notify(3) datagrams on PATH and print each as one line:\n"
	       "\"MS MESSAGE\" (ms since start, newlines as spaces).  The socket file\n"
	       "is removed at the end.  Exit 0, 1 on setup failure, 2 on usage error.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"socket", required_argument, NULL, 's'},
		{"duration", required_argument, NULL, 'd'},
		{"until", required_argument, NULL, 'u'},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	const char *path = NULL, *until = NULL;
	double duration = 10, t0, end;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int c, fd;

	while ((c = getopt_long(argc, argv, "s:d:u:h", opts, NULL)) != -1) {
		switch (c) {
		case 's': path = optarg; break;
		case 'd': duration = parse_double("duration", optarg, 0.1, 600); break;
		case 'u': until = optarg; break;
		case 'h': usage(); return 0;
		default: report_bad_option(argv[optind - 1]);
		}
	}
	if (!path)
		usage_error("--socket is required");
	if (strlen(path) >= sizeof(sa.sun_path))
		usage_error("--socket: path too long");
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	unlink(path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		warn_errno("bind");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	t0 = now_ms();
	end = t0 + duration * 1e3;
	for (double t = t0; t < end; t = now_ms()) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		char buf[4096];
		ssize_t n;

		if (poll(&p, 1, (int)(end - t) + 1) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf) - 1, 0);
		if (n < 0)
			continue;
		buf[n] = '\0';
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] == '\n')
				buf[i] = ' ';
		printf("%.0f %s\n", now_ms() - t0, buf);
		if (until && strstr(buf, until))
			break;
	}
	close(fd);
	unlink(path);
	return 0;
}
