/* SPDX-License-Identifier: MIT */
/*
 * plot.h - --plot DIR: every table lpcbench prints is also written as
 * DIR/<name>.csv (one header line, one row per printed row, the columns of
 * the printed table) and drawn by gnuplot as DIR/<name>.svg: a bar chart of
 * one column, clustered by one key column, one bar per value of another,
 * with the [min - max] range as an error bar where the table has one.
 *
 * The drawing is bench/table.gp, built into lpcbench and written next to the
 * CSVs as DIR/table.gp, so that a plot can be redrawn or restyled by hand:
 *   gnuplot -e "csv='DIR/lookup.csv'; xcol=2; scol=1; ycol=7; locol=8; hicol=9; logy=1" DIR/table.gp
 * (the exact command of each SVG is in DIR/plots.txt).
 *
 * gnuplot is optional: without it (or when it fails) the CSVs are written
 * all the same and a note on stderr says that no SVG was drawn.  lpcbench
 * never fails because of a plot.
 */
#ifndef LPCBENCH_PLOT_H
#define LPCBENCH_PLOT_H

#include <stdbool.h>
#include <stddef.h>

#include "stats.h"

struct plot_spec {
	const char *name;   /* file stem: [a-z0-9_] */
	const char *title;  /* of the chart */
	const char *ylabel;
	const char *stitle; /* the legend's title, e.g. "threads"; NULL: none */
	const char *header; /* the CSV's header line, without the newline */
	int xcol;           /* 1-based column that names the clusters */
	int scol;           /* column that names the bars of a cluster; 0: one bar */
	int ycol;           /* column of the bar's height */
	int locol, hicol;   /* the error bar's ends; 0: none */
	bool logy;
	double ref;         /* a dashed horizontal line at this y; NaN: none */
	const char *ref_label;
};

struct plot;

/* Sets the directory (created if missing) or, with NULL, turns plotting off.
 * Dies if the directory cannot be made. */
void plot_init(const char *dir);

/* Starts a table: NULL when --plot is off (every call below takes NULL). */
struct plot *plot_open(const struct plot_spec *spec);

/* One row, printf-style, without the newline.  Fields must not hold commas;
 * an empty field is a missing value (no bar). */
void plot_row(struct plot *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "med,min,max" of s for a row, or ",," when it has no value. */
const char *plot_sum(char *buf, size_t len, const struct summary *s);

/* Closes the CSV and draws the SVG. */
void plot_close(struct plot *p);

/* Prints where the plots went (stdout), once at the end; nothing if off. */
void plot_summary(void);

#endif /* LPCBENCH_PLOT_H */
