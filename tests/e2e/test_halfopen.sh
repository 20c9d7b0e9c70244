#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Half-open connections whose client does not exist (a spoofed source, a
# scanner): the SYN-ACK goes to a network that answers with an ICMP error,
# as the Internet does.  An error after which Linux drops the connection
# request (host unreachable) returns the seat at once; one after which it
# keeps retrying (administratively prohibited) leaves the seat to the
# handshake time-out.  Real kernel on both sides: the client namespace
# routes the spoofed sources and its routes produce the ICMP.
source "$(dirname "$0")/lib.sh"
e2e_init "$@"

# 198.18.1.0/24 and 198.18.2.0/24 lie behind the client namespace, which
# answers for them: the first is unreachable, the second prohibited.
ip route add 198.18.1.0/24 via 198.18.0.2 dev sl0
ip route add 198.18.2.0/24 via 198.18.0.2 dev sl0
in_cli sysctl -qw net.ipv4.ip_forward=1
in_cli sysctl -qw net.ipv4.icmp_ratelimit=0
in_cli ip route add unreachable 198.18.1.0/24
in_cli ip route add prohibit 198.18.2.0/24

start_service 8080 8 100 || { not_ok "lab service starts"; e2e_finish; }
start_daemon "$CONFIGS/halfopen.yaml" || { not_ok "sluiced starts"; e2e_finish; }

released() { status_json | jq .stats.icmp_released; }

# Unreachable first: the router's ICMP for an unreachable or prohibited
# route is rate limited per destination (a burst of 5, then 1/s, host-wide
# route.error_cost), and the prohibited phase spends it.  The ICMP error
# quoting our SYN-ACK returns the seat.
sent=$(in_cli "$LAB_SYN" --src 198.18.1.5 --dst $SRV4 --dport 8080 --count 1 --rate 100)
check_num "a spoofed SYN from an unreachable network" "$sent" -eq 1
check "its seat comes back at once (not after the 20 s handshake time-out)" \
	wait_level_field web seats_in_use 0 1
check_num "counted as released by ICMP" "$(released)" -eq 1
check_num "no expiry involved" "$(level_field web expired)" -eq 0
check_num "the kernel dropped that request too (sluice agrees with it)" \
	"$(ss -Htn state syn-recv | grep -c '198\.18\.1\.5:')" -eq 0

# Prohibited: Linux keeps the request (and retransmits its SYN-ACK), so
# sluice keeps the seats.
sent=$(in_cli "$LAB_SYN" --src 198.18.2.5 --dst $SRV4 --dport 8080 --sources 3 --count 3 --rate 100)
check_num "three spoofed SYNs sent (prohibited network)" "$sent" -eq 3
check "their half-open connections hold three seats" wait_level_field web seats_in_use 3 2
sleep 1.5
check_num "an error Linux does not abort on leaves the seats held" "$(level_field web seats_in_use)" -eq 3
check_num "and releases nothing (still the one of before)" "$(released)" -eq 1
check_num "the kernel keeps those requests, as sluice does" \
	"$(ss -Htn state syn-recv | grep -c '198\.18\.2\.')" -eq 3

# A legitimate client still gets the last free seat meanwhile.
r=$(load --connect $SRV4 --port 8080 --rate 10 --count 1 --timeout 5)
check_num "a real client is served" "$(jq .ok <<<"$r")" -eq 1

check "clean stop" stop_daemon

# A backlog larger than the expiry sweep's batch drains at the next ticks,
# not one batch a second: 16,000 half-open connections (SYNs to a port
# nothing listens on) are all gone within 3 s of the send: the time-out
# (1 s), up to a second to the next sweep, then a batch a tick.  One batch
# a second would take 5 s.
start_daemon "$CONFIGS/expire.yaml" || { not_ok "sluiced starts (expire)"; e2e_finish; }
sent=$(in_cli "$LAB_SYN" --src 198.18.2.1 --sources 254 --dst $SRV4 --dport 8999 --count 16000 --rate 40000)
t_sent=$(date +%s%N)
check_num "16,000 SYNs sent" "$sent" -eq 16000
check_num "they hold 16,000 seats" "$(level_field web seats_in_use)" -eq 16000
check "all of them expire" wait_level_field web seats_in_use 0 6
ms=$(( ($(date +%s%N) - t_sent) / 1000000 ))
check_num "drained ${ms} ms after the send" "$ms" -le 3000
check_num "every one counted as expired" "$(level_field web expired)" -eq 16000
check "clean stop (expire)" stop_daemon
e2e_finish
