#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# No local client can crash or stall the daemon: clients of the control
# socket and of the metrics listener that hang up before their answer,
# trickle their request, never read a megabytes-long answer, or sit silent
# in every slot.  While they do, the heartbeat never ages past the
# dispatch timeout (the data path keeps deferring to a live daemon) and
# well-behaved clients still get their answers.  Also: requests match
# exactly, and the control socket's directory must be the daemon's own.
source "$(dirname "$0")/lib.sh"
e2e_init "$@"

SOCK=$E2E_TMP/ctl.sock
METRICS=127.0.0.1:9464
SCRAPE='GET /metrics HTTP/1.0\r\n\r\n'
DISPATCH_MS=300 # 3 ticks of 100 ms (configs/clients.yaml)

start_service 8080 8 100 || { not_ok "lab service starts"; e2e_finish; }
start_daemon "$CONFIGS/clients.yaml" || { not_ok "sluiced starts"; e2e_finish; }
ok "sluiced starts (control socket and metrics listener)"
check_num "dispatch timeout published: 3 ticks" "$(status_json | jq .dispatch_timeout_ms)" -eq $DISPATCH_MS

alive() { kill -0 "$DAEMON_PID" 2>/dev/null; }
levels_ok() { "$SLUICECTL" levels --control-socket "$SOCK" --json | jq -e '.levels | length > 0' >/dev/null; }

# ---- clients that hang up before their answer (SIGPIPE) --------------------
for _ in 1 2 3; do
	"$LAB_PEER" --unix "$SOCK" --send 'queues\n' --mode hangup --clients 50 >/dev/null
done
sleep 0.3
check "150 control clients hung up before their answer: sluiced is alive" alive
check "... and answers the next request" levels_ok
for _ in 1 2 3; do
	"$LAB_PEER" --tcp "$METRICS" --send "$SCRAPE" --mode hangup --clients 50 >/dev/null
done
sleep 0.3
check "150 scrapers hung up before their answer: sluiced is alive" alive

# ---- a megabytes-long answer nobody reads -----------------------------------
"$LAB_PEER" --unix "$SOCK" --send 'queues\n' --mode noread --clients 4 --hold 7 >/dev/null &
E2E_PIDS+=($!)
max=$(hb_max_age 6)
check_num "4 clients never read their queues dump: heartbeat age stays under the dispatch timeout (ms)" \
	"$max" -lt $DISPATCH_MS
n=$("$SLUICECTL" queues --control-socket "$SOCK" --json | jq '.queues | length')
check_num "a client that reads gets the whole dump (20000 queues)" "$n" -eq 20000

# ---- requests trickled a byte every 0.9 s --------------------------------------
"$LAB_PEER" --unix "$SOCK" --send 'levels\n' --trickle-ms 900 --hold 9 --json >"$E2E_TMP/trickle-ctl.json" &
t1=$!
"$LAB_PEER" --tcp "$METRICS" --send "$SCRAPE" --trickle-ms 900 --hold 9 --json >"$E2E_TMP/trickle-metrics.json" &
t2=$!
E2E_PIDS+=($t1 $t2)
max=$(hb_max_age 6)
check_num "requests trickled to both listeners: heartbeat age stays under the dispatch timeout (ms)" \
	"$max" -lt $DISPATCH_MS
wait $t1 $t2
check_num "the control trickler was dropped at its request deadline (no answer)" \
	"$(jq .answered "$E2E_TMP/trickle-ctl.json")" -eq 0
check_num "the metrics trickler was dropped at its request deadline (no answer)" \
	"$(jq .answered "$E2E_TMP/trickle-metrics.json")" -eq 0

# ---- silent clients in every slot ---------------------------------------------
"$LAB_PEER" --unix "$SOCK" --mode silent --clients 64 --hold 8 >/dev/null &
E2E_PIDS+=($!)
"$LAB_PEER" --tcp "$METRICS" --mode silent --clients 64 --hold 8 >/dev/null &
E2E_PIDS+=($!)
sleep 0.5
good=0
for _ in $(seq 10); do levels_ok && good=$((good + 1)); done
check_num "64 silent control clients: 10 of 10 sluicectl requests answered" "$good" -eq 10
r=$("$LAB_PEER" --tcp "$METRICS" --send "$SCRAPE" --clients 10 --json)
check_num "64 silent scrapers: 10 of 10 real scrapes answered" "$(jq .answered <<<"$r")" -eq 10
max=$(hb_max_age 2)
check_num "... heartbeat age under the dispatch timeout meanwhile (ms)" "$max" -lt $DISPATCH_MS
body=$("$LAB_PEER" --tcp "$METRICS" --send "$SCRAPE" --print)
check "a scrape is a whole exposition (sluice_up 1)" grep -q '^sluice_up 1' <<<"$body"
check "evicted control clients are counted" \
	grep -qE '^sluice_clients_evicted_total\{listener="control"\} [1-9]' <<<"$body"
check "evicted scrapers are counted" \
	grep -qE '^sluice_clients_evicted_total\{listener="metrics"\} [1-9]' <<<"$body"
check "trickled requests are counted as timed out" \
	grep -qE '^sluice_clients_timed_out_total\{listener="metrics"\} [1-9]' <<<"$body"

# ---- requests match exactly ------------------------------------------------------
ans() { "$LAB_PEER" --unix "$SOCK" --send "$1\\n" --print; }
check "'levelsx' is an unknown request, not 'levels'" \
	jq -e '.ok == false and (.message | test("unknown request"))' <<<"$(ans levelsx)"
check "'reloadx' does not reload" \
	jq -e '.ok == false and (.message | test("unknown request"))' <<<"$(ans reloadx)"
check "'controller x': no argument allowed" \
	jq -e '.ok == false and (.message | test("no argument"))' <<<"$(ans 'controller x')"
check "'shadow maybe': on or off" jq -e '.ok == false and (.message | test("on\" or"))' <<<"$(ans 'shadow maybe')"
check "'levels web' still answers the level" jq -e '.levels | length == 1' <<<"$(ans 'levels web')"
check_num "no reload happened" "$(grep -c 'event=reload_started' "$E2E_TMP/sluiced.log")" -eq 0

# ---- the control socket's directory ------------------------------------------------
refused() { # DESCRIPTION PATTERN CONTROL_PATH
	local log=$E2E_TMP/refused.log rc
	timeout 20 "$SLUICED" --config "$CONFIGS/clients.yaml" --iface sl0 --pin-dir /sys/fs/bpf/other \
		--control-socket "$3" >"$log" 2>&1
	rc=$?
	if [ $rc -eq 1 ] && grep -q "$2" "$log" && [ ! -e /sys/fs/bpf/other ]; then
		ok "$1"
	else
		not_ok "$1 (exit $rc)"; sed 's/^/#   /' "$log"
	fi
}
mkdir -m 0777 "$E2E_TMP/open"
refused "a world-writable socket directory is refused before anything is loaded" \
	"must belong to uid 0 and be writable by nobody else" "$E2E_TMP/open/ctl.sock"
mkdir -m 0700 "$E2E_TMP/theirs" && chown 65534 "$E2E_TMP/theirs"
refused "a directory owned by another user is refused" "owned by uid 65534" "$E2E_TMP/theirs/ctl.sock"
mkdir -m 0700 "$E2E_TMP/mine" && touch "$E2E_TMP/mine/file"
refused "a regular file at the socket path is not replaced" "exists and is not a socket" "$E2E_TMP/mine/file"
check "... and is still there" test -f "$E2E_TMP/mine/file"
refused "a live daemon's socket is not taken over" "another daemon is listening" "$SOCK"
check "the running daemon still answers" levels_ok
check "the running daemon is still dispatching" jq -e '.dispatching' <<<"$(status_json)"

check "clean stop" stop_daemon
check "control socket removed" test ! -e "$SOCK"
e2e_finish
