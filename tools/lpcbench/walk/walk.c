/* SPDX-License-Identifier: MIT */
/*
 * walk.c - lpcbench walk: path lookups for a credential that owns nothing,
 * through directories that carry POSIX ACLs (seed 004's case).
 *
 * The tree: a0..a3/b0..b3/c0..c3/d0..d3/f0..f7 (5 components, 2,048 files)
 * under a private directory; every directory is 0750, owned by uid 1001 and
 * gid 2001, with the access ACL user::rwx user:1002:r-x group::r-x
 * group:2003:r-x mask::r-x other::---, so the credential (uid 1003, gid
 * 2003) may search only through the ACL's named-group entry.  Variants,
 * interleaved in every round as lookup's are (same ratios within a round):
 *   rcu     lpc_ns_stat, rcu-walk (the namespace is warm)
 *   ref     lpc_ns_stat on a namespace with LPC_NS_OPT_FORCE_REFWALK: every
 *           walk asks the kernel component by component (the regression:
 *           dropping out of RCU mode for ACLs costs this)
 *   kernel  fstatat(2) relative to the tree's root, the worker's fsuid,
 *           fsgid and groups switched to the credential (raw per-thread
 *           system calls) for the slice
 * Prints lookups/s (all threads), the ratios rcu/kernel and rcu/ref, and the
 * fraction of rcu walks that fell back.  Needs root (chown, setfsuid).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <lpc/lpc.h>

#include "harness/bench.h"
#include "harness/pool.h"
#include "harness/stats.h"
#include "harness/util.h"
#include "lpcbench/benches.h"

enum { WV_RCU, WV_REF, WV_KERNEL, WV_NR };
static const char *const wv_name[WV_NR] = { "rcu", "ref", "kernel" };

#define WALK_FILES 2048
#define WALK_BATCH 64
#define WALK_REVAL_NS (600ull * 1000000000ull) /* 10 min */

static const gid_t walk_groups[] = { 2003 };
static const struct lpc_cred walk_cred = { 1003, 2003, 1, walk_groups };

struct walk {
	const struct bench_env *env;
	char root[512];
	char paths[WALK_FILES][32];
	struct lpc_cache *cache;
	struct lpc_ns *ns[2]; /* rcu, forced ref */
	int rootfd;
	int variant;
	uint64_t seed[BENCH_MAX_THREADS];
	_Atomic int err;
};

static uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

static uint64_t loop_ns(struct walk *w, unsigned id, struct lpc_ns *ns,
			const _Atomic unsigned *stop)
{
	uint64_t ops = 0, *s = &w->seed[id];
	struct stat st;

	do {
		for (int i = 0; i < WALK_BATCH; i++) {
			int rc = lpc_ns_stat(ns, &walk_cred, w->paths[rnd(s) % WALK_FILES], &st);

			if (rc)
				atomic_store(&w->err, rc);
		}
		ops += WALK_BATCH;
	} while (!atomic_load_explicit(stop, memory_order_relaxed));
	return ops;
}

static uint64_t loop_kernel(struct walk *w, unsigned id, const _Atomic unsigned *stop)
{
	uint64_t ops = 0, *s = &w->seed[id];
	struct stat st;

	syscall(SYS_setgroups, (size_t)walk_cred.ngroups, walk_cred.groups);
	syscall(SYS_setfsgid, walk_cred.gid);
	syscall(SYS_setfsuid, walk_cred.uid);
	do {
		for (int i = 0; i < WALK_BATCH; i++)
			if (fstatat(w->rootfd, w->paths[rnd(s) % WALK_FILES], &st, 0))
				atomic_store(&w->err, -errno);
		ops += WALK_BATCH;
	} while (!atomic_load_explicit(stop, memory_order_relaxed));
	syscall(SYS_setfsuid, 0);
	syscall(SYS_setfsgid, 0);
	syscall(SYS_setgroups, 0, NULL);
	return ops;
}

static uint64_t walk_slice_fn(unsigned id, void *arg, const _Atomic unsigned *stop)
{
	struct walk *w = arg;

	switch (w->variant) {
	case WV_RCU:
		return loop_ns(w, id, w->ns[0], stop);
	case WV_REF:
		return loop_ns(w, id, w->ns[1], stop);
	default:
		return loop_kernel(w, id, stop);
	}
}

static void set_acl(const char *p)
{
	/* user::rwx user:1002:r-x group::r-x group:2003:r-x mask::r-x other::--- */
	static const uint16_t tag[6] = { 1, 2, 4, 8, 0x10, 0x20 };
	static const uint16_t perm[6] = { 7, 5, 5, 5, 5, 0 };
	static const uint32_t id[6] = { ~0u, 1002, ~0u, 2003, ~0u, ~0u };
	unsigned char buf[4 + 6 * 8];
	uint32_t v = 2;

	memcpy(buf, &v, 4);
	for (int i = 0; i < 6; i++) {
		memcpy(buf + 4 + 8 * i, &tag[i], 2);
		memcpy(buf + 6 + 8 * i, &perm[i], 2);
		memcpy(buf + 8 + 8 * i, &id[i], 4);
	}
	if (setxattr(p, "system.posix_acl_access", buf, sizeof(buf), 0))
		die_err(errno, "walk: setting an ACL on %s (a file system without ACLs?)", p);
}

static void make(struct walk *w, const char *rel, bool dir)
{
	char p[600];

	snprintf(p, sizeof(p), "%s/%s", w->root, rel);
	if (dir) {
		if (mkdir(p, 0750) && errno != EEXIST)
			die_err(errno, "walk: mkdir %s", p);
	} else {
		int fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0640);

		if (fd < 0)
			die_err(errno, "walk: create %s", p);
		close(fd);
	}
	if (chown(p, 1001, 2001))
		die_err(errno, "walk: chown %s", p);
	set_acl(p);
}

static void walk_setup(struct walk *w)
{
	const struct bench_opts *o = w->env->opts;
	struct lpc_config cfg;
	const char *base = o->dir ? o->dir : getenv("TMPDIR");
	char rel[64];
	int n = 0;

	snprintf(w->root, sizeof(w->root), "%s/lpcbench-walk-XXXXXX", base && *base ? base : "/var/tmp");
	if (!mkdtemp(w->root))
		die_err(errno, "walk: mkdtemp %s", w->root);
	chmod(w->root, 0755);
	for (int a = 0; a < 4; a++) {
		snprintf(rel, sizeof(rel), "a%d", a);
		make(w, rel, true);
		for (int b = 0; b < 4; b++) {
			snprintf(rel, sizeof(rel), "a%d/b%d", a, b);
			make(w, rel, true);
			for (int c = 0; c < 4; c++) {
				snprintf(rel, sizeof(rel), "a%d/b%d/c%d", a, b, c);
				make(w, rel, true);
				for (int d = 0; d < 4; d++) {
					snprintf(rel, sizeof(rel), "a%d/b%d/c%d/d%d", a, b, c, d);
					make(w, rel, true);
					for (int f = 0; f < 8; f++) {
						snprintf(w->paths[n], sizeof(w->paths[n]),
							 "a%d/b%d/c%d/d%d/f%d", a, b, c, d, f);
						make(w, w->paths[n++], false);
					}
				}
			}
		}
	}
	w->rootfd = open(w->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (w->rootfd < 0)
		die_err(errno, "walk: open %s", w->root);
	lpc_config_init(&cfg);
	cfg.cache_bytes = 1 << 20;
	if (lpc_cache_create(&cfg, &w->cache))
		die("walk: lpc_cache_create");
	for (int i = 0; i < 2; i++)
		if (lpc_ns_create(w->cache, w->root, &w->ns[i]))
			die("walk: lpc_ns_create");
	lpc_ns_setopt(w->ns[1], LPC_NS_OPT_FORCE_REFWALK, 1);
	/* Nothing changes the tree behind lpc's back here: an interval longer
	 * than the run measures the warm walk; with the default (1 s) every
	 * dentry is asked again each second (printed as "revalidation"). */
	for (int i = 0; i < 2; i++)
		lpc_ns_setopt(w->ns[i], LPC_NS_OPT_REVALIDATE_NS, WALK_REVAL_NS);
	for (unsigned i = 0; i < BENCH_MAX_THREADS; i++)
		w->seed[i] = (o->seed + 1) * 0x9e3779b97f4a7c15ULL + i * 0xbf58476d1ce4e5b9ULL + 1;
}

static int rm_tree(const char *root)
{
	char cmd[700];

	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", root);
	return system(cmd);
}

static void walk_run(const struct bench_env *env)
{
	const struct bench_opts *o = env->opts;
	struct walk *w = xcalloc(1, sizeof(*w));
	unsigned total = o->warmup + o->rounds, nt = o->nr_tconf;
	double *mops = xcalloc((size_t)o->rounds * nt * WV_NR, sizeof(double));
	struct lpc_ns_stats s0, s1;
	struct pool *pool;
	unsigned maxt = 1;

	if (geteuid() != 0) {
		printf("walk: skipped: needs root (chown, ACLs, setfsuid)\n\n");
		free(w);
		free(mops);
		return;
	}
	w->env = env;
	for (unsigned i = 0; i < nt; i++)
		if (o->threads[i] > maxt)
			maxt = o->threads[i];
	walk_setup(w);
	pool = pool_create(maxt, o->pin);
	printf("walk: %d files at depth 5 under %s, ACL'd directories; credential uid %u gid %u "
	       "(owns none)\n", WALK_FILES, w->root, walk_cred.uid, walk_cred.gid);
	memset(&s0, 0, sizeof(s0));
	for (unsigned r = 0; r < total; r++) {
		bool warm = r < o->warmup;

		progress("walk: %s %u/%u", warm ? "warm-up round" : "round",
			 warm ? r + 1 : r - o->warmup + 1, warm ? o->warmup : o->rounds);
		if (r == o->warmup)
			lpc_ns_stats(w->ns[0], &s0);
		for (unsigned tc = 0; tc < nt; tc++) {
			for (int v = 0; v < WV_NR; v++) {
				struct pool_slice s;

				w->variant = v;
				pool_run(pool, o->threads[tc], walk_slice_fn, w,
					 (uint64_t)o->slice_ms * 1000000u, &s);
				if (atomic_load(&w->err))
					die_err(-atomic_load(&w->err), "walk: %s lookup failed",
						wv_name[v]);
				if (warm)
					continue;
				mops[((size_t)(r - o->warmup) * nt + tc) * WV_NR + v] =
					(double)s.ops / ((double)s.wall_ns / 1e3);
				if (env->csv) {
					struct csv_key k = { "walk", r - o->warmup + 1,
							     o->threads[tc], wv_name[v], "ops" };

					csv_raw(env->csv, &k, (double)s.ops);
					k.metric = "wall_ns";
					csv_raw(env->csv, &k, (double)s.wall_ns);
				}
			}
		}
	}
	progress_done();
	lpc_ns_stats(w->ns[0], &s1);

	printf("%-8s %-8s %24s %24s %24s\n", "threads", "", "rcu Mlookups/s", "rcu / kernel",
	       "rcu / ref");
	for (unsigned tc = 0; tc < nt; tc++) {
		double v[WV_NR][o->rounds], rk[o->rounds], rr[o->rounds];

		for (unsigned r = 0; r < o->rounds; r++) {
			for (int x = 0; x < WV_NR; x++)
				v[x][r] = mops[((size_t)r * nt + tc) * WV_NR + x];
			rk[r] = v[WV_RCU][r] / v[WV_KERNEL][r];
			rr[r] = v[WV_RCU][r] / v[WV_REF][r];
		}
		struct summary srcu = summarize(v[WV_RCU], o->rounds);
		struct summary sref = summarize(v[WV_REF], o->rounds);
		struct summary sk = summarize(v[WV_KERNEL], o->rounds);
		struct summary srk = summarize(rk, o->rounds);
		struct summary srr = summarize(rr, o->rounds);

		printf("%-8u rcu %.3f [%.3f-%.3f]  ref %.3f [%.3f-%.3f]  kernel %.3f [%.3f-%.3f] "
		       "Mlookups/s\n", o->threads[tc], srcu.med, srcu.min, srcu.max, sref.med,
		       sref.min, sref.max, sk.med, sk.min, sk.max);
		printf("%-8s rcu/kernel %.2f [%.2f-%.2f]  rcu/ref %.1f [%.1f-%.1f]  "
		       "ref/kernel %.2f\n", "", srk.med, srk.min, srk.max, srr.med, srr.min,
		       srr.max, sref.med / sk.med);
	}
	{
		uint64_t walks = s1.walks - s0.walks;
		uint64_t fb = (s1.fallback_miss + s1.fallback_seq + s1.fallback_reval) -
			      (s0.fallback_miss + s0.fallback_seq + s0.fallback_reval);

		printf("rcu namespace, measured rounds: %" PRIu64 " walks, %" PRIu64
		       " fell back (%.4f %%; goal < 0.1 %%): miss %" PRIu64 ", seq %" PRIu64
		       ", revalidation %" PRIu64 " (interval %.0f s)\n",
		       walks, fb, walks ? 100.0 * (double)fb / (double)walks : 0.0,
		       s1.fallback_miss - s0.fallback_miss, s1.fallback_seq - s0.fallback_seq,
		       s1.fallback_reval - s0.fallback_reval, (double)WALK_REVAL_NS / 1e9);
		printf("check: fallbacks under 0.1 %% once warm: %s; rcu ahead of the kernel "
		       "at every thread count: see rcu/kernel above\n\n",
		       walks && (double)fb / (double)walks < 0.001 ? "PASS" : "FAIL");
	}
	pool_destroy(pool);
	lpc_ns_destroy(w->ns[0]);
	lpc_ns_destroy(w->ns[1]);
	lpc_cache_destroy(w->cache);
	close(w->rootfd);
	if (rm_tree(w->root))
		fprintf(stderr, "walk: could not remove %s\n", w->root);
	free(mops);
	free(w);
}

static void walk_check_opts(const struct bench_opts *opts)
{
	(void)opts;
}

static double walk_estimate_s(const struct bench_opts *o)
{
	return (double)(o->rounds + o->warmup) * o->nr_tconf * WV_NR * o->slice_ms / 1000.0;
}

const struct bench bench_walk = {
	.name = "walk",
	.help = "path lookups (5 components, ACL'd directories, a credential that owns none):\n"
		"           lpc rcu-walk, forced ref-walk, kernel fstatat under the same fsuid",
	.run = walk_run,
	.check_opts = walk_check_opts,
	.estimate_s = walk_estimate_s,
};
