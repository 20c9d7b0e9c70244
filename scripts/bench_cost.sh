#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# make bench, cost part (issue 25): what sluice costs a fast service on a
# normal day.  nginx (2 workers, a 612-byte page) in the lab's server
# namespace; ApacheBench without keep-alive (a new TCP connection per
# request: `ab -n COST_N -c 32`) from the client namespace.
#
#  1. Rate: COST_ROUNDS (15) rounds of COST_N (8000) connections, each
#     round: nothing attached; the empty
#     hooks (tests/bpf/hooks_empty.bpf.c: an XDP program that passes, in
#     native mode on the lab's veth, and a sock_ops program that does
#     nothing, on the cgroup sluiced uses), which is what XDP and sock_ops
#     cost on this device before sluice does anything in them; and sluiced
#     attached with one level far from its limit (every connection is
#     classified, seated, tracked and released): with sock_ops on the
#     cgroup2 root (the default: every socket of the host, ab's own
#     included) and on nginx's own cgroup (sluiced --cgroup, as where the
#     clients are on other hosts).  Requests/s per round; the ratios of
#     the medians, and the median and quartiles of the rounds' own ratios
#     (each arm against the round's "nothing"): this machine's rate drifts
#     by 20 % from second to second, so many short rounds, each paired
#     with its own baseline, say more than a few long ones.
#  2. CPU: COST_CPU_ROUNDS (3) times a round (COST_CPU_N, 20000
#     connections) with the empty hooks, then one with sluice, then one
#     with sluice's sock_ops on nginx's cgroup (what a host whose clients
#     are elsewhere pays: ab's own sockets are not sluice's), with
#     kernel.bpf_stats_enabled=1 (the median of the rounds is the figure):
#     each program's runs and run time (bpftool), the daemon's CPU (its
#     threads' schedstat run time), per connection sluice admitted.
#     Against part 1's busy CPU per request with nothing in front (the
#     machine's, from /proc/stat, steal excluded): the share of a request's
#     CPU that sluice's work takes, and the rate a CPU-bound service keeps.
#  3. Where the time goes: `perf record -a -g` over one more round with
#     sluice (COST_PERF=0 skips it); the top symbols, by self time.
#
# Reports, asserts nothing (docs/BENCHMARKS.md records the figures and
# the goals: rate >= 0.97x, BPF + daemon <= 2 us per admitted connection).
# Every load is bounded in count and time.
#
#   scripts/bench_cost.sh          (root; COST_N, COST_ROUNDS, COST_CPU_N, COST_CPU_ROUNDS, COST_PERF)
source "$(dirname "$0")/../tests/e2e/lib.sh"
e2e_init "$@"

N=${COST_N:-8000}
ROUNDS=${COST_ROUNDS:-15}
CPU_N=${COST_CPU_N:-20000} # the CPU round: long enough that start-up costs fade
PORT=8088
for t in nginx ab bpftool; do
	command -v "$t" >/dev/null || { echo "bench_cost: $t is missing (make bench installs it)" >&2; exit 1; }
done

# ---- nginx ----------------------------------------------------------------------
NGX=$E2E_TMP/nginx
mkdir -p "$NGX/html" "$NGX/logs"
head -c 612 /dev/zero | tr '\0' 'x' >"$NGX/html/index.html"
cat >"$NGX/nginx.conf" <<CONF
daemon on;
worker_processes 2;
user www-data;
pid $NGX/nginx.pid;
error_log $NGX/logs/error.log warn;
events { worker_connections 4096; }
http {
	access_log off;
	client_body_temp_path $NGX/body;
	proxy_temp_path $NGX/proxy;
	fastcgi_temp_path $NGX/fastcgi;
	uwsgi_temp_path $NGX/uwsgi;
	scgi_temp_path $NGX/scgi;
	keepalive_timeout 0;
	server {
		listen $SRV4:$PORT backlog=4096 reuseport;
		root $NGX/html;
	}
}
CONF
stop_nginx() { [ -e "$NGX/nginx.pid" ] && kill -TERM "$(cat "$NGX/nginx.pid" 2>/dev/null)" 2>/dev/null; }
trap 'stop_nginx; hooks_off 2>/dev/null; rm -rf "$HOOKS"; sleep 0.2; rmdir "$NGX_CG" 2>/dev/null; e2e_cleanup' EXIT

cat >"$E2E_TMP/wide.yaml" <<'YAML'
apiVersion: sluice/v1
kind: Server
metadata: {name: bench}
spec: {serverConcurrencyLimit: 1000000, tableSizes: {connections: 262144}}
YAML

# The empty hooks, attached and detached where sluiced attaches its own.
CG=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts) # where sluiced attaches (lib/cgroup_path.c)
HOOKS=/sys/fs/bpf/bench-hooks
bpftool prog loadall "$B/tests/hooks_empty.bpf.o" "$HOOKS" ||
	{ echo "bench_cost: cannot load the empty hooks" >&2; exit 1; }
hooks_on() {
	ip link set dev sl0 xdpdrv pinned "$HOOKS/empty_xdp" &&
		bpftool cgroup attach "$CG" sock_ops pinned "$HOOKS/empty_sockops" multi
}
hooks_off() {
	ip link set dev sl0 xdpdrv off
	bpftool cgroup detach "$CG" sock_ops pinned "$HOOKS/empty_sockops" 2>/dev/null
}

# nginx in a cgroup of its own, for the scoped arm, and started there: a
# socket belongs to the cgroup of the task that created it, and an
# accepted one to its listener's, so moving nginx after it listens would
# leave every connection outside (sock_ops would see none of them, and
# their seats would wait for the handshake time-out).
NGX_CG=$CG/sluice-bench-nginx.$$
mkdir -p "$NGX_CG" || { echo "bench_cost: cannot create $NGX_CG" >&2; exit 1; }
chmod 0755 "$E2E_TMP" "$NGX" "$NGX/html" && chmod 0644 "$NGX/html/index.html"
sh -c 'echo $$ >"$1/cgroup.procs" && exec nginx -p "$2" -c "$2/nginx.conf"' _ "$NGX_CG" "$NGX" ||
	{ echo "bench_cost: nginx did not start in $NGX_CG" >&2; cat "$NGX/logs/error.log" >&2; exit 1; }

# busy_ticks: the machine's CPU time so far, every CPU, in USER_HZ ticks:
# all but idle, iowait and steal (the time the hypervisor gave others).
busy_ticks() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat; }
HZ=$(getconf CLK_TCK)
# ab_run OUT [N]: one bounded ab run; prints requests/s (0 when ab failed),
# and leaves in OUT.busy the machine's busy CPU per request (us).
ab_run() {
	local b0 b1
	b0=$(busy_ticks)
	in_cli timeout 120 ab -q -n "${2:-$N}" -c 32 -s 10 "http://$SRV4:$PORT/" >"$1" 2>&1
	b1=$(busy_ticks)
	awk -v t=$((b1 - b0)) -v hz="$HZ" -v n="${2:-$N}" 'BEGIN { printf "%.2f\n", t * 1e6 / hz / n }' >"$1.busy"
	awk '/^Requests per second:/ { r = $4 } /^Failed requests:/ { f = $3 }
	     END { if (f != 0) r = 0; printf "%.0f\n", r + 0 }' "$1"
}
# quartiles: "q1 median q3" of the numbers on stdin (nearest rank).
quartiles() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (!NR) { print "0 0 0"; exit }
		q1 = int((NR + 3) / 4); q3 = int((3 * NR + 3) / 4); m = int((NR + 1) / 2)
		printf "%.3f %.3f %.3f\n", v[q1], v[m], v[q3] }'
}

# Warm up both paths once (ARP, nginx's workers, page cache).
in_cli timeout 60 ab -q -n 2000 -c 32 "http://$SRV4:$PORT/" >/dev/null 2>&1

# ---- 1. rate, alternating rounds --------------------------------------------------
echo "1. connection rate: nginx, ab -n $N -c 32 without keep-alive, $ROUNDS rounds of each, interleaved"
: >"$E2E_TMP/without"; : >"$E2E_TMP/hooks"; : >"$E2E_TMP/with"; : >"$E2E_TMP/scoped"; : >"$E2E_TMP/ratios"; : >"$E2E_TMP/cpu-ratios"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a ? b / a : 0 }'; }
for r in $(seq "$ROUNDS"); do
	a=$(ab_run "$E2E_TMP/ab-without-$r")
	echo "$a" >>"$E2E_TMP/without"
	hooks_on || { echo "bench_cost: cannot attach the empty hooks" >&2; exit 1; }
	h=$(ab_run "$E2E_TMP/ab-hooks-$r")
	hooks_off
	echo "$h" >>"$E2E_TMP/hooks"
	start_daemon "$E2E_TMP/wide.yaml" || exit 1
	b=$(ab_run "$E2E_TMP/ab-with-$r")
	echo "$b" >>"$E2E_TMP/with"
	stop_daemon
	start_daemon "$E2E_TMP/wide.yaml" --cgroup "$NGX_CG" || exit 1
	c=$(ab_run "$E2E_TMP/ab-scoped-$r")
	echo "$c" >>"$E2E_TMP/scoped"
	stop_daemon
	printf '  round %2d: nothing %6d/s  empty hooks %6d/s (%.2fx)  sluice %6d/s (%.2fx)  scoped %6d/s (%.2fx)\n' \
		"$r" "$a" "$h" "$(ratio "$a" "$h")" "$b" "$(ratio "$a" "$b")" "$c" "$(ratio "$a" "$c")"
	echo "$(ratio "$a" "$h") $(ratio "$a" "$b") $(ratio "$a" "$c") $(ratio "$h" "$b")" >>"$E2E_TMP/ratios"
	# Busy CPU per request, nothing's over each arm's: the rate each arm
	# would keep if the machine's CPU were all the service had.
	bw=$(cat "$E2E_TMP/ab-without-$r.busy"); bh=$(cat "$E2E_TMP/ab-hooks-$r.busy")
	bs=$(cat "$E2E_TMP/ab-with-$r.busy"); bc=$(cat "$E2E_TMP/ab-scoped-$r.busy")
	echo "$(ratio "$bh" "$bw") $(ratio "$bs" "$bw") $(ratio "$bc" "$bw") $(ratio "$bs" "$bh") $bw $bh $bs $bc" >>"$E2E_TMP/cpu-ratios"
done
mw=$(median <"$E2E_TMP/without"); mh=$(median <"$E2E_TMP/hooks")
ms=$(median <"$E2E_TMP/with"); mc=$(median <"$E2E_TMP/scoped")
printf '  medians: nothing %d/s; empty hooks %d/s (%sx); sluice %d/s (%sx; goal >= 0.97x);\n' \
	"$mw" "$mh" "$(ratio "$mw" "$mh")" "$ms" "$(ratio "$mw" "$ms")"
printf '           sluice with sock_ops on nginx'"'"'s cgroup %d/s (%sx)\n' "$mc" "$(ratio "$mw" "$mc")"
printf '  sluice against the empty hooks: %sx (what sluice does in them)\n' "$(ratio "$mh" "$ms")"
# The rounds' own ratios: col 1 empty hooks, 2 sluice, 3 scoped (each
# against the round's nothing), 4 sluice against the round's empty hooks.
paired() { awk -v c="$1" '{ print $c }' "$E2E_TMP/ratios" | quartiles; }
printf '  per round (median [quartiles]): empty hooks %s; sluice %s (goal >= 0.97x); scoped %s;\n' \
	"$(paired 1 | awk '{ printf "%sx [%s-%s]", $2, $1, $3 }')" \
	"$(paired 2 | awk '{ printf "%sx [%s-%s]", $2, $1, $3 }')" \
	"$(paired 3 | awk '{ printf "%sx [%s-%s]", $2, $1, $3 }')"
printf '                 sluice against the empty hooks %s\n' "$(paired 4 | awk '{ printf "%sx [%s-%s]", $2, $1, $3 }')"
# The same from the machine's busy CPU per request (/proc/stat, steal
# excluded), which the host's drift moves far less than the rate.
cpu_paired() { awk -v c="$1" '{ print $c }' "$E2E_TMP/cpu-ratios" | quartiles; }
printf '  busy CPU per request, median: nothing %s us, empty hooks %s, sluice %s, scoped %s\n' \
	"$(cpu_paired 5 | awk '{ print $2 }')" "$(cpu_paired 6 | awk '{ print $2 }')" \
	"$(cpu_paired 7 | awk '{ print $2 }')" "$(cpu_paired 8 | awk '{ print $2 }')"
printf '  as a CPU-bound rate, per round (median [quartiles]): empty hooks %s; sluice %s (goal >= 0.97x); scoped %s;\n' \
	"$(cpu_paired 1 | awk '{ printf "%sx [%s-%s]", $2, $1, $3 }')" \
	"$(cpu_paired 2 | awk '{ printf "%sx [%s-%s]", $2, $1, $3 }')" \
	"$(cpu_paired 3 | awk '{ printf "%sx [%s-%s]", $2, $1, $3 }')"
printf '                 sluice against the empty hooks %s\n' "$(cpu_paired 4 | awk '{ printf "%sx [%s-%s]", $2, $1, $3 }')"

# ---- 2. CPU per connection ------------------------------------------------------------
# prog_stats PREFIX: "name run_cnt run_time_ns" for the programs named so.
prog_stats() {
	bpftool prog show --json | jq -r --arg p "$1" '.[] | select(.name | startswith($p)) |
		"\(.name) \(.run_cnt // 0) \(.run_time_ns // 0)"' | sort
}
# daemon_ns: the daemon's CPU time so far, every thread (schedstat, ns).
daemon_ns() { cat /proc/"$DAEMON_PID"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }
admitted() { "$SLUICECTL" status --pin-dir "$PIN_DIR" --json | jq '[.levels[].admitted] | add // 0'; }
# per_run BEFORE AFTER: "name runs ns" of what ran between the two readings.
per_run() { join "$1" "$2" | awk '$4 > $2 { print $1, $4 - $2, $5 - $3 }'; }

CPU_ROUNDS=${COST_CPU_ROUNDS:-3}
# cpu_round OUT [SLUICED ARGS...]: one round of CPU_N connections with
# sluiced attached; prints its programs' runs and time above the floor
# ($E2E_TMP/floor) and appends its CPU per connection (us) to OUT.
cpu_round() {
	local out=$1 d0 d1 a0 a1 rps
	shift
	start_daemon "$E2E_TMP/wide.yaml" "$@" || exit 1
	prog_stats sluice >"$E2E_TMP/bpf-before"
	d0=$(daemon_ns); a0=$(admitted)
	rps=$(ab_run "$E2E_TMP/ab-cpu" "$CPU_N")
	d1=$(daemon_ns); a1=$(admitted)
	prog_stats sluice >"$E2E_TMP/bpf-after"
	stop_daemon
	per_run "$E2E_TMP/bpf-before" "$E2E_TMP/bpf-after" >"$E2E_TMP/sluice"
	awk -v n="$((a1 - a0))" -v dns="$((d1 - d0))" -v rps="$rps" -v out="$out" '
		FNR == NR { floor[$1 == "empty_xdp" ? "xdp" : "sockops"] = $2 ? $3 / $2 : 0; next }
		{ kind = $1 == "sluice_sockops" ? "sockops" : "xdp"; per = $2 ? $3 / $2 : 0
		  net = per > floor[kind] ? per - floor[kind] : 0; gross += $3; netsum += net * $2
		  printf "      %-15s %8d runs (%5.2f per connection)  %5.0f ns a run, %4.0f above the empty hook: %5.0f ns per connection\n",
			 $1, $2, n ? $2 / n : 0, per, net, n ? net * $2 / n : 0 }
		END { printf "      %-15s %67s %5.0f ns per connection\n", "sluiced", "", n ? dns / n : 0
		      us = n ? (netsum + dns) / n / 1000 : 0
		      printf "      %d connections admitted at %d/s.  sluice CPU per connection: %.2f us:\n", n, rps, us
		      printf "      BPF %.2f us above the empty hooks (%.2f us with them) + daemon %.2f us\n",
			     n ? netsum / n / 1000 : 0, n ? gross / n / 1000 : 0, n ? dns / n / 1000 : 0
		      printf "%.3f\n", us >>out }' \
		"$E2E_TMP/floor" "$E2E_TMP/sluice"
}

echo "2. CPU per connection (kernel.bpf_stats_enabled=1): $CPU_ROUNDS times a round with the empty hooks, then"
echo "   one with sluice, then one with sluice's sock_ops on nginx's cgroup (scoped: ab's sockets not seen)"
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
busy_nothing=$(cpu_paired 5 | awk '{ print $2 }')
: >"$E2E_TMP/cpu-us"; : >"$E2E_TMP/cpu-us-scoped"
for r in $(seq "$CPU_ROUNDS"); do
	# The empty hooks' time per run is the floor: the hook's call and the
	# statistics' own two clock reads (costly on this paravirtual machine).
	hooks_on || { echo "bench_cost: cannot attach the empty hooks" >&2; exit 1; }
	prog_stats empty >"$E2E_TMP/floor-before"
	ab_run "$E2E_TMP/ab-floor" "$CPU_N" >/dev/null
	prog_stats empty >"$E2E_TMP/floor-after"
	hooks_off
	per_run "$E2E_TMP/floor-before" "$E2E_TMP/floor-after" >"$E2E_TMP/floor"
	echo "  round $r, sluice:"
	cpu_round "$E2E_TMP/cpu-us"
	echo "  round $r, sluice scoped:"
	cpu_round "$E2E_TMP/cpu-us-scoped" --cgroup "$NGX_CG"
done
sysctl -qw kernel.bpf_stats_enabled="$old_stats"
quartiles <"$E2E_TMP/cpu-us" | awk -v busy="$busy_nothing" -v all="$(sort -g "$E2E_TMP/cpu-us" | tr '\n' ' ')" '{
	us = $2
	printf "  sluice CPU per connection, median of the rounds: %.2f us (goal <= 2 us; the rounds: %s)\n", us, all
	if (busy > 0)
		printf "  against the %.1f us of busy CPU a request costs with nothing in front (part 1), sluice'"'"'s work in\n  its hooks is %.2f %%: a CPU-bound service keeps %.3fx its rate for it (goal >= 0.97x; the hooks'"'"' own\n  call, and veth'"'"'s copy of each frame in native XDP mode, are the empty hooks'"'"' arm of part 1)\n",
		       busy, 100 * us / busy, busy / (busy + us) }'
quartiles <"$E2E_TMP/cpu-us-scoped" | awk -v all="$(sort -g "$E2E_TMP/cpu-us-scoped" | tr '\n' ' ')" '{
	printf "  scoped (the clients on other hosts, as in production), median: %.2f us (the rounds: %s)\n", $2, all }'

# ---- 3. perf ----------------------------------------------------------------------------
if [ "${COST_PERF:-1}" = 1 ] && command -v perf >/dev/null; then
	echo "3. where the time goes: perf record -a -g over one round with sluice (top symbols, self time)"
	start_daemon "$E2E_TMP/wide.yaml" || exit 1
	perf record -q -a -g -o "$E2E_TMP/perf.data" -- sleep 3600 >/dev/null 2>&1 &
	pp=$!
	sleep 0.5
	a0=$(admitted)
	ab_run "$E2E_TMP/ab-perf" "$CPU_N" >/dev/null
	a1=$(admitted)
	kill -INT "$pp"; wait "$pp" 2>/dev/null
	stop_daemon
	perf report -q -i "$E2E_TMP/perf.data" --no-children --sort symbol -g none --stdio 2>/dev/null |
		grep -v '^$' | grep '%' | head -25 | sed 's/^/  /'
	echo "  sluice's own symbols:"
	perf report -q -i "$E2E_TMP/perf.data" --no-children --sort symbol -g none --stdio 2>/dev/null |
		grep -E '%.*(sluice|bpf_prog|sl_)' | head -10 | sed 's/^/  /'
	# A second estimate of the BPF cost, independent of bpf_stats (whose
	# two clock reads a run are themselves costly here): the CPU time
	# perf's samples put in sluice's programs, the helpers and map code
	# they call included (children), and in the daemon, per admitted
	# connection (cpu-clock: a sample's period is its nanoseconds, 250 us).
	total=$(perf report -q -i "$E2E_TMP/perf.data" --no-children --sort comm -F period -g none --stdio 2>/dev/null |
		awk '{ t += $1 } END { print t + 0 }')
	perf report -q -i "$E2E_TMP/perf.data" --children --sort symbol -g none --stdio 2>/dev/null |
		awk -v n="$((a1 - a0))" -v t="$total" '/bpf_prog_[0-9a-f]+_sluice_/ { sub("%", "", $1); p += $1 }
			END { printf "  perf'"'"'s estimate: sluice'"'"'s BPF programs with what they call %.2f us per connection (%.0f samples)\n",
				     n ? p / 100 * t / n / 1000 : 0, p / 100 * t / 250000 }'
	perf report -q -i "$E2E_TMP/perf.data" --no-children --comm sluiced --sort comm -F period -g none --stdio 2>/dev/null |
		awk -v n="$((a1 - a0))" '{ d += $1 } END { printf "                   the daemon %.2f us per connection\n", n ? d / n / 1000 : 0 }'
	# Where the programs' time goes: the function each sample under a
	# sluice program was in (the program's own code, or a helper's).
	echo "  under sluice's programs, by the function a sample was in (us per connection):"
	perf script -i "$E2E_TMP/perf.data" -F ip,sym 2>/dev/null |
		awk -v n="$((a1 - a0))" '
			/^$/ { if (under) leaf[first]++; under = 0; first = ""; next }
			{ if (first == "") first = $2; if ($2 ~ /^bpf_prog_[0-9a-f]+_sluice_/) under = 1 }
			END { for (f in leaf) printf "%d %s\n", leaf[f], f }' |
		sort -rn | head -12 |
		awk -v n="$((a1 - a0))" '{ printf "    %-40s %4d samples  %.2f\n", $2, $1, n ? $1 * 250 / n : 0 }'
fi
stop_nginx
