/* SPDX-License-Identifier: MIT */
/*
 * scan.h - what the scan benchmark's measuring half (scan.c) hands its
 * reporting half (scan_report.c).  One way: scan.c calls scan_report();
 * scan_report.c, which also holds the rows' names, uses nothing of scan.c.
 */
#ifndef LPCBENCH_SCAN_H
#define LPCBENCH_SCAN_H

#include <stdbool.h>
#include <stdint.h>

#include "harness/bench.h"

#define SCAN_NR_CALLS 3 /* call sizes of the lpc and kernel rows without --calls */

enum scan_variant {
	SV_URING,  /* lpc_pread, a cache on LPC_IO_URING */
	SV_SYNC,   /* lpc_pread, a cache on LPC_IO_SYNC */
	SV_KERNEL, /* buffered pread(2) in a memory cgroup of the cache's size */
	SV_DIRECT, /* O_DIRECT pread(2) of 1 MiB, one thread: the device */
	SV_NR,
};

extern const char *const scan_variant_name[SV_NR];
extern const uint32_t scan_call_bytes[SCAN_NR_CALLS];

static inline bool scan_is_lpc(enum scan_variant v)
{
	return v == SV_URING || v == SV_SYNC;
}

/* One row of a round: one cold pass of a variant, call size, scanner count. */
struct scan_row {
	enum scan_variant v;
	unsigned scanners; /* each reads its own 1/scanners of the file */
	uint32_t call;     /* bytes per read call */
	bool skip;         /* kernel without a memory cgroup */
};

/* What one pass measured. */
struct scan_sample {
	uint64_t bytes;    /* read and checked, all scanners */
	uint64_t wall_ns;  /* first scanner's start to last scanner's end */
	uint64_t cpu_ns;   /* CPU time of the scanning process over the pass
			    * (CLOCK_PROCESS_CPUTIME_ID: every thread, lpc's
			    * readahead and reclaim threads included) */
	uint64_t resident0; /* the file's pages in the kernel's page cache
			     * just before the pass (mincore; want 0) */
	uint64_t free0, frames; /* lpc: free frames just before it, of frames */
	uint64_t lpc_cached0;   /* lpc: the file's pages in its cache just
				 * before it (lpc_page_find; want 0) */
	/* lpc_stats deltas over the pass */
	uint64_t hits, misses, reads, read_pages;
	uint64_t ra_windows, ra_async, ra_pages, ra_used, ra_wasted;
	uint64_t evictions, read_errors;
	uint64_t gp, gp_ns; /* grace_periods, grace_period_ns: the waits the
			     * cache's threads took (the reclaimer's drains) */
	/* The file's block device over the pass (its stat file's deltas,
	 * every row: Documentation/block/stat.rst); all 0 where it has none */
	uint64_t dev_reads;   /* read requests completed */
	uint64_t dev_sectors; /* 512-byte sectors they read */
	uint64_t dev_read_ms; /* read ticks: the sum of their times at the device */
};

struct scan_results {
	unsigned rounds;
	unsigned nr_rows;
	struct scan_row *rows;
	struct scan_sample *s; /* [rounds][nr_rows] */
	unsigned scanners[BENCH_MAX_TCONF];
	unsigned nr_scanners;
	uint32_t calls[BENCH_MAX_TCONF]; /* call sizes, bytes: --calls or scan_call_bytes */
	unsigned nr_calls;
	unsigned variants; /* bit v: rows of variant v run (--variants) */
	uint64_t cache_bytes, file_bytes;
	bool memcg;          /* the kernel rows ran */
	char memcg_why[256]; /* else why not */
	uint64_t uring_fallbacks, uring_unregistered; /* the io_uring cache's, at the end */
};

static inline struct scan_sample *scan_sample(const struct scan_results *r, unsigned round,
					      unsigned row)
{
	return &r->s[(size_t)round * r->nr_rows + row];
}

/* The row of (v, scanners, call), or -1 if there is none (or it was skipped). */
int scan_find_row(const struct scan_results *r, enum scan_variant v, unsigned scanners,
		  uint32_t call);

void scan_report(const struct bench_env *env, const struct scan_results *res);

#endif /* LPCBENCH_SCAN_H */
