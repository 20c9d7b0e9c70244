#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The metrics an operator alerts on, as Kubernetes APF names them
# (apiserver_flowcontrol_* with the sluice_ prefix): per priority_level and
# flow_schema, connections dispatched, rejected by reason, waiting and
# executing; histograms of the wait and of the connection's life, in
# seconds; the levels' limits and demand; build, heartbeat and reload.
# The exposition is checked with Prometheus' own promtool on real scrapes,
# and the probes /healthz and /readyz answer.
source "$(dirname "$0")/lib.sh"
e2e_init "$@"

cp "$CONFIGS/metrics.yaml" "$E2E_TMP/metrics.yaml" # a copy: the test breaks it
URL=http://$SRV4:9466
scrape() { curl -sf --max-time 5 "$URL/metrics"; }
# value 'name{labels}': the sample's value, or nothing.
value() { awk -v k="$1" '$1 == k { print $2 }' <<<"$M"; }
L='priority_level="web",flow_schema="tenant-a"'

start_service 8080 16 400 || { not_ok "service starts"; e2e_finish; }
start_service 9090 8 1500 || { not_ok "second service starts"; e2e_finish; }
start_daemon "$E2E_TMP/metrics.yaml" || { not_ok "sluiced starts"; e2e_finish; }
ok "sluiced starts with metricsAddress $SRV4:9466"

M=$(scrape)
check "a first scrape passes promtool check metrics" bash -c 'promtool check metrics <<<"$1"' _ "$M"
ver=$("$SLUICED" --version | awk 'NR == 1 { print $2 }')
check "build_info carries the version sluiced --version says ($ver) and the ABI" \
	grep -Eq "^sluice_build_info\{version=\"$ver\",revision=\"[^\"]+\",abi=\"[0-9]+\"\} 1$" <<<"$M"
check "the levels' limits under APF's names" \
	bash -c 'for n in nominal_limit_seats current_limit_seats lower_limit_seats upper_limit_seats demand_seats_average demand_seats_high_watermark demand_seats_smoothed; do grep -Eq "^sluice_$n\{priority_level=\"web\"\} [0-9.e+-]+$" <<<"$1" || exit 1; done' _ "$M"
check_num "current_limit_seats of strict is its one seat" \
	"$(value 'sluice_current_limit_seats{priority_level="strict"}')" -eq 1
check_num "the heartbeat is young (< 1 s)" \
	"$(awk '$1 == "sluice_heartbeat_age_seconds" { print int($2 * 1000) }' <<<"$M")" -lt 1000
check "the configuration applied at start counts as a good load" \
	bash -c 'grep -q "^sluice_config_last_reload_successful 1$" <<<"$1" && awk "\$1 == \"sluice_config_last_reload_success_timestamp_seconds\" { exit !(\$2 > 1.7e9) }" <<<"$1"' _ "$M"
check "no FlowSchema series before any SYN (series appear with their first observation)" \
	bash -c '! grep -q "flow_schema=\"tenant-a\"" <<<"$1"' _ "$M"
check "/healthz: 200 ok" bash -c '[ "$(curl -s -o /dev/null -w "%{http_code}" --max-time 5 "$1/healthz")" = 200 ] && [ "$(curl -s --max-time 5 "$1/healthz")" = ok ]' _ "$URL"
check "/readyz: 200 ok" bash -c '[ "$(curl -s -o /dev/null -w "%{http_code}" --max-time 5 "$1/readyz")" = 200 ]' _ "$URL"

# Tenant a asks for 60/s for 3 s (9 seats of 400 ms serve about 22/s):
# some are admitted at once, some wait in the level's 4 short queues, the
# rest find their queue full.  Tenant b asks for 4.  Strict's single seat meets
# 6 concurrent connections of 1.5 s.
load --connect $SRV4 --port 8080 --source 198.18.0.10 --rate 60 --count 180 --duration 4 \
	--timeout 8 >"$E2E_TMP/a.json" &
a=$!
load --connect $SRV4 --port 8080 --source 198.18.0.11 --rate 4 --count 4 --duration 2 \
	--timeout 8 >"$E2E_TMP/b.json" &
b=$!
load --connect $SRV4 --port 9090 --rate 30 --count 6 --duration 1 --timeout 5 >"$E2E_TMP/strict.json" &
s=$!
sleep 1.2 # the sweep's census runs every second
# Tenant a is one flow: one queue of 3 places, filling at 60/s and
# draining at 22/s; the most seen in 8 scrapes.
inq=0
for _ in $(seq 8); do
	M=$(scrape)
	v=$(value "sluice_current_inqueue_connections{$L}")
	[ "${v:-0}" -gt "$inq" ] && inq=$v
	sleep 0.15
done
diag "during: $(grep -E "^sluice_current_(inqueue_connections|executing_seats)\{$L\}" <<<"$M" | tr '\n' ' ')"
check_num "during the burst: tenant-a has connections in queue (the most of 8 scrapes)" "$inq" -gt 0
check_num "... at most its queue's 3 places" "$inq" -le 3
check_num "during the burst: tenant-a's executing seats (census) are within the level's 9" \
	"$(value "sluice_current_executing_seats{$L}")" -le 9
check_num "... and not zero" "$(value "sluice_current_executing_seats{$L}")" -gt 0
check "a scrape under load passes promtool" bash -c 'promtool check metrics <<<"$1"' _ "$M"
# How full the connection table is: the last sweep counted what the census
# counted (at least tenant-a's executing connections), of 65,536.
check_num "during the burst: connection_table_entries (the last sweep's count) holds the executing ones" \
	"$(value sluice_connection_table_entries)" -ge "$(value "sluice_current_executing_seats{$L}")"
check_num "... of connection_table_size (tableSizes.connections, 65536 by default)" \
	"$(value sluice_connection_table_size)" -eq 65536
wait $a $b $s
sleep 1.2
M=$(scrape)
ok_a=$(jq .ok "$E2E_TMP/a.json"); refused_a=$(jq .refused "$E2E_TMP/a.json")
disp=$(value "sluice_dispatched_connections_total{$L}")
diag "tenant-a: $ok_a ok, $refused_a refused; dispatched $disp; rejected $(grep -E "^sluice_rejected_connections_total\{$L" <<<"$M" | awk '{printf "%s ", $2}')"
check_num "dispatched_connections_total counts every connection tenant-a completed ($ok_a)" \
	"${disp:-0}" -ge "$ok_a"
check_num "... and no more than it started" "${disp:-0}" -le "$(jq .started "$E2E_TMP/a.json")"
qf=$(value "sluice_rejected_connections_total{$L,reason=\"queue-full\"}")
to=$(value "sluice_rejected_connections_total{$L,reason=\"time-out\"}")
check_num "rejected reason=queue-full: the overflowing burst" "${qf:-0}" -gt 0
sh=$(value "sluice_rejected_connections_total{$L,reason=\"shed\"}")
check_num "every refused client of tenant-a is a queue-full, time-out or shed rejection" \
	"$(( ${qf:-0} + ${to:-0} + ${sh:-0} ))" -ge "$refused_a"
check_num "strict: reason=concurrency-limit (a Reject level's RSTs)" \
	"$(value 'sluice_rejected_connections_total{priority_level="strict",flow_schema="strict",reason="concurrency-limit"}')" -ge \
	"$(jq .refused "$E2E_TMP/strict.json")"
check_num "... and strict refused some" "$(jq .refused "$E2E_TMP/strict.json")" -gt 0
zero=$(value "sluice_connection_wait_duration_seconds_bucket{$L,execute=\"true\",le=\"0\"}")
count=$(value "sluice_connection_wait_duration_seconds_count{$L,execute=\"true\"}")
diag "waits of tenant-a's admitted: $count, $zero of them at once"
check_num "wait histogram: admissions at once are in le=0" "${zero:-0}" -gt 0
check_num "wait histogram: some waited (count above le=0)" "${count:-0}" -gt "${zero:-0}"
check "wait histogram: buckets are cumulative up to +Inf = count" \
	bash -c 'grep -E "^sluice_connection_wait_duration_seconds_bucket\{$2,execute=\"true\"" <<<"$1" | awk "{ if (\$2 < prev) exit 1; prev = \$2; last = \$2 } END { exit !(last == $3) }"' _ "$M" "$L" "$count"
dur=$(value "sluice_connection_duration_seconds_count{$L}")
check_num "connection_duration_seconds counts the closed connections" "${dur:-0}" -ge "$ok_a"
check_num "... which lasted at least their 400 ms of service (none in le=0.2)" \
	"$(value "sluice_connection_duration_seconds_bucket{$L,le=\"0.2\"}")" -eq 0
LB='priority_level="web",flow_schema="tenant-b"'
check_num "tenant-b has its own series: its 4 connections dispatched or rejected" \
	"$(awk -v d="sluice_dispatched_connections_total{$LB}" -v r="sluice_rejected_connections_total{$LB," \
		'$1 == d || index($1, r) == 1 { n += $2 } END { print n + 0 }' <<<"$M")" -eq 4
check "a scrape after the load passes promtool" bash -c 'promtool check metrics <<<"$1"' _ "$M"
# The Kubernetes example's alerts use names this scrape has.
missing=$(grep -oE 'sluice_[a-z_]+' "$E2E_ROOT/configs/kubernetes/base/prometheusrule.yaml" | sort -u |
	while read -r n; do grep -q "^# TYPE $n " <<<"$M" || echo "$n"; done | tr '\n' ' ')
check "every metric the alerting rules use is one sluiced exports${missing:+ (not: $missing)}" test -z "$missing"

# Reloads: a bad file is counted and leaves the old configuration; the
# next good one, which moves tenant-a to another index, keeps its counters.
echo "kind: Nonsense" >>"$E2E_TMP/metrics.yaml"
"$SLUICECTL" reload --control-socket "$E2E_TMP/ctl.sock" >/dev/null 2>&1
M=$(scrape)
check "a failed reload: config_last_reload_successful 0, one failure counted" \
	bash -c 'grep -q "^sluice_config_last_reload_successful 0$" <<<"$1" && grep -q "^sluice_config_reloads_total{result=\"failure\"} 1$" <<<"$1"' _ "$M"
cp "$CONFIGS/metrics.yaml" "$E2E_TMP/metrics.yaml"
# A schema that sorts before tenant-a (precedence 100) moves every index.
cat >>"$E2E_TMP/metrics.yaml" <<'YAML'
---
apiVersion: sluice/v1
kind: FlowSchema
metadata: {name: first}
spec:
  priorityLevelConfiguration: {name: web}
  matchingPrecedence: 100
  rules:
  - subjects: [{kind: Network, network: {cidrs: [198.18.0.99/32]}}]
    destinations: [{ports: ["8080"]}]
YAML
"$SLUICECTL" reload --control-socket "$E2E_TMP/ctl.sock" >/dev/null
M=$(scrape)
check "a good reload: successful 1, one success counted" \
	bash -c 'grep -q "^sluice_config_last_reload_successful 1$" <<<"$1" && grep -q "^sluice_config_reloads_total{result=\"success\"} 1$" <<<"$1"' _ "$M"
check_num "tenant-a's dispatched count survives the reload that moved its index" \
	"$(value "sluice_dispatched_connections_total{$L}")" -eq "$disp"
load --connect $SRV4 --port 8080 --source 198.18.0.10 --rate 5 --count 3 --timeout 5 >/dev/null
M=$(scrape)
check_num "... and goes on from there (+3)" "$(value "sluice_dispatched_connections_total{$L}")" -eq $((disp + 3))
check "the new schema has no series (nothing happened to it)" bash -c '! grep -q "flow_schema=\"first\"" <<<"$1"' _ "$M"

# ---- the listener against the network (issue 26, item 8) ------------------------
# A probe from this host (the kubelet probes the node's own address)
# connects, then 40 clients from the network connect and say nothing: more
# than the 16 slots.  Each newcomer evicts the client that progressed least
# recently, but one from the network evicts only another from the network:
# the probe keeps its slot and is answered when it asks.
# The listener's port is exempt here, as the Kubernetes example exempts
# 9464: otherwise sluice's catch-all would refuse the flood before it.
cat >>"$E2E_TMP/metrics.yaml" <<'YAML'
---
apiVersion: sluice/v1
kind: FlowSchema
metadata: {name: metrics-port}
spec:
  priorityLevelConfiguration: {name: exempt}
  matchingPrecedence: 50
  rules:
  - subjects: [{kind: Network, network: {cidrs: [198.18.0.0/15]}}]
    destinations: [{ports: ["9466"]}]
YAML
"$SLUICECTL" reload --control-socket "$E2E_TMP/ctl.sock" >/dev/null
exec 5<>"/dev/tcp/$SRV4/9466"
in_cli bash -c 'for i in $(seq 40); do exec {fd}<>/dev/tcp/$1/9466 || exit 1; done; sleep 4' _ $SRV4 &
flood=$!
E2E_PIDS+=($flood)
sleep 1.5
# (a subshell: writing to an evicted probe's socket raises SIGPIPE)
(printf 'GET /healthz HTTP/1.0\r\n\r\n' >&5) 2>/dev/null
probe=$(timeout 3 cat <&5)
exec 5<&-
check "a local probe outlives a flood of 40 idle clients from the network (answered 200)" \
	grep -q "^HTTP/1.1 200" <<<"$probe"
check "... and a new local probe is answered during the flood" curl -sf --max-time 2 "$URL/healthz"
M=$(scrape)
check_num "... the flood evicted its own (clients_evicted_total, metrics)" \
	"$(value 'sluice_clients_evicted_total{listener="metrics"}')" -ge 24
kill "$flood" 2>/dev/null; wait "$flood" 2>/dev/null

# A burst of scrapes renders the page at most once per 10 ms: the rest are
# copies of it.
served0=$(value sluice_metrics_pages_served_total)
rendered0=$(value sluice_metrics_pages_rendered_total)
t0=$(date +%s%N)
curl -s -o /dev/null "$URL/metrics?[1-400]"
sleep 0.05 # past the last page's 10 ms
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
M=$(scrape)
served=$(( $(value sluice_metrics_pages_served_total) - served0 ))
rendered=$(( $(value sluice_metrics_pages_rendered_total) - rendered0 ))
diag "400 scrapes in $ms ms: $rendered pages rendered for $served served"
check_num "400 scrapes in a burst were all served" "$served" -ge 400
check_num "... with at most one render per 10 ms ($ms ms: $((ms / 10 + 2)))" "$rendered" -le $((ms / 10 + 2))

e2e_finish
