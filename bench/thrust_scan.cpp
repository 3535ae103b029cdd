/* bench/thrust_scan.cpp — Thrust's inclusive_scan on the host's cores, the
 * peer bench/cpu-peers.sh puts beside strata's scan on a CPU: Thrust built
 * with its OpenMP device system (the CUDA toolkit's CCCL headers), so a
 * device_vector lives in host memory and the scan runs on OMP_NUM_THREADS
 * threads. An inclusive prefix sum of n f32 or i32, timed `runs` times
 * after one untimed run, the median printed in ms.
 *
 *   g++ -O3 -fopenmp -DTHRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_OMP -I…/cccl thrust_scan.cpp
 *   thrust_scan N RUNS f32|i32 */
#include <thrust/device_vector.h>
#include <thrust/scan.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "timing.h"

template <class T> static double scan(long n, long runs) {
    std::vector<T> host(n);
    srand(1);
    for (long i = 0; i < n; i++) host[i] = (T)(rand() % 1000) / (T)7;
    thrust::device_vector<T> xs(host.begin(), host.end()), out(n);
    std::vector<double> ms(runs);
    double check = 0;
    for (long r = -1; r < runs; r++) {
        double t = now_ms();
        thrust::inclusive_scan(xs.begin(), xs.end(), out.begin());
        if (r >= 0) ms[r] = now_ms() - t;
        check += (double)out[n - 1];
    }
    fprintf(stderr, "thrust_scan: checksum %g\n", check);
    return median_ms(ms.data(), runs);
}

int main(int argc, char **argv) {
    if (argc != 4 || (strcmp(argv[3], "f32") && strcmp(argv[3], "i32"))) {
        fprintf(stderr, "usage: thrust_scan N RUNS f32|i32\n");
        return 2;
    }
    long n, runs;
    if (!n_and_runs("thrust_scan", argv, &n, &runs)) return 2;
    printf("%.6f\n", strcmp(argv[3], "i32") ? scan<float>(n, runs) : scan<int32_t>(n, runs));
    return 0;
}
