/* SPDX-License-Identifier: MIT */
/* floor.c - the floor's descriptor array (see floor.h). */
#include <errno.h>
#include <sys/mman.h>

#include "floor.h"

void floor_create(struct floor *fl, uint64_t nr_pages)
{
	void *mem;

	fl->bytes = (size_t)nr_pages * sizeof(struct floor_desc);
	mem = mmap(NULL, fl->bytes, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		die_err(errno, "mapping %zu bytes of floor descriptors", fl->bytes);
	/* As lpc does; without THP (madvise refused) the floor just pays the
	 * same TLB misses lpc would, so the failure is not an error. */
	madvise(mem, fl->bytes, MADV_HUGEPAGE);
	fl->desc = mem;
	for (uint64_t i = 0; i < nr_pages; i++) {
		atomic_init(&fl->desc[i].ref, 1);
		fl->desc[i].index = i;
	}
}

void floor_destroy(struct floor *fl)
{
	munmap(fl->desc, fl->bytes);
	fl->desc = NULL;
}
