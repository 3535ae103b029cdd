/* strategies/build.h — internal to strategies/: building IR in rules.
 *
 * Every helper takes nodes that may be NULL (an earlier step failed) and then
 * returns NULL itself, so a rule builds a whole expression and checks once
 * at the end. The first failure's message stays in b->err. A failure here is
 * a bug in a rule (its output would not type-check), so it is reported as an
 * internal error. */
#ifndef STRATA_STRATEGIES_BUILD_H
#define STRATA_STRATEGIES_BUILD_H

#include "rewrite/rewrite.h"

#include <string.h>

typedef struct bld {
    st_rw *rw;
    st_ctx *cx;
    st_err *err;
} bld;

static inline bld bld_of(st_rw *rw, st_err *err) { return (bld){rw, st_rw_ctx(rw), err}; }

/* Turn a constructor's complaint into an internal error (once). */
static inline const st_node *b_check(bld *b, const st_node *n, const st_err *inner) {
    if (!n && !b->err->message[0]) {
        st_fail_internal(b->err, "a rule built an ill-typed expression: %s", inner->message);
    }
    return n;
}

static inline bool b_all(const st_node *const *xs, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        if (!xs[i]) return false;
    return true;
}

static inline const st_node *b_prim_n(bld *b, st_prim p, uint32_t n, const st_node *const *args) {
    if (!b_all(args, n)) return NULL;
    st_err e = {0};
    return b_check(b, st_prim_node(b->cx, p, n, args, &e), &e);
}
#define B_NARGS(...) (sizeof((const st_node *[]){__VA_ARGS__}) / sizeof(const st_node *))
#define PRIM(b, p, ...) b_prim_n((b), (p), (uint32_t)B_NARGS(__VA_ARGS__), (const st_node *[]){__VA_ARGS__})

static inline const st_node *b_binop(bld *b, st_binop op, const st_node *x, const st_node *y) {
    if (!x || !y) return NULL;
    st_err e = {0};
    return b_check(b, st_binary(b->cx, op, x, y, &e), &e);
}

static inline const st_node *b_if(bld *b, const st_node *c, const st_node *x, const st_node *y) {
    if (!c || !x || !y) return NULL;
    st_err e = {0};
    return b_check(b, st_if(b->cx, c, x, y, &e), &e);
}

static inline const st_node *b_i64(bld *b, int64_t v) { return st_lit_int(b->cx, ST_I64, v); }
/* A count (a chunk size, a length): an i32 literal when it fits, which
 * prints plainly, as any integer type will do there. */
static inline const st_node *b_count(bld *b, int64_t v) {
    return st_lit_int(b->cx, v >= INT32_MIN && v <= INT32_MAX ? ST_I32 : ST_I64, v);
}

static inline const st_node *b_tuple_n(bld *b, uint32_t n, const st_node *const *items) {
    if (!b_all(items, n)) return NULL;
    st_err e = {0};
    return b_check(b, st_tuple(b->cx, n, items, &e), &e);
}
#define TUPLE(b, ...) b_tuple_n((b), (uint32_t)B_NARGS(__VA_ARGS__), (const st_node *[]){__VA_ARGS__})

static inline const st_node *b_proj(bld *b, const st_node *t, uint32_t i) {
    if (!t) return NULL;
    st_err e = {0};
    return b_check(b, st_proj(b->cx, t, i, &e), &e);
}

/* A fresh variable named after base. */
static inline const st_node *b_var(bld *b, const char *base, const st_type *t) {
    return t ? st_fresh_var(b->cx, base, t) : NULL;
}

/* A fresh variable to bind value to with a let: bound as the type checker
 * binds it (st_let_var), so the printed program reads back the same. */
static inline const st_node *b_bound(bld *b, const char *base, const st_node *value) {
    const char *name = value ? st_fresh_name(b->cx, base) : NULL;
    return name ? st_let_var(b->cx, name, value) : NULL;
}

static inline const st_node *b_lambda_n(bld *b, uint32_t n, const st_node *const *params, const st_node *body) {
    if (!body || !b_all(params, n)) return NULL;
    st_err e = {0};
    return b_check(b, st_lambda(b->cx, n, params, body, &e), &e);
}
#define LAMBDA(b, body, ...) b_lambda_n((b), (uint32_t)B_NARGS(__VA_ARGS__), (const st_node *[]){__VA_ARGS__}, (body))

/* let var = value in body; let (vars…) = value in body */
static inline const st_node *b_let_n(bld *b, uint32_t n, const st_node *const *vars, const st_node *value,
                                     const st_node *body) {
    if (!value || !body || !b_all(vars, n)) return NULL;
    st_err e = {0};
    return b_check(b, st_let(b->cx, n, vars, value, body, &e), &e);
}
static inline const st_node *b_let(bld *b, const st_node *var, const st_node *value, const st_node *body) {
    return b_let_n(b, 1, &var, value, body);
}

/* f(args…) as an expression */
static inline const st_node *b_call_n(bld *b, const st_node *f, uint32_t n, const st_node *const *args) {
    if (!f || !b_all(args, n)) return NULL;
    st_err e = {0};
    return b_check(b, st_apply_fn(b->cx, f, n, args, &e), &e);
}
#define CALL(b, f, ...) b_call_n((b), (f), (uint32_t)B_NARGS(__VA_ARGS__), (const st_node *[]){__VA_ARGS__})

/* The size s as an i64 expression of the def's sizes (a value to compute
 * with: compare, add). */
static inline const st_node *b_size_value(bld *b, const st_size *s) {
    st_err e = {0};
    const st_node *n = s ? st_size_expr(b->cx, st_rw_def(b->rw), s, &e) : NULL;
    if (!n && !b->err->message[0]) *b->err = e;
    return n;
}

/* The size s as a length (of iota, replicate): a plain count when constant. */
static inline const st_node *b_count(bld *b, int64_t v);
static inline const st_node *b_size(bld *b, const st_size *s) {
    int64_t v;
    if (s && st_size_is_const(s, &v)) return b_count(b, v);
    st_err e = {0};
    const st_node *n = st_size_expr(b->cx, st_rw_def(b->rw), s, &e);
    if (!n && !b->err->message[0]) *b->err = e;
    return n;
}

/* The element type of an array type. */
static inline const st_type *elem_of(const st_node *xs) { return xs ? xs->type->elem : NULL; }

/* A rule's "not of my shape" answer. */
static inline const st_node *no_match(st_err *why, const char *fmt, const char *what) {
    st_fail(why, (st_loc){0}, fmt, what);
    why->mismatch = true;
    return NULL;
}

#endif
