/* SPDX-License-Identifier: MIT */
/*
 * main.c - lpcbench's command line: the subcommands, the options (each with a
 * default and a help line), the echo of the configuration before anything is
 * measured, and the CSV file.
 *
 *   lpcbench lookup [options]   one benchmark (lookup, read, ...)
 *   lpcbench all [options]      every benchmark, in order, same options
 *   lpcbench lookup,sqlite [options]  several, in the order given
 *   lpcbench --help             commands and options with their defaults
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <lpc/lpc.h>

#include "harness/kchild.h"
#include "harness/plot.h"
#include "harness/pool.h"
#include "harness/util.h"
#include "lpcbench/benches.h"

/*
 * Defaults.  A round of the lookup benchmark is 3 thread counts x 13 variants
 * x 100 ms = 3.9 s, so 21 rounds and a warm-up take about 86 s, plus a few
 * seconds of setup (`lpcbench all` runs the other benchmarks after it), and
 * the 21 within-round ratios give medians whose range is a few per cent.
 */
#define DEF_THREADS "1,2,8"
#define DEF_ROUNDS 21
#define DEF_WARMUP 1
#define DEF_SLICE_MS 100
#define DEF_FILE_MB 256
#define DEF_SEED 1
#define DEF_CACHE_MB 256 /* read: with a 4x file, about 2-3 min on 2 CPUs */
#define DEF_ZIPF_THETA 0.99

#define MAX_ROUNDS 100000
#define MAX_SLICE_MS 600000
#define MAX_FILE_MB (1u << 20) /* 1 TiB */

/*
 * `all` runs them in this order.  Any order works: a child that uses lpc
 * (sqlite's lpc_excl side) is exec'd (kchild.h), so it does not inherit
 * liburcu's reader registry from the benchmarks run before it; the kernel
 * rows' children are forked and never call lpc.
 */
static const struct bench *const benches[] = {
	&bench_lookup,
	&bench_read,
	&bench_scan,
	&bench_pin,
	&bench_fault,
	&bench_stream,
	&bench_walk,
	&bench_write,
	&bench_sqlite,
	&bench_sqlite_small,
	&bench_rbd,
	&bench_startup,
};

enum {
	OPT_THREADS = 256,
	OPT_ROUNDS,
	OPT_WARMUP,
	OPT_SLICE_MS,
	OPT_FILE_MB,
	OPT_DIR,
	OPT_CSV,
	OPT_SEED,
	OPT_NO_PIN,
	OPT_VARIANTS,
	OPT_PLOT,
	OPT_CACHE_MB,
	OPT_ZIPF_THETA,
	OPT_POLICY,
	OPT_RA_MAX_KB,
	OPT_CALLS,
};

static const struct option long_opts[] = {
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "rounds", required_argument, NULL, OPT_ROUNDS },
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	{ "slice-ms", required_argument, NULL, OPT_SLICE_MS },
	{ "file-mb", required_argument, NULL, OPT_FILE_MB },
	{ "dir", required_argument, NULL, OPT_DIR },
	{ "csv", required_argument, NULL, OPT_CSV },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "no-pin", no_argument, NULL, OPT_NO_PIN },
	{ "variants", required_argument, NULL, OPT_VARIANTS },
	{ "plot", required_argument, NULL, OPT_PLOT },
	{ "cache-mb", required_argument, NULL, OPT_CACHE_MB },
	{ "zipf-theta", required_argument, NULL, OPT_ZIPF_THETA },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "ra-max-kb", required_argument, NULL, OPT_RA_MAX_KB },
	{ "calls", required_argument, NULL, OPT_CALLS },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: lpcbench <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(benches); i++)
		fprintf(out, "  %-8s %s\n", benches[i]->name, benches[i]->help);
	fprintf(out, "  %-8s %s\n", "all", "every benchmark above, in this order, with the same options");
	fprintf(out, "  %-8s %s\n", "A,B", "those benchmarks, in the order given (e.g. lookup,sqlite)");
	fprintf(out,
		"\noptions [default]:\n"
		"  --threads LIST   thread counts, comma-separated; every round runs each [" DEF_THREADS "]\n"
		"                   (scan: the scanner counts [1,2])\n"
		"  --rounds N       measured rounds; ratios are taken within a round [%u; write, scan: 11; sqlite: 15]\n"
		"  --warmup N       rounds run first and not recorded [%u]\n"
		"  --slice-ms MS    time of one variant at one thread count in a round [%u]\n"
		"  --file-mb MB     size of the data file (real bytes, removed at exit)\n"
		"                   [lookup: %u; read, write, scan: 4 x --cache-mb; pin: 256, full size 1024]\n"
		"  --cache-mb MB    read, write: lpc's cache budget, and the memory cgroup limit of\n"
		"                   the kernel's page cache for the kernel and mmap rows [%u]\n"
		"                   (read's full size: --cache-mb 1024 --file-mb 4096)\n"
		"                   sqlite: lpc's budget, default 16; databases 4x an eighth of it\n"
		"                   and 4x it (full size: --cache-mb 256)\n"
		"                   scan: lpc's budget (each cache) and the kernel's limit, default 64\n"
		"                   (a 256 MiB file); full size: --cache-mb 256 (a 1 GiB file)\n"
		"  --zipf-theta T   read: the Zipf skew, 0 < T < 1 [%.2f]\n"
		"  --policy P       read: lpc's eviction policy, clock2 or clock (lpc_config's\n"
		"                   reclaim_policy), or both: lpc (clock2) and lpc_clock side by\n"
		"                   side in every round [clock2]\n"
		"  --ra-max-kb KB   scan: lpc's largest readahead window (lpc_config's\n"
		"                   readahead_max_kb) [0: the library's default]\n"
		"  --calls LIST     scan: call sizes in KiB, comma-separated, multiples of 4 [4,16,128]\n"
		"  --dir DIR        where to create it [$TMPDIR unless tmpfs, else /var/tmp]\n"
		"  --csv FILE       write every raw per-round value and the summaries [none]\n"
		"  --plot DIR       write every printed table as DIR/<table>.csv and, with\n"
		"                   gnuplot, DIR/<table>.svg (a bar chart) [none]\n"
		"  --seed N         seed of the random page numbers and the hot pages [%u]\n"
		"  --no-pin         leave threads unpinned [worker i pinned to allowed CPU i mod CPUs]\n"
		"  --variants LIST  lookup: the variants to run, e.g. lockless to profile one\n"
		"                   [floor,lockless,locked,kernel,lpc_pread,kernel_hot,lpc_pread_hot,\n"
		"                   lockless_hot,optimistic,kernel_shared,lpc_pread_shared,lockless_shared,\n"
		"                   optimistic_shared]\n"
		"                   fault: [lockless,locked,kernel_anon,kernel_file]; also\n"
		"                   lockless_files (each thread's range its own file)\n"
		"                   scan: the rows to run, e.g. lpc_uring,lpc_sync to compare\n"
		"                   the backends [lpc_uring,lpc_sync,kernel,direct_1m]\n"
		"  -h, --help       this text\n"
		"\nThe run prints its configuration first, a progress line on stderr, then the\n"
		"results: median [min - max] over the rounds, ratios, checks against targets\n"
		"(informational: the exit status is 0 whatever they say) and lpc's counters.\n",
		DEF_ROUNDS, DEF_WARMUP, DEF_SLICE_MS, DEF_FILE_MB, DEF_CACHE_MB,
		DEF_ZIPF_THETA, DEF_SEED);
}

static unsigned long long parse_num(const char *flag, const char *s,
				    unsigned long long min, unsigned long long max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < min || v > max)
		die("%s: '%s' is not a number from %llu to %llu", flag, s, min, max);
	return v;
}

static void parse_threads(const char *s, struct bench_opts *o)
{
	char *copy = strdup(s), *save = NULL, *tok;

	if (!copy)
		die_err(ENOMEM, "parsing --threads");
	o->nr_tconf = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned t = (unsigned)parse_num("--threads", tok, 1, BENCH_MAX_THREADS);

		if (o->nr_tconf == BENCH_MAX_TCONF)
			die("--threads: at most %u thread counts", BENCH_MAX_TCONF);
		for (unsigned i = 0; i < o->nr_tconf; i++)
			if (o->threads[i] == t)
				die("--threads: %u is listed twice", t);
		o->threads[o->nr_tconf++] = t;
	}
	if (!o->nr_tconf)
		die("--threads: '%s' lists no thread count", s);
	free(copy);
}

static void parse_opts(int argc, char **argv, struct bench_opts *o)
{
	int c;

	parse_threads(DEF_THREADS, o);
	o->rounds = DEF_ROUNDS;
	o->warmup = DEF_WARMUP;
	o->slice_ms = DEF_SLICE_MS;
	o->file_mb = DEF_FILE_MB;
	o->seed = DEF_SEED;
	o->cache_mb = DEF_CACHE_MB;
	o->zipf_theta = DEF_ZIPF_THETA;
	o->policy = BENCH_POLICY_CLOCK2;
	o->pin = true;

	while ((c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_THREADS:
			parse_threads(optarg, o);
			o->threads_set = true;
			break;
		case OPT_ROUNDS:
			o->rounds = (unsigned)parse_num("--rounds", optarg, 1, MAX_ROUNDS);
			o->rounds_set = true;
			break;
		case OPT_WARMUP:
			o->warmup = (unsigned)parse_num("--warmup", optarg, 0, MAX_ROUNDS);
			break;
		case OPT_SLICE_MS:
			o->slice_ms = (unsigned)parse_num("--slice-ms", optarg, 1, MAX_SLICE_MS);
			break;
		case OPT_FILE_MB:
			o->file_mb = (unsigned)parse_num("--file-mb", optarg, 1, MAX_FILE_MB);
			o->file_mb_set = true;
			break;
		case OPT_CACHE_MB:
			o->cache_mb = (unsigned)parse_num("--cache-mb", optarg, 1, MAX_FILE_MB);
			o->cache_mb_set = true;
			break;
		case OPT_ZIPF_THETA: {
			char *end;

			errno = 0;
			o->zipf_theta = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o->zipf_theta > 0 && o->zipf_theta < 1))
				die("--zipf-theta: '%s' is not a number between 0 and 1", optarg);
			break;
		}
		case OPT_POLICY:
			if (!strcmp(optarg, "clock2"))
				o->policy = BENCH_POLICY_CLOCK2;
			else if (!strcmp(optarg, "clock"))
				o->policy = BENCH_POLICY_CLOCK;
			else if (!strcmp(optarg, "both"))
				o->policy = BENCH_POLICY_BOTH;
			else
				die("--policy: '%s' is not clock2, clock or both", optarg);
			break;
		case OPT_RA_MAX_KB:
			o->ra_max_kb = (uint32_t)parse_num("--ra-max-kb", optarg, 0, UINT32_MAX - 1);
			break;
		case OPT_PLOT:
			o->plot = optarg;
			break;
		case OPT_DIR:
			o->dir = optarg;
			break;
		case OPT_CSV:
			o->csv = optarg;
			break;
		case OPT_SEED:
			o->seed = parse_num("--seed", optarg, 0, UINT64_MAX);
			break;
		case OPT_NO_PIN:
			o->pin = false;
			break;
		case OPT_VARIANTS:
			o->variants = optarg;
			break;
		case OPT_CALLS:
			o->calls = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			fprintf(stderr, "lpcbench: try 'lpcbench --help'\n");
			exit(1);
		}
	}
	if (optind < argc)
		die("unexpected argument '%s' (try 'lpcbench --help')", argv[optind]);
}

/* The CPU's name from /proc/cpuinfo, for the record; "unknown" if none. */
static void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) || !colon)
			continue;
		colon += 1 + (colon[1] == ' ');
		colon[strcspn(colon, "\n")] = '\0';
		snprintf(buf, len, "%s", colon);
		break;
	}
	fclose(f);
}

static void echo_config(int argc, char **argv, const struct bench_env *env,
			const struct bench *const *run, size_t nr_run)
{
	double est = 0;
	const struct bench_opts *o = env->opts;
	struct utsname u;
	char model[128];

	cpu_model(model, sizeof(model));
	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "unknown");
	printf("lpcbench (lpc %d.%d)", LPC_VERSION_MAJOR, LPC_VERSION_MINOR);
	for (int i = 1; i < argc; i++)
		printf(" %s", argv[i]);
	printf("\n");
	printf("  machine    %u CPUs allowed (%ld online), %s, Linux %s\n",
	       env->nr_cpus, sysconf(_SC_NPROCESSORS_ONLN), model, u.release);
	if (TSC_HAVE_RDTSC)
		printf("  clock      TSC, %.4f ticks/ns (calibrated against CLOCK_MONOTONIC)%s\n",
		       env->tsc.ticks_per_ns,
		       env->tsc.invariant ? ", invariant" :
		       ", NOT invariant (no constant_tsc/nonstop_tsc): ticks of different CPUs may not add up");
	else
		printf("  clock      CLOCK_MONOTONIC, unit ns (no TSC on this architecture)\n");
	printf("  threads    ");
	for (unsigned i = 0; i < o->nr_tconf; i++)
		printf("%s%u", i ? "," : "", o->threads[i]);
	printf(" (%s)\n", o->pin ? "pinned: worker i on allowed CPU i mod CPUs" : "unpinned");
	printf("  rounds     %u measured + %u warm-up; a round runs every thread count x every variant, %u ms each\n",
	       o->rounds, o->warmup, o->slice_ms);
	printf("  seed       %" PRIu64 "\n", o->seed);
	printf("  csv        %s\n", o->csv ? o->csv : "none");
	printf("  plot       %s\n", o->plot ? o->plot : "none");
	for (size_t i = 0; i < nr_run; i++)
		est += run[i]->estimate_s(o);
	printf("  estimate   %.0f s of timed slices, plus setup\n", est);
	printf("\n");
	fflush(stdout);
}

/* The benchmarks cmd names: "all", or a comma-separated list run in its
 * order ("lookup,sqlite").  Return: how many (into run), 0 if a name is
 * unknown or repeated. */
static size_t pick_benches(const char *cmd, const struct bench **run)
{
	size_t n = 0, len, i, j;

	if (!strcmp(cmd, "all")) {
		for (i = 0; i < ARRAY_SIZE(benches); i++)
			run[n++] = benches[i];
		return n;
	}
	for (const char *p = cmd; *p; p += len + (p[len] == ',')) {
		len = strcspn(p, ",");
		for (i = 0; i < ARRAY_SIZE(benches); i++)
			if (strlen(benches[i]->name) == len && !strncmp(p, benches[i]->name, len))
				break;
		for (j = 0; j < n && i < ARRAY_SIZE(benches) && run[j] != benches[i]; j++)
			;
		if (i == ARRAY_SIZE(benches) || j < n)
			return 0;
		run[n++] = benches[i];
	}
	return n;
}

/* `lpcbench --kchild NAME ARG CMD_FD RES_FD <options>`: an exec'd child of a
 * benchmark (kchild.h); never returns. */
static int child_main(int argc, char **argv)
{
	static struct bench_opts opts;
	static struct bench_env env = { .opts = &opts };

	if (argc < 6)
		die("%s: NAME ARG CMD_FD RES_FD expected", KCHILD_EXEC_FLAG);
	/* getopt sees argv[5..] as its argv: the options start at argv[6]. */
	parse_opts(argc - 5, argv + 5, &opts);
	env.nr_cpus = cpus_allowed();
	for (size_t i = 0; i < ARRAY_SIZE(benches); i++)
		if (!strcmp(argv[2], benches[i]->name) && benches[i]->child)
			benches[i]->child(&env, argv[3], (int)parse_num("CMD_FD", argv[4], 0, INT_MAX),
					  (int)parse_num("RES_FD", argv[5], 0, INT_MAX));
	die("%s: '%s' has no child", KCHILD_EXEC_FLAG, argv[2]);
}

int main(int argc, char **argv)
{
	struct bench_opts opts = { 0 };
	struct bench_env env = { .opts = &opts };
	const struct bench *run[ARRAY_SIZE(benches)];
	size_t nr_run = 0;
	const char *cmd;
	uint64_t t0;

	if (argc < 2) {
		usage(stderr);
		return 1;
	}
	cmd = argv[1];
	if (!strcmp(cmd, KCHILD_EXEC_FLAG))
		return child_main(argc, argv);
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		usage(stdout);
		return 0;
	}
	nr_run = pick_benches(cmd, run);
	if (!nr_run) {
		fprintf(stderr, "lpcbench: unknown command '%s'\n\n", cmd);
		usage(stderr);
		return 1;
	}
	/* Options follow the command: getopt sees argv[1..] as its argv. */
	parse_opts(argc - 1, argv + 1, &opts);
	kchild_set_args(argc - 2, argv + 2);
	for (size_t i = 0; i < nr_run; i++)
		if (run[i]->check_opts)
			run[i]->check_opts(&opts);

	env.nr_cpus = cpus_allowed();
	progress("lpcbench: calibrating the TSC");
	tsc_calibrate(&env.tsc);
	progress_done();
	if (opts.csv)
		env.csv = csv_open(opts.csv);
	plot_init(opts.plot);
	echo_config(argc, argv, &env, run, nr_run);

	t0 = now_ns();
	for (size_t i = 0; i < nr_run; i++)
		run[i]->run(&env);
	csv_close(env.csv);
	if (opts.csv)
		printf("csv written to %s\n", opts.csv);
	plot_summary();
	printf("lpcbench %s: done in %.1f s\n", cmd, (double)(now_ns() - t0) / 1e9);
	return 0;
}
