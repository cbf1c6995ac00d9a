// SPDX-License-Identifier: MIT
/*
 * rbd.c - liblpc_rbd: an lpc backend (lpc.h, struct lpc_backend_ops) over a
 * Ceph RBD image through librbd; the contract is lpc_rbd.h's.
 *
 * A connection (struct rbd_conn) is one rados cluster handle, one io
 * context and one open image.  It is the handle lpc holds; several opens
 * of one name in one cache share it (lpc keeps one lpc_file per name and
 * releases the handles it does not need, lpc_file_open_backend), counted in
 * `refs`.
 *
 * Concurrency.  lpc calls the operations from several threads at once
 * (BK1); librbd's image handle takes concurrent aio itself.  What this file
 * adds is the image's size when lpc writes past it or resizes it:
 *  RB1 A write whose run ends past the image's size grows the image first
 *     (BK6: a file grows under a write; an image does not, librbd clips the
 *     write).  Under conn->resize_lock it reads the size again and calls
 *     rbd_resize only to grow, so two growing writers never shrink the
 *     image below the other's run, whatever order they take the lock in.
 *  RB2 truncate takes the same lock: a shrink never interleaves with RB1's
 *     check and resize.  lpc does not write a run past the size it asks
 *     truncate for while that truncate runs (its truncate lock), so no run
 *     of ours is cut by RB2.
 *  RB4 A resize by another client.  librbd hands a maintenance operation
 *     of a client without the lock (resize, snapshot create) to the lock's
 *     owner, and the owner's handle - ours - carries it out: librbd 16.2's
 *     API has no way to refuse it (its ImageWatcher accepts every request
 *     while the lock is held; blocking them is internal to librbd).  What
 *     this file does instead: own_size is the size our handle last gave the
 *     image (at open, RB1, RB2; written under resize_lock only).  Under
 *     resize_lock, conn_check compares the image's size with it: a smaller
 *     image was cut behind lpc, bytes lpc wrote back past the cut are gone.
 *     It sets `lost` (sticky: every later sync returns it, so every later
 *     lpc_fsync reports the loss; the last close does not sync, and
 *     conn_close only checks once more) and grows the image back to own_size
 *     (lpc's size holds again; the cut range reads zeros).  A larger image
 *     (another client's growth) is adopted.  conn_check runs in RB1's locked
 *     step, in truncate, sync and size: a writeback past the cut, the next
 *     lpc_fsync, a look past the end.  A shrink undone by a growth before
 *     any of these runs is not seen (lpc_rbd.h says so).
 *  RB3 The registry of connections (registry, under registry_lock) maps
 *     (cache, name) to the connection an open may share; refs and the
 *     list change only under that lock, and a connection leaves the list
 *     when its last reference goes, before it is closed.  An open holds
 *     open_lock from its look-up to its insert, so two opens of one name
 *     never both connect (the second's lock request would get -EBUSY).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rados/librados.h>
#include <rbd/librbd.h>

#include <lpc/lpc.h>
#include <lpc/lpc_rbd.h>
#include <lpc/lpc_sqlite.h>

#define LPC_RBD_EXPORT __attribute__((visibility("default")))

/* The cookie of the advisory lock, for images without exclusive-lock. */
#define RBD_LOCK_COOKIE "lpc"

enum rbd_lock_kind { LOCK_NONE, LOCK_EXCLUSIVE, LOCK_ADVISORY };

struct rbd_conn {
	struct rbd_conn *next; /* registry (RB3) */
	struct lpc_cache *cache;
	char *name;
	bool rw;
	unsigned refs; /* RB3 */
	rados_t cluster;
	rados_ioctx_t ioctx;
	rbd_image_t image;
	enum rbd_lock_kind lock;
	pthread_mutex_t resize_lock; /* RB1, RB2, RB4 */
	uint64_t own_size;	     /* RB4, under resize_lock */
	int lost;		     /* RB4: 0 or -EIO, under resize_lock */
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER; /* lpc_rbd_open */
static struct rbd_conn *registry;

/* Waits for one completion and returns its result: a read's bytes, a
 * write's 0 (librbd reports no count for writes), or -errno. */
static ssize_t rbd_wait(rbd_completion_t comp)
{
	rbd_aio_wait_for_complete(comp);
	ssize_t r = rbd_aio_get_return_value(comp);
	rbd_aio_release(comp);
	return r;
}

static int conn_size(struct rbd_conn *cn, uint64_t *size)
{
	return rbd_get_size(cn->image, size);
}

/* RB4, under resize_lock: the image's size in *size once a cut behind
 * lpc has been noticed and undone; 0 or librbd's error. */
static int conn_check(struct rbd_conn *cn, uint64_t *size)
{
	int r = conn_size(cn, size);

	if (r < 0 || !cn->rw)
		return r;
	if (*size > cn->own_size)
		cn->own_size = *size; /* another client's growth: nothing lost */
	if (*size < cn->own_size) {
		cn->lost = -EIO;
		r = rbd_resize(cn->image, cn->own_size);
		if (r == 0)
			*size = cn->own_size;
	}
	return r;
}

/* RB1: the image covers [0, end) when it returns 0. */
static int conn_grow(struct rbd_conn *cn, uint64_t end)
{
	uint64_t size;
	int r = conn_size(cn, &size);

	if (r < 0 || size >= end)
		return r;
	pthread_mutex_lock(&cn->resize_lock);
	r = conn_check(cn, &size);
	if (r == 0 && size < end) {
		r = rbd_resize(cn->image, end);
		if (r == 0)
			cn->own_size = end;
	}
	pthread_mutex_unlock(&cn->resize_lock);
	return r;
}

static size_t iov_bytes(const struct iovec *iov, int iovcnt)
{
	size_t n = 0;

	for (int i = 0; i < iovcnt; i++)
		n += iov[i].iov_len;
	return n;
}

static ssize_t op_read(void *handle, const struct iovec *iov, int iovcnt, uint64_t off)
{
	struct rbd_conn *cn = handle;
	rbd_completion_t comp;
	uint64_t size;
	int r;

	/* librbd clips a read that runs past the end and refuses one that
	 * starts past it (-EINVAL): the latter is an empty read here, as
	 * pread(2) at or past the end of a file. */
	r = conn_size(cn, &size);
	if (r < 0)
		return r;
	if (off >= size)
		return 0;
	r = rbd_aio_create_completion(NULL, NULL, &comp);
	if (r < 0)
		return r;
	r = rbd_aio_readv(cn->image, iov, iovcnt, off, comp);
	if (r < 0) {
		rbd_aio_release(comp);
		return r;
	}
	ssize_t n = rbd_wait(comp);
	if (n == -EINVAL && conn_size(cn, &size) == 0 && off >= size)
		return 0; /* it shrank meanwhile */
	return n;
}

/* Submits one run (after growing the image over it); *comp to wait on. */
static int submit_write(struct rbd_conn *cn, const struct iovec *iov, int iovcnt, uint64_t off,
			rbd_completion_t *comp)
{
	int r = conn_grow(cn, off + iov_bytes(iov, iovcnt));

	if (r < 0)
		return r;
	r = rbd_aio_create_completion(NULL, NULL, comp);
	if (r < 0)
		return r;
	r = rbd_aio_writev(cn->image, iov, iovcnt, off, *comp);
	if (r < 0)
		rbd_aio_release(*comp);
	return r;
}

/* A write's result for lpc: all the bytes, or librbd's error (a write
 * that completes was applied whole). */
static ssize_t write_result(ssize_t r, const struct iovec *iov, int iovcnt)
{
	return r < 0 ? r : (ssize_t)iov_bytes(iov, iovcnt);
}

static ssize_t op_write(void *handle, const struct iovec *iov, int iovcnt, uint64_t off)
{
	rbd_completion_t comp;
	int r = submit_write(handle, iov, iovcnt, off, &comp);

	return r < 0 ? r : write_result(rbd_wait(comp), iov, iovcnt);
}

/* Every run in flight at once: one round trip for the batch, not nruns. */
static void op_write_batch(void *handle, struct lpc_backend_run *runs, int nruns)
{
	struct rbd_conn *cn = handle;
	rbd_completion_t comps[128];

	for (int i = 0; i < nruns; i += 128) {
		int n = nruns - i < 128 ? nruns - i : 128;

		for (int k = 0; k < n; k++) {
			struct lpc_backend_run *run = &runs[i + k];
			int r = submit_write(cn, run->iov, run->iovcnt, run->off, &comps[k]);

			run->res = r;
			if (r < 0)
				comps[k] = NULL;
		}
		for (int k = 0; k < n; k++)
			if (comps[k])
				runs[i + k].res = write_result(rbd_wait(comps[k]),
							       runs[i + k].iov, runs[i + k].iovcnt);
	}
}

static int op_sync(void *handle)
{
	struct rbd_conn *cn = handle;
	uint64_t size;
	int r = rbd_flush(cn->image);

	pthread_mutex_lock(&cn->resize_lock); /* RB4 */
	int rc = conn_check(cn, &size);
	if (r == 0)
		r = cn->lost ? cn->lost : rc;
	pthread_mutex_unlock(&cn->resize_lock);
	return r;
}

static int op_truncate(void *handle, uint64_t size)
{
	struct rbd_conn *cn = handle;
	uint64_t now;

	/* RB2 and own_size (RB4).  own_size changes only once the image has
	 * the new size: were it lowered first, a failed resize would leave it
	 * below the image (harmless: conn_check adopts a larger image), were
	 * it raised first, above it, and the next conn_check would call the
	 * image cut behind lpc and set `lost` for good.  librbd 16.2's
	 * ResizeRequest writes the header's size last (a shrink trims the
	 * objects past it first, a growth grows the object map first), so
	 * an error before that step leaves the old size, which own_size
	 * still holds: the next truncate, sync or size sees no cut.  An error
	 * after it (the header written but its reply an error, or the object
	 * map's update after a shrink failing) leaves the image at `size`
	 * while own_size holds the old one, which for a shrink would be that
	 * false "cut": so on an error the size is read again, and an image
	 * that has exactly the size asked for has been truncated, whatever
	 * rbd_resize said: own_size takes it and truncate succeeds (the
	 * bytes past it are gone either way; lpc must believe the new size).
	 * An image that has the size already is not resized. */
	pthread_mutex_lock(&cn->resize_lock);
	int r = conn_check(cn, &now);
	if (r == 0 && now != size)
		r = rbd_resize(cn->image, size);
	if (r < 0 && conn_size(cn, &now) == 0 && now == size)
		r = 0;
	if (r == 0)
		cn->own_size = size;
	pthread_mutex_unlock(&cn->resize_lock);
	return r;
}

static int op_size(void *handle, uint64_t *size)
{
	struct rbd_conn *cn = handle;

	if (!cn->rw)
		return conn_size(cn, size);
	pthread_mutex_lock(&cn->resize_lock); /* RB4 */
	int r = conn_check(cn, size);
	pthread_mutex_unlock(&cn->resize_lock);
	return r;
}

static void conn_close(struct rbd_conn *cn)
{
	if (cn->image && cn->lock != LOCK_NONE) {
		uint64_t size;

		/* RB4: a cut behind lpc since its last look leaves the image
		 * with lpc's size at least (no call is left to report it). */
		pthread_mutex_lock(&cn->resize_lock);
		conn_check(cn, &size);
		pthread_mutex_unlock(&cn->resize_lock);
	}
	if (cn->image) {
		if (cn->lock == LOCK_EXCLUSIVE)
			rbd_lock_release(cn->image);
		else if (cn->lock == LOCK_ADVISORY)
			rbd_unlock(cn->image, RBD_LOCK_COOKIE);
		rbd_close(cn->image);
	}
	if (cn->ioctx)
		rados_ioctx_destroy(cn->ioctx);
	if (cn->cluster)
		rados_shutdown(cn->cluster);
	pthread_mutex_destroy(&cn->resize_lock);
	free(cn->name);
	free(cn);
}

static void op_release(void *handle)
{
	struct rbd_conn *cn = handle;
	bool last;

	pthread_mutex_lock(&registry_lock); /* RB3 */
	last = --cn->refs == 0;
	if (last)
		for (struct rbd_conn **pp = &registry; *pp; pp = &(*pp)->next)
			if (*pp == cn) {
				*pp = cn->next;
				break;
			}
	pthread_mutex_unlock(&registry_lock);
	if (last)
		conn_close(cn);
}

/*
 * Batched reads (lpc.h BK7: the table's version 2).  A batch of runs from
 * one thread (readahead's window, a stream's look-ahead) is in flight at
 * once, one rbd_aio_readv per run, instead of one round trip after another.
 *  RB5 op_read_batch submits every run before it waits for any.  Each
 *      run's completion callback runs on a librbd thread: it takes the
 *      run's result (then releases the completion, as librbd allows from
 *      its callback) and, under the batch's mutex, appends the run's
 *      position to the batch's `ready` list and signals.  The calling
 *      thread takes positions from the list under the same mutex and calls
 *      done for each, so a run completes as its reply arrives, on the
 *      calling thread (BK7), in the order the replies came.  The mutex
 *      orders the callback's store of res before the caller's load.
 *  RB6 The batch lives on the caller's stack: the caller returns only
 *      after it took the last position, which the last callback appended
 *      under the mutex and signalled before unlocking, and it takes the
 *      mutex once more before the batch goes: no callback still uses it
 *      (a callback touches the batch only under the mutex).  The one
 *      touch after the last unlock is glibc's own: pthread_mutex_unlock
 *      releases the word and then, if a waiter was marked, calls futex
 *      wake on its address, which may by then be the caller's next stack
 *      frame; a futex wake touches no memory, and the most it does is a
 *      spurious wake-up that glibc's waiters tolerate (POSIX lets a mutex
 *      be destroyed as soon as it is unlocked; glibc keeps that promise
 *      this way).  The slot (s->b, s->k) is read before the lock: written
 *      by the caller before it handed the completion to librbd, ordered
 *      by librbd's submission (TSan sees its mutexes; tests/rbd under
 *      TSan report nothing here).
 *  RB7 A run that starts at or past the image's end is an empty read (as
 *      op_read: librbd refuses it with -EINVAL), completed without a
 *      request; a submission that fails completes the run with its error;
 *      both go through the list like any reply.  A run that got -EINVAL
 *      because the image shrank meanwhile is an empty read too.
 */
#define RB_BATCH 128

struct rbd_rbatch;

/* One run in flight: the callback's argument. */
struct rbd_rslot {
	struct rbd_rbatch *b;
	int k;
};

struct rbd_rbatch {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct lpc_backend_run *runs;
	int nready;	       /* under lock: positions appended to ready */
	int ready[RB_BATCH];   /* under lock */
	struct rbd_rslot slot[RB_BATCH];
};

/* RB5: run k's result is in; appends k to the ready list. */
static void rbatch_post(struct rbd_rbatch *b, int k, ssize_t res)
{
	pthread_mutex_lock(&b->lock);
	b->runs[k].res = res;
	b->ready[b->nready++] = k;
	pthread_cond_signal(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

static void rbatch_cb(rbd_completion_t comp, void *arg)
{
	struct rbd_rslot *s = arg;
	ssize_t r = rbd_aio_get_return_value(comp);

	rbd_aio_release(comp);
	rbatch_post(s->b, s->k, r);
}

static void op_read_batch(void *handle, struct lpc_backend_run *runs, int nruns,
			  lpc_backend_done *done, void *arg)
{
	struct rbd_conn *cn = handle;
	struct rbd_rbatch b;
	uint64_t size = 0;
	int sr = conn_size(cn, &size);

	pthread_mutex_init(&b.lock, NULL);
	pthread_cond_init(&b.cond, NULL);
	for (int i = 0; i < nruns; i += RB_BATCH) {
		int n = nruns - i < RB_BATCH ? nruns - i : RB_BATCH, taken = 0;

		b.runs = runs + i;
		b.nready = 0;
		for (int k = 0; k < n; k++) {				/* RB5 */
			struct lpc_backend_run *run = &runs[i + k];
			rbd_completion_t comp;
			int r = sr;

			b.slot[k] = (struct rbd_rslot){ .b = &b, .k = k };
			if (r == 0 && run->off >= size) {		/* RB7 */
				rbatch_post(&b, k, 0);
				continue;
			}
			if (r == 0)
				r = rbd_aio_create_completion(&b.slot[k], rbatch_cb, &comp);
			if (r == 0) {
				r = rbd_aio_readv(cn->image, run->iov, run->iovcnt, run->off, comp);
				if (r < 0)
					rbd_aio_release(comp);
			}
			if (r < 0)
				rbatch_post(&b, k, r);
		}
		while (taken < n) {
			pthread_mutex_lock(&b.lock);
			while (b.nready == taken)
				pthread_cond_wait(&b.cond, &b.lock);
			int upto = b.nready;
			pthread_mutex_unlock(&b.lock);
			/* ready[taken..upto) are ours now: a callback only
			 * appends past nready. */
			for (; taken < upto; taken++) {
				int k = b.ready[taken];
				struct lpc_backend_run *run = &runs[i + k];

				if (run->res == -EINVAL && conn_size(cn, &size) == 0 &&
				    run->off >= size)
					run->res = 0; /* RB7: it shrank meanwhile */
				done(arg, i + k);
			}
		}
		pthread_mutex_lock(&b.lock); /* RB6 */
		pthread_mutex_unlock(&b.lock);
	}
	pthread_cond_destroy(&b.cond);
	pthread_mutex_destroy(&b.lock);
}

static const struct lpc_backend_ops rbd_ops = {
	.version = LPC_BACKEND_V2,
	.read_batch = op_read_batch,
	.read = op_read,
	.write = op_write,
	.write_batch = op_write_batch,
	.sync = op_sync,
	.truncate = op_truncate,
	.size = op_size,
	.release = op_release,
};

/* "rbd:POOL/IMAGE" into pool and image (copies; 0 or -EINVAL/-ENOMEM). */
static int parse_name(const char *name, char **pool, char **image)
{
	size_t plen = strlen(LPC_RBD_PREFIX);

	if (strncmp(name, LPC_RBD_PREFIX, plen) != 0)
		return -EINVAL;
	const char *p = name + plen, *slash = strchr(p, '/');
	if (!slash || slash == p || !slash[1] || strchr(slash + 1, '/'))
		return -EINVAL;
	*pool = strndup(p, (size_t)(slash - p));
	*image = strdup(slash + 1);
	if (!*pool || !*image) {
		free(*pool);
		free(*image);
		return -ENOMEM;
	}
	return 0;
}

/* The last "id=NAME" option of conf, if any, into *id (malloc'd, any
 * length: librados takes long ids, and one cut or dropped would connect as
 * another client, client.admin).  Return: 0 (*id NULL: none) or -ENOMEM. */
static int conf_id(const char *conf, char **id)
{
	*id = NULL;
	for (const char *p = conf; p && *p;) {
		size_t n = strcspn(p, ";\n");

		if (n > 3 && strncmp(p, "id=", 3) == 0) {
			free(*id);
			*id = strndup(p + 3, n - 3);
			if (!*id)
				return -ENOMEM;
		}
		p += n;
		if (*p)
			p++;
	}
	return 0;
}

/* Applies conf (lpc_rbd.h) to an unconnected cluster handle. */
static int conf_apply(rados_t cluster, const char *conf)
{
	int r;

	/* Ours first, so that conf can change them (not rbd_cache: last). */
	if ((r = rados_conf_set(cluster, "rados_osd_op_timeout", "30")) < 0 ||
	    (r = rados_conf_set(cluster, "rados_mon_op_timeout", "30")) < 0 ||
	    (r = rados_conf_set(cluster, "client_mount_timeout", "30")) < 0)
		return r;
	if (!conf || !*conf) {
		r = rados_conf_read_file(cluster, NULL);
		/* No conf file anywhere: CEPH_ARGS may still say everything. */
		if (r < 0 && r != -ENOENT)
			return r;
		r = rados_conf_parse_env(cluster, NULL);
	} else if (!strchr(conf, '=')) {
		r = rados_conf_read_file(cluster, conf);
	} else {
		char *copy = strdup(conf), *save = NULL;

		if (!copy)
			return -ENOMEM;
		r = 0;
		for (char *opt = strtok_r(copy, ";\n", &save); opt && r == 0;
		     opt = strtok_r(NULL, ";\n", &save)) {
			char *eq = strchr(opt, '=');

			if (!eq) {
				r = -EINVAL;
				break;
			}
			*eq = '\0';
			if (strcmp(opt, "conf") == 0)
				r = rados_conf_read_file(cluster, eq + 1);
			else if (strcmp(opt, "id") != 0)
				r = rados_conf_set(cluster, opt, eq + 1);
		}
		free(copy);
	}
	if (r < 0)
		return r;
	return rados_conf_set(cluster, "rbd_cache", "false");
}

/* 1 when the exclusive lock's owner still watches the image (alive, or
 * dead and its watch not yet timed out: the cluster cannot tell them
 * apart), 0 when there is no owner or one without a watch (dead: librbd's
 * acquire breaks its lock), or librbd's error. */
static int owner_watching(struct rbd_conn *cn)
{
	rbd_lock_mode_t mode;
	char *owners[4];
	size_t nowners = 4, nw = 64;
	rbd_image_watcher_t w[64];
	int r = rbd_lock_get_owners(cn->image, &mode, owners, &nowners);

	if (r == -ENOENT)
		return 0; /* no owner */
	if (r < 0)
		return r == -ERANGE ? 1 : r;
	r = rbd_watchers_list(cn->image, w, &nw);
	if (r == -ERANGE)
		r = 1; /* too many to list: call it watched */
	else if (r == 0) {
		for (size_t i = 0; i < nowners && r == 0; i++)
			for (size_t k = 0; k < nw && r == 0; k++)
				r = strcmp(owners[i], w[k].addr) == 0;
		rbd_watchers_list_cleanup(w, nw);
	}
	rbd_lock_get_owners_cleanup(owners, nowners);
	return r;
}

/* Takes the one-writer lock (lpc_rbd.h): 0, -EBUSY, or librbd's error. */
static int conn_lock(struct rbd_conn *cn)
{
	uint64_t features = 0;
	int r = rbd_get_features(cn->image, &features);

	if (r < 0)
		return r;
	if (features & RBD_FEATURE_EXCLUSIVE_LOCK) {
		/* An owner that still watches: -EBUSY at once.  Asking it
		 * (rbd_lock_acquire) would take the lock from a client that
		 * hands it over, and wait for a dead one's watch to time out
		 * (30 s) before failing with -ESHUTDOWN. */
		r = owner_watching(cn);
		if (r != 0)
			return r > 0 ? -EBUSY : r;
		r = rbd_lock_acquire(cn->image, RBD_LOCK_MODE_EXCLUSIVE);
		if (r == 0) {
			cn->lock = LOCK_EXCLUSIVE;
			return 0;
		}
		/* The owner refuses to hand it over (-EROFS) or is busy. */
		return r == -EROFS || r == -EBUSY || r == -EAGAIN ? -EBUSY : r;
	}
	r = rbd_lock_exclusive(cn->image, RBD_LOCK_COOKIE);
	if (r == 0) {
		cn->lock = LOCK_ADVISORY;
		return 0;
	}
	return r == -EEXIST ? -EBUSY : r;
}

static int conn_open(struct lpc_cache *c, const char *name, const char *conf, bool rw,
		     struct rbd_conn **out)
{
	char *pool = NULL, *image = NULL, *id = NULL;
	struct rbd_conn *cn = calloc(1, sizeof(*cn));
	int r;

	if (!cn)
		return -ENOMEM;
	pthread_mutex_init(&cn->resize_lock, NULL);
	cn->cache = c;
	cn->rw = rw;
	cn->refs = 1;
	cn->name = strdup(name);
	if (!cn->name) {
		r = -ENOMEM;
		goto fail;
	}
	r = parse_name(name, &pool, &image);
	if (r < 0)
		goto fail;
	r = conf_id(conf, &id);
	if (r < 0)
		goto fail;
	r = rados_create(&cn->cluster, id);
	free(id);
	id = NULL;
	if (r < 0) {
		cn->cluster = NULL;
		goto fail;
	}
	r = conf_apply(cn->cluster, conf);
	if (r < 0)
		goto fail;
	r = rados_connect(cn->cluster);
	if (r < 0)
		goto fail;
	r = rados_ioctx_create(cn->cluster, pool, &cn->ioctx);
	if (r < 0) {
		cn->ioctx = NULL;
		goto fail;
	}
	/* A full cluster refuses our writes with -ENOSPC at once rather than
	 * librados holding them to the op timeout (lpc_rbd.h). */
	rados_set_pool_full_try(cn->ioctx);
	/* A read-only connection opens a writable handle too (it never writes
	 * through it): only such a handle watches the image's header, so that
	 * its size follows another client's resize (BK5: growth is seen);
	 * rbd_open_read_only's handle keeps the size at its open.  A client
	 * whose cephx capabilities refuse the watch (-EPERM) gets that one. */
	r = rbd_open(cn->ioctx, image, &cn->image, NULL);
	if (!rw && r == -EPERM)
		r = rbd_open_read_only(cn->ioctx, image, &cn->image, NULL);
	if (r < 0) {
		cn->image = NULL;
		goto fail;
	}
	if (rw) {
		r = conn_lock(cn);
		if (r == 0)
			r = conn_size(cn, &cn->own_size); /* RB4 */
		if (r < 0)
			goto fail;
	}
	free(pool);
	free(image);
	*out = cn;
	return 0;
fail:
	free(pool);
	free(image);
	conn_close(cn);
	return r;
}

/* The connection of (c, name) for an open, shared (RB3) or new: one
 * reference in *out.  Return: 0 or lpc_rbd_open's errors. */
static int conn_get(struct lpc_cache *c, const char *name, const char *conf, bool rw,
		    struct rbd_conn **out)
{
	struct rbd_conn *cn = NULL;
	int r;

	/* A name this cache has open shares its connection (RB3); a read-only
	 * connection cannot serve a read-write open (it holds no lock). */
	/* open_lock makes the look-up and the connection one step: two opens
	 * of one name at once found no connection, both connected, and the
	 * second's lock request got -EBUSY from the first (RB3).  It is held
	 * across the connection (seconds against a slow cluster): opens are
	 * serialized, reads and writes are not. */
	pthread_mutex_lock(&open_lock);
	pthread_mutex_lock(&registry_lock);
	for (struct rbd_conn *p = registry; p; p = p->next)
		if (p->cache == c && strcmp(p->name, name) == 0 && (p->rw || !rw)) {
			p->refs++;
			cn = p;
			break;
		}
	pthread_mutex_unlock(&registry_lock);
	if (!cn) {
		r = conn_open(c, name, conf, rw, &cn);
		if (r < 0) {
			pthread_mutex_unlock(&open_lock);
			return r;
		}
		pthread_mutex_lock(&registry_lock);
		cn->next = registry;
		registry = cn;
		pthread_mutex_unlock(&registry_lock);
	}
	pthread_mutex_unlock(&open_lock);
	*out = cn;
	return 0;
}

LPC_RBD_EXPORT int lpc_rbd_open(struct lpc_cache *c, const char *name, const char *conf,
				int oflags, struct lpc_file **out)
{
	struct rbd_conn *cn = NULL;
	int acc = oflags & O_ACCMODE, r;

	if (!c || !name || !out || strlen(name) >= 4096 || (oflags & ~O_ACCMODE) ||
	    acc == (O_WRONLY | O_RDWR))
		return -EINVAL;
	r = conn_get(c, name, conf, acc != O_RDONLY, &cn);
	if (r < 0)
		return r;
	r = lpc_file_open_backend(c, name, &rbd_ops, cn, oflags, out);
	if (r < 0)
		op_release(cn); /* still ours on failure */
	return r;
}

/*
 * The SQLite VFS's opener of "rbd:POOL/IMAGE" names (lpc_rbd_sqlite_opener,
 * lpc_rbd.h; lpc_sqlite_set_opener, lpc_sqlite.h).  liblpc_sqlite calls
 * these through the table it is given: it links no librbd, and this library
 * no SQLite.  open is lpc_rbd_open's connection (conn_get: shared per
 * (cache, name), RB3; the one-writer lock of a read-write open) without
 * lpc_file_open_backend, which the VFS calls in its own copy of lpc.
 * Creating, asking for and removing images (journals) use one more
 * connection, the opener's own (`admin`, made at the first need, kept until
 * the process ends), so that a journal's existence costs no new connection.
 */
struct sq_opener {
	struct sq_opener *next; /* sq_openers */
	char *conf;
	pthread_mutex_t lock; /* the fields below */
	pthread_cond_t idle;  /* users fell to 0 after gone was set */
	rados_t admin;
	pid_t pid;      /* the process that made admin (a fork's child did not) */
	unsigned users; /* calls between sq_ioctx and sq_put, using admin */
	bool up;        /* admin connected, in process pid */
	bool gone;      /* the exit handler ran: no more connections */
};

/*
 * The admin connections at exit.  One left running when the process exits
 * meets libceph-common's static destructors: its threads (MonClient's
 * tick, the messenger's workers) use objects exit() is freeing, and the
 * process dies with SIGSEGV after main returned (seen under TSan in
 * rbd.sqlite.second: "ok" printed, then the signal; test_rbd.c's
 * image_read_end says the same of a test's own connection).  So every
 * opener is on sq_openers (never removed: an opener lives until the process
 * ends), and an atexit handler, registered at the first opener - after
 * Ceph's libraries were loaded and their destructors registered, so it
 * runs before them - shuts each admin connection down.  lpc's image
 * connections are not its business: they go with their lpc files (the
 * VFS's last close of the database, op_release); one still open at exit
 * is the application's to close, as with lpc_rbd_open.
 *
 * What the handler must not do, each seen by tests/attack_sess:
 *  - shut down a connection of another process: a fork's child inherits
 *    the handler and a copy of admin but none of its threads, and
 *    rados_shutdown there waits for them for ever (sess_forkexit).  Only
 *    the process that made admin (pid) shuts it down; a child that uses
 *    the opener makes its own (sq_ioctx drops the parent's copy unclosed:
 *    it cannot be closed from here).
 *  - shut down a connection a thread is using: exit() from one thread
 *    while another is inside an admin call aborted in Ceph's asserts
 *    (sess_exitbusy).  Each use counts itself in `users` (sq_ioctx to
 *    sq_put); the handler sets `gone` first, so no use begins after it,
 *    then waits for the uses in progress (each one admin call, a few
 *    round trips) for up to SQ_EXIT_WAIT_MS, and leaves a connection
 *    still busy after that running, as before this handler.
 *  - let the opener connect again afterwards: another exit handler that
 *    uses it would build a connection on Ceph's half-destroyed libraries
 *    (sess_afterexit: a use after free in rados_conf_read_file).  `gone`
 *    makes every later call fail with -ESHUTDOWN.
 * The handler only tries the locks: a fork's child may hold a copy of one
 * that a parent thread held at the fork, which nobody will ever release.
 */
static pthread_mutex_t sq_openers_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sq_opener *sq_openers;

#define SQ_EXIT_WAIT_MS 2000

static void sq_openers_exit(void)
{
	if (pthread_mutex_trylock(&sq_openers_lock) != 0)
		return;
	for (struct sq_opener *o = sq_openers; o; o = o->next) {
		struct timespec until;

		if (pthread_mutex_trylock(&o->lock) != 0)
			continue;
		o->gone = true;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += SQ_EXIT_WAIT_MS / 1000;
		while (o->users && o->pid == getpid() &&
		       pthread_cond_timedwait(&o->idle, &o->lock, &until) == 0)
			;
		if (o->up && o->pid == getpid() && o->users == 0) {
			rados_shutdown(o->admin);
			o->up = false;
		}
		pthread_mutex_unlock(&o->lock);
	}
	pthread_mutex_unlock(&sq_openers_lock);
}

/* The end of a use of o->admin that sq_ioctx began. */
static void sq_put(struct sq_opener *o)
{
	pthread_mutex_lock(&o->lock);
	if (--o->users == 0 && o->gone)
		pthread_cond_broadcast(&o->idle);
	pthread_mutex_unlock(&o->lock);
}

/* An io context of the opener's connection on name's pool; *image: the
 * image's name (malloc'd).  On success the caller uses the connection until
 * its sq_put (after rados_ioctx_destroy).  Return: 0 or a negative errno
 * (-EINVAL for a name that is not "rbd:POOL/IMAGE", -ENOENT for no such
 * pool, -ESHUTDOWN once the process is exiting). */
static int sq_ioctx(struct sq_opener *o, const char *name, rados_ioctx_t *io, char **image)
{
	char *pool = NULL, *id = NULL;
	int r = strlen(name) >= 4096 ? -EINVAL : parse_name(name, &pool, image);

	if (r < 0)
		return r;
	pthread_mutex_lock(&o->lock);
	if (o->gone)
		r = -ESHUTDOWN;
	else if (o->up && o->pid != getpid()) {
		/* A fork's copy, without its threads: left alone, and so are
		 * the counts of the parent's uses. */
		o->up = false;
		o->users = 0;
	}
	if (r == 0 && !o->up) {
		r = conf_id(o->conf, &id);
		if (r == 0)
			r = rados_create(&o->admin, id);
		free(id);
		if (r == 0) {
			r = conf_apply(o->admin, o->conf);
			if (r == 0)
				r = rados_connect(o->admin);
			if (r < 0) {
				rados_shutdown(o->admin);
			} else {
				o->up = true;
				o->pid = getpid();
			}
		}
	}
	if (r == 0)
		o->users++;
	pthread_mutex_unlock(&o->lock);
	if (r == 0) {
		r = rados_ioctx_create(o->admin, pool, io);
		if (r < 0)
			sq_put(o);
	}
	free(pool);
	if (r < 0) {
		free(*image);
		*image = NULL;
	}
	return r;
}

static int sq_exists(void *arg, const char *name)
{
	struct sq_opener *o = arg;
	rados_ioctx_t io;
	rbd_image_t im;
	char *image;
	int r = sq_ioctx(o, name, &io, &image);

	if (r < 0)
		return r == -ENOENT ? 0 : r;
	r = rbd_open_read_only(io, image, &im, NULL);
	if (r == 0) {
		rbd_close(im);
		r = 1;
	} else if (r == -ENOENT) {
		r = 0;
	}
	rados_ioctx_destroy(io);
	sq_put(o);
	free(image);
	return r;
}

static int sq_remove(void *arg, const char *name)
{
	struct sq_opener *o = arg;
	rados_ioctx_t io;
	char *image;
	int r = sq_ioctx(o, name, &io, &image);

	if (r < 0)
		return r;
	r = rbd_remove(io, image);
	rados_ioctx_destroy(io);
	sq_put(o);
	free(image);
	return r;
}

/* An empty image of librbd's default format and features (conf's). */
static int sq_create(struct sq_opener *o, const char *name)
{
	rados_ioctx_t io;
	char *image;
	int order = 0, r = sq_ioctx(o, name, &io, &image);

	if (r < 0)
		return r;
	r = rbd_create(io, image, 0, &order);
	rados_ioctx_destroy(io);
	sq_put(o);
	free(image);
	return r == -EEXIST ? 0 : r;
}

static int sq_open(void *arg, struct lpc_cache *c, const char *name, int oflags, int create,
		   const struct lpc_backend_ops **ops, void **handle)
{
	struct sq_opener *o = arg;
	struct rbd_conn *cn;
	bool rw = (oflags & O_ACCMODE) != O_RDONLY;
	int r;

	if (!name || strlen(name) >= 4096)
		return -EINVAL;
	r = conn_get(c, name, o->conf, rw, &cn);
	if (r == -ENOENT && create && rw) {
		r = sq_create(o, name);
		if (r == 0)
			r = conn_get(c, name, o->conf, rw, &cn);
	}
	if (r < 0)
		return r;
	*ops = &rbd_ops;
	*handle = cn;
	return 0;
}

LPC_RBD_EXPORT int lpc_rbd_sqlite_opener(const char *conf, struct lpc_sqlite_opener *out)
{
	struct sq_opener *o;

	if (!out)
		return -EINVAL;
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->conf = conf ? strdup(conf) : NULL;
	if (conf && !o->conf) {
		free(o);
		return -ENOMEM;
	}
	pthread_mutex_init(&o->lock, NULL);
	pthread_cond_init(&o->idle, NULL);
	pthread_mutex_lock(&sq_openers_lock);
	if (!sq_openers && atexit(sq_openers_exit) != 0) {
		pthread_mutex_unlock(&sq_openers_lock);
		free(o->conf);
		free(o);
		return -ENOMEM;
	}
	o->next = sq_openers;
	sq_openers = o;
	pthread_mutex_unlock(&sq_openers_lock);
	memset(out, 0, sizeof(*out));
	out->open = sq_open;
	out->exists = sq_exists;
	out->remove = sq_remove;
	out->arg = o;
	return 0;
}
