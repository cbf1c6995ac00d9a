/* SPDX-License-Identifier: MIT */
/*
 * rw_order.c - the call_rcu worker bears the cache creator's name, blocks
 * every signal, and no lpc thread becomes its creator, whatever the order.
 *   rw_order custom    a thread named rw-custom creates the cache, main evicts
 *   rw_order two       threads rw-a and rw-b create caches at once, both evict
 *   rw_order twoevict  rw-a and rw-b create and evict their own caches at
 *                      once: one worker, named rw-a or rw-b, all blocked
 *   rw_order appfirst  the application call_rcu's first (thread rw-app); then
 *                      create + evict: no new thread, worker keeps its name
 *   rw_order repeat    40 create/destroy rounds, every 8th evicting
 *   rw_order percpu    the application made per-CPU call_rcu workers first;
 *                      create must add no thread ("nothing changes")
 * Built twice: out-VARIANT/rw_order (the branch) and out-VARIANT/rw_order_nofix
 * (lpc_rcu_worker_ensure wrapped to do nothing: the code before 0605786),
 * which must fail `custom`, showing the checks can fail.
 */
#include "rw.h"

static struct lpc_cache *made;
static pthread_barrier_t bar;

static void *creator(void *arg)
{
	pthread_setname_np(pthread_self(), arg);
	pthread_barrier_wait(&bar);
	made = rw_cache();
	return NULL;
}

struct pair {
	const char *name;
	struct lpc_cache *c;
};

static void *creator2(void *arg)
{
	struct pair *p = arg;

	pthread_setname_np(pthread_self(), p->name);
	pthread_barrier_wait(&bar);
	p->c = rw_cache();
	return NULL;
}

/* ad5f9fa: create makes no thread at all (the worker waits for lpc's first
 * background thread).  Returns 0. */
static pid_t check_created(const struct rw_tids *before, const char *n1, const char *n2)
{
	struct rw_tids after = rw_tids();
	unsigned count;

	(void)n1;
	(void)n2;
	rw_new_tid(before, &after, &count);
	CHECK_EQ(count, 0u, "create made no thread");
	CHECK_EQ(rw_census().lpc, 0u, "no lpc thread at create");
	return 0;
}

/* After the eviction and destroy: exactly one thread new since `before` and
 * not lpc-* (the worker), named `want` (the application thread whose
 * allocation started lpc-reclaim), every signal blocked; never lpc-*. */
static void check_after_from(const struct rw_tids *before, const char *want, unsigned most)
{
	struct rw_tids after = rw_tids();
	unsigned nw = 0;
	pid_t w = 0;

	CHECK(most >= 1, "the reclaimer ran (lpc-reclaim seen): %u", most);
	CHECK(most <= 1, "at most one lpc-reclaim at a sample: %u", most);
	CHECK_EQ(rw_census().lpc, 0u, "after destroy no lpc-* thread (a misnamed worker stays)");
	for (unsigned i = 0; i < after.n; i++) {
		bool old = false;

		for (unsigned j = 0; j < before->n; j++)
			old |= after.t[i] == before->t[j];
		if (!old) {
			nw++;
			w = after.t[i];
		}
	}
	CHECK_EQ(nw, 1u, "one thread left of those made since create (the worker)");
	if (w) {
		char comm[32] = "";

		rw_comm(w, comm, sizeof(comm));
		CHECK(!strcmp(comm, want), "worker %d named '%s', want '%s'", (int)w, comm, want);
		CHECK(rw_all_blocked(w), "worker blocks every signal: SigBlk %llx", rw_sigblk(w));
	}
}

static void mode_custom(void)
{
	struct rw_tids before;
	pthread_t t;
	pid_t w;
	unsigned most;

	pthread_barrier_init(&bar, NULL, 1);
	before = rw_tids();
	pthread_create(&t, NULL, creator, "rw-custom");
	pthread_join(t, NULL);
	w = check_created(&before, "rw-custom", NULL);
	(void)w;
	most = rw_evict_run(made, "rw-custom");
	tst_cache_destroy(made);
	check_after_from(&before, "rw-main", most);
}

/* twoevict: rw-a and rw-b each create and evict their own cache at once
 * (a barrier before the reads), so both reclaimers' starts, hence two
 * lpc_rcu_worker_ensure calls, race.  One worker, named rw-a or rw-b. */
static unsigned most_ab[2];

static void *evictor(void *arg)
{
	struct pair *p = arg;

	pthread_setname_np(pthread_self(), p->name);
	p->c = rw_cache();
	pthread_barrier_wait(&bar);
	most_ab[p->name[3] - 'a'] = rw_evict_run(p->c, p->name);
	return NULL;
}

static void mode_twoevict(void)
{
	struct pair p[2] = { { "rw-a", NULL }, { "rw-b", NULL } };
	struct rw_tids before = rw_tids();
	pthread_t t[2];
	unsigned count;
	pid_t w;

	pthread_barrier_init(&bar, NULL, 2);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, evictor, &p[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	w = rw_worker_since(&before, &count);
	rw_list();
	for (int i = 0; i < 2; i++)
		tst_cache_destroy(p[i].c);
	CHECK(most_ab[0] >= 1 && most_ab[1] >= 1, "both reclaimers ran");
	CHECK(most_ab[0] <= 2 && most_ab[1] <= 2, "at most two lpc-reclaim (one per cache): %u %u",
	      most_ab[0], most_ab[1]);
	CHECK_EQ(rw_census().lpc, 0u, "after destroy no lpc-* thread");
	CHECK_EQ(count, 1u, "one worker");
	if (w) {
		char comm[32];

		rw_comm(w, comm, sizeof(comm));
		CHECK(!strcmp(comm, "rw-a") || !strcmp(comm, "rw-b"), "worker named '%s'", comm);
		CHECK(rw_all_blocked(w), "worker blocks every signal");
	}
}

static void mode_two(void)
{
	struct pair p[2] = { { "rw-a", NULL }, { "rw-b", NULL } };
	struct rw_tids before;
	pthread_t t[2];
	char want[32] = "";
	unsigned most;
	pid_t w;

	pthread_barrier_init(&bar, NULL, 2);
	before = rw_tids();
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, creator2, &p[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	w = check_created(&before, "rw-a", "rw-b");
	if (w)
		rw_comm(w, want, sizeof(want));
	/* one reclaimer per cache: destroy each before the next evicts */
	most = rw_evict_run(p[1].c, "rw-two-b");
	tst_cache_destroy(p[1].c);
	unsigned m2 = rw_evict_run(p[0].c, "rw-two-a");
	tst_cache_destroy(p[0].c);
	(void)want;
	check_after_from(&before, "rw-main", most > m2 ? most : m2);
}

static int cb_ran;
static void app_cb(struct rcu_head *h)
{
	(void)h;
	__atomic_store_n(&cb_ran, 1, __ATOMIC_RELEASE);
}

static struct rcu_head app_head;
static void *app_first(void *arg)
{
	pthread_setname_np(pthread_self(), "rw-app");
	urcu_memb_register_thread();
	if (arg)
		REQUIRE(urcu_memb_create_all_cpu_call_rcu_data(0) == 0, "per-cpu call_rcu data");
	urcu_memb_call_rcu(&app_head, app_cb);
	urcu_memb_barrier();
	urcu_memb_unregister_thread();
	return NULL;
}

static void mode_appfirst(bool percpu)
{
	struct rw_tids before, mid, after;
	unsigned count, most;
	char comm[32];
	pid_t w;
	pthread_t t;
	struct lpc_cache *c;
	unsigned long long blk;

	before = rw_tids();
	pthread_create(&t, NULL, app_first, percpu ? "p" : NULL);
	pthread_join(t, NULL);
	CHECK(__atomic_load_n(&cb_ran, __ATOMIC_ACQUIRE), "the app's callback ran");
	mid = rw_tids();
	w = rw_new_tid(&before, &mid, &count);
	REQUIRE(count >= 1 && w, "the app's call_rcu made worker(s): %u", count);
	printf("# the application's call_rcu made %u worker(s)\n", count);
	blk = rw_sigblk(w);
	c = rw_cache();
	after = rw_tids();
	rw_new_tid(&mid, &after, &count);
	CHECK_EQ(count, 0u, "create made no thread: the app's worker(s) already run");
	most = rw_evict_run(c, "rw-app");
	tst_cache_destroy(c);
	rw_comm(w, comm, sizeof(comm));
	CHECK(!strcmp(comm, "rw-app"), "app worker now '%s'", comm);
	CHECK_EQ(rw_sigblk(w), blk, "app worker's mask untouched");
	CHECK(most <= 1, "at most one lpc-reclaim at a sample: %u", most);
	CHECK_EQ(rw_census().lpc, 0u, "after destroy no lpc-* thread");
	/* ad5f9fa moved the worker's start to lpc's first background thread:
	 * rcu.h says an application's worker means "nothing changes" */
	after = rw_tids();
	rw_new_tid(&mid, &after, &count);
	CHECK_EQ(count, 0u, "the eviction left no new thread: the app's worker(s) serve lpc");
}

static void mode_repeat(void)
{
	struct rw_tids before = rw_tids(), after;
	pid_t w = 0;

	for (int i = 0; i < 40; i++) {
		struct lpc_cache *c = rw_cache();
		unsigned count, most = 0;
		pid_t n;

		after = rw_tids();
		n = rw_new_tid(&before, &after, &count);
		CHECK_EQ(count, 0u, "round %d: create made no thread", i);
		if (i % 8 == 0) {
			struct rw_tids b2 = rw_tids(), a2;
			unsigned k;

			most = rw_evict_run(c, "rw-repeat");
			a2 = rw_tids();
			n = rw_new_tid(&b2, &a2, &k);
			/* lpc-reclaim still runs until destroy: count non-lpc */
			if (i == 0) {
				for (unsigned x = 0; x < a2.n; x++) {
					char cm[32];
					bool old = false;

					for (unsigned y = 0; y < b2.n; y++)
						old |= a2.t[x] == b2.t[y];
					rw_comm(a2.t[x], cm, sizeof(cm));
					if (!old && strncmp(cm, "lpc-", 4))
						w = a2.t[x];
				}
				CHECK(w != 0, "first eviction made the worker");
			}
			(void)n;
		}
		tst_cache_destroy(c);
		CHECK(most <= 1, "round %d: lpc-reclaim count %u", i, most);
		CHECK_EQ(rw_census().lpc, 0u, "round %d: no lpc-* thread after destroy", i);
		before = rw_tids();
	}
	if (w) {
		char comm[32];

		rw_comm(w, comm, sizeof(comm));
		CHECK(!strcmp(comm, "rw-main"), "worker now '%s'", comm);
		CHECK(rw_all_blocked(w), "worker blocks all");
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	tst_init(1, argv, 120);
	tst_require_tmpdir();
	pthread_setname_np(pthread_self(), "rw-main");
	if (!strcmp(mode, "custom"))
		mode_custom();
	else if (!strcmp(mode, "two"))
		mode_two();
	else if (!strcmp(mode, "twoevict"))
		mode_twoevict();
	else if (!strcmp(mode, "appfirst"))
		mode_appfirst(false);
	else if (!strcmp(mode, "percpu"))
		mode_appfirst(true);
	else if (!strcmp(mode, "repeat"))
		mode_repeat();
	else {
		fprintf(stderr, "usage: rw_order custom|two|twoevict|appfirst|repeat|percpu\n");
		return 2;
	}
	rw_list();
	return tst_finish();
}
