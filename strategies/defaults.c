/* strategies/defaults.c — the strategy `strata run` applies when it is given
 * none and no export exists for the device (strategies.h says why each
 * part is there). */
#include "strategies.h"

#include <string.h>

/* The look-back on a GPU: M=32 elements a work-item in registers, 128 work-items, a
 * warp-wide look-back window (the best of an exploration on an H200:
 * docs/performance.md). A scan whose pairs a scatter writes (a filter's, a
 * partition's, a radix sort's turn) carries offsets and places beside its
 * elements: at M=32 it spills, and M=12 in groups of 256 is the most that
 * fits sm_90's registers (the ptxas suite), and was faster there too. */
#define GPU_LOOKBACK "lookback(M=32, WG=128, LW=32)"
#define GPU_SCATTER_LOOKBACK "lookback(M=12, WG=256, LW=32)"

/* Each row's scan to segmented-scan first, while the map still only scans
 * (fused into a map of maps, its rows would be one work-item's each); then
 * producers into their consumers, wherever a rule's condition allows
 * (used once, not inside a lambda): a map into the scan that reads it, the
 * scan's map into its post-function, a scatter into the scan of its indices
 * — so a filter is one pass, and so is a compaction through an exscan of
 * flags (its scatter's indices) — and maps into maps and reductions. An
 * exscan is a scan here (exscans-as-scans, NORMAL_FORM): every step takes it. */
#define FUSION_RULES(X) X("fuse-map-map") X("fuse-map-scan") X("fuse-scan-map") X("fuse-scan-scatter") X("fuse-map-reduce")
#define FUSION_STEP(rule) "try(each(any, try(" rule "))) ; "
#define FUSION FUSION_RULES(FUSION_STEP)
/* Filters and partitions as flags, a scan and a scatter before anything
 * else, so that the fusions below make each one look-back pass and a
 * reduction; a partition's parts rejoined by concat are its buffer. */
#define FILTERS                                                                                              \
    "try(each(filter, try(filter-scatter))) ; try(each(partition, try(partition-scatter))) ; "               \
    "try(each(any, try(concat-split))) ; "
/* An exscan of integer sums as the inclusive scan less each element, so
 * that the fusions below see its input read element by element (a
 * compaction's flags, computed again in every use rather than stored). */
#define EXSCANS "try(each(top scan, try(exscan-as-inclusive))) ; "
#define ROWS "try(each(map, try(segmented-scan(WG=256)))) ; "
#define PAPER_SCAN "try(each(scan, try(parallel-scan(BS=256, BF=2, SE=4)))) ; "
#define HISTOGRAMS "try(each(reduce_by_index, try(subhistogram))) ; try(each(reduce_by_index_2d, try(subhistogram)))"

/* A count beside a look-back scan of the same fold (a filter's) read from
 * the scan's kernel, not reduced in a pass of its own. */
#define TOTALS "try(each(any, try(reduce-as-scan-total))) ; "

/* On a GPU, every reduction left at the top level (after TOTALS took a
 * filter's count from its scan) as the total of a look-back scan that
 * stores nothing: one pass, each work-item folding M elements loaded
 * coalesced, the groups' aggregates chained by the look-back, rather than
 * one work-item folding all of it. parallel-reduce's chunks, a work-item
 * each, read strided on a GPU and leave their thousands of partials to one
 * work-item, which made most of a radix sort's turn on an H200
 * (docs/performance.md). */
#define REDUCES "try(each(top reduce, try(" GPU_LOOKBACK "))) ; " ROW_REDUCES

/* On a CPU, every reduction in chunks of 16384 (the look-back's M), a
 * work-item each, a group of one: each core folds whole chunks in a loop it
 * vectorises, where one work-item would leave the other cores idle. The
 * look-back's total is slower there, but it takes what parallel-reduce
 * refuses, a length known only at run time (the sum of a filter's
 * survivors), which one work-item would otherwise fold alone
 * (docs/performance.md has the figures of both). Only there: a look-back over
 * parallel-reduce's partials would give one work-item all of them, and
 * with them every chunk's fold. */
#define CPU_REDUCES                                                                                          \
    "try(each(top reduce, try(parallel-reduce(BS=16384) <+ lookback(M=16384, WG=1, LOAD=direct)))) ; " LANES

/* Then every float reduction left (a row's, inside a map; the chunks'
 * partials) in interleaved lanes: a float's fold the compiler may not
 * reorder, and in order each operation waits for the one before
 * (strategies/scan.c's reduce-lanes). */
#define LANES "try(each(reduce, try(reduce-lanes))) ; "

/* A reduction of short rows (a count per bit of every key, which the
 * look-back takes no rows for) in chunks, one work-item each keeping its
 * row in registers, rather than one work-item folding all of it: on a GPU
 * that one work-item would read the whole input alone. */
#define ROW_REDUCES "try(each(top reduce, try(parallel-reduce(BS=4096)))) ; "

/* First of all, the form every parallel rule takes: seeds its operator's
 * neutral element, exscans scans (strategies/normalise.c). */
#define NORMAL_FORM "seeds-as-neutral ; exscans-as-scans ; "

/* Then what a function computes the same for every element (a
 * normalisation's total, a row's maximum) out of it, bound once before it:
 * read as written it runs once per element, quadratic, and inside a lambda
 * no parallel rule takes it (strategies/hoist.c). */
#define HOIST "try(hoist-invariant) ; "

/* Each `try` per scan: a scan lookback refuses stays for parallel-scan
 * (which nests itself on its block sums). A scatter's scan first, where the
 * device's shape for it differs (one(…) reaches the scatter's scan: the
 * destination is no scan): a user's scatter's, and a filter's or a
 * partition's (scatterDistinct). */
#define DEFAULT_FOR(scatter_lookback, lookback, reduces)                                                     \
    NORMAL_FORM HOIST FILTERS EXSCANS ROWS FUSION scatter_lookback "try(each(top scan, try(" lookback "))) ; " TOTALS reduces PAPER_SCAN  \
    HISTOGRAMS

/* The fusions of FUSION, built as nodes: lookback applies them to what
 * filter-scatter and partition-scatter made. */
const st_strategy *st_fusion_strategy(st_ctx *cx, const st_registry *reg, st_err *why) {
#define FUSION_NAME(rule) rule,
    static const char *const rules[] = {FUSION_RULES(FUSION_NAME)};
#undef FUSION_NAME
    const st_strategy *s = st_s_unary(cx, ST_S_ID, NULL);
    for (size_t i = 0; s && i < sizeof rules / sizeof *rules; i++) {
        const st_rule *r = st_registry_find(reg, rules[i]);
        if (!r) return st_fail_internal(why, "the fusion rule %s is not registered", rules[i]), NULL;
        s = st_s_seq(cx, s, st_s_try(cx, st_s_at(cx, ST_S_EACH, (st_pattern){.kind = ST_PAT_ANY},
                                                 st_s_try(cx, st_s_rule(cx, r, NULL)))));
    }
    if (!s) st_fail_internal(why, "out of memory");
    return s;
}

const char *st_default_strategy(const char *device_type) {
    if (device_type && !strcmp(device_type, "CPU"))
        return DEFAULT_FOR("", "lookback(M=16384, WG=1, LOAD=direct)", CPU_REDUCES);
    return DEFAULT_FOR("try(each(scatter, try(one(" GPU_SCATTER_LOOKBACK ")))) ; "
                       "try(each(scatterDistinct, try(one(" GPU_SCATTER_LOOKBACK ")))) ; ",
                       GPU_LOOKBACK, REDUCES);
}
