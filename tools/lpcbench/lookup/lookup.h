/* SPDX-License-Identifier: MIT */
/*
 * lookup.h - what the lookup benchmark's measuring half (lookup.c) hands its
 * reporting half (lookup_report.c).  One way: lookup.c calls lookup_report();
 * lookup_report.c, which also holds the rows' names, uses nothing of lookup.c.
 */
#ifndef LPCBENCH_LOOKUP_H
#define LPCBENCH_LOOKUP_H

#include <lpc/lpc.h>

#include "harness/bench.h"
#include "harness/pool.h"

/* The variants, in the order each round runs them.  All but the _HOT,
 * optimistic and _SHARED ones take a uniformly random page per operation;
 * the _HOT ones and optimistic read one page, fixed per thread at setup, so
 * that its bytes stay in the CPU's caches and the read path itself is
 * measured rather than a copy out of DRAM; the _SHARED ones read one page
 * that every thread reads, where reference counts bounce between cores and
 * optimistic reads do not. */
enum lookup_variant {
	LV_FLOOR,     /* refcount on a plain descriptor array: no index */
	LV_LOCKLESS,  /* lpc_page_find + lpc_page_put, LPC_LOOKUP_LOCKLESS */
	LV_LOCKED,    /* the same, LPC_LOOKUP_LOCKED */
	LV_KERNEL,    /* pread(2) of one page, buffered, page cache warm */
	LV_LPC_PREAD, /* lpc_pread of one page, lockless cache */
	LV_KERNEL_HOT,    /* pread(2) of the thread's one fixed page, again and again */
	LV_LPC_PREAD_HOT, /* lpc_pread of that same page, lockless cache */
	LV_LOCKLESS_HOT,  /* find + the 8 words optimistic reads + put, that page */
	LV_OPTIMISTIC,    /* lpc_page_read of that same page (a few fields) */
	LV_KERNEL_SHARED,    /* pread(2) of one page shared by every thread */
	LV_LPC_PREAD_SHARED, /* lpc_pread of that shared page */
	LV_LOCKLESS_SHARED,  /* lpc_page_find + lpc_page_put of that shared page */
	LV_OPTIMISTIC_SHARED, /* lpc_page_read of that shared page */
	LV_NR,
};

extern const char *const lookup_variant_name[LV_NR];

/* The two lpc caches, indexed by enum lpc_lookup_mode. */
#define LOOKUP_NR_CACHES 2

struct lookup_results {
	unsigned rounds;
	unsigned nr_tconf;
	const unsigned *threads; /* [nr_tconf] */
	unsigned variants;       /* bit v: variant v was run */
	struct pool_slice *slice; /* [rounds][nr_tconf][LV_NR] */
	struct lpc_stats stats[LOOKUP_NR_CACHES];
};

static inline const struct pool_slice *
lookup_slice(const struct lookup_results *res, unsigned round, unsigned tc,
	     unsigned v)
{
	return &res->slice[((size_t)round * res->nr_tconf + tc) * LV_NR + v];
}

/* Prints the table, the ratios, the checks and the counters; writes the
 * derived per-round values and the summaries to the CSV. */
void lookup_report(const struct bench_env *env, const struct lookup_results *res);

#endif /* LPCBENCH_LOOKUP_H */
