/* SPDX-License-Identifier: MIT */
/*
 * regress_size_kernel.c - stories: the kernel's size of a file (io.size, or
 * what another process made it) is not lpc's, and must neither bound
 * lpc_pin nor be cut by a publish of lpc's size (writeback/writeback.c,
 * steps SZ1-SZ5; DESIGN: "lpc_pread, lpc_pin and writeback all use the same
 * size").  Sync and io_uring backends, 512 B and 4 KiB pages; the flusher
 * is kept out.  No thread but the test's: nothing to park.
 *
 * Story 1, lpc_pin bounded by the kernel's size:
 *   1. The file is one page.  lpc_pwrite extends it to three (not written
 *      back: the kernel's file, and io.size, still one page).
 *   2. lpc_pread(0, 3 pages) returns 3 pages.  Broken: lpc_pin(0, 3 pages)
 *      pinned 1 page (the range cut at io.size), so lpc_pin_iov of the
 *      range said -EINVAL.  Fixed: 3 pages, and the iovecs cover the range
 *      with the bytes written.
 *
 * Story 2, the kernel's size above lpc's (another process grew the file):
 *   1. The file is two pages; lpc_pwrite changes a byte (lpc keeps the
 *      size from now on: two pages) and lpc_fsync writes it.
 *   2. Another descriptor ("another process") writes pages 2-5.
 *   3. lpc_pread past lpc's size returns 0 (it asked the kernel: the file
 *      is 6 pages, lpc's size stays 2).
 *   4. lpc_pin(0, 4 pages) pins lpc's 2 pages.  Broken: the range was cut
 *      at the kernel's 6 pages, pages 2-3 lie past lpc's size, and the pin
 *      of an in-range offset failed with -ENXIO.
 *   5. lpc_fsync and the last lpc_file_close return 0 and the file still
 *      holds the other process's pages.  Broken: the publish cut the file
 *      to lpc's 2 pages (the SQLite VFS in detect mode lost a
 *      checkpoint this way).
 */
#include <fcntl.h>
#include <sys/uio.h>

#include "../common/write_test.h"

static void story_pin_extend(int backend, size_t ps)
{
	unsigned char want[3 * 4096], back[3 * 4096];
	struct lpc_page *pages[4];
	struct iovec iov[4];
	struct lpc_cache *c;
	struct lpc_file *f;
	char path[512];
	int n, k;

	REQUIRE(tst_make_file("size_pin", ps, 3, path, sizeof(path)) == 0);	/* 1 */
	tst_file_bytes(3, 0, want, ps);
	for (size_t i = ps; i < 3 * ps; i++)
		want[i] = (unsigned char)(i * 13 + 1);
	c = tst_wcache_create(16, ps, backend, UINT32_MAX, 100, 100);
	f = tst_file_open(c, path, O_RDWR);
	REQUIRE(lpc_pwrite(f, want + ps, 2 * ps, ps) == (ssize_t)(2 * ps), "extend to 3 pages");

	CHECK_EQ(lpc_pread(f, back, 3 * ps, 0), (ssize_t)(3 * ps), "story 1: lpc_pread");	/* 2 */
	n = lpc_pin(f, 0, 3 * ps, LPC_PIN_READ, pages, 4);
	CHECK_EQ(n, 3, "story 1: lpc_pin(0, 3 pages) of a file lpc made 3 pages");
	if (n > 0) {
		k = lpc_pin_iov(pages, (unsigned)n, 0, 3 * ps, iov);
		CHECK(k > 0, "story 1: lpc_pin_iov of the range = %d", k);
		if (k > 0) {
			size_t at = 0;

			for (int i = 0; i < k; i++) {
				CHECK_EQ(tst_first_diff(iov[i].iov_base, want + at, iov[i].iov_len), -1,
					 "story 1: iovec %d's bytes", i);
				at += iov[i].iov_len;
			}
			CHECK_EQ(at, 3 * ps, "story 1: the iovecs' length");
		}
		lpc_unpin(pages, (unsigned)n, LPC_PIN_READ);
	}
	CHECK_EQ(lpc_file_close(f), 0, "story 1: close");
	CHECK(tst_kernel_equals(path, want, 3 * ps), "story 1: the kernel's file after close");
	tst_cache_destroy(c);
}

static void story_kernel_above(int backend, size_t ps)
{
	unsigned char want[6 * 4096], b;
	struct lpc_page *pages[4];
	struct lpc_cache *c;
	struct lpc_file *f;
	char path[512];
	int fd, n;

	REQUIRE(tst_make_file("size_above", 2 * ps, 4, path, sizeof(path)) == 0);	/* 1 */
	tst_file_bytes(4, 0, want, 2 * ps);
	c = tst_wcache_create(16, ps, backend, UINT32_MAX, 100, 100);
	f = tst_file_open(c, path, O_RDWR);
	want[1] ^= 0xff;
	REQUIRE(lpc_pwrite(f, want + 1, 1, 1) == 1, "lpc_pwrite one byte");
	REQUIRE(lpc_fsync(f) == 0, "lpc_fsync");

	for (size_t i = 2 * ps; i < 6 * ps; i++)				/* 2 */
		want[i] = (unsigned char)(i * 7 + 3);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	REQUIRE(fd >= 0, "open the file again");
	REQUIRE(pwrite(fd, want + 2 * ps, 4 * ps, (off_t)(2 * ps)) == (ssize_t)(4 * ps),
		"the other process's write");
	close(fd);

	CHECK_EQ(lpc_pread(f, &b, 1, 3 * ps), 0, "story 2: lpc_pread past lpc's size");	/* 3 */

	n = lpc_pin(f, 0, 4 * ps, LPC_PIN_READ, pages, 4);			/* 4 */
	CHECK_EQ(n, 2, "story 2: lpc_pin(0, 4 pages) with lpc's size 2 pages, the kernel's 6");
	if (n > 0)
		lpc_unpin(pages, (unsigned)n, LPC_PIN_READ);

	CHECK_EQ(lpc_fsync(f), 0, "story 2: lpc_fsync");			/* 5 */
	CHECK_EQ(tst_file_size(path), (int64_t)(6 * ps), "story 2: the file's size after lpc_fsync");
	CHECK_EQ(lpc_file_close(f), 0, "story 2: close");
	CHECK(tst_kernel_equals(path, want, 6 * ps),
	      "story 2: the file after the last close holds the other process's pages");
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	static const int backends[] = { LPC_IO_SYNC, LPC_IO_URING };
	static const size_t sizes[] = { 512, 4096 };

	tst_init(argc, argv, 60);
	tst_require_tmpdir();
	for (unsigned b = 0; b < 2; b++) {
		for (unsigned s = 0; s < 2; s++) {
			printf("# %s, %zu-byte pages\n", tst_backend_name(backends[b]), sizes[s]);
			story_pin_extend(backends[b], sizes[s]);
			story_kernel_above(backends[b], sizes[s]);
		}
	}
	return tst_finish();
}
