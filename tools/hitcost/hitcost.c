/* SPDX-License-Identifier: MIT */
/*
 * hitcost.c - where the ticks of a lockless hit go: the lookup benchmark's
 * find+put taken apart into steps, each timed on its own, interleaved.
 *
 * lpcbench lookup compares lpc_page_find + lpc_page_put with the floor (a
 * reference count on a plain descriptor array).  This program adds the steps
 * in between, cumulatively, on the same random page numbers of a 256 MiB
 * file, single thread, so that the ratio to the floor of each step says what
 * the step costs:
 *
 *   floor      increment-unless-zero + release decrement on desc[page]
 *   atomics    what the protocol cannot avoid: lpc's own speculative get
 *              (lpc_page_try_get) and put (lpc_page_release, a CAS) on lpc
 *              descriptors picked as the floor picks its own: no index, no
 *              read section
 *   rcu        lpc's read section alone (R1 + R5, urcu-memb inlined), with
 *              nothing inside
 *   floor+rcu  the floor inside a read section
 *   flat       the floor's atomics reached through one dependent pointer
 *              load (slots[page] -> descriptor): a one-level index
 *   bound      R1-R5 on that one-level index (R1, slot, get, re-load of the
 *              slot, R5, put): the mandated protocol on the best index
 *              there is; any real index and any public call add to it
 *   walk       lpc's radix tree (lpc_radix_lookup, 64-slot nodes, height 3
 *              for 65536 pages), the speculative get, the slot re-check and
 *              the release, on lpc's own descriptors; no read section
 *   walk+rcu   the same inside lpc's RCU read section (inlined liburcu-memb)
 *   walk2+rcu  walk+rcu on a two-level tree, as a root sized from the file's
 *              size would give a 256 MiB file: a 1024-slot root (here an
 *              array of the tree's own leaf pointers) over lpc's leaves
 *   calls      walk+rcu split into two out-of-line calls shaped like
 *              lpc_page_find and lpc_page_put
 *   api        lpc_page_find + lpc_page_put on a filled cache, through the
 *              public calls (static library: no PLT), with everything they
 *              do besides: the thread's block, the flags tests, the counter,
 *              the PUBLISHED test in the put
 *   opt        a side branch from walk+rcu: the optimistic read's steps
 *              (filemap/optimistic.h O2-O5: the walk, seq, UPTODATE and
 *              identity, a function that reads no byte, the fence and the
 *              re-checks of seq and slot) inside the read section, on the
 *              api step's cache; no reference, no shared write
 *   page_read  lpc_page_read with that function, through the public call
 *   pread      lpc_pread of the page's first 8 bytes, through the public call:
 *              the optimistic path of lpc_pread (O1-O6 with its copy) and
 *              the call's own checks; lpcbench lookup copies whole pages,
 *              where the 4 KiB copy dominates
 *
 * It uses lpc's internal headers and the static library; it is a measuring
 * tool for lpc's developers, not installed.  One round runs every step once
 * for --ops operations; ratios are taken within a round; the median and the
 * range over rounds are printed.  Each step first runs --warm untimed
 * operations: the steps use different data (the floor's array, lpc's tree
 * and descriptors), and a step that started with the previous step's data
 * in the CPU caches would pay for refilling them, a cost of interleaving
 * that a hit in steady state does not have (about 0.4 of the floor at 1 M
 * operations per step, measured).
 *
 * Usage: hitcost [--rounds N] [--ops N] [--warm N] [--cpu]
 *
 * --cpu times each step with the thread's CPU clock (CLOCK_THREAD_CPUTIME_ID,
 * converted to ticks with the calibrated TSC rate) instead of the TSC: on a
 * machine other programs load, time the thread spent waiting for a CPU is
 * then left out (their pollution of the caches is not).
 *
 * Instructions per operation, which a busy machine does not disturb: run one
 * round under callgrind and divide each step's inclusive count by --ops:
 *   valgrind --tool=callgrind --callgrind-out-file=cg.out \
 *       hitcost --rounds 1 --ops 200000 --warm 0
 *   callgrind_annotate --inclusive=yes --threshold=100 cg.out | grep run_
 * (run_floor ... run_pread; 2026-12-01, x86-64, gcc 12 -O2: floor 14,
 * atomics 17, rcu 25, floor+rcu 36, flat 17, bound 45, walk 49, walk+rcu 71,
 * walk2+rcu 52, calls 85, api 111.6, opt 92, page_read 145, pread 173; each
 * includes its loop's ~3 instructions and the page number's load; the tree
 * of a 256 MiB file has 3 levels.  2026-11-30: api 127.6, page_read 150,
 * pread 178.)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cache/cache.h"
#include "filemap/optimistic.h"
#include "harness/floor.h"
#include "harness/stats.h"
#include "harness/tsc.h"

#define NPAGES 65536u /* 256 MiB of 4 KiB pages, as lpcbench lookup */
#define NIDX (1u << 20)

enum step { S_FLOOR, S_ATOMICS, S_RCU, S_FLOOR_RCU, S_FLAT, S_BOUND, S_WALK, S_WALK_RCU,
	    S_WALK2_RCU, S_CALLS, S_API, S_OPT, S_PAGE_READ, S_PREAD, S_NR };
static const char *const step_name[S_NR] = {
	"floor", "atomics", "rcu", "floor+rcu", "flat", "bound", "walk", "walk+rcu", "walk2+rcu",
	"calls", "api", "opt", "page_read", "pread"
};
/* The step each step's "added" column is measured from (itself: none). */
static const enum step step_base[S_NR] = {
	[S_FLOOR] = S_FLOOR,	   [S_ATOMICS] = S_FLOOR,	[S_RCU] = S_RCU,
	[S_FLOOR_RCU] = S_FLOOR,   [S_FLAT] = S_FLOOR,		[S_BOUND] = S_FLOOR_RCU,
	[S_WALK] = S_FLOOR,	   [S_WALK_RCU] = S_WALK,	[S_WALK2_RCU] = S_WALK_RCU,
	[S_CALLS] = S_WALK_RCU,	   [S_API] = S_CALLS,		[S_OPT] = S_WALK_RCU,
	[S_PAGE_READ] = S_OPT,	   [S_PREAD] = S_OPT,
};

static uint32_t *idx;               /* random page numbers */
static struct floor fl;             /* S_FLOOR */
static struct lpc_page **flat;      /* S_FLAT: page -> descriptor */
static struct lpc_page *descs;      /* S_FLAT, S_WALK...S_CALLS: lpc descriptors */
static struct lpc_radix_root tree;  /* S_WALK...S_CALLS: page -> descriptor */
static struct lpc_radix_node **leaf; /* S_WALK2_RCU: the tree's leaves, by page >> 6 */
static struct lpc_file *file;       /* S_API */

static void *map_huge(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die_err(errno, "mapping %zu bytes", bytes);
	madvise(p, bytes, MADV_HUGEPAGE); /* as lpc maps its descriptors */
	return p;
}

static __attribute__((noinline)) void run_floor(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct floor_desc *d = &fl.desc[idx[i & (NIDX - 1)]];

		if (unlikely(!floor_get(d)))
			die("floor: count 0");
		floor_put(d);
	}
}

static __attribute__((noinline)) void run_flat(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct lpc_page *p = flat[idx[i & (NIDX - 1)]];

		if (unlikely(!lpc_page_try_get(p)))
			die("flat: count 0");
		lpc_page_release(p);
	}
}

/*
 * What the protocol cannot avoid, whatever the index: lpc's own speculative
 * reference (lpc_page_try_get: the CAS increment-unless-zero) and its put
 * (lpc_page_release: the CAS decrement) on lpc descriptors picked as the
 * floor picks its own (desc[page], the same random page numbers, 64-byte
 * descriptors in one THP-backed array).  No index, no read section.
 */
static __attribute__((noinline)) void run_atomics(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct lpc_page *p = &descs[idx[i & (NIDX - 1)]];

		if (unlikely(!lpc_page_try_get(p)))
			die("atomics: count 0");
		lpc_page_release(p);
	}
}

/* lpc's read section alone (urcu-memb, inlined), once per operation. */
static __attribute__((noinline)) void run_rcu(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		lpc_rcu_read_lock();
		__asm__ volatile("" ::: "memory");
		lpc_rcu_read_unlock();
	}
}

/* The floor inside a read section: the two atomics and R1/R5. */
static __attribute__((noinline)) void run_floor_rcu(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct floor_desc *d;

		lpc_rcu_read_lock();
		d = &fl.desc[idx[i & (NIDX - 1)]];
		if (unlikely(!floor_get(d)))
			die("floor+rcu: count 0");
		lpc_rcu_read_unlock();
		floor_put(d);
	}
}

/*
 * The bound: the mandated protocol (R1-R5 of filemap/lookup.c) on the best
 * index there can be, a flat array of slots (one acquire load from the
 * index to the descriptor), on lpc's descriptors and atomics: R1, the slot,
 * the speculative get, the re-load of the slot, R5, the put.  Any real index
 * adds its walk to this; any public call adds its bookkeeping.
 */
static __attribute__((noinline)) void run_bound(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct lpc_page *_Atomic *slot = (struct lpc_page *_Atomic *)&flat[idx[i & (NIDX - 1)]];
		struct lpc_page *p;

		lpc_rcu_read_lock();					/* R1 */
		p = atomic_load_explicit(slot, memory_order_acquire);	/* R2 */
		if (unlikely(!p || !lpc_page_try_get(p)))		/* R3 */
			die("bound: page missing");
		if (unlikely(atomic_load_explicit(slot, memory_order_acquire) != p)) /* R4 */
			die("bound: page moved");
		lpc_rcu_read_unlock();					/* R5 */
		lpc_page_release(p);
	}
}

/*
 * A two-level tree, as a root sized from the file's size would make for a
 * 256 MiB file: one 1024-slot root (here a plain array of the tree's own
 * leaf pointers) over lpc's 64-slot leaves, walked as lpc_radix_lookup
 * walks (acquire loads, a NULL test per level), inside the read section.
 * What it saves against walk+rcu is what a wider root could save.
 */
static __attribute__((noinline)) void run_walk2_rcu(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		uint32_t page = idx[i & (NIDX - 1)];
		struct lpc_radix_node *node;
		void *_Atomic const *slot;
		struct lpc_page *p;

		lpc_rcu_read_lock();
		node = atomic_load_explicit((struct lpc_radix_node *_Atomic *)&leaf[page >>
										  LPC_RADIX_SHIFT],
					    memory_order_acquire);
		if (unlikely(!node))
			die("walk2: leaf missing");
		slot = &node->slots[page & LPC_RADIX_MASK];
		p = atomic_load_explicit((void *_Atomic *)slot, memory_order_acquire);
		if (unlikely(!p || !lpc_page_try_get(p)))
			die("walk2: page %u missing", page);
		if (unlikely(atomic_load_explicit(slot, memory_order_acquire) != p))
			die("walk2: page %u moved", page);
		lpc_rcu_read_unlock();
		lpc_page_release(p);
	}
}

/* R2-R4 of lookup.c, without the retries (nothing is removed here). */
static lpc_always_inline void walk_get(uint32_t page, struct lpc_page **out)
{
	void *_Atomic const *slot;
	struct lpc_page *p = lpc_radix_lookup(&tree, page, &slot);

	if (unlikely(!p || !lpc_page_try_get(p)))
		die("walk: page %u missing", page);
	if (unlikely(atomic_load_explicit(slot, memory_order_acquire) != p))
		die("walk: page %u moved", page);
	*out = p;
}

static __attribute__((noinline)) void run_walk(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct lpc_page *p;

		walk_get(idx[i & (NIDX - 1)], &p);
		lpc_page_release(p);
	}
}

static __attribute__((noinline)) void run_walk_rcu(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct lpc_page *p;

		lpc_rcu_read_lock();
		walk_get(idx[i & (NIDX - 1)], &p);
		lpc_rcu_read_unlock();
		lpc_page_release(p);
	}
}

static __attribute__((noinline)) int calls_find(uint32_t page, struct lpc_page **out)
{
	lpc_rcu_read_lock();
	walk_get(page, out);
	lpc_rcu_read_unlock();
	return 0;
}

static __attribute__((noinline)) void calls_put(struct lpc_page *p)
{
	lpc_page_release(p);
}

static __attribute__((noinline)) void run_calls(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct lpc_page *p;

		if (unlikely(calls_find(idx[i & (NIDX - 1)], &p)))
			die("calls: find failed");
		calls_put(p);
	}
}

static __attribute__((noinline)) void run_api(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct lpc_page *p;
		int rc = lpc_page_find(file, idx[i & (NIDX - 1)], &p);

		if (unlikely(rc))
			die("api: find %u = %d", idx[i & (NIDX - 1)], rc);
		lpc_page_put(p);
	}
}

/* A function that reads no byte of the page: the steps then cost the
 * protocol alone, as find+put, which touches no data either (a random
 * page's first byte is a DRAM miss that would swamp the rest). */
static void read_word(const void *data, size_t len, void *arg)
{
	(void)len;
	*(uint64_t *)arg += (uint64_t)(uintptr_t)data;
}

static __attribute__((noinline)) void run_opt(unsigned n)
{
	uint64_t sink = 0;

	for (unsigned i = 0; i < n; i++) {
		bool ok;

		lpc_rcu_read_lock();
		ok = lpc_filemap_read_optimistic(file, idx[i & (NIDX - 1)], read_word, &sink);
		lpc_rcu_read_unlock();
		if (unlikely(!ok))
			die("opt: page %u not valid", idx[i & (NIDX - 1)]);
	}
	if (sink == 42)
		printf(" ");
}

static __attribute__((noinline)) void run_page_read(unsigned n)
{
	uint64_t sink = 0;

	for (unsigned i = 0; i < n; i++) {
		int rc = lpc_page_read(file, idx[i & (NIDX - 1)], 0, read_word, &sink);

		if (unlikely(rc))
			die("page_read: %u = %d", idx[i & (NIDX - 1)], rc);
	}
	if (sink == 42)
		printf(" ");
}

static __attribute__((noinline)) void run_pread(unsigned n)
{
	uint64_t sink = 0;

	for (unsigned i = 0; i < n; i++) {
		uint64_t w;
		uint64_t off = (uint64_t)idx[i & (NIDX - 1)] << file->page_shift;
		ssize_t rc = lpc_pread(file, &w, sizeof(w), off);

		if (unlikely(rc != (ssize_t)sizeof(w)))
			die("pread: %u = %zd", idx[i & (NIDX - 1)], rc);
		sink += w;
	}
	if (sink == 42)
		printf(" ");
}

static void (*const step_run[S_NR])(unsigned) = {
	[S_FLOOR] = run_floor,	     [S_ATOMICS] = run_atomics,	    [S_RCU] = run_rcu,
	[S_FLOOR_RCU] = run_floor_rcu, [S_FLAT] = run_flat,	    [S_BOUND] = run_bound,
	[S_WALK] = run_walk,	     [S_WALK_RCU] = run_walk_rcu,   [S_WALK2_RCU] = run_walk2_rcu,
	[S_CALLS] = run_calls,	     [S_API] = run_api,		    [S_OPT] = run_opt,
	[S_PAGE_READ] = run_page_read, [S_PREAD] = run_pread,
};

/* The calling thread's CPU time in ns (--cpu). */
static double thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void setup(struct lpc_cache **cache, char *path, size_t pathlen)
{
	uint64_t rng = 88172645463325252ull;
	uint32_t *perm = xmalloc(NPAGES * sizeof(*perm));
	struct lpc_config cfg;
	int fd;

	/* lpc's descriptors for the walk steps, in a random order. */
	for (uint32_t i = 0; i < NPAGES; i++)
		perm[i] = i;
	for (uint32_t i = NPAGES - 1; i > 0; i--) {
		uint32_t j = (uint32_t)(xorshift(&rng) % (i + 1)), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	idx = xmalloc(NIDX * sizeof(*idx));
	for (uint32_t i = 0; i < NIDX; i++)
		idx[i] = (uint32_t)(xorshift(&rng) % NPAGES);

	floor_create(&fl, NPAGES);
	descs = map_huge(NPAGES * sizeof(*descs));
	flat = map_huge(NPAGES * sizeof(*flat));
	lpc_radix_init(&tree);
	for (uint32_t i = 0; i < NPAGES; i++) {
		struct lpc_page *p = &descs[perm[i]];

		atomic_init(&p->ref, 1);
		atomic_init(&p->flags, LPC_PG_UPTODATE | LPC_PG_PUBLISHED);
		flat[i] = p;
		if (lpc_radix_insert(&tree, i, p))
			die("radix insert: out of memory");
	}
	free(perm);
	leaf = xmalloc((NPAGES >> LPC_RADIX_SHIFT) * sizeof(*leaf));
	for (uint32_t i = 0; i < NPAGES >> LPC_RADIX_SHIFT; i++) {
		void *_Atomic const *s0 = lpc_radix_lookup_leaf(&tree, (uint64_t)i << LPC_RADIX_SHIFT);

		if (!s0)
			die("radix: no leaf for page %u", i << LPC_RADIX_SHIFT);
		/* slots[] is a leaf's first member: slot 0 is the leaf. */
		leaf[i] = (struct lpc_radix_node *)(uintptr_t)s0;
	}

	/* A cache holding every page of the file, for the api step.  Its
	 * first calls also register this thread with RCU, which the walk
	 * steps' read sections need. */
	lpc_config_init(&cfg);
	cfg.cache_bytes = (size_t)(NPAGES + NPAGES / 16) * cfg.page_size;
	cfg.io_backend = LPC_IO_NULL;
	if (lpc_cache_create(&cfg, cache))
		die("lpc_cache_create failed");
	snprintf(path, pathlen, "%s/lpc-hitcost-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	fd = mkstemp(path);
	if (fd < 0 || ftruncate(fd, (off_t)NPAGES * cfg.page_size))
		die_err(errno, "creating %s", path);
	close(fd);
	if (lpc_file_open(*cache, path, O_RDONLY, 0, &file))
		die("lpc_file_open %s failed", path);
	for (uint32_t i = 0; i < NPAGES; i++) {
		struct lpc_page *p;

		if (lpc_page_get(file, i, 0, &p))
			die("filling page %u failed", i);
		lpc_page_put(p);
	}
}

int main(int argc, char **argv)
{
	unsigned rounds = 21, ops = 1000000, warm = 200000;
	bool cpu = false;
	struct lpc_cache *cache;
	struct tsc tsc;
	char path[512];
	double *ticks[S_NR], *ratio[S_NR];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--ops") && i + 1 < argc)
			ops = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--warm") && i + 1 < argc)
			warm = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--cpu"))
			cpu = true;
		else
			die("usage: hitcost [--rounds N] [--ops N] [--warm N] [--cpu]");
	}
	if (rounds < 1 || ops < 1)
		die("--rounds and --ops must be at least 1");
	tsc_calibrate(&tsc);
	setup(&cache, path, sizeof(path));
	for (int s = 0; s < S_NR; s++) {
		ticks[s] = xcalloc(rounds, sizeof(double));
		ratio[s] = xcalloc(rounds, sizeof(double));
	}
	printf("hitcost: %u pages (4 KiB) of a %u MiB file, 1 thread, %u rounds; per step "
	       "%u untimed then %u timed ops; %s/op%s\n",
	       NPAGES, NPAGES / 256, rounds, warm, ops, tsc.unit,
	       cpu ? " of the thread's CPU time" : "");
	for (unsigned r = 0; r < rounds; r++) {
		for (int s = 0; s < S_NR; s++) {
			uint64_t t0;

			if (warm)
				step_run[s](warm);
			if (cpu) {
				double c0 = thread_cpu_ns();

				step_run[s](ops);
				ticks[s][r] = (thread_cpu_ns() - c0) * tsc.ticks_per_ns / ops;
				continue;
			}
			t0 = tsc_begin();
			step_run[s](ops);
			ticks[s][r] = (double)(tsc_end() - t0) / ops;
		}
		for (int s = 0; s < S_NR; s++)
			ratio[s][r] = ticks[s][r] / ticks[S_FLOOR][r];
		progress("hitcost: round %u/%u", r + 1, rounds);
	}
	progress_done();
	printf("%-10s %8s   %-19s %s\n", "step", tsc.unit, "x floor [min-max]",
	       "added (to the step it builds on)");
	for (int s = 0; s < S_NR; s++) {
		struct summary t = summarize(ticks[s], rounds), q = summarize(ratio[s], rounds);
		double base = summarize(ratio[step_base[s]], rounds).med;

		if (step_base[s] == (enum step)s)
			printf("%-10s %8.1f   %5.2f [%4.2f-%4.2f]\n", step_name[s], t.med, q.med,
			       q.min, q.max);
		else
			printf("%-10s %8.1f   %5.2f [%4.2f-%4.2f]   %+5.2f  (to %s)\n",
			       step_name[s], t.med, q.med, q.min, q.max, q.med - base,
			       step_name[step_base[s]]);
	}
	lpc_file_close(file);
	lpc_cache_destroy(cache);
	unlink(path);
	return 0;
}
