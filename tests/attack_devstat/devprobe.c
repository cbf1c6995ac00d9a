/*
 * devprobe FILE r|w COUNT KIB GAP_US
 *
 * COUNT O_DIRECT preads (r) or pwrites (w) of KIB KiB at sequential offsets
 * of FILE, one at a time, sleeping GAP_US between them; around them it reads
 * the stat file of FILE's device the way lpcbench scan does
 * (/sys/dev/block/M:m/stat, fields 1, 3, 4, 10) and prints the deltas beside
 * what the program itself measured: wall time and the sum of its calls'
 * latencies (an upper bound of the device's busy time: one call at a time).
 *
 * cc -O2 -o devprobe devprobe.c
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int counters(const char *path, unsigned long long f[11])
{
	struct stat st;
	char p[160];
	FILE *fp;
	int n;

	if (stat(path, &st))
		return -1;
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/stat", major(st.st_dev), minor(st.st_dev));
	fp = fopen(p, "r");
	if (!fp)
		return -1;
	n = fscanf(fp, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &f[0], &f[1],
		   &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8], &f[9], &f[10]);
	fclose(fp);
	return n == 11 ? 0 : -1;
}

int main(int argc, char **argv)
{
	unsigned long long a[11], b[11];
	uint64_t t0, t1, lat = 0;
	size_t len;
	unsigned count, gap;
	int fd, wr;
	void *buf;

	if (argc != 6) {
		fprintf(stderr, "usage: devprobe FILE r|w COUNT KIB GAP_US\n");
		return 2;
	}
	wr = argv[2][0] == 'w';
	count = (unsigned)atoi(argv[3]);
	len = (size_t)atoi(argv[4]) << 10;
	gap = (unsigned)atoi(argv[5]);
	fd = open(argv[1], (wr ? O_WRONLY | O_CREAT : O_RDONLY) | O_DIRECT, 0600);
	if (fd < 0 || posix_memalign(&buf, 4096, len)) {
		perror(argv[1]);
		return 1;
	}
	memset(buf, 0x5a, len);
	if (counters(argv[1], a)) {
		fprintf(stderr, "no block device's stat for %s\n", argv[1]);
		return 1;
	}
	t0 = now_ns();
	for (unsigned i = 0; i < count; i++) {
		uint64_t s = now_ns();
		ssize_t n = wr ? pwrite(fd, buf, len, (off_t)i * len) : pread(fd, buf, len, (off_t)i * len);

		lat += now_ns() - s;
		if (n != (ssize_t)len) {
			perror("io");
			return 1;
		}
		if (gap)
			usleep(gap);
	}
	t1 = now_ns();
	counters(argv[1], b);
	printf("%s: %u %s of %zu KiB, %u us apart\n", argv[1], count, wr ? "writes" : "reads",
	       len >> 10, gap);
	printf("  measured: wall %.1f ms, sum of call latencies %.1f ms (busy <= %.0f%%)\n",
	       (t1 - t0) / 1e6, lat / 1e6, 100.0 * lat / (t1 - t0));
	printf("  stat deltas: reads %llu, sectors read %llu, read ticks %llu ms, io_ticks %llu ms"
	       " -> lpcbench's busy %.0f%%\n",
	       b[0] - a[0], b[2] - a[2], b[3] - a[3], b[9] - a[9], 100.0 * (b[9] - a[9]) * 1e6 / (t1 - t0));
	return 0;
}
