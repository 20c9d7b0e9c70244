/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What this build of sluice is (lib): VERSION and the commit it was built
 * from, for --version and the build_info metric. */
#ifndef SLUICE_LIB_VERSION_H
#define SLUICE_LIB_VERSION_H

const char *sl_version(void);    /* "0.7.0" */
const char *sl_version_git(void); /* git describe, or "unknown" */

#endif
