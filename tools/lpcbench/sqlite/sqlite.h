/* SPDX-License-Identifier: MIT */
/*
 * sqlite.h - the sqlite benchmark (the SQLite VFS's measurement): what its
 * measuring half (sqlite.c and its parts, sqlite_run.h), its counting VFS
 * (sqlite_vfs.c) and its reporting half (sqlite_report.c) share.  The
 * report uses nothing of the others.
 */
#ifndef LPCBENCH_SQLITE_H
#define LPCBENCH_SQLITE_H

#include <stdbool.h>
#include <stdint.h>

#include "harness/bench.h"
#include "harness/pool.h"

/* The databases, each a phase of its own (its own connections). */
enum sq_db {
	SD_SMALL,    /* 4x SQLite's per-connection cache, fits lpc's budget */
	SD_LARGE,    /* 4x lpc's budget */
	SD_TPCB,     /* TPC-B-like, rollback journal (DELETE), synchronous FULL */
	SD_TPCB_WAL, /* the same in WAL mode, synchronous FULL */
	SD_NR,
};

/* SQ_LARGE_SCAN: one cold full scan of large's table (SELECT count(*),
 * sum(k) FROM t) on one connection, at the first --threads count only: the
 * side's connections closed first (lpc's last close drops the file from its
 * cache; unix drops it from the page cache, posix_fadvise DONTNEED) and
 * opened again, so both start cold: readahead's row. */
enum sq_work {
	SQ_SMALL_UNI, SQ_SMALL_ZIPF, SQ_LARGE_UNI, SQ_LARGE_ZIPF, SQ_LARGE_SCAN, SQ_TPCB,
	SQ_TPCB_WAL, SQ_NR,
};

/* unix: the unix VFS in a memory cgroup (a child process); lpc: the VFS
 * lpc in detect coherence (this process); lpc_excl: lpc with
 * lpc_coherence=exclusive (a second child, with a cache of its own). */
enum sq_vfs { SV_UNIX, SV_LPC, SV_LPC_EXCL, SV_NR };

/* Measured rounds when --rounds is not given (three sides per round). */
#define SQ_DEF_ROUNDS 15

extern const char *const sq_work_name[SQ_NR];
extern const char *const sq_db_name[SD_NR];
extern const char *const sq_vfs_name[SV_NR];

static inline enum sq_db sq_work_db(enum sq_work w)
{
	static const enum sq_db db[SQ_NR] = { SD_SMALL, SD_SMALL, SD_LARGE, SD_LARGE,
					      SD_LARGE, SD_TPCB, SD_TPCB_WAL };
	return db[w];
}

static inline bool sq_work_writes(enum sq_work w)
{
	return w == SQ_TPCB || w == SQ_TPCB_WAL;
}

static inline bool sq_work_scan(enum sq_work w)
{
	return w == SQ_LARGE_SCAN;
}

/*
 * What the counting VFS and the unix VFS's system-call table counted for one
 * thread (sqlite_vfs.c).  Each worker sets its own as the thread's counter.
 */
struct sq_count {
	uint64_t xread, xwrite, xsync; /* VFS calls on the files */
	uint64_t sys_read;  /* unix: pread64/pread/read system calls */
	uint64_t sys_write; /* unix: pwrite64/pwrite/write */
	uint64_t sys_lock;  /* unix: fcntl (POSIX advisory locks) */
	uint64_t sys_sync;  /* unix: one per xSync (fdatasync; see sqlite_vfs.c) */
	uint64_t sys_other; /* unix: open, close, access, stat, fstat, ... */
};

static inline uint64_t sq_count_sys(const struct sq_count *c)
{
	return c->sys_read + c->sys_write + c->sys_lock + c->sys_sync + c->sys_other;
}

static inline void sq_count_add(struct sq_count *a, const struct sq_count *b)
{
	a->xread += b->xread;
	a->xwrite += b->xwrite;
	a->xsync += b->xsync;
	a->sys_read += b->sys_read;
	a->sys_write += b->sys_write;
	a->sys_lock += b->sys_lock;
	a->sys_sync += b->sys_sync;
	a->sys_other += b->sys_other;
}

/*
 * Installs the counting wrappers in the unix VFS's system-call table and
 * registers the counting VFSes "count-unix" (over "unix") and, when under
 * is not NULL, "count-<under>" over that VFS.  Call before any file is
 * opened.  Return: 0 or an SQLite error code.
 */
int sq_vfs_install(void);
int sq_vfs_wrap(const char *under, char *name, unsigned len);

/* The calling thread's counter (NULL: counted nowhere). */
void sq_count_set(struct sq_count *c);

/* One row of a round: a workload through a VFS at a thread count. */
struct sq_row {
	enum sq_work w;
	enum sq_vfs v;
	unsigned threads;
	bool skip; /* unix without a memory cgroup, lpc without liblpc_sqlite */
};

/* What one slice of a row measured. */
struct sq_sample {
	struct pool_slice ps;
	uint64_t queries;  /* point selects, TPC-B transactions, or rows scanned */
	uint64_t busy;     /* SQLITE_BUSY retries (TPC-B) */
	uint64_t io_bytes; /* bytes the workers fetched from storage
			    * (/proc/thread-self/io read_bytes) */
	struct sq_count c; /* the workers' */
	/* lpc rows: lpc_sqlite_stats deltas over the slice (every thread of
	 * the process, the flusher and reclaimer included) */
	uint64_t lookups, hits, reads, read_around, vwrites, fsyncs, evictions;
	int err;           /* first SQLite error code of a worker; 0: none */
};

struct sq_phase_end {
	bool ran;
	uint64_t db_bytes;     /* the database file's size at the start */
	double warm_s;
	uint64_t cg_limit, cg_usage, cg_file, cg_anon; /* at the end */
	uint64_t cg_file_min; /* the page cache's least after a unix slice of
			       * the rounds (UINT64_MAX: none seen) */
	uint64_t lpc_frames;   /* lpc's cache at the end (gauge) */
	char err[SV_NR][160];  /* a side that failed, and why */
};

struct sq_results {
	unsigned rounds;
	unsigned nr_rows;
	struct sq_row *rows;
	struct sq_sample *s; /* [rounds][nr_rows] */
	struct sq_phase_end end[SD_NR];
	uint64_t lpc_bytes;  /* lpc's budget */
	uint64_t conn_bytes; /* SQLite's per-connection cache */
	bool memcg;
	char memcg_why[256];
	int memcg_version;
	bool have_lpc;
};

static inline struct sq_sample *sq_sample(const struct sq_results *r, unsigned round,
					  unsigned row)
{
	return &r->s[(size_t)round * r->nr_rows + row];
}

void sq_report(const struct bench_env *env, const struct sq_results *res);

#endif /* LPCBENCH_SQLITE_H */
