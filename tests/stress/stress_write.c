/* SPDX-License-Identifier: MIT */
/*
 * stress_write.c - writes racing everything else, on every write backend:
 *
 *  1 mixed: writers (each owning every nw-th page of the low zone, with a
 *    reference copy), readers checking that every 8-byte word they read is
 *    0 or the stamp of its own position (no torn page, nothing misplaced:
 *    H.1), an fsync thread, the flusher (age 10 ms), and a truncate thread
 *    that writes the high zone, shrinks it to a random size, grows it back
 *    and checks that everything past the cut reads zeros (no stale page
 *    past the end, H.4), while readers miss and re-read those pages and
 *    writeback writes them.  At the end: fsync, and the file through a
 *    fresh descriptor equals the writers' references.
 *  2 a writer re-dirtying the same pages in a loop does not make lpc_fsync
 *    run forever (H.2): every fsync ends within 5 s, and several end.
 *  3 8 writers: the dirty pages stay under the hard limit plus what the
 *    writers hold in flight (H.5), and throttled writers are counted.
 *
 * Usage: stress_write [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 * LPC_STRESS_SECONDS: seconds per case (default 2).
 */
#include <pthread.h>

#include "../common/write_test.h"

#define PS 4096u
#define LOW 64u   /* pages of the writers' zone */
#define HIGH 32u  /* pages of the truncate thread's zone, after LOW */
#define NW 2
#define NR 2

static struct lpc_file *g_f;
static _Atomic bool g_stop;
static double g_secs;

static uint64_t stamp(uint64_t pos, uint64_t gen)
{
	return (gen << 40) | (pos >> 3) | (1ull << 63);
}

static bool word_ok(uint64_t pos, uint64_t w)
{
	return w == 0 || ((w & ((1ull << 40) - 1)) == (pos >> 3) && (w >> 63));
}

struct wr {
	int id;
	uint64_t seed;
	unsigned char *ref; /* LOW pages: this writer's pages */
};

static void *writer(void *arg)
{
	struct wr *w = arg;
	uint64_t rng = w->seed, gen = 1;
	uint64_t buf[PS / 8 * 2];

	while (!atomic_load(&g_stop)) {
		uint64_t page = (tst_rnd(&rng) % (LOW / NW)) * NW + (uint64_t)w->id;
		uint64_t off = page * PS, len = PS;

		if (tst_rnd(&rng) % 2) { /* a part of the page, word aligned */
			uint64_t a = (tst_rnd(&rng) % (PS / 8)) * 8;

			len = 8 * (1 + tst_rnd(&rng) % ((PS - a) / 8));
			off += a;
		}
		gen++;
		for (uint64_t k = 0; k < len / 8; k++)
			buf[k] = stamp(off + 8 * k, gen);
		if (!CHECK_EQ(lpc_pwrite(g_f, buf, len, off), (ssize_t)len, "writer pwrite"))
			break;
		memcpy(w->ref + off, buf, len);
	}
	return NULL;
}

static void *reader(void *arg)
{
	uint64_t rng = (uint64_t)(uintptr_t)arg;
	uint64_t buf[PS / 8 * 3];

	while (!atomic_load(&g_stop)) {
		uint64_t off = (tst_rnd(&rng) % ((LOW + HIGH) * PS / 8)) * 8;
		size_t len = 8 * (1 + tst_rnd(&rng) % (sizeof(buf) / 8));
		ssize_t n = lpc_pread(g_f, buf, len, off);

		if (!CHECK(n >= 0, "pread %zd", n))
			break;
		for (ssize_t k = 0; k < n / 8; k++) {
			if (!word_ok(off + 8 * (uint64_t)k, buf[k])) {
				/* Named, so that tests/mutants/run.sh counts a kill here
				 * (a torn or stale copy, e.g. opt-no-seq-recheck). */
				CHECK(0, "lpc test: rule READ-DATA violated: reader: word at %llu is %llx",
				      (unsigned long long)(off + 8 * (uint64_t)k),
				      (unsigned long long)buf[k]);
				atomic_store(&g_stop, true);
				break;
			}
		}
	}
	return NULL;
}

static void *syncer(void *arg)
{
	(void)arg;
	while (!atomic_load(&g_stop)) {
		if (!CHECK_EQ(lpc_fsync(g_f), 0, "fsync"))
			break;
		tst_sleep_us(3000);
	}
	return NULL;
}

/* The high zone: write, cut, grow, check zeros past the cut. */
static void *truncater(void *arg)
{
	uint64_t rng = (uint64_t)(uintptr_t)arg, gen = 1;
	const uint64_t base = LOW * PS, end = (LOW + HIGH) * PS;
	uint64_t *buf = malloc(HIGH * PS);
	unsigned rounds = 0;

	while (!atomic_load(&g_stop)) {
		uint64_t cut = base + (tst_rnd(&rng) % (HIGH * PS / 8)) * 8;
		ssize_t n;

		gen++;
		for (uint64_t k = 0; k < HIGH * PS / 8; k++)
			buf[k] = stamp(base + 8 * k, gen);
		if (!CHECK_EQ(lpc_pwrite(g_f, buf, HIGH * PS, base), (ssize_t)(HIGH * PS)))
			break;
		if (tst_rnd(&rng) % 3 == 0)
			lpc_fsync(g_f);
		if (!CHECK_EQ(lpc_truncate(g_f, cut), 0, "truncate down"))
			break;
		tst_sleep_us((unsigned)(tst_rnd(&rng) % 500));
		if (!CHECK_EQ(lpc_truncate(g_f, end), 0, "truncate up"))
			break;
		n = lpc_pread(g_f, buf, end - cut, cut);
		if (!CHECK_EQ(n, (ssize_t)(end - cut), "pread after grow"))
			break;
		for (uint64_t k = 0; k < (end - cut) / 8; k++) {
			if (buf[k]) {
				CHECK(0, "stale data past the cut %llu at %llu: %llx", (unsigned long long)cut,
				      (unsigned long long)(cut + 8 * k), (unsigned long long)buf[k]);
				atomic_store(&g_stop, true);
				break;
			}
		}
		rounds++;
	}
	printf("  truncate rounds %u\n", rounds);
	free(buf);
	return NULL;
}

static void case_mixed(int backend)
{
	char path[600];
	struct lpc_cache *c = tst_wcache_create(512, PS, backend, 10, 5, 30);
	pthread_t th[NW + NR + 2];
	struct wr w[NW];
	unsigned char *all = calloc(1, (LOW + HIGH) * PS + PS);
	int n = 0;

	REQUIRE(tst_make_sparse("mixed", (LOW + HIGH) * PS, path, sizeof(path)) == 0);
	g_f = tst_file_open(c, path, O_RDWR);
	atomic_store(&g_stop, false);
	for (int i = 0; i < NW; i++) {
		w[i] = (struct wr){ .id = i, .seed = tst_seed + (uint64_t)i * 7,
				    .ref = calloc(1, LOW * PS) };
		pthread_create(&th[n++], NULL, writer, &w[i]);
	}
	for (int i = 0; i < NR; i++)
		pthread_create(&th[n++], NULL, reader, (void *)(uintptr_t)(tst_seed + 100 + (uint64_t)i));
	pthread_create(&th[n++], NULL, syncer, NULL);
	pthread_create(&th[n++], NULL, truncater, (void *)(uintptr_t)(tst_seed + 200));
	tst_sleep_us((unsigned)(g_secs * 1e6));
	atomic_store(&g_stop, true);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	CHECK_EQ(lpc_fsync(g_f), 0, "final fsync");
	{
		unsigned char *k = calloc(1, (LOW + HIGH) * PS + PS);
		int64_t size = tst_kernel_read(path, k, (LOW + HIGH) * PS + PS);

		CHECK_EQ(size, (int64_t)((LOW + HIGH) * PS), "size");
		for (uint64_t pg = 0; pg < LOW; pg++)
			memcpy(all + pg * PS, w[pg % NW].ref + pg * PS, PS);
		CHECK(tst_first_diff(k, all, LOW * PS) < 0, "the writers' zone on disk differs at %lld",
		      (long long)tst_first_diff(k, all, LOW * PS));
		free(k);
	}
	{
		struct lpc_stats s;

		lpc_stats(c, &s);
		printf("  writes %llu, writeback pages %llu in %llu writes, fsyncs %llu\n",
		       (unsigned long long)s.writes, (unsigned long long)s.writeback_pages,
		       (unsigned long long)s.vectored_writes, (unsigned long long)s.fsyncs);
	}
	CHECK_EQ(lpc_file_close(g_f), 0);
	tst_cache_destroy(c);
	for (int i = 0; i < NW; i++)
		free(w[i].ref);
	free(all);
}

static void *redirtier(void *arg)
{
	uint64_t buf[PS / 8];
	uint64_t gen = 0;

	(void)arg;
	while (!atomic_load(&g_stop)) {
		gen++;
		for (unsigned pg = 0; pg < 16 && !atomic_load(&g_stop); pg++) {
			for (unsigned k = 0; k < PS / 8; k++)
				buf[k] = stamp(pg * PS + 8 * k, gen);
			lpc_pwrite(g_f, buf, PS, pg * PS);
		}
	}
	return NULL;
}

static void case_no_starve(int backend)
{
	char path[600];
	struct lpc_cache *c = tst_wcache_create(128, PS, backend, 60000, 80, 90);
	pthread_t th;
	uint64_t end, worst = 0;
	unsigned done = 0;

	REQUIRE(tst_make_sparse("starve", 16 * PS, path, sizeof(path)) == 0);
	g_f = tst_file_open(c, path, O_RDWR);
	atomic_store(&g_stop, false);
	pthread_create(&th, NULL, redirtier, NULL);
	end = tst_now_ns() + (uint64_t)(g_secs * 1e9);
	while (tst_now_ns() < end) {
		uint64_t t0 = tst_now_ns();

		CHECK_EQ(lpc_fsync(g_f), 0);
		t0 = tst_now_ns() - t0;
		if (t0 > worst)
			worst = t0;
		done++;
	}
	atomic_store(&g_stop, true);
	pthread_join(th, NULL);
	printf("  %u fsyncs beside a re-dirtying writer, the longest %.1f ms\n", done, worst / 1e6);
	CHECK(done >= 3, "fsyncs ended: %u", done);
	CHECK(worst < 5000000000ull, "an fsync ran %.1f s", worst / 1e9);
	CHECK_EQ(lpc_file_close(g_f), 0);
	tst_cache_destroy(c);
}

#define NW8 8
#define WIN 40u /* pages per writer's window */
#define CHUNK 4u

static struct lpc_file *g_files[NW8];
static _Atomic uint64_t g_max_dirty;
static struct lpc_cache *g_c;

static void *writer8(void *arg)
{
	int id = (int)(uintptr_t)arg;
	unsigned char buf[CHUNK * PS];
	uint64_t pos = 0;

	memset(buf, id + 1, sizeof(buf));
	while (!atomic_load(&g_stop)) {
		if (!CHECK_EQ(lpc_pwrite(g_files[id], buf, sizeof(buf), pos * PS), (ssize_t)sizeof(buf),
			      "writer8"))
			break;
		pos = (pos + CHUNK) % WIN;
	}
	return NULL;
}

static void *monitor(void *arg)
{
	(void)arg;
	while (!atomic_load(&g_stop)) {
		struct lpc_stats s;

		lpc_stats(g_c, &s);
		if (s.dirty_pages > atomic_load(&g_max_dirty))
			atomic_store(&g_max_dirty, s.dirty_pages);
		tst_sleep_us(100);
	}
	return NULL;
}

static void case_bounded(int backend)
{
	const unsigned frames = 512, limit_pct = 20;
	pthread_t th[NW8 + 1];
	struct lpc_stats s;
	uint64_t bound = frames * limit_pct / 100 + NW8 * CHUNK;

	g_c = tst_wcache_create(frames, PS, backend, 60000, 10, limit_pct);
	for (int i = 0; i < NW8; i++) {
		char path[600], name[32];

		snprintf(name, sizeof(name), "bounded%d", i);
		REQUIRE(tst_make_sparse(name, 0, path, sizeof(path)) == 0);
		g_files[i] = tst_file_open(g_c, path, O_RDWR);
	}
	atomic_store(&g_stop, false);
	atomic_store(&g_max_dirty, 0);
	for (int i = 0; i < NW8; i++)
		pthread_create(&th[i], NULL, writer8, (void *)(uintptr_t)i);
	pthread_create(&th[NW8], NULL, monitor, NULL);
	tst_sleep_us((unsigned)(g_secs * 1e6));
	atomic_store(&g_stop, true);
	for (int i = 0; i <= NW8; i++)
		pthread_join(th[i], NULL);
	lpc_stats(g_c, &s);
	printf("  8 writers: max dirty %llu pages (limit %u, bound %llu), throttled %llu, writes %llu\n",
	       (unsigned long long)atomic_load(&g_max_dirty), frames * limit_pct / 100,
	       (unsigned long long)bound, (unsigned long long)s.throttled,
	       (unsigned long long)s.writes);
	CHECK(atomic_load(&g_max_dirty) <= bound, "dirty pages %llu above %llu",
	      (unsigned long long)atomic_load(&g_max_dirty), (unsigned long long)bound);
	CHECK(s.throttled > 0, "nobody was throttled");
	for (int i = 0; i < NW8; i++)
		CHECK_EQ(lpc_file_close(g_files[i]), 0);
	tst_cache_destroy(g_c);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 280);
	tst_require_tmpdir();
	/* The time is shared by the backends: CI's budget stays as it was. */
	g_secs = tst_stress_seconds(2) / (double)TST_NWRITE_BACKENDS;
	for (size_t b = 0; b < TST_NWRITE_BACKENDS; b++) {
		int be = tst_write_backends[b];

		printf("backend %s\n", tst_backend_name(be));
		TST_RUN(case_mixed(be));
		TST_RUN(case_no_starve(be));
		TST_RUN(case_bounded(be));
	}
	return tst_finish();
}
