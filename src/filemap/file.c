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
 *   ZW while pages of f are write-pinned (f->wpins, writeback/wpin.c WC5),
 *      wait for their unpins (the lock is released): a write pin holds its
 *      pages locked, perhaps clean, and the holder's lpc_unpin still uses
 *      f; so the bytes are dirty before Z3 flushes them, and f is not freed
 *      under an unpin (lpc.h I.7).  Then Z3 runs again.
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
 * Copies over a user backend (lpc_file_open_backend, lpc.h BK1-BK6) live
 * in the same table under the same lock, and every step above holds for
 * them (ZA, Z1-Z5, ZJ: one copy per name); only the identity and the
 * handle differ:
 *   ZN1 the identity is the name (strcmp), not (dev, ino): file_find never
 *      finds a named copy, file_find_name only named ones, so paths and
 *      names never meet.  An open of a name in the table with another
 *      table of operations is refused (-EINVAL): one copy has one backend.
 *   ZN2 the size operation runs before files_lock is taken (on every open:
 *      whether a copy exists is known only under the lock): no operation
 *      of a user's runs under a lock of the whole cache (BK2).  A new copy
 *      starts from that answer (BK5).
 *   ZN3 the upgrade (ZL4's, for handles): a read-write open of a copy open
 *      read-only stores its handle in io.handle (relaxed), then accmode
 *      (release); the old handle is parked, released only when the copy
 *      is freed, so an operation that loaded it still has a valid handle.
 *   ZN4 every handle lpc took is released once: at file_free (the current
 *      one and the parked ones, after the last close's writeback and
 *      readahead's quiesce: no operation on them can run or start), or,
 *      for an open that found the copy and did not need its handle, after
 *      files_lock is dropped, before the open returns.
 * (tests/unit/test_backend.c)
 *
 * Descriptors and the process's POSIX record locks.  Closing ANY descriptor
 * of a file (close(2), or dup2/dup3 onto it) releases every POSIX lock
 * (fcntl F_SETLK) the process holds on that file, whichever descriptor took
 * it; OFD locks and flock(2) belong to the open file description and are
 * not touched, and neither does closing an O_PATH descriptor.  Users lock
 * files that lpc holds (the SQLite VFS lets the unix VFS lock through its
 * own descriptor), so, all under files->lock:
 *   ZL1 an open looks the file up first by stat(2) of the path (lstat with
 *      O_NOFOLLOW): a regular file found in the table (ZA, ZB) needs no new
 *      descriptor.  O_CREAT|O_EXCL skips this (the kernel must say EEXIST).
 *   ZL2 the permission answer stays the kernel's: faccessat(2) of the path
 *      with AT_EACCESS (the credentials open(2) checks) for the access lpc
 *      would open with (read, or read and write).  The copy's descriptor
 *      proves nothing for this caller: another credential, or a chmod since.
 *      faccessat does not check what only open(2) does on an open file
 *      (leases, LSM open hooks, append-only for a copy already writable).
 *   ZL3 otherwise it opens a descriptor (allocating first the new copy and
 *      a park node, so that nothing after the open fails for memory) and
 *      looks up fstat's (dev, ino), which is the truth: the path may have
 *      changed between the stat and the open (a rename, a link, a create).
 *   ZL4 found, read-only, and this open asks for read-write: the upgrade.
 *      The new descriptor replaces io.fd (stored relaxed, then accmode
 *      stored release: a writer that loads accmode with acquire and sees
 *      O_RDWR, and so the writeback of what it dirtied, loads the new
 *      descriptor); the old one is parked (ZL5), never closed nor dup3'd
 *      over, so an I/O that loaded it before the swap still reads through
 *      an open descriptor.  A copy that has fallen back to buffered I/O
 *      gets a buffered new descriptor too.
 *   ZL5 found otherwise (the race of ZL3, or an O_TRUNC open, which then
 *      gets ZB's -EBUSY): the new descriptor is parked on the copy, closed
 *      only when the copy is freed (Z5: its last close).  Bounded: accmode
 *      only rises, so at most one upgrade per copy; every other park is an
 *      open whose stat and open saw two different files, a race with a
 *      concurrent change of the path, and each holds one descriptor only
 *      until the copy's last close.
 *   ZL6 a descriptor is closed at once only when no copy of its file is in
 *      the table: a failed open whose descriptor is not a regular file, or
 *      whose fstat(2) (no failure known for a descriptor just opened),
 *      F_SETFL or O_TRUNC ftruncate(2) failed; or one that names/ gives
 *      back (lpc_files_give_fd: its lpc_ns_open with O_CREAT opens one of
 *      its own) when no copy holds it, or no memory is left to park it.
 *      Then, and at the last close
 *      (the copy's descriptors are closed), the process's POSIX locks on the
 *      file go: lpc.h (lpc_file_open, lpc_file_close) tells the user.
 * (tests/unit/test_file_open.c t_posix_locks: a plain descriptor's lock
 * survives every open, the upgrade and O_TRUNC's -EBUSY;
 * tests/regress/regress_open_rename.c: the race of ZL3 and ZL5.)
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
#include <limits.h>
#include <linux/futex.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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
		if (!f->name && f->dev == dev && f->ino == ino)
			return f;
	return NULL;
}

/* A copy over a user backend, found by its name (ZN1). */
static struct lpc_file *file_find_name(struct lpc_files *c, const char *name)
{
	for (struct lpc_file *f = c->head; f; f = f->next)
		if (f->name && strcmp(f->name, name) == 0)
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
	pthread_rwlock_destroy(&f->dio_lock);
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
	lpc_ra_forget(f);  /* QS5: nor its streams' refill room */
	lpc_filemap_remove_all(f);
	/* Its frames wait on pending: the reclaimer's linger frees them
	 * (RL1-RL4; tests/attack_batch att_close_pend). */
	lpc_page_pending_kick(f->pool);
	if (f->io.user) {
		/* ZN4: after the last operation on the handles (the close's
		 * writeback is done, readahead quiesced). */
		void (*release)(void *) = f->io.user->release;

		if (release)
			release(atomic_load_explicit(&f->io.handle, memory_order_relaxed));
		while (f->parked) {
			struct lpc_fd_park *p = f->parked;

			f->parked = p->next;
			if (release)
				release(p->handle);
			free(p);
		}
		free(f->name);
	} else {
		close(atomic_load_explicit(&f->io.fd, memory_order_relaxed));
	}
	while (f->parked) {							/* ZL5 */
		struct lpc_fd_park *p = f->parked;

		f->parked = p->next;
		close(p->fd);
		free(p);
	}
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
	fs->run_bridge = 0;
	fs->discard = NULL;
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
	free(fs->discard);
	pthread_cond_destroy(&fs->wb_idle);
	pthread_cond_destroy(&fs->close_done);
	pthread_mutex_destroy(&fs->lock);
}

/* ZL5: parks fd on f with the node *park (taken).  Context: files->lock. */
static void fd_park(struct lpc_file *f, struct lpc_fd_park **park, int fd)
{
	struct lpc_fd_park *p = *park;

	*park = NULL;
	p->fd = fd;
	p->next = f->parked;
	f->parked = p;
}

/* ZL4: f (read-only) reads and writes through fd (opened read-write) from
 * now on; the old descriptor is parked.  Context: files->lock. */
static void file_upgrade(struct lpc_file *f, int fd, int direct, struct lpc_fd_park **park)
{
	if (direct && !atomic_load_explicit(&f->io.direct, memory_order_relaxed)) {
		/* The copy fell back to buffered I/O (io.c): the device refused
		 * its direct transfers, so the new descriptor would too. */
		int fl = fcntl(fd, F_GETFL);

		if (fl >= 0 && fcntl(fd, F_SETFL, fl & ~O_DIRECT) == 0)
			direct = 0;
	}
	fd_park(f, park, atomic_load_explicit(&f->io.fd, memory_order_relaxed));
	atomic_store_explicit(&f->io.direct, direct, memory_order_relaxed);
	atomic_store_explicit(&f->io.fd, fd, memory_order_relaxed);
	__atomic_store_n(&f->accmode, O_RDWR, __ATOMIC_RELEASE);
}

/* ZC: a new copy f (memory of its own, not yet zeroed), made and put in
 * the table; the caller sets its identity (dev and ino, or name) before it
 * drops files->lock.  Context: files->lock. */
static void file_make(struct lpc_files *c, struct lpc_file *f, int fd, uint64_t id,
		      uint64_t size, int direct, int accmode)
{
	memset(f, 0, sizeof(*f));
	f->pool = c->pool;
	f->owner_id = c->pool->owner.id;
	lpc_radix_init(&f->tree);
	f->locked_lookup = c->locked_lookup;
	f->hit_id = c->locked_lookup ? LPC_FILE_NO_FAST_PATH : f->owner_id;
	f->page_shift = c->pool->page_shift;
	f->ws_id = lpc_pool_ws_file_id(0, id);
	f->files = c;
	f->iodev = c->io;
	f->io.dev = c->io;
	atomic_init(&f->io.fd, fd);
	f->io.id = id;
	atomic_store_explicit(&f->io.size, size, memory_order_relaxed);
	atomic_store_explicit(&f->size, size, memory_order_relaxed);
	pthread_mutex_init(&f->size_lock, NULL);
	lpc_ra_init(f);
	pthread_rwlock_init(&f->trunc_lock, NULL);
	atomic_init(&f->wpins, 0);
	atomic_store_explicit(&f->io.direct, direct, memory_order_relaxed);
	{
		/* Adaptive: a miss holds it for one radix insert (M3), an
		 * invalidate for a gang; two threads missing on one file meet
		 * here, and a short spin before the futex keeps them off the
		 * scheduler (lpcbench fault, 2 threads). */
		pthread_mutexattr_t ma;

		pthread_mutexattr_init(&ma);
		pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
		pthread_mutex_init(&f->tree_lock, &ma);
		pthread_mutexattr_destroy(&ma);
	}
	{
		/* Writers first, as the kernel's mmap_sem: with glibc's default
		 * (readers first) a LOCKED miss, which holds the lock for reading
		 * across its read (miss.c), starves lpc_invalidate.  No thread
		 * takes the read lock twice, so non-recursive is safe. */
		pthread_rwlockattr_t ra;

		pthread_rwlockattr_init(&ra);
		pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		pthread_rwlock_init(&f->tree_rwlock, &ra);
		/* dio_lock too: a writeback stream must not starve a growing
		 * ftruncate (writeback.c, rule S5); read once per batch. */
		pthread_rwlock_init(&f->dio_lock, &ra);
		pthread_rwlockattr_destroy(&ra);
	}
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
}

/* ZL2: may this caller open path with accmode (O_RDONLY or O_RDWR)? */
static int may_open(const char *path, int oflags, int accmode)
{
	int how = accmode == O_RDWR ? R_OK | W_OK : R_OK;
	int fl = AT_EACCESS | ((oflags & O_NOFOLLOW) ? AT_SYMLINK_NOFOLLOW : 0);

	return faccessat(AT_FDCWD, path, how, fl) == 0 ? 0 : -errno;
}

int lpc_files_open(struct lpc_files *c, const char *path, int oflags, mode_t mode,
		   struct lpc_file **out)
{
	struct lpc_file *f, *nf = NULL;
	struct lpc_fd_park *park = NULL;
	struct stat st;
	int fd, direct, accmode, rc;
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
	f = NULL;
	if ((oflags & (O_CREAT | O_EXCL)) != (O_CREAT | O_EXCL) &&			/* ZL1 */
	    fstatat(AT_FDCWD, path, &st, (oflags & O_NOFOLLOW) ? AT_SYMLINK_NOFOLLOW : 0) == 0 &&
	    S_ISREG(st.st_mode))
		f = file_find(c, st.st_dev, st.st_ino);
	lpc_yield_point(LPC_YP_ZL1);
	if (f) {									/* ZA */
		rc = may_open(path, oflags, accmode);					/* ZL2 */
		if (rc)
			goto out_unlock;
		if (trunc) {								/* ZB */
			/* Open or in its last close: truncating would leave
			 * this copy stale, and waiting for the close could wait
			 * for a page lock the caller holds (A.5). */
			rc = -EBUSY;
			goto out_unlock;
		}
		if (accmode == O_RDONLY || f->accmode == O_RDWR) {
			f->opens++;
			goto out_found;
		}
		/* The upgrade needs a read-write descriptor: ZL3, ZL4. */
	}

	if (!park)									/* ZL3 */
		park = malloc(sizeof(*park));
	if (!nf)
		nf = aligned_alloc(LPC_CACHELINE, sizeof(*nf));
	if (!park || !nf) {
		rc = -ENOMEM;
		goto out_unlock;
	}
	fd = open_direct(path, oflags, mode, &direct);
	if (fd < 0) {
		rc = fd;
		goto out_unlock;
	}
	if (fstat(fd, &st) != 0) {
		rc = -errno;
		close(fd); /* ZL6: which file it is, is unknown */
		goto out_unlock;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd); /* ZL6: not a regular file, never in the table */
		rc = -EINVAL;
		goto out_unlock;
	}
	f = file_find(c, st.st_dev, st.st_ino);
	{
		int fl = fcntl(fd, F_GETFL);

		if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
			rc = -errno;
			if (f)
				fd_park(f, &park, fd);					/* ZL5 */
			else
				close(fd);						/* ZL6 */
			goto out_unlock;
		}
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
		if (trunc) {
			/* The path changed under ZL1 to a file in the table:
			 * ZB's answer, the descriptor parked. */
			fd_park(f, &park, fd);						/* ZL5 */
			rc = -EBUSY;
			goto out_unlock;
		}
		if (accmode == O_RDWR && f->accmode == O_RDONLY)
			file_upgrade(f, fd, direct, &park);				/* ZL4 */
		else
			fd_park(f, &park, fd);						/* ZL5 */
		f->opens++;
		goto out_found;
	}
	if (trunc) {
		/* ZB: no copy in the table, the kernel's file is truncated
		 * through the descriptor whose identity was just checked. */
		if (ftruncate(fd, 0) != 0) {
			rc = -errno;
			close(fd);							/* ZL6 */
			goto out_unlock;
		}
		st.st_size = 0;
	}

#if LPC_DEBUG
	/* Rule ONE-COPY (A.5): a new copy only where no copy of the file is
	 * live: none in the table, and none out of it whose last close has
	 * not reached Z5 (its writes may still be in flight). */
	for (struct lpc_file *o = c->dbg_live; o; o = o->dbg_live_next)
		lpc_debug_check(o->name || o->dev != st.st_dev || o->ino != st.st_ino,
				"ONE-COPY", NULL,
				"a second copy of file (dev %llu, ino %llu) while copy %p %s",
				(unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
				(void *)o, o->closing ? "is in its last close" : "is open");
#endif
	f = nf;										/* ZC */
	nf = NULL;
	file_make(c, f, fd, (uint64_t)st.st_ino, (uint64_t)st.st_size, direct, accmode);
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->ws_id = lpc_pool_ws_file_id((uint64_t)st.st_dev, (uint64_t)st.st_ino);
out_found:
	pthread_mutex_unlock(&c->lock);
	free(park);
	free(nf);
	*out = f;
	return 0;
out_unlock:
	pthread_mutex_unlock(&c->lock);
	free(park);
	free(nf);
	return rc;
}

/* Ids of copies over user backends (io.id: the fault hook's file_id), apart
 * from inode numbers by the top bit. */
static _Atomic uint64_t backend_ids;

int lpc_files_open_backend(struct lpc_files *c, const char *name,
			   const struct lpc_backend_ops *ops, void *handle, int oflags,
			   struct lpc_file **out)
{
	struct lpc_file *f, *nf = NULL;
	struct lpc_fd_park *park = NULL;
	char *copy = NULL;
	uint64_t size = 0;
	size_t len;
	int accmode, rc;
	bool unneeded = false;

	if (!c || !name || !ops || !out ||
	    (ops->version != LPC_BACKEND_V1 && ops->version != LPC_BACKEND_V2) || ops->reserved ||
	    !ops->read || !ops->write || !ops->size || (oflags & ~O_ACCMODE))
		return -EINVAL;
	accmode = oflags & O_ACCMODE;
	if (accmode == O_WRONLY)
		accmode = O_RDWR; /* lpc reads what it caches */
	else if (accmode != O_RDONLY && accmode != O_RDWR)
		return -EINVAL;
	len = strnlen(name, 4096);
	if (len == 0 || len >= 4096)
		return -EINVAL;
	/* ZN2: the size, before files_lock (no operation runs under it). */
	rc = ops->size(handle, &size);
	if (rc)
		return rc < 0 ? rc : -EIO;
	/* BK6: a fixed size (no truncate) must end on a page: lpc writes back
	 * whole pages and cuts the tail with truncate, so a last page past the
	 * end of such a storage could never be written (a device refuses the
	 * bytes past its end, and the write of the bytes inside goes with
	 * them). */
	if (!ops->truncate && accmode == O_RDWR && (size & (c->pool->page_size - 1)))
		return -EINVAL;
	copy = malloc(len + 1);
	park = malloc(sizeof(*park));
	nf = aligned_alloc(LPC_CACHELINE, sizeof(*nf));
	if (!copy || !park || !nf) {
		rc = -ENOMEM;
		goto out;
	}
	memcpy(copy, name, len + 1);

	pthread_mutex_lock(&c->lock);
	f = file_find_name(c, name);						/* ZN1 */
	if (f) {
		if (f->io.user != ops) {
			rc = -EINVAL;
			pthread_mutex_unlock(&c->lock);
			goto out;
		}
		if (accmode == O_RDWR && f->accmode == O_RDONLY) {		/* ZN3 */
			struct lpc_fd_park *p = park;

			park = NULL;
			p->fd = -1;
			p->handle = atomic_load_explicit(&f->io.handle, memory_order_relaxed);
			p->next = f->parked;
			f->parked = p;
			atomic_store_explicit(&f->io.handle, handle, memory_order_relaxed);
			__atomic_store_n(&f->accmode, O_RDWR, __ATOMIC_RELEASE);
		} else {
			unneeded = true;
		}
		f->opens++;							/* ZA */
		pthread_mutex_unlock(&c->lock);
		rc = 0;
		goto out;
	}
#if LPC_DEBUG
	/* Rule ONE-COPY (A.5), for names: none live with this name. */
	for (struct lpc_file *o = c->dbg_live; o; o = o->dbg_live_next)
		lpc_debug_check(!o->name || strcmp(o->name, name) != 0, "ONE-COPY", NULL,
				"a second copy of backend object '%s' while copy %p %s", name,
				(void *)o, o->closing ? "is in its last close" : "is open");
#endif
	f = nf;									/* ZC */
	nf = NULL;
	file_make(c, f, -1, (UINT64_C(1) << 63) |
		  atomic_fetch_add_explicit(&backend_ids, 1, memory_order_relaxed),
		  size, 0, accmode);
	f->name = copy;
	copy = NULL;
	f->io.user = ops;
	atomic_store_explicit(&f->io.handle, handle, memory_order_relaxed);
	pthread_mutex_unlock(&c->lock);
	rc = 0;
out:
	free(copy);
	free(park);
	free(nf);
	if (rc)
		return rc; /* the handle stays the caller's */
	if (unneeded && ops->release)
		ops->release(handle);						/* ZN4 */
	*out = f;
	return 0;
}

/* A descriptor that a caller of lpc (names/) opened and no longer needs:
 * parked on the file's copy when the cache holds one (ZL5), else closed
 * (ZL6).  Context: no lock held. */
void lpc_files_give_fd(struct lpc_files *c, int fd)
{
	struct lpc_fd_park *park = malloc(sizeof(*park));
	struct lpc_file *f = NULL;
	struct stat st;

	pthread_mutex_lock(&c->lock);
	if (park && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		f = file_find(c, st.st_dev, st.st_ino);
	if (f)
		fd_park(f, &park, fd);
	else
		close(fd); /* no copy (or no memory to park: ZL6's close) */
	pthread_mutex_unlock(&c->lock);
	free(park);
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
		if (atomic_load_explicit(&f->wpins, memory_order_acquire) &
		    LPC_WPINS_COUNT) {					/* ZW: wpin.c WC5 */
			pthread_mutex_unlock(&c->lock);
			lpc_file_wpins_wait(f, LPC_WPINS_COUNT);
			pthread_mutex_lock(&c->lock);
			flushed = false; /* the unpins dirtied pages: flush them */
			continue;
		}
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

/* The sleeping side of f->wpins (writeback/wpin.c WC3, WC5, WC6): WAITERS
 * is set in the word before the sleep, and futex_wait sleeps only while the
 * word still holds it; every change that can end a wait (the count reaching
 * 0, CUT cleared) clears WAITERS and then wakes all, so a sleeper either
 * sees that change (EAGAIN) or is woken by it.  Other changes make the
 * futex return early; the loop re-checks. */
#if LPC_DEBUG
/* Rule WPIN-SELF-WAIT, the file's half (page/lock.c has the page's): a
 * thread about to sleep on f->wpins (its lpc_truncate, its last close)
 * holds no write pin of f, whose unpin it would wait for.  Walks f's index
 * under its lock, and only in a thread that took write pins. */
static void debug_wpins_self_wait(struct lpc_file *f)
{
	struct lpc_page *pages[32];
	uint64_t first = 0, idx[32];
	unsigned n;

	if (!lpc_page_debug_wpins_taken)
		return;
	lpc_file_index_lock(f);
	while ((n = lpc_radix_gang(&f->tree, first, (void **)pages, idx, 32)) > 0) {
		first = idx[n - 1] + 1;
		for (unsigned i = 0; i < n; i++)
			lpc_debug_check(!lpc_page_wpinned_by_me(pages[i]), "WPIN-SELF-WAIT",
					pages[i], "thread %llu waits for the write pins of a "
					"file (lpc_truncate, the last close) while it holds one "
					"of them (a self-deadlock: lpc_unpin first)",
					(unsigned long long)lpc_debug_tid());
	}
	lpc_file_index_unlock(f);
}
#else
#define debug_wpins_self_wait(f) ((void)(f))
#endif

void lpc_file_wpins_wait(struct lpc_file *f, uint32_t busy)
{
	uint32_t v = atomic_load_explicit(&f->wpins, memory_order_acquire);

	if (v & busy)
		debug_wpins_self_wait(f);
	while (v & busy) {
		if (!(v & LPC_WPINS_WAITERS) &&
		    !atomic_compare_exchange_weak_explicit(&f->wpins, &v, v | LPC_WPINS_WAITERS,
							   memory_order_acquire,
							   memory_order_acquire))
			continue;
		syscall(SYS_futex, (uint32_t *)&f->wpins, FUTEX_WAIT_PRIVATE,
			v | LPC_WPINS_WAITERS, NULL, NULL, 0);
		v = atomic_load_explicit(&f->wpins, memory_order_acquire);
	}
}

void lpc_file_wpins_wake(struct lpc_file *f)
{
	syscall(SYS_futex, (uint32_t *)&f->wpins, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
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
		n += lpc_file_nrpages(f);
		lpc_file_index_unlock(f);
	}
	return n;
}
