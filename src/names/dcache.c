/* SPDX-License-Identifier: MIT */
/*
 * dcache.c - the dentries of a namespace and what they point at.
 *
 * Dentries live in one liburcu RCU hash table (cds_lfht, urcu-memb flavour)
 * keyed by (parent pointer, name).  Walkers look up under RCU with no lock
 * (walk.c); writers (ns->lock) add, replace and remove.  A dentry's inode is
 * an immutable struct ns_inode (stat, access ACL, symlink target) that a
 * writer replaces with one pointer store (release) and frees with call_rcu,
 * so a walker in its read section always reads one whole snapshot.
 *
 * Writer protocol on a dentry (under ns->lock), paired with walk.c's reads:
 *   changing what the name is bound to (positive <-> negative, another
 *   inode, death): seq += 1 (odd, relaxed), the change by release stores,
 *   seq += 1 (even, release).  A walker that read seq before and validates
 *   it after (acquire loads throughout) sees the change or fails.
 *   Refreshing the same binding (same dev, ino and type; attributes maybe
 *   new): one release store of the inode pointer, no seq bump: a walker
 *   reads the old snapshot or the new one, each an answer the kernel gave.
 *   Death: seq odd, dead = 1, unhash, unlink from parent and LRU, seq even,
 *   free after a grace period.  A walker that read the dentry from the hash
 *   checks `dead` after its seq read (as __d_lookup_rcu checks d_unhashed).
 *
 * Bound and eviction: at most max_dentries; beyond, CLOCK over the LRU list
 * evicts leaves (no cached child) whose referenced bit is clear, clearing
 * the bit of those it passes.  The root is never evicted.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "names/names.h"

#define NS_ACL_XATTR "system.posix_acl_access"
#define NS_ACL_VERSION 2

uint64_t ns_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

unsigned long ns_hash(const struct ns_dentry *parent, const char *name, unsigned len)
{
	uint64_t h = 0xcbf29ce484222325ull ^ ((uintptr_t)parent * 0x9e3779b97f4a7c15ull);

	for (unsigned i = 0; i < len; i++) {
		h ^= (unsigned char)name[i];
		h *= 0x100000001b3ull;
	}
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return (unsigned long)h;
}

struct ns_key {
	const struct ns_dentry *parent;
	const char *name;
	unsigned len;
};

static int ns_match(struct cds_lfht_node *node, const void *key)
{
	const struct ns_dentry *d = caa_container_of(node, struct ns_dentry, node);
	const struct ns_key *k = key;

	/* cds_lfht_add published d (a release TSan cannot see in liburcu). */
	lpc_tsan_acquire((void *)d);
	return d->parent == k->parent && d->len == k->len && !memcmp(d->name, k->name, k->len);
}

struct ns_dentry *ns_lookup_rcu(struct lpc_ns *ns, const struct ns_dentry *parent,
				const char *name, unsigned len)
{
	struct ns_key k = { parent, name, len };
	struct cds_lfht_iter it;
	struct cds_lfht_node *node;

	cds_lfht_lookup(ns->ht, ns_hash(parent, name, len), ns_match, &k, &it);
	node = cds_lfht_iter_get_node(&it);
	return node ? caa_container_of(node, struct ns_dentry, node) : NULL;
}

/* ---- ACLs ---- */

struct ns_acl *ns_acl_parse(const void *buf, size_t len)
{
	const unsigned char *b = buf;
	struct ns_acl *acl;
	uint32_t version;
	unsigned n;

	if (len < 4 || (len - 4) % 8)
		return NULL;
	memcpy(&version, b, 4); /* little-endian on disk and here (x86-64, arm64) */
	if (version != NS_ACL_VERSION)
		return NULL;
	n = (unsigned)((len - 4) / 8);
	acl = malloc(sizeof(*acl) + n * sizeof(acl->e[0]));
	if (!acl)
		return NULL;
	acl->n = n;
	for (unsigned i = 0; i < n; i++) {
		memcpy(&acl->e[i].tag, b + 4 + 8 * i, 2);
		memcpy(&acl->e[i].perm, b + 6 + 8 * i, 2);
		memcpy(&acl->e[i].id, b + 8 + 8 * i, 4);
	}
	return acl;
}

/* ---- inodes ---- */

struct ns_inode *ns_inode_negative(uint64_t now)
{
	struct ns_inode *ino = calloc(1, sizeof(*ino));

	if (!ino)
		return NULL;
	ino->negative = true;
	ino->acl_state = NS_ACL_NONE;
	atomic_store_explicit(&ino->stamp, now, memory_order_relaxed);
	return ino;
}

struct ns_inode *ns_inode_fetch(int fd, uint64_t now, int *err)
{
	struct ns_inode *ino = calloc(1, sizeof(*ino));
	char proc[64], buf[4 + 8 * 64];
	ssize_t r;

	*err = 0;
	if (!ino) {
		*err = -ENOMEM;
		return NULL;
	}
	atomic_store_explicit(&ino->stamp, now, memory_order_relaxed);
	if (fstat(fd, &ino->st) != 0)
		goto fail_errno;
	ino->acl_state = NS_ACL_NONE;
	if (S_ISLNK(ino->st.st_mode)) {
		char *t = malloc(NS_PATH_MAX);

		if (!t)
			goto fail_nomem;
		r = readlinkat(fd, "", t, NS_PATH_MAX - 1);
		if (r < 0) {
			free(t);
			goto fail_errno;
		}
		t[r] = 0;
		ino->link = t;
		return ino;
	}
	/* fgetxattr refuses O_PATH descriptors; the magic link does not. */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	r = getxattr(proc, NS_ACL_XATTR, buf, sizeof(buf));
	if (r < 0 && errno == ERANGE) {
		/* More than 64 entries: ask for the size, then read it. */
		ssize_t need = getxattr(proc, NS_ACL_XATTR, NULL, 0);
		char *big = need > 0 ? malloc((size_t)need) : NULL;

		if (!big)
			goto fail_nomem;
		r = getxattr(proc, NS_ACL_XATTR, big, (size_t)need);
		if (r > 0) {
			ino->acl = ns_acl_parse(big, (size_t)r);
			free(big);
			if (!ino->acl)
				goto fail_nomem;
			ino->acl_state = NS_ACL_SET;
			return ino;
		}
		free(big);
	}
	if (r > 0) {
		ino->acl = ns_acl_parse(buf, (size_t)r);
		if (!ino->acl)
			goto fail_nomem;
		ino->acl_state = NS_ACL_SET;
	} else if (r < 0 && errno != ENODATA && errno != EOPNOTSUPP) {
		ino->acl_state = NS_ACL_UNKNOWN; /* the kernel will be asked again */
	}
	return ino;
fail_errno:
	*err = -errno;
	ns_inode_free(ino);
	return NULL;
fail_nomem:
	*err = -ENOMEM;
	ns_inode_free(ino);
	return NULL;
}

void ns_inode_free(struct ns_inode *ino)
{
	if (!ino)
		return;
	free(ino->acl);
	free(ino->link);
	free(ino);
}

static void inode_free_cb(struct rcu_head *head)
{
	lpc_rcu_callback_enter(head);
	ns_inode_free(caa_container_of(head, struct ns_inode, rcu));
}

void ns_inode_free_rcu(struct ns_inode *ino)
{
	if (ino)
		lpc_call_rcu(&ino->rcu, inode_free_cb);
}

/* The same binding: same object (dev, ino, type), or both negative. */
static bool ns_inode_same_identity(const struct ns_inode *a, const struct ns_inode *b)
{
	if (a->negative || b->negative)
		return a->negative == b->negative;
	return a->st.st_dev == b->st.st_dev && a->st.st_ino == b->st.st_ino &&
	       (a->st.st_mode & S_IFMT) == (b->st.st_mode & S_IFMT);
}

/* Everything a walk or a stat answers from is equal. */
bool ns_inode_same(const struct ns_inode *a, const struct ns_inode *b)
{
	if (!ns_inode_same_identity(a, b))
		return false;
	if (a->negative)
		return true;
	if (a->st.st_mode != b->st.st_mode || a->st.st_uid != b->st.st_uid ||
	    a->st.st_gid != b->st.st_gid || a->st.st_size != b->st.st_size ||
	    a->st.st_nlink != b->st.st_nlink || a->st.st_blocks != b->st.st_blocks ||
	    a->st.st_rdev != b->st.st_rdev ||
	    a->st.st_mtim.tv_sec != b->st.st_mtim.tv_sec ||
	    a->st.st_mtim.tv_nsec != b->st.st_mtim.tv_nsec ||
	    a->st.st_ctim.tv_sec != b->st.st_ctim.tv_sec ||
	    a->st.st_ctim.tv_nsec != b->st.st_ctim.tv_nsec || a->acl_state != b->acl_state)
		return false;
	if (a->acl_state == NS_ACL_SET &&
	    (a->acl->n != b->acl->n || memcmp(a->acl->e, b->acl->e, a->acl->n * sizeof(a->acl->e[0]))))
		return false;
	if (!a->link != !b->link || (a->link && strcmp(a->link, b->link)))
		return false;
	return true;
}

/* ---- dentries ---- */

static void dentry_free_cb(struct rcu_head *head)
{
	struct ns_dentry *d = caa_container_of(head, struct ns_dentry, rcu);

	lpc_rcu_callback_enter(head);
	ns_inode_free(atomic_load_explicit(&d->inode, memory_order_relaxed));
	free(d);
}

static struct ns_dentry *dentry_alloc(struct ns_dentry *parent, const char *name, unsigned len)
{
	struct ns_dentry *d = calloc(1, sizeof(*d) + len + 1);

	if (!d)
		return NULL;
	d->parent = parent;
	d->len = len;
	memcpy(d->name, name, len);
	d->hash = ns_hash(parent, name, len);
	CDS_INIT_LIST_HEAD(&d->children);
	CDS_INIT_LIST_HEAD(&d->sibling);
	CDS_INIT_LIST_HEAD(&d->lru);
	cds_lfht_node_init(&d->node);
	return d;
}

/* seq odd: a writer is changing d's binding.  Context: ns->lock. */
static void seq_begin(struct ns_dentry *d)
{
	uint32_t s = atomic_load_explicit(&d->seq, memory_order_relaxed);

	lpc_debug_check(!(s & 1), "NS-SEQ-NESTED", NULL, "dentry %.*s seq %u odd at begin",
			(int)d->len, d->name, s);
	/* The change's stores are release stores (inode, dead) or liburcu
	 * RMWs: each orders this odd value before itself. */
	atomic_store_explicit(&d->seq, s + 1, memory_order_relaxed);
}

static void seq_end(struct ns_dentry *d)
{
	uint32_t s = atomic_load_explicit(&d->seq, memory_order_relaxed);

	atomic_store_explicit(&d->seq, s + 1, memory_order_release);
}

void ns_set_inode_locked(struct lpc_ns *ns, struct ns_dentry *d, struct ns_inode *ino)
{
	struct ns_inode *old = atomic_load_explicit(&d->inode, memory_order_relaxed);

	if (old && ns_inode_same_identity(old, ino)) {
		/* A refresh: one snapshot for another. */
		atomic_store_explicit(&d->inode, ino, memory_order_release);
	} else {
		/* Another binding: the subtree cached under the old one goes. */
		struct ns_dentry *c, *tmp;

		seq_begin(d);
		cds_list_for_each_entry_safe(c, tmp, &d->children, sibling)
			ns_drop_locked(ns, c);
		atomic_store_explicit(&d->inode, ino, memory_order_release);
		seq_end(d);
	}
	ns_inode_free_rcu(old);
}

void ns_stale_locked(struct lpc_ns *ns, struct ns_dentry *d)
{
	struct ns_inode *old = atomic_load_explicit(&d->inode, memory_order_relaxed);
	struct ns_inode *ino = malloc(sizeof(*ino));

	if (!ino || !old) {
		/* No memory for the copy: dropping the dentry is as good. */
		free(ino);
		if (d != ns->root)
			ns_drop_locked(ns, d);
		return;
	}
	/* Field by field: stamp is atomic (refresh_same writes it). */
	memset(ino, 0, sizeof(*ino));
	ino->negative = old->negative;
	ino->acl_state = old->acl_state;
	ino->st = old->st;
	if (old->acl) {
		size_t sz = sizeof(*old->acl) + old->acl->n * sizeof(old->acl->e[0]);

		ino->acl = malloc(sz);
		if (ino->acl)
			memcpy(ino->acl, old->acl, sz);
		else
			ino->acl_state = NS_ACL_UNKNOWN;
	}
	if (old->link) {
		ino->link = strdup(old->link);
		if (!ino->link) {
			ns_inode_free(ino);
			if (d != ns->root)
				ns_drop_locked(ns, d);
			return;
		}
	}
	atomic_store_explicit(&ino->stamp, 0, memory_order_relaxed);
	ns_set_inode_locked(ns, d, ino);
}

void ns_stale_links_locked(struct lpc_ns *ns, dev_t dev, ino_t ino,
			   const struct ns_dentry *except)
{
	struct ns_dentry *d, *tmp;

	ns->link_scans++;
	/* Not a directory: no children, so ns_stale_locked, which may drop d
	 * for want of memory, removes d alone from the list walked. */
	cds_list_for_each_entry_safe(d, tmp, &ns->lru, lru) {
		struct ns_inode *i = atomic_load_explicit(&d->inode, memory_order_relaxed);

		if (d == except || !i || i->negative || S_ISDIR(i->st.st_mode) ||
		    i->st.st_dev != dev || i->st.st_ino != ino)
			continue;
		ns_stale_locked(ns, d);
	}
}

void ns_drop_locked(struct lpc_ns *ns, struct ns_dentry *d)
{
	struct ns_dentry *c, *tmp;

	lpc_debug_check(d != ns->root, "NS-DROP-ROOT", NULL, "dropping the root dentry");
	cds_list_for_each_entry_safe(c, tmp, &d->children, sibling)
		ns_drop_locked(ns, c);
	seq_begin(d);
	atomic_store_explicit(&d->dead, true, memory_order_release);
	cds_lfht_del(ns->ht, &d->node);
	seq_end(d);
	cds_list_del(&d->sibling);
	cds_list_del(&d->lru);
	ns->ndentries--;
	lpc_call_rcu(&d->rcu, dentry_free_cb);
}

/* CLOCK: evicts leaves until the count is within the bound. */
void ns_evict_locked(struct lpc_ns *ns)
{
	uint64_t max = atomic_load_explicit(&ns->max_dentries, memory_order_relaxed);
	uint64_t budget = 4 * ns->ndentries + 16; /* leaves first, then their parents */

	while (ns->ndentries > max && budget-- && !cds_list_empty(&ns->lru)) {
		struct ns_dentry *d = cds_list_first_entry(&ns->lru, struct ns_dentry, lru);

		if (!cds_list_empty(&d->children) ||
		    atomic_load_explicit(&d->referenced, memory_order_relaxed)) {
			atomic_store_explicit(&d->referenced, false, memory_order_relaxed);
			cds_list_move(&d->lru, ns->lru.prev); /* to the tail */
			continue;
		}
		ns_drop_locked(ns, d);
		ns_count(ns, NS_C_EVICTIONS);
	}
}

/* Lockless refresh of an equal snapshot's stamp.  True if d already holds
 * a snapshot equal to *inop (then *inop is that one and ours is freed). */
static bool refresh_same(struct lpc_ns *ns, struct ns_dentry *d, struct ns_inode **inop,
			 uint64_t mut)
{
	struct ns_inode *old;
	uint64_t now;

	if (atomic_load_explicit(&d->dead, memory_order_acquire))
		return false;
	old = atomic_load_explicit(&d->inode, memory_order_acquire);
	if (!old || !ns_inode_same(old, *inop))
		return false;
	/* No mutation since the kernel answered: else a stale copy equal to
	 * that older answer would be called fresh. */
	if ((mut & 1) || atomic_load_explicit(&ns->mut_seq, memory_order_acquire) != mut)
		return false;
	now = atomic_load_explicit(&(*inop)->stamp, memory_order_relaxed);
	if (atomic_load_explicit(&old->stamp, memory_order_relaxed) < now)
		atomic_store_explicit(&old->stamp, now, memory_order_relaxed);
	ns_inode_free(*inop);
	*inop = old;
	return true;
}

static bool fill_allowed_locked(struct lpc_ns *ns, struct ns_dentry *parent, uint64_t mut)
{
	/* A mutation ran since the kernel answered: that answer may be older
	 * than the mutation, so it is not cached. */
	return !(mut & 1) && atomic_load_explicit(&ns->mut_seq, memory_order_relaxed) == mut &&
	       !atomic_load_explicit(&parent->dead, memory_order_relaxed);
}

void ns_refresh(struct lpc_ns *ns, struct ns_dentry *d, struct ns_inode **inop, uint64_t mut,
		bool *owned)
{
	*owned = true;
	if (!d)
		return;
	if (refresh_same(ns, d, inop, mut)) {
		*owned = false;
		return;
	}
	pthread_mutex_lock(&ns->lock);
	if (fill_allowed_locked(ns, d, mut)) {
		ns_set_inode_locked(ns, d, *inop);
		*owned = false;
	}
	pthread_mutex_unlock(&ns->lock);
}

struct ns_dentry *ns_fill(struct lpc_ns *ns, struct ns_dentry *parent, const char *name,
			  unsigned len, struct ns_inode **inop, uint64_t mut, bool *owned)
{
	struct ns_dentry *d;

	*owned = true;
	if (!parent)
		return NULL;
	/* Unchanged (the common case of a forced or revalidating ref-walk):
	 * only the stamp moves, no lock. */
	d = ns_lookup_rcu(ns, parent, name, len);
	if (d && refresh_same(ns, d, inop, mut)) {
		*owned = false;
		return d;
	}
	pthread_mutex_lock(&ns->lock);
	if (!fill_allowed_locked(ns, parent, mut)) {
		pthread_mutex_unlock(&ns->lock);
		return NULL;
	}
	d = ns_lookup_rcu(ns, parent, name, len);
	if (d) {
		ns_set_inode_locked(ns, d, *inop);
		*owned = false;
		atomic_store_explicit(&d->referenced, true, memory_order_relaxed);
		pthread_mutex_unlock(&ns->lock);
		return d;
	}
	d = dentry_alloc(parent, name, len);
	if (!d) {
		pthread_mutex_unlock(&ns->lock);
		return NULL;
	}
	atomic_store_explicit(&d->inode, *inop, memory_order_release);
	*owned = false;
	atomic_store_explicit(&d->referenced, true, memory_order_relaxed);
	cds_list_add_tail(&d->sibling, &parent->children);
	cds_list_add_tail(&d->lru, &ns->lru);
	ns->ndentries++;
	/* cds_lfht_add publishes the node with a release store; TSan is told
	 * (ns_match acquires). */
	lpc_tsan_release(d);
	cds_lfht_add(ns->ht, d->hash, &d->node);
	ns_evict_locked(ns);
	/* The new dentry may itself have been evicted: its snapshot is then
	 * freed after a grace period, still valid in this read section. */
	if (atomic_load_explicit(&d->dead, memory_order_relaxed))
		d = NULL;
	pthread_mutex_unlock(&ns->lock);
	return d;
}

int ns_dcache_init(struct lpc_ns *ns)
{
	struct ns_dentry *root;
	struct ns_inode *ino;
	int err;

	ns->ht = cds_lfht_new_flavor(1024, 1024, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
				     &urcu_memb_flavor, NULL);
	if (!ns->ht)
		return -ENOMEM;
	CDS_INIT_LIST_HEAD(&ns->lru);
	root = dentry_alloc(NULL, "", 0);
	ino = ns_inode_fetch(ns->rootfd, ns_now(), &err);
	if (!root || !ino) {
		free(root);
		ns_inode_free(ino);
		cds_lfht_destroy(ns->ht, NULL);
		return err ? err : -ENOMEM;
	}
	if (!S_ISDIR(ino->st.st_mode)) {
		free(root);
		ns_inode_free(ino);
		cds_lfht_destroy(ns->ht, NULL);
		return -ENOTDIR;
	}
	atomic_store_explicit(&root->inode, ino, memory_order_relaxed);
	ns->root = root; /* not hashed: walks start from it */
	return 0;
}

/* Context: nobody else uses ns; outside a read section. */
void ns_dcache_destroy(struct lpc_ns *ns)
{
	struct ns_dentry *d, *tmp;

	lpc_rcu_read_lock();
	cds_list_for_each_entry_safe(d, tmp, &ns->lru, lru) {
		cds_lfht_del(ns->ht, &d->node);
		ns_inode_free(atomic_load_explicit(&d->inode, memory_order_relaxed));
		free(d);
	}
	lpc_rcu_read_unlock();
	ns_inode_free(atomic_load_explicit(&ns->root->inode, memory_order_relaxed));
	free(ns->root);
	cds_lfht_destroy(ns->ht, NULL);
}
