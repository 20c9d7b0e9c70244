#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The fast loop's end-to-end check (make test-fast): admit, defer and
# refuse, once each, on the lab's default client end (a bare veth: no XDP
# program, GRO off), in native XDP.  A Queue level admits what fits,
# holds the rest and re-injects each held SYN when a seat frees (no client
# waits for its SYN retransmit); a full queue refuses from the held SYN;
# a Reject level refuses in the data path.  Every refused client is told
# at once (or, having waited, at the queue's wait limit, before its own
# time-out), none times out, and no seat is left in use.  The margins are
# the client's own: a connect that waited for a retransmit takes 1 s.
source "$(dirname "$0")/lib.sh"
e2e_init "$@"

RETRANSMIT_MS=900 # under the first SYN retransmit (1 s): nobody waited for one

start_service 8080 8 100 || { not_ok "lab service on 8080"; e2e_finish; }
start_service 9090 1 2000 || { not_ok "lab service on 9090"; e2e_finish; }

# ---- defer and refuse in the daemon (configs/held.yaml: web 8 seats, tiny 1 seat + 2 queued)
start_daemon "$CONFIGS/held.yaml" || { not_ok "sluiced starts (held.yaml)"; e2e_finish; }
ok "sluiced starts on a bare client end (native XDP)"

r=$(load --connect $SRV4 --port 8080 --rate 10 --count 8 --duration 1 --timeout 3)
check_num "admit: light load, every connection served" "$(jq .ok <<<"$r")" -eq 8

# 40 connections within 0.2 s into 8 seats of 100 ms: most wait in the queue.
r=$(load --connect $SRV4 --port 8080 --rate 200 --count 40 --duration 1 --timeout 3 --csv "$E2E_TMP/defer.csv")
check_num "defer: a burst five times the seats, every connection served" "$(jq .ok <<<"$r")" -eq 40
check_num "... held SYNs re-injected" "$(level_field web reinjected)" -gt 0
check_num "... none waited for its SYN retransmit (max connect ms)" "$(pct_col 1 4 "$E2E_TMP/defer.csv")" -lt $RETRANSMIT_MS

# tiny: one seat held 2 s, two queue places (wait limit 2.9 s); six at
# once: three refused from their held SYN when the queue is full, and the
# second in the queue at its wait limit, before its client's 5 s.
r=$(load --connect $SRV4 --port 9090 --rate 100 --count 6 --duration 1 --timeout 5 --csv "$E2E_TMP/full.csv")
diag "queue full: $(jq -c '{ok, refused, timeout, refused_ms}' <<<"$r")"
check_num "refuse (daemon): the queue's overflow told at once (refused under ${RETRANSMIT_MS} ms)" \
	"$(awk -F, -v m=$RETRANSMIT_MS 'NR > 1 && $6 == "refused" && $5 < m { n++ } END { print n + 0 }' "$E2E_TMP/full.csv")" -ge 3
check_num "... no waiter kept past the wait limit (max refused ms, limit 2900)" "$(jq .refused_ms.max <<<"$r")" -lt 3900
check_num "... no connect timed out" "$(jq .timeout <<<"$r")" -eq 0
check_num "... every RST for a held SYN sent" "$(level_field tiny reset_held)" -ge 3
check "no seat left in use (web)" wait_level_field web seats_in_use 0 10
check "no seat left in use (tiny)" wait_level_field tiny seats_in_use 0 10
check "clean stop" stop_daemon

# ---- refuse in the data path (configs/basic.yaml: web, 4 seats, Reject) --------------------
start_service 8081 4 200 || not_ok "lab service on 8081"
sed 's/"8080"/"8081"/' "$CONFIGS/basic.yaml" >"$E2E_TMP/basic-8081.yaml"
start_daemon "$E2E_TMP/basic-8081.yaml" || { not_ok "sluiced starts (basic.yaml)"; e2e_finish; }
r=$(load --connect $SRV4 --port 8081 --rate 100 --count 60 --duration 1 --timeout 3)
diag "reject level: $(jq -c '{ok, refused, timeout}' <<<"$r"); $(status_json | jq -c '.interfaces[0].refusals | {path, reason, rst_xdp_tx, rst_handoff}')"
check_num "refuse (data path): the level's excess refused" "$(jq .refused <<<"$r")" -ge 20
check_num "... told at once (max refused ms)" "$(jq .refused_ms.max <<<"$r")" -lt $RETRANSMIT_MS
check_num "... no connect timed out" "$(jq .timeout <<<"$r")" -eq 0
check_num "... no refusal lost" "$(status_json | jq .stats.rst_failed)" -eq 0
# The hand-off's programs as this kernel has them: tcx links from 6.6,
# cls_bpf filters on clsact before (the kernel matrix's 6.1), said so.
want_via=tcx
[ "$(printf '%s\n' "$(uname -r)" 6.6 | sort -V | head -n 1)" = 6.6 ] || want_via=clsact
check "... the hand-off attached by $want_via on $(uname -r) (status)" \
	jq -e --arg v "$want_via" '.interfaces[0].refusals.handoff_via == $v' <<<"$(status_json)"
check "no seat left in use" wait_level_field web seats_in_use 0 10
check "clean stop" stop_daemon
e2e_finish
