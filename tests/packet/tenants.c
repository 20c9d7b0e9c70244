// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The many-tenants configuration of classification at scale (tenants.h). */
#include "tenants.h"

#include <stdio.h>

/* Tenant i: 10.(i/256).(i%256).0/24 to local port 10000 + i.  Mixed: odd
 * tenants are labelled tenant=tI by ConnectionLabels and matched by that
 * label; every tenant is labelled app=tenants, which a policy selects,
 * with two workloads (tier=gold for 10.0.0.0/16, a regex for odd tenants). */
char *tenants_yaml(unsigned n, bool mixed, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	if (!f)
		return NULL;
	fprintf(f, "apiVersion: sluice/v1\nkind: Server\nmetadata: {name: s}\n"
		   "spec: {serverConcurrencyLimit: 1000}\n---\n"
		   "apiVersion: sluice/v1\nkind: PriorityLevelConfiguration\nmetadata: {name: tenants}\n"
		   "spec:\n  type: Limited\n  limited:\n    nominalConcurrencyShares: 100\n"
		   "    limitResponse: {type: Queue, queuing: {queues: 64, handSize: 6, queueLengthLimit: 50}}\n");
	if (mixed) {
		fprintf(f, "---\napiVersion: sluice/v1\nkind: ConnectionLabels\nmetadata: {name: tenants}\n"
			   "spec:\n  rules:\n");
		for (unsigned i = 1; i < n; i += 2)
			fprintf(f, "  - sources: [10.%u.%u.0/24]\n    labels: {tenant: t%u}\n",
				(i / 256) % 256, i % 256, i);
		fprintf(f, "  - sources: [10.0.0.0/16]\n    labels: {tier: gold}\n"
			   "  - sources: [10.0.0.0/8]\n    labels: {app: tenants}\n"
			   "---\napiVersion: sluice/v1\nkind: AverageLatencySchedulingPolicy\n"
			   "metadata: {name: tenants}\nspec:\n  load_scheduling_core:\n"
			   "    aimd_load_scheduler:\n      load_scheduler:\n        selectors:\n"
			   "        - control_point: ingress\n          label_matcher:\n"
			   "            match_labels: {app: tenants}\n"
			   "        scheduler:\n          workloads:\n"
			   "          - name: gold\n            label_matcher: {match_labels: {tier: gold}}\n"
			   "            parameters: {priority: 4}\n"
			   "          - name: odd\n            label_matcher:\n"
			   "              expression: {label_matches: {label: tenant, regex: \"^t[0-9]*[13579]$\"}}\n"
			   "            parameters: {priority: 2}\n");
	}
	for (unsigned i = 0; i < n; i++) {
		fprintf(f, "---\napiVersion: sluice/v1\nkind: FlowSchema\nmetadata: {name: t%u}\n"
			   "spec:\n  priorityLevelConfiguration: {name: tenants}\n  matchingPrecedence: %u\n"
			   "  rules:\n", i, 1000 + i % 9000);
		if (mixed && i % 2)
			fprintf(f, "  - subjects: [{kind: Labels, labels: {matchLabels: {tenant: t%u}}}]\n", i);
		else
			fprintf(f, "  - subjects: [{kind: Network, network: {cidrs: [10.%u.%u.0/24]}}]\n",
				(i / 256) % 256, i % 256);
		fprintf(f, "    destinations: [{ports: [%u]}]\n", 10000 + i);
	}
	fclose(f);
	return text;
}

