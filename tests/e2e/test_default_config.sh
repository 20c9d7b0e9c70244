#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The installed configuration (configs/default.yaml, /etc/sluice/sluice.yaml)
# enforces nothing the operator did not turn on.  An operator who set the
# budget and nothing else (shadow still on) puts sluice in front of a
# service 3x over: every client gets in as without sluice, the verdicts are
# counted, and the journal says nothing is enforced and how to change it.
# `shadow: false` and a reload turn the same verdicts on.
source "$(dirname "$0")/lib.sh"
e2e_init "$@"

CFG=$E2E_TMP/sluice.yaml
cp "$E2E_ROOT/configs/default.yaml" "$CFG"
sed -i 's/^  serverConcurrencyLimit: 600$/  serverConcurrencyLimit: 16/' "$CFG"
check "the operator's budget is set (16 seats), shadow left as installed" grep -q '^  serverConcurrencyLimit: 16$' "$CFG"

start_service 8080 4 200 --backlog 256 || { not_ok "service starts"; e2e_finish; }
start_daemon "$CFG" || { not_ok "sluiced starts on the installed configuration"; e2e_finish; }
check "the journal says nothing is enforced, and how to enforce" \
	grep -q 'event=enforcement shadow=on .*nothing is enforced.*shadow: false' "$E2E_TMP/sluiced.log"
check "status: shadow mode" jq -e '.shadow == true' <<<"$(status_json)"

# 120 connections at 40/s to a service that completes 20/s: 3x its
# capacity, with patience enough to be served without sluice.
burst() { load --connect $SRV4 --port 8080 --rate 40 --count 120 --duration 3 --timeout 15; }
r=$(burst)
diag "shadow on: $(jq -c '{ok, refused, timeout, error}' <<<"$r"); global-default: shadow_passed $(level_field global-default shadow_passed), deferred $(level_field global-default deferred), rejected $(level_field global-default rejected)"
check_num "shadow on: every client is served, as without sluice" "$(jq .ok <<<"$r")" -eq 120
check_num "shadow on: ... none refused" "$(jq .refused <<<"$r")" -eq 0
check_num "shadow on: the verdicts it would have given are counted" \
	"$(status_json | jq '.stats.shadow_passed')" -gt 0

sed -i 's/^  shadow: true /  shadow: false/' "$CFG"
check "the operator turns shadow off in the file" grep -q '^  shadow: false' "$CFG"
check "sluicectl reload" "$SLUICECTL" reload --control-socket "$E2E_TMP/ctl.sock"
check "the journal says the verdicts are enforced now" \
	grep -q 'event=enforcement shadow=off ' "$E2E_TMP/sluiced.log"
d0=$(level_field global-default deferred)
r=$(burst)
d1=$(level_field global-default deferred)
diag "shadow off: $(jq -c '{ok, refused, timeout, error}' <<<"$r"); global-default deferred $((d1 - d0))"
check_num "shadow off: the same load is deferred or refused now" $(($(jq .refused <<<"$r") + d1 - d0)) -gt 0
check "clean stop" stop_daemon
e2e_finish
