#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# make install / uninstall into a scratch tree: the programs (that say
# their version), the systemd unit (which systemd-analyze accepts with the
# installed paths), bash completion (which completes commands and a
# command's options), and /etc/sluice/sluice.yaml from the default config,
# never overwritten; uninstall removes all but the config.  Needs no
# namespace: nothing here runs sluice against the host.
source "$(dirname "$0")/lib.sh"

ROOT=$(mktemp -d /tmp/sluice-install.XXXXXX)
trap 'rm -rf "$ROOT"' EXIT
ins() { make -C "$E2E_ROOT" --no-print-directory BUILD="${BUILD:-build}" PREFIX="$ROOT/usr" \
	SYSCONFDIR="$ROOT/etc" "$@" >"$ROOT.log" 2>&1; }

check "make install" ins install
for f in usr/sbin/sluiced usr/bin/sluicectl; do
	check "$f is installed, executable" test -x "$ROOT/$f"
done
check "the unit is installed" test -f "$ROOT/usr/lib/systemd/system/sluiced.service"
check "the completion is installed" test -f "$ROOT/usr/share/bash-completion/completions/sluicectl"
for m in sluiced sluicectl; do
	page=$ROOT/usr/share/man/man8/$m.8
	check "the man page $m(8) is installed" test -f "$page"
	check "$m(8) renders without a warning" bash -c '[ -z "$(MANWIDTH=80 man --warnings -l "$1" 2>&1 >/dev/null)" ]' _ "$page"
done
page5=$ROOT/usr/share/man/man5/sluice.yaml.5
check "the man page sluice.yaml(5) is installed" test -f "$page5"
check "sluice.yaml(5) renders without a warning" bash -c '[ -z "$(MANWIDTH=80 man --warnings -l "$1" 2>&1 >/dev/null)" ]' _ "$page5"
missing=$(MANWIDTH=400 man -l "$page5" 2>/dev/null | tr -d ' ' >"$ROOT.man5"
	"$ROOT/usr/bin/sluicectl" schema --json | jq -r '.[].field' | while read -r f; do grep -qF -- "$f" "$ROOT.man5" || echo "$f"; done)
check "sluice.yaml(5) has every field sluicectl schema knows (missing: ${missing:-none})" test -z "$missing"
check "sluiced(8): the SYNOPSIS is one line, and no option list spills into the DESCRIPTION" \
	bash -c 'txt=$(MANWIDTH=80 man -l "$1" 2>/dev/null); grep -A2 "^SYNOPSIS" <<<"$txt" | grep -qx "       sluiced --config FILE \[OPTIONS\]" && ! sed -n "/^DESCRIPTION/,/^OPTIONS/p" <<<"$txt" | grep -q -- "\[--"' _ "$ROOT/usr/share/man/man8/sluiced.8"
check "sluiced(8) has its options, its signals and its files" \
	bash -c 'MANWIDTH=80 man -l "$1" 2>/dev/null | grep -q -- "--keep-attached" && MANWIDTH=80 man -l "$1" 2>/dev/null | grep -q "^SIGNALS" && MANWIDTH=80 man -l "$1" 2>/dev/null | grep -q "^FILES"' _ "$ROOT/usr/share/man/man8/sluiced.8"
check "sluicectl(8) has every command's usage under COMMANDS" \
	bash -c 'txt=$(MANWIDTH=80 man -l "$1" 2>/dev/null); for c in status top levels explain reload replay signal; do grep -q "Usage: sluicectl $c" <<<"$txt" || exit 1; done' _ "$ROOT/usr/share/man/man8/sluicectl.8"
check "the default configuration is installed" cmp -s "$ROOT/etc/sluice/sluice.yaml" "$E2E_ROOT/configs/default.yaml"
want="$(cat "$E2E_ROOT/VERSION")"
check "sluiced --version says VERSION ($want)" bash -c "'$ROOT/usr/sbin/sluiced' --version | grep -q '^sluiced $want ('"
check "sluicectl --version says VERSION ($want)" bash -c "'$ROOT/usr/bin/sluicectl' --version | grep -q '^sluicectl $want ('"
check "the installed configuration validates" "$ROOT/usr/bin/sluicectl" validate "$ROOT/etc/sluice/sluice.yaml"

unit=$ROOT/usr/lib/systemd/system/sluiced.service
check "the unit starts the installed daemon, keeping the data path attached on restart" \
	grep -qx "ExecStart=$ROOT/usr/sbin/sluiced --config $ROOT/etc/sluice/sluice.yaml --keep-attached" "$unit"
check "the unit reloads through the control socket" grep -qx "ExecReload=$ROOT/usr/bin/sluicectl reload --config $ROOT/etc/sluice/sluice.yaml" "$unit"
check "the unit detaches after a stop that is not a restart" \
	grep -q "exec $ROOT/usr/bin/sluicectl detach --config $ROOT/etc/sluice/sluice.yaml" "$unit"
if command -v systemd-analyze >/dev/null; then
	out=$(systemd-analyze verify --man=no "$unit" 2>&1)
	rc=$?
	if [ "$rc" = 0 ] && [ -z "$out" ]; then ok "systemd-analyze verify accepts the unit"
	else not_ok "systemd-analyze verify: rc $rc: $out"; fi
else
	not_ok "systemd-analyze is missing (make test installs systemd)"
fi

# Completion, as bash runs it.
comp() { # WORDS... -> COMPREPLY, one per line
	PATH="$ROOT/usr/bin:$PATH" bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _sluicectl; printf "%s\n" "${COMPREPLY[@]}"' \
		_ "$ROOT/usr/share/bash-completion/completions/sluicectl" "$@"
}
got=$(comp sluicectl sh)
check "completion: 'sh' gives shadow (got '$got')" test "$got" = shadow
got=$(comp sluicectl s | sort | tr '\n' ' ')
check "completion: 's' gives schema, shadow, signal, simulate, status (got '$got')" test "$got" = "schema shadow signal simulate status "
got=$(comp sluicectl status --j)
check "completion: 'status --j' gives --json (got '$got')" test "$got" = --json

# A second install keeps the operator's configuration.
echo "# mine" >>"$ROOT/etc/sluice/sluice.yaml"
check "install again" ins install
check "an edited configuration is kept" grep -q "^# mine" "$ROOT/etc/sluice/sluice.yaml"
check "make uninstall" ins uninstall
for f in usr/sbin/sluiced usr/bin/sluicectl usr/lib/systemd/system/sluiced.service \
	 usr/share/bash-completion/completions/sluicectl usr/share/man/man8/sluiced.8 \
	 usr/share/man/man8/sluicectl.8 usr/share/man/man5/sluice.yaml.5; do
	check "uninstall removed $f" test ! -e "$ROOT/$f"
done
check "uninstall kept the configuration" grep -q "^# mine" "$ROOT/etc/sluice/sluice.yaml"
rm -f "$ROOT.log" "$ROOT.man5"
e2e_finish
