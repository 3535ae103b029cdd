/* rewrite/plugin.h — the one header a rewrite rule needs, in strata or out of it.
 *
 * A plugin is a shared module that adds rules to strata's registry: one C
 * file, built against this header (installed as <strata/rewrite/plugin.h>,
 * found with `pkg-config --cflags strata`), loaded with `--plugin PATH.so`
 * by every command. Its rules are then used by name in any strategy and any
 * exploration, like the built-in ones, which are written against this very
 * header. docs/writing-a-rule.md walks through one from an empty file.
 *
 * What is here:
 *   the ABI        ST_PLUGIN_ABI and the ST_PLUGIN(...) line every plugin has
 *   registration   st_plugin_add_rule, called by the plugin's register function
 *   matching       a scan in any of its forms (st_scan_form_of); the IR's nodes
 *                  are plain structs (ir/ir.h) to be read directly
 *   building       st_build and ST_PRIM, ST_CALL, ST_LAMBDA, ST_TUPLE, st_b_let,
 *                  …: expressions built in one go, checked once at the end
 *   conditions     st_size_divides and the rest of ir/ir.h's sizes
 *
 * A plugin calls into the `strata` executable that loads it (the executable
 * exports its functions), so it links against nothing. */
#ifndef STRATA_REWRITE_PLUGIN_H
#define STRATA_REWRITE_PLUGIN_H

#include "rewrite/rewrite.h"

#include <string.h>

/* ------------------------------------------------------------------------ */
/* The ABI                                                                  */
/* ------------------------------------------------------------------------ */

/* The version of what a plugin and strata share: this header, rewrite.h and
 * ir/ir.h (their structs, enums and functions). strata refuses a plugin
 * built for another version. It goes up whenever one of them changes in a
 * way an already built plugin would misread. */
#define ST_PLUGIN_ABI 4

/* What a plugin says about itself, checked on load: the version, and the
 * sizes of the structs it shares with strata, which catch a header edited
 * without the version going up. */
typedef struct st_plugin_abi {
    uint32_t version;      /* ST_PLUGIN_ABI */
    uint32_t rule_size;    /* sizeof(st_rule) */
    uint32_t node_size;    /* sizeof(st_node) */
    uint32_t err_size;     /* sizeof(st_err) */
    uint32_t strategy_size; /* sizeof(st_strategy) */
} st_plugin_abi;

#define ST_PLUGIN_ABI_HERE \
    {ST_PLUGIN_ABI, sizeof(st_rule), sizeof(st_node), sizeof(st_err), sizeof(st_strategy)}

/* The handle a plugin registers its rules through. */
typedef struct st_plugin st_plugin;

/* Add a rule. strata keeps a copy of *rule (its strings and functions must
 * stay valid while the plugin is loaded: static storage is right) with
 * `origin` set to the plugin's path. A name taken by a built-in rule or an
 * earlier plugin, or a rule declared badly (see st_registry_add), is
 * refused, and then the whole plugin is. */
bool st_plugin_add_rule(st_plugin *plugin, const st_rule *rule, st_err *err);

/* Every plugin has this line, at file scope, naming its register function,
 *     bool register_fn(st_plugin *plugin, st_err *err);
 * which adds the plugin's rules (false with *err set refuses the plugin). It
 * exports the two symbols strata looks for, `strata_plugin_abi` and
 * `strata_plugin_register`. */
#define ST_PLUGIN(register_fn)                                                                      \
    __attribute__((visibility("default"))) const st_plugin_abi strata_plugin_abi = ST_PLUGIN_ABI_HERE; \
    __attribute__((visibility("default"))) bool strata_plugin_register(st_plugin *plugin, st_err *err); \
    bool strata_plugin_register(st_plugin *plugin, st_err *err) { return register_fn(plugin, err); }

/* The symbols' names, for the loader. */
#define ST_PLUGIN_ABI_SYMBOL "strata_plugin_abi"
#define ST_PLUGIN_REGISTER_SYMBOL "strata_plugin_register"
typedef bool (*st_plugin_register_fn)(st_plugin *plugin, st_err *err);

/* ------------------------------------------------------------------------ */
/* Matching a scan                                                          */
/* ------------------------------------------------------------------------ */

/* A scan in any of its three forms:
 *   scan(op, z, xs)              plain
 *   scan(op, fold, z, xs)        with a fold: a thread folds its own elements
 *                                with fold(acc, x), partial results combine
 *                                with op (a map fused in: scanomap)
 *   scan(op, fold, post, z, xs)  and a post-function: element i's output is
 *                                post(acc_i, x_i) (maposcanomap)
 * fold and post are NULL when absent. An exscan never reaches a rule: every
 * rewrite first makes it the scan of its shifted input (st_exscans_as_scans),
 * so a rule written for scans takes exclusive scans as they are. */
static inline bool st_scan_form_of(const st_node *e, st_scan_form *f) {
    return st_is_prim(e, ST_PRIM_SCAN) && st_fold_form_of(e, f);
}

/* ------------------------------------------------------------------------ */
/* Building IR                                                              */
/* ------------------------------------------------------------------------ */

/* Every helper takes nodes that may be NULL (an earlier step failed) and then
 * returns NULL itself, so a rule builds a whole expression and checks once
 * at the end. The first failure's message stays in b->err. A failure here is
 * a bug in a rule (its output would not type-check): an internal error,
 * which the engine reports as the rule's, naming it and its plugin. */

typedef struct st_build {
    st_rw *rw;
    st_ctx *cx;
    st_err *err;
} st_build;

static inline st_build st_build_of(st_rw *rw, st_err *err) { return (st_build){rw, st_rw_ctx(rw), err}; }

/* Turn a constructor's complaint into an internal error (once). */
static inline const st_node *st_b_check(st_build *b, const st_node *n, const st_err *inner) {
    if (!n && !b->err->message[0]) {
        st_fail_internal(b->err, "a rule built an ill-typed expression: %s", inner->message);
    }
    return n;
}

static inline bool st_b_all(const st_node *const *xs, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        if (!xs[i]) return false;
    return true;
}

static inline const st_node *st_b_prim_n(st_build *b, st_prim p, uint32_t n, const st_node *const *args) {
    if (!st_b_all(args, n)) return NULL;
    st_err e = {0};
    return st_b_check(b, st_prim_node(b->cx, p, n, args, &e), &e);
}
#define ST_B_NARGS(...) (sizeof((const st_node *[]){__VA_ARGS__}) / sizeof(const st_node *))
#define ST_PRIM(b, p, ...) st_b_prim_n((b), (p), (uint32_t)ST_B_NARGS(__VA_ARGS__), (const st_node *[]){__VA_ARGS__})

static inline const st_node *st_b_binop(st_build *b, st_binop op, const st_node *x, const st_node *y) {
    if (!x || !y) return NULL;
    st_err e = {0};
    return st_b_check(b, st_binary(b->cx, op, x, y, &e), &e);
}

static inline const st_node *st_b_if(st_build *b, const st_node *c, const st_node *x, const st_node *y) {
    if (!c || !x || !y) return NULL;
    st_err e = {0};
    return st_b_check(b, st_if(b->cx, c, x, y, &e), &e);
}

static inline const st_node *st_b_i64(st_build *b, int64_t v) { return st_lit_int(b->cx, ST_I64, v); }
/* A count (a chunk size, a length): an i32 literal when it fits, which
 * prints plainly, as any integer type will do there. */
static inline const st_node *st_b_count(st_build *b, int64_t v) {
    return st_lit_int(b->cx, v >= INT32_MIN && v <= INT32_MAX ? ST_I32 : ST_I64, v);
}

static inline const st_node *st_b_tuple_n(st_build *b, uint32_t n, const st_node *const *items) {
    if (!st_b_all(items, n)) return NULL;
    st_err e = {0};
    return st_b_check(b, st_tuple(b->cx, n, items, &e), &e);
}
#define ST_TUPLE(b, ...) st_b_tuple_n((b), (uint32_t)ST_B_NARGS(__VA_ARGS__), (const st_node *[]){__VA_ARGS__})

static inline const st_node *st_b_proj(st_build *b, const st_node *t, uint32_t i) {
    if (!t) return NULL;
    st_err e = {0};
    return st_b_check(b, st_proj(b->cx, t, i, &e), &e);
}

/* A fresh variable named after base. */
static inline const st_node *st_b_var(st_build *b, const char *base, const st_type *t) {
    return t ? st_fresh_var(b->cx, base, t) : NULL;
}

/* A fresh variable to bind value to with a let: bound as the type checker
 * binds it (st_let_var), so the printed program reads back the same. */
static inline const st_node *st_b_bound(st_build *b, const char *base, const st_node *value) {
    const char *name = value ? st_fresh_name(b->cx, base) : NULL;
    return name ? st_let_var(b->cx, name, value) : NULL;
}

static inline const st_node *st_b_lambda_n(st_build *b, uint32_t n, const st_node *const *params, const st_node *body) {
    if (!body || !st_b_all(params, n)) return NULL;
    st_err e = {0};
    return st_b_check(b, st_lambda(b->cx, n, params, body, &e), &e);
}
#define ST_LAMBDA(b, body, ...) st_b_lambda_n((b), (uint32_t)ST_B_NARGS(__VA_ARGS__), (const st_node *[]){__VA_ARGS__}, (body))

/* let var = value in body; let (vars…) = value in body */
static inline const st_node *st_b_let_n(st_build *b, uint32_t n, const st_node *const *vars, const st_node *value,
                                     const st_node *body) {
    if (!value || !body || !st_b_all(vars, n)) return NULL;
    st_err e = {0};
    return st_b_check(b, st_let(b->cx, n, vars, value, body, &e), &e);
}
static inline const st_node *st_b_let(st_build *b, const st_node *var, const st_node *value, const st_node *body) {
    return st_b_let_n(b, 1, &var, value, body);
}

/* f(args…) as an expression */
static inline const st_node *st_b_call_n(st_build *b, const st_node *f, uint32_t n, const st_node *const *args) {
    if (!f || !st_b_all(args, n)) return NULL;
    st_err e = {0};
    return st_b_check(b, st_apply_fn(b->cx, f, n, args, &e), &e);
}
#define ST_CALL(b, f, ...) st_b_call_n((b), (f), (uint32_t)ST_B_NARGS(__VA_ARGS__), (const st_node *[]){__VA_ARGS__})

/* The size s as an i64 expression of the def's sizes (a value to compute
 * with: compare, add). */
static inline const st_node *st_b_size_value(st_build *b, const st_size *s) {
    st_err e = {0};
    const st_node *n = s ? st_size_expr(b->cx, st_rw_def(b->rw), s, &e) : NULL;
    if (!n && !b->err->message[0]) *b->err = e;
    return n;
}

/* The size s as a length (of iota, replicate): a plain count when constant. */
static inline const st_node *st_b_count(st_build *b, int64_t v);
static inline const st_node *st_b_size(st_build *b, const st_size *s) {
    int64_t v;
    if (s && st_size_is_const(s, &v)) return st_b_count(b, v);
    st_err e = {0};
    const st_node *n = st_size_expr(b->cx, st_rw_def(b->rw), s, &e);
    if (!n && !b->err->message[0]) *b->err = e;
    return n;
}

/* The element type of an array type. */
static inline const st_type *st_elem_of(const st_node *xs) { return xs ? xs->type->elem : NULL; }

/* The condition of a rule whose result makes kernels of its own (lookback,
 * subhistogram): the node runs once per program, at the top level of a def,
 * not inside a lambda (a map's function, an operator), where it would run
 * once per element. False, with the reason, when it is inside one. */
static inline bool st_at_top_level(st_rw *rw, const char *rule, const char *what, st_err *why) {
    if (!st_rw_under_lambda(rw)) return true;
    return st_reject(why, "%s: this %s is inside a lambda (a map's function, an operator, or the body of a "
                   "loop that one work-item runs), so it runs once per element; %s makes kernels of its own and takes a %s "
                   "at the top level of a def (the body of a top-level loop over arrays counts)", rule, what, rule, what);
}

#endif
