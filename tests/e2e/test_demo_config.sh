#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The main job on the default configuration (make demo's scenario,
# shortened): a service of 8 workers x 100 ms gets 3x its capacity from one
# heavy client while five light clients connect once a second each.  With
# configs/demo.yaml (its policy in sluice's mode) every light client is
# served, promptly: neither the priority level's fair queues nor the
# policy's (flows of a workload take turns) put them behind the heavy one.
source "$(dirname "$0")/lib.sh"
e2e_init "$@"

start_service 8080 8 100 --backlog 128 || { not_ok "service starts"; e2e_finish; }
start_daemon "$E2E_ROOT/configs/demo.yaml" || { not_ok "sluiced starts"; e2e_finish; }
ok "sluiced starts on configs/demo.yaml"
check "its policy runs sluice's own mode" bash -c '"$1" controller --control-socket "$2" --json | jq -e ".policies[0].mode == \"sluice\""' _ "$SLUICECTL" "$E2E_TMP/ctl.sock"
load --connect $SRV4 --port 8080 --source 198.18.0.10 --rate 240 --count 3600 --duration 15 --timeout 20 >"$E2E_TMP/elephant.json" &
ep=$!
mice=$(load --connect $SRV4 --port 8080 --source 198.18.0.11 --source 198.18.0.12 --source 198.18.0.13 \
	--source 198.18.0.14 --source 198.18.0.15 --rate 5 --count 75 --duration 15 --timeout 20)
wait $ep
diag "mice: $(jq -c '{ok, refused, timeout, p50: .total_ms.p50, p90: .total_ms.p90}' <<<"$mice"); elephant: $(jq -c '{ok, refused, timeout}' "$E2E_TMP/elephant.json")"
diag "controller: $("$SLUICECTL" controller --control-socket "$E2E_TMP/ctl.sock" --json | jq -c '.policies[0] | {reason, limit, decisions}')"
check_num "every light client is served (75 of 75)" "$(jq .ok <<<"$mice")" -eq 75
check_num "... promptly: their median under 1 s ($(jq .total_ms.p50 <<<"$mice") ms; the service takes 100)" "$(jq .total_ms.p50 <<<"$mice")" -lt 1000
check_num "the heavy client gets the rest of the capacity, not nothing (served $(jq .ok "$E2E_TMP/elephant.json"))" "$(jq .ok "$E2E_TMP/elephant.json")" -ge 600
check "clean stop" stop_daemon
e2e_finish
