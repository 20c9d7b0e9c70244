#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Server spec.readGroup: a group that may look without being root.  Its
# members read the pinned maps (sluicectl status, conns: the maps
# directory 0750 and every map 0640 of that group, opened read-only) and
# ask the control socket for reports (levels, queues, flows, controller:
# the socket 0660, its directory 0750); changes (reload, shadow) stay the
# daemon's user's, whoever can reach the socket.  Anyone else gets
# nothing.  The group is created here and removed at the end.
source "$(dirname "$0")/lib.sh"
e2e_init "$@"

GROUP=sluice-e2e-ro
created=0
if ! getent group "$GROUP" >/dev/null; then groupadd --system "$GROUP" && created=1; fi
trap '[ "$created" = 1 ] && groupdel "$GROUP"; e2e_cleanup' EXIT
GID=$(getent group "$GROUP" | cut -d: -f3)
check "the group $GROUP exists (gid $GID)" test -n "$GID"
member() { setpriv --reuid=65534 --regid="$GID" --clear-groups -- "$@"; }
outsider() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
# Paths the other users must traverse: the test's directory, the bpffs root.
chmod 0711 "$E2E_TMP" /sys/fs/bpf
SOCK=$E2E_TMP/run/sluiced.sock

sed "s/^  serverConcurrencyLimit: 4 /  readGroup: $GROUP\n&/" "$CONFIGS/basic.yaml" >"$E2E_TMP/ro.yaml"
check "the configuration names the group and validates" \
	bash -c 'grep -q "readGroup: $2" "$1" && "$3" validate "$1" >/dev/null' _ "$E2E_TMP/ro.yaml" "$GROUP" "$SLUICECTL"
start_daemon "$E2E_TMP/ro.yaml" --control-socket "$SOCK" || { not_ok "sluiced starts"; e2e_finish; }
ok "sluiced starts with readGroup $GROUP"
mode() { stat -c '%a %G' "$1"; }
check "pin directory: 750 $GROUP ($(mode "$PIN_DIR"))" test "$(mode "$PIN_DIR")" = "750 $GROUP"
check "maps directory: 750 $GROUP" test "$(mode "$PIN_DIR/maps")" = "750 $GROUP"
check "every map: 640 $GROUP" bash -c 'for f in "$1"/maps/*; do [ "$(stat -c "%a %G" "$f")" = "640 $2" ] || exit 1; done' _ "$PIN_DIR" "$GROUP"
check "programs and links stay the daemon's (700 directories)" \
	bash -c '[ "$(stat -c %a "$1/progs")" = 700 ] && [ "$(stat -c %a "$1/links")" = 700 ]' _ "$PIN_DIR"
check "control socket: 660 $GROUP, in a 750 $GROUP directory" \
	bash -c '[ "$(stat -c "%a %G" "$1")" = "660 $2" ] && [ "$(stat -c "%a %G" "$(dirname "$1")")" = "750 $2" ]' _ "$SOCK" "$GROUP"

# A member, not root.
out=$(member "$SLUICECTL" status --pin-dir "$PIN_DIR" --json 2>&1)
check "a member reads the pins: status --json (configured, the web level)" \
	jq -e '.configured and (.levels | map(.name) | index("web")) != null' <<<"$out"
check "... and conns" bash -c 'setpriv --reuid=65534 --regid="$1" --clear-groups -- "$2" conns --pin-dir "$3" --json | jq -e ".total >= 0" >/dev/null' _ "$GID" "$SLUICECTL" "$PIN_DIR"
check "a member asks for reports: levels --json" \
	bash -c 'setpriv --reuid=65534 --regid="$1" --clear-groups -- "$2" levels --control-socket "$3" --json | jq -e ".levels | length > 0" >/dev/null' _ "$GID" "$SLUICECTL" "$SOCK"
out=$(member "$SLUICECTL" reload --control-socket "$SOCK" 2>&1); rc=$?
check "a member's reload is refused (exit $rc), saying changes are the daemon's user's" \
	bash -c '[ "$1" != 0 ] && grep -q "daemon.s user" <<<"$2"' _ "$rc" "$out"
out=$(member "$SLUICECTL" shadow on --control-socket "$SOCK" 2>&1); rc=$?
check "... and so is shadow on (exit $rc)" bash -c '[ "$1" != 0 ] && grep -q "daemon.s user" <<<"$2"' _ "$rc" "$out"
check "shadow is still off" jq -e '.shadow == false' <<<"$(status_json)"
check_num "no reload happened" "$(grep -c 'event=reload_started' "$E2E_TMP/sluiced.log")" -eq 0
# Anyone else.
out=$(outsider "$SLUICECTL" status --pin-dir "$PIN_DIR" 2>&1); rc=$?
check "an outsider cannot read the pins (exit $rc: permission denied)" \
	bash -c '[ "$1" = 1 ] && grep -qi "permission denied" <<<"$2"' _ "$rc" "$out"
out=$(outsider "$SLUICECTL" levels --control-socket "$SOCK" 2>&1); rc=$?
check "... nor reach the control socket (exit $rc)" bash -c '[ "$1" = 1 ] && grep -qi "permission denied" <<<"$2"' _ "$rc" "$out"
# Root still changes things.
check "root reloads" bash -c '"$1" reload --control-socket "$2" | grep -q reloaded' _ "$SLUICECTL" "$SOCK"
check "clean stop" stop_daemon

# Without readGroup everything is the daemon's alone again.
start_daemon "$CONFIGS/basic.yaml" --control-socket "$SOCK" || not_ok "sluiced starts without readGroup"
check "without readGroup: pins 700/600, socket 600 again" \
	bash -c '[ "$(stat -c %a "$1")" = 700 ] && [ "$(stat -c %a "$1/maps")" = 700 ] && [ "$(stat -c %a "$2")" = 600 ] && for f in "$1"/maps/*; do [ "$(stat -c %a "$f")" = 600 ] || exit 1; done' _ "$PIN_DIR" "$SOCK"
check "clean stop" stop_daemon
sed "s/^  serverConcurrencyLimit: 4 /  readGroup: no-such-group-x\n&/" "$CONFIGS/basic.yaml" >"$E2E_TMP/nogroup.yaml"
"$SLUICED" --config "$E2E_TMP/nogroup.yaml" --iface sl0 --pin-dir "$PIN_DIR" --control-socket "$SOCK" >"$E2E_TMP/ng.log" 2>&1
rc=$?
check "a readGroup that does not exist: sluiced refuses to start (exit $rc), naming it" \
	bash -c '[ "$1" = 1 ] && grep -q "readGroup: no group .no-such-group-x." "$2"' _ "$rc" "$E2E_TMP/ng.log"
check "... and attaches nothing" bash -c '! ip -d link show sl0 | grep -q "prog/xdp"'

e2e_finish
