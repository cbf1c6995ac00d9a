/* SPDX-License-Identifier: MIT */
/*
 * radix.c - the per-file index: an RCU radix tree with tags.
 *
 * Structure
 * ---------
 * A node has 2^LPC_RADIX_SHIFT slots (64 by default).  A node's `shift` is the
 * number of index bits below its slots: a leaf has shift 0 and its slots hold
 * entries; a node at shift s > 0 holds child nodes at shift s - LPC_RADIX_SHIFT.
 * The slot that `index` uses in a node at shift s is (index >> s) & MASK.
 *
 * The root is NULL (empty tree, no allocation) or a node; the root's shift
 * alone fixes the height and the largest index the tree can hold, so there is
 * no separate height field to keep in step with it.  The height is canonical
 * after every writer call: a root at shift > 0 never has slot 0 as its only
 * used slot (insert builds a root just tall enough; delete shrinks it).
 *
 *   root->rnode ─► node shift 12  [0][1]...[63]          (height 3: indices
 *                       │   │                              below 2^18)
 *                  node shift 6 ... [k] ...
 *                                    │
 *                               leaf shift 0  [entry][NULL][entry] ...
 *
 * Each node also keeps, for the writer only, its parent, its offset in the
 * parent and its count of used slots; and for everyone one bitmap per tag:
 * bit i of a leaf's bitmap says slot i's entry carries the tag; bit i of an
 * inner node's bitmap is set iff child i's bitmap is not zero.  The root's
 * bitmap is therefore the tree's summary (lpc_radix_tagged).
 *
 * Who writes what
 * ---------------
 * Structural writers (serialised by the caller's index lock) store to the
 * root pointer, inner nodes' slots, counts and bitmaps, and parent/offset.
 * A leaf's slots, count and bitmaps are written only under the leaf's own
 * lock (`lock`, bit RADIX_LEAF_LOCKED), by a structural writer (which takes
 * it after the index lock: index lock -> leaf lock, cache/cache.h) or by a
 * fast insert or delete (FI, FD below), which holds no index lock.  Readers
 * never read parent or offset, so those are plain fields; count is atomic
 * only because lpc_radix_count reads it as a gauge.  `shift` is written once
 * before a node is published and never again, so it is plain too.
 * RADIX_LEAF_DEAD, in the same word, is set once, under the leaf lock, by
 * the writer whose delete empties the leaf (N2), before N3 unlinks it (or
 * by destroy); it is never cleared (a dead leaf is freed after a grace
 * period and never reused).
 *
 * Memory order of each atomic
 *  - root->rnode and slots, non-NULL stores: release (writer).  Pairs with the
 *    acquire load of the same pointer by a reader (lookup, gang, tag_get), so
 *    a reader that sees a node sees its shift, slots and bitmaps as they were
 *    initialised, and a reader that sees an entry sees what the caller stored
 *    in it before the insert.  (consume would do; compilers make it acquire:
 *    a plain mov on x86, an ldar on arm64.)
 *  - slots, NULL stores: relaxed.  A NULL publishes nothing.
 *  - tag bitmaps: relaxed loads and stores.  Only writers store (no
 *    read-modify-write is needed under the lock); readers take what they see
 *    as a hint that the caller re-checks on the page itself.
 *  - writer's own loads: relaxed; the index lock orders structural writers,
 *    and the leaf lock orders every writer of a leaf.
 *  - leaf lock word: taken with a CAS (acquire), dropped with a store
 *    (release): the usual lock; what one holder wrote to the leaf (slots,
 *    count, bitmaps, DEAD) the next holder sees.  Spins (a holder never
 *    sleeps, makes no call, and holds one leaf), yielding the CPU after a
 *    while so that a preempted holder can finish.
 *
 * Reader protocol (lookup; gang and tag_get walk the same way)
 *  1. Load root->rnode (acquire).  NULL: miss.
 *  2. Read the node's shift; if index >> shift > MASK the index is above the
 *     tree: miss.
 *  3. Load slot (index >> shift) & MASK (acquire).  At a leaf it is the answer;
 *     above, NULL is a miss and a node is descended into with shift reduced by
 *     LPC_RADIX_SHIFT (the child's shift is not read).
 *
 * Writer steps (labels unique in the tree: I for insert, N for delete; the
 * file map's own removal steps are A-C, filemap/lookup.c)
 *  Insert:
 *   I1 Walk down; -EEXIST if the slot is used.  Count the nodes missing (new
 *      roots to grow the height, the path below the last node present) and
 *      allocate them all, or return -ENOMEM with nothing touched.
 *   I2 Fill the new nodes privately: the path down to the leaf with the entry
 *      in it; on a grow, a chain of new roots each with slot 0 pointing at the
 *      one below (the old root at the bottom) and tag bit 0 copied from the
 *      summary below, the topmost holding the new path in its slot k != 0.
 *   I3 Publish with ONE release store: the entry into its leaf slot, or the
 *      new path's top into the last present node's slot, or (empty tree or
 *      grow) the new top node into root->rnode.
 *  Delete (steps N1-N4; yield points LPC_YP_N1..N4 in debug builds):
 *   N1. Clear the entry's tags (leaf bit, then up while a bitmap becomes 0).
 *   N2. Under the leaf lock (taken after the index lock): store NULL in the
 *       leaf slot, count - 1; a count that reaches 0 sets DEAD; unlock.
 *       (N1's leaf bits are cleared under the same hold.)
 *   N3. While a node's count drops to 0: store NULL in its parent's slot (or
 *      in root->rnode) and call_rcu its free.  The node's own slots are all
 *      NULL already and are not touched again.
 *   N4. Shrink: while the root has shift > 0 and slot 0 is its only used slot,
 *      store that child in root->rnode (release) and call_rcu the old root.
 *      The old root is left as it was: slot 0 still points at the child.
 *
 * Fast writers: one leaf, its lock, no index lock (yield points FI2, FD2)
 *  Fast insert (lpc_radix_insert_fast; a miss, filemap/miss.c):
 *   FI1 Inside an RCU read section, reader steps 1-3 down to the leaf that
 *       covers index.  None (a node missing): -EAGAIN, the caller inserts
 *       under the index lock (I1-I3 allocate what is missing).
 *   FI2 Lock the leaf (acquire).
 *   FI3 DEAD: unlock, -EAGAIN (the leaf was emptied and is unlinked or about
 *       to be; an entry put there would be lost with it).  Slot used: unlock,
 *       -EEXIST (the leaf is live, so its slot is the tree's: the same answer
 *       the slow insert gives).
 *   FI4 count + 1, store the entry in the slot (release: as I3, the one store
 *       that publishes it), unlock (release).
 *  Fast delete (lpc_radix_leaf_lock, lpc_radix_leaf_delete, unlock;
 *  lpc_invalidate and a failed read, filemap/remove.c):
 *   FD1 As FI1-FI3: the leaf, locked and not DEAD, or NULL (go slow).  The
 *       caller reads the slot (lpc_radix_leaf_entry) and decides under the
 *       lock: nobody else writes the leaf's slots while it holds it.
 *   FD2 Refuse (false, nothing done) if the slot carries a tag (N1 might
 *       have to clear a parent's bit) or the leaf's count is 1 and the tree
 *       keeps LPC_RADIX_KEEP empty leaves already (N3 would have to unlink
 *       it): both are structural, under the index lock.  Otherwise store
 *       NULL in the slot (relaxed, as N2), count - 1; a count that reaches 0
 *       keeps the leaf (KL1).
 *   FD3 Unlock (release).
 *  Why no structural change can be missed: a structural writer changes only
 *  inner nodes and the root (which fast writers never write), and any leaf
 *  it writes it writes under that leaf's lock.  The leaf a fast writer holds
 *  at FI3/FD1 not DEAD is linked in the tree at that moment (a leaf leaves
 *  the tree only through N3, after DEAD, or destroy, which sets DEAD first
 *  and runs with no other user; grow and shrink move a leaf under a new or
 *  no parent but keep it reachable), and it stays linked while the lock is
 *  held (N3 needs count 0, so it follows a delete under the same lock), so
 *  the fast write is a write to the tree.  The two interleavings that
 *  matter, in tests/model/leaf_lock.pml:
 *  - a fast insert that reached the leaf (FI1) while a delete emptied it:
 *    FI2 after N2 sees DEAD and goes slow, where the index lock waits for N3
 *    and I1 builds a new leaf; FI2 before N2 fills the slot first, and N2 of
 *    the other entry leaves count 1: no unlink (spin: BUG_NO_DEAD_CHECK).
 *  - DEAD must be set in the same hold as the count that reaches 0: set in a
 *    later hold (or after the unlink), an insert between the two holds puts
 *    its entry into a leaf that N3 then unlinks (spin: BUG_DEAD_LATE).
 *  Lookups are unaffected: a slot is still published with one release store
 *  and emptied with one NULL store, whoever makes it.
 *
 * Kept leaves (KL1-KL3; root->kept).  Before, FD2 refused a leaf's last
 *  entry, so lpc_invalidate of a range (seed 002's loop: invalidate 4 MiB,
 *  read it again) deleted each leaf's last page under the index lock (N3
 *  unlinks the leaf, call_rcu frees it), and the reads that came back made
 *  it again under the index lock (I1-I3, a malloc): per 64 pages, two
 *  takes of the lock that two threads' misses on one file share, and a
 *  free whose call_rcu worker's grace period IPIs every other CPU.  Now:
 *   KL1 FD2 may take a leaf's last entry while root->kept is below
 *       LPC_RADIX_KEEP (relaxed load: a bound, not a count that must be
 *       exact); the hold that makes the count 0 adds one to kept and
 *       leaves the leaf linked, and not DEAD.  FD2's answer is read once
 *       (lpc_radix_leaf_delete_ok) and acted on without a second look
 *       (lpc_radix_leaf_take): another leaf's KL1 may reach the bound in
 *       between, and a take that then refused would leave a page its
 *       caller froze and freed in the slot (revkl's kl_inval_uaf).
 *   KL2 The hold that puts an entry into a leaf whose count is 0 (FI4, or
 *       I3 into the leaf I1 found) takes one from kept.
 *   KL3 lpc_radix_destroy sets kept to 0 with the nodes.
 *  Rule RADIX-KEPT (debug builds, at destroy, where nobody else writes the
 *  tree): kept is the number of linked leaves whose count is 0.  Why no
 *  entry is lost: a kept leaf is live (not DEAD) and stays linked, since
 *  only N2-N3 unlink a leaf and N2 needs an entry to delete; so a fast
 *  insert that reaches it (FI3) writes into the tree, a slow one (I1) finds
 *  it and fills it, and a fast delete of its other slots never happens (it
 *  has none).  It counts as a used slot of its parent, so N3 frees no node
 *  above it and N4 shrinks no level it needs: the height stays canonical
 *  in the sense above (the root's used slots), the path is just longer
 *  lived.  Checked in tests/model/leaf_lock.pml (a kept leaf refilled by
 *  either insert; broken variants: the keep counted nowhere,
 *  BUG_KEPT_UNCOUNTED; the kept leaf marked DEAD as N2 marks an emptied
 *  one, BUG_KEPT_DEAD).
 *
 * The interleavings with a lockless reader, and why each is safe
 *  - Grow (I3) against reader step 1.  A reader that loaded the old root walks
 *    a node that is still in the tree (slot 0 of the new chain), at its old
 *    shift: indices in its range resolve as before; indices above it are a
 *    miss, which is right for a reader ordered before the insert.  A reader
 *    that loaded the new root sees the whole new chain and path, because they
 *    were filled before the one release store.
 *  - Shrink (N4) against reader steps 1-3.  A reader holding the old root
 *    finds slot 0 still pointing at the live child, so every index that can
 *    hold an entry resolves as in the tree now; the other slots are NULL,
 *    which is right because no entry exists there (a later grow does not put
 *    anything into the old root: a reader that still misses through it saw the
 *    tree before that insert).  The old root is freed only after a grace
 *    period, so the reader's section keeps it valid.
 *  - Delete (N2, N3) against reader step 3.  A reader that loaded a node before
 *    it was unlinked finds its slots NULL (miss, ordered after the delete) or,
 *    if it read the leaf slot before N2, the entry (ordered before the delete).
 *    The node is never reused before a grace period, so it is never a node of
 *    another place in the tree (no ABA on a slot address).  A caller that
 *    re-loads the slot address returned by lookup on a detached leaf sees NULL
 *    for ever, even after the index is inserted again (into a new node): that
 *    miss is ordered between the delete and the re-insert, and a caller that
 *    wants the current entry retries from the root, never re-reads the slot
 *    in a loop.
 *  - Insert into an unlinked node cannot happen: a structural writer only
 *    reaches nodes from the root under the index lock, and a fast one checks
 *    DEAD under the leaf lock (FI3).
 *  - Tags: a reader may see a tag bit without the entry (slot already NULL)
 *    or an entry whose bit it missed; lpc_radix_gang_tag skips NULL slots,
 *    and a tag is only ever a hint to a lockless reader.  Under the index lock the bits
 *    are exact.
 *
 * Node memory: 64-byte aligned (posix_memalign), freed with call_rcu (urcu
 * memb flavour, through core/rcu.h so the TSan build sees the grace period),
 * so callers of the writer functions are registered RCU threads.
 * lpc_radix_destroy frees with call_rcu too; lpc_rcu_barrier() waits for
 * those frees.
 */
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/rcu.h"
#include "index/radix.h"

_Static_assert(LPC_RADIX_SHIFT >= 1 && LPC_RADIX_SHIFT <= 6,
	       "a tag bitmap is one uint64_t per node");

/* The largest shift a node can have: the top level may use fewer slots. */
#define RADIX_MAX_SHIFT ((63 / LPC_RADIX_SHIFT) * LPC_RADIX_SHIFT)
#define RADIX_LEVELS (RADIX_MAX_SHIFT / LPC_RADIX_SHIFT + 1)

_Static_assert(offsetof(struct lpc_radix_node, slots) == 0,
	       "lpc_radix_leaf_sync finds a leaf from its slot");

#define RADIX_LEAF_LOCKED 1u
#define RADIX_LEAF_DEAD 2u

#if defined(__x86_64__) || defined(__i386__)
#define radix_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define radix_relax() __asm__ __volatile__("yield" ::: "memory")
#else
#define radix_relax() ((void)0)
#endif

static inline unsigned radix_offset(uint64_t index, unsigned shift)
{
	return (index >> shift) & LPC_RADIX_MASK;
}

/* The index bits that a node at shift covers, as a mask. */
static inline uint64_t radix_span_mask(unsigned shift)
{
	if (shift + LPC_RADIX_SHIFT >= 64)
		return UINT64_MAX;
	return ((uint64_t)LPC_RADIX_SLOTS << shift) - 1;
}

/* The smallest root shift that can hold index. */
static unsigned radix_shift_for(uint64_t index)
{
	unsigned shift = 0;

	while (shift < RADIX_MAX_SHIFT && (index >> shift) > LPC_RADIX_MASK)
		shift += LPC_RADIX_SHIFT;
	return shift;
}

/* The leaf lock (see "leaf lock word" above). */
static void radix_leaf_lock_raw(struct lpc_radix_node *leaf)
{
	unsigned spins = 0;

	for (;;) {
		uint32_t v = atomic_load_explicit(&leaf->lock, memory_order_relaxed);

		if (!(v & RADIX_LEAF_LOCKED) &&
		    atomic_compare_exchange_weak_explicit(&leaf->lock, &v, v | RADIX_LEAF_LOCKED,
							  memory_order_acquire,
							  memory_order_relaxed))
			return;
		if (++spins < 128) {
			radix_relax();
		} else {
			spins = 0;
			sched_yield(); /* a preempted holder: let it run */
		}
	}
}

static inline uint16_t radix_count(const struct lpc_radix_node *node)
{
	return atomic_load_explicit(&((struct lpc_radix_node *)node)->count, memory_order_relaxed);
}

static inline void radix_count_add(struct lpc_radix_node *node, int d)
{
	atomic_store_explicit(&node->count, (uint16_t)(radix_count(node) + d), memory_order_relaxed);
}

/* Drops the leaf lock.  Rule RADIX-LEAF-COUNT: a leaf's count is the number
 * of its used slots whenever nobody holds its lock, and a DEAD leaf has
 * none (an entry put into a dead leaf is lost with it: FI3). */
static void radix_leaf_unlock_raw(struct lpc_radix_node *leaf)
{
	uint32_t v = atomic_load_explicit(&leaf->lock, memory_order_relaxed);
#if LPC_DEBUG
	unsigned used = 0;

	for (unsigned i = 0; i < LPC_RADIX_SLOTS; i++)
		used += atomic_load_explicit(&leaf->slots[i], memory_order_relaxed) != NULL;
	lpc_debug_check(used == radix_count(leaf) && (!(v & RADIX_LEAF_DEAD) || !used),
			"RADIX-LEAF-COUNT", NULL,
			"leaf %p: count %u, %u slots used%s", (void *)leaf, radix_count(leaf),
			used, v & RADIX_LEAF_DEAD ? ", dead" : "");
#endif
	atomic_store_explicit(&leaf->lock, v & ~RADIX_LEAF_LOCKED, memory_order_release);
}

/* KL2: a kept leaf gets an entry again.  Context: leaf locked, live. */
static inline void radix_kept_refill(struct lpc_radix_root *root, struct lpc_radix_node *leaf)
{
	if (!radix_count(leaf))
		atomic_fetch_sub_explicit(&root->kept, 1, memory_order_relaxed);
}

static struct lpc_radix_node *radix_node_alloc(void)
{
	void *p;

	if (posix_memalign(&p, 64, sizeof(struct lpc_radix_node)))
		return NULL;
	/* All-zero is NULL slots and empty bitmaps; not yet visible to anyone. */
	memset(p, 0, sizeof(struct lpc_radix_node));
	return p;
}

static void radix_node_free_cb(struct rcu_head *head)
{
	lpc_rcu_callback_enter(head);
	free(caa_container_of(head, struct lpc_radix_node, rcu));
}

/* Context: writer; node is unreachable from the root already. */
static void radix_node_free(struct lpc_radix_root *root, struct lpc_radix_node *node)
{
	atomic_store_explicit(&root->nodes,
			      atomic_load_explicit(&root->nodes, memory_order_relaxed) - 1,
			      memory_order_relaxed);
	lpc_call_rcu(&node->rcu, radix_node_free_cb);
}

void lpc_radix_init(struct lpc_radix_root *root)
{
	atomic_init(&root->rnode, NULL);
	atomic_store_explicit(&root->nodes, 0, memory_order_relaxed);
	atomic_store_explicit(&root->kept, 0, memory_order_relaxed);
}

static void radix_destroy_node(struct lpc_radix_root *root, struct lpc_radix_node *node)
{
	unsigned i;

	if (!node->shift)
		atomic_store_explicit(&node->lock, RADIX_LEAF_DEAD, memory_order_relaxed);
	if (node->shift) {
		for (i = 0; i < LPC_RADIX_SLOTS; i++) {
			struct lpc_radix_node *child = atomic_load_explicit(
				&node->slots[i], memory_order_relaxed);
			if (child)
				radix_destroy_node(root, child);
		}
	}
	radix_node_free(root, node);
}

#if LPC_DEBUG
/* Rule RADIX-KEPT's count: the linked leaves whose count is 0. */
static uint64_t radix_count_kept(const struct lpc_radix_node *node)
{
	uint64_t n = 0;

	if (!node->shift)
		return !atomic_load_explicit(&((struct lpc_radix_node *)node)->count,
					     memory_order_relaxed);
	for (unsigned i = 0; i < LPC_RADIX_SLOTS; i++) {
		const struct lpc_radix_node *child = atomic_load_explicit(
			&((struct lpc_radix_node *)node)->slots[i], memory_order_relaxed);

		if (child)
			n += radix_count_kept(child);
	}
	return n;
}
#endif

void lpc_radix_destroy(struct lpc_radix_root *root)
{
	struct lpc_radix_node *node =
		atomic_load_explicit(&root->rnode, memory_order_relaxed);

	if (!node)
		return;
#if LPC_DEBUG
	{
		uint64_t empty = radix_count_kept(node);
		uint32_t kept = atomic_load_explicit(&root->kept, memory_order_relaxed);

		lpc_debug_check(empty == kept, "RADIX-KEPT", NULL,
				"tree %p: %llu empty leaves linked, kept %u", (void *)root,
				(unsigned long long)empty, kept);
	}
#endif
	atomic_store_explicit(&root->rnode, NULL, memory_order_relaxed);
	/* Readers still in a section walk the old nodes: slots left as they are. */
	radix_destroy_node(root, node);
	atomic_store_explicit(&root->kept, 0, memory_order_relaxed);	/* KL3 */
}

/*
 * Finds the leaf slot of index for a writer.
 * Return: the slot address (which may hold NULL) with *leafp its leaf, or
 * NULL if no leaf covers index.  Context: writer.
 */
static void *_Atomic *radix_slot_locked(const struct lpc_radix_root *root,
					 uint64_t index,
					 struct lpc_radix_node **leafp)
{
	struct lpc_radix_node *node;

	node = atomic_load_explicit(&root->rnode, memory_order_relaxed);
	if (!node || (index >> node->shift) > LPC_RADIX_MASK)
		return NULL;
	while (node->shift) {
		node = atomic_load_explicit(
			&node->slots[radix_offset(index, node->shift)],
			memory_order_relaxed);
		if (!node)
			return NULL;
	}
	*leafp = node;
	return &node->slots[radix_offset(index, 0)];
}

/* Links a private child into a private (or about to be published) parent. */
static void radix_link_private(struct lpc_radix_node *parent, unsigned offset,
			       struct lpc_radix_node *child)
{
	atomic_store_explicit(&parent->slots[offset], child,
			      memory_order_relaxed);
	radix_count_add(parent, 1);
	child->parent = parent;
	child->offset = offset;
}

int lpc_radix_insert(struct lpc_radix_root *root, uint64_t index, void *entry)
{
	struct lpc_radix_node *spare[2 * RADIX_LEVELS];
	struct lpc_radix_node *old, *node, *parent, *top, *path, *n;
	unsigned nr = 0, used = 0, i, off, top_shift = 0, path_shift = 0;
	bool has_path = true;

	lpc_debug_check(entry && !((uintptr_t)entry & 1), "RADIX-ENTRY", NULL,
			"insert of entry %p: NULL or low bit set", entry);

	/* I1: find the slot or what is missing, and allocate it all. */
	old = atomic_load_explicit(&root->rnode, memory_order_relaxed);
	parent = NULL;
	if (old && (index >> old->shift) <= LPC_RADIX_MASK) {
		node = old;
		for (;;) {
			void *e = atomic_load_explicit(
				&node->slots[radix_offset(index, node->shift)],
				memory_order_relaxed);
			if (!node->shift) {
				if (e)
					return -EEXIST;
				has_path = false;
				break;
			}
			if (!e)
				break;
			node = e;
		}
		parent = node;
		if (has_path) {
			path_shift = node->shift - LPC_RADIX_SHIFT;
			nr = path_shift / LPC_RADIX_SHIFT + 1;
		}
	} else {
		top_shift = radix_shift_for(index);
		if (old) {
			/* Grow: roots at old->shift + SHIFT .. top_shift. */
			nr = (top_shift - old->shift) / LPC_RADIX_SHIFT;
			path_shift = top_shift - LPC_RADIX_SHIFT;
			nr += path_shift / LPC_RADIX_SHIFT + 1;
		} else {
			path_shift = top_shift;
			nr = top_shift / LPC_RADIX_SHIFT + 1;
		}
	}
#ifdef LPC_RADIX_BREAK_NODE_COUNT
	/* Only tests/debug/test_debug_radix_nodes.c: miscount on purpose, so
	 * that the RADIX-NODES-USED check below is shown to fire. */
	nr++;
#endif
	for (i = 0; i < nr; i++) {
		spare[i] = radix_node_alloc();
		if (!spare[i]) {
			while (i--)
				free(spare[i]);
			return -ENOMEM;
		}
	}

	/* I2: fill the new nodes; nothing is visible to readers yet. */
	top = NULL;
	if (old && !parent) {
		node = old;
		for (;;) {
			n = spare[used++];
			n->shift = node->shift + LPC_RADIX_SHIFT;
			radix_link_private(n, 0, node);
			for (i = 0; i < LPC_RADIX_NTAGS; i++)
				if (atomic_load_explicit(&node->tags[i],
							 memory_order_relaxed))
					atomic_store_explicit(&n->tags[i], 1,
							      memory_order_relaxed);
			node = n;
			if (n->shift == top_shift)
				break;
		}
		top = node;
		parent = node;
	}
	path = NULL;
	node = NULL;
	if (has_path) {
		unsigned shift = path_shift;

		for (;;) {
			n = spare[used++];
			n->shift = shift;
			if (node)
				radix_link_private(node, radix_offset(index, node->shift), n);
			else
				path = n;
			node = n;
			if (!shift)
				break;
			shift -= LPC_RADIX_SHIFT;
		}
		/* node is the new leaf. */
		atomic_store_explicit(&node->slots[radix_offset(index, 0)], entry,
				      memory_order_relaxed);
		atomic_store_explicit(&node->count, 1, memory_order_relaxed);
	}
	lpc_debug_check(used == nr, "RADIX-NODES-USED", NULL,
			"insert allocated %u nodes and used %u", nr, used);
	atomic_store_explicit(&root->nodes,
			      atomic_load_explicit(&root->nodes, memory_order_relaxed) + used,
			      memory_order_relaxed);

	/* I3: publish: one release store makes the insert visible. */
	if (!has_path) {
		/* The leaf exists: its slot is written under its lock, and a
		 * fast insert (FI4) may have filled it since I1 looked. */
		off = radix_offset(index, 0);
		radix_leaf_lock_raw(parent);
		if (atomic_load_explicit(&parent->slots[off], memory_order_relaxed)) {
			radix_leaf_unlock_raw(parent);
			return -EEXIST;
		}
		radix_kept_refill(root, parent);			/* KL2 */
		radix_count_add(parent, 1);
		atomic_store_explicit(&parent->slots[off], entry,
				      memory_order_release);
		radix_leaf_unlock_raw(parent);
	} else if (parent) {
		off = radix_offset(index, parent->shift);
		radix_count_add(parent, 1);
		path->parent = parent;
		path->offset = off;
		atomic_store_explicit(&parent->slots[off], path,
				      memory_order_release);
	} else {
		top = path; /* empty tree: the path is the whole tree */
	}
	if (top)
		atomic_store_explicit(&root->rnode, top, memory_order_release);
	return 0;
}

/* Sets tag on slot offset of node and up the tree.  Context: writer. */
static void radix_tag_set_node(struct lpc_radix_node *node, unsigned offset,
			       unsigned tag)
{
	while (node) {
		uint64_t bits = atomic_load_explicit(&node->tags[tag],
						     memory_order_relaxed);
		uint64_t bit = (uint64_t)1 << offset;

		if (bits & bit)
			return; /* set here, so set all the way up */
		atomic_store_explicit(&node->tags[tag], bits | bit,
				      memory_order_relaxed);
		offset = node->offset;
		node = node->parent;
	}
}

/* Clears tag on slot offset of node, and up while a bitmap becomes zero. */
static void radix_tag_clear_node(struct lpc_radix_node *node, unsigned offset,
				 unsigned tag)
{
	while (node) {
		uint64_t bits = atomic_load_explicit(&node->tags[tag],
						     memory_order_relaxed);
		uint64_t bit = (uint64_t)1 << offset;

		if (!(bits & bit))
			return;
		bits &= ~bit;
		atomic_store_explicit(&node->tags[tag], bits,
				      memory_order_relaxed);
		if (bits)
			return;
		offset = node->offset;
		node = node->parent;
	}
}

/* N4: lower the height while the root uses only slot 0. */
static void radix_shrink(struct lpc_radix_root *root)
{
	struct lpc_radix_node *node, *child;

	node = atomic_load_explicit(&root->rnode, memory_order_relaxed);
	while (node && node->shift && radix_count(node) == 1) {
		child = atomic_load_explicit(&node->slots[0],
					     memory_order_relaxed);
		if (!child)
			break;
		child->parent = NULL;
		child->offset = 0;
		/* Release: the child was filled by earlier writers under the
		 * lock; a reader acquiring it from the root must see that. */
		atomic_store_explicit(&root->rnode, child, memory_order_release);
		/* The old root keeps slot 0 (readers may be on it). */
		radix_node_free(root, node);
		node = child;
	}
}

/* Steps N1-N4 for the entry in slot offset of leaf, which the caller has
 * locked (and this unlocks).  Context: writer. */
static void radix_delete_slot(struct lpc_radix_root *root,
			      struct lpc_radix_node *leaf, unsigned offset)
{
	struct lpc_radix_node *node, *parent;
	bool emptied;
	unsigned i;

	lpc_yield_point(LPC_YP_N1);
	for (i = 0; i < LPC_RADIX_NTAGS; i++)
		radix_tag_clear_node(leaf, offset, i);			/* N1 */
	lpc_yield_point(LPC_YP_N2);
	atomic_store_explicit(&leaf->slots[offset], NULL, memory_order_relaxed); /* N2 */
	radix_count_add(leaf, -1);
	emptied = !radix_count(leaf);
	/* In the hold that empties it: no fast insert can come in between
	 * (FI3; spin: BUG_DEAD_LATE). */
	if (emptied)
		atomic_store_explicit(&leaf->lock, RADIX_LEAF_LOCKED | RADIX_LEAF_DEAD,
				      memory_order_relaxed);
	radix_leaf_unlock_raw(leaf);
	if (!emptied)
		goto shrink;
	node = leaf;
	while (!radix_count(node)) {					/* N3 */
		lpc_yield_point(LPC_YP_N3);
		parent = node->parent;
		if (!parent) {
			atomic_store_explicit(&root->rnode, NULL,
					      memory_order_relaxed);
			radix_node_free(root, node);
			return;
		}
		atomic_store_explicit(&parent->slots[node->offset], NULL,
				      memory_order_relaxed);
		radix_count_add(parent, -1);
		radix_node_free(root, node);
		node = parent;
	}
shrink:
	lpc_yield_point(LPC_YP_N4);
	radix_shrink(root);						/* N4 */
}

void *lpc_radix_delete(struct lpc_radix_root *root, uint64_t index)
{
	struct lpc_radix_node *leaf;
	void *_Atomic *slot = radix_slot_locked(root, index, &leaf);
	void *entry;

	if (!slot)
		return NULL;
	radix_leaf_lock_raw(leaf);
	entry = atomic_load_explicit(slot, memory_order_relaxed);
	if (entry)
		radix_delete_slot(root, leaf, radix_offset(index, 0));
	else
		radix_leaf_unlock_raw(leaf);
	return entry;
}

bool lpc_radix_delete_if(struct lpc_radix_root *root, uint64_t index, void *old)
{
	struct lpc_radix_node *leaf;
	void *_Atomic *slot = radix_slot_locked(root, index, &leaf);

	if (!slot || !old)
		return false;
	radix_leaf_lock_raw(leaf);
	if (atomic_load_explicit(slot, memory_order_relaxed) != old) {
		radix_leaf_unlock_raw(leaf);
		return false;
	}
	radix_delete_slot(root, leaf, radix_offset(index, 0));
	return true;
}

/* FI1/FD1: the leaf that covers index, by reader steps 1-3, or NULL. */
static struct lpc_radix_node *radix_leaf_find(struct lpc_radix_root *root, uint64_t index)
{
	struct lpc_radix_node *node = atomic_load_explicit(&root->rnode, memory_order_acquire);
	unsigned shift;

	if (!node)
		return NULL;
	shift = node->shift;
	if ((index >> shift) > LPC_RADIX_MASK)
		return NULL;
	return lpc_radix_descend(node, index, shift);
}

int lpc_radix_insert_fast(struct lpc_radix_root *root, uint64_t index, void *entry)
{
	struct lpc_radix_node *leaf;
	void *_Atomic *slot;

	lpc_debug_check(entry && !((uintptr_t)entry & 1), "RADIX-ENTRY", NULL,
			"insert of entry %p: NULL or low bit set", entry);
	leaf = radix_leaf_find(root, index);				/* FI1 */
	if (!leaf)
		return -EAGAIN;
	lpc_yield_point(LPC_YP_FI2);
	radix_leaf_lock_raw(leaf);					/* FI2 */
	if (atomic_load_explicit(&leaf->lock, memory_order_relaxed) & RADIX_LEAF_DEAD) { /* FI3 */
		radix_leaf_unlock_raw(leaf);
		return -EAGAIN;
	}
	slot = &leaf->slots[radix_offset(index, 0)];
	if (atomic_load_explicit(slot, memory_order_relaxed)) {
		radix_leaf_unlock_raw(leaf);
		return -EEXIST;
	}
	radix_kept_refill(root, leaf);					/* KL2 */
	radix_count_add(leaf, 1);					/* FI4 */
	atomic_store_explicit(slot, entry, memory_order_release);
	radix_leaf_unlock_raw(leaf);
	return 0;
}

struct lpc_radix_node *lpc_radix_leaf_lock(struct lpc_radix_root *root, uint64_t index)
{
	struct lpc_radix_node *leaf = radix_leaf_find(root, index);	/* FD1 */

	if (!leaf)
		return NULL;
	lpc_yield_point(LPC_YP_FD2);
	radix_leaf_lock_raw(leaf);
	if (atomic_load_explicit(&leaf->lock, memory_order_relaxed) & RADIX_LEAF_DEAD) {
		radix_leaf_unlock_raw(leaf);
		return NULL;
	}
	return leaf;
}

void lpc_radix_leaf_unlock(struct lpc_radix_node *leaf)
{
	radix_leaf_unlock_raw(leaf);					/* FD3 */
}

bool lpc_radix_leaf_delete_ok(const struct lpc_radix_root *root,
			      const struct lpc_radix_node *leaf, uint64_t index)
{
	struct lpc_radix_node *l = (struct lpc_radix_node *)leaf;
	unsigned off = radix_offset(index, 0);

	if (radix_count(l) == 1 &&					/* FD2 */
	    atomic_load_explicit(&((struct lpc_radix_root *)root)->kept, memory_order_relaxed) >=
		    LPC_RADIX_KEEP)
		return false;
	for (unsigned i = 0; i < LPC_RADIX_NTAGS; i++)
		if (atomic_load_explicit(&l->tags[i], memory_order_relaxed) >> off & 1)
			return false;
	return true;
}

void lpc_radix_leaf_take(struct lpc_radix_root *root, struct lpc_radix_node *leaf,
			 uint64_t index)
{
	unsigned off = radix_offset(index, 0);

	lpc_debug_check(atomic_load_explicit(&leaf->slots[off], memory_order_relaxed),
			"RADIX-ENTRY", NULL, "fast delete of an empty slot");
#if LPC_DEBUG
	for (unsigned i = 0; i < LPC_RADIX_NTAGS; i++)
		lpc_debug_check(!(atomic_load_explicit(&leaf->tags[i], memory_order_relaxed) >> off & 1),
				"RADIX-TAG", NULL,
				"fast delete of slot %u, tagged %u: lpc_radix_leaf_delete_ok refuses it",
				off, i);
#endif
	atomic_store_explicit(&leaf->slots[off], NULL, memory_order_relaxed);
#ifndef LPC_RADIX_BREAK_LEAF_COUNT /* tests/debug: RADIX-LEAF-COUNT shown to fire */
	radix_count_add(leaf, -1);
#endif
#ifndef LPC_RADIX_BREAK_KEPT /* tests/debug: RADIX-KEPT shown to fire */
	if (!radix_count(leaf))						/* KL1 */
		atomic_fetch_add_explicit(&root->kept, 1, memory_order_relaxed);
#endif
}

bool lpc_radix_leaf_delete(struct lpc_radix_root *root, struct lpc_radix_node *leaf,
			   uint64_t index)
{
	if (!lpc_radix_leaf_delete_ok(root, leaf, index))
		return false;
	lpc_radix_leaf_take(root, leaf, index);
	return true;
}

void lpc_radix_leaf_sync(void *_Atomic const *slot, uint64_t index)
{
	struct lpc_radix_node *leaf =
		(struct lpc_radix_node *)(uintptr_t)(slot - (index & LPC_RADIX_MASK));

	radix_leaf_lock_raw(leaf);
	radix_leaf_unlock_raw(leaf);
}

static uint64_t radix_count_node(const struct lpc_radix_node *node)
{
	uint64_t n = 0;

	if (!node->shift)
		return radix_count(node);
	for (unsigned i = 0; i < LPC_RADIX_SLOTS; i++) {
		const struct lpc_radix_node *child = atomic_load_explicit(
			&((struct lpc_radix_node *)node)->slots[i], memory_order_acquire);

		if (child)
			n += radix_count_node(child);
	}
	return n;
}

uint64_t lpc_radix_count(const struct lpc_radix_root *root)
{
	const struct lpc_radix_node *node =
		atomic_load_explicit(&((struct lpc_radix_root *)root)->rnode, memory_order_acquire);

	return node ? radix_count_node(node) : 0;
}

void lpc_radix_tag_set(struct lpc_radix_root *root, uint64_t index, unsigned tag)
{
	struct lpc_radix_node *leaf;
	void *_Atomic *slot = radix_slot_locked(root, index, &leaf);

	lpc_debug_check(tag < LPC_RADIX_NTAGS, "RADIX-TAG", NULL, "tag %u out of range", tag);
	if (!slot)
		return;
	radix_leaf_lock_raw(leaf); /* a leaf's bitmaps change under its lock */
	if (atomic_load_explicit(slot, memory_order_relaxed))
		radix_tag_set_node(leaf, radix_offset(index, 0), tag);
	radix_leaf_unlock_raw(leaf);
}

void lpc_radix_tag_clear(struct lpc_radix_root *root, uint64_t index,
			 unsigned tag)
{
	struct lpc_radix_node *leaf;
	void *_Atomic *slot = radix_slot_locked(root, index, &leaf);

	lpc_debug_check(tag < LPC_RADIX_NTAGS, "RADIX-TAG", NULL, "tag %u out of range", tag);
	if (!slot)
		return;
	radix_leaf_lock_raw(leaf);
	radix_tag_clear_node(leaf, radix_offset(index, 0), tag);
	radix_leaf_unlock_raw(leaf);
}

bool lpc_radix_tag_get(const struct lpc_radix_root *root, uint64_t index,
		       unsigned tag)
{
	struct lpc_radix_node *node;
	unsigned shift;

	lpc_debug_check(tag < LPC_RADIX_NTAGS, "RADIX-TAG", NULL, "tag %u out of range", tag);
	node = atomic_load_explicit(&root->rnode, memory_order_acquire);
	if (!node)
		return false;
	shift = node->shift;
	if ((index >> shift) > LPC_RADIX_MASK)
		return false;
	for (;;) {
		unsigned off = radix_offset(index, shift);

		if (!(atomic_load_explicit(&node->tags[tag],
					   memory_order_relaxed) >> off & 1))
			return false;
		if (!shift)
			return true;
		node = atomic_load_explicit(&node->slots[off],
					    memory_order_acquire);
		if (!node)
			return false;
		shift -= LPC_RADIX_SHIFT;
	}
}

bool lpc_radix_tagged(const struct lpc_radix_root *root, unsigned tag)
{
	struct lpc_radix_node *node;

	lpc_debug_check(tag < LPC_RADIX_NTAGS, "RADIX-TAG", NULL, "tag %u out of range", tag);
	node = atomic_load_explicit(&root->rnode, memory_order_acquire);
	return node &&
	       atomic_load_explicit(&node->tags[tag], memory_order_relaxed);
}

/*
 * The gang walk: descends from the root to the first used (tag < 0) or tagged
 * slot at or after index, collects a leaf's entries in order, and starts again
 * from the root just past each node it exhausts.  index only grows, so the
 * walk ends even if writers change the tree under a lockless caller.  Reader
 * steps as lookup, plus the relaxed tag loads of lpc_radix_gang_tag.
 * Return: the number of entries stored.  Context: as lpc_radix_gang.
 */
static unsigned radix_gang(const struct lpc_radix_root *root, uint64_t index,
			   int tag, void **entries, uint64_t *indices,
			   unsigned max)
{
	struct lpc_radix_node *node;
	unsigned n = 0, shift, off, o;
	uint64_t next;
	void *e;

	if (!max)
		return 0;
restart:
	node = atomic_load_explicit(&root->rnode, memory_order_acquire);
	if (!node)
		return n;
	shift = node->shift;
	if ((index >> shift) > LPC_RADIX_MASK)
		return n;
	for (;;) {
		off = radix_offset(index, shift);
		e = NULL;
		o = off;
		if (tag >= 0) {
			uint64_t bits = atomic_load_explicit(
				&node->tags[tag], memory_order_relaxed) >> off;

			while (bits) {
				o = off + __builtin_ctzll(bits);
				e = atomic_load_explicit(&node->slots[o],
							 memory_order_acquire);
				if (e)
					break;
				bits &= bits - 1;
			}
		} else {
			for (; o < LPC_RADIX_SLOTS; o++) {
				e = atomic_load_explicit(&node->slots[o],
							 memory_order_acquire);
				if (e)
					break;
			}
		}
		if (!e) {
			/* Nothing more in this node: go past its range. */
			next = (index | radix_span_mask(shift)) + 1;
			if (!next)
				return n; /* past UINT64_MAX */
			index = next;
			goto restart;
		}
		if (o != off)
			index = (index & ~radix_span_mask(shift)) |
				((uint64_t)o << shift);
		if (shift) {
			node = e;
			shift -= LPC_RADIX_SHIFT;
			continue;
		}
		entries[n] = e;
		if (indices)
			indices[n] = index;
		if (++n == max)
			return n;
		if (o == LPC_RADIX_MASK) {
			next = index + 1;
			if (!next)
				return n;
			index = next;
			goto restart;
		}
		index++; /* the next slot of the same leaf */
	}
}

unsigned lpc_radix_gang(const struct lpc_radix_root *root, uint64_t first,
			void **entries, uint64_t *indices, unsigned max)
{
	return radix_gang(root, first, -1, entries, indices, max);
}

unsigned lpc_radix_gang_tag(const struct lpc_radix_root *root, uint64_t first,
			    unsigned tag, void **entries, uint64_t *indices,
			    unsigned max)
{
	lpc_debug_check(tag < LPC_RADIX_NTAGS, "RADIX-TAG", NULL, "tag %u out of range", tag);
	return radix_gang(root, first, (int)tag, entries, indices, max);
}
