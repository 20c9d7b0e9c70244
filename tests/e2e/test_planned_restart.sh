#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# `systemctl restart sluiced` under load, as the unit does it (SIGTERM to a
# daemon run with --keep-attached, then a new one that adopts): every SYN
# that arrives meanwhile is enforced (admitted within the limit, queued, or
# reset), none is black-holed (every client ends served or refused, none
# times out), the level never holds more seats than the data path's rule
# allows without a daemon, and nothing is admitted by the failsafe: the gap
# stays inside heartbeatTimeout, so the host is never unprotected.  Done
# three times in a row.
source "$(dirname "$0")/lib.sh"
e2e_init "$@"

# held.yaml's web level (8 seats, 32 short queues) with the default 3 s
# heartbeatTimeout.
sed 's/heartbeatTimeout: 10s/heartbeatTimeout: 3s/' "$CONFIGS/held.yaml" >"$E2E_TMP/restart.yaml"
grep -q "heartbeatTimeout: 3s" "$E2E_TMP/restart.yaml" || not_ok "the config has heartbeatTimeout 3s"
start_service 8080 8 100 || { not_ok "service starts"; e2e_finish; }
start_daemon "$E2E_TMP/restart.yaml" --keep-attached || { not_ok "sluiced starts"; e2e_finish; }
ok "sluiced --keep-attached starts"
limit=$(level_field web limit)
# SYNs the failsafe decided (admitted or dropped), from the data path's counters.
failsafe() { status_json | jq -er '.failsafe.opened + .failsafe.closed + .failsafe.static'; }
fs0=$(failsafe)
check "the failsafe's counters are readable ($fs0)" test -n "$fs0"

# 120 connections/s for 12 s against 80/s of capacity: the level is full
# the whole time, its queues busy.
in_cli "$LAB_LOAD" --connect $SRV4 --port 8080 --rate 120 --count 1440 --duration 12 --timeout 25 \
	--json --quiet >"$E2E_TMP/load.json" &
lp=$!
E2E_PIDS+=($lp)
# Seats, sampled from the pinned maps every 20 ms while it runs (no daemon needed).
( end=$(( $(date +%s) + 14 )); while [ "$(date +%s)" -lt "$end" ]; do
	"$SLUICECTL" status --pin-dir "$PIN_DIR" --json 2>/dev/null | jq -r '.levels[] | select(.name == "web") | .seats_in_use'
	sleep 0.02; done ) >"$E2E_TMP/seats.txt" &
sp=$!
sleep 2
gaps=()
for i in 1 2 3; do
	t0=$(date +%s%N)
	stop_daemon || not_ok "restart $i: the old daemon stops"
	start_daemon "$E2E_TMP/restart.yaml" --keep-attached || { not_ok "restart $i: the new daemon starts"; break; }
	gaps+=($(( ($(date +%s%N) - t0) / 1000000 )))
	sleep 2
done
wait $lp
wait $sp
diag "restart gaps (stop to protecting, ms): ${gaps[*]}; load: $(jq -c '{started, ok, refused, timeout, error}' "$E2E_TMP/load.json")"
max_gap=$(printf '%s\n' "${gaps[@]}" | sort -n | tail -1)
check_num "three restarts, each back to protecting well inside heartbeatTimeout (slowest ${max_gap} ms < 3000)" "${max_gap:-99999}" -lt 3000
check_num "every client started" "$(jq .started "$E2E_TMP/load.json")" -eq 1440
check_num "none black-holed: no connection timed out" "$(jq .timeout "$E2E_TMP/load.json")" -eq 0
check_num "... and none failed otherwise" "$(jq .error "$E2E_TMP/load.json")" -eq 0
check_num "served or refused (RST), every one" \
	"$(jq '.ok + .refused' "$E2E_TMP/load.json")" -eq 1440
check_num "most were served (the level worked through the restarts)" "$(jq .ok "$E2E_TMP/load.json")" -gt 700
max_seats=$(sort -n "$E2E_TMP/seats.txt" | tail -1)
check_num "seats sampled $(wc -l <"$E2E_TMP/seats.txt") times" "$(wc -l <"$E2E_TMP/seats.txt")" -gt 100
# Without a dispatcher the data path admits within the limit plus the
# seats of tickets nobody has claimed yet (at most the limit again).
check_num "the level never held more than twice its $limit seats (most: $max_seats)" "$max_seats" -le $((2 * limit))
fs1=$(failsafe)
check_num "no SYN was left to the failsafe during the restarts" "$((fs1 - fs0))" -eq 0
check "after the load every seat came back" wait_level_field web seats_in_use 0 10
# The counter the check above reads does move: a stop past heartbeatTimeout
# leaves the next SYNs to the failsafe.
stop_daemon
sleep 3.5
load --connect $SRV4 --port 8080 --rate 20 --count 4 --timeout 5 >/dev/null
check_num "(control: a daemon gone 3.5 s leaves SYNs to the failsafe: +$(( $(failsafe) - fs1 )))" "$(( $(failsafe) - fs1 ))" -gt 0
start_daemon "$E2E_TMP/restart.yaml" || not_ok "sluiced starts again"
check "clean stop" stop_daemon

e2e_finish
