#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The kernel matrix: sluice on the kernels its users run, each booted under
# QEMU (tests/kernels/vm.sh) from Debian's own package
# (scripts/fetch-kernels.sh).  In each guest: every program of the object
# loaded alone (a refusal's verifier log kept), sluiced --check (its probes
# on a kernel that lacks tcx), the packet suite, and the e2e tests
# test_smoke and test_impatient on the lab's bare client end (and on the
# oldest, test_detach: the clsact fallback taken off), and
# tests/kernels/test_virtio_net.sh on two virtio-net NICs (a real
# driver's XDP_TX, its drops counted from its own statistics).
# This host's own kernel runs everything else of make test.
#
# And the matrix tests itself: the object built without the bounds the
# older verifiers need (build/tests/kernels/sluice_unbounded.bpf.o) loads on
# this host and must be refused in the oldest guest.  A matrix that could
# not see that would pass anything.
#
#   tests/kernels/matrix.sh            (root; TAP on stdout)
#   env: KERNELS   which kernels, by version prefix ("6.1 6.12", default
#                  every kernel in the cache)
#        MATRIX_E2E  the tests run in each guest; MATRIX_E2E_OLDEST those
#                  run in the oldest only
#        SLUICE_KERNEL_CACHE, BUILD, ACCEL, VCPUS, MEM (vm.sh)
#
# Without QEMU or the kernels it fails; it never skips.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
BUILD=${BUILD:-build}
CACHE=${SLUICE_KERNEL_CACHE:-/var/cache/sluice/kernels}
MATRIX_E2E=${MATRIX_E2E:-e2e/test_smoke e2e/test_impatient kernels/test_virtio_net}
# On the oldest kernel only (no tcx there: the clsact fallback's detach).
MATRIX_E2E_OLDEST=${MATRIX_E2E_OLDEST:-e2e/test_detach}
OUT_TOP=$BUILD/kernels
UNBOUNDED=$BUILD/tests/kernels/sluice_unbounded.bpf.o

n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $*"; }
diag() { sed 's/^/# /'; }

# The kernels: every one in the cache, or those KERNELS names by prefix
# ("6.1" is 6.1.0-57-amd64, not 6.12.x).
kernels=()
for d in "$CACHE"/*/; do
	d=${d%/}
	k=$(basename "$d")
	[ -d "$d/boot" ] || continue
	if [ -n "${KERNELS:-}" ]; then
		hit=0
		for want in $KERNELS; do
			case $k in "$want" | "$want".* | "$want"-*) hit=1 ;; esac
		done
		[ $hit -eq 1 ] || continue
	fi
	kernels+=("$k")
done
if [ ${#kernels[@]} -eq 0 ]; then
	not_ok "no kernel to boot in $CACHE${KERNELS:+ matching KERNELS=$KERNELS} (scripts/fetch-kernels.sh)"
	echo "1..$n"
	exit 1
fi
mapfile -t kernels < <(printf '%s\n' "${kernels[@]}" | sort -V)
oldest=${kernels[0]}
for tool in "$BUILD/tests/kernels/progs_load" "$UNBOUNDED" bpf/sluice.bpf.o; do
	[ -e "$tool" ] || { not_ok "$tool was not built (run make)"; echo "1..$n"; exit 1; }
done

# The matrix's own test, on this host: the unbounded object loads here
# (else the refusal below would prove nothing about older verifiers).
if "$BUILD/tests/kernels/progs_load" "$UNBOUNDED" "$BUILD" >"$BUILD/unbounded-host.log" 2>&1; then
	ok "this host ($(uname -r)) loads the object without the old verifiers' bounds"
else
	not_ok "this host refuses the object without the old verifiers' bounds"
	diag <"$BUILD/unbounded-host.log"
fi

# step_rc / step_secs OUT STEP: from the step's line in the guest's summary.
step_rc() { awk -v s="$2" '$1 == "step" && $2 == s { sub(/^rc=/, "", $3); print $3 }' "$1/summary.txt"; }
step_secs() { awk -v s="$2" '$1 == "step" && $2 == s { print $4 }' "$1/summary.txt"; }

for k in "${kernels[@]}"; do
	out=$OUT_TOP/$k
	e2e=$MATRIX_E2E
	[ "$k" = "$oldest" ] && e2e="$e2e $MATRIX_E2E_OLDEST"
	steps="progs check packet $e2e"
	[ "$k" = "$oldest" ] && steps="$steps progs:$UNBOUNDED"
	mkdir -p "$OUT_TOP"
	t0=$SECONDS
	# shellcheck disable=SC2086 # the steps are words
	if ! BUILD=$BUILD NICS=2 tests/kernels/vm.sh "$CACHE/$k" "$out" $steps >"$OUT_TOP/$k.vm.log" 2>&1; then
		not_ok "$k: the guest booted and finished ($OUT_TOP/$k.vm.log)"
		tail -n 5 "$OUT_TOP/$k.vm.log" | diag
		tail -n 20 "$out/console.log" 2>/dev/null | diag
		continue
	fi
	ok "$k: the guest booted and finished in $((SECONDS - t0)) s"

	# Each program loads: progs_load's own TAP lines, named by kernel.
	while read -r verdict rest; do
		case $verdict in
		ok) ok "$k: ${rest#* - }" ;;
		not) not_ok "$k: ${rest#* * - } (verifier log: $out/)" ;;
		esac
	done < <(grep -E '^(ok|not ok) [0-9]+ - ' "$out/progs.log")
	# ... every one of them: a loader that stopped half way (a crash, its
	# bound) leaves programs unreported, and that fails too.
	plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$out/progs.log")
	said=$(grep -cE '^(ok|not ok) [0-9]+ - ' "$out/progs.log")
	if [ -z "$plan" ] || [ "$said" -ne "$plan" ] || [ "$plan" -lt 1 ]; then
		not_ok "$k: progs_load reported $said of ${plan:-?} programs (rc $(step_rc "$out" progs); $out/progs.log)"
	fi

	# sluiced --check: sluice can protect this kernel, and it tells tcx
	# (6.6) apart by probing, as the daemon's fallback does.
	if [ "$(step_rc "$out" check)" = 0 ] && grep -q '^sluice can protect this host' "$out/check.log"; then
		ok "$k: sluiced --check says sluice can protect it"
	else
		not_ok "$k: sluiced --check (rc $(step_rc "$out" check); $out/check.log)"
		diag <"$out/check.log"
	fi
	want_tcx=yes
	[ "$(printf '%s\n' "$k" 6.6 | sort -V | head -n 1)" = 6.6 ] || want_tcx=no
	if grep -qE "^tcx links for the refusal hand-off +6\.6 +$want_tcx " "$out/check.log"; then
		ok "$k: sluiced --check finds tcx: $want_tcx"
	else
		not_ok "$k: sluiced --check should find tcx: $want_tcx"
		grep '^tcx' "$out/check.log" | diag
	fi

	# The suites: their own closing line "N passed, M failed".
	for s in packet $e2e; do
		log=$out/${s//\//_}.log
		last=$(tail -n 1 "$log" 2>/dev/null)
		if [ "$(step_rc "$out" "$s")" = 0 ] && [[ $last =~ ^([0-9]+)\ passed,\ 0\ failed$ ]] &&
			[ "${BASH_REMATCH[1]}" -gt 0 ]; then
			ok "$k: $s: $last ($(step_secs "$out" "$s") s)"
		else
			not_ok "$k: $s: ${last:-no result} (rc $(step_rc "$out" "$s"); $log)"
			grep -E '^ *not ok' "$log" | head -n 20 | diag
		fi
	done

	# The matrix's own test: the oldest verifier refuses the unbounded object.
	if [ "$k" = "$oldest" ]; then
		ulog=$out/progs-$(basename "$UNBOUNDED" .bpf.o).log
		if grep -qE '^not ok [0-9]+ - sluice_xdp refused' "$ulog" 2>/dev/null; then
			ok "$k: refuses the object without the old verifiers' bounds: $(grep -m1 -oE 'sluice_xdp refused.*' "$ulog")"
		else
			not_ok "$k: the object without the old verifiers' bounds was not refused: the matrix would miss a change only an older verifier rejects"
			diag <"$ulog"
		fi
	fi
done
echo "1..$n"
[ "$fails" -eq 0 ]
