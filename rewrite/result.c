/* rewrite/result.c — what a plugin's rule returned, checked where it
 * returns it.
 *
 * A plugin is C: nothing but its author's care keeps it to the IR's
 * constructors. A node it changed after it was built (a cast-away const),
 * copied by hand or made in a context of its own breaks hash-consing, and
 * can hold itself, which every later walk would follow for ever; a variable
 * nothing binds, or a result of another type, makes a program that strata
 * cannot print, type or run. Each would surface far from its cause — a
 * crash in a printer, an "internal error" that blames strata — so the
 * engine looks at what a plugin's rule returned before anything else does,
 * and a fault is the rule's, by name. The built-in rules are not checked:
 * they are strata's own, and their results are covered by its tests. */
#include "result.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- messages ---- */

/* "the rule NAME(ARGS) of the plugin PATH" + what is wrong, as why. */
__attribute__((format(printf, 4, 5))) static bool fault(st_err *why, const st_strategy *s, const char *plugin, const char *fmt, ...) {
    st_buf call = {0};
    st_strategy_print(s, &call);
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    st_fail(why, (st_loc){0}, "the rule %s of the plugin %s %s", call.data ? call.data : s->rule->name, plugin,
            what);
    why->kind = ST_ERR_RULE;
    st_buf_free(&call);
    return false;
}

void rule_failed(const st_strategy *s, const char *plugin, st_err *why) {
    char inner[sizeof why->message];
    snprintf(inner, sizeof inner, "%s", why->message);
    fault(why, s, plugin, "failed with an error in the rule itself, not in the program: %s", inner);
}

/* A node, for a message: `scanSeq`, a let, the variable `x` (of a node whose
 * kind is in range). */
static void node_name(const st_node *n, char *out, size_t cap) {
    static const char *const kinds[] = {"a literal", "a variable", "a tuple", "a projection", "an operator",
                                        "an operator", "a conversion", "an if", "a let", "a lambda",
                                        "an operator"};
    if (n->kind == ST_NODE_PRIM && (unsigned)n->u.prim < ST_PRIM_COUNT)
        snprintf(out, cap, "a `%s`", st_prim_get(n->u.prim)->name);
    else if (n->kind == ST_NODE_PRIM) snprintf(out, cap, "a primitive");
    else if (n->kind == ST_NODE_VAR) snprintf(out, cap, "the variable `%s`", n->u.name);
    else snprintf(out, cap, "%s", kinds[n->kind]);
}

/* ---- the nodes: each the context's own, none inside itself ---- */

enum { ON_PATH = 1, DONE = 2 };

typedef struct frame {
    const st_node *n;
    uint32_t next; /* the kid to visit next */
} frame;

/* A node whose fields cannot be a node's: no kid may be read from it. */
static bool not_a_node(const st_node *n) { return (unsigned)n->kind > ST_NODE_PRIM || n->nkids > ST_MAX_KIDS; }

/* Why n is not a node cx made, or NULL when it is one. */
static const char *not_own(const st_ctx *cx, const st_node *n) {
    if (not_a_node(n)) return "is not a node at all (its kind or its count of kids is out of range)";
    for (uint32_t i = 0; i < n->nkids; i++)
        if (!n->kids[i]) return "is not a node at all (one of its kids is NULL)";
    return st_node_not_own(cx, n);
}

/* Every node reachable from out, depth first, each once (the IR is a DAG):
 * the first that is inside itself (a kid on the path from out to it) into
 * *cycle, else the first that is no node or not cx's own into *bad with
 * the reason. false only when out of memory. */
static bool walk_nodes(const st_ctx *cx, const st_node *out, const st_node **cycle, const st_node **bad,
                       const char **reason) {
    st_ptrmap state = {0};
    frame *stack = NULL;
    size_t depth = 0, cap = 0;
    bool ok = st_grow(&stack, sizeof *stack, depth, &cap, 64) && st_ptrmap_put(&state, out, ON_PATH);
    if (ok) stack[depth++] = (frame){out, 0};
    *cycle = *bad = NULL;
    while (ok && depth && !*cycle) {
        frame *f = &stack[depth - 1];
        const st_node *n = f->n;
        if (f->next == 0 && !*bad && (*reason = not_own(cx, n))) *bad = n;
        if (not_a_node(n) || f->next == n->nkids) { /* its kids are done, or it has none to read */
            ok = st_ptrmap_put(&state, n, DONE);
            depth--;
            continue;
        }
        const st_node *k = n->kids[f->next++];
        uintptr_t seen = 0;
        if (!k) continue;
        if (st_ptrmap_get(&state, k, &seen)) {
            if (seen == ON_PATH) *cycle = k;
            continue;
        }
        ok = st_grow(&stack, sizeof *stack, depth, &cap, 64) && st_ptrmap_put(&state, k, ON_PATH);
        if (ok) stack[depth++] = (frame){k, 0};
    }
    free(stack);
    st_ptrmap_free(&state);
    return ok;
}

/* ---- the variables it uses free ---- */

/* A set of variables, sorted by address. */
typedef struct vset {
    uint32_t n;
    const st_node *v[];
} vset;

typedef struct fv_walk {
    st_arena *a;
    st_ptrmap memo; /* node -> its vset */
    bool failed;    /* out of memory */
} fv_walk;

static int by_address(const void *x, const void *y) {
    uintptr_t a = (uintptr_t)*(const st_node *const *)x, b = (uintptr_t)*(const st_node *const *)y;
    return (a > b) - (a < b);
}

static bool bound_by(const st_node *n, uint32_t nbound, const st_node *v) {
    for (uint32_t i = 0; i < nbound; i++)
        if (n->kids[i] == v) return true;
    return false;
}

/* The variables n uses free. A let binds its variables in its body (not in
 * its value), a lambda its parameters in its body. */
static const vset *free_vars(fv_walk *w, const st_node *n) {
    static const vset none;
    uintptr_t memo;
    if (w->failed) return &none;
    if (st_ptrmap_get(&w->memo, n, &memo)) return (const vset *)memo;
    const vset *parts[ST_MAX_KIDS];
    uint32_t total = n->kind == ST_NODE_VAR, nbound = 0;
    if (n->kind == ST_NODE_LET) nbound = st_let_nvars(n);
    else if (n->kind == ST_NODE_LAMBDA) nbound = st_lambda_nparams(n);
    for (uint32_t i = 0; i < n->nkids; i++) {
        parts[i] = st_is_binder(n, i) ? &none : free_vars(w, n->kids[i]);
        total += parts[i]->n;
    }
    vset *s = st_arena_alloc(w->a, sizeof *s + (total + 1) * sizeof s->v[0]);
    if (!s) return w->failed = true, &none;
    s->n = 0;
    if (n->kind == ST_NODE_VAR) s->v[s->n++] = n;
    for (uint32_t i = 0; i < n->nkids; i++)
        for (uint32_t k = 0; k < parts[i]->n; k++)
            if (!(i == n->nkids - 1 && bound_by(n, nbound, parts[i]->v[k]))) s->v[s->n++] = parts[i]->v[k];
    qsort(s->v, s->n, sizeof s->v[0], by_address);
    uint32_t kept = 0;
    for (uint32_t i = 0; i < s->n; i++)
        if (!kept || s->v[kept - 1] != s->v[i]) s->v[kept++] = s->v[i];
    s->n = kept;
    if (!st_ptrmap_put(&w->memo, n, (uintptr_t)s)) return w->failed = true, &none;
    return s;
}

static bool in(const vset *s, const st_node *v) {
    return bsearch(&v, s->v, s->n, sizeof s->v[0], by_address) != NULL;
}

static bool def_binds(const st_def *def, const st_node *v) {
    for (uint32_t i = 0; def && i < def->nparams; i++)
        if (def->params[i] == v) return true;
    for (uint32_t i = 0; def && i < def->nsizes; i++)
        if (def->sizes[i] == v) return true;
    return false;
}

static int by_name(const void *x, const void *y) {
    return strcmp((*(const st_node *const *)x)->u.name, (*(const st_node *const *)y)->u.name);
}

/* The variables out uses free that are neither free in e nor the def's,
 * up to cap of them, by name; how many there are in all, or -1 when out of
 * memory. */
static int unbound_in(const st_def *def, const st_node *e, const st_node *out, const st_node **first, int cap) {
    fv_walk w = {.a = st_arena_new()};
    int count = 0;
    if (w.a) {
        const vset *have = free_vars(&w, e), *uses = free_vars(&w, out);
        for (uint32_t i = 0; !w.failed && i < uses->n; i++) {
            const st_node *v = uses->v[i];
            if (in(have, v) || def_binds(def, v)) continue;
            if (count < cap) first[count] = v;
            count++;
        }
        qsort(first, (size_t)(count < cap ? count : cap), sizeof *first, by_name);
    }
    bool failed = !w.a || w.failed;
    st_ptrmap_free(&w.memo);
    st_arena_free(w.a);
    return failed ? -1 : count;
}

/* ---- the check ---- */

static void type_text(const st_type *t, char *out, size_t cap) {
    st_buf b = {0};
    st_type_print(t, &b);
    snprintf(out, cap, "%s", b.data ? b.data : "?");
    st_buf_free(&b);
}

bool rule_result_ok(const st_ctx *cx, const st_def *def, const st_strategy *s, const char *plugin, const st_node *e,
                    const st_node *out, st_err *why) {
    const st_node *cycle, *bad;
    const char *reason = NULL;
    char name[160];
    if (!walk_nodes(cx, out, &cycle, &bad, &reason)) return st_fail_internal(why, "out of memory");
    if (cycle) {
        node_name(cycle, name, sizeof name);
        return fault(why, s, plugin, "returned a cyclic expression: %s in it is inside itself (a node changed after it was "
                     "built: nodes are immutable, and a rule makes new ones with the constructors)", name);
    }
    if (bad) {
        if (not_a_node(bad)) snprintf(name, sizeof name, "a node");
        else node_name(bad, name, sizeof name);
        return fault(why, s, plugin, "returned an expression with %s in it that %s", name, reason);
    }
    if (out->type != e->type) {
        char was[160], now[160];
        type_text(e->type, was, sizeof was);
        type_text(out->type, now, sizeof now);
        return fault(why, s, plugin, "returned an expression of type %s in place of one of type %s (a rule never changes a "
                     "type)", now, was);
    }
    const st_node *unbound[3];
    int n = unbound_in(def, e, out, unbound, 3);
    if (n < 0) return st_fail_internal(why, "out of memory");
    if (n == 0) return true;
    char names[200] = "";
    for (int i = 0; i < n && i < 3; i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s`%s`", i ? ", " : "", unbound[i]->u.name);
    return fault(why, s, plugin, "returned an expression that uses %s %s%s, which %s bound there (a rule's result uses "
                 "the variables of the expression it was given, the def's parameters and sizes, and those it binds "
                 "itself)", n == 1 ? "the variable" : "the variables", names, n > 3 ? ", …" : "",
                 n == 1 ? "is not" : "are not");
}
