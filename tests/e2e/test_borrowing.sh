#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Borrowing (Kubernetes apf_controller.go updateBorrowing, conc_alloc.go computeConcurrencyAllocation): a busy level borrows the idle seats a
# lending level offers within one 10 s period, and gives them back when the
# lender gets busy.
source "$(dirname "$0")/lib.sh"
e2e_init "$@"

ML

start_service 8080 64 4000 || { not_ok "busy service starts"; e2e_finish; }
start_service 9090 32 15000 || { not_ok "lender service starts"; e2e_finish; }
start_daemon "$CONFIGS/borrowing.yaml" || { not_ok "sluiced starts"; e2e_finish; }
t0=$SECONDS
ok "sluiced starts"
lv() { "$SLUICECTL" levels "$1" --control-socket "$E2E_TMP/ctl.sock" --json | jq ".levels[0].$2"; }
# APF allocates at once on a configuration (apf_controller.go
# digestConfigObjects): with no demand yet every level's target is its
# minimum (busy 8, lender 8 - 4, catch-all 1), and the 17 seats are shared
# in proportion: 17/13 of each, rounded.
check_num "busy starts at its share of the idle seats, 17/13 x 8" "$(lv busy limit)" -eq 10
check_num "lender at 17/13 x its 4 unlendable" "$(lv lender limit)" -eq 5
check_num "lender lends 4 of its 8" "$(lv lender lendable)" -eq 4

# The busy level gets far more than it can hold: many wait in its queues.
in_cli "$LAB_LOAD" --connect $SRV4 --port 8080 --source 198.18.0.20 --rate 20 --count 600 \
	--duration 30 --timeout 25 --json --quiet >/dev/null &
E2E_PIDS+=($!)

# One borrowing period (10 s) after the start, plus slack.
while [ $((SECONDS - t0)) -lt 12 ]; do sleep 0.5; done
borrowed=$(lv busy limit)
diag "after one period: busy limit $borrowed, lender limit $(lv lender limit)"
check_num "within one period the busy level borrows the lender's idle seats" "$borrowed" -eq 12
check_num "the lender keeps its unlendable half" "$(lv lender limit)" -eq 4

# Now the lender gets busy: 12 long connections, 4 admitted, 8 waiting.
in_cli "$LAB_LOAD" --connect $SRV4 --port 9090 --source 198.18.0.30 --rate 50 --count 12 \
	--timeout 20 --json --quiet >/dev/null &
E2E_PIDS+=($!)
sleep 1
check_num "the lender's connections are admitted up to its current limit" "$(lv lender seats_in_use)" -ge 4
# Within the next periods the seats go back.
back=0
for _ in $(seq 50); do
	[ "$(lv busy limit)" = 8 ] && [ "$(lv lender limit)" = 8 ] && { back=1; break; }
	sleep 0.5
done
diag "after the lender got busy: busy limit $(lv busy limit), lender limit $(lv lender limit)"
check_num "the busy level gives the seats back when the lender gets busy" "$back" -eq 1
check "clean stop" stop_daemon
e2e_finish
