/* SPDX-License-Identifier: MIT */
/*
 * walk.c - path walk: rcu-walk first, ref-walk when it cannot finish.
 *
 * The walk follows the kernel's path_lookupat()/link_path_walk() step for
 * step, so that its errors are the kernel's: search permission on every
 * directory before each component (including "." and ".." and the last),
 * -ENOTDIR when a non-final component is not a directory, -ENOENT for a
 * missing one, ".." stopping at the root (the namespace's root is the walk's
 * root, as a chroot), a trailing '/' meaning "follow, and must be a
 * directory", at most 40 symlinks per walk (-ELOOP), the protected_symlinks
 * rule for a trailing symlink in a sticky world-writable directory.
 *
 * rcu-walk (reader; all in one RCU read section, no lock, no store to a
 * shared line but a dentry's CLOCK bit when it is clear):
 *   Q1  rcu_read_lock; rs = rename_seq (acquire; odd: a rename runs, fall
 *       back); d = root, s = d->seq (acquire), ino = d->inode (acquire).
 *   Q2  ino fresh (else fall back: revalidation); search permission on ino
 *       for the credential from the cached mode and ACL (-ECHILD only when
 *       the ACL is not cached: fall back).  "." stays; ".." at the root
 *       stays, else steps to d->parent as Q3-Q5 do to a child.
 *   Q3  child = hash lookup (d, name) (absent: fall back: miss).
 *   Q4  cs = child->seq (acquire; odd: fall back); child->dead (set: fall
 *       back); cino = child->inode (acquire); fresh, else fall back.
 *   Q5  validate the parent: d->seq == s (else fall back:
 *       the permission checked on d, or the lookup in d, may be stale).
 *       Then d = child, s = cs, ino = cino; a symlink pushes its body and
 *       stays at d's parent; a negative child is -ENOENT.
 *   Q6  at the end (a result or an error): d->seq == s and
 *       rename_seq == rs, else the whole answer is thrown away and the walk
 *       falls back; rcu_read_unlock.  So no answer of an RCU walk mixes the
 *       tree before and after a rename (N.2): a rename holds rename_seq odd
 *       from before its system call until the cache agrees with the kernel
 *       (ns.c V1-V4).
 * Writers (dcache.c, ns.c) bump a dentry's seq around any change of its
 * binding; snapshots (struct ns_inode) are immutable and swapped, so a
 * reader reads a whole one, and frees wait for a grace period.  Memory
 * order: every load a validation covers is an acquire load (the snapshot
 * pointer, a child's seq, its dead flag), so the validating load of seq
 * (acquire too) cannot be satisfied before them; writers make the odd seq
 * visible before their change because every store of the change is a
 * release store (or a liburcu RMW, a full barrier).  No fences: TSan cannot
 * see them.
 *
 * Interleavings that matter:
 *  - unlink of d/x while a walker is between Q3 and Q5 on x: the writer sets
 *    x's seq odd, kills it, bumps it even.  The walker read cs before (then
 *    validates x's seq as the parent of the next step, or at Q6: changed) or
 *    after (then it sees dead, or odd): it falls back either way.
 *  - chmod of d while a walker checked search permission on d's old mode at
 *    Q2: chmod swaps the snapshot without a seq bump; the walker's answer is
 *    the one the kernel gave before the chmod (its own rcu-walk is no more
 *    atomic), and the next walk sees the new one.
 *  - rename a/x -> b/y while a walker walks b/y/z: either Q1 saw rs odd, or
 *    Q6 sees rename_seq changed: fall back, and the ref-walk asks the kernel.
 *    The model is tests/model/walk.pml; its broken variants drop Q5's parent
 *    validation or Q6's rename check, and spin finds the mixed answer.
 *
 * ref-walk: the same steps in one read section (dentry pointers stay valid;
 * system calls inside a read section only delay grace periods), asking the
 * kernel for every component: openat(dirfd, name, O_PATH|O_NOFOLLOW),
 * fstat, the ACL through getxattr of /proc/self/fd/N, readlinkat; each
 * answer fills the cache (ns_fill), unless a mutation ran meanwhile.
 * Permission is checked by lpc on the fresh snapshots, with the same code.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "names/names.h"

#define NS_FALLBACK_MISS (-10001)
#define NS_FALLBACK_SEQ (-10002)
#define NS_FALLBACK_REVAL (-10003)

enum { LAST_NORM = 0, LAST_DOT = 1, LAST_DOTDOT = 2, LAST_ROOT = 3 };

struct walker {
	struct lpc_ns *ns;
	const struct lpc_cred *cred;
	int flags;
	bool rcu;
	bool follow;
	bool want_dir;
	uint64_t now, reval;
	uint32_t rseq;
	/* Where the walk is. */
	struct ns_dentry *d;       /* rcu: never NULL; ref: NULL when not cached */
	uint32_t dseq;
	const struct ns_inode *ino;
	int fd;                    /* ref: O_PATH descriptor of d (ns->rootfd not owned) */
	const struct ns_inode *root_ino; /* ref: the root's fresh snapshot */
	struct ns_inode *owned;    /* ref: snapshots not cached, freed at the end */
	int nlinks;
	/* The last component (set by link_path_walk). */
	const char *last;
	unsigned last_len;
	int last_type;
	bool last_slash;
	/* dir_mode/dir_uid of the last component's directory (protected symlinks). */
	mode_t dir_mode;
	uid_t dir_uid;
	const char *stack[NS_MAXSYMLINKS + 1];
};

static bool fresh(const struct walker *w, const struct ns_inode *ino)
{
	uint64_t st = atomic_load_explicit(&ino->stamp, memory_order_relaxed);

	/* Stamp 0: marked stale (dcache.c ns_stale_locked), whatever the
	 * interval: one longer than the clock's count since boot would make
	 * now - 0 look recent. */
	return w->reval && st && w->now - st < w->reval;
}

static void own(struct walker *w, struct ns_inode *ino, bool owned)
{
	if (owned) {
		ino->owned_next = w->owned;
		w->owned = ino;
	}
}

static bool at_root(const struct walker *w)
{
	return w->ino->st.st_dev == w->ns->root_dev && w->ino->st.st_ino == w->ns->root_ino;
}

static void set_fd(struct walker *w, int fd)
{
	if (w->fd >= 0 && w->fd != w->ns->rootfd)
		close(w->fd);
	w->fd = fd;
}

/* The walk's position jumps to the root (start, '/', an absolute link). */
static int jump_root(struct walker *w)
{
	struct lpc_ns *ns = w->ns;

	w->d = ns->root;
	if (w->rcu) {
		w->dseq = atomic_load_explicit(&ns->root->seq, memory_order_acquire);
		if (w->dseq & 1)
			return NS_FALLBACK_SEQ;
		w->ino = atomic_load_explicit(&ns->root->inode, memory_order_acquire);
		if (!fresh(w, w->ino))
			return NS_FALLBACK_REVAL;
	} else {
		set_fd(w, ns->rootfd);
		w->ino = w->root_ino;
	}
	return 0;
}

/* Q5 (and Q6's first half): has d changed since the walk stood on it? */
static bool d_valid(const struct walker *w)
{
	if (!w->rcu)
		return true;
	/* Every load this validates (a snapshot pointer, a child's seq and
	 * dead flag) is an acquire load, so none of them moves after this
	 * one: no fence needed (and TSan has no fences). */
	return atomic_load_explicit(&w->d->seq, memory_order_acquire) == w->dseq;
}

/* Q2: may_lookup. */
static int may_lookup(struct walker *w)
{
	int err;

	lpc_yield_point(LPC_YP_Q2);
	err = ns_permission(w->ino, w->cred, NS_MAY_EXEC);
	if (err == -ECHILD)
		return w->rcu ? NS_FALLBACK_MISS : -EIO;
	return err;
}

/* The kernel's answer for name in the walk's directory (ref-walk). */
static int ask_kernel(struct walker *w, const char *name, unsigned len, struct ns_inode **out,
		      int *outfd)
{
	char buf[NS_NAME_MAX + 1];
	struct ns_inode *ino;
	int fd, err;

	memcpy(buf, name, len);
	buf[len] = 0;
	*outfd = -1;
	fd = openat(w->fd, buf, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT)
			return -errno;
		ino = ns_inode_negative(w->now);
		if (!ino)
			return -ENOMEM;
		*out = ino;
		return 0;
	}
	ino = ns_inode_fetch(fd, w->now, &err);
	if (!ino) {
		close(fd);
		return err;
	}
	*out = ino;
	*outfd = fd;
	return 0;
}

/* handle_dots(): "." stays, ".." steps up but never above the root. */
static int walk_dots(struct walker *w, int type)
{
	struct lpc_ns *ns = w->ns;

	if (type == LAST_DOT || at_root(w))
		return 0;
	if (w->rcu) {
		struct ns_dentry *p = w->d->parent;
		uint32_t ps;
		const struct ns_inode *pino;

		if (!p)
			return NS_FALLBACK_MISS;
		ps = atomic_load_explicit(&p->seq, memory_order_acquire);
		if (ps & 1)
			return NS_FALLBACK_SEQ;
		pino = atomic_load_explicit(&p->inode, memory_order_acquire);
		if (!d_valid(w))
			return NS_FALLBACK_SEQ;
		if (!fresh(w, pino))
			return NS_FALLBACK_REVAL;
		w->d = p;
		w->dseq = ps;
		w->ino = pino;
		return 0;
	} else {
		uint64_t mut = atomic_load_explicit(&ns->mut_seq, memory_order_acquire);
		struct ns_dentry *p = w->d && w->d != ns->root ? w->d->parent : NULL;
		struct ns_inode *pino;
		bool owned;
		int err, fd = openat(w->fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);

		if (fd < 0)
			return -errno;
		pino = ns_inode_fetch(fd, w->now, &err);
		if (!pino) {
			close(fd);
			return err;
		}
		if (p) {
			const struct ns_inode *pi =
				atomic_load_explicit(&p->inode, memory_order_acquire);

			/* Moved behind lpc's back: the cached parent is not it. */
			if (pi->negative || pi->st.st_dev != pino->st.st_dev ||
			    pi->st.st_ino != pino->st.st_ino)
				p = NULL;
		}
		ns_refresh(ns, p, &pino, mut, &owned);
		own(w, pino, owned);
		set_fd(w, fd);
		w->d = p;
		w->ino = pino;
		return 0;
	}
}

/* may_follow_link(): protected_symlinks, for a trailing symlink. */
static int may_follow_link(struct walker *w, const struct ns_inode *link)
{
	if (!w->ns->protected_symlinks)
		return 0;
	if (link->st.st_uid == w->cred->uid)
		return 0;
	if ((w->dir_mode & (S_ISVTX | S_IWOTH)) != (S_ISVTX | S_IWOTH))
		return 0;
	if (w->dir_uid == link->st.st_uid)
		return 0;
	return -EACCES;
}

/*
 * walk_component() + step_into(): looks name up in the walk's directory and
 * steps onto it.  Return: 0 (moved), 1 (a symlink to follow: *body), or an
 * error / fallback.
 */
static int walk_component(struct walker *w, const char *name, unsigned len, int type,
			  bool trailing, const char **body)
{
	struct lpc_ns *ns = w->ns;
	struct ns_dentry *child;
	const struct ns_inode *cino;
	uint32_t cs = 0;
	int cfd = -1;

	if (type != LAST_NORM)
		return walk_dots(w, type);
	if (len > NS_NAME_MAX)
		return -ENAMETOOLONG;
	if (w->rcu) {
		lpc_yield_point(LPC_YP_Q3);
		child = ns_lookup_rcu(ns, w->d, name, len); /* Q3 */
		if (!child)
			return NS_FALLBACK_MISS;
		lpc_yield_point(LPC_YP_Q4);
		cs = atomic_load_explicit(&child->seq, memory_order_acquire); /* Q4 */
		if ((cs & 1) || atomic_load_explicit(&child->dead, memory_order_acquire))
			return NS_FALLBACK_SEQ;
		cino = atomic_load_explicit(&child->inode, memory_order_acquire);
		lpc_yield_point(LPC_YP_Q5);
		if (!d_valid(w)) /* Q5 */
			return NS_FALLBACK_SEQ;
		if (!fresh(w, cino))
			return NS_FALLBACK_REVAL;
		if (!atomic_load_explicit(&child->referenced, memory_order_relaxed))
			atomic_store_explicit(&child->referenced, true, memory_order_relaxed);
	} else {
		uint64_t mut = atomic_load_explicit(&ns->mut_seq, memory_order_acquire);
		struct ns_inode *ino;
		bool owned;
		int err = ask_kernel(w, name, len, &ino, &cfd);

		if (err)
			return err;
		child = ns_fill(ns, w->d, name, len, &ino, mut, &owned);
		own(w, ino, owned);
		cino = ino;
	}
	if (cino->negative) {
		if (cfd >= 0)
			close(cfd);
		return -ENOENT;
	}
	if (S_ISLNK(cino->st.st_mode) && (!trailing || w->follow)) {
		if (cfd >= 0)
			close(cfd);
		if (w->nlinks++ >= NS_MAXSYMLINKS)
			return -ELOOP;
		if (trailing) {
			int err = may_follow_link(w, cino);

			if (err)
				return err;
		}
		*body = cino->link;
		return 1;
	}
	if (!w->rcu)
		set_fd(w, cfd);
	w->d = child;
	w->dseq = cs;
	w->ino = cino;
	return 0;
}

/* The name's next component: its length and type. */
static unsigned comp_len(const char *name, int *type)
{
	unsigned len = 0;

	while (name[len] && name[len] != '/')
		len++;
	*type = LAST_NORM;
	if (name[0] == '.') {
		if (len == 1)
			*type = LAST_DOT;
		else if (len == 2 && name[1] == '.')
			*type = LAST_DOTDOT;
	}
	return len;
}

/* link_path_walk(): everything but the last component of name (and of
 * every nested link's body), which it leaves in w->last. */
static int link_path_walk(struct walker *w, const char *name)
{
	int depth = 0, err;

	w->last_type = LAST_ROOT;
	if (*name == '/') {
		err = jump_root(w);
		if (err)
			return err;
	}
	while (*name == '/')
		name++;
	if (!*name) {
		w->dir_mode = 0;
		return 0;
	}
	for (;;) {
		const char *body = NULL;
		unsigned len;
		int type;

		err = may_lookup(w);
		if (err)
			return err;
		len = comp_len(name, &type);
		w->last = name;
		w->last_len = len;
		w->last_type = type;
		name += len;
		if (!*name)
			goto last;
		do
			name++;
		while (*name == '/');
		if (!*name) {
last:
			if (!depth) {
				w->dir_mode = w->ino->st.st_mode;
				w->dir_uid = w->ino->st.st_uid;
				return 0;
			}
			/* The last component of a nested symlink. */
			name = w->stack[--depth];
			err = walk_component(w, w->last, w->last_len, w->last_type, false, &body);
		} else {
			err = walk_component(w, w->last, w->last_len, w->last_type, false, &body);
		}
		if (err < 0)
			return err;
		if (err == 1) {
			w->stack[depth++] = name;
			name = body;
			if (*name == '/') {
				err = jump_root(w);
				if (err)
					return err;
				while (*name == '/')
					name++;
			}
			if (!*name) {
				/* An empty body: a pure jump; the kernel
				 * then goes on with what the link saved. */
				name = w->stack[--depth];
			}
			continue;
		}
		if (!S_ISDIR(w->ino->st.st_mode))
			return d_valid(w) ? -ENOTDIR : NS_FALLBACK_SEQ;
	}
}

/* path_lookupat(). */
static int path_walk(struct walker *w, const char *path, struct ns_walk_res *res)
{
	const char *s = path;
	int err;

	err = jump_root(w);
	if (err)
		return err;
	for (;;) {
		const char *body = NULL;

		err = link_path_walk(w, s);
		if (err)
			return err;
		/* lookup_last() */
		if (w->last_type == LAST_NORM && w->last[w->last_len]) {
			w->follow = true;
			w->want_dir = true;
		}
		if (w->flags & NS_W_PARENT) {
			res->last_type = w->last_type;
			res->trailing_slash = w->last_type != LAST_ROOT && w->last[w->last_len];
			if (w->last_type == LAST_ROOT) {
				res->last[0] = 0;
			} else {
				if (w->last_len > NS_NAME_MAX && w->last_type == LAST_NORM)
					return -ENAMETOOLONG;
				memcpy(res->last, w->last, w->last_len);
				res->last[w->last_len] = 0;
			}
			return 0;
		}
		if (w->last_type == LAST_ROOT)
			break;
		err = walk_component(w, w->last, w->last_len, w->last_type, true, &body);
		if (err < 0)
			return err;
		if (err == 0)
			break;
		s = body;
	}
	if (w->want_dir && !S_ISDIR(w->ino->st.st_mode))
		return -ENOTDIR;
	return 0;
}

static void walker_end(struct walker *w)
{
	while (w->owned) {
		struct ns_inode *n = w->owned->owned_next;

		ns_inode_free(w->owned);
		w->owned = n;
	}
}

static int walk_once(struct walker *w, const char *path, ns_check_fn check, void *arg,
		     struct ns_walk_res *res)
{
	struct lpc_ns *ns = w->ns;
	int err;

	w->d = NULL;
	w->fd = -1;
	w->owned = NULL;
	w->nlinks = 0;
	w->follow = w->flags & NS_W_FOLLOW;
	w->want_dir = false;
	w->now = ns_now();
	w->reval = atomic_load_explicit(&ns->reval_ns, memory_order_relaxed);
	lpc_rcu_read_lock(); /* Q1 */
	lpc_yield_point(LPC_YP_Q1);
	if (w->rcu) {
		w->rseq = atomic_load_explicit(&ns->rename_seq, memory_order_acquire);
		if (w->rseq & 1) {
			lpc_rcu_read_unlock();
			return NS_FALLBACK_SEQ;
		}
	} else {
		/* The root's snapshot, asked again once per ref-walk. */
		uint64_t mut = atomic_load_explicit(&ns->mut_seq, memory_order_acquire);
		struct ns_inode *rino = ns_inode_fetch(ns->rootfd, w->now, &err);
		bool owned;

		if (!rino) {
			lpc_rcu_read_unlock();
			return err;
		}
		ns_refresh(ns, ns->root, &rino, mut, &owned);
		own(w, rino, owned);
		w->root_ino = rino;
	}
	err = path_walk(w, path, res);
	if (!err && check)
		err = check(w->ino, w->cred, arg);
	if (err == -ECHILD)
		err = w->rcu ? NS_FALLBACK_MISS : -EIO;
	if (w->rcu && err != NS_FALLBACK_MISS && err != NS_FALLBACK_REVAL) {
		/* Q6: the answer stands only if nothing it read has changed. */
		lpc_yield_point(LPC_YP_Q6);
		if (!d_valid(w) ||
		    atomic_load_explicit(&ns->rename_seq, memory_order_acquire) != w->rseq)
			err = NS_FALLBACK_SEQ;
	}
	if (err >= 0) {
		res->st = w->ino->st;
		res->d = w->d;
		res->fd = -1;
		if (!w->rcu && (w->flags & NS_W_FORCE_REF)) {
			/* The callers that force a ref-walk take its descriptor. */
			if (w->fd == ns->rootfd)
				w->fd = fcntl(ns->rootfd, F_DUPFD_CLOEXEC, 0);
			res->fd = w->fd;
			w->fd = -1;
			if (res->fd < 0)
				err = -errno;
		}
	}
	set_fd(w, -1);
	walker_end(w);
	if (!(err == 0 && (w->flags & NS_W_KEEP_RCU)))
		lpc_rcu_read_unlock();
	return err;
}

int ns_walk(struct lpc_ns *ns, const struct lpc_cred *cred, const char *path, int flags,
	    ns_check_fn check, void *arg, struct ns_walk_res *res)
{
	struct walker w;
	int err;

	if (strnlen(path, NS_PATH_MAX) >= NS_PATH_MAX)
		return -ENAMETOOLONG;
	if (!*path)
		return -ENOENT;
	memset(&w, 0, sizeof(w));
	w.ns = ns;
	w.cred = cred;
	w.flags = flags;
	ns_count(ns, NS_C_WALKS);
	if (!(flags & NS_W_FORCE_REF) && !atomic_load_explicit(&ns->force_ref, memory_order_relaxed)) {
		w.rcu = true;
		err = walk_once(&w, path, check, arg, res);
		switch (err) {
		case NS_FALLBACK_MISS:
			ns_count(ns, NS_C_FB_MISS);
			break;
		case NS_FALLBACK_SEQ:
			ns_count(ns, NS_C_FB_SEQ);
			break;
		case NS_FALLBACK_REVAL:
			ns_count(ns, NS_C_FB_REVAL);
			break;
		default:
			ns_count(ns, NS_C_WALK_RCU);
			return err;
		}
	}
	w.rcu = false;
	err = walk_once(&w, path, check, arg, res);
	ns_count(ns, NS_C_WALK_REF);
	return err;
}
