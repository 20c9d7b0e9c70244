#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# End to end, real kernel: XDP on a veth, sock_ops on the cgroup v2 root,
# real TCP over IPv4 and IPv6.  Admission, fast rejection, exact seat
# return, and a clean stop that leaves nothing behind.
source "$(dirname "$0")/lib.sh"
e2e_init "$@"

cp "$CONFIGS/basic.yaml" "$E2E_TMP/basic.yaml" # a copy: the test edits it

start_service 8080 16 1500 || { not_ok "lab service starts"; e2e_finish; }
start_service 9090 4 10 || { not_ok "unprotected service starts"; e2e_finish; }
if ! start_daemon "$E2E_TMP/basic.yaml"; then
	not_ok "sluiced starts and configures the maps"
	e2e_finish
fi
ok "sluiced starts and configures the maps"

check "XDP program attached to sl0" bash -c "ip link show sl0 | grep -q 'prog/xdp'"
check_num "level web limit is the whole budget (4 seats)" "$(level_field web limit)" -eq 4

# Admitted connects succeed, IPv4 and IPv6 (one at a time: seats are few).
r=$(load --connect $SRV4 --port 8080 --rate 20 --count 2 --timeout 5)
check_num "IPv4 connections admitted and served" "$(jq .ok <<<"$r")" -eq 2
r=$(load --connect $SRV6 --port 8080 --rate 20 --count 2 --timeout 5)
check_num "IPv6 connections admitted and served" "$(jq .ok <<<"$r")" -eq 2
wait_level_field web seats_in_use 0 5
check_num "seats back to 0 after those connections closed" "$(level_field web seats_in_use)" -eq 0
check_num "sock_ops saw them established" "$(status_json | jq .stats.established)" -ge 4

# Fill the level (4 seats, each connection held 1.5 s), then the next
# connections are answered with a RST: ECONNREFUSED fast.
in_cli "$LAB_LOAD" --connect $SRV4 --port 8080 --rate 100 --count 4 --timeout 5 --json --quiet \
	>"$E2E_TMP/fill1.json" &
fill=$!
wait_level_field web seats_in_use 4 3
check_num "level filled to its limit" "$(level_field web seats_in_use)" -eq 4
r=$(load --connect $SRV4 --port 8080 --rate 50 --count 5 --timeout 2)
check_num "over the limit: every connect refused" "$(jq .refused <<<"$r")" -eq 5
check_num "over the limit: refused within 50 ms (max)" "$(jq .refused_ms.max <<<"$r")" -lt 50
r6=$(load --connect $SRV6 --port 8080 --rate 50 --count 3 --timeout 2)
check_num "over the limit (IPv6): refused" "$(jq .refused <<<"$r6")" -eq 3
check_num "over the limit (IPv6): refused within 50 ms" "$(jq .refused_ms.max <<<"$r6")" -lt 50
check_num "rejections counted" "$(level_field web rejected)" -ge 8
check_num "seats never exceeded the limit" "$(level_field web seats_in_use)" -le 4
r=$(load --connect $SRV4 --port 9090 --rate 50 --count 5 --timeout 2)
check_num "an exempt port is unaffected while web is full" "$(jq .ok <<<"$r")" -eq 5
c=$("$SLUICECTL" conns --pin-dir "$PIN_DIR" web --json)
check "conns: the 4 connections holding web's seats, established, from the client" \
	jq -e '.total == 4 and ([.conns[] | select(.state == "established" and .seats == 1 and (.client | startswith("198.18.0.2:")) and .local == "198.18.0.1:8080")] | length) == 4' <<<"$c"
check "conns: oldest first, with their age" jq -e '[.conns[].age_ms] | . == (sort | reverse) and all(. > 0)' <<<"$c"
check "conns --limit 1 (table): one row and the count" \
	bash -c '"$1" conns --pin-dir "$2" web --limit 1 | grep -q "(1 of 4 connections)"' _ "$SLUICECTL" "$PIN_DIR"
wait "$fill"
check_num "the 4 filling connections were served" "$(jq .ok "$E2E_TMP/fill1.json")" -eq 4

# Seats come back exactly: fill, close all, fill again.
check "seats return to 0 after close" wait_level_field web seats_in_use 0 5
r=$(load --connect $SRV6 --port 8080 --rate 100 --count 4 --timeout 5)
check_num "level fills again after the seats came back" "$(jq .ok <<<"$r")" -eq 4
check "seats return to 0 again" wait_level_field web seats_in_use 0 5

# A SYN to a protected port with no listener is admitted, never
# establishes (the kernel answers RST), and its seat expires.
sed 's/ports: \["8080"\]/ports: ["8080", "8999"]/; s/handshakeTimeout: 2s/handshakeTimeout: 1s/' \
	"$E2E_TMP/basic.yaml" >"$E2E_TMP/expire.yaml"
cp "$E2E_TMP/expire.yaml" "$E2E_TMP/basic.yaml"
r=$("$SLUICECTL" reload --control-socket "$E2E_TMP/ctl.sock")
check "sluicectl reload applies the new file" grep -q "reloaded" <<<"$r"
r=$(load --connect $SRV4 --port 8999 --rate 50 --count 3 --timeout 2)
check_num "no listener: the kernel refuses" "$(jq .refused <<<"$r")" -eq 3
check_num "half-open connections hold seats" "$(level_field web seats_in_use)" -eq 3
check "their seats expire after handshakeTimeout" wait_level_field web seats_in_use 0 5
check_num "expiries counted" "$(level_field web expired)" -eq 3

# Shadow mode: every verdict counted, none enforced.
check "sluicectl shadow on" "$SLUICECTL" shadow on --control-socket "$E2E_TMP/ctl.sock"
check "status: shadow mode" jq -e '.shadow == true' <<<"$(status_json)"
check "status (table) says so" bash -c '"$1" status --pin-dir "$2" | grep -q "SHADOW MODE"' _ "$SLUICECTL" "$PIN_DIR"
rej0=$(level_field web rejected)
in_cli "$LAB_LOAD" --connect $SRV4 --port 8080 --rate 100 --count 4 --timeout 5 --json --quiet \
	>"$E2E_TMP/fill2.json" &
fill=$!
wait_level_field web seats_in_use 4 3
r=$(load --connect $SRV4 --port 8080 --rate 50 --count 3 --timeout 5)
check_num "shadow: over the limit, connections get in all the same" "$(jq .ok <<<"$r")" -eq 3
check_num "shadow: the RST verdicts are counted" "$(( $(level_field web rejected) - rej0 ))" -eq 3
check_num "shadow: and counted as shadow-passed" "$(status_json | jq '.levels[] | select(.name == "web") | .shadow_passed')" -eq 3
wait "$fill"
check "shadow: their seats came back too (exact accounting above the limit)" wait_level_field web seats_in_use 0 6
check "sluicectl shadow (no argument) reads the mode from the maps" \
	bash -c '"$1" shadow --pin-dir "$2" --json | jq -e ".shadow == true and .shadow_passed == 3"' _ "$SLUICECTL" "$PIN_DIR"
check "sluicectl shadow off" "$SLUICECTL" shadow off --control-socket "$E2E_TMP/ctl.sock"
in_cli "$LAB_LOAD" --connect $SRV4 --port 8080 --rate 100 --count 4 --timeout 5 --json --quiet >/dev/null &
fill=$!
wait_level_field web seats_in_use 4 3
r=$(load --connect $SRV4 --port 8080 --rate 50 --count 2 --timeout 2)
check_num "shadow off: over the limit, refused again" "$(jq .refused <<<"$r")" -eq 2
wait "$fill"
check "sluicectl shadow: a bad argument exits 2" bash -c '"$1" shadow maybe >/dev/null 2>&1; [ $? = 2 ]' _ "$SLUICECTL"

# Clean stop: nothing attached, nothing pinned.  (The cgroup2 root is the
# host's: check for *our* sock_ops program by id, not by name, so another
# sluice running elsewhere on the host cannot confuse the test.)
sockops_id=$(bpftool prog show pinned $PIN_DIR/progs/sluice_sockops -j | jq .id)
check "sluiced stops on SIGTERM" stop_daemon
check "no XDP program left on sl0" bash -c "! ip link show sl0 | grep -q 'prog/xdp'"
check "no pins left in $PIN_DIR" bash -c "[ ! -e $PIN_DIR ]"
cg=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/mounts)
attached=$(bpftool cgroup show "$cg" -j 2>/dev/null | jq -s --argjson id "$sockops_id" '[.[] | .[]? | select(.id == $id)] | length')
check_num "our sock_ops program (id $sockops_id) is no longer attached to $cg" "$attached" -eq 0
r=$(load --connect $SRV4 --port 8080 --rate 100 --count 6 --timeout 5)
check_num "after stop, connections are not limited" "$(jq .ok <<<"$r")" -eq 6

e2e_finish
