/* ir/prim_layout.c — the typing rules of the primitives that make an array
 * or see one another way, doing no work per element: split, join, zip,
 * unzip, transpose, iota, replicate and scratch, get, and the address-space
 * annotations. */
#include "prim.h"

const st_node *st_type_split(st_ctx *cx, st_prim p, uint32_t n, const st_node *const *a, const st_type **out,
                             st_err *err) {
    (void)n;
    const st_size *k = st_length_arg(cx, p, a[0], 0, err);
    if (!k) return NULL;
    int64_t kv;
    if (st_size_is_const(k, &kv) && kv == 0) return st_fail_arg(err, 0, "split(0) makes no chunks; the chunk size must be positive");
    if (a[1]->type->kind != ST_TYPE_ARRAY) return st_need_array(a[1], p, 1, "an array", err);
    const st_size *len = a[1]->type->size;
    if (!st_size_divides(k, len)) {
        st_tname ks = st_size_text(k), ls = st_size_text(len);
        return st_fail_arg(err, 1, "split(%s) needs a length that is a multiple of %s, but the array has length %s%s",
                           ks.s, ks.s, ls.s,
                           st_size_is_const(len, NULL) ? "" : "; state it with `where … % … == 0`, or pad the array");
    }
    const st_size *outer = st_size_div(cx, len, k, err);
    if (!outer) return NULL;
    *out = st_type_array(cx, outer, st_type_array(cx, k, a[1]->type->elem));
    return a[0];
}

const st_node *st_type_join(st_ctx *cx, st_prim p, uint32_t n, const st_node *const *a, const st_type **out,
                            st_err *err) {
    (void)n;
    const st_type *t = a[0]->type;
    if (t->kind != ST_TYPE_ARRAY || t->elem->kind != ST_TYPE_ARRAY)
        return st_need_array(a[0], p, 0, "an array of arrays", err);
    const st_size *len = st_size_mul(cx, t->size, t->elem->size, err);
    if (!len) return NULL;
    *out = st_type_array(cx, len, t->elem->elem);
    return a[0];
}

const st_node *st_type_zip(st_ctx *cx, st_prim p, uint32_t n, const st_node *const *a, const st_type **out,
                           st_err *err) {
    const st_type *items[ST_MAX_KIDS];
    for (uint32_t i = 0; i < n; i++) {
        if (a[i]->type->kind != ST_TYPE_ARRAY) return st_need_array(a[i], p, (int)i, "arrays", err);
        if (a[i]->type->size != a[0]->type->size)
            return st_fail_arg(err, (int)i, "zip needs arrays of one length, but %s and %s differ in length",
                               st_type_text(a[0]->type).s, st_type_text(a[i]->type).s);
        items[i] = a[i]->type->elem;
    }
    *out = st_type_array(cx, a[0]->type->size, st_type_tuple(cx, n, items));
    return a[0];
}

const st_node *st_type_unzip(st_ctx *cx, st_prim p, uint32_t n, const st_node *const *a, const st_type **out,
                             st_err *err) {
    (void)n;
    const st_type *t = a[0]->type;
    if (t->kind != ST_TYPE_ARRAY || t->elem->kind != ST_TYPE_TUPLE)
        return st_need_array(a[0], p, 0, "an array of tuples", err);
    const st_type *items[ST_MAX_KIDS];
    for (uint32_t i = 0; i < t->elem->n; i++) items[i] = st_type_array(cx, t->size, t->elem->items[i]);
    *out = st_type_tuple(cx, t->elem->n, items);
    return a[0];
}

const st_node *st_type_iota(st_ctx *cx, st_prim p, uint32_t n, const st_node *const *a, const st_type **out,
                            st_err *err) {
    (void)n;
    const st_size *len = st_length_arg(cx, p, a[0], 0, err);
    if (!len) return NULL;
    *out = st_type_array(cx, len, st_type_scalar(cx, ST_I64));
    return a[0];
}

/* replicate(n, x) and scratch(n, x) */
const st_node *st_type_replicate(st_ctx *cx, st_prim p, uint32_t n, const st_node *const *a, const st_type **out,
                                 st_err *err) {
    (void)n;
    const st_size *len = st_length_arg(cx, p, a[0], 0, err);
    if (!len) return NULL;
    *out = st_type_array(cx, len, a[1]->type);
    return a[0];
}

const st_node *st_type_transpose(st_ctx *cx, st_prim p, uint32_t n, const st_node *const *a, const st_type **out,
                                 st_err *err) {
    (void)n;
    const st_type *t = a[0]->type;
    if (t->kind != ST_TYPE_ARRAY || t->elem->kind != ST_TYPE_ARRAY)
        return st_need_array(a[0], p, 0, "an array of arrays", err);
    *out = st_type_array(cx, t->elem->size, st_type_array(cx, t->size, t->elem->elem));
    return a[0];
}

const st_node *st_type_get(st_ctx *cx, st_prim p, uint32_t n, const st_node *const *a, const st_type **out,
                           st_err *err) {
    (void)cx, (void)n;
    if (!st_type_is_int(a[0]->type))
        return st_fail_arg(err, 0, "get's index must be an integer, but it has type %s", st_type_text(a[0]->type).s);
    if (a[1]->type->kind != ST_TYPE_ARRAY) return st_need_array(a[1], p, 1, "an array", err);
    *out = a[1]->type->elem;
    return a[0];
}

/* toGlobal, toLocal, toPrivate: the value itself */
const st_node *st_type_placed(st_ctx *cx, st_prim p, uint32_t n, const st_node *const *a, const st_type **out,
                              st_err *err) {
    (void)cx, (void)p, (void)n, (void)err;
    *out = a[0]->type;
    return a[0];
}
