#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The reference tables the docs carry, written from the code so that they
# cannot drift (tests/e2e/test_docs.sh compares them with the docs):
#
#   scripts/doc_catalogues.sh events    every `event=NAME` line sluiced logs,
#                                       its level and the keys it carries
#                                       (docs/operations.md, "Event catalogue")
#   scripts/doc_catalogues.sh metrics METRICS_TEXT
#                                       every metric family of a /metrics
#                                       page: name, type, help (docs/metrics.md)
#   scripts/doc_catalogues.sh section FILE NAME
#                                       the table between FILE's markers
#                                       <!-- NAME --> and <!-- end -->
#   scripts/doc_catalogues.sh replace FILE NAME TABLE_FILE
#                                       put TABLE_FILE between those markers
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)

events() {
	echo "| event | level | keys | logged by |"
	echo "|---|---|---|---|"
	# Each pr_*("event=NAME ...", ...) call, to its closing ");", for the
	# keys its format names (key=%s, key=literal) and its level.
	(cd "$ROOT" && grep -rlE '"event=[a-z_]+' user --include=*.c | sort) | while read -r f; do
		awk -v file="$f" '
			function flush() {
				if (call == "") return
				level = call; sub(/\(.*/, "", level); sub(/.*pr_/, "", level)
				if (level == "warn") level = "warning"
				if (level == "err") level = "error"
				name = call; sub(/.*"event=/, "", name); sub(/[^a-z_].*/, "", name)
				keys = ""; rest = call
				while (match(rest, /[a-z_]+=[^ ]/)) {
					k = substr(rest, RSTART, RLENGTH - 2); rest = substr(rest, RSTART + RLENGTH)
					if (k != "event" && index(" " keys " ", " `" k "` ") == 0) keys = keys (keys == "" ? "" : " ") "`" k "`"
				}
				print name "\t" level "\t" keys "\t" file
				call = ""
			}
			call != "" { call = call $0; if ($0 ~ /\);[[:space:]]*$/) flush(); next }
			/pr_(err|warn|info|debug)\("event=[a-z_]+/ { call = $0; if ($0 ~ /\);[[:space:]]*$/) flush() }
		' "$ROOT/$f"
	done | sort -t "$(printf '\t')" -k1,1 -k4,4 | awk -F '\t' '
		# One row per event: the keys of all its lines, the files that log it.
		{ if ($1 != name) { if (name != "") print row(); name = $1; level = $2; keys = $3; files = "`" $4 "`" }
		  else { n = split($3, k, " "); for (i = 1; i <= n; i++) if (index(" " keys " ", " " k[i] " ") == 0) keys = keys " " k[i]
			 if (index(files, $4) == 0) files = files ", `" $4 "`"; if (index(level, $2) == 0) level = level ", " $2 } }
		function row() { return "| `" name "` | " level " | " keys " | " files " |" }
		END { if (name != "") print row() }'
}

metrics() {
	echo "| metric | type | labels | what |"
	echo "|---|---|---|---|"
	# The labels a family's samples carry (a histogram's le aside).
	awk '/^# HELP sluice_/ { name = $3; help = $0; sub(/^# HELP [^ ]+ /, "", help); gsub(/\|/, "\\|", help); h[name] = help; next }
	     /^# TYPE sluice_/ { t[$3] = $4; next }
	     /^sluice_[a-z_0-9]+\{/ {
		fam = $0; sub(/\{.*/, "", fam)
		if (!(fam in t)) { f2 = fam; sub(/_(bucket|sum|count)$/, "", f2); if (f2 in t) fam = f2 }
		ls = $0; sub(/^[^{]*\{/, "", ls); sub(/\}.*/, "", ls)
		n = split(ls, kv, /",/)
		for (i = 1; i <= n; i++) { k = kv[i]; sub(/=.*/, "", k); sub(/^,/, "", k)
			if (k != "le" && index(" " l[fam] " ", " `" k "` ") == 0) l[fam] = l[fam] (l[fam] == "" ? "" : " ") "`" k "`" }
	     }
	     END { for (n in h) printf "| `%s` | %s | %s | %s |\n", n, t[n], l[n], h[n] }' "$1" | sort
}

section() {
	awk -v m="<!-- $2 -->" '$0 == m { f = 1; next } f && $0 == "<!-- end -->" { exit } f' "$1"
}

replace() {
	local tmp
	tmp=$(mktemp)
	awk -v m="<!-- $2 -->" -v t="$3" '
		$0 == m { print; while ((getline l < t) > 0) print l; skip = 1; next }
		skip && $0 == "<!-- end -->" { skip = 0 }
		!skip' "$1" >"$tmp"
	cat "$tmp" >"$1"
	rm -f "$tmp"
}

case ${1:-} in
events) events ;;
metrics) metrics "$2" ;;
section) section "$2" "$3" ;;
replace) replace "$2" "$3" "$4" ;;
*) echo "usage: $0 events | metrics METRICS_TEXT | section FILE NAME | replace FILE NAME TABLE" >&2; exit 2 ;;
esac
