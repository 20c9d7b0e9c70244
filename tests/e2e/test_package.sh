#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The Debian package, as a distribution builds it and a host installs it:
# `dpkg-buildpackage -b -us -uc -jauto` on a fresh clone (with make check; in
# parallel, as sbuild builds), lintian
# without an error, the files it ships (/etc/sluice/sluice.yaml a
# conffile), then under a real systemd (lib_systemd.sh): installed, not
# started; started, it protects; `dpkg -r` stops it and the data path is
# off, the conffile kept; `dpkg --purge` takes the conffile.  It installs
# the package on this machine for real and purges it at the end, so it
# refuses to run where a sluice package is already installed.
source "$(dirname "$0")/lib.sh"
e2e_init "$@"
source "$(dirname "$0")/lib_systemd.sh"

if dpkg-query -W -f='${Status}' sluice 2>/dev/null | grep -q 'ok installed'; then
	not_ok "a sluice package is installed here already: this test would replace it (dpkg --purge sluice first)"
	e2e_finish
fi
for tool in dpkg-buildpackage dh lintian; do
	command -v "$tool" >/dev/null || { not_ok "$tool is missing (make deps installs debhelper, lintian, dpkg-dev)"; e2e_finish; }
done
installed=
trap '[ -n "$installed" ] && dpkg --purge sluice >/dev/null 2>&1; e2e_cleanup' EXIT

git clone -q "$E2E_ROOT" "$E2E_TMP/src" || { not_ok "git clone"; e2e_finish; }
if (cd "$E2E_TMP/src" && dpkg-buildpackage -b -us -uc -jauto) >"$E2E_TMP/build.log" 2>&1; then
	ok "dpkg-buildpackage -b -us -uc -jauto on a fresh clone"
else
	not_ok "dpkg-buildpackage -b -us -uc -jauto on a fresh clone"; tail -30 "$E2E_TMP/build.log" | sed 's/^/#   /'; e2e_finish
fi
check "... ran make check (the pure layers' unit tests)" grep -q "make.* check$" "$E2E_TMP/build.log"
check "... and passed the builder's parallel=N on to make (debian/rules)" grep -Eq "make.* -j[0-9]+ programs man$" "$E2E_TMP/build.log"
deb=$(ls "$E2E_TMP"/sluice_*_*.deb)
lint=$(lintian --tag-display-limit 0 "$E2E_TMP"/sluice_*.changes 2>&1 | grep -v "running with root privileges")
check "lintian: no error ($(grep -c '^E:' <<<"$lint") errors; $(grep -c '^W:' <<<"$lint") warnings)" \
	bash -c '! grep -q "^E:" <<<"$1"' _ "$lint"
grep '^[EW]:' <<<"$lint" | sed 's/^/# lintian: /'

files=$(dpkg -c "$deb" | awk '{ print $6 }')
for f in ./usr/sbin/sluiced ./usr/bin/sluicectl ./lib/systemd/system/sluiced.service \
	./usr/share/man/man8/sluiced.8.gz ./usr/share/man/man8/sluicectl.8.gz \
	./usr/share/man/man5/sluice.yaml.5.gz ./usr/share/bash-completion/completions/sluicectl \
	./etc/sluice/sluice.yaml ./usr/share/doc/sluice/copyright; do
	check "the package ships $f" grep -qx -- "$f" <<<"$files"
done
dpkg-deb -e "$deb" "$E2E_TMP/control"
check "/etc/sluice/sluice.yaml is a conffile" grep -qx /etc/sluice/sluice.yaml "$E2E_TMP/control/conffiles"
check "the shipped unit runs the shipped daemon" bash -c 'dpkg-deb --fsys-tarfile "$1" | tar -xO ./lib/systemd/system/sluiced.service | grep -q "^ExecStart=/usr/sbin/sluiced --config /etc/sluice/sluice.yaml --keep-attached$"' _ "$deb"

sd_boot || { not_ok "systemd boots"; e2e_finish; }
start_service 8080 8 1500 || not_ok "lab service starts"
installed=1
cp "$deb" "$SD_ROOT/opt/" # systemd's namespace has its own /tmp
# A container image's policy-rc.d ("exit 101": start nothing) would keep
# the maintainer scripts from stopping the unit; in systemd's namespace
# it is what a host has: none that refuses.
if [ -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 0\n' >"$SD_ROOT/opt/policy-rc.d"; chmod +x "$SD_ROOT/opt/policy-rc.d"
	sd mount --bind /opt/policy-rc.d /usr/sbin/policy-rc.d
fi
check "dpkg -i (under systemd)" sd dpkg -i "/opt/${deb##*/}"
check "installed: the programs" test -x /usr/sbin/sluiced -a -x /usr/bin/sluicectl
sd_link /lib/systemd/system/sluiced.service
check "installed disabled and not started" \
	test "$(sd systemctl is-active sluiced.service)" = inactive -a ! -e "$PIN_DIR"
# The operator's configuration: the lab level on sl0 (a bind mount in
# systemd's namespace; the conffile on disk stays the package's).
awk '{ print } /^  serverConcurrencyLimit:/ && !done { print "  interfaces: [sl0]"; done = 1 }' \
	"$CONFIGS/basic.yaml" >"$SD_ROOT/opt/lab.yaml"
sd mount --bind /opt/lab.yaml /etc/sluice/sluice.yaml
check "sluicectl validate (the installed one) accepts it" sd /usr/bin/sluicectl validate /etc/sluice/sluice.yaml
check "systemctl start sluiced" sd systemctl start sluiced.service
check "XDP on sl0" bash -c 'ip link show sl0 | grep -q prog/xdp'
in_cli "$LAB_LOAD" --connect $SRV4 --port 8080 --rate 100 --count 4 --timeout 5 --json --quiet >/dev/null &
fill=$!
wait_level_field web seats_in_use 4 3
r=$(load --connect $SRV4 --port 8080 --rate 50 --count 3 --timeout 2)
check_num "the installed package protects: a full level refuses" "$(jq .refused <<<"$r")" -eq 3
wait "$fill"

check "dpkg -r sluice" sd dpkg -r sluice
check "removed: XDP off sl0" bash -c '! ip link show sl0 | grep -q prog/xdp'
check "removed: no pins" test ! -e "$PIN_DIR"
check "removed: the programs are gone" test ! -e /usr/sbin/sluiced -a ! -e /usr/bin/sluicectl
check "removed: the conffile is kept" test -f /etc/sluice/sluice.yaml
r=$(load --connect $SRV4 --port 8080 --rate 50 --count 6 --timeout 5)
check_num "removed: the service is reached with nothing in front" "$(jq .ok <<<"$r")" -eq 6
sd umount /etc/sluice/sluice.yaml
check "dpkg --purge sluice" sd dpkg --purge sluice
check "purged: /etc/sluice is gone" test ! -e /etc/sluice
installed=
sd_shutdown
e2e_finish
