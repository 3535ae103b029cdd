/* tests/fuzz_npy.c — a libFuzzer target for the .npy reader: any bytes give
 * an array or an error, never a crash or a read out of bounds. */
#include "ir/ir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    st_arena *a = st_arena_new();
    st_err err = {0};
    st_value v;
    st_npy_read_mem(a, "fuzz.npy", data, size, &v, &err);
    st_arena_free(a);
    return 0;
}
