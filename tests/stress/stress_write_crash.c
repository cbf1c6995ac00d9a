/* SPDX-License-Identifier: MIT */
/*
 * stress_write_crash.c - crash rounds (guarantee H.2 of lpc.h): a child
 * writes random data through lpc and calls lpc_fsync, telling the parent
 * through a pipe, before each lpc_pwrite, what it writes, and after each
 * lpc_fsync that returned 0, how many writes it covers; the parent SIGKILLs
 * the child at a random moment, then checks the file through a fresh
 * descriptor: every byte the last acknowledged fsync covers holds what the
 * writes before it left there, or what a later write (which may have
 * reached the disk too) put there; the file is at least that long.
 *
 * LPC_CRASH_ROUNDS rounds (default 60; CI: at least 50), each 5-40 ms of
 * writing, on every write backend.
 *
 * Usage: stress_write_crash [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <signal.h>
#include <sys/wait.h>

#include "../common/write_test.h"

#define PS 4096u
#define SPAN (48u * PS) /* the file the rounds write */

struct rec {
	uint32_t type; /* 'W' a write is about to be made; 'F' an fsync returned 0 */
	uint32_t len;
	uint64_t off;
	uint64_t seed; /* W: the data's seed; F: the writes it covers */
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
		if (lpc_pwrite(f, buf, r.len, r.off) != (ssize_t)r.len)
			_exit(4);
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
	/* The writes the last acknowledged fsync covers. */
	for (size_t i = 0; i < nrec; i++)
		if (recs[i].type == 'F')
			durable = recs[i].seed;
	for (size_t i = 0; i < nrec; i++) {
		const struct rec *r = &recs[i];

		if (r->type != 'W')
			continue;
		if (nw < durable) {
			for (uint32_t k = 0; k < r->len; k++)
				ref[r->off + k] = data_byte(r->seed, r->off + k);
			if (r->off + r->len > size)
				size = r->off + r->len;
		} else {
			memset(later + r->off, 1, r->len);
		}
		nw++;
	}
	dsize = tst_kernel_read(path, disk, SPAN + PS);
	ok &= CHECK(dsize >= (int64_t)size, "round %d: file %lld bytes, %llu durable", round,
		    (long long)dsize, (unsigned long long)size);
	for (uint64_t b = 0; ok && b < size; b++) {
		bool good = disk[b] == ref[b];

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
			ok &= CHECK(good, "round %d: durable byte %llu is 0x%02x, want 0x%02x", round,
			    (unsigned long long)b, disk[b], ref[b]);
	}
	if (round < 3 || !ok)
		printf("  round %d: %zu records, %llu writes durable, %llu bytes\n", round, nrec,
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
