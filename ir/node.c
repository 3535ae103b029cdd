/* ir/node.c — node constructors and the typing rules (a primitive's own in
 * its row of ir/prim.c, by family in ir/prim_*.c).
 *
 * Every node is built here, typed from its parts, and hash-consed: a rewrite
 * that rebuilds an equal tree gets the same pointer back. A constructor whose
 * parts do not fit fails with a message and the index of the offending part,
 * which the type checker turns into a located error. */
#include "ctx.h"
#include "prim.h"
#include "scalar_ops.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- messages ---- */

static st_tname take(st_buf *b) {
    st_tname n = {{0}};
    snprintf(n.s, sizeof n.s, "%s", b->data ? b->data : "?");
    st_buf_free(b);
    return n;
}

st_tname st_type_text(const st_type *t) {
    st_buf b = {0};
    st_type_print(t, &b);
    return take(&b);
}

st_tname st_size_text(const st_size *s) {
    st_buf b = {0};
    st_size_print(s, &b);
    return take(&b);
}

const st_node *st_fail_arg(st_err *err, int arg, const char *fmt, ...) {
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
    st_fail_arg(err, -1, "too many parts (%u; at most %d)", n, ST_MAX_KIDS);
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
    if (n < 2) return st_fail_arg(err, -1, "a tuple has at least two components");
    const st_type *types[ST_MAX_KIDS] = {0}; /* (GCC -O3 cannot see that none is read unset) */
    for (uint32_t i = 0; i < n; i++) {
        if (!is_value_type(items[i]->type)) return st_fail_arg(err, (int)i, "a function cannot be part of a tuple");
        types[i] = items[i]->type;
    }
    probe_node p = make(ST_NODE_TUPLE, st_type_tuple(cx, n, types), n, items);
    return intern(cx, &p.n, err);
}

const st_node *st_proj(st_ctx *cx, const st_node *tuple, uint32_t index, st_err *err) {
    const st_type *t = tuple->type;
    if (t->kind != ST_TYPE_TUPLE)
        return st_fail_arg(err, 0, "`.%u` needs a tuple, but this has type %s", index, st_type_text(t).s);
    if (index >= t->n)
        return st_fail_arg(err, 0, "`.%u` is out of range: the tuple %s has %u components", index,
                       st_type_text(t).s, t->n);
    probe_node p = make(ST_NODE_PROJ, t->items[index], 1, &tuple);
    p.n.u.index = index;
    return intern(cx, &p.n, err);
}

const st_node *st_unary(st_ctx *cx, st_unop op, const st_node *a, st_err *err) {
    const st_type *t = a->type;
    if (op == ST_OP_NOT && !st_type_is_scalar(t, ST_BOOL))
        return st_fail_arg(err, 0, "`!` needs a bool, but this has type %s", st_type_text(t).s);
    if (op == ST_OP_NEG && (t->kind != ST_TYPE_SCALAR || t->scalar == ST_BOOL))
        return st_fail_arg(err, 0, "`-` needs a number, but this has type %s", st_type_text(t).s);
    if ((op == ST_OP_ABS || op == ST_OP_BITS) && (t->kind != ST_TYPE_SCALAR || t->scalar == ST_BOOL))
        return st_fail_arg(err, 0, "%s needs a number, but this has type %s", st_unop_function(op), st_type_text(t).s);
    bool test = st_unop_is_float_test(op);
    if ((st_unop_is_float_function(op) || test) && !(st_type_is_scalar(t, ST_F32) || st_type_is_scalar(t, ST_F64)))
        return st_fail_arg(err, 0, "%s needs a float (f32 or f64), but this has type %s%s", st_unop_function(op),
                       st_type_text(t).s, t->kind == ST_TYPE_SCALAR ? ": convert it first, as f32(x)" : "");
    if (test) t = st_type_scalar(cx, ST_BOOL);
    if (op == ST_OP_BITS) t = st_type_scalar(cx, st_scalar_unsigned(t->scalar));
    /* a negated literal is a literal: the parser reads `-1` so, and the
     * printer could not tell the two apart (bits(1.0) stays as written, as
     * a conversion of a literal does) */
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
        return st_fail_arg(err, 0, "`%s` needs %s, but its left operand has type %s", name,
                       binop_needs(op), st_type_text(ta).s);
    if (ta != tb)
        return st_fail_arg(err, 1, "`%s` needs operands of one type, but they are %s and %s", name,
                       st_type_text(ta).s, st_type_text(tb).s);
    probe_node p = make(ST_NODE_BINOP, st_type_scalar(cx, st_binop_result(op, ta->scalar)), 2,
                        (const st_node *[]){a, b});
    p.n.u.binop = op;
    return intern(cx, &p.n, err);
}

const st_node *st_conv(st_ctx *cx, st_scalar_kind to, const st_node *a, st_err *err) {
    if (a->type->kind != ST_TYPE_SCALAR)
        return st_fail_arg(err, 0, "%s(…) converts a scalar, but this has type %s", st_scalar_name(to),
                       st_type_text(a->type).s);
    probe_node p = make(ST_NODE_CONV, st_type_scalar(cx, to), 1, &a);
    p.n.u.conv = to;
    return intern(cx, &p.n, err);
}

const st_node *st_if(st_ctx *cx, const st_node *c, const st_node *a, const st_node *b,
                     st_err *err) {
    if (!st_type_is_scalar(c->type, ST_BOOL))
        return st_fail_arg(err, 0, "the condition of `if` must be a bool, but it has type %s",
                       st_type_text(c->type).s);
    if (!is_value_type(a->type)) return st_fail_arg(err, 1, "`if` cannot choose between functions");
    if (a->type != b->type)
        return st_fail_arg(err, 2, "the branches of `if` differ: `then` has type %s, `else` has %s",
                       st_type_text(a->type).s, st_type_text(b->type).s);
    probe_node p = make(ST_NODE_IF, a->type, 3, (const st_node *[]){c, a, b});
    return intern(cx, &p.n, err);
}

const st_node *st_let(st_ctx *cx, uint32_t nvars, const st_node *const *vars,
                      const st_node *value, const st_node *body, st_err *err) {
    if (too_many(nvars + 2, err)) return NULL;
    const st_type *t = value->type;
    if (!is_value_type(t)) return st_fail_arg(err, (int)nvars, "`let` cannot bind a function");
    if (nvars == 1) {
        if (vars[0]->type != t)
            return st_fail_arg(err, 0, "`%s` is declared %s but bound to a value of type %s",
                           vars[0]->u.name, st_type_text(vars[0]->type).s, st_type_text(t).s);
    } else {
        if (t->kind != ST_TYPE_TUPLE || t->n != nvars)
            return st_fail_arg(err, (int)nvars, "the pattern has %u names but the value has type %s",
                           nvars, st_type_text(t).s);
        for (uint32_t i = 0; i < nvars; i++)
            if (vars[i]->type != t->items[i])
                return st_fail_arg(err, (int)i, "`%s` is declared %s but bound to a value of type %s",
                               vars[i]->u.name, st_type_text(vars[i]->type).s, st_type_text(t->items[i]).s);
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
        if (params[i]->kind != ST_NODE_VAR) return st_fail_arg(err, (int)i, "a lambda parameter must be a name");
        types[i] = params[i]->type;
    }
    if (!is_value_type(body->type)) return st_fail_arg(err, (int)nparams, "a lambda cannot return a function");
    probe_node p = make_some(ST_NODE_LAMBDA, st_type_fun(cx, nparams, types, body->type), nparams + 1,
                             params, nparams);
    p.n.kids[nparams] = body;
    return intern(cx, &p.n, err);
}

const st_node *st_opfn(st_ctx *cx, st_binop op, st_scalar_kind k, st_err *err) {
    if (!st_binop_accepts(op, k))
        return st_fail_arg(err, -1, "`%s` cannot combine values of type %s", st_binop_name(op),
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

const st_node *st_prim_node(st_ctx *cx, st_prim p, uint32_t nargs, const st_node *const *args,
                            st_err *err) {
    if (too_many(nargs, err)) return NULL;
    const st_type *t = NULL;
    if (!st_prim_check(cx, p, nargs, args, &t, err)) return NULL;
    probe_node pr = make(ST_NODE_PRIM, t, nargs, args);
    pr.n.u.prim = p;
    return intern(cx, &pr.n, err);
}

/* A primitive with new kids of the same types. A length known only at run
 * time is made from the parts of the node that cuts it (st_type_filter,
 * st_type_take in ir/prim_cuts.c), so new parts would make a new one; but a
 * rebuild puts the same values in (a rewrite inside them, a substitution),
 * so the node is the same value and keeps its length: what reads it, typed
 * by that length, stays typed (a filter of a filter whose inner one a rule
 * rewrites). */
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
