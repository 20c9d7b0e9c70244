// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sluicectl signal: send an external latency sample (milliseconds) to a
 * policy's `signal.external_socket`, the way an application does: one
 * datagram holding the number.  The controller uses the mean of the
 * samples it received in each control period.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl/ctl.h"
#include "ctl/options.h"
#include "lib/json_out.h"

struct signal_opts {
	const char *socket;
	bool json;
};

static const struct sl_opt signal_options[] = {
	SL_ROW_STRING(0, "external-socket", struct signal_opts, socket, "PATH",
		   "the policy's external_socket (its signal's key)", SL_OPT_REQUIRED),
	SL_ROW_RENAMED(0, "socket", "external-socket"),
	CTL_JSON(struct signal_opts, json, "{\"socket\", \"sent\": N, \"samples_ms\": [...]}"),
	SL_ROW_END,
};

static const struct sl_opt_doc signal_doc = {
	.prog = "sluicectl", .command = "signal",
	.args = "MS [MS ...]",
	.min_args = 1,
	.max_args = SL_OPT_ARGS_ANY,
	.description =
		"Send latency samples (milliseconds, >= 0) to the Unix datagram socket a\n"
		"policy with `signal: {type: external, external_socket: PATH}` listens on,\n"
		"one datagram each.  Applications do the same from their own code:\n"
		"each datagram is one number in ASCII.\n",
};

int ctl_signal(int argc, char **argv)
{
	struct signal_opts o = {0};
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct sl_opt_parsed parsed;
	const char *path;
	int fd, rc;

	rc = ctl_parse_options(&signal_doc, signal_options, &o, argc, argv, &parsed);
	if (rc != CTL_PARSE_RUN)
		return rc;
	rc = CTL_OK;
	path = o.socket;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "sluicectl signal: %s: path too long for a Unix socket\n", path);
		return CTL_USAGE;
	}
	for (int i = parsed.first_arg; i < argc; i++) {
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
	for (int i = parsed.first_arg; i < argc; i++) {
		if (sendto(fd, argv[i], strlen(argv[i]), 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			fprintf(stderr, "sluicectl signal: send to %s: %s%s\n", path, strerror(errno),
				errno == ECONNREFUSED || errno == ENOENT ?
				" (is sluiced running with a policy whose external_socket is this path?)" : "");
			rc = CTL_FAIL;
			break;
		}
	}
	close(fd);
	if (rc == CTL_OK && o.json) {
		struct json_out jo;

		jo_init(&jo, stdout, false);
		jo_obj_begin(&jo, NULL);
		jo_str(&jo, "socket", path);
		jo_u64(&jo, "sent", (uint64_t)(argc - parsed.first_arg));
		jo_arr_begin(&jo, "samples_ms");
		for (int i = parsed.first_arg; i < argc; i++)
			jo_double(&jo, NULL, strtod(argv[i], NULL));
		jo_arr_end(&jo);
		jo_obj_end(&jo);
		jo_finish(&jo);
	}
	return rc;
}
