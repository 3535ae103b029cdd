/* ir/prim_cuts.c — the typing rules of the primitives whose lengths may be
 * known only at run time: filter, partition, take, drop, concat. */
#include "prim.h"

/* filter and partition: p: t -> bool over xs: [n]t; the length kept is an
 * existential made from (p, xs), so filter(p, xs) and partition(p, xs).0
 * have one length. */
const st_node *st_type_filter(st_ctx *cx, st_prim p, uint32_t n, const st_node *const *a, const st_type **out,
                              st_err *err) {
    (void)n;
    const st_type *t = a[1]->type, *params[1];
    if (t->kind != ST_TYPE_ARRAY) return st_need_array(a[1], p, 1, "an array", err);
    params[0] = t->elem;
    if (!st_fun_takes(a[0]->type, params, 1)) return st_fun_mismatch(a[0], p, 0, params, 1, err);
    if (!st_type_is_scalar(a[0]->type->elem, ST_BOOL))
        return st_fail_arg(err, 0, "%s's predicate must return bool, but it returns %s", st_prim_name(p),
                           st_type_text(a[0]->type->elem).s);
    const st_size *k = st_size_exist(cx, a[0], a[1], t->size, "k", err);
    const st_size *rest = k ? st_size_sub(cx, t->size, k, err) : NULL;
    if (!rest) return NULL;
    const st_type *kept = st_type_array(cx, k, t->elem);
    if (p == ST_PRIM_FILTER) {
        *out = kept;
    } else {
        const st_type *items[2] = {kept, st_type_array(cx, rest, t->elem)};
        *out = st_type_tuple(cx, 2, items);
    }
    return a[0];
}

/* take(k, xs) and drop(k, xs): k an i64 standing for the size it denotes,
 * or else for an existential made from (k, n); 0 <= k <= n is checked at
 * run time. */
const st_node *st_type_take(st_ctx *cx, st_prim p, uint32_t n, const st_node *const *a, const st_type **out,
                            st_err *err) {
    (void)n;
    if (!st_type_is_scalar(a[0]->type, ST_I64))
        return st_fail_arg(err, 0, "%s's count must be an i64, but it has type %s", st_prim_name(p), st_type_text(a[0]->type).s);
    const st_type *t = a[1]->type;
    if (t->kind != ST_TYPE_ARRAY) return st_need_array(a[1], p, 1, "an array", err);
    const st_size *k = st_node_as_size(cx, a[0], NULL);
    int64_t v;
    if (k && st_size_is_const(k, &v) && v < 0)
        return st_fail_arg(err, 0, "%s's count is negative (%lld)", st_prim_name(p), (long long)v);
    if (!k && a[0]->kind == ST_NODE_VAR) k = st_size_exist_named(cx, a[0], t->size, t->size, a[0]->u.name, err);
    else if (!k) k = st_size_exist(cx, a[0], t->size, t->size, "k", err);
    const st_size *len = !k ? NULL : p == ST_PRIM_TAKE ? k : st_size_sub(cx, t->size, k, err);
    if (!len) return NULL;
    *out = st_type_array(cx, len, t->elem);
    return a[0];
}

const st_node *st_type_concat(st_ctx *cx, st_prim p, uint32_t n, const st_node *const *a, const st_type **out,
                              st_err *err) {
    (void)n;
    for (int i = 0; i < 2; i++)
        if (a[i]->type->kind != ST_TYPE_ARRAY) return st_need_array(a[i], p, i, "arrays", err);
    if (a[0]->type->elem != a[1]->type->elem)
        return st_fail_arg(err, 1, "concat needs arrays of one element type, but they are %s and %s",
                           st_type_text(a[0]->type).s, st_type_text(a[1]->type).s);
    const st_size *len = st_size_add(cx, a[0]->type->size, a[1]->type->size, err);
    if (!len) return NULL;
    *out = st_type_array(cx, len, a[0]->type->elem);
    return a[0];
}
