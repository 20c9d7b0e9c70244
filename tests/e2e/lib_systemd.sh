# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# A real systemd (PID 1 of its own PID, mount and cgroup namespaces) for the
# tests of what the shipped unit and package do: systemctl start, reload,
# restart and stop, and dpkg's maintainer scripts, all against the service
# manager that runs them on a host.  Source after lib.sh and e2e_init, so
# systemd shares the lab's network namespace and private bpffs.
#
# Hermetic by construction: SYSTEMD_UNIT_PATH holds only the units a test
# puts in SD_UNITS (plus empty stand-ins for the targets a service's default
# dependencies name), so nothing of the host's boot runs (no tmpfiles
# --remove, no udev trigger, no sysctl).  /run, /tmp and the journal live on
# tmpfs in systemd's mount namespace; $SD_ROOT/opt is mounted on /opt there,
# so `make install DESTDIR=$SD_ROOT PREFIX=/opt/...` is what systemd sees.

SD_UNITS=$E2E_TMP/sd-units
SD_ROOT=$E2E_TMP/sd-root
mkdir -p "$SD_UNITS" "$SD_ROOT/opt"

# The targets every service's default dependencies order against, empty.
for t in sysinit basic multi-user shutdown network network-online sockets timers paths \
	local-fs remote-fs slices; do
	printf '[Unit]\nDescription=%s (lab stand-in)\n' "$t" >"$SD_UNITS/$t.target"
done
printf '[Unit]\nDescription=the lab\nWants=systemd-journald.socket systemd-journald-dev-log.socket\n' >"$SD_UNITS/lab.target"
# journald, so that logs, `journalctl EVENT=...` and --log-level work as on a host.
cp /lib/systemd/system/systemd-journald.service /lib/systemd/system/systemd-journald.socket \
	/lib/systemd/system/systemd-journald-dev-log.socket "$SD_UNITS/"

SD_INIT=
# sd_boot: start systemd; sets SD_INIT (its PID here) once it answers.
sd_boot() {
	unshare --pid --fork --mount-proc --cgroup --propagation private bash -c '
		mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/system /run/lab-units &&
		cp -a "$1"/. /run/lab-units/ && mount --bind "$2" /opt &&
		mount -t tmpfs tmpfs /tmp && mount -t tmpfs tmpfs /var/log/journal || exit 1
		exec env container=sluice-lab SYSTEMD_UNIT_PATH=/run/lab-units \
			/lib/systemd/systemd --system --unit=lab.target --log-target=console --log-level=notice
	' _ "$SD_UNITS" "$SD_ROOT/opt" >"$E2E_TMP/systemd.log" 2>&1 &
	E2E_PIDS+=($!)
	SD_UNSHARE=$!
	for _ in $(seq 100); do
		SD_INIT=$(pgrep -P "$SD_UNSHARE" | head -1)
		[ -n "$SD_INIT" ] && sd systemctl is-system-running >/dev/null 2>&1 && return 0
		case $(sd systemctl is-system-running 2>/dev/null) in running|degraded) return 0 ;; esac
		sleep 0.1
	done
	diag "systemd did not come up; its console:"
	sed 's/^/#   /' "$E2E_TMP/systemd.log"
	return 1
}

# sd CMD...: run in systemd's namespaces (its /run, /opt and /tmp).
sd() { nsenter -t "$SD_INIT" -m -p "$@"; }

# sd_link UNIT_FILE: make a unit file in systemd's view known to it.
sd_link() { sd ln -sf "$1" /run/lab-units/ && sd systemctl daemon-reload; }

# sd_shutdown: SIGKILL to PID 1 ends the whole namespace, at once.
sd_shutdown() {
	[ -n "$SD_INIT" ] && kill -9 "$SD_INIT" 2>/dev/null
	wait "$SD_UNSHARE" 2>/dev/null
	SD_INIT=
}
