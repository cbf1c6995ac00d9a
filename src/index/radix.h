/* SPDX-License-Identifier: MIT */
/*
 * radix.h - the per-file index: an RCU radix tree of 2^LPC_RADIX_SHIFT-slot
 * nodes mapping a page index (uint64_t) to an entry (a non-NULL pointer whose
 * low bit is clear), with three tags per slot kept up the tree.
 *
 * Glossary (as lib/xarray.c): `index` is the key; `node` an internal or leaf
 * node; `offset` a slot number inside a node; `entry` the stored pointer.
 *
 * Concurrency contract:
 *  - Structural writers (insert that allocates or links a node, delete that
 *    empties a leaf, tag set/clear, destroy) are serialised by the caller
 *    (the file's index lock).  They publish every slot and root pointer with
 *    a release store, so a reader that loads a pointer (acquire/consume)
 *    sees the node or entry fully initialised.
 *  - Each leaf has its own lock (struct lpc_radix_node.lock, radix.c steps
 *    FI1-FI4 and FD1-FD3).  Every write to a leaf's slots, count or tags
 *    takes it, structural writers too (inside radix.c); the index lock is
 *    taken BEFORE a leaf lock, never while holding one.  So the fast calls
 *    (lpc_radix_insert_fast, lpc_radix_leaf_lock + lpc_radix_leaf_delete),
 *    which hold no index lock, run beside each other and beside a
 *    structural writer: they write only the one leaf they locked, and only
 *    where that changes nothing above it (a slot filled in a live leaf; a
 *    slot emptied, untagged, in a leaf that stays linked: one that keeps
 *    another entry, or is kept empty, below).  Anything else
 *    they refuse, and the caller takes the index lock.  A caller that holds
 *    the index lock therefore no longer sees the leaves' slots frozen: an
 *    entry may appear in an empty slot of an existing leaf, or leave one,
 *    beside it (it still sees no node appear or go).
 *  - Readers (lpc_radix_lookup, lpc_radix_lookup_leaf, lpc_radix_gang, lpc_radix_gang_tag,
 *    lpc_radix_tag_get, lpc_radix_tagged, lpc_radix_count) take no lock.  The caller is
 *    either inside an RCU read section or holds the index lock (shared or
 *    exclusive): nodes removed from the tree are freed with call_rcu only, so a
 *    reader that raced with a delete walks detached nodes safely.  A detached
 *    node keeps its slots as they were when it was emptied (all NULL), except a
 *    root left behind by a shrink, whose slot 0 still points at the live child.
 *  - Tag bitmaps are read by readers with relaxed loads: a tag seen by a
 *    lockless reader is a hint that the caller re-checks on the page itself.
 *  - Node allocation uses malloc (posix_memalign) under the writer's lock; it
 *    may fail with -ENOMEM, leaving the tree unchanged.  Writers free nodes
 *    with call_rcu, so they run in registered RCU threads; lpc_rcu_barrier()
 *    waits for those frees.

 * Memory: a tree has no allocation while empty.  The height grows on insert
 * and shrinks on delete when only slot 0 of the root is used.  A fast delete
 * of a leaf's last entry leaves the leaf linked and empty (kept) while the
 * tree keeps fewer than LPC_RADIX_KEEP such leaves, so that the pages that
 * come back after an invalidate (seed 002's loop, a re-read) go into it
 * with a fast insert, with no allocation, no index lock and no call_rcu
 * (whose grace periods, on a VM, are membarrier IPIs to every other CPU);
 * beyond that it refuses, and the slow delete unlinks the leaf as before.
 * So a tree holds at most LPC_RADIX_KEEP empty leaves (plus one per thread
 * deleting at that moment: the bound is read before the delete), with
 * the inner nodes above them, until they fill again or the tree is
 * destroyed: an empty tree has no allocation unless it keeps leaves.
 */
#ifndef LPC_INDEX_RADIX_H
#define LPC_INDEX_RADIX_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/compiler.h"
#include "core/rcu.h"

#ifndef LPC_RADIX_SHIFT
#define LPC_RADIX_SHIFT 6 /* 64 slots; tests build a copy with 2 (4 slots) */
#endif
#define LPC_RADIX_SLOTS (1u << LPC_RADIX_SHIFT)
#define LPC_RADIX_MASK ((uint64_t)LPC_RADIX_SLOTS - 1)
/* Empty leaves a tree keeps linked (radix.c "Kept leaves"): 64 leaves (of
 * 4 KiB pages, 16 MiB of a file) are 36 KiB of nodes, and each keeps the
 * inner nodes above it: in a sparse tree up to its height less one more
 * per leaf (a file of 1 TiB in 4 KiB pages: 4), so at most 180 KiB per
 * tree; in a dense one, a few. */
#define LPC_RADIX_KEEP 64u

enum lpc_radix_tag {
	LPC_TAG_DIRTY = 0,
	LPC_TAG_WRITEBACK = 1,
	LPC_TAG_TOWRITE = 2,
	LPC_RADIX_NTAGS = 3,
};

/*
 * A node.  In this header, not radix.c, only so that lookup can be inlined
 * into the hit path (the kernel's xa_node is public for the same reason);
 * only radix.c writes it.  Readers use shift and slots alone.
 */
struct lpc_radix_node {
	/* First, so that a step down addresses slot i as node + 8 i, with no
	 * offset to add (a walk reads slots at every level, shift only at
	 * the root). */
	void *_Atomic slots[LPC_RADIX_SLOTS];
	uint8_t shift;		       /* fixed before publication */
	uint8_t offset;		       /* slot in parent; writer only */
	/* Used slots: a leaf's under its lock, an inner node's under the
	 * index lock; read without either only as a gauge (lpc_radix_count). */
	_Atomic uint16_t count;
	/* Leaves only: RADIX_LEAF_LOCKED | RADIX_LEAF_DEAD (radix.c FI/FD). */
	_Atomic uint32_t lock;
	struct lpc_radix_node *parent; /* NULL at the root; writer only */
	_Atomic uint64_t tags[LPC_RADIX_NTAGS];
	struct rcu_head rcu;
};

struct lpc_radix_root {
	struct lpc_radix_node *_Atomic rnode; /* NULL: no node (no entry, no kept leaf) */
	/* Nodes allocated and not yet freed: written by writers (relaxed load
	 * and store under their lock), read without it as a gauge. */
	_Atomic uint64_t nodes;
	/* Empty leaves left linked by a fast delete (radix.c KL1-KL3): changed
	 * under the leaf's lock by the hold that empties or refills one
	 * (relaxed RMW: leaves' locks are many), read as the bound. */
	_Atomic uint32_t kept;
};

/* Context: any; the tree is empty and allocates nothing. */
void lpc_radix_init(struct lpc_radix_root *root);

/*
 * Frees every node (with call_rcu) and empties the tree.  Entries are not
 * touched: the caller removes or releases them first (or walks them with
 * lpc_radix_gang before).  Context: writer.
 */
void lpc_radix_destroy(struct lpc_radix_root *root);

/* One step down: the child of node at `shift` that covers index. */
static inline struct lpc_radix_node *lpc_radix_child(const struct lpc_radix_node *node,
						     uint64_t index, unsigned shift)
{
	return atomic_load_explicit(&((struct lpc_radix_node *)node)->slots[(index >> shift) &
									 LPC_RADIX_MASK],
				    memory_order_acquire);
}

/*
 * The leaf that covers index, from a root node at `shift` (index >> shift
 * is within the root's slots), or NULL where a node is missing.  Specialised
 * to the height: the last two steps above the leaf are written out with
 * constant shifts, so a tree of up to three levels (2^(3 * LPC_RADIX_SHIFT)
 * pages: a 256 MiB file of 4 KiB pages) descends with one test of the
 * height and no loop; a taller one loops down to that point first.  The
 * steps are the reader protocol's step 3 (radix.c), in the same order.
 */
static inline struct lpc_radix_node *lpc_radix_descend(struct lpc_radix_node *node,
						       uint64_t index, unsigned shift)
{
	if (shift >= 2 * LPC_RADIX_SHIFT) {
		while (unlikely(shift > 2 * LPC_RADIX_SHIFT)) {
			node = lpc_radix_child(node, index, shift);
			if (!node)
				return NULL;
			shift -= LPC_RADIX_SHIFT;
		}
		node = lpc_radix_child(node, index, 2 * LPC_RADIX_SHIFT);
		if (!node)
			return NULL;
	} else if (shift == 0) {
		return node;
	}
	return lpc_radix_child(node, index, LPC_RADIX_SHIFT);
}

/*
 * Returns the entry at index, or NULL.  If slotp is not NULL it receives the
 * address of the leaf slot that held the entry (valid while the caller stays
 * in its read section), so the caller can re-load that one slot to re-check;
 * on a miss it receives NULL.  A re-load that no longer finds the entry
 * means: look up again from the root (the leaf may have been detached, and
 * a detached leaf's slots stay NULL even after the index is re-inserted).
 * Context: RCU read section or index lock.
 */
static inline void *lpc_radix_lookup(const struct lpc_radix_root *root, uint64_t index,
				     void *_Atomic const **slotp)
{
	struct lpc_radix_node *node;
	void *_Atomic const *slot;
	void *entry;
	unsigned shift;

	node = atomic_load_explicit(&((struct lpc_radix_root *)root)->rnode,
				    memory_order_acquire);
	if (!node)
		goto miss;
	shift = node->shift;
	if ((index >> shift) > LPC_RADIX_MASK)
		goto miss;
	node = lpc_radix_descend(node, index, shift);
	if (!node)
		goto miss;
	slot = &node->slots[index & LPC_RADIX_MASK];
	entry = atomic_load_explicit((void *_Atomic *)slot, memory_order_acquire);
	if (!entry)
		goto miss;
	if (slotp)
		*slotp = slot;
	return entry;
miss:
	if (slotp)
		*slotp = NULL;
	return NULL;
}

/*
 * The leaf that covers index, for a walk of a range's slots in index order
 * (lpc_pin's fast path): returns the address of the leaf's slot 0, so that
 * slot (index & LPC_RADIX_MASK) and the ones after it, up to the leaf's
 * last (LPC_RADIX_MASK), are read with acquire loads and re-loaded to
 * re-check, as lpc_radix_lookup's slotp; or NULL when no leaf covers index.
 * A caller that crosses into the next leaf calls again with the first index
 * of that leaf: one walk from the root per leaf, not per entry.  A leaf
 * detached while the caller walks it keeps NULL slots (a miss, ordered after
 * the delete), as for lookup.  Context: RCU read section or index lock.
 */
static inline void *_Atomic const *lpc_radix_lookup_leaf(const struct lpc_radix_root *root,
							uint64_t index)
{
	struct lpc_radix_node *node;
	unsigned shift;

	node = atomic_load_explicit(&((struct lpc_radix_root *)root)->rnode,
				    memory_order_acquire);
	if (!node)
		return NULL;
	shift = node->shift;
	if ((index >> shift) > LPC_RADIX_MASK)
		return NULL;
	node = lpc_radix_descend(node, index, shift);
	return node ? (void *_Atomic const *)node->slots : NULL;
}

/*
 * Stores entry at index, growing the tree as needed.  entry must be non-NULL
 * with its low bit clear.
 * Return: 0; -EEXIST if index holds an entry already (tree unchanged);
 * -ENOMEM (tree unchanged).  Context: writer.
 */
int lpc_radix_insert(struct lpc_radix_root *root, uint64_t index, void *entry);

/*
 * Removes and returns the entry at index (NULL if none), clearing its tags,
 * freeing emptied nodes with call_rcu and shrinking the height.
 * Context: writer.
 */
void *lpc_radix_delete(struct lpc_radix_root *root, uint64_t index);

/*
 * Removes the entry at index only if it currently is `old` (as delete does).
 * Return: true if removed.  Context: writer.  (Used by removal paths that
 * must not delete an entry that was replaced behind them.)
 */
bool lpc_radix_delete_if(struct lpc_radix_root *root, uint64_t index, void *old);

/*
 * Fast insert (radix.c FI1-FI4): stores entry at index if the leaf that
 * covers index exists, is live and has the slot empty, under that leaf's
 * lock alone.  Return: 0; -EEXIST (index holds an entry: tree unchanged);
 * -EAGAIN when it cannot (no leaf, or the leaf is dead): the caller takes
 * the index lock and calls lpc_radix_insert.  Context: RCU read section,
 * no index lock needed; entry as lpc_radix_insert.
 */
int lpc_radix_insert_fast(struct lpc_radix_root *root, uint64_t index, void *entry);

/*
 * Fast delete (radix.c FD1-FD3).  lpc_radix_leaf_lock finds the leaf that
 * covers index and locks it; NULL when there is none or it is dead (the
 * caller goes the slow way).  While it holds the lock, the leaf's slots
 * change under nobody else: lpc_radix_leaf_entry reads one, and
 * lpc_radix_leaf_delete empties it if that needs no structural change (the
 * slot carries no tag, and the leaf keeps another entry or may be kept
 * empty: KL1): false, nothing done, otherwise.  Context: RCU read section
 * from lock to unlock (the leaf may be detached the moment it is unlocked),
 * or the index lock (nothing detaches a leaf without it); no leaf lock held
 * already.
 */
struct lpc_radix_node *lpc_radix_leaf_lock(struct lpc_radix_root *root, uint64_t index);
void lpc_radix_leaf_unlock(struct lpc_radix_node *leaf);
static inline void *lpc_radix_leaf_entry(const struct lpc_radix_node *leaf, uint64_t index)
{
	return atomic_load_explicit(&((struct lpc_radix_node *)leaf)->slots[index & LPC_RADIX_MASK],
				    memory_order_relaxed);
}
bool lpc_radix_leaf_delete(struct lpc_radix_root *root, struct lpc_radix_node *leaf,
			   uint64_t index);
/*
 * The same in two steps, for a caller that must decide before it acts
 * (lpc_invalidate freezes the page between the two): lpc_radix_leaf_delete_ok
 * says whether the (used) slot of index may go now, and
 * lpc_radix_leaf_take, in the same hold, takes it on that answer without
 * asking again.  The answer is the decision, not a prediction: the bound
 * of kept leaves it read may be reached meanwhile by another leaf's delete
 * (under that leaf's lock), and take must not refuse then (a frozen page
 * left in its slot would be freed with the index still pointing at it);
 * the bound is loose by one per thread deleting at once, as KL1 says.
 */
bool lpc_radix_leaf_delete_ok(const struct lpc_radix_root *root,
			      const struct lpc_radix_node *leaf, uint64_t index);
void lpc_radix_leaf_take(struct lpc_radix_root *root, struct lpc_radix_node *leaf,
			 uint64_t index);

/*
 * Waits until no writer holds the lock of the leaf that `slot` (an address
 * lpc_radix_lookup returned for index) lies in: what such a writer did
 * under the lock is visible after (debug checks that must see a removal
 * complete, lookup.c).  Context: the read section in which slot was found.
 */
void lpc_radix_leaf_sync(void *_Atomic const *slot, uint64_t index);

/*
 * Entries in the tree: the sum of the leaves' counts.  Exact when no writer
 * runs; a gauge otherwise.  Walks every inner node.  Context: RCU read
 * section or index lock.
 */
uint64_t lpc_radix_count(const struct lpc_radix_root *root);

/* Tags: set/clear on a present entry; get reads one slot's tag. Context: writer
 * for set/clear; reader for get.  Setting a tag on an absent index is a no-op. */
void lpc_radix_tag_set(struct lpc_radix_root *root, uint64_t index, unsigned tag);
void lpc_radix_tag_clear(struct lpc_radix_root *root, uint64_t index, unsigned tag);
bool lpc_radix_tag_get(const struct lpc_radix_root *root, uint64_t index, unsigned tag);
/* True if any entry in the tree carries tag (the root's summary bit). */
bool lpc_radix_tagged(const struct lpc_radix_root *root, unsigned tag);

/*
 * Gang lookups: fill entries[] (and indices[] if not NULL) with up to max
 * present (or tagged) entries at index >= first, in index order.
 * Return: the number found.  Context: RCU read section or index lock; a
 * lockless caller may see an entry inserted or removed during the walk or not.
 */
unsigned lpc_radix_gang(const struct lpc_radix_root *root, uint64_t first,
			void **entries, uint64_t *indices, unsigned max);
unsigned lpc_radix_gang_tag(const struct lpc_radix_root *root, uint64_t first,
			    unsigned tag, void **entries, uint64_t *indices,
			    unsigned max);

#endif /* LPC_INDEX_RADIX_H */
