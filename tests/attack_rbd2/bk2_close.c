/* SPDX-License-Identifier: MIT */
/*
 * bk2_close.c - a slow read_batch in flight when the file's last
 * lpc_file_close and lpc_cache_destroy come (held: exit 0).
 *
 * Contract (lpc.h, release): "Called once for every handle lpc took ...
 * after lpc's last operation on it"; BK7: "after [done] the run and its
 * frames are no longer the backend's"; BK3: "The operation must not keep a
 * pointer to the frames after it returns".  So: no read or read_batch
 * after release, release once, and the frames a batch fills are still
 * frames while it fills them (ASan: no use after free).
 *
 * Each round: a file of 1024 pages over bk2.h's backend whose read_batch
 * sleeps 20 ms before it reads and completes (a slow network); a reader
 * thread reads (readahead's batches in flight on lpc's threads) while the main thread closes the file and destroys the cache
 * after a few ms; the reader stops when close begins (it only reads
 * before).  Checks: release once, no operation after it, every byte the
 * reader got equal to the storage.  The reader: lpc_page_get_batch of 8
 * scattered pages at a time (a batch of 8 runs for the readahead threads).
 *
 * Run: make VARIANT=asan out-asan/bk2_close && out-asan/bk2_close
 *      (also VARIANT=release)
 * Seen (asan and release, load ~10): "20 rounds ok", exit 0 (held).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <time.h>

#include "bk2.h"

#define PG 4096
#define NPAGES 1024

static _Atomic int slow_ms = 20;
static _Atomic int stop_reading;
static int failures;

static void slow_read_batch(void *h, struct lpc_backend_run *runs, int nruns,
			    lpc_backend_done *done, void *arg)
{
	usleep((useconds_t)atomic_load(&slow_ms) * 1000);
	bk2_read_batch(h, runs, nruns, done, arg);
}

static struct lpc_backend_ops slow_ops;

struct rd {
	struct lpc_file *f;
	struct mem *m;
	int bad;
	int pages;
};

static void *reader(void *p)
{
	struct rd *r = p;
	unsigned char *buf = malloc(PG);

	for (uint64_t i = 0; i + 64 < NPAGES && !atomic_load(&stop_reading); i += 64) {
		uint64_t idx[8];
		struct lpc_page *pg[8];
		int errs[8];

		for (int k = 0; k < 8; k++)
			idx[k] = i + (uint64_t)k * 8;
		lpc_page_get_batch(r->f, idx, 8, 0, pg, errs);
		for (int k = 0; k < 8; k++) {
			if (errs[k] || memcmp(lpc_page_data(pg[k]), r->m->data + idx[k] * PG, PG)) {
				fprintf(stderr, "bk2_close: page %llu: err %d%s\n",
					(unsigned long long)idx[k], errs[k], errs[k] ? "" : ", wrong bytes");
				r->bad++;
			}
			if (pg[k])
				lpc_page_put(pg[k]);
		}
		r->pages += 8;
	}
	free(buf);
	return NULL;
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char m[] = "bk2_close: hung 120 s\n";
	write(2, m, sizeof(m) - 1);
	_exit(1);
}

int main(void)
{
	signal(SIGALRM, on_alarm);
	alarm(120);
	slow_ops = bk2_ops;
	slow_ops.read_batch = slow_read_batch;
	for (int round = 0; round < 20; round++) {
		struct mem m;
		struct lpc_cache *c;
		struct lpc_file *f;
		struct rd r = { 0 };
		pthread_t th;

		mem_init(&m, (uint64_t)NPAGES * PG);
		mem_fill(&m, bk2_pat);
		atomic_store(&bk2_mode, BK2_GOOD);
		atomic_store(&stop_reading, 0);
		c = att_cache();
		CHECK(lpc_file_open_backend(c, "bk2c", &slow_ops, &m, O_RDONLY, &f) == 0);
		r.f = f;
		r.m = &m;
		pthread_create(&th, NULL, reader, &r);
		usleep(5000 + 3000 * (round % 10));
		atomic_store(&stop_reading, 1);
		pthread_join(th, NULL);
		int rc1 = lpc_file_close(f);
		int rc2 = lpc_cache_destroy(c);
		/* a batch still running past destroy would show here */
		usleep(50000);
		if (rc1 || rc2 || r.bad || atomic_load(&m.released) != 1 ||
		    atomic_load(&m.after_release)) {
			fprintf(stderr,
				"bk2_close round %d: close %d destroy %d, reader bad %d, released %d, "
				"operations after release %d\n",
				round, rc1, rc2, r.bad, atomic_load(&m.released),
				atomic_load(&m.after_release));
			failures++;
		}
		free(m.data);
	}
	printf("bk2_close: 20 rounds %s (read_batch calls %d, of 2+ runs %d)\n",
	       failures ? "FAILED" : "ok", atomic_load(&bk2_batches), atomic_load(&bk2_multi));
	return failures ? 1 : 0;
}
