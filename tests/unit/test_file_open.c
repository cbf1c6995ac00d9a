/* SPDX-License-Identifier: MIT */
/*
 * test_file_open.c - lpc_file_open and lpc_file_close: refused flags and file kinds,
 * one lpc_file per (dev, ino) however it is opened (twice, through a hard
 * link, read-write), O_TRUNC refused with -EBUSY while open and honoured
 * after the last close, O_CREAT and O_CREAT|O_EXCL, and the last close
 * dropping the file's pages; and opens racing last closes (A.5) with the
 * flusher writing all the time: each thread reopens the file, finds its own
 * last write, writes again and closes (a copy read from the disk before a
 * close's writeback ended would read a stale stamp).  The churn checks the
 * open/close protocol for hangs and, under TSan, races; the window it aims
 * at is narrow, so the deterministic story of that defect is
 * tests/regress/regress_open_closing.c.  And a FIFO, opened for reading and
 * for writing: -EINVAL at once, never a wait for its other end.  And a
 * POSIX record lock taken through a plain descriptor: held across every
 * lpc_file_open of the file (each of which once closed a descriptor of it).
 *
 * Files live in a mkdtemp directory under $TMPDIR (else /var/tmp), made and
 * removed by tests/common/lpc_test.h.
 *
 * Usage: test_file_open [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/wait.h>

#include "../common/lpc_test.h"

static bool link_path_ok(const char *from, const char *to)
{
	unlink(to);
	return link(from, to) == 0;
}

/* --- lpc_file_open / lpc_file_close --- */
/* Checks guarantee A.5 of include/lpc/lpc.h. */
static void t_open(void)
{
	struct lpc_cache *c = tst_cache_create(64 * 4096, 4096, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS);
	struct lpc_file *f = NULL, *g = NULL, *h = NULL;
	struct lpc_page *p;
	struct tst_expect e = { .backend = LPC_IO_SYNC, .salt = 7, .ps = 4096 };
	char path[600], link[600], missing[600], newp[600];
	const uint64_t size = 5 * 4096 + 17;

	REQUIRE(tst_make_file("open", size, 7, path, sizeof(path)) == 0);
	e.size = size;

	CHECK_EQ(lpc_file_open(c, path, O_RDONLY | O_APPEND, 0, &f), -EINVAL, "O_APPEND");
	CHECK_EQ(lpc_file_open(c, path, O_RDWR | O_APPEND, 0, &f), -EINVAL, "O_APPEND rw");
	CHECK_EQ(lpc_file_open(c, path, O_PATH, 0, &f), -EINVAL, "O_PATH");
	CHECK_EQ(lpc_file_open(c, tst_tmpdir(), O_RDONLY | O_DIRECTORY, 0, &f), -EINVAL,
		 "O_DIRECTORY");
	CHECK_EQ(lpc_file_open(c, tst_tmpdir(), O_RDONLY, 0, &f), -EINVAL, "a directory");
	CHECK_EQ(lpc_file_open(c, "/dev/null", O_RDONLY, 0, &f), -EINVAL, "a char device");
	snprintf(missing, sizeof(missing), "%s/no-such-file", tst_tmpdir());
	CHECK_EQ(lpc_file_open(c, missing, O_RDONLY, 0, &f), -ENOENT, "nonexistent");
	CHECK_EQ(lpc_file_open(c, missing, O_RDWR, 0, &f), -ENOENT, "nonexistent rw");
	CHECK(f == NULL, "failed opens wrote *out");

	/* Twice: the same lpc_file, counted. */
	f = tst_file_open(c, path, O_RDONLY);
	g = tst_file_open(c, path, O_RDONLY);
	CHECK(f == g, "second open of the same file: %p != %p", (void *)f, (void *)g);
	/* Through a hard link (same dev, ino): still the same. */
	snprintf(link, sizeof(link), "%s/open.link", tst_tmpdir());
	if (CHECK(link_path_ok(path, link), "link(2)")) {
		h = tst_file_open(c, link, O_RDONLY);
		CHECK(h == f, "open through a hard link: %p != %p", (void *)h, (void *)f);
		CHECK_EQ(lpc_file_close(h), 0);
	}
	/* Upgrade to read-write: still the same. */
	h = tst_file_open(c, path, O_RDWR);
	CHECK(h == f, "O_RDWR after O_RDONLY: %p != %p", (void *)h, (void *)f);
	CHECK_EQ(lpc_file_close(h), 0);
	h = tst_file_open(c, path, O_WRONLY);
	CHECK(h == f, "O_WRONLY: %p != %p", (void *)h, (void *)f);
	CHECK_EQ(lpc_file_close(h), 0);

	if (CHECK_EQ(lpc_page_get(f, 1, 0, &p), 0)) {
		CHECK(tst_check_page(&e, 1, lpc_page_data(p)), "page 1 data");
		lpc_page_put(p);
	}
	/* O_TRUNC while open: -EBUSY and the file keeps its size and data. */
	CHECK_EQ(lpc_file_open(c, path, O_RDWR | O_TRUNC, 0, &h), -EBUSY, "O_TRUNC while open");
	CHECK_EQ(lpc_file_open(c, link, O_RDWR | O_TRUNC, 0, &h), -EBUSY,
		 "O_TRUNC through a link while open");
	CHECK_EQ(tst_file_size(path), (long long)size, "O_TRUNC -EBUSY truncated the file");
	{
		unsigned char b[64];
		uint64_t bad = 0;
		int fd = open(path, O_RDONLY);

		CHECK(fd >= 0 && pread(fd, b, sizeof(b), 4096) == sizeof(b) &&
			      tst_check_bytes(&e, 4096, b, sizeof(b), &bad),
		      "file contents changed after a refused O_TRUNC");
		if (fd >= 0)
			close(fd);
	}

	/* First close: f stays usable (a second open holds it). */
	CHECK_EQ(lpc_file_close(f), 0, "first close");
	if (CHECK_EQ(lpc_page_find(f, 1, &p), 0, "page still cached after the first close")) {
		CHECK(tst_check_page(&e, 1, lpc_page_data(p)));
		lpc_page_put(p);
	}
	if (CHECK_EQ(lpc_page_get(f, 2, 0, &p), 0)) {
		CHECK(tst_check_page(&e, 2, lpc_page_data(p)));
		lpc_page_put(p);
	}
	CHECK_EQ(lpc_file_close(g), 0, "second close");
	/* The second close was the last: a new open starts with nothing cached. */
	h = tst_file_open(c, path, O_RDONLY);
	CHECK_EQ(lpc_page_find(h, 1, &p), -ENOENT, "pages survived the last close");
	CHECK_EQ(lpc_page_find(h, 2, &p), -ENOENT, "pages survived the last close");
	CHECK_EQ(lpc_file_close(h), 0);

	/* Not open any more: O_TRUNC now truncates. */
	f = NULL;
	CHECK_EQ(lpc_file_open(c, path, O_RDWR | O_TRUNC, 0, &f), 0, "O_TRUNC, not open");
	CHECK_EQ(tst_file_size(path), 0, "O_TRUNC did not truncate");
	if (f) {
		char b[8];

		CHECK_EQ(lpc_page_get(f, 0, 0, &p), -ENXIO, "page 0 of an empty file");
		CHECK_EQ(lpc_pread(f, b, sizeof(b), 0), 0, "pread of an empty file");
		CHECK_EQ(lpc_file_close(f), 0);
	}
	/* O_CREAT of a new file, then O_CREAT|O_EXCL of it. */
	snprintf(newp, sizeof(newp), "%s/created", tst_tmpdir());
	f = NULL;
	CHECK_EQ(lpc_file_open(c, newp, O_RDWR | O_CREAT, 0600, &f), 0, "O_CREAT");
	CHECK_EQ(tst_file_size(newp), 0);
	CHECK_EQ(lpc_file_open(c, newp, O_RDWR | O_CREAT | O_EXCL, 0600, &h), -EEXIST,
		 "O_CREAT|O_EXCL of an existing file");
	if (f)
		CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
}

/* --- the process's POSIX record locks survive lpc's opens --- */
#define LOCK_START 100
#define LOCK_LEN 10

#define lock_held(path) tst_read_lock_held(path, LOCK_START, LOCK_LEN)

/* A read lock taken through a plain descriptor stays held across every
 * lpc_file_open of the file (filemap/file.c ZL1-ZL6): the first, a second
 * one, one through a hard link, the read-only to read-write upgrade, an
 * O_CREAT one and an O_TRUNC one refused with -EBUSY; and I/O through the
 * upgraded copy works.  The last lpc_file_close closes lpc's descriptors:
 * the lock goes then, as lpc.h states. */
/* Takes the lock again: each case below is checked on its own. */
static void relock(int fd, struct flock *fl)
{
	REQUIRE(fcntl(fd, F_SETLK, fl) == 0, "F_SETLK");
}

static void t_posix_locks(void)
{
	struct lpc_cache *c = tst_cache_create(64 * 4096, 4096, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS);
	struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = LOCK_START,
			    .l_len = LOCK_LEN };
	struct lpc_file *f = NULL, *g = NULL, *h = NULL;
	char path[600], link[600], b[8], want[8];
	const uint64_t size = 3 * 4096;
	int fd;

	REQUIRE(tst_make_file("locks", size, 3, path, sizeof(path)) == 0);
	snprintf(link, sizeof(link), "%s/locks.link", tst_tmpdir());
	REQUIRE(link_path_ok(path, link), "link(2)");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	REQUIRE(fd >= 0, "open");
	REQUIRE(fcntl(fd, F_SETLK, &fl) == 0, "F_SETLK");
	REQUIRE(lock_held(path) == 1, "the probe does not see the lock just taken");

	f = tst_file_open(c, path, O_RDONLY);
	CHECK_EQ(lock_held(path), 1, "lock dropped by the first lpc_file_open");
	relock(fd, &fl);
	g = tst_file_open(c, path, O_RDONLY);
	CHECK(g == f, "second open: %p != %p", (void *)g, (void *)f);
	CHECK_EQ(lock_held(path), 1, "lock dropped by a second lpc_file_open (A.5)");
	relock(fd, &fl);
	CHECK_EQ(lpc_file_close(g), 0);
	CHECK_EQ(lock_held(path), 1, "lock dropped by a close that was not the last");
	relock(fd, &fl);
	g = tst_file_open(c, link, O_RDONLY);
	CHECK(g == f, "open through a link: %p != %p", (void *)g, (void *)f);
	CHECK_EQ(lock_held(path), 1, "lock dropped by an open through a hard link");
	CHECK_EQ(lpc_pwrite(f, "x", 1, 0), -EBADF, "a write through the read-only copy");
	relock(fd, &fl);
	h = tst_file_open(c, path, O_RDWR);
	CHECK(h == f, "O_RDWR after O_RDONLY: %p != %p", (void *)h, (void *)f);
	CHECK_EQ(lock_held(path), 1, "lock dropped by the read-write upgrade");
	/* The upgraded copy reads and writes through its new descriptor. */
	tst_file_bytes(3, 4096, want, sizeof(want));
	CHECK_EQ(lpc_pread(h, b, sizeof(b), 4096), (ssize_t)sizeof(b), "pread after the upgrade");
	CHECK(memcmp(b, want, sizeof(b)) == 0, "pread after the upgrade: wrong bytes");
	CHECK_EQ(lpc_pwrite(h, "upgraded", 8, 0), 8, "pwrite after the upgrade");
	CHECK_EQ(lpc_fsync(h), 0, "fsync after the upgrade");
	{
		int rd = open(path, O_RDONLY | O_CLOEXEC);

		CHECK(rd >= 0 && pread(rd, b, 8, 0) == 8 && memcmp(b, "upgraded", 8) == 0,
		      "the kernel's file after the upgraded copy's fsync");
		if (rd >= 0)
			close(rd); /* drops the lock too: taken again below */
		relock(fd, &fl);
	}
	CHECK_EQ(lpc_file_close(h), 0);
	h = NULL;
	relock(fd, &fl);
	CHECK_EQ(lpc_file_open(c, path, O_RDWR | O_CREAT, 0600, &h), 0, "O_CREAT of an open file");
	CHECK(h == f, "O_CREAT: %p != %p", (void *)h, (void *)f);
	CHECK_EQ(lock_held(path), 1, "lock dropped by an O_CREAT open");
	if (h)
		CHECK_EQ(lpc_file_close(h), 0);
	relock(fd, &fl);
	CHECK_EQ(lpc_file_open(c, path, O_RDWR | O_TRUNC, 0, &h), -EBUSY, "O_TRUNC while open");
	CHECK_EQ(lock_held(path), 1, "lock dropped by an O_TRUNC open refused with -EBUSY");
	CHECK_EQ(tst_file_size(path), (long long)size, "the refused O_TRUNC truncated the file");

	relock(fd, &fl);
	CHECK_EQ(lpc_file_close(g), 0);
	CHECK_EQ(lock_held(path), 1, "lock dropped by a close that was not the last");
	relock(fd, &fl);
	CHECK_EQ(lpc_file_close(f), 0);
	CHECK_EQ(lock_held(path), 0, "the last close closes lpc's descriptors (lpc.h)");
	close(fd);
	unlink(link);
	tst_cache_destroy(c);
}

/* --- a FIFO: refused at once, files->lock never held across its open --- */
struct fifo_open {
	struct lpc_cache *c;
	const char *path;
	int oflags, rc;
	_Atomic bool done;
};

static void *fifo_main(void *arg)
{
	struct fifo_open *o = arg;
	struct lpc_file *f;

	o->rc = lpc_file_open(o->c, o->path, o->oflags, 0, &f);
	if (o->rc == 0)
		lpc_file_close(f);
	atomic_store(&o->done, true);
	return NULL;
}

/* lpc_file_open(fifo) must return -EINVAL without waiting for the FIFO's
 * other end (it held files->lock: every open and close of the cache waited
 * too).  After 2 s the test opens the other end itself, so a blocked open
 * ends. */
static void t_fifo(int oflags, const char *what)
{
	struct lpc_cache *c = tst_cache_create(64 * 4096, 4096, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS);
	struct fifo_open o = { .c = c, .oflags = oflags, .rc = 1 };
	char path[600];
	pthread_t t;
	uint64_t t0;

	snprintf(path, sizeof(path), "%s/fifo", tst_tmpdir());
	unlink(path);
	REQUIRE(mkfifo(path, 0600) == 0, "mkfifo");
	o.path = path;
	REQUIRE(pthread_create(&t, NULL, fifo_main, &o) == 0);
	t0 = tst_now_ns();
	while (!atomic_load(&o.done) && tst_now_ns() - t0 < 2000000000ull)
		tst_sleep_us(1000);
	if (!CHECK(atomic_load(&o.done), "%s: lpc_file_open of a FIFO blocked", what)) {
		int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);

		while (!atomic_load(&o.done))
			tst_sleep_us(1000);
		if (fd >= 0)
			close(fd);
	}
	pthread_join(t, NULL);
	CHECK_EQ(o.rc, -EINVAL, "%s: lpc_file_open of a FIFO", what);
	unlink(path);
	tst_cache_destroy(c);
}

/* --- opens racing last closes --- */
#define CHURN_THREADS 3
#define CHURN_PS 4096

struct churn {
	struct lpc_cache *c;
	const char *path;
	unsigned id;
	uint64_t rounds, stale, errors;
	uint32_t last;
};

static void *churn_main(void *arg)
{
	struct churn *w = arg;
	unsigned char buf[CHURN_PS];
	uint64_t end = tst_now_ns() + (uint64_t)(tst_stress_seconds(1.0) * 1e9);

	for (uint32_t r = 1; tst_now_ns() < end; r++) {
		struct lpc_file *f;
		uint32_t got;

		if (lpc_file_open(w->c, w->path, O_RDWR, 0, &f) != 0) {
			w->errors++;
			break;
		}
		if (lpc_pread(f, buf, CHURN_PS, (uint64_t)w->id * CHURN_PS) != CHURN_PS)
			w->errors++;
		memcpy(&got, buf, sizeof(got));
		if (w->last && got != w->last) /* before the first write: the file's */
			w->stale++;
		memset(buf, (int)(r & 0xff), sizeof(buf));
		memcpy(buf, &r, sizeof(r));
		if (lpc_pwrite(f, buf, CHURN_PS, (uint64_t)w->id * CHURN_PS) != CHURN_PS)
			w->errors++;
		w->last = r;
		if (lpc_file_close(f) != 0)
			w->errors++;
		w->rounds++;
	}
	return NULL;
}

static void t_open_close_churn(void)
{
	struct lpc_cache *c;
	struct churn w[CHURN_THREADS];
	pthread_t t[CHURN_THREADS];
	char path[600];
	unsigned char *back = malloc(CHURN_THREADS * CHURN_PS);

	REQUIRE(back);
	REQUIRE(tst_make_file("churn", CHURN_THREADS * CHURN_PS, 5, path, sizeof(path)) == 0);
	{
		/* The flusher at its busiest: every dirty page is due at once. */
		struct lpc_config cfg;

		lpc_config_init(&cfg);
		cfg.cache_bytes = 64 * CHURN_PS;
		cfg.page_size = CHURN_PS;
		cfg.io_backend = LPC_IO_SYNC;
		cfg.dirty_expire_ms = 1;
		cfg.dirty_background_pct = 1;
		cfg.dirty_limit_pct = 50;
		REQUIRE(lpc_cache_create(&cfg, &c) == 0, "cache");
	}
	for (unsigned i = 0; i < CHURN_THREADS; i++) {
		w[i] = (struct churn){ .c = c, .path = path, .id = i };
		REQUIRE(pthread_create(&t[i], NULL, churn_main, &w[i]) == 0);
	}
	for (unsigned i = 0; i < CHURN_THREADS; i++) {
		pthread_join(t[i], NULL);
		CHECK_EQ(w[i].errors, 0, "churn thread %u: failed calls", i);
		CHECK_EQ(w[i].stale, 0, "churn thread %u: reads of a stale copy in %" PRIu64
			 " rounds", i, w[i].rounds);
		CHECK(w[i].rounds > 0, "churn thread %u ran", i);
	}
	/* Every close returned: the disk holds each thread's last write. */
	CHECK_EQ(tst_file_size(path), CHURN_THREADS * CHURN_PS);
	{
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		REQUIRE(fd >= 0);
		CHECK_EQ(pread(fd, back, CHURN_THREADS * CHURN_PS, 0), CHURN_THREADS * CHURN_PS);
		close(fd);
	}
	for (unsigned i = 0; i < CHURN_THREADS; i++) {
		uint32_t got;

		memcpy(&got, back + (size_t)i * CHURN_PS, sizeof(got));
		CHECK_EQ(got, w[i].last, "page %u on disk after the closes", i);
	}
	free(back);
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 100);
	tst_require_tmpdir();

	TST_RUN(t_open());
	TST_RUN(t_posix_locks());
	TST_RUN(t_fifo(O_RDONLY, "O_RDONLY"));
	TST_RUN(t_fifo(O_WRONLY, "O_WRONLY"));
	TST_RUN(t_open_close_churn());
	return tst_finish();
}
