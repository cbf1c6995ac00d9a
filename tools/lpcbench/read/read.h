/* SPDX-License-Identifier: MIT */
/*
 * read.h - what the read benchmark's measuring half (read.c) hands its
 * reporting half (read_report.c).  One way: read.c calls read_report();
 * read_report.c, which also holds the rows' names, uses nothing of read.c.
 */
#ifndef LPCBENCH_READ_H
#define LPCBENCH_READ_H

#include <stdbool.h>
#include <stdint.h>

#include "harness/bench.h"
#include "harness/pool.h"

/* The workloads, each a phase of its own that starts from cold caches. */
enum read_workload {
	RW_DEVICE,  /* O_DIRECT random reads at queue depth 1 and 32 */
	RW_UNIFORM, /* uniformly random pages */
	RW_ZIPF,    /* Zipf pages (ranks permuted over the file) */
	RW_SCAN,    /* Zipf readers plus one sequential reader of the whole file */
	RW_NR,
};

enum read_variant {
	RV_LPC,    /* lpc_pread through an lpc cache (sync backend, O_DIRECT) */
	RV_KERNEL, /* buffered pread(2), page cache confined by a memory cgroup */
	RV_MMAP,   /* memcpy out of a MAP_SHARED mapping, same cgroup */
	RV_DIRECT, /* O_DIRECT pread(2), no cache */
	RV_PROBE,  /* lpc, one thread, each read timed and classified hit/miss */
	RV_LPC_CLOCK, /* --policy both: as lpc, in a second cache with plain CLOCK */
	RV_NR,
};

extern const char *const read_workload_name[RW_NR];
extern const char *const read_variant_name[RV_NR];

/* One row of a round: a variant at a thread count in a workload. */
struct read_row {
	enum read_workload w;
	enum read_variant v;
	unsigned threads; /* readers; RW_SCAN adds the sequential one */
	bool skip;        /* kernel/mmap without a memory cgroup */
};

/* What one slice of a row measured. */
struct read_sample {
	struct pool_slice ps;
	uint64_t reads;     /* random readers' reads */
	uint64_t io_bytes;  /* bytes they fetched from storage (/proc/thread-self/io) */
	uint64_t majflt;    /* their major faults (mmap) */
	uint64_t nowait_hits; /* kernel: their reads that RWF_NOWAIT served */
	uint64_t find_hits;   /* lpc, scan-mix: their reads whose page lpc_page_find
			       found cached just before */
	uint64_t scan_reads, scan_io_bytes; /* the sequential reader's */
	uint64_t scan_run_ns, scan_runq_ns; /* ... time on a CPU, and runnable waiting for one */
	/* lpc_stats deltas over the slice (lpc and probe rows; all threads) */
	uint64_t hits, misses, read_around;
	uint64_t evictions, direct_reclaims;
	uint64_t frames_free; /* lpc_stats' gauge at the slice's end */
	/* ... and where the misses' time went (lpc_stats miss_ns_*) */
	uint64_t ns_alloc, ns_evict, ns_insert, ns_read;
	/* probe: TSC ticks in lpc_pread by outcome, and the counts */
	uint64_t hit_ticks, miss_ticks, ra_ticks;
	uint64_t hit_n, miss_n, ra_n;
};

/* State at the end of a workload's phase. */
struct read_phase_end {
	bool ran;
	double warm_s;           /* warm-up time */
	uint64_t lpc_frames, lpc_free; /* lpc's cache after its warm-up */
	uint64_t lpc_evictions;        /* ... and its evictions by then */
	uint64_t clk_frames, clk_free, clk_evictions; /* lpc_clock's (both) */
	uint64_t cg_usage, cg_file, cg_anon; /* the cgroup's, after the rounds */
	/* lpc's readahead over the phase (warm-up included; lpc_stats) */
	uint64_t ra_pages, ra_used, ra_wasted, ra_dropped, evictions;
	uint64_t ra_windows, ra_async, reads, read_pages, alloc_failures;
};

struct read_results {
	unsigned rounds;
	unsigned nr_rows;
	struct read_row *rows;
	struct read_sample *s; /* [rounds][nr_rows] */
	struct read_phase_end end[RW_NR];
	uint64_t cache_bytes, file_bytes;
	unsigned policy;      /* enum bench_policy */
	size_t page_size;
	bool memcg;           /* the kernel/mmap rows ran */
	char memcg_why[256];  /* else why not */
	int memcg_version;
};

static inline struct read_sample *read_sample(const struct read_results *r,
					      unsigned round, unsigned row)
{
	return &r->s[(size_t)round * r->nr_rows + row];
}

/* Whether variant v reads through an lpc cache (and has lpc_stats deltas). */
static inline bool read_is_lpc(enum read_variant v)
{
	return v == RV_LPC || v == RV_PROBE || v == RV_LPC_CLOCK;
}

void read_report(const struct bench_env *env, const struct read_results *res);

#endif /* LPCBENCH_READ_H */
