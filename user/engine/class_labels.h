/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Label selectors as class-id terms (pure): which classes of the four
 * dimensions a label matcher selects, for the classification compiler.
 *
 * A label's value is a function of some dimensions: src.ip and
 * ip.version of the client address, dst.ip of the local one, the ports
 * of theirs, a ConnectionLabels key of the dimensions its rules test,
 * proto and iface of none.  A matcher's requirements are split into
 * groups over disjoint dimension sets (a requirement per label, the
 * expression tree as one); each group is evaluated over the classes of
 * its own dimensions only (its label space), and the matcher is the AND
 * of the groups.  An In requirement seeds its group from an index of the
 * space by label value, so a thousand `tenant: tN` selectors cost a
 * thousand lookups, not a thousand scans.
 */
#ifndef SLUICE_CLASS_LABELS_H
#define SLUICE_CLASS_LABELS_H

#include "config/config.h"
#include "engine/class_terms.h"

/* Largest label space evaluated (class combinations of its dimensions). */
#define SL_LABEL_SPACE_MAX (1u << 22)

struct sl_label_eval;

int sl_label_eval_new(const struct sl_config *cfg, const struct sl_dims *dims, const char *iface,
		      struct sl_label_eval **out);
/* The connections m selects, as one term (none: it selects nothing).
 * -E2BIG when a group's space is larger than SL_LABEL_SPACE_MAX:
 * *space_size then says how large. */
int sl_label_eval_term(struct sl_label_eval *e, const struct sl_label_matcher *m,
		       struct sl_term *out, size_t *space_size);
void sl_label_eval_free(struct sl_label_eval *e);

#endif
