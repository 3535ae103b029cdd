/* bench/hist_omp.c — the OpenMP peer that bench/histogram-datasets.sh puts
 * beside strata's histograms: the hand-written way to count in parallel on
 * a CPU. Each thread counts its contiguous share of the indices into a
 * private copy of the histogram (no atomics, no shared cache lines), then
 * the threads add the copies into the result, each a range of buckets. A
 * thread takes chunks of the indices as it becomes free (the machine is
 * shared, and a thread descheduled for a while would otherwise hold the
 * others at the barrier).
 *
 *   hist_omp IN.npy H RUNS THREADS   count IN's i32 indices into H buckets
 *        RUNS times (after one untimed run) with THREADS threads and print
 *        the median in ms; a run includes zeroing the private copies and
 *        adding them up, as strata's time includes its subhistograms'.
 *
 * Build: cc -O2 -fopenmp. The datasets come from bench/hist_seq.c. */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timing.h"

/* The i32 indices of a one-dimensional .npy file; *n their count. */
static int32_t *read_npy(const char *path, long *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return perror(path), NULL;
    unsigned char head[10];
    if (fread(head, 1, 10, f) != 10) return fclose(f), fprintf(stderr, "%s: not a .npy file\n", path), NULL;
    fseek(f, 0, SEEK_END);
    long start = 10 + head[8] + 256L * head[9];
    *n = (ftell(f) - start) / 4;
    int32_t *is = malloc((size_t)*n * sizeof *is);
    fseek(f, start, SEEK_SET);
    if (!is || fread(is, 4, (size_t)*n, f) != (size_t)*n) {
        fclose(f);
        free(is);
        return fprintf(stderr, "%s: short or out of memory\n", path), NULL;
    }
    fclose(f);
    return is;
}

enum { CHUNKS = 64 }; /* of the indices: 2.5 MiB each at 20M */

/* One histogram: private copies counted in parallel, then added up. The
 * copies are padded to whole cache lines so no two threads share one. */
static void count(const int32_t *is, long n, int32_t *hist, long h, int32_t *copies, long stride, int threads) {
#pragma omp parallel num_threads(threads)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        int32_t *mine = copies + (size_t)t * (size_t)stride;
        memset(mine, 0, (size_t)h * sizeof *mine);
        /* chunks handed out as threads ask: a thread the machine's other
         * work preempts takes fewer, and the others do not wait for it */
#pragma omp for schedule(dynamic, 1)
        for (long c = 0; c < CHUNKS; c++) {
            long end = (c + 1) * (n / CHUNKS) + (c + 1 == CHUNKS ? n % CHUNKS : 0);
            for (long i = c * (n / CHUNKS); i < end; i++)
                if (is[i] >= 0 && is[i] < h) mine[is[i]]++;
        }
#pragma omp for schedule(static)
        for (long b = 0; b < h; b++) {
            int32_t sum = 0;
            for (int s = 0; s < nt; s++) sum += copies[(size_t)s * (size_t)stride + (size_t)b];
            hist[b] = sum;
        }
    }
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: hist_omp IN.npy H RUNS THREADS\n");
        return 2;
    }
    long h = atol(argv[2]), runs = atol(argv[3]), n = 0;
    int threads = atoi(argv[4]);
    if (h < 1 || runs < 1 || threads < 1) {
        fprintf(stderr, "hist_omp: H, RUNS and THREADS must be positive\n");
        return 2;
    }
    int32_t *is = read_npy(argv[1], &n);
    long stride = (h + 15) / 16 * 16; /* 64-byte lines */
    int32_t *hist = malloc((size_t)h * sizeof *hist);
    int32_t *copies = aligned_alloc(64, (size_t)threads * (size_t)stride * sizeof *copies);
    double *ms = malloc((size_t)runs * sizeof *ms);
    if (!is || !hist || !copies || !ms) return fprintf(stderr, "hist_omp: out of memory\n"), 1;
    long check = 0;
    for (long r = -1; r < runs; r++) {
        double t = now_ms();
        count(is, n, hist, h, copies, stride, threads);
        if (r >= 0) ms[r] = now_ms() - t;
        check += hist[h / 2];
    }
    printf("%.6f\n", median_ms(ms, runs));
    fprintf(stderr, "hist_omp: checksum %ld\n", check);
    return 0;
}
