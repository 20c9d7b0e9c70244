#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# A package upgrade across a map ABI change: the running data path was
# pinned by a sluiced of another ABI, whose maps this one cannot read.
#  - It starts the ledger afresh: says so, drops the foreign pins, pins
#    maps of its own ABI, and replaces the attached program (which kept
#    serving until then): it never refuses to start, as it did when it
#    tried to adopt maps of another layout.
#  - A restart of the same ABI still adopts the maps and their counts.
# The foreign ABI is made by rewriting abi_version in the pinned sl_config
# (at the offset every ABI keeps, SLUICE_SETTINGS_ABI_OFFSET).
source "$(dirname "$0")/lib.sh"
e2e_init "$@"

CFG_PIN=$PIN_DIR/maps/sl_config
ABI_OFF=24
syns() { status_json | jq -r '.stats.syns'; }
xdp_id() { ip -j link show sl0 | jq -r '.[0].xdp.prog.id // 0'; }
# The pinned sl_config's value as bytes (bpftool prints "0x0e").
HEX='def hex: ltrimstr("0x") | explode |
	reduce .[] as $c (0; . * 16 + (if $c >= 97 then $c - 87 elif $c >= 65 then $c - 55 else $c - 48 end));'
# pinned_abi: the abi_version the pinned sl_config holds.
pinned_abi() {
	bpftool -j map lookup pinned "$CFG_PIN" key 0 0 0 0 |
		jq -r --argjson o "$ABI_OFF" "$HEX"' .value[$o:$o + 4] | map(hex) |
			.[0] + 256 * .[1] + 65536 * .[2] + 16777216 * .[3]'
}
# set_pinned_abi N: what a sluiced of map ABI N would have left.
set_pinned_abi() {
	local bytes
	bytes=$(bpftool -j map lookup pinned "$CFG_PIN" key 0 0 0 0 |
		jq -r --argjson o "$ABI_OFF" --argjson n "$1" "$HEX"' .value | map(hex) |
			.[$o] = ($n % 256) | .[$o + 1] = (($n / 256 | floor) % 256) |
			.[$o + 2] = 0 | .[$o + 3] = 0 | map(tostring) | join(" ")')
	# shellcheck disable=SC2086 # one argument per byte
	bpftool map update pinned "$CFG_PIN" key 0 0 0 0 value $bytes
}

start_service 8080 16 0 || { not_ok "lab service starts"; e2e_finish; }
start_daemon "$CONFIGS/basic.yaml" --keep-attached || { not_ok "sluiced starts"; e2e_finish; }
r=$(load --connect $SRV4 --port 8080 --rate 200 --count 40 --timeout 5)
check_num "40 connections served" "$(jq .ok <<<"$r")" -eq 40
ABI=$("$SLUICECTL" --version --json | jq .abi)
check_num "the pinned sl_config says this build's ABI ($ABI)" "$(pinned_abi)" -eq "$ABI"
s0=$(syns)
check_num "the data path counted their SYNs" "$s0" -ge 40

# ---- the same ABI: adopted --------------------------------------------------------------
check "a planned stop (--keep-attached)" stop_daemon
old=$(xdp_id)
check "the program stays attached" test "$old" != 0
start_daemon "$CONFIGS/basic.yaml" --keep-attached || { not_ok "sluiced starts again"; e2e_finish; }
check "the same ABI: the maps are adopted" grep -q "adopted [0-9]* pinned maps" "$E2E_TMP/sluiced.log"
check_num "... and their counts kept" "$(syns)" -ge "$s0"

# ---- another ABI: afresh -----------------------------------------------------------------
check "a planned stop again" stop_daemon
old=$(xdp_id)
set_pinned_abi 13
check_num "the pinned maps now say ABI 13" "$(pinned_abi)" -eq 13
out=$("$SLUICECTL" status --pin-dir "$PIN_DIR" 2>&1 >/dev/null); rc=$?
check "sluicectl will not read maps of another ABI (exit $rc)" test "$rc" -ne 0
check "... and says whose they are" grep -q "map ABI 13; this build reads ABI $ABI" <<<"$out"
: >"$E2E_TMP/sluiced.log"
# The old program serves while the new daemon starts.
r=$(load --connect $SRV4 --port 8080 --rate 200 --count 10 --timeout 5)
check_num "the foreign data path still serves (no daemon: its failsafe)" "$(jq .ok <<<"$r")" -eq 10
start_daemon "$CONFIGS/basic.yaml" --keep-attached ||
	{ not_ok "sluiced starts over maps of another ABI"; e2e_finish; }
ok "sluiced starts over maps of another ABI"
check "it says why it starts the ledger afresh" grep -q "are of map ABI 13 and this sluiced is ABI" "$E2E_TMP/sluiced.log"
check "it adopted nothing" bash -c '! grep -q "adopted [0-9]* pinned maps" "$1"' _ "$E2E_TMP/sluiced.log"
check_num "fresh maps: the old counts are gone" "$(syns)" -lt "$s0"
check_num "the pins hold this build's ABI again" "$(pinned_abi)" -eq "$ABI"
new=$(xdp_id)
check "its own program replaced the old one" test "$new" != 0 -a "$new" != "$old"
r=$(load --connect $SRV4 --port 8080 --rate 200 --count 40 --timeout 5)
check_num "40 connections served by the new data path" "$(jq .ok <<<"$r")" -eq 40
check_num "... and counted in the new maps" "$(syns)" -ge 40
check_num "... seats all back" "$(level_field web seats_in_use)" -eq 0
e2e_finish
