/* SPDX-License-Identifier: MIT */
/*
 * registry.c - the process's one lpc_cache, and one node per open database
 * file, shared by every connection and thread of the process.
 *
 * The cache is created by the first open through the VFS and lives until
 * the process exits (never destroyed: a connection may be opened at any
 * time, and destroying it would close lpc's descriptors, which drops the
 * process's POSIX locks on those files; see file.c).  Its budget:
 * lpc_cache_mb=N in the first open's URI, else LPC_SQLITE_CACHE_MB, else
 * 256 MiB; its page size LPC_SQLITE_PAGE_KB (KiB, default 4).
 *
 * Nodes: lpc_file_open returns the same lpc_file for every open of a file
 * (A.5), so the node is found by that pointer; it holds the coherence state
 * of file.c and lpc's size of the file.  Lock order: reg_lock -> node->lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sqlite_int.h"

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lpc_cache *_Atomic reg_cache;
static struct lpcs_node *reg_nodes; /* under reg_lock */
size_t lpcs_page_size = 4096;

static uint64_t env_u64(const char *name, uint64_t def, uint64_t lo, uint64_t hi)
{
	const char *s = getenv(name);
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return def;
	return v;
}

int lpcs_cache_get(const char *zName, struct lpc_cache **out)
{
	struct lpc_cache *c = atomic_load_explicit(&reg_cache, memory_order_acquire);
	struct lpc_config cfg;
	sqlite3_int64 mb;
	int rc;

	if (c) {
		*out = c;
		return SQLITE_OK;
	}
	pthread_mutex_lock(&reg_lock);
	c = atomic_load_explicit(&reg_cache, memory_order_relaxed);
	if (!c) {
		lpc_config_init(&cfg);
		mb = (sqlite3_int64)env_u64("LPC_SQLITE_CACHE_MB", 256, 1, 1u << 20);
		if (zName)
			mb = sqlite3_uri_int64(zName, "lpc_cache_mb", mb);
		if (mb < 1)
			mb = 1;
		cfg.cache_bytes = (size_t)mb << 20;
		cfg.page_size = (size_t)env_u64("LPC_SQLITE_PAGE_KB", 4, 1, 64) << 10;
		if (cfg.page_size & (cfg.page_size - 1))
			cfg.page_size = 4096;
		lpcs_page_size = cfg.page_size;
		rc = lpc_cache_create(&cfg, &c);
		if (rc < 0)
			c = NULL;
		else
			atomic_store_explicit(&reg_cache, c, memory_order_release);
	}
	pthread_mutex_unlock(&reg_lock);
	*out = c;
	return c ? SQLITE_OK : SQLITE_NOMEM;
}

struct lpc_cache *lpcs_cache_peek(void)
{
	return atomic_load_explicit(&reg_cache, memory_order_acquire);
}

struct lpcs_node *lpcs_node_get(struct lpc_file *lf, uint64_t size)
{
	struct lpcs_node *n;

	pthread_mutex_lock(&reg_lock);
	for (n = reg_nodes; n; n = n->next)
		if (n->lf == lf)
			break;
	if (n) {
		n->refs++;
	} else if ((n = calloc(1, sizeof(*n)))) {
		n->lf = lf;
		n->refs = 1;
		pthread_mutex_init(&n->lock, NULL);
		atomic_init(&n->size, size);
		n->next = reg_nodes;
		reg_nodes = n;
	}
	pthread_mutex_unlock(&reg_lock);
	return n;
}

void lpcs_node_put(struct lpcs_node *n)
{
	struct lpcs_node **pp;

	pthread_mutex_lock(&reg_lock);
	if (--n->refs) {
		pthread_mutex_unlock(&reg_lock);
		return;
	}
	for (pp = &reg_nodes; *pp != n; pp = &(*pp)->next)
		;
	*pp = n->next;
	pthread_mutex_unlock(&reg_lock);
	pthread_mutex_destroy(&n->lock);
	free(n);
}

LPCS_EXPORT int lpc_sqlite_stats(struct lpc_stats *out)
{
	struct lpc_cache *c = lpcs_cache_peek();

	if (!out)
		return SQLITE_MISUSE;
	memset(out, 0, sizeof(*out));
	if (c)
		lpc_stats(c, out);
	return SQLITE_OK;
}
