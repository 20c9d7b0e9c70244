#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# What sluice needs of the kernel, said by the program itself: `sluiced
# --check` probes this host (the kernel matrix runs it on 6.1 and 6.12,
# where tcx is missing and the fallback is named), and README.md's
# requirements table is `sluiced --requirements`, word for word.  Root:
# --check loads the programs once, attaching nothing.
source "$(dirname "$0")/lib.sh"
cd "$E2E_ROOT" || exit 1

# README's table: the lines between its two markers.
readme_table=$(awk '/^<!-- sluiced --requirements -->$/ { f = 1; next } /^<!-- end -->$/ { f = 0 } f' README.md)
generated=$("$B/sluiced" --requirements)
check_num "README.md has the requirements table between its markers (lines)" \
	"$(grep -c . <<<"$readme_table")" -ge 4
check "README.md's requirements table is sluiced --requirements" \
	test "$readme_table" = "$generated"
[ "$readme_table" = "$generated" ] || diff <(echo "$generated") <(echo "$readme_table") | sed 's/^/# /'

before=$(bpftool prog show 2>/dev/null | grep -c 'name sluice_xdp')
out=$("$B/sluiced" --check 2>&1)
rc=$?
diag "$(head -n 1 <<<"$out")"
check_num "sluiced --check on this host ($(uname -r)) exits 0" "$rc" -eq 0
check "... and says sluice can protect it" grep -q '^sluice can protect this host' <<<"$out"
check "... having loaded the programs (the verifier's word, not a guess)" \
	grep -qE "^sluice's programs pass the verifier +6\.1 +yes" <<<"$out"
check "... and answered for every feature of the table" \
	test "$(grep -cE ' (yes|no|unknown) ' <<<"$out")" -eq "$(($(grep -c . <<<"$generated") - 2))"
# --check only loads: nothing of it stays in the kernel.
check_num "... leaving no program loaded" "$(bpftool prog show 2>/dev/null | grep -c 'name sluice_xdp')" -eq "$before"
[ "$rc" -eq 0 ] || sed 's/^/# /' <<<"$out"
e2e_finish
