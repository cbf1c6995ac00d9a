/* SPDX-License-Identifier: MIT */
/*
 * regress_user_lock_seq.c - why the public lpc_page_lock opens a seq write
 * section on a cached page (src/page/lock.c X1-X2): a user may change a
 * cached frame in place under the page lock, and an optimistic reader
 * (lpc_page_read, lpc_pread; filemap/optimistic.h O1-O6) validates its view
 * against the page's seq alone.  Before X1-X2, seq moved only at
 * lpc_page_mark_dirty, after the change, so a view taken during the change
 * and validated before the mark-dirty was accepted: a mix of two versions
 * (guarantee K.1 broken).  Page 1 carries a version in its first and last
 * words; version A is in both at the start of each story.
 *
 * Story (a), the user is inside before the reader starts:
 *   1. H (the test) locks page 1 (lpc_page_lock) and writes B into the
 *      first word only.
 *   2. R calls lpc_page_read on page 1: O3 loads seq, its function copies
 *      both words ({B, A}), O5 re-loads seq and the slot.
 *   Before the fix, seq was even and unchanged: R returned 0 with {B, A}.
 *   Now seq is odd (X1): R falls back, and its copy under the page lock
 *   (F3) sleeps until H is done.  H waits until R returned or sleeps on the
 *   lock (WAITERS), writes B into the last word, marks the page dirty and
 *   unlocks; R then returns {B, B}.
 * Story (b), the reader's copy straddles the user's whole change:
 *   1. R calls lpc_page_read; O3 loads seq (even); its function copies the
 *      first word (A) and waits for H.
 *   2. H locks page 1 and writes B into both words; then lets R go.
 *   3. R's function copies the last word (B) and returns; O5 re-loads seq.
 *   Before the fix seq had not moved (H had not reached mark-dirty): R
 *   returned 0 with {A, B}.  Now seq moved at H's lock: R falls back, waits
 *   for H's unlock as in (a) and returns {B, B}.
 *
 * Deterministic: R's function and H hand over through a mutex and a
 * condition variable; no timing.  Built with the other regress stories
 * (LPC_DEBUG), though it uses no yield point.
 */
#include <fcntl.h>
#include <pthread.h>

#include "../common/lpc_test.h"
#include "page/page.h"

#define PS 4096u
#define VER_A 0xaaaaaaaaaaaaaaaaull
#define VER_B 0xbbbbbbbbbbbbbbbbull

struct story {
	struct lpc_file *f;
	bool gate;		  /* story (b): the first run of look waits for H */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool r_started, h_changed; /* under mu */
	unsigned runs;
	uint64_t first, last;	  /* the view of the last run of look */
	int rc;
	_Atomic bool done;
};

static void look(const void *data, size_t len, void *arg)
{
	struct story *s = arg;

	s->runs++;
	memcpy(&s->first, data, sizeof(s->first));
	if (s->gate && s->runs == 1) {
		pthread_mutex_lock(&s->mu);
		s->r_started = true;
		pthread_cond_broadcast(&s->cv);
		while (!s->h_changed)
			pthread_cond_wait(&s->cv, &s->mu);
		pthread_mutex_unlock(&s->mu);
	}
	memcpy(&s->last, (const char *)data + len - sizeof(s->last), sizeof(s->last));
}

static void *r_main(void *arg)
{
	struct story *s = arg;

	s->rc = lpc_page_read(s->f, 1, 0, look, s);
	atomic_store(&s->done, true);
	return NULL;
}

/* Writes version v into the first and/or last word of p's frame. */
static void put_version(struct lpc_page *p, uint64_t v, bool first, bool last)
{
	char *d = lpc_page_data(p);

	if (first)
		memcpy(d, &v, sizeof(v));
	if (last)
		memcpy(d + PS - sizeof(v), &v, sizeof(v));
}

/* H's wait until R returned (the broken code) or sleeps on p's lock. */
static void wait_r_done_or_asleep(struct story *s, struct lpc_page *p)
{
	while (!atomic_load(&s->done) && !(lpc_page_flags(p) & LPC_PG_WAITERS))
		tst_sleep_us(1000);
}

static void story(bool gate)
{
	struct lpc_cache *c = tst_cache_create(16 * PS, PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);
	struct story s = { .gate = gate };
	struct lpc_page *p;
	char path[600];
	pthread_t r;

	pthread_mutex_init(&s.mu, NULL);
	pthread_cond_init(&s.cv, NULL);
	REQUIRE(tst_make_sparse(gate ? "uls-b" : "uls-a", 4 * PS, path, sizeof(path)) == 0);
	s.f = tst_file_open(c, path, O_RDWR);
	REQUIRE(lpc_page_get(s.f, 1, 0, &p) == 0, "get page 1");
	lpc_page_lock(p);
	put_version(p, VER_A, true, true);
	CHECK_EQ(lpc_page_mark_dirty(p), 0);
	lpc_page_unlock(p);

	if (!gate) {
		lpc_page_lock(p);					/* (a) 1 */
		put_version(p, VER_B, true, false);
		REQUIRE(pthread_create(&r, NULL, r_main, &s) == 0);	/* (a) 2 */
		wait_r_done_or_asleep(&s, p);
		put_version(p, VER_B, false, true);
	} else {
		REQUIRE(pthread_create(&r, NULL, r_main, &s) == 0);	/* (b) 1 */
		pthread_mutex_lock(&s.mu);
		while (!s.r_started)
			pthread_cond_wait(&s.cv, &s.mu);
		pthread_mutex_unlock(&s.mu);
		lpc_page_lock(p);					/* (b) 2 */
		put_version(p, VER_B, true, true);
		pthread_mutex_lock(&s.mu);
		s.h_changed = true;
		pthread_cond_broadcast(&s.cv);
		pthread_mutex_unlock(&s.mu);
		wait_r_done_or_asleep(&s, p);				/* (b) 3 */
	}
	CHECK_EQ(lpc_page_mark_dirty(p), 0);
	lpc_page_unlock(p);
	pthread_join(r, NULL);

	CHECK_EQ(s.rc, 0, "lpc_page_read");
	CHECK(s.first == s.last, "story (%c): lpc_page_read accepted a view of two versions: "
	      "first word %#llx, last word %#llx", gate ? 'b' : 'a',
	      (unsigned long long)s.first, (unsigned long long)s.last);
	CHECK(s.first == VER_B, "story (%c): view of version %#llx, want B (the reader waited "
	      "for the user)", gate ? 'b' : 'a', (unsigned long long)s.first);
	/* (a): the optimistic try refuses at O3 (seq odd) without running fn;
	 * F3 runs it once.  (b): the refused run, then F3's. */
	CHECK(s.runs == (gate ? 2u : 1u), "story (%c): fn ran %u times", gate ? 'b' : 'a',
	      s.runs);
	lpc_page_put(p);
	CHECK_EQ(lpc_file_close(s.f), 0);
	tst_cache_destroy(c);
	pthread_cond_destroy(&s.cv);
	pthread_mutex_destroy(&s.mu);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 60);
	tst_require_tmpdir();
	TST_RUN(story(false));
	TST_RUN(story(true));
	return tst_finish();
}
