/* SPDX-License-Identifier: MIT */
/*
 * tsc.h - the time stamp counter, read around each thread's timed loop.
 *
 * On x86 a slice's cost is counted in TSC ticks: reading the TSC takes a few
 * tens of cycles and no system call, and it runs at a constant rate on any
 * CPU this benchmark cares about (constant_tsc, nonstop_tsc), so ticks of two
 * CPUs add up.  tsc_calibrate() measures ticks per nanosecond against
 * CLOCK_MONOTONIC once, to print ns next to ticks.  Elsewhere the "ticks"
 * are CLOCK_MONOTONIC nanoseconds and the unit is printed as ns.
 *
 * Fences: rdtsc may execute before earlier instructions finish and let later
 * ones start before it.  tsc_begin() fences before reading, so the loop's
 * setup is not counted; tsc_end() uses rdtscp, which waits for the loop's
 * instructions, then fences so nothing after it is counted.
 */
#ifndef LPCBENCH_TSC_H
#define LPCBENCH_TSC_H

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

struct tsc {
	double ticks_per_ns; /* 1.0 where ticks are ns */
	const char *unit;    /* "ticks" or "ns" */
	bool invariant;      /* constant and nonstop TSC, or ns */
};

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>

#define TSC_HAVE_RDTSC 1

static inline uint64_t tsc_begin(void)
{
	_mm_lfence();
	return __rdtsc();
}

static inline uint64_t tsc_end(void)
{
	unsigned int aux;
	uint64_t t = __rdtscp(&aux);

	_mm_lfence();
	return t;
}
#else
#define TSC_HAVE_RDTSC 0

static inline uint64_t tsc_begin(void)
{
	return now_ns();
}

static inline uint64_t tsc_end(void)
{
	return now_ns();
}
#endif

/*
 * Measures the TSC's rate against CLOCK_MONOTONIC (about 0.1 s) and whether
 * it is invariant.  Context: once, at start.
 */
void tsc_calibrate(struct tsc *t);

#endif /* LPCBENCH_TSC_H */
