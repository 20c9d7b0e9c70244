#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# No cycle between the userspace modules, as the linker sees them: module
# A depends on module B when A's object uses a symbol B's object defines
# (a call, or a table such as a policy mode's).  Two .c files that call
# each other are one job split badly, or a callback not taken (a room
# that reaches back into its caller takes hooks instead: adm_stall.c).
# Prints each cycle and exits 1 if there is one.
#
#   scripts/check_cycles.sh [BUILD]      (default: build; after make all)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}

objs=()
for layer in lib config engine dataplane daemon ctl; do
	for o in "$B/$layer"/*.o; do
		[ -e "$o" ] && objs+=("$o")
	done
done
[ ${#objs[@]} -gt 0 ] || { echo "check_cycles: no objects under $B (run make all)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for o in "${objs[@]}"; do
	m=${o#"$B"/}
	m=${m%.o}
	nm --defined-only -g "$o" | awk -v m="$m" 'NF == 3 { print $3, m }' >>"$tmp/defs"
	nm -u "$o" | awk -v m="$m" '{ print $2, m }' >>"$tmp/uses"
done
sort -k1,1 "$tmp/defs" >"$tmp/d"
sort -k1,1 "$tmp/uses" >"$tmp/u"
# symbol user definer -> "user definer", once per pair
join "$tmp/u" "$tmp/d" | awk '$2 != $3 { print $2, $3 }' | sort -u >"$tmp/edges"

loops=$(tsort "$tmp/edges" 2>&1 >/dev/null || true)
if [ -n "$loops" ]; then
	echo "cycle between modules (each loop as tsort found it):"
	sed -n 's/^tsort: //p' <<<"$loops" | grep -v 'input contains a loop' | sed 's/^/  /'
	exit 1
fi
echo "modules: no cycle ($(wc -l <"$tmp/edges") dependencies between $(wc -l < <(cut -d' ' -f1,2 "$tmp/edges" | tr ' ' '\n' | sort -u)) modules)"
