/* bench/seq_scan.c — the sequential C scan that bench/lookback-vs-copy.sh
 * puts beside strata's single-pass scan: an inclusive prefix sum of n
 * random f32 (the inputs strata generates are other numbers; a sum's time
 * does not depend on them), timed `runs` times, the median printed in ms.
 *
 *   seq_scan N RUNS */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "timing.h"

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: seq_scan N RUNS\n");
        return 2;
    }
    long n = atol(argv[1]), runs = atol(argv[2]);
    if (n < 1 || runs < 1) {
        fprintf(stderr, "seq_scan: N and RUNS must be positive\n");
        return 2;
    }
    float *xs = malloc((size_t)n * sizeof *xs), *out = malloc((size_t)n * sizeof *out);
    double *ms = malloc((size_t)runs * sizeof *ms);
    if (!xs || !out || !ms) {
        fprintf(stderr, "seq_scan: out of memory\n");
        return 1;
    }
    srand(1);
    for (long i = 0; i < n; i++) xs[i] = (float)rand() / (float)RAND_MAX;
    float check = 0;
    for (long r = -1; r < runs; r++) { /* one untimed run first, as strata warms up */
        double t = now_ms();
        float acc = 0;
        for (long i = 0; i < n; i++) {
            acc += xs[i];
            out[i] = acc;
        }
        if (r >= 0) ms[r] = now_ms() - t;
        check += out[n - 1];
    }
    printf("%.6f\n", median_ms(ms, runs));
    fprintf(stderr, "seq_scan: checksum %g\n", (double)check); /* keeps the loop from being optimised away */
    free(xs);
    free(out);
    free(ms);
    return 0;
}
