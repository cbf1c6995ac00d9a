/* SPDX-License-Identifier: MIT */
/*
 * sqlite_vfs.c - how the sqlite benchmark counts what a query costs in VFS
 * calls and in system calls, the same way for the unix VFS and for lpc's.
 *
 * Three counters, all per thread (each worker points the thread's counter at
 * its own struct sq_count; a thread without one counts nowhere):
 *
 *  1. A thin counting VFS over each measured VFS ("count-unix" over "unix",
 *     "count-lpc" over "lpc"): every method is forwarded; xRead, xWrite and
 *     xSync are counted.  xRead is what SQLite asks of the VFS when a page
 *     misses its own per-connection cache (and the header reads of a
 *     transaction's start).
 *  2. The unix VFS's system-call table (sqlite3_vfs.xSetSystemCall): every
 *     entry the unix VFS makes a system call through (open, close, access,
 *     getcwd, stat, lstat, fstat, ftruncate, fcntl, read, pread, pread64,
 *     write, pwrite, pwrite64, fchmod, fallocate, unlink, mkdir, rmdir,
 *     fchown, geteuid, mmap, munmap, readlink) is replaced by a wrapper that
 *     counts one call and calls the original.  This is exact for the unix
 *     VFS, and for every part of lpc's VFS that delegates to it (locking, the
 *     WAL index, journals if it sends them there).  Not counted: mremap and
 *     ioctl (not used here), and openDirectory (it calls open, counted).
 *  3. fdatasync and fsync: the unix VFS calls them directly, not through the
 *     table, so lpcbench defines both (symbol interposition: the executable's
 *     definition wins over libc's for every shared library, libsqlite3 and
 *     liblpc alike), counts one and makes the system call.  Only the
 *     counting thread's calls count.
 *
 * What is not seen here, lpc's own I/O, comes from lpc_sqlite_stats() in
 * sqlite.c: its backend reads (one pread each) and its vectored writes (one
 * pwritev each, the flusher's included); its fdatasync is counted by 3.
 *
 * The fcntl wrapper passes its third argument on as a pointer: SQLite's
 * calls pass a struct flock * or an int, and on the 64-bit Linux ABIs both
 * travel in one register.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <sqlite3.h>

#include "sqlite.h"

static _Thread_local struct sq_count *tl_cnt;
static _Thread_local struct sq_count tl_none;

static inline struct sq_count *cnt(void)
{
	return tl_cnt ? tl_cnt : &tl_none;
}

void sq_count_set(struct sq_count *c)
{
	tl_cnt = c;
}

/* ---- 3. fdatasync and fsync, interposed ---- */

int fdatasync(int fd)
{
	if (tl_cnt)
		tl_cnt->sys_sync++;
	return (int)syscall(SYS_fdatasync, fd);
}

int fsync(int fd)
{
	if (tl_cnt)
		tl_cnt->sys_sync++;
	return (int)syscall(SYS_fsync, fd);
}

/* ---- 2. the unix VFS's system-call table ---- */

#define SYS_OTHER(name, ret, params, args)                    \
	static ret(*real_##name) params;                      \
	static ret w_##name params                            \
	{                                                     \
		cnt()->sys_other++;                           \
		return real_##name args;                      \
	}

SYS_OTHER(open, int, (const char *p, int f, int m), (p, f, m))
SYS_OTHER(close, int, (int fd), (fd))
SYS_OTHER(access, int, (const char *p, int m), (p, m))
SYS_OTHER(getcwd, char *, (char *b, size_t n), (b, n))
SYS_OTHER(stat, int, (const char *p, struct stat *s), (p, s))
SYS_OTHER(lstat, int, (const char *p, struct stat *s), (p, s))
SYS_OTHER(fstat, int, (int fd, struct stat *s), (fd, s))
SYS_OTHER(ftruncate, int, (int fd, off_t n), (fd, n))
SYS_OTHER(fchmod, int, (int fd, mode_t m), (fd, m))
SYS_OTHER(fallocate, int, (int fd, off_t o, off_t n), (fd, o, n))
SYS_OTHER(unlink, int, (const char *p), (p))
SYS_OTHER(mkdir, int, (const char *p, mode_t m), (p, m))
SYS_OTHER(rmdir, int, (const char *p), (p))
SYS_OTHER(fchown, int, (int fd, uid_t u, gid_t g), (fd, u, g))
SYS_OTHER(geteuid, uid_t, (void), ())
SYS_OTHER(mmap, void *, (void *a, size_t n, int p, int f, int fd, off_t o), (a, n, p, f, fd, o))
SYS_OTHER(munmap, int, (void *a, size_t n), (a, n))
SYS_OTHER(readlink, ssize_t, (const char *p, char *b, size_t n), (p, b, n))

static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real_pread)(int, void *, size_t, off_t);
static ssize_t (*real_pread64)(int, void *, size_t, off_t);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off_t);
static int (*real_fcntl)(int, int, ...);

static ssize_t w_read(int fd, void *b, size_t n)
{
	cnt()->sys_read++;
	return real_read(fd, b, n);
}

static ssize_t w_pread(int fd, void *b, size_t n, off_t o)
{
	cnt()->sys_read++;
	return real_pread(fd, b, n, o);
}

static ssize_t w_pread64(int fd, void *b, size_t n, off_t o)
{
	cnt()->sys_read++;
	return real_pread64(fd, b, n, o);
}

static ssize_t w_write(int fd, const void *b, size_t n)
{
	cnt()->sys_write++;
	return real_write(fd, b, n);
}

static ssize_t w_pwrite(int fd, const void *b, size_t n, off_t o)
{
	cnt()->sys_write++;
	return real_pwrite(fd, b, n, o);
}

static ssize_t w_pwrite64(int fd, const void *b, size_t n, off_t o)
{
	cnt()->sys_write++;
	return real_pwrite64(fd, b, n, o);
}

static int w_fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	cnt()->sys_lock++;
	return real_fcntl(fd, cmd, arg);
}

struct sys_entry {
	const char *name;
	sqlite3_syscall_ptr wrapper;
	sqlite3_syscall_ptr *real;
};

#define E(n) { #n, (sqlite3_syscall_ptr)w_##n, (sqlite3_syscall_ptr *)&real_##n }
static const struct sys_entry sys_table[] = {
	E(open), E(close), E(access), E(getcwd), E(stat), E(lstat), E(fstat),
	E(ftruncate), E(fcntl), E(read), E(pread), E(pread64), E(write), E(pwrite),
	E(pwrite64), E(fchmod), E(fallocate), E(unlink), E(mkdir), E(rmdir),
	E(fchown), E(geteuid), E(mmap), E(munmap), E(readlink),
};
#undef E

/* ---- 1. the counting VFS ---- */

struct cvfs {
	sqlite3_vfs base;
	sqlite3_vfs *under;
	char name[64];
};

struct cfile {
	sqlite3_file base;
	sqlite3_file *real; /* follows this struct in the same allocation */
};

#define REAL(f) (((struct cfile *)(f))->real)

static int c_close(sqlite3_file *f)
{
	return REAL(f)->pMethods->xClose(REAL(f));
}

static int c_read(sqlite3_file *f, void *b, int n, sqlite3_int64 o)
{
	cnt()->xread++;
	return REAL(f)->pMethods->xRead(REAL(f), b, n, o);
}

static int c_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 o)
{
	cnt()->xwrite++;
	return REAL(f)->pMethods->xWrite(REAL(f), b, n, o);
}

static int c_truncate(sqlite3_file *f, sqlite3_int64 n)
{
	return REAL(f)->pMethods->xTruncate(REAL(f), n);
}

static int c_sync(sqlite3_file *f, int flags)
{
	cnt()->xsync++;
	return REAL(f)->pMethods->xSync(REAL(f), flags);
}

static int c_file_size(sqlite3_file *f, sqlite3_int64 *n)
{
	return REAL(f)->pMethods->xFileSize(REAL(f), n);
}

static int c_lock(sqlite3_file *f, int l)
{
	return REAL(f)->pMethods->xLock(REAL(f), l);
}

static int c_unlock(sqlite3_file *f, int l)
{
	return REAL(f)->pMethods->xUnlock(REAL(f), l);
}

static int c_check_reserved(sqlite3_file *f, int *out)
{
	return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}

static int c_file_control(sqlite3_file *f, int op, void *arg)
{
	return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}

static int c_sector_size(sqlite3_file *f)
{
	return REAL(f)->pMethods->xSectorSize(REAL(f));
}

static int c_device_chars(sqlite3_file *f)
{
	return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}

static int c_shm_map(sqlite3_file *f, int pg, int sz, int extend, void volatile **pp)
{
	const sqlite3_io_methods *m = REAL(f)->pMethods;

	return m->iVersion >= 2 ? m->xShmMap(REAL(f), pg, sz, extend, pp) : SQLITE_IOERR_SHMMAP;
}

static int c_shm_lock(sqlite3_file *f, int off, int n, int flags)
{
	const sqlite3_io_methods *m = REAL(f)->pMethods;

	return m->iVersion >= 2 ? m->xShmLock(REAL(f), off, n, flags) : SQLITE_IOERR_SHMLOCK;
}

static void c_shm_barrier(sqlite3_file *f)
{
	const sqlite3_io_methods *m = REAL(f)->pMethods;

	if (m->iVersion >= 2)
		m->xShmBarrier(REAL(f));
}

static int c_shm_unmap(sqlite3_file *f, int del)
{
	const sqlite3_io_methods *m = REAL(f)->pMethods;

	return m->iVersion >= 2 ? m->xShmUnmap(REAL(f), del) : SQLITE_OK;
}

static int c_fetch(sqlite3_file *f, sqlite3_int64 o, int n, void **pp)
{
	const sqlite3_io_methods *m = REAL(f)->pMethods;

	if (m->iVersion >= 3)
		return m->xFetch(REAL(f), o, n, pp);
	*pp = NULL;
	return SQLITE_OK;
}

static int c_unfetch(sqlite3_file *f, sqlite3_int64 o, void *p)
{
	const sqlite3_io_methods *m = REAL(f)->pMethods;

	return m->iVersion >= 3 ? m->xUnfetch(REAL(f), o, p) : SQLITE_OK;
}

/* One table per version of the file below (SQLite asks a file's iVersion
 * before it calls xShm* or xFetch). */
#define METHODS(ver)                                                                   \
	{ ver, c_close, c_read, c_write, c_truncate, c_sync, c_file_size, c_lock,      \
	  c_unlock, c_check_reserved, c_file_control, c_sector_size, c_device_chars, \
	  c_shm_map, c_shm_lock, c_shm_barrier, c_shm_unmap, c_fetch, c_unfetch }
static const sqlite3_io_methods cmethods[4] = { METHODS(1), METHODS(1), METHODS(2), METHODS(3) };

static int c_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out)
{
	struct cvfs *cv = (struct cvfs *)vfs;
	struct cfile *cf = (struct cfile *)f;
	int rc, ver;

	cf->real = (sqlite3_file *)(cf + 1);
	memset(cf->real, 0, (size_t)cv->under->szOsFile);
	rc = cv->under->xOpen(cv->under, name, cf->real, flags, out);
	if (!cf->real->pMethods) {
		cf->base.pMethods = NULL;
		return rc;
	}
	ver = cf->real->pMethods->iVersion;
	cf->base.pMethods = &cmethods[ver < 1 ? 1 : ver > 3 ? 3 : ver];
	return rc;
}

#define UNDER(v) (((struct cvfs *)(v))->under)

static int c_delete(sqlite3_vfs *v, const char *n, int sync)
{
	return UNDER(v)->xDelete(UNDER(v), n, sync);
}

static int c_access(sqlite3_vfs *v, const char *n, int flags, int *out)
{
	return UNDER(v)->xAccess(UNDER(v), n, flags, out);
}

static int c_full_pathname(sqlite3_vfs *v, const char *n, int len, char *out)
{
	return UNDER(v)->xFullPathname(UNDER(v), n, len, out);
}

static void *c_dl_open(sqlite3_vfs *v, const char *n)
{
	return UNDER(v)->xDlOpen(UNDER(v), n);
}

static void c_dl_error(sqlite3_vfs *v, int n, char *msg)
{
	UNDER(v)->xDlError(UNDER(v), n, msg);
}

static void (*c_dl_sym(sqlite3_vfs *v, void *h, const char *sym))(void)
{
	return UNDER(v)->xDlSym(UNDER(v), h, sym);
}

static void c_dl_close(sqlite3_vfs *v, void *h)
{
	UNDER(v)->xDlClose(UNDER(v), h);
}

static int c_randomness(sqlite3_vfs *v, int n, char *out)
{
	return UNDER(v)->xRandomness(UNDER(v), n, out);
}

static int c_sleep(sqlite3_vfs *v, int us)
{
	return UNDER(v)->xSleep(UNDER(v), us);
}

static int c_current_time(sqlite3_vfs *v, double *out)
{
	return UNDER(v)->xCurrentTime(UNDER(v), out);
}

static int c_get_last_error(sqlite3_vfs *v, int n, char *out)
{
	return UNDER(v)->xGetLastError ? UNDER(v)->xGetLastError(UNDER(v), n, out) : 0;
}

static int c_current_time_int64(sqlite3_vfs *v, sqlite3_int64 *out)
{
	double d;
	int rc;

	if (UNDER(v)->iVersion >= 2 && UNDER(v)->xCurrentTimeInt64)
		return UNDER(v)->xCurrentTimeInt64(UNDER(v), out);
	rc = UNDER(v)->xCurrentTime(UNDER(v), &d);
	*out = (sqlite3_int64)(d * 86400000.0);
	return rc;
}

static int c_set_system_call(sqlite3_vfs *v, const char *n, sqlite3_syscall_ptr p)
{
	return UNDER(v)->iVersion >= 3 ? UNDER(v)->xSetSystemCall(UNDER(v), n, p) : SQLITE_NOTFOUND;
}

static sqlite3_syscall_ptr c_get_system_call(sqlite3_vfs *v, const char *n)
{
	return UNDER(v)->iVersion >= 3 ? UNDER(v)->xGetSystemCall(UNDER(v), n) : NULL;
}

static const char *c_next_system_call(sqlite3_vfs *v, const char *n)
{
	return UNDER(v)->iVersion >= 3 ? UNDER(v)->xNextSystemCall(UNDER(v), n) : NULL;
}

/*
 * Registers "count-<under>" over the VFS `under` (not the default), once;
 * its name in name[len].  Return: 0, SQLITE_NOTFOUND (no such VFS) or
 * SQLITE_NOMEM.
 */
int sq_vfs_wrap(const char *under, char *name, unsigned len)
{
	sqlite3_vfs *u = sqlite3_vfs_find(under);
	struct cvfs *cv;

	snprintf(name, len, "count-%s", under);
	if (sqlite3_vfs_find(name))
		return 0;
	if (!u)
		return SQLITE_NOTFOUND;
	cv = calloc(1, sizeof(*cv)); /* registered for the process's life */
	if (!cv)
		return SQLITE_NOMEM;
	cv->under = u;
	snprintf(cv->name, sizeof(cv->name), "%s", name);
	cv->base = (sqlite3_vfs){
		.iVersion = 3,
		.szOsFile = (int)sizeof(struct cfile) + u->szOsFile,
		.mxPathname = u->mxPathname,
		.zName = cv->name,
		.xOpen = c_open,
		.xDelete = c_delete,
		.xAccess = c_access,
		.xFullPathname = c_full_pathname,
		.xDlOpen = c_dl_open,
		.xDlError = c_dl_error,
		.xDlSym = c_dl_sym,
		.xDlClose = c_dl_close,
		.xRandomness = c_randomness,
		.xSleep = c_sleep,
		.xCurrentTime = c_current_time,
		.xGetLastError = c_get_last_error,
		.xCurrentTimeInt64 = c_current_time_int64,
		.xSetSystemCall = c_set_system_call,
		.xGetSystemCall = c_get_system_call,
		.xNextSystemCall = c_next_system_call,
	};
	return sqlite3_vfs_register(&cv->base, 0);
}

int sq_vfs_install(void)
{
	static bool done;
	sqlite3_vfs *unix_vfs;
	char name[64];
	int rc;

	if (done)
		return 0;
	rc = sqlite3_initialize();
	if (rc)
		return rc;
	unix_vfs = sqlite3_vfs_find("unix");
	if (!unix_vfs || unix_vfs->iVersion < 3)
		return SQLITE_NOTFOUND;
	for (size_t i = 0; i < sizeof(sys_table) / sizeof(sys_table[0]); i++) {
		sqlite3_syscall_ptr real = unix_vfs->xGetSystemCall(unix_vfs, sys_table[i].name);

		if (!real)
			continue; /* not in this build's table: the wrapper is unused */
		*sys_table[i].real = real;
		rc = unix_vfs->xSetSystemCall(unix_vfs, sys_table[i].name, sys_table[i].wrapper);
		if (rc)
			return rc;
	}
	done = true;
	return sq_vfs_wrap("unix", name, sizeof(name));
}
