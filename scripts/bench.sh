#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# make bench: figures and ratios against baselines measured in the same run.
# Results are recorded in docs/BENCHMARKS.md together with this command.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
if [ "$(id -u)" -ne 0 ]; then
	echo "bench: needs root (BPF_PROG_TEST_RUN)" >&2
	exit 1
fi
echo "== XDP data path: the suggested configuration, a classification-heavy one, one that names no client address"
build/bench_xdp configs/demo.yaml
echo
build/bench_xdp "${BENCH_CONFIG:-tests/packet/classify/labels.yaml}"
echo
build/bench_xdp tests/bench/ports-only.yaml
echo
echo "== classification at scale: compile time, table size, XDP cost per SYN by FlowSchema count"
build/bench_classify 50 200 800 3200 10000 20000
build/bench_classify --mixed 50 200 800 3200 10000 20000
echo
echo "== daemon engines"
build/bench_engines
echo
echo "== the daemon's walk of the connection table: one key at a time (the baseline) and batched"
build/bench_walk
echo
echo "== cost on a normal day: nginx and ab, nothing in front against sluice; CPU per connection (about 3 minutes)"
scripts/bench_cost.sh
echo
echo "== surge: no protection, Aperture's mode, sluice's mode, HAProxy; clients that give up after 10 s, then 3 s (about 16 minutes)"
SURGE_TIMEOUT=10 scripts/bench_surge.sh build/bench-surge-t10
SURGE_TIMEOUT=3 scripts/bench_surge.sh build/bench-surge-t3
echo
echo "== PostgreSQL 15 under a pgbench -C storm: nothing in front, HAProxy, sluice (about 3 minutes)"
scripts/bench_pg.sh
echo
echo "== refusal paths: every RST delivered, on a bare client end too; sluice's programs' time per RST by path (about 30 s)"
scripts/bench_refusal.sh
echo
echo "== the e2e tests' figures of speed, which they measure but do not assert (about 12 minutes)"
scripts/bench_figures.sh
echo
echo "== lab: connect latency, protection against peers, a spoofed flood, a crash under load (about 20 minutes)"
scripts/bench_lab.sh
if [[ " ${BENCH_PARTS:-A A2 B F R S} " == *" S "* ]]; then
	echo
	echo "== soak: mixed load, reloads, a kill -9, a flood; invariants every second (SOAK_SECS, 600)"
	scripts/soak.sh
fi
