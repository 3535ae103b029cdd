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

static bool is_prim(const st_node *n, st_prim p) { return n && n->kind == ST_NODE_PRIM && n->u.prim == p; }

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
    const st_node *items[64];
    if (z->nkids > 64) return z;
    for (uint32_t i = 0; i < z->nkids; i++) items[i] = pinned(b, z->kids[i]);
    return st_b_tuple_n(b, z->nkids, items);
}

static const st_node *segmented_scan(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    if (!is_prim(e, ST_PRIM_MAP))
        return st_no_match(why, "%s", "segmented-scan rewrites a map whose function scans each element");
    const st_node *f = e->kids[0];
    st_scan_form p;
    if (f->kind != ST_NODE_LAMBDA || !st_scan_form_of(st_lambda_body(f), &p))
        return st_no_match(why, "%s", "segmented-scan rewrites a map whose function scans each element");
    int64_t wg = args[0];
    st_ctx *cx = st_rw_ctx(rw);
    const st_size *n = p.xs->type->size;
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

    /* the same function, its body the segmented scan */
    const st_node *kids[64];
    if (f->nkids > 64) return st_fail_internal(why, "a lambda with more than 64 parameters"), NULL;
    for (uint32_t i = 0; i < f->nkids; i++) kids[i] = f->kids[i];
    kids[f->nkids - 1] = body;
    st_err inner = {0};
    const st_node *g = st_b_check(b, st_rebuild(cx, f, kids, &inner), &inner);
    return ST_PRIM(b, ST_PRIM_MAP, g, e->kids[1]);
}

static const st_rule rule_segmented_scan = {
    .name = "segmented-scan",
    .summary = "a map that scans each row, one row per work-group: each of WG work-items folds a chunk of the row, "
               "one scans the totals, each scans its chunk from the totals before it (any row length)",
    .conditions = "a map whose function's body is a scan, of any form; op associative with neutral z, as every "
                  "parallel scan",
    .origin = "built-in",
    .nparams = 1,
    .params = {{.name = "WG", .doc = "work-items per row (the work-group's width)", .min = 1, .max = 1024}},
    .apply = segmented_scan,
};

bool st_register_segmented_rules(st_registry *r, st_err *err) { return st_registry_add(r, &rule_segmented_scan, err); }
