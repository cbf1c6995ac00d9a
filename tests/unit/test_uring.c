/* SPDX-License-Identifier: MIT */
/*
 * test_uring.c - the io_uring backend (src/io/uring.c):
 *
 *  - the backend itself: reads into frames (READ_FIXED) and into memory
 *    outside the arena (READ), a batch of runs (lpc_io_write_batch): frames
 *    back to back in the arena (WRITE_FIXED), scattered frames and a buffer
 *    outside the arena (WRITEV), fdatasync; then lpc_pwrite at random
 *    offsets, lpc_fsync, the file read through a fresh kernel descriptor and
 *    through a second cache;
 *  - a second thread's ring shares the cache's registration (cloned);
 *  - registration in chunks (uring.c G1-G2, H1-H4): an arena of four
 *    chunks, two threads' rings, each chunk registered by the first I/O
 *    into it (a write from one, reads from the other, chunks registered at
 *    different times, before and after the second ring was made); the
 *    bytes pinned grow chunk by chunk (none in the child that cannot pin);
 *  - the same in a child that cannot pin the arena (CAP_IPC_LOCK dropped,
 *    RLIMIT_MEMLOCK below every arena it makes): the rings run unregistered, counted in
 *    uring_unregistered, and stderr gets one line, once per process (two
 *    caches, two threads);
 *  - faults in a batch: of four runs, one fails (EIO) and one is short;
 *    the other runs are written, the short one completed, the error
 *    reported by lpc_fsync once, the data kept; the next lpc_fsync returns
 *    0 and the file holds every byte;
 *  - under tests/common/kclone_shim.c's KCLONE_MODE=drop (clones that leave
 *    the ring's table empty), only: every fixed request fails and is done
 *    again unregistered (uring.c H5), the public calls return what they
 *    would have, each ring counted unregistered;
 *  - fallback: in a child whose seccomp filter answers io_uring_setup with
 *    EPERM (then ENOSYS), a cache asked for LPC_IO_URING is made on the sync
 *    backend, counted in uring_fallbacks, and works; a filter installed
 *    after the cache was made sends the thread's I/O to sync, counted too.
 *
 * Usage: test_uring [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/io_uring.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "../common/write_test.h"
#include "cache/cache.h"

static const size_t PS = 4096;
static uint64_t rng;
/* Every cache (and api_round_trip's file) is this many times larger: 1,
 * or CHILD_SCALE in the child that cannot pin (see cannot_pin). */
static size_t scale = 1;

static struct lpc_cache *mk_cache(size_t frames)
{
	return tst_wcache_create(frames * scale, PS, LPC_IO_URING, 60000, 80, 90);
}

/*
 * The backend through the I/O layer's front.  want_reg: 1 the ring must be
 * registered, 0 it must not, -1 either.
 */
static void backend_round_trip(int want_reg)
{
	enum { FSIZE = 16 * 4096 };
	const size_t FRAMES = 32 * scale;
	struct lpc_cache *c = mk_cache(32);
	struct lpc_page **pg = calloc(FRAMES, sizeof(*pg));
	unsigned char *want = malloc(FSIZE), *bounce = aligned_alloc(4096, 2 * PS);
	unsigned char *arena = c->pool.frames;
	struct lpc_file *f;
	struct iovec va[2], vb[2], vc[1];
	struct lpc_io_wrun w[3];
	unsigned calls = 0;
	char path[600];
	int fb = 0, reg, n = 0;

	REQUIRE(want && bounce && pg);
	CHECK(c->io.ops == &lpc_io_uring_ops, "the cache runs io_uring");
	tst_wfile("u", path, sizeof(path), FSIZE, 5);
	tst_file_bytes(5, 0, want, FSIZE);
	f = tst_file_open(c, path, O_RDWR);
	reg = lpc_io_uring_registered(&c->io);
	if (want_reg >= 0)
		CHECK_EQ(reg, want_reg, "ring registered");
	else
		CHECK(reg >= 0, "a ring: %d", reg);
	/* Every frame is ours: the arena is ours to write. */
	while ((size_t)n < FRAMES && lpc_page_alloc(c, &pg[n]) == 0)
		n++;
	REQUIRE((size_t)n == FRAMES, "all frames: %d", n);
	for (size_t i = 0; i < FRAMES * PS; i++)
		arena[i] = (unsigned char)(tst_rnd(&rng) >> 11);
	for (size_t i = 0; i < 2 * PS; i++)
		bounce[i] = (unsigned char)(i * 7 + 3);
	/* run a: frames 0, 1 back to back (WRITE_FIXED when registered), at
	 * page 0; run b: frames 5, 3 (WRITEV), at page 4; run c: the bounce
	 * buffer (WRITEV), at page 10. */
	va[0] = (struct iovec){ arena, PS };
	va[1] = (struct iovec){ arena + PS, PS };
	vb[0] = (struct iovec){ arena + 5 * PS, PS };
	vb[1] = (struct iovec){ arena + 3 * PS, PS };
	vc[0] = (struct iovec){ bounce, 2 * PS };
	w[0] = (struct lpc_io_wrun){ .iov = va, .iovcnt = 2, .off = 0 };
	w[1] = (struct lpc_io_wrun){ .iov = vb, .iovcnt = 2, .off = 4 * PS };
	w[2] = (struct lpc_io_wrun){ .iov = vc, .iovcnt = 1, .off = 10 * PS };
	CHECK_EQ(lpc_io_write_batch(&c->io, &f->io, w, 3, &calls), 0, "batch");
	CHECK_EQ(calls, 3, "one write per run");
	for (int i = 0; i < 3; i++)
		CHECK_EQ(w[i].err, 0, "run %d", i);
	memcpy(want, arena, 2 * PS);
	memcpy(want + 4 * PS, arena + 5 * PS, PS);
	memcpy(want + 5 * PS, arena + 3 * PS, PS);
	memcpy(want + 10 * PS, bounce, 2 * PS);
	CHECK_EQ(lpc_io_sync(&c->io, &f->io), 0, "fdatasync through the ring");
	tst_kernel_equals(path, want, FSIZE);
	/* Reads: into a frame (READ_FIXED) and outside the arena (READ), each
	 * page of the file; the last read is short at the end of the file. */
	for (uint64_t i = 0; i < FSIZE / PS; i++) {
		CHECK_EQ(lpc_io_read(&c->io, &f->io, arena + 7 * PS, PS, i * PS, i, &fb),
			 (ssize_t)PS, "read page %" PRIu64 " into a frame", i);
		CHECK(!memcmp(arena + 7 * PS, want + i * PS, PS), "frame read %" PRIu64, i);
		memset(bounce, 0, PS);
		CHECK_EQ(lpc_io_read(&c->io, &f->io, bounce, PS, i * PS, i, &fb), (ssize_t)PS);
		CHECK(!memcmp(bounce, want + i * PS, PS), "bounce read %" PRIu64, i);
	}
	CHECK_EQ(lpc_io_read(&c->io, &f->io, bounce, 2 * PS, FSIZE - PS, 15, &fb), (ssize_t)PS,
		 "short at the end");
	while (n > 0)
		lpc_page_put(pg[--n]);
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
	free(want);
	free(bounce);
	free(pg);
}

/* lpc_pwrite at random offsets, lpc_fsync, the kernel's view, and a second
 * cache's reads (misses through its rings). */
static void api_round_trip(void)
{
	const size_t FSIZE = 96 * 4096 * scale;
	struct lpc_cache *c = mk_cache(256), *c2;
	unsigned char *want = malloc(FSIZE), *got = malloc(FSIZE);
	struct lpc_file *f;
	struct lpc_stats s;
	char path[600];

	REQUIRE(want && got);
	tst_wfile("u", path, sizeof(path), FSIZE / 2, 6);
	memset(want, 0, FSIZE);
	tst_file_bytes(6, 0, want, FSIZE / 2);
	f = tst_file_open(c, path, O_RDWR);
	for (int i = 0; i < 200; i++) {
		size_t len = 1 + tst_rnd(&rng) % (3 * PS);
		uint64_t off = tst_rnd(&rng) % (FSIZE - len);

		for (size_t j = 0; j < len; j++)
			want[off + j] = (unsigned char)tst_rnd(&rng);
		CHECK_EQ(lpc_pwrite(f, want + off, len, off), (ssize_t)len);
	}
	{
		/* The last byte, so the size is known. */
		CHECK_EQ(lpc_pwrite(f, want + FSIZE - 1, 1, FSIZE - 1), 1);
	}
	CHECK_EQ(lpc_fsync(f), 0);
	tst_kernel_equals(path, want, FSIZE);
	lpc_stats(c, &s);
	CHECK_EQ(s.uring_fallbacks, 0);
	CHECK(s.vectored_writes > 0 && s.writeback_pages >= s.vectored_writes,
	      "%llu pages in %llu writes", (unsigned long long)s.writeback_pages,
	      (unsigned long long)s.vectored_writes);
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
	c2 = mk_cache(64); /* smaller than the file: reads evict */
	f = tst_file_open(c2, path, O_RDONLY);
	CHECK_EQ(lpc_pread(f, got, FSIZE, 0), (ssize_t)FSIZE);
	CHECK(tst_first_diff(got, want, FSIZE) < 0, "second cache differs at %lld",
	      (long long)tst_first_diff(got, want, FSIZE));
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c2);
	free(want);
	free(got);
}

/*
 * A kernel whose clones leave the ring's table empty (tests/common/
 * kclone_shim.c KCLONE_MODE=drop): every READ_FIXED and WRITE_FIXED fails
 * with -EFAULT, and uring.c H5 does each again unregistered: lpc_pwrite,
 * lpc_fsync, lpc_pread (through a second cache) and lpc_file_close return
 * what they would have, the bytes reach the file and come back, and each
 * cache counts its one ring in uring_unregistered.
 */
static void faulty_kernel(void)
{
	enum { FSIZE = 8 * 4096 };
	struct lpc_cache *c = mk_cache(64), *c2;
	unsigned char *want = malloc(FSIZE), *got = malloc(FSIZE);
	struct lpc_file *f;
	struct lpc_stats s;
	char path[600];

	REQUIRE(want && got);
	tst_wfile("h", path, sizeof(path), FSIZE, 4);
	for (size_t i = 0; i < FSIZE; i++)
		want[i] = (unsigned char)tst_rnd(&rng);
	f = tst_file_open(c, path, O_RDWR);
	CHECK_EQ(lpc_pwrite(f, want, FSIZE, 0), (ssize_t)FSIZE, "lpc_pwrite");
	CHECK_EQ(lpc_fsync(f), 0, "lpc_fsync: WRITE_FIXED failed, WRITEV again");
	CHECK_EQ(lpc_file_close(f), 0);
	tst_kernel_equals(path, want, FSIZE);
	lpc_stats(c, &s);
	CHECK_EQ(s.uring_unregistered, 1, "the writer's ring counted");
	CHECK_EQ(s.uring_fallbacks, 0);
	c2 = mk_cache(64);
	f = tst_file_open(c2, path, O_RDONLY);
	CHECK_EQ(lpc_pread(f, got, FSIZE, 0), (ssize_t)FSIZE, "lpc_pread: READ_FIXED failed");
	CHECK(!memcmp(got, want, FSIZE), "the bytes read again");
	CHECK_EQ(lpc_file_close(f), 0);
	lpc_stats(c2, &s);
	CHECK_EQ(s.uring_unregistered, 1, "the reader's ring counted");
	tst_cache_destroy(c2);
	tst_cache_destroy(c);
	free(want);
	free(got);
}

/* Faults in a batch: four runs of two pages; run 1 fails (EIO), run 2 is
 * short (one page of two, then completed). */
static void batch_faults(void)
{
	enum { FSIZE = 16 * 4096 };
	struct lpc_cache *c = mk_cache(64);
	unsigned char *want = malloc(FSIZE);
	struct lpc_io_fault ft = { .ops = LPC_IO_WRITE, .skip = 1, .count = 1, .err = EIO };
	uint64_t before;
	struct lpc_file *f;
	struct lpc_stats s;
	char path[600];

	REQUIRE(want);
	tst_wfile("u", path, sizeof(path), FSIZE, 7);
	tst_file_bytes(7, 0, want, FSIZE);
	f = tst_file_open(c, path, O_RDWR);
	/* Pages 0-1, 4-5, 8-9, 12-13: four runs in one pass. */
	for (uint64_t r = 0; r < 4; r++) {
		for (size_t j = 0; j < 2 * PS; j++)
			want[r * 4 * PS + j] = (unsigned char)(r * 31 + j * 5 + 1);
		CHECK_EQ(lpc_pwrite(f, want + r * 4 * PS, 2 * PS, r * 4 * PS), (ssize_t)(2 * PS));
	}
	REQUIRE(lpc_io_fault_set(&c->io, &ft) == 0);
	CHECK_EQ(lpc_fsync(f), -EIO, "the failed run's error");
	CHECK_EQ(lpc_io_faults_fired(&c->io), 1);
	lpc_stats(c, &s);
	CHECK_EQ(s.dirty_pages, 2,
		 "rule WRITE-ERROR-KEEPS-DIRTY violated: the failed run's pages stay dirty");
	CHECK_EQ(s.write_errors, 1);
	/* A short run: the hook makes the second run's write transfer one page;
	 * the rest is written again. */
	ft = (struct lpc_io_fault){ .ops = LPC_IO_WRITE, .skip = 0, .count = 1,
				    .short_bytes = PS };
	REQUIRE(lpc_io_fault_set(&c->io, &ft) == 0);
	CHECK_EQ(lpc_fsync(f), 0, "after the fault: everything written, the error reported once");
	CHECK_EQ(lpc_io_faults_fired(&c->io), 1, "the short write happened");
	lpc_io_fault_set(&c->io, NULL);
	lpc_stats(c, &s);
	CHECK_EQ(s.dirty_pages, 0);
	tst_kernel_equals(path, want, FSIZE);
	/* Short on a batch of several runs: every run is cut to one page once. */
	for (uint64_t r = 0; r < 4; r++) {
		for (size_t j = 0; j < 2 * PS; j++)
			want[r * 4 * PS + j] ^= 0x5a;
		CHECK_EQ(lpc_pwrite(f, want + r * 4 * PS, 2 * PS, r * 4 * PS), (ssize_t)(2 * PS));
	}
	ft = (struct lpc_io_fault){ .ops = LPC_IO_WRITE, .count = 4, .short_bytes = PS };
	REQUIRE(lpc_io_fault_set(&c->io, &ft) == 0);
	lpc_stats(c, &s);
	before = s.vectored_writes;
	CHECK_EQ(lpc_fsync(f), 0, "short runs are completed");
	CHECK_EQ(lpc_io_faults_fired(&c->io), 4, "every run was cut short");
	lpc_io_fault_set(&c->io, NULL);
	lpc_stats(c, &s);
	CHECK_EQ(s.vectored_writes - before, 8, "each run: a short write and its completion");
	tst_kernel_equals(path, want, FSIZE);
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
	free(want);
}

/* A second thread's ring shares the cache's registration (cloned, or
 * registered itself on a kernel without clone). */
static void *reg_of_thread(void *arg)
{
	struct lpc_cache *c = arg;

	return (void *)(intptr_t)lpc_io_uring_registered(&c->io);
}

static void shared_registration(void)
{
	struct lpc_cache *c = mk_cache(64);
	struct lpc_stats s;
	pthread_t th;
	void *ret = NULL;
	int mine = lpc_io_uring_registered(&c->io);

	REQUIRE(pthread_create(&th, NULL, reg_of_thread, c) == 0);
	pthread_join(th, &ret);
	CHECK_EQ((int)(intptr_t)ret, mine, "the second thread's ring as the first");
	lpc_stats(c, &s);
	CHECK_EQ(s.uring_unregistered, mine ? 0 : 2, "unregistered rings counted");
	CHECK_EQ(s.uring_fallbacks, 0);
	tst_cache_destroy(c);
}

/* --- registration in chunks --- */

#define CHUNK ((size_t)2 << 20) /* uring.c's chunk for arenas this small */

struct chunk_ctx {
	struct lpc_cache *c;
	struct lpc_file *f;
	unsigned char *want;
	int want_reg, reg;
};

/* Writes `pages` frames at arena offset `at` (back to back: WRITE_FIXED
 * when registered) to file page `fpage`, filled from the seed. */
static void chunk_write(struct chunk_ctx *x, size_t at, uint64_t fpage, unsigned pages)
{
	unsigned char *arena = x->c->pool.frames;
	struct iovec v[4];
	struct lpc_io_wrun w;
	unsigned calls = 0;

	for (size_t i = 0; i < pages * PS; i++)
		arena[at + i] = (unsigned char)(tst_rnd(&rng) >> 11);
	for (unsigned i = 0; i < pages; i++)
		v[i] = (struct iovec){ arena + at + i * PS, PS };
	w = (struct lpc_io_wrun){ .iov = v, .iovcnt = (int)pages, .off = fpage * PS };
	CHECK_EQ(lpc_io_write_batch(&x->c->io, &x->f->io, &w, 1, &calls), 0, "write");
	CHECK_EQ(w.err, 0, "write at arena offset %zu", at);
	memcpy(x->want + fpage * PS, arena + at, pages * PS);
}

/* Reads file page `fpage` into the frame at arena offset `at`, checked. */
static void chunk_read(struct chunk_ctx *x, size_t at, uint64_t fpage)
{
	unsigned char *arena = x->c->pool.frames;
	int fb = 0;

	memset(arena + at, 0, PS);
	CHECK_EQ(lpc_io_read(&x->c->io, &x->f->io, arena + at, PS, fpage * PS, fpage, &fb),
		 (ssize_t)PS, "read into arena offset %zu", at);
	CHECK(!memcmp(arena + at, x->want + fpage * PS, PS), "page %" PRIu64 " into offset %zu",
	      fpage, at);
}

static size_t pinned(struct chunk_ctx *x)
{
	return lpc_io_uring_pinned_bytes(&x->c->io);
}

/* The second thread: a ring made after chunk 0 was registered. */
static void *chunk_thread(void *arg)
{
	struct chunk_ctx *x = arg;
	size_t arena_bytes = x->c->pool.frames_bytes;

	x->reg = lpc_io_uring_registered(&x->c->io); /* chunk 0: cloned at H1 */
	chunk_write(x, 2 * CHUNK + 5 * PS, 2, 3);    /* chunk 2, new (G2 + H3) */
	CHECK_EQ(pinned(x), x->want_reg ? 3 * CHUNK : 0, "chunk 2 pinned");
	chunk_read(x, arena_bytes - PS, 0);          /* chunk 3, the partial last */
	CHECK_EQ(pinned(x), x->want_reg ? arena_bytes : 0, "chunk 3 pinned");
	chunk_read(x, 7 * PS, 2);                    /* chunk 0 again */
	return NULL;
}

/*
 * Four chunks (three whole, one partial), two rings.  want_reg: 1 the
 * rings must be registered, 0 they must not (the child that cannot pin).
 */
static void chunks_round_trip(int want_reg)
{
	enum { FSIZE = 8 * 4096 };
	size_t frames = 3 * CHUNK / PS + 8;
	struct lpc_cache *c = mk_cache(frames);
	struct chunk_ctx x = { .c = c, .want_reg = want_reg };
	struct lpc_page **pg = calloc(frames, sizeof(*pg));
	struct lpc_stats s;
	size_t n = 0;
	pthread_t th;
	char path[600];

	x.want = malloc(FSIZE);
	REQUIRE(pg && x.want);
	CHECK(c->io.ops == &lpc_io_uring_ops, "the cache runs io_uring");
	REQUIRE(c->pool.frames_bytes > 3 * CHUNK, "four chunks");
	tst_wfile("k", path, sizeof(path), FSIZE, 9);
	tst_file_bytes(9, 0, x.want, FSIZE);
	x.f = tst_file_open(c, path, O_RDWR);
	/* Every frame is ours: the arena is ours to write. */
	while (n < frames && lpc_page_alloc(c, &pg[n]) == 0)
		n++;
	REQUIRE(n == frames, "all frames: %zu", n);
	CHECK_EQ(pinned(&x), 0, "nothing pinned before the first I/O");
	chunk_write(&x, 0, 0, 2);                       /* chunk 0 */
	CHECK_EQ(pinned(&x), want_reg ? CHUNK : 0, "only chunk 0 pinned");
	chunk_read(&x, PS, 1);
	REQUIRE(pthread_create(&th, NULL, chunk_thread, &x) == 0);
	pthread_join(th, NULL);
	/* In the child that cannot pin, the second ring itself may be refused
	 * (rings count against RLIMIT_MEMLOCK too, and the kernel releases a
	 * closed ring's charge later): that thread then runs sync. */
	CHECK(x.reg == want_reg || (!want_reg && x.reg == -1), "the second ring's chunk 0: %d",
	      x.reg);
	/* This ring: chunk 3 then 2 from the other ring's registration (H3
	 * clones the table again each time), chunk 1 new; chunks 0, 2 and 3
	 * still there after that.  Kernels 6.13-6.18.0 dropped the slots
	 * after a one-slot clone (the "prefix" shim): chunk 3 after chunk 2's
	 * clone, both after chunk 1's, and their fixed requests failed. */
	chunk_read(&x, 3 * CHUNK + PS, 2);
	chunk_read(&x, 2 * CHUNK, 0);
	chunk_read(&x, CHUNK + 9 * PS, 2);
	chunk_write(&x, CHUNK + 12 * PS, 5, 2);         /* chunk 1 */
	chunk_read(&x, 3 * PS, 5);
	chunk_read(&x, 3 * CHUNK + 3 * PS, 5);          /* chunk 3 again */
	chunk_write(&x, 2 * CHUNK + 4 * PS, 6, 1);      /* chunk 2 again */
	chunk_read(&x, 2 * CHUNK + 8 * PS, 6);
	CHECK_EQ(pinned(&x), want_reg ? c->pool.frames_bytes : 0, "the end stays");
	CHECK_EQ(lpc_io_sync(&c->io, &x.f->io), 0, "fdatasync");
	tst_kernel_equals(path, x.want, FSIZE);
	lpc_stats(c, &s);
	CHECK_EQ(s.uring_unregistered + (want_reg ? 0 : s.uring_fallbacks), want_reg ? 0 : 2,
		 "unregistered rings counted (or refused: %" PRIu64 ")", s.uring_fallbacks);
	while (n > 0)
		lpc_page_put(pg[--n]);
	CHECK_EQ(lpc_file_close(x.f), 0);
	tst_cache_destroy(c);
	free(x.want);
	free(pg);
}

/* --- children: unregistered, and refused by seccomp --- */

/*
 * Drops CAP_IPC_LOCK from the effective set and sets RLIMIT_MEMLOCK to
 * CHILD_MEMLOCK, below every arena the child makes (mk_cache and
 * backend_round_trip scale by CHILD_SCALE there: 1 MiB and more), so the
 * kernel refuses to pin each of them.  Return: 0 or -1.
 *
 * The limit leaves room for every ring the child makes, even if none of
 * them has been torn down: without CAP_IPC_LOCK a ring's own memory is
 * charged to locked_vm too (16 KiB for 128 entries on Linux 6.x), and the
 * kernel gives it back only when the ring's exit work runs, in a
 * workqueue, some time after io_uring_queue_exit returns.  With a 64 KiB
 * limit a fourth ring failed with -ENOMEM whenever the earlier caches'
 * rings were still waiting for that work, which a loaded machine makes
 * likely (a loop of create/exit under a 64 KiB limit failed 1884 times of
 * 2000 here): the child then fell back to sync and its checks failed by
 * chance.  The child makes about ten rings (two per cache: the probe and
 * its thread's): 160 KiB at most, under the 512 KiB limit.
 */
enum { CHILD_SCALE = 16, CHILD_MEMLOCK = 512 << 10 };

static int cannot_pin(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	struct rlimit rl = { CHILD_MEMLOCK, CHILD_MEMLOCK };

	/* io_uring charges pinned pages to the real uid's user (locked_vm is
	 * per user, not per process): children of concurrent tests, all root,
	 * would share one allowance and make each other's rings fail.
	 * As root, take a real uid of our own (the pid is unique among the
	 * live processes); the effective uid stays 0, so files and the other
	 * capabilities are unchanged. */
	if (geteuid() == 0 && setresuid(200000 + (uid_t)getpid(), (uid_t)-1, (uid_t)-1) != 0)
		return -1;
	if (syscall(SYS_capget, &h, d) != 0)
		return -1;
	d[CAP_IPC_LOCK / 32].effective &= ~(1u << (CAP_IPC_LOCK % 32));
	if (syscall(SYS_capset, &h, d) != 0)
		return -1;
	return setrlimit(RLIMIT_MEMLOCK, &rl);
}

/* True if this process may pin memory without limit (CAP_IPC_LOCK). */
static bool can_lock(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	return syscall(SYS_capget, &h, d) == 0 &&
	       (d[CAP_IPC_LOCK / 32].effective & (1u << (CAP_IPC_LOCK % 32)));
}

static void *thread_round_trip(void *arg)
{
	(void)arg;
	backend_round_trip(0);
	return NULL;
}

/* The child: caches that cannot pin run unregistered, counted; one line. */
static int child_unregistered(void)
{
	pthread_t th;
	struct lpc_cache *c;
	struct lpc_stats s;

	if (cannot_pin() != 0) {
		fprintf(stdout, "cannot drop CAP_IPC_LOCK: %s\n", strerror(errno));
		return 77;
	}
	scale = CHILD_SCALE;
	_Static_assert(16 * CHILD_SCALE * 4096 > CHILD_MEMLOCK,
		       "the child's smallest arena (mk_cache(16)) must not fit under its limit");
	backend_round_trip(0);
	api_round_trip();
	REQUIRE(pthread_create(&th, NULL, thread_round_trip, NULL) == 0);
	pthread_join(th, NULL);
	c = mk_cache(16);
	CHECK_EQ(lpc_io_uring_registered(&c->io), 0, "a later ring does not register");
	lpc_stats(c, &s);
	CHECK_EQ(s.uring_unregistered, 1, "counted per ring");
	CHECK_EQ(s.uring_fallbacks, 0, "unregistered is not a fallback");
	tst_cache_destroy(c);
	/* Last: its rings may leave too little RLIMIT_MEMLOCK for another
	 * ring at once (a closed ring's charge is released later). */
	chunks_round_trip(0);
	return tst_finish();
}

/* Installs a filter that answers io_uring_setup with -err.  Return: 0 or -1. */
static int seccomp_refuse(int err)
{
	struct sock_filter filt[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned)err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(filt) / sizeof(filt[0]), .filter = filt };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/* A small round trip on c: pwrite, fsync, the kernel's bytes, pread. */
static void small_round_trip(struct lpc_cache *c)
{
	unsigned char want[3 * 4096], got[3 * 4096];
	struct lpc_file *f;
	char path[600];

	tst_wfile("u", path, sizeof(path), sizeof(want), 9);
	for (size_t i = 0; i < sizeof(want); i++)
		want[i] = (unsigned char)(i * 11 + 2);
	f = tst_file_open(c, path, O_RDWR);
	CHECK_EQ(lpc_pwrite(f, want + 100, sizeof(want) - 200, 100),
		 (ssize_t)(sizeof(want) - 200));
	tst_file_bytes(9, 0, want, 100);
	tst_file_bytes(9, sizeof(want) - 100, want + sizeof(want) - 100, 100);
	CHECK_EQ(lpc_fsync(f), 0);
	tst_kernel_equals(path, want, sizeof(want));
	CHECK_EQ(lpc_invalidate(f, 0, 0), 3);
	CHECK_EQ(lpc_pread(f, got, sizeof(got), 0), (ssize_t)sizeof(got));
	CHECK(!memcmp(got, want, sizeof(got)), "read back");
	CHECK_EQ(lpc_file_close(f), 0);
}

/* The child: io_uring refused before the cache (err), or after it (late). */
static int child_refused(int err, bool late)
{
	struct lpc_cache *c = NULL;
	struct lpc_stats s;

	if (!late && seccomp_refuse(err) != 0) {
		fprintf(stdout, "no seccomp: %s\n", strerror(errno));
		return 77;
	}
	c = mk_cache(64);
	if (late) {
		CHECK(c->io.ops == &lpc_io_uring_ops, "io_uring before the filter");
		if (seccomp_refuse(err) != 0) {
			fprintf(stdout, "no seccomp: %s\n", strerror(errno));
			return 77;
		}
		CHECK_EQ(lpc_io_uring_registered(&c->io), -1, "no ring for this thread");
	} else {
		CHECK(c->io.ops == &lpc_io_sync_ops, "rule URING-FALLBACK: sync when refused");
	}
	small_round_trip(c);
	lpc_stats(c, &s);
	CHECK_EQ(s.uring_fallbacks, 1, "the fallback counted once");
	tst_cache_destroy(c);
	return tst_finish();
}

/* Runs fn in a child; stderr goes to a pipe whose text lands in err_out. */
static int in_child(int (*fn)(int, bool), int a, bool b, char *err_out, size_t err_len)
{
	int p[2], st = 0;
	size_t got = 0;
	pid_t pid;

	REQUIRE(pipe(p) == 0);
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		atomic_store(&tst_passed, 0);
		atomic_store(&tst_failed, 0);
		close(p[0]);
		if (!getenv("TST_URING_STDERR"))
			dup2(p[1], 2);
		_exit(fn(a, b));
	}
	close(p[1]);
	for (;;) {
		ssize_t r = read(p[0], err_out + got, err_len - 1 - got);

		if (r <= 0)
			break;
		got += (size_t)r;
		if (got == err_len - 1)
			break;
	}
	err_out[got] = 0;
	close(p[0]);
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int child_unregistered_fn(int a, bool b)
{
	(void)a;
	(void)b;
	return child_unregistered();
}

static unsigned count_lines(const char *s, const char *needle)
{
	unsigned n = 0;

	for (const char *q = s; (q = strstr(q, needle)) != NULL; q++)
		n++;
	return n;
}

static void t_children(void)
{
	static char err[1 << 16];
	int rc;

	rc = in_child(child_unregistered_fn, 0, false, err, sizeof(err));
	if (rc != 77) {
		CHECK_EQ(rc, 0, "unregistered child; its stderr:\n%s", err);
		CHECK_EQ(count_lines(err, "lpc: io_uring: cannot register"), 1,
			 "one line on stderr per process:\n%s", err);
	}
	rc = in_child(child_refused, EPERM, false, err, sizeof(err));
	if (rc != 77)
		CHECK_EQ(rc, 0, "seccomp EPERM child; its stderr:\n%s", err);
	rc = in_child(child_refused, ENOSYS, false, err, sizeof(err));
	if (rc != 77)
		CHECK_EQ(rc, 0, "seccomp ENOSYS child; its stderr:\n%s", err);
	rc = in_child(child_refused, EPERM, true, err, sizeof(err));
	if (rc != 77)
		CHECK_EQ(rc, 0, "seccomp after the cache; its stderr:\n%s", err);
}

/* Whether this kernel lets this process make a ring (asked without lpc,
 * so the parent has no lpc or liburcu state when it forks the children). */
static bool uring_allowed(void)
{
	struct io_uring_params p;
	long fd;

	memset(&p, 0, sizeof(p));
	fd = syscall(__NR_io_uring_setup, 2, &p);
	if (fd < 0)
		return false;
	close((int)fd);
	return true;
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 120);
	rng = tst_seed | 1;
	if (!uring_allowed())
		tst_skip("io_uring refused here: the default backend is sync");
	tst_require_tmpdir(); /* made here, so the children share it */
	if (getenv("KCLONE_MODE") && !strcmp(getenv("KCLONE_MODE"), "drop")) {
		/* Every fixed request fails: the cases that count them do not
		 * apply; the I/O must still be right. */
		TST_RUN(faulty_kernel());
		TST_RUN(api_round_trip());
		return tst_finish();
	}
	/* Children first: they fork before this process has used lpc (no
	 * threads, no liburcu state to carry across the fork). */
	TST_RUN(t_children());
	TST_RUN(backend_round_trip(can_lock() ? 1 : -1));
	TST_RUN(shared_registration());
	if (can_lock())
		TST_RUN(chunks_round_trip(1));
	TST_RUN(api_round_trip());
	TST_RUN(batch_faults());
	return tst_finish();
}
