/* SPDX-License-Identifier: MIT */
/*
 * att_ring_mt - readers racing on the runs whose pieces (uring.c R0/UB0)
 * go wrong (ring_inj.h):
 *   default: 4 threads lpc_pread the same 8 MiB O_DIRECT file at once
 *     while one run's 2nd piece fails -EFAULT (stale registration): no
 *     reader may get an error or a wrong byte (C.2: only a failed page's
 *     readers see its error, and this fault is recovered);
 *   "short": the same on a buffered file whose run's 1st piece comes back
 *     short inside a page (4196 B less), the later pieces full: only the
 *     prefix may count; the pages after it must be read again, not taken
 *     from the later pieces nor zero-filled.
 *   "partial": O_DIRECT, the submission carrying a run's pieces takes
 *     only its first entry and the next submit fails -EBUSY (RS1-RS4: the
 *     ring is killed, what was not read is read sync): no hang, no error,
 *     no wrong byte.
 * Usage: att_ring_mt [short|partial]    Exit: 0 held, 1 defect, 77 skip.
 */
#include "../attack/att.h"
#include "ring_inj.h"
#include "cache/cache.h"

#define PS 4096u
#define SIZE (8u << 20)
#define NT 4

static struct lpc_file *f;
static atomic_long errs, wrong;
static pthread_barrier_t bar;

static void *reader(void *arg)
{
	char *buf = malloc(64 * 1024);
	unsigned id = (unsigned)(uintptr_t)arg;

	pthread_barrier_wait(&bar);
	for (uint64_t k = 0; k < SIZE / 65536; k++) {
		uint64_t off = ((k + id * 7) % (SIZE / 65536)) * 65536;
		ssize_t n = lpc_pread(f, buf, 65536, off);

		if (n != 65536)
			atomic_fetch_add(&errs, 1);
		else if (att_bad_word(buf, 65536, off, 9) >= 0)
			atomic_fetch_add(&wrong, 1);
	}
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	bool shortp = argc > 1 && !strcmp(argv[1], "short");
	bool partial = argc > 1 && !strcmp(argv[1], "partial");
	struct lpc_cache *c = att_cache(64u << 20, PS, LPC_IO_URING, LPC_LOOKUP_LOCKLESS, 1024, 4096);
	struct lpc_stats s0, s1;
	pthread_t th[NT];
	char pa[300];

	att_make_file("m", SIZE, 9, pa, sizeof(pa));
	if (lpc_file_open(c, pa, O_RDONLY, 0, &f))
		return 77;
	if (shortp) {
		/* As io.c direct_off leaves it: the descriptor off O_DIRECT
		 * first, then the flag.  (The flag alone left the descriptor
		 * direct: the short piece, 4196 B less, was refused -EINVAL,
		 * which D2's H5 answered by going unregistered.) */
		int fd = atomic_load(&f->io.fd);

		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_DIRECT);
		atomic_store(&f->io.direct, 0);
	} else if (!atomic_load(&f->io.direct))
		return 77;
	atomic_store(&inj_short, shortp);
	atomic_store(&inj_partial, partial);
	pthread_barrier_init(&bar, NULL, NT);
	lpc_stats(c, &s0);
	atomic_store(&inj_armed, 1);
	for (uintptr_t i = 0; i < NT; i++)
		pthread_create(&th[i], NULL, reader, (void *)i);
	for (unsigned i = 0; i < NT; i++)
		pthread_join(th[i], NULL);
	lpc_stats(c, &s1);
	printf("  %s: injected %d, reader errors %ld, wrong reads %ld, read_errors +%" PRIu64
	       ", pages read +%" PRIu64 ", uring_fallbacks +%" PRIu64 ", uring_unregistered +%" PRIu64
	       "\n",
	       partial  ? "partial submission then -EBUSY, O_DIRECT"
	       : shortp ? "short 1st piece, buffered"
			: "EFAULT 2nd piece, O_DIRECT",
	       atomic_load(&inj_done), atomic_load(&errs), atomic_load(&wrong),
	       s1.read_errors - s0.read_errors, s1.read_pages - s0.read_pages,
	       s1.uring_fallbacks - s0.uring_fallbacks,
	       s1.uring_unregistered - s0.uring_unregistered);
	if (!atomic_load(&inj_done))
		return 77;
	ATT_CHECK(atomic_load(&errs) == 0, "readers got errors or short counts");
	ATT_CHECK(atomic_load(&wrong) == 0, "readers got wrong bytes");
	if (shortp)
		ATT_CHECK(s1.read_errors == s0.read_errors, "a short piece counted as a read error");
	lpc_file_close(f);
	lpc_cache_destroy(c);
	att_cleanup();
	printf("%s\n", att_fails ? "DEFECT" : "held");
	return att_fails ? 1 : 0;
}
