/* SPDX-License-Identifier: MIT */
/*
 * test_debug_death.c - every rule the LPC_DEBUG build checks can fire.
 *
 * `test_debug_death RULE` forks a child that breaks RULE on purpose and
 * expects the child to die of SIGABRT with "rule RULE violated" in its
 * stderr; CTest runs it once per rule (debug.death.RULE).  Without an
 * argument it runs every rule.  Built only with -DLPC_DEBUG=ON.
 *
 * Rules that no caller can break through the API are broken from inside:
 * EVICT-SLOT by a yield-point hook that swaps the slot's entry while the
 * evictor holds the index lock (a writer that ignored the lock), the two
 * name-cache rules by calling dcache.c's writers as a buggy caller would.
 *
 * Rules with no death test here, and where they are shown firing instead:
 *  - RADIX-NODES-USED (an internal count of radix.c's insert; no caller can
 *    break it): test_debug_radix_nodes.c, with a copy of radix.c broken on
 *    purpose;
 *  - RADIX-LEAF-COUNT (a leaf's count against its slots, radix.c; no caller
 *    can break it): test_debug_radix_leaf.c, likewise, and the mutant
 *    leaf-count (tests/mutants/run.sh);
 *  - LOOKUP-NOT-IN-INDEX (needs the R4 re-check skipped): tests/mutants/run.sh
 *    (mutant no-r4) and tests/regress/regress_r4_failed_read.c.
 * SIZE-CUT has two halves (writeback/writeback.c): the publisher's is broken
 * here; the writer's (bytes dirtied past lpc's size, SZ1 after D3) by the
 * mutant size-dirty-first, which any write test that extends a file kills.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>

#include "cache/cache.h"
#include "filemap/optimistic.h"
#include "filemap/stream.h"
#include "names/names.h"
#include "../common/lpc_test.h"
#include "../common/user_backend.h"

static struct lpc_cache *cache;
static struct lpc_file *file;

/* A cache of 64 pages with the null backend, and a file of 16 pages. */
static void setup(void)
{
	char path[512];

	cache = tst_cache_create(64 * 4096, 4096, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);
	REQUIRE(tst_make_file("death", 16 * 4096, 1, path, sizeof(path)) == 0, "make file");
	REQUIRE(lpc_file_open(cache, path, O_RDONLY, 0, &file) == 0, "open");
}

/* Page 0, cached, with only the index's reference left. */
static struct lpc_page *cached_page(void)
{
	struct lpc_page *p;

	REQUIRE(lpc_page_get(file, 0, 0, &p) == 0, "get page 0");
	lpc_page_put(p);
	return p;
}

static struct lpc_page *private_page(void)
{
	struct lpc_page *p;

	REQUIRE(lpc_page_alloc(cache, &p) == 0, "alloc");
	return p;
}

static void break_radix_entry(void)
{
	struct lpc_radix_root root;

	lpc_radix_init(&root);
	lpc_radix_insert(&root, 3, (void *)(uintptr_t)1);
}

static void break_radix_tag(void)
{
	struct lpc_radix_root root;

	lpc_radix_init(&root);
	lpc_radix_tag_set(&root, 0, LPC_RADIX_NTAGS);
}

static void break_publish(void)
{
	lpc_filemap_insert(file, 20, private_page());
}

static void break_free_ref(void)
{
	struct lpc_page *p = private_page();

	lpc_page_free_chain(&cache->pool, p, p, 1); /* ref is 1: still ours */
}

/* PENDING-CHAIN: a gang's chain handed to pending with a count that is not
 * its length (the tail a drain splices by, and nfree, would be wrong). */
static void break_pending_chain(void)
{
	struct lpc_page *p = private_page();

	atomic_store(&p->ref, 0); /* as a freeze leaves it */
	lpc_rcu_read_lock();
	lpc_page_free_removed_chain(&cache->pool, p, p, 2);
	lpc_rcu_read_unlock();
}

/* PENDING-CHAIN at lpc_page_free_chain: a chain whose count is not its
 * length to its tail (SG0 sorts n frames from head, SG1 cuts n). */
static void break_free_chain_count(void)
{
	struct lpc_page *p = private_page();

	atomic_store(&p->ref, 0);
	lpc_page_free_chain(&cache->pool, p, p, 2);
}

/* SEG-COUNT: a segment of the shared free list whose count is not its
 * chain's length (a split that miscounts the rest: page/alloc.c SP2). */
static void break_seg_count(void)
{
	struct lpc_page *p = private_page();
	struct lpc_pool_census cs;

	atomic_store(&p->ref, 0); /* as a free leaves it */
	lpc_page_free_chain(&cache->pool, p, p, 1);
	pthread_mutex_lock(&cache->pool.free_lock);
	p->fl.seg_n = 2;
	pthread_mutex_unlock(&cache->pool.free_lock);
	(void)lpc_pool_census(&cache->pool, 0, &cs);
}

/* DEFERRED-GRACE: a frame joins its thread's deferred list while the grace
 * period that lands the list (page/alloc.c OD4) is already over (a push
 * after OD4 began, as a second pusher on the list would make): OD5 must
 * not splice it onto the free list.  The hook at OD5 is that pusher. */
static struct lpc_page *od5_intruder;

static void od5_push_hook(enum lpc_yield_point yp)
{
	struct lpc_page *p = od5_intruder;

	if (yp != LPC_YP_OD5 || !p)
		return;
	od5_intruder = NULL;
	atomic_store(&p->ref, 0); /* as a freeze leaves it */
	lpc_rcu_read_lock();
	REQUIRE(lpc_page_keep_removed_chain(&cache->pool, p, p, 1), "keep the intruder");
	lpc_rcu_read_unlock();
}

/* DEFERRED-GRACE at a private hand-out (page/alloc.c page_init_private,
 * MR1): a frame whose stamp (OD2) no completed grace period covers goes to
 * a private use.  The frame on top of this thread's private list is given
 * such a stamp, as a kept frame that skipped OD3-OD5 would carry. */
static void break_deferred_grace_private(void)
{
	struct lpc_page *p = private_page(), *q;

	lpc_page_put(p); /* on top of the private list */
	p->dbg_gp = atomic_load(&lpc_rcu_gp_begun) + 1;
	REQUIRE(lpc_page_alloc(cache, &q) == 0, "alloc");
	REQUIRE(q == p, "the private list's top frame");
}

static void break_deferred_grace(void)
{
	struct lpc_page *p = private_page(), *q;

	od5_intruder = private_page();
	atomic_store(&p->ref, 0);
	lpc_rcu_read_lock();
	REQUIRE(lpc_page_keep_removed_chain(&cache->pool, p, p, 1), "keep");
	lpc_rcu_read_unlock();
	lpc_yield_set_hook(od5_push_hook);
	REQUIRE(lpc_yield_arm("OD5", 1.0, 1) == 0, "arm OD5");
	/* The private list is empty (tbatch is 1 here): OD3 lands dfree once
	 * OD8 may borrow no more (its cap: 32 tbatch's, reached well before
	 * the 64 frames run out). */
	for (int i = 0; i < 48; i++)
		(void)lpc_page_alloc(cache, &q);
}

/* FRAMES-ACCOUNTED: a quiet pool short of a frame (one handed out and
 * counted as in use by nobody: a lost frame). */
static void break_frames_accounted(void)
{
	struct lpc_pool_census cs;

	(void)private_page();
	(void)lpc_pool_census(&cache->pool, 0, &cs);
}

/* RECLAIM-RETIRED: the reclaimer destroyed while its thread runs (as if a
 * kick after lpc_reclaim_retire had started it again: the thread would
 * run over a pool being freed; the start itself is the mutant
 * retire-restart's, tests/mutants/run.sh). */
static void break_reclaim_retired(void)
{
	lpc_reclaim_wake(&cache->reclaim, false); /* starts the thread */
	lpc_reclaim_destroy(&cache->reclaim);
}

static void break_handed_twice(void)
{
	struct lpc_page *p = private_page(), *q;

	/* On the free list without going through a free: still "ours". */
	atomic_store(&p->ref, 0);
	lpc_page_free_chain(&cache->pool, p, p, 1);
	for (int i = 0; i < 1000; i++)
		if (lpc_page_alloc(cache, &q) == 0 && q == p)
			return;
}

static void break_freed_twice(void)
{
	struct lpc_page *p = private_page();

	lpc_page_put(p);
	atomic_store(&p->ref, 1);
	lpc_page_put(p);
}

static void break_gp_frozen(void)
{
	struct lpc_page *p = cached_page();

	REQUIRE(lpc_page_freeze(p, 1), "freeze");
	lpc_rcu_synchronize();
}

static void break_identity(void)
{
	lpc_page_set_identity(cached_page(), file, 9);
}

static void break_unlock_not_locked(void)
{
	lpc_page_unlock(private_page());
}

static void *unlock_thread(void *arg)
{
	lpc_page_unlock(arg);
	return NULL;
}

static void break_unlock_owner(void)
{
	struct lpc_page *p = private_page();
	pthread_t th;

	lpc_page_lock(p);
	pthread_create(&th, NULL, unlock_thread, p);
	pthread_join(th, NULL);
}

static void break_underflow(void)
{
	struct lpc_page *p = cached_page();

	lpc_page_release(p); /* the index's: ref 0, freed */
	lpc_page_release(p);
}

static void break_put_free(void)
{
	struct lpc_page *p = cached_page();

	lpc_page_release(p);
	lpc_page_put(p);
}

static void break_release_private(void)
{
	lpc_page_release(private_page());
}

static void break_resurrect(void)
{
	struct lpc_page *p = cached_page(), *q;

	REQUIRE(lpc_page_freeze(p, 1), "freeze");
	atomic_store(&p->ref, 1); /* what a plain increment at R3 does */
	lpc_page_find(file, 0, &q);
}

static void break_grace(void)
{
	struct lpc_page *p = cached_page(), *q;

	atomic_store(&p->index, 7); /* "reused" while in its slot */
	lpc_page_find(file, 0, &q);
}

/* GRACE-PERIOD's first half: R3 takes a reference on a page that is no
 * longer PUBLISHED, as on a frame reused as a private page inside the
 * lookup's read section (page/alloc.c: the grace period before a private
 * use).  The page stays in its slot; only its flag says private. */
static void break_grace_private(void)
{
	struct lpc_page *p = cached_page(), *q;

	atomic_fetch_and(&p->flags, ~(uint32_t)LPC_PG_PUBLISHED);
	lpc_page_find(file, 0, &q);
}

static void *lock_thread(void *arg)
{
	lpc_page_lock(arg);
	return NULL;
}

static void break_lost_wakeup(void)
{
	struct lpc_page *p = private_page();
	pthread_t th;

	lpc_page_lock(p);
	pthread_create(&th, NULL, lock_thread, p);
	while (!(lpc_page_flags(p) & LPC_PG_WAITERS))
		tst_sleep_us(1000);
	tst_sleep_us(100000); /* let it reach futex_wait */
	/* An unlock without its wake (U1 without U2). */
	atomic_fetch_and(&p->flags, ~(uint32_t)(LPC_PG_LOCKED | LPC_PG_WAITERS));
	pthread_join(th, NULL);
}

static void break_failed_in_index(void)
{
	struct lpc_page *p = cached_page(), *q;

	atomic_fetch_and(&p->flags, ~(uint32_t)LPC_PG_UPTODATE);
	atomic_fetch_or(&p->flags, LPC_PG_ERROR);
	lpc_page_get(file, 0, 0, &q);
}

/* A backend whose readv first does `what` to the run's last page, as if it
 * happened while the device writes into its frame, then reads. */
static const struct lpc_io_backend_ops *run_inner;
static struct lpc_io_backend_ops run_broken_ops;
static void (*run_what)(struct lpc_page *p);

static ssize_t run_broken_readv(struct lpc_io_file *f, const struct iovec *iov, int n,
				uint64_t off, uint64_t index)
{
	size_t id = (size_t)((char *)iov[n - 1].iov_base - (char *)cache->pool.frames) >>
		    cache->pool.page_shift;

	run_what(&cache->pool.pages[id]);
	return run_inner->readv(f, iov, n, off, index);
}

/* A run of pages 4-7 read through run_broken_readv. */
static void run_broken(void (*what)(struct lpc_page *p))
{
	char buf[4 * 4096];

	run_what = what;
	run_inner = cache->io.ops;
	run_broken_ops = *cache->io.ops;
	run_broken_ops.readv = run_broken_readv;
	cache->io.ops = &run_broken_ops;
	lpc_pread(file, buf, sizeof(buf), 4 * 4096);
}

/* RA-SHARE: readahead's pages pass its share (a quarter of the frames):
 * the count of queued pages grown from inside, as a submit that skipped
 * Q5's reservation would, then a window's reservation checks it. */
static void break_ra_share(void)
{
	struct lpc_files *fs = file->files;

	pthread_mutex_lock(&fs->ra.lock);
	fs->ra.npages += fs->pool->nframes / 4 + 1;
	pthread_mutex_unlock(&fs->ra.lock);
	(void)lpc_ra_reserve(fs, 1, false, NULL);
}

/* RA-SHARE (QS1): a stream counted twice among the active ones, as a
 * stamp that missed the stream's own entry would leave it; the next sizing
 * checks the table. */
static void break_ra_share_twice(void)
{
	struct lpc_files *fs = file->files;
	static int stream;

	pthread_mutex_lock(&fs->ra.lock);
	fs->ra.act[0].key = fs->ra.act[1].key = &stream;
	fs->ra.act[0].stamp = fs->ra.act[1].stamp = ++fs->ra.wclock;
	pthread_mutex_unlock(&fs->ra.lock);
	(void)lpc_ra_window_cap(fs, fs, false);
}

/* URING-REAP-NESTED: a batch's end callback that reads through the cache
 * while the batch's other runs are in flight on this thread's ring. */
static struct lpc_file *nest_file;

static void nest_end(void *arg, struct lpc_io_rrun *w)
{
	char buf[4096] __attribute__((aligned(4096)));
	struct iovec v = { .iov_base = buf, .iov_len = sizeof(buf) };
	int fb = 0;

	(void)arg;
	(void)w;
	(void)lpc_io_readv(nest_file->iodev, &nest_file->io, &v, 1, 0, 0, &fb);
}

static void break_uring_reap_nested(void)
{
	struct lpc_cache *c = tst_cache_create(64 * 4096, 4096, LPC_IO_URING, LPC_LOOKUP_LOCKLESS);
	struct lpc_io_rrun runs[2];
	struct iovec iov[2];
	struct lpc_page *pg[2];
	char path[512];
	int fb = 0;

	REQUIRE(tst_make_file("nested", 16 * 4096, 1, path, sizeof(path)) == 0, "make file");
	REQUIRE(lpc_file_open(c, path, O_RDONLY, 0, &nest_file) == 0, "open");
	if (lpc_io_uring_registered(&c->io) < 0)
		_exit(77); /* no ring: io_uring refused here */
	for (int i = 0; i < 2; i++) {
		REQUIRE(lpc_page_alloc(c, &pg[i]) == 0, "frame");
		iov[i] = (struct iovec){ lpc_page_data(pg[i]), 4096 };
		runs[i] = (struct lpc_io_rrun){ .iov = &iov[i], .iovcnt = 1,
						.off = (uint64_t)i * 8 * 4096, .index = (uint64_t)i * 8 };
	}
	lpc_io_readv_batch(&c->io, &nest_file->io, runs, 2, &fb, nest_end, NULL);
}

/* STREAM-BOUND: the stream's claims pass its frame bound (a fill that
 * ignored it). */
static void break_stream_bound(void)
{
	static const uint64_t v[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	struct lpc_stream *s;
	struct lpc_page *p;

	REQUIRE(lpc_stream_open(file, NULL, NULL,
				&(struct lpc_stream_opts){ .max_pages = 4, .indices = v, .n = 8 },
				&s) == 0, "stream");
	s->claimed = s->max_pages + 1;
	lpc_stream_next(s, &p, NULL);
}

/* STREAM-TWICE: the entry just handed out comes back to the ring's head (a
 * next that did not advance it). */
static void break_stream_twice(void)
{
	static const uint64_t v[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	struct lpc_stream *s;
	struct lpc_page *p;

	REQUIRE(lpc_stream_open(file, NULL, NULL,
				&(struct lpc_stream_opts){ .indices = v, .n = 8 }, &s) == 0,
		"stream");
	REQUIRE(lpc_stream_next(s, &p, NULL) == 1, "entry 0");
	lpc_page_put(p);
	s->head = (s->head + s->max_distance - 1) % s->max_distance;
	s->count++;
	lpc_stream_next(s, &p, NULL);
}

/* STREAM-HELD: the stream counts a held page its ring does not have (a
 * put forgotten by the count, or a reference kept by the ring: close's
 * walk, ST7, would leave it). */
static void break_stream_held(void)
{
	static const uint64_t v[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	struct lpc_stream *s;
	struct lpc_page *p;

	REQUIRE(lpc_stream_open(file, NULL, NULL,
				&(struct lpc_stream_opts){ .indices = v, .n = 8 }, &s) == 0,
		"stream");
	REQUIRE(lpc_stream_next(s, &p, NULL) == 1, "entry 0");
	lpc_page_put(p);
	s->held++;
	lpc_stream_close(s);
}

/* STREAM-HELD (the run's leftovers): at ST2, with the run's pages handed
 * out, the first of its entries forgets that it is pending, as a fill that
 * lost track of the run would: its page, with the stream's reference from
 * W2, is then no entry's, and the check after the loop names it (that
 * reference would otherwise leak: the page could never be evicted). */
static struct lpc_stream *leftover_stream;

static void leftover_hook(enum lpc_yield_point yp)
{
	struct lpc_stream *s = leftover_stream;

	if (yp != LPC_YP_ST2 || !s)
		return;
	for (uint32_t k = 0; k < s->count; k++) {
		struct lpc_stream_ent *e = &s->ring[(s->head + k) % s->max_distance];

		if (e->flags & LPC_STREAM_PENDING) {
			e->flags &= ~LPC_STREAM_PENDING;
			leftover_stream = NULL;
			return;
		}
	}
}

static void break_stream_held_leftover(void)
{
	static const uint64_t v[8] = { 8, 9, 10, 11, 12, 13, 14, 15 };
	struct lpc_stream *s;
	struct lpc_page *p;

	REQUIRE(lpc_stream_open(file, NULL, NULL,
				&(struct lpc_stream_opts){ .indices = v, .n = 8 }, &s) == 0,
		"stream");
	leftover_stream = s;
	lpc_yield_set_hook(leftover_hook);
	REQUIRE(lpc_yield_arm("ST2", 1.0, 1) == 0, "arm ST2");
	if (lpc_stream_next(s, &p, NULL) == 1)
		lpc_page_put(p);
	lpc_stream_close(s);
}

/* RUN-FRAME-IN-FLIGHT: the frame changes identity, as if freed and reused. */
static void reuse_frame(struct lpc_page *p)
{
	atomic_store(&p->index, 12345);
}

static void break_run_frame_in_flight(void)
{
	run_broken(reuse_frame);
}

/* FRAME-FREED-IN-FLIGHT: both references of the page dropped (the run's and
 * the index's), as a reader that did not hold its page across the read
 * would let a removal free it. */
static void free_frame(struct lpc_page *p)
{
	lpc_page_put(p);
	lpc_page_put(p);
}

static void break_frame_freed_in_flight(void)
{
	run_broken(free_frame);
}

/* TRUNC-PAST-END: a read that did not see the shrinking truncate it raced
 * (trunc_seq as before it, lpc's size the old one: as a miss that skipped
 * lpc_filemap_trunc_from would judge) caches a page past the cut while the
 * truncate is between its removal pass and its ftruncate (SZ4). */
static struct lpc_file *trunc_file;

static void trunc_past_hook(enum lpc_yield_point yp)
{
	struct lpc_page *p;
	uint64_t seq, size;

	if (yp != LPC_YP_SZ4)
		return;
	seq = atomic_load(&trunc_file->trunc_seq);
	size = atomic_load(&trunc_file->size);
	atomic_store(&trunc_file->trunc_seq, seq - 1);
	atomic_store(&trunc_file->size, 16 * 4096);
	if (lpc_page_get(trunc_file, 12, 0, &p) == 0)
		lpc_page_put(p);
	atomic_store(&trunc_file->size, size);
	atomic_store(&trunc_file->trunc_seq, seq);
}

static void break_trunc_past_end(void)
{
	char path[512];

	REQUIRE(tst_make_file("death_trunc", 16 * 4096, 3, path, sizeof(path)) == 0, "make file");
	REQUIRE(lpc_file_open(cache, path, O_RDWR, 0, &trunc_file) == 0, "open for writing");
	lpc_yield_set_hook(trunc_past_hook);
	lpc_yield_arm("SZ4", 1.0, 1);
	lpc_truncate(trunc_file, 4 * 4096);
}

static void break_file_after_close(void)
{
	struct lpc_page *q;

	/* close frees the struct only after a grace period, which this read
	 * section holds off: the find reads poisoned, not freed, memory.  The
	 * first find registers this thread with RCU (open does not). */
	REQUIRE(lpc_page_find(file, 0, &q) == -ENOENT, "find before close");
	lpc_rcu_read_lock();
	lpc_file_close(file);
	lpc_page_find(file, 0, &q);
}

/* ONE-COPY: a file's copy taken out of the file table while it is still
 * open (as a last close that left the table before its writes ended would
 * leave it), then the file opened again: the open makes a second copy. */
static void break_one_copy(void)
{
	struct lpc_files *fs = &cache->files;
	struct lpc_file *g;
	char path[512];

	REQUIRE(tst_make_file("death_one_copy", 4096, 1, path, sizeof(path)) == 0, "make file");
	REQUIRE(lpc_file_open(cache, path, O_RDONLY, 0, &g) == 0, "open");
	pthread_mutex_lock(&fs->lock);
	REQUIRE(fs->head == g, "the new copy heads the table");
	fs->head = g->next;
	pthread_mutex_unlock(&fs->lock);
	lpc_file_open(cache, path, O_RDONLY, 0, &g);
}

/* BACKEND-OVERRUN: a user backend whose read returns more bytes than lpc
 * asked for (io/user.c; lpc.h BK4). */
static void break_backend_overrun(void)
{
	struct lpc_file *g;
	struct tub *t;
	char path[512], buf[4096];

	REQUIRE(tst_make_file("death_overrun", 4 * 4096, 1, path, sizeof(path)) == 0, "make file");
	t = tub_new(path, 4096, true);
	REQUIRE(t, "tub");
	atomic_store(&t->overrun, 1);
	REQUIRE(lpc_file_open_backend(cache, "overrun", &tub_ops, t, O_RDONLY, &g) == 0, "open");
	lpc_pread(g, buf, sizeof(buf), 0);
}

/* BACKEND-DONE: a user backend whose read_batch returns with a run not
 * completed (io/user.c UR3; lpc.h BK7). */
static void break_backend_done(void)
{
	static const uint64_t idx[] = { 0, 2, 4, 6, 8, 10, 12, 14 };
	struct lpc_page *pages[8];
	struct lpc_file *g;
	struct tub *t;
	char path[512];
	int errs[8];

	REQUIRE(tst_make_file("death_done", 16 * 4096, 1, path, sizeof(path)) == 0, "make file");
	t = tub_new(path, 4096, true);
	REQUIRE(t, "tub");
	atomic_store(&t->undone, 1);
	REQUIRE(lpc_file_open_backend(cache, "undone", &tub_ops_batch, t, O_RDONLY, &g) == 0,
		"open");
	/* The readahead threads take runs together when they find them
	 * queued together (timing): again until read_batch was called. */
	for (int k = 0; k < 200 && !atomic_load(&t->read_batches); k++) {
		int got = lpc_page_get_batch(g, idx, 8, 0, pages, errs);

		for (int i = 0; got >= 0 && i < 8; i++)
			lpc_page_put(pages[i]);
		lpc_invalidate(g, 0, 16 * 4096);
	}
}

/* An unpin of a page held by a plain reference (lpc_page_get), not a pin. */
static void break_pin_not_pinned(void)
{
	struct lpc_page *p;

	REQUIRE(lpc_page_get(file, 1, 0, &p) == 0, "get page 1");
	lpc_unpin(&p, 1, LPC_PIN_READ);
}

/* Write pins (writeback/wpin.c): page 0 of a second, writable file. */
static struct lpc_file *wfile(void)
{
	struct lpc_file *f;
	char path[512];

	REQUIRE(tst_make_file("wdeath", 4 * 4096, 2, path, sizeof(path)) == 0, "make file");
	REQUIRE(lpc_file_open(cache, path, O_RDWR, 0, &f) == 0, "open");
	return f;
}

static void break_wpin_writeback(void)
{
	struct lpc_file *f = wfile();
	struct lpc_page *p;

	REQUIRE(lpc_pin(f, 0, 4096, LPC_PIN_WRITE, &p, 1) == 1, "write pin");
	lpc_wb_start_writeback(f, p, 0); /* as a K1 that ignored the pin's lock */
}

static void break_wpin_clean(void)
{
	struct lpc_file *f = wfile();
	struct lpc_page *p;

	REQUIRE(lpc_pin(f, 0, 4096, LPC_PIN_WRITE, &p, 1) == 1, "write pin");
	/* A file that turned read-only under the pin: the unpin's dirtying
	 * fails, and the page would stay clean. */
	__atomic_store_n(&f->accmode, O_RDONLY, __ATOMIC_RELEASE);
	lpc_unpin(&p, 1, LPC_PIN_WRITE);
}

static void break_wpin_owner(void)
{
	struct lpc_file *f = wfile();
	struct lpc_page *p;

	REQUIRE(lpc_pin(f, 0, 4096, LPC_PIN_READ, &p, 1) == 1, "read pin");
	lpc_unpin(&p, 1, LPC_PIN_WRITE); /* a read pin unpinned as a write pin */
}

/* WPIN-GATE: a write pin the file's count does not show (as a WC1 that did
 * not count its pages): the truncate passes its gate and, holding
 * trunc_lock and size_lock, would wait for the pinned page's lock. */
static void break_wpin_gate(void)
{
	struct lpc_file *f = wfile();
	struct lpc_page *p;

	REQUIRE(lpc_pin(f, 0, 4096, LPC_PIN_WRITE, &p, 1) == 1, "write pin");
	atomic_store(&f->wpins, 0);
	lpc_truncate(f, 100);
}

/* WPIN-SELF-WAIT: the holder reads its own write-pinned page (its fallback
 * copy waits for the pin's lock).  tests/debug/test_debug_wpin_self.c has
 * the other forbidden self-waits. */
static void break_wpin_self_wait(void)
{
	struct lpc_file *f = wfile();
	struct lpc_page *p;
	char buf[16];

	REQUIRE(lpc_pin(f, 0, 4096, LPC_PIN_WRITE, &p, 1) == 1, "write pin");
	lpc_pread(f, buf, sizeof(buf), 0);
}

/* Writes (writeback/dirty.c, page/lock.c). */
static void break_dirty_unlocked(void)
{
	lpc_wb_dirty_locked(file, cached_page(), 0);
}

static void break_writeback_start(void)
{
	struct lpc_page *p = cached_page();

	lpc_page_lock(p);
	lpc_wb_start_writeback(file, p, 0); /* clean: nothing to write */
}

static void break_writeback_end(void)
{
	lpc_page_end_writeback(cached_page(), 0);
}

static void break_truncate_writeback(void)
{
	struct lpc_page *p = cached_page();

	atomic_fetch_or(&p->flags, LPC_PG_WRITEBACK);
	lpc_wb_truncate_page(file, p, 0);
}

static void break_dirty_count(void)
{
	struct lpc_page *p = cached_page();

	/* DIRTY without the count (and tag) that go with it. */
	atomic_fetch_or(&p->flags, LPC_PG_DIRTY);
	lpc_wb_truncate_page(file, p, 0);
}

/* FSYNC-INFLIGHT: a write counted as begun (K3) that never ends: the
 * fsync that follows passes Y3 with it still "in flight". */
static void break_fsync_inflight(void)
{
	atomic_fetch_add(&file->dbg_wb_started, 1);
	lpc_fsync(file);
}

/* A file of one page opened for writing, in a cache of the sync backend
 * (SIZE-SEEN needs a real file) or of the death cache's null backend. */
static struct lpc_file *size_file(bool real, char *path, size_t pathlen)
{
	struct lpc_cache *c = cache;
	struct lpc_file *f;

	if (real)
		c = tst_cache_create(16 * 4096, 4096, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS);
	REQUIRE(tst_make_file(real ? "death_size_real" : "death_size", 4096, 2, path, pathlen) == 0,
		"make file");
	REQUIRE(lpc_file_open(c, path, O_RDWR, 0, &f) == 0, "open for writing");
	return f;
}

static struct lpc_file *size_cut_file;

/* A raise of lpc's size that did not wait for size_lock: it lands between
 * the publish's read of the size (SZ3) and its ftruncate. */
static void size_cut_hook(enum lpc_yield_point yp)
{
	if (yp == LPC_YP_SZ4)
		atomic_store(&size_cut_file->size, 5000);
}

/* SIZE-CUT: lpc_fsync writes page 1 (100 bytes past a one-page file: the
 * kernel's file then ends at 8 KiB) and its publish cuts it back to lpc's
 * 4196 bytes, while a raise to 5000 slips in after the size was read. */
static void break_size_cut(void)
{
	char buf[100] = { 1 }, path[512];

	size_cut_file = size_file(false, path, sizeof(path));
	REQUIRE(lpc_pwrite(size_cut_file, buf, sizeof(buf), 4096) == sizeof(buf), "write");
	lpc_yield_set_hook(size_cut_hook);
	lpc_yield_arm("SZ4", 1.0, 1);
	lpc_fsync(size_cut_file);
}

/* SIZE-SEEN: the kernel's file ends inside lpc's last page past lpc's size,
 * where lpc's own write went (dbg_wb_end), while io.size says lpc's size:
 * the tail a writeback's publish should have cut.  Made by hand: the file
 * grown behind lpc's back, the debug marker of lpc's writes moved with it. */
static void break_size_seen(void)
{
	char buf[100] = { 1 }, path[512];
	struct lpc_file *f = size_file(true, path, sizeof(path));

	REQUIRE(lpc_pwrite(f, buf, sizeof(buf), 4096) == sizeof(buf), "write");
	REQUIRE(lpc_fsync(f) == 0, "fsync");
	REQUIRE(truncate(path, 8192) == 0, "grow the file behind lpc");
	atomic_store(&f->dbg_wb_end, 8192);
	lpc_fsync(f);
}

/* SEQ-IDENTITY: a locked private page may take an identity, but only
 * inside a seq write section (the allocator and M2 open one). */
static void break_seq_identity(void)
{
	struct lpc_page *p = private_page();

	lpc_page_lock(p);
	lpc_page_set_identity(p, file, 9);
}

/* SEQ-OPEN: a writer unlocks the page with its seq write section open. */
static void break_seq_open(void)
{
	struct lpc_page *p = private_page();

	lpc_page_lock(p);
	lpc_page_seq_write_begin(p);
	lpc_page_unlock(p);
}

/* SEQ-UNBALANCED: lpc code that took the public lock on a cached page
 * (which opened a write section, lock.c X1) opens its own section inside
 * it: the nested begin would make seq even while the data changes. */
static void break_seq_unbalanced(void)
{
	struct lpc_page *p = cached_page();

	lpc_page_lock(p);
	lpc_page_seq_write_begin(p);
}

/* LOCK-RECURSIVE: the holder of a cached page's lock reads the page with
 * lpc_page_read: the optimistic try refuses (seq odd) and the fallback
 * F3 waits for the lock this thread holds. */
static void read_nothing(const void *data, size_t len, void *arg)
{
	(void)data, (void)len, (void)arg;
}

static void break_lock_recursive(void)
{
	struct lpc_page *p;

	REQUIRE(lpc_page_get(file, 2, 0, &p) == 0, "get page 2");
	lpc_page_lock(p);
	lpc_page_read(file, 2, 0, read_nothing, NULL);
}

/* PAGE-LOCK-HELD: a user calls lpc_fsync while holding a page lock (the
 * rule also guards lpc's own flushes: the K2 deadlock of
 * tests/regress/regress_k2_size_lock.c, with 8befe9c reverted, fires it). */
static void break_page_lock_held(void)
{
	struct lpc_page *p;

	REQUIRE(lpc_page_get(file, 2, 0, &p) == 0, "get page 2");
	lpc_page_lock(p);
	lpc_fsync(file);
}

/* OPTIMISTIC-NOT-IN-INDEX: O5's check called as a reader that skipped the
 * slot re-check would: the page left the index before its removal count
 * was read (O3).  All in one read section, so the removed leaf and frame
 * stay valid. */
static void break_optimistic_in_index(void)
{
	struct lpc_page *p = cached_page(), *q;
	void *_Atomic const *slot;

	lpc_rcu_read_lock();
	q = lpc_radix_lookup(&file->tree, 0, &slot);
	REQUIRE(q == p, "page 0 in its slot");
	REQUIRE(lpc_invalidate(file, 0, 4096) == 1, "invalidate page 0");
	lpc_debug_optimistic_check(file, p, 0, slot,
				   atomic_load_explicit(&p->dbg_removals, memory_order_acquire));
	lpc_rcu_read_unlock();
}

/* EVICT-SLOT: at E6 (index lock held, page frozen) a hook plays a writer
 * that ignored the index lock: it puts another page in the slot, so E6's
 * delete takes that one. */
static struct lpc_page *evict_victim, *evict_intruder;

static void swap_slot_hook(enum lpc_yield_point yp)
{
	uint64_t index;

	if (yp != LPC_YP_E6 || !evict_intruder)
		return;
	index = atomic_load_explicit(&evict_victim->index, memory_order_relaxed);
	REQUIRE(lpc_radix_delete(&file->tree, index) == evict_victim, "victim in its slot");
	REQUIRE(lpc_radix_insert(&file->tree, index, evict_intruder) == 0, "intruder in");
	evict_intruder = NULL;
}

static void break_evict_slot(void)
{
	struct lpc_tcache *t;

	evict_victim = cached_page();
	evict_intruder = private_page();
	lpc_yield_set_hook(swap_slot_hook);
	REQUIRE(lpc_yield_arm("E6", 1.0, 1) == 0, "arm E6");
	t = lpc_tcache(&cache->pool.owner);
	REQUIRE(t, "thread block");
	/* CLOCK2 keeps a referenced page for a pass or two: go round until
	 * the victim reaches E6 (the hook makes it fire there). */
	for (int i = 0; i < 64; i++)
		lpc_reclaim_evict(&cache->reclaim, 4, t);
}

/* ACTIVE-COUNT: a writer that ignored AC1-AC3 marks a cached page ACTIVE
 * without counting it; the last close's free takes it out of the count
 * (deferred_prep), which goes below 0, and the destroy's census fires. */
static void break_active_count(void)
{
	struct lpc_page *p = cached_page();

	atomic_fetch_or(&p->flags, LPC_PG_ACTIVE);
	lpc_file_close(file);
	lpc_cache_destroy(cache);
}

/* WS-TARGET-BOUNDS: a writer that bypassed lpc_pool_ws_nudge's clamp
 * stores an active target past one of its bounds; the evictor reads it (an
 * active page it may demote: above_target) and the read fires.  Both
 * bounds: two entries of the rule below. */
static void break_ws_target(bool above)
{
	struct lpc_workingset *ws = &cache->pool.ws;
	struct lpc_tcache *t;
	struct lpc_page *p;

	REQUIRE(ws->min > 0 && ws->max > ws->min, "CLOCK2 has a target with room below");
	/* Page 0 hit twice: REFERENCED, promoted by the hand's first pass. */
	for (int i = 0; i < 3; i++) {
		REQUIRE(lpc_page_get(file, 0, 0, &p) == 0, "get page 0");
		lpc_page_put(p);
	}
	atomic_store_explicit(&ws->target, above ? ws->max + 1 : ws->min - 1,
			      memory_order_relaxed);
	t = lpc_tcache(&cache->pool.owner);
	REQUIRE(t, "thread block");
	for (int i = 0; i < 64; i++)
		lpc_reclaim_evict(&cache->reclaim, 4, t);
}

static void break_ws_target_above(void)
{
	break_ws_target(true);
}

static void break_ws_target_below(void)
{
	break_ws_target(false);
}

/* A name space over a fresh directory holding one file, "x", looked up
 * once so that its dentry is cached. */
static struct lpc_ns *ns_with_x(struct ns_dentry **x)
{
	static const struct lpc_cred root_cred = { 0, 0, 0, NULL };
	char dir[512], path[600];
	struct lpc_ns *ns;
	struct stat st;
	int fd;

	snprintf(dir, sizeof(dir), "%s/nsdeath", tst_tmpdir());
	REQUIRE(mkdir(dir, 0755) == 0 || errno == EEXIST, "mkdir %s", dir);
	snprintf(path, sizeof(path), "%s/x", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	REQUIRE(fd >= 0, "create %s", path);
	close(fd);
	REQUIRE(lpc_ns_create(cache, dir, &ns) == 0, "lpc_ns_create");
	REQUIRE(lpc_ns_stat(ns, &root_cred, "x", &st) == 0, "stat x");
	lpc_rcu_read_lock();
	*x = ns_lookup_rcu(ns, ns->root, "x", 1);
	lpc_rcu_read_unlock();
	REQUIRE(*x, "x's dentry cached");
	return ns;
}

/* NS-DROP-ROOT: the root dentry dropped like any other. */
static void break_ns_drop_root(void)
{
	struct ns_dentry *x;
	struct lpc_ns *ns = ns_with_x(&x);

	pthread_mutex_lock(&ns->lock);
	ns_drop_locked(ns, ns->root);
	pthread_mutex_unlock(&ns->lock);
}

/* NS-SEQ-NESTED: a dentry's seq write section opened twice (a writer that
 * began a change while another was still inside one). */
static void break_ns_seq_nested(void)
{
	struct ns_dentry *x;
	struct lpc_ns *ns = ns_with_x(&x);

	pthread_mutex_lock(&ns->lock);
	atomic_fetch_add(&x->seq, 1); /* the first writer's begin */
	ns_drop_locked(ns, x);        /* the second's */
	pthread_mutex_unlock(&ns->lock);
}

static const struct {
	const char *rule;
	void (*fn)(void);
} rules[] = {
	{ "RADIX-ENTRY", break_radix_entry },
	{ "RADIX-TAG", break_radix_tag },
	{ "PUBLISH-UNPUBLISHED", break_publish },
	{ "FREE-FRAME-REF", break_free_ref },
	{ "FRAME-HANDED-OUT-TWICE", break_handed_twice },
	{ "PENDING-CHAIN", break_pending_chain },
	{ "PENDING-CHAIN", break_free_chain_count },
	{ "SEG-COUNT", break_seg_count },
	{ "FRAMES-ACCOUNTED", break_frames_accounted },
	{ "DEFERRED-GRACE", break_deferred_grace },
	{ "DEFERRED-GRACE", break_deferred_grace_private },
	{ "RECLAIM-RETIRED", break_reclaim_retired },
	{ "FRAME-FREED-TWICE", break_freed_twice },
	{ "GP-WHILE-FROZEN", break_gp_frozen },
	{ "IDENTITY-CHANGE", break_identity },
	{ "UNLOCK-NOT-LOCKED", break_unlock_not_locked },
	{ "UNLOCK-NOT-OWNER", break_unlock_owner },
	{ "REF-UNDERFLOW", break_underflow },
	{ "PUT-FREE-PAGE", break_put_free },
	{ "RELEASE-PRIVATE", break_release_private },
	{ "RESURRECT", break_resurrect },
	{ "GRACE-PERIOD", break_grace },
	{ "GRACE-PERIOD", break_grace_private },
	{ "LOST-WAKEUP", break_lost_wakeup },
	{ "FAILED-PAGE-IN-INDEX", break_failed_in_index },
	{ "FILE-USE-AFTER-CLOSE", break_file_after_close },
	{ "ONE-COPY", break_one_copy },
	{ "PIN-NOT-PINNED", break_pin_not_pinned },
	{ "DIRTY-UNLOCKED", break_dirty_unlocked },
	{ "WRITEBACK-START", break_writeback_start },
	{ "WRITEBACK-END", break_writeback_end },
	{ "TRUNCATE-WRITEBACK", break_truncate_writeback },
	{ "DIRTY-COUNT", break_dirty_count },
	{ "FSYNC-INFLIGHT", break_fsync_inflight },
	{ "SIZE-CUT", break_size_cut },
	{ "SIZE-SEEN", break_size_seen },
	{ "SEQ-IDENTITY", break_seq_identity },
	{ "SEQ-OPEN", break_seq_open },
	{ "SEQ-UNBALANCED", break_seq_unbalanced },
	{ "LOCK-RECURSIVE", break_lock_recursive },
	{ "PAGE-LOCK-HELD", break_page_lock_held },
	{ "OPTIMISTIC-NOT-IN-INDEX", break_optimistic_in_index },
	{ "EVICT-SLOT", break_evict_slot },
	{ "ACTIVE-COUNT", break_active_count },
	{ "WS-TARGET-BOUNDS", break_ws_target_above },
	{ "WS-TARGET-BOUNDS", break_ws_target_below },
	{ "RUN-FRAME-IN-FLIGHT", break_run_frame_in_flight },
	{ "FRAME-FREED-IN-FLIGHT", break_frame_freed_in_flight },
	{ "TRUNC-PAST-END", break_trunc_past_end },
	{ "NS-DROP-ROOT", break_ns_drop_root },
	{ "NS-SEQ-NESTED", break_ns_seq_nested },
	{ "WPIN-WRITEBACK", break_wpin_writeback },
	{ "WPIN-CLEAN", break_wpin_clean },
	{ "WPIN-OWNER", break_wpin_owner },
	{ "WPIN-GATE", break_wpin_gate },
	{ "WPIN-SELF-WAIT", break_wpin_self_wait },
	{ "RA-SHARE", break_ra_share },
	{ "RA-SHARE", break_ra_share_twice },
	{ "STREAM-BOUND", break_stream_bound },
	{ "STREAM-TWICE", break_stream_twice },
	{ "STREAM-HELD", break_stream_held },
	{ "STREAM-HELD", break_stream_held_leftover },
	{ "BACKEND-OVERRUN", break_backend_overrun },
	{ "URING-REAP-NESTED", break_uring_reap_nested },
	{ "BACKEND-DONE", break_backend_done },
};

/* Rules with several checks: the phrase only the one a break must fire
 * prints (the others need the rule's name alone). */
static const struct {
	void (*fn)(void);
	const char *want;
} phrases[] = {
	{ break_stream_held_leftover, "is no entry's" },
	{ break_grace, "accepts a page with another identity" },
	{ break_deferred_grace, "joins its thread's free list" },
	{ break_deferred_grace_private, "a private use takes a deferred frame" },
	{ break_grace_private, "reused as a private one" },
};

static const char *phrase(void (*fn)(void))
{
	for (size_t k = 0; k < sizeof(phrases) / sizeof(phrases[0]); k++)
		if (phrases[k].fn == fn)
			return phrases[k].want;
	return NULL;
}

/* Return: 0 fired as expected, 1 did not, 77 skipped. */
static int death(unsigned i)
{
	char out[8192];
	size_t len = 0;
	ssize_t r;
	int fds[2], status;
	pid_t pid;

	REQUIRE(pipe(fds) == 0, "pipe");
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], 2);
		setup();
		rules[i].fn();
		fprintf(stderr, "the rule did not fire\n");
		_exit(0);
	}
	close(fds[1]);
	while (len < sizeof(out) - 1 && (r = read(fds[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)r;
	out[len] = 0;
	close(fds[0]);
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		printf("SKIP %s: %s\n", rules[i].rule, "not checkable in this build yet");
		return 77;
	}
	char want[128];

	snprintf(want, sizeof(want), "rule %s violated", rules[i].rule);
	const char *also = phrase(rules[i].fn);
	bool ok = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT && strstr(out, want) &&
		  (!also || strstr(out, also));

	CHECK(ok, "%s: child %s %d, stderr:\n%s", rules[i].rule,
	      WIFSIGNALED(status) ? "died of signal" : "exited", WIFSIGNALED(status) ?
	      WTERMSIG(status) : WEXITSTATUS(status), out);
	/* A rule that names a page prints it in page/'s words: core/ has no
	 * page of its own, the describer page/ registers (core/debug.h) does. */
	if (ok && !strcmp(rules[i].rule, "PUT-FREE-PAGE")) {
		ok = strstr(out, "(page id ") != NULL;
		CHECK(ok, "%s: the report does not describe the page: %s", rules[i].rule, out);
	}
	if (ok)
		printf("ok %s: %s", rules[i].rule, strstr(out, "lpc debug:"));
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	unsigned n = sizeof(rules) / sizeof(rules[0]), ran = 0, skipped = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Made here, so every child (which dies by abort, without atexit)
	 * shares this directory and the parent removes it. */
	REQUIRE(tst_tmpdir(), "temporary directory");
	for (unsigned i = 0; i < n; i++) {
		if (argc > 1 && strcmp(argv[1], rules[i].rule))
			continue;
		ran++;
		if (death(i) == 77)
			skipped++;
	}
	if (argc > 1 && !ran) {
		fprintf(stderr, "unknown rule %s\n", argv[1]);
		return 2;
	}
	tst_rm_dir();
	if (ran == skipped)
		return 77;
	return tst_finish();
}
