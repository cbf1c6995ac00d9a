/* SPDX-License-Identifier: MIT */
/*
 * test_sqlite_truncate_ckpt.c - another process's wal_checkpoint(TRUNCATE)
 * must be seen by this process's lpc pages (detect mode, SQ3), also when an
 * lpc page is larger than a SQLite page.
 *
 * The story (found by test_sqlite_diff): a new WAL database of two SQLite
 * pages (4 KiB each).  This process, through lpc with 16 KiB pages, reads
 * page 1: lpc caches its first page, 16 KiB, the file's 8 KiB and zeros
 * past its end.  It commits rows (the frames go to the WAL; the database
 * file is not written).  Another process (through unix) runs
 * wal_checkpoint(TRUNCATE): it writes the frames into the database file,
 * which grows past 16 KiB, and empties the WAL (a new salt, nBackfill 0).
 * This process then reads pages 3 and 4 from the database file: they must
 * be the checkpoint's, not lpc's zeros.  On main it reads zeros
 * ("database disk image is malformed", btreeInitPage of page 4).  With
 * lpc's pages no larger than SQLite's, or with a PASSIVE, FULL or RESTART
 * checkpoint instead, it reads correctly.  The likely cause: the pair
 * (salt, nBackfill) after a TRUNCATE checkpoint looks like a restart of our
 * own WAL (SQ3c: salt one higher, nBackfill 0, our pages recorded at an
 * empty WAL), so nothing is dropped and lpc's size stays the old one.
 * The same story through unix alone is the control.
 */
#include <sys/wait.h>

#include "sqlite_test.h"

static const char *self = "/proc/self/exe";

/* The other process: --child PATH ACTION (create | checkpoint), unix. */
static int child(const char *path, const char *action)
{
	sqlite3 *db = sqt_open(path, "unix");

	if (!strcmp(action, "create"))
		sqt_exec(db, "PRAGMA page_size=4096; PRAGMA journal_mode=wal;"
			     "CREATE TABLE t(k INTEGER PRIMARY KEY, v INT, b TEXT); CREATE INDEX t_v ON t(v)");
	else
		sqt_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)");
	return sqlite3_close(db) == SQLITE_OK ? 0 : 1;
}

static int spawn(const char *path, const char *action)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		execl(self, self, "--child", path, action, (char *)NULL);
		_exit(4);
	}
	REQUIRE(waitpid(pid, &status, 0) == pid, "waitpid");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void story(const char *dir, const char *vfs)
{
	char path[600], what[64], ic[512];
	sqlite3 *db;

	snprintf(path, sizeof(path), "%s/%s.db", dir, vfs);
	snprintf(what, sizeof(what), "through %s", vfs);
	REQUIRE(spawn(path, "create") == 0, "%s: create", what);
	db = sqt_open(path, vfs);
	sqt_exec(db, "PRAGMA cache_size=10");
	CHECK_EQ(sqt_int(db, "SELECT count(*) FROM t"), 0, "%s: we read the empty table", what);
	sqt_exec(db, "BEGIN IMMEDIATE;"
		     "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 95)"
		     " INSERT INTO t SELECT i, i * 7919, printf('%.*c', 200 + i * 13 % 1500, 'x') FROM n;"
		     "COMMIT");
	CHECK_EQ(spawn(path, "checkpoint"), 0, "%s: the other process's TRUNCATE checkpoint", what);
	sqt_integrity(db, ic, sizeof(ic));
	CHECK(!strcmp(ic, "ok"), "%s: integrity_check after the checkpoint: %s", what, ic);
	if (!strcmp(ic, "ok"))
		CHECK_EQ(sqt_int(db, "SELECT count(*) FROM t"), 95, "%s: every row", what);
	sqlite3_close(db);
}

int main(int argc, char **argv)
{
	const char *dir;

	if (argc == 4 && !strcmp(argv[1], "--child"))
		return child(argv[2], argv[3]);
	/* lpc's pages four times SQLite's: before the cache is made (the first
	 * open through lpc). */
	setenv("LPC_SQLITE_PAGE_KB", "16", 1);
	dir = sqt_start(argc, argv, 120);
	story(dir, "unix");
	story(dir, "lpc");
	return tst_finish();
}
