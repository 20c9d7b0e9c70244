#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Sharing the interface without freplace (this kernel refuses
# BPF_PROG_TYPE_EXT, so libxdp's dispatcher cannot load), by tail calls,
# Server spec.xdpChain, on the lab's veth with real TCP:
#  - next: sluice on sl0 hands what it passes to a second program
#    (tests/bpf/xdp_count.bpf.c, which counts frames and SYNs): it sees the
#    admitted SYNs, never the ones sluice answers with a RST;
#  - rootArray: a root program owns sl0 (tests/bpf/xdp_root.bpf.c, Katran's
#    shared mode) and sluice takes slot 1 of its array: it protects as
#    before, its stop leaves the slot and the root, and `sluicectl detach`
#    leaves the slot a --keep-attached stop kept; a slot holding someone
#    else's program is refused.
source "$(dirname "$0")/lib.sh"
e2e_init "$@"

LAB=/sys/fs/bpf/lab
mkdir -p "$LAB"
bpftool prog load "$B/tests/xdp_count.bpf.o" "$LAB/count" type xdp pinmaps "$LAB/count_maps" ||
	{ not_ok "load the counting program"; e2e_finish; }
bpftool prog load "$B/tests/xdp_root.bpf.o" "$LAB/root" type xdp pinmaps "$LAB/root_maps" ||
	{ not_ok "load the root program"; e2e_finish; }
seen() { bpftool -j map dump pinned "$LAB/count_maps/count_seen" | jq --argjson k "$1" '.[] | select(.formatted.key == $k) | .formatted.value'; }
slot() { bpftool -j map dump pinned "$LAB/root_maps/root_array" | jq --argjson k "$1" '[.[] | select(.formatted.key == $k) | .formatted.value][0] // 0'; }
xdp_id() { ip -j link show sl0 | jq '.[0].xdp.prog.id // 0'; }
prog_id() { bpftool -j prog show pinned "$1" | jq .id; }
sluice_id() { bpftool -j prog show pinned "$PIN_DIR/progs/sluice_xdp" 2>/dev/null | jq .id; }
with_chain() { # YAML for xdpChain's mapping -> a config file
	awk -v c="$1" '{ print } /^  serverConcurrencyLimit:/ && !done { print "  xdpChain: " c; done = 1 }' \
		"$CONFIGS/basic.yaml" >"$E2E_TMP/chain.yaml"
}
start_service 8080 8 1500 || { not_ok "lab service starts"; e2e_finish; }
fill_and_refuse() { # 4 seats held 1.5 s, then 5 connects: the refused count
	in_cli "$LAB_LOAD" --connect $SRV4 --port 8080 --rate 100 --count 4 --timeout 5 --json --quiet >"$E2E_TMP/fill.json" &
	local fill=$!
	wait_level_field web seats_in_use 4 3
	load --connect $SRV4 --port 8080 --rate 50 --count 5 --timeout 2 | jq .refused
	wait "$fill"
}

# ---- next: sluice owns sl0 and hands on what it passes ----------------------
with_chain "{next: $LAB/count}"
start_daemon "$E2E_TMP/chain.yaml" || { not_ok "sluiced starts with xdpChain.next"; e2e_finish; }
check "sl0 runs sluice's program" test "$(xdp_id)" = "$(sluice_id)"
check "sluice's next slot holds the counting program" \
	bash -c '[ "$(bpftool -j map dump pinned "$1/maps/sl_xdp_next" | jq ".[0].formatted.value")" = "$2" ]' _ "$PIN_DIR" "$(prog_id "$LAB/count")"
s0=$(seen 1)
r=$(load --connect $SRV4 --port 8080 --rate 20 --count 3 --timeout 5)
check_num "3 connections served through the chain" "$(jq .ok <<<"$r")" -eq 3
s1=$(seen 1)
check_num "the next program saw their SYNs ($s0 -> $s1)" "$((s1 - s0))" -ge 3
check_num "... and their other frames" "$(seen 0)" -gt "$s1"
rejected0=$(level_field web rejected)
refused=$(fill_and_refuse)
s2=$(seen 1)
check_num "a full level: 5 refused" "$refused" -eq 5
check_num "... by sluice's RST: the next program saw the 4 admitted SYNs only ($s1 -> $s2)" "$((s2 - s1))" -eq 4
check_num "... (sluice counted the rejections)" "$(( $(level_field web rejected) - rejected0 ))" -ge 5
stop_daemon
check "stopped: XDP off sl0" test "$(xdp_id)" = 0

# ---- rootArray: a root program owns sl0, sluice takes slot 1 ------------------
ip link set dev sl0 xdpdrv pinned "$LAB/root" || not_ok "attach the root program to sl0"
root=$(prog_id "$LAB/root")
with_chain "{rootArray: $LAB/root_maps/root_array, slot: 1, next: $LAB/count}"
start_daemon "$E2E_TMP/chain.yaml" || { not_ok "sluiced starts in the root's array"; e2e_finish; }
check "sl0 still runs the root program ($root), not sluice's" test "$(xdp_id)" = "$root"
check "slot 1 of the root's array holds sluice's program" test "$(slot 1)" = "$(sluice_id)"
s0=$(seen 1)
refused=$(fill_and_refuse)
check_num "in the root's array sluice protects: a full level refuses 5" "$refused" -eq 5
check_num "... and hands on the 4 admitted SYNs ($s0 -> $(seen 1))" "$(( $(seen 1) - s0 ))" -eq 4
stop_daemon
check "stopped: slot 1 is empty, the root still on sl0" test "$(slot 1)" = 0 -a "$(xdp_id)" = "$root"
r=$(load --connect $SRV4 --port 8080 --rate 50 --count 6 --timeout 5)
check_num "... the service reached with nothing but the root in front (6 at once)" "$(jq .ok <<<"$r")" -eq 6

start_daemon "$E2E_TMP/chain.yaml" --keep-attached || not_ok "sluiced starts again"
stop_daemon
check "--keep-attached stop: slot 1 still sluice's" test "$(slot 1)" != 0
j=$("$SLUICECTL" detach --pin-dir "$PIN_DIR" --json)
check "sluicectl detach leaves the slot ($j)" jq -e '.root_slots == 1 and .xdp == [] and .failed == 0' <<<"$j"
check "... slot 1 empty, the root untouched" test "$(slot 1)" = 0 -a "$(xdp_id)" = "$root"

# Someone else's program in the slot: refused, and left alone.
bpftool map update pinned "$LAB/root_maps/root_array" key 1 0 0 0 value pinned "$LAB/count"
: >"$E2E_TMP/sluiced.log"
"$SLUICED" --config "$E2E_TMP/chain.yaml" --iface sl0 --pin-dir "$PIN_DIR" --control-socket "$E2E_TMP/ctl.sock" \
	>>"$E2E_TMP/sluiced.log" 2>&1
check "a slot holding another program: sluiced refuses to start" \
	grep -q "slot 1 holds XDP program id $(prog_id "$LAB/count") that sluice did not put there" "$E2E_TMP/sluiced.log"
check "... and the slot keeps that program" test "$(slot 1)" = "$(prog_id "$LAB/count")"
e2e_finish
