#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# A real PostgreSQL 15 (max_connections 40) under a connection storm from
# pgbench (-C: a new connection per transaction, 80 clients on 2 threads,
# select-only, 10 s connect timeouts), with a psql health check from
# another address twice a second; behind one Queue level of 31 seats, fair
# by source, and with nothing in front, in alternating rounds.
#
# pgbench's thread blocks in connect() while its other 39 clients, and
# their open connections, wait for it: a queue that holds the connect
# longer than a few connection lifetimes deadlocks the level.  Sluice must
# be no worse than nothing: no connect times out, the storm is not
# deadlocked (at least half the unprotected storm's transactions: a
# deadlocked one completes under 1 %, issue 23: 35 against 7,400), and the
# health check always gets in without waiting for a SYN retransmit.  How
# close to nothing's transactions sluice stays is make bench's figure
# (scripts/bench_pg.sh; this test prints its own as "figure:" lines).
source "$(dirname "$0")/lib.sh"
e2e_init "$@"

# Paired rounds: this VM's throughput drifts 10-20 % between storms.  Each
# round runs both arms back to back, in alternating order (nothing first,
# then sluice first), one round in native XDP and one in generic.  The
# figure (2026-12-04: 0.88x to 1.0x) is the bench's; the check is that no
# round is deadlocked, which two rounds of 10 s show.  What to expect (2026-12-04, five
# rounds of 30 s: 0.945, 1.002, 0.942, 0.891, 0.964): pgbench -P 1 shows
# sluice's storm losing most of its first one or two seconds, while the
# fresh daemon's stall breaker refuses the clients beyond its 31 seats
# (a refused connect aborts a pgbench client; PostgreSQL's own "too many
# clients" does that at once beyond its 40), and then running at about
# nothing's rate: a pgbench thread's rate is that of its connects one
# after another, and 31 clients keep them as busy as 39.
ROUNDS=2
# The lab server has no TLS and no Kerberos: no negotiation round trips.
export PGSSLMODE=disable PGGSSENCMODE=disable
SECS=10

start_postgres 40 || { not_ok "PostgreSQL 15 starts in the lab"; e2e_finish; }
ok "PostgreSQL 15 starts in the lab (max_connections 40)"

# health OUT SECONDS: psql 'select 1' over IPv6 (its own flow) every 0.5 s,
# "exit-status milliseconds" a line.
health() {
	local out=$1 end=$((SECONDS + $2)) t0 rc
	while [ $SECONDS -lt $end ]; do
		t0=$(date +%s%N)
		PGCONNECT_TIMEOUT=10 in_cli timeout 15 "$PG_BIN/psql" -h $SRV6 -U postgres -Atc 'select 1' postgres \
			>/dev/null 2>&1
		rc=$?
		echo "$rc $(( ($(date +%s%N) - t0) / 1000000 ))" >>"$out"
		sleep 0.5
	done
}

# storm TAG: one pgbench storm with the health check beside it.
storm() {
	local tag=$1 hp
	health "$E2E_TMP/health-$tag" "$SECS" &
	hp=$!
	PGCONNECT_TIMEOUT=10 in_cli timeout $((SECS + 30)) "$PG_BIN/pgbench" -h $SRV4 -U postgres -C -c 80 -j 2 -S \
		-T "$SECS" postgres >"$E2E_TMP/pgbench-$tag.out" 2>>"$E2E_TMP/pgbench-$tag.err"
	wait "$hp"
	diag "$tag: $(grep -h 'actually processed' "$E2E_TMP/pgbench-$tag.out") ;" \
		"aborted $(grep -c 'aborted' "$E2E_TMP/pgbench-$tag.err")"
}

tx() { awk '/actually processed/ { n += $NF } END { print n + 0 }' "$@"; }

# sluice_storm R: one storm behind a fresh daemon; its levels kept.  The
# lab's client end is a bare veth (issue 38: native XDP_TX is dropped
# there): odd rounds run native XDP, even ones generic, so both ways out
# of a refusal carry the storm.
sluice_storm() {
	local mode=native
	[ $(($1 % 2)) -eq 0 ] && mode=generic
	start_daemon "$CONFIGS/postgres.yaml" --xdp-mode $mode || { not_ok "sluiced starts ($mode)"; e2e_finish; }
	storm "sluice-$1"
	"$SLUICECTL" levels --control-socket "$E2E_TMP/ctl.sock" --json >"$E2E_TMP/levels-$1.json"
	status_json >"$E2E_TMP/status-$1.json"
	diag "sluice-$1 ($mode): refusals $(jq -c '.interfaces[0].refusals | {path, reason, rst_xdp_tx, rst_handoff}' "$E2E_TMP/status-$1.json"), lost $(jq .stats.rst_failed "$E2E_TMP/status-$1.json")"
	stop_daemon
}

for r in $(seq $ROUNDS); do
	if [ $((r % 2)) -eq 1 ]; then
		storm "none-$r"
		sluice_storm "$r"
	else
		sluice_storm "$r"
		storm "none-$r"
	fi
	echo "$(tx "$E2E_TMP/pgbench-sluice-$r.out") $(tx "$E2E_TMP/pgbench-none-$r.out")" >>"$E2E_TMP/pairs"
done

none=$(tx "$E2E_TMP"/pgbench-none-*.out)
sluice=$(tx "$E2E_TMP"/pgbench-sluice-*.out)
ratios=$(awk '{ printf "%s%.3f", (NR > 1 ? " " : ""), ($2 ? $1 / $2 : 0) }' "$E2E_TMP/pairs")
check_num "the unprotected storms ran (transactions)" "$(awk '{ print $2 }' "$E2E_TMP/pairs" | sort -n | head -1)" -gt 500
check_num "no refusal lost behind sluice (rst_failed, every round)" \
	"$(jq -s '[.[].stats.rst_failed] | add' "$E2E_TMP"/status-*.json)" -eq 0
check_num "no pgbench connect timed out behind sluice" \
	"$(cat "$E2E_TMP"/pgbench-sluice-*.err | grep -c 'timeout expired')" -eq 0
figure "postgres: transactions behind sluice, median of the rounds' ratios ($ratios)" "$(tr ' ' '\n' <<<"$ratios" | median)" "x nothing"
check_num "no storm deadlocked behind sluice: each round at least 0.5x nothing's transactions (ratios $ratios; sums $sluice vs $none)" \
	"$(tr ' ' '\n' <<<"$ratios" | sort -g | head -1)" -ge 0.5
# pct P FILE: the P-th percentile of the health check's milliseconds.
pct() { awk '{ print $2 }' "$2" | sort -n | awk -v p="$1" '{ v[NR] = $1 } END { i = int(NR * p + 0.5); if (i < 1) i = 1; print v[i] + 0 }'; }
cat "$E2E_TMP"/health-none-* >"$E2E_TMP/health-none"
diag "health checks with nothing in front: $(awk '$1 == 0' "$E2E_TMP/health-none" | wc -l) of $(wc -l <"$E2E_TMP/health-none") ok, p50 $(pct 0.5 "$E2E_TMP/health-none") ms, p90 $(pct 0.9 "$E2E_TMP/health-none") ms"
cat "$E2E_TMP"/health-sluice-* >"$E2E_TMP/health-sluice"
hn=$(wc -l <"$E2E_TMP/health-sluice")
hok=$(awk '$1 == 0' "$E2E_TMP/health-sluice" | wc -l)
check_num "health checks ran behind sluice (one every 2 s at least)" "$hn" -ge $((ROUNDS * SECS / 2))
check_num "health checks succeeded behind sluice (at least 99 %: $hok of $hn)" \
	"$(awk -v a="$hok" -v b="$hn" 'BEGIN { printf "%.3f", a / b }')" -ge 0.99
p90=$(pct 0.9 "$E2E_TMP/health-sluice")
diag "health checks behind sluice: p50 $(pct 0.5 "$E2E_TMP/health-sluice") ms, p90 $p90 ms"
# What the bar is for is seconds: 8 s before issue 23, 4.6 s behind
# HAProxy, 1 s for a SYN retransmit.  A health check that waited for a
# retransmit (or a queue) takes at least that; under it, the time is the
# postmaster's (it forks a backend a connection, on the same two cores as
# the storm: 2026-12-03, p50 125-140 ms with nothing, 160-200 ms behind
# sluice), and how fast it is, is the bench's figure.
figure "postgres: health check p90 behind sluice" "$p90" "ms; nothing in front: p50 $(pct 0.5 "$E2E_TMP/health-none") ms"
check_num "health check p90 behind sluice under a SYN retransmit (ms)" "$p90" -le 900
# What broke the deadlocks: the stalled level refused the blocked
# clients' waiters, and never the health check's.
stalled=$(jq -s '[.[].levels[] | select(.name == "pg") | .rejected_stalled] | add' "$E2E_TMP"/levels-*.json)
check_num "the storms met the stall breaker (logged)" "$(grep -c 'event=stalled level=pg .*again=no' "$E2E_TMP/sluiced.log")" -gt 0
check_num "no stall refused a health check (every refusal was pgbench's: $stalled)" \
	"$(grep -h -c 'aborted while establishing' "$E2E_TMP"/pgbench-sluice-*.err | awk '{ n += $1 } END { print n + 0 }')" -ge "$stalled"
start_daemon "$CONFIGS/postgres.yaml" || { not_ok "sluiced starts again"; e2e_finish; }
check "no seat left in use" wait_level_field pg seats_in_use 0 10
stop_daemon
e2e_finish
