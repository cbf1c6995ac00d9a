/* SPDX-License-Identifier: MIT */
/*
 * rounds.h - interleaved rounds of timed slices for the pin and fault
 * benchmarks: every round runs each thread count x each variant once (the
 * lookup benchmark's pattern), so the ratios between variants are taken
 * within a round and summarised as median [min - max] over the rounds.
 */
#ifndef LPCBENCH_ROUNDS_H
#define LPCBENCH_ROUNDS_H

#include <stdbool.h>
#include <stdint.h>

#include "bench.h"
#include "pool.h"
#include "stats.h"

#define ROUNDS_MAX_V 8

struct rounds_variant {
	const char *name;
	pool_fn fn;
	void *arg;
	/* NULL: the slice is pool_run(pool, threads, fn, arg).  Else this
	 * runs it instead (in another process, or with counters read around
	 * it: write.c) and fills *out. */
	void (*slice)(void *arg, unsigned threads, uint64_t slice_ns, struct pool_slice *out);
};

/* Per round, per thread count, per variant: operations per second. */
struct rounds {
	const char *bench;
	unsigned nv, nt, nr;
	struct rounds_variant v[ROUNDS_MAX_V];
	double *ops_s; /* [r][t][v] */
};

static inline double *rounds_at(const struct rounds *r, unsigned round, unsigned t, unsigned v)
{
	return &r->ops_s[((size_t)round * r->nt + t) * r->nv + v];
}

/*
 * Runs opts->warmup + opts->rounds rounds on pool (as big as the largest
 * thread count), a progress line on stderr, and keeps the measured ones;
 * writes the raw values to the CSV as metric `metric` (scaled by `scale`).
 */
void rounds_run(const struct bench_env *env, struct pool *pool, struct rounds *r,
		const char *metric, double scale);

/* The summary of variant v at thread-count slot t, scaled. */
struct summary rounds_sum(const struct rounds *r, unsigned t, unsigned v, double scale);

/* Within-round ratio of (v1, t1) over (v2, t2), summarised. */
struct summary rounds_ratio(const struct rounds *r, unsigned v1, unsigned t1, unsigned v2,
			    unsigned t2);

/*
 * Prints the throughput table (one line per variant x thread count:
 * med [min - max] in `unit` after `scale`, and per thread) and writes it
 * with --plot as <plot_name>.csv/.svg.
 */
void rounds_print(const struct bench_env *env, const struct rounds *r, const char *title,
		  const char *unit, double scale, const char *plot_name);

/* Prints "label: med [min - max]" and records it in the CSV. */
void rounds_print_ratio(const struct bench_env *env, const struct rounds *r, const char *label,
			const char *metric, unsigned threads, struct summary s);

/* Prints "what, N thread(s): med [min - max]" of variant v1 over v2 at
 * thread count index t (within each round), and records it as metric. */
void rounds_print_ratio_at(const struct bench_env *env, const struct rounds *r, const char *what,
			   const char *metric, unsigned t, unsigned v1, unsigned v2);

#endif /* LPCBENCH_ROUNDS_H */
