/* SPDX-License-Identifier: MIT */
/*
 * filemap.h - the file's page cache: lookup (lookup.c), miss handling
 * (miss.c), pread (read.c), removal (remove.c).  Internal API.
 */
#ifndef LPC_FILEMAP_FILEMAP_H
#define LPC_FILEMAP_FILEMAP_H

#include "core/cache.h"

/*
 * Returns page `index` of f with a reference taken, whatever its state
 * (UPTODATE or in flight), or NULL if absent.  Lockless mode: RCU walk and
 * speculative reference (lookup.c); LOCKED mode: under the file's rwlock.
 * Context: outside an RCU read section (it takes its own).
 */
struct lpc_page *lpc_filemap_get(struct lpc_file *f, uint64_t index, struct lpc_tcache *t);

/*
 * lpc_page_get without argument checks: a referenced UPTODATE page, reading
 * it on a miss.  Return: 0, -ENXIO, -ENOMEM, or the read's negative errno.
 */
int lpc_filemap_get_page(struct lpc_file *f, uint64_t index, struct lpc_tcache *t,
			 struct lpc_page **out);

/*
 * M3: inserts p, a page with PUBLISHED set (rule PUBLISH-UNPUBLISHED), at
 * `index` under the index lock.  Return: 0, -EEXIST, -ENOMEM.
 */
int lpc_filemap_insert(struct lpc_file *f, uint64_t index, struct lpc_page *p);

/*
 * Removes p from f's index if it is still there at `index`, and drops the
 * index's reference; holders keep a valid page.  Return: true if removed.
 * Context: no index lock held.
 */
bool lpc_filemap_delete(struct lpc_file *f, struct lpc_page *p, uint64_t index);

/* Removes every page (last close).  Context: nobody else uses f. */
void lpc_filemap_remove_all(struct lpc_file *f);

/* Re-reads the file's size from the kernel.  Return: the size. */
uint64_t lpc_filemap_refresh_size(struct lpc_file *f);

/*
 * Judges a read of page `index` that returned r bytes: shorter than a page
 * is the end of the file only where the file ends; short anywhere else is an
 * I/O error, so zeros are never cached or returned for data the file has.
 * Return: r, or -EIO.
 */
ssize_t lpc_filemap_check_short(struct lpc_file *f, uint64_t index, ssize_t r);

static inline void *lpc_page_frame(const struct lpc_page *p)
{
	return p->cache->frames + ((size_t)p->id << p->cache->page_shift);
}

#endif /* LPC_FILEMAP_FILEMAP_H */
