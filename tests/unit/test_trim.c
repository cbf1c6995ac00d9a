/* SPDX-License-Identifier: MIT */
/*
 * test_trim.c - a cache whose working set shrank gives its memory back
 * (page/pool.c "Giving memory back", reclaim/reclaimer.c "Trim"):
 *
 *  - a cache with a 64 MiB budget fills all of it (every page read back
 *    and checked), drops it all with lpc_invalidate, and within the
 *    reclaimer's ticks (a window of 2 s; the test waits up to 15 s) the
 *    arena's resident bytes (mincore), lpc_stats' resident_bytes and the
 *    process's VmRSS fall by most of the 64 MiB: the arena keeps at most
 *    the reclaimer's high watermark (1/32 of the frames) plus a 2 MiB
 *    chunk; resident_bytes says the same as mincore within a chunk;
 *  - every frame is still free (frames_free = frames), and the cache is
 *    used again: all 64 MiB read again (misses into frames given back) and
 *    checked byte for byte, then written with other bytes and read back;
 *    resident_bytes grows with it again;
 *  - on a backend that pins its frames (io_uring's registered chunks) no
 *    frame is given back (a pinned page cannot be), and the reuse reads
 *    right all the same;
 *  - frames are given back while two threads read, check and drop 64
 *    pages at a time (allocations and frees racing the trimmer: TR1-TR4):
 *    every read right, half the budget given back meanwhile, every frame
 *    free at the end and the whole file read right again.
 * Backends: null (no disk: its pattern is checked) always; a real file on
 * the disk backend the suite runs (tst_disk_backend: io_uring by default,
 * sync in the `.sync` twin).  VmRSS checks are skipped in sanitizer builds.
 *
 * Usage: test_trim [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <pthread.h>
#include <sys/mman.h>

#include "cache/cache.h"
#include "../common/lpc_test.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RSS_CHECKS 0
#else
#define RSS_CHECKS 1
#endif

static const size_t PS = 4096;
static const size_t BUDGET = (size_t)64 << 20;
static const size_t CHUNK = (size_t)2 << 20;

static size_t mincore_bytes(const void *p, size_t len)
{
	size_t base = (size_t)sysconf(_SC_PAGESIZE), n = (len + base - 1) / base, r = 0;
	unsigned char *vec = malloc(n);

	REQUIRE(vec);
	REQUIRE(mincore((void *)p, len, vec) == 0, "mincore: %s", strerror(errno));
	for (size_t i = 0; i < n; i++)
		r += vec[i] & 1;
	free(vec);
	return r * base;
}

static size_t vm_rss(void)
{
	FILE *fp = fopen("/proc/self/status", "r");
	char line[256];
	size_t kb = 0;

	REQUIRE(fp);
	while (fgets(line, sizeof(line), fp))
		if (!strncmp(line, "VmRSS:", 6) && sscanf(line + 6, "%zu kB", &kb) == 1)
			break;
	fclose(fp);
	return kb << 10;
}

struct side {
	struct lpc_cache *c;
	struct lpc_file *f;
	int backend;
	uint64_t id, fsize; /* the null backend's file */
	unsigned salt;      /* the real file's bytes: tst_file_bytes(salt) */
};

/* Reads the whole file through the cache in 1 MiB calls and checks it. */
static void read_all(struct side *s, const char *when)
{
	size_t len = (size_t)1 << 20;
	unsigned char *buf = aligned_alloc(PS, len), *want = malloc(len), *scratch = malloc(PS);
	unsigned bad = 0;

	REQUIRE(buf && want && scratch);
	for (uint64_t off = 0; off < BUDGET; off += len) {
		bool ok;

		CHECK_EQ(lpc_pread(s->f, buf, len, off), (ssize_t)len, "%s: read at %" PRIu64,
			 when, off);
		if (s->backend == LPC_IO_NULL) {
			ok = tst_null_check_range(s->id, PS, s->fsize, off, buf, len, scratch, NULL);
		} else {
			tst_file_bytes(s->salt, off, want, len);
			ok = !memcmp(buf, want, len);
		}
		bad += !ok;
	}
	CHECK_EQ(bad, 0, "%s: MiB that read wrong", when);
	free(buf);
	free(want);
	free(scratch);
}

/* Writes the whole (real) file with the bytes of `salt`. */
static void write_all(struct side *s, unsigned salt)
{
	size_t len = (size_t)1 << 20;
	unsigned char *buf = malloc(len);

	REQUIRE(buf);
	s->salt = salt;
	for (uint64_t off = 0; off < BUDGET; off += len) {
		tst_file_bytes(salt, off, buf, len);
		CHECK_EQ(lpc_pwrite(s->f, buf, len, off), (ssize_t)len, "write at %" PRIu64, off);
	}
	CHECK_EQ(lpc_fsync(s->f), 0, "fsync");
	free(buf);
}

static void report(struct side *s, const char *when, size_t rss0, size_t *arena,
		   uint64_t *resident)
{
	struct lpc_stats st;

	lpc_stats(s->c, &st);
	*arena = mincore_bytes(s->c->pool.frames, s->c->pool.frames_bytes);
	*resident = st.resident_bytes;
	printf("  %-6s %-26s arena %6zu KiB, resident_bytes %6" PRIu64 " KiB, VmRSS %+7ld KiB, "
	       "free %" PRIu64 " of %" PRIu64 "\n",
	       s->c->io.ops->name, when, *arena >> 10, st.resident_bytes >> 10,
	       ((long)vm_rss() - (long)rss0) / 1024, st.frames_free, st.frames);
}

static void shrink_and_reuse(int backend)
{
	struct side s = { .backend = backend };
	char path[600];
	size_t rss0, rss_full, arena, keep, room;
	uint64_t resident;
	bool pins;
	struct lpc_stats st;

	if (backend == LPC_IO_NULL) {
		REQUIRE(tst_make_sparse("trim-null", BUDGET, path, sizeof(path)) == 0);
		s.id = tst_file_id(path);
		s.fsize = BUDGET;
	} else {
		snprintf(path, sizeof(path), "%s/trim-disk", tst_tmpdir());
	}
	rss0 = vm_rss();
	s.c = tst_cache_create(BUDGET, PS, backend, LPC_LOOKUP_LOCKLESS);
	s.f = tst_file_open(s.c, path, O_RDWR | O_CREAT);
	pins = s.c->io.ops == &lpc_io_uring_ops;
	CHECK_EQ(s.c->pool.trim_ok, !pins, "%s: frames may be given back unless pinned",
		 s.c->io.ops->name);
	/* The reclaimer's high watermark: what the cache keeps resident once
	 * it gave back.  While it is filled by readahead, the reclaimer keeps
	 * up to ra_high frames free (reclaimer.c: room for a whole window), so
	 * a full cache holds at least the budget less that room. */
	keep = (size_t)s.c->reclaim.high * PS;
	room = (size_t)s.c->reclaim.ra_high * PS;
	if (backend != LPC_IO_NULL)
		write_all(&s, 11);
	read_all(&s, "filled");
	report(&s, "64 MiB used:", rss0, &arena, &resident);
	rss_full = vm_rss();
	CHECK(arena >= BUDGET - room - CHUNK, "full: arena resident %zu KiB", arena >> 10);
	CHECK(resident >= BUDGET - room - CHUNK, "full: resident_bytes %" PRIu64, resident);

	{
		int n = lpc_invalidate(s.f, 0, BUDGET);

		CHECK(n >= (int)((BUDGET - room - CHUNK) / PS), "invalidate all: %d pages", n);
	}
	/* The reclaimer lands the frames on the free list, then gives back
	 * what stays free for its window. */
	for (int i = 0; i < 150; i++) {
		lpc_stats(s.c, &st);
		if (st.frames_free == st.frames &&
		    (pins || st.resident_bytes <= keep + CHUNK))
			break;
		usleep(100 * 1000);
	}
	if (pins)
		usleep(3000 * 1000); /* two windows: nothing may go */
	report(&s, "dropped, reclaimer ticked:", rss0, &arena, &resident);
	lpc_stats(s.c, &st);
	CHECK_EQ(st.frames_free, st.frames, "every frame free again");
	if (pins) {
		CHECK_EQ(s.c->pool.ntrimmed, 0, "%s: no frame given back", s.c->io.ops->name);
	} else {
		CHECK(arena <= keep + CHUNK, "dropped: arena resident %zu KiB, keep %zu KiB",
		      arena >> 10, keep >> 10);
		CHECK(resident <= keep + CHUNK, "dropped: resident_bytes %" PRIu64 " KiB",
		      resident >> 10);
		CHECK(resident + CHUNK >= arena && arena + CHUNK >= resident,
		      "resident_bytes %" PRIu64 " KiB says what mincore finds, %zu KiB",
		      resident >> 10, arena >> 10);
		if (RSS_CHECKS)
			CHECK(vm_rss() + BUDGET / 2 <= rss_full,
			      "VmRSS fell by most of 64 MiB: %zu KiB, full %zu KiB",
			      vm_rss() >> 10, rss_full >> 10);
	}

	/* Used again: misses into frames given back read right. */
	read_all(&s, "reused");
	if (backend != LPC_IO_NULL) {
		write_all(&s, 23);
		read_all(&s, "rewritten");
	}
	report(&s, "used again:", rss0, &arena, &resident);
	CHECK(resident >= BUDGET - room - CHUNK, "used again: resident_bytes %" PRIu64 " KiB",
	      resident >> 10);
	CHECK_EQ(lpc_file_close(s.f), 0, "close");
	tst_cache_destroy(s.c);
	unlink(path);
}

struct churn {
	struct side *s;
	_Atomic bool stop;
	_Atomic unsigned long rounds, bad;
	uint64_t seed;
};

/* A thread that reads 64 pages at a random place, checks them and drops
 * them, over and over: allocations and frees racing the trimmer. */
static void *churn_main(void *arg)
{
	struct churn *ch = arg;
	size_t len = 64 * PS;
	unsigned char *buf = aligned_alloc(PS, len), *scratch = malloc(PS);
	uint64_t rng = ch->seed;

	REQUIRE(buf && scratch);
	while (!atomic_load(&ch->stop)) {
		uint64_t off = tst_rnd(&rng) % (BUDGET / len) * len;

		if (lpc_pread(ch->s->f, buf, len, off) != (ssize_t)len ||
		    !tst_null_check_range(ch->s->id, PS, ch->s->fsize, off, buf, len, scratch, NULL))
			atomic_fetch_add(&ch->bad, 1);
		lpc_invalidate(ch->s->f, off, len);
		atomic_fetch_add(&ch->rounds, 1);
	}
	free(buf);
	free(scratch);
	return NULL;
}

/* The trimmer gives frames back while two threads allocate and free. */
static void churn_while_trimming(void)
{
	struct side s = { .backend = LPC_IO_NULL };
	struct churn ch[2];
	pthread_t th[2];
	char path[600];
	size_t arena = 0, keep;
	uint64_t resident = 0, given = 0, held;
	struct lpc_stats st;

	REQUIRE(tst_make_sparse("trim-churn", BUDGET, path, sizeof(path)) == 0);
	s.id = tst_file_id(path);
	s.fsize = BUDGET;
	/* No readahead: the churn's working set is its own 2 x 64 pages. */
	tst_readahead_kb = LPC_READAHEAD_OFF;
	s.c = tst_cache_create(BUDGET, PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);
	tst_readahead_kb = 0;
	s.f = tst_file_open(s.c, path, O_RDONLY);
	keep = (size_t)s.c->reclaim.high * PS;
	read_all(&s, "filled");
	lpc_invalidate(s.f, 0, BUDGET);
	for (int i = 0; i < 2; i++) {
		ch[i] = (struct churn){ .s = &s, .seed = tst_seed + (uint64_t)i + 1 };
		REQUIRE(pthread_create(&th[i], NULL, churn_main, &ch[i]) == 0);
	}
	/* Give-back under way while they run (up to 15 s).  The most given
	 * back at once is what counts: the trimmer leaves `high` frames free,
	 * and a burst of the churn's allocations beyond them (its frees wait
	 * on pending for a drain) takes given-back frames again, before fresh
	 * ones (alloc.c shared_take), so the count swings while they run. */
	for (int i = 0; i < 150; i++) {
		held = s.c->pool.ntrimmed;
		if (held > given)
			given = held;
		if (given * PS >= BUDGET / 2)
			break;
		usleep(100 * 1000);
	}
	for (int i = 0; i < 2; i++) {
		atomic_store(&ch[i].stop, true);
		pthread_join(th[i], NULL);
	}
	held = s.c->pool.ntrimmed; /* quiet now: arena and count agree */
	report(&s, "churned, given back:", 0, &arena, &resident);
	printf("  churn: %lu + %lu rounds, %" PRIu64 " frames given back meanwhile\n",
	       atomic_load(&ch[0].rounds), atomic_load(&ch[1].rounds), given);
	CHECK_EQ(atomic_load(&ch[0].bad) + atomic_load(&ch[1].bad), 0, "churn reads wrong");
	CHECK(given * PS >= BUDGET / 4, "given back while churning: at most %" PRIu64 " frames",
	      given);
	CHECK(arena <= BUDGET - held * PS + keep + CHUNK,
	      "arena %zu KiB with %" PRIu64 " frames given back", arena >> 10, held);
	lpc_invalidate(s.f, 0, BUDGET);
	for (int i = 0; i < 100; i++) {
		lpc_stats(s.c, &st);
		if (st.frames_free == st.frames)
			break;
		usleep(50 * 1000);
	}
	CHECK_EQ(st.frames_free, st.frames, "every frame free after the churn");
	read_all(&s, "after the churn");
	CHECK_EQ(lpc_file_close(s.f), 0, "close");
	tst_cache_destroy(s.c);
	unlink(path);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 120);
	tst_require_tmpdir();
	TST_RUN(shrink_and_reuse(LPC_IO_NULL));
	TST_RUN(shrink_and_reuse(tst_disk_backend(LPC_IO_URING)));
	TST_RUN(churn_while_trimming());
	return tst_finish();
}
