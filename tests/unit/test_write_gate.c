/* SPDX-License-Identifier: MIT */
/*
 * test_write_gate.c - writes through a cache whose backend is wrapped by the
 * test gate (tests/common/gate_io.h), on each write backend: the gate must
 * forward every op of struct lpc_io_backend_ops (a write through a gate that
 * lacked writev, writev_batch or truncate called NULL), and hold or fail
 * writes and syncs when a test closes it for them.
 *
 *   through  lpc_pwrite, lpc_fsync and lpc_truncate with the gate open: the
 *            file holds the bytes, the gate saw the writes
 *   held     writes held at the gate: lpc_fsync waits with the pages in
 *            WRITEBACK (still readable), and returns 0 once the gate opens
 *   failed   a held write failed with EIO at the gate: lpc_fsync returns
 *            -EIO once, the page is dirty again, the next lpc_fsync writes it
 *   sync     fdatasync failed at the gate: -EIO once, then 0
 */
#include <fcntl.h>

#include "../common/gate_io.h"
#include "../common/write_test.h"
#include "page/page.h"

#define PS 4096
#define NPAGES 4

static struct lpc_file *file;
static _Atomic int s_rc;
static _Atomic bool s_done;

static void *fsync_main(void *arg)
{
	(void)arg;
	atomic_store(&s_rc, lpc_fsync(file));
	atomic_store(&s_done, true);
	return NULL;
}

static void fill(unsigned char *buf, size_t len, unsigned salt)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(salt * 31 + i * 7 + i / PS);
}

/* The file at path holds want[0, len) and is len bytes long. */
static void check_file(const char *path, const unsigned char *want, size_t len, const char *what)
{
	unsigned char back[NPAGES * PS];

	memset(back, 0xee, sizeof(back));
	CHECK_EQ(tst_kernel_read(path, back, sizeof(back)), (int64_t)len, "%s: size", what);
	CHECK_EQ(tst_first_diff(back, want, len), -1, "%s: bytes", what);
}

static uint32_t page_flags(uint64_t index)
{
	struct lpc_page *p;
	uint32_t fl;

	if (lpc_page_find(file, index, &p) != 0)
		return 0;
	fl = lpc_page_flags(p);
	lpc_page_put(p);
	return fl;
}

static void run(int backend)
{
	unsigned char data[NPAGES * PS], back[NPAGES * PS];
	struct lpc_cache *c;
	char path[512];
	pthread_t th;
	size_t size;

	printf("backend %s\n", tst_backend_name(backend));
	REQUIRE(tst_make_file("write_gate", NPAGES * PS, 9, path, sizeof(path)) == 0);
	c = tst_wcache_create(16, PS, backend, UINT32_MAX, 100, 100);
	tst_gate_install(c);
	file = tst_file_open(c, path, O_RDWR);

	/* through */
	fill(data, sizeof(data), 1);
	tst_gate_close_ops(0);
	tst_gate_open(0);
	CHECK_EQ(lpc_pwrite(file, data, sizeof(data), 0), sizeof(data), "through: lpc_pwrite");
	CHECK_EQ(lpc_fsync(file), 0, "through: lpc_fsync");
	CHECK(tst_gate_writes() > 0, "through: the writes went through the gate");
	check_file(path, data, sizeof(data), "through");
	size = 3 * PS + 100;
	CHECK_EQ(lpc_truncate(file, size), 0, "through: lpc_truncate");
	CHECK_EQ(lpc_fsync(file), 0, "through: lpc_fsync after truncate");
	check_file(path, data, size, "through, truncated");

	/* held */
	fill(data, size, 2);
	CHECK_EQ(lpc_pwrite(file, data, size, 0), size, "held: lpc_pwrite");
	tst_gate_close_ops(LPC_IO_WRITE);
	atomic_store(&s_done, false);
	REQUIRE(pthread_create(&th, NULL, fsync_main, NULL) == 0);
	REQUIRE(tst_gate_wait_entered(1, 10000), "held: no write reached the gate");
	CHECK(page_flags(0) & LPC_PG_WRITEBACK, "held: page 0 in WRITEBACK (0x%x)", page_flags(0));
	memset(back, 0, sizeof(back));
	CHECK_EQ(lpc_pread(file, back, size, 0), size, "held: lpc_pread");
	CHECK_EQ(tst_first_diff(back, data, size), -1, "held: lpc's bytes during the write");
	tst_sleep_us(20000);
	CHECK(!atomic_load(&s_done), "held: lpc_fsync returned with its write held");
	tst_gate_open(0);
	pthread_join(th, NULL);
	CHECK_EQ(atomic_load(&s_rc), 0, "held: lpc_fsync");
	check_file(path, data, size, "held");

	/* failed */
	fill(data, PS, 3);
	CHECK_EQ(lpc_pwrite(file, data, PS, 0), PS, "failed: lpc_pwrite");
	tst_gate_close_ops(LPC_IO_WRITE);
	atomic_store(&s_done, false);
	REQUIRE(pthread_create(&th, NULL, fsync_main, NULL) == 0);
	REQUIRE(tst_gate_wait_entered(1, 10000), "failed: no write reached the gate");
	tst_gate_open(EIO);
	pthread_join(th, NULL);
	CHECK_EQ(atomic_load(&s_rc), -EIO, "failed: lpc_fsync reports the write error");
	CHECK(page_flags(0) & LPC_PG_DIRTY, "failed: page 0 dirty again (0x%x)", page_flags(0));
	tst_gate_clear_error();
	CHECK_EQ(lpc_fsync(file), 0, "failed: lpc_fsync once the error is gone");
	check_file(path, data, size, "failed");

	/* sync */
	tst_gate_close_ops(LPC_IO_SYNCOP);
	tst_gate_open(EIO);
	CHECK_EQ(lpc_fsync(file), -EIO, "sync: lpc_fsync reports fdatasync's error");
	tst_gate_clear_error();
	CHECK_EQ(lpc_fsync(file), 0, "sync: then 0");
	tst_gate_close_ops(0);
	tst_gate_open(0);

	CHECK_EQ(lpc_file_close(file), 0, "close");
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 60);
	tst_require_tmpdir();
	for (size_t b = 0; b < TST_NWRITE_BACKENDS; b++)
		run(tst_write_backends[b]);
	return tst_finish();
}
