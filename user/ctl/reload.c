// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* sluicectl reload: ask the daemon to reload its configuration file. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/diag.h"
#include "daemon/control.h"
#include "ctl/ctl.h"
#include "ctl/daemon_paths.h"
#include "ctl/options.h"

struct reload_opts {
	const char *config;
	const char *socket;
	double timeout;
	bool json;
};

static const struct sl_opt reload_options[] = {
	CTL_CONFIG(struct reload_opts, config),
	CTL_SOCKET(struct reload_opts, socket),
	SL_ROW_NUMBER(SL_OPT_DOUBLE, 't', "timeout", struct reload_opts, timeout, "SECONDS", 0.1, 86400,
		   "how long to wait for the outcome (default 600)", 0),
	CTL_JSON(struct reload_opts, json, "print the daemon's answer as JSON"),
	SL_ROW_END,
};

static const struct sl_opt_doc reload_doc = {
	.prog = "sluicectl", .command = "reload",
	.description =
		"Make sluiced reload its configuration file (like SIGHUP) and report the\n"
		"outcome.  An invalid file changes nothing: the old configuration keeps\n"
		"running and the errors are printed here.  sluiced compiles it off its\n"
		"event loop (it keeps protecting meanwhile); this waits for the end.  A\n"
		"reload asked while another one compiles replaces it.\n",
	.epilogue = "Exit status: 0 reloaded, 1 not reloaded (or no daemon), 2 usage error.\n",
};

/* Human form: the message, then one line per diagnostic. */
static bool print_answer(const char *answer)
{
	json_t *root, *diags, *d;
	json_error_t jerr;
	bool ok;
	size_t i;

	root = json_loads(answer, 0, &jerr);
	if (!root) {
		fprintf(stderr, "sluicectl reload: the daemon's answer is not JSON: %s\n", jerr.text);
		return false;
	}
	ok = json_is_true(json_object_get(root, SL_OUTCOME_KEY(OK)));
	printf("sluiced: %s\n", json_string_value(json_object_get(root, SL_OUTCOME_KEY(MESSAGE))) ?: "?");
	diags = json_object_get(root, SL_OUTCOME_KEY(DIAGNOSTICS));
	json_array_foreach(diags, i, d) {
		json_t *line = json_object_get(d, SL_DIAG_KEY_LINE), *col = json_object_get(d, SL_DIAG_KEY_COLUMN);
		const char *obj = json_string_value(json_object_get(d, SL_DIAG_KEY_OBJECT));
		const char *path = json_string_value(json_object_get(d, SL_DIAG_KEY_PATH));

		printf("%s", json_string_value(json_object_get(d, SL_DIAG_KEY_FILE)) ?: "");
		if (json_is_integer(line))
			printf(":%lld:%lld", json_integer_value(line), json_integer_value(col));
		printf(": %s: ", json_string_value(json_object_get(d, SL_DIAG_KEY_SEVERITY)) ?: "");
		if (obj && *obj)
			printf("%s: ", obj);
		if (path && *path)
			printf("%s: ", path);
		printf("%s\n", json_string_value(json_object_get(d, SL_DIAG_KEY_MESSAGE)) ?: "");
	}
	json_decref(root);
	return ok;
}

/* Poll reload-status N until the answer is no longer pending. */
static char *wait_outcome(const struct reload_opts *o, char *answer)
{
	double waited = 0;

	for (;;) {
		json_t *root = json_loads(answer, 0, NULL);
		bool pending = root && json_is_true(json_object_get(root, SL_PENDING_KEY(PENDING)));
		json_int_t gen = root ? json_integer_value(json_object_get(root, SL_PENDING_KEY(GENERATION))) : 0;
		char num[24];

		json_decref(root);
		if (!pending)
			return answer;
		free(answer);
		answer = NULL;
		if (waited >= o->timeout) {
			fprintf(stderr, "sluicectl reload: no outcome after %g s (the reload goes on; "
					"see the daemon's log or sluice_config_last_reload_successful)\n",
				o->timeout);
			return NULL;
		}
		usleep(100000);
		waited += 0.1;
		snprintf(num, sizeof(num), "%lld", (long long)gen);
		if (ctl_request("reload", o->socket, SL_CTL_RELOAD_STATUS, num, &answer))
			return NULL;
	}
}

int ctl_reload(int argc, char **argv)
{
	struct reload_opts o = {.timeout = 600};
	struct sl_opt_parsed parsed;
	char *answer = NULL;
	bool ok;
	int rc;

	rc = ctl_parse_options(&reload_doc, reload_options, &o, argc, argv, &parsed);
	if (rc != CTL_PARSE_RUN)
		return rc;
	if (ctl_daemon_paths("reload", o.config, NULL, &o.socket))
		return CTL_FAIL;
	if (ctl_request("reload", o.socket, SL_CTL_RELOAD, NULL, &answer))
		return CTL_FAIL;
	answer = wait_outcome(&o, answer);
	if (!answer)
		return CTL_FAIL;
	if (o.json) {
		json_t *root = json_loads(answer, 0, NULL);

		ok = root && json_is_true(json_object_get(root, SL_OUTCOME_KEY(OK)));
		json_decref(root);
		fputs(answer, stdout);
	} else {
		ok = print_answer(answer);
	}
	free(answer);
	return ok ? CTL_OK : CTL_FAIL;
}
