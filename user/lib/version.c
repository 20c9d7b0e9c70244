// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "lib/version.h"

#include "sluice_version.h" /* generated in the build directory */

const char *sl_version(void)
{
	return SLUICE_VERSION;
}

const char *sl_version_git(void)
{
	return SLUICE_GIT;
}
