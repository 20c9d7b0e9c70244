// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Where sluiced keeps its maps and its control socket.  See daemon_paths.h. */
#include "ctl/daemon_paths.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "config/diag.h"
#include "ctl/ctl.h"

/* The configuration's values outlive its load: the command holds the
 * pointers for its run. */
static char cfg_pin_dir[4096], cfg_socket[108];

static int load_paths(const char *cmd, const char *path, bool named)
{
	struct sl_diags diags = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	int err = sl_config_load_file(path, &cfg, &diags);

	if (err) {
		/* The load's diagnostics say why, at file:line:column. */
		sl_diags_print(&diags, stderr);
		if (named)
			fprintf(stderr, "sluicectl %s: %s does not load, and it names sluiced's pinDir and "
				"controlSocket (--pin-dir and --control-socket name them instead)\n", cmd, path);
		else
			fprintf(stderr, "sluicectl %s: %s does not load: its pinDir and controlSocket are not "
				"known, the defaults are used (-c FILE, --pin-dir, --control-socket name others)\n",
				cmd, path);
		sl_diags_free(&diags);
		return named ? CTL_FAIL : 0;
	}
	if (cfg->server.pin_dir)
		snprintf(cfg_pin_dir, sizeof(cfg_pin_dir), "%s", cfg->server.pin_dir);
	if (cfg->server.control_socket)
		snprintf(cfg_socket, sizeof(cfg_socket), "%s", cfg->server.control_socket);
	sl_config_free(cfg);
	sl_diags_free(&diags);
	return 0;
}

int ctl_daemon_paths(const char *cmd, const char *config, const char **pin_dir, const char **socket)
{
	bool want_pin = pin_dir && !*pin_dir, want_socket = socket && !*socket;

	cfg_pin_dir[0] = cfg_socket[0] = '\0';
	if (want_pin || want_socket) {
		int rc = 0;

		/* Standard input is the command's own to read (explain -c -). */
		if (config && strcmp(config, "-"))
			rc = load_paths(cmd, config, true);
		else if (!access(SL_DEFAULT_CONFIG, F_OK))
			rc = load_paths(cmd, SL_DEFAULT_CONFIG, false);
		if (rc)
			return rc;
	}
	if (want_pin)
		*pin_dir = cfg_pin_dir[0] ? cfg_pin_dir : SL_DEFAULT_PIN_DIR;
	if (want_socket)
		*socket = cfg_socket[0] ? cfg_socket : SL_DEFAULT_CONTROL_SOCKET;
	return 0;
}
