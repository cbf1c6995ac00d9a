/* SPDX-License-Identifier: MIT */
/* util.c - error exits, allocation, progress line and sleep (see util.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

static bool progress_open; /* a progress line is on the terminal */

static void vreport(const char *fmt, va_list ap)
{
	/* An error message must not land in the middle of a progress line. */
	progress_done();
	fflush(stdout);
	fputs("lpcbench: ", stderr);
	vfprintf(stderr, fmt, ap);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

void die_err(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(err));
	exit(1);
}

void *xmalloc(size_t size)
{
	void *p = malloc(size);

	if (!p)
		die_err(ENOMEM, "allocating %zu bytes", size);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p)
		die_err(ENOMEM, "allocating %zu x %zu bytes", n, size);
	return p;
}

void *xaligned_alloc(size_t align, size_t size)
{
	void *p;
	int rc = posix_memalign(&p, align, size);

	if (rc)
		die_err(rc, "allocating %zu bytes aligned to %zu", size, align);
	return p;
}

void progress(const char *fmt, ...)
{
	bool tty = isatty(STDERR_FILENO);
	va_list ap;

	if (tty)
		fputs("\r\033[K", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (tty)
		progress_open = true;
	else
		fputc('\n', stderr);
	fflush(stderr);
}

void progress_done(void)
{
	if (!progress_open)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	progress_open = false;
}

void sleep_ns(uint64_t ns)
{
	struct timespec until;
	uint64_t end = now_ns() + ns;

	until.tv_sec = (time_t)(end / 1000000000u);
	until.tv_nsec = (long)(end % 1000000000u);
	/* Absolute time, so a signal does not stretch the total. */
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
		;
}

unsigned bench_name_mask(const char *list, const char *const *names, unsigned n, unsigned all,
			 const char *what)
{
	const char *s = list;
	unsigned mask = 0;

	if (!s)
		return all;
	while (*s) {
		size_t len = strcspn(s, ",");
		unsigned v;

		for (v = 0; v < n; v++)
			if (strlen(names[v]) == len && !strncmp(s, names[v], len))
				break;
		if (v == n) {
			char known[512];
			size_t k = 0;

			known[0] = 0;
			for (unsigned i = 0; i < n && k < sizeof(known); i++)
				k += (size_t)snprintf(known + k, sizeof(known) - k, "%s%s",
						      i ? ", " : "", names[i]);
			die("--variants: unknown %s variant '%.*s' (%s)", what, (int)len, s, known);
		}
		mask |= 1u << v;
		s += len + (s[len] == ',');
	}
	if (!mask)
		die("--variants: '%s' names no variant", list);
	return mask;
}
