/* tests/test_strategy.c — the strategy language and the engine behind it.
 *
 *   parser      every construct, `;` tighter than `<+`, print → parse → print,
 *               errors located by column with messages that help
 *   engine      each combinator's meaning on small programs, with tiny test
 *               rules registered next to the built-ins; failure reasons; the
 *               step limit; the trace
 *   registry    what it refuses
 *   helpers     substitution, use counts, applying a function, checked by
 *               running the results on the interpreter */
#include "harness.h"
#include "rewrite/rewrite.h"
#include "strategies/strategies.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>

static st_ctx *cx;
static st_registry *reg;
static st_rw *rw;

/* The defs parsed by this test, so that a rewrite of a def's body runs with
 * the def in scope (rules need its size variables). */
static const st_def *parsed[64];
static int nparsed;

/* ------------------------------------------------------------------------ */
/* Test rules                                                               */
/* ------------------------------------------------------------------------ */

/* What the recording rules saw, in order. */
static const st_node *seen[64];
static int nseen;

static const st_node *mismatch(st_err *why, const char *msg) { return st_no_match(why, "%s", msg); }

static bool is_lit_zero(const st_node *n) {
    int64_t v;
    return n->kind == ST_NODE_LIT && st_type_is_int(n->type) && st_scalar_as_i64(n->type->scalar, n->u.lit, &v) && v == 0;
}

/* add-zero: x + 0 -> x */
static const st_node *add_zero(st_rw *r, const st_node *e, const int64_t *args, st_err *why) {
    (void)r, (void)args;
    if (e->kind != ST_NODE_BINOP || e->u.binop != ST_OP_ADD || !is_lit_zero(e->kids[1]))
        return mismatch(why, "add-zero rewrites `x + 0`");
    return e->kids[0];
}

/* never: the shape always fits, the condition never holds */
static const st_node *never(st_rw *r, const st_node *e, const int64_t *args, st_err *why) {
    (void)r, (void)e, (void)args;
    st_reject(why, "never: its condition does not hold (by design)");
    return NULL;
}

/* same: succeeds with its input */
static const st_node *same(st_rw *r, const st_node *e, const int64_t *args, st_err *why) {
    (void)r, (void)args, (void)why;
    return e;
}

/* note: records e, succeeds with it */
static const st_node *note(st_rw *r, const st_node *e, const int64_t *args, st_err *why) {
    (void)r, (void)args, (void)why;
    if (nseen < 64) seen[nseen++] = e;
    return e;
}

/* note-fail: records e, fails with a condition */
static const st_node *note_fail(st_rw *r, const st_node *e, const int64_t *args, st_err *why) {
    (void)r, (void)args;
    if (nseen < 64) seen[nseen++] = e;
    st_reject(why, "note-fail: recorded and refused");
    return NULL;
}

/* inc: an i32 literal n -> n + 1 (a new node each time, never deeper) */
static const st_node *inc(st_rw *r, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    if (e->kind != ST_NODE_LIT || e->type->scalar != ST_I32 || e->type->kind != ST_TYPE_SCALAR)
        return mismatch(why, "inc rewrites an i32 literal");
    return st_lit_int(st_rw_ctx(r), ST_I32, (int64_t)e->u.lit.i32 + 1);
}

/* grow: an i32 expression x -> x + 0 (a new, deeper node each time) */
static const st_node *grow(st_rw *r, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    if (e->type->kind != ST_TYPE_SCALAR || e->type->scalar != ST_I32) return mismatch(why, "grow rewrites an i32");
    return st_binary(st_rw_ctx(r), ST_OP_ADD, e, st_lit_int(st_rw_ctx(r), ST_I32, 0), why);
}

/* wrap-map: map(f, xs) -> map(f, map(x => x, xs)): produces a map itself */
static const st_node *wrap_map(st_rw *r, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    if (e->kind != ST_NODE_PRIM || e->u.prim != ST_PRIM_MAP || e->nkids != 2) return mismatch(why, "wrap-map rewrites a map");
    if (nseen < 64) seen[nseen++] = e;
    st_ctx *c = st_rw_ctx(r);
    const st_node *xs = e->kids[1];
    /* (padded: st_lambda reads past its parameters, which the test
       constructors_read_their_arguments_only shows) */
    const st_node *x[3] = {st_fresh_var(c, "x", xs->type->elem), NULL, NULL};
    const st_node *id = st_lambda(c, 1, x, x[0], why);
    const st_node *inner = id ? st_prim_node(c, ST_PRIM_MAP, 2, (const st_node *[]){id, xs}, why) : NULL;
    return inner ? st_prim_node(c, ST_PRIM_MAP, 2, (const st_node *[]){e->kids[0], inner}, why) : NULL;
}

/* to-i64: changes the type, which the engine must refuse */
static const st_node *to_i64(st_rw *r, const st_node *e, const int64_t *args, st_err *why) {
    (void)args, (void)why;
    return st_lit_int(st_rw_ctx(r), ST_I64, e->kind == ST_NODE_LIT ? 1 : 2);
}

static const st_rule rule_add_zero = {.name = "add-zero", .summary = "x + 0 -> x", .origin = "test", .apply = add_zero};
static const st_rule rule_never = {.name = "never", .summary = "never applies", .origin = "test", .apply = never};
static const st_rule rule_same = {.name = "same", .summary = "its input", .origin = "test", .apply = same};
static const st_rule rule_note = {.name = "note", .summary = "records", .origin = "test", .apply = note};
static const st_rule rule_note_fail = {.name = "note-fail", .summary = "records, fails", .origin = "test", .apply = note_fail};
static const st_rule rule_inc = {.name = "inc", .summary = "n -> n + 1", .origin = "test", .apply = inc};
static const st_rule rule_grow = {.name = "grow", .summary = "x -> x + 0", .origin = "test", .apply = grow};
static const st_rule rule_wrap_map = {.name = "wrap-map", .summary = "map(f, map(id, xs))", .origin = "test", .apply = wrap_map};
static const st_rule rule_to_i64 = {.name = "to-i64", .summary = "a type change", .origin = "test", .apply = to_i64};

/* knobs(A = 5 by default, B required, C optional): its input */
static bool knobs_check(const int64_t *args, st_err *why) {
    if (args[0] + args[1] == 13) return st_reject(why, "A + B must not be 13");
    return true;
}
static const st_rule rule_knobs = {
    .name = "knobs",
    .summary = "parameters of every kind",
    .origin = "test",
    .nparams = 3,
    .params = {{.name = "A", .doc = "with a default", .min = 1, .max = 10, .has_default = true, .def = 5},
               {.name = "B", .doc = "required", .min = -10, .max = 10},
               {.name = "C", .doc = "optional", .min = 0, .max = 3, .optional = true}},
    .apply = same,
    .check = knobs_check,
};

/* strip-twice: a composite by expand, `topdown(add-zero) ; topdown(add-zero)` */
static const st_strategy *strip_twice(st_rw *r, const st_node *e, const int64_t *args, st_err *why) {
    (void)e, (void)args, (void)why;
    st_ctx *c = st_rw_ctx(r);
    const st_strategy *one = st_s_unary(c, ST_S_TOPDOWN, st_s_rule(c, &rule_add_zero, NULL));
    return st_s_binary(c, ST_S_SEQ, one, one);
}
static const st_rule rule_strip_twice = {.name = "strip-twice", .summary = "twice topdown(add-zero)", .origin = "test", .expand = strip_twice};

/* forever: a composite that expands into itself */
static const st_rule rule_forever;
static const st_strategy *forever(st_rw *r, const st_node *e, const int64_t *args, st_err *why) {
    (void)e, (void)args, (void)why;
    return st_s_rule(st_rw_ctx(r), &rule_forever, NULL);
}
static const st_rule rule_forever = {.name = "forever", .summary = "expands into itself", .origin = "test", .expand = forever};

static const st_rule *const test_rules[] = {&rule_add_zero, &rule_never, &rule_same, &rule_note, &rule_note_fail,
                                            &rule_inc, &rule_grow, &rule_wrap_map, &rule_to_i64, &rule_knobs,
                                            &rule_strip_twice, &rule_forever};

static void setup(void) {
    cx = st_ctx_new();
    reg = st_registry_new();
    st_err err = {0};
    ck_assert_msg(st_register_builtin_rules(reg, &err), "%s", err.message);
    for (size_t i = 0; i < sizeof test_rules / sizeof *test_rules; i++)
        ck_assert_msg(st_registry_add(reg, test_rules[i], &err), "%s: %s", test_rules[i]->name, err.message);
    rw = st_rw_new(cx, reg);
    nseen = 0;
    nparsed = 0;
}

static void teardown(void) {
    st_rw_free(rw);
    st_registry_free(reg);
    st_ctx_free(cx);
}

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */


static const st_def *def_of(const char *src) {
    const st_program *p = parse_ok(cx, src);
    st_err err = {0};
    const st_def *d = st_program_entry(p, NULL, &err);
    ck_assert_msg(d != NULL, "%s", err.message);
    if (nparsed < 64) parsed[nparsed++] = d;
    return d;
}

/* s applied to e: through st_rewrite_def when e is the body of a def parsed
 * here, else through st_rewrite */
static const st_node *apply(const st_strategy *s, const st_node *e, st_err *why) {
    for (int i = nparsed - 1; i >= 0; i--)
        if (parsed[i]->body == e) {
            const st_def *now = st_rewrite_def(rw, s, parsed[i], why);
            return now ? now->body : NULL;
        }
    return st_rewrite(rw, s, e, why);
}

static const st_node *body_of(const char *src) { return def_of(src)->body; }

/* The node as text; four buffers in turn, so that a check can show several. */
static const char *text_of(const st_node *n) {
    static char bufs[4][4096];
    static int k;
    char *t = bufs[k++ % 4];
    st_buf b = {0};
    st_print_node(n, &b);
    snprintf(t, sizeof bufs[0], "%s", b.data ? b.data : "");
    st_buf_free(&b);
    return t;
}

static const char *strategy_text(const st_strategy *s) {
    static char bufs[2][4096];
    static int k;
    char *t = bufs[k++ % 2];
    st_buf b = {0};
    st_strategy_print(s, &b);
    snprintf(t, sizeof bufs[0], "%s", b.data ? b.data : "");
    st_buf_free(&b);
    return t;
}

static const st_strategy *strat(const char *text) {
    st_err err = {0};
    const st_strategy *s = st_strategy_parse(cx, reg, "-s", text, &err);
    ck_assert_msg(s != NULL, "`%s` does not parse: col %d: %s", text, err.loc.col, err.message);
    return s;
}

static st_err strat_fails(const char *text) {
    st_err err = {0};
    const st_strategy *s = st_strategy_parse(cx, reg, "-s", text, &err);
    ck_assert_msg(s == NULL, "`%s` parsed, as `%s`", text, s ? strategy_text(s) : "");
    ck_assert_msg(err.kind == ST_ERR_USER, "`%s`: not a user error: %s", text, err.message);
    ck_assert_msg(err.loc.line == 1, "`%s`: line %d, not 1: %s", text, err.loc.line, err.message);
    ck_assert_msg(err.loc.file && !strcmp(err.loc.file, "-s"), "`%s`: the error is not located in `-s`", text);
    return err;
}

/* The column (from 1) of needle in text: its only occurrence. A backquote in
 * the needle marks where the column is, after some context: "BS=`0". */
static int col_of(const char *text, const char *needle) {
    const char *mark = strchr(needle, '`');
    int skip = mark ? (int)(mark - needle) : 0;
    char plain[256];
    snprintf(plain, sizeof plain, "%.*s%s", skip, needle, mark ? mark + 1 : needle);
    const char *at = strstr(text, plain);
    ck_assert_msg(at != NULL, "test bug: `%s` is not in `%s`", plain, text);
    ck_assert_msg(strstr(at + 1, plain) == NULL, "test bug: `%s` is not unique in `%s`", plain, text);
    return (int)(at - text) + skip + 1;
}

static void fails_at(const char *text, int col, const char *const *parts) {
    st_err e = strat_fails(text);
    ck_assert_msg(e.loc.col == col, "\n  %s\n  expected the error at column %d, got %d: %s", text, col, e.loc.col,
                  e.message);
    for (; *parts; parts++)
        ck_assert_msg(strstr(e.message, *parts), "\n  %s\n  expected \"%s\" in \"%s\"", text, *parts, e.message);
}

/* text fails at the column of needle with a message containing every part */
#define FAILS_AT(text, needle, ...) fails_at((text), col_of((text), (needle)), (const char *const[]){__VA_ARGS__, NULL})
#define FAILS_AT_COL(text, col, ...) fails_at((text), (col), (const char *const[]){__VA_ARGS__, NULL})

static const st_node *rewrite_ok(const char *s, const st_node *e) {
    st_err why = {0};
    const st_node *r = apply(strat(s), e, &why);
    ck_assert_msg(r != NULL, "`%s` failed on `%s`: %s", s, text_of(e), why.message);
    return r;
}

static st_err rewrite_fails(const char *s, const st_node *e) {
    st_err why = {0};
    const st_node *r = apply(strat(s), e, &why);
    ck_assert_msg(r == NULL, "`%s` applied to `%s`, giving `%s`", s, text_of(e), r ? text_of(r) : "");
    ck_assert_msg(why.message[0], "`%s` failed without a reason", s);
    return why;
}

/* `s` turns the body of src into text `want` */
static void rewrites_to(const char *s, const char *src, const char *want) {
    const st_node *r = rewrite_ok(s, body_of(src));
    ck_assert_msg(!strcmp(text_of(r), want), "`%s` gave\n%s\nnot\n%s", s, text_of(r), want);
}

/* How many nodes of e (as a tree, shared subtrees counted each time) are n. */
static int occurrences(const st_node *e, const st_node *n) {
    if (e == n) return 1;
    int c = 0;
    for (uint32_t i = 0; i < e->nkids; i++) c += occurrences(e->kids[i], n);
    return c;
}

static int count_prim(const st_node *e, st_prim p) {
    int c = e->kind == ST_NODE_PRIM && e->u.prim == p;
    for (uint32_t i = 0; i < e->nkids; i++) c += count_prim(e->kids[i], p);
    return c;
}

static int count_kind(const st_node *e, st_node_kind k) {
    int c = e->kind == k;
    for (uint32_t i = 0; i < e->nkids; i++) c += count_kind(e->kids[i], k);
    return c;
}

static st_scalar i32v(int32_t v) {
    st_scalar s;
    memset(&s, 0, sizeof s);
    s.i32 = v;
    return s;
}

/* d with its body replaced by body, run on args (sizes bound from the array
 * arguments' lengths, integer parameters as sizes too). */
static st_value eval_body(const st_def *d, const st_node *body, const st_value *args, st_arena *a) {
    st_def copy = *d;
    copy.body = body;
    st_binding env[32];
    size_t nenv = 0;
    for (uint32_t i = 0; i < d->nsizes; i++)
        for (uint32_t k = 0; k < d->nparams; k++) {
            const st_type *t = d->params[k]->type;
            bool found = false;
            for (uint32_t dim = 0; t->kind == ST_TYPE_ARRAY && !found; dim++, t = t->elem)
                if (t->size == d->sizes[i]->size) {
                    const st_value *v = &args[k];
                    while (v->kind == ST_VALUE_TUPLE) v = &v->u.items[0];
                    env[nenv++] = (st_binding){d->sizes[i]->u.name, v->u.a.dims[dim]};
                    found = true;
                }
            if (found) break;
        }
    st_value out;
    st_err err = {0};
    ck_assert_msg(st_eval(cx, &copy, args, env, nenv, a, &out, &err), "eval of `%s` failed: %s", text_of(body),
                  err.message);
    return out;
}

/* ------------------------------------------------------------------------ */
/* The parser                                                               */
/* ------------------------------------------------------------------------ */

static bool same_strategy(const st_strategy *a, const st_strategy *b) {
    if (!a || !b) return a == b;
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case ST_S_RULE:
        if (a->rule != b->rule) return false;
        for (uint32_t i = 0; i < a->rule->nparams; i++)
            if (a->args[i] != b->args[i]) return false;
        return true;
    case ST_S_ID:
    case ST_S_FAIL: return true;
    case ST_S_ITERATE: return a->n == b->n && same_strategy(a->a, b->a);
    case ST_S_FIRST:
    case ST_S_EACH:
        return a->pattern.kind == b->pattern.kind && a->pattern.top == b->pattern.top &&
               (a->pattern.kind != ST_PAT_PRIM || a->pattern.prim == b->pattern.prim) && same_strategy(a->a, b->a);
    default: return same_strategy(a->a, b->a) && same_strategy(a->b, b->b);
    }
}

START_TEST(parse_rules_and_arguments) {
    const st_rule *ps = st_registry_find(reg, "parallel-scan");
    ck_assert_ptr_nonnull(ps);

    /* named */
    const st_strategy *s = strat("parallel-scan(BS=256, BF=2, SE=4)");
    ck_assert_int_eq(s->kind, ST_S_RULE);
    ck_assert_ptr_eq(s->rule, ps);
    ck_assert_int_eq(s->args[0], 256);
    ck_assert_int_eq(s->args[1], 2);
    ck_assert(s->args[2] == ST_PARAM_UNSET);
    ck_assert_int_eq(s->args[3], 4);

    /* positional, in the declared order */
    s = strat("parallel-scan(16, 2, 2)");
    ck_assert_int_eq(s->args[0], 16);
    ck_assert_int_eq(s->args[1], 2);
    ck_assert_int_eq(s->args[2], 2);
    ck_assert(s->args[3] == ST_PARAM_UNSET);

    /* named in any order, mixed with positional: a positional one follows the last named */
    s = strat("parallel-scan(BF=4, BS=64, SE=4)");
    ck_assert_int_eq(s->args[0], 64);
    ck_assert_int_eq(s->args[1], 4);
    ck_assert_int_eq(s->args[3], 4);
    s = strat("parallel-scan(64, BF=4, 2)");
    ck_assert_int_eq(s->args[0], 64);
    ck_assert_int_eq(s->args[1], 4);
    ck_assert_int_eq(s->args[2], 2);

    /* whitespace anywhere between tokens, and a signed number */
    s = strat("  \tparallel-scan ( BS = 16 ,\n BF = +2 , TD = 2 )  ");
    ck_assert_int_eq(s->args[1], 2);

    /* a rule without parameters, with or without parentheses */
    s = strat("sequential-scan");
    ck_assert_ptr_eq(s->rule, st_registry_find(reg, "sequential-scan"));
    ck_assert(same_strategy(s, strat("sequential-scan()")));

    /* defaults filled in; an optional one left out reads unset; negative values */
    s = strat("knobs(B=-3)");
    ck_assert_ptr_eq(s->rule, &rule_knobs);
    ck_assert_int_eq(s->args[0], 5);
    ck_assert_int_eq(s->args[1], -3);
    ck_assert(s->args[2] == ST_PARAM_UNSET);
    s = strat("knobs(7, 2, 1)");
    ck_assert_int_eq(s->args[0], 7);
    ck_assert_int_eq(s->args[1], 2);
    ck_assert_int_eq(s->args[2], 1);
    s = strat("knobs(B=0, A=1)");
    ck_assert_int_eq(s->args[0], 1);
    ck_assert_int_eq(s->args[1], 0);
    /* the range's ends are inside it */
    s = strat("knobs(A=10, B=-10, C=3)");
    ck_assert_int_eq(s->args[0], 10);
    ck_assert_int_eq(s->args[1], -10);
    ck_assert_int_eq(s->args[2], 3);
}
END_TEST

START_TEST(parse_combinators) {
    const st_strategy *s = strat("id");
    ck_assert_int_eq(s->kind, ST_S_ID);
    ck_assert_int_eq(strat("fail")->kind, ST_S_FAIL);

    static const struct { const char *text; st_strategy_kind kind; } unary[] = {
        {"try(id)", ST_S_TRY},           {"repeat(id)", ST_S_REPEAT}, {"topdown(id)", ST_S_TOPDOWN},
        {"bottomup(id)", ST_S_BOTTOMUP}, {"all(id)", ST_S_ALL},       {"one(id)", ST_S_ONE},
        {"normalize(id)", ST_S_NORMALIZE}};
    for (size_t i = 0; i < sizeof unary / sizeof *unary; i++) {
        s = strat(unary[i].text);
        ck_assert_msg(s->kind == unary[i].kind, "%s", unary[i].text);
        ck_assert_msg(s->a && s->a->kind == ST_S_ID, "%s", unary[i].text);
    }

    s = strat("iterate(3, sequential-scan)");
    ck_assert_int_eq(s->kind, ST_S_ITERATE);
    ck_assert_int_eq(s->n, 3);
    ck_assert_int_eq(s->a->kind, ST_S_RULE);
    ck_assert_int_eq(strat("iterate(0, fail)")->n, 0);
    ck_assert_int_eq(strat("iterate(1000000, id)")->n, 1000000);

    s = strat("first(scan, sequential-scan)");
    ck_assert_int_eq(s->kind, ST_S_FIRST);
    ck_assert_int_eq(s->pattern.kind, ST_PAT_PRIM);
    ck_assert_int_eq(s->pattern.prim, ST_PRIM_SCAN);
    s = strat("each(map, id)");
    ck_assert_int_eq(s->kind, ST_S_EACH);
    ck_assert_int_eq(s->pattern.kind, ST_PAT_PRIM);
    ck_assert_int_eq(s->pattern.prim, ST_PRIM_MAP);
    ck_assert_int_eq(strat("each(let, id)")->pattern.kind, ST_PAT_LET);
    ck_assert_int_eq(strat("first(lambda, id)")->pattern.kind, ST_PAT_LAMBDA);
    ck_assert_int_eq(strat("first(any, id)")->pattern.kind, ST_PAT_ANY);
    s = strat("each(reduce_by_index, id)");
    ck_assert_int_eq(s->pattern.prim, ST_PRIM_REDUCE_BY_INDEX);
    s = strat("first(scanSeq, id)");
    ck_assert_int_eq(s->pattern.prim, ST_PRIM_SCAN_SEQ);
    ck_assert(!s->pattern.top);
    s = strat("each(top scan, id)");
    ck_assert(s->pattern.top);
    ck_assert_int_eq(s->pattern.prim, ST_PRIM_SCAN);
    ck_assert(strat("first(top any, id)")->pattern.top);

    /* the DESIGN's example */
    s = strat("scan-then-propagate(BS=512) ; first(scan, brent-kung(BF=2, TD=5))");
    ck_assert_int_eq(s->kind, ST_S_SEQ);
    ck_assert_ptr_eq(s->a->rule, st_registry_find(reg, "scan-then-propagate"));
    ck_assert_int_eq(s->a->args[0], 512);
    ck_assert_int_eq(s->b->kind, ST_S_FIRST);
    ck_assert_int_eq(s->b->a->args[0], 2);
    ck_assert_int_eq(s->b->a->args[1], 5);
}
END_TEST

START_TEST(parse_precedence) {
    /* `;` binds tighter than `<+` */
    const st_strategy *s = strat("id ; fail <+ sequential-scan");
    ck_assert_int_eq(s->kind, ST_S_CHOICE);
    ck_assert_int_eq(s->a->kind, ST_S_SEQ);
    ck_assert_int_eq(s->a->a->kind, ST_S_ID);
    ck_assert_int_eq(s->a->b->kind, ST_S_FAIL);
    ck_assert_int_eq(s->b->kind, ST_S_RULE);

    s = strat("id <+ fail ; sequential-scan");
    ck_assert_int_eq(s->kind, ST_S_CHOICE);
    ck_assert_int_eq(s->a->kind, ST_S_ID);
    ck_assert_int_eq(s->b->kind, ST_S_SEQ);

    /* both associate to the left */
    s = strat("id ; fail ; sequential-scan");
    ck_assert_int_eq(s->kind, ST_S_SEQ);
    ck_assert_int_eq(s->a->kind, ST_S_SEQ);
    ck_assert_int_eq(s->b->kind, ST_S_RULE);
    s = strat("id <+ fail <+ sequential-scan");
    ck_assert_int_eq(s->kind, ST_S_CHOICE);
    ck_assert_int_eq(s->a->kind, ST_S_CHOICE);

    /* parentheses group */
    s = strat("id ; (fail <+ sequential-scan)");
    ck_assert_int_eq(s->kind, ST_S_SEQ);
    ck_assert_int_eq(s->b->kind, ST_S_CHOICE);
    s = strat("id ; (fail ; sequential-scan)");
    ck_assert_int_eq(s->kind, ST_S_SEQ);
    ck_assert_int_eq(s->a->kind, ST_S_ID);
    ck_assert_int_eq(s->b->kind, ST_S_SEQ);
    ck_assert(same_strategy(strat("((id))"), strat("id")));
    ck_assert(same_strategy(strat("(id ; fail) <+ id"), strat("id ; fail <+ id")));

    /* and the meaning follows: (fail ; id) <+ id succeeds, fail ; (id <+ id) does not */
    const st_node *x = body_of("def main(x: i32) = x");
    st_err why = {0};
    ck_assert_ptr_eq(st_rewrite(rw, strat("fail ; id <+ id"), x, &why), x);
    ck_assert_ptr_null(st_rewrite(rw, strat("fail ; (id <+ id)"), x, &why));
}
END_TEST

START_TEST(print_parse_print) {
    static const struct { const char *in, *out; } cases[] = {
        {"id", "id"},
        {"fail", "fail"},
        {"((id))", "id"},
        {"scan-then-propagate(BS=512) ; first(scan, brent-kung(BF=2, TD=5))",
         "scan-then-propagate(BS=512) ; first(scan, brent-kung(BF=2, TD=5))"},
        {"parallel-scan(16, 2, 2)", "parallel-scan(BS=16, BF=2, TD=2)"},
        {"parallel-scan(SE=4,BF=2,BS=16)", "parallel-scan(BS=16, BF=2, SE=4)"},
        {"sequential-scan()", "sequential-scan"},
        {"knobs(B=-3)", "knobs(A=5, B=-3)"},
        {"knobs(B=1, C=0)", "knobs(A=5, B=1, C=0)"},
        {"id ; fail <+ id", "id ; fail <+ id"},
        {"(id ; fail) <+ id", "id ; fail <+ id"},
        {"id ; (fail <+ id)", "id ; (fail <+ id)"},
        {"(id <+ fail) ; id", "(id <+ fail) ; id"},
        {"(id ; fail) ; id", "id ; fail ; id"},
        {"id ; (fail ; id)", "id ; (fail ; id)"},
        {"(id <+ fail) <+ id", "id <+ fail <+ id"},
        {"id <+ (fail <+ id)", "id <+ (fail <+ id)"},
        {"try( id )", "try(id)"},
        {"repeat(try(sequential-scan))", "repeat(try(sequential-scan))"},
        {"iterate(3,first(scan,brent-kung-step(2)))", "iterate(3, first(scan, brent-kung-step(BF=2)))"},
        {"first(reduce_by_index, id)", "first(reduce_by_index, id)"},
        {"each(let, id ; fail)", "each(let, id ; fail)"},
        {"each(lambda, id <+ fail)", "each(lambda, id <+ fail)"},
        {"first(any, id)", "first(any, id)"},
        {"each( top  scan, id)", "each(top scan, id)"},
        {"each(map, fuse-map-map)", "each(map, fuse-map-map)"},
        {"topdown(all(one(bottomup(normalize(id)))))", "topdown(all(one(bottomup(normalize(id)))))"},
        {"try((id <+ fail) ; id)", "try((id <+ fail) ; id)"},
        {"iterate(2, id ; (fail <+ id))", "iterate(2, id ; (fail <+ id))"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const st_strategy *s = strat(cases[i].in);
        char first[4096];
        snprintf(first, sizeof first, "%s", strategy_text(s));
        ck_assert_msg(!strcmp(first, cases[i].out), "`%s` printed as `%s`, not `%s`", cases[i].in, first, cases[i].out);
        const st_strategy *again = strat(first);
        ck_assert_msg(same_strategy(s, again), "`%s` reads back as another strategy", first);
        ck_assert_msg(!strcmp(strategy_text(again), first), "`%s` prints back as `%s`", first, strategy_text(again));
    }

    /* strategies built in C print with the parentheses their shape needs */
    const st_strategy *id = st_s_unary(cx, ST_S_ID, NULL), *fl = st_s_unary(cx, ST_S_FAIL, NULL);
    const st_strategy *s = st_s_binary(cx, ST_S_SEQ, st_s_binary(cx, ST_S_CHOICE, id, fl),
                                       st_s_binary(cx, ST_S_SEQ, fl, st_s_binary(cx, ST_S_CHOICE, fl, id)));
    ck_assert_str_eq(strategy_text(s), "(id <+ fail) ; (fail ; (fail <+ id))");
    ck_assert(same_strategy(strat(strategy_text(s)), s));
}
END_TEST

START_TEST(parse_errors_basic) {
    FAILS_AT_COL("", 1, "empty");
    FAILS_AT_COL("   ", 1, "empty");
    /* unbalanced parentheses and trailing junk */
    FAILS_AT_COL("(id", 4, "expected `)`", "end of the strategy");
    FAILS_AT_COL("((id)", 6, "expected `)`");
    FAILS_AT("try(id", "try(id`", "expected `)`");
    FAILS_AT("id)", ")", "`;`, `<+` or the end", "`)`");
    FAILS_AT("id ; (fail))", "fail)`)", "`)`");
    FAILS_AT("id id", "id `id", "`;`, `<+` or the end", "`id`");
    FAILS_AT("id $", "$", "`$`");
    FAILS_AT("id-", "-", "`-`");
    FAILS_AT("id ;", "id ;`", "a rule or a combinator", "end of the strategy");
    FAILS_AT("<+ id", "<+", "a rule or a combinator");
    FAILS_AT("id ; ; id", "; `;", "a rule or a combinator");
    FAILS_AT("()", ")", "a rule or a combinator");
    FAILS_AT("try", "try`", "`(`");
    FAILS_AT("try()", ")", "a rule or a combinator");
    FAILS_AT("all(id, id)", ",", "`)`");
    /* iterate */
    FAILS_AT("iterate(3 id)", "id", "`,` after iterate's count");
    FAILS_AT("iterate(id, 3)", "id", "a whole number");
    FAILS_AT("iterate(99999999999999999999999, id)", "(`9", "too large");
    /* patterns */
    FAILS_AT("first(scna, id)", "scna", "`scna` is not a pattern", "let, lambda or any");
    FAILS_AT("each(3, id)", "3", "a pattern");
    FAILS_AT("first(scan id)", "id", "`,` after the pattern");
    FAILS_AT("first(scan, )", ")", "a rule or a combinator");
}
END_TEST

/* iterate's count out of range: at the count */
START_TEST(parse_error_iterate_count) {
    FAILS_AT("iterate(-1, id)", "-1", "iterate's count", "0 to 1000000");
    FAILS_AT("id ; iterate(1000001, id)", "1000001", "iterate's count");
}
END_TEST

START_TEST(parse_errors_rules) {
    /* an unknown rule names the closest known ones */
    FAILS_AT("scan-then-propgate(BS=4)", "scan", "unknown rule `scan-then-propgate`", "`scan-then-propagate`",
             "strata strategies");
    FAILS_AT("id ; first(scan, brent-kung-stpe(BF=2))", "brent", "unknown rule `brent-kung-stpe`",
             "`brent-kung-step`");
    FAILS_AT("tyr(id)", "tyr", "unknown rule `tyr`", "`try`");
    FAILS_AT("id <+ zzzzzzzzzzzzzzzzzz", "<+ `z", "unknown rule `zzzzzzzzzzzzzzzzzz`");
    /* an unknown parameter lists the parameters */
    FAILS_AT("parallel-scan(BS=16, BX=2, TD=2)", "BX", "parallel-scan has no parameter `BX`", "BS, BF, TD, SE");
    FAILS_AT("sequential-scan(BS=4)", "BS", "no parameter `BS`", "none");
    /* a parameter given twice: at the second one (its name or its value) */
    {
        const char *t = "scan-then-propagate(BS=4, BS=8)";
        st_err e = strat_fails(t);
        ck_assert_msg(e.loc.col == col_of(t, ", `BS") || e.loc.col == col_of(t, "8"), "at column %d: %s", e.loc.col, e.message);
        ck_assert_has(e.message, "BS is given twice");
        t = "scan-then-propagate(4, BS=8)";
        e = strat_fails(t);
        ck_assert_msg(e.loc.col == col_of(t, "BS") || e.loc.col == col_of(t, "8"), "at column %d: %s", e.loc.col, e.message);
        ck_assert_has(e.message, "given twice");
        t = "knobs(A=1, 2, A=3)";
        e = strat_fails(t);
        ck_assert_msg(e.loc.col == col_of(t, ", `A") || e.loc.col == col_of(t, "3"), "at column %d: %s", e.loc.col, e.message);
        ck_assert_has(e.message, "A is given twice");
    }
    /* too many positional arguments */
    FAILS_AT("scan-then-propagate(4, 8)", "8", "scan-then-propagate takes fewer arguments");
    FAILS_AT("sequential-scan(1)", "1", "sequential-scan takes no arguments");
    FAILS_AT("parallel-scan(16, 2, 2, 4, 5)", "5", "takes fewer arguments");
    FAILS_AT("knobs(C=1, 2)", "2", "takes fewer arguments");
    /* missing a required parameter: at the rule */
    FAILS_AT("brent-kung(BF=2)", "brent", "brent-kung needs its parameter TD");
    FAILS_AT("id ; scan-then-propagate", "scan", "needs its parameter BS", "BS=");
    FAILS_AT("id ; scan-then-propagate()", "scan", "needs its parameter BS");
    FAILS_AT("knobs(A=1)", "knobs", "needs its parameter B");
    /* out of range: at the value */
    FAILS_AT("scan-then-propagate(BS=0)", "0", "BS = 0 is out of range", "from 1 to 1048576");
    FAILS_AT("scan-then-propagate(BS=-4)", "-4", "BS = -4 is out of range");
    FAILS_AT("scan-then-propagate(2097152)", "2097152", "out of range");
    FAILS_AT("id ; brent-kung(BF=1, TD=2)", "1", "BF = 1 is out of range", "from 2 to 1024");
    FAILS_AT("knobs(B=11)", "11", "B = 11 is out of range", "from -10 to 10");
    FAILS_AT("knobs(A=0, B=1)", "0", "A = 0 is out of range");
    FAILS_AT("scan-then-propagate(BS=99999999999999999999)", "=`9", "too large");
    /* malformed arguments */
    FAILS_AT("scan-then-propagate(BS=)", ")", "a whole number");
    FAILS_AT("scan-then-propagate(BS 4)", "4", "`=`");
    FAILS_AT("scan-then-propagate(BS=4 BF=2)", "BF", "`,` or `)`");
    FAILS_AT("scan-then-propagate(BS=x)", "x", "a whole number");
    FAILS_AT("scan-then-propagate(BS=4", "4`", "`,` or `)`");
    /* the rule's own check: at the rule */
    FAILS_AT("id ; parallel-scan(BS=12, BF=8, TD=0)", "parallel", "BS % BF == 0 does not hold");
    FAILS_AT("id ; parallel-scan(BS=16, BF=2, TD=2, SE=4)", "parallel", "one of them");
    FAILS_AT("id ; parallel-scan(BS=16, BF=2)", "parallel", "TD", "SE");
    FAILS_AT("parallel-scan(BS=16, BF=2, TD=5)", "parallel", "TD = 5 goes beyond the tree");
    FAILS_AT("parallel-scan(BS=16, BF=2, SE=3)", "parallel", "SE = 3");
    FAILS_AT("parallel-scan(BS=24, BF=2, SE=2)", "parallel", "not a power of BF");
    FAILS_AT("brent-kung(BF=1024, TD=62)", "brent", "overflows");
    FAILS_AT("first(scan, knobs(A=3, B=10))", "knobs", "A + B must not be 13");
}
END_TEST

START_TEST(parse_nesting_limits) {
    /* 1000 nested parentheses: an error, not a crash */
    char text[4096];
    size_t n = 0;
    for (int i = 0; i < 1000; i++) text[n++] = '(';
    memcpy(text + n, "id", 2), n += 2;
    for (int i = 0; i < 1000; i++) text[n++] = ')';
    text[n] = 0;
    st_err e = strat_fails(text);
    ck_assert_has(e.message, "nested too deeply");
    ck_assert_int_ge(e.loc.col, 1);
    ck_assert_int_le(e.loc.col, 1001);
    /* nested combinators as well */
    n = 0;
    for (int i = 0; i < 500; i++) memcpy(text + n, "try(", 4), n += 4;
    memcpy(text + n, "id", 2), n += 2;
    for (int i = 0; i < 500; i++) text[n++] = ')';
    text[n] = 0;
    e = strat_fails(text);
    ck_assert_has(e.message, "nested too deeply");
    /* unbalanced deep nesting */
    memset(text, '(', 3000);
    text[3000] = 0;
    strat_fails(text);
    /* a nesting that fits parses and round-trips */
    n = 0;
    for (int i = 0; i < 50; i++) memcpy(text + n, "try(", 4), n += 4;
    memcpy(text + n, "id", 2), n += 2;
    for (int i = 0; i < 50; i++) text[n++] = ')';
    text[n] = 0;
    ck_assert_str_eq(strategy_text(strat(text)), text);
    /* a long flat sequence is not nesting */
    n = 0;
    for (int i = 0; i < 600; i++) memcpy(text + n, i ? " ; id" : "id", i ? 5 : 2), n += i ? 5 : 2;
    text[n] = 0;
    const st_strategy *s = strat(text);
    ck_assert_str_eq(strategy_text(s), text);
    const st_node *x = body_of("def main(x: i32) = x");
    st_err why = {0};
    ck_assert_ptr_eq(st_rewrite(rw, s, x, &why), x);
}
END_TEST

/* A rule's name longer than the parser's buffer must not be taken for a
 * rule whose name is its first 64 characters. */
START_TEST(parse_long_names) {
    static char name64[65];
    memset(name64, 'a', 64);
    name64[64] = 0;
    static st_rule r64 = {.name = name64, .summary = "a long name", .origin = "test", .apply = same};
    st_err err = {0};
    ck_assert_msg(st_registry_add(reg, &r64, &err), "%s", err.message);
    ck_assert_ptr_eq(strat(name64)->rule, &r64);
    char longer[80];
    snprintf(longer, sizeof longer, "%sbbbbbb", name64);
    st_err e = strat_fails(longer);
    ck_assert_has(e.message, "unknown rule");
}
END_TEST

/* A parameter whose range starts at INT64_MIN takes that value too: it is
 * not confused with a parameter left out. */
START_TEST(parse_extreme_arguments) {
    static const st_rule wide = {.name = "wide", .summary = "any integer", .origin = "test", .apply = same, .nparams = 1,
                                 .params = {{.name = "K", .min = INT64_MIN, .max = INT64_MAX}}};
    st_err err = {0};
    ck_assert_msg(st_registry_add(reg, &wide, &err), "%s", err.message);
    const st_strategy *s = strat("wide(K=9223372036854775807)");
    ck_assert(s->args[0] == INT64_MAX);
    ck_assert_str_eq(strategy_text(s), "wide(K=9223372036854775807)");
    s = strat("wide(K=-9223372036854775807)");
    ck_assert_str_eq(strategy_text(s), "wide(K=-9223372036854775807)");
    FAILS_AT("wide(K=9223372036854775808)", "9", "too large");
    err = (st_err){0};
    s = st_strategy_parse(cx, reg, "-s", "wide(K=-9223372036854775808)", &err);
    ck_assert_msg(s != NULL, "K = INT64_MIN is in range, but: %s", err.message);
    ck_assert(s->args[0] == INT64_MIN);
    ck_assert_str_eq(strategy_text(s), "wide(K=-9223372036854775808)");
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The engine                                                               */
/* ------------------------------------------------------------------------ */

static const char *const ARITH = "def main(x: i32, y: i32) = (x + 0 + 0) * (y + 0)";
static const char *const ADD3 = "def main(x: i32) = x + 0 + 0 + 0";
static const char *const TWO_SCANS = "def main(xs: [N]i32) = xs |> scan(+, 0) |> scan(*, 1)";
static const char *const PSUM = "def main(xs: [N]i32): [N]i32 where N % 16 == 0 =\n  xs |> scan(+, 0)";

START_TEST(engine_programs_print_as_expected) {
    /* what the other tests compare against: the parser keeps `+ 0` */
    ck_assert_str_eq(text_of(body_of(ARITH)), "(x + 0 + 0) * (y + 0)");
    ck_assert_str_eq(text_of(body_of(ADD3)), "x + 0 + 0 + 0");
    ck_assert_str_eq(text_of(body_of(TWO_SCANS)), "xs |> scan(+, 0) |> scan(*, 1)");
}
END_TEST

START_TEST(engine_id_fail_seq_choice) {
    const st_node *e = body_of(ADD3);
    st_err why = {0};
    ck_assert_ptr_eq(st_rewrite(rw, strat("id"), e, &why), e);
    why = rewrite_fails("fail", e);
    ck_assert_has(why.message, "`fail` never applies");

    rewrites_to("add-zero", ADD3, "x + 0 + 0");
    rewrites_to("add-zero ; add-zero", ADD3, "x + 0");
    rewrites_to("add-zero ; add-zero ; add-zero", ADD3, "x");
    why = rewrite_fails("add-zero ; never", e);
    ck_assert_has(why.message, "never: its condition");
    /* the second of a sequence does not run when the first fails */
    why = rewrite_fails("never ; note", e);
    ck_assert_has(why.message, "never: its condition");
    ck_assert_int_eq(nseen, 0);
    /* a sequence fails as a whole: its first step is undone */
    why = rewrite_fails("add-zero ; add-zero ; add-zero ; add-zero", e);
    ck_assert_has(why.message, "add-zero rewrites `x + 0`");

    rewrites_to("never <+ add-zero", ADD3, "x + 0 + 0");
    rewrites_to("fail <+ fail <+ id", ADD3, "x + 0 + 0 + 0");
    /* the second of a choice does not run when the first succeeds */
    rewrites_to("add-zero <+ note", ADD3, "x + 0 + 0");
    ck_assert_int_eq(nseen, 0);
    /* a choice starts the second from the original, not from what a failed first did */
    rewrites_to("(add-zero ; never) <+ note", ADD3, "x + 0 + 0 + 0");
    ck_assert_int_eq(nseen, 1);
    ck_assert_ptr_eq(seen[0], e);
    rewrite_fails("fail <+ never", e);
}
END_TEST

START_TEST(engine_try_repeat) {
    const st_node *e = body_of(ADD3);
    st_err why = {0};
    ck_assert_ptr_eq(st_rewrite(rw, strat("try(never)"), e, &why), e);
    ck_assert_ptr_eq(st_rewrite(rw, strat("try(fail)"), e, &why), e);
    rewrites_to("try(add-zero)", ADD3, "x + 0 + 0");
    rewrites_to("try(add-zero ; never)", ADD3, "x + 0 + 0 + 0");

    /* repeat: until the rule fails */
    rewrites_to("repeat(add-zero)", ADD3, "x");
    /* zero times is fine */
    ck_assert_ptr_eq(st_rewrite(rw, strat("repeat(never)"), e, &why), e);
    /* a rule that applies without changing anything: once, then stop */
    ck_assert_ptr_eq(st_rewrite(rw, strat("repeat(note)"), e, &why), e);
    ck_assert_int_eq(nseen, 1);
    ck_assert_ptr_eq(st_rewrite(rw, strat("repeat(try(add-zero))"), e, &why), body_of("def main(x: i32) = x"));
}
END_TEST

START_TEST(engine_iterate) {
    rewrites_to("iterate(1, add-zero)", ADD3, "x + 0 + 0");
    rewrites_to("iterate(2, add-zero)", ADD3, "x + 0");
    rewrites_to("iterate(3, add-zero)", ADD3, "x");
    const st_node *e = body_of(ADD3);
    st_err why = {0};
    ck_assert_ptr_eq(st_rewrite(rw, strat("iterate(0, fail)"), e, &why), e);
    /* exactly n times */
    ck_assert_ptr_eq(st_rewrite(rw, strat("iterate(5, note)"), e, &why), e);
    ck_assert_int_eq(nseen, 5);
    /* one step failing fails the whole, saying which */
    why = rewrite_fails("iterate(4, add-zero)", e);
    ck_assert_has(why.message, "iteration 4 of 4");
    ck_assert_has(why.message, "add-zero rewrites `x + 0`");
    ck_assert(why.mismatch);
    why = rewrite_fails("iterate(7, never)", e);
    ck_assert_has(why.message, "iteration 1 of 7");
    ck_assert_has(why.message, "never: its condition");
    ck_assert(!why.mismatch);
    nseen = 0;
    why = rewrite_fails("iterate(3, note ; add-zero ; add-zero)", e);
    ck_assert_has(why.message, "iteration 2 of 3");
    ck_assert_int_eq(nseen, 2);
}
END_TEST

START_TEST(engine_first) {
    /* program order is pre-order: the outer scan comes before the one it reads */
    rewrites_to("first(scan, sequential-scan)", TWO_SCANS, "xs |> scan(+, 0) |> scanSeq(*, 1)");
    /* left to right */
    const char *pair = "def main(xs: [N]i32, ys: [N]i32) = (xs |> scan(+, 0), ys |> scan(*, 1))";
    rewrites_to("first(scan, sequential-scan)", pair, "(xs |> scanSeq(+, 0), ys |> scan(*, 1))");
    rewrites_to("first(scan, sequential-scan) ; first(scan, sequential-scan)", pair,
                "(xs |> scanSeq(+, 0), ys |> scanSeq(*, 1))");
    /* a let's value before its body */
    const char *let = "def main(xs: [N]i32, ys: [N]i32) =\n  let a = ys |> scan(*, 1)\n  in (xs |> scan(+, 0), a)";
    const st_node *r = rewrite_ok("first(scan, sequential-scan)", body_of(let));
    ck_assert_has(text_of(r), "ys |> scanSeq(*, 1)");
    ck_assert_has(text_of(r), "xs |> scan(+, 0)");
    /* the strategy sees the first match only; failing there fails first */
    nseen = 0;
    st_err why = rewrite_fails("first(scan, note-fail)", body_of(pair));
    ck_assert_int_eq(nseen, 1);
    ck_assert_int_eq(seen[0]->kids[0]->u.binop, ST_OP_ADD);
    ck_assert_has(why.message, "at the first scan");
    ck_assert_has(why.message, "note-fail: recorded and refused");
    ck_assert(!why.mismatch);
    /* no match at all: a mismatch */
    why = rewrite_fails("first(reduce, id)", body_of(pair));
    ck_assert_has(why.message, "there is no reduce here");
    ck_assert(why.mismatch);
    /* patterns other than primitives */
    rewrites_to("first(lambda, id)", "def main(xs: [N]i32) = xs |> map(x => x + 0)", "xs |> map(x => x + 0)");
    rewrites_to("first(any, add-zero)", ADD3, "x + 0 + 0");
    why = rewrite_fails("first(any, add-zero)", body_of(TWO_SCANS));
    ck_assert(why.mismatch);
    rewrites_to("first(let, first(scan, sequential-scan))", let, text_of(rewrite_ok("first(scan, sequential-scan)", body_of(let))));
    nseen = 0;
    rewrite_ok("first(lambda, note)", body_of("def main(xs: [N]i32) = xs |> map(x => x + 1) |> map(y => y * 2)"));
    ck_assert_int_eq(nseen, 1);
    ck_assert_int_eq(seen[0]->kind, ST_NODE_LAMBDA);
    ck_assert_int_eq(st_lambda_body(seen[0])->u.binop, ST_OP_MUL);
}
END_TEST

START_TEST(engine_each) {
    const char *maps = "def main(xs: [N]i32) = xs |> map(x => x + 1) |> map(y => y * 2)";
    const st_node *e = body_of(maps);
    /* every match, innermost first */
    nseen = 0;
    ck_assert_ptr_eq(rewrite_ok("each(map, note)", e), e);
    ck_assert_int_eq(nseen, 2);
    ck_assert_int_eq(st_lambda_body(seen[0]->kids[0])->u.binop, ST_OP_ADD);
    ck_assert_int_eq(st_lambda_body(seen[1]->kids[0])->u.binop, ST_OP_MUL);
    /* never on what it produced: two maps wrapped once each makes four */
    nseen = 0;
    const st_node *r = rewrite_ok("each(map, wrap-map)", e);
    ck_assert_int_eq(nseen, 2);
    ck_assert_int_eq(count_prim(r, ST_PRIM_MAP), 4);
    ck_assert_int_eq(count_prim(e, ST_PRIM_MAP), 2);
    /* the outer one sees the inner one already rewritten */
    ck_assert_int_eq(count_prim(seen[1], ST_PRIM_MAP), 3);
    /* applying it again wraps every map there is now: each sees its input only */
    nseen = 0;
    ck_assert_int_eq(count_prim(rewrite_ok("each(map, wrap-map)", r), ST_PRIM_MAP), 8);
    ck_assert_int_eq(nseen, 4);
    /* each with every form of scan */
    rewrites_to("each(scan, sequential-scan)", TWO_SCANS, "xs |> scanSeq(+, 0) |> scanSeq(*, 1)");
    /* fails if the strategy fails at any match */
    st_err why = rewrite_fails("each(map, add-zero)", e);
    ck_assert_has(why.message, "add-zero rewrites");
    /* no match: a mismatch */
    why = rewrite_fails("each(reduce_by_index, id)", e);
    ck_assert_has(why.message, "there is no reduce_by_index here");
    ck_assert(why.mismatch);
    /* lets and lambdas */
    nseen = 0;
    rewrite_ok("each(lambda, note)", e);
    ck_assert_int_eq(nseen, 2);
    nseen = 0;
    rewrite_ok("each(any, note)", body_of("def main(x: i32, y: i32) = x * y"));
    ck_assert_int_eq(nseen, 3);
    ck_assert_str_eq(text_of(seen[0]), "x");
    ck_assert_str_eq(text_of(seen[1]), "y");
    ck_assert_str_eq(text_of(seen[2]), "x * y");
    rewrites_to("each(any, try(add-zero))", ARITH, "x * y");
    /* a failure after a success fails the whole (this one is a built-in that
       applies at the first scan and not at the second) */
    const char *two = "def main(xs: [N]i32, ys: [M]i32) where N % 16 == 0 = (xs |> scan(+, 0), ys |> scan(+, 0))";
    why = rewrite_fails("each(scan, scan-then-propagate(BS=16))", body_of(two));
    ck_assert_has(why.message, "multiple of BS = 16");
}
END_TEST

START_TEST(engine_topdown_bottomup) {
    rewrites_to("topdown(sequential-scan)", TWO_SCANS, "xs |> scan(+, 0) |> scanSeq(*, 1)");
    rewrites_to("bottomup(sequential-scan)", TWO_SCANS, "xs |> scanSeq(+, 0) |> scan(*, 1)");
    /* one place only */
    rewrites_to("topdown(add-zero)", ARITH, "(x + 0) * (y + 0)");
    rewrites_to("bottomup(add-zero)", ARITH, "(x + 0) * (y + 0)");
    rewrites_to("topdown(add-zero) ; topdown(add-zero)", ARITH, "x * (y + 0)");
    rewrites_to("bottomup(add-zero) ; bottomup(add-zero) ; bottomup(add-zero)", ARITH, "x * y");
    /* topdown tries the root first */
    nseen = 0;
    rewrite_ok("topdown(note)", body_of(ARITH));
    ck_assert_int_eq(nseen, 1);
    ck_assert_str_eq(text_of(seen[0]), "(x + 0 + 0) * (y + 0)");
    /* bottomup the leftmost leaf first */
    nseen = 0;
    rewrite_ok("bottomup(note)", body_of(ARITH));
    ck_assert_int_eq(nseen, 1);
    ck_assert_str_eq(text_of(seen[0]), "x");
    /* nowhere */
    st_err why = rewrite_fails("topdown(fail)", body_of(ARITH));
    ck_assert_has(why.message, "topdown applies nowhere");
    why = rewrite_fails("bottomup(fail)", body_of(ARITH));
    ck_assert_has(why.message, "bottomup applies nowhere");
}
END_TEST

START_TEST(engine_all_one) {
    const char *triple = "def main(x: i32, y: i32, z: i32) = (x + 0, y + 0, z + 0)";
    rewrites_to("all(add-zero)", triple, "(x, y, z)");
    rewrites_to("one(add-zero)", triple, "(x, y + 0, z + 0)");
    rewrites_to("one(add-zero) ; one(add-zero)", triple, "(x, y, z + 0)");
    /* all needs every child */
    const char *mixed = "def main(x: i32, y: i32, z: i32) = (x, y + 0, z)";
    st_err why = rewrite_fails("all(add-zero)", body_of(mixed));
    ck_assert_has(why.message, "add-zero");
    rewrites_to("all(try(add-zero))", mixed, "(x, y, z)");
    rewrites_to("one(add-zero)", mixed, "(x, y, z)");
    /* children only, never the node itself */
    why = rewrite_fails("one(add-zero)", body_of("def main(x: i32) = x + 0"));
    ck_assert_has(why.message, "one applies nowhere");
    why = rewrite_fails("all(add-zero)", body_of("def main(x: i32) = x + 0"));
    rewrites_to("one(add-zero)", "def main(x: i32) = (x + 0) * 2", "x * 2");
    rewrites_to("one(add-zero)", "def main(x: i32) = x * 2 + (x + 0)", "x * 2 + x");
    /* a leaf has no children: all succeeds, one fails */
    const st_node *x = body_of("def main(x: i32) = x");
    ck_assert_ptr_eq(rewrite_ok("all(fail)", x), x);
    why = rewrite_fails("one(id)", x);
    ck_assert_has(why.message, "one applies nowhere");
    /* all of id rebuilds the same node */
    const st_node *e = body_of(TWO_SCANS);
    ck_assert_ptr_eq(rewrite_ok("all(id)", e), e);
}
END_TEST

START_TEST(engine_normalize) {
    rewrites_to("normalize(add-zero)", ARITH, "x * y");
    rewrites_to("normalize(add-zero)", ADD3, "x");
    rewrites_to("normalize(sequential-scan)", TWO_SCANS, "xs |> scanSeq(+, 0) |> scanSeq(*, 1)");
    /* nothing to do is success */
    const st_node *e = body_of(TWO_SCANS);
    ck_assert_ptr_eq(rewrite_ok("normalize(add-zero)", e), e);
    /* a rule that applies without changing anything does not loop */
    nseen = 0;
    ck_assert_ptr_eq(rewrite_ok("normalize(note)", e), e);
    ck_assert_int_eq(nseen, 1);
    /* inside lambdas too */
    rewrites_to("normalize(add-zero)", "def main(xs: [N]i32) = xs |> map(x => x + 0 + 0)", "xs |> map(x => x)");
}
END_TEST

/* (The limit's value is the engine's business: DESIGN.md's 100000, 10000
 * since; the tests read only the message.) */
START_TEST(engine_step_limit) {
    const st_node *lit = body_of("def main(x: i32) = 41");
    st_err why = rewrite_fails("repeat(inc)", lit);
    ck_assert_int_eq(why.kind, ST_ERR_USER);
    ck_assert_has(why.message, "stopped after");
    ck_assert_has(why.message, "rule applications");
    ck_assert_has(why.message, "does not seem to end");
    why = rewrite_fails("normalize(inc)", lit);
    ck_assert_has(why.message, "stopped after");
    why = rewrite_fails("iterate(1000000, inc)", lit);
    ck_assert_has(why.message, "stopped after");
    why = rewrite_fails("repeat(inc <+ fail)", lit);
    ck_assert_has(why.message, "stopped after");
}
END_TEST

/* The limit counts the steps of one rewrite: after a runaway strategy the
 * same rewriter rewrites again. */
START_TEST(engine_step_limit_per_rewrite) {
    const st_node *lit = body_of("def main(x: i32) = 41");
    rewrite_fails("repeat(inc)", lit);
    const st_node *r = rewrite_ok("inc", lit);
    ck_assert_str_eq(text_of(r), "42");
    rewrites_to("normalize(add-zero)", ARITH, "x * y");
}
END_TEST

/* A rule that always succeeds with a new, deeper node: a limit (of steps,
 * or of depth) stops repeat, normalize and iterate with an error, not a
 * crash. */
static void stops_cleanly(const char *strategy) {
    const st_node *x = body_of("def main(x: i32) = x");
    st_err why = rewrite_fails(strategy, x);
    ck_assert_int_eq(why.kind, ST_ERR_USER);
    ck_assert_msg(strstr(why.message, "stopped after") || strstr(why.message, "deeper than"), "%s: %s", strategy,
                  why.message);
}

START_TEST(engine_step_limit_growing) {
    stops_cleanly("repeat(grow)");
    stops_cleanly("iterate(1000000, grow)");
}
END_TEST

START_TEST(engine_step_limit_growing_normalize) {
    stops_cleanly("normalize(grow)");
    stops_cleanly("repeat(topdown(grow))");
}
END_TEST

/* Strategies that apply no rule still end in reasonable time: the step
 * limit must not count only successful rule applications, or nested
 * iterates of id (10^12 steps) hang. Any outcome will do, in seconds (this
 * test runs under a timeout of its own). */
START_TEST(engine_nested_iterate_ends) {
    const st_node *e = body_of(TWO_SCANS);
    st_err why = {0};
    const st_node *r = apply(strat("iterate(1000000, iterate(1000000, id))"), e, &why);
    ck_assert_msg(r == e || why.message[0], "neither the input nor a reason");
}
END_TEST

/* A traversal takes steps at every node, so the budget grows with the
 * program: the default strategy on an array literal of 10^5 elements (5·10^5
 * nodes, 1.4·10^7 steps) stopped as "does not seem to end" at 10^7. A
 * strategy without end on it is still stopped, with the budget in the
 * message. */
START_TEST(engine_budget_grows_with_the_program) {
    enum { N = 100000 };
    st_buf b = {0};
    st_buf_printf(&b, "def main(): [%d]i32 = [", N);
    for (int i = 0; i < N; i++) st_buf_printf(&b, "%s%d", i ? ", " : "", i * 7 % 13);
    st_buf_puts(&b, "]\n");
    const st_def *d = def_of(b.data);
    st_buf_free(&b);
    st_err why = {0};
    const st_def *now = st_rewrite_def(rw, strat(st_default_strategy("CPU")), d, &why);
    ck_assert_msg(now != NULL, "%s", why.message);
    ck_assert_ptr_eq(now->body, d->body); /* nothing to rewrite in a literal */
    why = rewrite_fails("iterate(1000000, iterate(1000000, id))", body_of("def main(x: i32) = x + 1"));
    ck_assert_has(why.message, "stopped after 10000300 strategy steps (10000000, and 100 for each node of the program)");
}
END_TEST

/* A composite that expands into itself for ever is an error, not a crash. */
START_TEST(engine_self_expanding_composite) {
    const st_node *x = body_of("def main(x: i32) = x");
    st_err why = {0};
    const st_node *r = st_rewrite(rw, strat("forever"), x, &why);
    ck_assert_ptr_null(r);
    ck_assert(why.message[0]);
}
END_TEST

/* A lambda's parameters and a let's variables are binders, not
 * expressions: a traversal does not offer them to a rule (rewriting one
 * would rebuild a lambda whose parameter is not a variable). */
START_TEST(engine_traversals_skip_binders) {
    static const struct { const char *strategy, *want; } cases[] = {
        {"topdown(grow)", "xs |> map(x => x * 2 + 0)"},
        {"bottomup(grow)", "xs |> map(x => (x + 0) * 2)"},
        {"first(lambda, one(grow))", "xs |> map(x => x * 2 + 0)"},
        {"first(lambda, all(try(grow)))", "xs |> map(x => x * 2 + 0)"},
        {"each(any, try(grow))", "xs |> map(x => (x + 0) * (2 + 0) + 0)"},
    };
    char failures[2048] = "";
    size_t len = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const st_def *d = def_of("def main(xs: [N]i32) = xs |> map(x => x * 2)");
        st_err why = {0};
        const st_def *now = st_rewrite_def(rw, strat(cases[i].strategy), d, &why);
        const char *got = now ? text_of(now->body) : why.message;
        if (!now || strcmp(got, cases[i].want))
            len += (size_t)snprintf(failures + len, len < sizeof failures ? sizeof failures - len : 0,
                                    "\n  %s: %s%s", cases[i].strategy, now ? "gave " : "failed: ", got);
        if (len >= sizeof failures) break;
    }
    ck_assert_msg(!failures[0], "%s", failures);
    /* and lets */
    const st_def *d = def_of("def main(x: i32) = let y = x * 3 in y - 1");
    st_err why = {0};
    const st_def *now = st_rewrite_def(rw, strat("first(let, all(try(grow)))"), d, &why);
    ck_assert_msg(now != NULL, "%s", why.message);
}
END_TEST

START_TEST(engine_type_change_refused) {
    st_err why = {0};
    const st_node *r = st_rewrite(rw, strat("to-i64"), body_of("def main(x: i32) = x + 1"), &why);
    ck_assert_ptr_null(r);
    ck_assert_int_eq(why.kind, ST_ERR_INTERNAL);
    ck_assert_has(why.message, "to-i64 changed a type");
    /* an internal error is not a failure to catch */
    r = st_rewrite(rw, strat("try(to-i64)"), body_of("def main(x: i32) = x + 1"), &why);
    ck_assert_ptr_null(r);
    ck_assert_int_eq(why.kind, ST_ERR_INTERNAL);
    r = st_rewrite(rw, strat("to-i64 <+ id"), body_of("def main(x: i32) = x + 1"), &why);
    ck_assert_ptr_null(r);
    r = st_rewrite(rw, strat("topdown(to-i64)"), body_of("def main(x: i32) = x + 1"), &why);
    ck_assert_ptr_null(r);
    ck_assert_int_eq(why.kind, ST_ERR_INTERNAL);
}
END_TEST

START_TEST(engine_failure_reasons) {
    /* a rule of the wrong shape says so */
    st_err why = rewrite_fails("scan-then-propagate(BS=16)", body_of("def main(x: i32) = x + 1"));
    ck_assert(why.mismatch);
    ck_assert_has(why.message, "scan-then-propagate rewrites a scan");
    /* a shape that fits and a condition that fails is no mismatch */
    why = rewrite_fails("scan-then-propagate(BS=3)", body_of(PSUM));
    ck_assert(!why.mismatch);
    ck_assert_has(why.message, "multiple of BS = 3");
    /* a traversal that fails everywhere gives the condition, not the shapes */
    why = rewrite_fails("topdown(scan-then-propagate(BS=3))", body_of(PSUM));
    ck_assert(!why.mismatch);
    ck_assert_has(why.message, "topdown applies nowhere");
    ck_assert_has(why.message, "multiple of BS = 3");
    why = rewrite_fails("bottomup(scan-then-propagate(BS=3))", body_of(PSUM));
    ck_assert(!why.mismatch);
    ck_assert_has(why.message, "multiple of BS = 3");
    /* deep in a program, with mismatches before and after it */
    const char *deep = "def main(xs: [N]i32, ys: [N]i32) = (ys |> map(y => y + 1), xs |> scan(+, 0), ys |> map(y => y * 2))";
    why = rewrite_fails("topdown(scan-then-propagate(BS=3))", body_of(deep));
    ck_assert(!why.mismatch);
    ck_assert_has(why.message, "BS = 3");
    why = rewrite_fails("bottomup(scan-then-propagate(BS=3))", body_of(deep));
    ck_assert(!why.mismatch);
    ck_assert_has(why.message, "BS = 3");
    why = rewrite_fails("one(scan-then-propagate(BS=3))", body_of(deep));
    ck_assert(!why.mismatch);
    ck_assert_has(why.message, "BS = 3");
    /* mismatches everywhere: a mismatch */
    why = rewrite_fails("topdown(add-zero)", body_of(TWO_SCANS));
    ck_assert(why.mismatch);
    ck_assert_has(why.message, "add-zero rewrites `x + 0`");
    why = rewrite_fails("bottomup(add-zero)", body_of(TWO_SCANS));
    ck_assert(why.mismatch);
    /* a choice: whichever of the two is more informative, in either order */
    const st_node *e = body_of("def main(x: i32) = x * 2");
    why = rewrite_fails("add-zero <+ never", e);
    ck_assert(!why.mismatch);
    ck_assert_has(why.message, "never: its condition");
    why = rewrite_fails("never <+ add-zero", e);
    ck_assert(!why.mismatch);
    ck_assert_has(why.message, "never: its condition");
    why = rewrite_fails("add-zero <+ add-zero", e);
    ck_assert(why.mismatch);
    /* first and iterate keep the flag of what failed inside */
    why = rewrite_fails("first(scan, add-zero)", body_of(TWO_SCANS));
    ck_assert(why.mismatch);
    why = rewrite_fails("first(scan, scan-then-propagate(BS=3))", body_of(PSUM));
    ck_assert(!why.mismatch);
    ck_assert_has(why.message, "at the first scan");
}
END_TEST

/* ---- the trace ---- */

typedef struct traced {
    int depth;
    const st_rule *rule;
    int64_t args[ST_RULE_MAX_PARAMS];
    const st_node *before, *after;
} traced;

static traced trace_log[64];
static int ntrace;

static void on_trace(void *data, int depth, const st_rule *rule, const int64_t *args, const st_node *before,
                     const st_node *after) {
    (void)data;
    if (ntrace < 64) {
        trace_log[ntrace] = (traced){depth, rule, {0}, before, after};
        memcpy(trace_log[ntrace].args, args, sizeof trace_log[ntrace].args);
    }
    ntrace++;
}

static void expect_trace(const char *const *names, const int *depths, int n) {
    char got[1024] = "";
    size_t len = 0;
    for (int i = 0; i < ntrace && i < 64 && len < sizeof got; i++)
        len += (size_t)snprintf(got + len, sizeof got - len, "%s%d:%s", i ? " " : "", trace_log[i].depth,
                                trace_log[i].rule->name);
    ck_assert_msg(ntrace == n, "expected %d trace entries, got %d: %s", n, ntrace, got);
    for (int i = 0; i < n; i++)
        ck_assert_msg(!strcmp(trace_log[i].rule->name, names[i]) && trace_log[i].depth == depths[i],
                      "entry %d: expected %d:%s, got: %s", i, depths[i], names[i], got);
}

#define EXPECT_TRACE(names, depths) expect_trace((names), (depths), (int)(sizeof(names) / sizeof *(names)))

START_TEST(trace_composite) {
    st_rw_set_trace(rw, on_trace, NULL);
    ntrace = 0;
    const st_node *e = body_of(PSUM);
    const st_node *r = rewrite_ok("parallel-scan(BS=16, BF=2, SE=4)", e);
    /* the first level, then three below it on the block totals (16^4 =
     * 65536), each padding its totals first: siblings, not nested */
#define PS_BELOW "parallel-scan-level", "pad-scan", "scan-then-propagate", "brent-kung", "brent-kung-step", \
                 "brent-kung-step", "sequential-scan"
#define PS_BELOW_DEPTHS 1, 2, 2, 2, 3, 3, 3
    static const char *const names[] = {"parallel-scan", "scan-then-propagate", "brent-kung", "brent-kung-step",
                                        "brent-kung-step", "sequential-scan", PS_BELOW, PS_BELOW, PS_BELOW};
    static const int depths[] = {0, 1, 1, 2, 2, 2, PS_BELOW_DEPTHS, PS_BELOW_DEPTHS, PS_BELOW_DEPTHS};
    EXPECT_TRACE(names, depths);
    /* arguments, with what the composite worked out */
    ck_assert_int_eq(trace_log[0].args[0], 16);
    ck_assert_int_eq(trace_log[0].args[3], 4);
    ck_assert_int_eq(trace_log[1].args[0], 16);
    ck_assert_int_eq(trace_log[2].args[0], 2);
    ck_assert_int_eq(trace_log[2].args[1], 2);
    ck_assert_int_eq(trace_log[3].args[0], 2);
    /* before and after */
    ck_assert_ptr_eq(trace_log[0].before, e);
    ck_assert_ptr_eq(trace_log[0].after, r);
    ck_assert_ptr_eq(trace_log[1].before, e);
    for (int i = 0; i < ntrace; i++) {
        ck_assert_ptr_nonnull(trace_log[i].after);
        ck_assert_ptr_eq(trace_log[i].before->type, trace_log[i].after->type);
        ck_assert_int_eq(trace_log[i].before->u.prim, ST_PRIM_SCAN);
    }
    /* a level below has the first's BS, BF and the TD worked out from SE */
    ck_assert_int_eq(trace_log[6].args[0], 16);
    ck_assert_int_eq(trace_log[6].args[1], 2);
    ck_assert_int_eq(trace_log[6].args[2], 2);
    ck_assert_int_eq(trace_log[5].after->u.prim, ST_PRIM_SCAN_SEQ);

    /* the next rewrite reports only its own */
    ntrace = 0;
    rewrite_ok("sequential-scan", e);
    static const char *const names2[] = {"sequential-scan"};
    static const int depths2[] = {0};
    EXPECT_TRACE(names2, depths2);
}
END_TEST

/* Every rule has one name: the registry's are distinct, and so are those of
 * the rules a trace shows, the unregistered steps of the composites
 * (parallel-scan's levels, lookback's steps on a scan and a reduce) among
 * them, so that a trace says which rule made each step. */
START_TEST(trace_names_one_rule_each) {
    for (size_t i = 0; i < st_registry_count(reg); i++)
        for (size_t j = i + 1; j < st_registry_count(reg); j++)
            ck_assert_msg(strcmp(st_registry_at(reg, i)->name, st_registry_at(reg, j)->name),
                          "two registered rules are named %s", st_registry_at(reg, i)->name);
    st_rw_set_trace(rw, on_trace, NULL);
    const struct {
        const char *strategy, *src;
    } runs[] = {
        {"parallel-scan(BS=16, BF=2, SE=4)", PSUM},
        {"first(scan, lookback(M=4, WG=2))", PSUM},
        {"first(reduce, lookback(M=4, WG=2))", "def main(xs: [N]i32) = xs |> reduce(+, 0)"},
        {"first(filter, lookback(M=4, WG=2))", "def main(xs: [N]i32) = xs |> filter(x => x > 0)"},
    };
    const st_rule *met[64];
    size_t nmet = 0;
    for (size_t k = 0; k < sizeof runs / sizeof *runs; k++) {
        ntrace = 0;
        rewrite_ok(runs[k].strategy, body_of(runs[k].src));
        for (int i = 0; i < ntrace && i < 64; i++) {
            const st_rule *r = trace_log[i].rule;
            bool known = false;
            for (size_t m = 0; m < nmet; m++) {
                known |= met[m] == r;
                ck_assert_msg(met[m] == r || strcmp(met[m]->name, r->name), "%s: two rules in a trace are named %s",
                              runs[k].strategy, r->name);
            }
            if (!known && nmet < 64) met[nmet++] = r;
        }
    }
    ck_assert_uint_ge(nmet, 8);
}
END_TEST

START_TEST(trace_failed_branches) {
    st_rw_set_trace(rw, on_trace, NULL);
    const st_node *e = body_of(ADD3);
    ntrace = 0;
    rewrite_ok("(add-zero ; fail) <+ same", e);
    static const char *const n1[] = {"same"};
    static const int d1[] = {0};
    EXPECT_TRACE(n1, d1);

    ntrace = 0;
    ck_assert_ptr_eq(rewrite_ok("try(add-zero ; add-zero ; never)", e), e);
    ck_assert_int_eq(ntrace, 0);

    ntrace = 0;
    rewrite_ok("repeat(add-zero)", e);
    static const char *const n2[] = {"add-zero", "add-zero", "add-zero"};
    static const int d2[] = {0, 0, 0};
    EXPECT_TRACE(n2, d2);
    ck_assert_ptr_eq(trace_log[0].before, e);
    ck_assert_ptr_eq(trace_log[1].before, trace_log[0].after);

    /* topdown: only the place where it applied */
    ntrace = 0;
    rewrite_ok("topdown(add-zero)", body_of(ARITH));
    static const char *const n3[] = {"add-zero"};
    EXPECT_TRACE(n3, d1);
    ck_assert_str_eq(text_of(trace_log[0].before), "x + 0 + 0");
    ck_assert_str_eq(text_of(trace_log[0].after), "x + 0");

    /* all that applied before one child failed is forgotten */
    ntrace = 0;
    rewrite_ok("all(add-zero) <+ one(add-zero)", body_of("def main(x: i32, y: i32) = (x + 0, y)"));
    EXPECT_TRACE(n3, d1);

    /* a composite whose inner strategy failed leaves nothing */
    ntrace = 0;
    rewrite_ok("parallel-scan(BS=16, BF=2, TD=3) <+ same", body_of("def main(xs: [N]i32): [N]i32 where N % 16 == 0 = xs |> scan(+, 0) |> map(x => x + 1)"));
    EXPECT_TRACE(n1, d1);

    /* a rewrite that fails reports nothing */
    ntrace = 0;
    rewrite_fails("add-zero ; never", e);
    ck_assert_int_eq(ntrace, 0);
    ntrace = 0;
    rewrite_ok("same", e);
    EXPECT_TRACE(n1, d1);
}
END_TEST

START_TEST(trace_expanded_composite) {
    st_rw_set_trace(rw, on_trace, NULL);
    ntrace = 0;
    rewrites_to("strip-twice", ARITH, "x * (y + 0)");
    static const char *const names[] = {"strip-twice", "add-zero", "add-zero"};
    static const int depths[] = {0, 1, 1};
    EXPECT_TRACE(names, depths);
}
END_TEST

START_TEST(expanded_composite_applies) {
    rewrites_to("strip-twice", ARITH, "x * (y + 0)");
    rewrites_to("strip-twice ; topdown(add-zero)", ARITH, "x * y");
    rewrite_fails("strip-twice ; strip-twice", body_of(ARITH));
    st_err why = rewrite_fails("strip-twice", body_of("def main(x: i32) = x + 0"));
    ck_assert_has(why.message, "add-zero");
    rewrites_to("try(strip-twice)", "def main(x: i32) = x + 0", "x + 0");
}
END_TEST

START_TEST(rewrite_def_and_replace) {
    const st_program *p = parse_ok(cx, PSUM);
    const st_def *d = &p->defs[0];
    st_err why = {0};
    const st_def *now = st_rewrite_def(rw, strat("parallel-scan(BS=16, BF=2, SE=4)"), d, &why);
    ck_assert_msg(now != NULL, "%s", why.message);
    ck_assert_ptr_eq(now->result, d->result);
    ck_assert_ptr_eq(now->facts, d->facts);
    ck_assert_ptr_ne(now->body, d->body);
    ck_assert_ptr_null(st_rw_def(rw));
    const st_program *q = st_program_replace(cx, p, d, now);
    st_buf b = {0};
    st_print_program(q, &b);
    const st_program *back = parse_ok(cx, b.data);
    ck_assert_ptr_eq(back->defs[0].body, now->body);
    st_buf_free(&b);
    /* and it computes the same, on a length the fact allows */
    st_arena *a = st_arena_new();
    int32_t xs[64];
    for (int i = 0; i < 64; i++) xs[i] = (i * 7) % 11 - 5;
    st_value arg = array_of(ST_I32, 64, xs, a);
    st_value want = eval_body(d, d->body, &arg, a), got = eval_body(d, now->body, &arg, a);
    ck_assert_int_eq(got.kind, ST_VALUE_ARRAY);
    ck_assert_mem_eq(got.u.a.data, want.u.a.data, 64 * sizeof(int32_t));
    st_arena_free(a);
    /* a failed rewrite of a def */
    ck_assert_ptr_null(st_rewrite_def(rw, strat("fail"), d, &why));
    ck_assert_has(why.message, "`fail` never applies");
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The registry                                                             */
/* ------------------------------------------------------------------------ */

static void refused(st_registry *r, const st_rule *rule, const char *part) {
    st_err err = {0};
    size_t before = st_registry_count(r);
    ck_assert_msg(!st_registry_add(r, rule, &err), "rule `%s` was accepted", rule->name ? rule->name : "(null)");
    ck_assert_msg(strstr(err.message, part), "expected \"%s\" in \"%s\"", part, err.message);
    ck_assert_uint_eq(st_registry_count(r), before);
}

START_TEST(registry_refusals) {
    st_registry *r = st_registry_new();
    st_err err = {0};
    ck_assert(st_register_builtin_rules(r, &err));
    size_t n = st_registry_count(r);
    ck_assert_uint_ge(n, 6);
    for (size_t i = 0; i < n; i++) ck_assert_ptr_eq(st_registry_find(r, st_registry_at(r, i)->name), st_registry_at(r, i));
    ck_assert_ptr_null(st_registry_at(r, n));
    ck_assert_ptr_null(st_registry_find(r, "no-such-rule"));

    static const st_rule dup = {.name = "sequential-scan", .apply = same};
    refused(r, &dup, "exists already");
    /* the built-ins cannot be registered twice either */
    ck_assert(!st_register_builtin_rules(r, &err));
    ck_assert_has(err.message, "exists already");
    ck_assert_uint_eq(st_registry_count(r), n);

    static const char *const reserved[] = {"id", "fail", "try", "repeat", "iterate", "first", "each", "topdown",
                                           "bottomup", "all", "one", "normalize"};
    static st_rule res[12];
    for (int i = 0; i < 12; i++) {
        res[i] = (st_rule){.name = reserved[i], .apply = same};
        refused(r, &res[i], "combinator");
    }

    static const st_rule both = {.name = "both", .apply = same, .expand = strip_twice};
    refused(r, &both, "exactly one of an apply and an expand");
    static const st_rule neither = {.name = "neither"};
    refused(r, &neither, "exactly one of an apply and an expand");

    static const st_rule min_max = {.name = "min-max", .apply = same, .nparams = 1,
                                    .params = {{.name = "K", .min = 10, .max = 1}}};
    refused(r, &min_max, "badly");
    static const st_rule def_low = {.name = "def-low", .apply = same, .nparams = 1,
                                    .params = {{.name = "K", .min = 1, .max = 10, .has_default = true, .def = 0}}};
    refused(r, &def_low, "badly");
    static const st_rule def_high = {.name = "def-high", .apply = same, .nparams = 2,
                                     .params = {{.name = "J", .min = 1, .max = 10},
                                                {.name = "K", .min = 1, .max = 10, .has_default = true, .def = 11}}};
    refused(r, &def_high, "parameter 2 badly");
    static const st_rule unnamed_param = {.name = "unnamed-param", .apply = same, .nparams = 1, .params = {{.min = 1, .max = 2}}};
    refused(r, &unnamed_param, "badly");
    static const st_rule twice = {.name = "twice", .apply = same, .nparams = 2,
                                  .params = {{.name = "K", .min = 1, .max = 2}, {.name = "K", .min = 1, .max = 2}}};
    refused(r, &twice, "`K` twice");
    static const st_rule too_many = {.name = "too-many", .apply = same, .nparams = ST_RULE_MAX_PARAMS + 1};
    refused(r, &too_many, "at most");

    static const st_rule bad_name1 = {.name = "1abc", .apply = same};
    refused(r, &bad_name1, "letters, digits");
    static const st_rule bad_name2 = {.name = "a b", .apply = same};
    refused(r, &bad_name2, "letters, digits");
    static const st_rule bad_name3 = {.name = "", .apply = same};
    refused(r, &bad_name3, "letters, digits");
    static const st_rule bad_name4 = {.name = NULL, .apply = same};
    refused(r, &bad_name4, "letters, digits");

    /* a good one is accepted, found, and then taken */
    static const st_rule good = {.name = "good_rule-2", .apply = same, .nparams = 1,
                                 .params = {{.name = "K", .min = -5, .max = 5, .has_default = true, .def = -5}}};
    ck_assert_msg(st_registry_add(r, &good, &err), "%s", err.message);
    ck_assert_uint_eq(st_registry_count(r), n + 1);
    ck_assert_ptr_eq(st_registry_find(r, "good_rule-2"), &good);
    ck_assert_ptr_eq(st_registry_at(r, n), &good);
    refused(r, &good, "exists already");
    st_registry_free(r);
    st_registry_free(NULL);
}
END_TEST

/* Every name the registry accepts can be written in a strategy. */
START_TEST(registry_names_are_parseable) {
    static const char *const names[] = {"ends-with-", "x", "a--b", "A_b-9"};
    static st_rule rules[4];
    for (int i = 0; i < 4; i++) {
        rules[i] = (st_rule){.name = names[i], .summary = "a name", .origin = "test", .apply = same};
        st_err err = {0};
        if (!st_registry_add(reg, &rules[i], &err)) continue; /* refusing is fine too */
        st_err perr = {0};
        const st_strategy *s = st_strategy_parse(cx, reg, "-s", names[i], &perr);
        ck_assert_msg(s != NULL, "the registry accepted `%s`, but the strategy `%s` does not parse: col %d: %s",
                      names[i], names[i], perr.loc.col, perr.message);
        ck_assert_ptr_eq(s->rule, &rules[i]);
        ck_assert_str_eq(strategy_text(s), names[i]);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Helpers for rules                                                        */
/* ------------------------------------------------------------------------ */

START_TEST(subst_avoids_capture) {
    /* xs |> map(y => x + y) with x := y * 2, where y is also the def's y */
    const st_def *d = def_of("def main(xs: [N]i32, x: i32, y: i32) = xs |> map(y => x + y)");
    const st_node *x = d->params[1], *y = d->params[2];
    st_err err = {0};
    const st_node *repl = st_binary(cx, ST_OP_MUL, y, st_lit_int(cx, ST_I32, 2), &err);
    ck_assert_ptr_nonnull(repl);
    const st_node *r = st_subst(cx, d->body, x, repl, &err);
    ck_assert_msg(r != NULL, "%s", err.message);
    const st_node *lam = r->kids[0];
    ck_assert_int_eq(lam->kind, ST_NODE_LAMBDA);
    ck_assert_ptr_ne(lam->kids[0], y); /* the parameter was renamed */
    ck_assert_uint_eq(st_count_uses(r, y, NULL), 1);
    ck_assert(!st_occurs(r, x));
    /* run it: y = 10, so each element becomes 20 + element */
    st_arena *a = st_arena_new();
    int32_t xs[3] = {1, 2, 3};
    st_value args[3] = {array_of(ST_I32, 3, xs, a), scalar_of(ST_I32, i32v(1000)), scalar_of(ST_I32, i32v(10))};
    st_value out = eval_body(d, r, args, a);
    const int32_t *o = out.u.a.data;
    ck_assert_int_eq(o[0], 21);
    ck_assert_int_eq(o[1], 22);
    ck_assert_int_eq(o[2], 23);

    /* a let that would capture is renamed too */
    const st_def *d2 = def_of("def main(x: i32, y: i32) = let y = x + 1 in y * x");
    r = st_subst(cx, d2->body, d2->params[0], d2->params[1], &err);
    ck_assert_msg(r != NULL, "%s", err.message);
    st_value args2[2] = {scalar_of(ST_I32, i32v(3)), scalar_of(ST_I32, i32v(5))};
    out = eval_body(d2, r, args2, a);
    ck_assert_int_eq(out.u.s.i32, (5 + 1) * 5);
    st_arena_free(a);

    /* nothing to replace: the same node */
    ck_assert_ptr_eq(st_subst(cx, d->body, d->params[0], d->params[0], &err), d->body);
    /* a replacement of another type is refused */
    ck_assert_ptr_null(st_subst(cx, d->body, x, st_lit_int(cx, ST_I64, 1), &err));
}
END_TEST

START_TEST(subst_respects_shadowing) {
    st_arena *a = st_arena_new();
    st_err err = {0};
    /* the let's value sees the outer x, its body the inner one */
    const st_def *d = def_of("def main(x: i32) = (x + 1, let x = x * 3 in x + 100)");
    const st_node *r = st_subst(cx, d->body, d->params[0], st_lit_int(cx, ST_I32, 7), &err);
    ck_assert_msg(r != NULL, "%s", err.message);
    ck_assert_str_eq(text_of(r->kids[0]), "7 + 1");
    st_value arg = scalar_of(ST_I32, i32v(-1));
    st_value out = eval_body(d, r, &arg, a);
    ck_assert_int_eq(out.kind, ST_VALUE_TUPLE);
    ck_assert_int_eq(out.u.items[0].u.s.i32, 8);
    ck_assert_int_eq(out.u.items[1].u.s.i32, 121);
    /* a lambda that binds the variable keeps its own */
    const st_def *d2 = def_of("def main(xs: [N]i32, x: i32) = (xs |> map(x => x * 2), xs |> map(y => y + x))");
    r = st_subst(cx, d2->body, d2->params[1], st_lit_int(cx, ST_I32, 5), &err);
    ck_assert_msg(r != NULL, "%s", err.message);
    ck_assert_ptr_eq(r->kids[0], d2->body->kids[0]);
    ck_assert_str_eq(text_of(r->kids[1]), "xs |> map(y => y + 5)");
    /* a destructuring let that binds it among others */
    const st_def *d3 = def_of("def main(x: i32, y: i32) = let (x, z) = (y, x) in x + z");
    r = st_subst(cx, d3->body, d3->params[0], st_lit_int(cx, ST_I32, 40), &err);
    ck_assert_msg(r != NULL, "%s", err.message);
    st_value args3[2] = {scalar_of(ST_I32, i32v(1)), scalar_of(ST_I32, i32v(2))};
    out = eval_body(d3, r, args3, a);
    ck_assert_int_eq(out.u.s.i32, 42);
    st_arena_free(a);
}
END_TEST

START_TEST(count_uses) {
    const st_def *d = def_of("def main(xs: [N]i32, k: i32) = (k + k, xs |> map(x => x + k))");
    const st_node *xs = d->params[0], *k = d->params[1];
    bool under = false;
    ck_assert_uint_eq(st_count_uses(d->body, k, &under), 3);
    ck_assert(under);
    ck_assert_uint_eq(st_count_uses(d->body, xs, &under), 1);
    ck_assert(!under);
    ck_assert_uint_eq(st_count_uses(d->body->kids[0], k, &under), 2);
    ck_assert(!under);
    ck_assert_uint_eq(st_count_uses(d->body->kids[1], k, NULL), 1);
    ck_assert(st_occurs(d->body, k));
    /* shared subtrees count every time they occur */
    const st_def *d2 = def_of("def main(k: i32) = (k * 2, k * 2, k * 2)");
    ck_assert_ptr_eq(d2->body->kids[0], d2->body->kids[1]);
    ck_assert_uint_eq(st_count_uses(d2->body, d2->params[0], &under), 3);
    ck_assert(!under);
    /* bound occurrences are not uses */
    const st_def *d3 = def_of("def main(xs: [N]i32, k: i32) = (xs |> map(k => k + 1), let k = 3 in k)");
    ck_assert_uint_eq(st_count_uses(d3->body, d3->params[1], &under), 0);
    ck_assert(!under);
    ck_assert(!st_occurs(d3->body, d3->params[1]));
    /* but a let's value is outside its scope */
    const st_def *d4 = def_of("def main(k: i32) = let k = k + 1 in k * k");
    ck_assert_uint_eq(st_count_uses(d4->body, d4->params[0], &under), 1);
    ck_assert(!under);
    /* a use under a lambda nested in a let body */
    const st_def *d5 = def_of("def main(xs: [N]i32, k: i32) = let z = k in xs |> map(x => x * z)");
    const st_node *z = d5->body->kids[0];
    ck_assert_uint_eq(st_count_uses(st_let_body(d5->body), z, &under), 1);
    ck_assert(under);
    ck_assert_uint_eq(st_count_uses(d5->body, z, &under), 0); /* the let binds it */
    ck_assert_uint_eq(st_count_uses(d5->body, d5->params[1], &under), 1);
    ck_assert(!under);
}
END_TEST

START_TEST(apply_fn_operator) {
    const st_def *d = def_of("def main(xs: [N]i32, p: i32, q: i32): i32 = xs |> reduce(+, 0)");
    const st_node *plus = d->body->kids[0];
    ck_assert_int_eq(plus->kind, ST_NODE_OPFN);
    st_err err = {0};
    const st_node *r = st_apply_fn(cx, plus, 2, (const st_node *[]){d->params[1], d->params[2]}, &err);
    ck_assert_msg(r != NULL, "%s", err.message);
    ck_assert_str_eq(text_of(r), "p + q");
    ck_assert_ptr_null(st_apply_fn(cx, plus, 1, (const st_node *[]){d->params[1]}, &err));
    ck_assert_ptr_null(st_apply_fn(cx, d->params[1], 1, (const st_node *[]){d->params[1]}, &err));
}
END_TEST

START_TEST(apply_fn_lambda) {
    const st_def *d = def_of("def main(xs: [N]i32, p: i32, q: i32): i32 = xs |> reduce((a, b) => a * b + a, 0)");
    const st_node *f = d->body->kids[0], *p = d->params[1], *q = d->params[2];
    ck_assert_int_eq(f->kind, ST_NODE_LAMBDA);
    st_err err = {0};
    st_arena *ar = st_arena_new();
    int32_t xs[1] = {0};
    st_value args[3] = {array_of(ST_I32, 1, xs, ar), scalar_of(ST_I32, i32v(3)), scalar_of(ST_I32, i32v(4))};

    /* variables are substituted */
    const st_node *r = st_apply_fn(cx, f, 2, (const st_node *[]){p, q}, &err);
    ck_assert_msg(r != NULL, "%s", err.message);
    ck_assert_str_eq(text_of(r), "p * q + p");
    /* literals too */
    r = st_apply_fn(cx, f, 2, (const st_node *[]){st_lit_int(cx, ST_I32, 6), q}, &err);
    ck_assert_msg(r != NULL, "%s", err.message);
    ck_assert_str_eq(text_of(r), "6 * q + 6");

    /* a complex argument used twice is let-bound, computed once */
    const st_node *p1 = st_binary(cx, ST_OP_ADD, p, st_lit_int(cx, ST_I32, 1), &err);
    r = st_apply_fn(cx, f, 2, (const st_node *[]){p1, q}, &err);
    ck_assert_msg(r != NULL, "%s", err.message);
    ck_assert_int_eq(r->kind, ST_NODE_LET);
    ck_assert_int_eq(occurrences(r, p1), 1);
    ck_assert_int_eq(eval_body(d, r, args, ar).u.s.i32, (3 + 1) * 4 + (3 + 1));
    /* used once, outside any lambda: substituted */
    const st_node *q1 = st_binary(cx, ST_OP_MUL, q, q, &err);
    r = st_apply_fn(cx, f, 2, (const st_node *[]){p, q1}, &err);
    ck_assert_msg(r != NULL, "%s", err.message);
    ck_assert_int_eq(count_kind(r, ST_NODE_LET), 0);
    ck_assert_int_eq(eval_body(d, r, args, ar).u.s.i32, 3 * 16 + 3);
    /* both complex */
    r = st_apply_fn(cx, f, 2, (const st_node *[]){p1, q1}, &err);
    ck_assert_msg(r != NULL, "%s", err.message);
    ck_assert_int_eq(occurrences(r, p1), 1);
    ck_assert_int_eq(eval_body(d, r, args, ar).u.s.i32, 4 * 16 + 4);

    /* arguments named like the parameters are not captured: f(b, a) */
    const st_def *d2 = def_of("def main(xs: [N]i32, a: i32, b: i32): i32 = xs |> reduce((a, b) => a - b, 0)");
    r = st_apply_fn(cx, d2->body->kids[0], 2, (const st_node *[]){d2->params[2], d2->params[1]}, &err);
    ck_assert_msg(r != NULL, "%s", err.message);
    ck_assert_str_eq(text_of(r), "b - a");
    const st_node *b1 = st_binary(cx, ST_OP_ADD, d2->params[2], d2->params[2], &err);
    const st_node *a1 = st_binary(cx, ST_OP_MUL, d2->params[1], d2->params[1], &err);
    r = st_apply_fn(cx, d2->body->kids[0], 2, (const st_node *[]){b1, a1}, &err);
    ck_assert_msg(r != NULL, "%s", err.message);
    ck_assert_int_eq(eval_body(d2, r, args, ar).u.s.i32, (4 + 4) - 3 * 3);

    /* a complex argument used once inside a lambda is let-bound */
    const st_def *d3 = def_of("def main(xs: [N]i32, p: i32) = xs |> map(v => xs |> map(w => w + v) |> reduce(+, 0))");
    const st_node *outer = d3->body->kids[0];
    const st_node *p2 = st_binary(cx, ST_OP_MUL, d3->params[1], st_lit_int(cx, ST_I32, 2), &err);
    r = st_apply_fn(cx, outer, 1, (const st_node *[]){p2}, &err);
    ck_assert_msg(r != NULL, "%s", err.message);
    ck_assert_int_eq(r->kind, ST_NODE_LET);
    ck_assert_ptr_eq(st_let_value(r), p2);
    /* wrong arity */
    ck_assert_ptr_null(st_apply_fn(cx, f, 1, (const st_node *[]){p}, &err));
    ck_assert_ptr_null(st_apply_fn(cx, f, 3, (const st_node *[]){p, q, p}, &err));
    st_arena_free(ar);
}
END_TEST

START_TEST(apply_fn_destructuring) {
    const st_def *d = def_of("def main(ts: [N](i32, i32)) = ts |> map((a, b) => a * 10 + b)");
    const st_node *f = d->body->kids[0], *ts = d->params[0];
    ck_assert_uint_eq(st_lambda_nparams(f), 2);
    st_err err = {0};
    /* a tuple variable: its components are projections */
    const st_node *t = st_fresh_var(cx, "t", ts->type->elem);
    const st_node *r = st_apply_fn(cx, f, 1, &t, &err);
    ck_assert_msg(r != NULL, "%s", err.message);
    ck_assert_int_eq(count_kind(r, ST_NODE_PROJ), 2);
    ck_assert_int_eq(count_kind(r, ST_NODE_LET), 0);
    char want[64];
    snprintf(want, sizeof want, "%s.0 * 10 + %s.1", t->u.name, t->u.name);
    ck_assert_str_eq(text_of(r), want);
    /* run it as map(t => …, ts) (padded: see constructors_read_their_arguments_only) */
    const st_node *lam = st_lambda(cx, 1, (const st_node *[3]){t, NULL, NULL}, r, &err);
    ck_assert_msg(lam != NULL, "%s", err.message);
    const st_node *body = st_prim_node(cx, ST_PRIM_MAP, 2, (const st_node *[]){lam, ts}, &err);
    ck_assert_msg(body != NULL, "%s", err.message);
    st_arena *ar = st_arena_new();
    int32_t as[3] = {1, 2, 3}, bs[3] = {4, 5, 6};
    st_value items[2] = {array_of(ST_I32, 3, as, ar), array_of(ST_I32, 3, bs, ar)};
    st_value arg;
    memset(&arg, 0, sizeof arg);
    arg.kind = ST_VALUE_TUPLE;
    arg.n = 2;
    arg.u.items = items;
    st_value out = eval_body(d, body, &arg, ar);
    const int32_t *o = out.u.a.data;
    ck_assert_int_eq(o[0], 14);
    ck_assert_int_eq(o[1], 25);
    ck_assert_int_eq(o[2], 36);
    st_arena_free(ar);

    /* a tuple written out: its components */
    const st_def *d2 = def_of("def main(ts: [N](i32, i32), p: i32, q: i32) = ts |> map((a, b) => a * 10 + b)");
    const st_node *pq = st_tuple(cx, 2, (const st_node *[]){d2->params[1], d2->params[2]}, &err);
    r = st_apply_fn(cx, d2->body->kids[0], 1, &pq, &err);
    ck_assert_msg(r != NULL, "%s", err.message);
    ck_assert_str_eq(text_of(r), "p * 10 + q");
    /* any other tuple expression: destructured once by a let */
    const st_node *swapped = st_tuple(cx, 2, (const st_node *[]){d2->params[2], d2->params[1]}, &err);
    const st_node *proj = st_proj(cx, st_tuple(cx, 2, (const st_node *[]){swapped, pq}, &err), 0, &err);
    ck_assert_ptr_nonnull(proj);
    r = st_apply_fn(cx, d2->body->kids[0], 1, &proj, &err);
    ck_assert_msg(r != NULL, "%s", err.message);
    ck_assert_int_eq(r->kind, ST_NODE_LET);
    ck_assert_uint_eq(st_let_nvars(r), 2);
    ck_assert_int_eq(occurrences(r, proj), 1);
}
END_TEST

/* st_lambda and st_let read their parameters or variables, nothing after
 * them: an array of exactly nparams ending at a page the process may not read
 * is enough. (Rules build lambdas from arrays of exactly their parameters:
 * strategies/build.h's LAMBDA.) */
START_TEST(constructors_read_their_arguments_only) {
    long page = sysconf(_SC_PAGESIZE);
    int fd = open("/dev/zero", O_RDWR);
    ck_assert_int_ge(fd, 0);
    unsigned char *mem = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    close(fd);
    ck_assert(mem != MAP_FAILED);
    ck_assert_int_eq(mprotect(mem + page, (size_t)page, PROT_NONE), 0);
    const st_node **last = (const st_node **)(void *)(mem + page - sizeof(const st_node *));

    const st_def *d = def_of("def main(k: i32) = k + 1");
    const st_node *k = d->params[0];
    st_err err = {0};
    *last = st_fresh_var(cx, "v", k->type);
    const st_node *lam = st_lambda(cx, 1, last, d->body, &err);
    ck_assert_msg(lam != NULL, "%s", err.message);
    ck_assert_ptr_eq(lam->kids[0], *last);
    const st_node *let = st_let(cx, 1, last, k, d->body, &err);
    ck_assert_msg(let != NULL, "%s", err.message);
    ck_assert_ptr_eq(st_let_value(let), k);
    munmap(mem, (size_t)page * 2);
}
END_TEST

int main(void) {
    Suite *s = suite_create("strategy");
    TCase *tc = tcase_create("strategy");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, parse_rules_and_arguments);
    tcase_add_test(tc, parse_combinators);
    tcase_add_test(tc, parse_precedence);
    tcase_add_test(tc, print_parse_print);
    tcase_add_test(tc, parse_errors_basic);
    tcase_add_test(tc, parse_error_iterate_count);
    tcase_add_test(tc, parse_errors_rules);
    tcase_add_test(tc, parse_nesting_limits);
    tcase_add_test(tc, parse_long_names);
    tcase_add_test(tc, parse_extreme_arguments);
    tcase_add_test(tc, engine_programs_print_as_expected);
    tcase_add_test(tc, engine_id_fail_seq_choice);
    tcase_add_test(tc, engine_try_repeat);
    tcase_add_test(tc, engine_iterate);
    tcase_add_test(tc, engine_first);
    tcase_add_test(tc, engine_each);
    tcase_add_test(tc, engine_topdown_bottomup);
    tcase_add_test(tc, engine_all_one);
    tcase_add_test(tc, engine_normalize);
    tcase_add_test(tc, engine_step_limit);
    tcase_add_test(tc, engine_step_limit_per_rewrite);
    tcase_add_test(tc, engine_step_limit_growing);
    tcase_add_test(tc, engine_step_limit_growing_normalize);
    tcase_add_test(tc, engine_self_expanding_composite);
    tcase_add_test(tc, engine_traversals_skip_binders);
    tcase_add_test(tc, engine_type_change_refused);
    tcase_add_test(tc, engine_failure_reasons);
    tcase_add_test(tc, trace_composite);
    tcase_add_test(tc, trace_names_one_rule_each);
    tcase_add_test(tc, trace_failed_branches);
    tcase_add_test(tc, trace_expanded_composite);
    tcase_add_test(tc, expanded_composite_applies);
    tcase_add_test(tc, rewrite_def_and_replace);
    tcase_add_test(tc, registry_refusals);
    tcase_add_test(tc, registry_names_are_parseable);
    tcase_add_test(tc, subst_avoids_capture);
    tcase_add_test(tc, subst_respects_shadowing);
    tcase_add_test(tc, count_uses);
    tcase_add_test(tc, apply_fn_operator);
    tcase_add_test(tc, apply_fn_lambda);
    tcase_add_test(tc, apply_fn_destructuring);
    tcase_add_test(tc, constructors_read_their_arguments_only);
    suite_add_tcase(s, tc);
    TCase *limits = tcase_create("limits");
    tcase_add_checked_fixture(limits, setup, teardown);
    tcase_set_timeout(limits, 10);
    tcase_add_test(limits, engine_nested_iterate_ends);
    suite_add_tcase(s, limits);
    TCase *large = tcase_create("large");
    tcase_add_checked_fixture(large, setup, teardown);
    tcase_set_timeout(large, 120);
    tcase_add_test(large, engine_budget_grows_with_the_program);
    suite_add_tcase(s, large);
    return run_suite(s);
}
