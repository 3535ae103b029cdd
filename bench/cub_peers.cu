// bench/cub_peers.cu — the peers bench/gpu-peers.sh puts beside strata on an
// NVIDIA GPU: a device-to-device copy of the same bytes (the limit of a
// scan), CUB's inclusive scan (what torch.cumsum runs) and CUB's histogram,
// each timed with CUDA events on the GPU, medians of RUNS after a warm-up.
//
//   cub_peers scan N RUNS          i32 prefix sum of N elements:
//                                  prints "copy_ms cub_scan_ms"
//   cub_peers hist IN.npy H RUNS   histogram of i32 indices (bench/hist_seq.c
//                                  makes them) into H buckets: prints
//                                  "cub_histogram_ms"
//
// Built by bench/gpu-peers.sh with nvcc (-arch=native); needs the CUDA
// toolkit, which brings CUB.
#include <cub/cub.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(call)                                                                              \
    do {                                                                                         \
        cudaError_t e_ = (call);                                                                 \
        if (e_ != cudaSuccess) {                                                                 \
            std::fprintf(stderr, "cub_peers: %s: %s\n", #call, cudaGetErrorString(e_));          \
            std::exit(1);                                                                        \
        }                                                                                        \
    } while (0)

// The median of RUNS timings of f (after one untimed run), in ms.
template <class F> static double median_ms(int runs, F f) {
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    f();
    std::vector<double> ms;
    for (int r = 0; r < runs; r++) {
        CHECK(cudaEventRecord(a));
        f();
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        float t;
        CHECK(cudaEventElapsedTime(&t, a, b));
        ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    size_t n = ms.size();
    return n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
}

static int scan(long n, int runs) {
    std::vector<int> host(n);
    for (long i = 0; i < n; i++) host[i] = (int)(i % 7) - 3;
    int *in, *out;
    CHECK(cudaMalloc(&in, n * sizeof(int)));
    CHECK(cudaMalloc(&out, n * sizeof(int)));
    CHECK(cudaMemcpy(in, host.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    size_t temp_bytes = 0;
    CHECK(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, in, out, n));
    void *temp;
    CHECK(cudaMalloc(&temp, temp_bytes));
    double copy = median_ms(runs, [&] { CHECK(cudaMemcpyAsync(out, in, n * sizeof(int), cudaMemcpyDeviceToDevice)); });
    double cub_scan = median_ms(runs, [&] { CHECK(cub::DeviceScan::InclusiveSum(temp, temp_bytes, in, out, n)); });
    // the scan is checked, as strata's are: a peer that is fast and wrong is no peer
    std::vector<int> got(n);
    CHECK(cudaMemcpy(got.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost));
    int acc = 0;
    for (long i = 0; i < n; i++)
        if ((acc += host[i]) != got[i]) return std::fprintf(stderr, "cub_peers: CUB's scan is wrong at %ld\n", i), 1;
    std::printf("%.4f %.4f\n", copy, cub_scan);
    return 0;
}

// The i32 indices of a .npy that bench/hist_seq.c wrote (a little-endian
// '<i4' vector, header padded to 16 bytes, as NumPy writes version 1.0).
static std::vector<int> read_npy(const char *path) {
    FILE *f = std::fopen(path, "rb");
    if (!f) std::fprintf(stderr, "cub_peers: cannot open %s\n", path), std::exit(1);
    unsigned char head[10];
    if (std::fread(head, 1, 10, f) != 10 || std::memcmp(head, "\x93NUMPY", 6))
        std::fprintf(stderr, "cub_peers: %s is not a .npy file\n", path), std::exit(1);
    size_t header = head[8] | head[9] << 8;
    std::vector<char> text(header + 1, 0);
    if (std::fread(text.data(), 1, header, f) != header || !std::strstr(text.data(), "'<i4'"))
        std::fprintf(stderr, "cub_peers: %s is not a vector of i32\n", path), std::exit(1);
    const char *shape = std::strstr(text.data(), "'shape': (");
    long n = shape ? std::atol(shape + 10) : -1;
    std::vector<int> is(n > 0 ? n : 0);
    if (n < 0 || std::fread(is.data(), sizeof(int), is.size(), f) != is.size())
        std::fprintf(stderr, "cub_peers: %s is short\n", path), std::exit(1);
    std::fclose(f);
    return is;
}

static int hist(const char *path, int h, int runs) {
    std::vector<int> is = read_npy(path);
    long n = (long)is.size();
    int *in, *counts;
    CHECK(cudaMalloc(&in, (n ? n : 1) * sizeof(int)));
    CHECK(cudaMalloc(&counts, h * sizeof(int)));
    CHECK(cudaMemcpy(in, is.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    size_t temp_bytes = 0;
    CHECK(cub::DeviceHistogram::HistogramEven(nullptr, temp_bytes, in, counts, h + 1, 0, h, n));
    void *temp;
    CHECK(cudaMalloc(&temp, temp_bytes ? temp_bytes : 1));
    double ms = median_ms(runs, [&] {
        CHECK(cub::DeviceHistogram::HistogramEven(temp, temp_bytes, in, counts, h + 1, 0, h, n));
    });
    std::vector<int> got(h), want(h, 0);
    CHECK(cudaMemcpy(got.data(), counts, h * sizeof(int), cudaMemcpyDeviceToHost));
    for (long i = 0; i < n; i++)
        if (is[i] >= 0 && is[i] < h) want[is[i]]++;
    if (got != want) return std::fprintf(stderr, "cub_peers: CUB's histogram is wrong\n"), 1;
    std::printf("%.4f\n", ms);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 4 && !std::strcmp(argv[1], "scan")) return scan(std::atol(argv[2]), std::atoi(argv[3]));
    if (argc == 5 && !std::strcmp(argv[1], "hist")) return hist(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
    std::fprintf(stderr, "usage: cub_peers scan N RUNS | cub_peers hist IN.npy H RUNS\n");
    return 2;
}
