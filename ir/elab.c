/* ir/elab.c — the type checker: located syntax tree to typed IR.
 *
 * The typing rules themselves live in the node constructors (node.c); this
 * file resolves names, infers what the constructors cannot (the parameter
 * types of lambdas, the type of an unsuffixed literal from its context) and
 * turns a constructor's complaint into an error at the right place.
 *
 * Literals: an unsuffixed integer takes the integer type its context needs
 * (the other operand of an operator, the elements of the array a neutral
 * element belongs to, the declared type), else i32; an unsuffixed float
 * likewise among f32 and f64, else f32. An integer never becomes a float. */
#include "ast.h"
#include "ctx.h"
#include "scalar_ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct binding {
    const char *name;
    const st_node *var;
} binding;

typedef struct elab {
    st_ctx *cx;
    st_arena *scratch; /* arrays of one node's parts: off the stack, so deep
                          programs keep the recursion's frames small */
    const char *file;
    st_err *err;
    binding *scope;
    size_t n, cap;
    const st_facts *facts;
    const char **size_names;
    uint32_t nsize_names;
} elab;

static const st_node *expr(elab *e, const ast *a, const st_type *hint);

/* n pointers of scratch, or NULL with an error */
static void *parts(elab *e, uint32_t n) {
    void *p = st_arena_zalloc(e->scratch, (n ? n : 1) * sizeof(void *));
    if (!p) st_fail_internal(e->err, "out of memory");
    return p;
}

/* ---- helpers ---- */

static bool push_var(elab *e, const char *name, const st_node *var) {
    if (e->n == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 32;
        binding *s = realloc(e->scope, cap * sizeof *s);
        if (!s) return st_fail_internal(e->err, "out of memory");
        e->scope = s;
        e->cap = cap;
    }
    e->scope[e->n++] = (binding){name, var};
    return true;
}

static const st_node *lookup(const elab *e, const char *name) {
    for (size_t i = e->n; i-- > 0;)
        if (e->scope[i].name == name) return e->scope[i].var;
    return NULL;
}

/* A constructor failed: place its message at the argument it blames. */
static const st_node *relocate(elab *e, const st_err *inner, st_loc fallback,
                               const ast *const *args, uint32_t nargs) {
    *e->err = *inner;
    if (inner->kind == ST_ERR_USER)
        st_err_at(e->err, inner->arg >= 0 && (uint32_t)inner->arg < nargs ? args[inner->arg]->loc : fallback);
    e->err->arg = -1;
    return NULL;
}

/* An expression of unsuffixed literals only (`2`, `-1.5`, `(2 + 3)`), whose
 * type the other side of an operator decides. */
static bool is_weak_literal(const ast *a) {
    switch (a->kind) {
    case A_INT: case A_FLOAT: return !a->has_suffix;
    case A_UNOP: return a->unop == ST_OP_NEG && is_weak_literal(a->kids[0]);
    case A_BINOP:
        return st_binop_result(a->binop, ST_I32) == ST_I32 && is_weak_literal(a->kids[0]) &&
               is_weak_literal(a->kids[1]);
    default: return false;
    }
}

static const char *known_functions[] = {
    "map", "reduce", "scan", "split", "join", "zip", "unzip", "iota", "replicate", "transpose",
    "scatter", "reduce_by_index", "iterate", "get", "mapSeq", "reduceSeq", "scanSeq", "mapGlb",
    "mapWrg", "mapLcl", "toGlobal", "toLocal", "toPrivate", "min", "max",
    "bool", "i32", "u32", "i64", "u64", "f32", "f64"};

static void suggest(const char *name, const char **cands, int ncands, char *out, size_t cap) {
    const char *close[3];
    int k = st_closest_names(name, cands, ncands, close, 3);
    out[0] = 0;
    if (!k) return;
    size_t len = (size_t)snprintf(out, cap, "; did you mean ");
    for (int i = 0; i < k && len < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s`%s`", i == 0 ? "" : i == k - 1 ? " or " : ", ", close[i]);
    if (len < cap) snprintf(out + len, cap - len, "?");
}

/* The names a lambda or a let pattern binds must differ. */
static bool distinct_names(elab *e, const ast *a, const char *what) {
    for (uint32_t i = 0; i < a->nnames; i++)
        for (uint32_t j = 0; j < i; j++)
            if (a->names[j] == a->names[i])
                return st_fail(e->err, a->name_locs[i], "`%s` is %s twice", a->names[i], what);
    return true;
}

/* ---- literals ---- */

static const st_node *int_literal(elab *e, const ast *a, const st_type *hint) {
    st_scalar_kind k = ST_I32;
    if (a->has_suffix) k = a->suffix;
    else if (hint && st_type_is_int(hint)) k = hint->scalar;
    uint64_t max_pos, max_neg;
    switch (k) {
    case ST_I32: max_pos = INT32_MAX; max_neg = (uint64_t)INT32_MAX + 1; break;
    case ST_I64: max_pos = INT64_MAX; max_neg = (uint64_t)INT64_MAX + 1; break;
    case ST_U32: max_pos = UINT32_MAX; max_neg = 0; break;
    default: max_pos = UINT64_MAX; max_neg = 0; break;
    }
    if (a->magnitude > (a->negative ? max_neg : max_pos)) {
        st_fail(e->err, a->loc, "%s%llu does not fit in %s", a->negative ? "-" : "",
                (unsigned long long)a->magnitude, st_scalar_name(k));
        return NULL;
    }
    uint64_t bits = a->negative ? 0 - a->magnitude : a->magnitude;
    st_scalar v = {.u64 = bits};
    if (k == ST_I32) v.i32 = (int32_t)(int64_t)bits;
    if (k == ST_U32) v = (st_scalar){.u32 = (uint32_t)bits};
    return st_lit(e->cx, k, v);
}

static const st_node *float_literal(elab *e, const ast *a, const st_type *hint) {
    st_scalar_kind k = ST_F32;
    if (a->has_suffix) k = a->suffix;
    else if (hint && hint->kind == ST_TYPE_SCALAR && st_scalar_is_float(hint->scalar)) k = hint->scalar;
    st_scalar v = {.bits = 0};
    double d;
    if (!strcmp(a->text, "inf")) d = INFINITY;
    else if (!strcmp(a->text, "nan")) d = NAN;
    else d = k == ST_F32 ? strtof(a->text, NULL) : strtod(a->text, NULL);
    if (a->negative) d = -d;
    if (k == ST_F32) v.f32 = (float)d;
    else v.f64 = d;
    if (isinf(k == ST_F32 ? v.f32 : v.f64) && strcmp(a->text, "inf"))
        return st_fail(e->err, a->loc, "%s is out of the range of %s", a->text, st_scalar_name(k)), NULL;
    return st_lit(e->cx, k, v);
}

/* ---- sizes and types ---- */

static bool is_size_name(const elab *e, const char *name) {
    for (uint32_t i = 0; i < e->nsize_names; i++)
        if (e->size_names[i] == name) return true;
    return false;
}

static const st_size *size_expr(elab *e, const ast *a) {
    st_err inner = {0};
    const st_size *l, *r, *s = NULL;
    switch (a->kind) {
    case A_INT:
        if (a->has_suffix && !st_scalar_is_int(a->suffix)) break;
        if (a->magnitude > (a->negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX))
            return st_fail(e->err, a->loc, "the number %s%llu is too large for a size", a->negative ? "-" : "",
                           (unsigned long long)a->magnitude), NULL;
        return st_size_const(e->cx, a->negative ? (int64_t)(0 - a->magnitude) : (int64_t)a->magnitude);
    case A_NAME:
        if (is_size_name(e, a->name)) return st_size_var(e->cx, e->facts, a->name);
        st_fail(e->err, a->loc, "unknown size `%s`; sizes are named in the parameters' types (`xs: [%s]f32`) or are integer parameters",
                a->name, a->name);
        return NULL;
    case A_UNOP:
        if (a->unop != ST_OP_NEG || !(l = size_expr(e, a->kids[0]))) break;
        s = st_size_sub(e->cx, st_size_const(e->cx, 0), l, &inner);
        break;
    case A_BINOP:
        if (a->binop > ST_OP_MOD) break;
        if (!(l = size_expr(e, a->kids[0])) || !(r = size_expr(e, a->kids[1]))) return NULL;
        switch (a->binop) {
        case ST_OP_ADD: s = st_size_add(e->cx, l, r, &inner); break;
        case ST_OP_SUB: s = st_size_sub(e->cx, l, r, &inner); break;
        case ST_OP_MUL: s = st_size_mul(e->cx, l, r, &inner); break;
        case ST_OP_DIV: s = st_size_div(e->cx, l, r, &inner); break;
        default: s = st_size_mod(e->cx, l, r, &inner); break;
        }
        break;
    case A_CALL:
        if ((strcmp(a->name, "pow") && strcmp(a->name, "log")) || a->nkids != 2) break;
        if (!(l = size_expr(e, a->kids[0])) || !(r = size_expr(e, a->kids[1]))) return NULL;
        s = a->name[0] == 'p' ? st_size_pow(e->cx, l, r, &inner) : st_size_log(e->cx, l, r, &inner);
        break;
    default: break;
    }
    if (s) return s;
    if (inner.message[0]) {
        *e->err = inner;
        st_err_at(e->err, a->loc);
        return NULL;
    }
    st_fail(e->err, a->loc, "an array length is made of whole numbers, size names, + - * / %%, pow(b, e) and log(b, x)");
    return NULL;
}

static const st_type *type_expr(elab *e, const ast_type *t) {
    switch (t->kind) {
    case T_SCALAR: return st_type_scalar(e->cx, t->scalar);
    case T_ARRAY: {
        const st_size *s = size_expr(e, t->size);
        int64_t v;
        if (s && st_size_is_const(s, &v) && v < 0)
            return st_fail(e->err, t->size->loc, "an array length cannot be negative (%lld)", (long long)v), NULL;
        const st_type *elem = s ? type_expr(e, t->elem) : NULL;
        return elem ? st_type_array(e->cx, s, elem) : NULL;
    }
    default: {
        if (t->n > 64) return st_fail(e->err, t->loc, "a tuple has at most 64 components"), NULL;
        const st_type **items = parts(e, t->n);
        if (!items) return NULL;
        for (uint32_t i = 0; i < t->n; i++)
            if (!(items[i] = type_expr(e, t->items[i]))) return NULL;
        return st_type_tuple(e->cx, t->n, items);
    }
    }
}

static bool expect_type(elab *e, const st_type *want, const st_type *got, st_loc at, const char *what) {
    if (want == got) return true;
    st_buf w = {0}, g = {0};
    st_type_print(want, &w);
    st_type_print(got, &g);
    st_fail(e->err, at, "%s has type %s, but %s was declared", what, g.data ? g.data : "?", w.data ? w.data : "?");
    st_buf_free(&w);
    st_buf_free(&g);
    return false;
}

/* ---- functions (the arguments of primitives) ---- */

static const st_node *opfn(elab *e, st_binop op, st_loc loc, const st_type *const *params, int np,
                           const char *prim) {
    if (np != 2 || params[0] != params[1] || params[0]->kind != ST_TYPE_SCALAR) {
        st_buf b = {0};
        for (int i = 0; i < np; i++) {
            if (i) st_buf_puts(&b, ", ");
            st_type_print(params[i], &b);
        }
        st_fail(e->err, loc, "`%s` combines two scalars of one type, but %s's function here takes (%s); write a lambda",
                st_binop_name(op), prim, b.data ? b.data : "");
        st_buf_free(&b);
        return NULL;
    }
    st_err inner = {0};
    const st_node *n = st_opfn(e->cx, op, params[0]->scalar, &inner);
    return n ? n : relocate(e, &inner, loc, NULL, 0);
}

__attribute__((noinline)) static const st_node *arity_error(elab *e, const ast *a, const st_type *const *params,
                                                            int np, const char *prim) {
    st_buf b = {0};
    for (int i = 0; i < np; i++) {
        if (i) st_buf_puts(&b, ", ");
        st_type_print(params[i], &b);
    }
    st_fail(e->err, a->loc, "this lambda takes %u parameter%s, but %s passes %d (%s)", a->nnames,
            a->nnames == 1 ? "" : "s", prim, np, b.data ? b.data : "");
    st_buf_free(&b);
    return NULL;
}

static const st_node *lambda(elab *e, const ast *a, const st_type *const *params, int np,
                             const st_type *result_hint, const char *prim) {
    uint32_t k = a->nnames;
    if (k > 63) return st_fail(e->err, a->loc, "a lambda has at most 63 parameters"), NULL;
    const st_type **types = parts(e, k);
    const st_node **vars = parts(e, k);
    if (!types || !vars) return NULL;
    if ((int)k == np) {
        for (uint32_t i = 0; i < k; i++) types[i] = params[i];
    } else if (np == 1 && params[0]->kind == ST_TYPE_TUPLE && params[0]->n == k && k > 1) {
        for (uint32_t i = 0; i < k; i++) types[i] = params[0]->items[i];
    } else {
        return arity_error(e, a, params, np, prim);
    }
    size_t mark = e->n;
    if (!distinct_names(e, a, "a parameter named")) return NULL;
    for (uint32_t i = 0; i < k; i++) {
        if (a->annots[i]) {
            const st_type *t = type_expr(e, a->annots[i]);
            if (!t || !expect_type(e, t, types[i], a->name_locs[i], "this parameter")) return NULL;
        }
        vars[i] = st_var(e->cx, a->names[i], types[i], NULL);
        if (!vars[i] || !push_var(e, a->names[i], vars[i])) return NULL;
    }
    const st_node *body = expr(e, a->kids[0], result_hint);
    e->n = mark;
    if (!body) return NULL;
    st_err inner = {0};
    const st_node *n = st_lambda(e->cx, k, vars, body, &inner);
    return n ? n : relocate(e, &inner, a->loc, NULL, 0);
}

static const st_node *function(elab *e, const ast *a, const st_type *const *params, int np,
                               const st_type *result_hint, const char *prim) {
    if (a->kind == A_LAMBDA) return lambda(e, a, params, np, result_hint, prim);
    if (a->kind == A_OPREF) return opfn(e, a->binop, a->loc, params, np, prim);
    if (a->kind == A_NAME && !lookup(e, a->name) && (!strcmp(a->name, "min") || !strcmp(a->name, "max")))
        return opfn(e, a->name[1] == 'i' ? ST_OP_MIN : ST_OP_MAX, a->loc, params, np, prim);
    st_fail(e->err, a->loc, "%s expects a function here: a lambda like `x => x + 1` or an operator like `+`", prim);
    return NULL;
}

/* ---- calls ---- */

static const st_node *prim_call(elab *e, st_prim p, const ast *a, const st_type *hint) {
    const st_prim_info *info = st_prim_get(p);
    uint32_t n = a->nkids;
    if (!st_prim_takes(p, n)) {
        char arity[48];
        st_prim_describe_arity(p, arity, sizeof arity);
        st_fail(e->err, a->loc, "%s takes %s argument%s, but was given %u", info->name, arity,
                strcmp(arity, "1") ? "s" : "", n);
        return NULL;
    }
    const st_node **args = parts(e, n);
    const st_type **types = parts(e, n);
    if (!args || !types) return NULL;
    /* data first, then neutral elements (typed from the data), then functions */
    for (int pass = 0; pass < 3; pass++)
        for (uint32_t i = 0; i < n; i++) {
            st_arg_role role = st_prim_arg_role(p, (int)i, n);
            if ((int)role != pass) continue;
            const st_type *params[2], *result = NULL;
            int np = 0;
            const st_type *want = NULL;
            if (role != ST_ARG_DATA) {
                st_err inner = {0};
                if (!st_prim_expect(e->cx, p, (int)i, types, (int)n, params, &np, &result, &inner))
                    return relocate(e, &inner, a->loc, (const ast *const *)a->kids, n);
                want = params[0];
            } else if (p == ST_PRIM_REPLICATE && i == 1 && hint && hint->kind == ST_TYPE_ARRAY) {
                want = hint->elem;
            }
            if (role == ST_ARG_FUN) {
                args[i] = function(e, a->kids[i], params, np, result, info->name);
            } else {
                args[i] = expr(e, a->kids[i], want);
            }
            if (!args[i]) return NULL;
            types[i] = args[i]->type;
        }
    st_err inner = {0};
    const st_node *node = st_prim_node(e->cx, p, n, args, &inner);
    return node ? node : relocate(e, &inner, a->loc, (const ast *const *)a->kids, n);
}

static const st_node *binop(elab *e, st_binop op, const ast *l, const ast *r, st_loc loc,
                            const st_type *hint) {
    bool same_type = st_binop_result(op, ST_I32) == ST_I32; /* arithmetic keeps the operands' type */
    const st_type *operand_hint = same_type ? hint : NULL;
    const st_node *ln, *rn;
    if (is_weak_literal(l) && !is_weak_literal(r)) {
        rn = expr(e, r, operand_hint);
        ln = rn ? expr(e, l, rn->type) : NULL;
    } else {
        ln = expr(e, l, operand_hint);
        rn = ln ? expr(e, r, ln->type) : NULL;
    }
    if (!ln || !rn) return NULL;
    st_err inner = {0};
    const st_node *n = st_binary(e->cx, op, ln, rn, &inner);
    const ast *operands[2] = {l, r};
    return n ? n : relocate(e, &inner, loc, operands, 2);
}

__attribute__((noinline)) static const st_node *unknown_function(elab *e, const ast *a) {
    char hint_text[128];
    suggest(a->name, known_functions, (int)(sizeof known_functions / sizeof *known_functions), hint_text, sizeof hint_text);
    st_fail(e->err, a->loc, "unknown function `%s`%s", a->name, hint_text);
    return NULL;
}

static const st_node *call(elab *e, const ast *a, const st_type *hint) {
    st_prim p;
    st_scalar_kind k;
    if (st_prim_from_name(a->name, strlen(a->name), &p)) return prim_call(e, p, a, hint);
    if (st_scalar_from_name(a->name, strlen(a->name), &k)) {
        if (a->nkids != 1) return st_fail(e->err, a->loc, "%s(…) converts one value, but was given %u", a->name, a->nkids), NULL;
        const st_node *x = expr(e, a->kids[0], NULL);
        if (!x) return NULL;
        st_err inner = {0};
        const st_node *n = st_conv(e->cx, k, x, &inner);
        return n ? n : relocate(e, &inner, a->loc, (const ast *const *)a->kids, 1);
    }
    if (!strcmp(a->name, "min") || !strcmp(a->name, "max")) {
        if (a->nkids != 2) return st_fail(e->err, a->loc, "%s takes 2 arguments, but was given %u", a->name, a->nkids), NULL;
        return binop(e, a->name[1] == 'i' ? ST_OP_MIN : ST_OP_MAX, a->kids[0], a->kids[1], a->loc, hint);
    }
    return unknown_function(e, a);
}

/* ---- expressions ---- */

__attribute__((noinline)) static const st_node *unknown_name(elab *e, const ast *a);

static const st_node *name(elab *e, const ast *a) {
    const st_node *v = lookup(e, a->name);
    return v ? v : unknown_name(e, a);
}

static const st_node *unknown_name(elab *e, const ast *a) {
    st_prim p;
    if (st_prim_from_name(a->name, strlen(a->name), &p))
        return st_fail(e->err, a->loc, "`%s` is a primitive; call it, as in `%s(…)` or `xs |> %s`", a->name, a->name, a->name), NULL;
    if (!strcmp(a->name, "min") || !strcmp(a->name, "max"))
        return st_fail(e->err, a->loc, "`%s` is a function; call it as %s(a, b), or pass it to reduce or scan", a->name, a->name), NULL;
    const char *cands[256];
    int nc = 0;
    for (size_t i = e->n; i-- > 0 && nc < 256;) cands[nc++] = e->scope[i].name;
    char hint_text[128];
    suggest(a->name, cands, nc, hint_text, sizeof hint_text);
    st_fail(e->err, a->loc, "unknown name `%s`%s", a->name, hint_text);
    return NULL;
}

static const st_node *let(elab *e, const ast *a, const st_type *hint) {
    const st_type *annot = NULL;
    if (a->annots[0] && !(annot = type_expr(e, a->annots[0]))) return NULL;
    const st_node *value = expr(e, a->kids[0], annot);
    if (!value) return NULL;
    if (annot && !expect_type(e, annot, value->type, a->name_locs[0], "the value bound here")) return NULL;
    uint32_t k = a->nnames;
    if (k > 62) return st_fail(e->err, a->loc, "a pattern has at most 62 names"), NULL;
    const st_type *t = value->type;
    if (a->tuple_pattern && k > 1 && (t->kind != ST_TYPE_TUPLE || t->n != k)) {
        st_buf b = {0};
        st_type_print(t, &b);
        st_fail(e->err, a->loc, "the pattern has %u names, but the value has type %s", k, b.data ? b.data : "?");
        st_buf_free(&b);
        return NULL;
    }
    const st_node **vars = parts(e, k);
    if (!vars) return NULL;
    size_t mark = e->n;
    if (!distinct_names(e, a, "bound")) return NULL;
    for (uint32_t i = 0; i < k; i++) {
        const st_type *vt = k == 1 ? t : t->items[i];
        const st_node *part = k == 1 ? value : value->kind == ST_NODE_TUPLE ? value->kids[i] : NULL;
        vars[i] = part ? st_let_var(e->cx, a->names[i], part) : st_var(e->cx, a->names[i], vt, NULL);
        if (!vars[i] || !push_var(e, a->names[i], vars[i])) return NULL;
    }
    const st_node *body = expr(e, a->kids[1], hint);
    e->n = mark;
    if (!body) return NULL;
    st_err inner = {0};
    const st_node *n = st_let(e->cx, k, vars, value, body, &inner);
    return n ? n : relocate(e, &inner, a->loc, NULL, 0);
}

/* ---- loops ---- */

/* "the loop's X has type T, but …": a message naming two types */
static bool type_clash(elab *e, st_loc at, const char *fmt, const st_type *got, const st_type *want) {
    st_buf g = {0}, w = {0};
    st_type_print(got, &g);
    st_type_print(want, &w);
    st_fail(e->err, at, fmt, g.data ? g.data : "?", w.data ? w.data : "?");
    st_buf_free(&g);
    st_buf_free(&w);
    return false;
}

/* The accumulator's variables, pushed in scope: one per name of the pattern. */
static bool loop_vars(elab *e, const ast *a, const st_type *t, const st_node **vars) {
    uint32_t k = a->nnames;
    if (a->tuple_pattern && k > 1 && (t->kind != ST_TYPE_TUPLE || t->n != k)) {
        st_buf b = {0};
        st_type_print(t, &b);
        st_fail(e->err, a->loc, "the pattern has %u names, but the loop's initial value has type %s", k, b.data ? b.data : "?");
        st_buf_free(&b);
        return false;
    }
    if (!distinct_names(e, a, "bound")) return false;
    for (uint32_t i = 0; i < k; i++) {
        /* not st_let_var: the accumulator changes, so it stands for no size */
        vars[i] = st_var(e->cx, a->names[i], k == 1 ? t : t->items[i], NULL);
        if (!vars[i] || !push_var(e, a->names[i], vars[i])) return false;
    }
    return true;
}

/* The body (or condition) of a loop, in the accumulator's scope (and the index's). */
static const st_node *loop_part(elab *e, const ast *a, const ast *part, const st_type *t, const st_node **vars,
                                const st_node *index, const st_type *want, bool cond) {
    size_t mark = e->n;
    if (index && !push_var(e, index->u.name, index)) return NULL;
    if (!loop_vars(e, a, t, vars)) return NULL;
    const st_node *n = expr(e, part, want);
    e->n = mark;
    if (!n) return NULL;
    if (n->type != want) {
        if (cond)
            return type_clash(e, part->loc, "the loop's condition has type %s, but it must be %s", n->type, want), NULL;
        return type_clash(e, part->loc,
                          "the loop's body has type %s, but its accumulator has type %s: a loop's accumulator keeps "
                          "its type and its sizes from one iteration to the next",
                          n->type, want), NULL;
    }
    return n;
}

/* loop acc = init for i < n do body: loop(n, (i, acc) => body, init); a
 * tuple pattern `(a, b)` is one parameter destructured by a let, because
 * the function takes the index besides.
 * loop acc = init while c do body: while(acc => c, acc => body, init); a
 * tuple pattern is the lambdas' own destructuring. */
static const st_node *loop(elab *e, const ast *a, const st_type *hint) {
    st_ctx *cx = e->cx;
    uint32_t k = a->nnames;
    if (k > 62) return st_fail(e->err, a->loc, "a pattern has at most 62 names"), NULL;
    const st_node *init = expr(e, a->kids[0], hint);
    if (!init) return NULL;
    const st_type *t = init->type, *i64 = st_type_scalar(cx, ST_I64);
    const st_node **vars = parts(e, k), **cvars = parts(e, k);
    if (!vars || !cvars) return NULL;
    st_err inner = {0};
    const st_node *args[3];
    if (a->bval) { /* while */
        const st_node *c = loop_part(e, a, a->kids[1], t, cvars, NULL, st_type_scalar(cx, ST_BOOL), true);
        const st_node *body = c ? loop_part(e, a, a->kids[2], t, vars, NULL, t, false) : NULL;
        if (!body) return NULL;
        if (!(args[0] = st_lambda(cx, k, cvars, c, &inner)) || !(args[1] = st_lambda(cx, k, vars, body, &inner)))
            return relocate(e, &inner, a->loc, NULL, 0);
        args[2] = init;
        const st_node *n = st_prim_node(cx, ST_PRIM_WHILE, 3, args, &inner);
        return n ? n : relocate(e, &inner, a->loc, NULL, 0);
    }
    const ast *iname = a->kids[1], *count = a->kids[2];
    const st_node *n = expr(e, count, i64);
    if (!n) return NULL;
    if (!st_type_is_int(n->type))
        return type_clash(e, count->loc, "the loop's count has type %s, but it must be an integer (%s)", n->type, i64), NULL;
    if (n->type != i64 && !(n = st_conv(cx, ST_I64, n, &inner))) return relocate(e, &inner, count->loc, NULL, 0);
    for (uint32_t j = 0; j < k; j++)
        if (a->names[j] == iname->name)
            return st_fail(e->err, iname->loc, "`%s` is both the loop's index and its accumulator", iname->name), NULL;
    const st_node *index = st_var(cx, iname->name, i64, NULL);
    if (!index) return st_fail_internal(e->err, "out of memory"), NULL;
    const st_node *body = loop_part(e, a, a->kids[3], t, vars, index, t, false);
    if (!body) return NULL;
    const st_node *acc = vars[0];
    if (k > 1) { /* (i, acc) => let (a, b) = acc in body */
        acc = st_var(cx, st_fresh_name(cx, "acc"), t, NULL);
        if (!acc || !(body = st_let(cx, k, vars, acc, body, &inner))) return relocate(e, &inner, a->loc, NULL, 0);
    }
    const st_node *params[2] = {index, acc};
    if (!(args[1] = st_lambda(cx, 2, params, body, &inner))) return relocate(e, &inner, a->loc, NULL, 0);
    args[0] = n;
    args[2] = init;
    const st_node *r = st_prim_node(cx, ST_PRIM_LOOP, 3, args, &inner);
    return r ? r : relocate(e, &inner, a->loc, NULL, 0);
}

static const st_node *expr(elab *e, const ast *a, const st_type *hint) {
    st_err inner = {0};
    const st_node *n = NULL;
    switch (a->kind) {
    case A_INT: return int_literal(e, a, hint);
    case A_FLOAT: return float_literal(e, a, hint);
    case A_BOOL: return st_lit(e->cx, ST_BOOL, (st_scalar){.b = a->bval});
    case A_NAME: return name(e, a);
    case A_TUPLE: {
        if (a->nkids > 64) return st_fail(e->err, a->loc, "a tuple has at most 64 components"), NULL;
        const st_node **items = parts(e, a->nkids);
        if (!items) return NULL;
        for (uint32_t i = 0; i < a->nkids; i++) {
            const st_type *h = hint && hint->kind == ST_TYPE_TUPLE && hint->n == a->nkids ? hint->items[i] : NULL;
            if (!(items[i] = expr(e, a->kids[i], h))) return NULL;
        }
        n = st_tuple(e->cx, a->nkids, items, &inner);
        break;
    }
    case A_PROJ: {
        const st_node *t = expr(e, a->kids[0], NULL);
        if (!t) return NULL;
        n = st_proj(e->cx, t, a->index, &inner);
        if (!n) return relocate(e, &inner, a->loc, NULL, 0);
        return n;
    }
    case A_UNOP: {
        const st_node *x = expr(e, a->kids[0], a->unop == ST_OP_NEG ? hint : NULL);
        if (!x) return NULL;
        n = st_unary(e->cx, a->unop, x, &inner);
        break;
    }
    case A_BINOP: return binop(e, a->binop, a->kids[0], a->kids[1], a->loc, hint);
    case A_CALL: return call(e, a, hint);
    case A_OPREF:
        return st_fail(e->err, a->loc, "`%s` on its own is a function, which is only accepted where one is expected (map, reduce, scan, …)",
                       st_binop_name(a->binop)), NULL;
    case A_LAMBDA:
        return st_fail(e->err, a->loc, "a lambda is only accepted as the function of a primitive such as map, reduce or scan"), NULL;
    case A_LET: return let(e, a, hint);
    case A_LOOP: return loop(e, a, hint);
    case A_IF: {
        const st_node *c = expr(e, a->kids[0], NULL), *t, *f;
        if (!c) return NULL;
        if (is_weak_literal(a->kids[1]) && !is_weak_literal(a->kids[2])) {
            f = expr(e, a->kids[2], hint);
            t = f ? expr(e, a->kids[1], f->type) : NULL;
        } else {
            t = expr(e, a->kids[1], hint);
            f = t ? expr(e, a->kids[2], t->type) : NULL;
        }
        if (!t || !f) return NULL;
        n = st_if(e->cx, c, t, f, &inner);
        break;
    }
    }
    return n ? n : relocate(e, &inner, a->loc, (const ast *const *)a->kids, a->nkids);
}

/* ---- definitions ---- */

typedef struct names {
    const char **items;
    uint32_t n;
    st_loc *locs;
} names;

static bool add_name(elab *e, names *ns, const char *name, st_loc loc) {
    for (uint32_t i = 0; i < ns->n; i++)
        if (ns->items[i] == name) return true;
    const char **items = st_ctx_alloc(e->cx, (ns->n + 1) * sizeof *items);
    st_loc *locs = st_ctx_alloc(e->cx, (ns->n + 1) * sizeof *locs);
    if (!items || !locs) return st_fail_internal(e->err, "out of memory");
    if (ns->n) {
        memcpy(items, ns->items, ns->n * sizeof *items);
        memcpy(locs, ns->locs, ns->n * sizeof *locs);
    }
    items[ns->n] = name;
    locs[ns->n++] = loc;
    ns->items = items;
    ns->locs = locs;
    return true;
}

static const ast_param *find_param(const ast_def *d, const char *name) {
    for (uint32_t i = 0; i < d->nparams; i++)
        if (d->params[i].name == name) return &d->params[i];
    return NULL;
}

/* The names in a parameter's array lengths: integer parameters, or else new
 * (implicit) size variables. */
static bool collect_sizes(elab *e, const ast_def *d, const ast *a, names *implicit) {
    if (!a) return true;
    if (a->kind == A_NAME) {
        const ast_param *prm = find_param(d, a->name);
        if (!prm) return add_name(e, implicit, a->name, a->loc);
        if (prm->type->kind == T_SCALAR && st_scalar_is_int(prm->type->scalar)) return true;
        return st_fail(e->err, a->loc, "`%s` is a parameter but not an integer, so it cannot be an array length", a->name);
    }
    for (uint32_t i = 0; i < a->nkids; i++)
        if (!collect_sizes(e, d, a->kids[i], implicit)) return false;
    return true;
}

static bool collect_type_sizes(elab *e, const ast_def *d, const ast_type *t, names *implicit) {
    switch (t->kind) {
    case T_SCALAR: return true;
    case T_ARRAY: return collect_sizes(e, d, t->size, implicit) && collect_type_sizes(e, d, t->elem, implicit);
    default:
        for (uint32_t i = 0; i < t->n; i++)
            if (!collect_type_sizes(e, d, t->items[i], implicit)) return false;
        return true;
    }
}

/* Is `name` the whole length of some array in t, so that it can be read off
 * the argument when the program runs? */
static bool binds(const ast_type *t, const char *name) {
    switch (t->kind) {
    case T_SCALAR: return false;
    case T_ARRAY: return (t->size->kind == A_NAME && t->size->name == name) || binds(t->elem, name);
    default:
        for (uint32_t i = 0; i < t->n; i++)
            if (binds(t->items[i], name)) return true;
        return false;
    }
}

static bool def(elab *e, const ast_def *d, st_def *out) {
    out->name = d->name;
    out->loc = d->loc;
    for (uint32_t i = 0; i < d->nparams; i++)
        for (uint32_t j = 0; j < i; j++)
            if (d->params[i].name == d->params[j].name)
                return st_fail(e->err, d->params[i].loc, "the parameter `%s` is declared twice", d->params[i].name);

    names implicit = {0};
    for (uint32_t i = 0; i < d->nparams; i++)
        if (!collect_type_sizes(e, d, d->params[i].type, &implicit)) return false;
    for (uint32_t i = 0; i < implicit.n; i++) {
        bool bound = false;
        for (uint32_t k = 0; k < d->nparams && !bound; k++) bound = binds(d->params[k].type, implicit.items[i]);
        if (!bound)
            return st_fail(e->err, implicit.locs[i], "the size `%s` is never the whole length of a parameter (as in `[%s]f32`), so its value would be unknown when the program runs",
                           implicit.items[i], implicit.items[i]);
    }
    /* the names usable in types: implicit sizes and integer parameters */
    names sizes = implicit;
    for (uint32_t i = 0; i < d->nparams; i++)
        if (d->params[i].type->kind == T_SCALAR && st_scalar_is_int(d->params[i].type->scalar) &&
            !add_name(e, &sizes, d->params[i].name, d->params[i].loc))
            return false;
    e->size_names = sizes.items;
    e->nsize_names = sizes.n;

    const st_facts *facts = st_ctx_alloc(e->cx, sizeof(st_facts));
    if (!facts) return st_fail_internal(e->err, "out of memory");
    *(st_facts *)facts = (st_facts){0, NULL};
    for (uint32_t i = 0; i < d->nfacts; i++) {
        const ast_fact *f = &d->facts[i];
        if (!is_size_name(e, f->name))
            return st_fail(e->err, f->loc, "`%s` is not a size of `%s`; a where clause states facts about the sizes in the parameters' types",
                           f->name, d->name);
        if (f->divisor == 1) continue;
        if (!(facts = st_facts_add(e->cx, facts, f->name, f->divisor)))
            return st_fail(e->err, f->loc, "the facts about `%s` combine to a divisor too large", f->name);
    }
    e->facts = facts;
    out->facts = facts;

    const st_node **sizes_v = st_ctx_alloc(e->cx, (implicit.n ? implicit.n : 1) * sizeof *sizes_v);
    const st_node **params = st_ctx_alloc(e->cx, (d->nparams ? d->nparams : 1) * sizeof *params);
    if (!sizes_v || !params) return st_fail_internal(e->err, "out of memory");
    e->n = 0;
    const st_type *i64 = st_type_scalar(e->cx, ST_I64);
    for (uint32_t i = 0; i < implicit.n; i++) {
        sizes_v[i] = st_var(e->cx, implicit.items[i], i64, st_size_var(e->cx, facts, implicit.items[i]));
        if (!sizes_v[i] || !push_var(e, implicit.items[i], sizes_v[i])) return false;
    }
    for (uint32_t i = 0; i < d->nparams; i++) {
        const st_type *t = type_expr(e, d->params[i].type);
        if (!t) return false;
        const st_size *size = st_type_is_int(t) ? st_size_var(e->cx, facts, d->params[i].name) : NULL;
        params[i] = st_var(e->cx, d->params[i].name, t, size);
        if (!params[i] || !push_var(e, d->params[i].name, params[i])) return false;
    }
    out->nsizes = implicit.n;
    out->sizes = sizes_v;
    out->nparams = d->nparams;
    out->params = params;

    const st_type *declared = NULL;
    if (d->result && !(declared = type_expr(e, d->result))) return false;
    const st_node *body = expr(e, d->body, declared);
    if (!body) return false;
    if (declared && declared != body->type) {
        st_buf w = {0}, g = {0};
        st_type_print(declared, &w);
        st_type_print(body->type, &g);
        st_fail(e->err, d->result->loc, "`%s` declares its result as %s, but its body has type %s", d->name,
                w.data ? w.data : "?", g.data ? g.data : "?");
        st_buf_free(&w);
        st_buf_free(&g);
        return false;
    }
    out->declared_result = declared != NULL;
    out->result = body->type;
    out->body = body;
    return true;
}

const st_program *st_ast_elaborate(st_ctx *cx, const char *file, const ast_program *p,
                                   st_err *err) {
    st_program *prog = st_ctx_alloc(cx, sizeof *prog);
    st_def *defs = st_ctx_alloc(cx, p->ndefs * sizeof *defs);
    if (!prog || !defs) return st_fail_internal(err, "out of memory"), NULL;
    memset(defs, 0, p->ndefs * sizeof *defs);
    elab e = {.cx = cx, .scratch = st_arena_new(), .file = file, .err = err};
    bool ok = e.scratch != NULL || st_fail_internal(err, "out of memory");
    for (uint32_t i = 0; i < p->ndefs && ok; i++) {
        for (uint32_t j = 0; j < i && ok; j++)
            if (p->defs[j].name == p->defs[i].name)
                ok = st_fail(err, p->defs[i].loc, "`%s` is defined twice (first at line %d)", p->defs[i].name, p->defs[j].loc.line);
        ok = ok && def(&e, &p->defs[i], &defs[i]);
    }
    free(e.scope);
    st_arena_free(e.scratch);
    if (!ok) return NULL;
    prog->file = st_intern_cstr(cx, file);
    prog->ndefs = p->ndefs;
    prog->defs = defs;
    return prog;
}
