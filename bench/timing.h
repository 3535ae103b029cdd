/* bench/timing.h — the host side of the benchmarks' timings: a monotonic
 * clock in ms and the median of a set of samples (sorted in place). */
#ifndef STRATA_BENCH_TIMING_H
#define STRATA_BENCH_TIMING_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_ms(double *ms, long n) {
    qsort(ms, (size_t)n, sizeof *ms, by_value);
    return n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
}

/* A peer's N and RUNS, argv[1] and argv[2], both positive; 0 with a
 * sentence naming the peer on stderr otherwise. */
static int n_and_runs(const char *peer, char **argv, long *n, long *runs) {
    *n = atol(argv[1]);
    *runs = atol(argv[2]);
    if (*n >= 1 && *runs >= 1) return 1;
    fprintf(stderr, "%s: N and RUNS must be positive\n", peer);
    return 0;
}

#endif
