/* SPDX-License-Identifier: MIT */
/*
 * att_idle.c - the linger (RL1-RL4) on a quiet cache: no busy loop, no
 * wake-up every 20 ms, and a cache destroyed while the thread lingers.
 *
 * reclaim/reclaimer.c RL2: "pending 0: it sleeps" (until a kick); lpc.h
 * hot paths: no syscall on a hit or put.  Measured here, per phase, the
 * reclaimer thread's (comm "lpc-reclaim") voluntary context switches
 * (/proc/self/task/T/status) and CPU ticks (/proc/self/task/T/stat):
 *   A after one small invalidate (drained), 2 s idle: expect < 10 switches
 *   B 2000 tiny invalidates in a row (one page each), then 2 s idle:
 *     frames_free whole, < 10 switches in the idle part
 *   C 200 k hits and puts: the reclaimer not woken (< 10 switches)
 *   D a page invalidated then the cache destroyed at once, 50 times
 *     (destroy while lingering): no hang (alarm 20 s), frames counted.
 * Exit 1 on any phase over its bound.
 *
 * Run: cmake --build ../../build-release --target lpc_static && make VARIANT=release && out-release/att_idle
 */
#include <dirent.h>

#include "../attack_miss/mh.h"

#define PS 4096u
#define NF 1024u

/* The reclaimer thread's voluntary switches + CPU ticks (utime+stime). */
static int rec_stats(uint64_t *vcsw, uint64_t *ticks)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int found = 0;

	*vcsw = *ticks = 0;
	while (d && (e = readdir(d))) {
		char p[512], buf[4096];
		FILE *fp;

		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/proc/self/task/%s/comm", e->d_name);
		if (!(fp = fopen(p, "r")))
			continue;
		buf[0] = 0;
		if (!fgets(buf, sizeof(buf), fp))
			buf[0] = 0;
		fclose(fp);
		if (strncmp(buf, "lpc-reclaim", 11))
			continue;
		found = 1;
		snprintf(p, sizeof(p), "/proc/self/task/%s/status", e->d_name);
		if ((fp = fopen(p, "r"))) {
			while (fgets(buf, sizeof(buf), fp))
				if (!strncmp(buf, "voluntary_ctxt_switches:", 24))
					*vcsw += strtoull(buf + 24, NULL, 10);
			fclose(fp);
		}
		snprintf(p, sizeof(p), "/proc/self/task/%s/stat", e->d_name);
		if ((fp = fopen(p, "r"))) {
			if (fgets(buf, sizeof(buf), fp)) {
				char *q = strrchr(buf, ')');
				unsigned long ut = 0, st = 0;

				if (q && sscanf(q + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
						&ut, &st) == 2)
					*ticks += ut + st;
			}
			fclose(fp);
		}
	}
	if (d)
		closedir(d);
	return found;
}

int main(void)
{
	struct lpc_cache *c = att_cache(NF * PS, PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS, LPC_READAHEAD_OFF, 0);
	struct lpc_file *f;
	struct lpc_page *p;
	char path[512];
	uint64_t v0, t0, v1, t1, nf;
	int fails = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	alarm(60);
	mh_hole_file("f", 4096ull * PS, path, sizeof(path));
	if (lpc_file_open(c, path, O_RDONLY, 0, &f))
		return 1;
	/* A */
	for (unsigned i = 0; i < 10; i++) {
		if (lpc_page_get(f, i, 0, &p))
			return 1;
		lpc_page_put(p);
	}
	(void)lpc_invalidate(f, 0, 0);
	nf = mh_wait_all_free(c, 2.0);
	usleep(100000);
	rec_stats(&v0, &t0);
	sleep(2);
	if (!rec_stats(&v1, &t1))
		printf("  (no lpc-reclaim thread found)\n");
	printf("  A: small invalidate drained (frames_free %" PRIu64 "/%u); 2 s idle: %" PRIu64
	       " switches, %" PRIu64 " ticks\n", nf, NF, v1 - v0, t1 - t0);
	if (nf != NF || v1 - v0 >= 10 || t1 - t0 > 5) {
		printf("  FAIL: A\n");
		fails++;
	}
	/* B */
	{
		double s = mh_now();

		for (unsigned i = 0; i < 2000; i++) {
			if (lpc_page_get(f, i % 512, 0, &p))
				return 1;
			lpc_page_put(p);
			(void)lpc_invalidate(f, (uint64_t)(i % 512) * PS, PS);
		}
		nf = mh_wait_all_free(c, 2.0);
		usleep(100000);
		rec_stats(&v0, &t0);
		sleep(2);
		rec_stats(&v1, &t1);
		printf("  B: 2000 one-page invalidates in %.3f s; frames_free %" PRIu64
		       "/%u; 2 s idle after: %" PRIu64 " switches, %" PRIu64 " ticks\n",
		       mh_now() - s - 2.1, nf, NF, v1 - v0, t1 - t0);
		if (nf != NF || v1 - v0 >= 10 || t1 - t0 > 5) {
			printf("  FAIL: B\n");
			fails++;
		}
	}
	/* C */
	if (lpc_page_get(f, 7, 0, &p))
		return 1;
	lpc_page_put(p);
	usleep(100000);
	rec_stats(&v0, &t0);
	for (unsigned i = 0; i < 200000; i++) {
		if (lpc_page_get(f, 7, 0, &p))
			return 1;
		lpc_page_put(p);
	}
	rec_stats(&v1, &t1);
	printf("  C: 200000 hits and puts: reclaimer %" PRIu64 " switches\n", v1 - v0);
	if (v1 - v0 >= 10) {
		printf("  FAIL: C\n");
		fails++;
	}
	lpc_file_close(f);
	lpc_cache_destroy(c);
	/* D */
	for (unsigned k = 0; k < 50; k++) {
		c = att_cache(NF * PS, PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS, LPC_READAHEAD_OFF, 0);
		if (lpc_file_open(c, path, O_RDONLY, 0, &f))
			return 1;
		for (unsigned i = 0; i < 5; i++) {
			if (lpc_page_get(f, i, 0, &p))
				return 1;
			lpc_page_put(p);
		}
		(void)lpc_invalidate(f, 0, 0);
		if (k & 1)
			usleep(5000); /* mid-linger */
		lpc_file_close(f);
		if (lpc_cache_destroy(c)) {
			printf("  FAIL: D destroy %u\n", k);
			fails++;
		}
	}
	printf("  D: 50 caches destroyed right after a small invalidate\n");
	att_cleanup();
	printf("%s\n", fails ? "DEFECT: see FAIL lines" : "held");
	return fails ? 1 : 0;
}
