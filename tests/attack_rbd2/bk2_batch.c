/* SPDX-License-Identifier: MIT */
/*
 * bk2_batch.c - read_batch completions that break BK7, and lpc's answer
 * (held: exit 0 when every case holds).
 *
 * Contract (lpc.h BK7): "as each run completes, in any order, sets that
 * run's res and calls done(arg, k) with the run's position k, exactly once
 * per run, on the calling thread ... One run's error is no other run's.  A
 * run the operation returned without completing is taken as failed (-EIO;
 * ... as for a second done of a run, a k out of the batch or a done from
 * another thread, which lpc ignores)"; BK4: "a value below -4095 is no
 * errno: lpc takes it as -EIO", more than asked is -EIO; lpc_page_get_batch:
 * "-EIO when that page's own read failed: a failed run is read again page
 * by page, so only the bad page fails".
 *
 * For each misbehaviour (bk2.h's modes) a fresh cache and file of 256
 * pages: lpc_page_get_batch of 8 scattered pages (8 runs in one batch),
 * every page compared with the storage; the failing run's page (BK2_FAIL0,
 * read failing there too) must be the only -EIO, and readable once the
 * storage heals (nothing cached); then a sequential lpc_pread of the whole
 * file (readahead's batches, same misbehaviour), every byte compared; a
 * 60 s alarm catches a page left locked.
 *
 * Run (release build: LPC_DEBUG builds stop on rule BACKEND-DONE by design):
 *   make VARIANT=release && out-release/bk2_batch [MODE]
 * Seen (release, load ~10): every mode "ok", exit 0 (held).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>

#include "bk2.h"

#define PG 4096
#define NPAGES 256

static const char *names[] = { "good", "reverse", "twice", "never0", "thread0", "fail0",
			       "short0", "neg0", "over0", "badk", "neverall" };
static int failures;

static void on_alarm(int sig)
{
	(void)sig;
	static const char m[] = "bk2_batch: hung 60 s (a page left locked?)\n";
	write(2, m, sizeof(m) - 1);
	_exit(1);
}

#define FAIL(...) do { fprintf(stderr, "bk2_batch [%s]: ", names[mode]); fprintf(stderr, __VA_ARGS__); \
		       fputc('\n', stderr); failures++; bad++; } while (0)


/* One try; returns the read_batch calls of 2+ runs the get_batch made. */
static int try_mode(int mode)
{
	struct mem m;
	struct lpc_cache *c;
	struct lpc_file *f;
	uint64_t idx[8];
	struct lpc_page *pg[8];
	int errs[8], bad = 0, r;
	unsigned char *buf = malloc(PG);

	mem_init(&m, (uint64_t)NPAGES * PG);
	mem_fill(&m, bk2_pat);
	atomic_store(&bk2_mode, mode);
	atomic_store(&bk2_bad_off, UINT64_MAX);
	c = att_cache();
	CHECK(lpc_file_open_backend(c, "bk2", &bk2_ops, &m, O_RDWR, &f) == 0);
	for (int i = 0; i < 8; i++)
		idx[i] = (uint64_t)i * 17 + 3;
	if (mode == BK2_FAIL0) /* the whole first run, known after the fact: fail all 8 pages' first */
		atomic_store(&bk2_bad_off, idx[0] * PG);
	int b0 = atomic_load(&bk2_batches), m0 = atomic_load(&bk2_multi);
	r = lpc_page_get_batch(f, idx, 8, 0, pg, errs);
	int b1 = atomic_load(&bk2_batches), m1 = atomic_load(&bk2_multi);
	for (int i = 0; i < 8; i++) {
		bool want_fail = mode == BK2_FAIL0 && i == 0;

		if (want_fail) {
			if (errs[i] != -EIO)
				FAIL("page %llu: err %d, expected -EIO (its read fails)",
				     (unsigned long long)idx[i], errs[i]);
		} else if (errs[i] != 0) {
			if (!(mode == BK2_SHORT0 && errs[i] == -EIO))
				FAIL("page %llu: err %d, expected 0 (the redo reads it)",
				     (unsigned long long)idx[i], errs[i]);
		}
		if (pg[i]) {
			const unsigned char *d = lpc_page_data(pg[i]);
			for (int b = 0; b < PG; b++)
				if (d[b] != bk2_pat(idx[i] * PG + b)) {
					FAIL("page %llu byte %d: %#x, storage has %#x",
					     (unsigned long long)idx[i], b, d[b],
					     bk2_pat(idx[i] * PG + b));
					break;
				}
			lpc_page_put(pg[i]);
		}
	}
	(void)r;
	atomic_store(&bk2_bad_off, UINT64_MAX);
	/* Everything readable now (a failed page was not cached). */
	for (int i = 0; i < 8; i++) {
		struct lpc_page *p;

		r = lpc_page_get(f, idx[i], 0, &p);
		if (r) {
			FAIL("page %llu after the batch: lpc_page_get %d", (unsigned long long)idx[i], r);
			continue;
		}
		if (memcmp(lpc_page_data(p), m.data + idx[i] * PG, PG))
			FAIL("page %llu after the batch: wrong bytes", (unsigned long long)idx[i]);
		lpc_page_put(p);
	}
	/* Readahead's batches under the same misbehaviour. */
	for (uint64_t p = 0; p < NPAGES; p++) {
		ssize_t n = lpc_pread(f, buf, PG, p * PG);

		if (n != PG) {
			FAIL("lpc_pread page %llu: %zd", (unsigned long long)p, n);
			continue;
		}
		if (memcmp(buf, m.data + p * PG, PG)) {
			FAIL("lpc_pread page %llu: wrong bytes", (unsigned long long)p);
			break;
		}
	}
	CHECK(lpc_file_close(f) == 0);
	CHECK(lpc_cache_destroy(c) == 0);
	if (atomic_load(&m.released) != 1)
		FAIL("release called %d times", atomic_load(&m.released));
	printf("bk2_batch [%s]: %s (read_batch calls: %d by the get_batch, %d of 2+ runs, %d in all)\n", names[mode],
	       bad ? "FAILED" : "ok", b1 - b0, m1 - m0, atomic_load(&bk2_batches) - b0);
	free(m.data);
	free(buf);
	return m1 - m0;
}

/* The batch's reads run on readahead threads that race the getter's own
 * reads: tried until a read_batch of 2+ runs came from the get_batch. */
static void run_mode(int mode)
{
	for (int t = 0; t < 100; t++)
		if (try_mode(mode) > 0)
			return;
	fprintf(stderr, "bk2_batch [%s]: no read_batch of 2+ runs in 100 tries\n", names[mode]);
	exit(2);
}

int main(int argc, char **argv)
{
	signal(SIGALRM, on_alarm);
	alarm(60);
	setvbuf(stdout, NULL, _IONBF, 0);
	for (int mode = 0; mode <= BK2_NEVERALL; mode++)
		if (argc < 2 || !strcmp(argv[1], names[mode]))
			run_mode(mode);
	if (!atomic_load(&bk2_batches)) {
		fprintf(stderr, "bk2_batch: read_batch never called: nothing probed\n");
		return 2;
	}
	return failures ? 1 : 0;
}
