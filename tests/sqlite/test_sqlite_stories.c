/* SPDX-License-Identifier: MIT */
/*
 * test_sqlite_stories.c - the multi-process defects of the VFS in detect
 * mode, each as a deterministic story with its answer on "unix" (file.c,
 * SQ1-SQ7).  Another process is this program exec()ed again (--child);
 * where a race needs a window, a thread is parked at a point of the VFS
 * (lpcs_test_hook, sqlite_int.h); where a process must die right after a
 * commit point, the unix VFS's system call is replaced (xSetSystemCall)
 * by one that raises SIGKILL after the call returns.
 *  wal-recreated   a WAL deleted and recreated empty by another process
 *                  between two sessions of ours: its commit must be seen
 *  ckpt-published  a checkpoint here (synchronous=OFF) publishes nBackfill:
 *                  a reader in another process must then read the new rows
 *  off-killed      rollback journal, synchronous=OFF: killed right after
 *                  the journal's unlink, the commit must be in the file
 *  nshared-race    a connection's SHARED is dropped and the thread parked
 *                  before the VFS counts it: another process commits, a
 *                  second connection here must read the commit
 *  hot-shrink      a unix writer spills, grows the file and dies; our hot
 *                  journal rollback must cut the file to its old size
 *  wal-close-size  another process grows the file by a checkpoint; our
 *                  last close must leave its pages in the file
 *  unlock-failed   our commit's write-back fails (EIO injected): the
 *                  dirty pages left in lpc must never be read or written
 *                  over another process's later commit
 *  ckpt-failed     the same for a WAL checkpoint whose write-back fails
 *  close-neighbours SQLite pages of 1 KiB, lpc's of 4 KiB: while our read
 *                  transaction holds its mark, another process backfills
 *                  some SQLite pages of an lpc page we hold; our last
 *                  close's checkpoint writes the others and must not
 *                  write our stale copy of the first back over them
 *  heap-wal        as wal-recreated, then a connection here in
 *                  locking_mode=EXCLUSIVE (a heap-memory wal-index, no
 *                  read lock to check at) must read the other's commit
 *  stale-pair      one process: a reader of ours parked after its read
 *                  lock, before its check, while our checkpoint backfills
 *                  and records the new nBackfill: the reader must drop no
 *                  page (a pair loaded before the lock was older)
 * Usage: test_sqlite_stories [--seed N] [STORY...] (all by default).
 */
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache/cache.h"
#include "sqlite/sqlite_int.h"
#include "sqlite_test.h"

static const char *self = "/proc/self/exe";

static int spawn(const char *action, const char *path, long long arg)
{
	char a[32];
	int status;
	pid_t pid;

	snprintf(a, sizeof(a), "%lld", arg);
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		execl(self, self, "--child", action, path, a, (char *)NULL);
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

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* --- the kill right after a unix system call on a journal --- */
static const char *kill_suffix = "-journal";
static int (*real_unlink)(const char *);

static int unlink_then_die(const char *path)
{
	int rc = real_unlink(path);
	size_t n = strlen(path), k = strlen(kill_suffix);

	if (n > k && !strcmp(path + n - k, kill_suffix))
		raise(SIGKILL);
	return rc;
}

/* --- a gate for a thread parked at a hook point --- */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_point = -1;      /* the point armed */
static pthread_t g_thread;    /* the thread that parks there */
static bool g_parked, g_open; /* parked now; released */

static void park_hook(int point, const char *name)
{
	(void)name;
	if (point != g_point || !pthread_equal(pthread_self(), g_thread))
		return;
	pthread_mutex_lock(&g_mu);
	if (point == g_point) {
		g_point = -1; /* once */
		g_parked = true;
		pthread_cond_broadcast(&g_cv);
		while (!g_open)
			pthread_cond_wait(&g_cv, &g_mu);
	}
	pthread_mutex_unlock(&g_mu);
}

static void gate_arm(int point, pthread_t t)
{
	pthread_mutex_lock(&g_mu);
	g_point = point;
	g_thread = t;
	g_parked = g_open = false;
	pthread_mutex_unlock(&g_mu);
	atomic_store(&lpcs_test_hook, park_hook);
}

static void gate_wait_parked(void)
{
	pthread_mutex_lock(&g_mu);
	while (!g_parked)
		pthread_cond_wait(&g_cv, &g_mu);
	pthread_mutex_unlock(&g_mu);
}

static void gate_open(void)
{
	pthread_mutex_lock(&g_mu);
	g_open = true;
	pthread_cond_broadcast(&g_cv);
	pthread_mutex_unlock(&g_mu);
}

/* A thread that runs one SQL string on its connection. */
struct job {
	sqlite3 *db;
	const char *sql;
	int rc;
	pthread_t t;
	pthread_mutex_t mu;
};

static void *job_main(void *arg)
{
	struct job *j = arg;

	/* The gate is armed for this thread once it exists: wait for that. */
	pthread_mutex_lock(&j->mu);
	pthread_mutex_unlock(&j->mu);
	j->rc = sqt_try(j->db, j->sql);
	return NULL;
}

static void job_start(struct job *j, sqlite3 *db, const char *sql, int point)
{
	j->db = db;
	j->sql = sql;
	pthread_mutex_init(&j->mu, NULL);
	pthread_mutex_lock(&j->mu);
	REQUIRE(pthread_create(&j->t, NULL, job_main, j) == 0, "pthread_create");
	gate_arm(point, j->t);
	pthread_mutex_unlock(&j->mu);
}

static int job_join(struct job *j)
{
	pthread_join(j->t, NULL);
	atomic_store(&lpcs_test_hook, NULL);
	pthread_mutex_destroy(&j->mu);
	return j->rc;
}

/* --- the other process --- */
static int child_check(sqlite3 *db, const char *sql, long long want)
{
	char ic[256];
	long long got = sqt_int(db, sql);

	sqt_integrity(db, ic, sizeof(ic));
	if (got != want || strcmp(ic, "ok")) {
		fprintf(stderr, "child: %s = %lld (want %lld), integrity %s\n", sql, got, want, ic);
		return 1;
	}
	return 0;
}

static int child(const char *action, const char *path, long long arg)
{
	sqlite3 *db;
	int rc = 0;

	if (!strcmp(action, "update-k150")) { /* in place, not page 1 */
		db = sqt_open(path, "unix");
		sqt_exec(db, "UPDATE t SET v = 7 WHERE k = 150");
	} else if (!strcmp(action, "count-v1")) {
		db = sqt_open(path, "unix");
		rc = child_check(db, "SELECT count(*) FROM t WHERE v = 1", arg);
	} else if (!strcmp(action, "try-update-v5")) { /* 5: SQLITE_BUSY */
		db = sqt_open(path, "unix");
		sqlite3_busy_timeout(db, 200);
		rc = sqt_try(db, "UPDATE t SET v = 5");
		rc = rc == SQLITE_OK ? 0 : rc == SQLITE_BUSY ? 5 : 1;
	} else if (!strcmp(action, "update-v5-ckpt")) {
		db = sqt_open(path, "unix");
		sqt_exec(db, "UPDATE t SET v = 5");
		sqt_int(db, "PRAGMA wal_checkpoint(PASSIVE)"); /* busy or not */
	} else if (!strcmp(action, "update-v1")) {
		db = sqt_open(path, "unix");
		sqt_exec(db, "UPDATE t SET v = 1");
	} else if (!strcmp(action, "off-commit")) {
		sqlite3_vfs *u = sqlite3_vfs_find("unix");

		real_unlink = (int (*)(const char *))u->xGetSystemCall(u, "unlink");
		db = sqt_open(path, "lpc");
		sqt_exec(db, "PRAGMA synchronous=OFF");
		REQUIRE(u->xSetSystemCall(u, "unlink", (sqlite3_syscall_ptr)unlink_then_die) ==
				SQLITE_OK,
			"xSetSystemCall(unlink)");
		sqt_exec(db, "UPDATE t SET v = 1");
		fprintf(stderr, "child: the commit returned, not killed\n");
		return 3;
	} else if (!strcmp(action, "spill-die")) {
		db = sqt_open(path, "unix");
		sqt_exec(db, "PRAGMA cache_size=4; BEGIN;"
			     "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)"
			     " INSERT INTO pad SELECT NULL, randomblob(900) FROM n");
		raise(SIGKILL);
		return 3;
	} else if (!strcmp(action, "grow-ckpt")) {
		db = sqt_open(path, "unix");
		sqt_exec(db, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)"
			     " INSERT INTO pad SELECT NULL, randomblob(1000) FROM n");
		if (sqt_int(db, "PRAGMA wal_checkpoint(TRUNCATE)") != 0)
			rc = 2;
	} else if (!strcmp(action, "blocks-v")) { /* rows of blocks of 16 with k/16 % 2 == arg % 2 */
		char sql[200];

		db = sqt_open(path, "unix");
		snprintf(sql, sizeof(sql), "UPDATE t SET v = %lld WHERE (k / 16) %% 2 = %lld", arg,
			 arg % 2);
		sqt_exec(db, sql);
		if (arg % 2 == 0 && sqt_int(db, "PRAGMA wal_checkpoint(PASSIVE)") != 0)
			rc = 2; /* the checkpoint was busy */
	} else {
		return 4;
	}
	if (sqlite3_close(db) != SQLITE_OK)
		rc = 1;
	return rc;
}

/* A database of table t(k, v, pad): rows k = 1..rows, v = 0, through unix. */
static void make_db(const char *path, const char *mode, int rows)
{
	sqlite3 *db = sqt_open(path, "unix");
	char sql[300];

	snprintf(sql, sizeof(sql),
		 "PRAGMA journal_mode=%s; CREATE TABLE t(k INTEGER PRIMARY KEY, v INT, p BLOB);"
		 "CREATE INDEX tv ON t(v); CREATE TABLE pad(id INTEGER PRIMARY KEY, b BLOB);"
		 "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d)"
		 " INSERT INTO t SELECT i, 0, randomblob(100) FROM n",
		 mode, rows);
	sqt_exec(db, sql);
	REQUIRE(sqlite3_close(db) == SQLITE_OK, "close");
}

static void story_wal_recreated(const char *dir)
{
	char path[600], wal[620];
	struct lpc_stats st0, st1;
	sqlite3 *idle, *db;

	snprintf(path, sizeof(path), "%s/recreated.db", dir);
	snprintf(wal, sizeof(wal), "%s-wal", path);
	make_db(path, "wal", 300);
	/* The file's change time old enough to be trusted (SQ3d). */
	usleep(200 * 1000);
	idle = sqt_open(path, "lpc"); /* keeps our record of the file */
	db = sqt_open(path, "lpc");
	CHECK_EQ(sqt_int(db, "SELECT v FROM t WHERE k = 150"), 0, "wal-recreated: first read");
	REQUIRE(sqlite3_close(db) == SQLITE_OK, "close");
	REQUIRE(!exists(wal), "wal-recreated: our close deleted the WAL");
	/* Nobody changed the file: a new session here keeps lpc's pages. */
	lpc_sqlite_stats(&st0);
	db = sqt_open(path, "lpc");
	CHECK_EQ(sqt_int(db, "SELECT v FROM t WHERE k = 150"), 0, "wal-recreated: second read");
	REQUIRE(sqlite3_close(db) == SQLITE_OK, "close");
	lpc_sqlite_stats(&st1);
	CHECK_EQ(st1.misses - st0.misses, 0, "wal-recreated: an unchanged file keeps lpc's pages");
	REQUIRE(spawn("update-k150", path, 0) == 0, "wal-recreated: the other commit");
	REQUIRE(!exists(wal), "wal-recreated: its close deleted the WAL");
	CHECK_EQ(sqt_int(idle, "SELECT v FROM t WHERE k = 150"), 7,
		 "wal-recreated: the other process's commit is read (unix: 7)");
	sqt_check_integrity(idle, "wal-recreated");
	REQUIRE(sqlite3_close(idle) == SQLITE_OK, "close");
}

static void story_ckpt_published(const char *dir)
{
	char path[600];
	struct job j;
	sqlite3 *db;

	snprintf(path, sizeof(path), "%s/ckpt.db", dir);
	make_db(path, "wal", 2000);
	db = sqt_open(path, "lpc");
	sqt_exec(db, "PRAGMA synchronous=OFF; UPDATE t SET v = 1");
	job_start(&j, db, "PRAGMA wal_checkpoint(PASSIVE)", LPCS_HOOK_CKPT_END);
	gate_wait_parked(); /* nBackfill published, WAL_CKPT_LOCK still held */
	CHECK_EQ(spawn("count-v1", path, 2000), 0,
		 "ckpt-published: a reader in another process during our checkpoint");
	gate_open();
	CHECK_EQ(job_join(&j), SQLITE_OK, "ckpt-published: the checkpoint");
	REQUIRE(sqlite3_close(db) == SQLITE_OK, "close");
	CHECK_EQ(spawn("count-v1", path, 2000), 0, "ckpt-published: after our close");
}

static void story_off_killed(const char *dir)
{
	char path[600];
	sqlite3 *db;
	int st;

	snprintf(path, sizeof(path), "%s/off.db", dir);
	make_db(path, "delete", 2000);
	st = spawn("off-commit", path, 0);
	REQUIRE(st == 128 + SIGKILL, "off-killed: the child died at the unlink (%d)", st);
	db = sqt_open(path, "unix");
	CHECK_EQ(sqt_int(db, "SELECT count(*) FROM t WHERE v = 1"), 2000,
		 "off-killed: the commit whose journal was deleted (unix: all 2000)");
	sqt_check_integrity(db, "off-killed");
	REQUIRE(sqlite3_close(db) == SQLITE_OK, "close");
}

static void story_nshared_race(const char *dir)
{
	char path[600];
	sqlite3 *a, *b;
	struct job j;

	snprintf(path, sizeof(path), "%s/nshared.db", dir);
	make_db(path, "delete", 300);
	a = sqt_open(path, "lpc");
	b = sqt_open(path, "lpc");
	CHECK_EQ(sqt_int(b, "SELECT count(*) FROM t WHERE v = 0"), 300, "nshared-race: cached");
	job_start(&j, a, "SELECT count(*) FROM t", LPCS_HOOK_UNLOCKED);
	gate_wait_parked(); /* a's SHARED dropped, the VFS has not counted it */
	REQUIRE(spawn("update-v1", path, 0) == 0, "nshared-race: the other commit");
	CHECK_EQ(sqt_int(b, "SELECT count(*) FROM t WHERE v = 1"), 300,
		 "nshared-race: the second connection reads the commit (unix: 300)");
	gate_open();
	CHECK_EQ(job_join(&j), SQLITE_OK, "nshared-race: the parked read");
	sqt_check_integrity(b, "nshared-race");
	sqlite3_close(a);
	sqlite3_close(b);
}

static void story_hot_shrink(const char *dir)
{
	char path[600];
	uint64_t before;
	sqlite3 *db;
	int st;

	snprintf(path, sizeof(path), "%s/hot.db", dir);
	make_db(path, "delete", 300);
	db = sqt_open(path, "lpc");
	CHECK_EQ(sqt_int(db, "SELECT count(*) FROM t"), 300, "hot-shrink: cached");
	before = file_size(path);
	st = spawn("spill-die", path, 0);
	REQUIRE(st == 128 + SIGKILL, "hot-shrink: the writer died (%d)", st);
	REQUIRE(file_size(path) > before, "hot-shrink: the writer grew the file");
	CHECK_EQ(sqt_int(db, "SELECT count(*) FROM pad"), 0, "hot-shrink: rolled back");
	sqt_check_integrity(db, "hot-shrink");
	CHECK_EQ(file_size(path), before,
		 "hot-shrink: the rollback cut the file to its size (unix: %llu)",
		 (unsigned long long)before);
	REQUIRE(sqlite3_close(db) == SQLITE_OK, "close");
}

static void story_wal_close_size(const char *dir)
{
	char path[600];
	sqlite3 *db;

	snprintf(path, sizeof(path), "%s/closesize.db", dir);
	make_db(path, "wal", 10);
	db = sqt_open(path, "lpc");
	/* We write the file once (lpc keeps its size from then on). */
	sqt_exec(db, "INSERT INTO t VALUES(11, 0, x'00'); PRAGMA wal_checkpoint(TRUNCATE)");
	CHECK_EQ(sqt_int(db, "SELECT count(*) FROM t"), 11, "wal-close-size: read");
	CHECK_EQ(spawn("grow-ckpt", path, 0), 0, "wal-close-size: the other grew and checkpointed");
	CHECK_EQ(sqt_int(db, "SELECT count(*) FROM pad WHERE length(b) = 1000"), 2000,
		 "wal-close-size: we read its rows");
	REQUIRE(sqlite3_close(db) == SQLITE_OK, "close");
	db = sqt_open(path, "unix");
	CHECK_EQ(sqt_int(db, "SELECT count(*) FROM pad WHERE length(b) = 1000"), 2000,
		 "wal-close-size: after our close (unix: 2000)");
	sqt_check_integrity(db, "wal-close-size");
	REQUIRE(sqlite3_close(db) == SQLITE_OK, "close");
}

static void story_unlock_failed(const char *dir)
{
	struct lpc_io_fault f = { .ops = LPC_IO_WRITE, .err = EIO };
	struct lpc_cache *c;
	char path[600];
	sqlite3 *db;
	int rc, other;

	snprintf(path, sizeof(path), "%s/unlockfail.db", dir);
	make_db(path, "delete", 300);
	db = sqt_open(path, "lpc");
	CHECK_EQ(sqt_int(db, "SELECT count(*) FROM t WHERE v = 0"), 300, "unlock-failed: cached");
	c = lpcs_cache_peek();
	REQUIRE(c && lpc_io_fault_set(&c->io, &f) == 0, "lpc_io_fault_set");
	rc = sqt_try(db, "UPDATE t SET v = 1");
	CHECK(rc != SQLITE_OK, "unlock-failed: the commit fails (%d)", rc);
	/* The write-back failed at the commit, at its rollback and at the
	 * unlock: lpc holds dirty pages (the rolled-back originals). */
	other = spawn("try-update-v5", path, 0);
	CHECK(other == 0 || other == 5, "unlock-failed: the other process's update (%d)", other);
	lpc_io_fault_set(&c->io, NULL);
	/* Whatever the other process did, we read it. */
	CHECK_EQ(sqt_int(db, "SELECT count(*) FROM t WHERE v = 5"), other == 0 ? 300 : 0,
		 "unlock-failed: we read the other process's update (it returned %d)", other);
	if (other == 5) {
		CHECK_EQ(spawn("try-update-v5", path, 0), 0,
			 "unlock-failed: once our write-back succeeds, the other commits");
		CHECK_EQ(sqt_int(db, "SELECT count(*) FROM t WHERE v = 5"), 300,
			 "unlock-failed: and we read it");
	}
	sqt_check_integrity(db, "unlock-failed");
	REQUIRE(sqlite3_close(db) == SQLITE_OK, "close");
	db = sqt_open(path, "unix");
	CHECK_EQ(sqt_int(db, "SELECT count(*) FROM t WHERE v = 5"), 300,
		 "unlock-failed: no stale page of ours overwrote the other's commit");
	sqt_check_integrity(db, "unlock-failed (unix)");
	REQUIRE(sqlite3_close(db) == SQLITE_OK, "close");
}

static void story_ckpt_failed(const char *dir)
{
	struct lpc_io_fault f = { .ops = LPC_IO_WRITE, .err = EIO };
	struct lpc_cache *c;
	char path[600];
	sqlite3 *db;
	int rc;

	snprintf(path, sizeof(path), "%s/ckptfail.db", dir);
	make_db(path, "wal", 300);
	db = sqt_open(path, "lpc");
	sqt_exec(db, "PRAGMA wal_autocheckpoint=0; UPDATE t SET v = 1");
	c = lpcs_cache_peek();
	REQUIRE(c && lpc_io_fault_set(&c->io, &f) == 0, "lpc_io_fault_set");
	rc = sqt_try(db, "PRAGMA wal_checkpoint(PASSIVE)");
	CHECK(rc != SQLITE_OK, "ckpt-failed: the checkpoint fails (%d)", rc);
	lpc_io_fault_set(&c->io, NULL);
	/* Another process commits the same pages and checkpoints if it can. */
	CHECK_EQ(spawn("update-v5-ckpt", path, 0), 0, "ckpt-failed: the other commit");
	CHECK_EQ(sqt_int(db, "SELECT count(*) FROM t WHERE v = 5"), 300,
		 "ckpt-failed: we read the other process's commit (unix: 300)");
	sqt_check_integrity(db, "ckpt-failed");
	REQUIRE(sqlite3_close(db) == SQLITE_OK, "close");
	db = sqt_open(path, "unix");
	CHECK_EQ(sqt_int(db, "SELECT count(*) FROM t WHERE v = 5"), 300,
		 "ckpt-failed: no stale page of ours overwrote the other's commit");
	sqt_check_integrity(db, "ckpt-failed (unix)");
	REQUIRE(sqlite3_close(db) == SQLITE_OK, "close");
}

static void story_close_neighbours(const char *dir)
{
	char path[600];
	sqlite3 *db;

	snprintf(path, sizeof(path), "%s/neighbours.db", dir);
	db = sqt_open(path, "unix");
	sqt_exec(db, "PRAGMA page_size=1024; PRAGMA journal_mode=wal;"
		     "CREATE TABLE t(k INTEGER PRIMARY KEY, v INT, p BLOB);"
		     "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)"
		     " INSERT INTO t SELECT i, 0, zeroblob(200) FROM n");
	REQUIRE(sqlite3_close(db) == SQLITE_OK, "close");
	REQUIRE(lpcs_page_size > 1024, "close-neighbours: lpc's pages larger than SQLite's");
	db = sqt_open(path, "lpc");
	CHECK_EQ(sqt_int(db, "SELECT count(*) FROM t WHERE v = 0"), 2000,
		 "close-neighbours: every lpc page cached");
	/* The other process's first commit, odd blocks (frames 1..K). */
	REQUIRE(spawn("blocks-v", path, 1) == 0, "close-neighbours: the first commit");
	sqt_exec(db, "BEGIN");
	CHECK_EQ(sqt_int(db, "SELECT count(*) FROM t WHERE v = (k / 16) % 2"), 2000,
		 "close-neighbours: our read transaction (mark K) sees it");
	/* Its second commit, even blocks, and a checkpoint that stops at our
	 * mark: the odd blocks' pages are in the file, the even ones' only in
	 * the WAL. */
	REQUIRE(spawn("blocks-v", path, 2) == 0, "close-neighbours: the second commit");
	sqt_exec(db, "COMMIT");
	/* Our last close checkpoints the even blocks' pages through lpc. */
	REQUIRE(sqlite3_close(db) == SQLITE_OK, "close");
	db = sqt_open(path, "unix");
	CHECK_EQ(sqt_int(db, "SELECT count(*) FROM t WHERE v = 2 - (k / 16) % 2"), 2000,
		 "close-neighbours: both commits kept (unix: every row)");
	sqt_check_integrity(db, "close-neighbours");
	REQUIRE(sqlite3_close(db) == SQLITE_OK, "close");
}

static void story_heap_wal(const char *dir)
{
	char path[600];
	sqlite3 *idle, *db;

	snprintf(path, sizeof(path), "%s/heap.db", dir);
	make_db(path, "wal", 300);
	usleep(200 * 1000); /* the change time old enough to be trusted (SQ3d) */
	idle = sqt_open(path, "lpc"); /* keeps our record of the file */
	db = sqt_open(path, "lpc");
	CHECK_EQ(sqt_int(db, "SELECT v FROM t WHERE k = 150"), 0, "heap-wal: first read");
	REQUIRE(sqlite3_close(db) == SQLITE_OK, "close");
	REQUIRE(spawn("update-k150", path, 0) == 0, "heap-wal: the other commit");
	db = sqt_open(path, "lpc");
	sqt_exec(db, "PRAGMA locking_mode=EXCLUSIVE");
	CHECK_EQ(sqt_int(db, "SELECT v FROM t WHERE k = 150"), 7,
		 "heap-wal: the other process's commit is read (unix: 7)");
	sqt_check_integrity(db, "heap-wal");
	REQUIRE(sqlite3_close(db) == SQLITE_OK, "close");
	REQUIRE(sqlite3_close(idle) == SQLITE_OK, "close");
}

static void story_stale_pair(const char *dir)
{
	char path[600];
	struct lpc_stats st0, st1;
	sqlite3 *a, *b;
	int nlog = -1, nckpt = -1;
	struct job j;

	snprintf(path, sizeof(path), "%s/stale-pair.db", dir);
	make_db(path, "wal", 2000);
	a = sqt_open(path, "lpc");
	b = sqt_open(path, "lpc");
	sqt_exec(b, "PRAGMA wal_autocheckpoint=0; UPDATE t SET v = 1");
	CHECK_EQ(sqt_int(a, "SELECT count(*) FROM t WHERE v = 1"), 2000, "stale-pair: cached");
	lpc_sqlite_stats(&st0);
	job_start(&j, a, "SELECT count(*) FROM t WHERE v = 1", LPCS_HOOK_READ_CHECK);
	gate_wait_parked(); /* a holds its read lock (mark: the WAL's end) */
	CHECK_EQ(sqlite3_wal_checkpoint_v2(b, NULL, SQLITE_CHECKPOINT_PASSIVE, &nlog, &nckpt),
		 SQLITE_OK, "stale-pair: our checkpoint");
	CHECK(nlog > 0 && nckpt == nlog, "stale-pair: every frame backfilled (%d of %d)", nckpt,
	      nlog);
	gate_open();
	CHECK_EQ(job_join(&j), SQLITE_OK, "stale-pair: the parked read");
	lpc_sqlite_stats(&st1);
	CHECK_EQ(st1.invalidated - st0.invalidated, 0,
		 "stale-pair: our own checkpoint drops no page (unix: no cache to drop)");
	CHECK_EQ(sqt_int(a, "SELECT count(*) FROM t WHERE v = 1"), 2000, "stale-pair: the rows");
	sqt_check_integrity(a, "stale-pair");
	REQUIRE(sqlite3_close(a) == SQLITE_OK, "close");
	REQUIRE(sqlite3_close(b) == SQLITE_OK, "close");
}

static const struct {
	const char *name;
	void (*fn)(const char *dir);
} stories[] = {
	{ "wal-recreated", story_wal_recreated }, { "ckpt-published", story_ckpt_published },
	{ "off-killed", story_off_killed },       { "nshared-race", story_nshared_race },
	{ "hot-shrink", story_hot_shrink },       { "wal-close-size", story_wal_close_size },
	{ "unlock-failed", story_unlock_failed }, { "ckpt-failed", story_ckpt_failed },
	{ "close-neighbours", story_close_neighbours }, { "heap-wal", story_heap_wal },
	{ "stale-pair", story_stale_pair },
};

int main(int argc, char **argv)
{
	const char *dir;
	int named = 0;

	if (argc == 5 && !strcmp(argv[1], "--child")) {
		sqt_register();
		return child(argv[2], argv[3], atoll(argv[4]));
	}
	setenv("LPC_SQLITE_COHERENCE", "detect", 1);
	/* tst_init takes --seed; the story names are the other words. */
	{
		char *targv[4] = { argv[0], NULL, NULL, NULL };
		int targc = 1;

		for (int i = 1; i < argc; i++)
			if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
				targv[targc++] = argv[i];
				targv[targc++] = argv[++i];
			}
		dir = sqt_start(targc, targv, 240);
	}
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seed")) {
			i++;
			continue;
		}
		named++;
		for (size_t s = 0; s < sizeof(stories) / sizeof(stories[0]); s++)
			if (!strcmp(argv[i], stories[s].name)) {
				printf("story %s\n", stories[s].name);
				stories[s].fn(dir);
			}
	}
	for (size_t s = 0; !named && s < sizeof(stories) / sizeof(stories[0]); s++) {
		printf("story %s\n", stories[s].name);
		fflush(stdout);
		stories[s].fn(dir);
	}
	return tst_finish();
}
