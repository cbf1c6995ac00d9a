/* SPDX-License-Identifier: MIT */
/*
 * stream_random.c - walks a list of random pages of FILE with a read stream
 * (lpc_stream_open/next/close): a callback yields the next page index and a
 * pointer handed back with the page (here, the entry's record), and lpc reads the pages ahead of the loop, several at a time.
 * Every page is compared with pread(2) of the same bytes; prints
 * "ok N pages, M distinct" and the counters.  Usage: stream_random FILE [N]
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <lpc/lpc.h>

/* One entry of the list: what the loop needs to know about its page. */
struct entry {
	uint64_t index;
};

struct list {
	uint64_t rng, pages;
	size_t n, next;
	struct entry *e;
};

/* The callback: the list's next page, or 0 at its end. */
static int next_index(void *arg, uint64_t *index, void **user)
{
	struct list *l = arg;

	if (l->next == l->n)
		return 0;
	l->rng ^= l->rng << 13; /* xorshift64 */
	l->rng ^= l->rng >> 7;
	l->rng ^= l->rng << 17;
	l->e[l->next].index = l->rng % l->pages;
	*index = l->e[l->next].index;
	*user = &l->e[l->next++];
	return 1;
}

static int fail(const char *what, long rc)
{
	fprintf(stderr, "stream_random: %s: %s\n", what, strerror((int)-rc));
	return 1;
}

int main(int argc, char **argv)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct lpc_file *f;
	struct lpc_stream *s;
	struct lpc_stats st;
	struct list l = { .rng = 88172645463325252ull, .n = 1000 };
	unsigned char *want, *seen;
	size_t got = 0, distinct = 0;
	off_t size;
	int fd, rc;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s FILE [N]\n", argv[0]);
		return 2;
	}
	if (argc == 3)
		l.n = strtoul(argv[2], NULL, 0);
	lpc_config_init(&cfg); /* 4 KiB pages */
	rc = lpc_cache_create(&cfg, &c);
	if (rc < 0)
		return fail("lpc_cache_create", rc);
	rc = lpc_file_open(c, argv[1], O_RDONLY, 0, &f);
	if (rc < 0)
		return fail(argv[1], rc);
	fd = open(argv[1], O_RDONLY);
	size = fd < 0 ? -1 : lseek(fd, 0, SEEK_END);
	if (size <= 0)
		return fail(argv[1], fd < 0 ? -errno : -EINVAL);
	l.pages = ((uint64_t)size + cfg.page_size - 1) / cfg.page_size;
	want = malloc(cfg.page_size);
	seen = calloc(l.pages, 1);
	l.e = calloc(l.n ? l.n : 1, sizeof(*l.e));
	if (!want || !seen || !l.e)
		return fail("malloc", -ENOMEM);

	/* Look ahead up to 32 pages, at most 16 of them read ahead at once. */
	rc = lpc_stream_open(f, next_index, &l,
			     &(struct lpc_stream_opts){ .max_distance = 32, .max_pages = 16 }, &s);
	if (rc < 0)
		return fail("lpc_stream_open", rc);
	for (;;) {
		struct lpc_page *p;
		struct entry *e;
		void *user;
		ssize_t n;

		rc = lpc_stream_next(s, &p, &user);
		if (rc == 0)
			break; /* the end of the list */
		if (rc < 0)
			return fail("lpc_stream_next", rc); /* this entry's error */
		e = user;
		if (e != &l.e[got]) {
			fprintf(stderr, "stream_random: entry %zu out of order\n", got);
			return 1;
		}
		/* The page as the kernel reads it: the file's bytes, zeros
		 * past its end. */
		memset(want, 0, cfg.page_size);
		n = pread(fd, want, cfg.page_size, (off_t)(e->index * cfg.page_size));
		if (n < 0 || memcmp(lpc_page_data(p), want, cfg.page_size)) {
			fprintf(stderr, "stream_random: page %" PRIu64 " differs\n", e->index);
			return 1;
		}
		distinct += !seen[e->index];
		seen[e->index] = 1;
		got++;
		lpc_page_put(p);
	}
	lpc_stream_close(s);
	lpc_stats(c, &st);
	printf("ok %zu pages, %zu distinct\nreads %" PRIu64 " read_pages %" PRIu64 "\n", got,
	       distinct, st.reads, st.read_pages);
	lpc_file_close(f);
	lpc_cache_destroy(c);
	close(fd);
	free(want);
	free(seen);
	free(l.e);
	return got == l.n ? 0 : 1;
}
