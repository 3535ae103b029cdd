/* strategies/strategies.h — the built-in rules, one file per family. */
#ifndef STRATA_STRATEGIES_H
#define STRATA_STRATEGIES_H

#include "rewrite/rewrite.h"

/* Every built-in rule into r. */
bool st_register_builtin_rules(st_registry *r, st_err *err);

bool st_register_scan_rules(st_registry *r, st_err *err);   /* strategies/scan.c */
bool st_register_fusion_rules(st_registry *r, st_err *err); /* strategies/fusion.c */
bool st_register_lowering_rules(st_registry *r, st_err *err); /* strategies/lowering.c */
bool st_register_lookback_rules(st_registry *r, st_err *err); /* strategies/lookback.c */
bool st_register_histogram_rules(st_registry *r, st_err *err); /* strategies/histogram.c */
bool st_register_segmented_rules(st_registry *r, st_err *err); /* strategies/segmented.c */

/* The strategy `lower-opencl` of reg (NULL when reg lacks it): what `run`
 * applies after the user's strategy, mapping the program onto OpenCL. */
const st_strategy *st_default_lowering(st_ctx *cx, const st_registry *reg);

/* What `strata run` applies when not given a strategy (and, later, when no
 * exported best variant exists for the device): a map that scans each row
 * (of a length not known to be short) with one row per work-group, so that
 * no scan runs as blocks inside a map; every other scan as the paper's
 * parallel scan, which nests itself on the scan of the block sums (two
 * levels for BS = 256), so only a scan of N/65536 elements stays sequential
 * (measured on an H100 at 2^24 f32 it is 4.5x faster than one level); every
 * histogram in subhistograms, as the thesis' heuristic chooses them.
 * Fine-tuning is `strata explore`'s. */
#define ST_DEFAULT_STRATEGY                                          \
    "try(each(map, try(segmented-scan(WG=256)))) ; "                 \
    "try(each(scan, try(parallel-scan(BS=256, BF=2, SE=4)))) ; "     \
    "try(each(reduce_by_index, try(subhistogram)))"

#endif
