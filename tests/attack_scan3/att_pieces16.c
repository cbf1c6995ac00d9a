/* SPDX-License-Identifier: MIT */
/*
 * att_pieces16.c - uring.c R0/UB0 with URING_PIECES 16 (f71e610): a run
 * cut into up to 16 READ_FIXED pieces, not 4.  Attacked at the limit.
 *
 * A run is read through the I/O layer itself (lpc_io_readv: uring_readv,
 * R0; lpc_io_readv_batch: uring_readv_batch, UB0), as test_uring_pieces
 * does, into frames of the arena that lie apart (every other frame: one
 * stretch each), every frame of the cache taken by the test.  The faults
 * are made in the kernel: io_uring_submit / io_uring_submit_and_wait are
 * defined here (liburing shared, the real ones by dlsym RTLD_NEXT) and
 * change the queued SQEs of the first submission that carries >= 16
 * READ_FIXED entries.  Cases, each on both paths:
 *   limit    16 stretches: 16 READ_FIXED, no READV; 17: one READV (never
 *            an SQE array overrun, pbase/plen/pbi[URING_PIECES]);
 *   short k  piece k (0, 1, 7, 14, 15) asks 1000 B less (a short transfer
 *            inside a page; the file buffered): only the prefix counts, the
 *            rest read again: every byte right, the run's full length;
 *   eio k    piece k (1, 8, 15) completes -EIO (IORING_OP_NOP with
 *            IORING_NOP_INJECT_RESULT, Linux 6.10): R0a, the prefix kept,
 *            the rest read again (no fault then): every byte right;
 *   efault k piece k (9) names buffer 60000: H5, the rest read again
 *            unregistered, every byte right, uring_unregistered +1;
 *   partial  the submission takes only 5 of the 16 entries and the next
 *            submit fails -EBUSY (RS1-RS4): the ring killed, the run read
 *            sync, every byte right, no hang;
 *   mt       4 threads, each its own ring, runs of 16 pieces whose piece p
 *            lies in chunk p % 4 (registered lazily by whichever thread
 *            needs it first: H3's clones while the others' entries are in
 *            flight), 300 runs each: every byte right, no unregistered.
 * Exit 1 while a defect stands, 0 if it holds, 77 without a registered
 * io_uring ring.
 *
 * Run: make && out-release/att_pieces16
 */
#include <dlfcn.h>
#include <liburing.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"

#define PS ((size_t)4096)
#define CHUNK ((size_t)2 << 20)
#define NOP_INJECT_RESULT 1u
#define FPAGES 256u
#define AT 16u

enum inj { INJ_NONE, INJ_SHORT, INJ_EIO, INJ_EFAULT, INJ_PARTIAL };

static _Atomic int inj_mode, inj_k, inj_fired;
static _Atomic unsigned n_fixed, n_readv;
static __thread int partial_next;

/* The SQEs about to be submitted: counted; the first submission with >= 16
 * READ_FIXED entries gets the armed fault in its k-th.  Return: the count
 * of entries to submit now (PARTIAL: 5). */
static void inj_scan(struct io_uring *ring, unsigned *take)
{
	struct io_uring_sq *sq = &ring->sq;
	unsigned nfix = 0, k = 0;
	int mode = atomic_load(&inj_mode);

	*take = sq->sqe_tail - sq->sqe_head;
	for (unsigned i = sq->sqe_head; i != sq->sqe_tail; i++) {
		struct io_uring_sqe *s = &sq->sqes[i & sq->ring_mask];

		if (s->opcode == IORING_OP_READ_FIXED)
			nfix++, atomic_fetch_add(&n_fixed, 1);
		else if (s->opcode == IORING_OP_READV)
			atomic_fetch_add(&n_readv, 1);
	}
	if (mode == INJ_NONE || nfix < 16 || atomic_load(&inj_fired))
		return;
	atomic_store(&inj_fired, 1);
	for (unsigned i = sq->sqe_head; i != sq->sqe_tail; i++) {
		struct io_uring_sqe *s = &sq->sqes[i & sq->ring_mask];

		if (s->opcode != IORING_OP_READ_FIXED || (int)k++ != atomic_load(&inj_k))
			continue;
		if (mode == INJ_SHORT) {
			s->len -= 1000;
		} else if (mode == INJ_EIO) {
			uint64_t ud = s->user_data;

			io_uring_prep_nop(s);
			s->rw_flags = NOP_INJECT_RESULT;
			s->len = (unsigned)-EIO;
			s->user_data = ud;
		} else if (mode == INJ_EFAULT) {
			s->buf_index = 60000;
		}
	}
	if (mode == INJ_PARTIAL) {
		*take = 5;
		partial_next = 1;
	}
}

int io_uring_submit(struct io_uring *ring)
{
	static int (*real)(struct io_uring *);
	unsigned take;

	if (!real)
		real = (int (*)(struct io_uring *))dlsym(RTLD_NEXT, "io_uring_submit");
	if (partial_next && ring->sq.sqe_head != ring->sq.sqe_tail) {
		partial_next = 0;
		return -EBUSY;
	}
	inj_scan(ring, &take);
	return real(ring);
}

int io_uring_submit_and_wait(struct io_uring *ring, unsigned wait_nr)
{
	static int (*real)(struct io_uring *, unsigned);
	unsigned take, tail;
	int n;

	if (!real)
		real = (int (*)(struct io_uring *, unsigned))dlsym(RTLD_NEXT,
								  "io_uring_submit_and_wait");
	inj_scan(ring, &take);
	if (take == ring->sq.sqe_tail - ring->sq.sqe_head)
		return real(ring, wait_nr);
	tail = ring->sq.sqe_tail;
	ring->sq.sqe_tail = ring->sq.sqe_head + take;
	n = real(ring, wait_nr);
	ring->sq.sqe_tail = tail;
	return n;
}

static void inj_arm(int mode, int k)
{
	atomic_store(&inj_fired, 0);
	atomic_store(&inj_k, k);
	atomic_store(&n_fixed, 0);
	atomic_store(&n_readv, 0);
	atomic_store(&inj_mode, mode);
}

struct ctx {
	struct lpc_cache *c;
	struct lpc_file *f;
	struct lpc_page **pg;
	size_t npg;
	unsigned char *want;
};

static uint64_t unregistered(struct lpc_cache *c)
{
	struct lpc_stats s;

	lpc_stats(c, &s);
	return s.uring_unregistered;
}

static uint64_t fallbacks(struct lpc_cache *c)
{
	struct lpc_stats s;

	lpc_stats(c, &s);
	return s.uring_fallbacks;
}

static bool ctx_open(struct ctx *x, size_t chunks)
{
	size_t frames = chunks * CHUNK / PS;
	struct lpc_config cfg;
	char path[600];
	int fd;

	memset(x, 0, sizeof(*x));
	lpc_config_init(&cfg);
	cfg.cache_bytes = frames * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_URING;
	cfg.readahead_kb = LPC_READAHEAD_OFF;
	REQUIRE(lpc_cache_create(&cfg, &x->c) == 0);
	if (x->c->io.ops != &lpc_io_uring_ops || lpc_io_uring_registered(&x->c->io) != 1) {
		tst_cache_destroy(x->c);
		return false;
	}
	x->pg = calloc(frames, sizeof(*x->pg));
	x->want = malloc(FPAGES * PS);
	REQUIRE(x->pg && x->want);
	REQUIRE(tst_make_file("p16", FPAGES * PS, 41, path, sizeof(path)) == 0);
	tst_file_bytes(41, 0, x->want, FPAGES * PS);
	x->f = tst_file_open(x->c, path, O_RDONLY);
	/* Buffered (as io.c direct_off leaves a descriptor): a short piece is
	 * then not the end of the file. */
	fd = atomic_load(&x->f->io.fd);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_DIRECT);
	atomic_store(&x->f->io.direct, 0);
	while (x->npg < frames && lpc_page_alloc(x->c, &x->pg[x->npg]) == 0)
		x->npg++;
	REQUIRE(x->npg == frames, "all frames: %zu of %zu", x->npg, frames);
	return true;
}

static void ctx_close(struct ctx *x)
{
	while (x->npg > 0)
		lpc_page_put(x->pg[--x->npg]);
	CHECK_EQ(lpc_file_close(x->f), 0);
	tst_cache_destroy(x->c);
	free(x->pg);
	free(x->want);
}

static void batch_end(void *arg, struct lpc_io_rrun *w)
{
	(void)w;
	++*(int *)arg;
}

/* n pages from file page at into iov (each a page); poisoned first.
 * Return: the run's result; *good: the pages right from the first. */
static ssize_t run_read(struct ctx *x, bool batch, struct iovec *iov, int n, uint64_t at,
			int *good)
{
	struct lpc_io_rrun w = { .iov = iov, .iovcnt = n, .off = at * PS, .index = at };
	int ends = 0, fb = 0;
	ssize_t r;

	for (int k = 0; k < n; k++)
		memset(iov[k].iov_base, 0xee, PS);
	if (!batch) {
		r = lpc_io_readv(&x->c->io, &x->f->io, iov, n, at * PS, at, &fb);
	} else {
		lpc_io_readv_batch(&x->c->io, &x->f->io, &w, 1, &fb, batch_end, &ends);
		CHECK_EQ(ends, 1, "the run ended once (io.c RQ5)");
		r = w.res;
	}
	*good = 0;
	while (*good < n && !memcmp(iov[*good].iov_base, x->want + (at + *good) * PS, PS))
		++*good;
	return r;
}

/* iov: n frames of chunk 0, every other one (n stretches). */
static void scattered(struct ctx *x, struct iovec *iov, int n)
{
	unsigned char *arena = x->c->pool.frames;

	for (int k = 0; k < n; k++)
		iov[k] = (struct iovec){ arena + PS + 2 * (size_t)k * PS, PS };
}

static void t_limit(bool batch)
{
	const char *p = batch ? "batch" : "readv";
	struct iovec iov[17];
	struct ctx x;
	int good;
	ssize_t r;

	if (!ctx_open(&x, 1))
		tst_skip("no registered io_uring ring here");
	scattered(&x, iov, 17);
	inj_arm(INJ_NONE, 0);
	r = run_read(&x, batch, iov, 16, AT, &good);
	CHECK_EQ(r, (ssize_t)(16 * PS), "%s: 16 stretches", p);
	CHECK_EQ(good, 16, "%s: 16 stretches: the file's bytes", p);
	CHECK_EQ(atomic_load(&n_fixed), 16, "%s: 16 READ_FIXED", p);
	CHECK_EQ(atomic_load(&n_readv), 0, "%s: no READV", p);
	inj_arm(INJ_NONE, 0);
	r = run_read(&x, batch, iov, 17, AT, &good);
	CHECK_EQ(r, (ssize_t)(17 * PS), "%s: 17 stretches", p);
	CHECK_EQ(good, 17, "%s: 17 stretches: the file's bytes", p);
	CHECK_EQ(atomic_load(&n_readv), 1, "%s: 17 stretches: one READV", p);
	CHECK_EQ(atomic_load(&n_fixed), 0, "%s: 17 stretches: no READ_FIXED", p);
	ctx_close(&x);
}

static void t_fault(bool batch, int mode, int k)
{
	static const char *names[] = { "none", "short", "eio", "efault", "partial" };
	const char *p = batch ? "batch" : "readv";
	struct iovec iov[16];
	struct ctx x;
	uint64_t u0, f0;
	int good;
	ssize_t r;

	if (!ctx_open(&x, 1))
		tst_skip("no registered io_uring ring here");
	scattered(&x, iov, 16);
	inj_arm(INJ_NONE, 0);
	r = run_read(&x, batch, iov, 16, AT, &good); /* the chunk registered */
	CHECK_EQ(good, 16, "%s %s %d: clean read first", p, names[mode], k);
	u0 = unregistered(x.c);
	f0 = fallbacks(x.c);
	inj_arm(mode, k);
	r = run_read(&x, batch, iov, 16, AT + 64, &good);
	CHECK(atomic_load(&inj_fired), "%s %s %d: the fault was made", p, names[mode], k);
	CHECK_EQ(r, (ssize_t)(16 * PS), "%s %s piece %d of 16: the run's bytes", p, names[mode],
		 k);
	CHECK_EQ(good, 16, "%s %s piece %d of 16: pages right from the first", p, names[mode], k);
	CHECK_EQ(unregistered(x.c) - u0, mode == INJ_EFAULT ? 1 : 0,
		 "%s %s %d: uring_unregistered (H5 for EFAULT only)", p, names[mode], k);
	CHECK_EQ(fallbacks(x.c) - f0, mode == INJ_PARTIAL ? 1 : 0,
		 "%s %s %d: uring_fallbacks (RS4: the ring killed for a partial submission only)",
		 p, names[mode], k);
	inj_arm(INJ_NONE, 0);
	ctx_close(&x);
}

/* --- several threads, pieces across 4 chunks --- */

struct mt {
	struct ctx *x;
	int id;
	long bad, runs;
};

static void *mt_main(void *arg)
{
	struct mt *m = arg;
	unsigned char *arena = m->x->c->pool.frames;
	struct iovec iov[16];
	uint64_t s = tst_seed + (uint64_t)m->id;

	for (int it = 0; it < 300; it++) {
		uint64_t at = tst_rnd(&s) % (FPAGES - 16);
		int good;
		ssize_t r;

		/* Piece p in chunk p % 4, at frame 4 * (16 * id + p) + 1 of it:
		 * apart from every other piece and every other thread's. */
		for (int p = 0; p < 16; p++)
			iov[p] = (struct iovec){ arena + (size_t)(p % 4) * CHUNK +
							 (4 * (size_t)(16 * m->id + p) + 1) * PS,
						 PS };
		r = run_read(m->x, it & 1, iov, 16, at, &good);
		m->runs++;
		if (r != (ssize_t)(16 * PS) || good != 16) {
			if (m->bad++ < 3)
				printf("  thread %d run %d at %llu: res %zd, %d pages right\n", m->id,
				       it, (unsigned long long)at, r, good);
		}
	}
	return NULL;
}

static void t_mt(void)
{
	struct ctx x;
	struct mt m[4];
	pthread_t th[4];
	long bad = 0;

	if (!ctx_open(&x, 4))
		tst_skip("no registered io_uring ring here");
	inj_arm(INJ_NONE, 0);
	for (int i = 0; i < 4; i++) {
		m[i] = (struct mt){ &x, i, 0, 0 };
		REQUIRE(pthread_create(&th[i], NULL, mt_main, &m[i]) == 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		bad += m[i].bad;
	}
	printf("mt: 4 threads x 300 runs of 16 pieces over 4 chunks: %u READ_FIXED, %u READV, "
	       "%ld bad, unregistered %llu\n",
	       atomic_load(&n_fixed), atomic_load(&n_readv), bad,
	       (unsigned long long)unregistered(x.c));
	CHECK_EQ(bad, 0, "mt: runs with a wrong byte or length");
	CHECK_EQ(unregistered(x.c), 0, "mt: no ring lost a chunk");
	CHECK_EQ(atomic_load(&n_readv), 0, "mt: no READV");
	ctx_close(&x);
}

int main(int argc, char **argv)
{
	static const int shortk[] = { 0, 1, 7, 14, 15 }, eiok[] = { 1, 8, 15 };

	tst_init(argc, argv, 120);
	tst_require_tmpdir();
	for (int b = 0; b < 2; b++) {
		TST_RUN(t_limit(b));
		for (unsigned i = 0; i < sizeof(shortk) / sizeof(*shortk); i++)
			TST_RUN(t_fault(b, INJ_SHORT, shortk[i]));
		for (unsigned i = 0; i < sizeof(eiok) / sizeof(*eiok); i++)
			TST_RUN(t_fault(b, INJ_EIO, eiok[i]));
		TST_RUN(t_fault(b, INJ_EFAULT, 9));
		TST_RUN(t_fault(b, INJ_PARTIAL, 0));
	}
	TST_RUN(t_mt());
	return tst_finish();
}
