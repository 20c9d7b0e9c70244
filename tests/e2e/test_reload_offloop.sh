#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# A reload runs off the event loop: while a configuration of 20,000
# tenant FlowSchemas loads, compiles and is staged (more than a second,
# most of it reading the YAML), the loop keeps its tick (the heartbeat
# never ages past a few ticks, so the failsafe never opens) and keeps
# protecting; the new configuration takes over in one short turn.
# A reload asked while one compiles replaces it, it is not queued; `sluicectl
# reload` waits for the outcome, and a broken file that replaces a good one
# leaves the running configuration as it was.
source "$(dirname "$0")/lib.sh"
e2e_init "$@"

# tenants N FILE: basic.yaml plus N FlowSchemas, each its own /24 and port,
# onto the web level.
tenants() {
	cp "$CONFIGS/basic.yaml" "$2"
	awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++)
		printf "---\napiVersion: sluice/v1\nkind: FlowSchema\nmetadata: {name: t%d}\nspec:\n  priorityLevelConfiguration: {name: web}\n  matchingPrecedence: %d\n  rules:\n  - subjects: [{kind: Network, network: {cidrs: [10.%d.%d.0/24]}}]\n    destinations: [{ports: [%d]}]\n", \
			i, 1000 + i % 9000, int(i / 256), i % 256, 20000 + i }' >>"$2"
}
CFG=$E2E_TMP/live.yaml
cp "$CONFIGS/basic.yaml" "$CFG"
tenants 20000 "$E2E_TMP/big.yaml"
check "the 20,000-tenant configuration validates" "$SLUICECTL" validate "$E2E_TMP/big.yaml"
start_service 8080 8 50 || { not_ok "service starts"; e2e_finish; }
start_daemon "$CFG" || { not_ok "sluiced starts"; e2e_finish; }
ok "sluiced starts on basic.yaml"
reloads_ok() { grep -c "event=reload result=ok" "$E2E_TMP/sluiced.log"; }

cp "$E2E_TMP/big.yaml" "$CFG"
t0=$(date +%s%N)
kill -HUP "$DAEMON_PID"
# While it compiles: the heartbeat, and admission.
( hb_max_age 3 >"$E2E_TMP/hb.txt" ) &
hp=$!
r=$(load --connect $SRV4 --port 8080 --rate 20 --count 20 --timeout 5)
wait $hp
for _ in $(seq 600); do [ "$(reloads_ok)" -ge 1 ] && break; sleep 0.1; done
took=$(( ($(date +%s%N) - t0) / 1000000 ))
diag "reload of 20,000 schemas: $took ms; $(grep -o 'event=reload result=ok.*' "$E2E_TMP/sluiced.log" | tail -1)"
check_num "the reload was applied" "$(reloads_ok)" -ge 1
job_ms=$(grep -o 'event=reload result=ok.* seconds=[0-9.]*' "$E2E_TMP/sluiced.log" | tail -1 | sed 's/.*seconds=//' | awk '{ printf "%d", $1 * 1000 }')
check_num "its job took a while (${job_ms} ms of load, compile and stage, more than 500)" "${job_ms:-0}" -gt 500
check_num "the heartbeat never aged past 3 ticks meanwhile (most $(cat "$E2E_TMP/hb.txt") ms)" "$(cat "$E2E_TMP/hb.txt")" -lt 300
check_num "connections were served during the compile (20 of 20)" "$(jq .ok <<<"$r")" -eq 20
check_num "... and nothing went to the failsafe" "$(status_json | jq '.failsafe.opened + .failsafe.closed + .failsafe.static')" -eq 0
check "the new configuration runs: its 20,000 tenants and more" \
	grep -Eq "event=reload result=ok .*flow_schemas=200[0-9][0-9] " "$E2E_TMP/sluiced.log"

# Two reloads in a row: the second replaces the first while it compiles.
tenants 20010 "$E2E_TMP/big2.yaml"
cp "$E2E_TMP/big2.yaml" "$CFG"
kill -HUP "$DAEMON_PID"
sleep 0.3
kill -HUP "$DAEMON_PID"
for _ in $(seq 600); do [ "$(reloads_ok)" -ge 2 ] && break; sleep 0.1; done
check "the second reload replaced the first (queued, then replaced)" \
	bash -c 'grep -q "event=reload_queued" "$1" && grep -q "event=reload result=replaced" "$1"' _ "$E2E_TMP/sluiced.log"
check_num "... and one reload was applied for both" "$(reloads_ok)" -eq 2
check "... the newest file (20,010 tenants)" grep -Eq "event=reload result=ok .*flow_schemas=2001[0-9] " "$E2E_TMP/sluiced.log"

# sluicectl reload waits for the outcome; a broken file keeps the last good one.
out=$("$SLUICECTL" reload --control-socket "$E2E_TMP/ctl.sock")
check "sluicectl reload waits and says reloaded" grep -q "sluiced: reloaded" <<<"$out"
echo "kind: Nonsense" >>"$CFG"
out=$("$SLUICECTL" reload --control-socket "$E2E_TMP/ctl.sock"); rc=$?
check "a broken file: exit 1, the errors printed" bash -c '[ "$1" = 1 ] && grep -q "reload failed; the previous configuration keeps running" <<<"$2" && grep -q "error" <<<"$2"' _ "$rc" "$out"
check_num "web still has its 4 seats (the 20,010-tenant configuration runs)" "$(level_field web limit)" -eq 4
r=$(load --connect $SRV4 --port 8080 --rate 20 --count 4 --timeout 5)
check_num "and serves" "$(jq .ok <<<"$r")" -eq 4
# A reload that changes only the server's limit keeps the classification:
# no compile, no table written, the generation stays.
gen_before=$(status_json | jq .classification.generation)
sed 's/serverConcurrencyLimit: 4 /serverConcurrencyLimit: 8 /' "$E2E_TMP/big2.yaml" >"$CFG"
out=$("$SLUICECTL" reload --control-socket "$E2E_TMP/ctl.sock")
check "a limits-only reload is applied" grep -q "sluiced: reloaded" <<<"$out"
check "... with the classification kept, not compiled" \
	bash -c 'grep "event=reload result=ok" "$1" | tail -1 | grep -q "classification=kept"' _ "$E2E_TMP/sluiced.log"
check_num "... web's new limit, ceil(8 x 30 / 35) = 7" "$(level_field web limit)" -eq 7
check_num "... and the tables' generation did not flip" "$(status_json | jq .classification.generation)" -eq "$gen_before"
r=$(load --connect $SRV4 --port 8080 --rate 20 --count 4 --timeout 5)
check_num "and serves" "$(jq .ok <<<"$r")" -eq 4
check "clean stop" stop_daemon

e2e_finish
