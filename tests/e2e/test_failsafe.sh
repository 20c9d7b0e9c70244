#!/usr/bin/env bash
# Fail safe: when the daemon dies, the data path must not black-hole the
# service.  After kill -9 the heartbeat goes stale and new connections pass
# (fail open), or are held back (fail closed) if so configured.  A restarted
# daemon adopts the pinned maps and keeps counting seats.
source "$(dirname "$0")/lib.sh"
e2e_init "$@"

write_cfg() { # FAIL_MODE
	cat >"$E2E_TMP/fs.yaml" <<YAML
apiVersion: sluice/v1
kind: Server
metadata: {name: lab}
spec:
  serverConcurrencyLimit: 2   # web: ceil(2 x 30 / 35) = 2 seats
  failMode: $1
  heartbeatTimeout: 1s
  tick: 50ms
---
apiVersion: sluice/v1
kind: PriorityLevelConfiguration
metadata: {name: web}
spec:
  type: Limited
  limited: {limitResponse: {type: Reject}}
---
apiVersion: sluice/v1
kind: FlowSchema
metadata: {name: web}
spec:
  priorityLevelConfiguration: {name: web}
  rules:
  - subjects: [{kind: Network, network: {cidrs: [0.0.0.0/0, "::/0"]}}]
    destinations: [{ports: ["8080"]}]
YAML
}

start_service 8080 16 1500 || { not_ok "lab service starts"; e2e_finish; }
write_cfg open
start_daemon "$E2E_TMP/fs.yaml" || { not_ok "sluiced starts"; e2e_finish; }
ok "sluiced starts (fail open, heartbeat timeout 1s)"

in_cli "$LAB_LOAD" --connect $SRV4 --port 8080 --rate 100 --count 2 --timeout 5 --json --quiet >/dev/null &
E2E_PIDS+=($!)
wait_level_field web seats_in_use 2 3
r=$(load --connect $SRV4 --port 8080 --rate 50 --count 2 --timeout 2)
check_num "while the daemon lives, over-limit connects are refused" "$(jq .refused <<<"$r")" -eq 2
check "failsafe inactive while the heartbeat is fresh" \
	bash -c "[ \"\$($SLUICECTL status --pin-dir $PIN_DIR --json | jq .failsafe.active)\" = false ]"

kill_daemon_hard
sleep 1.3
check "failsafe reported active once the heartbeat is stale" \
	bash -c "[ \"\$($SLUICECTL status --pin-dir $PIN_DIR --json | jq .failsafe.active)\" = true ]"
check "XDP program still attached after kill -9" bash -c "ip link show sl0 | grep -q 'prog/xdp'"
r=$(load --connect $SRV4 --port 8080 --rate 50 --count 4 --timeout 5)
check_num "daemon dead: over-limit connections pass (fail open)" "$(jq .ok <<<"$r")" -eq 4
check_num "fail-open decisions counted" "$(status_json | jq .failsafe.opened)" -ge 4
check "seats still returned on close while the daemon is dead" wait_level_field web seats_in_use 0 6

# Restart: the new daemon adopts the pinned maps and takes over its own
# XDP program without --force.
start_daemon "$E2E_TMP/fs.yaml" || not_ok "restarted sluiced adopts the pins"
check "restarted daemon logged the adoption" grep -q "adopted" "$E2E_TMP/sluiced.log"
check_num "counters survived the restart" "$(level_field web rejected)" -ge 2
in_cli "$LAB_LOAD" --connect $SRV4 --port 8080 --rate 100 --count 2 --timeout 5 --json --quiet >/dev/null &
fill=$!
wait_level_field web seats_in_use 2 3
r=$(load --connect $SRV4 --port 8080 --rate 50 --count 2 --timeout 2)
check_num "limits enforced again after the restart" "$(jq .refused <<<"$r")" -eq 2
wait "$fill"
check "seats back to 0" wait_level_field web seats_in_use 0 6
check "clean stop" stop_daemon

# Fail closed: the daemon's death holds new connections back (SYNs dropped).
write_cfg closed
start_daemon "$E2E_TMP/fs.yaml" || { not_ok "sluiced starts (fail closed)"; e2e_finish; }
kill_daemon_hard
sleep 1.3
r=$(load --connect $SRV4 --port 8080 --rate 20 --count 2 --timeout 1.5)
check_num "fail closed: new connections do not get in" "$(jq .ok <<<"$r")" -eq 0
check_num "fail-closed drops counted" "$(status_json | jq .failsafe.closed)" -ge 2
start_daemon "$E2E_TMP/fs.yaml" || not_ok "restart after fail-closed"
r=$(load --connect $SRV4 --port 8080 --rate 20 --count 2 --timeout 5)
check_num "daemon back: connections admitted again" "$(jq .ok <<<"$r")" -eq 2
check "clean stop" stop_daemon
check "nothing pinned after the clean stop" bash -c "[ ! -e $PIN_DIR ]"

e2e_finish
