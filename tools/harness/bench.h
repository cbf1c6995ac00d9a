/* SPDX-License-Identifier: MIT */
/*
 * bench.h - what lpcbench's main.c hands every benchmark: the options of the
 * run and what was measured or opened once for all of them, and what a
 * benchmark is (struct bench).  The benchmarks themselves are listed in
 * tools/lpcbench/benches.h.
 */
#ifndef LPCBENCH_BENCH_H
#define LPCBENCH_BENCH_H

#include <stdbool.h>
#include <stdint.h>

#include "csv.h"
#include "tsc.h"

#define BENCH_MAX_TCONF 16     /* thread counts in one --threads list */
#define BENCH_MAX_THREADS 1024 /* threads in one slice */

/* read --policy: lpc's eviction policy; BOTH runs lpc (CLOCK2) and
 * lpc_clock (CLOCK) side by side. */
enum bench_policy { BENCH_POLICY_CLOCK2, BENCH_POLICY_CLOCK, BENCH_POLICY_BOTH };

struct bench_opts {
	unsigned threads[BENCH_MAX_TCONF]; /* thread counts, in run order */
	unsigned nr_tconf;
	bool threads_set;  /* --threads given (scan: else 1 and 2 scanners) */
	unsigned rounds;   /* measured rounds */
	bool rounds_set;   /* --rounds given (write runs fewer by default) */
	unsigned warmup;   /* rounds run first and not recorded */
	unsigned slice_ms; /* one variant at one thread count */
	unsigned file_mb; /* lookup's file; read's if file_mb_set */
	bool file_mb_set; /* --file-mb given: else read uses 4 x cache_mb */
	unsigned cache_mb; /* read: lpc's budget and the kernel's memory limit */
	bool cache_mb_set; /* --cache-mb given (sqlite: else its own default) */
	double zipf_theta; /* read */
	unsigned policy; /* read: enum bench_policy (--policy) */
	uint32_t ra_max_kb; /* scan: lpc_config.readahead_max_kb (0: the library's default) */
	const char *calls; /* scan: --calls, call sizes in KiB; NULL: 4,16,128 */
	const char *dir; /* NULL: $TMPDIR, else /var/tmp */
	const char *csv; /* NULL: no CSV */
	const char *plot; /* --plot DIR; NULL: none */
	const char *variants; /* lookup's, scan's variants to run; NULL: all */
	uint64_t seed;
	bool pin;
};

struct bench_env {
	const struct bench_opts *opts;
	struct tsc tsc;
	struct csv *csv; /* NULL without --csv */
	unsigned nr_cpus; /* CPUs this process may use */
};

/* A benchmark: prints its own configuration, measures, reports. */
struct bench {
	const char *name;
	const char *help; /* one line */
	void (*run)(const struct bench_env *env);
	/* Dies with a message if the options make no sense for it; called
	 * before anything is printed or created. */
	void (*check_opts)(const struct bench_opts *opts);
	/* Seconds of measurement the options ask for (the config echo's
	 * estimate; setup comes on top). */
	double (*estimate_s)(const struct bench_opts *opts);
	/* NULL, or the body of an exec'd child (kchild.h): `lpcbench --kchild
	 * NAME ARG CMD_FD RES_FD <options>` runs child(env, ARG, ...) with the
	 * options parsed as this run's; it serves with kchild_serve and never
	 * returns.  env->tsc is not calibrated there. */
	void (*child)(const struct bench_env *env, const char *arg, int cmd_fd, int res_fd);
};

/* The most threads of any --threads count (at least 1). */
static inline unsigned bench_max_threads(const struct bench_opts *o)
{
	unsigned m = 1;

	for (unsigned i = 0; i < o->nr_tconf; i++)
		if (o->threads[i] > m)
			m = o->threads[i];
	return m;
}

/* read's and write's data file: --file-mb if given, else 4 x --cache-mb. */
static inline uint64_t bench_file_bytes(const struct bench_opts *o)
{
	return (uint64_t)(o->file_mb_set ? o->file_mb : 4u * o->cache_mb) << 20;
}

#endif /* LPCBENCH_BENCH_H */
