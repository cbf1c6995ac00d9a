/* SPDX-License-Identifier: MIT */
/*
 * bk_samehandle - a name opened twice with the SAME handle (one connection
 * object per storage object, the natural way to write a backend; a second
 * open of a name returns the same lpc_file, A.5).  lpc.h: "otherwise this
 * handle is not needed and released before the call returns" - so the
 * second open calls ops->release(H) on the handle the copy still uses, and
 * every later operation of the file runs on a released handle (a backend
 * whose release frees it: a use after free).  Neither lpc.h nor the man
 * page says a handle must not be passed again while lpc holds it, and
 * lpc_file_open_backend does not check (file.c ZN4 compares nothing).
 * liblpc_rbd works around it with its own reference count (rbd.c RB3).
 * Second case, the upgrade (file.c ZN3): a read-only open and then a
 * read-write open with the same handle: lpc parks it and keeps it current,
 * and file_free releases it twice.
 * Fixed: no operation runs on a released handle (lpc sees that the handle
 * is the copy's own and keeps it, or refuses the open), and release is
 * called once, at the last close.
 *   cd tests/attack_backend && make out-release/bk_samehandle && out-release/bk_samehandle
 */
#include <fcntl.h>
#include "bk.h"

int main(void)
{
	static struct mem m;
	struct lpc_cache *c = att_cache();
	struct lpc_file *f1, *f2;
	char buf[4096];
	int bad = 0;

	mem_init(&m, 1 << 20);
	CHECK(lpc_file_open_backend(c, "same", &mem_ops, &m, O_RDWR, &f1) == 0);
	CHECK(lpc_file_open_backend(c, "same", &mem_ops, &m, O_RDWR, &f2) == 0);
	int rel_open = atomic_load(&m.released);
	lpc_pread(f1, buf, sizeof(buf), 65536);     /* a miss */
	lpc_pwrite(f1, "data", 4, 0);
	lpc_fsync(f1);
	int after = atomic_load(&m.after_release);
	lpc_file_close(f2);
	lpc_file_close(f1);
	printf("second open with the same handle: same file=%d; release calls after it=%d; operations on the released handle=%d; release calls at the end=%d\n",
	       f1 == f2, rel_open, after, atomic_load(&m.released));
	if (rel_open || after) {
		printf("DEFECT: the handle the open copy uses was released by the second open\n");
		bad = 1;
	}
	/* The upgrade (ZN3) with the same handle: parked and current at once. */
	static struct mem u;
	mem_init(&u, 1 << 20);
	CHECK(lpc_file_open_backend(c, "up", &mem_ops, &u, O_RDONLY, &f1) == 0);
	CHECK(lpc_file_open_backend(c, "up", &mem_ops, &u, O_RDWR, &f2) == 0);
	lpc_file_close(f2);
	lpc_file_close(f1);
	printf("read-only then read-write open with the same handle: release calls at the last close=%d\n",
	       atomic_load(&u.released));
	if (atomic_load(&u.released) != 1) {
		printf("DEFECT: one handle released %d times\n", atomic_load(&u.released));
		bad = 1;
	}
	lpc_cache_destroy(c);
	return bad;
}
