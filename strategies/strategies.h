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
bool st_register_filter_rules(st_registry *r, st_err *err); /* strategies/filter.c */
bool st_register_hoist_rules(st_registry *r, st_err *err); /* strategies/hoist.c */
bool st_register_normalise_rules(st_registry *r, st_err *err); /* strategies/normalise.c */
bool st_register_sort_rules(st_registry *r, st_err *err); /* strategies/sort.c */

/* What rule fn makes of e, a scan or reduce each block of which it starts
 * from the seed, with the seed taken out first where seeds-as-neutral would
 * take it out (fn then takes the scan or reduce left, and the seed is
 * applied to what it made): a rule that needs a neutral seed takes any. */
const st_node *st_with_seed_out(st_rw *rw, const st_node *e, const int64_t *args, st_err *why, st_rule_apply fn);
/* Whether rule may take e, a scan or reduce (what) it starts every block
 * of from the seed: false, with why, when seeds-as-neutral would take the
 * seed out (strategies/normalise.c). For the rules st_with_seed_out does
 * not fit (their node holds the scan). */
bool st_takes_seed(const char *rule, const char *what, const st_node *e, st_err *why);
/* e as seeds-as-neutral, then exscans-as-scans, make it: what lower-opencl
 * applies first (strategies/normalise.c). */
const st_node *st_normal_form(st_rw *rw, const st_node *e, st_err *why);

/* reduce_by_index_2d(dest, op, z, is, vs) or scatter_2d(dest, is, vs), dest
 * [n][m]t, as the 1-D form over join(dest) at r*m + c for each pair (r, c)
 * in bounds, -1 (ignored) for the others, split back into rows; the rule
 * flatten-2d, which lower-opencl applies to every 2-D form (so codegen and
 * every 1-D histogram rule see the 1-D ones only). strategies/histogram.c */
struct st_build;
const st_node *st_flatten_2d(struct st_build *b, const st_node *e);

/* e with every filter and partition as flags, a scan and a scatter
 * (filter-scatter, partition-scatter), inner ones first, and every concat of
 * a partition's two parts as its buffer (concat-split), where the rules'
 * conditions hold; lower-opencl applies it first. strategies/filter.c */
const st_node *st_filters_as_scatters(struct st_build *b, const st_node *e);

/* e with every sort and sort_by_key at the top level a radix sort
 * (radix-sort, 8-bit digits), and every partition_by there in tiles
 * (partition-tiles, the device's tile); lower-opencl applies it first.
 * strategies/sort.c */
const st_node *st_sorts_as_partitions(struct st_build *b, const st_node *e);

/* The strategy `lower-opencl` of reg (NULL when reg lacks it): what `run`
 * applies after the user's strategy, mapping the program onto OpenCL. */
const st_strategy *st_default_lowering(st_ctx *cx, const st_registry *reg);

/* What `strata run` applies when not given a strategy and no exported
 * variant exists for the device, by the device's type ("CPU", "GPU",
 * "ACCELERATOR", …; another or NULL gets the GPU's):
 *   - every filter and partition first as flags, a scan and a scatter
 *     (filter-scatter, partition-scatter), and a partition's two parts
 *     rejoined by concat as its buffer (concat-split), so that the fusions
 *     make each one look-back pass and a count;
 *   - a map that scans each row (of a length not known to be short) with
 *     one row per work-group, so that no scan runs as blocks inside a map;
 *   - producers fused into their consumers where the fusion rules allow: a
 *     map into a scan, fold or post-function, a scatter into the scan of its
 *     indices (a filter becomes one pass), maps into maps and reductions;
 *   - every scan at the top level as the look-back scan, shaped for the
 *     device. A CPU: one work-item per group owning M = 16384 elements read
 *     directly (a group's work-items run in turn there; 64 KiB a chunk stays
 *     in cache). A GPU: 128 work-items of 32 elements, held in registers and
 *     loaded through a local tile, a warp-wide look-back: as fast as the
 *     best of M x WG explored on an NVIDIA H200 (docs/performance.md has the
 *     figures); a scan whose pairs a scatter writes, 256
 *     work-items of 12 (its offsets and places spill at 32);
 *   - a count folding as a look-back scan that runs after it (a filter's)
 *     read from that scan's kernel (reduce-as-scan-total), not reduced;
 *   - every other reduction at the top level in parallel, not one
 *     work-item's fold of all of it: on a GPU as the total of a look-back
 *     scan that stores nothing (lookback on a reduce), and one of short rows
 *     in chunks (parallel-reduce, BS = 4096); on a CPU in chunks of 16384
 *     (parallel-reduce), a core's loop over each (defaults.c says why);
 *   - every scan lookback refuses (inside a map, of rows) as [Pizzuti et al. 2022]'s
 *     parallel scan, which nests itself on the scan of the block sums (two
 *     levels for BS = 256), so only a scan of N/65536 elements stays
 *     sequential;
 *   - every histogram in subhistograms, as [Hellfritsch 2018]'s heuristic chooses.
 * Fine-tuning is `strata explore`'s. */
const char *st_default_strategy(const char *device_type);
/* The default strategy's fusions alone (each try(each(any, try(…)))), as
 * strategy nodes: what lookback applies to a filter or partition after
 * rewriting it, so that its one scan takes the rest in. NULL with why: a
 * fusion rule missing from reg, or out of memory. */
const st_strategy *st_fusion_strategy(st_ctx *cx, const st_registry *reg, st_err *why);

#endif
