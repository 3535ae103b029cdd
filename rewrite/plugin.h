/* rewrite/plugin.h — the one header a rewrite rule needs, in strata or out of it.
 *
 * A plugin is a shared module that adds rules to strata's registry: one C
 * file, built against this header (installed as <strata/rewrite/plugin.h>,
 * found with `pkg-config --cflags strata`), loaded with `--plugin PATH.so`
 * by every command. Its rules are then used by name in any strategy and any
 * exploration, like the built-in ones, which are written against this very
 * header. docs/writing-a-rule.md walks through one from an empty file.
 *
 * What is here, with ir/nodes.h (the IR a rule reads and builds), and
 * nothing else: no files, arenas, values, interpreter, registry to fill or
 * engine to run. Its functions and ir/nodes.h's are exactly what the
 * executable exports (cli/plugin-abi.map; the plugin suite checks both).
 *   rules          st_rule, its parameters and answers (st_reject, st_no_match)
 *   the ABI        ST_PLUGIN_ABI and the ST_PLUGIN(...) line every plugin has
 *   registration   st_plugin_add_rule, called by the plugin's register function
 *   strategies     what a composite rule expands to, built (st_s_seq, …) or
 *                  parsed from text
 *   the context    st_rw: the context, the def, where the node is
 *   helpers        fresh variables, applying a function, substitution, uses
 *   matching       a scan in any of its forms (st_scan_form_of); the IR's nodes
 *                  are plain structs (ir/nodes.h) to be read directly
 *   building       st_build and ST_PRIM, ST_CALL, ST_LAMBDA, ST_TUPLE, st_b_let,
 *                  …: expressions built in one go, checked once at the end
 *   conditions     st_size_divides and the rest of ir/nodes.h's sizes
 *
 * A plugin calls into the `strata` executable that loads it (the executable
 * exports its functions), so it links against nothing. */
#ifndef STRATA_REWRITE_PLUGIN_H
#define STRATA_REWRITE_PLUGIN_H

#include "ir/nodes.h"

#include <string.h>

/* ------------------------------------------------------------------------ */
/* Rules                                                                    */
/* ------------------------------------------------------------------------ */

enum { ST_RULE_MAX_PARAMS = 6 };

/* A parameter is a whole number in [min, max], or, when it has names, one
 * of them: written by name (MEM=local), its value the name's index (0 for
 * the first), min and max then ignored. */
typedef struct st_param {
    const char *name;   /* "BS" */
    const char *doc;    /* "the block size" */
    int64_t min, max;   /* the valid range, both included (a number) */
    bool has_default;
    int64_t def;
    bool optional;      /* may be left out (the rule's check decides); reads ST_PARAM_UNSET */
    const char *const *names; /* NULL: a number; else NULL-terminated, e.g. {"global", "local", NULL} */
} st_param;

/* How many names a named parameter takes (0: it is a number). */
uint32_t st_param_nnames(const st_param *p);
/* A parameter's value as a strategy writes it: its name, or the number. */
void st_param_print(const st_param *p, int64_t value, st_buf *out);

/* A parameter that was not given and has no default reads as this. */
#define ST_PARAM_UNSET INT64_MIN

typedef struct st_rw st_rw;
typedef struct st_strategy st_strategy;

/* A primitive rule applies at the root of e: the rewritten expression, or
 * NULL with the reason in *why ("needs a scan", "the length N is not a
 * multiple of 256"). args holds one value per declared parameter. */
typedef const st_node *(*st_rule_apply)(st_rw *rw, const st_node *e, const int64_t *args, st_err *why);
/* A composite rule is a strategy over the node e it is applied to, made
 * from e and its arguments (NULL with the reason when its conditions do not
 * hold at e). The engine runs it on e and on what it builds there, never
 * inside e's inputs, which stand behind fresh variables while it runs: so
 * `first(scan, …)` in it finds the scans it made, not a scan that computes
 * e's input. An input it leaves used more than once, or inside a lambda, is
 * let-bound once. Its rules show in a trace one level below it. */
typedef const st_strategy *(*st_rule_expand)(st_rw *rw, const st_node *e, const int64_t *args, st_err *why);
/* A rule's answers when it does not apply at e, which fill *why (the
 * engine then places it at e's line in the source):
 *   st_reject    e is of the rule's shape, and a condition fails ("the
 *                length N is not a multiple of 256"): false
 *   st_no_match  e is not of the rule's shape ("needs a scan"), which a
 *                traversal tells from a failed condition: NULL */
bool st_reject(st_err *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const st_node *st_no_match(st_err *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Conditions on the parameters alone, checked when a strategy is parsed. */
typedef bool (*st_rule_check)(const int64_t *args, st_err *why);

typedef struct st_rule {
    const char *name;       /* "scan-then-propagate" */
    const char *summary;    /* one line */
    const char *conditions; /* in words, for `strata strategies` */
    const char *origin;     /* "built-in", or the plugin's path */
    uint32_t nparams;
    st_param params[ST_RULE_MAX_PARAMS];
    st_rule_apply apply;    /* exactly one of apply and expand */
    st_rule_expand expand;
    st_rule_check check;    /* may be NULL */
} st_rule;

/* The rules known by name (built-ins, then plugins). */
typedef struct st_registry st_registry;
const st_rule *st_registry_find(const st_registry *r, const char *name);

/* ------------------------------------------------------------------------ */
/* The ABI                                                                  */
/* ------------------------------------------------------------------------ */

/* The version of what a plugin and strata share: this header and
 * ir/nodes.h (their structs, enums and functions). strata refuses a plugin
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
/* Strategies                                                               */
/* ------------------------------------------------------------------------ */

typedef enum st_strategy_kind {
    ST_S_RULE,      /* a rule with its arguments */
    ST_S_ID,        /* id: succeeds, changes nothing */
    ST_S_FAIL,      /* fail */
    ST_S_SEQ,       /* a ; b */
    ST_S_CHOICE,    /* a <+ b */
    ST_S_TRY,       /* try(a) */
    ST_S_REPEAT,    /* repeat(a): a until it fails */
    ST_S_ITERATE,   /* iterate(n, a): a exactly n times */
    ST_S_FIRST,     /* first(pattern, a): at the first node matching, in program order */
    ST_S_EACH,      /* each(pattern, a): at every node matching, innermost first */
    ST_S_TOPDOWN,   /* topdown(a): at the first node, top-down, where a succeeds */
    ST_S_BOTTOMUP,  /* bottomup(a): at the first node, bottom-up, where a succeeds */
    ST_S_ALL,       /* all(a): on every child */
    ST_S_ONE,       /* one(a): on the first child where it succeeds */
    ST_S_NORMALIZE  /* normalize(a): wherever a applies, until it applies nowhere */
} st_strategy_kind;

/* What first and each look for: a primitive, `let`, `lambda`, or anything;
 * written `top scan`, only such a node outside every lambda (at the top
 * level of a def: run once per program, not once per element). */
typedef enum st_pattern_kind { ST_PAT_PRIM, ST_PAT_LET, ST_PAT_LAMBDA, ST_PAT_ANY } st_pattern_kind;

typedef struct st_pattern {
    st_pattern_kind kind;
    st_prim prim;
    bool top;
} st_pattern;

/* The pattern of a primitive, anywhere: what first(scan, …) finds. */
static inline st_pattern st_pattern_of(st_prim prim) { return (st_pattern){.kind = ST_PAT_PRIM, .prim = prim}; }

struct st_strategy {
    st_strategy_kind kind;
    const st_rule *rule;                 /* RULE */
    int64_t args[ST_RULE_MAX_PARAMS];    /* RULE: one per parameter, defaults filled in */
    const st_strategy *a, *b;
    int64_t n;                           /* ITERATE */
    st_pattern pattern;                  /* FIRST, EACH */
    bool quiet;                          /* ONE, TOPDOWN, BOTTOMUP: the engine's step of a traversal, which
                                            leaves saying why it failed to the traversal (TOPDOWN and
                                            BOTTOMUP then hold their definition in b) */
};

/* Parse strategy text such as
 *     scan-then-propagate(BS=512) ; first(scan, brent-kung(BF=2, TD=5))
 * Errors are located by column (err->loc.line 1, err->loc.file `what`); an
 * unknown rule names the closest known ones; arguments are checked against
 * the parameters' ranges and the rule's own conditions. When that check is
 * what fails (the text is well-formed, the values are not allowed) err->arg
 * is ≥ 0 (an exploration counts such a point as a constraint), else -1. */
const st_strategy *st_strategy_parse(st_ctx *cx, const st_registry *reg, const char *what,
                                     const char *text, st_err *err);
/* The strategy as text that st_strategy_parse reads back. */
void st_strategy_print(const st_strategy *s, st_buf *out);

/* Build strategies in C (composite rules do). */
const st_strategy *st_s_rule(st_ctx *cx, const st_rule *rule, const int64_t *args);
const st_strategy *st_s_unary(st_ctx *cx, st_strategy_kind kind, const st_strategy *a);
const st_strategy *st_s_binary(st_ctx *cx, st_strategy_kind kind, const st_strategy *a,
                               const st_strategy *b);
const st_strategy *st_s_iterate(st_ctx *cx, int64_t n, const st_strategy *a);
const st_strategy *st_s_at(st_ctx *cx, st_strategy_kind kind, st_pattern pattern,
                           const st_strategy *a); /* FIRST or EACH */
/* The ones a composite reads by: a ; b, first(prim, a), try(a) (NULL in,
 * NULL out, so that a strategy is built in one expression and checked once). */
const st_strategy *st_s_seq(st_ctx *cx, const st_strategy *a, const st_strategy *b);
const st_strategy *st_s_first(st_ctx *cx, st_prim prim, const st_strategy *a);
const st_strategy *st_s_try(st_ctx *cx, const st_strategy *a);

/* ------------------------------------------------------------------------ */
/* The rewrite context                                                      */
/* ------------------------------------------------------------------------ */

/* What a rule is applied in: the context its nodes live in, the registry,
 * the def, and where the node is (st_rw is declared with the rules). */
st_ctx *st_rw_ctx(st_rw *rw);
/* The registry the rewrite finds rules in (a composite rule may look up
 * others by name, or parse a strategy text against it). */
const st_registry *st_rw_registry(st_rw *rw);
/* The def being rewritten (by st_rewrite_def), whose size variables are in
 * scope for the rules; NULL for a bare st_rewrite. */
const st_def *st_rw_def(st_rw *rw);
/* Is the node being rewritten inside a lambda (a map's function, an
 * operator), so that it runs once per element rather than once per program?
 * A rule whose result makes kernels of its own refuses there. */
bool st_rw_under_lambda(const st_rw *rw);
/* How many lambdas the node being rewritten is inside (0: the top level of a
 * def; 2: a map's function inside a map's function, one work-item's code). */
int st_rw_lambda_depth(const st_rw *rw);
/* Loops: the body (and condition) of a loop over arrays at the top level
 * runs once per turn at the top, between kernels, so it is not counted as a
 * lambda above (a scan there is a top-level scan); any other loop's body is
 * one work-item's sequential code, and this says the node is inside one. */
bool st_rw_in_sequential_loop(const st_rw *rw);

/* ------------------------------------------------------------------------ */
/* Helpers for rules                                                        */
/* ------------------------------------------------------------------------ */

/* A variable of type t with a name not used before in this context. */
const st_node *st_fresh_var(st_ctx *cx, const char *base, const st_type *t);
/* f applied to args, as an expression: an operator becomes the operation, a
 * lambda its body with the parameters bound to the arguments (substituted
 * when an argument is a variable or literal, let-bound otherwise). A lambda
 * of k parameters given one k-tuple takes its components. */
const st_node *st_apply_fn(st_ctx *cx, const st_node *f, uint32_t nargs,
                           const st_node *const *args, st_err *err);
/* e with the free occurrences of var replaced by repl; binders that would
 * capture a free variable of repl are renamed. */
const st_node *st_subst(st_ctx *cx, const st_node *e, const st_node *var, const st_node *repl,
                        st_err *err);
/* e with index fusion applied everywhere: a read of one element of a
 * producer reads only what that element needs. get(i, map(f, xs)) is
 * f(get(i, xs)); through zip a tuple of reads, iota the index (as i64),
 * replicate the value, join get(i % m, get(i / m, rows)), a row of a split
 * or of a transpose one read of what they view. Same values, never more
 * work. def's sizes write symbolic row lengths (NULL: such joins stay). */
const st_node *st_fuse_index(st_ctx *cx, const st_def *def, const st_node *e, st_err *err);
/* z where i == 0, else xs[i - 1]: what comes before element i of a scan
 * (a block's prefix, an exclusive scan's element). The read is
 * xs[max(i - 1, 0)], made whatever i is (xs is not empty where an i
 * exists), and the choice a select after it: a read on one side of a
 * branch cannot be made early, which keeps a CPU compiler from vectorising
 * a loop around it. */
const st_node *st_exclusive_at(st_ctx *cx, const st_node *xs, const st_node *i, const st_node *z,
                               st_err *err);
/* How often var occurs free in e, and whether one of those is inside a lambda
 * (where fusing into it would repeat work once per element). */
uint32_t st_count_uses(const st_node *e, const st_node *var, bool *under_lambda);
/* How deep e nests as code that runs: its depth, where an index checked
 * against a length (`iota(n) |> get(i)`, what index fusion leaves of a read
 * of a view, rewrite/fuse.c) counts as its index alone, the length being a
 * bound to compare with, not work. What decides whether an expression is
 * cheap enough to repeat reads this, so that checking an index makes
 * nothing that was fused unfused. */
uint32_t st_cost_depth(const st_node *e);
/* Does var occur free in e? */
bool st_occurs(const st_node *e, const st_node *var);
/* Are a and b the same up to the names of the variables they bind (the
 * same expression written by two rewrites, or renamed at two places by
 * st_def_canonical)? */
bool st_alpha_equal(const st_node *a, const st_node *b);

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

/* x converted to kind `to` (x itself when it has that kind already) */
static inline const st_node *st_b_conv(st_build *b, st_scalar_kind to, const st_node *x) {
    if (!x || (x->type->kind == ST_TYPE_SCALAR && x->type->scalar == to)) return x;
    st_err e = {0};
    return st_b_check(b, st_conv(b->cx, to, x, &e), &e);
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
