/* strategies/segmented.c — a segmented scan: one segment per work-group.
 *
 * `xss |> map(xs => xs |> scan(op, z))` scans each row in one work-item
 * when lowered as it is (or, with the row mapped first, in work-item 0 of a
 * group). segmented-scan(WG) spreads each row over the WG work-items of a
 * group instead, as Futhark's intra-group kernels do: the row is cut into
 * WG chunks of C = ⌈K/WG⌉ elements; each work-item folds its chunk, one
 * scans the WG totals, and each scans its chunk again from the total of the
 * chunks before it. The tail of the last chunks (indices ≥ K) is skipped by
 * a bounds test, so no element is padded and no length must divide.
 *
 *   xss |> map(xs =>
 *     let ys = <the scan's input>                         (unless a variable or view)
 *     let sums = iota(WG) |> map(c => iota(C) |> reduceSeq((a, i) => step(a, c, i), z))
 *     let prefixes = sums |> scanSeq(op, z)
 *     let scanned = iota(WG) |> map(c =>
 *       iota(C) |> scanSeq((a, i) => step(a, c, i), if c == 0 then z else prefixes |> get(c - 1)))
 *     in iota(K) |> map(j => join(scanned) |> get(j)))
 *   where step(a, c, i) = let j = c * C + i in if j < K then op(a, ys |> get(j)) else a
 *
 * A scan with a fold (a map fused in) folds elements with it and combines
 * totals with op; one with a post-function applies it to each element's
 * final accumulator and the element, in the last map.
 *
 * lower-opencl then makes the outer map a mapWrg (its function has maps),
 * the inner maps mapLcl, so WG is the group's width. Like every parallel
 * scan it promises that op is associative and z its neutral element. */
#include "rewrite/plugin.h"
#include "strategies.h"

#include <stdio.h>


/* element j (an i64 expression) of ys folded into a: within the row only */
static const st_node *step(st_build *b, const st_node *op, const st_node *a, const st_node *j, const st_node *k,
                           const st_node *ys) {
    return st_b_if(b, st_b_binop(b, ST_OP_LT, j, k), ST_CALL(b, op, a, ST_PRIM(b, ST_PRIM_GET, j, ys)), a);
}

/* (a, i) => step(a, c * C + i): what a work-item folds its chunk c with */
static const st_node *chunk_fold(st_build *b, const st_node *op, const st_type *acc_t, const st_node *c,
                                 const st_node *chunk, const st_node *k, const st_node *ys) {
    const st_node *a = st_b_var(b, "a", acc_t), *i = st_b_var(b, "i", st_type_scalar(b->cx, ST_I64));
    const st_node *j = st_b_binop(b, ST_OP_ADD, st_b_binop(b, ST_OP_MUL, c, chunk), i);
    return ST_LAMBDA(b, step(b, op, a, j, k, ys), a, i);
}

/* z with every literal in it converted to its own type, i32(0): a fold
 * over indices has an accumulator of another type than its elements, and a
 * bare literal read back would take the elements' type. */
static const st_node *pinned(st_build *b, const st_node *z) {
    if (!z) return NULL;
    if (z->kind == ST_NODE_LIT) {
        st_err e = {0};
        return st_b_check(b, st_conv(b->cx, z->type->scalar, z, &e), &e);
    }
    if (z->kind != ST_NODE_TUPLE) return z;
    const st_node *items[ST_MAX_KIDS];
    for (uint32_t i = 0; i < z->nkids; i++) items[i] = pinned(b, z->kids[i]);
    return st_b_tuple_n(b, z->nkids, items);
}

/* The map e with its function's body replaced by body. */
static const st_node *with_body(st_build *b, const st_node *e, const st_node *body) {
    if (!body) return NULL;
    const st_node *f = e->kids[0];
    st_err inner = {0};
    const st_node *g = st_b_check(b, st_replace_kid(b->cx, f, f->nkids - 1, body, &inner), &inner);
    return ST_PRIM(b, ST_PRIM_MAP, g, e->kids[1]);
}

static const st_node *segmented_scan(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    if (!st_is_prim(e, ST_PRIM_MAP))
        return st_no_match(why, "segmented-scan rewrites a map whose function scans each element");
    const st_node *f = e->kids[0];
    st_scan_form p;
    if (f->kind != ST_NODE_LAMBDA || !st_scan_form_of(st_lambda_body(f), &p))
        return st_no_match(why, "segmented-scan rewrites a map whose function scans each element");
    /* a row per work-group is a kernel's shape: inside a map the rows are one work-item's */
    if (!st_at_top_level(rw, "segmented-scan", "map", why) || !st_takes_seed("segmented-scan", "row's scan", st_lambda_body(f), why))
        return NULL;
    int64_t wg = args[0];
    st_ctx *cx = st_rw_ctx(rw);
    const st_size *n = p.xs->type->size;
    int64_t known;
    if (st_size_is_const(n, &known) && known < wg)
        return st_reject(why, "segmented-scan: the rows have %lld elements, fewer than WG = %lld work-items; "
                       "one work-item scans such a row better", (long long)known, (long long)wg), NULL;
    st_err serr = {0};
    const st_size *w = st_size_const(cx, wg);
    const st_size *chunk_size = st_size_div(cx, st_size_add(cx, n, st_size_const(cx, wg - 1), &serr), w, &serr);
    if (!chunk_size) return *why = serr, NULL;
    st_build B = st_build_of(rw, why), *b = &B;
    const st_type *i64 = st_type_scalar(cx, ST_I64), *acc_t = p.z->type;
    p.z = pinned(b, p.z);

    /* the row, computed once where it is not there already */
    bool bind = !st_is_view(p.xs, false);
    const st_node *ys = bind ? st_b_bound(b, "ys", p.xs) : p.xs;
    /* C as a value built here: a size's own text has literals of i32 */
    const st_node *k = st_b_size_value(b, n);
    const st_node *chunk = st_b_binop(b, ST_OP_DIV, st_b_binop(b, ST_OP_ADD, k, st_b_i64(b, wg - 1)), st_b_i64(b, wg));
    const st_node *lanes = ST_PRIM(b, ST_PRIM_IOTA, st_b_count(b, wg));
    const st_node *chunk_iota = ST_PRIM(b, ST_PRIM_IOTA, st_b_size(b, chunk_size));

    const st_node *c1 = st_b_var(b, "c", i64);
    const st_node *stepper = p.fold ? p.fold : p.op; /* what folds one element in */
    const st_node *sums_v = ST_PRIM(b, ST_PRIM_MAP,
                                 ST_LAMBDA(b, ST_PRIM(b, ST_PRIM_REDUCE_SEQ, chunk_fold(b, stepper, acc_t, c1, chunk, k, ys),
                                                      p.z, chunk_iota), c1),
                                 lanes);
    const st_node *sums = st_b_bound(b, "sums", sums_v);
    const st_node *prefixes_v = ST_PRIM(b, ST_PRIM_SCAN_SEQ, p.op, p.z, sums);
    const st_node *prefixes = st_b_bound(b, "prefixes", prefixes_v);

    const st_node *c2 = st_b_var(b, "c", i64);
    const st_node *before = st_b_if(b, st_b_binop(b, ST_OP_EQ, c2, st_b_i64(b, 0)), p.z,
                                    ST_PRIM(b, ST_PRIM_GET, st_b_binop(b, ST_OP_SUB, c2, st_b_i64(b, 1)), prefixes));
    const st_node *scanned_v = ST_PRIM(b, ST_PRIM_MAP,
                                    ST_LAMBDA(b, ST_PRIM(b, ST_PRIM_SCAN_SEQ, chunk_fold(b, stepper, acc_t, c2, chunk, k, ys),
                                                         before, chunk_iota), c2),
                                    lanes);
    const st_node *scanned = st_b_bound(b, "scanned", scanned_v);
    const st_node *j = st_b_var(b, "j", i64);
    const st_node *acc = ST_PRIM(b, ST_PRIM_GET, j, ST_PRIM(b, ST_PRIM_JOIN, scanned));
    const st_node *item = p.post ? ST_CALL(b, p.post, acc, ST_PRIM(b, ST_PRIM_GET, j, ys)) : acc;
    const st_node *out = ST_PRIM(b, ST_PRIM_MAP, ST_LAMBDA(b, item, j), ST_PRIM(b, ST_PRIM_IOTA, st_b_size(b, n)));
    const st_node *body = st_b_let(b, sums, sums_v, st_b_let(b, prefixes, prefixes_v, st_b_let(b, scanned, scanned_v, out)));
    if (bind) body = st_b_let(b, ys, p.xs, body);
    if (!body) return NULL;

    return with_body(b, e, body);
}

/* ---- segmented-histogram(WG) ---- */

/* `xss |> map(… => reduce_by_index(dest, op, z, is, vs))`, a histogram per
 * segment, is one work-item's loop per segment when lowered as it is.
 * segmented-histogram(WG) gives each segment a work-group: each of WG
 * work-items makes a subhistogram of its chunk of C = ⌈N/WG⌉ indices (an
 * index past the segment's end is made one out of bounds, which
 * reduce_by_index ignores), then the group folds bucket h of every
 * subhistogram into dest[h], in order:
 *
 *   let subs = iota(WG) |> map(c =>
 *     reduce_by_index(replicate(H, z), op, z,
 *                     iota(C) |> map(i => let j = c * C + i in if j < N then is |> get(j) else -1),
 *                     iota(C) |> map(i => let j = c * C + i in if j < N then vs |> get(j) else z)))
 *   in iota(H) |> map(h => iota(WG) |> reduceSeq((a, c) => op(a, subs |> get(c) |> get(h)), dest |> get(h)))
 *
 * The subhistograms take WG·H elements per segment (scratch when H is not
 * a constant), so it suits few buckets; op associative with neutral z. */

/* c * C + i, element i of chunk c */
static const st_node *chunk_index(st_build *b, const st_node *c, const st_node *chunk, const st_node *i) {
    return st_b_binop(b, ST_OP_ADD, st_b_binop(b, ST_OP_MUL, c, chunk), i);
}

/* iota(C) |> map(i => if c * C + i < n then xs |> get(c * C + i) else past): chunk c of xs */
static const st_node *chunk_of(st_build *b, const st_node *xs, const st_node *c, const st_node *chunk,
                               const st_node *chunk_iota, const st_node *n, const st_node *past) {
    const st_node *i = st_b_var(b, "i", st_type_scalar(b->cx, ST_I64));
    const st_node *j = chunk_index(b, c, chunk, i);
    const st_node *item = st_b_if(b, st_b_binop(b, ST_OP_LT, j, n), ST_PRIM(b, ST_PRIM_GET, j, xs), past);
    return ST_PRIM(b, ST_PRIM_MAP, ST_LAMBDA(b, item, i), chunk_iota);
}

/* e itself where it is a view, else a fresh variable for a let to bind */
static const st_node *once(st_build *b, const char *base, const st_node *e) {
    return e && st_is_view(e, false) ? e : st_b_bound(b, base, e);
}

static const st_node *segmented_histogram(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    const char *shape = "segmented-histogram rewrites a map whose function is a reduce_by_index of each element";
    if (!st_is_prim(e, ST_PRIM_MAP)) return st_no_match(why, "%s", shape);
    const st_node *f = e->kids[0];
    const st_node *h = f->kind == ST_NODE_LAMBDA ? st_lambda_body(f) : NULL;
    if (!st_is_prim(h, ST_PRIM_REDUCE_BY_INDEX) || h->nkids != 5) return st_no_match(why, "%s", shape);
    if (!st_at_top_level(rw, "segmented-histogram", "map", why)) return NULL;
    /* each chunk starts from z, where the meaning reads none: the neutral
     * element where strata knows it */
    if (!(h = st_seed_taken_out(st_rw_ctx(rw), h, why))) return NULL;
    int64_t wg = args[0];
    st_ctx *cx = st_rw_ctx(rw);
    st_build B = st_build_of(rw, why), *b = &B;
    const st_type *i64 = st_type_scalar(cx, ST_I64);
    const st_node *op = h->kids[1], *z = pinned(b, h->kids[2]);
    const st_size *n = h->kids[3]->type->size, *buckets = h->kids[0]->type->size;
    const st_node *dest = once(b, "dest", h->kids[0]), *is = once(b, "is", h->kids[3]), *vs = once(b, "vs", h->kids[4]);

    const st_node *n_value = st_b_size_value(b, n);
    const st_node *chunk = st_b_binop(b, ST_OP_DIV, st_b_binop(b, ST_OP_ADD, n_value, st_b_i64(b, wg - 1)), st_b_i64(b, wg));
    st_err serr = {0};
    const st_size *chunk_size = st_size_div(cx, st_size_add(cx, n, st_size_const(cx, wg - 1), &serr), st_size_const(cx, wg), &serr);
    if (!chunk_size) return *why = serr, NULL;
    const st_node *chunk_iota = ST_PRIM(b, ST_PRIM_IOTA, st_b_size(b, chunk_size));
    /* past the end: an index out of bounds, of the indices' own type */
    st_err cerr = {0};
    const st_node *outside = st_b_check(b, st_conv(cx, h->kids[3]->type->elem->scalar, st_b_i64(b, -1), &cerr), &cerr);

    const st_node *c = st_b_var(b, "c", i64);
    const st_node *sub = ST_PRIM(b, ST_PRIM_REDUCE_BY_INDEX, ST_PRIM(b, ST_PRIM_REPLICATE, st_b_size(b, buckets), z), op, z,
                                 chunk_of(b, is, c, chunk, chunk_iota, n_value, outside),
                                 chunk_of(b, vs, c, chunk, chunk_iota, n_value, z));
    const st_node *subs_v = ST_PRIM(b, ST_PRIM_MAP, ST_LAMBDA(b, sub, c), ST_PRIM(b, ST_PRIM_IOTA, st_b_count(b, wg)));
    const st_node *subs = st_b_bound(b, "subs", subs_v);

    const st_node *bucket = st_b_var(b, "h", i64), *a = st_b_var(b, "a", z ? z->type : NULL), *lane = st_b_var(b, "c", i64);
    const st_node *merge = ST_LAMBDA(b, ST_CALL(b, op, a, ST_PRIM(b, ST_PRIM_GET, bucket, ST_PRIM(b, ST_PRIM_GET, lane, subs))),
                                     a, lane);
    const st_node *folded = ST_PRIM(b, ST_PRIM_REDUCE_SEQ, merge, ST_PRIM(b, ST_PRIM_GET, bucket, dest),
                                    ST_PRIM(b, ST_PRIM_IOTA, st_b_count(b, wg)));
    const st_node *out = ST_PRIM(b, ST_PRIM_MAP, ST_LAMBDA(b, folded, bucket), ST_PRIM(b, ST_PRIM_IOTA, st_b_size(b, buckets)));
    const st_node *body = st_b_let(b, subs, subs_v, out);
    if (vs != h->kids[4]) body = st_b_let(b, vs, h->kids[4], body);
    if (is != h->kids[3]) body = st_b_let(b, is, h->kids[3], body);
    if (dest != h->kids[0]) body = st_b_let(b, dest, h->kids[0], body);
    return with_body(b, e, body);
}

static const st_rule rule_segmented_scan = {
    .name = "segmented-scan",
    .summary = "a map that scans each row, one row per work-group: each of WG work-items folds a chunk of the row, "
               "one scans the totals, each scans its chunk from the totals before it (any row length)",
    .conditions = "a map at the top level of a def (the body of a top-level loop over arrays counts) whose function's body is a scan, of any form, of rows not known to be shorter than WG; op "
                  "associative with neutral z, as every parallel scan",
    .origin = "built-in",
    .nparams = 1,
    .params = {{.name = "WG", .doc = "work-items per row (the work-group's width)", .min = 1, .max = 1024}},
    .apply = segmented_scan,
};

static const st_rule rule_segmented_histogram = {
    .name = "segmented-histogram",
    .summary = "a map that makes a histogram of each row, one row per work-group: each of WG work-items makes a "
               "subhistogram of a chunk of the row, the group folds them bucket by bucket into the destination",
    .conditions = "a map at the top level of a def (the body of a top-level loop over arrays counts) whose function's body is a reduce_by_index; op associative with neutral z; WG·H elements "
                  "of subhistograms per row, so few buckets",
    .origin = "built-in",
    .nparams = 1,
    .params = {{.name = "WG", .doc = "work-items per row (the work-group's width)", .min = 1, .max = 1024}},
    .apply = segmented_histogram,
};

bool st_register_segmented_rules(st_registry *r, st_err *err) {
    return st_registry_add(r, &rule_segmented_scan, err) && st_registry_add(r, &rule_segmented_histogram, err);
}
