#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# What an attacker on the wire can still do (issue 26), tried as one would.
#  1. SYNs that claim a loopback source: the built-in exempt FlowSchema
#     (loopback sources) would seat and track them, and the kernel drops
#     them as martians, so their entries would stay until the half-open
#     time-out; a flood of them would fill the connection table.  They
#     must leave the table as it was, and real clients get in meanwhile.
source "$(dirname "$0")/lib.sh"
e2e_init "$@"

start_service 8080 16 0 || { not_ok "lab service on 8080"; e2e_finish; }
start_daemon configs/demo.yaml || { not_ok "sluiced starts on the suggested configuration"; e2e_finish; }
ok "sluiced starts on the suggested configuration"

gstat() { status_json | jq -r ".stats.$1"; }
conns() { "$SLUICECTL" conns --pin-dir "$PIN_DIR" --json | jq .total; }

# ---- 1. a spoofed-loopback flood ------------------------------------------------------
m0=$(gstat martians)
in_cli "$LAB_SYN" --src 127.0.0.1 --sources 200 --dst $SRV4 --dport 8080 --count 3000 --rate 3000 \
	--duration 5 >"$E2E_TMP/martians.out" 2>&1 &
fp=$!
E2E_PIDS+=($fp)
out=$(load --connect $SRV4 --port 8080 --rate 50 --count 50 --duration 5 --timeout 5)
wait "$fp"
sent=$(cat "$E2E_TMP/martians.out")
diag "loopback-sourced SYNs sent: $sent"
check_num "3,000 SYNs from 127.0.0.0/24 reached the data path" "$(( $(gstat martians) - m0 ))" -ge 3000
check_num "... none of them holds an entry in the connection table" "$(conns)" -eq 0
check_num "... no level holds a seat for them" \
	"$("$SLUICECTL" levels --control-socket "$E2E_TMP/ctl.sock" --json | jq '[.levels[].seats_in_use] | add')" -eq 0
check_num "... and the real clients beside the flood were all served" "$(jq .ok <<<"$out")" -eq 50

stop_daemon && ok "clean stop"
e2e_finish
