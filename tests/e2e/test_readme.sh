#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# README.md as a new user follows it.  "Protect one service", pasted
# verbatim, protects the lab's service (8 workers on port 8080): in shadow
# mode it counts and enforces nothing; with `shadow: false` and a reload
# the light clients are served through a heavy one's overload (3x the
# service's capacity).  And every
# sluicectl command README shows exists and takes the options shown.
source "$(dirname "$0")/lib.sh"
e2e_init "$@"

README=$E2E_ROOT/README.md
CFG=$E2E_TMP/sluice.yaml
# The YAML between the section's markers, as a reader copies it.
awk '/^<!-- protect-one-service -->$/ { f = 1; next } /^<!-- end -->$/ { f = 0 }
	f && /^```yaml$/ { y = 1; next } f && /^```$/ { y = 0 } y' "$README" >"$CFG"
check_num "README's 'Protect one service' has its configuration (lines)" "$(wc -l <"$CFG")" -ge 20
check "... which validates as README says (sluicectl validate -c FILE)" "$SLUICECTL" validate -c "$CFG"

start_service 8080 8 100 --backlog 128 || { not_ok "service starts"; e2e_finish; }
start_daemon "$CFG" || { not_ok "sluiced starts on README's configuration"; e2e_finish; }
check "status: shadow mode, as README's file starts" jq -e '.shadow == true' <<<"$(status_json)"
check "explain names README's level for the service's port" bash -c \
	'"$1" explain -c "$2" --src 198.18.0.10 --dst 198.18.0.1 --dport 8080 --json | jq -e ".priority_level.name == \"web\"" >/dev/null' \
	_ "$SLUICECTL" "$CFG"

# The demo's overload: one heavy client at 3x the service's capacity
# (80/s), five light ones once a second each.
overload() { # TAG: sets MICE (lab_load JSON)
	load --csv "$E2E_TMP/elephant-$1.csv" --connect $SRV4 --port 8080 --source 198.18.0.10 --rate 240 --count 2400 --duration 10 --timeout 10 \
		>"$E2E_TMP/elephant-$1.json" &
	local ep=$!
	MICE=$(load --csv "$E2E_TMP/mice-$1.csv" --connect $SRV4 --port 8080 --source 198.18.0.11 --source 198.18.0.12 --source 198.18.0.13 \
		--source 198.18.0.14 --source 198.18.0.15 --rate 5 --count 50 --duration 10 --timeout 10)
	wait $ep
	diag "$1: mice $(jq -c '{ok, refused, timeout, p90: .total_ms.p90}' <<<"$MICE"); elephant $(jq -c '{ok, refused, timeout}' "$E2E_TMP/elephant-$1.json")"
}
# Shadow first, under the service's normal load (what an operator checks
# before enforcing): every client served, the verdicts counted.
r=$(load --connect $SRV4 --port 8080 --source 198.18.0.10 --source 198.18.0.11 --rate 40 --count 200 --duration 5 --timeout 10)
diag "shadow, normal load: $(jq -c '{ok, refused, timeout}' <<<"$r"); web: $(status_json | jq -c '.levels[] | select(.name == "web") | {admitted, deferred, rejected, shadow_passed}')"
check_num "shadow: every client served" "$(jq .ok <<<"$r")" -eq 200
check_num "shadow: the level counted its connections" "$(level_field web admitted)" -ge 200

# README: "set shadow: false and reload".
sed -i 's/^  shadow: true /  shadow: false/' "$CFG"
check "the reader sets shadow: false" grep -q '^  shadow: false' "$CFG"
check "sluicectl reload" "$SLUICECTL" reload --control-socket "$E2E_TMP/ctl.sock"
overload enforced
check_num "enforced: every light client is served (50 of 50)" "$(jq .ok <<<"$MICE")" -eq 50
check_num "enforced: ... none waited for a SYN retransmit (p90 under 1 s)" "$(jq .total_ms.p90 <<<"$MICE")" -lt 1000
check_num "enforced: the heavy client is held back (refused some)" "$(jq .refused "$E2E_TMP/elephant-enforced.json")" -gt 0
check "clean stop" stop_daemon

# Every `sluicectl CMD ...` README shows: the command exists and its
# options parse (--help after them: an unknown one fails first).
bad=""
n=0
while read -r line; do
	read -ra words <<<"${line%%#*}"
	[ ${#words[@]} -gt 0 ] || continue
	[ "${words[0]}" = sudo ] && words=("${words[@]:1}")
	[ "${words[0]:-}" = sluicectl ] || continue
	n=$((n + 1))
	"$SLUICECTL" "${words[@]:1}" --help >/dev/null 2>"$E2E_TMP/cmd.err" || bad+=" [${words[*]}: $(head -n 1 "$E2E_TMP/cmd.err")]"
done < <(awk '/^```/ { if (f) f = 0; else { f = 1; sh = ($0 ~ /^```(sh)?$/) } next } f && sh' "$README")
check_num "README shows sluicectl commands ($n)" "$n" -ge 8
check "every one exists and takes the options shown${bad:+ (not:$bad)}" test -z "$bad"
e2e_finish
