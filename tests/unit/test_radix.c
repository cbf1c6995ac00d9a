/* SPDX-License-Identifier: MIT */
/*
 * test_radix.c - the per-file radix tree against a reference model, with
 * failed allocations, and with lockless readers racing writers.
 *
 *  random:  random operations (insert, delete, delete_if, lookup, tags,
 *           gang, gang_tag) on indices drawn from mixed distributions (small,
 *           dense ranges, near UINT64_MAX, powers of the fan-out), each result
 *           compared with a sorted-array model; the tree is filled and drained
 *           in phases so it grows, shrinks and empties (root NULL) many times.
 *  enomem:  posix_memalign is interposed and fails the Nth call: every
 *           failing insert must return -ENOMEM and leave the tree unchanged.
 *  destroy: lpc_radix_destroy on full trees (LeakSanitizer checks the frees).
 *  kept:    a fast delete of a leaf's last entry keeps the leaf (KL1): no
 *           node freed, root->kept counts it, a fast insert refills it with
 *           no node made (KL2); past LPC_RADIX_KEEP kept leaves it refuses,
 *           and the slow delete frees the leaf; destroy sets kept to 0.
 *  Everywhere: root->kept equals the linked leaves whose count is 0, and a
 *  tree with no entry holds no node but kept leaves and their paths.
 *  dead:    (LPC_DEBUG builds: a yield hook) a fast insert whose leaf dies
 *           between its walk and its lock refuses it (FI3).
 *  concurrent: writers insert and delete entries that encode their index
 *           while readers look up, gang and gang_tag under rcu_read_lock and
 *           check every entry found at index i encodes i; pinned entries
 *           (never deleted, tag never cleared) must always be found.
 *           Fast writers (lpc_radix_insert_fast, lpc_radix_leaf_lock +
 *           lpc_radix_leaf_delete: no index lock) own every third position,
 *           in the same leaves as the locked writers' (dense indices, and
 *           4-slot leaves in the shift-2 copy, so leaves empty, die and are
 *           made again all the time): each knows exactly which of its own
 *           entries are in the tree and checks every answer against that,
 *           and at the end lpc_radix_count must equal the entries present.
 *
 * Usage: test_radix [--seed N] [--ops N] [--ms N]
 * Exit: 0 pass, 1 fail, 77 skip.  Built twice: 64-slot and 4-slot nodes.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <urcu/urcu-memb.h>

#ifdef LPC_RADIX_SHIFT
/* test_radix_shift2 links radix.c alone, without core/thread.c. */
#define RADIX_ALONE 1
#endif
#include "core/rcu.h"
#include "index/radix.h"

#if defined(RADIX_ALONE) && defined(LPC_TSAN)
char lpc_rcu_tsan_token;
#endif

static uint64_t seed;
static unsigned long nr_ops = 200000;
static unsigned run_ms = 2000;
static int passed, failed;

#define CHECK(cond, ...)                                                    \
	do {                                                                \
		if (!(cond)) {                                              \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__,       \
				__LINE__, #cond);                           \
			fprintf(stderr, __VA_ARGS__);                       \
			fprintf(stderr, " (seed %" PRIu64 ")\n", seed);     \
			return 1;                                           \
		}                                                           \
	} while (0)

/* --- random numbers: splitmix64, one state per thread --- */
static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* --- posix_memalign interposed: count calls, fail the Nth --- */
static _Atomic long alloc_calls;
static _Atomic long alloc_fail_in = -1; /* calls left before one fails */
static int (*real_posix_memalign)(void **, size_t, size_t);

int posix_memalign(void **p, size_t align, size_t size)
{
	if (!real_posix_memalign) {
		real_posix_memalign = (int (*)(void **, size_t, size_t))dlsym(
			RTLD_NEXT, "posix_memalign");
		if (!real_posix_memalign)
			return ENOMEM;
	}
	atomic_fetch_add(&alloc_calls, 1);
	if (atomic_load(&alloc_fail_in) >= 0 &&
	    atomic_fetch_sub(&alloc_fail_in, 1) == 0)
		return ENOMEM;
	return real_posix_memalign(p, align, size);
}

/* --- the model: entries sorted by index --- */
struct ment {
	uint64_t index;
	void *entry;
	unsigned tags;
};

struct model {
	struct ment *v;
	size_t n, cap;
};

/* Return: the position of the first entry with index >= index. */
static size_t model_lower(const struct model *m, uint64_t index)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->v[mid].index < index)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct ment *model_find(const struct model *m, uint64_t index)
{
	size_t i = model_lower(m, index);

	return i < m->n && m->v[i].index == index ? &m->v[i] : NULL;
}

static void model_add(struct model *m, uint64_t index, void *entry)
{
	size_t i = model_lower(m, index);

	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 256;
		m->v = realloc(m->v, m->cap * sizeof(*m->v));
		if (!m->v)
			abort();
	}
	memmove(&m->v[i + 1], &m->v[i], (m->n - i) * sizeof(*m->v));
	m->v[i] = (struct ment){ index, entry, 0 };
	m->n++;
}

static void model_del(struct model *m, struct ment *e)
{
	size_t i = e - m->v;

	memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof(*m->v));
	m->n--;
}

/* A fake entry (never dereferenced): non-NULL, low bit clear. */
static void *make_entry(uint64_t index, uint64_t serial)
{
	return (void *)(uintptr_t)(((index ^ (serial << 20)) << 2) | 4);
}

static uint64_t dense_base[4];

static uint64_t pick_index(uint64_t *r, const struct model *m)
{
	unsigned k;
	uint64_t v;

	switch (rnd(r) % 10) {
	case 0:
	case 1:
		return rnd(r) % 256;
	case 2:
	case 3:
		return dense_base[rnd(r) % 4] + rnd(r) % 700;
	case 4:
		return UINT64_MAX - rnd(r) % 300;
	case 5:
		k = rnd(r) % (64 / LPC_RADIX_SHIFT + 1);
		v = k * LPC_RADIX_SHIFT >= 64 ? 0 : (uint64_t)1 << (k * LPC_RADIX_SHIFT);
		return v + rnd(r) % 3 - 1;
	case 6:
		return rnd(r) >> (rnd(r) % 64);
	default:
		if (!m->n)
			return rnd(r) % 256;
		return m->v[rnd(r) % m->n].index;
	}
}

/* The whole tree equals the model: count, gang, gang_tag, tagged. */
/* The linked leaves whose count is 0 (KL1-KL2's kept leaves).  Context:
 * no writer runs. */
static uint64_t kept_below(const struct lpc_radix_node *node)
{
	uint64_t n = 0;

	if (!node->shift)
		return !atomic_load(&((struct lpc_radix_node *)node)->count);
	for (unsigned i = 0; i < LPC_RADIX_SLOTS; i++) {
		const struct lpc_radix_node *c = atomic_load(&((struct lpc_radix_node *)node)->slots[i]);

		if (c)
			n += kept_below(c);
	}
	return n;
}

static uint64_t kept_leaves(const struct lpc_radix_root *root)
{
	const struct lpc_radix_node *top = atomic_load(&((struct lpc_radix_root *)root)->rnode);

	return top ? kept_below(top) : 0;
}

static int check_all(struct lpc_radix_root *root, const struct model *m)
{
	size_t cap = m->n + 8;

	CHECK(lpc_radix_count(root) == m->n, "count %" PRIu64 ", model %zu",
	      lpc_radix_count(root), m->n);
	void **ents = malloc(cap * sizeof(void *));
	uint64_t *idx = malloc(cap * sizeof(uint64_t));
	unsigned n, t, i, j;
	int ret = 1;

	if (!ents || !idx)
		abort();
	n = lpc_radix_gang(root, 0, ents, idx, cap);
	if (n != m->n) {
		fprintf(stderr, "FAIL check_all: gang found %u, model %zu (seed %" PRIu64 ")\n",
			n, m->n, seed);
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (idx[i] != m->v[i].index || ents[i] != m->v[i].entry) {
			fprintf(stderr, "FAIL check_all: gang[%u] = %" PRIx64 " (seed %" PRIu64 ")\n",
				i, idx[i], seed);
			goto out;
		}
	}
	for (t = 0; t < LPC_RADIX_NTAGS; t++) {
		n = lpc_radix_gang_tag(root, 0, t, ents, idx, cap);
		for (i = 0, j = 0; i < m->n; i++) {
			if (!(m->v[i].tags & (1u << t)))
				continue;
			if (j >= n || idx[j] != m->v[i].index ||
			    ents[j] != m->v[i].entry) {
				fprintf(stderr, "FAIL check_all: gang_tag %u [%u] (seed %" PRIu64 ")\n",
					t, j, seed);
				goto out;
			}
			j++;
		}
		if (j != n || lpc_radix_tagged(root, t) != (j > 0)) {
			fprintf(stderr, "FAIL check_all: tag %u: %u vs %u (seed %" PRIu64 ")\n",
				t, n, j, seed);
			goto out;
		}
	}
	if (kept_leaves(root) != atomic_load(&root->kept)) {
		fprintf(stderr, "FAIL check_all: %" PRIu64 " empty leaves, kept %u (seed %" PRIu64
			")\n", kept_leaves(root), atomic_load(&root->kept), seed);
		goto out;
	}
	if (!m->n && atomic_load(&root->rnode) && !atomic_load(&root->kept)) {
		fprintf(stderr, "FAIL check_all: empty tree keeps a node (seed %" PRIu64 ")\n",
			seed);
		goto out;
	}
	ret = 0;
out:
	free(ents);
	free(idx);
	return ret;
}

/* One random operation, checked against the model. */
static int random_op(struct lpc_radix_root *root, struct model *m, uint64_t *r,
		     bool filling, uint64_t serial)
{
	uint64_t index = pick_index(r, m), got_idx[80];
	void *got[80], *e;
	void *_Atomic const *slot;
	struct ment *me = model_find(m, index);
	unsigned op = rnd(r) % 100, t = rnd(r) % LPC_RADIX_NTAGS, max, n, i;
	size_t pos;
	int rc;

	if (op < (filling ? 40u : 15u)) {
		e = make_entry(index, serial);
		/* Half through the fast insert (one thread: its refusals are
		 * exact: -EAGAIN only where no leaf covers index). */
		rc = op & 1 ? lpc_radix_insert_fast(root, index, e) : -EAGAIN;
		if (rc == -EAGAIN) {
			CHECK(!(op & 1) || !lpc_radix_lookup_leaf(root, index),
			      "fast insert %" PRIx64 " refused by a live leaf", index);
			rc = lpc_radix_insert(root, index, e);
		}
		if (me) {
			CHECK(rc == -EEXIST, "insert %" PRIx64 " over an entry: %d", index, rc);
			CHECK(lpc_radix_lookup(root, index, NULL) == me->entry,
			      "-EEXIST changed %" PRIx64, index);
		} else {
			CHECK(rc == 0, "insert %" PRIx64 ": %d", index, rc);
			model_add(m, index, e);
		}
	} else if (op < 55) {
		struct lpc_radix_node *leaf = op & 1 ? lpc_radix_leaf_lock(root, index) : NULL;

		/* Half through the fast delete where it can. */
		if (leaf && me && lpc_radix_leaf_entry(leaf, index) == me->entry &&
		    lpc_radix_leaf_delete(root, leaf, index)) {
			lpc_radix_leaf_unlock(leaf);
			model_del(m, me);
			CHECK(!lpc_radix_lookup(root, index, NULL), "fast delete %" PRIx64, index);
			return 0;
		}
		if (leaf)
			lpc_radix_leaf_unlock(leaf);
		e = lpc_radix_delete(root, index);
		CHECK(e == (me ? me->entry : NULL), "delete %" PRIx64 ": %p", index, e);
		if (me)
			model_del(m, me);
	} else if (op < 62) {
		bool right = me && rnd(r) % 2;
		void *old = right ? me->entry : make_entry(index, serial + 1);
		bool ok = lpc_radix_delete_if(root, index, old);

		CHECK(ok == right, "delete_if %" PRIx64 ": %d", index, ok);
		if (ok)
			model_del(m, me);
	} else if (op < 72) {
		slot = (void *)1;
		e = lpc_radix_lookup(root, index, rnd(r) % 2 ? &slot : NULL);
		CHECK(e == (me ? me->entry : NULL), "lookup %" PRIx64 ": %p", index, e);
		if (slot != (void *)1) {
			CHECK(e ? slot && atomic_load(slot) == e : !slot,
			      "lookup slot %" PRIx64, index);
		}
	} else if (op < 78) {
		lpc_radix_tag_set(root, index, t);
		if (me)
			me->tags |= 1u << t;
	} else if (op < 83) {
		lpc_radix_tag_clear(root, index, t);
		if (me)
			me->tags &= ~(1u << t);
	} else if (op < 87) {
		CHECK(lpc_radix_tag_get(root, index, t) ==
			      (me && (me->tags & (1u << t))),
		      "tag_get %" PRIx64 " %u", index, t);
	} else if (op < 88) {
		bool any = false;

		for (i = 0; i < m->n; i++)
			any |= !!(m->v[i].tags & (1u << t));
		CHECK(lpc_radix_tagged(root, t) == any, "tagged %u", t);
	} else if (op < 94) {
		max = rnd(r) % 4 ? 1 + rnd(r) % 80 : 1 + rnd(r) % 3;
		n = lpc_radix_gang(root, index, got, rnd(r) % 4 ? got_idx : NULL, max);
		pos = model_lower(m, index);
		CHECK(n == (m->n - pos < max ? m->n - pos : max),
		      "gang %" PRIx64 " max %u: %u", index, max, n);
		n = lpc_radix_gang(root, index, got, got_idx, max);
		for (i = 0; i < n; i++)
			CHECK(got[i] == m->v[pos + i].entry &&
				      got_idx[i] == m->v[pos + i].index,
			      "gang %" PRIx64 " [%u]", index, i);
	} else {
		max = 1 + rnd(r) % 80;
		n = lpc_radix_gang_tag(root, index, t, got, got_idx, max);
		pos = model_lower(m, index);
		for (i = 0; pos < m->n && i < max; pos++) {
			if (!(m->v[pos].tags & (1u << t)))
				continue;
			CHECK(i < n && got[i] == m->v[pos].entry &&
				      got_idx[i] == m->v[pos].index,
			      "gang_tag %" PRIx64 " tag %u [%u] of %u", index, t, i, n);
			i++;
		}
		CHECK(i == n, "gang_tag %" PRIx64 " tag %u: %u, model %u", index, t, n, i);
	}
	return 0;
}

static int test_random(void)
{
	struct lpc_radix_root root;
	struct model m = { 0 };
	uint64_t r = seed, target = 0;
	unsigned long op, empties = 0;
	bool filling = true;
	int ret = 1;

	dense_base[0] = 0;
	dense_base[1] = rnd(&r) % (1u << 24);
	dense_base[2] = rnd(&r);
	dense_base[3] = UINT64_MAX - 2000;
	lpc_radix_init(&root);
	for (op = 0; op < nr_ops; op++) {
		if (filling && m.n >= target) {
			filling = false;
		} else if (!filling && !m.n) {
			empties++;
			if (check_all(&root, &m))
				goto out;
			filling = true;
			target = 1 + rnd(&r) % (rnd(&r) % 2 ? 64 : 3000);
		}
		if (random_op(&root, &m, &r, filling, op))
			goto out;
		if (op % 4096 == 0 && check_all(&root, &m))
			goto out;
	}
	if (check_all(&root, &m))
		goto out;
	/* Drain in a random order. */
	while (m.n) {
		struct ment *me = &m.v[rnd(&r) % m.n];

		if (lpc_radix_delete(&root, me->index) != me->entry) {
			fprintf(stderr, "FAIL drain %" PRIx64 " (seed %" PRIu64 ")\n",
				me->index, seed);
			goto out;
		}
		model_del(&m, me);
	}
	if (check_all(&root, &m))
		goto out;
	printf("random: %lu ops, emptied %lu times\n", nr_ops, empties);
	ret = 0;
out:
	lpc_radix_destroy(&root);
	free(m.v);
	return ret;
}

/* Also -EEXIST and entries/tags at the extremes, deterministically. */
static int test_edges(void)
{
	struct lpc_radix_root root;
	uint64_t idx[] = { 0, 1, LPC_RADIX_MASK, LPC_RADIX_SLOTS, UINT64_MAX,
			   UINT64_MAX - 1, (uint64_t)1 << 63, ((uint64_t)1 << 63) - 1 };
	unsigned i, n, k = sizeof(idx) / sizeof(idx[0]);
	void *ents[16];
	uint64_t got[16];
	struct lpc_radix_node *leaf;

	lpc_radix_init(&root);
	CHECK(!lpc_radix_lookup(&root, 0, NULL), "empty lookup");
	CHECK(!lpc_radix_gang(&root, 0, ents, got, 16), "empty gang");
	CHECK(!lpc_radix_delete(&root, 5), "empty delete");
	CHECK(!lpc_radix_tagged(&root, LPC_TAG_DIRTY), "empty tagged");
	lpc_radix_tag_set(&root, 7, LPC_TAG_DIRTY);
	CHECK(!atomic_load(&root.rnode), "tag_set on an empty tree allocated");
	for (i = 0; i < k; i++) {
		CHECK(lpc_radix_insert(&root, idx[i], make_entry(idx[i], 0)) == 0,
		      "insert %" PRIx64, idx[i]);
		CHECK(lpc_radix_insert(&root, idx[i], make_entry(idx[i], 1)) == -EEXIST,
		      "insert twice %" PRIx64, idx[i]);
	}
	lpc_radix_tag_set(&root, UINT64_MAX, LPC_TAG_TOWRITE);
	lpc_radix_tag_set(&root, UINT64_MAX - 2, LPC_TAG_TOWRITE); /* absent */
	CHECK(lpc_radix_tag_get(&root, UINT64_MAX, LPC_TAG_TOWRITE), "tag max");
	CHECK(!lpc_radix_tag_get(&root, UINT64_MAX - 2, LPC_TAG_TOWRITE), "tag absent");
	n = lpc_radix_gang_tag(&root, 0, LPC_TAG_TOWRITE, ents, got, 16);
	CHECK(n == 1 && got[0] == UINT64_MAX, "gang_tag max: %u", n);
	n = lpc_radix_gang(&root, UINT64_MAX, ents, got, 16);
	CHECK(n == 1 && got[0] == UINT64_MAX, "gang from max: %u", n);
	n = lpc_radix_gang(&root, UINT64_MAX - 1, ents, got, 16);
	CHECK(n == 2 && got[0] == UINT64_MAX - 1, "gang near max: %u", n);
	CHECK(lpc_radix_gang(&root, 0, ents, got, 0) == 0, "gang max 0");
	for (i = 0; i < k; i++)
		CHECK(lpc_radix_delete(&root, idx[i]) == make_entry(idx[i], 0),
		      "delete %" PRIx64, idx[i]);
	CHECK(!atomic_load(&root.rnode), "emptied tree keeps a node");
	CHECK(!lpc_radix_tagged(&root, LPC_TAG_TOWRITE), "tag survived delete");
	/* A deleted entry's tags do not come back with a new entry. */
	CHECK(lpc_radix_insert(&root, 9, make_entry(9, 0)) == 0, "insert 9");
	lpc_radix_tag_set(&root, 9, LPC_TAG_DIRTY);
	CHECK(lpc_radix_delete(&root, 9), "delete 9");
	CHECK(lpc_radix_insert(&root, 9, make_entry(9, 1)) == 0, "reinsert 9");
	CHECK(!lpc_radix_tag_get(&root, 9, LPC_TAG_DIRTY), "tag kept over delete");
	CHECK(lpc_radix_delete(&root, 9), "delete 9");

	/* Grow, then shrink back: the root is the first leaf again. */
	CHECK(lpc_radix_insert(&root, 1, make_entry(1, 0)) == 0, "insert 1");
	leaf = atomic_load(&root.rnode);
	for (i = 1; i < 64 / LPC_RADIX_SHIFT + 1; i++) {
		uint64_t big = i * LPC_RADIX_SHIFT >= 64 ? UINT64_MAX :
			       (uint64_t)1 << (i * LPC_RADIX_SHIFT);

		CHECK(lpc_radix_insert(&root, big, make_entry(big, 0)) == 0,
		      "insert %" PRIx64, big);
		CHECK(atomic_load(&root.rnode) != leaf, "no grow for %" PRIx64, big);
		CHECK(lpc_radix_delete(&root, big) == make_entry(big, 0),
		      "delete %" PRIx64, big);
		CHECK(atomic_load(&root.rnode) == leaf, "no shrink after %" PRIx64, big);
	}
	CHECK(lpc_radix_delete(&root, 1), "delete 1");
	return 0;
}

static int test_enomem(void)
{
	struct lpc_radix_root root;
	struct model m = { 0 };
	uint64_t r = seed ^ 0x5555, index;
	unsigned i, tries, failures = 0;
	long calls;
	void *e;
	int rc;

	calls = atomic_load(&alloc_calls);
	lpc_radix_init(&root);
	if (lpc_radix_insert(&root, 3, make_entry(3, 0)) ||
	    atomic_load(&alloc_calls) == calls) {
		lpc_radix_delete(&root, 3);
		printf("enomem: posix_memalign not interposed, skipped\n");
		return 0;
	}
	model_add(&m, 3, make_entry(3, 0));
	for (i = 0; i < 800; i++) {
		do
			index = pick_index(&r, &m);
		while (model_find(&m, index));
		e = make_entry(index, i);
		for (tries = 0;; tries++) {
			atomic_store(&alloc_fail_in, tries);
			rc = lpc_radix_insert(&root, index, e);
			atomic_store(&alloc_fail_in, -1);
			if (rc != -ENOMEM)
				break;
			failures++;
			CHECK(!lpc_radix_lookup(&root, index, NULL),
			      "-ENOMEM insert %" PRIx64 " left an entry", index);
			if (check_all(&root, &m))
				return 1;
		}
		CHECK(rc == 0, "insert %" PRIx64 ": %d", index, rc);
		model_add(&m, index, e);
		if (rnd(&r) % 3 == 0) {
			unsigned t = rnd(&r) % LPC_RADIX_NTAGS;

			lpc_radix_tag_set(&root, index, t);
			model_find(&m, index)->tags |= 1u << t;
		}
		if (rnd(&r) % 4 == 0) { /* delete some, to shrink */
			struct ment *me = &m.v[rnd(&r) % m.n];

			CHECK(lpc_radix_delete(&root, me->index) == me->entry,
			      "delete %" PRIx64, me->index);
			model_del(&m, me);
		}
	}
	CHECK(failures > 0, "no allocation failed");
	if (check_all(&root, &m))
		return 1;
	lpc_radix_destroy(&root);
	free(m.v);
	printf("enomem: %u failed inserts, tree unchanged each time\n", failures);
	return 0;
}

static int test_destroy(void)
{
	struct lpc_radix_root root;
	uint64_t r = seed ^ 0xdead, i;

	lpc_radix_init(&root);
	for (i = 0; i < 5000; i++) {
		uint64_t index = rnd(&r) % 3 ? i : rnd(&r);

		if (lpc_radix_insert(&root, index, make_entry(index, 0)) == 0 &&
		    i % 3 == 0)
			lpc_radix_tag_set(&root, index, LPC_TAG_DIRTY);
	}
	lpc_radix_destroy(&root);
	CHECK(!atomic_load(&root.rnode), "destroy left a root");
	CHECK(!lpc_radix_gang(&root, 0, (void *[1]){ 0 }, NULL, 1), "destroyed gang");
	lpc_radix_destroy(&root); /* empty: nothing to do */
	return 0;
}

/* --- concurrent --- */
#define CONC_POS 600
#define CONC_PINNED 3

struct desc {
	uint64_t index;
};

static struct desc conc_desc[CONC_POS];
static bool conc_present[CONC_POS]; /* under conc_lock; a fast writer's own: its */
#define CONC_FAST_WRITERS 2
/* Position k belongs to fast writer w when k % 3 == 0 and (k / 3) % 2 == w. */
static bool conc_fast_pos(unsigned k)
{
	return k >= CONC_PINNED && k % 3 == 0;
}
static struct lpc_radix_root conc_root;
static pthread_mutex_t conc_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int conc_stop;
static _Atomic long conc_errors, conc_reads, conc_writes, conc_hits, conc_roots;
static _Atomic long conc_fast_ins, conc_fast_del, conc_slow_ins, conc_slow_del;

static void conc_fail(const char *what, uint64_t index)
{
	if (atomic_fetch_add(&conc_errors, 1) < 10)
		fprintf(stderr, "FAIL concurrent: %s at %" PRIx64 " (seed %" PRIu64 ")\n",
			what, index, seed);
}

static void *conc_writer(void *arg)
{
	uint64_t r = seed * 31 + (uintptr_t)arg;
	unsigned long ops = 0;
	bool drain = (uintptr_t)arg & 1;
	struct lpc_radix_node *node, *last_root = NULL;

	urcu_memb_register_thread();
	while (!atomic_load_explicit(&conc_stop, memory_order_relaxed)) {
		unsigned k = CONC_PINNED + rnd(&r) % (CONC_POS - CONC_PINNED);
		struct desc *d = &conc_desc[k];
		unsigned op = rnd(&r) % 100;

		if (conc_fast_pos(k))
			continue; /* a fast writer's */
		if (++ops % 4000 == 0)
			drain = !drain; /* fill, then drain: grow and shrink */
		pthread_mutex_lock(&conc_lock);
		if (conc_present[k] && op < 15) {
			if (op & 1)
				lpc_radix_tag_set(&conc_root, d->index, op % LPC_RADIX_NTAGS);
			else
				lpc_radix_tag_clear(&conc_root, d->index, op % LPC_RADIX_NTAGS);
		} else if (conc_present[k] && (drain ? op < 90 : op < 40)) {
			if (op & 1) {
				if (lpc_radix_delete(&conc_root, d->index) != d)
					conc_fail("delete", d->index);
			} else if (!lpc_radix_delete_if(&conc_root, d->index, d)) {
				conc_fail("delete_if", d->index);
			}
			conc_present[k] = false;
		} else if (!conc_present[k] && !drain && op < 70) {
			if (lpc_radix_insert(&conc_root, d->index, d))
				conc_fail("insert", d->index);
			conc_present[k] = true;
		}
		node = atomic_load_explicit(&conc_root.rnode, memory_order_relaxed);
		if (node != last_root) {
			last_root = node;
			atomic_fetch_add_explicit(&conc_roots, 1, memory_order_relaxed);
		}
		pthread_mutex_unlock(&conc_lock);
		atomic_fetch_add_explicit(&conc_writes, 1, memory_order_relaxed);
	}
	urcu_memb_unregister_thread();
	return NULL;
}

/* Inserts d (absent: ours) fast, or under conc_lock when refused. */
static void conc_fast_insert(struct desc *d)
{
	int rc;

	lpc_rcu_read_lock();
	rc = lpc_radix_insert_fast(&conc_root, d->index, d);
	lpc_rcu_read_unlock();
	if (rc == -EAGAIN) {
		pthread_mutex_lock(&conc_lock);
		rc = lpc_radix_insert(&conc_root, d->index, d);
		pthread_mutex_unlock(&conc_lock);
		atomic_fetch_add_explicit(&conc_slow_ins, 1, memory_order_relaxed);
	} else {
		atomic_fetch_add_explicit(&conc_fast_ins, 1, memory_order_relaxed);
	}
	if (rc)
		conc_fail("fast insert", d->index);
}

/* Deletes d (present: ours) fast, or under conc_lock when refused; a
 * tagged entry must be refused. */
static void conc_fast_delete(struct desc *d, bool tagged)
{
	struct lpc_radix_node *leaf;
	bool done = false;

	lpc_rcu_read_lock();
	leaf = lpc_radix_leaf_lock(&conc_root, d->index);
	if (leaf) {
		if (lpc_radix_leaf_entry(leaf, d->index) != d)
			conc_fail("fast delete: entry not in its live leaf", d->index);
		else
			done = lpc_radix_leaf_delete(&conc_root, leaf, d->index);
		if (done && tagged)
			conc_fail("fast delete of a tagged entry", d->index);
		lpc_radix_leaf_unlock(leaf);
	}
	lpc_rcu_read_unlock();
	if (done) {
		atomic_fetch_add_explicit(&conc_fast_del, 1, memory_order_relaxed);
		return;
	}
	pthread_mutex_lock(&conc_lock);
	if (!lpc_radix_delete_if(&conc_root, d->index, d))
		conc_fail("slow delete after a refused fast one", d->index);
	pthread_mutex_unlock(&conc_lock);
	atomic_fetch_add_explicit(&conc_slow_del, 1, memory_order_relaxed);
}

static void *conc_fast_writer(void *arg)
{
	unsigned w = (unsigned)(uintptr_t)arg;
	uint64_t r = seed * 53 + w;
	bool tagged[CONC_POS] = { false };
	unsigned long ops = 0;
	bool drain = w & 1;

	urcu_memb_register_thread();
	while (!atomic_load_explicit(&conc_stop, memory_order_relaxed)) {
		unsigned k = CONC_PINNED + rnd(&r) % (CONC_POS - CONC_PINNED);
		struct desc *d = &conc_desc[k];
		unsigned op = rnd(&r) % 100;
		const struct desc *e;

		if (!conc_fast_pos(k) || (k / 3) % CONC_FAST_WRITERS != w)
			continue;
		if (++ops % 2000 == 0)
			drain = !drain;
		if (rnd(&r) % 512 == 0)
			sched_yield(); /* let the others into the window */
		if (conc_present[k] && op < 8) {
			/* A tag: its delete must go the slow way. */
			pthread_mutex_lock(&conc_lock);
			lpc_radix_tag_set(&conc_root, d->index, LPC_TAG_TOWRITE);
			pthread_mutex_unlock(&conc_lock);
			tagged[k] = true;
		} else if (conc_present[k] && (drain ? op < 90 : op < 40)) {
			conc_fast_delete(d, tagged[k]);
			conc_present[k] = tagged[k] = false;
		} else if (!conc_present[k] && !drain && op < 70) {
			conc_fast_insert(d);
			conc_present[k] = true;
		}
		/* Only this thread writes d's slot: the answer is exact. */
		lpc_rcu_read_lock();
		e = lpc_radix_lookup(&conc_root, d->index, NULL);
		lpc_rcu_read_unlock();
		if (e != (conc_present[k] ? d : NULL))
			conc_fail("fast writer's own entry", d->index);
		atomic_fetch_add_explicit(&conc_writes, 1, memory_order_relaxed);
	}
	urcu_memb_unregister_thread();
	return NULL;
}

/* Every entry the reader saw: the one desc that belongs at its index. */
static void conc_check_gang(uint64_t first, void **ents, uint64_t *idx,
			    unsigned n, unsigned max)
{
	unsigned i;

	if (n > max)
		conc_fail("gang overflow", first);
	for (i = 0; i < n; i++) {
		const struct desc *d = ents[i];

		if (d < conc_desc || d >= conc_desc + CONC_POS ||
		    d->index != idx[i] || idx[i] < first ||
		    (i && idx[i] <= idx[i - 1]))
			conc_fail("gang entry", idx[i]);
	}
}

static void *conc_reader(void *arg)
{
	uint64_t r = seed * 77 + (uintptr_t)arg, idx[16];
	void *ents[16];
	void *_Atomic const *slot;

	urcu_memb_register_thread();
	while (!atomic_load_explicit(&conc_stop, memory_order_relaxed)) {
		unsigned k = rnd(&r) % CONC_POS, p = rnd(&r) % CONC_PINNED;
		const struct desc *d = &conc_desc[k], *e, *again;
		unsigned n, t = rnd(&r) % LPC_RADIX_NTAGS;

		lpc_rcu_read_lock();
		e = lpc_radix_lookup(&conc_root, d->index, &slot);
		if (e) {
			if (e != d)
				conc_fail("lookup: entry of another index", d->index);
			again = atomic_load_explicit(slot, memory_order_acquire);
			if (again && again != d)
				conc_fail("slot: entry of another index", d->index);
			atomic_fetch_add_explicit(&conc_hits, 1, memory_order_relaxed);
		}
		if (lpc_radix_lookup(&conc_root, conc_desc[p].index, NULL) != &conc_desc[p])
			conc_fail("pinned entry missed", conc_desc[p].index);
		if (!lpc_radix_tag_get(&conc_root, conc_desc[p].index, LPC_TAG_DIRTY))
			conc_fail("pinned tag missed", conc_desc[p].index);
		n = lpc_radix_gang(&conc_root, d->index, ents, idx, 16);
		conc_check_gang(d->index, ents, idx, n, 16);
		n = lpc_radix_gang_tag(&conc_root, d->index, t, ents, idx, 16);
		conc_check_gang(d->index, ents, idx, n, 16);
		n = lpc_radix_gang_tag(&conc_root, conc_desc[p].index,
				       LPC_TAG_DIRTY, ents, idx, 1);
		if (n != 1 || ents[0] != &conc_desc[p])
			conc_fail("pinned gang_tag", conc_desc[p].index);
		lpc_rcu_read_unlock();
		atomic_fetch_add_explicit(&conc_reads, 1, memory_order_relaxed);
	}
	urcu_memb_unregister_thread();
	return NULL;
}

static int test_concurrent(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned nw = ncpu >= 2 ? 2 : 1, nr = ncpu >= 4 ? 3 : 2, i, k;
	pthread_t th[8 + CONC_FAST_WRITERS];
	uint64_t present = 0;
	uint64_t r = seed ^ 0xc0c0, v[CONC_POS];
	struct timespec ts = { run_ms / 1000, (run_ms % 1000) * 1000000L };

	/* Distinct indices: pinned first, dense, scattered, near the top. */
	for (i = 0; i < CONC_POS; i++) {
		do {
			if (i < CONC_PINNED)
				v[i] = 5 + i * 700;
			else if (i < 300)
				v[i] = rnd(&r) % 2048;
			else if (i < 450)
				v[i] = rnd(&r) >> (rnd(&r) % 64);
			else if (i < 520)
				v[i] = UINT64_MAX - rnd(&r) % 512;
			else
				v[i] = ((uint64_t)1 << (rnd(&r) % 64)) + rnd(&r) % 3 - 1;
			for (k = 0; k < i && v[k] != v[i]; k++)
				;
		} while (k < i);
	}
	for (i = 0; i < CONC_POS; i++)
		conc_desc[i].index = v[i];

	lpc_radix_init(&conc_root);
	for (k = 0; k < CONC_PINNED; k++) {
		CHECK(!lpc_radix_insert(&conc_root, v[k], &conc_desc[k]), "pin %u", k);
		lpc_radix_tag_set(&conc_root, v[k], LPC_TAG_DIRTY);
		conc_present[k] = true;
	}
	for (i = 0; i < nw; i++)
		pthread_create(&th[i], NULL, conc_writer, (void *)(uintptr_t)i);
	for (i = 0; i < nr; i++)
		pthread_create(&th[nw + i], NULL, conc_reader, (void *)(uintptr_t)i);
	for (i = 0; i < CONC_FAST_WRITERS; i++)
		pthread_create(&th[nw + nr + i], NULL, conc_fast_writer, (void *)(uintptr_t)i);
	nanosleep(&ts, NULL);
	atomic_store(&conc_stop, 1);
	for (i = 0; i < nw + nr + CONC_FAST_WRITERS; i++)
		pthread_join(th[i], NULL);

	for (k = 0; k < CONC_POS; k++)
		present += conc_present[k];
	CHECK(lpc_radix_count(&conc_root) == present, "count %" PRIu64 ", %" PRIu64 " present",
	      lpc_radix_count(&conc_root), present);
	for (k = 0; k < CONC_POS; k++) {
		if (!conc_present[k])
			continue;
		CHECK(lpc_radix_delete(&conc_root, v[k]) == &conc_desc[k],
		      "final delete %" PRIx64, v[k]);
	}
	CHECK(kept_leaves(&conc_root) == atomic_load(&conc_root.kept),
	      "%" PRIu64 " empty leaves, kept %u", kept_leaves(&conc_root),
	      atomic_load(&conc_root.kept));
	CHECK(!atomic_load(&conc_root.rnode) || atomic_load(&conc_root.kept),
	      "drained tree keeps a node that is no kept leaf's");
	printf("concurrent: %u writers, %u readers, %ld writes, %ld root changes, "
	       "%ld reads (%ld hits)\n",
	       nw, nr, atomic_load(&conc_writes), atomic_load(&conc_roots),
	       atomic_load(&conc_reads), atomic_load(&conc_hits));
	printf("concurrent: fast writers: %ld fast inserts, %ld slow; %ld fast deletes, %ld slow\n",
	       atomic_load(&conc_fast_ins), atomic_load(&conc_slow_ins),
	       atomic_load(&conc_fast_del), atomic_load(&conc_slow_del));
	CHECK(atomic_load(&conc_fast_ins) > 0 && atomic_load(&conc_fast_del) > 0 &&
		      atomic_load(&conc_slow_ins) > 0 && atomic_load(&conc_slow_del) > 0,
	      "fast writers never took one of the four ways");
	CHECK(!atomic_load(&conc_errors), "%ld reader or writer errors",
	      atomic_load(&conc_errors));
	CHECK(atomic_load(&conc_reads) > 0 && atomic_load(&conc_writes) > 0,
	      "threads did not run");
	return 0;
}

#if LPC_DEBUG
/*
 * dead: the story of FI3, with the yield hook (core/debug.h).  A fast insert
 * has found the leaf (FI1) and not yet locked it (FI2) when the leaf's only
 * entry is deleted: the leaf dies and is unlinked.  The insert must refuse
 * it (-EAGAIN, nothing stored), and the slow insert then puts the entry in
 * a new leaf.  Without the dead check the entry goes into the unlinked leaf
 * and is lost (rule RADIX-LEAF-COUNT fires at the unlock: mutant
 * leaf-no-dead).
 */
static struct lpc_radix_root story_root;
static int story_fired;

static void story_hook(enum lpc_yield_point yp)
{
	if (yp == LPC_YP_FI2 && !story_fired++)
		lpc_radix_delete(&story_root, 8); /* between FI1 and FI2 */
}

static int test_dead_leaf(void)
{
	static char e[3][8] __attribute__((aligned(8)));
	int rc;

	lpc_radix_init(&story_root);
	CHECK(!lpc_radix_insert(&story_root, 8, e[0]), "insert 8");
	CHECK(!lpc_radix_insert(&story_root, 1000, e[2]), "insert 1000");
	story_fired = 0;
	CHECK(!lpc_yield_arm("FI2", 1.0, 1), "arm FI2");
	lpc_yield_set_hook(story_hook);
	lpc_rcu_read_lock();
	rc = lpc_radix_insert_fast(&story_root, 9, e[1]);
	lpc_rcu_read_unlock();
	lpc_yield_set_hook(NULL);
	lpc_yield_arm(NULL, 0, 0);
	CHECK(story_fired == 1, "the hook ran %d times", story_fired);
	CHECK(rc == -EAGAIN, "fast insert into a leaf that died before its lock: %d", rc);
	CHECK(!lpc_radix_lookup(&story_root, 9, NULL), "refused entry is in the tree");
	CHECK(!lpc_radix_insert(&story_root, 9, e[1]), "slow insert after the refusal");
	CHECK(lpc_radix_lookup(&story_root, 9, NULL) == e[1], "entry of the slow insert");
	CHECK(lpc_radix_count(&story_root) == 2, "count %" PRIu64, lpc_radix_count(&story_root));
	lpc_radix_delete(&story_root, 9);
	lpc_radix_delete(&story_root, 1000);
	CHECK(!atomic_load(&story_root.rnode), "drained story tree keeps a node");
	return 0;
}
#endif

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void run(const char *name, int (*fn)(void))
{
	double t0 = now_ms();
	int rc = fn();

	printf("%s %s (%.0f ms)\n", rc ? "FAIL" : "PASS", name, now_ms() - t0);
	if (rc)
		failed++;
	else
		passed++;
	fflush(stdout);
}

/* Fast-deletes index (its leaf locked inside a read section).  Return:
 * whether the fast delete took it. */
static bool fast_del(struct lpc_radix_root *root, uint64_t index)
{
	struct lpc_radix_node *leaf;
	bool done = false;

	lpc_rcu_read_lock();
	leaf = lpc_radix_leaf_lock(root, index);
	if (leaf) {
		done = lpc_radix_leaf_delete(root, leaf, index);
		lpc_radix_leaf_unlock(leaf);
	}
	lpc_rcu_read_unlock();
	return done;
}

static int test_kept(void)
{
	struct lpc_radix_root root;
	uint64_t nodes, base;
	int rc;

	lpc_radix_init(&root);
	/* One leaf of entries, all deleted the fast way: the last one keeps
	 * the leaf (KL1), which a fast insert then fills with no node made. */
	for (uint64_t i = 0; i < LPC_RADIX_SLOTS; i++)
		CHECK(lpc_radix_insert(&root, 1000 * LPC_RADIX_SLOTS + i,
					 make_entry(1000 * LPC_RADIX_SLOTS + i, 1)) == 0, "insert");
	nodes = atomic_load(&root.nodes);
	for (uint64_t i = 0; i < LPC_RADIX_SLOTS; i++)
		CHECK(fast_del(&root, 1000 * LPC_RADIX_SLOTS + i), "fast delete of slot %" PRIu64, i);
	CHECK(atomic_load(&root.kept) == 1 && kept_leaves(&root) == 1,
	      "kept %u, %" PRIu64 " empty leaves, want 1", atomic_load(&root.kept), kept_leaves(&root));
	CHECK(atomic_load(&root.nodes) == nodes && atomic_load(&root.rnode),
	      "the emptied leaf was freed: nodes %" PRIu64 " of %" PRIu64,
	      atomic_load(&root.nodes), nodes);
	CHECK(lpc_radix_count(&root) == 0, "entries left: %" PRIu64, lpc_radix_count(&root));
	CHECK(!lpc_radix_lookup(&root, 1000 * LPC_RADIX_SLOTS + 0, NULL), "a deleted entry found");
	lpc_rcu_read_lock();
	rc = lpc_radix_insert_fast(&root, 1000 * LPC_RADIX_SLOTS + 1,
				   make_entry(1000 * LPC_RADIX_SLOTS + 1, 2));
	lpc_rcu_read_unlock();
	CHECK(rc == 0, "fast insert into the kept leaf: %d", rc);
	CHECK(atomic_load(&root.kept) == 0 && atomic_load(&root.nodes) == nodes,
	      "after the refill: kept %u, nodes %" PRIu64 " (want 0, %" PRIu64 ")",
	      atomic_load(&root.kept), atomic_load(&root.nodes), nodes);
	CHECK(fast_del(&root, 1000 * LPC_RADIX_SLOTS + 1), "fast delete after the refill");
	/* The slow insert into a kept leaf refills it too (KL2 at I3). */
	CHECK(lpc_radix_insert(&root, 1000 * LPC_RADIX_SLOTS + 1,
				 make_entry(1000 * LPC_RADIX_SLOTS + 1, 3)) == 0, "slow insert");
	CHECK(atomic_load(&root.kept) == 0 && atomic_load(&root.nodes) == nodes,
	      "slow refill: kept %u, nodes %" PRIu64, atomic_load(&root.kept),
	      atomic_load(&root.nodes));
	CHECK(lpc_radix_delete(&root, 1000 * LPC_RADIX_SLOTS + 1) != NULL, "slow delete");
	CHECK(!atomic_load(&root.rnode) && atomic_load(&root.kept) == 0,
	      "a slow delete of a leaf's last entry unlinks it as before");
	/* LPC_RADIX_KEEP leaves kept, then the next one's last entry refused:
	 * the slow delete frees it. */
	base = 5000 * LPC_RADIX_SLOTS;
	for (uint64_t l = 0; l <= LPC_RADIX_KEEP; l++)
		CHECK(lpc_radix_insert(&root, base + l * LPC_RADIX_SLOTS, make_entry(base + l, 4)) == 0,
			"insert");
	for (uint64_t l = 0; l < LPC_RADIX_KEEP; l++)
		CHECK(fast_del(&root, base + l * LPC_RADIX_SLOTS), "kept leaf %" PRIu64, l);
	CHECK(atomic_load(&root.kept) == LPC_RADIX_KEEP, "kept %u, want %u",
	      atomic_load(&root.kept), LPC_RADIX_KEEP);
	nodes = atomic_load(&root.nodes);
	CHECK(!fast_del(&root, base + LPC_RADIX_KEEP * LPC_RADIX_SLOTS),
	      "a leaf kept past LPC_RADIX_KEEP");
	CHECK(lpc_radix_delete(&root, base + LPC_RADIX_KEEP * LPC_RADIX_SLOTS) != NULL,
	      "slow delete past the bound");
	CHECK(atomic_load(&root.nodes) < nodes && atomic_load(&root.kept) == LPC_RADIX_KEEP &&
		      kept_leaves(&root) == LPC_RADIX_KEEP,
	      "past the bound: nodes %" PRIu64 " of %" PRIu64 ", kept %u, %" PRIu64 " empty",
	      atomic_load(&root.nodes), nodes, atomic_load(&root.kept), kept_leaves(&root));
	lpc_radix_destroy(&root);
	CHECK(atomic_load(&root.kept) == 0 && !atomic_load(&root.rnode), "destroy: kept %u",
	      atomic_load(&root.kept));
	return 0;
}

int main(int argc, char **argv)
{
	struct timespec now;
	int i;

	clock_gettime(CLOCK_REALTIME, &now);
	seed = (uint64_t)now.tv_sec * 1000000007u ^ (uint64_t)now.tv_nsec ^ getpid();
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			seed = strtoull(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--ops") && i + 1 < argc) {
			nr_ops = strtoul(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--ms") && i + 1 < argc) {
			run_ms = strtoul(argv[++i], NULL, 0);
		} else {
			fprintf(stderr, "usage: %s [--seed N] [--ops N] [--ms N]\n", argv[0]);
			return 1;
		}
	}
	printf("test_radix: seed %" PRIu64 ", %u-slot nodes (replay: --seed %" PRIu64 ")\n",
	       seed, LPC_RADIX_SLOTS, seed);
	urcu_memb_register_thread();
	run("edges", test_edges);
	run("random", test_random);
	run("enomem", test_enomem);
	run("destroy", test_destroy);
	run("kept", test_kept);
#if LPC_DEBUG
	run("dead", test_dead_leaf);
#endif
	run("concurrent", test_concurrent);
	lpc_rcu_barrier(); /* run every call_rcu free before LeakSanitizer looks */
	urcu_memb_unregister_thread();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
