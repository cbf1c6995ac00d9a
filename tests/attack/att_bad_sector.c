/* SPDX-License-Identifier: MIT */
/*
 * att_bad_sector - one unreadable page (a medium error: the device fails
 * every request that covers it, whole, as an O_DIRECT preadv does) makes
 * GOOD pages fail with -EIO, because runs and readahead windows put pages
 * nobody asked for in the same request as the page the caller wants
 * (run.c U4-U5: "a failed read fails every page it covered"), and nothing
 * reads the caller's page again on its own (the kernel's filemap_read does:
 * a readahead I/O error is retried with a one-page read before it is
 * reported).  The backend here is the real one wrapped so that a request
 * overlapping page BAD of the file returns -EIO (fgate.h style).
 *   1 LPC_FADV_SEQUENTIAL: lpc_pread of page 0 (good) -> its window [0, 128)
 *     covers BAD = 40 -> -EIO.  Readahead off: the same call succeeds.
 *   2 lpc_pread(0, 8 pages), BAD = 5, readahead off: lpc.h says "a later
 *     failure ends the read short (C.2)": 5 pages expected; the run of 8
 *     pages is one request -> -EIO for page 0.
 *   3 normal readahead, a reader waiting on page 33 of an async window
 *     [33, 97) that covers BAD = 40 (held at a gate until the reader waits)
 *     -> -EIO for page 33 (good).
 * Usage: att_bad_sector [sync|uring]    Exit: 0 held, 1 defect shown.
 */
#include "att.h"
#include "fgate.h"

static const size_t PS = 4096;
static uint64_t bad_id, bad_page = UINT64_MAX;
static const struct lpc_io_backend_ops *inner;
static struct lpc_io_backend_ops bs_ops;

static bool covers_bad(struct lpc_io_file *f, uint64_t off, size_t len)
{
	return f->id == bad_id && off < (bad_page + 1) * PS && off + len > bad_page * PS;
}

static ssize_t bs_read(struct lpc_io_file *f, void *buf, size_t len, uint64_t off, uint64_t index)
{
	ssize_t r = inner->read(f, buf, len, off, index);

	return r >= 0 && covers_bad(f, off, len) ? -EIO : r;
}

static ssize_t bs_readv(struct lpc_io_file *f, const struct iovec *iov, int iovcnt, uint64_t off,
			uint64_t index)
{
	size_t len = 0;
	ssize_t r = inner->readv(f, iov, iovcnt, off, index);

	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	return r >= 0 && covers_bad(f, off, len) ? -EIO : r;
}

/* fgate's gate outside (holds), the bad sector inside. */
static void install(struct lpc_cache *c)
{
	inner = c->io.ops;
	bs_ops = *c->io.ops;
	bs_ops.read = bs_read;
	bs_ops.readv = bs_readv;
	c->io.ops = &bs_ops;
	fg_install(c);
}

static struct lpc_file *open_file(struct lpc_cache *c, const char *path)
{
	struct lpc_file *f;

	if (lpc_file_open(c, path, O_RDONLY, 0, &f))
		exit(1);
	return f;
}

static ssize_t case1(int backend, bool ra, const char *path)
{
	struct lpc_cache *c = att_cache(4096 * PS, PS, backend, LPC_LOOKUP_LOCKLESS,
					ra ? 0 : LPC_READAHEAD_OFF, 0);
	struct lpc_file *f;
	uint64_t buf[512];
	ssize_t r;

	install(c);
	f = open_file(c, path);
	bad_page = 40;
	lpc_fadvise(f, 0, 0, LPC_FADV_SEQUENTIAL);
	r = lpc_pread(f, buf, PS, 0);
	if (r == (ssize_t)PS && att_bad_word(buf, PS, 0, 4) >= 0)
		r = -1000;
	lpc_file_close(f);
	lpc_cache_destroy(c);
	return r;
}

static ssize_t case2(int backend, const char *path)
{
	struct lpc_cache *c = att_cache(4096 * PS, PS, backend, LPC_LOOKUP_LOCKLESS,
					LPC_READAHEAD_OFF, 0);
	struct lpc_file *f;
	uint64_t buf[8 * 512];
	ssize_t r;

	install(c);
	f = open_file(c, path);
	bad_page = 5;
	r = lpc_pread(f, buf, 8 * PS, 0);
	lpc_file_close(f);
	lpc_cache_destroy(c);
	return r;
}

static struct lpc_file *f3;
static ssize_t r3;
static void *read33(void *arg)
{
	uint64_t buf[512];

	(void)arg;
	r3 = lpc_pread(f3, buf, PS, 33 * PS);
	return NULL;
}

static ssize_t case3(int backend, const char *path)
{
	struct lpc_cache *c = att_cache(4096 * PS, PS, backend, LPC_LOOKUP_LOCKLESS, 0, 0);
	uint64_t buf[512];
	pthread_t th;

	install(c);
	f3 = open_file(c, path);
	bad_page = 40;
	lpc_pread(f3, buf, PS, 0);
	lpc_pread(f3, buf, PS, PS); /* window [1, 33), marker on 2 */
	fg_close(fg_file_id(path));
	fg.min_index = 33;
	lpc_pread(f3, buf, PS, 2 * PS); /* the async window [33, 97): held */
	if (!fg_wait_entered(1, 5000))
		return -2000;
	pthread_create(&th, NULL, read33, NULL);
	usleep(200000); /* the reader waits on page 33's lock (M6) */
	fg_open();
	pthread_join(th, NULL);
	lpc_file_close(f3);
	lpc_cache_destroy(c);
	return r3;
}

int main(int argc, char **argv)
{
	int backend = argc > 1 && !strcmp(argv[1], "uring") ? LPC_IO_URING : LPC_IO_SYNC;
	char path[400];
	ssize_t a, b, d, e;
	int bad = 0;

	att_make_file("bad", 1024 * PS, 4, path, sizeof(path));
	bad_id = fg_file_id(path);
	a = case1(backend, true, path);
	b = case1(backend, false, path);
	printf("  1 SEQUENTIAL, page 40 bad: lpc_pread(page 0) = %zd with readahead, %zd without\n",
	       a, b);
	bad |= a != b;
	d = case2(backend, path);
	printf("  2 page 5 bad: lpc_pread(pages 0-7) = %zd (C.2: 5 pages = %zu)\n", d, 5 * PS);
	bad |= d != (ssize_t)(5 * PS);
	e = case3(backend, path);
	printf("  3 page 40 bad: lpc_pread(page 33) waiting on the async window = %zd\n", e);
	bad |= e != (ssize_t)PS;
	att_cleanup();
	printf(bad ? "DEFECT: a bad page fails reads of good pages in the same request\n" : "held\n");
	return bad;
}
