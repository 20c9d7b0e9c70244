#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Run every sluice test suite and end with one line "N passed, N failed".
#
# Suites print TAP ("ok N - ...", "not ok N - ..."); cmocka does too with
# CMOCKA_MESSAGE_OUTPUT=TAP.  A suite that crashes or exits non-zero
# without reporting a failure counts as one failure: nothing skips to green.
#
#   tests/run-all.sh [unit|packet|e2e|e2e/test_NAME|kernels ...]
#                                 (default: unit packet e2e; root)
#   tests/run-all.sh check                      (the pure layers' unit tests; any user)
#
# Each suite's seconds follow its results, and the slowest are listed at
# the end, so a slow test is visible.  tests/repeat.sh runs suites N times.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BUILD=${BUILD:-build}
LOG_DIR=${LOG_DIR:-$BUILD/test-logs}

passed=0
failed=0
timings=()

fail_loud() {
	echo "FATAL: $*" >&2
	echo "0 passed, 1 failed"
	exit 1
}

# run_suite NAME CMD...: run, tee the TAP to a log, count results.
run_suite() {
	local name=$1; shift
	local log="$LOG_DIR/$name.log" rc start=$SECONDS
	mkdir -p "$(dirname "$log")"
	echo "== $name"
	CMOCKA_MESSAGE_OUTPUT=TAP "$@" >"$log" 2>&1
	rc=$?
	count_suite "$name" "$log" "$rc" $((SECONDS - start))
}

# count_suite NAME LOG RC SECONDS: a finished suite's results.
count_suite() {
	local name=$1 log=$2 rc=$3 secs=$4 p f
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
	echo "   ($secs s)"
	timings+=("$secs $name")
	passed=$((passed + p))
	failed=$((failed + f))
}

want() { [ $# -eq 0 ] || [[ " $SUITES " == *" $1 "* ]]; }
SUITES="${*:-unit packet e2e}"

# Every suite's TAP goes to a log it is counted from: no log, no count.
mkdir -p "$LOG_DIR" && [ -w "$LOG_DIR" ] || fail_loud "cannot write the test logs to $LOG_DIR (LOG_DIR=...)"

# Needs root and a kernel that loads BPF; say so instead of skipping.
# Only `check` (the pure layers' unit tests: no BPF, no namespaces, no
# I/O beyond their own temporary files) runs as anyone: make check.
if [ "$SUITES" != check ]; then
	[ "$(id -u)" -eq 0 ] || fail_loud "the tests need root (BPF programs, network namespaces); run: sudo make test"
	if ! unshare -m -n true 2>/dev/null; then
		fail_loud "cannot create network/mount namespaces (unshare -m -n failed)"
	fi
	if ! unshare -m bash -c "mount -t bpf bpf /sys/fs/bpf && bpftool prog load $BUILD/tests/xdp_pass.bpf.o /sys/fs/bpf/probe" >/dev/null 2>&1; then
		fail_loud "this kernel does not let us load a BPF program (bpftool prog load $BUILD/tests/xdp_pass.bpf.o failed)"
	fi
fi

# run_built SUITE_DIR: every tests/SUITE_DIR/test_*.c has its binary at
# build/tests/SUITE_DIR/test_*; a missing one fails, it is not skipped.
run_built() {
	local src bin name
	for src in tests/$1/test_*.c; do
		name=${src#tests/}
		name=${name%.c}
		bin=$BUILD/tests/$name
		if [ -x "$bin" ] && [ -f "$bin" ]; then
			run_suite "$name" "$bin"
		else
			echo "== $name"
			echo "   not ok - $bin was not built (run make)"
			failed=$((failed + 1))
		fi
	done
}

# Unit tests mirror the source folders: tests/unit/<layer>/test_*.c.
if want unit; then
	for layer in tests/unit/*/; do
		layer=${layer%/}
		[ "$(basename "$layer")" = configs ] && continue
		run_built "${layer#tests/}"
	done
fi
# The pure layers' unit tests alone, as any user (make check).
if want check; then
	for layer in lib config engine ctl; do
		run_built "unit/$layer"
	done
fi
if want packet; then
	run_built packet
fi
run_e2e() {
	local name=${1#tests/}
	run_suite "${name%.sh}" timeout --kill-after=10 300 "$1"
}
# The kernel matrix beside the e2e suite (make test asks for both): its
# guests take one core (VCPUS=1), the e2e tests keep the other, as in
# make test-repeat HOG=K; the e2e tests' margins hold on a busy core.
MATRIX=(timeout --kill-after=30 2400 tests/kernels/matrix.sh)
matrix_pid=
if want kernels && want e2e; then
	mkdir -p "$LOG_DIR/kernels"
	matrix_start=$SECONDS
	# A session of its own, so that a run stopped half way (Ctrl-C, CI's
	# bound) takes its guest down with it rather than leave QEMU running.
	setsid -w bash -c 'VCPUS=${VCPUS:-1} "$@" >"$0/matrix.log" 2>&1; echo $? >"$0/matrix.rc"' \
		"$LOG_DIR/kernels" "${MATRIX[@]}" &
	matrix_pid=$!
	# (by session: timeout puts its command in a process group of its own)
	trap '[ -n "$matrix_pid" ] && pkill -TERM -s "$matrix_pid"' EXIT
fi
if want e2e; then
	for t in tests/e2e/test_*.sh; do
		run_e2e "$t"
	done
fi
# The kernel matrix: Debian's older kernels under QEMU (tests/kernels/).
# Not in the default set: make test and make test-kernels name it.
if [ -n "$matrix_pid" ]; then
	echo "== kernels/matrix (beside the e2e suite)"
	wait "$matrix_pid"
	matrix_pid=
	count_suite kernels/matrix "$LOG_DIR/kernels/matrix.log" "$(cat "$LOG_DIR/kernels/matrix.rc" 2>/dev/null || echo 1)" \
		$((SECONDS - matrix_start))
elif want kernels; then
	run_suite kernels/matrix "${MATRIX[@]}"
fi
# One e2e test by name (e2e/test_smoke): the fast loop's; or a kernel
# guest's test (kernels/test_virtio_net: tests/kernels/vm.sh runs it).
for s in $SUITES; do
	case $s in
	e2e/test_* | kernels/test_*)
		if [ -f "tests/$s.sh" ]; then
			run_e2e "tests/$s.sh"
		else
			echo "== $s"
			echo "   not ok - tests/$s.sh does not exist"
			failed=$((failed + 1))
		fi
		;;
	esac
done

if [ ${#timings[@]} -gt 1 ]; then
	echo "slowest: $(printf '%s\n' "${timings[@]}" | sort -rn | head -n 5 |
		awk '{ printf "%s%s %d s", (NR > 1 ? ", " : ""), $2, $1 }')"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
