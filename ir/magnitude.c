/* ir/magnitude.c — the reference a device's result is checked against: the
 * interpreter's value, and beside each float of it the scale of the rounding
 * error a correct implementation may make (docs/checking.md).
 *
 * A parallel sum adds in another order than any one reference does; in f32
 * the two differ by up to a multiple of ε·Σ|x|, which may be far more than
 * ε·|Σx| (a sum of values of mean zero) and far less than a tolerance fixed
 * in advance (a quotient of 1e-5). So the bound follows the computation:
 * every float x is computed beside its magnitude m(x), the value with every
 * rounding error counted as if they all added up (to first order),
 *
 *   m(c) = |c|        m(a ± b) = m(a) + m(b)      m(a · b) = m(a) · m(b)
 *   m(a / b) = (m(a) + |a/b| · m(b)) / |b|        m(a % b) = m(a) + |a/b| · m(b)
 *   m(min, max(a, b)) = max(m(a), m(b))           m(-a) = m(|a|) = m(a)
 *   m(aᵇ) = |aᵇ| · (|b| m(a)/|a| + |ln |a|| m(b) + 2)
 *   m(atan2(y, x)) = (|x| m(y) + |y| m(x)) / (x² + y²) + |atan2(y, x)|
 *   m(√a) = m(a) / 2√|a| + √|a|    m(eˣ) = eˣ · (m(x) + 1)    m(ln a) = m(a)/|a| + |ln a|
 *   m(f(a)) = s · m(a) + |f(a)| for the other functions, s a bound of f's
 *   slope near a (1 for sin cos atan tanh, 1 + tan² a for tan, 1/√(1 - a²)
 *   for asin acos, cosh a for sinh cosh; floor ceil round trunc round
 *   nothing, and move their value by less than one where a's error takes
 *   it across an integer, as a conversion to an integer may)
 *
 * so that m(Σxᵢ) = Σ|xᵢ| and m(x) ≥ |x|, and beside its count c(x) of the
 * roundings it went through (c(a op b) = c(a) + c(b) + 1, none for an input
 * or a literal, the larger of the two for min and max). A device's y may
 * differ from x by tolerance·ε·(1 + √c)·m (st_expected_agree): errors of
 * c roundings in any order add up like a random walk's steps.
 *
 * Both are computed by running a twin of the def in the interpreter: the
 * same program with every float (f32 or f64) a triple of itself, its
 * magnitude and its count (f64). The twin's floats are the def's, operation
 * for operation, so its first parts are the reference itself and one run
 * gives all. Comparisons, conversions to integers, bits and indices read
 * the first part: control flow is the def's. */
#include "scalar_ops.h"
#include "value.h"

#include <math.h>
#include <string.h>

typedef struct twin {
    st_ctx *cx;
    st_err *err;
    st_ptrmap done; /* node → its twin */
} twin;

static bool is_float_scalar(const st_type *t) {
    return t->kind == ST_TYPE_SCALAR && st_scalar_is_float(t->scalar);
}

/* The twin of a type: each float scalar t becomes (t, f64, f64). */
static const st_type *twin_type(st_ctx *cx, const st_type *t) {
    switch (t->kind) {
    case ST_TYPE_SCALAR: {
        if (!st_scalar_is_float(t->scalar)) return t;
        const st_type *f64 = st_type_scalar(cx, ST_F64), *parts[3] = {t, f64, f64};
        return st_type_tuple(cx, 3, parts);
    }
    case ST_TYPE_ARRAY: {
        const st_type *e = twin_type(cx, t->elem);
        return e && e != t->elem ? st_type_array(cx, t->size, e) : e ? t : NULL;
    }
    case ST_TYPE_TUPLE: {
        const st_type *items[ST_MAX_KIDS];
        bool changed = false;
        if (t->n > ST_MAX_KIDS) return NULL;
        for (uint32_t i = 0; i < t->n; i++) {
            if (!(items[i] = twin_type(cx, t->items[i]))) return NULL;
            changed |= items[i] != t->items[i];
        }
        return changed ? st_type_tuple(cx, t->n, items) : t;
    }
    default: return t; /* functions: a lambda's type follows from its parts */
    }
}

/* ---- building the twin's expressions ---- */

static const st_node *f64_lit(twin *T, double v) { return st_lit(T->cx, ST_F64, (st_scalar){.f64 = v}); }
static const st_node *un(twin *T, st_unop op, const st_node *a) { return a ? st_unary(T->cx, op, a, T->err) : NULL; }
static const st_node *bin(twin *T, st_binop op, const st_node *a, const st_node *b) {
    return a && b ? st_binary(T->cx, op, a, b, T->err) : NULL;
}
static const st_node *part(twin *T, const st_node *x, uint32_t i) {
    return x ? st_proj(T->cx, x, i, T->err) : NULL;
}
static const st_node *as_f64(twin *T, const st_node *a) {
    if (!a) return NULL;
    return st_type_is_scalar(a->type, ST_F64) ? a : st_conv(T->cx, ST_F64, a, T->err);
}
/* A float of the twin: its value, magnitude and count of roundings. */
static const st_node *twin_float(twin *T, const st_node *v, const st_node *m, const st_node *c) {
    if (!v || !m || !c) return NULL;
    const st_node *items[3] = {v, m, c};
    return st_tuple(T->cx, 3, items, T->err);
}
/* |a| as an f64, for magnitudes */
static const st_node *abs64(twin *T, const st_node *a) { return un(T, ST_OP_ABS, as_f64(T, a)); }
/* max(|a|, the least positive f64 worth dividing by): a magnitude over an
 * exact zero is an infinite bound where it should be, never a NaN */
static const st_node *divisor64(twin *T, const st_node *a) { return bin(T, ST_OP_MAX, abs64(T, a), f64_lit(T, 1e-300)); }

/* A float made from no float (a literal, a conversion): its own |v|, no
 * rounding before it. */
static const st_node *exact(twin *T, const st_node *v) { return twin_float(T, v, abs64(T, v), f64_lit(T, 0)); }

/* `let x = e in body(x)`, so that a twin reads each operand once (all
 * three parts of it, without evaluating it thrice) */
typedef const st_node *(*with_fn)(twin *T, const st_node *const *vars, const void *ctx);

static const st_node *with(twin *T, uint32_t n, const st_node *const *values, with_fn body, const void *ctx) {
    const st_node *vars[2];
    for (uint32_t i = 0; i < n; i++) {
        if (!values[i]) return NULL;
        vars[i] = st_let_var(T->cx, st_fresh_name(T->cx, "m"), values[i]);
        if (!vars[i]) return st_fail_internal(T->err, "out of memory"), NULL;
    }
    const st_node *b = body(T, vars, ctx);
    for (uint32_t i = n; b && i-- > 0;) b = st_let(T->cx, 1, &vars[i], values[i], b, T->err);
    return b;
}

/* one rounding more than c */
static const st_node *plus_one(twin *T, const st_node *c) { return bin(T, ST_OP_ADD, c, f64_lit(T, 1)); }

/* a op b on the twin's floats (a float operator on two floats) */
static const st_node *binop_body(twin *T, const st_node *const *ab, const void *ctx) {
    st_binop op = *(const st_binop *)ctx;
    const st_node *av = part(T, ab[0], 0), *am = part(T, ab[0], 1), *ac = part(T, ab[0], 2);
    const st_node *bv = part(T, ab[1], 0), *bm = part(T, ab[1], 1), *bc = part(T, ab[1], 2);
    const st_node *v = bin(T, op, av, bv), *c = plus_one(T, bin(T, ST_OP_ADD, ac, bc)), *quotient;
    switch (op) {
    case ST_OP_ADD: case ST_OP_SUB: return twin_float(T, v, bin(T, ST_OP_ADD, am, bm), c);
    case ST_OP_MUL: return twin_float(T, v, bin(T, ST_OP_MUL, am, bm), c);
    case ST_OP_DIV:
    case ST_OP_MOD:
        quotient = bin(T, ST_OP_MUL, un(T, ST_OP_ABS, bin(T, ST_OP_DIV, as_f64(T, av), as_f64(T, bv))), bm);
        if (op == ST_OP_MOD) return twin_float(T, v, bin(T, ST_OP_ADD, am, quotient), c);
        return twin_float(T, v, bin(T, ST_OP_DIV, bin(T, ST_OP_ADD, am, quotient), divisor64(T, bv)), c);
    case ST_OP_MIN: case ST_OP_MAX: return twin_float(T, v, bin(T, ST_OP_MAX, am, bm), bin(T, ST_OP_MAX, ac, bc));
    case ST_OP_POW: { /* |aᵇ| · (|b| m(a)/|a| + |ln |a|| m(b) + 2): pow may be off by a few ulps more than one rounding */
        const st_node *a64 = as_f64(T, av), *b64 = abs64(T, bv);
        const st_node *slopes = bin(T, ST_OP_ADD, bin(T, ST_OP_DIV, bin(T, ST_OP_MUL, b64, am), divisor64(T, a64)),
                                    bin(T, ST_OP_MUL, abs64(T, un(T, ST_OP_LOG, abs64(T, a64))), bm));
        return twin_float(T, v, bin(T, ST_OP_MUL, abs64(T, v), bin(T, ST_OP_ADD, slopes, f64_lit(T, 2.0))), c);
    }
    case ST_OP_ATAN2: { /* (|x| m(y) + |y| m(x)) / (x² + y²) + |atan2(y, x)| */
        const st_node *y64 = as_f64(T, av), *x64 = as_f64(T, bv);
        const st_node *r2 = bin(T, ST_OP_ADD, bin(T, ST_OP_MUL, y64, y64), bin(T, ST_OP_MUL, x64, x64));
        const st_node *num = bin(T, ST_OP_ADD, bin(T, ST_OP_MUL, abs64(T, x64), am), bin(T, ST_OP_MUL, abs64(T, y64), bm));
        return twin_float(T, v, bin(T, ST_OP_ADD, bin(T, ST_OP_DIV, num, divisor64(T, r2)), abs64(T, v)), c);
    }
    default: return v; /* a comparison: of the values */
    }
}

/* f(a) = v of a function whose slope near a, times m(a), is slope_m:
 * magnitude slope_m + |v| (its own rounding), one rounding more than a */
static const st_node *sloped(twin *T, const st_node *v, const st_node *slope_m, const st_node *ac) {
    return twin_float(T, v, bin(T, ST_OP_ADD, slope_m, abs64(T, v)), plus_one(T, ac));
}

/* op(a) on a twin's float */
static const st_node *unop_body(twin *T, const st_node *const *a, const void *ctx) {
    st_unop op = *(const st_unop *)ctx;
    const st_node *av = part(T, a[0], 0), *am = part(T, a[0], 1), *ac = part(T, a[0], 2), *v = un(T, op, av), *root, *e;
    switch (op) {
    case ST_OP_NEG: case ST_OP_ABS: return twin_float(T, v, am, ac);
    case ST_OP_SQRT:
        root = un(T, ST_OP_SQRT, abs64(T, av));
        return twin_float(T, v, bin(T, ST_OP_ADD, bin(T, ST_OP_DIV, am, bin(T, ST_OP_MUL, f64_lit(T, 2.0), divisor64(T, root))), root),
                          plus_one(T, ac));
    case ST_OP_EXP:
        e = un(T, ST_OP_EXP, as_f64(T, av));
        return twin_float(T, v, bin(T, ST_OP_MUL, e, bin(T, ST_OP_ADD, am, f64_lit(T, 1.0))), plus_one(T, ac));
    case ST_OP_LOG:
        return twin_float(T, v, bin(T, ST_OP_ADD, bin(T, ST_OP_DIV, am, divisor64(T, av)), abs64(T, un(T, ST_OP_LOG, as_f64(T, av)))),
                          plus_one(T, ac));
    /* a test, or the bits (an integer): of the value, exact, as a
     * conversion to an integer is */
    case ST_OP_ISNAN: case ST_OP_ISINF: case ST_OP_BITS: return v;
    case ST_OP_FLOOR: case ST_OP_CEIL: case ST_OP_ROUND: case ST_OP_TRUNC:
        return twin_float(T, v, bin(T, ST_OP_ADD, am, abs64(T, v)), ac);
    case ST_OP_SIN: case ST_OP_COS: case ST_OP_ATAN: case ST_OP_TANH: /* slopes within [-1, 1] */
        return sloped(T, v, am, ac);
    case ST_OP_TAN: /* slope 1 + tan² */
        e = as_f64(T, v);
        return sloped(T, v, bin(T, ST_OP_MUL, am, bin(T, ST_OP_ADD, f64_lit(T, 1.0), bin(T, ST_OP_MUL, e, e))), ac);
    case ST_OP_ASIN: case ST_OP_ACOS: /* slope 1 / √(1 - a²) */
        e = as_f64(T, av);
        root = un(T, ST_OP_SQRT, abs64(T, bin(T, ST_OP_SUB, f64_lit(T, 1.0), bin(T, ST_OP_MUL, e, e))));
        return sloped(T, v, bin(T, ST_OP_DIV, am, divisor64(T, root)), ac);
    case ST_OP_SINH: case ST_OP_COSH: /* slope within cosh */
        return sloped(T, v, bin(T, ST_OP_MUL, am, un(T, ST_OP_COSH, as_f64(T, av))), ac);
    default: return st_fail_internal(T->err, "the magnitude of %s", st_unop_function(op)), NULL;
    }
}

/* a float converted to another float type: one rounding more */
static const st_node *conv_body(twin *T, const st_node *const *a, const void *ctx) {
    st_scalar_kind to = *(const st_scalar_kind *)ctx;
    return twin_float(T, st_conv(T->cx, to, part(T, a[0], 0), T->err), part(T, a[0], 1), plus_one(T, part(T, a[0], 2)));
}

/* ---- the twin of a node ---- */

static const st_node *twin_of(twin *T, const st_node *n);

static const st_node *twin_var(twin *T, const st_node *v) {
    const st_type *t = twin_type(T->cx, v->type);
    if (!t) return st_fail_internal(T->err, "a type too wide for its magnitudes"), NULL;
    return t == v->type ? v : st_var(T->cx, v->u.name, t, v->size);
}

/* An operator used as a function on floats: (p, q) => p op q on the twin's floats. */
static const st_node *twin_opfn(twin *T, const st_node *n) {
    st_scalar_kind k = n->type->items[0]->scalar;
    if (!st_scalar_is_float(k)) return n;
    const st_type *pt = twin_type(T->cx, st_type_scalar(T->cx, k));
    const st_node *params[2] = {st_var(T->cx, st_fresh_name(T->cx, "p"), pt, NULL),
                                st_var(T->cx, st_fresh_name(T->cx, "q"), pt, NULL)};
    st_binop op = n->u.binop;
    const st_node *body = binop_body(T, params, &op);
    return body ? st_lambda(T->cx, 2, params, body, T->err) : NULL;
}

/* A let's twin binds its variables to the types of its value's twin:
 * they may differ from their own twins where a length is known only at run
 * time (a filter's twin has its own ?k), so the body reads them through
 * the variables made here. */
static const st_node *twin_let(twin *T, const st_node *n) {
    uint32_t k = st_let_nvars(n);
    const st_node *value = twin_of(T, st_let_value(n)), *vars[ST_MAX_KIDS];
    if (!value) return NULL;
    for (uint32_t i = 0; i < k; i++) {
        const st_node *v = n->kids[i];
        const st_type *t = k == 1 ? value->type : value->type->items[i];
        vars[i] = t == v->type ? v : st_var(T->cx, v->u.name, t, v->size);
        if (!vars[i] || !st_ptrmap_put(&T->done, v, (uintptr_t)vars[i])) return st_fail_internal(T->err, "out of memory"), NULL;
    }
    const st_node *body = twin_of(T, st_let_body(n));
    return body ? st_let(T->cx, k, vars, value, body, T->err) : NULL;
}

/* The twin of sort(xs) or sort_by_key(ks, vs) with float keys: the
 * triples sorted by their values, as the def sorts the values, carrying
 * their magnitudes and counts (and the values) along: sort_by_key of the
 * triples' first parts. */
static const st_node *twin_sort(twin *T, const st_node *n, const st_node *const *kids) {
    st_ctx *cx = T->cx;
    const st_node *x = st_var(cx, st_fresh_name(cx, "x"), kids[0]->type->elem, NULL), *first = x ? part(T, x, 0) : NULL;
    const st_node *value = first ? st_lambda(cx, 1, &x, first, T->err) : NULL;
    const st_node *keys = value ? st_prim_node(cx, ST_PRIM_MAP, 2, (const st_node *[]){value, kids[0]}, T->err) : NULL;
    bool kv = n->u.prim == ST_PRIM_SORT_BY_KEY;
    const st_node *carried = kv ? st_prim_node(cx, ST_PRIM_ZIP, 2, kids, T->err) : kids[0];
    const st_node *sorted = keys && carried ? st_prim_node(cx, ST_PRIM_SORT_BY_KEY, 2, (const st_node *[]){keys, carried}, T->err) : NULL;
    const st_node *moved = sorted ? st_proj(cx, sorted, 1, T->err) : NULL;
    return moved && kv ? st_prim_node(cx, ST_PRIM_UNZIP, 1, &moved, T->err) : moved;
}

static const st_node *twin_fresh(twin *T, const st_node *n) {
    if (n->kind == ST_NODE_LET) return twin_let(T, n);
    const st_node *kids[ST_MAX_KIDS];
    for (uint32_t i = 0; i < n->nkids; i++)
        if (!(kids[i] = twin_of(T, n->kids[i]))) return NULL;
    bool on_floats = n->nkids && is_float_scalar(n->kids[0]->type);
    switch (n->kind) {
    case ST_NODE_LIT: return is_float_scalar(n->type) ? exact(T, n) : n;
    case ST_NODE_VAR: return twin_var(T, n);
    case ST_NODE_OPFN: return twin_opfn(T, n);
    case ST_NODE_UNOP: {
        st_unop op = n->u.unop;
        return on_floats ? with(T, 1, kids, unop_body, &op) : st_unary(T->cx, op, kids[0], T->err);
    }
    case ST_NODE_BINOP: {
        st_binop op = n->u.binop;
        return on_floats ? with(T, 2, kids, binop_body, &op) : st_binary(T->cx, op, kids[0], kids[1], T->err);
    }
    case ST_NODE_CONV: {
        st_scalar_kind to = n->u.conv;
        if (on_floats && st_scalar_is_float(to)) return with(T, 1, kids, conv_body, &to);
        const st_node *from = on_floats ? part(T, kids[0], 0) : kids[0];
        const st_node *c = from ? st_conv(T->cx, to, from, T->err) : NULL;
        return c && st_scalar_is_float(to) ? exact(T, c) : c;
    }
    case ST_NODE_TUPLE: return st_tuple(T->cx, n->nkids, kids, T->err);
    case ST_NODE_PROJ: return st_proj(T->cx, kids[0], n->u.index, T->err);
    case ST_NODE_IF: return st_if(T->cx, kids[0], kids[1], kids[2], T->err);
    case ST_NODE_LAMBDA: return st_lambda(T->cx, st_lambda_nparams(n), kids, kids[n->nkids - 1], T->err);
    case ST_NODE_PRIM:
        if ((n->u.prim == ST_PRIM_SORT || n->u.prim == ST_PRIM_SORT_BY_KEY) && is_float_scalar(n->kids[0]->type->elem))
            return twin_sort(T, n, kids);
        return st_prim_node(T->cx, n->u.prim, n->nkids, kids, T->err);
    default: return st_fail_internal(T->err, "no magnitude for a node of kind %d", (int)n->kind), NULL;
    }
}

static const st_node *twin_of(twin *T, const st_node *n) {
    uintptr_t seen;
    if (st_ptrmap_get(&T->done, n, &seen)) return (const st_node *)seen;
    const st_node *t = twin_fresh(T, n);
    if (t && !st_ptrmap_put(&T->done, n, (uintptr_t)t)) return st_fail_internal(T->err, "out of memory"), NULL;
    return t;
}

/* The twin of def: its parameters' floats with their magnitudes and counts,
 * its body computing both; NULL with *err when it cannot be made. */
static const st_def *twin_def(st_ctx *cx, const st_def *def, st_err *err) {
    twin T = {.cx = cx, .err = err};
    st_def *d = st_ctx_alloc(cx, sizeof *d);
    const st_node **params = st_ctx_alloc(cx, (def->nparams ? def->nparams : 1) * sizeof *params);
    bool ok = d && params;
    if (!ok) st_fail_internal(err, "out of memory");
    for (uint32_t i = 0; ok && i < def->nparams; i++) ok = (params[i] = twin_of(&T, def->params[i])) != NULL;
    const st_node *body = ok ? twin_of(&T, def->body) : NULL;
    st_ptrmap_free(&T.done);
    if (!body) return NULL;
    *d = *def;
    d->params = params;
    d->body = body;
    d->result = body->type;
    return d;
}

/* ---- values ---- */

/* An f64 leaf shaped like the float leaf v (a scalar or an array): |v|,
 * or zeros. */
static bool f64_leaf(st_arena *a, const st_value *v, bool magnitude, st_value *out, st_err *err) {
    if (v->kind == ST_VALUE_SCALAR) {
        double m = magnitude ? fabs(st_scalar_as_f64(v->scalar, v->u.s)) : 0;
        *out = st_value_scalar(ST_F64, (st_scalar){.f64 = m});
        return true;
    }
    int64_t count;
    st_leaf_count(v, &count);
    *out = *v;
    out->scalar = ST_F64;
    double *m = st_arena_zalloc(a, (size_t)(count ? count : 1) * sizeof *m);
    if (!m) return st_fail_internal(err, "out of memory");
    size_t size = st_scalar_size(v->scalar);
    for (int64_t i = 0; magnitude && i < count; i++)
        m[i] = fabs(st_scalar_as_f64(v->scalar, st_scalar_load(v->scalar, (const char *)v->u.a.data + (size_t)i * size)));
    out->u.a.data = m;
    return true;
}

/* An argument of the twin: each float leaf of v as (v, |v|, no roundings). */
static bool twin_value(st_arena *a, const st_value *v, st_value *out, st_err *err) {
    if (v->kind == ST_VALUE_TUPLE) {
        st_value *items = st_arena_alloc(a, (v->n ? v->n : 1) * sizeof *items);
        if (!items) return st_fail_internal(err, "out of memory");
        for (uint32_t i = 0; i < v->n; i++)
            if (!twin_value(a, &v->u.items[i], &items[i], err)) return false;
        *out = st_value_tuple(v->n, items);
        return true;
    }
    if (!st_scalar_is_float(v->scalar)) return (*out = *v), true;
    st_value *parts = st_arena_alloc(a, 3 * sizeof *parts);
    if (!parts) return st_fail_internal(err, "out of memory");
    parts[0] = *v;
    if (!f64_leaf(a, v, true, &parts[1], err) || !f64_leaf(a, v, false, &parts[2], err)) return false;
    *out = st_value_tuple(3, parts);
    return true;
}

/* The scale of a twin's float leaf (magnitudes m and counts c, f64):
 * (1 + √c)·m, the rounding error of c operations being about √c times
 * one's (random in sign), and at most one's times c, m the largest any
 * one can be. */
static bool scale_leaf(st_arena *a, const st_value *m, const st_value *c, st_value *out, st_err *err) {
    if (m->kind == ST_VALUE_SCALAR) {
        *out = st_value_scalar(ST_F64, (st_scalar){.f64 = (1 + sqrt(c->u.s.f64)) * m->u.s.f64});
        return true;
    }
    int64_t count;
    st_leaf_count(m, &count);
    *out = *m;
    double *s = st_arena_alloc(a, (size_t)(count ? count : 1) * sizeof *s);
    if (!s) return st_fail_internal(err, "out of memory");
    const double *mm = m->u.a.data, *cc = c->u.a.data;
    for (int64_t i = 0; i < count; i++) s[i] = (1 + sqrt(cc[i])) * mm[i];
    out->u.a.data = s;
    return true;
}

/* The twin's result r, of the def's result type t, taken apart: the value
 * and its scale, each of t's shape (the scale's float leaves f64, its other
 * leaves the value's own). */
static bool split_twin(st_arena *a, const st_type *t, const st_value *r, st_value *value, st_value *scale, st_err *err) {
    while (t->kind == ST_TYPE_ARRAY) t = t->elem; /* arrays of tuples are tuples of arrays */
    if (is_float_scalar(t)) {
        *value = r->u.items[0];
        return scale_leaf(a, &r->u.items[1], &r->u.items[2], scale, err);
    }
    if (t->kind != ST_TYPE_TUPLE) return (*value = *scale = *r), true;
    st_value *vs = st_arena_alloc(a, (t->n ? t->n : 1) * sizeof *vs), *ss = st_arena_alloc(a, (t->n ? t->n : 1) * sizeof *ss);
    if (!vs || !ss) return st_fail_internal(err, "out of memory");
    for (uint32_t i = 0; i < t->n; i++)
        if (!split_twin(a, t->items[i], &r->u.items[i], &vs[i], &ss[i], err)) return false;
    *value = st_value_tuple(t->n, vs);
    *scale = st_value_tuple(t->n, ss);
    return true;
}

bool st_eval_expected(st_ctx *cx, const st_def *def, const st_value *args, const st_binding *env, size_t nenv,
                      st_arena *a, st_expected *out, st_err *err) {
    memset(out, 0, sizeof *out);
    if (!st_type_holds_float(def->result)) {
        if (!st_eval(cx, def, args, env, nenv, a, &out->value, err)) return false;
        out->scale = out->value;
        return true;
    }
    const st_def *tw = twin_def(cx, def, err);
    if (!tw) return false;
    st_value *targs = st_arena_alloc(a, (def->nparams ? def->nparams : 1) * sizeof *targs);
    if (!targs) return st_fail_internal(err, "out of memory");
    for (uint32_t i = 0; i < def->nparams; i++)
        if (!twin_value(a, &args[i], &targs[i], err)) return false;
    st_value r;
    st_err twin_err = {0};
    if (st_eval(cx, tw, targs, env, nenv, a, &r, &twin_err)) return split_twin(a, def->result, &r, &out->value, &out->scale, err);
    /* the twin fails where the def does, with the same control flow: the
     * def's own run says where, in the user's terms */
    if (!st_eval(cx, def, args, env, nenv, a, &out->value, err)) return false;
    return st_fail_internal(err, "the reference's magnitudes failed where the reference did not: %s", twin_err.message);
}
