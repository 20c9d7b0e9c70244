#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The build as a distribution drives it (issue 28): CPPFLAGS and LDFLAGS
# reach every compile and link, the binaries are hardened by default
# (fortified calls, BIND_NOW, RELRO), WERROR= turns -Werror off, and
# `make check` runs the pure layers' unit tests as an unprivileged user.
source "$(dirname "$0")/lib.sh"
cd "$E2E_ROOT" || exit 1
T=$(mktemp -d /tmp/sluice-build.XXXXXX)
chmod 1777 "$T" # the unprivileged runs below write their logs here
trap 'rm -rf "$T"' EXIT

dry() { make -n -B V=1 "$@" 2>/dev/null; }
out=$(dry CPPFLAGS=-DSL_PROBE_CPPFLAGS CFLAGS='-O2 -g -DSL_PROBE_CFLAGS' LDFLAGS=-Wl,--build-id=sha1 build/sluiced)
check "CPPFLAGS reach the compiles" grep -q -- '-c .*-DSL_PROBE_CPPFLAGS\|-DSL_PROBE_CPPFLAGS.*-c ' <<<"$out"
check "CFLAGS reach the compiles" grep -q -- '-DSL_PROBE_CFLAGS' <<<"$out"
check "LDFLAGS reach the link of sluiced" \
	bash -c 'grep -- "-o build/sluiced " <<<"$1" | grep -q -- "-Wl,--build-id=sha1"' _ "$out"
lab=$(dry LDFLAGS=-Wl,--build-id=sha1 build/lab_conns build/tests/unit/lib/test_hostport)
check "... and of the lab tools and tests" bash -c '[ "$(grep -c -- "-Wl,--build-id=sha1" <<<"$1")" -ge 2 ]' _ "$lab"
check "-Werror by default" bash -c 'grep -- "-c " <<<"$1" | grep -q -- "-Werror"' _ "$out"
check "WERROR= turns it off (compiles and the BPF object)" \
	bash -c '! make -n -B V=1 WERROR= build/sluiced bpf/sluice.bpf.o 2>/dev/null | grep -q -- "-Werror"'
# The binaries the suite runs were built with the defaults: hardened.
for b in sluiced sluicectl; do
	check "$b: BIND_NOW (a read-only GOT)" bash -c 'readelf -d "$1" | grep -q BIND_NOW' _ "$B/$b"
	check "$b: RELRO" bash -c 'readelf -lW "$1" | grep -q GNU_RELRO' _ "$B/$b"
	check "$b: fortified libc calls" bash -c 'nm -D "$1" | grep -q "_chk@"' _ "$B/$b"
done
check "CFLAGS=-O0 drops _FORTIFY_SOURCE (glibc wants an optimised build)" \
	bash -c '! make -n -B V=1 CFLAGS="-O0 -g" build/sluiced 2>/dev/null | grep -q _FORTIFY_SOURCE'
# make check: as nobody, the pure layers' unit tests, no root probe.
out=$(runuser -u nobody -- env BUILD=build LOG_DIR="$T/logs" tests/run-all.sh check 2>&1 | tail -1)
check "tests/run-all.sh check runs as an unprivileged user: $out" bash -c '[[ "$1" =~ ^[1-9][0-9]*\ passed,\ 0\ failed$ ]]' _ "$out"
check "a log directory it cannot write fails loudly (not 0 passed, 0 failed and green)" \
	bash -c 'out=$(runuser -u nobody -- env BUILD=build LOG_DIR=/proc/nope tests/run-all.sh check 2>&1); rc=$?; [ $rc -ne 0 ] && grep -q "FATAL: cannot write the test logs" <<<"$out"'
check "... while the root suites still refuse to run unprivileged, loudly" \
	bash -c 'runuser -u nobody -- env BUILD=build LOG_DIR="$1/l2" tests/run-all.sh unit 2>&1 | grep -q "FATAL: the tests need root"' _ "$T"
e2e_finish
