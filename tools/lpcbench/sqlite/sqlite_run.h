/* SPDX-License-Identifier: MIT */
/*
 * sqlite_run.h - what the sqlite benchmark's parts share while it runs: the
 * run's layout and state (struct sqctx), one side's connections and workers
 * (struct side), the commands a side serves, and each part's calls.
 *
 *   sqlite.c        the benchmark: setup, the phases and rounds, the cleanup
 *   sqlite_db.c     the databases: sizes and paths, built and copied
 *   sqlite_side.c   one side: its connections, the timed loops, its commands
 *   sqlite_child.c  the child processes that run the unix and lpc_excl sides
 *   sqlite_vfs.c    the counting VFS (sqlite.h)
 *   sqlite_report.c the report (sqlite.h)
 *
 * Calls go one way: sqlite.c -> sqlite_child.c -> sqlite_side.c, and each of
 * them -> sqlite_db.c, sqlite_vfs.c and sqlite_report.c (the rows' names).
 */
#ifndef LPCBENCH_SQLITE_RUN_H
#define LPCBENCH_SQLITE_RUN_H

#include <limits.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include <lpc/lpc.h>

#include "harness/bench.h"
#include "harness/kchild.h"
#include "harness/pool.h"
#include "harness/util.h"
#include "harness/zipf.h"
#include "sqlite.h"

#define SQ_DEF_CACHE_MB 16u /* B; C = B / 8 */
#define SQ_VALUE 100u       /* bytes of t.v */
#define SQ_ROW_EST 112u     /* bytes of file per row of t, about */
#define SQ_ACC_EST 98u      /* ... per row of accounts */
#define SQ_BATCH 8          /* selects between two looks at the stop flag */
#define SQ_WARM_SLICE_NS 250000000u
#define SQ_SLACK (512u << 10) /* over B + anon: the child's heap may grow a little */
#define SQ_BUSY_MS 10000
#define SQ_OPEN_ROOM ((uint64_t)256 << 20) /* the cgroup's room over B while opening */
/* Sanitizer builds: the child's anonymous memory grows all the time (ASan's
 * quarantine), so the limit is not lowered to B + anon (it would kill it):
 * such a run checks that everything works, it measures nothing. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SQ_SANITIZER 1
#else
#define SQ_SANITIZER 0
#endif
#define SQ_BUSY_POLL_NS 100000u /* a waiting writer polls the lock this often */

struct sworker {
	alignas(BENCH_CACHELINE) uint64_t rng;
	sqlite3 *db;
	sqlite3_stmt *sel;
	sqlite3_stmt *begin, *upd_acc, *sel_acc, *upd_tel, *upd_br, *ins_hist, *commit,
		*rollback;
	struct sq_count c;
	uint64_t queries, busy, io_bytes, mtime;
	int iofd;
	int err;
	char msg[120];
};

struct sqctx;

/* One side's connections: lpc's in this process, unix's in the child. */
struct side {
	enum sq_vfs v;
	char vfs[64]; /* the counting VFS over it */
	struct pool *pool;
	struct sworker *wk;
	enum sq_db d; /* the open phase */
	bool open;
	/* the slice being run */
	enum sq_work w;
	const struct sqctx *x;
};

/* Parent -> child commands, child -> parent results (pipes). */
enum { CMD_SETUP, CMD_OPEN, CMD_RUN, CMD_CLOSE };

struct sq_cmd {
	int op;
	int v; /* CMD_SETUP: the child's side */
	int d, w;
	unsigned threads;
	uint64_t slice_ns;
};

struct sq_res {
	int err;
	char msg[160];
	struct sq_sample s;
};

struct sqctx {
	const struct bench_env *env;
	char dir[PATH_MAX];
	char path[SD_NR][SV_NR][PATH_MAX];
	uint64_t rows[SD_NR]; /* rows of t, or of accounts */
	uint64_t tellers, branches;
	uint64_t lpc_bytes, conn_bytes;
	unsigned nr_workers;
	struct zipf zipf[2]; /* over small's and large's keys */
	struct side side;    /* this process's: lpc (the child's: unix) */
	bool have_cg, have_lpc;
	/* the children (kchild.h): [SV_UNIX] in the memory cgroup
	 * kid[SV_UNIX].cg, [SV_LPC_EXCL]; pid 0: none */
	struct kchild kid[SV_NR];
};

/* ---- sqlite_db.c ---- */

/* lpc's budget B: --cache-mb, else SQ_DEF_CACHE_MB. */
uint64_t sq_budget(const struct bench_opts *o);

/* Fills x's sizes and paths from the options and x->dir (sq_layout). */
void sq_layout(struct sqctx *x, const struct bench_opts *o);

/* Builds a database with the unix VFS: t with `rows` rows, or TPC-B's
 * tables (in WAL mode if wal).  Dies on failure. */
void sq_build_select(const char *path, uint64_t rows);
void sq_build_tpcb(const char *path, uint64_t accounts, uint64_t tellers, uint64_t branches,
		   bool wal);
void sq_copy_file(const char *from, const char *to);
void sq_sync_drop(const char *path);
uint64_t sq_file_bytes(const char *path);

/* ---- sqlite_side.c ---- */

/* Makes side v (over VFS vfs) and its pool of x->nr_workers workers. */
void sq_side_init(struct sqctx *x, struct side *sd, enum sq_vfs v, const char *vfs);

/* Does one command on this process's side (the child's, or lpc's here). */
void sq_side_cmd(struct sqctx *x, struct side *sd, const struct sq_cmd *c, struct sq_res *r);

/* Closes every connection of the side. */
void sq_side_close(struct side *sd);

/* liblpc_sqlite's counters (zeros without it). */
void sq_lpc_counters(struct lpc_stats *st);

/* ---- sqlite_child.c ---- */

/* Starts side v's process; false if it cannot run (no cgroup for unix). */
bool sq_child_start(struct sqctx *x, enum sq_vfs v, const char *name);
void sq_child_call(struct sqctx *x, enum sq_vfs v, const struct sq_cmd *c, struct sq_res *r);
void sq_child_stop(struct sqctx *x, enum sq_vfs v);

/* ---- sqlite_small.c ---- */

/* The small-program table: rounds of it (0: its default), printed. */
void sq_small_run(const struct sqctx *x, unsigned rounds);
/* The database path of its side (0 unix, 1 lpc), for the clean-up. */
void sq_small_path(const struct sqctx *x, unsigned side, char *buf, size_t len);
/* The program itself, in a child exec'd with the argument "small VFS PATH"
 * (given here without "small "). */
void __attribute__((noreturn)) sq_small_child(const char *arg);

/* bench_sqlite.child: the body of an exec'd child. */
void sq_child(const struct bench_env *env, const char *dir, int cmd_fd, int res_fd);

#endif /* LPCBENCH_SQLITE_RUN_H */
