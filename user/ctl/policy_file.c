// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The policy a tuning command (replay, simulate) runs: FILE loaded and
 * validated, one AverageLatencySchedulingPolicy chosen. */
#include <stdio.h>

#include "config/config.h"
#include "config/diag.h"
#include "ctl/ctl.h"

static const struct sl_policy_cfg *pick(const char *cmd, const struct sl_config *cfg, const char *file,
					const char *name, int *rc)
{
	const struct sl_policy_cfg *pol;

	if (name) {
		pol = sl_config_find_policy(cfg, name);
		if (!pol) {
			fprintf(stderr, "sluicectl %s: %s: no AverageLatencySchedulingPolicy named '%s'\n",
				cmd, file, name);
			*rc = CTL_FAIL;
		}
		return pol;
	}
	if (cfg->n_policies == 1)
		return &cfg->policies[0];
	if (!cfg->n_policies) {
		fprintf(stderr, "sluicectl %s: %s holds no AverageLatencySchedulingPolicy\n", cmd, file);
		*rc = CTL_FAIL;
		return NULL;
	}
	fprintf(stderr, "sluicectl %s: %s holds %zu AverageLatencySchedulingPolicies; choose one with --name:",
		cmd, file, cfg->n_policies);
	for (size_t i = 0; i < cfg->n_policies; i++)
		fprintf(stderr, " %s", cfg->policies[i].name);
	fputc('\n', stderr);
	*rc = CTL_USAGE;
	return NULL;
}

const struct sl_policy_cfg *ctl_policy_from_file(const char *cmd, const char *file, const char *name,
						 struct sl_config **cfg, int *rc)
{
	struct sl_diags diags = SL_DIAGS_INIT;

	*rc = CTL_FAIL;
	if (sl_config_load_file(file, cfg, &diags)) {
		sl_diags_print(&diags, stderr);
		fprintf(stderr, "sluicectl %s: %s is not a valid configuration\n", cmd, file);
		sl_diags_free(&diags);
		return NULL;
	}
	sl_diags_free(&diags);
	return pick(cmd, *cfg, file, name, rc);
}
