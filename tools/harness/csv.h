/* SPDX-License-Identifier: MIT */
/*
 * csv.h - the --csv file: one long ("tidy") table that holds every raw
 * per-round value and every summary lpcbench prints, so a plot or a later
 * analysis needs nothing but this file.
 *
 * Columns:
 *   bench    the benchmark ("lookup")
 *   record   "raw" (one round's value) or "summary" (over the rounds)
 *   round    1..R for raw rows; empty for summaries
 *   threads  the thread count of the slice, or of the ratio's numerator
 *   variant  what ran ("floor", "lockless", ...); "-" for a ratio of two
 *   metric   what the value is (ticks_per_op, mops, ratio_floor, ...)
 *   value    the raw value, or the median for a summary
 *   min,max  the range over the rounds (summaries only)
 *   n        the rounds the summary is over (summaries only)
 */
#ifndef LPCBENCH_CSV_H
#define LPCBENCH_CSV_H

#include "stats.h"

struct csv;

struct csv_key {
	const char *bench;
	unsigned round; /* 1-based; ignored by csv_summary */
	unsigned threads;
	const char *variant;
	const char *metric;
};

/* Creates (truncates) path and writes the header; dies on failure. */
struct csv *csv_open(const char *path);

/* Flushes and closes; dies if any write failed.  NULL is ignored. */
void csv_close(struct csv *c);

/* One raw value.  c may be NULL (no --csv): nothing is written. */
void csv_raw(struct csv *c, const struct csv_key *k, double value);

/* One summary row.  c may be NULL. */
void csv_summary(struct csv *c, const struct csv_key *k, const struct summary *s);

#endif /* LPCBENCH_CSV_H */
