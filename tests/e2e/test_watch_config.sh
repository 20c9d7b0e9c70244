#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# sluiced --watch-config, the way a Kubernetes ConfigMap volume changes a
# file: the kubelet writes the new version into a fresh ..TIMESTAMP
# directory and swaps the ..data symlink the file's own symlink goes
# through.  The change is reloaded within seconds (logged with its reason),
# a touch that changes no byte is not, and a broken version changes
# nothing and leaves the daemon running the old one.
source "$(dirname "$0")/lib.sh"
e2e_init "$@"

CM=$E2E_TMP/configmap
# publish NAME FILE [MODE]: the kubelet's atomic update of the volume.
publish() {
	mkdir -p "$CM/..$1"
	cp "$2" "$CM/..$1/sluice.yaml"
	[ -z "${3:-}" ] || chmod "$3" "$CM/..$1/sluice.yaml"
	ln -sfn "..$1" "$CM/..data_tmp"
	mv -T "$CM/..data_tmp" "$CM/..data"
	[ -L "$CM/sluice.yaml" ] || ln -s ..data/sluice.yaml "$CM/sluice.yaml"
}
web_limit() { level_field web limit; }
reloads() { grep -c "event=reload result=ok .*reason=file-changed" "$E2E_TMP/sluiced.log"; }

# basic.yaml: web gets ceil(4 x 30 / 35) = 4 seats; v2 doubles the budget: ceil(8 x 30 / 35) = 7.
publish v1 "$CONFIGS/basic.yaml"
sed 's/serverConcurrencyLimit: 4 /serverConcurrencyLimit: 8 /' "$CONFIGS/basic.yaml" >"$E2E_TMP/v2.yaml"
check "v2 differs from v1 (the budget)" bash -c '! cmp -s "$1" "$2"' _ "$CONFIGS/basic.yaml" "$E2E_TMP/v2.yaml"
start_daemon "$CM/sluice.yaml" --watch-config || { not_ok "sluiced starts"; e2e_finish; }
ok "sluiced starts on the ConfigMap-style file, with --watch-config"
check_num "v1: web has 4 seats" "$(web_limit)" -eq 4

publish v2 "$E2E_TMP/v2.yaml"
rm -rf "$CM/..v1"
for _ in $(seq 60); do [ "$(web_limit)" = 7 ] && break; sleep 0.1; done
check_num "the ..data swap to v2 is reloaded within 6 s: web has 7 seats" "$(web_limit)" -eq 7
check_num "... logged once, with its reason (event=reload result=ok reason=file-changed)" "$(reloads)" -eq 1

touch "$CM/..v2/sluice.yaml"
publish v2b "$E2E_TMP/v2.yaml" # the same bytes again
sleep 1.5
check_num "a touch and a republish of the same bytes reload nothing" "$(reloads)" -eq 1

echo "kind: Nonsense" >"$E2E_TMP/v3.yaml"
publish v3 "$E2E_TMP/v3.yaml"
for _ in $(seq 60); do grep -q "event=reload result=failed.*reason=file-changed" "$E2E_TMP/sluiced.log" && break; sleep 0.1; done
check "a broken version is tried and refused (event=reload result=failed reason=file-changed)" \
	grep -q "event=reload result=failed .*reason=file-changed" "$E2E_TMP/sluiced.log"
check_num "... and the old configuration keeps running (web 7 seats)" "$(web_limit)" -eq 7
check "... with the daemon alive" kill -0 "$DAEMON_PID"

publish v4 "$CONFIGS/basic.yaml"
for _ in $(seq 60); do [ "$(web_limit)" = 4 ] && break; sleep 0.1; done
check_num "the next good version is applied (back to 4 seats)" "$(web_limit)" -eq 4

# A version anyone may write (issue 26): whoever can write it steers sluice.
publish v5 "$E2E_TMP/v2.yaml" 0666
for _ in $(seq 60); do grep -q "writable by anyone" "$E2E_TMP/sluiced.log" && break; sleep 0.1; done
check "a world-writable version is refused, naming the mode and the fix" \
	grep -q "sluice.yaml: error: writable by anyone (mode 0666): refused.*chmod go-w" "$E2E_TMP/sluiced.log"
check_num "... and the old configuration keeps running (web 4 seats)" "$(web_limit)" -eq 4
check "clean stop" stop_daemon

# ... nor does the daemon start on one.
cp "$CONFIGS/basic.yaml" "$E2E_TMP/open.yaml"
chmod 0662 "$E2E_TMP/open.yaml"
timeout 10 "$SLUICED" --config "$E2E_TMP/open.yaml" --iface sl0 --pin-dir "$PIN_DIR" \
	--control-socket "$E2E_TMP/ctl2.sock" >"$E2E_TMP/open.log" 2>&1
check "sluiced refuses to start on a file others may write (exit $?)" \
	grep -q "writable by anyone (mode 0662)" "$E2E_TMP/open.log"

e2e_finish
