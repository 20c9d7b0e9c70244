#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# make bench, lab part: end-to-end figures on the veth lab (private
# namespaces, addresses from 198.18.0.0/15), each against a baseline
# measured in the same run.
#
#  A. Connect latency, unloaded: a fast service (64 workers, 1 ms), 200
#     connections/s for 10 s, without sluice and with sluiced attached (a
#     level far from its limit): the cost of XDP + sock_ops on the
#     connection path a client sees.
#  A2. Connection rate: a fast service offered 10,000 connections/s,
#     without and with sluice: the ceiling sluice puts on a
#     connection-rate-bound service.
#  B. Protection under a real overload against peers: elephants at 10x a
#     service's capacity (80/s) from four sources and mice from twenty, 60 s
#     (BENCH_SECS), with nothing, nftables `ct count over 8`, HAProxy
#     `maxconn 8` with a 5 s queue, sluice on configs/demo.yaml (native
#     XDP and generic, on the lab's bare client end), and sluice without
#     held SYNs (the ticket path alone, overbooking 1 and 8); BENCH_B_ARMS
#     picks some.
#     Goodput, mice served and their total-time percentiles, elephants
#     served; PNGs of the mice's CDF and completions per second (gnuplot).
#  F. A spoofed SYN flood into the legitimate clients' own level (8 seats,
#     Queue; 8 workers x 100 ms): clients at 20/s for FLOOD_SECS (20),
#     unflooded, then under SYNs from 256 spoofed sources at FLOOD_RATES
#     (4, 1000, 100000/s) whose network answers the SYN-ACKs with ICMP
#     host unreachable, and one that drops them silently (blackhole).
#     Clients' success and connect p50/p99 against the unflooded run,
#     seats held by half-open connections, events lost, daemon CPU and RSS.
# Every load is bounded in count and time.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/build

for t in nft haproxy jq; do
	command -v "$t" >/dev/null || { echo "bench_lab: $t is missing (make bench installs it)" >&2; exit 1; }
done
lab_cleanup_extra() { nft delete table inet sluice_bench 2>/dev/null; }
source "$ROOT/scripts/lab_private.sh"
lab_private bench "$@"

start_service() { # PORT WORKERS MS [LISTEN [BACKLOG]]
	rm -f "$TMP/ready"
	"$B/lab_service" --listen "${4:-::}" --port "$1" --workers "$2" --service-ms "$3" \
		--backlog "${5:-128}" --ready-file "$TMP/ready" --quiet >/dev/null &
	SERVICE=$!
	PIDS+=($SERVICE)
	for _ in $(seq 50); do [ -e "$TMP/ready" ] && break; sleep 0.1; done
}
stop_service() { kill -TERM "$SERVICE" 2>/dev/null; wait "$SERVICE" 2>/dev/null; }

start_sluiced() { # CONFIG [SLUICED OPTION...]
	local cfg=$1
	shift
	"$B/sluiced" --config "$cfg" --iface sl0 "$@" >"$TMP/sluiced.log" 2>&1 &
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
# The 8-seat Queue level of parts F and R (64 queues, hand 6, queue length
# 50, BySource, handshakeTimeout 10 s) in front of 8080; $1: more Server
# spec fields.
level8_yaml() {
	cat <<YAML
apiVersion: sluice/v1
kind: Server
metadata: {name: bench}
spec: {serverConcurrencyLimit: 8, handshakeTimeout: 10s, $1}
---
apiVersion: sluice/v1
kind: PriorityLevelConfiguration
metadata: {name: web}
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 100
    limitResponse: {type: Queue, queuing: {queues: 64, handSize: 6, queueLengthLimit: 50}}
---
apiVersion: sluice/v1
kind: FlowSchema
metadata: {name: web}
spec:
  priorityLevelConfiguration: {name: web}
  matchingPrecedence: 500
  distinguisherMethod: {type: BySource}
  rules:
  - subjects: [{kind: Network, network: {cidrs: [0.0.0.0/0]}}]
    destinations: [{ports: ["8080"]}]
YAML
}

# BENCH_PARTS: which parts to run (default all: A A2 B F R).  Part F: FLOOD_SECS,
# FLOOD_RATES, FLOOD_MODES (seatAt values, default "syn auto ack"), FLOOD_LATE
# (1: the flood starts 5 s into the clients' run).  Part R: OUTAGE_SECS.
part() { [[ " ${BENCH_PARTS:-A A2 B F R} " == *" $1 "* ]]; }

if part A; then
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

fi

if part A2; then
# ---- A2. connection rate a fast service accepts ---------------------------------
# The highest offered rate that is served whole (>= 99 % served, connect p99
# under 100 ms: no SYN waited for a retransmit), without and with sluice
# attached (a level far from its limit, so this is the per-connection cost,
# not admission control).  3 s per step.
cat >"$TMP/wide.yaml" <<'YAML'
apiVersion: sluice/v1
kind: Server
metadata: {name: bench}
spec: {serverConcurrencyLimit: 1000000, tableSizes: {connections: 262144}}
YAML
echo
echo "A2. connection rate a fast service (64 workers, 0 ms, backlog 4096) serves whole, 3 s per step"
A2_SRC=(--source 198.18.0.10 --source 198.18.0.11 --source 198.18.0.12 --source 198.18.0.13)
A2_RATES="2000 4000 6000 8000 10000 12000"
a2_sweep() { # TAG
	local best=0 r j
	for r in $A2_RATES; do
		j=$(load --connect 198.18.0.1 --port 8080 "${A2_SRC[@]}" --rate "$r" --count $((r * 3)) \
			--duration 3 --timeout 3)
		printf '  %-14s offered %6d/s: served %6.0f/s, connect p99 %8.3f ms\n' "$1" "$r" \
			"$(jq '.ok / 3' <<<"$j")" "$(jq .connect_ms.p99 <<<"$j")"
		if jq -e --argjson r "$r" '.ok >= 0.99 * $r * 3 and .connect_ms.p99 < 100' <<<"$j" >/dev/null; then
			best=$r
		fi
		sleep 1 # TIME_WAIT and the backlog settle between steps
	done
	echo "$best" >"$TMP/a2-$1"
}
start_service 8080 64 0 "::" 4096
a2_sweep without
start_sluiced "$TMP/wide.yaml"
a2_sweep with-sluice
stop_sluiced
stop_service
echo "highest rate served whole: without sluice $(cat "$TMP/a2-without")/s, with sluice" \
	"$(cat "$TMP/a2-with-sluice")/s (ratio $(awk -v a="$(cat "$TMP/a2-without")" -v b="$(cat "$TMP/a2-with-sluice")" \
	'BEGIN { printf "%.2f", a ? b / a : 0 }'))"

fi

if part B; then
# ---- B. protection under a real overload, against peers ---------------------------
# Elephants at 10x the service's capacity from four sources, mice from
# twenty, for BENCH_SECS (60) seconds; the service serves 80/s (8 workers x
# 100 ms).  Per protector: goodput (service completions per second over its
# capacity), mice served and their total time (connect + service)
# percentiles, elephants served.
SECS=${BENCH_SECS:-60}
CAPACITY=80
EL_RATE=$((CAPACITY * 10))
MICE_RATE=10
OUT=${BENCH_OUT:-$ROOT/build/bench}
mkdir -p "$OUT"
# Every client gives up after PATIENCE seconds: 10, then 3 (a common
# connect timeout) for the peers; BENCH_TIMEOUTS chooses.
PATIENCE=10
drive() { # TAG PORT
	local pids=() el_src=() mice_src=() i
	for i in 10 11 12 13; do el_src+=(--source 198.18.0.$i); done
	for i in $(seq 20 39); do mice_src+=(--source 198.18.0.$i); done
	ip netns exec sl-cli "$B/lab_load" --connect 198.18.0.1 --port "$2" "${el_src[@]}" \
		--rate $EL_RATE --count $((EL_RATE * SECS)) --duration "$SECS" --timeout "$PATIENCE" \
		--csv "$OUT/b-$1-elephants.csv" --json --quiet >"$TMP/b-$1-elephants.json" &
	pids+=($!)
	ip netns exec sl-cli "$B/lab_load" --connect 198.18.0.1 --port "$2" "${mice_src[@]}" \
		--rate $MICE_RATE --count $((MICE_RATE * SECS)) --duration "$SECS" --timeout "$PATIENCE" \
		--csv "$OUT/b-$1-mice.csv" --json --quiet >"$TMP/b-$1-mice.json" &
	pids+=($!)
	wait "${pids[@]}"
	# The service may still chew on connections of clients that gave up:
	# let it drain before the next arm.
	sleep 3
}

echo
echo "B. overload: elephants $EL_RATE/s (10x capacity, 4 sources) + mice $MICE_RATE/s (20 sources) for ${SECS}s;"
echo "   the service serves $CAPACITY/s (8 workers x 100 ms)"
ARMS=""
# BENCH_B_ARMS: which protectors part B runs (default all; sluice runs
# native XDP, sluice-generic generic, on the lab's bare client end).
b_arm() { [[ " ${BENCH_B_ARMS:-none nftables haproxy sluice sluice-generic tickets} " == *" $1 "* ]]; }
for PATIENCE in ${BENCH_TIMEOUTS:-10 3}; do
	echo "   clients give up after ${PATIENCE} s"
	if b_arm none; then
	ARMS+=" none-t$PATIENCE"
	start_service 8080 8 100
	drive "none-t$PATIENCE" 8080
	stop_service
	fi

	if b_arm nftables; then
	ARMS+=" nftables-t$PATIENCE"
	start_service 8080 8 100
	nft -f - <<'NFT'
	table inet sluice_bench {
		chain input {
			type filter hook input priority 0; policy accept;
			tcp dport 8080 ct state new ct count over 8 reject with tcp reset
		}
	}
NFT
	drive "nftables-t$PATIENCE" 8080
	nft delete table inet sluice_bench
	stop_service
	fi

	if b_arm haproxy; then
	ARMS+=" haproxy-t$PATIENCE"
	start_service 8081 8 100 127.0.0.1
	cat >"$TMP/haproxy.cfg" <<'CFG'
	global
		maxconn 8000
	defaults
		mode tcp
		timeout connect 5s
		timeout client 30s
		timeout server 30s
		timeout queue 5s
	frontend f
		bind 198.18.0.1:8080
		maxconn 8000
		default_backend b
	backend b
		server s 127.0.0.1:8081 maxconn 8
CFG
	haproxy -f "$TMP/haproxy.cfg" -db >"$TMP/haproxy.log" 2>&1 &
	HAP=$!
	PIDS+=($HAP)
	sleep 0.5
	kill -0 "$HAP" 2>/dev/null || { echo "bench_lab: haproxy did not start:" >&2; cat "$TMP/haproxy.log" >&2; exit 1; }
	drive "haproxy-t$PATIENCE" 8080
	kill "$HAP" 2>/dev/null
	wait "$HAP" 2>/dev/null
	stop_service
	fi

	for mode in native generic; do
		arm=sluice
		[ $mode = generic ] && arm=sluice-generic
		b_arm $arm || continue
		ARMS+=" $arm-t$PATIENCE"
		start_service 8080 8 100
		start_sluiced "$ROOT/configs/demo.yaml" --xdp-mode $mode
		drive "$arm-t$PATIENCE" 8080
		stop_sluiced
		stop_service
	done
done
PATIENCE=10
# Without held SYNs (the ticket path alone), with the default overbooking
# and deeper: what held SYNs replaced (docs/ARCHITECTURE.md, "Deferral
# throughput").
derive() { # NAME LINES: configs/demo.yaml with LINES after serverConcurrencyLimit
	sed "s/^  serverConcurrencyLimit: \([0-9]*\)$/  serverConcurrencyLimit: \1\n$2/" \
		"$ROOT/configs/demo.yaml" >"$TMP/$1.yaml"
	grep -q "heldSyns" "$TMP/$1.yaml" || { echo "bench_lab: could not derive $1" >&2; exit 1; }
}
if b_arm tickets; then
derive tickets '  heldSyns: {maxBytes: 0}'
derive tickets-ob8 '  heldSyns: {maxBytes: 0}\n  ticketOverbooking: 8'
for arm in tickets tickets-ob8; do
	start_service 8080 8 100
	start_sluiced "$TMP/$arm.yaml"
	drive "sluice-$arm-t$PATIENCE" 8080
	stop_sluiced
	stop_service
done

ARMS+=" sluice-tickets-t10 sluice-tickets-ob8-t10"
fi
# Per arm: completions (service replies) per second over the run, mice
# percentiles of the total time of the served.
printf '%-24s %8s %11s %9s %9s %9s %13s %13s %9s\n' "protector, -t: timeout s" goodput "mice served" "p50 ms" "p90 ms" \
	"p99 ms" "el. offered" "el. served" "timed out"
for t in $ARMS; do
	done_n=$(awk -F, -v s="$SECS" 'FNR > 1 && $6 == "ok" { t = ($3 + $5) / 1000; if (t < s) n++ } END { print n + 0 }' \
		"$OUT/b-$t-elephants.csv" "$OUT/b-$t-mice.csv")
	read -r p50 p90 p99 <<<"$(awk -F, 'FNR > 1 && $6 == "ok" { print $5 }' "$OUT/b-$t-mice.csv" | sort -n |
		awk '{ v[NR] = $1 } END { if (!NR) { print "- - -"; exit }
			split("0.5 0.9 0.99", q, " "); for (k = 1; k <= 3; k++) { i = int(NR * q[k] + 0.999); if (i < 1) i = 1;
			if (i > NR) i = NR; printf "%.0f ", v[i] } print "" }')"
	jq -r --arg t "$t" --arg g "$(awk -v n="$done_n" -v s="$SECS" -v c=$CAPACITY 'BEGIN { printf "%.0f%%", 100 * n / s / c }')" \
		--arg p50 "$p50" --arg p90 "$p90" --arg p99 "$p99" --slurpfile m "$TMP/b-$t-mice.json" \
		'"\($t) \($g) \($m[0].ok)/\($m[0].started) \($p50) \($p90) \($p99) \(.started) \(.ok) \(.timeout + $m[0].timeout)"' \
		"$TMP/b-$t-elephants.json" |
		awk '{ printf "%-24s %8s %11s %9s %9s %9s %13s %13s %9s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9 }'
done
echo "(goodput: replies the service completed within the ${SECS} s over its capacity; mice: total time"
echo " (connect + reply) of those served, 100 ms unloaded; timed out: connections, elephants' and mice's, that"
echo " neither got a reply nor a refusal within the client's timeout; sluice-tickets: heldSyns 0, the ticket path only)"

# Pictures: the mice's total-time CDF per protector, and completions per
# second over time.
if command -v gnuplot >/dev/null; then
	for t in $ARMS; do
		awk -F, 'FNR > 1 && $6 == "ok" { print $5 / 1000 }' "$OUT/b-$t-mice.csv" | sort -n >"$OUT/cdf-$t.dat"
		n=$(awk -F, 'FNR > 1' "$OUT/b-$t-mice.csv" | wc -l)
		awk -v n="$n" '{ print $1, NR / n }' "$OUT/cdf-$t.dat" >"$OUT/cdf-$t.xy"
		awk -F, 'FNR > 1 && $6 == "ok" { b = int(($3 + $5) / 1000); c[b]++ } END { for (k in c) print k, c[k] }' \
			"$OUT/b-$t-elephants.csv" "$OUT/b-$t-mice.csv" | sort -n >"$OUT/rate-$t.xy"
	done
	DOCS=${BENCH_DOCS:-$ROOT/docs}
	plot_cdf="" plot_rate=""
	for t in $ARMS; do
		[[ $t == *-t10 ]] || continue # the pictures: clients of 10 s
		plot_cdf+="'$OUT/cdf-$t.xy' using 1:2 with steps lw 2 title '$t', "
		plot_rate+="'$OUT/rate-$t.xy' using 1:2 with lines lw 2 title '$t', "
	done
	gnuplot <<GP
set terminal pngcairo size 900,520 font ",11"
set output "$DOCS/bench-mice-cdf.png"
set title "Mice: total time (connect + 100 ms service), elephants at 10x capacity, clients of 10 s"
set xlabel "seconds"; set ylabel "fraction of mice served"; set logscale x; set xrange [0.09:20]
set yrange [0:1.02]; set key bottom right; set grid
plot ${plot_cdf%, }
set output "$DOCS/bench-completions.png"
set title "Service completions per second (capacity $CAPACITY/s)"
unset logscale x; set xrange [0:$((SECS + 10))]; set yrange [0:*]; set xlabel "seconds into the run"
set ylabel "completions / s"; set key top right
plot ${plot_rate%, }, $CAPACITY with lines dt 2 lc rgb "black" title "capacity"
GP
	echo "pictures: $DOCS/bench-mice-cdf.png, $DOCS/bench-completions.png"
else
	echo "(gnuplot missing: no pictures)"
fi
fi

if part F; then
# ---- F. a spoofed SYN flood into the clients' own level -------------------------------
FSECS=${FLOOD_SECS:-20}
FLOOD_RATES=${FLOOD_RATES:-4 1000 100000}
# Each flood three times: seats at the SYN only (seatAt: syn, as before the
# final-ACK seating existed), the default (auto) and always at the ACK (ack).
for mode in syn auto ack; do
	level8_yaml "halfOpen: {seatAt: $mode}" >"$TMP/flood-$mode.yaml"
done
# The spoofed sources sit behind the client namespace: 198.18.1.0/24 is
# unreachable there (ICMP host unreachable, as the Internet answers for
# addresses nobody has), 198.18.2.0/24 a blackhole (nothing comes back).
ip route add 198.18.1.0/24 via 198.18.0.2 dev sl0
ip route add 198.18.2.0/24 via 198.18.0.2 dev sl0
# ICMP rate limits off where a namespace has them.  One is global to the
# host (route.error_cost: an unreachable route answers each destination
# with a burst of 5, then 1/s), so this one router answers only some
# SYN-ACKs; on the Internet the answers come from many routers.
ip netns exec sl-cli sysctl -qw net.ipv4.ip_forward=1 net.ipv4.icmp_ratelimit=0 net.ipv4.icmp_ratemask=0
ip netns exec sl-cli ip route add unreachable 198.18.1.0/24
ip netns exec sl-cli ip route add blackhole 198.18.2.0/24
echo
echo "F. spoofed SYN flood into the clients' level (8 seats; clients 20/s for ${FSECS} s; 256 spoofed sources)"
printf '%-30s %8s %9s %9s %9s %9s %9s %9s %7s %7s\n' run "ok" "total p50" "total p99" "conn p99" \
	"half-open" "icmp rel." "ev. lost" "CPU" "RSS"
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$DAEMON/stat"; }
f_run() { # MODE TAG [SPOOF_NET RATE]
	local mode=$1 tag=$1-$2 net=${3:-} rate=${4:-0} t0 c0 e0 i0 ho=0 h j
	start_service 8080 8 100
	start_sluiced "$TMP/flood-$mode.yaml"
	c0=$(cpu_ticks); t0=$(date +%s.%N)
	e0=$("$B/sluicectl" status --json | jq .stats.events_lost)
	i0=$("$B/sluicectl" status --json | jq .stats.icmp_released)
	# The flood starts 1 s before the clients, or (FLOOD_LATE=1, tag
	# "-late") 5 s into their run: what the seconds before a level moves
	# to the ACK cost the clients that are connecting then.
	flood() {
		ip netns exec sl-cli "$B/lab_syn" --src "$net.1" --sources 254 --dst 198.18.0.1 --dport 8080 \
			--rate "$rate" --count $((rate * (FSECS + 2))) --duration $((FSECS + 2)) >/dev/null &
		PIDS+=($!)
	}
	if [ -n "$net" ] && [ "${FLOOD_LATE:-0}" != 1 ]; then
		flood
		sleep 1
	fi
	load --connect 198.18.0.1 --port 8080 --source 198.18.0.10 --source 198.18.0.11 \
		--source 198.18.0.12 --source 198.18.0.13 --rate 20 --count $((20 * FSECS)) \
		--duration "$FSECS" --timeout 10 >"$TMP/f-$tag.json" &
	local lp=$!
	if [ -n "$net" ] && [ "${FLOOD_LATE:-0}" = 1 ]; then
		sleep 5
		flood
	fi
	for _ in $(seq "$FSECS"); do # the most half-open seats held at once
		h=$("$B/sluicectl" conns --json --limit 0 | jq '[.conns[] | select(.state != "established" and (.client | startswith("198.18.0.") | not))] | length')
		[ "$h" -gt "$ho" ] && ho=$h
		sleep 1
	done
	wait "$lp"
	[ -n "$net" ] && wait "${PIDS[-1]}" 2>/dev/null
	local secs cpu rss el ir
	secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
	cpu=$(awk -v a="$c0" -v b="$(cpu_ticks)" -v s="$secs" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { printf "%.1f%%", 100 * (b - a) / hz / s }')
	rss=$(awk '/^VmRSS/ { printf "%.1fMB", $2 / 1024 }' "/proc/$DAEMON/status")
	el=$(( $("$B/sluicectl" status --json | jq .stats.events_lost) - e0 ))
	ir=$(( $("$B/sluicectl" status --json | jq .stats.icmp_released) - i0 ))
	stop_sluiced
	stop_service
	jq -r --arg t "$tag" --arg ho "$ho" --arg ir "$ir" --arg el "$el" --arg cpu "$cpu" --arg rss "$rss" \
		'"\($t) \(.ok)/\(.started) \(.total_ms.p50) \(.total_ms.p99) \(.connect_ms.p99) \($ho) \($ir) \($el) \($cpu) \($rss)"' \
		"$TMP/f-$tag.json" |
		awk '{ printf "%-30s %8s %7.1fms %7.1fms %7.1fms %9s %9s %9s %7s %7s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 }'
}
f_run auto unflooded
for r in $FLOOD_RATES; do
	for mode in ${FLOOD_MODES:-syn auto ack}; do
		late=$([ "${FLOOD_LATE:-0}" = 1 ] && echo -late)
		f_run "$mode" "unreachable-${r}per-s$late" 198.18.1 "$r"
		f_run "$mode" "blackhole-${r}per-s$late" 198.18.2 "$r"
	done
done
echo "(ok: clients served of those started; total: connect, request and answer (a client seated at"
echo " its ACK waits after connect); half-open: the most spoofed connections holding seats before"
echo " their handshake completed, sampled each second; icmp rel.: seats returned by ICMP errors)"
fi

if part R; then
# ---- R. a crash under load: the three fail modes --------------------------------
# The 8-seat level of part F, clients at 3x the service's capacity (240/s,
# 10 s timeout) and a trickle of blackholed spoofed SYNs (4/s); the daemon
# is killed (-9) 5 s in, stays dead OUTAGE_SECS (the failsafe decides
# after heartbeatTimeout, 3 s), then starts again.  Once per failMode
# (R_MODES, default "open closed static").  Sampled every 0.2 s: seats in
# use, half-open entries; reported: the most seats (x the limit) and how
# many of them half-open, the clients that started during the outage and
# how many of them were served, and how long after the restart until
# seats are back within the limit.
OUTAGE=${OUTAGE_SECS:-6}
ip route replace 198.18.2.0/24 via 198.18.0.2 dev sl0
ip netns exec sl-cli sysctl -qw net.ipv4.ip_forward=1
ip netns exec sl-cli ip route replace blackhole 198.18.2.0/24
echo
echo "R. kill -9 under load (8 seats; clients 240/s = 3x capacity; 4 spoofed SYN/s; ${OUTAGE} s outage)"
sample() { # -> "seats half_open"
	local st h
	st=$("$B/sluicectl" status --json 2>/dev/null | jq '[.levels[] | select(.name == "web") | .seats_in_use] | add // 0')
	h=$("$B/sluicectl" conns --json --limit 0 2>/dev/null | jq '[.conns[] | select(.state != "established")] | length')
	echo "${st:-0} ${h:-0}"
}
for mode in ${R_MODES:-open closed static}; do
	level8_yaml "heartbeatTimeout: 3s, failMode: $mode" >"$TMP/crash.yaml"
	start_service 8080 8 100
	start_sluiced "$TMP/crash.yaml"
	ip netns exec sl-cli "$B/lab_syn" --src 198.18.2.1 --sources 254 --dst 198.18.0.1 --dport 8080 \
		--rate 4 --count $((4 * (OUTAGE + 20))) --duration $((OUTAGE + 20)) >/dev/null &
	syn=$!
	PIDS+=($syn)
	t0=$(date +%s.%N)
	load --connect 198.18.0.1 --port 8080 --source 198.18.0.10 --source 198.18.0.11 \
		--source 198.18.0.12 --source 198.18.0.13 --rate 240 --count $((240 * (OUTAGE + 15))) \
		--duration $((OUTAGE + 15)) --timeout 10 --csv "$TMP/r-$mode.csv" >"$TMP/r.json" &
	lp=$!
	: >"$TMP/r-samples"
	killed=0 restarted=0
	while kill -0 "$lp" 2>/dev/null; do
		el=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
		if [ "$killed" = 0 ] && awk -v e="$el" 'BEGIN { exit !(e >= 5) }'; then
			kill -9 "$DAEMON"; wait "$DAEMON" 2>/dev/null; killed=$el
		fi
		if [ "$killed" != 0 ] && [ "$restarted" = 0 ] && awk -v e="$el" -v k="$killed" -v o="$OUTAGE" 'BEGIN { exit !(e >= k + o) }'; then
			start_sluiced "$TMP/crash.yaml"; restarted=$el
		fi
		echo "$el $(sample)" >>"$TMP/r-samples"
		sleep 0.2
	done
	wait "$lp"
	kill "$syn" 2>/dev/null; wait "$syn" 2>/dev/null
	stop_sluiced
	stop_service
	out=$(awk -v k="$killed" -v r="$restarted" '
		{ t = $1; s = $2; h = $3
		  if (s > max) { max = s; hmax = h }
		  if (t >= r && s > 8) back = t - r + 0.2 }
		END { printf "most seats %d (%.1fx the limit, %d half-open); within the limit %.1f s after the restart", max, max / 8, hmax, back }' "$TMP/r-samples")
	during=$(awk -F, -v k="$killed" -v r="$restarted" 'NR > 1 && $3 / 1000 >= k && $3 / 1000 < r {
		n++; if ($6 == "ok") ok++ } END { printf "%d of %d clients that started in the outage served", ok, n }' "$TMP/r-$mode.csv")
	printf "  failMode %-6s  %s; %s; all: %s\n" "$mode" "$out" "$during" \
		"$(jq -r '"\(.ok) of \(.started) served, p99 \(.total_ms.p99) ms"' "$TMP/r.json")"
done
fi

