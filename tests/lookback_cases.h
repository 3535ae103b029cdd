/* tests/lookback_cases.h — the scan examples under lookback: the look-back
 * suite runs each against the interpreter, the CUDA suite compiles each.
 * Together they reach both protocols (a 32-bit value packed with its flag,
 * fenced arrays otherwise), both look-back widths, both LOADs (and both
 * forms of local: held in registers for M <= 32, else in local memory),
 * and the fusions into one pass. */
#ifndef STRATA_TESTS_LOOKBACK_CASES_H
#define STRATA_TESTS_LOOKBACK_CASES_H

#include <stdint.h>

#define FUSED "first(let, fuse-map-scan) ; first(let, fuse-scan-map) ; first(let, fuse-scan-scatter) ; "
#define RADIX_FUSED "first(let, fuse-map-scan) ; first(let, fuse-scan-map) ; each(let, try(fuse-scan-scatter)) ; "
#define LB(params) "first(scan, lookback(" params "))"

typedef struct example_case {
    const char *program, *strategy;
    const char *scalars;  /* more inputs than N */
    uint32_t kernels;     /* how many the program becomes (0: not checked) */
} example_case;

static const example_case example_cases[] = {
    /* a plain scan of f32: the flag and the value packed in one word */
    {"prefix_sum", LB("M=8, WG=64"), "", 2},
    {"prefix_sum", LB("M=3, WG=7"), "", 2},
    {"prefix_sum", LB("M=1, WG=1"), "", 2},
    {"prefix_sum", LB("M=16, WG=32, LW=32"), "", 2},
    {"prefix_sum", LB("M=4096, WG=1, LOAD=direct"), "", 2},
    {"prefix_sum", LB("M=5, WG=16, LW=4, LOAD=direct"), "", 2},
    /* pairs: the fenced state, one array per component */
    {"advanced", LB("M=4, WG=32"), "", 0},
    {"advanced", LB("M=9, WG=16, LW=8, LOAD=direct"), "", 0},
    /* not commutative */
    {"linear_recurrence", LB("M=2, WG=128"), "", 0},
    {"linear_recurrence", LB("M=7, WG=3, LW=2, LOAD=direct"), "", 0},
    /* i64 offsets: fenced too; then fused into one pass over xs (the
     * destination's zeros, the state's reset, the scan) */
    {"filter", LB("M=8, WG=64"), "", 0},
    {"filter", FUSED LB("M=8, WG=64"), "", 3},
    {"filter", FUSED LB("M=12, WG=32, LW=16, LOAD=direct"), "", 3},
    /* held in registers, through a tile in rounds (2 of 128 work-items; 4 of
     * 64 with the fused filter's separate accumulators); and M > 32, the
     * block in local memory, padded */
    {"linear_recurrence", LB("M=32, WG=256, LW=32"), "", 0},
    {"filter", FUSED LB("M=24, WG=256, LW=32"), "", 3},
    {"prefix_sum", LB("M=40, WG=16"), "", 2},
    {"linear_recurrence", LB("M=33, WG=8"), "", 0},
    /* a radix-sort step: the count of clear bits, then one pass */
    {"radix_step", RADIX_FUSED LB("M=8, WG=256"), " B=3", 5},
    {"radix_step", RADIX_FUSED LB("M=6, WG=16, LW=4, LOAD=direct"), " B=0", 5},
};

#endif
