/* replay --plot: the data to a temporary file, the script to gnuplot's stdin. */
#include "ctl/plot.h"

#include <errno.h>
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

int ctl_plot_replay(const char *path, const char *title, const struct ctl_plot_point *p, size_t n)
{
	char data[] = "/tmp/sluice-plot.XXXXXX";
	bool rates = any_rates(p, n);
	FILE *f, *gp;
	int fd, status, rc = -1;

	fd = mkstemp(data);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		fprintf(stderr, "sluicectl replay: --plot: temporary file: %s\n", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		cell(f, p[i].t_s);
		cell(f, p[i].signal);
		cell(f, p[i].setpoint);
		cell(f, p[i].multiplier);
		cell(f, p[i].overload && isfinite(p[i].signal) ? p[i].signal : NAN);
		cell(f, p[i].admitted);
		cell(f, p[i].deferred);
		cell(f, p[i].rejected);
		fputc('\n', f);
	}
	if (fclose(f)) {
		fprintf(stderr, "sluicectl replay: --plot: temporary file: %s\n", strerror(errno));
		goto out;
	}
	gp = popen("gnuplot", "w");
	if (!gp) {
		fprintf(stderr, "sluicectl replay: --plot: cannot run gnuplot: %s\n", strerror(errno));
		goto out;
	}
	fprintf(gp, "set terminal pngcairo size 1000,%d font \",10\"\n", rates ? 900 : 640);
	fprintf(gp, "set output ");
	quoted(gp, path);
	fprintf(gp, "\nset datafile missing \"?\"\nset grid\nset key top right\n"
		    "set multiplot layout %d,1 title ", rates ? 3 : 2);
	quoted(gp, title);
	fprintf(gp, "\nset lmargin 10\nset ylabel \"latency (ms)\"\n"
		    "plot \"%s\" using 1:2 with lines lw 2 title \"signal\", "
		    "\"\" using 1:3 with lines dt 2 lw 2 title \"setpoint\", "
		    "\"\" using 1:5 with points pt 7 ps 0.6 lc rgb \"red\" title \"overload\"\n"
		    "set ylabel \"load multiplier\"\nset yrange [0:1.05]\n%s"
		    "plot \"%s\" using 1:4 with steps lw 2 title \"applied (1 = pass-through)\"\n"
		    "set yrange [*:*]\n", data, rates ? "" : "set xlabel \"t (s)\"\n", data);
	if (rates)
		fprintf(gp, "set ylabel \"connections/s\"\nset xlabel \"t (s)\"\n"
			    "plot \"%s\" using 1:6 with lines lw 2 title \"admitted\", "
			    "\"\" using 1:7 with lines lw 2 title \"deferred\", "
			    "\"\" using 1:8 with lines lw 2 title \"rejected\"\n", data);
	fprintf(gp, "unset multiplot\n");
	status = pclose(gp);
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "sluicectl replay: --plot: gnuplot failed%s (the gnuplot-nox package "
				"provides it)\n", WIFEXITED(status) && WEXITSTATUS(status) == 127 ?
				": not found" : "");
		goto out;
	}
	rc = 0;
out:
	unlink(data);
	return rc;
}
