/* SPDX-License-Identifier: MIT */
/*
 * att_inflight_close - windows in flight when their submitter exits, when
 * the file's last close runs, and when lpc_cache_destroy runs (ASan build:
 * a frame or job freed under the device would show).  Checks that held:
 *   1 A's thread hits the marker and exits while its window is held at the
 *     gate; B's read of a page of that window waits and returns the right
 *     bytes once the gate opens (ra_worker.c Q2)
 *   2 the last lpc_file_close with a window held does not return before the
 *     window's read ended (Q3), and returns 0
 *   3 lpc_cache_destroy with a window of a still-open file held (close_all)
 * Usage: att_inflight_close [sync|uring]    Exit: 0 held, 1 defect.
 */
#include "att.h"
#include "fgate.h"

static const size_t PS = 4096;
static struct lpc_file *fa;
static _Atomic int phase_done;
static int ret;

static void *scan_then_exit(void *arg)
{
	uint64_t buf[512];

	(void)arg;
	lpc_pread(fa, buf, PS, 2 * PS); /* the marker: window [33, 97) queued, held */
	return NULL;
}

static void *read_40(void *arg)
{
	uint64_t buf[512];

	(void)arg;
	ret = lpc_pread(fa, buf, PS, 40 * PS) == (ssize_t)PS && att_bad_word(buf, PS, 40 * PS, 1) < 0;
	atomic_store(&phase_done, 1);
	return NULL;
}

static void *close_fa(void *arg)
{
	(void)arg;
	ret = lpc_file_close(fa);
	atomic_store(&phase_done, 1);
	return NULL;
}

static void *destroy(void *arg)
{
	ret = lpc_cache_destroy(arg);
	atomic_store(&phase_done, 1);
	return NULL;
}

static int prime(struct lpc_cache *c, const char *pa)
{
	uint64_t buf[512];
	pthread_t th;

	if (lpc_file_open(c, pa, O_RDONLY, 0, &fa))
		return 1;
	lpc_pread(fa, buf, PS, 0);
	lpc_pread(fa, buf, PS, PS);
	fg_close(fg_file_id(pa));
	fg.min_index = 33;
	pthread_create(&th, NULL, scan_then_exit, NULL);
	pthread_join(th, NULL); /* the submitter is gone */
	return fg_wait_entered(1, 5000) ? 0 : 1;
}

static int wait_blocked_then_open(void *(*fn)(void *), void *arg, const char *what)
{
	pthread_t th;
	int early;

	atomic_store(&phase_done, 0);
	pthread_create(&th, NULL, fn, arg);
	usleep(300000);
	early = atomic_load(&phase_done);
	fg_open();
	pthread_join(th, NULL);
	printf("  %s: %s while the window was held; then %d\n", what,
	       early ? "RETURNED" : "waited", ret);
	return early;
}

int main(int argc, char **argv)
{
	int backend = argc > 1 && !strcmp(argv[1], "uring") ? LPC_IO_URING : LPC_IO_SYNC;
	char pa[400];
	int bad = 0;
	struct lpc_cache *c;

	att_make_file("ia", 1024 * PS, 1, pa, sizeof(pa));
	/* 1 */
	c = att_cache(4096 * PS, PS, backend, LPC_LOOKUP_LOCKLESS, 0, 0);
	fg_install(c);
	if (prime(c, pa))
		return 1;
	bad |= wait_blocked_then_open(read_40, NULL, "1 B reads page 40 after A exited");
	bad |= !ret;
	/* 2 */
	fg_close(fg_file_id(pa));
	{
		uint64_t buf[512];

		/* A second window: pages 97.. (the marker at 33). */
		lpc_pread(fa, buf, PS, 33 * PS);
	}
	if (fg_wait_entered(1, 5000))
		bad |= wait_blocked_then_open(close_fa, NULL, "2 last close");
	else
		printf("  2: no second window\n");
	lpc_cache_destroy(c);
	/* 3 */
	c = att_cache(4096 * PS, PS, backend, LPC_LOOKUP_LOCKLESS, 0, 0);
	fg_install(c);
	if (prime(c, pa))
		return 1;
	bad |= wait_blocked_then_open(destroy, c, "3 lpc_cache_destroy");
	att_cleanup();
	printf(bad ? "DEFECT\n" : "held\n");
	return bad;
}
