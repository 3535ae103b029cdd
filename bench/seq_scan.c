/* bench/seq_scan.c — the sequential C scan that bench/lookback-vs-copy.sh
 * and bench/cpu-peers.sh put beside strata's single-pass scan: an inclusive
 * prefix sum of n random f32 or i32 (the inputs strata generates are other
 * numbers; a sum's time does not depend on them), timed `runs` times, the
 * median printed in ms.
 *
 *   seq_scan N RUNS [f32|i32]     (default f32) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timing.h"

/* One untimed run first, as strata warms up; the checksum keeps the loop
 * from being optimised away. i32 adds wrap, as strata's do (in uint32_t). */
#define SCAN_BENCH(T, ACC, NAME)                                                   \
    static double scan_##NAME(long n, long runs, double *ms) {                     \
        T *xs = malloc((size_t)n * sizeof *xs), *out = malloc((size_t)n * sizeof *out); \
        if (!xs || !out) return -1;                                                \
        srand(1);                                                                  \
        for (long i = 0; i < n; i++) xs[i] = (T)(rand() % 1000) / (T)7;            \
        double check = 0;                                                          \
        for (long r = -1; r < runs; r++) {                                         \
            double t = now_ms();                                                   \
            ACC acc = 0;                                                           \
            for (long i = 0; i < n; i++) {                                         \
                acc += (ACC)xs[i];                                                 \
                out[i] = (T)acc;                                                   \
            }                                                                      \
            if (r >= 0) ms[r] = now_ms() - t;                                      \
            check += (double)out[n - 1];                                           \
        }                                                                          \
        fprintf(stderr, "seq_scan: checksum %g\n", check);                         \
        free(xs);                                                                  \
        free(out);                                                                 \
        return median_ms(ms, runs);                                                \
    }
SCAN_BENCH(float, float, f32)
SCAN_BENCH(int32_t, uint32_t, i32)

int main(int argc, char **argv) {
    const char *type = argc == 4 ? argv[3] : "f32";
    if ((argc != 3 && argc != 4) || (strcmp(type, "f32") && strcmp(type, "i32"))) {
        fprintf(stderr, "usage: seq_scan N RUNS [f32|i32]\n");
        return 2;
    }
    long n, runs;
    if (!n_and_runs("seq_scan", argv, &n, &runs)) return 2;
    double *ms = malloc((size_t)runs * sizeof *ms);
    double median = ms ? (strcmp(type, "i32") ? scan_f32 : scan_i32)(n, runs, ms) : -1;
    free(ms);
    if (median < 0) {
        fprintf(stderr, "seq_scan: out of memory\n");
        return 1;
    }
    printf("%.6f\n", median);
    return 0;
}
