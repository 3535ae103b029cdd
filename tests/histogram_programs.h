/* tests/histogram_programs.h — the histograms the histogram suite runs
 * under every choice of subhistogram, and the CUDA suite compiles: + on
 * i32 and f32 (hardware atomics), max on f32 (compare-and-swap), an
 * arg-min over pairs (a lock), and indices computed by a map (fused). */
#ifndef STRATA_TESTS_HISTOGRAM_PROGRAMS_H
#define STRATA_TESTS_HISTOGRAM_PROGRAMS_H

#define ADD_I32 "def main(is: [N]i64, H: i64): [H]i32 =\n  reduce_by_index(replicate(H, 0), +, 0, is, replicate(N, 1))\n"
#define ADD_F32                                                  \
    "def main(is: [N]i64, vs: [N]f32, H: i64): [H]f32 =\n" \
    "  reduce_by_index(replicate(H, 0.0), +, 0.0, is, vs)\n"
#define MAX_F32                                                  \
    "def main(is: [N]i64, vs: [N]f32, H: i64): [H]f32 =\n" \
    "  reduce_by_index(replicate(H, -1000.0), max, -1000.0, is, vs)\n"
/* the least value in each bucket and the first index that has it */
#define ARGMIN                                                                                        \
    "def main(is: [N]i64, vs: [N]f32, H: i64): [H](f32, i64) =\n"                               \
    "  reduce_by_index(replicate(H, (1000.0, -1i64)),\n"                                              \
    "    (a, b) => if a.0 < b.0 || (a.0 == b.0 && a.1 < b.1) then a else b,\n"                           \
    "    (1000.0, -1i64), is, zip(vs, iota(N)))\n"
/* the bucket computed from the value, inside the histogram's kernels */
#define MAPPED_INDICES                                                                                     \
    "def main(vs: [N]f32, H: i64): [H]i32 =\n"                                                    \
    "  reduce_by_index(replicate(H, 0), +, 0, vs |> map(v => i64(v * f32(H))), replicate(N, 1))\n"


/* Each under [Hellfritsch 2018]'s heuristic and under choices that reach every
 * code path: global and local memory, C from 1 to more than H, each atomic. */
typedef struct hist_case {
    const char *what, *src, *strategy;
} hist_case;

static const hist_case hist_cases[] = {
    /* [Hellfritsch 2018]'s heuristic: local where it fits, the atomic the operator allows */
    {"+ on i32", ADD_I32, "subhistogram"},
    {"+ on i32", ADD_I32, "subhistogram(MEM=global)"},
    {"+ on i32", ADD_I32, "subhistogram(C=1, MEM=global)"},
    {"+ on i32", ADD_I32, "subhistogram(C=300, MEM=global, ATOMIC=cas)"},
    {"+ on i32", ADD_I32, "subhistogram(C=1, MEM=local)"},
    {"+ on i32", ADD_I32, "subhistogram(C=64, MEM=local, ATOMIC=xchg)"},
    {"+ on f32", ADD_F32, "subhistogram"},
    {"+ on f32", ADD_F32, "subhistogram(MEM=global)"},
    {"+ on f32", ADD_F32, "subhistogram(C=8, MEM=local, ATOMIC=xchg)"},
    {"max on f32", MAX_F32, "subhistogram(MEM=global)"},
    {"max on f32", MAX_F32, "subhistogram(C=16, MEM=local)"},
    {"max on f32", MAX_F32, "subhistogram(C=2, MEM=global, ATOMIC=xchg)"},
    {"arg-min of pairs", ARGMIN, "subhistogram"},
    {"arg-min of pairs", ARGMIN, "subhistogram(MEM=global)"},
    {"arg-min of pairs", ARGMIN, "subhistogram(C=1, MEM=local)"},
    {"arg-min of pairs", ARGMIN, "subhistogram(C=1000, MEM=global)"},
    {"a map of indices", MAPPED_INDICES, "subhistogram"},
    {"a map of indices", MAPPED_INDICES, "subhistogram(C=4, MEM=global)"},
};

#endif
