/* SPDX-License-Identifier: MIT */
/*
 * sql_crashcommit.c - a process killed (SIGKILL) right after commits of a
 * database on an RBD image: is every committed transaction there?
 * (exit 0: held for every journal mode tried).
 *
 * Contract (lpc_sqlite_set_opener(3)): "A journal, WAL or super-journal is
 * not cached: each xWrite calls the backend's write and is on the storage
 * when it returns, as a unix VFS write is in the kernel, so a process
 * killed after it loses nothing of it"; lpc_sqlite(7) DURABILITY: "A
 * process killed (the application's crash) or an OS crash loses what it
 * loses with unix" (a kill loses no commit with unix, whatever the
 * synchronous level), and its table's commit points (SQLITE_FCNTL_SYNC,
 * CKPT_DONE).  remote.c RJ1.
 *
 * For each mode a child process (this program again, exec'd) commits
 * rounds of 20 rows (3000-byte blobs, a 1 MiB lpc cache, cache_size=20:
 * pages leave both caches) and reports each commit on a pipe; the parent
 * kills it with SIGKILL after round 6, reads every round the child had
 * acknowledged, waits for the dead client's lock to time out, reopens:
 * every acknowledged round must be there whole (count = max(round) * 20,
 * max(round) >= the last acknowledged) and integrity_check "ok".
 * Modes: off (journal_mode=DELETE, synchronous=OFF), trunc
 * (locking_mode=EXCLUSIVE, journal_mode=TRUNCATE, synchronous=OFF), wal
 * (locking_mode=EXCLUSIVE, journal_mode=WAL, synchronous=NORMAL,
 * wal_autocheckpoint=8: checkpoints between the commits), waloff (the same
 * at synchronous=OFF).
 *
 * Run: LPC_CEPH_CONF=DIR/ceph.conf out-asan/sql_crashcommit [MODE...]
 * (about 40 s: the dead client's watch times out after 30 s).
 */
#include "sql.h"

#define ROWS 20
#define KILL_AFTER 6

static const char *modes[] = { "off", "trunc", "wal", "waloff" };
static const char *pragmas[] = {
	"PRAGMA cache_size=20; PRAGMA journal_mode=DELETE; PRAGMA synchronous=OFF;",
	"PRAGMA cache_size=20; PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=TRUNCATE; PRAGMA synchronous=OFF;",
	"PRAGMA cache_size=20; PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA wal_autocheckpoint=8;",
	"PRAGMA cache_size=20; PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; PRAGMA wal_autocheckpoint=8;",
};

static int child(int m, const char *img, int fd)
{
	sqlite3 *db = NULL;
	char sql[256];

	sq_vfs();
	if (sq_open(img, "&lpc_cache_mb=1", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &db) != SQLITE_OK) {
		fprintf(stderr, "child %s: open: %s\n", modes[m], sqlite3_errmsg(db));
		return 2;
	}
	if (sq_exec(db, pragmas[m]) ||
	    sq_exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, round INT, pad BLOB)"))
		return 2;
	for (int r = 1; r <= 1000; r++) {
		if (sq_exec(db, "BEGIN"))
			return 2;
		for (int i = 0; i < ROWS; i++) {
			snprintf(sql, sizeof(sql), "INSERT INTO t(round, pad) VALUES(%d, randomblob(3000))", r);
			if (sq_exec(db, sql))
				return 2;
		}
		/* and an update of old rows: pages the journal must protect */
		snprintf(sql, sizeof(sql), "UPDATE t SET pad = randomblob(3000) WHERE id %% 7 = %d", r % 7);
		if (sq_exec(db, sql) || sq_exec(db, "COMMIT"))
			return 2;
		if (write(fd, &r, sizeof(r)) != sizeof(r))
			return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int nm = 0, which[4], fails = 0;
	pid_t pid[4];
	int last[4] = { 0 };
	char img[4][64];

	sq_conf_get();
	if (argc == 5 && !strcmp(argv[1], "child"))
		return child(atoi(argv[2]), argv[3], atoi(argv[4]));
	for (int m = 0; m < 4; m++) {
		bool want = argc < 2;

		for (int a = 1; a < argc; a++)
			want |= !strcmp(argv[a], modes[m]);
		if (want)
			which[nm++] = m;
	}
	sq_direct();
	setvbuf(stdout, NULL, _IONBF, 0);
	for (int i = 0; i < nm; i++) {
		int m = which[i], p[2], r;
		char fds[16], ms[16];

		snprintf(img[i], sizeof(img[i]), "att2-cc%s-%d", modes[m], (int)getpid());
		sq_fresh(img[i]);
		CHECK(pipe(p) == 0);
		snprintf(fds, sizeof(fds), "%d", p[1]);
		snprintf(ms, sizeof(ms), "%d", m);
		pid[i] = fork();
		if (pid[i] == 0) {
			close(p[0]);
			execl("/proc/self/exe", argv[0], "child", ms, img[i], fds, (char *)NULL);
			_exit(3);
		}
		close(p[1]);
		while (read(p[0], &r, sizeof(r)) == sizeof(r)) {
			last[i] = r;
			if (r == KILL_AFTER)
				kill(pid[i], SIGKILL);
		}
		int st;
		waitpid(pid[i], &st, 0);
		close(p[0]);
		printf("%s: child killed (status %#x) after acknowledging round %d\n", modes[m], st, last[i]);
		if (last[i] < KILL_AFTER) {
			fprintf(stderr, "%s: the child stopped early\n", modes[m]);
			return 2;
		}
	}
	sq_vfs();
	for (int i = 0; i < nm; i++) {
		int m = which[i], rc;
		sqlite3 *db = NULL;
		time_t t0 = time(NULL);
		int64_t cnt = 0, mx;
		char ic[256];

		for (;;) {
			rc = sq_open(img[i], NULL, SQLITE_OPEN_READWRITE, &db);
			if (rc == SQLITE_OK && m >= 2)
				rc = sq_exec(db, "PRAGMA locking_mode=EXCLUSIVE");
			if (rc == SQLITE_OK) {
				cnt = sq_int(db, "SELECT count(*) FROM t");
				rc = cnt == INT64_MIN ? sqlite3_errcode(db) : SQLITE_OK;
			}
			if (rc != SQLITE_BUSY || time(NULL) - t0 > 120)
				break;
			sqlite3_close(db);
			db = NULL;
			sleep(2);
		}
		if (rc != SQLITE_OK) {
			printf("%s: FAIL: reopen after %ld s: %d %s\n", modes[m], (long)(time(NULL) - t0), rc,
			       sqlite3_errmsg(db));
			fails++;
			sqlite3_close(db);
			continue;
		}
		mx = sq_int(db, "SELECT max(round) FROM t");
		sq_integrity(db, ic, sizeof(ic));
		bool ok = mx >= last[i] && cnt == mx * ROWS && !strcmp(ic, "ok");
		printf("%s: %s: reopened after %ld s: %lld rows, max round %lld (acknowledged %d), integrity %s\n",
		       modes[m], ok ? "ok" : "FAIL", (long)(time(NULL) - t0), (long long)cnt, (long long)mx,
		       last[i], ic);
		fails += !ok;
		sqlite3_close(db);
		sq_fresh(img[i]);
	}
	return fails ? 1 : 0;
}
