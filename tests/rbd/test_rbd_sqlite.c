// SPDX-License-Identifier: MIT
/*
 * test_rbd_sqlite.c - the SQLite VFS "lpc" over RBD images
 * (lpc_rbd_sqlite_opener, lpc_sqlite_set_opener) against the real
 * single-node cluster of tests/rbd/CMakeLists.txt.  Every check of a row
 * compares it with what the test wrote (the value is a function of the
 * row's id and the round that wrote it); images are looked at through
 * librbd directly.
 *
 *   test_rbd_sqlite CLUSTER_DIR CLUSTER_SCRIPT CASE
 *
 * Cases:
 *   sql     a database created on an image through file:rbd:lpc/NAME?vfs=lpc:
 *           rollback-journal transactions (the journal is an image while one
 *           runs, gone after the commit), one rolled back, an integrity
 *           check, close, reopen, every row compared (also by a second
 *           connection, whose write is SQLITE_BUSY while the first holds
 *           RESERVED); journal_mode=WAL
 *           without locking_mode=EXCLUSIVE stays "delete"; with it, WAL
 *           transactions (the WAL is an image), close (checkpointed, the WAL
 *           removed), reopen, every row compared; bad names (no pool, no
 *           slash, a missing image opened without SQLITE_OPEN_CREATE) are
 *           SQLITE_CANTOPEN with an open handle to close, never a crash; a
 *           journal whose open fails with -ENOSPC or -EDQUOT (a full
 *           cluster, injected in the opener) fails the statement with
 *           SQLITE_FULL and changes no row; the opener removed while the
 *           database is open fails a write, SQLite's log names the removed
 *           prefix, and set again the connection writes
 *   second  while this process has the database open, another process's
 *           open of it, read-write or read-only, is refused: SQLITE_BUSY
 *           ("database is locked")
 *   crash   another process commits rounds of rows, then, in an open
 *           transaction that has spilled pages to the image (small caches),
 *           is killed with SIGKILL; the reopened database (after the dead
 *           client's lock times out) rolls the hot journal back: it holds
 *           exactly the committed rows, passes the integrity check, and the
 *           journal image is gone
 * The child processes are this program again (exec, not a fork of a
 * process that runs librados's threads): cases child-open, child-open-ro,
 * child-crash.
 * Exit: 0 pass, 1 fail, 77 skip (no cluster).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rados/librados.h>
#include <rbd/librbd.h>
#include <sqlite3.h>

#include <lpc/lpc_rbd.h>
#include <lpc/lpc_sqlite.h>

static const char *cluster_dir, *cluster_script, *self;
static char conf_path[4096];

#define CHECK(cond, ...)                                                                    \
	do {                                                                                \
		if (!(cond)) {                                                              \
			fprintf(stderr, "test_rbd_sqlite: %s:%d: %s: ", __FILE__, __LINE__, \
				#cond);                                                     \
			fprintf(stderr, __VA_ARGS__);                                       \
			fputc('\n', stderr);                                                \
			exit(1);                                                            \
		}                                                                           \
	} while (0)

/* ---- images, through librbd directly ---- */

static rados_t d_cluster;
static rados_ioctx_t d_io;

static void direct_connect(void)
{
	CHECK(rados_create(&d_cluster, NULL) == 0, "rados_create");
	CHECK(rados_conf_read_file(d_cluster, conf_path) == 0, "conf %s", conf_path);
	rados_conf_set(d_cluster, "rados_osd_op_timeout", "30");
	int r = rados_connect(d_cluster);
	CHECK(r == 0, "rados_connect: %d", r);
	CHECK(rados_ioctx_create(d_cluster, "lpc", &d_io) == 0, "ioctx lpc");
}

static bool image_exists(const char *img)
{
	rbd_image_t im;
	int r = rbd_open_read_only(d_io, img, &im, NULL);

	CHECK(r == 0 || r == -ENOENT, "rbd_open_read_only %s: %d", img, r);
	if (r == 0)
		rbd_close(im);
	return r == 0;
}

/* A checksum of the image's bytes and its size (FNV-1a). */
static uint64_t image_sum(const char *img, uint64_t *size)
{
	rbd_image_t im;
	static char buf[1 << 20];
	uint64_t h = 0xcbf29ce484222325ull;

	CHECK(rbd_open_read_only(d_io, img, &im, NULL) == 0, "open %s", img);
	CHECK(rbd_get_size(im, size) == 0, "size");
	for (uint64_t off = 0; off < *size; off += sizeof(buf)) {
		size_t n = *size - off < sizeof(buf) ? (size_t)(*size - off) : sizeof(buf);
		CHECK(rbd_read(im, off, n, buf) == (ssize_t)n, "rbd_read %s", img);
		for (size_t i = 0; i < n; i++)
			h = (h ^ (unsigned char)buf[i]) * 0x100000001b3ull;
	}
	rbd_close(im);
	return h;
}

static void image_remove(const char *img)
{
	int r = rbd_remove(d_io, img);

	CHECK(r == 0 || r == -ENOENT, "rbd_remove %s: %d", img, r);
}

/* A database's images from an earlier run: gone. */
static void fresh(const char *img)
{
	char n[256];

	image_remove(img);
	snprintf(n, sizeof(n), "%s-journal", img);
	image_remove(n);
	snprintf(n, sizeof(n), "%s-wal", img);
	image_remove(n);
}

/* ---- SQLite ---- */

/* The RBD opener, wrapped so that case sql can make a journal's open fail
 * as a full cluster does (open_fail: a negative errno for names that end
 * in "-journal", 0 for none). */
static struct lpc_sqlite_opener rbd_op;
static int open_fail;

static int wrap_open(void *arg, struct lpc_cache *c, const char *name, int oflags, int create,
		     const struct lpc_backend_ops **ops, void **handle)
{
	size_t n = strlen(name);

	(void)arg;
	if (open_fail && n > 8 && !strcmp(name + n - 8, "-journal"))
		return open_fail;
	return rbd_op.open(rbd_op.arg, c, name, oflags, create, ops, handle);
}

static int wrap_exists(void *arg, const char *name)
{
	(void)arg;
	return rbd_op.exists(rbd_op.arg, name);
}

static int wrap_remove(void *arg, const char *name)
{
	(void)arg;
	return rbd_op.remove(rbd_op.arg, name);
}

static const struct lpc_sqlite_opener wrap_op = { wrap_open, wrap_exists, wrap_remove, NULL };

static void setup_vfs(void)
{
	CHECK(lpc_rbd_sqlite_opener(conf_path, &rbd_op) == 0, "lpc_rbd_sqlite_opener");
	CHECK(lpc_sqlite_set_opener(LPC_RBD_PREFIX, &wrap_op) == SQLITE_OK, "lpc_sqlite_set_opener");
}

/* SQLite's log (SQLITE_CONFIG_LOG): the VFS's line of a removed opener. */
static char no_opener_line[512];

static void sqlite_log(void *arg, int code, const char *msg)
{
	(void)arg;
	if (strstr(msg, "no opener for prefix") && !*no_opener_line)
		snprintf(no_opener_line, sizeof(no_opener_line), "%d %s", code, msg);
}

static int db_open(const char *img, const char *params, int flags, sqlite3 **db)
{
	char uri[512];

	snprintf(uri, sizeof(uri), "file:rbd:lpc/%s?vfs=lpc%s", img, params ? params : "");
	return sqlite3_open_v2(uri, db, flags | SQLITE_OPEN_URI, NULL);
}

static void exec_ok(sqlite3 *db, const char *sql)
{
	char *err = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &err);

	CHECK(rc == SQLITE_OK, "%s: %d %s", sql, rc, err ? err : "");
}

/* The one-value answer of sql, as text (static buffer). */
static const char *query1(sqlite3 *db, const char *sql)
{
	static char out[256];
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);

	CHECK(rc == SQLITE_OK, "prepare %s: %d %s", sql, rc, sqlite3_errmsg(db));
	rc = sqlite3_step(st);
	CHECK(rc == SQLITE_ROW, "%s: %d %s", sql, rc, sqlite3_errmsg(db));
	snprintf(out, sizeof(out), "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return out;
}

/* Row id's value as written in round r: 300 bytes that depend on both. */
static void value(int64_t id, int r, char *buf)
{
	uint64_t x = (uint64_t)id * 0x9e3779b97f4a7c15ull + (uint64_t)r * 0xbf58476d1ce4e5b9ull + 1;

	for (int i = 0; i < 300; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (char)('a' + x % 26);
	}
	buf[300] = '\0';
}

/* Rows [from, to) of round r, in the open transaction (or each its own). */
static void insert_rows(sqlite3 *db, int64_t from, int64_t to, int r)
{
	sqlite3_stmt *st;
	char v[301];

	CHECK(sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO t(id, r, v) VALUES (?, ?, ?)", -1, &st,
				 NULL) == SQLITE_OK,
	      "prepare insert: %s", sqlite3_errmsg(db));
	for (int64_t id = from; id < to; id++) {
		value(id, r, v);
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int(st, 2, r);
		sqlite3_bind_text(st, 3, v, 300, SQLITE_TRANSIENT);
		int rc = sqlite3_step(st);
		CHECK(rc == SQLITE_DONE, "insert %" PRId64 ": %d %s", id, rc, sqlite3_errmsg(db));
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
}

/* The table holds exactly rows [0, n) with round[id]'s values. */
static void compare_rows(sqlite3 *db, int64_t n, const int *round, const char *when)
{
	sqlite3_stmt *st;
	char v[301];
	int64_t seen = 0;
	int rc;

	CHECK(sqlite3_prepare_v2(db, "SELECT id, r, v FROM t ORDER BY id", -1, &st, NULL) ==
		      SQLITE_OK,
	      "%s: prepare select: %s", when, sqlite3_errmsg(db));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);

		CHECK(id == seen, "%s: row %" PRId64 " where %" PRId64 " was expected", when, id, seen);
		CHECK(sqlite3_column_int(st, 1) == round[id], "%s: row %" PRId64 " of round %d, expected %d",
		      when, id, sqlite3_column_int(st, 1), round[id]);
		value(id, round[id], v);
		CHECK(sqlite3_column_bytes(st, 2) == 300 &&
			      !memcmp(sqlite3_column_text(st, 2), v, 300),
		      "%s: row %" PRId64 "'s value differs", when, id);
		seen++;
	}
	CHECK(rc == SQLITE_DONE, "%s: select: %d %s", when, rc, sqlite3_errmsg(db));
	CHECK(seen == n, "%s: %" PRId64 " rows, expected %" PRId64, when, seen, n);
	sqlite3_finalize(st);
}

static void integrity(sqlite3 *db, const char *when)
{
	const char *r = query1(db, "PRAGMA integrity_check");

	CHECK(!strcmp(r, "ok"), "%s: integrity_check: %s", when, r);
}

/* ---- sql ---- */

static void bad_name(const char *uri, int flags)
{
	sqlite3 *db = NULL;
	int rc = sqlite3_open_v2(uri, &db, flags | SQLITE_OPEN_URI, NULL);

	printf("sql: %s: %d (%s)\n", uri, rc, db ? sqlite3_errmsg(db) : "no handle");
	CHECK(rc == SQLITE_CANTOPEN, "%s: %d, expected SQLITE_CANTOPEN", uri, rc);
	sqlite3_close(db);
}

static void case_sql(void)
{
	const int RW = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
	static int round[2000];
	sqlite3 *db;
	int64_t n = 0;

	fresh("sqldb");
	CHECK(db_open("sqldb", NULL, RW, &db) == SQLITE_OK, "open: %s", sqlite3_errmsg(db));
	CHECK(image_exists("sqldb"), "the database's image was not created");
	exec_ok(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, r INTEGER, v TEXT)");
	CHECK(!strcmp(query1(db, "PRAGMA journal_mode"), "delete"), "journal mode");
	/* Rollback journal: 4 transactions of 200 rows; the journal is an
	 * image while one runs, and gone after its commit (DELETE mode). */
	for (int r = 1; r <= 4; r++) {
		exec_ok(db, "BEGIN");
		insert_rows(db, n, n + 200, r);
		insert_rows(db, 0, 20, r); /* rewrite: journaled pages */
		for (int64_t id = 0; id < 20; id++)
			round[id] = r;
		for (int64_t id = n; id < n + 200; id++)
			round[id] = r;
		CHECK(image_exists("sqldb-journal"), "round %d: no journal image in the transaction", r);
		exec_ok(db, "COMMIT");
		CHECK(!image_exists("sqldb-journal"), "round %d: the journal image is left", r);
		n += 200;
	}
	/* One rolled back: nothing of it stays. */
	exec_ok(db, "BEGIN");
	insert_rows(db, n, n + 100, 9);
	insert_rows(db, 0, 50, 9);
	exec_ok(db, "ROLLBACK");
	compare_rows(db, n, round, "after the rollback");
	/* A full cluster cannot hold the journal's new image: the opener's
	 * -ENOSPC (or -EDQUOT) is SQLITE_FULL, "database or disk is full", as
	 * a full disk is for the unix VFS (remote.c open_error), never
	 * "unable to open database file"; nothing of the statement stays. */
	for (int k = 0; k < 2; k++) {
		char *err = NULL;
		int rc;

		open_fail = k ? -EDQUOT : -ENOSPC;
		rc = sqlite3_exec(db, "UPDATE t SET r = 8 WHERE id < 30", NULL, NULL, &err);
		open_fail = 0;
		printf("sql: journal open %s: %d (%s)\n", k ? "-EDQUOT" : "-ENOSPC", rc,
		       err ? err : "");
		CHECK(rc == SQLITE_FULL, "journal open %s: %d %s, expected SQLITE_FULL",
		      k ? "-EDQUOT" : "-ENOSPC", rc, err ? err : "");
		sqlite3_free(err);
		CHECK(!image_exists("sqldb-journal"), "a failed journal open left an image");
		compare_rows(db, n, round, "after a full cluster's failed statement");
	}
	/* The opener removed while the connection is open: its journal's name
	 * goes to the unix VFS as a local path and the statement fails, and
	 * SQLite's log says why (remote.c lpcs_opener_find); set again, the
	 * connection writes. */
	{
		char *err = NULL;
		int rc;

		CHECK(lpc_sqlite_set_opener(LPC_RBD_PREFIX, NULL) == SQLITE_OK, "unset the opener");
		rc = sqlite3_exec(db, "UPDATE t SET r = 8 WHERE id < 30", NULL, NULL, &err);
		printf("sql: opener unset: %d (%s); log: %s\n", rc, err ? err : "", no_opener_line);
		CHECK(rc != SQLITE_OK, "a write with the opener unset passed");
		CHECK(strstr(no_opener_line, "\"" LPC_RBD_PREFIX "\""), "no log line names the removed opener");
		sqlite3_free(err);
		CHECK(lpc_sqlite_set_opener(LPC_RBD_PREFIX, &wrap_op) == SQLITE_OK, "set it again");
		*no_opener_line = 0;
		compare_rows(db, n, round, "after the write without an opener");
		exec_ok(db, "UPDATE t SET r = r WHERE id < 30");
		CHECK(!*no_opener_line, "logged a missing opener once set again: %s", no_opener_line);
	}
	integrity(db, "rollback journal");
	CHECK(sqlite3_close(db) == SQLITE_OK, "close");
	CHECK(db_open("sqldb", NULL, SQLITE_OPEN_READWRITE, &db) == SQLITE_OK, "reopen: %s",
	      sqlite3_errmsg(db));
	compare_rows(db, n, round, "reopened");
	integrity(db, "reopened");
	/* A second connection of this process shares the file (one lpc file,
	 * the VFS's lock table): it reads every row, and while the first
	 * holds RESERVED its write is SQLITE_BUSY. */
	{
		sqlite3 *db2;
		int rc;

		CHECK(db_open("sqldb", NULL, SQLITE_OPEN_READWRITE, &db2) == SQLITE_OK,
		      "second connection: %s", sqlite3_errmsg(db2));
		compare_rows(db2, n, round, "second connection");
		exec_ok(db, "BEGIN IMMEDIATE");
		rc = sqlite3_exec(db2, "INSERT INTO t(id, r, v) VALUES (-1, 0, 'x')", NULL, NULL, NULL);
		CHECK(rc == SQLITE_BUSY, "a write beside another connection's RESERVED: %d", rc);
		exec_ok(db, "COMMIT");
		CHECK(sqlite3_close(db2) == SQLITE_OK, "close the second connection");
	}

	/* WAL needs shared memory, which the VFS has not for an opener's
	 * object: without locking_mode=EXCLUSIVE the mode stays. */
	CHECK(!strcmp(query1(db, "PRAGMA journal_mode=WAL"), "delete"),
	      "journal_mode=WAL without locking_mode=EXCLUSIVE");
	exec_ok(db, "PRAGMA locking_mode=EXCLUSIVE");
	CHECK(!strcmp(query1(db, "PRAGMA journal_mode=WAL"), "wal"),
	      "journal_mode=WAL in locking_mode=EXCLUSIVE");
	for (int r = 5; r <= 7; r++) {
		exec_ok(db, "BEGIN");
		insert_rows(db, n, n + 150, r);
		insert_rows(db, 100, 130, r);
		exec_ok(db, "COMMIT");
		for (int64_t id = 100; id < 130; id++)
			round[id] = r;
		for (int64_t id = n; id < n + 150; id++)
			round[id] = r;
		n += 150;
	}
	CHECK(image_exists("sqldb-wal"), "no WAL image in WAL mode");
	compare_rows(db, n, round, "WAL");
	integrity(db, "WAL");
	CHECK(sqlite3_close(db) == SQLITE_OK, "close in WAL mode");
	CHECK(!image_exists("sqldb-wal"), "the WAL image is left after the last close");
	/* Left in WAL mode: opened again only in locking_mode=EXCLUSIVE. */
	CHECK(db_open("sqldb", NULL, SQLITE_OPEN_READWRITE, &db) == SQLITE_OK, "reopen: %s",
	      sqlite3_errmsg(db));
	{
		sqlite3_stmt *st = NULL;
		int rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM t", -1, &st, NULL);

		if (rc == SQLITE_OK)
			rc = sqlite3_step(st);
		printf("sql: a WAL database read without locking_mode=EXCLUSIVE: %d (%s)\n", rc,
		       sqlite3_errmsg(db));
		CHECK(rc == SQLITE_CANTOPEN, "%d, expected SQLITE_CANTOPEN", rc);
		sqlite3_finalize(st);
	}
	exec_ok(db, "PRAGMA locking_mode=EXCLUSIVE");
	compare_rows(db, n, round, "WAL reopened");
	integrity(db, "WAL reopened");
	CHECK(!strcmp(query1(db, "PRAGMA journal_mode=DELETE"), "delete"), "back to DELETE");
	CHECK(sqlite3_close(db) == SQLITE_OK, "close");
	CHECK(db_open("sqldb", NULL, SQLITE_OPEN_READWRITE, &db) == SQLITE_OK, "reopen: %s",
	      sqlite3_errmsg(db));
	compare_rows(db, n, round, "reopened in DELETE mode");
	CHECK(sqlite3_close(db) == SQLITE_OK, "close");

	/* Bad names: a clear error, no crash. */
	bad_name("file:rbd:nopool?vfs=lpc", RW);
	bad_name("file:rbd:lpc/?vfs=lpc", RW);
	bad_name("file:rbd:lpc/a/b?vfs=lpc", RW);
	bad_name("file:rbd:no-such-pool/db?vfs=lpc", RW);
	image_remove("sqlnone");
	bad_name("file:rbd:lpc/sqlnone?vfs=lpc", SQLITE_OPEN_READWRITE);
	CHECK(!image_exists("sqlnone"), "an open without SQLITE_OPEN_CREATE created the image");
	fresh("sqldb");
}

/* ---- second ---- */

/* Runs this program's child case; returns its exit status. */
static pid_t spawn(const char *child_case, int out_fd)
{
	pid_t pid = fork();

	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		if (out_fd >= 0)
			dup2(out_fd, 3);
		execl(self, self, cluster_dir, cluster_script, child_case, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static int wait_status(pid_t pid)
{
	int st;

	CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
	return st;
}

/* The child of "second": opens the database and reads; exit code is the
 * SQLite result of the first step that failed (0 if none did). */
static int child_open(int flags)
{
	sqlite3 *db;
	sqlite3_stmt *st = NULL;
	int rc;

	setup_vfs();
	rc = db_open("sqlsecond", NULL, flags, &db);
	printf("second (child): open: %d (%s)\n", rc, sqlite3_errmsg(db));
	if (rc == SQLITE_OK) {
		rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM t", -1, &st, NULL);
		if (rc == SQLITE_OK)
			rc = sqlite3_step(st) == SQLITE_ROW ? SQLITE_OK : sqlite3_errcode(db);
		printf("second (child): read: %d (%s)\n", rc, sqlite3_errmsg(db));
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return rc;
}

static void case_second(void)
{
	sqlite3 *db;
	int st;

	fresh("sqlsecond");
	CHECK(db_open("sqlsecond", NULL, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &db) ==
		      SQLITE_OK,
	      "open: %s", sqlite3_errmsg(db));
	exec_ok(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, r INTEGER, v TEXT)");
	insert_rows(db, 0, 10, 1);
	fflush(stdout);
	st = wait_status(spawn("child-open", -1));
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == SQLITE_BUSY,
	      "another process's open while this one has it: status %#x, expected exit %d (SQLITE_BUSY)",
	      st, SQLITE_BUSY);
	/* A read-only open too: the VFS opens the image read-write, with its
	 * lock, so that no reader caches what a writer changes. */
	st = wait_status(spawn("child-open-ro", -1));
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == SQLITE_BUSY,
	      "another process's read-only open: status %#x, expected exit %d (SQLITE_BUSY)", st,
	      SQLITE_BUSY);
	CHECK(!strcmp(query1(db, "SELECT count(*) FROM t"), "10"), "this process still reads");
	CHECK(sqlite3_close(db) == SQLITE_OK, "close");
	fresh("sqlsecond");
}

/* ---- crash ---- */

#define CRASH_ROUNDS 5
#define CRASH_ROWS 300

/* The child of "crash": rounds of CRASH_ROWS rows, each committed and then
 * reported on fd 3 (its round number); then a transaction of many rows
 * and rewrites, reported (-1) once it has spilled, and never committed:
 * the parent kills it. */
static int child_crash(void)
{
	sqlite3 *db;
	int r, stop = -1;

	setup_vfs();
	/* A 1 MiB lpc cache and 20 SQLite pages: the open transaction's pages
	 * leave both caches for the image before the kill. */
	CHECK(db_open("sqlcrash", "&lpc_cache_mb=1", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
		      &db) == SQLITE_OK,
	      "open");
	exec_ok(db, "PRAGMA cache_size=20");
	exec_ok(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, r INTEGER, v TEXT)");
	for (r = 1; r <= CRASH_ROUNDS; r++) {
		exec_ok(db, "BEGIN");
		insert_rows(db, (r - 1) * CRASH_ROWS, r * CRASH_ROWS, r);
		insert_rows(db, 0, 50, r);
		exec_ok(db, "COMMIT");
		CHECK(write(3, &r, sizeof(r)) == sizeof(r), "report");
	}
	exec_ok(db, "BEGIN");
	insert_rows(db, 0, (int64_t)CRASH_ROUNDS * CRASH_ROWS, 99); /* rewrite every row */
	insert_rows(db, (int64_t)CRASH_ROUNDS * CRASH_ROWS, (int64_t)CRASH_ROUNDS * CRASH_ROWS + 2000,
		    99);
	CHECK(write(3, &stop, sizeof(stop)) == sizeof(stop), "report");
	pause();
	return 0;
}

static void case_crash(void)
{
	static int round[CRASH_ROUNDS * CRASH_ROWS];
	int p[2], r, last = 0, st, rc;
	sqlite3 *db = NULL;

	fresh("sqlcrash");
	CHECK(pipe(p) == 0, "pipe");
	fflush(stdout);
	pid_t pid = spawn("child-crash", p[1]);
	close(p[1]);
	while (read(p[0], &r, sizeof(r)) == sizeof(r) && r > 0)
		last = r;
	CHECK(r == -1 && last == CRASH_ROUNDS, "the child stopped after round %d (%d)", last, r);
	kill(pid, SIGKILL);
	st = wait_status(pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "child status %#x", st);
	close(p[0]);
	CHECK(image_exists("sqlcrash-journal"), "no journal image after the kill");
	uint64_t size0, size1, sum0 = image_sum("sqlcrash", &size0), sum1;
	/* The dead child's locks (database and journal images) hold until
	 * the cluster times its watches out (lpc_rbd_open(3): 30 s). */
	time_t t0 = time(NULL);
	for (;;) {
		sqlite3_stmt *s = NULL;

		rc = db_open("sqlcrash", NULL, SQLITE_OPEN_READWRITE, &db);
		if (rc == SQLITE_OK) {
			rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM t", -1, &s, NULL);
			if (rc == SQLITE_OK)
				rc = sqlite3_step(s) == SQLITE_ROW ? SQLITE_OK : sqlite3_errcode(db);
			sqlite3_finalize(s);
		}
		if (rc == SQLITE_OK || rc != SQLITE_BUSY || time(NULL) - t0 > 120)
			break;
		sqlite3_close(db);
		db = NULL;
		sleep(2);
	}
	printf("crash: reopened after %ld s: %d\n", (long)(time(NULL) - t0), rc);
	CHECK(rc == SQLITE_OK, "reopen after the kill: %d %s", rc, sqlite3_errmsg(db));
	for (int k = 0; k < CRASH_ROUNDS * CRASH_ROWS; k++)
		round[k] = k / CRASH_ROWS + 1;
	for (int k = 0; k < 50; k++)
		round[k] = CRASH_ROUNDS;
	compare_rows(db, (int64_t)CRASH_ROUNDS * CRASH_ROWS, round, "after the kill");
	integrity(db, "after the kill");
	CHECK(!image_exists("sqlcrash-journal"), "the hot journal was not rolled back and removed");
	/* The killed transaction had reached the image (spilled, written
	 * back from the small cache): the rollback changed it. */
	sum1 = image_sum("sqlcrash", &size1);
	printf("crash: the database image: %" PRIu64 " bytes at the kill, %" PRIu64 " after the rollback\n",
	       size0, size1);
	CHECK(sum0 != sum1, "the image at the kill held nothing of the killed transaction (no rollback tested)");
	CHECK(sqlite3_close(db) == SQLITE_OK, "close");
	fresh("sqlcrash");
}

int main(int argc, char **argv)
{
	int rc = 0;

	if (argc < 4) {
		fprintf(stderr, "usage: %s CLUSTER_DIR CLUSTER_SCRIPT sql|second|crash\n", argv[0]);
		return 2;
	}
	self = "/proc/self/exe";
	cluster_dir = argv[1];
	cluster_script = argv[2];
	snprintf(conf_path, sizeof(conf_path), "%s/ceph.conf", cluster_dir);
	if (access(conf_path, R_OK) != 0) {
		printf("test_rbd_sqlite: skipped: no test cluster at %s (ceph-mon/ceph-osd not installed: scripts/deps.sh)\n",
		       cluster_dir);
		return 77;
	}
	if (!strcmp(argv[3], "child-open"))
		return child_open(SQLITE_OPEN_READWRITE);
	if (!strcmp(argv[3], "child-open-ro"))
		return child_open(SQLITE_OPEN_READONLY);
	if (!strcmp(argv[3], "child-crash"))
		return child_crash();
	printf("test_rbd_sqlite %s\n", argv[3]);
	fflush(stdout);
	sqlite3_config(SQLITE_CONFIG_LOG, sqlite_log, NULL);
	direct_connect();
	setup_vfs();
	if (!strcmp(argv[3], "sql"))
		case_sql();
	else if (!strcmp(argv[3], "second"))
		case_second();
	else if (!strcmp(argv[3], "crash"))
		case_crash();
	else {
		fprintf(stderr, "unknown case %s\n", argv[3]);
		return 2;
	}
	rados_ioctx_destroy(d_io);
	rados_shutdown(d_cluster);
	printf("test_rbd_sqlite %s: ok\n", argv[3]);
	return rc;
}
