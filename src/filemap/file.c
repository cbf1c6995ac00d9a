/* SPDX-License-Identifier: MIT */
/*
 * file.c - the file table of a cache: lpc_file_open (through lpc_files_open;
 * the public call, which takes the cache, is in cache/cache.c) and
 * lpc_file_close.
 *
 * One cached copy per file (lpc.h A.5): opening a file that this cache
 * already holds (same st_dev and st_ino) returns the same lpc_file with its
 * open count raised, so two opens never see two different copies of a page.
 * The last close writes the file back, then removes its pages from the cache.
 *
 * The last close against opens of the same file (all under files->lock:
 * the table, f->opens, f->closing, f->wb_busy, f->joined, f->joins):
 *   Z1 the last close (opens == 1) sets closing.  f stays in the table, and
 *      its open (the closer's) stays counted, until Z4 or Z5: an open in
 *      between finds this copy, never an empty table.
 *   Z2 while a flusher pass is on f (wb_busy, writeback/flusher.c), wait
 *      for wb_idle (the lock is released: opens may come, Z4 is checked on
 *      every turn).  A pass that ended makes Z3 run again: its write error,
 *      recorded on f, is reported by that flush.
 *   Z3 flush (the lock released): write the dirty pages back and wait for
 *      every write in flight (writeback.c Y1-Y4).  Once more while pages are
 *      dirty and no write failed, and always once more when a close joined
 *      (ZJ) since the flush began: joined is cleared, under the lock, before
 *      each flush, so the flush that ends the loop began after every join,
 *      and the pages the joiners dirtied (by writes that returned before
 *      their close) were dirty when it began: it writes them, or its error
 *      is the result they get.
 *   Z4 revived: an open came in Z2-Z3 and is still open (opens > 1), no
 *      join since the last flush began.  The closer drops its open, clears
 *      closing, hands its result to the joiners (ZJ), broadcasts close_done
 *      and returns its flushes' first error; the copy lives on with its
 *      pages, and the last close is the reviver's.
 *   Z5 opens == 1, no pass, no join since the last flush began, nothing
 *      dirty (or a write of that flush failed: H.6), seen in one hold of
 *      the lock: f leaves the table, its joiners' list is taken off it;
 *      then (lock dropped) its pages and struct go (file_free); then, under
 *      the lock again, the joiners get the result and close_done is
 *      broadcast, so a joiner returns after the pages are gone (D.2).  No
 *      write of f is in flight or can start after Z5: no user holds it, and
 *      the flusher picks files from the table only.
 *      So a page is dropped only if a write of it failed in the last
 *      flush, whose error the closer and every joiner return.
 *   ZJ a close that is not the last (opens > 1) of a copy that is closing
 *      (it revived it, ZA, and now closes): it drops its open, sets joined,
 *      puts a record (on its stack) on f->joins and waits for close_done
 *      until the closer, at Z4 or Z5 under the lock, has written its result
 *      (the closer's first error, 0 if none) and marked it done.  It reads
 *      nothing of f after it joined: at Z5 f is freed.  So a close returns
 *      only when the writes that returned before it are in the kernel's
 *      file, or with an error that says they may not be (J.3).
 * An open:
 *   ZA finds f in the table (whether closing or not): opens += 1.  A closing
 *      copy is revived (Z4) with its pages, the ones under writeback
 *      included: the open reads what was written, not the disk.
 *   ZB with O_TRUNC, finds f, closing or not: -EBUSY (a truncate under a
 *      cached copy would leave it stale).  It does not wait for a last close
 *      in progress: that close waits for the page locks of f's dirty pages
 *      (writeback.c K1), which the opening thread may hold (B.2).  The
 *      kernel's file is truncated (ftruncate of the descriptor just opened,
 *      whose identity was checked) only under the lock, with no copy in the
 *      table.
 *   ZC finds none: a new copy, made under the lock, reads the disk, which
 *      after Z5 holds every write of the copy before it (Z2, Z3).
 * So at every instant a file has at most one copy that opens can reach, and
 * none reads the disk before the writes of the copy before it have ended.
 * Rule ONE-COPY checks it at ZC against a list of every copy of the cache
 * made and not yet past Z5 (in the table or not).
 * (tests/regress/regress_open_closing.c: an open, and an O_TRUNC open, while
 * the close waits for a pass parked before its write, or for a page lock;
 * tests/regress/regress_close_join.c: an open that revives, writes and
 * closes while the closer is in its flush, with and without a write error.)
 *
 * The last close against lookups already running (lpc.h states the rule):
 * lpc_page_find reads the struct only inside its read section (lookup.c,
 * R1 before the first load from f), so the struct, its index lock and its
 * rwlock are freed only after a grace period (file_free_rcu); the index's
 * nodes go the same way (radix.c), its pages through the deferred free.  A
 * lookup that began before the close began therefore reads valid memory and
 * finds the page, a page already removed (still valid: its reference keeps
 * it), or nothing.
 *
 * Close cannot fail: it needs a thread registered with RCU (call_rcu), which
 * lpc_rcu_scope_enter provides without allocating, and the rcu_head it
 * queues is part of the struct, allocated at open.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "filemap/filemap.h"

#define LPC_OPEN_REFUSED (O_APPEND | O_PATH | O_DIRECTORY)

/* Opens with O_DIRECT, or buffered where the file system refuses it.
 * O_NONBLOCK: files->lock is held, and a FIFO (or a device) must not make
 * the open wait for its other end; the caller refuses what is not a
 * regular file, then clears the flag (io_uring would not wait on a
 * non-blocking file). */
static int open_direct(const char *path, int oflags, mode_t mode, int *direct)
{
	int fd = open(path, oflags | O_DIRECT | O_CLOEXEC | O_NONBLOCK, mode);

	*direct = 1;
	if (fd < 0 && errno == EINVAL) {
		fd = open(path, oflags | O_CLOEXEC | O_NONBLOCK, mode);
		*direct = 0;
	}
	if (fd < 0 && errno == ENXIO) {
		/* O_NONBLOCK's answer for a FIFO without a reader or a
		 * device without a driver: not a regular file. */
		struct stat st;

		if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
			return -EINVAL;
		errno = ENXIO;
	}
	return fd < 0 ? -errno : fd;
}

static struct lpc_file *file_find(struct lpc_files *c, dev_t dev, ino_t ino)
{
	for (struct lpc_file *f = c->head; f; f = f->next)
		if (f->dev == dev && f->ino == ino)
			return f;
	return NULL;
}

static void file_free_rcu(struct rcu_head *head)
{
	struct lpc_file *f = caa_container_of(head, struct lpc_file, rcu);

	lpc_rcu_callback_enter(head);
	/* No reader left: a LOCKED-mode lookup may have taken the rwlock
	 * after the close's last use of it. */
	pthread_mutex_destroy(&f->tree_lock);
	pthread_rwlock_destroy(&f->tree_rwlock);
	pthread_mutex_destroy(&f->size_lock);
	pthread_mutex_destroy(&f->ra_lock);
	pthread_rwlock_destroy(&f->trunc_lock);
	lpc_yield_point(LPC_YP_FILE_FREE);
	free(f);
}

/* Empties the index, closes the descriptor and frees f after a grace
 * period.  Context: f unlinked from its cache; a registered (or scoped)
 * thread, outside any read section. */
static void file_free(struct lpc_file *f)
{
#if LPC_DEBUG
	f->dbg_magic = LPC_FILE_POISON;
#endif
	lpc_ra_quiesce(f); /* ra_worker.c Q3: no window of f outlives it */
	lpc_filemap_remove_all(f);
	close(f->io.fd);
	lpc_call_rcu(&f->rcu, file_free_rcu);
}

void lpc_files_init(struct lpc_files *fs, struct lpc_pool *pool, struct lpc_io *io,
		    bool locked_lookup)
{
	pthread_mutex_init(&fs->lock, NULL);
	fs->head = NULL;
	fs->pool = pool;
	fs->io = io;
	fs->locked_lookup = locked_lookup;
	fs->run_max = 1;
	fs->ra_init = fs->ra_max = 0;
	lpc_ra_worker_init(fs);
	fs->flush = NULL;
	fs->wb = NULL;
	pthread_cond_init(&fs->wb_idle, NULL);
	pthread_cond_init(&fs->close_done, NULL);
#if LPC_DEBUG
	fs->dbg_live = NULL;
#endif
	atomic_store_explicit(&fs->ndirty, 0, memory_order_relaxed);
}

void lpc_files_destroy(struct lpc_files *fs)
{
	lpc_ra_worker_destroy(fs);
	pthread_cond_destroy(&fs->wb_idle);
	pthread_cond_destroy(&fs->close_done);
	pthread_mutex_destroy(&fs->lock);
}

int lpc_files_open(struct lpc_files *c, const char *path, int oflags, mode_t mode,
		   struct lpc_file **out)
{
	struct lpc_file *f;
	struct stat st;
	int fd, direct, accmode;
	bool trunc;

	if (!c || !path || !out || (oflags & LPC_OPEN_REFUSED))
		return -EINVAL;
	/* lpc reads what it caches (a partial write reads the page first), so
	 * write-only opens read-write; a truncating open writes, and needs
	 * write permission with any access mode (open(2)), so it opens
	 * read-write too.  The truncate itself is ZB's, not open(2)'s. */
	trunc = (oflags & O_TRUNC) != 0;
	accmode = oflags & O_ACCMODE;
	if (accmode == O_WRONLY || trunc)
		accmode = O_RDWR;
	oflags = (oflags & ~(O_ACCMODE | O_TRUNC)) | accmode;

	pthread_mutex_lock(&c->lock);
	fd = open_direct(path, oflags, mode, &direct);
	if (fd < 0)
		goto out_unlock;
	if (fstat(fd, &st) != 0) {
		int err = -errno;

		close(fd);
		fd = err;
		goto out_unlock;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		fd = -EINVAL;
		goto out_unlock;
	}
	{
		int fl = fcntl(fd, F_GETFL);

		if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
			int err = -errno;

			close(fd);
			fd = err;
			goto out_unlock;
		}
	}
	f = file_find(c, st.st_dev, st.st_ino);
	if (f && trunc) {								/* ZB */
		close(fd);
		fd = -EBUSY; /* truncating would leave this copy stale */
		goto out_unlock;
	}
	if (trunc) {
		if (ftruncate(fd, 0) != 0) {
			int err = -errno;

			close(fd);
			fd = err;
			goto out_unlock;
		}
		st.st_size = 0;
	}
	if (!direct) {
		/* Open needs no thread block (nor RCU): it only counts. */
		struct lpc_tcache *t = lpc_tcache(&c->pool->owner);

		if (t)
			lpc_count(t, LPC_C_DIRECT_FALLBACKS);
		else
			lpc_count_noblock(&c->pool->owner, LPC_C_DIRECT_FALLBACKS);
	}

	if (f) {									/* ZA */
		if (accmode == O_RDWR && f->accmode == O_RDONLY) {
			/* Upgrade in place: dup3 swaps the description under the
			 * same number atomically for concurrent readers. */
			if (dup3(fd, f->io.fd, O_CLOEXEC) < 0) {
				int err = -errno;

				close(fd);
				fd = err;
				goto out_unlock;
			}
			f->accmode = O_RDWR;
			atomic_store_explicit(&f->io.direct, direct, memory_order_relaxed);
		}
		close(fd);
		f->opens++;
		goto out_found;
	}

#if LPC_DEBUG
	/* Rule ONE-COPY (A.5): a new copy only where no copy of the file is
	 * live: none in the table, and none out of it whose last close has
	 * not reached Z5 (its writes may still be in flight). */
	for (struct lpc_file *o = c->dbg_live; o; o = o->dbg_live_next)
		lpc_debug_check(o->dev != st.st_dev || o->ino != st.st_ino, "ONE-COPY", NULL,
				"a second copy of file (dev %llu, ino %llu) while copy %p %s",
				(unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
				(void *)o, o->closing ? "is in its last close" : "is open");
#endif
	f = aligned_alloc(LPC_CACHELINE, sizeof(*f));						/* ZC */
	if (!f) {
		close(fd);
		fd = -ENOMEM;
		goto out_unlock;
	}
	memset(f, 0, sizeof(*f));
	f->pool = c->pool;
	f->owner_id = c->pool->owner.id;
	lpc_radix_init(&f->tree);
	f->locked_lookup = c->locked_lookup;
	f->hit_id = c->locked_lookup ? LPC_FILE_NO_FAST_PATH : f->owner_id;
	f->page_shift = c->pool->page_shift;
	f->files = c;
	f->iodev = c->io;
	f->io.dev = c->io;
	f->io.fd = fd;
	f->io.id = (uint64_t)st.st_ino;
	atomic_store_explicit(&f->io.size, (uint64_t)st.st_size, memory_order_relaxed);
	atomic_store_explicit(&f->size, (uint64_t)st.st_size, memory_order_relaxed);
	pthread_mutex_init(&f->size_lock, NULL);
	lpc_ra_init(f);
	pthread_rwlock_init(&f->trunc_lock, NULL);
	atomic_store_explicit(&f->io.direct, direct, memory_order_relaxed);
	pthread_mutex_init(&f->tree_lock, NULL);
	{
		/* Writers first, as the kernel's mmap_sem: with glibc's default
		 * (readers first) a LOCKED miss, which holds the lock for reading
		 * across its read (miss.c), starves lpc_invalidate.  No thread
		 * takes the read lock twice, so non-recursive is safe. */
		pthread_rwlockattr_t ra;

		pthread_rwlockattr_init(&ra);
		pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		pthread_rwlock_init(&f->tree_rwlock, &ra);
		pthread_rwlockattr_destroy(&ra);
	}
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->accmode = accmode;
	f->opens = 1;
#if LPC_DEBUG
	f->dbg_magic = LPC_FILE_MAGIC;
#endif
	f->next = c->head;
	c->head = f;
#if LPC_DEBUG
	f->dbg_live_next = c->dbg_live;
	c->dbg_live = f;
#endif
out_found:
	pthread_mutex_unlock(&c->lock);
	*out = f;
	return 0;
out_unlock:
	pthread_mutex_unlock(&c->lock);
	return fd;
}

/* The file (dev, ino) if this cache holds it open with at least accmode's
 * access (O_RDONLY, or O_RDWR), its open count raised (ZA: a copy in its
 * last close is revived); else NULL.  For names/ (lpc_ns_open): a file
 * already open needs no system call. */
struct lpc_file *lpc_files_find_get(struct lpc_files *c, dev_t dev, ino_t ino, int accmode)
{
	struct lpc_file *f;

	pthread_mutex_lock(&c->lock);
	f = file_find(c, dev, ino);
	if (f && accmode != O_RDONLY && f->accmode == O_RDONLY)
		f = NULL;
	if (f)
		f->opens++;
	pthread_mutex_unlock(&c->lock);
	return f;
}

/* A close waiting for the last close it joined (ZJ): on its stack, linked
 * on f->joins; rc and done written by the closer under files->lock. */
struct lpc_close_join {
	struct lpc_close_join *next;
	int rc;
	bool done;
};

/* Z4, Z5: the joiners' result (js: f->joins, taken off f under c->lock).
 * Context: c->lock. */
static void close_joins_done(struct lpc_files *c, struct lpc_close_join *js, int err)
{
	for (struct lpc_close_join *j = js, *next; j; j = next) {
		next = j->next;
		j->rc = err;
		j->done = true; /* read by the joiner only after it retakes c->lock */
	}
	pthread_cond_broadcast(&c->close_done);
}

LPC_EXPORT int lpc_file_close(struct lpc_file *f)
{
	struct lpc_files *c;
	struct lpc_file **pp;
	struct lpc_close_join *js;
	bool scoped, flushed = false;
	int err = 0;

	if (!f)
		return -EINVAL;
	lpc_debug_file_check(f);
	c = f->files;
	pthread_mutex_lock(&c->lock);
	if (f->opens > 1) {
		f->opens--;
		if (f->closing) {							/* ZJ */
			struct lpc_close_join j = { .next = f->joins };

			f->joins = &j;
			f->joined = true;
			lpc_yield_point(LPC_YP_ZJ);
			while (!j.done)
				pthread_cond_wait(&c->close_done, &c->lock);
			pthread_mutex_unlock(&c->lock);
			return j.rc;
		}
		pthread_mutex_unlock(&c->lock);
		return 0;
	}
	f->closing = true;								/* Z1 */
	for (;;) {
		if (!f->joined && f->opens > 1)
			break; /* revived: Z4 */
		if (f->wb_busy) {							/* Z2 */
			pthread_cond_wait(&c->wb_idle, &c->lock);
			flushed = false; /* the pass may have failed: flush again */
			continue;
		}
		if (!c->flush ||
		    (!f->joined && flushed &&
		     (err || !atomic_load_explicit(&f->nrdirty, memory_order_relaxed))))
			break; /* Z5 */
		f->joined = false; /* a join from now on needs another flush */
		pthread_mutex_unlock(&c->lock);
		lpc_yield_point(LPC_YP_Z3);
		{
			/* A write that fails leaves its page dirty: the close
			 * still removes it (Z5), and returns the error. */
			int rc = c->flush(f);						/* Z3 */

			if (!err)
				err = rc;
		}
		pthread_mutex_lock(&c->lock);
		flushed = true;
	}
	if (f->opens > 1) {								/* Z4 */
		f->opens--;
		f->closing = false;
		close_joins_done(c, f->joins, err);
		f->joins = NULL;
		f->joined = false;
		pthread_mutex_unlock(&c->lock);
		return err;
	}
	f->opens = 0;									/* Z5 */
	for (pp = &c->head; *pp != f; pp = &(*pp)->next)
		;
	*pp = f->next;
#if LPC_DEBUG
	for (pp = &c->dbg_live; *pp != f; pp = &(*pp)->dbg_live_next)
		;
	*pp = f->dbg_live_next; /* rule ONE-COPY: past Z5 */
#endif
	js = f->joins; /* no join can come: f is out of the table, opens 0 */
	pthread_mutex_unlock(&c->lock);
	scoped = lpc_rcu_scope_enter();
	file_free(f);
	lpc_rcu_scope_exit(scoped);
	if (js) {
		/* After the pages have gone (D.2 holds for the joiners too). */
		pthread_mutex_lock(&c->lock);
		close_joins_done(c, js, err);
		pthread_mutex_unlock(&c->lock);
	}
	return err;
}

/* Closes every file whatever its open count (cache destroy).  Context: a
 * registered (or scoped) thread. */
int lpc_files_close_all(struct lpc_files *c)
{
	struct lpc_file *f;

	pthread_mutex_lock(&c->lock);
	f = c->head;
	c->head = NULL;
#if LPC_DEBUG
	c->dbg_live = NULL;
#endif
	pthread_mutex_unlock(&c->lock);
	while (f) {
		struct lpc_file *next = f->next;

		file_free(f);
		f = next;
	}
	return 0;
}

uint64_t lpc_files_index_bytes(struct lpc_files *c)
{
	uint64_t n = 0;

	/* A gauge: the count of each tree read without its index lock, which
	 * in LOCKED mode a miss holds across its read (lpc_stats never waits
	 * for I/O). */
	pthread_mutex_lock(&c->lock);
	for (struct lpc_file *f = c->head; f; f = f->next)
		n += atomic_load_explicit(&f->tree.nodes, memory_order_relaxed);
	pthread_mutex_unlock(&c->lock);
	return n * sizeof(struct lpc_radix_node);
}

/* Pages held by every file's index.  Context: fs->lock. */
uint64_t lpc_files_nrpages(struct lpc_files *c)
{
	uint64_t n = 0;

	for (struct lpc_file *f = c->head; f; f = f->next) {
		lpc_file_index_lock(f);
		n += f->nrpages;
		lpc_file_index_unlock(f);
	}
	return n;
}
