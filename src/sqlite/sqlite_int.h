/* SPDX-License-Identifier: MIT */
/*
 * sqlite_int.h - the parts of the SQLite VFS "lpc" (liblpc_sqlite) and what
 * they share.  One job per file:
 *   vfs.c       the sqlite3_vfs: xOpen, the rest forwarded to "unix";
 *               lpc_sqlite_register() and the extension's entry point
 *   file.c      the main database file's io methods, and the coherence
 *               checks with other processes (the protocol is told there)
 *   remote.c    names of an opener's storage (lpc_sqlite_set_opener): the
 *               prefix table, and the journals' and WAL's files, read and
 *               written through the opener's operations directly
 *   registry.c  the process-wide lpc_cache and one node per lpc_file,
 *               shared by every connection to that file; in exclusive
 *               coherence, the node's OFD lock and what it knows of the
 *               file's journal and WAL (XJ1-XJ3)
 *   errors.c    lpc's negative errno -> SQLite result code
 *
 * Lock order: registry lock (registry.c) -> node->lock.  Neither is held
 * across an lpc call that waits for I/O except node->lock around the
 * coherence checks' lpc_invalidate/lpc_truncate/lpc_fsync (file.c says why).
 */
#ifndef LPC_SQLITE_SQLITE_INT_H
#define LPC_SQLITE_SQLITE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <sqlite3.h>

#include <lpc/lpc.h>
#include <lpc/lpc_sqlite.h>

/* lpc's write-back of every dirty page of f without the fdatasync
 * (writeback/writeback.h): what the last close runs.  Not in lpc.h; this
 * library carries its own copy of lpc (CMakeLists.txt), or links liblpc.a.
 * Return: 0 or negative errno, reported once as lpc_fsync reports it. */
int lpc_wb_flush_file(struct lpc_file *f);

/* The symbols of lpc_sqlite.h and the extension's entry point. */
#define LPCS_EXPORT __attribute__((visibility("default")))

/*
 * What the connections of one process know about one database file, shared
 * by every connection whose lpc_file_open returned the same lpc_file (A.5:
 * one lpc_file per file and cache).  Fields under `lock` unless said.
 */
struct lpcs_node {
	struct lpcs_node *next; /* registry list; under the registry lock */
	struct lpc_file *lf;    /* constant */
	unsigned refs;          /* connections; under the registry lock */
	pthread_mutex_t lock;
	unsigned nshared;      /* connections holding >= SHARED on the file */
	bool ver_known;        /* ver is what the kernel's file holds */
	unsigned char ver[16]; /* bytes 24..39 of the file (change counter ...) */
	bool wal_known;        /* wal_* is the WAL state lpc's pages reflect */
	bool wal_file;         /* bytes 18, 19 said WAL at the last SQ2 (SQ9) */
	/* SQ3d (file.c): the file as the last SHARED of the process left it,
	 * while wal_known; id_known: taken, and old enough to be trusted. */
	bool id_known;
	uint64_t id_dev, id_ino, id_size;
	int64_t id_ctime_ns;
	char *path;            /* the database's full path; constant */
	uint32_t wal_salt[2];  /* wal-index header aSalt (raw) */
	uint32_t wal_backfill; /* nBackfill */
	/* SQ3 (file.c): a connection of this process holds WAL_CKPT_LOCK and
	 * its check at the lock ran (SQ3a): the wal-index may move, by this
	 * checkpoint or a restart, without the file changing behind lpc. */
	bool ckpt_mine;
	/* A connection of this process holds WAL_WRITE_LOCK (one at a time in
	 * the process: unix's shm locks exclude among its connections too);
	 * w_*: the wal-index's aSalt and mxFrame when it took it (SQ3c). */
	bool write_mine;
	uint32_t w_salt[2], w_mxframe;
	/* lpc's size of the file as the VFS keeps it (xFileSize); written by
	 * the connection that holds the write lock, read by any (relaxed: the
	 * file lock orders them). */
	_Atomic uint64_t size;
	/* SQ1: xWrite/xTruncate calls begun (raised before lpc's call), and
	 * the count a completed write-back or xSync covered (raised after it
	 * returned 0): equal when nothing of ours is pending or in flight.
	 * Writes and write-backs come from the connection holding the lock
	 * that lets it write, one after the other. */
	_Atomic uint64_t wgen, wdone;
	_Atomic int maybe_grown; /* another process may have grown the file
				  * beyond lpc's size (WAL checkpoints): a short
				  * lpc_pread is completed from the kernel */
	/* Exclusive coherence (lpc_coherence=exclusive; file.c, "Exclusive
	 * coherence").  excl, ofd, jname: constant from creation. */
	bool excl;
	int ofd;              /* holds the OFD lock on SQLite's lock bytes */
	char *jname[2];       /* the path + "-journal", + "-wal" */
	int jstate[2];        /* LPCS_J_*; under the registry lock (XJ1-XJ3) */
	int xlevel;           /* the highest SQLite lock any connection here
			       * holds (SL1-SL4); under lock */
	unsigned xshared;     /* connections holding >= SHARED; under lock */
	bool remote;          /* an opener's object (remote.c): no kernel file,
			       * no OFD lock (ofd -1); constant */
};

/* What the registry knows of a journal or WAL of an exclusive node. */
enum { LPCS_J_UNKNOWN, LPCS_J_ABSENT, LPCS_J_PRESENT };

/* The main database file as SQLite sees it; `real`, the unix VFS's file of
 * the same path (locks and shared memory), follows it in the same block. */
struct lpcs_file {
	sqlite3_file base;
	struct lpcs_node *node;
	struct lpc_file *lf;
	sqlite3_file *real; /* NULL for an opener's object (remote.c) */
	int lock;        /* this connection's SQLite lock level */
	bool excl;       /* node->excl (copied: read on every method) */
	volatile void *shm0; /* region 0 of the wal-index once mapped */
	bool ckpt_held;  /* holds WAL_CKPT_LOCK */
	bool ckpt_kept;  /* ... kept after a failed write-back (SQ1f), SQLite
			  * believing it released */
	bool write_held; /* holds WAL_WRITE_LOCK (node->write_mine) */
};

/* registry.c */
/* The process's cache, created on the first call with the configuration of
 * lpc_sqlite.h (zName: the first open's URI, for lpc_cache_mb=).
 * Return: SQLITE_OK with *out; SQLITE_NOMEM or SQLITE_CANTOPEN. */
int lpcs_cache_get(const char *zName, struct lpc_cache **out);
/* The cache's page size (set before the first file is opened). */
extern size_t lpcs_page_size;
/* The cache if it exists, else NULL (stats, tests). */
struct lpc_cache *lpcs_cache_peek(void);
/* The node of lf, created with refs 1 (size: initial size) or referenced.
 * A node is created in exclusive coherence when excl (the first opener's
 * choice; later connections follow the node's mode): it takes the OFD lock
 * on zName (the main database's full path) and drops any page lf has.
 * Return: SQLITE_OK with *out; SQLITE_NOMEM; SQLITE_BUSY when another
 * process holds the file (logged); SQLITE_CANTOPEN. */
/* remote: an opener's object (remote.c): exclusive (the opener keeps other
 * processes out), with no kernel file and no OFD lock. */
int lpcs_node_get(struct lpc_file *lf, uint64_t size, const char *zName, bool excl, bool remote,
		  struct lpcs_node **out);
void lpcs_node_put(struct lpcs_node *n);
/* XJ1: true when zName is the journal or WAL of an exclusive node, with
 * *res (exists) and *rc set (asking the kernel only the first time). */
bool lpcs_track_access(const char *zName, int *res, int *rc);
/* XJ2, XJ3: zName (if tracked) was created or opened (state PRESENT), or
 * deleted (ABSENT), or its state is unknown after a failure (UNKNOWN). */
void lpcs_track_set(const char *zName, int state);

/* Test-only hook (tests/sqlite/test_sqlite_stories.c): when set, called at
 * these points of the VFS, so a story can park the calling thread there.
 * (Kills right after a commit point use the unix VFS's xSetSystemCall.)  NULL outside tests: each
 * point costs one relaxed load. */
enum lpcs_hook_point {
	LPCS_HOOK_UNLOCKED, /* xUnlock: unix's xUnlock returned */
	LPCS_HOOK_CKPT_END, /* xShmUnlock of WAL_CKPT_LOCK, before SQ1 */
	LPCS_HOOK_READ_CHECK, /* SQ3b: a read lock taken, before its check */
};
typedef void lpcs_hook_fn(int point, const char *name);
extern lpcs_hook_fn *_Atomic lpcs_test_hook;
static inline void lpcs_hook(int point, const char *name)
{
	lpcs_hook_fn *h = atomic_load_explicit(&lpcs_test_hook, memory_order_relaxed);

	if (h)
		h(point, name);
}

/* Two calls of lpc's own (the VFS is built with lpc's sources):
 * writeback/writeback.h: writes every dirty page of f back and waits for
 * writes in flight, no fdatasync (what the last close runs); 0 or an error
 * by lpc_fsync's rule.  filemap/filemap.h: raises lpc's size of f to at
 * least seen (another process put bytes there), no ftruncate. */
int lpc_wb_flush_file(struct lpc_file *f);
uint64_t lpc_filemap_size_seen(struct lpc_file *f, uint64_t seen);

/* errors.c: rc is lpc's negative errno; ioerr the method's SQLITE_IOERR_x. */
int lpcs_errcode(long rc, int ioerr);

/* file.c */
extern const sqlite3_io_methods lpcs_io_methods;
/* The main database file of an opener's object: lpcs_io_methods without
 * shared memory (iVersion 1: WAL only in locking_mode=EXCLUSIVE) nor mmap. */
extern const sqlite3_io_methods lpcs_remote_io_methods;

/* remote.c (lpc_sqlite_set_opener).  lpcs_opener_find: true when zName
 * starts with a registered prefix, with its opener copied into *out. */
bool lpcs_opener_find(const char *zName, struct lpc_sqlite_opener *out);
/* xOpen, xDelete, xAccess (EXISTS, READWRITE, READ) of such a name. */
int lpcs_remote_open(const struct lpc_sqlite_opener *op, const char *zName, sqlite3_file *file,
		     int flags, int *pOutFlags);
int lpcs_remote_delete(const struct lpc_sqlite_opener *op, const char *zName);
int lpcs_remote_access(const struct lpc_sqlite_opener *op, const char *zName, int *pResOut);
/* An object's existence, asked of the opener of zName's prefix or of the
 * unix VFS (registry.c's XJ1, which asks once). */
int lpcs_raw_exists(const char *zName, int *pResOut);
/* vfs.c: the "unix" VFS under ours. */
extern sqlite3_vfs *lpcs_unix;

#endif /* LPC_SQLITE_SQLITE_INT_H */
