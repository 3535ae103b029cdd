/* bench/hist_seq.c — the datasets of the histogram thesis' figure 34, and
 * the sequential C histogram that bench/histogram-datasets.sh puts beside
 * strata's.
 *
 *   hist_seq make KIND H N SEED OUT.npy   write N i32 indices into H buckets:
 *        KIND uniform    every bucket alike
 *             normal:SD  a normal around H/2 with standard deviation SD,
 *                        truncated to [0, H)
 *             single     every index in one bucket (H/2)
 *   hist_seq time IN.npy H RUNS           count them into H buckets RUNS
 *        times (after one untimed run) and print the median in ms */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timing.h"

static uint64_t state;
static double unit(void) { /* xorshift64*, [0, 1) */
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return (double)((state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

static int make(const char *kind, long h, long n, unsigned long seed, const char *out) {
    int32_t *is = malloc((size_t)n * sizeof *is);
    if (!is) return fprintf(stderr, "hist_seq: out of memory\n"), 1;
    state = seed * 0x9e3779b97f4a7c15ull + 1;
    double sd = strncmp(kind, "normal:", 7) == 0 ? atof(kind + 7) : 0;
    for (long i = 0; i < n; i++) {
        if (!strcmp(kind, "uniform")) {
            is[i] = (int32_t)(unit() * (double)h);
        } else if (!strcmp(kind, "single")) {
            is[i] = (int32_t)(h / 2);
        } else if (sd > 0) {
            double x;
            do { /* Box-Muller, redrawn until it falls inside */
                double u = unit(), v = unit();
                x = (double)h / 2 + sd * sqrt(-2 * log(u > 0 ? u : 1e-300)) * cos(2 * M_PI * v);
            } while (x < 0 || x >= (double)h);
            is[i] = (int32_t)x;
        } else {
            return fprintf(stderr, "hist_seq: unknown kind `%s`\n", kind), 2;
        }
    }
    FILE *f = fopen(out, "wb");
    if (!f) return perror(out), 1;
    char header[128];
    int len = snprintf(header, sizeof header, "{'descr': '<i4', 'fortran_order': False, 'shape': (%ld,), }", n);
    while ((10 + len + 1) % 64) header[len++] = ' ';
    header[len++] = '\n';
    unsigned char magic[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(len & 0xff), (unsigned char)(len >> 8)};
    fwrite(magic, 1, 10, f);
    fwrite(header, 1, (size_t)len, f);
    fwrite(is, sizeof *is, (size_t)n, f);
    free(is);
    return fclose(f) ? (perror(out), 1) : 0;
}

static int time_it(const char *in, long h, long runs) {
    FILE *f = fopen(in, "rb");
    if (!f) return perror(in), 1;
    fseek(f, 0, SEEK_END);
    long bytes = ftell(f);
    unsigned char head[10];
    fseek(f, 0, SEEK_SET);
    if (fread(head, 1, 10, f) != 10) return fprintf(stderr, "%s: not a .npy file\n", in), 1;
    long start = 10 + head[8] + 256L * head[9], n = (bytes - start) / 4;
    int32_t *is = malloc((size_t)n * sizeof *is);
    int32_t *hist = calloc((size_t)(h > 0 ? h : 1), sizeof *hist);
    double *ms = malloc((size_t)runs * sizeof *ms);
    if (!is || !hist || !ms) return fprintf(stderr, "hist_seq: out of memory\n"), 1;
    fseek(f, start, SEEK_SET);
    if (fread(is, 4, (size_t)n, f) != (size_t)n) return fprintf(stderr, "%s: short\n", in), 1;
    fclose(f);
    long check = 0;
    for (long r = -1; r < runs; r++) {
        double t = now_ms();
        memset(hist, 0, (size_t)h * sizeof *hist);
        for (long i = 0; i < n; i++)
            if (is[i] >= 0 && is[i] < h) hist[is[i]]++;
        if (r >= 0) ms[r] = now_ms() - t;
        check += hist[h / 2];
    }
    printf("%.6f\n", median_ms(ms, runs));
    fprintf(stderr, "hist_seq: checksum %ld\n", check);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 7 && !strcmp(argv[1], "make")) return make(argv[2], atol(argv[3]), atol(argv[4]), strtoul(argv[5], NULL, 10), argv[6]);
    if (argc == 5 && !strcmp(argv[1], "time")) return time_it(argv[2], atol(argv[3]), atol(argv[4]));
    fprintf(stderr, "usage: hist_seq make KIND H N SEED OUT.npy | hist_seq time IN.npy H RUNS\n");
    return 2;
}
