#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Fail safe: when the daemon dies, the data path must not black-hole the
# service.  After kill -9 the heartbeat goes stale and new connections pass
# (fail open), are held back (fail closed), or are held to each level's
# limit by the kernel alone (fail static) if so configured.  A restarted
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
  handshakeTimeout: 2s
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

# ---- fail static: the kernel keeps the limit with no daemon --------------------
# A flood of SYNs from a network whose answers are prohibited (the kernel
# keeps their requests: half-open for good) while the daemon is dead.
# Fail open would seat all of them; fail static admits two (the limit) and
# refuses the rest (a Reject level), and the kernel's own sweep expires the
# two abandoned handshakes after handshakeTimeout (2 s), so the level opens
# again with no daemon and real clients get in, never above the limit.
write_cfg static
start_daemon "$E2E_TMP/fs.yaml" || { not_ok "sluiced starts (fail static)"; e2e_finish; }
kill_daemon_hard
sleep 1.3
check "fail static: status names the mode" jq -e '.failsafe.mode == "static" and .failsafe.active' <<<"$(status_json)"
sent=$(in_cli "$LAB_SYN" --src 198.18.2.1 --sources 40 --dst $SRV4 --dport 8080 --count 40 --rate 400)
check_num "40 SYNs from a prohibited network while the daemon is dead" "$sent" -eq 40
check_num "... seat two (the limit), not forty" "$(level_field web seats_in_use)" -eq 2
check "the kernel expires the two abandoned handshakes (2 s) with no daemon" \
	wait_level_field web seats_in_use 0 5
check_num "... counted as its sweep's (static_expired)" "$(status_json | jq .failsafe.static_expired)" -ge 2
check_num "... a sweep a second on its own timer" "$(status_json | jq .failsafe.static_sweeps)" -ge 2
in_cli "$LAB_LOAD" --connect $SRV4 --port 8080 --rate 20 --count 4 --timeout 5 --json --quiet \
	>"$E2E_TMP/static-clients.json" &
cl=$!
E2E_PIDS+=($cl)
max_seats=0
while kill -0 "$cl" 2>/dev/null; do
	n=$(level_field web seats_in_use)
	[ "${n:-0}" -gt "$max_seats" ] && max_seats=$n
	sleep 0.1
done
wait "$cl"
diag "clients during the outage: $(jq -c '{ok, refused, timeout}' "$E2E_TMP/static-clients.json")"
check_num "real clients are served during the outage (the two seats)" "$(jq .ok "$E2E_TMP/static-clients.json")" -eq 2
check_num "... the others refused by the limit the kernel keeps" "$(jq .refused "$E2E_TMP/static-clients.json")" -eq 2
check_num "... and seats in use never went above the limit" "$max_seats" -le 2
check_num "SYNs judged by the static failsafe counted" "$(status_json | jq .failsafe.static)" -ge 44
start_daemon "$E2E_TMP/fs.yaml" || not_ok "restart after fail-static"
s0=$(status_json | jq .failsafe.static_sweeps)
sleep 2.2
check_num "daemon back: the kernel's sweep stops" "$(status_json | jq .failsafe.static_sweeps)" -le $((s0 + 1))
check "clean stop" stop_daemon

# ---- a crash with connections waiting: no black hole --------------------------
# Deferral needs a daemon to dispatch.  With the daemon dead, the waiting
# count it published stays up; a data path that kept deferring would drop
# every SYN until the failsafe (10 s here).  Within the dispatch timeout
# (3 ticks) it must admit again within the limit.
start_service 8081 8 300 || not_ok "lab service on 8081"
start_daemon "$CONFIGS/crash.yaml" || { not_ok "sluiced starts (crash config)"; e2e_finish; }
# 40 connections in 0.2 s: 8 admitted, the rest deferred and queued; their
# clients give up at 0.8 s, before a retransmit.
in_cli "$LAB_LOAD" --connect $SRV4 --port 8081 --rate 200 --count 40 --timeout 0.8 --json --quiet \
	>/dev/null &
E2E_PIDS+=($!)
waited=0
for _ in $(seq 40); do
	w=$(level_field web waiting)
	[ "${w:-0}" -gt 0 ] && { waited=$w; break; }
	sleep 0.01
done
check_num "connections wait in the daemon's queues" "$waited" -gt 0
kill_daemon_hard
check_num "the dead daemon's waiting count is still published" "$(level_field web waiting)" -gt 0
sleep 1.2 # the old clients are gone; the service is idle
check "no dispatcher reported once the heartbeat is 3 ticks old" jq -e '.dispatching == false' <<<"$(status_json)"
r=$(load --connect $SRV4 --port 8081 --rate 10 --count 5 --timeout 2)
check_num "daemon dead 1.2 s: new connections get in (not black-holed)" "$(jq .ok <<<"$r")" -eq 5
check_num "... without a retransmit (p90 connect < 0.5 s)" "$(jq .connect_ms.p90 <<<"$r")" -lt 500
check_num "... and not by the failsafe (heartbeat 10 s)" "$(status_json | jq .failsafe.opened)" -eq 0
# Over the limit the retransmit is the queue: 16 connections for 8 seats.
before=$(status_json | jq .stats.undispatched)
r=$(load --connect $SRV4 --port 8081 --rate 100 --count 16 --timeout 5)
check_num "no dispatcher, 16 for 8 seats: all served" "$(jq .ok <<<"$r")" -eq 16
check_num "... the limit held: some waited for their retransmit (max connect > 0.9 s)" \
	"$(jq .connect_ms.max <<<"$r")" -gt 900
check_num "... dropped without an event, counted as undispatched" \
	"$(( $(status_json | jq .stats.undispatched) - before ))" -ge 1
check "seats back to 0 with no daemon" wait_level_field web seats_in_use 0 6
start_daemon "$CONFIGS/crash.yaml" || not_ok "restart after the crash"
check "dispatching again after the restart" jq -e '.dispatching' <<<"$(status_json)"
check "clean stop" stop_daemon

# ---- a stop signal during start-up -----------------------------------------------
# Signals are blocked before anything is loaded: a SIGTERM that arrives
# while the data path is being set up waits for the loop, which detaches
# cleanly; it never kills the daemon with its programs attached and pinned.
bad=""
for delay in 0.02 0.05 0.08 0.12 0.16 0.2 0.3; do
	"$SLUICED" --config "$CONFIGS/crash.yaml" --iface sl0 --pin-dir "$PIN_DIR" \
		--control-socket "$E2E_TMP/ctl.sock" >>"$E2E_TMP/startup.log" 2>&1 &
	pid=$!
	sleep "$delay"
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	if [ -e "$PIN_DIR" ] || ip link show sl0 | grep -q 'prog/xdp' || [ -e "$E2E_TMP/ctl.sock" ]; then
		bad+=" ${delay}s(exit $rc)"
		"$SLUICED" --config "$CONFIGS/crash.yaml" --iface sl0 --pin-dir "$PIN_DIR" \
			--control-socket "$E2E_TMP/ctl2.sock" >/dev/null 2>&1 & # adopt, then stop cleanly
		sleep 1; kill -TERM $! 2>/dev/null; wait $! 2>/dev/null
	fi
done
check "SIGTERM during start-up (7 delays) leaves nothing attached or pinned${bad:+: left at$bad}" \
	test -z "$bad"
check "... and the daemon logged a clean detach at least once" grep -q "detaching" "$E2E_TMP/startup.log"

e2e_finish
