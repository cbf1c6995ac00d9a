/* SPDX-License-Identifier: MIT */
/*
 * model_api.c - the model-based test of the whole file API: random sequences
 * of every public call on a file, applied to lpc and to a plain in-memory
 * reference (each file's bytes and size), compared after every call (return
 * values, bytes read, page contents) and, after every lpc_fsync and every
 * last lpc_file_close, with the kernel's file read through a fresh
 * descriptor (size and bytes, write_test.h: tst_kernel_read).
 *
 * The reference encodes lpc.h's contract, not the implementation: where the
 * contract allows several answers, each of them is accepted and no other.
 *  - lpc_pwrite returns len; lpc_pread returns min(len, size - off) bytes
 *    (0 at or past the end) equal to the reference: pages absent from the
 *    cache are read from the disk, so a page written back too short, or a
 *    size published too small (J.2), shows as a wrong byte here.
 *  - lpc_page_get / lpc_page_read: -ENXIO for a page wholly past lpc's size,
 *    else the page's bytes, zeros past the end (J.1).  lpc_page_find: -ENOENT
 *    past the end (J.4), else -ENOENT, -EAGAIN (A.2) or the page.
 *  - lpc_page_mark_dirty on a held page, after lpc_page_lock and a change in
 *    place: 0 while the page is still cached (nothing but truncate and the
 *    last close remove a held page: B.1, H.1), then the change is part of
 *    the file; -ENOENT once a truncate cut it or the last close removed it
 *    (J.4), and the change is not.
 *  - lpc_truncate: 0; the bytes past the new end read as zeros if the file
 *    grows again (J.4).  lpc_fsync: 0, and the kernel's file is then exactly
 *    the reference (J.2: size and every byte).
 *  - lpc_invalidate: 0 .. the number of pages in the range (D.1); it never
 *    changes the data (J.6: dirty pages are kept, clean ones are on disk).
 *  - lpc_fadvise: 0 for each of the five advices on any range (len 0, past
 *    the end of the file, far past it); -EINVAL for an unknown advice or
 *    off + len past 2^64.  No advice changes a byte (the reads after it
 *    are checked, and one of the range's bytes right after it); DONTNEED
 *    drops 0 .. the range's pages (the cache's `invalidated` grows by that,
 *    kept exact in the stats check) but never a held or pinned page (each
 *    is found again, or in flight) nor a dirty one (its bytes stay).
 *  - lpc_pin: all or nothing (I.1): 0 for len 0 (or -ENXIO past the end),
 *    -ENXIO at or past lpc's size, -E2BIG above max, else every page
 *    covering the range cut at lpc's size, in order, with the reference's
 *    bytes; lpc_pin_iov of the pages covers exactly [off, off + len) for any
 *    len the pages cover, -EINVAL one byte further.
 *  - lpc_pin(LPC_PIN_WRITE) (I.4-I.7): every page covering the range, which
 *    is not cut at the end (the size grows to its end), or -E2BIG above max
 *    with nothing held; bytes written through lpc_pin_iov's vector, then
 *    lpc_unpin(LPC_PIN_WRITE): every later read, and the kernel's file
 *    after lpc_fsync or the last close, has them (the reference takes them
 *    at the unpin); the pins count in pages_pinned, the unpins' pages in
 *    wpin_dirtied.
 *  - lpc_file_open of an open file returns the same lpc_file (A.5); with
 *    O_TRUNC it is -EBUSY; the last close returns 0 and leaves the kernel's
 *    file equal to the reference (it writes every dirty page back, J.6).
 *  - lpc_page_alloc: 0 and a private page whose frame (aligned for
 *    O_DIRECT) is the caller's alone: the bytes written into it right after
 *    the call are still there after every later call, whatever the cache,
 *    its flusher and its reclaimer did meanwhile, until its lpc_page_put;
 *    no file's byte changes (every read is checked); lpc_page_mark_dirty of
 *    it, locked, is -EINVAL and changes nothing.
 *  - a sequential scan (lpc_pread in calls of one size, each where the last
 *    ended): every call as lpc_pread's above; over a file larger than the
 *    cache its stream drops the pages behind it (readahead.c A5), which
 *    never changes a byte read (the count of pages dropped is printed).
 *  - lpc_stats (F.1, the only thread is quiet): lookups == hits + misses,
 *    frames constant, frames_free and dirty_pages at most frames, and the
 *    counts of this thread's calls exact (writes, fsyncs, invalidated,
 *    pages_pinned).
 * The flusher (dirty_expire_ms 1-20 ms, background 1-10 %, limit 2-20 %),
 * throttling and the reclaimer run beside the calls on 8-64 frames; a test
 * thread holds at most a quarter of the frames (pages and pins), so frames
 * never run out (E.1).
 *
 * Every call's parameters are drawn when the sequence is made and read
 * modulo the state when it runs, so any subsequence is a valid sequence:
 * a failure is shrunk (the prefix up to the failing call, then delta
 * debugging over chunks, each candidate replayed up to three times from a
 * fresh cache since lpc's threads make replays nondeterministic) and
 * printed as a list of calls with their arguments.
 *
 * The multi-threaded mode (--threads W): W writers share one file, writer t
 * owning the bytes [t * R, (t + 1) * R) (R not a multiple of the page size,
 * so writers share pages): its pwrite, pread, page-lock changes and fsync
 * are checked exactly against its own reference (the size may be larger
 * than its bytes: others extend the file); after its lpc_fsync the kernel's
 * file holds its bytes; its lpc_invalidate and lpc_fadvise (DONTNEED,
 * WILLNEED) of its bytes change none of them.  Two readers read the whole file (lpc_pread,
 * lpc_page_read, lpc_pin) and accept for each byte any value its owner has
 * begun to write to it (a bitmap per byte, set before the pwrite), or 0.
 * Each reader also keeps a private page (lpc_page_alloc, replaced now and
 * then) whose bytes must stay what it wrote while the others miss, evict,
 * write back and invalidate around it.
 *
 * Usage:
 *   model_api [--seed N] [--ops N] [--seq-len N] [--seconds S]
 *             [--backend sync|uring|user|rbd|all] [--page-size N|all]
 *             [--lookup lockless|locked|all] [--frames N] [--files N]
 *             [--matrix K/N] [--threads W] [--verbose] [--shrink-seconds S]
 *             [--shrink-max N] [--no-closed-dirty]
 *   --ops N runs N calls per variant (sequences of --seq-len, default 3000);
 *   --seconds S runs each variant for S seconds instead (the CI form).
 *   --seconds also ends a sequence early (a failure's replay command names
 *   the calls it made).  A failure prints the replay command of its
 *   sequence, shrinks it for --shrink-seconds (default 60) and prints the
 *   shrunk list; only the first --shrink-max failures (default 1) are
 *   shrunk, so a run that fails everywhere still ends soon.  --no-closed-dirty leaves out lpc_page_mark_dirty on a
 *   page held across its file's last close (to look past a failure there).
 * --backend rbd (the model_api_rbd build only, MODEL_RBD; not part of
 * `all`): each file is an RBD image of a Ceph cluster, opened with
 * lpc_rbd_open (liblpc_rbd); the checks after lpc_fsync and the last close
 * read the image through librbd directly (a fresh read-only handle each
 * time: its size and bytes as the cluster has them), in the sequences and
 * in the multi-threaded mode.  The cluster: the
 * conf file of --rbd-conf PATH or $LPC_RBD_CONF (pool `lpc`); without one
 * the run skips (77).
 * Exit: 0 pass, 1 fail, 77 skip.
 */
#include <pthread.h>
#include <stdarg.h>

#include "../common/write_test.h"
#include "../common/user_backend.h"

/* --backend user: each file opened with lpc_file_open_backend over the test
 * backend of user_backend.h (a second descriptor of the same file, so the
 * kernel's file is still the storage the checks read); the cache itself on
 * LPC_IO_SYNC, which such files never use.  The table has every operation
 * at page sizes 2^odd, and neither write_batch nor sync at 2^even (the
 * front's per-run loop and a storage durable at write).  O_TRUNC is not
 * the backend open's (-EINVAL): a truncating reopen is an open and then
 * lpc_truncate(f, 0).  Each sequence checks that every handle lpc took was
 * released once and that lpc kept BK3 on every call (tub_breaches). */
#define MODEL_USER 100
/* --backend rbd: as MODEL_USER, over liblpc_rbd (each file an image). */
#define MODEL_RBD_BACKEND 101

/* A file opened through lpc_file_open_backend (user or rbd): O_TRUNC is
 * not that open's. */
static bool model_is_backend(int b)
{
	return b >= MODEL_USER;
}

static const char *bname(int b)
{
	return b == MODEL_RBD_BACKEND ? "rbd" : b == MODEL_USER ? "user" : tst_backend_name(b);
}

#ifdef MODEL_RBD
#include <rados/librados.h>
#include <rbd/librbd.h>

#include <lpc/lpc_rbd.h>

/* The cluster's conf and the model's own connection (image create, the
 * checks' reads, remove), made once in main. */
static const char *rbd_conf;
static rados_t rbd_cluster;
static rados_ioctx_t rbd_io;

static bool is_rbd(const char *path)
{
	return !strncmp(path, "rbd:lpc/", 8);
}

/* Creates image `name` of size bytes holding tst_file_bytes(seed); its lpc
 * name in path ("rbd:lpc/NAME").  Return: 0 or a negative errno. */
static int rbd_make(const char *name, uint64_t size, uint64_t seed, char *path, size_t len)
{
	rbd_image_t im;
	unsigned char *buf = malloc(size ? size : 1);
	int order = 22, r;

	if (!buf)
		return -ENOMEM;
	snprintf(path, len, "rbd:lpc/%s", name);
	rbd_remove(rbd_io, name);
	r = rbd_create(rbd_io, name, size, &order);
	if (r == 0 && size) {
		tst_file_bytes(seed, 0, buf, size);
		r = rbd_open(rbd_io, name, &im, NULL);
		if (r == 0) {
			ssize_t n = rbd_write(im, 0, size, (const char *)buf);

			r = n == (ssize_t)size ? 0 : (n < 0 ? (int)n : -EIO);
			rbd_close(im);
		}
	}
	free(buf);
	return r;
}

/* The image as the cluster has it now: kernel_read's answer for RBD. */
static int64_t rbd_storage_read(const char *path, unsigned char *out, size_t max)
{
	rbd_image_t im;
	uint64_t size = 0;
	int64_t ret = -1;

	if (rbd_open_read_only(rbd_io, path + 8, &im, NULL) < 0)
		return -1;
	if (rbd_get_size(im, &size) == 0) {
		uint64_t want = size < max ? size : max;

		if (!want || rbd_read(im, 0, want, (char *)out) == (ssize_t)want)
			ret = (int64_t)size;
	}
	rbd_close(im);
	return ret;
}

static int rbd_connect(const char *conf)
{
	int r = rados_create(&rbd_cluster, NULL);

	if (r == 0)
		r = rados_conf_read_file(rbd_cluster, conf);
	if (r == 0)
		r = rados_conf_set(rbd_cluster, "rados_osd_op_timeout", "60");
	if (r == 0)
		r = rados_connect(rbd_cluster);
	if (r == 0)
		r = rados_ioctx_create(rbd_cluster, "lpc", &rbd_io);
	return r;
}
#endif

/* Creates the model's file: a file in the temporary directory, or an
 * image for --backend rbd. */
static int model_make(int backend, const char *name, uint64_t size, uint64_t seed, char *path,
		      size_t len)
{
#ifdef MODEL_RBD
	if (backend == MODEL_RBD_BACKEND)
		return rbd_make(name, size, seed, path, len);
#endif
	(void)backend;
	return tst_make_file(name, size, seed, path, len);
}

static void model_remove(const char *path)
{
#ifdef MODEL_RBD
	if (is_rbd(path)) {
		rbd_remove(rbd_io, path + 8);
		return;
	}
#endif
	unlink(path);
}

static const struct lpc_backend_ops *model_uops(size_t ps)
{
	return (__builtin_ctzll(ps) & 1) ? &tub_ops : &tub_ops_plain;
}

/* Opens path in c: lpc_file_open, or over the test backend (MODEL_USER). */
static int model_open(struct lpc_cache *c, int backend, size_t ps, const char *path, int flags,
		      struct lpc_file **out)
{
	struct tub *t;
	int rc;

#ifdef MODEL_RBD
	if (backend == MODEL_RBD_BACKEND)
		return lpc_rbd_open(c, path, rbd_conf, flags, out);
#endif
	if (backend != MODEL_USER)
		return lpc_file_open(c, path, flags, 0644, out);
	t = tub_new(path, ps, (flags & O_ACCMODE) == O_RDONLY);
	if (!t)
		return -errno;
	t->free_on_release = true;
	rc = lpc_file_open_backend(c, path, model_uops(ps), t, flags, out);
	if (rc) {
		/* Refused: the handle is still ours, and lpc never took it. */
		tub_free(t);
		atomic_fetch_sub(&tub_made, 1);
	}
	return rc;
}

/* ---- configuration ---- */

struct mcfg {
	int backend;	/* LPC_IO_SYNC, LPC_IO_URING, MODEL_USER or MODEL_RBD_BACKEND */
	int lookup;	/* enum lpc_lookup_mode */
	size_t ps;	/* page size */
	unsigned frames;
	unsigned nfiles;
	uint64_t maxb;	/* the largest file, in bytes */
	uint64_t expire_ms, bg_pct, limit_pct;
	uint64_t init_size[4]; /* each file's size at the start (salt: its number) */
};

static const char *lookup_name(int m)
{
	return m == LPC_LOOKUP_LOCKED ? "locked" : "lockless";
}

/* Draws the parts of a configuration the command line left open (0). */
static void cfg_draw(struct mcfg *c, uint64_t seed, unsigned frames, unsigned nfiles)
{
	static const unsigned fr[] = { 8, 16, 32, 64 };
	uint64_t s = seed ^ 0x5eedc0f1ull;
	uint64_t pages;

	/* Every value is drawn, then overridden: a replay with the drawn
	 * values given on the command line draws the same rest. */
	c->frames = fr[tst_rnd(&s) % 4];
	c->nfiles = 1 + (unsigned)(tst_rnd(&s) % 3);
	if (frames)
		c->frames = frames;
	if (nfiles)
		c->nfiles = nfiles;
	/* Files together about three times the cache, so eviction runs; big
	 * pages keep files small in pages (at most 8 MiB each). */
	pages = 3ull * c->frames / c->nfiles;
	if (pages * c->ps > (8u << 20))
		pages = (8u << 20) / c->ps;
	if (pages < 3)
		pages = 3;
	c->maxb = pages * c->ps;
	c->expire_ms = 1 + tst_rnd(&s) % 20;
	c->bg_pct = 1 + tst_rnd(&s) % 10;
	c->limit_pct = c->bg_pct + 1 + tst_rnd(&s) % 10;
	for (unsigned i = 0; i < 4; i++)
		c->init_size[i] = tst_rnd(&s) % 2 ? tst_rnd(&s) % (c->maxb + 1) : 0;
}

static void cfg_print(const struct mcfg *c, FILE *out)
{
	fprintf(out, "backend %s, page size %zu, lookup %s, %u frames, %u files of at most %llu bytes, "
		"expire %llu ms, background %llu %%, limit %llu %%",
		bname(c->backend), c->ps, lookup_name(c->lookup), c->frames, c->nfiles,
		(unsigned long long)c->maxb, (unsigned long long)c->expire_ms,
		(unsigned long long)c->bg_pct, (unsigned long long)c->limit_pct);
}

/* ---- operations ---- */

enum opk {
	OP_PWRITE, OP_PREAD, OP_GET, OP_FIND, OP_PUT, OP_DIRTY, OP_PAGE_READ, OP_TRUNC,
	OP_FSYNC, OP_INVAL, OP_PIN, OP_UNPIN, OP_REOPEN, OP_OPEN2, OP_OPEN_TRUNC, OP_STATS,
	OP_FADVISE, OP_WPIN, OP_BATCH, OP_STREAM, OP_PRIVATE, OP_SCAN, OP_N
};

static const unsigned op_weight[OP_N] = {
	[OP_PWRITE] = 24, [OP_PREAD] = 14, [OP_GET] = 6,  [OP_FIND] = 5,   [OP_PUT] = 7,
	[OP_DIRTY] = 5,	  [OP_PAGE_READ] = 5, [OP_TRUNC] = 5, [OP_FSYNC] = 5, [OP_INVAL] = 4,
	[OP_PIN] = 5,	  [OP_UNPIN] = 4, [OP_REOPEN] = 2, [OP_OPEN2] = 2, [OP_OPEN_TRUNC] = 1,
	[OP_STATS] = 2,	  [OP_FADVISE] = 5, [OP_WPIN] = 5, [OP_BATCH] = 4, [OP_STREAM] = 4,
	[OP_PRIVATE] = 4, [OP_SCAN] = 3,
};

/* One call: its kind, its file, and raw random parameters that the call
 * reads modulo the state it meets (any subsequence stays valid). */
struct op {
	uint8_t k, file;
	uint64_t a, b, c;
};

static void ops_make(struct op *ops, size_t n, uint64_t seed)
{
	unsigned total = 0;
	uint64_t s = seed;

	for (int k = 0; k < OP_N; k++)
		total += op_weight[k];
	for (size_t i = 0; i < n; i++) {
		unsigned w = (unsigned)(tst_rnd(&s) % total);
		int k = 0;

		while (w >= op_weight[k])
			w -= op_weight[k++];
		ops[i].k = (uint8_t)k;
		ops[i].file = (uint8_t)(tst_rnd(&s) % 4);
		ops[i].a = tst_rnd(&s);
		ops[i].b = tst_rnd(&s);
		ops[i].c = tst_rnd(&s);
	}
}

/* ---- the state of one run ---- */

#define MAX_HELD 64
#define MAX_PINS 16
#define MAX_PRIVATE 4

struct mfile {
	char path[600];
	struct lpc_file *f;
	int opens;
	unsigned gen;	     /* counts last closes */
	unsigned char *ref;  /* cap bytes: zeros past size */
	uint64_t cap;
	uint64_t size;
};

struct held {
	struct lpc_page *p;
	unsigned file, gen;
	uint64_t index;
	bool cut; /* a truncate removed it from the cache */
};

/* A private page (lpc_page_alloc) and the salt of the bytes written into it. */
struct privpg {
	struct lpc_page *p;
	uint64_t salt;
};

struct pingrp {
	struct lpc_page *pages[MAX_HELD];
	unsigned n;
	unsigned file, gen;
	uint64_t first;	  /* the first page's index */
	uint64_t minsize; /* the file's smallest size since (a truncate cut pages from there) */
};

struct run {
	const struct mcfg *cfg;
	struct lpc_cache *c;
	struct mfile files[4];
	struct held h[MAX_HELD];
	unsigned nh;
	struct pingrp pins[MAX_PINS];
	unsigned npins;
	struct privpg priv[MAX_PRIVATE];
	unsigned npriv;
	unsigned budget, held_pages;
	uint64_t writes, fsyncs, invalidated, pin_ok, pin_ok_nonempty, pages_pinned, wpin_dirtied;
	unsigned char *buf, *buf2, *kbuf;
	struct iovec *iov;
	bool verbose;
	char msg[1024];
};

static bool no_closed_dirty; /* --no-closed-dirty: see usage */
/* Pages the streams of a variant's sequences dropped behind them (OP_SCAN
 * over a file larger than the cache: readahead.c A5), printed with its
 * calls: the part that they ran at all. */
static uint64_t model_dropped;

static bool fail(struct run *r, const char *fmt, ...)
{
	va_list ap;

	if (!r->msg[0]) {
		va_start(ap, fmt);
		vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
		va_end(ap);
	}
	return false;
}

static void say(struct run *r, const char *fmt, ...)
{
	va_list ap;

	if (!r->verbose)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

/* First offset where lpc's len bytes at got differ from the reference at
 * file offset off (zeros past the reference's size), or -1. */
static int64_t ref_diff(const struct mfile *m, uint64_t off, const unsigned char *got, size_t len)
{
	/* The reference is zero past its size: one memcmp when all agree. */
	if (off + len <= m->cap && !memcmp(got, m->ref + off, len))
		return -1;
	for (size_t i = 0; i < len; i++) {
		uint64_t pos = off + i;
		unsigned char want = pos < m->size ? m->ref[pos] : 0;

		if (got[i] != want)
			return (int64_t)pos;
	}
	return -1;
}

static bool check_bytes(struct run *r, const struct mfile *m, uint64_t off,
			const unsigned char *got, size_t len, const char *what)
{
	int64_t d = ref_diff(m, off, got, len);

	if (d < 0)
		return true;
	return fail(r, "%s: byte %lld is 0x%02x, the reference 0x%02x (size %llu)", what,
		    (long long)d, got[d - (int64_t)off],
		    (uint64_t)d < m->size ? m->ref[d] : 0, (unsigned long long)m->size);
}

/*
 * Reads the file at path through a fresh descriptor into out (at most max
 * bytes).  Return: its size (fstat), or -1.  With O_DIRECT where the file
 * system takes it: a buffered read would fill the kernel's page cache with
 * the file's pages while lpc writes them with O_DIRECT, and a direct write
 * that then cannot invalidate such a page (being read at that moment) makes
 * the kernel warn ("Page cache invalidation failure on direct I/O") and fail
 * the file's next fsync with -EIO (its errseq): a failure of the test's own
 * making, not lpc's.
 */
static int64_t kernel_read(const char *path, unsigned char *out, size_t max)
{
	enum { CHUNK = 1 << 20 };
	/* Per call, not per thread: a thread's buffer kept in a _Thread_local
	 * was lost when the threads mode's writers exited (a leak under
	 * LeakSanitizer, seen when no new thread reused the TLS block). */
	void *bounce = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_DIRECT);
	struct stat st;
	uint64_t done = 0;

#ifdef MODEL_RBD
	if (is_rbd(path)) {
		if (fd >= 0)
			close(fd);
		return rbd_storage_read(path, out, max);
	}
#endif
	if (fd < 0 && errno == EINVAL)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (posix_memalign(&bounce, 4096, CHUNK) != 0) {
		close(fd);
		return -1;
	}
	if (fstat(fd, &st) != 0) {
		free(bounce);
		close(fd);
		return -1;
	}
	while (done < (uint64_t)st.st_size && done < max) {
		ssize_t n = pread(fd, bounce, CHUNK, (off_t)done);
		size_t take;

		if (n <= 0)
			break;
		take = (size_t)n;
		if (take > max - done)
			take = (size_t)(max - done);
		memcpy(out + done, bounce, take);
		done += take;
		if ((size_t)n < CHUNK)
			break;
	}
	free(bounce);
	close(fd);
	return (int64_t)st.st_size;
}

/* Writes the file's pages that write(2) made and drops them from the
 * kernel's page cache, for the reason kernel_read gives. */
static void drop_page_cache(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	(void)fdatasync(fd);
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
}

/* The kernel's file, through a fresh descriptor, is exactly the reference. */
static bool check_kernel(struct run *r, struct mfile *m, const char *after)
{
	int64_t n = kernel_read(m->path, r->kbuf, r->cfg->maxb + r->cfg->ps);

	if (n != (int64_t)m->size)
		return fail(r, "after %s: the kernel's file is %lld bytes, the reference %llu", after,
			    (long long)n, (unsigned long long)m->size);
	if (!memcmp(r->kbuf, m->ref, m->size))
		return true;
	for (uint64_t i = 0; i < m->size; i++)
		if (r->kbuf[i] != m->ref[i])
			return fail(r, "after %s: the kernel's byte %llu is 0x%02x, the reference 0x%02x",
				    after, (unsigned long long)i, r->kbuf[i], m->ref[i]);
	return true;
}

static void ref_write(struct mfile *m, uint64_t off, const unsigned char *src, size_t len)
{
	memcpy(m->ref + off, src, len);
	if (off + len > m->size)
		m->size = off + len;
}

static void ref_resize(struct run *r, struct mfile *m, uint64_t size)
{
	if (size < m->size)
		memset(m->ref + size, 0, m->size - size);
	m->size = size;
	/* Held pages wholly past the new end leave the cache (J.4). */
	for (unsigned i = 0; i < r->nh; i++) {
		struct held *h = &r->h[i];

		if (&r->files[h->file] == m && h->gen == m->gen && h->index * r->cfg->ps >= size)
			h->cut = true;
	}
	for (unsigned i = 0; i < r->npins; i++) {
		struct pingrp *g = &r->pins[i];

		if (&r->files[g->file] == m && g->gen == m->gen && size < g->minsize)
			g->minsize = size;
	}
}

/* A byte range for a write or read: [*off, *off + *len) within lim. */
static void pick_range(const struct mcfg *cfg, const struct mfile *m, uint64_t a, uint64_t b,
		       uint64_t lim, uint64_t *off, size_t *len)
{
	size_t ps = cfg->ps;
	uint64_t l;

	switch (b % 4) {
	case 0: l = 1 + (b >> 8) % 64; break;
	case 1: l = 1 + (b >> 8) % ps; break;
	case 2: l = ps * (1 + (b >> 8) % 2); break;
	default: l = 1 + (b >> 8) % (3 * ps); break;
	}
	if (l > lim)
		l = lim;
	switch (a % 4) {
	case 0: *off = ((a >> 8) % (lim / ps + 1)) * ps; break; /* page aligned */
	case 1: /* near the end of the file */
		*off = m->size + ps / 2 > (a >> 8) % (2 * ps) ? m->size + ps / 2 - (a >> 8) % (2 * ps) : 0;
		break;
	default: *off = (a >> 8) % (lim + 1); break;
	}
	if (*off + l > lim)
		*off = lim - l;
	*len = (size_t)l;
}

static void data_fill(uint64_t seed, uint64_t off, unsigned char *buf, size_t len)
{
	tst_file_bytes(seed | 1, off, buf, len);
}

/* The page at index of m: lpc's page data against the reference. */
static bool check_page(struct run *r, const struct mfile *m, uint64_t index, const void *data,
		       const char *what)
{
	return check_bytes(r, m, index * r->cfg->ps, data, r->cfg->ps, what);
}

static void page_copy_fn(const void *data, size_t len, void *arg)
{
	memcpy(arg, data, len);
}

static int file_open(struct run *r, struct mfile *m, int flags, struct lpc_file **out)
{
	return model_open(r->c, r->cfg->backend, r->cfg->ps, m->path, flags, out);
}

/* Closes every open of m; the last close leaves the kernel's file equal to
 * the reference.  Return: whether all went as the contract says. */
static bool close_all(struct run *r, struct mfile *m)
{
	while (m->opens > 0) {
		int rc = lpc_file_close(m->f);

		say(r, "    lpc_file_close(f%d) = %d\n", (int)(m - r->files), rc);
		if (rc != 0)
			return fail(r, "lpc_file_close = %d", rc);
		m->opens--;
	}
	m->f = NULL;
	m->gen++;
	return check_kernel(r, m, "the last lpc_file_close");
}

/* Every private page still holds what its owner wrote into it. */
static bool check_private(struct run *r, const char *after)
{
	for (unsigned i = 0; i < r->npriv; i++) {
		const unsigned char *d = lpc_page_data(r->priv[i].p);

		tst_file_bytes(r->priv[i].salt, 0, r->buf2, r->cfg->ps);
		if (memcmp(d, r->buf2, r->cfg->ps)) {
			size_t k = 0;

			while (d[k] == r->buf2[k])
				k++;
			return fail(r, "after %s: private page #%u's byte %zu is 0x%02x, its owner "
				    "wrote 0x%02x (the frame was reused while held)", after, i, k, d[k],
				    r->buf2[k]);
		}
	}
	return true;
}

static bool apply_one(struct run *r, const struct op *o);

static const char *const op_name[OP_N] = {
	[OP_PWRITE] = "lpc_pwrite", [OP_PREAD] = "lpc_pread", [OP_GET] = "lpc_page_get",
	[OP_FIND] = "lpc_page_find", [OP_PUT] = "lpc_page_put", [OP_DIRTY] = "lpc_page_mark_dirty",
	[OP_PAGE_READ] = "lpc_page_read", [OP_TRUNC] = "lpc_truncate", [OP_FSYNC] = "lpc_fsync",
	[OP_INVAL] = "lpc_invalidate", [OP_PIN] = "lpc_pin", [OP_UNPIN] = "lpc_unpin",
	[OP_REOPEN] = "a reopen", [OP_OPEN2] = "a second open", [OP_OPEN_TRUNC] = "an O_TRUNC open",
	[OP_STATS] = "lpc_stats", [OP_FADVISE] = "lpc_fadvise", [OP_WPIN] = "a write pin",
	[OP_BATCH] = "lpc_page_get_batch", [OP_STREAM] = "a read stream",
	[OP_PRIVATE] = "lpc_page_alloc or its put", [OP_SCAN] = "a sequential scan",
};

/* One call, then the private pages' bytes checked. */
static bool apply(struct run *r, const struct op *o)
{
	if (!apply_one(r, o))
		return false;
	return check_private(r, op_name[o->k]);
}

static bool apply_one(struct run *r, const struct op *o)
{
	const struct mcfg *cfg = r->cfg;
	size_t ps = cfg->ps;
	unsigned fi = o->file % cfg->nfiles;
	struct mfile *m = &r->files[fi];
	struct lpc_file *f = m->f;
	uint64_t maxpages = cfg->maxb / ps;
	uint64_t off, index;
	size_t len;
	ssize_t n;
	int rc;

	switch (o->k) {
	case OP_PWRITE:
		pick_range(cfg, m, o->a, o->b, cfg->maxb, &off, &len);
		data_fill(o->c, off, r->buf, len);
		n = lpc_pwrite(f, r->buf, len, off);
		say(r, "lpc_pwrite(f%u, off %llu, len %zu) = %zd\n", fi, (unsigned long long)off, len, n);
		r->writes++;
		if (n != (ssize_t)len)
			return fail(r, "lpc_pwrite(off %llu, len %zu) = %zd", (unsigned long long)off, len, n);
		ref_write(m, off, r->buf, len);
		return true;
	case OP_PREAD: {
		size_t want;

		pick_range(cfg, m, o->a, o->b, cfg->maxb + ps, &off, &len);
		n = lpc_pread(f, r->buf, len, off);
		want = off >= m->size ? 0 : (size_t)(m->size - off < len ? m->size - off : len);
		say(r, "lpc_pread(f%u, off %llu, len %zu) = %zd\n", fi, (unsigned long long)off, len, n);
		if (n != (ssize_t)want)
			return fail(r, "lpc_pread(off %llu, len %zu) = %zd, want %zu (size %llu)",
				    (unsigned long long)off, len, n, want, (unsigned long long)m->size);
		return check_bytes(r, m, off, r->buf, want, "lpc_pread");
	}
	case OP_SCAN: {
		/* A sequential reader: lpc_pread in calls of one size (a
		 * page, part of one, or a few pages) from where it starts to
		 * the end of the file, or three caches' worth: its misses
		 * make a stream, whose markers read the next windows and
		 * drop the pages behind it over a file larger than the cache
		 * (readahead.c A5); its calls past 256 KiB are bulk reads
		 * (read.c).  Every call checked as OP_PREAD's. */
		static const size_t div[4] = { 1, 2, 3, 1 };
		size_t csz = o->b % 4 == 3 ? 3 * ps : ps / div[o->b % 4] + (o->b % 4 == 2);
		uint64_t left = 3ull * cfg->frames * ps;

		off = o->a % 2 ? (o->a >> 8) % (maxpages + 1) * ps : (o->a >> 8) % (cfg->maxb + 1);
		say(r, "scan(f%u, off %llu, calls of %zu)\n", fi, (unsigned long long)off, csz);
		for (;;) {
			size_t want = off >= m->size ? 0
						     : (size_t)(m->size - off < csz ? m->size - off : csz);

			n = lpc_pread(f, r->buf, csz, off);
			if (n != (ssize_t)want)
				return fail(r, "scan: lpc_pread(off %llu, len %zu) = %zd, want %zu (size %llu)",
					    (unsigned long long)off, csz, n, want,
					    (unsigned long long)m->size);
			if (!check_bytes(r, m, off, r->buf, want, "scan: lpc_pread"))
				return false;
			if (!want || left <= want)
				return true;
			off += want;
			left -= want;
		}
	}
	case OP_GET:
	case OP_FIND: {
		struct lpc_page *p = NULL;
		bool past;

		if (r->held_pages >= r->budget || r->nh >= MAX_HELD)
			return true;
		index = o->a % (maxpages + 1);
		past = index * ps >= m->size;
		if (o->k == OP_GET) {
			rc = lpc_page_get(f, index, 0, &p);
			say(r, "lpc_page_get(f%u, %llu) = %d\n", fi, (unsigned long long)index, rc);
			if (past && rc != -ENXIO)
				return fail(r, "lpc_page_get(%llu) past the end (size %llu) = %d",
					    (unsigned long long)index, (unsigned long long)m->size, rc);
			if (!past && rc != 0)
				return fail(r, "lpc_page_get(%llu) (size %llu) = %d",
					    (unsigned long long)index, (unsigned long long)m->size, rc);
		} else {
			rc = lpc_page_find(f, index, &p);
			say(r, "lpc_page_find(f%u, %llu) = %d\n", fi, (unsigned long long)index, rc);
			if (past && rc != -ENOENT)
				return fail(r, "lpc_page_find(%llu) past the end (size %llu) = %d",
					    (unsigned long long)index, (unsigned long long)m->size, rc);
			if (!past && rc != 0 && rc != -ENOENT && rc != -EAGAIN)
				return fail(r, "lpc_page_find(%llu) = %d", (unsigned long long)index, rc);
		}
		if (rc != 0)
			return true;
		r->h[r->nh++] = (struct held){ .p = p, .file = fi, .gen = m->gen, .index = index };
		r->held_pages++;
		return check_page(r, m, index, lpc_page_data(p),
				  o->k == OP_GET ? "lpc_page_get" : "lpc_page_find");
	}
	case OP_BATCH:
	case OP_STREAM: {
		/* lpc_page_get_batch, or a stream over an array consumed up to a
		 * point (the consumer may stop early): random, clustered and
		 * repeated indices, some past the end; every entry its page or
		 * -ENXIO, byte for byte, put at once. */
		uint64_t idx[16];
		struct lpc_page *pg[16];
		int errs[16];
		unsigned nb = 1 + (unsigned)(o->c % 16), stop_at, i;
		uint64_t sd = o->b;

		if (r->held_pages + nb > r->budget)
			return true;
		for (i = 0; i < nb; i++) {
			uint64_t x = tst_rnd(&sd);

			idx[i] = x % 3 == 0 && i ? idx[i - 1] + (x >> 8) % 2 : (x >> 8) % (maxpages + 1);
		}
		if (o->k == OP_BATCH) {
			int got = lpc_page_get_batch(f, idx, nb, 0, pg, errs);
			int want = 0;
			bool ok = true;

			say(r, "lpc_page_get_batch(f%u, %u entries from %llu) = %d\n", fi, nb,
			    (unsigned long long)idx[0], got);
			for (i = 0; i < nb && ok; i++) {
				bool past = idx[i] * ps >= m->size;

				want += !past;
				if (errs[i] != (past ? -ENXIO : 0) || (pg[i] == NULL) != past)
					ok = fail(r, "lpc_page_get_batch entry %u (page %llu, size %llu): %d",
						  i, (unsigned long long)idx[i],
						  (unsigned long long)m->size, errs[i]);
				else if (!past)
					ok = check_page(r, m, idx[i], lpc_page_data(pg[i]),
							"lpc_page_get_batch");
			}
			for (i = 0; i < nb; i++)
				lpc_page_put(pg[i]);
			if (ok && got != want)
				ok = fail(r, "lpc_page_get_batch = %d, want %d", got, want);
			return ok;
		}
		{
			struct lpc_stream_opts so = { .max_distance = (uint32_t)(o->c >> 8) % 20,
						      .max_pages = (uint32_t)(o->c >> 16) % 6,
						      .indices = idx, .n = nb };
			void *users[16];
			struct lpc_stream *st = NULL;
			bool ok = true;

			for (i = 0; i < nb; i++)
				users[i] = &idx[i];
			so.users = users;
			stop_at = (unsigned)(o->a % (nb + 2)); /* > nb: to the end and past */
			rc = lpc_stream_open(f, NULL, NULL, &so, &st);
			say(r, "lpc_stream_open(f%u, %u entries, distance %u, pages %u) = %d\n", fi, nb,
			    so.max_distance, so.max_pages, rc);
			if (rc)
				return fail(r, "lpc_stream_open = %d", rc);
			for (i = 0; i < stop_at && ok; i++) {
				struct lpc_page *p = NULL;
				void *u = NULL;
				bool past = i < nb && idx[i] * ps >= m->size;

				rc = lpc_stream_next(st, &p, &u);
				if (i >= nb) {
					if (rc != 0)
						ok = fail(r, "lpc_stream_next past the list = %d", rc);
					break;
				}
				if (rc != (past ? -ENXIO : 1) || u != users[i])
					ok = fail(r, "lpc_stream_next entry %u (page %llu, size %llu) = %d",
						  i, (unsigned long long)idx[i],
						  (unsigned long long)m->size, rc);
				else if (!past)
					ok = check_page(r, m, idx[i], lpc_page_data(p), "lpc_stream_next");
				lpc_page_put(p);
			}
			lpc_stream_close(st);
			say(r, "lpc_stream_close after %u entries\n", i);
			return ok;
		}
	}
	case OP_PUT: {
		unsigned i;

		if (!r->nh)
			return true;
		i = (unsigned)(o->a % r->nh);
		say(r, "lpc_page_put(held #%u: f%u page %llu)\n", i, r->h[i].file,
		    (unsigned long long)r->h[i].index);
		lpc_page_put(r->h[i].p);
		r->h[i] = r->h[--r->nh];
		r->held_pages--;
		return true;
	}
	case OP_DIRTY: {
		struct held *h;
		struct mfile *hm;
		bool cached;
		unsigned char *data;
		uint64_t start, end, o1;
		size_t l1;

		if (!r->nh)
			return true;
		h = &r->h[o->a % r->nh];
		hm = &r->files[h->file];
		if (no_closed_dirty && h->gen != hm->gen)
			return true;
		cached = !h->cut && h->gen == hm->gen;
		start = h->index * ps;
		end = start + ps;
		if (cached && end > hm->size)
			end = hm->size; /* change only bytes inside the file */
		if (end <= start)
			end = start + 1; /* not cached: the change is never seen */
		o1 = start + (o->b >> 4) % (end - start);
		l1 = 1 + (size_t)((o->c >> 4) % (end - o1));
		lpc_page_lock(h->p);
		data = lpc_page_data(h->p);
		data_fill(o->c, o1, data + (o1 - start), l1);
		rc = lpc_page_mark_dirty(h->p);
		if (rc == 0 && cached)
			ref_write(hm, o1, data + (o1 - start), l1);
		lpc_page_unlock(h->p);
		say(r, "lpc_page_lock/change [%llu, +%zu)/lpc_page_mark_dirty(f%u page %llu%s) = %d\n",
		    (unsigned long long)o1, l1, h->file, (unsigned long long)h->index,
		    cached ? "" : ", no longer cached", rc);
		if (rc != (cached ? 0 : -ENOENT))
			return fail(r, "lpc_page_mark_dirty(page %llu, %s) = %d",
				    (unsigned long long)h->index,
				    cached ? "cached" : h->gen != hm->gen ? "closed" : "truncated away", rc);
		return true;
	}
	case OP_PAGE_READ:
		index = o->a % (maxpages + 1);
		memset(r->buf2, 0xa5, ps);
		rc = lpc_page_read(f, index, 0, page_copy_fn, r->buf2);
		say(r, "lpc_page_read(f%u, %llu) = %d\n", fi, (unsigned long long)index, rc);
		if (rc != (index * ps >= m->size ? -ENXIO : 0))
			return fail(r, "lpc_page_read(%llu) (size %llu) = %d", (unsigned long long)index,
				    (unsigned long long)m->size, rc);
		return rc ? true : check_page(r, m, index, r->buf2, "lpc_page_read");
	case OP_TRUNC: {
		uint64_t size;

		switch (o->a % 5) {
		case 0: size = 0; break;
		case 1: size = ((o->b >> 4) % (maxpages + 1)) * ps; break;
		case 2: size = m->size > (o->b >> 4) % ps ? m->size - (o->b >> 4) % ps : 0; break;
		case 3: size = m->size + (o->b >> 4) % (2 * ps); break;
		default: size = (o->b >> 4) % (cfg->maxb + 1); break;
		}
		if (size > cfg->maxb)
			size = cfg->maxb;
		rc = lpc_truncate(f, size);
		say(r, "lpc_truncate(f%u, %llu) = %d\n", fi, (unsigned long long)size, rc);
		if (rc != 0)
			return fail(r, "lpc_truncate(%llu) = %d", (unsigned long long)size, rc);
		ref_resize(r, m, size);
		return true;
	}
	case OP_FSYNC:
		rc = lpc_fsync(f);
		say(r, "lpc_fsync(f%u) = %d\n", fi, rc);
		r->fsyncs++;
		if (rc != 0)
			return fail(r, "lpc_fsync = %d", rc);
		return check_kernel(r, m, "lpc_fsync");
	case OP_INVAL: {
		uint64_t first, last;

		pick_range(cfg, m, o->a, o->b, cfg->maxb + ps, &off, &len);
		if (o->c % 4 == 0)
			len = 0; /* to the end of the file */
		rc = lpc_invalidate(f, off, len);
		say(r, "lpc_invalidate(f%u, off %llu, len %zu) = %d\n", fi, (unsigned long long)off,
		    len, rc);
		first = off / ps;
		last = len ? (off + len - 1) / ps : maxpages + 1;
		if (rc < 0 || (uint64_t)rc > last - first + 1)
			return fail(r, "lpc_invalidate(off %llu, len %zu) = %d", (unsigned long long)off,
				    len, rc);
		r->invalidated += (uint64_t)rc;
		return true;
	}
	case OP_PIN: {
		struct pingrp *g;
		unsigned max;
		uint64_t end, want;
		size_t cut, len2;

		if (r->npins >= MAX_PINS)
			return true;
		g = &r->pins[r->npins];
		max = r->budget > r->held_pages ? r->budget - r->held_pages : 0;
		if (o->c % 8 == 0)
			max = 1; /* -E2BIG for most ranges */
		pick_range(cfg, m, o->a, o->b, cfg->maxb + ps, &off, &len);
		if (o->c % 16 == 1)
			len = 0;
		rc = lpc_pin(f, off, len, LPC_PIN_READ, g->pages, max);
		say(r, "lpc_pin(f%u, off %llu, len %zu, max %u) = %d\n", fi, (unsigned long long)off,
		    len, max, rc);
		if (len == 0) {
			if (rc != 0 && !(rc == -ENXIO && off >= m->size))
				return fail(r, "lpc_pin(len 0) = %d", rc);
			if (rc == 0)
				r->pin_ok++;
			return true;
		}
		if (off >= m->size) {
			if (rc != -ENXIO)
				return fail(r, "lpc_pin(off %llu) at or past the end (size %llu) = %d",
					    (unsigned long long)off, (unsigned long long)m->size, rc);
			return true;
		}
		end = off + len < m->size ? off + len : m->size;
		want = (end + ps - 1) / ps - off / ps;
		if (want > max) {
			if (rc != -E2BIG)
				return fail(r, "lpc_pin(off %llu, len %zu): %llu pages, max %u: = %d",
					    (unsigned long long)off, len, (unsigned long long)want, max, rc);
			return true;
		}
		if (rc != (int)want)
			return fail(r, "lpc_pin(off %llu, len %zu) (size %llu) = %d, want %llu pages",
				    (unsigned long long)off, len, (unsigned long long)m->size, rc,
				    (unsigned long long)want);
		g->n = (unsigned)rc;
		g->file = fi;
		g->gen = m->gen;
		g->first = off / ps;
		g->minsize = m->size;
		r->npins++;
		r->held_pages += g->n;
		r->pin_ok++;
		r->pin_ok_nonempty++;
		r->pages_pinned += g->n;
		for (unsigned i = 0; i < g->n; i++)
			if (!check_page(r, m, off / ps + i, lpc_page_data(g->pages[i]), "lpc_pin"))
				return false;
		/* lpc_pin_iov: any length the pages cover, not one byte more. */
		cut = (size_t)(end - off);
		len2 = cut + (size_t)((o->c >> 8) % ((size_t)g->n * ps - off % ps - cut + 1));
		rc = lpc_pin_iov(g->pages, g->n, off, len2, r->iov);
		if (rc < 1 || rc > (int)g->n)
			return fail(r, "lpc_pin_iov(%u pages, off %llu, len %zu) = %d", g->n,
				    (unsigned long long)off, len2, rc);
		{
			size_t done = 0;

			for (int i = 0; i < rc; i++) {
				if (done + r->iov[i].iov_len > len2)
					return fail(r, "lpc_pin_iov: entries longer than %zu", len2);
				if (!check_bytes(r, m, off + done, r->iov[i].iov_base, r->iov[i].iov_len,
						 "lpc_pin_iov"))
					return false;
				done += r->iov[i].iov_len;
			}
			if (done != len2)
				return fail(r, "lpc_pin_iov: entries cover %zu bytes, want %zu", done, len2);
		}
		rc = lpc_pin_iov(g->pages, g->n, off, (size_t)g->n * ps - off % ps + 1, r->iov);
		if (rc != -EINVAL)
			return fail(r, "lpc_pin_iov past the pages = %d", rc);
		return true;
	}
	case OP_WPIN: {
		struct lpc_page *pages[8];
		unsigned max = r->budget > r->held_pages ? r->budget - r->held_pages : 0;
		uint64_t want;
		size_t done = 0;
		int k;

		if (max > 8)
			max = 8;
		if (o->c % 8 == 0)
			max = 1; /* -E2BIG for most ranges */
		pick_range(cfg, m, o->a, o->b, cfg->maxb, &off, &len);
		want = (off + len - 1) / ps - off / ps + 1;
		rc = lpc_pin(f, off, len, LPC_PIN_WRITE, pages, max);
		say(r, "lpc_pin(f%u, off %llu, len %zu, LPC_PIN_WRITE, max %u) = %d\n", fi,
		    (unsigned long long)off, len, max, rc);
		if (want > max) {
			if (rc != -E2BIG)
				return fail(r, "lpc_pin(WRITE, off %llu, len %zu): %llu pages, max %u: = %d",
					    (unsigned long long)off, len, (unsigned long long)want, max, rc);
			return true;
		}
		if (rc != (int)want)
			return fail(r, "lpc_pin(WRITE, off %llu, len %zu) = %d, want %llu pages",
				    (unsigned long long)off, len, rc, (unsigned long long)want);
		r->pin_ok++;
		r->pin_ok_nonempty++;
		r->pages_pinned += (uint64_t)rc;
		/* Below the old size the pages hold the file's bytes (read first
		 * where the range covers part of a page). */
		for (int i = 0; i < rc; i++) {
			uint64_t idx = off / ps + (uint64_t)i;

			if (idx * ps < m->size && (off <= idx * ps ? off + len < (idx + 1) * ps : true) &&
			    !check_bytes(r, m, idx * ps, lpc_page_data(pages[i]),
					 (size_t)(m->size - idx * ps < ps ? m->size - idx * ps : ps),
					 "lpc_pin(WRITE) of a partly covered page"))
				return false;
		}
		k = lpc_pin_iov(pages, (unsigned)rc, off, len, r->iov);
		if (k <= 0)
			return fail(r, "lpc_pin_iov(write pin, %d pages) = %d", rc, k);
		data_fill(o->c, off, r->buf, len);
		for (int i = 0; i < k; i++) {
			memcpy(r->iov[i].iov_base, r->buf + done, r->iov[i].iov_len);
			done += r->iov[i].iov_len;
		}
		if (done != len)
			return fail(r, "lpc_pin_iov(write pin): %zu bytes, want %zu", done, len);
		lpc_unpin(pages, (unsigned)rc, LPC_PIN_WRITE);
		say(r, "  wrote [%llu, +%zu) through the pin; lpc_unpin(LPC_PIN_WRITE)\n",
		    (unsigned long long)off, len);
		r->wpin_dirtied += (uint64_t)rc;
		ref_write(m, off, r->buf, len);
		return true;
	}
	case OP_UNPIN: {
		unsigned i;

		if (!r->npins)
			return true;
		i = (unsigned)(o->a % r->npins);
		say(r, "lpc_unpin(pin #%u: %u pages)\n", i, r->pins[i].n);
		lpc_unpin(r->pins[i].pages, r->pins[i].n, LPC_PIN_READ);
		r->held_pages -= r->pins[i].n;
		r->pins[i] = r->pins[--r->npins];
		return true;
	}
	case OP_REOPEN: {
		bool trunc = o->a % 3 == 0;

		if (!close_all(r, m))
			return false;
		if (model_is_backend(cfg->backend)) {
			/* O_TRUNC is not the backend open's: open, then cut. */
			rc = file_open(r, m, O_RDWR, &m->f);
			say(r, "lpc_file_open_backend(f%u, O_RDWR) = %d\n", fi, rc);
			if (rc != 0 || !m->f)
				return fail(r, "lpc_file_open_backend after the last close = %d", rc);
			m->opens = 1;
			if (trunc) {
				rc = lpc_truncate(m->f, 0);
				say(r, "lpc_truncate(f%u, 0) = %d\n", fi, rc);
				if (rc != 0)
					return fail(r, "lpc_truncate(0) after the reopen = %d", rc);
				ref_resize(r, m, 0);
			}
			return true;
		}
		rc = file_open(r, m, O_RDWR | (trunc ? O_TRUNC : 0), &m->f);
		say(r, "lpc_file_open(f%u, O_RDWR%s) = %d\n", fi, trunc ? "|O_TRUNC" : "", rc);
		if (rc != 0 || !m->f)
			return fail(r, "lpc_file_open after the last close = %d", rc);
		m->opens = 1;
		if (trunc)
			ref_resize(r, m, 0);
		return true;
	}
	case OP_OPEN2: {
		struct lpc_file *f2 = NULL;

		if (m->opens >= 2) {
			rc = lpc_file_close(f);
			say(r, "lpc_file_close(f%u) (not the last) = %d\n", fi, rc);
			if (rc != 0)
				return fail(r, "lpc_file_close (not the last) = %d", rc);
			m->opens--;
			return true;
		}
		rc = file_open(r, m, O_RDWR, &f2);
		say(r, "lpc_file_open(f%u, O_RDWR) again = %d\n", fi, rc);
		if (rc != 0)
			return fail(r, "a second lpc_file_open = %d", rc);
		m->opens++;
		if (f2 != f)
			return fail(r, "a second lpc_file_open returned another lpc_file (A.5)");
		return true;
	}
	case OP_OPEN_TRUNC: {
		struct lpc_file *f2 = NULL;

		rc = file_open(r, m, O_RDWR | O_TRUNC, &f2);
		say(r, "lpc_file_open(f%u, O_RDWR|O_TRUNC) while open = %d\n", fi, rc);
		if (model_is_backend(cfg->backend)) {
			if (rc == 0) {
				m->opens++;
				return fail(r, "lpc_file_open_backend(O_TRUNC) = 0, want -EINVAL");
			}
			if (rc != -EINVAL)
				return fail(r, "lpc_file_open_backend(O_TRUNC) = %d, want -EINVAL", rc);
			return true;
		}
		if (rc == 0) {
			m->opens++;
			return fail(r, "lpc_file_open(O_TRUNC) of an open file = 0, want -EBUSY");
		}
		if (rc != -EBUSY)
			return fail(r, "lpc_file_open(O_TRUNC) of an open file = %d, want -EBUSY", rc);
		return true;
	}
	case OP_FADVISE: {
		/* All five advices, an unknown one now and then; ranges as the
		 * reads', len 0 (to the end), far past the end, past 2^64. */
		static const int adv[5] = { LPC_FADV_NORMAL, LPC_FADV_RANDOM, LPC_FADV_SEQUENTIAL,
					    LPC_FADV_WILLNEED, LPC_FADV_DONTNEED };
		int advice = adv[o->c % 5];
		bool bad = false;
		struct lpc_stats s0, s1;
		uint64_t first, last, dropped = 0;
		uint64_t l64;

		pick_range(cfg, m, o->a, o->b, cfg->maxb + ps, &off, &len);
		l64 = len;
		switch ((o->c >> 4) % 16) {
		case 0: case 1: case 2: l64 = 0; break;			/* to the end */
		case 3: off = m->size + (o->a >> 16) % (4 * cfg->maxb + 1); break; /* past the end */
		case 4: off = UINT64_MAX - (o->a >> 16) % 4096; l64 = 0; break; /* far past, len 0 */
		case 5: /* off + len past 2^64: -EINVAL */
			off = UINT64_MAX - (o->a >> 16) % 4096;
			l64 = UINT64_MAX - off + 2 + (o->b >> 16) % 4096;
			bad = true;
			break;
		case 6: /* an unknown advice: -EINVAL */
			advice = (o->c >> 12) % 2 ? -1 - (int)((o->c >> 13) % 8) : 5 + (int)((o->c >> 13) % 64);
			bad = true;
			break;
		default: break;
		}
		if (advice == LPC_FADV_DONTNEED)
			lpc_stats(r->c, &s0);
		rc = lpc_fadvise(f, off, l64, advice);
		say(r, "lpc_fadvise(f%u, off %llu, len %llu, advice %d) = %d\n", fi,
		    (unsigned long long)off, (unsigned long long)l64, advice, rc);
		if (rc != (bad ? -EINVAL : 0))
			return fail(r, "lpc_fadvise(off %llu, len %llu, advice %d) = %d, want %d",
				    (unsigned long long)off, (unsigned long long)l64, advice, rc,
				    bad ? -EINVAL : 0);
		if (advice == LPC_FADV_DONTNEED && !bad) {
			lpc_stats(r->c, &s1);
			dropped = s1.invalidated - s0.invalidated;
			first = off / ps;
			last = l64 ? (off + l64 - 1) / ps : UINT64_MAX;
			if (last > maxpages + 1)
				last = maxpages + 1;
			if (dropped > (first <= last ? last - first + 1 : 0))
				return fail(r, "lpc_fadvise(DONTNEED, off %llu, len %llu): %llu pages dropped",
					    (unsigned long long)off, (unsigned long long)l64,
					    (unsigned long long)dropped);
			r->invalidated += dropped;
			/* Held and pinned pages of this file stay cached: found
			 * again (the same page), or in flight (-EAGAIN), never
			 * -ENOENT. */
			for (unsigned i = 0; i < r->nh + r->npins; i++) {
				struct lpc_page *hp, *q = NULL;
				uint64_t hidx;
				unsigned hf, hg;

				if (i < r->nh) {
					if (r->h[i].cut)
						continue;
					hp = r->h[i].p, hidx = r->h[i].index, hf = r->h[i].file, hg = r->h[i].gen;
				} else {
					struct pingrp *g = &r->pins[i - r->nh];
					unsigned k;

					if (!g->n)
						continue;
					k = (unsigned)(o->a % g->n);
					hp = g->pages[k], hidx = g->first + k, hf = g->file, hg = g->gen;
					if (hidx * ps >= g->minsize)
						continue; /* a truncate cut it */
				}
				if (hf != fi || hg != m->gen || hidx * ps >= m->size)
					continue;
				rc = lpc_page_find(f, hidx, &q);
				if (rc == 0)
					lpc_page_put(q);
				if (rc == -ENOENT || (rc == 0 && q != hp))
					return fail(r, "lpc_fadvise(DONTNEED): %s page %llu %s", i < r->nh ? "held" : "pinned",
						    (unsigned long long)hidx, rc ? "was dropped" : "was replaced");
			}
		}
		if (bad || off >= m->size)
			return true;
		/* No advice changes a byte: read one page of the range now
		 * (DONTNEED: from the disk or a kept dirty page; WILLNEED: the
		 * page it read ahead). */
		{
			size_t want, rl = ps;

			index = off / ps + (o->b >> 24) % 4;
			if (index * ps >= m->size)
				index = off / ps;
			want = m->size - index * ps < rl ? (size_t)(m->size - index * ps) : rl;
			n = lpc_pread(f, r->buf, rl, index * ps);
			if (n != (ssize_t)want)
				return fail(r, "lpc_pread after lpc_fadvise(advice %d) = %zd, want %zu", advice, n,
					    want);
			return check_bytes(r, m, index * ps, r->buf, want, "lpc_pread after lpc_fadvise");
		}
	}
	case OP_PRIVATE: {
		struct lpc_page *p = NULL;
		void *d;

		/* a put (of a random one) when b says so or no more may be held */
		if (r->npriv && (o->b % 3 == 0 || r->npriv == MAX_PRIVATE ||
				 r->held_pages >= r->budget)) {
			unsigned i = (unsigned)(o->a % r->npriv);

			say(r, "lpc_page_put(private #%u)\n", i);
			lpc_page_put(r->priv[i].p);
			r->priv[i] = r->priv[--r->npriv];
			r->held_pages--;
			return true;
		}
		if (r->npriv == MAX_PRIVATE || r->held_pages >= r->budget)
			return true;
		rc = lpc_page_alloc(r->c, &p);
		say(r, "lpc_page_alloc = %d\n", rc);
		if (rc != 0 || !p)
			return fail(r, "lpc_page_alloc = %d with %u of %u frames held", rc,
				    r->held_pages, cfg->frames);
		d = lpc_page_data(p);
		if (!d || (uintptr_t)d % 512) {
			lpc_page_put(p);
			return fail(r, "lpc_page_alloc: data %p, not aligned for O_DIRECT", d);
		}
		r->priv[r->npriv++] = (struct privpg){ .p = p, .salt = o->c | 1 };
		r->held_pages++;
		tst_file_bytes(o->c | 1, 0, d, ps);
		if (o->b % 5 == 1) {
			/* locked, so that only "private" can make it -EINVAL */
			lpc_page_lock(p);
			rc = lpc_page_mark_dirty(p);
			lpc_page_unlock(p);
			say(r, "lpc_page_mark_dirty(private, locked) = %d\n", rc);
			if (rc != -EINVAL)
				return fail(r, "lpc_page_mark_dirty of a private page = %d, want -EINVAL",
					    rc);
		}
		return true;
	}
	case OP_STATS: {
		struct lpc_stats s;

		lpc_stats(r->c, &s);
		say(r, "lpc_stats\n");
		if (s.lookups != s.hits + s.misses)
			return fail(r, "lpc_stats: lookups %llu != hits %llu + misses %llu",
				    (unsigned long long)s.lookups, (unsigned long long)s.hits,
				    (unsigned long long)s.misses);
		if (s.frames != cfg->frames || s.frames_free > s.frames || s.dirty_pages > s.frames)
			return fail(r, "lpc_stats: frames %llu (want %u), free %llu, dirty %llu",
				    (unsigned long long)s.frames, cfg->frames,
				    (unsigned long long)s.frames_free, (unsigned long long)s.dirty_pages);
		if (s.writes != r->writes || s.fsyncs != r->fsyncs || s.invalidated != r->invalidated ||
		    s.pages_pinned != r->pages_pinned)
			return fail(r, "lpc_stats: writes %llu (want %llu), fsyncs %llu (%llu), "
				    "invalidated %llu (%llu), pages_pinned %llu (%llu)",
				    (unsigned long long)s.writes, (unsigned long long)r->writes,
				    (unsigned long long)s.fsyncs, (unsigned long long)r->fsyncs,
				    (unsigned long long)s.invalidated, (unsigned long long)r->invalidated,
				    (unsigned long long)s.pages_pinned, (unsigned long long)r->pages_pinned);
		if (s.wpin_dirtied != r->wpin_dirtied)
			return fail(r, "lpc_stats: wpin_dirtied %llu, want %llu",
				    (unsigned long long)s.wpin_dirtied, (unsigned long long)r->wpin_dirtied);
		if (s.pin_fast + s.pin_slow < r->pin_ok_nonempty || s.pin_fast + s.pin_slow > r->pin_ok)
			return fail(r, "lpc_stats: pin_fast %llu + pin_slow %llu, %llu calls pinned pages",
				    (unsigned long long)s.pin_fast, (unsigned long long)s.pin_slow,
				    (unsigned long long)r->pin_ok_nonempty);
		return true;
	}
	}
	return true;
}

static unsigned run_counter;
static uint64_t run_deadline; /* nonzero: run_ops stops its calls then */
static size_t run_ran;	      /* the calls the last run_ops made */
static uint64_t shrink_until; /* shrinking and its replays stop then */

/*
 * Runs ops[0..n) from a fresh cache and fresh files.  Return: the index of
 * the call that failed (n: the teardown), or -1; msg: what failed.
 */
static long run_ops(const struct mcfg *cfg, const struct op *ops, size_t n, bool verbose,
		    char *msg, size_t msglen)
{
	struct run *r = calloc(1, sizeof(*r));
	struct lpc_config lc;
	long bad = -1;
	uint64_t made0, released0, breaches0;
	size_t i = 0;
	int rc;

	REQUIRE(r);
	r->cfg = cfg;
	r->verbose = verbose;
	r->budget = cfg->frames / 4 ? cfg->frames / 4 : 1;
	r->buf = malloc(cfg->maxb + 2 * cfg->ps);
	r->buf2 = malloc(cfg->ps);
	r->kbuf = malloc(cfg->maxb + 2 * cfg->ps);
	r->iov = calloc(MAX_HELD, sizeof(*r->iov));
	REQUIRE(r->buf && r->buf2 && r->kbuf && r->iov);
	lpc_config_init(&lc);
	lc.cache_bytes = (size_t)cfg->frames * cfg->ps;
	lc.page_size = cfg->ps;
	lc.io_backend = model_is_backend(cfg->backend) ? LPC_IO_SYNC : cfg->backend;
	lc.lookup_mode = cfg->lookup;
	lc.alloc_wait_ms = 5000; /* a loaded machine must not make E.1's -ENOMEM */
	made0 = atomic_load(&tub_made);
	released0 = atomic_load(&tub_releases);
	breaches0 = atomic_load(&tub_breaches);
	lc.dirty_expire_ms = cfg->expire_ms;
	lc.dirty_background_pct = cfg->bg_pct;
	lc.dirty_limit_pct = cfg->limit_pct;
	rc = lpc_cache_create(&lc, &r->c);
	REQUIRE(rc == 0, "lpc_cache_create = %d", rc);
	for (unsigned k = 0; k < cfg->nfiles; k++) {
		struct mfile *m = &r->files[k];
		char name[64];

		snprintf(name, sizeof(name), "m%d-%u-%u", (int)getpid(), run_counter++, k);
		m->cap = cfg->maxb + 2 * cfg->ps;
		m->ref = calloc(1, m->cap);
		REQUIRE(m->ref);
		rc = model_make(cfg->backend, name, cfg->init_size[k], k + 1, m->path,
				sizeof(m->path));
		REQUIRE(rc == 0, "making %s = %d", name, rc);
		drop_page_cache(m->path);
		tst_file_bytes(k + 1, 0, m->ref, cfg->init_size[k]);
		m->size = cfg->init_size[k];
		rc = file_open(r, m, O_RDWR, &m->f);
		REQUIRE(rc == 0, "lpc_file_open = %d", rc);
		m->opens = 1;
	}
	for (i = 0; i < n; i++) {
		if (run_deadline && tst_now_ns() > run_deadline)
			break;
		if (!apply(r, &ops[i])) {
			bad = (long)i;
			break;
		}
	}
	run_ran = i;
	/* Teardown, checked too: every page and pin dropped, every file
	 * closed (the kernel's file then equals the reference), the cache
	 * destroyed with 0. */
	while (r->nh) {
		lpc_page_put(r->h[--r->nh].p);
	}
	while (r->npriv)
		lpc_page_put(r->priv[--r->npriv].p);
	while (r->npins) {
		struct pingrp *g = &r->pins[--r->npins];

		lpc_unpin(g->pages, g->n, LPC_PIN_READ);
	}
	for (unsigned k = 0; k < cfg->nfiles; k++) {
		struct mfile *m = &r->files[k];

		if (bad < 0 && !close_all(r, m))
			bad = (long)n;
		else if (bad >= 0)
			while (m->opens-- > 0)
				lpc_file_close(m->f);
		model_remove(m->path);
		free(m->ref);
	}
	{
		struct lpc_stats st;

		lpc_stats(r->c, &st);
		model_dropped += st.ra_dropped;
	}
	rc = lpc_cache_destroy(r->c);
	if (rc != 0 && bad < 0) {
		fail(r, "lpc_cache_destroy = %d", rc);
		bad = (long)n;
	}
	/* User backends: every handle lpc took released once (the refused
	 * ones were freed by model_open), BK3 kept on every call. */
	if (bad < 0 && atomic_load(&tub_made) - made0 != atomic_load(&tub_releases) - released0) {
		fail(r, "user backend: %llu handles made, %llu released",
		     (unsigned long long)(atomic_load(&tub_made) - made0),
		     (unsigned long long)(atomic_load(&tub_releases) - released0));
		bad = (long)n;
	}
	if (bad < 0 && atomic_load(&tub_breaches) != breaches0) {
		fail(r, "user backend: %llu calls broke BK3 (frames, offsets, iovecs) or wrote "
		     "through a read-only handle",
		     (unsigned long long)(atomic_load(&tub_breaches) - breaches0));
		bad = (long)n;
	}
	if (msg)
		snprintf(msg, msglen, "%s", r->msg);
	free(r->buf);
	free(r->buf2);
	free(r->kbuf);
	free(r->iov);
	free(r);
	return bad;
}

/* ---- shrinking ---- */

/* The kind of a failure: its message up to the first '(' or ':' (the call
 * or the check that failed), so shrinking keeps to the same failure. */
static void failure_kind(const char *msg, char *kind, size_t len)
{
	size_t n = strcspn(msg, "(:");

	if (n >= len)
		n = len - 1;
	memcpy(kind, msg, n);
	kind[n] = 0;
}

/* Whether ops[0..n) fails with a failure of `kind` in one of `tries` runs. */
static bool fails_tries(const struct mcfg *cfg, const struct op *ops, size_t n, int tries,
			const char *kind)
{
	char msg[1024], k[256];

	for (int t = 0; t < tries && tst_now_ns() < shrink_until; t++) {
		if (run_ops(cfg, ops, n, false, msg, sizeof(msg)) < 0)
			continue;
		failure_kind(msg, k, sizeof(k));
		if (!strcmp(k, kind))
			return true;
	}
	return false;
}

/* Delta debugging over the call list: the prefix up to the failing call,
 * then chunks of halving size removed while the rest still fails. */
static size_t shrink(const struct mcfg *cfg, struct op *ops, size_t n, const char *kind)
{
	uint64_t until = shrink_until;
	struct op *tmp = malloc(n * sizeof(*ops));
	size_t chunk = n / 2 ? n / 2 : 1;

	REQUIRE(tmp);
	while (chunk >= 1 && tst_now_ns() < until) {
		bool removed = false;

		for (size_t start = 0; start < n && tst_now_ns() < until;) {
			size_t end = start + chunk < n ? start + chunk : n, m = 0;

			for (size_t i = 0; i < n; i++)
				if (i < start || i >= end)
					tmp[m++] = ops[i];
			if (m && fails_tries(cfg, tmp, m, 3, kind)) {
				memcpy(ops, tmp, m * sizeof(*ops));
				n = m;
				removed = true;
			} else {
				start = end;
			}
		}
		if (!removed) {
			if (chunk == 1)
				break;
			chunk /= 2;
		} else if (chunk > n / 2 && n / 2) {
			chunk = n / 2;
		}
	}
	free(tmp);
	return n;
}

/* ---- the sequential driver ---- */

static double shrink_seconds = 60;
static unsigned shrink_left = 1; /* --shrink-max: failures shrunk per run */

static void replay_line(const struct mcfg *cfg, uint64_t seed, size_t nops, const char *argv0)
{
	printf("  replay: %s --seed %llu --ops %zu --seq-len %zu --backend %s --page-size %zu "
	       "--lookup %s --frames %u --files %u\n",
	       argv0, (unsigned long long)seed, nops, nops, bname(cfg->backend), cfg->ps,
	       lookup_name(cfg->lookup), cfg->frames, cfg->nfiles);
}

/* One sequence of nops calls.  Return: whether it passed. */
static bool sequence(struct mcfg *cfg, uint64_t seed, size_t nops, unsigned frames,
		     unsigned nfiles, bool verbose, const char *argv0, uint64_t deadline,
		     size_t *ran)
{
	struct op *ops = malloc(nops * sizeof(*ops));
	char msg[1024], kind[256];
	long bad;
	size_t n;

	REQUIRE(ops);
	cfg_draw(cfg, seed, frames, nfiles);
	ops_make(ops, nops, seed);
	run_deadline = deadline;
	bad = run_ops(cfg, ops, nops, verbose, msg, sizeof(msg));
	run_deadline = 0;
	*ran = run_ran;
	if (bad < 0) {
		free(ops);
		return true;
	}
	shrink_until = tst_now_ns() + (uint64_t)(shrink_seconds * 1e9);
	/* Every replay below stops at the same time (one cut short passed). */
	run_deadline = shrink_until;
	printf("FAIL seed %llu, ", (unsigned long long)seed);
	cfg_print(cfg, stdout);
	printf(":\n  call %ld of %zu: %s\n", bad, nops, msg);
	replay_line(cfg, seed, nops, argv0);
	fflush(stdout);
	failure_kind(msg, kind, sizeof(kind));
	if (!shrink_left) {
		printf("  (not shrunk: --shrink-max failures were already)\n");
		goto out;
	}
	shrink_left--;
	n = (size_t)bad + 1 < nops ? (size_t)bad + 1 : nops;
	if (!fails_tries(cfg, ops, n, 3, kind))
		n = nops; /* the failure needs the teardown or was a timing one */
	if (fails_tries(cfg, ops, n, 5, kind)) {
		int t;

		n = shrink(cfg, ops, n, kind);
		printf("  shrunk to %zu calls; a replay of them that fails:\n", n);
		/* The replays that print get a few seconds more. */
		run_deadline = shrink_until + 5000000000ull;
		for (t = 0; t < 10 && tst_now_ns() < run_deadline; t++) {
			bad = run_ops(cfg, ops, n, false, msg, sizeof(msg));
			if (bad >= 0) {
				char again[1024];

				printf("  (the calls of a run that failed again; their failure: %s)\n", msg);
				if (run_ops(cfg, ops, n, true, again, sizeof(again)) < 0)
					printf("  (this printing run passed: a timing failure)\n");
				break;
			}
		}
		printf("  => %s\n", bad >= 0 ? msg : "(passed in its replays: a timing failure)");
	} else {
		printf("  (did not fail again in 5 replays: not shrunk)\n");
	}
out:
	run_deadline = 0;
	fflush(stdout);
	free(ops);
	atomic_fetch_add(&tst_failed, 1);
	return false;
}

/* ---- the multi-threaded mode ---- */

struct mt {
	struct lpc_cache *c;
	struct lpc_file *f;
	const char *path;
	size_t ps;
	uint64_t range, span; /* each writer's bytes; the whole file */
	unsigned writers;
	_Atomic uint64_t *seen; /* per byte: a 256-bit set of the values begun */
	_Atomic bool stop;
	_Atomic unsigned long calls;
	uint64_t seed;
};

struct mtw {
	struct mt *mt;
	unsigned id;
	pthread_t th;
	bool ok;
	char msg[512];
};

static void seen_add(struct mt *mt, uint64_t pos, unsigned char v)
{
	atomic_fetch_or_explicit(&mt->seen[pos * 4 + v / 64], 1ull << (v % 64), memory_order_release);
}

static bool seen_has(struct mt *mt, uint64_t pos, unsigned char v)
{
	return v == 0 || (atomic_load_explicit(&mt->seen[pos * 4 + v / 64], memory_order_acquire) >>
			  (v % 64)) & 1;
}

static bool mt_fail(struct mtw *w, const char *fmt, ...)
{
	va_list ap;

	if (w->msg[0])
		return false;
	va_start(ap, fmt);
	vsnprintf(w->msg, sizeof(w->msg), fmt, ap);
	va_end(ap);
	w->ok = false;
	atomic_store(&w->mt->stop, true);
	return false;
}

static void *mt_writer(void *arg)
{
	struct mtw *w = arg;
	struct mt *mt = w->mt;
	uint64_t base = w->id * mt->range, s = mt->seed + 7919 * (w->id + 1);
	uint64_t mine = 0; /* the end of this writer's bytes written (absolute) */
	unsigned char *ref = calloc(1, mt->range), *buf = malloc(mt->range + mt->ps);
	unsigned char *kbuf = malloc(mt->span + mt->ps);

	if (!ref || !buf || !kbuf)
		return (void *)(intptr_t)mt_fail(w, "malloc");
	while (!atomic_load(&mt->stop)) {
		unsigned k = (unsigned)(tst_rnd(&s) % 10);
		uint64_t off = tst_rnd(&s) % mt->range;
		size_t len = 1 + (size_t)(tst_rnd(&s) % (k < 5 ? 2 * mt->ps : 64));
		ssize_t n;

		if (off + len > mt->range)
			len = (size_t)(mt->range - off);
		atomic_fetch_add_explicit(&mt->calls, 1, memory_order_relaxed);
		if (k < 5) { /* lpc_pwrite */
			uint64_t dseed = tst_rnd(&s);

			data_fill(dseed, base + off, buf, len);
			for (size_t i = 0; i < len; i++)
				seen_add(mt, base + off + i, buf[i]);
			n = lpc_pwrite(mt->f, buf, len, base + off);
			if (n != (ssize_t)len)
				return (void *)(intptr_t)mt_fail(w, "writer %u: lpc_pwrite = %zd", w->id, n);
			memcpy(ref + off, buf, len);
			if (base + off + len > mine)
				mine = base + off + len;
		} else if (k < 7) { /* lpc_pread of its own bytes */
			size_t least = base + off < mine ? (size_t)(mine - base - off) : 0;

			if (least > len)
				least = len;
			n = lpc_pread(mt->f, buf, len, base + off);
			if (n < (ssize_t)least || n > (ssize_t)len)
				return (void *)(intptr_t)mt_fail(w, "writer %u: lpc_pread(%llu, %zu) = %zd, want at least %zu",
								 w->id, (unsigned long long)(base + off), len, n, least);
			for (ssize_t i = 0; i < n; i++)
				if (buf[i] != ref[off + (size_t)i])
					return (void *)(intptr_t)mt_fail(w, "writer %u: lpc_pread: byte %llu is 0x%02x, want 0x%02x",
									 w->id, (unsigned long long)(base + off + (size_t)i), buf[i], ref[off + (size_t)i]);
		} else if (k < 8 && base + off < mine) { /* page lock, change in place, mark dirty */
			uint64_t pos = base + off, index = pos / mt->ps;
			uint64_t pend = (index + 1) * mt->ps;
			struct lpc_page *p;
			unsigned char *d;
			int rc;

			if (pend > base + mt->range)
				pend = base + mt->range;
			if (pend > mine)
				pend = mine;
			if (pos + len > pend)
				len = (size_t)(pend - pos);
			rc = lpc_page_get(mt->f, index, 0, &p);
			if (rc != 0)
				return (void *)(intptr_t)mt_fail(w, "writer %u: lpc_page_get(%llu) = %d",
								 w->id, (unsigned long long)index, rc);
			lpc_page_lock(p);
			d = lpc_page_data(p);
			data_fill(tst_rnd(&s), pos, buf, len);
			for (size_t i = 0; i < len; i++)
				seen_add(mt, pos + i, buf[i]);
			memcpy(d + pos % mt->ps, buf, len);
			rc = lpc_page_mark_dirty(p);
			lpc_page_unlock(p);
			lpc_page_put(p);
			if (rc != 0)
				return (void *)(intptr_t)mt_fail(w, "writer %u: lpc_page_mark_dirty = %d", w->id, rc);
			memcpy(ref + (pos - base), buf, len);
		} else if (k < 9) { /* lpc_fsync: its bytes are in the kernel's file */
			int rc = lpc_fsync(mt->f);
			int64_t ks;

			if (rc != 0)
				return (void *)(intptr_t)mt_fail(w, "writer %u: lpc_fsync = %d", w->id, rc);
			ks = kernel_read(mt->path, kbuf, mt->span + mt->ps);
			if (ks < (int64_t)mine)
				return (void *)(intptr_t)mt_fail(w, "writer %u: after lpc_fsync the kernel's file is %lld bytes, "
								 "this writer wrote up to %llu", w->id, (long long)ks, (unsigned long long)mine);
			for (uint64_t i = base; i < mine; i++)
				if (kbuf[i] != ref[i - base])
					return (void *)(intptr_t)mt_fail(w, "writer %u: after lpc_fsync the kernel's byte %llu is 0x%02x, want 0x%02x",
									 w->id, (unsigned long long)i, kbuf[i], ref[i - base]);
		} else { /* lpc_invalidate, lpc_fadvise DONTNEED or WILLNEED of its
			  * range: never drops or changes data */
			unsigned how = (unsigned)(tst_rnd(&s) % 3);
			int rc = how == 0 ? lpc_invalidate(mt->f, base + off, len)
					  : lpc_fadvise(mt->f, base + off, len,
							how == 1 ? LPC_FADV_DONTNEED : LPC_FADV_WILLNEED);

			if (rc < 0 || (how && rc))
				return (void *)(intptr_t)mt_fail(w, "writer %u: %s = %d", w->id,
								 how == 0 ? "lpc_invalidate" : how == 1 ? "lpc_fadvise(DONTNEED)" : "lpc_fadvise(WILLNEED)", rc);
		}
	}
	free(kbuf);
	free(ref);
	free(buf);
	return NULL;
}

static bool mt_check(struct mtw *w, uint64_t off, const unsigned char *b, size_t len,
		     const char *what)
{
	for (size_t i = 0; i < len; i++)
		if (!seen_has(w->mt, off + i, b[i]))
			return mt_fail(w, "reader %u: %s: byte %llu is 0x%02x, never written there",
				       w->id, what, (unsigned long long)(off + i), b[i]);
	return true;
}

static void *mt_reader(void *arg)
{
	struct mtw *w = arg;
	struct mt *mt = w->mt;
	uint64_t s = mt->seed + 104729 * (w->id + 1);
	unsigned char *buf = malloc(mt->span + 4 * mt->ps), *want = malloc(mt->ps);
	struct lpc_page *pages[4], *priv = NULL;
	struct iovec iov[4];
	uint64_t psalt = 0;
	void *ret = NULL;

	if (!buf || !want) {
		free(buf);
		free(want);
		return (void *)(intptr_t)mt_fail(w, "malloc");
	}
	while (!atomic_load(&mt->stop)) {
		unsigned k = (unsigned)(tst_rnd(&s) % 4);
		ssize_t n;
		int rc;

		/* The private page: still what this reader wrote; now and
		 * then a new one. */
		if (priv && memcmp(lpc_page_data(priv), want, mt->ps)) {
			ret = (void *)(intptr_t)mt_fail(w, "reader %u: its private page changed while "
							"held (the frame was handed out again)",
							w->id);
			break;
		}
		if (!priv || tst_rnd(&s) % 8 == 0) {
			lpc_page_put(priv);
			priv = NULL;
			rc = lpc_page_alloc(mt->c, &priv);
			if (rc != 0) {
				ret = (void *)(intptr_t)mt_fail(w, "reader: lpc_page_alloc = %d", rc);
				break;
			}
			psalt = tst_rnd(&s) | 1;
			tst_file_bytes(psalt, 0, want, mt->ps);
			memcpy(lpc_page_data(priv), want, mt->ps);
		}
		atomic_fetch_add_explicit(&mt->calls, 1, memory_order_relaxed);
		if (k < 2) {
			n = lpc_pread(mt->f, buf, mt->span + mt->ps, 0);
			if (n < 0 || (uint64_t)n > mt->span)
				return (void *)(intptr_t)mt_fail(w, "reader: lpc_pread = %zd", n);
			if (!mt_check(w, 0, buf, (size_t)n, "lpc_pread"))
				return NULL;
		} else if (k < 3) {
			uint64_t index = tst_rnd(&s) % (mt->span / mt->ps + 1);

			rc = lpc_page_read(mt->f, index, 0, page_copy_fn, buf);
			if (rc == -ENXIO)
				continue;
			if (rc != 0)
				return (void *)(intptr_t)mt_fail(w, "reader: lpc_page_read = %d", rc);
			if (!mt_check(w, index * mt->ps, buf,
				      (size_t)((index + 1) * mt->ps <= mt->span ? mt->ps : mt->span - index * mt->ps),
				      "lpc_page_read"))
				return NULL;
		} else {
			uint64_t off = tst_rnd(&s) % mt->span;
			size_t len = 1 + (size_t)(tst_rnd(&s) % (2 * mt->ps));

			rc = lpc_pin(mt->f, off, len, LPC_PIN_READ, pages, 4);
			if (rc == -ENXIO)
				continue;
			if (rc <= 0)
				return (void *)(intptr_t)mt_fail(w, "reader: lpc_pin = %d", rc);
			if ((uint64_t)rc * mt->ps < off % mt->ps + 1) {
				lpc_unpin(pages, (unsigned)rc, LPC_PIN_READ);
				return (void *)(intptr_t)mt_fail(w, "reader: lpc_pin = %d pages", rc);
			}
			/* What the pages hold inside the file's span. */
			{
				size_t l = (size_t)rc * mt->ps - off % mt->ps;
				int e;

				if (off + l > mt->span)
					l = (size_t)(mt->span - off);
				e = lpc_pin_iov(pages, (unsigned)rc, off, l, iov);
				if (e < 1) {
					lpc_unpin(pages, (unsigned)rc, LPC_PIN_READ);
					return (void *)(intptr_t)mt_fail(w, "reader: lpc_pin_iov = %d", e);
				}
				/* Copied under each page's lock: a writer may be
				 * changing the bytes in place (a pin is a reference,
				 * which lpc_page_lock needs). */
				for (int i = 0; i < rc; i++) {
					lpc_page_lock(pages[i]);
					memcpy(buf + (size_t)i * mt->ps, lpc_page_data(pages[i]), mt->ps);
					lpc_page_unlock(pages[i]);
				}
				{
					size_t done = 0;

					for (int i = 0; i < e; i++)
						done += iov[i].iov_len;
					if (done != l) {
						lpc_unpin(pages, (unsigned)rc, LPC_PIN_READ);
						return (void *)(intptr_t)mt_fail(w, "reader: lpc_pin_iov covers %zu bytes, want %zu", done, l);
					}
				}
				if (!mt_check(w, off, buf + off % mt->ps, l, "lpc_pin")) {
					lpc_unpin(pages, (unsigned)rc, LPC_PIN_READ);
					return NULL;
				}
			}
			lpc_unpin(pages, (unsigned)rc, LPC_PIN_READ);
		}
	}
	lpc_page_put(priv);
	free(want);
	free(buf);
	return ret;
}

/* W writers and two readers on one file for `seconds`.  Return: passed. */
static bool mt_round(int backend, int lookup, size_t ps, unsigned frames, unsigned writers,
		     double seconds, uint64_t seed)
{
	struct mt mt = { .ps = ps, .writers = writers, .seed = seed };
	struct mtw *w = calloc(writers + 2, sizeof(*w));
	struct lpc_config lc;
	char path[600];
	bool ok = true;
	int rc;

	REQUIRE(w);
	/* Writers share pages (a range is not a multiple of the page size),
	 * and the file is twice the cache, so eviction runs. */
	mt.range = 2ull * frames * ps / writers + ps / 2 + 13;
	mt.span = mt.range * writers;
	mt.seen = calloc(mt.span * 4, sizeof(*mt.seen));
	REQUIRE(mt.seen);
	lpc_config_init(&lc);
	lc.cache_bytes = (size_t)frames * ps;
	lc.page_size = ps;
	lc.io_backend = model_is_backend(backend) ? LPC_IO_SYNC : backend;
	lc.lookup_mode = lookup;
	lc.alloc_wait_ms = 5000;
	lc.dirty_expire_ms = 2;
	lc.dirty_background_pct = 5;
	lc.dirty_limit_pct = 10;
	REQUIRE(lpc_cache_create(&lc, &mt.c) == 0);
	REQUIRE(model_make(backend, "mt", 0, 0, path, sizeof(path)) == 0);
	mt.path = path;
	rc = model_open(mt.c, backend, ps, path, O_RDWR, &mt.f);
	REQUIRE(rc == 0, "lpc_file_open = %d", rc);
	printf("threads: %u writers (%llu bytes each) + 2 readers, backend %s, page size %zu, "
	       "lookup %s, %u frames, %.1f s, seed %llu\n",
	       writers, (unsigned long long)mt.range, bname(backend), ps,
	       lookup_name(lookup), frames, seconds, (unsigned long long)seed);
	for (unsigned i = 0; i < writers + 2; i++) {
		w[i] = (struct mtw){ .mt = &mt, .id = i < writers ? i : i - writers, .ok = true };
		REQUIRE(pthread_create(&w[i].th, NULL, i < writers ? mt_writer : mt_reader, &w[i]) == 0);
	}
	{
		uint64_t until = tst_now_ns() + (uint64_t)(seconds * 1e9);

		while (!atomic_load(&mt.stop) && tst_now_ns() < until)
			tst_sleep_us(10000);
		atomic_store(&mt.stop, true);
	}
	for (unsigned i = 0; i < writers + 2; i++) {
		pthread_join(w[i].th, NULL);
		if (!w[i].ok) {
			printf("FAIL %s\n", w[i].msg);
			ok = false;
		}
	}
	rc = lpc_file_close(mt.f);
	if (rc != 0) {
		printf("FAIL lpc_file_close = %d\n", rc);
		ok = false;
	}
	rc = lpc_cache_destroy(mt.c);
	if (rc != 0) {
		printf("FAIL lpc_cache_destroy = %d\n", rc);
		ok = false;
	}
	printf("  %lu calls\n", atomic_load(&mt.calls));
	if (!ok) {
		printf("  replay: --threads %u --backend %s --page-size %zu --lookup %s --frames %u --seed %llu\n",
		       writers, bname(backend), ps, lookup_name(lookup), frames,
		       (unsigned long long)seed);
		atomic_fetch_add(&tst_failed, 1);
	} else {
		atomic_fetch_add(&tst_passed, 1);
	}
	model_remove(path);
	free(mt.seen);
	free(w);
	return ok;
}

/* ---- main ---- */

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s [--seed N] [--ops N] [--seq-len N] [--seconds S]\n"
		"       [--backend sync|uring|user|rbd|all] [--rbd-conf PATH]\n"
		"       [--page-size N|all] [--lookup lockless|locked|all] [--frames N] [--files N]\n"
		"       [--matrix K/N] [--threads W] [--verbose] [--shrink-seconds S]\n"
		"       [--shrink-max N] [--no-closed-dirty]\n",
		argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	int backends[2] = { LPC_IO_SYNC, LPC_IO_URING }, nb = 2;
	int lookups[2] = { LPC_LOOKUP_LOCKLESS, LPC_LOOKUP_LOCKED }, nl = 2;
	size_t pss[13];
	int nps = 0;
	uint64_t ops = 0, seqlen = 3000;
	double seconds = 0;
	unsigned frames = 0, nfiles = 0, threads = 0, mk = 0, mn = 1;
	bool verbose = false, have_seed = false;
	int vi = 0;

	for (size_t p = 512; p <= (2u << 20); p *= 2)
		pss[nps++] = p;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--verbose")) {
			verbose = true;
			continue;
		}
		if (!strcmp(a, "--no-closed-dirty")) {
			no_closed_dirty = true;
			continue;
		}
		if (!v)
			usage(argv[0]);
		i++;
		if (!strcmp(a, "--seed")) {
			tst_seed = strtoull(v, NULL, 0);
			have_seed = true;
		} else if (!strcmp(a, "--ops")) {
			ops = strtoull(v, NULL, 0);
		} else if (!strcmp(a, "--seq-len")) {
			seqlen = strtoull(v, NULL, 0);
		} else if (!strcmp(a, "--seconds")) {
			seconds = strtod(v, NULL);
		} else if (!strcmp(a, "--shrink-max")) {
			shrink_left = (unsigned)strtoul(v, NULL, 0);
		} else if (!strcmp(a, "--shrink-seconds")) {
			shrink_seconds = strtod(v, NULL);
		} else if (!strcmp(a, "--frames")) {
			frames = (unsigned)strtoul(v, NULL, 0);
		} else if (!strcmp(a, "--files")) {
			nfiles = (unsigned)strtoul(v, NULL, 0);
			if (nfiles < 1 || nfiles > 4)
				usage(argv[0]);
		} else if (!strcmp(a, "--threads")) {
			threads = (unsigned)strtoul(v, NULL, 0);
		} else if (!strcmp(a, "--matrix")) {
			if (sscanf(v, "%u/%u", &mk, &mn) != 2 || mn == 0 || mk >= mn)
				usage(argv[0]);
		} else if (!strcmp(a, "--backend")) {
			if (!strcmp(v, "sync"))
				backends[0] = LPC_IO_SYNC, nb = 1;
			else if (!strcmp(v, "uring"))
				backends[0] = LPC_IO_URING, nb = 1;
			else if (!strcmp(v, "user"))
				backends[0] = MODEL_USER, nb = 1;
			else if (!strcmp(v, "rbd"))
				backends[0] = MODEL_RBD_BACKEND, nb = 1;
			else if (strcmp(v, "all"))
				usage(argv[0]);
		} else if (!strcmp(a, "--rbd-conf")) {
#ifdef MODEL_RBD
			rbd_conf = v;
#endif
		} else if (!strcmp(a, "--lookup")) {
			if (!strcmp(v, "lockless"))
				lookups[0] = LPC_LOOKUP_LOCKLESS, nl = 1;
			else if (!strcmp(v, "locked"))
				lookups[0] = LPC_LOOKUP_LOCKED, nl = 1;
			else if (strcmp(v, "all"))
				usage(argv[0]);
		} else if (!strcmp(a, "--page-size")) {
			if (strcmp(v, "all")) {
				pss[0] = strtoull(v, NULL, 0);
				nps = 1;
			}
		} else {
			usage(argv[0]);
		}
	}
	if (!have_seed)
		tst_seed = tst_now_ns() ^ ((uint64_t)getpid() << 32);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("seed %llu\n", (unsigned long long)tst_seed);
	if (!tst_tmpdir())
		tst_skip("no temporary directory");
	if (!ops && !seconds)
		seconds = 2;
	if (backends[0] == MODEL_RBD_BACKEND) {
#ifdef MODEL_RBD
		int r;

		if (!rbd_conf)
			rbd_conf = getenv("LPC_RBD_CONF");
		if (!rbd_conf || !*rbd_conf || access(rbd_conf, R_OK) != 0)
			tst_skip("--backend rbd: no cluster (--rbd-conf PATH or LPC_RBD_CONF)");
		r = rbd_connect(rbd_conf);
		REQUIRE(r == 0, "connecting to the cluster of %s = %d", rbd_conf, r);
#else
		tst_skip("--backend rbd: this build has no librbd (model_api_rbd has)");
#endif
	}
	if (seqlen < 1)
		seqlen = 1;

	for (int b = 0; b < nb; b++)
		for (int l = 0; l < nl; l++)
			for (int p = 0; p < nps; p++, vi++) {
				uint64_t rng = tst_seed + (uint64_t)vi * 0x9e3779b97f4a7c15ull;
				uint64_t done = 0, until = tst_now_ns() + (uint64_t)(seconds * 1e9);
				unsigned long seqs = 0, failed = 0;
				struct mcfg cfg = { .backend = backends[b], .lookup = lookups[l],
						    .ps = pss[p] };

				if ((unsigned)vi % mn != mk)
					continue;
				if (threads && cfg.ps > 65536) {
					printf("threads: page size %zu skipped (the value sets take 32 bytes a byte)\n", cfg.ps);
					continue;
				}
				if (threads) {
					mt_round(cfg.backend, cfg.lookup, cfg.ps, frames ? frames : 16,
						 threads, seconds ? seconds : 2, tst_rnd(&rng));
					continue;
				}
				/* A single sequence replays exactly the seed given. */
				while (failed < 1 && (ops ? done < ops : tst_now_ns() < until)) {
					uint64_t s = (ops && ops <= seqlen && have_seed) ? tst_seed : tst_rnd(&rng);
					size_t n = (size_t)(ops && ops - done < seqlen ? ops - done : seqlen);

					if (!ops && seconds < 10 && n > 1000)
						n = 1000; /* short sequences in CI: more of them */
					size_t ran = n;

					if (!sequence(&cfg, s, n, frames, nfiles, verbose, argv[0],
						      ops ? 0 : until, &ran))
						failed++;
					done += ran;
					seqs++;
				}
				printf("%s %s page %zu: %llu calls in %lu sequences, %llu pages dropped behind streams%s\n",
				       bname(cfg.backend), lookup_name(cfg.lookup), cfg.ps,
				       (unsigned long long)done, seqs, (unsigned long long)model_dropped,
				       failed ? ": FAILED" : "");
				model_dropped = 0;
				if (!failed)
					atomic_fetch_add(&tst_passed, 1);
			}
	return tst_finish();
}
