#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# sluiced as systemd runs it (Type=notify, WatchdogSec, journald), with
# the service manager's side played by the lab: lab_notify is the
# notification socket, and stderr is the journal stream.  READY=1 comes
# once sluiced protects, RELOADING=1 then READY=1 around a reload,
# STOPPING=1 at the stop; WATCHDOG=1 comes from the main loop, so it
# stops while the loop is stopped.  Under JOURNAL_STREAM every log line is
# "<priority>text", and --log-level filters.
source "$(dirname "$0")/lib.sh"
e2e_init "$@"

NOTIFY=$E2E_TMP/notify.sock
"$LAB_NOTIFY" --socket "$NOTIFY" --duration 60 >"$E2E_TMP/notify.log" &
notify_pid=$!
E2E_PIDS+=($notify_pid)
for _ in $(seq 50); do [ -S "$NOTIFY" ] && break; sleep 0.05; done
: >"$E2E_TMP/sluiced.log"
stream=$(stat -c '%d:%i' "$E2E_TMP/sluiced.log")
# lines MESSAGE: the notifications holding MESSAGE, "MS TEXT" each.
lines() { grep -F -- "$1" "$E2E_TMP/notify.log"; }
# wait_for MESSAGE: up to 5 s for a notification holding it.
wait_for() { for _ in $(seq 100); do lines "$1" >/dev/null && return 0; sleep 0.05; done; return 1; }

NOTIFY_SOCKET=$NOTIFY WATCHDOG_USEC=1000000 JOURNAL_STREAM=$stream \
	start_daemon "$CONFIGS/basic.yaml" --log-level debug || { not_ok "sluiced starts"; e2e_finish; }
ok "sluiced starts with NOTIFY_SOCKET, WATCHDOG_USEC=1000000 and JOURNAL_STREAM"
wait_for "READY=1"
check "READY=1 with a STATUS= that says what it protects" \
	grep -q "READY=1 STATUS=protecting sl0 (XDP native)" "$E2E_TMP/notify.log"
sleep 3
n=$(lines WATCHDOG=1 | wc -l)
check_num "WATCHDOG=1 about every 250 ms (a quarter of WatchdogSec): $n in about 3 s" "$n" -ge 8
gap=$(lines WATCHDOG=1 | awk '{ if (NR > 1 && $1 - p > g) g = $1 - p; p = $1 } END { print g + 0 }')
check_num "... never more than 500 ms apart ($gap ms)" "$gap" -le 500

# A stopped loop feeds nothing: systemd would kill it at WatchdogSec.
before=$(lines WATCHDOG=1 | wc -l)
kill -STOP "$DAEMON_PID"
sleep 1.5
during=$(lines WATCHDOG=1 | wc -l)
kill -CONT "$DAEMON_PID"
check_num "no WATCHDOG=1 while the loop is stopped (1.5 s)" "$((during - before))" -le 1
sleep 0.6
check_num "... and again once it runs" "$(lines WATCHDOG=1 | wc -l)" -gt "$during"

kill -HUP "$DAEMON_PID"
wait_for "RELOADING=1"
check "SIGHUP: RELOADING=1 with MONOTONIC_USEC" bash -c 'grep -Eq "RELOADING=1 MONOTONIC_USEC=[0-9]+ STATUS=reloading" "$1"' _ "$E2E_TMP/notify.log"
for _ in $(seq 100); do [ "$(lines READY=1 | wc -l)" -ge 2 ] && break; sleep 0.05; done
check_num "... then READY=1 again" "$(lines READY=1 | wc -l)" -ge 2
check "... logged as logfmt: event=reload result=ok file=... flow_schemas=N" \
	grep -Eq '^<6>event=reload result=ok file=[^ ]+ reason=sighup levels=[0-9]+ flow_schemas=[0-9]+ policies=0 classification=(kept|compiled) seconds=[0-9.]+$' "$E2E_TMP/sluiced.log"

# Traffic, so that the per-second level report has something to say.
start_service 8080 4 10 || not_ok "service starts"
load --connect $SRV4 --port 8080 --rate 10 --count 3 --timeout 3 >/dev/null
sleep 1.2
stop_daemon
wait_for "STOPPING=1"
check "SIGTERM: STOPPING=1" bash -c 'grep -q "STOPPING=1" "$1"' _ "$E2E_TMP/notify.log"

check "journal stream: every line starts with a syslog priority <3> <4> <6> or <7>" \
	bash -c '[ -s "$1" ] && ! grep -Evq "^<[3467]>" "$1"' _ "$E2E_TMP/sluiced.log"
check "journal stream: no timestamp and no 'sluiced: info:' (journald has both)" \
	bash -c '! grep -Eq "^<[0-9]>([0-9]{4}-|sluiced: )" "$1"' _ "$E2E_TMP/sluiced.log"
check "--log-level debug: the per-second level report is at debug (<7>)" \
	grep -Eq '^<7>level [a-z-]+: seats ' "$E2E_TMP/sluiced.log"

# --log-level warning: the info lines go, and outside the journal each
# line has its time and level.
mv "$E2E_TMP/sluiced.log" "$E2E_TMP/sluiced-journal.log"
start_daemon "$CONFIGS/basic.yaml" --log-level warning || { not_ok "sluiced starts again"; e2e_finish; }
kill -HUP "$DAEMON_PID"
sleep 1
stop_daemon
check "--log-level warning: no info line, not even the reload's" \
	bash -c '! grep -q ": info: " "$1" && ! grep -q "event=reload" "$1"' _ "$E2E_TMP/sluiced.log"
check "sluiced --log-level bogus: a usage error that names the levels" \
	bash -c '"$1" --config "$2" --log-level bogus 2>&1 | grep -q "not error, warning, info or debug"; [ "${PIPESTATUS[0]}" = 2 ]' _ "$SLUICED" "$CONFIGS/basic.yaml"

e2e_finish
