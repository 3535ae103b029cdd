/* bench/timing.h — the host side of the benchmarks' timings: a monotonic
 * clock in ms and the median of a set of samples (sorted in place). */
#ifndef STRATA_BENCH_TIMING_H
#define STRATA_BENCH_TIMING_H

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

#endif
