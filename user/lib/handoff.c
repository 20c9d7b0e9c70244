// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Hand-off frames.  See handoff.h. */
#include "lib/handoff.h"

#include <errno.h>
#include <string.h>

#define ETH_HLEN_ 14
#define ETH_PROTO_OFF 12

int sl_handoff_wrap(const uint8_t *in, size_t len, uint32_t cookie, enum sluice_handoff_dir dir,
		    uint8_t *out, size_t cap)
{
	struct sluice_handoff_trailer t = {.cookie = cookie, .dir = (uint8_t)dir,
					   .magic = SLUICE_HANDOFF_MAGIC};

	if (len < ETH_HLEN_ || (dir != SLUICE_HANDOFF_OUT && dir != SLUICE_HANDOFF_IN))
		return -EINVAL;
	if (len + sizeof(t) > cap)
		return -ENOSPC;
	memmove(out, in, len);
	memcpy(&t.proto, in + ETH_PROTO_OFF, sizeof(t.proto));
	out[ETH_PROTO_OFF] = SLUICE_ETH_P_HANDOFF >> 8;
	out[ETH_PROTO_OFF + 1] = SLUICE_ETH_P_HANDOFF & 0xff;
	memcpy(out + len, &t, sizeof(t));
	return (int)(len + sizeof(t));
}

int sl_handoff_unwrap(uint8_t *frame, size_t len, uint32_t cookie, enum sluice_handoff_dir dir)
{
	struct sluice_handoff_trailer t;

	if (len < ETH_HLEN_ + sizeof(t) || frame[ETH_PROTO_OFF] != SLUICE_ETH_P_HANDOFF >> 8 ||
	    frame[ETH_PROTO_OFF + 1] != (SLUICE_ETH_P_HANDOFF & 0xff))
		return -EINVAL;
	memcpy(&t, frame + len - sizeof(t), sizeof(t));
	if (t.magic != SLUICE_HANDOFF_MAGIC || t.dir != dir || t.cookie != cookie)
		return -EINVAL;
	memcpy(frame + ETH_PROTO_OFF, &t.proto, sizeof(t.proto));
	return (int)(len - sizeof(t));
}
