/* ir/prim_sorts.c — the typing rules of the primitives that reorder an
 * array by a key: partition_by (a stable multi-way split), sort and
 * sort_by_key. */
#include "prim.h"

/* A number: what sort orders (a bool has no order worth a radix sort). */
static bool sortable(const st_type *t) { return t->kind == ST_TYPE_SCALAR && t->scalar != ST_BOOL; }

/* partition_by(k, f, xs): k a literal number of buckets, f an element's
 * bucket (any integer type), ([n]t, [k]i64). */
const st_node *st_type_partition_by(st_ctx *cx, st_prim p, uint32_t n, const st_node *const *a, const st_type **out,
                                    st_err *err) {
    (void)n;
    const st_size *k = st_length_arg(cx, p, a[0], 0, err);
    if (!k) return NULL;
    int64_t buckets;
    if (!st_size_is_const(k, &buckets) || buckets < 1 || buckets > ST_PARTITION_BY_MAX_BUCKETS)
        return st_fail_arg(err, 0, "%s's count of buckets k must be a literal from 1 to %d", st_prim_name(p),
                           ST_PARTITION_BY_MAX_BUCKETS);
    const st_type *t = a[2]->type, *params[1];
    if (t->kind != ST_TYPE_ARRAY) return st_need_array(a[2], p, 2, "an array", err);
    params[0] = t->elem;
    if (!st_fun_takes(a[1]->type, params, 1)) return st_fun_mismatch(a[1], p, 1, params, 1, err);
    if (!st_type_is_int(a[1]->type->elem))
        return st_fail_arg(err, 1, "%s's function gives an element's bucket, an integer from 0 to k - 1, but it "
                                   "returns %s", st_prim_name(p), st_type_text(a[1]->type->elem).s);
    const st_type *items[2] = {t, st_type_array(cx, k, st_type_scalar(cx, ST_I64))};
    *out = st_type_tuple(cx, 2, items);
    return a[2];
}

/* sort(xs): [n]t -> [n]t, t a number. */
const st_node *st_type_sort(st_ctx *cx, st_prim p, uint32_t n, const st_node *const *a, const st_type **out,
                            st_err *err) {
    (void)cx, (void)n;
    const st_type *t = a[0]->type;
    if (t->kind != ST_TYPE_ARRAY || !sortable(t->elem))
        return st_need_array(a[0], p, 0, "an array of numbers (integers or floats)", err);
    *out = t;
    return a[0];
}

/* sort_by_key(ks, vs): [n]k, [n]v -> ([n]k, [n]v), k a number. */
const st_node *st_type_sort_by_key(st_ctx *cx, st_prim p, uint32_t n, const st_node *const *a, const st_type **out,
                                   st_err *err) {
    (void)n;
    const st_type *ks = a[0]->type, *vs = a[1]->type;
    if (ks->kind != ST_TYPE_ARRAY || !sortable(ks->elem))
        return st_need_array(a[0], p, 0, "keys that are an array of numbers (integers or floats)", err);
    if (vs->kind != ST_TYPE_ARRAY) return st_need_array(a[1], p, 1, "values that are an array", err);
    if (vs->size != ks->size)
        return st_fail_arg(err, 1, "%s needs as many values as keys, but %s and %s differ in length", st_prim_name(p),
                           st_type_text(ks).s, st_type_text(vs).s);
    const st_type *items[2] = {ks, vs};
    *out = st_type_tuple(cx, 2, items);
    return a[0];
}
