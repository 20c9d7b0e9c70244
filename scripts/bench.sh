#!/usr/bin/env bash
# make bench: figures and ratios against baselines measured in the same run.
# Results are recorded in docs/BENCHMARKS.md together with this command.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
if [ "$(id -u)" -ne 0 ]; then
	echo "bench: needs root (BPF_PROG_TEST_RUN)" >&2
	exit 1
fi
echo "== XDP data path"
build/bench_xdp "${BENCH_CONFIG:-tests/packet/classify/labels.yaml}"
echo
echo "== classification at scale: compile time, table size, XDP cost per SYN by FlowSchema count"
build/bench_classify 50 200 800 3200 10000 20000
build/bench_classify --mixed 50 200 800 3200 10000 20000
echo
echo "== daemon engines"
build/bench_engines
echo
echo "== surge: no protection, Aperture's mode, sluice's mode, HAProxy (about 8 minutes)"
scripts/bench_surge.sh
echo
echo "== lab: connect latency, protection against peers, a spoofed flood, a crash under load (about 20 minutes)"
scripts/bench_lab.sh
if [[ " ${BENCH_PARTS:-A A2 B F R S} " == *" S "* ]]; then
	echo
	echo "== soak: mixed load, reloads, a kill -9, a flood; invariants every second (SOAK_SECS, 600)"
	scripts/soak.sh
fi
