/* SPDX-License-Identifier: MIT */
/*
 * vfs.c - the sqlite3_vfs "lpc": main database files through lpc (file.c),
 * everything else through the "unix" VFS, whose file for the same path also
 * keeps the database's locks and the WAL's shared memory.
 *
 * xOpen of a main database: unix opens it first (creating it if asked, with
 * its own rules for modes and read-only fallbacks), then lpc opens the same
 * path read-write (read-only if the file refuses writes).  An open of a
 * file lpc already holds closes no descriptor of it (filemap/file.c
 * ZL1-ZL6): closing any descriptor drops the process's POSIX locks on it,
 * those unix holds for other connections included; only lpc's last close
 * (after unix's, lpcs_close) closes lpc's descriptors.
 * Journals, WAL, temporary and transient files are unix's alone (file.c
 * says why).  The other methods are unix's.
 * Names that start with a prefix of lpc_sqlite_set_opener go to remote.c
 * instead (xOpen, xDelete, xAccess, xFullPathname), main database and
 * journals alike.
 *
 * Coherence mode (file.c): the URI parameter lpc_coherence=detect|exclusive,
 * else the environment's LPC_SQLITE_COHERENCE, else detect; another word
 * fails the open (SQLITE_CANTOPEN, logged).  The node's mode is its first
 * connection's.  xOpen, xDelete and xAccess of an exclusive node's journal
 * and WAL keep what registry.c knows of them (XJ1-XJ3).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "sqlite_int.h"

sqlite3_vfs *lpcs_unix;
lpcs_hook_fn *_Atomic lpcs_test_hook;

/* The coherence mode asked for: 1 exclusive, 0 detect, -1 unknown word. */
static int coherence_mode(const char *zName)
{
	const char *m = sqlite3_uri_parameter(zName, "lpc_coherence");

	if (!m)
		m = getenv("LPC_SQLITE_COHERENCE");
	if (!m || !*m || !strcmp(m, "detect"))
		return 0;
	if (!strcmp(m, "exclusive"))
		return 1;
	sqlite3_log(SQLITE_CANTOPEN, "lpc_sqlite: lpc_coherence=%s: not detect or exclusive", m);
	return -1;
}

static int lpcs_open(sqlite3_vfs *vfs, const char *zName, sqlite3_file *file, int flags,
		     int *pOutFlags)
{
	struct lpcs_file *p = (struct lpcs_file *)file;
	struct lpc_cache *c;
	sqlite3_int64 size = 0;
	int outflags = 0, rc, lrc, mode;
	struct lpc_sqlite_opener op;

	if (zName && lpcs_opener_find(zName, &op))
		return lpcs_remote_open(&op, zName, file, flags, pOutFlags);
	if (!(flags & SQLITE_OPEN_MAIN_DB) || !zName) {
		rc = lpcs_unix->xOpen(lpcs_unix, zName, file, flags, pOutFlags);
		if (flags & (SQLITE_OPEN_MAIN_JOURNAL | SQLITE_OPEN_WAL)) /* XJ2 */
			lpcs_track_set(zName, rc == SQLITE_OK ? LPCS_J_PRESENT : LPCS_J_UNKNOWN);
		return rc;
	}
	memset(p, 0, sizeof(*p));
	mode = coherence_mode(zName);
	if (mode < 0)
		return SQLITE_CANTOPEN;
	p->real = (sqlite3_file *)(p + 1);
	rc = lpcs_unix->xOpen(lpcs_unix, zName, p->real, flags, &outflags);
	if (rc != SQLITE_OK) {
		if (p->real->pMethods)
			p->real->pMethods->xClose(p->real);
		return rc;
	}
	if (pOutFlags)
		*pOutFlags = outflags;
	rc = lpcs_cache_get(zName, &c);
	if (rc != SQLITE_OK)
		goto fail;
	lrc = lpc_file_open(c, zName, O_RDWR, 0, &p->lf);
	if (lrc == -EACCES || lrc == -EROFS || lrc == -EPERM)
		lrc = lpc_file_open(c, zName, O_RDONLY, 0, &p->lf);
	if (lrc < 0) {
		rc = lrc == -ENOMEM ? SQLITE_NOMEM : SQLITE_CANTOPEN;
		p->lf = NULL;
		goto fail;
	}
	rc = p->real->pMethods->xFileSize(p->real, &size);
	if (rc != SQLITE_OK)
		goto fail;
	rc = lpcs_node_get(p->lf, size < 0 ? 0 : (uint64_t)size, zName, mode == 1, false, &p->node);
	if (rc != SQLITE_OK)
		goto fail;
	p->excl = p->node->excl;
	p->base.pMethods = &lpcs_io_methods;
	return SQLITE_OK;
fail:
	p->real->pMethods->xClose(p->real);
	if (p->lf)
		lpc_file_close(p->lf);
	p->base.pMethods = NULL;
	return rc;
}

static int lpcs_delete(sqlite3_vfs *vfs, const char *zName, int syncDir)
{
	struct lpc_sqlite_opener op;
	int rc = lpcs_opener_find(zName, &op) ? lpcs_remote_delete(&op, zName) :
						lpcs_unix->xDelete(lpcs_unix, zName, syncDir);

	/* XJ3 */
	lpcs_track_set(zName, rc == SQLITE_OK || rc == SQLITE_IOERR_DELETE_NOENT ?
				      LPCS_J_ABSENT : LPCS_J_UNKNOWN);
	return rc;
}

static int lpcs_access(sqlite3_vfs *vfs, const char *zName, int flags, int *pResOut)
{
	struct lpc_sqlite_opener op;
	int rc;

	if (flags == SQLITE_ACCESS_EXISTS && lpcs_track_access(zName, pResOut, &rc))
		return rc; /* XJ1 */
	if (lpcs_opener_find(zName, &op))
		return lpcs_remote_access(&op, zName, pResOut);
	return lpcs_unix->xAccess(lpcs_unix, zName, flags, pResOut);
}

int lpcs_raw_exists(const char *zName, int *pResOut)
{
	struct lpc_sqlite_opener op;

	if (lpcs_opener_find(zName, &op))
		return lpcs_remote_access(&op, zName, pResOut);
	return lpcs_unix->xAccess(lpcs_unix, zName, SQLITE_ACCESS_EXISTS, pResOut);
}

static int lpcs_full_pathname(sqlite3_vfs *vfs, const char *zName, int nOut, char *zOut)
{
	struct lpc_sqlite_opener op;

	/* An opener's name is whole already (no directory to prepend). */
	if (lpcs_opener_find(zName, &op)) {
		if ((int)strlen(zName) >= nOut)
			return SQLITE_CANTOPEN;
		memcpy(zOut, zName, strlen(zName) + 1);
		return SQLITE_OK;
	}
	return lpcs_unix->xFullPathname(lpcs_unix, zName, nOut, zOut);
}

static void *lpcs_dlopen(sqlite3_vfs *vfs, const char *zPath)
{
	return lpcs_unix->xDlOpen(lpcs_unix, zPath);
}

static void lpcs_dlerror(sqlite3_vfs *vfs, int nByte, char *zErrMsg)
{
	lpcs_unix->xDlError(lpcs_unix, nByte, zErrMsg);
}

static void (*lpcs_dlsym(sqlite3_vfs *vfs, void *h, const char *zSym))(void)
{
	return lpcs_unix->xDlSym(lpcs_unix, h, zSym);
}

static void lpcs_dlclose(sqlite3_vfs *vfs, void *h)
{
	lpcs_unix->xDlClose(lpcs_unix, h);
}

static int lpcs_randomness(sqlite3_vfs *vfs, int nByte, char *zOut)
{
	return lpcs_unix->xRandomness(lpcs_unix, nByte, zOut);
}

static int lpcs_sleep(sqlite3_vfs *vfs, int us)
{
	return lpcs_unix->xSleep(lpcs_unix, us);
}

static int lpcs_current_time(sqlite3_vfs *vfs, double *t)
{
	return lpcs_unix->xCurrentTime(lpcs_unix, t);
}

static int lpcs_get_last_error(sqlite3_vfs *vfs, int n, char *z)
{
	return lpcs_unix->xGetLastError(lpcs_unix, n, z);
}

static int lpcs_current_time64(sqlite3_vfs *vfs, sqlite3_int64 *t)
{
	return lpcs_unix->xCurrentTimeInt64(lpcs_unix, t);
}

static int lpcs_set_syscall(sqlite3_vfs *vfs, const char *z, sqlite3_syscall_ptr f)
{
	return lpcs_unix->xSetSystemCall(lpcs_unix, z, f);
}

static sqlite3_syscall_ptr lpcs_get_syscall(sqlite3_vfs *vfs, const char *z)
{
	return lpcs_unix->xGetSystemCall(lpcs_unix, z);
}

static const char *lpcs_next_syscall(sqlite3_vfs *vfs, const char *z)
{
	return lpcs_unix->xNextSystemCall(lpcs_unix, z);
}

static sqlite3_vfs lpcs_vfs = {
	.iVersion = 3,
	.zName = LPC_SQLITE_VFS_NAME,
	.xOpen = lpcs_open,
	.xDelete = lpcs_delete,
	.xAccess = lpcs_access,
	.xFullPathname = lpcs_full_pathname,
	.xDlOpen = lpcs_dlopen,
	.xDlError = lpcs_dlerror,
	.xDlSym = lpcs_dlsym,
	.xDlClose = lpcs_dlclose,
	.xRandomness = lpcs_randomness,
	.xSleep = lpcs_sleep,
	.xCurrentTime = lpcs_current_time,
	.xGetLastError = lpcs_get_last_error,
	.xCurrentTimeInt64 = lpcs_current_time64,
	.xSetSystemCall = lpcs_set_syscall,
	.xGetSystemCall = lpcs_get_syscall,
	.xNextSystemCall = lpcs_next_syscall,
};

static pthread_mutex_t vfs_lock = PTHREAD_MUTEX_INITIALIZER;

LPCS_EXPORT int lpc_sqlite_register(int make_default)
{
	int rc = SQLITE_OK;

	pthread_mutex_lock(&vfs_lock);
	if (!lpcs_unix) {
		sqlite3_vfs *u = sqlite3_vfs_find("unix");

		if (!u || u->iVersion < 3) {
			rc = SQLITE_ERROR;
			goto out;
		}
		lpcs_vfs.szOsFile = (int)sizeof(struct lpcs_file) + u->szOsFile;
		if (lpcs_vfs.szOsFile < u->szOsFile)
			lpcs_vfs.szOsFile = u->szOsFile;
		lpcs_vfs.mxPathname = u->mxPathname;
		lpcs_unix = u;
		rc = sqlite3_vfs_register(&lpcs_vfs, make_default);
		if (rc != SQLITE_OK)
			lpcs_unix = NULL;
	} else if (make_default) {
		rc = sqlite3_vfs_register(&lpcs_vfs, 1);
	}
out:
	pthread_mutex_unlock(&vfs_lock);
	return rc;
}

/*
 * The loadable extension's entry point: SQLite derives sqlite3_X_init from
 * the file name liblpc_sqlite.so (drop "lib", keep the letters: lpcsqlite).
 * LPC_SQLITE_DEFAULT=1 in the environment makes "lpc" the default VFS.
 * SQLITE_OK_LOAD_PERMANENTLY keeps the library (and the VFS) loaded after
 * the loading connection closes.
 */
LPCS_EXPORT int
sqlite3_lpcsqlite_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi);

int sqlite3_lpcsqlite_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi)
{
	const char *d = getenv("LPC_SQLITE_DEFAULT");
	int rc = lpc_sqlite_register(d && !strcmp(d, "1"));

	if (rc != SQLITE_OK) {
		if (pzErrMsg)
			*pzErrMsg = sqlite3_mprintf("lpc_sqlite: cannot register the VFS (%d)", rc);
		return rc;
	}
	return SQLITE_OK_LOAD_PERMANENTLY;
}
