/* SPDX-License-Identifier: MIT */
/*
 * names.h - the name cache (lpc_ns_*): dentries, inode attributes, the walk.
 * Internal API of src/names/, the part above filemap/ (it hands out the
 * cache's files) and beside cache/ (it takes a struct lpc_cache).
 *
 *   dcache.c  dentries in a cds_lfht hashed by (parent, name); the immutable
 *             attribute objects (struct ns_inode) and access ACLs; filling the
 *             cache from the kernel; dropping and evicting (CLOCK)
 *   perm.c    generic_permission with POSIX.1e ACLs, for a credential
 *   walk.c    the walk: rcu-walk Q1-Q6, ref-walk; the protocol and its
 *             interleavings are at the top of walk.c
 *   ns.c      the public calls; the writers' steps V1-V4
 *
 * Glossary: a *dentry* is one (parent, name) -> inode binding, negative when
 * the name does not exist; its *inode* is an immutable snapshot of the
 * kernel's attributes (stat, access ACL, symlink target) swapped under RCU;
 * *fresh* means fetched less than the revalidation interval ago.
 *
 * Lock order: ns->lock (writers: mutations, cache fill, eviction) ->
 * files->lock (lpc_ns_open) -> the cache's locks.  ns->stats_lock is a leaf.
 * ns->lock is taken inside RCU read sections (the ref-walk runs in one) and
 * never held across a grace-period wait: the namespace only call_rcu's.
 */
#ifndef LPC_NAMES_NAMES_H
#define LPC_NAMES_NAMES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include <urcu/list.h>
#include <urcu/rculfhash.h>

#include <lpc/lpc.h>

#include "core/compiler.h"
#include "core/debug.h"
#include "core/rcu.h"

#define NS_NAME_MAX 255
#define NS_PATH_MAX 4096
#define NS_MAXSYMLINKS 40

/* An access ACL, immutable once published; entries in the kernel's order. */
struct ns_acl {
	unsigned n;
	struct lpc_acl_entry e[];
};

enum ns_acl_state {
	NS_ACL_UNKNOWN = 0, /* not cached: a permission check needs the kernel */
	NS_ACL_NONE = 1,    /* the inode has no access ACL */
	NS_ACL_SET = 2,     /* acl holds it */
};

/*
 * What the cache knows of a name's inode: immutable once published (only
 * `stamp` changes, when a ref-walk finds it unchanged), freed with call_rcu
 * after it is replaced.  negative: the name does not exist (st unused).
 */
struct ns_inode {
	_Atomic uint64_t stamp; /* CLOCK_MONOTONIC ns when the kernel last said so */
	bool negative;
	int acl_state;         /* enum ns_acl_state */
	struct ns_acl *acl;    /* NS_ACL_SET: owned by this object */
	char *link;            /* symlink target (NUL-terminated), owned */
	struct stat st;
	struct ns_inode *owned_next; /* a walk's list of snapshots it did not cache */
	struct rcu_head rcu;
};

/*
 * A dentry.  parent and name are constant; a rename or unlink kills the
 * dentry (and its subtree) rather than moving it.
 * seq: a sequence count, odd while a writer changes the binding (inode
 * identity, death); readers validate it (walk.c).
 */
struct ns_dentry {
	struct cds_lfht_node node;
	struct ns_dentry *parent;
	_Atomic uint32_t seq;
	_Atomic bool dead;                 /* unhashed; set while seq is odd */
	_Atomic bool referenced;           /* CLOCK bit, set by walks */
	_Atomic(struct ns_inode *) inode;  /* never NULL once hashed */
	unsigned long hash;
	/* Under ns->lock. */
	struct cds_list_head children;
	struct cds_list_head sibling;
	struct cds_list_head lru;
	struct rcu_head rcu;
	unsigned len;
	char name[];
};

/* Per-thread counters of one namespace (ns.c). */
enum ns_counter {
	NS_C_WALKS,
	NS_C_WALK_RCU,
	NS_C_WALK_REF,
	NS_C_FB_MISS,
	NS_C_FB_SEQ,
	NS_C_FB_REVAL,
	NS_C_EVICTIONS,
	NS_NR_COUNTERS
};

struct ns_tstats {
	_Atomic uint64_t c[NS_NR_COUNTERS];
	struct ns_tstats *next;
};

struct lpc_ns {
	struct lpc_cache *cache;
	uint64_t id;          /* never reused: the per-thread stats cache's key */
	int rootfd;           /* O_PATH|O_DIRECTORY */
	dev_t root_dev;       /* the root's identity: ".." stops there */
	ino_t root_ino;
	struct cds_lfht *ht;
	struct ns_dentry *root;
	/* The global rename sequence count: odd while a rename runs (V1-V4). */
	_Atomic uint32_t rename_seq lpc_cacheline_aligned;
	/* Options. */
	_Atomic uint64_t reval_ns;
	_Atomic uint64_t max_dentries;
	_Atomic bool force_ref;
	bool protected_symlinks; /* /proc/sys/fs/protected_symlinks at create */
	/* Writers. */
	pthread_mutex_t lock lpc_cacheline_aligned;
	_Atomic uint64_t mut_seq;  /* odd while a mutation runs; bumped twice each */
	uint64_t ndentries;        /* under lock */
	uint64_t link_scans;       /* passes of ns_stale_links_locked; under lock */
	struct cds_list_head lru;  /* every dentry but the root; CLOCK hand at the head */
	/* Counters. */
	pthread_mutex_t stats_lock;
	struct ns_tstats *tstats;
	uint64_t exited[NS_NR_COUNTERS];
};

/* ---- dcache.c ---- */
uint64_t ns_now(void);
unsigned long ns_hash(const struct ns_dentry *parent, const char *name, unsigned len);
/* Under RCU: the hashed dentry (parent, name), or NULL. */
struct ns_dentry *ns_lookup_rcu(struct lpc_ns *ns, const struct ns_dentry *parent,
				const char *name, unsigned len);
/* The kernel's answer for the object an O_PATH fd refers to (fd < 0 and err
 * -ENOENT: a negative entry).  Return: a new inode, or NULL (ENOMEM) */
struct ns_inode *ns_inode_fetch(int fd, uint64_t now, int *err);
struct ns_inode *ns_inode_negative(uint64_t now);
void ns_inode_free(struct ns_inode *ino);
void ns_inode_free_rcu(struct ns_inode *ino);
bool ns_inode_same(const struct ns_inode *a, const struct ns_inode *b);
/*
 * Ref-walk fill: binds (parent, name) to *inop, a snapshot the kernel gave,
 * unless a mutation ran since mut (a value of ns->mut_seq sampled before the
 * kernel was asked) or parent is NULL or dead.  On return *inop is the
 * snapshot to use (the cached one when it is equal) and *owned says whether
 * the caller must free it (it was not cached).  Return: the dentry, or NULL
 * when not cached.  Context: RCU read section; may take ns->lock.
 */
struct ns_dentry *ns_fill(struct lpc_ns *ns, struct ns_dentry *parent, const char *name,
			  unsigned len, struct ns_inode **inop, uint64_t mut, bool *owned);
/* The same for a dentry the caller already has (the root, a ".." step):
 * refreshes d's snapshot when it is the same object. */
void ns_refresh(struct lpc_ns *ns, struct ns_dentry *d, struct ns_inode **inop, uint64_t mut,
		bool *owned);
/* Replaces d's inode (refresh, or after chmod/setacl).  Context: ns->lock. */
void ns_set_inode_locked(struct lpc_ns *ns, struct ns_dentry *d, struct ns_inode *ino);
/* Kills d and its subtree.  Context: ns->lock, RCU read section. */
void ns_drop_locked(struct lpc_ns *ns, struct ns_dentry *d);
/* CLOCK eviction down to max_dentries.  Context: ns->lock, RCU read section. */
void ns_evict_locked(struct lpc_ns *ns);
/* Marks d's inode stale (a copy with stamp 0).  Context: ns->lock. */
void ns_stale_locked(struct lpc_ns *ns, struct ns_dentry *d);
/* Marks stale every dentry but `except` bound to the non-directory (dev,
 * ino): its other hard links, whose snapshots a change through one link
 * (chmod, setacl, unlink, rename, truncate) leaves old.  O(dentries): for
 * inodes with more than one link, and truncating opens.  Context: ns->lock,
 * RCU read section. */
void ns_stale_links_locked(struct lpc_ns *ns, dev_t dev, ino_t ino,
			   const struct ns_dentry *except);
int ns_dcache_init(struct lpc_ns *ns);
void ns_dcache_destroy(struct lpc_ns *ns);
/* Parses a system.posix_acl_access value.  Return: acl or NULL (bad). */
struct ns_acl *ns_acl_parse(const void *buf, size_t len);

/* ---- perm.c ---- */
#define NS_MAY_EXEC 1
#define NS_MAY_WRITE 2
#define NS_MAY_READ 4
/* generic_permission(): 0, -EACCES, or -ECHILD when the ACL is not cached. */
int ns_permission(const struct ns_inode *ino, const struct lpc_cred *cred, int mask);
bool ns_in_group(const struct lpc_cred *cred, gid_t gid);

/* ---- walk.c ---- */
enum ns_walk_flags {
	NS_W_FOLLOW = 1,    /* follow a final symlink */
	NS_W_PARENT = 2,    /* stop at the parent of the last component */
	NS_W_FORCE_REF = 4, /* ref-walk only (mutating calls); res->fd is the
			     * caller's to close */
	NS_W_KEEP_RCU = 8,  /* return 0 still inside the walk's read section, so
			     * res->d stays valid: the caller unlocks */
};

/* What a walk found.  With NS_W_FORCE_REF, fd is an O_PATH descriptor of
 * the result (the parent with NS_W_PARENT), closed by the caller; else -1. */
struct ns_walk_res {
	struct stat st;        /* the result's attributes */
	struct ns_dentry *d;   /* its dentry if cached, else NULL; valid only with
				* NS_W_KEEP_RCU, until the caller's unlock */
	int fd;                /* ref-walk only, else -1 */
	bool trailing_slash;   /* NS_W_PARENT: the last component had one */
	char last[NS_NAME_MAX + 2]; /* NS_W_PARENT: the last component */
	int last_type;         /* 0 normal, 1 ".", 2 "..", 3 none (path is the root) */
};

/*
 * Resolves path for cred; with `check`, calls check(ino, cred, arg) on the
 * final inode in the same mode (inside the read section in RCU mode), and its
 * return is the walk's.  Return: 0 with *res, or a negative errno.
 * Context: outside a read section.
 */
typedef int (*ns_check_fn)(const struct ns_inode *ino, const struct lpc_cred *cred, void *arg);
int ns_walk(struct lpc_ns *ns, const struct lpc_cred *cred, const char *path, int flags,
	    ns_check_fn check, void *arg, struct ns_walk_res *res);

/* ---- ns.c ---- */
void ns_count(struct lpc_ns *ns, enum ns_counter i);

#endif /* LPC_NAMES_NAMES_H */
