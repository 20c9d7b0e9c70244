#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The license, as a distribution checks it (issue 28): a LICENSE that
# states the terms and the texts it names, the same SPDX expression in
# the first lines of every source file, and the matching kernel license
# string in every BPF object the build makes.  Needs no root.
source "$(dirname "$0")/lib.sh"
cd "$E2E_ROOT" || exit 1

SPDX='(GPL-2.0-only OR BSD-2-Clause)'
check "LICENSE states the SPDX expression" grep -qF "SPDX: $SPDX" LICENSE
check "... and the texts it names are there" \
	bash -c 'grep -q "GNU GENERAL PUBLIC LICENSE" LICENSES/GPL-2.0-only.txt && grep -q "Redistributions of source code" LICENSES/BSD-2-Clause.txt'
# Source: C, headers, shell, the Makefile and CI, the completion, the image.
missing=$(git ls-files '*.c' '*.h' '*.sh' Makefile .ci/run configs/bash-completion/sluicectl \
	configs/kubernetes/Containerfile | while read -r f; do
	head -3 "$f" | grep -qF "SPDX-License-Identifier: $SPDX" || echo "$f"
done)
n=$(git ls-files '*.c' '*.h' '*.sh' | wc -l)
check_num "source files checked" "$n" -ge 200
check "every source file carries SPDX-License-Identifier: $SPDX in its first lines${missing:+ (not: $(echo $missing | head -c 300))}" \
	test -z "$missing"
# The BPF objects: the kernel's license string for that expression.
objs=$(ls bpf/*.bpf.o "$B"/tests/*.bpf.o 2>/dev/null)
check_num "BPF objects built ($(echo $objs | wc -w))" "$(echo $objs | wc -w)" -ge 2
bad=""
for o in $objs; do
	readelf -p license "$o" 2>/dev/null | grep -q 'Dual BSD/GPL' || bad+=" $o"
done
check "every BPF object declares license \"Dual BSD/GPL\"${bad:+ (not:$bad)}" test -z "$bad"
e2e_finish
