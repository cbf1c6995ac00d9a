/* SPDX-License-Identifier: MIT */
/*
 * regress_open_rename.c - story: lpc_file_open whose path changes, between
 * its lookup by stat(2) and its open(2), to a file the cache already holds
 * (filemap/file.c ZL1-ZL6).  The descriptor the open then holds is one of a
 * cached file; closing it would drop the process's POSIX record locks on
 * that file (closing any descriptor of a file does), so it is parked on the
 * copy until the copy's last close.
 *
 * The interleaving, in each story:
 *   1. Q (a file) is open in the cache read-only (copy q), and the process
 *      holds a read lock on bytes 100-109 of Q through a plain descriptor.
 *      Path X names another file, P, which the cache does not hold.
 *   2. A calls lpc_file_open(X) and is parked at ZL1, after its stat saw P
 *      (no copy of it: A goes on to open a descriptor).
 *   3. The main thread renames Q over X, and lets A go: A's open(2) opens Q.
 *   4. A's open must return q (A.5), and another process (forked, only
 *      fcntl F_GETLK) must still see the lock.  An open that closed the
 *      descriptor it had found to be a duplicate dropped the lock here.
 * story 1: A opens O_RDONLY: its descriptor is parked (ZL5).
 * story 2: A opens O_RDWR: q is upgraded (ZL4): A's descriptor serves q
 *      from then on (a write and fsync through q reach the kernel's file),
 *      q's old one is parked.
 * story 3: A opens O_RDWR|O_TRUNC: its descriptor is parked, it looks again
 *      and answers -EBUSY (q is open); Q keeps its size.
 * Then (every story) the last close of q closes every descriptor: the lock
 * goes, as lpc.h states.  Deterministic: A is parked at its ZL1 yield point
 * (yield_stop.h).
 *
 * Usage: regress_open_rename [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>

#include "../common/write_test.h"
#include "../common/yield_stop.h"

#define PS 4096
#define FSIZE (3 * PS)
#define LOCK_START 100
#define LOCK_LEN 10

static struct lpc_cache *a_cache;
static const char *a_path;
static int a_flags;
static int a_rc;
static struct lpc_file *a_file;

static void *a_main(void *arg)
{
	(void)arg;
	tst_stop_me();
	a_rc = lpc_file_open(a_cache, a_path, a_flags, 0, &a_file);
	return NULL;
}

#define lock_held(path) tst_read_lock_held(path, LOCK_START, LOCK_LEN)

static void story(int n, int oflags, const char *name)
{
	struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = LOCK_START,
			    .l_len = LOCK_LEN };
	char q_path[600], x_path[600], fname[32], b[8];
	struct lpc_cache *c = tst_cache_create(64 * PS, PS, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS);
	struct lpc_file *q;
	pthread_t at;
	int fd;

	snprintf(fname, sizeof(fname), "rename%d-q", n);				/* 1 */
	REQUIRE(tst_make_file(fname, FSIZE, 5, q_path, sizeof(q_path)) == 0);
	snprintf(fname, sizeof(fname), "rename%d-x", n);
	REQUIRE(tst_make_file(fname, PS, 6, x_path, sizeof(x_path)) == 0);
	q = tst_file_open(c, q_path, O_RDONLY);
	fd = open(q_path, O_RDONLY | O_CLOEXEC);
	REQUIRE(fd >= 0 && fcntl(fd, F_SETLK, &fl) == 0, "%s: F_SETLK", name);
	REQUIRE(lock_held(q_path) == 1, "%s: the probe does not see the lock", name);

	a_cache = c;									/* 2 */
	a_path = x_path;
	a_flags = oflags;
	a_rc = 1;
	a_file = NULL;
	tst_stop_arm(LPC_YP_ZL1);
	REQUIRE(pthread_create(&at, NULL, a_main, NULL) == 0);
	REQUIRE(tst_stop_wait(), "%s: A never reached ZL1", name);
	REQUIRE(rename(q_path, x_path) == 0, "%s: rename", name);			/* 3 */
	tst_stop_release();
	pthread_join(at, NULL);
	tst_stop_disarm();

	if (oflags & O_TRUNC) {								/* 4 */
		CHECK_EQ(a_rc, -EBUSY, "%s: O_TRUNC of a file the cache holds", name);
		CHECK_EQ(tst_file_size(x_path), FSIZE, "%s: the refused O_TRUNC truncated", name);
	} else {
		CHECK_EQ(a_rc, 0, "%s: A's open", name);
		CHECK(a_file == q, "%s: A's open made a second copy of Q (A.5)", name);
	}
	CHECK_EQ(lock_held(x_path), 1,
		 "%s: the lock was dropped (the duplicate descriptor was closed)", name);
	if (a_rc == 0 && a_file == q) {
		if ((oflags & O_ACCMODE) == O_RDWR) {
			CHECK_EQ(lpc_pwrite(q, "renamed!", 8, 0), 8, "%s: pwrite after the upgrade",
				 name);
			CHECK_EQ(lpc_fsync(q), 0, "%s: fsync after the upgrade", name);
			CHECK_EQ(tst_kernel_read(x_path, b, sizeof(b)), (int64_t)FSIZE, "%s: kernel read", name);
			CHECK(memcmp(b, "renamed!", 8) == 0, "%s: the kernel's file", name);
			/* tst_kernel_read closed a descriptor of Q: lock again. */
			REQUIRE(fcntl(fd, F_SETLK, &fl) == 0, "%s: F_SETLK again", name);
		} else {
			CHECK_EQ(lpc_pwrite(q, "x", 1, 0), -EBADF, "%s: q is still read-only",
				 name);
		}
		CHECK_EQ(lpc_file_close(a_file), 0, "%s: A's close", name);
		CHECK_EQ(lock_held(x_path), 1, "%s: lock dropped by a close not the last", name);
	}
	CHECK_EQ(lpc_file_close(q), 0, "%s: the last close", name);
	CHECK_EQ(lock_held(x_path), 0, "%s: the last close closes lpc's descriptors (lpc.h)",
		 name);
	close(fd);
	unlink(x_path);
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 60);
	if (!LPC_DEBUG)
		tst_skip("needs -DLPC_DEBUG=ON (yield points)");
	tst_require_tmpdir();
	story(1, O_RDONLY, "1 (read-only open, path renamed)");
	story(2, O_RDWR, "2 (read-write open upgrades, path renamed)");
	story(3, O_RDWR | O_TRUNC, "3 (O_TRUNC open, path renamed)");
	return tst_finish();
}
