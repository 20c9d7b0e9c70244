# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Sourced by the lab scripts (demo, bench_lab, soak): run the caller in
# private namespaces on the lab topology, and clean up whatever happens.
#
#   source "$ROOT/scripts/lab_private.sh"; lab_private NAME "$@"
#
# Re-executes the caller under `unshare -m -n` (root needed), mounts a
# private bpffs and /run/netns, builds tests/lab/topo.sh, and sets TMP (a
# scratch directory) and PIDS (background processes to stop on exit).  A
# caller with more to undo defines lab_cleanup_extra.
lab_private() {
	local name=$1; shift
	if [ "$(id -u)" -ne 0 ]; then
		echo "$name: needs root (XDP, sock_ops, network namespaces)" >&2
		exit 1
	fi
	if [ -z "${SLUICE_LAB_PRIVATE:-}" ]; then
		export SLUICE_LAB_PRIVATE=1
		exec unshare -m -n --propagation private bash "$0" "$@"
	fi
	TMP=$(mktemp -d "/tmp/sluice-$name.XXXXXX")
	PIDS=()
	trap lab_cleanup EXIT
	mount -t bpf bpf /sys/fs/bpf
	mkdir -p /run/netns && mount -t tmpfs tmpfs /run/netns
	ip link set lo up
	"$ROOT/tests/lab/topo.sh" up >/dev/null
}

lab_cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	sleep 0.3
	declare -F lab_cleanup_extra >/dev/null && lab_cleanup_extra
	"$ROOT/tests/lab/topo.sh" down 2>/dev/null
	rm -rf "$TMP"
}
