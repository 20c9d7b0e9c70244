// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "daemon/reload_job.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "dataplane/settings.h"

struct sl_reload_job {
	struct sl_reload_input in;
	char *path;
	const char **ifnames;
	pthread_t thread;
	int efd;
	bool done;   /* set by the thread, read after the eventfd */
	struct sl_reload_result r;
};

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int daemon_config_runnable(const char *path, struct sl_config **cfg, struct sl_diags *diags)
{
	const struct sl_fleet_cfg *f = &(*cfg)->server.fleet;

	/* validate reads the fleet's fields; no sluiced runs one before its
	 * etcd client exists, and a file it would not honour changes nothing. */
	if (!f->set)
		return 0;
	sl_diags_add(diags, SL_SEV_ERROR, path, f->line, f->column, "Server", "spec.fleet",
		     "this sluiced does not run fleets yet (their etcd client is to come): remove spec.fleet "
		     "and every level's limited.fleet, or give each host its own seats");
	sl_config_free(*cfg);
	*cfg = NULL;
	return -EINVAL;
}

static void *run(void *arg)
{
	struct sl_reload_job *job = arg;
	struct sl_reload_result *r = &job->r;
	double t0 = mono_s();
	uint64_t one = 1;

	r->err = sl_config_check_file_mode(job->path, &r->diags);
	if (!r->err)
		r->err = sl_config_load_file(job->path, &r->cfg, &r->diags);
	if (!r->err)
		r->err = daemon_config_runnable(job->path, &r->cfg, &r->diags);
	if (!r->err)
		r->err = sl_config_keep_policy_indices(r->cfg, job->in.policy_names, job->in.n_policy_names);
	if (!r->err) {
		r->quiescing_shares = sl_plan_quiescing_shares(r->cfg, job->in.names, job->in.busy_slots,
							       job->in.slot_shares, &r->quiescing_slots);
		r->err = sl_plan_build_quiescing(r->cfg, job->in.names, job->ifnames[0],
						 r->quiescing_shares, job->in.reuse, &r->plan, &r->diags);
		r->have_plan = true;
	}
	if (!r->err && !r->plan.classes_reused) /* kept tables passed it already */
		r->err = sl_plan_check_interfaces(r->cfg, &r->plan, job->ifnames, job->in.n_ifnames,
						  &r->diags);
	if (!r->err)
		r->err = sl_apply_stage(job->in.maps, &r->plan, &r->gen);
	r->seconds = mono_s() - t0;
	__atomic_store_n(&job->done, true, __ATOMIC_RELEASE);
	if (write(job->efd, &one, sizeof(one)) != sizeof(one)) {
		/* The loop also looks at done at every tick. */
	}
	return NULL;
}

int sl_reload_job_start(struct sl_reload_job **out, const struct sl_reload_input *in)
{
	struct sl_reload_job *job = calloc(1, sizeof(*job));
	int err;

	if (!job)
		return -ENOMEM;
	job->in = *in;
	job->efd = -1;
	job->path = strdup(in->config_path);
	job->ifnames = calloc(in->n_ifnames ? in->n_ifnames : 1, sizeof(*job->ifnames));
	if (!job->path || !job->ifnames) {
		err = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < in->n_ifnames; i++)
		job->ifnames[i] = in->ifnames[i]; /* the daemon's options: they live as long */
	sl_diags_init(&job->r.diags);
	job->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (job->efd < 0) {
		err = -errno;
		goto fail;
	}
	err = -pthread_create(&job->thread, NULL, run, job);
	if (err)
		goto fail;
	*out = job;
	return 0;
fail:
	if (job->efd >= 0)
		close(job->efd);
	free(job->ifnames);
	free(job->path);
	free(job);
	return err;
}

int sl_reload_job_fd(const struct sl_reload_job *job)
{
	return job->efd;
}

bool sl_reload_job_done(struct sl_reload_job *job)
{
	return __atomic_load_n(&job->done, __ATOMIC_ACQUIRE);
}

void sl_reload_job_finish(struct sl_reload_job *job, struct sl_reload_result *out)
{
	pthread_join(job->thread, NULL);
	*out = job->r;
	close(job->efd);
	free(job->ifnames);
	free(job->path);
	free(job);
}

void sl_reload_result_free(struct sl_reload_result *r)
{
	if (r->have_plan)
		sl_plan_free(&r->plan);
	sl_config_free(r->cfg);
	sl_diags_free(&r->diags);
	memset(r, 0, sizeof(*r));
}
