/* SPDX-License-Identifier: MIT */
/*
 * att_piece_einval.c - attack on 2ebe627 R0b (a later READ_FIXED piece
 * refused -EINVAL refuses the whole run) on a file that is NOT O_DIRECT
 * (taken off it after open, as io.c direct_off leaves it), where no
 * direct_off answers the refusal.  One page inside a run's 2nd piece is bad
 * for good: every read request covering it (READ_FIXED, READ, READV)
 * completes -EINVAL (a NOP with IORING_NOP_INJECT_RESULT).  Claim: only a
 * reader of that page gets an error (C.2: a read stops short at it); the
 * pages of the run's 1st piece, read in full, are not failed with it; every
 * byte right; no hang (alarm).  Mode "eio": the same with -EIO (R0a's
 * case, the control).  RANDOM advice, 768 KiB preads: the caller's runs.
 * Exit 0 held, 1 defect, 77 skip.
 */
#include "../attack/att.h"
#include <dlfcn.h>
#include <signal.h>
#include <liburing.h>
#include "cache/cache.h"

#define PS 4096u
#define SIZE (8u << 20)
#define STEP (768u << 10)
#define NOP_INJECT_RESULT 1u

static _Atomic int inj_err;
static _Atomic uint64_t inj_at = UINT64_MAX;
static _Atomic unsigned inj_fired, inj_pieces;

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

static void scan(struct io_uring *ring)
{
	struct io_uring_sq *sq = &ring->sq;
	struct io_uring_sqe *prev = NULL;

	for (unsigned i = sq->sqe_head; i != sq->sqe_tail; i++) {
		struct io_uring_sqe *s = &sq->sqes[i & sq->ring_mask];
		bool read = s->opcode == IORING_OP_READ_FIXED || s->opcode == IORING_OP_READV ||
			    s->opcode == IORING_OP_READ;
		uint64_t at, ud;

		if (s->opcode == IORING_OP_READ_FIXED && prev &&
		    prev->opcode == IORING_OP_READ_FIXED && prev->off + prev->len == s->off &&
		    prev->buf_index != s->buf_index) {
			uint64_t none = UINT64_MAX;

			atomic_fetch_add(&inj_pieces, 1);
			atomic_compare_exchange_strong(&inj_at, &none,
						       s->len > PS ? s->off + PS : s->off);
		}
		prev = s;
		at = atomic_load(&inj_at);
		if (!read || at == UINT64_MAX || !(s->off <= at && at < s->off + sqe_bytes(s)))
			continue;
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

static void on_alarm(int s)
{
	static const char m[] = "DEFECT: hang (a page LOCKED for ever?)\n";

	(void)s;
	(void)!write(1, m, sizeof(m) - 1);
	_exit(1);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "einval";
	int err = !strcmp(mode, "eio") ? EIO : EINVAL;
	char pa[300];
	static char buf[SIZE];
	struct lpc_cache *c;
	struct lpc_file *f;
	long bad_pages = 0, wrong_fail = 0;
	uint64_t at;
	int fd;

	signal(SIGALRM, on_alarm);
	alarm(60);
	atomic_store(&inj_err, err);
	c = att_cache(64u << 20, PS, LPC_IO_URING, LPC_LOOKUP_LOCKLESS, 1024, 4096);
	if (c->io.ops != &lpc_io_uring_ops || lpc_io_uring_registered(&c->io) != 1) {
		printf("  no registered io_uring ring: skip\n");
		return 77;
	}
	att_make_file("p", SIZE, 7, pa, sizeof(pa));
	if (lpc_file_open(c, pa, O_RDONLY, 0, &f))
		return 77;
	fd = atomic_load(&f->io.fd);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_DIRECT);
	atomic_store(&f->io.direct, 0);
	(void)lpc_fadvise(f, 0, 0, LPC_FADV_RANDOM);
	memset(buf, 0, sizeof(buf));
	for (uint64_t off = 0; off < SIZE;) {
		size_t len = SIZE - off < STEP ? SIZE - off : STEP;
		ssize_t n = lpc_pread(f, buf + off, len, off);

		at = atomic_load(&inj_at);
		if (n == (ssize_t)len) {
			off += len;
			continue;
		}
		printf("  lpc_pread(%" PRIu64 ", %zu) = %zd (bad page at %" PRIu64 ")\n", off, len,
		       n, at);
		if (at >= off && at < off + len && n == (ssize_t)(at - off)) {
			off = at + PS; /* stopped at the bad page: right (C.2) */
			continue;
		}
		if (at == off && n == -err) {
			off += PS; /* the bad page's own reader */
			continue;
		}
		wrong_fail++;
		off += PS; /* go on page by page past what failed */
	}
	at = atomic_load(&inj_at);
	for (uint64_t p = 0; p < SIZE / PS; p++)
		if (p * PS != at && att_bad_word(buf + p * PS, PS, p * PS, 7) >= 0)
			bad_pages++;
	printf("  mode %s: submissions with pieces %u, requests failed %u, bad page %" PRIu64
	       ", wrong pages %ld, reads failed or short that did not stop at the bad page %ld\n",
	       mode, atomic_load(&inj_pieces), atomic_load(&inj_fired), at, bad_pages,
	       wrong_fail);
	if (at == UINT64_MAX) {
		printf("  no run was cut into pieces: skip\n");
		return 77;
	}
	{
		ssize_t n = lpc_pread(f, buf, PS, at);

		printf("  the bad page alone: %zd\n", n);
		ATT_CHECK(n == -err, "the bad page alone read %zd, not %d", n, -err);
	}
	ATT_CHECK(bad_pages == 0, "%ld pages wrong", bad_pages);
	ATT_CHECK(wrong_fail == 0, "%ld reads failed for pages that are fine", wrong_fail);
	lpc_file_close(f);
	lpc_cache_destroy(c);
	att_cleanup();
	printf("%s\n", att_fails ? "DEFECT" : "held");
	return att_fails ? 1 : 0;
}
