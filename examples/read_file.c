/* SPDX-License-Identifier: MIT */
/*
 * read_file.c - reads FILE through lpc twice, a page at a time with lpc_pread:
 * the first pass misses and reads the file, the second finds its pages in the
 * cache.  Prints the size, an Adler-32 of the contents and the hit and miss
 * counters.  Usage: read_file FILE
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lpc/lpc.h>

static int fail(const char *what, long rc)
{
	fprintf(stderr, "read_file: %s: %s\n", what, strerror((int)-rc));
	return (int)rc;
}

int main(int argc, char **argv)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct lpc_file *f;
	struct lpc_stats st;
	uint32_t sum[2] = { 0, 0 };
	uint64_t off = 0;
	ssize_t n = 0;
	char *buf;
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: %s FILE\n", argv[0]);
		return 2;
	}
	lpc_config_init(&cfg); /* 64 MiB of 4 KiB pages, read with O_DIRECT */
	rc = lpc_cache_create(&cfg, &c);
	if (rc < 0)
		return fail("lpc_cache_create", rc) < 0;
	rc = lpc_file_open(c, argv[1], O_RDONLY, 0, &f);
	if (rc < 0) {
		fail(argv[1], rc);
		goto out;
	}
	buf = malloc(cfg.page_size);
	for (int pass = 0; pass < 2 && buf && n >= 0; pass++) {
		uint32_t a = 1, b = 0;

		for (off = 0; (n = lpc_pread(f, buf, cfg.page_size, off)) > 0; off += n) {
			for (ssize_t i = 0; i < n; i++) {
				a = (a + (unsigned char)buf[i]) % 65521;
				b = (b + a) % 65521;
			}
		}
		sum[pass] = b << 16 | a;
	}
	if (!buf)
		rc = fail("malloc", -ENOMEM);
	else if (n < 0)
		rc = fail("lpc_pread", n);
	else if (sum[1] != sum[0])
		rc = fail("second pass", -EIO);
	lpc_stats(c, &st);
	if (rc == 0) {
		printf("%" PRIu64 " bytes, adler32 %08" PRIx32 "\n", off, sum[0]);
		printf("hits %" PRIu64 " misses %" PRIu64 "\n", st.hits, st.misses);
	}
	free(buf);
	lpc_file_close(f);
out:
	if (lpc_cache_destroy(c) < 0 && rc == 0)
		rc = fail("lpc_cache_destroy", -EBUSY);
	return rc < 0;
}
