/* SPDX-License-Identifier: MIT */
/* fl.h - helpers for the lazy flusher's attack programs (attack_flush/).
 * Linked with -Wl,--wrap=pthread_create: every pthread_create that
 * liblpc.a makes while fl_fail_create is set fails with EAGAIN (a process
 * at its thread limit for a moment), the others are the real call. */
#ifndef FL_H
#define FL_H
#include <dirent.h>
#include "../attack/att.h"

static _Atomic int fl_fail_create;
static _Atomic int fl_failed;
int __real_pthread_create(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
	if (fl_fail_create) {
		fl_failed++;
		return EAGAIN;
	}
	return __real_pthread_create(t, a, fn, arg);
}

/* Threads of this process named lpc-flusher. */
static inline int fl_flushers(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d))) {
		char p[300], comm[64] = "";
		FILE *fp;

		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/proc/self/task/%s/comm", e->d_name);
		fp = fopen(p, "r");
		if (fp) {
			if (fgets(comm, sizeof(comm), fp) && !strncmp(comm, "lpc-flusher", 11))
				n++;
			fclose(fp);
		}
	}
	if (d)
		closedir(d);
	return n;
}

static inline struct lpc_cache *fl_cache(size_t bytes, uint64_t expire_ms, uint64_t bg,
					 uint64_t limit)
{
	struct lpc_config cfg;
	struct lpc_cache *c = NULL;
	int rc;

	lpc_config_init(&cfg);
	cfg.cache_bytes = bytes;
	cfg.page_size = 4096;
	cfg.io_backend = LPC_IO_SYNC;
	cfg.dirty_expire_ms = expire_ms;
	cfg.dirty_background_pct = bg;
	cfg.dirty_limit_pct = limit;
	rc = lpc_cache_create(&cfg, &c);
	if (rc) {
		printf("lpc_cache_create: %d\n", rc);
		exit(1);
	}
	return c;
}

/* Pages [0, n) of path as the kernel has them: how many hold tag's words. */
static inline uint64_t fl_kernel_pages(const char *path, uint64_t n, uint64_t tag)
{
	static char buf[4096];
	uint64_t good = 0;
	int fd = open(path, O_RDONLY);

	for (uint64_t i = 0; fd >= 0 && i < n; i++)
		if (pread(fd, buf, 4096, (off_t)(i * 4096)) == 4096 &&
		    att_bad_word(buf, 4096, i * 4096, tag) < 0)
			good++;
	if (fd >= 0)
		close(fd);
	return good;
}

/* Writes page i of f with tag's words. */
static inline void fl_write_page(struct lpc_file *f, uint64_t i, uint64_t tag)
{
	static uint64_t w[512];

	for (int k = 0; k < 512; k++)
		w[k] = att_word(tag, i * 4096 + (uint64_t)k * 8);
	if (lpc_pwrite(f, w, 4096, i * 4096) != 4096) {
		printf("lpc_pwrite failed\n");
		exit(1);
	}
}
#endif
