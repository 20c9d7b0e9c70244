#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Shared helpers for sluice end-to-end tests: TAP output, a private
# namespace, the lab topology, and daemon start/stop.
#
# Each test script sources this file and calls e2e_init "$@" first: the
# script re-executes itself under `unshare -m -n`, with a private bpffs on
# /sys/fs/bpf and a private /run/netns, so nothing leaks to the host and
# everything vanishes when the script exits, even on failure.

set -uo pipefail

E2E_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
B=$E2E_ROOT/${BUILD:-build}
SLUICED=$B/sluiced
SLUICECTL=$B/sluicectl
LAB_SERVICE=$B/lab_service
LAB_LOAD=$B/lab_load
LAB_PEER=$B/lab_peer
LAB_SYN=$B/lab_syn
LAB_NOTIFY=$B/lab_notify
LAB_YAML2JSON=$B/lab_yaml2json
LAB_CONNS=$B/lab_conns
CONFIGS=$E2E_ROOT/tests/e2e/configs
TOPO=$E2E_ROOT/tests/lab/topo.sh
PIN_DIR=/sys/fs/bpf/sluice
CLI_NS=sl-cli
SRV4=198.18.0.1
SRV6=fd53:6c75:6963::1

T_N=0
T_FAIL=0
E2E_PIDS=()

# jq 1.6 exits 0 for `jq -e FILTER` on empty input: a check whose command
# printed nothing (a daemon that died, a CLI that failed) would pass.  With
# -e, this wrapper also fails when jq printed nothing.  Exported, so that
# `bash -c "... | jq -e ..."` inside a check gets it too.
jq() {
	local a e=0 out rc
	for a in "$@"; do [[ $a =~ ^-[a-zA-Z]*e[a-zA-Z]*$ ]] && e=1; done
	[ $e = 1 ] || { command jq "$@"; return; }
	out=$(command jq "$@"); rc=$?
	[ -n "$out" ] && printf '%s\n' "$out"
	[ $rc -eq 0 ] && [ -n "$out" ]
}
export -f jq

ok()     { T_N=$((T_N + 1)); echo "ok $T_N - $*"; }
not_ok() { T_N=$((T_N + 1)); T_FAIL=$((T_FAIL + 1)); echo "not ok $T_N - $*"; }
diag()   { echo "# $*"; }
# figure NAME VALUE [NOTE]: a figure of speed the test measures but does
# not assert: a test asserts behaviour with margins noise cannot cross, and
# the figure is make bench's (scripts/bench_figures.sh collects these lines).
figure() { echo "# figure: $1 = $2${3:+ ($3)}"; }

# check DESCRIPTION COMMAND...: ok when the command succeeds.
check() {
	local desc=$1; shift
	if "$@" >/dev/null; then ok "$desc"; else not_ok "$desc"; fi
}

# check_num DESCRIPTION A OP B  (OP: -eq -le -lt -ge -gt -ne), numbers may be decimals.
check_num() {
	local desc=$1 a=$2 op=$3 b=$4 r
	r=$(awk -v a="$a" -v b="$b" -v op="$op" 'BEGIN {
		if (a == "" || b == "") { print 0; exit }
		if (op == "-eq") print (a == b); else if (op == "-ne") print (a != b);
		else if (op == "-le") print (a <= b); else if (op == "-lt") print (a < b);
		else if (op == "-ge") print (a >= b); else if (op == "-gt") print (a > b); else print 0 }')
	if [ "$r" = 1 ]; then ok "$desc ($a $op $b)"; else not_ok "$desc (got '$a', want $op $b)"; fi
}

e2e_init() {
	if [ -z "${SLUICE_E2E_PRIVATE:-}" ]; then
		export SLUICE_E2E_PRIVATE=1
		exec unshare -m -n --propagation private bash "$0" "$@"
	fi
	mount -t bpf bpf /sys/fs/bpf || { echo "not ok 1 - mount private bpffs"; exit 1; }
	mkdir -p /run/netns
	mount -t tmpfs tmpfs /run/netns || { echo "not ok 1 - mount private /run/netns"; exit 1; }
	ip link set lo up
	trap e2e_cleanup EXIT
	"$TOPO" up || { echo "not ok 1 - lab topology up"; exit 1; }
	E2E_TMP=$(mktemp -d /tmp/sluice-e2e.XXXXXX)
}

e2e_cleanup() {
	local p
	stop_postgres
	for p in "${E2E_PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	sleep 0.2
	for p in "${E2E_PIDS[@]}"; do
		kill -9 "$p" 2>/dev/null
	done
	"$TOPO" down 2>/dev/null
	# E2E_KEEP=1: keep the logs and traces for a post-mortem.
	if [ -n "${E2E_KEEP:-}" ] && [ -n "${E2E_TMP:-}" ]; then
		echo "# kept $E2E_TMP" >&2
	elif [ -n "${E2E_TMP:-}" ]; then
		rm -rf "$E2E_TMP"
	fi
}

e2e_finish() {
	echo "1..$T_N"
	[ "$T_FAIL" -eq 0 ]
	exit $?
}

# in_cli CMD...: run in the client namespace.
in_cli() { ip netns exec "$CLI_NS" "$@"; }

# start_service PORT WORKERS SERVICE_MS [extra lab_service args]
# SERVICE_CGROUP (a cgroup v2 directory, empty by default): start it there,
# so that its listening socket, and each connection it accepts, belong to
# that cgroup.
start_service() {
	local port=$1 workers=$2 ms=$3; shift 3
	local ready="$E2E_TMP/service-$port.ready" in_cg=()
	[ -n "${SERVICE_CGROUP:-}" ] && in_cg=(bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$SERVICE_CGROUP")
	"${in_cg[@]}" "$LAB_SERVICE" --listen :: --port "$port" --workers "$workers" --service-ms "$ms" \
		--ready-file "$ready" --quiet "$@" &
	E2E_PIDS+=($!)
	for _ in $(seq 50); do [ -e "$ready" ] && return 0; sleep 0.1; done
	diag "lab_service on port $port did not become ready"
	return 1
}

# start_daemon CONFIG [extra sluiced args]: sets DAEMON_PID, waits until configured.
# SLUICED_WRAP (an array, empty by default): a command to run sluiced under.
# DAEMON_IFACES: its interface options (empty: Server spec.interfaces).
SLUICED_WRAP=()
DAEMON_IFACES=(--iface sl0)
start_daemon() {
	local cfg=$1; shift
	"${SLUICED_WRAP[@]}" "$SLUICED" --config "$cfg" "${DAEMON_IFACES[@]}" --pin-dir "$PIN_DIR" --control-socket "$E2E_TMP/ctl.sock" "$@" \
		>>"$E2E_TMP/sluiced.log" 2>&1 &
	DAEMON_PID=$!
	E2E_PIDS+=("$DAEMON_PID")
	local sock=$E2E_TMP/ctl.sock prev= a
	for a in "$@"; do [ "$prev" = --control-socket ] && sock=$a; prev=$a; done
	for _ in $(seq 100); do
		# Its own heartbeat: after a crash the pins still say "configured".
		# And its loop answering: the heartbeat is written before XDP
		# is attached and privileges are dropped, the loop runs after.
		if "$SLUICECTL" status --pin-dir "$PIN_DIR" --json 2>/dev/null |
			jq -e --argjson pid "$DAEMON_PID" '.configured and .daemon_pid == $pid' >/dev/null 2>&1 &&
			"$SLUICECTL" levels --control-socket "$sock" --json >/dev/null 2>&1; then
			return 0
		fi
		kill -0 "$DAEMON_PID" 2>/dev/null || break
		sleep 0.05
	done
	diag "sluiced did not come up; its log:"
	sed 's/^/#   /' "$E2E_TMP/sluiced.log"
	return 1
}

# stop_daemon: SIGTERM and wait (clean detach).
stop_daemon() {
	kill -TERM "$DAEMON_PID" 2>/dev/null
	for _ in $(seq 100); do
		kill -0 "$DAEMON_PID" 2>/dev/null || { wait "$DAEMON_PID" 2>/dev/null; return 0; }
		sleep 0.05
	done
	diag "sluiced did not exit after SIGTERM"
	return 1
}

# kill_daemon_hard: SIGKILL, no chance to clean up (the crash case).
kill_daemon_hard() {
	kill -9 "$DAEMON_PID" 2>/dev/null
	wait "$DAEMON_PID" 2>/dev/null
	return 0
}

status_json() { "$SLUICECTL" status --pin-dir "$PIN_DIR" --json; }

# hb_max_age SECONDS: sample the daemon's heartbeat age (every ~20 ms) for
# SECONDS and print the largest age seen, in ms: how long the daemon's
# loop was kept from its tick.
hb_max_age() {
	local end=$(( $(date +%s%N) + $1 * 1000000000 )) max=0 a
	while [ "$(date +%s%N)" -lt "$end" ]; do
		a=$(status_json 2>/dev/null | jq -r '.heartbeat_age_ms // 999999')
		[ "$a" -gt "$max" ] && max=$a
		sleep 0.02
	done
	echo "$max"
}

# level_field LEVEL FIELD: one number from sluicectl status --json.
level_field() {
	status_json | jq -r --arg n "$1" --arg f "$2" '.levels[] | select(.name == $n) | .[$f]'
}

# wait_level_field LEVEL FIELD VALUE TIMEOUT_S: poll until equal.
wait_level_field() {
	local n=$1 f=$2 want=$3 t=$4 got=""
	local end=$((SECONDS + t))
	while [ $SECONDS -le $end ]; do
		got=$(level_field "$n" "$f")
		[ "$got" = "$want" ] && return 0
		sleep 0.1
	done
	diag "level $n field $f: got '$got', want '$want' after ${t}s"
	return 1
}

# load ARGS...: lab_load from the client namespace, JSON summary on stdout.
load() { in_cli "$LAB_LOAD" --json --quiet "$@"; }

# completions_in FROM_S TO_S CSV...: lab_load --csv rows that ended ok in
# the window, by each load's own clock (start + total).
completions_in() {
	local from=$1 to=$2; shift 2
	awk -F, -v a="$from" -v b="$to" 'FNR > 1 && $6 == "ok" { t = ($3 + $5) / 1000; if (t >= a && t < b) n++ }
		END { print n + 0 }' "$@"
}

# median: the median of the numbers on stdin, one a line (the mean of the
# middle two of an even count; 0 of none).
median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : NR ? (v[NR / 2] + v[NR / 2 + 1]) / 2 : 0 }'; }

# pct_col P COL CSV...: the P-th percentile (0..1) of column COL over the
# rows that ended ok.
pct_col() {
	local p=$1 col=$2; shift 2
	awk -F, -v c="$col" 'FNR > 1 && $6 == "ok" { print $c }' "$@" | sort -n |
		awk -v p="$p" '{ v[NR] = $1 } END { i = int(NR * p + 0.5); if (i < 1) i = 1; print v[i] + 0 }'
}

# ---- PostgreSQL 15 from Debian, in this (the server's) namespace ----------

PG_BIN=/usr/lib/postgresql/15/bin

# start_postgres MAX_CONNECTIONS: a throw-away cluster in $E2E_TMP/pg
# listening on $SRV4 and $SRV6 port 5432 (trust for the lab networks),
# with pgbench's tables (scale 1).  The server runs as postgres (it refuses
# root); its log is $E2E_TMP/pg.log.
start_postgres() {
	local maxconn=$1 d=$E2E_TMP/pg
	[ -x "$PG_BIN/postgres" ] || { diag "PostgreSQL 15 is not installed ($PG_BIN)"; return 1; }
	mkdir -p "$d" && chown postgres: "$d" && chmod 0755 "$E2E_TMP"
	runuser -u postgres -- "$PG_BIN/initdb" -D "$d/data" -U postgres --auth=trust -E UTF8 \
		>"$E2E_TMP/pg-initdb.log" 2>&1 || { sed 's/^/#   /' "$E2E_TMP/pg-initdb.log"; return 1; }
	cat >>"$d/data/postgresql.conf" <<-PGCONF
		listen_addresses = '$SRV4,$SRV6'
		port = 5432
		max_connections = $maxconn
		superuser_reserved_connections = 0
		unix_socket_directories = '$d'
		fsync = off
		synchronous_commit = off
		full_page_writes = off
		shared_buffers = 32MB
		log_min_messages = warning
	PGCONF
	printf 'host all all 198.18.0.0/15 trust\nhost all all fd53:6c75:6963::/64 trust\n' >>"$d/data/pg_hba.conf"
	runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$d/data" -l "$d/pg.log" -w -t 30 start >/dev/null ||
		{ sed 's/^/#   /' "$d/pg.log"; return 1; }
	PG_DATA=$d/data
	runuser -u postgres -- "$PG_BIN/pgbench" -h "$d" -i -s 1 -q postgres >"$E2E_TMP/pg-init.log" 2>&1 ||
		{ sed 's/^/#   /' "$E2E_TMP/pg-init.log"; return 1; }
}

stop_postgres() {
	[ -n "${PG_DATA:-}" ] && runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$PG_DATA" -m immediate stop >/dev/null 2>&1
	PG_DATA=
}
