/* SPDX-License-Identifier: MIT */
/*
 * att_qd_stress - what held: batched reads (readahead threads' batches,
 * GB3's batch) under eviction, lpc_invalidate, concurrent demand reads and
 * every multi-page request cut short in the middle (the fault hook's short
 * transfer, PS + 100 bytes, on every read of file A: a run keeps its first
 * page, the rest of it is dropped, C.1-C.3), then WILLNEED and the last
 * close racing (Q3) 200 times.  Checks: every page returned holds its own
 * bytes (no zeros, no other page's bytes), no error (a short transfer in
 * the middle is no error of any page: each is read again alone), and the
 * cache is destroyed clean (ASan: no leak; TSan: no race).
 *
 * Usage: att_qd_stress [sync|uring] [seconds]    Exit: 0 held, 1 defect.
 * Run: cmake --build ../../build-tsan --target lpc_static && make VARIANT=tsan && out-tsan/att_qd_stress uring 3
 */
#include "../attack/att.h"
#include "qd.h"

#define PS 4096u
#define APAGES 2048u
#define BPAGES 512u

static struct lpc_file *fa, *fb;
static _Atomic int stop;
static _Atomic unsigned long checked, bad, errors;

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void check(const void *p, uint64_t idx, uint64_t tag)
{
	long w = att_bad_word(p, PS, idx * PS, tag);

	atomic_fetch_add(&checked, 1);
	if (w >= 0 && atomic_fetch_add(&bad, 1) < 5)
		printf("  BAD: file %" PRIu64 " page %" PRIu64 " word %ld = %#" PRIx64 "\n", tag,
		       idx, w, ((const uint64_t *)p)[w]);
}

static void *batcher(void *arg)
{
	uint64_t s = (uintptr_t)arg * 7919 + 1, idx[64];
	struct lpc_page *pg[64];
	int errs[64];

	while (!atomic_load(&stop)) {
		uint64_t base = rnd(&s) % (APAGES - 256);

		for (unsigned i = 0; i < 64; i++)
			idx[i] = base + rnd(&s) % 256;
		(void)lpc_page_get_batch(fa, idx, 64, 0, pg, errs);
		for (unsigned i = 0; i < 64; i++) {
			if (!pg[i]) {
				if (atomic_fetch_add(&errors, 1) < 5)
					printf("  ERR: page %" PRIu64 ": %d\n", idx[i], errs[i]);
				continue;
			}
			check(lpc_page_data(pg[i]), idx[i], 1);
			lpc_page_put(pg[i]);
		}
	}
	return NULL;
}

static void *reader(void *arg)
{
	uint64_t s = (uintptr_t)arg * 104729 + 3;
	static _Thread_local uint64_t buf[8 * PS / 8];
	bool seq = (uintptr_t)arg & 1;
	uint64_t at = 0;

	while (!atomic_load(&stop)) {
		struct lpc_file *f = rnd(&s) % 3 ? fa : fb;
		uint64_t np = f == fa ? APAGES : BPAGES, tag = f == fa ? 1 : 2;
		uint64_t i = seq ? at++ % (np - 8) : rnd(&s) % (np - 8);
		ssize_t r;

		if (rnd(&s) % 8 == 0)
			lpc_fadvise(f, (rnd(&s) % (np - 64)) * PS, 64 * PS, LPC_FADV_WILLNEED);
		r = lpc_pread(f, buf, 8 * PS, i * PS);
		if (r != (ssize_t)(8 * PS)) {
			if (atomic_fetch_add(&errors, 1) < 5)
				printf("  ERR: pread page %" PRIu64 ": %zd\n", i, r);
			continue;
		}
		for (unsigned k = 0; k < 8; k++)
			check((char *)buf + k * PS, i + k, tag);
	}
	return NULL;
}

static void *invalidator(void *arg)
{
	uint64_t s = 99;

	(void)arg;
	while (!atomic_load(&stop)) {
		(void)lpc_invalidate(fa, (rnd(&s) % APAGES) * PS, 32 * PS);
		usleep(500);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int backend = argc > 1 && !strcmp(argv[1], "sync") ? LPC_IO_SYNC : LPC_IO_URING;
	int secs = argc > 2 ? atoi(argv[2]) : 3;
	char pa[300], pb[300], pc[300];
	struct lpc_cache *c = att_cache(1024u * PS, PS, backend, LPC_LOOKUP_LOCKLESS, 0, 32);
	struct lpc_io_fault fault = { 0 };
	struct lpc_stats st;
	pthread_t th[6];
	unsigned long closes = 0;
	int rc;

	att_make_file("a", APAGES * PS, 1, pa, sizeof(pa));
	att_make_file("b", BPAGES * PS, 2, pb, sizeof(pb));
	att_make_file("c", 4u << 20, 3, pc, sizeof(pc));
	qd_install(c, qd_ino(pc));
	if (lpc_file_open(c, pa, O_RDONLY, 0, &fa) || lpc_file_open(c, pb, O_RDONLY, 0, &fb)) {
		printf("open failed\n");
		return 77;
	}
	fault.ops = LPC_IO_READ;
	fault.file_id = qd_ino(pa);
	fault.short_bytes = PS + 100; /* every request of A: short after its first page */
	rc = lpc_io_fault_set(&c->io, &fault);
	ATT_CHECK(rc == 0, "lpc_io_fault_set: %d", rc);
	pthread_create(&th[0], NULL, batcher, (void *)1);
	pthread_create(&th[1], NULL, batcher, (void *)2);
	pthread_create(&th[2], NULL, reader, (void *)3);
	pthread_create(&th[3], NULL, reader, (void *)4);
	pthread_create(&th[4], NULL, reader, (void *)5);
	pthread_create(&th[5], NULL, invalidator, NULL);
	sleep((unsigned)secs);
	atomic_store(&stop, 1);
	for (int i = 0; i < 6; i++)
		pthread_join(th[i], NULL);
	lpc_io_fault_set(&c->io, NULL);
	/* The last close with batches in flight (Q3), C's reads slowed by
	 * nothing but themselves. */
	for (int k = 0; k < 200; k++) {
		struct lpc_file *fc;
		uint64_t b[PS / 8];

		if (lpc_file_open(c, pc, O_RDONLY, 0, &fc))
			break;
		lpc_fadvise(fc, 0, 4u << 20, LPC_FADV_WILLNEED);
		if (k % 2 && lpc_pread(fc, b, PS, (uint64_t)(k % 1000) * PS) == PS)
			ATT_CHECK(att_bad_word(b, PS, (uint64_t)(k % 1000) * PS, 3) < 0,
				  "C: wrong bytes");
		lpc_file_close(fc);
		closes++;
	}
	lpc_stats(c, &st);
	printf("  pages checked %lu, bad %lu, errors %lu; closes %lu; reads %" PRIu64
	       " read_errors %" PRIu64 " ra_pages %" PRIu64 " faults fired %" PRIu64 "\n",
	       atomic_load(&checked), atomic_load(&bad), atomic_load(&errors), closes, st.reads,
	       st.read_errors, st.ra_pages, lpc_io_faults_fired(&c->io));
	ATT_CHECK(atomic_load(&bad) == 0, "pages with wrong bytes");
	ATT_CHECK(atomic_load(&errors) == 0, "errors returned for reads the hook only cut short");
	ATT_CHECK(closes == 200, "open failed during the close cycles");
	lpc_file_close(fa);
	lpc_file_close(fb);
	rc = lpc_cache_destroy(c);
	ATT_CHECK(rc == 0, "lpc_cache_destroy: %d", rc);
	att_cleanup();
	printf(att_fails ? "DEFECT (%s)\n" : "held (%s)\n", att_backend_name(backend));
	return att_fails ? 1 : 0;
}
