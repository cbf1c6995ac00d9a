/* SPDX-License-Identifier: MIT */
/*
 * test_sqlite_crash.c - crash rounds: a child process commits transactions
 * through the VFS "lpc" (synchronous=FULL: a commit returns after
 * lpc_fsync) and reports each commit through a pipe once COMMIT returned;
 * the parent SIGKILLs it at a random moment, reopens the database through
 * lpc (rolling back a hot journal, or recovering the WAL) and checks that
 * PRAGMA integrity_check is ok, that every reported commit is there, and
 * that each transaction is whole (a row per commit, and a running total
 * updated in the same transaction).  Rounds in both journal modes (default
 * 20 each; LPC_SQLITE_CRASH_ROUNDS).  A small SQLite cache makes big
 * transactions spill pages into lpc before their commit.  Odd rounds run
 * child and reopen with lpc_coherence=exclusive: the reopen must find the
 * hot journal or WAL the child left (registry.c XJ1), with no lock of the
 * dead child's in the way.  Prints its seed.
 */
#include <sys/wait.h>

#include "sqlite_test.h"

static void child(const char *path, const char *mode, int fd, uint64_t seed)
{
	sqlite3 *db = sqt_open(path, "lpc");
	char sql[128];
	int64_t seq;

	snprintf(sql, sizeof(sql), "PRAGMA journal_mode=%s; PRAGMA synchronous=FULL; "
		 "PRAGMA cache_size=20", mode);
	sqt_exec(db, sql);
	seq = sqt_int(db, "SELECT coalesce(max(seq), 0) FROM t");
	for (;;) {
		uint64_t r = tst_rnd(&seed);
		int rows = (r & 7) ? 1 : 1 + (int)(r >> 8) % 60;

		seq++;
		sqt_exec(db, "BEGIN");
		snprintf(sql, sizeof(sql),
			 "INSERT INTO t VALUES(%lld, randomblob(%d))", (long long)seq,
			 (int)((r >> 16) % 6000));
		sqt_exec(db, sql);
		for (int i = 1; i < rows; i++)
			sqt_exec(db, "INSERT INTO pad VALUES(NULL, randomblob(3000))");
		if ((r >> 32) % 5 == 0)
			sqt_exec(db, "DELETE FROM pad WHERE id % 3 = 0");
		snprintf(sql, sizeof(sql), "UPDATE total SET n = n + 1, s = s + %lld",
			 (long long)seq);
		sqt_exec(db, sql);
		sqt_exec(db, "COMMIT");
		if (write(fd, &seq, sizeof(seq)) != sizeof(seq))
			_exit(3);
	}
}

static const char *self;

static void rounds(const char *dir, const char *mode, int n, uint64_t *rs)
{
	char path[600], xpath[700], what[64];
	int64_t reported = 0;
	sqlite3 *db;

	snprintf(path, sizeof(path), "%s/crash-%s.db", dir, mode);
	snprintf(xpath, sizeof(xpath), "file:%s?lpc_coherence=exclusive", path);
	db = sqt_open(path, "lpc");
	sqt_exec(db, "CREATE TABLE t(seq INTEGER PRIMARY KEY, b BLOB);"
		     "CREATE TABLE pad(id INTEGER PRIMARY KEY, b BLOB);"
		     "CREATE TABLE total(n INT, s INT); INSERT INTO total VALUES(0, 0)");
	sqlite3_close(db);
	for (int round = 0; round < n; round++) {
		int pfd[2], status;
		pid_t pid;
		int64_t seq, commits = 0;
		ssize_t r;

		const char *p = (round & 1) ? xpath : path;

		snprintf(what, sizeof(what), "%s round %d (%s)", mode, round,
			 (round & 1) ? "exclusive" : "detect");
		REQUIRE(pipe(pfd) == 0, "pipe");
		fflush(NULL);
		pid = fork();
		REQUIRE(pid >= 0, "fork");
		if (pid == 0) {
			/* A fresh process (exec): the parent's lpc cache has threads
			 * and locks that a forked child must not use. */
			char fdarg[16], seedarg[32];

			close(pfd[0]);
			snprintf(fdarg, sizeof(fdarg), "%d", pfd[1]);
			snprintf(seedarg, sizeof(seedarg), "%llu",
				 (unsigned long long)(tst_rnd(rs) ^ (uint64_t)round));
			execl(self, self, "--child", p, mode, fdarg, seedarg, (char *)NULL);
			_exit(4);
		}
		close(pfd[1]);
		tst_sleep_us(10000 + (unsigned)(tst_rnd(rs) % 90000));
		kill(pid, SIGKILL);
		while ((r = read(pfd[0], &seq, sizeof(seq))) == sizeof(seq)) {
			reported = seq;
			commits++;
		}
		close(pfd[0]);
		REQUIRE(waitpid(pid, &status, 0) == pid, "waitpid");
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		      "%s: the child died of SIGKILL (status 0x%x)", what, status);
		db = sqt_open(p, "lpc");
		sqt_check_integrity(db, what);
		{
			char sql[160];

			snprintf(sql, sizeof(sql), "SELECT count(*) FROM t WHERE seq <= %lld",
				 (long long)reported);
			CHECK_EQ(sqt_int(db, sql), reported, "%s: commits 1..%lld present", what,
				 (long long)reported);
		}
		CHECK_EQ(sqt_int(db, "SELECT n FROM total"), sqt_int(db, "SELECT count(*) FROM t"),
			 "%s: each transaction whole (count)", what);
		CHECK_EQ(sqt_int(db, "SELECT s FROM total"),
			 sqt_int(db, "SELECT coalesce(sum(seq), 0) FROM t"),
			 "%s: each transaction whole (sum)", what);
		if (round == 0 || round == n - 1)
			printf("%s: %lld commits reported this round, %lld in all\n", what,
			       (long long)commits, (long long)reported);
		CHECK(sqlite3_close(db) == SQLITE_OK, "%s: close", what);
	}
}

int main(int argc, char **argv)
{
	const char *dir, *e = getenv("LPC_SQLITE_CRASH_ROUNDS");
	int n = e && atoi(e) > 0 ? atoi(e) : 20;
	uint64_t rs;

	if (argc == 6 && !strcmp(argv[1], "--child")) {
		sqt_register();
		child(argv[2], argv[3], atoi(argv[4]), strtoull(argv[5], NULL, 0));
		return 0;
	}
	self = "/proc/self/exe";
	dir = sqt_start(argc, argv, 600);
	rs = tst_seed;
	rounds(dir, "delete", n, &rs);
	rounds(dir, "wal", n, &rs);
	return tst_finish();
}
