/* SPDX-License-Identifier: MIT */
/*
 * test_sqlite_durability.c - the table of file.c's "Durability and commit
 * points", one row at a time: a child process (this program exec()ed)
 * runs the row's operation through the VFS under test and is killed with
 * SIGKILL right after the row's commit point (the unix VFS's system call
 * replaced through xSetSystemCall: unlink, ftruncate or pwrite of the
 * journal or WAL; for a checkpoint, lpcs_test_hook after nBackfill is
 * stored; where the commit point is inside SQLite's shared memory or the
 * call's return, right after the call returns).  Then this process reopens
 * the database through unix and checks what unix's own run of the row
 * gives: the commit there (or, for a rollback and a recovery, the old
 * data and the old size), integrity_check ok.  Every row runs at
 * synchronous OFF, NORMAL and FULL, through "lpc" (detect mode) and, as
 * the control, through "unix" (release builds only: sanitizer builds run
 * the lpc rows).  A process kill only: what must be in the
 * kernel's file; what must be on disk (an OS crash) is lpc_fsync's (J.2),
 * reached by xSync, which this test cannot kill around.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sqlite/sqlite_int.h"
#include "sqlite_test.h"

#define ROWS 2000

static const char *self = "/proc/self/exe";

/* --- the kill right after a system call of the unix VFS --- */
static const char *kill_call; /* "unlink", "ftruncate", "pwrite0" */
static const char *kill_suffix;
static int (*real_unlink)(const char *);
static int (*real_ftruncate)(int, off_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off_t);

static bool ends(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n > k && !strcmp(s + n - k, suffix);
}

static bool fd_is(int fd, const char *suffix)
{
	char link[64], path[1024];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return false;
	path[n] = 0;
	return ends(path, suffix);
}

static int k_unlink(const char *path)
{
	int rc = real_unlink(path);

	if (!strcmp(kill_call, "unlink") && ends(path, kill_suffix))
		raise(SIGKILL);
	return rc;
}

static int k_ftruncate(int fd, off_t len)
{
	int rc = real_ftruncate(fd, len);

	if (!strcmp(kill_call, "ftruncate") && len == 0 && fd_is(fd, kill_suffix))
		raise(SIGKILL);
	return rc;
}

/* PERSIST's commit point: the journal header zeroed (28 zero bytes at 0). */
static void pwrite_check(int fd, const void *buf, size_t n, off_t off)
{
	static const char zero[28];

	if (!strcmp(kill_call, "pwrite0") && off == 0 && n == sizeof(zero) &&
	    !memcmp(buf, zero, n) && fd_is(fd, kill_suffix))
		raise(SIGKILL);
}

static ssize_t k_pwrite(int fd, const void *buf, size_t n, off_t off)
{
	ssize_t r = real_pwrite(fd, buf, n, off);

	pwrite_check(fd, buf, n, off);
	return r;
}

static ssize_t k_pwrite64(int fd, const void *buf, size_t n, off_t off)
{
	ssize_t r = real_pwrite64(fd, buf, n, off);

	pwrite_check(fd, buf, n, off);
	return r;
}

static void arm_kill(const char *call, const char *suffix)
{
	sqlite3_vfs *u = sqlite3_vfs_find("unix");

	kill_call = call;
	kill_suffix = suffix;
	real_unlink = (int (*)(const char *))u->xGetSystemCall(u, "unlink");
	real_ftruncate = (int (*)(int, off_t))u->xGetSystemCall(u, "ftruncate");
	real_pwrite = (ssize_t(*)(int, const void *, size_t, off_t))u->xGetSystemCall(u, "pwrite");
	real_pwrite64 =
		(ssize_t(*)(int, const void *, size_t, off_t))u->xGetSystemCall(u, "pwrite64");
	REQUIRE(real_unlink && real_ftruncate && (real_pwrite || real_pwrite64), "unix's calls");
	u->xSetSystemCall(u, "unlink", (sqlite3_syscall_ptr)k_unlink);
	u->xSetSystemCall(u, "ftruncate", (sqlite3_syscall_ptr)k_ftruncate);
	if (real_pwrite)
		u->xSetSystemCall(u, "pwrite", (sqlite3_syscall_ptr)k_pwrite);
	if (real_pwrite64)
		u->xSetSystemCall(u, "pwrite64", (sqlite3_syscall_ptr)k_pwrite64);
}

static void die_hook(int point, const char *name)
{
	(void)name;
	if (point == LPCS_HOOK_CKPT_END)
		raise(SIGKILL);
}

/* --- the rows --- */
struct row {
	const char *name;
	const char *journal;  /* journal_mode */
	const char *kill;     /* call killed after; NULL: after the operation returns */
	const char *suffix;   /* of the file it acts on */
	int64_t want_v1, want_v2; /* rows with v = 1, v = 2 afterwards */
	bool old_size;        /* the file keeps its size from before */
	bool watch;           /* a connection here keeps the wal-index alive
			       * across the kill (else the reopen recovers it
			       * from the WAL) and reads through it first */
};

static const struct row rows[] = {
	{ "delete-commit", "delete", "unlink", "-journal", ROWS, 0, false, false },
	{ "truncate-commit", "truncate", "ftruncate", "-journal", ROWS, 0, false, false },
	{ "persist-commit", "persist", "pwrite0", "-journal", ROWS, 0, false, false },
	{ "memory-commit", "memory", NULL, NULL, ROWS, 0, false, false },
	{ "off-commit", "off", NULL, NULL, ROWS, 0, false, false },
	{ "delete-rollback", "delete", "unlink", "-journal", 0, 0, true, false },
	{ "delete-recovery", "delete", "unlink", "-journal", 0, 0, true, false },
	{ "wal-commit", "wal", NULL, NULL, ROWS, 0, false, false },
	{ "wal-ckpt-complete", "wal", "ckpt", NULL, ROWS, 0, false, true },
	{ "wal-ckpt-partial", "wal", "ckpt", NULL, ROWS / 2, ROWS / 2, false, true },
	{ "wal-close", "wal", "unlink", "-wal", ROWS, 0, false, false },
};

static const char *levels[] = { "OFF", "NORMAL", "FULL" };

static const struct row *find_row(const char *name)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (!strcmp(rows[i].name, name))
			return &rows[i];
	return NULL;
}

static int child(const struct row *r, const char *level, const char *vfs, const char *path)
{
	char sql[200];
	sqlite3 *db, *rd = NULL;

	if (!strcmp(r->name, "delete-recovery") && !strcmp(level, "writer")) {
		/* The dead writer: unix, spills (the file grows), never commits. */
		db = sqt_open(path, "unix");
		sqt_exec(db, "PRAGMA cache_size=4; BEGIN; UPDATE t SET v = 1;"
			     "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)"
			     " INSERT INTO pad SELECT NULL, randomblob(900) FROM n");
		raise(SIGKILL);
	}
	db = sqt_open(path, vfs);
	/* Armed before the first statement: it reads the schema, and rolls a
	 * hot journal back (so the recovery row runs at the default level,
	 * FULL, whatever its level says: SQLite reads the file before it
	 * takes a pragma). */
	if (r->kill && strcmp(r->kill, "ckpt"))
		arm_kill(r->kill, r->suffix);
	snprintf(sql, sizeof(sql), "PRAGMA synchronous=%s; PRAGMA journal_mode=%s", level,
		 r->journal);
	sqt_exec(db, sql);
	if (!strcmp(r->name, "delete-rollback")) {
		/* Spilled (the file written), then rolled back. */
		sqt_exec(db, "PRAGMA cache_size=4; BEGIN; UPDATE t SET v = 1;"
			     "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)"
			     " INSERT INTO pad SELECT NULL, randomblob(900) FROM n; ROLLBACK");
	} else if (!strcmp(r->name, "delete-recovery")) {
		sqt_int(db, "SELECT count(*) FROM t"); /* rolls the hot journal back */
	} else if (!strcmp(r->name, "wal-ckpt-complete")) {
		sqt_exec(db, "PRAGMA wal_autocheckpoint=0; UPDATE t SET v = 1");
		atomic_store(&lpcs_test_hook, die_hook); /* not at the recovery's lock */
		sqt_exec(db, "PRAGMA wal_checkpoint(PASSIVE)");
	} else if (!strcmp(r->name, "wal-ckpt-partial")) {
		/* A reader holds the snapshot after the first commit: the
		 * checkpoint backfills that far only. */
		sqt_exec(db, "PRAGMA wal_autocheckpoint=0; UPDATE t SET v = 1");
		rd = sqt_open(path, vfs);
		sqt_exec(rd, "BEGIN");
		sqt_int(rd, "SELECT count(*) FROM t");
		sqt_exec(db, "UPDATE t SET v = 2 WHERE k <= 1000");
		atomic_store(&lpcs_test_hook, die_hook);
		sqt_exec(db, "PRAGMA wal_checkpoint(PASSIVE)");
	} else if (!strcmp(r->name, "wal-close")) {
		sqt_exec(db, "PRAGMA wal_autocheckpoint=0; UPDATE t SET v = 1");
		sqlite3_close(db);
	} else {
		sqt_exec(db, "UPDATE t SET v = 1");
	}
	(void)rd;
	/* A kill at a call that did not come (3 fails the row), except the
	 * checkpoint's hook, which only lpc has: unix is killed here. */
	if (r->kill && (strcmp(r->kill, "ckpt") || !strcmp(vfs, "lpc")))
		return 3;
	raise(SIGKILL); /* the commit point is the call's return */
	return 3;
}

static int spawn(const char *row, const char *level, const char *vfs, const char *path)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		execl(self, self, "--child", row, level, vfs, path, (char *)NULL);
		_exit(4);
	}
	REQUIRE(waitpid(pid, &status, 0) == pid, "waitpid");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static uint64_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static void run_row(const char *dir, const struct row *r, const char *level, const char *vfs)
{
	char path[600], what[128], rm[700];
	sqlite3 *db, *keep = NULL;
	uint64_t before;
	int st;

	snprintf(what, sizeof(what), "%s synchronous=%s through %s", r->name, level, vfs);
	snprintf(path, sizeof(path), "%s/%s-%s-%s.db", dir, r->name, level, vfs);
	for (int k = 0; k < 3; k++) {
		snprintf(rm, sizeof(rm), "%s%s", path, (const char *[]){ "", "-journal", "-wal" }[k]);
		unlink(rm);
	}
	db = sqt_open(path, "unix");
	snprintf(rm, sizeof(rm),
		 "PRAGMA journal_mode=%s; CREATE TABLE t(k INTEGER PRIMARY KEY, v INT, p BLOB);"
		 "CREATE INDEX tv ON t(v); CREATE TABLE pad(id INTEGER PRIMARY KEY, b BLOB);"
		 "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d)"
		 " INSERT INTO t SELECT i, 0, randomblob(100) FROM n",
		 !strcmp(r->journal, "wal") ? "wal" : "delete", ROWS);
	sqt_exec(db, rm);
	REQUIRE(sqlite3_close(db) == SQLITE_OK, "close");
	before = file_size(path);
	if (!strcmp(r->name, "delete-recovery")) {
		st = spawn(r->name, "writer", "unix", path);
		REQUIRE(st == 128 + SIGKILL, "%s: the writer died (%d)", what, st);
	}
	if (r->watch) {
		keep = sqt_open(path, "unix");
		CHECK_EQ(sqt_int(keep, "SELECT count(*) FROM t WHERE v = 0"), ROWS, "%s: before", what);
	}
	st = spawn(r->name, level, vfs, path);
	CHECK_EQ(st, 128 + SIGKILL, "%s: the child was killed", what);
	if (keep) {
		CHECK_EQ(sqt_int(keep, "SELECT count(*) FROM t WHERE v = 1"), r->want_v1,
			 "%s: v = 1 rows, read by a connection that was open", what);
		CHECK_EQ(sqt_int(keep, "SELECT count(*) FROM t WHERE v = 2"), r->want_v2,
			 "%s: v = 2 rows, read by a connection that was open", what);
		sqt_check_integrity(keep, what);
		REQUIRE(sqlite3_close(keep) == SQLITE_OK, "close");
	}
	db = sqt_open(path, "unix");
	CHECK_EQ(sqt_int(db, "SELECT count(*) FROM t WHERE v = 1"), r->want_v1, "%s: v = 1 rows",
		 what);
	CHECK_EQ(sqt_int(db, "SELECT count(*) FROM t WHERE v = 2"), r->want_v2, "%s: v = 2 rows",
		 what);
	CHECK_EQ(sqt_int(db, "SELECT count(*) FROM pad"), 0, "%s: pad rows", what);
	sqt_check_integrity(db, what);
	REQUIRE(sqlite3_close(db) == SQLITE_OK, "close");
	if (r->old_size)
		CHECK_EQ(file_size(path), before, "%s: the file's size from before", what);
}

int main(int argc, char **argv)
{
	const char *dir;

	if (argc == 6 && !strcmp(argv[1], "--child")) {
		const struct row *r = find_row(argv[2]);

		sqt_register();
		return r ? child(r, argv[3], argv[4], argv[5]) : 4;
	}
	setenv("LPC_SQLITE_COHERENCE", "detect", 1);
	dir = sqt_start(argc, argv, 280);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		for (size_t l = 0; l < 3; l++) {
			/* The control checks SQLite and this test, not lpc: once,
			 * in the release build (CI time). */
			if (SQT_SCALE(3) == 3)
				run_row(dir, &rows[i], levels[l], "unix");
			run_row(dir, &rows[i], levels[l], "lpc");
		}
	return tst_finish();
}
