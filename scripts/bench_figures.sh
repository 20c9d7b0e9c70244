#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# make bench, the figures the e2e tests measure but do not assert (issue
# 45: a test asserts behaviour with margins a noisy machine cannot cross;
# how fast is the bench's).  Each test prints them as "# figure: NAME =
# VALUE (NOTE)" lines (tests/e2e/lib.sh figure); this runs the tests that
# carry figures and collects them, with each test's verdict.
#
#   scripts/bench_figures.sh [test_NAME ...]   (default: every test with figures)
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=${OUT:-build/bench-figures}
mkdir -p "$OUT"

if [ $# -eq 0 ]; then
	mapfile -t tests < <(grep -l '^[[:space:]]*figure ' tests/e2e/test_*.sh | xargs -n1 basename | sed 's/\.sh$//')
else
	tests=("$@")
fi

status=0
for t in "${tests[@]}"; do
	start=$SECONDS
	timeout --kill-after=10 300 "tests/e2e/$t.sh" >"$OUT/$t.log" 2>&1
	rc=$?
	fails=$(grep -c '^not ok' "$OUT/$t.log")
	echo "$t: $([ "$rc" -eq 0 ] && echo passed || echo "FAILED ($fails checks, rc $rc)") in $((SECONDS - start)) s"
	grep '^# figure: ' "$OUT/$t.log" | sed 's/^# figure: /  /'
	[ "$rc" -eq 0 ] || status=1
done
exit $status
