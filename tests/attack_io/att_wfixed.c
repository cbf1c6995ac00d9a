/* SPDX-License-Identifier: MIT */
/*
 * att_wfixed.c - attack on 2ebe627 (uring.c H5 is -EFAULT only): a
 * WRITE_FIXED that fails with another error is now the write's own error,
 * not done again the sync way.  Claim attacked: a dirty page is never
 * dropped and its error never lost (lpc_fsync reports it, the page stays
 * dirty, a later lpc_fsync writes it), and EINTR/EAGAIN are still retried.
 *
 * Injection: io_uring_submit* are interposed (as tests/unit/
 * test_uring_pieces.c does); while armed, the first WRITE_FIXED SQE (or
 * every one, mode "all") is turned into a NOP whose result is the chosen
 * errno (IORING_NOP_INJECT_RESULT, Linux 6.10).
 * Modes: eio (default), eagain, eintr, eio-all, enospc; "-holes" after one
 * (eio-holes, eagain-holes) writes every other page (32 runs of one page)
 * and fails the 5th WRITE_FIXED instead of the first.
 * Exit 0 held, 1 defect, 77 skip (no registered ring / no NOP inject).
 */
#include "../attack/att.h"
#include <dlfcn.h>
#include <liburing.h>
#include "cache/cache.h"

#define PS 4096u
#define NPAGES 64u
#define NOP_INJECT_RESULT 1u

static _Atomic int inj_err, inj_all, inj_armed, inj_skip; /* inj_skip: WRITE_FIXEDs let through first */
static _Atomic unsigned inj_fired, wfixed_seen;

static void scan(struct io_uring *ring)
{
	struct io_uring_sq *sq = &ring->sq;

	for (unsigned i = sq->sqe_head; i != sq->sqe_tail; i++) {
		struct io_uring_sqe *s = &sq->sqes[i & sq->ring_mask];
		uint64_t ud;

		if (s->opcode != IORING_OP_WRITE_FIXED)
			continue;
		atomic_fetch_add(&wfixed_seen, 1);
		if (!atomic_load(&inj_armed))
			continue;
		if (!atomic_load(&inj_all) && atomic_load(&inj_fired))
			continue;
		if (atomic_load(&inj_skip) > 0) {
			atomic_fetch_sub(&inj_skip, 1);
			continue;
		}
		ud = s->user_data;
		io_uring_prep_nop(s);
		s->rw_flags = NOP_INJECT_RESULT;
		s->len = (unsigned)-atomic_load(&inj_err);
		s->user_data = ud;
		atomic_fetch_add(&inj_fired, 1);
	}
}

int io_uring_submit(struct io_uring *ring)
{
	static int (*real)(struct io_uring *);

	if (!real)
		real = (int (*)(struct io_uring *))dlsym(RTLD_NEXT, "io_uring_submit");
	scan(ring);
	return real(ring);
}

int io_uring_submit_and_wait(struct io_uring *ring, unsigned wait_nr)
{
	static int (*real)(struct io_uring *, unsigned);

	if (!real)
		real = (int (*)(struct io_uring *, unsigned))dlsym(RTLD_NEXT,
								  "io_uring_submit_and_wait");
	scan(ring);
	return real(ring, wait_nr);
}

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

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "eio";
	bool holes = strstr(mode, "-holes") != NULL;
	bool transient = !strncmp(mode, "eagain", 6) || !strncmp(mode, "eintr", 5);
	int err = !strncmp(mode, "eagain", 6) ? EAGAIN : !strncmp(mode, "eintr", 5) ? EINTR
		  : !strcmp(mode, "enospc") ? ENOSPC : EIO;
	char pa[300];
	static unsigned char buf[NPAGES * PS], disk[NPAGES * PS];
	struct lpc_cache *c;
	struct lpc_file *f;
	struct lpc_stats s0, s1;
	int rc1, rc2, rc3, fd;

	alarm(60); /* a hang is a failure */
	if (!nop_inject_works()) {
		printf("  no IORING_NOP_INJECT_RESULT here: skip\n");
		return 77;
	}
	atomic_store(&inj_err, err);
	atomic_store(&inj_all, !strcmp(mode, "eio-all"));
	c = att_cache(16u << 20, PS, LPC_IO_URING, LPC_LOOKUP_LOCKLESS, 128, 512);
	if (c->io.ops != &lpc_io_uring_ops || lpc_io_uring_registered(&c->io) != 1) {
		printf("  no registered io_uring ring: skip\n");
		return 77;
	}
	att_make_file("w", NPAGES * PS, 11, pa, sizeof(pa));
	if (lpc_file_open(c, pa, O_RDWR, 0, &f)) {
		printf("open failed\n");
		return 77;
	}
	printf("  mode %s, file %s\n", mode, atomic_load(&f->io.direct) ? "O_DIRECT" : "buffered");
	if (holes) {
		int fd0 = open(pa, O_RDONLY);

		/* the pages not written keep the file's bytes */
		ATT_CHECK(fd0 >= 0 && pread(fd0, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf), "orig");
		close(fd0);
		for (unsigned p = 0; p < NPAGES; p += 2) {
			for (unsigned b = 0; b < PS; b++)
				buf[p * PS + b] = (unsigned char)(p * 5 + b * 3 + 1);
			ATT_CHECK(lpc_pwrite(f, buf + p * PS, PS, (uint64_t)p * PS) == PS, "pwrite");
		}
		atomic_store(&inj_skip, 4);
	} else {
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = (unsigned char)(i * 7 + 3);
		ATT_CHECK(lpc_pwrite(f, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf), "pwrite");
	}
	lpc_stats(c, &s0);
	atomic_store(&inj_armed, 1);
	rc1 = lpc_fsync(f);
	atomic_store(&inj_armed, 0);
	lpc_stats(c, &s1);
	rc2 = lpc_fsync(f);
	rc3 = lpc_fsync(f);
	printf("  WRITE_FIXED seen %u, injected %u (-%d); fsync %d, then %d, then %d; "
	       "write_errors +%" PRIu64 "\n",
	       atomic_load(&wfixed_seen), atomic_load(&inj_fired), err, rc1, rc2, rc3,
	       s1.write_errors - s0.write_errors);
	if (!atomic_load(&inj_fired)) {
		printf("  no WRITE_FIXED submitted: skip\n");
		return 77;
	}
	if (transient) {
		ATT_CHECK(rc1 == 0, "an interrupted WRITE_FIXED (-%d) was not retried: fsync %d",
			  err, rc1);
	} else {
		ATT_CHECK(rc1 == -err, "the write error was lost: fsync returned %d, not %d", rc1,
			  -err);
		ATT_CHECK(s1.write_errors > s0.write_errors, "write_errors not counted");
	}
	ATT_CHECK(rc2 == 0, "the fsync after the error: %d (page not written again?)", rc2);
	ATT_CHECK(rc3 == 0, "third fsync %d", rc3);
	fd = open(pa, O_RDONLY);
	ATT_CHECK(fd >= 0 && pread(fd, disk, sizeof(disk), 0) == (ssize_t)sizeof(disk), "read back");
	ATT_CHECK(!memcmp(disk, buf, sizeof(buf)), "a dirty page was dropped: the file differs");
	close(fd);
	lpc_file_close(f);
	lpc_cache_destroy(c);
	att_cleanup();
	printf("%s\n", att_fails ? "DEFECT" : "held");
	return att_fails ? 1 : 0;
}
