// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Concurrency borrowing between priority levels (Kubernetes apf_controller.go updateBorrowing, conc_alloc.go computeConcurrencyAllocation).
 */
#include "engine/borrowing.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

/* ---- Kubernetes conc_alloc.go computeConcurrencyAllocation fair-allocation solver ------------------------------------- */

/* One relative bound (bound / target) of one item. */
struct rel_bound {
	double value;
	double target; /* the item's (adjusted) target */
	bool lower;
};

/* Neumaier-compensated running sum: the sweep adds and removes targets of
 * very different sizes, and plain addition would leave residue. */
struct ksum {
	double s, c;
};

static void ksum_add(struct ksum *k, double v)
{
	double t = k->s + v;

	if (fabs(k->s) >= fabs(v))
		k->c += (k->s - t) + v;
	else
		k->c += (v - t) + k->s;
	k->s = t;
}

static double ksum_val(const struct ksum *k)
{
	return k->s + k->c;
}

static int rel_bound_cmp(const void *a, const void *b)
{
	const struct rel_bound *x = a, *y = b;

	if (x->value < y->value)
		return -1;
	if (x->value > y->value)
		return 1;
	/* Ties: the order does not change the result (every bound at the
	 * current fairProp is applied before the next step); keep it total. */
	return (int)y->lower - (int)x->lower;
}

static double adj_target(double t)
{
	return t < SL_FAIR_MIN_TARGET ? SL_FAIR_MIN_TARGET : t;
}

/*
 * The sweep found the segment starting at seg_lo where the total reaches
 * S.  The running sum and slope carry rounding drift from every step
 * before (large targets added and removed leave residue next to a 0.001
 * target, and fairProp can run to 1e5 and beyond), so solve the segment
 * again from scratch: items whose relative lower bound is above seg_lo sit
 * at their lower bound, items whose relative upper bound is at or below it
 * at their upper bound, the rest are proportional.  O(n).
 */
static double solve_segment(double S, const double *target, const double *lower,
			    const double *upper, size_t n, double seg_lo, double approx)
{
	double fixed = 0, slope = 0;

	for (size_t i = 0; i < n; i++) {
		double t = adj_target(target[i]);

		if (lower[i] / t > seg_lo)
			fixed += lower[i];
		else if (upper[i] / t <= seg_lo)
			fixed += upper[i];
		else
			slope += t;
	}
	return slope > 0 ? (S - fixed) / slope : approx;
}

int sl_fair_alloc(double S, const double *target, const double *lower, const double *upper,
		  size_t n, double *alloc_out, double *fair_prop_out)
{
	double low_sum = 0, high_sum = 0, target_sum = 0;
	double lb_min = INFINITY, lb_max = -INFINITY, ub_min = INFINITY, ub_max = -INFINITY;
	double fair_prop;
	struct rel_bound *rb;

	if (isnan(S) || isinf(S) || S < 0)
		return -EINVAL;
	if (n && (!target || !lower || !upper || !alloc_out))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		double t = target[i], lo = lower[i], up = upper[i];

		if (isnan(t) || isnan(lo) || isnan(up) || isinf(t) || isinf(lo))
			return -EINVAL;
		if (lo < 0 || t < lo || up < lo)
			return -EINVAL;
		t = adj_target(t);
		low_sum += lo;
		high_sum += up;
		target_sum += t;
		lb_min = fmin(lb_min, lo / t);
		lb_max = fmax(lb_max, lo / t);
		ub_min = fmin(ub_min, up / t);
		ub_max = fmax(ub_max, up / t);
	}
	if (low_sum - S > SL_FAIR_EPSILON || S - high_sum > SL_FAIR_EPSILON)
		return -EINVAL;

	if (S == 0) {
		for (size_t i = 0; i < n; i++)
			alloc_out[i] = 0;
		fair_prop = 0;
		goto done;
	}
	/* From here on n > 0: S > 0 and Σupper >= S - ε rule out n = 0. */
	if (low_sum - S > -SL_FAIR_EPSILON) { /* no wiggle room, held from below */
		for (size_t i = 0; i < n; i++)
			alloc_out[i] = lower[i];
		fair_prop = lb_min;
		goto done;
	}
	if (S - high_sum > -SL_FAIR_EPSILON) { /* no wiggle room, held from above */
		for (size_t i = 0; i < n; i++)
			alloc_out[i] = upper[i];
		fair_prop = ub_max;
		goto done;
	}
	fair_prop = S / target_sum;
	if (lb_max <= fair_prop && fair_prop <= ub_min) { /* no bound matters */
		for (size_t i = 0; i < n; i++)
			alloc_out[i] = adj_target(target[i]) * fair_prop;
		goto done;
	}

	/*
	 * Some bounds matter.  Σ clamp(p * t_i, lower_i, upper_i) is piecewise
	 * linear and nondecreasing in p; its slope is the sum of the targets of
	 * the items strictly between their bounds.  Sweep p upward through the
	 * sorted relative bounds from the smallest relative lower bound (where
	 * the total is Σlower < S) until the segment where it reaches S.
	 */
	rb = malloc(2 * n * sizeof(*rb));
	if (!rb)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		double t = adj_target(target[i]);

		rb[2 * i] = (struct rel_bound){.value = lower[i] / t, .target = t, .lower = true};
		rb[2 * i + 1] = (struct rel_bound){.value = upper[i] / t, .target = t, .lower = false};
	}
	qsort(rb, 2 * n, sizeof(*rb), rel_bound_cmp);
	{
		struct ksum sum = {low_sum, 0}, slope_k = {0, 0};
		size_t next = 0, n_sensitive = 0;

		fair_prop = lb_min;
		while (ksum_val(&sum) < S) {
			double next_bound, next_prop, slope;

			/* Apply every bound at or below the current fairProp. */
			while (next < 2 * n && rb[next].value <= fair_prop) {
				if (rb[next].lower) {
					n_sensitive++;
					ksum_add(&slope_k, rb[next].target);
				} else {
					n_sensitive--;
					ksum_add(&slope_k, -rb[next].target);
				}
				next++;
			}
			if (!n_sensitive)
				slope_k = (struct ksum){0, 0}; /* drop any residue */
			if (next == 2 * n) {
				/* Every item is at its upper bound, whose sum exceeds
				 * S + ε: only rounding drift could get here. */
				free(rb);
				return -EINVAL;
			}
			next_bound = rb[next].value;
			if (!n_sensitive) { /* flat segment: skip it */
				fair_prop = next_bound;
				continue;
			}
			slope = ksum_val(&slope_k);
			next_prop = fair_prop + (S - ksum_val(&sum)) / slope;
			if (next_prop <= next_bound) {
				fair_prop = solve_segment(S, target, lower, upper, n, fair_prop,
							  next_prop);
				break;
			}
			ksum_add(&sum, (next_bound - fair_prop) * slope);
			fair_prop = next_bound;
		}
	}
	free(rb);
	for (size_t i = 0; i < n; i++)
		alloc_out[i] = fmax(lower[i], fmin(upper[i], fair_prop * adj_target(target[i])));
done:
	if (fair_prop_out)
		*fair_prop_out = fair_prop;
	return 0;
}

/* ---- Kubernetes conc_alloc.go computeConcurrencyAllocation allocation across levels ---------------------------------- */

const char *sl_borrow_regime_name(enum sl_borrow_regime r)
{
	switch (r) {
	case SL_BORROW_REGIME_MIN_CL:
		return "min-cl";
	case SL_BORROW_REGIME_PROPORTIONAL:
		return "proportional";
	case SL_BORROW_REGIME_FAIR_ALLOC:
		return "fair-alloc";
	}
	return "?";
}

static uint32_t to_u32(double v)
{
	v = round(v);
	if (!(v > 0))
		return 0;
	if (v >= (double)UINT32_MAX)
		return UINT32_MAX;
	return (uint32_t)v;
}

static double min_current_cl(const struct sl_borrow_level *l)
{
	if (l->exempt)
		return fmax(l->min, l->hwm);
	return fmax(l->min, fmin(l->nominal, l->hwm));
}

int sl_borrow_allocate(uint32_t server_cl, enum sl_borrow_reading reading,
		       const struct sl_borrow_level *lv, size_t n, uint32_t *current_cl,
		       struct sl_borrow_result *res)
{
	struct sl_borrow_result r = {0};
	double exempt_sum = 0, *buf = NULL, *target, *lower, *upper, *alloc = NULL;
	size_t m = 0, k;
	int err;

	if (!server_cl || !n || !lv || !current_cl)
		return -EINVAL;
	if (reading != SL_BORROW_READING_KEP && reading != SL_BORROW_READING_CODE)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		const struct sl_borrow_level *l = &lv[i];

		if (l->lendable > l->nominal || l->min != l->nominal - l->lendable ||
		    l->max < l->nominal)
			return -EINVAL;
		if (!isfinite(l->hwm) || l->hwm < 0 || !isfinite(l->smoothed) || l->smoothed < 0)
			return -EINVAL;
		r.nominal_cl_sum += l->nominal;
		if (l->exempt) {
			exempt_sum += min_current_cl(l);
		} else {
			r.min_cl_sum += l->min;
			r.min_current_cl_sum += min_current_cl(l);
			m++;
		}
	}
	r.remaining_server_cl = (reading == SL_BORROW_READING_KEP ? (double)server_cl
								   : r.nominal_cl_sum) - exempt_sum;

	if (!m || r.remaining_server_cl <= r.min_cl_sum)
		r.regime = SL_BORROW_REGIME_MIN_CL;
	else if (r.remaining_server_cl <= r.min_current_cl_sum)
		r.regime = SL_BORROW_REGIME_PROPORTIONAL;
	else
		r.regime = SL_BORROW_REGIME_FAIR_ALLOC;

	if (r.regime == SL_BORROW_REGIME_FAIR_ALLOC) {
		r.fair_sum = reading == SL_BORROW_READING_KEP ? r.remaining_server_cl
							      : r.nominal_cl_sum;
		buf = malloc(4 * m * sizeof(*buf));
		if (!buf) {
			err = -ENOMEM;
			goto fail;
		}
		target = buf;
		lower = buf + m;
		upper = buf + 2 * m;
		alloc = buf + 3 * m;
		k = 0;
		for (size_t i = 0; i < n; i++) {
			if (lv[i].exempt)
				continue;
			lower[k] = min_current_cl(&lv[i]);
			upper[k] = lv[i].max;
			target[k] = fmax(lower[k], lv[i].smoothed);
			k++;
		}
		err = sl_fair_alloc(r.fair_sum, target, lower, upper, m, alloc, &r.fair_prop);
		if (err) {
			free(buf);
			if (err == -EINVAL)
				err = -ERANGE;
			goto fail;
		}
	}

	k = 0;
	for (size_t i = 0; i < n; i++) {
		const struct sl_borrow_level *l = &lv[i];
		double mcl = min_current_cl(l);

		if (l->exempt) {
			current_cl[i] = to_u32(mcl);
			continue;
		}
		switch (r.regime) {
		case SL_BORROW_REGIME_MIN_CL:
			current_cl[i] = l->min;
			break;
		case SL_BORROW_REGIME_PROPORTIONAL:
			current_cl[i] = l->min + to_u32((mcl - l->min) *
							(r.remaining_server_cl - r.min_cl_sum) /
							(r.min_current_cl_sum - r.min_cl_sum));
			break;
		case SL_BORROW_REGIME_FAIR_ALLOC:
			current_cl[i] = to_u32(alloc[k++]);
			break;
		}
	}
	free(buf);
	if (res)
		*res = r;
	return 0;
fail:
	if (res)
		*res = r;
	return err;
}
