/* SPDX-License-Identifier: MIT */
/*
 * att_newcomer - what a new user tries first: a cold scan of a big file
 * (128 KiB calls) with 1 and 4 threads (4: each its own quarter), 16 files
 * scanned at once by 4 threads, and a scan of a fast file beside a slow one
 * (its reads held at the gate throughout; the fast scan gets 10 s).  Every byte checked;
 * prints MB/s against the kernel's buffered pread of the same cold file
 * (posix_fadvise DONTNEED before each pass; one run, not a benchmark), and
 * the pages per read I/O.
 * Usage: att_newcomer [sync|uring] [MiB]    Exit: 1 on a wrong byte, a read
 * error, fewer than 8 pages per read on a cold scan, or the fast file's scan
 * waiting for the slow file.
 */
#include <time.h>
#include "att.h"
#include "g2.h"

#define CALL (128 << 10)
static struct lpc_file *files[16];
static uint64_t fsize;
static _Atomic int bad;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

struct part { struct lpc_file *f; uint64_t off, len, tag; };
static void *scan(void *arg)
{
	struct part *p = arg;
	char *buf = malloc(CALL);

	for (uint64_t o = p->off; o < p->off + p->len; o += CALL) {
		ssize_t r = lpc_pread(p->f, buf, CALL, o);

		if (r != CALL || att_bad_word(buf, CALL, o, p->tag) >= 0) {
			printf("  wrong: tag %" PRIu64 " off %" PRIu64 " r %zd\n", p->tag, o, r);
			bad++;
			break;
		}
	}
	free(buf);
	return NULL;
}

static void drop(const char *path)
{
	int fd = open(path, O_RDONLY);

	fdatasync(fd);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
}

static double kernel(const char *path)
{
	char *buf = malloc(CALL);
	int fd;
	double t0;

	drop(path);
	fd = open(path, O_RDONLY);
	t0 = now();
	for (uint64_t o = 0; o < fsize; o += CALL)
		if (pread(fd, buf, CALL, (off_t)o) != CALL)
			break;
	t0 = now() - t0;
	close(fd);
	free(buf);
	return fsize / t0 / 1e6;
}

static _Atomic int scan_done;
static void *scan_flag(void *arg)
{
	scan(arg);
	scan_done = 1;
	return NULL;
}

static struct lpc_file *slowf;
static _Atomic int stop_slow;
static void *slow_scan(void *arg)
{
	char *buf = malloc(CALL);

	(void)arg;
	for (uint64_t o = 0; o < fsize && !stop_slow; o += CALL)
		lpc_pread(slowf, buf, CALL, o);
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	int backend = argc > 1 && !strcmp(argv[1], "sync") ? LPC_IO_SYNC : LPC_IO_URING;
	unsigned mib = argc > 2 ? (unsigned)atoi(argv[2]) : 128;
	char path[16][300], mpath[16][300], name[16];
	struct lpc_stats s;
	pthread_t th[16];
	struct part pt[16];
	double t0;

	fsize = (uint64_t)mib << 20;
	att_make_file("big", fsize, 1, path[0], sizeof(path[0]));
	for (int nthr = 1; nthr <= 4; nthr += 3) {
		struct lpc_cache *c = att_cache(fsize / 4, 4096, backend, LPC_LOOKUP_LOCKLESS, 0, 0);
		double k = kernel(path[0]);

		drop(path[0]);
		lpc_file_open(c, path[0], O_RDONLY, 0, &files[0]);
		t0 = now();
		for (int i = 0; i < nthr; i++) {
			pt[i] = (struct part){ files[0], fsize / nthr * i, fsize / nthr, 1 };
			pthread_create(&th[i], NULL, scan, &pt[i]);
		}
		for (int i = 0; i < nthr; i++)
			pthread_join(th[i], NULL);
		t0 = now() - t0;
		lpc_stats(c, &s);
		printf("  cold scan %u MiB, cache 1/4, %d thread(s): lpc %.0f MB/s, kernel pread %.0f MB/s;"
		       " reads %" PRIu64 " pages/read %.1f ra_windows %" PRIu64 " ra_async %" PRIu64
		       " read_errors %" PRIu64 "\n",
		       mib, nthr, fsize / t0 / 1e6, k, s.reads, (double)s.read_pages / (s.reads ? s.reads : 1),
		       s.ra_windows, s.ra_async, s.read_errors);
		ATT_CHECK(s.read_pages >= 8 * s.reads, "fewer than 8 pages per read on a cold scan");
		ATT_CHECK(!s.read_errors, "read errors");
		lpc_file_close(files[0]);
		lpc_cache_destroy(c);
	}
	/* 16 files, 4 threads, each thread 4 files in turn. */
	{
		uint64_t each = fsize / 16;
		struct lpc_cache *c = att_cache(fsize / 4, 4096, backend, LPC_LOOKUP_LOCKLESS, 0, 0);

		for (int i = 0; i < 16; i++) {
			snprintf(name, sizeof(name), "m%d", i);
			att_make_file(name, each, 10 + i, mpath[i], sizeof(mpath[i]));
			drop(mpath[i]);
			lpc_file_open(c, mpath[i], O_RDONLY, 0, &files[i]);
		}
		t0 = now();
		for (int i = 0; i < 16; i++) {
			pt[i] = (struct part){ files[i], 0, each, 10 + i };
			pthread_create(&th[i], NULL, scan, &pt[i]);
		}
		for (int i = 0; i < 16; i++)
			pthread_join(th[i], NULL);
		t0 = now() - t0;
		lpc_stats(c, &s);
		printf("  16 files of %" PRIu64 " MiB scanned at once: lpc %.0f MB/s; pages/read %.1f"
		       " ra_windows %" PRIu64 " ra_async %" PRIu64 "\n", each >> 20, fsize / t0 / 1e6,
		       (double)s.read_pages / (s.reads ? s.reads : 1), s.ra_windows, s.ra_async);
		ATT_CHECK(!s.read_errors, "read errors");
		for (int i = 0; i < 16; i++)
			lpc_file_close(files[i]);
		lpc_cache_destroy(c);
	}
	/* A slow file beside a fast one. */
	{
		struct lpc_cache *c = att_cache(fsize / 4, 4096, backend, LPC_LOOKUP_LOCKLESS, 0, 0);
		char ps[300];
		pthread_t sl;
		double wait;

		att_make_file("slow", fsize / 4, 2, ps, sizeof(ps));
		g2.nids = 0;
		g2_install(c);
		lpc_file_open(c, ps, O_RDONLY, 0, &slowf);
		lpc_file_open(c, path[0], O_RDONLY, 0, &files[0]);
		drop(path[0]);
		g2_close(g2_id(ps));
		pthread_create(&sl, NULL, slow_scan, NULL);
		usleep(200000);
		pt[0] = (struct part){ files[0], 0, fsize, 1 };
		t0 = now();
		pthread_create(&th[0], NULL, scan_flag, &pt[0]);
		for (int i = 0; i < 1000 && !scan_done; i++)
			usleep(10000);
		wait = now() - t0;
		stop_slow = 1;
		g2_open();
		pthread_join(th[0], NULL);
		pthread_join(sl, NULL);
		printf("  fast file scanned beside a held one: %.2f s (%.0f MB/s)\n", wait, fsize / wait / 1e6);
		ATT_CHECK(scan_done, "the fast file's scan waited for the slow file");
		lpc_file_close(slowf);
		lpc_file_close(files[0]);
		lpc_cache_destroy(c);
	}
	att_cleanup();
	ATT_CHECK(!bad, "wrong bytes");
	printf(att_fails ? "DEFECT (%s)\n" : "held (%s)\n", att_backend_name(backend));
	return att_fails ? 1 : 0;
}
