#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proof of stability: run suites N times and say, for every test that ever
# failed, in how many runs and with what.  A green suite passes every run,
# also with a noisy neighbour: --hog K holds one core busy (a bounded busy
# loop) for the whole of run K.
#
#   tests/repeat.sh [--hog K] N [unit|packet|e2e|e2e/test_NAME ...]   (default: e2e)
#   make test-repeat N=3 HOG=2
#
# Each run's logs stay in $BUILD/repeat/run-K/ (the runner's TAP per suite).
# Exit status 0 only if every run passed.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BUILD=${BUILD:-build}
OUT=$BUILD/repeat

usage() {
	sed -n '3,12p' "$0" | sed 's/^# \{0,1\}//'
	exit "${1:-2}"
}

hog_run=0
while [ $# -gt 0 ]; do
	case $1 in
	--hog) [ $# -ge 2 ] || usage; hog_run=$2; shift 2 ;;
	-h|--help) usage 0 ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] && [[ $1 =~ ^[1-9][0-9]*$ ]] || usage
runs=$1; shift
suites=("${@:-e2e}")
[[ $hog_run =~ ^[0-9]+$ ]] || usage

rm -rf "$OUT"
mkdir -p "$OUT" || { echo "repeat: cannot write $OUT" >&2; exit 1; }

HOG_PID=
stop_hog() {
	[ -n "$HOG_PID" ] || return 0
	kill "$HOG_PID" 2>/dev/null
	wait "$HOG_PID" 2>/dev/null
	HOG_PID=
}
trap stop_hog EXIT

for ((k = 1; k <= runs; k++)); do
	hog=
	if [ "$k" -eq "$hog_run" ]; then
		# One core's worth of a neighbour's work, bounded in time.
		timeout 3600 bash -c 'while :; do :; done' &
		HOG_PID=$!
		hog=" (one core held busy by a neighbour, pid $HOG_PID)"
	fi
	echo "== run $k of $runs$hog: ${suites[*]}"
	start=$SECONDS
	BUILD=$BUILD LOG_DIR=$OUT/run-$k tests/run-all.sh "${suites[@]}" >"$OUT/run-$k.out" 2>&1
	echo "   $(tail -n 1 "$OUT/run-$k.out") in $((SECONDS - start)) s"
	stop_hog
done

# Every "not ok" of every suite's log, by suite: in how many runs, and the
# lines (a check's text names what failed and what it got).
echo "== tests that failed at least once"
failed_any=0
declare -A runs_failed lines
for ((k = 1; k <= runs; k++)); do
	while IFS= read -r log; do
		name=${log#"$OUT/run-$k/"}
		name=${name%.log}
		if grep -qE '^not ok' "$log"; then
			runs_failed[$name]=$(( ${runs_failed[$name]:-0} + 1 ))
			lines[$name]+=$(grep -E '^not ok' "$log" | sed "s/^/     run $k: /")$'\n'
			failed_any=1
		fi
	done < <(find "$OUT/run-$k" -name '*.log' | sort)
	# A suite that crashed without a "not ok" is a failure too.
	while IFS= read -r line; do
		name=$(sed -E 's/^ *not ok - ([^ ]+) .*/\1/' <<<"$line")
		runs_failed[$name]=$(( ${runs_failed[$name]:-0} + 1 ))
		lines[$name]+="     run $k: $line"$'\n'
		failed_any=1
	done < <(grep -E '^   not ok - ' "$OUT/run-$k.out")
done
for name in $(printf '%s\n' "${!runs_failed[@]}" | sort); do
	echo "   $name: failed in ${runs_failed[$name]} of $runs runs"
	printf '%s' "${lines[$name]}"
done
[ "$failed_any" -eq 0 ] && echo "   none"
total_p=0 total_f=0
for ((k = 1; k <= runs; k++)); do
	read -r p _ f _ < <(tail -n 1 "$OUT/run-$k.out")
	total_p=$((total_p + ${p:-0})); total_f=$((total_f + ${f:-1}))
done
echo "$runs runs: $total_p passed, $total_f failed"
[ "$failed_any" -eq 0 ] && [ "$total_f" -eq 0 ]
