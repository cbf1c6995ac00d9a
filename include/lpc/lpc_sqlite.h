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
 * Fills *out with the counters of the process's cache (lpc_stats()), and
 * zeros when no database was opened through the VFS yet.
 * Return: SQLITE_OK; SQLITE_MISUSE for NULL.
 */
int lpc_sqlite_stats(struct lpc_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* LPC_LPC_SQLITE_H */
