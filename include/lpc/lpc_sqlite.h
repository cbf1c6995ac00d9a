/* SPDX-License-Identifier: MIT */
/*
 * lpc_sqlite.h - the SQLite VFS "lpc": SQLite's main database files read and
 * written through one process-wide lpc cache (liblpc_sqlite, lpc_sqlite(7)).
 *
 * Two ways in:
 *  - as a loadable extension: `sqlite3 -cmd '.load /path/liblpc_sqlite' db`,
 *    sqlite3_load_extension(db, "/path/liblpc_sqlite", NULL, &err) (entry
 *    point sqlite3_lpcsqlite_init, SQLite's default for that file name); the
 *    VFS stays registered after the loading connection closes;
 *  - linked (liblpc_sqlite.so or .a): lpc_sqlite_register().
 * Then open a database with the URI parameter vfs=lpc, the sqlite3_open_v2()
 * argument zVfs "lpc", or make "lpc" the default VFS (make_default, or the
 * environment variable LPC_SQLITE_DEFAULT=1 when the extension loads).
 *
 * Configuration (read once, when the first database file is opened through
 * the VFS, which creates the process's cache):
 *  - LPC_SQLITE_CACHE_MB: the cache's budget in MiB (default 256); the URI
 *    parameter lpc_cache_mb=N of that first open wins over it;
 *  - LPC_SQLITE_PAGE_KB: lpc's page size in KiB (default 4; 1..64).
 * Per database (each open; the first connection of the process decides):
 *  - LPC_SQLITE_COHERENCE=detect|exclusive, or the URI parameter
 *    lpc_coherence= (which wins): detect (default) keeps lpc coherent with
 *    other processes; exclusive refuses them (an OFD lock while the file is
 *    open here: their locks, or their exclusive open, get SQLITE_BUSY, and
 *    the refused open logs a line through sqlite3_log), with no system call
 *    per transaction for locks or the hot-journal check (lpc_sqlite(7)).
 *
 * Errors: SQLite result codes.  The VFS's own failures map lpc's negative
 * errno: -ENOSPC and -EDQUOT to SQLITE_FULL, -ENOMEM to SQLITE_IOERR_NOMEM,
 * anything else to the method's SQLITE_IOERR_READ, _WRITE, _FSYNC,
 * _TRUNCATE or _FSTAT (lpc_sqlite(7), "Errors").
 */
#ifndef LPC_LPC_SQLITE_H
#define LPC_LPC_SQLITE_H

#include <lpc/lpc.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The VFS's name, for sqlite3_open_v2() and the URI parameter vfs=. */
#define LPC_SQLITE_VFS_NAME "lpc"

/*
 * Registers the VFS "lpc" with the SQLite library this program uses, on top
 * of the "unix" VFS (which keeps locking, the WAL's shared memory, journals,
 * WAL and temporary files).  Calling it again only changes the default if
 * make_default is non-zero.  The cache itself is created on the first open.
 * Return: SQLITE_OK; SQLITE_ERROR when SQLite has no "unix" VFS; what
 * sqlite3_vfs_register() returns.
 * Context: takes an internal mutex; no I/O.
 */
int lpc_sqlite_register(int make_default);

/*
 * Database names of another storage: an opener maps every name that starts
 * with a prefix (e.g. "rbd:" for liblpc_rbd's, lpc_rbd.h) to storage
 * objects of its own, so that liblpc_sqlite itself links no storage
 * library.  `sqlite3_open_v2("file:rbd:pool/db?vfs=lpc", ...)`: the main
 * database is an lpc file over the opener's backend (lpc_file_open_backend
 * in the VFS's cache); its rollback journal ("NAME-journal"), WAL
 * ("NAME-wal") and super-journal are objects of the same opener, read and
 * written through the opener's operations directly (no cache: each xWrite
 * is on the storage when it returns, as the unix VFS's is in the kernel).
 * Locking: one process.  The opener must keep other processes out (its
 * storage's exclusive lock, which liblpc_rbd takes), since the VFS keeps
 * SQLite's locks in the process only (lpc_coherence=exclusive's lock table,
 * lpc_sqlite(7)); a second process's open fails (SQLITE_BUSY when the
 * opener says -EBUSY).  No shared memory: WAL mode needs
 * `PRAGMA locking_mode=EXCLUSIVE` before the WAL is opened (SQLite's rule
 * for a VFS without xShmMap: otherwise journal_mode=WAL answers the mode it
 * keeps, and a database left in WAL mode fails to open, SQLITE_CANTOPEN).
 * Detail, limits and errors: lpc_sqlite_set_opener(3).
 */
struct lpc_sqlite_opener {
	/* Required.  Opens the object `name` (the whole name, prefix
	 * included) read-write (oflags O_RDWR) or read-only (O_RDONLY),
	 * creating it first (empty) when create is non-zero and it does not
	 * exist, and hands back lpc_file_open_backend's ops and handle, one
	 * reference (released by ops->release).  c is the VFS's cache, for
	 * the opener's own bookkeeping only (it must not call lpc).  The
	 * table's read, write, truncate, size and sync must take any offset,
	 * length and buffer (journals are read and written through them
	 * directly, not in lpc's pages).  Return: 0, or a negative errno:
	 * -ENOENT (no such object, not created), -EBUSY (another client holds
	 * it), -EINVAL (a name it cannot parse), others. */
	int (*open)(void *arg, struct lpc_cache *c, const char *name, int oflags, int create,
		    const struct lpc_backend_ops **ops, void **handle);
	/* Required.  1 when the object exists, 0 when not, or a negative
	 * errno. */
	int (*exists)(void *arg, const char *name);
	/* Required.  Removes the object: 0, -ENOENT when there was none, or a
	 * negative errno (-EBUSY: it is open). */
	int (*remove)(void *arg, const char *name);
	void *arg; /* passed to each; the opener's until the process ends */
};

/*
 * Routes the names that start with prefix (1 to 15 bytes, e.g. "rbd:") to
 * *opener (copied) in every later open, delete and existence check of the
 * VFS "lpc"; NULL opener removes the prefix's entry (its names are then
 * local paths, each logged through sqlite3_log until the prefix is set
 * again).  An opener's -ENOSPC or -EDQUOT is SQLITE_FULL.  Registers the VFS
 * as lpc_sqlite_register(0) does.  Up to 8 prefixes; setting one again
 * replaces it (connections open keep the old one's objects).
 * Return: SQLITE_OK; SQLITE_MISUSE for a bad prefix or an opener without
 * open, exists or remove; SQLITE_FULL when 8 prefixes are set;
 * lpc_sqlite_register's errors.
 * Context: takes an internal mutex; no I/O.
 */
int lpc_sqlite_set_opener(const char *prefix, const struct lpc_sqlite_opener *opener);

/*
 * Fills *out with the counters of the process's cache (lpc_stats()), and
 * zeros when no database was opened through the VFS yet.
 * Return: SQLITE_OK; SQLITE_MISUSE for NULL.
 */
int lpc_sqlite_stats(struct lpc_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* LPC_LPC_SQLITE_H */
