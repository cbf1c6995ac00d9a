/* SPDX-License-Identifier: MIT */
/*
 * test_write_errors.c - write errors through the I/O layer's fault hook
 * (lpc_io_fault_set), on every write backend (guarantee H.3 of lpc.h):
 *
 *  - EIO and ENOSPC on writeback: lpc_fsync returns the error; the data
 *    stays dirty and readable; an fsync while the fault lasts fails again
 *    (a new error); once it clears, lpc_fsync returns 0 and the file holds
 *    every byte written; the next fsync returns 0 (reported once);
 *  - short writes (every write transfers only 2 KiB) are completed, never
 *    reported as success with bytes missing;
 *  - an error the flusher met while no fsync ran goes to the first fsync
 *    after it, and only to it;
 *  - an fdatasync error is returned (once);
 *  - the last close returns a write error, and a second file's error does
 *    not leak into the first file's fsync.
 *
 * Usage: test_write_errors [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include "../common/write_test.h"
#include "cache/cache.h"

static const size_t PS = 4096;

static void arm(struct lpc_cache *c, unsigned ops, int err, size_t short_bytes)
{
	struct lpc_io_fault ft = { .ops = ops, .err = err, .short_bytes = short_bytes };

	REQUIRE(lpc_io_fault_set(&c->io, &ft) == 0);
}

static void disarm(struct lpc_cache *c)
{
	lpc_io_fault_set(&c->io, NULL);
}

static void g_h3_error_once(int backend, int err)
{
	char path[600];
	struct lpc_cache *c = tst_wcache_create(64, PS, backend, 60000, 80, 90);
	struct lpc_file *f;
	unsigned char want[8 * 4096], got[8 * 4096];
	struct lpc_stats s;

	tst_wfile("e", path, sizeof(path), 2 * PS, 21);
	tst_file_bytes(21, 0, want, 2 * PS);
	f = tst_file_open(c, path, O_RDWR);
	for (size_t i = 100; i < sizeof(want); i++)
		want[i] = (unsigned char)(i * 13 + 1);
	CHECK_EQ(lpc_pwrite(f, want + 100, 5 * PS, 100), (ssize_t)(5 * PS));
	arm(c, LPC_IO_WRITE, err, 0);
	CHECK_EQ(lpc_fsync(f), -err, "the write error");
	CHECK_EQ(lpc_fsync(f), -err, "fault still armed: a new error");
	lpc_stats(c, &s);
	CHECK(s.write_errors >= 2, "write_errors %llu", (unsigned long long)s.write_errors);
	CHECK_EQ(s.dirty_pages, 6, "rule WRITE-ERROR-KEEPS-DIRTY violated: failed pages stay dirty");
	CHECK_EQ(lpc_invalidate(f, 0, 0), 0, "and are never dropped");
	CHECK_EQ(lpc_pread(f, got, sizeof(got), 0), (ssize_t)(5 * PS + 100));
	CHECK(!memcmp(got, want, 5 * PS + 100), "readable with the written data");
	disarm(c);
	CHECK_EQ(lpc_fsync(f), 0, "fault cleared: written");
	CHECK_EQ(lpc_fsync(f), 0, "reported once");
	tst_kernel_equals(path, want, 5 * PS + 100);
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
}

static void short_writes(int backend)
{
	char path[600];
	struct lpc_cache *c = tst_wcache_create(64, PS, backend, 60000, 80, 90);
	struct lpc_file *f;
	unsigned char want[16 * 4096];
	struct lpc_stats s;

	tst_wfile("e", path, sizeof(path), 0, 22);
	f = tst_file_open(c, path, O_RDWR);
	for (size_t i = 0; i < sizeof(want); i++)
		want[i] = (unsigned char)(i * 31 + 7);
	CHECK_EQ(lpc_pwrite(f, want, sizeof(want) - 99, 0), (ssize_t)(sizeof(want) - 99));
	arm(c, LPC_IO_WRITE, 0, 2048);
	CHECK_EQ(lpc_fsync(f), 0, "short writes completed");
	CHECK(lpc_io_faults_fired(&c->io) >= 32, "every write was short (%llu)",
	      (unsigned long long)lpc_io_faults_fired(&c->io));
	disarm(c);
	lpc_stats(c, &s);
	CHECK_EQ(s.dirty_pages, 0);
	CHECK_EQ(s.write_errors, 0);
	tst_kernel_equals(path, want, sizeof(want) - 99);
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
}

static void g_h3_flusher_error(int backend)
{
	char path[600];
	/* The flusher writes pages dirty for 20 ms. */
	struct lpc_cache *c = tst_wcache_create(64, PS, backend, 20, 80, 90);
	struct lpc_file *f;
	unsigned char want[4096];
	struct lpc_stats s;
	int i;

	tst_wfile("e", path, sizeof(path), PS, 23);
	f = tst_file_open(c, path, O_RDWR);
	memset(want, 0x42, sizeof(want));
	arm(c, LPC_IO_WRITE, EIO, 0);
	CHECK_EQ(lpc_pwrite(f, want, PS, 0), (ssize_t)PS);
	for (i = 0; i < 500 && lpc_io_faults_fired(&c->io) == 0; i++)
		tst_sleep_us(2000);
	CHECK(lpc_io_faults_fired(&c->io) > 0, "the flusher wrote (and failed)");
	disarm(c);
	lpc_stats(c, &s);
	CHECK(s.write_errors > 0);
	CHECK_EQ(lpc_fsync(f), -EIO, "an error nobody saw goes to the next fsync");
	CHECK_EQ(lpc_fsync(f), 0, "once");
	tst_kernel_equals(path, want, PS);
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
}

static void sync_error(int backend)
{
	char path[600];
	struct lpc_cache *c = tst_wcache_create(64, PS, backend, 60000, 80, 90);
	struct lpc_file *f;

	tst_wfile("e", path, sizeof(path), PS, 24);
	f = tst_file_open(c, path, O_RDWR);
	CHECK_EQ(lpc_pwrite(f, "abc", 3, 10), 3);
	arm(c, LPC_IO_SYNCOP, EIO, 0);
	CHECK_EQ(lpc_fsync(f), -EIO, "fdatasync's error");
	disarm(c);
	CHECK_EQ(lpc_fsync(f), 0, "once");
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
}

static void close_error(int backend)
{
	char path[600], path2[600];
	struct lpc_cache *c = tst_wcache_create(64, PS, backend, 60000, 80, 90);
	struct lpc_file *f, *g;
	struct lpc_io_fault ft = { .ops = LPC_IO_WRITE, .err = ENOSPC };

	tst_wfile("e", path, sizeof(path), PS, 25);
	tst_wfile("e", path2, sizeof(path2), PS, 26);
	f = tst_file_open(c, path, O_RDWR);
	g = tst_file_open(c, path2, O_RDWR);
	ft.file_id = tst_file_id(path2);
	CHECK_EQ(lpc_pwrite(f, "abc", 3, 10), 3);
	CHECK_EQ(lpc_pwrite(g, "abc", 3, 10), 3);
	REQUIRE(lpc_io_fault_set(&c->io, &ft) == 0);
	CHECK_EQ(lpc_fsync(f), 0, "the other file's error is not this one's");
	CHECK_EQ(lpc_file_close(g), -ENOSPC, "the last close returns the write error");
	disarm(c);
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 120);
	tst_require_tmpdir();
	for (size_t b = 0; b < TST_NWRITE_BACKENDS; b++) {
		int be = tst_write_backends[b];

		printf("backend %s\n", tst_backend_name(be));
		TST_RUN(g_h3_error_once(be, EIO));
		TST_RUN(g_h3_error_once(be, ENOSPC));
		TST_RUN(short_writes(be));
		TST_RUN(g_h3_flusher_error(be));
		TST_RUN(sync_error(be));
		TST_RUN(close_error(be));
	}
	return tst_finish();
}
