#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# sluicectl cost (issue 25): what sluice costs per connection, measured on
# a live host.  With kernel.bpf_stats_enabled off, it turns the run-time
# statistics on for its interval only (BPF_ENABLE_STATS) and off again;
# its figures are the programs' runs and time and the daemon's CPU over
# the connections admitted meanwhile; a restart meanwhile voids the
# measurement and says so; no pins is an error that says so.
source "$(dirname "$0")/lib.sh"
e2e_init "$@"

OLD_STATS=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.bpf_stats_enabled="$OLD_STATS"; e2e_cleanup' EXIT
sysctl -qw kernel.bpf_stats_enabled=0

start_service 8081 16 0 || { not_ok "lab service on 8081"; e2e_finish; }
start_daemon "$CONFIGS/quiet.yaml" || { not_ok "sluiced starts"; e2e_finish; }
ok "sluiced starts (a wide level on 8081)"

xdp_id=$(status_json | jq -r .xdp_prog_id)
# run_time SECONDS: sluice_xdp's run time so far (bpftool, not sluicectl).
xdp_run_ns() { bpftool prog show id "$xdp_id" --json | jq '.run_time_ns // 0'; }

# ---- 1. a measurement while connections come --------------------------------------
"$SLUICECTL" cost --pin-dir "$PIN_DIR" --window 4 --json >"$E2E_TMP/cost.json" 2>"$E2E_TMP/cost.err" &
cost_pid=$!
sleep 0.5
out=$(load --connect $SRV4 --port 8081 --rate 200 --count 400 --duration 3 --timeout 5)
wait "$cost_pid"
check "sluicectl cost --json exits 0" test $? -eq 0
check_num "... the load was served" "$(jq .ok <<<"$out")" -eq 400
c=$(cat "$E2E_TMP/cost.json")
diag "$(jq -c . <<<"$c")"
n=$(jq .connections <<<"$c")
check_num "... it counts the connections admitted in its interval" "$n" -ge 300
check_num "... and no more than were made" "$n" -le 400
check "... the statistics were on by sluicectl" test "$(jq -r .stats_enabled_by <<<"$c")" = sluicectl
prog() { jq -r --arg p "$1" ".programs[] | select(.name == \$p) | .$2" <<<"$c"; }
check "... sluice_xdp is the attached program" test "$(prog sluice_xdp id)" = "$xdp_id"
check "... sluice_xdp ran 2 to 10 times a connection (the SYN and what follows it)" \
	awk -v r="$(prog sluice_xdp runs_per_connection)" 'BEGIN { exit !(r >= 2 && r <= 10) }'
check "... sluice_sockops ran at least twice a connection (established, closed)" \
	awk -v r="$(prog sluice_sockops runs_per_connection)" 'BEGIN { exit !(r >= 2 && r <= 30) }'
check "... both took time a run" \
	awk -v a="$(prog sluice_xdp ns_per_run)" -v b="$(prog sluice_sockops ns_per_run)" 'BEGIN { exit !(a > 0 && b > 0) }'
check "... the daemon is the one running" test "$(jq .daemon.pid <<<"$c")" = "$DAEMON_PID"
check_num "... and its CPU time is counted" "$(jq .daemon.cpu_ns <<<"$c")" -gt 0
check "... the total is BPF plus the daemon, per connection" \
	awk -v t="$(jq .ns_per_connection <<<"$c")" -v b="$(jq .bpf_ns_per_connection <<<"$c")" \
	    -v d="$(jq .daemon.ns_per_connection <<<"$c")" -v x="$(prog sluice_xdp ns_per_connection)" \
	    -v s="$(prog sluice_sockops ns_per_connection)" \
	    'BEGIN { exit !(t > 0 && (t - b - d) ^ 2 < 1 && (b - x - s) ^ 2 < 1) }'

# ---- 2. the statistics are off again -----------------------------------------------
check "... kernel.bpf_stats_enabled is still 0" test "$(sysctl -n kernel.bpf_stats_enabled)" = 0
t0=$(xdp_run_ns)
load --connect $SRV4 --port 8081 --rate 200 --count 100 --duration 2 --timeout 5 >/dev/null
check "after it exits, the kernel no longer times sluice's runs" test "$(xdp_run_ns)" = "$t0"

# ---- 3. statistics already on: the metrics count, and sluicectl leaves them on ----------
sysctl -qw kernel.bpf_stats_enabled=1
metric() {
	curl -sf --max-time 5 "http://127.0.0.1:9467/metrics" | awk -v k="$1" '$1 == k { print $2 }'
}
r0=$(metric 'sluice_bpf_program_runs_total{program="sluice_xdp"}')
load --connect $SRV4 --port 8081 --rate 200 --count 100 --duration 2 --timeout 5 >/dev/null
r1=$(metric 'sluice_bpf_program_runs_total{program="sluice_xdp"}')
check_num "metrics: sluice_xdp's runs grow with the connections (2 or more each)" "$(( ${r1:-0} - ${r0:-0} ))" -ge 200
check "... its run time is exported" 	awk -v t="$(metric 'sluice_bpf_program_run_seconds_total{program="sluice_xdp"}')" 'BEGIN { exit !(t > 0) }'
check "... and sock_ops' too" 	awk -v t="$(metric 'sluice_bpf_program_run_seconds_total{program="sluice_sockops"}')" 'BEGIN { exit !(t > 0) }'
check "... and the daemon's CPU time" awk -v t="$(metric sluice_daemon_cpu_seconds_total)" 'BEGIN { exit !(t > 0) }'
"$SLUICECTL" cost --pin-dir "$PIN_DIR" --window 0.5 --json >"$E2E_TMP/cost2.json"
check "with kernel.bpf_stats_enabled=1 it says so" test "$(jq -r .stats_enabled_by "$E2E_TMP/cost2.json")" = sysctl
check "... and leaves it on" test "$(sysctl -n kernel.bpf_stats_enabled)" = 1
check "... no connection: per-connection figures are 0" test "$(jq .ns_per_connection "$E2E_TMP/cost2.json")" = 0
sysctl -qw kernel.bpf_stats_enabled=0

# ---- 4. a restart during the interval ------------------------------------------------------
"$SLUICECTL" cost --pin-dir "$PIN_DIR" --window 3 >"$E2E_TMP/cost3.txt" 2>"$E2E_TMP/cost3.err" &
cost_pid=$!
sleep 0.5
stop_daemon
start_daemon "$CONFIGS/quiet.yaml" || not_ok "sluiced starts again"
wait "$cost_pid"
rc=$?
diag "$(cat "$E2E_TMP/cost3.err")"
check "a measurement across a restart fails (exit 1): two daemons' counts do not subtract" test "$rc" -eq 1
check "... and says why, naming both pids" grep -q "restarted or stopped during the interval (daemon pid [0-9]* -> $DAEMON_PID" "$E2E_TMP/cost3.err"
check "... with no figures on stdout" test ! -s "$E2E_TMP/cost3.txt"

# ---- 5. nothing pinned -----------------------------------------------------------------
"$SLUICECTL" cost --pin-dir "$E2E_TMP/nowhere" --window 0.2 >/dev/null 2>"$E2E_TMP/cost4.err"
rc=$?
check "no pins: exit 1" test "$rc" -eq 1
check "... with one line that says what is missing" grep -q "nowhere" "$E2E_TMP/cost4.err"

e2e_finish
