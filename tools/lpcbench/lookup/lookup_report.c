/* SPDX-License-Identifier: MIT */
/*
 * lookup_report.c - the lookup benchmark's results: a table per variant and
 * thread count, the ratios between variants, the scaling, the targets (the
 * "checks") and the caches' counters.
 *
 * Every ratio is taken inside one round, between slices that ran about a
 * second apart, and only then summarised over the rounds (median and range):
 * a ratio of two medians would compare slices from different moments of a
 * machine whose speed drifts.  That is also why a round runs every thread
 * count: the scaling from 1 to 2 threads is a ratio within a round too.
 *
 * Definitions (per round):
 *   ticks/op      TSC ticks summed over the slice's threads / its operations:
 *                 what one operation costs one thread.  With more threads
 *                 than CPUs it includes the time a thread waited for a CPU.
 *   Mops/s        operations of all threads / the slice's wall time.
 *   x floor       ticks/op of the variant / ticks/op of the floor.
 *   scaling       Mops/s at T threads / Mops/s at 1 thread, same variant.
 *   cpu %         CPU time the threads got / (wall time x the CPUs they could
 *                 use, min(T, CPUs)): below 100 %, something else ran on
 *                 those CPUs during the slice, and ticks/op counts that too.
 *   cpu ticks/op  the threads' CPU time (CLOCK_THREAD_CPUTIME_ID) in ticks /
 *                 operations: the cost with the time preempted taken out.
 *                 Reported beside ticks/op, not used in the ratios.
 */

/* Below this median cpu % (threads <= CPUs) the run is flagged as disturbed. */
#define CPU_SHARE_QUIET 90.0
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness/plot.h"
#include "harness/util.h"
#include "lookup.h"

/* The targets of the checks; see lookup_checks() for what each compares. */
#define TARGET_LOCKLESS_OVER_FLOOR 1.5 /* a) at most */
#define TARGET_LOCKED_OVER_LOCKLESS_1T 1.5 /* b) at least, 1 thread */
#define TARGET_LOCKED_OVER_LOCKLESS_2T 5.0 /* b) at least, 2 threads */
#define TARGET_SCALING_VS_FLOOR 0.9 /* c) at least */
#define TARGET_OVERSUB 0.9 /* d) at least */
#define TARGET_KERNEL_OVER_LPC_PREAD_HOT 5.0 /* e) at least, hot page */
#define TARGET_FIND_HOT_OVER_OPTIMISTIC 1.5 /* f) at least, hot page, 1 thread */
#define TARGET_PREAD_SHARED_SCALING 1.9 /* g) at least, 1 -> 2 threads */
#define TARGET_KERNEL_OVER_PREAD_SHARED 10.0 /* h) at least, shared page */

const char *const lookup_variant_name[LV_NR] = {
	[LV_FLOOR] = "floor",
	[LV_LOCKLESS] = "lockless",
	[LV_LOCKED] = "locked",
	[LV_KERNEL] = "kernel",
	[LV_LPC_PREAD] = "lpc_pread",
	[LV_KERNEL_HOT] = "kernel_hot",
	[LV_LPC_PREAD_HOT] = "lpc_pread_hot",
	[LV_LOCKLESS_HOT] = "lockless_hot",
	[LV_OPTIMISTIC] = "optimistic",
	[LV_KERNEL_SHARED] = "kernel_shared",
	[LV_LPC_PREAD_SHARED] = "lpc_pread_shared",
	[LV_LOCKLESS_SHARED] = "lockless_shared",
	[LV_OPTIMISTIC_SHARED] = "optimistic_shared",
};

struct report {
	const struct bench_env *env;
	const struct lookup_results *res;
	double *x; /* scratch: one value per round */
	/* Positions in the thread list of the configurations the checks
	 * compare, or -1 if the list lacks them. */
	int tc_one;  /* 1 thread */
	int tc_two;  /* 2 threads */
	int tc_base; /* the most threads that fit the CPUs, 1 per CPU */
	int tc_over; /* the most threads, if more than the CPUs */

	struct summary tpo[BENCH_MAX_TCONF][LV_NR];
	struct summary ratio_floor[BENCH_MAX_TCONF][LV_NR];
	struct summary mops[BENCH_MAX_TCONF][LV_NR];
	struct summary cpu_share[BENCH_MAX_TCONF][LV_NR];
	struct summary cpu_tpo[BENCH_MAX_TCONF][LV_NR];
	struct summary locked_lockless[BENCH_MAX_TCONF];
	struct summary lockless_locked_mops[BENCH_MAX_TCONF];
	struct summary kernel_lpc_pread[BENCH_MAX_TCONF];
	struct summary kernel_lpc_pread_hot[BENCH_MAX_TCONF];
	struct summary kernel_lockless[BENCH_MAX_TCONF];
	struct summary find_hot_optimistic[BENCH_MAX_TCONF];
	struct summary find_shared_optimistic[BENCH_MAX_TCONF];
	struct summary kernel_lpc_pread_shared[BENCH_MAX_TCONF];
	struct summary scaling[BENCH_MAX_TCONF][LV_NR];
	struct summary scaling_vs_floor[BENCH_MAX_TCONF];
	struct summary oversub[LV_NR];
};

/* A per-round quantity: round r, thread configuration tc, variant v. */
typedef double (*round_fn)(const struct report *rp, unsigned r, unsigned tc,
			   unsigned v);

static double tpo_of(const struct pool_slice *s)
{
	return s->ops ? (double)s->ticks / (double)s->ops : NAN;
}

static double mops_of(const struct pool_slice *s)
{
	return s->wall_ns ? (double)s->ops * 1e3 / (double)s->wall_ns : NAN;
}

static double f_tpo(const struct report *rp, unsigned r, unsigned tc, unsigned v)
{
	return tpo_of(lookup_slice(rp->res, r, tc, v));
}

static double f_ns(const struct report *rp, unsigned r, unsigned tc, unsigned v)
{
	return f_tpo(rp, r, tc, v) / rp->env->tsc.ticks_per_ns;
}

static double f_mops(const struct report *rp, unsigned r, unsigned tc, unsigned v)
{
	return mops_of(lookup_slice(rp->res, r, tc, v));
}

static double f_mops_thread(const struct report *rp, unsigned r, unsigned tc,
			    unsigned v)
{
	return f_mops(rp, r, tc, v) / rp->res->threads[tc];
}

static double f_cpu_tpo(const struct report *rp, unsigned r, unsigned tc, unsigned v)
{
	const struct pool_slice *s = lookup_slice(rp->res, r, tc, v);

	return s->ops ? (double)s->cpu_ns * rp->env->tsc.ticks_per_ns / (double)s->ops :
			NAN;
}

static double f_cpu_share(const struct report *rp, unsigned r, unsigned tc,
			  unsigned v)
{
	const struct pool_slice *s = lookup_slice(rp->res, r, tc, v);
	unsigned t = rp->res->threads[tc], cpus = rp->env->nr_cpus;

	return s->wall_ns ? 100.0 * (double)s->cpu_ns /
			    ((double)s->wall_ns * (t < cpus ? t : cpus)) : NAN;
}

static double f_ratio_floor(const struct report *rp, unsigned r, unsigned tc,
			    unsigned v)
{
	return f_tpo(rp, r, tc, v) / f_tpo(rp, r, tc, LV_FLOOR);
}

static double f_locked_lockless(const struct report *rp, unsigned r, unsigned tc,
				unsigned v)
{
	return f_tpo(rp, r, tc, LV_LOCKED) / f_tpo(rp, r, tc, LV_LOCKLESS);
}

static double f_lockless_locked_mops(const struct report *rp, unsigned r,
				     unsigned tc, unsigned v)
{
	return f_mops(rp, r, tc, LV_LOCKLESS) / f_mops(rp, r, tc, LV_LOCKED);
}

static double f_kernel_lpc_pread(const struct report *rp, unsigned r, unsigned tc,
				 unsigned v)
{
	return f_tpo(rp, r, tc, LV_KERNEL) / f_tpo(rp, r, tc, LV_LPC_PREAD);
}

static double f_kernel_lpc_pread_hot(const struct report *rp, unsigned r,
				     unsigned tc, unsigned v)
{
	return f_tpo(rp, r, tc, LV_KERNEL_HOT) / f_tpo(rp, r, tc, LV_LPC_PREAD_HOT);
}

static double f_kernel_lockless(const struct report *rp, unsigned r, unsigned tc,
				unsigned v)
{
	return f_tpo(rp, r, tc, LV_KERNEL) / f_tpo(rp, r, tc, LV_LOCKLESS);
}

static double f_find_hot_optimistic(const struct report *rp, unsigned r, unsigned tc,
				    unsigned v)
{
	return f_tpo(rp, r, tc, LV_LOCKLESS_HOT) / f_tpo(rp, r, tc, LV_OPTIMISTIC);
}

static double f_find_shared_optimistic(const struct report *rp, unsigned r, unsigned tc,
				       unsigned v)
{
	return f_tpo(rp, r, tc, LV_LOCKLESS_SHARED) / f_tpo(rp, r, tc, LV_OPTIMISTIC_SHARED);
}

static double f_kernel_lpc_pread_shared(const struct report *rp, unsigned r, unsigned tc,
					unsigned v)
{
	return f_tpo(rp, r, tc, LV_KERNEL_SHARED) / f_tpo(rp, r, tc, LV_LPC_PREAD_SHARED);
}

static double f_scaling(const struct report *rp, unsigned r, unsigned tc, unsigned v)
{
	return f_mops(rp, r, tc, v) / f_mops(rp, r, (unsigned)rp->tc_one, v);
}

static double f_scaling_vs_floor(const struct report *rp, unsigned r, unsigned tc,
				 unsigned v)
{
	return f_scaling(rp, r, tc, LV_LOCKLESS) / f_scaling(rp, r, tc, LV_FLOOR);
}

static double f_oversub(const struct report *rp, unsigned r, unsigned tc, unsigned v)
{
	return f_mops(rp, r, tc, v) / f_mops(rp, r, (unsigned)rp->tc_base, v);
}

/*
 * Evaluates fn in every round, writes each value and the summary to the CSV
 * under (threads of tc, variant, metric), and returns the summary.  variant
 * -1 names a ratio between variants ("-" in the CSV).
 */
static struct summary over_rounds(const struct report *rp, round_fn fn,
				  unsigned tc, int v, const char *metric)
{
	struct csv_key k = {
		.bench = "lookup",
		.threads = rp->res->threads[tc],
		.variant = v < 0 ? "-" : lookup_variant_name[v],
		.metric = metric,
	};
	struct summary s;

	/* NaN: a variant it needs was not run (--variants); no row for it. */
	for (unsigned r = 0; r < rp->res->rounds; r++) {
		rp->x[r] = fn(rp, r, tc, v < 0 ? 0 : (unsigned)v);
		k.round = r + 1;
		if (!isnan(rp->x[r]))
			csv_raw(rp->env->csv, &k, rp->x[r]);
	}
	s = summarize(rp->x, rp->res->rounds);
	if (s.n)
		csv_summary(rp->env->csv, &k, &s);
	return s;
}

/* "med [min - max]" with the given width and precision, or "n/a". */
static const char *fmt_sum(char *buf, size_t len, const struct summary *s,
			   int width, int prec)
{
	if (!s->n)
		snprintf(buf, len, "%*s", 3 * width + 6, "n/a");
	else
		snprintf(buf, len, "%*.*f [%*.*f - %*.*f]", width, prec, s->med,
			 width, prec, s->min, width, prec, s->max);
	return buf;
}

static int find_threads(const struct lookup_results *res, unsigned threads)
{
	for (unsigned tc = 0; tc < res->nr_tconf; tc++)
		if (res->threads[tc] == threads)
			return (int)tc;
	return -1;
}

static void find_configs(struct report *rp)
{
	const struct lookup_results *res = rp->res;
	unsigned cpus = rp->env->nr_cpus;

	rp->tc_one = find_threads(res, 1);
	rp->tc_two = find_threads(res, 2);
	rp->tc_base = rp->tc_over = -1;
	for (unsigned tc = 0; tc < res->nr_tconf; tc++) {
		unsigned t = res->threads[tc];

		if (t <= cpus && (rp->tc_base < 0 || t > res->threads[rp->tc_base]))
			rp->tc_base = (int)tc;
		if (t > cpus && (rp->tc_over < 0 || t > res->threads[rp->tc_over]))
			rp->tc_over = (int)tc;
	}
}

static void compute(struct report *rp)
{
	const struct lookup_results *res = rp->res;

	for (unsigned tc = 0; tc < res->nr_tconf; tc++) {
		for (int v = 0; v < LV_NR; v++) {
			rp->tpo[tc][v] = over_rounds(rp, f_tpo, tc, v, "ticks_per_op");
			over_rounds(rp, f_ns, tc, v, "ns_per_op");
			rp->mops[tc][v] = over_rounds(rp, f_mops, tc, v, "mops");
			over_rounds(rp, f_mops_thread, tc, v, "mops_per_thread");
			rp->cpu_share[tc][v] = over_rounds(rp, f_cpu_share, tc, v,
							   "cpu_percent");
			rp->cpu_tpo[tc][v] = over_rounds(rp, f_cpu_tpo, tc, v,
							 "cpu_ticks_per_op");
			rp->ratio_floor[tc][v] =
				over_rounds(rp, f_ratio_floor, tc, v, "ratio_floor");
		}
		rp->locked_lockless[tc] = over_rounds(rp, f_locked_lockless, tc, -1,
						      "locked_over_lockless_ticks");
		rp->lockless_locked_mops[tc] = over_rounds(rp, f_lockless_locked_mops,
							   tc, -1, "lockless_over_locked_mops");
		rp->kernel_lpc_pread[tc] = over_rounds(rp, f_kernel_lpc_pread, tc, -1,
						       "kernel_over_lpc_pread_ticks");
		rp->kernel_lpc_pread_hot[tc] = over_rounds(rp, f_kernel_lpc_pread_hot, tc,
							   -1, "kernel_hot_over_lpc_pread_hot_ticks");
		rp->kernel_lockless[tc] = over_rounds(rp, f_kernel_lockless, tc, -1,
						      "kernel_over_lockless_ticks");
		rp->find_hot_optimistic[tc] = over_rounds(rp, f_find_hot_optimistic, tc, -1,
							  "lockless_hot_over_optimistic_ticks");
		rp->find_shared_optimistic[tc] =
			over_rounds(rp, f_find_shared_optimistic, tc, -1,
				    "lockless_shared_over_optimistic_shared_ticks");
		rp->kernel_lpc_pread_shared[tc] =
			over_rounds(rp, f_kernel_lpc_pread_shared, tc, -1,
				    "kernel_shared_over_lpc_pread_shared_ticks");
		if (rp->tc_one >= 0 && (int)tc != rp->tc_one) {
			for (int v = 0; v < LV_NR; v++)
				rp->scaling[tc][v] = over_rounds(rp, f_scaling, tc, v,
								 "scaling");
			rp->scaling_vs_floor[tc] = over_rounds(rp, f_scaling_vs_floor, tc,
							       -1, "lockless_over_floor_scaling");
		}
	}
	if (rp->tc_over >= 0 && rp->tc_base >= 0)
		for (int v = 0; v < LV_NR; v++)
			rp->oversub[v] = over_rounds(rp, f_oversub, (unsigned)rp->tc_over,
						     v, "oversub_mops");
}

static void print_table(const struct report *rp)
{
	const struct lookup_results *res = rp->res;
	const struct tsc *tsc = &rp->env->tsc;
	bool disturbed = false;
	char a[64], b[64];

	printf("lookup results: median [min - max] over %u rounds\n", res->rounds);
	printf("  %s/op: %s per operation per thread (%.3f per ns); with more threads than CPUs it includes waiting for a CPU\n",
	       tsc->unit, tsc->unit, tsc->ticks_per_ns);
	printf("  x floor: %s/op over the floor's in the same round; Mops/s: all threads, wall clock\n",
	       tsc->unit);
	printf("  cpu %%: CPU time the threads got / (wall x min(threads, CPUs)); below 100 %%, other programs ran too\n");
	printf("  cpu %s/op: the same cost counted in the threads' CPU time only\n\n", tsc->unit);
	struct plot *pl = plot_open(&(struct plot_spec){
		.name = "lookup", .title = "lpcbench lookup: ticks per operation relative to the floor (median, range over rounds)",
		.ylabel = "ticks/op over ticks/op of the floor (log scale)", .stitle = "threads",
		.header = "threads,variant,ticks_per_op,ticks_per_op_min,ticks_per_op_max,ns_per_op,x_floor,x_floor_min,x_floor_max,mops,mops_per_thread,cpu_percent,cpu_ticks_per_op",
		.xcol = 2, .scol = 1, .ycol = 7, .locol = 8, .hicol = 9, .logy = true,
		.ref = TARGET_LOCKLESS_OVER_FLOOR, .ref_label = "target a) for lockless" });

	printf("%7s  %-13s %-27s %8s  %-21s %9s %10s %6s %9s\n", "threads", "variant",
	       tsc->unit[0] == 't' ? "ticks/op" : "ns/op (clock)", "ns/op", "x floor",
	       "Mops/s", "per thread", "cpu %", "cpu t/op");
	for (unsigned tc = 0; tc < res->nr_tconf; tc++) {
		for (int v = 0; v < LV_NR; v++) {
			const struct summary *t = &rp->tpo[tc][v];

			if (!(res->variants & (1u << v)))
				continue;
			printf("%7u  %-13s %-27s %8.1f  %-21s %9.2f %10.2f %6.1f %9.1f\n",
			       res->threads[tc], lookup_variant_name[v],
			       fmt_sum(a, sizeof(a), t, 7, 1),
			       t->med / tsc->ticks_per_ns,
			       fmt_sum(b, sizeof(b), &rp->ratio_floor[tc][v], 5, 2),
			       rp->mops[tc][v].med,
			       rp->mops[tc][v].med / res->threads[tc],
			       rp->cpu_share[tc][v].med, rp->cpu_tpo[tc][v].med);
			plot_row(pl, "%u,%s,%s,%.6g,%s,%.6g,%.6g,%.6g,%.6g", res->threads[tc],
				 lookup_variant_name[v], plot_sum(a, sizeof(a), t),
				 t->med / tsc->ticks_per_ns,
				 plot_sum(b, sizeof(b), &rp->ratio_floor[tc][v]),
				 rp->mops[tc][v].med, rp->mops[tc][v].med / res->threads[tc],
				 rp->cpu_share[tc][v].med, rp->cpu_tpo[tc][v].med);
			if (res->threads[tc] <= rp->env->nr_cpus &&
			    rp->cpu_share[tc][v].med < CPU_SHARE_QUIET)
				disturbed = true;
		}
	}
	plot_close(pl);
	printf("\n");
	if (disturbed)
		printf("note: some slices got less than %.0f %% of their CPUs: other programs ran during this run,\n"
		       "      and ticks/op and the ratios include their time; rerun on an idle machine to trust them\n\n",
		       CPU_SHARE_QUIET);
}

static void print_ratios(const struct report *rp)
{
	const struct lookup_results *res = rp->res;
	char a[64], b[64], c[64], d[64], e[64];

	printf("ratios within a round (median [min - max]; ticks/op over ticks/op, Mops/s over Mops/s):\n");
	printf("%7s  %-23s %-23s %-23s %-23s %s\n", "threads", "locked/lockless ticks",
	       "lockless/locked Mops/s", "kernel/lpc_pread ticks",
	       "kernel/lockless ticks", "kernel_hot/lpc_pread_hot");
	static const char *const ratio_name[5] = {
		"locked/lockless_ticks", "lockless/locked_mops", "kernel/lpc_pread_ticks",
		"kernel/lockless_ticks", "kernel_hot/lpc_pread_hot_ticks",
	};
	struct plot *pl = plot_open(&(struct plot_spec){
		.name = "lookup_ratios", .title = "lpcbench lookup: ratios within a round (median, range over rounds)",
		.ylabel = "ratio (log scale)", .stitle = "threads",
		.header = "threads,ratio,median,min,max", .xcol = 2, .scol = 1, .ycol = 3,
		.locol = 4, .hicol = 5, .logy = true, .ref = NAN });

	for (unsigned tc = 0; tc < res->nr_tconf; tc++) {
		const struct summary *rs[5] = {
			&rp->locked_lockless[tc], &rp->lockless_locked_mops[tc],
			&rp->kernel_lpc_pread[tc], &rp->kernel_lockless[tc],
			&rp->kernel_lpc_pread_hot[tc],
		};

		for (int i = 0; i < 5; i++)
			plot_row(pl, "%u,%s,%s", res->threads[tc], ratio_name[i],
				 plot_sum(a, sizeof(a), rs[i]));
		printf("%7u  %-23s %-23s %-23s %-23s %s\n", res->threads[tc],
		       fmt_sum(a, sizeof(a), &rp->locked_lockless[tc], 5, 2),
		       fmt_sum(b, sizeof(b), &rp->lockless_locked_mops[tc], 5, 2),
		       fmt_sum(c, sizeof(c), &rp->kernel_lpc_pread[tc], 5, 2),
		       fmt_sum(d, sizeof(d), &rp->kernel_lockless[tc], 5, 2),
		       fmt_sum(e, sizeof(e), &rp->kernel_lpc_pread_hot[tc], 5, 2));
	}
	plot_close(pl);
	printf("\n");
	printf("%7s  %-27s %-35s %s\n", "threads", "lockless_hot/optimistic",
	       "lockless_shared/optimistic_shared", "kernel_shared/lpc_pread_shared");
	for (unsigned tc = 0; tc < res->nr_tconf; tc++)
		printf("%7u  %-27s %-35s %s\n", res->threads[tc],
		       fmt_sum(a, sizeof(a), &rp->find_hot_optimistic[tc], 5, 2),
		       fmt_sum(c, sizeof(c), &rp->find_shared_optimistic[tc], 5, 2),
		       fmt_sum(b, sizeof(b), &rp->kernel_lpc_pread_shared[tc], 5, 2));
	printf("\n");

	if (rp->tc_one >= 0 && res->nr_tconf > 1) {
		pl = plot_open(&(struct plot_spec){
			.name = "lookup_scaling", .title = "lpcbench lookup: Mops/s at T threads / at 1 thread, same round",
			.ylabel = "scaling", .stitle = "threads",
			.header = "threads,variant,median,min,max", .xcol = 2, .scol = 1,
			.ycol = 3, .locol = 4, .hicol = 5, .ref = NAN });
		printf("scaling: Mops/s at T threads / Mops/s at 1 thread, same round\n");
		printf("%7s", "threads");
		for (int v = 0; v < LV_NR; v++)
			printf("  %-21s", lookup_variant_name[v]);
		printf("  %s\n", "lockless/floor");
		for (unsigned tc = 0; tc < res->nr_tconf; tc++) {
			if ((int)tc == rp->tc_one)
				continue;
			printf("%7u", res->threads[tc]);
			for (int v = 0; v < LV_NR; v++) {
				printf("  %-21s", fmt_sum(a, sizeof(a), &rp->scaling[tc][v], 5, 2));
				if (res->variants & (1u << v))
					plot_row(pl, "%u,%s,%s", res->threads[tc],
						 lookup_variant_name[v],
						 plot_sum(b, sizeof(b), &rp->scaling[tc][v]));
			}
			printf("  %s\n", fmt_sum(a, sizeof(a), &rp->scaling_vs_floor[tc], 5, 2));
		}
		plot_close(pl);
		printf("\n");
	}
	if (rp->tc_over >= 0 && rp->tc_base >= 0) {
		printf("oversubscribed: Mops/s at %u threads / Mops/s at %u threads (%u CPUs), same round\n",
		       res->threads[rp->tc_over], res->threads[rp->tc_base],
		       rp->env->nr_cpus);
		pl = plot_open(&(struct plot_spec){
			.name = "lookup_oversub", .title = "lpcbench lookup: Mops/s oversubscribed / one thread per CPU, same round",
			.ylabel = "ratio", .header = "variant,median,min,max", .xcol = 1,
			.ycol = 2, .locol = 3, .hicol = 4, .ref = 1.0, .ref_label = "no loss" });
		for (int v = 0; v < LV_NR; v++)
			if (res->variants & (1u << v)) {
				printf("  %-13s %s\n", lookup_variant_name[v],
				       fmt_sum(a, sizeof(a), &rp->oversub[v], 5, 2));
				plot_row(pl, "%s,%s", lookup_variant_name[v],
					 plot_sum(b, sizeof(b), &rp->oversub[v]));
			}
		plot_close(pl);
		printf("\n");
	}
}

struct check {
	const char *id;   /* "a)" .. ; "" for a figure reported alongside */
	char label[96];
	double target;    /* NaN: reported, not judged */
	bool at_least;    /* else at most */
	const struct summary *s; /* NULL: not measured, see skip */
	const char *skip;
	char note[96];    /* printed under the label; "" for none */
};

/* The verdict of c: "" for a figure without a target, "SKIP (...)" when not
 * measured, else PASS or FAIL. */
static void print_check_result(const struct check *c)
{
	char a[64];
	bool pass;

	if (!c->s || !c->s->n) {
		printf("SKIP (%s)\n", c->skip && !c->s ? c->skip :
		       "a variant it needs was not run");
		return;
	}
	printf("%-21s", fmt_sum(a, sizeof(a), c->s, 5, 2));
	if (isnan(c->target)) {
		printf("\n");
		return;
	}
	pass = c->at_least ? c->s->med >= c->target : c->s->med <= c->target;
	if (pass)
		printf(" PASS\n");
	else
		printf(" FAIL (%.0f%% %s the target)\n",
		       (c->at_least ? 1 - c->s->med / c->target :
				      c->s->med / c->target - 1) * 100,
		       c->at_least ? "below" : "above");
}

static void print_check(const struct check *c)
{
	char tgt[16];

	if (isnan(c->target))
		snprintf(tgt, sizeof(tgt), "%s", "");
	else
		snprintf(tgt, sizeof(tgt), "%s %.2f", c->at_least ? ">=" : "<=", c->target);
	printf("  %-3s %-52s %-8s ", c->id, c->label, tgt);
	print_check_result(c);
	if (c->note[0])
		printf("        %s\n", c->note);
}

/* The checks as a table: key (row number and check id), label, target, the
 * median and range, the verdict. */
static void plot_checks(const struct check *c, unsigned n)
{
	struct plot *pl = plot_open(&(struct plot_spec){
		.name = "lookup_checks", .title = "lpcbench lookup: the checks (median, range over rounds)",
		.ylabel = "value (log scale)", .header = "check,label,target,median,min,max,verdict",
		.xcol = 1, .ycol = 4, .locol = 5, .hicol = 6, .logy = true, .ref = NAN });
	char a[96], label[96];

	for (unsigned i = 0; i < n; i++) {
		const struct summary none = { 0 };
		const struct summary *s = c[i].s ? c[i].s : &none;
		const char *verdict = "";
		size_t j;

		for (j = 0; c[i].label[j] && j + 1 < sizeof(label); j++)
			label[j] = c[i].label[j] == ',' ? ';' : c[i].label[j];
		label[j] = '\0';
		if (!s->n)
			verdict = "skip";
		else if (!isnan(c[i].target))
			verdict = (c[i].at_least ? s->med >= c[i].target :
				   s->med <= c[i].target) ? "pass" : "fail";
		plot_row(pl, "%u%.1s,%s,%s%.3g,%s,%s", i + 1, c[i].id, label,
			 isnan(c[i].target) ? "" : c[i].at_least ? ">=" : "<=",
			 isnan(c[i].target) ? 0.0 : c[i].target, plot_sum(a, sizeof(a), s),
			 verdict);
	}
	plot_close(pl);
}

static void lookup_checks(const struct report *rp)
{
	const struct lookup_results *res = rp->res;
	int one = rp->tc_one, two = rp->tc_two, over = rp->tc_over, base = rp->tc_base;
	static const char no1[] = "--threads lacks 1";
	static const char no2[] = "--threads lacks 1 or 2";
	static const char noover[] = "--threads has no count above the CPUs";
	struct check c[20];
	unsigned n = 0;

	c[n] = (struct check){ "a)", "lockless find+put / floor, ticks, 1 thread",
			       TARGET_LOCKLESS_OVER_FLOOR, false,
			       one >= 0 ? &rp->ratio_floor[one][LV_LOCKLESS] : NULL, no1, "" };
	n++;
	c[n] = (struct check){ "b)", "locked / lockless find+put, ticks, 1 thread",
			       TARGET_LOCKED_OVER_LOCKLESS_1T, true,
			       one >= 0 ? &rp->locked_lockless[one] : NULL, no1, "" };
	n++;
	c[n] = (struct check){ "b)", "locked / lockless find+put, ticks, 2 threads",
			       TARGET_LOCKED_OVER_LOCKLESS_2T, true,
			       two >= 0 ? &rp->locked_lockless[two] : NULL, no2, "" };
	n++;
	c[n] = (struct check){ "", "lockless / locked Mops/s, 2 threads", NAN, true,
			       two >= 0 ? &rp->lockless_locked_mops[two] : NULL, no2, "" };
	n++;
	c[n] = (struct check){ "c)", "lockless scaling / floor scaling, 1 -> 2 threads",
			       TARGET_SCALING_VS_FLOOR, true,
			       one >= 0 && two >= 0 ? &rp->scaling_vs_floor[two] : NULL, no2, "" };
	n++;
	c[n] = (struct check){ "d)", "", TARGET_OVERSUB, true,
			       over >= 0 && base >= 0 ? &rp->oversub[LV_LOCKLESS] : NULL,
			       noover, "" };
	c[n + 1] = (struct check){ "", "", NAN, true,
				   over >= 0 && base >= 0 ? &rp->oversub[LV_LOCKED] : NULL,
				   noover, "" };
	if (over >= 0 && base >= 0) {
		snprintf(c[n].label, sizeof(c[n].label),
			 "lockless Mops/s, %u threads / %u threads (%u CPUs)",
			 res->threads[over], res->threads[base], rp->env->nr_cpus);
		snprintf(c[n + 1].label, sizeof(c[n + 1].label),
			 "locked Mops/s, %u threads / %u threads",
			 res->threads[over], res->threads[base]);
	} else {
		snprintf(c[n].label, sizeof(c[n].label), "lockless Mops/s, oversubscribed / 1 per CPU");
		snprintf(c[n + 1].label, sizeof(c[n + 1].label), "locked Mops/s, oversubscribed / 1 per CPU");
	}
	n += 2;
	c[n] = (struct check){ "e)", "kernel_hot / lpc_pread_hot, ticks, 1 thread",
			       TARGET_KERNEL_OVER_LPC_PREAD_HOT, true,
			       one >= 0 ? &rp->kernel_lpc_pread_hot[one] : NULL, no1,
			       "hot page (same page again and again)" };
	n++;
	c[n] = (struct check){ "", "kernel / lpc_pread, ticks, 1 thread", NAN, true,
			       one >= 0 ? &rp->kernel_lpc_pread[one] : NULL, no1, "" };
	snprintf(c[n].note, sizeof(c[n].note),
		 "random page of the %u MiB file (copy from DRAM/L3 dominates both)",
		 rp->env->opts->file_mb);
	n++;
	c[n] = (struct check){ "", "kernel pread / lockless find+put, ticks, 1 thread",
			       NAN, true, one >= 0 ? &rp->kernel_lockless[one] : NULL, no1, "" };
	n++;
	c[n] = (struct check){ "f)", "lockless_hot / optimistic (lpc_page_read), ticks, 1 thr",
			       TARGET_FIND_HOT_OVER_OPTIMISTIC, true,
			       one >= 0 ? &rp->find_hot_optimistic[one] : NULL, no1,
			       "find+put against the optimistic page API, the thread's hot page" };
	n++;
	c[n] = (struct check){ "f)", "lockless_shared / optimistic_shared, ticks, 2 threads",
			       TARGET_FIND_HOT_OVER_OPTIMISTIC, true,
			       two >= 0 ? &rp->find_shared_optimistic[two] : NULL, no2,
			       "the same on one page every thread reads" };
	n++;
	c[n] = (struct check){ "g)", "lpc_pread_shared scaling, 1 -> 2 threads",
			       TARGET_PREAD_SHARED_SCALING, true,
			       one >= 0 && two >= 0 ? &rp->scaling[two][LV_LPC_PREAD_SHARED] : NULL,
			       no2, "every thread reads one page: no reference, no shared write" };
	n++;
	c[n] = (struct check){ "", "lockless_shared (find+put) scaling, 1 -> 2 threads", NAN,
			       true,
			       one >= 0 && two >= 0 ? &rp->scaling[two][LV_LOCKLESS_SHARED] : NULL,
			       no2, "the referenced path on that page: its ref line bounces" };
	n++;
	c[n] = (struct check){ "h)", "kernel_shared / lpc_pread_shared, ticks, 2 threads",
			       TARGET_KERNEL_OVER_PREAD_SHARED, true,
			       two >= 0 ? &rp->kernel_lpc_pread_shared[two] : NULL, no2, "" };
	n++;
	c[n] = (struct check){ "", "kernel_shared / lpc_pread_shared, ticks, 1 thread", NAN, true,
			       one >= 0 ? &rp->kernel_lpc_pread_shared[one] : NULL, no1, "" };
	n++;

	printf("checks (informational: PASS when the median meets the target; median [min - max]):\n");
	for (unsigned i = 0; i < n; i++)
		print_check(&c[i]);
	printf("\n");
	plot_checks(c, n);
}

static void print_stats(const struct lookup_results *res)
{
	static const struct {
		const char *name;
		size_t off;
	} f[] = {
#define STAT(x) { #x, offsetof(struct lpc_stats, x) }
		STAT(lookups), STAT(hits), STAT(misses), STAT(retries),
		STAT(reads), STAT(read_bytes), STAT(read_errors),
		STAT(direct_fallbacks), STAT(read_around), STAT(alloc_failures),
		STAT(invalidated), STAT(frames), STAT(frames_free),
		STAT(optimistic_hits), STAT(optimistic_fallbacks),
#undef STAT
	};

	struct plot *pl = plot_open(&(struct plot_spec){
		.name = "lookup_stats", .title = "lpcbench lookup: lpc_stats of the two caches",
		.ylabel = "count (log scale)", .stitle = "cache", .header = "counter,cache,value",
		.xcol = 1, .scol = 2, .ycol = 3, .logy = true, .ref = NAN });

	printf("lpc_stats (since each cache was created; the fill and warm-up included):\n");
	printf("  %-18s %16s %16s\n", "", "lockless cache", "locked cache");
	for (size_t i = 0; i < ARRAY_SIZE(f); i++) {
		const uint64_t *a = (const void *)((const char *)&res->stats[LPC_LOOKUP_LOCKLESS] + f[i].off);
		const uint64_t *b = (const void *)((const char *)&res->stats[LPC_LOOKUP_LOCKED] + f[i].off);

		printf("  %-18s %16llu %16llu\n", f[i].name, (unsigned long long)*a,
		       (unsigned long long)*b);
		plot_row(pl, "%s,lockless,%llu", f[i].name, (unsigned long long)*a);
		plot_row(pl, "%s,locked,%llu", f[i].name, (unsigned long long)*b);
	}
	plot_close(pl);
	printf("\n");
}

void lookup_report(const struct bench_env *env, const struct lookup_results *res)
{
	struct report *rp = xcalloc(1, sizeof(*rp));

	rp->env = env;
	rp->res = res;
	rp->x = xcalloc(res->rounds, sizeof(double));
	find_configs(rp);
	compute(rp);
	print_table(rp);
	print_ratios(rp);
	lookup_checks(rp);
	print_stats(res);
	fflush(stdout);
	free(rp->x);
	free(rp);
}
