/* bench/thrust_primitives.cpp — Thrust's copy, transform, reduce and
 * copy_if on the host's cores, the library peer bench/primitives.sh puts
 * beside strata's programs on a CPU: built with Thrust's OpenMP device
 * system (the CUDA toolkit's CCCL headers), so a device_vector lives in host
 * memory and each algorithm runs on OMP_NUM_THREADS threads. The inputs are
 * bench/omp_primitives.c's. Thrust has no histogram: `hist` is not one of
 * its rows.
 *
 *   g++ -O3 -fopenmp -DTHRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_OMP -I…/cccl thrust_primitives.cpp
 *   thrust_primitives copy|saxpy|sum|filter N RUNS   the median of RUNS runs in ms */
#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/reduce.h>
#include <thrust/transform.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "timing.h"

struct saxpy_op {
    __host__ __device__ float operator()(float x, float y) const { return 2.5f * x + y; }
};

struct positive {
    __host__ __device__ bool operator()(int32_t x) const { return x > 0; }
};

int main(int argc, char **argv) {
    const char *what = argc == 4 ? argv[1] : "";
    if (strcmp(what, "copy") && strcmp(what, "saxpy") && strcmp(what, "sum") && strcmp(what, "filter")) {
        fprintf(stderr, "usage: thrust_primitives copy|saxpy|sum|filter N RUNS\n");
        return 2;
    }
    long n, runs;
    if (!n_and_runs("thrust_primitives", argv + 1, &n, &runs)) return 2;
    std::vector<float> hx(n), hy(n);
    std::vector<int32_t> hi(n);
    for (long i = 0; i < n; i++) { /* omp_primitives.c's inputs */
        uint32_t h = (uint32_t)i * 2654435761u ^ 0x9e3779b9u;
        h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
        hx[i] = (float)(h >> 8) / 16777216.0f, hy[i] = (float)(h & 0xffff) / 65536.0f, hi[i] = (int32_t)h;
    }
    thrust::device_vector<float> xs(hx.begin(), hx.end()), ys(hy.begin(), hy.end()), out(n);
    thrust::device_vector<int32_t> is(hi.begin(), hi.end()), kept(n);
    std::vector<double> ms(runs);
    double check = 0;
    for (long r = -1; r < runs; r++) {
        double t = now_ms();
        if (!strcmp(what, "copy")) {
            thrust::copy(xs.begin(), xs.end(), out.begin());
        } else if (!strcmp(what, "saxpy")) {
            thrust::transform(xs.begin(), xs.end(), ys.begin(), out.begin(), saxpy_op());
        } else if (!strcmp(what, "sum")) {
            check += thrust::reduce(xs.begin(), xs.end(), 0.0f);
        } else {
            check += (double)(thrust::copy_if(is.begin(), is.end(), kept.begin(), positive()) - kept.begin());
        }
        if (r >= 0) ms[r] = now_ms() - t;
    }
    if (strcmp(what, "sum") && strcmp(what, "filter")) check += (double)out[n / 2];
    fprintf(stderr, "thrust_primitives %s: checksum %g\n", what, check);
    printf("%.6f\n", median_ms(ms.data(), runs));
    return 0;
}
