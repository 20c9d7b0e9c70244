// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* replay --plot and simulate --plot: the data to a temporary file, the
 * script to gnuplot's stdin. */
#include "ctl/plot.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* gnuplot reads "?" as a missing value (set datafile missing). */
static void cell(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, " %.10g", v);
	else
		fputs(" ?", f);
}

static bool any_rates(const struct ctl_plot_point *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (isfinite(p[i].admitted) || isfinite(p[i].deferred) || isfinite(p[i].rejected))
			return true;
	return false;
}

/* A title goes inside double quotes in the script. */
static void quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++)
		if (*s != '"' && *s != '\\' && *s != '\n')
			fputc(*s, f);
	fputc('"', f);
}

/* The data to a temporary file, the script (which reads it) to gnuplot's
 * stdin, the temporary file removed.  cmd names the command in errors. */
typedef void (*plot_data_fn)(FILE *f, const void *ctx);
typedef void (*plot_script_fn)(FILE *gp, const char *data, const char *title, const void *ctx);

static int plot(const char *cmd, const char *path, const char *title, int height, plot_data_fn data_fn,
		plot_script_fn script_fn, const void *ctx)
{
	char data[] = "/tmp/sluice-plot.XXXXXX";
	FILE *f, *gp;
	int fd, status, rc = -1;

	/* The picture's file first: gnuplot, when it cannot open it, writes
	 * the PNG to its standard output (ours) and blames itself. */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "sluicectl %s: --plot %s: %s\n", cmd, path, strerror(errno));
		return -1;
	}
	close(fd);
	fd = mkstemp(data);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		fprintf(stderr, "sluicectl %s: --plot: temporary file: %s\n", cmd, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	data_fn(f, ctx);
	if (fclose(f)) {
		fprintf(stderr, "sluicectl %s: --plot: temporary file: %s\n", cmd, strerror(errno));
		goto out;
	}
	gp = popen("gnuplot", "w");
	if (!gp) {
		fprintf(stderr, "sluicectl %s: --plot: cannot run gnuplot: %s\n", cmd, strerror(errno));
		goto out;
	}
	fprintf(gp, "set terminal pngcairo size 1000,%d font \",10\"\n", height);
	fprintf(gp, "set output ");
	quoted(gp, path);
	fprintf(gp, "\nset datafile missing \"?\"\nset grid\nset key top right\n");
	script_fn(gp, data, title, ctx);
	status = pclose(gp);
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 127)
			fprintf(stderr, "sluicectl %s: --plot: gnuplot not found (the gnuplot-nox package "
					"provides it)\n", cmd);
		else
			fprintf(stderr, "sluicectl %s: --plot: gnuplot failed (status %d)\n", cmd, status);
		goto out;
	}
	rc = 0;
out:
	unlink(data);
	return rc;
}

struct replay_plot {
	const struct ctl_plot_point *p;
	size_t n;
	bool rates;
};

static void replay_data(FILE *f, const void *ctx)
{
	const struct replay_plot *r = ctx;

	for (size_t i = 0; i < r->n; i++) {
		const struct ctl_plot_point *p = &r->p[i];

		cell(f, p->t_s);
		cell(f, p->signal);
		cell(f, p->setpoint);
		cell(f, p->multiplier);
		cell(f, p->overload && isfinite(p->signal) ? p->signal : NAN);
		cell(f, p->admitted);
		cell(f, p->deferred);
		cell(f, p->rejected);
		fputc('\n', f);
	}
}

/* The panels stacked, under one title. */
static void multiplot(FILE *gp, int panels, const char *title)
{
	fprintf(gp, "set multiplot layout %d,1 title ", panels);
	quoted(gp, title);
	fprintf(gp, "\n");
}

static void replay_script(FILE *gp, const char *data, const char *title, const void *ctx)
{
	const struct replay_plot *r = ctx;

	multiplot(gp, r->rates ? 3 : 2, title);
	fprintf(gp, "set lmargin 10\nset ylabel \"latency (ms)\"\n"
		    "plot \"%s\" using 1:2 with lines lw 2 title \"signal\", "
		    "\"\" using 1:3 with lines dt 2 lw 2 title \"setpoint\", "
		    "\"\" using 1:5 with points pt 7 ps 0.6 lc rgb \"red\" title \"overload\"\n"
		    "set ylabel \"load multiplier\"\nset yrange [0:1.05]\n%s"
		    "plot \"%s\" using 1:4 with steps lw 2 title \"applied (1 = pass-through)\"\n"
		    "set yrange [*:*]\n", data, r->rates ? "" : "set xlabel \"t (s)\"\n", data);
	if (r->rates)
		fprintf(gp, "set ylabel \"connections/s\"\nset xlabel \"t (s)\"\n"
			    "plot \"%s\" using 1:6 with lines lw 2 title \"admitted\", "
			    "\"\" using 1:7 with lines lw 2 title \"deferred\", "
			    "\"\" using 1:8 with lines lw 2 title \"rejected\"\n", data);
	fprintf(gp, "unset multiplot\n");
}

int ctl_plot_replay(const char *path, const char *title, const struct ctl_plot_point *p, size_t n)
{
	struct replay_plot r = {.p = p, .n = n, .rates = any_rates(p, n)};

	return plot("replay", path, title, r.rates ? 900 : 640, replay_data, replay_script, &r);
}

struct simulate_plot {
	const struct ctl_plot_arm *arms;
	size_t n_arms, n;
};

/* A row a second: t, then completed, median, in flight, limit of each arm. */
static void simulate_data(FILE *f, const void *ctx)
{
	const struct simulate_plot *sp = ctx;

	for (size_t i = 0; i < sp->n; i++) {
		cell(f, (double)(i + 1));
		for (size_t a = 0; a < sp->n_arms; a++) {
			const struct ctl_sim_second *s = i < sp->arms[a].n ? &sp->arms[a].s[i] : NULL;

			cell(f, s ? s->completed : NAN);
			cell(f, s && s->median_ms > 0 ? s->median_ms : NAN);
			cell(f, s ? s->in_flight : NAN);
			cell(f, s ? s->limit : NAN);
		}
		fputc('\n', f);
	}
}

static void simulate_panel(FILE *gp, const char *data, const struct simulate_plot *sp, int col,
			   const char *what)
{
	for (size_t a = 0; a < sp->n_arms; a++)
		fprintf(gp, "%s\"%s\" using 1:%zu with lines lw 2 title \"%s%s\"", a ? ", " : "plot ",
			a ? "" : data, 2 + 4 * a + (size_t)col, sp->arms[a].name, what);
}

/* Whether the arm ever had a limit (gnuplot warns of a column all missing). */
static bool any_limit(const struct ctl_plot_arm *arm)
{
	for (size_t i = 0; i < arm->n; i++)
		if (isfinite(arm->s[i].limit))
			return true;
	return false;
}

static void simulate_script(FILE *gp, const char *data, const char *title, const void *ctx)
{
	const struct simulate_plot *sp = ctx;

	multiplot(gp, 3, title);
	fprintf(gp, "set lmargin 10\nset ylabel \"completions/s\"\n");
	simulate_panel(gp, data, sp, 0, "");
	fprintf(gp, "\nset ylabel \"median in service (ms)\"\nset logscale y\n");
	simulate_panel(gp, data, sp, 1, "");
	fprintf(gp, "\nset ylabel \"in flight\"\nset xlabel \"t (s)\"\n");
	simulate_panel(gp, data, sp, 2, " in flight");
	for (size_t a = 0; a < sp->n_arms; a++)
		if (any_limit(&sp->arms[a]))
			fprintf(gp, ", \"\" using 1:%zu with lines dt 2 lw 2 title \"%s limit\"", 2 + 4 * a + 3,
				sp->arms[a].name);
	fprintf(gp, "\nunset multiplot\n");
}

int ctl_plot_simulate(const char *path, const char *title, const struct ctl_plot_arm *arms,
		      size_t n_arms)
{
	struct simulate_plot sp = {.arms = arms, .n_arms = n_arms};

	for (size_t a = 0; a < n_arms; a++)
		if (arms[a].n > sp.n)
			sp.n = arms[a].n;
	return plot("simulate", path, title, 960, simulate_data, simulate_script, &sp);
}
