/* strategies/lowering.c — lowering: the parallel structure onto OpenCL.
 *
 * The scan rules leave maps, scans and reductions nested in one another;
 * lowering decides who runs each of them and where every intermediate lives.
 * The hierarchy has three levels:
 *
 *   HOST    between kernels: a map here is a kernel, over work-groups
 *           (mapWrg) or over all work-items at once (mapGlb)
 *   GROUP   inside a mapWrg's function: what all work-items of one group run
 *           together; a map here spreads over them (mapLcl)
 *   THREAD  inside a work-item: everything is sequential (mapSeq, scanSeq,
 *           reduceSeq)
 *
 * The component rules each make one decision at the root of the node they
 * are given; `lower-opencl` makes all of them over a whole def body, from its
 * level. The low-level primitives mean what their high-level forms mean (the
 * interpreter runs them alike), so every decision keeps the program's result
 * exactly: nothing is reordered, reassociated or recomputed.
 *
 * Address spaces: a let-bound intermediate that must be stored somewhere is
 * wrapped in toGlobal (HOST), toLocal (GROUP) or toPrivate (THREAD). A view
 * (split, join, zip, transpose… of variables) is not stored: codegen turns it
 * into index arithmetic over what it views. */
#include "rewrite/plugin.h"
#include "strategies.h"

#include <stdio.h>


/* map, mapSeq, mapGlb, mapWrg or mapLcl: the same meaning, different runners */
static bool is_any_map(const st_node *n) {
    return st_is_prim(n, ST_PRIM_MAP) || st_is_prim(n, ST_PRIM_MAP_SEQ) || st_is_prim(n, ST_PRIM_MAP_GLB) ||
           st_is_prim(n, ST_PRIM_MAP_WRG) || st_is_prim(n, ST_PRIM_MAP_LCL);
}

/* toGlobal, toLocal or toPrivate: an address space decided already */
static bool is_placed(const st_node *n) {
    return st_is_prim(n, ST_PRIM_TO_GLOBAL) || st_is_prim(n, ST_PRIM_TO_LOCAL) || st_is_prim(n, ST_PRIM_TO_PRIVATE);
}

/* Is argument i of n a function (an operator, a lambda)? */
static bool is_fun_arg(const st_node *n, uint32_t i) {
    return n->kind == ST_NODE_PRIM && st_prim_arg_role(n->u.prim, (int)i, n->nkids) == ST_ARG_FUN;
}

/* A value that needs memory: an array, or a tuple of such (what unzip gives).
 * A tuple holding a scalar has no one address space, and scalars live in
 * registers, so neither is placed. */
static bool holds_arrays(const st_type *t) { return st_type_holds_arrays(t); }

/* n with new kids, through the constructors (which check the types again) */
static const st_node *rebuild(st_build *b, const st_node *n, const st_node *const *kids) {
    if (!st_b_all(kids, n->nkids)) return NULL;
    st_err inner = {0};
    return st_b_check(b, st_rebuild(b->cx, n, kids, &inner), &inner);
}

/* A rule's "not of my shape", with the rule's name in it. */
static const st_node *not_shape(st_err *why, const char *rule, const char *what) {
    return st_no_match(why, "%s %s", rule, what);
}

/* ------------------------------------------------------------------------ */
/* The component rules                                                      */
/* ------------------------------------------------------------------------ */

/* ---- map-glb, map-wrg, map-lcl, map-seq ---- */

/* Any flavour of map becomes the flavour `to`, so that a strategy can change
 * its mind (`first(mapGlb, map-wrg)`); a map already of that flavour is not
 * this rule's to rewrite, so repeat() and normalize() over it end. */
static const st_node *remap(st_rw *rw, const st_node *e, st_prim to, const char *rule, st_err *why) {
    if (!is_any_map(e)) return not_shape(why, rule, "rewrites a map (of any flavour)");
    if (e->u.prim == to)
        return st_no_match(why, "%s has nothing to do: this is a %s already", rule, st_prim_get(to)->name);
    st_build B = st_build_of(rw, why), *b = &B;
    return ST_PRIM(b, to, e->kids[0], e->kids[1]);
}

static const st_node *map_glb(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    return remap(rw, e, ST_PRIM_MAP_GLB, "map-glb", why);
}

static const st_node *map_wrg(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    return remap(rw, e, ST_PRIM_MAP_WRG, "map-wrg", why);
}

static const st_node *map_lcl(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    return remap(rw, e, ST_PRIM_MAP_LCL, "map-lcl", why);
}

static const st_node *map_seq(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    return remap(rw, e, ST_PRIM_MAP_SEQ, "map-seq", why);
}

/* ---- reduce-seq, scan-seq ---- */

/* reduce or scan (op, z, xs) or (op, fold, z, xs), as the sequential fold
 * reduceSeq / scanSeq (f, z, xs). A sequential fold never combines two
 * partial results, so it needs only what folds an element into the
 * accumulator: the fold when there is one (fold(a, x) = op(a, f(x))), else
 * the operator itself. This is what the interpreter computes for both, in
 * the same order, so the result is the very same. */
static const st_node *sequential(st_build *b, const st_node *e) {
    st_scan_form s;
    if (!st_fold_form_of(e, &s)) return st_fail_internal(b->err, "a sequential fold of something not a scan or reduce"), NULL;
    st_prim to = st_is_prim(e, ST_PRIM_SCAN) ? ST_PRIM_SCAN_SEQ : ST_PRIM_REDUCE_SEQ;
    return ST_PRIM(b, to, st_fold_step(&s), s.z, s.xs);
}

static const st_node *reduce_seq(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    if (!st_is_prim(e, ST_PRIM_REDUCE)) return not_shape(why, "reduce-seq", "rewrites a reduce");
    st_build B = st_build_of(rw, why);
    return sequential(&B, e);
}

/* The post-function of a maposcanomap needs each accumulator and its element
 * together, which scanSeq does not give; so a 5-argument scan is refused
 * here (the shape fits, the form does not) rather than rewritten into
 * something else. lower-opencl leaves it a scan, which codegen runs in one
 * work-item; sequential-scan writes it as a scanSeq and a map. */
static const st_node *scan_seq(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    if (!st_is_prim(e, ST_PRIM_SCAN)) return not_shape(why, "scan-seq", "rewrites a scan");
    if (e->nkids == 5)
        return st_reject(why, "scan-seq: a scan with a post-function (op, fold, post, z, xs) has no scanSeq form; "
                       "sequential-scan writes it as a scanSeq followed by a map"), NULL;
    st_build B = st_build_of(rw, why);
    return sequential(&B, e);
}

/* ---- to-global, to-local, to-private ---- */

static const st_node *place(st_rw *rw, const st_node *e, st_prim space, const char *rule, st_err *why) {
    if (!holds_arrays(e->type)) return not_shape(why, rule, "places an array (or a tuple of arrays) in memory");
    if (is_placed(e)) return not_shape(why, rule, "has nothing to do: the value is placed in an address space already");
    st_build B = st_build_of(rw, why), *b = &B;
    return ST_PRIM(b, space, e);
}

static const st_node *to_global(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    return place(rw, e, ST_PRIM_TO_GLOBAL, "to-global", why);
}

static const st_node *to_local(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    return place(rw, e, ST_PRIM_TO_LOCAL, "to-local", why);
}

static const st_node *to_private(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    return place(rw, e, ST_PRIM_TO_PRIVATE, "to-private", why);
}

/* ------------------------------------------------------------------------ */
/* lower-opencl                                                             */
/* ------------------------------------------------------------------------ */

typedef enum level { HOST, GROUP, THREAD } level;

/* Where a let-bound intermediate made at each level lives. */
static st_prim space_of(level lv) {
    return lv == HOST ? ST_PRIM_TO_GLOBAL : lv == GROUP ? ST_PRIM_TO_LOCAL : ST_PRIM_TO_PRIVATE;
}

/* Does e, run by a work-group, give its work-items something to share: a map
 * (or a mapLcl) that lowering at GROUP would spread over them? That is one
 * reached without entering a function argument: a scan's or reduction's
 * operator runs in one work-item, and so does every other function argument
 * (lower_kids sends them to THREAD), so a map there is sequential anyway. */
static bool has_parallel(const st_node *e) {
    if (st_is_prim(e, ST_PRIM_MAP) && st_is_view(e, true)) return false; /* read element by element */
    if (st_is_prim(e, ST_PRIM_MAP) || st_is_prim(e, ST_PRIM_MAP_LCL)) return true;
    if (e->kind == ST_NODE_PRIM && st_prim_makes_kernels(e->u.prim)) return false; /* not the group's: see lower_prim */
    for (uint32_t i = 0; i < e->nkids; i++)
        if (!st_is_binder(e, i) && !is_fun_arg(e, i) && has_parallel(e->kids[i])) return true;
    return false;
}

static const st_node *lower(st_build *b, const st_node *e, level lv);

/* e with every kid lowered: a primitive's function arguments at fn, the rest
 * (data, neutral elements, a lambda's body, a let's parts) at lv; binders as
 * they are. */
static const st_node *lower_kids(st_build *b, const st_node *e, level lv, level fn) {
    const st_node *kids[ST_MAX_KIDS];
    for (uint32_t i = 0; i < e->nkids; i++) {
        kids[i] = st_is_binder(e, i) ? e->kids[i] : lower(b, e->kids[i], is_fun_arg(e, i) ? fn : lv);
        if (!kids[i]) return NULL;
    }
    return rebuild(b, e, kids);
}

/* A let-bound value v (lowered at lv) in lv's address space, unless it needs
 * no memory (a scalar, a view) or was placed already. A value that is itself
 * a let is placed where its own result is made, at its innermost body. */
static const st_node *in_space(st_build *b, const st_node *v, level lv) {
    if (!v) return NULL;
    if (v->kind == ST_NODE_LET) {
        const st_node *kids[ST_MAX_KIDS];
        memcpy(kids, v->kids, v->nkids * sizeof *kids);
        kids[v->nkids - 1] = in_space(b, st_let_body(v), lv);
        return rebuild(b, v, kids);
    }
    if (!holds_arrays(v->type) || st_is_view(v, true)) return v;
    return ST_PRIM(b, space_of(lv), v);
}

/* let pattern = value in body: both at the let's level, the value placed */
static const st_node *lower_let(st_build *b, const st_node *e, level lv) {
    const st_node *kids[ST_MAX_KIDS];
    memcpy(kids, e->kids, e->nkids * sizeof *kids);
    kids[e->nkids - 2] = in_space(b, lower(b, st_let_value(e), lv), lv);
    kids[e->nkids - 1] = lower(b, st_let_body(e), lv);
    return rebuild(b, e, kids);
}

/* A high-level map, by level: at HOST a kernel, over work-groups when its
 * function has work for a group to share, else over all work-items; at
 * GROUP over the group's work-items; in a work-item, a loop. */
static const st_node *lower_map(st_build *b, const st_node *e, level lv) {
    st_prim to = ST_PRIM_MAP_SEQ;
    level fn = THREAD;
    if (lv == HOST) {
        const st_node *f = e->kids[0];
        bool group = f->kind == ST_NODE_LAMBDA && has_parallel(st_lambda_body(f));
        to = group ? ST_PRIM_MAP_WRG : ST_PRIM_MAP_GLB;
        fn = group ? GROUP : THREAD;
    } else if (lv == GROUP) {
        to = ST_PRIM_MAP_LCL;
    }
    const st_node *k = lower_kids(b, e, lv, fn);
    return k ? ST_PRIM(b, to, k->kids[0], k->kids[1]) : NULL;
}

/* A primitive at level lv. Its data and neutral arguments are at lv (they
 * are computed where the primitive runs); its functions run per element in
 * one work-item, so at THREAD — except a work-group's function (mapWrg at
 * HOST), which its whole group runs. A scan or reduction at any level is done
 * by one work-item in order: scanSeq / reduceSeq, as scan-seq and reduce-seq
 * write them (a scan with a post-function has no such form and stays a scan).
 * Explicit mapGlb, mapWrg, mapLcl and mapSeq keep what they are wherever they
 * are: a mapWrg or mapGlb inside a group is codegen's to report. */
static const st_node *lower_prim(st_build *b, const st_node *e, level lv) {
    /* A node that makes kernels of its own runs at the top of the def
     * wherever it is written (codegen computes one that reads nothing of a
     * map's element before the map), so what it reads is made at HOST. */
    if (st_prim_makes_kernels(e->u.prim)) return lower_kids(b, e, HOST, THREAD);
    switch (e->u.prim) {
    case ST_PRIM_REDUCE_BY_INDEX_2D: case ST_PRIM_SCATTER_2D: {
        /* codegen knows the 1-D forms only */
        const st_node *flat = st_flatten_2d(b, e);
        return flat ? lower(b, flat, lv) : NULL;
    }
    case ST_PRIM_MAP:
        /* a map of the index alone is a view: codegen reads it where it is
         * read, so it needs no runner and no memory */
        return st_is_view(e, true) ? e : lower_map(b, e, lv);
    case ST_PRIM_MAP_WRG: return lower_kids(b, e, lv, lv == HOST ? GROUP : THREAD);
    case ST_PRIM_LOOP:
    case ST_PRIM_WHILE:
        /* a loop over arrays at the top runs there: the glue sequences its
         * body's kernels (codegen/cg_host.c), so its body (and condition)
         * are lowered at HOST, their maps kernels; any other loop is
         * sequential, in one work-item */
        return lower_kids(b, e, lv, lv == HOST && st_is_array_loop(e) ? HOST : THREAD);
    case ST_PRIM_SCAN:
    case ST_PRIM_REDUCE: {
        const st_node *k = lower_kids(b, e, lv, THREAD);
        return k && !(st_is_prim(k, ST_PRIM_SCAN) && k->nkids == 5) ? sequential(b, k) : k;
    }
    default: return lower_kids(b, e, lv, THREAD);
    }
}

/* e lowered at level lv. Leaves (variables, literals, operators) stay;
 * lambdas lower their bodies at lv; the rest rebuild through their
 * constructors, so the result has e's type, and is e itself (the same
 * pointer, nodes being hash-consed) when there is nothing to do. */
static const st_node *lower(st_build *b, const st_node *e, level lv) {
    switch (e->kind) {
    case ST_NODE_LIT: case ST_NODE_VAR: case ST_NODE_OPFN: return e;
    case ST_NODE_LET: return lower_let(b, e, lv);
    case ST_NODE_PRIM: return lower_prim(b, e, lv);
    default: return lower_kids(b, e, lv, lv);
    }
}

/* The whole body from HOST. It succeeds on every well-typed expression, with
 * the expression itself when it is lowered already, so that it can end any
 * strategy (`run` applies it after the user's). Its walk recurses once per
 * level of the tree, so a tree deeper than the engine accepts (what the
 * parser reads back) is refused rather than walked. */
static const st_node *lower_opencl(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    if (e->depth > ST_MAX_DEPTH)
        return st_reject(why, "lower-opencl: the program is nested %u levels deep, more than the %d that strata reads back",
                       e->depth, ST_MAX_DEPTH), NULL;
    /* seeds taken out and exscans as scans (codegen takes the inclusive
     * scan only), filters and partitions as scans and scatters (codegen
     * knows those), then index fusion, so that no kernel computes a whole
     * producer to read one element of it, and maps of the index alone
     * become views */
    if (!(e = st_normal_form(rw, e, why))) return NULL;
    st_build B = st_build_of(rw, why);
    if (!(e = st_sorts_as_partitions(&B, e)) || !(e = st_filters_as_scatters(&B, e))) return NULL;
    st_err ferr = {0};
    const st_node *fused = st_fuse_index(st_rw_ctx(rw), st_rw_def(rw), e, &ferr);
    if (!fused) return *why = ferr, NULL;
    return lower(&B, fused, HOST);
}

/* ------------------------------------------------------------------------ */
/* The table                                                                */
/* ------------------------------------------------------------------------ */

#define LOWERING(name_, summary_, conditions_, fn) \
    {.name = name_, .summary = summary_, .conditions = conditions_, .origin = "built-in", .apply = fn}

static const st_rule lowering_rules[] = {
    LOWERING("map-glb", "a map (of any flavour) over all work-items of the device: mapGlb",
             "a map that is not a mapGlb already", map_glb),
    LOWERING("map-wrg", "a map (of any flavour) over work-groups, its function run by a whole group: mapWrg",
             "a map that is not a mapWrg already", map_wrg),
    LOWERING("map-lcl", "a map (of any flavour) over the work-items of a work-group: mapLcl",
             "a map that is not a mapLcl already", map_lcl),
    LOWERING("map-seq", "a map (of any flavour) as a loop in one work-item: mapSeq",
             "a map that is not a mapSeq already", map_seq),
    LOWERING("reduce-seq", "a reduce as a sequential left fold in one work-item: reduceSeq with the fold, else the operator",
             "a reduce, with or without a fold", reduce_seq),
    LOWERING("scan-seq", "a scan as a sequential fold-scan in one work-item: scanSeq with the fold, else the operator",
             "a scan without a post-function (op, z, xs) or (op, fold, z, xs)", scan_seq),
    LOWERING("to-global", "place a value in global memory: toGlobal",
             "an array or a tuple of arrays, not placed already", to_global),
    LOWERING("to-local", "place a value in a work-group's local memory: toLocal",
             "an array or a tuple of arrays, not placed already", to_local),
    LOWERING("to-private", "place a value in a work-item's private memory: toPrivate",
             "an array or a tuple of arrays, not placed already", to_private),
    LOWERING("lower-opencl",
             "map the whole program onto OpenCL: seeds taken out and exscans made scans (seeds-as-neutral, "
             "exscans-as-scans), filters and partitions as scans and scatters (filter-scatter, "
             "partition-scatter, concat-split) where they apply; kernels of mapWrg (a function with inner maps) or mapGlb, mapLcl "
             "within a group, mapSeq, scanSeq and reduceSeq within a work-item; let-bound intermediates into "
             "global, local or private memory by where they are made; what a scanLookback or subhistograms reads is "
             "made at the top, where it runs",
             "none: applies to every well-typed program, and to a lowered one without change", lower_opencl),
};

bool st_register_lowering_rules(st_registry *r, st_err *err) {
    for (size_t i = 0; i < sizeof lowering_rules / sizeof *lowering_rules; i++)
        if (!st_registry_add(r, &lowering_rules[i], err)) return false;
    return true;
}

const st_strategy *st_default_lowering(st_ctx *cx, const st_registry *reg) {
    const st_rule *rule = st_registry_find(reg, "lower-opencl");
    return rule ? st_s_rule(cx, rule, NULL) : NULL;
}
