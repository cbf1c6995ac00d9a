/* SPDX-License-Identifier: MIT */
/*
 * sqlite_small.c - the sqlite benchmark's "small program" table: what a
 * process that uses lpc's VFS "just to cache a few pages" pays, against the
 * same process on the unix VFS (lpc_sqlite(7) "Memory and start-up").
 *
 * The program is speedtest1's first case on its own: a fresh process
 * (exec'd as `lpcbench --kchild sqlite "small VFS PATH" 0 0`, so nothing of
 * this process's lpc or RCU state reaches it) opens a new database through
 * VFS unix or lpc with the extension's defaults (lpc_sqlite_register(0), no
 * URI parameter), creates t1(a INTEGER, b INTEGER, c TEXT), inserts
 * SM_ROWS rows in one transaction with SQLite's defaults (rollback journal,
 * synchronous FULL), closes the database and exits.  The parent times the
 * whole process, fork to wait4, and takes its CPU time and peak resident set
 * from wait4's rusage.  The database is a few MiB: it fits any cache, so no
 * memory cgroup is needed for equal memory here.
 *
 * Rounds alternate which side runs first; the ratio unix time / lpc time is
 * taken within a round (>= 1.0: lpc at least as fast).  After every round
 * both databases are read back through unix: the same row count and sums,
 * or the run fails.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>
#ifdef LPCBENCH_HAVE_LPC_SQLITE
#include <lpc/lpc_sqlite.h>
#endif

#include "harness/csv.h"
#include "harness/datafile.h"
#include "harness/plot.h"
#include "harness/stats.h"
#include "harness/util.h"
#include "lpcbench/benches.h"
#include "sqlite_run.h"

#define SM_ROWS 75000u
#define SM_HWM_FD 3 /* the child writes its VmHWM (KiB) here */
#define SM_DEF_ROUNDS 21 /* without --rounds: fresh processes are cheap */

enum { SM_UNIX, SM_LPC, SM_NR };
static const char *const sm_vfs[SM_NR] = { "unix", "lpc" };

/* Row i's a: a permutation of 0..2^32-1 (odd multiplier), so that the
 * inserts are not in key order (speedtest1 swizzles too). */
static uint32_t sm_a(uint32_t i)
{
	return i * 2654435761u;
}

/* Row i's c: its number in words, digit by digit ("seven four two"). */
static int sm_words(uint32_t n, char *buf, size_t len)
{
	static const char *const d[10] = { "zero", "one", "two", "three", "four",
					   "five", "six", "seven", "eight", "nine" };
	char digits[16];
	int nd = snprintf(digits, sizeof(digits), "%" PRIu32, n), off = 0;

	for (int k = 0; k < nd && off < (int)len; k++)
		off += snprintf(buf + off, len - (size_t)off, "%s%s", k ? " " : "",
				d[digits[k] - '0']);
	return off < (int)len ? off : (int)len - 1;
}

static int sm_exec(sqlite3 *db, const char *sql)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

/* The program, in the exec'd child: exit status 0 or 1 (a message on stderr). */
void __attribute__((noreturn)) sq_small_child(const char *arg)
{
	char vfs[16], path[PATH_MAX], c[128];
	sqlite3 *db = NULL;
	sqlite3_stmt *ins = NULL;
	int rc, off = 0;
	FILE *hwm;

	if (sscanf(arg, "%15s %n", vfs, &off) != 1 || !off ||
	    snprintf(path, sizeof(path), "%s", arg + off) >= (int)sizeof(path))
		die("sqlite small: bad child argument %s", arg);
#ifdef LPCBENCH_HAVE_LPC_SQLITE
	if (!strcmp(vfs, "lpc") && (rc = lpc_sqlite_register(0)) != SQLITE_OK)
		die("sqlite small: lpc_sqlite_register: %s", sqlite3_errstr(rc));
#endif
	rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, vfs);
	if (rc == SQLITE_OK)
		rc = sm_exec(db, "CREATE TABLE t1(a INTEGER, b INTEGER, c TEXT); BEGIN");
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "INSERT INTO t1 VALUES(?1, ?2, ?3)", -1, &ins, NULL);
	for (uint32_t i = 1; rc == SQLITE_OK && i <= SM_ROWS; i++) {
		int n = sm_words(i, c, sizeof(c));

		sqlite3_bind_int64(ins, 1, sm_a(i));
		sqlite3_bind_int64(ins, 2, i);
		sqlite3_bind_text(ins, 3, c, n, SQLITE_STATIC);
		rc = sqlite3_step(ins);
		rc = rc == SQLITE_DONE ? sqlite3_reset(ins) : rc;
	}
	sqlite3_finalize(ins);
	if (rc == SQLITE_OK)
		rc = sm_exec(db, "COMMIT");
	if (rc != SQLITE_OK)
		die("sqlite small: %s through %s: %s", path, vfs, db ? sqlite3_errmsg(db) : "no memory");
	rc = sqlite3_close(db);
	if (rc != SQLITE_OK)
		die("sqlite small: close: %s", sqlite3_errstr(rc));
	/* Its own peak resident set, for the parent on SM_HWM_FD (wait4's
	 * ru_maxrss would count the forked copy of the parent before the exec). */
	hwm = fopen("/proc/self/status", "r");
	while (hwm && fgets(c, sizeof(c), hwm))
		if (!strncmp(c, "VmHWM:", 6))
			dprintf(SM_HWM_FD, "%s", c + 6);
	if (hwm)
		fclose(hwm);
	exit(0);
}

struct sm_run {
	double ms, cpu_ms, rss_mib;
};

/* Runs the program once through vfs, in a fresh process: its time, CPU
 * and peak resident set.  Dies if it fails. */
static struct sm_run sm_once(const char *vfs, const char *path)
{
	char arg[PATH_MAX + 64];
	struct rusage ru;
	struct sm_run r;
	char kb[64] = "";
	int status, pfd[2];
	uint64_t t;
	pid_t pid;

	if (snprintf(arg, sizeof(arg), "small %s %s", vfs, path) >= (int)sizeof(arg))
		die("sqlite small: the path %s is too long", path);
	for (const char *sfx = ""; sfx; sfx = *sfx ? NULL : "-journal") {
		char p[PATH_MAX + 64];

		if (snprintf(p, sizeof(p), "%s%s", path, sfx) >= (int)sizeof(p))
			die("sqlite small: the path %s is too long", path);
		if (unlink(p) && errno != ENOENT)
			die_err(errno, "sqlite small: unlink %s", p);
	}
	if (pipe(pfd))
		die_err(errno, "sqlite small: pipe");
	t = now_ns();
	pid = fork();
	if (pid < 0)
		die_err(errno, "sqlite small: fork");
	if (!pid) {
		if (dup2(pfd[1], SM_HWM_FD) < 0)
			_exit(126);
		execl("/proc/self/exe", "lpcbench", "--kchild", "sqlite", arg, "0", "0", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	if (wait4(pid, &status, 0, &ru) != pid)
		die_err(errno, "sqlite small: wait4");
	r.ms = (double)(now_ns() - t) / 1e6;
	if (read(pfd[0], kb, sizeof(kb) - 1) < 0)
		kb[0] = 0;
	close(pfd[0]);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		die("sqlite small: the %s program failed (status %#x)", vfs, status);
	r.cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
		   (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	r.rss_mib = kb[0] ? strtod(kb, NULL) / 1024 : NAN;
	return r;
}

/* Reads path back through unix: every row there, and the sums right. */
static void sm_check(const char *path)
{
	uint64_t want_a = 0, want_b = 0;
	sqlite3_stmt *st = NULL;
	sqlite3 *db = NULL;
	int rc;

	for (uint32_t i = 1; i <= SM_ROWS; i++) {
		want_a += sm_a(i);
		want_b += i;
	}
	rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, "unix");
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "SELECT count(*), sum(a), sum(b) FROM t1", -1, &st, NULL);
	if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
		if ((uint64_t)sqlite3_column_int64(st, 0) != SM_ROWS ||
		    (uint64_t)sqlite3_column_int64(st, 1) != want_a ||
		    (uint64_t)sqlite3_column_int64(st, 2) != want_b)
			die("sqlite small: %s holds %lld rows, sums %lld %lld (want %u, %" PRIu64
			    " %" PRIu64 ")", path, sqlite3_column_int64(st, 0),
			    sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2), SM_ROWS,
			    want_a, want_b);
	} else {
		die("sqlite small: cannot read %s back: %s", path, db ? sqlite3_errmsg(db) : "?");
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
}

void sq_small_path(const struct sqctx *x, unsigned side, char *buf, size_t len)
{
	if (snprintf(buf, len, "%s/small-program-%s.db", x->dir, sm_vfs[side]) >= (int)len)
		die("sqlite small: the directory %s is too long", x->dir);
}

void sq_small_run(const struct sqctx *x, unsigned rounds)
{
	const struct bench_env *env = x->env;
	char path[SM_NR][PATH_MAX + 32], buf[96];
	double *v[SM_NR][3], *ratio;
	struct summary s[SM_NR][3], q;
	unsigned nside = x->have_lpc ? SM_NR : 1;
	struct plot *pl;

	if (!rounds)
		rounds = SM_DEF_ROUNDS;
	for (unsigned k = 0; k < SM_NR; k++) {
		sq_small_path(x, k, path[k], sizeof(path[k]));
		for (unsigned m = 0; m < 3; m++)
			v[k][m] = xcalloc(rounds, sizeof(double));
	}
	ratio = xcalloc(rounds, sizeof(double));
	printf("sqlite small program: a fresh process opens a new database, inserts %u rows in one\n"
	       "  transaction (speedtest1's first case; journal DELETE, synchronous FULL) and exits;\n"
	       "  VFS unix against VFS lpc with the extension's defaults; %u rounds, the side that\n"
	       "  goes first alternates; time from fork to exit; both databases checked each round\n",
	       SM_ROWS, rounds);
	for (unsigned i = 0; i < rounds; i++) {
		progress("sqlite small: round %u of %u", i + 1, rounds);
		for (unsigned j = 0; j < nside; j++) {
			unsigned k = nside == 1 ? 0 : (i + j) % SM_NR;
			struct sm_run r = sm_once(sm_vfs[k], path[k]);
			struct csv_key key = { .bench = "sqlite", .round = i + 1, .threads = 1,
					       .variant = k == SM_UNIX ? "small_unix" : "small_lpc" };

			sm_check(path[k]);
			v[k][0][i] = r.ms;
			v[k][1][i] = r.cpu_ms;
			v[k][2][i] = r.rss_mib;
			key.metric = "ms";
			csv_raw(env->csv, &key, r.ms);
			key.metric = "peak_rss_mib";
			csv_raw(env->csv, &key, r.rss_mib);
		}
		ratio[i] = nside == SM_NR ? v[SM_UNIX][0][i] / v[SM_LPC][0][i] : NAN;
	}
	progress_done();
	pl = plot_open(&(struct plot_spec){
		.name = "sqlite_small", .title = "SQLite: a fresh process inserts 75,000 rows",
		.ylabel = "ms per process", .header = "vfs,ms,min,max", .xcol = 1, .ycol = 2,
		.locol = 3, .hicol = 4, .ref = NAN });
	printf("  %-5s %24s %12s %14s\n", "vfs", "ms med [min - max]", "cpu ms", "peak RSS MiB");
	for (unsigned k = 0; k < nside; k++) {
		for (unsigned m = 0; m < 3; m++)
			s[k][m] = summarize(v[k][m], rounds);
		printf("  %-5s %8.1f [%6.1f - %6.1f] %12.1f %14.1f\n", sm_vfs[k], s[k][0].med,
		       s[k][0].min, s[k][0].max, s[k][1].med, s[k][2].med);
		plot_row(pl, "%s,%s", sm_vfs[k], plot_sum(buf, sizeof(buf), &s[k][0]));
	}
	plot_close(pl);
	if (nside == SM_NR) {
		q = summarize(ratio, rounds);
		printf("  unix/lpc time within a round: %.2f [%.2f - %.2f]  (goal >= 1.0: %s)\n\n",
		       q.med, q.min, q.max, q.med >= 1.0 ? "met" : "not met");
	} else {
		printf("  lpc: SKIPPED: lpcbench was built without liblpc_sqlite\n\n");
	}
	for (unsigned k = 0; k < SM_NR; k++) {
		for (unsigned m = 0; m < 3; m++)
			free(v[k][m]);
		unlink(path[k]);
	}
	free(ratio);
}

/* `lpcbench sqlite-small`: the table on its own, in a private directory
 * under --dir (the program's processes are the sqlite benchmark's
 * children: `--kchild sqlite "small ..."`). */
static void sm_run(const struct bench_env *env)
{
	const struct bench_opts *o = env->opts;
	struct sqctx *x = xcalloc(1, sizeof(*x));
	struct datafile df;

	x->env = env;
#ifdef LPCBENCH_HAVE_LPC_SQLITE
	x->have_lpc = true;
#endif
	datafile_choose(o->dir, &df);
	snprintf(x->dir, sizeof(x->dir), "%s", df.dir);
	if (!mkdtemp(x->dir))
		die_err(errno, "sqlite small: creating a directory %s", x->dir);
	sq_small_run(x, o->rounds_set ? o->rounds : 0);
	rmdir(x->dir);
	free(x);
}

static double sm_estimate_s(const struct bench_opts *o)
{
	return 1.2 * (o->rounds_set ? o->rounds : SM_DEF_ROUNDS);
}

const struct bench bench_sqlite_small = {
	.name = "sqlite-small",
	.help = "the sqlite benchmark's small program alone: a fresh process inserts 75,000\n"
		"           rows, unix VFS against lpc's (defaults), interleaved; --rounds [21]",
	.run = sm_run,
	.estimate_s = sm_estimate_s,
};
