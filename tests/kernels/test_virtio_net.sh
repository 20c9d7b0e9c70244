#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# sluice on a real driver: virtio_net, the NIC of most cloud VMs.  Runs in a
# guest of the kernel matrix booted with NICS=2 (tests/kernels/vm.sh): eth0
# (the server, 198.18.0.1) and eth1 (moved into the client's namespace) are
# two virtio-net NICs on one QEMU hub; the client end is bare (no XDP).
#
# virtio_net drops XDP_TX frames when its transmit ring is full and says so
# only in its own ethtool counter (tx_xdp_tx_drops): no tracepoint fires.
# With eth0's ring shrunk to 32 and a SYN flood at a Reject level:
#   - every RST is delivered or counted as lost, and the count equals the
#     driver's drops;
#   - once a drop was seen, refusals go by the tc hand-off: the next flood
#     loses none, and real clients in it are refused before their SYN
#     retransmit (1 s).
# Where the kernel cannot say the device's xdp-features (before 6.3), the
# refusals go by hand-off from the start: then nothing may be lost at all.
# In generic mode, held SYNs re-injected into the stack are no retransmit:
# the level counts none the wire did not carry.
#
#   tests/kernels/test_virtio_net.sh     (root, in the guest; TAP)
set -uo pipefail

# shellcheck source=../e2e/lib.sh
. "$(dirname "$0")/../e2e/lib.sh"
CFG=$E2E_ROOT/tests/kernels/virtio_net.yaml
SRV=eth0
CLI=eth1
DAEMON_IFACES=(--iface "$SRV")

# Not e2e_init: the NICs live in this (the guest's) network namespace.
virtio_init() {
	local i
	for i in $SRV $CLI; do
		if [ "$(ethtool -i "$i" 2>/dev/null | awk '$1 == "driver:" { print $2 }')" != virtio_net ]; then
			not_ok "$i is a virtio_net NIC (run in a guest of tests/kernels/vm.sh with NICS=2)"
			e2e_finish
		fi
	done
	mkdir -p /run/netns
	trap virtio_cleanup EXIT
	E2E_TMP=$(mktemp -d /tmp/sluice-virtio.XXXXXX)
	# No IPv6 (its neighbour discovery) and fixed neighbours: every frame
	# that reaches the client is the server's answer to a SYN.
	sysctl -qw net.ipv6.conf.$SRV.disable_ipv6=1
	ip netns add "$CLI_NS"
	ip link set "$CLI" netns "$CLI_NS"
	in_cli sysctl -qw net.ipv6.conf.$CLI.disable_ipv6=1 net.ipv4.ip_local_port_range="1024 65535" \
		net.ipv4.tcp_tw_reuse=1
	ip addr add "$SRV4/24" dev $SRV
	ip link set $SRV up
	in_cli ip link set lo up
	in_cli ip addr add 198.18.0.2/24 dev $CLI
	for i in $(seq 16 47); do in_cli ip addr add "198.18.0.$i/24" dev $CLI; done
	in_cli ip link set $CLI up
	for i in 2 $(seq 16 47); do ip neigh replace "198.18.0.$i" lladdr 52:54:00:00:00:02 dev $SRV; done
	in_cli ip neigh replace "$SRV4" lladdr 52:54:00:00:00:01 dev $CLI
}

virtio_cleanup() {
	local p
	for p in "${E2E_PIDS[@]}"; do kill "$p" 2>/dev/null; done
	sleep 0.2
	for p in "${E2E_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	in_cli ip link set $CLI netns 1 2>/dev/null
	ip netns del "$CLI_NS" 2>/dev/null
	[ -n "${E2E_TMP:-}" ] && rm -rf "$E2E_TMP"
}

driver_drops() { ethtool -S $SRV | awk '$1 ~ /^tx(_queue_0)?_xdp_tx_drops:$/ { print $2; exit }'; }
client_rx() { in_cli ip -s -j link show $CLI | jq '.[0].stats64.rx.packets'; }
refusals() { status_json | jq -c --arg i $SRV '.interfaces[] | select(.name == $i) | .refusals'; }
rsts_sent() { refusals | jq '.rst_xdp_tx + .rst_handoff'; }
lost() { status_json | jq '.stats.rst_failed_by_cause.xdp_tx_dropped'; }

# flood TAG COUNT RATE: two raw SYN floods of COUNT each at the Reject
# level, from 8 sources, then what reached the client against what sluice
# sent and counted lost.  Sets SENT, DELIVERED, LOST, DROPS (the driver's).
flood() {
	local tag=$1 count=$2 rate=$3 s0 rx0 l0 d0 adm0 adm base=$((16 + RANDOM % 3 * 8)) p1 p2
	s0=$(rsts_sent); rx0=$(client_rx); l0=$(lost); d0=$(driver_drops); adm0=$(level_field rej admitted)
	in_cli "$LAB_SYN" --src 198.18.0.$base --sources 4 --dst "$SRV4" --dport 9090 --count "$count" \
		--rate "$rate" --duration 10 >"$E2E_TMP/syn1.out" 2>&1 &
	p1=$!
	in_cli "$LAB_SYN" --src 198.18.0.$((base + 4)) --sources 4 --dst "$SRV4" --dport 9090 --count "$count" \
		--rate "$rate" --duration 10 >"$E2E_TMP/syn2.out" 2>&1 &
	p2=$!
	[ -n "${FLOOD_BESIDE:-}" ] && "$FLOOD_BESIDE"
	wait $p1 $p2
	sleep 3 # the last frames out, and the daemon's reading of the counters (each second)
	SENT=$(($(rsts_sent) - s0))
	# Whatever else reached the client: the SYN-ACKs of the admitted.
	adm=$(($(level_field rej admitted) - adm0))
	DELIVERED=$(($(client_rx) - rx0 - adm))
	LOST=$(($(lost) - l0))
	DROPS=$(($(driver_drops) - d0))
	diag "$tag: SYNs $(cat "$E2E_TMP/syn1.out") + $(cat "$E2E_TMP/syn2.out"); RSTs sent $SENT, delivered $DELIVERED," \
		"lost $LOST (the driver's drops $DROPS); $(refusals)"
}

# Real clients during a flood: each refused before its SYN retransmit.
REAL=
real_clients() {
	REAL=$(load --connect "$SRV4" --port 9090 --rate 20 --count 40 --duration 4 --timeout 3)
}

virtio_init
start_service 9090 1 100 || not_ok "lab_service on 9090"
start_service 8080 8 100 || not_ok "lab_service on 8080"

# ---- native: XDP_TX where the device proves it, counted where it drops
ring=$(ethtool -G $SRV tx 32 2>&1 && ethtool -g $SRV | awk '/^Current/ { c = 1 } c && $1 == "TX:" { print $2; exit }')
check "eth0's transmit ring shrunk to 32 (ethtool -G eth0 tx 32): $ring" test "$ring" = 32
d_start=$(driver_drops)
check "the driver counts its XDP_TX drops (tx_xdp_tx_drops)" test -n "$d_start"
start_daemon "$CFG" --xdp-mode native --metrics-address 127.0.0.1:9466 || { not_ok "sluiced starts in native mode"; e2e_finish; }
sleep 2 # its first readings of the device
path=$(refusals | jq -r '.path + " " + .reason')
diag "native, before any drop: $path"
if [ "$path" = "xdp_tx ndo_xmit" ]; then
	# The flood fills the ring; a burst that happens not to (timing) is
	# followed by a larger one.
	for try in 1 2 3; do
		flood "native flood $try" $((2000 * try)) $((5000 * try))
		[ "$DROPS" -gt 0 ] && break
	done
	check_num "the flood filled the ring: the driver dropped XDP_TX frames" "$DROPS" -gt 0
	check_num "sluice counted as lost exactly what the driver dropped" "$LOST" -eq "$DROPS"
	check_num "every RST was delivered or counted as lost" $((DELIVERED + LOST)) -ge "$SENT"
	check "the drop moved the refusals to the tc hand-off" \
		jq -e '.path == "handoff" and .reason == "drops"' <<<"$(refusals)"
	check "... and it was said, with the count" grep -q 'event=refusals_dropped iface=eth0 lost=[1-9]' \
		"$E2E_TMP/sluiced.log"
	check "the loss is a metric" bash -c "curl -sf --max-time 5 http://127.0.0.1:9466/metrics |
		grep -qE '^sluice_interface_refusals_lost_total\{interface=\"eth0\"\} $LOST\$'"
elif [ "$path" = "handoff unknown" ]; then
	ok "this kernel does not say the device's xdp-features (before 6.3): refusals by hand-off from the start"
else
	not_ok "native refusals on virtio_net go by XDP_TX (ndo_xmit) or, unknown, by hand-off: $path"
fi
# From here on no refusal may be lost, and no real client waits for a
# retransmit, even with the flood beside them.
FLOOD_BESIDE=real_clients flood "after" 4000 10000
check_num "after: the driver dropped nothing more" "$DROPS" -eq 0
check_num "after: nothing counted lost" "$LOST" -eq 0
check_num "after: every RST was delivered" "$DELIVERED" -ge "$SENT"
# (one that finds the level's seat free is served: the service is fast)
check "after: real clients in the flood were refused or served, none timed out: $(jq -c '{refused, ok, timeout, error}' <<<"$REAL")" \
	jq -e '.refused >= 1 and .refused + .ok == 40 and .timeout == 0' <<<"$REAL"
check_num "after: ... each before its SYN retransmit (max ms)" "$(jq '.refused_ms.max' <<<"$REAL")" -lt 900
stop_daemon || not_ok "sluiced stops"

# ---- generic: held SYNs re-injected are no retransmit
ethtool -G $SRV tx 256 >/dev/null 2>&1
start_daemon "$CFG" --xdp-mode generic || { not_ok "sluiced starts in generic mode"; e2e_finish; }
in_cli tcpdump -i $CLI -nn -U -w "$E2E_TMP/syns.pcap" \
	'tcp dst port 8080 and tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn' 2>"$E2E_TMP/tcpdump.err" &
TD=$!
for _ in $(seq 50); do grep -q listening "$E2E_TMP/tcpdump.err" && break; sleep 0.1; done
sleep 0.3
r=$(load --connect "$SRV4" --port 8080 --rate 200 --count 40 --duration 1 --timeout 5)
sleep 1
kill -TERM $TD; wait $TD 2>/dev/null
wire=$(tcpdump -r "$E2E_TMP/syns.pcap" -nn 2>/dev/null | wc -l)
distinct=$(tcpdump -r "$E2E_TMP/syns.pcap" -nn 2>/dev/null | awk '{ print $3 }' | sort -u | wc -l)
retx=$(level_field web retransmits)
held=$(level_field web reinjected)
diag "generic: $(jq -c '{ok, refused, timeout}' <<<"$r"); SYNs on the wire $wire for 40; held and re-injected $held; retransmits counted $retx"
check "generic: the 40 clients served" jq -e '.ok == 40' <<<"$r"
check_num "generic: SYNs were held and re-injected" "$held" -gt 0
# (a connection the capture missed could have retransmitted unseen)
check_num "generic: no retransmit counted that the wire did not carry" "$retx" -le $((wire - distinct + 40 - distinct))
stop_daemon || not_ok "sluiced stops"
e2e_finish
