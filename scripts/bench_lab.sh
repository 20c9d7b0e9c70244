#!/usr/bin/env bash
# make bench, lab part: end-to-end figures on the veth lab (private
# namespaces, addresses from 198.18.0.0/15), each against a baseline
# measured in the same run.
#
#  A. Connect latency, unloaded: a fast service (64 workers, 1 ms), 200
#     connections/s for 10 s, without sluice and with sluiced attached (a
#     level far from its limit): the cost of XDP + sock_ops on the
#     connection path a client sees.
#  B. Protection under overload against peers: the demo's traffic (an
#     elephant at 240/s and five mice at 1/s each, 15 s) into a service
#     that serves 80/s (8 workers x 100 ms), with
#       - nothing;
#       - nftables `ct count over 8` (reset beyond 8 connections);
#       - HAProxy in front, `maxconn 8` with a 5 s queue;
#       - sluice on configs/default.yaml;
#       - the same with ticketOverbooking: 8.
#     Mice served and their latency; elephant served.
# Every load is bounded in count and time.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/build

if [ "$(id -u)" -ne 0 ]; then
	echo "bench_lab: needs root (XDP, sock_ops, network namespaces)" >&2
	exit 1
fi
if [ -z "${SLUICE_BENCH_PRIVATE:-}" ]; then
	export SLUICE_BENCH_PRIVATE=1
	exec unshare -m -n --propagation private bash "$0" "$@"
fi
for t in nft haproxy jq; do
	command -v "$t" >/dev/null || { echo "bench_lab: $t is missing (make bench installs it)" >&2; exit 1; }
done

TMP=$(mktemp -d /tmp/sluice-bench.XXXXXX)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	sleep 0.3
	nft delete table inet sluice_bench 2>/dev/null
	"$ROOT/tests/lab/topo.sh" down 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

mount -t bpf bpf /sys/fs/bpf
mkdir -p /run/netns && mount -t tmpfs tmpfs /run/netns
ip link set lo up
"$ROOT/tests/lab/topo.sh" up >/dev/null

start_service() { # PORT WORKERS MS [LISTEN]
	rm -f "$TMP/ready"
	"$B/lab_service" --listen "${4:-::}" --port "$1" --workers "$2" --service-ms "$3" \
		--backlog 128 --ready-file "$TMP/ready" --quiet >/dev/null &
	SERVICE=$!
	PIDS+=($SERVICE)
	for _ in $(seq 50); do [ -e "$TMP/ready" ] && break; sleep 0.1; done
}
stop_service() { kill -TERM "$SERVICE" 2>/dev/null; wait "$SERVICE" 2>/dev/null; }

start_sluiced() { # CONFIG
	"$B/sluiced" --config "$1" --iface sl0 >"$TMP/sluiced.log" 2>&1 &
	DAEMON=$!
	PIDS+=($DAEMON)
	for _ in $(seq 100); do
		"$B/sluicectl" status --json 2>/dev/null | jq -e .configured >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	echo "bench_lab: sluiced did not start:" >&2
	cat "$TMP/sluiced.log" >&2
	exit 1
}
stop_sluiced() { kill -TERM "$DAEMON" 2>/dev/null; wait "$DAEMON" 2>/dev/null; }

load() { ip netns exec sl-cli "$B/lab_load" --json --quiet "$@"; }

# ---- A. connect latency ------------------------------------------------------
cat >"$TMP/open.yaml" <<'YAML'
apiVersion: sluice/v1
kind: Server
metadata: {name: bench}
spec: {serverConcurrencyLimit: 10000}
YAML
echo "A. connect latency, unloaded (200 connections/s for 10 s, service 1 ms)"
start_service 8080 64 1
load --connect 198.18.0.1 --port 8080 --rate 200 --count 2000 --duration 10 --timeout 5 >"$TMP/a-base.json"
start_sluiced "$TMP/open.yaml"
load --connect 198.18.0.1 --port 8080 --rate 200 --count 2000 --duration 10 --timeout 5 >"$TMP/a-sluice.json"
admitted=$("$B/sluicectl" status --json | jq '[.levels[].admitted] | add')
stop_sluiced
stop_service
printf '%-14s %8s %10s %10s %10s %10s %10s\n' run ok "conn p50" "conn p90" "conn p99" "total p50" "total p99"
for r in base sluice; do
	jq -r --arg r "$([ $r = base ] && echo without || echo with\ sluice)" \
		'[$r, .ok, .connect_ms.p50, .connect_ms.p90, .connect_ms.p99, .total_ms.p50, .total_ms.p99] |
		 "\(.[0])\t\(.[1])\t\(.[2])\t\(.[3])\t\(.[4])\t\(.[5])\t\(.[6])"' "$TMP/a-$r.json" |
		awk -F'\t' '{ printf "%-14s %8d %9.3fms %9.3fms %9.3fms %9.3fms %9.3fms\n", $1, $2, $3, $4, $5, $6, $7 }'
done
jq -rn --slurpfile a "$TMP/a-base.json" --slurpfile b "$TMP/a-sluice.json" --argjson adm "${admitted:-0}" \
	'"ratio with/without: connect p50 \($b[0].connect_ms.p50 / $a[0].connect_ms.p50 * 100 | round / 100)x, p99 \($b[0].connect_ms.p99 / $a[0].connect_ms.p99 * 100 | round / 100)x; connections sluice admitted and tracked: \($adm)"'

# ---- B. protection under overload against peers ------------------------------
SECS=15
RATE=240
drive() { # TAG PORT
	local pids=()
	ip netns exec sl-cli "$B/lab_load" --connect 198.18.0.1 --port "$2" --source 198.18.0.10 \
		--rate $RATE --count $((RATE * SECS)) --duration $SECS --timeout 20 --json --quiet \
		>"$TMP/b-$1-elephant.json" &
	pids+=($!)
	ip netns exec sl-cli "$B/lab_load" --connect 198.18.0.1 --port "$2" --source 198.18.0.11 \
		--source 198.18.0.12 --source 198.18.0.13 --source 198.18.0.14 --source 198.18.0.15 \
		--rate 5 --count $((5 * SECS)) --duration $SECS --timeout 20 --json --quiet \
		>"$TMP/b-$1-mice.json" &
	pids+=($!)
	wait "${pids[@]}"
}

echo
echo "B. overload: elephant $RATE/s + five mice 1/s each for ${SECS}s; the service serves 80/s"
start_service 8080 8 100
drive none 8080
stop_service

start_service 8080 8 100
nft -f - <<'NFT'
table inet sluice_bench {
	chain input {
		type filter hook input priority 0; policy accept;
		tcp dport 8080 ct state new ct count over 8 reject with tcp reset
	}
}
NFT
drive nftables 8080
nft delete table inet sluice_bench
stop_service

start_service 8081 8 100 127.0.0.1
cat >"$TMP/haproxy.cfg" <<'CFG'
global
	maxconn 4096
defaults
	mode tcp
	timeout connect 5s
	timeout client 30s
	timeout server 30s
	timeout queue 5s
frontend f
	bind 198.18.0.1:8080
	default_backend b
backend b
	server s 127.0.0.1:8081 maxconn 8
CFG
haproxy -f "$TMP/haproxy.cfg" -db >"$TMP/haproxy.log" 2>&1 &
HAP=$!
PIDS+=($HAP)
sleep 0.5
kill -0 "$HAP" 2>/dev/null || { echo "bench_lab: haproxy did not start:" >&2; cat "$TMP/haproxy.log" >&2; exit 1; }
drive haproxy 8080
kill "$HAP" 2>/dev/null
wait "$HAP" 2>/dev/null
stop_service

start_service 8080 8 100
start_sluiced "$ROOT/configs/default.yaml"
drive sluice 8080
stop_sluiced
stop_service

# The same with deeper overbooking of unclaimed tickets (throughput against
# the mice's latency, docs/ARCHITECTURE.md "Deferral throughput").
sed 's/^  serverConcurrencyLimit: \([0-9]*\)$/  serverConcurrencyLimit: \1\n  ticketOverbooking: 8/' \
	"$ROOT/configs/default.yaml" >"$TMP/overbook.yaml"
grep -q "ticketOverbooking: 8" "$TMP/overbook.yaml" || { echo "bench_lab: could not derive the overbooking config" >&2; exit 1; }
start_service 8080 8 100
start_sluiced "$TMP/overbook.yaml"
drive sluice-ob8 8080
stop_sluiced
stop_service

printf '%-10s %-9s %8s %8s %9s %10s %8s %10s %10s\n' protector client offered served "reset" "timed out" "closed" "p50 ms" "p90 ms"
for t in none nftables haproxy sluice sluice-ob8; do
	for c in mice elephant; do
		jq -r --arg t $t --arg c $c '"\($t) \($c) \(.started) \(.ok) \(.refused) \(.timeout) \(.error) \(.total_ms.p50) \(.total_ms.p90)"' \
			"$TMP/b-$t-$c.json" |
			awk '{ printf "%-10s %-9s %8d %8d %9d %10d %8d %10.0f %10.0f\n", $1, $2, $3, $4, $5, $6, $7, $8, $9 }'
	done
done
echo "(sluice-ob8: ticketOverbooking 8; served: reply received; reset: RST to the SYN; closed: connection closed without a reply,"
echo " HAProxy's answer when its queue times out; p50/p90 over the served connections)"
