#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# make demo's verdict is its own: a run in which sluiced never started
# fails loudly (non-zero, the daemon's error and what to do on screen)
# and prints no "with sluice" report.  (Its passing run is make demo; the
# kernel matrix and test_impatient assert the protection itself.)  And
# make demo installs only the packages it runs.
source "$(dirname "$0")/lib.sh"
cd "$E2E_ROOT" || exit 1

bad=$(mktemp /tmp/sluice-demo-bad.XXXXXX.yaml)
printf 'apiVersion: sluice.dev/v1\nkind: Server\nspec: [\n' >"$bad"
out=$(BASELINE_SECONDS=1 CONFIG="$bad" timeout 120 scripts/demo.sh 2>&1)
rc=$?
rm -f "$bad"
check_num "a demo whose sluiced cannot start exits non-zero" "$rc" -ne 0
check "... saying so" grep -q 'DEMO FAILED: sluiced did not start' <<<"$out"
check "... with the daemon's own error (file and line)" grep -q "sluice-demo-bad.*yaml:[0-9]*:[0-9]*: error" <<<"$out"
check "... and what to do" grep -q 'sluiced --check' <<<"$out"
check "... and no report of a run with sluice" bash -c '! grep -qE "^with sluice|DEMO PASSED" <<<"$1"' _ "$out"
[ "$rc" -ne 0 ] || sed 's/^/# /' <<<"$out" | tail -n 20

# make demo installs what it runs, not the test set.
demo_pkgs=$(scripts/install-deps.sh --demo --list)
all_pkgs=$(scripts/install-deps.sh --list)
check "make demo installs only what it runs ($(wc -l <<<"$demo_pkgs") packages: no PostgreSQL, Prometheus or QEMU)" \
	bash -c '! grep -qE "^(postgresql|prometheus|qemu|lintian)" <<<"$1"' _ "$demo_pkgs"
check "... each of them one make test installs too" \
	bash -c 'test -z "$(comm -23 <(sort <<<"$1") <(sort <<<"$2"))"' _ "$demo_pkgs" "$all_pkgs"
check "make demo asks for the demo's packages" grep -q 'install-deps.sh --demo' Makefile
e2e_finish
