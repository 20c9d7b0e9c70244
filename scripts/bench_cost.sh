#!/usr/bin/env bash
# make bench, cost part (issue 25): what sluice costs a fast service on a
# normal day.  nginx (2 workers, a 612-byte page) in the lab's server
# namespace; ApacheBench without keep-alive (a new TCP connection per
# request: `ab -n COST_N -c 32`) from the client namespace.
#
#  1. Rate: COST_ROUNDS (5) rounds alternate nothing attached and sluiced
#     attached with one level far from its limit (every connection is
#     classified, seated, tracked and released).  Requests/s per round,
#     and the ratio of the medians.
#  2. CPU: one more round with sluice and kernel.bpf_stats_enabled=1:
#     each program's runs and run time (bpftool), the daemon's CPU (its
#     threads' schedstat run time), per connection sluice admitted.
#  3. Where the time goes: `perf record -a -g` over one more round with
#     sluice (COST_PERF=0 skips it); the top symbols, by self time.
#
# Reports, asserts nothing (docs/BENCHMARKS.md records the figures and
# the goals: rate >= 0.97x, BPF + daemon <= 2 us per admitted connection).
# Every load is bounded in count and time.
#
#   scripts/bench_cost.sh          (root; COST_N, COST_ROUNDS, COST_PERF)
source "$(dirname "$0")/../tests/e2e/lib.sh"
e2e_init "$@"

N=${COST_N:-20000}
ROUNDS=${COST_ROUNDS:-5}
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
chmod 0755 "$E2E_TMP" "$NGX" "$NGX/html" && chmod 0644 "$NGX/html/index.html"
nginx -p "$NGX" -c "$NGX/nginx.conf" || { echo "bench_cost: nginx did not start" >&2; cat "$NGX/logs/error.log" >&2; exit 1; }
stop_nginx() { [ -e "$NGX/nginx.pid" ] && kill -TERM "$(cat "$NGX/nginx.pid" 2>/dev/null)" 2>/dev/null; }
trap 'stop_nginx; e2e_cleanup' EXIT

cat >"$E2E_TMP/wide.yaml" <<'YAML'
apiVersion: sluice/v1
kind: Server
metadata: {name: bench}
spec: {serverConcurrencyLimit: 1000000, tableSizes: {connections: 262144}}
YAML

# ab_run OUT: one bounded ab run; prints requests/s (0 when ab failed).
ab_run() {
	in_cli timeout 120 ab -q -n "$N" -c 32 -s 10 "http://$SRV4:$PORT/" >"$1" 2>&1
	awk '/^Requests per second:/ { r = $4 } /^Failed requests:/ { f = $3 }
	     END { if (f != 0) r = 0; printf "%.0f\n", r + 0 }' "$1"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : 0 }'; }

# Warm up both paths once (ARP, nginx's workers, page cache).
in_cli timeout 60 ab -q -n 2000 -c 32 "http://$SRV4:$PORT/" >/dev/null 2>&1

# ---- 1. rate, alternating rounds --------------------------------------------------
echo "1. connection rate: nginx, ab -n $N -c 32 without keep-alive, $ROUNDS rounds each, alternating"
: >"$E2E_TMP/without" ; : >"$E2E_TMP/with"
for r in $(seq "$ROUNDS"); do
	a=$(ab_run "$E2E_TMP/ab-without-$r")
	echo "$a" >>"$E2E_TMP/without"
	start_daemon "$E2E_TMP/wide.yaml" || exit 1
	b=$(ab_run "$E2E_TMP/ab-with-$r")
	echo "$b" >>"$E2E_TMP/with"
	stop_daemon
	printf '  round %d: without %6d/s   with sluice %6d/s   (%.2fx)\n' "$r" "$a" "$b" \
		"$(awk -v a="$a" -v b="$b" 'BEGIN { print a ? b / a : 0 }')"
done
mw=$(median <"$E2E_TMP/without"); ms=$(median <"$E2E_TMP/with")
printf '  median: without %d/s, with sluice %d/s: %.3fx (goal >= 0.97x)\n' "$mw" "$ms" \
	"$(awk -v a="$mw" -v b="$ms" 'BEGIN { print a ? b / a : 0 }')"

# ---- 2. CPU per connection ------------------------------------------------------------
# prog_stats: "name run_cnt run_time_ns" for sluice's programs.
prog_stats() {
	bpftool prog show --json | jq -r '.[] | select(.name | startswith("sluice")) |
		"\(.name) \(.run_cnt // 0) \(.run_time_ns // 0)"' | sort
}
# daemon_ns: the daemon's CPU time so far, every thread (schedstat, ns).
daemon_ns() { cat /proc/"$DAEMON_PID"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }
admitted() { "$SLUICECTL" status --pin-dir "$PIN_DIR" --json | jq '[.levels[].admitted] | add // 0'; }

echo "2. CPU per connection (kernel.bpf_stats_enabled=1, one round with sluice)"
start_daemon "$E2E_TMP/wide.yaml" || exit 1
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
prog_stats >"$E2E_TMP/bpf-before"
d0=$(daemon_ns); a0=$(admitted)
rps=$(ab_run "$E2E_TMP/ab-cpu")
d1=$(daemon_ns); a1=$(admitted)
prog_stats >"$E2E_TMP/bpf-after"
sysctl -qw kernel.bpf_stats_enabled="$old_stats"
stop_daemon
conns=$((a1 - a0))
join "$E2E_TMP/bpf-before" "$E2E_TMP/bpf-after" | awk -v n="$conns" -v dns="$((d1 - d0))" -v rps="$rps" '
	{ runs = $4 - $2; t = $5 - $3; bpf += t
	  printf "  %-16s %9d runs  %6.2f per connection  %6.0f ns per run  %7.0f ns per connection\n",
		 $1, runs, n ? runs / n : 0, runs ? t / runs : 0, n ? t / n : 0 }
	END { printf "  %-16s %9s       %18s  %7.0f ns per connection\n", "daemon", "", "", n ? dns / n : 0
	      printf "  connections admitted: %d (at %d/s); sluice CPU per connection: %.2f us (BPF %.2f + daemon %.2f; goal <= 2 us)\n",
		     n, rps, n ? (bpf + dns) / n / 1000 : 0, n ? bpf / n / 1000 : 0, n ? dns / n / 1000 : 0 }'

# ---- 3. perf ----------------------------------------------------------------------------
if [ "${COST_PERF:-1}" = 1 ] && command -v perf >/dev/null; then
	echo "3. where the time goes: perf record -a -g over one round with sluice (top symbols, self time)"
	start_daemon "$E2E_TMP/wide.yaml" || exit 1
	perf record -q -a -g -o "$E2E_TMP/perf.data" -- sleep 3600 >/dev/null 2>&1 &
	pp=$!
	sleep 0.5
	ab_run "$E2E_TMP/ab-perf" >/dev/null
	kill -INT "$pp"; wait "$pp" 2>/dev/null
	stop_daemon
	perf report -q -i "$E2E_TMP/perf.data" --no-children --sort symbol -g none --stdio 2>/dev/null |
		grep -v '^$' | grep '%' | head -25 | sed 's/^/  /'
	echo "  sluice's own symbols:"
	perf report -q -i "$E2E_TMP/perf.data" --no-children --sort symbol -g none --stdio 2>/dev/null |
		grep -E '%.*(sluice|bpf_prog|sl_)' | head -10 | sed 's/^/  /'
fi
stop_nginx
