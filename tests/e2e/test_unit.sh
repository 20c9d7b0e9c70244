#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The shipped unit under a real systemd (tests/e2e/lib_systemd.sh), with all
# its hardening: it scores at most 3.0 in `systemd-analyze security`;
# `systemctl start` protects (XDP on sl0, a full level answered with RSTs),
# `reload` reloads, `restart` keeps XDP attached throughout (seamless), a
# crash is restarted with the data path kept, and `systemctl stop` (and
# `disable --now`) takes everything off: XDP, the sock_ops link, the pins,
# also where the configuration names its own pinDir and controlSocket.
# Event lines reach the journal with their fields (journalctl EVENT=reload).
source "$(dirname "$0")/lib.sh"
e2e_init "$@"
source "$(dirname "$0")/lib_systemd.sh"

make -C "$E2E_ROOT" --no-print-directory BUILD="${BUILD:-build}" DESTDIR="$SD_ROOT" \
	PREFIX=/opt/sluice SYSCONFDIR=/opt/sluice/etc install >"$E2E_TMP/install.log" 2>&1 ||
	{ not_ok "make install into the systemd root"; sed 's/^/#   /' "$E2E_TMP/install.log"; e2e_finish; }
UNIT=$SD_ROOT/opt/sluice/lib/systemd/system/sluiced.service
check "the unit is installed under PREFIX (pkg-config systemd with PREFIX)" test -f "$UNIT"
# The lab's level (4 seats, Reject) on the lab's interface.
awk '{ print } /^  serverConcurrencyLimit:/ && !done { print "  interfaces: [sl0]"; done = 1 }' \
	"$CONFIGS/basic.yaml" >"$SD_ROOT/opt/sluice/etc/sluice/sluice.yaml"

score=$(systemd-analyze security --offline=true --no-pager "$UNIT" 2>/dev/null |
	sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
check_num "systemd-analyze security: exposure" "$score" -le 3.0
check "Documentation= names the man pages" grep -qx "Documentation=man:sluiced(8) man:sluicectl(8) man:sluice.yaml(5)" "$UNIT"

sd_boot || { not_ok "systemd boots in its namespace"; e2e_finish; }
ok "systemd boots in its own PID, mount and cgroup namespaces"
sd_link /opt/sluice/lib/systemd/system/sluiced.service
start_service 8080 8 1500 || not_ok "lab service starts"

xdp_on() { ip link show sl0 | grep -q 'prog/xdp'; }
main_pid() { sd systemctl show -P MainPID sluiced.service; }
sockops_links() { # sluice_sockops programs attached through a link
	local id n=0
	for id in $(bpftool -j link show 2>/dev/null | jq -r '.[] | select(.type == "cgroup") | .prog_id'); do
		[ "$(bpftool -j prog show id "$id" 2>/dev/null | jq -r .name)" = sluice_sockops ] && n=$((n + 1))
	done
	echo "$n"
}
journal() { sd journalctl -u sluiced.service --no-pager -o cat "$@"; }
# journal_has PATTERN: up to 5 s for a journal line of the unit matching it.
journal_has() { for _ in $(seq 50); do journal | grep -Eq -- "$1" && return 0; sleep 0.1; done; return 1; }

check "systemctl start sluiced" sd systemctl start sluiced.service
check "active once READY=1 came (Type=notify)" test "$(sd systemctl is-active sluiced.service)" = active
check "XDP attached to sl0" xdp_on
check_num "one sock_ops link" "$(sockops_links)" -eq 1
check "the control socket in RuntimeDirectory answers" sd /opt/sluice/bin/sluicectl levels --json

# Protects: 4 seats held 1.5 s each, then RSTs.
in_cli "$LAB_LOAD" --connect $SRV4 --port 8080 --rate 100 --count 4 --timeout 5 --json --quiet >"$E2E_TMP/fill.json" &
fill=$!
wait_level_field web seats_in_use 4 3
r=$(load --connect $SRV4 --port 8080 --rate 50 --count 5 --timeout 2)
check_num "under the unit, a full level refuses" "$(jq .refused <<<"$r")" -eq 5
wait "$fill"
check_num "... and the admitted were served" "$(jq .ok "$E2E_TMP/fill.json")" -eq 4

check "systemctl reload sluiced" sd systemctl reload sluiced.service
check "... the daemon reloaded (journal)" journal_has "event=reload result=ok"
# Structured fields: the event's pairs are journal fields of their own.
check "journalctl EVENT=reload RESULT=ok finds the reload (structured fields)" \
	bash -c 'for _ in $(seq 50); do [ -n "$("$@" EVENT=reload RESULT=ok)" ] && exit 0; sleep 0.1; done; exit 1' _ \
	nsenter -t "$SD_INIT" -m -p journalctl -u sluiced.service --no-pager -o cat
f=$(sd journalctl -u sluiced.service --no-pager -o json EVENT=reload | tail -1)
check "... with FILE, REASON, LEVELS, PRIORITY 6 and the whole line as MESSAGE" \
	jq -e '.FILE == "/opt/sluice/etc/sluice/sluice.yaml" and .REASON == "control-socket" and (.LEVELS | tonumber) >= 3 and .PRIORITY == "6" and (.MESSAGE | startswith("event=reload result=ok"))' <<<"$f"
n=$(sd journalctl -u sluiced.service --no-pager -o json | jq -s '[.[] | select(.SYSLOG_IDENTIFIER == "sluiced")] | [length, ([.[] | select((.MESSAGE | startswith("event=") | not) and has("EVENT"))] | length)] | @tsv' -r)
check "... and the other lines none: EVENT only on event lines (lines, with EVENT: $n)" \
	bash -c 'set -- $1; [ "$1" -gt 5 ] && [ "$2" = 0 ]' _ "$n"

# Restart: XDP is on sl0 at every sample while one daemon hands over to the next.
pid1=$(main_pid)
( end=$((SECONDS + 20)); while [ $SECONDS -lt $end ] && [ ! -e "$E2E_TMP/watch.stop" ]; do
	if xdp_on; then echo on; else echo off; fi; sleep 0.005; done ) >"$E2E_TMP/watch.log" &
watch=$!
sleep 0.3
check "systemctl restart sluiced" sd systemctl restart sluiced.service
sleep 0.3
touch "$E2E_TMP/watch.stop"; wait "$watch"
pid2=$(main_pid)
check "a new daemon ($pid1 -> $pid2)" test "$pid1" != "$pid2" -a "$pid2" != 0
check_num "restart: samples of sl0 without XDP, of $(wc -l <"$E2E_TMP/watch.log")" "$(grep -c off "$E2E_TMP/watch.log")" -eq 0
check "... the new daemon adopted the data path (journal)" journal_has "took over the pinned sock_ops link"
check_num "... one sock_ops link" "$(sockops_links)" -eq 1

# A crash: no stop job, so ExecStopPost keeps the data path; Restart=always.
sd systemctl kill -s KILL sluiced.service
sleep 0.3
check "crash: XDP stays attached while systemd restarts the daemon" xdp_on
for _ in $(seq 60); do [ "$(sd systemctl is-active sluiced.service)" = active ] && [ "$(main_pid)" != "$pid2" ] && break; sleep 0.1; done
check "crash: restarted by Restart=always" test "$(sd systemctl is-active sluiced.service)" = active
check "crash: still XDP on sl0" xdp_on

# Stop means off.
check "systemctl stop sluiced" sd systemctl stop sluiced.service
check "stop: XDP is off sl0" bash -c '! ip link show sl0 | grep -q prog/xdp'
check_num "stop: no sock_ops link" "$(sockops_links)" -eq 0
check "stop: no pins left ($PIN_DIR is gone)" test ! -e "$PIN_DIR"
r=$(load --connect $SRV4 --port 8080 --rate 50 --count 6 --timeout 5)
check_num "stop: the service is reached with nothing in front (6 at once, limit was 4)" "$(jq .ok <<<"$r")" -eq 6

# disable --now is a stop job too.
sd systemctl enable --runtime sluiced.service >/dev/null 2>&1
check "start again" sd systemctl start sluiced.service
check "... XDP on" xdp_on
check "systemctl disable --runtime --now sluiced" sd systemctl -q disable --runtime --now sluiced.service
check "disable --now: XDP is off sl0, pins gone" bash -c '! ip link show sl0 | grep -q prog/xdp && test ! -e "$1"' _ "$PIN_DIR"
check "... and the stop was logged as a detach" journal_has "sluice is off this host"

# The configuration names where sluiced pins and listens: the unit's
# reload and stop find them there too (sluicectl -c), and stop means off.
CUSTOM_PINS=/sys/fs/bpf/sluice-custom
awk '{ print } /^  serverConcurrencyLimit:/ && !done {
	print "  pinDir: /sys/fs/bpf/sluice-custom"; print "  controlSocket: /run/sluice/custom.sock"; done = 1 }' \
	"$SD_ROOT/opt/sluice/etc/sluice/sluice.yaml" >"$E2E_TMP/custom.yaml"
cp "$E2E_TMP/custom.yaml" "$SD_ROOT/opt/sluice/etc/sluice/sluice.yaml"
check "custom pinDir: systemctl start" sd systemctl start sluiced.service
check "custom pinDir: XDP on sl0, pins in $CUSTOM_PINS" bash -c 'ip link show sl0 | grep -q prog/xdp && test -d "$1"' _ "$CUSTOM_PINS"
check "custom pinDir: sluicectl -c FILE finds the daemon's socket and pins" \
	sd bash -c '/opt/sluice/bin/sluicectl levels -c /opt/sluice/etc/sluice/sluice.yaml --json >/dev/null &&
		/opt/sluice/bin/sluicectl status -c /opt/sluice/etc/sluice/sluice.yaml --json | jq -e .configured >/dev/null'
n0=$(journal | grep -c "event=reload result=ok")
check "custom controlSocket: systemctl reload" sd systemctl reload sluiced.service
check "... the daemon reloaded" bash -c 'for _ in $(seq 50); do [ "$("$@" | grep -c "event=reload result=ok")" -gt '"$n0"' ] && exit 0; sleep 0.1; done; exit 1' _ \
	nsenter -t "$SD_INIT" -m -p journalctl -u sluiced.service --no-pager -o cat
check "custom pinDir: systemctl stop" sd systemctl stop sluiced.service
check "custom pinDir: stop: XDP is off sl0" bash -c '! ip link show sl0 | grep -q prog/xdp'
check_num "custom pinDir: stop: no sock_ops link" "$(sockops_links)" -eq 0
check "custom pinDir: stop: its pins are gone" test ! -e "$CUSTOM_PINS"

[ "$T_FAIL" = 0 ] || { diag "the unit's journal:"; journal | sed 's/^/#   /'; }
sd_shutdown
e2e_finish
