/* ws_pattern.c - test_workingset's workloads 3 and 4 through the public API
 * (null backend, readahead off, N frames of 4 KiB), with the workload's
 * logical pages laid out three ways:
 *   stride S  logical page L is page S*L of one file (S = 1: the unit
 *             test's own layout; S = 8: one page of each group of eight,
 *             as 32 KiB records read one page each);
 *   files     logical page L is page 0 of its own one-page file (many
 *             small files: every page's index is 0).
 * With the old shadow key the layout changes nothing; with the grouped
 * key, the stride-8 and small-file layouts use one slot in eight.
 *   workload 4: A = 85 % of the cache hit until promoted, then idle (with
 *     a cold page per 4 hot reads); then passes of a loop over B = 30 %:
 *     refaults must bring the active target down so that the loop hits.
 *   workload 3: a hot set of 70 % read uniformly, four scanned pages per
 *     hot read over a range 4x the cache; hit ratio of the last sixth.
 *
 * cc -O2 -I include -o ws_pattern ws_pattern.c -L<lib dir> -llpc
 * LD_LIBRARY_PATH=<lib dir> ./ws_pattern <S|files> <3|4> <N> <seed> [B percent, 30]
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lpc/lpc.h>

#define PS 4096u

static uint64_t S = 1, N = 16384, BPCT = 30, rng = 0x1234567;
static int files_mode;
static struct lpc_file *one, **many;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void die(const char *w, int rc)
{
	fprintf(stderr, "%s: %d\n", w, rc);
	exit(2);
}

static struct lpc_file *fof(uint64_t l, uint64_t *idx)
{
	if (files_mode) {
		*idx = 0;
		return many[l];
	}
	*idx = S * l;
	return one;
}

static void get(uint64_t l)
{
	struct lpc_page *p;
	uint64_t i;
	struct lpc_file *f = fof(l, &i);
	int rc = lpc_page_get(f, i, 0, &p);

	if (rc)
		die("get", rc);
	lpc_page_put(p);
}

static int touch(uint64_t l)
{
	struct lpc_page *p;
	uint64_t i;
	struct lpc_file *f = fof(l, &i);
	int rc = lpc_page_find(f, i, &p);

	if (rc == 0) {
		lpc_page_put(p);
		return 1;
	}
	if (rc != -ENOENT && rc != -EAGAIN)
		die("find", rc);
	get(l);
	return 0;
}

int main(int argc, char **argv)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct lpc_stats st;
	char dir[] = "/tmp/ws_patternXXXXXX", path[64];
	uint64_t M; /* logical pages the workload uses: [0, 12N) at most */
	int w;

	if (argc < 5)
		return 2;
	files_mode = !strcmp(argv[1], "files");
	S = files_mode ? 0 : strtoull(argv[1], NULL, 0);
	w = atoi(argv[2]);
	N = strtoull(argv[3], NULL, 0);
	rng ^= strtoull(argv[4], NULL, 0) * 0x9e3779b97f4a7c15ull;
	if (argc > 5)
		BPCT = strtoull(argv[5], NULL, 0);
	M = w == 4 ? 8 * N : 12 * N;
	if (!mkdtemp(dir))
		die("mkdtemp", errno);
	lpc_config_init(&cfg);
	cfg.cache_bytes = (uint64_t)N * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.readahead_kb = LPC_READAHEAD_OFF;
	if (lpc_cache_create(&cfg, &c))
		die("cache", 0);
	if (files_mode) {
		/* Only the logical pages the workload touches get a file. */
		many = calloc(M, sizeof(*many));
		for (uint64_t l = 0; l < M; l++) {
			int used = w == 4 ? (l < N * 85 / 100 || (l >= 2 * N && l < 2 * N + N * BPCT / 100) ||
					     l >= 4 * N)
					  : (l < N * 7 / 10 || l >= 8 * N);
			int fd;

			if (!used)
				continue;
			snprintf(path, sizeof(path), "%s/%" PRIu64, dir, l);
			fd = open(path, O_CREAT | O_WRONLY, 0600);
			if (fd < 0 || ftruncate(fd, PS) != 0)
				die("file", errno);
			close(fd);
			if (lpc_file_open(c, path, O_RDONLY, 0, &many[l]))
				die("open", (int)l);
		}
	} else {
		int fd;

		snprintf(path, sizeof(path), "%s/one", dir);
		fd = open(path, O_CREAT | O_WRONLY, 0600);
		if (fd < 0 || ftruncate(fd, (off_t)(S * M * PS)) != 0)
			die("file", errno);
		close(fd);
		if (lpc_file_open(c, path, O_RDONLY, 0, &one))
			die("open", 0);
	}
	printf("%-6s N=%-6" PRIu64 " ", argv[1], N);
	if (w == 4) {
		const uint64_t A = N * 85 / 100, B = N * BPCT / 100;
		uint64_t cold = 4 * N;

		for (int round = 0; round < 8; round++)
			for (uint64_t k = 0; k < 2 * A; k++) {
				get(rnd() % A);
				if (k % 4 == 0) {
					get(cold++);
					if (cold == 8 * N)
						cold = 4 * N;
				}
			}
		printf("loop over %" PRIu64 "%% beside an idle 85%%, hit ratio per pass:", BPCT);
		for (int pass = 0; pass < 12; pass++) {
			uint64_t hits = 0;

			for (uint64_t i = 0; i < B; i++)
				hits += touch(2 * N + i);
			printf(" %.2f", (double)hits / (double)B);
		}
	} else {
		const uint64_t H = N * 7 / 10;
		uint64_t scan = 8 * N, hits = 0, reads = 0;

		for (uint64_t i = 0; i < 30 * H; i++) {
			int hit = touch(rnd() % H);

			if (i >= 25 * H) {
				reads++;
				hits += hit;
			}
			for (int k = 0; k < 4; k++) {
				get(scan++);
				if (scan == 12 * N)
					scan = 8 * N;
			}
		}
		printf("scan beside a hot set of 70%%: hot hit ratio %.3f", (double)hits / (double)reads);
	}
	lpc_stats(c, &st);
	printf("  (evictions %" PRIu64 ")\n", st.evictions);
	if (files_mode) {
		for (uint64_t l = 0; l < M; l++)
			if (many[l]) {
				lpc_file_close(many[l]);
				snprintf(path, sizeof(path), "%s/%" PRIu64, dir, l);
				unlink(path);
			}
	} else {
		lpc_file_close(one);
		snprintf(path, sizeof(path), "%s/one", dir);
		unlink(path);
	}
	lpc_cache_destroy(c);
	rmdir(dir);
	return 0;
}
