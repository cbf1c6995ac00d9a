/* shift_diag.c - shift.c's workload (70 % hot set A, then B), printing the
 * pool's active count, the target, and A's and B's active / cached frames
 * read from the descriptors (internal headers; no flag is touched).
 * usage: shift_diag FILE [S_PCT] */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "cache/cache.h"

static uint64_t rs = 88172645463325252ull;
static uint64_t rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return rs; }
static void get(struct lpc_file *f, uint64_t i)
{
	struct lpc_page *p;
	if (lpc_page_get(f, i, 0, &p)) exit(1);
	lpc_page_put(p);
}
static void census(struct lpc_cache *c, uint64_t N, uint64_t S, const char *when)
{
	unsigned aa = 0, ac = 0, ba = 0, bc = 0, aref = 0;
	for (uint32_t i = 0; i < c->pool.nframes; i++) {
		struct lpc_page *p = &c->pool.pages[i];
		uint32_t fl = atomic_load(&p->flags);
		uint64_t idx = atomic_load(&p->index);
		if (!atomic_load(&p->ref) || !(fl & LPC_PG_PUBLISHED)) continue;
		if (idx < S) { ac++; aa += !!(fl & LPC_PG_ACTIVE); aref += !!(fl & LPC_PG_REFERENCED); }
		else if (idx >= 4 * N && idx < 4 * N + S) { bc++; ba += !!(fl & LPC_PG_ACTIVE); }
	}
	printf("%-22s nactive %5u target %5u | A cached %5u active %5u referenced %u | B cached %5u active %5u | demote_all %d\n",
	       when, atomic_load(&c->pool.nactive), c->reclaim.active_target, ac, aa, aref, bc, ba,
	       (int)atomic_load(&c->reclaim.demote_all));
}
int main(int argc, char **argv)
{
	unsigned spct = argc > 2 ? atoi(argv[2]) : 70;
	const uint64_t N = 16384, S = N * spct / 100;
	struct lpc_config cfg; struct lpc_cache *c; struct lpc_file *f;
	int fd = open(argv[1], O_RDWR | O_CREAT, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)(8 * N * 4096))) return 1;
	close(fd);
	lpc_config_init(&cfg);
	cfg.cache_bytes = N * 4096; cfg.io_backend = LPC_IO_NULL; cfg.readahead_kb = LPC_READAHEAD_OFF;
	if (lpc_cache_create(&cfg, &c) || lpc_file_open(c, argv[1], O_RDONLY, 0, &f)) return 1;
	for (uint64_t k = 0; k < 40 * N / 4; k++) get(f, rnd() % S);
	census(c, N, S, "A steady");
	for (int i = 1; i <= 20; i++) {
		for (uint64_t k = 0; k < 4 * N; k++) get(f, 4 * N + rnd() % S);
		char w[32]; snprintf(w, sizeof w, "B, %d x 4N reads", i);
		if (i <= 3 || i % 5 == 0) census(c, N, S, w);
	}
	lpc_file_close(f); lpc_cache_destroy(c);
	return 0;
}
