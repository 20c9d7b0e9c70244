#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# make bench, surge part (issue 16): a CPU-bound service (tests/lab/lab_ps:
# 8 cores shared among its requests, 50 ms of work each, 160 requests/s)
# gets 25 s at half its capacity, 30 s at 3x, then 30 s at half again,
# behind: nothing; an AverageLatencySchedulingPolicy in Aperture's mode
# (AIMD, its defaults); the same policy in sluice's mode (the default); and
# HAProxy with a fixed maxconn of 10 (what sluice's limit settles at: 1.25 x
# 8 cores), a 15 s queue and 9,000 connections at most (the machine's
# 20,000 descriptors), for reference.  Completions per second and the
# median time in service, second by second: a table and a PNG (gnuplot).
# Every client gives up after SURGE_TIMEOUT seconds (10; make bench runs 10
# and 3, a common connect timeout).  Reports, asserts nothing; every load
# is bounded in count and time.
#
#   scripts/bench_surge.sh [OUT_DIR]      (root; default build/bench-surge)
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/build
OUT=${1:-$ROOT/build/bench-surge}
ARMS=${SURGE_ARMS:-none aperture sluice haproxy}
RUN=${SURGE_RUN:-$ARMS} # the arms to run now (the others' results in OUT are reused)
PATIENCE=${SURGE_TIMEOUT:-10} # seconds: every client's connect and reply time-out
source "$ROOT/scripts/lab_private.sh"
lab_private bench_surge "$@"
mkdir -p "$OUT"
CLI=(ip netns exec sl-cli)

# A policy config in one mode: the e2e surge configuration.
policy_config() {
	if [ "$1" = aperture ]; then
		sed 's/^  load_scheduling_core:/  mode: aperture\n  load_scheduling_core:/' \
			"$ROOT/tests/e2e/configs/surge.yaml" | grep -v metricsAddress >"$TMP/$1.yaml"
	else
		grep -v metricsAddress "$ROOT/tests/e2e/configs/surge.yaml" >"$TMP/$1.yaml"
	fi
}

# run ARM PORT: the service, the protector, the three phases.
run() {
	local arm=$1 port=$2 ps daemon=
	rm -f "$TMP/ps.ready"
	"$B/lab_ps" --listen :: --port 8080 --cores 8 --work-ms 50 --max-conns 30000 --duration 200 \
		--stats "$OUT/$arm.stats" --ready-file "$TMP/ps.ready" &
	ps=$!
	PIDS+=($ps)
	for _ in $(seq 50); do [ -e "$TMP/ps.ready" ] && break; sleep 0.1; done
	case $arm in
	aperture|sluice)
		policy_config "$arm"
		"$B/sluiced" --config "$TMP/$arm.yaml" --iface sl0 --pin-dir /sys/fs/bpf/sluice \
			--control-socket "$TMP/ctl.sock" >"$OUT/$arm.sluiced.log" 2>&1 &
		daemon=$!
		PIDS+=($daemon)
		sleep 2
		;;
	haproxy)
		cat >"$TMP/haproxy.cfg" <<'CFG'
global
	maxconn 9000
defaults
	mode tcp
	timeout connect 5s
	timeout client 30s
	timeout server 30s
	timeout queue 15s
frontend f
	bind 198.18.0.1:8081
	maxconn 9000
	default_backend b
backend b
	server s 127.0.0.1:8080 maxconn 10
CFG
		haproxy -f "$TMP/haproxy.cfg" -db >"$OUT/haproxy.log" 2>&1 &
		daemon=$!
		PIDS+=($daemon)
		sleep 0.5
		kill -0 "$daemon" 2>/dev/null || { echo "bench_surge: haproxy did not start:" >&2; cat "$OUT/haproxy.log" >&2; exit 1; }
		;;
	esac
	local loads=()
	"${CLI[@]}" "$B/lab_load" --connect 198.18.0.1 --port "$port" --rate 80 --count 2000 --duration 25 \
		--timeout "$PATIENCE" --json --quiet >"$OUT/$arm.p1.json" &
	loads+=($!)
	sleep 25
	"${CLI[@]}" "$B/lab_load" --connect 198.18.0.1 --port "$port" --rate 480 --count 14400 --duration 30 \
		--timeout "$PATIENCE" --json --quiet >"$OUT/$arm.p2.json" &
	loads+=($!)
	sleep 30
	"${CLI[@]}" "$B/lab_load" --connect 198.18.0.1 --port "$port" --rate 80 --count 2400 --duration 30 \
		--timeout "$PATIENCE" --json --quiet >"$OUT/$arm.p3.json" &
	loads+=($!)
	wait "${loads[@]}" # each ends by its --duration + --timeout
	[ -n "$daemon" ] && { kill "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null; }
	kill "$ps" 2>/dev/null
	wait "$ps" 2>/dev/null
	sleep 1
}

for arm in $RUN; do
	echo "bench_surge: $arm (about 110 s)" >&2
	run "$arm" "$([ "$arm" = haproxy ] && echo 8081 || echo 8080)"
done

# The table: seconds from the surge's start (25 s in).
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }
window() { # FILE FROM TO: mean completions/s, median of the seconds' medians
	local r m
	r=$(awk -v a=$((25 + $2)) -v b=$((25 + $3)) '$1 >= a && $1 < b { n++; c += $2 } END { printf "%.0f", n ? c / n : 0 }' "$1")
	m=$(awk -v a=$((25 + $2)) -v b=$((25 + $3)) '$1 >= a && $1 < b && $2 > 0 { print $3 }' "$1" | median)
	printf '%s / %s' "$r" "$m"
}
printf '\nClients give up after %s s.\n' "$PATIENCE"
printf '\n| seconds after the surge starts | %s |\n|---|%s\n' "$(echo $ARMS | sed 's/ / | /g')" \
	"$(for _ in $ARMS; do printf -- '---:|'; done)"
for w in "0 5" "5 10" "10 20" "20 30" "30 40" "40 55"; do
	set -- $w
	printf '| %s-%s |' "$1" "$2"
	for arm in $ARMS; do printf ' %s |' "$(window "$OUT/$arm.stats" "$1" "$2")"; done
	echo
done
echo "(completions/s / median time in service, ms; capacity 160/s, unloaded 50 ms)"
for arm in $ARMS; do
	printf '%s clients: %s %s %s\n' "$arm" "$(jq -c '{ok, refused, timeout}' "$OUT/$arm.p1.json")" \
		"$(jq -c '{ok, refused, timeout}' "$OUT/$arm.p2.json")" "$(jq -c '{ok, refused, timeout}' "$OUT/$arm.p3.json")"
done

# The picture.
{
	echo 'set terminal pngcairo size 1100,800 font ",10"'
	echo "set output '$OUT/surge.png'"
	echo "set multiplot layout 2,1 title \"A 3x surge on a CPU-bound service (160/s, 50 ms): 25 s at half, 30 s at 3x, 30 s at half; clients give up after $PATIENCE s\""
	echo 'set xlabel "seconds"; set grid; set key outside right'
	echo 'set arrow from 25, graph 0 to 25, graph 1 nohead dt 2; set arrow from 55, graph 0 to 55, graph 1 nohead dt 2'
	echo 'set ylabel "completions / s"; set yrange [0:*]'
	printf 'plot '
	for arm in $ARMS; do printf "'%s' using 1:2 with lines lw 2 title '%s', " "$OUT/$arm.stats" "$arm"; done
	echo
	echo 'set ylabel "median time in service (ms)"; set logscale y; set yrange [10:*]'
	printf 'plot '
	for arm in $ARMS; do printf "'%s' using 1:(\$2 > 0 ? \$3 : 1/0) with lines lw 2 title '%s', " "$OUT/$arm.stats" "$arm"; done
	echo
	echo 'unset multiplot'
} | sed 's/, $//' >"$TMP/plot.gp"
gnuplot "$TMP/plot.gp" && echo "bench_surge: $OUT/surge.png"
