/* SPDX-License-Identifier: MIT */
/*
 * sqlite_report.c - the sqlite benchmark's tables: per workload and thread
 * count, unix and lpc side by side, lpc/unix within each round, the
 * goals, and what each phase's memory held.
 *
 * Definitions (per round, then median [min - max] over the rounds):
 *   k/s       queries (point selects) or transactions (tpcb) per second,
 *             all threads, in 1000s
 *   hit       lpc: lpc_sqlite_stats hits / lookups (every thread of the
 *             process); unix: 1 - (storage bytes the querying threads
 *             read / 4 KiB) / their pread calls (readahead counts as a miss)
 *   xRead/q   the VFS's xRead calls per query: SQLite's own cache misses
 *             (and the header reads at each transaction's start)
 *   sys/q     system calls per query: the unix VFS's system-call table and
 *             fdatasync/fsync, counted in the querying threads (for lpc:
 *             what its VFS delegates to unix: locks, journals, the WAL), plus
 *             for lpc its backend reads and vectored writes (every thread,
 *             its flusher's included); split as read / write / lock / sync /
 *             other
 *   lpc/unix  k/s of lpc over k/s of unix at the same thread count, in the
 *             same round
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/plot.h"
#include "harness/util.h"
#include "sqlite.h"

#define GOAL_SELECT 2.0 /* the goal: point selects >= 2x unix's at equal memory */
#define GOAL_WRITE 1.0  /* ... and write throughput not below it */
#define GOAL_SCAN 1.0   /* ... and a cold full scan not slower (readahead) */

const char *const sq_work_name[SQ_NR] = {
	[SQ_SMALL_UNI] = "small-uniform", [SQ_SMALL_ZIPF] = "small-zipf",
	[SQ_LARGE_UNI] = "large-uniform", [SQ_LARGE_ZIPF] = "large-zipf",
	[SQ_LARGE_SCAN] = "large-scan",
	[SQ_TPCB] = "tpcb", [SQ_TPCB_WAL] = "tpcb-wal",
};
const char *const sq_db_name[SD_NR] = { "small", "large", "tpcb", "tpcb-wal" };
const char *const sq_vfs_name[SV_NR] = { "unix", "lpc", "lpc_excl" };

typedef double (*sq_fn)(const struct sq_sample *s);

static double q(const struct sq_sample *s)
{
	return (double)s->queries;
}

static double f_kqps(const struct sq_sample *s)
{
	return s->ps.wall_ns ? q(s) * 1e6 / (double)s->ps.wall_ns : NAN;
}

static double f_hit_lpc(const struct sq_sample *s)
{
	return s->lookups ? (double)s->hits / (double)s->lookups : NAN;
}

static double f_hit_unix(const struct sq_sample *s)
{
	return s->c.sys_read ? 1.0 - (double)s->io_bytes / 4096.0 / (double)s->c.sys_read : NAN;
}

static double f_xread(const struct sq_sample *s)
{
	return s->queries ? (double)s->c.xread / q(s) : NAN;
}

static double lpc_io(const struct sq_sample *s)
{
	return (double)(s->reads + s->vwrites);
}

static double f_sys(const struct sq_sample *s)
{
	return s->queries ? ((double)sq_count_sys(&s->c) + lpc_io(s)) / q(s) : NAN;
}

static double f_sys_read(const struct sq_sample *s)
{
	return s->queries ? ((double)s->c.sys_read + (double)s->reads) / q(s) : NAN;
}

static double f_sys_write(const struct sq_sample *s)
{
	return s->queries ? ((double)s->c.sys_write + (double)s->vwrites) / q(s) : NAN;
}

static double f_sys_lock(const struct sq_sample *s)
{
	return s->queries ? (double)s->c.sys_lock / q(s) : NAN;
}

static double f_sys_sync(const struct sq_sample *s)
{
	return s->queries ? (double)s->c.sys_sync / q(s) : NAN;
}

static double f_sys_other(const struct sq_sample *s)
{
	return s->queries ? (double)s->c.sys_other / q(s) : NAN;
}

static double f_busy(const struct sq_sample *s)
{
	return s->queries ? (double)s->busy / q(s) : NAN;
}

struct rep {
	const struct bench_env *env;
	const struct sq_results *res;
	double *x; /* [rounds] scratch */
};

static int find_row(const struct sq_results *res, enum sq_work w, enum sq_vfs v,
		    unsigned threads)
{
	for (unsigned i = 0; i < res->nr_rows; i++) {
		const struct sq_row *r = &res->rows[i];

		if (r->w == w && r->v == v && r->threads == threads)
			return r->skip || res->end[sq_work_db(w)].err[v][0] ? -1 : (int)i;
	}
	return -1;
}

static struct summary over(const struct rep *rp, sq_fn fn, int row)
{
	struct summary none = { NAN, NAN, NAN, 0 };

	if (row < 0)
		return none;
	for (unsigned r = 0; r < rp->res->rounds; r++)
		rp->x[r] = fn(sq_sample(rp->res, r, (unsigned)row));
	return summarize(rp->x, rp->res->rounds);
}

static struct summary ratio(const struct rep *rp, int num, int den)
{
	struct summary none = { NAN, NAN, NAN, 0 };

	if (num < 0 || den < 0)
		return none;
	for (unsigned r = 0; r < rp->res->rounds; r++) {
		double d = f_kqps(sq_sample(rp->res, r, (unsigned)den));

		rp->x[r] = d > 0 ? f_kqps(sq_sample(rp->res, r, (unsigned)num)) / d : NAN;
	}
	return summarize(rp->x, rp->res->rounds);
}

static void csv_sum(const struct rep *rp, enum sq_work w, const char *vfs, unsigned t,
		    const char *metric, const struct summary *s)
{
	char var[48];

	snprintf(var, sizeof(var), "%s/%s", sq_work_name[w], vfs);
	csv_summary(rp->env->csv,
		    &(struct csv_key){ .bench = "sqlite", .threads = t, .variant = var,
				       .metric = metric },
		    s);
}

static void print_work(const struct rep *rp, enum sq_work w, struct plot *pl,
		       struct summary goal[][SQ_NR][BENCH_MAX_TCONF])
{
	const struct bench_opts *o = rp->env->opts;
	const char *unit = sq_work_writes(w) ? "ktx/s" : sq_work_scan(w) ? "krow/s" : "kq/s";
	char c[96];

	printf("sqlite %s (%s; median [min - max] over %u rounds)\n", sq_work_name[w], unit,
	       rp->res->rounds);
	printf("  %7s %-8s %9s %21s %6s %7s %6s  %-28s%s\n", "threads", "vfs", unit, "range",
	       "hit", "xRead/q", "sys/q", "(read write lock sync other)",
	       sq_work_writes(w) ? " busy/tx" : "");
	for (unsigned t = 0; t < (sq_work_scan(w) ? 1 : o->nr_tconf); t++) {
		unsigned th = o->threads[t];
		int row[SV_NR];

		for (enum sq_vfs v = 0; v < SV_NR; v++) {
			struct summary k, h;

			row[v] = find_row(rp->res, w, v, th);
			if (row[v] < 0) {
				printf("  %7u %-8s %9s\n", th, sq_vfs_name[v], "skipped");
				continue;
			}
			k = over(rp, f_kqps, row[v]);
			h = over(rp, v != SV_UNIX ? f_hit_lpc : f_hit_unix, row[v]);
			printf("  %7u %-8s %9.2f [%8.2f - %8.2f] %6.3f %7.2f %6.2f  (%4.2f %4.2f %4.2f %4.2f %4.2f)",
			       th, sq_vfs_name[v], k.med, k.min, k.max, h.med,
			       over(rp, f_xread, row[v]).med, over(rp, f_sys, row[v]).med,
			       over(rp, f_sys_read, row[v]).med, over(rp, f_sys_write, row[v]).med,
			       over(rp, f_sys_lock, row[v]).med, over(rp, f_sys_sync, row[v]).med,
			       over(rp, f_sys_other, row[v]).med);
			if (sq_work_writes(w))
				printf(" %7.3f", over(rp, f_busy, row[v]).med);
			printf("\n");
			csv_sum(rp, w, sq_vfs_name[v], th,
				unit[1] == 't' ? "ktx_s" : unit[1] == 'r' ? "krow_s" : "kq_s", &k);
			csv_sum(rp, w, sq_vfs_name[v], th, "hit", &h);
			{
				struct summary sy = over(rp, f_sys, row[v]);
				struct summary xr = over(rp, f_xread, row[v]);

				csv_sum(rp, w, sq_vfs_name[v], th, "syscalls_per_query", &sy);
				csv_sum(rp, w, sq_vfs_name[v], th, "xread_per_query", &xr);
			}
			plot_row(pl, "%s/%u,%s,%s", sq_work_name[w], th, sq_vfs_name[v],
				 plot_sum(c, sizeof(c), &k));
		}
		for (enum sq_vfs v = SV_LPC; v < SV_NR; v++) {
			struct summary *g = &goal[v - SV_LPC][w][t];

			*g = ratio(rp, row[v], row[SV_UNIX]);
			if (isnan(g->med))
				continue;
			printf("  %7u %s/unix %*s%8.2f [%5.2f - %5.2f]\n", th, sq_vfs_name[v],
			       v == SV_LPC ? 5 : 0, "", g->med, g->min, g->max);
			csv_sum(rp, w, "-", th, v == SV_LPC ? "ratio_lpc_unix" : "ratio_lpc_excl_unix",
				g);
		}
	}
	printf("\n");
}

static void print_goals_of(const struct rep *rp, enum sq_vfs v,
			   struct summary goal[][BENCH_MAX_TCONF])
{
	const struct bench_opts *o = rp->env->opts;

	printf("goals (%s/unix, within rounds, median [min - max]):\n", sq_vfs_name[v]);
	for (enum sq_work w = 0; w < SQ_NR; w++) {
		double g = sq_work_writes(w) ? GOAL_WRITE : sq_work_scan(w) ? GOAL_SCAN : GOAL_SELECT;

		printf("  %-14s >= %.1f:", sq_work_name[w], g);
		for (unsigned t = 0; t < (sq_work_scan(w) ? 1 : o->nr_tconf); t++) {
			const struct summary *s = &goal[w][t];

			if (isnan(s->med))
				printf("  %ut n/a", o->threads[t]);
			else
				printf("  %ut %.2f [%.2f-%.2f] %s", o->threads[t], s->med, s->min,
				       s->max, s->med >= g ? "met" : "NOT met");
		}
		printf("\n");
	}
}

static void print_goals(const struct rep *rp, struct summary goals[][SQ_NR][BENCH_MAX_TCONF])
{
	for (enum sq_vfs v = SV_LPC; v < SV_NR; v++)
		print_goals_of(rp, v, goals[v - SV_LPC]);
	printf("  (every database here exceeds SQLite's per-connection cache 4x or more)\n\n");
}

static void print_phases(const struct rep *rp)
{
	const struct sq_results *res = rp->res;

	printf("memory per phase (at its end): the unix child's cgroup (limit, page cache and its least\n"
	       "after any unix slice of the rounds, anonymous) and lpc's cache (%.0f MiB budget)\n",
	       (double)res->lpc_bytes / 1048576.0);
	for (enum sq_db d = 0; d < SD_NR; d++) {
		const struct sq_phase_end *e = &res->end[d];

		if (!e->ran)
			continue;
		printf("  %-9s db %6.1f MiB, warm %4.1f s", sq_db_name[d],
		       (double)e->db_bytes / 1048576.0, e->warm_s);
		if (res->memcg)
			printf("; cgroup limit %6.1f MiB, page cache %6.1f MiB (least %6.1f), anon %6.1f MiB",
			       (double)e->cg_limit / 1048576.0, (double)e->cg_file / 1048576.0,
			       e->cg_file_min == UINT64_MAX ? NAN : (double)e->cg_file_min / 1048576.0,
			       (double)e->cg_anon / 1048576.0);
		printf("\n");
		for (enum sq_vfs v = 0; v < SV_NR; v++)
			if (e->err[v][0])
				printf("            %s FAILED: %s\n", sq_vfs_name[v], e->err[v]);
	}
	printf("\n");
}

void sq_report(const struct bench_env *env, const struct sq_results *res)
{
	struct rep rp = { env, res, xcalloc(res->rounds ? res->rounds : 1, sizeof(double)) };
	struct summary goal[SV_NR - SV_LPC][SQ_NR][BENCH_MAX_TCONF];
	struct plot *pl = plot_open(&(struct plot_spec){
		.name = "sqlite", .title = "SQLite: unix VFS in a memory cgroup vs VFS lpc, equal memory",
		.ylabel = "k queries (tpcb: transactions) / s", .stitle = "vfs",
		.header = "work_threads,vfs,kqps,min,max", .xcol = 1, .scol = 2, .ycol = 3,
		.locol = 4, .hicol = 5, .logy = true, .ref = NAN });

	for (enum sq_work w = 0; w < SQ_NR; w++)
		print_work(&rp, w, pl, goal);
	plot_close(pl);
	print_goals(&rp, goal);
	print_phases(&rp);
	free(rp.x);
}
