/* SPDX-License-Identifier: MIT */
/*
 * scan.c - the scan benchmark: a cold sequential pass over a file 4x the
 * cache, through lpc (io_uring and sync backends) and through the kernel's
 * page cache confined to the same memory, beside the device's own sequential
 * bandwidth (O_DIRECT 1 MiB reads).
 *
 * Rows.  For each scanner count (--threads if given, else 1 and 2) and each
 * call size (--calls if given, else 4 KiB, 16 KiB, 128 KiB): lpc_uring and lpc_sync (lpc_pread
 * through a cache of --cache-mb on LPC_IO_URING, LPC_IO_SYNC; readahead with
 * the library's defaults), kernel (buffered pread(2), default readahead: no
 * posix_fadvise, each scanner its own descriptor as separate programs would
 * have); then direct_1m, one thread reading the whole file with O_DIRECT in
 * 1 MiB calls: the device's sequential bandwidth, the ceiling.  --variants
 * keeps only the rows named (lpc_uring, lpc_sync, kernel, direct_1m): with
 * --calls, many rounds of the few rows a question is about fit in the time
 * one round of all 19 takes.
 *
 * Scanners.  With S scanners, scanner i reads its own 1/S of the file from its
 * start to its end (the last takes the remainder): S concurrent sequential
 * streams on one file, which lpc's readahead must tell apart (one lpc_file
 * for all of them; the kernel's readahead state is per descriptor).  A pass
 * is over when every scanner has read its part; MB/s is the file's bytes
 * over that wall time (10^6 bytes per MB).
 *
 * Cold.  Before every pass, outside its timing: for a kernel row the file is
 * dropped from the kernel's page cache (posix_fadvise DONTNEED) right before
 * the pass (lpc and direct_1m read with O_DIRECT, which the page cache serves
 * nothing; run_row says why not before every row), and for an lpc row the
 * file's pages are dropped from that lpc cache (lpc_fadvise DONTNEED, again
 * while a page read ahead by the last pass is still in flight, then a wait of
 * up to SCAN_FREE_WAIT_MS for the frames to be back on the free lists: they
 * are freed after an RCU grace period).  The file's pages still resident in
 * the page cache (mincore) before a kernel pass, and in lpc and lpc's free
 * frames before an lpc pass, are recorded and printed: the passes were cold.
 *
 * Equal memory.  The kernel rows run in a forked child in a memory cgroup
 * limited to --cache-mb (kchild.h, memcg.h): the memory controller charges a
 * page to the process that reads it in.  Without a writable memory cgroup
 * they are skipped and the run says why.
 *
 * Rounds.  Every round runs every row once (lpc_uring, lpc_sync and kernel
 * side by side at each scanner count and call size, direct_1m last; odd
 * rounds, counting from 0, in the reverse order, so that no row always runs
 * first, or always right after another row's pass), so every ratio is taken
 * within one round, minutes apart at most; --warmup rounds first, not
 * recorded.  CPU time is the scanning
 * process's (CLOCK_PROCESS_CPUTIME_ID around the pass): for lpc that
 * includes its background threads, for the kernel the work done in the
 * reading threads (completion interrupts are charged to nobody).
 *
 * Every block read is checked: each 4 KiB block of the file starts with its
 * number (datafile.h); a mismatch or short read ends the run with status 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <lpc/lpc.h>

#include "harness/datafile.h"
#include "harness/kchild.h"
#include "harness/memcg.h"
#include "harness/pool.h"
#include "harness/util.h"
#include "lpcbench/benches.h"
#include "scan.h"

#define SCAN_BLOCK 4096u               /* the datafile's stamp unit */
#define SCAN_DIRECT_CALL (1u << 20)    /* direct_1m's read size */
#define SCAN_HUGE (2u << 20)           /* a worker's buffer: one huge page */
#define SCAN_DEF_CACHE_MB 64           /* without --cache-mb: file 256 MiB */
#define SCAN_DEF_ROUNDS 11             /* without --rounds */
#define SCAN_DEF_SCANNERS_1 1          /* without --threads: 1 and 2 */
#define SCAN_DEF_SCANNERS_2 2
#define SCAN_FREE_WAIT_MS 2000         /* lpc's frames back after DONTNEED: */
#define SCAN_FREE_NEAR 0.98            /* ... nearly all, steady this long, */
#define SCAN_FREE_STEADY_MS 20
#define SCAN_FREE_STALL_MS 300         /* ... or none for this long; the most */
#define SCAN_EST_MB_S 1000.0           /* the config echo's guess of a pass's
					* speed, for its estimate only */

struct sworker {
	alignas(BENCH_CACHELINE) unsigned char *buf; /* SCAN_DIRECT_CALL, aligned */
	int kfd;      /* the child: this scanner's own descriptor */
	int err;      /* the last pass: 0 or a positive errno (EILSEQ: bad bytes) */
	uint64_t err_off;
};

/* Parent -> child commands, child -> parent results (pipes, < PIPE_BUF). */
enum { SCMD_SETUP, SCMD_RUN };

struct scan_cmd {
	int op;
	int v;
	unsigned scanners;
	uint32_t call;
};

struct scan_res {
	int err;
	uint64_t err_off;
	struct scan_sample s;
};

struct sctx {
	const struct bench_env *env;
	struct datafile df;
	uint64_t file_bytes, cache_bytes;
	unsigned nr_workers;
	struct sworker *wk;
	struct pool *pool;
	/* parent */
	struct lpc_cache *cache[2]; /* [SV_URING], [SV_SYNC] */
	struct lpc_file *lf[2];
	int dfd; /* O_DIRECT (buffered on tmpfs) */
	/* the pass being run */
	enum scan_variant v;
	unsigned scanners;
	uint32_t call;
	/* the kernel side */
	struct kchild kc;
	bool have_cg;
};

static unsigned scan_rounds(const struct bench_opts *o)
{
	return o->rounds_set ? o->rounds : SCAN_DEF_ROUNDS;
}

static uint64_t scan_cache_bytes(const struct bench_opts *o)
{
	return (uint64_t)(o->cache_mb_set ? o->cache_mb : SCAN_DEF_CACHE_MB) << 20;
}

static uint64_t scan_file_bytes(const struct bench_opts *o)
{
	return o->file_mb_set ? (uint64_t)o->file_mb << 20 : 4 * scan_cache_bytes(o);
}

/* The call sizes in bytes: --calls (KiB) if given, else scan_call_bytes;
 * dies on a bad list. */
static unsigned scan_calls(const struct bench_opts *o, uint32_t *out)
{
	const char *s = o->calls;
	unsigned n = 0;

	if (!s) {
		for (unsigned c = 0; c < SCAN_NR_CALLS; c++)
			out[c] = scan_call_bytes[c];
		return SCAN_NR_CALLS;
	}
	while (*s) {
		char *end;
		unsigned long kb = strtoul(s, &end, 10);

		if (end == s || (*end && *end != ',') || !kb || kb % 4 || kb > 1024)
			die("--calls: '%s' is not a list of KiB, multiples of 4 up to 1024", o->calls);
		if (n == BENCH_MAX_TCONF)
			die("--calls: more than %u sizes", BENCH_MAX_TCONF);
		out[n++] = (uint32_t)kb << 10;
		s = end + (*end == ',');
	}
	if (!n)
		die("--calls: '%s' names no size", o->calls);
	return n;
}

/* The --variants list as a mask (bit v: rows of variant v run); dies on a
 * bad name. */
static unsigned scan_variants(const struct bench_opts *o)
{
	return bench_name_mask(o->variants, scan_variant_name, SV_NR, (1u << SV_NR) - 1, "scan");
}

/* The scanner counts: --threads if given, else 1 and 2. */
static unsigned scan_scanners(const struct bench_opts *o, unsigned *out)
{
	if (o->threads_set) {
		for (unsigned i = 0; i < o->nr_tconf; i++)
			out[i] = o->threads[i];
		return o->nr_tconf;
	}
	out[0] = SCAN_DEF_SCANNERS_1;
	out[1] = SCAN_DEF_SCANNERS_2;
	return 2;
}

static uint64_t process_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- the pass ---- */

static __attribute__((noinline, cold)) uint64_t
scan_fail(struct sworker *w, int err, uint64_t off, uint64_t done)
{
	w->err = err;
	w->err_off = off;
	return done;
}

static ssize_t read_call(const struct sctx *x, const struct sworker *w, uint64_t off, size_t len)
{
	switch (x->v) {
	case SV_URING:
	case SV_SYNC:
		return lpc_pread(x->lf[x->v], w->buf, len, off);
	case SV_KERNEL:
		return pread(w->kfd, w->buf, len, (off_t)off);
	case SV_DIRECT:
		return pread(x->dfd, w->buf, len, (off_t)off);
	case SV_NR:
		break;
	}
	return -EINVAL;
}

/* Scanner id's part of the file: [*lo, *hi), block-aligned. */
static void scan_part(const struct sctx *x, unsigned id, uint64_t *lo, uint64_t *hi)
{
	uint64_t per = x->file_bytes / SCAN_BLOCK / x->scanners * SCAN_BLOCK;

	*lo = per * id;
	*hi = id + 1 == x->scanners ? x->file_bytes : per * (id + 1);
}

/* One scanner's pass over its part, every block checked; ignores stop (a
 * pass is a fixed amount of work).  Return: the bytes read. */
static uint64_t scan_fn(unsigned id, void *arg, const _Atomic unsigned *stop)
{
	const struct sctx *x = arg;
	struct sworker *w = &x->wk[id];
	uint64_t lo, hi, off;

	(void)stop;
	scan_part(x, id, &lo, &hi);
	w->err = 0;
	for (off = lo; off < hi;) {
		size_t len = hi - off < x->call ? (size_t)(hi - off) : x->call;
		ssize_t n = read_call(x, w, off, len);

		if (unlikely(n != (ssize_t)len)) {
			int err = n < 0 ? (x->v == SV_URING || x->v == SV_SYNC ? (int)-n : errno) : EIO;

			return scan_fail(w, err, off, off - lo);
		}
		for (size_t b = 0; b < len; b += SCAN_BLOCK)
			if (unlikely(*(const uint64_t *)(w->buf + b) != (off + b) / SCAN_BLOCK))
				return scan_fail(w, EILSEQ, off + b, off - lo);
		off += len;
	}
	return hi - lo;
}

/* Runs the current pass on this process's pool.  Return: 0 or the first
 * scanner's error (its offset in *err_off). */
static int run_pass(struct sctx *x, struct scan_sample *s, uint64_t *err_off)
{
	struct pool_slice ps;
	uint64_t cpu0 = process_cpu_ns();

	/* slice 0: the coordinator sets stop at once and waits for the
	 * scanners, which run to the end of their parts. */
	pool_run(x->pool, x->scanners, scan_fn, x, 0, &ps);
	s->cpu_ns = process_cpu_ns() - cpu0;
	s->bytes = ps.ops;
	s->wall_ns = ps.wall_ns;
	for (unsigned i = 0; i < x->scanners; i++) {
		if (x->wk[i].err) {
			*err_off = x->wk[i].err_off;
			return x->wk[i].err;
		}
	}
	return 0;
}

/* ---- the child: the kernel rows inside the memory cgroup ---- */

static void child_serve(void *arg, const void *cmd, void *res)
{
	struct sctx *x = arg;
	const struct scan_cmd *c = cmd;
	struct scan_res *r = res;

	if (!c)
		return;
	switch (c->op) {
	case SCMD_SETUP:
		/* Inside the cgroup: every page read is charged to it. */
		for (unsigned i = 0; i < x->nr_workers; i++) {
			x->wk[i].kfd = open(x->df.path, O_RDONLY | O_CLOEXEC);
			if (x->wk[i].kfd < 0)
				die_err(errno, "scan: opening %s", x->df.path);
		}
		x->pool = pool_create(x->nr_workers, x->env->opts->pin);
		break;
	case SCMD_RUN:
		x->v = (enum scan_variant)c->v;
		x->scanners = c->scanners;
		x->call = c->call;
		r->err = run_pass(x, &r->s, &r->err_off);
		break;
	}
}

/* Forked before this process starts any thread or lpc cache of its own; a
 * plain fork (kchild.h): the child never calls lpc. */
static void child_start(struct sctx *x, const char *name)
{
	struct scan_cmd c = { .op = SCMD_SETUP };
	struct scan_res r;
	struct kchild_spec s = {
		.what = "scan: the kernel rows", .cg_name = name, .cg_limit = x->cache_bytes,
		.cmd_len = sizeof(struct scan_cmd), .res_len = sizeof(struct scan_res),
		.serve = child_serve, .arg = x,
	};

	x->have_cg = !kchild_start(&x->kc, &s);
	if (x->have_cg)
		kchild_call(&x->kc, &c, &r);
}

/* ---- setup ---- */

static void lpc_open(struct sctx *x, enum scan_variant v)
{
	struct lpc_config cfg;
	int rc;

	lpc_config_init(&cfg);
	cfg.cache_bytes = x->cache_bytes;
	cfg.io_backend = v == SV_URING ? LPC_IO_URING : LPC_IO_SYNC;
	cfg.readahead_max_kb = x->env->opts->ra_max_kb;
	rc = lpc_cache_create(&cfg, &x->cache[v]);
	if (rc)
		die_err(-rc, "scan: lpc_cache_create (%" PRIu64 " MiB)", x->cache_bytes >> 20);
	rc = lpc_file_open(x->cache[v], x->df.path, O_RDONLY, 0, &x->lf[v]);
	if (rc)
		die_err(-rc, "scan: lpc_file_open %s", x->df.path);
}

static void lpc_close(struct sctx *x, enum scan_variant v)
{
	int rc;

	if (!x->cache[v])
		return;
	rc = lpc_file_close(x->lf[v]);
	if (rc)
		die_err(-rc, "scan: lpc_file_close");
	rc = lpc_cache_destroy(x->cache[v]);
	if (rc)
		die_err(-rc, "scan: lpc_cache_destroy");
	x->cache[v] = NULL;
	x->lf[v] = NULL;
}

/* Opens the file's block device's `rel` (below /sys/dev/block/M:m/, or its
 * parent's: the file may be on a partition, whose queue/ is the disk's); NULL
 * if neither exists. */
static FILE *device_file(const struct sctx *x, const char *rel)
{
	struct stat st;
	char p[160];

	if (stat(x->df.path, &st))
		return NULL;
	for (int up = 0; up < 2; up++) {
		FILE *f;

		snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/%s%s", major(st.st_dev),
			 minor(st.st_dev), up ? "../" : "", rel);
		f = fopen(p, "r");
		if (f)
			return f;
	}
	return NULL;
}

/* The file's device's read_ahead_kb (the kernel rows' default readahead);
 * -1 if it cannot be found. */
static long device_readahead_kb(const struct sctx *x)
{
	FILE *f = device_file(x, "queue/read_ahead_kb");
	long kb;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &kb) != 1)
		kb = -1;
	fclose(f);
	return kb;
}

/* The device's read counters now (its stat file's first four fields: reads
 * completed, merged, sectors, read ticks); false if the file is on no block
 * device (tmpfs, overlayfs, btrfs, NFS: st_dev names none in /sys/dev/block).
 * Not io_ticks (the time with any request in flight): the kernel counts it
 * in jiffies, 4 ms at HZ 250, too coarse for passes of tens of milliseconds
 * (a busy share over 100 % in the review, tests/attack_devstat), and writes
 * count in it too. */
static bool device_counters(const struct sctx *x, uint64_t v[3])
{
	unsigned long long f[4];
	FILE *fp = device_file(x, "stat");
	int n;

	if (!fp)
		return false;
	n = fscanf(fp, "%llu %llu %llu %llu", &f[0], &f[1], &f[2], &f[3]);
	fclose(fp);
	if (n != 4)
		return false;
	v[0] = f[0]; /* reads completed */
	v[1] = f[2]; /* sectors read */
	v[2] = f[3]; /* read ticks, ms */
	return true;
}

static void build_rows(struct scan_results *res, bool cg)
{
	struct scan_row *r = xcalloc(res->nr_scanners * res->nr_calls * 3 + 1, sizeof(*r));
	unsigned n = 0;

	for (unsigned t = 0; t < res->nr_scanners; t++)
		for (unsigned c = 0; c < res->nr_calls; c++)
			for (enum scan_variant v = SV_URING; v <= SV_KERNEL; v++)
				if (res->variants & (1u << v))
					r[n++] = (struct scan_row){ v, res->scanners[t],
								    res->calls[c],
								    v == SV_KERNEL && !cg };
	if (res->variants & (1u << SV_DIRECT))
		r[n++] = (struct scan_row){ SV_DIRECT, 1, SCAN_DIRECT_CALL, false };
	res->rows = r;
	res->nr_rows = n;
}

static double scan_estimate_s(const struct bench_opts *o)
{
	unsigned sc[BENCH_MAX_TCONF], nt = scan_scanners(o, sc);
	uint32_t calls[BENCH_MAX_TCONF];
	unsigned nc = scan_calls(o, calls), mask = scan_variants(o);
	double passes = nt * nc *
				(double)__builtin_popcount(mask & ((1u << SV_DIRECT) - 1)) +
			!!(mask & (1u << SV_DIRECT));

	return (o->warmup + scan_rounds(o)) * passes *
	       ((double)scan_file_bytes(o) / 1e6 / SCAN_EST_MB_S);
}

static void scan_check_opts(const struct bench_opts *o)
{
	uint64_t file = scan_file_bytes(o);
	unsigned sc[BENCH_MAX_TCONF], nt = scan_scanners(o, sc);
	uint32_t calls[BENCH_MAX_TCONF];

	scan_calls(o, calls);
	scan_variants(o);

	for (unsigned i = 0; i < nt; i++)
		if ((uint64_t)sc[i] * SCAN_DIRECT_CALL > file)
			die("scan: %u scanners need a file of at least %u MiB", sc[i], sc[i]);
	if (file > ((uint64_t)1 << 44))
		die("scan: a file of %" PRIu64 " MiB is too large", file >> 20);
}

static void scan_echo(const struct sctx *x, const struct scan_results *res)
{
	const struct bench_opts *o = x->env->opts;
	long ra = device_readahead_kb(x);
	char load[64] = "unknown", ra_max[32] = "the default (--ra-max-kb)";
	FILE *f = fopen("/proc/loadavg", "r");

	if (o->ra_max_kb)
		snprintf(ra_max, sizeof(ra_max), "%" PRIu32 " (--ra-max-kb)", o->ra_max_kb);
	if (f) {
		if (!fgets(load, sizeof(load), f))
			snprintf(load, sizeof(load), "unknown");
		load[strcspn(load, "\n")] = '\0';
		fclose(f);
	}
	printf("scan: a cold sequential pass over a file %.1fx the cache, lpc against the kernel at\n"
	       "      equal memory and the device's sequential bandwidth\n",
	       (double)x->file_bytes / (double)x->cache_bytes);
	printf("  file       %" PRIu64 " MiB in %s/ (%s)%s\n", x->file_bytes >> 20, x->df.dir,
	       x->df.fstype, x->df.tmpfs ? "; tmpfs: no O_DIRECT, lpc and direct read buffered" : "");
	printf("  memory     %" PRIu64 " MiB: each lpc cache's frames; the kernel's page cache\n",
	       x->cache_bytes >> 20);
	if (res->memcg)
		printf("             kernel: one child process in memory cgroup v%d %s, limit %" PRIu64 " MiB\n",
		       x->kc.cg.version, x->kc.cg.path, x->cache_bytes >> 20);
	else
		printf("             kernel: SKIPPED: no writable memory cgroup (%s)\n", res->memcg_why);
	printf("  rows       per scanner count and call size (");
	for (unsigned c = 0; c < res->nr_calls; c++)
		printf("%s%u KiB", c ? ", " : "", res->calls[c] >> 10);
	printf("): lpc_uring, lpc_sync (lpc_pread;\n"
	       "             readahead_kb: the default, readahead_max_kb: %s), kernel (buffered pread,\n"
	       "             the device's read_ahead_kb %ld%s); then direct_1m (O_DIRECT %u KiB calls, 1 thread)\n",
	       ra_max, ra, ra < 0 ? ": unknown" : "", SCAN_DIRECT_CALL >> 10);
	if (o->variants)
		printf("             only %s (--variants); odd rounds in the reverse order\n", o->variants);
	else
		printf("             odd rounds in the reverse order\n");
	printf("  scanners   ");
	for (unsigned t = 0; t < res->nr_scanners; t++)
		printf("%s%u", t ? "," : "", res->scanners[t]);
	printf("%s: scanner i reads the i-th 1/S of the file, start to end\n"
	       "             (S concurrent streams on one file, one lpc_file; the kernel: a descriptor each)\n",
	       o->threads_set ? "" : " (--threads to change)");
	printf("  cold       before every pass: the file dropped from the page cache (posix_fadvise\n"
	       "             DONTNEED) and, for lpc rows, from that lpc cache (lpc_fadvise DONTNEED);\n"
	       "             what stayed is counted (the report's last lines)\n");
	printf("  rounds     %u measured + %u warm-up; a round is one pass of every row\n",
	       res->rounds, o->warmup);
	printf("  load       /proc/loadavg at the start: %s\n", load);
	fflush(stdout);
}

static void scan_setup(struct sctx *x, struct scan_results *res)
{
	const struct bench_opts *o = x->env->opts;
	char name[64];

	x->cache_bytes = scan_cache_bytes(o);
	x->file_bytes = scan_file_bytes(o);
	res->cache_bytes = x->cache_bytes;
	res->file_bytes = x->file_bytes;
	res->nr_scanners = scan_scanners(o, res->scanners);
	res->nr_calls = scan_calls(o, res->calls);
	res->variants = scan_variants(o);
	x->nr_workers = 1;
	for (unsigned t = 0; t < res->nr_scanners; t++)
		if (res->scanners[t] > x->nr_workers)
			x->nr_workers = res->scanners[t];

	datafile_choose(o->dir, &x->df);
	progress("scan: writing %" PRIu64 " MiB to %s", x->file_bytes >> 20, x->df.dir);
	datafile_create(&x->df, x->file_bytes);
	progress_done();
	datafile_drop(&x->df);

	x->wk = xaligned_alloc(BENCH_CACHELINE, x->nr_workers * sizeof(*x->wk));
	memset(x->wk, 0, x->nr_workers * sizeof(*x->wk));
	for (unsigned i = 0; i < x->nr_workers; i++) {
		/* One huge page each where the kernel gives one (a hint): an
		 * O_DIRECT 1 MiB read into 256 scattered 4 KiB pages is 256
		 * segments, more than a virtio disk's max_segments (254), and
		 * was split in two requests; direct_1m read 0.3-1.1 GB/s so
		 * against 0.9-3.5 from one huge page, measured interleaved,
		 * and understated the device's ceiling.  Every row reads
		 * into the same buffers. */
		x->wk[i].buf = xaligned_alloc(SCAN_HUGE, SCAN_HUGE);
		(void)madvise(x->wk[i].buf, SCAN_HUGE, MADV_HUGEPAGE);
		memset(x->wk[i].buf, 0, SCAN_DIRECT_CALL);
		x->wk[i].kfd = -1;
	}
	/* The child first: before this process has threads or lpc caches. */
	snprintf(name, sizeof(name), "lpcbench_scan.%d", (int)getpid());
	if (res->variants & (1u << SV_KERNEL)) {
		child_start(x, name);
		snprintf(res->memcg_why, sizeof(res->memcg_why), "%s", x->kc.cg.why);
	} else {
		snprintf(res->memcg_why, sizeof(res->memcg_why), "not asked for (--variants)");
	}
	res->memcg = x->have_cg;
	build_rows(res, x->have_cg);
	scan_echo(x, res);

	x->dfd = datafile_open_direct(&x->df, O_RDONLY);
	x->pool = pool_create(x->nr_workers, o->pin);
	lpc_open(x, SV_URING);
	lpc_open(x, SV_SYNC);
	printf("  workers    %u here (%u pinned)%s\n\n", x->nr_workers, pool_pinned(x->pool),
	       x->have_cg ? ", as many in the cgroup's process" : "");
	fflush(stdout);
}

static void scan_teardown(struct sctx *x, struct scan_results *res)
{
	struct lpc_stats st;

	lpc_stats(x->cache[SV_URING], &st);
	res->uring_fallbacks = st.uring_fallbacks;
	res->uring_unregistered = st.uring_unregistered;
	kchild_stop(&x->kc);
	lpc_close(x, SV_URING);
	lpc_close(x, SV_SYNC);
	pool_destroy(x->pool);
	close(x->dfd);
	for (unsigned i = 0; i < x->nr_workers; i++)
		free(x->wk[i].buf);
	free(x->wk);
	datafile_remove();
}

/* ---- measuring ---- */

/* Pages of the file in lpc cache v (lpc_page_find: cached or in flight). */
static uint64_t lpc_cached_pages(const struct sctx *x, enum scan_variant v)
{
	uint64_t n = 0;

	for (uint64_t i = 0; i < x->file_bytes / SCAN_BLOCK; i++) {
		struct lpc_page *pg;
		int rc = lpc_page_find(x->lf[v], i, &pg);

		if (rc == 0)
			lpc_page_put(pg);
		n += rc == 0 || rc == -EAGAIN;
	}
	return n;
}

/*
 * lpc cache v without the file's pages, and its frames back on the free
 * lists.  The last pass can end with readahead windows still in flight (its
 * scanners' last markers started them, past where the scanners stop), and
 * DONTNEED skips a page whose read is in flight: so it drops again, a
 * millisecond apart, until no page of the file is left (up to
 * SCAN_FREE_WAIT_MS; at full size two 4 MiB windows were left before this,
 * at the start of the second scanner's half).  The frames come back after
 * RCU grace periods, in batches (call_rcu), and
 * a few dozen stay on the cache's pending list until a whole batch is there
 * or reclaim drains them, so frames_free may stop short of frames.  Waits
 * until frames_free reaches frames; or is SCAN_FREE_NEAR of them and has
 * not grown for SCAN_FREE_STEADY_MS; or has not grown for SCAN_FREE_STALL_MS;
 * or SCAN_FREE_WAIT_MS passed.  Fills s->free0, s->frames and
 * s->lpc_cached0 (want 0).
 */
static void lpc_make_cold(struct sctx *x, enum scan_variant v, struct scan_sample *s)
{
	uint64_t t0 = now_ns(), last = 0, t_last;
	struct lpc_stats st;

	for (;;) {
		int rc = lpc_fadvise(x->lf[v], 0, 0, LPC_FADV_DONTNEED);

		if (rc < 0)
			die_err(-rc, "scan: lpc_fadvise(DONTNEED)");
		if (lpc_cached_pages(x, v) == 0 ||
		    now_ns() - t0 > (uint64_t)SCAN_FREE_WAIT_MS * 1000000u)
			break;
		sleep_ns(1000000);
	}
	t_last = now_ns();
	for (;;) {
		uint64_t t;

		lpc_stats(x->cache[v], &st);
		t = now_ns();
		if (st.frames_free > last) {
			last = st.frames_free;
			t_last = t;
		}
		if (st.frames_free >= st.frames ||
		    ((double)st.frames_free >= SCAN_FREE_NEAR * (double)st.frames &&
		     t - t_last > (uint64_t)SCAN_FREE_STEADY_MS * 1000000u) ||
		    t - t_last > (uint64_t)SCAN_FREE_STALL_MS * 1000000u ||
		    t - t0 > (uint64_t)SCAN_FREE_WAIT_MS * 1000000u)
			break;
		sleep_ns(1000000);
	}
	s->free0 = st.frames_free;
	s->frames = st.frames;
	s->lpc_cached0 = lpc_cached_pages(x, v);
}

static void run_row(struct sctx *x, const struct scan_row *row, struct scan_sample *s)
{
	struct lpc_stats a, b;
	uint64_t err_off = 0, d0[3], d1[3];
	bool dev;
	int err;

	memset(s, 0, sizeof(*s));
	if (scan_is_lpc(row->v))
		lpc_make_cold(x, row->v, s);
	if (row->v == SV_KERNEL) {
		/* Right before the pass, not before every row: the memory the drop
		 * frees would otherwise stay free through the other rows' passes,
		 * and this VM reports free 2 MiB blocks to its host, which takes
		 * them back; the kernel's next pass then faulted its page cache
		 * in from the host, at 300-700 us of CPU per MiB more and 30-50%
		 * of its bandwidth (lpc's frames are never freed).  lpc's and
		 * direct_1m's reads are O_DIRECT: the page cache serves them
		 * nothing. */
		datafile_drop(&x->df);
		s->resident0 = datafile_resident_pages(&x->df);
	}
	dev = device_counters(x, d0);
	if (row->v == SV_KERNEL) {
		struct scan_cmd c = { SCMD_RUN, row->v, row->scanners, row->call };
		struct scan_res r;
		uint64_t resident0 = s->resident0;

		kchild_call(&x->kc, &c, &r);
		*s = r.s;
		s->resident0 = resident0;
		err = r.err;
		err_off = r.err_off;
	} else {
		x->v = row->v;
		x->scanners = row->scanners;
		x->call = row->call;
		if (scan_is_lpc(row->v))
			lpc_stats(x->cache[row->v], &a);
		err = run_pass(x, s, &err_off);
		if (scan_is_lpc(row->v)) {
			/* Every thread of the cache, its readahead worker included */
			lpc_stats(x->cache[row->v], &b);
			s->hits = b.hits - a.hits;
			s->misses = b.misses - a.misses;
			s->reads = b.reads - a.reads;
			s->read_pages = b.read_pages - a.read_pages;
			s->ra_windows = b.ra_windows - a.ra_windows;
			s->ra_async = b.ra_async - a.ra_async;
			s->ra_pages = b.ra_pages - a.ra_pages;
			s->ra_used = b.ra_used - a.ra_used;
			s->ra_wasted = b.ra_wasted - a.ra_wasted;
			s->evictions = b.evictions - a.evictions;
			s->read_errors = b.read_errors - a.read_errors;
			s->gp = b.grace_periods - a.grace_periods;
			s->gp_ns = b.grace_period_ns - a.grace_period_ns;
		}
	}
	if (dev && device_counters(x, d1)) {
		s->dev_reads = d1[0] - d0[0];
		s->dev_sectors = d1[1] - d0[1];
		/* The kernel prints the ticks as 32 bits: the difference
		 * modulo 2^32 stays right across a wrap. */
		s->dev_read_ms = (uint32_t)(d1[2] - d0[2]);
	}
	if (err)
		die_err(err, "scan: %s, %u scanner%s, %u KiB calls: reading at offset %" PRIu64 "%s",
			scan_variant_name[row->v], row->scanners, row->scanners > 1 ? "s" : "",
			row->call >> 10, err_off,
			err == EILSEQ ? ": another block's bytes" : "");
	if (s->bytes != x->file_bytes)
		die("scan: %s read %" PRIu64 " bytes of a %" PRIu64 "-byte file",
		    scan_variant_name[row->v], s->bytes, x->file_bytes);
}

static void csv_sample(const struct bench_env *env, unsigned round, const struct scan_row *row,
		       const struct scan_sample *s)
{
	char var[48];
	struct csv_key k = { "scan", round + 1, row->scanners, var, NULL };
	const struct {
		const char *m;
		double v;
	} f[] = {
		{ "mb_s", s->wall_ns ? (double)s->bytes * 1e3 / (double)s->wall_ns : 0 },
		{ "bytes", (double)s->bytes }, { "wall_ns", (double)s->wall_ns },
		{ "cpu_ns", (double)s->cpu_ns }, { "resident_before", (double)s->resident0 },
		{ "lpc_free_before", (double)s->free0 },
		{ "lpc_cached_before", (double)s->lpc_cached0 }, { "lpc_hits", (double)s->hits },
		{ "lpc_misses", (double)s->misses }, { "lpc_reads", (double)s->reads },
		{ "lpc_read_pages", (double)s->read_pages },
		{ "lpc_ra_windows", (double)s->ra_windows }, { "lpc_ra_async", (double)s->ra_async },
		{ "lpc_ra_pages", (double)s->ra_pages }, { "lpc_ra_used", (double)s->ra_used },
		{ "lpc_ra_wasted", (double)s->ra_wasted }, { "lpc_evictions", (double)s->evictions },
		{ "lpc_grace_periods", (double)s->gp }, { "lpc_grace_period_ns", (double)s->gp_ns },
	};

	const struct {
		const char *m;
		double v;
	} d[] = { /* the device's, every row */
		{ "dev_read_requests", (double)s->dev_reads },
		{ "dev_read_sectors", (double)s->dev_sectors },
		{ "dev_read_ms", (double)s->dev_read_ms },
	};

	if (!env->csv)
		return;
	snprintf(var, sizeof(var), "%s/%uk", scan_variant_name[row->v], row->call >> 10);
	for (size_t i = 0; i < ARRAY_SIZE(f); i++) {
		if (i >= 5 && !scan_is_lpc(row->v)) /* lpc's own */
			break;
		k.metric = f[i].m;
		csv_raw(env->csv, &k, f[i].v);
	}
	for (size_t i = 0; i < ARRAY_SIZE(d); i++) {
		k.metric = d[i].m;
		csv_raw(env->csv, &k, d[i].v);
	}
}

static void scan_run(const struct bench_env *env)
{
	const struct bench_opts *o = env->opts;
	struct sctx x = { .env = env, .dfd = -1 };
	struct scan_results res = { .rounds = scan_rounds(o) };
	unsigned total = o->warmup + res.rounds;
	uint64_t t0;

	scan_setup(&x, &res);
	res.s = xcalloc((size_t)res.rounds * res.nr_rows, sizeof(*res.s));
	t0 = now_ns();
	for (unsigned r = 0; r < total; r++) {
		bool warmup = r < o->warmup;
		double left = r ? (double)(now_ns() - t0) / 1e9 / r * (total - r) : 0;

		progress("scan: %s round %u/%u, ~%.0f s left", warmup ? "warm-up" : "measured",
			 warmup ? r + 1 : r - o->warmup + 1, warmup ? o->warmup : res.rounds, left);
		for (unsigned j = 0; j < res.nr_rows; j++) {
			unsigned i = r % 2 ? res.nr_rows - 1 - j : j; /* odd: reversed */
			struct scan_sample s, *dst;

			if (res.rows[i].skip)
				continue;
			dst = warmup ? &s : scan_sample(&res, r - o->warmup, i);
			run_row(&x, &res.rows[i], dst);
			if (!warmup)
				csv_sample(env, r - o->warmup, &res.rows[i], dst);
		}
	}
	progress_done();
	printf("measured in %.1f s\n\n", (double)(now_ns() - t0) / 1e9);
	scan_teardown(&x, &res);
	scan_report(env, &res);
	free(res.s);
	free(res.rows);
}

const struct bench bench_scan = {
	.name = "scan",
	.help = "a cold sequential pass over a file 4x the cache in 4, 16 and 128 KiB calls,\n"
		"           1 and 2 scanners: lpc (io_uring, sync) against the kernel's buffered\n"
		"           pread in a memory cgroup of the same size, and O_DIRECT 1 MiB",
	.run = scan_run,
	.check_opts = scan_check_opts,
	.estimate_s = scan_estimate_s,
};
