/* tests/fuzz_serve.c — a libFuzzer target for the requests of `strata
 * explore --serve` (st_serve_request_parse): any line gives a request for a
 * point of the space or an error, never a crash or undefined behaviour; a
 * request names a point the space has. */
#include "explore/explore.h"

#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* a small space, and the largest a space can count */
    const uint64_t spaces[] = {25, UINT64_MAX};
    for (size_t i = 0; i < sizeof spaces / sizeof *spaces; i++) {
        st_arena *a = st_arena_new();
        st_serve_request req;
        st_err err = {0};
        if (st_serve_request_parse(a, (const char *)data, size, spaces[i], &req, &err)) {
            if (req.point >= spaces[i]) abort();
        } else if (!err.message[0]) {
            abort(); /* a refusal says why */
        }
        st_arena_free(a);
    }
    return 0;
}
