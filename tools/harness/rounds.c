/* SPDX-License-Identifier: MIT */
/*
 * rounds.c - interleaved rounds for the pin and fault benchmarks (rounds.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "csv.h"
#include "plot.h"
#include "rounds.h"
#include "util.h"

void rounds_run(const struct bench_env *env, struct pool *pool, struct rounds *r,
		const char *metric, double scale)
{
	const struct bench_opts *o = env->opts;
	unsigned total = o->warmup + o->rounds;
	uint64_t slice_ns = (uint64_t)o->slice_ms * 1000000u;
	uint64_t t0 = now_ns();

	r->nt = o->nr_tconf;
	r->nr = o->rounds;
	r->ops_s = xcalloc((size_t)r->nr * r->nt * r->nv, sizeof(double));
	for (unsigned round = 0; round < total; round++) {
		double left = round ? (double)(now_ns() - t0) / 1e9 / round * (total - round) : 0;

		progress("%s: round %u/%u%s, ~%.0f s left", r->bench, round + 1, total,
			 round < o->warmup ? " (warm-up)" : "", left);
		for (unsigned t = 0; t < r->nt; t++) {
			for (unsigned v = 0; v < r->nv; v++) {
				struct pool_slice s;
				double ops_s;

				if (r->v[v].slice)
					r->v[v].slice(r->v[v].arg, o->threads[t], slice_ns, &s);
				else
					pool_run(pool, o->threads[t], r->v[v].fn, r->v[v].arg,
						 slice_ns, &s);
				ops_s = s.wall_ns ? (double)s.ops * 1e9 / (double)s.wall_ns : NAN;
				if (round < o->warmup)
					continue;
				*rounds_at(r, round - o->warmup, t, v) = ops_s;
				csv_raw(env->csv,
					&(struct csv_key){ .bench = r->bench,
							   .round = round - o->warmup + 1,
							   .threads = o->threads[t],
							   .variant = r->v[v].name,
							   .metric = metric },
					ops_s * scale);
			}
		}
	}
	progress_done();
}

struct summary rounds_sum(const struct rounds *r, unsigned t, unsigned v, double scale)
{
	double *x = xcalloc(r->nr, sizeof(double));
	struct summary s;

	for (unsigned i = 0; i < r->nr; i++)
		x[i] = *rounds_at(r, i, t, v) * scale;
	s = summarize(x, r->nr);
	free(x);
	return s;
}

struct summary rounds_ratio(const struct rounds *r, unsigned v1, unsigned t1, unsigned v2,
			    unsigned t2)
{
	double *x = xcalloc(r->nr, sizeof(double));
	struct summary s;

	for (unsigned i = 0; i < r->nr; i++) {
		double d = *rounds_at(r, i, t2, v2);

		x[i] = d > 0 ? *rounds_at(r, i, t1, v1) / d : NAN;
	}
	s = summarize(x, r->nr);
	free(x);
	return s;
}

void rounds_print(const struct bench_env *env, const struct rounds *r, const char *title,
		  const char *unit, double scale, const char *plot_name)
{
	const struct bench_opts *o = env->opts;
	char hdr[128], c[96];
	struct plot *pl;

	snprintf(hdr, sizeof(hdr), "threads,variant,%s,min,max,per_thread", plot_name);
	pl = plot_open(&(struct plot_spec){
		.name = plot_name, .title = title, .ylabel = unit, .stitle = "variant",
		.header = hdr, .xcol = 1, .scol = 2, .ycol = 3, .locol = 4, .hicol = 5,
		.logy = false, .ref = NAN });
	printf("%s (%s: median [min - max] over %u rounds)\n", title, unit, r->nr);
	printf("  %7s  %-13s %12s %25s %14s\n", "threads", "variant", unit, "range", "per thread");
	for (unsigned t = 0; t < r->nt; t++) {
		for (unsigned v = 0; v < r->nv; v++) {
			struct summary s = rounds_sum(r, t, v, scale);

			printf("  %7u  %-13s %12.3f   [%9.3f - %9.3f] %14.3f\n", o->threads[t],
			       r->v[v].name, s.med, s.min, s.max, s.med / o->threads[t]);
			csv_summary(env->csv,
				    &(struct csv_key){ .bench = r->bench, .threads = o->threads[t],
						       .variant = r->v[v].name, .metric = unit },
				    &s);
			plot_row(pl, "%u,%s,%s,%.6g", o->threads[t], r->v[v].name,
				 plot_sum(c, sizeof(c), &s), s.med / o->threads[t]);
		}
	}
	plot_close(pl);
}

void rounds_print_ratio(const struct bench_env *env, const struct rounds *r, const char *label,
			const char *metric, unsigned threads, struct summary s)
{
	printf("  %-52s %7.3f [%.3f - %.3f]\n", label, s.med, s.min, s.max);
	csv_summary(env->csv,
		    &(struct csv_key){ .bench = r->bench, .threads = threads, .variant = "-",
				       .metric = metric },
		    &s);
}

void rounds_print_ratio_at(const struct bench_env *env, const struct rounds *r, const char *what,
			   const char *metric, unsigned t, unsigned v1, unsigned v2)
{
	unsigned n = env->opts->threads[t];
	char l[160];

	snprintf(l, sizeof(l), "%s, %u thread%s", what, n, n > 1 ? "s" : "");
	rounds_print_ratio(env, r, l, metric, n, rounds_ratio(r, v1, t, v2, t));
}
