/* SPDX-License-Identifier: MIT */
/*
 * recv_range.c - receive a file upload over a socket straight into cached
 * pages: write-pin the pages of the next chunk of the file (lpc_pin with
 * LPC_PIN_WRITE), turn them into the iovec of exactly that chunk
 * (lpc_pin_iov), recvmsg(2) into it until it is full, unpin (which marks the
 * pages dirty), and lpc_fsync at the end.  No buffer of the program's own.
 *
 *   recv_range FILE SIZE [OFF]
 *
 * A sender thread makes SIZE bytes of a pattern and sends them over one end
 * of a socketpair in pieces of odd sizes; the receiver (the main thread)
 * stores them at OFF (default 0) of FILE, created or truncated first.  Then
 * it reads FILE back with a fresh descriptor (no lpc) and compares every
 * byte with what was sent.  Prints "ok" when every byte matched; exits 1 on
 * a mismatch or an error.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <lpc/lpc.h>

#define CHUNK_PAGES 16 /* pages write-pinned at a time */

struct sender {
	int sock;
	uint64_t size;
	int rc;
};

static unsigned char pattern(uint64_t i)
{
	return (unsigned char)(i * 131 + (i >> 12) * 7 + 1);
}

static void *send_main(void *arg)
{
	struct sender *s = arg;
	unsigned char buf[7001];
	uint64_t done = 0;

	while (done < s->size) {
		size_t n = sizeof(buf) - (size_t)(done % 1000); /* odd piece sizes */
		ssize_t w;

		if (n > s->size - done)
			n = (size_t)(s->size - done);
		for (size_t i = 0; i < n; i++)
			buf[i] = pattern(done + i);
		w = send(s->sock, buf, n, 0);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			s->rc = -errno;
			break;
		}
		done += (uint64_t)w;
	}
	shutdown(s->sock, SHUT_WR);
	return NULL;
}

/* Receives exactly len bytes into the pinned pages' iovec.
 * Return: 0, or a negative errno (-EPIPE: the sender stopped early). */
static int recv_all(int sock, struct iovec *iov, int k, size_t len)
{
	struct msghdr m = { 0 };
	size_t got = 0;

	m.msg_iov = iov;
	m.msg_iovlen = (size_t)k;
	while (got < len) {
		ssize_t r = recvmsg(sock, &m, MSG_WAITALL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EPIPE;
		got += (size_t)r;
		/* A short receive: move the iovec past what arrived. */
		while (r > 0 && m.msg_iovlen > 0) {
			if ((size_t)r >= m.msg_iov->iov_len) {
				r -= (ssize_t)m.msg_iov->iov_len;
				m.msg_iov++;
				m.msg_iovlen--;
			} else {
				m.msg_iov->iov_base = (char *)m.msg_iov->iov_base + r;
				m.msg_iov->iov_len -= (size_t)r;
				r = 0;
			}
		}
	}
	return 0;
}

/* Stores the stream's `size` bytes at [off, off + size) of f. */
static int receive(struct lpc_file *f, size_t ps, int sock, uint64_t off, uint64_t size)
{
	struct lpc_page *pages[CHUNK_PAGES];
	struct iovec iov[CHUNK_PAGES];
	uint64_t pos = off, end = off + size;

	while (pos < end) {
		/* Up to CHUNK_PAGES pages, the last chunk cut at the end. */
		uint64_t len = CHUNK_PAGES * ps - (pos & (ps - 1));
		int n, k, rc;

		if (len > end - pos)
			len = end - pos;
		n = lpc_pin(f, pos, (size_t)len, LPC_PIN_WRITE, pages, CHUNK_PAGES);
		if (n < 0) {
			fprintf(stderr, "lpc_pin(%" PRIu64 "): %s\n", pos, strerror(-n));
			return n;
		}
		k = lpc_pin_iov(pages, (unsigned)n, pos, (size_t)len, iov);
		rc = k < 0 ? k : recv_all(sock, iov, k, (size_t)len);
		/* Unpin in every case: the pages are locked until then. */
		lpc_unpin(pages, (unsigned)n, LPC_PIN_WRITE);
		if (rc) {
			fprintf(stderr, "receive at %" PRIu64 ": %s\n", pos, strerror(-rc));
			return rc;
		}
		pos += len;
	}
	return 0;
}

/* Compares FILE, read with a fresh descriptor, with the pattern. */
static int verify(const char *path, uint64_t off, uint64_t size)
{
	int fd = open(path, O_RDONLY);
	unsigned char buf[65536];
	uint64_t pos = 0, bad = 0;

	if (fd < 0) {
		perror(path);
		return -1;
	}
	while (pos < off + size) {
		ssize_t r = pread(fd, buf, sizeof(buf), (off_t)pos);

		if (r <= 0)
			break;
		for (ssize_t i = 0; i < r; i++) {
			uint64_t at = pos + (uint64_t)i;
			unsigned char want = at < off ? 0 : pattern(at - off);

			if (buf[i] != want && bad++ < 5)
				printf("MISMATCH at %" PRIu64 ": %u, want %u\n", at, buf[i], want);
		}
		pos += (uint64_t)r;
	}
	close(fd);
	if (pos != off + size)
		printf("MISMATCH: the file has %" PRIu64 " bytes, want %" PRIu64 "\n", pos,
		       off + size);
	return bad || pos != off + size ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct lpc_file *f;
	struct sender s = { 0 };
	pthread_t th;
	uint64_t off;
	int sv[2], rc;

	if (argc < 3) {
		fprintf(stderr, "usage: %s FILE SIZE [OFF]\n", argv[0]);
		return 2;
	}
	s.size = strtoull(argv[2], NULL, 0);
	off = argc > 3 ? strtoull(argv[3], NULL, 0) : 0;
	lpc_config_init(&cfg);
	cfg.cache_bytes = 16 << 20;
	rc = lpc_cache_create(&cfg, &c);
	if (rc) {
		fprintf(stderr, "lpc_cache_create: %s\n", strerror(-rc));
		return 1;
	}
	rc = lpc_file_open(c, argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644, &f);
	if (rc) {
		fprintf(stderr, "lpc_file_open(%s): %s\n", argv[1], strerror(-rc));
		lpc_cache_destroy(c);
		return 1;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		perror("socketpair");
		return 1;
	}
	s.sock = sv[1];
	pthread_create(&th, NULL, send_main, &s);
	rc = receive(f, cfg.page_size, sv[0], off, s.size);
	if (rc)
		shutdown(sv[0], SHUT_RD); /* lets the sender stop */
	pthread_join(th, NULL);
	close(sv[0]);
	close(sv[1]);
	if (!rc && s.rc)
		rc = s.rc;
	if (!rc) {
		/* The bytes are in dirty pages: make them the file's. */
		rc = lpc_fsync(f);
		if (rc)
			fprintf(stderr, "lpc_fsync: %s\n", strerror(-rc));
	}
	if (lpc_file_close(f) && !rc)
		rc = -EIO;
	lpc_cache_destroy(c);
	if (rc)
		return 1;
	printf("received %" PRIu64 " bytes at %" PRIu64 "\n", s.size, off);
	if (verify(argv[1], off, s.size))
		return 1;
	printf("ok\n");
	return 0;
}
