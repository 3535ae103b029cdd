/* ir/prim_folds.c — the typing rules of the primitives that combine
 * elements: reduce, scan and exscan with their sequential forms, scanTotal,
 * scatter and reduce_by_index with their 2-D forms, and the primitives that
 * are one of these after leading literal sizes (scanLookback,
 * subhistograms). */
#include "prim.h"

/* (op, z, xs) | (op, fold, z, xs) | (op, fold, post, z, xs) | Seq: (fold, z, xs);
 * exscan only (op, z, xs), typed as scan's. */
const st_node *st_type_fold(st_ctx *cx, st_prim p, uint32_t n, const st_node *const *a, const st_type **out,
                            st_err *err) {
    const st_prim_desc *desc = st_prim_desc_of(p);
    bool seq = desc->funs == ST_FUNS_SEQ_FOLD, folding = desc->funs == ST_FUNS_SCAN && n >= 4;
    const st_node *xs = a[n - 1];
    const st_type *params[2];
    if (xs->type->kind != ST_TYPE_ARRAY) return st_need_array(xs, p, (int)n - 1, "an array", err);
    const st_type *e = xs->type->elem, *acc = a[n - 2]->type, *elem_out = acc;
    if (!seq && !folding && acc != e)
        return st_fail_arg(err, (int)n - 2, "%s's neutral element has type %s, but the elements are %s",
                           desc->info.name, st_type_text(acc).s, st_type_text(e).s);
    for (uint32_t f = 0; f + 2 < n; f++) {
        const char *what = seq || f == 1 ? "fold" : f == 0 ? "operator" : "post-function";
        params[0] = acc;
        params[1] = f == 0 && !seq ? acc : e;
        if (!st_fun_takes(a[f]->type, params, 2)) return st_fun_mismatch(a[f], p, (int)f, params, 2, err);
        if (f == 2) {
            elem_out = a[f]->type->elem;
        } else if (a[f]->type->elem != acc) {
            return st_fail_arg(err, (int)f, "%s's %s must return %s, but it returns %s", desc->info.name, what,
                               st_type_text(acc).s, st_type_text(a[f]->type->elem).s);
        }
    }
    *out = p == ST_PRIM_REDUCE || p == ST_PRIM_REDUCE_SEQ ? acc : st_type_array(cx, xs->type->size, elem_out);
    return a[0];
}

/* scanTotal(s): s a scan (scan, scanSeq or scanLookback, any form); its accumulator's type. */
const st_node *st_type_scan_total(st_ctx *cx, st_prim p, uint32_t n, const st_node *const *a, const st_type **out,
                                  st_err *err) {
    (void)cx, (void)p, (void)n;
    st_scan_form f;
    bool scan = st_is_prim(a[0], ST_PRIM_SCAN) || st_is_prim(a[0], ST_PRIM_SCAN_SEQ) || st_is_prim(a[0], ST_PRIM_SCAN_LOOKBACK);
    if (!scan || !st_fold_form_of(a[0], &f))
        return st_fail_arg(err, 0, "scanTotal takes a scan (scan, scanSeq or scanLookback), not %s", a[0]->kind == ST_NODE_PRIM ?
                           st_prim_get(a[0]->u.prim)->name : "another expression");
    *out = f.z->type;
    return a[0];
}

/* The leading sizes of a primitive that is another after them: each one's
 * range, and what it is, for the message. */
typedef struct lead_size {
    int64_t min, max;
    const char *what;
} lead_size;

static const lead_size lookback_sizes[ST_LOOKBACK_SIZES] = {
    {1, 1 << 16, "M, the elements per work-item, must be a literal from 1 to 65536"},
    {1, 1 << 16, "WG, the work-items per group, must be a literal from 1 to 65536"},
    {1, 1 << 16, "LW, the work-items reading predecessors at once, must be a literal from 1 to 65536"},
    {0, 1, "LOAD must be 0 (through local memory) or 1 (each work-item reads its own elements)"}};

static const lead_size hist_sizes[ST_HIST_SIZES] = {
    {0, 1 << 30, "C, the work-items per subhistogram, must be a literal from 0 (the heuristic) to 2^30"},
    {0, 2, "MEM must be 0 (local memory where it fits, else global), 1 (global) or 2 (local)"},
    {0, 3, "ATOMIC must be 0 (what the operator allows), 1 (a hardware atomic), 2 (compare-and-swap) or 3 (a lock)"}};

static const lead_size tile_sizes[ST_PARTITION_TILES_SIZES] = {
    {0, 1 << 30, "TILE, the elements per work-item, must be a literal from 0 (the device's choice) to 2^30"},
    {0, 1024, "WG, the work-items per group, must be a literal from 0 (the device's choice) to 1024"}};

/* scanLookback(M, WG, LW, LOAD, …) and subhistograms(C, MEM, ATOMIC, …):
 * literal sizes in their ranges, then the other primitive. ATOMIC's fit to
 * the operator is the device's concern (codegen/atomics.h), not the
 * program's meaning. */
const st_node *st_type_after_sizes(st_ctx *cx, st_prim p, uint32_t n, const st_node *const *a, const st_type **out,
                                   st_err *err) {
    uint32_t skip;
    st_prim base = st_prim_after_sizes(p, &skip);
    const lead_size *sizes = p == ST_PRIM_SCAN_LOOKBACK ? lookback_sizes : p == ST_PRIM_SUBHISTOGRAMS ? hist_sizes : tile_sizes;
    for (uint32_t i = 0; i < skip; i++) {
        const st_size *s = st_length_arg(cx, p, a[i], (int)i, err);
        if (!s) return NULL;
        int64_t v;
        if (!st_size_is_const(s, &v) || v < sizes[i].min || v > sizes[i].max)
            return st_fail_arg(err, (int)i, "%s's %s", st_prim_name(p), sizes[i].what);
    }
    if (!st_prim_check(cx, base, n - skip, a + skip, out, err)) {
        if (err && err->arg >= 0) err->arg += (int)skip;
        return NULL;
    }
    return a[0];
}

/* An array of integer indices, or for the 2-D forms of (row, column) pairs of
 * integers (any integer type, as the 1-D forms take). */
static bool indices_ok(const st_type *t, bool two) {
    if (t->kind != ST_TYPE_ARRAY) return false;
    if (!two) return st_type_is_int(t->elem);
    const st_type *e = t->elem;
    return e->kind == ST_TYPE_TUPLE && e->n == 2 && st_type_is_int(e->items[0]) && st_type_is_int(e->items[1]);
}

/* scatter(dest, is, vs), reduce_by_index(dest, f, z, is, vs) and their 2-D
 * forms, whose destination is [n][m]t and whose indices are pairs: the
 * element t is the destination's innermost. */
const st_node *st_type_by_index(st_ctx *cx, st_prim p, uint32_t n, const st_node *const *a, const st_type **out,
                                st_err *err) {
    (void)cx, (void)n;
    const st_prim_info *info = st_prim_get(p);
    bool hist = p == ST_PRIM_REDUCE_BY_INDEX || p == ST_PRIM_REDUCE_BY_INDEX_2D;
    bool two = p == ST_PRIM_REDUCE_BY_INDEX_2D || p == ST_PRIM_SCATTER_2D;
    int is = hist ? 3 : 1, vs = hist ? 4 : 2;
    const st_type *t = a[0]->type, *params[2];
    if (t->kind != ST_TYPE_ARRAY || (two && t->elem->kind != ST_TYPE_ARRAY))
        return st_need_array(a[0], p, 0, two ? "a destination of two dimensions, [n][m]t" : "a destination array", err);
    const st_type *elem = two ? t->elem->elem : t->elem;
    if (!indices_ok(a[is]->type, two))
        return st_need_array(a[is], p, is, two ? "an array of (row, column) pairs of integers, like zip(rs, cs)" : "an array of integer indices", err);
    if (a[vs]->type->kind != ST_TYPE_ARRAY) return st_need_array(a[vs], p, vs, "an array of values", err);
    if (a[vs]->type->size != a[is]->type->size)
        return st_fail_arg(err, vs, "%s needs as many values as indices, but there are %s indices and %s values",
                           info->name, st_size_text(a[is]->type->size).s, st_size_text(a[vs]->type->size).s);
    if (a[vs]->type->elem != elem)
        return st_fail_arg(err, vs, "%s's values have type %s, but the destination holds %s", info->name,
                           st_type_text(a[vs]->type->elem).s, st_type_text(elem).s);
    if (hist) {
        if (a[2]->type != elem)
            return st_fail_arg(err, 2, "%s's neutral element has type %s, but the destination holds %s", info->name,
                               st_type_text(a[2]->type).s, st_type_text(elem).s);
        params[0] = params[1] = elem;
        if (!st_fun_takes(a[1]->type, params, 2)) return st_fun_mismatch(a[1], p, 1, params, 2, err);
        if (a[1]->type->elem != elem)
            return st_fail_arg(err, 1, "%s's operator must return %s, but it returns %s", info->name,
                               st_type_text(elem).s, st_type_text(a[1]->type->elem).s);
    }
    *out = t;
    return a[0];
}

/* scatter(dest, is, vs) as above; scatter(dest, ivs) of (index, value) pairs */
const st_node *st_type_scatter(st_ctx *cx, st_prim p, uint32_t n, const st_node *const *a, const st_type **out,
                               st_err *err) {
    if (n != 2) return st_type_by_index(cx, p, n, a, out, err);
    const st_type *t = a[0]->type, *ivs = a[1]->type;
    if (t->kind != ST_TYPE_ARRAY) return st_need_array(a[0], p, 0, "a destination array", err);
    if (ivs->kind != ST_TYPE_ARRAY || ivs->elem->kind != ST_TYPE_TUPLE || ivs->elem->n != 2 ||
        !st_type_is_int(ivs->elem->items[0]) || ivs->elem->items[1] != t->elem) {
        return st_fail_arg(err, 1, "%s with two arguments needs an array of (index, value) pairs, an integer index and a %s, but this has type %s",
                           st_prim_name(p), st_type_text(t->elem).s, st_type_text(ivs).s);
    }
    *out = t;
    return a[0];
}
