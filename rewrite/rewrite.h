/* rewrite/rewrite.h — the public interface of strata's rewrite stage.
 *
 *   rules        functions from an expression to a new expression or a reason
 *                why not, with declared parameters and conditions
 *   registry     the rules known by name (built-ins, later plugins)
 *   strategies   rules composed with Elevate-style combinators, parsed from
 *                the same text a user writes on the command line
 *   helpers      what a rule needs to build IR: fresh variables, applying a
 *                function, substitution, use counts
 *
 * A rewrite never changes a type: every rule maps an expression to one of the
 * same type, and the engine checks it. Like the rest of the library nothing
 * here prints or exits; --trace output comes back through a callback.
 */
#ifndef STRATA_REWRITE_H
#define STRATA_REWRITE_H

#include "ir/ir.h"

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

/* ------------------------------------------------------------------------ */
/* Registry                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct st_registry st_registry;

st_registry *st_registry_new(void);
void st_registry_free(st_registry *r);
/* Add a rule (kept by pointer: it must outlive the registry). A name that is
 * taken, or a rule that declares itself badly, is refused. */
bool st_registry_add(st_registry *r, const st_rule *rule, st_err *err);
const st_rule *st_registry_find(const st_registry *r, const char *name);
size_t st_registry_count(const st_registry *r);
const st_rule *st_registry_at(const st_registry *r, size_t i);

/* Load the plugin at path (a shared module built against rewrite/plugin.h)
 * and add its rules, their origin the module's absolute path. Refused, with
 * nothing added: a missing or unloadable file, a module that is not a strata
 * plugin (no `strata_plugin_abi` or `strata_plugin_register`), one built
 * for another plugin ABI, one loaded already, one whose register function
 * fails or adds no rule, and a rule whose name is taken. The module stays
 * loaded until the registry is freed. */
bool st_registry_load_plugin(st_registry *r, const char *path, st_err *err);
/* The plugins loaded, in order: their absolute paths. */
size_t st_registry_plugin_count(const st_registry *r);
const char *st_registry_plugin_path(const st_registry *r, size_t i);

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
/* Rewriting                                                                */
/* ------------------------------------------------------------------------ */

/* Called once per rule application that took part in the result, in the
 * order the rules began (a composite before the rules of its strategy, which
 * have a greater depth), when st_rewrite returns: the rule, its arguments, the
 * expression it rewrote and what it became. */
typedef void (*st_trace_fn)(void *data, int depth, const st_rule *rule, const int64_t *args,
                            const st_node *before, const st_node *after);

st_rw *st_rw_new(st_ctx *cx, const st_registry *reg);
void st_rw_free(st_rw *rw);
void st_rw_set_trace(st_rw *rw, st_trace_fn fn, void *data);
st_ctx *st_rw_ctx(st_rw *rw);
/* The registry the rewrite finds rules in (a composite rule may look up
 * others by name, or parse a strategy text against it). */
const st_registry *st_rw_registry(st_rw *rw);
/* The def being rewritten (by st_rewrite_def), whose size variables are in
 * scope for the rules; NULL for a bare st_rewrite. */
const st_def *st_rw_def(st_rw *rw);

/* Apply s to e: the result, or NULL with why it did not apply. */
const st_node *st_rewrite(st_rw *rw, const st_strategy *s, const st_node *e, st_err *why);
/* The nodes the traversals entered to reach the node being rewritten, from
 * the root of the rewrite to its parent (*n of them; none at the root). */
const st_node *const *st_rw_path(const st_rw *rw, size_t *n);
/* Where the node being rewritten runs, read off its path by
 * rewrite/placement.c, which knows how codegen places loops. */
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
/* Apply s to the body of def: a new def (same parameters, facts and result
 * type), or NULL with the reason. */
const st_def *st_rewrite_def(st_rw *rw, const st_strategy *s, const st_def *def, st_err *why);
/* The program with one def replaced. */
const st_program *st_program_replace(st_ctx *cx, const st_program *p, const st_def *old,
                                     const st_def *now);

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
/* e with every exscan(op, z, xs) made the inclusive scan of xs shifted
 * right by one, z in front:
 *     scan(op, z, iota(n) |> map(i => z where i == 0, else xs[i - 1]))
 * (element 0 is z op z = z, z being op's neutral element). The shifted
 * input is a view (index-fused; xs let-bound first when one element of it
 * costs more than a read), read where the scan reads its input: no pass and
 * no buffer of its own. So an exscan is a scan to every rule — the scan
 * rules, lookback, segmented-scan, the fusions — and to codegen, and none
 * has a case of its own for it. The look-back scan reads element i - 1 where
 * the inclusive one reads element i: the carry each element gets is its
 * exclusive prefix, computed once. Element 0 of the shifted input is z, so
 * z must be op's neutral element: a seed st_seeds_as_neutral would take out
 * comes out first (st_seed_taken_out). The rule exscans-as-scans does this
 * (strategies/normalise.c). def writes symbolic lengths (NULL: constant lengths only). */
const st_node *st_exscans_as_scans(st_ctx *cx, const st_def *def, const st_node *e, st_err *err);
/* e with every scan, exscan and reduce seeded by a value other than its
 * operator's neutral element (where strata knows it: + * & | ^ min max && ||
 * on one number) made one seeded by the neutral element, the seed applied
 * after (map(y => op(z, y), …), op(z, …), or in a post-function), and every
 * reduce_by_index's z made the neutral element (it reads none): the parallel
 * rules start every block from the seed (rewrite/seeds.c says more).
 * The rule seeds-as-neutral does this (strategies/normalise.c). */
const st_node *st_seeds_as_neutral(st_ctx *cx, const st_node *e, st_err *err);
/* Is n a scan, exscan, reduce or reduce_by_index[_2d] whose seed
 * st_seeds_as_neutral would take out: its operator one whose neutral element
 * strata knows, its seed not that element? A rule that starts blocks from
 * the seed refuses such a node. */
bool st_seed_not_neutral(const st_node *n);
/* n alone (not what it holds) as st_seeds_as_neutral makes it: a
 * reduce_by_index with the neutral element for z, a scan with the seed in
 * its post-function, a reduce op(z, …) of one from the neutral element; n
 * itself where its seed stays. */
const st_node *st_seed_taken_out(st_ctx *cx, const st_node *n, st_err *err);
/* def with every variable it binds renamed by its place in the program:
 * the first binder of a base name (`blk`, from `blk_3`) in program order
 * takes the base name, the next ones `blk_2`, `blk_3`, …; the def's
 * parameters and sizes keep theirs, and no binder takes one of them. So
 * two defs equal up to the names of their binders become one, whatever
 * rewrites (and fresh names) made them: codegen's kernels, and their
 * SHA-256, depend on the program alone, not on the context's history. */
const st_def *st_def_canonical(st_ctx *cx, const st_def *def, st_err *err);
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

#endif
