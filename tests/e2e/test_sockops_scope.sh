#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# sock_ops on a cgroup of its own (sluiced --cgroup): it sees the
# connections of a service whose listener was created in that cgroup, and
# only those.  A socket belongs to the cgroup of the task that created it,
# an accepted one to its listener's: given a cgroup the service's listener
# is not in, sock_ops sees none of the connections XDP admits, their seats
# wait for the half-open time-out, and the daemon says so, naming the
# cgroup (event=sockops_blind, and the sockops_blind gauge).
source "$(dirname "$0")/lib.sh"
e2e_init "$@"

CG=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
SVC_CG=$CG/sluice-e2e-svc.$$
OTHER_CG=$CG/sluice-e2e-other.$$
mkdir "$SVC_CG" "$OTHER_CG" || { not_ok "cgroups under $CG"; e2e_finish; }
# After e2e_cleanup has stopped what ran in them.
trap 'e2e_cleanup; sleep 0.3; rmdir "$SVC_CG" "$OTHER_CG" 2>/dev/null' EXIT


SERVICE_CGROUP=$SVC_CG start_service 8080 16 20 || { not_ok "lab service starts in $SVC_CG"; e2e_finish; }
ok "lab service starts in its own cgroup"
URL=http://$SRV4:9466
scrape() { curl -sf --max-time 5 "$URL/metrics"; }
blind_gauge() { scrape | awk '$1 == "sluice_sockops_blind" { print $2 }'; }

# 1. The service's own cgroup: every connection seen, every seat back.
start_daemon "$CONFIGS/sockops-scope.yaml" --cgroup "$SVC_CG" --metrics-address "$SRV4:9466" ||
	{ not_ok "sluiced starts with --cgroup $SVC_CG"; e2e_finish; }
r=$(load --connect $SRV4 --port 8080 --rate 50 --count 200 --duration 4 --timeout 5)
check_num "its cgroup: the connections are served" "$(jq .ok <<<"$r")" -eq 200
check_num "... sock_ops saw them established" "$(status_json | jq .stats.established)" -ge 200
check "... and every seat came back" wait_level_field web seats_in_use 0 3
check_num "... nothing said blind" "$(grep -c 'event=sockops_blind' "$E2E_TMP/sluiced.log")" -eq 0
check_num "... the gauge says 0" "$(blind_gauge)" -eq 0
stop_daemon

# 2. A cgroup the listener is not in: served all the same (XDP admits),
# but sock_ops sees nothing, and the daemon says so within its window.
: >"$E2E_TMP/sluiced.log"
start_daemon "$CONFIGS/sockops-scope.yaml" --cgroup "$OTHER_CG" --metrics-address "$SRV4:9466" ||
	{ not_ok "sluiced starts with --cgroup $OTHER_CG"; e2e_finish; }
# The judgement needs a full window (SL_SIGHT_WINDOW, 10 s) and 20 expired
# handshakes (2 s time-out) in it: 120 connections in the first 6 s.
r=$(load --connect $SRV4 --port 8080 --rate 20 --count 120 --duration 6 --timeout 5)
check_num "another cgroup: the connections are still served" "$(jq .ok <<<"$r")" -eq 120
check_num "... sock_ops saw none established" "$(status_json | jq .stats.established)" -eq 0
check "... the daemon says sock_ops is blind, naming the cgroup" \
	bash -c 'for _ in $(seq 75); do grep -q "event=sockops_blind cgroup=$1 " "$2" && exit 0; sleep 0.2; done; exit 1' \
	_ "$OTHER_CG" "$E2E_TMP/sluiced.log"
diag "$(grep -m1 'event=sockops_blind' "$E2E_TMP/sluiced.log" | cut -c1-200)"
check_num "... once" "$(grep -c 'event=sockops_blind' "$E2E_TMP/sluiced.log")" -eq 1
check_num "... the gauge says 1" "$(blind_gauge)" -eq 1
stop_daemon

# 3. Attached to the whole host (no --cgroup), nothing is judged: every
# socket is under the root.
: >"$E2E_TMP/sluiced.log"
start_daemon "$CONFIGS/sockops-scope.yaml" --metrics-address "$SRV4:9466" || { not_ok "sluiced starts on the root"; e2e_finish; }
r=$(load --connect $SRV4 --port 8080 --rate 20 --count 40 --duration 3 --timeout 5)
check_num "the root: served and seen" "$(status_json | jq .stats.established)" -ge 40
check "... no sockops_blind gauge (nothing to judge)" bash -c '! curl -sf --max-time 5 "$1/metrics" | grep -q "^sluice_sockops_blind"' _ "$URL"
check "clean stop" stop_daemon
e2e_finish
