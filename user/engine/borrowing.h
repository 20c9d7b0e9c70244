/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Concurrency borrowing between priority levels (Kubernetes apf_controller.go updateBorrowing, conc_alloc.go computeConcurrencyAllocation).
 *
 * Pure: no I/O, no clock.  Time is passed in as nanoseconds on any
 * monotonic clock.  The static limits (nominal, lendable, min, max) come
 * from sl_limits_compute() in concurrency.h.
 *
 * Usage: every period (SL_BORROW_PERIOD_NS, and once right after a config
 * change) end each level's seat-demand period (engine/demand.h), then call
 * sl_borrow_allocate() once with what they report.
 */
#ifndef SLUICE_BORROWING_H
#define SLUICE_BORROWING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SL_BORROW_PERIOD_NS   (10ull * 1000000000ull) /* Kubernetes apf_controller.go updateBorrowing: 10 s */
#define SL_FAIR_MIN_TARGET    0.001                   /* smaller targets count as this */
#define SL_FAIR_EPSILON       1e-7                    /* solver tolerance */

/* ---- Kubernetes conc_alloc.go computeConcurrencyAllocation fair-allocation solver ------ */

/*
 * Find the unique allocs with Σ alloc = S and, for each i, with
 * t_i = max(target[i], SL_FAIR_MIN_TARGET):
 *   alloc[i] = fairProp * t_i          or
 *   alloc[i] = lower[i] > fairProp*t_i  or
 *   alloc[i] = upper[i] < fairProp*t_i.
 * If Σlower >= S - ε every level gets its lower bound (fairProp = min
 * lower/t); if Σupper <= S + ε every level gets its upper bound (fairProp =
 * max upper/t); S = 0 gives zeros and fairProp 0.  O(n log n).
 *
 * Returns 0, -EINVAL when S < 0, a lower bound < 0, target < lower,
 * upper < lower, Σlower > S + ε, Σupper < S - ε, a NaN anywhere, an
 * infinite S/target/lower (upper may be +inf), or a NULL array with n > 0;
 * -ENOMEM when the sort buffer cannot be allocated.  On error the outputs
 * are untouched.  fair_prop_out may be NULL.
 */
int sl_fair_alloc(double S, const double *target, const double *lower, const double *upper,
		  size_t n, double *alloc_out, double *fair_prop_out);

/* ---- Kubernetes conc_alloc.go computeConcurrencyAllocation allocation across levels ---------------------------------- */

/* Which total the fair-allocation regime distributes (the KEP reading; kubernetes/kubernetes#124125). */
enum sl_borrow_reading {
	/* KEP: RemainingServerCL = ServerCL - Σ exempt MinCurrentCL, and that
	 * is what the non-exempt levels share.  sluice's default. */
	SL_BORROW_READING_KEP = 0,
	/* Kubernetes code: RemainingServerCL = nominalCLSum - Σ exempt
	 * MinCurrentCL picks the regime, but the solver is handed the whole
	 * nominalCLSum. */
	SL_BORROW_READING_CODE = 1,
};

enum sl_borrow_regime {
	SL_BORROW_REGIME_MIN_CL = 0,   /* RemainingServerCL <= MinCLSum: CurrentCL = MinCL */
	SL_BORROW_REGIME_PROPORTIONAL, /* RemainingServerCL <= MinCurrentCLSum: pro rata */
	SL_BORROW_REGIME_FAIR_ALLOC,   /* fair-allocation solver */
};

/* "min-cl", "proportional", "fair-alloc" ("?" for anything else). */
const char *sl_borrow_regime_name(enum sl_borrow_regime r);

struct sl_borrow_level {
	bool exempt;
	uint32_t nominal;  /* NominalCL */
	uint32_t lendable; /* LendableCL */
	uint32_t min;      /* MinCL, must equal nominal - lendable */
	uint32_t max;      /* MaxCL = nominal + borrowing, >= nominal */
	double hwm;        /* sl_demand.hwm (finite, >= 0) */
	double smoothed;   /* sl_demand.smoothed (finite, >= 0) */
};

/* Observability of one allocation run. */
struct sl_borrow_result {
	enum sl_borrow_regime regime;
	double fair_prop;           /* solver's fairProp; 0 outside the fair-alloc regime */
	double nominal_cl_sum;      /* Σ NominalCL over all levels, exempt included */
	double remaining_server_cl; /* as the chosen reading defines it; may be < 0 */
	double min_cl_sum;          /* Σ non-exempt MinCL */
	double min_current_cl_sum;  /* Σ non-exempt MinCurrentCL */
	double fair_sum;            /* S handed to the solver (fair-alloc regime only) */
};

/*
 * One allocation run (Kubernetes conc_alloc.go computeConcurrencyAllocation).  Writes current_cl[n]: exempt levels get
 * round(MinCurrentCL) = round(max(MinCL, hwm)) (advisory: exempt levels are
 * not limited); non-exempt levels get their limit by the regime that
 * applies.  With no non-exempt level at all, the result is the min-cl
 * regime.  res may be NULL.
 *
 * Returns 0; -EINVAL on bad input (server_cl 0, n 0, NULL arrays, unknown
 * reading, min != nominal - lendable, max < nominal, hwm or smoothed
 * negative or not finite); -ERANGE when the solver rejects the problem
 * (e.g. Σ MaxCL below the sum to share) and -ENOMEM from the solver.  On
 * any error current_cl is untouched: the caller keeps the previous limits.
 * res->regime is still filled in when the solver fails.
 */
int sl_borrow_allocate(uint32_t server_cl, enum sl_borrow_reading reading,
		       const struct sl_borrow_level *lv, size_t n, uint32_t *current_cl,
		       struct sl_borrow_result *res);

#endif
