/* SPDX-License-Identifier: MIT */
/*
 * uring.c - the io_uring backend (liburing): page reads, writeback's runs
 * submitted together, IORING_OP_FSYNC with IORING_FSYNC_DATASYNC; truncate
 * is ftruncate (no ring op needed).
 *
 * Ring ownership: one ring per (thread, cache), made on the thread's first
 * I/O through the cache and kept in the thread's block of the pool's owner
 * (core/thread.h: io_ring); it is closed when the thread exits or when the
 * cache is destroyed (lpc_towner_orphan), whichever comes first, under
 * lpc_threads_lock.  Why this and not one ring per cache under a mutex:
 *  - a ring is one producer and one consumer; a thread's own ring needs no
 *    lock to submit or reap, so misses of many threads run in parallel as
 *    their preads did.  A shared ring would hold its mutex from submission
 *    to completion (serialising every miss behind one disk access) or need a
 *    completion thread to hand results back (a wake-up per read);
 *  - a batch (the runs of one writeback pass) comes from one thread, so that
 *    thread's ring is where it goes in one io_uring_enter;
 *  - the cost is a ring per thread that does I/O: its fd and a few pages
 *    (without CAP_IPC_LOCK, counted against RLIMIT_MEMLOCK).  The arena's
 *    registration is made once per cache, not per ring: see below.
 * Every request is reaped by its thread before the call returns: no request
 * outlives its call, so a ring is idle whenever another thread closes it
 * (cache destroy), and no frame is touched by the kernel after its call.
 *
 * Registered buffers, in chunks as they are used.  The frame arena
 * (page/pool.c, 2 MiB aligned) is cut into chunks of 2^chunk_shift bytes:
 * 2 MiB, or more where the arena needs more than the kernel's 16384 buffers
 * (at most 1 GiB, the kernel's bound per buffer; a frame never straddles
 * two chunks, page sizes divide 2 MiB).  Chunk i is registered buffer i.
 * Registering pins: it faults the chunk in and charges it to
 * RLIMIT_MEMLOCK (without CAP_IPC_LOCK).  Registering the whole arena at the
 * first I/O, as before, made the first I/O cost the budget (0.9 s for
 * 256 MiB, 4 s for 1 GiB) and the whole budget resident; a chunk costs what
 * 2 MiB costs, once, when the first I/O into one of its frames needs it.
 * Measured against going unregistered (READ/WRITEV of the same frames,
 * O_DIRECT, interleaved): registered reads and writes were 4-17 % faster
 * per request on this machine's disk, so registration stays.
 *
 * Steps (G: the cache's table, on io->reg; H: a thread's ring):
 *   G1 the first ring made registers a sparse table of nchunks empty slots
 *      on io->reg (IORING_REGISTER_BUFFERS2, IORING_RSRC_REGISTER_SPARSE:
 *      nothing pinned), under reg_lock, once (reg_state);
 *   H1 each ring, made after G1, clones io->reg's whole table
 *      (IORING_REGISTER_CLONE_BUFFERS, Linux 6.12; into a ring without a
 *      table, so no flag, no offsets: what 6.12 accepts) under reg_lock, and
 *      copies chunk_state into its own `have` bitmap in the same critical
 *      section: the bitmap is then exactly what its table holds;
 *   H2 an I/O into frames of chunk i: if the ring's `have` bit is set (a
 *      plain load: the bitmap is its thread's), use buffer i;
 *   H3 else, under reg_lock: if chunk_state[i] is 0, register the chunk on
 *      io->reg (G2: update of slot i; chunk_state[i] becomes 1, or 2 when
 *      the kernel refused, which also sets io->unregistered: no chunk is
 *      tried again); if it is 1, clone io->reg's WHOLE table into the ring
 *      again and rebuild `have` from chunk_state in the same critical
 *      section (as H1):
 *      H3a with IORING_REGISTER_DST_REPLACE (Linux 6.13), src_off =
 *          dst_off = 0, nr = nchunks: the range ends at the table's end.
 *          Not one slot: kernels 6.13 to 6.18.0 (fixed upstream by
 *          525916ce4966) drop the destination's slots after the cloned
 *          range, so a one-slot clone lost every higher chunk the ring's
 *          `have` still claimed (READ_FIXED into them: -EFAULT).  The
 *          kernel builds a whole new table on every clone anyway: a clone
 *          of 16384 slots took 107 us against 68 us for one slot, 10 us
 *          against 6 us at 2048 (a probe program: DST_REPLACE into a
 *          cloned ring, 6.18.44, 2-CPU machine under load);
 *      H3b where DST_REPLACE is refused (Linux 6.12: EINVAL or EBUSY,
 *          remembered in io->no_replace), unregister the ring's table and
 *          clone the whole table into the empty ring.  The ring has no
 *          request in flight (every request is reaped before its call
 *          returns); entries already queued in a batch name slots that the
 *          new table holds too (a slot of io->reg is never emptied).  If
 *          the clone then fails, the ring is left without a table: `fixed`
 *          false, `have` empty, H4;
 *   H4 a chunk the ring cannot have: the request is a plain READ or
 *      WRITEV, the ring is counted unregistered (once per ring) and asks
 *      for no new chunk again (`closed`: no lock on later I/O);
 *   H5 a fixed request that fails -EFAULT (what the kernel answers for a
 *      buffer it does not hold: an index past the table, an empty slot, a
 *      range outside the buffer) is done again unregistered (READ through
 *      the ring; WRITEV the sync way), and chunk i is never used registered
 *      on that ring again (`bad` bit i; `have` bit cleared; H4's count and
 *      line).  Any other error is the request's own, not the buffer's, and
 *      is taken as the same request unregistered would have met it, the
 *      chunk kept: -EINVAL on an O_DIRECT file (a transfer the device
 *      refuses: io.c direct_off reads it again buffered, for good), -EIO
 *      (the I/O error itself, returned), EINTR/EAGAIN (tried again).  A
 *      refusal answered by H5 was a defect: it cost the chunk registered
 *      I/O on that ring for an error registration had no part in.
 * Why it holds: a ring uses buffer i only after it set bit i itself, in H1
 * or H3, with slot i in its table (cloned from a slot that G2 filled; a
 * clone copies the whole table, so no bit outlives its slot whatever the
 * kernel does to slots outside a cloned range); a slot of io->reg is never
 * removed before the cache is destroyed, so a set bit stays true, and H5
 * catches a kernel that breaks this anyway.  No slot can send a read to
 * the wrong frame: slot i only ever holds chunk i (G2 and the no-clone H3
 * register chunk i at index i; a clone keeps each slot's index), and the
 * kernel checks a fixed request's address range against its slot's buffer
 * (-EFAULT outside it, what H5 answers: no byte moved), so a stale or wrong
 * slot can cost registered I/O, never data.  `have` is written only by
 * its ring's thread (bits set under reg_lock in H1 and H3, cleared by H5),
 * the ring's table changed only under reg_lock (or dropped whole with
 * its ring), and io->reg's too (G2): two rings' H3 serialise, and a clone
 * never copies a half-made update.  Threads' rings share the cache's pin
 * (a clone takes a reference on the registered buffer, no second pin, no
 * second charge).  Where the kernel has no clone (H1 fails
 * with EINVAL: before 6.12), the ring registers a sparse table of its own,
 * and H3 registers the chunk in it directly; G2 is then that registration
 * itself, made by the first ring to need the chunk (io->reg's table stays
 * empty), and each other ring that uses the chunk pins it once more (memory
 * already resident, charged against RLIMIT_MEMLOCK again): a chunk costs
 * the limit once per ring that uses it.  G1 needs IORING_RSRC_REGISTER_SPARSE (Linux 5.19): before it
 * (IORING_REGISTER_BUFFERS2 of 5.13 rejects the flag with EINVAL) G1
 * fails and every ring runs unregistered.  When the kernel refuses a pin
 * (RLIMIT_MEMLOCK, no CAP_IPC_LOCK) at G2, the rings run unregistered from
 * then on but for chunks they already have: counted per ring
 * (uring_unregistered), one line on stderr once per process naming the
 * step that was refused.
 * pinned_end (the end of the highest chunk registered, under reg_lock,
 * read relaxed by lpc_stats) tells lpc_stats how far pinning made the
 * arena resident.
 *
 * Fallback: lpc_io_uring_init probes with a ring of its own; when the kernel
 * refuses (ENOSYS: no io_uring; EPERM/EACCES: seccomp or the
 * io_uring_disabled sysctl; ENOMEM) the cache uses the sync backend and
 * counts uring_fallbacks.  A thread whose own ring cannot be made later, or
 * whose ring fails to submit, does its I/O with the sync backend's calls
 * (counted the same way, once per thread and cache).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <liburing.h>

#include "core/debug.h"
#include "core/rcu.h"
#include "io/io.h"

#define URING_ENTRIES 128u /* writeback.c WB_RUNS: a batch in one submission */
#define URING_CHUNK_MIN_SHIFT 21 /* 2 MiB: a huge page (page/pool.c) */
#define URING_CHUNK_MAX_SHIFT 30 /* 1 GiB: the kernel's bound per buffer */
#define URING_MAX_BUFS 16384u    /* the kernel's IORING_MAX_REG_BUFFERS */
/* IORING_REGISTER_CLONE_BUFFERS (Linux 6.12), newer than liburing 2.3's
 * headers: the opcode and its argument as the kernel defines them. */
#define URING_REGISTER_CLONE_BUFFERS 30u
#define URING_CLONE_DST_REPLACE 2u /* IORING_REGISTER_DST_REPLACE (Linux 6.13) */
struct uring_clone_buffers {
	uint32_t src_fd, flags, src_off, dst_off, nr, pad[3];
};

struct uring {
	struct io_uring ring;
	bool fixed;  /* the ring has a table of the arena's chunks (H1) */
	bool cloned; /* ... cloned from io->reg (else its own, no clone) */
	bool noted;  /* counted in uring_unregistered (H4) */
	bool closed; /* H3 failed: no new chunk for this ring (no lock taken
		      * again to learn it) */
	uint64_t *have; /* bit i: slot i of the table holds chunk i; its
			 * thread's, plain loads and stores */
	uint64_t *bad;  /* bit i: a fixed request on buffer i failed (H5):
			 * never registered on this ring again; same words */
	bool reaping;   /* inside ring_run's RS5 call: the ring has requests
			 * in flight, so no new one may be made on it (rule
			 * URING-REAP-NESTED) */
};

/* A thread whose ring could not be made: its io_ring points here. */
static char ring_none;
static _Atomic bool unregistered_said;

/* TSan build: liburing maps and unmaps a ring's memory with raw system
 * calls, which TSan does not see, so a ring made where a closed one was
 * mapped (a later thread's, or a later cache's) looks as if its first SQE
 * writes raced with the old ring's last ones.  A release on ring_tsan_token
 * before each close's unmap and an acquire on it after each make tell TSan
 * that every close comes before the makes that follow it, as the kernel's
 * unmap and map do.  (Nothing else joins them: the two rings have different
 * owners.) */
static char ring_tsan_token;

static void ring_free(void *arg)
{
	struct uring *r = arg;

	/* Before the unmap, not after: a ring made at this address once the
	 * unmap is done must find the release already there.  Released after
	 * it, a thread that mapped its new ring in between acquired first,
	 * and TSan took its SQE writes for a race with this ring's
	 * (test_read_run under TSan, about one run in four: a getter
	 * thread's ring, then a readahead thread's at the same address). */
	lpc_tsan_release(&ring_tsan_token);
	io_uring_queue_exit(&r->ring);
	free(r->have);
	free(r);
}

/* What refused a registration, for the line on stderr. */
enum why { WHY_PIN, WHY_SPARSE, WHY_CLONE, WHY_FAULT };

static const char *const why_text[] = {
	[WHY_PIN] = "the kernel refused to pin: RLIMIT_MEMLOCK too low, no CAP_IPC_LOCK?",
	[WHY_SPARSE] = "no sparse buffer table: Linux 5.19 or later is needed",
	[WHY_CLONE] = "the kernel refused to clone the cache's table into this thread's ring",
	[WHY_FAULT] = "a request on a registered buffer failed",
};

/* H4: counts a ring running unregistered (once); says so once per process. */
static void note_unregistered(struct lpc_io *io, struct uring *r, struct lpc_tcache *t, int err,
			      enum why why)
{
	if (r) {
		if (r->noted)
			return;
		r->noted = true;
	}
	lpc_count(t, LPC_C_URING_UNREGISTERED);
	if (!atomic_exchange_explicit(&unregistered_said, true, memory_order_relaxed))
		fprintf(stderr,
			"lpc: io_uring: cannot register the frame arena's chunks (%s: %s): "
			"running unregistered\n",
			strerror(-err), why_text[why]);
}

/* Chunk i's bytes. */
static struct iovec chunk_iov(const struct lpc_io *io, size_t i)
{
	size_t off = i << io->chunk_shift, len = (size_t)1 << io->chunk_shift;

	if (len > io->arena_bytes - off)
		len = io->arena_bytes - off;
	return (struct iovec){ .iov_base = io->arena + off, .iov_len = len };
}

/* Registers chunk i in slot i of r's table.  Return: 0 or negative errno. */
static int chunk_register(struct lpc_io *io, struct io_uring *ring, size_t i)
{
	struct iovec iov = chunk_iov(io, i);
	int rc = io_uring_register_buffers_update_tag(ring, (unsigned)i, &iov, NULL, 1);

	return rc < 0 ? rc : rc == 1 ? 0 : -ENOMEM;
}

/* Clones io->reg's whole table into r's: into a ring without one
 * (replace false: nr 0, no offsets, what Linux 6.12 accepts), or replacing
 * r's (H3a: DST_REPLACE, nr = nchunks, so the cloned range ends at the
 * table's end and no kernel keeps a slot of r's old table).  Return: 0 or
 * negative errno (-EINVAL: a kernel without IORING_REGISTER_CLONE_BUFFERS,
 * or, with replace, without DST_REPLACE). */
static int ring_clone(struct lpc_io *io, struct uring *r, bool replace)
{
	struct uring *src = io->reg;
	struct uring_clone_buffers arg = { .src_fd = (uint32_t)src->ring.ring_fd,
					   .flags = replace ? URING_CLONE_DST_REPLACE : 0,
					   .nr = replace ? (uint32_t)io->nchunks : 0 };
	long rc = syscall(SYS_io_uring_register, r->ring.ring_fd, URING_REGISTER_CLONE_BUFFERS,
			  &arg, 1);

	return rc < 0 ? -errno : 0;
}

/* r's `have`: exactly the chunks io->reg holds, less r's bad ones.
 * Context: reg_lock, right after a whole-table clone (H1, H3). */
static void have_from_state(struct lpc_io *io, struct uring *r)
{
	for (size_t i = 0; i < io->nchunks; i++) {
		uint64_t bit = (uint64_t)1 << (i % 64);

		if (io->chunk_state[i] == 1 && !(r->bad[i / 64] & bit))
			r->have[i / 64] |= bit;
		else
			r->have[i / 64] &= ~bit;
	}
}

/* H3a/H3b: r's table again, cloned whole.  Context: reg_lock, r->cloned.
 * Return: 0 or negative errno (r then has no table: `fixed` false). */
static int ring_reclone(struct lpc_io *io, struct uring *r)
{
	size_t words = (io->nchunks + 63) / 64;
	int rc = -EINVAL;

	if (!io->no_replace) {
		rc = ring_clone(io, r, true);					/* H3a */
		if (rc == -EINVAL || rc == -EBUSY)
			io->no_replace = true; /* Linux 6.12 */
	}
	if (io->no_replace) {							/* H3b */
		memset(r->have, 0, words * sizeof(*r->have));
		rc = io_uring_unregister_buffers(&r->ring);
		if (rc == 0 || rc == -ENXIO)
			rc = ring_clone(io, r, false);
		if (rc)
			r->fixed = false;
	}
	if (rc == 0)
		have_from_state(io, r);
	return rc;
}

/* G1: the cache's sparse table, made once.  Context: reg_lock.  Return: 0
 * when io->reg has it; negative errno otherwise. */
static int reg_get_locked(struct lpc_io *io)
{
	if (io->reg_state == 0) {
		struct uring *reg = io->reg;
		int rc = io->nchunks ? io_uring_register_buffers_sparse(&reg->ring,
									(unsigned)io->nchunks)
				     : -E2BIG;

		io->reg_state = rc == 0 ? 1 : rc;
		io->reg_why = rc == -EINVAL ? WHY_SPARSE : WHY_PIN;
		if (rc)
			atomic_store_explicit(&io->unregistered, 1, memory_order_relaxed);
	}
	return io->reg_state == 1 ? 0 : io->reg_state;
}

/* H1: gives a new ring its table.  Return: 0 or negative errno, with
 * *why the step refused. */
static int ring_table(struct lpc_io *io, struct uring *r, enum why *why)
{
	size_t words = (io->nchunks + 63) / 64;
	int rc;

	*why = WHY_PIN;
	if (!words)
		words = 1;
	r->have = calloc(2 * words, sizeof(*r->have));
	if (!r->have)
		return -ENOMEM;
	r->bad = r->have + words;
	pthread_mutex_lock(&io->reg_lock);
	/* A refusal (G1 or G2) is final: reg_state holds its error. */
	rc = atomic_load_explicit(&io->unregistered, memory_order_relaxed)
		     ? (io->reg_state < 0 ? io->reg_state : -ENOMEM)
		     : reg_get_locked(io);
	*why = (enum why)io->reg_why;
	if (rc == 0) {
		*why = WHY_CLONE;
		rc = ring_clone(io, r, false);
		if (rc == 0) {
			r->cloned = true;
			have_from_state(io, r);
		} else if (rc == -EINVAL || rc == -EOPNOTSUPP || rc == -ENOSYS) {
			/* A kernel without clone: a table of its own. */
			rc = io_uring_register_buffers_sparse(&r->ring, (unsigned)io->nchunks);
			*why = rc == -EINVAL ? WHY_SPARSE : WHY_PIN;
		}
	}
	pthread_mutex_unlock(&io->reg_lock);
	if (rc == 0)
		r->fixed = true;
	return rc;
}

/* H3: gets chunk i into r's table.  Return: true if r may use buffer i. */
static bool ring_chunk(struct lpc_io *io, struct uring *r, struct lpc_tcache *t, size_t i)
{
	enum why why = WHY_PIN;
	bool mine = false; /* G2 registered it in r's own table */
	int rc = 0;

	pthread_mutex_lock(&io->reg_lock);
	if (io->chunk_state[i] == 0) {
		if (atomic_load_explicit(&io->unregistered, memory_order_relaxed)) {
			rc = io->reg_state < 0 ? io->reg_state : -ENOMEM;
		} else {
			/* Without clone, no ring would use io->reg's pin: the
			 * first ring to need the chunk pins it for the cache. */
			struct uring *reg = r->cloned ? io->reg : r;

			rc = chunk_register(io, &reg->ring, i);		/* G2 */
			mine = !r->cloned && rc == 0;
			io->chunk_state[i] = rc == 0 ? 1 : 2;
			if (rc) {
				io->reg_state = rc;
				io->reg_why = WHY_PIN;
				atomic_store_explicit(&io->unregistered, 1, memory_order_relaxed);
			} else {
				struct iovec iov = chunk_iov(io, i);
				size_t end = (size_t)((unsigned char *)iov.iov_base - io->arena) +
					     iov.iov_len;

				if (end > atomic_load_explicit(&io->pinned_end,
							       memory_order_relaxed))
					atomic_store_explicit(&io->pinned_end, end,
							      memory_order_relaxed);
			}
		}
	} else if (io->chunk_state[i] == 2) {
		rc = io->reg_state < 0 ? io->reg_state : -ENOMEM;
	}
	if (rc == 0 && r->cloned) {
		rc = ring_reclone(io, r);
		why = WHY_CLONE;
	} else if (rc == 0) {
		if (!mine)
			rc = chunk_register(io, &r->ring, i); /* a second pin */
		if (rc == 0)
			r->have[i / 64] |= (uint64_t)1 << (i % 64);
	} else {
		why = (enum why)io->reg_why; /* the refusal that made it final */
	}
	pthread_mutex_unlock(&io->reg_lock);
	if (rc) {
		r->closed = true;
		note_unregistered(io, r, t, rc, why);				/* H4 */
		return false;
	}
	return (r->have[i / 64] >> (i % 64)) & 1;
}

/* H5: a fixed request on buffer i failed with err: chunk i is not used
 * registered on r again. */
static void ring_bad(struct lpc_io *io, struct uring *r, struct lpc_tcache *t, int i, int err)
{
	r->have[i / 64] &= ~((uint64_t)1 << (i % 64));
	r->bad[i / 64] |= (uint64_t)1 << (i % 64);
	note_unregistered(io, r, t, err, WHY_FAULT);
}

/* Makes this thread's ring for io.  Return: it, or NULL (use sync). */
static struct uring *ring_make(struct lpc_io *io, struct lpc_tcache *t)
{
	struct uring *r = calloc(1, sizeof(*r));
	enum why why;
	int rc;

	if (!r || io_uring_queue_init(URING_ENTRIES, &r->ring, 0) < 0) {
		free(r);
		lpc_count(t, LPC_C_URING_FALLBACKS);
		t->io_ring = &ring_none;
		return NULL;
	}
	lpc_tsan_acquire(&ring_tsan_token);
	rc = ring_table(io, r, &why);
	if (rc)
		note_unregistered(io, r, t, rc, why);
	t->io_ring = r;
	t->io_ring_free = ring_free;
	return r;
}

/* This thread's ring for the file's cache, made on first use.  Return: NULL
 * when the thread does its I/O with the sync backend. */
static struct uring *ring_get(struct lpc_io *io, struct lpc_tcache **tp)
{
	struct lpc_tcache *t = lpc_tcache(io->owner);

	*tp = t;
	if (unlikely(!t))
		return NULL;
	if (likely(t->io_ring))
		return t->io_ring == &ring_none ? NULL : t->io_ring;
	return ring_make(io, t);
}

/* A ring that failed to submit is closed: the thread goes sync from now on
 * (its queued entries, never consumed, go with it). */
static void ring_kill(struct lpc_tcache *t)
{
	ring_free(t->io_ring);
	t->io_ring = &ring_none;
	t->io_ring_free = NULL;
	lpc_count(t, LPC_C_URING_FALLBACKS);
}

/* True when the iovecs lie end to end from iov[0] (one fixed buffer can
 * carry them); their total length in *total. */
static bool iov_flat(const struct iovec *iov, int iovcnt, size_t *total)
{
	const char *base = iov[0].iov_base;
	size_t n = 0;
	bool flat = true;

	for (int j = 0; j < iovcnt; j++) {
		flat = flat && (const char *)iov[j].iov_base == base + n;
		n += iov[j].iov_len;
	}
	*total = n;
	return flat;
}

/* The registered buffer holding [p, p + len) (H2, H3), or -1. */
static int buf_index(struct lpc_io *io, struct uring *r, struct lpc_tcache *t, const void *p,
		     size_t len)
{
	const unsigned char *b = p;
	size_t off, i;

	if (!r->fixed || b < io->arena || b + len > io->arena + io->arena_bytes || !len)
		return -1;
	off = (size_t)(b - io->arena);
	i = off >> io->chunk_shift;
	if (i != (off + len - 1) >> io->chunk_shift)
		return -1;
	if (likely(r->have[i / 64] & ((uint64_t)1 << (i % 64))))		/* H2 */
		return (int)i;
	if (r->closed || (r->bad[i / 64] & ((uint64_t)1 << (i % 64))))
		return -1;
	return ring_chunk(io, r, t, i) ? (int)i : -1;
}

/*
 * Submits the `want` entries queued and reaps their completions into
 * res[user_data].
 *
 * A partial submission: io_uring_enter may take fewer entries than are
 * queued.  It stops at the first entry whose preparation fails (that entry
 * is consumed and counted, its error posted as its CQE) or when it cannot
 * allocate a request (memory), and returns the count, leaving the rest in
 * the SQ ring; with a short count it also skips the wait it was asked for.
 * Waiting for `want` completions after that (what this function did) waits
 * for entries that were never submitted: liburing's io_uring_wait_cqe does
 * not submit, so the wait never ends.  lpc's own entries do not fail their
 * preparation (frames of the registered arena, iovcnt <= UIO_MAXIOV), so
 * only a kernel out of memory for requests made it happen; the code does
 * not rely on that:
 *   RS1 submit (and wait, the first time, for one completion: not for
 *      `want`, which held every RS5 until the batch's slowest request was
 *      done and made UB2's early ends late) until every entry is in;
 *   RS2 a submission that fails, or takes nothing, with entries left stops
 *      there;
 *   RS3 reap exactly the completions of the entries submitted (every one has
 *      a CQE, failed preparations too), so no request outlives the call;
 *   RS4 with entries left unsubmitted, return the error: the caller kills the
 *      ring (ring_kill: the entries never submitted go with it, unread by
 *      the kernel) and does the requests again the sync way;
 *   RS5 each(arg, k) is called as entry k's completion is reaped (RS3),
 *      before the next wait: a batch ends a run there (io.c RQ3).
 * Return: 0; negative errno when not every entry was submitted, or a wait
 * failed (the caller then kills the ring and goes sync).
 */
static int ring_run(struct uring *r, unsigned want, ssize_t *res,
		    void (*each)(void *arg, unsigned k), void *arg)
{
	unsigned sent = 0;
	int n, err = 0;

	/* Rule URING-REAP-NESTED: a request made from RS5 (an end callback
	 * that did I/O) would reap the batch's completions as its own. */
	lpc_debug_check(!r->reaping, "URING-REAP-NESTED", NULL,
			"a request on a ring whose batch is being reaped (a batch's end "
			"callback did I/O through the cache: io.h lpc_io_readv_batch)");
	while (sent < want) {						/* RS1 */
		n = sent ? io_uring_submit(&r->ring)
			 : io_uring_submit_and_wait(&r->ring, 1);
		if (n == -EINTR)
			continue;
		if (n <= 0) {							/* RS2 */
			err = n ? n : -EAGAIN;
			break;
		}
		sent += (unsigned)n;
	}
	for (unsigned i = 0; i < sent; i++) {				/* RS3 */
		struct io_uring_cqe *cqe;
		int rc;

		do {
			rc = io_uring_wait_cqe(&r->ring, &cqe);
		} while (rc == -EINTR);
		if (rc < 0)
			return rc; /* cannot happen with entries in flight */
		res[cqe->user_data] = cqe->res;
		io_uring_cqe_seen(&r->ring, cqe);
		/* RS5 the caller's word on this entry, now, while the others
		 * may still be at the device (a batch's RQ3, uring_readv_batch):
		 * it submits nothing on r. */
		if (each) {
			r->reaping = true;
			each(arg, (unsigned)cqe->user_data);
			r->reaping = false;
		}
	}
	return sent == want ? 0 : err;					/* RS4 */
}


#define URING_PIECES 16 /* R0, UB0: the most READ_FIXED entries a run is cut into */

/*
 * UB0 (and uring_readv's R0): cuts the iovecs into pieces that each lie
 * back to back in one registered buffer (one READ_FIXED each), at most
 * URING_PIECES: a run of 4 MiB never fits one 2 MiB chunk, and was one
 * READV, whose 1024 pages the kernel pinned per request (gup: a third of a
 * readahead thread's CPU time in lpcbench scan, where 92 % of the
 * readahead requests were READV).  Not only chunks cut runs: frames of
 * two streams' windows come from a free list their allocations interleave,
 * and with at most 4 pieces half the pages read ahead went by READV, 9.6
 * stretches a request on average (lpcbench scan, two scanners, 16 KiB
 * calls; a quarter with one scanner); 16 pieces leave 4 % (0 % with one),
 * and a readahead thread's gup time went from 3 % of the process's samples
 * to 0.3 %.  A piece is a request of its own (~90 frames there), so the
 * device may see more, smaller requests than a READV's (whose bios go to
 * the queue's segment and size limits); the interleaved runs' MB/s did
 * not move beyond their noise (load 7, 2 CPUs).  Return: the pieces
 * (bytes in len[], buffers in bi[], starts in base[]), or 0 (not so cut:
 * one entry for all, as before).
 */
static int io_pieces(struct lpc_io *io, struct uring *r, struct lpc_tcache *t,
		     const struct iovec *iov, int cnt, size_t *len, int *bi, const char **base)
{
	const char *arena = (const char *)io->arena;
	int np = 0, j = 0;

	if (!r->fixed)
		return 0;
	while (j < cnt) {
		const char *b = iov[j].iov_base;
		size_t n = 0;
		int first = j;

		if (np == URING_PIECES)
			return 0;
		/* The iovecs from j that lie end to end, within b's chunk. */
		while (j < cnt && (const char *)iov[j].iov_base == b + n &&
		       (j == first || ((size_t)(b - arena) >> io->chunk_shift) ==
					      ((size_t)(b + n + iov[j].iov_len - 1 - arena) >>
					       io->chunk_shift))) {
			n += iov[j].iov_len;
			j++;
		}
		bi[np] = buf_index(io, r, t, b, n);
		if (bi[np] < 0)
			return 0;
		len[np] = n;
		base[np++] = b;
	}
	return np > 1 ? np : 0;
}

/*
 * R0's result: the bytes the pieces' entries (res[], each of len[] bytes)
 * read end to end from the first, a piece short or failed ending it (the
 * bytes after it are not taken), or the first piece's error.  *badbi: the
 * buffer of the piece that ended it by failing -EFAULT (H5: the buffer's
 * failure, the only one), else -1.  *failed: a piece after the first ended
 * it with an error (EINTR and EAGAIN included), so the prefix is not a
 * short transfer: R0a, the caller reads the rest again and never takes it
 * for the end of an O_DIRECT file (lpc_io_read_ends would, and the run's
 * pages past the prefix were dropped as a read error).  R0b: a piece after
 * the first refused -EINVAL refuses the run: one READV of the same frames
 * at the same offset (the run unregistered) is refused whole, the kernel
 * checking a direct transfer's alignment before any byte, and io.c's
 * direct_off answers -EINVAL only (a prefix would read the rest again
 * direct, refused again, and end the run short: a read error).
 */
static ssize_t pieces_res(const ssize_t *res, const size_t *len, const int *bi, int np,
			  int *badbi, int *baderr, bool *failed)
{
	ssize_t got = 0;

	*badbi = -1;
	*failed = false;
	for (int j = 0; j < np; j++) {
		if (res[j] == (ssize_t)len[j]) {
			got += res[j];
			continue;
		}
		if (res[j] > 0)
			got += res[j];
		else if (j == 0 || res[j] == -EINVAL)			/* R0b */
			got = res[j];
		else if (res[j] < 0)
			*failed = true;					/* R0a */
		if (res[j] == -EFAULT) {					/* H5 */
			*badbi = bi[j];
			*baderr = (int)res[j];
		}
		break;
	}
	return got;
}

/*
 * A miss's run of pages (lpc_io_readv): one READ_FIXED when the frames lie
 * back to back in one registered buffer; R0 else READ_FIXED pieces, one per
 * stretch of frames back to back in one buffer (io_pieces), submitted
 * together, their result the bytes they read end to end (pieces_res); else
 * one READV.  A partial transfer is completed by more requests on the
 * rest; a piece whose buffer failed (H5: -EFAULT) is done again
 * unregistered (its chunk leaves `have`, so the next try cuts no piece
 * from it); any other error of a piece is the run's as one READV's would
 * be (R0a, R0b: -EINVAL refuses the run, for io.c's direct_off), the
 * chunk kept.  Reaped before returning, as every request of this backend.
 */
static ssize_t uring_readv(struct lpc_io_file *f, const struct iovec *iov0, int iovcnt,
			   uint64_t off, uint64_t index)
{
	struct lpc_io *io = f->dev;
	struct lpc_tcache *t;
	struct uring *r = ring_get(io, &t);
	struct iovec iov[LPC_IO_MAX_IOV];
	struct iovec *v = iov;
	size_t done = 0, total = 0;
	int cnt = iovcnt;

	if (iovcnt <= 0 || iovcnt > LPC_IO_MAX_IOV)
		return -EINVAL;
	memcpy(iov, iov0, sizeof(*iov) * (size_t)iovcnt);
	for (int i = 0; i < iovcnt; i++)
		total += iov[i].iov_len;
	while (done < total) {
		struct io_uring_sqe *sqe;
		const char *base = v[0].iov_base, *pbase[URING_PIECES];
		size_t len, n, plen[URING_PIECES];
		ssize_t pres[URING_PIECES];
		int pbi[URING_PIECES], np, err = 0;
		bool flat, failed = false;
		ssize_t res = 0;
		int bi;

		if (!r)
			break;
		flat = iov_flat(v, cnt, &len);
		bi = flat ? buf_index(io, r, t, base, len) : -1;
		np = bi < 0 ? io_pieces(io, r, t, v, cnt, plen, pbi, pbase) : 0;
		for (int p = 0, at = 0; p < np; at += (int)plen[p++]) {		/* R0 */
			sqe = io_uring_get_sqe(&r->ring);
			io_uring_prep_read_fixed(sqe, f->fd, (void *)pbase[p], (unsigned)plen[p],
						 off + done + (uint64_t)at, pbi[p]);
			sqe->user_data = (unsigned)p;
		}
		if (!np) {
			sqe = io_uring_get_sqe(&r->ring);
			if (bi >= 0)
				io_uring_prep_read_fixed(sqe, f->fd, (void *)base, (unsigned)len,
							 off + done, bi);
			else
				io_uring_prep_readv(sqe, f->fd, v, (unsigned)cnt, off + done);
			sqe->user_data = 0;
		}
		if (ring_run(r, np ? (unsigned)np : 1, np ? pres : &res, NULL, NULL) < 0) {
			ring_kill(t);
			r = NULL;
			break;
		}
		if (np) {
			res = pieces_res(pres, plen, pbi, np, &bi, &err, &failed);
			if (bi >= 0 && res > 0) {
				ring_bad(io, r, t, bi, err); /* H5; the rest again */
				bi = -1;
			}
		}
		if (res == -EINTR || res == -EAGAIN)
			continue;
		if (res == -EFAULT && bi >= 0) {
			ring_bad(io, r, t, bi, (int)res); /* H5: again, unregistered */
			continue;
		}
		if (res < 0)
			return done ? (ssize_t)done : res;
		if (res == 0)
			return (ssize_t)done;
		done += (size_t)res;
		if (!failed && lpc_io_read_ends(f, (size_t)res, len))	/* R0a */
			return (ssize_t)done;
		for (n = (size_t)res; cnt > 0 && n >= v->iov_len; cnt--, v++)
			n -= v->iov_len;
		if (cnt > 0) {
			v->iov_base = (char *)v->iov_base + n;
			v->iov_len -= n;
		}
	}
	if (done < total && !r) {
		ssize_t s = lpc_io_sync_ops.readv(f, v, cnt, off + done, index);

		if (s < 0)
			return done ? (ssize_t)done : s;
		done += (size_t)s;
	}
	return (ssize_t)done;
}

/* One buffer: a run of one iovec (READ_FIXED when registered, else READV). */
static ssize_t uring_read(struct lpc_io_file *f, void *buf, size_t len, uint64_t off,
			  uint64_t index)
{
	struct iovec v = { .iov_base = buf, .iov_len = len };

	return len ? uring_readv(f, &v, 1, off, index) : 0;
}

/* The rest of run w after a first request that read `got` bytes of it
 * short where the file goes on: completed by uring_readv (which completes
 * in turn).  Return: the run's bytes in all. */
static ssize_t uring_readv_rest(struct lpc_io_file *f, const struct lpc_io_rrun *w, size_t got)
{
	struct iovec iov[LPC_IO_MAX_IOV];
	struct iovec *v = iov;
	int cnt = w->iovcnt;
	size_t n = got;
	ssize_t r;

	memcpy(iov, w->iov, sizeof(*iov) * (size_t)cnt);
	for (; cnt > 0 && n >= v->iov_len; cnt--, v++)
		n -= v->iov_len;
	if (!cnt)
		return (ssize_t)got;
	v->iov_base = (char *)v->iov_base + n;
	v->iov_len -= n;
	r = uring_readv(f, v, cnt, w->off + got, w->index);
	return r > 0 ? (ssize_t)(got + (size_t)r) : (ssize_t)got;
}

/* One submission of a batch of runs (uring_readv_batch), for RS5.  A run's
 * entries (its pieces, UB0) are consecutive: head[k] is the first of entry
 * k's run, and left[head] counts its pieces not yet reaped. */
struct ubatch {
	struct lpc_io *io;
	struct lpc_io_file *f;
	struct uring *r;
	struct lpc_tcache *t;
	struct lpc_io_rrun *runs;
	ssize_t res[URING_ENTRIES];
	int which[URING_ENTRIES], bis[URING_ENTRIES], head[URING_ENTRIES];
	size_t lens[URING_ENTRIES];   /* the entry's bytes; at a head, the run's */
	size_t plens[URING_ENTRIES];  /* the entry's bytes */
	unsigned char later[URING_ENTRIES]; /* UB3, at a head: 0, UB_AGAIN or UB_REST */
	unsigned char npieces[URING_ENTRIES], left[URING_ENTRIES]; /* at a head */
};

enum { UB_AGAIN = 1, UB_REST = 2 };

/* UB2-UB3 for entry k, its completion just reaped (RS5): once every piece
 * of its run is reaped (UB0), the run's result is theirs end to end
 * (pieces_res). */
static void ub_cqe(void *arg, unsigned k)
{
	struct ubatch *u = arg;
	int h = u->head[k];
	struct lpc_io_rrun *w = &u->runs[u->which[h]];
	ssize_t res;
	int bad, err = 0;
	bool failed;

	if (--u->left[h])
		return; /* more pieces of its run at the device */
	res = pieces_res(u->res + h, u->plens + h, u->bis + h, u->npieces[h], &bad, &err,
			 &failed);
	if (bad >= 0)
		ring_bad(u->io, u->r, u->t, bad, err); /* H5 */
	w->res = res;
	u->later[h] = 0;
	if (res == -EINTR || res == -EAGAIN) {
		u->later[h] = UB_AGAIN;
	} else if (res < 0 && bad >= 0) {
		u->later[h] = UB_AGAIN; /* H5: again, unregistered */
	} else if (res > 0 && (size_t)res < u->lens[h] &&
		   (failed || !lpc_io_read_ends(u->f, (size_t)res, u->lens[h]))) {
		u->later[h] = UB_REST; /* R0a: a failed later piece, the rest again */
	} else {
		lpc_io_rrun_done(w);					/* UB2 */
	}
}

/*
 * A batch of runs (lpc_io_readv_batch): each run with `todo` one READ_FIXED
 * (its frames back to back in one registered buffer) or READV, all of them
 * queued on this thread's ring and submitted together (URING_ENTRIES at a
 * time), every completion reaped here before returning, as every request
 * of this backend: one thread has every run of the batch at the device at
 * once and waits on nobody else.  Steps:
 *   UB0 a run whose frames lie in more than one registered buffer is cut
 *       into READ_FIXED pieces, one per buffer's stretch (io_pieces, at
 *       most URING_PIECES; else one READV as before), queued one after the
 *       other; the run is final once its last piece is reaped, its result
 *       theirs end to end (pieces_res: a short or failed piece ends it, as
 *       a short transfer would; a piece refused -EINVAL refuses the run,
 *       R0b, reported so to the front, which answers it, io.c RQ4's
 *       direct_off; only -EFAULT is the buffer's, H5), then UB2-UB3 as for
 *       one entry;
 *   UB1 queue the chunk's runs, submit them together (ring_run);
 *   UB2 as each completion is reaped (RS5), a run whose result is final is
 *       reported to the front at once (lpc_io_rrun_done: io.c RQ3, which
 *       ends it: its pages unlocked while the chunk's other runs are still
 *       at the device), in completion order, not run order;
 *   UB3 a run that needs another request is reported after the chunk's
 *       reaps, when the ring is idle again (a request made with others in
 *       flight would reap their completions as its own): interrupted before
 *       any byte (EINTR, EAGAIN), or a fixed request whose buffer failed
 *       (H5: -EFAULT), is done again alone (uring_readv: unregistered
 *       after H5); a short
 *       transfer where the file goes on (!lpc_io_read_ends) is completed
 *       alone, as uring_readv completes its own;
 *   UB4 a ring that fails to submit is killed and the chunk's runs not yet
 *       reported (todo: the front clears it when it ends a run, RQ5; a run
 *       still todo after UB2 is read again, which only reads twice) are
 *       read the sync way, as are the runs after the chunk, each reported
 *       after its read.
 */
static void uring_readv_batch(struct lpc_io_file *f, struct lpc_io_rrun *runs, int nruns)
{
	struct ubatch u = { .io = f->dev, .f = f, .runs = runs };
	int i = 0;

	u.r = ring_get(u.io, &u.t);
	while (u.r && i < nruns) {
		unsigned k = 0;
		int first = i;

		for (; i < nruns && k + URING_PIECES <= URING_ENTRIES; i++) {	/* UB1 */
			struct lpc_io_rrun *w = &runs[i];
			struct io_uring_sqe *sqe;
			const char *base = w->iov[0].iov_base, *pbase[URING_PIECES];
			size_t total, plen[URING_PIECES], off = 0;
			int pbi[URING_PIECES], np;
			unsigned h = k;
			bool flat;
			int bi;

			if (!w->todo)
				continue;
			flat = iov_flat(w->iov, w->iovcnt, &total);
			bi = flat ? buf_index(u.io, u.r, u.t, base, total) : -1;
			np = bi < 0 ? io_pieces(u.io, u.r, u.t, w->iov, w->iovcnt, plen, pbi, pbase) : 0;
			for (int p = 0; p < np; p++) {				/* UB0 */
				sqe = io_uring_get_sqe(&u.r->ring);
				io_uring_prep_read_fixed(sqe, f->fd, (void *)pbase[p],
							 (unsigned)plen[p], w->off + off, pbi[p]);
				off += plen[p];
				sqe->user_data = k;
				u.bis[k] = pbi[p];
				u.plens[k] = plen[p];
				u.head[k] = (int)h;
				u.which[k++] = i;
			}
			if (!np) {
				sqe = io_uring_get_sqe(&u.r->ring);
				if (bi >= 0)
					io_uring_prep_read_fixed(sqe, f->fd, (void *)base,
								 (unsigned)total, w->off, bi);
				else
					io_uring_prep_readv(sqe, f->fd, w->iov,
							    (unsigned)w->iovcnt, w->off);
				sqe->user_data = k;
				u.bis[k] = bi;
				u.plens[k] = total;
				u.head[k] = (int)h;
				u.which[k++] = i;
				np = 1;
			}
			u.lens[h] = total;
			u.later[h] = 0;
			u.npieces[h] = (unsigned char)np;
			u.left[h] = (unsigned char)np;
		}
		if (!k)
			break;
		if (ring_run(u.r, k, u.res, ub_cqe, &u) < 0) {		/* UB2 */
			ring_kill(u.t);					/* UB4 */
			u.r = NULL;
			i = first;
			break;
		}
		for (unsigned j = 0; j < k; j++) {				/* UB3 */
			struct lpc_io_rrun *w = &runs[u.which[j]];

			if (u.head[j] != (int)j || !u.later[j])
				continue;
			if (u.later[j] == UB_REST)
				w->res = uring_readv_rest(f, w, (size_t)w->res);
			else
				w->res = uring_readv(f, w->iov, w->iovcnt, w->off, w->index);
			lpc_io_rrun_done(w);
		}
		u.r = ring_get(u.io, &u.t); /* a redo may have killed it */
	}
	for (; i < nruns; i++) {						/* UB4 */
		if (!runs[i].todo)
			continue;
		runs[i].res = lpc_io_sync_ops.readv(f, runs[i].iov, runs[i].iovcnt, runs[i].off,
						    runs[i].index);
		lpc_io_rrun_done(&runs[i]);
	}
}

/* The runs with `todo`, each one WRITE_FIXED or WRITEV, submitted together
 * (URING_ENTRIES at a time); each run's res is what its request returned. */
static void uring_writev_batch(struct lpc_io_file *f, struct lpc_io_wrun *runs, int nruns)
{
	struct lpc_io *io = f->dev;
	struct lpc_tcache *t;
	struct uring *r = ring_get(io, &t);
	ssize_t res[URING_ENTRIES];
	int which[URING_ENTRIES], bis[URING_ENTRIES];
	int i = 0;

	while (r && i < nruns) {
		unsigned k = 0;

		for (; i < nruns && k < URING_ENTRIES; i++) {
			struct lpc_io_wrun *w = &runs[i];
			struct io_uring_sqe *sqe;
			const char *base = w->iov[0].iov_base;
			size_t total;
			bool flat;
			int bi;

			if (!w->todo)
				continue;
			flat = iov_flat(w->iov, w->iovcnt, &total);
			sqe = io_uring_get_sqe(&r->ring);
			bi = flat ? buf_index(io, r, t, base, total) : -1;
			if (bi >= 0)
				io_uring_prep_write_fixed(sqe, f->fd, base, (unsigned)total, w->off, bi);
			else
				io_uring_prep_writev(sqe, f->fd, w->iov, (unsigned)w->iovcnt, w->off);
			sqe->user_data = k;
			bis[k] = bi;
			which[k++] = i;
		}
		if (!k)
			break;
		if (ring_run(r, k, res, NULL, NULL) < 0) {
			ring_kill(t);
			r = NULL;
			i = which[0]; /* this chunk again, the sync way */
			break;
		}
		for (unsigned j = 0; j < k; j++) {
			struct lpc_io_wrun *w = &runs[which[j]];

			w->res = res[j];
			/* Interrupted before any byte: once more, the sync way;
			 * a fixed request whose buffer failed too (H5: -EFAULT;
			 * any other error is the write's, as WRITEV's would be:
			 * -EINVAL on O_DIRECT goes to io.c's direct_off). */
			if (w->res == -EFAULT && bis[j] >= 0)
				ring_bad(io, r, t, bis[j], (int)w->res);
			else if (w->res != -EINTR && w->res != -EAGAIN)
				continue;
			w->res = lpc_io_sync_ops.writev(f, w->iov, w->iovcnt, w->off);
		}
	}
	for (; i < nruns; i++)
		if (runs[i].todo)
			runs[i].res = lpc_io_sync_ops.writev(f, runs[i].iov, runs[i].iovcnt,
							     runs[i].off);
}

static ssize_t uring_writev(struct lpc_io_file *f, const struct iovec *iov, int iovcnt,
			    uint64_t off)
{
	struct lpc_io_wrun w = { .iov = iov, .iovcnt = iovcnt, .off = off, .todo = 1 };

	uring_writev_batch(f, &w, 1);
	return w.res;
}

static ssize_t uring_write(struct lpc_io_file *f, const void *buf, size_t len, uint64_t off)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	size_t done = 0;

	while (done < len) {
		ssize_t r = uring_writev(f, &iov, 1, off + done);

		if (r < 0)
			return done ? (ssize_t)done : r;
		if (r == 0)
			return done ? (ssize_t)done : -EIO;
		done += (size_t)r;
		iov.iov_base = (char *)buf + done;
		iov.iov_len = len - done;
	}
	return (ssize_t)done;
}

static int uring_sync(struct lpc_io_file *f)
{
	struct lpc_io *io = f->dev;
	struct lpc_tcache *t;
	struct uring *r = ring_get(io, &t);
	ssize_t res;

	for (;;) {
		struct io_uring_sqe *sqe;

		if (!r)
			return lpc_io_sync_ops.sync(f);
		sqe = io_uring_get_sqe(&r->ring);
		io_uring_prep_fsync(sqe, f->fd, IORING_FSYNC_DATASYNC);
		sqe->user_data = 0;
		if (ring_run(r, 1, &res, NULL, NULL) < 0) {
			ring_kill(t);
			r = NULL;
			continue;
		}
		if (res != -EINTR && res != -EAGAIN)
			return (int)res;
	}
}

static int uring_truncate(struct lpc_io_file *f, uint64_t size)
{
	return lpc_io_sync_ops.truncate(f, size);
}

const struct lpc_io_backend_ops lpc_io_uring_ops = {
	.name = "uring",
	.read = uring_read,
	.readv = uring_readv,
	.write = uring_write,
	.sync = uring_sync,
	.writev = uring_writev,
	.truncate = uring_truncate,
	.writev_batch = uring_writev_batch,
	.readv_batch = uring_readv_batch,
};

int lpc_io_uring_registered(struct lpc_io *io)
{
	struct lpc_tcache *t;
	struct uring *r;

	if (io->ops != &lpc_io_uring_ops)
		return -1;
	r = ring_get(io, &t);
	if (!r)
		return -1;
	return r->fixed && buf_index(io, r, t, io->arena, 1) == 0;
}

size_t lpc_io_uring_pinned_bytes(struct lpc_io *io)
{
	if (io->ops != &lpc_io_uring_ops)
		return 0;
	return atomic_load_explicit(&io->pinned_end, memory_order_relaxed);
}

int lpc_io_uring_init(struct lpc_io *io, struct lpc_towner *owner, void *arena,
		      size_t arena_bytes)
{
	struct uring *reg = calloc(1, sizeof(*reg));
	int rc;

	if (!reg)
		return -ENOMEM;
	/* The probe, kept: it will hold the arena's registration. */
	rc = io_uring_queue_init(2, &reg->ring, 0);
	if (rc < 0) {
		free(reg);
		return rc;
	}
	lpc_tsan_acquire(&ring_tsan_token); /* see ring_tsan_token */
	io->reg = reg;
	io->reg_state = 0;
	io->no_replace = false;
	io->reg_why = WHY_PIN;
	pthread_mutex_init(&io->reg_lock, NULL);
	io->owner = owner;
	io->arena = arena;
	io->arena_bytes = arena_bytes;
	io->chunk_shift = URING_CHUNK_MIN_SHIFT;
	while (io->chunk_shift < URING_CHUNK_MAX_SHIFT &&
	       ((arena_bytes - 1) >> io->chunk_shift) + 1 > URING_MAX_BUFS)
		io->chunk_shift++;
	io->nchunks = arena_bytes ? ((arena_bytes - 1) >> io->chunk_shift) + 1 : 0;
	if (io->nchunks > URING_MAX_BUFS)
		io->nchunks = 0; /* G1 refuses: the rings run unregistered */
	io->chunk_state = calloc(io->nchunks ? io->nchunks : 1, 1);
	if (!io->chunk_state) {
		ring_free(reg);
		return -ENOMEM;
	}
	atomic_store_explicit(&io->pinned_end, 0, memory_order_relaxed);
	atomic_store_explicit(&io->unregistered, 0, memory_order_relaxed);
	io->ops = &lpc_io_uring_ops;
	return 0;
}

void lpc_io_uring_destroy(struct lpc_io *io)
{
	if (!io->reg)
		return;
	ring_free(io->reg);
	io->reg = NULL;
	free(io->chunk_state);
	io->chunk_state = NULL;
	pthread_mutex_destroy(&io->reg_lock);
}
