#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# A refusal reaches its client on every interface (issue 38).  For each
# client end the lab can have (bare: no program, GRO off, the default;
# a pass XDP program, vouched for or not; GRO on) and each XDP mode: a Reject level's storm
# where every connection is served or refused, none timed out, nothing
# counted lost; the path status reports is the one the device proves
# (native on a veth: the tc hand-off, unless --veth-peer-xdp says its peer
# runs a program; in generic mode: XDP_TX); held SYNs re-injected and refused from their held
# frame through the packet socket.  Then the peer loses its program while
# refusals go out by XDP_TX: the drops are counted, said once, the path
# moves to the hand-off, and back to XDP_TX when the program returns.
source "$(dirname "$0")/lib.sh"
e2e_init "$@"

PASS_OBJ=$B/tests/xdp_pass.bpf.o
METRICS=127.0.0.1:9464

iface_json() { status_json | jq -c '.interfaces[] | select(.name == "sl0") | .refusals'; }

# fresh_service WORKERS SERVICE_MS: the lab service on 8080, alone.
SERVICE_PID=
fresh_service() {
	[ -n "$SERVICE_PID" ] && { kill "$SERVICE_PID"; wait "$SERVICE_PID" 2>/dev/null; }
	rm -f "$E2E_TMP/service-8080.ready"
	start_service 8080 "$1" "$2" || return 1
	SERVICE_PID=${E2E_PIDS[-1]}
}

# scenario PEER MODE WANT_PATH WANT_REASON [SLUICED_FLAG...]
scenario() {
	local peer=$1 mode=$2 want_path=$3 want_reason=$4 tag="$1/$2${5:+ $5}" r ifc
	shift 4
	"$TOPO" up --peer "$peer" >/dev/null || { not_ok "$tag: lab up"; return; }
	fresh_service 4 200 || { not_ok "$tag: service starts"; return; }
	: >"$E2E_TMP/sluiced.log"
	start_daemon "$CONFIGS/basic.yaml" --xdp-mode "$mode" "$@" || { not_ok "$tag: sluiced starts"; return; }
	ifc=$(iface_json)
	diag "$tag: $ifc"
	check "$tag: refusals by $want_path ($want_reason)" \
		jq -e --arg p "$want_path" --arg r "$want_reason" '.path == $p and .reason == $r and .handoff_ready' <<<"$ifc"
	# 4 seats x 200 ms (20/s) against 100/s: most are refused.
	r=$(load --connect $SRV4 --port 8080 --rate 100 --count 200 --duration 3 --timeout 3)
	diag "$tag: $(jq -c '{started, ok, refused, timeout}' <<<"$r")"
	check_num "$tag: refused at once, not timed out" "$(jq .timeout <<<"$r")" -eq 0
	check_num "$tag: ... the excess refused" "$(jq .refused <<<"$r")" -ge 100
	ifc=$(iface_json)
	if [ "$want_path" = handoff ]; then
		check_num "$tag: ... each RST handed off to tc and sent by it" \
			"$(jq '[.rst_handoff, .handoff_out] | min' <<<"$ifc")" -ge "$(jq .refused <<<"$r")"
	else
		check_num "$tag: ... each RST sent with XDP_TX" "$(jq .rst_xdp_tx <<<"$ifc")" -ge "$(jq .refused <<<"$r")"
	fi
	check_num "$tag: no refusal lost" "$(status_json | jq .stats.rst_failed)" -eq 0
	# Our own RSTs pass tcx egress on their way out: not a stranger's frame.
	check_num "$tag: no frame of ours taken for a stranger's" "$(jq .handoff_foreign <<<"$ifc")" -eq 0
	stop_daemon
	# Held SYNs: an 8-seat Queue level, 60 connections at 120/s; then a
	# one-seat level with a two-place queue, refused from its held SYN.
	fresh_service 8 100 || { not_ok "$tag: service starts (held)"; return; }
	start_daemon "$CONFIGS/held.yaml" --xdp-mode "$mode" "$@" || { not_ok "$tag: sluiced starts (held)"; return; }
	# The SYNs the clients put on the wire, seen at their end: the level's
	# retransmits are among them (generic XDP sees each re-injected SYN a
	# second time, and that is not one).
	# (not in_cli: a function's background subshell would get the signal)
	ip netns exec "$CLI_NS" tcpdump -i sl1 -nn -U -w "$E2E_TMP/syns.pcap" \
		'tcp dst port 8080 and tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn' 2>"$E2E_TMP/tcpdump.err" &
	local cap=$!
	for _ in $(seq 30); do grep -q listening "$E2E_TMP/tcpdump.err" && break; sleep 0.1; done
	sleep 0.3
	r=$(load --connect $SRV4 --port 8080 --rate 120 --count 60 --duration 2 --timeout 8)
	sleep 0.3
	kill -TERM $cap; wait $cap 2>/dev/null
	check_num "$tag: held SYNs re-injected: every connection served" "$(jq .ok <<<"$r")" -eq 60
	check_num "$tag: ... through sluice_tc_out" "$(iface_json | jq .handoff_in)" -gt 0
	local wire distinct retx
	wire=$(tcpdump -r "$E2E_TMP/syns.pcap" -nn 2>/dev/null | wc -l)
	distinct=$(tcpdump -r "$E2E_TMP/syns.pcap" -nn 2>/dev/null | awk '{ print $3 }' | sort -u | wc -l)
	retx=$(status_json | jq '[.levels[] | select(.name == "web") | .retransmits] | add')
	diag "$tag: SYNs on the wire $wire (of $distinct connections captured) for 60 connections; the level counted $retx retransmits"
	# The wire's retransmits are the SYNs captured twice; a connection the
	# capture missed altogether (it may attach a moment late) could have
	# retransmitted unseen, so each one missed is one more allowed.
	check_num "$tag: ... no retransmit counted that the wire did not carry" "$retx" -le $((wire - distinct + 60 - distinct))
	stop_daemon
}

scenario bare native handoff no_ndo_xmit
scenario bare generic xdp_tx generic
# A veth's NDO_XMIT appears with a program on the peer and with GRO alone,
# and only the first polls XDP_TX frames: the hand-off unless the operator
# vouches for the peer's program.
scenario xdp native handoff veth_peer
scenario xdp native xdp_tx ndo_xmit --veth-peer-xdp
scenario gro native handoff veth_peer

# The peer's program goes while sluice refuses by XDP_TX (vouched for).  The daemon is
# paused meanwhile (SIGSTOP; the heartbeat is 2 s, the pause 0.6 s), so the
# device's new features are not read before the first RSTs go out: they
# are dropped, and the tracepoints must catch it.
"$TOPO" up --peer xdp >/dev/null || not_ok "runtime: lab up"
fresh_service 4 200 || not_ok "runtime: service starts"
: >"$E2E_TMP/sluiced.log"
start_daemon "$CONFIGS/basic.yaml" --metrics-address "$METRICS" --veth-peer-xdp || { not_ok "runtime: sluiced starts"; e2e_finish; }
check "runtime: XDP_TX while the peer has its program" jq -e '.path == "xdp_tx"' <<<"$(iface_json)"
load --connect $SRV4 --port 8080 --rate 100 --count 400 --duration 4 --timeout 3 >"$E2E_TMP/runtime.json" &
lp=$!
sleep 1
kill -STOP "$DAEMON_PID"
in_cli ip link set dev sl1 xdpdrv off
sleep 0.6
kill -CONT "$DAEMON_PID"
wait $lp
r=$(cat "$E2E_TMP/runtime.json")
diag "runtime: $(jq -c '{started, ok, refused, timeout}' <<<"$r"); $(iface_json)"
check "runtime: the hand-off once the peer lost its program" \
	jq -e '.path == "handoff" and (.reason == "no_ndo_xmit" or .reason == "drops")' <<<"$(iface_json)"
lost=$(iface_json | jq .tx_dropped)
check_num "runtime: the RSTs the driver dropped were counted" "$lost" -ge 1
check_num "runtime: ... as refusals lost in status" "$(status_json | jq .stats.rst_failed_by_cause.xdp_tx_dropped)" -eq "$lost"
check_num "runtime: ... and in the metrics" \
	"$(curl -s "http://$METRICS/metrics" | awk '/^sluice_interface_refusals_lost_total\{interface="sl0"\}/ { print $2 }')" -eq "$lost"
check_num "runtime: ... said once, naming the interface" \
	"$(grep -c 'event=refusals_dropped iface=sl0' "$E2E_TMP/sluiced.log")" -eq 1
# A client whose RST was dropped retransmits its SYN a second later and is
# refused then: none waits out its 3 s.
check_num "runtime: no client timed out" "$(jq .timeout <<<"$r")" -eq 0
in_cli ip link set dev sl1 xdpdrv obj "$PASS_OBJ" sec xdp
sleep 1.5
check "runtime: XDP_TX again once the program is back" jq -e '.path == "xdp_tx" and .reason == "ndo_xmit"' <<<"$(iface_json)"
r=$(load --connect $SRV4 --port 8080 --rate 100 --count 100 --duration 2 --timeout 3)
check_num "runtime: ... and refusals reach the client" "$(jq .timeout <<<"$r")" -eq 0
check "runtime: the drops were said no more" test "$(grep -c 'event=refusals_dropped' "$E2E_TMP/sluiced.log")" -eq 1
links=$(for f in "$PIN_DIR"/links/tcx_* "$PIN_DIR"/links/tx_*; do bpftool -j link show pinned "$f" | jq .id; done)
check_num "the tc hand-off and the tracepoints are pinned links" "$(wc -w <<<"$links")" -eq 4
check "clean stop" stop_daemon
check "... that detached them all" bash -c 'for id in $1; do bpftool link show id "$id" >/dev/null 2>&1 && exit 1; done; ! ls "$2"/links/* >/dev/null 2>&1' _ "$links" "$PIN_DIR"

# ---- a held SYN's RST that cannot leave: counted and said ------------------------------
# tiny (held.yaml): one seat held 2 s, two queue places.  While the device's
# egress drops everything (a root pfifo of length 0: the packet socket's
# send fails with ENOBUFS), three more are refused from their held SYN:
# each RST lost is counted, the first said once.  The egress comes back
# before their SYN retransmit (1 s), which a reject ticket answers.
"$TOPO" up >/dev/null || not_ok "lost: lab up"
start_service 9090 1 2000 || not_ok "lost: service starts"
: >"$E2E_TMP/sluiced.log"
start_daemon "$CONFIGS/held.yaml" || { not_ok "lost: sluiced starts"; e2e_finish; }
load --connect $SRV4 --port 9090 --rate 1000 --count 3 --timeout 10 >"$E2E_TMP/lost-fill.json" &
fill=$!
wait_level_field tiny seats_in_use 1 3
sleep 0.3
tc qdisc add dev sl0 root pfifo limit 0
load --connect $SRV4 --port 9090 --rate 100 --count 3 --timeout 5 >"$E2E_TMP/lost.json" &
lp=$!
sleep 0.3
tc qdisc del dev sl0 root
wait $lp
r=$(cat "$E2E_TMP/lost.json")
diag "lost: $(jq -c '{ok, refused, timeout, refused_ms}' <<<"$r"); $(status_json | jq -c '.stats | {rst_failed, rst_failed_by_cause}')"
check_num "lost: each RST the packet socket could not send counted (daemon_send)" \
	"$(status_json | jq .stats.rst_failed_by_cause.daemon_send)" -ge 3
check_num "... in rst_failed" "$(status_json | jq .stats.rst_failed)" -ge 3
check_num "... said once, naming the interface and the cause" \
	"$(grep -c 'event=held_send_failed iface=sl0 frame=RST err=No buffer space available' "$E2E_TMP/sluiced.log")" -eq 1
check_num "... and the clients refused at their retransmit, none timed out" "$(jq .refused <<<"$r")" -eq 3
wait $fill
check "clean stop (lost)" stop_daemon

e2e_finish
