/* strategies/hoist.c — hoist-invariant: what a function computes the same
 * for every element, computed once, before it.
 *
 * Users write a normalisation as `xs |> map(x => x / reduce(+, 0.0, xs))`,
 * a row's softmax shift as `map(row => map(x => x - reduce(max, -f32.inf,
 * row), row), m)`, a threshold as `filter(x => x > reduce(+, 0, xs) / N,
 * xs)`. Read as written, the reduction runs once per element: quadratic,
 * and inside a lambda, where no parallel rule takes it (a map of 10^6 f32
 * ran for minutes). The rule lets such a subexpression out to the nearest
 * place where everything it reads is bound:
 *
 *     let hoisted = reduce(+, 0.0, xs) in xs |> map(x => x / hoisted)
 *     m |> map(row => let hoisted = reduce(max, -f32.inf, row) in map(x => x - hoisted, row))
 *
 * and the top-level reduction is then parallel-reduce's or the look-back's,
 * as any other.
 *
 * What moves: a subexpression inside a lambda (a map's function, an
 * operator, a loop's body) that
 *   - reads no variable the lambda, or a let inside it, binds;
 *   - costs more than a few scalar operations: it holds a reduction, a scan,
 *     a histogram or a scatter (a map, a zip or a read of one element is
 *     index-fused into its reader and costs per element what it did);
 *   - cannot fail: a lambda that runs for no element (a map of an empty
 *     array, an `if` branch not taken) would otherwise fail where the
 *     program did not. So no integer division or remainder by anything but
 *     a non-zero literal, no read of one element (get), no split, take,
 *     drop or loop (their counts are checked when they run);
 *   - is of strata's high-level language: a lowered primitive (mapGlb, a
 *     look-back kernel) is left where it is, and so is everything inside it.
 * Each moves as a whole (the largest such subexpression), and one that
 * occurs twice in a scope is bound once. The rule runs to a fixpoint: what
 * a moved subexpression itself repeats inside its own lambdas moves next. */
#include "strategies.h"

#include "rewrite/plugin.h"

#include <stdlib.h>

enum { MAX_SCOPES = 256, MAX_HOISTED = 64, MAX_ROUNDS = 64 };

/* A place a let can go: the expression the rule was applied to (scope 0),
 * or the body of a let or of a lambda inside it, with the variables that
 * let or lambda binds. What moves to a scope waits in it until its body is
 * rebuilt, then is bound in front of it. */
typedef struct scope {
    const st_node *const *vars; /* the let's variables or the lambda's parameters */
    uint32_t nvars;
    bool lambda;
    uint32_t nmoved;
    const st_node *moved[MAX_HOISTED], *bound[MAX_HOISTED]; /* what moved here, and its variable */
} scope;

typedef struct hoister {
    st_build *b;
    scope *scopes; /* MAX_SCOPES of them, scopes[0] the root */
    uint32_t depth;
    st_ptrmap facts; /* node -> FACT_* bits, once computed */
    bool changed;
} hoister;

enum { FACT_KNOWN = 1, FACT_WORTH = 2, FACT_FAILS = 4 };

/* ---- what a subexpression is ---- */

static bool int_division(st_binop op, const st_type *t) {
    return (op == ST_OP_DIV || op == ST_OP_MOD) && st_type_is_int(t);
}

static bool nonzero_literal(const st_node *n) {
    if (n->kind != ST_NODE_LIT) return false;
    for (size_t i = 0; i < sizeof n->u.lit; i++)
        if (((const unsigned char *)&n->u.lit)[i]) return true;
    return false;
}

/* Does this node alone (its kids aside) cost a pass over an array? */
static bool reduces(const st_node *n) {
    if (n->kind != ST_NODE_PRIM) return false;
    switch (n->u.prim) {
    case ST_PRIM_REDUCE: case ST_PRIM_SCAN: case ST_PRIM_EXSCAN: case ST_PRIM_SCAN_TOTAL:
    case ST_PRIM_REDUCE_BY_INDEX: case ST_PRIM_REDUCE_BY_INDEX_2D: case ST_PRIM_SCATTER: case ST_PRIM_SCATTER_2D:
    case ST_PRIM_SCATTER_DISTINCT:
        return true;
    default: return false;
    }
}

/* Is n a primitive that rules make (mapGlb, a look-back kernel)? scanTotal
 * counts as the user's: it is written in programs, of a scan of theirs. */
static bool lowered(const st_node *n) {
    if (n->kind != ST_NODE_PRIM || n->u.prim == ST_PRIM_SCAN_TOTAL) return false;
    return st_prim_get(n->u.prim)->low_level || st_prim_makes_kernels(n->u.prim);
}

/* Can this node alone fail when it runs, or is it not strata's high-level
 * language (see the top of the file)? */
static bool may_fail(const st_node *n) {
    switch (n->kind) {
    case ST_NODE_BINOP: return int_division(n->u.binop, n->type) && !nonzero_literal(n->kids[1]);
    case ST_NODE_OPFN: return n->type->n > 0 && int_division(n->u.binop, n->type->items[0]);
    case ST_NODE_PRIM: {
        const st_prim p = n->u.prim;
        if (lowered(n) || st_prim_sizes_at_run_time(p)) return true;
        return p == ST_PRIM_GET || p == ST_PRIM_SPLIT || p == ST_PRIM_LOOP || p == ST_PRIM_WHILE ||
               p == ST_PRIM_ITERATE || p == ST_PRIM_SCRATCH;
    }
    default: return false;
    }
}

static uintptr_t facts_of(hoister *h, const st_node *n) {
    uintptr_t f;
    if (st_ptrmap_get(&h->facts, n, &f)) return f;
    f = FACT_KNOWN | (reduces(n) ? FACT_WORTH : 0) | (may_fail(n) ? FACT_FAILS : 0);
    for (uint32_t i = 0; i < n->nkids; i++) f |= facts_of(h, n->kids[i]) & ~(uintptr_t)FACT_KNOWN;
    if (!st_ptrmap_put(&h->facts, n, f)) return FACT_FAILS; /* out of memory: moves nothing */
    return f;
}

/* ---- where it can go ---- */

/* The innermost scope binding a variable e reads (free in it: st_occurs
 * leaves out what e binds itself), or 0: all it reads is bound outside the
 * expression the rule was applied to (the def's parameters, a let around
 * it). Searched innermost first, so a shadowing binder is the one found. */
static uint32_t innermost_read(const hoister *h, const st_node *e) {
    for (uint32_t s = h->depth; s > 0; s--)
        for (uint32_t i = 0; i < h->scopes[s].nvars; i++)
            if (st_occurs(e, h->scopes[s].vars[i])) return s;
    return 0;
}

/* The scope e can move to, or 0 with *ok false when it must stay: it reads
 * a variable bound inside the innermost lambda around it. */
static uint32_t target_of(const hoister *h, const st_node *e, bool *ok) {
    uint32_t lambda = 0;
    for (uint32_t s = h->depth; s > 0 && !lambda; s--)
        if (h->scopes[s].lambda) lambda = s;
    uint32_t at = innermost_read(h, e);
    *ok = lambda > 0 && at < lambda;
    return at;
}

/* ---- the walk ---- */

static const st_node *walk(hoister *h, const st_node *n, bool may_move);

/* The variable e is bound to in scope s (bound there first if new). */
static const st_node *moved_to(hoister *h, uint32_t s, const st_node *e) {
    scope *sc = &h->scopes[s];
    for (uint32_t i = 0; i < sc->nmoved; i++)
        if (sc->moved[i] == e) return sc->bound[i];
    if (sc->nmoved == MAX_HOISTED) return NULL;
    const st_node *v = st_b_bound(h->b, "hoisted", e);
    if (!v) return NULL;
    sc->moved[sc->nmoved] = e, sc->bound[sc->nmoved] = v;
    sc->nmoved++;
    h->changed = true;
    return v;
}

/* body inside a new scope binding vars (a let's or a lambda's), with what
 * moved to that scope bound in front of it. */
static const st_node *walk_scope(hoister *h, const st_node *const *vars, uint32_t nvars, bool lambda,
                                 const st_node *body) {
    if (h->depth + 1 == MAX_SCOPES) return body;
    scope *sc = &h->scopes[++h->depth];
    *sc = (scope){.vars = vars, .nvars = nvars, .lambda = lambda};
    const st_node *r = walk(h, body, true);
    for (uint32_t i = sc->nmoved; i-- > 0 && r;) r = st_b_let(h->b, sc->bound[i], sc->moved[i], r);
    h->depth--;
    return r;
}

static const st_node *walk(hoister *h, const st_node *n, bool may_move) {
    if (n->nkids == 0) return n;
    uintptr_t f = facts_of(h, n);
    /* a lowered primitive, and what is inside it, stays as it is */
    if (lowered(n)) return n;
    if (may_move && (f & FACT_WORTH) && !(f & FACT_FAILS) && n->type->kind != ST_TYPE_FUN) {
        bool ok;
        uint32_t s = target_of(h, n, &ok);
        if (ok) return moved_to(h, s, n);
    }
    if (!(f & FACT_WORTH)) return n; /* nothing below is worth moving */
    const st_node *kids[ST_MAX_KIDS];
    bool changed = false;
    for (uint32_t i = 0; i < n->nkids; i++) {
        const st_node *k = n->kids[i];
        bool body = (n->kind == ST_NODE_LET || n->kind == ST_NODE_LAMBDA) && i == n->nkids - 1;
        if (st_is_binder(n, i)) kids[i] = k;
        else if (body) kids[i] = walk_scope(h, n->kids, n->kind == ST_NODE_LET ? st_let_nvars(n) : st_lambda_nparams(n),
                                            n->kind == ST_NODE_LAMBDA, k);
        /* scanTotal's kid is its scan, never a variable (rewrite/engine.c's hides) */
        else kids[i] = walk(h, k, !st_is_prim(n, ST_PRIM_SCAN_TOTAL));
        if (!kids[i]) return NULL;
        changed |= kids[i] != k;
    }
    if (!changed) return n;
    st_err inner = {0};
    return st_b_check(h->b, st_rebuild(h->b->cx, n, kids, &inner), &inner);
}

/* ---- the rule ---- */

static const st_node *hoist_invariant(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    /* a let is bound in front of e: e must be a value, not a function */
    if (e->type->kind == ST_TYPE_FUN)
        return st_no_match(why, "hoist-invariant rewrites an expression, not a function (a lambda or an operator)");
    st_build B = st_build_of(rw, why);
    scope *scopes = calloc(MAX_SCOPES, sizeof *scopes);
    if (!scopes) {
        st_fail_internal(why, "out of memory");
        return NULL;
    }
    hoister h = {.b = &B, .scopes = scopes};
    const st_node *r = e;
    bool any = false;
    for (int round = 0; round < MAX_ROUNDS && r; round++) {
        h.changed = false;
        h.depth = 0;
        scopes[0] = (scope){0};
        const st_node *body = walk(&h, r, false);
        for (uint32_t i = scopes[0].nmoved; i-- > 0 && body;) body = st_b_let(&B, scopes[0].bound[i], scopes[0].moved[i], body);
        r = body;
        if (!h.changed) break;
        any = true;
    }
    st_ptrmap_free(&h.facts);
    free(scopes);
    if (!r) return NULL;
    if (!any)
        return st_no_match(why, "hoist-invariant: nothing inside a function here is computed the same for every "
                                "element (a reduction, scan, histogram or scatter reading none of the function's "
                                "variables)");
    return r;
}

static const st_rule rule_hoist_invariant = {
    .name = "hoist-invariant",
    .summary = "what a function (a map's, an operator, a loop's body) computes the same for every element, bound "
               "once before it: map(x => x / reduce(+, 0.0, xs), xs) as let hoisted = reduce(+, 0.0, xs) in "
               "map(x => x / hoisted, xs), so the reduction runs once and at the top level, not once per element",
    .conditions = "a subexpression inside a lambda within the node, that reads none of the variables that lambda (or "
                  "a let inside it) binds, holds a reduce, scan, scanTotal, reduce_by_index or scatter, and cannot "
                  "fail (no integer / or % by other than a non-zero literal, no get, split, take, drop or loop, "
                  "nothing lowered); it moves to the nearest let or lambda body where all it reads is bound",
    .origin = "built-in",
    .apply = hoist_invariant,
};

bool st_register_hoist_rules(st_registry *r, st_err *err) { return st_registry_add(r, &rule_hoist_invariant, err); }
