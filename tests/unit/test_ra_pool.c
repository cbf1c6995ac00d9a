/* SPDX-License-Identifier: MIT */
/*
 * test_ra_pool.c - readahead's thread pool and frames against a slow device
 * (filemap/ra_worker.c Q0-Q3, run.c U2, readahead.c lpc_fadvise): files
 * whose reads are held at a gate (the device of a hung mount) never make a
 * demand read of another file wait, a WILLNEED wait, or a demand pin fail.
 * Each story was a defect of the readahead pool's adversarial review (its
 * programs in tests/attack/: att_ra_pool_grow, att_ra_hol2,
 * att_willneed_block, att_ra_frames); each fails if its defect returns.
 * Sync and io_uring backends.  Every wait polls with a deadline: a story
 * that holds ends at once, one whose defect is back fails at the deadline.
 *   pool-grow   two WILLNEEDs back to back, a slow file's page 0 then a
 *               fast file's: the pool grows for the second job (a thread
 *               signalled but not yet awake is not idle), so the fast
 *               file's pread of page 0 returns while the slow read is held
 *               (10 rounds: the window was microseconds wide).
 *   hol2        two slow files, four one-page windows each (LPC_RA_PER_FILE),
 *               then a fast file's WILLNEED and pread: the fast read does
 *               not wait behind the slow files' readahead.
 *   willneed    a WILLNEED of 80 MiB of a slow file (more than
 *               readahead's share of its 256 MiB cache) returns 0 while
 *               every read is held.
 *   frames      a WILLNEED of a slow file's 4 MiB in a 4 MiB cache, then a
 *               fast file's lpc_pin of 2 MiB (512 pages): all 512 pinned
 *               (readahead's frames in flight are capped).
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>

#include "../common/lpc_test.h"
#include "../common/readv_by_read.h"
#include "cache/cache.h"
#include "filemap/filemap.h"

static const size_t PS = 4096;

/* A read gate over up to four files (by st_ino): while closed, it holds
 * every read of a gated file and counts it. */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t ids[4];
	unsigned nids, entered;
	bool closed;
	const struct lpc_io_backend_ops *inner;
	struct lpc_io_backend_ops ops;
} gate = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static void gate_pass(struct lpc_io_file *f)
{
	pthread_mutex_lock(&gate.mu);
	for (unsigned i = 0; i < gate.nids; i++)
		if (gate.closed && f->id == gate.ids[i]) {
			gate.entered++;
			pthread_cond_broadcast(&gate.cv);
			while (gate.closed)
				pthread_cond_wait(&gate.cv, &gate.mu);
			break;
		}
	pthread_mutex_unlock(&gate.mu);
}

static ssize_t gate_read(struct lpc_io_file *f, void *buf, size_t len, uint64_t off,
			 uint64_t index)
{
	gate_pass(f);
	return gate.inner->read(f, buf, len, off, index);
}

static ssize_t gate_readv(struct lpc_io_file *f, const struct iovec *iov, int iovcnt,
			  uint64_t off, uint64_t index)
{
	gate_pass(f);
	return tst_readv_inner(gate.inner, f, iov, iovcnt, off, index);
}

/* A fresh cache with the gate over its backend, open, nothing gated. */
static struct lpc_cache *gate_cache(size_t bytes, int backend)
{
	struct lpc_cache *c = tst_cache_create(bytes, PS, backend, LPC_LOOKUP_LOCKLESS);

	pthread_mutex_lock(&gate.mu);
	gate.nids = 0;
	gate.entered = 0;
	gate.closed = false;
	pthread_mutex_unlock(&gate.mu);
	gate.inner = c->io.ops;
	gate.ops = *c->io.ops;
	gate.ops.read = gate_read;
	gate.ops.readv = gate_readv;
	c->io.ops = &gate.ops;
	return c;
}

static void gate_hold(const char *path)
{
	struct stat st;

	REQUIRE(stat(path, &st) == 0, "stat %s", path);
	pthread_mutex_lock(&gate.mu);
	gate.ids[gate.nids++] = (uint64_t)st.st_ino;
	gate.closed = true;
	pthread_mutex_unlock(&gate.mu);
}

static void gate_open(void)
{
	pthread_mutex_lock(&gate.mu);
	gate.closed = false;
	pthread_cond_broadcast(&gate.cv);
	pthread_mutex_unlock(&gate.mu);
}

/* Waits until at least n reads are held at the gate, or ms.  Return: the
 * count. */
static unsigned gate_wait_entered(unsigned n, int ms)
{
	struct timespec ts;
	unsigned got;
	int rc = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&gate.mu);
	while (gate.entered < n && rc == 0)
		rc = pthread_cond_timedwait(&gate.cv, &gate.mu, &ts);
	got = gate.entered;
	pthread_mutex_unlock(&gate.mu);
	return got;
}

/* fn(arg) in a thread; call_within says whether it returned within ms. */
struct call {
	void *(*fn)(void *);
	void *arg;
	_Atomic int done;
	pthread_t th;
};

static void *call_main(void *a)
{
	struct call *c = a;

	c->fn(c->arg);
	atomic_store(&c->done, 1);
	return NULL;
}

static bool call_within(struct call *c, int ms)
{
	REQUIRE(pthread_create(&c->th, NULL, call_main, c) == 0, "thread");
	for (int i = 0; i < ms && !atomic_load(&c->done); i++)
		tst_sleep_us(1000);
	return atomic_load(&c->done);
}

struct rd {
	struct lpc_file *f;
	size_t len;
	ssize_t got;
	unsigned char buf[4096];
};

static void *read_main(void *arg)
{
	struct rd *r = arg;

	r->got = lpc_pread(r->f, r->buf, r->len, 0);
	return NULL;
}

static bool page0_ok(const struct rd *r, uint64_t salt)
{
	unsigned char want[4096];

	tst_file_bytes(salt, 0, want, sizeof(want));
	return r->got == (ssize_t)PS && !memcmp(r->buf, want, PS);
}

static void story_pool_grow(int backend)
{
	char pa[600], pc[600];

	REQUIRE(tst_make_file("grow_a", 1 << 20, 1, pa, sizeof(pa)) == 0, "file a");
	REQUIRE(tst_make_file("grow_c", 1 << 20, 3, pc, sizeof(pc)) == 0, "file c");
	for (int r = 0; r < 10; r++) {
		struct lpc_cache *c = gate_cache(8 << 20, backend);
		struct lpc_file *fa = tst_file_open(c, pa, O_RDONLY);
		struct rd rd = { .f = tst_file_open(c, pc, O_RDONLY), .len = PS };
		struct call call = { .fn = read_main, .arg = &rd };
		bool ok;

		gate_hold(pa);
		CHECK_EQ(lpc_fadvise(fa, 0, PS, LPC_FADV_WILLNEED), 0, "WILLNEED of the slow file");
		CHECK_EQ(lpc_fadvise(rd.f, 0, PS, LPC_FADV_WILLNEED), 0, "WILLNEED of the fast file");
		ok = call_within(&call, 2000);
		CHECK(ok, "round %d: the fast file's pread waited behind the slow file's window "
			  "(the pool did not grow)", r);
		CHECK(gate_wait_entered(1, 2000) >= 1, "round %d: the slow read is held", r);
		gate_open();
		pthread_join(call.th, NULL);
		CHECK(page0_ok(&rd, 3), "round %d: the fast file's bytes", r);
		CHECK_EQ(lpc_file_close(fa), 0);
		CHECK_EQ(lpc_file_close(rd.f), 0);
		tst_cache_destroy(c);
		if (!ok)
			break;
	}
}

static void story_hol2(int backend)
{
	struct lpc_cache *c = gate_cache(64 << 20, backend);
	char pa[600], pb[600], pc[600];
	struct lpc_file *fa, *fb;
	struct rd rd = { .len = PS };
	struct call call = { .fn = read_main, .arg = &rd };
	bool ok;

	REQUIRE(tst_make_file("hol_a", 1 << 20, 1, pa, sizeof(pa)) == 0, "file a");
	REQUIRE(tst_make_file("hol_b", 1 << 20, 2, pb, sizeof(pb)) == 0, "file b");
	REQUIRE(tst_make_file("hol_c", 1 << 20, 3, pc, sizeof(pc)) == 0, "file c");
	fa = tst_file_open(c, pa, O_RDONLY);
	fb = tst_file_open(c, pb, O_RDONLY);
	rd.f = tst_file_open(c, pc, O_RDONLY);
	gate_hold(pa);
	gate_hold(pb);
	/* Four one-page windows per slow file (pages 0, 2, 4, 6), each
	 * submitted once the one before is held at the device: the pool
	 * grows to all its threads, each blocked there. */
	for (unsigned k = 0; k < 4; k++) {
		CHECK_EQ(lpc_fadvise(fa, (uint64_t)k * 2 * PS, PS, LPC_FADV_WILLNEED), 0);
		gate_wait_entered(2 * k + 1, 2000);
		CHECK_EQ(lpc_fadvise(fb, (uint64_t)k * 2 * PS, PS, LPC_FADV_WILLNEED), 0);
		gate_wait_entered(2 * k + 2, 2000);
	}
	CHECK(gate_wait_entered(2, 0) >= 2, "the slow files' reads are held");
	pthread_mutex_lock(&c->files.ra.lock);
	printf("    slow reads held %u, readahead threads %u, jobs queued %u\n",
	       gate_wait_entered(0, 0), c->files.ra.nthreads, c->files.ra.n);
	pthread_mutex_unlock(&c->files.ra.lock);
	CHECK_EQ(lpc_fadvise(rd.f, 0, PS, LPC_FADV_WILLNEED), 0, "WILLNEED of the fast file");
	ok = call_within(&call, 3000);
	CHECK(ok, "a demand read of a fast file waited behind two slow files' readahead");
	gate_open();
	pthread_join(call.th, NULL);
	CHECK(page0_ok(&rd, 3), "the fast file's bytes");
	CHECK_EQ(lpc_file_close(fa), 0);
	CHECK_EQ(lpc_file_close(fb), 0);
	CHECK_EQ(lpc_file_close(rd.f), 0);
	tst_cache_destroy(c);
}

struct wn {
	struct lpc_file *f;
	int rc;
};

static void *willneed_main(void *arg)
{
	struct wn *w = arg;

	w->rc = lpc_fadvise(w->f, 0, 0, LPC_FADV_WILLNEED);
	return NULL;
}

static void story_willneed(int backend)
{
	struct lpc_cache *c = gate_cache(256 << 20, backend);
	struct wn w = { .rc = 1 };
	struct call call = { .fn = willneed_main, .arg = &w };
	char pa[600];
	bool ok;

	REQUIRE(tst_make_sparse("wn_a", 80 << 20, pa, sizeof(pa)) == 0, "file a");
	w.f = tst_file_open(c, pa, O_RDONLY);
	gate_hold(pa);
	ok = call_within(&call, 3000);
	CHECK(ok, "WILLNEED of 80 MiB (more than readahead's share) waited for the device");
	CHECK(gate_wait_entered(1, 2000) >= 1, "its reads are held");
	gate_open();
	pthread_join(call.th, NULL);
	CHECK_EQ(w.rc, 0, "lpc_fadvise");
	CHECK_EQ(lpc_file_close(w.f), 0);
	tst_cache_destroy(c);
}

static void story_frames(int backend)
{
	struct lpc_cache *c = gate_cache(4 << 20, backend);
	static struct lpc_page *pages[512];
	struct wn w = { .rc = 1 };
	struct call call = { .fn = willneed_main, .arg = &w };
	char pa[600], pc[600];
	struct lpc_file *fc;
	int n;

	REQUIRE(tst_make_file("fr_a", 4 << 20, 1, pa, sizeof(pa)) == 0, "file a");
	REQUIRE(tst_make_file("fr_c", 4 << 20, 3, pc, sizeof(pc)) == 0, "file c");
	w.f = tst_file_open(c, pa, O_RDONLY);
	fc = tst_file_open(c, pc, O_RDONLY);
	gate_hold(pa);
	CHECK(call_within(&call, 3000), "WILLNEED of the slow file returns");
	CHECK(gate_wait_entered(1, 2000) >= 1, "its reads are held");
	n = lpc_pin(fc, 0, 2 << 20, LPC_PIN_READ, pages, 512);
	CHECK_EQ(n, 512, "a demand pin of 2 MiB while readahead of a held file is in flight");
	if (n > 0) {
		unsigned char want[4096];

		tst_file_bytes(3, 511 * PS, want, PS);
		if (n == 512)
			CHECK(!memcmp(lpc_page_data(pages[511]), want, PS), "page 511's bytes");
		lpc_unpin(pages, (unsigned)n, LPC_PIN_READ);
	}
	gate_open();
	pthread_join(call.th, NULL);
	CHECK_EQ(w.rc, 0, "lpc_fadvise");
	CHECK_EQ(lpc_file_close(w.f), 0);
	CHECK_EQ(lpc_file_close(fc), 0);
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	static const int backends[] = { LPC_IO_SYNC, LPC_IO_URING };

	tst_init(argc, argv, 110);
	tst_require_tmpdir();
	for (size_t b = 0; b < 2; b++) {
		printf("backend %s\n", backends[b] == LPC_IO_SYNC ? "sync" : "uring");
		TST_RUN(story_pool_grow(backends[b]));
		TST_RUN(story_hol2(backends[b]));
		TST_RUN(story_willneed(backends[b]));
		TST_RUN(story_frames(backends[b]));
	}
	tst_rm_dir();
	return tst_finish();
}
