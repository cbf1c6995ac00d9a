/* SPDX-License-Identifier: MIT */
/*
 * lpc_test.h - small helpers shared by lpc's test programs (header only, every
 * function static inline or static, one translation unit per program).
 *
 *  - checks:  CHECK(cond, fmt, ...) counts a pass or a failure (printing
 *             file:line, the expression and the message) and yields the
 *             condition, so a test can stop a sub-case early; REQUIRE is a
 *             CHECK that ends the program (exit 1) when it fails.  Both are
 *             thread-safe.  tst_finish() prints the final "N passed, N failed"
 *             line and returns the exit status (0 pass, 1 fail);
 *             tst_skip() prints it and exits 77.
 *  - seeds:   tst_init(argc, argv) takes --seed N (else one from the clock),
 *             prints "seed N" first, and arms a watchdog (alarm) so a hang
 *             fails with a message rather than only by the CTest timeout.
 *             tst_rnd() is splitmix64 on a caller's state.
 *  - time:    tst_now_ns(); tst_stress_seconds(default) honours the
 *             LPC_STRESS_SECONDS environment variable (a double).
 *  - files:   tst_tmpdir() makes one mkdtemp directory under $TMPDIR (else
 *             /var/tmp: /tmp may be tmpfs) removed at exit; tst_make_file()
 *             writes a file with plain write(2) whose bytes are
 *             tst_file_byte(salt, offset); tst_make_sparse() sizes an empty
 *             file (for the null backend, which only reads its size);
 *             tst_file_id() is the file's st_ino, the id the null backend uses.
 *  - null backend data: tst_null_expect() builds the bytes a cached page of a
 *             null-backend file must hold (pattern up to the file's size,
 *             zeros after), tst_null_check_range() checks any byte range.
 *  - API cases: tst_cache_create(), tst_file_open() and tst_cache_destroy()
 *             stop or count a failure themselves; struct tst_expect says what
 *             a file holds (either backend), tst_check_bytes() and
 *             tst_check_page() compare what lpc returned with it.
 *  - running: tst_require_tmpdir() skips without a temporary directory;
 *             TST_RUN(case(args)) runs one case and prints its time.
 */
#ifndef LPC_TESTS_COMMON_LPC_TEST_H
#define LPC_TESTS_COMMON_LPC_TEST_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <lpc/lpc.h>

#include "io/io.h"

static _Atomic unsigned long tst_passed, tst_failed;
static uint64_t tst_seed;
static char tst_dir[512];

#define CHECK(cond, ...)                                                         \
	({                                                                       \
		bool tst_ok_ = (cond);                                           \
		if (tst_ok_) {                                                   \
			atomic_fetch_add(&tst_passed, 1);                        \
		} else {                                                         \
			atomic_fetch_add(&tst_failed, 1);                        \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__,  \
				#cond);                                          \
			fprintf(stderr, " " __VA_ARGS__);                         \
			fprintf(stderr, " (seed %" PRIu64 ")\n", tst_seed);      \
		}                                                                \
		tst_ok_;                                                         \
	})

/* Check an int/ssize_t result equals an expected value, printing both. */
#define CHECK_EQ(got, want, ...)                                                 \
	({                                                                       \
		long long tst_g_ = (long long)(got), tst_w_ = (long long)(want); \
		bool tst_ok_ = tst_g_ == tst_w_;                                 \
		if (tst_ok_) {                                                   \
			atomic_fetch_add(&tst_passed, 1);                        \
		} else {                                                         \
			atomic_fetch_add(&tst_failed, 1);                        \
			fprintf(stderr, "FAIL %s:%d: %s == %s: got %lld, want %lld: ", \
				__FILE__, __LINE__, #got, #want, tst_g_, tst_w_); \
			fprintf(stderr, " " __VA_ARGS__);                         \
			fprintf(stderr, " (seed %" PRIu64 ")\n", tst_seed);      \
		}                                                                \
		tst_ok_;                                                         \
	})

static inline int tst_finish(void)
{
	unsigned long f = atomic_load(&tst_failed);

	printf("%lu passed, %lu failed\n", atomic_load(&tst_passed), f);
	fflush(stdout);
	return f ? 1 : 0;
}

#define REQUIRE(cond, ...)                                                       \
	do {                                                                     \
		if (!CHECK(cond, __VA_ARGS__)) {                                 \
			tst_finish();                                            \
			exit(1);                                                 \
		}                                                                \
	} while (0)

static inline __attribute__((noreturn)) void tst_skip(const char *why)
{
	printf("SKIP: %s\n", why);
	printf("%lu passed, %lu failed\n", atomic_load(&tst_passed),
	       atomic_load(&tst_failed));
	fflush(stdout);
	exit(atomic_load(&tst_failed) ? 1 : 77);
}

static inline uint64_t tst_rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline uint64_t tst_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void tst_sleep_us(unsigned us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* LPC_STRESS_SECONDS (a positive number) or def. */
static inline double tst_stress_seconds(double def)
{
	const char *s = getenv("LPC_STRESS_SECONDS");
	double v;

	if (!s || !*s)
		return def;
	v = strtod(s, NULL);
	return v > 0 ? v : def;
}

static void tst_watchdog(int sig)
{
	static const char msg[] = "FAIL: watchdog: the test hung (lost wake-up or deadlock?)\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0) {
		/* nothing more to do */
	}
	_exit(1);
}

/*
 * Parses --seed N; prints the seed; arms a watchdog of `watchdog_s` seconds
 * (0: none).  Unknown arguments are an error (exit 2).
 */
static inline void tst_init(int argc, char **argv, unsigned watchdog_s)
{
	bool have = false;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			tst_seed = strtoull(argv[++i], NULL, 0);
			have = true;
		} else {
			fprintf(stderr, "usage: %s [--seed N]\n", argv[0]);
			exit(2);
		}
	}
	if (!have)
		tst_seed = tst_now_ns() ^ ((uint64_t)getpid() << 32);
	printf("seed %" PRIu64 " (replay: %s --seed %" PRIu64 ")\n", tst_seed, argv[0],
	       tst_seed);
	fflush(stdout);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (watchdog_s) {
		signal(SIGALRM, tst_watchdog);
		alarm(watchdog_s);
	}
}

/* --- temporary files --- */

static int tst_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	(void)remove(path); /* best effort: keep walking */
	return 0;
}

static void tst_rm_dir(void)
{
	if (tst_dir[0])
		nftw(tst_dir, tst_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A directory for this program's files, under `base` (NULL: $TMPDIR, else
 * /var/tmp), removed at exit.  Return: its path, or NULL (errno set). */
static inline const char *tst_mkdtemp(const char *base, char *out, size_t outlen)
{
	if (!base) {
		base = getenv("TMPDIR");
		if (!base || !*base)
			base = "/var/tmp";
	}
	snprintf(out, outlen, "%s/lpc-test-XXXXXX", base);
	return mkdtemp(out);
}

static inline const char *tst_tmpdir(void)
{
	if (tst_dir[0])
		return tst_dir;
	if (!tst_mkdtemp(NULL, tst_dir, sizeof(tst_dir))) {
		fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
		tst_dir[0] = 0;
		return NULL;
	}
	atexit(tst_rm_dir);
	return tst_dir;
}

/* The byte at `off` of a test file made with `salt`. */
static inline unsigned char tst_file_byte(uint64_t salt, uint64_t off)
{
	uint64_t s = (off >> 3) ^ (salt * 0x9e3779b97f4a7c15ull);
	uint64_t z = tst_rnd(&s);

	return (unsigned char)(z >> (8 * (off & 7)));
}

static inline void tst_file_bytes(uint64_t salt, uint64_t off, void *buf, size_t len)
{
	unsigned char *b = buf;
	size_t i = 0;

	/* Byte by byte up to a word boundary, then a word at a time. */
	for (; i < len && ((off + i) & 7); i++)
		b[i] = tst_file_byte(salt, off + i);
	for (; i + 8 <= len; i += 8) {
		uint64_t s = ((off + i) >> 3) ^ (salt * 0x9e3779b97f4a7c15ull);
		uint64_t z = tst_rnd(&s);

		memcpy(b + i, &z, 8); /* little-endian: byte k is z >> 8k */
	}
	for (; i < len; i++)
		b[i] = tst_file_byte(salt, off + i);
}

/*
 * Creates (truncating) dir/name of `size` bytes written with write(2),
 * contents tst_file_byte(salt, offset).  Return: 0 or -errno.
 */
static inline int tst_make_file_in(const char *dir, const char *name, uint64_t size,
				   uint64_t salt, char *path, size_t pathlen)
{
	unsigned char buf[65536];
	uint64_t done = 0;
	int fd;

	snprintf(path, pathlen, "%s/%s", dir, name);
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	while (done < size) {
		size_t n = size - done < sizeof(buf) ? (size_t)(size - done) : sizeof(buf);

		tst_file_bytes(salt, done, buf, n);
		if (write(fd, buf, n) != (ssize_t)n) {
			int e = errno ? errno : EIO;

			close(fd);
			return -e;
		}
		done += n;
	}
	close(fd);
	return 0;
}

static inline int tst_make_file(const char *name, uint64_t size, uint64_t salt, char *path,
				size_t pathlen)
{
	const char *dir = tst_tmpdir();

	if (!dir)
		return -EIO;
	return tst_make_file_in(dir, name, size, salt, path, pathlen);
}

/* An empty file of `size` bytes (a hole): enough for the null backend. */
static inline int tst_make_sparse(const char *name, uint64_t size, char *path, size_t pathlen)
{
	const char *dir = tst_tmpdir();
	int fd;

	if (!dir)
		return -EIO;
	snprintf(path, pathlen, "%s/%s", dir, name);
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) != 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	close(fd);
	return 0;
}

static inline uint64_t tst_file_id(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return 0;
	return (uint64_t)st.st_ino;
}

static inline int64_t tst_file_size(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return -1;
	return (int64_t)st.st_size;
}

/* --- the null backend's data --- */

/*
 * What page `index` of a null-backend file of `fsize` bytes (id `id`) holds
 * once cached: the backend fills only the bytes before the file's size (the
 * pattern depends on how many: lpc_io_null_pattern(id, index, buf, valid)),
 * and lpc zeroes the rest of the frame.
 */
static inline void tst_null_expect(uint64_t id, uint64_t index, size_t page_size,
				   uint64_t fsize, void *out)
{
	uint64_t off = index * page_size;
	size_t valid = 0;

	if (off < fsize)
		valid = fsize - off < page_size ? (size_t)(fsize - off) : page_size;
	memset(out, 0, page_size);
	if (valid)
		lpc_io_null_pattern(id, index, out, valid);
}

/*
 * Checks len bytes at byte offset `off` of a null-backend file, as lpc_pread
 * returns them.  scratch: page_size bytes.  Return: true if all match;
 * *bad_off receives the first bad offset otherwise.
 */
static inline bool tst_null_check_range(uint64_t id, size_t page_size, uint64_t fsize,
					uint64_t off, const void *buf, size_t len, void *scratch,
					uint64_t *bad_off)
{
	const unsigned char *b = buf;
	size_t done = 0;

	while (done < len) {
		uint64_t pos = off + done;
		uint64_t index = pos / page_size;
		size_t pgoff = (size_t)(pos % page_size);
		size_t n = page_size - pgoff;

		if (n > len - done)
			n = len - done;
		tst_null_expect(id, index, page_size, fsize, scratch);
		if (memcmp(b + done, (unsigned char *)scratch + pgoff, n) != 0) {
			for (size_t i = 0; i < n; i++) {
				if (b[done + i] != ((unsigned char *)scratch)[pgoff + i]) {
					if (bad_off)
						*bad_off = pos + i;
					break;
				}
			}
			return false;
		}
		done += n;
	}
	return true;
}

/*
 * Checks a whole cached page of a null-backend file: the 16-byte stamp
 * {id, index} first (so a page of another identity is reported as such),
 * then every byte.  scratch: page_size bytes.
 * Return: 0 if it matches; 1 wrong stamp; 2 right stamp, wrong bytes.
 */
static inline int tst_null_check_page(uint64_t id, uint64_t index, size_t page_size,
				      uint64_t fsize, const void *data, void *scratch)
{
	uint64_t w[2];

	memcpy(w, data, sizeof(w));
	if (index * page_size + 16 <= fsize && (w[0] != id || w[1] != index))
		return 1;
	tst_null_expect(id, index, page_size, fsize, scratch);
	return memcmp(data, scratch, page_size) ? 2 : 0;
}

/*
 * The disk backend the suites run on.  A test that asks tst_cache_create for
 * LPC_IO_SYNC or LPC_IO_URING means "a real file": it gets the backend
 * LPC_TEST_IO names (sync or uring; default uring, the library's default),
 * so the unit and stress suites run under both (ctest's `.sync` twins set
 * LPC_TEST_IO=sync).  LPC_IO_NULL is kept.  Tests that loop over the
 * backends themselves (write_test.h) make their caches otherwise.
 */
static inline int tst_disk_backend(int backend)
{
	const char *e = getenv("LPC_TEST_IO");

	if (backend != LPC_IO_SYNC && backend != LPC_IO_URING)
		return backend;
	return e && !strcmp(e, "sync") ? LPC_IO_SYNC : LPC_IO_URING;
}

/* lpc_config.readahead_kb of the caches tst_cache_create makes (0: the
 * default, readahead on).  A test that counts reads or pages page by page,
 * about something else than readahead, sets LPC_READAHEAD_OFF first. */
static uint32_t tst_readahead_kb;

/* A cache of `bytes` in pages of `ps`, with the given backend (see
 * tst_disk_backend) and lookup mode; the test stops if it cannot be created. */
static inline struct lpc_cache *tst_cache_create(size_t bytes, size_t ps, int backend, int mode)
{
	struct lpc_config cfg;
	struct lpc_cache *c = NULL;
	int rc;

	backend = tst_disk_backend(backend);
	lpc_config_init(&cfg);
	cfg.readahead_kb = tst_readahead_kb;
	cfg.cache_bytes = bytes;
	cfg.page_size = ps;
	cfg.io_backend = backend;
	cfg.lookup_mode = mode;
	rc = lpc_cache_create(&cfg, &c);
	REQUIRE(rc == 0 && c, "lpc_cache_create(%zu, %zu, %d, %d) = %d", bytes, ps, backend,
		mode, rc);
	return c;
}

/* A file of cache `c` opened with `oflags`; the test stops if it cannot be. */
static inline struct lpc_file *tst_file_open(struct lpc_cache *c, const char *path, int oflags)
{
	struct lpc_file *f = NULL;
	int rc = lpc_file_open(c, path, oflags, 0644, &f);

	REQUIRE(rc == 0 && f, "lpc_file_open(%s) = %d", path, rc);
	return f;
}

/* lpc_cache_destroy(c), checked to return 0. */
static inline void tst_cache_destroy(struct lpc_cache *c)
{
	CHECK_EQ(lpc_cache_destroy(c), 0, "destroy");
}

/* --- expected file bytes: sync backend (salt) or null (id) --- */

/* What a test file holds: made by tst_make_file(salt) and read through the
 * sync backend, or any file read through the null backend (id). */
struct tst_expect {
	int backend;
	uint64_t salt, id, size;
	size_t ps;
};

/*
 * Checks bytes [off, off+len) of the file `e` as lpc returned them in buf.
 * Return: true if all match; *bad receives the first bad offset otherwise.
 */
static inline bool tst_check_bytes(const struct tst_expect *e, uint64_t off, const void *buf,
				   size_t len, uint64_t *bad)
{
	if (e->backend == LPC_IO_SYNC) {
		const unsigned char *b = buf;
		unsigned char *want = malloc(len ? len : 1);
		bool ok = true;

		REQUIRE(want);
		tst_file_bytes(e->salt, off, want, len);
		if (memcmp(b, want, len) != 0) {
			ok = false;
			for (size_t i = 0; i < len; i++)
				if (b[i] != want[i]) {
					*bad = off + i;
					break;
				}
		}
		free(want);
		return ok;
	}
	void *scratch = malloc(e->ps);
	bool ok = tst_null_check_range(e->id, e->ps, e->size, off, buf, len, scratch, bad);

	free(scratch);
	return ok;
}

/* A whole cached page: file bytes up to the size, zeros after. */
static inline bool tst_check_page(const struct tst_expect *e, uint64_t index, const void *data)
{
	const unsigned char *d = data;
	uint64_t off = index * e->ps, bad = 0;
	size_t valid = off >= e->size ? 0 : e->size - off < e->ps ? e->size - off : e->ps;

	if (!tst_check_bytes(e, off, d, valid, &bad))
		return false;
	for (size_t i = valid; i < e->ps; i++)
		if (d[i])
			return false;
	return true;
}

/* --- running cases --- */

/* The program's files need a temporary directory: skip (77) without one. */
/* Allocates private pages until the cache refuses (at most max + 1, so one
 * too many shows), puts them back.  Return: how many it had. */
static inline unsigned tst_frames_allocatable(struct lpc_cache *c, unsigned max)
{
	struct lpc_page **all = calloc(max + 1, sizeof(*all));
	unsigned n = 0;

	REQUIRE(all);
	while (n <= max && lpc_page_alloc(c, &all[n]) == 0)
		n++;
	for (unsigned i = 0; i < n; i++)
		lpc_page_put(all[i]);
	free(all);
	return n;
}

static inline void tst_require_tmpdir(void)
{
	if (!tst_tmpdir())
		tst_skip("no temporary directory");
}

/* Runs one case and prints how long it took. */
#define TST_RUN(call)                                                              \
	do {                                                                       \
		uint64_t t0_ = tst_now_ns();                                       \
		call;                                                              \
		printf("  %-45s %7.1f ms\n", #call, (tst_now_ns() - t0_) / 1e6);  \
	} while (0)

/* Does another process see a read lock of this one (a POSIX record lock)
 * on [start, start + len) of path?  Asked from a forked child with
 * F_GETLK (a process does not see its own locks).  Closing any descriptor
 * of a file drops every POSIX lock the process holds on it, so this is how
 * the tests check that lpc's opens and closes leave a caller's locks
 * alone.  Return: 1 yes, 0 no. */
static inline int tst_read_lock_held(const char *path, off_t start, off_t len)
{
	pid_t pid, me = getpid();
	int status;

	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		/* Only async-signal-safe calls: the parent has threads. */
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
				    .l_start = start, .l_len = len };
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		if (fd < 0 || fcntl(fd, F_GETLK, &fl) < 0)
			_exit(2);
		_exit(fl.l_type == F_RDLCK && fl.l_pid == me ? 1 : 0);
	}
	REQUIRE(waitpid(pid, &status, 0) == pid, "waitpid");
	REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) < 2, "the lock probe failed (0x%x)",
		status);
	return WEXITSTATUS(status);
}

/* Calls fn(tid, comm, arg) for each thread of this process now
 * (/proc/self/task; a thread that exits meanwhile is skipped).  A joined
 * thread may still be listed a moment after pthread_join returns (the
 * kernel wakes the joiner before it reaps the task), and a new thread bears
 * its creator's name until it is named (lpc_thread_spawn names it from the
 * creating thread, after pthread_create): callers that count sample more
 * than once (test_write_flusher). */
static inline void tst_threads_each(void (*fn)(const char *tid, const char *comm, void *arg),
				    void *arg)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;

	REQUIRE(d, "opendir /proc/self/task");
	while ((e = readdir(d))) {
		char path[300], comm[32] = "";
		FILE *fp;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		fp = fopen(path, "r");
		if (!fp)
			continue; /* a thread that just exited */
		if (fgets(comm, sizeof(comm), fp)) {
			comm[strcspn(comm, "\n")] = 0;
			fn(e->d_name, comm, arg);
		}
		fclose(fp);
	}
	closedir(d);
}

struct tst_named {
	const char *name;
	unsigned n;
};

static inline void tst_named_count(const char *tid, const char *comm, void *arg)
{
	struct tst_named *q = arg;

	(void)tid;
	q->n += !strcmp(comm, q->name);
}

/* The threads of this process named `name` now (one sample). */
static inline unsigned tst_threads_named(const char *name)
{
	struct tst_named q = { .name = name };

	tst_threads_each(tst_named_count, &q);
	return q.n;
}

#endif /* LPC_TESTS_COMMON_LPC_TEST_H */
