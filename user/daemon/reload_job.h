/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A reload's slow half, off the event loop (adapter, one thread per job):
 * load the file, build the plan (the classification compile) and stage it
 * into the data path's idle generation.  The loop keeps its tick and its
 * heartbeat meanwhile; when the job is done it says so on an eventfd the
 * loop polls, and the loop commits (levels, the flip, admission and
 * policies) in one short turn.  One job at a time: a reload asked while
 * one runs replaces it (the running one's result is dropped when it ends,
 * and a new job reads the file as it is then).
 */
#ifndef SLUICE_RELOAD_JOB_H
#define SLUICE_RELOAD_JOB_H

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "config/diag.h"
#include "dataplane/pinned_maps.h"
#include "engine/plan.h"
#include "sluice_abi.h"

struct sl_reload_input {
	const char *config_path;
	const struct sl_maps *maps;  /* for the stage (fds: safe from the thread) */
	char names[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN]; /* level names in the slots now */
	/* The running policies in index order: a kept one keeps its index
	 * (sl_config_keep_policy_indices). */
	char policy_names[SLUICE_MAX_POLICIES][SL_LEVEL_NAME_SIZE];
	size_t n_policy_names;
	const char *const *ifnames;
	size_t n_ifnames;
	/* For the shares of removed levels that still drain (plan quiescing):
	 * which slots hold or queue connections now, with their shares. */
	uint64_t busy_slots;
	uint32_t slot_shares[SLUICE_MAX_LEVELS];
	/* The tables in use, to copy when the classification's inputs did
	 * not change (read by the job: the loop leaves them alone while it
	 * runs). */
	const struct sl_compiled *reuse;
};

struct sl_reload_result {
	int err;                     /* 0: cfg and plan are ready, staged in gen */
	struct sl_config *cfg;       /* owned by the result */
	struct sl_plan plan;
	bool have_plan;
	uint8_t gen;
	uint32_t quiescing_shares;
	uint64_t quiescing_slots;
	struct sl_diags diags;       /* the load's and the plan's */
	double seconds;              /* how long the job took */
};

struct sl_reload_job;

/* Start a job (its input is copied).  The eventfd becomes readable when it
 * is done.  0, or a negative errno. */
int sl_reload_job_start(struct sl_reload_job **out, const struct sl_reload_input *in);
int sl_reload_job_fd(const struct sl_reload_job *job);
/* Whether the job has finished (after its eventfd fired). */
bool sl_reload_job_done(struct sl_reload_job *job);
/* Wait for it, take its result (the caller frees it with
 * sl_reload_result_free), free the job. */
void sl_reload_job_finish(struct sl_reload_job *job, struct sl_reload_result *out);
void sl_reload_result_free(struct sl_reload_result *r);

/* 0, or -EINVAL after a diagnostic when *cfg asks for what this sluiced
 * does not run (a fleet): *cfg is freed and NULL then. */
int daemon_config_runnable(const char *path, struct sl_config **cfg, struct sl_diags *diags);

#endif
