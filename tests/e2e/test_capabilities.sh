#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# sluiced with exactly the capabilities its systemd unit grants
# (CapabilityBoundingSet, as systemd applies it to a root service: setpriv
# --bounding-set before the exec), and with one fewer: it protects, defers
# and re-injects, reloads, and stops cleanly with the unit's set; once
# started it holds only CAP_BPF and CAP_NET_ADMIN; without one it needs at
# start it refuses to start, saying what failed, and leaves nothing behind.
source "$(dirname "$0")/lib.sh"
e2e_init "$@"

UNIT=$E2E_ROOT/configs/systemd/sluiced.service.in
unit_caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT")
# "CAP_BPF CAP_NET_ADMIN" -> "-all,+bpf,+net_admin" (setpriv's spelling).
bset() { local s=-all c; for c in "$@"; do c=${c#CAP_}; s+=",+${c,,}"; done; echo "$s"; }
cap_bit() { case $1 in CAP_NET_ADMIN) echo 12;; CAP_NET_RAW) echo 13;; CAP_SYS_ADMIN) echo 21;; CAP_BPF) echo 39;; CAP_PERFMON) echo 38;; CAP_SETPCAP) echo 8;; *) echo 99;; esac; }
# mask CAP...: the capability mask as /proc/PID/status writes it.
mask() { local m=0 c; for c in "$@"; do m=$((m | (1 << $(cap_bit "$c")))); done; printf '%016x' "$m"; }
diag "the unit's CapabilityBoundingSet: $unit_caps"
check "the unit names its capabilities" test -n "$unit_caps"

cp "$CONFIGS/held.yaml" "$E2E_TMP/held.yaml"
start_service 8080 8 100 || { not_ok "service starts"; e2e_finish; }
# shellcheck disable=SC2086
SLUICED_WRAP=(setpriv --bounding-set="$(bset $unit_caps)" --inh-caps=-all --)
start_daemon "$E2E_TMP/held.yaml" || { not_ok "sluiced starts with only the unit's capabilities"; e2e_finish; }
ok "sluiced starts with only the unit's capabilities ($unit_caps)"
SLUICED_WRAP=()
eff=$(awk '/^CapEff:/ { print $2 }' "/proc/$DAEMON_PID/status")
prm=$(awk '/^CapPrm:/ { print $2 }' "/proc/$DAEMON_PID/status")
bnd=$(awk '/^CapBnd:/ { print $2 }' "/proc/$DAEMON_PID/status")
check "once started it holds CAP_BPF and CAP_NET_ADMIN only (CapEff $eff, CapPrm $prm)" \
	test "$eff" = "$(mask CAP_BPF CAP_NET_ADMIN)" -a "$prm" = "$(mask CAP_BPF CAP_NET_ADMIN)"
# Without CAP_SETPCAP the bounding set stays the unit's; NoNewPrivs keeps an
# exec from gaining what is not permitted anyway.
# shellcheck disable=SC2086
check "... within the unit's bounding set (CapBnd $bnd)" \
	test $(( 0x$bnd & ~0x$(mask $unit_caps) )) -eq 0
check "NoNewPrivs is set" grep -Eq '^NoNewPrivs:[[:space:]]+1' "/proc/$DAEMON_PID/status"

# 8 seats, 100 ms each: 60 connections at 120/s wait in the queue, their
# SYNs held and re-injected (through the packet socket opened at start)
# under the capabilities that remain.
r=$(load --connect $SRV4 --port 8080 --rate 120 --count 60 --duration 2 --timeout 8)
check_num "a burst past the limit completes: every connection served" "$(jq .ok <<<"$r")" -eq 60
lv=$("$SLUICECTL" levels web --control-socket "$E2E_TMP/ctl.sock" --json)
check_num "... through the queue, held SYNs re-injected" "$(jq '.levels[0].reinjected' <<<"$lv")" -gt 0
check "a reload under the remaining capabilities succeeds" "$SLUICECTL" reload --control-socket "$E2E_TMP/ctl.sock"
check "sluicectl status reads the pins" bash -c '"$1" status --pin-dir "$2" --json | jq -e .configured >/dev/null' _ "$SLUICECTL" "$PIN_DIR"
check "SIGTERM: a clean stop" stop_daemon
check "... that removed its pins" bash -c '! ls "$1"/progs/* >/dev/null 2>&1' _ "$PIN_DIR"
check "... and detached XDP from sl0" bash -c '! ip -d link show sl0 | grep -q "prog/xdp"'

# One fewer: each capability of the unit is needed at start.
for c in $unit_caps; do
	rest=()
	for o in $unit_caps; do [ "$o" = "$c" ] || rest+=("$o"); done
	: >"$E2E_TMP/sluiced.log"
	setpriv --bounding-set="$(bset "${rest[@]}")" --inh-caps=-all -- "$SLUICED" --config "$E2E_TMP/held.yaml" \
		--iface sl0 --pin-dir "$PIN_DIR" --control-socket "$E2E_TMP/ctl.sock" >"$E2E_TMP/sluiced.log" 2>&1 &
	pid=$!
	for _ in $(seq 100); do kill -0 $pid 2>/dev/null || break; sleep 0.05; done
	if kill -0 $pid 2>/dev/null; then
		not_ok "without $c sluiced still runs: the unit grants more than it needs"
		kill $pid; wait $pid 2>/dev/null
	else
		wait $pid; rc=$?
		diag "without $c: $(grep -E 'error' "$E2E_TMP/sluiced.log" | head -2 | tr '\n' ' ')"
		check "without $c: start-up fails (rc $rc) with an error line" \
			bash -c '[ "$1" != 0 ] && grep -q "error" "$2"' _ "$rc" "$E2E_TMP/sluiced.log"
		check "without $c: nothing left attached or pinned" \
			bash -c '! ip -d link show sl0 | grep -q "prog/xdp" && ! ls "$1"/progs/* >/dev/null 2>&1' _ "$PIN_DIR"
	fi
done

e2e_finish
