/* SPDX-License-Identifier: MIT */
/*
 * rw.h - shared helpers of the rcuworker review (tests/attack_rw/README.md):
 * a census of /proc/self/task (names, SigBlk), the worker's tid and name,
 * and an eviction run that makes lpc's reclaimer free radix leaves.
 * Programs exit 1 when a claim fails, 0 when it holds, 77 to skip.
 */
#ifndef LPC_ATTACK_RW_H
#define LPC_ATTACK_RW_H
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <urcu/urcu-memb.h>

#include "../common/lpc_test.h"

#define RW_PS 4096u
#define RW_FRAMES 256u

struct rw_census {
	unsigned threads, lpc, reclaim;
};

static inline unsigned long long rw_sigblk(pid_t tid)
{
	char path[64], line[256];
	unsigned long long m = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	fp = fopen(path, "r");
	if (!fp)
		return 0;
	while (fgets(line, sizeof(line), fp))
		if (!strncmp(line, "SigBlk:", 7))
			m = strtoull(line + 7, NULL, 16);
	fclose(fp);
	return m;
}

/* Every blockable signal but glibc's two internal ones (32, 33). */
static inline bool rw_all_blocked(pid_t tid)
{
	unsigned long long m = rw_sigblk(tid);

	return (m | (1ull << (SIGKILL - 1)) | (1ull << (SIGSTOP - 1)) | (1ull << 31) |
		(1ull << 32)) == ~0ull;
}

static inline void rw_comm(pid_t tid, char *out, size_t n)
{
	char path[64];
	FILE *fp;

	out[0] = 0;
	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)tid);
	fp = fopen(path, "r");
	if (!fp)
		return;
	if (fgets(out, (int)n, fp))
		out[strcspn(out, "\n")] = 0;
	fclose(fp);
}

static inline struct rw_census rw_census(void)
{
	DIR *d = opendir("/proc/self/task");
	struct rw_census c = { 0 };
	struct dirent *e;

	REQUIRE(d, "opendir");
	while ((e = readdir(d))) {
		char comm[32];

		if (e->d_name[0] == '.')
			continue;
		rw_comm(atoi(e->d_name), comm, sizeof(comm));
		if (!comm[0] || !strncmp(comm, "iou-", 4)) /* io_uring's: the kernel's */
			continue;
		c.threads++;
		c.lpc += !strncmp(comm, "lpc-", 4);
		c.reclaim += !strcmp(comm, "lpc-reclaim");
	}
	closedir(d);
	return c;
}

/* The tid of the thread named `name` with the highest tid, or 0. */
static inline pid_t rw_find(const char *name)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	pid_t best = 0;

	REQUIRE(d, "opendir");
	while ((e = readdir(d))) {
		char comm[32];
		pid_t t;

		if (e->d_name[0] == '.')
			continue;
		t = atoi(e->d_name);
		rw_comm(t, comm, sizeof(comm));
		if (!strcmp(comm, name) && t > best)
			best = t;
	}
	closedir(d);
	return best;
}

/* Tids present now: a bitmap-free list (small processes). */
#define RW_MAXT 256
struct rw_tids {
	unsigned n;
	pid_t t[RW_MAXT];
};

static inline struct rw_tids rw_tids(void)
{
	DIR *d = opendir("/proc/self/task");
	struct rw_tids s = { 0 };
	struct dirent *e;

	REQUIRE(d, "opendir");
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && s.n < RW_MAXT)
			s.t[s.n++] = atoi(e->d_name);
	closedir(d);
	return s;
}

/* A tid in `after` absent from `before`, or 0; *count gets how many. */
static inline pid_t rw_new_tid(const struct rw_tids *before, const struct rw_tids *after,
			       unsigned *count)
{
	pid_t found = 0;

	*count = 0;
	for (unsigned i = 0; i < after->n; i++) {
		bool old = false;

		for (unsigned j = 0; j < before->n; j++)
			old |= after->t[i] == before->t[j];
		if (!old) {
			found = after->t[i];
			(*count)++;
		}
	}
	return found;
}

/*
 * A cache of RW_FRAMES pages reading a null-backend file 8x its size twice:
 * the background reclaimer evicts and frees radix leaves with call_rcu.
 * Returns the most lpc-reclaim threads seen at one sample.
 */
static inline unsigned rw_evict_run(struct lpc_cache *c, const char *name)
{
	static unsigned char buf[16 * RW_PS];
	char path[600];
	struct lpc_file *f;
	unsigned most = 0;

	REQUIRE(tst_make_sparse(name, 8ull * RW_FRAMES * RW_PS, path, sizeof(path)) == 0, "file");
	f = tst_file_open(c, path, O_RDONLY);
	for (int pass = 0; pass < 2; pass++)
		for (uint64_t off = 0; off < 8ull * RW_FRAMES * RW_PS; off += sizeof(buf)) {
			CHECK_EQ(lpc_pread(f, buf, sizeof(buf), (off_t)off), (ssize_t)sizeof(buf),
				 "read");
			if ((off / sizeof(buf)) % 16 == 0) {
				struct rw_census n = rw_census();

				if (n.reclaim > most)
					most = n.reclaim;
			}
		}
	CHECK_EQ(lpc_file_close(f), 0, "close");
	unlink(path);
	return most;
}

static inline struct lpc_cache *rw_cache(void)
{
	tst_readahead_kb = LPC_READAHEAD_OFF;
	return tst_cache_create(RW_FRAMES * RW_PS, RW_PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);
}

/* liburcu's default worker, without creating it: the worker is the one
 * thread a census shows appearing; programs find it by tid diff instead of
 * calling urcu_memb_get_default_call_rcu_data (which would create it). */
static inline pid_t rw_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}
/* The one thread made since `before` that is not lpc-* nor io_uring's (the
 * call_rcu worker, since ad5f9fa made by lpc's first background thread's
 * starter); *count gets how many such threads there are. */
static inline pid_t rw_worker_since(const struct rw_tids *before, unsigned *count)
{
	struct rw_tids after = rw_tids();
	pid_t w = 0;

	*count = 0;
	for (unsigned i = 0; i < after.n; i++) {
		char comm[32];
		bool old = false;

		for (unsigned j = 0; j < before->n; j++)
			old |= after.t[i] == before->t[j];
		rw_comm(after.t[i], comm, sizeof(comm));
		if (!old && strncmp(comm, "lpc-", 4) && strncmp(comm, "iou-", 4)) {
			w = after.t[i];
			(*count)++;
		}
	}
	return w;
}

/* Prints every thread's name (a diagnostic line). */
static inline void rw_list(void)
{
	struct rw_tids s = rw_tids();

	printf("# threads:");
	for (unsigned i = 0; i < s.n; i++) {
		char comm[32];

		rw_comm(s.t[i], comm, sizeof(comm));
		printf(" %d=%s", (int)s.t[i], comm);
	}
	printf("\n");
}
#endif
