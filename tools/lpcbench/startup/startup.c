/* SPDX-License-Identifier: MIT */
/*
 * startup.c - `lpcbench startup`: what a process pays to start using lpc, by
 * budget (lpc(7) "Memory"): for each cache_bytes (16 MiB, 256 MiB, 1 GiB,
 * 4 GiB; or --cache-mb alone) and each disk backend (uring, sync), a fresh
 * process (exec'd: kchild.h) creates the cache, opens a data file, and
 * times its first I/O: one lpc_pread of a page (a miss), then one lpc_pwrite
 * and lpc_fsync (the first write and fdatasync); then it reads pages until
 * USED pages are in the cache and reports its resident set: VmHWM (peak)
 * and VmRSS against what it was before lpc_cache_create, and lpc_stats'
 * resident_bytes.  Medians over --rounds processes per row [5].
 *
 * Goals (issue "pay for what you use"): first I/O at most 10 ms at every
 * budget; the peak resident set within 10 % of the pages used plus a fixed
 * overhead, whatever the budget (the overhead column is the growth minus
 * the pages used: it should not grow with the budget).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lpc/lpc.h>

#include "harness/bench.h"
#include "harness/datafile.h"
#include "harness/kchild.h"
#include "harness/stats.h"
#include "harness/util.h"
#include "lpcbench/benches.h"

#define SU_PS 4096u
#define SU_USED 101u            /* pages in the cache when RSS is read */
#define SU_FILE_BYTES (1u << 20) /* the data file: more than SU_USED pages */
#define SU_DEF_ROUNDS 5

static const unsigned su_budgets_mb[] = { 16, 256, 1024, 4096 };
static const int su_backends[] = { LPC_IO_URING, LPC_IO_SYNC };
static const char *const su_backend_name[] = { "uring", "sync" };

struct su_res {
	int err;             /* 0, or the failing call's -errno */
	int backend;         /* the backend the cache runs (uring may fall back) */
	uint64_t create_ns;  /* lpc_cache_create */
	uint64_t read_ns;    /* the first lpc_pread (a miss) */
	uint64_t write_ns;   /* the first lpc_pwrite + lpc_fsync */
	uint64_t rss0_kb;    /* VmRSS before lpc_cache_create */
	uint64_t rss_kb;     /* VmRSS with SU_USED pages cached */
	uint64_t hwm_kb;     /* VmHWM then */
	uint64_t resident;   /* lpc_stats resident_bytes */
	uint64_t unregistered;
};

struct su_cmd {
	int go;
};

/* VmRSS or VmHWM of this process in KiB. */
static uint64_t su_status_kb(const char *key)
{
	FILE *fp = fopen("/proc/self/status", "r");
	char line[256];
	uint64_t kb = 0;
	size_t n = strlen(key);

	if (!fp)
		return 0;
	while (fgets(line, sizeof(line), fp))
		if (!strncmp(line, key, n) && line[n] == ':') {
			kb = strtoull(line + n + 1, NULL, 10);
			break;
		}
	fclose(fp);
	return kb;
}

struct su_kid {
	uint64_t cache_mb;
	int backend;
	char path[4096];
};

/* The child's one measurement (a fresh process per row and round). */
static void su_measure(struct su_kid *k, struct su_res *r)
{
	struct lpc_config cfg;
	struct lpc_cache *c = NULL;
	struct lpc_file *f = NULL;
	struct lpc_stats s;
	unsigned char *buf = xaligned_alloc(SU_PS, SU_PS);
	uint64_t t;
	ssize_t n;

	lpc_config_init(&cfg);
	cfg.cache_bytes = k->cache_mb << 20;
	cfg.page_size = SU_PS;
	cfg.io_backend = k->backend;
	r->rss0_kb = su_status_kb("VmRSS");
	t = now_ns();
	r->err = lpc_cache_create(&cfg, &c);
	r->create_ns = now_ns() - t;
	if (r->err)
		goto out;
	r->err = lpc_file_open(c, k->path, O_RDWR, 0, &f);
	if (r->err)
		goto out;
	t = now_ns();
	n = lpc_pread(f, buf, SU_PS, 0);
	r->read_ns = now_ns() - t;
	if (n != SU_PS) {
		r->err = n < 0 ? (int)n : -EIO;
		goto out;
	}
	t = now_ns();
	n = lpc_pwrite(f, buf, SU_PS, SU_PS);
	r->err = lpc_fsync(f);
	r->write_ns = now_ns() - t;
	if (n != SU_PS || r->err) {
		r->err = n != SU_PS ? (n < 0 ? (int)n : -EIO) : r->err;
		goto out;
	}
	for (uint64_t i = 2; i < SU_USED; i++)
		if (lpc_pread(f, buf, SU_PS, i * SU_PS) != SU_PS) {
			r->err = -EIO;
			goto out;
		}
	r->rss_kb = su_status_kb("VmRSS");
	r->hwm_kb = su_status_kb("VmHWM");
	/* Zeroed: a liblpc.so older than resident_bytes leaves it alone. */
	memset(&s, 0, sizeof(s));
	lpc_stats(c, &s);
	r->resident = s.resident_bytes;
	r->unregistered = s.uring_unregistered;
	r->backend = s.uring_fallbacks ? LPC_IO_SYNC : k->backend;
out:
	if (f)
		lpc_file_close(f);
	if (c)
		lpc_cache_destroy(c);
	free(buf);
}

static void su_serve(void *arg, const void *cmd, void *res)
{
	if (cmd)
		su_measure(arg, res);
}

/* `lpcbench --kchild startup "MB BACKEND PATH" CMD_FD RES_FD <options>`. */
static void su_child(const struct bench_env *env, const char *arg, int cmd_fd, int res_fd)
{
	struct su_kid k;
	unsigned long long mb;
	int backend, off = 0;

	(void)env;
	if (sscanf(arg, "%llu %d %n", &mb, &backend, &off) != 2 || !off)
		die("startup: bad child argument %s", arg);
	k.cache_mb = mb;
	k.backend = backend;
	snprintf(k.path, sizeof(k.path), "%s", arg + off);
	kchild_serve(cmd_fd, res_fd, sizeof(struct su_cmd), sizeof(struct su_res), su_serve, &k);
}

static unsigned su_rounds(const struct bench_opts *o)
{
	return o->rounds_set ? o->rounds : SU_DEF_ROUNDS;
}

static void su_check_opts(const struct bench_opts *o)
{
	(void)o;
}

static double su_estimate_s(const struct bench_opts *o)
{
	return 0.5 * su_rounds(o) * ARRAY_SIZE(su_budgets_mb) * ARRAY_SIZE(su_backends);
}

static void su_one(const char *path, unsigned mb, int backend, struct su_res *r)
{
	char arg[4200];
	struct su_cmd cmd = { .go = 1 };
	struct kchild k;
	struct kchild_spec s = {
		.what = "startup: a fresh process", .cmd_len = sizeof(cmd), .res_len = sizeof(*r),
		.bench = "startup", .bench_arg = arg,
	};

	snprintf(arg, sizeof(arg), "%u %d %s", mb, backend, path);
	memset(&k, 0, sizeof(k));
	if (kchild_start(&k, &s))
		die("startup: cannot start a child");
	kchild_call(&k, &cmd, r);
	kchild_stop(&k);
}

static void su_csv(const struct bench_env *env, const char *variant, unsigned round,
		   const char *metric, double v)
{
	struct csv_key key = { .bench = "startup", .round = round, .threads = 1,
			       .variant = variant, .metric = metric };

	csv_raw(env->csv, &key, v);
}

static void su_run(const struct bench_env *env)
{
	const struct bench_opts *o = env->opts;
	unsigned rounds = su_rounds(o), nb = o->cache_mb_set ? 1 : ARRAY_SIZE(su_budgets_mb);
	double *v[6];
	struct datafile df;

	datafile_choose(o->dir, &df);
	printf("startup: what a fresh process pays to start using lpc, by budget\n"
	       "  per row    %u processes (exec'd), each: lpc_cache_create, lpc_file_open, the first\n"
	       "             lpc_pread (a miss), the first lpc_pwrite + lpc_fsync, then reads until\n"
	       "             %u pages (%u KiB) are cached; page size %u; file in %s (%s)\n"
	       "  columns    medians: create, first read, first write+fsync (ms); peak and final\n"
	       "             resident set growth over the process before lpc_cache_create (MiB),\n"
	       "             lpc_stats resident_bytes (MiB); overhead = peak growth - pages used\n"
	       "  goals      first I/O <= 10 ms; peak growth <= 1.1 x pages used + an overhead\n"
	       "             that does not grow with the budget\n\n",
	       rounds, SU_USED, SU_USED * SU_PS / 1024, SU_PS, df.dir, df.fstype);
	datafile_create(&df, SU_FILE_BYTES);
	for (int m = 0; m < 6; m++)
		v[m] = xcalloc(rounds, sizeof(double));
	printf("  %-9s %-6s %9s %11s %12s %10s %10s %10s %10s\n", "budget", "io", "create",
	       "first read", "first write", "peak MiB", "final MiB", "resident", "overhead");
	for (unsigned b = 0; b < nb; b++) {
		unsigned mb = o->cache_mb_set ? o->cache_mb : su_budgets_mb[b];

		for (unsigned io = 0; io < ARRAY_SIZE(su_backends); io++) {
			struct summary sm[6];
			char variant[64];
			int ran = su_backends[io];

			snprintf(variant, sizeof(variant), "%s_%umib", su_backend_name[io], mb);
			for (unsigned i = 0; i < rounds; i++) {
				struct su_res r;

				progress("startup: %u MiB %s, process %u of %u", mb,
					 su_backend_name[io], i + 1, rounds);
				su_one(df.path, mb, su_backends[io], &r);
				if (r.err)
					die("startup: %u MiB %s: %s", mb, su_backend_name[io],
					    strerror(-r.err));
				ran = r.backend;
				v[0][i] = r.create_ns / 1e6;
				v[1][i] = r.read_ns / 1e6;
				v[2][i] = r.write_ns / 1e6;
				v[3][i] = (double)(r.hwm_kb - r.rss0_kb) / 1024;
				v[4][i] = (double)(r.rss_kb - r.rss0_kb) / 1024;
				v[5][i] = (double)r.resident / (1 << 20);
				su_csv(env, variant, i + 1, "create_ms", v[0][i]);
				su_csv(env, variant, i + 1, "first_read_ms", v[1][i]);
				su_csv(env, variant, i + 1, "first_write_fsync_ms", v[2][i]);
				su_csv(env, variant, i + 1, "peak_rss_growth_mib", v[3][i]);
				su_csv(env, variant, i + 1, "rss_growth_mib", v[4][i]);
				su_csv(env, variant, i + 1, "resident_mib", v[5][i]);
			}
			progress_done();
			for (int m = 0; m < 6; m++)
				sm[m] = summarize(v[m], rounds);
			printf("  %5u MiB %-6s %9.2f %11.2f %12.2f %10.1f %10.1f %10.1f %10.1f%s\n", mb,
			       ran == su_backends[io] ? su_backend_name[io] : "sync*", sm[0].med,
			       sm[1].med, sm[2].med, sm[3].med, sm[4].med, sm[5].med,
			       sm[3].med - SU_USED * SU_PS / 1048576.0,
			       sm[1].med <= 10 && sm[2].med <= 10 ? "" : "  (first I/O > 10 ms)");
			fflush(stdout);
		}
	}
	printf("\n  (sync*: io_uring refused here, the cache ran on sync)\n");
	for (int m = 0; m < 6; m++)
		free(v[m]);
	datafile_remove();
}

const struct bench bench_startup = {
	.name = "startup",
	.help = "a fresh process's first I/O time and resident set by cache budget (16 MiB\n"
		"           to 4 GiB, or --cache-mb), io_uring and sync; --rounds processes per row [5]",
	.run = su_run,
	.check_opts = su_check_opts,
	.estimate_s = su_estimate_s,
	.child = su_child,
};
