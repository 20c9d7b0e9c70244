#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# make bench, refusal paths (issue 38): what a refusal costs by each way it
# can leave, against the kernel's own RST for a closed port measured in the
# same run.  A SYN flood (lab_syn, RATE a second for SECS) into a full
# one-seat Reject level (tests/bench/refusal.yaml), per arm:
#   closed   nothing in front, no listener: the kernel's TCP answers the RST
#   xdp_tx   native XDP, the client's veth has a program (--veth-peer-xdp
#            vouches for it): RSTs by XDP_TX
#   handoff  native XDP, a bare client veth: RSTs handed off to sluice_tc_in
#   generic  generic XDP, a bare client veth: RSTs by generic XDP_TX
# Reported: RSTs the client's interface received of the SYNs sent (every
# refusal must arrive), and sluice's programs' own run time per RST
# (kernel.bpf_stats_enabled for the run, put back after: sluice_xdp, plus
# sluice_tc_in where the RST is handed off), against XDP_TX's.  The whole
# host's CPU per SYN does not resolve the paths: the flood's sender paces
# itself by spinning, a core's worth in every arm.  The hand-off's skb
# and transmit outside the programs are not in the figure either: the
# closed port's arm is the kernel's whole RST, for scale.  Asserts nothing.
#
#   scripts/bench_refusal.sh        (root; REFUSAL_RATE 20000, REFUSAL_SECS 5)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/scripts/lab_private.sh"
lab_private bench_refusal "$@"

B=$ROOT/${BUILD:-build}
RATE=${REFUSAL_RATE:-20000}
SECS=${REFUSAL_SECS:-5}
PIN=/sys/fs/bpf/sluice
in_cli() { ip netns exec sl-cli "$@"; }

STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled)
lab_cleanup_extra() { sysctl -qw kernel.bpf_stats_enabled="$STATS_WAS"; }
sysctl -qw kernel.bpf_stats_enabled=1
# prog_ns NAME: the loaded program's cumulative run time (0: not loaded).
prog_ns() { bpftool -j prog show name "$1" 2>/dev/null | jq -s '[.[] | if type == "array" then .[] else . end | .run_time_ns // 0] | add // 0'; }
busy_ns() { echo $(( $(prog_ns sluice_xdp) + $(prog_ns sluice_tc_in) )); }
rx_packets() { in_cli cat /sys/class/net/sl1/statistics/rx_packets; }

# flood ARM: the SYNs, and what came back.
flood() {
	local arm=$1 b0 b1 r0 r1 sent
	b0=$(busy_ns); r0=$(rx_packets)
	sent=$(in_cli "$B/lab_syn" --src 198.18.0.20 --dst 198.18.0.1 --dport 8099 --rate "$RATE" \
		--count $((RATE * SECS)) --duration $((SECS + 5)))
	sleep 0.5 # the last RSTs
	b1=$(busy_ns); r1=$(rx_packets)
	echo "$arm $sent $((r1 - r0)) $(awk -v a="$b0" -v b="$b1" 'BEGIN { printf "%.0f", b - a }')" >>"$TMP/arms"
}

# sluice_arm ARM PEER MODE [SLUICED_FLAG...]
sluice_arm() {
	local arm=$1 peer=$2 mode=$3 svc daemon hold
	shift 3
	"$ROOT/tests/lab/topo.sh" up --peer "$peer" >/dev/null
	"$B/lab_service" --listen 198.18.0.1 --port 8099 --workers 1 --service-ms 60000 --quiet &
	svc=$!
	"$B/sluiced" --config "$ROOT/tests/bench/refusal.yaml" --iface sl0 --xdp-mode "$mode" "$@" --pin-dir "$PIN" \
		--control-socket "$TMP/ctl.sock" >"$TMP/sluiced-$arm.log" 2>&1 &
	daemon=$!
	PIDS+=("$svc" "$daemon")
	for _ in $(seq 100); do "$B/sluicectl" levels --control-socket "$TMP/ctl.sock" >/dev/null 2>&1 && break; sleep 0.05; done
	# The one seat, held for the whole flood.
	in_cli "$B/lab_load" --connect 198.18.0.1 --port 8099 --count 1 --rate 1 --duration 1 --timeout 70 --quiet &
	hold=$!
	PIDS+=("$hold")
	sleep 0.5
	flood "$arm"
	"$B/sluicectl" status --pin-dir "$PIN" --json |
		jq -c '.interfaces[0].refusals | {path, reason, rst_xdp_tx, rst_handoff, tx_dropped}' >"$TMP/status-$arm"
	# The service holds its one worker for 60 s: it does not wait for it.
	pkill -P "$hold" 2>/dev/null; kill "$hold" "$daemon" 2>/dev/null; kill -9 "$svc" 2>/dev/null || true
	wait "$hold" "$daemon" "$svc" 2>/dev/null || true
}

echo "bench_refusal: closed port, nothing in front" >&2
flood closed
echo "bench_refusal: native XDP_TX (peer with a program)" >&2
sluice_arm xdp_tx xdp native --veth-peer-xdp
echo "bench_refusal: native, bare peer: tc hand-off" >&2
sluice_arm handoff bare native
echo "bench_refusal: generic XDP_TX, bare peer" >&2
sluice_arm generic bare generic

printf '%-9s %9s %9s %9s %14s %11s  %s\n' arm SYNs RSTs arrived "BPF ns/RST" "vs xdp_tx" "sluice's path"
base=$(awk '$1 == "xdp_tx" { print $4 / ($3 ? $3 : 1) }' "$TMP/arms")
while read -r arm sent got ns; do
	# The closed port runs none of sluice's programs: no figure, not 0.
	printf '%-9s %9d %9d %8.1f%% %14s %11s  %s\n' "$arm" "$sent" "$got" \
		"$(awk -v g="$got" -v s="$sent" 'BEGIN { print s ? 100 * g / s : 0 }')" \
		"$(awk -v a="$arm" -v n="$ns" -v g="$got" 'BEGIN { print (a == "closed" || !g) ? "-" : sprintf("%.0f", n / g) }')" \
		"$(awk -v a="$arm" -v n="$ns" -v g="$got" -v b="$base" 'BEGIN { print (a == "closed" || !g || !b) ? "-" : sprintf("%.2fx", n / g / b) }')" \
		"$(cat "$TMP/status-$arm" 2>/dev/null || echo -)"
done <"$TMP/arms"
