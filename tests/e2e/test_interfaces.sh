#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Every interface of Server spec.interfaces is protected, with one set of
# levels and seats: clients through sl0 and through a second link, sl2,
# share the web level's 4 seats.  sluicectl status shows each interface,
# its XDP mode and program id.  A stop detaches from all; a planned
# restart that lists fewer interfaces takes its old program off the
# others.  A configuration that would classify differently per interface
# (a match on the `iface` label) is refused, by validate and by sluiced.
source "$(dirname "$0")/lib.sh"
e2e_init "$@"

# The second link: sl2 (198.18.1.1) here, sl3 (198.18.1.2) in netns sl-cli2.
ip netns add sl-cli2
ip link add sl2 type veth peer name sl3 netns sl-cli2
ip addr add 198.18.1.1/24 dev sl2
ip link set sl2 up
ip -n sl-cli2 addr add 198.18.1.2/24 dev sl3
ip -n sl-cli2 link set lo up
ip -n sl-cli2 link set sl3 up
ip -n sl-cli2 link set dev sl3 xdpdrv obj "$B/tests/xdp_pass.bpf.o" sec xdp # native XDP_TX on veth
trap 'ip netns del sl-cli2 2>/dev/null; e2e_cleanup' EXIT
in_cli2() { ip netns exec sl-cli2 "$@"; }

# basic.yaml (web: 4 seats, Reject, port 8080) on both interfaces.
sed 's/^  serverConcurrencyLimit: 4 /  interfaces: [sl0, sl2]\n&/' "$CONFIGS/basic.yaml" >"$E2E_TMP/two.yaml"
check "the configuration lists both interfaces, and validates" \
	bash -c 'grep -q "interfaces: \[sl0, sl2\]" "$1" && "$2" validate "$1" >/dev/null' _ "$E2E_TMP/two.yaml" "$SLUICECTL"
start_service 8080 8 3000 || { not_ok "service starts"; e2e_finish; }
DAEMON_IFACES=()
start_daemon "$E2E_TMP/two.yaml" || { not_ok "sluiced starts on Server spec.interfaces"; e2e_finish; }
ok "sluiced starts on Server spec.interfaces (no --iface)"
st=$(status_json)
diag "status interfaces: $(jq -c .interfaces <<<"$st")"
check "status: both interfaces, native XDP, the pinned program's id on each" \
	jq -e '(.interfaces | map(.name) | sort) == ["sl0", "sl2"] and all(.interfaces[]; .xdp_mode == "native" and .prog_id > 0) and ([.interfaces[].prog_id] | unique | length) == 1 and .interfaces[0].prog_id == .xdp_prog_id' <<<"$st"
check "status (text): an interfaces line naming both" \
	bash -c '"$1" status --pin-dir "$2" | grep -Eq "^interfaces +sl0 \(native, prog [0-9]+\), sl2 \(native, prog [0-9]+\)$"' _ "$SLUICECTL" "$PIN_DIR"
for link in sl0 sl2; do
	check "ip link: sluice's program is on $link" \
		bash -c '[ "$(ip -j link show "$1" | jq -r ".[0].xdp.prog.id // 0")" = "$2" ]' _ "$link" "$(jq .xdp_prog_id <<<"$st")"
done

# Two long connections through each link hold web's 4 seats; a fifth, from
# either side, is refused: one level, one count.
in_cli "$LAB_LOAD" --connect $SRV4 --port 8080 --rate 50 --count 2 --timeout 10 --json --quiet >"$E2E_TMP/a.json" &
a=$!
in_cli2 "$LAB_LOAD" --connect 198.18.1.1 --port 8080 --rate 50 --count 2 --timeout 10 --json --quiet >"$E2E_TMP/b.json" &
b=$!
check "four connections, two per link, hold web's 4 seats" wait_level_field web seats_in_use 4 3
r=$(in_cli2 "$LAB_LOAD" --connect 198.18.1.1 --port 8080 --rate 10 --count 1 --timeout 3 --json --quiet)
check_num "a fifth through sl2 is refused (RST from XDP on sl2)" "$(jq .refused <<<"$r")" -eq 1
r=$(load --connect $SRV4 --port 8080 --rate 10 --count 1 --timeout 3)
check_num "... and one through sl0 too" "$(jq .refused <<<"$r")" -eq 1
wait $a $b
check_num "the four were served" "$(( $(jq .ok "$E2E_TMP/a.json") + $(jq .ok "$E2E_TMP/b.json") ))" -eq 4
check "their seats came back" wait_level_field web seats_in_use 0 5

# A planned restart that keeps sl0 only: the old program leaves sl2.
stop_daemon
DAEMON_IFACES=(--keep-attached)
start_daemon "$E2E_TMP/two.yaml" || not_ok "sluiced --keep-attached starts"
check "SIGTERM with --keep-attached" stop_daemon
check "... both links keep the program" bash -c '[ "$(ip -j link show sl0 | jq -r ".[0].xdp.prog.id // 0")" != 0 ] && [ "$(ip -j link show sl2 | jq -r ".[0].xdp.prog.id // 0")" != 0 ]'
DAEMON_IFACES=(--iface sl0)
start_daemon "$E2E_TMP/two.yaml" || not_ok "sluiced --iface sl0 starts on the attached program"
check "the new daemon took its old program off sl2, which it no longer lists" \
	bash -c '[ "$(ip -j link show sl2 | jq -r ".[0].xdp.prog.id // 0")" = 0 ]'
check "... and says so" grep -q "detached a previous sluiced's XDP program from sl2" "$E2E_TMP/sluiced.log"
check "status: sl0 only" jq -e '(.interfaces | map(.name)) == ["sl0"]' <<<"$(status_json)"
check "clean stop" stop_daemon
check "nothing left on either link" \
	bash -c '! ip -d link show sl0 | grep -q "prog/xdp" && ! ip -d link show sl2 | grep -q "prog/xdp"'

# Classification that depends on the interface cannot be one set of tables.
cat "$E2E_TMP/two.yaml" - >"$E2E_TMP/iface-label.yaml" <<'YAML'
---
apiVersion: sluice/v1
kind: FlowSchema
metadata: {name: inside}
spec:
  priorityLevelConfiguration: {name: web}
  matchingPrecedence: 100
  rules:
  - subjects: [{kind: Labels, labels: {matchLabels: {iface: sl2}}}]
    destinations: [{ports: ["9090"]}]
YAML
out=$("$SLUICECTL" validate "$E2E_TMP/iface-label.yaml" 2>&1); rc=$?
check_num "validate refuses an iface match over two interfaces (exit 1)" "$rc" -eq 1
check "... at Server spec.interfaces, saying why" \
	grep -Eq "iface-label.yaml:[0-9]+:[0-9]+: error: Server: spec.interfaces: connections classify differently on sl2 than on sl0" <<<"$out"
DAEMON_IFACES=()
: >"$E2E_TMP/sluiced.log"
"$SLUICED" --config "$E2E_TMP/iface-label.yaml" --pin-dir "$PIN_DIR" --control-socket "$E2E_TMP/ctl.sock" >"$E2E_TMP/sluiced.log" 2>&1
check "sluiced refuses it too (exit 1), with the same error" \
	bash -c '[ "$1" = 1 ] && grep -q "spec.interfaces: connections classify differently" "$2"' _ "$?" "$E2E_TMP/sluiced.log"
check "... and attaches nothing" bash -c '! ip -d link show sl0 | grep -q "prog/xdp" && ! ip -d link show sl2 | grep -q "prog/xdp"'

# --iface auto: the default route's device (issue 28: one DaemonSet for
# nodes whose NICs are named differently).  No default route: refused,
# naming the way out.
DAEMON_IFACES=(--iface auto)
"$SLUICED" --config "$CONFIGS/basic.yaml" --iface auto --pin-dir "$PIN_DIR" --control-socket "$E2E_TMP/ctl.sock" \
	>"$E2E_TMP/auto-none.log" 2>&1
rc=$?
check "--iface auto without a default route: exit 1, naming --iface IFNAME" \
	bash -c '[ "$1" = 1 ] && grep -q "no default route" "$2" && grep -q -- "--iface IFNAME" "$2"' _ "$rc" "$E2E_TMP/auto-none.log"
# Two default routes: the lower metric's device wins (sl2 here, not the
# first interface there is).
ip route add default via 198.18.0.2 dev sl0 metric 50
ip route add default via 198.18.1.2 dev sl2 metric 10
start_daemon "$CONFIGS/basic.yaml" || not_ok "sluiced --iface auto starts"
check "--iface auto: XDP on the default route's device (sl2, the lower metric), not on sl0" \
	jq -e '(.interfaces | map(.name)) == ["sl2"]' <<<"$(status_json)"
check "... and it says so in its log" grep -q "iface auto: the default route's device, sl2" "$E2E_TMP/sluiced.log"
stop_daemon && ok "clean stop"
ip route del default 2>/dev/null; ip route del default 2>/dev/null

e2e_finish
