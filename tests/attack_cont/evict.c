/* evict.c - what the missing marks do under eviction (CLOCK2, null backend,
 * 1024-frame cache, readahead default).
 *   scan MODE: one thread reads a file of 4x the cache once in 1000-byte
 *     calls: MODE lockless, locked (LPC_LOOKUP_LOCKED), or inter (lockless,
 *     two files of 2x the cache read alternately, record by record);
 *     prints the active count after the pass (what the scan promoted).
 *   hot KIND: one thread reads a hot 100-byte record of page 0 of file H,
 *     then lpc_page_get's the next page of a one-time scan of file S (4x the
 *     cache), 8192 times; KIND rec (the same record each time), rec2 (record
 *     r, r+1, ... of page 0), aligned (the whole 4 KiB page 0: control).
 *     Prints how often the hot page was not cached when read (misses).
 * CLOCK=1 in the environment: plain CLOCK (second chance) instead of CLOCK2.
 * usage: evict DIR scan|hot MODE */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <lpc/lpc.h>
#include "cache/cache.h"
#include "page/page.h"

#define FRAMES 1024
static char dir[256];
static char buf[8192];

static struct lpc_file *mkfile(struct lpc_cache *c, const char *name, uint64_t pages)
{
	char path[512];
	struct lpc_file *f;
	snprintf(path, sizeof path, "%s/lpc_cont_ev_%s", dir, name);
	int fd = open(path, O_RDWR | O_CREAT, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)(pages * 4096))) { perror(path); exit(1); }
	close(fd);
	if (lpc_file_open(c, path, O_RDONLY, 0, &f)) exit(1);
	unlink(path);
	return f;
}
static int cached(struct lpc_cache *c, struct lpc_file *f, uint64_t idx)
{
	for (uint32_t i = 0; i < c->pool.nframes; i++) {
		struct lpc_page *p = &c->pool.pages[i];
		uint32_t fl = atomic_load(&p->flags);
		if ((fl & LPC_PG_PUBLISHED) && !(fl & LPC_PG_REMOVED) && (fl & LPC_PG_UPTODATE) &&
		    atomic_load(&p->file) == f && atomic_load(&p->index) == idx)
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 4) return 2;
	snprintf(dir, sizeof dir, "%s", argv[1]);
	struct lpc_config cfg;
	struct lpc_cache *c;
	lpc_config_init(&cfg);
	cfg.cache_bytes = FRAMES * 4096;
	cfg.io_backend = LPC_IO_NULL;
	if (!strcmp(argv[3], "locked")) cfg.lookup_mode = LPC_LOOKUP_LOCKED;
	if (getenv("CLOCK")) cfg.reclaim_policy = LPC_RECLAIM_CLOCK; /* plain CLOCK */
	if (lpc_cache_create(&cfg, &c)) return 1;
	if (!strcmp(argv[2], "scan")) {
		int inter = !strcmp(argv[3], "inter");
		uint64_t pages = inter ? 2 * FRAMES : 4 * FRAMES;
		struct lpc_file *a = mkfile(c, "a", pages), *b = inter ? mkfile(c, "b", pages) : NULL;
		for (uint64_t off = 0; off + 1000 <= pages * 4096; off += 1000) {
			if (lpc_pread(a, buf, 1000, off) != 1000) return 1;
			if (b && lpc_pread(b, buf, 1000, off) != 1000) return 1;
		}
		struct lpc_stats st;
		unsigned ref = 0;
		for (uint32_t i = 0; i < c->pool.nframes; i++)
			ref += !!(atomic_load(&c->pool.pages[i].flags) & LPC_PG_REFERENCED);
		lpc_stats(c, &st);
		printf("scan %-8s 1000-byte calls over 4x the cache: nactive %4u of %u frames (%4.1f%%), REFERENCED now %4u, evictions %" PRIu64 " skipped_referenced %" PRIu64 "\n", argv[3],
		       atomic_load(&c->pool.nactive), FRAMES, 100.0 * atomic_load(&c->pool.nactive) / FRAMES, ref, st.evictions, st.skipped_referenced);
	} else {
		struct lpc_file *h = mkfile(c, "h", 4), *s = mkfile(c, "s", 4 * FRAMES);
		struct lpc_stats st;
		int kind = !strcmp(argv[3], "rec") ? 0 : !strcmp(argv[3], "rec2") ? 1 : 2;
		unsigned misses = 0, refd = 0;
		for (uint64_t i = 0; i < 2 * 4 * FRAMES; i++) {
			misses += !cached(c, h, 0);
			for (uint32_t k = 0; k < c->pool.nframes; k++) {
				struct lpc_page *q = &c->pool.pages[k];
				uint32_t fl = atomic_load(&q->flags);
				if ((fl & LPC_PG_PUBLISHED) && !(fl & LPC_PG_REMOVED) && atomic_load(&q->file) == h && atomic_load(&q->index) == 0)
					refd += !!(fl & (LPC_PG_REFERENCED | LPC_PG_ACTIVE));
			}
			size_t len = kind == 2 ? 4096 : 100;
			uint64_t off = kind == 1 ? 100 * (i % 40) : 0;
			if (lpc_pread(h, buf, len, off) != (ssize_t)len) return 1;
			struct lpc_page *p;
			if (lpc_page_get(s, i % (4 * FRAMES), 0, &p)) return 1;
			lpc_page_put(p);
		}
		printf("%s hot %-8s 8192 reads of page 0 between lpc_page_get's of a scan: the hot page was not cached %4u times, REFERENCED|ACTIVE before %4u of the reads, evictions %" PRIu64 "\n",
		       getenv("CLOCK") ? "CLOCK " : "CLOCK2", argv[3], misses, refd, (lpc_stats(c, &st), st.evictions));
	}
	lpc_cache_destroy(c);
	return 0;
}
