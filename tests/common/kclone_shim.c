/* SPDX-License-Identifier: MIT */
/* kclone_shim.c - LD_PRELOAD shim that makes IORING_REGISTER_CLONE_BUFFERS
 * (which lpc's io/uring.c calls through libc's syscall(); liburing's own
 * calls are inline and unaffected) behave as released kernels before 6.18.y
 * do, so the suite checks io/uring.c's steps H1-H5 against each kernel range
 * on whatever kernel runs it (tests/unit/CMakeLists.txt runs test_uring and
 * test_resident under it, once per mode).  KCLONE_MODE:
 *   noclone  Linux < 6.12: the opcode does not exist (EINVAL);
 *   norepl   Linux 6.12: clone exists, but a ring that already has buffers
 *            gets EBUSY and IORING_REGISTER_DST_REPLACE (or src_off/dst_off/
 *            nr, then in pad) is EINVAL;
 *   prefix   Linux 6.13 - 6.18.0 (c1329532d5aa until 525916ce4966): a clone
 *            with DST_REPLACE keeps the destination's slots before dst_off
 *            and drops every slot after dst_off + nr ("destination entries
 *            after the cloned range are not copied over").
 *            A clone without DST_REPLACE, or with nr 0 (the whole source
 *            table: nothing after the range), is left alone;
 *   drop     no released kernel: every clone succeeds and then leaves the
 *            destination's table empty, so each fixed request on it fails
 *            (-EFAULT): io/uring.c H5 must do it again unregistered.
 * Unset or another value: every call goes to the kernel unchanged. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/io_uring.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>

struct clone_arg {
	uint32_t src_fd, flags, src_off, dst_off, nr, pad[3];
};

static long (*real_syscall)(long, ...);

long syscall(long n, ...)
{
	va_list ap;
	long a[6];
	const char *mode = getenv("KCLONE_MODE");

	va_start(ap, n);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (!real_syscall)
		real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	if (n == SYS_io_uring_register && a[1] == 30 && mode) {
		struct clone_arg *c = (struct clone_arg *)a[2];

		if (!strcmp(mode, "noclone")) {
			errno = EINVAL;
			return -1;
		}
		if (!strcmp(mode, "norepl") && (c->flags & 2u || c->src_off || c->dst_off || c->nr)) {
			errno = (c->flags & 2u) ? EBUSY : EINVAL;
			return -1;
		}
		if ((!strcmp(mode, "prefix") && (c->flags & 2u) && c->nr) || !strcmp(mode, "drop")) {
			long rc = real_syscall(n, a[0], a[1], a[2], a[3], a[4], a[5]);
			struct iovec none = { 0 };

			if (rc < 0)
				return rc;
			/* Drop the destination's slots after the cloned range
			 * (drop: all of them). */
			for (uint32_t s = mode[0] == 'd' ? 0 : c->dst_off + c->nr;; s++) {
				struct io_uring_rsrc_update2 u = { .offset = s,
								   .data = (uint64_t)(uintptr_t)&none,
								   .nr = 1 };

				if (real_syscall(SYS_io_uring_register, a[0],
						 IORING_REGISTER_BUFFERS_UPDATE, &u, sizeof(u)) < 0)
					break;
			}
			return rc;
		}
	}
	return real_syscall(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}
