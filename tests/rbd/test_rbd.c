// SPDX-License-Identifier: MIT
/*
 * test_rbd.c - liblpc_rbd against a real single-node Ceph cluster
 * (scripts/ceph-cluster.sh, started by the CTest fixture of
 * tests/rbd/CMakeLists.txt).  No mock: every check reads the image back
 * through librbd directly, on a connection of its own.
 *
 *   test_rbd CLUSTER_DIR CLUSTER_SCRIPT CASE [--seed N]
 *
 * Cases:
 *   basic   random lpc_pwrite/lpc_pread/lpc_fsync/lpc_truncate on a small
 *           cache against a reference buffer, compared with lpc after
 *           every call and with the image (bytes and size) after every
 *           fsync and after the close
 *   crash   a child writes rounds of stamped pages and reports each round
 *           lpc_fsync made durable; SIGKILL at a random moment; every page
 *           in the image carries at least the round of its last durable
 *           write, and a whole round's stamp (no torn page)
 *   osd     the OSD stopped mid-run: a miss and lpc_fsync fail (within
 *           rados_osd_op_timeout), lpc_pwrite into the cache still works,
 *           nothing dirty is dropped: after the OSD is back lpc_fsync
 *           succeeds and the image holds every byte
 *   second  the one-writer rule (lpc_rbd.h): a second read-write
 *           lpc_rbd_open (another cache) gets -EBUSY, a plain librbd
 *           client's write is refused, a read-only open sees what lpc
 *           wrote back, the same name in the same cache is the same file
 *   resizeby another client shrinks the image lpc holds read-write (librbd
 *           has lpc's own handle carry the resize out, rbd.c RB4): the
 *           next lpc_fsync and every later one return -EIO, the image is
 *           grown back to lpc's size, lpc_pwrite still works and its bytes
 *           reach the image; a read-only lpc file sees another client's
 *           growth (its size follows the image)
 *   deadowner a child holding the image read-write is killed (SIGKILL): the
 *           next read-write open returns -EBUSY at once (its watch has not
 *           timed out yet), not after librbd's 30 s wait with -ESHUTDOWN
 *   full    the cluster full (its full ratio lowered to 0.1 %: the OSD and
 *           the pool marked full): lpc_fsync returns -ENOSPC at once
 *           (lpc_rbd.h: the writes are tried and the OSD refuses them),
 *           lpc_pread still returns the new bytes, nothing dirty is
 *           dropped: once the ratio is back lpc_fsync succeeds and the
 *           image holds every byte; a growing lpc_truncate while full
 *           (0 or -ENOSPC) leaves no false cut (no -EIO from a later
 *           fsync, rbd.c RB2/RB4); the ratios are put back at exit
 *   batch   batched reads (read_batch, rbd.c RB5-RB7): lpc_page_get_batch
 *           of scattered pages (one past the end) and a read stream over
 *           the image, every page's bytes as librbd reads them
 *   stress  one image, several threads: writers of stamped pages with
 *           lpc_fsync, lpc_page_get_batch, a read stream, and a thread
 *           that invalidates and truncates; every page a reader sees is
 *           a whole stamp of its own, never newer than written (checked
 *           under the page lock); at the end the image holds lpc's bytes
 *           (LPC_STRESS_SECONDS, default 4)
 * Exit: 0 pass, 1 fail, 77 skip (no cluster: the fixture found no Ceph).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rados/librados.h>
#include <rbd/librbd.h>

#include <lpc/lpc.h>
#include <lpc/lpc_rbd.h>

#define PAGE 4096u

static const char *cluster_dir, *cluster_script;
static char conf_path[4096];
static uint64_t rng_state;

#define CHECK(cond, ...)                                                              \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "test_rbd: %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                 \
			fputc('\n', stderr);                                          \
			exit(1);                                                      \
		}                                                                     \
	} while (0)

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* A direct librbd connection: the oracle. */
struct direct {
	rados_t cluster;
	rados_ioctx_t io;
	rbd_image_t image;
};

static void direct_connect(struct direct *d)
{
	memset(d, 0, sizeof(*d));
	CHECK(rados_create(&d->cluster, NULL) == 0, "rados_create");
	CHECK(rados_conf_read_file(d->cluster, conf_path) == 0, "conf %s", conf_path);
	rados_conf_set(d->cluster, "rbd_cache", "false");
	rados_conf_set(d->cluster, "rados_osd_op_timeout", "30");
	int r = rados_connect(d->cluster);
	CHECK(r == 0, "rados_connect: %d", r);
	CHECK(rados_ioctx_create(d->cluster, "lpc", &d->io) == 0, "ioctx lpc");
}

static void direct_close(struct direct *d)
{
	if (d->image)
		rbd_close(d->image);
	rados_ioctx_destroy(d->io);
	rados_shutdown(d->cluster);
}

/* A fresh image `img` of `size` bytes (removed first if a run left one). */
static void make_image(const char *img, uint64_t size)
{
	struct direct d;
	int order = 22; /* 4 MiB objects, librbd's default */

	direct_connect(&d);
	rbd_remove(d.io, img);
	int r = rbd_create(d.io, img, size, &order);
	CHECK(r == 0, "rbd_create %s: %d", img, r);
	direct_close(&d);
}

/* The image read through librbd (read-only open: no lock needed), on one
 * connection of the test's, made at the first call (after any fork) and
 * shut down before the exit (image_read_end): a connection left running
 * meets libceph-common's static destructors at exit (a SIGSEGV under TSan
 * in MonClient::tick). */
static struct direct image_read_d;
static bool image_read_connected;

static void image_read_end(void)
{
	if (image_read_connected)
		direct_close(&image_read_d);
	image_read_connected = false;
}

static uint64_t image_read(const char *img, unsigned char **data)
{
	struct direct *dp = &image_read_d;
	rbd_image_t image;
	uint64_t size;

	if (!image_read_connected) {
		direct_connect(dp);
		image_read_connected = true;
	}
	int r = rbd_open_read_only(dp->io, img, &image, NULL);
	CHECK(r == 0, "rbd_open_read_only %s: %d", img, r);
	CHECK(rbd_get_size(image, &size) == 0, "size");
	*data = malloc(size ? size : 1);
	CHECK(*data, "malloc");
	for (uint64_t off = 0; off < size;) {
		size_t n = size - off > (4u << 20) ? (4u << 20) : (size_t)(size - off);
		ssize_t got = rbd_read(image, off, n, (char *)*data + off);
		CHECK(got == (ssize_t)n, "rbd_read at %" PRIu64 ": %zd", off, got);
		off += n;
	}
	rbd_close(image);
	return size;
}

static void compare_image(const char *img, const unsigned char *ref, uint64_t size,
			  const char *when)
{
	unsigned char *data;
	uint64_t isize = image_read(img, &data);

	CHECK(isize == size, "%s: image size %" PRIu64 ", expected %" PRIu64, when, isize, size);
	for (uint64_t i = 0; i < size; i++)
		CHECK(data[i] == ref[i], "%s: image byte %" PRIu64 " is %u, expected %u", when, i,
		      data[i], ref[i]);
	free(data);
}

static struct lpc_cache *make_cache(size_t bytes)
{
	struct lpc_config cfg;
	struct lpc_cache *c;

	lpc_config_init(&cfg);
	cfg.cache_bytes = bytes;
	int r = lpc_cache_create(&cfg, &c);
	CHECK(r == 0, "lpc_cache_create: %d", r);
	return c;
}

static void cluster(const char *verb)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd), "bash '%s' %s '%s'", cluster_script, verb, cluster_dir);
	int r = system(cmd);
	CHECK(r == 0, "%s: %d", cmd, r);
}

static void fill(unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)rnd();
}

/* ---- basic ---- */

static void case_basic(void)
{
	const char *img = "basic";
	char name[64];
	uint64_t max = 96 * PAGE, size = 32 * PAGE;
	unsigned char *ref = calloc(1, max), *buf = malloc(max);
	struct lpc_cache *c = make_cache(16 * PAGE); /* a quarter of the file */
	struct lpc_file *f;

	make_image(img, size);
	snprintf(name, sizeof(name), "rbd:lpc/%s", img);
	int r = lpc_rbd_open(c, name, conf_path, O_RDWR, &f);
	CHECK(r == 0, "lpc_rbd_open: %d", r);
	for (int step = 0; step < 300; step++) {
		unsigned op = (unsigned)(rnd() % 100);
		uint64_t off = rnd() % max, len = 1 + rnd() % (3 * PAGE);

		if (off + len > max)
			len = max - off;
		if (op < 40) {
			fill(buf, len);
			ssize_t n = lpc_pwrite(f, buf, len, off);
			if (n >= 0 && n < (ssize_t)len) /* the error that stopped it */
				n = lpc_pwrite(f, buf + n, len - (size_t)n, off + (uint64_t)n);
			CHECK(n == (ssize_t)len, "step %d pwrite %" PRIu64 "+%" PRIu64 ": %zd", step,
			      off, len, n);
			memcpy(ref + off, buf, len);
			if (off + len > size)
				size = off + len;
		} else if (op < 80) {
			ssize_t n = lpc_pread(f, buf, len, off);
			uint64_t want = off >= size ? 0 : (off + len > size ? size - off : len);
			CHECK(n == (ssize_t)want, "step %d pread %" PRIu64 "+%" PRIu64 ": %zd, want %" PRIu64,
			      step, off, len, n, want);
			CHECK(memcmp(buf, ref + off, want) == 0, "step %d pread data at %" PRIu64, step,
			      off);
		} else if (op < 90) {
			r = lpc_fsync(f);
			CHECK(r == 0, "step %d fsync: %d", step, r);
			compare_image(img, ref, size, "after fsync");
		} else {
			uint64_t ns = rnd() % max;
			r = lpc_truncate(f, ns);
			CHECK(r == 0, "step %d truncate %" PRIu64 ": %d", step, ns, r);
			if (ns < size)
				memset(ref + ns, 0, size - ns);
			size = ns;
		}
	}
	r = lpc_file_close(f);
	CHECK(r == 0, "close: %d", r);
	compare_image(img, ref, size, "after close");
	/* Reopened on a cold cache: lpc reads what the image holds. */
	r = lpc_rbd_open(c, name, conf_path, O_RDONLY, &f);
	CHECK(r == 0, "reopen: %d", r);
	ssize_t n = lpc_pread(f, buf, max, 0);
	CHECK(n == (ssize_t)size, "cold read: %zd, size %" PRIu64, n, size);
	CHECK(memcmp(buf, ref, size) == 0, "cold read data");
	CHECK(lpc_file_close(f) == 0, "close");
	CHECK(lpc_cache_destroy(c) == 0, "destroy");
	free(ref);
	free(buf);
}

/* ---- crash ---- */

#define CRASH_PAGES 64
#define CRASH_PER_ROUND 8

/* Page p's content in round k: every 8 bytes (k, p). */
static void stamp(unsigned char *buf, uint32_t round, uint32_t page)
{
	for (unsigned i = 0; i < PAGE; i += 8) {
		memcpy(buf + i, &round, 4);
		memcpy(buf + i + 4, &page, 4);
	}
}

/* The pages round k writes (a function of the seed and k alone). */
static void round_pages(uint64_t seed, uint32_t k, uint32_t *pages)
{
	uint64_t s = seed * 0x9e3779b97f4a7c15ull + k + 1;
	for (int i = 0; i < CRASH_PER_ROUND; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		pages[i] = (uint32_t)(s % CRASH_PAGES);
	}
}

static void case_crash(uint64_t seed)
{
	char img[64], name[80];
	int pfd[2];

	/* A name of its own: a killed run's image stays locked until the
	 * cluster times out the dead client's watch (30 s), and removing it
	 * would wait that long. */
	snprintf(img, sizeof(img), "crash-%d", (int)getpid());
	snprintf(name, sizeof(name), "rbd:lpc/%s", img);

	make_image(img, (uint64_t)CRASH_PAGES * PAGE);
	CHECK(pipe(pfd) == 0, "pipe");
	pid_t pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		struct lpc_cache *c = make_cache(16 * PAGE);
		struct lpc_file *f;
		unsigned char page[PAGE];
		uint32_t pages[CRASH_PER_ROUND];

		close(pfd[0]);
		if (lpc_rbd_open(c, name, conf_path, O_RDWR, &f) != 0)
			_exit(3);
		for (uint32_t k = 1;; k++) {
			round_pages(seed, k, pages);
			for (int i = 0; i < CRASH_PER_ROUND; i++) {
				stamp(page, k, pages[i]);
				if (lpc_pwrite(f, page, PAGE, (uint64_t)pages[i] * PAGE) != PAGE)
					_exit(4);
			}
			if (lpc_fsync(f) != 0)
				_exit(5);
			if (write(pfd[1], &k, sizeof(k)) != sizeof(k))
				_exit(6);
		}
	}
	close(pfd[1]);
	/* Let it make 5 to 20 rounds durable, then kill it mid-round. */
	uint32_t want = 5 + (uint32_t)(rnd() % 16), durable = 0, k;
	while (durable < want && read(pfd[0], &k, sizeof(k)) == sizeof(k))
		durable = k;
	usleep((useconds_t)(rnd() % 20000));
	kill(pid, SIGKILL);
	int st;
	waitpid(pid, &st, 0);
	CHECK(WIFSIGNALED(st), "the child exited by itself: status %d", st);
	/* Rounds reported after our last read are durable too. */
	while (read(pfd[0], &k, sizeof(k)) == sizeof(k))
		durable = k;
	close(pfd[0]);
	CHECK(durable >= want, "only %u rounds durable", durable);

	/* The last durable round of each page, and the last round begun. */
	uint32_t last[CRASH_PAGES] = { 0 }, pages[CRASH_PER_ROUND];
	for (uint32_t r = 1; r <= durable; r++) {
		round_pages(seed, r, pages);
		for (int i = 0; i < CRASH_PER_ROUND; i++)
			last[pages[i]] = r;
	}
	unsigned char *data;
	uint64_t size = image_read(img, &data);
	CHECK(size == (uint64_t)CRASH_PAGES * PAGE, "image size %" PRIu64, size);
	for (uint32_t p = 0; p < CRASH_PAGES; p++) {
		unsigned char *pg = data + (uint64_t)p * PAGE;
		uint32_t r0, p0;
		memcpy(&r0, pg, 4);
		memcpy(&p0, pg + 4, 4);
		if (last[p] == 0 && r0 == 0 && p0 == 0)
			continue; /* never durably written, still zero (or not yet) */
		CHECK(r0 >= last[p], "page %u: round %u in the image, %u was durable", p, r0, last[p]);
		CHECK(r0 <= durable + 1, "page %u: round %u never began", p, r0);
		unsigned char expect[PAGE];
		stamp(expect, r0, p);
		CHECK(memcmp(pg, expect, PAGE) == 0, "page %u torn or wrong (round %u)", p, r0);
	}
	free(data);
	printf("crash: seed %" PRIu64 ", killed after %u durable rounds\n", seed, durable);
}

/* ---- osd ---- */

static void case_osd(void)
{
	const char *img = "osd";
	char opts[4400];
	uint64_t size = 64 * PAGE;
	unsigned char *ref = calloc(1, size), *buf = malloc(size);
	struct lpc_cache *c = make_cache(256 * PAGE); /* everything fits */
	struct lpc_file *f;

	make_image(img, size);
	snprintf(opts, sizeof(opts), "conf=%s;rados_osd_op_timeout=3", conf_path);
	int r = lpc_rbd_open(c, "rbd:lpc/osd", opts, O_RDWR, &f);
	CHECK(r == 0, "lpc_rbd_open: %d", r);
	/* Pages 0..15 written and durable, 16..31 read (cached, clean). */
	fill(ref, 16 * PAGE);
	CHECK(lpc_pwrite(f, ref, 16 * PAGE, 0) == 16 * PAGE, "pwrite");
	CHECK(lpc_fsync(f) == 0, "fsync");
	CHECK(lpc_pread(f, buf, 16 * PAGE, 16 * PAGE) == 16 * PAGE, "pread");

	cluster("osd-stop");
	/* Cached pages still read; new writes go to the cache. */
	CHECK(lpc_pread(f, buf, 32 * PAGE, 0) == 32 * PAGE, "cached pread with the OSD down");
	CHECK(memcmp(buf, ref, 32 * PAGE) == 0, "cached data");
	fill(ref + 8 * PAGE, 16 * PAGE);
	CHECK(lpc_pwrite(f, ref + 8 * PAGE, 16 * PAGE, 8 * PAGE) == 16 * PAGE,
	      "pwrite with the OSD down");
	/* A miss and the fsync fail, with the cluster's error. */
	ssize_t n = lpc_pread(f, buf, PAGE, 40 * PAGE);
	CHECK(n < 0, "a miss with the OSD down returned %zd", n);
	printf("osd: miss with the OSD down: %zd (%s)\n", n, strerror((int)-n));
	r = lpc_fsync(f);
	CHECK(r < 0, "fsync with the OSD down returned %d", r);
	printf("osd: fsync with the OSD down: %d (%s)\n", r, strerror(-r));
	/* Nothing dirty dropped: still in the cache. */
	CHECK(lpc_pread(f, buf, 24 * PAGE, 0) == 24 * PAGE, "pread after the failed fsync");
	CHECK(memcmp(buf, ref, 24 * PAGE) == 0, "dirty data kept");

	cluster("osd-start");
	r = lpc_fsync(f);
	if (r < 0) /* the error of the failed writeback is reported once (J.3) */
		r = lpc_fsync(f);
	CHECK(r == 0, "fsync with the OSD back: %d", r);
	n = lpc_pread(f, buf, PAGE, 40 * PAGE);
	CHECK(n == PAGE, "a miss with the OSD back: %zd", n);
	compare_image(img, ref, size, "after the OSD came back");
	CHECK(lpc_file_close(f) == 0, "close");
	CHECK(lpc_cache_destroy(c) == 0, "destroy");
	free(ref);
	free(buf);
}

/* ---- second ---- */

static void case_second(void)
{
	const char *img = "second";
	uint64_t size = 16 * PAGE;
	unsigned char *ref = malloc(size), *buf = malloc(size);
	struct lpc_cache *c1 = make_cache(64 * PAGE), *c2 = make_cache(64 * PAGE);
	struct lpc_file *f, *g, *h;

	make_image(img, size);
	int r = lpc_rbd_open(c1, "rbd:lpc/second", conf_path, O_RDWR, &f);
	CHECK(r == 0, "lpc_rbd_open: %d", r);
	fill(ref, size);
	CHECK(lpc_pwrite(f, ref, size, 0) == (ssize_t)size, "pwrite");
	CHECK(lpc_fsync(f) == 0, "fsync");

	/* The same name in the same cache: the same file. */
	r = lpc_rbd_open(c1, "rbd:lpc/second", conf_path, O_RDWR, &g);
	CHECK(r == 0 && g == f, "same cache reopen: %d, %p vs %p", r, (void *)g, (void *)f);
	CHECK(lpc_file_close(g) == 0, "close the second open");

	/* Another cache (another client) for writing: refused. */
	r = lpc_rbd_open(c2, "rbd:lpc/second", conf_path, O_RDWR, &h);
	CHECK(r == -EBUSY, "second writer: %d, expected -EBUSY", r);

	/* A plain librbd client: its write is refused while lpc holds the lock. */
	struct direct d;
	direct_connect(&d);
	r = rbd_open(d.io, img, &d.image, NULL);
	CHECK(r == 0, "plain rbd_open: %d", r);
	memset(buf, 0xee, PAGE);
	ssize_t n = rbd_write(d.image, 0, PAGE, (const char *)buf);
	CHECK(n < 0, "a plain librbd write went through (%zd) while lpc held the lock", n);
	printf("second: plain librbd write while lpc holds the lock: %zd (%s)\n", n,
	       strerror((int)-n));
	direct_close(&d);

	/* A read-only open in the other cache sees what lpc wrote back. */
	r = lpc_rbd_open(c2, "rbd:lpc/second", conf_path, O_RDONLY, &h);
	CHECK(r == 0, "read-only open: %d", r);
	CHECK(lpc_pread(h, buf, size, 0) == (ssize_t)size, "read-only pread");
	CHECK(memcmp(buf, ref, size) == 0, "read-only reader sees the written-back data");
	CHECK(lpc_file_close(h) == 0, "close h");
	compare_image(img, ref, size, "second");

	/* After the close, another writer gets the lock. */
	CHECK(lpc_file_close(f) == 0, "close f");
	r = lpc_rbd_open(c2, "rbd:lpc/second", conf_path, O_RDWR, &h);
	CHECK(r == 0, "writer after the first closed: %d", r);
	CHECK(lpc_file_close(h) == 0, "close h");
	CHECK(lpc_cache_destroy(c1) == 0, "destroy c1");
	CHECK(lpc_cache_destroy(c2) == 0, "destroy c2");
	free(ref);
	free(buf);
}

/* ---- resizeby ---- */

static uint64_t image_size(const char *img)
{
	unsigned char *data;
	uint64_t size = image_read(img, &data);

	free(data);
	return size;
}

static void case_resizeby(void)
{
	const char *img = "resizeby";
	uint64_t size = 4u << 20;
	unsigned char *buf = malloc(PAGE), *data;
	struct lpc_cache *c = make_cache(64 * PAGE);
	struct lpc_file *f, *ro;
	struct direct d;

	make_image(img, size);
	int r = lpc_rbd_open(c, "rbd:lpc/resizeby", conf_path, O_RDWR, &f);
	CHECK(r == 0, "lpc_rbd_open: %d", r);
	memset(buf, 'L', PAGE);
	CHECK(lpc_pwrite(f, buf, PAGE, 3u << 20) == PAGE && lpc_fsync(f) == 0, "write, fsync");

	/* Another client's shrink: librbd hands it to lpc's handle, the lock
	 * owner, which carries it out (lpc cannot refuse it: RB4). */
	direct_connect(&d);
	CHECK(rbd_open(d.io, img, &d.image, NULL) == 0, "plain rbd_open");
	int shrunk = rbd_resize(d.image, 1u << 20);
	printf("resizeby: another client's shrink to 1 MiB: %d\n", shrunk);
	rbd_close(d.image);
	d.image = NULL;
	if (shrunk == 0) {
		/* It went through: lpc says so at the next fsync, and for good. */
		r = lpc_fsync(f);
		CHECK(r == -EIO, "lpc_fsync after a shrink behind lpc: %d, expected -EIO", r);
		CHECK(lpc_fsync(f) == -EIO, "the loss is reported again");
		CHECK(image_size(img) == size, "the image grown back to lpc's size: %" PRIu64,
		      image_size(img));
	}
	/* Writes still reach the image. */
	memset(buf, 'W', PAGE);
	CHECK(lpc_pwrite(f, buf, PAGE, 2u << 20) == PAGE, "pwrite after");
	CHECK(lpc_fsync(f) == (shrunk == 0 ? -EIO : 0), "fsync after");
	CHECK(image_read(img, &data) == size && data[2u << 20] == 'W', "the write after reached the image");
	free(data);
	/* The last close writes back but does not sync: it has nothing to say. */
	CHECK(lpc_file_close(f) == 0, "last close");

	/* A read-only lpc file follows another client's growth (BK5). */
	r = lpc_rbd_open(c, "rbd:lpc/resizeby", conf_path, O_RDONLY, &ro);
	CHECK(r == 0, "read-only open: %d", r);
	CHECK(lpc_pread(ro, buf, PAGE, size) == 0, "past the end: 0");
	CHECK(rbd_open(d.io, img, &d.image, NULL) == 0, "plain rbd_open");
	memset(buf, 'G', PAGE);
	CHECK(rbd_resize(d.image, size + (1u << 20)) == 0, "grow");
	CHECK(rbd_write(d.image, size, PAGE, (const char *)buf) == PAGE && rbd_flush(d.image) == 0,
	      "write past the old end");
	memset(buf, 0, PAGE);
	ssize_t n = lpc_pread(ro, buf, PAGE, size);
	CHECK(n == PAGE && buf[0] == 'G', "read-only file after growth: %zd, byte 0x%02x", n, buf[0]);
	CHECK(lpc_file_close(ro) == 0, "close ro");
	direct_close(&d);
	CHECK(lpc_cache_destroy(c) == 0, "destroy");
	free(buf);
}

/* ---- deadowner ---- */

static void case_deadowner(void)
{
	const char *img = "deadowner";
	int p[2], rc = -1, st;
	struct lpc_cache *c;
	struct lpc_file *f;

	make_image(img, 16 * PAGE);
	CHECK(pipe(p) == 0, "pipe");
	pid_t pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		c = make_cache(64 * PAGE);
		rc = lpc_rbd_open(c, "rbd:lpc/deadowner", conf_path, O_RDWR, &f);
		if (write(p[1], &rc, sizeof(rc)) != sizeof(rc))
			_exit(2);
		pause();
		_exit(0);
	}
	CHECK(read(p[0], &rc, sizeof(rc)) == sizeof(rc) && rc == 0, "the child's open: %d", rc);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	c = make_cache(64 * PAGE);
	time_t t0 = time(NULL);
	int r = lpc_rbd_open(c, "rbd:lpc/deadowner", conf_path, O_RDWR, &f);
	long took = (long)(time(NULL) - t0);
	printf("deadowner: read-write open after the owner's SIGKILL: %d after %ld s\n", r, took);
	/* 10 s: far below the watch's 30 s, far above a loaded CI's round trips. */
	CHECK(r == -EBUSY && took < 10, "open after the owner's death: %d after %ld s, expected -EBUSY at once",
	      r, took);
	CHECK(lpc_cache_destroy(c) == 0, "destroy");
	close(p[0]);
	close(p[1]);
}

/* ---- full ---- */

static struct direct full_d;
static bool full_lowered;

/* Sets the cluster's three ratios with mon commands (no ceph CLI). */
static int set_ratios(double near, double backfill, double full)
{
	static const char *const what[3] = { "osd set-nearfull-ratio", "osd set-backfillfull-ratio",
					      "osd set-full-ratio" };
	double v[3] = { near, backfill, full };
	/* Raising: full first, lowering: nearfull first, so that the three
	 * stay in order at every step. */
	bool up = full > 0.5;

	for (int k = 0; k < 3; k++) {
		int i = up ? 2 - k : k, r;
		char cmd[160];
		const char *cmds[1] = { cmd };

		snprintf(cmd, sizeof(cmd), "{\"prefix\": \"%s\", \"ratio\": %.4f}", what[i], v[i]);
		r = rados_mon_command(full_d.cluster, cmds, 1, NULL, 0, NULL, NULL, NULL, NULL);
		if (r < 0)
			return r;
	}
	return 0;
}

static void full_restore(void)
{
	if (full_lowered && set_ratios(0.85, 0.90, 0.95) == 0)
		full_lowered = false;
}

/* An append to the probe object (tried on a full pool, as liblpc_rbd's
 * writes are) until its result is `want` (0: room; -ENOSPC: full), for 60 s
 * at most.  An append: the OSD refuses only a write that needs space (one
 * that adds bytes or objects), an overwrite passes even when full.
 * Return: the last result. */
static int full_wait(int want)
{
	int r = 1;

	for (int i = 0; i < 300 && r != want; i++) {
		r = rados_append(full_d.io, "lpc-full-probe", "x", 1);
		if (r != want)
			usleep(200000);
	}
	return r;
}

static void case_full(void)
{
	const char *img = "full";
	/* The first 8 MiB written before (far past 0.1 % of the store), the
	 * pages written while full in the last 8 MiB: objects that do not
	 * exist yet, so that their writes need space (full_wait). */
	uint64_t size = 16u << 20, half = 8u << 20;
	unsigned char *ref = malloc(size), *buf = malloc(64 * PAGE);
	struct lpc_cache *c = make_cache(16u << 20);
	struct lpc_file *f;
	struct timespec t0, t1;
	int r;

	direct_connect(&full_d);
	rados_set_pool_full_try(full_d.io);
	atexit(full_restore);
	make_image(img, size);
	r = lpc_rbd_open(c, "rbd:lpc/full", conf_path, O_RDWR, &f);
	CHECK(r == 0, "lpc_rbd_open: %d", r);
	memset(ref, 0, size);
	fill(ref, half);
	CHECK(lpc_pwrite(f, ref, half, 0) == (ssize_t)half, "the first write");
	CHECK(lpc_fsync(f) == 0, "the first fsync");
	CHECK(full_wait(0) == 0, "the cluster takes writes before the ratio is lowered");

	full_lowered = true;
	r = set_ratios(0.0005, 0.0008, 0.001);
	CHECK(r == 0, "lowering the full ratio: %d", r);
	r = full_wait(-ENOSPC);
	CHECK(r == -ENOSPC, "the OSD full within 60 s: a tried write gives %d", r);
	/* 64 pages of new bytes, one every 32 pages of the last 8 MiB, dirty
	 * in the cache. */
	for (unsigned i = 0; i < 64; i++) {
		uint64_t off = half + (uint64_t)i * 32 * PAGE + (i % 7) * 100;

		fill(buf, PAGE);
		CHECK(lpc_pwrite(f, buf, PAGE, off) == PAGE, "pwrite while full");
		memcpy(ref + off, buf, PAGE);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = lpc_fsync(f);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("full: lpc_fsync on the full cluster: %d after %.2f s\n", r, took);
	/* 10 s: far below rados_osd_op_timeout (30 s), the wait a held write
	 * would end in with -ETIMEDOUT. */
	CHECK(r == -ENOSPC && took < 10, "lpc_fsync on a full cluster: %d after %.2f s, expected -ENOSPC at once",
	      r, took);
	for (unsigned i = 0; i < 64; i++) {
		uint64_t off = half + (uint64_t)i * 32 * PAGE + (i % 7) * 100;

		CHECK(lpc_pread(f, buf, PAGE, off) == PAGE, "pread while full");
		CHECK(memcmp(buf, ref + off, PAGE) == 0, "page %u's new bytes kept while full", i);
	}
	/* A resize on the full cluster (rbd.c RB2): librbd's header update
	 * may be refused (-ENOSPC) or pass; either way op_truncate's own_size
	 * (RB4) must follow the image, or the fsyncs below would call the
	 * image cut behind lpc and fail with -EIO for good. */
	int grown = lpc_truncate(f, size + (4u << 20));
	printf("full: lpc_truncate to grow by 4 MiB on the full cluster: %d\n", grown);
	CHECK(grown == 0 || grown == -ENOSPC, "lpc_truncate while full: %d", grown);

	r = set_ratios(0.85, 0.90, 0.95);
	CHECK(r == 0, "raising the full ratio: %d", r);
	full_lowered = false;
	r = full_wait(0);
	CHECK(r == 0, "room again within 60 s: a write gives %d", r);
	/* Our probe's client saw room; lpc's client may still hold the map
	 * that marks the pool full for a moment: its write-back is refused
	 * again (-ENOSPC, the pages kept dirty) until its map catches up.
	 * So the fsync is retried, as an application would, for up to 30 s. */
	for (int i = 0; i < 60; i++) {
		r = lpc_fsync(f);
		if (r != -ENOSPC)
			break;
		usleep(500000);
	}
	CHECK(r == 0, "lpc_fsync once there is room: %d", r);
	r = lpc_truncate(f, size);
	CHECK(r == 0, "lpc_truncate back to the size once there is room: %d", r);
	r = lpc_fsync(f);
	CHECK(r == 0, "lpc_fsync after the truncates: %d (-EIO: a cut seen where lpc resized)", r);
	CHECK(lpc_file_close(f) == 0, "close");
	compare_image(img, ref, size, "after the cluster had room again");
	CHECK(lpc_cache_destroy(c) == 0, "destroy");
	rados_remove(full_d.io, "lpc-full-probe");
	direct_close(&full_d);
	free(ref);
	free(buf);
	image_read_end();
}

/* ---- batch ---- */

static void case_batch(void)
{
	const char *img = "batch";
	uint64_t size = 256 * PAGE + 1000, pages = (size + PAGE - 1) / PAGE;
	unsigned char *ref = malloc(size), *data;
	struct lpc_cache *c = make_cache(1024 * PAGE);
	struct lpc_page *pg[16];
	uint64_t idx[16];
	struct direct d;
	struct lpc_file *f;
	rbd_image_t im;
	int errs[16], r;

	make_image(img, size);
	fill(ref, size);
	direct_connect(&d);
	CHECK(rbd_open(d.io, img, &im, NULL) == 0, "rbd_open");
	CHECK(rbd_write(im, 0, size, (const char *)ref) == (ssize_t)size, "rbd_write");
	rbd_close(im);
	direct_close(&d);
	CHECK(image_read(img, &data) == size, "size");
	CHECK(memcmp(data, ref, size) == 0, "the image as written");
	free(data);

	r = lpc_rbd_open(c, "rbd:lpc/batch", conf_path, O_RDONLY, &f);
	CHECK(r == 0, "lpc_rbd_open: %d", r);
	/* Scattered pages: one run each, read together; the last past the
	 * end (-ENXIO), the one before it the short last page. */
	for (int i = 0; i < 14; i++)
		idx[i] = (uint64_t)i * 17 + 3;
	idx[14] = pages - 1;
	idx[15] = pages + 5;
	r = lpc_page_get_batch(f, idx, 16, 0, pg, errs);
	CHECK(r == 15, "lpc_page_get_batch: %d of 16", r);
	for (int i = 0; i < 15; i++) {
		uint64_t off = idx[i] * PAGE, n = size - off < PAGE ? size - off : PAGE;

		CHECK(errs[i] == 0 && pg[i], "page %" PRIu64 ": %d", idx[i], errs[i]);
		CHECK(memcmp(lpc_page_data(pg[i]), ref + off, n) == 0, "page %" PRIu64 "'s bytes",
		      idx[i]);
		lpc_page_put(pg[i]);
	}
	CHECK(errs[15] == -ENXIO && !pg[15], "past the end: %d", errs[15]);
	/* A read stream over every page in a scattered order. */
	uint64_t *list = malloc(pages * sizeof(*list));
	struct lpc_stream *st;

	for (uint64_t i = 0; i < pages; i++)
		list[i] = (i * 37) % pages; /* 37 and 257 are coprime */
	r = lpc_stream_open(f, NULL, NULL,
			    &(struct lpc_stream_opts){ .max_distance = 64, .indices = list,
						       .n = pages },
			    &st);
	CHECK(r == 0, "lpc_stream_open: %d", r);
	for (uint64_t i = 0; i < pages; i++) {
		struct lpc_page *p;
		uint64_t off = list[i] * PAGE, n = size - off < PAGE ? size - off : PAGE;

		r = lpc_stream_next(st, &p, NULL);
		CHECK(r == 1, "lpc_stream_next %" PRIu64 ": %d", i, r);
		CHECK(memcmp(lpc_page_data(p), ref + off, n) == 0, "stream page %" PRIu64 "'s bytes",
		      list[i]);
		lpc_page_put(p);
	}
	CHECK(lpc_stream_next(st, &pg[0], NULL) == 0, "the stream's end");
	lpc_stream_close(st);
	CHECK(lpc_file_close(f) == 0, "close");
	CHECK(lpc_cache_destroy(c) == 0, "destroy");
	free(list);
	free(ref);
	image_read_end();
}

/* ---- stress ---- */

/* One RBD-backed file, several threads at once (rbd.c RB1-RB7 under lpc's
 * own threads): writers of whole stamped pages with lpc_fsync among them,
 * a reader of scattered pages with lpc_page_get_batch, a reader of a read
 * stream, and one thread that invalidates ranges and truncates the tail.
 * Page i at version v >= 1 holds stamp_page(i, v); version 0 is zeros.
 * A writer takes its version (st_max[i]) before it writes, so whatever a
 * reader sees of page i, checked under the page lock, is zeros or a whole
 * stamp of page i at a version no newer than st_max[i] loaded after the
 * read: never another page's bytes, a torn page or bytes from nowhere.
 * Zeros are accepted only for a page the truncater may have cut (st_zero,
 * sticky, set before the cut): the image starts with every page at
 * version 1.  Pages below ST_FLOOR are never cut: the stream reads only
 * those, and -ENXIO is accepted only at or past it.  At the end the
 * bytes lpc holds, after lpc_fsync and the close, are the image's. */
#define ST_PAGES 128u
#define ST_FLOOR 64u

static _Atomic uint64_t st_max[ST_PAGES];
static _Atomic bool st_zero[ST_PAGES];
static _Atomic bool st_stop;
static struct lpc_file *st_f;
static _Atomic unsigned long st_ops[4];

static uint64_t st_rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void stamp_page(unsigned char *p, uint64_t i, uint64_t v)
{
	uint64_t h = (i + 1) * 0x9e3779b97f4a7c15ull ^ v * 0xbf58476d1ce4e5b9ull;

	memcpy(p, &i, 8);
	memcpy(p + 8, &v, 8);
	for (unsigned k = 16; k < PAGE; k++) {
		h ^= h >> 29;
		h *= 0x94d049bb133111ebull;
		p[k] = (unsigned char)(h >> 56);
	}
}

/* Page i's bytes as a reader got them (under the page lock). */
static void st_check(uint64_t i, const unsigned char *d, const char *who)
{
	static const unsigned char zero[PAGE];
	unsigned char want[PAGE];
	uint64_t gi, gv;

	if (memcmp(d, zero, PAGE) == 0) {
		CHECK(atomic_load(&st_zero[i]), "%s: page %" PRIu64 " is zeros, never cut", who, i);
		return;
	}
	memcpy(&gi, d, 8);
	memcpy(&gv, d + 8, 8);
	CHECK(gi == i, "%s: page %" PRIu64 " holds page %" PRIu64 "'s stamp", who, i, gi);
	CHECK(gv >= 1 && gv <= atomic_load(&st_max[i]),
	      "%s: page %" PRIu64 " at version %" PRIu64 ", newest written %" PRIu64, who, i, gv,
	      atomic_load(&st_max[i]));
	stamp_page(want, i, gv);
	CHECK(memcmp(d, want, PAGE) == 0, "%s: page %" PRIu64 " version %" PRIu64 " torn", who, i,
	      gv);
}

static void st_check_page(struct lpc_page *p, uint64_t i, const char *who)
{
	lpc_page_lock(p);
	st_check(i, lpc_page_data(p), who);
	lpc_page_unlock(p);
}

static void *st_writer(void *arg)
{
	uint64_t x = (uintptr_t)arg * 0x9e3779b97f4a7c15ull | 1;
	unsigned char *buf = malloc(PAGE);

	CHECK(buf, "malloc");
	for (unsigned n = 1; !atomic_load(&st_stop); n++) {
		uint64_t i = st_rnd(&x) % ST_PAGES, v = atomic_fetch_add(&st_max[i], 1) + 1;

		stamp_page(buf, i, v);
		ssize_t r = lpc_pwrite(st_f, buf, PAGE, i * PAGE);
		CHECK(r == PAGE, "writer: lpc_pwrite of page %" PRIu64 ": %zd", i, r);
		if (n % 16 == 0) {
			int rc = lpc_fsync(st_f);
			CHECK(rc == 0, "writer: lpc_fsync: %d", rc);
		}
		atomic_fetch_add(&st_ops[0], 1);
	}
	free(buf);
	return NULL;
}

static void *st_batch(void *arg)
{
	uint64_t x = (uintptr_t)arg * 0xbf58476d1ce4e5b9ull | 1;

	while (!atomic_load(&st_stop)) {
		uint64_t idx[8], start = st_rnd(&x) % ST_PAGES, stride = 1 + st_rnd(&x) % 9;
		struct lpc_page *pg[8];
		int errs[8];

		for (int k = 0; k < 8; k++)
			idx[k] = (start + (uint64_t)k * stride) % ST_PAGES;
		int r = lpc_page_get_batch(st_f, idx, 8, 0, pg, errs);
		CHECK(r >= 0, "lpc_page_get_batch: %d", r);
		for (int k = 0; k < 8; k++) {
			if (errs[k] == 0) {
				st_check_page(pg[k], idx[k], "lpc_page_get_batch");
				lpc_page_put(pg[k]);
			} else {
				CHECK(errs[k] == -ENXIO && idx[k] >= ST_FLOOR,
				      "lpc_page_get_batch: page %" PRIu64 ": %d", idx[k], errs[k]);
			}
		}
		atomic_fetch_add(&st_ops[1], 1);
	}
	return NULL;
}

static void *st_stream(void *arg)
{
	uint64_t x = (uintptr_t)arg * 0x94d049bb133111ebull | 1;
	uint64_t list[32];

	while (!atomic_load(&st_stop)) {
		struct lpc_stream *st;
		struct lpc_page *p;
		int r;

		for (int k = 0; k < 32; k++)
			list[k] = st_rnd(&x) % ST_FLOOR;
		r = lpc_stream_open(st_f, NULL, NULL,
				    &(struct lpc_stream_opts){ .max_distance = 8, .indices = list,
							       .n = 32 },
				    &st);
		CHECK(r == 0, "lpc_stream_open: %d", r);
		for (int k = 0; k < 32; k++) {
			r = lpc_stream_next(st, &p, NULL);
			CHECK(r == 1, "lpc_stream_next %d (page %" PRIu64 "): %d", k, list[k], r);
			st_check_page(p, list[k], "lpc_stream_next");
			lpc_page_put(p);
		}
		CHECK(lpc_stream_next(st, &p, NULL) == 0, "the stream's end");
		lpc_stream_close(st);
		atomic_fetch_add(&st_ops[2], 1);
	}
	return NULL;
}

static void *st_cutter(void *arg)
{
	uint64_t x = (uintptr_t)arg * 0x2545f4914f6cdd1dull | 1;

	for (unsigned n = 1; !atomic_load(&st_stop); n++) {
		uint64_t off = st_rnd(&x) % ST_PAGES * PAGE, len = (1 + st_rnd(&x) % 16) * PAGE;
		int r = lpc_invalidate(st_f, off, len);

		CHECK(r >= 0, "lpc_invalidate: %d", r);
		if (n % 8 == 0) {
			uint64_t cut = ST_FLOOR + st_rnd(&x) % (ST_PAGES - ST_FLOOR);

			for (uint64_t i = cut; i < ST_PAGES; i++)
				atomic_store(&st_zero[i], true);
			r = lpc_truncate(st_f, cut * PAGE);
			CHECK(r == 0, "lpc_truncate to page %" PRIu64 ": %d", cut, r);
		}
		atomic_fetch_add(&st_ops[3], 1);
		usleep(2000);
	}
	return NULL;
}

static void case_stress(uint64_t seed)
{
	const char *img = "stress";
	unsigned char *ref = malloc(ST_PAGES * PAGE), *data;
	struct lpc_cache *c = make_cache(32 * PAGE); /* a quarter of the file */
	const char *env = getenv("LPC_STRESS_SECONDS");
	double secs = env ? atof(env) : 4;
	pthread_t th[5];
	void *(*fn[5])(void *) = { st_writer, st_writer, st_batch, st_stream, st_cutter };
	struct direct d;
	rbd_image_t im;

	CHECK(ref, "malloc");
	make_image(img, ST_PAGES * PAGE);
	for (uint64_t i = 0; i < ST_PAGES; i++) {
		stamp_page(ref + i * PAGE, i, 1);
		atomic_store(&st_max[i], 1);
	}
	direct_connect(&d);
	CHECK(rbd_open(d.io, img, &im, NULL) == 0, "rbd_open");
	CHECK(rbd_write(im, 0, ST_PAGES * PAGE, (const char *)ref) == (ssize_t)(ST_PAGES * PAGE),
	      "rbd_write");
	rbd_close(im);
	direct_close(&d);
	int r = lpc_rbd_open(c, "rbd:lpc/stress", conf_path, O_RDWR, &st_f);
	CHECK(r == 0, "lpc_rbd_open: %d", r);
	for (int k = 0; k < 5; k++)
		CHECK(pthread_create(&th[k], NULL, fn[k], (void *)(uintptr_t)(seed + (uint64_t)k + 1)) == 0,
		      "pthread_create");
	usleep((useconds_t)(secs * 1e6));
	atomic_store(&st_stop, true);
	for (int k = 0; k < 5; k++)
		pthread_join(th[k], NULL);
	printf("stress: %.1f s: %lu writes, %lu batches, %lu streams, %lu invalidate/truncate\n", secs,
	       atomic_load(&st_ops[0]), atomic_load(&st_ops[1]), atomic_load(&st_ops[2]),
	       atomic_load(&st_ops[3]));
	/* Every page lpc holds now, checked, is what the image holds after
	 * lpc_fsync and the close. */
	r = lpc_fsync(st_f);
	CHECK(r == 0, "the last lpc_fsync: %d", r);
	ssize_t n = lpc_pread(st_f, ref, ST_PAGES * PAGE, 0);
	CHECK(n >= (ssize_t)(ST_FLOOR * PAGE) && n % PAGE == 0, "lpc_pread of the file: %zd", n);
	for (uint64_t i = 0; i < (uint64_t)n / PAGE; i++)
		st_check(i, ref + i * PAGE, "lpc_pread at the end");
	CHECK(lpc_file_close(st_f) == 0, "close");
	CHECK(lpc_cache_destroy(c) == 0, "destroy");
	CHECK(image_read(img, &data) == (uint64_t)n, "the image's size is lpc's, %zd", n);
	CHECK(memcmp(data, ref, (size_t)n) == 0, "the image holds lpc's bytes");
	free(data);
	free(ref);
	image_read_end();
}

int main(int argc, char **argv)
{
	uint64_t seed = (uint64_t)time(NULL) ^ (uint64_t)getpid();

	if (argc < 4) {
		fprintf(stderr, "usage: %s CLUSTER_DIR CLUSTER_SCRIPT basic|crash|osd|second|resizeby|deadowner|full|batch|stress [--seed N]\n",
			argv[0]);
		return 2;
	}
	cluster_dir = argv[1];
	cluster_script = argv[2];
	if (argc >= 6 && strcmp(argv[4], "--seed") == 0)
		seed = strtoull(argv[5], NULL, 0);
	rng_state = seed | 1;
	snprintf(conf_path, sizeof(conf_path), "%s/ceph.conf", cluster_dir);
	if (access(conf_path, R_OK) != 0) {
		printf("test_rbd: skipped: no test cluster at %s (ceph-mon/ceph-osd not installed: scripts/deps.sh)\n",
		       cluster_dir);
		return 77;
	}
	printf("test_rbd %s: seed %" PRIu64 " (--seed to replay)\n", argv[3], seed);
	fflush(stdout);
	if (strcmp(argv[3], "basic") == 0)
		case_basic();
	else if (strcmp(argv[3], "crash") == 0)
		case_crash(seed);
	else if (strcmp(argv[3], "osd") == 0)
		case_osd();
	else if (strcmp(argv[3], "second") == 0)
		case_second();
	else if (strcmp(argv[3], "resizeby") == 0)
		case_resizeby();
	else if (strcmp(argv[3], "full") == 0)
		case_full();
	else if (strcmp(argv[3], "batch") == 0)
		case_batch();
	else if (strcmp(argv[3], "deadowner") == 0)
		case_deadowner();
	else if (strcmp(argv[3], "stress") == 0)
		case_stress(seed);
	else {
		fprintf(stderr, "unknown case %s\n", argv[3]);
		return 2;
	}
	image_read_end();
	printf("test_rbd %s: ok\n", argv[3]);
	return 0;
}
