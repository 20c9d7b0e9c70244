#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Restarts: what a stop, a crash and a start do to the seats.
#  - Connections that close while no sock_ops program watches them (a
#    SIGTERM with --keep-maps, then a start) give their seats back when the
#    daemon starts: it reconciles sl_conns with the kernel's sockets.
#  - The new XDP program never runs on the dead daemon's heartbeat: the
#    daemon writes its own before it attaches.
source "$(dirname "$0")/lib.sh"
e2e_init "$@"

# Every connection holds its seat 4 s: long enough to outlive the daemon.
start_service 8080 16 4000 || { not_ok "lab service starts"; e2e_finish; }
start_daemon "$CONFIGS/basic.yaml" --keep-maps || { not_ok "sluiced starts"; e2e_finish; }

# What the daemon leaves on disk is its own: pin directories 0700, pins
# 0600, the control socket 0600.
check "pin directory 0700" test "$(stat -c %a "$PIN_DIR")" = 700
check "maps directory 0700" test "$(stat -c %a "$PIN_DIR/maps")" = 700
check "every pin 0600, owned by root" bash -c \
	'[ -z "$(find "$1" -mindepth 2 -type f \( ! -perm 0600 -o ! -user root \))" ] && [ -n "$(find "$1" -mindepth 2 -type f)" ]' _ "$PIN_DIR"
check "control socket 0600" test "$(stat -c %a "$E2E_TMP/ctl.sock")" = 600

in_cli "$LAB_LOAD" --connect $SRV4 --port 8080 --rate 100 --count 3 --timeout 10 --json --quiet \
	>"$E2E_TMP/held.json" &
held=$!
check "three connections hold web's seats" wait_level_field web seats_in_use 3 3
check "they are established" bash -c '"$1" conns --pin-dir "$2" --json | jq -e "[.conns[] | select(.state == \"established\")] | length == 3" >/dev/null' _ "$SLUICECTL" "$PIN_DIR"

# A planned stop that keeps the maps: nothing watches the connections close.
check "SIGTERM with --keep-maps" stop_daemon
wait "$held"
check_num "the connections were served while the daemon was down" "$(jq .ok "$E2E_TMP/held.json")" -eq 3
check_num "closed unseen: their seats are still counted in the kept maps" "$(level_field web seats_in_use)" -eq 3
check_num "closed unseen: sl_conns still lists them" \
	"$("$SLUICECTL" conns --pin-dir "$PIN_DIR" --json | jq .total)" -eq 3

# The start watches who writes the heartbeat while the XDP program changes.
old_prog=$(ip -j link show sl0 | jq -r '.[0].xdp.prog.id // 0')
check "the stopped daemon left no XDP program" test "$old_prog" = 0
start_daemon "$CONFIGS/basic.yaml" --keep-maps || { not_ok "sluiced starts again"; e2e_finish; }
check_num "on start, the seats of connections the kernel no longer has come back" "$(level_field web seats_in_use)" -eq 0
check_num "and sl_conns is empty" "$("$SLUICECTL" conns --pin-dir "$PIN_DIR" --json | jq .total)" -eq 0
check "the daemon says what it released" grep -q "on start: released 3 connections" "$E2E_TMP/sluiced.log"
r=$(load --connect $SRV4 --port 8080 --rate 100 --count 4 --timeout 8)
check_num "the level's four seats are all usable again" "$(jq .ok <<<"$r")" -eq 4

# Crash, then start while a watcher samples (XDP program id, heartbeat
# pid) as fast as it can: once a new program is attached, the heartbeat it
# reads is always the new daemon's.
kill_daemon_hard
crashed_prog=$(ip -j link show sl0 | jq -r '.[0].xdp.prog.id // 0')
check "after kill -9 the old program stays attached" test "$crashed_prog" != 0
(
	end=$(( $(date +%s) + 8 ))
	while [ "$(date +%s)" -lt "$end" ]; do
		p=$(ip -j link show sl0 | jq -r '.[0].xdp.prog.id // 0')
		h=$("$SLUICECTL" status --pin-dir "$PIN_DIR" --json 2>/dev/null | jq -r '.daemon_pid // 0')
		echo "$p $h"
	done
) >"$E2E_TMP/watch.txt" &
watcher=$!
sleep 0.3
start_daemon "$CONFIGS/basic.yaml" --keep-maps || not_ok "sluiced starts after the crash"
new_pid=$DAEMON_PID
wait "$watcher"
new_seen=$(awk -v old="$crashed_prog" '$1 != old && $1 != 0' "$E2E_TMP/watch.txt" | wc -l)
check_num "the watcher saw the new program attached" "$new_seen" -ge 1
check_num "never with the dead daemon's heartbeat" \
	"$(awk -v old="$crashed_prog" -v pid="$new_pid" '$1 != old && $1 != 0 && $2 != pid' "$E2E_TMP/watch.txt" | wc -l)" -eq 0
check_num "seats are 0 after the crash and start" "$(level_field web seats_in_use)" -eq 0

# Privileges: once started, only CAP_BPF (39) and CAP_NET_ADMIN (12) remain,
# in every set, and NoNewPrivs is on.  Everything above (reconcile, reload,
# restart) ran that way.
want=$(printf '%016x' $(( (1 << 39) | (1 << 12) )))
st=/proc/$DAEMON_PID/status
check "CapEff is CAP_BPF + CAP_NET_ADMIN" grep -q "^CapEff:[[:space:]]*$want$" "$st"
check "CapPrm too" grep -q "^CapPrm:[[:space:]]*$want$" "$st"
check "CapBnd too (nothing can regain the rest)" grep -q "^CapBnd:[[:space:]]*$want$" "$st"
check "CapInh and CapAmb are empty" bash -c "grep -q '^CapInh:[[:space:]]*0*$' $st && grep -q '^CapAmb:[[:space:]]*0*$' $st"
check "NoNewPrivs is set" grep -q "^NoNewPrivs:[[:space:]]*1$" "$st"
r=$("$SLUICECTL" reload --control-socket "$E2E_TMP/ctl.sock")
check "a reload works without the dropped capabilities" grep -q "reloaded" <<<"$r"
r=$(load --connect $SRV4 --port 8080 --rate 100 --count 2 --timeout 8)
check_num "and admission too" "$(jq .ok <<<"$r")" -eq 2
check "clean stop (detach and unpin without them)" stop_daemon
check "nothing left attached" bash -c "! ip link show sl0 | grep -q 'prog/xdp'"
# A planned restart that leaves the programs attached (--keep-attached):
# while no daemon runs, admission goes on within the limits (no deferral,
# then the failsafe) and sock_ops still returns the seats of closes.
start_daemon "$CONFIGS/basic.yaml" --keep-attached || not_ok "sluiced --keep-attached starts"
in_cli "$LAB_LOAD" --connect $SRV4 --port 8080 --rate 100 --count 2 --timeout 10 --json --quiet \
	>"$E2E_TMP/held2.json" &
held=$!
check "two connections hold seats" wait_level_field web seats_in_use 2 3
prog=$(ip -j link show sl0 | jq -r '.[0].xdp.prog.id // 0')
check "SIGTERM with --keep-attached" stop_daemon
check "XDP stays attached: the same program" test "$(ip -j link show sl0 | jq -r '.[0].xdp.prog.id // 0')" = "$prog"
check "the sock_ops link stays pinned" test -e "$PIN_DIR/links/sockops"
check "the log says so" grep -q "XDP and sock_ops left attached" "$E2E_TMP/sluiced.log"
wait "$held"
check_num "the held connections were served" "$(jq .ok "$E2E_TMP/held2.json")" -eq 2
check "their closes returned the seats with no daemon running" wait_level_field web seats_in_use 0 3
r=$(load --connect $SRV4 --port 8080 --rate 100 --count 2 --timeout 8)
check_num "new connections are admitted meanwhile" "$(jq .ok <<<"$r")" -eq 2
check "and their seats come back too" wait_level_field web seats_in_use 0 3
start_daemon "$CONFIGS/basic.yaml" --keep-attached || not_ok "sluiced starts on the attached programs"
check "the new daemon replaced the program" test "$(ip -j link show sl0 | jq -r '.[0].xdp.prog.id // 0')" != "$prog"
check_num "nothing was left to reconcile" "$(grep -c 'on start: released' "$E2E_TMP/sluiced.log")" -eq 1
stop_daemon
# Stop for good (no --keep-attached): everything goes.
start_daemon "$CONFIGS/basic.yaml" || not_ok "sluiced starts without --keep-attached"
check "a stop without it detaches" stop_daemon
check "nothing attached" bash -c "! ip link show sl0 | grep -q 'prog/xdp'"
check "no link pinned" test ! -e "$PIN_DIR/links/sockops"

start_daemon "$CONFIGS/basic.yaml" --keep-privileges || not_ok "sluiced --keep-privileges starts"
check "--keep-privileges keeps CAP_SYS_ADMIN (21)" bash -c \
	"v=\$(awk '/^CapEff:/ {print \$2}' /proc/$DAEMON_PID/status); (( (0x\$v >> 21) & 1 ))"

check "clean stop" stop_daemon
e2e_finish
