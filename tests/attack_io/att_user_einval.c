/* SPDX-License-Identifier: MIT */
/*
 * att_user_einval.c - attack on c8d9a37 (io.c RQ4-RQ5, runs ended by
 * `ended`) through the public backend interface (lpc_file_open_backend,
 * LPC_BACKEND_V2 read_batch).  The backend's read_batch answers every run
 * that covers a bad page (index % 40 == 13) with -EINVAL (modes: "einval", "eio"), and in mode
 * "twice" completes run 0 twice and never completes the last run.
 * Claims: no page stays LOCKED (alarm turns a hang into exit 1), only a
 * reader of the bad page gets an error, every other byte is right, and a
 * run read_batch answered is not read again through read (a run is ended
 * once, with the backend's answer: BK7 "read_batch: read's result").
 * Exit 0 held, 1 defect.
 */
#include "../attack/att.h"
#include <signal.h>
#include <stdatomic.h>

#define PS 4096u
#define NPAGES 2048u
#define ISBAD(p) ((p) % 40 == 13) /* the bad pages */

static int err_mode = EINVAL;
static bool twice;
static _Atomic unsigned reads_bad, batches, batch_runs, reread, answered;
/* The runs this thread's last read_batch answered with an error, until the
 * thread's next backend call: a read() of one of them right after is the
 * front reading an answered run again (io.c RQ4). */
static __thread uint64_t ans_off[64];
static __thread int ans_cnt[64], nans;

static void fill(const struct iovec *iov, int n, uint64_t off)
{
	for (int i = 0; i < n; i++)
		for (size_t b = 0; b < iov[i].iov_len; b++)
			((unsigned char *)iov[i].iov_base)[b] =
				(unsigned char)((off + b) * 31 / 7);
	(void)0;
}

static uint64_t iovlen(const struct iovec *iov, int n)
{
	uint64_t t = 0;

	for (int i = 0; i < n; i++)
		t += iov[i].iov_len;
	return t;
}

static bool covers_bad(const struct iovec *iov, int n, uint64_t off)
{
	for (uint64_t p = off / PS; p * PS < off + iovlen(iov, n); p++)
		if (ISBAD(p))
			return true;
	return false;
}

static void fill_run(const struct iovec *iov, int n, uint64_t off)
{
	for (int i = 0; i < n; i++) {
		fill(&iov[i], 1, off);
		off += iov[i].iov_len;
	}
}

static ssize_t b_read(void *h, const struct iovec *iov, int n, uint64_t off)
{
	(void)h;
	for (int i = 0; i < nans; i++)
		if (ans_off[i] == off && ans_cnt[i] == n && n > 1)
			atomic_fetch_add(&reread, 1); /* a one-page run again is
						       * also run.c U5a's read of
						       * the caller's own page
						       * alone: not counted */
	nans = 0;
	if (covers_bad(iov, n, off)) {
		atomic_fetch_add(&reads_bad, 1);
		return -err_mode;
	}
	fill_run(iov, n, off);
	return (ssize_t)iovlen(iov, n);
}

static ssize_t b_write(void *h, const struct iovec *iov, int n, uint64_t off)
{
	(void)h, (void)off;
	return (ssize_t)iovlen(iov, n);
}

static int b_size(void *h, uint64_t *s)
{
	(void)h;
	*s = (uint64_t)NPAGES * PS;
	return 0;
}

static void b_read_batch(void *h, struct lpc_backend_run *r, int n, lpc_backend_done *done,
			 void *arg)
{
	(void)h;
	nans = 0;
	atomic_fetch_add(&batches, 1);
	atomic_fetch_add(&batch_runs, (unsigned)n);
	for (int k = 0; k < n; k++) {
		if (twice && n > 1 && k == n - 1)
			continue; /* never completed: UR3's -EIO */
		if (covers_bad(r[k].iov, r[k].iovcnt, r[k].off)) {
			r[k].res = -err_mode;
			atomic_fetch_add(&answered, 1);
			if (nans < 64) {
				ans_off[nans] = r[k].off;
				ans_cnt[nans++] = r[k].iovcnt;
			}
		} else {
			fill_run(r[k].iov, r[k].iovcnt, r[k].off);
			r[k].res = (ssize_t)iovlen(r[k].iov, r[k].iovcnt);
		}
		done(arg, k);
		if (twice && k == 0)
			done(arg, 0);
	}
}

static const struct lpc_backend_ops ops = {
	.version = LPC_BACKEND_V2,
	.read = b_read,
	.write = b_write,
	.size = b_size,
	.read_batch = b_read_batch,
};

static void on_alarm(int s)
{
	(void)s;
	static const char m[] = "DEFECT: hang (a page LOCKED for ever?)\n";
	(void)!write(1, m, sizeof(m) - 1);
	_exit(1);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "einval";
	static unsigned char buf[PS], want[PS];
	struct lpc_cache *c;
	struct lpc_file *f;
	long wrong = 0, other_err = 0, bad_ok = 0;
	ssize_t badres = 0;

	signal(SIGALRM, on_alarm);
	alarm(30);
	if (!strcmp(mode, "eio"))
		err_mode = EIO;
	twice = !strcmp(mode, "twice");
	/* Rounds on a fresh cache until read_batch answered 5 runs with the
	 * error (whether readahead batches runs over a bad page is timing). */
	for (int round = 0; round < 20 && atomic_load(&answered) < 5; round++) {
	c = att_cache(16u << 20, PS, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS, 128, 512);
	if (lpc_file_open_backend(c, "user:x", &ops, NULL, O_RDONLY, &f)) {
		printf("open failed\n");
		return 1;
	}
	for (int pass = 0; pass < 2; pass++)
		for (uint64_t p = 0; p < NPAGES; p++) {
			ssize_t n = lpc_pread(f, buf, PS, p * PS);
			struct iovec v = { want, PS };

			fill(&v, 1, p * PS);
			if (ISBAD(p)) {
				badres = n;
				bad_ok += n >= 0;
				continue;
			}
			if (n != PS) {
				if (twice && n < 0) { /* a run never completed: -EIO is its answer */
					continue;
				}
				other_err++;
				continue;
			}
			wrong += memcmp(buf, want, PS) != 0;
		}
	lpc_file_close(f);
	lpc_cache_destroy(c);
	}
	printf("  mode %s: batches %u (runs %u, %u answered with the error), read() calls over the bad page %u, bad page "
	       "pread %zd, other errors %ld, wrong pages %ld, answered runs read again %u\n",
	       mode, atomic_load(&batches), atomic_load(&batch_runs), atomic_load(&answered), atomic_load(&reads_bad),
	       badres, other_err, wrong, atomic_load(&reread));
	ATT_CHECK(wrong == 0, "%ld pages wrong", wrong);
	ATT_CHECK(other_err == 0, "%ld reads of good pages failed", other_err);
	if (!twice) {
		ATT_CHECK(badres < 0 && bad_ok == 0, "the bad page read: %zd", badres);
	}
	if (!twice && err_mode == EINVAL && atomic_load(&batches)) {
		ATT_CHECK(atomic_load(&reread) == 0,
			  "a run read_batch answered -EINVAL was read again through read() "
			  "(%u times): io.c rrun_end takes any -EINVAL for a direct refusal",
			  atomic_load(&reread));
	}
	att_cleanup();
	printf("%s\n", att_fails ? "DEFECT" : "held");
	return att_fails ? 1 : 0;
}
