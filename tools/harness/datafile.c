/* SPDX-License-Identifier: MIT */
/* datafile.c - the benchmark's data file and its removal (see datafile.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include "datafile.h"
#include "util.h"

#define DATAFILE_CHUNK (1u << 20) /* bytes per write(2) */
#define DATAFILE_STAMP 4096u      /* every 4 KiB block starts with its number */

/*
 * What the exit and signal handlers remove.  Plain arrays, written before the
 * handlers are armed: a signal handler may only call async-signal-safe
 * functions, and unlink/rmdir on a fixed string are.
 */
static char rm_path[PATH_MAX];
static char rm_dir[PATH_MAX];
static volatile sig_atomic_t rm_armed;
static pid_t rm_owner; /* a forked child (read.c) exits without removing */

static const struct {
	unsigned long magic;
	const char *name;
} fs_names[] = {
	{ EXT4_SUPER_MAGIC, "ext2/3/4" }, /* the three share one magic */
	{ XFS_SUPER_MAGIC, "xfs" },
	{ BTRFS_SUPER_MAGIC, "btrfs" },
	{ TMPFS_MAGIC, "tmpfs" },
	{ OVERLAYFS_SUPER_MAGIC, "overlayfs" },
	{ NFS_SUPER_MAGIC, "nfs" },
	{ 0x2fc12fc1UL, "zfs" },
	{ 0x65735546UL, "fuse" },
};

static void fs_name(unsigned long magic, char *buf, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(fs_names); i++) {
		if (fs_names[i].magic == magic) {
			snprintf(buf, len, "%s", fs_names[i].name);
			return;
		}
	}
	snprintf(buf, len, "fs magic 0x%lx", magic);
}

static bool is_tmpfs(const char *dir)
{
	struct statfs sf;

	return statfs(dir, &sf) == 0 && (unsigned long)sf.f_type == TMPFS_MAGIC;
}

void datafile_choose(const char *parent, struct datafile *df)
{
	const char *tmpdir = getenv("TMPDIR");
	struct statfs sf;

	memset(df, 0, sizeof(*df));
	if (!parent) {
		if (tmpdir && *tmpdir && !is_tmpfs(tmpdir))
			parent = tmpdir;
		else
			parent = "/var/tmp";
	}
	if (statfs(parent, &sf))
		die_err(errno, "the data directory %s", parent);
	if (snprintf(df->dir, sizeof(df->dir), "%s/lpcbench.XXXXXX", parent) >=
	    (int)sizeof(df->dir))
		die("the data directory name %s is too long", parent);
	fs_name((unsigned long)sf.f_type, df->fstype, sizeof(df->fstype));
	df->tmpfs = (unsigned long)sf.f_type == TMPFS_MAGIC;
}

void datafile_remove(void)
{
	if (!rm_armed || getpid() != rm_owner)
		return;
	rm_armed = 0;
	unlink(rm_path);
	rmdir(rm_dir);
}

static void datafile_signal(int sig)
{
	/* Only async-signal-safe calls here; then die of the same signal. */
	if (rm_armed && getpid() == rm_owner) {
		unlink(rm_path);
		rmdir(rm_dir);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* A crash too: the file is a gigabyte at full sizes.  The fault's own
 * handler (the default core dump, or a sanitizer's report) runs after the
 * removal: a fault raised by an instruction is raised again by the same
 * instruction once this handler returns with the old action restored; one
 * sent by kill, raise or abort is raised again here. */
static const int fatal_sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
static struct sigaction fatal_old[ARRAY_SIZE(fatal_sigs)];

static void datafile_fatal(int sig, siginfo_t *info, void *uctx)
{
	(void)uctx;
	if (rm_armed && getpid() == rm_owner) {
		rm_armed = 0;
		unlink(rm_path);
		rmdir(rm_dir);
	}
	for (size_t i = 0; i < ARRAY_SIZE(fatal_sigs); i++)
		if (fatal_sigs[i] == sig)
			sigaction(sig, &fatal_old[i], NULL);
	if (info->si_code <= 0) /* sent, not a fault */
		raise(sig);
}

static void datafile_arm(const struct datafile *df)
{
	static bool registered;
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa;

	memcpy(rm_path, df->path, sizeof(rm_path));
	memcpy(rm_dir, df->dir, sizeof(rm_dir));
	rm_owner = getpid();
	rm_armed = 1;
	if (registered)
		return;
	registered = true;
	if (atexit(datafile_remove))
		die("cannot register the removal of %s at exit", df->path);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = datafile_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		sigaction(sigs[i], &sa, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = datafile_fatal;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(fatal_sigs); i++)
		sigaction(fatal_sigs[i], &sa, &fatal_old[i]);
}

/* Fills one chunk: each block starts with its number, the rest is a
 * non-zero pattern, so no file system can store the file as holes. */
static void fill_chunk(unsigned char *buf, uint64_t first_block)
{
	for (unsigned off = 0; off < DATAFILE_CHUNK; off += DATAFILE_STAMP) {
		uint64_t block = first_block + off / DATAFILE_STAMP;

		memset(buf + off, 0xa5 ^ (unsigned char)block, DATAFILE_STAMP);
		memcpy(buf + off, &block, sizeof(block));
	}
}

void datafile_create(struct datafile *df, uint64_t bytes)
{
	struct statfs sf;
	unsigned char *buf;
	uint64_t done = 0;
	int fd;

	df->bytes = bytes;
	if (!mkdtemp(df->dir))
		die_err(errno, "creating a directory %s", df->dir);
	if (snprintf(df->path, sizeof(df->path), "%s/data", df->dir) >=
	    (int)sizeof(df->path))
		die("the data file name in %s is too long", df->dir);
	/* Armed before the file exists, so a failure below still cleans up. */
	datafile_arm(df);
	if (statfs(df->dir, &sf))
		die_err(errno, "statfs %s", df->dir);
	if ((uint64_t)sf.f_bavail * (uint64_t)sf.f_bsize < bytes + DATAFILE_CHUNK)
		die("%s has %llu MiB free, the data file needs %llu MiB (see --file-mb, --dir)",
		    df->dir,
		    (unsigned long long)((uint64_t)sf.f_bavail * sf.f_bsize >> 20),
		    (unsigned long long)(bytes >> 20));

	fd = open(df->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		die_err(errno, "creating %s", df->path);
	buf = xaligned_alloc(DATAFILE_STAMP, DATAFILE_CHUNK);
	while (done < bytes) {
		size_t len = bytes - done < DATAFILE_CHUNK ? bytes - done : DATAFILE_CHUNK;
		size_t put = 0;

		fill_chunk(buf, done / DATAFILE_STAMP);
		while (put < len) {
			ssize_t n = write(fd, buf + put, len - put);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				die_err(errno, "writing %s", df->path);
			put += (size_t)n;
		}
		done += len;
	}
	free(buf);
	if (fdatasync(fd))
		die_err(errno, "fdatasync %s", df->path);
	if (close(fd))
		die_err(errno, "closing %s", df->path);
}

void datafile_drop(const struct datafile *df)
{
	int fd = open(df->path, O_RDONLY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		die_err(errno, "opening %s", df->path);
	rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	if (rc)
		die_err(rc, "posix_fadvise(DONTNEED) on %s", df->path);
	close(fd);
}

uint64_t datafile_resident_pages(const struct datafile *df)
{
	int fd = open(df->path, O_RDONLY | O_CLOEXEC);
	size_t psz = (size_t)sysconf(_SC_PAGESIZE), np = (df->bytes + psz - 1) / psz;
	unsigned char *vec;
	uint64_t n = 0;
	void *m;

	if (fd < 0)
		return 0;
	m = mmap(NULL, df->bytes, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return 0;
	vec = xmalloc(np);
	if (!mincore(m, df->bytes, vec))
		for (size_t i = 0; i < np; i++)
			n += vec[i] & 1;
	free(vec);
	munmap(m, df->bytes);
	return n;
}

int datafile_open_direct(const struct datafile *df, int flags)
{
	int fd = open(df->path, flags | O_DIRECT | O_CLOEXEC);

	if (fd < 0 && errno == EINVAL)
		fd = open(df->path, flags | O_CLOEXEC);
	if (fd < 0)
		die_err(errno, "opening %s", df->path);
	return fd;
}
