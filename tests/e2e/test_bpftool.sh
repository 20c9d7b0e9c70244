#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The object also loads with plain bpftool (the operator's way of loading it): loadall with
# pinmaps, attach XDP with `bpftool net attach`, sock_ops with `bpftool
# cgroup attach`; it is transparent until a daemon configures it; sluiced
# then adopts those maps and takes over its own program without --force,
# while it refuses a foreign XDP program unless --force.
source "$(dirname "$0")/lib.sh"
e2e_init "$@"

start_service 8080 16 1000 || { not_ok "service starts"; e2e_finish; }

mkdir -p $PIN_DIR
check "bpftool prog loadall ... pinmaps" \
	bpftool prog loadall "$E2E_ROOT/bpf/sluice.bpf.o" $PIN_DIR/progs pinmaps $PIN_DIR/maps
check_num "every map pinned by its ABI name, and nothing else" \
	"$(ls $PIN_DIR/maps | grep -c '^sl_')" -eq "$(ls $PIN_DIR/maps | wc -l)"
check "no internal (.rodata/.bss) maps pinned" bash -c "ls $PIN_DIR/maps >/dev/null && ! ls $PIN_DIR/maps | grep -q -e rodata -e bss -e data"
check "bpftool net attach xdp" bpftool net attach xdp pinned $PIN_DIR/progs/sluice_xdp dev sl0
cg=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/mounts)
check "bpftool cgroup attach sock_ops" bpftool cgroup attach "$cg" sock_ops pinned $PIN_DIR/progs/sluice_sockops multi
# That attachment is on the (shared) cgroup2 root, not in our namespace:
# remember the program so the test can detach it whatever happens.
sockops_id=$(bpftool prog show pinned $PIN_DIR/progs/sluice_sockops -j | jq .id)
trap 'bpftool cgroup detach "$cg" sock_ops id $sockops_id 2>/dev/null; e2e_cleanup' EXIT
r=$(load --connect $SRV4 --port 8080 --rate 100 --count 8 --timeout 3)
check_num "unconfigured, the bpftool-loaded program passes everything" "$(jq .ok <<<"$r")" -eq 8

start_daemon "$CONFIGS/bpftool.yaml" || not_ok "sluiced adopts the bpftool-loaded object"
check "the daemon adopted the pinned maps" grep -q "adopted" "$E2E_TMP/sluiced.log"
check "and replaced its own XDP program without --force" grep -q "replacing XDP program" "$E2E_TMP/sluiced.log"
in_cli "$LAB_LOAD" --connect $SRV4 --port 8080 --rate 100 --count 4 --timeout 5 --json --quiet >/dev/null &
fill=$!
wait_level_field web seats_in_use 4 3
r=$(load --connect $SRV4 --port 8080 --rate 50 --count 3 --timeout 2)
check_num "configured by the daemon, the limit applies" "$(jq .refused <<<"$r")" -eq 3
wait "$fill"
check "clean stop" stop_daemon
check "the bpftool sock_ops attachment detaches" bpftool cgroup detach "$cg" sock_ops id "$sockops_id"

# A foreign XDP program: refused without --force, replaced with it.
ip link set dev sl0 xdpdrv obj "$B/tests/xdp_pass.bpf.o" sec xdp
"$SLUICED" --config "$CONFIGS/bpftool.yaml" --iface sl0 --pin-dir $PIN_DIR --control-socket "$E2E_TMP/ctl2.sock" \
	>"$E2E_TMP/refuse.log" 2>&1
rc=$?
check_num "a foreign XDP program: sluiced refuses (exit 1)" "$rc" -eq 1
check "... and says to use --force" grep -q -- "--force" "$E2E_TMP/refuse.log"
check "... and leaves the foreign program attached" bash -c "ip link show sl0 | grep -q xdp_pass"
start_daemon "$CONFIGS/bpftool.yaml" --force || not_ok "sluiced --force replaces it"
check "with --force it replaces the foreign program" bash -c "ip link show sl0 | grep -q 'prog/xdp' && ! ip -d link show sl0 | grep -q 'name xdp_pass'"
check "clean stop" stop_daemon
e2e_finish
