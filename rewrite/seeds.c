/* rewrite/seeds.c — a scan or reduce seeded by a value that is not its
 * operator's neutral element, made one that is (st_seeds_as_neutral).
 *
 * strata's scan and reduce are seeded: scan(+, 5, xs)[i] is 5 + x0 + … + xi,
 * and the interpreter computes exactly that. Every parallel rule, though,
 * starts each block, chunk, lane and subhistogram from z, so it takes z to
 * be the operator's neutral element: given 5, the look-back scan added it
 * once per block and lane, and `strata run` answered wrong without a word.
 * Where the operator is one whose neutral element is known (+ * & | ^ min
 * max && || on one number, written as the operator or as a lambda of its
 * two parameters), the seed is taken out instead, by associativity:
 *
 *     scan(op, z, xs)                → scan(op, op, (a, x) => op(z, a), e, xs)
 *     scan(op, fold, z, xs)          → scan(op, fold, (a, x) => op(z, a), e, xs)
 *     scan(op, fold, post, z, xs)    → scan(op, fold, (a, x) => post(op(z, a), x), e, xs)
 *     exscan(op, z, xs)              → map(y => op(z, y), exscan(op, e, xs))
 *     reduce(op, [fold,] z, xs)      → op(z, reduce(op, [fold,] e, xs))
 *     scanTotal(scan(op, …, z, xs))  → op(z, scanTotal(scan(op, …, e, xs)))
 *     reduce_by_index(d, op, z, …)   → reduce_by_index(d, op, e, …)
 *
 * e the neutral element (a fold's promise, fold(a, x) = op(a, f(x)), is what
 * makes the scans' forms right). A scan stays a scan, with a post-function,
 * so a strategy given at the top of a def still finds it; a reduce becomes
 * an operation on one (first(reduce, …) reaches it). reduce_by_index reads no seed (each bucket
 * starts from the destination's value), so its z is replaced. A z that is
 * neither a literal nor a variable is let-bound first, computed once. With
 * any other operator (a lambda of tuples, say) z stays the program's
 * promise, as in Futhark. The rule seeds-as-neutral does this
 * (strategies/normalise.c), first in the default strategies and in
 * lower-opencl; the rules that start blocks from z refuse a seed it would
 * take out (st_seed_not_neutral). */
#include "rewrite.h"

#include <stdio.h>
#include <string.h>

typedef struct seeds {
    st_ctx *cx;
    st_ptrmap done; /* node -> its rewrite */
    st_err *err;
} seeds;

/* The seeded primitive n with its seed at kid zi: its binop and neutral
 * element, when the seed must come out (false: leave n as it is). */
static bool must_take_out(const st_node *n, uint32_t opi, uint32_t zi, st_binop *b, st_scalar *e) {
    const st_node *z = n->kids[zi];
    if (!z->type || z->type->kind != ST_TYPE_SCALAR || !st_fn_binop(n->kids[opi], b)) return false;
    st_scalar_kind k = z->type->scalar;
    return st_binop_neutral(*b, k, e) && !st_is_scalar_literal(z, k, *e);
}

/* Where n's operator and seed are: false for a node that has no seed. */
static bool seed_of(const st_node *n, uint32_t *opi, uint32_t *zi) {
    if (n->kind != ST_NODE_PRIM) return false;
    st_prim p = n->u.prim;
    bool hist = p == ST_PRIM_REDUCE_BY_INDEX || p == ST_PRIM_REDUCE_BY_INDEX_2D;
    if (p == ST_PRIM_SCAN || p == ST_PRIM_EXSCAN || p == ST_PRIM_REDUCE) *opi = 0, *zi = n->nkids - 2;
    else if (hist) *opi = 1, *zi = 2;
    else return false;
    return true;
}

bool st_seed_not_neutral(const st_node *n) {
    uint32_t opi, zi;
    st_binop b;
    st_scalar e;
    return seed_of(n, &opi, &zi) && must_take_out(n, opi, zi, &b, &e);
}

/* n with kid i replaced. */
static const st_node *with_kid(seeds *s, const st_node *n, uint32_t i, const st_node *kid) {
    const st_node *kids[ST_MAX_KIDS];
    memcpy(kids, n->kids, n->nkids * sizeof *kids);
    kids[i] = kid;
    return st_rebuild(s->cx, n, kids, s->err);
}

/* (a, x) => a: the post-function of a scan without one, x of type elem */
static const st_node *identity_post(seeds *s, const st_type *acc, const st_type *elem) {
    const st_node *params[2] = {st_fresh_var(s->cx, "a", acc), st_fresh_var(s->cx, "x", elem)};
    return params[0] && params[1] ? st_lambda(s->cx, 2, params, params[0], s->err) : NULL;
}

/* y => op(z, y) over xs */
static const st_node *seeded_map(seeds *s, st_binop b, const st_node *z, const st_node *xs) {
    const st_node *y = st_fresh_var(s->cx, "y", z->type);
    const st_node *body = y ? st_binary(s->cx, b, z, y, s->err) : NULL;
    const st_node *f = body ? st_lambda(s->cx, 1, &y, body, s->err) : NULL;
    return f ? st_prim_node(s->cx, ST_PRIM_MAP, 2, (const st_node *[]){f, xs}, s->err) : NULL;
}

/* post with its accumulator a replaced by op(z, a) */
static const st_node *seeded_post(seeds *s, st_binop b, const st_node *z, const st_node *post) {
    const st_node *a = post->kids[0];
    const st_node *za = st_binary(s->cx, b, z, a, s->err);
    const st_node *body = za ? st_subst(s->cx, st_lambda_body(post), a, za, s->err) : NULL;
    return body ? st_lambda(s->cx, 2, post->kids, body, s->err) : NULL;
}

/* n, a scan, exscan or reduce whose seed (kid zi) comes out, or n. */
static const st_node *take_out(seeds *s, const st_node *n) {
    st_prim p = n->u.prim;
    uint32_t opi, zi;
    bool hist = p == ST_PRIM_REDUCE_BY_INDEX || p == ST_PRIM_REDUCE_BY_INDEX_2D;
    st_binop b;
    st_scalar e;
    if (!seed_of(n, &opi, &zi) || !must_take_out(n, opi, zi, &b, &e)) return n;
    const st_node *z = n->kids[zi];
    const st_node *plain = with_kid(s, n, zi, st_lit(s->cx, z->type->scalar, e));
    if (!plain || hist) return plain;
    /* z once: a literal or a variable as it is, anything else let-bound */
    const st_node *seed = z, *bound = NULL;
    if (z->kind != ST_NODE_LIT && z->kind != ST_NODE_VAR) {
        const char *name = st_fresh_name(s->cx, "seed");
        if (!name || !(bound = seed = st_let_var(s->cx, name, z))) return NULL;
    }
    const st_node *r;
    if (p == ST_PRIM_REDUCE) {
        r = st_binary(s->cx, b, seed, plain, s->err);
    } else if (p == ST_PRIM_SCAN) { /* its post-function (the identity where it has none) after op(z, ·) */
        const st_node *xs = plain->kids[plain->nkids - 1];
        const st_node *post = n->nkids == 5 ? plain->kids[2] : identity_post(s, z->type, xs->type->elem);
        if (post) post = seeded_post(s, b, seed, post);
        /* op, its fold (the operator where there is none), post, e, xs */
        const st_node *args[5] = {plain->kids[0], plain->kids[n->nkids == 3 ? 0 : 1], post, plain->kids[zi], xs};
        r = post ? st_prim_node(s->cx, ST_PRIM_SCAN, 5, args, s->err) : NULL;
    } else {
        r = seeded_map(s, b, seed, plain);
    }
    return r && bound ? st_let(s->cx, 1, &bound, z, r, s->err) : r;
}

const st_node *st_seed_taken_out(st_ctx *cx, const st_node *n, st_err *err) {
    seeds s = {.cx = cx, .err = err};
    return take_out(&s, n);
}

static const st_node *walk(seeds *s, const st_node *e);

/* scanTotal(scan(op, …, z, xs)), the fold of xs from z whatever the
 * post-function: false when the scan's seed stays; else *out is
 * op(z, scanTotal(scan(op, …, e, xs))) (NULL on an error). */
static bool seeded_total(seeds *s, const st_node *e, const st_node **out) {
    const st_node *scan = e->kids[0];
    st_binop b;
    st_scalar neutral;
    if (!st_is_prim(scan, ST_PRIM_SCAN) || !must_take_out(scan, 0, scan->nkids - 2, &b, &neutral)) return false;
    uint32_t zi = scan->nkids - 2;
    const st_node *z = scan->kids[zi], *seed = walk(s, z);
    const st_node *plain = seed ? with_kid(s, scan, zi, st_lit(s->cx, z->type->scalar, neutral)) : NULL;
    const st_node *total = plain ? walk(s, st_prim_node(s->cx, ST_PRIM_SCAN_TOTAL, 1, &plain, s->err)) : NULL;
    *out = total ? st_binary(s->cx, b, seed, total, s->err) : NULL;
    return true;
}

static const st_node *walk(seeds *s, const st_node *e) {
    if (!e || e->nkids == 0) return e;
    uintptr_t v;
    if (st_ptrmap_get(&s->done, e, &v)) return (const st_node *)v;
    const st_node *total;
    if (st_is_prim(e, ST_PRIM_SCAN_TOTAL) && seeded_total(s, e, &total)) {
        const st_node *r = total ? st_node_placed_like(s->cx, total, e) : NULL;
        if (r && !st_ptrmap_put(&s->done, e, (uintptr_t)r)) return st_fail_internal(s->err, "out of memory"), NULL;
        return r;
    }
    const st_node *kids[ST_MAX_KIDS];
    for (uint32_t i = 0; i < e->nkids; i++)
        if (!(kids[i] = walk(s, e->kids[i]))) return NULL;
    const st_node *r = st_rebuild(s->cx, e, kids, s->err);
    if (r && r->kind == ST_NODE_PRIM) {
        const st_node *t = take_out(s, r);
        r = t && t != r ? st_node_placed_like(s->cx, t, e) : t;
    }
    if (r && !st_ptrmap_put(&s->done, e, (uintptr_t)r)) return st_fail_internal(s->err, "out of memory"), NULL;
    return r;
}

const st_node *st_seeds_as_neutral(st_ctx *cx, const st_node *e, st_err *err) {
    st_err inner = {0};
    seeds s = {.cx = cx, .err = &inner};
    const st_node *r = walk(&s, e);
    st_ptrmap_free(&s.done);
    if (!r && err) {
        if (inner.kind != ST_ERR_INTERNAL) { /* the seeded form typed, so this must: a bug here */
            char message[sizeof inner.message];
            snprintf(message, sizeof message, "%s", inner.message);
            st_fail_internal(&inner, "a seed taken out of a scan or reduce: %s", message);
        }
        *err = inner;
    }
    return r;
}
