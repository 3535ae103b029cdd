/* bench/thrust_sort.cpp — Thrust's sort on the host's cores, the peer
 * bench/filter-sort.sh puts beside strata's radix sort on a CPU: Thrust
 * built with its OpenMP device system (the CUDA toolkit's CCCL headers), so
 * a device_vector lives in host memory and the sort runs on OMP_NUM_THREADS
 * threads. n random u32 keys sorted (`sort`), or sorted with u32 values
 * carried along (`kv`: sort_by_key), `runs` times, each from a fresh copy of
 * the same unsorted keys (the copy untimed), after one untimed run; the
 * median printed in ms.
 *
 *   g++ -O3 -fopenmp -DTHRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_OMP -I…/cccl thrust_sort.cpp
 *   thrust_sort N RUNS sort|kv */
#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/sort.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "timing.h"

static uint32_t next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (uint32_t)(*s >> 32);
}

static double sort(long n, long runs, bool kv) {
    std::vector<uint32_t> host(n), vals(n);
    uint64_t s = 88172645463325252ull;
    for (long i = 0; i < n; i++) host[i] = next(&s), vals[i] = (uint32_t)i;
    thrust::device_vector<uint32_t> keys0(host.begin(), host.end()), vals0(vals.begin(), vals.end());
    thrust::device_vector<uint32_t> ks(n), vs(n);
    std::vector<double> ms(runs);
    for (long r = -1; r < runs; r++) {
        thrust::copy(keys0.begin(), keys0.end(), ks.begin());
        if (kv) thrust::copy(vals0.begin(), vals0.end(), vs.begin());
        double t = now_ms();
        if (kv)
            thrust::sort_by_key(ks.begin(), ks.end(), vs.begin());
        else
            thrust::sort(ks.begin(), ks.end());
        if (r >= 0) ms[r] = now_ms() - t;
    }
    /* the result is a sort: checked once, outside the timings */
    thrust::copy(ks.begin(), ks.end(), host.begin());
    for (long i = 1; i < n; i++)
        if (host[i - 1] > host[i]) {
            fprintf(stderr, "thrust_sort: not sorted at %ld\n", i);
            exit(1);
        }
    return median_ms(ms.data(), runs);
}

int main(int argc, char **argv) {
    if (argc != 4 || (strcmp(argv[3], "sort") && strcmp(argv[3], "kv"))) {
        fprintf(stderr, "usage: thrust_sort N RUNS sort|kv\n");
        return 2;
    }
    long n, runs;
    if (!n_and_runs("thrust_sort", argv, &n, &runs)) return 2;
    printf("%.6f\n", sort(n, runs, !strcmp(argv[3], "kv")));
    return 0;
}
