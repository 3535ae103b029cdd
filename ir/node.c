/* ir/node.c — node constructors and the typing rules.
 *
 * Every node is built here, typed from its parts, and hash-consed: a rewrite
 * that rebuilds an equal tree gets the same pointer back. A constructor whose
 * parts do not fit fails with a message and the index of the offending part,
 * which the type checker turns into a located error. */
#include "ctx.h"
#include "scalar_ops.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- messages ---- */

typedef struct { char s[160]; } tname;

static tname take(st_buf *b) {
    tname n = {{0}};
    snprintf(n.s, sizeof n.s, "%s", b->data ? b->data : "?");
    st_buf_free(b);
    return n;
}

static tname type_name(const st_type *t) {
    st_buf b = {0};
    st_type_print(t, &b);
    return take(&b);
}

static tname size_name(const st_size *s) {
    st_buf b = {0};
    st_size_print(s, &b);
    return take(&b);
}

__attribute__((format(printf, 3, 4))) static const st_node *fail_at(st_err *err, int arg,
                                                                    const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        st_vfail(err, (st_loc){0}, fmt, ap);
        va_end(ap);
        err->arg = arg;
    }
    return NULL;
}

/* ---- hash-consing ---- */

static uint32_t hash_node(const st_node *n) {
    uint32_t h = st_hash_mix(0x40du, n->kind);
    h = st_hash_ptr(h, n->type);
    h = st_hash_ptr(h, n->size);
    switch (n->kind) {
    case ST_NODE_LIT: h = st_hash_mix(h, n->u.lit.bits); break;
    case ST_NODE_VAR: h = st_hash_ptr(h, n->u.name); break;
    default: h = st_hash_mix(h, n->u.index); break; /* binop, unop, index, conv, prim */
    }
    for (uint32_t i = 0; i < n->nkids; i++) h = st_hash_ptr(h, n->kids[i]);
    return h;
}

bool st_same_payload(const st_node *x, const st_node *y) {
    switch (x->kind) {
    case ST_NODE_LIT: return x->u.lit.bits == y->u.lit.bits;
    case ST_NODE_VAR: return x->u.name == y->u.name;
    case ST_NODE_BINOP: case ST_NODE_OPFN: return x->u.binop == y->u.binop;
    case ST_NODE_UNOP: return x->u.unop == y->u.unop;
    case ST_NODE_PROJ: return x->u.index == y->u.index;
    case ST_NODE_CONV: return x->u.conv == y->u.conv;
    case ST_NODE_PRIM: return x->u.prim == y->u.prim;
    default: return true;
    }
}

static bool eq_node(const void *item, const void *key) {
    const st_node *x = item, *y = key;
    if (x->kind != y->kind || x->type != y->type || x->size != y->size ||
        x->nkids != y->nkids || !st_same_payload(x, y))
        return false;
    for (uint32_t i = 0; i < x->nkids; i++)
        if (x->kids[i] != y->kids[i]) return false;
    return true;
}


const char *st_node_not_own(const st_ctx *cx, const st_node *n) {
    uint32_t depth = 1;
    for (uint32_t i = 0; i < n->nkids; i++)
        if (n->kids[i]->depth >= depth) depth = n->kids[i]->depth + 1;
    uint32_t h = hash_node(n);
    if (h != n->hash || depth != n->depth)
        return "was changed after it was built (nodes are immutable: a rule makes new ones with the constructors)";
    const st_node *found = st_table_find(&cx->nodes, h, eq_node, n);
    if (found == n) return NULL;
    return found ? "is a copy of one of the context's nodes, not the node itself (nodes come only from the constructors, "
                   "which make each one once)"
                 : "was not made in the context of the rewrite (but in another context, or by hand)";
}

/* A node on the stack with room for its kids, to look up before allocating.
 * (A union may hold a struct with a flexible array member; a struct may not.) */
typedef union {
    st_node n;
    unsigned char room[sizeof(st_node) + ST_MAX_KIDS * sizeof(const st_node *)];
} probe_node;

static void *copy_node(st_ctx *cx, const void *p, uint32_t h) {
    const st_node *probe = p;
    st_node *n = st_ctx_copy(cx, probe, sizeof(st_node) + probe->nkids * sizeof(const st_node *));
    if (!n) return NULL;
    n->hash = h;
    n->depth = 1;
    for (uint32_t i = 0; i < n->nkids; i++)
        if (n->kids[i]->depth >= n->depth) n->depth = n->kids[i]->depth + 1;
    return n;
}

static const st_node *intern(st_ctx *cx, const st_node *probe, st_err *err) {
    if (!probe->type) return st_fail_internal(err, "out of memory while building a type"), NULL;
    const st_node *n = st_ctx_intern(cx, &cx->nodes, hash_node(probe), eq_node, probe, copy_node);
    return n ? n : (st_fail_internal(err, "out of memory while building a node"), NULL);
}

/* A probe with nkids kids, the first `given` of them from kids (a let or a
 * lambda adds its value and body after its variables). */
static probe_node make_some(st_node_kind kind, const st_type *type, uint32_t nkids, const st_node *const *kids,
                            uint32_t given) {
    probe_node p;
    memset(&p, 0, sizeof p);
    p.n.kind = kind;
    p.n.type = type;
    p.n.nkids = nkids;
    for (uint32_t i = 0; i < given && i < ST_MAX_KIDS; i++) p.n.kids[i] = kids[i];
    return p;
}

static probe_node make(st_node_kind kind, const st_type *type, uint32_t nkids, const st_node *const *kids) {
    return make_some(kind, type, nkids, kids, nkids);
}

static bool too_many(uint32_t n, st_err *err) {
    if (n <= ST_MAX_KIDS) return false;
    fail_at(err, -1, "too many parts (%u; at most %d)", n, ST_MAX_KIDS);
    return true;
}

/* ---- leaves ---- */

const st_node *st_lit(st_ctx *cx, st_scalar_kind k, st_scalar value) {
    /* keep only the bits of the kind, so equal literals hash alike */
    st_scalar v = {.bits = 0};
    st_scalar_store(k, &v, value);
    if (k == ST_BOOL) v.b = value.b;
    /* one NaN: the printer writes every NaN as `f32.nan` */
    if (k == ST_F32 && v.f32 != v.f32) v.f32 = __builtin_nanf("");
    if (k == ST_F64 && v.f64 != v.f64) v.f64 = __builtin_nan("");
    probe_node p = make(ST_NODE_LIT, st_type_scalar(cx, k), 0, NULL);
    p.n.u.lit = v;
    return intern(cx, &p.n, NULL);
}

const st_node *st_lit_int(st_ctx *cx, st_scalar_kind k, int64_t value) {
    st_scalar v = {.i64 = value};
    return st_lit(cx, k, st_scalar_convert(k, ST_I64, v));
}

const st_node *st_var(st_ctx *cx, const char *name, const st_type *type, const st_size *size) {
    probe_node p = make(ST_NODE_VAR, type, 0, NULL);
    p.n.u.name = name;
    p.n.size = size;
    return intern(cx, &p.n, NULL);
}

const st_node *st_let_var(st_ctx *cx, const char *name, const st_node *value) {
    const st_size *size = st_type_is_int(value->type) ? st_node_as_size(cx, value, NULL) : NULL;
    return st_var(cx, name, value->type, size);
}

/* ---- scalar expressions ---- */

static bool is_value_type(const st_type *t) { return t->kind != ST_TYPE_FUN; }

const st_node *st_tuple(st_ctx *cx, uint32_t n, const st_node *const *items, st_err *err) {
    if (too_many(n, err)) return NULL;
    if (n < 2) return fail_at(err, -1, "a tuple has at least two components");
    const st_type *types[ST_MAX_KIDS] = {0}; /* (GCC -O3 cannot see that none is read unset) */
    for (uint32_t i = 0; i < n; i++) {
        if (!is_value_type(items[i]->type)) return fail_at(err, (int)i, "a function cannot be part of a tuple");
        types[i] = items[i]->type;
    }
    probe_node p = make(ST_NODE_TUPLE, st_type_tuple(cx, n, types), n, items);
    return intern(cx, &p.n, err);
}

const st_node *st_proj(st_ctx *cx, const st_node *tuple, uint32_t index, st_err *err) {
    const st_type *t = tuple->type;
    if (t->kind != ST_TYPE_TUPLE)
        return fail_at(err, 0, "`.%u` needs a tuple, but this has type %s", index, type_name(t).s);
    if (index >= t->n)
        return fail_at(err, 0, "`.%u` is out of range: the tuple %s has %u components", index,
                       type_name(t).s, t->n);
    probe_node p = make(ST_NODE_PROJ, t->items[index], 1, &tuple);
    p.n.u.index = index;
    return intern(cx, &p.n, err);
}

const st_node *st_unary(st_ctx *cx, st_unop op, const st_node *a, st_err *err) {
    const st_type *t = a->type;
    if (op == ST_OP_NOT && !st_type_is_scalar(t, ST_BOOL))
        return fail_at(err, 0, "`!` needs a bool, but this has type %s", type_name(t).s);
    if (op == ST_OP_NEG && (t->kind != ST_TYPE_SCALAR || t->scalar == ST_BOOL))
        return fail_at(err, 0, "`-` needs a number, but this has type %s", type_name(t).s);
    if (op == ST_OP_ABS && (t->kind != ST_TYPE_SCALAR || t->scalar == ST_BOOL))
        return fail_at(err, 0, "abs needs a number, but this has type %s", type_name(t).s);
    bool test = st_unop_is_float_test(op);
    if ((st_unop_is_float_function(op) || test) && !(st_type_is_scalar(t, ST_F32) || st_type_is_scalar(t, ST_F64)))
        return fail_at(err, 0, "%s needs a float (f32 or f64), but this has type %s%s", st_unop_function(op),
                       type_name(t).s, t->kind == ST_TYPE_SCALAR ? ": convert it first, as f32(x)" : "");
    if (test) t = st_type_scalar(cx, ST_BOOL);
    /* a negated literal is a literal: the parser reads `-1` so, and the
     * printer could not tell the two apart */
    if (op == ST_OP_NEG && a->kind == ST_NODE_LIT)
        return st_lit(cx, t->scalar, st_scalar_unop(op, t->scalar, a->u.lit));
    probe_node p = make(ST_NODE_UNOP, t, 1, &a);
    p.n.u.unop = op;
    return intern(cx, &p.n, err);
}

static const char *binop_needs(st_binop op) {
    switch (op) {
    case ST_OP_AND: case ST_OP_OR: return "bools";
    case ST_OP_SHL: case ST_OP_SHR: return "integers";
    case ST_OP_BAND: case ST_OP_BOR: case ST_OP_BXOR: return "integers or bools";
    case ST_OP_EQ: case ST_OP_NE: return "scalars";
    case ST_OP_ATAN2: return "floats (f32 or f64)";
    default: return "numbers";
    }
}

const st_node *st_binary(st_ctx *cx, st_binop op, const st_node *a, const st_node *b,
                        st_err *err) {
    const st_type *ta = a->type, *tb = b->type;
    const char *name = st_binop_name(op);
    if (ta->kind != ST_TYPE_SCALAR || !st_binop_accepts(op, ta->scalar))
        return fail_at(err, 0, "`%s` needs %s, but its left operand has type %s", name,
                       binop_needs(op), type_name(ta).s);
    if (ta != tb)
        return fail_at(err, 1, "`%s` needs operands of one type, but they are %s and %s", name,
                       type_name(ta).s, type_name(tb).s);
    probe_node p = make(ST_NODE_BINOP, st_type_scalar(cx, st_binop_result(op, ta->scalar)), 2,
                        (const st_node *[]){a, b});
    p.n.u.binop = op;
    return intern(cx, &p.n, err);
}

const st_node *st_conv(st_ctx *cx, st_scalar_kind to, const st_node *a, st_err *err) {
    if (a->type->kind != ST_TYPE_SCALAR)
        return fail_at(err, 0, "%s(…) converts a scalar, but this has type %s", st_scalar_name(to),
                       type_name(a->type).s);
    probe_node p = make(ST_NODE_CONV, st_type_scalar(cx, to), 1, &a);
    p.n.u.conv = to;
    return intern(cx, &p.n, err);
}

const st_node *st_if(st_ctx *cx, const st_node *c, const st_node *a, const st_node *b,
                     st_err *err) {
    if (!st_type_is_scalar(c->type, ST_BOOL))
        return fail_at(err, 0, "the condition of `if` must be a bool, but it has type %s",
                       type_name(c->type).s);
    if (!is_value_type(a->type)) return fail_at(err, 1, "`if` cannot choose between functions");
    if (a->type != b->type)
        return fail_at(err, 2, "the branches of `if` differ: `then` has type %s, `else` has %s",
                       type_name(a->type).s, type_name(b->type).s);
    probe_node p = make(ST_NODE_IF, a->type, 3, (const st_node *[]){c, a, b});
    return intern(cx, &p.n, err);
}

const st_node *st_let(st_ctx *cx, uint32_t nvars, const st_node *const *vars,
                      const st_node *value, const st_node *body, st_err *err) {
    if (too_many(nvars + 2, err)) return NULL;
    const st_type *t = value->type;
    if (!is_value_type(t)) return fail_at(err, (int)nvars, "`let` cannot bind a function");
    if (nvars == 1) {
        if (vars[0]->type != t)
            return fail_at(err, 0, "`%s` is declared %s but bound to a value of type %s",
                           vars[0]->u.name, type_name(vars[0]->type).s, type_name(t).s);
    } else {
        if (t->kind != ST_TYPE_TUPLE || t->n != nvars)
            return fail_at(err, (int)nvars, "the pattern has %u names but the value has type %s",
                           nvars, type_name(t).s);
        for (uint32_t i = 0; i < nvars; i++)
            if (vars[i]->type != t->items[i])
                return fail_at(err, (int)i, "`%s` is declared %s but bound to a value of type %s",
                               vars[i]->u.name, type_name(vars[i]->type).s, type_name(t->items[i]).s);
    }
    probe_node p = make_some(ST_NODE_LET, body->type, nvars + 2, vars, nvars);
    p.n.kids[nvars] = value;
    p.n.kids[nvars + 1] = body;
    return intern(cx, &p.n, err);
}

const st_node *st_lambda(st_ctx *cx, uint32_t nparams, const st_node *const *params,
                         const st_node *body, st_err *err) {
    if (too_many(nparams + 1, err)) return NULL;
    const st_type *types[ST_MAX_KIDS] = {0}; /* (GCC -O3 cannot see that none is read unset) */
    for (uint32_t i = 0; i < nparams; i++) {
        if (params[i]->kind != ST_NODE_VAR) return fail_at(err, (int)i, "a lambda parameter must be a name");
        types[i] = params[i]->type;
    }
    if (!is_value_type(body->type)) return fail_at(err, (int)nparams, "a lambda cannot return a function");
    probe_node p = make_some(ST_NODE_LAMBDA, st_type_fun(cx, nparams, types, body->type), nparams + 1,
                             params, nparams);
    p.n.kids[nparams] = body;
    return intern(cx, &p.n, err);
}

const st_node *st_opfn(st_ctx *cx, st_binop op, st_scalar_kind k, st_err *err) {
    if (!st_binop_accepts(op, k))
        return fail_at(err, -1, "`%s` cannot combine values of type %s", st_binop_name(op),
                       st_scalar_name(k));
    const st_type *t = st_type_scalar(cx, k);
    const st_type *params[2] = {t, t};
    probe_node p = make(ST_NODE_OPFN, st_type_fun(cx, 2, params, st_type_scalar(cx, st_binop_result(op, k))), 0, NULL);
    p.n.u.binop = op;
    return intern(cx, &p.n, err);
}

static bool is_param(const st_node *n, const st_node *p) { return n->kind == ST_NODE_VAR && n->u.name == p->u.name; }

bool st_fn_binop(const st_node *f, st_binop *out) {
    if (f->kind == ST_NODE_OPFN) return *out = f->u.binop, true;
    if (f->kind != ST_NODE_LAMBDA || st_lambda_nparams(f) != 2 || st_lambda_body(f)->kind != ST_NODE_BINOP) return false;
    const st_node *body = st_lambda_body(f), *a = f->kids[0], *b = f->kids[1];
    if (!(is_param(body->kids[0], a) && is_param(body->kids[1], b)) && !(is_param(body->kids[0], b) && is_param(body->kids[1], a)))
        return false;
    *out = body->u.binop;
    return true;
}

bool st_int_literal(const st_node *n, int64_t *v) {
    return n->kind == ST_NODE_LIT && n->type->kind == ST_TYPE_SCALAR && n->type->scalar != ST_BOOL &&
           st_scalar_is_int(n->type->scalar) && st_scalar_as_i64(n->type->scalar, n->u.lit, v);
}

/* ---- sizes from expressions ---- */

const st_size *st_node_as_size(st_ctx *cx, const st_node *e, st_err *err) {
    if (!st_type_is_int(e->type)) return NULL;
    switch (e->kind) {
    case ST_NODE_LIT: {
        int64_t v;
        if (!st_scalar_as_i64(e->type->scalar, e->u.lit, &v)) return NULL;
        return st_size_const(cx, v);
    }
    case ST_NODE_VAR: return e->size;
    case ST_NODE_CONV: return st_node_as_size(cx, e->kids[0], err);
    case ST_NODE_UNOP: {
        if (e->u.unop != ST_OP_NEG) return NULL;
        const st_size *a = st_node_as_size(cx, e->kids[0], err);
        return a ? st_size_sub(cx, st_size_const(cx, 0), a, err) : NULL;
    }
    case ST_NODE_BINOP: {
        const st_size *a = st_node_as_size(cx, e->kids[0], err);
        const st_size *b = a ? st_node_as_size(cx, e->kids[1], err) : NULL;
        if (!b) return NULL;
        switch (e->u.binop) {
        case ST_OP_ADD: return st_size_add(cx, a, b, err);
        case ST_OP_SUB: return st_size_sub(cx, a, b, err);
        case ST_OP_MUL: return st_size_mul(cx, a, b, err);
        case ST_OP_DIV: return st_size_div(cx, a, b, err);
        case ST_OP_MOD: return st_size_mod(cx, a, b, err);
        default: return NULL;
        }
    }
    default: return NULL;
    }
}

/* ---- primitives ---- */

static const char *pname(st_prim p) { return st_prim_get(p)->name; }

/* Does a function of type f take `params`? A function expected to take one
 * tuple may take its components as separate parameters instead. */
static bool fun_takes(const st_type *f, const st_type *const *params, int np) {
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

static const st_node *fun_mismatch(const st_node *f, st_prim p, int arg,
                                   const st_type *const *params, int np, st_err *err) {
    char want[400] = "";
    size_t len = 0;
    for (int i = 0; i < np; i++)
        len += (size_t)snprintf(want + len, sizeof want - len, "%s%s", i ? ", " : "",
                                type_name(params[i]).s);
    if (f->type->kind != ST_TYPE_FUN)
        return fail_at(err, arg, "%s expects a function here (a lambda like `x => x + 1` or an operator like `+`), not a value of type %s",
                       pname(p), type_name(f->type).s);
    return fail_at(err, arg, "%s's function should take (%s), but it takes %s", pname(p), want,
                   type_name(f->type).s);
}

static const st_node *need_array(const st_node *a, st_prim p, int arg, const char *what,
                                 st_err *err) {
    return fail_at(err, arg, "%s needs %s, but this has type %s", pname(p), what,
                   type_name(a->type).s);
}

/* scan(op, fold, z, xs), scan(op, fold, post, z, xs), reduce(op, fold, z, xs):
 * the accumulator's type is the neutral element's, free of the elements'. */
static bool folding_form(st_prim p, uint32_t nargs) {
    return (p == ST_PRIM_SCAN || p == ST_PRIM_REDUCE) && nargs >= 4;
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
    uint32_t n = (uint32_t)ntypes;
    int data = st_prim_data_arg(p, n);
    *result = NULL;
    if (data < 0 || data >= ntypes || !types[data])
        return fail_at(err, arg, "internal: %s argument %d typed out of order", pname(p), arg), false;
    const st_type *d = types[data];
    if (p == ST_PRIM_ITERATE || p == ST_PRIM_WHILE) {
        params[0] = *result = d;
        *nparams = 1;
        if (p == ST_PRIM_WHILE && arg == 0) *result = st_type_scalar(cx, ST_BOOL);
        return true;
    }
    if (p == ST_PRIM_LOOP) { /* (i, acc) */
        params[0] = st_type_scalar(cx, ST_I64);
        params[1] = *result = d;
        *nparams = 2;
        return true;
    }
    if (d->kind != ST_TYPE_ARRAY)
        return fail_at(err, data, "%s needs an array, but this has type %s", pname(p), type_name(d).s), false;
    const st_type *e = d->elem;
    if (p == ST_PRIM_REDUCE_BY_INDEX_2D) { /* its operator and neutral element are on the innermost */
        if (e->kind != ST_TYPE_ARRAY)
            return fail_at(err, data, "%s needs a destination of two dimensions, [n][m]t, but this has type %s",
                           pname(p), type_name(d).s), false;
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
    if (folding || p == ST_PRIM_REDUCE_SEQ || p == ST_PRIM_SCAN_SEQ) {
        acc = types[n - 2];
        if (!acc) return fail_at(err, arg, "internal: %s's neutral element typed after its functions", pname(p)), false;
    }
    switch (p) {
    case ST_PRIM_MAP: case ST_PRIM_MAP_SEQ: case ST_PRIM_MAP_GLB: case ST_PRIM_MAP_WRG: case ST_PRIM_MAP_LCL:
        params[0] = e;
        *nparams = 1;
        return true;
    case ST_PRIM_FILTER: case ST_PRIM_PARTITION: /* the predicate */
        params[0] = e;
        *nparams = 1;
        *result = st_type_scalar(cx, ST_BOOL);
        return true;
    case ST_PRIM_REDUCE_SEQ: case ST_PRIM_SCAN_SEQ: /* the fold */
        params[0] = *result = acc;
        params[1] = e;
        *nparams = 2;
        return true;
    case ST_PRIM_REDUCE: case ST_PRIM_SCAN: case ST_PRIM_EXSCAN:
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

static const st_size *length_arg(st_ctx *cx, st_prim p, const st_node *n, int arg, st_err *err) {
    if (!st_type_is_int(n->type)) {
        fail_at(err, arg, "the length given to %s must be an integer, but it has type %s", pname(p),
                type_name(n->type).s);
        return NULL;
    }
    st_err inner = {0};
    const st_size *s = st_node_as_size(cx, n, &inner);
    if (!s) {
        if (inner.message[0]) fail_at(err, arg, "%s", inner.message);
        else fail_at(err, arg, "the length given to %s must be a size: a literal, a size variable, an integer parameter, or arithmetic on them", pname(p));
        return NULL;
    }
    int64_t v;
    if (st_size_is_const(s, &v) && v < 0) {
        fail_at(err, arg, "the length given to %s is negative (%lld)", pname(p), (long long)v);
        return NULL;
    }
    return s;
}

static const st_node *type_prim(st_ctx *cx, st_prim p, uint32_t n, const st_node *const *a,
                                const st_type **out, st_err *err);

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

/* scanLookback(M, WG, LW, LOAD, …) and subhistograms(C, MEM, ATOMIC, …):
 * literal sizes in their ranges (into v), then the other primitive. */
static const st_node *type_after_sizes(st_ctx *cx, st_prim p, uint32_t n, const st_node *const *a,
                                       const st_type **out, int64_t *v, st_err *err) {
    uint32_t skip;
    st_prim base = st_prim_after_sizes(p, &skip);
    const lead_size *sizes = p == ST_PRIM_SCAN_LOOKBACK ? lookback_sizes : hist_sizes;
    for (uint32_t i = 0; i < skip; i++) {
        const st_size *s = length_arg(cx, p, a[i], (int)i, err);
        if (!s) return NULL;
        if (!st_size_is_const(s, &v[i]) || v[i] < sizes[i].min || v[i] > sizes[i].max)
            return fail_at(err, (int)i, "%s's %s", pname(p), sizes[i].what);
    }
    if (!type_prim(cx, base, n - skip, a + skip, out, err)) {
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
static const st_node *type_by_index(st_prim p, const st_node *const *a, const st_type **out, st_err *err) {
    const st_prim_info *info = st_prim_get(p);
    bool hist = p == ST_PRIM_REDUCE_BY_INDEX || p == ST_PRIM_REDUCE_BY_INDEX_2D;
    bool two = p == ST_PRIM_REDUCE_BY_INDEX_2D || p == ST_PRIM_SCATTER_2D;
    int is = hist ? 3 : 1, vs = hist ? 4 : 2;
    const st_type *t = a[0]->type, *params[2];
    if (t->kind != ST_TYPE_ARRAY || (two && t->elem->kind != ST_TYPE_ARRAY))
        return need_array(a[0], p, 0, two ? "a destination of two dimensions, [n][m]t" : "a destination array", err);
    const st_type *elem = two ? t->elem->elem : t->elem;
    if (!indices_ok(a[is]->type, two))
        return need_array(a[is], p, is, two ? "an array of (row, column) pairs of integers, like zip(rs, cs)" : "an array of integer indices", err);
    if (a[vs]->type->kind != ST_TYPE_ARRAY) return need_array(a[vs], p, vs, "an array of values", err);
    if (a[vs]->type->size != a[is]->type->size)
        return fail_at(err, vs, "%s needs as many values as indices, but there are %s indices and %s values",
                       info->name, size_name(a[is]->type->size).s, size_name(a[vs]->type->size).s);
    if (a[vs]->type->elem != elem)
        return fail_at(err, vs, "%s's values have type %s, but the destination holds %s", info->name,
                       type_name(a[vs]->type->elem).s, type_name(elem).s);
    if (hist) {
        if (a[2]->type != elem)
            return fail_at(err, 2, "%s's neutral element has type %s, but the destination holds %s", info->name,
                           type_name(a[2]->type).s, type_name(elem).s);
        params[0] = params[1] = elem;
        if (!fun_takes(a[1]->type, params, 2)) return fun_mismatch(a[1], p, 1, params, 2, err);
        if (a[1]->type->elem != elem)
            return fail_at(err, 1, "%s's operator must return %s, but it returns %s", info->name,
                           type_name(elem).s, type_name(a[1]->type->elem).s);
    }
    *out = t;
    return a[0];
}

/* filter and partition: p: t -> bool over xs: [n]t; the length kept is an
 * existential made from (p, xs), so filter(p, xs) and partition(p, xs).0
 * have one length. */
static const st_node *type_filter(st_ctx *cx, st_prim p, const st_node *const *a, const st_type **out, st_err *err) {
    const st_type *t = a[1]->type, *params[1];
    if (t->kind != ST_TYPE_ARRAY) return need_array(a[1], p, 1, "an array", err);
    params[0] = t->elem;
    if (!fun_takes(a[0]->type, params, 1)) return fun_mismatch(a[0], p, 0, params, 1, err);
    if (!st_type_is_scalar(a[0]->type->elem, ST_BOOL))
        return fail_at(err, 0, "%s's predicate must return bool, but it returns %s", pname(p), type_name(a[0]->type->elem).s);
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
static const st_node *type_take(st_ctx *cx, st_prim p, const st_node *const *a, const st_type **out, st_err *err) {
    if (!st_type_is_scalar(a[0]->type, ST_I64))
        return fail_at(err, 0, "%s's count must be an i64, but it has type %s", pname(p), type_name(a[0]->type).s);
    const st_type *t = a[1]->type;
    if (t->kind != ST_TYPE_ARRAY) return need_array(a[1], p, 1, "an array", err);
    const st_size *k = st_node_as_size(cx, a[0], NULL);
    int64_t v;
    if (k && st_size_is_const(k, &v) && v < 0)
        return fail_at(err, 0, "%s's count is negative (%lld)", pname(p), (long long)v);
    if (!k && a[0]->kind == ST_NODE_VAR) k = st_size_exist_named(cx, a[0], t->size, t->size, a[0]->u.name, err);
    else if (!k) k = st_size_exist(cx, a[0], t->size, t->size, "k", err);
    const st_size *len = !k ? NULL : p == ST_PRIM_TAKE ? k : st_size_sub(cx, t->size, k, err);
    if (!len) return NULL;
    *out = st_type_array(cx, len, t->elem);
    return a[0];
}

/* scanTotal(s): s a scan (scan, scanSeq or scanLookback, any form); its accumulator's type. */
static const st_node *type_scan_total(const st_node *const *a, const st_type **out, st_err *err) {
    st_scan_form f;
    bool scan = st_is_prim(a[0], ST_PRIM_SCAN) || st_is_prim(a[0], ST_PRIM_SCAN_SEQ) || st_is_prim(a[0], ST_PRIM_SCAN_LOOKBACK);
    if (!scan || !st_fold_form_of(a[0], &f))
        return fail_at(err, 0, "scanTotal takes a scan (scan, scanSeq or scanLookback), not %s", a[0]->kind == ST_NODE_PRIM ?
                       st_prim_get(a[0]->u.prim)->name : "another expression");
    *out = f.z->type;
    return a[0];
}

static const st_node *type_concat(st_ctx *cx, const st_node *const *a, const st_type **out, st_err *err) {
    for (int i = 0; i < 2; i++)
        if (a[i]->type->kind != ST_TYPE_ARRAY) return need_array(a[i], ST_PRIM_CONCAT, i, "arrays", err);
    if (a[0]->type->elem != a[1]->type->elem)
        return fail_at(err, 1, "concat needs arrays of one element type, but they are %s and %s", type_name(a[0]->type).s,
                       type_name(a[1]->type).s);
    const st_size *len = st_size_add(cx, a[0]->type->size, a[1]->type->size, err);
    if (!len) return NULL;
    *out = st_type_array(cx, len, a[0]->type->elem);
    return a[0];
}

static const st_node *type_prim(st_ctx *cx, st_prim p, uint32_t n, const st_node *const *a,
                                const st_type **out, st_err *err) {
    const st_prim_info *info = st_prim_get(p);
    if (!st_prim_takes(p, n)) {
        char arity[48];
        st_prim_describe_arity(p, arity, sizeof arity);
        return fail_at(err, -1, "%s takes %s argument%s, but was given %u", info->name, arity,
                       strcmp(arity, "1") ? "s" : "", n);
    }
    for (uint32_t i = 0; i < n; i++) {
        bool fun = st_prim_arg_role(p, (int)i, n) == ST_ARG_FUN;
        if (!fun && a[i]->type->kind == ST_TYPE_FUN)
            return fail_at(err, (int)i, "%s expects a value here, not a function", info->name);
    }
    const st_type *params[2];
    int np;
    const st_type *t;
    switch (p) {
    case ST_PRIM_MAP: case ST_PRIM_MAP_SEQ: case ST_PRIM_MAP_GLB: case ST_PRIM_MAP_WRG: case ST_PRIM_MAP_LCL:
        if (a[1]->type->kind != ST_TYPE_ARRAY) return need_array(a[1], p, 1, "an array", err);
        params[0] = a[1]->type->elem;
        if (!fun_takes(a[0]->type, params, 1)) return fun_mismatch(a[0], p, 0, params, 1, err);
        *out = st_type_array(cx, a[1]->type->size, a[0]->type->elem);
        return a[0];
    case ST_PRIM_REDUCE: case ST_PRIM_SCAN: case ST_PRIM_REDUCE_SEQ: case ST_PRIM_SCAN_SEQ:
    case ST_PRIM_EXSCAN: { /* exscan: only (op, z, xs), typed as scan's */
        /* (op, z, xs) | (op, fold, z, xs) | (op, fold, post, z, xs) | Seq: (fold, z, xs) */
        bool seq = p == ST_PRIM_REDUCE_SEQ || p == ST_PRIM_SCAN_SEQ, folding = folding_form(p, n);
        const st_node *xs = a[n - 1];
        if (xs->type->kind != ST_TYPE_ARRAY) return need_array(xs, p, (int)n - 1, "an array", err);
        const st_type *e = xs->type->elem, *acc = a[n - 2]->type, *elem_out = acc;
        if (!seq && !folding && acc != e)
            return fail_at(err, (int)n - 2, "%s's neutral element has type %s, but the elements are %s",
                           info->name, type_name(acc).s, type_name(e).s);
        for (uint32_t f = 0; f + 2 < n; f++) {
            const char *what = seq || f == 1 ? "fold" : f == 0 ? "operator" : "post-function";
            params[0] = acc;
            params[1] = f == 0 && !seq ? acc : e;
            if (!fun_takes(a[f]->type, params, 2)) return fun_mismatch(a[f], p, (int)f, params, 2, err);
            if (f == 2) {
                elem_out = a[f]->type->elem;
            } else if (a[f]->type->elem != acc) {
                return fail_at(err, (int)f, "%s's %s must return %s, but it returns %s", info->name, what,
                               type_name(acc).s, type_name(a[f]->type->elem).s);
            }
        }
        *out = p == ST_PRIM_REDUCE || p == ST_PRIM_REDUCE_SEQ ? acc : st_type_array(cx, xs->type->size, elem_out);
        return a[0];
    }
    case ST_PRIM_SPLIT: {
        const st_size *k = length_arg(cx, p, a[0], 0, err);
        if (!k) return NULL;
        int64_t kv;
        if (st_size_is_const(k, &kv) && kv == 0) return fail_at(err, 0, "split(0) makes no chunks; the chunk size must be positive");
        if (a[1]->type->kind != ST_TYPE_ARRAY) return need_array(a[1], p, 1, "an array", err);
        const st_size *len = a[1]->type->size;
        if (!st_size_divides(k, len)) {
            tname ks = size_name(k), ls = size_name(len);
            return fail_at(err, 1, "split(%s) needs a length that is a multiple of %s, but the array has length %s%s",
                           ks.s, ks.s, ls.s,
                           st_size_is_const(len, NULL) ? "" : "; state it with `where … % … == 0`, or pad the array");
        }
        const st_size *outer = st_size_div(cx, len, k, err);
        if (!outer) return NULL;
        *out = st_type_array(cx, outer, st_type_array(cx, k, a[1]->type->elem));
        return a[0];
    }
    case ST_PRIM_JOIN: {
        t = a[0]->type;
        if (t->kind != ST_TYPE_ARRAY || t->elem->kind != ST_TYPE_ARRAY)
            return need_array(a[0], p, 0, "an array of arrays", err);
        const st_size *len = st_size_mul(cx, t->size, t->elem->size, err);
        if (!len) return NULL;
        *out = st_type_array(cx, len, t->elem->elem);
        return a[0];
    }
    case ST_PRIM_ZIP: {
        const st_type *items[ST_MAX_KIDS];
        for (uint32_t i = 0; i < n; i++) {
            if (a[i]->type->kind != ST_TYPE_ARRAY) return need_array(a[i], p, (int)i, "arrays", err);
            if (a[i]->type->size != a[0]->type->size)
                return fail_at(err, (int)i, "zip needs arrays of one length, but %s and %s differ in length",
                               type_name(a[0]->type).s, type_name(a[i]->type).s);
            items[i] = a[i]->type->elem;
        }
        *out = st_type_array(cx, a[0]->type->size, st_type_tuple(cx, n, items));
        return a[0];
    }
    case ST_PRIM_UNZIP: {
        t = a[0]->type;
        if (t->kind != ST_TYPE_ARRAY || t->elem->kind != ST_TYPE_TUPLE)
            return need_array(a[0], p, 0, "an array of tuples", err);
        const st_type *items[ST_MAX_KIDS];
        for (uint32_t i = 0; i < t->elem->n; i++) items[i] = st_type_array(cx, t->size, t->elem->items[i]);
        *out = st_type_tuple(cx, t->elem->n, items);
        return a[0];
    }
    case ST_PRIM_IOTA: {
        const st_size *len = length_arg(cx, p, a[0], 0, err);
        if (!len) return NULL;
        *out = st_type_array(cx, len, st_type_scalar(cx, ST_I64));
        return a[0];
    }
    case ST_PRIM_REPLICATE: case ST_PRIM_SCRATCH: {
        const st_size *len = length_arg(cx, p, a[0], 0, err);
        if (!len) return NULL;
        *out = st_type_array(cx, len, a[1]->type);
        return a[0];
    }
    case ST_PRIM_TRANSPOSE:
        t = a[0]->type;
        if (t->kind != ST_TYPE_ARRAY || t->elem->kind != ST_TYPE_ARRAY)
            return need_array(a[0], p, 0, "an array of arrays", err);
        *out = st_type_array(cx, t->elem->size, st_type_array(cx, t->size, t->elem->elem));
        return a[0];
    case ST_PRIM_SCATTER: case ST_PRIM_SCATTER_DISTINCT:
        if (n == 2) { /* scatter(dest, ivs): (index, value) pairs */
            t = a[0]->type;
            const st_type *ivs = a[1]->type;
            if (t->kind != ST_TYPE_ARRAY) return need_array(a[0], p, 0, "a destination array", err);
            if (ivs->kind != ST_TYPE_ARRAY || ivs->elem->kind != ST_TYPE_TUPLE || ivs->elem->n != 2 ||
                !st_type_is_int(ivs->elem->items[0]) || ivs->elem->items[1] != t->elem) {
                return fail_at(err, 1, "%s with two arguments needs an array of (index, value) pairs, an integer index and a %s, but this has type %s",
                               pname(p), type_name(t->elem).s, type_name(ivs).s);
            }
            *out = t;
            return a[0];
        }
        __attribute__((fallthrough)); /* scatter(dest, is, vs) */
    case ST_PRIM_REDUCE_BY_INDEX: case ST_PRIM_REDUCE_BY_INDEX_2D: case ST_PRIM_SCATTER_2D:
        return type_by_index(p, a, out, err);
    case ST_PRIM_ITERATE:
        if (!st_type_is_int(a[0]->type))
            return fail_at(err, 0, "iterate's count must be an integer, but it has type %s", type_name(a[0]->type).s);
        params[0] = a[2]->type;
        if (!fun_takes(a[1]->type, params, 1) || a[1]->type->elem != a[2]->type)
            return fail_at(err, 1, "iterate's function must take and return %s", type_name(a[2]->type).s);
        *out = a[2]->type;
        return a[0];
    case ST_PRIM_LOOP:
        if (!st_type_is_scalar(a[0]->type, ST_I64))
            return fail_at(err, 0, "a loop's count must be an i64, but it has type %s", type_name(a[0]->type).s);
        params[0] = st_type_scalar(cx, ST_I64);
        params[1] = a[2]->type;
        if (!fun_takes(a[1]->type, params, 2) || a[1]->type->elem != a[2]->type)
            return fail_at(err, 1, "a loop's body must take (i64, %s) and return %s", type_name(a[2]->type).s,
                           type_name(a[2]->type).s);
        *out = a[2]->type;
        return a[0];
    case ST_PRIM_WHILE:
        params[0] = a[2]->type;
        if (!fun_takes(a[0]->type, params, 1) || !st_type_is_scalar(a[0]->type->elem, ST_BOOL))
            return fail_at(err, 0, "a while loop's condition must take %s and return bool", type_name(a[2]->type).s);
        if (!fun_takes(a[1]->type, params, 1) || a[1]->type->elem != a[2]->type)
            return fail_at(err, 1, "a while loop's body must take and return %s", type_name(a[2]->type).s);
        *out = a[2]->type;
        return a[1];
    case ST_PRIM_GET:
        if (!st_type_is_int(a[0]->type))
            return fail_at(err, 0, "get's index must be an integer, but it has type %s", type_name(a[0]->type).s);
        if (a[1]->type->kind != ST_TYPE_ARRAY) return need_array(a[1], p, 1, "an array", err);
        *out = a[1]->type->elem;
        return a[0];
    case ST_PRIM_TO_GLOBAL: case ST_PRIM_TO_LOCAL: case ST_PRIM_TO_PRIVATE:
        *out = a[0]->type;
        return a[0];
    case ST_PRIM_SCAN_LOOKBACK: case ST_PRIM_SUBHISTOGRAMS: {
        /* ATOMIC's fit to the operator is the device's concern
         * (codegen/atomics.h), not the program's meaning */
        int64_t v[ST_LOOKBACK_SIZES + ST_HIST_SIZES]; /* room for either */
        return type_after_sizes(cx, p, n, a, out, v, err);
    }
    case ST_PRIM_FILTER: case ST_PRIM_PARTITION: return type_filter(cx, p, a, out, err);
    case ST_PRIM_TAKE: case ST_PRIM_DROP: return type_take(cx, p, a, out, err);
    case ST_PRIM_CONCAT: return type_concat(cx, a, out, err);
    case ST_PRIM_SCAN_TOTAL: return type_scan_total(a, out, err);
    default:
        (void)np;
        return fail_at(err, -1, "internal: no typing rule for %s", info->name);
    }
}

const st_node *st_prim_node(st_ctx *cx, st_prim p, uint32_t nargs, const st_node *const *args,
                            st_err *err) {
    if (too_many(nargs, err)) return NULL;
    const st_type *t = NULL;
    if (!type_prim(cx, p, nargs, args, &t, err)) return NULL;
    probe_node pr = make(ST_NODE_PRIM, t, nargs, args);
    pr.n.u.prim = p;
    return intern(cx, &pr.n, err);
}

/* A primitive with new kids of the same types. A length known only at run
 * time is made from the parts of the node that cuts it (type_filter,
 * type_take), so new parts would make a new one; but a rebuild puts the same
 * values in (a rewrite inside them, a substitution), so the node is the same
 * value and keeps its length: what reads it, typed by that length, stays
 * typed (a filter of a filter whose inner one a rule rewrites). */
static const st_node *rebuilt_prim(st_ctx *cx, const st_node *n, const st_node *const *kids, st_err *err) {
    const st_node *r = st_prim_node(cx, n->u.prim, n->nkids, kids, err);
    if (!r || r->type == n->type || !st_prim_sizes_at_run_time(n->u.prim)) return r;
    for (uint32_t i = 0; i < n->nkids; i++)
        if (kids[i]->type != n->kids[i]->type) return r;
    probe_node pr = make(ST_NODE_PRIM, n->type, n->nkids, kids);
    pr.n.u.prim = n->u.prim;
    return intern(cx, &pr.n, err);
}

static const st_node *rebuilt(st_ctx *cx, const st_node *n, const st_node *const *kids, st_err *err) {
    switch (n->kind) {
    case ST_NODE_TUPLE: return st_tuple(cx, n->nkids, kids, err);
    case ST_NODE_PROJ: return st_proj(cx, kids[0], n->u.index, err);
    case ST_NODE_UNOP: return st_unary(cx, n->u.unop, kids[0], err);
    case ST_NODE_BINOP: return st_binary(cx, n->u.binop, kids[0], kids[1], err);
    case ST_NODE_CONV: return st_conv(cx, n->u.conv, kids[0], err);
    case ST_NODE_IF: return st_if(cx, kids[0], kids[1], kids[2], err);
    case ST_NODE_LET: return st_let(cx, st_let_nvars(n), kids, kids[n->nkids - 2], kids[n->nkids - 1], err);
    case ST_NODE_LAMBDA: return st_lambda(cx, st_lambda_nparams(n), kids, kids[n->nkids - 1], err);
    case ST_NODE_PRIM: return rebuilt_prim(cx, n, kids, err);
    default: return n; /* leaves */
    }
}

/* The rebuilt node stands where n stood: it takes n's place in the source. */
const st_node *st_rebuild(st_ctx *cx, const st_node *n, const st_node *const *kids, st_err *err) {
    bool same = true;
    for (uint32_t i = 0; i < n->nkids; i++) same &= kids[i] == n->kids[i];
    if (same) return n;
    return st_node_placed_like(cx, rebuilt(cx, n, kids, err), n);
}

const st_node *st_replace_kid(st_ctx *cx, const st_node *n, uint32_t i, const st_node *kid, st_err *err) {
    if (i >= n->nkids) return st_fail_internal(err, "replacing kid %u of a node with %u", i, n->nkids), NULL;
    const st_node *kids[ST_MAX_KIDS];
    memcpy(kids, n->kids, n->nkids * sizeof *kids);
    kids[i] = kid;
    return st_rebuild(cx, n, kids, err);
}
