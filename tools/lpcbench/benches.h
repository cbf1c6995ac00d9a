/* SPDX-License-Identifier: MIT */
/*
 * benches.h - lpcbench's benchmarks, each defined in its own folder under
 * tools/lpcbench/ (struct bench: tools/harness/bench.h); main.c lists them in
 * the order `lpcbench all` runs them.
 */
#ifndef LPCBENCH_BENCHES_H
#define LPCBENCH_BENCHES_H

#include "harness/bench.h"

extern const struct bench bench_lookup;
extern const struct bench bench_read;
extern const struct bench bench_scan;
extern const struct bench bench_pin;
extern const struct bench bench_fault;
extern const struct bench bench_stream;
extern const struct bench bench_walk;
extern const struct bench bench_write;
extern const struct bench bench_sqlite;
extern const struct bench bench_sqlite_small;
extern const struct bench bench_rbd;
extern const struct bench bench_startup;

#endif /* LPCBENCH_BENCHES_H */
