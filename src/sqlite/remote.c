/* SPDX-License-Identifier: MIT */
/*
 * remote.c - database names of another storage (lpc_sqlite_set_opener,
 * lpc_sqlite.h): a table of prefixes and their openers, the xOpen, xDelete
 * and xAccess of such names, and the io methods of their journals.
 *
 * The main database of such a name is an lpc file over the opener's backend
 * (lpc_file_open_backend in the VFS's cache), with file.c's methods in
 * exclusive coherence (lpcs_remote_io_methods: node->remote, no kernel file,
 * no OFD lock, no shared memory).  Why exclusive: the VFS has no lock that
 * another process sees (there is no kernel file to lock); the opener keeps
 * other processes out (liblpc_rbd: the image's exclusive lock, held while
 * the object is open), and SQLite's locks among this process's connections
 * are file.c's SL1-SL4.  Each journal (rollback journal, WAL,
 * super-journal) is the opener's object of that name, read and written
 * through the opener's operations directly, not through lpc:
 *  RJ1 Each xWrite is on the storage when it returns (the backend's write
 *     waited for), as a unix VFS write is in the kernel: a process killed
 *     after it loses nothing of it.  So the order SQLite relies on against
 *     a kill holds: a journal record is out before any database page it
 *     protects can be (the database's pages leave lpc only by a writeback,
 *     which follows the xWrite of the record), also with synchronous=OFF;
 *     and a WAL frame is out when the commit returns (journal_mode=WAL at
 *     synchronous=NORMAL does not sync the WAL at commit).  Cached in lpc,
 *     a journal's pages could reach the storage after the database's
 *     (eviction, the flusher), or die with the process.
 *  RJ2 xSync is the backend's sync (durable: an OS or cluster crash), as
 *     fdatasync for unix.
 *  RJ3 xDelete is the opener's remove; xAccess its exists, after registry.c
 *     XJ1 (the node's own journals: asked once, then known from this
 *     process's opens and removes).
 * Journals are written once and read back only for a rollback or by WAL
 * readers, so lpc's pages would hold nothing worth keeping (file.c says the
 * same of unix journals).  Their cost is one round trip to the storage per
 * xWrite: locking_mode=EXCLUSIVE with journal_mode=PERSIST or TRUNCATE
 * saves the create, open and remove of a journal per transaction.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/uio.h>

#include "sqlite_int.h"

#define OPENERS_MAX 8
#define PREFIX_MAX 16 /* with the NUL */

static pthread_mutex_t openers_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char prefix[PREFIX_MAX];
	struct lpc_sqlite_opener op;
} openers[OPENERS_MAX]; /* under openers_lock */
static _Atomic int openers_n; /* entries in use; written under openers_lock */
/* Prefixes whose opener was removed (lpc_sqlite_set_opener(prefix, NULL))
 * and not set again, so that a name of one, which now goes to the unix VFS
 * as a local path and fails there with a bare "disk I/O error" or "unable
 * to open database file" (a connection still open on such a database
 * creating its journal), is logged with the reason.  Under openers_lock;
 * removed_n is read without it only to skip the lock. */
static char removed[OPENERS_MAX][PREFIX_MAX];
static _Atomic int removed_n;

bool lpcs_opener_find(const char *zName, struct lpc_sqlite_opener *out)
{
	char gone[PREFIX_MAX] = "";
	bool found = false;

	/* No opener set or removed (the usual case): no lock on every open. */
	if (!zName || (!atomic_load_explicit(&openers_n, memory_order_relaxed) &&
		       !atomic_load_explicit(&removed_n, memory_order_relaxed)))
		return false;
	pthread_mutex_lock(&openers_lock);
	for (int i = 0; i < atomic_load_explicit(&openers_n, memory_order_relaxed) && !found; i++) {
		size_t len = strlen(openers[i].prefix);

		if (!strncmp(zName, openers[i].prefix, len)) {
			*out = openers[i].op;
			found = true;
		}
	}
	for (int i = 0; i < atomic_load_explicit(&removed_n, memory_order_relaxed) && !found; i++)
		if (!strncmp(zName, removed[i], strlen(removed[i]))) {
			memcpy(gone, removed[i], sizeof(gone));
			break;
		}
	pthread_mutex_unlock(&openers_lock);
	if (*gone)
		sqlite3_log(SQLITE_CANTOPEN,
			    "lpc_sqlite: %s: no opener for prefix \"%s\" (removed by "
			    "lpc_sqlite_set_opener(\"%s\", NULL)): taken as a local path",
			    zName, gone, gone);
	return found;
}

/* Under openers_lock: prefix's entry in removed[] added (gone) or dropped. */
static void removed_mark(const char *prefix, bool gone)
{
	int n = atomic_load_explicit(&removed_n, memory_order_relaxed), i;

	for (i = 0; i < n; i++)
		if (!strcmp(removed[i], prefix))
			break;
	if (gone && i == n && n < OPENERS_MAX) {
		memcpy(removed[n], prefix, strlen(prefix) + 1);
		atomic_store_explicit(&removed_n, n + 1, memory_order_relaxed);
	} else if (!gone && i < n) {
		memcpy(removed[i], removed[n - 1], PREFIX_MAX);
		atomic_store_explicit(&removed_n, n - 1, memory_order_relaxed);
	}
}

LPCS_EXPORT int lpc_sqlite_set_opener(const char *prefix, const struct lpc_sqlite_opener *opener)
{
	int rc, n, i;

	if (!prefix || !*prefix || strlen(prefix) >= PREFIX_MAX ||
	    (opener && (!opener->open || !opener->exists || !opener->remove)))
		return SQLITE_MISUSE;
	rc = lpc_sqlite_register(0);
	if (rc != SQLITE_OK)
		return rc;
	pthread_mutex_lock(&openers_lock);
	n = atomic_load_explicit(&openers_n, memory_order_relaxed);
	for (i = 0; i < n; i++)
		if (!strcmp(openers[i].prefix, prefix))
			break;
	if (opener && (i < n || n < OPENERS_MAX))
		removed_mark(prefix, false);
	if (!opener) {
		if (i < n) {
			openers[i] = openers[n - 1];
			atomic_store_explicit(&openers_n, n - 1, memory_order_relaxed);
			removed_mark(prefix, true);
		}
	} else if (i < n) {
		openers[i].op = *opener;
	} else if (n == OPENERS_MAX) {
		rc = SQLITE_FULL;
	} else {
		memcpy(openers[n].prefix, prefix, strlen(prefix) + 1);
		openers[n].op = *opener;
		atomic_store_explicit(&openers_n, n + 1, memory_order_relaxed);
	}
	pthread_mutex_unlock(&openers_lock);
	return rc;
}

/* A journal, WAL or super-journal of an opener (RJ1-RJ3). */
struct lpcs_rfile {
	sqlite3_file base;
	const struct lpc_backend_ops *ops;
	void *handle;
	struct lpc_sqlite_opener op; /* for delete-on-close */
	const char *name;	     /* SQLite's, valid until xClose */
	bool delete_on_close;
};

static inline struct lpcs_rfile *R(sqlite3_file *f)
{
	return (struct lpcs_rfile *)f;
}

/* The opener's errno as xOpen's answer, logged (the one line that says why
 * "unable to open database file").  A full storage (-ENOSPC, -EDQUOT: the
 * cluster cannot hold the journal's new image) is SQLITE_FULL, "database or
 * disk is full", as the unix VFS says of a full disk: the pager fails the
 * statement with it and the caller knows to free space, not to look for a
 * missing file. */
static int open_error(const char *zName, int r)
{
	int rc = r == -EBUSY			? SQLITE_BUSY
		 : r == -ENOMEM			? SQLITE_NOMEM
		 : r == -ENOSPC || r == -EDQUOT ? SQLITE_FULL
						: SQLITE_CANTOPEN;

	sqlite3_log(rc, "lpc_sqlite: cannot open %s: %s%s", zName, strerror(-r),
		    r == -EBUSY ? " (another client holds it)" : "");
	return rc;
}

static int r_close(sqlite3_file *f)
{
	struct lpcs_rfile *p = R(f);

	if (p->ops->release)
		p->ops->release(p->handle);
	if (p->delete_on_close) {
		int r = p->op.remove(p->op.arg, p->name);

		lpcs_track_set(p->name, r == 0 || r == -ENOENT ? LPCS_J_ABSENT : LPCS_J_UNKNOWN);
	}
	p->base.pMethods = NULL;
	return SQLITE_OK;
}

static int r_read(sqlite3_file *f, void *buf, int amt, sqlite3_int64 off)
{
	struct lpcs_rfile *p = R(f);
	size_t done = 0;

	while (done < (size_t)amt) {
		struct iovec iov = { (char *)buf + done, (size_t)amt - done };
		ssize_t n = p->ops->read(p->handle, &iov, 1, (uint64_t)off + done);

		if (n < 0)
			return lpcs_errcode(n, SQLITE_IOERR_READ);
		if (n == 0)
			break;
		done += (size_t)n;
	}
	if (done == (size_t)amt)
		return SQLITE_OK;
	memset((char *)buf + done, 0, (size_t)amt - done);
	return SQLITE_IOERR_SHORT_READ;
}

static int r_write(sqlite3_file *f, const void *buf, int amt, sqlite3_int64 off)
{
	struct lpcs_rfile *p = R(f);
	size_t done = 0;

	while (done < (size_t)amt) { /* RJ1 */
		struct iovec iov = { (char *)buf + done, (size_t)amt - done };
		ssize_t n = p->ops->write(p->handle, &iov, 1, (uint64_t)off + done);

		if (n <= 0)
			return lpcs_errcode(n < 0 ? n : -EIO, SQLITE_IOERR_WRITE);
		done += (size_t)n;
	}
	return SQLITE_OK;
}

static int r_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	struct lpcs_rfile *p = R(f);
	int r = p->ops->truncate ? p->ops->truncate(p->handle, (uint64_t)size) : -EOPNOTSUPP;

	return r < 0 ? lpcs_errcode(r, SQLITE_IOERR_TRUNCATE) : SQLITE_OK;
}

static int r_sync(sqlite3_file *f, int flags)
{
	struct lpcs_rfile *p = R(f);
	int r = p->ops->sync ? p->ops->sync(p->handle) : 0; /* RJ2 */

	return r < 0 ? lpcs_errcode(r, SQLITE_IOERR_FSYNC) : SQLITE_OK;
}

static int r_file_size(sqlite3_file *f, sqlite3_int64 *pSize)
{
	struct lpcs_rfile *p = R(f);
	uint64_t s = 0;
	int r = p->ops->size(p->handle, &s);

	if (r < 0)
		return lpcs_errcode(r, SQLITE_IOERR_FSTAT);
	*pSize = (sqlite3_int64)s;
	return SQLITE_OK;
}

/* A journal takes no lock of its own (SQLite locks the database only). */
static int r_lock(sqlite3_file *f, int level)
{
	return SQLITE_OK;
}

static int r_check_reserved(sqlite3_file *f, int *pResOut)
{
	*pResOut = 0;
	return SQLITE_OK;
}

static int r_file_control(sqlite3_file *f, int op, void *pArg)
{
	return SQLITE_NOTFOUND;
}

static int r_sector_size(sqlite3_file *f)
{
	return 4096;
}

static int r_device_characteristics(sqlite3_file *f)
{
	return 0;
}

static const sqlite3_io_methods r_methods = {
	.iVersion = 1,
	.xClose = r_close,
	.xRead = r_read,
	.xWrite = r_write,
	.xTruncate = r_truncate,
	.xSync = r_sync,
	.xFileSize = r_file_size,
	.xLock = r_lock,
	.xUnlock = r_lock,
	.xCheckReservedLock = r_check_reserved,
	.xFileControl = r_file_control,
	.xSectorSize = r_sector_size,
	.xDeviceCharacteristics = r_device_characteristics,
};

int lpcs_remote_open(const struct lpc_sqlite_opener *op, const char *zName, sqlite3_file *file,
		     int flags, int *pOutFlags)
{
	const struct lpc_backend_ops *ops = NULL;
	void *h = NULL;
	struct lpc_cache *c;
	bool main_db = flags & SQLITE_OPEN_MAIN_DB;
	int create = !!(flags & SQLITE_OPEN_CREATE), rc, r;
	int oflags = O_RDWR;

	file->pMethods = NULL;
	rc = lpcs_cache_get(zName, &c);
	if (rc != SQLITE_OK)
		return rc;
	/* Read-write even when SQLite asks read-only, so that the opener's
	 * lock keeps other writers out while lpc caches the object (a
	 * read-only open takes no lock: another process could change what lpc
	 * holds); read-only only where the storage refuses writes. */
	r = op->open(op->arg, c, zName, O_RDWR, create, &ops, &h);
	if ((r == -EPERM || r == -EACCES || r == -EROFS) && !(flags & SQLITE_OPEN_READWRITE)) {
		oflags = O_RDONLY;
		r = op->open(op->arg, c, zName, O_RDONLY, 0, &ops, &h);
	}
	if (r < 0) {
		if (!main_db)
			lpcs_track_set(zName, LPCS_J_UNKNOWN); /* XJ2 */
		return open_error(zName, r);
	}
	if (pOutFlags)
		*pOutFlags = oflags == O_RDWR ? (flags & ~SQLITE_OPEN_READONLY) | SQLITE_OPEN_READWRITE
					      : (flags & ~SQLITE_OPEN_READWRITE) | SQLITE_OPEN_READONLY;
	if (!main_db) {
		struct lpcs_rfile *p = R(file);

		memset(p, 0, sizeof(*p));
		p->ops = ops;
		p->handle = h;
		p->op = *op;
		p->name = zName;
		p->delete_on_close = flags & SQLITE_OPEN_DELETEONCLOSE;
		p->base.pMethods = &r_methods;
		lpcs_track_set(zName, LPCS_J_PRESENT); /* XJ2 */
		return SQLITE_OK;
	}

	struct lpcs_file *p = (struct lpcs_file *)file;

	memset(p, 0, sizeof(*p));
	r = lpc_file_open_backend(c, zName, ops, h, oflags, &p->lf);
	if (r < 0) {
		if (ops->release)
			ops->release(h); /* still ours on failure */
		return open_error(zName, r);
	}
	rc = lpcs_node_get(p->lf, lpc_filemap_size_seen(p->lf, 0), zName, true, true, &p->node);
	if (rc != SQLITE_OK) {
		lpc_file_close(p->lf);
		return rc;
	}
	p->excl = true;
	p->base.pMethods = &lpcs_remote_io_methods;
	return SQLITE_OK;
}

int lpcs_remote_delete(const struct lpc_sqlite_opener *op, const char *zName)
{
	int r = op->remove(op->arg, zName); /* RJ3 */

	if (r == -ENOENT)
		return SQLITE_IOERR_DELETE_NOENT;
	return r < 0 ? lpcs_errcode(r, SQLITE_IOERR_DELETE) : SQLITE_OK;
}

int lpcs_remote_access(const struct lpc_sqlite_opener *op, const char *zName, int *pResOut)
{
	int r = op->exists(op->arg, zName); /* RJ3 */

	if (r < 0) {
		*pResOut = 0;
		return lpcs_errcode(r, SQLITE_IOERR_ACCESS);
	}
	*pResOut = r > 0;
	return SQLITE_OK;
}
