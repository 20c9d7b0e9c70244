#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The kernel matrix's kernels: Debian 12's own packages, downloaded with
# apt-get and extracted into a cache outside this host's boot path (nothing
# is installed; the host keeps booting its own kernel).  Idempotent: a
# kernel already extracted is kept.
#
#   scripts/fetch-kernels.sh          (root)
#   env: SLUICE_KERNEL_CACHE  (/var/cache/sluice/kernels)
#        KERNEL_PKGS          package names (default: the newest 6.1 and
#                             6.12 builds Debian 12's archive has)
#
# Prints one extracted kernel directory per line: <cache>/<uname -r>.
set -euo pipefail

CACHE=${SLUICE_KERNEL_CACHE:-/var/cache/sluice/kernels}

die() { echo "fetch-kernels: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (apt-get download into $CACHE)"

# The packages: Debian 12's kernel (what linux-image-amd64 pulls: 6.1) and
# the newest 6.12 build of its archive (bookworm-backports/-security).
default_pkgs() {
	local k61 k612
	k61=$(apt-cache depends linux-image-amd64 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-6\.1\.0-[0-9]+-amd64$/ { print $2; exit }')
	k612=$(apt-cache pkgnames linux-image-6.12. 2>/dev/null |
		grep -E '^linux-image-6\.12\.[0-9]+\+deb12-amd64$' | sort -V | tail -n 1)
	[ -n "$k61" ] || die "apt-cache names no 6.1 kernel for linux-image-amd64 (apt-get update?)"
	[ -n "$k612" ] || die "apt-cache names no linux-image-6.12.*+deb12-amd64 (is bookworm-backports or -security in sources.list?)"
	echo "$k61 $k612"
}

pkgs=${KERNEL_PKGS:-}
if [ -z "$pkgs" ]; then
	pkgs=$(default_pkgs 2>/dev/null) || { apt-get update -qq >/dev/null; pkgs=$(default_pkgs); }
fi

mkdir -p "$CACHE/debs"
for pkg in $pkgs; do
	kver=${pkg#linux-image-}
	dir=$CACHE/$kver
	if ! ls "$dir"/boot/vmlinuz-* >/dev/null 2>&1; then
		(cd "$CACHE/debs" && { ls "${pkg}"_*.deb >/dev/null 2>&1 || apt-get download -q "$pkg" >/dev/null; }) ||
			die "apt-get download $pkg failed"
		rm -rf "$dir.tmp"
		dpkg-deb -x "$CACHE/debs/${pkg}"_*.deb "$dir.tmp"
		[ -d "$dir.tmp/lib/modules/$kver" ] || die "$pkg holds no lib/modules/$kver"
		depmod -b "$dir.tmp" "$kver"
		rm -rf "$dir"
		mv "$dir.tmp" "$dir"
		rm -f "$CACHE/debs/${pkg}"_*.deb
	fi
	echo "$dir"
done
