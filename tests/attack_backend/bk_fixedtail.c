/* SPDX-License-Identifier: MIT */
/*
 * bk_fixedtail - a storage of fixed size (no truncate operation: "NULL: the
 * storage's size is fixed", lpc.h) whose size is not a multiple of the
 * page size.  One byte written INSIDE that size, in the last page, and
 * lpc_fsync returns -EOPNOTSUPP (and so does every later fsync and the last
 * close), although the write changed no size: lpc's own whole-page
 * writeback (BK6) put the page's tail past the storage's end and its
 * publication then "needs" a truncate that the table does not have.  A
 * fixed-size storage (a block device, a preallocated object) of such a
 * size can never be fsynced once its last page is written, and the storage
 * was made longer than its fixed size (12288 instead of 10000).
 * Second case, a storage that refuses writes past its end as a block
 * device does (pwrite(2) past a device's end: ENOSPC; here a device of
 * 10240 bytes, 20 sectors of 512, under 4 KiB pages): the byte written at
 * 9000, inside the device, never reaches it: every writeback of its page
 * fails, lpc_fsync fails, and the last close drops the page (J.6): an
 * in-bounds write is lost.
 * Fixed: lpc_fsync returns 0, the byte is on the storage, and the storage
 * keeps its size (10000, 10240) (lpc writes only up to a fixed size, or
 * does not report its own tail as an error).
 *   cd tests/attack_backend && make out-release/bk_fixedtail && out-release/bk_fixedtail
 */
#include <fcntl.h>
#include "bk.h"

static unsigned char pat(uint64_t i) { return (unsigned char)(i * 7 + 3); }

/* A device: no write past its end. */
static ssize_t dev_write(void *h, const struct iovec *iov, int n, uint64_t off)
{
	struct mem *m = h;
	size_t len = 0;

	for (int i = 0; i < n; i++)
		len += iov[i].iov_len;
	if (off + len > m->size)
		return -ENOSPC;
	return mem_write(h, iov, n, off);
}

int main(void)
{
	static struct mem m;
	struct lpc_backend_ops ops = mem_ops;
	struct lpc_cache *c = att_cache();
	struct lpc_file *f;
	ssize_t w;
	int rc, rc2, rcc, bad = 0;

	ops.truncate = NULL; /* fixed size */
	mem_init(&m, 10000);
	mem_fill(&m, pat);
	/* Fixed: lpc.h BK6 refuses such a storage read-write at open. */
	rc = lpc_file_open_backend(c, "fixed", &ops, &m, O_RDWR, &f);
	if (rc == -EINVAL) {
		printf("fixed size of 10000 bytes refused read-write at open (-EINVAL, BK6)\n");
		return 0;
	}
	CHECK(rc == 0);
	w = lpc_pwrite(f, "X", 1, 9000); /* inside the size, last page */
	rc = lpc_fsync(f);
	rc2 = lpc_fsync(f);
	rcc = lpc_file_close(f);
	printf("pwrite=%zd fsync=%d fsync again=%d close=%d storage size=%llu byte[9000]=%c\n",
	       w, rc, rc2, rcc, (unsigned long long)m.size, m.data[9000]);
	if (w != 1 || rc != 0 || rc2 != 0 || rcc != 0) {
		printf("DEFECT: a write inside a fixed-size storage makes lpc_fsync/close fail\n");
		bad = 1;
	}
	if (m.size != 10000) {
		printf("DEFECT: lpc changed the size of a fixed-size storage\n");
		bad = 1;
	}

	static struct mem d;
	ops.write = dev_write;
	mem_init(&d, 10240);
	mem_fill(&d, pat);
	CHECK(lpc_file_open_backend(c, "device", &ops, &d, O_RDWR, &f) == 0);
	w = lpc_pwrite(f, "X", 1, 9000);
	rc = lpc_fsync(f);
	rcc = lpc_file_close(f);
	printf("device of 10240 bytes: pwrite=%zd fsync=%d close=%d storage size=%llu byte[9000]=0x%02x ('X'=0x58)\n",
	       w, rc, rcc, (unsigned long long)d.size, d.data[9000]);
	if (d.data[9000] != 'X' || rc != 0) {
		printf("DEFECT: a write inside a fixed-size device never reaches it (dropped at close)\n");
		bad = 1;
	}
	lpc_cache_destroy(c);
	return bad;
}
