#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# sluicectl replay: the controller vectors of tests/vectors/aimd.json replayed
# through the CLI (traces built from the vectors, outputs compared row by
# row), plus the trace format's rules and errors.  Needs no namespace or root.
source "$(dirname "$0")/lib.sh"
CTL=${SLUICE_CTL:-$SLUICECTL}
V=$E2E_ROOT/tests/vectors/aimd.json
T=$(mktemp -d /tmp/sluice-replay.XXXXXX)
trap 'rm -rf "$T"' EXIT

# The policy (configs/replay-policy.yaml) has the vectors' defaults (slope -1,
# gradient [0.1, 1], 0.025, max 2).

check "replay --help exits 0 and shows usage" bash -c "$CTL replay --help | grep -q 'Usage: sluicectl replay'"
check "replay without --trace: exit 2" bash -c "$CTL replay --config $CONFIGS/replay-policy.yaml >/dev/null 2>&1; [ \$? = 2 ]"

# ---- the step scenarios (OBSERVED model 'ideal' = --observed-window 1) ----
for sc in $(jq -r '.scenarios[] | select(.steps) | .name' "$V"); do
	jq -r --arg n "$sc" '"t_s,signal,setpoint", (.scenarios[] | select(.name == $n) | .steps[] |
		"\(.t_s),\(.signal // ""),\(.setpoint // "")")' "$V" >"$T/$sc.csv"
	out=$("$CTL" replay --config "$CONFIGS/replay-policy.yaml" --trace "$T/$sc.csv" --json); rc=$?
	check_num "$sc: exit 0" "$rc" -eq 0
	n=$(jq length <<<"$out")
	want=$(jq --arg n "$sc" '.scenarios[] | select(.name == $n) | .steps | length' "$V")
	check_num "$sc: one record per row" "$n" -eq "$want"
	bad=$(jq -n --argjson out "$out" --slurpfile v "$V" --arg n "$sc" '
		def near(a; b): (a - b) | fabs < 1e-9;
		($v[0].scenarios[] | select(.name == $n) | .steps) as $s
		| [range(0; $s | length) as $i | $s[$i] as $w | $out[$i] as $g
		   | select(($g.t_s != $w.t_s) or ($g.overload != $w.is_overload)
			or (near($g.gradient; $w.gradient) | not)
			or (near($g.integrator; $w.integrator) | not)
			or (near($g.load_multiplier; $w.published.load_multiplier) | not)
			or ($g.pass_through != $w.published.pass_through)) | $i]')
	check "$sc: every row matches the vector (mismatched rows: $(jq -c . <<<"$bad"))" \
		jq -e 'length == 0' <<<"$bad"
	check "$sc: records have exactly the documented fields" \
		jq -e 'all(.[]; keys == ["gradient","integrator","load_multiplier","overload","pass_through","t_s"])' <<<"$out"
done

# ---- the gradient sweep: one step from pass-through, setpoint 100 ----
bad=0
while read -r ratio g over lm pt; do
	printf 't_s,signal,setpoint\n0,%s,100\n' "$(awk -v r="$ratio" 'BEGIN{printf "%.17g", r * 100}')" >"$T/sweep.csv"
	rec=$("$CTL" replay --config "$CONFIGS/replay-policy.yaml" --trace "$T/sweep.csv" --json | jq -c '.[0]')
	if ! jq -e --argjson g "$g" --argjson o "$over" --argjson lm "$lm" --argjson pt "$pt" '
		((.gradient - $g) | fabs < 1e-6) and .overload == $o and
		((.load_multiplier - $lm) | fabs < 1e-6) and .pass_through == $pt' <<<"$rec" >/dev/null; then
		bad=$((bad + 1))
		diag "sweep S/SP=$ratio: got $rec"
	fi
done < <(jq -r '.scenarios[] | select(.name == "gradient_sweep_from_passthrough") | .rows[] |
	"\(.signal_over_setpoint) \(.gradient) \(.is_overload) \(.published.load_multiplier) \(.published.pass_through)"' "$V")
check_num "gradient sweep: all 10 rows match" "$bad" -eq 0

# ---- --observed-window: the vectors' 'window3' model ----
printf 't_s,signal,setpoint\n0,200,100\n10,200,100\n20,200,100\n' >"$T/w3.csv"
out=$("$CTL" replay --config "$CONFIGS/replay-policy.yaml" --trace "$T/w3.csv" --observed-window 3 --json)
# k0: obs 1 -> 0.5; k1: obs (1+1+0.5)/3 -> x0.5; k2: obs (1+0.5+0.41667)/3 -> x0.5
check "window 3: OBSERVED is the mean of min(1, applied) over 3 periods, history = 1" \
	jq -e '(.[0].load_multiplier == 0.5) and ((.[1].load_multiplier - 2.5/6) | fabs < 1e-12)
		and ((.[2].load_multiplier - (1 + 0.5 + 2.5/6) / 6) | fabs < 1e-12)' <<<"$out"

# ---- trace rules ----
# empty cells: no valid value -> no overload; integrator keeps growing
printf 't_s,signal,setpoint\n0,200,100\n10,,100\n20,200,\n' >"$T/empty.csv"
out=$("$CTL" replay --config "$CONFIGS/replay-policy.yaml" --trace "$T/empty.csv" --json)
check "empty cells are invalid values: not overloaded, ramp continues" \
	jq -e '.[0].overload and (.[1].overload | not) and .[1].integrator == 0.025 and .[1].gradient == null
		and (.[2].overload | not) and .[2].integrator == 0.05' <<<"$out"
# columns in another order
printf 'signal,t_s,setpoint\n200,0,100\n' >"$T/order.csv"
check "columns may come in any order" \
	bash -c "$CTL replay --config $CONFIGS/replay-policy.yaml --trace $T/order.csv --json | jq -e '.[0].load_multiplier == 0.5'"
# no setpoint column: the daemon's baseline (mean signal x 1.25)
{ echo "t_s,signal"; for i in $(seq 0 9); do echo "$((i * 10)),100"; done; echo "100,200"; echo "110,200"; } >"$T/base.csv"
out=$("$CTL" replay --config "$CONFIGS/replay-policy.yaml" --trace "$T/base.csv" --json)
check "no setpoint column: steady signal never overloads, a doubling does (setpoint 125)" \
	jq -e '([.[0:10][] | .overload] | any | not) and .[10].overload and .[10].load_multiplier == 0.625' <<<"$out"
check "human table: one line per row plus the header" \
	bash -c "[ \$($CTL replay --config $CONFIGS/replay-policy.yaml --trace $T/base.csv | wc -l) = 13 ]"

# ---- errors name the line and column ----
printf 't_s,signal,setpoint\n0,100,100\n10,abc,100\n' >"$T/bad.csv"
err=$("$CTL" replay --config "$CONFIGS/replay-policy.yaml" --trace "$T/bad.csv" 2>&1 >/dev/null); rc=$?
check_num "bad number: exit 1" "$rc" -eq 1
check "bad number: file:line:column and the column's name" grep -q "bad.csv:3:4: column 2 (signal): 'abc'" <<<"$err"
printf 't_s,signal,latency\n' >"$T/bad2.csv"
err=$("$CTL" replay --config "$CONFIGS/replay-policy.yaml" --trace "$T/bad2.csv" 2>&1 >/dev/null)
check "unknown header column is named with its position" grep -q "bad2.csv:1:12: column 3: unknown column 'latency'" <<<"$err"
printf 't_s,signal\n0,1,2\n' >"$T/bad3.csv"
err=$("$CTL" replay --config "$CONFIGS/replay-policy.yaml" --trace "$T/bad3.csv" 2>&1 >/dev/null)
check "extra field: line named" grep -q "bad3.csv:2:" <<<"$err"
# What no service measures (issue 26): an infinite or negative latency, and
# time that runs backwards, are refused with their place.
for v in inf -1e308 nan; do
	printf 't_s,signal\n0,100\n1,%s\n' "$v" >"$T/badv.csv"
	err=$("$CTL" replay --config "$CONFIGS/replay-policy.yaml" --trace "$T/badv.csv" 2>&1 >/dev/null); rc=$?
	check "signal $v: refused at its place (exit $rc)" bash -c '[ "$1" -eq 1 ] && grep -q "badv.csv:3:3: column 2 (signal)" <<<"$2"' _ "$rc" "$err"
done
printf 't_s,signal\n0,100\n10,100\n5,100\n' >"$T/back.csv"
err=$("$CTL" replay --config "$CONFIGS/replay-policy.yaml" --trace "$T/back.csv" 2>&1 >/dev/null)
check "time running backwards: refused at its place" grep -q "back.csv:4:1: column 1 (t_s): time runs backwards" <<<"$err"

# ---- policy selection ----
{ cat "$CONFIGS/replay-policy.yaml"; echo "---"; sed 's/name: web/name: api/' "$CONFIGS/replay-policy.yaml"; } >"$T/two.yaml"
"$CTL" replay --config "$T/two.yaml" --trace "$T/w3.csv" >/dev/null 2>"$T/err"; rc=$?
check_num "two policies without --name: exit 2" "$rc" -eq 2
check "ambiguity lists the policies" grep -q "web api" "$T/err"
check "--name picks one" "$CTL" replay --config "$T/two.yaml" --name api --trace "$T/w3.csv"
"$CTL" replay --config "$T/two.yaml" --name nope --trace "$T/w3.csv" >/dev/null 2>&1; rc=$?
check_num "unknown --name: exit 1" "$rc" -eq 1

# Trace input is bounded like configuration files: an endless input is an
# error, not a hang.
err=$(timeout 20 "$CTL" replay --config "$CONFIGS/replay-policy.yaml" --trace /dev/zero 2>&1 >/dev/null); rc=$?
check_num "--trace /dev/zero: exit 1 (not a hang: timeout says 124)" "$rc" -eq 1
check "--trace /dev/zero: says it is no regular file (a device is never read)" \
	grep -q "/dev/zero: not a regular file" <<<"$err"
err=$(head -c $((65 * 1024 * 1024)) /dev/zero | timeout 20 "$CTL" replay --config "$CONFIGS/replay-policy.yaml" \
	--trace - 2>&1 >/dev/null); rc=$?
check_num "65 MiB on standard input: exit 1" "$rc" -eq 1
check "... says the bound" grep -q -- "-: a trace holds at most 64 MiB" <<<"$err"
err=$(head -c 1000 /dev/zero | timeout 20 "$CTL" replay --config "$CONFIGS/replay-policy.yaml" --trace - 2>&1 >/dev/null); rc=$?
check_num "NUL bytes on standard input: exit 1" "$rc" -eq 1
check "NUL bytes: file:line:column" grep -q -- "-:1:1: NUL byte in the trace" <<<"$err"

# ---- --plot: a picture of the decisions --------------------------------------------
# 40 periods: calm at 50 ms, a surge at 400 ms from period 10 to 19, calm again;
# the rates columns (ignored by the controller) go to a third panel.
{ echo "t_s,signal,admitted,deferred,rejected"
  for i in $(seq 0 39); do
	if [ "$i" -ge 10 ] && [ "$i" -lt 20 ]; then echo "$i,400,60,30,10"; else echo "$i,50,80,0,0"; fi
  done; } >"$T/surge.csv"
# png_size FILE: "WIDTHxHEIGHT" from the IHDR chunk.
png_size() { od -An -tu1 -j16 -N8 "$1" | awk '{ printf "%dx%d", $3 * 256 + $4, $7 * 256 + $8 }'; }
out=$("$CTL" replay --config "$CONFIGS/replay-policy.yaml" --trace "$T/surge.csv" --plot "$T/surge.png" --json); rc=$?
check_num "--plot: exit 0" "$rc" -eq 0
check "--plot: the decisions are still printed (40 records)" jq -e 'length == 40' <<<"$out"
check "--plot: the surge is an overload the controller cut (multiplier below 1)" \
	jq -e '[.[] | select(.overload)] | length > 0 and ([.[] | select(.pass_through | not) | .load_multiplier] | min) < 1' <<<"$out"
check "--plot: a PNG" bash -c '[ "$(head -c 8 "$1" | od -An -tx1 | tr -d " \n")" = 89504e470d0a1a0a ]' _ "$T/surge.png"
check "--plot: three panels with the rates (1000x900: $(png_size "$T/surge.png"))" test "$(png_size "$T/surge.png")" = 1000x900
cut -d, -f1,2 "$T/surge.csv" >"$T/surge2.csv"
"$CTL" replay --config "$CONFIGS/replay-policy.yaml" --trace "$T/surge2.csv" --plot "$T/surge2.png" >/dev/null
check "--plot: two without rates in the trace (1000x640: $(png_size "$T/surge2.png"))" test "$(png_size "$T/surge2.png")" = 1000x640
check_num "--plot: not just a blank canvas (more than 10 KB)" "$(stat -c %s "$T/surge.png")" -gt 10000
"$CTL" replay --config "$CONFIGS/replay-policy.yaml" --trace "$T/surge.csv" --plot /nonexistent/dir/x.png \
	>"$T/plot.out" 2>"$T/plot.err"; rc=$?
check_num "--plot into a missing directory: exit 1" "$rc" -eq 1
check "... naming the file and why, not gnuplot (issue 26)" \
	grep -q -- "--plot /nonexistent/dir/x.png: No such file or directory" "$T/plot.err"
check "... and no picture on standard output" bash -c '! grep -q PNG "$1"' _ "$T/plot.out"

# ---- simulate: the default policy against a modelled CPU-bound service ----------
# 8 cores x 50 ms (160/s): 20 s at half, 30 s at 3x, 30 s at half again.
SIM=(simulate -c "$E2E_ROOT/configs/demo.yaml" --cores 8 --work 50ms --phases 20s@80,30s@480,30s@80)
out=$("$CTL" "${SIM[@]}" --json); rc=$?
check_num "simulate: exit 0" "$rc" -eq 0
diag "simulate, the surge: $(jq -c '[.arms[] | {name, surge: .phases[1] | {completed_per_s, median_ms, refused, most_in_flight}}]' <<<"$out")"
check "simulate: a row a second for each arm (80)" jq -e '[.arms[] | .seconds | length] == [80, 80]' <<<"$out"
check "simulate: unprotected, the 3x surge collapses the service (under half its capacity, a median over 1 s)" \
	jq -e '.arms[] | select(.name == "none") | .phases[1] | .completed_per_s < 80 and .median_ms > 1000' <<<"$out"
check "simulate: behind the limit, >= 70 % of capacity with a median within 3x the 50 ms" \
	jq -e '.arms[] | select(.name == "sluice") | .phases[1] | .completed_per_s >= 112 and .median_ms <= 150' <<<"$out"
check "simulate: ... the overflow gave up waiting, a bounded number in flight" \
	jq -e '.arms[] | select(.name == "sluice") | .phases[1] | .refused > 0 and .most_in_flight < 100' <<<"$out"
again=$("$CTL" "${SIM[@]}" --json)
other=$("$CTL" "${SIM[@]}" --seed 7 --json)
check "simulate: the same seed, the same run" test "$again" = "$out"
check "simulate: another seed, another run" test "$other" != "$out"
tbl=$("$CTL" "${SIM[@]}")
check "simulate: the table has a row per phase and arm (6)" test "$(grep -cE '^[1-3] +[0-9]+-[0-9]+ ' <<<"$tbl")" = 6
"$CTL" "${SIM[@]}" --plot "$T/sim.png" >/dev/null; rc=$?
check_num "simulate --plot: exit 0" "$rc" -eq 0
check "simulate --plot: a PNG of three panels (1000x960: $(png_size "$T/sim.png"))" test "$(png_size "$T/sim.png")" = 1000x960
check_num "simulate --plot: not a blank canvas (more than 10 KB)" "$(stat -c %s "$T/sim.png")" -gt 10000
sim_usage() { # NAME EXPECTED-TEXT PHASES
	local out rc
	out=$("$CTL" simulate -c "$E2E_ROOT/configs/demo.yaml" --phases "$3" 2>&1 >/dev/null); rc=$?
	check_num "simulate, $1: exit 2" "$rc" -eq 2
	check "simulate, $1: says '$2'" grep -qF -- "$2" <<<"$out"
}
sim_usage "no @" "'40s' is not DURATION@RATE[/CORES]" 40s
sim_usage "bad duration" "'forty' is not a duration > 0" forty@80
sim_usage "bad rate" "rate 'lots' is not a number of connections/s" 40s@lots
sim_usage "bad cores" "cores '0' is not a number in (0, 4096]" 40s@80/0
sim_usage "too long" "the phases last more than 3600 s together" 1h@1,1s@1
out=$("$CTL" simulate -c "$CONFIGS/policy-gate.yaml" --phases 5s@10 2>&1 >/dev/null); rc=$?
check "simulate, a policy in mode aperture: runs, and says it simulates mode sluice" \
	bash -c '[ "$1" = 0 ] && grep -q "simulates mode sluice" <<<"$2"' _ "$rc" "$out"

e2e_finish
