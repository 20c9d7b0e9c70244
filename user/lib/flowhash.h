/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Flow hash for shuffle sharding (Kubernetes apf_controller.go hashFlowID): SipHash-2-4 of
 * (FlowSchema name, 0x00, distinguisher) under a 128-bit key.  The daemon
 * draws the key at random at start, so clients cannot aim at queues; tests
 * and `sluicectl explain --hash-key` can fix it.
 */
#ifndef SLUICE_FLOWHASH_H
#define SLUICE_FLOWHASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t sl_siphash24(const uint8_t key[16], const void *data, size_t len);
uint64_t sl_flow_hash(const uint8_t key[16], const char *schema, const char *distinguisher);

#endif
