#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# sluicectl detach: what a host with no daemon needs to be rid of sluice.
# It refuses while a daemon holds the pin directory; after a stop with
# --keep-attached, and after a crash, it takes XDP off, detaches the
# sock_ops link and removes every pin, so the service is reached with
# nothing in front; run again it finds nothing and succeeds.
source "$(dirname "$0")/lib.sh"
e2e_init "$@"

xdp_on() { ip link show sl0 | grep -q 'prog/xdp'; }
start_service 8080 8 1500 || not_ok "lab service starts"
start_daemon "$CONFIGS/basic.yaml" --keep-attached || { not_ok "sluiced starts"; e2e_finish; }

out=$("$SLUICECTL" detach --pin-dir "$PIN_DIR" 2>&1); rc=$?
check_num "while sluiced runs: refused, exit status" "$rc" -eq 1
check "... saying a running sluiced holds the pins ($out)" grep -q "a running sluiced holds $PIN_DIR" <<<"$out"
check "... and XDP is still on sl0" xdp_on

stop_daemon
check "sluiced --keep-attached stopped: XDP still on sl0" xdp_on
check "... and the pins kept" test -e "$PIN_DIR/links/sockops"
# The Kubernetes cleanup DaemonSet's own command line, with this build's
# sluicectl (the lab's pin directory is the DaemonSet's, /sys/fs/bpf/sluice).
mapfile -t argv < <("$LAB_YAML2JSON" "$E2E_ROOT/configs/kubernetes/cleanup/daemonset.yaml" |
	jq -r '.spec.template.spec.initContainers[0].command[]')
check "the cleanup DaemonSet runs sluicectl detach on $PIN_DIR (${argv[*]})" \
	test "${argv[0]##*/} ${argv[1]} ${argv[2]}" = "sluicectl detach --pin-dir=$PIN_DIR"
j=$("$SLUICECTL" "${argv[@]:1}" --json); rc=$?
check_num "that command (--json): exit status" "$rc" -eq 0
check "... XDP came off sl0 (native), the sock_ops link was detached, pins removed, nothing failed ($j)" \
	jq -e '.found and .xdp == [{"ifname": "sl0", "mode": "native"}] and .sockops and .pins_removed > 10 and .failed == 0' <<<"$j"
check "XDP is off sl0" bash -c '! ip link show sl0 | grep -q prog/xdp'
# The hand-off's tc programs held nowhere: tcx links (6.6) or clsact
# filters (the kernel matrix's 6.1) gone with the rest (the kernel frees a
# program a moment after its last holder).
tc_gone() {
	local _
	for _ in $(seq 30); do
		bpftool prog show 2>/dev/null | grep -qE 'name sluice_tc_(in|out)' || return 0
		sleep 0.1
	done
	return 1
}
check "... and no tc hand-off program is left (tcx link or clsact filter)" tc_gone
check "$PIN_DIR is gone" test ! -e "$PIN_DIR"
r=$(load --connect $SRV4 --port 8080 --rate 50 --count 6 --timeout 5)
check_num "the service is reached with nothing in front (6 at once; the limit was 4)" "$(jq .ok <<<"$r")" -eq 6
out=$("$SLUICECTL" detach --pin-dir "$PIN_DIR"); rc=$?
check "again: nothing to detach, success (rc $rc: $out)" test "$rc" = 0 -a "$out" = "nothing to detach: $PIN_DIR does not exist"

# A crash leaves everything attached; detach takes it off as well.
start_daemon "$CONFIGS/basic.yaml" || { not_ok "sluiced starts again"; e2e_finish; }
kill_daemon_hard
check "after a crash XDP is still on sl0" xdp_on
out=$("$SLUICECTL" detach --pin-dir "$PIN_DIR")
check "detach after a crash: XDP off sl0 and off this host ($out)" \
	bash -c '! ip link show sl0 | grep -q prog/xdp && test ! -e "$1" && grep -q "sluice is off this host" <<<"$2"' _ "$PIN_DIR" "$out"
check "... and no tc hand-off program is left" tc_gone
e2e_finish
