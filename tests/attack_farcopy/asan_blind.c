/* SPDX-License-Identifier: MIT */
/*
 * asan_blind.c - AddressSanitizer and copy_far's inline `rep movsb`.
 *
 * A build with -DLPC_SANITIZE=address but without LPC_DEBUG (CMake allows
 * it; scripts/lib.sh's asan variant always has LPC_DEBUG, where read.c
 * copies with memcpy) compiles copy_far's inline asm, whose stores ASan
 * does not see.  The program has lpc_pread write 64 bytes past the end of a
 * heap buffer:
 *   fast: one page into a buffer 64 bytes short (lpc_pread's fast path,
 *         copy_bytes: an instrumented AVX2 loop)
 *   slow: two pages into a buffer 64 bytes short (pread_slow, copy_far)
 * ASan reports the first; the second overflows the heap buffer silently.
 *
 * Build against build-asan-nodebug (Makefile target asan_blind):
 *   cmake -S ../.. -B ../../build-asan-nodebug -DCMAKE_BUILD_TYPE=RelWithDebInfo \
 *         -DLPC_SANITIZE=address -DLPC_DEBUG=OFF
 *   cmake --build ../../build-asan-nodebug --target lpc
 * Usage: asan_blind fast|slow
 * Exit: ASan's on a report; 0 with "NOT DETECTED" when the overflow passed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lpc/lpc.h>

int main(int argc, char **argv)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	bool slow = argc > 1 && !strcmp(argv[1], "slow");
	char path[4096], *page = malloc(4 * 4096), *warm = malloc(4 * 4096), *buf;
	struct lpc_config lc;
	struct lpc_cache *c;
	struct lpc_file *f;
	size_t len = slow ? 2 * 4096 : 4096;
	ssize_t n;
	int fd;

	setvbuf(stdout, NULL, _IONBF, 0);
	snprintf(path, sizeof(path), "%s/asan_blind.%d.dat", dir, (int)getpid());
	memset(page, 'x', 4 * 4096);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, page, 4 * 4096) != 4 * 4096)
		return 2;
	close(fd);
	lpc_config_init(&lc);
	if (lpc_cache_create(&lc, &c) || lpc_file_open(c, path, O_RDONLY, 0, &f))
		return 2;
	lpc_pread(f, warm, 4 * 4096, 0); /* cached: the next read hits */
	buf = malloc(len - 64);
	printf("%s: lpc_pread of %zu bytes into a %zu-byte heap buffer\n", slow ? "slow" : "fast",
	       len, len - 64);
	n = lpc_pread(f, buf, len, 0);
	printf("returned %zd: overflow of 64 bytes NOT DETECTED by ASan\n", n);
	lpc_file_close(f);
	lpc_cache_destroy(c);
	unlink(path);
	free(buf);
	free(warm);
	free(page);
	return 0;
}
