/* SPDX-License-Identifier: MIT */
/*
 * sqlite_db.c - the sqlite benchmark's databases: their sizes and paths
 * (sq_layout, the same in the parent and in the children), built once with
 * the unix VFS and copied, so that each side has a file of its own
 * (sqlite.c says what they hold).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "harness/util.h"
#include "sqlite_run.h"

/* ---- small helpers ---- */

static void xexec(sqlite3 *db, const char *sql, const char *what)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		die("sqlite: %s: %s: %s", what, sql, msg ? msg : sqlite3_errmsg(db));
}

uint64_t sq_file_bytes(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (uint64_t)st.st_size;
}

/* fdatasync, then drop from the page cache (it was just written). */
void sq_sync_drop(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		die_err(errno, "opening %s", path);
	if (fdatasync(fd))
		die_err(errno, "fdatasync %s", path);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
}

void sq_copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	uint64_t left = sq_file_bytes(from);

	if (in < 0 || out < 0)
		die_err(errno, "copying %s to %s", from, to);
	while (left) {
		ssize_t n = copy_file_range(in, NULL, out, NULL, left, 0);

		if (n <= 0)
			die_err(n < 0 ? errno : EIO, "copying %s to %s", from, to);
		left -= (uint64_t)n;
	}
	close(in);
	close(out);
}

/* ---- building the databases (this process, unix VFS, before the fork) ---- */

static void fill_value(unsigned char *v, int64_t key)
{
	memset(v, 0x5a ^ (unsigned char)key, SQ_VALUE);
	memcpy(v, &key, sizeof(key));
}

static sqlite3 *build_open(const char *path)
{
	sqlite3 *db;

	unlink(path);
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, "unix"))
		die("sqlite: creating %s: %s", path, sqlite3_errmsg(db));
	xexec(db, "PRAGMA page_size=4096; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF", "build");
	return db;
}

void sq_build_select(const char *path, uint64_t rows)
{
	sqlite3 *db = build_open(path);
	unsigned char v[SQ_VALUE];
	sqlite3_stmt *ins;

	xexec(db, "CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB NOT NULL); BEGIN", "build");
	if (sqlite3_prepare_v2(db, "INSERT INTO t VALUES(?1, ?2)", -1, &ins, NULL))
		die("sqlite: %s", sqlite3_errmsg(db));
	for (uint64_t k = 1; k <= rows; k++) {
		fill_value(v, (int64_t)k);
		sqlite3_bind_int64(ins, 1, (int64_t)k);
		sqlite3_bind_blob(ins, 2, v, SQ_VALUE, SQLITE_STATIC);
		if (sqlite3_step(ins) != SQLITE_DONE)
			die("sqlite: building %s: %s", path, sqlite3_errmsg(db));
		sqlite3_reset(ins);
	}
	sqlite3_finalize(ins);
	xexec(db, "COMMIT", "build");
	sqlite3_close(db);
}

void sq_build_tpcb(const char *path, uint64_t accounts, uint64_t tellers, uint64_t branches,
		   bool wal)
{
	sqlite3 *db = build_open(path);
	sqlite3_stmt *ins;

	xexec(db,
	      "CREATE TABLE branches(bid INTEGER PRIMARY KEY, bbalance INTEGER, filler TEXT);"
	      "CREATE TABLE tellers(tid INTEGER PRIMARY KEY, bid INTEGER, tbalance INTEGER, filler TEXT);"
	      "CREATE TABLE accounts(aid INTEGER PRIMARY KEY, bid INTEGER, abalance INTEGER, filler TEXT);"
	      "CREATE TABLE history(tid INTEGER, bid INTEGER, aid INTEGER, delta INTEGER,"
	      " mtime INTEGER, filler TEXT);"
	      "BEGIN", "build tpcb");
	if (sqlite3_prepare_v2(db, "INSERT INTO accounts VALUES(?1, ?2, 0, printf('%084d', 0))",
			       -1, &ins, NULL))
		die("sqlite: %s", sqlite3_errmsg(db));
	for (uint64_t a = 1; a <= accounts; a++) {
		sqlite3_bind_int64(ins, 1, (int64_t)a);
		sqlite3_bind_int64(ins, 2, (int64_t)((a - 1) * branches / accounts + 1));
		if (sqlite3_step(ins) != SQLITE_DONE)
			die("sqlite: building %s: %s", path, sqlite3_errmsg(db));
		sqlite3_reset(ins);
	}
	sqlite3_finalize(ins);
	for (uint64_t t = 1; t <= tellers; t++) {
		char sql[160];

		snprintf(sql, sizeof(sql),
			 "INSERT INTO tellers VALUES(%" PRIu64 ", %" PRIu64 ", 0, printf('%%084d', 0))",
			 t, (t - 1) / 10 + 1);
		xexec(db, sql, "build tpcb");
	}
	for (uint64_t b = 1; b <= branches; b++) {
		char sql[160];

		snprintf(sql, sizeof(sql),
			 "INSERT INTO branches VALUES(%" PRIu64 ", 0, printf('%%088d', 0))", b);
		xexec(db, sql, "build tpcb");
	}
	xexec(db, "COMMIT", "build tpcb");
	if (wal)
		xexec(db, "PRAGMA journal_mode=WAL", "build tpcb");
	sqlite3_close(db);
}

/* ---- the layout ---- */

uint64_t sq_budget(const struct bench_opts *o)
{
	return (uint64_t)(o->cache_mb_set ? o->cache_mb : SQ_DEF_CACHE_MB) << 20;
}

/* The sizes and paths of a run, from its options and x->dir: the same in
 * this process and in the children (sq_child). */
void sq_layout(struct sqctx *x, const struct bench_opts *o)
{
	x->lpc_bytes = sq_budget(o);
	x->conn_bytes = x->lpc_bytes / 8;
	x->nr_workers = bench_max_threads(o);
	x->rows[SD_SMALL] = 4 * x->conn_bytes / SQ_ROW_EST;
	x->rows[SD_LARGE] = 4 * x->lpc_bytes / SQ_ROW_EST;
	x->rows[SD_TPCB] = x->rows[SD_TPCB_WAL] = 4 * x->conn_bytes / SQ_ACC_EST;
	x->branches = x->rows[SD_TPCB] / 100000 + 1;
	x->tellers = 10 * x->branches;
	for (unsigned d = 0; d < SD_NR; d++)
		for (unsigned v = 0; v < SV_NR; v++)
			if (snprintf(x->path[d][v], sizeof(x->path[d][v]), "%s/%s.%s.db",
				     x->dir, sq_db_name[d], sq_vfs_name[v]) >=
			    (int)sizeof(x->path[d][v]) - 16)
				die("sqlite: the directory name %s is too long", x->dir);
}
