/* SPDX-License-Identifier: MIT */
/*
 * registry.c - the process's one lpc_cache, and one node per open database
 * file, shared by every connection and thread of the process.
 *
 * The cache is created by the first open through the VFS and lives until
 * the process exits (never destroyed: a connection may be opened at any
 * time, and destroying it would close lpc's descriptors, which drops the
 * process's POSIX locks on those files; see file.c).  Its budget:
 * lpc_cache_mb=N in the first open's URI, else LPC_SQLITE_CACHE_MB, else
 * 256 MiB; its page size LPC_SQLITE_PAGE_KB (KiB, default 4).
 *
 * Nodes: lpc_file_open returns the same lpc_file for every open of a file
 * (A.5), so the node is found by that pointer; it holds the coherence state
 * of file.c and lpc's size of the file.  Lock order: reg_lock -> node->lock.
 *
 * Exclusive coherence (lpc_coherence=exclusive, file.c says what it is).
 * The node that is created in it opens the database once more and takes an
 * OFD write lock (F_OFD_SETLK) on SQLite's whole lock range, PENDING_BYTE
 * (0x40000000) through the last SHARED byte (512 bytes), and keeps it
 * until its last connection closes.  Another process's SQLite (unix VFS,
 * or lpc in detect mode) asks for POSIX locks on those bytes, which
 * conflict with an OFD lock: every lock it asks for is SQLITE_BUSY.
 * Another process in exclusive mode fails here, at open, with SQLITE_BUSY
 * and a line through sqlite3_log().  (An OFD lock belongs to the open file
 * description, not the process: closing unix's or lpc's descriptors of the
 * file does not drop it, and a connection of this process through another
 * VFS is refused like another process.)  A read-only file gets a read lock:
 * nobody can write it then.
 *
 * Journal and WAL existence, for xAccess (the pager asks at every read
 * transaction in rollback mode whether "-journal" and "-wal" exist: two
 * system calls).  With the lock held, no other process can create or
 * delete them (SQLite creates a journal only under RESERVED, a WAL under
 * SHARED), so this process's own xOpen/xDelete through the VFS are the
 * only changes:
 *  XJ1  xAccess(EXISTS) of a tracked name answers from jstate; UNKNOWN (a
 *      new node: a crashed process may have left a hot journal) asks the
 *      kernel, under reg_lock, and records the answer.
 *  XJ2  xOpen of it that succeeds: PRESENT (after unix's open returns; a
 *      racing XJ1 that still sees ABSENT runs while the creator holds
 *      RESERVED, when the journal is not hot anyway).
 *  XJ3  xDelete: ABSENT when unix's unlink succeeded or found nothing,
 *      after it (the deleter holds EXCLUSIVE or, for a WAL, is the last
 *      connection: no reader asks in between); any failure: UNKNOWN.
 * The same holds for an opener's object (lpc_sqlite_set_opener, remote.c):
 * its node is exclusive by the opener's lock (no OFD lock), XJ1 asks the
 * opener instead of the kernel, XJ2 and XJ3 follow its opens and removes.
 * A name tracked by no node goes to the kernel (or its opener).  reg_nexcl lets xAccess
 * skip reg_lock while there is no exclusive node.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sqlite_int.h"

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lpc_cache *_Atomic reg_cache;
static struct lpcs_node *reg_nodes; /* under reg_lock */
static _Atomic unsigned reg_nexcl;  /* exclusive nodes; written under reg_lock */

/* SQLite's lock bytes (os.h): PENDING_BYTE, RESERVED_BYTE, SHARED_FIRST,
 * SHARED_SIZE = 510: 512 bytes from PENDING_BYTE. */
#define SQLITE_LOCK_FIRST 0x40000000
#define SQLITE_LOCK_LEN 512
size_t lpcs_page_size = 4096;

static uint64_t env_u64(const char *name, uint64_t def, uint64_t lo, uint64_t hi)
{
	const char *s = getenv(name);
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return def;
	return v;
}

int lpcs_cache_get(const char *zName, struct lpc_cache **out)
{
	struct lpc_cache *c = atomic_load_explicit(&reg_cache, memory_order_acquire);
	struct lpc_config cfg;
	sqlite3_int64 mb;
	int rc;

	if (c) {
		*out = c;
		return SQLITE_OK;
	}
	pthread_mutex_lock(&reg_lock);
	c = atomic_load_explicit(&reg_cache, memory_order_relaxed);
	if (!c) {
		lpc_config_init(&cfg);
		mb = (sqlite3_int64)env_u64("LPC_SQLITE_CACHE_MB", 256, 1, 1u << 20);
		if (zName)
			mb = sqlite3_uri_int64(zName, "lpc_cache_mb", mb);
		if (mb < 1)
			mb = 1;
		cfg.cache_bytes = (size_t)mb << 20;
		cfg.page_size = (size_t)env_u64("LPC_SQLITE_PAGE_KB", 4, 1, 64) << 10;
		if (cfg.page_size & (cfg.page_size - 1))
			cfg.page_size = 4096;
		lpcs_page_size = cfg.page_size;
		/* No writeback by age: the VFS writes every dirty page back at
		 * each commit point (lpc_sqlite(7) DURABILITY), so age adds
		 * nothing; and a process whose lpc never passes the background
		 * threshold then runs no flusher thread, keeping glibc's
		 * single-thread paths for SQLite's mutexes (a small program's
		 * 75,000 inserts took 0.91x unix's time with the thread). */
		cfg.dirty_expire_ms = LPC_DIRTY_EXPIRE_NEVER;
		rc = lpc_cache_create(&cfg, &c);
		if (rc < 0)
			c = NULL;
		else
			atomic_store_explicit(&reg_cache, c, memory_order_release);
	}
	pthread_mutex_unlock(&reg_lock);
	*out = c;
	return c ? SQLITE_OK : SQLITE_NOMEM;
}

struct lpc_cache *lpcs_cache_peek(void)
{
	return atomic_load_explicit(&reg_cache, memory_order_acquire);
}

/* Takes the OFD lock for n (exclusive coherence) and sets lpc's view of the
 * file from the kernel's.  Caller holds reg_lock.  Return: SQLite code. */
static int excl_start(struct lpcs_node *n, const char *zName)
{
	struct flock fl = { .l_whence = SEEK_SET, .l_start = SQLITE_LOCK_FIRST,
			    .l_len = SQLITE_LOCK_LEN };
	struct stat st;
	size_t len = strlen(zName);
	int fd, rc;

	fl.l_type = F_WRLCK;
	fd = open(zName, O_RDWR | O_CLOEXEC);
	if (fd < 0 && (errno == EACCES || errno == EROFS || errno == EPERM)) {
		fd = open(zName, O_RDONLY | O_CLOEXEC);
		fl.l_type = F_RDLCK;
	}
	if (fd < 0)
		return errno == ENOMEM ? SQLITE_NOMEM : SQLITE_CANTOPEN;
	if (fcntl(fd, F_OFD_SETLK, &fl) < 0) {
		int e = errno;

		close(fd);
		if (e == EAGAIN || e == EACCES) {
			sqlite3_log(SQLITE_BUSY,
				    "lpc_sqlite: %s is in use by another process or VFS "
				    "(lpc_coherence=exclusive refuses to share it)",
				    zName);
			return SQLITE_BUSY;
		}
		return SQLITE_CANTOPEN;
	}
	if (fstat(fd, &st) < 0) {
		close(fd);
		return SQLITE_CANTOPEN;
	}
	n->jname[0] = malloc(len + sizeof("-journal"));
	n->jname[1] = malloc(len + sizeof("-wal"));
	if (!n->jname[0] || !n->jname[1]) {
		close(fd);
		free(n->jname[0]);
		free(n->jname[1]);
		return SQLITE_NOMEM;
	}
	memcpy(n->jname[0], zName, len);
	memcpy(n->jname[0] + len, "-journal", sizeof("-journal"));
	memcpy(n->jname[1], zName, len);
	memcpy(n->jname[1] + len, "-wal", sizeof("-wal"));
	/* lf may have outlived an earlier node (another user of the same
	 * lpc_file): its pages may predate the lock.  A fresh lf has none. */
	lpc_invalidate(n->lf, 0, 0);
	if (fl.l_type == F_WRLCK) {
		rc = lpc_truncate(n->lf, (uint64_t)st.st_size);
		if (rc < 0 && rc != -EBADF) {
			close(fd);
			free(n->jname[0]);
			free(n->jname[1]);
			return lpcs_errcode(rc, SQLITE_IOERR_TRUNCATE);
		}
	}
	atomic_store_explicit(&n->size, (uint64_t)st.st_size, memory_order_relaxed);
	n->ofd = fd;
	n->excl = true;
	atomic_fetch_add_explicit(&reg_nexcl, 1, memory_order_relaxed);
	return SQLITE_OK;
}

/* An opener's object (remote.c): exclusive by the opener's own lock, no OFD
 * lock; lpc's size is the object's (the opener's size at lf's open).
 * Caller holds reg_lock.  Return: SQLite code. */
static int remote_start(struct lpcs_node *n, const char *zName)
{
	size_t len = strlen(zName);

	n->jname[0] = malloc(len + sizeof("-journal"));
	n->jname[1] = malloc(len + sizeof("-wal"));
	if (!n->jname[0] || !n->jname[1]) {
		free(n->jname[0]);
		free(n->jname[1]);
		return SQLITE_NOMEM;
	}
	memcpy(n->jname[0], zName, len);
	memcpy(n->jname[0] + len, "-journal", sizeof("-journal"));
	memcpy(n->jname[1], zName, len);
	memcpy(n->jname[1] + len, "-wal", sizeof("-wal"));
	n->remote = true;
	n->excl = true;
	atomic_fetch_add_explicit(&reg_nexcl, 1, memory_order_relaxed);
	return SQLITE_OK;
}

int lpcs_node_get(struct lpc_file *lf, uint64_t size, const char *zName, bool excl, bool remote,
		  struct lpcs_node **out)
{
	struct lpcs_node *n;
	int rc = SQLITE_OK;

	pthread_mutex_lock(&reg_lock);
	for (n = reg_nodes; n; n = n->next)
		if (n->lf == lf)
			break;
	if (n) {
		n->refs++;
	} else if ((n = calloc(1, sizeof(*n)))) {
		n->lf = lf;
		n->refs = 1;
		n->ofd = -1;
		atomic_init(&n->size, size);
		n->path = zName ? strdup(zName) : NULL;
		rc = !n->path ? SQLITE_NOMEM :
		     remote   ? remote_start(n, zName) :
		     excl     ? excl_start(n, zName) :
				SQLITE_OK;
		if (rc != SQLITE_OK) {
			free(n->path);
			free(n);
			n = NULL;
		} else {
			pthread_mutex_init(&n->lock, NULL);
			n->next = reg_nodes;
			reg_nodes = n;
		}
	} else {
		rc = SQLITE_NOMEM;
	}
	pthread_mutex_unlock(&reg_lock);
	*out = n;
	return rc;
}

void lpcs_node_put(struct lpcs_node *n)
{
	struct lpcs_node **pp;

	pthread_mutex_lock(&reg_lock);
	if (--n->refs) {
		pthread_mutex_unlock(&reg_lock);
		return;
	}
	for (pp = &reg_nodes; *pp != n; pp = &(*pp)->next)
		;
	*pp = n->next;
	if (n->excl) {
		/* Under reg_lock: a new open of the file here waits, then takes
		 * the lock afresh (our descriptor would refuse it otherwise). */
		if (n->ofd >= 0)
			close(n->ofd);
		atomic_fetch_sub_explicit(&reg_nexcl, 1, memory_order_relaxed);
	}
	pthread_mutex_unlock(&reg_lock);
	free(n->jname[0]);
	free(n->jname[1]);
	free(n->path);
	pthread_mutex_destroy(&n->lock);
	free(n);
}

/* The exclusive node and kind (0 journal, 1 WAL) of zName; reg_lock held. */
static struct lpcs_node *track_find(const char *zName, int *kind)
{
	for (struct lpcs_node *n = reg_nodes; n; n = n->next) {
		if (!n->excl)
			continue;
		for (int k = 0; k < 2; k++) {
			if (!strcmp(n->jname[k], zName)) {
				*kind = k;
				return n;
			}
		}
	}
	return NULL;
}

/* Cheap filter before reg_lock: an exclusive node exists and the name ends
 * as a journal or WAL does. */
static bool track_maybe(const char *zName)
{
	size_t len;

	if (!zName || !atomic_load_explicit(&reg_nexcl, memory_order_relaxed))
		return false;
	len = strlen(zName);
	return (len > 8 && !strcmp(zName + len - 8, "-journal")) ||
	       (len > 4 && !strcmp(zName + len - 4, "-wal"));
}

bool lpcs_track_access(const char *zName, int *res, int *rc)
{
	struct lpcs_node *n;
	int kind;

	if (!track_maybe(zName))
		return false;
	pthread_mutex_lock(&reg_lock);
	n = track_find(zName, &kind);
	if (n) {
		if (n->jstate[kind] == LPCS_J_UNKNOWN) { /* XJ1: ask once */
			*rc = lpcs_raw_exists(zName, res);
			if (*rc == SQLITE_OK)
				n->jstate[kind] = *res ? LPCS_J_PRESENT : LPCS_J_ABSENT;
		} else {
			*res = n->jstate[kind] == LPCS_J_PRESENT;
			*rc = SQLITE_OK;
		}
	}
	pthread_mutex_unlock(&reg_lock);
	return n != NULL;
}

void lpcs_track_set(const char *zName, int state)
{
	struct lpcs_node *n;
	int kind;

	if (!track_maybe(zName))
		return;
	pthread_mutex_lock(&reg_lock);
	n = track_find(zName, &kind);
	if (n)
		n->jstate[kind] = state;
	pthread_mutex_unlock(&reg_lock);
}

LPCS_EXPORT int lpc_sqlite_stats(struct lpc_stats *out)
{
	struct lpc_cache *c = lpcs_cache_peek();

	if (!out)
		return SQLITE_MISUSE;
	memset(out, 0, sizeof(*out));
	if (c)
		lpc_stats(c, out);
	return SQLITE_OK;
}
