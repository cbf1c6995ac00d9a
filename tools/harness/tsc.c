/* SPDX-License-Identifier: MIT */
/* tsc.c - calibration of the TSC against CLOCK_MONOTONIC (see tsc.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "tsc.h"

#define TSC_SAMPLES 5
#define TSC_SAMPLE_NS 20000000u /* 20 ms: clock read error is then < 1e-5 */

#if TSC_HAVE_RDTSC
/* Both flags on the first "flags" line of /proc/cpuinfo: a TSC whose rate
 * does not follow frequency changes and that ticks through idle states. */
static bool tsc_invariant(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char *line = NULL;
	size_t cap = 0;
	bool constant = false, nonstop = false;

	if (!f)
		return false;
	while (getline(&line, &cap, f) > 0) {
		if (strncmp(line, "flags", 5))
			continue;
		constant = strstr(line, " constant_tsc") != NULL;
		nonstop = strstr(line, " nonstop_tsc") != NULL;
		break;
	}
	free(line);
	fclose(f);
	return constant && nonstop;
}

/*
 * One sample: the TSC read between two clock reads is paired with their
 * midpoint, at the start and at the end of a sleep.
 */
static double tsc_sample(void)
{
	uint64_t n0 = now_ns(), c0 = tsc_begin(), n1 = now_ns();
	uint64_t n2, c1, n3;

	sleep_ns(TSC_SAMPLE_NS);
	n2 = now_ns();
	c1 = tsc_end();
	n3 = now_ns();
	return (double)(c1 - c0) / ((double)(n2 + n3) / 2 - (double)(n0 + n1) / 2);
}

void tsc_calibrate(struct tsc *t)
{
	double v[TSC_SAMPLES];
	struct summary s;

	for (unsigned i = 0; i < TSC_SAMPLES; i++)
		v[i] = tsc_sample();
	/* The median drops a sample that a preemption stretched. */
	s = summarize(v, TSC_SAMPLES);
	t->ticks_per_ns = s.med;
	t->unit = "ticks";
	t->invariant = tsc_invariant();
}
#else
void tsc_calibrate(struct tsc *t)
{
	t->ticks_per_ns = 1.0;
	t->unit = "ns";
	t->invariant = true;
}
#endif
