/* SPDX-License-Identifier: MIT */
/*
 * stats.h - the summary of a series of per-round values: median and range.
 *
 * Why the median: this benchmark runs on shared, virtual CPUs whose speed
 * drifts between runs and which other programs preempt.  The median of
 * within-round ratios ignores the rounds that a neighbour disturbed, and the
 * [min-max] range shows how much they were disturbed.
 */
#ifndef LPCBENCH_STATS_H
#define LPCBENCH_STATS_H

struct summary {
	double med;
	double min;
	double max;
	unsigned n; /* values that were numbers; 0: med/min/max are NaN */
};

/*
 * Summarises v[0..n).  NaN values (a ratio whose denominator was 0) are left
 * out.  v is reordered.  Context: any.
 */
struct summary summarize(double *v, unsigned n);

#endif /* LPCBENCH_STATS_H */
