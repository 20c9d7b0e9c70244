#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The docs' reference tables are the program's own, written by
# scripts/doc_catalogues.sh: every `event=` line sluiced logs
# (docs/operations.md) and every metric family it serves, with its type and
# help (docs/metrics.md, from a live /metrics page with both policy modes).
# A doc that drifts from the program fails here; SLUICE_DOCS_UPDATE=1
# writes the tables into the docs instead.
source "$(dirname "$0")/lib.sh"
e2e_init "$@"

CAT=$E2E_ROOT/scripts/doc_catalogues.sh
# compare NAME DOC TABLE_FILE: the doc's section against the table.
compare() {
	local name=$1 doc=$2 table=$3
	if [ -n "${SLUICE_DOCS_UPDATE:-}" ]; then
		"$CAT" replace "$doc" "$name" "$table"
		ok "$name: written into ${doc#"$E2E_ROOT"/} (SLUICE_DOCS_UPDATE)"
		return
	fi
	"$CAT" section "$doc" "$name" >"$E2E_TMP/$name.doc"
	# A family without samples on this page shows no labels: the doc's
	# labels stand there (they were seen when it was written).
	if [ "$name" = metrics ]; then
		awk -F ' [|] ' 'NR == FNR { if (NF >= 4) lab[$1] = $3; next }
			NF >= 4 && $3 == "" && ($1 in lab) { $3 = lab[$1] } { print }' OFS=' | ' \
			"$E2E_TMP/$name.doc" "$table" >"$table.filled"
		mv "$table.filled" "$table"
	fi
	if [ "$(wc -l <"$table")" -gt 2 ] && diff -u "$E2E_TMP/$name.doc" "$table" >"$E2E_TMP/$name.diff"; then
		ok "${doc#"$E2E_ROOT"/}: the $name table is the program's ($(($(wc -l <"$table") - 2)) rows)"
	else
		not_ok "${doc#"$E2E_ROOT"/}: the $name table drifted from the program (SLUICE_DOCS_UPDATE=1 tests/e2e/test_docs.sh rewrites it)"
		sed 's/^/#   /' "$E2E_TMP/$name.diff" | head -n 40
	fi
}

"$CAT" events >"$E2E_TMP/events.md"
compare events "$E2E_ROOT/docs/operations.md" "$E2E_TMP/events.md"

# Every family: the demo's configuration (levels, labels, a policy in
# sluice's mode) with a second policy in Aperture's, and a metrics address.
CFG=$E2E_TMP/docs.yaml
awk '{ print } /^  serverConcurrencyLimit:/ && !done { print "  metricsAddress: \"127.0.0.1:9467\""; done = 1 }' \
	"$E2E_ROOT/configs/demo.yaml" >"$CFG"
cat >>"$CFG" <<'EOF'
---
apiVersion: sluice/v1
kind: AverageLatencySchedulingPolicy
metadata: {name: aperture-service}
spec:
  mode: aperture
  load_scheduling_core:
    aimd_load_scheduler:
      load_scheduler:
        selectors:
        - control_point: ingress
          service: any
          label_matcher:
            match_labels: {dst.port: "9090"}
EOF
check "the configuration with both policy modes validates" "$SLUICECTL" validate -c "$CFG"
start_service 8080 8 20 || not_ok "service starts"
start_daemon "$CFG" || { not_ok "sluiced starts"; e2e_finish; }
# A few connections, so that every per-schema family has its series.
load --connect $SRV4 --port 8080 --rate 20 --count 10 --timeout 3 >/dev/null
sleep 1.2
curl -sf --max-time 5 http://127.0.0.1:9467/metrics >"$E2E_TMP/metrics.txt"
check_num "a /metrics page (families)" "$(grep -c '^# TYPE sluice_' "$E2E_TMP/metrics.txt")" -ge 40
"$CAT" metrics "$E2E_TMP/metrics.txt" >"$E2E_TMP/metrics.md"
compare metrics "$E2E_ROOT/docs/metrics.md" "$E2E_TMP/metrics.md"
check "clean stop" stop_daemon
e2e_finish
