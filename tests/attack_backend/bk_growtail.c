/* SPDX-License-Identifier: MIT */
/*
 * bk_growtail - the storage grows behind lpc (another client appends) while
 * lpc has the file open read-only and has cached its last, partial page.
 * BK5: "Until lpc writes or truncates the file, lpc's size follows the
 * storage as it does a kernel's file: a look past the end asks size
 * again, so growth by another client is seen."  Observed:
 *  (1) an lpc_pread that starts before the old end and runs past it
 *      returns only up to the old end (5000 of 65536 bytes) although the
 *      storage is 20000 bytes long now: it did not ask size again;
 *  (2) once a read starting past the old end made lpc see the new size,
 *      the bytes between the old end and the end of that page (5000..8191)
 *      read as zeros, not as the storage's 'G': the page cached when the
 *      file ended at 5000 is served as the new file's page (stale data);
 *      only a page wholly past the old end is read again.
 * Fixed: the read at 0 returns 20000 bytes and every byte from 5000 on is
 * 'G'.
 *   cd tests/attack_backend && make out-release/bk_growtail && out-release/bk_growtail
 */
#include <fcntl.h>
#include "bk.h"

int main(void)
{
	static struct mem m;
	static char rb[65536];
	struct lpc_cache *c = att_cache();
	struct lpc_file *f;
	ssize_t r1, r2, r3, r4;
	int bad = 0;

	mem_init(&m, 5000);
	memset(m.data, 'O', 5000);
	CHECK(lpc_file_open_backend(c, "grow", &mem_ops, &m, O_RDONLY, &f) == 0);
	r1 = lpc_pread(f, rb, sizeof(rb), 0); /* caches page 1 (4096..8191) short */
	/* Another client appends 15000 bytes of 'G'. */
	pthread_mutex_lock(&m.lock);
	mem_reserve(&m, 20000);
	memset(m.data + 5000, 'G', 15000);
	m.size = 20000;
	pthread_mutex_unlock(&m.lock);
	r2 = lpc_pread(f, rb, sizeof(rb), 0);
	printf("storage 5000 -> 20000 bytes: pread(65536 @ 0) before=%zd after=%zd\n", r1, r2);
	if (r2 != 20000) {
		printf("DEFECT: a read running past the old end did not see the growth\n");
		bad = 1;
	}
	r3 = lpc_pread(f, rb, 100, 10000); /* starts past the old end */
	printf("pread(100 @ 10000)=%zd byte=%c\n", r3, r3 > 0 ? rb[0] : '-');
	memset(rb, '?', 200);
	r4 = lpc_pread(f, rb, 200, 4990);
	printf("pread(200 @ 4990)=%zd byte[4999]=0x%02x byte[5000]=0x%02x byte[5189]=0x%02x (storage: 'O'=0x4f then 'G'=0x47)\n",
	       r4, (unsigned char)rb[9], (unsigned char)rb[10], (unsigned char)rb[199]);
	if (r4 != 200 || rb[9] != 'O' || rb[10] != 'G' || rb[199] != 'G') {
		printf("DEFECT: the old last page's tail reads as zeros after the growth was seen (stale page)\n");
		bad = 1;
	}
	lpc_file_close(f);
	lpc_cache_destroy(c);
	return bad;
}
