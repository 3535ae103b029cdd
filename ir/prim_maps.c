/* ir/prim_maps.c — the typing rules of the primitives that apply a function
 * to each element or to a state: the maps (map and its lowered forms),
 * iterate, and the two loops. */
#include "prim.h"

/* map(f, xs), mapSeq, mapGlb, mapWrg, mapLcl: f: t -> u over [n]t. */
const st_node *st_type_map(st_ctx *cx, st_prim p, uint32_t n, const st_node *const *a, const st_type **out,
                           st_err *err) {
    (void)n;
    if (a[1]->type->kind != ST_TYPE_ARRAY) return st_need_array(a[1], p, 1, "an array", err);
    const st_type *params[1] = {a[1]->type->elem};
    if (!st_fun_takes(a[0]->type, params, 1)) return st_fun_mismatch(a[0], p, 0, params, 1, err);
    *out = st_type_array(cx, a[1]->type->size, a[0]->type->elem);
    return a[0];
}

const st_node *st_type_iterate(st_ctx *cx, st_prim p, uint32_t n, const st_node *const *a, const st_type **out,
                               st_err *err) {
    (void)cx, (void)p, (void)n;
    if (!st_type_is_int(a[0]->type))
        return st_fail_arg(err, 0, "iterate's count must be an integer, but it has type %s", st_type_text(a[0]->type).s);
    const st_type *params[1] = {a[2]->type};
    if (!st_fun_takes(a[1]->type, params, 1) || a[1]->type->elem != a[2]->type)
        return st_fail_arg(err, 1, "iterate's function must take and return %s", st_type_text(a[2]->type).s);
    *out = a[2]->type;
    return a[0];
}

const st_node *st_type_loop(st_ctx *cx, st_prim p, uint32_t n, const st_node *const *a, const st_type **out,
                            st_err *err) {
    (void)p, (void)n;
    if (!st_type_is_scalar(a[0]->type, ST_I64))
        return st_fail_arg(err, 0, "a loop's count must be an i64, but it has type %s", st_type_text(a[0]->type).s);
    const st_type *params[2] = {st_type_scalar(cx, ST_I64), a[2]->type};
    if (!st_fun_takes(a[1]->type, params, 2) || a[1]->type->elem != a[2]->type)
        return st_fail_arg(err, 1, "a loop's body must take (i64, %s) and return %s", st_type_text(a[2]->type).s,
                           st_type_text(a[2]->type).s);
    *out = a[2]->type;
    return a[0];
}

const st_node *st_type_while(st_ctx *cx, st_prim p, uint32_t n, const st_node *const *a, const st_type **out,
                             st_err *err) {
    (void)cx, (void)p, (void)n;
    const st_type *params[1] = {a[2]->type};
    if (!st_fun_takes(a[0]->type, params, 1) || !st_type_is_scalar(a[0]->type->elem, ST_BOOL))
        return st_fail_arg(err, 0, "a while loop's condition must take %s and return bool", st_type_text(a[2]->type).s);
    if (!st_fun_takes(a[1]->type, params, 1) || a[1]->type->elem != a[2]->type)
        return st_fail_arg(err, 1, "a while loop's body must take and return %s", st_type_text(a[2]->type).s);
    *out = a[2]->type;
    return a[1];
}
