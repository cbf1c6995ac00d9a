/* SPDX-License-Identifier: MIT */
/*
 * test_direct_fallback.c - a file system that may refuse O_DIRECT (tmpfs, /dev/shm): the
 * file is read buffered and counted in direct_fallbacks, or, where the
 * kernel accepts O_DIRECT there, no fallback is counted; the data is right
 * either way.
 *
 * Files live in a mkdtemp directory under $TMPDIR (else /var/tmp), made and
 * removed by tests/common/lpc_test.h.
 *
 * Usage: test_direct_fallback [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <fcntl.h>

#include "../common/lpc_test.h"

/* --- a file system that may refuse O_DIRECT (tmpfs) --- */
static void t_tmpfs(void)
{
	char dir[512], path[600];
	struct lpc_cache *c;
	struct lpc_file *f;
	struct lpc_stats s;
	struct tst_expect e = { .backend = LPC_IO_SYNC, .salt = 51, .size = 5 * 4096 + 9,
			      .ps = 4096 };
	unsigned char *buf;
	uint64_t bad = 0;
	bool refused;
	int fd;

	if (!tst_mkdtemp("/dev/shm", dir, sizeof(dir))) {
		printf("note: no /dev/shm: O_DIRECT fallback through open not tested\n");
		return;
	}
	if (tst_make_file_in(dir, "f", e.size, e.salt, path, sizeof(path)) != 0) {
		rmdir(dir);
		return;
	}
	fd = open(path, O_RDONLY | O_DIRECT);
	refused = fd < 0 && errno == EINVAL;
	if (fd >= 0)
		close(fd);
	printf("note: /dev/shm %s O_DIRECT%s\n", refused ? "refuses" : "accepts",
	       refused ? "" : " (kernel >= 6.6): the open-time fallback is not exercised; "
			      "test_io_errors covers the read-time one");
	c = tst_cache_create(16 * 4096, 4096, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS);
	f = tst_file_open(c, path, O_RDONLY);
	lpc_stats(c, &s);
	if (refused)
		CHECK(s.direct_fallbacks > 0, "tmpfs refused O_DIRECT: direct_fallbacks %" PRIu64,
		      s.direct_fallbacks);
	else
		CHECK_EQ(s.direct_fallbacks, 0, "O_DIRECT accepted, yet counted a fallback");
	buf = malloc(e.size);
	REQUIRE(buf);
	CHECK_EQ(lpc_pread(f, buf, e.size, 0), (long long)e.size, "tmpfs pread");
	CHECK(tst_check_bytes(&e, 0, buf, e.size, &bad), "tmpfs bad at %" PRIu64, bad);
	CHECK_EQ(lpc_pread(f, buf, 100, 3 * 4096 - 50), 100);
	CHECK(tst_check_bytes(&e, 3 * 4096 - 50, buf, 100, &bad), "tmpfs bad at %" PRIu64, bad);
	free(buf);
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
	unlink(path);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 100);
	tst_require_tmpdir();

	TST_RUN(t_tmpfs());
	return tst_finish();
}
