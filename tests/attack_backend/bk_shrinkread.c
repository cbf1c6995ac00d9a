/* SPDX-License-Identifier: MIT */
/*
 * bk_shrinkread - the storage shrinks behind lpc (another client cuts it
 * from 65536 to 10000 bytes) before lpc has cached anything.  BK5: "a read
 * that comes back short (the storage shrank) reads once more and then,
 * where size says the storage still goes on, fails with -EIO" - and where
 * size says it ends, the file ends there (C.3; a kernel's file returns
 * 10000).  Observed: the first lpc_pread(65536 @ 0) returns 12288: the
 * 10000 bytes and 2288 zeros up to the end of the page the storage ended
 * in, bytes that exist nowhere; the same call again returns 10000.
 * Fixed: the first read returns 10000.
 *   cd tests/attack_backend && make out-release/bk_shrinkread && out-release/bk_shrinkread
 */
#include <fcntl.h>
#include "bk.h"

int main(void)
{
	static struct mem m;
	static char rb[65536];
	struct lpc_cache *c = att_cache();
	struct lpc_file *f;
	ssize_t r1, r2;

	mem_init(&m, 65536);
	memset(m.data, 'O', 65536);
	CHECK(lpc_file_open_backend(c, "shrink", &mem_ops, &m, O_RDONLY, &f) == 0);
	pthread_mutex_lock(&m.lock);
	m.size = 10000; /* another client truncates */
	pthread_mutex_unlock(&m.lock);
	memset(rb, '?', sizeof(rb));
	r1 = lpc_pread(f, rb, sizeof(rb), 0);
	printf("storage 65536 -> 10000 bytes behind lpc: first pread(65536 @ 0)=%zd (byte[10000]=0x%02x)",
	       r1, (unsigned char)rb[10000]);
	r2 = lpc_pread(f, rb, sizeof(rb), 0);
	printf(", again=%zd\n", r2);
	lpc_file_close(f);
	lpc_cache_destroy(c);
	if (r1 != 10000) {
		printf("DEFECT: a read returned bytes past the storage's end after it shrank\n");
		return 1;
	}
	return 0;
}
