/* SPDX-License-Identifier: MIT */
/*
 * scan_report.c - the scan benchmark's tables: MB/s and CPU time per MiB of
 * every row, lpc's read and readahead counters per pass, lpc/kernel and
 * lpc/direct_1m within each round against the goals, and how cold each pass
 * started.
 *
 * Definitions (per pass, then median [min - max] over the rounds):
 *   MB/s        the file's bytes (10^6 per MB) over the pass's wall time
 *   cpu us/MiB  CPU time of the scanning process over the pass, per MiB read
 *   read I/Os   lpc_stats reads: backend reads the pass issued
 *   pages/IO    lpc_stats read_pages / reads
 *   windows     readahead windows read (ra_windows), of which async: started
 *               by a hit on a window's marker page (ra_async)
 *   ra pages    pages read ahead (ra_pages)
 *   accuracy    ra_used / ra_pages: of the pages read ahead, those a call
 *               then asked for within the pass
 *   wasted      ra_wasted: pages read ahead and evicted before any use
 *   GPs         grace_periods: waits for a grace period the cache's threads
 *               took in the pass (the reclaimer's drains of evicted frames,
 *               the scanners' own landings), and us/GP their mean time
 *               (grace_period_ns / grace_periods): on a VM each one is
 *               membarrier IPIs to the CPUs the scanners run on
 *   device      the file's block device over the pass, every row (deltas of
 *               /sys/dev/block/M:m/stat, Documentation/block/stat.rst; the
 *               whole device's reads, so anything else reading it counts
 *               too): read requests, their mean KiB (sectors x 512 /
 *               requests) and in flight (read ticks over wall time: the mean
 *               number of reads at the device, times the mean request: MiB
 *               the device had to work on).  Read ticks are the sum of the
 *               reads' times in whole milliseconds, and reads still in
 *               flight at the pass's end are not counted: within 2 % of
 *               a block-layer trace in all rows but one (10 %) at the
 *               default size in the review (tests/attack_devstat), up to
 *               20 % at --cache-mb 16
 *   lpc/kernel  MB/s of an lpc row over the kernel's at the same scanner
 *               count and call size, in the same round
 *   lpc/direct  ... over direct_1m's (one thread, 1 MiB O_DIRECT calls) in
 *               the same round
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness/plot.h"
#include "harness/util.h"
#include "scan.h"

#define GOAL_OVER_KERNEL 1.0 /* lpc >= the kernel's MB/s at every call size */
#define GOAL_OVER_DIRECT 0.9 /* lpc >= 0.9x O_DIRECT 1 MiB at 128 KiB calls */
#define GOAL_DIRECT_CALL 131072u

const char *const scan_variant_name[SV_NR] = {
	[SV_URING] = "lpc_uring", [SV_SYNC] = "lpc_sync", [SV_KERNEL] = "kernel",
	[SV_DIRECT] = "direct_1m",
};

const uint32_t scan_call_bytes[SCAN_NR_CALLS] = { 4096, 16384, 131072 };

int scan_find_row(const struct scan_results *r, enum scan_variant v, unsigned scanners,
		  uint32_t call)
{
	for (unsigned i = 0; i < r->nr_rows; i++)
		if (r->rows[i].v == v && r->rows[i].scanners == scanners &&
		    r->rows[i].call == call && !r->rows[i].skip)
			return (int)i;
	return -1;
}

typedef double (*scan_fn)(const struct scan_sample *s);

static double f_mbps(const struct scan_sample *s)
{
	return s->wall_ns ? (double)s->bytes * 1e3 / (double)s->wall_ns : NAN;
}

static double f_cpu_us_mib(const struct scan_sample *s)
{
	return s->bytes ? (double)s->cpu_ns / 1e3 / ((double)s->bytes / (1 << 20)) : NAN;
}

static double f_reads(const struct scan_sample *s)
{
	return (double)s->reads;
}

static double f_pages_io(const struct scan_sample *s)
{
	return s->reads ? (double)s->read_pages / (double)s->reads : NAN;
}

static double f_windows(const struct scan_sample *s)
{
	return (double)s->ra_windows;
}

static double f_async(const struct scan_sample *s)
{
	return (double)s->ra_async;
}

static double f_ra_pages(const struct scan_sample *s)
{
	return (double)s->ra_pages;
}

static double f_accuracy(const struct scan_sample *s)
{
	return s->ra_pages ? (double)s->ra_used / (double)s->ra_pages : NAN;
}

static double f_wasted(const struct scan_sample *s)
{
	return (double)s->ra_wasted;
}

static double f_gp(const struct scan_sample *s)
{
	return (double)s->gp;
}

static double f_us_gp(const struct scan_sample *s)
{
	return s->gp ? (double)s->gp_ns / 1e3 / (double)s->gp : NAN;
}

static double f_dev_reads(const struct scan_sample *s)
{
	return (double)s->dev_reads;
}

static double f_dev_kib(const struct scan_sample *s)
{
	return s->dev_reads ? (double)s->dev_sectors / 2.0 / (double)s->dev_reads : NAN;
}

static double f_dev_inflight_mib(const struct scan_sample *s)
{
	return s->wall_ns ? (double)s->dev_read_ms * 1e6 / (double)s->wall_ns * f_dev_kib(s) / 1024
			  : NAN;
}

static struct summary sum_of(const struct scan_results *r, unsigned row, scan_fn f)
{
	double *x = xcalloc(r->rounds, sizeof(double));
	struct summary s;

	for (unsigned i = 0; i < r->rounds; i++)
		x[i] = f(scan_sample(r, i, row));
	s = summarize(x, r->rounds);
	free(x);
	return s;
}

/* MB/s of row a over row b within each round. */
static struct summary ratio_of(const struct scan_results *r, int a, int b)
{
	double *x = xcalloc(r->rounds, sizeof(double));
	struct summary s;

	for (unsigned i = 0; i < r->rounds; i++) {
		double d = f_mbps(scan_sample(r, i, (unsigned)b));

		x[i] = d > 0 ? f_mbps(scan_sample(r, i, (unsigned)a)) / d : NAN;
	}
	s = summarize(x, r->rounds);
	free(x);
	return s;
}

static void csv_sum(const struct bench_env *env, const struct scan_row *row, const char *variant,
		    const char *metric, const struct summary *s)
{
	char var[48];

	snprintf(var, sizeof(var), "%s/%uk", variant, row->call >> 10);
	csv_summary(env->csv,
		    &(struct csv_key){ .bench = "scan", .threads = row->scanners, .variant = var,
				       .metric = metric },
		    s);
}

static void print_speed(const struct bench_env *env, const struct scan_results *r)
{
	char hdr[160], a[96], b[96];
	struct plot *pl;

	snprintf(hdr, sizeof(hdr),
		 "case,scanners,call_kib,variant,mb_s,min,max,cpu_us_per_mib,cpu_min,cpu_max");
	pl = plot_open(&(struct plot_spec){
		.name = "scan_mbps", .title = "lpcbench scan: a cold sequential pass, MB/s",
		.ylabel = "MB/s", .stitle = "variant", .header = hdr, .xcol = 1, .scol = 4,
		.ycol = 5, .locol = 6, .hicol = 7, .logy = false, .ref = NAN });
	printf("scan: MB/s and CPU time per MiB (median [min - max] over %u rounds)\n", r->rounds);
	printf("  %8s %9s  %-10s %9s %21s %11s %19s\n", "scanners", "call", "variant", "MB/s",
	       "range", "cpu us/MiB", "range");
	for (unsigned i = 0; i < r->nr_rows; i++) {
		const struct scan_row *row = &r->rows[i];
		struct summary m, c;

		if (row->skip)
			continue;
		m = sum_of(r, i, f_mbps);
		c = sum_of(r, i, f_cpu_us_mib);
		printf("  %8u %5u KiB  %-10s %9.1f   [%7.1f - %7.1f] %11.1f   [%6.1f - %6.1f]\n",
		       row->scanners, row->call >> 10, scan_variant_name[row->v], m.med, m.min,
		       m.max, c.med, c.min, c.max);
		csv_sum(env, row, scan_variant_name[row->v], "mb_s", &m);
		csv_sum(env, row, scan_variant_name[row->v], "cpu_us_per_mib", &c);
		plot_row(pl, "%ux%uk,%u,%u,%s,%s,%s", row->scanners, row->call >> 10,
			 row->scanners, row->call >> 10, scan_variant_name[row->v],
			 plot_sum(a, sizeof(a), &m), plot_sum(b, sizeof(b), &c));
	}
	plot_close(pl);
	printf("\n");
}

static void print_counters(const struct bench_env *env, const struct scan_results *r)
{
	static const struct {
		const char *metric;
		scan_fn f;
	} col[] = {
		{ "read_ios", f_reads }, { "pages_per_io", f_pages_io },
		{ "ra_windows", f_windows }, { "ra_async", f_async },
		{ "ra_pages", f_ra_pages }, { "accuracy", f_accuracy },
		{ "wasted", f_wasted }, { "grace_periods", f_gp },
		{ "us_per_grace_period", f_us_gp },
	};
	struct plot *pl = plot_open(&(struct plot_spec){
		.name = "scan_lpc", .title = "lpcbench scan: lpc's pages per read I/O in a cold pass",
		.ylabel = "pages per read I/O", .stitle = "variant",
		.header = "case,scanners,call_kib,variant,read_ios,pages_per_io,ra_windows,ra_async,ra_pages,accuracy,wasted,grace_periods,us_per_grace_period",
		.xcol = 1, .scol = 4, .ycol = 6, .logy = false, .ref = NAN });

	printf("scan: lpc's reads and readahead per pass (lpc_stats deltas; median over %u rounds)\n",
	       r->rounds);
	printf("  %8s %9s  %-10s %10s %8s %8s %8s %9s %8s %8s %6s %7s\n", "scanners", "call",
	       "variant", "read I/Os", "pages/IO", "windows", "async", "ra pages", "accuracy",
	       "wasted", "GPs", "us/GP");
	for (unsigned i = 0; i < r->nr_rows; i++) {
		const struct scan_row *row = &r->rows[i];
		struct summary s[ARRAY_SIZE(col)];

		if (!scan_is_lpc(row->v))
			continue;
		for (size_t c = 0; c < ARRAY_SIZE(col); c++) {
			s[c] = sum_of(r, i, col[c].f);
			csv_sum(env, row, scan_variant_name[row->v], col[c].metric, &s[c]);
		}
		printf("  %8u %5u KiB  %-10s %10.0f %8.2f %8.0f %8.0f %9.0f %8.3f %8.0f %6.0f %7.1f\n",
		       row->scanners, row->call >> 10, scan_variant_name[row->v], s[0].med,
		       s[1].med, s[2].med, s[3].med, s[4].med, s[5].med, s[6].med, s[7].med,
		       s[8].med);
		plot_row(pl, "%ux%uk,%u,%u,%s,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g",
			 row->scanners, row->call >> 10, row->scanners, row->call >> 10,
			 scan_variant_name[row->v], s[0].med, s[1].med, s[2].med, s[3].med,
			 s[4].med, s[5].med, s[6].med, s[7].med, s[8].med);
	}
	plot_close(pl);
	printf("  (accuracy: pages read ahead that a call then asked for in the pass; pages read\n"
	       "   ahead and still cached unused at the pass's end are neither used nor wasted)\n\n");
}

/* The device's side of each pass (every row): did lpc keep as much at the
 * device, in requests as large, as the kernel did? */
static void print_device(const struct bench_env *env, const struct scan_results *r)
{
	static const struct {
		const char *metric;
		scan_fn f;
	} col[] = {
		{ "dev_read_requests", f_dev_reads }, { "dev_request_kib", f_dev_kib },
		{ "dev_inflight_mib", f_dev_inflight_mib },
	};
	struct plot *pl;
	bool any = false;

	for (unsigned i = 0; i < r->nr_rows && !any; i++)
		any = !r->rows[i].skip && sum_of(r, i, f_dev_reads).med > 0;
	if (!any) {
		printf("scan: the device per pass: no block device's counters for the file\n\n");
		return;
	}
	pl = plot_open(&(struct plot_spec){
		.name = "scan_device", .title = "lpcbench scan: the device's mean read request in a cold pass",
		.ylabel = "KiB per request", .stitle = "variant",
		.header = "case,scanners,call_kib,variant,requests,request_kib,inflight_mib",
		.xcol = 1, .scol = 4, .ycol = 6, .logy = false, .ref = NAN });
	printf("scan: the device per pass (its stat file's deltas; median over %u rounds)\n",
	       r->rounds);
	printf("  %8s %9s  %-10s %9s %9s %10s\n", "scanners", "call", "variant", "requests",
	       "mean KiB", "in flight");
	for (unsigned i = 0; i < r->nr_rows; i++) {
		const struct scan_row *row = &r->rows[i];
		struct summary s[ARRAY_SIZE(col)];

		if (row->skip)
			continue;
		for (size_t c = 0; c < ARRAY_SIZE(col); c++) {
			s[c] = sum_of(r, i, col[c].f);
			csv_sum(env, row, scan_variant_name[row->v], col[c].metric, &s[c]);
		}
		printf("  %8u %5u KiB  %-10s %9.0f %9.0f %6.1f MiB\n", row->scanners,
		       row->call >> 10, scan_variant_name[row->v], s[0].med, s[1].med, s[2].med);
		plot_row(pl, "%ux%uk,%u,%u,%s,%.6g,%.6g,%.6g", row->scanners, row->call >> 10,
			 row->scanners, row->call >> 10, scan_variant_name[row->v], s[0].med,
			 s[1].med, s[2].med);
	}
	plot_close(pl);
	printf("  (in flight: mean reads at the device x mean request; the whole device's reads)\n\n");
}

/* One ratio line: printed, in the CSV, in the plot, and judged against goal. */
static void ratio_line(const struct bench_env *env, const struct scan_results *r,
		       struct plot *pl, int a, int b, double goal, unsigned *met, unsigned *all)
{
	const struct scan_row *ra = &r->rows[a], *rb = &r->rows[b];
	struct summary s = ratio_of(r, a, b);
	bool ok = s.n && s.med >= goal;
	char label[96], metric[48], c[96];

	snprintf(label, sizeof(label), "%u scanner%s, %3u KiB: %s/%s", ra->scanners,
		 ra->scanners > 1 ? "s" : "", ra->call >> 10, scan_variant_name[ra->v],
		 scan_variant_name[rb->v]);
	printf("  %-44s %7.3f [%.3f - %.3f]  goal >= %.1f: %s\n", label, s.med, s.min, s.max, goal,
	       ok ? "met" : "NOT met");
	snprintf(metric, sizeof(metric), "ratio_%s", scan_variant_name[rb->v]);
	csv_sum(env, ra, scan_variant_name[ra->v], metric, &s);
	plot_row(pl, "%ux%uk,%s/%s,%s,%.1f,%s", ra->scanners, ra->call >> 10,
		 scan_variant_name[ra->v], scan_variant_name[rb->v], plot_sum(c, sizeof(c), &s),
		 goal, ok ? "met" : "not_met");
	*met += ok;
	(*all)++;
}

static void print_goals(const struct bench_env *env, const struct scan_results *r)
{
	struct plot *pl = plot_open(&(struct plot_spec){
		.name = "scan_ratios",
		.title = "lpcbench scan: lpc over the kernel and over O_DIRECT 1 MiB, within rounds",
		.ylabel = "ratio of MB/s", .stitle = "ratio",
		.header = "case,ratio,med,min,max,goal,met", .xcol = 1, .scol = 2, .ycol = 3,
		.locol = 4, .hicol = 5, .logy = false, .ref = GOAL_OVER_KERNEL,
		.ref_label = "goal 1.0 (kernel)" });
	int direct = scan_find_row(r, SV_DIRECT, 1, 1u << 20);
	unsigned met = 0, all = 0;

	printf("scan: goals (within rounds, median [min - max]; informational):\n"
	       "  lpc >= %.1fx the kernel's MB/s at every call size; >= %.1fx O_DIRECT 1 MiB at %u KiB calls\n",
	       GOAL_OVER_KERNEL, GOAL_OVER_DIRECT, GOAL_DIRECT_CALL >> 10);
	for (unsigned t = 0; t < r->nr_scanners; t++) {
		for (unsigned c = 0; c < r->nr_calls; c++) {
			int k = scan_find_row(r, SV_KERNEL, r->scanners[t], r->calls[c]);

			for (enum scan_variant v = SV_URING; v <= SV_SYNC; v++) {
				int l = scan_find_row(r, v, r->scanners[t], r->calls[c]);

				if (l >= 0 && k >= 0)
					ratio_line(env, r, pl, l, k, GOAL_OVER_KERNEL, &met, &all);
				if (l >= 0 && direct >= 0 && r->calls[c] == GOAL_DIRECT_CALL)
					ratio_line(env, r, pl, l, direct, GOAL_OVER_DIRECT, &met,
						   &all);
			}
		}
	}
	plot_close(pl);
	if (!r->memcg)
		printf("  lpc/kernel: no kernel rows (no writable memory cgroup: %s)\n",
		       r->memcg_why);
	printf("  %u of %u goals met\n\n", met, all);
}

/* lpc_uring over lpc_sync within each round: the backends side by side (no
 * goal; what tells an io_uring cost from the cache's). */
static void print_backends(const struct bench_env *env, const struct scan_results *r)
{
	bool any = false;

	for (unsigned t = 0; t < r->nr_scanners; t++) {
		for (unsigned c = 0; c < r->nr_calls; c++) {
			int u = scan_find_row(r, SV_URING, r->scanners[t], r->calls[c]);
			int s = scan_find_row(r, SV_SYNC, r->scanners[t], r->calls[c]);
			const struct scan_row *ru;
			struct summary q;
			char label[96];

			if (u < 0 || s < 0)
				continue;
			if (!any)
				printf("scan: lpc_uring/lpc_sync within rounds (median [min - max]; no goal)\n");
			any = true;
			ru = &r->rows[u];
			q = ratio_of(r, u, s);
			snprintf(label, sizeof(label), "%u scanner%s, %3u KiB: lpc_uring/lpc_sync",
				 ru->scanners, ru->scanners > 1 ? "s" : "", ru->call >> 10);
			printf("  %-44s %7.3f [%.3f - %.3f]\n", label, q.med, q.min, q.max);
			csv_sum(env, ru, scan_variant_name[SV_URING], "ratio_lpc_sync", &q);
		}
	}
	if (any)
		printf("\n");
}

/* How cold the passes started, and what the io_uring cache ran on. */
static void print_cold(const struct scan_results *r)
{
	uint64_t resident = 0, cached = 0;
	double free_min = 1;

	for (unsigned i = 0; i < r->rounds; i++) {
		for (unsigned j = 0; j < r->nr_rows; j++) {
			const struct scan_sample *s = scan_sample(r, i, j);

			if (r->rows[j].skip)
				continue;
			if (r->rows[j].v == SV_KERNEL && s->resident0 > resident)
				resident = s->resident0;
			if (s->lpc_cached0 > cached)
				cached = s->lpc_cached0;
			if (scan_is_lpc(r->rows[j].v) && s->frames &&
			    (double)s->free0 / (double)s->frames < free_min)
				free_min = (double)s->free0 / (double)s->frames;
		}
	}
	printf("scan: cold starts: before a kernel pass, at most %" PRIu64 " of the file's pages in its\n"
	       "  page cache (mincore); before an lpc pass, %" PRIu64 " in the lpc cache (lpc_page_find);\n"
	       "  want 0 and 0;\n"
	       "  lpc's free frames (frames_free, approximate) at least %.1f%% of its frames\n",
	       resident, cached, 100 * free_min);
	printf("  lpc_uring's cache: uring_fallbacks %" PRIu64 " (0: it ran on io_uring), uring_unregistered %" PRIu64 "\n\n",
	       r->uring_fallbacks, r->uring_unregistered);
}

void scan_report(const struct bench_env *env, const struct scan_results *res)
{
	print_speed(env, res);
	print_counters(env, res);
	print_device(env, res);
	print_goals(env, res);
	print_backends(env, res);
	print_cold(res);
}
