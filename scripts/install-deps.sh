#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Install the Debian packages sluice needs to build, test and run its demo.
# Idempotent: prints nothing and exits 0 when everything is already present.
#
#   scripts/install-deps.sh [--demo | --bench] [--list]
#     (none)   what make builds and make test runs
#     --demo   only what make demo needs: the build and the lab
#     --bench  make test's and what make bench compares sluice against
#     --list   print the packages, one per line, and install nothing
set -euo pipefail

# What `make` (every program, test and tool of the tree) needs.
BUILD_PKGS=(
  build-essential pkg-config
  clang llvm
  libbpf-dev bpftool libelf-dev zlib1g-dev
  libyaml-dev libcmocka-dev libpcre2-dev libjansson-dev
  libsystemd-dev linux-libc-dev
  libcurl4-openssl-dev    # the fleet's etcd client (HTTP, TLS)
)
# The lab the demo runs in: namespaces, veths, its report.
LAB_PKGS=(iproute2 util-linux procps jq ethtool bsdextrautils)
# The rest of make test.
TEST_PKGS=(
  libclang-rt-14-dev      # make fuzz-replay: libFuzzer's runtime
  curl
  tcpdump                 # capturing a refusal on the wire
  systemd help2man man-db
  prometheus gnuplot-nox
  shellcheck              # e2e/test_cli: the bash completion is shellcheck-clean
  debhelper lintian dpkg-dev  # e2e/test_package: dpkg-buildpackage -b, lintian
  postgresql-15           # e2e/test_postgres: a real server and pgbench under a storm
  qemu-system-x86 busybox-static kmod cpio zstd xz-utils  # the kernel matrix's guests (tests/kernels/)
  etcd-server etcd-client openssl  # the fleet's etcd (its packaged service is not started), TLS certificates
)
# make bench also measures sluice against its peers on the same lab.
# The cost part (scripts/bench_cost.sh): nginx, ApacheBench and perf.
BENCH_PKGS=(nftables haproxy nginx-light apache2-utils linux-perf)

PKGS=("${BUILD_PKGS[@]}" "${LAB_PKGS[@]}")
list=0
for arg in "$@"; do
  case $arg in
  --demo) demo=1 ;;
  --bench) PKGS+=("${TEST_PKGS[@]}" "${BENCH_PKGS[@]}"); bench=1 ;;
  --list) list=1 ;;
  *) echo "install-deps: unknown option $arg (--demo, --bench, --list)" >&2; exit 2 ;;
  esac
done
[ -n "${demo:-}" ] || [ -n "${bench:-}" ] || PKGS+=("${TEST_PKGS[@]}")
if [ $list -eq 1 ]; then
  printf '%s\n' "${PKGS[@]}"
  exit 0
fi

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]}; run as root to install them" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
# policy-rc.d 101: packages with a service (haproxy, prometheus) must not
# start it here (the suite needs only promtool).
printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d.sluice
chmod +x /usr/sbin/policy-rc.d.sluice
[ -e /usr/sbin/policy-rc.d ] || ln -s policy-rc.d.sluice /usr/sbin/policy-rc.d
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
[ -L /usr/sbin/policy-rc.d ] && [ "$(readlink /usr/sbin/policy-rc.d)" = policy-rc.d.sluice ] && rm -f /usr/sbin/policy-rc.d
rm -f /usr/sbin/policy-rc.d.sluice
