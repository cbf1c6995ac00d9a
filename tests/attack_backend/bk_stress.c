/* SPDX-License-Identifier: MIT */
/*
 * bk_stress - threads over one user-backend file in a small cache (eviction,
 * the flusher, readahead, throttling all busy), each thread owning a
 * disjoint range: random lpc_pwrite / lpc_pread (checked against the
 * thread's own model) / lpc_fsync, while the backend sleeps now and then
 * and fails some writes with -EIO (transient: the pages stay dirty, J.3).
 * At the end, with failures off: lpc_fsync until 0, then the storage must
 * equal the model byte for byte, and the handle is released once, with no
 * operation after it.
 *   cd tests/attack_backend && make out-release/bk_stress && out-release/bk_stress [seconds]
 */
#include <fcntl.h>
#include <time.h>
#include "bk.h"

#define NT 4
#define RANGE (512u * 1024)
static struct mem m;
static struct lpc_file *f;
static unsigned char model[NT][RANGE];
static _Atomic int stop, failing = 1, bad;
static _Atomic unsigned long nops;

static __thread uint64_t rs;
static uint64_t rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return rs; }

static ssize_t s_read(void *h, const struct iovec *iov, int n, uint64_t off)
{
	if (rnd() % 16 == 0)
		usleep(200);
	return mem_read(h, iov, n, off);
}

static ssize_t s_write(void *h, const struct iovec *iov, int n, uint64_t off)
{
	if (rnd() % 16 == 0)
		usleep(200);
	if (atomic_load(&failing) && rnd() % 8 == 0)
		return -EIO;
	return mem_write(h, iov, n, off);
}

static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	uint64_t base = (uint64_t)id * RANGE;
	static __thread unsigned char buf[65536];

	rs = 0x9e3779b97f4a7c15ull * (uint64_t)(id + 1);
	while (!atomic_load(&stop)) {
		uint64_t op = rnd() % 10, off = rnd() % RANGE, len = 1 + rnd() % 20000;

		if (off + len > RANGE)
			len = RANGE - off;
		if (op < 5) {
			for (uint64_t i = 0; i < len; i++)
				buf[i] = (unsigned char)rnd();
			ssize_t w = lpc_pwrite(f, buf, len, base + off);
			if (w == (ssize_t)len)
				memcpy(model[id] + off, buf, len);
			else if (w != -ENOMEM) {
				printf("thread %d: pwrite=%zd\n", id, w);
				bad = 1;
			} else {
				/* -ENOMEM: nothing promised; reread to resync the model. */
				ssize_t r = lpc_pread(f, model[id] + off, len, base + off);
				(void)r;
			}
		} else if (op < 9) {
			ssize_t r = lpc_pread(f, buf, len, base + off);
			if (r == (ssize_t)len && memcmp(buf, model[id] + off, len) != 0) {
				for (uint64_t i = 0; i < len; i++)
					if (buf[i] != model[id][off + i]) {
						printf("thread %d: pread at %llu: byte %llu is 0x%02x, model 0x%02x\n",
						       id, (unsigned long long)(base + off),
						       (unsigned long long)i, buf[i], model[id][off + i]);
						break;
					}
				bad = 1;
			} else if (r != (ssize_t)len && r != -EIO && r != -ENOMEM) {
				printf("thread %d: pread=%zd\n", id, r);
				bad = 1;
			}
		} else {
			lpc_fsync(f);
		}
		atomic_fetch_add(&nops, 1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 10;
	struct lpc_backend_ops ops = mem_ops;
	struct lpc_config cfg;
	struct lpc_cache *c;
	pthread_t t[NT];

	lpc_config_init(&cfg);
	cfg.cache_bytes = 256 * 4096; /* 1 MiB for 2 MiB of file */
	cfg.dirty_expire_ms = 20;
	cfg.alloc_wait_ms = 2000;
	CHECK(lpc_cache_create(&cfg, &c) == 0);
	ops.read = s_read;
	ops.write = s_write;
	mem_init(&m, (uint64_t)NT * RANGE);
	CHECK(lpc_file_open_backend(c, "stress", &ops, &m, O_RDWR, &f) == 0);
	for (int i = 0; i < NT; i++)
		pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
	sleep((unsigned)secs);
	atomic_store(&stop, 1);
	for (int i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	atomic_store(&failing, 0);
	int rc = -1;
	for (int k = 0; k < 3 && rc; k++)
		rc = lpc_fsync(f);
	int diff = 0;
	for (int i = 0; i < NT; i++)
		if (memcmp(m.data + (size_t)i * RANGE, model[i], RANGE))
			diff++;
	int rcc = lpc_file_close(f);
	printf("%lu ops in %d s; final fsync=%d close=%d; ranges differing from the model: %d; released=%d ops after release=%d\n",
	       nops, secs, rc, rcc, diff, m.released, m.after_release);
	lpc_cache_destroy(c);
	if (rc || diff || bad || m.released != 1 || m.after_release) {
		printf("DEFECT\n");
		return 1;
	}
	return 0;
}
