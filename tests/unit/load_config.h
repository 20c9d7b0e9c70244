/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Loading a configuration in a cmocka test: the file or text must load,
 * or the test fails with the loader's diagnostics printed.  Header-only;
 * include after <cmocka.h>.
 */
#ifndef SLUICE_TEST_LOAD_CONFIG_H
#define SLUICE_TEST_LOAD_CONFIG_H

#include <stdio.h>
#include <string.h>

#include "config/config.h"

static inline struct sl_config *must_load(const char *what, int err, struct sl_config *cfg,
					  struct sl_diags *d)
{
	if (err) {
		sl_diags_print(d, stderr);
		fail_msg("%s did not load", what);
	}
	sl_diags_free(d);
	return cfg;
}

static inline struct sl_config *load_config_file(const char *path)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;

	int err = sl_config_load_file(path, &cfg, &d); /* before cfg is read */

	return must_load(path, err, cfg, &d);
}

static inline struct sl_config *load_config_text(const char *name, const char *yaml, size_t len)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;

	int err = sl_config_load_buffer(name, yaml, len, &cfg, &d);

	return must_load(name, err, cfg, &d);
}

#endif
