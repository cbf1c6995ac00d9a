/*
 * LD_PRELOAD shim for lpcbench: every fopen of a /sys/dev/block/ path is
 * logged to stderr (pid, path, the line read).  With DEVSTAT_WRAP_IN=N (ms)
 * the stat file's read ticks (field 4) and io_ticks (field 10) are shifted
 * so that they cross 2^32 about N ms of device time after the first read,
 * exactly as the kernel's own "%8u" (unsigned int) output of those fields
 * wraps (block/genhd.c part_stat_show); all else is the real file.
 *
 * With DEVSTAT_MARKER=FILE (a tracefs trace_marker) it also writes
 * "devstat-read" there at each stat file read: the rows' bounds in a trace.
 *
 * cc -shared -fPIC -O2 -o statshim.so statshim.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static FILE *(*real_fopen)(const char *, const char *);
static int have_off;
static uint64_t off[11];

FILE *fopen(const char *path, const char *mode)
{
	char buf[512], out[512];
	const char *wrap = getenv("DEVSTAT_WRAP_IN");
	unsigned long long f[11];
	size_t n;
	FILE *fp;

	if (!real_fopen)
		real_fopen = (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, "fopen");
	fp = real_fopen(path, mode);
	if (!fp || strncmp(path, "/sys/dev/block/", 15))
		return fp;
	if (getenv("DEVSTAT_MARKER") && strlen(path) > 5 &&
	    !strcmp(path + strlen(path) - 5, "/stat")) {
		FILE *m = real_fopen(getenv("DEVSTAT_MARKER"), "w");

		if (m) {
			fputs("devstat-read\n", m);
			fclose(m);
		}
	}
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = 0;
	if (wrap && strlen(path) > 5 && !strcmp(path + strlen(path) - 5, "/stat") &&
	    sscanf(buf, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &f[0], &f[1],
		   &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8], &f[9], &f[10]) == 11) {
		if (!have_off) {
			uint64_t m = strtoull(wrap, NULL, 10);

			off[3] = (1ull << 32) - f[3] - m;
			off[9] = (1ull << 32) - f[9] - m;
			have_off = 1;
		}
		f[3] = (uint32_t)(f[3] + off[3]);
		f[9] = (uint32_t)(f[9] + off[9]);
		snprintf(out, sizeof(out), "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu\n",
			 f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10]);
		memcpy(buf, out, strlen(out) + 1);
	}
	fprintf(stderr, "[statshim pid %d] %s: %s", (int)getpid(), path,
		buf[0] ? buf : "\n");
	return fmemopen(strdup(buf), strlen(buf) + 1, "r");
}
