/* SPDX-License-Identifier: MIT */
/*
 * stress.h - the set-up every stress test (tests/stress/stress_*.c) shares,
 * on top of lpc_test.h (header only, one translation unit per program).
 *
 *  - start:   tst_stress_init(argc, argv, def_s) takes --seed N and prints
 *             the seed (tst_init), reads the run time from LPC_STRESS_SECONDS
 *             (default def_s), arms a watchdog of that time + 90 s, and skips
 *             (exit 77) without a temporary directory.  Return: the seconds.
 *  - files:   tst_stress_file(c, size, &id, fmt, ...) makes a data file for
 *             the null backend (a hole of `size` bytes: the backend stamps
 *             each page it reads {id, index} and fills the rest with
 *             lpc_io_null_pattern, which tst_null_check_page checks) and
 *             opens it in cache c.
 *  - threads: tst_threads_start() starts n threads of one function, each on
 *             its own argument (base + i * stride, or the index i itself when
 *             base is NULL), after those already started; tst_stress_wait()
 *             lets them run for the given seconds (less after 20 failures)
 *             and then raises tst_stop, which the workers poll with
 *             tst_stopping(); tst_threads_join() joins them all.
 *             tst_stress_wait_for(seconds, enough, arg) runs at least that
 *             long and then on, up to TST_EXTRA_S more, until enough(arg)
 *             says the story did the work its checks need (a loaded
 *             machine can starve a short run: evictions > 0 after 307 ops
 *             failed that way), so such a check tests lpc, not the load.
 *  - the end: tst_frames_allocatable(c, max) allocates private pages until
 *             -ENOMEM (at most max + 1), puts them back and returns how many
 *             it got: every frame of an idle cache, if none was lost.
 */
#ifndef LPC_TESTS_COMMON_STRESS_H
#define LPC_TESTS_COMMON_STRESS_H

#include <pthread.h>
#include <stdarg.h>

#include "lpc_test.h"

#define TST_MAX_THREADS 64

static _Atomic bool tst_stop;

struct tst_threads {
	unsigned n;
	pthread_t th[TST_MAX_THREADS];
};

static inline double tst_stress_init(int argc, char **argv, double def_s)
{
	double secs;

	tst_init(argc, argv, 0);
	secs = tst_stress_seconds(def_s);
	signal(SIGALRM, tst_watchdog);
	alarm((unsigned)secs + 90);
	tst_require_tmpdir();
	return secs;
}

static inline __attribute__((format(printf, 4, 5))) struct lpc_file *
tst_stress_file(struct lpc_cache *c, uint64_t size, uint64_t *id, const char *fmt, ...)
{
	struct lpc_file *f = NULL;
	char path[600], name[64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	REQUIRE(tst_make_sparse(name, size, path, sizeof(path)) == 0, "data file %s", name);
	if (id)
		*id = tst_file_id(path);
	REQUIRE(lpc_file_open(c, path, O_RDONLY, 0, &f) == 0, "open %s", path);
	return f;
}

static inline bool tst_stopping(void)
{
	return atomic_load_explicit(&tst_stop, memory_order_relaxed);
}

static inline void tst_threads_start(struct tst_threads *t, unsigned n, void *(*fn)(void *),
				     void *base, size_t stride)
{
	if (t->n == 0)
		atomic_store(&tst_stop, false);
	REQUIRE(t->n + n <= TST_MAX_THREADS, "%u threads: at most %u", t->n + n,
		TST_MAX_THREADS);
	for (unsigned i = 0; i < n; i++) {
		void *arg = base ? (char *)base + i * stride : (void *)(uintptr_t)i;

		REQUIRE(pthread_create(&t->th[t->n], NULL, fn, arg) == 0, "pthread_create");
		t->n++;
	}
}

static inline void tst_stress_wait(double seconds)
{
	uint64_t t0 = tst_now_ns();

	while (tst_now_ns() - t0 < (uint64_t)(seconds * 1e9) && atomic_load(&tst_failed) < 20)
		tst_sleep_us(10000);
	atomic_store(&tst_stop, true);
}

#define TST_EXTRA_S 60

static inline void tst_stress_wait_for(double seconds, bool (*enough)(void *arg), void *arg)
{
	uint64_t t0 = tst_now_ns(), extra = (uint64_t)TST_EXTRA_S * 1000000000u;

	while (atomic_load(&tst_failed) < 20) {
		uint64_t el = tst_now_ns() - t0;

		if (el >= (uint64_t)(seconds * 1e9) && (enough(arg) || el >= seconds * 1e9 + extra))
			break;
		tst_sleep_us(10000);
	}
	atomic_store(&tst_stop, true);
}

static inline void tst_threads_join(struct tst_threads *t)
{
	for (unsigned i = 0; i < t->n; i++)
		pthread_join(t->th[i], NULL);
	t->n = 0;
}

#endif /* LPC_TESTS_COMMON_STRESS_H */
