/* bench/sort_seq.c — the sequential C sorts bench/filter-sort.sh puts
 * beside strata's radix sort: the C library's qsort, and a sequential LSD
 * radix sort (8-bit digits, four counting passes) as a second reference for
 * what one core does with the same algorithm. n random u32 keys (`qsort`,
 * `radix`), or keys with u32 values carried along (`qsort-kv`, `radix-kv`:
 * qsort of (key, index) pairs, which makes it stable), sorted `runs` times,
 * each from a fresh copy of the same keys (the copy untimed), after one
 * untimed run; the median printed in ms. The result is checked once.
 *
 *   sort_seq N RUNS qsort|radix|qsort-kv|radix-kv */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timing.h"

typedef struct pair {
    uint32_t key, value;
} pair;

static uint32_t next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (uint32_t)(*s >> 32);
}

static int by_key(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* the values are the keys' input positions: equal keys in input order */
static int by_key_then_value(const void *a, const void *b) {
    const pair *p = a, *q = b;
    if (p->key != q->key) return (p->key > q->key) - (p->key < q->key);
    return (p->value > q->value) - (p->value < q->value);
}

/* Four stable counting passes of 8 bits, between ks and tmp (and vs, tvs). */
static void radix(uint32_t *ks, uint32_t *tmp, uint32_t *vs, uint32_t *tvs, long n) {
    for (int shift = 0; shift < 32; shift += 8) {
        long start[256] = {0};
        for (long i = 0; i < n; i++) start[(ks[i] >> shift) & 255]++;
        long sum = 0;
        for (int d = 0; d < 256; d++) {
            long c = start[d];
            start[d] = sum;
            sum += c;
        }
        for (long i = 0; i < n; i++) {
            long at = start[(ks[i] >> shift) & 255]++;
            tmp[at] = ks[i];
            if (vs) tvs[at] = vs[i];
        }
        uint32_t *t = ks;
        ks = tmp, tmp = t;
        if (vs) t = vs, vs = tvs, tvs = t;
    }
}

int main(int argc, char **argv) {
    const char *how = argc == 4 ? argv[3] : "";
    int kv = !strcmp(how, "qsort-kv") || !strcmp(how, "radix-kv"), use_radix = !strncmp(how, "radix", 5);
    if (argc != 4 || (!kv && strcmp(how, "qsort") && strcmp(how, "radix"))) {
        fprintf(stderr, "usage: sort_seq N RUNS qsort|radix|qsort-kv|radix-kv\n");
        return 2;
    }
    long n, runs;
    if (!n_and_runs("sort_seq", argv, &n, &runs)) return 2;
    uint32_t *keys = malloc((size_t)n * 4), *ks = malloc((size_t)n * 4), *tmp = malloc((size_t)n * 4);
    uint32_t *vs = malloc((size_t)n * 4), *tvs = malloc((size_t)n * 4);
    pair *ps = malloc((size_t)n * sizeof *ps);
    double *ms = malloc((size_t)runs * sizeof *ms);
    if (!keys || !ks || !tmp || !vs || !tvs || !ps || !ms) {
        fprintf(stderr, "sort_seq: out of memory\n");
        return 1;
    }
    uint64_t s = 88172645463325252ull;
    for (long i = 0; i < n; i++) keys[i] = next(&s);
    for (long r = -1; r < runs; r++) {
        memcpy(ks, keys, (size_t)n * 4);
        for (long i = 0; i < n; i++) vs[i] = (uint32_t)i, ps[i] = (pair){keys[i], (uint32_t)i};
        double t = now_ms();
        if (use_radix)
            radix(ks, tmp, kv ? vs : NULL, tvs, n);
        else if (kv)
            qsort(ps, (size_t)n, sizeof *ps, by_key_then_value);
        else
            qsort(ks, (size_t)n, sizeof *ks, by_key);
        if (r >= 0) ms[r] = now_ms() - t;
    }
    for (long i = 1; i < n; i++) {
        uint32_t a = kv && !use_radix ? ps[i - 1].key : ks[i - 1], b = kv && !use_radix ? ps[i].key : ks[i];
        if (a > b) {
            fprintf(stderr, "sort_seq: not sorted at %ld\n", i);
            return 1;
        }
    }
    printf("%.6f\n", median_ms(ms, runs));
    return 0;
}
