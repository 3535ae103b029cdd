// bench/cub_peers.cu — the peers bench/gpu-peers.sh puts beside strata on an
// NVIDIA GPU: a device-to-device copy of the same bytes (the limit of a
// scan), CUB's inclusive scan (what torch.cumsum runs) and CUB's histogram,
// and CUB's filter and radix sorts, each timed with CUDA events on the GPU,
// medians of RUNS after a warm-up, each result checked on the host.
//
//   cub_peers scan N RUNS          i32 prefix sum of N elements:
//                                  prints "copy_ms cub_scan_ms"
//   cub_peers hist IN.npy H RUNS   histogram of i32 indices (bench/hist_seq.c
//                                  makes them) into H buckets: prints
//                                  "cub_histogram_ms"
//   cub_peers filter IN.npy RUNS   the positive i32 of IN, in order
//                                  (DeviceSelect::If, as examples/filter_keep.strata),
//                                  IN partitioned by x % 3 == 0 (DevicePartition::If,
//                                  as partition.strata) and summed (DeviceReduce::Sum):
//                                  prints "copy_ms cub_select_ms cub_partition_ms cub_sum_ms"
//   cub_peers sort KEYS.npy RUNS   u32 keys sorted (DeviceRadixSort::SortKeys,
//                                  as examples/radix_sort.strata): "cub_sort_ms"
//   cub_peers sortkv KEYS.npy VALUES.npy RUNS
//                                  keys and i32 values, stably by key (SortPairs,
//                                  as radix_sort_kv.strata): "cub_sort_pairs_ms"
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

// The 32-bit numbers of a .npy that bench/hist_seq.c or bench/filter-sort.sh
// wrote (a little-endian '<i4' or '<u4' vector, as NumPy writes version 1.0).
static std::vector<int> read_npy(const char *path) {
    FILE *f = std::fopen(path, "rb");
    if (!f) std::fprintf(stderr, "cub_peers: cannot open %s\n", path), std::exit(1);
    unsigned char head[10];
    if (std::fread(head, 1, 10, f) != 10 || std::memcmp(head, "\x93NUMPY", 6))
        std::fprintf(stderr, "cub_peers: %s is not a .npy file\n", path), std::exit(1);
    size_t header = head[8] | head[9] << 8;
    std::vector<char> text(header + 1, 0);
    if (std::fread(text.data(), 1, header, f) != header || (!std::strstr(text.data(), "'<i4'") && !std::strstr(text.data(), "'<u4'")))
        std::fprintf(stderr, "cub_peers: %s is not a vector of i32 or u32\n", path), std::exit(1);
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

template <class T> static T *on_device(const std::vector<T> &xs) {
    T *d;
    CHECK(cudaMalloc(&d, (xs.size() ? xs.size() : 1) * sizeof(T)));
    CHECK(cudaMemcpy(d, xs.data(), xs.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

template <class T> static std::vector<T> on_host(const T *d, size_t n) {
    std::vector<T> xs(n);
    CHECK(cudaMemcpy(xs.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
    return xs;
}

struct positive {
    __host__ __device__ bool operator()(int x) const { return x > 0; }
};

struct multiple_of_3 { // examples/partition.strata's predicate
    __host__ __device__ bool operator()(int x) const { return x % 3 == 0; }
};

static int filter(const char *path, int runs) {
    std::vector<int> xs = read_npy(path);
    long n = (long)xs.size();
    int *in = on_device(xs), *out, *count;
    CHECK(cudaMalloc(&out, (n ? n : 1) * sizeof(int)));
    CHECK(cudaMalloc(&count, sizeof(int)));
    size_t temp_bytes = 0;
    CHECK(cub::DeviceSelect::If(nullptr, temp_bytes, in, out, count, n, positive()));
    void *temp;
    CHECK(cudaMalloc(&temp, temp_bytes ? temp_bytes : 1));
    double copy = median_ms(runs, [&] { CHECK(cudaMemcpyAsync(out, in, n * sizeof(int), cudaMemcpyDeviceToDevice)); });
    double ms = median_ms(runs, [&] { CHECK(cub::DeviceSelect::If(temp, temp_bytes, in, out, count, n, positive())); });
    std::vector<int> want;
    for (int x : xs)
        if (x > 0) want.push_back(x);
    int k = on_host(count, 1)[0];
    if (k != (int)want.size() || on_host(out, k) != want)
        return std::fprintf(stderr, "cub_peers: CUB's filter is wrong\n"), 1;
    // the partition: the kept ones in order, then the others (CUB: reversed)
    size_t part_bytes = 0, sum_bytes = 0;
    CHECK(cub::DevicePartition::If(nullptr, part_bytes, in, out, count, n, multiple_of_3()));
    int *total;
    CHECK(cudaMalloc(&total, sizeof(int)));
    CHECK(cub::DeviceReduce::Sum(nullptr, sum_bytes, in, total, n));
    void *more;
    CHECK(cudaMalloc(&more, std::max(std::max(part_bytes, sum_bytes), (size_t)1)));
    double part = median_ms(runs, [&] { CHECK(cub::DevicePartition::If(more, part_bytes, in, out, count, n, multiple_of_3())); });
    long kept = 0;
    for (int x : xs) kept += x % 3 == 0;
    if (on_host(count, 1)[0] != kept) return std::fprintf(stderr, "cub_peers: CUB's partition is wrong\n"), 1;
    double sum = median_ms(runs, [&] { CHECK(cub::DeviceReduce::Sum(more, sum_bytes, in, total, n)); });
    unsigned wrapped = 0; // i32 + wraps, as strata's does
    for (int x : xs) wrapped += (unsigned)x;
    if (on_host(total, 1)[0] != (int)wrapped) return std::fprintf(stderr, "cub_peers: CUB's sum is wrong\n"), 1;
    std::printf("%.4f %.4f %.4f %.4f\n", copy, ms, part, sum);
    return 0;
}

// sort KEYS (and VALUES, when given): CUB's radix sort from one buffer into
// another, as strata's sort reads its input and writes its result
static int sort(const char *keys_path, const char *values_path, int runs) {
    std::vector<int> raw = read_npy(keys_path);
    std::vector<unsigned> keys(raw.begin(), raw.end());
    long n = (long)keys.size();
    std::vector<int> values = values_path ? read_npy(values_path) : std::vector<int>();
    if (values_path && (long)values.size() != n) return std::fprintf(stderr, "cub_peers: keys and values differ in length\n"), 1;
    unsigned *kin = on_device(keys), *kout;
    int *vin = values_path ? on_device(values) : nullptr, *vout = nullptr;
    CHECK(cudaMalloc(&kout, (n ? n : 1) * sizeof(unsigned)));
    if (values_path) CHECK(cudaMalloc(&vout, (n ? n : 1) * sizeof(int)));
    size_t temp_bytes = 0;
    if (values_path) CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, kin, kout, vin, vout, n));
    else CHECK(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, kin, kout, n));
    void *temp;
    CHECK(cudaMalloc(&temp, temp_bytes ? temp_bytes : 1));
    double ms = median_ms(runs, [&] {
        if (values_path) CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, kin, kout, vin, vout, n));
        else CHECK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, kin, kout, n));
    });
    std::vector<long> order(n);
    for (long i = 0; i < n; i++) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](long a, long b) { return keys[a] < keys[b]; });
    std::vector<unsigned> got = on_host(kout, n);
    std::vector<int> got_values = values_path ? on_host(vout, n) : std::vector<int>();
    for (long i = 0; i < n; i++)
        if (got[i] != keys[order[i]] || (values_path && got_values[i] != values[order[i]]))
            return std::fprintf(stderr, "cub_peers: CUB's sort is wrong at %ld\n", i), 1;
    std::printf("%.4f\n", ms);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 4 && !std::strcmp(argv[1], "scan")) return scan(std::atol(argv[2]), std::atoi(argv[3]));
    if (argc == 5 && !std::strcmp(argv[1], "hist")) return hist(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
    if (argc == 4 && !std::strcmp(argv[1], "filter")) return filter(argv[2], std::atoi(argv[3]));
    if (argc == 4 && !std::strcmp(argv[1], "sort")) return sort(argv[2], nullptr, std::atoi(argv[3]));
    if (argc == 5 && !std::strcmp(argv[1], "sortkv")) return sort(argv[2], argv[3], std::atoi(argv[4]));
    std::fprintf(stderr, "usage: cub_peers scan N RUNS | hist IN.npy H RUNS | filter IN.npy RUNS | sort KEYS.npy RUNS"
                         " | sortkv KEYS.npy VALUES.npy RUNS\n");
    return 2;
}
