/* SPDX-License-Identifier: MIT */
/* plot.c - the --plot CSVs and SVGs (see plot.h). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plot.h"
#include "util.h"

/* bench/table.gp, embedded by embed.cmake. */
extern const char plot_table_gp[];
extern const size_t plot_table_gp_len;

extern char **environ;

struct plot {
	struct plot_spec spec;
	char path[PATH_MAX];
	FILE *f;
};

static struct {
	const char *dir; /* NULL: off */
	char gp[PATH_MAX];
	FILE *cmds;      /* DIR/plots.txt */
	bool gnuplot;    /* found in $PATH */
	unsigned csvs, svgs, failed;
} pl;

/* Whether an executable `name` is on $PATH. */
static bool on_path(const char *name)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t len = strcspn(path, ":");

		if (len && snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, path, name) <
				   (int)sizeof(buf) &&
		    access(buf, X_OK) == 0)
			return true;
		path += len + (path[len] == ':');
	}
	return false;
}

void plot_init(const char *dir)
{
	char path[PATH_MAX];
	FILE *f;

	pl.dir = dir;
	if (!dir)
		return;
	if (mkdir(dir, 0777) && errno != EEXIST)
		die_err(errno, "--plot: creating %s", dir);
	if (snprintf(pl.gp, sizeof(pl.gp), "%s/table.gp", dir) >= (int)sizeof(pl.gp) ||
	    snprintf(path, sizeof(path), "%s/plots.txt", dir) >= (int)sizeof(path))
		die("--plot: the directory name %s is too long", dir);
	f = fopen(pl.gp, "w");
	if (!f || fwrite(plot_table_gp, 1, plot_table_gp_len, f) != plot_table_gp_len ||
	    fclose(f))
		die_err(errno, "--plot: writing %s", pl.gp);
	pl.cmds = fopen(path, "w");
	if (!pl.cmds)
		die_err(errno, "--plot: writing %s", path);
	fprintf(pl.cmds, "# the gnuplot command of every SVG lpcbench drew here (run from the current directory of that run)\n");
	pl.gnuplot = on_path("gnuplot");
	if (!pl.gnuplot)
		fprintf(stderr, "lpcbench: --plot: gnuplot is not on $PATH (Debian: apt-get install gnuplot-nox): "
			"the tables' CSVs go to %s, no SVG is drawn\n", dir);
}

struct plot *plot_open(const struct plot_spec *spec)
{
	struct plot *p;

	if (!pl.dir)
		return NULL;
	p = xcalloc(1, sizeof(*p));
	p->spec = *spec;
	if (snprintf(p->path, sizeof(p->path), "%s/%s.csv", pl.dir, spec->name) >=
	    (int)sizeof(p->path))
		die("--plot: the directory name %s is too long", pl.dir);
	p->f = fopen(p->path, "w");
	if (!p->f)
		die_err(errno, "--plot: creating %s", p->path);
	fprintf(p->f, "%s\n", spec->header);
	return p;
}

void plot_row(struct plot *p, const char *fmt, ...)
{
	va_list ap;

	if (!p)
		return;
	va_start(ap, fmt);
	vfprintf(p->f, fmt, ap);
	va_end(ap);
	fputc('\n', p->f);
}

const char *plot_sum(char *buf, size_t len, const struct summary *s)
{
	if (!s->n)
		snprintf(buf, len, ",,");
	else
		snprintf(buf, len, "%.6g,%.6g,%.6g", s->med, s->min, s->max);
	return buf;
}

/* s without the characters that would end a gnuplot '...' string or the
 * shell's "..." around it in plots.txt: ' " ` $ \ */
static void gp_quote(char *dst, size_t len, const char *s)
{
	size_t i = 0;

	for (; s && *s && i + 1 < len; s++)
		if (!strchr("'\"`$\\", *s))
			dst[i++] = *s;
	dst[i] = '\0';
}

static void draw(const struct plot *p)
{
	const struct plot_spec *s = &p->spec;
	char title[256], ylabel[128], stitle[64], reflabel[128], ref[192];
	char svg[PATH_MAX + 8];
	char expr[4 * PATH_MAX];
	char *argv[5];
	pid_t pid;
	int st, rc;

	snprintf(svg, sizeof(svg), "%.*s.svg", (int)strlen(p->path) - 4, p->path);
	gp_quote(title, sizeof(title), s->title);
	gp_quote(ylabel, sizeof(ylabel), s->ylabel);
	gp_quote(stitle, sizeof(stitle), s->stitle);
	gp_quote(reflabel, sizeof(reflabel), s->ref_label);
	ref[0] = '\0';
	if (!isnan(s->ref))
		snprintf(ref, sizeof(ref), " ref=%g; reflabel='%s';", s->ref, reflabel);
	snprintf(expr, sizeof(expr),
		 "csv='%s'; svg='%s'; title='%s'; ylabel='%s'; stitle='%s'; xcol=%d; scol=%d; ycol=%d; locol=%d; hicol=%d; logy=%d;%s",
		 p->path, svg, title, ylabel, stitle, s->xcol, s->scol,
		 s->ycol, s->locol, s->hicol, s->logy ? 1 : 0, ref);
	fprintf(pl.cmds, "gnuplot -e \"%s\" '%s'\n", expr, pl.gp);
	if (!pl.gnuplot)
		return;
	argv[0] = "gnuplot";
	argv[1] = "-e";
	argv[2] = expr;
	argv[3] = pl.gp;
	argv[4] = NULL;
	fflush(stdout);
	rc = posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ);
	if (rc) {
		fprintf(stderr, "lpcbench: --plot: cannot run gnuplot (%s): no %s\n",
			strerror(rc), svg);
		pl.failed++;
		return;
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			st = -1;
			break;
		}
	if (st != 0) {
		fprintf(stderr, "lpcbench: --plot: gnuplot failed on %s: no %s\n", p->path, svg);
		pl.failed++;
		return;
	}
	pl.svgs++;
}

void plot_close(struct plot *p)
{
	if (!p)
		return;
	if (ferror(p->f) | fclose(p->f))
		die_err(EIO, "--plot: writing %s", p->path);
	pl.csvs++;
	draw(p);
	free(p);
}

void plot_summary(void)
{
	if (!pl.dir)
		return;
	if (pl.cmds)
		fclose(pl.cmds);
	pl.cmds = NULL;
	printf("plots: %u tables in %s/: %u CSVs, %u SVGs%s (commands in %s/plots.txt)\n",
	       pl.csvs, pl.dir, pl.csvs, pl.svgs,
	       !pl.gnuplot ? " (gnuplot not found: no SVG drawn)" :
	       pl.failed ? " (gnuplot failed on some: see stderr)" : "",
	       pl.dir);
}
