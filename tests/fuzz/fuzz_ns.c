/* SPDX-License-Identifier: MIT */
/*
 * fuzz_ns.c - libFuzzer target for the name cache: paths and sequences of
 * operations on a small tree.
 *
 * Each input is a sequence of operations: one byte chooses the operation
 * (stat, access, open, mkdir, unlink, rmdir, rename, chmod, setacl, option),
 * the following bytes up to a 0 byte are its path (a rename takes two).  Every
 * input starts from the same tree (rebuilt), so a crash replays.  A stat as
 * root is compared with the kernel's (openat2 RESOLVE_IN_ROOT + fstat: the
 * namespace's root as the root): the same error, or the same inode.  Built
 * with clang -fsanitize=fuzzer,address (tests/fuzz/CMakeLists.txt) when clang
 * is there; run for a bounded time by the ctest fuzz.ns.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <lpc/lpc.h>

static char root[256];
static struct lpc_cache *cache;

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	if (ftw->level > 0)
		remove(path);
	return 0;
}

static void build_tree(void)
{
	char p[512];
	int fd;

	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	chmod(root, 0755);
#define P(x) (snprintf(p, sizeof(p), "%s/%s", root, x), p)
	mkdir(P("a"), 0755);
	mkdir(P("a/b"), 0711);
	mkdir(P("c"), 0700);
	fd = open(P("a/f"), O_CREAT | O_WRONLY, 0644);
	if (fd >= 0)
		close(fd);
	fd = open(P("c/g"), O_CREAT | O_WRONLY, 0600);
	if (fd >= 0)
		close(fd);
	symlink("../a", P("a/b/up"));
	symlink("loop", P("loop"));
	symlink("/a/f", P("abs"));
	symlink("nowhere", P("dangling"));
	if (geteuid() == 0) {
		chown(P("c"), 1001, 2001);
		chown(P("a/b"), 1002, 2002);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct lpc_config cfg;
	const char *base = getenv("TMPDIR");

	(void)argc;
	(void)argv;
	snprintf(root, sizeof(root), "%s/lpc-fuzz-XXXXXX", base && *base ? base : "/var/tmp");
	if (!mkdtemp(root))
		abort();
	lpc_config_init(&cfg);
	cfg.cache_bytes = 1 << 20;
	if (lpc_cache_create(&cfg, &cache))
		abort();
	return 0;
}

static int kernel_stat(int rootfd, const char *path, struct stat *st)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT };
	int fd, rc;

	if (!*path)
		return -ENOENT;
	fd = (int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
	if (fd < 0)
		return -errno;
	rc = fstat(fd, st) ? -errno : 0;
	close(fd);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const gid_t g[] = { 2001, 2002 };
	const struct lpc_cred creds[3] = { { 0, 0, 0, NULL }, { 1001, 2001, 1, g },
					   { 1002, 2002, 2, g } };
	struct lpc_acl_entry acl[5] = { { LPC_ACL_USER_OBJ, 7, 0 }, { LPC_ACL_USER, 5, 1002 },
					{ LPC_ACL_GROUP_OBJ, 0, 0 }, { LPC_ACL_MASK, 5, 0 },
					{ LPC_ACL_OTHER, 0, 0 } };
	char path[2][5000];
	struct lpc_ns *ns;
	struct stat st, kst;
	size_t i = 0;
	int rootfd;

	build_tree();
	if (lpc_ns_create(cache, root, &ns))
		abort();
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	while (i < size) {
		uint8_t op = data[i++];
		const struct lpc_cred *cred = &creds[(op >> 4) % 3];
		struct lpc_file *f;
		int rc, kr;

		for (int k = 0; k < 2; k++) {
			size_t n = 0;

			while (i < size && data[i] && n < sizeof(path[k]) - 1)
				path[k][n++] = (char)data[i++];
			path[k][n] = 0;
			i++; /* the 0 */
		}
		switch (op & 15) {
		case 0:
			rc = lpc_ns_stat(ns, &creds[0], path[0], &st);
			kr = kernel_stat(rootfd, path[0], &kst);
			if (strlen(path[0]) >= 4096)
				kr = -ENAMETOOLONG;
			if (rc != kr || (rc == 0 && st.st_ino != kst.st_ino)) {
				fprintf(stderr, "stat(\"%s\"): lpc %d kernel %d\n", path[0], rc, kr);
				abort();
			}
			break;
		case 1:
			lpc_ns_access(ns, cred, path[0], (op >> 6) & 7);
			break;
		case 2:
			if (lpc_ns_open(ns, cred, path[0], (op >> 6) & 3 ? O_RDWR : O_RDONLY, 0,
					&f) == 0)
				lpc_file_close(f);
			break;
		case 3:
			if (lpc_ns_open(ns, cred, path[0], O_CREAT | O_RDWR, 0644, &f) == 0)
				lpc_file_close(f);
			break;
		case 4:
			lpc_ns_mkdir(ns, cred, path[0], 0755);
			break;
		case 5:
			lpc_ns_unlink(ns, cred, path[0], 0);
			break;
		case 6:
			lpc_ns_unlink(ns, cred, path[0], AT_REMOVEDIR);
			break;
		case 7:
			lpc_ns_rename(ns, cred, path[0], path[1], (op >> 6) & 1);
			break;
		case 8:
			lpc_ns_chmod(ns, cred, path[0], (mode_t)(op * 37u | 0700) & 07777);
			break;
		case 9:
			lpc_ns_setacl(ns, cred, path[0], (op >> 6) & 1 ? acl : NULL,
				      (op >> 6) & 1 ? 5 : 0);
			break;
		case 10:
			lpc_ns_setopt(ns, LPC_NS_OPT_REVALIDATE_NS, (op >> 6) & 1 ? 0 : 1000000000);
			break;
		case 11:
			lpc_ns_setopt(ns, LPC_NS_OPT_MAX_DENTRIES, 16);
			break;
		default:
			rc = lpc_ns_stat(ns, cred, path[0], &st);
			break;
		}
	}
	close(rootfd);
	lpc_ns_destroy(ns);
	return 0;
}
