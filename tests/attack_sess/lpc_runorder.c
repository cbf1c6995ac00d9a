/* SPDX-License-Identifier: MIT */
/*
 * lpc_runorder - run.c U2's run_order_frames (13c488b): a run's frames
 * sorted into ascending address order (reversal, or qsort for a mixed
 * order) before U3 gives them their indices.
 *
 * Contract: lpc.h lpc_pread / lpc_page_get (C.1-C.3): every byte of page i
 * is the file's page i; run.c's comment: "page index + k gets the k-th
 * lowest frame, so a run's iovecs are ascending".
 *
 * Steps, for each of {lockless, LOCKED} x {sync, io_uring}: a 256-frame
 * cache over a 2048-page file, each 8 bytes of page i holding i; two
 * threads read random single pages and check them (eviction frees frames
 * in a mixed order, the free lists hand them out mixed); meanwhile 300
 * rounds of: lpc_invalidate a random single page here and there (more
 * mixing), lpc_invalidate 64 cold pages at s, one lpc_pread of them, every
 * byte checked, and, when the stats say that pread was one read, the 64
 * pages' lpc_page_data addresses checked strictly ascending.  Also counted:
 * runs whose frames came mixed (not ascending nor descending before the
 * sort is what qsort handles; visible here only as the result).
 * Exit 1 on a wrong byte or a one-read run whose frames are not ascending.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lpc/lpc.h>

#define PS 4096
#define NP 2048
#define RUN 64

static struct lpc_file *f;
static atomic_int qsorts; /* run_order_frames' mixed-order path taken */

/* Interposed (the executable's symbol wins over libc's): counts the sorts,
 * so the program shows it reached the qsort branch, not only reversal. */
void qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	static void (*real)(void *, size_t, size_t, int (*)(const void *, const void *));

	if (!real)
		real = (void (*)(void *, size_t, size_t, int (*)(const void *, const void *)))
			dlsym(RTLD_NEXT, "qsort");
	atomic_fetch_add(&qsorts, 1);
	real(base, n, size, cmp);
}
static atomic_int stop, bad;

static int check_page(const char *buf, uint64_t i)
{
	for (size_t o = 0; o < PS; o += 8)
		if (*(const uint64_t *)(buf + o) != i)
			return 0;
	return 1;
}

static void *reader(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	static _Thread_local char buf[PS];

	while (!atomic_load(&stop)) {
		uint64_t i = (uint64_t)rand_r(&seed) % NP;
		ssize_t r = lpc_pread(f, buf, PS, i * PS);

		if (r != PS || !check_page(buf, i)) {
			fprintf(stderr, "reader: page %" PRIu64 " wrong (r %zd)\n", i, r);
			atomic_fetch_add(&bad, 1);
		}
	}
	return NULL;
}

static int one(const char *path, int mode, int backend)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	static char buf[RUN * PS];
	pthread_t th[2];
	unsigned seed = 7;
	int wrong = 0, unordered = 0, onerun = 0;

	lpc_config_init(&cfg);
	cfg.cache_bytes = 256 * PS;
	cfg.page_size = PS;
	cfg.io_backend = backend;
	cfg.lookup_mode = mode;
	if (lpc_cache_create(&cfg, &c) != 0 || lpc_file_open(c, path, O_RDONLY, 0, &f) != 0) {
		fprintf(stderr, "setup failed\n");
		exit(2);
	}
	atomic_store(&stop, 0);
	atomic_store(&bad, 0);
	for (int k = 0; k < 2; k++)
		pthread_create(&th[k], NULL, reader, (void *)(uintptr_t)(k + 1));
	for (int round = 0; round < 300; round++) {
		uint64_t s = (uint64_t)rand_r(&seed) % (NP - RUN);
		struct lpc_stats a, b;

		for (int k = 0; k < 8; k++)
			(void)lpc_invalidate(f, ((uint64_t)rand_r(&seed) % NP) * PS, PS);
		(void)lpc_invalidate(f, s * PS, RUN * PS);
		lpc_stats(c, &a);
		if (lpc_pread(f, buf, sizeof(buf), s * PS) != (ssize_t)sizeof(buf)) {
			wrong++;
			continue;
		}
		lpc_stats(c, &b);
		for (int k = 0; k < RUN; k++)
			if (!check_page(buf + (size_t)k * PS, s + k)) {
				fprintf(stderr, "run at %" PRIu64 ": page %d wrong\n", s, k);
				wrong++;
			}
		if (b.reads - a.reads == 1) {
			uintptr_t prev = 0;
			int ok = 1, all = 1;

			for (int k = 0; k < RUN; k++) {
				struct lpc_page *p;

				if (lpc_page_find(f, s + k, &p) != 0) {
					all = 0;
					break;
				}
				uintptr_t d = (uintptr_t)lpc_page_data(p);

				if (!check_page(lpc_page_data(p), s + k))
					wrong++;
				if (k && d <= prev)
					ok = 0;
				prev = d;
				lpc_page_put(p);
			}
			if (all) {
				onerun++;
				unordered += !ok;
			}
		}
	}
	atomic_store(&stop, 1);
	for (int k = 0; k < 2; k++)
		pthread_join(th[k], NULL);
	printf("%s %s: %d wrong page(s) in runs, %d by readers; %d one-read runs checked, "
	       "%d of them not ascending; %d qsort(s) so far\n", mode ? "LOCKED" : "lockless",
	       backend == LPC_IO_SYNC ? "sync" : "uring", wrong, atomic_load(&bad), onerun,
	       unordered, atomic_load(&qsorts));
	lpc_file_close(f);
	lpc_cache_destroy(c);
	return wrong + atomic_load(&bad) + unordered;
}

int main(void)
{
	char path[] = "/tmp/lpc_runorderXXXXXX";
	int fd = mkstemp(path), fails = 0;
	static char page[PS];

	if (fd < 0)
		return 2;
	for (uint64_t i = 0; i < NP; i++) {
		for (size_t o = 0; o < PS; o += 8)
			memcpy(page + o, &i, 8);
		if (write(fd, page, PS) != PS)
			return 2;
	}
	close(fd);
	for (int m = 0; m < 2; m++)
		for (int b = 0; b < 2; b++)
			fails += one(path, m ? LPC_LOOKUP_LOCKED : LPC_LOOKUP_LOCKLESS,
				     b ? LPC_IO_URING : LPC_IO_SYNC);
	unlink(path);
	printf("%s\n", fails ? "DEFECT" : "ok");
	return fails ? 1 : 0;
}
