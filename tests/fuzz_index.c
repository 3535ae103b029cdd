/* tests/fuzz_index.c — a libFuzzer target for results/index.json as strata
 * reads it: the lookup of `strata run` without -s (st_results_lookup) and
 * the read-modify-write of `strata export` (index_add). Any bytes give an
 * answer or an error, never a crash, a leak or undefined behaviour; an
 * index that takes an export then finds it. */
#include "explore/index.h"
#include "fuzz_scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static st_device_info device(const char *name, const char *vendor, const char *type, const char *backend) {
    st_device_info d = {.backend = st_backend_named(backend), .type = type};
    snprintf(d.name, sizeof d.name, "%s", name);
    snprintf(d.vendor, sizeof d.vendor, "%s", vendor);
    return d;
}

/* What the index says for program on dev; false when it says nothing. */
static bool lookup(const st_device_info *dev, const char *program, st_buf *strategy) {
    st_buf from = {0};
    bool found = false;
    st_err err = {0};
    st_results_lookup(fuzz_scratch(), dev, program, &found, strategy, &from, &err);
    st_buf_free(&from);
    return found;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[320];
    fuzz_scratch_write("index.json", data, size, path, sizeof path);
    const st_device_info devices[] = {
        device("NVIDIA H200", "NVIDIA Corporation", "GPU", "opencl"),
        device("NVIDIA H200", "NVIDIA Corporation", "GPU", "cuda"),
        device("pthread-cpu", "GenuineIntel", "CPU", "opencl"),
    };
    const char *programs[] = {"prefix_sum", "histogram_uniform_16", ""};
    for (size_t d = 0; d < sizeof devices / sizeof *devices; d++)
        for (size_t p = 0; p < sizeof programs / sizeof *programs; p++) {
            st_buf strategy = {0};
            lookup(&devices[d], programs[p], &strategy);
            st_buf_free(&strategy);
        }
    /* an export into it: replaced or added, then found as it was given */
    st_err err = {0};
    if (!index_add(fuzz_scratch(), &devices[0], "prefix_sum", "lookback(M=12, WG=256, LW=32)",
                   "nvidia-h200/prefix_sum", 0.5, 100, &err))
        return 0;
    st_buf strategy = {0};
    if (!lookup(&devices[0], "prefix_sum", &strategy) || strcmp(strategy.data, "lookback(M=12, WG=256, LW=32)")) {
        fprintf(stderr, "an export added to the index is not found: %s\n", strategy.data ? strategy.data : "(none)");
        abort();
    }
    st_buf_free(&strategy);
    return 0;
}
