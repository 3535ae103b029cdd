/* tests/test_rules.c — the built-in rewrite rules keep programs' meaning.
 *
 * The property: for every rule and many parameter values, the reference
 * interpreter gives the same result before and after the rewrite, on seeded
 * random inputs of lengths 0, 1, 2, 3, 7, BS−1, BS, BS+1, 1000 and 4099
 * (rounded up to a multiple where a rule needs divisibility), for scans over
 * `+` on i32 and f32, `max`, `^` on u32, a tuple operator, rows of 4, and
 * operators that are not commutative (the affine recurrence, in i32 and f32,
 * and a segmented scan of sparse (flag, value) pairs), each in every form of
 * scan: plain, with a fold (after fuse-map-scan), with a post-function (after
 * fuse-scan-map, reading the element or not), and with both. The fusion
 * rules get the same property in their direct and `let` forms, and the scan
 * rules again where scans sit inside larger programs and the examples.
 *
 * Around the property: every rewritten program prints and parses back to the
 * same IR; the rules refuse what they must (lengths they cannot prove
 * divisible, bad parameters, the fusion hindrances) with a message that says
 * why; fusion respects shadowed names; parallel-scan builds the structure of
 * [Pizzuti et al. 2022]'s listing 8; and a few results are checked against values worked
 * out by hand, so that the suite does not only compare the interpreter with
 * itself.
 *
 * A property test collects its failures and reports them together at the end,
 * so one broken operator or form does not hide the others. */
#include "rules_fixture.h"
#include "rewrite/rewrite.h"
#include "strategies/strategies.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

/* Reassociating an f32 scan (blocks, trees) changes rounding, and the
 * interpreter combines the original's floats in a tree where a rewritten
 * program's blocks go left to right: floats compare as a device's do with
 * the reference (st_expected_agree, docs/checking.md). The integer subjects
 * run the same rules and compare exactly, so a lost or doubled element
 * cannot hide in the tolerance. */

/* ------------------------------------------------------------------------ */
/* Fixture: a context, an arena and the built-in rules for every test       */
/* ------------------------------------------------------------------------ */

#define entry_of(p) entry_ok(p)

/* ------------------------------------------------------------------------ */
/* Failures, collected                                                      */
/* ------------------------------------------------------------------------ */



/* ------------------------------------------------------------------------ */
/* Programs, strategies, rewrites                                           */
/* ------------------------------------------------------------------------ */



static const st_program *parse_noted(faults *f, const char *label, const char *src) {
    st_err err = {0};
    const st_program *p = st_parse_program(cx, "test.strata", src, strlen(src), &err);
    if (!p)
        fault(f, "%s: the test's program does not parse: %d:%d: %s\n%s", label, err.loc.line, err.loc.col,
              err.message, src);
    return p;
}

/* d rewritten by the strategy text; NULL (noted) when it does not apply. */
static const st_def *rewrite_noted(faults *f, const char *label, const st_def *d, const char *strategy) {
    st_err err = {0};
    const st_strategy *s = st_strategy_parse(cx, reg, "strategy", strategy, &err);
    if (!s) {
        fault(f, "%s: the strategy `%s` does not parse: %s", label, strategy, err.message);
        return NULL;
    }
    st_rw *rw = st_rw_new(cx, reg);
    ck_assert(rw != NULL);
    const st_def *now = st_rewrite_def(rw, s, d, &err);
    st_rw_free(rw);
    if (!now) fault(f, "%s: `%s` does not apply: %s", label, strategy, err.message);
    return now;
}

/* The same, failing the test at once. */
static const st_def *rewrite_ok(const st_def *d, const char *strategy) {
    faults f = {0};
    const st_def *now = rewrite_noted(&f, "rewrite", d, strategy);
    no_faults(&f);
    return now;
}

/* Why `strategy` does not apply to d; the test fails if it parses badly or
 * applies. */
static st_err refusal(const st_def *d, const char *strategy) {
    st_err err = {0};
    const st_strategy *s = st_strategy_parse(cx, reg, "strategy", strategy, &err);
    ck_assert_msg(s != NULL, "`%s` does not parse: %s", strategy, err.message);
    st_rw *rw = st_rw_new(cx, reg);
    ck_assert(rw != NULL);
    const st_def *now = st_rewrite_def(rw, s, d, &err);
    st_rw_free(rw);
    if (now) {
        st_buf b = {0};
        st_print_def(now, &b);
        ck_assert_msg(now == NULL, "expected `%s` to be refused, but it gave:\n%s", strategy, b.data);
    }
    ck_assert_msg(err.message[0] != 0, "`%s` was refused without a message", strategy);
    ck_assert_msg(err.kind == ST_ERR_USER, "`%s`: a refusal is the user's, not internal: %s", strategy, err.message);
    return err;
}

/* The rule refuses src with a message containing `part`, and says that a
 * condition failed rather than that the shape did not fit. */
static void refused_because(const char *src, const char *strategy, const char *part) {
    st_err err = refusal(entry_of(parse_ok(cx, src)), strategy);
    ck_assert_msg(strstr(err.message, part) != NULL, "`%s`: expected \"%s\" in \"%s\"\n--- on ---\n%s", strategy, part,
                  err.message, src);
    ck_assert_msg(!err.mismatch, "`%s`: a failed condition, not a shape mismatch: %s", strategy, err.message);
}

/* The strategy text fails to parse with a message containing `part` at
 * column col (0: anywhere). */
static void strategy_refused(const char *strategy, const char *part, int col) {
    st_err err = {0};
    const st_strategy *s = st_strategy_parse(cx, reg, "strategy", strategy, &err);
    ck_assert_msg(s == NULL, "expected `%s` to be refused when parsed", strategy);
    ck_assert_msg(strstr(err.message, part) != NULL, "`%s`: expected \"%s\" in \"%s\"", strategy, part, err.message);
    ck_assert_msg(err.kind == ST_ERR_USER && err.loc.line == 1, "`%s`: a located user error: %s", strategy,
                  err.message);
    if (col) ck_assert_msg(err.loc.col == col, "`%s`: expected the error at column %d, got %d: %s", strategy, col,
                           err.loc.col, err.message);
}

/* The text of examples/NAME.strata. */
static const char *example(const char *name) { return example_text(ar, name); }

/* Print the program with `now` in place of `old`, parse it back, and check
 * that it type-checks, prints the same again, and is the same IR (nodes are
 * hash-consed, so the same IR is the same pointer). The def read back. */
static const st_def *reparse_noted(faults *f, const char *label, const st_program *p, const st_def *old,
                                   const st_def *now) {
    const st_program *q = st_program_replace(cx, p, old, now);
    ck_assert(q != NULL);
    st_buf text = {0}, again = {0};
    st_print_program(q, &text);
    st_err err = {0};
    const st_program *back = st_parse_program(cx, "rewritten.strata", text.data, text.len, &err);
    const st_def *d = NULL;
    if (!back) {
        fault(f, "%s: the rewritten program does not parse back: %d:%d: %s\n%s", label, err.loc.line, err.loc.col,
              err.message, text.data);
    } else {
        st_print_program(back, &again);
        d = st_program_entry(back, now->name, &err);
        if (strcmp(text.data, again.data) != 0)
            fault(f, "%s: printed, parsed and printed again, the program changed:\n%s\n--- became ---\n%s", label,
                  text.data, again.data);
        else if (!d || d->body != now->body)
            fault(f, "%s: the rewritten program parses back to a different IR:\n%s", label, text.data);
    }
    st_buf_free(&text);
    st_buf_free(&again);
    return d;
}

/* ------------------------------------------------------------------------ */
/* Inputs and outputs                                                       */
/* ------------------------------------------------------------------------ */

static uint64_t splitmix(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Every size variable of d bound to n (the programs here have one, N). */
static size_t bind_sizes(const st_def *d, int64_t n, st_binding *env) {
    ck_assert(d->nsizes <= 4);
    for (uint32_t i = 0; i < d->nsizes; i++) env[i] = (st_binding){d->sizes[i]->u.name, n};
    return d->nsizes;
}

/* Bool arrays become sparse flags (one in eight true): a segmented scan
 * with segments of two elements on average would barely combine anything. */
static void sparsify(st_value *v, uint64_t seed) {
    st_value leaves[16];
    size_t n = st_value_leaves(v, leaves, 16);
    for (size_t k = 0; k < n && k < 16; k++) {
        if (leaves[k].kind != ST_VALUE_ARRAY || leaves[k].scalar != ST_BOOL) continue;
        int64_t count = 1;
        for (uint32_t dim = 0; dim < leaves[k].n; dim++) count *= leaves[k].u.a.dims[dim];
        for (int64_t i = 0; i < count; i++) {
            bool flag = splitmix(&seed) % 8 == 0;
            memcpy((char *)leaves[k].u.a.data + i, &flag, 1);
        }
    }
}

/* Seeded random arguments for d, shaped by its parameter types under env. */
static st_value *random_args(const st_def *d, const st_binding *env, size_t nenv, uint64_t seed) {
    st_value *args = st_arena_zalloc(ar, (d->nparams + 1) * sizeof *args);
    ck_assert(args != NULL);
    for (uint32_t k = 0; k < d->nparams; k++) {
        st_err err = {0};
        ck_assert_msg(st_value_alloc(ar, d->params[k]->type, env, nenv, &args[k], &err), "%s", err.message);
        st_value_fill_random(&args[k], seed * 7919 + k);
        sparsify(&args[k], seed * 104729 + k);
    }
    return args;
}

static int64_t leaf_count(const st_value *v) {
    if (v->kind == ST_VALUE_SCALAR) return 1;
    int64_t count = 1;
    for (uint32_t dim = 0; dim < v->n; dim++) count *= v->u.a.dims[dim];
    return count;
}

static st_scalar leaf_at(const st_value *v, int64_t i) {
    if (v->kind == ST_VALUE_SCALAR) return v->u.s;
    st_scalar s = {.bits = 0};
    size_t size = st_scalar_size(v->scalar);
    memcpy(&s, (const char *)v->u.a.data + (size_t)i * size, size);
    return s;
}

static bool same_scalar(st_scalar_kind k, st_scalar a, st_scalar b) {
    if (!st_scalar_is_float(k)) return memcmp(&a, &b, st_scalar_size(k)) == 0;
    double x = st_scalar_as_f64(k, a), y = st_scalar_as_f64(k, b);
    return (isnan(x) && isnan(y)) || x == y;
}

static void scalar_text(st_scalar_kind k, st_scalar s, char *buf, size_t cap) {
    st_buf b = {0};
    st_scalar_format(k, s, &b);
    snprintf(buf, cap, "%s", b.data ? b.data : "?");
    st_buf_free(&b);
}

/* Do a and b hold the same values? If not, why. */
static bool same_value(const st_value *a, const st_value *b, char *why, size_t cap) {
    st_value la[16], lb[16];
    size_t na = st_value_leaves(a, la, 16), nb = st_value_leaves(b, lb, 16);
    if (na != nb || na > 16) return snprintf(why, cap, "%zu leaves against %zu", na, nb), false;
    for (size_t k = 0; k < na; k++) {
        if (la[k].kind != lb[k].kind || la[k].scalar != lb[k].scalar)
            return snprintf(why, cap, "leaf %zu: a %s against a %s", k, st_scalar_name(la[k].scalar),
                            st_scalar_name(lb[k].scalar)), false;
        int64_t n = leaf_count(&la[k]);
        if (n != leaf_count(&lb[k]))
            return snprintf(why, cap, "leaf %zu: %lld elements against %lld", k, (long long)n,
                            (long long)leaf_count(&lb[k])), false;
        for (int64_t i = 0; i < n; i++) {
            st_scalar x = leaf_at(&la[k], i), y = leaf_at(&lb[k], i);
            if (same_scalar(la[k].scalar, x, y)) continue;
            char tx[64], ty[64];
            scalar_text(la[k].scalar, x, tx, sizeof tx);
            scalar_text(la[k].scalar, y, ty, sizeof ty);
            return snprintf(why, cap, "leaf %zu, element %lld of %lld: %s before, %s after", k, (long long)i,
                            (long long)n, tx, ty), false;
        }
    }
    return true;
}

/* Run before and after on the same random inputs of every length; note
 * the first length where they disagree, or where the rewritten program fails
 * to run. Integers agree exactly; floats as a device's do with the
 * reference (st_expected_agree): the original's reductions and scans of
 * floats combine in a tree, a rewritten program's blocks left to right. */
static void same_results_noted(faults *f, const char *label, const st_def *before, const st_def *after,
                               const int64_t *lengths, int nlengths, uint64_t seed) {
    const int before_n = f->n;
    for (int l = 0; l < nlengths; l++) {
        int64_t n = lengths[l];
        st_arena_mark mark = st_arena_get_mark(ar);
        st_binding env[4];
        size_t nenv = bind_sizes(before, n, env);
        const st_value *args = random_args(before, env, nenv, seed + (uint64_t)n);
        st_expected want;
        st_value got;
        st_err err = {0};
        if (!st_eval_expected(cx, before, args, env, nenv, ar, &want, &err))
            fault(f, "%s, length %lld: the original program fails: %s", label, (long long)n, err.message);
        else if (!st_eval(cx, after, args, env, nenv, ar, &got, &err))
            fault(f, "%s, length %lld: the rewritten program fails: %s", label, (long long)n, err.message);
        else if (!st_expected_agree(&got, &want, ST_TOLERANCE, &err))
            fault(f, "%s, length %lld: %s", label, (long long)n, err.message);
        st_arena_release(ar, mark);
        if (f->n > before_n) return; /* one line per program: the others stay visible */
    }
}

/* Evaluate d on args with every size bound to n; fail the test on error. */
static st_value eval_def(const st_def *d, const st_value *args, int64_t n) {
    st_binding env[4];
    size_t nenv = bind_sizes(d, n, env);
    st_value out;
    st_err err = {0};
    ck_assert_msg(st_eval(cx, d, args, env, nenv, ar, &out, &err), "eval failed: %s", err.message);
    return out;
}

#define COUNT(T, ...) ((int64_t)(sizeof((T[]){__VA_ARGS__}) / sizeof(T)))

static st_value arr(st_scalar_kind k, const void *data, int64_t n) {
    size_t bytes = (size_t)n * st_scalar_size(k);
    void *copy = st_arena_alloc(ar, bytes ? bytes : 1);
    ck_assert(copy != NULL);
    memcpy(copy, data, bytes);
    return array_of(k, n, copy, ar);
}

#define I32S(...) arr(ST_I32, (const int32_t[]){__VA_ARGS__}, COUNT(int32_t, __VA_ARGS__))
#define BOOLS(...) arr(ST_BOOL, (const bool[]){__VA_ARGS__}, COUNT(bool, __VA_ARGS__))

/* leaf k of v holds exactly want[0..n) (of v's scalar kind) */
static void want_leaf(const st_value *v, size_t k, st_scalar_kind kind, const void *want, int64_t n) {
    st_value leaves[16];
    size_t count = st_value_leaves(v, leaves, 16);
    ck_assert_msg(k < count, "no leaf %zu (of %zu)", k, count);
    st_value expected = arr(kind, want, n);
    char why[256];
    ck_assert_msg(same_value(&leaves[k], &expected, why, sizeof why), "leaf %zu: %s (left: got, right: want)", k,
                  why);
}

#define WANT_I32(v, k, ...) \
    want_leaf(&(v), (k), ST_I32, (const int32_t[]){__VA_ARGS__}, COUNT(int32_t, __VA_ARGS__))
#define WANT_BOOL(v, k, ...) want_leaf(&(v), (k), ST_BOOL, (const bool[]){__VA_ARGS__}, COUNT(bool, __VA_ARGS__))

/* ------------------------------------------------------------------------ */
/* Walking the IR                                                           */
/* ------------------------------------------------------------------------ */

static bool is_prim(const st_node *n, st_prim p) { return n->kind == ST_NODE_PRIM && n->u.prim == p; }

/* occurrences of primitive p in the tree under n */
static int count_prim(const st_node *n, st_prim p) {
    int c = is_prim(n, p);
    for (uint32_t i = 0; i < n->nkids; i++) c += count_prim(n->kids[i], p);
    return c;
}

/* A primitive found by a survey: how many lambdas deep (below where the
 * survey began), the length of its data argument (-1 when not a constant). */
typedef struct site {
    const st_node *node;
    int depth;
    int64_t len;
} site;

typedef struct survey {
    int n;
    site at[32];
} survey;

static void survey_prim(const st_node *e, st_prim p, int depth, survey *out) {
    if (is_prim(e, p) && out->n < 32) {
        int64_t len = -1;
        const st_type *t = e->kids[e->nkids - 1]->type;
        if (t->kind == ST_TYPE_ARRAY && !st_size_is_const(t->size, &len)) len = -1;
        out->at[out->n++] = (site){e, depth, len};
    }
    for (uint32_t i = 0; i < e->nkids; i++) survey_prim(e->kids[i], p, depth + (e->kind == ST_NODE_LAMBDA), out);
}

static survey survey_of(const st_node *e, st_prim p) {
    survey s = {0};
    survey_prim(e, p, 0, &s);
    return s;
}

/* The first lambda, in program order, with one parameter of type t whose
 * body contains primitive p. */
static const st_node *find_lambda(const st_node *e, const st_type *t, st_prim p) {
    if (e->kind == ST_NODE_LAMBDA && st_lambda_nparams(e) == 1 && e->kids[0]->type == t &&
        count_prim(st_lambda_body(e), p) > 0)
        return e;
    for (uint32_t i = 0; i < e->nkids; i++) {
        const st_node *found = find_lambda(e->kids[i], t, p);
        if (found) return found;
    }
    return NULL;
}

/* The sites at `depth` with data length `len`. */
static int sites(const survey *s, int depth, int64_t len) {
    int c = 0;
    for (int i = 0; i < s->n; i++) c += s->at[i].depth == depth && s->at[i].len == len;
    return c;
}

/* ------------------------------------------------------------------------ */
/* The scan property: subjects, forms, rules                                */
/* ------------------------------------------------------------------------ */

/* A scan to rewrite: its parameters (all of length N), the array it scans,
 * its operator and neutral element, and functions for the other forms: a map
 * before it (element to element), a map after it (of the accumulator), and a
 * map after it reading the element too ((x, acc) => …). */
typedef struct subject {
    const char *name, *params, *input, *op, *z, *pre, *post, *post_x;
} subject;

#define MIN_I32 "-2147483648"
#define SEGMENTED "(a, b) => (a.0 || b.0, if b.0 then b.1 else a.1 + b.1)"
#define AFFINE "(f, g) => (f.0 * g.0, g.0 * f.1 + g.1)"

static const subject SUBJECTS[] = {
    {"+ on i32", "xs: [N]i32", "xs", "+", "0", "x => x * 3 - 1", "a => a * 2 + 1", "(x, a) => a - x"},
    {"+ on f32", "xs: [N]f32", "xs", "+", "0.0", "x => x * 2.0 - 0.5", "a => a * 0.5", "(x, a) => a - x"},
    {"max", "xs: [N]i32", "xs", "max", MIN_I32, "x => 0 - x", "a => a + 1", "(x, a) => a == x"},
    {"(+, max) on pairs", "xs: [N]i32, ys: [N]i32", "zip(xs, ys)", "(p, q) => (p.0 + q.0, max(p.1, q.1))",
     "(0, " MIN_I32 ")", "p => (p.1, p.0 * 2)", "a => a.0 - a.1", "(x, a) => (x.0 + a.0, a.1 - x.1)"},
    /* i32 wraps, so the recurrence is exact and still associative */
    {"affine recurrence on i32", "as: [N]i32, bs: [N]i32", "zip(as, bs)", AFFINE, "(1, 0)", "p => (p.0, p.1 + 1)",
     "a => a.1", "(x, a) => a.0 * x.1 + a.1"},
    {"affine recurrence on f32", "as: [N]f32, bs: [N]f32", "zip(as, bs)", AFFINE, "(1.0, 0.0)",
     "p => (p.0 * 0.5, p.1 + 1.0)", "a => a.1", "(x, a) => a.0 * x.1 + a.1"},
    {"^ on u32", "xs: [N]u32", "xs", "^", "0u32", "x => x * 2654435761u32", "a => a >> 3u32", "(x, a) => a & x"},
    /* elements that are arrays: the rules' neutral padding and prefixes are rows */
    {"+ on rows of 4", "xs: [N][4]i32", "xs", "(a, b) => zip(a, b) |> map((x, y) => x + y)", "replicate(4, 0)",
     "r => r |> map(x => x * 2)", "a => a |> reduce(+, 0)", "(x, a) => zip(x, a) |> map((p, q) => q - p)"},
    {"segmented +", "fs: [N]bool, vs: [N]i32", "zip(fs, vs)", SEGMENTED, "(false, 0)", "p => (p.0, p.1 * p.1)",
     "a => a.1", "(x, a) => if x.0 then 0 else a.1"},
};
enum { NSUBJECTS = sizeof SUBJECTS / sizeof *SUBJECTS };

/* The forms of scan, each made by fusing maps into a plain scan first. */
typedef enum form { PLAIN, FOLD, POST, POST_X, FOLD_POST, FOLD_POST_X, NFORMS } form;

static const struct {
    const char *name;
    const char *fuse;  /* the strategy that makes the form from the program */
    uint32_t arity;    /* of the scan it makes */
} FORMS[NFORMS] = {
    {"plain", NULL, 3},
    {"with a fold", "fuse-map-scan", 4},
    {"with a post-function", "fuse-scan-map", 5},
    {"with a post-function reading the element", "fuse-scan-map", 5},
    {"with a fold and a post-function", "fuse-scan-map ; fuse-map-scan", 5},
    {"with a fold and a post-function reading the element", "first(scan, fuse-map-scan) ; fuse-scan-map", 5},
};

/* A scan rule's strategy with what it needs and what it makes. */
typedef struct scan_case {
    const char *strategy;
    int64_t multiple;  /* the `where N % K == 0` it needs; 1: none */
    int64_t fixed;     /* a constant length instead of N (a full tree); 0: N */
    int64_t bs;        /* the lengths BS−1, BS, BS+1 are tested */
    int scans, seqs;   /* scan and scanSeq nodes it leaves */
    const char *refusal; /* its message for a length it cannot divide (multiple > 1) */
} scan_case;

static const scan_case SCAN_CASES[] = {
    /* listing 4: two scans left, the blocks' and the totals' */
    {"scan-then-propagate(BS=1)", 1, 0, 1, 2, 0, NULL},
    {"scan-then-propagate(BS=2)", 2, 0, 2, 2, 0, "a multiple of BS = 2"},
    {"scan-then-propagate(BS=3)", 3, 0, 3, 2, 0, "a multiple of BS = 3"},
    {"scan-then-propagate(BS=4)", 4, 0, 4, 2, 0, "a multiple of BS = 4"},
    {"scan-then-propagate(BS=16)", 16, 0, 16, 2, 0, "a multiple of BS = 16"},
    {"scan-then-propagate(BS=256)", 256, 0, 256, 2, 0, "a multiple of BS = 256"},
    /* listing 5: the recursion point and one downsweep */
    {"brent-kung-step(BF=2)", 2, 0, 2, 1, 1, "a multiple of BF = 2"},
    {"brent-kung-step(BF=3)", 3, 0, 3, 1, 1, "a multiple of BF = 3"},
    {"brent-kung-step(BF=4)", 4, 0, 4, 1, 1, "a multiple of BF = 4"},
    /* listing 6: TD downsweeps and the sequential middle, no scan left */
    {"brent-kung(BF=2, TD=0)", 1, 0, 16, 0, 1, NULL},
    {"brent-kung(BF=2, TD=1)", 2, 0, 2, 0, 2, "2^1 does not divide the scan's length"},
    {"brent-kung(BF=2, TD=3)", 8, 0, 8, 0, 4, "2^3 does not divide the scan's length"},
    {"brent-kung(BF=3, TD=2)", 9, 0, 9, 0, 3, "3^2 does not divide the scan's length"},
    {"brent-kung(BF=4, TD=2)", 16, 0, 16, 0, 3, "4^2 does not divide the scan's length"},
    {"brent-kung(BF=2, TD=4)", 16, 0, 16, 0, 5, "2^4 does not divide the scan's length"},
    /* the full tree: BF^TD is the length, the middle scans one element */
    {"brent-kung(BF=2, TD=4)", 1, 16, 16, 0, 5, NULL},
    {"brent-kung(BF=4, TD=3)", 1, 64, 64, 0, 4, NULL},
    {"brent-kung(BF=3, TD=3)", 1, 27, 27, 0, 4, NULL},
    {"sequential-scan", 1, 0, 16, 0, 1, NULL},
    /* any length: lengths that BS divides are padded by nothing */
    {"pad-scan(BS=16)", 1, 0, 16, 1, 0, NULL},
    {"pad-scan(BS=7)", 1, 0, 7, 1, 0, NULL},
    {"pad-scan(BS=256)", 1, 0, 256, 1, 0, NULL},
    {"pad-scan(BS=4)", 1, 7, 4, 1, 0, NULL}, /* a constant length */
    /* listing 7, for every length, nested on the totals' scan until BS^levels
     * >= 65536 (at most 4 levels, TD + 1 scanSeqs each); the last totals'
     * scan stays */
    {"parallel-scan(BS=16, BF=2, TD=2)", 1, 0, 16, 1, 4 * 3, NULL},
    {"parallel-scan(BS=256, BF=2, SE=4)", 1, 0, 256, 1, 2 * 7, NULL},
    {"parallel-scan(BS=32, BF=4, TD=2)", 1, 0, 32, 1, 4 * 3, NULL},
    {"parallel-scan(BS=8, BF=2, TD=3)", 1, 0, 8, 1, 4 * 4, NULL},
    {"parallel-scan(BS=16, BF=2, TD=0)", 1, 0, 16, 1, 4 * 1, NULL},
    {"parallel-scan(BS=2, BF=2, TD=1)", 1, 0, 2, 1, 4 * 2, NULL},
    {"parallel-scan(BS=27, BF=3, SE=3)", 1, 0, 27, 1, 4 * 3, NULL},
    {"parallel-scan(BS=12, BF=2, SE=3)", 1, 0, 12, 1, 4 * 3, NULL},
    {"parallel-scan(BS=64, BF=4, SE=64)", 1, 0, 64, 1, 3 * 1, NULL},
    /* constant lengths: no level for totals that fit one block (7: one
     * level; 4099: 513, 65 and 9 totals of 8, four levels) */
    {"parallel-scan(BS=16, BF=2, TD=2)", 1, 7, 16, 1, 3, NULL},
    {"parallel-scan(BS=8, BF=2, TD=3)", 1, 4099, 8, 1, 4 * 4, NULL},
    /* with the fact, no padding at the first level */
    {"parallel-scan(BS=16, BF=2, TD=2)", 16, 0, 16, 1, 4 * 3, NULL},
    {"parallel-scan(BS=16, BF=2, SE=2)", 16, 0, 16, 1, 4 * 4, NULL},
    /* the single pass: one scanLookback, for every length, in order */
    {"lookback(M=4, WG=8)", 1, 0, 32, 0, 0, NULL},
    {"lookback(M=3, WG=5, LW=5, LOAD=direct)", 1, 0, 15, 0, 0, NULL},
    {"lookback(M=1, WG=1)", 1, 7, 1, 0, 0, NULL},
    /* composed by hand, as DESIGN.md writes it */
    {"scan-then-propagate(BS=64) ; first(scan, brent-kung(BF=2, TD=3))", 64, 0, 64, 1, 4,
     "a multiple of BS = 64"},
};
enum { NSCAN_CASES = sizeof SCAN_CASES / sizeof *SCAN_CASES };

/* "[N]" in a parameter list replaced by a constant length */
static const char *with_length(const char *params, int64_t fixed) {
    if (!fixed) return params;
    st_buf b = {0};
    for (const char *p = params; *p;) {
        if (!strncmp(p, "[N]", 3)) {
            st_buf_printf(&b, "[%lld]", (long long)fixed);
            p += 3;
        } else {
            st_buf_put(&b, p++, 1);
        }
    }
    const char *s = text_of("%s", b.data);
    st_buf_free(&b);
    return s;
}

static const char *scan_program(const subject *s, form f, const scan_case *c) {
    const char *where = c->multiple > 1 && !c->fixed ? text_of(" where N %% %lld == 0", (long long)c->multiple) : "";
    const char *body = NULL;
    switch (f) {
    case PLAIN: body = text_of("%s |> scan(%s, %s)", s->input, s->op, s->z); break;
    case FOLD: body = text_of("%s |> map(%s) |> scan(%s, %s)", s->input, s->pre, s->op, s->z); break;
    case POST: body = text_of("%s |> scan(%s, %s) |> map(%s)", s->input, s->op, s->z, s->post); break;
    case POST_X:
        body = text_of("zip(%s, %s |> scan(%s, %s)) |> map(%s)", s->input, s->input, s->op, s->z, s->post_x);
        break;
    case FOLD_POST:
        body = text_of("%s |> map(%s) |> scan(%s, %s) |> map(%s)", s->input, s->pre, s->op, s->z, s->post);
        break;
    case FOLD_POST_X:
        body = text_of("zip(%s, %s |> map(%s) |> scan(%s, %s)) |> map(%s)", s->input, s->input, s->pre, s->op, s->z,
                       s->post_x);
        break;
    default: ck_abort();
    }
    return text_of("def main(%s)%s =\n  %s\n", with_length(s->params, c->fixed), where, body);
}

/* 1, 2, 3, 7, BS−1, BS, BS+1, 1000, 4099 and the empty array, each rounded
 * up to a multiple of what the rule needs, without repeats; a fixed length
 * alone. */
static int lengths_for(const scan_case *c, int64_t *out) {
    if (c->fixed) return out[0] = c->fixed, 1;
    const int64_t base[] = {0, 1, 2, 3, 7, c->bs - 1, c->bs, c->bs + 1, 1000, 4099};
    int n = 0;
    for (size_t i = 0; i < sizeof base / sizeof *base; i++) {
        int64_t k = c->multiple, len = base[i] < 0 ? 0 : base[i];
        len = (len + k - 1) / k * k;
        bool seen = false;
        for (int j = 0; j < n; j++) seen |= out[j] == len;
        if (!seen) out[n++] = len;
    }
    return n;
}

/* One scan rule on every subject in every form. */
START_TEST(scan_rule_preserves_results) {
    const scan_case *c = &SCAN_CASES[_i];
    faults f = {0};
    int64_t lengths[16];
    int nlengths = lengths_for(c, lengths);
    for (int s = 0; s < NSUBJECTS; s++)
        for (form fm = PLAIN; fm < NFORMS; fm++) {
            const char *label = text_of("%s on %s, %s", c->strategy, SUBJECTS[s].name, FORMS[fm].name);
            const char *src = scan_program(&SUBJECTS[s], fm, c);
            if (!strncmp(c->strategy, "lookback", 8) && strstr(SUBJECTS[s].params, "][")) {
                /* rows: lookback's one kernel holds scalars; its condition says so */
                if (fm == PLAIN) refused_because(src, c->strategy, "scalars and tuples of scalars");
                continue;
            }
            const st_program *p = parse_noted(&f, label, src);
            if (!p) continue;
            const st_def *d = entry_of(p), *formed = d;
            if (FORMS[fm].fuse) {
                formed = rewrite_noted(&f, label, d, FORMS[fm].fuse);
                if (!formed) continue;
                if (!is_prim(formed->body, ST_PRIM_SCAN) || formed->body->nkids != FORMS[fm].arity) {
                    fault(&f, "%s: `%s` did not make a scan of %u arguments", label, FORMS[fm].fuse,
                          FORMS[fm].arity);
                    continue;
                }
            }
            const st_def *now = rewrite_noted(&f, label, formed, c->strategy);
            if (!now) continue;
            int scans = count_prim(now->body, ST_PRIM_SCAN), seqs = count_prim(now->body, ST_PRIM_SCAN_SEQ);
            if (scans != c->scans || seqs != c->seqs)
                fault(&f, "%s: left %d scans and %d scanSeqs, expected %d and %d", label, scans, seqs, c->scans,
                      c->seqs);
            const uint64_t seed = (uint64_t)_i * 1000 + (uint64_t)s * 10 + (uint64_t)fm;
            same_results_noted(&f, label, d, now, lengths, nlengths, seed);
            /* what was printed runs the same (its short lengths suffice) */
            const st_def *back = reparse_noted(&f, label, p, d, now);
            if (back)
                same_results_noted(&f, text_of("%s, parsed back", label), d, back, lengths, nlengths < 3 ? nlengths : 3, seed);
        }
    no_faults(&f);
}
END_TEST

/* One scan rule on the exclusive scan of every subject (exscan, made the
 * scan of its shifted input by exscans-as-scans before the rule runs): the
 * interpreter's exscan before, the rewritten program after, and again
 * parsed back. */
START_TEST(scan_rule_preserves_exscan_results) {
    const scan_case *c = &SCAN_CASES[_i];
    faults f = {0};
    int64_t lengths[16];
    int nlengths = lengths_for(c, lengths);
    for (int s = 0; s < NSUBJECTS; s++) {
        const subject *sj = &SUBJECTS[s];
        if (!strncmp(c->strategy, "lookback", 8) && strstr(sj->params, "][")) continue; /* rows: refused */
        const char *label = text_of("%s on the exscan of %s", c->strategy, sj->name);
        const char *where = c->multiple > 1 && !c->fixed ? text_of(" where N %% %lld == 0", (long long)c->multiple) : "";
        const char *src = text_of("def main(%s)%s =\n  %s |> exscan(%s, %s)\n", with_length(sj->params, c->fixed),
                                  where, sj->input, sj->op, sj->z);
        const st_program *p = parse_noted(&f, label, src);
        if (!p) continue;
        const st_def *d = entry_of(p);
        const st_def *now = rewrite_noted(&f, label, d, text_of("exscans-as-scans ; %s", c->strategy));
        if (!now) continue;
        if (count_prim(now->body, ST_PRIM_EXSCAN))
            fault(&f, "%s: an exscan is left after the rewrite", label);
        const uint64_t seed = (uint64_t)_i * 1000 + (uint64_t)s * 10 + 7;
        same_results_noted(&f, label, d, now, lengths, nlengths, seed);
        const st_def *back = reparse_noted(&f, label, p, d, now);
        if (back)
            same_results_noted(&f, text_of("%s, parsed back", label), d, back, lengths, nlengths < 3 ? nlengths : 3, seed);
    }
    no_faults(&f);
}
END_TEST

/* The divisibility rules refuse lengths they cannot prove they divide:
 * no fact, a weaker fact, a constant that is not a multiple. */
START_TEST(scan_rule_refuses_lengths_it_cannot_divide) {
    const scan_case *c = &SCAN_CASES[_i];
    if (c->multiple < 2 || !c->refusal) return; /* the composites pad instead */
    const char *srcs[3];
    int n = 0;
    srcs[n++] = "def main(xs: [N]i32) = xs |> scan(+, 0)";
    srcs[n++] = text_of("def main(xs: [%lld]i32) = xs |> scan(+, 0)", (long long)c->multiple + 1);
    for (int64_t p = 2; p < c->multiple; p++)
        if (c->multiple % p == 0) { /* the largest proper divisor */
            srcs[n++] = text_of("def main(xs: [N]i32) where N %% %lld == 0 = xs |> scan(+, 0)",
                                (long long)(c->multiple / p));
            break;
        }
    for (int i = 0; i < n; i++) refused_because(srcs[i], c->strategy, c->refusal);
    /* a symbolic length is told how to state the fact */
    if (strncmp(c->strategy, "brent-kung(", 11) != 0)
        refused_because(srcs[0], c->strategy, "where");
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The fusion property                                                      */
/* ------------------------------------------------------------------------ */

/* A fusion: the program, the strategy, and the primitive it leaves fewer of
 * (ST_PRIM_COUNT: a scatter of pairs instead of one of indices and values). */
typedef struct fusion_case {
    const char *what, *src, *strategy;
    st_prim fewer;
} fusion_case;

/* A filter as examples/filter.strata writes it, but with the flags fused
 * into the scan and the index computed from its own element, so that the
 * scan-scatter fusion makes it one pass: a scanomap whose post-function
 * gives (index, value) pairs. */
#define FILTER                                                                                     \
    "def main(xs: [N]i32) =\n"                                                                     \
    "  scatter(replicate(N, 0), zip(xs, xs |> map(x => if x > 0 then 1i64 else 0) |> scan(+, 0))\n" \
    "    |> map((x, o) => if x > 0 then o - 1 else -1), xs)"
#define FILTER_IN_ONE_PASS "first(scan, fuse-map-scan) ; first(map, fuse-scan-map) ; fuse-scan-scatter"

static const fusion_case FUSION_CASES[] = {
    /* fuse-map-map */
    {"map of a map", "def main(xs: [N]i32) = xs |> map(x => x * 3 - 1) |> map(y => y * y + 1)", "fuse-map-map",
     ST_PRIM_MAP},
    {"map of a map of pairs, f32",
     "def main(xs: [N]f32, ys: [N]f32) = zip(xs, ys) |> map((x, y) => (x + y, x * y)) |> map(p => p.0 - p.1 * 2.0)",
     "fuse-map-map", ST_PRIM_MAP},
    {"let form", "def main(xs: [N]i32) = let ys = xs |> map(x => (x, x % 3 == 0)) in ys |> map((v, b) => if b then v else 0 - v)",
     "fuse-map-map", ST_PRIM_MAP},
    /* fuse-map-scan */
    {"scan of a map changing the type", "def main(xs: [N]i32) = xs |> map(x => i64(x) * 3) |> scan(+, 0i64)",
     "fuse-map-scan", ST_PRIM_MAP},
    {"scan of a map, f32", "def main(xs: [N]f32) = xs |> map(x => x * 2.0 - 0.5) |> scan(+, 0.0)", "fuse-map-scan",
     ST_PRIM_MAP},
    {"segmented scan of a map",
     "def main(fs: [N]bool, vs: [N]i32) = zip(fs, vs) |> map((f, v) => (f, v * 2)) |> scan(" SEGMENTED ", (false, 0))",
     "fuse-map-scan", ST_PRIM_MAP},
    {"let form", "def main(xs: [N]i32) = let ys = xs |> map(x => x * 3 - 1) in ys |> scan(max, " MIN_I32 ")",
     "fuse-map-scan", ST_PRIM_MAP},
    {"let form, the scan deeper in the body",
     "def main(xs: [N]i32) = let ys = xs |> map(x => x * 3 - 1) in let s = ys |> scan(+, 0) in s |> map(a => a + 1)",
     "fuse-map-scan", ST_PRIM_MAP},
    {"into a scan with a post-function",
     "def main(xs: [N]i32) = xs |> map(x => x * 3) |> scan(+, 0) |> map(a => a - 1)", "fuse-scan-map ; fuse-map-scan",
     ST_PRIM_MAP},
    /* fuse-map-reduce */
    {"reduce of a map", "def main(xs: [N]i32) = xs |> map(x => x * x) |> reduce(+, 0)", "fuse-map-reduce", ST_PRIM_MAP},
    {"dot product, f32", "def main(xs: [N]f32, ys: [N]f32) = zip(xs, ys) |> map((x, y) => x * y) |> reduce(+, 0.0)",
     "fuse-map-reduce", ST_PRIM_MAP},
    {"two maps into one reduce",
     "def main(xs: [N]i32) = xs |> map(x => x + 1) |> map(x => x * 2) |> reduce(max, " MIN_I32 ")",
     "fuse-map-reduce ; fuse-map-reduce", ST_PRIM_MAP},
    {"let form", "def main(xs: [N]i32) = let ys = xs |> map(x => x * x) in ys |> reduce(+, 0)", "fuse-map-reduce",
     ST_PRIM_MAP},
    /* fuse-scan-scan */
    {"two scans of one array",
     "def main(xs: [N]i32) = let a = xs |> scan(+, 0) in let b = xs |> scan(max, " MIN_I32 ") in (a, b)",
     "fuse-scan-scan", ST_PRIM_SCAN},
    {"scans of two arrays, zipped",
     "def main(xs: [N]i32, ys: [N]f32) = let a = xs |> scan(+, 0) in let b = ys |> scan(+, 0.0) in zip(a, b) |> map((p, q) => f32(p) + q)",
     "fuse-scan-scan", ST_PRIM_SCAN},
    {"a scanomap and a segmented scan",
     "def main(fs: [N]bool, vs: [N]i32) = let a = vs |> map(v => v * 2) |> scan(+, 0) in let b = zip(fs, vs) |> scan(" SEGMENTED ", (false, 0)) in (a, b)",
     "first(scan, fuse-map-scan) ; fuse-scan-scan", ST_PRIM_SCAN},
    /* fuse-scan-map */
    {"map of a scan", "def main(xs: [N]i32) = xs |> scan(+, 0) |> map(a => a * 2 + 1)", "fuse-scan-map", ST_PRIM_MAP},
    {"map of zip(xs, scan of xs)", "def main(xs: [N]i32) = zip(xs, xs |> scan(+, 0)) |> map((x, a) => a - x)",
     "fuse-scan-map", ST_PRIM_MAP},
    {"map of zip(scan of xs, xs)", "def main(xs: [N]i32) = zip(xs |> scan(+, 0), xs) |> map((a, x) => a - x)",
     "fuse-scan-map", ST_PRIM_MAP},
    {"map of zip(xs, scan of xs), f32", "def main(xs: [N]f32) = zip(xs, xs |> scan(+, 0.0)) |> map((x, a) => a - x)",
     "fuse-scan-map", ST_PRIM_MAP},
    {"map of a scanomap", "def main(xs: [N]i32) = xs |> map(x => x * 3) |> scan(+, 0) |> map(a => a - 1)",
     "first(scan, fuse-map-scan) ; fuse-scan-map", ST_PRIM_MAP},
    {"let form", "def main(xs: [N]i32) = let s = xs |> scan(+, 0) in s |> map(a => a * 2)", "fuse-scan-map",
     ST_PRIM_MAP},
    {"let form, zipped",
     "def main(xs: [N]i32) = let s = xs |> scan(max, " MIN_I32 ") in zip(xs, s) |> map((x, m) => m == x)",
     "fuse-scan-map", ST_PRIM_MAP},
    /* fuse-scan-scatter */
    {"scatter at a scan of the values", "def main(xs: [N]i32) = scatter(replicate(N, 0), xs |> scan(+, 0), xs)",
     "fuse-scan-scatter", ST_PRIM_COUNT},
    {"scatter at a scan with a post-function",
     "def main(xs: [N]i32) = scatter(replicate(N, 0), xs |> scan(+, 0) |> map(a => a % 5), xs)",
     "first(map, fuse-scan-map) ; fuse-scan-scatter", ST_PRIM_COUNT},
    {"let form", "def main(xs: [N]i32) = let o = xs |> scan(+, 0) in scatter(replicate(N, 0), o, xs)",
     "fuse-scan-scatter", ST_PRIM_COUNT},
    {"a filter in one pass", FILTER, FILTER_IN_ONE_PASS, ST_PRIM_COUNT},
    /* exscans (scans of their shifted inputs once exscans-as-scans made
     * them so), and arrays read beside a scan */
    {"exscan of a map", "def main(xs: [N]i32) = xs |> map(x => x * 3 - 1) |> exscan(+, 0)",
     "exscans-as-scans ; fuse-map-scan", ST_PRIM_MAP},
    {"map of an exscan", "def main(xs: [N]i32) = xs |> exscan(+, 0) |> map(a => a * 2 + 1)",
     "exscans-as-scans ; fuse-scan-map ; fuse-map-scan", ST_PRIM_MAP},
    {"map of zip(scan of xs, ys)",
     "def main(xs: [N]i32, ys: [N]f32) = zip(xs |> scan(+, 0), ys) |> map((a, y) => f32(a) * y)", "fuse-scan-map",
     ST_PRIM_MAP},
    {"scatter of ys at a scan of xs",
     "def main(xs: [N]i32, ys: [N]f32) = scatter(replicate(N, 0.0), xs |> map(x => i64(x % 7)) |> scan(max, 0i64), ys)",
     "fuse-scan-scatter", ST_PRIM_COUNT},
    {"the compaction of examples/exscan_scatter.strata",
     "def main(xs: [N]i32) =\n"
     "  let flags = xs |> map(x => if x > 0 then 1i64 else 0)\n"
     "  let offsets = flags |> exscan(+, 0)\n"
     "  let idx = zip(flags, offsets) |> map((f, o) => if f == 1 then o else -1)\n"
     "  in scatter(replicate(N, 0), idx, xs)",
     "exscans-as-scans ; try(each(any, try(fuse-scan-map))) ; try(each(any, try(fuse-scan-scatter)))", ST_PRIM_COUNT},
};
enum { NFUSION_CASES = sizeof FUSION_CASES / sizeof *FUSION_CASES };

static int scatters_of_pairs(const st_node *n) {
    int c = st_is_scatter(n) && n->nkids == 2;
    for (uint32_t i = 0; i < n->nkids; i++) c += scatters_of_pairs(n->kids[i]);
    return c;
}

/* The lengths a whole-program property runs on: those of the scan property
 * for a nominal BS of 16, rounded up to multiples of k. */
static int program_lengths(int64_t k, int64_t *out) {
    const scan_case nominal = {.multiple = k, .bs = 16};
    return lengths_for(&nominal, out);
}

/* src rewritten by strategy gives the same results on every length (as
 * same_results_noted), and prints and parses back; the rewritten def, or
 * NULL. */
static const st_def *rewrite_preserves(faults *f, const char *label, const char *src, const char *strategy,
                                       int64_t multiple, uint64_t seed, const st_def **before) {
    int64_t lengths[16];
    int n = program_lengths(multiple, lengths);
    const st_program *p = parse_noted(f, label, src);
    const st_def *d = p ? entry_of(p) : NULL, *now = d ? rewrite_noted(f, label, d, strategy) : NULL;
    if (!now) return NULL;
    same_results_noted(f, label, d, now, lengths, n, seed);
    const st_def *back = reparse_noted(f, label, p, d, now);
    if (back) same_results_noted(f, text_of("%s, parsed back", label), d, back, lengths, n < 4 ? n : 4, seed);
    *before = d;
    return now;
}

START_TEST(fusion_preserves_results) {
    const fusion_case *c = &FUSION_CASES[_i];
    faults f = {0};
    const char *label = text_of("%s: %s", c->strategy, c->what);
    const st_def *d = NULL;
    const st_def *now = rewrite_preserves(&f, label, c->src, c->strategy, 1, 77 + (uint64_t)_i, &d);
    if (now && c->fewer == ST_PRIM_COUNT) {
        if (scatters_of_pairs(now->body) != 1) fault(&f, "%s: no scatter of (index, value) pairs", label);
    } else if (now && count_prim(now->body, c->fewer) >= count_prim(d->body, c->fewer)) {
        fault(&f, "%s: as many %s nodes as before", label, st_prim_get(c->fewer)->name);
    }
    no_faults(&f);
}
END_TEST

/* Scan rules where scans sit in real programs: after a reduction of blocks
 * (a length N/4), inside a map (the rule's lets inside a lambda), two in a
 * row, with functions that capture parameters, over iota. */
typedef struct context_case {
    const char *what, *src, *strategy;
    int64_t multiple; /* the program's `where N % K == 0`; 1: none */
} context_case;

#define BLOCK_SUMS(k) \
    "def main(xs: [N]i32) where N % " #k " == 0 = xs |> split(4) |> map(r => r |> reduce(+, 0)) |> scan(+, 0)"
#define ROW_SCANS "def main(xs: [N]f32) where N % 8 == 0 = xs |> split(8) |> map(r => r |> scan(+, 0.0)) |> join"

static const context_case CONTEXT_CASES[] = {
    {"a scan of N/4 block sums", BLOCK_SUMS(64), "first(scan, scan-then-propagate(BS=16))", 64},
    {"a scan of N/4 block sums", BLOCK_SUMS(64), "first(scan, parallel-scan(BS=8, BF=2, TD=2))", 64},
    {"a scan of N/4 block sums, padded", BLOCK_SUMS(4), "first(scan, parallel-scan(BS=16, BF=2, TD=2))", 4},
    {"a length with a fact that BS does not follow from",
     "def main(xs: [N]i32) where N % 16 == 0 = xs |> scan(+, 0)", "parallel-scan(BS=32, BF=2, TD=2)", 16},
    {"a length with a fact that BS does not follow from",
     "def main(xs: [N]i32) where N % 2 == 0 = xs |> scan(+, 0)", "parallel-scan(BS=16, BF=4, SE=1)", 2},
    {"scans of rows of 8", ROW_SCANS, "first(scan, parallel-scan(BS=4, BF=2, TD=1))", 8},
    {"scans of rows of 8, padded to 9", ROW_SCANS, "first(scan, parallel-scan(BS=3, BF=3, TD=1))", 8},
    {"scans of rows of 8", ROW_SCANS, "first(scan, pad-scan(BS=3))", 8},
    {"scans of rows of 8, the full tree", ROW_SCANS, "first(scan, brent-kung(BF=2, TD=3))", 8},
    {"two scans in a row",
     "def main(xs: [N]i32) = let a = xs |> scan(+, 0) in let b = a |> scan(max, " MIN_I32 ") in (a, b)",
     "each(scan, parallel-scan(BS=4, BF=2, TD=1))", 1},
    {"a scan whose result is used twice",
     "def main(xs: [N]i32) = let s = xs |> scan(+, 0) in let t = s |> map(a => a * 2) in zip(s, t)",
     "first(scan, parallel-scan(BS=4, BF=2, TD=2))", 1},
    {"a post-function capturing a parameter", "def main(xs: [N]f32, k: f32) = xs |> scan(+, 0.0) |> map(a => a * k)",
     "fuse-scan-map ; parallel-scan(BS=16, BF=2, TD=2)", 1},
    {"a fold and a post-function capturing a parameter",
     "def main(xs: [N]i32, k: i32) = xs |> map(x => x * k) |> scan(+, 0) |> map(a => a + k)",
     "fuse-scan-map ; fuse-map-scan ; parallel-scan(BS=8, BF=2, SE=2)", 1},
    {"a scanomap over iota", "def main(xs: [N]i32) = iota(N) |> map(i => i * i) |> scan(+, 0i64)",
     "fuse-map-scan ; parallel-scan(BS=16, BF=4, TD=1)", 1},
};
enum { NCONTEXT_CASES = sizeof CONTEXT_CASES / sizeof *CONTEXT_CASES };

START_TEST(scan_rules_in_context_preserve_results) {
    const context_case *c = &CONTEXT_CASES[_i];
    faults f = {0};
    const st_def *d = NULL;
    rewrite_preserves(&f, text_of("%s: %s", c->strategy, c->what), c->src, c->strategy, c->multiple,
                      300 + (uint64_t)_i, &d);
    no_faults(&f);
}
END_TEST

/* The example programs: the scan rules wherever their scan is, and every
 * fusion rule anywhere it applies (refusing is fine there). */
START_TEST(examples_keep_their_results) {
    static const char *const scanned[] = {"prefix_sum", "advanced", "filter", "linear_recurrence", "exscan_scatter"};
    /* (exscans-as-scans: exscan_scatter's is an exscan) */
    static const char *const scan_rules[] = {
        "exscans-as-scans ; first(scan, parallel-scan(BS=16, BF=2, TD=2))",
        "exscans-as-scans ; first(scan, parallel-scan(BS=256, BF=2, SE=4))",
        "exscans-as-scans ; first(scan, pad-scan(BS=7))", "exscans-as-scans ; first(scan, sequential-scan)"};
    /* (not histogram: its H is a parameter used as a size, which random
     * inputs do not bind) */
    static const char *const all[] = {"prefix_sum", "advanced", "filter", "linear_recurrence", "dot", "block_sums",
                                      "exscan_scatter"};
    static const char *const fusions[] = {"fuse-map-map", "fuse-map-scan", "fuse-map-reduce", "fuse-scan-scan",
                                          "fuse-scan-map", "fuse-scan-scatter"};
    faults f = {0};
    for (size_t e = 0; e < sizeof scanned / sizeof *scanned; e++)
        for (size_t r = 0; r < sizeof scan_rules / sizeof *scan_rules; r++) {
            const st_def *d = NULL;
            rewrite_preserves(&f, text_of("%s on examples/%s", scan_rules[r], scanned[e]), example(scanned[e]),
                              scan_rules[r], 1, 40 + e, &d);
        }
    int64_t lengths[16];
    int n = program_lengths(1, lengths);
    for (size_t e = 0; e < sizeof all / sizeof *all; e++) {
        const st_program *p = parse_ok(cx, example(all[e]));
        const st_def *d = entry_of(p);
        for (size_t r = 0; r < sizeof fusions / sizeof *fusions; r++) {
            const char *strategy = text_of("topdown(%s)", fusions[r]);
            const char *label = text_of("%s on examples/%s", strategy, all[e]);
            st_err err = {0};
            st_rw *rw = st_rw_new(cx, reg);
            const st_def *now = st_rewrite_def(rw, st_strategy_parse(cx, reg, "strategy", strategy, &err), d, &err);
            st_rw_free(rw);
            if (!now) {
                if (err.kind != ST_ERR_USER) fault(&f, "%s: refused with an internal error: %s", label, err.message);
                continue;
            }
            same_results_noted(&f, label, d, now, lengths, n, 60 + r);
            reparse_noted(&f, label, p, d, now);
        }
    }
    no_faults(&f);
}
END_TEST

/* Fusing at `let v = producer in body` moves the producer into the body: a
 * name the body binds again must neither capture the producer's free
 * variables nor pass for v. Refusing is fine; a wrong program is not. */
START_TEST(fusion_respects_shadowing) {
    static const struct { const char *what, *src, *strategy; } cases[] = {
        /* k: f32 is not a size, so the parameter and the inner k are the same
         * variable node: only scoping tells them apart */
        {"the map's k is the parameter, not the inner k",
         "def main(xs: [N]f32, k: f32) = let ys = xs |> map(x => x + k) in let k = 100.0 in ys |> scan(+, 0.0)",
         "fuse-map-scan"},
        {"the map's k is the parameter, not the inner k",
         "def main(xs: [N]f32, k: f32) = let ys = xs |> map(x => x + k) in let k = 100.0 in ys |> map(y => y * k)",
         "fuse-map-map"},
        {"the map's k is the parameter, not the inner k",
         "def main(xs: [N]f32, k: f32) = let ys = xs |> map(x => x * k) in let k = 100.0 in ys |> reduce(+, 0.0)",
         "fuse-map-reduce"},
        {"the scan's k is the parameter, not the inner k",
         "def main(xs: [N]f32, k: f32) = let s = xs |> scan(+, (acc, x) => acc + x * k, 0.0) in let k = 100.0 in s |> map(a => a - k)",
         "fuse-scan-map"},
        {"the scan's k is the outer one, not the inner k",
         "def main(xs: [N]i32) = let k = xs |> reduce(max, " MIN_I32 ") in let o = xs |> scan(+, (acc, x) => acc + x * k, 0) in let k = xs |> reduce(min, 2147483647) in scatter(replicate(N, 0), o, xs)",
         "fuse-scan-scatter"},
        /* k: i32 may be a size, so here the two k differ in the IR, but the
         * printed program cannot tell them apart */
        {"the map's k is the parameter, not the inner k, when printed",
         "def main(xs: [N]i32, k: i32) = let ys = xs |> map(x => x + k) in let k = 5 in ys |> scan(+, 0)",
         "fuse-map-scan"},
        {"the scan reads the inner ys, which is not the map",
         "def main(xs: [N]i32) = let ys = xs |> map(x => x + 1) in let ys = ys |> map(y => y * 2) in ys |> scan(+, 0)",
         "fuse-map-scan"},
        {"the reduce reads the inner ys, which is not the map",
         "def main(xs: [N]i32) = let ys = xs |> map(x => x + 1) in let ys = ys |> map(y => y * 2) in ys |> reduce(+, 0)",
         "fuse-map-reduce"},
        {"the map reads the inner s, which is not the scan",
         "def main(xs: [N]i32) = let s = xs |> scan(+, 0) in let s = s |> map(a => a * 2) in s |> map(a => a + 1)",
         "fuse-scan-map"},
    };
    faults f = {0};
    int64_t lengths[16];
    int n = program_lengths(1, lengths);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *label = text_of("%s: %s", cases[i].strategy, cases[i].what);
        const st_program *p = parse_ok(cx, cases[i].src);
        const st_def *d = entry_of(p);
        st_err err = {0};
        const st_strategy *s = st_strategy_parse(cx, reg, "strategy", cases[i].strategy, &err);
        ck_assert_msg(s != NULL, "%s", err.message);
        st_rw *rw = st_rw_new(cx, reg);
        const st_def *now = st_rewrite_def(rw, s, d, &err);
        st_rw_free(rw);
        if (!now) {
            if (err.kind != ST_ERR_USER) fault(&f, "%s: refused with an internal error: %s", label, err.message);
            continue;
        }
        same_results_noted(&f, label, d, now, lengths, n, 900 + i);
        reparse_noted(&f, label, p, d, now);
    }
    no_faults(&f);
}
END_TEST

/* st_def_canonical: a program's binders named by their place in it, so two
 * rewrites of one program in one context (whose fresh names differ) become
 * one def; renaming keeps every result, shadowing included, and prints back. */
START_TEST(canonical_names_depend_on_the_program_alone) {
    faults f = {0};
    int64_t lengths[16];
    int n = program_lengths(1, lengths);
    static const struct { const char *src, *strategy; } cases[] = {
        {"def main(xs: [N]f32): [N]f32 = xs |> scan(+, 0.0)", "parallel-scan(BS=64, BF=2, SE=4)"},
        {"def main(xs: [N]i32) = let ys = xs |> map(x => x + 1) in let ys = ys |> map(y => y * 2) in ys |> scan(+, 0)",
         "first(scan, parallel-scan(BS=16, BF=2, TD=2))"},
        /* a user's names that look fresh, and one like a parameter's */
        {"def main(xs: [N]i32): [N]i32 = let xs_1 = xs |> map(v => v + 1) in xs_1 |> map(xs_2 => xs_2 * 2) |> scan(+, 0)",
         "first(scan, pad-scan(BS=8)) ; first(scan, scan-then-propagate(BS=8))"},
        /* the inner k is the parameter's node, bound again */
        {"def main(xs: [N]f32, k: f32) = let ys = xs |> map(x => x + k) in let k = 100.0 in ys |> map(y => y * k)",
         "id"},
        {"def main(xs: [N]i32, k: i32) = xs |> map(x => iota(4) |> map(j => x * i32(j) + k) |> reduce(+, 0)) |> scan(+, 0)",
         "first(scan, parallel-scan(BS=8, BF=2, SE=2))"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *label = text_of("canonical names of `%s` under %s", cases[i].src, cases[i].strategy);
        const st_program *p = parse_ok(cx, cases[i].src);
        const st_def *d = entry_of(p);
        const st_def *one = rewrite_noted(&f, label, d, cases[i].strategy);
        const st_def *two = rewrite_noted(&f, label, d, cases[i].strategy); /* fresh names again */
        if (!one || !two) continue;
        st_err err = {0};
        const st_def *c1 = st_def_canonical(cx, one, &err), *c2 = st_def_canonical(cx, two, &err);
        ck_assert_msg(c1 && c2, "%s: %s", label, err.message);
        if (c1->body != c2->body) fault(&f, "%s: two rewrites of one program have other canonical names", label);
        if (st_def_canonical(cx, c1, &err)->body != c1->body) fault(&f, "%s: not idempotent", label);
        same_results_noted(&f, label, d, c1, lengths, n, 700 + i);
        reparse_noted(&f, label, p, d, c1);
    }
    /* the names themselves: the first of a base keeps it, none takes a parameter's */
    const st_def *d = entry_of(parse_ok(cx, cases[2].src));
    st_err err = {0};
    const st_def *c = st_def_canonical(cx, d, &err);
    st_buf b = {0};
    st_print_def(c, &b);
    ck_assert_has(b.data, "let xs_2 = xs |> map(v => v + 1)");
    ck_assert_has(b.data, "xs_2 |> map(xs_3 => xs_3 * 2)");
    st_buf_free(&b);
    no_faults(&f);
}
END_TEST

/* Fusion, then the scan rules: the scan left in the one-pass filter (a fold,
 * and a post-function making the scatter's pairs) is one the scan rules
 * still take, wherever it sits. */
START_TEST(fusion_composes_with_scan_rules) {
    static const int64_t lengths[] = {0, 1, 7, 16, 17, 1000};
    static const char *const strategies[] = {
        FILTER_IN_ONE_PASS " ; first(scan, parallel-scan(BS=4, BF=2, TD=1))",
        "first(scan, fuse-map-scan) ; first(map, fuse-scan-map) ; first(scan, parallel-scan(BS=8, BF=2, SE=2))",
        "first(scan, fuse-map-scan) ; first(scan, pad-scan(BS=4)) ; first(scan, sequential-scan)",
    };
    faults f = {0};
    const st_program *p = parse_ok(cx, FILTER);
    const st_def *d = entry_of(p);
    for (size_t i = 0; i < sizeof strategies / sizeof *strategies; i++) {
        const st_def *now = rewrite_noted(&f, strategies[i], d, strategies[i]);
        if (!now) continue;
        same_results_noted(&f, strategies[i], d, now, lengths, 6, 5 + i);
        reparse_noted(&f, strategies[i], p, d, now);
    }
    no_faults(&f);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Results worked out by hand                                               */
/* ------------------------------------------------------------------------ */

START_TEST(scan_then_propagate_by_hand) {
    const st_def *d = entry_of(parse_ok(cx, "def main(xs: [N]i32) where N % 4 == 0 = xs |> scan(+, 0)"));
    const st_def *now = rewrite_ok(d, "scan-then-propagate(BS=4)");
    st_value r = eval_def(now, (st_value[]){I32S(1, 2, 3, 4, 5, 6, 7, 8)}, 8);
    WANT_I32(r, 0, 1, 3, 6, 10, 15, 21, 28, 36);
    /* blocks [5 -1 2 0] [3 3 -4 1]: the second starts from 6, not from 0 */
    r = eval_def(now, (st_value[]){I32S(5, -1, 2, 0, 3, 3, -4, 1)}, 8);
    WANT_I32(r, 0, 5, 4, 6, 6, 9, 12, 8, 9);
}
END_TEST

/* x[i] = a[i]·x[i−1] + b[i] from x[−1] = 0; with as = 2 3 1 2 −1 and
 * bs = 1 1 5 0 3: x = 1, 4, 9, 18, −15; the products of the a's 2, 6, 6, 12,
 * −12. Composing the affine maps in the other order would give other x. */
START_TEST(affine_recurrence_keeps_its_order_by_hand) {
    const char *src = "def main(as: [N]i32, bs: [N]i32) = zip(as, bs) |> scan(" AFFINE ", (1, 0))";
    static const char *const strategies[] = {"parallel-scan(BS=2, BF=2, TD=1)", "parallel-scan(BS=4, BF=2, TD=2)",
                                             "pad-scan(BS=4)", "sequential-scan", "parallel-scan(BS=8, BF=2, SE=2)"};
    const st_def *d = entry_of(parse_ok(cx, src));
    st_value args[] = {I32S(2, 3, 1, 2, -1), I32S(1, 1, 5, 0, 3)};
    for (size_t i = 0; i < sizeof strategies / sizeof *strategies; i++) {
        st_value r = eval_def(rewrite_ok(d, strategies[i]), args, 5);
        WANT_I32(r, 0, 2, 6, 6, 12, -12);
        WANT_I32(r, 1, 1, 4, 9, 18, -15);
    }
    /* the full tree on 4 elements */
    const st_def *four =
        entry_of(parse_ok(cx, "def main(as: [4]i32, bs: [4]i32) = zip(as, bs) |> scan(" AFFINE ", (1, 0))"));
    st_value r =
        eval_def(rewrite_ok(four, "brent-kung(BF=2, TD=2)"), (st_value[]){I32S(2, 3, 1, 2), I32S(1, 1, 5, 0)}, 4);
    WANT_I32(r, 1, 1, 4, 9, 18);
}
END_TEST

/* Segments start at a true flag: values 1 2 | 3 4 | 5 6 with flags at 2 and
 * 4 sum to 1 3 | 3 7 | 5 11, and the flag stays set once seen. */
START_TEST(segmented_scan_by_hand) {
    const char *src = "def main(fs: [N]bool, vs: [N]i32) = zip(fs, vs) |> scan(" SEGMENTED ", (false, 0))";
    const st_def *d = entry_of(parse_ok(cx, src));
    static const char *const strategies[] = {"parallel-scan(BS=4, BF=2, TD=1)", "parallel-scan(BS=2, BF=2, TD=1)",
                                             "pad-scan(BS=4)"};
    st_value args[] = {BOOLS(false, false, true, false, true, false), I32S(1, 2, 3, 4, 5, 6)};
    for (size_t i = 0; i < sizeof strategies / sizeof *strategies; i++) {
        st_value r = eval_def(rewrite_ok(d, strategies[i]), args, 6);
        WANT_BOOL(r, 0, false, false, true, true, true, true);
        WANT_I32(r, 1, 1, 3, 3, 7, 5, 11);
    }
}
END_TEST

/* map((x, a) => a − x) over zip(xs, scan) is the exclusive scan */
START_TEST(exclusive_scan_by_hand) {
    const st_def *d =
        entry_of(parse_ok(cx, "def main(xs: [N]i32) = zip(xs, xs |> scan(+, 0)) |> map((x, a) => a - x)"));
    const st_def *now = rewrite_ok(d, "fuse-scan-map ; parallel-scan(BS=4, BF=2, TD=2)");
    st_value r = eval_def(now, (st_value[]){I32S(3, 1, 4, 1, 5)}, 5);
    WANT_I32(r, 0, 0, 3, 4, 8, 9);
}
END_TEST

START_TEST(max_scan_pads_with_its_neutral_element_by_hand) {
    const st_def *d = entry_of(parse_ok(cx, "def main(xs: [N]i32) = xs |> scan(max, " MIN_I32 ")"));
    /* every element negative: padding with 0 instead of the neutral element would show */
    st_value r = eval_def(rewrite_ok(d, "parallel-scan(BS=4, BF=2, TD=1)"), (st_value[]){I32S(-9, -3, -7, -5, -1)}, 5);
    WANT_I32(r, 0, -9, -3, -3, -3, -1);
    r = eval_def(rewrite_ok(d, "pad-scan(BS=8)"), (st_value[]){I32S(-9, -3, -7)}, 3);
    WANT_I32(r, 0, -9, -3, -3);
}
END_TEST

/* The one-pass filter keeps the positive elements in order, then zeros. */
START_TEST(filter_in_one_pass_by_hand) {
    const st_def *now = rewrite_ok(entry_of(parse_ok(cx, FILTER)), FILTER_IN_ONE_PASS);
    ck_assert_int_eq(count_prim(now->body, ST_PRIM_MAP), 0);
    st_value r = eval_def(now, (st_value[]){I32S(3, -1, 4, 0, -5, 9, 2)}, 7);
    WANT_I32(r, 0, 3, 4, 9, 2, 0, 0, 0);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Listing 8: parallel-scan(BS=16, BF=2, TD=2)                              */
/* ------------------------------------------------------------------------ */

/* Inside the lambda that scans one block of 16: two upsweep layers (reduces
 * of pairs, over 8 and then 4 groups), a sequential middle (a scanSeq of 4
 * elements, not inside any map), two downsweep layers (scanSeq of pairs in
 * maps over 4 and then 8 groups), and no scan at all. */
static void check_listing_8(const st_def *now) {
    const st_type *block = st_type_array(cx, st_size_const(cx, 16), st_type_scalar(cx, ST_F32));
    const st_node *lam = find_lambda(now->body, block, ST_PRIM_SPLIT);
    ck_assert_msg(lam != NULL, "no lambda over a block of 16 that splits it");
    const st_node *body = st_lambda_body(lam);
    ck_assert_msg(body->type == block, "a block's scan is 16 elements");
    ck_assert_int_eq(count_prim(body, ST_PRIM_SCAN), 0);

    survey splits = survey_of(body, ST_PRIM_SPLIT);
    ck_assert_int_eq(splits.n, 2);
    ck_assert_int_eq(sites(&splits, 0, 16), 1);
    ck_assert_int_eq(sites(&splits, 0, 8), 1);
    for (int i = 0; i < splits.n; i++) {
        int64_t chunk = 0;
        const st_type *t = splits.at[i].node->type->elem;
        ck_assert(t->kind == ST_TYPE_ARRAY && st_size_is_const(t->size, &chunk) && chunk == 2);
    }

    survey reduces = survey_of(body, ST_PRIM_REDUCE);
    ck_assert_int_eq(reduces.n, 2);
    ck_assert_int_eq(sites(&reduces, 1, 2), 2); /* pairs, inside a map */

    survey seqs = survey_of(body, ST_PRIM_SCAN_SEQ);
    ck_assert_int_eq(seqs.n, 3);
    ck_assert_int_eq(sites(&seqs, 0, 4), 1); /* the sequential middle: SE = 16 / 2^2 */
    ck_assert_int_eq(sites(&seqs, 1, 2), 2); /* the downsweep, per pair */

    /* the maps at the block's level: upsweep over 8 and 4 groups, downsweep
     * over 4 and 8 */
    survey maps = survey_of(body, ST_PRIM_MAP);
    int up8 = 0, up4 = 0, down4 = 0, down8 = 0;
    for (int i = 0; i < maps.n; i++) {
        if (maps.at[i].depth != 0) continue;
        const st_node *fn = maps.at[i].node->kids[0];
        bool up = count_prim(fn, ST_PRIM_REDUCE) > 0, down = count_prim(fn, ST_PRIM_SCAN_SEQ) > 0;
        up8 += up && maps.at[i].len == 8;
        up4 += up && maps.at[i].len == 4;
        down4 += down && maps.at[i].len == 4;
        down8 += down && maps.at[i].len == 8;
    }
    ck_assert_msg(up8 == 1 && up4 == 1 && down4 == 1 && down8 == 1,
                  "upsweep over 8 and 4 groups, downsweep over 4 and 8: got %d %d %d %d", up8, up4, down4, down8);

    /* outside the blocks, one scan: of the last level's block totals (the
     * levels below the first, four in all for BS = 16, are the same trees
     * over the totals); and no reduction but the trees' upsweeps: a block's
     * total is the last element of its scan, not a second pass over it */
    ck_assert_int_eq(count_prim(now->body, ST_PRIM_SCAN), 1);
    ck_assert_int_eq(count_prim(now->body, ST_PRIM_SCAN_SEQ), 4 * 3);
    ck_assert_int_eq(count_prim(now->body, ST_PRIM_REDUCE), 4 * 2);
}

START_TEST(parallel_scan_has_the_structure_of_listing_8) {
    const char *with_fact = "def main(xs: [N]f32): [N]f32 where N % 16 == 0 = xs |> scan(+, 0.0)";
    const char *any = "def main(xs: [N]f32): [N]f32 = xs |> scan(+, 0.0)";
    const st_def *d = entry_of(parse_ok(cx, with_fact));
    const st_def *now = rewrite_ok(d, "parallel-scan(BS=16, BF=2, TD=2)");
    check_listing_8(now);
    /* padded first when 16 may not divide N, the same blocks */
    check_listing_8(rewrite_ok(entry_of(parse_ok(cx, any)), "parallel-scan(BS=16, BF=2, TD=2)"));
    /* and the prefix sums, exact on small integers */
    float xs[32], want[32];
    for (int i = 0; i < 32; i++) xs[i] = (float)(i + 1), want[i] = (float)((i + 1) * (i + 2) / 2);
    st_value r = eval_def(now, (st_value[]){arr(ST_F32, xs, 32)}, 32);
    want_leaf(&r, 0, ST_F32, want, 32);
}
END_TEST

/* The scan of n/BS block totals is parallel-scan's again, level under
 * level, so what stays one work-item's sequential scan is at most about
 * n/65536 elements (on a GPU one work-item walking n/BS totals was the whole
 * time: 316 ms at 2^28 / 32, a copy 0.5 ms); and the nested program keeps
 * the result, at a prime length above 10^6 too. */
START_TEST(parallel_scan_nests_on_the_block_totals) {
    static const struct {
        const char *strategy;
        int64_t reach; /* BS^levels */
    } cases[] = {
        {"parallel-scan(BS=32, BF=2, SE=16)", 32LL * 32 * 32 * 32},
        {"parallel-scan(BS=256, BF=2, SE=4)", 256LL * 256},
        {"parallel-scan(BS=512, BF=2, SE=1)", 512LL * 512},
    };
    const st_def *d = entry_of(parse_ok(cx, "def main(xs: [N]i32): [N]i32 = xs |> scan(+, 0)"));
    const st_binding sizes[] = {{st_intern_cstr(cx, "N"), 1LL << 28}, {st_intern_cstr(cx, "N"), 1000003}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const st_def *now = rewrite_ok(d, cases[c].strategy);
        survey scans = survey_of(now->body, ST_PRIM_SCAN);
        ck_assert_msg(scans.n == 1, "%s: %d scans left", cases[c].strategy, scans.n);
        const st_size *left = scans.at[0].node->kids[scans.at[0].node->nkids - 1]->type->size;
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
            int64_t n = sizes[k].value, len = -1;
            st_err err = {0};
            ck_assert_msg(st_size_eval(left, &sizes[k], 1, &len, &err), "%s", err.message);
            /* ⌈n / reach⌉, give or take the padding of each level */
            ck_assert_msg(len <= n / cases[c].reach + 4, "%s: %lld elements left to one work-item at N = %lld",
                          cases[c].strategy, (long long)len, (long long)n);
        }
        faults f = {0};
        const int64_t lengths[] = {0, 1, 7, 1000, 1000003};
        same_results_noted(&f, cases[c].strategy, d, now, lengths, 5, 7 + c);
        no_faults(&f);
    }
}
END_TEST

/* scan-then-propagate reads the input once: the block totals are the last
 * elements of the block scans, no reduction over the blocks again. */
START_TEST(scan_then_propagate_takes_totals_from_the_block_scans) {
    const st_def *d = entry_of(parse_ok(cx, "def main(xs: [N]i32) where N % 64 == 0 = xs |> scan(+, 0)"));
    const st_def *now = rewrite_ok(d, "scan-then-propagate(BS=64)");
    ck_assert_int_eq(count_prim(now->body, ST_PRIM_REDUCE), 0);
    ck_assert_int_eq(count_prim(now->body, ST_PRIM_SCAN), 2);
}
END_TEST

/* The rewrite of src by strategy, printed, in a fresh context: fresh names
 * depend only on what the context saw, so two strategies that build the same
 * program print the same text. */
static char *printed_in_fresh_context(const char *src, const char *strategy) {
    st_ctx *saved = cx;
    cx = st_ctx_new();
    ck_assert(cx != NULL);
    st_buf b = {0};
    st_print_def(rewrite_ok(entry_of(parse_ok(cx, src)), strategy), &b);
    st_ctx_free(cx);
    cx = saved;
    return b.data;
}

START_TEST(se_and_td_give_the_same_program) {
    static const char *const pairs[][2] = {
        {"parallel-scan(BS=16, BF=2, TD=2)", "parallel-scan(BS=16, BF=2, SE=4)"},
        {"parallel-scan(BS=256, BF=2, TD=6)", "parallel-scan(BS=256, BF=2, SE=4)"},
        {"parallel-scan(BS=32, BF=4, TD=2)", "parallel-scan(BS=32, BF=4, SE=2)"},
        {"parallel-scan(BS=8, BF=2, TD=3)", "parallel-scan(BS=8, BF=2, SE=1)"},
        {"parallel-scan(BS=8, BF=2, TD=0)", "parallel-scan(BS=8, BF=2, SE=8)"},
    };
    const char *src = "def main(xs: [N]f32): [N]f32 = xs |> scan(+, 0.0)";
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        char *a = printed_in_fresh_context(src, pairs[i][0]), *b = printed_in_fresh_context(src, pairs[i][1]);
        ck_assert_msg(a && b && !strcmp(a, b), "%s and %s differ:\n%s\n---\n%s", pairs[i][0], pairs[i][1], a, b);
        free(a);
        free(b);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Conditions                                                               */
/* ------------------------------------------------------------------------ */

START_TEST(bad_parameters_are_refused_when_parsed) {
    /* ranges: at the offending value */
    strategy_refused("scan-then-propagate(BS=0)", "BS = 0 is out of range", 24);
    strategy_refused("scan-then-propagate(BS=-4)", "BS = -4 is out of range", 24);
    strategy_refused("pad-scan(BS=0)", "BS = 0 is out of range", 13);
    strategy_refused("pad-scan(BS=-16)", "out of range", 13);
    strategy_refused("parallel-scan(BS=0, BF=2, TD=1)", "BS = 0 is out of range", 18);
    strategy_refused("parallel-scan(BS=-16, BF=2, TD=1)", "BS = -16 is out of range", 18);
    strategy_refused("brent-kung-step(BF=1)", "BF = 1 is out of range", 20);
    strategy_refused("brent-kung(BF=1, TD=2)", "BF = 1 is out of range", 15);
    strategy_refused("parallel-scan(BS=16, BF=1, TD=2)", "BF = 1 is out of range", 25);
    strategy_refused("brent-kung(BF=2, TD=-1)", "TD = -1 is out of range", 21);
    strategy_refused("parallel-scan(BS=16, BF=2, SE=0)", "SE = 0 is out of range", 0);
    /* the rules' own conditions: named as they are written */
    strategy_refused("parallel-scan(BS=12, BF=8, TD=1)", "BS % BF == 0 does not hold", 1);
    strategy_refused("parallel-scan(BS=16, BF=3, SE=4)", "BS % BF == 0", 1);
    strategy_refused("parallel-scan(BS=16, BF=2, TD=5)", "TD = 5 goes beyond the tree", 1);
    strategy_refused("parallel-scan(BS=48, BF=4, TD=3)", "4^3 does not divide BS = 48", 1);
    strategy_refused("parallel-scan(BS=16, BF=2, SE=3)", "SE must divide BS", 1);
    strategy_refused("parallel-scan(BS=16, BF=2, SE=32)", "SE must divide BS", 1);
    strategy_refused("parallel-scan(BS=24, BF=2, SE=8)", "BS / SE = 3 is not a power of BF = 2", 1);
    strategy_refused("parallel-scan(BS=16, BF=2)", "one of them", 1);
    strategy_refused("parallel-scan(BS=16, BF=2, TD=2, SE=4)", "one of them", 1);
    strategy_refused("brent-kung(BF=1024, TD=62)", "overflows", 1);
    strategy_refused("brent-kung(BF=3, TD=40)", "overflows", 1);
    strategy_refused("parallel-scan(BS=1024, BF=1024, TD=7)", "TD = 7 goes beyond the tree", 1);
    strategy_refused("scan-then-propagate", "needs its parameter BS", 1);
}
END_TEST

START_TEST(conditions_on_lengths_are_refused_when_rewriting) {
    /* TD beyond the tree of the scan's length */
    refused_because("def main(xs: [16]i32) = xs |> scan(+, 0)", "brent-kung(BF=2, TD=5)",
                    "TD = 5 goes beyond the tree: BF^TD = 2^5 does not divide the scan's length 16");
    refused_because("def main(xs: [N]i32) where N % 8 == 0 = xs |> scan(+, 0)", "brent-kung(BF=2, TD=4)",
                    "2^4 does not divide the scan's length");
    refused_because("def main(xs: [N]i32) where N % 12 == 0 = xs |> scan(+, 0)", "brent-kung(BF=3, TD=2)",
                    "3^2 does not divide");
    /* pad-scan has nothing to pad */
    refused_because("def main(xs: [N]i32) where N % 16 == 0 = xs |> scan(+, 0)", "pad-scan(BS=16)", "nothing to pad");
    refused_because("def main(xs: [N]i32) = xs |> scan(+, 0)", "pad-scan(BS=1)", "nothing to pad");
    refused_because("def main(xs: [32]i32) = xs |> scan(+, 0)", "pad-scan(BS=8)", "nothing to pad");
    /* a rule at something that is not a scan says so (a mismatch) */
    st_err err = refusal(entry_of(parse_ok(cx, "def main(xs: [N]i32) = xs |> map(x => x + 1)")),
                         "parallel-scan(BS=16, BF=2, TD=2)");
    ck_assert_has(err.message, "rewrites a scan");
    /* a scanTotal's scan: a rule that makes it something else is refused
     * there, as the user's (these were internal errors, exit 2); the
     * composite at the top sees scanTotal, no scan (its scan was hidden
     * behind a variable, and scanTotal of a variable failed to build) */
    refused_because("def main(xs: [N]i32): i32 = scanTotal(xs |> scan(+, 0))", "first(scan, parallel-scan(BS=64, BF=2, SE=2))",
                    "a rewrite made something scanTotal cannot take");
    err = refusal(entry_of(parse_ok(cx, "def main(xs: [N]i32): i32 = scanTotal(xs |> scan(+, 0))")),
                  "lookback(M=64, WG=1, LOAD=direct)");
    ck_assert_has(err.message, "lookback rewrites a scan");
}
END_TEST

/* The default strategies leave a scanTotal's scan inside a map as it is
 * (each scan's parallel-scan there is refused by scanTotal), and the rest
 * still runs: it was an internal error. */
START_TEST(a_scan_total_inside_a_map_keeps_its_scan) {
    const char *src = "def main(xs: [N]i32): [N]i32 =\n  let s = scan(+, 0, xs) in map(x => x * scanTotal(scan(+, 0, xs)), s)\n";
    faults f = {0};
    const st_def *before;
    for (int gpu = 0; gpu < 2; gpu++)
        rewrite_preserves(&f, gpu ? "the GPU default" : "the CPU default", src, st_default_strategy(gpu ? "GPU" : "CPU"), 1,
                          5, &before);
    no_faults(&f);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Fusion hindrances                                                        */
/* ------------------------------------------------------------------------ */

START_TEST(producer_used_twice_is_not_fused) {
    /* a filter that also counts: flags feeds both the scan and the reduce,
     * and each flag costs a loop (a cheap map fuses into each consumer:
     * the filter-rules suite) */
    const char *filter = "def main(xs: [N]i32) =\n"
                         "  let flags = xs |> map(x => if (loop a = x for i < 3 do a * 2) > 0 then 1i64 else 0)\n"
                         "  let offsets = flags |> scan(+, 0)\n"
                         "  let idx = zip(xs, offsets) |> map((x, o) => if x > 0 then o - 1 else -1)\n"
                         "  in (scatter(replicate(N, 0), idx, xs), flags |> reduce(+, 0))";
    refused_because(filter, "first(let, fuse-map-scan)", "`flags` is used 2 times");
    refused_because(filter, "first(let, fuse-map-reduce)", "`flags` is used 2 times");
    refused_because("def main(xs: [N]i32) = let ys = xs |> map(x => loop a = x for i < 3 do a + 1) in "
                    "(ys |> map(y => y * 2), ys |> map(y => y * 3))",
                    "fuse-map-map", "`ys` is used 2 times");
    refused_because("def main(xs: [N]i32) = let ys = xs |> map(x => x + 1) in (ys, ys |> scan(+, 0))", "fuse-map-scan",
                    "`ys` is used 2 times");
    refused_because("def main(xs: [N]i32) = let ys = xs |> map(x => x + 1) in (ys |> reduce(+, 0), ys)",
                    "fuse-map-reduce", "`ys` is used 2 times");
    refused_because("def main(xs: [N]i32) = let s = xs |> scan(+, 0) in (s |> map(a => a * 2), s)", "fuse-scan-map",
                    "`s` is used 2 times");
    refused_because("def main(xs: [N]i32) = let o = xs |> scan(+, 0) in (scatter(replicate(N, 0), o, xs), o)",
                    "fuse-scan-scatter", "`o` is used 2 times");
}
END_TEST

START_TEST(producer_used_inside_a_lambda_is_not_fused) {
    refused_because("def main(xs: [N]i32) = let ys = xs |> map(x => x + 1) in "
                    "iota(N) |> map(i => ys |> map(y => y * 2) |> get(i))",
                    "fuse-map-map", "`ys` is used inside a lambda");
    refused_because("def main(xs: [N]i32) = let ys = xs |> map(x => x + 1) in "
                    "iota(N) |> map(i => ys |> scan(+, 0) |> get(i))",
                    "fuse-map-scan", "`ys` is used inside a lambda");
    refused_because("def main(xs: [N]i32) = let ys = xs |> map(x => x + 1) in iota(N) |> map(i => ys |> reduce(+, 0))",
                    "fuse-map-reduce", "`ys` is used inside a lambda");
    refused_because("def main(xs: [N]i32) = let s = xs |> scan(+, 0) in "
                    "iota(N) |> map(i => s |> map(a => a * 2) |> get(i))",
                    "fuse-scan-map", "`s` is used inside a lambda");
    refused_because("def main(xs: [N]i32) = let o = xs |> scan(+, 0) in "
                    "iota(3) |> map(i => scatter(replicate(N, 0), o, xs))",
                    "fuse-scan-scatter", "`o` is used inside a lambda");
}
END_TEST

/* examples/advanced.strata: the map's outputs bs and cs feed the scan (through
 * zip) and are results of their own, so fusing the map into the scan would
 * compute them twice or keep them anyway. The refusal must say that, naming
 * them, whichever way the user points the rule at the program. */
START_TEST(producer_used_outside_its_consumer_is_not_fused) {
    const st_def *d = entry_of(parse_ok(cx, example("advanced")));
    static const char *const strategies[] = {"first(let, fuse-map-scan)", "topdown(fuse-map-scan)"};
    for (size_t i = 0; i < sizeof strategies / sizeof *strategies; i++) {
        st_err err = refusal(d, strategies[i]);
        ck_assert_msg((strstr(err.message, "`bs`") || strstr(err.message, "`cs`")) && strstr(err.message, "used"),
                      "%s on advanced.strata: the refusal should say that bs and cs are used outside the scan: \"%s\"",
                      strategies[i], err.message);
    }
}
END_TEST

START_TEST(dependent_scans_are_not_fused_side_by_side) {
    refused_because("def main(xs: [N]i32) = let a = xs |> scan(+, 0) in let b = a |> scan(+, 0) in (a, b)",
                    "fuse-scan-scan", "the second scan reads `a`");
    refused_because("def main(xs: [N]i32) = let a = xs |> scan(+, 0) in "
                    "let b = xs |> map(x => x + get(0, a)) |> scan(+, 0) in (a, b)",
                    "fuse-scan-scan", "reads `a`");
    refused_because("def main(xs: [N]i32, ys: [M]i32) = let a = xs |> scan(+, 0) in let b = ys |> scan(+, 0) in (a, b)",
                    "fuse-scan-scan", "different lengths");
}
END_TEST

START_TEST(map_read_by_a_post_function_is_not_fused) {
    /* the post-function reads the mapped element, a loop each: fusing the
     * map into the fold would compute it twice per element */
    refused_because("def main(xs: [N]i32) = "
                    "xs |> map(x => loop a = x for i < 3 do a * 2) |> scan(+, +, (acc, y) => acc - y, 0)",
                    "fuse-map-scan", "the scan's post-function reads the mapped elements");
    /* a cheap one is computed again: what an exscan's flags do */
    const char *cheap = "def main(xs: [N]i32) = "
                        "zip(xs |> map(x => x * 3), xs |> map(x => x * 3) |> scan(+, 0)) |> map((y, a) => a - y)";
    const st_def *before = entry_of(parse_ok(cx, cheap)), *after = rewrite_ok(before, "fuse-scan-map ; fuse-map-scan");
    ck_assert_msg(count_prim(after->body, ST_PRIM_MAP) == 0, "the cheap map is not fused");
    faults f = {0};
    static const int64_t lengths[] = {0, 1, 7, 1009};
    same_results_noted(&f, "a cheap map read by a post-function", before, after, lengths, 4, 7);
    no_faults(&f);
}
END_TEST


/* ------------------------------------------------------------------------ */
/* Composites act where they are applied                                    */
/* ------------------------------------------------------------------------ */

/* A composite applied to one scan rewrites that scan and what it builds,
 * never a scan inside its input: the inner scan of a scan of a scan stays
 * whole, whatever the length (padded or not) and however the composite is
 * reached. The input is let-bound once where the composite reads it inside
 * a lambda (the padding), so it is not recomputed per element. */
START_TEST(a_composite_acts_on_the_node_it_is_applied_to) {
    static const char *const strategies[] = {
        "parallel-scan(BS=64, BF=2, SE=4)", "first(scan, parallel-scan(BS=16, BF=2, TD=2))",
        "brent-kung(BF=2, TD=2)", "parallel-scan(BS=4, BF=2, TD=1)"};
    static const char *const sources[] = {
        "def main(xs: [N]i32) = xs |> scan(+, 0) |> scan(+, 0)",
        "def main(xs: [N]i32) where N % 64 == 0 = xs |> scan(+, 0) |> scan(+, 0)",
        "def main(xs: [N]i32, ys: [N]i32) where N % 64 == 0 = "
        "zip(xs |> scan(+, 0), ys |> map(y => y * 3)) |> map((a, b) => a - b) |> scan(+, 0)"};
    const int64_t any_length[] = {1, 7, 64, 1000, 4099}, multiples[] = {64, 128, 1024, 4096};
    faults f = {0};
    for (size_t i = 0; i < sizeof strategies / sizeof *strategies; i++)
        for (size_t j = 0; j < sizeof sources / sizeof *sources; j++) {
            const char *label = text_of("`%s` on `%s`", strategies[i], sources[j]);
            const st_def *d = entry_of(parse_ok(cx, sources[j]));
            bool tree_only = !strncmp(strategies[i], "brent-kung", 10);
            if (tree_only && j == 0) continue; /* brent-kung does not pad */
            const st_def *now = rewrite_noted(&f, label, d, strategies[i]);
            if (!now) continue;
            /* the inner scan is still a scan: one, plus the totals' scan a
             * scan-then-propagate leaves (brent-kung leaves none) */
            int want = tree_only ? 1 : 2, scans = count_prim(now->body, ST_PRIM_SCAN);
            if (scans != want) fault(&f, "%s: %d scans left, expected %d (the inner one untouched)", label, scans, want);
            if (j == 0) same_results_noted(&f, label, d, now, any_length, 5, 7 + i * 10 + j);
            else same_results_noted(&f, label, d, now, multiples, 4, 7 + i * 10 + j);
        }
    no_faults(&f);
}
END_TEST

/* Rules whose result makes kernels of its own (lookback, subhistogram) take
 * only nodes at the top level of a def, and say so at rewrite time, so that
 * try, <+ and each move on; codegen then never meets one inside a map. */
START_TEST(kernel_makers_refuse_inside_a_map) {
    refused_because("def main(xss: [M][K]i32) = xss |> map(xs => xs |> scan(+, 0))", "first(scan, lookback(M=4, WG=4))",
                    "inside a lambda");
    refused_because("def main(iss: [M][N]i32, H: i64) = "
                    "iss |> map(is => reduce_by_index(replicate(H, 0), +, 0, is, replicate(N, 1)))",
                    "first(reduce_by_index, subhistogram)", "inside a lambda");
    refused_because("def main(xs: [N]i32) = iota(3) |> map(i => xs |> scan((a, b) => a + b + i32(i) * 0, 0))",
                    "each(scan, lookback(M=4, WG=4))", "top level of a def");
    refused_because("def main(xss: [M][K]i32) = xss |> scan((a, b) => zip(a, b) |> map((x, y) => x + y), replicate(K, 0))",
                    "lookback(M=4, WG=4)", "scalars and tuples of scalars");
    refused_because("def main(is: [N]i64, vss: [N][K]i32, H: i64) = "
                    "reduce_by_index(replicate(H, replicate(K, 0)), (a, b) => zip(a, b) |> map((x, y) => x + y), "
                    "replicate(K, 0), is, vss)",
                    "subhistogram", "buckets hold arrays");
    /* two maps deep a scan is one work-item's: no blocks, no row per group */
    refused_because("def main(mxs: [M][N][K]i32) = mxs |> map(xss => xss |> map(xs => xs |> scan(+, 0)))",
                    "each(scan, parallel-scan(BS=64, BF=2, SE=4))", "inside a map inside a map");
    refused_because("def main(mxs: [M][N][K]i32) = mxs |> map(xss => xss |> map(xs => xs |> scan(+, 0)))",
                    "first(lambda, first(map, segmented-scan(WG=4)))", "top level of a def");
    /* with try, each takes the scans it can and leaves the rest as they are */
    const st_def *d = entry_of(parse_ok(cx, "def main(xss: [M][K]i32) = "
                                            "let t = xss |> map(xs => xs |> scan(+, 0)) in "
                                            "t |> map(r => r |> reduce(+, 0)) |> scan(+, 0)"));
    const st_def *now = rewrite_ok(d, "each(scan, try(lookback(M=4, WG=4)))");
    ck_assert_int_eq(count_prim(now->body, ST_PRIM_SCAN_LOOKBACK), 1);
    ck_assert_int_eq(count_prim(now->body, ST_PRIM_SCAN), 1);
    /* a `top` pattern finds only nodes outside every lambda: each takes
     * the top-level scan and never tries the one inside the map */
    now = rewrite_ok(d, "each(top scan, lookback(M=4, WG=4))");
    ck_assert_int_eq(count_prim(now->body, ST_PRIM_SCAN_LOOKBACK), 1);
    ck_assert_int_eq(count_prim(now->body, ST_PRIM_SCAN), 1);
    st_err err = refusal(entry_of(parse_ok(cx, "def main(xss: [M][K]i32) = xss |> map(xs => xs |> scan(+, 0))")),
                         "first(top scan, lookback(M=4, WG=4))");
    ck_assert_has(err.message, "there is no top-level scan here");
    /* the default strategy leaves a histogram per row as it is */
    const st_def *h = entry_of(parse_ok(cx, "def main(iss: [M][N]i32, H: i64) = "
                                            "iss |> map(is => reduce_by_index(replicate(H, 0), +, 0, is, replicate(N, 1)))"));
    now = rewrite_ok(h, st_default_strategy("GPU"));
    ck_assert_int_eq(count_prim(now->body, ST_PRIM_SUBHISTOGRAMS), 0);
    ck_assert_int_eq(count_prim(now->body, ST_PRIM_REDUCE_BY_INDEX), 1);
}
END_TEST

/* The default strategy by device type: the top-level scan as the look-back
 * scan shaped for the device (a CPU: one work-item owning a chunk, read
 * directly; a GPU, or a type it does not know: 128 work-items of 32, a
 * warp-wide look-back), each row's scan inside a map to segmented-scan,
 * whatever the device. */
START_TEST(the_default_strategy_is_chosen_by_device_type) {
    const st_def *d = entry_of(parse_ok(cx, "def main(xss: [M][K]i32) = "
                                            "let t = xss |> map(xs => xs |> scan(+, 0)) in "
                                            "t |> map(r => r |> reduce(+, 0)) |> scan(+, 0)"));
    static const struct {
        const char *type, *lookback;
    } cases[] = {{"CPU", "scanLookback(16384, 1, 1, 1,"},
                 {"GPU", "scanLookback(32, 128, 32, 0,"},
                 {"ACCELERATOR", "scanLookback(32, 128, 32, 0,"},
                 {NULL, "scanLookback(32, 128, 32, 0,"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const st_def *now = rewrite_ok(d, st_default_strategy(cases[i].type));
        ck_assert_int_eq(count_prim(now->body, ST_PRIM_SCAN_LOOKBACK), 1);
        ck_assert_int_eq(count_prim(now->body, ST_PRIM_SCAN), 0);
        st_buf b = {0};
        st_print_def(now, &b);
        ck_assert_has(b.data, cases[i].lookback);
        st_buf_free(&b);
    }
    /* the default fuses (a filter is one pass), but a map from rows to
     * scalars stays apart from the scan that reads it: fused, that scan
     * would read rows, and lookback takes none */
    refused_because("def main(xss: [M][K]i32) = xss |> map(r => r |> reduce(+, 0)) |> scan(+, 0)", "fuse-map-scan",
                    "reduces rows to scalars");
    const st_def *filter = entry_of(parse_ok(cx, "def main(xs: [N]i32): [N]i32 = "
                                                 "let flags = xs |> map(x => if x > 0 then 1i64 else 0) "
                                                 "let offsets = flags |> scan(+, 0) "
                                                 "let idx = zip(xs, offsets) |> map((x, o) => if x > 0 then o - 1 else -1) "
                                                 "in scatter(replicate(N, 0), idx, xs)"));
    const st_def *one_pass = rewrite_ok(filter, st_default_strategy("CPU"));
    ck_assert_int_eq(count_prim(one_pass->body, ST_PRIM_SCAN_LOOKBACK), 1);
    ck_assert_int_eq(count_prim(one_pass->body, ST_PRIM_MAP), 0);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Index fusion                                                             */
/* ------------------------------------------------------------------------ */

/* Reads of one element of a producer, each inside a map over the index (as
 * pad-scan makes them): fused, the interpreter gives the same results, and
 * no read of a producer it fuses through is left. A read of iota or of
 * replicate stays (issue 46): it is its index checked against the length,
 * which codegen reads as a view, without memory. */
typedef struct index_case {
    const char *what, *src;
    bool stays; /* a producer it cannot read element-wise (a scan): unchanged */
} index_case;

#define TWO "def main(xs: [N]i32, ys: [N]f32) = "
static const index_case INDEX_CASES[] = {
    {"map", TWO "iota(N) |> map(i => xs |> map(x => x * x - 3) |> get(i))", false},
    {"map, its parameter used twice, a computed index",
     TWO "iota(N) |> map(i => xs |> map(x => x * x + x) |> get(N - 1 - i))", false},
    {"zip of maps",
     TWO "iota(N) |> map(i => let (a, b) = zip(xs |> map(x => x + 1), ys |> map(y => y * 2.0)) |> get(i) in f32(a) + b)",
     false},
    {"zip of maps, a computed index",
     TWO "iota(N) |> map(i => zip(xs |> map(x => x + 1), ys |> map(y => y * 2.0)) |> get(i / 2 + i % 2))", false},
    {"iota", TWO "iota(N) |> map(i => iota(N) |> map(j => j * 2) |> get(N - 1 - i))", false},
    {"iota, an i32 index", TWO "iota(N) |> map(i => (iota(N) |> get(i32(i))) + i64(xs |> map(x => x * 2) |> get(i32(i))))",
     false},
    {"replicate", TWO "iota(N) |> map(i => (replicate(N, 5) |> get(i)) + (xs |> get(i)))", true},
    {"join of rows made by a map",
     TWO "iota(N) |> map(i => xs |> map(x => iota(3) |> map(k => x + i32(k))) |> join |> get(3 * i + 2))", false},
    {"a row of a transpose of a split",
     TWO "iota(N) |> map(i => xs |> map(x => x - 7) |> split(1) |> transpose |> get(0) |> get(i))", false},
    {"an element of a row of a mapped split",
     TWO "iota(N) |> map(i => xs |> split(1) |> map(r => r |> map(x => x + 1)) |> get(i) |> get(0))", false},
    {"a function that binds the index's name",
     TWO "iota(N) |> map(i => xs |> map(x => let i = x * 2 in i + 1) |> get(i))", false},
    {"a scan, read whole", TWO "iota(N) |> map(i => xs |> scan(+, 0) |> get(i))", true},
};
#undef TWO
enum { NINDEX_CASES = sizeof INDEX_CASES / sizeof *INDEX_CASES };

/* e as surface syntax, in the test's arena */
static const char *node_text(const st_node *e) {
    st_buf b = {0};
    st_print_node(e, &b);
    const char *t = text_of("%s", b.data ? b.data : "?");
    st_buf_free(&b);
    return t;
}

/* a read of a producer that index fusion reads through */
static bool producer_read(const st_node *e) {
    if (!is_prim(e, ST_PRIM_GET)) return false;
    const st_node *xs = e->kids[1];
    return is_prim(xs, ST_PRIM_MAP) || is_prim(xs, ST_PRIM_ZIP) || is_prim(xs, ST_PRIM_JOIN) ||
           (is_prim(xs, ST_PRIM_GET) && (is_prim(xs->kids[1], ST_PRIM_SPLIT) || is_prim(xs->kids[1], ST_PRIM_TRANSPOSE)));
}

static int producer_reads(const st_node *e) {
    int n = producer_read(e);
    for (uint32_t i = 0; i < e->nkids; i++) n += producer_reads(e->kids[i]);
    return n;
}

START_TEST(index_fusion_preserves_results) {
    const index_case *c = &INDEX_CASES[_i];
    faults f = {0};
    const st_program *p = parse_noted(&f, c->what, c->src);
    const st_def *d = p ? entry_of(p) : NULL;
    no_faults(&f);
    st_err err = {0};
    const st_node *body = st_fuse_index(cx, d, d->body, &err);
    ck_assert_msg(body != NULL, "%s: %s", c->what, err.message);
    st_def *now = st_arena_alloc(ar, sizeof *now);
    ck_assert(now != NULL);
    *now = *d;
    now->body = body;
    const int64_t lengths[] = {1, 7, 1000, 1009};
    same_results_noted(&f, c->what, d, now, lengths, 4, 31 + (uint64_t)_i);
    if (c->stays && body != d->body) fault(&f, "%s: changed: %s", c->what, node_text(body));
    if (!c->stays && (producer_reads(d->body) == 0 || producer_reads(body) != 0))
        fault(&f, "%s: %d reads of a producer before, %d after: %s", c->what, producer_reads(d->body),
              producer_reads(body), node_text(body));
    /* fusing again changes nothing */
    if (st_fuse_index(cx, d, body, &err) != body) fault(&f, "%s: a second fusion changes the program", c->what);
    no_faults(&f);
}
END_TEST

/* A let-bound array read only element by element, each element a few
 * operations, is read where it is read (not stored); one read whole, or
 * whose elements cost a loop, stays bound. The results never change. */
START_TEST(let_read_element_wise_is_inlined) {
    const struct {
        const char *src;
        bool inlined;
    } cases[] = {
        {"def main(xs: [N]i32) = let ys = xs |> map(x => x * 2 - 1) in "
         "iota(N) |> map(i => (ys |> get(i)) + (ys |> get(N - 1 - i)))", true},
        {"def main(xs: [N]i32) = let ys = zip(xs, iota(N)) |> map((x, j) => x + i32(j)) in "
         "iota(N) |> map(i => ys |> get(i))", true},
        {"def main(xs: [N]i32) = let ys = xs |> scan(+, 0) in iota(N) |> map(i => ys |> get(i))", false},
        {"def main(xs: [N]i32) = let ys = xs |> map(x => x * 2) in (ys, ys |> reduce(+, 0))", false},
        /* the inner ys is another array: its reads are not the outer's */
        {"def main(xs: [N]i32) = let ys = xs |> map(x => x * 2) in "
         "iota(N) |> map(i => (ys |> get(i)) + (let ys = xs |> scan(+, 0) in ys |> get(N - 1 - i)))", true},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const st_def *d = entry_of(parse_ok(cx, cases[k].src));
        st_err err = {0};
        const st_node *body = st_fuse_index(cx, d, d->body, &err);
        ck_assert_msg(body != NULL, "%s: %s", cases[k].src, err.message);
        bool bound = body->kind == ST_NODE_LET;
        ck_assert_msg(bound != cases[k].inlined, "%s: %s:\n%s", cases[k].src,
                      cases[k].inlined ? "still bound" : "inlined", node_text(body));
        st_def *now = st_arena_alloc(ar, sizeof *now);
        ck_assert(now != NULL);
        *now = *d;
        now->body = body;
        faults f = {0};
        const int64_t lengths[] = {1, 7, 1000, 1009};
        same_results_noted(&f, cases[k].src, d, now, lengths, 4, 9);
        no_faults(&f);
    }
}
END_TEST

START_TEST(pad_scan_reads_its_input_as_a_view) {
    /* the padded input of a mapped or zipped scan is an index map (a view):
     * no kernel and no buffer of its own; a scan of a scan binds the inner
     * scan once instead of reading it whole per element */
    const char *srcs[] = {
        "def main(xs: [N]i32) = xs |> map(x => 1 - x) |> scan(+, 0)",
        "def main(xs: [N]i32, ys: [N]i32) = zip(xs |> map(x => x * 2), ys |> map(y => y - 1)) "
        "|> map((a, b) => a + b) |> scan(+, 0)",
        "def main(xs: [N]i32) = xs |> scan(+, 0) |> scan(+, 0)",
    };
    for (size_t k = 0; k < sizeof srcs / sizeof *srcs; k++) {
        const st_def *d = entry_of(parse_ok(cx, srcs[k]));
        const st_def *now = rewrite_ok(d, "pad-scan(BS=64)");
        const st_node *padded = NULL;
        for (const st_node *e = now->body; e->kind == ST_NODE_LET; e = st_let_body(e))
            if (!strncmp(e->kids[0]->u.name, "padded", 6)) padded = st_let_value(e);
        ck_assert_msg(padded && st_is_view(padded, false), "%s: the padded input is not a view:\n%s", srcs[k],
                      node_text(now->body));
        ck_assert_int_eq(producer_reads(now->body), 0);
        faults f = {0};
        const int64_t lengths[] = {1, 7, 1000, 1009};
        same_results_noted(&f, srcs[k], d, now, lengths, 4, 5);
        no_faults(&f);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */

int main(void) {
    Suite *s = suite_create("rules");
    struct {
        const char *name;
        const TTest *tests[12];
        int loop; /* run tests[0] once per entry of a table of this many */
    } groups[] = {
        {"scan rules", {scan_rule_preserves_results}, NSCAN_CASES},
        {"scan rule lengths", {scan_rule_refuses_lengths_it_cannot_divide}, NSCAN_CASES},
        {"scan rules on exscans", {scan_rule_preserves_exscan_results}, NSCAN_CASES},
        {"fusion", {fusion_preserves_results}, NFUSION_CASES},
        {"index fusion", {index_fusion_preserves_results}, NINDEX_CASES},
        {"padding", {pad_scan_reads_its_input_as_a_view, let_read_element_wise_is_inlined}, 0},
        {"scan rules in context", {scan_rules_in_context_preserve_results}, NCONTEXT_CASES},
        {"by hand",
         {scan_then_propagate_by_hand, affine_recurrence_keeps_its_order_by_hand, segmented_scan_by_hand,
          exclusive_scan_by_hand, max_scan_pads_with_its_neutral_element_by_hand, filter_in_one_pass_by_hand},
         0},
        {"together",
         {fusion_composes_with_scan_rules, examples_keep_their_results, fusion_respects_shadowing,
          canonical_names_depend_on_the_program_alone},
         0},
        {"structure",
         {parallel_scan_has_the_structure_of_listing_8, se_and_td_give_the_same_program,
          parallel_scan_nests_on_the_block_totals, scan_then_propagate_takes_totals_from_the_block_scans},
         0},
        {"conditions",
         {bad_parameters_are_refused_when_parsed, conditions_on_lengths_are_refused_when_rewriting,
          a_scan_total_inside_a_map_keeps_its_scan},
         0},
        {"where applied", {a_composite_acts_on_the_node_it_is_applied_to, kernel_makers_refuse_inside_a_map,
                            the_default_strategy_is_chosen_by_device_type}, 0},
        {"hindrances",
         {producer_used_twice_is_not_fused, producer_used_inside_a_lambda_is_not_fused,
          producer_used_outside_its_consumer_is_not_fused, dependent_scans_are_not_fused_side_by_side,
          map_read_by_a_post_function_is_not_fused},
         0},
    };
    for (size_t g = 0; g < sizeof groups / sizeof *groups; g++) {
        TCase *tc = tcase_create(groups[g].name);
        tcase_add_checked_fixture(tc, rules_setup, rules_teardown);
        tcase_set_timeout(tc, 240); /* the property runs evaluate thousands of programs; sanitizers are slow */
        if (groups[g].loop)
            tcase_add_loop_test(tc, groups[g].tests[0], 0, groups[g].loop);
        else
            for (size_t t = 0; t < 12 && groups[g].tests[t]; t++) tcase_add_test(tc, groups[g].tests[t]);
        suite_add_tcase(s, tc);
    }
    return run_suite(s);
}
