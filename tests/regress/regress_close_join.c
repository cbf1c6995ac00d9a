/* SPDX-License-Identifier: MIT */
/*
 * regress_close_join.c - story: an open that revives a file in its last
 * close (A.5, filemap/file.c ZA), writes and closes while the closer is
 * inside its flush (Z3): that close joins the last close (ZJ).
 *
 * The old close of the reviver only dropped the count (2 -> 1) and returned
 * 0 at once, with its page only in memory; and when the closer's first
 * flush had failed (one EIO on its own page), the closer went to Z5 with
 * the reviver's page dirty and dropped it: a page no write ever tried, lost
 * with both closes "successful" for it (the reviver's returned 0).
 *
 * The interleaving, in both stories:
 *   1. C's file: page 0 dirty (lpc_pwrite of 0xaa bytes).  In story 2 the
 *      next write of the backend fails with EIO (one fault).
 *   2. C runs the last close; it is parked at Y4 of its first flush (Z3),
 *      which began with page 0 alone dirty.
 *   3. The main thread opens the file (R: the same lpc_file, revived) and
 *      writes page 1 (0xbb).
 *   4. R closes on thread J; the main thread waits until the open count is
 *      back to 1 (R's close has dropped its open), then up to 500 ms for J.
 *      J's close must not have returned while C is parked: page 1 is not
 *      in the kernel's file.  The old code: J returned 0 and read the
 *      kernel's file without page 1.
 *   5. C is released.  J's close returns C's result (story 1: 0; story 2:
 *      -EIO, the close it joined had a write fail) and, when it returns,
 *      page 1 is in the kernel's file (J reads it at once); C returns 0 /
 *      -EIO.  After every close the kernel's file holds pages 0 and 1 (the
 *      failed page 0 was written again by the flush that followed the
 *      join).  The old code, story 2: page 1 was never written.
 * Deterministic: C is parked at its Y4 yield point (yield_stop.h); the
 * 500 ms wait only checks that a call has not returned.
 *
 * Usage: regress_close_join [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <fcntl.h>

#include "../common/write_test.h"
#include "../common/yield_stop.h"
#include "cache/cache.h"

#define PS 4096
#define FSIZE (4 * PS)

static struct lpc_file *file;
static const char *j_path;
static _Atomic int c_rc = 1, j_rc = 1;
static _Atomic bool j_done, j_page1;

static void *c_main(void *arg)
{
	(void)arg;
	tst_stop_me();
	atomic_store(&c_rc, lpc_file_close(file));
	return NULL;
}

/* J: R's close, then at once whether page 1 is in the kernel's file. */
static void *j_main(void *arg)
{
	static unsigned char back[FSIZE];
	const unsigned char *b = arg;
	int rc = lpc_file_close(file);

	atomic_store(&j_page1, tst_kernel_read(j_path, back, sizeof(back)) == FSIZE &&
				       tst_first_diff(back + PS, b, PS) == -1);
	atomic_store(&j_rc, rc);
	atomic_store(&j_done, true);
	return NULL;
}

static unsigned opens_of(struct lpc_file *f)
{
	unsigned n;

	pthread_mutex_lock(&f->files->lock);
	n = f->opens;
	pthread_mutex_unlock(&f->files->lock);
	return n;
}

static void story(const char *path, bool fault)
{
	const char *name = fault ? "2 (C's write of page 0 fails)" : "1 (no fault)";
	unsigned char a[PS], b[PS], back[FSIZE];
	struct lpc_cache *c;
	struct lpc_file *r = NULL;
	pthread_t ct, jt;
	int want = fault ? -EIO : 0;

	memset(a, 0xaa, sizeof(a));
	memset(b, 0xbb, sizeof(b));
	c = tst_wcache_create(16, PS, LPC_IO_SYNC, UINT32_MAX, 100, 100);
	file = tst_file_open(c, path, O_RDWR);
	REQUIRE(lpc_pwrite(file, a, PS, 0) == PS, "%s: pwrite page 0", name);	/* 1 */
	if (fault) {
		struct lpc_io_fault ft = { .ops = LPC_IO_WRITE, .count = 1, .err = EIO };

		REQUIRE(lpc_io_fault_set(&c->io, &ft) == 0);
	}
	tst_stop_arm(LPC_YP_Y4);						/* 2 */
	REQUIRE(pthread_create(&ct, NULL, c_main, NULL) == 0);
	REQUIRE(tst_stop_wait(), "%s: C never reached Y4", name);

	REQUIRE(lpc_file_open(c, path, O_RDWR, 0, &r) == 0, "%s: R's open", name);	/* 3 */
	REQUIRE(r == file, "%s: R did not revive the closing copy", name);
	CHECK_EQ(lpc_pwrite(r, b, PS, PS), PS, "%s: R's pwrite of page 1", name);

	j_path = path;								/* 4 */
	atomic_store(&j_done, false);
	atomic_store(&j_page1, false);
	REQUIRE(pthread_create(&jt, NULL, j_main, b) == 0);
	while (opens_of(file) > 1)
		tst_sleep_us(1000);
	for (int i = 0; i < 500 && !atomic_load(&j_done); i++)
		tst_sleep_us(1000);
	CHECK(!atomic_load(&j_done),
	      "%s: R's close returned (%d, page 1 %s the kernel's file) while the last close "
	      "it joined was parked in its flush",
	      name, atomic_load(&j_rc), atomic_load(&j_page1) ? "in" : "not in");

	tst_stop_release();							/* 5 */
	pthread_join(jt, NULL);
	pthread_join(ct, NULL);
	tst_stop_disarm();
	CHECK_EQ(atomic_load(&j_rc), want, "%s: R's close", name);
	CHECK(atomic_load(&j_page1), "%s: page 1 not in the kernel's file when R's close returned",
	      name);
	CHECK_EQ(atomic_load(&c_rc), want, "%s: C's close", name);
	if (fault) {
		CHECK_EQ(lpc_io_faults_fired(&c->io), 1, "%s: faults fired", name);
		lpc_io_fault_set(&c->io, NULL);
	}
	CHECK_EQ(tst_kernel_read(path, back, sizeof(back)), FSIZE, "%s: size", name);
	CHECK_EQ(tst_first_diff(back, a, PS), -1, "%s: page 0 after every close", name);
	CHECK_EQ(tst_first_diff(back + PS, b, PS), -1,
		 "%s: R's page 1 (never failed) after every close", name);
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	char path[512];

	tst_init(argc, argv, 60);
	if (!LPC_DEBUG)
		tst_skip("needs -DLPC_DEBUG=ON (yield points)");
	tst_require_tmpdir();
	REQUIRE(tst_make_file("close_join1", FSIZE, 3, path, sizeof(path)) == 0);
	story(path, false);
	REQUIRE(tst_make_file("close_join2", FSIZE, 3, path, sizeof(path)) == 0);
	story(path, true);
	return tst_finish();
}
