/* SPDX-License-Identifier: MIT */
/*
 * read_report.c - the read benchmark's tables: the device, throughput and hit
 * ratios per workload, lpc's ratios to the kernel, mmap and O_DIRECT (each
 * taken within a round, then median [min - max] over the rounds), scan-mix,
 * where the time of a miss goes, the read goal, and the state of the caches.
 *
 * Definitions (per round):
 *   kreads/s    the random readers' reads / the slice's wall time, in 1000s
 *   hit (io)    1 - (bytes the readers fetched from storage / 4 KiB) / reads
 *   hit (cnt)   lpc: lpc_stats hits / (hits + misses), all of the slice's
 *               threads; kernel: the readers' reads that preadv2(RWF_NOWAIT)
 *               served / their reads
 *   hot hit     scan-mix: the readers' reads whose page was cached just
 *               before (lpc: lpc_page_find found it; kernel: RWF_NOWAIT
 *               served it) / their reads
 *   around      lpc_stats read_around / reads: reads served past a full cache
 *               (with eviction, only when nothing could be evicted)
 *   evict/rd    lpc_stats evictions / all of the slice's reads (the scanner's
 *               too): pages evicted, by a reader or the background reclaimer;
 *               printed as sum / sum over the rounds (eviction is batched)
 *   drecl/rd    lpc_stats direct_reclaims / all reads: allocations that had
 *               to evict for themselves
 *   majflt      the readers' major faults / reads (mmap)
 *   scan cpu    scan-mix: the scanner thread's time on a CPU / the slice's
 *               wall time (/proc/thread-self/schedstat); scan runq, its
 *               time runnable and waiting for a CPU; the rest it slept (on
 *               a page in flight, in the kernel's read)
 *   free MiB    scan-mix, lpc: lpc_stats frames_free at the slice's end
 *               (frames no page holds: what the readers' hot set lacks)
 *   lpc/kernel  kreads/s of lpc / kreads/s of kernel at the same thread count
 * lpc_clock (--policy both) is lpc with plain CLOCK in a second cache: its
 * rows read like lpc's.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/plot.h"
#include "harness/util.h"
#include "read.h"

#define GOAL_LPC_OVER_KERNEL 1.5 /* the read goal: lpc >= 1.5x the kernel's reads/s */

const char *const read_workload_name[RW_NR] = {
	[RW_DEVICE] = "device", [RW_UNIFORM] = "uniform", [RW_ZIPF] = "zipf",
	[RW_SCAN] = "scan-mix",
};

const char *const read_variant_name[RV_NR] = {
	[RV_LPC] = "lpc", [RV_KERNEL] = "kernel", [RV_MMAP] = "mmap",
	[RV_DIRECT] = "direct", [RV_PROBE] = "lpc_probe", [RV_LPC_CLOCK] = "lpc_clock",
};

struct rep {
	const struct bench_env *env;
	const struct read_results *res;
	double *x;
};

typedef double (*row_fn)(const struct rep *rp, unsigned round, int row, int row2);

static double kreads(const struct read_sample *s)
{
	return s->ps.wall_ns ? (double)s->reads * 1e6 / (double)s->ps.wall_ns : NAN;
}

static const struct read_sample *smp(const struct rep *rp, unsigned r, int row)
{
	return read_sample(rp->res, r, (unsigned)row);
}

static double f_kreads(const struct rep *rp, unsigned r, int row, int row2)
{
	return kreads(smp(rp, r, row));
}

static double f_hit_io(const struct rep *rp, unsigned r, int row, int row2)
{
	const struct read_sample *s = smp(rp, r, row);

	return s->reads ? 1.0 - (double)s->io_bytes / rp->res->page_size / (double)s->reads :
			  NAN;
}

static double f_hit_lpc(const struct rep *rp, unsigned r, int row, int row2)
{
	const struct read_sample *s = smp(rp, r, row);

	return s->hits + s->misses ? (double)s->hits / (double)(s->hits + s->misses) : NAN;
}

static double f_hit_nowait(const struct rep *rp, unsigned r, int row, int row2)
{
	const struct read_sample *s = smp(rp, r, row);

	return s->reads ? (double)s->nowait_hits / (double)s->reads : NAN;
}

static double f_hit_find(const struct rep *rp, unsigned r, int row, int row2)
{
	const struct read_sample *s = smp(rp, r, row);

	return s->reads ? (double)s->find_hits / (double)s->reads : NAN;
}

static double f_around(const struct rep *rp, unsigned r, int row, int row2)
{
	const struct read_sample *s = smp(rp, r, row);

	return s->reads ? (double)s->read_around / (double)s->reads : NAN;
}

/* Every read through the cache in the slice: the readers' and the scanner's. */
static double f_evict(const struct rep *rp, unsigned r, int row, int row2)
{
	const struct read_sample *s = smp(rp, r, row);
	uint64_t n = s->reads + s->scan_reads;

	return n ? (double)s->evictions / (double)n : NAN;
}

static double f_dreclaim(const struct rep *rp, unsigned r, int row, int row2)
{
	const struct read_sample *s = smp(rp, r, row);
	uint64_t n = s->reads + s->scan_reads;

	return n ? (double)s->direct_reclaims / (double)n : NAN;
}

/* Eviction comes in batches (the reclaimer refills a free pool), so one
 * slice may see none and the next two slices' worth: the table prints the
 * rounds' sum of the counter over their sum of reads (the CSV has each
 * round's ratio). */
static const char *sum_per_read(char *buf, size_t len, const struct rep *rp, int row,
				bool direct)
{
	uint64_t n = 0, c = 0;

	for (unsigned r = 0; r < rp->res->rounds; r++) {
		const struct read_sample *s = smp(rp, r, row);

		n += s->reads + s->scan_reads;
		c += direct ? s->direct_reclaims : s->evictions;
	}
	if (n)
		snprintf(buf, len, "%.3f", (double)c / (double)n);
	else
		snprintf(buf, len, "n/a");
	return buf;
}

static double f_majflt(const struct rep *rp, unsigned r, int row, int row2)
{
	const struct read_sample *s = smp(rp, r, row);

	return s->reads ? (double)s->majflt / (double)s->reads : NAN;
}

static double f_scan_kreads(const struct rep *rp, unsigned r, int row, int row2)
{
	const struct read_sample *s = smp(rp, r, row);

	return s->ps.wall_ns ? (double)s->scan_reads * 1e6 / (double)s->ps.wall_ns : NAN;
}

/* The scanner's share of the slice on a CPU (NAN where schedstat could not
 * be read). */
static double f_scan_cpu(const struct rep *rp, unsigned r, int row, int row2)
{
	const struct read_sample *s = smp(rp, r, row);

	return s->ps.wall_ns && s->scan_run_ns ? (double)s->scan_run_ns / (double)s->ps.wall_ns : NAN;
}

/* ... and runnable, waiting for one. */
static double f_scan_runq(const struct rep *rp, unsigned r, int row, int row2)
{
	const struct read_sample *s = smp(rp, r, row);

	return s->ps.wall_ns && s->scan_run_ns ? (double)s->scan_runq_ns / (double)s->ps.wall_ns : NAN;
}

/* lpc's free frames at the slice's end, in MiB. */
static double f_free_mib(const struct rep *rp, unsigned r, int row, int row2)
{
	const struct read_sample *s = smp(rp, r, row);

	return (double)s->frames_free * (double)rp->res->page_size / 1048576.0;
}

/* Little's law: threads x wall / reads; a queue depth of `threads`. */
static double f_lat_us(const struct rep *rp, unsigned r, int row, int row2)
{
	const struct read_sample *s = smp(rp, r, row);

	return s->reads ? (double)rp->res->rows[row].threads * (double)s->ps.wall_ns /
			  (double)s->reads / 1e3 : NAN;
}

static double f_ratio(const struct rep *rp, unsigned r, int row, int row2)
{
	return f_kreads(rp, r, row, -1) / f_kreads(rp, r, row2, -1);
}

static double probe_us(const struct rep *rp, uint64_t ticks, uint64_t n)
{
	return n ? (double)ticks / (double)n / rp->env->tsc.ticks_per_ns / 1e3 : NAN;
}

static double f_probe_hit(const struct rep *rp, unsigned r, int row, int row2)
{
	const struct read_sample *s = smp(rp, r, row);

	return probe_us(rp, s->hit_ticks, s->hit_n);
}

static double f_probe_miss(const struct rep *rp, unsigned r, int row, int row2)
{
	const struct read_sample *s = smp(rp, r, row);

	return probe_us(rp, s->miss_ticks, s->miss_n);
}

static double f_probe_ra(const struct rep *rp, unsigned r, int row, int row2)
{
	const struct read_sample *s = smp(rp, r, row);

	return probe_us(rp, s->ra_ticks, s->ra_n);
}

static double f_probe_miss_share(const struct rep *rp, unsigned r, int row, int row2)
{
	const struct read_sample *s = smp(rp, r, row);
	uint64_t n = s->hit_n + s->miss_n + s->ra_n;

	return n ? (double)(s->miss_n + s->ra_n) / (double)n : NAN;
}

/* Where a miss's time goes: lpc_stats miss_ns_* deltas / misses, in us. */
static double miss_part_us(const struct read_sample *s, uint64_t ns)
{
	return s->misses ? (double)ns / (double)s->misses / 1e3 : NAN;
}

static double f_miss_alloc(const struct rep *rp, unsigned r, int row, int row2)
{
	return miss_part_us(smp(rp, r, row), smp(rp, r, row)->ns_alloc);
}

static double f_miss_evict(const struct rep *rp, unsigned r, int row, int row2)
{
	return miss_part_us(smp(rp, r, row), smp(rp, r, row)->ns_evict);
}

static double f_miss_insert(const struct rep *rp, unsigned r, int row, int row2)
{
	return miss_part_us(smp(rp, r, row), smp(rp, r, row)->ns_insert);
}

static double f_miss_read(const struct rep *rp, unsigned r, int row, int row2)
{
	return miss_part_us(smp(rp, r, row), smp(rp, r, row)->ns_read);
}

/* The probe's timed miss minus the three measured parts: lookup, waiting
 * for another thread's read, copy, the calls' overhead. */
static double f_miss_rest(const struct rep *rp, unsigned r, int row, int row2)
{
	const struct read_sample *s = smp(rp, r, row);

	return f_probe_miss(rp, r, row, -1) -
	       miss_part_us(s, s->ns_alloc + s->ns_insert + s->ns_read);
}

/* Evaluates fn over the rounds, writes raw values and the summary to the
 * CSV (variant: "workload/variant", or "workload/variant/variant2" for a
 * ratio), and returns the summary; n = 0 when the row did not run. */
static struct summary over(const struct rep *rp, row_fn fn, int row, int row2,
			   const char *metric)
{
	const struct read_results *res = rp->res;
	struct summary none = { NAN, NAN, NAN, 0 };
	char var[64];
	struct csv_key k = { "read", 0, 0, var, metric };
	struct summary s;

	if (row < 0 || res->rows[row].skip || (row2 >= 0 && res->rows[row2].skip))
		return none;
	k.threads = res->rows[row].threads;
	if (row2 >= 0)
		snprintf(var, sizeof(var), "%s/%s/%s", read_workload_name[res->rows[row].w],
			 read_variant_name[res->rows[row].v],
			 read_variant_name[res->rows[row2].v]);
	else
		snprintf(var, sizeof(var), "%s/%s", read_workload_name[res->rows[row].w],
			 read_variant_name[res->rows[row].v]);
	for (unsigned r = 0; r < res->rounds; r++) {
		rp->x[r] = fn(rp, r, row, row2);
		k.round = r + 1;
		if (!isnan(rp->x[r]))
			csv_raw(rp->env->csv, &k, rp->x[r]);
	}
	s = summarize(rp->x, res->rounds);
	if (s.n)
		csv_summary(rp->env->csv, &k, &s);
	return s;
}

static int find_row(const struct read_results *res, enum read_workload w,
		    enum read_variant v, unsigned threads)
{
	for (unsigned i = 0; i < res->nr_rows; i++)
		if (res->rows[i].w == w && res->rows[i].v == v &&
		    res->rows[i].threads == threads)
			return (int)i;
	return -1;
}

static const char *fs(char *buf, size_t len, const struct summary *s, int w, int p)
{
	if (!s->n)
		snprintf(buf, len, "%*s", 3 * w + 6, "n/a");
	else
		snprintf(buf, len, "%*.*f [%*.*f - %*.*f]", w, p, s->med, w, p, s->min, w,
			 p, s->max);
	return buf;
}

/* Unique thread counts of workload w's rows, in order. */
static unsigned tcounts(const struct read_results *res, enum read_workload w,
			unsigned *t)
{
	unsigned n = 0;

	for (unsigned i = 0; i < res->nr_rows; i++) {
		unsigned j;

		if (res->rows[i].w != w || res->rows[i].v == RV_PROBE)
			continue;
		for (j = 0; j < n && t[j] != res->rows[i].threads; j++)
			;
		if (j == n)
			t[n++] = res->rows[i].threads;
	}
	return n;
}

static void print_device(const struct rep *rp)
{
	const struct read_results *res = rp->res;
	struct plot *pl = plot_open(&(struct plot_spec){
		.name = "read_device", .title = "lpcbench read: the device, O_DIRECT random 4 KiB reads",
		.ylabel = "kIOPS", .header = "queue_depth,kiops,kiops_min,kiops_max,us_per_read,us_min,us_max",
		.xcol = 1, .ycol = 2, .locol = 3, .hicol = 4, .ref = NAN });
	char a[64], b[64], c[64], d[64];

	printf("read device: O_DIRECT random 4 KiB reads, no cache (median [min - max] over %u rounds)\n",
	       res->rounds);
	printf("  %-11s %-27s %s\n", "queue depth", "kIOPS", "us per read (depth x wall / reads)");
	for (unsigned i = 0; i < res->nr_rows; i++) {
		struct summary k, l;

		if (res->rows[i].w != RW_DEVICE)
			continue;
		k = over(rp, f_kreads, (int)i, -1, "kreads_per_s");
		l = over(rp, f_lat_us, (int)i, -1, "us_per_read");
		printf("  %-11u %-27s %s\n", res->rows[i].threads, fs(a, sizeof(a), &k, 7, 1),
		       fs(b, sizeof(b), &l, 7, 1));
		plot_row(pl, "qd%u,%s,%s", res->rows[i].threads, plot_sum(c, sizeof(c), &k),
			 plot_sum(d, sizeof(d), &l));
	}
	plot_close(pl);
	printf("\n");
}

static void print_workload(const struct rep *rp, enum read_workload w)
{
	const struct read_results *res = rp->res;
	char name[32], title[128], a[64], b[64], c[64], d[64], e[64], f[32], g[32];
	struct plot *pl;

	snprintf(name, sizeof(name), "read_%s", read_workload_name[w]);
	snprintf(title, sizeof(title), "lpcbench read %s: thousands of random 4 KiB reads per second",
		 read_workload_name[w]);
	pl = plot_open(&(struct plot_spec){
		.name = name, .title = title, .ylabel = "kreads/s (log scale)", .stitle = "threads",
		.header = "threads,variant,kreads_per_s,kreads_min,kreads_max,hit_io,hit_io_min,hit_io_max,hit_lpc,around_per_read,majflt_per_read,evictions_per_read,direct_reclaims_per_read",
		.xcol = 2, .scol = 1, .ycol = 3, .locol = 4, .hicol = 5, .logy = true, .ref = NAN });
	printf("read %s: %u rounds, median [min - max]; hit (io): reads that fetched nothing from storage;\n"
	       "  hit (counted): lpc_stats for lpc, preadv2(RWF_NOWAIT) successes for kernel; around: lpc's read_around per read;\n"
	       "  evict/rd, drecl/rd: lpc's evictions and direct reclaims per read (lpc_stats; sums over the rounds)\n",
	       read_workload_name[w], res->rounds);
	printf("%7s  %-9s %-27s %-21s %-21s %-9s %-9s %-9s %s\n", "threads", "variant", "kreads/s",
	       "hit (io)", "hit (counted)", "around", "evict/rd", "drecl/rd", "majflt");
	for (unsigned i = 0; i < res->nr_rows; i++) {
		const struct read_row *row = &res->rows[i];
		struct summary k, h, hl, ar, mf, ev, dr;
		bool lpc;

		if (row->w != w || row->v == RV_PROBE)
			continue;
		lpc = read_is_lpc(row->v);
		if (row->skip) {
			printf("%7u  %-9s skipped: no memory cgroup (%s)\n", row->threads,
			       read_variant_name[row->v], res->memcg_why);
			continue;
		}
		k = over(rp, f_kreads, (int)i, -1, "kreads_per_s");
		h = over(rp, f_hit_io, (int)i, -1, "hit_ratio_io");
		hl = lpc ? over(rp, f_hit_lpc, (int)i, -1, "hit_ratio_lpc") :
		     row->v == RV_KERNEL ? over(rp, f_hit_nowait, (int)i, -1, "hit_ratio_nowait") :
					   (struct summary){ NAN, NAN, NAN, 0 };
		ar = lpc ? over(rp, f_around, (int)i, -1, "read_around_per_read") :
			   (struct summary){ NAN, NAN, NAN, 0 };
		ev = lpc ? over(rp, f_evict, (int)i, -1, "evictions_per_read") :
			   (struct summary){ NAN, NAN, NAN, 0 };
		dr = lpc ? over(rp, f_dreclaim, (int)i, -1, "direct_reclaims_per_read") :
			   (struct summary){ NAN, NAN, NAN, 0 };
		mf = row->v == RV_MMAP ? over(rp, f_majflt, (int)i, -1, "majflt_per_read") :
					 (struct summary){ NAN, NAN, NAN, 0 };
		snprintf(d, sizeof(d), ar.n ? "%.3f" : "", ar.med);
		snprintf(e, sizeof(e), mf.n ? "%.3f" : "", mf.med);
		if (lpc && ev.n && dr.n) { /* over() wrote each round's ratio to the CSV */
			sum_per_read(f, sizeof(f), rp, (int)i, false);
			sum_per_read(g, sizeof(g), rp, (int)i, true);
		} else {
			f[0] = g[0] = '\0';
		}
		printf("%7u  %-9s %-27s %-21s %-21s %-9s %-9s %-9s %s\n", row->threads,
		       read_variant_name[row->v], fs(a, sizeof(a), &k, 7, 1),
		       fs(b, sizeof(b), &h, 4, 3), fs(c, sizeof(c), &hl, 4, 3), d, f, g, e);
		plot_row(pl, "%u,%s,%s,%s,%s,%s,%s,%s,%s", row->threads, read_variant_name[row->v],
			 plot_sum(a, sizeof(a), &k), plot_sum(b, sizeof(b), &h),
			 hl.n ? (snprintf(c, sizeof(c), "%.4g", hl.med), c) : "", d, e, f, g);
	}
	plot_close(pl);
	printf("\n");
}

static void print_ratios(const struct rep *rp, struct summary lk[2][BENCH_MAX_TCONF],
			 unsigned *tc, unsigned *nt)
{
	const struct read_results *res = rp->res;
	struct plot *pl = plot_open(&(struct plot_spec){
		.name = "read_ratios", .title = "lpcbench read: reads/s of lpc over those of the others, within a round",
		.ylabel = "ratio (log scale)", .stitle = "threads",
		.header = "threads,ratio,median,min,max", .xcol = 2, .scol = 1, .ycol = 3,
		.locol = 4, .hicol = 5, .logy = true, .ref = GOAL_LPC_OVER_KERNEL,
		.ref_label = "the read goal for lpc/kernel" });
	static const enum read_variant den[3] = { RV_KERNEL, RV_MMAP, RV_DIRECT };
	char a[64], key[48];

	printf("read ratios: kreads/s of lpc / of the other, same round, same thread count\n");
	printf("%-9s %7s  %-23s %-23s %s\n", "workload", "threads", "lpc/kernel", "lpc/mmap",
	       "lpc/direct");
	for (enum read_workload w = RW_UNIFORM; w <= RW_SCAN; w++) {
		*nt = tcounts(res, w, tc);
		for (unsigned t = 0; t < *nt; t++) {
			int lpc = find_row(res, w, RV_LPC, tc[t]);

			printf("%-9s %7u", read_workload_name[w], tc[t]);
			for (int d = 0; d < 3; d++) {
				int other = find_row(res, w, den[d], tc[t]);
				struct summary s = { NAN, NAN, NAN, 0 };

				if (other >= 0)
					s = over(rp, f_ratio, lpc, other, "lpc_over");
				if (d == 0 && w != RW_SCAN)
					lk[w - RW_UNIFORM][t] = s;
				printf("  %-23s", other >= 0 ? fs(a, sizeof(a), &s, 5, 2) : "");
				if (other >= 0) {
					snprintf(key, sizeof(key), "%s:lpc/%s", read_workload_name[w],
						 read_variant_name[den[d]]);
					plot_row(pl, "%u,%s,%s", tc[t], key, plot_sum(a, sizeof(a), &s));
				}
			}
			printf("\n");
		}
	}
	plot_close(pl);
	printf("\n");
}

static void print_scan(const struct rep *rp)
{
	const struct read_results *res = rp->res;
	struct plot *pl = plot_open(&(struct plot_spec){
		.name = "read_scan_mix", .title = "lpcbench read scan-mix: hit ratio of the Zipf readers while one thread scans the file",
		.ylabel = "hot-set hit ratio (cached before the read)", .stitle = "Zipf readers",
		.header = "threads,variant,hot_hit,hot_hit_min,hot_hit_max,measure,other_hit,kreads_per_s,scan_kreads_per_s,scan_cpu,scan_runq,free_mib,evictions_per_read,direct_reclaims_per_read",
		.xcol = 2, .scol = 1, .ycol = 3, .locol = 4, .hicol = 5, .ref = NAN });
	char a[64], b[64], d[64], f[32], g[32], m[32];

	printf("read scan-mix: T Zipf readers + 1 sequential reader; the readers' (hot set's) hit ratio:\n"
	       "  the reads whose page was cached just before: lpc by lpc_page_find, kernel by RWF_NOWAIT\n"
	       "  (storage bytes are no measure here: both charge a reader for readahead of the scanner's);\n"
	       "  beside it, lpc_stats' hit ratio of all lpc's threads and the kernel's by bytes;\n"
	       "  the scanner's time on a CPU and runnable waiting for one, shares of the slice (the rest it slept);\n"
	       "  lpc's free frames at the slice's end; lpc's evictions and direct reclaims per read\n"
	       "  (all threads; sums over the rounds)\n");
	if (res->policy == BENCH_POLICY_BOTH)
		printf("  lpc evicts with CLOCK2 (inactive/active), lpc_clock with plain CLOCK, in the same rounds\n");
	printf("%7s  %-9s %-21s %-7s %-9s %-27s %-9s %-8s %-9s %-8s %-9s %s\n", "readers", "variant",
	       "hot hit", "by", "other", "readers kreads/s", "scan kr/s", "scan cpu", "scan runq",
	       "free MiB", "evict/rd", "drecl/rd");
	for (unsigned i = 0; i < res->nr_rows; i++) {
		const struct read_row *row = &res->rows[i];
		struct summary h, k, sk, sc, sq, fr, ev, dr, hl = { NAN, NAN, NAN, 0 };

		if (row->w != RW_SCAN)
			continue;
		if (row->skip) {
			printf("%7u  %-9s skipped: no memory cgroup\n", row->threads,
			       read_variant_name[row->v]);
			continue;
		}
		bool kern = row->v == RV_KERNEL;

		h = over(rp, kern ? f_hit_nowait : f_hit_find, (int)i, -1,
			 kern ? "hot_hit_ratio_nowait" : "hot_hit_ratio_find");
		hl = over(rp, kern ? f_hit_io : f_hit_lpc, (int)i, -1,
			  kern ? "hot_hit_ratio_io" : "hit_ratio_lpc_all_threads");
		k = over(rp, f_kreads, (int)i, -1, "kreads_per_s");
		sk = over(rp, f_scan_kreads, (int)i, -1, "scan_kreads_per_s");
		sc = over(rp, f_scan_cpu, (int)i, -1, "scan_cpu_share");
		sq = over(rp, f_scan_runq, (int)i, -1, "scan_runq_share");
		fr = kern ? (struct summary){ NAN, NAN, NAN, 0 } :
			    over(rp, f_free_mib, (int)i, -1, "free_mib");
		ev = kern ? (struct summary){ NAN, NAN, NAN, 0 } :
			    over(rp, f_evict, (int)i, -1, "evictions_per_read");
		dr = kern ? (struct summary){ NAN, NAN, NAN, 0 } :
			    over(rp, f_dreclaim, (int)i, -1, "direct_reclaims_per_read");
		if (!kern && ev.n && dr.n) {
			sum_per_read(f, sizeof(f), rp, (int)i, false);
			sum_per_read(g, sizeof(g), rp, (int)i, true);
		} else {
			f[0] = g[0] = '\0';
		}
		if (kern)
			m[0] = '\0'; /* the kernel's page cache has no such count here */
		else
			snprintf(m, sizeof(m), "%.1f", fr.med);
		printf("%7u  %-9s %-21s %-7s %-9.3f %-27s %-9.1f %-8.2f %-9.2f %-8s %-9s %s\n",
		       row->threads, read_variant_name[row->v], fs(a, sizeof(a), &h, 4, 3),
		       kern ? "nowait" : "find", hl.med, fs(b, sizeof(b), &k, 7, 1), sk.med, sc.med,
		       sq.med, m, f, g);
		plot_row(pl, "%u,%s,%s,%s,%.4g,%.6g,%.6g,%.3g,%.3g,%s,%s,%s", row->threads,
			 read_variant_name[row->v], plot_sum(d, sizeof(d), &h),
			 kern ? "nowait" : "find", hl.med, k.med, sk.med, sc.med, sq.med, m, f, g);
	}
	plot_close(pl);
	{
		const struct read_phase_end *e = &res->end[RW_SCAN];

		if (e->ran && e->ra_pages)
			printf("  lpc's readahead over the phase: %" PRIu64 " pages read ahead, %.3f of them used,"
			       " %" PRIu64 " evicted unused; %" PRIu64 " pages dropped behind the scanner,"
			       " %" PRIu64 " evicted\n",
			       e->ra_pages, (double)e->ra_used / (double)e->ra_pages, e->ra_wasted,
			       e->ra_dropped, e->evictions);
		if (e->ran && e->reads)
			printf("  ... %" PRIu64 " windows (%" PRIu64 " started by a marker); %" PRIu64
			       " read I/Os of all threads, %.1f pages each; %" PRIu64
			       " allocations found no frame\n",
			       e->ra_windows, e->ra_async, e->reads,
			       (double)e->read_pages / (double)e->reads, e->alloc_failures);
	}
	printf("\n");
}

/* Every lpc row: lpc_stats miss_ns_* deltas per miss (all of the slice's
 * threads); the rest only where the probe timed the whole miss. */
static void print_miss_parts(const struct rep *rp)
{
	const struct read_results *res = rp->res;
	char a[64], b[64], c[64], d[64], e[64];

	printf("read miss parts: lpc_stats miss_ns_* / misses over each slice, median [min - max] of the rounds, us per miss\n");
	printf("  %-9s %-9s %7s  %-21s %-21s %-21s %-21s %s\n", "workload", "variant", "threads",
	       "alloc us", "(of which evict us)", "insert us", "read us",
	       "rest us (lookup, wait, copy: probe's miss minus those)");
	for (unsigned i = 0; i < res->nr_rows; i++) {
		const struct read_row *row = &res->rows[i];
		struct summary al, ev, in, rd, rest = { NAN, NAN, NAN, 0 };

		if (!read_is_lpc(row->v) || row->skip)
			continue;
		al = over(rp, f_miss_alloc, (int)i, -1, "miss_alloc_us");
		ev = over(rp, f_miss_evict, (int)i, -1, "miss_evict_us");
		in = over(rp, f_miss_insert, (int)i, -1, "miss_insert_us");
		rd = over(rp, f_miss_read, (int)i, -1, "miss_read_us");
		if (row->v == RV_PROBE)
			rest = over(rp, f_miss_rest, (int)i, -1, "miss_rest_us");
		printf("  %-9s %-9s %7u  %-21s %-21s %-21s %-21s %s\n", read_workload_name[row->w],
		       read_variant_name[row->v], row->threads, fs(a, sizeof(a), &al, 5, 1),
		       fs(b, sizeof(b), &ev, 5, 1), fs(c, sizeof(c), &in, 5, 2),
		       fs(d, sizeof(d), &rd, 5, 1), fs(e, sizeof(e), &rest, 5, 1));
	}
	printf("  alloc includes the frame allocator's own eviction (direct reclaim, the evict column);\n"
	       "  the background reclaimer's eviction is not on the miss path; per miss = over all misses,\n"
	       "  those that waited on another thread's read included (they did no step).\n\n");
}

static void print_miss(const struct rep *rp)
{
	const struct read_results *res = rp->res;
	struct plot *pl = plot_open(&(struct plot_spec){
		.name = "read_miss", .title = "lpcbench read: where the time of lpc_pread goes (1 thread, each read timed)",
		.ylabel = "us per read (log scale)", .stitle = "workload",
		.header = "workload,part,us,us_min,us_max", .xcol = 2, .scol = 1, .ycol = 3,
		.locol = 4, .hicol = 5, .logy = true, .ref = NAN });
	int qd1 = find_row(res, RW_DEVICE, RV_DIRECT, 1);
	struct summary dev = over(rp, f_lat_us, qd1, -1, "us_per_read");
	char a[64], c[64], d[64];

	printf("read miss: lpc_pread timed alone, one thread, classified by the lpc_stats change it caused\n");
	printf("  %-9s %-21s %-21s %-21s %-8s %s\n", "workload", "hit us", "miss us",
	       "read-around us", "missed", "minus device QD1: lpc's own part (lookup, allocation, insert, copy)");
	for (enum read_workload w = RW_UNIFORM; w <= RW_ZIPF; w++) {
		int row = find_row(res, w, RV_PROBE, 1);
		struct summary h = over(rp, f_probe_hit, row, -1, "probe_hit_us");
		struct summary m = over(rp, f_probe_miss, row, -1, "probe_miss_us");
		struct summary ra = over(rp, f_probe_ra, row, -1, "probe_read_around_us");
		struct summary sh = over(rp, f_probe_miss_share, row, -1, "probe_miss_share");
		char own[160];

		snprintf(own, sizeof(own), "miss %s us, read-around %s us",
			 m.n && dev.n ? (snprintf(a, 24, "%.1f", m.med - dev.med), a) : "n/a",
			 ra.n && dev.n ? (snprintf(d, 24, "%.1f", ra.med - dev.med), d) : "n/a");
		printf("  %-9s %-21s ", read_workload_name[w], fs(c, sizeof(c), &h, 5, 2));
		printf("%-21s ", fs(c, sizeof(c), &m, 5, 1));
		printf("%-21s %-8.3f %s\n", fs(c, sizeof(c), &ra, 5, 1), sh.med, own);
		plot_row(pl, "%s,hit,%s", read_workload_name[w], plot_sum(d, sizeof(d), &h));
		plot_row(pl, "%s,miss,%s", read_workload_name[w], plot_sum(d, sizeof(d), &m));
		plot_row(pl, "%s,read_around,%s", read_workload_name[w], plot_sum(d, sizeof(d), &ra));
		plot_row(pl, "%s,device_qd1,%s", read_workload_name[w], plot_sum(d, sizeof(d), &dev));
	}
	plot_close(pl);
	printf("  device QD1: %s us per O_DIRECT read, from the device rows\n",
	       fs(a, sizeof(a), &dev, 5, 1));
	printf("  a miss includes any eviction it did itself (direct reclaim; drecl/rd in the tables above).\n\n");
	print_miss_parts(rp);
}

static void print_goals(const struct rep *rp, struct summary lk[2][BENCH_MAX_TCONF],
			const unsigned *tc, unsigned nt)
{
	const struct read_results *res = rp->res;
	struct plot *pl = plot_open(&(struct plot_spec){
		.name = "read_goals", .title = "lpcbench read: the read goal, lpc/kernel reads/s at equal memory",
		.ylabel = "lpc/kernel", .stitle = "threads",
		.header = "threads,workload,lpc_over_kernel,min,max,verdict,hit_lpc_io,hit_kernel_io,hit_verdict",
		.xcol = 2, .scol = 1, .ycol = 3, .locol = 4, .hicol = 5,
		.ref = GOAL_LPC_OVER_KERNEL, .ref_label = "goal 1.5" });
	char a[64];

	printf("goals (informational): lpc >= %.1fx the kernel's reads/s, with a hit ratio (io) >= the kernel's\n",
	       GOAL_LPC_OVER_KERNEL);
	for (int wi = 0; wi < 2; wi++) {
		enum read_workload w = (enum read_workload)(RW_UNIFORM + wi);

		for (unsigned t = 0; t < nt; t++) {
			const struct summary *s = &lk[wi][t];
			int l = find_row(res, w, RV_LPC, tc[t]), k = find_row(res, w, RV_KERNEL, tc[t]);
			struct summary hl = over(rp, f_hit_io, l, -1, "hit_ratio_io");
			struct summary hk = over(rp, f_hit_io, k, -1, "hit_ratio_io");
			const char *v1 = !s->n ? "SKIP" : s->med >= GOAL_LPC_OVER_KERNEL ? "PASS" : "FAIL";
			const char *v2 = !hl.n || !hk.n ? "SKIP" : hl.med >= hk.med ? "PASS" : "FAIL";

			printf("  %-8s %2u threads: lpc/kernel %-23s %s; hit lpc %.3f vs kernel %.3f %s\n",
			       read_workload_name[w], tc[t], fs(a, sizeof(a), s, 5, 2), v1, hl.med,
			       hk.med, v2);
			plot_row(pl, "%u,%s,%s,%s,%.4g,%.4g,%s", tc[t], read_workload_name[w],
				 plot_sum(a, sizeof(a), s), v1, hl.med, hk.med, v2);
		}
	}
	plot_close(pl);
	printf("\n");
}

static void print_phases(const struct rep *rp)
{
	const struct read_results *res = rp->res;
	struct plot *pl = plot_open(&(struct plot_spec){
		.name = "read_phases", .title = "lpcbench read: the caches at the end of each phase",
		.ylabel = "MiB", .stitle = "",
		.header = "workload,warm_s,lpc_frames_mib,lpc_free_mib,cgroup_usage_mib,cgroup_file_mib,cgroup_anon_mib",
		.xcol = 1, .ycol = 5, .ref = NAN });

	bool both = res->policy == BENCH_POLICY_BOTH;

	printf("phases: lpc%s after the warm-up (evicted: pages evicted by then); the kernel's cgroup\n"
	       "  (limit %llu MiB) after the rounds\n", both ? " and lpc_clock" : "",
	       (unsigned long long)(res->cache_bytes >> 20));
	printf("  %-9s %8s %16s %14s %10s %14s %14s %14s", "workload", "warm s", "lpc frames MiB",
	       "lpc free MiB", "evicted", "cg usage MiB", "cg file MiB", "cg anon MiB");
	if (both)
		printf(" %14s %10s", "clock free MiB", "clk evicted");
	printf("\n");
	for (enum read_workload w = RW_UNIFORM; w < RW_NR; w++) {
		const struct read_phase_end *e = &res->end[w];
		double mib = (double)res->page_size / (1 << 20);
		double u = res->memcg ? (double)e->cg_usage / (1 << 20) : NAN;
		double f = res->memcg ? (double)e->cg_file / (1 << 20) : NAN;
		double an = res->memcg ? (double)e->cg_anon / (1 << 20) : NAN;

		if (!e->ran)
			continue;
		printf("  %-9s %8.1f %16.1f %14.1f %10llu %14.1f %14.1f %14.1f", read_workload_name[w],
		       e->warm_s, (double)e->lpc_frames * mib, (double)e->lpc_free * mib,
		       (unsigned long long)e->lpc_evictions, u, f, an);
		if (both)
			printf(" %14.1f %10llu", (double)e->clk_free * mib,
			       (unsigned long long)e->clk_evictions);
		printf("\n");
		plot_row(pl, "%s,%.2f,%.1f,%.1f,%.1f,%.1f,%.1f", read_workload_name[w], e->warm_s,
			 (double)e->lpc_frames * mib, (double)e->lpc_free * mib, u, f, an);
	}
	plot_close(pl);
	printf("\n");
}

void read_report(const struct bench_env *env, const struct read_results *res)
{
	struct rep rp = { env, res, xcalloc(res->rounds, sizeof(double)) };
	struct summary lk[2][BENCH_MAX_TCONF];
	unsigned tc[BENCH_MAX_TCONF + 1], nt = 0;

	memset(lk, 0, sizeof(lk));
	print_device(&rp);
	print_workload(&rp, RW_UNIFORM);
	print_workload(&rp, RW_ZIPF);
	print_ratios(&rp, lk, tc, &nt);
	nt = tcounts(res, RW_UNIFORM, tc);
	print_scan(&rp);
	print_miss(&rp);
	print_goals(&rp, lk, tc, nt);
	print_phases(&rp);
	fflush(stdout);
	free(rp.x);
}
