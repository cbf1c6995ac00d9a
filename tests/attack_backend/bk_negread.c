/* SPDX-License-Identifier: MIT */
/*
 * bk_negread - a read operation that fails with a negative result outside
 * int's range (here -2^32: a backend that returns a negative 64-bit
 * status, e.g. a library's error code widened, or garbage) makes lpc cache
 * the read as a success: lpc_pread returns 4096 bytes the storage never
 * had (whatever the frame held: zeros).  BK4 says a negative result is a failed read and "nothing
 * is cached"; the adapter (io/user.c user_checked) checks only results
 * larger than asked, and filemap_read_page (miss.c) returns (int)r, so
 * -2^32 becomes 0 = success.
 * Fixed: lpc_pread fails (any negative errno, e.g. -EIO) and a later read,
 * with the backend healthy again, returns the storage's bytes.
 *   cd tests/attack_backend && make out-release/bk_negread && out-release/bk_negread
 */
#include <fcntl.h>
#include "bk.h"

static _Atomic int broken = 1;

static ssize_t neg_read(void *h, const struct iovec *iov, int n, uint64_t off)
{
	if (atomic_load(&broken))
		return -(ssize_t)(INT64_C(1) << 32);
	return mem_read(h, iov, n, off);
}

int main(void)
{
	static struct mem m;
	struct lpc_backend_ops ops = mem_ops;
	struct lpc_cache *c = att_cache();
	struct lpc_file *f;
	char buf[4096];
	ssize_t r1, r2;
	int bad = 0;

	ops.read = neg_read;
	mem_init(&m, 65536);
	memset(m.data, 'S', 65536);
	CHECK(lpc_file_open_backend(c, "neg", &ops, &m, O_RDONLY, &f) == 0);
	unsigned char b1;

	memset(buf, 0x11, sizeof(buf));
	r1 = lpc_pread(f, buf, sizeof(buf), 0);
	b1 = (unsigned char)buf[0];
	atomic_store(&broken, 0);
	memset(buf, 0, sizeof(buf));
	r2 = lpc_pread(f, buf, sizeof(buf), 0);
	printf("read op returns -2^32: lpc_pread=%zd buf[0]=0x%02x; healthy again: lpc_pread=%zd buf[0]=0x%02x (storage 'S'=0x53)\n",
	       r1, b1, r2, (unsigned char)buf[0]);
	if (r1 >= 0) {
		printf("DEFECT: a failed read (negative result) was taken as success\n");
		bad = 1;
	}
	if (r2 != 4096 || buf[0] != 'S') {
		printf("DEFECT: the failed read's page stayed cached with bytes the storage never had\n");
		bad = 1;
	}
	lpc_file_close(f);
	lpc_cache_destroy(c);
	return bad;
}
