/* SPDX-License-Identifier: MIT */
/*
 * util.h - error exits, the progress line and small helpers shared by every
 * part of lpcbench.
 *
 * lpcbench is a program, not a library: an error it cannot go on from is
 * reported on stderr with what failed and why, and the program exits with
 * status 1.  The exit runs the atexit handlers, which remove the data files.
 */
#ifndef LPCBENCH_UTIL_H
#define LPCBENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#endif
#ifndef unlikely
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif

#define BENCH_CACHELINE 64
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Prints "lpcbench: <message>" and exits 1. */
void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...);

/*
 * A --variants list ("a,b,c") as a mask over names[0..n) (bit v: names[v]
 * named); NULL: `all`.  Dies on a name not in names or a list that names
 * none, printing the names that `what` (e.g. "scan") knows.
 */
unsigned bench_name_mask(const char *list, const char *const *names, unsigned n, unsigned all,
			 const char *what);

/*
 * Prints "lpcbench: <message>: strerror(err)" and exits 1.  err is a positive
 * errno; for lpc's return codes pass -rc.
 */
void __attribute__((noreturn, format(printf, 2, 3)))
die_err(int err, const char *fmt, ...);

/* malloc/aligned_alloc that die with a message instead of returning NULL. */
void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xaligned_alloc(size_t align, size_t size);

/*
 * Progress on stderr.  On a terminal the line is rewritten in place; else
 * each call prints one line, so a log stays readable.  progress_done() ends
 * the line (on a terminal, erases it).
 */
void __attribute__((format(printf, 1, 2))) progress(const char *fmt, ...);
void progress_done(void);

/* CLOCK_MONOTONIC in nanoseconds: cheap (vDSO), never in a timed loop. */
static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Sleeps ns nanoseconds of CLOCK_MONOTONIC, resuming after signals. */
void sleep_ns(uint64_t ns);

#endif /* LPCBENCH_UTIL_H */
