/* SPDX-License-Identifier: MIT */
/*
 * serve_range.c - serve byte ranges of a file over a socket with no copy:
 * pin the cached pages of each range (lpc_pin), turn them into the iovec of
 * exactly the range (lpc_pin_iov) and hand it to sendmsg(2); unpin.
 *
 *   serve_range FILE [OFF:LEN ...]
 *
 * The server thread answers each request on one end of a socketpair; the
 * client (the main thread) reads the bytes from the other end and compares
 * them with pread(2) of the file.  Without ranges it serves a fixed mix:
 * the whole file, unaligned pieces, ranges past the end.  Prints one line per
 * range and "ok" when every byte matched; exits 1 on a mismatch or an error.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <lpc/lpc.h>

#define CHUNK_PAGES 16 /* pages pinned at a time */

struct req {
	uint64_t off, len;
};

struct server {
	struct lpc_file *f;
	size_t page_size;
	uint64_t size;
	int sock;
	const struct req *reqs;
	int nreq;
	int rc;
};

/* Sends [off, off + len) of the file, cut at its end, from pinned pages. */
static int serve(struct server *s, uint64_t off, uint64_t len)
{
	struct lpc_page *pages[CHUNK_PAGES];
	struct iovec iov[CHUNK_PAGES];

	if (off >= s->size)
		return 0;
	if (len > s->size - off)
		len = s->size - off;
	while (len > 0) {
		/* At most CHUNK_PAGES pages, whatever the offset in the first. */
		uint64_t room = (uint64_t)CHUNK_PAGES * s->page_size - off % s->page_size;
		size_t n = (size_t)(len < room ? len : room);
		int np, k, done = 0;

		np = lpc_pin(s->f, off, n, LPC_PIN_READ, pages, CHUNK_PAGES);
		if (np < 0)
			return np;
		k = lpc_pin_iov(pages, (unsigned)np, off, n, iov);
		while (k > 0 && done < k) {
			struct msghdr mh = { .msg_iov = iov + done, .msg_iovlen = (size_t)(k - done) };
			ssize_t w = sendmsg(s->sock, &mh, MSG_NOSIGNAL);

			if (w < 0) {
				if (errno == EINTR)
					continue;
				k = -errno;
				break;
			}
			/* Skip what went out; trim a partly sent entry. */
			while (w > 0 && done < k) {
				if ((size_t)w >= iov[done].iov_len) {
					w -= (ssize_t)iov[done].iov_len;
					done++;
				} else {
					iov[done].iov_base = (char *)iov[done].iov_base + w;
					iov[done].iov_len -= (size_t)w;
					w = 0;
				}
			}
		}
		lpc_unpin(pages, (unsigned)np, LPC_PIN_READ);
		if (k < 0)
			return k;
		off += n;
		len -= n;
	}
	return 0;
}

static void *server_main(void *arg)
{
	struct server *s = arg;

	for (int i = 0; i < s->nreq && !s->rc; i++)
		s->rc = serve(s, s->reqs[i].off, s->reqs[i].len);
	shutdown(s->sock, SHUT_WR);
	return NULL;
}

/* Reads exactly len bytes (fewer at end of stream). */
static size_t read_full(int fd, char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = read(fd, buf + got, len - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	return got;
}

int main(int argc, char **argv)
{
	struct req deflt[] = {
		{ 0, UINT64_MAX }, { 1, 10 }, { 4090, 12 }, { 5000, 70000 },
		{ 8191, 1 }, { 100, 0 }, { UINT64_MAX / 2, 5 },
	};
	struct req *reqs = deflt;
	int nreq = (int)(sizeof(deflt) / sizeof(deflt[0]));
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct server s = { 0 };
	int sv[2], fd, rc, bad = 0;
	pthread_t th;
	struct stat st;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE [OFF:LEN ...]\n", argv[0]);
		return 2;
	}
	if (argc > 2) {
		nreq = argc - 2;
		reqs = calloc((size_t)nreq, sizeof(*reqs));
		if (!reqs)
			return 1;
		for (int i = 0; i < nreq; i++)
			if (sscanf(argv[i + 2], "%" SCNu64 ":%" SCNu64, &reqs[i].off, &reqs[i].len) != 2) {
				fprintf(stderr, "%s: bad range '%s' (OFF:LEN)\n", argv[0], argv[i + 2]);
				return 2;
			}
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "%s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	lpc_config_init(&cfg);
	cfg.cache_bytes = 16 << 20;
	rc = lpc_cache_create(&cfg, &c);
	if (rc == 0)
		rc = lpc_file_open(c, argv[1], O_RDONLY, 0, &s.f);
	if (rc < 0) {
		fprintf(stderr, "%s: %s\n", argv[1], strerror(-rc));
		return 1;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
		perror("socketpair");
		return 1;
	}
	s.page_size = cfg.page_size;
	s.size = (uint64_t)st.st_size;
	s.sock = sv[0];
	s.reqs = reqs;
	s.nreq = nreq;
	if (pthread_create(&th, NULL, server_main, &s) != 0)
		return 1;

	for (int i = 0; i < nreq; i++) {
		uint64_t off = reqs[i].off, len = reqs[i].len;
		size_t want = off >= s.size ? 0 : (size_t)(len < s.size - off ? len : s.size - off);
		char *got = malloc(want + 1), *ref = malloc(want + 1);
		size_t n;

		if (!got || !ref)
			return 1;
		n = read_full(sv[1], got, want);
		if (want && pread(fd, ref, want, (off_t)off) != (ssize_t)want) {
			perror("pread");
			return 1;
		}
		printf("range %" PRIu64 "+%" PRIu64 ": %zu bytes%s\n", off, len, n,
		       n == want && !memcmp(got, ref, want) ? "" : " MISMATCH");
		bad |= n != want || memcmp(got, ref, want);
		free(got);
		free(ref);
	}
	pthread_join(th, NULL);
	if (s.rc) {
		fprintf(stderr, "server: %s\n", strerror(-s.rc));
		bad = 1;
	}
	close(sv[0]);
	close(sv[1]);
	close(fd);
	lpc_file_close(s.f);
	if (lpc_cache_destroy(c) != 0)
		bad = 1;
	if (reqs != deflt)
		free(reqs);
	if (!bad)
		printf("ok\n");
	return bad;
}
