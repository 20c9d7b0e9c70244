#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# make bench, soak part (BENCH_PARTS=S; SOAK_SECS, default 600): sluice
# under mixed load for SOAK_SECS, with a reload every 30 s, one kill -9 and
# restart halfway, and a spoofed SYN flood (blackholed sources, 50/s) in
# the second quarter.  Every second it checks the invariant that seats are
# connections: the connections sluice tracks as established equal the
# connections the kernel holds for the port (established through closing),
# within the in-flight margin (SOAK_MARGIN, 4: handshakes and closes
# between the socket table and sock_ops).  Half-open ones are left out: the
# kernel keeps a request up to a minute of SYN-ACK retransmits, sluice its
# seat for handshakeTimeout.  It is not
# checked while the heartbeat is stale (the failsafe admits without
# counting) or in the 3 s after a start.  At the end, with the load
# stopped and the handshake time-out passed, every seat must be back.
# Prints PASS, or the first violation with its time.  Lab only, bounded.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/build
SECS=${SOAK_SECS:-600}
MARGIN=${SOAK_MARGIN:-4}
source "$ROOT/scripts/lab_private.sh"
lab_private soak "$@"
ip route add 198.18.2.0/24 via 198.18.0.2 dev sl0
ip netns exec sl-cli sysctl -qw net.ipv4.ip_forward=1
ip netns exec sl-cli ip route add blackhole 198.18.2.0/24

write_config() { # QUEUES
	cat >"$TMP/soak.yaml" <<YAML
apiVersion: sluice/v1
kind: Server
metadata: {name: soak}
spec: {serverConcurrencyLimit: 16, handshakeTimeout: 5s, heartbeatTimeout: 2s}
---
apiVersion: sluice/v1
kind: PriorityLevelConfiguration
metadata: {name: web}
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 100
    limitResponse: {type: Queue, queuing: {queues: $1, handSize: 6, queueLengthLimit: 50}}
---
apiVersion: sluice/v1
kind: FlowSchema
metadata: {name: web}
spec:
  priorityLevelConfiguration: {name: web}
  matchingPrecedence: 500
  distinguisherMethod: {type: BySource}
  rules:
  - subjects: [{kind: Network, network: {cidrs: [0.0.0.0/0, "::/0"]}}]
    destinations: [{ports: ["8080"]}]
YAML
}
start_sluiced() {
	"$B/sluiced" --config "$TMP/soak.yaml" --iface sl0 --keep-maps >>"$TMP/sluiced.log" 2>&1 &
	DAEMON=$!
	PIDS+=($DAEMON)
	for _ in $(seq 100); do
		"$B/sluicectl" status --json 2>/dev/null | jq -e --argjson p "$DAEMON" '.daemon_pid == $p' \
			>/dev/null 2>&1 && { STARTED=$SECONDS; return 0; }
		sleep 0.05
	done
	echo "soak: sluiced did not start" >&2
	cat "$TMP/sluiced.log" >&2
	exit 1
}

write_config 64
"$B/lab_service" --listen :: --port 8080 --workers 12 --service-ms 150 --backlog 256 --quiet &
PIDS+=($!)
sleep 0.5
start_sluiced
echo "soak: ${SECS} s; reload every 30 s, kill -9 at $((SECS / 2)) s, spoofed flood $((SECS / 4))-$((SECS / 2)) s"
# Mixed load: 80 connections/s from eight sources, in 60 s chunks.
(
	end=$((SECONDS + SECS))
	while [ $SECONDS -lt $end ]; do
		ip netns exec sl-cli "$B/lab_load" --connect 198.18.0.1 --port 8080 --rate 80 --count 4800 \
			--duration 60 --timeout 10 --quiet --json \
			$(for i in 10 11 12 13 14 15 16 17; do echo --source 198.18.0.$i; done) >>"$TMP/load.json"
	done
) &
LOADER=$!
PIDS+=($LOADER)

violation=""
t0=$SECONDS
queues=64
killed=0
flooding=0
while [ $((SECONDS - t0)) -lt "$SECS" ]; do
	t=$((SECONDS - t0))
	if [ $((t % 30)) -eq 29 ]; then
		queues=$((queues == 64 ? 32 : 64))
		write_config "$queues"
		"$B/sluicectl" reload >/dev/null 2>&1 || { violation="t=${t}s: reload failed"; break; }
	fi
	if [ "$flooding" = 0 ] && [ "$t" -ge $((SECS / 4)) ]; then
		ip netns exec sl-cli "$B/lab_syn" --src 198.18.2.1 --sources 254 --dst 198.18.0.1 --dport 8080 \
			--rate 50 --count $((50 * SECS / 4)) --duration $((SECS / 4)) >/dev/null &
		PIDS+=($!)
		flooding=1
	fi
	if [ "$killed" = 0 ] && [ "$t" -ge $((SECS / 2)) ]; then
		kill -9 "$DAEMON"
		wait "$DAEMON" 2>/dev/null
		sleep 1
		start_sluiced
		killed=1
	fi
	st=$("$B/sluicectl" status --json 2>/dev/null)
	age=$(jq -r '.heartbeat_age_ms // 999999' <<<"$st")
	seats=$(jq -r '[.levels[] | select(.name == "web") | .seats_in_use][0] // -1' <<<"$st")
	tracked=$("$B/sluicectl" conns --json --limit 0 2>/dev/null |
		jq '[.conns[] | select(.state == "established")] | length')
	kernel=$(ss -Htn state established state fin-wait-1 state fin-wait-2 state close-wait \
		state last-ack state closing '( sport = :8080 )' | wc -l)
	if [ "$age" -lt 1000 ] && [ $((SECONDS - STARTED)) -ge 3 ]; then
		d=$((tracked - kernel)); d=${d#-}
		if [ "$d" -gt "$MARGIN" ]; then
			violation="t=${t}s: sluice tracks $tracked established connections, the kernel has $kernel (margin $MARGIN)"
			break
		fi
	fi
	echo "t=$t seats=$seats tracked=$tracked kernel=$kernel age=$age" >>"$TMP/trace.txt"
	[ $((t % 60)) -eq 0 ] && echo "  t=${t}s seats $seats, established: tracked $tracked, kernel $kernel; heartbeat ${age} ms"
	sleep 1
done
kill "$LOADER" 2>/dev/null
pkill -f "lab_load --connect 198.18.0.1" 2>/dev/null
pkill lab_syn 2>/dev/null
if [ -z "$violation" ]; then
	sleep 12 # requests finish, half-open ones expire (handshakeTimeout 5 s)
	seats=$("$B/sluicectl" status --json | jq '[.levels[] | select(.name == "web") | .seats_in_use][0]')
	conns=$("$B/sluicectl" conns --json | jq .total)
	[ "$seats" = 0 ] && [ "$conns" = 0 ] || violation="end: $seats seats and $conns tracked connections left"
fi
served=$(jq -s 'map(.ok) | add // 0' "$TMP/load.json" 2>/dev/null)
started=$(jq -s 'map(.started) | add // 0' "$TMP/load.json" 2>/dev/null)
if [ -n "$violation" ]; then
	echo "soak: FAIL at $violation (clients served $served of $started)"
	mkdir -p "$B" && cp "$TMP/sluiced.log" "$B/soak-sluiced.log" && cp "$TMP/trace.txt" "$B/soak-trace.txt"
	echo "(daemon log: $B/soak-sluiced.log; per-second trace: $B/soak-trace.txt)"
	tail -5 "$TMP/sluiced.log"
	exit 1
fi
echo "soak: PASS (${SECS} s, $((SECS / 30)) reloads, one kill -9, a flood; clients served $served of $started)"
