/* SPDX-License-Identifier: MIT */
/*
 * test_sqlite_diff.c - the multi-process differential test of the SQLite
 * VFS: two or three worker processes (this program exec()ed with --worker)
 * change one database through "lpc" (detect coherence; now and then a
 * phase in which one process alone holds it with lpc_coherence=exclusive)
 * and "unix" in a random mix, and after every step every connection's view
 * is compared with a reference the parent keeps (what was committed), and
 * one connection's PRAGMA integrity_check must be "ok".
 *
 * The parent never opens the database while workers run: it sends one
 * command at a time to one worker (a line on its stdin) and reads the
 * reply (a line on its stdout), so the reference is exact.  A step is one
 * of:
 *   - a transaction (BEGIN IMMEDIATE; inserts, in-place updates, updates
 *     that resize a row, deletes, bulk inserts that grow the file past the
 *     connection's small cache_size so pages spill; sometimes a SAVEPOINT
 *     rolled back inside it, sometimes the whole transaction rolled back),
 *     under a random PRAGMA synchronous (OFF, NORMAL, FULL);
 *   - PRAGMA wal_checkpoint(PASSIVE | FULL | RESTART | TRUNCATE);
 *   - PRAGMA journal_mode = DELETE | TRUNCATE | PERSIST | WAL;
 *   - VACUUM, in rollback mode sometimes after a new page_size;
 *   - a connection closed or opened (each worker has two slots, both
 *     through its VFS, so one process has two connections to the file);
 *   - in WAL mode, a read transaction held open across later steps (its
 *     view must stay the snapshot it began with, and another process's
 *     checkpoints are then partial), and its release;
 *   - a worker quit (clean close) or SIGKILLed: while idle, in the middle
 *     of any of the above after a random delay, or 0-20 ms after a commit
 *     it reported.  A killed worker is replaced by a new one, whose VFS is
 *     drawn again.
 * The reference after a kill: a transaction whose "ok" reached the parent
 * was reported, so it must be there (SQLite's promise for a process crash,
 * whatever the synchronous level: with synchronous=OFF only an OS crash may
 * lose it); one that was killed before its report may be there or not, and
 * the first view read after the step decides which while the connections
 * that saw it live on.  A view that says "not there" is not the last word in
 * WAL mode: the killed writer may have written every frame, its commit frame
 * included, and died before it published them in the wal-index (the -shm),
 * so the live readers do not see them; the recovery that rebuilds the
 * wal-index after the last connection died (a new worker's open, or the
 * fresh connection at the end of a run) reads the WAL file and finds the
 * commit.  Such a "latent" state lasts until the next commit overwrites
 * those frames (a writer appends at the wal-index's end, where the latent
 * frames begin, or restarts the WAL); several unreported transactions in a
 * row are each one possible state (the later may have died before it wrote
 * a frame), so the parent keeps a set of them (g.lat), emptied by every
 * commit it sees that changed the table.  The set errs on the side of
 * accepting: a checkpoint that truncates the WAL, a switch out of WAL mode or
 * a rolled-back transaction that spilled frames also end a latent state, and
 * the set keeps it.
 * A transaction that failed with SQLITE_BUSY changed nothing; any other
 * error (SQLITE_CORRUPT, SQLITE_IOERR...) is a failure.
 *
 * The view (a "digest"): the rows of t in key order, hashed (FNV-1a) with
 * the row count; the parent hashes its reference the same way.  Each row's
 * text b is derived from its column w (the 8-digit hex of w repeated to
 * the row's length), so the parent knows every byte.  An index on v makes
 * integrity_check see a row missing from one of the two b-trees.
 *
 * Runs: each run uses a new database (random page size and journal mode),
 * 2 or 3 workers, up to LPC_SQLITE_DIFF_STEPS steps (default 150); run i of
 * a program started with --seed S has the seed S + i, and a failure prints
 * the last steps and the command that replays that run alone:
 *   LPC_SQLITE_DIFF_VFS=mix LPC_SQLITE_DIFF_RUNS=1 test_sqlite_diff --seed S+i
 * (the kill delays are drawn from the seed, but where a kill lands depends on
 * timing, so a replay tries the same story, not the same interleaving).
 * Runs go on until LPC_STRESS_SECONDS (default 10) or LPC_SQLITE_DIFF_RUNS
 * runs.  LPC_SQLITE_DIFF_VFS: "mix" (default: each worker unix or lpc),
 * "lpc" (every worker lpc) or "unix" (the control: unix alone must pass).
 * LPC_SQLITE_DIFF_EXCL=0 leaves out the exclusive phases;
 * LPC_SQLITE_DIFF_TRACE=1 prints every command sent to a worker, every
 * spawn, kill and kill delay (tests/sqlite/diff_replay.py replays such a
 * trace without the parent, and shrinks it);
 * LPC_SQLITE_DIFF_KEEP=1 keeps a copy of each run's database at its end (a
 * failure always keeps one: DIR/../lpc-diff-SEED.db*).
 * Prints its seed and, at the end, the counts (transactions, commits,
 * kills) that scripts/soak.sh sums up.
 */
#include <poll.h>
#include <stdarg.h>
#include <sys/wait.h>

#include "sqlite_test.h"

/* ---------------------------------------------------------------- worker */

/* The worker's text protocol, one line each way:
 *   open C VFS URI   -> ok | err RC MSG     (slot C: 0 or 1)
 *   close C          -> ok | err RC MSG
 *   exec C SQL       -> ok | err RC MSG     (on an error inside a
 *                       transaction the worker rolls it back first)
 *   row C SQL        -> ok TEXT | err RC MSG  (first column of first row)
 *   digest C         -> ok ROWS HASH | err RC MSG
 *   ic C             -> ok | bad TEXT
 *   quit             -> (closes everything, exits 0) */
#define DIFF_FNV0 0xcbf29ce484222325ull

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* One row into the digest: k, v, w as 8 bytes each, then b's bytes. */
static uint64_t fnv_row(uint64_t h, int64_t k, int64_t v, int64_t w, const void *b, size_t n)
{
	uint64_t len = n;

	h = fnv(h, &k, 8);
	h = fnv(h, &v, 8);
	h = fnv(h, &w, 8);
	h = fnv(h, &len, 8);
	return fnv(h, b, n);
}

static void w_err(sqlite3 *db, int rc)
{
	char msg[200];
	const char *m = db ? sqlite3_errmsg(db) : "no connection";

	snprintf(msg, sizeof(msg), "%s", m);
	for (char *p = msg; *p; p++)
		if (*p == '\n')
			*p = ' ';
	printf("err %d %s\n", rc, msg);
}

static void w_digest(sqlite3 *db)
{
	sqlite3_stmt *st;
	uint64_t h = DIFF_FNV0;
	long long rows = 0;
	int rc = sqlite3_prepare_v2(db, "SELECT k, v, w, b FROM t ORDER BY k", -1, &st, NULL);

	if (rc != SQLITE_OK) {
		w_err(db, rc);
		return;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const void *b = sqlite3_column_text(st, 3);

		h = fnv_row(h, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
			    sqlite3_column_int64(st, 2), b, (size_t)sqlite3_column_bytes(st, 3));
		rows++;
	}
	if (rc != SQLITE_DONE) {
		w_err(db, rc);
		sqlite3_finalize(st);
		return;
	}
	sqlite3_finalize(st);
	printf("ok %lld %llu\n", rows, (unsigned long long)h);
}

static void w_row(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);

	if (rc != SQLITE_OK) {
		w_err(db, rc);
		return;
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		printf("ok %s\n", sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0)
							     : "NULL");
	else if (rc == SQLITE_DONE)
		printf("ok NULL\n");
	else
		w_err(db, rc);
	sqlite3_finalize(st);
}

static int worker(void)
{
	sqlite3 *db[2] = { NULL, NULL };
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	sqt_register();
	/* Each reply is flushed before the next command is read. */
	while (fflush(stdout) == 0 && (n = getline(&line, &cap, stdin)) > 0) {
		char cmd[16], vfs[16];
		int c = 0, off = 0, rc;

		if (line[n - 1] == '\n')
			line[--n] = 0;
		if (sscanf(line, "%15s %d %n", cmd, &c, &off) < 1)
			return 2;
		if (!strcmp(cmd, "quit"))
			break;
		if (c < 0 || c > 1)
			return 2;
		if (!strcmp(cmd, "open")) {
			int o2 = 0;

			if (sscanf(line + off, "%15s %n", vfs, &o2) < 1)
				return 2;
			rc = sqlite3_open_v2(line + off + o2, &db[c],
					     SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, vfs);
			if (rc != SQLITE_OK) {
				w_err(db[c], rc);
				sqlite3_close(db[c]);
				db[c] = NULL;
				continue;
			}
			sqlite3_extended_result_codes(db[c], 1);
			sqlite3_busy_timeout(db[c], 300);
			printf("ok\n");
		} else if (!db[c]) {
			printf("err %d slot %d is closed\n", SQLITE_MISUSE, c);
		} else if (!strcmp(cmd, "close")) {
			rc = sqlite3_close(db[c]);
			if (rc == SQLITE_OK) {
				db[c] = NULL;
				printf("ok\n");
			} else {
				w_err(db[c], rc);
			}
		} else if (!strcmp(cmd, "exec")) {
			rc = sqlite3_exec(db[c], line + off, NULL, NULL, NULL);
			if (rc == SQLITE_OK) {
				printf("ok\n");
			} else {
				int rc2 = rc;

				/* The error first: ROLLBACK overwrites errmsg. */
				w_err(db[c], rc2);
				if (!sqlite3_get_autocommit(db[c]))
					(void)sqlite3_exec(db[c], "ROLLBACK", NULL, NULL, NULL);
			}
		} else if (!strcmp(cmd, "row")) {
			w_row(db[c], line + off);
		} else if (!strcmp(cmd, "digest")) {
			w_digest(db[c]);
		} else if (!strcmp(cmd, "ic")) {
			char ic[512];

			sqt_integrity(db[c], ic, sizeof(ic));
			for (char *p = ic; *p; p++)
				if (*p == '\n')
					*p = ' ';
			printf(strcmp(ic, "ok") ? "bad %s\n" : "ok\n", ic);
		} else {
			return 2;
		}
	}
	for (int i = 0; i < 2; i++)
		if (db[i])
			sqlite3_close(db[i]);
	free(line);
	return 0;
}

/* ---------------------------------------------------------------- parent */

enum kind { K_UNIX, K_LPC, K_LPCX };
static const char *const kind_name[] = { "unix", "lpc", "lpc-exclusive" };

#define KMAX 700   /* keys 1..KMAX */
#define NWORK 3    /* workers at most */
#define NLOG 400   /* steps kept for a failure's report */
#define REPLY_MS 60000
#define NLAT 8     /* latent states kept (the oldest goes first) */

struct row {
	bool on;
	int64_t v, w;
	int len;
};

struct model {
	struct row r[KMAX + 1];
	int rows;
};

struct digest {
	long long rows;
	uint64_t hash;
};

struct worker {
	pid_t pid; /* 0: no process */
	enum kind kind;
	int in, out; /* its stdin (we write), its stdout (we read) */
	char buf[8192];
	size_t blen;
	bool open[2];
	bool hold[2];
	struct digest snap[2]; /* a held read transaction's view */
	int cache[2];          /* each slot's PRAGMA cache_size */
};

static struct {
	const char *self, *argv0, *dir, *mix;
	char path[600];
	uint64_t rs;
	struct worker w[NWORK];
	int nwork;
	struct model cur, alt; /* alt: the other possible state while unsure */
	bool unsure;
	/* The latent states: unreported transactions the views said were
	 * lost, which a WAL recovery may still find (see the top); each is
	 * the whole state with it.  Emptied by every commit seen. */
	struct model lat[NLAT];
	int nlat;
	bool failed;
	bool trace; /* LPC_SQLITE_DIFF_TRACE: every command on stderr */
	bool excl;  /* exclusive phases (LPC_SQLITE_DIFF_EXCL=0: none) */
	int excl_left; /* steps left in an exclusive phase (0: none) */
	uint64_t t0;   /* the start */
	double secs;   /* the time bound */
	char log[NLOG][200];
	unsigned nlog;
	int step;
	char *sql;
	size_t sqlcap, sqllen;
} g;

static struct {
	unsigned long long runs, steps, txns, commits, rollbacks, busy, kills, kills_mid,
		kills_after, unsure_in, unsure_out, latent, ckpts, modes, vacuums, reopens, holds, excl,
		digests, ics;
} n;

static uint64_t rnd(void)
{
	return tst_rnd(&g.rs);
}

static unsigned rndn(unsigned k)
{
	return (unsigned)(rnd() % k);
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;
	char *s = g.log[g.nlog++ % NLOG];
	int k = snprintf(s, 200, "step %d: ", g.step);

	va_start(ap, fmt);
	vsnprintf(s + k, (size_t)(200 - k), fmt, ap);
	va_end(ap);
}

/* On the first failure of a run, a copy of the database and its WAL, -shm
 * and journal (if any) as they were, beside the temporary directory:
 * DIR/../lpc-diff-SEED.db*. */
static void keep_files(void)
{
	static const char *const sfx[] = { "", "-wal", "-shm", "-journal" };

	for (int i = 0; i < 4; i++) {
		char from[700], to[700], buf[65536];
		int a, b;
		ssize_t r;

		snprintf(from, sizeof(from), "%s%s", g.path, sfx[i]);
		snprintf(to, sizeof(to), "%s/../lpc-diff-%llu.db%s", g.dir,
			 (unsigned long long)tst_seed, sfx[i]);
		if ((a = open(from, O_RDONLY)) < 0)
			continue;
		if ((b = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644)) >= 0) {
			while ((r = read(a, buf, sizeof(buf))) > 0)
				if (write(b, buf, (size_t)r) != r)
					break;
			close(b);
		}
		close(a);
	}
	fprintf(stderr, "  the database as it was: %s/../lpc-diff-%llu.db*\n", g.dir,
		(unsigned long long)tst_seed);
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;
	char msg[600];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	CHECK(0, "run seed %llu, step %d: %s", (unsigned long long)tst_seed, g.step, msg);
	if (!g.failed) {
		unsigned first = g.nlog > NLOG ? g.nlog - NLOG : 0;

		fprintf(stderr, "  the run's last steps:\n");
		for (unsigned i = first; i < g.nlog; i++)
			fprintf(stderr, "    %s\n", g.log[i % NLOG]);
		fprintf(stderr, "  replay: LPC_SQLITE_DIFF_VFS=%s LPC_SQLITE_DIFF_RUNS=1 %s --seed %llu\n",
			g.mix, g.argv0, (unsigned long long)tst_seed);
		keep_files();
	}
	g.failed = true;
}

/* --- the reference --- */

static void row_text(int64_t w, int len, char *out)
{
	char hex[16];

	snprintf(hex, sizeof(hex), "%08x", (unsigned)w);
	for (int i = 0; i < len; i++)
		out[i] = hex[i % 8];
}

static struct digest model_digest(const struct model *m)
{
	static char b[8192];
	struct digest d = { 0, DIFF_FNV0 };

	for (int k = 1; k <= KMAX; k++) {
		const struct row *r = &m->r[k];

		if (!r->on)
			continue;
		row_text(r->w, r->len, b);
		d.hash = fnv_row(d.hash, k, r->v, r->w, b, (size_t)r->len);
		d.rows++;
	}
	return d;
}

/* --- talking to a worker --- */

/* A worker's next reply line.  Return: 0, -1 (it died: EOF), -2 (no reply
 * within ms). */
static int w_read(struct worker *w, char *out, size_t len, int ms)
{
	uint64_t end = tst_now_ns() + (uint64_t)ms * 1000000ull;

	for (;;) {
		char *nl = memchr(w->buf, '\n', w->blen);
		struct pollfd p = { .fd = w->out, .events = POLLIN };
		uint64_t now;
		ssize_t r;

		if (nl) {
			size_t k = (size_t)(nl - w->buf);

			snprintf(out, len, "%.*s", (int)k, w->buf);
			memmove(w->buf, nl + 1, w->blen - k - 1);
			w->blen -= k + 1;
			return 0;
		}
		now = tst_now_ns();
		if (now >= end)
			return -2;
		if (poll(&p, 1, (int)((end - now) / 1000000ull) + 1) < 0 && errno != EINTR)
			return -1;
		if (!(p.revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		r = read(w->out, w->buf + w->blen, sizeof(w->buf) - 1 - w->blen);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			return -1;
		}
		w->blen += (size_t)r;
		if (w->blen >= sizeof(w->buf) - 1)
			return -1;
	}
}

static bool w_send(struct worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool w_send(struct worker *w, const char *fmt, ...)
{
	va_list ap;
	size_t len, done = 0;
	char *s;
	int k;

	va_start(ap, fmt);
	k = vasprintf(&s, fmt, ap);
	va_end(ap);
	REQUIRE(k >= 0, "vasprintf");
	len = (size_t)k;
	if (g.trace)
		fprintf(stderr, "  -> %d: %s", (int)w->pid, s);
	while (done < len) {
		ssize_t r = write(w->in, s + done, len - done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			free(s);
			return false;
		}
		done += (size_t)r;
	}
	free(s);
	return true;
}

static void w_reap(struct worker *w)
{
	int status;

	close(w->in);
	close(w->out);
	REQUIRE(waitpid(w->pid, &status, 0) == w->pid, "waitpid");
	memset(w, 0, sizeof(*w));
}

/* A command and its reply.  A worker that dies or does not answer is a
 * failure (it is killed). */
static int w_cmd(struct worker *w, char *out, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int w_cmd(struct worker *w, char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int k, r;

	va_start(ap, fmt);
	k = vasprintf(&s, fmt, ap);
	va_end(ap);
	REQUIRE(k >= 0, "vasprintf");
	r = w_send(w, "%s\n", s) ? w_read(w, out, len, REPLY_MS) : -1;
	if (r) {
		fail("worker %d (%s) %s on: %.120s", (int)w->pid, kind_name[w->kind],
		     r == -2 ? "did not answer" : "died", s);
		kill(w->pid, SIGKILL);
		w_reap(w);
	}
	free(s);
	return r;
}

static int rc_of(const char *reply)
{
	int rc = -1;

	if (!strncmp(reply, "ok", 2))
		return 0;
	sscanf(reply, "err %d", &rc);
	return rc;
}

static bool busy(int rc)
{
	return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED;
}

static void spawn(struct worker *w, enum kind kind)
{
	int in[2], out[2];
	char page_kb[8], cache_mb[8];
	static const char *const kbs[] = { "1", "4", "4", "16" };
	static const char *const mbs[] = { "1", "4", "64" };

	REQUIRE(pipe2(in, O_CLOEXEC) == 0 && pipe2(out, O_CLOEXEC) == 0, "pipe2");
	snprintf(page_kb, sizeof(page_kb), "%s", kbs[rndn(4)]);
	snprintf(cache_mb, sizeof(cache_mb), "%s", mbs[rndn(3)]);
	fflush(NULL);
	memset(w, 0, sizeof(*w));
	w->pid = fork();
	REQUIRE(w->pid >= 0, "fork");
	if (w->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		setenv("LPC_SQLITE_PAGE_KB", page_kb, 1);
		setenv("LPC_SQLITE_CACHE_MB", cache_mb, 1);
		execl(g.self, g.self, "--worker", (char *)NULL);
		_exit(4);
	}
	close(in[0]);
	close(out[1]);
	w->in = in[1];
	w->out = out[0];
	w->kind = kind;
	if (g.trace)
		fprintf(stderr, "  -> %d: SPAWN %s %s %s\n", (int)w->pid, kind_name[kind], page_kb,
			cache_mb);
	note("spawn worker %d: %s, lpc pages %s KiB, cache %s MiB", (int)w->pid, kind_name[kind],
	     page_kb, cache_mb);
}

static enum kind draw_kind(void)
{
	if (g.excl_left)
		return K_LPCX;
	if (!strcmp(g.mix, "unix"))
		return K_UNIX;
	if (!strcmp(g.mix, "lpc"))
		return K_LPC;
	return rndn(2) ? K_LPC : K_UNIX;
}

/* Opens slot c of w: its VFS, a small SQLite cache (pages spill before a
 * commit), a synchronous level, and in rollback mode one of the three
 * rollback journal modes (a per-connection setting). */
static void w_open(struct worker *w, int c)
{
	static const char *const sync[] = { "OFF", "NORMAL", "FULL" };
	static const char *const jm[] = { "delete", "truncate", "persist" };
	char rep[600];
	int rc;

	if (w->kind == K_UNIX)
		rc = w_cmd(w, rep, sizeof(rep), "open %d unix file:%s", c, g.path);
	else
		rc = w_cmd(w, rep, sizeof(rep), "open %d lpc file:%s?lpc_coherence=%s", c, g.path,
			   w->kind == K_LPCX ? "exclusive" : "detect");
	if (rc)
		return;
	if ((rc = rc_of(rep))) {
		if (!busy(rc))
			fail("open through %s: %s", kind_name[w->kind], rep);
		note("worker %d slot %d: open: %s", (int)w->pid, c, rep);
		return;
	}
	w->open[c] = true;
	n.reopens++;
	{
		int cs = w->cache[c] = 5 + (int)rndn(200);
		const char *s = sync[rndn(3)];

		if (w_cmd(w, rep, sizeof(rep), "exec %d PRAGMA cache_size=%d; PRAGMA synchronous=%s", c,
			  cs, s))
			return;
		note("worker %d slot %d: open (cache_size %d, synchronous=%s): %s", (int)w->pid, c, cs,
		     s, rep);
	}
	if (w_cmd(w, rep, sizeof(rep), "row %d PRAGMA journal_mode", c))
		return;
	if (!strcmp(rep, "ok delete") && rndn(2)) {
		const char *m = jm[rndn(3)];

		if (w_cmd(w, rep, sizeof(rep), "exec %d PRAGMA journal_mode=%s", c, m))
			return;
		note("worker %d slot %d: journal_mode=%s: %s", (int)w->pid, c, m, rep);
	}
}

static void w_close(struct worker *w, int c)
{
	char rep[300];

	if (w_cmd(w, rep, sizeof(rep), "close %d", c))
		return;
	note("worker %d slot %d: close: %s", (int)w->pid, c, rep);
	if (rc_of(rep))
		fail("close: %s", rep);
	w->open[c] = false;
	w->hold[c] = false;
}

static void w_quit(struct worker *w)
{
	note("worker %d: quit", (int)w->pid);
	(void)w_send(w, "quit\n");
	w_reap(w);
}

/* SIGKILL; the reply it wrote before it died, if any, into rep ("" if none). */
static void w_kill(struct worker *w, char *rep, size_t len)
{
	int status;

	kill(w->pid, SIGKILL);
	REQUIRE(waitpid(w->pid, &status, 0) == w->pid, "waitpid");
	if (g.trace)
		fprintf(stderr, "  -> %d: KILL\n", (int)w->pid);
	rep[0] = 0;
	if (w_read(w, rep, len, 1000))
		rep[0] = 0;
	close(w->in);
	close(w->out);
	memset(w, 0, sizeof(*w));
	n.kills++;
}

/* --- checks --- */

/* A latent state: an unreported transaction the views said was lost. */
static void lat_add(const struct model *m)
{
	if (g.nlat == NLAT) {
		memmove(&g.lat[0], &g.lat[1], sizeof(g.lat[0]) * (NLAT - 1));
		g.nlat--;
	}
	g.lat[g.nlat++] = *m;
}

/* The latent state whose digest is d (-1: none). */
static int lat_find(struct digest d)
{
	for (int i = 0; i < g.nlat; i++) {
		struct digest a = model_digest(&g.lat[i]);

		if (a.rows == d.rows && a.hash == d.hash)
			return i;
	}
	return -1;
}

/* The view of w's slot c against the reference (or its snapshot). */
static void check_view(struct worker *w, int c)
{
	char rep[300];
	struct digest d, want;

	if (w_cmd(w, rep, sizeof(rep), "digest %d", c))
		return;
	n.digests++;
	if (sscanf(rep, "ok %lld %" SCNu64, &d.rows, &d.hash) != 2) {
		fail("worker %d (%s) slot %d: digest: %s", (int)w->pid, kind_name[w->kind], c, rep);
		return;
	}
	if (w->hold[c]) {
		want = w->snap[c];
		if (d.rows != want.rows || d.hash != want.hash)
			fail("worker %d (%s) slot %d: its held read transaction changed: %lld rows, "
			     "want the snapshot's %lld",
			     (int)w->pid, kind_name[w->kind], c, d.rows, want.rows);
		return;
	}
	want = model_digest(&g.cur);
	if (d.rows == want.rows && d.hash == want.hash) {
		if (g.unsure) {
			note("the killed transaction was lost (it was not reported), so far");
			lat_add(&g.alt);
		}
		g.unsure = false;
		return;
	}
	if (g.unsure) {
		struct digest a = model_digest(&g.alt);

		if (d.rows == a.rows && d.hash == a.hash) {
			note("the killed transaction was committed (it was not reported)");
			g.cur = g.alt;
			g.unsure = false;
			g.nlat = 0;
			n.unsure_out++;
			return;
		}
	}
	{
		int i = lat_find(d);

		if (i >= 0) {
			note("a WAL recovery found a killed transaction the views had said was lost");
			g.cur = g.lat[i];
			g.unsure = false;
			g.nlat = 0;
			n.unsure_out++;
			n.latent++;
			return;
		}
	}
	{
		/* Say how it differs: which rows. */
		struct digest a = g.unsure ? model_digest(&g.alt) : want;

		fail("worker %d (%s) slot %d: view %lld rows, hash %016" PRIx64
		     "; the reference %lld rows, %016" PRIx64 "%s%lld rows, %016" PRIx64,
		     (int)w->pid, kind_name[w->kind], c, d.rows, d.hash, want.rows, want.hash,
		     g.unsure ? "; or, the unreported transaction, " : " = ", a.rows, a.hash);
	}
}

static void check_all(void)
{
	struct worker *any[NWORK * 2];
	int slot[NWORK * 2], k = 0;
	char rep[600];

	for (int i = 0; i < g.nwork && !g.failed; i++)
		for (int c = 0; c < 2 && !g.failed; c++)
			if (g.w[i].pid && g.w[i].open[c]) {
				check_view(&g.w[i], c);
				if (g.w[i].pid && g.w[i].open[c]) {
					any[k] = &g.w[i];
					slot[k++] = c;
				}
			}
	if (g.failed || !k)
		return;
	k = (int)rndn((unsigned)k);
	if (w_cmd(any[k], rep, sizeof(rep), "ic %d", slot[k]))
		return;
	n.ics++;
	if (strcmp(rep, "ok"))
		fail("worker %d (%s) slot %d: integrity_check: %s", (int)any[k]->pid,
		     kind_name[any[k]->kind], slot[k], rep);
}

/* --- transactions --- */

static void sql_add(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sql_add(const char *fmt, ...)
{
	va_list ap;
	int k;

	for (;;) {
		va_start(ap, fmt);
		k = vsnprintf(g.sql + g.sqllen, g.sqlcap - g.sqllen, fmt, ap);
		va_end(ap);
		REQUIRE(k >= 0, "vsnprintf");
		if (g.sqllen + (size_t)k < g.sqlcap)
			break;
		g.sqlcap = 2 * (g.sqlcap + (size_t)k);
		g.sql = realloc(g.sql, g.sqlcap);
		REQUIRE(g.sql, "realloc");
	}
	g.sqllen += (size_t)k;
}

static int row_len(void)
{
	unsigned r = rndn(100);

	if (r < 70)
		return (int)rndn(200);
	if (r < 95)
		return 200 + (int)rndn(1300);
	return 1500 + (int)rndn(6000);
}

static int pick_present(const struct model *m)
{
	if (!m->rows)
		return 0;
	for (int t = 0; t < 40; t++) {
		int k = 1 + (int)rndn(KMAX);

		if (m->r[k].on)
			return k;
	}
	return 0;
}

static void op_set(struct model *m, int k, int64_t v, int64_t w, int len)
{
	bool was = m->r[k].on;

	sql_add("%s INTO t VALUES(%d, %lld, %lld, substr(replace(hex(zeroblob(%d)), '00', "
		"printf('%%08x', %lld)), 1, %d));",
		was ? "REPLACE" : "INSERT", k, (long long)v, (long long)w, len / 8 + 1, (long long)w,
		len);
	m->r[k] = (struct row){ true, v, w, len };
	m->rows += !was;
}

/* One statement on m (the SQL appended). */
static void op(struct model *m)
{
	unsigned r = rndn(100);
	int k;

	if (r < 30 || (m->rows < 20 && r < 60)) {
		k = 1 + (int)rndn(KMAX);
		op_set(m, k, (int64_t)(rnd() & 0x7fffffff), (int64_t)(rnd() & 0x7fffffff), row_len());
	} else if (r < 55) {
		/* In place: v keeps its size (a 4-byte integer), b unchanged. */
		if (!(k = pick_present(m)))
			return;
		m->r[k].v = 0x10000000 + (int64_t)(rnd() & 0x0fffffff);
		sql_add("UPDATE t SET v = %lld WHERE k = %d;", (long long)m->r[k].v, k);
	} else if (r < 65) {
		if (!(k = pick_present(m)))
			return;
		op_set(m, k, m->r[k].v, (int64_t)(rnd() & 0x7fffffff), row_len());
	} else if (r < 80) {
		if (!(k = pick_present(m)))
			return;
		sql_add("DELETE FROM t WHERE k = %d;", k);
		m->r[k].on = false;
		m->rows--;
	} else if (r < 88) {
		int a = 1 + (int)rndn(KMAX), b = a + (int)rndn(40);

		sql_add("DELETE FROM t WHERE k BETWEEN %d AND %d;", a, b);
		for (k = a; k <= b && k <= KMAX; k++)
			if (m->r[k].on) {
				m->r[k].on = false;
				m->rows--;
			}
	} else {
		/* Bulk: grows the file past a small cache_size (spills). */
		int a = 1 + (int)rndn(KMAX), cnt = 10 + (int)rndn(60);

		for (k = a; k < a + cnt && k <= KMAX; k++)
			op_set(m, k, (int64_t)(rnd() & 0x7fffffff), (int64_t)(rnd() & 0x7fffffff),
			       500 + (int)rndn(2500));
	}
}

/* A transaction on g.cur for a connection whose cache_size is cache: the SQL
 * in g.sql; the state if it commits in *out.
 *
 * A SAVEPOINT rolled back inside it runs with a cache that holds the whole
 * database (no page spills to the WAL inside the transaction), and the
 * connection's small cache_size comes back after the COMMIT.  SQLite 3.40.1
 * (Debian 12's) loses a commit there with unix alone: in WAL mode, a
 * savepoint that spilled pages and rewrote one of their frames in place
 * (which sets wal.c's iReCksum, the first frame whose checksum is to be
 * recomputed at commit) and is then rolled back (ROLLBACK TO) leaves
 * iReCksum set; the frames the transaction writes after it get zero salts,
 * and the commit recomputes checksums only from the stale iReCksum on, so
 * the frames in between stay invalid.  Every reader of the live wal-index
 * sees the commit; the WAL recovery that runs after the last connection
 * died (SIGKILL) stops at the first invalid frame and the commit is gone.
 * The control run (unix alone) found it: it is not lpc's. */
static void make_txn(struct model *out, bool *rolls_back, int cache)
{
	int ops = 1 + (int)rndn(rndn(4) ? 4 : 12);
	bool sp = !rndn(4);

	*out = g.cur;
	g.sqllen = 0;
	if (sp)
		sql_add("PRAGMA cache_size=-65536;");
	sql_add("BEGIN IMMEDIATE;");
	for (int i = 0; i < ops; i++) {
		if (sp && !rndn(3)) {
			/* A savepoint rolled back: its statements leave no trace. */
			static struct model scratch;
			int k = 1 + (int)rndn(4);

			scratch = *out;
			sql_add("SAVEPOINT sp;");
			for (int j = 0; j < k; j++)
				op(&scratch);
			sql_add("ROLLBACK TO sp; RELEASE sp;");
		} else {
			op(out);
		}
	}
	*rolls_back = !rndn(10);
	sql_add(*rolls_back ? "ROLLBACK;" : "COMMIT;");
	if (sp)
		sql_add("PRAGMA cache_size=%d;", cache);
	if (*rolls_back)
		*out = g.cur;
}

/* How long to wait before a kill in the middle of a command: mostly within
 * a millisecond or two (inside the statements), sometimes longer (inside the
 * commit's syncs, or a checkpoint). */
static unsigned kill_delay_us(void)
{
	unsigned r = rndn(10);

	return r < 6 ? rndn(2000) : r < 9 ? rndn(15000) : rndn(60000);
}

/* --- steps --- */

static struct worker *pick_worker(void)
{
	int alive[NWORK], k = 0;

	for (int i = 0; i < g.nwork; i++)
		if (g.w[i].pid)
			alive[k++] = i;
	return k ? &g.w[alive[rndn((unsigned)k)]] : NULL;
}

/* An open, not held slot of w (-1: none). */
static int pick_slot(struct worker *w)
{
	int c = (int)rndn(2);

	if (w->open[c] && !w->hold[c])
		return c;
	c ^= 1;
	return w->open[c] && !w->hold[c] ? c : -1;
}

/* Every worker slot there is has a process, and at least one connection
 * is open (so the check after the step reads a view). */
static void populate(void)
{
	bool any = false;

	for (int i = 0; i < g.nwork; i++) {
		if (!g.w[i].pid) {
			spawn(&g.w[i], draw_kind());
			w_open(&g.w[i], 0);
		}
		any |= g.w[i].pid && (g.w[i].open[0] || g.w[i].open[1]);
	}
	if (!any && !g.failed && g.w[0].pid)
		w_open(&g.w[0], (int)rndn(2));
}

/* Sends SQL (a transaction or a statement) to w's slot c; with kill, kills
 * w in the middle (after a random delay) or, after_report, shortly after
 * its reply.  Return: the reply ("" when killed before it). */
static void run_cmd(struct worker *w, int c, const char *sql, int kill_mode, char *rep,
		    size_t len)
{
	if (!kill_mode) {
		if (w_cmd(w, rep, len, "exec %d %s", c, sql))
			snprintf(rep, len, "dead");
		return;
	}
	if (!w_send(w, "exec %d %s\n", c, sql)) {
		fail("worker %d: cannot send", (int)w->pid);
		snprintf(rep, len, "dead");
		return;
	}
	if (kill_mode == 1) {
		unsigned us = kill_delay_us();

		if (g.trace)
			fprintf(stderr, "  -> %d: SLEEP-NOREPLY %u\n", (int)w->pid, us);
		tst_sleep_us(us);
		w_kill(w, rep, len);
		n.kills_mid++;
	} else {
		if (w_read(w, rep, len, REPLY_MS)) {
			fail("worker %d: no reply", (int)w->pid);
			rep[0] = 0;
		}
		{
			unsigned us = rndn(20000);

			if (g.trace)
				fprintf(stderr, "  -> %d: SLEEP %u\n", (int)w->pid, us);
			tst_sleep_us(us);
		}
		{
			char late[8];

			w_kill(w, late, sizeof(late));
		}
		n.kills_after++;
	}
}

static void step_txn(struct worker *w, int c)
{
	static const char *const sync[] = { "OFF", "NORMAL", "FULL" };
	static struct model next;
	char rep[600];
	bool rb;
	int km = rndn(8) ? 0 : rndn(3) ? 1 : 2;
	int rc, pid = (int)w->pid;
	enum kind kind = w->kind;
	const char *s = sync[rndn(3)];

	if (!rndn(3)) {
		char sq[64];

		snprintf(sq, sizeof(sq), "PRAGMA synchronous=%s", s);
		if (w_cmd(w, rep, sizeof(rep), "exec %d %s", c, sq))
			return;
		note("worker %d slot %d: synchronous=%s", (int)w->pid, c, s);
	}
	make_txn(&next, &rb, w->cache[c]);
	n.txns++;
	run_cmd(w, c, g.sql, km, rep, sizeof(rep));
	note("worker %d (%s) slot %d: transaction of %zu bytes of SQL%s%s: %s%s", pid,
	     kind_name[kind], c, g.sqllen, rb ? " (rolled back)" : "",
	     km == 1 ? ", killed in the middle" : km == 2 ? ", killed after its reply" : "",
	     rep[0] ? rep : "(no reply)", g.failed ? " [failed]" : "");
	if (!strcmp(rep, "dead"))
		return;
	if (!rep[0]) {
		/* Killed before it reported: it may be there or not. */
		if (!rb) {
			g.alt = next;
			g.unsure = true;
			n.unsure_in++;
		}
		return;
	}
	rc = rc_of(rep);
	if (rc == 0) {
		struct digest a = model_digest(&g.cur), b = model_digest(&next);

		/* A commit that changed the table wrote frames, over the
		 * latent ones; one that changed nothing may have written none. */
		if (a.rows != b.rows || a.hash != b.hash)
			g.nlat = 0;
		g.cur = next;
		n.commits += !rb;
		n.rollbacks += rb;
	} else if (busy(rc)) {
		n.busy++;
	} else {
		fail("worker %d (%s) slot %d: transaction: %s", pid, kind_name[kind], c, rep);
	}
}

static void step_stmt(struct worker *w, int c, const char *what, const char *sql, bool may_kill)
{
	char rep[600];
	int km = may_kill && !rndn(6) ? 1 : 0;
	int rc;
	int pid = (int)w->pid;
	enum kind kind = w->kind;

	run_cmd(w, c, sql, km, rep, sizeof(rep));
	note("worker %d (%s) slot %d: %s%s: %s", pid, kind_name[kind], c, sql,
	     km ? ", killed in the middle" : "", rep[0] ? rep : "(no reply)");
	if (!rep[0] || !strcmp(rep, "dead"))
		return;
	rc = rc_of(rep);
	if (rc && !busy(rc))
		fail("worker %d (%s) slot %d: %s: %s", pid, kind_name[kind], c, what, rep);
}

static void step_hold(struct worker *w)
{
	char rep[300];
	int c = pick_slot(w);

	if (c < 0 || g.unsure)
		return;
	if (w_cmd(w, rep, sizeof(rep), "row %d PRAGMA journal_mode", c) || strcmp(rep, "ok wal"))
		return;
	/* A deferred read transaction: its snapshot starts at the first read. */
	if (w_cmd(w, rep, sizeof(rep), "exec %d BEGIN; SELECT count(*) FROM t", c))
		return;
	if (rc_of(rep)) {
		note("worker %d slot %d: hold: %s", (int)w->pid, c, rep);
		return;
	}
	w->hold[c] = true;
	w->snap[c] = model_digest(&g.cur);
	n.holds++;
	note("worker %d (%s) slot %d: holds a read transaction (%lld rows)", (int)w->pid,
	     kind_name[w->kind], c, w->snap[c].rows);
}

static void step_release(struct worker *w)
{
	char rep[300];

	for (int c = 0; c < 2; c++)
		if (w->hold[c]) {
			if (w_cmd(w, rep, sizeof(rep), "exec %d COMMIT", c))
				return;
			w->hold[c] = false;
			note("worker %d slot %d: ends its read transaction: %s", (int)w->pid, c, rep);
			if (rc_of(rep))
				fail("ending a read transaction: %s", rep);
			return;
		}
}

static void step(void)
{
	static const char *const ck[] = { "PASSIVE", "FULL", "RESTART", "TRUNCATE" };
	static const char *const jm[] = { "DELETE", "TRUNCATE", "PERSIST", "WAL", "WAL" };
	static const int ps[] = { 1024, 4096, 8192, 16384 };
	struct worker *w;
	unsigned r;
	int c;
	char sql[96];

	populate();
	if (g.failed || !(w = pick_worker()))
		return;
	r = rndn(100);
	c = pick_slot(w);
	if (r < 55) {
		/* Not while unsure which state is the file's: the statements
		 * are made for one. */
		if (c >= 0 && !g.unsure)
			step_txn(w, c);
	} else if (r < 65) {
		if (c < 0)
			return;
		snprintf(sql, sizeof(sql), "PRAGMA wal_checkpoint(%s)", ck[rndn(4)]);
		n.ckpts++;
		step_stmt(w, c, "checkpoint", sql, true);
	} else if (r < 71) {
		if (c < 0)
			return;
		snprintf(sql, sizeof(sql), "PRAGMA journal_mode=%s", jm[rndn(5)]);
		n.modes++;
		step_stmt(w, c, "journal_mode", sql, false);
	} else if (r < 74) {
		if (c < 0)
			return;
		if (rndn(2))
			snprintf(sql, sizeof(sql), "PRAGMA page_size=%d; VACUUM", ps[rndn(4)]);
		else
			snprintf(sql, sizeof(sql), "VACUUM");
		n.vacuums++;
		step_stmt(w, c, "vacuum", sql, true);
	} else if (r < 84) {
		c = (int)rndn(2);
		if (w->open[c])
			w_close(w, c);
		else
			w_open(w, c);
	} else if (r < 90) {
		if (w->hold[0] || w->hold[1])
			step_release(w);
		else
			step_hold(w);
	} else if (r < 94) {
		char rep[8];

		note("worker %d (%s): killed while idle", (int)w->pid, kind_name[w->kind]);
		w_kill(w, rep, sizeof(rep));
	} else if (r < 97) {
		w_quit(w);
	} else if (strcmp(g.mix, "unix") && g.excl && !g.excl_left && rndn(2)) {
		/* An exclusive phase: the others quit, one lpc process holds
		 * the database alone for a while (its kills included). */
		for (int i = 0; i < g.nwork; i++)
			if (g.w[i].pid)
				w_quit(&g.w[i]);
		g.excl_left = 10 + (int)rndn(20);
		n.excl++;
		note("exclusive phase of %d steps", g.excl_left);
	}
}

/* The time bound (LPC_STRESS_SECONDS) has passed: the run in progress ends
 * after its step (its closing checks still run), and no new one starts. */
static bool time_up(void)
{
	return (double)(tst_now_ns() - g.t0) / 1e9 >= g.secs;
}

/* One run: a new database, 2 or 3 workers, steps until one fails. */
static void run(int steps)
{
	static const char *const jm[] = { "delete", "wal" };
	static const int ps[] = { 1024, 4096, 8192, 65536 };
	int page = ps[rndn(4)];
	const char *mode = jm[rndn(2)];
	char sql[200];
	sqlite3 *db;

	memset(&g.cur, 0, sizeof(g.cur));
	g.unsure = g.failed = false;
	g.nlat = 0;
	g.excl_left = 0;
	g.nlog = 0;
	g.step = 0;
	g.nwork = 2 + (int)rndn(2);
	snprintf(g.path, sizeof(g.path), "%s/diff-%llu.db", g.dir, (unsigned long long)tst_seed);
	db = sqt_open(g.path, "unix");
	snprintf(sql, sizeof(sql), "PRAGMA page_size=%d; PRAGMA journal_mode=%s", page, mode);
	sqt_exec(db, sql);
	sqt_exec(db, "CREATE TABLE t(k INTEGER PRIMARY KEY, v INTEGER NOT NULL, w INTEGER NOT NULL,"
		     " b TEXT NOT NULL); CREATE INDEX t_v ON t(v)");
	REQUIRE(sqlite3_close(db) == SQLITE_OK, "close");
	note("run: %d workers, page size %d, journal_mode=%s", g.nwork, page, mode);
	for (g.step = 0; g.step < steps && !g.failed && !time_up(); g.step++) {
		n.steps++;
		step();
		if (g.excl_left && !--g.excl_left) {
			for (int i = 0; i < g.nwork; i++)
				if (g.w[i].pid)
					w_quit(&g.w[i]);
			note("exclusive phase ends");
		}
		if (!g.failed) {
			populate();
			check_all();
		}
	}
	for (int i = 0; i < g.nwork; i++)
		if (g.w[i].pid) {
			kill(g.w[i].pid, SIGKILL);
			w_reap(&g.w[i]);
		}
	if (getenv("LPC_SQLITE_DIFF_KEEP"))
		keep_files();
	/* The database as the last workers left it, through a fresh unix
	 * connection: it must still be sound and hold the reference. */
	if (!g.failed) {
		int64_t rows;
		uint64_t h;
		struct digest want = model_digest(&g.cur);

		db = sqt_open(g.path, "unix");
		sqt_check_integrity(db, "at the end of the run");
		h = 0;
		{
			sqlite3_stmt *st;

			REQUIRE(sqlite3_prepare_v2(db, "SELECT k, v, w, b FROM t ORDER BY k", -1, &st,
						   NULL) == SQLITE_OK, "prepare");
			h = DIFF_FNV0;
			rows = 0;
			while (sqlite3_step(st) == SQLITE_ROW) {
				h = fnv_row(h, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
					    sqlite3_column_int64(st, 2), sqlite3_column_text(st, 3),
					    (size_t)sqlite3_column_bytes(st, 3));
				rows++;
			}
			sqlite3_finalize(st);
		}
		{
			struct digest a = g.unsure ? model_digest(&g.alt) : want;
			struct digest d = { rows, h };

			/* The recovery this connection runs may find a latent
			 * transaction (see the top). */
			bool seen = (rows == want.rows && h == want.hash) ||
				    (rows == a.rows && h == a.hash);

			if (!seen && lat_find(d) >= 0) {
				seen = true;
				n.unsure_out++;
				n.latent++;
			}
			CHECK(seen,
			      "run seed %llu: at the end, %lld rows, the reference %lld (%d latent states)",
			      (unsigned long long)tst_seed, (long long)rows, want.rows, g.nlat);
		}
		sqlite3_close(db);
	}
	n.runs++;
	{
		char p2[700];

		unlink(g.path);
		snprintf(p2, sizeof(p2), "%s-journal", g.path);
		unlink(p2);
		snprintf(p2, sizeof(p2), "%s-wal", g.path);
		unlink(p2);
		snprintf(p2, sizeof(p2), "%s-shm", g.path);
		unlink(p2);
	}
}

static long env_long(const char *name, long def)
{
	const char *s = getenv(name);

	return s && atol(s) > 0 ? atol(s) : def;
}

int main(int argc, char **argv)
{
	double secs;
	long runs, steps;
	uint64_t seed0;

	if (argc == 2 && !strcmp(argv[1], "--worker"))
		return worker();
	g.self = "/proc/self/exe";
	g.argv0 = argv[0];
	g.trace = getenv("LPC_SQLITE_DIFF_TRACE") != NULL;
	g.excl = !getenv("LPC_SQLITE_DIFF_EXCL") || strcmp(getenv("LPC_SQLITE_DIFF_EXCL"), "0");
	g.dir = sqt_start(argc, argv, 1);
	g.mix = getenv("LPC_SQLITE_DIFF_VFS") ? getenv("LPC_SQLITE_DIFF_VFS") : "mix";
	if (strcmp(g.mix, "mix") && strcmp(g.mix, "lpc") && strcmp(g.mix, "unix")) {
		fprintf(stderr, "LPC_SQLITE_DIFF_VFS: mix, lpc or unix\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	g.secs = secs = tst_stress_seconds(10);
	runs = env_long("LPC_SQLITE_DIFF_RUNS", 1000000);
	steps = env_long("LPC_SQLITE_DIFF_STEPS", 150);
	/* The watchdog: the time bound, plus one run's worst case. */
	alarm((unsigned)secs + 240);
	printf("workers through %s; %.0f s, at most %ld runs of %ld steps\n", g.mix, secs, runs,
	       steps);
	seed0 = tst_seed;
	g.t0 = tst_now_ns();
	for (long i = 0; i < runs && (i == 0 || !time_up()); i++) {
		tst_seed = seed0 + (uint64_t)i;
		g.rs = tst_seed;
		run((int)steps);
	}
	tst_seed = seed0;
	printf("diff: %llu runs, %llu steps, %llu transactions (%llu committed, %llu rolled back, "
	       "%llu busy), %llu kills (%llu in the middle of a command, %llu after a reported "
	       "commit; %llu unreported transactions, %llu of them found committed, %llu of those by a "
	       "later WAL recovery), %llu checkpoints, %llu journal_mode switches, %llu vacuums, %llu opens, %llu held "
	       "reads, %llu exclusive phases, %llu views and %llu integrity checks compared\n",
	       n.runs, n.steps, n.txns, n.commits, n.rollbacks, n.busy, n.kills, n.kills_mid,
	       n.kills_after, n.unsure_in, n.unsure_out, n.latent, n.ckpts, n.modes, n.vacuums, n.reopens,
	       n.holds, n.excl, n.digests, n.ics);
	return tst_finish();
}
