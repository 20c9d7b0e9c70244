#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# make bench, PostgreSQL part (issue 23): a real PostgreSQL 15
# (max_connections 40) under a connection storm from pgbench (-C: a new
# connection per transaction, 80 clients on 2 threads, select-only,
# PGCONNECT_TIMEOUT 10 s), with a psql health check ('select 1') from
# another address twice a second, behind: nothing (PostgreSQL refuses
# "too many clients" at once); HAProxy (maxconn 31 to the server, timeout
# queue 5s); sluice (one Queue level of 31 seats, fair by source:
# tests/e2e/configs/postgres.yaml).  Per arm: transactions, pgbench
# clients aborted (and how many of them by a connect time-out), health
# checks ok and their p50 and p90.  Reports, asserts nothing (the e2e
# test_postgres asserts sluice against nothing in front); every load is
# bounded in time.
#
# Then PG_ROUNDS (3) more pairs, nothing and sluice back to back in
# alternating order, sluice in native XDP and generic in turn (the lab's
# client end is a bare veth): the ratio of each pair, and their median,
# since this VM's throughput drifts between storms.
#
#   scripts/bench_pg.sh            (root; PG_SECS, 30: each storm's length;
#                                   PG_ROUNDS, 3: the paired rounds)
source "$(dirname "$0")/../tests/e2e/lib.sh"
e2e_init "$@"

SECS=${PG_SECS:-30}
ROUNDS=${PG_ROUNDS:-3}
# The lab server has no TLS and no Kerberos: no negotiation round trips.
export PGSSLMODE=disable PGGSSENCMODE=disable

start_postgres 40 || { echo "bench_pg: PostgreSQL 15 did not start" >&2; exit 1; }

# health OUT SECONDS PORT: psql over IPv6 every 0.5 s, "exit-status ms" a line.
health() {
	local out=$1 end=$((SECONDS + $2)) port=$3 t0 rc
	while [ $SECONDS -lt $end ]; do
		t0=$(date +%s%N)
		PGCONNECT_TIMEOUT=10 in_cli timeout 15 "$PG_BIN/psql" -h $SRV6 -p "$port" -U postgres \
			-Atc 'select 1' postgres >/dev/null 2>&1
		rc=$?
		echo "$rc $(( ($(date +%s%N) - t0) / 1000000 ))" >>"$out"
		sleep 0.5
	done
}

# storm ARM PORT: one pgbench storm with the health check beside it.
storm() {
	local arm=$1 port=$2 hp
	: >"$E2E_TMP/health-$arm"
	health "$E2E_TMP/health-$arm" "$SECS" "$port" &
	hp=$!
	PGCONNECT_TIMEOUT=10 in_cli timeout $((SECS + 30)) "$PG_BIN/pgbench" -h $SRV4 -p "$port" -U postgres \
		-C -c 80 -j 2 -S -T "$SECS" postgres >"$E2E_TMP/pgbench-$arm.out" 2>"$E2E_TMP/pgbench-$arm.err"
	wait "$hp"
}

pct() { awk '$1 == 0 { print $2 }' "$2" | sort -n |
	awk -v p="$1" '{ v[NR] = $1 } END { if (!NR) { print "-"; exit } i = int(NR * p + 0.5); if (i < 1) i = 1; print v[i] }'; }

echo "bench_pg: nothing in front (${SECS} s)" >&2
storm none 5432

echo "bench_pg: HAProxy, maxconn 31, timeout queue 5s (${SECS} s)" >&2
cat >"$E2E_TMP/haproxy.cfg" <<CFG
global
	maxconn 4000
defaults
	mode tcp
	timeout connect 5s
	timeout client 60s
	timeout server 60s
	timeout queue 5s
frontend f
	bind $SRV4:6432
	bind [$SRV6]:6432
	maxconn 4000
	default_backend b
backend b
	server pg $SRV4:5432 maxconn 31
CFG
haproxy -f "$E2E_TMP/haproxy.cfg" -db >"$E2E_TMP/haproxy.log" 2>&1 &
hap=$!
E2E_PIDS+=($hap)
sleep 0.5
if kill -0 "$hap" 2>/dev/null; then
	storm haproxy 6432
	kill "$hap" 2>/dev/null
	wait "$hap" 2>/dev/null
else
	echo "bench_pg: haproxy did not start:" >&2
	cat "$E2E_TMP/haproxy.log" >&2
fi

echo "bench_pg: sluice, one Queue level of 31 seats (${SECS} s)" >&2
start_daemon "$CONFIGS/postgres.yaml" || { echo "bench_pg: sluiced did not start" >&2; exit 1; }
storm sluice 5432
"$SLUICECTL" levels pg --control-socket "$E2E_TMP/ctl.sock" --json >"$E2E_TMP/levels.json"
stop_daemon

printf '\n| in front of PostgreSQL | pgbench transactions | clients aborted | of them by a connect time-out | health checks ok | health p50 | health p90 |\n'
printf '|---|---:|---:|---:|---:|---:|---:|\n'
for arm in none haproxy sluice; do
	[ -e "$E2E_TMP/pgbench-$arm.err" ] || continue
	printf '| %s | %s | %s | %s | %s / %s | %s ms | %s ms |\n' "$arm" \
		"$(awk '/actually processed/ { print $NF }' "$E2E_TMP/pgbench-$arm.out")" \
		"$(grep -c 'aborted while establishing' "$E2E_TMP/pgbench-$arm.err")" \
		"$(grep -c 'timeout expired' "$E2E_TMP/pgbench-$arm.err")" \
		"$(awk '$1 == 0' "$E2E_TMP/health-$arm" | wc -l)" "$(wc -l <"$E2E_TMP/health-$arm")" \
		"$(pct 0.5 "$E2E_TMP/health-$arm")" "$(pct 0.9 "$E2E_TMP/health-$arm")"
done
echo "(pgbench -C -c 80 -j 2 -S -T $SECS; health: psql 'select 1' every 0.5 s from another address, the served)"
echo "sluice's level: $(jq -c '.levels[0] | {admitted, deferred, reinjected, rejected_queue_full, rejected_time_out, rejected_shed, rejected_stalled, stalls}' "$E2E_TMP/levels.json")"

# Paired rounds: nothing and sluice back to back, the order alternating.
tx() { awk '/actually processed/ { print $NF }' "$E2E_TMP/pgbench-$1.out"; }
sluice_round() {
	start_daemon "$CONFIGS/postgres.yaml" --xdp-mode "$2" || { echo "bench_pg: sluiced did not start" >&2; exit 1; }
	storm "$1" 5432
	stop_daemon
}
printf '
| round | XDP | first | nothing | sluice | sluice / nothing | sluice health ok | sluice health p90 | connect time-outs |
'
printf '|---:|---|---|---:|---:|---:|---:|---:|---:|
'
for r in $(seq "$ROUNDS"); do
	mode=native
	[ $((r % 2)) -eq 0 ] && mode=generic
	echo "bench_pg: round $r of $ROUNDS ($mode)" >&2
	if [ $((r % 2)) -eq 1 ]; then
		storm "none-$r" 5432
		sluice_round "sluice-$r" "$mode"
		first=nothing
	else
		sluice_round "sluice-$r" "$mode"
		storm "none-$r" 5432
		first=sluice
	fi
	n=$(tx "none-$r") s=$(tx "sluice-$r")
	ratio=$(awk -v a="$s" -v b="$n" 'BEGIN { printf "%.3f", b ? a / b : 0 }')
	echo "$ratio" >>"$E2E_TMP/ratios"
	printf '| %d | %s | %s | %s | %s | %s | %s / %s | %s ms | %s |
' "$r" "$mode" "$first" "$n" "$s" "$ratio" \
		"$(awk '$1 == 0' "$E2E_TMP/health-sluice-$r" | wc -l)" "$(wc -l <"$E2E_TMP/health-sluice-$r")" \
		"$(pct 0.9 "$E2E_TMP/health-sluice-$r")" "$(grep -c 'timeout expired' "$E2E_TMP/pgbench-sluice-$r.err")"
done
[ -s "$E2E_TMP/ratios" ] && echo "median of the rounds' sluice / nothing: $(median <"$E2E_TMP/ratios")x (rounds: $(paste -sd' ' "$E2E_TMP/ratios"))"
exit 0
