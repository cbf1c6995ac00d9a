/* SPDX-License-Identifier: MIT */
/*
 * test_uring_pieces.c - a run whose frames lie in two registered chunks,
 * read as READ_FIXED pieces (src/io/uring.c R0: a miss's run, uring_readv;
 * UB0: a batch's run, ub_cqe), with the second piece failing in the kernel:
 *
 *  - clean: the run is submitted as two READ_FIXED pieces (the submission
 *    is looked at: before R0 it was one READV) and its bytes are the file's;
 *  - EFAULT (the piece's buf_index is one the ring never registered: what
 *    the kernel answers for a buffer it does not hold, H5): the run is
 *    whole, the rest read again unregistered (R0a: on an O_DIRECT file the
 *    prefix is not taken for the end of the file), the ring counted in
 *    uring_unregistered once;
 *  - EINVAL (an O_DIRECT file whose device refuses every direct read that
 *    starts where the second piece does: the piece's offset put 1 B off
 *    alignment, as long as the descriptor is O_DIRECT): the run is refused
 *    whole (R0b), io.c's direct_off reads it again buffered, the file
 *    leaves O_DIRECT, the chunk stays registered (uring_unregistered +0:
 *    H5 is the buffer's failure only);
 *  - EIO (one bad page inside the second piece: every read that covers it
 *    completes -EIO, an IORING_OP_NOP with IORING_NOP_INJECT_RESULT in its
 *    place; skipped on a kernel without it): the run gives its first piece,
 *    no chunk is lost; through lpc_pread (RANDOM advice, 768 KiB reads, a
 *    run crossing chunks) only the bad page's reader gets -EIO, every other
 *    byte is the file's, read_errors counted, uring_unregistered +0;
 *  - a WRITE_FIXED refused -EINVAL on an O_DIRECT file: written again
 *    buffered (io.c direct_off), the chunk kept (uring_unregistered +0);
 *  - scattered: a run of 8 frames apart from each other in one chunk goes
 *    as 8 READ_FIXED pieces, no READV (URING_PIECES: it was 4).
 *
 * The faults are made in the kernel, not by io.c's hook (which fails a
 * whole call before the backend): io_uring_submit and
 * io_uring_submit_and_wait are defined here (liburing is linked shared;
 * the real ones come by dlsym RTLD_NEXT) and change the queued SQEs before
 * the real submit, as tests/attack_ring/ring_inj.h does.
 *
 * Usage: test_uring_pieces [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <dlfcn.h>
#include <liburing.h>

#include "../common/write_test.h"
#include "cache/cache.h"

#define PS ((size_t)4096)
#define CHUNK ((size_t)2 << 20) /* uring.c's chunk for arenas this small */
#define NOP_INJECT_RESULT 1u    /* IORING_NOP_INJECT_RESULT (Linux 6.10) */

enum inj { INJ_NONE, INJ_EFAULT, INJ_EINVAL, INJ_EIO, INJ_WEINVAL };

static _Atomic int inj_mode;
static _Atomic unsigned inj_pieces; /* submissions carrying a run's pieces */
static _Atomic unsigned inj_fired;  /* SQEs changed */
static _Atomic unsigned inj_readv, inj_fixed; /* READV, READ_FIXED SQEs submitted */
static _Atomic uint64_t inj_at;     /* EINVAL: the refused offset; EIO: the
				     * bad page's; UINT64_MAX: not chosen */
static _Atomic bool inj_set;        /* the first pieced run chose inj_at */

/* The bytes an SQE reads: len for READ/READ_FIXED, the iovecs' for READV. */
static uint64_t sqe_bytes(const struct io_uring_sqe *s)
{
	const struct iovec *v = (const struct iovec *)(uintptr_t)s->addr;
	uint64_t n = 0;

	if (s->opcode != IORING_OP_READV)
		return s->len;
	for (unsigned i = 0; i < s->len; i++)
		n += v[i].iov_len;
	return n;
}

static void inj_scan(struct io_uring *ring)
{
	struct io_uring_sq *sq = &ring->sq;
	struct io_uring_sqe *prev = NULL;
	int mode = atomic_load(&inj_mode);

	for (unsigned i = sq->sqe_head; i != sq->sqe_tail; i++) {
		struct io_uring_sqe *s = &sq->sqes[i & sq->ring_mask];
		bool read = s->opcode == IORING_OP_READ_FIXED || s->opcode == IORING_OP_READV ||
			    s->opcode == IORING_OP_READ;
		uint64_t at;

		if (s->opcode == IORING_OP_READV)
			atomic_fetch_add(&inj_readv, 1);
		else if (s->opcode == IORING_OP_READ_FIXED)
			atomic_fetch_add(&inj_fixed, 1);
		if (s->opcode == IORING_OP_READ_FIXED && prev &&
		    prev->opcode == IORING_OP_READ_FIXED && prev->off + prev->len == s->off &&
		    prev->buf_index != s->buf_index) {
			/* s is a run's second piece (or later). */
			atomic_fetch_add(&inj_pieces, 1);
			if (mode != INJ_NONE && !atomic_exchange(&inj_set, true)) {
				if (mode == INJ_EFAULT) {
					s->buf_index = 60000; /* never registered */
					atomic_fetch_add(&inj_fired, 1);
				}
				/* EIO: the piece's second page, where it has one. */
				atomic_store(&inj_at, mode == INJ_EIO && s->len > PS ? s->off + PS
										     : s->off);
			}
		}
		prev = s;
		if (mode == INJ_WEINVAL && s->opcode == IORING_OP_WRITE_FIXED &&
		    (fcntl(s->fd, F_GETFL) & O_DIRECT)) {
			s->off += 1; /* the device refuses it: -EINVAL */
			atomic_fetch_add(&inj_fired, 1);
		}
		if (!read)
			continue;
		at = atomic_load(&inj_at);
		if (mode == INJ_EINVAL && s->off == at &&
		    (fcntl(s->fd, F_GETFL) & O_DIRECT)) {
			s->off += 1; /* the device refuses it: -EINVAL */
			atomic_fetch_add(&inj_fired, 1);
		} else if (mode == INJ_EIO && at != UINT64_MAX && s->off <= at &&
			   at < s->off + sqe_bytes(s)) {
			uint64_t ud = s->user_data;

			io_uring_prep_nop(s);
			s->rw_flags = NOP_INJECT_RESULT;
			s->len = (unsigned)-EIO;
			s->user_data = ud;
			atomic_fetch_add(&inj_fired, 1);
		}
	}
}

int io_uring_submit(struct io_uring *ring)
{
	static int (*real)(struct io_uring *);

	if (!real)
		real = (int (*)(struct io_uring *))dlsym(RTLD_NEXT, "io_uring_submit");
	inj_scan(ring);
	return real(ring);
}

int io_uring_submit_and_wait(struct io_uring *ring, unsigned wait_nr)
{
	static int (*real)(struct io_uring *, unsigned);

	if (!real)
		real = (int (*)(struct io_uring *, unsigned))dlsym(RTLD_NEXT,
								  "io_uring_submit_and_wait");
	inj_scan(ring);
	return real(ring, wait_nr);
}

static void inj_arm(int mode)
{
	atomic_store(&inj_set, false);
	atomic_store(&inj_at, UINT64_MAX);
	atomic_store(&inj_fired, 0);
	atomic_store(&inj_pieces, 0);
	atomic_store(&inj_readv, 0);
	atomic_store(&inj_fixed, 0);
	atomic_store(&inj_mode, mode);
}

/* Whether this kernel completes a NOP with the result it is given. */
static bool nop_inject_works(void)
{
	struct io_uring ring;
	struct io_uring_sqe *s;
	struct io_uring_cqe *cqe;
	int res = 0;

	if (io_uring_queue_init(2, &ring, 0) < 0)
		return false;
	s = io_uring_get_sqe(&ring);
	io_uring_prep_nop(s);
	s->rw_flags = NOP_INJECT_RESULT;
	s->len = (unsigned)-EIO;
	if (io_uring_submit_and_wait(&ring, 1) == 1 && io_uring_wait_cqe(&ring, &cqe) == 0) {
		res = cqe->res;
		io_uring_cqe_seen(&ring, cqe);
	}
	io_uring_queue_exit(&ring);
	return res == -EIO;
}

static uint64_t unregistered(struct lpc_cache *c)
{
	struct lpc_stats s;

	lpc_stats(c, &s);
	return s.uring_unregistered;
}

/* --- the I/O layer: one run of 8 frames, 4 each side of chunk 0's end --- */

enum { FPAGES = 64, RUN = 8, AT = 16 /* the run's first file page */ };

struct ctx {
	struct lpc_cache *c;
	struct lpc_file *f;
	struct lpc_page **pg;
	size_t npg;
	unsigned char *want;
	struct iovec iov[RUN];
	bool direct;
};

/* A cache of two chunks and a bit, every frame taken (the arena is ours to
 * read into), and the file open.  Return: false when no ring runs here. */
static bool ctx_open(struct ctx *x)
{
	size_t frames = 2 * CHUNK / PS + 8;
	unsigned char *arena;
	char path[600];

	memset(x, 0, sizeof(*x));
	x->c = tst_wcache_create(frames, PS, LPC_IO_URING, 60000, 80, 90);
	if (x->c->io.ops != &lpc_io_uring_ops || lpc_io_uring_registered(&x->c->io) != 1) {
		tst_cache_destroy(x->c);
		return false;
	}
	REQUIRE(x->c->pool.frames_bytes > CHUNK + RUN * PS, "two chunks");
	x->pg = calloc(frames, sizeof(*x->pg));
	x->want = malloc(FPAGES * PS);
	REQUIRE(x->pg && x->want);
	tst_wfile("p", path, sizeof(path), FPAGES * PS, 23);
	tst_file_bytes(23, 0, x->want, FPAGES * PS);
	x->f = tst_file_open(x->c, path, O_RDONLY);
	x->direct = atomic_load(&x->f->io.direct);
	while (x->npg < frames && lpc_page_alloc(x->c, &x->pg[x->npg]) == 0)
		x->npg++;
	REQUIRE(x->npg == frames, "all frames: %zu", x->npg);
	arena = x->c->pool.frames;
	for (int k = 0; k < RUN; k++)
		x->iov[k] = (struct iovec){ arena + CHUNK - RUN / 2 * PS + (size_t)k * PS, PS };
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

/* The run's frames against the file's bytes from its first page: the
 * pages that hold the file's bytes, counted from the first. */
static int run_good(struct ctx *x)
{
	int k = 0;

	while (k < RUN && !memcmp(x->iov[k].iov_base, x->want + (AT + k) * PS, PS))
		k++;
	return k;
}

static void run_poison(struct ctx *x)
{
	for (int k = 0; k < RUN; k++)
		memset(x->iov[k].iov_base, 0xee, PS);
}

static void batch_end(void *arg, struct lpc_io_rrun *w)
{
	(void)w;
	++*(int *)arg;
}

/* The run read once through lpc_io_readv (batch false: uring_readv, R0)
 * or as a batch of one run (ub_cqe, UB0).  Return: its result. */
static ssize_t run_read(struct ctx *x, bool batch, int *fellback)
{
	struct lpc_io_rrun w = { .iov = x->iov, .iovcnt = RUN, .off = AT * PS, .index = AT };
	int ends = 0;

	*fellback = 0;
	run_poison(x);
	if (!batch)
		return lpc_io_readv(&x->c->io, &x->f->io, x->iov, RUN, AT * PS, AT, fellback);
	lpc_io_readv_batch(&x->c->io, &x->f->io, &w, 1, fellback, batch_end, &ends);
	CHECK_EQ(ends, 1, "the run ended once (io.c RQ5)");
	return w.res;
}

/* Reads the run clean first (both chunks registered, H3; two pieces
 * submitted), then with `mode` injected into its second piece. */
static void t_piece(int mode, bool batch)
{
	const char *path = batch ? "batch (UB0)" : "readv (R0)";
	struct ctx x;
	uint64_t u0;
	ssize_t r;
	int fb;

	if (!ctx_open(&x)) {
		printf("note: no registered io_uring ring here: %s skipped\n", path);
		return;
	}
	if (mode == INJ_EINVAL && !x.direct) {
		printf("note: the file is not O_DIRECT here: EINVAL %s skipped\n", path);
		ctx_close(&x);
		return;
	}
	inj_arm(INJ_NONE);
	r = run_read(&x, batch, &fb);
	CHECK_EQ(r, (ssize_t)(RUN * PS), "%s clean", path);
	CHECK_EQ(run_good(&x), RUN, "%s clean: the file's bytes", path);
	CHECK_EQ(atomic_load(&inj_pieces), 1, "%s: the run went as two READ_FIXED pieces (R0/UB0)",
		 path);
	u0 = unregistered(x.c);
	CHECK_EQ(u0, 0, "both chunks registered");

	inj_arm(mode);
	r = run_read(&x, batch, &fb);
	CHECK(atomic_load(&inj_fired) >= 1, "%s: the fault was made", path);
	switch (mode) {
	case INJ_EFAULT:
		/* H5: the buffer's failure; the rest again, unregistered
		 * (R0a: never taken for the end of an O_DIRECT file). */
		CHECK_EQ(r, (ssize_t)(RUN * PS), "%s EFAULT: the whole run (direct %d)", path,
			 x.direct);
		CHECK_EQ(run_good(&x), RUN, "%s EFAULT: the file's bytes", path);
		CHECK_EQ(fb, 0, "%s EFAULT: no direct fallback", path);
		CHECK_EQ(unregistered(x.c) - u0, 1, "%s EFAULT: the ring counted (H5)", path);
		break;
	case INJ_EINVAL:
		/* R0b: the run refused whole; io.c's direct_off reads it
		 * buffered; no chunk lost. */
		CHECK_EQ(r, (ssize_t)(RUN * PS), "%s EINVAL: the whole run, read buffered", path);
		CHECK_EQ(run_good(&x), RUN, "%s EINVAL: the file's bytes", path);
		CHECK_EQ(fb, 1, "%s EINVAL: io.c direct_off took the file off O_DIRECT", path);
		CHECK_EQ(atomic_load(&x.f->io.direct), 0, "%s EINVAL: buffered now", path);
		CHECK_EQ(unregistered(x.c) - u0, 0,
			 "%s EINVAL: a direct refusal made a registered chunk unusable (H5)", path);
		break;
	case INJ_EIO:
		/* The first piece's bytes; the page before the bad one is in
		 * the piece that failed, so not taken from this request. */
		CHECK_EQ(r, (ssize_t)(RUN / 2 * PS), "%s EIO: the first piece only", path);
		CHECK(run_good(&x) >= RUN / 2, "%s EIO: the first piece's bytes (%d pages)", path,
		      run_good(&x));
		CHECK_EQ(fb, 0, "%s EIO: no direct fallback", path);
		CHECK_EQ(unregistered(x.c) - u0, 0,
			 "%s EIO: an I/O error made a registered chunk unusable (H5)", path);
		break;
	}
	/* The chunks still registered after a fault that is not theirs: the
	 * run is cut into pieces again (after H5's EFAULT: chunk 1 is not). */
	inj_arm(INJ_NONE);
	r = run_read(&x, batch, &fb);
	CHECK_EQ(r, (ssize_t)(RUN * PS), "%s again", path);
	CHECK_EQ(run_good(&x), RUN, "%s again: the file's bytes", path);
	CHECK_EQ(atomic_load(&inj_pieces), mode == INJ_EFAULT ? 0 : 1,
		 "%s again: pieces only while both chunks are registered", path);
	ctx_close(&x);
}

/* A run of RUN frames that lie apart (every other frame of chunk 0: RUN
 * stretches in one registered buffer), as two streams' windows get them
 * from a free list their allocations interleave: read as RUN READ_FIXED
 * pieces, no READV (R0/UB0, URING_PIECES).  With at most 4 pieces a run
 * was one READV, whose frames the kernel pinned per request (lpcbench scan,
 * two scanners, 16 KiB calls: half the pages read ahead went by READV,
 * 9.6 stretches each on average; 4 % with 16 pieces). */
static void t_scattered(bool batch)
{
	const char *path = batch ? "batch (UB0)" : "readv (R0)";
	unsigned char *arena;
	struct ctx x;
	ssize_t r;
	int fb;

	if (!ctx_open(&x)) {
		printf("note: no registered io_uring ring here: scattered %s skipped\n", path);
		return;
	}
	arena = x.c->pool.frames;
	for (int k = 0; k < RUN; k++)
		x.iov[k] = (struct iovec){ arena + PS + 2 * (size_t)k * PS, PS };
	inj_arm(INJ_NONE);
	r = run_read(&x, batch, &fb);
	CHECK_EQ(r, (ssize_t)(RUN * PS), "%s scattered", path);
	CHECK_EQ(run_good(&x), RUN, "%s scattered: the file's bytes", path);
	CHECK_EQ(atomic_load(&inj_readv), 0, "%s scattered: no READV (its frames pinned per request)",
		 path);
	CHECK_EQ(atomic_load(&inj_fixed), RUN, "%s scattered: one READ_FIXED a stretch", path);
	CHECK_EQ(unregistered(x.c), 0, "chunk 0 registered");
	ctx_close(&x);
}

/* --- a WRITE_FIXED the device refuses (EINVAL, O_DIRECT): the write is
 * done again buffered (io.c direct_off), the chunk stays registered (H5
 * is the buffer's failure only) --- */
static void t_write_einval(void)
{
	size_t frames = CHUNK / PS + 8;
	struct lpc_cache *c = tst_wcache_create(frames, PS, LPC_IO_URING, 60000, 80, 90);
	struct lpc_page **pg = calloc(frames, sizeof(*pg));
	unsigned char *want = malloc(FPAGES * PS), *arena = c->pool.frames;
	struct iovec v[2];
	struct lpc_io_wrun w;
	struct lpc_file *f;
	unsigned calls = 0;
	size_t n = 0;
	char path[600];

	REQUIRE(pg && want);
	if (c->io.ops != &lpc_io_uring_ops || lpc_io_uring_registered(&c->io) != 1) {
		printf("note: no registered io_uring ring here: write EINVAL skipped\n");
		goto out;
	}
	tst_wfile("w", path, sizeof(path), FPAGES * PS, 31);
	tst_file_bytes(31, 0, want, FPAGES * PS);
	f = tst_file_open(c, path, O_RDWR);
	if (!atomic_load(&f->io.direct)) {
		printf("note: the file is not O_DIRECT here: write EINVAL skipped\n");
		CHECK_EQ(lpc_file_close(f), 0);
		goto out;
	}
	while (n < frames && lpc_page_alloc(c, &pg[n]) == 0)
		n++;
	REQUIRE(n == frames, "all frames: %zu", n);
	for (size_t i = 0; i < 2 * PS; i++)
		arena[PS + i] = (unsigned char)(i * 13 + 5);
	v[0] = (struct iovec){ arena + PS, PS };
	v[1] = (struct iovec){ arena + 2 * PS, PS };
	memcpy(want + 3 * PS, arena + PS, 2 * PS);
	inj_arm(INJ_WEINVAL);
	w = (struct lpc_io_wrun){ .iov = v, .iovcnt = 2, .off = 3 * PS };
	CHECK_EQ(lpc_io_write_batch(&c->io, &f->io, &w, 1, &calls), 0, "the write, buffered");
	CHECK_EQ(w.err, 0);
	CHECK_EQ(atomic_load(&inj_fired), 1, "the WRITE_FIXED was refused once");
	CHECK_EQ(atomic_load(&f->io.direct), 0, "io.c direct_off took the file off O_DIRECT");
	CHECK_EQ(unregistered(c), 0,
		 "a direct refusal of a WRITE_FIXED made a registered chunk unusable (H5)");
	inj_arm(INJ_NONE);
	CHECK_EQ(lpc_io_sync(&c->io, &f->io), 0);
	tst_kernel_equals(path, want, FPAGES * PS);
	while (n > 0)
		lpc_page_put(pg[--n]);
	CHECK_EQ(lpc_file_close(f), 0);
out:
	tst_cache_destroy(c);
	free(pg);
	free(want);
}

/* --- lpc_pread: a miss's run over two chunks, one bad page inside its
 * second piece --- */
static void t_pread_eio(void)
{
	enum { SIZE = 8 << 20, STEP = 768 << 10 };
	struct lpc_cache *c = tst_wcache_create(6 * CHUNK / PS, PS, LPC_IO_URING, 60000, 80, 90);
	unsigned char *want = malloc(SIZE), *got = malloc(SIZE);
	struct lpc_stats s0, s1;
	struct lpc_file *f;
	uint64_t bad;
	char path[600];

	REQUIRE(want && got);
	if (c->io.ops != &lpc_io_uring_ops || lpc_io_uring_registered(&c->io) != 1) {
		printf("note: no registered io_uring ring here: lpc_pread EIO skipped\n");
		tst_cache_destroy(c);
		free(want);
		free(got);
		return;
	}
	tst_wfile("q", path, sizeof(path), SIZE, 29);
	tst_file_bytes(29, 0, want, SIZE);
	f = tst_file_open(c, path, O_RDONLY);
	CHECK_EQ(lpc_fadvise(f, 0, 0, LPC_FADV_RANDOM), 0);
	lpc_stats(c, &s0);
	inj_arm(INJ_EIO);
	memset(got, 0xee, SIZE);
	/* In order, STEP at a time; a read stopped short by the bad page goes
	 * on after it (that page's own reader is the only one to fail). */
	for (uint64_t off = 0; off < SIZE;) {
		size_t len = SIZE - off < STEP ? SIZE - off : STEP;
		ssize_t n = lpc_pread(f, got + off, len, off);
		uint64_t at = atomic_load(&inj_at);

		if (n == (ssize_t)len) {
			off += len;
			continue;
		}
		if (!CHECK(at != UINT64_MAX && off <= at && at < off + len,
			   "lpc_pread(%" PRIu64 ", %zu) = %zd: short with no bad page in it", off,
			   len, n))
			break;
		if (off < at) {
			if (!CHECK_EQ(n, (ssize_t)(at - off), "a read stops at the bad page (C.2)"))
				break;
			off = at;
			continue;
		}
		if (!CHECK_EQ(n, -EIO, "the bad page's reader gets -EIO"))
			break;
		memcpy(got + at, want + at, PS);
		off += PS;
	}
	lpc_stats(c, &s1);
	bad = atomic_load(&inj_at);
	CHECK(atomic_load(&inj_set), "a run was cut into pieces across two chunks");
	CHECK(atomic_load(&inj_fired) >= 1, "the bad page was read");
	CHECK(tst_first_diff(got, want, SIZE) < 0, "the bytes read differ at %lld",
	      (long long)tst_first_diff(got, want, SIZE));
	CHECK_EQ(lpc_pread(f, got, PS, bad), -EIO, "the bad page again");
	CHECK(s1.read_errors > s0.read_errors, "read errors counted: +%" PRIu64,
	      s1.read_errors - s0.read_errors);
	CHECK_EQ(s1.uring_unregistered - s0.uring_unregistered, 0,
		 "an I/O error made a registered chunk unusable (H5)");
	printf("  bad page %" PRIu64 ": reads +%" PRIu64 ", read_errors +%" PRIu64 "\n",
	       bad / PS, s1.reads - s0.reads, s1.read_errors - s0.read_errors);
	inj_arm(INJ_NONE);
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
	free(want);
	free(got);
}

int main(int argc, char **argv)
{
	bool nop;

	tst_init(argc, argv, 100);
	tst_require_tmpdir();
	inj_arm(INJ_NONE);
	nop = nop_inject_works();
	TST_RUN(t_piece(INJ_EFAULT, false));
	TST_RUN(t_piece(INJ_EINVAL, false));
	if (nop)
		TST_RUN(t_piece(INJ_EIO, false));
	TST_RUN(t_piece(INJ_EFAULT, true));
	TST_RUN(t_piece(INJ_EINVAL, true));
	if (nop)
		TST_RUN(t_piece(INJ_EIO, true));
	TST_RUN(t_scattered(false));
	TST_RUN(t_scattered(true));
	TST_RUN(t_write_einval());
	if (nop)
		TST_RUN(t_pread_eio());
	else
		printf("note: this kernel has no IORING_NOP_INJECT_RESULT: the EIO cases skipped\n");
	return tst_finish();
}
