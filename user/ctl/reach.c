// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * How sluicectl reaches sluiced: its pinned maps (no daemon needed) and its
 * control socket, each failure said in one line that names what to do.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ctl/ctl.h"
#include "daemon/control.h"

int ctl_open_maps(const char *pin_dir, struct sl_maps *m)
{
	char what[4096] = "";
	int err = sl_maps_open_pinned(pin_dir, m, what, sizeof(what));

	if (!err)
		return 0;
	if (err == -ENOENT)
		fprintf(stderr, "sluicectl: %s: no such pinned map; is sluiced running "
				"(or were its maps kept with --keep-maps)? Use --pin-dir if it "
				"pins elsewhere.\n", what);
	else if (err == -EPROTO)
		fprintf(stderr, "sluicectl: %s: use the sluicectl of the sluiced that pinned them\n",
			what);
	else
		fprintf(stderr, "sluicectl: %s: %s\n", what, strerror(-err));
	return err;
}

int ctl_request(const char *cmd, const char *socket_path, enum sl_control_cmd req, const char *arg,
		char **answer)
{
	char line[SL_CONTROL_REQUEST_MAX];
	const char *why = NULL;
	int err = sl_control_format(line, sizeof(line), req, arg, &why);

	if (err) {
		fprintf(stderr, "sluicectl %s: %s\n", cmd, why);
		return err;
	}
	err = sl_control_request(socket_path, line, answer);

	if (err)
		fprintf(stderr, "sluicectl %s: %s: %s (is sluiced running? --socket)\n", cmd, socket_path,
			strerror(-err));
	return err;
}
