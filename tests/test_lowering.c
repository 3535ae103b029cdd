/* tests/test_lowering.c — lowering onto the OpenCL hierarchy keeps programs'
 * meaning and gives them the shape codegen needs.
 *
 * The property: every example program, after each of the scan and fusion
 * strategies that apply to it and then lower-opencl, type-checks, prints and
 * parses back to the same IR, has no high-level map, reduce or (op, z, xs) /
 * (op, fold, z, xs) scan left, nests the hierarchy properly (no mapGlb or
 * mapWrg inside a work-group's function, nothing parallel inside a work-item),
 * places its let-bound intermediates in the address space of where they are
 * made, is a fixed point of lowering (the same pointer), and computes bit for
 * bit what it computed before lowering, on seeded random inputs of several
 * lengths (tiny ones and primes among them).
 *
 * Around it: each component rule on a node of its shape and on one that is
 * not (a mismatch), and inside strategies; the level rules on small programs
 * whose lowered text is written out here; a lowered program left alone; and
 * results checked against values worked out by hand, so that the suite does
 * not only compare the interpreter with itself. */
#include "rules_fixture.h"
#include "rewrite/rewrite.h"
#include "strategies/strategies.h"

#include <stdarg.h>
#include <stdint.h>

/* ------------------------------------------------------------------------ */
/* Fixture                                                                  */
/* ------------------------------------------------------------------------ */

#define entry_of(p) entry_ok(p)

/* ------------------------------------------------------------------------ */
/* Failures, collected: one broken example does not hide the others        */
/* ------------------------------------------------------------------------ */



/* ------------------------------------------------------------------------ */
/* Programs, strategies, rewrites                                           */
/* ------------------------------------------------------------------------ */



static const st_def *def_of(const char *src) { return entry_of(parse_ok(cx, src)); }

static const char *printed(const st_node *e) {
    st_buf b = {0};
    st_print_node(e, &b);
    const char *s = text_of("%s", b.data ? b.data : "");
    st_buf_free(&b);
    return s;
}

static const char *printed_def(const st_def *d) {
    st_buf b = {0};
    st_print_def(d, &b);
    const char *s = text_of("%s", b.data ? b.data : "");
    st_buf_free(&b);
    return s;
}

/* d rewritten by s; NULL (noted, with why) when it does not apply */
static const st_def *apply_noted(faults *f, const char *label, const st_def *d, const st_strategy *s, const char *what) {
    st_rw *rw = st_rw_new(cx, reg);
    ck_assert(rw != NULL);
    st_err err = {0};
    const st_def *now = st_rewrite_def(rw, s, d, &err);
    st_rw_free(rw);
    if (!now) fault(f, "%s: `%s` does not apply: %s", label, what, err.message);
    return now;
}

static const st_strategy *strategy(const char *text) {
    st_err err = {0};
    const st_strategy *s = st_strategy_parse(cx, reg, "strategy", text, &err);
    ck_assert_msg(s != NULL, "`%s` does not parse: %s", text, err.message);
    return s;
}

static const st_def *rewrite_noted(faults *f, const char *label, const st_def *d, const char *text) {
    return apply_noted(f, label, d, strategy(text), text);
}

static const st_def *rewrite_ok(const st_def *d, const char *text) {
    faults f = {0};
    const st_def *now = rewrite_noted(&f, "rewrite", d, text);
    no_faults(&f);
    return now;
}

/* d lowered through the strategy `run` will use */
static const st_def *lowered_noted(faults *f, const char *label, const st_def *d) {
    const st_strategy *s = st_default_lowering(cx, reg);
    ck_assert(s != NULL);
    return apply_noted(f, label, d, s, "lower-opencl");
}

static const st_def *lowered(const st_def *d) {
    faults f = {0};
    const st_def *now = lowered_noted(&f, "lower", d);
    no_faults(&f);
    return now;
}

/* Why `text` does not apply to d; the test fails if it applies. */
static st_err refusal(const st_def *d, const char *text) {
    st_rw *rw = st_rw_new(cx, reg);
    ck_assert(rw != NULL);
    st_err err = {0};
    const st_def *now = st_rewrite_def(rw, strategy(text), d, &err);
    st_rw_free(rw);
    ck_assert_msg(now == NULL, "expected `%s` to be refused, but it gave:\n%s", text, now ? printed_def(now) : "");
    ck_assert_msg(err.message[0] != 0, "`%s` was refused without a message", text);
    ck_assert_msg(err.kind == ST_ERR_USER, "`%s`: a refusal is the user's, not internal: %s", text, err.message);
    return err;
}

/* refused as not of the rule's shape, with `part` in the message */
static void mismatch(const st_def *d, const char *text, const char *part) {
    st_err err = refusal(d, text);
    ck_assert_msg(err.mismatch, "`%s`: expected a shape mismatch, got: %s", text, err.message);
    ck_assert_msg(strstr(err.message, part) != NULL, "`%s`: expected \"%s\" in \"%s\"", text, part, err.message);
}

/* Print the program with `now` for `old`, parse it back, and check that it
 * type-checks, prints the same again, and is the same IR. */
static void reparse_noted(faults *f, const char *label, const st_program *p, const st_def *old, const st_def *now) {
    const st_program *q = st_program_replace(cx, p, old, now);
    ck_assert(q != NULL);
    st_buf text = {0}, again = {0};
    st_print_program(q, &text);
    st_err err = {0};
    const st_program *back = st_parse_program(cx, "lowered.strata", text.data, text.len, &err);
    if (!back) {
        fault(f, "%s: the lowered program does not parse back: %d:%d: %s\n%s", label, err.loc.line, err.loc.col,
              err.message, text.data);
    } else {
        st_print_program(back, &again);
        const st_def *d = st_program_entry(back, now->name, &err);
        if (strcmp(text.data, again.data) != 0)
            fault(f, "%s: printed, parsed and printed again, the program changed:\n%s\n--- became ---\n%s", label,
                  text.data, again.data);
        else if (!d || d->body != now->body)
            fault(f, "%s: the lowered program parses back to a different IR:\n%s", label, text.data);
    }
    st_buf_free(&text);
    st_buf_free(&again);
}

/* ------------------------------------------------------------------------ */
/* Running programs                                                         */
/* ------------------------------------------------------------------------ */

/* d on seeded inputs with every size variable at n and every integer scalar
 * parameter (histogram's H) at 17, as the CLI binds them: its result, and
 * with expected its floats' scales too (st_eval_expected). */
static bool run_def(const st_def *d, int64_t n, uint64_t seed, st_value *out, st_expected *expected, st_err *err) {
    st_inputs *in = st_inputs_new(cx, d, ar);
    ck_assert(in != NULL);
    for (uint32_t i = 0; i < d->nsizes; i++)
        if (!st_inputs_set(in, text_of("%s=%lld", d->sizes[i]->u.name, (long long)n), err)) return false;
    for (uint32_t i = 0; i < d->nparams; i++)
        if (st_type_is_int(d->params[i]->type) && !st_inputs_set(in, text_of("%s=17", d->params[i]->u.name), err))
            return false;
    const st_value *args;
    const st_binding *env;
    size_t nenv;
    if (!st_inputs_generate(in, seed, err) || !st_inputs_finish(in, &args, &env, &nenv, err)) return false;
    if (!expected) return st_eval(cx, d, args, env, nenv, ar, out, err);
    return st_eval_expected(cx, d, args, env, nenv, ar, expected, err) && (*out = expected->value, true);
}

/* before and after give the same results at every length: integers the
 * same bits, floats within the check's bound (the interpreter combines a
 * scan's floats in a tree, a lowered scanSeq's left to right); the first
 * length where they do not (or where one fails to run) is noted */
static void same_results_noted(faults *f, const char *label, const st_def *before, const st_def *after,
                               const int64_t *lengths, int nlengths, uint64_t seed) {
    for (int l = 0; l < nlengths; l++) {
        st_arena_mark mark = st_arena_get_mark(ar);
        st_value want, got;
        st_expected expected;
        st_err err = {0};
        bool bad = true;
        if (!run_def(before, lengths[l], seed + (uint64_t)l, &want, &expected, &err))
            fault(f, "%s, length %lld: the program before lowering fails: %s", label, (long long)lengths[l], err.message);
        else if (!run_def(after, lengths[l], seed + (uint64_t)l, &got, NULL, &err))
            fault(f, "%s, length %lld: the lowered program fails: %s", label, (long long)lengths[l], err.message);
        else if (!st_expected_agree(&got, &expected, ST_TOLERANCE, &err))
            fault(f, "%s, length %lld: %s", label, (long long)lengths[l], err.message);
        else
            bad = false;
        st_arena_release(ar, mark);
        if (bad) return;
    }
}

static void same_results(const st_def *before, const st_def *after, int64_t n) {
    faults f = {0};
    same_results_noted(&f, "results", before, after, &n, 1, 7);
    no_faults(&f);
}

/* ------------------------------------------------------------------------ */
/* The shape of a lowered program                                           */
/* ------------------------------------------------------------------------ */

static bool is_prim(const st_node *n, st_prim p) { return n->kind == ST_NODE_PRIM && n->u.prim == p; }

static int count_prim(const st_node *n, st_prim p) {
    int c = is_prim(n, p);
    for (uint32_t i = 0; i < n->nkids; i++) c += count_prim(n->kids[i], p);
    return c;
}

static int count_parallel(const st_node *n) {
    return count_prim(n, ST_PRIM_MAP_GLB) + count_prim(n, ST_PRIM_MAP_WRG) + count_prim(n, ST_PRIM_MAP_LCL);
}

/* No high-level map (but an index map, which is a view, read where it is
 * read), reduce, or scan that has a sequential form; a work-group's
 * function launches no kernel; a work-item's function (mapLcl, mapSeq,
 * mapGlb, and the functions of scanSeq and reduceSeq) has nothing parallel
 * in it. */
static void check_hierarchy(faults *f, const char *label, const st_node *e) {
    if (is_prim(e, ST_PRIM_MAP) && !st_is_view(e, true)) fault(f, "%s: a high-level map remains: %s", label, printed(e));
    if (is_prim(e, ST_PRIM_REDUCE)) fault(f, "%s: a high-level reduce remains: %s", label, printed(e));
    if (is_prim(e, ST_PRIM_SCAN) && e->nkids < 5) fault(f, "%s: a scan with a scanSeq form remains: %s", label, printed(e));
    if (is_prim(e, ST_PRIM_MAP_WRG) && count_prim(e->kids[0], ST_PRIM_MAP_GLB) + count_prim(e->kids[0], ST_PRIM_MAP_WRG))
        fault(f, "%s: a mapWrg's function launches a kernel: %s", label, printed(e));
    bool thread = is_prim(e, ST_PRIM_MAP_LCL) || is_prim(e, ST_PRIM_MAP_SEQ) || is_prim(e, ST_PRIM_MAP_GLB) ||
                  is_prim(e, ST_PRIM_SCAN_SEQ) || is_prim(e, ST_PRIM_REDUCE_SEQ);
    if (thread && count_parallel(e->kids[0])) fault(f, "%s: a work-item's function is parallel: %s", label, printed(e));
    for (uint32_t i = 0; i < e->nkids; i++) check_hierarchy(f, label, e->kids[i]);
}

typedef enum level { HOST, GROUP, THREAD } level;
static const char *const LEVEL[] = {"host", "group", "thread"};

/* What a let-bound value makes: its innermost body when it is a let. */
static const st_node *made(const st_node *v) {
    while (v->kind == ST_NODE_LET) v = st_let_body(v);
    return v;
}

/* A computation that stores an array: what must never be bound unplaced. */
static bool computes(const st_node *v) {
    static const st_prim prims[] = {ST_PRIM_MAP_SEQ, ST_PRIM_MAP_GLB, ST_PRIM_MAP_WRG, ST_PRIM_MAP_LCL, ST_PRIM_SCAN_SEQ,
                                    ST_PRIM_SCAN, ST_PRIM_SCATTER, ST_PRIM_REDUCE_BY_INDEX};
    for (size_t i = 0; i < sizeof prims / sizeof *prims; i++)
        if (is_prim(v, prims[i])) return true;
    /* a view (join, unzip…) of one */
    bool view = is_prim(v, ST_PRIM_JOIN) || is_prim(v, ST_PRIM_UNZIP) || is_prim(v, ST_PRIM_SPLIT) ||
                is_prim(v, ST_PRIM_TRANSPOSE);
    return view && computes(v->kids[v->nkids - 1]);
}

/* Every let-bound array computation placed, in the space of its level: the
 * levels worked out again here from the lowered primitives. */
static void check_spaces(faults *f, const char *label, const st_node *e, level lv) {
    if (e->kind == ST_NODE_LET) {
        const st_node *v = made(st_let_value(e));
        static const st_prim space[] = {ST_PRIM_TO_GLOBAL, ST_PRIM_TO_LOCAL, ST_PRIM_TO_PRIVATE};
        for (int s = 0; s < 3; s++)
            if (is_prim(v, space[s]) && s != (int)lv)
                fault(f, "%s: a value made at %s level is placed by %s: %s", label, LEVEL[lv],
                      st_prim_get(space[s])->name, printed(v));
        if (v->type->kind == ST_TYPE_SCALAR && (is_prim(v, space[0]) || is_prim(v, space[1]) || is_prim(v, space[2])))
            fault(f, "%s: a scalar is placed: %s", label, printed(v));
        if (computes(v)) fault(f, "%s: an array made at %s level is bound unplaced: %s", label, LEVEL[lv], printed(v));
    }
    for (uint32_t i = 0; i < e->nkids; i++) {
        level k = lv;
        if (e->kind == ST_NODE_PRIM && st_prim_arg_role(e->u.prim, (int)i, e->nkids) == ST_ARG_FUN)
            k = is_prim(e, ST_PRIM_MAP_WRG) && lv == HOST ? GROUP : THREAD;
        check_spaces(f, label, e->kids[i], k);
    }
}

/* ------------------------------------------------------------------------ */
/* The property over the examples                                           */
/* ------------------------------------------------------------------------ */

#define SCAN_STRATEGIES                                                                                \
    "id", "first(scan, pad-scan(BS=4)) ; first(scan, scan-then-propagate(BS=4))",                   \
        "first(scan, parallel-scan(BS=8, BF=2, SE=2))", "first(scan, parallel-scan(BS=16, BF=2, TD=4))", \
        "first(scan, parallel-scan(BS=256, BF=2, SE=4))"
#define FILTER_FUSED "first(let, fuse-map-scan) ; first(let, fuse-scan-map) ; first(let, fuse-scan-scatter)"
#define LENGTHS 1, 2, 7, 13, 64, 1000, 1031

typedef struct example {
    const char *name;
    const char *strategies[12];
    int64_t lengths[8];
} example;

static const example EXAMPLES[] = {
    {"prefix_sum", {SCAN_STRATEGIES}, {LENGTHS}},
    {"advanced", {SCAN_STRATEGIES}, {LENGTHS}},
    {"filter",
     {SCAN_STRATEGIES, "first(let, fuse-map-scan)", "first(let, fuse-map-scan) ; first(scan, parallel-scan(BS=8, BF=2, SE=2))",
      FILTER_FUSED, FILTER_FUSED " ; first(scan, parallel-scan(BS=16, BF=2, TD=4))"},
     {LENGTHS}},
    {"linear_recurrence",
     {SCAN_STRATEGIES, "first(map, fuse-scan-map)", "first(map, fuse-scan-map) ; first(scan, parallel-scan(BS=8, BF=2, SE=2))"},
     {LENGTHS}},
    {"dot", {"id", "first(reduce, fuse-map-reduce)"}, {LENGTHS}},
    {"histogram", {"id"}, {LENGTHS}},
    /* N % 256 == 0: 1, 2, 7, 13 and 64 blocks */
    {"block_sums", {"id"}, {256, 512, 7 * 256, 13 * 256, 64 * 256}},
};
enum { NEXAMPLES = sizeof EXAMPLES / sizeof *EXAMPLES };

static int nlengths_of(const example *x) {
    int n = 0;
    while (n < 8 && x->lengths[n]) n++;
    return n;
}

/* Does the strategy make the parallel structure of listing 7 (a block per
 * work-group, a Brent-Kung tree over its work-items)? */
static bool parallel_scan(const char *strategy) { return strstr(strategy, "parallel-scan") != NULL; }

START_TEST(examples_lower_and_keep_their_results) {
    const example *x = &EXAMPLES[_i];
    faults f = {0};
    const st_program *p = parse_ok(cx, example_text(ar, x->name));
    const st_def *d = entry_of(p);
    for (int s = 0; s < 12 && x->strategies[s]; s++) {
        const char *label = text_of("%s after `%s`", x->name, x->strategies[s]);
        const st_def *before = rewrite_noted(&f, label, d, x->strategies[s]);
        if (!before) continue;
        const st_def *now = lowered_noted(&f, label, before);
        if (!now) continue;
        reparse_noted(&f, label, p, d, now);
        check_hierarchy(&f, label, now->body);
        check_spaces(&f, label, now->body, HOST);
        /* lowering a lowered program changes nothing, not even a pointer */
        const st_def *again = lowered_noted(&f, text_of("%s, lowered again", label), now);
        if (again && again->body != now->body)
            fault(&f, "%s: lowering twice changed the program:\n%s\n--- became ---\n%s", label,
                  printed_def(now), printed_def(again));
        /* and the rule by its name does what st_default_lowering does */
        const st_def *named = rewrite_noted(&f, label, before, "lower-opencl");
        if (named && named->body != now->body) fault(&f, "%s: `lower-opencl` by name differs", label);
        if (parallel_scan(x->strategies[s]) &&
            (!count_prim(now->body, ST_PRIM_MAP_WRG) || !count_prim(now->body, ST_PRIM_MAP_LCL) ||
             !count_prim(now->body, ST_PRIM_TO_LOCAL)))
            fault(&f, "%s: no work-group with local work and local memory:\n%s", label, printed_def(now));
        same_results_noted(&f, label, before, now, x->lengths, nlengths_of(x), (uint64_t)_i * 100 + (uint64_t)s);
        if (!strcmp(x->strategies[s], "id")) { /* nothing reassociated: the original's very bits */
            if (before->body != d->body) fault(&f, "%s: `id` changed the program", label);
        }
    }
    no_faults(&f);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Component rules                                                          */
/* ------------------------------------------------------------------------ */

static const struct {
    const char *rule;
    st_prim prim;
} MAP_RULES[] = {
    {"map-glb", ST_PRIM_MAP_GLB}, {"map-wrg", ST_PRIM_MAP_WRG}, {"map-lcl", ST_PRIM_MAP_LCL}, {"map-seq", ST_PRIM_MAP_SEQ}};

/* Each map rule on a map, and on every other flavour (re-mapping), keeps the
 * function and the data; on its own flavour and on a non-map it mismatches. */
START_TEST(map_rules) {
    const st_def *d = def_of("def main(xs: [N]i32) = xs |> map(x => x * 3 - 1)");
    for (int r = 0; r < 4; r++) {
        const st_def *now = rewrite_ok(d, MAP_RULES[r].rule);
        ck_assert_msg(is_prim(now->body, MAP_RULES[r].prim), "%s gave %s", MAP_RULES[r].rule, printed(now->body));
        ck_assert_ptr_eq(now->body->kids[0], d->body->kids[0]);
        ck_assert_ptr_eq(now->body->kids[1], d->body->kids[1]);
        same_results(d, now, 13);
        mismatch(now, MAP_RULES[r].rule, "already");
        for (int o = 0; o < 4; o++) {
            if (o == r) continue;
            const st_def *re = rewrite_ok(now, MAP_RULES[o].rule);
            ck_assert(is_prim(re->body, MAP_RULES[o].prim));
            ck_assert_ptr_eq(re->body->kids[0], d->body->kids[0]);
        }
    }
    const st_def *scan = def_of("def main(xs: [N]i32) = xs |> scan(+, 0)");
    for (int r = 0; r < 4; r++) mismatch(scan, MAP_RULES[r].rule, "rewrites a map");
}
END_TEST

START_TEST(map_rules_in_strategies) {
    const st_def *dot = entry_of(parse_ok(cx, example_text(ar, "dot")));
    const st_def *now = rewrite_ok(dot, "first(map, map-glb)");
    ck_assert_str_eq(printed(now->body), "zip(xs, ys) |> mapGlb((x, y) => x * y) |> reduce(+, 0.0)");
    /* re-mapping: the mapGlb found and made a mapWrg */
    now = rewrite_ok(now, "first(mapGlb, map-wrg)");
    ck_assert_str_eq(printed(now->body), "zip(xs, ys) |> mapWrg((x, y) => x * y) |> reduce(+, 0.0)");
    same_results(dot, now, 1000);
    /* no map left to find */
    mismatch(now, "first(map, map-glb)", "no map");
    /* try() of a mismatch is the program itself */
    const st_def *same = rewrite_ok(dot, "try(map-glb)");
    ck_assert_ptr_eq(same->body, dot->body);
    /* repeat and normalize end once every map is of the flavour */
    const st_def *nested = def_of("def main(xss: [N][M]i32) = xss |> map(xs => xs |> map(x => x + 1))");
    now = rewrite_ok(nested, "normalize(map-seq)");
    ck_assert_str_eq(printed(now->body), "xss |> mapSeq(xs => xs |> mapSeq(x => x + 1))");
    now = rewrite_ok(nested, "map-wrg ; first(map, map-lcl)");
    ck_assert_str_eq(printed(now->body), "xss |> mapWrg(xs => xs |> mapLcl(x => x + 1))");
    now = rewrite_ok(nested, "each(map, map-glb)");
    ck_assert_int_eq(count_prim(now->body, ST_PRIM_MAP_GLB), 2);
}
END_TEST

/* reduce(op, z, xs) folds with op; reduce(op, fold, z, xs) with the fold:
 * using op there would sum the elements instead of their images. */
START_TEST(reduce_seq_rule) {
    const st_def *d = def_of("def main(xs: [N]i32) = xs |> map(x => x * 3) |> reduce(+, 0)");
    const st_def *plain = rewrite_ok(d, "first(reduce, reduce-seq)");
    ck_assert_str_eq(printed(plain->body), "xs |> map(x => x * 3) |> reduceSeq(+, 0)");
    const st_def *fused = rewrite_ok(d, "fuse-map-reduce");
    ck_assert_uint_eq(fused->body->nkids, 4);
    const st_def *now = rewrite_ok(fused, "reduce-seq");
    ck_assert(is_prim(now->body, ST_PRIM_REDUCE_SEQ));
    ck_assert_ptr_eq(now->body->kids[0], fused->body->kids[1]); /* the fold */
    same_results(d, now, 1031);
    same_results(d, plain, 7);
    st_value out = eval_ok(cx, ar, printed_def(now), (st_value[]){array_of(ST_I32, 3, (int32_t[]){1, 2, 3}, ar)}, 1);
    ck_assert_int_eq(out.u.s.i32, 18);
    mismatch(def_of("def main(xs: [N]i32) = xs |> map(x => x * 3)"), "reduce-seq", "rewrites a reduce");
    mismatch(def_of("def main(xs: [N]i32) = xs |> scan(+, 0)"), "reduce-seq", "rewrites a reduce");
    mismatch(plain, "reduce-seq", "rewrites a reduce"); /* a reduceSeq is not a reduce */
}
END_TEST

/* scan(op, z, xs) and scan(op, fold, z, xs) become scanSeq; the form with a
 * post-function is refused (its shape fits: not a mismatch). */
START_TEST(scan_seq_rule) {
    const st_def *d = def_of("def main(xs: [N]i32) = xs |> map(x => x - 2) |> scan(+, 0)");
    const st_def *plain = rewrite_ok(d, "first(scan, scan-seq)");
    ck_assert_str_eq(printed(plain->body), "xs |> map(x => x - 2) |> scanSeq(+, 0)");
    const st_def *fused = rewrite_ok(d, "fuse-map-scan");
    const st_def *now = rewrite_ok(fused, "scan-seq");
    ck_assert(is_prim(now->body, ST_PRIM_SCAN_SEQ));
    ck_assert_ptr_eq(now->body->kids[0], fused->body->kids[1]);
    same_results(d, now, 1031);
    st_value out = eval_ok(cx, ar, printed_def(now), (st_value[]){array_of(ST_I32, 3, (int32_t[]){5, 1, 4}, ar)}, 1);
    ck_assert_int_eq(((int32_t *)out.u.a.data)[0], 3);
    ck_assert_int_eq(((int32_t *)out.u.a.data)[1], 2);
    ck_assert_int_eq(((int32_t *)out.u.a.data)[2], 4);

    const st_def *post = rewrite_ok(def_of("def main(xs: [N]i32) = xs |> scan(+, 0) |> map(a => a * 2)"), "fuse-scan-map");
    ck_assert_uint_eq(post->body->nkids, 5);
    st_err err = refusal(post, "scan-seq");
    ck_assert_msg(!err.mismatch, "a 5-argument scan is a scan: %s", err.message);
    ck_assert_has(err.message, "post-function");
    mismatch(def_of("def main(xs: [N]i32) = xs |> map(x => x - 2)"), "scan-seq", "rewrites a scan");
    mismatch(def_of("def main(xs: [N]i32) = xs |> reduce(+, 0)"), "scan-seq", "rewrites a scan");
    mismatch(plain, "scan-seq", "rewrites a scan");
}
END_TEST

static const struct {
    const char *rule;
    st_prim prim;
} SPACE_RULES[] = {{"to-global", ST_PRIM_TO_GLOBAL}, {"to-local", ST_PRIM_TO_LOCAL}, {"to-private", ST_PRIM_TO_PRIVATE}};

/* Each space rule places an array (or a tuple of arrays) once; a placed
 * value, a scalar and a function are not of its shape. */
START_TEST(space_rules) {
    const st_def *scan = def_of("def main(xs: [N]i32) = xs |> scan(+, 0)");
    const st_def *sum = def_of("def main(xs: [N]i32) = xs |> reduce(+, 0)");
    const st_def *pairs = def_of("def main(xs: [N]i32) = xs |> map(x => (x, x + 1)) |> unzip");
    for (int r = 0; r < 3; r++) {
        const st_def *now = rewrite_ok(scan, SPACE_RULES[r].rule);
        ck_assert(is_prim(now->body, SPACE_RULES[r].prim));
        ck_assert_ptr_eq(now->body->kids[0], scan->body);
        same_results(scan, now, 64);
        for (int o = 0; o < 3; o++) mismatch(now, SPACE_RULES[o].rule, "already");
        mismatch(sum, SPACE_RULES[r].rule, "places an array");
        const st_def *tuple = rewrite_ok(pairs, SPACE_RULES[r].rule);
        ck_assert(is_prim(tuple->body, SPACE_RULES[r].prim));
        same_results(pairs, tuple, 13);
        /* repeat ends: the second time it mismatches */
        ck_assert_ptr_eq(rewrite_ok(scan, text_of("repeat(%s)", SPACE_RULES[r].rule))->body, now->body);
    }
    /* inside strategies, and never on a function: the map's lambda is skipped */
    const st_def *dot = entry_of(parse_ok(cx, example_text(ar, "dot")));
    const st_def *now = rewrite_ok(dot, "first(map, to-local)");
    ck_assert_str_eq(printed(now->body), "zip(xs, ys) |> map((x, y) => x * y) |> toLocal |> reduce(+, 0.0)");
    mismatch(dot, "to-global", "places an array");
    now = rewrite_ok(dot, "topdown(to-private)");
    ck_assert_str_eq(printed(now->body), "zip(xs, ys) |> map((x, y) => x * y) |> toPrivate |> reduce(+, 0.0)");
    same_results(dot, now, 1000);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* lower-opencl, level by level                                             */
/* ------------------------------------------------------------------------ */

/* src lowered prints as want (the def's body), and computes what src does */
static void lowers_to(const char *src, const char *want, int64_t n) {
    const st_def *d = def_of(src);
    const st_def *now = lowered(d);
    ck_assert_msg(!strcmp(printed(now->body), want), "lowering\n%s\ngave\n%s\nexpected\n%s", src, printed(now->body), want);
    faults f = {0};
    check_hierarchy(&f, "lowered", now->body);
    check_spaces(&f, "lowered", now->body, HOST);
    no_faults(&f);
    ck_assert_ptr_eq(lowered(now)->body, now->body);
    same_results(d, now, n);
}

/* At HOST a map whose function has inner maps is a kernel of work-groups,
 * the inner maps over its work-items; one without is a kernel of work-items,
 * sequential inside; the intermediates live in global memory, those made by a
 * group in local memory. */
START_TEST(host_maps_become_kernels) {
    lowers_to("def main(xss: [N][M]i32) =\n"
              "  let a = xss |> map(xs => xs |> map(x => x + 1))\n"
              "  let b = xss |> map(xs => xs |> reduce(+, 0))\n"
              "  let c = xss |> map(xs => let t = xs |> map(x => x * 2) in t |> scan(+, 0))\n"
              "  in (a, b, c)",
              "let a = xss |> mapWrg(xs => xs |> mapLcl(x => x + 1)) |> toGlobal\n"
              "let b = xss |> mapGlb(xs => xs |> reduceSeq(+, 0)) |> toGlobal\n"
              "let c = xss\n"
              "  |> mapWrg(xs =>\n"
              "    let t = xs |> mapLcl(x => x * 2) |> toLocal\n"
              "    in t |> scanSeq(+, 0))\n"
              "  |> toGlobal\n"
              "in (a, b, c)",
              13);
}
END_TEST

/* A map inside a scan's or a reduction's operator runs in one work-item: it
 * gives a group nothing to share, so the outer map is a mapGlb. */
START_TEST(maps_in_operators_are_not_parallel_structure) {
    lowers_to("def main(xss: [N][M][4]i32) =\n"
              "  xss |> map(rows => rows |> reduce((a, b) => zip(a, b) |> map((x, y) => x + y), replicate(4, 0)))",
              "xss |> mapGlb(rows => rows |> reduceSeq((a, b) => zip(a, b) |> mapSeq((x, y) => x + y), replicate(4, 0)))",
              7);
    /* but a map feeding the reduction is */
    lowers_to("def main(xss: [N][M]i32) = xss |> map(xs => xs |> map(x => x * x) |> reduce(+, 0))",
              "xss |> mapWrg(xs => xs |> mapLcl(x => x * x) |> reduceSeq(+, 0))", 7);
}
END_TEST

/* Inside a work-item everything is sequential and private. */
START_TEST(thread_level_is_sequential_and_private) {
    lowers_to("def main(xss: [N][M]i32) =\n"
              "  xss |> mapGlb(xs => let t = xs |> map(x => x * 2) |> scan(+, 0) in t |> map(y => y - 1) |> reduce(max, -2147483648))",
              "xss |> mapGlb(xs =>\n"
              "  let t = xs |> mapSeq(x => x * 2) |> scanSeq(+, 0) |> toPrivate\n"
              "  in t |> mapSeq(y => y - 1) |> reduceSeq(max, -2147483648))",
              7);
}
END_TEST

/* A node that makes kernels of its own runs at the top wherever it is
 * written (codegen computes it before the map when it reads nothing of the
 * element): what it reads is made at the top (a mapGlb, not a mapLcl), and
 * it gives the map around it nothing for a work-group to share (a mapGlb,
 * not a mapWrg). */
START_TEST(what_a_kernel_maker_reads_is_made_at_the_top) {
    const st_def *d = def_of("def main(xs: [N]i32, is: [N]i32) =\n"
                             "  xs |> map(x => x + get(0, subhistograms(0, 0, 1, replicate(16, 0), +, 0, "
                             "is |> map(i => i64(i) % 16), is)))");
    const st_def *now = lowered(d);
    const char *want = "xs |> mapGlb(x => x + (subhistograms(0, 0, 1, replicate(16, 0), +, 0, "
                       "is |> mapGlb(i => i64(i) % 16), is) |> get(0)))";
    ck_assert_msg(!strcmp(printed(now->body), want), "gave\n%s\nexpected\n%s", printed(now->body), want);
    ck_assert_ptr_eq(lowered(now)->body, now->body);
    same_results(d, now, 13);
}
END_TEST

/* Scalars and views are never placed; a let whose value is a let keeps the
 * level, and what it makes is placed at its innermost body. */
START_TEST(views_scalars_and_nested_lets) {
    lowers_to("def main(xs: [N]i32) where N % 4 == 0 =\n"
              "  let s = xs |> reduce(+, 0)\n"
              "  let v = xs |> split(4) |> transpose\n"
              "  let w = zip(xs, iota(N)) |> unzip\n"
              "  let n = let m = xs |> map(x => x + s) in m\n"
              "  let k = let m2 = xs |> map(x => x - s) in m2 |> map(y => y * 2)\n"
              "  let g = v |> get(if s > 0 then 1 else 0)\n"
              "  in (s, v, w, n, k, g)",
              "let s = xs |> reduceSeq(+, 0)\n"
              "let v = xs |> split(4) |> transpose\n"
              "let w = zip(xs, iota(N)) |> unzip\n"
              "let n =\n"
              "  let m = xs |> mapGlb(x => x + s) |> toGlobal\n"
              "  in m\n"
              "let k =\n"
              "  let m2 = xs |> mapGlb(x => x - s) |> toGlobal\n"
              "  in m2 |> mapGlb(y => y * 2) |> toGlobal\n"
              "let g = v |> get(if s > 0 then 1 else 0)\n"
              "in (s, v, w, n, k, g)",
              64);
}
END_TEST

/* A maposcanomap has no sequential form: it stays a scan, its functions
 * lowered to one work-item; reduce_by_index and scatter keep their names. */
START_TEST(other_primitives_keep_their_names) {
    const st_def *d = rewrite_ok(def_of("def main(xss: [N][4]i32) =\n"
                                        "  xss |> scan((a, b) => zip(a, b) |> map((x, y) => x + y), replicate(4, 0)) |> map(r => r |> map(x => x * 2))"),
                                 "fuse-scan-map");
    const st_def *now = lowered(d);
    ck_assert_str_eq(printed(now->body),
                     "xss |> scan((a, b) => zip(a, b) |> mapSeq((x, y) => x + y), (a, b) => zip(a, b) |> mapSeq((x, y) => x + y), "
                     "(acc, x_1) => acc |> mapSeq(x => x * 2), replicate(4, 0))");
    same_results(d, now, 13);
    lowers_to("def main(is: [N]i32, H: i64): [H]i32 =\n"
              "  reduce_by_index(replicate(H, 0), +, 0, is |> map(i => i % 20), is |> map(i => i * i))",
              "reduce_by_index(replicate(H, 0), +, 0, is |> mapGlb(i => i % 20), is |> mapGlb(i => i * i))", 1000);
    lowers_to("def main(xs: [N]i32) = scatter(replicate(N, 0), xs |> map(x => x % 50), xs |> map(x => x + 1))",
              "scatter(replicate(N, 0), xs |> mapGlb(x => x % 50), xs |> mapGlb(x => x + 1))", 1031);
    lowers_to("def main(xs: [N]i32) = iterate(3, ys => ys |> map(y => y + 1), xs)",
              "xs |> iterate(3, ys => ys |> mapSeq(y => y + 1))", 7);
}
END_TEST

/* A program lowered by hand is left alone (the same pointer), and so are the
 * user's own decisions: a mapGlb inside a group is codegen's to report. */
START_TEST(lowered_programs_are_left_alone) {
    static const char *const srcs[] = {
        "def main(xs: [N]f32) where N % 8 == 0 =\n"
        "  let (a, b) = xs |> mapGlb(x => (x, x + 1.0)) |> unzip |> toGlobal\n"
        "  let s = xs |> split(8) |> mapWrg(r =>\n"
        "    let q = r |> mapLcl(y => y * 2.0) |> toLocal\n"
        "    let t = q |> scanSeq(+, 0.0) |> toLocal\n"
        "    in t |> mapLcl(z => let p = replicate(2, z) |> mapSeq(u => u * u) |> toPrivate in p |> reduceSeq(+, 0.0)))\n"
        "    |> toGlobal\n"
        "  in (a, b, s |> join, xs |> scanSeq(+, 0.0))",
        "def main(xss: [N][M]i32) = xss |> mapWrg(xs => xs |> mapGlb(x => x + 1))",
        "def main(xs: [N]i32) = xs |> split(1) |> mapLcl(r => r |> mapWrg(x => x))",
    };
    for (size_t i = 0; i < sizeof srcs / sizeof *srcs; i++) {
        const st_def *d = def_of(srcs[i]);
        ck_assert_msg(lowered(d)->body == d->body, "changed:\n%s\n--- into ---\n%s", srcs[i], printed_def(lowered(d)));
    }
}
END_TEST

/* The user's choice made with the component rules stays: a map forced to a
 * mapWrg has its function lowered at work-group level. */
START_TEST(component_choices_are_kept) {
    const st_def *d = def_of("def main(xss: [N][M]i32) =\n"
                             "  xss |> map(xs => let t = xs |> scan(+, 0) in t |> map(x => x + 1))");
    const st_def *now = lowered(rewrite_ok(d, "map-glb"));
    ck_assert_str_eq(printed(now->body),
                     "xss |> mapGlb(xs =>\n"
                     "  let t = xs |> scanSeq(+, 0) |> toPrivate\n"
                     "  in t |> mapSeq(x => x + 1))");
    same_results(d, now, 13);
    now = lowered(d);
    ck_assert_str_eq(printed(now->body),
                     "xss |> mapWrg(xs =>\n"
                     "  let t = xs |> scanSeq(+, 0) |> toLocal\n"
                     "  in t |> mapLcl(x => x + 1))");
    same_results(d, now, 13);
}
END_TEST

/* st_default_lowering is the registered rule; a registry without it has none. */
START_TEST(default_lowering) {
    const st_strategy *s = st_default_lowering(cx, reg);
    ck_assert(s != NULL && s->kind == ST_S_RULE);
    ck_assert_ptr_eq(s->rule, st_registry_find(reg, "lower-opencl"));
    st_buf b = {0};
    st_strategy_print(s, &b);
    ck_assert_str_eq(b.data, "lower-opencl");
    st_buf_free(&b);
    st_registry *empty = st_registry_new();
    ck_assert_ptr_null(st_default_lowering(cx, empty));
    st_registry_free(empty);
    static const char *const names[] = {"map-glb",   "map-wrg",   "map-lcl",  "map-seq",    "reduce-seq",
                                        "scan-seq",  "to-global", "to-local", "to-private", "lower-opencl"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const st_rule *r = st_registry_find(reg, names[i]);
        ck_assert_msg(r != NULL, "%s is not registered", names[i]);
        ck_assert_str_eq(r->origin, "built-in");
        ck_assert(r->summary && r->summary[0] && r->conditions && r->conditions[0]);
    }
}
END_TEST

/* Deep programs: as deep as the parser reads is lowered; deeper (built in C)
 * is refused with a reason, not walked. */
START_TEST(depth_limits) {
    st_buf src = {0};
    st_buf_puts(&src, "def main(xs: [N]i32) = xs |> map(x => x");
    for (int i = 0; i < 900; i++) st_buf_puts(&src, " + 1");
    st_buf_puts(&src, ")");
    const st_def *d = def_of(src.data);
    st_buf_free(&src);
    const st_def *now = lowered(d);
    ck_assert(is_prim(now->body, ST_PRIM_MAP_GLB));
    same_results(d, now, 7);

    const st_node *x = st_var(cx, st_intern_cstr(cx, "x"), st_type_scalar(cx, ST_I32), NULL);
    const st_node *e = x;
    st_err err = {0};
    for (int i = 0; i < ST_MAX_DEPTH + 10; i++) e = st_binary(cx, ST_OP_ADD, e, st_lit_int(cx, ST_I32, 1), &err);
    ck_assert(e != NULL);
    st_rw *rw = st_rw_new(cx, reg);
    const st_node *r = st_rewrite(rw, st_default_lowering(cx, reg), e, &err);
    st_rw_free(rw);
    ck_assert(r == NULL);
    ck_assert_int_eq(err.kind, ST_ERR_USER);
    ck_assert_has(err.message, "deep");
}
END_TEST

int main(void) {
    /* a failure shows the lowered program; the first twelve fit */
    check_set_max_msg_size(64 * 1024);
    Suite *s = suite_create("lowering");
    TCase *props = tcase_create("examples");
    tcase_add_checked_fixture(props, rules_setup, rules_teardown);
    tcase_set_timeout(props, 300); /* thousands of interpreter runs; sanitizers are slow */
    tcase_add_loop_test(props, examples_lower_and_keep_their_results, 0, NEXAMPLES);
    suite_add_tcase(s, props);

    TCase *rules = tcase_create("rules");
    tcase_add_checked_fixture(rules, rules_setup, rules_teardown);
    tcase_set_timeout(rules, 120);
    const TTest *const tests[] = {map_rules, map_rules_in_strategies, reduce_seq_rule, scan_seq_rule, space_rules,
                            host_maps_become_kernels, maps_in_operators_are_not_parallel_structure,
                            thread_level_is_sequential_and_private, views_scalars_and_nested_lets,
                            other_primitives_keep_their_names, lowered_programs_are_left_alone,
                            component_choices_are_kept, default_lowering, depth_limits,
                            what_a_kernel_maker_reads_is_made_at_the_top};
    for (size_t i = 0; i < sizeof tests / sizeof *tests; i++) tcase_add_test(rules, tests[i]);
    suite_add_tcase(s, rules);
    return run_suite(s);
}
