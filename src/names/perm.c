/* SPDX-License-Identifier: MIT */
/*
 * perm.c - permission for a credential from a cached inode: the kernel's
 * generic_permission() (fs/namei.c) with POSIX.1e access ACLs
 * (fs/posix_acl.c: posix_acl_permission), taken over line by line so that
 * the answers are the kernel's:
 *
 *  1. The owner (fsuid == i_uid) gets the owner bits of the mode, whatever
 *     the ACL says.
 *  2. Otherwise, if the inode has an access ACL and the mode's group bits
 *     (the ACL mask) are not all zero, the ACL decides: a named user entry
 *     matching fsuid, through the mask; else the owning group and the named
 *     groups (fsgid or a supplementary group): any one of them that grants
 *     all of the request, through the mask, grants it; if some group entry
 *     matched but none granted it, -EACCES; else the other entry.
 *  3. Otherwise the group bits if fsgid/groups hold i_gid, else the other bits.
 *  4. Refused so far: uid 0 (the capabilities CAP_DAC_READ_SEARCH and
 *     CAP_DAC_OVERRIDE, which a credential has exactly when fsuid is 0)
 *     overrides: on a directory, everything; on a file, read and write
 *     always, execute only if some execute bit is set.
 *
 * An ACL costs a loop over its entries in the RCU walk; it never forces a
 * fallback (the seed's regression).  Only an inode whose ACL is not cached
 * (NS_ACL_UNKNOWN, say a directory just made, which may have inherited a
 * default ACL) returns -ECHILD: ask the kernel.
 */
#include <errno.h>

#include "names/names.h"

bool ns_in_group(const struct lpc_cred *cred, gid_t gid)
{
	if (cred->gid == gid)
		return true;
	for (unsigned i = 0; i < cred->ngroups; i++)
		if (cred->groups[i] == gid)
			return true;
	return false;
}

/* posix_acl_permission(): the ACL check for a non-owner. */
static int acl_permission(const struct ns_inode *ino, const struct ns_acl *acl,
			  const struct lpc_cred *cred, int want)
{
	const struct lpc_acl_entry *pa, *pe = acl->e + acl->n, *mask_obj;
	int found = 0;

	want &= NS_MAY_READ | NS_MAY_WRITE | NS_MAY_EXEC;
	for (pa = acl->e; pa < pe; pa++) {
		switch (pa->tag) {
		case LPC_ACL_USER_OBJ:
			if (ino->st.st_uid == cred->uid)
				goto check_perm;
			break;
		case LPC_ACL_USER:
			if (pa->id == cred->uid)
				goto mask;
			break;
		case LPC_ACL_GROUP_OBJ:
			if (ns_in_group(cred, ino->st.st_gid)) {
				found = 1;
				if ((pa->perm & want) == want)
					goto mask;
			}
			break;
		case LPC_ACL_GROUP:
			if (ns_in_group(cred, pa->id)) {
				found = 1;
				if ((pa->perm & want) == want)
					goto mask;
			}
			break;
		case LPC_ACL_MASK:
			break;
		case LPC_ACL_OTHER:
			if (found)
				return -EACCES;
			goto check_perm;
		default:
			return -EIO;
		}
	}
	return -EIO;
mask:
	for (mask_obj = pa + 1; mask_obj < pe; mask_obj++) {
		if (mask_obj->tag == LPC_ACL_MASK) {
			if ((pa->perm & mask_obj->perm & want) == want)
				return 0;
			return -EACCES;
		}
	}
check_perm:
	if ((pa->perm & want) == want)
		return 0;
	return -EACCES;
}

/* acl_permission_check(): 0, -EACCES, or -ECHILD (ACL not cached). */
static int acl_permission_check(const struct ns_inode *ino, const struct lpc_cred *cred,
				int mask)
{
	unsigned mode = ino->st.st_mode;

	if (cred->uid == ino->st.st_uid) {
		mask &= 7;
		mode >>= 6;
		return (mask & ~mode) ? -EACCES : 0;
	}
	if (mode & S_IRWXG) {
		if (ino->acl_state == NS_ACL_UNKNOWN)
			return -ECHILD;
		if (ino->acl_state == NS_ACL_SET) {
			int err = acl_permission(ino, ino->acl, cred, mask);

			if (err != -EAGAIN)
				return err;
		}
	}
	/* Only the group bits and the other bits differ in what is asked? */
	if (mask & (mode ^ (mode >> 3))) {
		if (ns_in_group(cred, ino->st.st_gid))
			mode >>= 3;
	}
	return (mask & ~mode) ? -EACCES : 0;
}

int ns_permission(const struct ns_inode *ino, const struct lpc_cred *cred, int mask)
{
	int ret = acl_permission_check(ino, cred, mask);

	if (ret != -EACCES)
		return ret;
	if (cred->uid != 0)
		return -EACCES; /* no CAP_DAC_* with a non-zero fsuid */
	if (S_ISDIR(ino->st.st_mode))
		return 0; /* READ_SEARCH without write, OVERRIDE with it */
	mask &= NS_MAY_READ | NS_MAY_WRITE | NS_MAY_EXEC;
	if (!(mask & NS_MAY_EXEC) || (ino->st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)))
		return 0;
	return -EACCES;
}
