/* ir/prim_check.c — what every primitive's typing rule shares: the checks
 * before the rule (arity, values where values go), the expectations that
 * type a function argument from the rest (st_prim_expect), and the helpers
 * the rules in ir/prim_*.c write their messages with. */
#include "prim.h"

#include <stdio.h>
#include <string.h>

const char *st_prim_name(st_prim p) { return st_prim_get(p)->name; }

bool st_fun_takes(const st_type *f, const st_type *const *params, int np) {
    if (f->kind != ST_TYPE_FUN) return false;
    if ((int)f->n == np) {
        for (int i = 0; i < np; i++)
            if (f->items[i] != params[i]) return false;
        return true;
    }
    if (np == 1 && params[0]->kind == ST_TYPE_TUPLE && params[0]->n == f->n && f->n > 1) {
        for (uint32_t i = 0; i < f->n; i++)
            if (f->items[i] != params[0]->items[i]) return false;
        return true;
    }
    return false;
}

const st_node *st_fun_mismatch(const st_node *f, st_prim p, int arg, const st_type *const *params, int np,
                               st_err *err) {
    char want[400] = "";
    size_t len = 0;
    for (int i = 0; i < np; i++)
        len += (size_t)snprintf(want + len, sizeof want - len, "%s%s", i ? ", " : "", st_type_text(params[i]).s);
    if (f->type->kind != ST_TYPE_FUN)
        return st_fail_arg(err, arg, "%s expects a function here (a lambda like `x => x + 1` or an operator like `+`), not a value of type %s",
                           st_prim_name(p), st_type_text(f->type).s);
    return st_fail_arg(err, arg, "%s's function should take (%s), but it takes %s", st_prim_name(p), want,
                       st_type_text(f->type).s);
}

const st_node *st_need_array(const st_node *a, st_prim p, int arg, const char *what, st_err *err) {
    return st_fail_arg(err, arg, "%s needs %s, but this has type %s", st_prim_name(p), what, st_type_text(a->type).s);
}

const st_size *st_length_arg(st_ctx *cx, st_prim p, const st_node *n, int arg, st_err *err) {
    if (!st_type_is_int(n->type)) {
        st_fail_arg(err, arg, "the length given to %s must be an integer, but it has type %s", st_prim_name(p),
                    st_type_text(n->type).s);
        return NULL;
    }
    st_err inner = {0};
    const st_size *s = st_node_as_size(cx, n, &inner);
    if (!s) {
        if (inner.message[0]) st_fail_arg(err, arg, "%s", inner.message);
        else st_fail_arg(err, arg, "the length given to %s must be a size: a literal, a size variable, an integer parameter, or arithmetic on them", st_prim_name(p));
        return NULL;
    }
    int64_t v;
    if (st_size_is_const(s, &v) && v < 0) {
        st_fail_arg(err, arg, "the length given to %s is negative (%lld)", st_prim_name(p), (long long)v);
        return NULL;
    }
    return s;
}

/* scan(op, fold, z, xs), scan(op, fold, post, z, xs), reduce(op, fold, z, xs):
 * the accumulator's type is the neutral element's, free of the elements'. */
static bool folding_form(st_prim p, uint32_t nargs) {
    return st_prim_desc_of(p)->funs == ST_FUNS_SCAN && nargs >= 4;
}

bool st_prim_expect(st_ctx *cx, st_prim p, int arg, const st_type *const *types, int ntypes,
                    const st_type **params, int *nparams, const st_type **result, st_err *err) {
    uint32_t skip;
    st_prim base = st_prim_after_sizes(p, &skip);
    if (skip) { /* the other primitive's, after the sizes */
        bool ok = ntypes > (int)skip && st_prim_expect(cx, base, arg - (int)skip, types + skip, ntypes - (int)skip,
                                                      params, nparams, result, err);
        if (!ok && err && err->arg >= 0) err->arg += (int)skip;
        return ok;
    }
    const st_prim_desc *desc = st_prim_desc_of(p);
    uint32_t n = (uint32_t)ntypes;
    int data = st_prim_data_arg(p, n);
    *result = NULL;
    if (data < 0 || data >= ntypes || !types[data])
        return st_fail_arg(err, arg, "internal: %s argument %d typed out of order", st_prim_name(p), arg), false;
    const st_type *d = types[data];
    if (desc->funs == ST_FUNS_STATE || desc->funs == ST_FUNS_WHILE) {
        params[0] = *result = d;
        *nparams = 1;
        if (desc->funs == ST_FUNS_WHILE && arg == 0) *result = st_type_scalar(cx, ST_BOOL); /* the condition */
        return true;
    }
    if (desc->funs == ST_FUNS_COUNTED) { /* (i, acc) */
        params[0] = st_type_scalar(cx, ST_I64);
        params[1] = *result = d;
        *nparams = 2;
        return true;
    }
    if (d->kind != ST_TYPE_ARRAY)
        return st_fail_arg(err, data, "%s needs an array, but this has type %s", st_prim_name(p), st_type_text(d).s), false;
    const st_type *e = d->elem;
    if (desc->innermost) {
        if (e->kind != ST_TYPE_ARRAY)
            return st_fail_arg(err, data, "%s needs a destination of two dimensions, [n][m]t, but this has type %s",
                               st_prim_name(p), st_type_text(d).s), false;
        e = e->elem;
    }
    bool folding = folding_form(p, n);
    if (st_prim_arg_role(p, arg, n) == ST_ARG_NEUTRAL) {
        params[0] = folding ? NULL : e;
        *nparams = 0;
        return true;
    }
    /* the accumulator: the neutral element's type where it is free */
    const st_type *acc = e;
    if (folding || desc->funs == ST_FUNS_SEQ_FOLD) {
        acc = types[n - 2];
        if (!acc) return st_fail_arg(err, arg, "internal: %s's neutral element typed after its functions", st_prim_name(p)), false;
    }
    switch (desc->funs) {
    case ST_FUNS_ELEMENT:
        params[0] = e;
        *nparams = 1;
        return true;
    case ST_FUNS_PREDICATE:
        params[0] = e;
        *nparams = 1;
        *result = st_type_scalar(cx, ST_BOOL);
        return true;
    case ST_FUNS_SEQ_FOLD:
        params[0] = *result = acc;
        params[1] = e;
        *nparams = 2;
        return true;
    case ST_FUNS_SCAN:
        params[0] = acc;
        params[1] = arg == 0 ? acc : e; /* the operator combines accumulators; fold and post take elements */
        *result = arg == 2 ? NULL : acc;
        *nparams = 2;
        return true;
    default:
        params[0] = params[1] = *result = e;
        *nparams = 2;
        return true;
    }
}

const st_node *st_prim_check(st_ctx *cx, st_prim p, uint32_t n, const st_node *const *a, const st_type **out,
                             st_err *err) {
    const st_prim_desc *desc = st_prim_desc_of(p);
    if (!st_prim_takes(p, n)) {
        char arity[48];
        st_prim_describe_arity(p, arity, sizeof arity);
        return st_fail_arg(err, -1, "%s takes %s argument%s, but was given %u", desc->info.name, arity,
                           strcmp(arity, "1") ? "s" : "", n);
    }
    for (uint32_t i = 0; i < n; i++) {
        bool fun = st_prim_arg_role(p, (int)i, n) == ST_ARG_FUN;
        if (!fun && a[i]->type->kind == ST_TYPE_FUN)
            return st_fail_arg(err, (int)i, "%s expects a value here, not a function", desc->info.name);
    }
    if (!desc->type) return st_fail_arg(err, -1, "internal: no typing rule for %s", desc->info.name);
    return desc->type(cx, p, n, a, out, err);
}
