#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The include rules of docs/ARCHITECTURE.md's folder map, checked:
#  - includes point one way: lib -> config -> engine -> dataplane ->
#    daemon / ctl, include/ needs nothing of ours, bpf/ only include/;
#  - no cycle among headers: each can be read (and compiled, for bpf/:
#    the Makefile's bpf-headers check) after what it includes, never
#    before it.  (Cycles between modules, a .c calling another that calls
#    it back, are scripts/check_cycles.sh's, over the built objects.)
# Both run in make test, before the suites.
# Prints every violation, one line each, and exits 1 if there was one.
#
#   scripts/check_includes.sh        (from anywhere; reads the source tree)
set -euo pipefail
cd "$(dirname "$0")/.."

# folder FILE: the layer a file belongs to.
folder() {
	case $1 in
	include/*) echo include ;;
	bpf/*) echo bpf ;;
	user/*/*) f=${1#user/}; echo "${f%%/*}" ;;
	*) echo other ;;
	esac
}

# allowed FROM TO TARGET: whether a file of layer FROM may include TARGET
# (a file of layer TO).
allowed() {
	local from=$1 to=$2 target=$3
	[ "$to" = include ] && return 0
	[ "$from" = "$to" ] && return 0
	case $from in
	include|bpf|lib) return 1 ;;
	config) [ "$to" = lib ] ;;
	engine) [[ " lib config " == *" $to "* ]] ;;
	dataplane) [[ " lib config engine " == *" $to "* ]] ;;
	daemon) [[ " lib config engine dataplane " == *" $to "* ]] ;;
	# sluicectl speaks the daemon's protocol: that one header.
	ctl) [[ " lib config engine dataplane " == *" $to "* ]] || [ "$target" = user/daemon/control.h ] ;;
	*) return 0 ;;
	esac
}

# resolve FILE NAME: the file an include line names, or nothing for a
# system header reached with quotes (there are none) or a generated one.
resolve() {
	local file=$1 name=$2 d
	d=$(dirname "$file")
	for c in "$d/$name" "user/$name" "include/$name" "bpf/$name"; do
		if [ -f "$c" ]; then
			echo "${c#./}"
			return 0
		fi
	done
	return 0
}

bad=0
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
while IFS= read -r file; do
	from=$(folder "$file")
	while IFS= read -r name; do
		target=$(resolve "$file" "$name")
		[ -n "$target" ] || continue
		to=$(folder "$target")
		if ! allowed "$from" "$to" "$target"; then
			echo "layer: $file ($from) includes $target ($to)"
			bad=1
		fi
		case $file in
		*.h) echo "$file $target" >>"$edges" ;;
		esac
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
done < <(find include bpf user -name '*.[ch]' | sort)

# tsort names the modules of a loop on stderr, one loop at a time.
if ! loops=$(sort -u "$edges" | tsort 2>&1 >/dev/null) || [ -n "$loops" ]; then
	if [ -n "$loops" ]; then
		echo "cycle among headers:"
		sed -n 's/^tsort: //p' <<<"$loops" | grep -v 'input contains a loop' | sed 's/^/  /'
		bad=1
	fi
fi
[ $bad -eq 0 ] && echo "includes: one way, no cycle among headers ($(sort -u "$edges" | wc -l) header includes)"
exit $bad
