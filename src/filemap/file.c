/* SPDX-License-Identifier: MIT */
/*
 * file.c - the file table of a cache: lpc_file_open (through lpc_files_open;
 * the public call, which takes the cache, is in cache/cache.c) and
 * lpc_file_close.
 *
 * One cached copy per file: opening a file that this cache already holds
 * (same st_dev and st_ino) returns the same lpc_file with its open count
 * raised, so two opens never see two different copies of a page.  The last
 * close removes the file's pages from the cache.
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

/* Opens with O_DIRECT, or buffered where the file system refuses it. */
static int open_direct(const char *path, int oflags, mode_t mode, int *direct)
{
	int fd = open(path, oflags | O_DIRECT | O_CLOEXEC, mode);

	*direct = 1;
	if (fd < 0 && errno == EINVAL) {
		fd = open(path, oflags | O_CLOEXEC, mode);
		*direct = 0;
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
	atomic_store_explicit(&fs->ndirty, 0, memory_order_relaxed);
}

void lpc_files_destroy(struct lpc_files *fs)
{
	lpc_ra_worker_destroy(fs);
	pthread_cond_destroy(&fs->wb_idle);
	pthread_mutex_destroy(&fs->lock);
}

int lpc_files_open(struct lpc_files *c, const char *path, int oflags, mode_t mode,
		   struct lpc_file **out)
{
	struct lpc_file *f;
	struct stat st;
	int fd, direct, accmode;

	if (!c || !path || !out || (oflags & LPC_OPEN_REFUSED))
		return -EINVAL;
	/* lpc reads what it caches (a partial write reads the page first), so
	 * write-only opens read-write. */
	accmode = oflags & O_ACCMODE;
	if (accmode == O_WRONLY)
		accmode = O_RDWR;
	oflags = (oflags & ~O_ACCMODE) | accmode;

	pthread_mutex_lock(&c->lock);
	if ((oflags & O_TRUNC) && stat(path, &st) == 0 && file_find(c, st.st_dev, st.st_ino)) {
		/* Truncating would leave this cache's copy stale. */
		fd = -EBUSY;
		goto out_unlock;
	}
	fd = open_direct(path, oflags, mode, &direct);
	if (fd < 0)
		goto out_unlock;
	if (fstat(fd, &st) != 0) {
		fd = -errno;
		goto out_unlock;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		fd = -EINVAL;
		goto out_unlock;
	}
	if (!direct) {
		/* Open needs no thread block (nor RCU): it only counts. */
		struct lpc_tcache *t = lpc_tcache(&c->pool->owner);

		if (t)
			lpc_count(t, LPC_C_DIRECT_FALLBACKS);
		else
			lpc_count_noblock(&c->pool->owner, LPC_C_DIRECT_FALLBACKS);
	}

	f = file_find(c, st.st_dev, st.st_ino);
	if (f) {
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

	f = aligned_alloc(LPC_CACHELINE, sizeof(*f));
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
out_found:
	pthread_mutex_unlock(&c->lock);
	*out = f;
	return 0;
out_unlock:
	pthread_mutex_unlock(&c->lock);
	return fd;
}

/* The file (dev, ino) if this cache holds it open with at least accmode's
 * access (O_RDONLY, or O_RDWR), its open count raised; else NULL.  For
 * names/ (lpc_ns_open): a file already open needs no system call. */
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

LPC_EXPORT int lpc_file_close(struct lpc_file *f)
{
	struct lpc_files *c;
	struct lpc_file **pp;
	bool scoped;
	int err = 0;

	if (!f)
		return -EINVAL;
	lpc_debug_file_check(f);
	c = f->files;
	pthread_mutex_lock(&c->lock);
	/* The last close writes the dirty pages back first, with files->lock
	 * dropped (I/O); an open and close in between may dirty pages again,
	 * so it looks again before it unlinks.  A write that fails leaves
	 * its page dirty: the close still removes it, and returns the error. */
	while (f->opens == 1 && c->flush &&
	       atomic_load_explicit(&f->nrdirty, memory_order_relaxed) > 0 && !err) {
		pthread_mutex_unlock(&c->lock);
		err = c->flush(f);
		pthread_mutex_lock(&c->lock);
	}
	if (--f->opens > 0) {
		pthread_mutex_unlock(&c->lock);
		return err;
	}
	for (pp = &c->head; *pp != f; pp = &(*pp)->next)
		;
	*pp = f->next;
	/* A flusher pass on f (writeback/flusher.c) ends before f goes. */
	while (f->wb_busy)
		pthread_cond_wait(&c->wb_idle, &c->lock);
	pthread_mutex_unlock(&c->lock);
	if (!err && c->flush)
		err = c->flush(f); /* reports an error recorded before, once */
	scoped = lpc_rcu_scope_enter();
	file_free(f);
	lpc_rcu_scope_exit(scoped);
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
