/* strategies/defaults.c — the strategy `strata run` applies when it is given
 * none and no export exists for the device (strategies.h says why each
 * part is there). */
#include "strategies.h"

#include <string.h>

/* Each row's scan to segmented-scan first, while the map still only scans
 * (fused into a map of maps, its rows would be one work-item's each); then
 * producers into their consumers, wherever a rule's condition allows
 * (used once, not inside a lambda): a map into the scan that reads it, the
 * scan's map into its post-function, a scatter into the scan of its indices
 * — so a filter is one pass, and so is a compaction through an exscan of
 * flags (its scatter's indices) — and maps into maps and reductions. An
 * exscan is a scan here (st_exscans_as_scans): every step takes it. */
#define FUSION                                                                                               \
    "try(each(any, try(fuse-map-map))) ; try(each(any, try(fuse-map-scan))) ; "                              \
    "try(each(any, try(fuse-scan-map))) ; try(each(any, try(fuse-scan-scatter))) ; "                         \
    "try(each(any, try(fuse-map-reduce))) ; "
/* Filters and partitions as flags, a scan and a scatter before anything
 * else, so that the fusions below make each one look-back pass and a
 * reduction; a partition's parts rejoined by concat are its buffer. */
#define FILTERS                                                                                              \
    "try(each(filter, try(filter-scatter))) ; try(each(partition, try(partition-scatter))) ; "               \
    "try(each(any, try(concat-split))) ; "
#define ROWS "try(each(map, try(segmented-scan(WG=256)))) ; "
#define PAPER_SCAN "try(each(scan, try(parallel-scan(BS=256, BF=2, SE=4)))) ; "
#define HISTOGRAMS "try(each(reduce_by_index, try(subhistogram))) ; try(each(reduce_by_index_2d, try(subhistogram)))"

/* A count beside a look-back scan of the same fold (a filter's) read from
 * the scan's kernel, not reduced in a pass of its own. */
#define TOTALS "try(each(any, try(reduce-as-scan-total))) ; "

/* On a GPU, every reduction left at the top level (after TOTALS took a
 * filter's count from its scan) as chunks folded by work-items of their
 * own, not one work-item's fold of the whole input: chunks of 4096, so that
 * an input of millions makes thousands of work-items to fill the
 * multiprocessors while the partials one work-item folds at the end stay a
 * few thousand. Not on a CPU: there one work-item's loop already streams
 * from memory as fast as the cores can, and a work-group's work-items run
 * as the lanes of one loop, each lane a chunk of its own, which turns the
 * chunks' contiguous reads into strided ones (the README's measurements). */
#define REDUCES "try(each(top reduce, try(parallel-reduce(BS=4096)))) ; "

/* Each `try` per scan: a scan lookback refuses stays for parallel-scan
 * (which nests itself on its block sums). */
#define DEFAULT_FOR(lookback, reduces)                                                                       \
    FILTERS ROWS FUSION "try(each(top scan, try(" lookback "))) ; " TOTALS reduces PAPER_SCAN HISTOGRAMS

const char *st_fusion_strategy(void) { return FUSION; }

const char *st_default_strategy(const char *device_type) {
    if (device_type && !strcmp(device_type, "CPU")) return DEFAULT_FOR("lookback(M=16384, WG=1, LOAD=direct)", "");
    return DEFAULT_FOR("lookback(M=32, WG=128, LW=32)", REDUCES);
}
