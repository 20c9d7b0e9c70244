#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# make demo: the main job on the default config, in a private lab.
#
# A capacity-limited service (8 workers x 100 ms: 80 connections/s) gets
# about 3x the load it can take from one heavy client (the elephant,
# 198.18.0.10) while five light clients (the mice, 198.18.0.11-15) connect
# once a second each: first without sluice, then with sluiced running
# configs/demo.yaml, while `sluicectl status` updates live.
# Everything runs in private network and mount namespaces and is torn down
# at the end.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/build
CONFIG=${CONFIG:-$ROOT/configs/demo.yaml}
RATE=${RATE:-240}          # elephant: connections per second offered
SECONDS_LOAD=${SECONDS_LOAD:-20}
BASELINE_SECONDS=${BASELINE_SECONDS:-10}
WORKERS=8
SERVICE_MS=100

source "$ROOT/scripts/lab_private.sh"
lab_private demo "$@"

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
# The demo's verdict: a failure is said on screen with what to do, and
# make demo exits non-zero.  Never a "with sluice" report from a run
# without it.
fail() {
	printf '\n\033[1;31mDEMO FAILED: %s\033[0m\n' "$1" >&2
	shift
	printf '%s\n' "$@" >&2
	exit 1
}
daemon_log() { sed 's/^/   sluiced: /' "$TMP/sluiced.log"; }
# What "protected" means here: the mice served (MICE_SERVED_PCT of them,
# none timed out) and fast (p90 within a SYN retransmit, 1 s).
MICE_SERVED_PCT=${MICE_SERVED_PCT:-95}
MICE_P90_MS=${MICE_P90_MS:-1000}

# A fresh service for each run, so the second starts with an empty backlog.
start_service() {
	rm -f "$TMP/ready"
	"$B/lab_service" --listen :: --port 8080 --workers $WORKERS --service-ms $SERVICE_MS \
		--backlog 128 --ready-file "$TMP/ready" --quiet &
	SERVICE=$!
	PIDS+=($SERVICE)
	for _ in $(seq 50); do [ -e "$TMP/ready" ] && break; sleep 0.1; done
}
stop_service() {
	kill -TERM "$SERVICE" 2>/dev/null
	wait "$SERVICE" 2>/dev/null
}

# drive SECONDS TAG: the elephant and the five mice at once; JSON
# summaries in $TMP/TAG-elephant.json and $TMP/TAG-mice.json.
drive() {
	local secs=$1 tag=$2 pids=()
	ip netns exec sl-cli "$B/lab_load" --connect 198.18.0.1 --port 8080 --source 198.18.0.10 \
		--rate "$RATE" --count $((RATE * secs)) --duration "$secs" --timeout 20 --json --quiet \
		>"$TMP/$tag-elephant.json" &
	pids+=($!)
	ip netns exec sl-cli "$B/lab_load" --connect 198.18.0.1 --port 8080 --source 198.18.0.11 \
		--source 198.18.0.12 --source 198.18.0.13 --source 198.18.0.14 --source 198.18.0.15 \
		--rate 5 --count $((5 * secs)) --duration "$secs" --timeout 20 --json --quiet \
		>"$TMP/$tag-mice.json" &
	pids+=($!)
	wait "${pids[@]}"
}

say "1. Without sluice: an elephant at $RATE conn/s and five mice at 1/s each, for ${BASELINE_SECONDS}s, into a service that serves $((WORKERS * 1000 / SERVICE_MS))/s"
start_service
drive "$BASELINE_SECONDS" before
stop_service

say "2. With sluiced on $CONFIG"
"$B/sluiced" --config "$CONFIG" --iface sl0 >"$TMP/sluiced.log" 2>&1 &
DAEMON=$!
PIDS+=($DAEMON)
configured=0
for _ in $(seq 200); do
	kill -0 $DAEMON 2>/dev/null || break
	"$B/sluicectl" status --json 2>/dev/null | jq -e .configured >/dev/null 2>&1 && { configured=1; break; }
	sleep 0.05
done
daemon_log
if [ $configured -eq 0 ]; then
	kill -0 $DAEMON 2>/dev/null && why="it did not configure itself within 10 s" ||
		why="it exited ($(wait $DAEMON; echo "status $?"))"
	fail "sluiced did not start: $why" \
		"Its log is above.  \`$B/sluiced --check\` tells what this kernel lacks" \
		"(README.md, Requirements); after a fix, run make demo again."
fi

start_service
drive "$SECONDS_LOAD" after &
LOAD=$!
# Live view while the load runs.
"$B/sluicectl" status --watch 1 --count "$SECONDS_LOAD"
wait $LOAD

say "3. Final status"
"$B/sluicectl" status
echo
"$B/sluicectl" explain --config "$CONFIG" --src 198.18.0.11 --dst 198.18.0.1 --dport 8080

kill -0 $DAEMON 2>/dev/null || { daemon_log; fail "sluiced exited during the run" "Its log is above."; }
kill -TERM $DAEMON; wait $DAEMON 2>/dev/null
stop_service

say "Report"
row() { # LABEL FILE
	jq -r --arg l "$1" '"\($l)|\(.started)|\(.ok)|\(.refused)|\(.timeout)|\(.total_ms.p50)|\(.total_ms.p90)|\(.total_ms.p99)"' "$2"
}
{
	echo "run|client|offered|served|reset (RST)|timed out|served p50 ms|p90 ms|p99 ms"
	row "without sluice|mice" "$TMP/before-mice.json"
	row "without sluice|elephant" "$TMP/before-elephant.json"
	row "with sluice|mice" "$TMP/after-mice.json"
	row "with sluice|elephant" "$TMP/after-elephant.json"
} | column -t -s'|'
echo
cat <<TXT
Without sluice every client waits in the service's backlog behind the
elephant: the mice's latency climbs with everyone's and many time out.  With
sluice the elephant's connections beyond its level's seats are deferred (the
daemon holds their SYNs in shuffle-sharded fair queues) and, past the queue
limits, reset at once; each mouse is its own flow, so it is dispatched ahead
of the elephant's backlog: its held SYN is re-injected the moment a seat
frees, and it is served in about the ${SERVICE_MS} ms service time, no SYN
retransmit needed.
See \`sluicectl explain\` above for why a mouse lands where it does.
TXT

# The verdict, from the run's own figures.
read -r started ok timeouts p90 < <(jq -r '"\(.started) \(.ok) \(.timeout) \(.total_ms.p90 // 1e9 | floor)"' "$TMP/after-mice.json")
if [ "${started:-0}" -eq 0 ] || [ $((ok * 100)) -lt $((started * MICE_SERVED_PCT)) ] ||
	[ "${timeouts:-1}" -ne 0 ] || [ "${p90:-1000000000}" -gt "$MICE_P90_MS" ]; then
	fail "sluice did not protect the mice: $ok of $started served, $timeouts timed out, p90 $p90 ms" \
		"Expected at least $MICE_SERVED_PCT % served, none timed out, p90 within $MICE_P90_MS ms." \
		"The live status above shows where the mice waited."
fi
printf '\n\033[1;32mDEMO PASSED: the mice were served with sluice (%d of %d, p90 %d ms).\033[0m\n' "$ok" "$started" "$p90"
