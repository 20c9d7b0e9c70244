/* The handshake-expiry sweep (adapter): connections admitted at SYN that
 * never established give their seats back after handshakeTimeout. */
#ifndef SLUICE_EXPIRY_H
#define SLUICE_EXPIRY_H

#include <stdint.h>

#include "dataplane/loader.h"

/* Returns the number of connections expired, or a negative errno. */
int sl_expire_handshakes(struct sl_dataplane *dp, uint64_t now_ns, uint64_t timeout_ns);

#endif
