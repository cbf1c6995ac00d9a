/* SPDX-License-Identifier: MIT */
/*
 * regress_open_closing.c - story: lpc_file_open of a file in the middle of
 * its last lpc_file_close (one cached copy per file, A.5; filemap/file.c
 * steps Z1-Z5 and ZA-ZC).
 *
 * The close's window: the last close must wait for a flusher pass that is
 * writing the file (f->wb_busy).  The old close took f out of the file table
 * first and then waited, with files->lock released: an open in that window
 * found no copy and made a second one, which read the disk before the pass's
 * write and kept those bytes.
 *
 * The interleaving, in both stories:
 *   1. Page 0 of a four-page file is dirty (lpc_pwrite of 0x5c bytes).
 *   2. W, a flusher pass (pinned with f->wb_busy under files->lock and
 *      unpinned with the broadcast of wb_idle, as flusher.c's pick and unpin
 *      do; the flusher thread itself is kept out), moves page 0 DIRTY ->
 *      WRITEBACK (K3) and is parked before its write (K4): the new bytes
 *      are in memory only.
 *   3. C, the last close, starts; it must wait for W (200 ms: C has not
 *      returned).
 * story 1 (a plain open):
 *   4. The main thread opens the file and reads page 0.  The open must
 *      return the closing copy, revived (the same lpc_file), and the read
 *      its 0x5c bytes.  The old code: a second lpc_file, whose read missed
 *      and cached the disk's old bytes.
 *   5. W writes, C returns 0.  The read again: 0x5c (the old code: the
 *      stale page, after the close returned and the new data is on disk).
 *      The reopened file's close leaves 0x5c on disk.
 * story 2 (O_TRUNC):
 *   4. T opens the file with O_TRUNC.  A truncate under a cached copy would
 *      leave it stale, and T must not wait for the close (story 3): T
 *      returns -EBUSY at once and changes nothing (the main thread waits
 *      up to 2 s for it).  An older code: T's open truncated the kernel's
 *      file at once, then W's write put page 0 back; the code before this
 *      one: T waited for the close.
 *   5. W writes, C returns 0: the kernel's file holds page 0.  An O_TRUNC
 *      open now (no copy left) returns a new, empty copy: its read returns
 *      0 bytes, and the kernel's file stays empty after its close.
 * story 3 (O_TRUNC by a thread holding a page lock, B.2):
 *   1-3. Page 0 is dirty and locked by the main thread (lpc_page_lock, a
 *      change, lpc_page_mark_dirty); C runs the last close, whose flush
 *      waits for that page lock (writeback.c K1); the main thread waits
 *      until C has set closing (file.c Z1).
 *   4. T opens the file with O_TRUNC: -EBUSY at once (within 2 s).  The
 *      code that made T wait for the close: T waited for C, C for the page
 *      lock the main thread held while it waited for T (a deadlock; here
 *      the main thread gives up after 2 s and unlocks).
 *   5. The main thread unlocks page 0; C returns 0 with page 0 on disk.
 * Deterministic: W is parked at its K4 yield point (yield_stop.h), C at the
 * page lock; the timed waits only check that a call has (200 ms: not)
 * returned.
 *
 * Usage: regress_open_closing [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <fcntl.h>

#include "../common/write_test.h"
#include "../common/yield_stop.h"
#include "writeback/writeback.h"

#define PS 4096
#define FSIZE (4 * PS)

static struct lpc_file *file;
static _Atomic int c_rc = 1, t_rc = 1;
static _Atomic bool c_done, t_done;
static const char *t_path;
static struct lpc_file *t_file;

/* W: one flusher pass on `file`, pinned as flusher.c pins it. */
static void *w_main(void *arg)
{
	struct lpc_files *fs = file->files;
	int rc;

	(void)arg;
	pthread_mutex_lock(&fs->lock);
	file->wb_busy++;
	pthread_mutex_unlock(&fs->lock);
	tst_stop_me();
	rc = lpc_wb_file(file, LPC_WB_ASYNC, 0, lpc_file_tcache(file));
	pthread_mutex_lock(&fs->lock);
	if (--file->wb_busy == 0)
		pthread_cond_broadcast(&fs->wb_idle);
	pthread_mutex_unlock(&fs->lock);
	return (void *)(intptr_t)rc;
}

static void *c_main(void *arg)
{
	(void)arg;
	atomic_store(&c_rc, lpc_file_close(file));
	atomic_store(&c_done, true);
	return NULL;
}

static void *t_main(void *arg)
{
	struct lpc_cache *c = arg;

	atomic_store(&t_rc, lpc_file_open(c, t_path, O_RDWR | O_TRUNC, 0644, &t_file));
	atomic_store(&t_done, true);
	return NULL;
}

static pthread_t tt;

static void start_t(struct lpc_cache *c, const char *path)
{
	t_path = path;
	t_file = NULL;
	atomic_store(&t_rc, 1);
	atomic_store(&t_done, false);
	REQUIRE(pthread_create(&tt, NULL, t_main, c) == 0);
}

/* Return: whether T's open returned within 2 s. */
static bool wait_t(void)
{
	for (int i = 0; i < 2000 && !atomic_load(&t_done); i++)
		tst_sleep_us(1000);
	return atomic_load(&t_done);
}

/* Steps 1-3: page 0 dirty, W parked at K4 with it under writeback, C in the
 * last close, waiting for W. */
static void setup(struct lpc_cache *c, const char *path, const unsigned char *data,
		  pthread_t *wt, pthread_t *ct, const char *name)
{
	struct lpc_page *p;

	file = tst_file_open(c, path, O_RDWR);
	REQUIRE(lpc_pwrite(file, data, PS, 0) == PS, "%s: lpc_pwrite", name);	/* 1 */
	tst_stop_arm(LPC_YP_K4);						/* 2 */
	REQUIRE(pthread_create(wt, NULL, w_main, NULL) == 0);
	REQUIRE(tst_stop_wait(), "%s: W never reached K4", name);
	REQUIRE(lpc_page_find(file, 0, &p) == 0, "%s: page 0 cached", name);
	CHECK((lpc_page_flags(p) & (LPC_PG_DIRTY | LPC_PG_WRITEBACK)) == LPC_PG_WRITEBACK,
	      "%s: page 0 under writeback, not dirty: flags 0x%x", name, lpc_page_flags(p));
	lpc_page_put(p);
	atomic_store(&c_done, false);
	atomic_store(&c_rc, 1);
	REQUIRE(pthread_create(ct, NULL, c_main, NULL) == 0);			/* 3 */
	tst_sleep_us(200000);
	CHECK(!atomic_load(&c_done), "%s: the last close returned (%d) with W's write in flight",
	      name, atomic_load(&c_rc));
}

static void story_open(const char *path)
{
	const char *name = "1 (open during the last close)";
	unsigned char data[PS], buf[PS], back[FSIZE];
	struct lpc_cache *c;
	struct lpc_file *g = NULL;
	pthread_t wt, ct;
	void *wrc;

	memset(data, 0x5c, sizeof(data));
	c = tst_wcache_create(16, PS, LPC_IO_SYNC, UINT32_MAX, 100, 100);
	setup(c, path, data, &wt, &ct, name);

	CHECK_EQ(lpc_file_open(c, path, O_RDWR, 0, &g), 0, "%s: the open", name);	/* 4 */
	REQUIRE(g, "%s: no file", name);
	CHECK(g == file, "%s: the open made a second copy of the file (A.5)", name);
	CHECK_EQ(lpc_pread(g, buf, PS, 0), PS, "%s: read in the window", name);
	CHECK_EQ(tst_first_diff(buf, data, PS), -1, "%s: page 0 read in the window", name);

	tst_stop_release();							/* 5 */
	pthread_join(wt, &wrc);
	pthread_join(ct, NULL);
	tst_stop_disarm();
	CHECK_EQ((intptr_t)wrc, 0, "%s: W's pass", name);
	CHECK_EQ(atomic_load(&c_rc), 0, "%s: the close", name);
	CHECK_EQ(lpc_pread(g, buf, PS, 0), PS, "%s: read after the close", name);
	CHECK_EQ(tst_first_diff(buf, data, PS), -1,
		 "%s: page 0 after the close: stale bytes from before the write", name);
	CHECK_EQ(lpc_file_close(g), 0, "%s: the reopened file's close", name);
	CHECK_EQ(tst_kernel_read(path, back, sizeof(back)), FSIZE, "%s: kernel size", name);
	CHECK_EQ(tst_first_diff(back, data, PS), -1, "%s: page 0 on disk", name);
	tst_cache_destroy(c);
}

static void story_trunc(const char *path)
{
	const char *name = "2 (O_TRUNC during the last close)";
	unsigned char data[PS], buf[PS], back[FSIZE];
	struct lpc_cache *c;
	pthread_t wt, ct;
	void *wrc;

	memset(data, 0x5c, sizeof(data));
	c = tst_wcache_create(16, PS, LPC_IO_SYNC, UINT32_MAX, 100, 100);
	setup(c, path, data, &wt, &ct, name);

	start_t(c, path);							/* 4 */
	CHECK(wait_t(), "%s: the O_TRUNC open has not returned after 2 s (it waits for the close)",
	      name);
	CHECK(!atomic_load(&c_done), "%s: the close returned", name);

	tst_stop_release();							/* 5 */
	pthread_join(wt, &wrc);
	pthread_join(ct, NULL);
	pthread_join(tt, NULL);
	tst_stop_disarm();
	CHECK_EQ(atomic_load(&t_rc), -EBUSY, "%s: the O_TRUNC open during the close", name);
	if (atomic_load(&t_rc) == 0)
		lpc_file_close(t_file);
	CHECK_EQ((intptr_t)wrc, 0, "%s: W's pass", name);
	CHECK_EQ(atomic_load(&c_rc), 0, "%s: the close", name);
	CHECK_EQ(tst_kernel_read(path, back, sizeof(back)), FSIZE, "%s: kernel size", name);
	CHECK_EQ(tst_first_diff(back, data, PS), -1, "%s: page 0 on disk", name);

	t_file = NULL;
	CHECK_EQ(lpc_file_open(c, path, O_RDWR | O_TRUNC, 0644, &t_file), 0,
		 "%s: the O_TRUNC open after the close", name);
	if (t_file) {
		CHECK_EQ(lpc_pread(t_file, buf, PS, 0), 0, "%s: the truncated file reads empty",
			 name);
		CHECK_EQ(tst_file_size(path), 0, "%s: kernel size after the open", name);
		CHECK_EQ(lpc_file_close(t_file), 0, "%s: T's close", name);
	}
	CHECK_EQ(tst_file_size(path), 0, "%s: kernel size after every close", name);
	tst_cache_destroy(c);
}

static bool closing_of(struct lpc_file *f)
{
	bool closing;

	pthread_mutex_lock(&f->files->lock);
	closing = f->closing;
	pthread_mutex_unlock(&f->files->lock);
	return closing;
}

static void story_trunc_locked(const char *path)
{
	const char *name = "3 (O_TRUNC by a page lock's holder during the last close)";
	unsigned char data[PS], back[FSIZE];
	struct lpc_cache *c;
	struct lpc_page *p;
	pthread_t ct;

	memset(data, 0x77, sizeof(data));
	c = tst_wcache_create(16, PS, LPC_IO_SYNC, UINT32_MAX, 100, 100);
	file = tst_file_open(c, path, O_RDWR);
	REQUIRE(lpc_page_get(file, 0, 0, &p) == 0, "%s: page 0", name);		/* 1 */
	lpc_page_lock(p);
	memcpy(lpc_page_data(p), data, PS);
	REQUIRE(lpc_page_mark_dirty(p) == 0, "%s: mark dirty", name);
	atomic_store(&c_done, false);						/* 2 */
	atomic_store(&c_rc, 1);
	REQUIRE(pthread_create(&ct, NULL, c_main, NULL) == 0);
	while (!closing_of(file))						/* 3 */
		tst_sleep_us(1000);

	start_t(c, path);							/* 4 */
	CHECK(wait_t(), "%s: the O_TRUNC open has not returned after 2 s (deadlock: it waits "
			"for the close, the close for the page lock this thread holds)",
	      name);

	lpc_page_unlock(p);							/* 5 */
	lpc_page_put(p);
	pthread_join(ct, NULL);
	pthread_join(tt, NULL);
	CHECK_EQ(atomic_load(&t_rc), -EBUSY, "%s: the O_TRUNC open during the close", name);
	if (atomic_load(&t_rc) == 0)
		lpc_file_close(t_file);
	CHECK_EQ(atomic_load(&c_rc), 0, "%s: the close", name);
	CHECK_EQ(tst_kernel_read(path, back, sizeof(back)), FSIZE, "%s: kernel size", name);
	CHECK_EQ(tst_first_diff(back, data, PS), -1, "%s: page 0 on disk", name);
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	char path[512];

	tst_init(argc, argv, 60);
	if (!LPC_DEBUG)
		tst_skip("needs -DLPC_DEBUG=ON (yield points)");
	tst_require_tmpdir();
	REQUIRE(tst_make_file("open_closing1", FSIZE, 3, path, sizeof(path)) == 0);
	story_open(path);
	REQUIRE(tst_make_file("open_closing2", FSIZE, 3, path, sizeof(path)) == 0);
	story_trunc(path);
	REQUIRE(tst_make_file("open_closing3", FSIZE, 3, path, sizeof(path)) == 0);
	story_trunc_locked(path);
	return tst_finish();
}
