/* SPDX-License-Identifier: MIT */
/* memcg.c - the read benchmark's memory cgroup (see memcg.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memcg.h"

/* The mount point of the v1 memory hierarchy (v == 1) or of cgroup2. */
static int find_mount(int v, char *dir, size_t len)
{
	FILE *f = fopen("/proc/self/mounts", "r");
	char src[256], mnt[PATH_MAX], type[64], opts[1024];
	int found = -1;

	if (!f)
		return -1;
	while (fscanf(f, "%255s %4095s %63s %1023s %*d %*d", src, mnt, type, opts) == 4) {
		bool memory = false;

		if (v == 2 && !strcmp(type, "cgroup2")) {
			found = 0;
		} else if (v == 1 && !strcmp(type, "cgroup")) {
			for (char *s = opts, *tok; (tok = strsep(&s, ","));)
				memory |= !strcmp(tok, "memory");
			found = memory ? 0 : -1;
		}
		if (!found) {
			snprintf(dir, len, "%s", mnt);
			break;
		}
	}
	fclose(f);
	return found;
}

/* This process's group in hierarchy v (1: the one with "memory"). */
static int own_group(int v, char *path, size_t len)
{
	FILE *f = fopen("/proc/self/cgroup", "r");
	char line[PATH_MAX + 128];
	int found = -1;

	if (!f)
		return -1;
	while (found && fgets(line, sizeof(line), f)) {
		char *ctl = strchr(line, ':'), *p;
		bool memory = false;

		if (!ctl)
			continue;
		ctl++;
		p = strchr(ctl, ':');
		if (!p)
			continue;
		*p++ = '\0';
		p[strcspn(p, "\n")] = '\0';
		if (v == 2 && !strncmp(line, "0:", 2) && !*ctl) {
			found = 0;
		} else if (v == 1) {
			for (char *s = ctl, *tok; (tok = strsep(&s, ","));)
				memory |= !strcmp(tok, "memory");
			found = memory ? 0 : -1;
		}
		if (!found)
			snprintf(path, len, "%s", p);
	}
	fclose(f);
	return found;
}

static int write_str(const char *dir, const char *file, const char *val)
{
	char path[PATH_MAX + 64];
	ssize_t n;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	n = write(fd, val, strlen(val));
	if (n < 0)
		err = errno;
	else if ((size_t)n != strlen(val))
		err = EIO;
	close(fd);
	return err;
}

static uint64_t read_u64(const char *dir, const char *file)
{
	char path[PATH_MAX + 64], buf[64];
	unsigned long long v;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "r");
	if (!f)
		return UINT64_MAX;
	if (!fgets(buf, sizeof(buf), f) || !strncmp(buf, "max", 3) ||
	    sscanf(buf, "%llu", &v) != 1)
		v = UINT64_MAX;
	fclose(f);
	return v;
}

static int try_version(struct memcg *m, int v, const char *name, uint64_t limit)
{
	char mnt[PATH_MAX], own[PATH_MAX], parent[2 * PATH_MAX + 2], val[32];
	struct stat st;
	int err;

	if (find_mount(v, mnt, sizeof(mnt)) || own_group(v, own, sizeof(own))) {
		snprintf(m->why, sizeof(m->why), "no cgroup v%d %s mounted", v,
			 v == 1 ? "memory hierarchy" : "hierarchy");
		return -1;
	}
	snprintf(parent, sizeof(parent), "%s%s", mnt, strcmp(own, "/") ? own : "");
	/* In a cgroup namespace the path may not resolve: use the root. */
	if (stat(parent, &st) || !S_ISDIR(st.st_mode))
		snprintf(parent, sizeof(parent), "%s", mnt);
	if (snprintf(m->path, sizeof(m->path), "%s/%s", parent, name) >= (int)sizeof(m->path)) {
		snprintf(m->why, sizeof(m->why), "cgroup path too long");
		return -1;
	}
	m->parent_limit = read_u64(parent, v == 1 ? "memory.limit_in_bytes" : "memory.max");
	if (v == 2) /* fails where it is on already, or may not be: see below */
		write_str(parent, "cgroup.subtree_control", "+memory");
	if (mkdir(m->path, 0755)) {
		snprintf(m->why, sizeof(m->why), "cannot create %.160s: %s", m->path, strerror(errno));
		m->path[0] = '\0';
		return -1;
	}
	m->version = v;
	snprintf(parent, sizeof(parent), "%s/memory.max", m->path);
	if (v == 2 && access(parent, F_OK)) {
		snprintf(m->why, sizeof(m->why),
			 "the v2 memory controller is not enabled for children of %.160s", parent);
		memcg_remove(m);
		return -1;
	}
	snprintf(val, sizeof(val), "%" PRIu64, limit);
	err = write_str(m->path, v == 1 ? "memory.limit_in_bytes" : "memory.max", val);
	if (err) {
		snprintf(m->why, sizeof(m->why), "cannot set the limit of %.160s: %s", m->path,
			 strerror(err));
		memcg_remove(m);
		return -1;
	}
	if (v == 2)
		write_str(m->path, "memory.swap.max", "0"); /* where swap exists */
	return 0;
}

int memcg_create(struct memcg *m, const char *name, uint64_t limit)
{
	char why1[256];

	memset(m, 0, sizeof(*m));
	m->parent_limit = UINT64_MAX;
	if (!try_version(m, 1, name, limit))
		return 0;
	snprintf(why1, sizeof(why1), "%s", m->why);
	if (!try_version(m, 2, name, limit))
		return 0;
	snprintf(m->why + strlen(m->why), sizeof(m->why) - strlen(m->why),
		 "; v1: %s", why1);
	return -1;
}

int memcg_add(const struct memcg *m, pid_t pid)
{
	char val[32];

	snprintf(val, sizeof(val), "%d", (int)pid);
	return write_str(m->path, "cgroup.procs", val);
}

uint64_t memcg_stat(const struct memcg *m, const char *key)
{
	char path[PATH_MAX + 16], k[64];
	unsigned long long v, found = UINT64_MAX;
	FILE *f;

	if (!m->version)
		return UINT64_MAX;
	snprintf(path, sizeof(path), "%s/memory.stat", m->path);
	f = fopen(path, "r");
	if (!f)
		return UINT64_MAX;
	while (fscanf(f, "%63s %llu", k, &v) == 2)
		if (!strcmp(k, key)) {
			found = v;
			break;
		}
	fclose(f);
	return found;
}

uint64_t memcg_usage(const struct memcg *m)
{
	if (!m->version)
		return UINT64_MAX;
	return read_u64(m->path, m->version == 1 ? "memory.usage_in_bytes" : "memory.current");
}

int memcg_set_limit(const struct memcg *m, uint64_t limit)
{
	char val[32];

	if (!m->version)
		return ENOENT;
	snprintf(val, sizeof(val), "%" PRIu64, limit);
	return write_str(m->path, m->version == 1 ? "memory.limit_in_bytes" : "memory.max", val);
}

void memcg_remove(struct memcg *m)
{
	if (!m->version)
		return;
	m->version = 0;
	rmdir(m->path);
}
