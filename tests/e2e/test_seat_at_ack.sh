#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Seats at the handshake's final ACK, end to end (real kernel on both
# sides).  A level that seats at the ACK lets SYNs through unseated; the
# kernel answers them; the ACK that proves its source (it acknowledges the
# request socket's ISN) meets the level's gates: admitted, deferred (held,
# re-injected at its turn) or rejected (RST).  A spoofed SYN flood from
# sources whose SYN-ACKs vanish then holds no seat, no queue slot and no
# held frame; blind ACKs prove nothing.  Then seatAt: auto: a level seats
# at the SYN until its handshakes go unfinished, moves to the ACK, and
# comes back when they stop.
source "$(dirname "$0")/lib.sh"
e2e_init "$@"

start_service 8080 8 100 || { not_ok "lab service on 8080"; e2e_finish; }
start_service 9090 1 3000 || { not_ok "lab service on 9090"; e2e_finish; }
start_service 7070 8 100 || { not_ok "lab service on 7070"; e2e_finish; }

# 198.18.3.0/24 lies behind the client namespace, which drops what is
# sent there without a word (no ICMP): spoofed sources that never answer.
ip route add 198.18.3.0/24 via 198.18.0.2 dev sl0
in_cli sysctl -qw net.ipv4.ip_forward=1
in_cli ip route add blackhole 198.18.3.0/24

# metrics PORT: sluiced's /metrics, with bash's own TCP (no curl needed).
metrics() {
	local out
	exec 7<>"/dev/tcp/127.0.0.1/$1" || return 1
	printf 'GET /metrics HTTP/1.0\r\n\r\n' >&7
	out=$(cat <&7)
	exec 7<&-
	printf '%s\n' "$out"
}
# tcpext NAME: a TcpExt counter of this (the server's) namespace.
tcpext() {
	awk -v n="$1" '$1 == "TcpExt:" { if (!h) { for (i = 2; i <= NF; i++) col[$i] = i; h = 1 } else print $col[n] }' /proc/net/netstat
}
gstat() { status_json | jq -r ".stats.$1"; }
spoofed_entries() { "$SLUICECTL" conns --pin-dir "$PIN_DIR" --json | jq '[.conns[] | select(.client | startswith("198.18.3."))] | length'; }

cp "$CONFIGS/seat-at-ack.yaml" "$E2E_TMP/ack.yaml" # a copy: 4c edits it
start_daemon "$E2E_TMP/ack.yaml" || { not_ok "sluiced starts"; e2e_finish; }
check "web seats at the ACK (seatAt: ack)" wait_level_field web seats_at ack 3

# 1. Real clients within the limit: every one seated at its ACK.
r=$(load --connect $SRV4 --port 8080 --rate 20 --count 40 --timeout 5)
check_num "40 clients served" "$(jq .ok <<<"$r")" -eq 40
check_num "their SYNs passed unseated" "$(level_field web unseated_syns)" -ge 40
check_num "their ACKs proved their sources" "$(level_field web acks_proved)" -ge 40
check_num "admitted at the ACK" "$(level_field web admitted)" -ge 40
check "every seat came back" wait_level_field web seats_in_use 0 3
check_num "no handshake timed out" "$(level_field web expired)" -eq 0
proved=$(level_field web acks_proved)
r=$(load --connect $SRV6 --port 8080 --rate 20 --count 10 --timeout 5)
check_num "10 IPv6 clients served" "$(jq .ok <<<"$r")" -eq 10
check_num "their ACKs proved too" $(( $(level_field web acks_proved) - proved )) -ge 10

# 2. Half again the service's capacity from eight sources (flows): the
# connections over the limit wait at their ACK (held by the daemon,
# re-injected at their turn) and none is lost; a flow's queue (16) never
# fills.
SRCS=()
for i in $(seq 10 17); do SRCS+=(--source 198.18.0.$i); done
r=$(load --connect $SRV4 --port 8080 "${SRCS[@]}" --rate 120 --count 240 --timeout 9)
check_num "240 clients served at 1.5 x capacity" "$(jq .ok <<<"$r")" -eq 240
diag "over the limit: total p50 $(jq .total_ms.p50 <<<"$r") ms, p99 $(jq .total_ms.p99 <<<"$r") ms;" \
	"refused $(jq .refused <<<"$r"), timed out $(jq .timeout <<<"$r");" \
	"level: $("$SLUICECTL" levels --control-socket "$E2E_TMP/ctl.sock" --json | jq -c '.levels[] | select(.name == "web") | {rejected_queue_full, rejected_time_out, rejected_shed, rejected_stalled, stalls, dropped_gone}')"
check_num "some waited at their ACK" "$(level_field web deferred)" -gt 0
check_num "held ACKs were re-injected" "$(level_field web reinjected)" -gt 0
check "every seat came back" wait_level_field web seats_in_use 0 3

# 3. A spoofed SYN flood into the same level while real clients connect.
# It fills the listener's request queue, so the kernel answers real
# clients with SYN cookies: their ACKs prove themselves by the cookie.
before=$(level_field web unseated_syns)
cookies=$(tcpext SyncookiesRecv)
in_cli "$LAB_SYN" --src 198.18.3.1 --sources 254 --dst $SRV4 --dport 8080 --count 6000 --rate 2000 \
	>"$E2E_TMP/flood.out" &
flood=$!
E2E_PIDS+=($flood)
r=$(load --connect $SRV4 --port 8080 --rate 20 --count 40 --timeout 5)
wait $flood
check_num "6,000 spoofed SYNs sent" "$(cat "$E2E_TMP/flood.out")" -eq 6000
check_num "every real client served during the flood" "$(jq .ok <<<"$r")" -eq 40
check_num "clients answered with SYN cookies got in by them" $(( $(tcpext SyncookiesRecv) - cookies )) -ge 1
diag "clients during the flood: connect p99 $(jq .connect_ms.p99 <<<"$r") ms, total (connect, request, answer) p50 $(jq .total_ms.p50 <<<"$r") ms, p99 $(jq .total_ms.p99 <<<"$r") ms"
check_num "the flood's SYNs passed unseated" $(( $(level_field web unseated_syns) - before )) -ge 6000
check_num "no spoofed source holds a seat" "$(spoofed_entries)" -eq 0
check_num "seats in use right after the flood" "$(level_field web seats_in_use)" -eq 0
check_num "nothing waits for them" "$(level_field web waiting)" -eq 0
check_num "no frame held for them" "$(level_field web held_syns)" -eq 0
check_num "no half-open seat to time out" "$(level_field web expired)" -eq 0
diag "the kernel's own request sockets: $(ss -Htn state syn-recv | wc -l) (its backlog and SYN cookies bound them)"

# 4. Blind ACKs (the final ACK of handshakes nobody began) prove nothing.
unproved=$(gstat acks_unproved)
sent=$(in_cli "$LAB_SYN" --ack --src 198.18.3.1 --sources 254 --dst $SRV4 --dport 8080 --count 2000 --rate 2000)
check_num "2,000 blind ACKs sent" "$sent" -eq 2000
check_num "counted unproved" $(( $(gstat acks_unproved) - unproved )) -ge 2000
check_num "and seated none" "$(level_field web seats_in_use)" -eq 0

# 4b. A policy's in-flight slots are taken with the level's seats, at the
# proving ACK: a spoofed flood into the policy's port holds none of them,
# while real clients still take (and give back) theirs.
pol() { "$SLUICECTL" controller --control-socket "$E2E_TMP/ctl.sock" --json | jq -r ".policies[] | select(.name == \"svc\") | .$1"; }
check "the policy runs in sluice's mode" test "$(pol mode)" = sluice
in_cli "$LAB_SYN" --src 198.18.3.1 --sources 254 --dst $SRV4 --dport 7070 --count 4000 --rate 2000 \
	>"$E2E_TMP/flood7070.out" &
flood=$!
E2E_PIDS+=($flood)
( while kill -0 $flood 2>/dev/null; do pol in_flight; sleep 0.1; done ) >"$E2E_TMP/pol-in-flight.txt" &
sampler=$!
r=$(load --connect $SRV4 --port 7070 --rate 10 --count 15 --timeout 5)
wait $flood
wait $sampler
most=$(sort -n "$E2E_TMP/pol-in-flight.txt" | tail -1)
diag "policy svc in flight during the flood: at most ${most:-?} ($(wc -l <"$E2E_TMP/pol-in-flight.txt") samples)"
check_num "4,000 spoofed SYNs sent to the policy's port" "$(cat "$E2E_TMP/flood7070.out")" -eq 4000
check_num "every real client of the policy's port served" "$(jq .ok <<<"$r")" -eq 15
check_num "the policy's slots in flight stayed within the real clients' (at most 4, 10/s x 100 ms)" "${most:-99}" -le 4
check_num "... and all came back" "$(pol in_flight)" -eq 0
pw=$("$SLUICECTL" controller --control-socket "$E2E_TMP/ctl.sock" --json | jq -c '[.policies[] | select(.name == "svc") | .workloads[]] | {syns: (map(.syns) | add), admitted: (map(.admitted_inline + .admitted) | add)}')
diag "policy svc's gate: $pw"
check_num "the policy's gate met the real clients' ACKs, not the flood's SYNs (fewer than 100)" "$(jq .syns <<<"$pw")" -lt 100
check_num "... and admitted every real client" "$(jq .admitted <<<"$pw")" -ge 15

# 4c. A reload with connections in flight through the policy: a new
# policy first in the file and new parameters for svc (a new record).
# svc keeps its index, and its count is its connections' (6 held open,
# no request sent), not a fresh gate's 0; once they close it is 0 again.
in_cli "$LAB_LOAD" --connect $SRV4 --port 7070 --no-request --rate 20 --count 6 --timeout 8 --json --quiet \
	>"$E2E_TMP/held7070.json" &
held=$!
E2E_PIDS+=($held)
for _ in $(seq 40); do [ "$(pol in_flight)" = 6 ] && break; sleep 0.1; done
check_num "six connections hold svc's slots" "$(pol in_flight)" -eq 6
svc_index=$("$SLUICECTL" conns --pin-dir "$PIN_DIR" --json | jq '[.conns[] | select(.local | endswith(":7070")) | .policy] | unique | .[0]')
{ printf '%s\n' "apiVersion: sluice/v1" "kind: AverageLatencySchedulingPolicy" "metadata: {name: first}" "spec:" \
	"  load_scheduling_core:" "    aimd_load_scheduler:" "      load_scheduler:" \
	"        selectors: [{label_matcher: {match_labels: {dst.port: \"6060\"}}}]" "---"
  sed 's/^  load_scheduling_core:$/  adaptive: {max_in_flight: 500}\n  load_scheduling_core:/' "$CONFIGS/seat-at-ack.yaml"; } >"$E2E_TMP/ack.yaml"
check "reload: a policy added first, svc's parameters changed" "$SLUICECTL" reload --control-socket "$E2E_TMP/ctl.sock"
check_num "svc runs its new parameters" "$(pol max_in_flight)" -eq 500
check_num "svc kept its index (its gate: ${svc_index})" \
	"$("$SLUICECTL" controller --control-socket "$E2E_TMP/ctl.sock" --json | jq '[.policies[].name] | index("svc")')" -eq "${svc_index:-99}"
check_num "... and counts the six still in flight" "$(pol in_flight)" -eq 6
# A crash and the next daemon on the pinned maps: the file's order would
# put svc second, the gate it ran on keeps it first, with its count.
kill_daemon_hard
g=$(status_json | jq -c --argjson i "${svc_index:-99}" '.policy_gates[] | select(.index == $i)')
diag "svc's gate with no daemon: $g"
check "with no daemon, status shows svc's gate from the pins: limit mode, six held" \
	jq -e '.policy == "svc" and .mode == "limit" and .slots_held == 6' <<<"$g"
check "... and the table names it" bash -c '"$1" status --pin-dir "$2" | grep -Eq "^svc +$3 +limit +6 "' _ "$SLUICECTL" "$PIN_DIR" "${svc_index:-99}"
start_daemon "$E2E_TMP/ack.yaml" || not_ok "the next daemon starts"
check_num "after a crash, the next daemon keeps svc at its gate" \
	"$("$SLUICECTL" controller --control-socket "$E2E_TMP/ctl.sock" --json | jq '[.policies[].name] | index("svc")')" -eq "${svc_index:-99}"
check_num "... and counts the six still in flight" "$(pol in_flight)" -eq 6
wait $held
for _ in $(seq 40); do [ "$(pol in_flight)" = 0 ] && break; sleep 0.1; done
check_num "they closed: none in flight" "$(pol in_flight)" -eq 0
check_num "... and its gate holds exactly none (slots_held, unclamped)" "$(pol gate.slots_held)" -eq 0
check_num "... at the index its connections named" "$(pol gate.index)" -eq "${svc_index:-99}"

# 5. Reject at the ACK: tiny's one seat taken, the next client's handshake
# completes on its side, then its ACK is answered with a RST.
in_cli "$LAB_LOAD" --connect $SRV4 --port 9090 --rate 1 --count 1 --timeout 8 --json --quiet \
	>"$E2E_TMP/tiny-hold.json" &
hold=$!
E2E_PIDS+=($hold)
check "tiny's seat taken" wait_level_field tiny seats_in_use 1 3
r=$(load --connect $SRV4 --port 9090 --rate 1 --count 1 --timeout 3)
check_num "the second client is turned away (reset, not served)" "$(jq '.ok' <<<"$r")" -eq 0
check_num "rejected at its ACK" "$(level_field tiny rejected)" -ge 1
wait $hold
check_num "the first was served" "$(jq .ok "$E2E_TMP/tiny-hold.json")" -eq 1
check "clean stop" stop_daemon

# 6. seatAt: auto.  Measured handshakes first (the time-out needs 20).
start_daemon "$CONFIGS/seat-auto.yaml" || { not_ok "sluiced starts (auto)"; e2e_finish; }
check "web seats at the SYN" wait_level_field web seats_at syn 3
r=$(load --connect $SRV4 --port 8080 --rate 40 --count 40 --timeout 5)
check_num "40 clients served, seated at the SYN" "$(jq .ok <<<"$r")" -eq 40
check_num "none of them unseated" "$(level_field web unseated_syns)" -eq 0
sleep 1.2 # a step to measure them
# Four spoofed SYNs a second: at the SYN each takes a seat for the
# measured time-out (200 ms floor here, not handshakeTimeout's 10 s) and
# lingers; four unfinished handshakes move the level to the ACK.
in_cli "$LAB_SYN" --src 198.18.3.1 --sources 254 --dst $SRV4 --dport 8080 --count 40 --rate 4 \
	>"$E2E_TMP/slow-flood.out" &
flood=$!
E2E_PIDS+=($flood)
t0=$SECONDS
check "the level moves its seats to the ACK" wait_level_field web seats_at ack 6
t_ack=$((SECONDS - t0))
diag "at the ACK ${t_ack} s into the flood"
r=$(load --connect $SRV4 --port 8080 --rate 10 --count 30 --timeout 5)
check_num "clients served while it lasts" "$(jq .ok <<<"$r")" -eq 30
wait $flood
check "no seat held once it stops" wait_level_field web seats_in_use 0 3
# Before the move each spoofed SYN held a seat for the measured time-out:
# the metric says 200 ms, and no more of them expired than were sent
# before the move (4 a second) plus the last second's.
check_num "half-open time-out measured at the floor, not handshakeTimeout (ms)" \
	"$(metrics 9465 | awk '/^sluice_halfopen_timeout_seconds / { print int($2 * 1000) }')" -eq 200
check_num "spoofed seats expired before the move, and only those" \
	"$(level_field web expired)" -le $(( 4 * (t_ack + 2) ))
check "back at the SYN after holdFor once the handshakes finish again" wait_level_field web seats_at syn 20
check "clean stop (auto)" stop_daemon
e2e_finish
