/* bench/omp_primitives.c — the hand-written OpenMP peers that
 * bench/primitives.sh puts beside strata's programs on a CPU: each the way
 * a performance engineer writes it for every core, not a strawman.
 *
 *   omp_primitives WHAT N RUNS    run WHAT on N elements RUNS times (after
 *        one untimed run) on OMP_NUM_THREADS threads; print the median ms
 *
 *   copy    f32 out[i] = xs[i]                       (parallel for simd)
 *   saxpy   f32 out[i] = 2.5 * xs[i] + ys[i]         (parallel for simd)
 *   sum     f32 sum of xs: an `omp simd` reduction per thread, combined
 *   hist    u8 pixels into 256 u32 bins: four interleaved private copies a
 *           thread (a run of equal pixels does not chain one counter's
 *           store to its next load), added up per thread, then across
 *   filter  i32 xs[i] > 0 kept in order: two passes, branch-free (count a
 *           thread's share, scan the counts, write each share at its
 *           offset with an unconditional store and a conditional advance)
 *
 * The inputs are random (u8 pixels uniform, i32 of both signs so that the
 * filter keeps half, f32 in [0, 1)); a checksum goes to stderr so the work
 * cannot be optimised away. Build: cc -O3 -march=native -fopenmp. */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timing.h"

typedef struct arrays {
    long n;
    float *xs, *ys, *out;
    int32_t *is, *kept;
    uint8_t *pixels;
    uint32_t bins[256];
    double check;
} arrays;

static void copy(arrays *a) {
    const float *restrict xs = a->xs;
    float *restrict out = a->out;
#pragma omp parallel for simd schedule(static)
    for (long i = 0; i < a->n; i++) out[i] = xs[i];
    a->check += out[a->n / 2];
}

static void saxpy(arrays *a) {
    const float *restrict xs = a->xs, *restrict ys = a->ys;
    float *restrict out = a->out;
#pragma omp parallel for simd schedule(static)
    for (long i = 0; i < a->n; i++) out[i] = 2.5f * xs[i] + ys[i];
    a->check += out[a->n / 2];
}

static void sum(arrays *a) {
    const float *restrict xs = a->xs;
    float total = 0;
#pragma omp parallel for simd reduction(+ : total) schedule(static)
    for (long i = 0; i < a->n; i++) total += xs[i];
    a->check += total;
}

enum { COPIES = 4 };

static void hist(arrays *a) {
    const uint8_t *restrict px = a->pixels;
    long n = a->n;
    memset(a->bins, 0, sizeof a->bins);
#pragma omp parallel
    {
        uint32_t mine[COPIES][256];
        memset(mine, 0, sizeof mine);
#pragma omp for schedule(static)
        for (long c = 0; c < (n + 4095) / 4096; c++) {
            long lo = c * 4096, hi = lo + 4096 < n ? lo + 4096 : n, i = lo;
            for (; i + COPIES <= hi; i += COPIES)
                for (int k = 0; k < COPIES; k++) mine[k][px[i + k]]++;
            for (; i < hi; i++) mine[0][px[i]]++;
        }
        uint32_t total[256];
        for (int b = 0; b < 256; b++) total[b] = mine[0][b] + mine[1][b] + mine[2][b] + mine[3][b];
#pragma omp critical
        for (int b = 0; b < 256; b++) a->bins[b] += total[b];
    }
    a->check += a->bins[7];
}

static void filter(arrays *a) {
    const int32_t *restrict xs = a->is;
    int32_t *restrict out = a->kept;
    long n = a->n, offsets[1024];
    int threads = omp_get_max_threads() < 1024 ? omp_get_max_threads() : 1024;
#pragma omp parallel num_threads(threads)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        long lo = n * t / nt, hi = n * (t + 1) / nt, count = 0;
        for (long i = lo; i < hi; i++) count += xs[i] > 0;
        offsets[t] = count;
#pragma omp barrier
        long at = 0;
        for (int s = 0; s < t; s++) at += offsets[s];
        /* once the share's last kept element is written the rest are
         * dropped: stopping there keeps the unconditional store inside
         * the share's own part of out */
        long end = at + count;
        for (long i = lo; i < hi && at < end; i++) {
            out[at] = xs[i];
            at += xs[i] > 0;
        }
    }
    a->check += out[0];
}

static const struct {
    const char *name;
    void (*run)(arrays *);
} peers[] = {{"copy", copy}, {"saxpy", saxpy}, {"sum", sum}, {"hist", hist}, {"filter", filter}};

int main(int argc, char **argv) {
    int which = -1;
    for (size_t p = 0; argc == 4 && p < sizeof peers / sizeof *peers; p++)
        if (!strcmp(argv[1], peers[p].name)) which = (int)p;
    if (which < 0) {
        fprintf(stderr, "usage: omp_primitives copy|saxpy|sum|hist|filter N RUNS\n");
        return 2;
    }
    long n, runs;
    if (!n_and_runs("omp_primitives", argv + 1, &n, &runs)) return 2;
    arrays a = {.n = n};
    a.xs = malloc((size_t)n * 4), a.ys = malloc((size_t)n * 4), a.out = malloc((size_t)n * 4);
    a.is = malloc((size_t)n * 4), a.kept = malloc((size_t)n * 4), a.pixels = malloc((size_t)n);
    double *ms = malloc((size_t)runs * sizeof *ms);
    if (!a.xs || !a.ys || !a.out || !a.is || !a.kept || !a.pixels || !ms)
        return fprintf(stderr, "omp_primitives: out of memory\n"), 1;
    /* first touch by the threads that use the pages, as the runs do */
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) {
        uint32_t h = (uint32_t)i * 2654435761u ^ 0x9e3779b9u;
        h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
        a.xs[i] = (float)(h >> 8) / 16777216.0f, a.ys[i] = (float)(h & 0xffff) / 65536.0f, a.out[i] = 0;
        a.is[i] = (int32_t)h, a.kept[i] = 0, a.pixels[i] = (uint8_t)(h >> 24);
    }
    for (long r = -1; r < runs; r++) {
        double t = now_ms();
        peers[which].run(&a);
        if (r >= 0) ms[r] = now_ms() - t;
    }
    printf("%.6f\n", median_ms(ms, runs));
    fprintf(stderr, "omp_primitives %s: checksum %g\n", argv[1], a.check);
    return 0;
}
