/* SPDX-License-Identifier: MIT */
/*
 * memcpy_path.c - which instructions this machine's glibc memcpy runs for a
 * copy of one page (4 KiB, and other sizes), found by single-stepping it
 * with ptrace: no timing.
 *
 * read.c's comment on copy_far says of glibc's memcpy that it "uses its
 * AVX-512 loop below 8 KiB here" (on the AMD EPYC this was measured on).
 * The child copies from a page-aligned source into a page-aligned
 * destination (as the comment's measurement did: a 512 MiB source page by
 * page into a 128 KiB destination; here 1 MiB and 128 KiB), and the parent
 * steps through the memcpy call and counts what ran: `rep movsb` (F3 A4;
 * with TF set, each of its iterations traps, so the count is how many
 * bytes it moved) and instructions with an EVEX prefix (62: AVX-512
 * encodings, the avx512/evex loops' loads and stores).  It also prints
 * glibc's own rep_movsb_threshold (ld.so --list-diagnostics, where
 * available): above it, glibc's memcpy takes `rep movsb`.
 *
 * Usage: memcpy_path [size ...]   (default: 2048 2112 2113 4096 8192 16384)
 * The steps include the return from the first raise(3) and the second
 * raise up to its system call (no AVX-512 there).
 * Exit: 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static void *(*volatile copy)(void *, const void *, size_t) = memcpy;

static void child(size_t n)
{
	char *src = aligned_alloc(4096, 1 << 20), *dst = aligned_alloc(4096, 128 << 10);

	memset(src, 1, 1 << 20);
	memset(dst, 2, 128 << 10);
	copy(dst, src, n); /* binds memcpy (ifunc, PLT) before the traced call */
	ptrace(PTRACE_TRACEME, 0, NULL, NULL);
	raise(SIGSTOP);
	copy(dst + 4096 * 3, src + 4096 * 77, n); /* the traced call */
	raise(SIGSTOP);
	_exit(0);
}

static void trace(size_t n)
{
	pid_t pid = fork();
	int st;
	unsigned long steps = 0, movsb = 0, evex = 0, in_copy = 0;

	if (pid == 0)
		child(n);
	waitpid(pid, &st, 0); /* the first SIGSTOP */
	for (;;) {
		struct user_regs_struct r;
		long text;

		if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL) < 0)
			break;
		waitpid(pid, &st, 0);
		if (!WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP)
			break; /* the second SIGSTOP: the copy is done */
		steps++;
		ptrace(PTRACE_GETREGS, pid, NULL, &r);
		errno = 0;
		text = ptrace(PTRACE_PEEKTEXT, pid, (void *)r.rip, NULL);
		if (errno)
			continue;
		unsigned char b0 = (unsigned char)text, b1 = (unsigned char)(text >> 8);

		if (b0 == 0xF3 && b1 == 0xA4) {
			movsb++;
			in_copy = 1;
		} else if (b0 == 0x62) {
			evex++;
		}
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	printf("memcpy(%6zu bytes): %5lu steps, rep movsb %s (%lu iterations), %lu EVEX (AVX-512) "
	       "instructions\n",
	       n, steps, in_copy ? "RAN" : "not run", movsb, evex);
}

int main(int argc, char **argv)
{
	static const size_t def[] = { 2048, 2112, 2113, 4096, 8192, 16384 };
	FILE *p;
	char line[256];

	setvbuf(stdout, NULL, _IONBF, 0);
	p = popen("/lib64/ld-linux-x86-64.so.2 --list-diagnostics 2>/dev/null | "
		  "grep -E 'rep_movsb_threshold|preferred.Prefer_No_AVX512|basic.family'",
		  "r");
	if (p) {
		while (fgets(line, sizeof(line), p))
			printf("ld.so: %s", line);
		pclose(p);
	}
	if (argc > 1)
		for (int i = 1; i < argc; i++)
			trace((size_t)strtoul(argv[i], NULL, 0));
	else
		for (size_t i = 0; i < sizeof(def) / sizeof(def[0]); i++)
			trace(def[i]);
	return 0;
}
