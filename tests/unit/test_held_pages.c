/* SPDX-License-Identifier: MIT */
/*
 * test_held_pages.c - pages a user still holds across lpc_file_close and
 * lpc_cache_destroy: destroy refuses with -EBUSY (pages of an open file, of a
 * closed file, private pages) and changes nothing; held pages stay valid and
 * correct after the last close; a reopened file reads its pages again.
 *
 * Files live in a mkdtemp directory under $TMPDIR (else /var/tmp), made and
 * removed by tests/common/lpc_test.h.
 *
 * Usage: test_held_pages [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "../common/lpc_test.h"

/* --- closing a file whose pages users still hold; destroy with held pages --- */
/* Checks guarantees B.2, B.4, D.2 of include/lpc/lpc.h. */
static void t_held(int backend)
{
	struct lpc_cache *c = tst_cache_create(16 * 4096, 4096, backend, LPC_LOOKUP_LOCKLESS);
	const uint64_t size = 6 * 4096;
	struct tst_expect e = { .backend = backend, .salt = 21, .size = size, .ps = 4096 };
	struct lpc_file *f;
	struct lpc_page *p1, *p2, *q, *priv;
	struct lpc_stats st;
	unsigned char buf[3 * 4096];
	uint64_t bad = 0;
	char path[600];

	REQUIRE(tst_make_file(backend ? "held-null" : "held-sync", size, 21, path,
			      sizeof(path)) == 0);
	e.id = tst_file_id(path);
	f = tst_file_open(c, path, O_RDONLY);
	REQUIRE(lpc_page_get(f, 1, 0, &p1) == 0);
	REQUIRE(lpc_page_get(f, 4, 0, &p2) == 0);
	/* Destroy while held: -EBUSY, nothing changed. */
	CHECK_EQ(lpc_cache_destroy(c), -EBUSY, "destroy with held pages");
	CHECK(tst_check_page(&e, 1, lpc_page_data(p1)), "held page after refused destroy");
	CHECK_EQ(lpc_pread(f, buf, sizeof(buf), 4096), (long long)sizeof(buf),
		 "pread after refused destroy");
	CHECK(tst_check_bytes(&e, 4096, buf, sizeof(buf), &bad), "bad at %" PRIu64, bad);
	if (CHECK_EQ(lpc_page_find(f, 1, &q), 0, "still cached after refused destroy")) {
		CHECK(q == p1, "find returned another page");
		lpc_page_put(q);
	}
	if (CHECK_EQ(lpc_page_get(f, 5, 0, &q), 0))
		lpc_page_put(q);

	/* Last close with pages held: they stay valid and correct. */
	CHECK_EQ(lpc_file_close(f), 0);
	memset(buf, 0, sizeof(buf));
	CHECK(tst_check_page(&e, 1, lpc_page_data(p1)), "held page 1 after close");
	CHECK(tst_check_page(&e, 4, lpc_page_data(p2)), "held page 4 after close");
	/* Still busy: the pages are out of the cache but held. */
	CHECK_EQ(lpc_cache_destroy(c), -EBUSY, "destroy with pages of a closed file held");
	/* The cache still works: reopen (a fresh copy, page 1 read again). */
	lpc_stats(c, &st);
	uint64_t reads0 = st.reads;
	f = tst_file_open(c, path, O_RDONLY);
	if (CHECK_EQ(lpc_page_get(f, 1, 0, &q), 0)) {
		CHECK(q != p1, "reopened file returned the closed file's page");
		CHECK(tst_check_page(&e, 1, lpc_page_data(q)));
		lpc_page_put(q);
	}
	lpc_stats(c, &st);
	CHECK_EQ(st.reads - reads0, 1, "page 1 read again after close");
	CHECK(tst_check_page(&e, 1, lpc_page_data(p1)), "held page 1 after reopen");
	lpc_page_put(p1);
	CHECK_EQ(lpc_cache_destroy(c), -EBUSY, "destroy with one page held");
	lpc_page_put(p2);

	/* A private page also counts as held. */
	REQUIRE(lpc_page_alloc(c, &priv) == 0);
	CHECK_EQ(lpc_cache_destroy(c), -EBUSY, "destroy with a private page held");
	lpc_page_put(priv);
	/* Destroy with the file still open: closes it. */
	CHECK_EQ(lpc_cache_destroy(c), 0, "destroy after every put");
}

/* A page held across its file's last close, then changed and marked dirty:
 * -ENOENT (J.4, lpc_page_mark_dirty), never a look at the freed file (the
 * model-based test found the call reading it: -EBADF by chance in release,
 * FILE-USE-AFTER-CLOSE in the debug builds, heap corruption under load).
 * The file reopened meanwhile keeps its own pages and bytes. */
static void t_mark_dirty_after_close(int backend)
{
	struct lpc_cache *c = tst_cache_create(16 * 4096, 4096, backend, LPC_LOOKUP_LOCKLESS);
	const uint64_t size = 4 * 4096;
	struct tst_expect e = { .backend = backend, .salt = 23, .size = size, .ps = 4096 };
	struct lpc_file *f, *g;
	struct lpc_page *p;
	unsigned char buf[4096];
	char path[600];

	REQUIRE(tst_make_file(backend ? "mdc-null" : "mdc-sync", size, 23, path, sizeof(path)) == 0);
	e.id = tst_file_id(path);
	f = tst_file_open(c, path, O_RDWR);
	REQUIRE(lpc_page_get(f, 2, 0, &p) == 0);
	CHECK_EQ(lpc_file_close(f), 0, "last close with a held page");
	/* Let the close's grace period pass and its memory be reused. */
	for (int i = 0; i < 20; i++) {
		g = tst_file_open(c, path, O_RDWR);
		CHECK_EQ(lpc_pread(g, buf, sizeof(buf), 0), (long long)sizeof(buf));
		CHECK_EQ(lpc_file_close(g), 0);
		usleep(2000);
	}
	g = tst_file_open(c, path, O_RDWR);
	lpc_page_lock(p);
	memset(lpc_page_data(p), 0xee, 16);
	CHECK_EQ(lpc_page_mark_dirty(p), -ENOENT, "mark_dirty on a page its last close removed");
	lpc_page_unlock(p);
	lpc_page_put(p);
	CHECK_EQ(lpc_pread(g, buf, sizeof(buf), 2 * 4096), (long long)sizeof(buf));
	CHECK(tst_check_page(&e, 2, buf), "the reopened file's page 2 is the file's, not the change");
	CHECK_EQ(lpc_fsync(g), 0);
	CHECK_EQ(lpc_file_close(g), 0);
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 100);
	tst_require_tmpdir();

	TST_RUN(t_held(LPC_IO_SYNC));
	TST_RUN(t_held(LPC_IO_NULL));
	TST_RUN(t_mark_dirty_after_close(LPC_IO_SYNC));
	TST_RUN(t_mark_dirty_after_close(LPC_IO_NULL));
	return tst_finish();
}
