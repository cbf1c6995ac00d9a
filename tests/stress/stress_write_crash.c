/* SPDX-License-Identifier: MIT */
/*
 * stress_write_crash.c - crash rounds (guarantee J.2 of lpc.h): a child
 * writes random data through lpc, changes the size with lpc_truncate (grow
 * and shrink) and calls lpc_fsync, telling the parent through a pipe, before
 * each lpc_pwrite and lpc_truncate, what it does, and after each lpc_fsync
 * that returned 0, how many of those calls it covers; the file starts empty
 * and writes land anywhere in it, so many extend it (past the end, leaving
 * holes).  The parent SIGKILLs the child at a random moment, then checks the
 * file through a fresh descriptor against the state the calls that the last
 * acknowledged fsync covers left (bytes and size S):
 *  - the size: S, unless a later call (which may have reached the file)
 *    moved it: then between the smallest size a later truncate set and the
 *    largest end a later call made (a write's end rounded up to its page:
 *    writeback writes whole pages);
 *  - every byte below S holds what the covered calls left there, or what a
 *    later write put there, or zero if a later truncate cut below it;
 *  - every byte from S to the end of the file is zero or a later write's:
 *    never data that a covered truncate cut off.
 *
 * Half the writes go through a write pin (lpc_pin(LPC_PIN_WRITE), the
 * bytes copied into lpc_pin_iov's vector, lpc_unpin: guarantees I.4-I.7),
 * the others through lpc_pwrite: an fsync after either covers it alike.
 *
 * LPC_CRASH_ROUNDS rounds (default 60; CI: at least 50), each 5-40 ms of
 * writing, on every write backend.
 *
 * Usage: stress_write_crash [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <signal.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "../common/write_test.h"

#define PS 4096u
#define SPAN (48u * PS) /* the file the rounds write */

struct rec {
	uint32_t type; /* 'W' a write is about to be made; 'T' a truncate to off
			* is; 'F' an fsync returned 0 */
	uint32_t len;
	uint64_t off;
	uint64_t seed; /* W: the data's seed; F: the calls (W, T) it covers */
};

static unsigned char data_byte(uint64_t seed, uint64_t pos)
{
	uint64_t s = seed ^ (pos * 0x9e3779b97f4a7c15ull);

	return (unsigned char)(tst_rnd(&s) >> 7);
}

static void put_rec(int fd, const struct rec *r)
{
	if (write(fd, r, sizeof(*r)) != (ssize_t)sizeof(*r))
		_exit(3);
}

/* The write of r through a write pin.  Return: 0, or nonzero on an error. */
static int wpin_write(struct lpc_file *f, const struct rec *r, const unsigned char *buf)
{
	struct lpc_page *pages[4];
	struct iovec iov[4];
	size_t done = 0;
	int n = lpc_pin(f, r->off, r->len, LPC_PIN_WRITE, pages, 4), k;

	if (n <= 0)
		return 1;
	k = lpc_pin_iov(pages, (unsigned)n, r->off, r->len, iov);
	for (int i = 0; i < k; i++) {
		memcpy(iov[i].iov_base, buf + done, iov[i].iov_len);
		done += iov[i].iov_len;
	}
	lpc_unpin(pages, (unsigned)n, LPC_PIN_WRITE);
	return k <= 0 || done != r->len;
}

static __attribute__((noreturn)) void child(const char *path, int backend, int wfd, uint64_t seed)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct lpc_file *f;
	unsigned char *buf = malloc(3 * PS);
	uint64_t rng = seed, nw = 0;

	lpc_config_init(&cfg);
	cfg.cache_bytes = 256 * PS;
	cfg.io_backend = backend;
	if (!buf || lpc_cache_create(&cfg, &c) || lpc_file_open(c, path, O_RDWR, 0644, &f))
		_exit(2);
	for (;;) {
		struct rec r = { .type = 'W' };

		if (tst_rnd(&rng) % 8 == 0) {
			/* A size change: shrink or grow, often mid-page. */
			r.type = 'T';
			r.off = tst_rnd(&rng) % (SPAN + 1);
			if (tst_rnd(&rng) % 3 == 0)
				r.off &= ~(uint64_t)(PS - 1);
			put_rec(wfd, &r);
			if (lpc_truncate(f, r.off) != 0)
				_exit(6);
			nw++;
			continue;
		}

		r.off = tst_rnd(&rng) % (SPAN - 3 * PS);
		r.len = 1 + (uint32_t)(tst_rnd(&rng) % (3 * PS));
		if (tst_rnd(&rng) % 4 == 0) {
			r.off &= ~(uint64_t)(PS - 1);
			r.len = PS * (1 + (uint32_t)(tst_rnd(&rng) % 3));
		}
		r.seed = tst_rnd(&rng);
		for (uint32_t i = 0; i < r.len; i++)
			buf[i] = data_byte(r.seed, r.off + i);
		put_rec(wfd, &r);
		if (tst_rnd(&rng) % 2 == 0) {
			if (wpin_write(f, &r, buf))
				_exit(7);
		} else if (lpc_pwrite(f, buf, r.len, r.off) != (ssize_t)r.len) {
			_exit(4);
		}
		nw++;
		if (tst_rnd(&rng) % 6 == 0) {
			uint64_t covered = nw;
			int rc = lpc_fsync(f);

			if (rc)
				_exit(5);
			r = (struct rec){ .type = 'F', .seed = covered };
			put_rec(wfd, &r);
		}
	}
}

/* One round.  Return: true if the file holds every durable byte. */
static bool round_one(const char *dir, int backend, int round, uint64_t *rng)
{
	char path[600];
	struct rec *recs = NULL;
	size_t nrec = 0, cap = 0;
	unsigned char *ref = calloc(1, SPAN), *disk = calloc(1, SPAN + PS);
	unsigned char *later = calloc(1, SPAN); /* a later write covers the byte */
	uint64_t durable = 0, size = 0, nw = 0;
	uint64_t later_cut = UINT64_MAX, later_max = 0; /* the calls after it */
	bool later_trunc = false;
	int p[2], status;
	int64_t dsize;
	pid_t pid;
	bool ok = true;

	REQUIRE(tst_make_file_in(dir, "crash", 0, 0, path, sizeof(path)) == 0);
	REQUIRE(pipe(p) == 0 && ref && disk && later);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		child(path, backend, p[1], tst_rnd(rng));
	}
	close(p[1]);
	/* Reads records while the child runs, then kills it at random. */
	{
		uint64_t until = tst_now_ns() + (5 + tst_rnd(rng) % 36) * 1000000ull;

		fcntl(p[0], F_SETFL, O_NONBLOCK);
		while (tst_now_ns() < until) {
			struct rec r;
			ssize_t n = read(p[0], &r, sizeof(r));

			if (n == (ssize_t)sizeof(r)) {
				if (nrec == cap) {
					cap = cap ? 2 * cap : 1024;
					recs = realloc(recs, cap * sizeof(*recs));
					REQUIRE(recs);
				}
				recs[nrec++] = r;
			} else {
				tst_sleep_us(200);
			}
		}
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		fcntl(p[0], F_SETFL, 0);
		for (;;) {
			struct rec r;

			if (read(p[0], &r, sizeof(r)) != (ssize_t)sizeof(r))
				break;
			if (nrec == cap) {
				cap = cap ? 2 * cap : 1024;
				recs = realloc(recs, cap * sizeof(*recs));
				REQUIRE(recs);
			}
			recs[nrec++] = r;
		}
		close(p[0]);
	}
	if (!CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		   "round %d: the child died by itself (status 0x%x)", round, status))
		ok = false;
	/* The state the calls the last acknowledged fsync covers left. */
	for (size_t i = 0; i < nrec; i++)
		if (recs[i].type == 'F')
			durable = recs[i].seed;
	for (size_t i = 0; i < nrec; i++) {
		const struct rec *r = &recs[i];

		if (r->type == 'F')
			continue;
		if (nw < durable && r->type == 'W') {
			for (uint32_t k = 0; k < r->len; k++)
				ref[r->off + k] = data_byte(r->seed, r->off + k);
			if (r->off + r->len > size)
				size = r->off + r->len;
		} else if (nw < durable) {
			if (r->off < size)
				memset(ref + r->off, 0, size - r->off);
			size = r->off;
		} else if (r->type == 'W') {
			uint64_t end = (r->off + r->len + PS - 1) & ~(uint64_t)(PS - 1);

			memset(later + r->off, 1, r->len);
			later_max = end > later_max ? end : later_max;
		} else {
			later_cut = r->off < later_cut ? r->off : later_cut;
			later_max = r->off > later_max ? r->off : later_max;
			later_trunc = true;
		}
		nw++;
	}
	dsize = tst_kernel_read(path, disk, SPAN + PS);
	{
		uint64_t lo = later_trunc && later_cut < size ? later_cut : size;
		uint64_t hi = later_max > size ? later_max : size;

		ok &= CHECK(dsize >= (int64_t)lo && dsize <= (int64_t)hi,
			    "round %d: file %lld bytes; %llu durable, later calls allow %llu .. %llu",
			    round, (long long)dsize, (unsigned long long)size, (unsigned long long)lo,
			    (unsigned long long)hi);
	}
	for (uint64_t b = 0; ok && b < (uint64_t)dsize && b < SPAN; b++) {
		unsigned char want = b < size ? ref[b] : 0;
		bool good = disk[b] == want || (later_trunc && b >= later_cut && disk[b] == 0);

		if (good)
			continue;
		/* A later write may have reached the disk: any of theirs. */
		for (size_t i = 0; !good && later[b] && i < nrec; i++) {
			const struct rec *r = &recs[i];

			if (r->type == 'W' && b >= r->off && b < r->off + r->len &&
			    disk[b] == data_byte(r->seed, b))
				good = true;
		}
		if (!good)
			ok &= CHECK(good, "round %d: byte %llu is 0x%02x, want 0x%02x (%s the %llu durable bytes)",
				    round, (unsigned long long)b, disk[b], want, b < size ? "one of" : "past",
				    (unsigned long long)size);
	}
	if (round < 3 || !ok)
		printf("  round %d: %zu records, %llu calls durable, %llu bytes\n", round, nrec,
		       (unsigned long long)durable, (unsigned long long)size);
	unlink(path);
	free(recs);
	free(ref);
	free(disk);
	free(later);
	return ok;
}

int main(int argc, char **argv)
{
	const char *env = getenv("LPC_CRASH_ROUNDS");
	int rounds = env && *env ? atoi(env) : 60;
	uint64_t rng;
	const char *dir;

	tst_init(argc, argv, 280);
	dir = tst_tmpdir();
	if (!dir)
		tst_skip("no temporary directory");
	rng = tst_seed;
	for (size_t b = 0; b < TST_NWRITE_BACKENDS; b++) {
		int fails = 0;

		printf("backend %s: %d rounds\n", tst_backend_name(tst_write_backends[b]), rounds);
		for (int i = 0; i < rounds && fails < 3; i++)
			fails += !round_one(dir, tst_write_backends[b], i, &rng);
	}
	return tst_finish();
}
