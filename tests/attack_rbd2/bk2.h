/* SPDX-License-Identifier: MIT */
/*
 * bk2.h - rev23's version-2 user backend (lpc.h BK7, read_batch): the
 * in-memory storage of ../attack_backend/bk.h with a read_batch whose
 * misbehaviour a program picks (bk2_mode), so a program sees what lpc
 * does with out-of-order, doubled, missing, foreign-thread, short,
 * negative and oversized completions.
 */
#ifndef ATT_BK2_H
#define ATT_BK2_H
#include "../attack_backend/bk.h"

enum bk2_mode {
	BK2_GOOD,      /* every run read and completed, in order */
	BK2_REVERSE,   /* read all, complete last to first */
	BK2_TWICE,     /* each run completed twice, the second with res -EIO */
	BK2_NEVER0,    /* run 0 never completed */
	BK2_THREAD0,   /* run 0 completed from another thread (joined) */
	BK2_FAIL0,     /* run 0: -EIO */
	BK2_SHORT0,    /* run 0: half its first page read, res says so */
	BK2_NEG0,      /* run 0: res -5000 (no errno) */
	BK2_OVER0,     /* run 0: res one byte more than asked */
	BK2_BADK,      /* done(-1) and done(nruns) besides every good done */
	BK2_NEVERALL,  /* no run ever completed */
};

static _Atomic int bk2_mode;
static _Atomic int bk2_batches, bk2_runs, bk2_multi; /* bk2_multi: calls with 2+ runs */
/* BK2_FAIL0: fail read too (the page-by-page redo) at these bytes */
static _Atomic uint64_t bk2_bad_off = UINT64_MAX;

static inline ssize_t bk2_read(void *h, const struct iovec *iov, int n, uint64_t off)
{
	size_t want = 0;

	for (int i = 0; i < n; i++)
		want += iov[i].iov_len;
	if (off <= atomic_load(&bk2_bad_off) && atomic_load(&bk2_bad_off) < off + want)
		return -EIO;
	return mem_read(h, iov, n, off);
}

struct bk2_th {
	lpc_backend_done *done;
	void *arg;
	int k;
};

static void *bk2_thread(void *p)
{
	struct bk2_th *t = p;

	t->done(t->arg, t->k);
	return NULL;
}

static inline size_t bk2_len(const struct lpc_backend_run *r)
{
	size_t l = 0;

	for (int i = 0; i < r->iovcnt; i++)
		l += r->iov[i].iov_len;
	return l;
}

static void bk2_read_batch(void *h, struct lpc_backend_run *runs, int nruns,
			   lpc_backend_done *done, void *arg)
{
	int mode = atomic_load(&bk2_mode);

	atomic_fetch_add(&bk2_batches, 1);
	atomic_fetch_add(&bk2_runs, nruns);
	if (nruns > 1)
		atomic_fetch_add(&bk2_multi, 1);
	for (int k = 0; k < nruns; k++)
		runs[k].res = bk2_read(h, runs[k].iov, runs[k].iovcnt, runs[k].off);
	switch (mode) {
	case BK2_FAIL0: runs[0].res = -EIO; break;
	case BK2_SHORT0:
		if (runs[0].res > 2048) {
			memset((char *)runs[0].iov[0].iov_base + 2048, 0, 2048);
			runs[0].res = 2048;
		}
		break;
	case BK2_NEG0: runs[0].res = -5000; break;
	case BK2_OVER0: runs[0].res = (ssize_t)bk2_len(&runs[0]) + 1; break;
	}
	if (mode == BK2_NEVERALL)
		return;
	for (int j = 0; j < nruns; j++) {
		int k = mode == BK2_REVERSE ? nruns - 1 - j : j;

		if (k == 0 && mode == BK2_NEVER0)
			continue;
		if (k == 0 && mode == BK2_THREAD0) {
			struct bk2_th t = { done, arg, 0 };
			pthread_t th;

			pthread_create(&th, NULL, bk2_thread, &t);
			pthread_join(th, NULL);
			continue;
		}
		if (mode == BK2_BADK) {
			done(arg, -1);
			done(arg, nruns);
		}
		done(arg, k);
		if (mode == BK2_TWICE) {
			runs[k].res = -EIO;
			done(arg, k);
		}
	}
}

static const struct lpc_backend_ops bk2_ops = {
	.version = LPC_BACKEND_V2,
	.read = bk2_read,
	.write = mem_write,
	.sync = mem_sync,
	.truncate = mem_truncate,
	.size = mem_size,
	.release = mem_release,
	.read_batch = bk2_read_batch,
};

static inline unsigned char bk2_pat(uint64_t i)
{
	return (unsigned char)((i * 131u) ^ (i >> 12) ^ 0x5a);
}
#endif
