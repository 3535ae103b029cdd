/* strategies/lookback.c — the single-pass scan with decoupled look-back.
 *
 *   lookback(M, WG, LW, LOAD)   scan(op, [fold, [post,]] z, xs)
 *                            -> scanLookback(M, WG, LW, LOAD, op, [fold, [post,]] z, xs)
 *                            reduce(op, [fold,] z, xs)
 *                            -> scanTotal(scanLookback(M, WG, LW, LOAD, op, [fold,] z, xs))
 *
 * After [Nicolaisen-Persson] and [Merrill-Garland 2016]
 * (docs/references.md). scanLookback is one kernel (codegen/cg_lookback.c): work-groups
 * take their ids from an atomic ticket, so every lower id is already
 * running; each work-item loads M elements coalesced, through local memory,
 * and scans them in order; the group scans its work-items' totals, publishes
 * its aggregate (flag A), looks back over its predecessors' flags until it
 * meets an inclusive prefix (flag P), publishes its own, and stores its
 * elements coalesced. Each element is read once and written once, so a scan
 * costs what a copy does.
 *
 * The rule takes every form of scan, so what fusion made of a program stays
 * one kernel: a scanomap reads its input through the fold, a maposcanomap
 * applies its post-function as it stores, and a scatter of a scan of
 * (index, value) pairs (fuse-scan-scatter) writes each pair straight into
 * the destination. Every length is right: the last group guards its tail,
 * so nothing is padded. A filter or partition it takes as its rule makes it
 * and the fusions leave it: one scan, the scatter in it. */
#include "rewrite/plugin.h"
#include "strategies.h"

#include <string.h>

static const char *const LOAD_NAMES[] = {"local", "direct", NULL};

/* the parameters of the composite and of its step alike */
#define LOOKBACK_PARAMS \
    {{.name = "M", .doc = "elements per work-item", .min = 1, .max = 65536}, \
    {.name = "WG", .doc = "work-items per group", .min = 1, .max = 1024}, \
    {.name = "LW", .doc = "work-items reading predecessors at once", .min = 1, .max = 1024, \
    .has_default = true, .def = 1}, \
    {.name = "LOAD", .doc = "local: loads and stores coalesced through local memory (GPUs); direct: each " \
    "work-item reads and writes its own M elements (CPUs, where a group's " \
    "work-items run in turn)", \
    .has_default = true, .def = 0, .names = LOAD_NAMES}}

/* scanLookback(M, WG, LW, LOAD, …) of the form p (a scan's, or a reduce's
 * fold form, whose post-function is NULL): the step's node for both. */
static const st_node *scan_lookback(st_build *b, const st_scan_form *p, const int64_t *args) {
    const st_node *m = st_b_count(b, args[0]), *wg = st_b_count(b, args[1]), *lw = st_b_count(b, args[2]),
                  *load = st_b_count(b, args[3]);
    if (p->post) return ST_PRIM(b, ST_PRIM_SCAN_LOOKBACK, m, wg, lw, load, p->op, p->fold, p->post, p->z, p->xs);
    if (p->fold) return ST_PRIM(b, ST_PRIM_SCAN_LOOKBACK, m, wg, lw, load, p->op, p->fold, p->z, p->xs);
    return ST_PRIM(b, ST_PRIM_SCAN_LOOKBACK, m, wg, lw, load, p->op, p->z, p->xs);
}

/* Whether lookback may take e (what), a node at the top level over scalars or tuples of them. */
static bool takes(st_rw *rw, const st_scan_form *p, const char *what, st_err *why) {
    if (!st_at_top_level(rw, "lookback", what, why)) return false;
    if (!st_type_is_plain(p->z->type) || !st_type_is_plain(p->xs->type->elem))
        return st_reject(why, "lookback folds scalars and tuples of scalars, and this %s's elements or accumulator "
                         "hold arrays (rows)%s", what, !strcmp(what, "scan") ? "; parallel-scan or no rule takes it" : "");
    return true;
}

static const st_node *lookback_scan(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    st_scan_form p;
    if (!st_scan_form_of(e, &p)) return st_no_match(why, "lookback rewrites a scan, a reduce, a filter or a partition");
    if (!takes(rw, &p, "scan", why)) return NULL;
    if (st_seed_not_neutral(e)) return st_with_seed_out(rw, e, args, why, lookback_scan);
    st_build B = st_build_of(rw, why);
    return scan_lookback(&B, &p, args);
}

/* A reduce as the total of a look-back scan that nothing else reads: codegen
 * runs that scan's kernel storing no element, only the last group's
 * inclusive prefix (cg_lookback.c). One pass in which every work-item of
 * every group folds M elements loaded coalesced: the reduction a GPU
 * needs, where a fold in chunks per work-item (parallel-reduce) reads
 * strided and leaves the partials to one work-item. The order of the
 * elements is kept, so op need not commute. */
static const st_node *lookback_reduce(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    st_scan_form p;
    if (!st_fold_form_of(e, &p)) return st_no_match(why, "lookback rewrites a reduce of a fold form");
    if (!takes(rw, &p, "reduce", why)) return NULL;
    if (st_seed_not_neutral(e)) return st_with_seed_out(rw, e, args, why, lookback_reduce);
    st_build B = st_build_of(rw, why), *b = &B;
    return ST_PRIM(b, ST_PRIM_SCAN_TOTAL, scan_lookback(b, &p, args));
}

static bool lookback_check(const int64_t *args, st_err *why) {
    if (args[2] > args[1])
        return st_reject(why, "LW = %lld work-items cannot read predecessors in a group of WG = %lld",
                       (long long)args[2], (long long)args[1]);
    return true;
}

/* The steps the composite below takes on a reduce and on a scan, rules of
 * their own (a trace names them, and a user may write them). */
#define LOOKBACK_STEP(name_, what, when, fn)                                                                      \
    {.name = name_, .summary = what, .conditions = when, .origin = "built-in", .nparams = 4,                     \
     .params = LOOKBACK_PARAMS, .apply = fn, .check = lookback_check}
static const st_rule rule_lookback_reduce = LOOKBACK_STEP(
    "lookback-reduce", "lookback on a reduce: the total of a single-pass look-back scan that stores nothing",
    "a reduce at the top level of a def, of a fold form over scalars or tuples of scalars; LW <= WG", lookback_reduce);
static const st_rule rule_lookback_scan = LOOKBACK_STEP(
    "lookback-scan", "lookback on a scan: the single-pass scan of that scan node",
    "a scan at the top level of a def (the body of a top-level loop over arrays counts), of any form, whose elements "
    "and accumulator are scalars or tuples of scalars; LW <= WG", lookback_scan);

static const st_rule rule_lookback;

static const st_strategy *registered(st_rw *rw, const char *name, st_err *why) {
    const st_rule *r = st_registry_find(st_rw_registry(rw), name);
    if (!r) return st_fail_internal(why, "lookback: the rule %s is not registered", name), NULL;
    return st_s_rule(st_rw_ctx(rw), r, NULL);
}

/* lookback as a strategy over the node it is given: a scan is the step
 * above; a filter or partition is its rule (filter-scatter,
 * partition-scatter), the default fusions, then the step on the one scan
 * they leave, so that a space of look-backs explores a filter as it
 * explores a scan. */
static const st_strategy *lookback(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    st_ctx *cx = st_rw_ctx(rw);
    if (st_is_prim(e, ST_PRIM_REDUCE)) return st_s_rule(cx, &rule_lookback_reduce, args);
    if (!st_is_prim(e, ST_PRIM_FILTER) && !st_is_prim(e, ST_PRIM_PARTITION)) return st_s_rule(cx, &rule_lookback_scan, args);
    const st_strategy *scatter = registered(rw, st_is_prim(e, ST_PRIM_FILTER) ? "filter-scatter" : "partition-scatter", why);
    const st_strategy *fusions = scatter ? st_fusion_strategy(cx, st_rw_registry(rw), why) : NULL;
    const st_strategy *totals = fusions ? registered(rw, "reduce-as-scan-total", why) : NULL;
    if (!totals) return NULL;
    st_pattern top_scan = {.kind = ST_PAT_PRIM, .prim = ST_PRIM_SCAN, .top = true}, any = {.kind = ST_PAT_ANY};
    /* a filter's count is then its scan's total (a partition's is read
     * before its scatter, so it stays a reduction) */
    const st_strategy *s = st_s_seq(
        cx, st_s_seq(cx, st_s_seq(cx, scatter, fusions), st_s_at(cx, ST_S_EACH, top_scan, st_s_rule(cx, &rule_lookback, args))),
        st_s_try(cx, st_s_at(cx, ST_S_EACH, any, st_s_try(cx, totals))));
    if (!s) st_fail_internal(why, "out of memory");
    return s;
}

static const st_rule rule_lookback = {
    .name = "lookback",
    .summary = "the single-pass scan with decoupled look-back: one kernel, each element read once and written once; "
               "M elements per work-item, WG work-items per group, LW of them reading predecessors' flags at once "
               "(1 is right everywhere; a warp's width suits GPUs), LOAD through local memory or direct; a fused map, "
               "post-function or scatter stays in it",
    .conditions = "a reduce at the top level of a def, of a fold form over scalars or tuples of scalars (the total of "
                  "the scan, whose kernel then stores no element); "
                  "a filter or a partition (made flags, a scan and a scatter by filter-scatter or partition-scatter, "
                  "fused as the default strategy does, the look-back then taking its one scan, and a filter's count its total), or a scan at the top level of a def (not inside a map; the body of a top-level loop over arrays "
                  "counts), of any length and any form (an exscan too, once exscans-as-scans made it a scan: the carry each "
                  "element gets is its exclusive prefix, one pass), whose elements and accumulator are scalars or tuples of scalars (a seed other than the operator's neutral element is taken "
                  "out first, as seeds-as-neutral does); LW <= WG",
    .origin = "built-in",
    .nparams = 4,
    .params = LOOKBACK_PARAMS,
    .expand = lookback,
    .check = lookback_check,
};

bool st_register_lookback_rules(st_registry *r, st_err *err) {
    return st_registry_add(r, &rule_lookback, err) && st_registry_add(r, &rule_lookback_scan, err) &&
           st_registry_add(r, &rule_lookback_reduce, err);
}
