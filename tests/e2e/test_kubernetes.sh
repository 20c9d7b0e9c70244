#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# configs/kubernetes as a cluster would take it: every manifest parses as
# Kubernetes objects (apiVersion, kind, metadata.name, its namespace), the
# kustomization names every file, the ConfigMap's payload is a valid sluice
# configuration, and the DaemonSet agrees with the rest: its selector with
# its pods, its volumes with its mounts, its options with what sluiced
# accepts, its capabilities with the systemd unit's, its probes with its
# --metrics-address (the node's own), the Service with the pods and the
# ServiceMonitor with the Service.  Needs no cluster, no root.
source "$(dirname "$0")/lib.sh"
K=$E2E_ROOT/configs/kubernetes/base
T=$(mktemp -d /tmp/sluice-k8s.XXXXXX)
trap 'rm -rf "$T"' EXIT

for f in "$K"/*.yaml; do
	n=$(basename "$f")
	[ "$n" = sluice.yaml ] && continue # the payload, a sluice configuration
	if "$LAB_YAML2JSON" "$f" >"$T/$n.json" 2>"$T/err"; then ok "$n parses as YAML"
	else not_ok "$n parses as YAML: $(cat "$T/err")"; fi
	check "$n: every object has apiVersion, kind and metadata.name (or is the kustomization)" \
		jq -se 'length > 0 and all(.[]; (.apiVersion | type) == "string" and (.kind | type) == "string" and ((.metadata.name | type) == "string" or .kind == "Kustomization"))' "$T/$n.json"
done
cat "$T"/*.yaml.json >"$T/all.json"
obj() { jq -c --arg k "$1" 'select(.kind == $k)' "$T/all.json"; }
kus=$(obj Kustomization)
ds=$(obj DaemonSet)
svc=$(obj Service)
sm=$(obj ServiceMonitor)
check "one each: Kustomization, Namespace, ServiceAccount, DaemonSet, Service, ServiceMonitor, PrometheusRule" \
	bash -c 'for k in Kustomization Namespace ServiceAccount DaemonSet Service ServiceMonitor PrometheusRule; do [ "$(jq -c --arg k "$k" "select(.kind == \$k)" "$1" | wc -l)" = 1 ] || exit 1; done' _ "$T/all.json"
ns=$(jq -r .namespace <<<"$kus")
check "namespaced objects are in the kustomization's namespace ($ns), which it creates" \
	bash -c 'jq -se --arg ns "$2" "all(.[] | select(.kind != \"Namespace\" and .kind != \"Kustomization\"); .metadata.namespace == \$ns) and any(.[]; .kind == \"Namespace\" and .metadata.name == \$ns)" "$1" >/dev/null' _ "$T/all.json" "$ns"
check "the kustomization lists every manifest there is, and only those" \
	bash -c '[ "$(jq -r ".resources[]" <<<"$1" | sort)" = "$(cd "$2" && ls *.yaml | grep -vx -e kustomization.yaml -e sluice.yaml | sort)" ]' _ "$kus" "$K"
cm=$(jq -r '.configMapGenerator[0].name' <<<"$kus")
payload=$K/$(jq -r '.configMapGenerator[0].files[0]' <<<"$kus")
check "the ConfigMap is named by its content's hash (an edit rolls the DaemonSet)" \
	jq -e '(.generatorOptions.disableNameSuffixHash // false) == false and all(.configMapGenerator[]; (.options.disableNameSuffixHash // false) == false)' <<<"$kus"
check "the ConfigMap's payload is a valid sluice configuration (sluicectl validate)" "$SLUICECTL" validate "$payload"
check "... and one sluiced would apply (its levels fit: sluicectl limits)" "$SLUICECTL" limits --config "$payload"

# The DaemonSet.
tmpl=$(jq -c .spec.template <<<"$ds")
pod=$(jq -c .spec <<<"$tmpl")
c=$(jq -c '.containers[0]' <<<"$pod")
check "DaemonSet: its selector matches its pods' labels" \
	jq -e '.spec.selector.matchLabels as $m | .spec.template.metadata.labels as $l | all($m | to_entries[]; $l[.key] == .value)' <<<"$ds"
check "DaemonSet: hostNetwork (XDP on the node's interface, metrics on the node)" jq -e '.hostNetwork == true' <<<"$pod"
check "DaemonSet: every volumeMount names a volume" \
	jq -e '[.volumes[].name] as $v | all(.containers[].volumeMounts[]; .name as $n | $v | index($n) != null)' <<<"$pod"
check "DaemonSet: the ConfigMap volume is the kustomization's ConfigMap ($cm)" \
	jq -e --arg cm "$cm" 'any(.volumes[]; .configMap.name == $cm)' <<<"$pod"
arg() { jq -r --arg o "$1" '.args[] | select(startswith($o + "=")) | sub("^[^=]*="; "")' <<<"$c"; }
mount_of() { jq -r --arg p "$1" '.volumeMounts[] | select(.mountPath == $p) | .name' <<<"$c"; }
hostpath_of() { jq -r --arg n "$1" '.volumes[] | select(.name == $n) | .hostPath.path // empty' <<<"$pod"; }
cfg=$(arg --config)
check "DaemonSet: --config ($cfg) is the payload's file in the ConfigMap mount" \
	bash -c '[ "$(jq -r --arg d "$(dirname "$1")" ".volumeMounts[] | select(.mountPath == \$d) | .name" <<<"$2")" = config ] && [ "$(basename "$1")" = "$(basename "$3")" ]' _ "$cfg" "$c" "$payload"
cg=$(arg --cgroup)
check "DaemonSet: --cgroup ($cg) is the host's /sys/fs/cgroup, not the pod's namespace" \
	test "$(hostpath_of "$(mount_of "$cg")")" = /sys/fs/cgroup
pin=$(arg --pin-dir)
check "DaemonSet: --pin-dir ($pin) is on the host's bpffs (the pins outlive the pod)" \
	bash -c '[ "$(jq -r --arg n "$(jq -r ".volumeMounts[] | select(.mountPath == \"/sys/fs/bpf\") | .name" <<<"$2")" ".volumes[] | select(.name == \$n) | .hostPath.path" <<<"$3")" = /sys/fs/bpf ] && [ "${1#/sys/fs/bpf/}" != "$1" ]' _ "$pin" "$c" "$pod"
check "DaemonSet: --watch-config (an edited ConfigMap is reloaded) and --keep-attached (a rolling update adopts)" \
	jq -e '(.args | index("--watch-config")) != null and (.args | index("--keep-attached")) != null' <<<"$c"
opts=$("$SLUICED" --help)
bad=""
for o in $(jq -r '.args[] | sub("=.*"; "")' <<<"$c"); do grep -q -- " $o" <<<"$opts" || bad+=" $o"; done
check "DaemonSet: every option it passes is one sluiced --help knows (unknown:${bad:- none})" test -z "$bad"
sock=$(arg --control-socket)
check "DaemonSet: the control socket's directory is a volume ($(dirname "$sock"))" test -n "$(mount_of "$(dirname "$sock")")"
unit_caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$E2E_ROOT/configs/systemd/sluiced.service.in" | tr ' ' '\n' | sed 's/^CAP_//' | sort | tr '\n' ' ')
pod_caps=$(jq -r '.securityContext.capabilities.add[]' <<<"$c" | sort | tr '\n' ' ')
check "DaemonSet: the capabilities are the systemd unit's ($pod_caps= $unit_caps), all others dropped, not privileged" \
	bash -c '[ "$1" = "$2" ] && jq -e ".securityContext.capabilities.drop == [\"ALL\"] and .securityContext.privileged == false" <<<"$3" >/dev/null' _ "$pod_caps" "$unit_caps" "$c"
maddr=$(arg --metrics-address)
mport=${maddr##*:}
check "DaemonSet: the metrics port ($(jq -r '.ports[0].containerPort' <<<"$c")) is --metrics-address's ($maddr)" \
	jq -e --argjson p "${mport:-0}" '.ports[] | select(.name == "metrics") | .containerPort == $p' <<<"$c"
check "DaemonSet: liveness on /healthz, readiness on /readyz, both on that port" \
	jq -e '.livenessProbe.httpGet.path == "/healthz" and .readinessProbe.httpGet.path == "/readyz" and .livenessProbe.httpGet.port == "metrics" and .readinessProbe.httpGet.port == "metrics"' <<<"$c"
check "DaemonSet: the metrics listener binds the node's own address, not every one (issue 26)" \
	test "${maddr%:*}" = '$(NODE_IP)'
check "... which the downward API gives: status.hostIP" \
	jq -e '.env[] | select(.name == "NODE_IP") | .valueFrom.fieldRef.fieldPath == "status.hostIP"' <<<"$c"
check "the payload's own metricsAddress is loopback (what --metrics-address replaces)" \
	grep -Eq '^ *metricsAddress: *"?127\.0\.0\.1:' "$payload"

# Issue 28: what a cluster that enforces policies asks of the pods.
nsobj=$(obj Namespace)
sa=$(obj ServiceAccount)
check "Namespace: Pod Security enforce/audit/warn privileged (baseline would refuse the pods)" \
	jq -e '.metadata.labels["pod-security.kubernetes.io/enforce"] == "privileged" and .metadata.labels["pod-security.kubernetes.io/warn"] == "privileged"' <<<"$nsobj"
check "DaemonSet: its own ServiceAccount, with no token mounted (pod and account)" \
	bash -c 'jq -e --arg sa "$(jq -r .metadata.name <<<"$2")" ".serviceAccountName == \$sa and .automountServiceAccountToken == false" <<<"$1" >/dev/null && jq -e ".automountServiceAccountToken == false" <<<"$2" >/dev/null' _ "$pod" "$sa"
check "DaemonSet: the runtime's default seccomp profile" jq -e '.securityContext.seccompProfile.type == "RuntimeDefault"' <<<"$pod"
rules=$(obj PrometheusRule)
jq '{groups: .spec.groups}' <<<"$rules" >"$T/rules.yml"
check "PrometheusRule: promtool check rules accepts its groups" promtool check rules "$T/rules.yml"
check_num "... which alert on sluice's own metrics" "$(grep -oE 'sluice_[a-z_]+' "$T/rules.yml" | sort -u | wc -l)" -ge 4
check ".containerignore keeps build trees and .git out of the image's context (and .dockerignore is it)" \
	bash -c 'grep -qx build "$1/.containerignore" && grep -qx .git "$1/.containerignore" && [ "$(readlink "$1/.dockerignore")" = .containerignore ]' _ "$E2E_ROOT"

# Service and ServiceMonitor.
check "Service: selects the DaemonSet's pods" \
	jq -e --argjson l "$(jq -c .metadata.labels <<<"$tmpl")" 'all(.spec.selector | to_entries[]; $l[.key] == .value)' <<<"$svc"
check "Service: its port targets the container's metrics port by name" jq -e '.spec.ports[0].targetPort == "metrics"' <<<"$svc"
check "ServiceMonitor: selects the Service, scrapes its metrics port at /metrics" \
	bash -c 'jq -e --argjson l "$(jq -c .metadata.labels <<<"$2")" --arg p "$(jq -r ".spec.ports[0].name" <<<"$2")" "all(.spec.selector.matchLabels | to_entries[]; \$l[.key] == .value) and .spec.endpoints[0].port == \$p and .spec.endpoints[0].path == \"/metrics\"" <<<"$1" >/dev/null' _ "$sm" "$svc"
check "ServiceMonitor: looks in the namespace the Service is in" \
	bash -c 'jq -e --arg ns "$2" ".spec.namespaceSelector.matchNames | index(\$ns) != null" <<<"$1" >/dev/null' _ "$sm" "$ns"
# The kustomizations as kubectl builds them (the variants beside base/).
if command -v kubectl >/dev/null; then
	kz() { kubectl kustomize "$E2E_ROOT/configs/kubernetes/$1" 2>"$T/kz.err" | "$LAB_YAML2JSON" - 2>>"$T/kz.err"; }
	top=$(kz "") base=$(kz base) inplace=$(kz in-place) pinned=$(kz pinned) cleanup=$(kz cleanup)
	check "kubectl kustomize builds configs/kubernetes and each variant ($(tr '\n' ' ' <"$T/kz.err"))" \
		bash -c '[ -n "$1" ] && [ -n "$2" ] && [ -n "$3" ] && [ -n "$4" ] && [ -n "$5" ]' _ "$top" "$base" "$inplace" "$pinned" "$cleanup"
	check "configs/kubernetes is base/" test "$top" = "$base"
	cmname() { jq -r 'select(.kind == "ConfigMap") | .metadata.name' <<<"$1"; }
	dscm() { jq -r 'select(.kind == "DaemonSet") | .spec.template.spec.volumes[] | .configMap.name // empty' <<<"$1"; }
	h=$(cmname "$base")
	check "base: the ConfigMap is $cm-<hash> ($h), and the DaemonSet mounts that name" \
		bash -c '[[ "$1" =~ ^$3-[a-z0-9]{10}$ ]] && [ "$2" = "$1" ]' _ "$h" "$(dscm "$base")" "$cm"
	check "base: the DaemonSet rolls one node at a time, each ready 30 s first (the canary)" \
		jq -se '.[] | select(.kind == "DaemonSet") | .spec.updateStrategy.rollingUpdate.maxUnavailable == 1 and .spec.minReadySeconds >= 30' <<<"$base"
	check "in-place: the ConfigMap keeps its name ($(cmname "$inplace")), the DaemonSet mounts it, and sluiced watches it" \
		bash -c '[ "$1" = "$3" ] && [ "$2" = "$3" ] && jq -se ".[] | select(.kind == \"DaemonSet\") | .spec.template.spec.containers[0].args | index(\"--watch-config\") != null" <<<"$4" >/dev/null' _ \
		"$(cmname "$inplace")" "$(dscm "$inplace")" "$cm" "$inplace"
	check "pinned: the image by registry and sha256 digest, IfNotPresent" \
		jq -se '.[] | select(.kind == "DaemonSet") | .spec.template.spec.containers[0] | (.image | test("^[a-z0-9.-]+/sluice@sha256:[0-9a-f]{64}$")) and .imagePullPolicy == "IfNotPresent"' <<<"$pinned"
	cl=$(jq -c 'select(.kind == "DaemonSet") | .spec.template.spec' <<<"$cleanup")
	check "cleanup: its namespace is sluiced's ($ns)" \
		bash -c '[ "$(jq -r "select(.kind == \"DaemonSet\") | .metadata.namespace" <<<"$1")" = "$2" ]' _ "$cleanup" "$ns"
	check "cleanup: runs sluicectl detach on the pins sluiced's DaemonSet uses ($pin), in the node's network namespace" \
		jq -e --arg p "$pin" '.hostNetwork == true and .initContainers[0].command == ["/usr/bin/sluicectl", "detach", ("--pin-dir=" + $p)]' <<<"$cl"
	check "cleanup: the host's bpffs mounted where the pins are" \
		jq -e '.initContainers[0].volumeMounts[] as $m | .volumes[] | select(.name == $m.name) | $m.mountPath == "/sys/fs/bpf" and .hostPath.path == "/sys/fs/bpf"' <<<"$cl"
	check "cleanup: no capability sluiced's pod does not have, all others dropped" \
		bash -c 'jq -e --argjson d "$(jq -c ".securityContext.capabilities.add" <<<"$2")" ".initContainers[0].securityContext.capabilities | .drop == [\"ALL\"] and all(.add[]; . as \$c | \$d | index(\$c) != null)" <<<"$1" >/dev/null' _ "$cl" "$c"
else
	not_ok "kubectl is missing: the kustomizations are not built (configs/kubernetes/{base,in-place,pinned,cleanup})"
fi
# (The Containerfile is not built here: no container runtime.)
check "the Containerfile's ENTRYPOINT is sluiced, to which the DaemonSet passes only options" \
	bash -c 'grep -q "ENTRYPOINT \[\"/usr/sbin/sluiced\"\]" "$1" && jq -e "(.command | not) and all(.args[]; startswith(\"--\"))" <<<"$2" >/dev/null' _ "$E2E_ROOT/configs/kubernetes/Containerfile" "$c"

e2e_finish
