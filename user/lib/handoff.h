/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Hand-off frames (include/sluice_abi.h, "How a refusal leaves the host"):
 * a frame wrapped for sluice_tc_out or sluice_tc_in, which unwrap it on the
 * device it names.  Pure: no I/O.
 */
#ifndef SLUICE_LIB_HANDOFF_H
#define SLUICE_LIB_HANDOFF_H

#include <stddef.h>
#include <stdint.h>

#include "sluice_abi.h"

/* Copy the Ethernet frame in (len bytes) to out (cap bytes) as a hand-off
 * frame for dir on the device whose cookie is given: its length, or
 * -EINVAL (no Ethernet header; a direction that is not one) or -ENOSPC. */
int sl_handoff_wrap(const uint8_t *in, size_t len, uint32_t cookie, enum sluice_handoff_dir dir,
		    uint8_t *out, size_t cap);
/* The reverse, in place (what the tc programs do): the frame's length
 * without its trailer, or -EINVAL when it is no hand-off frame for dir and
 * cookie. */
int sl_handoff_unwrap(uint8_t *frame, size_t len, uint32_t cookie, enum sluice_handoff_dir dir);

#endif
