/* SPDX-License-Identifier: MIT */
/*
 * test_sqlite_multiproc.c - coherence with other processes (file.c, SQ1-SQ7).
 * This process keeps one connection through "lpc" open on a database for
 * the whole test, with its pages in lpc's cache.  Each round another
 * process (this program exec()ed again, through "unix" or through its own
 * "lpc" cache) changes the database: it adds 1 to a counter, inserts rows
 * (the file grows) and, in WAL mode, checkpoints so that the database file
 * itself changes behind our cache (half the rounds PASSIVE: the WAL keeps
 * its salt, only nBackfill moves).  Then this process must read the new
 * counter and row count, with integrity_check ok: never a stale page.
 * The other way round too: this process writes through lpc (half the rounds
 * with synchronous=OFF, so only SQ1's write-back at unlock makes the pages
 * reach the file) and the other process, through unix, must read it.
 * Both journal modes.  Prints its seed.
 *
 * Exclusive coherence (lpc_coherence=exclusive, registry.c): while this
 * process has the database open so, another process is refused: through
 * lpc in exclusive mode its open fails with SQLITE_BUSY and the VFS's line
 * in sqlite3_log; through unix or lpc in detect mode its first statement
 * is SQLITE_BUSY.  Once this process closes, the other opens and reads.
 */
#include <sys/wait.h>

#include "sqlite_test.h"

/* The other process: --child PATH VFS MODE ACTION EXPECT.  ACTION "write":
 * counter += 1, 50 rows, WAL checkpoint (EXPECT 1: PASSIVE, which moves only
 * nBackfill; 0: TRUNCATE, which also restarts the WAL with a new salt);
 * "read": exits 0 if the counter is EXPECT and integrity_check is ok. */
static int logged_refusal;

static void log_cb(void *arg, int code, const char *msg)
{
	if (code == SQLITE_BUSY && strstr(msg, "lpc_sqlite:") && strstr(msg, "exclusive"))
		logged_refusal = 1;
}

/* "refused": the open (lpc exclusive: EXPECT 1) or the first read fails
 * with SQLITE_BUSY. */
static int child_refused(const char *path, const char *vfs, long long at_open)
{
	sqlite3 *db = NULL;
	int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, vfs);

	if (at_open) {
		if (rc != SQLITE_BUSY || !logged_refusal) {
			fprintf(stderr, "child: open through %s = %d (want SQLITE_BUSY), logged %d\n",
				vfs, rc, logged_refusal);
			return 1;
		}
		sqlite3_close(db);
		return 0;
	}
	if (rc != SQLITE_OK) {
		fprintf(stderr, "child: open through %s = %d\n", vfs, rc);
		return 1;
	}
	rc = sqlite3_exec(db, "SELECT count(*) FROM kv", NULL, NULL, NULL);
	sqlite3_close(db);
	if (rc != SQLITE_BUSY) {
		fprintf(stderr, "child: read through %s = %d (want SQLITE_BUSY)\n", vfs, rc);
		return 1;
	}
	return 0;
}

static int child(const char *path, const char *vfs, const char *mode, const char *action,
		 long long expect)
{
	sqlite3 *db;
	char sql[160];

	if (!strcmp(action, "refused"))
		return child_refused(path, vfs, expect);
	db = sqt_open(path, vfs);

	if (!strcmp(action, "read")) {
		char ic[256];

		sqt_integrity(db, ic, sizeof(ic));
		if (strcmp(ic, "ok") || sqt_int(db, "SELECT v FROM kv WHERE k = 1") != expect) {
			fprintf(stderr, "child: integrity %s, counter %lld, want %lld\n", ic,
				(long long)sqt_int(db, "SELECT v FROM kv WHERE k = 1"), expect);
			return 1;
		}
		sqlite3_close(db);
		return 0;
	}
	snprintf(sql, sizeof(sql), "PRAGMA journal_mode=%s", mode);
	sqt_exec(db, sql);
	sqt_exec(db, "BEGIN IMMEDIATE; UPDATE kv SET v = v + 1 WHERE k = 1;"
		     "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50)"
		     " INSERT INTO pad SELECT NULL, randomblob(700) FROM n;"
		     "UPDATE pad SET b = randomblob(300) WHERE id % 7 = 0; COMMIT");
	if (!strcmp(mode, "wal"))
		sqt_exec(db, expect ? "PRAGMA wal_checkpoint(PASSIVE)" : "PRAGMA wal_checkpoint(TRUNCATE)");
	return sqlite3_close(db) == SQLITE_OK ? 0 : 1;
}

static const char *self = "/proc/self/exe";

static int spawn(const char *path, const char *vfs, const char *mode, const char *action,
		 long long expect)
{
	char e[32];
	int status;
	pid_t pid;

	snprintf(e, sizeof(e), "%lld", expect);
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		execl(self, self, "--child", path, vfs, mode, action, e, (char *)NULL);
		_exit(4);
	}
	REQUIRE(waitpid(pid, &status, 0) == pid, "waitpid");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void rounds(const char *dir, const char *mode, int n, uint64_t *rs)
{
	char path[600], sql[128], what[96];
	int64_t v = 0, rows = 0;
	sqlite3 *db;

	snprintf(path, sizeof(path), "%s/mp-%s.db", dir, mode);
	db = sqt_open(path, "lpc");
	snprintf(sql, sizeof(sql), "PRAGMA journal_mode=%s; PRAGMA cache_size=10", mode);
	sqt_exec(db, sql);
	sqt_exec(db, "CREATE TABLE kv(k INTEGER PRIMARY KEY, v INT);"
		     "CREATE TABLE pad(id INTEGER PRIMARY KEY, b BLOB);"
		     "INSERT INTO kv VALUES(1, 0)");
	for (int r = 0; r < n; r++) {
		const char *vfs = (tst_rnd(rs) & 1) ? "unix" : "lpc";

		snprintf(what, sizeof(what), "%s round %d (other process through %s)", mode, r, vfs);
		/* Our pages of the whole file are cached. */
		CHECK_EQ(sqt_int(db, "SELECT v FROM kv WHERE k = 1"), v, "%s: before", what);
		CHECK_EQ(sqt_int(db, "SELECT count(*) FROM pad WHERE length(b) > 0"), rows,
			 "%s: before", what);
		/* Half the WAL rounds the other's checkpoint is PASSIVE: only
		 * nBackfill tells us the file changed (SQ3b). */
		CHECK_EQ(spawn(path, vfs, mode, "write", (r >> 2) & 1), 0,
			 "%s: the other process wrote", what);
		v++;
		rows += 50;
		CHECK_EQ(sqt_int(db, "SELECT v FROM kv WHERE k = 1"), v,
			 "%s: we read its counter", what);
		CHECK_EQ(sqt_int(db, "SELECT count(*) FROM pad WHERE length(b) > 0"), rows,
			 "%s: we read its rows", what);
		sqt_check_integrity(db, what);
		/* And the other way: we write, it reads through unix. */
		sqt_exec(db, (r & 1) ? "PRAGMA synchronous=OFF" : "PRAGMA synchronous=FULL");
		sqt_exec(db, "UPDATE kv SET v = v + 1 WHERE k = 1");
		v++;
		if (!strcmp(mode, "wal") && (r & 2))
			sqt_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)");
		CHECK_EQ(spawn(path, "unix", mode, "read", v), 0,
			 "%s: the other process reads our write (synchronous=%s)", what,
			 (r & 1) ? "OFF" : "FULL");
	}
	CHECK(sqlite3_close(db) == SQLITE_OK, "%s: close", mode);
}

static void refused(const char *dir, const char *mode)
{
	char path[600], uri[700], detect[720], what[64];
	sqlite3 *db;

	snprintf(path, sizeof(path), "%s/excl-%s.db", dir, mode);
	snprintf(uri, sizeof(uri), "file:%s?lpc_coherence=exclusive", path);
	snprintf(detect, sizeof(detect), "file:%s?lpc_coherence=detect", path);
	snprintf(what, sizeof(what), "exclusive/%s", mode);
	db = sqt_open(uri, "lpc");
	sqt_exec(db, strcmp(mode, "wal") ? "PRAGMA journal_mode=delete" : "PRAGMA journal_mode=wal");
	sqt_exec(db, "CREATE TABLE kv(k INTEGER PRIMARY KEY, v INT); INSERT INTO kv VALUES(1, 41);"
		     "PRAGMA synchronous=OFF; UPDATE kv SET v = 42");
	CHECK_EQ(spawn(uri, "lpc", mode, "refused", 1), 0,
		 "%s: lpc exclusive in another process: open is SQLITE_BUSY, logged", what);
	CHECK_EQ(spawn(path, "unix", mode, "refused", 0), 0,
		 "%s: unix in another process: SQLITE_BUSY", what);
	CHECK_EQ(spawn(detect, "lpc", mode, "refused", 0), 0,
		 "%s: lpc detect in another process: SQLITE_BUSY", what);
	CHECK_EQ(sqt_int(db, "SELECT v FROM kv WHERE k = 1"), 42, "%s: we still read", what);
	CHECK(sqlite3_close(db) == SQLITE_OK, "%s: close", what);
	/* Closed: the lock is gone, and the synchronous=OFF write reached the
	 * file before it went. */
	CHECK_EQ(spawn(uri, "lpc", mode, "read", 42), 0, "%s: after close, another reads", what);
	CHECK_EQ(spawn(path, "unix", mode, "read", 42), 0, "%s: after close, unix reads", what);
}

int main(int argc, char **argv)
{
	const char *dir;
	uint64_t rs;

	if (argc == 7 && !strcmp(argv[1], "--child")) {
		sqlite3_config(SQLITE_CONFIG_LOG, log_cb, NULL);
		sqt_register();
		return child(argv[2], argv[3], argv[4], argv[5], atoll(argv[6]));
	}
	dir = sqt_start(argc, argv, 300);
	rs = tst_seed;
	rounds(dir, "delete", SQT_SCALE(12), &rs);
	rounds(dir, "wal", SQT_SCALE(12), &rs);
	refused(dir, "delete");
	refused(dir, "wal");
	return tst_finish();
}
