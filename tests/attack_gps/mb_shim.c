/* SPDX-License-Identifier: MIT */
/*
 * mb_shim.c - LD_PRELOAD: membarrier(2) as a machine without it would
 * answer, for calls made by the main program only (lpcbench fault's probe,
 * tools/lpcbench/fault/fault.c fault_membarrier_probe); liburcu's own
 * calls (liblpc.so's grace periods) go through unchanged.
 * GPS_MB=enosys    every call fails with ENOSYS (no membarrier: old kernel,
 *                  seccomp)
 *       noexp      MEMBARRIER_CMD_QUERY answers 0 (no PRIVATE_EXPEDITED)
 *       noreg      MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED fails (EPERM)
 *       failcall   MEMBARRIER_CMD_PRIVATE_EXPEDITED fails (EINVAL)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/membarrier.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

long syscall(long nr, ...)
{
	static long (*real)(long, ...);
	const char *mode = getenv("GPS_MB");
	void *ra = __builtin_return_address(0);
	long a[6];
	va_list ap;
	Dl_info di;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	if (nr == __NR_membarrier && mode && dladdr(ra, &di) && di.dli_fname &&
	    !strstr(di.dli_fname, ".so")) {
		int cmd = (int)a[0];

		if (!strcmp(mode, "enosys")) {
			errno = ENOSYS;
			return -1;
		}
		if (!strcmp(mode, "noexp") && cmd == MEMBARRIER_CMD_QUERY)
			return 0;
		if (!strcmp(mode, "noreg") && cmd == MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) {
			errno = EPERM;
			return -1;
		}
		if (!strcmp(mode, "failcall") && cmd == MEMBARRIER_CMD_PRIVATE_EXPEDITED) {
			errno = EINVAL;
			return -1;
		}
	}
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
