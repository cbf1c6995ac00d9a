/* Appended to the three functions extracted from src/page/alloc.c by
 * sort_harness.sh: checks chain_sort against the expected order, and times it. */
static struct lpc_page *arena;

static struct lpc_page *build(const uint32_t *ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		arena[ids[i]].next = i + 1 < n ? &arena[ids[i + 1]] : NULL;
	return n ? &arena[ids[0]] : NULL;
}

static int check(const uint32_t *ids, size_t n, const char *what)
{
	struct lpc_page *h = chain_sort(build(ids, n));
	size_t k = 0;
	uint32_t prev = 0;

	for (; h; h = h->next, k++) {
		if (k && h->id <= prev) {
			printf("FAIL %s n=%zu: out of order at %zu\n", what, n, k);
			return 1;
		}
		prev = h->id;
		if (k > n)
			break;
	}
	if (k != n) {
		printf("FAIL %s n=%zu: %zu frames came back\n", what, n, k);
		return 1;
	}
	return 0;
}

static int perms(uint32_t *a, size_t k, size_t n)
{
	int bad = 0;

	if (k == n)
		return check(a, n, "perm");
	for (size_t i = k; i < n && !bad; i++) {
		uint32_t t = a[k]; a[k] = a[i]; a[i] = t;
		bad |= perms(a, k + 1, n);
		t = a[k]; a[k] = a[i]; a[i] = t;
	}
	return bad;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
	const size_t N = 1u << 20;
	uint32_t *ids = malloc(N * sizeof(*ids));
	int bad = 0;

	arena = calloc(N, sizeof(*arena));
	for (size_t i = 0; i < N; i++)
		arena[i].id = (uint32_t)i;
	for (size_t n = 0; n <= 9; n++) {
		for (size_t i = 0; i < n; i++)
			ids[i] = (uint32_t)i;
		bad |= perms(ids, 0, n);
	}
	/* stretches of length L up then down, alternating, at every L */
	for (size_t L = 1; L <= 70 && !bad; L++)
		for (size_t n = 1; n <= 600 && !bad; n += 7) {
			size_t i = 0;
			for (size_t s = 0; i < n; s++)
				for (size_t j = 0; j < L && i < n; j++, i++)
					ids[i] = (uint32_t)(s * L + ((s & 1) ? L - 1 - j : j));
			/* ids of the last stretch may exceed n: keep them below N */
			bad |= check(ids, n, "updown");
		}
	srand(1);
	for (int r = 0; r < 2000 && !bad; r++) {
		size_t n = (size_t)(rand() % 5000);
		for (size_t i = 0; i < n; i++) ids[i] = (uint32_t)i;
		for (size_t i = n; i > 1; i--) { size_t j = (size_t)rand() % i; uint32_t t = ids[i-1]; ids[i-1] = ids[j]; ids[j] = t; }
		bad |= check(ids, n, "random");
	}
	printf("correctness: %s\n", bad ? "FAILED" : "ok");
	/* timings, descriptors of 120 bytes as a stand-in */
	static const size_t sizes[] = { 64, 4096, 65536, 262144, 1u << 20 };
	for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
		size_t n = sizes[z];
		const char *kinds[] = { "ascending", "descending", "pairs-swapped", "two-interleaved", "random" };
		for (int kd = 0; kd < 5; kd++) {
			for (size_t i = 0; i < n; i++) ids[i] = (uint32_t)i;
			if (kd == 1) for (size_t i = 0; i < n; i++) ids[i] = (uint32_t)(n - 1 - i);
			if (kd == 2) for (size_t i = 0; i + 1 < n; i += 2) { ids[i] = (uint32_t)i + 1; ids[i+1] = (uint32_t)i; }
			if (kd == 3) for (size_t i = 0; i < n; i++) ids[i] = (uint32_t)((i & 1) ? n / 2 + i / 2 : i / 2);
			if (kd == 4) for (size_t i = n; i > 1; i--) { size_t j = (size_t)rand() % i; uint32_t t = ids[i-1]; ids[i-1] = ids[j]; ids[j] = t; }
			struct lpc_page *h = build(ids, n);
			double t0 = now();
			h = chain_sort(h);
			double t1 = now();
			/* the walk the old code did anyway (SG1's cut) */
			size_t k = 0;
			for (struct lpc_page *q = h; q; q = q->next) k++;
			double t2 = now();
			printf("n=%-8zu %-16s sort %9.3f ms  (one walk %7.3f ms, %.1f walks)\n", n, kinds[kd],
			       (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t1 - t0) / ((t2 - t1) > 0 ? (t2 - t1) : 1e-9));
			if (k != n) { printf("FAIL timing n=%zu\n", n); bad = 1; }
		}
	}
	return bad;
}
