#!/usr/bin/env bash
# Run every sluice test suite and end with one line "N passed, N failed".
#
# Suites print TAP ("ok N - ...", "not ok N - ..."); cmocka does too with
# CMOCKA_MESSAGE_OUTPUT=TAP.  A suite that crashes or exits non-zero
# without reporting a failure counts as one failure: nothing skips to green.
#
#   tests/run-all.sh [unit|packet|e2e ...]     (default: all)
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BUILD=${BUILD:-build}
LOG_DIR=${LOG_DIR:-$BUILD/test-logs}
mkdir -p "$LOG_DIR"

passed=0
failed=0

fail_loud() {
	echo "FATAL: $*" >&2
	echo "0 passed, 1 failed"
	exit 1
}

# Needs root and a kernel that loads BPF; say so instead of skipping.
[ "$(id -u)" -eq 0 ] || fail_loud "the tests need root (BPF programs, network namespaces); run: sudo make test"
if ! unshare -m -n true 2>/dev/null; then
	fail_loud "cannot create network/mount namespaces (unshare -m -n failed)"
fi
if ! unshare -m bash -c "mount -t bpf bpf /sys/fs/bpf && bpftool prog load bpf/xdp_pass.bpf.o /sys/fs/bpf/probe" >/dev/null 2>&1; then
	fail_loud "this kernel does not let us load a BPF program (bpftool prog load bpf/xdp_pass.bpf.o failed)"
fi

# run_suite NAME CMD...: run, tee the TAP to a log, count results.
run_suite() {
	local name=$1; shift
	local log="$LOG_DIR/$name.log" rc p f
	mkdir -p "$(dirname "$log")"
	echo "== $name"
	CMOCKA_MESSAGE_OUTPUT=TAP "$@" >"$log" 2>&1
	rc=$?
	p=$(grep -cE '^ok [0-9]+' "$log" || true)
	f=$(grep -cE '^not ok [0-9]+' "$log" || true)
	grep -E '^(not ok|ok) [0-9]+|^# ' "$log" | sed 's/^/   /'
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "   not ok - $name exited with status $rc without reporting a failure (see $log)"
		tail -n 20 "$log" | sed 's/^/   | /'
		f=1
	fi
	if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
		echo "   not ok - $name ran no test (see $log)"
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
}

want() { [ $# -eq 0 ] || [[ " $SUITES " == *" $1 "* ]]; }
SUITES="${*:-unit packet e2e}"

if want unit; then
	for t in "$BUILD"/test_*; do
		[ -x "$t" ] || continue
		case "$(basename "$t")" in test_packets|test_classify) continue ;; esac
		run_suite "unit/$(basename "$t")" "$t"
	done
fi
if want packet; then
	run_suite "packet/test_packets" "$BUILD/test_packets"
	run_suite "packet/test_classify" "$BUILD/test_classify"
fi
if want e2e; then
	for t in tests/e2e/test_*.sh; do
		run_suite "e2e/$(basename "$t" .sh)" timeout --kill-after=10 300 "$t"
	done
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
