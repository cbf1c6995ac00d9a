/* SPDX-License-Identifier: MIT */
/*
 * read.c - the read benchmark (the read goal's measurement): random 4 KiB
 * reads over a file larger than the cache, through lpc and through the
 * kernel's page cache confined to the same memory, side by side.
 *
 * Rows: lpc (lpc_pread, sync backend, O_DIRECT under it; its cache evicts
 * with --policy's reclaim_policy, CLOCK2 by default; with --policy both, a
 * second row lpc_clock reads through a second cache of the same size that
 * evicts with plain CLOCK, so both policies and the kernel meet in one
 * interleaved run), kernel (buffered
 * pread(2)), mmap (memcpy of a page out of a MAP_SHARED mapping), direct
 * (O_DIRECT pread(2), no cache: the floor), at each --threads count, for two
 * workloads: uniform and Zipf (theta --zipf-theta, Gray et al.'s generator,
 * ranks permuted over the file: zipf.h).  Then scan-mix: the same Zipf
 * readers plus one sequential reader of the whole file, lpc and kernel, to
 * see whether the scan flushes the readers' hot set.  And the device itself:
 * O_DIRECT random reads at queue depth 1 and 32 (1 and 32 threads).
 *
 * Equal memory.  lpc gets --cache-mb of frames.  The kernel and mmap rows run
 * in a child process that joined a memory cgroup limited to --cache-mb
 * (memcg.h): the memory controller charges page cache to the process that
 * reads it in, so the limit must hold a process, not threads.  Both rows
 * share that process, its cgroup and so one page cache: they are two ways
 * into the same cache.  The parent drops the file from the page cache before
 * the first round (it was just written), so no copy outside the limit helps
 * them.  Without a writable cgroup the kernel and mmap rows are skipped, and
 * the run says why.
 *
 * Phases.  Each workload is a phase of its own that starts from cold caches
 * (a new lpc cache; the file dropped from the page cache) and warms them with
 * its own reads until they are full (or a time cap; an lpc cache is full at
 * its first eviction or read-around; scan-mix by its Zipf readers alone, so
 * that the scan meets a hot set: warm()), then runs --warmup unrecorded rounds
 * and --rounds measured ones.  Within a round every thread
 * count runs every variant for one slice, as in lookup, and every ratio is
 * taken within the round (read_report.c).
 *
 * Hits and misses.  For every row the same, variant-blind measure: the bytes
 * each reader thread fetched from storage (read_bytes of
 * /proc/thread-self/io, counted where the block layer submits a read): a read
 * that fetched nothing was a hit.  Readahead is off for the random readers
 * (POSIX_FADV_RANDOM, MADV_RANDOM) so a miss fetches one page.  Beside it,
 * lpc's own counters (lpc_stats deltas: hits / (hits + misses), read_around,
 * evictions and direct_reclaims: a full lpc cache evicts, and reads around
 * only when nothing can be evicted), for mmap, major faults, and for kernel,
 * reads that a first preadv2(..., RWF_NOWAIT) served whole (only cached
 * pages; on a miss the read is redone blocking, ~1 us more on a ~100 us
 * miss): exact even where async readahead started by another thread is
 * charged to a reader's bytes.  lpc's readers in scan-mix ask the same
 * question with lpc_page_find before each read (found: a hit; absent or
 * in flight: a miss): their bytes are no measure there, since a reader
 * that needs a page of a readahead run still queued reads the whole run
 * itself (ra_worker.c Q6), and its bytes then exceed its reads.  A read
 * that waited for another thread's read of the same page counts as a hit
 * by bytes and as a miss by lpc_stats.
 *
 * Page numbers are drawn inside the timed loop (a random stream per worker
 * and variant that never repeats), because a precomputed list short enough to
 * stay small would wrap and repeat pages, which a cache would reward; the draw
 * costs every variant the same few ns (its cost is printed at setup).  Every
 * page read is checked: each 4 KiB block of the file starts with its number.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <unistd.h>

#include <lpc/lpc.h>

#include "harness/cleanup.h"
#include "harness/datafile.h"
#include "harness/kchild.h"
#include "harness/memcg.h"
#include "harness/rng.h"
#include "harness/util.h"
#include "harness/zipf.h"
#include "lpcbench/benches.h"
#include "read.h"

#define READ_PAGE 4096u
#define READ_BATCH 8 /* reads between two looks at the stop flag */
#define READ_QD_DEEP 32 /* the device line's deep queue: threads */
#define READ_WARM_SLICE_NS 250000000u
#define READ_WARM_CAP_S 8.0 /* warm-up time cap per cache and phase */
#define READ_WARM_FULL 0.97 /* a kernel cache this full of its limit is warm */

struct rworker {
	alignas(BENCH_CACHELINE) uint64_t rng[RV_NR];
	unsigned char *buf;
	int iofd; /* /proc/thread-self/io, opened by the worker itself */
	/* The last slice: */
	uint64_t reads, io_bytes, majflt, nowait_hits, find_hits;
	uint64_t run_ns, runq_ns; /* schedstat deltas */
	uint64_t hit_ticks, miss_ticks, ra_ticks, hit_n, miss_n, ra_n;
	int err;
	uint32_t err_page;
};

/* Parent -> child commands, child -> parent results (pipes, < PIPE_BUF). */
enum { CMD_SETUP, CMD_RUN, CMD_RESET };

struct child_cmd {
	int op;
	int w, v;
	unsigned threads;
	uint64_t slice_ns;
};

struct child_res {
	int err;
	uint32_t err_page;
	struct read_sample s;
};

struct rctx {
	const struct bench_env *env;
	struct datafile df;
	uint64_t file_bytes, cache_bytes;
	uint32_t nr_pages;
	struct zipf zipf;
	/* parent: lpc's cache (--policy) and, with --policy both, lpc_clock's */
	struct lpc_cache *cache, *cache_clk;
	struct lpc_file *lf, *lf_clk;
	int dfd; /* O_DIRECT */
	/* child (kernel and mmap) */
	int kfd, kfd_seq;
	unsigned char *map, *map_seq;
	/* both */
	struct pool *pool;
	unsigned nr_workers;
	struct rworker *wk;
	/* the slice being run */
	enum read_workload w;
	enum read_variant v;
	unsigned readers;
	/* scan-mix's one sequential reader per variant: where it goes on at
	 * its next slice, whatever the row (the reader count).  One position
	 * a variant, not one a worker: the scanner of each row is another
	 * worker, and three scanners at three positions of their own read
	 * again pages another had read within a cache's worth of pages
	 * (partly a loop, not a scan); only the slice's scanner thread
	 * touches it. */
	uint64_t scan_pos[RV_NR];
	/* the kernel side: a forked child in a memory cgroup (kchild.h) */
	struct kchild kc;
	bool have_cg;
};

/* ---- the timed loop ---- */

static uint64_t thread_majflt(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? 0 : (uint64_t)ru.ru_majflt;
}

static __attribute__((noinline, cold)) int
read_fail(struct rworker *wk, int err, uint32_t page)
{
	wk->err = err;
	wk->err_page = page;
	return err;
}

/* scan-mix's readers on lpc: counts the read as a hit when its page is cached
 * now (lpc_page_find: -ENOENT absent, -EAGAIN in flight, both misses), as
 * RWF_NOWAIT counts the kernel's.  The find marks the page referenced, as the
 * read that follows does anyway. */
static inline void lpc_find_hit(struct lpc_file *f, struct rworker *wk, uint32_t page)
{
	struct lpc_page *pg;

	if (lpc_page_find(f, page, &pg) == 0) {
		lpc_page_put(pg);
		wk->find_hits++;
	}
}

/* One read of page into wk->buf, checked.  Return: 0 or a positive errno. */
static inline int read_one(const struct rctx *x, struct rworker *wk,
			   enum read_variant v, bool seq, uint32_t page)
{
	uint64_t off = (uint64_t)page * READ_PAGE;
	ssize_t n;

	switch (v) {
	case RV_LPC:
	case RV_PROBE:
		if (x->w == RW_SCAN && !seq)
			lpc_find_hit(x->lf, wk, page);
		n = lpc_pread(x->lf, wk->buf, READ_PAGE, off);
		if (unlikely(n != READ_PAGE))
			return read_fail(wk, n < 0 ? (int)-n : EIO, page);
		break;
	case RV_LPC_CLOCK:
		if (x->w == RW_SCAN && !seq)
			lpc_find_hit(x->lf_clk, wk, page);
		n = lpc_pread(x->lf_clk, wk->buf, READ_PAGE, off);
		if (unlikely(n != READ_PAGE))
			return read_fail(wk, n < 0 ? (int)-n : EIO, page);
		break;
	case RV_KERNEL:
		if (!seq) {
			/* RWF_NOWAIT reads only what is cached: a full read
			 * is a hit, counted exactly; else read as usual. */
			struct iovec iov = { wk->buf, READ_PAGE };

			n = preadv2(x->kfd, &iov, 1, (off_t)off, RWF_NOWAIT);
			if (n == READ_PAGE) {
				wk->nowait_hits++;
				break;
			}
		}
		n = pread(seq ? x->kfd_seq : x->kfd, wk->buf, READ_PAGE, (off_t)off);
		if (unlikely(n != READ_PAGE))
			return read_fail(wk, n < 0 ? errno : EIO, page);
		break;
	case RV_MMAP:
		memcpy(wk->buf, (seq ? x->map_seq : x->map) + off, READ_PAGE);
		break;
	case RV_DIRECT:
		n = pread(x->dfd, wk->buf, READ_PAGE, (off_t)off);
		if (unlikely(n != READ_PAGE))
			return read_fail(wk, n < 0 ? errno : EIO, page);
		break;
	case RV_NR:
		break;
	}
	/* datafile.c stamps every 4 KiB block with its number. */
	if (unlikely(*(const uint64_t *)wk->buf != page))
		return read_fail(wk, EILSEQ, page);
	return 0;
}

static inline uint32_t next_page(const struct rctx *x, struct rworker *wk,
				 enum read_variant v)
{
	if (x->w == RW_UNIFORM || x->w == RW_DEVICE)
		return rng_below(&wk->rng[v], x->nr_pages);
	return zipf_page(&x->zipf, rng_unit(&wk->rng[v]));
}

static __attribute__((noinline)) uint64_t
loop_random(const struct rctx *x, struct rworker *wk, enum read_variant v,
	    const _Atomic unsigned *stop)
{
	uint64_t ops = 0;

	do {
		for (unsigned i = 0; i < READ_BATCH; i++)
			if (unlikely(read_one(x, wk, v, false, next_page(x, wk, v))))
				return ops;
		ops += READ_BATCH;
	} while (!atomic_load_explicit(stop, memory_order_relaxed));
	return ops;
}

static __attribute__((noinline)) uint64_t
loop_scan(struct rctx *x, struct rworker *wk, enum read_variant v,
	  const _Atomic unsigned *stop)
{
	uint64_t ops = 0;

	do {
		for (unsigned i = 0; i < READ_BATCH; i++) {
			uint32_t page = (uint32_t)(x->scan_pos[v]++ % x->nr_pages);

			if (unlikely(read_one(x, wk, v, true, page)))
				return ops;
		}
		ops += READ_BATCH;
	} while (!atomic_load_explicit(stop, memory_order_relaxed));
	return ops;
}

/* The probe: one thread; each lpc_pread timed alone and classified by the
 * change in lpc_stats it caused (exact: nothing else runs). */
static __attribute__((noinline)) uint64_t
loop_probe(const struct rctx *x, struct rworker *wk, const _Atomic unsigned *stop)
{
	struct lpc_stats a, b;
	uint64_t ops = 0;

	lpc_stats(x->cache, &a);
	do {
		uint32_t page = next_page(x, wk, RV_PROBE);
		uint64_t t0 = tsc_begin(), t;

		if (unlikely(read_one(x, wk, RV_PROBE, false, page)))
			return ops;
		t = tsc_end() - t0;
		lpc_stats(x->cache, &b);
		if (b.read_around != a.read_around) {
			wk->ra_ticks += t;
			wk->ra_n++;
		} else if (b.misses != a.misses) {
			wk->miss_ticks += t;
			wk->miss_n++;
		} else {
			wk->hit_ticks += t;
			wk->hit_n++;
		}
		a = b;
		ops++;
	} while (!atomic_load_explicit(stop, memory_order_relaxed));
	return ops;
}

/* This thread's time on a CPU and runnable waiting for one
 * (/proc/thread-self/schedstat), in ns; zeroes where it cannot be read. */
static void thread_sched(uint64_t *run, uint64_t *runq)
{
	unsigned long long a = 0, b = 0;
	FILE *fp = fopen("/proc/thread-self/schedstat", "r");

	if (fp) {
		if (fscanf(fp, "%llu %llu", &a, &b) != 2)
			a = b = 0;
		fclose(fp);
	}
	*run = a;
	*runq = b;
}

static uint64_t read_slice_fn(unsigned id, void *arg, const _Atomic unsigned *stop)
{
	struct rctx *x = arg;
	struct rworker *wk = &x->wk[id];
	bool seq = x->w == RW_SCAN && id == x->readers;
	uint64_t io0 = thread_read_bytes(&wk->iofd), flt0 = thread_majflt();
	uint64_t ops, run0 = 0, runq0 = 0;

	if (seq)
		thread_sched(&run0, &runq0);
	wk->err = 0;
	wk->nowait_hits = wk->find_hits = 0;
	wk->hit_ticks = wk->miss_ticks = wk->ra_ticks = 0;
	wk->hit_n = wk->miss_n = wk->ra_n = 0;
	if (x->v == RV_PROBE)
		ops = loop_probe(x, wk, stop);
	else if (seq)
		ops = loop_scan(x, wk, x->v, stop);
	else
		ops = loop_random(x, wk, x->v, stop);
	wk->reads = ops;
	wk->io_bytes = thread_read_bytes(&wk->iofd) - io0;
	wk->majflt = thread_majflt() - flt0;
	if (seq) {
		thread_sched(&wk->run_ns, &wk->runq_ns);
		wk->run_ns -= run0;
		wk->runq_ns -= runq0;
	}
	return ops;
}

/* Runs the current (w, v, readers) slice on this process's pool and sums the
 * workers into *s.  Return: 0, or the first worker's error (in *page). */
static int run_local(struct rctx *x, uint64_t slice_ns, struct read_sample *s,
		     uint32_t *page)
{
	unsigned active = x->readers + (x->w == RW_SCAN);

	memset(s, 0, sizeof(*s));
	pool_run(x->pool, active, read_slice_fn, x, slice_ns, &s->ps);
	for (unsigned i = 0; i < active; i++) {
		const struct rworker *wk = &x->wk[i];

		if (wk->err) {
			*page = wk->err_page;
			return wk->err;
		}
		if (x->w == RW_SCAN && i == x->readers) {
			s->scan_reads += wk->reads;
			s->scan_io_bytes += wk->io_bytes;
			s->scan_run_ns += wk->run_ns;
			s->scan_runq_ns += wk->runq_ns;
			continue;
		}
		s->reads += wk->reads;
		s->io_bytes += wk->io_bytes;
		s->majflt += wk->majflt;
		s->nowait_hits += wk->nowait_hits;
		s->find_hits += wk->find_hits;
		s->hit_ticks += wk->hit_ticks;
		s->miss_ticks += wk->miss_ticks;
		s->ra_ticks += wk->ra_ticks;
		s->hit_n += wk->hit_n;
		s->miss_n += wk->miss_n;
		s->ra_n += wk->ra_n;
	}
	return 0;
}

/* ---- the child: kernel and mmap rows inside the memory cgroup ---- */

static unsigned char *map_file(int fd, uint64_t len, int advice)
{
	void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);

	if (m == MAP_FAILED)
		die_err(errno, "mmap of the data file");
	if (madvise(m, len, advice))
		die_err(errno, "madvise of the data file");
	return m;
}

static void child_open(struct rctx *x)
{
	int rc;

	x->kfd = open(x->df.path, O_RDONLY | O_CLOEXEC);
	x->kfd_seq = open(x->df.path, O_RDONLY | O_CLOEXEC);
	if (x->kfd < 0 || x->kfd_seq < 0)
		die_err(errno, "opening %s", x->df.path);
	/* Random readers: no readahead; the sequential one: the most. */
	rc = posix_fadvise(x->kfd, 0, 0, POSIX_FADV_RANDOM);
	if (!rc)
		rc = posix_fadvise(x->kfd_seq, 0, 0, POSIX_FADV_SEQUENTIAL);
	if (rc)
		die_err(rc, "posix_fadvise on %s", x->df.path);
	x->map = map_file(x->kfd, x->file_bytes, MADV_RANDOM);
	x->map_seq = map_file(x->kfd_seq, x->file_bytes, MADV_SEQUENTIAL);
}

/* Drops the file from the page cache: unmapped first, or mapped pages stay. */
static void child_reset(struct rctx *x)
{
	munmap(x->map, x->file_bytes);
	munmap(x->map_seq, x->file_bytes);
	posix_fadvise(x->kfd, 0, 0, POSIX_FADV_DONTNEED);
	x->map = map_file(x->kfd, x->file_bytes, MADV_RANDOM);
	x->map_seq = map_file(x->kfd_seq, x->file_bytes, MADV_SEQUENTIAL);
}

/* The child's commands (kchild_serve). */
static void child_serve(void *arg, const void *cmd, void *res)
{
	struct rctx *x = arg;
	const struct child_cmd *c = cmd;
	struct child_res *r = res;

	if (!c)
		return;
	switch (c->op) {
	case CMD_SETUP:
		/* Only now, inside the cgroup: the pool's stacks and every page
		 * read are charged to it. */
		child_open(x);
		x->pool = pool_create(x->nr_workers, x->env->opts->pin);
		break;
	case CMD_RUN:
		x->w = (enum read_workload)c->w;
		x->v = (enum read_variant)c->v;
		x->readers = c->threads;
		r->err = run_local(x, c->slice_ns, &r->s, &r->err_page);
		break;
	case CMD_RESET:
		child_reset(x);
		break;
	}
}

static struct child_res child_call(struct rctx *x, const struct child_cmd *c)
{
	struct child_res r;

	kchild_call(&x->kc, c, &r);
	return r;
}

/* Forks the child before this process starts any thread of its own.  A plain
 * fork, not an exec (kchild.h): the kernel and mmap rows never call lpc, so
 * the liburcu state it copies from `lpcbench all`'s earlier benchmarks is
 * never used. */
static void child_start(struct rctx *x, const char *name)
{
	struct child_cmd c = { .op = CMD_SETUP };
	struct kchild_spec s = {
		.what = "read: the kernel rows", .cg_name = name, .cg_limit = x->cache_bytes,
		.cmd_len = sizeof(struct child_cmd), .res_len = sizeof(struct child_res),
		.serve = child_serve, .arg = x,
	};

	x->have_cg = !kchild_start(&x->kc, &s);
	if (x->have_cg)
		child_call(x, &c);
}

static void child_stop(struct rctx *x)
{
	kchild_stop(&x->kc);
}

/* ---- setup ---- */

static void lpc_open_one(struct rctx *x, int policy, struct lpc_cache **cache,
			 struct lpc_file **lf)
{
	struct lpc_config cfg;
	int rc;

	lpc_config_init(&cfg);
	cfg.cache_bytes = x->cache_bytes;
	cfg.page_size = READ_PAGE; /* a page number is an lpc page index */
	cfg.io_backend = LPC_IO_SYNC;
	cfg.lookup_mode = LPC_LOOKUP_LOCKLESS;
	cfg.reclaim_policy = policy;
	rc = lpc_cache_create(&cfg, cache);
	if (rc)
		die_err(-rc, "lpc_cache_create (%" PRIu64 " MiB)", x->cache_bytes >> 20);
	rc = lpc_file_open(*cache, x->df.path, O_RDONLY, 0, lf);
	if (rc)
		die_err(-rc, "lpc_file_open %s", x->df.path);
}

/* lpc's cache with --policy's policy; with both, lpc_clock's too. */
static void lpc_open(struct rctx *x)
{
	unsigned p = x->env->opts->policy;

	lpc_open_one(x, p == BENCH_POLICY_CLOCK ? LPC_RECLAIM_CLOCK : LPC_RECLAIM_CLOCK2,
		     &x->cache, &x->lf);
	if (p == BENCH_POLICY_BOTH)
		lpc_open_one(x, LPC_RECLAIM_CLOCK, &x->cache_clk, &x->lf_clk);
}

static void lpc_close_one(struct lpc_cache **cache, struct lpc_file **lf)
{
	int rc;

	if (!*cache)
		return;
	rc = lpc_file_close(*lf);
	if (rc)
		die_err(-rc, "lpc_file_close");
	rc = lpc_cache_destroy(*cache);
	if (rc)
		die_err(-rc, "lpc_cache_destroy");
	*cache = NULL;
	*lf = NULL;
}

static void lpc_close(struct rctx *x)
{
	lpc_close_one(&x->cache, &x->lf);
	lpc_close_one(&x->cache_clk, &x->lf_clk);
}

/* The lpc cache a variant reads through; NULL for the others. */
static struct lpc_cache *row_cache(const struct rctx *x, enum read_variant v)
{
	return v == RV_LPC_CLOCK ? x->cache_clk : read_is_lpc(v) ? x->cache : NULL;
}

/* The rows of every round, phase by phase, thread count by thread count. */
static void build_rows(struct read_results *res, const struct bench_opts *o, bool cg)
{
	static const enum read_variant main_v[] = { RV_LPC, RV_LPC_CLOCK, RV_KERNEL,
						    RV_MMAP, RV_DIRECT };
	static const enum read_variant scan_v[] = { RV_LPC, RV_LPC_CLOCK, RV_KERNEL };
	struct read_row *r = xcalloc(2 + 2 * (o->nr_tconf * 5 + 1) + o->nr_tconf * 3,
				     sizeof(*r));
	bool both = o->policy == BENCH_POLICY_BOTH;
	unsigned n = 0;

	r[n++] = (struct read_row){ RW_DEVICE, RV_DIRECT, 1, false };
	r[n++] = (struct read_row){ RW_DEVICE, RV_DIRECT, READ_QD_DEEP, false };
	for (enum read_workload w = RW_UNIFORM; w <= RW_ZIPF; w++) {
		for (unsigned t = 0; t < o->nr_tconf; t++)
			for (unsigned i = 0; i < ARRAY_SIZE(main_v); i++)
				if (main_v[i] != RV_LPC_CLOCK || both)
					r[n++] = (struct read_row){ w, main_v[i], o->threads[t],
						(main_v[i] == RV_KERNEL || main_v[i] == RV_MMAP) && !cg };
		r[n++] = (struct read_row){ w, RV_PROBE, 1, false };
	}
	for (unsigned t = 0; t < o->nr_tconf; t++)
		for (unsigned i = 0; i < ARRAY_SIZE(scan_v); i++)
			if (scan_v[i] != RV_LPC_CLOCK || both)
				r[n++] = (struct read_row){ RW_SCAN, scan_v[i], o->threads[t],
							    scan_v[i] == RV_KERNEL && !cg };
	res->rows = r;
	res->nr_rows = n;
}

static double read_estimate_s(const struct bench_opts *o)
{
	/* Rows per round: 2 device + 2 x (4 per thread count + probe) + 2
	 * per thread count of scan-mix, one more per thread count and
	 * workload for lpc_clock with --policy both; plus the warm-up caps
	 * (three phases, two or three caches). */
	double both = o->policy == BENCH_POLICY_BOTH;
	double slices = 2 + 2 * ((4.0 + both) * o->nr_tconf + 1) + (2.0 + both) * o->nr_tconf;

	return (o->warmup + o->rounds) * slices * o->slice_ms / 1000.0 +
	       3 * (2 + both) * READ_WARM_CAP_S / 2;
}

static void read_check_opts(const struct bench_opts *o)
{
	uint64_t file = bench_file_bytes(o), cache = (uint64_t)o->cache_mb << 20;

	if (file / READ_PAGE < 2 || file / READ_PAGE > UINT32_MAX)
		die("read: a file of %" PRIu64 " MiB: need 2 to 2^32 pages of 4 KiB", file >> 20);
	if (cache >= file)
		die("read: --cache-mb %u is not smaller than the file (%" PRIu64 " MiB): nothing to measure",
		    o->cache_mb, file >> 20);
	if (bench_max_threads(o) + 1 > BENCH_MAX_THREADS)
		die("read: too many threads");
}

static void read_echo(const struct rctx *x, const struct read_results *res)
{
	const struct bench_opts *o = x->env->opts;
	uint32_t hot = (uint32_t)(x->cache_bytes / READ_PAGE);

	printf("read: random 4 KiB reads of a file %.1fx the cache, lpc against the kernel at equal memory\n",
	       (double)x->file_bytes / (double)x->cache_bytes);
	printf("  file       %" PRIu64 " MiB = %" PRIu32 " pages of 4 KiB, in %s/ (%s)%s\n",
	       x->file_bytes >> 20, x->nr_pages, x->df.dir, x->df.fstype,
	       x->df.tmpfs ? "; tmpfs: no O_DIRECT, lpc and direct read buffered" : "");
	printf("  memory     %" PRIu64 " MiB: lpc's frames; the kernel's page cache for kernel and mmap\n",
	       x->cache_bytes >> 20);
	if (res->memcg)
		printf("             kernel/mmap: one child process in memory cgroup v%d %s, limit %" PRIu64 " MiB%s\n",
		       res->memcg_version, x->kc.cg.path, x->cache_bytes >> 20,
		       x->kc.cg.parent_limit < (x->cache_bytes + (64ull << 20)) ?
		       " (WARNING: the enclosing group's limit is barely higher)" : "");
	else
		printf("             kernel/mmap: SKIPPED: no writable memory cgroup (%s)\n",
		       res->memcg_why);
	printf("  policy     %s\n",
	       o->policy == BENCH_POLICY_CLOCK ? "clock: lpc evicts with LPC_RECLAIM_CLOCK (plain CLOCK)" :
	       o->policy == BENCH_POLICY_BOTH ?
	       "both: lpc evicts with LPC_RECLAIM_CLOCK2 (inactive/active), lpc_clock, a second\n"
	       "             cache of the same size, with LPC_RECLAIM_CLOCK (plain CLOCK); side by side" :
	       "clock2: lpc evicts with LPC_RECLAIM_CLOCK2 (CLOCK with an inactive/active split)");
	printf("  zipf       theta %.2f, Gray et al.; ranks permuted over the file (seed %" PRIu64 "); the %u hottest pages (a cache's worth) get %.1f%% of the reads\n",
	       o->zipf_theta, o->seed, hot, 100 * zipf_top_share(&x->zipf, hot));
	printf("  rows       device: direct at queue depth 1 and %u (threads)\n", READ_QD_DEEP);
	printf("             uniform, zipf: lpc,%s kernel, mmap, direct at each thread count, then lpc_probe (1 thread)\n",
	       o->policy == BENCH_POLICY_BOTH ? " lpc_clock," : "");
	printf("             scan-mix: lpc,%s kernel: T Zipf readers + 1 sequential reader of the whole file\n",
	       o->policy == BENCH_POLICY_BOTH ? " lpc_clock," : "");
	printf("  phases     each workload from cold caches, warmed by its own reads until full (lpc: its first\n"
	       "             eviction or read-around; cap %.0f s per cache; scan-mix by its Zipf readers alone),\n"
	       "             then %u warm-up and %u measured rounds of %u ms slices\n",
	       READ_WARM_CAP_S, o->warmup, o->rounds, o->slice_ms);
	printf("  hits       storage bytes per reader thread (/proc/thread-self/io read_bytes; readahead off):\n"
	       "             a read that fetched nothing hit; lpc rows also lpc_stats (hits, evictions,\n"
	       "             direct reclaims), mmap rows also major faults\n");
	fflush(stdout);
}

/* ns per page-number draw, uniform and Zipf (printed: it is in every loop). */
static void time_draws(const struct rctx *x, double *uni, double *zipf)
{
	uint64_t s = 12345, sum = 0, t0;
	const unsigned n = 1u << 20;

	t0 = now_ns();
	for (unsigned i = 0; i < n; i++)
		sum += rng_below(&s, x->nr_pages);
	*uni = (double)(now_ns() - t0) / n;
	t0 = now_ns();
	for (unsigned i = 0; i < n; i++)
		sum += zipf_page(&x->zipf, rng_unit(&s));
	*zipf = (double)(now_ns() - t0) / n;
	if (sum == 42)
		printf(" ");
}

static void read_setup(struct rctx *x, struct read_results *res)
{
	const struct bench_opts *o = x->env->opts;
	char name[64];
	uint64_t avail = 0, need;
	double t_uni, t_zipf;
	FILE *f;

	x->cache_bytes = (uint64_t)o->cache_mb << 20;
	x->file_bytes = bench_file_bytes(o);
	x->nr_pages = (uint32_t)(x->file_bytes / READ_PAGE);
	x->nr_workers = bench_max_threads(o) + 1;
	if (x->nr_workers < READ_QD_DEEP)
		x->nr_workers = READ_QD_DEEP;
	res->cache_bytes = x->cache_bytes;
	res->file_bytes = x->file_bytes;
	res->policy = o->policy;
	res->page_size = READ_PAGE;

	f = fopen("/proc/meminfo", "r");
	if (f) {
		char line[128];
		unsigned long long kib;

		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
				avail = (uint64_t)kib << 10;
		fclose(f);
	}
	/* lpc's cache (two with --policy both) and the kernel's */
	need = (o->policy == BENCH_POLICY_BOTH ? 3 : 2) * x->cache_bytes + ((uint64_t)256 << 20);
	if (avail && need > avail)
		die("read needs about %" PRIu64 " MiB of memory (lpc's caches and the kernel's), %" PRIu64 " MiB are available: lower --cache-mb",
		    need >> 20, avail >> 20);

	datafile_choose(o->dir, &x->df);
	progress("read: ranking %u pages for Zipf", x->nr_pages);
	zipf_init(&x->zipf, x->nr_pages, o->zipf_theta, o->seed);
	progress_done();
	progress("read: writing %" PRIu64 " MiB to %s", x->file_bytes >> 20, x->df.dir);
	datafile_create(&x->df, x->file_bytes);
	progress_done();
	/* Just written: in the page cache, charged to this process's group,
	 * outside the limit.  Drop it, and check. */
	datafile_drop(&x->df);

	x->wk = xaligned_alloc(BENCH_CACHELINE, x->nr_workers * sizeof(*x->wk));
	memset(x->wk, 0, x->nr_workers * sizeof(*x->wk));
	for (unsigned i = 0; i < x->nr_workers; i++) {
		x->wk[i].buf = xaligned_alloc(READ_PAGE, READ_PAGE);
		x->wk[i].iofd = -1;
		for (unsigned v = 0; v < RV_NR; v++)
			x->wk[i].rng[v] = splitmix64(o->seed * 1000003u + i * 64u + v);
	}
	snprintf(name, sizeof(name), "lpcbench.%d", (int)getpid());
	child_start(x, name);
	res->memcg = x->have_cg;
	res->memcg_version = x->kc.cg.version;
	snprintf(res->memcg_why, sizeof(res->memcg_why), "%s", x->kc.cg.why);
	build_rows(res, o, x->have_cg);

	read_echo(x, res);
	x->dfd = datafile_open_direct(&x->df, O_RDONLY);
	x->pool = pool_create(x->nr_workers, o->pin);
	time_draws(x, &t_uni, &t_zipf);
	printf("  draws      %.1f ns per uniform page number, %.1f ns per Zipf one, inside every timed loop\n",
	       t_uni, t_zipf);
	printf("  page cache %" PRIu64 " of the file's pages resident after the drop (want 0)\n",
	       datafile_resident_pages(&x->df));
	printf("  workers    %u here (%u pinned), %s in the cgroup's process\n\n",
	       x->nr_workers, pool_pinned(x->pool), x->have_cg ? "as many" : "none");
	fflush(stdout);
}

static void read_teardown(struct rctx *x)
{
	child_stop(x);
	if (x->cache)
		lpc_close(x);
	pool_destroy(x->pool);
	close(x->dfd);
	for (unsigned i = 0; i < x->nr_workers; i++) {
		free(x->wk[i].buf);
		if (x->wk[i].iofd >= 0)
			close(x->wk[i].iofd);
	}
	free(x->wk);
	zipf_destroy(&x->zipf);
	datafile_remove();
}

/* ---- measuring ---- */

static void run_row(struct rctx *x, const struct read_row *row, uint64_t slice_ns,
		    struct read_sample *s)
{
	struct lpc_cache *cache = row_cache(x, row->v);
	struct lpc_stats a, b;
	uint32_t page = 0;
	int err;

	if (row->v == RV_KERNEL || row->v == RV_MMAP) {
		struct child_cmd c = { CMD_RUN, row->w, row->v, row->threads, slice_ns };
		struct child_res r = child_call(x, &c);

		*s = r.s;
		err = r.err;
		page = r.err_page;
	} else {
		x->w = row->w;
		x->v = row->v;
		x->readers = row->threads;
		if (cache)
			lpc_stats(cache, &a);
		err = run_local(x, slice_ns, s, &page);
		if (cache) {
			/* All of the cache's threads, its reclaimer included */
			lpc_stats(cache, &b);
			s->hits = b.hits - a.hits;
			s->misses = b.misses - a.misses;
			s->read_around = b.read_around - a.read_around;
			s->evictions = b.evictions - a.evictions;
			s->direct_reclaims = b.direct_reclaims - a.direct_reclaims;
			s->frames_free = b.frames_free;
			s->ns_alloc = b.miss_ns_alloc - a.miss_ns_alloc;
			s->ns_evict = b.miss_ns_evict - a.miss_ns_evict;
			s->ns_insert = b.miss_ns_insert - a.miss_ns_insert;
			s->ns_read = b.miss_ns_read - a.miss_ns_read;
		}
	}
	if (err)
		die_err(err, "read %s: %s with %u threads: reading page %" PRIu32 "%s",
			read_workload_name[row->w], read_variant_name[row->v],
			row->threads, page,
			err == EILSEQ ? " returned another page's bytes" : "");
}

static void csv_sample(const struct bench_env *env, unsigned round,
		       const struct read_row *row, const struct read_sample *s)
{
	char var[48];
	struct csv_key k = { "read", round + 1, row->threads, var, NULL };
	const struct {
		const char *m;
		uint64_t v;
	} f[] = {
		{ "reads", s->reads }, { "io_bytes", s->io_bytes }, { "majflt", s->majflt },
		{ "scan_reads", s->scan_reads }, { "scan_io_bytes", s->scan_io_bytes },
		{ "scan_run_ns", s->scan_run_ns }, { "scan_runq_ns", s->scan_runq_ns },
		{ "lpc_hits", s->hits }, { "lpc_misses", s->misses },
		{ "lpc_read_around", s->read_around }, { "kernel_nowait_hits", s->nowait_hits },
		{ "lpc_find_hits", s->find_hits },
		{ "lpc_evictions", s->evictions }, { "lpc_direct_reclaims", s->direct_reclaims },
		{ "wall_ns", s->ps.wall_ns }, { "ticks", s->ps.ticks }, { "cpu_ns", s->ps.cpu_ns },
		{ "probe_hit_ticks", s->hit_ticks }, { "probe_hits", s->hit_n },
		{ "probe_miss_ticks", s->miss_ticks }, { "probe_misses", s->miss_n },
		{ "probe_ra_ticks", s->ra_ticks }, { "probe_read_around", s->ra_n },
	};

	if (!env->csv)
		return;
	snprintf(var, sizeof(var), "%s/%s", read_workload_name[row->w],
		 read_variant_name[row->v]);
	for (size_t i = 0; i < ARRAY_SIZE(f); i++) {
		if (i >= 14 && row->v != RV_PROBE) /* the probe's own */
			break;
		k.metric = f[i].m;
		csv_raw(env->csv, &k, (double)f[i].v);
	}
}

/*
 * Warms lpc cache v's with the phase's workload at the most threads until it
 * is full: it evicted a page or read one around (a full cache evicts, and
 * with eviction its free frames need not reach 0), or READ_WARM_CAP_S passed.
 */
static void warm_lpc(struct rctx *x, enum read_workload w, enum read_variant v,
		     uint64_t *frames, uint64_t *free, uint64_t *evictions)
{
	struct read_row row = { w, v, bench_max_threads(x->env->opts), false };
	struct lpc_cache *cache = row_cache(x, v);
	struct read_sample s;
	struct lpc_stats st;
	uint64_t t;

	progress("read %s: warming %s's cache", read_workload_name[w], read_variant_name[v]);
	for (t = now_ns(); (double)(now_ns() - t) / 1e9 < READ_WARM_CAP_S;) {
		run_row(x, &row, READ_WARM_SLICE_NS, &s);
		lpc_stats(cache, &st);
		if (st.evictions || st.read_around)
			break;
	}
	lpc_stats(cache, &st);
	*frames = st.frames;
	*free = st.frames_free;
	*evictions = st.evictions;
}

/*
 * Warms the phase's caches with its own workload at the most threads, until
 * each is full or READ_WARM_CAP_S passed: lpc's (and lpc_clock's) as
 * warm_lpc says, the kernel's when its cgroup is READ_WARM_FULL of its limit.
 */
static double warm(struct rctx *x, enum read_workload w, struct read_phase_end *e)
{
	const struct bench_opts *o = x->env->opts;
	struct read_row row;
	struct read_sample s;
	uint64_t t0 = now_ns(), t;

	/* scan-mix measures whether a scan flushes a hot set: the hot set is
	 * there first (the Zipf readers alone fill each cache), then the
	 * scanner starts.  Warmed with the scanner running, the cache would be
	 * full of the scan within half a second, and the rounds would measure
	 * how fast the readers learn the hot set behind it, not whether the
	 * scan takes it away. */
	if (w == RW_SCAN)
		w = RW_ZIPF;
	row = (struct read_row){ w, RV_KERNEL, bench_max_threads(o), false };

	warm_lpc(x, w, RV_LPC, &e->lpc_frames, &e->lpc_free, &e->lpc_evictions);
	if (x->cache_clk)
		warm_lpc(x, w, RV_LPC_CLOCK, &e->clk_frames, &e->clk_free, &e->clk_evictions);
	if (x->have_cg) {
		progress("read %s: warming the kernel's page cache", read_workload_name[w]);
		for (t = now_ns(); (double)(now_ns() - t) / 1e9 < READ_WARM_CAP_S;) {
			run_row(x, &row, READ_WARM_SLICE_NS, &s);
			if ((double)memcg_usage(&x->kc.cg) >= READ_WARM_FULL * (double)x->cache_bytes)
				break;
		}
	}
	progress_done();
	return (double)(now_ns() - t0) / 1e9;
}

static void run_phase(struct rctx *x, enum read_workload w, struct read_results *res,
		      uint64_t *t_start, double est)
{
	const struct bench_opts *o = x->env->opts;
	uint64_t slice_ns = (uint64_t)o->slice_ms * 1000000u;
	unsigned total = o->warmup + o->rounds;
	struct read_phase_end *e = &res->end[w];

	e->ran = true;
	if (w != RW_DEVICE) {
		struct child_cmd c = { .op = CMD_RESET };

		lpc_open(x);
		if (x->have_cg)
			child_call(x, &c);
		e->warm_s = warm(x, w, e);
	}
	for (unsigned r = 0; r < total; r++) {
		bool warmup = r < o->warmup;
		double el = (double)(now_ns() - *t_start) / 1e9;

		progress("read %s: %s round %u/%u, ~%.0f s left", read_workload_name[w],
			 warmup ? "warm-up" : "measured", warmup ? r + 1 : r - o->warmup + 1,
			 warmup ? o->warmup : o->rounds, est > el ? est - el : 0);
		for (unsigned i = 0; i < res->nr_rows; i++) {
			const struct read_row *row = &res->rows[i];
			struct read_sample s, *dst;

			if (row->w != w || row->skip)
				continue;
			dst = warmup ? &s : read_sample(res, r - o->warmup, i);
			run_row(x, row, slice_ns, dst);
			if (!warmup)
				csv_sample(x->env, r - o->warmup, row, dst);
		}
	}
	progress_done();
	if (x->have_cg) {
		e->cg_usage = memcg_usage(&x->kc.cg);
		e->cg_file = memcg_stat(&x->kc.cg, x->kc.cg.version == 1 ? "cache" : "file");
		e->cg_anon = memcg_stat(&x->kc.cg, x->kc.cg.version == 1 ? "rss" : "anon");
	}
	if (x->cache) {
		struct lpc_stats st = { 0 }; /* a library before 0.3 fills fewer fields */

		lpc_stats(x->cache, &st);
		e->ra_pages = st.ra_pages;
		e->ra_used = st.ra_used;
		e->ra_wasted = st.ra_wasted;
		e->ra_dropped = st.ra_dropped;
		e->evictions = st.evictions;
		e->ra_windows = st.ra_windows;
		e->ra_async = st.ra_async;
		e->reads = st.reads;
		e->read_pages = st.read_pages;
		e->alloc_failures = st.alloc_failures;
		lpc_close(x);
	}
}

static void read_run(const struct bench_env *env)
{
	const struct bench_opts *o = env->opts;
	struct rctx x = { .env = env, .dfd = -1, .kfd = -1, .kfd_seq = -1 };
	struct read_results res = { .rounds = o->rounds };
	uint64_t t0;

	read_setup(&x, &res);
	res.s = xcalloc((size_t)o->rounds * res.nr_rows, sizeof(*res.s));
	t0 = now_ns();
	for (enum read_workload w = 0; w < RW_NR; w++)
		run_phase(&x, w, &res, &t0, read_estimate_s(o));
	printf("measured in %.1f s\n\n", (double)(now_ns() - t0) / 1e9);
	read_teardown(&x);
	read_report(env, &res);
	free(res.s);
	free(res.rows);
}

const struct bench bench_read = {
	.name = "read",
	.help = "random 4 KiB reads of a file 4x the cache (uniform, Zipf, scan-mix): lpc\n"
		"           against the kernel's page cache and mmap in a memory cgroup of the\n"
		"           same size, and O_DIRECT; the device's IOPS at queue depth 1 and 32",
	.run = read_run,
	.check_opts = read_check_opts,
	.estimate_s = read_estimate_s,
};
