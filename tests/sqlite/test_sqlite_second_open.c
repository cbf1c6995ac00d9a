/* SPDX-License-Identifier: MIT */
/*
 * test_sqlite_second_open.c - opening a second connection to a database
 * keeps the SQLite locks this process holds on it (detect mode).
 *
 * POSIX locks belong to the process and the file: closing any descriptor
 * of the file drops all of them (lpc_sqlite(7), NOTES of file.c).  The unix
 * VFS never closes a descriptor of a file while the process holds a lock on
 * it.  The lpc VFS's open of a connection also opens the file through lpc
 * (lpc_file_open), which returns the file the cache already has (A.5): if
 * the descriptor it opened to find it is then closed, the locks of the
 * connections already open go, while SQLite (and unix's lock table, which
 * counts them per inode) still believes them held, and another process may
 * take EXCLUSIVE under a reader.  Found by test_sqlite_diff (two lpc
 * connections in one process; a unix process commits and closes, and its
 * close, which could take EXCLUSIVE, checkpointed and deleted the WAL under
 * the lpc connections; the next write of theirs left the database
 * corrupt).
 *
 * Cases, each in WAL and rollback-journal (DELETE) mode, through lpc and,
 * as the control, through unix:
 *  1. locks: A0 holds SHARED (WAL: any connection that has read; DELETE:
 *     an open read transaction); A1 opens.  Another process (forked, only
 *     fcntl(F_GETLK)) must still see a read lock of ours on SQLite's
 *     SHARED bytes.
 *  2. the story (WAL only): A0 reads, A1 opens (no read), another process
 *     (this program exec()ed, through unix) commits rows that grow the file
 *     and closes; A0 switches to journal_mode=DELETE (it checkpoints the
 *     WAL through lpc and deletes it).  The database must hold every row,
 *     and integrity_check be ok.
 */
#include <sys/wait.h>

#include "sqlite_test.h"

#define SHARED_FIRST (0x40000000 + 2) /* PENDING_BYTE + 2 (SQLite's os.h) */
#define SHARED_SIZE 510

/* Does another process see a lock of ours on the SHARED bytes of path?
 * Return: 1 yes, 0 no. */
static int shared_held(const char *path)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		/* Only async-signal-safe calls: the parent has threads. */
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
				    .l_start = SHARED_FIRST, .l_len = SHARED_SIZE };
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		if (fd < 0 || fcntl(fd, F_GETLK, &fl) < 0)
			_exit(2);
		_exit(fl.l_type == F_UNLCK ? 0 : 1);
	}
	REQUIRE(waitpid(pid, &status, 0) == pid, "waitpid");
	REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) < 2, "the lock probe failed (0x%x)",
		status);
	return WEXITSTATUS(status);
}

static void locks(const char *dir, const char *vfs, const char *mode)
{
	char path[600], what[64];
	sqlite3 *a0, *a1;

	snprintf(path, sizeof(path), "%s/locks-%s-%s.db", dir, vfs, mode);
	snprintf(what, sizeof(what), "locks, %s, journal_mode=%s", vfs, mode);
	a0 = sqt_open(path, vfs);
	sqt_exec(a0, strcmp(mode, "wal") ? "PRAGMA journal_mode=delete" : "PRAGMA journal_mode=wal");
	sqt_exec(a0, "CREATE TABLE t(k INTEGER PRIMARY KEY, b BLOB); INSERT INTO t VALUES(1, x'00')");
	if (strcmp(mode, "wal"))
		sqt_exec(a0, "BEGIN");
	CHECK_EQ(sqt_int(a0, "SELECT count(*) FROM t"), 1, "%s: A0 reads", what);
	CHECK_EQ(shared_held(path), 1, "%s: A0 holds SHARED", what);
	a1 = sqt_open(path, vfs);
	CHECK_EQ(shared_held(path), 1, "%s: A0 still holds SHARED after A1's open", what);
	CHECK_EQ(sqt_int(a1, "SELECT count(*) FROM t"), 1, "%s: A1 reads", what);
	CHECK_EQ(shared_held(path), 1, "%s: and after A1's read", what);
	if (strcmp(mode, "wal"))
		sqt_exec(a0, "COMMIT");
	CHECK(sqlite3_close(a1) == SQLITE_OK, "%s: close A1", what);
	CHECK(sqlite3_close(a0) == SQLITE_OK, "%s: close A0", what);
}

static const char *self = "/proc/self/exe";

/* The other process: --child PATH: 40 rows of 3000 bytes through unix
 * (overflow pages, the file grows in the WAL), then close. */
static int child(const char *path)
{
	sqlite3 *db = sqt_open(path, "unix");

	sqt_exec(db, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40)"
		     " INSERT INTO t SELECT NULL, randomblob(3000) FROM n");
	return sqlite3_close(db) == SQLITE_OK ? 0 : 1;
}

static void story(const char *dir, const char *vfs)
{
	char path[600], what[64], ic[512];
	sqlite3 *a0, *a1;
	int status;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/story-%s.db", dir, vfs);
	snprintf(what, sizeof(what), "story, %s", vfs);
	a0 = sqt_open(path, vfs);
	sqt_exec(a0, "PRAGMA journal_mode=wal");
	sqt_exec(a0, "CREATE TABLE t(k INTEGER PRIMARY KEY, b BLOB)");
	CHECK_EQ(sqt_int(a0, "SELECT count(*) FROM t"), 0, "%s: A0 reads", what);
	a1 = sqt_open(path, vfs);
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		execl(self, self, "--child", path, (char *)NULL);
		_exit(4);
	}
	REQUIRE(waitpid(pid, &status, 0) == pid, "waitpid");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: the unix process committed",
	      what);
	/* Leaving WAL mode checkpoints through this process's cache. */
	CHECK(sqt_try(a0, "PRAGMA journal_mode=delete") == SQLITE_OK, "%s: journal_mode=delete: %s",
	      what, sqlite3_errmsg(a0));
	sqt_integrity(a0, ic, sizeof(ic));
	CHECK(!strcmp(ic, "ok"), "%s: integrity_check: %s", what, ic);
	if (!strcmp(ic, "ok"))
		CHECK_EQ(sqt_int(a0, "SELECT count(*) FROM t"), 40, "%s: every row is there", what);
	sqlite3_close(a1);
	sqlite3_close(a0);
	/* And as a fresh process sees the file. */
	a0 = sqt_open(path, "unix");
	sqt_integrity(a0, ic, sizeof(ic));
	CHECK(!strcmp(ic, "ok"), "%s: integrity_check of the file afterwards: %s", what, ic);
	sqlite3_close(a0);
}

int main(int argc, char **argv)
{
	const char *dir;

	if (argc == 3 && !strcmp(argv[1], "--child")) {
		sqt_register();
		return child(argv[2]);
	}
	dir = sqt_start(argc, argv, 120);
	locks(dir, "unix", "wal");
	locks(dir, "unix", "delete");
	locks(dir, "lpc", "wal");
	locks(dir, "lpc", "delete");
	story(dir, "unix");
	story(dir, "lpc");
	return tst_finish();
}
