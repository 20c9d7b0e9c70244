#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# sluicectl's offline commands, as an operator (or a program) runs them:
# exit codes, human output and --json.
source "$(dirname "$0")/lib.sh"
CTL=$SLUICECTL
T=$(mktemp -d /tmp/sluice-cli.XXXXXX)
trap 'rm -rf "$T"' EXIT

check "--help on the top level" bash -c "$CTL --help | grep -q validate"
for c in status validate limits explain reload odds deal conns cost signal controller shadow top \
	 levels queues flows replay simulate; do
	check "$c --help exits 0 and shows usage" bash -c "$CTL $c --help | grep -q 'Usage: sluicectl $c'"
	check "$c --help ends with its options" bash -c "$CTL $c --help | grep -q -- '-h, --help'"
done
# The bench and lab programs too: --help prints a usage and exits 0 (it
# never runs the bench), and an argument they do not take exits 2.
for p in bench_xdp bench_classify bench_engines bench_walk; do
	check "$p --help exits 0 with a usage, running nothing" \
		bash -c "timeout 10 $B/$p --help | head -1 | grep -qi '^usage: $p'"
done
for p in bench_classify bench_engines; do
	check "$p with an argument it does not take exits 2" \
		bash -c "timeout 10 $B/$p --bogus >/dev/null 2>&1; [ \$? -eq 2 ]"
done
# One parser for every command: a bad value, an unknown option or a missing
# required option exits 2 with one line naming the command and the option.
usage_err() { # NAME EXPECTED-TEXT CMD...
	local name=$1 want=$2 out rc; shift 2
	out=$("$@" 2>&1 >/dev/null); rc=$?
	check_num "$name: exit 2" "$rc" -eq 2
	check "$name: says '$want'" grep -qF -- "$want" <<<"$out"
}
usage_err "limits, bound" "sluicectl limits: --server-concurrency: '0' is not an integer in 1..2147483647" \
	"$CTL" limits --config configs/default.yaml --server-concurrency 0
usage_err "top, bound" "sluicectl top: --count: '0' is not an integer in 1.." "$CTL" top --count 0
usage_err "status, unknown option" "sluicectl status: unknown option '--frob'" "$CTL" status --frob
usage_err "odds, required" "sluicectl odds: --elephants K is required" "$CTL" odds -q 64 -H 6
usage_err "odds, list" "sluicectl odds: --elephants: '1,x' is not a list" "$CTL" odds -q 64 -H 6 -e 1,x
usage_err "explain, address" "sluicectl explain: --dst: '198.18.0.300' is not an IPv4 or IPv6 address" \
	"$CTL" explain -c configs/default.yaml --src 198.18.0.5 --dst 198.18.0.300 --dport 80
usage_err "conns, extra argument" "sluicectl conns: unexpected argument 'y'" "$CTL" conns x y
check "options may follow arguments (validate FILE --json)" \
	bash -c "$CTL validate configs/default.yaml --json | jq -e '.valid == true' >/dev/null"
check "unknown command exits 2" bash -c "$CTL frobnicate >/dev/null 2>&1; [ \$? = 2 ]"
check "unique prefix works (val -> validate)" bash -c "$CTL val configs/default.yaml >/dev/null"

# validate
check "default config is valid" "$CTL" validate configs/default.yaml
out=$("$CTL" validate "$CONFIGS/cli-invalid.yaml" 2>&1); rc=$?
check_num "invalid file: exit 1" "$rc" -eq 1
check "unknown field gets a did-you-mean with its position" \
	grep -qE "cli-invalid.yaml:9:[0-9]+: error: PriorityLevelConfiguration/web: .*handsize.*did you mean 'handSize'" <<<"$out"
j=$("$CTL" validate --json "$CONFIGS/cli-invalid.yaml" configs/default.yaml); rc=$?
check_num "--json: exit 1 when any file is invalid" "$rc" -eq 1
check "--json: diagnostics carry file, line, column, path, severity, message" \
	jq -e '.valid == false and (.diagnostics[0] | has("file") and has("line") and has("column") and has("path") and has("severity") and has("message"))' <<<"$j"
check "--json: per-file verdicts" jq -e '.files[0].valid == false and .files[1].valid == true' <<<"$j"
check "validate without a file: exit 2" bash -c "$CTL validate >/dev/null 2>&1; [ \$? = 2 ]"

# limits
j=$("$CTL" limits --config configs/default.yaml --server-concurrency 600 --json)
check "limits --json has the documented shape" \
	jq -e '.server_concurrency_limit == 600 and (.levels[0] | has("name") and has("nominal") and has("lendable") and has("borrowing") and has("min") and has("max"))' <<<"$j"
check_num "limits: catch-all has shares 5" "$(jq '.levels[] | select(.name == "catch-all") | .shares' <<<"$j")" -eq 5
check_num "limits: exempt borrows up to the whole budget" "$(jq '.levels[] | select(.name == "exempt") | .borrowing' <<<"$j")" -eq 600

# explain
j=$("$CTL" explain --config tests/packet/classify/labels.yaml --src 198.18.7.5 --dst 198.18.0.1 --dport 8080 --json)
check "explain: FlowSchema by labels" jq -e '.flow_schema.name == "gold-api" and .priority_level.name == "gold"' <<<"$j"
check "explain: labels include ConnectionLabels and built-ins" \
	jq -e '.labels.user_tier == "gold" and .labels.svc == "api" and .labels["dst.port"] == "8080"' <<<"$j"
check "explain: policy and workload" jq -e '.policy.name == "api" and .policy.workload == "gold"' <<<"$j"
j=$("$CTL" explain --config tests/packet/classify/networks.yaml --src 198.18.3.9 --dst 198.18.0.1 --dport 8080 --json)
check "explain: BySource /24 distinguisher and a dealt hand" \
	jq -e '.flow.distinguisher == "198.18.3.0/24" and (.flow.hand | length) == 4' <<<"$j"
check "explain: bad address exits 2" bash -c "$CTL explain --config configs/default.yaml --src nope --dst 198.18.0.1 --dport 1 >/dev/null 2>&1; [ \$? = 2 ]"

# odds and deal against spec/vectors/apf.json
V=tests/vectors/apf.json
check "odds: (32, 12) reference rows to 12 significant digits" bash -c "
	$CTL odds --queues 32 --hand-size 12 --elephants 1,4,16 --json |
	jq -e '[.odds[].probability] as \$p |
	  ((\$p[0] / 4.428838398950118e-09 - 1) | fabs) < 1e-12 and
	  ((\$p[1] / 0.11431348830099144 - 1) | fabs) < 1e-12 and
	  ((\$p[2] / 0.9935089607656024 - 1) | fabs) < 1e-12'"
n=$(jq '.shuffleSharding.deal | length' "$V")
bad=0
for i in $(seq 0 $((n - 1))); do
	row=$(jq -c ".shuffleSharding.deal[$i]" "$V")
	D=$(jq -r '.deckSize // .D // .queues' <<<"$row"); H=$(jq -r '.handSize // .H' <<<"$row")
	Vh=$(jq -r '.hashValue // .V // .hash | tostring' <<<"$row")
	want=$(jq -r '.hand | map(tostring) | join(",")' <<<"$row")
	got=$("$CTL" deal --queues "$D" --hand-size "$H" --hash "$Vh")
	[ "$got" = "$want" ] || { diag "deal $D $H $Vh: got $got want $want"; bad=$((bad + 1)); }
done
check_num "deal: every vector of apf.json ($n)" "$bad" -eq 0
check "deal: invalid parameters exit 1 with the reason" bash -c "
	out=\$($CTL deal --queues 128 --hand-size 9 --hash 1 2>&1); [ \$? = 1 ] && grep -q '63 bits' <<<\"\$out\""
check "deal: 0x hex hash" bash -c "[ \"\$($CTL deal --queues 64 --hand-size 6 --hash 0xdeadbeefcafef00d)\" = 13,15,58,32,25,48 ]"
# ---- global options, as bpftool has them ------------------------------------------
for c in status validate limits explain reload odds deal conns cost signal controller shadow top \
	 levels queues flows replay simulate; do
	check "$c --help lists -j, --json and -p, --pretty" \
		bash -c "$CTL $c --help | grep -q -- '-j, --json' && $CTL $c --help | grep -q -- '-p, --pretty'"
done
check "-j before the command is --json after it" \
	bash -c "[ \"\$($CTL -j limits --config configs/default.yaml)\" = \"\$($CTL limits --config configs/default.yaml --json)\" ]"
pretty=$("$CTL" -p limits --config configs/default.yaml)
check "-p: the same document, indented (two spaces, one key per line)" \
	bash -c '[ "$(jq -cS . <<<"$1")" = "$("$2" limits --config configs/default.yaml --json | jq -cS .)" ] && [ "$(wc -l <<<"$1")" -gt 20 ] && grep -q "^  \"levels\": \[$" <<<"$1"' _ "$pretty" "$CTL"
check "--pretty after the command, on a stream of documents (odds --json)" \
	bash -c "$CTL odds -q 64 -H 6 -e 1,2 --pretty | jq -se 'length == 1 and (.[0].odds | length) == 2' >/dev/null"
out=$("$CTL" -j status --pin-dir /nonexistent 2>"$T/err"); rc=$?
check_num "JSON mode, a failure: exit 1" "$rc" -eq 1
check "... one {\"error\"} object on stdout that says why, with the exit status" \
	jq -e '(.error | test("no such pinned map")) and .exit_status == 1' <<<"$out"
check "... and nothing on stderr" test ! -s "$T/err"
out=$("$CTL" limits --config configs/default.yaml --server-concurrency 0 --json 2>/dev/null); rc=$?
check "JSON mode, a usage error: exit 2 and {\"error\"} naming the option" \
	bash -c '[ "$1" = 2 ] && jq -e "(.error | test(\"--server-concurrency\")) and .exit_status == 2" <<<"$2" >/dev/null' _ "$rc" "$out"
check "JSON mode, an unknown command: {\"error\"}, exit 2" \
	bash -c "$CTL -j frobnicate | jq -e '.error | test(\"frobnicate\")' >/dev/null; [ \${PIPESTATUS[0]} = 2 ]"
check "--version --json: version, revision and abi" \
	bash -c "$CTL -j --version | jq -e '(.version | type) == \"string\" and (.abi | type) == \"number\"' >/dev/null"
check "help CMD is CMD --help" bash -c "[ \"\$($CTL help deal)\" = \"\$($CTL deal --help)\" ]"
check "help of an unknown command exits 2" bash -c "$CTL help frob >/dev/null 2>&1; [ \$? = 2 ]"
check "deal --json: the hash is a string (64-bit values do not fit a JSON number)" \
	bash -c "$CTL deal --queues 64 --hand-size 6 --hash 0xdeadbeefcafef00d --json | jq -e '.hash == \"0xdeadbeefcafef00d\"' >/dev/null"
# One key case everywhere: snake_case (label names, which are data, aside).
snake='[paths | select(.[0] != "labels") | .[] | strings] | all(test("^[a-z][a-z0-9_]*$"))'
check "snake_case keys: limits, explain, odds, deal, validate" bash -c "
	$CTL limits --config configs/default.yaml --json | jq -e '$snake' >/dev/null &&
	$CTL explain --config configs/default.yaml --src 198.18.0.5 --dst 198.18.0.1 --dport 8080 --json | jq -e '$snake' >/dev/null &&
	$CTL odds -q 64 -H 6 -e 1 --json | jq -e '$snake' >/dev/null &&
	$CTL deal -q 64 -H 6 --hash 1 --json | jq -e '$snake' >/dev/null &&
	$CTL validate configs/default.yaml --json | jq -e '$snake' >/dev/null"
check "- is standard input: validate -, limits --config -" bash -c "
	$CTL validate - <configs/default.yaml >/dev/null &&
	[ \"\$($CTL limits --config - --json <configs/default.yaml)\" = \"\$($CTL limits --config configs/default.yaml --json)\" ]"
"$LAB_NOTIFY" --socket "$T/signal.sock" --duration 10 --until 7.5 >"$T/signal.out" &
lp=$!
for _ in $(seq 50); do [ -S "$T/signal.sock" ] && break; sleep 0.05; done
check "signal --json: what it sent" \
	bash -c "$CTL signal --external-socket $T/signal.sock 42.5 7.5 --json | jq -e '.sent == 2 and .samples_ms == [42.5, 7.5]' >/dev/null"
wait $lp
check "... and the socket got both datagrams" bash -c 'grep -q " 42.5$" "$1" && grep -q " 7.5$" "$1"' _ "$T/signal.out"

# Files that are no configuration (issue 26): a FIFO is never read (it
# would hang whoever reads it), an empty or comments-only file is refused.
mkfifo "$T/fifo.yaml"
check "validate FIFO: refused at once, naming why" bash -c \
	'timeout 5 "$1" validate "$2" 2>&1; [ $? -eq 1 ]' _ "$CTL" "$T/fifo.yaml"
check "... the message says it is not a regular file" bash -c \
	'timeout 5 "$1" validate "$2" 2>&1 | grep -q "not a regular file"' _ "$CTL" "$T/fifo.yaml"
check "replay --trace FIFO: refused at once" bash -c \
	'timeout 5 "$1" replay --trace "$2" >/dev/null 2>&1; r=$?; [ $r -ne 0 ] && [ $r -ne 124 ]' _ "$CTL" "$T/fifo.yaml"
check "sluiced --config FIFO: exits at once, naming why" bash -c \
	'timeout 5 "$1" --config "$2" --iface lo 2>&1 | grep -q "not a regular file"' _ "$SLUICED" "$T/fifo.yaml"
printf '# nothing but a comment\n' >"$T/comments.yaml"
: >"$T/empty.yaml"
check "validate of an empty file: invalid, naming why" bash -c \
	'"$1" validate "$2" 2>&1 | grep -q "holds no configuration object"; r=$?; "$1" validate "$2" >/dev/null 2>&1; x=$?; [ $r -eq 0 ] && [ $x -eq 1 ]' \
	_ "$CTL" "$T/empty.yaml"
check "validate of a comments-only file: invalid" bash -c '! "$1" validate "$2" >/dev/null 2>&1' _ "$CTL" "$T/comments.yaml"
long=$(printf 'x%.0s' $(seq 5000))
check "explain --iface of 5,000 characters: a usage error naming the bound" bash -c \
	'"$1" explain --config configs/default.yaml --src 198.18.0.5 --dst 198.18.0.1 --dport 8080 --iface "$2" 2>&1 |
	 grep -q "an interface name has 1 to 15 characters"; r=$?
	 "$1" explain --config configs/default.yaml --src 198.18.0.5 --dst 198.18.0.1 --dport 8080 --iface "$2" >/dev/null 2>&1
	 x=$?; [ $r -eq 0 ] && [ $x -eq 2 ]' _ "$CTL" "$long"
# A stop while the configuration is read (here: standard input that never
# ends) ends the daemon at once: signals wait for the loop only from the
# first change to the host on.
sleep 5 | "$SLUICED" --config - --iface lo >"$T/stuck.log" 2>&1 &
sp=$!
sleep 0.5
t0=$(date +%s%N)
kill -TERM "$sp" 2>/dev/null
for _ in $(seq 20); do kill -0 "$sp" 2>/dev/null || break; sleep 0.05; done
check "SIGTERM while sluiced reads its configuration stops it within a second" \
	bash -c '! kill -0 "$1" 2>/dev/null && [ $(( ($(date +%s%N) - $2) / 1000000 )) -lt 1000 ]' _ "$sp" "$t0"
kill -9 "$sp" 2>/dev/null
wait "$sp" 2>/dev/null

# ---- one grammar (issue 27) ---------------------------------------------------
# A short option means one thing in every command and in both programs:
# collect every "-x, --long" of every --help and of sluiced's.
ALL_CMDS="status top levels queues flows conns cost controller validate limits explain reload shadow
	odds deal replay simulate signal"
shorts=$( { for c in $ALL_CMDS; do "$CTL" "$c" --help; done; "$SLUICED" --help; } 2>/dev/null |
	grep -oE '^  -[a-zA-Z], --[a-z-]+' | awk '{ print $1, $2 }' |
	sort -u)
dup=$(awk '{ n[$1]++; l[$1] = l[$1] " " $2 } END { for (k in n) if (n[k] > 1) print k l[k] }' <<<"$shorts")
check "every short option means one thing in every command and in sluiced${dup:+ (not: $dup)}" test -z "$dup"
check_num "... (and there are short options to compare: $(wc -l <<<"$shorts"))" "$(wc -l <<<"$shorts")" -ge 15
# One name per idea: -c/--config wherever a configuration is read (for
# the daemon's paths too), -s/--control-socket for the daemon's socket, as
# sluiced's flag; no --help offers an old spelling.
miss=""
for c in status top levels queues flows conns cost controller validate limits explain reload shadow replay simulate detach; do
	"$CTL" "$c" --help 2>/dev/null | grep -q -- '^  -c, --config FILE' || miss+=" $c"
done
check "every command that reads a configuration takes -c/--config FILE${miss:+ (not:$miss)}" test -z "$miss"
miss=""
for c in top levels queues flows controller explain reload shadow; do
	"$CTL" "$c" --help 2>/dev/null | grep -q -- '^  -s, --control-socket PATH' || miss+=" $c"
done
"$SLUICED" --help | grep -q -- '^  -s, --control-socket PATH' || miss+=" sluiced"
check "the control socket is -s/--control-socket in sluicectl and sluiced${miss:+ (not:$miss)}" test -z "$miss"
old=$( { for c in $ALL_CMDS detach; do "$CTL" "$c" --help; done; "$SLUICED" --help; } 2>/dev/null |
	grep -oE -- '(^| )--(socket|control|interval|policy|level)([^-a-z]|$)' | sort -u | tr '\n' ' ')
check "no --help offers an old spelling${old:+ (offered: $old)}" test -z "$old"
check "an old spelling still works for a release, and names the new one" \
	bash -c '"$1" replay -P "$2" --trace /nonexistent 2>&1 >/dev/null | grep -q "sluicectl replay: -P is an old spelling: use --config"' \
	_ "$CTL" "$CONFIGS/replay-policy.yaml"
check "an unknown command is one line with the nearest one" \
	bash -c '[ "$("$1" statsu 2>&1)" = "sluicectl: unknown command '"'statsu'"': did you mean status?" ]' _ "$CTL"
check "an unknown option is one line with the nearest one" \
	bash -c '[ "$("$1" status --jsno 2>&1)" = "sluicectl status: unknown option '"'--jsno'"': did you mean --json? (see --help)" ]' _ "$CTL"
# -j is compact and -p indented, for every command that answers offline.
for cmd in "validate configs/default.yaml" "limits --config configs/default.yaml" \
	"explain --config configs/default.yaml --src 198.18.0.5 --dst 198.18.0.1 --dport 8080" \
	"odds -q 64 -H 6 -e 1" "deal -q 64 -H 6 --hash 5"; do
	# shellcheck disable=SC2086
	check "-j $cmd: one line of JSON" bash -c '[ "$("$1" -j $2 | wc -l)" = 1 ] && "$1" -j $2 | jq -e . >/dev/null' _ "$CTL" "$cmd"
	# shellcheck disable=SC2086
	check "-p $cmd: indented" bash -c '[ "$("$1" -p $2 | wc -l)" -gt 1 ]' _ "$CTL" "$cmd"
done
# Commands that change state are never run from an abbreviation.
out=$("$CTL" sh on --control-socket "$T/none.sock" 2>&1); rc=$?
check_num "'sh on' is refused (exit 2), not shadow mode switched on" "$rc" -eq 2
check "... saying shadow must be spelled out" grep -q "shadow changes state, so it is never abbreviated" <<<"$out"
check "'rel' is refused too" bash -c '"$1" rel --control-socket /nonexistent >/dev/null 2>&1; [ $? = 2 ]' _ "$CTL"
check "read-only commands still abbreviate ('val' is validate)" "$CTL" val configs/default.yaml
# --version is global: before or after the command.
check "--version after the command" bash -c '"$1" status --version | grep -q "^sluicectl "' _ "$CTL"
check "-V after the command" bash -c '"$1" limits -V | grep -q "^sluicectl "' _ "$CTL"
# limits --help names the keys limits --json has.
keys=$("$CTL" limits --config configs/default.yaml --json | jq -r '(keys + (.levels[0] | keys))[]' | sort -u)
missing=$(for k in $keys; do "$CTL" limits --help | grep -q "\"$k\"" || echo "$k"; done | tr '\n' ' ')
check "limits --help names every key of its JSON${missing:+ (missing: $missing)}" test -z "$missing"
# sluiced: errors start with its name; a bad option gets one line, not the help.
out=$("$SLUICED" --bogus 2>&1); rc=$?
check "sluiced --bogus: exit 2 with one line" bash -c '[ "$1" = 2 ] && [ "$(wc -l <<<"$2")" = 1 ]' _ "$rc" "$out"
check "... that starts with 'sluiced:' and points at --help" grep -q "^sluiced: unknown option '--bogus' (see --help)$" <<<"$out"
check "sluiced --config without a value: one line" \
	bash -c '[ "$("$1" --config 2>&1 | wc -l)" = 1 ] && "$1" --config 2>&1 | grep -q "^sluiced: option .--config. needs a value"' _ "$SLUICED"
# validate --json shows each warning at its field's line: a pasted ASM
# CRD (no mode) names every Aperture field mode sluice ignores.
cat >"$T/asm.yaml" <<'YAML'
apiVersion: sluice/v1
kind: AverageLatencySchedulingPolicy
metadata: {name: pasted}
spec:
  load_scheduling_core:
    aimd_load_scheduler:
      gradient: {slope: -1}
      max_load_multiplier: 2
      load_scheduler:
        selectors: [{label_matcher: {match_labels: {dst.port: "8080"}}}]
  control_period: 1s
YAML
j=$("$CTL" validate "$T/asm.yaml" --json)
check "validate --json: the pasted CRD's gradient is named at line 7, column 7" \
	jq -e '[.diagnostics[] | select(.path == "spec.load_scheduling_core.aimd_load_scheduler.gradient" and .line == 7 and .column == 7 and .severity == "warning")] | length == 1' <<<"$j"
check "... max_load_multiplier at line 8, control_period at line 11, each saying how to run it" \
	jq -e '([.diagnostics[] | select(.line == 8 or .line == 11) | select(.message | test("set spec.mode: aperture"))] | length) == 2' <<<"$j"
check "... and a Limited level without limitResponse is an error at its type's line" bash -c '
	printf "apiVersion: sluice/v1\nkind: PriorityLevelConfiguration\nmetadata: {name: web}\nspec:\n  type: Limited\n" >"$2/lim.yaml"
	"$1" validate "$2/lim.yaml" --json | jq -e ".valid == false and .diagnostics[0].line == 5 and .diagnostics[0].path == \"spec.limited\""' _ "$CTL" "$T"

# The bash completion (issue 28): shellcheck-clean, file names where a
# command or option takes a file, the command found wherever it stands.
COMP=$E2E_ROOT/configs/bash-completion/sluicectl
check "the bash completion is shellcheck-clean" shellcheck -s bash "$COMP"
comp() { # WORDS...: what completing the last one offers
	PATH="$(dirname "$CTL"):$PATH" bash -c 'source "$1"; shift; COMP_WORDS=("$@")
		COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); _sluicectl; echo "${COMPREPLY[*]}"' _ "$COMP" "$@"
}
cd "$E2E_ROOT" || exit 1
check "complete 'val' -> validate" test "$(comp sluicectl val)" = validate
check "complete 'validate configs/def' -> the file" test "$(comp sluicectl validate configs/def)" = configs/default.yaml
check "complete 'replay --trace configs/def' -> the file (a CSV option)" \
	test "$(comp sluicectl replay --trace configs/def)" = configs/default.yaml
check "complete '-j status --w' -> status's --watch (the command after a global option)" \
	test "$(comp sluicectl -j status --w)" = --watch
check "complete 'shadow o' -> on off" test "$(comp sluicectl shadow o)" = "on off"
check "complete a number's value -> nothing" test -z "$(comp sluicectl limits --server-concurrency 1)"

# schema: the loader's own tables.  Every kind is there, and each integer
# of Server spec one below its minimum is refused by validate at that field.
sj=$("$CTL" schema --json)
check "schema --json: every kind, and more than 100 fields" \
	jq -e 'length > 100 and ([.[].kind] | unique) == ["*", "*label matcher", "AverageLatencySchedulingPolicy", "ConnectionLabels", "FlowSchema", "PriorityLevelConfiguration", "Server"]' <<<"$sj"
check "schema: defaults from the defaults functions (Server failMode static, queues 64)" \
	jq -e 'any(.field == "spec.failMode" and .default == "static") and any(.field == "spec.limited.limitResponse.queuing.queues" and .default == "64")' <<<"$sj"
while read -r field min; do
	name=${field#spec.}
	printf 'apiVersion: sluice/v1\nkind: Server\nmetadata: {name: s}\nspec:\n  %s: %s\n' "$name" "$((min - 1))" >"$T/schema.yaml"
	out=$("$CTL" validate "$T/schema.yaml" 2>&1)
	check "schema says $field is at least $min: validate refuses $((min - 1)) there" \
		grep -q "schema.yaml:5:[0-9]*: error: .*$field" <<<"$out"
done < <(jq -r '.[] | select(.kind == "Server" and .type == "integer" and (.field | test("^spec\\.[a-zA-Z]+$"))) | "\(.field) \(.range | capture("(at least |^)(?<m>-?[0-9]+)").m)"' <<<"$sj")
usage_err "schema, unknown kind" "sluicectl schema: no object kind 'Bogus'" "$CTL" schema Bogus

# A fleet is read and checked (sluice.yaml(5) has its fields) but no sluiced
# runs one yet: it refuses the file rather than ignore it.
cat >"$T/fleet.yaml" <<'EOF'
apiVersion: sluice/v1
kind: Server
metadata: {name: s}
spec:
  fleet: {name: pg, endpoints: ["http://198.18.0.1:2379"]}
---
apiVersion: sluice/v1
kind: PriorityLevelConfiguration
metadata: {name: db}
spec:
  type: Limited
  limited: {limitResponse: {type: Reject}, fleet: {seats: 10, floor: 2}}
EOF
check "validate reads a fleet's configuration" "$CTL" validate -c "$T/fleet.yaml"
check "sluiced refuses a fleet it cannot run yet, at the file's line, before attaching anything" \
	bash -c 'out=$(timeout 10 "$1" --config "$2" --iface lo --pin-dir "$3" 2>&1); rc=$?
		[ $rc -ne 0 ] && grep -q "fleet.yaml:5:10: error: Server: spec.fleet: this sluiced does not run fleets yet" <<<"$out" &&
		! ip link show lo | grep -q xdp' _ "$SLUICED" "$T/fleet.yaml" "$T/pins"

e2e_finish
