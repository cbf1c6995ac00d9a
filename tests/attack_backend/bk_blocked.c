/* SPDX-License-Identifier: MIT */
/*
 * bk_blocked - BK2: an operation "may block as long as it needs ... never
 * [under] a lock of the whole cache: a slow operation delays calls on
 * those pages and that file" (and the shared flusher/readahead threads).
 * One thread's lpc_pread on file A is stuck in A's read operation; meanwhile
 * another thread must be able to use file B of the same cache: open, read
 * (a miss), write, fsync, truncate, close, open and close A's name again,
 * and lpc_stats.  Each step gets 5 s (a watchdog thread reports the step
 * that hangs and exits 1).
 *   cd tests/attack_backend && make out-release/bk_blocked && out-release/bk_blocked
 */
#include <fcntl.h>
#include "bk.h"

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int gate_open, in_read;
static const char *_Atomic step = "start";
static _Atomic int done_steps;

static ssize_t gated_read(void *h, const struct iovec *iov, int n, uint64_t off)
{
	if (off != 0) /* only page 0's read is stuck */
		return mem_read(h, iov, n, off);
	pthread_mutex_lock(&gate_lock);
	in_read = 1;
	pthread_cond_broadcast(&gate_cond);
	while (!gate_open)
		pthread_cond_wait(&gate_cond, &gate_lock);
	pthread_mutex_unlock(&gate_lock);
	return mem_read(h, iov, n, off);
}

static struct lpc_cache *c;
static struct lpc_file *fa;

static void *reader(void *arg)
{
	char buf[4096];

	(void)arg;
	lpc_pread(fa, buf, sizeof(buf), 0);
	return NULL;
}

static void *watchdog(void *arg)
{
	(void)arg;
	for (;;) {
		int before = atomic_load(&done_steps);

		sleep(5);
		if (atomic_load(&done_steps) == before && before >= 0) {
			printf("DEFECT: step '%s' on file B hangs while file A's read operation blocks\n",
			       atomic_load(&step));
			fflush(stdout);
			_exit(1);
		}
	}
	return NULL;
}

#define STEP(s, expr) do { atomic_store(&step, s); int ok_ = (expr); printf("%-40s %s\n", s, ok_ ? "ok" : "FAILED"); if (!ok_) bad = 1; atomic_fetch_add(&done_steps, 1); } while (0)

int main(void)
{
	static struct mem ma, mb, ma2;
	struct lpc_backend_ops oa = mem_ops;
	struct lpc_file *fb, *fa2;
	struct lpc_stats st;
	pthread_t tr, tw;
	char buf[4096];
	int bad = 0;

	c = att_cache();
	oa.read = gated_read;
	mem_init(&ma, 1 << 20);
	mem_init(&mb, 1 << 20);
	mem_init(&ma2, 1 << 20);
	CHECK(lpc_file_open_backend(c, "A", &oa, &ma, O_RDWR, &fa) == 0);
	pthread_create(&tr, NULL, reader, NULL);
	pthread_mutex_lock(&gate_lock);
	while (!in_read)
		pthread_cond_wait(&gate_cond, &gate_lock);
	pthread_mutex_unlock(&gate_lock);
	pthread_create(&tw, NULL, watchdog, NULL);

	STEP("open B", lpc_file_open_backend(c, "B", &mem_ops, &mb, O_RDWR, &fb) == 0);
	STEP("pread B (miss)", lpc_pread(fb, buf, 4096, 65536) == 4096);
	STEP("pwrite B", lpc_pwrite(fb, buf, 4096, 0) == 4096);
	STEP("fsync B", lpc_fsync(fb) == 0);
	STEP("truncate B", lpc_truncate(fb, 8192) == 0);
	STEP("open A again (read-only)", lpc_file_open_backend(c, "A", &oa, &ma2, O_RDONLY, &fa2) == 0);
	STEP("close A's second open", lpc_file_close(fa2) == 0);
	STEP("pread A, page 100 (another page of A)", lpc_pread(fa, buf, 4096, 100 * 4096) == 4096);
	lpc_stats(c, &st);
	STEP("lpc_stats", 1);
	STEP("close B", lpc_file_close(fb) == 0);
	atomic_store(&done_steps, -1000);
	pthread_mutex_lock(&gate_lock);
	gate_open = 1;
	pthread_cond_broadcast(&gate_cond);
	pthread_mutex_unlock(&gate_lock);
	pthread_join(tr, NULL);
	lpc_file_close(fa);
	lpc_cache_destroy(c);
	return bad;
}
