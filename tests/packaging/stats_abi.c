/* SPDX-License-Identifier: MIT */
/*
 * stats_abi.c - the old versions of lpc_stats keep old programs working
 * (src/lpc.map, src/cache/cache.c): linked with liblpc.so, it takes each
 * version of the symbol with dlvsym, as a program built against that
 * release binds to it, and checks that
 *  - lpc_stats@LPC_0.1 writes exactly the 0.1 struct (up to frames_free),
 *    lpc_stats@LPC_0.2 exactly the 0.2 struct (up to wpin_dirtied): a
 *    guard pattern after each old size is left as it was (and under ASan
 *    a buffer of exactly the old size is not overrun);
 *  - what they write is the current struct's prefix (frames, and the 0.2
 *    fields for @LPC_0.2);
 *  - lpc_stats@@LPC_0.3 is the default (what this program links) and fills
 *    the 0.3 fields: one lpc_page_get_batch counts batches 1.
 *
 * Usage: stats_abi        Exit: 0 pass, 1 fail, 77 skip (no temporary
 * file).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lpc/lpc.h>

typedef void stats_fn(struct lpc_cache *c, struct lpc_stats *out);

static int failed;

#define EXPECT(cond, ...)                                              \
	do {                                                           \
		if (!(cond)) {                                         \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__,  \
				__LINE__, #cond);                      \
			fprintf(stderr, __VA_ARGS__);                  \
			fputc('\n', stderr);                           \
			failed = 1;                                    \
		}                                                      \
	} while (0)

#define GUARD 64

/* Calls fn into a buffer of the whole current struct and GUARD bytes more,
 * filled with 0xa5: nothing from `size` on may change. */
static void check_version(const char *ver, stats_fn *fn, struct lpc_cache *c, size_t size,
			  const struct lpc_stats *now)
{
	size_t len = sizeof(struct lpc_stats) + GUARD;
	unsigned char *buf = malloc(len), *exact = malloc(size);
	struct lpc_stats *s = (struct lpc_stats *)(void *)buf;

	if (!buf || !exact) {
		fprintf(stderr, "FAIL: malloc\n");
		exit(1);
	}
	memset(buf, 0xa5, len);
	fn(c, s);
	for (size_t i = size; i < len; i++)
		if (buf[i] != 0xa5) {
			EXPECT(0, "lpc_stats@%s wrote byte %zu, past its struct of %zu bytes", ver, i,
			       size);
			break;
		}
	EXPECT(s->frames == now->frames, "lpc_stats@%s: frames %" PRIu64 ", want %" PRIu64, ver,
	       s->frames, now->frames);
	if (size > offsetof(struct lpc_stats, wpin_dirtied))
		EXPECT(s->descriptor_bytes == now->descriptor_bytes,
		       "lpc_stats@%s: descriptor_bytes %" PRIu64 ", want %" PRIu64, ver,
		       s->descriptor_bytes, now->descriptor_bytes);
	/* A buffer of exactly the old size: ASan reports any write past it. */
	fn(c, (struct lpc_stats *)(void *)exact);
	free(exact);
	free(buf);
}

int main(void)
{
	stats_fn *v1 = (stats_fn *)dlvsym(RTLD_DEFAULT, "lpc_stats", "LPC_0.1");
	stats_fn *v2 = (stats_fn *)dlvsym(RTLD_DEFAULT, "lpc_stats", "LPC_0.2");
	stats_fn *v3 = (stats_fn *)dlvsym(RTLD_DEFAULT, "lpc_stats", "LPC_0.3");
	const char *dir = getenv("TMPDIR");
	char path[512];
	struct lpc_config cfg;
	struct lpc_cache *c = NULL;
	struct lpc_file *f = NULL;
	struct lpc_stats now;
	struct lpc_page *pages[4];
	uint64_t idx[4] = { 3, 1, 2, 0 };
	int errs[4], fd, rc;

	EXPECT(v1 && v2 && v3, "dlvsym: LPC_0.1 %p LPC_0.2 %p LPC_0.3 %p", (void *)v1,
	       (void *)v2, (void *)v3);
	if (!v1 || !v2 || !v3)
		return 1;
	EXPECT(v3 == lpc_stats, "the default lpc_stats is not lpc_stats@LPC_0.3");
	EXPECT(v1 != v2 && v2 != v3, "two versions are one function");

	snprintf(path, sizeof(path), "%s/lpc-stats-abi.XXXXXX", dir && *dir ? dir : "/var/tmp");
	fd = mkstemp(path);
	if (fd < 0) {
		printf("SKIP: no temporary file in %s\n", dir && *dir ? dir : "/var/tmp");
		return 77;
	}
	if (ftruncate(fd, 16 * 4096)) {
		printf("SKIP: ftruncate\n");
		close(fd);
		unlink(path);
		return 77;
	}
	close(fd);
	lpc_config_init(&cfg);
	cfg.cache_bytes = 64 * 4096;
	cfg.page_size = 4096;
	cfg.io_backend = LPC_IO_NULL;
	rc = lpc_cache_create(&cfg, &c);
	EXPECT(rc == 0, "lpc_cache_create %d", rc);
	if (rc)
		goto out;
	rc = lpc_file_open(c, path, O_RDONLY, 0, &f);
	EXPECT(rc == 0, "lpc_file_open %d", rc);
	if (rc)
		goto out_cache;
	rc = lpc_page_get_batch(f, idx, 4, 0, pages, errs);
	EXPECT(rc == 4, "lpc_page_get_batch %d", rc);
	for (int i = 0; i < 4; i++)
		if (!errs[i])
			lpc_page_put(pages[i]);
	lpc_stats(c, &now);
	EXPECT(now.batches == 1, "batches %" PRIu64 ", want 1", now.batches);
	EXPECT(now.batch_runs == 1 && now.batch_pages == 4,
	       "batch_runs %" PRIu64 " batch_pages %" PRIu64 ", want 1 and 4", now.batch_runs,
	       now.batch_pages);
	check_version("LPC_0.1", v1, c, offsetof(struct lpc_stats, evictions), &now);
	check_version("LPC_0.2", v2, c, offsetof(struct lpc_stats, batches), &now);
	check_version("LPC_0.3", v3, c, sizeof(struct lpc_stats), &now);
	lpc_file_close(f);
out_cache:
	lpc_cache_destroy(c);
out:
	unlink(path);
	printf("%s\n", failed ? "FAIL" : "PASS");
	return failed;
}
