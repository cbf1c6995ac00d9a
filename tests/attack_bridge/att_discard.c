/* SPDX-License-Identifier: MIT */
/*
 * att_discard.c - attack on 5adbd3b (run.c U1's bridge): the discard buffer
 * is ONE buffer per cache (files->discard), and every bridged request of
 * every thread reads its holes' bytes into it.  Readahead threads (one run
 * per thread for a backend without read_batch: sync, null, a V1 user
 * backend) and streams read bridged runs at the same time, so two backend
 * calls on two threads write the same bytes at once.
 *
 * Usage: att_discard [null|verify] [rounds] [nobridge]
 * Modes:
 *   null    the null backend (lpc's own, a memset/memcpy per page): under
 *           the TSan build, ThreadSanitizer reports the data race on the
 *           discard buffer (two null_read's on two readahead threads).  In
 *           release the bytes lpc keeps are right (it never reads discard):
 *           the program exits 0 there; the defect is the race itself (C11
 *           undefined behaviour, and a TSan failure for any test that
 *           bridges on two threads).
 * A third argument "nobridge" is the control: the bridge set off (run_bridge
 * 0) before the first open, i.e. the cache as it was before 5adbd3b.
 *   verify  a V1 user backend that honours BK1-BK3 as written: it fills
 *           each iovec with the storage's bytes, then checks, still inside
 *           its read(), that the bytes it wrote are still there (an
 *           in-place transform or checksum would do the same: decrypt,
 *           decompress, verify), and fails the read -EIO when not.  BK3
 *           (amended by 5adbd3b) says only that several iovecs of *the
 *           read* may share the discard buffer; reads on other threads
 *           share it too, so the backend finds its bytes overwritten by
 *           another call and fails good reads.  Exit 1 when any read saw
 *           its buffer changed under it.
 *
 * Each round: one file, every HOT-th page cached first (RANDOM advice, one
 * pread a page: the "hot set" that 5adbd3b's bridge reads over), then
 * WILLNEED over the file from two threads (two halves), so readahead
 * threads read bridged runs at once; then lpc_invalidate(all) and again.
 * Exit 0 held, 1 defect, 77 skip.
 */
#include "../attack/att.h"
#include "cache/cache.h" /* c->files.discard, to name the buffer */
#include <signal.h>
#include <sched.h>
#include <stdatomic.h>

#define PS 4096u
#define NPAGES 8192u /* 32 MiB */
#define HOT 4u

static _Atomic unsigned long reads, changed, wrong;
static uint64_t tag = 7;

static void *changed_at[64];
static _Atomic unsigned nchanged_at;

/* Each iovec filled, then checked before the next one is touched, so that
 * the sharing BK3 allows (several iovecs of this read on the discard
 * buffer) never trips the check: only another call's bytes can. */
static ssize_t v_read(void *h, const struct iovec *iov, int n, uint64_t off)
{
	uint64_t o = off;

	(void)h;
	atomic_fetch_add(&reads, 1);
	for (int i = 0; i < n; i++) {
		uint64_t *w = iov[i].iov_base;

		for (size_t b = 0; b < iov[i].iov_len / 8; b++)
			w[b] = att_word(tag, o + b * 8);
		/* The backend's own work between the transfer and its check
		 * (a decryption, a checksum). */
		sched_yield();
		if (att_bad_word(iov[i].iov_base, iov[i].iov_len, o, tag) >= 0) {
			unsigned k = atomic_fetch_add(&nchanged_at, 1);

			if (k < 64)
				changed_at[k] = iov[i].iov_base;
			atomic_fetch_add(&changed, 1);
			return -EIO;
		}
		o += iov[i].iov_len;
	}
	return (ssize_t)(o - off);
}

static ssize_t v_write(void *h, const struct iovec *iov, int n, uint64_t off)
{
	(void)h;
	(void)off;
	size_t t = 0;

	for (int i = 0; i < n; i++)
		t += iov[i].iov_len;
	return (ssize_t)t;
}

static int v_size(void *h, uint64_t *size)
{
	(void)h;
	*size = (uint64_t)NPAGES * PS;
	return 0;
}

static const struct lpc_backend_ops vops = {
	.version = LPC_BACKEND_V1, .read = v_read, .write = v_write, .size = v_size,
};

struct half {
	struct lpc_file *f;
	uint64_t off, len;
};

static void *willneed(void *arg)
{
	struct half *h = arg;

	if (lpc_fadvise(h->f, h->off, h->len, LPC_FADV_WILLNEED))
		printf("  WILLNEED failed\n");
	return NULL;
}

static void on_alarm(int sig)
{
	(void)sig;
	printf("  FAIL: hang (alarm)\n");
	_exit(1);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "null";
	bool verify = !strcmp(mode, "verify");
	int rounds = argc > 2 ? atoi(argv[2]) : 8;
	struct lpc_cache *c;
	struct lpc_file *f;
	char path[512];
	unsigned char *buf = malloc(PS);
	struct lpc_stats s;

	signal(SIGALRM, on_alarm);
	alarm(240);
	if (!verify && strcmp(mode, "null")) {
		printf("usage: %s [null|verify] [rounds]\n", argv[0]);
		return 2;
	}
	c = att_cache(256u << 20, PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS, 0, 0);
	/* Control: "nobridge" as the third argument sets the bridge off
	 * before the first open (the field is read-only after it), which is
	 * the cache before 5adbd3b. */
	if (argc > 3 && !strcmp(argv[3], "nobridge"))
		c->files.run_bridge = 0;
	printf("  run_bridge %u pages\n", c->files.run_bridge);
	if (verify) {
		if (lpc_file_open_backend(c, "verify", &vops, NULL, O_RDONLY, &f)) {
			printf("open_backend failed\n");
			return 1;
		}
	} else {
		snprintf(path, sizeof(path), "%s/null", att_tmpdir());
		int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);

		if (fd < 0 || ftruncate(fd, (off_t)NPAGES * PS)) {
			perror("file");
			return 77;
		}
		close(fd);
		if (lpc_file_open(c, path, O_RDONLY, 0, &f)) {
			printf("open failed\n");
			return 1;
		}
	}
	for (int r = 0; r < rounds; r++) {
		pthread_t th[2];
		struct half h[2] = { { f, 0, NPAGES / 2 * PS }, { f, NPAGES / 2 * PS, NPAGES / 2 * PS } };

		lpc_fadvise(f, 0, 0, LPC_FADV_RANDOM);
		for (uint64_t p = (uint64_t)r % HOT; p < NPAGES; p += HOT)
			if (lpc_pread(f, buf, PS, p * PS) != PS)
				printf("  hot pread %" PRIu64 " failed\n", p);
		lpc_fadvise(f, 0, 0, LPC_FADV_NORMAL);
		for (int i = 0; i < 2; i++)
			pthread_create(&th[i], NULL, willneed, &h[i]);
		for (int i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
		/* Every page read back: the bytes lpc keeps are right. */
		for (uint64_t p = 0; p < NPAGES; p++) {
			ssize_t n = lpc_pread(f, buf, PS, p * PS);

			if (n != PS) {
				atomic_fetch_add(&wrong, 1);
				continue;
			}
			if (verify && att_bad_word(buf, PS, p * PS, tag) >= 0)
				atomic_fetch_add(&wrong, 1);
		}
		lpc_invalidate(f, 0, 0);
	}
	lpc_stats(c, &s);
	printf("  mode %s: rounds %d, backend reads %lu, reads that found their buffer changed %lu, "
	       "wrong pages %lu; lpc reads %" PRIu64 " read_pages %" PRIu64 " read_errors %" PRIu64
	       "\n",
	       mode, rounds, (unsigned long)reads, (unsigned long)changed, (unsigned long)wrong,
	       s.reads, s.read_pages, s.read_errors);
	{
		unsigned m = nchanged_at < 64 ? nchanged_at : 64, distinct = 0;

		for (unsigned i = 0; i < m; i++) {
			bool seen = false;

			for (unsigned j = 0; j < i; j++)
				seen |= changed_at[j] == changed_at[i];
			distinct += !seen;
		}
		if (m)
			printf("  the changed iovecs (first %u): %u distinct address(es), first %p; "
			       "the cache's discard buffer %p\n",
			       m, distinct, changed_at[0], c->files.discard);
	}
	ATT_CHECK(wrong == 0, "%lu pages read back wrong", (unsigned long)wrong);
	ATT_CHECK(changed == 0,
		  "%lu backend reads found the bytes they had written into their iovecs changed by "
		  "another thread's read (the cache's one discard buffer, shared across threads)",
		  (unsigned long)changed);
	lpc_file_close(f);
	lpc_cache_destroy(c);
	att_cleanup();
	free(buf);
	printf(att_fails ? "DEFECT\n" : "held\n");
	return att_fails ? 1 : 0;
}
