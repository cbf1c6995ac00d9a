/* SPDX-License-Identifier: MIT */
/*
 * ring_inj.h - fails one READ_FIXED piece of a run (uring.c R0/UB0) in the
 * kernel, the way a stale registration does: io_uring_submit and
 * io_uring_submit_and_wait are interposed (the program defines them; the
 * real ones come from liburing.so by dlsym RTLD_NEXT), and before the real
 * submit the pending SQEs are scanned for two READ_FIXED entries back to
 * back in the file (a.off + a.len == b.off) in different registered
 * buffers: pieces of one run.  The second one's buf_index is set to an
 * index never registered, so the kernel completes it with -EFAULT (as
 * for a chunk whose registration went away, H5).  Once per program when
 * inj_armed is set.
 */
#include <dlfcn.h>
#include <unistd.h>
#include <liburing.h>
#include <stdatomic.h>

static atomic_int inj_armed, inj_done;
/* inj_misalign: instead, every piece of that run gets off + 1, so an
 * O_DIRECT read of each is refused -EINVAL (as on a device whose logical
 * block is larger than the page: io.h lpc_io_read_ends, io.c direct_off). */
static atomic_int inj_misalign;
/* inj_short: instead, the first piece of that run asks 4196 B less (a
 * short transfer of it, ending inside a page, the later pieces full). */
static atomic_int inj_short;
/* inj_partial: instead, that submission takes only its first entry (the
 * rest stay in the SQ, as when io_uring_enter cannot allocate requests),
 * and the submit after it fails -EBUSY (uring.c RS1-RS4). */
static atomic_int inj_partial;
static int inj_partial_next; /* the next io_uring_submit fails (one ring) */
static atomic_uint inj_pieces_seen; /* submissions that carried pieces */
static atomic_int inj_main; /* the faulted submission was the main thread's */

static bool inj_scan(struct io_uring *ring)
{
	struct io_uring_sq *sq = &ring->sq;
	struct io_uring_sqe *prev = NULL;
	uint64_t prev_end = 0;
	bool mine = false; /* this submission is the one faulted */

	for (unsigned i = sq->sqe_head; i != sq->sqe_tail; i++) {
		struct io_uring_sqe *s = &sq->sqes[i & sq->ring_mask];
		uint64_t off = s->off, end = s->off + s->len;

		if (s->opcode != IORING_OP_READ_FIXED) {
			prev = NULL;
			continue;
		}
		if (prev && prev_end == off && prev->buf_index != s->buf_index) {
			/* inj_short takes 4196 B off prev's u32 len: a piece of
			 * one page (4096 B) would wrap to 4 GiB - 100, a range
			 * past its buffer, which the kernel completes -EFAULT
			 * (validate_fixed_range) -- an EFAULT injected by
			 * mistake, taken for H5's stale registration.  Such a
			 * pair is passed over. */
			bool fits = !atomic_load(&inj_short) || prev->len > 4196;

			atomic_fetch_add(&inj_pieces_seen, 1);
			if (fits && atomic_load(&inj_armed) && !atomic_exchange(&inj_done, 1)) {
				mine = true;
				atomic_store(&inj_main, gettid() == getpid());
				if (atomic_load(&inj_partial))
					;
				else if (atomic_load(&inj_short))
					prev->len -= 4196;
				else if (atomic_load(&inj_misalign))
					prev->off += 1;
				else
					s->buf_index = 60000; /* never registered: -EFAULT */
			}
			if (mine && atomic_load(&inj_misalign))
				s->off += 1;
		}
		prev = s;
		prev_end = end;
	}
	return mine;
}

int io_uring_submit(struct io_uring *ring)
{
	static int (*real)(struct io_uring *);

	if (!real)
		real = (int (*)(struct io_uring *))dlsym(RTLD_NEXT, "io_uring_submit");
	if (inj_partial_next && ring->sq.sqe_head != ring->sq.sqe_tail) {
		inj_partial_next = 0;
		return -EBUSY;
	}
	inj_scan(ring);
	return real(ring);
}

int io_uring_submit_and_wait(struct io_uring *ring, unsigned wait_nr)
{
	static int (*real)(struct io_uring *, unsigned);

	if (!real)
		real = (int (*)(struct io_uring *, unsigned))dlsym(RTLD_NEXT,
								  "io_uring_submit_and_wait");
	if (inj_scan(ring) && atomic_load(&inj_partial)) {
		unsigned tail = ring->sq.sqe_tail;
		int n;

		ring->sq.sqe_tail = ring->sq.sqe_head + 1;
		n = real(ring, wait_nr);
		ring->sq.sqe_tail = tail;
		inj_partial_next = 1;
		return n;
	}
	return real(ring, wait_nr);
}
