#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Lab topology for sluice tests, demo and benchmarks.
#
#   topo.sh up [--peer bare|xdp|gro]   build it     topo.sh down   tear it down
#
# The server side is the *current* network namespace (tests and the demo run
# under `unshare -m -n`, so it is private); clients live in netns $SL_CLI_NS:
#
#   [this netns] sl0 198.18.0.1/24  fd53:6c75:6963::1/64
#        |  veth
#   [$SL_CLI_NS] sl1 198.18.0.2/24 (+ 198.18.0.10-.41 as extra client sources)
#                    fd53:6c75:6963::2/64 (+ ::10-::41)
#
# The client's end (--peer, or $SL_LAB_PEER): "bare" (the default: no
# program, GRO off, what a container's or another host's veth looks like,
# where native XDP_TX is dropped), "xdp" (a pass program on sl1: its NAPI
# delivers XDP_TX) or "gro" (GRO on: NAPI without a program, which leaves
# XDP_TX frames unpolled in its ring).  sluice must
# refuse and re-inject on all three (issue 38).  Addresses come only from
# 198.18.0.0/15 and a ULA.
set -euo pipefail

SL_CLI_NS=${SL_CLI_NS:-sl-cli}
SRV_IF=sl0
CLI_IF=sl1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PASS_OBJ=${PASS_OBJ:-$ROOT/${BUILD:-build}/tests/xdp_pass.bpf.o}

up() {
	local peer=${SL_LAB_PEER:-bare}
	if [ "${1:-}" = "--peer" ]; then
		peer=${2:-}
	fi
	case "$peer" in
	bare | xdp | gro) ;;
	*) echo "topo.sh: --peer bare, xdp or gro, not '$peer'" >&2; exit 2 ;;
	esac
	down 2>/dev/null || true
	mkdir -p /run/netns
	ip netns add "$SL_CLI_NS"
	ip link add "$SRV_IF" type veth peer name "$CLI_IF" netns "$SL_CLI_NS"
	ip link set lo up
	ip addr add 198.18.0.1/24 dev "$SRV_IF"
	ip -6 addr add fd53:6c75:6963::1/64 dev "$SRV_IF" nodad
	ip link set "$SRV_IF" up
	ip -n "$SL_CLI_NS" link set lo up
	ip -n "$SL_CLI_NS" addr add 198.18.0.2/24 dev "$CLI_IF"
	ip -n "$SL_CLI_NS" -6 addr add fd53:6c75:6963::2/64 dev "$CLI_IF" nodad
	for i in $(seq 10 41); do
		ip -n "$SL_CLI_NS" addr add "198.18.0.$i/24" dev "$CLI_IF"
		ip -n "$SL_CLI_NS" -6 addr add "fd53:6c75:6963::$i/64" dev "$CLI_IF" nodad
	done
	ip -n "$SL_CLI_NS" link set "$CLI_IF" up
	# The clients' side is a load generator: a connection a transaction
	# (pgbench -C, ab, wrk) leaves a TIME_WAIT per port for 60 s.  With
	# the default 28,232 ports, connect() takes the even ones first and,
	# once 14,116 wait, walks them all under a lock before each connect
	# (__inet_hash_connect): two 30 s storms of 300/s in a row halved the
	# second one's rate, whichever was measured second (sluice, against
	# nothing before it).  Every port, and TIME_WAIT reuse (older than
	# 1 s, timestamps on), as load generators are set up.
	ip netns exec "$SL_CLI_NS" sysctl -qw net.ipv4.ip_local_port_range="1024 65535" net.ipv4.tcp_tw_reuse=1
	case "$peer" in
	xdp) ip -n "$SL_CLI_NS" link set dev "$CLI_IF" xdpdrv obj "$PASS_OBJ" sec xdp ;;
	gro) ip netns exec "$SL_CLI_NS" ethtool -K "$CLI_IF" gro on >/dev/null ;;
	bare) ip netns exec "$SL_CLI_NS" ethtool -K "$CLI_IF" gro off >/dev/null 2>&1 || true ;;
	esac
	# Static neighbours: no ARP/ND races in the first connection of a test.
	local srv_mac cli_mac
	# (not /sys/class/net: sysfs still shows the namespace it was mounted in)
	srv_mac=$(ip -o link show "$SRV_IF" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
	cli_mac=$(ip -n "$SL_CLI_NS" -o link show "$CLI_IF" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
	ip neigh replace 198.18.0.2 lladdr "$cli_mac" dev "$SRV_IF"
	ip -n "$SL_CLI_NS" neigh replace 198.18.0.1 lladdr "$srv_mac" dev "$CLI_IF"
	ip -n "$SL_CLI_NS" -6 neigh replace fd53:6c75:6963::1 lladdr "$srv_mac" dev "$CLI_IF"
	for i in $(seq 10 41); do
		ip neigh replace "198.18.0.$i" lladdr "$cli_mac" dev "$SRV_IF"
		ip -6 neigh replace "fd53:6c75:6963::$i" lladdr "$cli_mac" dev "$SRV_IF"
	done
	ip -6 neigh replace fd53:6c75:6963::2 lladdr "$cli_mac" dev "$SRV_IF"
}

down() {
	ip link del "$SRV_IF" 2>/dev/null || true
	ip netns del "$SL_CLI_NS" 2>/dev/null || true
}

case "${1:-}" in
up) shift; up "$@" ;;
down) down ;;
*) echo "usage: $0 up [--peer bare|xdp|gro] | down" >&2; exit 2 ;;
esac
