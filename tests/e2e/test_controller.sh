#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The adaptive controller's signals: connections a policy selects feed its
# gradient controller with their real duration (sock_ops close events) or
# srtt, or the application reports its latency (a file, or datagrams to a
# Unix socket); `sluicectl controller` shows the signal, the setpoint
# learnt from it, and overload with a multiplicative cut when the service
# slows down.  (Enforcement, closed loop: test_policy_gate.sh.)
source "$(dirname "$0")/lib.sh"
e2e_init "$@"

cp "$CONFIGS/controller.yaml" "$E2E_TMP/ctl.yaml" # a copy: the test edits it
sed -i "s|EXTERNAL_PATH|$E2E_TMP/app-latency|; s|EXTERNAL_SOCKET|$E2E_TMP/app-latency.sock|" "$E2E_TMP/ctl.yaml"
echo 40 >"$E2E_TMP/app-latency"

# A service whose latency grows with its queue: 4 workers, 50 ms each.
start_service 8080 4 50 || { not_ok "service starts"; e2e_finish; }
start_service 8081 4 10 || { not_ok "second service starts"; e2e_finish; }
start_daemon "$E2E_TMP/ctl.yaml" || { not_ok "sluiced starts"; e2e_finish; }
ok "sluiced starts with a policy (control period 1 s)"
ctl() { "$SLUICECTL" controller --control-socket "$E2E_TMP/ctl.sock" --json; }
check "a fresh policy is in pass-through" jq -e '.policies[0].pass_through == true and .policies[0].name == "svc"' <<<"$(ctl)"

# Calm: 20 connections/s (half the capacity) for 6 s from two sources.
in_cli "$LAB_LOAD" --connect $SRV4 --port 8080 --source 198.18.0.20 --rate 10 --count 60 \
	--duration 6 --timeout 5 --json --quiet >/dev/null &
a=$!
# The live view while it runs: two snapshots, rates from the second.
top=$("$SLUICECTL" top --count 2 --watch 1 --pin-dir "$PIN_DIR" --control-socket "$E2E_TMP/ctl.sock")
second=$(awk '/^sluice top/ { n++ } n == 2' <<<"$top")
diag "$(sed -n '3,5p' <<<"$second")"
check "top: two snapshots, each with the levels and the policies" \
	bash -c '[ "$(grep -c "^sluice top" <<<"$1")" = 2 ] && grep -q "^catch-all " <<<"$1" && grep -Eq "^svc +" <<<"$1"' _ "$top"
check "top: the second snapshot shows admissions per second on catch-all (~20/s)" \
	bash -c 'awk "\$1 == \"catch-all\" { exit !(\$4 >= 5 && \$4 <= 40) }" <<<"$1"' _ "$second"
load --connect $SRV4 --port 8080 --source 198.18.0.21 --rate 10 --count 60 --duration 6 --timeout 5 >/dev/null
wait $a
c=$(ctl)
diag "calm: $(jq -c '.policies[0] | {signal_ms, setpoint_ms, overload, load_multiplier, pass_through}' <<<"$c")"
check_num "the signal is the connections' duration (~50-100 ms)" "$(jq '.policies[0].signal_ms' <<<"$c")" -lt 150
check "calm: no overload, pass-through" jq -e '.policies[0].overload == false and .policies[0].pass_through == true' <<<"$c"
check "workloads counted: gold and default both admitted" \
	jq -e '(.policies[0].workloads[] | select(.name == "gold") | .admitted) > 0 and (.policies[0].workloads[] | select(.name == "default") | .admitted) > 0' <<<"$c"

# Surge: 3x capacity for 5 s: queueing in the backlog raises latency.
load --connect $SRV4 --port 8080 --source 198.18.0.21 --rate 240 --count 1200 --duration 5 --timeout 10 >/dev/null &
s=$!
over=0
for _ in $(seq 40); do
	sleep 0.25
	if jq -e '.policies[0].overload == true' <<<"$(ctl)" >/dev/null; then over=1; break; fi
done
c=$(ctl)
diag "surge: $(jq -c '.policies[0] | {signal_ms, setpoint_ms, overload, gradient, load_multiplier, pass_through}' <<<"$c")"
check_num "the controller detects overload during the surge" "$over" -eq 1
check "and cuts the load multiplier below 1 (out of pass-through)" \
	jq -e '.policies[0].pass_through == false and .policies[0].load_multiplier < 1' <<<"$c"
wait $s

# Prometheus metrics on metricsAddress (plain bash: /dev/tcp).
http() {
	bash -c 'exec 5<>/dev/tcp/198.18.0.1/9464 || exit 1
		printf "%s %s HTTP/1.1\r\nHost: sluice\r\n\r\n" "$1" "$2" >&5
		timeout 5 cat <&5' _ "$1" "$2"
}
m=$(http GET /metrics)
check "metrics: 200 with the Prometheus text type" bash -c 'head -1 <<<"$1" | grep -q "^HTTP/1.1 200" && grep -q "^Content-Type: text/plain; version=0.0.4" <<<"$1"' _ "$m"
body=$(sed '1,/^\r$/d' <<<"$m")
check "metrics: every sample line is name{labels} value" \
	bash -c '! grep -v "^#" <<<"$1" | grep -Evq "^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-z_]+=\"[^\"]*\"(,[a-z_]+=\"[^\"]*\")*\})? (-?[0-9.e+-]+|NaN|\+Inf|-Inf)$"' _ "$body"
check "metrics: every family has HELP and TYPE" \
	bash -c '[ "$(grep -c "^# HELP" <<<"$1")" = "$(grep -c "^# TYPE" <<<"$1")" ] && grep -q "^# TYPE sluice_current_limit_seats gauge" <<<"$1"' _ "$body"
check "metrics: up, the level's limit, the policy's setpoint" \
	bash -c 'grep -q "^sluice_up 1$" <<<"$1" && grep -Eq "^sluice_current_limit_seats\{priority_level=\"catch-all\"\} [0-9]+$" <<<"$1" && grep -Eq "^sluice_policy_setpoint_seconds\{policy=\"svc\"\} [0-9.]+" <<<"$1"' _ "$body"
# The Grafana dashboard in configs/ queries only what this scrape has, and
# every query parses as PromQL (promtool, as recording rules).
DASH=$E2E_ROOT/configs/grafana/sluice-dashboard.json
check "the dashboard is JSON with panels, unique ids and a query in every non-row panel" \
	jq -e '(.panels | length) > 5 and ([.panels[].id] | length == (unique | length)) and all(.panels[] | select(.type != "row"); (.targets | length) > 0 and all(.targets[]; (.expr | length) > 0))' "$DASH"
missing=""
for m in $(jq -r '.panels[].targets[]?.expr' "$DASH" | grep -o 'sluice_[a-z_]*' | sort -u); do
	fam=${m%_bucket}
	grep -q "^# TYPE $fam " <<<"$body" || missing+=" $m"
done
check "every metric the dashboard queries is in a real scrape (missing:${missing:- none})" test -z "$missing"
jq -r '"groups:\n- name: dashboard\n  rules:", ([.panels[].targets[]?.expr] | to_entries[] | "  - record: sluice:dashboard_\(.key)\n    expr: \(.value | @json)")' "$DASH" >"$E2E_TMP/dashboard-rules.yaml"
check "every dashboard query parses (promtool check rules: SUCCESS, no lint)" \
	bash -c 'out=$(promtool check rules "$1" 2>&1) && grep -q "SUCCESS" <<<"$out" && ! grep -q "FAILED" <<<"$out"' _ "$E2E_TMP/dashboard-rules.yaml"
gold=$(grep -E '^sluice_workload_admitted_total\{policy="svc",workload="gold"\}' <<<"$body" | awk '{print $2}')
check_num "metrics: the gold workload's admissions are counted" "${gold:-0}" -gt 0
check_num "metrics: SYNs counted" "$(grep -E '^sluice_syns_total ' <<<"$body" | awk '{print $2}')" -gt 0
check "metrics: another path is 404" grep -q "^HTTP/1.1 404" <<<"$(http GET / | head -1)"
h=$(http HEAD /metrics)
check "metrics: HEAD has GET's Content-Length and no body" \
	bash -c 'len=$(grep -i "^Content-Length:" <<<"$1" | tr -dc 0-9); [ "${len:-0}" -gt 1000 ] && [ -z "$(sed "1,/^\r$/d" <<<"$1")" ]' _ "$h"
check "metrics: POST is 405" grep -q "^HTTP/1.1 405" <<<"$(http POST /metrics | head -1)"
check "metrics: a client that says nothing does not block the daemon" \
	bash -c 'exec 4<>/dev/tcp/198.18.0.1/9464; sleep 0.2; exec 3<>/dev/tcp/198.18.0.1/9464; printf "GET /metrics HTTP/1.1\r\n\r\n" >&3; timeout 5 cat <&3 | head -1 | grep -q "^HTTP/1.1 200"'

# srtt signal: the smoothed RTT of the connections (microseconds on veth).
load --connect $SRV4 --port 8081 --rate 20 --count 20 --timeout 5 >/dev/null
sleep 1.5
c=$(ctl)
diag "rtt policy: $(jq -c '.policies[] | select(.name == "rtt") | {signal_ms, setpoint_ms}' <<<"$c")"
check "srtt signal: a valid value far below the connections' duration (< 5 ms)" \
	jq -e '.policies[] | select(.name == "rtt") | .signal_ms != null and .signal_ms < 5' <<<"$c"

# External signal: the application writes its own latency (ms) to a file.
check "external signal: the number in the file is the signal" \
	jq -e '.policies[] | select(.name == "app") | .signal_ms == 40' <<<"$c"
echo 400 >"$E2E_TMP/app-latency"
over=0
for _ in $(seq 20); do
	sleep 0.25
	jq -e '.policies[] | select(.name == "app") | .overload == true' <<<"$(ctl)" >/dev/null && { over=1; break; }
done
check_num "external signal: 10x its baseline is overload" "$over" -eq 1

# External signal over a Unix datagram socket: the mean of a period's samples.
SOCK="$E2E_TMP/app-latency.sock"
check "the daemon bound the policy's signal socket" test -S "$SOCK"
sig() { jq -r '.policies[] | select(.name == "app-socket") | .signal_ms' <<<"$(ctl)"; }
v=null
for _ in $(seq 12); do
	"$SLUICECTL" signal --external-socket "$SOCK" 20 40 >/dev/null
	sleep 0.5
	v=$(sig)
	[ "$v" = 30 ] && break
done
check "socket signal: the mean of the samples is the signal (20 and 40 -> 30)" test "$v" = 30
check "sluicectl signal refuses a non-number" bash -c "! '$SLUICECTL' signal --external-socket '$SOCK' fast 2>/dev/null"
over=0
for _ in $(seq 20); do
	"$SLUICECTL" signal --external-socket "$SOCK" 400 >/dev/null
	sleep 0.25
	jq -e '.policies[] | select(.name == "app-socket") | .overload == true' <<<"$(ctl)" >/dev/null && { over=1; break; }
done
check_num "socket signal: 10x its baseline is overload" "$over" -eq 1
# What programs read: top --json, and one key case (snake_case) in every
# report of a running daemon.
t=$("$SLUICECTL" top --count 2 --watch 0.5 --json --pin-dir "$PIN_DIR" --control-socket "$E2E_TMP/ctl.sock")
check "top --json: one object per refresh (2 lines)" bash -c '[ "$(wc -l <<<"$1")" = 2 ] && jq -se "length == 2" <<<"$1" >/dev/null' _ "$t"
check "top --json: the first has no rates yet (null), the second has them" \
	bash -c 'jq -se ".[0].levels[0].admitted_per_s == null and (.[1].levels[0].admitted_per_s | type) == \"number\" and (.[1].interval_s > 0.3)" <<<"$1" >/dev/null' _ "$t"
check "top --json: levels with their seats and limit, and the policies" \
	bash -c 'jq -se ".[1] | (.levels | map(.name) | index(\"catch-all\")) != null and (.policies | map(.name) | index(\"svc\")) != null" <<<"$1" >/dev/null' _ "$t"
snake='[paths | .[] | strings] | all(test("^[a-z][a-z0-9_]*$"))'
for c in "status --pin-dir $PIN_DIR" "conns --pin-dir $PIN_DIR" "levels --control-socket $E2E_TMP/ctl.sock" \
	 "queues --control-socket $E2E_TMP/ctl.sock" "flows --control-socket $E2E_TMP/ctl.sock" \
	 "controller --control-socket $E2E_TMP/ctl.sock"; do
	# shellcheck disable=SC2086
	check "${c%% *} --json: snake_case keys" bash -c '"$1" $2 --json | jq -e "$3" >/dev/null' _ "$SLUICECTL" "$c" "$snake"
done
check "top --json: snake_case keys" bash -c 'jq -se "$2" <<<"$1" >/dev/null' _ "$t" "$snake"
check "clean stop" stop_daemon
check "the signal socket is removed on a clean stop" test ! -e "$SOCK"
e2e_finish
