/* pread_cold.c - a cold lpc_pread of a file in large calls with readahead
 * off, so that only the demand path's runs (run.c, at most run_max
 * pages each) read it: MB/s and read I/Os of one pass through a fresh
 * 256 MiB cache, per backend.  The file: an existing one (lpc reads it
 * O_DIRECT, so the kernel's page cache plays no part).
 *
 * cc -O2 -I include -o pread_cold pread_cold.c -L<lib dir> -llpc
 * LD_LIBRARY_PATH=<lib dir> ./pread_cold FILE CALL_KIB sync|uring
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <lpc/lpc.h>

int main(int argc, char **argv)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct lpc_file *f;
	struct lpc_stats s;
	struct stat st;
	struct timespec a, b;
	size_t call;
	char *buf;
	double secs;

	if (argc < 4 || stat(argv[1], &st))
		return 2;
	call = strtoull(argv[2], NULL, 0) << 10;
	buf = malloc(call);
	lpc_config_init(&cfg);
	cfg.cache_bytes = 256u << 20;
	cfg.readahead_kb = LPC_READAHEAD_OFF;
	cfg.io_backend = strcmp(argv[3], "sync") ? LPC_IO_URING : LPC_IO_SYNC;
	if (lpc_cache_create(&cfg, &c) || lpc_file_open(c, argv[1], O_RDONLY, 0, &f))
		return 3;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (off_t off = 0; off < st.st_size; off += (off_t)call)
		if (lpc_pread(f, buf, call, off) <= 0)
			return 4;
	clock_gettime(CLOCK_MONOTONIC, &b);
	secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	lpc_stats(c, &s);
	printf("%s call %zu KiB: %.0f MB/s, %" PRIu64 " read I/Os, %.0f pages/IO\n", argv[3],
	       call >> 10, (double)st.st_size / secs / 1e6, s.reads,
	       s.reads ? (double)(s.read_bytes / 4096) / (double)s.reads : 0.0);
	lpc_file_close(f);
	lpc_cache_destroy(c);
	return 0;
}
