/* SPDX-License-Identifier: MIT */
/*
 * pool.h - the worker threads of a benchmark and its timed slices.
 *
 * A slice runs one operation on the first `active` workers for a fixed time:
 *
 *  1. The coordinator (the main thread) writes the job and clears `stop`,
 *     then meets every worker at the start barrier: the active ones start
 *     together, the others go straight to the end barrier and sleep there.
 *  2. Each active worker reads the clock and the TSC, runs its loop, and reads
 *     them again.  The loop looks at `stop` (one relaxed load of a line that
 *     stays shared until the end) once per batch of operations, never the
 *     clock: reading a clock on every operation would cost more than the
 *     operations being measured.
 *  3. The coordinator sleeps for the slice, sets `stop` and meets the workers
 *     at the end barrier; the barrier orders their results before its reads.
 *     It runs SCHED_FIFO where it may (see pool_coord_rt), so that its wake-up
 *     is not queued behind busy workers and a slice lasts what was asked.
 *
 * Threads persist across slices: creating them per slice would add its cost
 * and first-touch faults to the first operations of every slice.
 *
 * Pinning: worker i runs on the i-th CPU this process may use, modulo their
 * number (so 8 workers on 2 CPUs are 4 per CPU).  A failed pin is ignored:
 * the worker runs unpinned, and pool_pinned() says how many were pinned.
 */
#ifndef LPCBENCH_POOL_H
#define LPCBENCH_POOL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct pool;

/*
 * The timed loop of worker `id`: runs until *stop is set, checking it once
 * per batch of operations.  Return: the operations done.
 */
typedef uint64_t (*pool_fn)(unsigned id, void *arg, const _Atomic unsigned *stop);

/* What one slice measured. */
struct pool_slice {
	uint64_t ops;      /* operations, all workers */
	uint64_t ticks;    /* TSC ticks inside the loops, summed over workers */
	uint64_t wall_ns;  /* first worker's start to last worker's end */
	uint64_t cpu_ns;   /* CPU time the workers got inside their loops */
	uint64_t ops_min;  /* the slowest and fastest worker's operations: */
	uint64_t ops_max;  /* how fair the CPUs were shared */
};

/* Starts nr workers (pinned if pin).  Dies on failure. */
struct pool *pool_create(unsigned nr, bool pin);

/* Stops and joins the workers. */
void pool_destroy(struct pool *p);

/* Workers that run pinned to one CPU. */
unsigned pool_pinned(const struct pool *p);

/*
 * Whether the coordinator (the thread that called pool_create) runs
 * SCHED_FIFO until pool_destroy, so that it ends each slice on time even when
 * the workers oversubscribe the CPUs.  False without the privilege.
 */
bool pool_coord_rt(const struct pool *p);

/*
 * Runs fn(id, arg, stop) on workers 0..active-1 for slice_ns and fills *out.
 * Context: the coordinator only; active <= the pool's size.
 */
void pool_run(struct pool *p, unsigned active, pool_fn fn, void *arg,
	      uint64_t slice_ns, struct pool_slice *out);

/* The CPUs this process may run on: count, and the i-th one's number. */
unsigned cpus_allowed(void);
int cpu_allowed_nth(unsigned i);

#endif /* LPCBENCH_POOL_H */
