/* SPDX-License-Identifier: MIT */
/*
 * ns.c - the public calls of the name cache (lpc_ns_*) and the credential
 * switch; the counters are stats.c's.
 *
 * Writers (mkdir, unlink, rename, chmod, setacl) hold ns->lock from before
 * their system call until the cache agrees with the kernel:
 *   V1  lock ns->lock; mut_seq += 1 (odd): no ref-walk fills the cache with
 *       an answer the kernel gave before the change (dcache.c ns_fill);
 *       a rename also makes rename_seq odd: rcu-walks fall back (walk.c Q1,
 *       Q6).
 *   V2  the system call, under the caller's credential.
 *   V3  the cache: dentries whose binding changed are dropped (their seq
 *       bumped), the attributes of those whose attributes changed are
 *       asked again (chmod, setacl) or marked stale (a parent's times and
 *       link count); a non-directory with other hard links has every other
 *       cached name of it marked stale too (chmod, setacl: its attributes;
 *       unlink, rename: its link count and times; the inode is known from
 *       an fstatat before V2, under the lock), so N.1 holds through every
 *       link.  A truncating lpc_ns_open runs a V1-V4 of its own after the
 *       truncate (truncated_known: the open's own name when the file has
 *       one link, else every cached name of it).
 *   V4  rename_seq += 1 (even), mut_seq += 1 (even); unlock.
 *   V0  (before V1) the paths are resolved by a ref-walk inside one RCU
 *       read section that lasts until V4, so the dentries it returned stay
 *       valid.
 *
 * The credential switch: setgroups, setfsgid, setfsuid as raw system calls,
 * which change only the calling thread (glibc's wrappers would change every
 * thread), and back in reverse order.  setfsuid cannot report a failure, so
 * the switch is read back.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cache/cache.h"
#include "names/names.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

#define NS_DEFAULT_REVAL 1000000000ull
#define NS_DEFAULT_MAX 65536u
#define NS_MIN_MAX 16u
#define NS_OPEN_FLAGS (O_ACCMODE | O_CREAT | O_EXCL | O_TRUNC | O_NOFOLLOW | O_CLOEXEC)

static _Atomic uint64_t ns_next_id = 1;

/* ---- create, destroy, options ---- */

static bool read_protected_symlinks(void)
{
	FILE *f = fopen("/proc/sys/fs/protected_symlinks", "re");
	int v = 1; /* the kernel's default when it cannot be read */

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 1;
		fclose(f);
	}
	return v != 0;
}

/* Registers the thread with RCU (lpc's per-thread block for the cache). */
static int ns_enter(struct lpc_ns *ns)
{
	return lpc_tcache(&ns->cache->pool.owner) ? 0 : -ENOMEM;
}

LPC_EXPORT int lpc_ns_create(struct lpc_cache *c, const char *root, struct lpc_ns **out)
{
	struct lpc_ns *ns;
	struct stat st;
	int err;

	if (!c || !root || !out)
		return -EINVAL;
	if (!lpc_tcache(&c->pool.owner))
		return -ENOMEM;
	ns = aligned_alloc(LPC_CACHELINE, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	memset(ns, 0, sizeof(*ns));
	ns->cache = c;
	ns->id = atomic_fetch_add(&ns_next_id, 1);
	ns->rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (ns->rootfd < 0) {
		err = -errno;
		free(ns);
		return err;
	}
	if (fstat(ns->rootfd, &st) != 0) {
		err = -errno;
		close(ns->rootfd);
		free(ns);
		return err;
	}
	ns->root_dev = st.st_dev;
	ns->root_ino = st.st_ino;
	atomic_init(&ns->reval_ns, NS_DEFAULT_REVAL);
	atomic_init(&ns->max_dentries, NS_DEFAULT_MAX);
	ns->protected_symlinks = read_protected_symlinks();
	pthread_mutex_init(&ns->lock, NULL);
	pthread_mutex_init(&ns->stats_lock, NULL);
	err = ns_dcache_init(ns);
	if (err) {
		pthread_mutex_destroy(&ns->lock);
		pthread_mutex_destroy(&ns->stats_lock);
		close(ns->rootfd);
		free(ns);
		return err;
	}
	*out = ns;
	return 0;
}

LPC_EXPORT int lpc_ns_destroy(struct lpc_ns *ns)
{
	bool scoped;

	if (!ns)
		return -EINVAL;
	scoped = lpc_rcu_scope_enter();
	ns_dcache_destroy(ns);
	/* Snapshots and dentries queued by call_rcu before. */
	lpc_rcu_barrier();
	lpc_rcu_scope_exit(scoped);
	while (ns->tstats) {
		struct ns_tstats *n = ns->tstats->next;

		free(ns->tstats);
		ns->tstats = n;
	}
	pthread_mutex_destroy(&ns->lock);
	pthread_mutex_destroy(&ns->stats_lock);
	close(ns->rootfd);
	free(ns);
	return 0;
}

LPC_EXPORT int lpc_ns_setopt(struct lpc_ns *ns, int opt, uint64_t value)
{
	if (!ns)
		return -EINVAL;
	switch (opt) {
	case LPC_NS_OPT_REVALIDATE_NS:
		atomic_store_explicit(&ns->reval_ns, value, memory_order_relaxed);
		return 0;
	case LPC_NS_OPT_MAX_DENTRIES:
		if (value < NS_MIN_MAX)
			return -EINVAL;
		atomic_store_explicit(&ns->max_dentries, value, memory_order_relaxed);
		if (ns_enter(ns))
			return 0; /* evicted by the next fill */
		lpc_rcu_read_lock();
		pthread_mutex_lock(&ns->lock);
		ns_evict_locked(ns);
		pthread_mutex_unlock(&ns->lock);
		lpc_rcu_read_unlock();
		return 0;
	case LPC_NS_OPT_FORCE_REFWALK:
		if (value > 1)
			return -EINVAL;
		atomic_store_explicit(&ns->force_ref, value != 0, memory_order_relaxed);
		return 0;
	default:
		return -EINVAL;
	}
}

/* ---- lookups ---- */

static int check_args(struct lpc_ns *ns, const struct lpc_cred *cred, const char *path)
{
	if (!ns || !cred || !path || (cred->ngroups && !cred->groups))
		return -EINVAL;
	return ns_enter(ns);
}

static int access_check(const struct ns_inode *ino, const struct lpc_cred *cred, void *arg)
{
	int mode = *(int *)arg, mask = 0;

	if (mode == F_OK)
		return 0;
	if (mode & R_OK)
		mask |= NS_MAY_READ;
	if (mode & W_OK)
		mask |= NS_MAY_WRITE;
	if (mode & X_OK)
		mask |= NS_MAY_EXEC;
	return ns_permission(ino, cred, mask);
}

LPC_EXPORT int lpc_ns_access(struct lpc_ns *ns, const struct lpc_cred *cred, const char *path,
			     int mode)
{
	struct ns_walk_res res;
	int err = check_args(ns, cred, path);

	if (err)
		return err;
	if (mode & ~(R_OK | W_OK | X_OK))
		return -EINVAL;
	return ns_walk(ns, cred, path, NS_W_FOLLOW, access_check, &mode, &res);
}

LPC_EXPORT int lpc_ns_stat(struct lpc_ns *ns, const struct lpc_cred *cred, const char *path,
			   struct stat *st)
{
	struct ns_walk_res res;
	int err = check_args(ns, cred, path);

	if (err)
		return err;
	if (!st)
		return -EINVAL;
	err = ns_walk(ns, cred, path, NS_W_FOLLOW, NULL, NULL, &res);
	if (!err)
		*st = res.st;
	return err;
}

/* ---- the credential switch ---- */

struct cred_save {
	bool switched;
	uid_t fsuid;
	gid_t fsgid;
	int ngroups;
	gid_t groups[256];
};

static int cred_enter(const struct lpc_cred *cred, struct cred_save *sv)
{
	uid_t cur_uid = (uid_t)setfsuid((uid_t)-1);
	gid_t cur_gid = (gid_t)setfsgid((gid_t)-1);
	long rc;

	sv->switched = false;
	sv->fsuid = cur_uid;
	sv->fsgid = cur_gid;
	sv->ngroups = getgroups(256, sv->groups);
	if (sv->ngroups < 0)
		return -EPERM;
	if (geteuid() != 0) {
		/* Without CAP_SETUID only our own credential can be used. */
		if (cred->uid != cur_uid || cred->gid != cur_gid)
			return -EPERM;
		return 0;
	}
	rc = syscall(SYS_setgroups, (size_t)cred->ngroups, cred->groups);
	if (rc != 0)
		return -errno;
	sv->switched = true;
	syscall(SYS_setfsgid, cred->gid);
	syscall(SYS_setfsuid, cred->uid);
	if ((uid_t)setfsuid((uid_t)-1) != cred->uid || (gid_t)setfsgid((gid_t)-1) != cred->gid)
		return -EPERM;
	return 0;
}

static void cred_exit(struct cred_save *sv)
{
	if (!sv->switched)
		return;
	syscall(SYS_setfsuid, sv->fsuid);
	syscall(SYS_setfsgid, sv->fsgid);
	syscall(SYS_setgroups, (size_t)sv->ngroups, sv->groups);
}

/* ---- open ---- */

struct open_arg {
	int oflags;
};

/* may_open() for an existing object, from the cached snapshot. */
static int open_check(const struct ns_inode *ino, const struct lpc_cred *cred, void *arg)
{
	int oflags = ((struct open_arg *)arg)->oflags, mask = 0, acc = oflags & O_ACCMODE;

	if ((oflags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
		return -EEXIST;
	if (S_ISDIR(ino->st.st_mode)) {
		if (oflags & O_CREAT)
			return -EISDIR;
		if (acc != O_RDONLY || (oflags & O_TRUNC))
			return -EISDIR;
	}
	if (S_ISLNK(ino->st.st_mode))
		return -ELOOP; /* O_NOFOLLOW on a final symlink */
	if (acc == O_RDONLY || acc == O_RDWR)
		mask |= NS_MAY_READ;
	if (acc == O_WRONLY || acc == O_RDWR || (oflags & O_TRUNC))
		mask |= NS_MAY_WRITE;
	return ns_permission(ino, cred, mask);
}

static void truncated_known(struct lpc_ns *ns, const struct lpc_cred *cred, const char *path,
			    const struct stat *st);

/* Hands the object an O_PATH descriptor refers to to the cache's files. */
static int open_fd(struct lpc_ns *ns, int fd, int oflags, struct lpc_file **out)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	return lpc_files_open(&ns->cache->files, proc, oflags & (O_ACCMODE | O_TRUNC), 0, out);
}

static int open_existing(struct lpc_ns *ns, const struct lpc_cred *cred, const char *path,
			 int oflags, struct lpc_file **out)
{
	struct open_arg arg = { oflags };
	struct ns_walk_res res;
	struct lpc_file *f;
	int err, acc = oflags & O_ACCMODE;

	err = ns_walk(ns, cred, path, (oflags & O_NOFOLLOW) ? 0 : NS_W_FOLLOW, open_check, &arg,
		      &res);
	if (err)
		return err;
	if (S_ISDIR(res.st.st_mode))
		return -EISDIR;
	if (!S_ISREG(res.st.st_mode))
		return -EINVAL;
	/* One cached copy per file: already open, no system call. */
	if (!(oflags & O_TRUNC)) {
		f = lpc_files_find_get(&ns->cache->files, res.st.st_dev, res.st.st_ino,
				       acc == O_RDONLY ? O_RDONLY : O_RDWR);
		if (f) {
			*out = f;
			return 0;
		}
	}
	/* Open it (as the process: lpc has checked the credential) through a
	 * ref-walk, which gives the descriptor. */
	err = ns_walk(ns, cred, path, ((oflags & O_NOFOLLOW) ? 0 : NS_W_FOLLOW) | NS_W_FORCE_REF,
		      open_check, &arg, &res);
	if (err)
		return err;
	if (S_ISDIR(res.st.st_mode))
		err = -EISDIR;
	else if (!S_ISREG(res.st.st_mode))
		err = -EINVAL;
	else
		err = open_fd(ns, res.fd, oflags, out);
	close(res.fd);
	if (!err && (oflags & O_TRUNC))
		truncated_known(ns, cred, path, &res.st);
	return err;
}

LPC_EXPORT int lpc_ns_open(struct lpc_ns *ns, const struct lpc_cred *cred, const char *path,
			   int oflags, mode_t mode, struct lpc_file **out)
{
	struct ns_walk_res res;
	struct cred_save sv;
	int err, fd, kflags;

	err = check_args(ns, cred, path);
	if (err)
		return err;
	if (!out || (oflags & ~NS_OPEN_FLAGS) || (oflags & O_ACCMODE) == O_ACCMODE)
		return -EINVAL;
	if (!(oflags & O_CREAT))
		return open_existing(ns, cred, path, oflags, out);

	/*
	 * O_CREAT: the kernel creates (or opens) under the credential,
	 * relative to the parent lpc resolved (V2), with two changes, because
	 * ns->lock is held and the walk's read section open across it:
	 *  - O_NONBLOCK: an existing FIFO opened O_RDONLY or O_WRONLY would
	 *    block in openat until its other end opens (a device may, too),
	 *    stalling every mutation of the namespace and every grace period;
	 *    with it the open returns at once and the type check below
	 *    refuses the object (-EINVAL).  The descriptor serves only for
	 *    fstat and the reopen through /proc (open_fd), which does not
	 *    inherit the flag.
	 *  - no O_TRUNC: the kernel would truncate a file this cache holds
	 *    behind its copy.  lpc_files_open does it (filemap/file.c ZB: only
	 *    with no copy cached, else -EBUSY, as O_TRUNC alone).  The
	 *    permission O_TRUNC needs is still the kernel's, under the
	 *    credential: an O_RDONLY|O_TRUNC open is asked for O_RDWR, which
	 *    needs the same (MAY_READ | MAY_WRITE).
	 */
	kflags = (oflags & ~O_TRUNC) | O_CLOEXEC | O_NONBLOCK;
	if ((oflags & O_TRUNC) && (oflags & O_ACCMODE) == O_RDONLY)
		kflags = (kflags & ~O_ACCMODE) | O_RDWR;
	err = ns_walk(ns, cred, path, NS_W_PARENT | NS_W_FORCE_REF | NS_W_KEEP_RCU, NULL, NULL,
		      &res);
	if (err)
		return err;
	pthread_mutex_lock(&ns->lock);
	atomic_fetch_add_explicit(&ns->mut_seq, 1, memory_order_relaxed); /* V1 */
	err = cred_enter(cred, &sv);
	if (!err) {
		const char *last = res.last_type == 3 ? "." : res.last;

		if (res.trailing_slash || res.last_type != 0)
			fd = -EISDIR; /* open_last_lookups(): creating "x/", ".", ".." */
		else
			fd = openat(res.fd, last, kflags, mode); /* V2 */
		if (fd == -1)
			fd = -errno;
		if (fd == -ENXIO) {
			/* O_WRONLY of a FIFO with no reader (or a device with
			 * no driver): not a regular file, as below. */
			int nf = (oflags & O_NOFOLLOW) ? AT_SYMLINK_NOFOLLOW : 0;
			struct stat st;

			if (fstatat(res.fd, last, &st, nf) == 0 && !S_ISREG(st.st_mode))
				fd = -EINVAL;
		}
	} else {
		fd = err;
	}
	cred_exit(&sv);
	if (res.d) { /* V3 */
		struct ns_dentry *c = ns_lookup_rcu(ns, res.d, res.last, (unsigned)strlen(res.last));

		if (c)
			ns_drop_locked(ns, c);
		if (fd >= 0)
			ns_stale_locked(ns, res.d);
	}
	atomic_fetch_add_explicit(&ns->mut_seq, 1, memory_order_release); /* V4 */
	pthread_mutex_unlock(&ns->lock);
	lpc_rcu_read_unlock();
	close(res.fd);
	if (fd < 0)
		return fd;
	{
		struct stat st;

		if (fstat(fd, &st) != 0) {
			err = -errno;
		} else if (S_ISDIR(st.st_mode)) {
			err = -EISDIR;
		} else if (!S_ISREG(st.st_mode)) {
			err = -EINVAL;
		} else {
			/* A truncating open goes to lpc_files_open (ZB). */
			struct lpc_file *f = (oflags & O_TRUNC) ? NULL : lpc_files_find_get(
				&ns->cache->files, st.st_dev, st.st_ino,
				(oflags & O_ACCMODE) == O_RDONLY ? O_RDONLY : O_RDWR);

			if (f) {
				*out = f;
				err = 0;
			} else {
				err = open_fd(ns, fd, oflags & (O_ACCMODE | O_TRUNC), out);
				if (!err && (oflags & O_TRUNC))
					truncated_known(ns, cred, path, &st);
			}
		}
	}
	/* Not close(2): fd is a real descriptor (not O_PATH) of a file that
	 * the cache may hold, and closing it would drop the process's POSIX
	 * locks on the file (filemap/file.c ZL5).  The O_PATH descriptors of
	 * the walks may be closed: closing one drops no lock. */
	lpc_files_give_fd(&ns->cache->files, fd);
	return err;
}

/* ---- mutations ---- */

static void mut_begin(struct lpc_ns *ns, bool rename)
{
	pthread_mutex_lock(&ns->lock); /* V1 */
	lpc_yield_point(LPC_YP_V1);
	/* seq_cst: the odd counts are visible before the system call's
	 * effects and the cache's changes. */
	atomic_fetch_add(&ns->mut_seq, 1);
	if (rename)
		atomic_fetch_add(&ns->rename_seq, 1);
}

static void mut_end(struct lpc_ns *ns, bool rename)
{
	lpc_yield_point(LPC_YP_V4);
	if (rename)
		atomic_fetch_add_explicit(&ns->rename_seq, 1, memory_order_release); /* V4 */
	atomic_fetch_add_explicit(&ns->mut_seq, 1, memory_order_release);
	pthread_mutex_unlock(&ns->lock);
}

/* After a truncating open of path (lpc_files_open truncated the file, after
 * V4 of the open's own V1-V4; *st: the file before, from the kernel): the
 * snapshots of every link of the file hold the old size and times.  A V1-V4
 * of its own, so that a ref-walk that asked the kernel before the truncate
 * cannot fill its answer after (ns_fill compares mut_seq).
 * Which dentries: with one link (st_nlink == 1) the file has one name.  A
 * ref-walk to path's parent (V0, its read section kept to V4) and an
 * fstatat of the last component, not followed: when that is the file (a
 * regular file, the same dev and ino: path's last component is not a
 * symlink the open followed), the name is the file's only one, and only
 * its dentry, looked up under the lock (the one a racing fill bound), if
 * cached, is marked stale; none cached, none to mark (a fill from an answer
 * given before the truncate fails at V1).  Else (more links, or a symlink,
 * or the walk failed) one pass over every dentry (ns->lru), as for unlink
 * and rename.  (A change behind lpc's back is the revalidation interval's,
 * N.1.) */
static void truncated_known(struct lpc_ns *ns, const struct lpc_cred *cred, const char *path,
			    const struct stat *st)
{
	struct ns_walk_res res;
	bool one = st->st_nlink == 1 &&
		   ns_walk(ns, cred, path, NS_W_PARENT | NS_W_FORCE_REF | NS_W_KEEP_RCU, NULL,
			   NULL, &res) == 0;

	if (one) {
		struct stat lst;

		one = res.d && res.last_type == 0 && !res.trailing_slash &&
		      fstatat(res.fd, res.last, &lst, AT_SYMLINK_NOFOLLOW) == 0 &&
		      S_ISREG(lst.st_mode) && lst.st_dev == st->st_dev && lst.st_ino == st->st_ino;
		close(res.fd);
	} else {
		lpc_rcu_read_lock();
	}
	mut_begin(ns, false);
	if (one) { /* V3 */
		struct ns_dentry *d = ns_lookup_rcu(ns, res.d, res.last, (unsigned)strlen(res.last));

		if (d)
			ns_stale_locked(ns, d);
	} else {
		ns_stale_links_locked(ns, st->st_dev, st->st_ino, NULL);
	}
	mut_end(ns, false);
	lpc_rcu_read_unlock();
}

/* V3 for a name in a parent: the name's dentry goes (and its subtree),
 * the parent's times and link count are asked again. */
static void forget_name(struct lpc_ns *ns, struct ns_walk_res *p)
{
	if (!p->d)
		return;
	if (p->last_type == 0) {
		struct ns_dentry *c = ns_lookup_rcu(ns, p->d, p->last, (unsigned)strlen(p->last));

		if (c)
			ns_drop_locked(ns, c);
	}
	if (!atomic_load_explicit(&p->d->dead, memory_order_relaxed))
		ns_stale_locked(ns, p->d);
}

/* Before V2: the object the last component of p names, if it has other
 * hard links whose snapshots the change will leave old (unlink: the link
 * count; rename: the link count of a replaced target, the times of each).
 * Return: whether *st is such an object. */
static bool linked_victim(const struct ns_walk_res *p, struct stat *st)
{
	return p->last_type == 0 && fstatat(p->fd, p->last, st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       !S_ISDIR(st->st_mode) && st->st_nlink > 1;
}

/* The name the kernel is given for the last component: as the caller wrote
 * it, with its trailing slash. */
static const char *kernel_last(struct ns_walk_res *p, char *buf)
{
	if (p->last_type == 3)
		return ".";
	snprintf(buf, NS_NAME_MAX + 3, "%s%s", p->last, p->trailing_slash ? "/" : "");
	return buf;
}

static int walk_parent(struct lpc_ns *ns, const struct lpc_cred *cred, const char *path,
		       struct ns_walk_res *res)
{
	return ns_walk(ns, cred, path, NS_W_PARENT | NS_W_FORCE_REF | NS_W_KEEP_RCU, NULL, NULL,
		       res);
}

static void parent_done(struct ns_walk_res *res)
{
	lpc_rcu_read_unlock();
	close(res->fd);
}

enum parent_op { PARENT_MKDIR, PARENT_UNLINK };

/*
 * mkdir and unlink: the same V1-V3 story on the parent of `path` (walked
 * and held), with the caller's credentials for the kernel call (V2) and
 * the name forgotten after it (V3); only the call differs.
 */
static int parent_change(struct lpc_ns *ns, const struct lpc_cred *cred, const char *path,
			 enum parent_op op, int arg)
{
	struct ns_walk_res p;
	struct cred_save sv;
	char buf[NS_NAME_MAX + 3];
	struct stat vst;
	bool linked;
	int err = walk_parent(ns, cred, path, &p);

	if (err)
		return err;
	mut_begin(ns, false);
	linked = op == PARENT_UNLINK && linked_victim(&p, &vst);
	err = cred_enter(cred, &sv);
	lpc_yield_point(LPC_YP_V2);
	if (!err) {
		const char *last = kernel_last(&p, buf);
		int r = op == PARENT_MKDIR ? mkdirat(p.fd, last, (mode_t)arg)
					   : unlinkat(p.fd, last, arg); /* V2 */

		if (r != 0)
			err = -errno;
	}
	cred_exit(&sv);
	lpc_yield_point(LPC_YP_V3);
	if (!err) { /* V3 */
		forget_name(ns, &p);
		if (linked) /* the other links' count went down */
			ns_stale_links_locked(ns, vst.st_dev, vst.st_ino, NULL);
	}
	mut_end(ns, false);
	parent_done(&p);
	return err;
}

LPC_EXPORT int lpc_ns_mkdir(struct lpc_ns *ns, const struct lpc_cred *cred, const char *path,
			    mode_t mode)
{
	int err = check_args(ns, cred, path);

	return err ? err : parent_change(ns, cred, path, PARENT_MKDIR, (int)mode);
}

LPC_EXPORT int lpc_ns_unlink(struct lpc_ns *ns, const struct lpc_cred *cred, const char *path,
			     int flags)
{
	int err = check_args(ns, cred, path);

	if (err)
		return err;
	if (flags & ~AT_REMOVEDIR)
		return -EINVAL;
	return parent_change(ns, cred, path, PARENT_UNLINK, flags);
}

LPC_EXPORT int lpc_ns_rename(struct lpc_ns *ns, const struct lpc_cred *cred, const char *oldpath,
			     const char *newpath, unsigned flags)
{
	struct ns_walk_res po, pn;
	struct cred_save sv;
	char bo[NS_NAME_MAX + 3], bn[NS_NAME_MAX + 3];
	struct stat so, sn;
	bool lo, ln;
	int err = check_args(ns, cred, oldpath);

	if (err)
		return err;
	if (!newpath)
		return -EINVAL;
	if (flags & ~(unsigned)(RENAME_NOREPLACE | RENAME_EXCHANGE))
		return -EINVAL;
	err = walk_parent(ns, cred, oldpath, &po);
	if (err)
		return err;
	err = walk_parent(ns, cred, newpath, &pn);
	if (err) {
		parent_done(&po);
		return err;
	}
	mut_begin(ns, true);
	lo = linked_victim(&po, &so);
	ln = linked_victim(&pn, &sn);
	err = cred_enter(cred, &sv);
	lpc_yield_point(LPC_YP_V2);
	if (!err && syscall(SYS_renameat2, po.fd, kernel_last(&po, bo), pn.fd,
			    kernel_last(&pn, bn), flags) != 0) /* V2 */
		err = -errno;
	cred_exit(&sv);
	lpc_yield_point(LPC_YP_V3);
	if (!err) { /* V3 */
		forget_name(ns, &po);
		forget_name(ns, &pn);
		if (lo)
			ns_stale_links_locked(ns, so.st_dev, so.st_ino, NULL);
		if (ln)
			ns_stale_links_locked(ns, sn.st_dev, sn.st_ino, NULL);
	}
	mut_end(ns, true);
	parent_done(&pn);
	parent_done(&po);
	return err;
}

/* chmod and setacl: the object (following a final symlink), changed through
 * its descriptor's magic link under the credential, then asked again. */
static int change_attr(struct lpc_ns *ns, const struct lpc_cred *cred, const char *path,
		       int (*op)(const char *proc, void *arg), void *arg)
{
	struct ns_walk_res r;
	struct cred_save sv;
	char proc[64];
	int err;

	err = ns_walk(ns, cred, path, NS_W_FOLLOW | NS_W_FORCE_REF | NS_W_KEEP_RCU, NULL, NULL, &r);
	if (err)
		return err;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", r.fd);
	mut_begin(ns, false);
	err = cred_enter(cred, &sv);
	lpc_yield_point(LPC_YP_V2);
	if (!err)
		err = op(proc, arg); /* V2 */
	cred_exit(&sv);
	lpc_yield_point(LPC_YP_V3);
	if (!err && r.d && !atomic_load_explicit(&r.d->dead, memory_order_relaxed)) { /* V3 */
		int ferr;
		struct ns_inode *ino = ns_inode_fetch(r.fd, ns_now(), &ferr);

		if (ino)
			ns_set_inode_locked(ns, r.d, ino);
		else if (r.d != ns->root)
			ns_drop_locked(ns, r.d);
	}
	if (!err) {
		/* The object's other hard links hold the old attributes. */
		struct stat st;

		if (fstat(r.fd, &st) == 0 && !S_ISDIR(st.st_mode) && st.st_nlink > 1)
			ns_stale_links_locked(ns, st.st_dev, st.st_ino, r.d);
	}
	mut_end(ns, false);
	parent_done(&r);
	return err;
}

static int chmod_op(const char *proc, void *arg)
{
	return chmod(proc, *(mode_t *)arg) ? -errno : 0;
}

LPC_EXPORT int lpc_ns_chmod(struct lpc_ns *ns, const struct lpc_cred *cred, const char *path,
			    mode_t mode)
{
	int err = check_args(ns, cred, path);

	if (err)
		return err;
	return change_attr(ns, cred, path, chmod_op, &mode);
}

struct acl_arg {
	const struct lpc_acl_entry *e;
	unsigned n;
};

static int setacl_op(const char *proc, void *arg)
{
	const struct acl_arg *a = arg;
	size_t len = 4 + 8 * (size_t)a->n;
	unsigned char *buf;
	uint32_t version = 2;
	int err = 0;

	if (a->n == 0) {
		if (removexattr(proc, "system.posix_acl_access") != 0 && errno != ENODATA)
			return -errno;
		return 0;
	}
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, &version, 4);
	for (unsigned i = 0; i < a->n; i++) {
		uint32_t id = a->e[i].tag == LPC_ACL_USER || a->e[i].tag == LPC_ACL_GROUP
				      ? a->e[i].id
				      : (uint32_t)-1;

		memcpy(buf + 4 + 8 * i, &a->e[i].tag, 2);
		memcpy(buf + 6 + 8 * i, &a->e[i].perm, 2);
		memcpy(buf + 8 + 8 * i, &id, 4);
	}
	if (setxattr(proc, "system.posix_acl_access", buf, len, 0) != 0)
		err = -errno;
	free(buf);
	return err;
}

LPC_EXPORT int lpc_ns_setacl(struct lpc_ns *ns, const struct lpc_cred *cred, const char *path,
			     const struct lpc_acl_entry *acl, unsigned n)
{
	struct acl_arg a = { acl, n };
	int err = check_args(ns, cred, path);

	if (err)
		return err;
	if (n && !acl)
		return -EINVAL;
	if (n > 1024)
		return -EINVAL;
	return change_attr(ns, cred, path, setacl_op, &a);
}
