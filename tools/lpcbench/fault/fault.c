/* SPDX-License-Identifier: MIT */
/*
 * fault.c - `lpcbench fault`, seed 002's table (speculative page faults):
 * each thread invalidates its own 4 MiB range of a shared file and
 * gets every page of it again, a miss each time, on the null backend (so the
 * cache's miss path is measured, not a device).  Interleaved rounds of:
 *
 *   lockless     lpc_invalidate + lpc_page_get/put of each page: the lockless
 *                miss (no lock that other misses share but the insert's)
 *   locked       the same on an LPC_LOOKUP_LOCKED cache: each miss holds the
 *                file's rwlock for reading across insert and read, and
 *                invalidate takes it for writing (the pre-speculative-fault
 *                kernel's mmap_sem)
 *   kernel_anon  the kernel's own loop: MADV_DONTNEED of a private anonymous
 *                4 MiB region, then a write to each page (a fault that
 *                allocates a zeroed page)
 *   kernel_file  MADV_DONTNEED of a MAP_SHARED mapping of the thread's 4 MiB
 *                of a real file (in the page cache), then a read of each page
 *                (a minor fault that maps the cached page).  Counted in pages
 *                touched: the kernel's fault-around maps up to 16 cached pages
 *                per fault, so this row is pages mapped, not faults
 *   lockless_files  (only with --variants) lockless, with each thread's 4 MiB
 *                its own file in the same cache: the file's index and its
 *                lock are out of the picture, what two threads still share
 *                is the pool (free lists, pending, the reclaimer, grace
 *                periods) and the cache's counters
 *
 * --variants LIST runs only those (default: lockless, locked, kernel_anon,
 * kernel_file); the ratios and checks print where both of their variants ran.
 *
 * Readahead is off in both caches (LPC_READAHEAD_OFF): every get is its own
 * miss and allocation, as every fault is the seed's; with readahead on, a
 * miss read a window and the rest of the range were hits.
 *
 * Reported: misses (faults) per minute, in total and per thread, medians
 * over the rounds; lockless / kernel_anon per thread; scaling from 1 to 2
 * threads; CPU time per miss (the process's CPU time over the slice, so the
 * background reclaimer's and the RCU threads' share of the frees counts,
 * over the misses); lpc_stats' split of the lockless misses' time
 * (alloc, insert, read; sampled); the lockless rows' grace periods (lpc_stats
 * grace_periods, grace_period_ns: how many per 1,000 misses, how long each,
 * per thread count: the floor of the design on a VM, where each one is a
 * membarrier IPI to the process's other CPUs); and, outside the rounds, a
 * probe of what one membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) costs on
 * this machine while another thread of the process runs on another CPU
 * (fault_membarrier_probe).  The goals: lockless per thread at least
 * 1.5x kernel_anon, and at least 1.8x from 1 to 2 threads where locked does
 * not scale.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/membarrier.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <lpc/lpc.h>

#include "harness/plot.h"

#include "harness/csv.h"
#include "harness/datafile.h"
#include "harness/rounds.h"
#include "harness/util.h"
#include "lpcbench/benches.h"

#define FAULT_RANGE (4u << 20)
#define FAULT_PS 4096u
#define FAULT_PAGES (FAULT_RANGE / FAULT_PS)

enum { FV_LOCKLESS, FV_LOCKED, FV_ANON, FV_FILE, FV_FILES, FV_NR };
static const char *const fv_name[FV_NR] = { "lockless", "locked", "kernel_anon", "kernel_file",
					    "lockless_files" };
#define FV_DEFAULT ((1u << FV_LOCKLESS) | (1u << FV_LOCKED) | (1u << FV_ANON) | (1u << FV_FILE))

/* The --variants list as a mask (bit v: run variant v); dies on a bad name. */
static unsigned fault_variants(const struct bench_opts *o)
{
	return bench_name_mask(o->variants, fv_name, FV_NR, FV_DEFAULT, "fault");
}

static void fault_check_opts(const struct bench_opts *o)
{
	fault_variants(o);
}

struct fworker {
	char *anon;
	char *map;
	uint64_t sink;
	int err;
} __attribute__((aligned(BENCH_CACHELINE)));

struct fctx {
	struct lpc_cache *c[2];
	struct lpc_file *f[2];
	struct lpc_file **own; /* lockless_files: thread i's file, in c[0] */
	struct fworker *wk;
	struct pool *pool;
	unsigned nt;          /* thread counts */
	const unsigned *threads;
	unsigned warmup;
	unsigned slice[FV_NR]; /* slices run so far, per variant */
	double *cpu_op;       /* [round][t][v]: process CPU ns per operation */
	/* [round][t][v], the variants on c[0] only (lockless, lockless_files):
	 * lpc_stats' grace periods per 1,000 misses of the slice, and
	 * microseconds per grace period (NaN: none) */
	double *gp_kmiss, *gp_us;
};

struct fvar {
	struct fctx *x;
	int v;
};

static uint64_t process_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t fault_fn(unsigned id, void *arg, const _Atomic unsigned *stop)
{
	struct fvar *fv = arg;
	struct fctx *x = fv->x;
	struct fworker *w = &x->wk[id];
	uint64_t base = (uint64_t)id * FAULT_RANGE, ops = 0;

	while (!atomic_load_explicit(stop, memory_order_relaxed)) {
		switch (fv->v) {
		case FV_LOCKLESS:
		case FV_LOCKED:
		case FV_FILES: {
			struct lpc_file *f = x->f[fv->v == FV_LOCKED];
			int rc;

			if (fv->v == FV_FILES) {
				f = x->own[id];
				base = 0;
			}
			rc = lpc_invalidate(f, base, FAULT_RANGE);

			if (rc < 0) {
				w->err = -rc;
				return ops;
			}
			for (unsigned i = 0; i < FAULT_PAGES; i++) {
				struct lpc_page *p;

				rc = lpc_page_get(f, base / FAULT_PS + i, 0, &p);
				if (rc < 0) {
					w->err = -rc;
					return ops;
				}
				lpc_page_put(p);
			}
			break;
		}
		case FV_ANON:
			if (madvise(w->anon, FAULT_RANGE, MADV_DONTNEED)) {
				w->err = errno;
				return ops;
			}
			for (unsigned i = 0; i < FAULT_PAGES; i++)
				((volatile char *)w->anon)[(size_t)i * FAULT_PS] = 1;
			break;
		default:
			if (madvise(w->map, FAULT_RANGE, MADV_DONTNEED)) {
				w->err = errno;
				return ops;
			}
			for (unsigned i = 0; i < FAULT_PAGES; i++)
				w->sink += ((volatile char *)w->map)[(size_t)i * FAULT_PS];
			break;
		}
		ops += FAULT_PAGES;
	}
	return ops;
}

/* One slice, with the process's CPU time around it: every thread's, the
 * library's background ones included (the reclaimer, RCU's callbacks). */
static void fault_slice(void *arg, unsigned threads, uint64_t slice_ns, struct pool_slice *out)
{
	struct fvar *fv = arg;
	struct fctx *x = fv->x;
	unsigned n = x->slice[fv->v]++, t = 0;
	bool lpc0 = fv->v == FV_LOCKLESS || fv->v == FV_FILES;
	struct lpc_stats s0, s1;
	uint64_t c0;
	size_t at;

	/* The counters outside the CPU time: lpc_stats takes the cache's
	 * locks, and the slice's threads are not running yet (or any more). */
	if (lpc0)
		lpc_stats(x->c[0], &s0);
	c0 = process_cpu_ns();
	pool_run(x->pool, threads, fault_fn, arg, slice_ns, out);
	c0 = process_cpu_ns() - c0;
	if (lpc0)
		lpc_stats(x->c[0], &s1);
	while (t < x->nt && x->threads[t] != threads)
		t++;
	/* Slices of one variant run round by round, thread count by count. */
	if (n / x->nt < x->warmup)
		return;
	at = ((size_t)(n / x->nt - x->warmup) * x->nt + t) * FV_NR + (unsigned)fv->v;
	if (out->ops)
		x->cpu_op[at] = (double)c0 / (double)out->ops;
	if (lpc0) {
		uint64_t m = s1.misses - s0.misses, g = s1.grace_periods - s0.grace_periods;

		x->gp_kmiss[at] = m ? 1000.0 * (double)g / (double)m : NAN;
		x->gp_us[at] = g ? (double)(s1.grace_period_ns - s0.grace_period_ns) / 1e3 /
					   (double)g
				 : NAN;
	}
}

struct mb_busy {
	_Atomic unsigned stop, started;
	_Atomic uint64_t iters;
	int cpu;
};

static void *mb_busy_fn(void *arg)
{
	struct mb_busy *b = arg;
	static char buf[4096];
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(b->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	atomic_store(&b->started, 1);
	while (!atomic_load_explicit(&b->stop, memory_order_relaxed)) {
		memset(buf, (int)atomic_load_explicit(&b->iters, memory_order_relaxed), sizeof(buf));
		__asm__ volatile("" : : "r"(buf) : "memory");
		atomic_fetch_add_explicit(&b->iters, 1, memory_order_relaxed);
	}
	return NULL;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The probe: what one membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), the
 * call in each of liburcu's grace periods, costs the calling thread while
 * another thread of the process runs on another CPU (the IPI has somewhere
 * to go, as in a two-thread round), and how fast that other thread ran
 * meanwhile against its speed alone.  ~300 ms, outside the timed rounds;
 * the two threads pinned to two CPUs for its duration (the caller's mask
 * restored).  Printed, never checked.  Return: 0; -1 when it was
 * skipped, with the reason in why.
 */
static int fault_membarrier_probe(double *ns_per_call, double *busy_speed, int *cpus,
				  char *why, size_t whylen)
{
	struct mb_busy b = { .cpu = -1 };
	cpu_set_t old, mine;
	pthread_t th;
	uint64_t t0, i0, alone, during, calls = 0, ns;
	long q;
	int me = sched_getcpu();

	q = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	if (q < 0 || !(q & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) {
		snprintf(why, whylen, "membarrier PRIVATE_EXPEDITED unavailable (%s)",
			 q < 0 ? strerror(errno) : "not in the query's answer");
		return -1;
	}
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) < 0) {
		snprintf(why, whylen, "membarrier register: %s", strerror(errno));
		return -1;
	}
	if (me < 0 || pthread_getaffinity_np(pthread_self(), sizeof(old), &old)) {
		snprintf(why, whylen, "no CPU affinity");
		return -1;
	}
	for (int c = 0; c < CPU_SETSIZE && b.cpu < 0; c++)
		if (c != me && CPU_ISSET(c, &old))
			b.cpu = c;
	if (b.cpu < 0) {
		snprintf(why, whylen, "one CPU only");
		return -1;
	}
	CPU_ZERO(&mine);
	CPU_SET(me, &mine);
	pthread_setaffinity_np(pthread_self(), sizeof(mine), &mine);
	if (pthread_create(&th, NULL, mb_busy_fn, &b)) {
		pthread_setaffinity_np(pthread_self(), sizeof(old), &old);
		snprintf(why, whylen, "pthread_create failed");
		return -1;
	}
	while (!atomic_load(&b.started))
		sched_yield();
	/* Alone: the busy thread's speed over 100 ms while we sleep. */
	i0 = atomic_load(&b.iters);
	t0 = mono_ns();
	usleep(100000);
	alone = atomic_load(&b.iters) - i0;
	ns = mono_ns() - t0;
	alone = (uint64_t)((double)alone * 2e8 / (double)(ns ? ns : 1)); /* per 200 ms */
	/* 200 ms of membarrier calls. */
	i0 = atomic_load(&b.iters);
	t0 = mono_ns();
	do {
		if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) < 0)
			break;
		calls++;
	} while ((ns = mono_ns() - t0) < 200000000u);
	during = atomic_load(&b.iters) - i0;
	atomic_store(&b.stop, 1);
	pthread_join(th, NULL);
	pthread_setaffinity_np(pthread_self(), sizeof(old), &old);
	if (!calls) {
		snprintf(why, whylen, "membarrier failed: %s", strerror(errno));
		return -1;
	}
	*ns_per_call = (double)ns / (double)calls;
	*busy_speed = alone ? (double)during * 2e8 / (double)ns / (double)alone : NAN;
	cpus[0] = me;
	cpus[1] = b.cpu;
	return 0;
}

/* Rounds' values of one (t, v) out of a [round][t][v] array. */
static struct summary fault_sum_at(const double *a, const struct rounds *r, unsigned t,
				   unsigned v)
{
	double *c = xcalloc(r->nr, sizeof(double));
	struct summary sm;

	for (unsigned i = 0; i < r->nr; i++)
		c[i] = a[((size_t)i * r->nt + t) * FV_NR + v];
	sm = summarize(c, r->nr);
	free(c);
	return sm;
}

/*
 * Beside the miss split: the lockless rows' grace periods (lpc_stats
 * grace_periods, grace_period_ns), over everything and per thread count
 * (medians over the measured rounds), and the membarrier probe.
 */
static void fault_print_gp(const struct bench_env *env, const struct fctx *x,
			   const struct rounds *r, const int *vi, const struct lpc_stats *s0,
			   const struct lpc_stats *s1)
{
	const struct bench_opts *o = env->opts;
	uint64_t m = s1->misses - s0->misses, g = s1->grace_periods - s0->grace_periods;
	double ns_call, speed;
	int cpus[2];
	char why[128], pa[96], pb[96];
	struct plot *pl;

	printf("  lockless grace periods (lpc_stats grace_periods, grace_period_ns; waits by the\n"
	       "  cache's threads, the reclaimer's included): %.2f per 1,000 misses, %.1f us each\n",
	       m ? 1000.0 * (double)g / (double)m : 0.0,
	       g ? (double)(s1->grace_period_ns - s0->grace_period_ns) / 1e3 / (double)g : 0.0);
	pl = plot_open(&(struct plot_spec){
		.name = "fault_gp",
		.title = "lpcbench fault: grace periods waited for per 1,000 lockless misses",
		.ylabel = "grace periods per 1,000 misses", .stitle = "variant",
		.header = "threads,variant,per_kmiss,min,max,us_each,us_min,us_max", .xcol = 1,
		.scol = 2, .ycol = 3, .locol = 4, .hicol = 5, .logy = false, .ref = NAN });
	for (unsigned t = 0; t < r->nt; t++) {
		for (unsigned v = 0; v < FV_NR; v++) {
			struct summary k, u;

			if (vi[v] < 0 || (v != FV_LOCKLESS && v != FV_FILES))
				continue;
			k = fault_sum_at(x->gp_kmiss, r, t, v);
			u = fault_sum_at(x->gp_us, r, t, v);
			printf("    %u thread%s  %-14s %6.2f [%6.2f - %6.2f] per 1,000 misses,"
			       " %6.1f [%6.1f - %6.1f] us each\n",
			       o->threads[t], o->threads[t] == 1 ? " " : "s", fv_name[v], k.med, k.min,
			       k.max, u.med, u.min, u.max);
			plot_row(pl, "%u,%s,%s,%s", o->threads[t], fv_name[v],
				 plot_sum(pa, sizeof(pa), &k), plot_sum(pb, sizeof(pb), &u));
			csv_summary(env->csv,
				    &(struct csv_key){ .bench = "fault", .threads = o->threads[t],
						       .variant = fv_name[v],
						       .metric = "grace_periods_per_kmiss" },
				    &k);
			csv_summary(env->csv,
				    &(struct csv_key){ .bench = "fault", .threads = o->threads[t],
						       .variant = fv_name[v], .metric = "us_per_grace_period" },
				    &u);
		}
	}
	plot_close(pl);
	if (fault_membarrier_probe(&ns_call, &speed, cpus, why, sizeof(why)) < 0) {
		printf("  membarrier probe skipped: %s\n\n", why);
		return;
	}
	printf("  membarrier probe (outside the rounds, 200 ms): PRIVATE_EXPEDITED costs %.1f us\n"
	       "  a call on CPU %d while a thread busy on CPU %d runs at %.0f%% of its speed alone\n\n",
	       ns_call / 1e3, cpus[0], cpus[1], 100.0 * speed);
	csv_raw(env->csv,
		&(struct csv_key){ .bench = "fault", .round = 1, .threads = 2, .variant = "membarrier",
				   .metric = "us_per_call" },
		ns_call / 1e3);
	csv_raw(env->csv,
		&(struct csv_key){ .bench = "fault", .round = 1, .threads = 2, .variant = "membarrier",
				   .metric = "busy_thread_speed" },
		speed);
}

static double fault_estimate_s(const struct bench_opts *o)
{
	return (double)(o->rounds + o->warmup) * o->nr_tconf *
	       __builtin_popcount(fault_variants(o)) * o->slice_ms / 1000.0;
}

static void fault_run(const struct bench_env *env)
{
	const struct bench_opts *o = env->opts;
	unsigned maxt = 0, t1 = ~0u, t2 = ~0u;
	struct fctx x = { 0 };
	struct fvar fv[FV_NR];
	struct rounds r = { .bench = "fault", .nv = FV_NR };
	struct lpc_stats s0, s1;
	struct plot *pl;
	char pb[96];
	struct datafile df;
	struct pool *pool;
	uint64_t bytes;
	unsigned mask = fault_variants(o);
	int fd, vi[FV_NR]; /* variant v's place in r.v, -1: not run */
	char (*own_path)[PATH_MAX + 16] = NULL;

	for (unsigned i = 0; i < o->nr_tconf; i++) {
		maxt = o->threads[i] > maxt ? o->threads[i] : maxt;
		if (o->threads[i] == 1)
			t1 = i;
		if (o->threads[i] == 2)
			t2 = i;
	}
	bytes = (uint64_t)maxt * FAULT_RANGE;
	datafile_choose(o->dir, &df);
	printf("== fault: seed 002's table: each thread invalidates its own 4 MiB of a shared file\n"
	       "  and gets every page again (a miss each), null backend; beside it the kernel's\n"
	       "  fault loop: MADV_DONTNEED + touch of an anonymous region and of a MAP_SHARED\n"
	       "  file mapping (file of %" PRIu64 " MiB in %s, %s); every row counts pages,\n"
	       "  and kernel_file's faults map up to 16 pages each (fault-around)\n\n",
	       bytes >> 20, df.dir, df.fstype);
	fflush(stdout);
	progress("fault: writing a %" PRIu64 " MiB file", bytes >> 20);
	datafile_create(&df, bytes);
	progress_done();
	if (mask & (1u << FV_FILES)) {
		/* lockless_files: one more 4 MiB file per thread (the null
		 * backend never reads it; lpc_file_open needs it there). */
		own_path = xcalloc(maxt, sizeof(*own_path));
		for (unsigned i = 0; i < maxt; i++) {
			snprintf(own_path[i], sizeof(own_path[i]), "%s/own%u", df.dir, i);
			fd = open(own_path[i], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
			if (fd < 0 || ftruncate(fd, FAULT_RANGE))
				die_err(errno, "fault: %s", own_path[i]);
			close(fd);
		}
	}
	for (int m = 0; m < 2; m++) {
		struct lpc_config cfg;
		int rc;

		lpc_config_init(&cfg);
		cfg.cache_bytes = bytes + (8u << 20);
		cfg.io_backend = LPC_IO_NULL;
		cfg.lookup_mode = m ? LPC_LOOKUP_LOCKED : LPC_LOOKUP_LOCKLESS;
		cfg.readahead_kb = LPC_READAHEAD_OFF; /* a miss per get (the top) */
		rc = lpc_cache_create(&cfg, &x.c[m]);
		if (rc == 0)
			rc = lpc_file_open(x.c[m], df.path, O_RDONLY, 0, &x.f[m]);
		if (rc < 0)
			die_err(-rc, "fault: cache or file");
	}
	if (own_path) {
		x.own = xcalloc(maxt, sizeof(*x.own));
		for (unsigned i = 0; i < maxt; i++) {
			int rc = lpc_file_open(x.c[0], own_path[i], O_RDONLY, 0, &x.own[i]);

			if (rc < 0)
				die_err(-rc, "fault: %s", own_path[i]);
		}
	}
	fd = open(df.path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die_err(errno, "fault: %s", df.path);
	x.wk = xaligned_alloc(BENCH_CACHELINE, sizeof(*x.wk) * maxt);
	memset(x.wk, 0, sizeof(*x.wk) * maxt);
	for (unsigned i = 0; i < maxt; i++) {
		x.wk[i].anon = mmap(NULL, FAULT_RANGE, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		x.wk[i].map = mmap(NULL, FAULT_RANGE, PROT_READ, MAP_SHARED, fd,
				   (off_t)i * FAULT_RANGE);
		if (x.wk[i].anon == MAP_FAILED || x.wk[i].map == MAP_FAILED)
			die_err(errno, "fault: mmap");
		madvise(x.wk[i].anon, FAULT_RANGE, MADV_NOHUGEPAGE); /* 4 KiB faults */
	}
	r.nv = 0;
	for (int v = 0; v < FV_NR; v++) {
		vi[v] = -1;
		if (!(mask & (1u << v)))
			continue;
		fv[v] = (struct fvar){ .x = &x, .v = v };
		vi[v] = (int)r.nv;
		r.v[r.nv++] = (struct rounds_variant){ .name = fv_name[v], .fn = fault_fn,
						       .arg = &fv[v], .slice = fault_slice };
	}
	x.nt = o->nr_tconf;
	x.threads = o->threads;
	x.warmup = o->warmup;
	x.cpu_op = xcalloc((size_t)o->rounds * o->nr_tconf * FV_NR, sizeof(double));
	x.gp_kmiss = xcalloc((size_t)o->rounds * o->nr_tconf * FV_NR, sizeof(double));
	x.gp_us = xcalloc((size_t)o->rounds * o->nr_tconf * FV_NR, sizeof(double));
	lpc_stats(x.c[0], &s0);
	pool = pool_create(maxt, o->pin);
	x.pool = pool;
	rounds_run(env, pool, &r, "mfaults_per_min", 60e-6);
	pool_destroy(pool);
	lpc_stats(x.c[0], &s1);
	for (unsigned i = 0; i < maxt; i++)
		if (x.wk[i].err)
			die_err(x.wk[i].err, "fault: worker %u failed", i);

	rounds_print(env, &r, "fault: misses (faults) per minute", "M/min", 60e-6, "fault");
	printf("\n  ratios within a round, median [min - max]:\n");
	for (unsigned t = 0; t < r.nt; t++) {
		if (vi[FV_LOCKLESS] >= 0 && vi[FV_ANON] >= 0)
			rounds_print_ratio_at(env, &r, "lockless / kernel_anon", "ratio_lockless_anon",
					      t, (unsigned)vi[FV_LOCKLESS], (unsigned)vi[FV_ANON]);
		if (vi[FV_LOCKLESS] >= 0 && vi[FV_LOCKED] >= 0)
			rounds_print_ratio_at(env, &r, "lockless / locked", "ratio_lockless_locked",
					      t, (unsigned)vi[FV_LOCKLESS], (unsigned)vi[FV_LOCKED]);
		if (vi[FV_FILES] >= 0 && vi[FV_LOCKLESS] >= 0)
			rounds_print_ratio_at(env, &r, "lockless_files / lockless",
					      "ratio_files_lockless", t, (unsigned)vi[FV_FILES],
					      (unsigned)vi[FV_LOCKLESS]);
	}
	if (t1 != ~0u && t2 != ~0u) {
		struct summary sc[FV_NR];

		for (int v = 0; v < FV_NR; v++) {
			char l[96];

			if (vi[v] < 0)
				continue;
			sc[v] = rounds_ratio(&r, (unsigned)vi[v], t2, (unsigned)vi[v], t1);
			snprintf(l, sizeof(l), "scaling %s, 2 over 1 thread", fv_name[v]);
			rounds_print_ratio(env, &r, l, "scaling_2_1", 2, sc[v]);
		}
		if (vi[FV_LOCKLESS] >= 0 && vi[FV_ANON] >= 0 && vi[FV_LOCKED] >= 0) {
			struct summary a = rounds_sum(&r, t1, (unsigned)vi[FV_LOCKLESS], 60e-6);
			struct summary k = rounds_sum(&r, t1, (unsigned)vi[FV_ANON], 60e-6);

			printf("\n  checks (informational; a loaded machine can miss them):\n");
			printf("    a) lockless misses/min per thread >= 1.5x kernel_anon faults, 1 thread: "
			       "%.1f M vs %.1f M: %s\n", a.med, k.med, a.med >= 1.5 * k.med ? "PASS" : "FAIL");
			printf("    b) lockless scaling 1 -> 2 threads >= 1.8: %.2f: %s\n", sc[FV_LOCKLESS].med,
			       sc[FV_LOCKLESS].med >= 1.8 ? "PASS" : "FAIL");
			printf("    c) locked does not scale (< 1.3): %.2f: %s\n", sc[FV_LOCKED].med,
			       sc[FV_LOCKED].med < 1.3 ? "PASS" : "FAIL");
		}
	}
	printf("\n  CPU time per miss (fault), ns: the process's CPU time over the slice\n"
	       "  (background threads included) / pages, median [min - max]:\n");
	pl = plot_open(&(struct plot_spec){
		.name = "fault_cpu", .title = "lpcbench fault: CPU time per miss (fault)",
		.ylabel = "ns per miss", .stitle = "variant",
		.header = "threads,variant,ns,min,max", .xcol = 1, .scol = 2, .ycol = 3,
		.locol = 4, .hicol = 5, .logy = false, .ref = NAN });
	for (unsigned t = 0; t < r.nt; t++) {
		for (unsigned v = 0; v < FV_NR; v++) {
			double *c;
			struct summary sm;

			if (vi[v] < 0)
				continue;
			c = xcalloc(r.nr, sizeof(double));
			for (unsigned i = 0; i < r.nr; i++)
				c[i] = x.cpu_op[((size_t)i * r.nt + t) * FV_NR + v];
			sm = summarize(c, r.nr);
			free(c);
			printf("    %u thread%s  %-14s %8.0f [%8.0f - %8.0f]\n", o->threads[t],
			       o->threads[t] == 1 ? " " : "s", fv_name[v], sm.med, sm.min, sm.max);
			plot_row(pl, "%u,%s,%s", o->threads[t], fv_name[v],
				 plot_sum(pb, sizeof(pb), &sm));
			csv_summary(env->csv,
				    &(struct csv_key){ .bench = "fault", .threads = o->threads[t],
						       .variant = fv_name[v], .metric = "cpu_ns_per_miss" },
				    &sm);
		}
	}
	plot_close(pl);
	if (vi[FV_LOCKLESS] >= 0 || vi[FV_FILES] >= 0) { /* the lockless cache's */
		uint64_t m = s1.misses - s0.misses;
		double d = m ? (double)m : 1;

		printf("\n  lockless counters (lockless and lockless_files: one cache) over the measured\n"
		       "  rounds and the warm-up: misses %" PRIu64
		       " reads %" PRIu64 " invalidated %" PRIu64 " retries %" PRIu64 "\n",
		       m, s1.reads - s0.reads, s1.invalidated - s0.invalidated,
		       s1.retries - s0.retries);
		printf("  lockless miss split (lpc_stats miss_ns_*, ns per miss): alloc %.0f"
		       " (evict %.0f) insert %.0f read %.0f\n",
		       (double)(s1.miss_ns_alloc - s0.miss_ns_alloc) / d,
		       (double)(s1.miss_ns_evict - s0.miss_ns_evict) / d,
		       (double)(s1.miss_ns_insert - s0.miss_ns_insert) / d,
		       (double)(s1.miss_ns_read - s0.miss_ns_read) / d);
		fault_print_gp(env, &x, &r, vi, &s0, &s1);
	}
	for (unsigned i = 0; i < maxt; i++) {
		munmap(x.wk[i].anon, FAULT_RANGE);
		munmap(x.wk[i].map, FAULT_RANGE);
	}
	close(fd);
	for (unsigned i = 0; x.own && i < maxt; i++)
		lpc_file_close(x.own[i]);
	for (int m = 0; m < 2; m++) {
		lpc_file_close(x.f[m]);
		lpc_cache_destroy(x.c[m]);
	}
	for (unsigned i = 0; own_path && i < maxt; i++)
		unlink(own_path[i]);
	free(own_path);
	free(x.own);
	free(x.wk);
	free(x.cpu_op);
	free(x.gp_kmiss);
	free(x.gp_us);
	free(r.ops_s);
	datafile_remove();
}

const struct bench bench_fault = {
	.name = "fault",
	.help = "seed 002: each thread invalidates its own 4 MiB and gets every page again\n"
		"           (a miss each, null backend), lockless against LOCKED, beside the\n"
		"           kernel's MADV_DONTNEED + touch of anonymous and MAP_SHARED memory",
	.run = fault_run,
	.check_opts = fault_check_opts,
	.estimate_s = fault_estimate_s,
};
