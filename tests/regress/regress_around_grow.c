/* SPDX-License-Identifier: MIT */
/*
 * regress_around_grow.c - why a page read around the cache (read.c
 * read_around: lpc_pread when no frame is free) reads once more when it
 * comes back short where the storage goes on, as a miss does
 * (lpc_filemap_read_one), instead of failing at once with -EIO.
 *
 * Seen as `rbd.model_api.threads` failing with -EIO in CI, once: four
 * writers and two readers on a 16-frame cache over an RBD image that
 * starts empty; writes far past the image's end leave a hole between the
 * image's end and lpc's size, and the flusher writes back pages past the
 * hole all the time (dirty_expire_ms = 2), each growing the image first
 * (rbd.c RB1).  A reader's lpc_pread of a hole page found every frame held
 * and read it around the cache:
 *   1. read_around: the backend's read (rbd.c op_read) loads the image's
 *      size, A; the page starts at or past A: an empty read (0 bytes), as
 *      pread(2) at the end of a file.
 *   2. The flusher writes back a later page: RB1 grows the image to B,
 *      past the hole page.
 *   3. read_around judged the short count (C.3, lpc_filemap_short_at_eof):
 *      the storage's size is now B, it goes on past the page: "short where
 *      the file goes on", -EIO.  lpc_pread returned -EIO for bytes that are
 *      zeros in the image and were never lost.
 * A miss (lpc_filemap_read_one, the same judgement) read once more in
 * that case and got the page; read_around did not.  The fix: both read
 * through the same two tries (lpc_filemap_read_frame).
 *
 * Deterministic: the story's backend answers its first read of page
 * HOLE with 0 bytes (the image ended there at step 1) while its size op
 * says the storage goes on (step 2 done); its next read returns the page.
 * Every frame is held (lpc_page_alloc) so lpc_pread reads around; then,
 * as the control, the same story through the miss path with frames free.
 * Built with the other regress stories (LPC_DEBUG), though it uses no
 * yield point.
 */
#include <fcntl.h>
#include <sys/uio.h>

#include "../common/lpc_test.h"

#define PS 4096u
#define NPAGES 8u
#define HOLE 5u
#define NFRAMES 8u

struct store {
	unsigned char data[NPAGES * PS];
	unsigned hole_reads; /* reads of page HOLE so far */
	unsigned short_reads; /* reads of it to answer with 0 bytes */
};

static unsigned char want(uint64_t pos)
{
	return (unsigned char)(pos * 7 + pos / PS + 1);
}

static ssize_t st_read(void *h, const struct iovec *iov, int iovcnt, uint64_t off)
{
	struct store *s = h;
	ssize_t n = 0;

	for (int i = 0; i < iovcnt; i++) {
		uint64_t at = off + (uint64_t)n;

		if (at == (uint64_t)HOLE * PS && s->hole_reads++ < s->short_reads)
			return n; /* step 1: the storage ended here at the read */
		if (at >= sizeof(s->data))
			return n;
		memcpy(iov[i].iov_base, s->data + at, iov[i].iov_len);
		n += (ssize_t)iov[i].iov_len;
	}
	return n;
}

static ssize_t st_write(void *h, const struct iovec *iov, int iovcnt, uint64_t off)
{
	(void)h, (void)iov, (void)iovcnt, (void)off;
	return -EROFS; /* opened read-only: never called */
}

static int st_size(void *h, uint64_t *size)
{
	(void)h;
	*size = NPAGES * PS; /* step 2: it goes on past HOLE now */
	return 0;
}

static const struct lpc_backend_ops st_ops = {
	.version = LPC_BACKEND_V1,
	.read = st_read,
	.write = st_write,
	.size = st_size,
};

/* lpc_pread of page HOLE, its first read short; `around`: every frame held
 * first, so the read goes around the cache. */
static void story(bool around)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct lpc_file *f;
	struct lpc_page *held[NFRAMES + 1];
	struct lpc_stats st;
	struct store *s = calloc(1, sizeof(*s));
	unsigned char buf[PS];
	unsigned n = 0;
	char name[64];
	ssize_t r;

	REQUIRE(s, "calloc");
	for (uint64_t i = 0; i < sizeof(s->data); i++)
		s->data[i] = want(i);
	s->short_reads = 1;
	lpc_config_init(&cfg);
	cfg.cache_bytes = NFRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_SYNC;
	cfg.alloc_wait_ms = 1;
	cfg.readahead_kb = LPC_READAHEAD_OFF; /* page HOLE read alone */
	REQUIRE(lpc_cache_create(&cfg, &c) == 0, "lpc_cache_create");
	snprintf(name, sizeof(name), "story:%s", around ? "around" : "miss");
	REQUIRE(lpc_file_open_backend(c, name, &st_ops, s, O_RDONLY, &f) == 0,
		"lpc_file_open_backend");
	if (around) {
		while (n < NFRAMES + 1 && lpc_page_alloc(c, &held[n]) == 0)
			n++;
		CHECK(n > 0 && n <= NFRAMES, "every frame held (%u)", n);
	}
	r = lpc_pread(f, buf, PS, (uint64_t)HOLE * PS);
	CHECK_EQ(r, (ssize_t)PS, "%s: lpc_pread of a page whose first read came back short "
		 "where the storage goes on", around ? "around the cache" : "a miss");
	if (r == (ssize_t)PS) {
		bool same = true;

		for (unsigned i = 0; i < PS; i++)
			same = same && buf[i] == want((uint64_t)HOLE * PS + i);
		CHECK(same, "%s: the page's bytes", around ? "around" : "miss");
	}
	CHECK_EQ(s->hole_reads, 2, "%s: read once more, not more", around ? "around" : "miss");
	lpc_stats(c, &st);
	if (around)
		CHECK(st.read_around >= 1, "the read went around the cache (read_around %" PRIu64 ")",
		      (uint64_t)st.read_around);
	for (unsigned i = 0; i < n; i++)
		lpc_page_put(held[i]);
	CHECK(lpc_file_close(f) == 0, "close");
	CHECK(lpc_cache_destroy(c) == 0, "destroy");
	free(s);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 60);
	story(false); /* the control: a miss reads once more */
	story(true);
	return tst_finish();
}
