/* SPDX-License-Identifier: MIT */
/*
 * att_sqlite_kill - the SQLite extension without writeback by age
 * (LPC_DIRTY_EXPIRE_NEVER, 83eeff9): a child commits transactions through
 * "lpc", tells the parent after each commit returned, then sits in an open,
 * uncommitted transaction (its pages dirty in lpc) or idles, and is killed
 * with SIGKILL.  The parent reopens through unix: every committed row must
 * be there and the integrity check "ok", as with unix.  Modes: DELETE, WAL
 * (autocheckpoint 8 pages), each with synchronous=OFF and NORMAL, each with
 * lpc_coherence=detect and exclusive, and locking_mode=EXCLUSIVE.
 * Exit 1 when any committed transaction is lost or the file is malformed.
 */
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>

#include <lpc/lpc_sqlite.h>

#include "../attack/att.h"

#define TX 40

static void exec_or_die(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "child: %s: %s\n", sql, err ? err : "?");
		_exit(3);
	}
}

static void child(const char *uri, const char *vfs, const char *jm, const char *sync,
		  const char *lock, int fd, int tail)
{
	sqlite3 *db = NULL;
	char sql[512];

	if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI,
			    vfs) != SQLITE_OK)
		_exit(3);
	snprintf(sql, sizeof(sql),
		 "PRAGMA locking_mode=%s; PRAGMA journal_mode=%s; PRAGMA synchronous=%s;"
		 "PRAGMA cache_size=20; PRAGMA wal_autocheckpoint=8;"
		 "CREATE TABLE IF NOT EXISTS t(k INTEGER PRIMARY KEY, v BLOB);",
		 lock, jm, sync);
	exec_or_die(db, sql);
	for (int k = 1; k <= TX; k++) {
		snprintf(sql, sizeof(sql),
			 "BEGIN; INSERT INTO t VALUES(%d, randomblob(3000)); "
			 "UPDATE t SET v = randomblob(2000) WHERE k = %d; COMMIT;", k, k / 2);
		exec_or_die(db, sql);
		if (write(fd, &k, sizeof(k)) != sizeof(k))
			_exit(3);
	}
	if (tail == 1) /* an open transaction larger than SQLite's cache */
		exec_or_die(db, "BEGIN; INSERT INTO t SELECT k + 1000, randomblob(3000) FROM t;");
	pause();
	_exit(0);
}

static int run(const char *dir, int n, const char *vfs, const char *jm, const char *sync,
	       const char *coh, const char *lock, int tail)
{
	char path[300], uri[400];
	int pfd[2], last = 0, k, st;
	sqlite3 *db = NULL;
	sqlite3_stmt *s;
	int rows = -1;
	char ok[64] = "?";
	pid_t pid;

	snprintf(path, sizeof(path), "%s/db%d", dir, n);
	snprintf(uri, sizeof(uri), "file:%s?lpc_coherence=%s", path, coh);
	if (pipe(pfd))
		return 1;
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		child(uri, vfs, jm, sync, lock, pfd[1], tail);
	}
	close(pfd[1]);
	while (read(pfd[0], &k, sizeof(k)) == sizeof(k)) {
		last = k;
		if (k == TX)
			break;
	}
	usleep(300000); /* the tail: an open transaction, or idle */
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	close(pfd[0]);
	sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, "unix");
	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM t WHERE k <= 1000", -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW)
		rows = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW)
		snprintf(ok, sizeof(ok), "%s", (const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	sqlite3_close(db);
	printf("  %-4s %-6s sync=%-6s coherence=%-9s locking=%-9s tail=%s: committed %d, rows %d, integrity %s\n",
	       vfs, jm, sync, coh, lock, tail ? "open-tx" : "idle", last, rows, ok);
	ATT_CHECK(rows == last && !strcmp(ok, "ok"), "committed transactions lost or file malformed");
	return 0;
}

int main(void)
{
	const char *dir = att_tmpdir();
	const char *jms[] = {"DELETE", "WAL"}, *syncs[] = {"OFF", "NORMAL"};
	const char *cohs[] = {"detect", "exclusive"}, *locks[] = {"NORMAL", "EXCLUSIVE"};
	int n = 0;

	if (lpc_sqlite_register(0) != SQLITE_OK)
		return 77;
	for (int j = 0; j < 2; j++)
		for (int s = 0; s < 2; s++)
			for (int c = 0; c < 2; c++)
				for (int l = 0; l < 2; l++)
					for (int t = 0; t < 2; t++) {
						run(dir, n++, "lpc", jms[j], syncs[s], cohs[c], locks[l], t);
						if (c == 0)
							run(dir, n++, "unix", jms[j], syncs[s], cohs[c], locks[l], t);
					}
	att_cleanup();
	printf("%s\n", att_fails ? "DEFECT" : "ok");
	return att_fails ? 1 : 0;
}
