/* SPDX-License-Identifier: MIT */
/*
 * stress_wpin.c - write pins racing everything else (guarantees I.4-I.7 of
 * lpc.h), on every write backend and both lookup modes; the debug variants
 * add yield injection at every step (stress.stress_wpin.yield):
 *
 *  - pinners: each owns a block of the low zone and write-pins random runs
 *    of 1-4 whole pages there, stamping every 8-byte word with its position
 *    and a version that grows per pin (and keeping a reference copy); all
 *    of them also write-pin the shared hot pages 0-3, so write pins of one
 *    page meet (I.4: exclusive);
 *  - readers: lpc_pread (optimistic, then the referenced path) of random
 *    pages: every word is 0 or the stamp of its position, and every word of
 *    a low-zone page carries one version (no read returns a mix of two pins'
 *    bytes, I.5);
 *  - lpc_fsync in a loop, the flusher every 10 ms (I.6), eviction (a cache
 *    smaller than the file), lpc_invalidate in a loop (I.7);
 *  - a truncate thread: write-pins the high zone, shrinks the file to a
 *    random cut inside it, grows it back and checks that the bytes past
 *    the cut read zeros and those below it are stamps (I.7).
 * At the end: lpc_fsync, and each pinner's block read through a fresh kernel
 * descriptor equals its reference.
 *
 * Usage: stress_wpin [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 * LPC_STRESS_SECONDS: seconds per backend and mode (default 1).
 */
#include <pthread.h>
#include <sched.h>
#include <sys/uio.h>

#include "../common/write_test.h"

#define PS 4096u
#define HOT 4u    /* shared pages, 0..HOT-1 */
#define NP 3      /* pinners */
#define BLOCK 20u /* pages per pinner, after the hot pages */
#define LOW (HOT + NP * BLOCK)
#define HIGH 16u  /* the truncate thread's zone, after LOW */
#define NR 2

static struct lpc_file *g_f;
static _Atomic bool g_stop;
static _Atomic uint64_t g_pins, g_reads, g_cuts;

static uint64_t stamp(uint64_t pos, uint64_t ver)
{
	return (ver << 40) | (pos >> 3) | (1ull << 63);
}

static bool word_ok(uint64_t pos, uint64_t w)
{
	return w == 0 || ((w & ((1ull << 40) - 1)) == (pos >> 3) && (w >> 63));
}

/* Write-pins [first, first + n) pages and stamps them with ver (and ref).
 * Return: lpc_pin's result. */
static int pin_stamp(uint64_t first, unsigned n, uint64_t ver, unsigned char *ref)
{
	struct lpc_page *pages[8];
	struct iovec iov[8];
	uint64_t off = first * PS, pos = off;
	int got, k;

	got = lpc_pin(g_f, off, (size_t)n * PS, LPC_PIN_WRITE, pages, 8);
	if (got < 0)
		return got;
	k = lpc_pin_iov(pages, (unsigned)got, off, (size_t)n * PS, iov);
	CHECK(k > 0, "lpc_pin_iov = %d", k);
	for (int i = 0; i < k; i++) {
		uint64_t *w = iov[i].iov_base;

		for (size_t j = 0; j < iov[i].iov_len / 8; j++, pos += 8) {
			w[j] = stamp(pos, ver);
			if (ref)
				memcpy(ref + pos, &w[j], 8);
			if (i == k / 2 && j == iov[i].iov_len / 16)
				sched_yield(); /* readers come in mid-write */
		}
	}
	lpc_unpin(pages, (unsigned)got, LPC_PIN_WRITE);
	atomic_fetch_add(&g_pins, 1);
	return got;
}

struct pinner {
	int id;
	uint64_t seed;
	unsigned char *ref; /* the whole low zone; this pinner's block only */
};

static void *pinner_main(void *arg)
{
	struct pinner *p = arg;
	uint64_t rng = p->seed, ver = 1;
	uint64_t base = HOT + (uint64_t)p->id * BLOCK;

	while (!atomic_load(&g_stop)) {
		uint64_t r = tst_rnd(&rng);
		int rc;

		if (r % 5 == 0) {
			rc = pin_stamp(r % HOT, 1 + (unsigned)((r >> 8) % (HOT - r % HOT)), ver++,
				       NULL);
		} else {
			unsigned n = 1 + (unsigned)((r >> 8) % 4);
			uint64_t first = base + (r >> 16) % (BLOCK - n + 1);

			rc = pin_stamp(first, n, ver++, p->ref);
		}
		if (rc == -ENOMEM || rc == -EAGAIN)
			continue;
		if (!CHECK(rc > 0, "pinner %d: lpc_pin = %d", p->id, rc))
			break;
	}
	return NULL;
}

static void *reader_main(void *arg)
{
	uint64_t rng = (uint64_t)(uintptr_t)arg * 7919 + tst_seed;
	static _Thread_local uint64_t buf[PS / 8];

	while (!atomic_load(&g_stop)) {
		uint64_t page = tst_rnd(&rng) % (LOW + HIGH);
		ssize_t got = lpc_pread(g_f, buf, PS, page * PS);
		uint64_t ver = 0;

		if (got < 0) {
			if (got == -ENOMEM || got == -EAGAIN)
				continue;
			CHECK(0, "pread page %llu = %zd", (unsigned long long)page, got);
			break;
		}
		for (size_t j = 0; j < (size_t)got / 8; j++) {
			uint64_t pos = page * PS + j * 8;

			if (!CHECK(word_ok(pos, buf[j]), "page %llu word %zu: %llx",
				   (unsigned long long)page, j, (unsigned long long)buf[j]))
				return NULL;
			if (page < LOW) {
				if (j == 0)
					ver = buf[0] >> 40;
				else if (!CHECK_EQ(buf[j] >> 40, ver,
						   "rule I.5: page %llu mixes two write pins' bytes "
						   "(word %zu)",
						   (unsigned long long)page, j))
					return NULL;
			}
		}
		atomic_fetch_add(&g_reads, 1);
	}
	return NULL;
}

static void *fsync_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&g_stop)) {
		int rc = lpc_fsync(g_f);

		if (!CHECK_EQ(rc, 0, "lpc_fsync"))
			break;
		lpc_invalidate(g_f, 0, 0);
		tst_sleep_us(2000);
	}
	return NULL;
}

static void *truncate_main(void *arg)
{
	uint64_t rng = (uint64_t)(uintptr_t)arg + tst_seed, ver = 1;
	uint64_t full = (LOW + HIGH) * PS;
	static uint64_t buf[HIGH * PS / 8];

	while (!atomic_load(&g_stop)) {
		uint64_t cut = (LOW * PS + tst_rnd(&rng) % (HIGH * PS)) & ~(uint64_t)7;
		ssize_t got;
		int rc;

		rc = pin_stamp(LOW, HIGH / 2, ver++, NULL);
		if (rc < 0 && rc != -ENOMEM && rc != -EAGAIN) {
			CHECK(0, "truncate thread: lpc_pin = %d", rc);
			break;
		}
		CHECK_EQ(lpc_truncate(g_f, cut), 0, "shrink");
		got = lpc_pread(g_f, buf, HIGH * PS, LOW * PS);
		if (got >= 0)
			CHECK_EQ((uint64_t)got, cut - LOW * PS, "read stops at the cut");
		CHECK_EQ(lpc_truncate(g_f, full), 0, "grow");
		got = lpc_pread(g_f, buf, HIGH * PS, LOW * PS);
		if (got < 0)
			continue;
		CHECK_EQ(got, (ssize_t)(HIGH * PS), "read after the regrowth");
		for (uint64_t pos = LOW * PS; pos < LOW * PS + (uint64_t)got; pos += 8) {
			uint64_t w = buf[(pos - LOW * PS) / 8];

			if (!CHECK(pos < cut ? word_ok(pos, w) : w == 0,
				   "after a cut at %llu, word at %llu: %llx", (unsigned long long)cut,
				   (unsigned long long)pos, (unsigned long long)w))
				return NULL;
		}
		atomic_fetch_add(&g_cuts, 1);
	}
	return NULL;
}

static void run_case(int backend, int mode, double secs)
{
	struct lpc_config cfg;
	struct lpc_cache *c = NULL;
	struct pinner p[NP];
	unsigned char *ref = calloc(1, LOW * PS);
	pthread_t th[NP + NR + 2];
	char path[600];
	unsigned nt = 0;
	int rc;

	REQUIRE(ref);
	lpc_config_init(&cfg);
	cfg.cache_bytes = (LOW + HIGH) * PS * 3 / 4; /* smaller than the file */
	cfg.page_size = PS;
	cfg.io_backend = backend;
	cfg.lookup_mode = mode;
	cfg.dirty_expire_ms = 10;
	rc = lpc_cache_create(&cfg, &c);
	REQUIRE(rc == 0, "cache: %d", rc);
	REQUIRE(tst_make_sparse("wpin", (LOW + HIGH) * PS, path, sizeof(path)) == 0, "file");
	REQUIRE(lpc_file_open(c, path, O_RDWR, 0, &g_f) == 0, "open");
	atomic_store(&g_stop, false);
	for (int i = 0; i < NP; i++) {
		p[i] = (struct pinner){ .id = i, .seed = tst_seed * 31 + (uint64_t)i, .ref = ref };
		REQUIRE(pthread_create(&th[nt++], NULL, pinner_main, &p[i]) == 0);
	}
	for (int i = 0; i < NR; i++)
		REQUIRE(pthread_create(&th[nt++], NULL, reader_main, (void *)(uintptr_t)i) == 0);
	REQUIRE(pthread_create(&th[nt++], NULL, fsync_main, NULL) == 0);
	REQUIRE(pthread_create(&th[nt++], NULL, truncate_main, NULL) == 0);
	for (uint64_t t0 = tst_now_ns(); tst_now_ns() - t0 < (uint64_t)(secs * 1e9) &&
					 atomic_load(&tst_failed) < 5;)
		tst_sleep_us(10000);
	atomic_store(&g_stop, true);
	for (unsigned i = 0; i < nt; i++)
		pthread_join(th[i], NULL);
	CHECK_EQ(lpc_fsync(g_f), 0, "final fsync");
	{
		unsigned char *k = calloc(1, (LOW + HIGH) * PS);
		int64_t n = tst_kernel_read(path, k, (LOW + HIGH) * PS);

		REQUIRE(k);
		CHECK_EQ(n, (int64_t)((LOW + HIGH) * PS), "kernel size");
		CHECK(tst_first_diff(k + HOT * PS, ref + HOT * PS, NP * BLOCK * PS) < 0,
		      "the pinners' blocks on disk differ at %lld",
		      (long long)tst_first_diff(k + HOT * PS, ref + HOT * PS, NP * BLOCK * PS));
		free(k);
	}
	printf("  %s %s: pins %llu reads %llu cuts %llu\n", tst_backend_name(backend),
	       mode ? "LOCKED" : "lockless", (unsigned long long)atomic_load(&g_pins),
	       (unsigned long long)atomic_load(&g_reads), (unsigned long long)atomic_load(&g_cuts));
	CHECK(atomic_load(&g_pins) > 0 && atomic_load(&g_reads) > 0, "work done");
	CHECK_EQ(lpc_file_close(g_f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
	atomic_store(&g_pins, 0);
	atomic_store(&g_reads, 0);
	atomic_store(&g_cuts, 0);
	free(ref);
}

int main(int argc, char **argv)
{
	double secs;

	tst_init(argc, argv, 0);
	secs = tst_stress_seconds(1);
	signal(SIGALRM, tst_watchdog);
	alarm((unsigned)(4 * secs) + 120);
	tst_require_tmpdir();
	for (size_t b = 0; b < TST_NWRITE_BACKENDS; b++)
		for (int mode = LPC_LOOKUP_LOCKLESS; mode <= LPC_LOOKUP_LOCKED; mode++)
			run_case(tst_write_backends[b], mode, secs);
	return tst_finish();
}
