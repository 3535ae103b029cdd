/* codegen/cg_hoist.c — parallel work taken out of sequential work.
 *
 * A parallel map nested in a step that runs sequentially
 * (`reduceSeq(+, 0, mapGlb(…))` at the top, `reduceSeq(+, 0, mapLcl(…))` in
 * a work-group) cannot run where it stands: one work-item would have to run
 * it. It runs first instead, in parallel, into memory of its own, and the
 * step reads that memory through a variable. */
#include "cg.h"

#include <string.h>

static bool contains(const st_node *e, const cg_stage *st) {
    if (st->parallel(e)) return true;
    for (uint32_t i = 0; i < e->nkids; i++)
        if (contains(e->kids[i], st)) return true;
    return false;
}

static bool is_function(const st_node *e) { return e->kind == ST_NODE_LAMBDA || e->kind == ST_NODE_OPFN; }

/* e computed now, into a place of its own: a variable that reads it. */
static const st_node *precompute(cg *g, const st_node *e, const cg_binding **env, const cg_stage *st) {
    const cg_place *p = st->place(g, e->type);
    if (!p) return e;
    cg_level level = g->level;
    st->into(g, e, *env, p);
    g->level = level;
    const st_node *var = st_var(g->cx, st_fresh_name(g->cx, "arg"), e->type, NULL);
    if (!var) return cg_fail(g, e, "out of memory"), e;
    *env = cg_bind_memory(g, *env, var->u.name, e->type, p);
    return var;
}

static const st_node *rebuilt(cg *g, const st_node *e, const st_node **kids, bool changed) {
    if (!changed) return e;
    st_err err = {0};
    const st_node *r = st_rebuild(g->cx, e, kids, &err);
    if (!r) cg_fail(g, e, "%s", err.message);
    return r ? r : e;
}

static const st_node *hoist_inside(cg *g, const st_node *e, const cg_binding **env, const cg_stage *st);

const st_node *cg_hoist(cg *g, const st_node *e, const cg_binding **env, const cg_stage *st) {
    if (g->failed || is_function(e) || !contains(e, st)) return e;
    if (e->type->kind != ST_TYPE_SCALAR && !cg_is_view(e)) return precompute(g, e, env, st);
    /* the total of a scan whose kernels write it alone (a look-back scan's,
       a reduce's as lookback makes it; cg_algorithm.total_only), not a
       copy of the scan */
    const cg_algorithm *alg = st_is_prim(e, ST_PRIM_SCAN_TOTAL) ? cg_algorithm_at(e->kids[0]) : NULL;
    if (alg && alg->total_only) return precompute(g, e, env, st);
    return hoist_inside(g, e, env, st);
}

const st_node *cg_hoist_inside(cg *g, const st_node *e, const cg_binding **env, const cg_stage *st) {
    if (g->failed || is_function(e) || !contains(e, st)) return e;
    return hoist_inside(g, e, env, st);
}

static const st_node *hoist_inside(cg *g, const st_node *e, const cg_binding **env, const cg_stage *st) {
    const st_node **kids = cg_alloc(g, (e->nkids + 1) * sizeof *kids);
    if (!kids) return e;
    bool changed = false;
    for (uint32_t i = 0; i < e->nkids; i++) {
        kids[i] = st_is_binder(e, i) ? e->kids[i] : cg_hoist(g, e->kids[i], env, st);
        changed |= kids[i] != e->kids[i];
    }
    return rebuilt(g, e, kids, changed);
}

/* k, an array a parallel loop reads, there before the loop starts. A zip
 * is read through: only its parts that are not views are computed, so that
 * an input beside a computed array (`zip(xs, scan(…, xs))`) is read where
 * it is rather than copied first. */
static const st_node *materialise(cg *g, const st_node *k, const cg_binding **env, const cg_stage *st) {
    if (cg_is_view(k)) return k;
    if (k->kind != ST_NODE_PRIM || k->u.prim != ST_PRIM_ZIP) return precompute(g, k, env, st);
    const st_node **kids = cg_alloc(g, (k->nkids + 1) * sizeof *kids);
    if (!kids) return k;
    bool changed = false;
    for (uint32_t i = 0; i < k->nkids; i++) {
        kids[i] = materialise(g, k->kids[i], env, st);
        changed |= kids[i] != k->kids[i];
    }
    return rebuilt(g, k, kids, changed);
}

static const st_node *hoist_args(cg *g, const st_node *e, uint32_t first, const cg_binding **env, const cg_stage *st,
                                 bool fusing) {
    const st_node **kids = cg_alloc(g, (e->nkids + 1) * sizeof *kids);
    if (!kids) return e;
    bool changed = false;
    for (uint32_t i = 0; i < e->nkids; i++) {
        const st_node *k = e->kids[i];
        bool compute = i >= first && !is_function(k) && k->type->kind != ST_TYPE_SCALAR && !cg_is_view(k) &&
                       !(fusing && cg_fusible_map(k));
        kids[i] = compute ? materialise(g, k, env, st) : k;
        changed |= kids[i] != k;
    }
    return rebuilt(g, e, kids, changed);
}

const st_node *cg_hoist_args(cg *g, const st_node *e, uint32_t first, const cg_binding **env, const cg_stage *st) {
    return hoist_args(g, e, first, env, st, false);
}

const st_node *cg_hoist_args_fusing(cg *g, const st_node *e, uint32_t first, const cg_binding **env,
                                    const cg_stage *st) {
    return hoist_args(g, e, first, env, st, true);
}

/* ---- kernel-makers out of functions ---- */

typedef struct hoisted {
    const st_node *node, *var;
} hoisted;

typedef struct invariant {
    const char **bound; /* the names bound between e and here */
    uint32_t nbound, capbound;
    hoisted *done;      /* what was hoisted and its variable: a node met */
    uint32_t ndone, capdone; /*   twice (nodes are hash-consed) is computed once */
} invariant;

/* Does n read one of the names bound on the way to it? Conservative: an
 * occurrence under a binder that shadows the name counts too. */
static bool reads_bound(const st_node *n, const invariant *in) {
    if (n->kind == ST_NODE_VAR) {
        for (uint32_t i = 0; i < in->nbound; i++)
            if (in->bound[i] == n->u.name) return true;
        return false;
    }
    for (uint32_t i = 0; i < n->nkids; i++)
        if (!st_is_binder(n, i) && reads_bound(n->kids[i], in)) return true;
    return false;
}

static bool bind_name(cg *g, invariant *in, const char *name) {
    if (!cg_grow(g, (void **)&in->bound, in->nbound, &in->capbound, sizeof *in->bound)) return false;
    in->bound[in->nbound++] = name;
    return true;
}

static void remember(cg *g, invariant *in, const st_node *node, const st_node *var) {
    if (cg_grow(g, (void **)&in->done, in->ndone, &in->capdone, sizeof *in->done))
        in->done[in->ndone++] = (hoisted){node, var};
}

static const st_node *kernels_out(cg *g, const st_node *e, bool in_fn, invariant *in, const cg_binding **env,
                                  const cg_stage *st) {
    if (g->failed) return e;
    /* a scan's total goes out with its scan: scanTotal takes the scan
       itself, never a variable that holds its result */
    bool total = st_is_prim(e, ST_PRIM_SCAN_TOTAL) && e->kids[0]->kind == ST_NODE_PRIM &&
                 st_prim_makes_kernels(e->kids[0]->u.prim);
    if (in_fn && e->kind == ST_NODE_PRIM && (total || st_prim_makes_kernels(e->u.prim)) && !reads_bound(e, in)) {
        for (uint32_t i = 0; i < in->ndone; i++)
            if (in->done[i].node == e) return in->done[i].var;
        const st_node *var = precompute(g, e, env, st);
        if (var != e) remember(g, in, e, var);
        return var;
    }
    /* the names this node binds are in scope in its kids (in a let's value
     * too: conservative) */
    uint32_t mark = in->nbound;
    for (uint32_t i = 0; i < e->nkids; i++)
        if (st_is_binder(e, i) && e->kids[i]->kind == ST_NODE_VAR && !bind_name(g, in, e->kids[i]->u.name)) return e;
    const st_node **kids = cg_alloc(g, (e->nkids + 1) * sizeof *kids);
    if (!kids) return e;
    bool changed = false;
    for (uint32_t i = 0; i < e->nkids; i++) {
        kids[i] = st_is_binder(e, i) ? e->kids[i]
                                     : kernels_out(g, e->kids[i], in_fn || is_function(e->kids[i]), in, env, st);
        changed |= kids[i] != e->kids[i];
    }
    in->nbound = mark;
    return rebuilt(g, e, kids, changed);
}

const st_node *cg_hoist_kernels(cg *g, const st_node *e, const cg_binding **env, const cg_stage *st) {
    invariant in = {0};
    return kernels_out(g, e, false, &in, env, st);
}

/* ---- maps fused into their reader ---- */

bool cg_fusible_map(const st_node *e) {
    if (e->kind != ST_NODE_PRIM || (e->u.prim != ST_PRIM_MAP && e->u.prim != ST_PRIM_MAP_GLB)) return false;
    const st_node *f = e->kids[0];
    return f->kind == ST_NODE_LAMBDA && cg_is_plain(f->type->elem) && cg_is_view(e->kids[1]);
}

cg_value cg_element(cg *g, const st_node *e, const cg_binding *env, const char *i) {
    if (cg_fusible_map(e)) {
        cg_value xs = cg_thread_value(g, e->kids[1], env);
        cg_value x = cg_index(g, &xs, i);
        return cg_apply(g, e->kids[0], 1, &x, env);
    }
    cg_value xs = cg_thread_value(g, e, env);
    return cg_index(g, &xs, i);
}
