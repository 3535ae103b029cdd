/* tests/test_print.c — the printer writes what the parser reads.
 *
 * For every example and a set of tricky programs: print → parse → print gives
 * the same text, and parsing the printed text in the same context gives the
 * very same nodes (hash-consing makes equal trees equal pointers), so a
 * printed intermediate program can be fed back in. A few exact texts pin the
 * layout and the spelling of literals. */
#include "harness.h"

#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdio.h>

static st_ctx *cx;

static void setup(void) { cx = st_ctx_new(); }
static void teardown(void) { st_ctx_free(cx); }

/* ---- helpers ---- */

static char *print_program(const st_program *p) {
    st_buf b = {0};
    st_print_program(p, &b);
    ck_assert(!b.failed && b.data);
    return b.data; /* the caller frees */
}

static char *print_node(const st_node *n) {
    st_buf b = {0};
    st_print_node(n, &b);
    ck_assert(!b.failed && b.data);
    return b.data;
}

/* Print p, parse the text back in the same context and print again: the
 * texts agree, and so do the defs, pointer for pointer. Returns the text
 * (malloc'ed). `what` names p in messages. */
static char *round_trip(const st_program *p, const char *what) {
    char *text = print_program(p);
    /* `--` would start a comment: the printer must never write it */
    ck_assert_msg(strstr(text, "--") == NULL, "%s printed `--`:\n%s", what, text);
    st_err err = {0};
    const st_program *q = st_parse_program(cx, "printed.strata", text, strlen(text), &err);
    ck_assert_msg(q != NULL, "%s: the printed text does not parse: %d:%d: %s\n%s", what, err.loc.line,
                  err.loc.col, err.message, text);
    char *again = print_program(q);
    ck_assert_msg(strcmp(text, again) == 0, "%s: printing twice differs:\n%s\n---\n%s", what, text, again);
    free(again);
    ck_assert_uint_eq(q->ndefs, p->ndefs);
    for (uint32_t i = 0; i < p->ndefs; i++) {
        const st_def *a = &p->defs[i], *b = &q->defs[i];
        ck_assert_str_eq(a->name, b->name);
        ck_assert_msg(a->body == b->body, "%s: def %s reads back as other nodes:\n%s", what, a->name, text);
        ck_assert_ptr_eq(a->result, b->result);
        ck_assert_uint_eq(a->nparams, b->nparams);
        for (uint32_t k = 0; k < a->nparams; k++) ck_assert_ptr_eq(a->params[k], b->params[k]);
        ck_assert_uint_eq(a->nsizes, b->nsizes);
        for (uint32_t k = 0; k < a->nsizes; k++) ck_assert_ptr_eq(a->sizes[k], b->sizes[k]);
        ck_assert_uint_eq(a->facts->n, b->facts->n);
        for (uint32_t k = 0; k < a->facts->n; k++) {
            ck_assert_str_eq(a->facts->items[k].name, b->facts->items[k].name);
            ck_assert_int_eq(a->facts->items[k].divisor, b->facts->items[k].divisor);
        }
    }
    return text;
}

static char *round_trip_src(const char *src) { return round_trip(parse_ok(cx, src), src); }

/* src round-trips and prints exactly as `want`. */
#define ck_assert_prints(src, want)                                                         \
    do {                                                                                    \
        char *t_ = round_trip_src(src);                                                     \
        ck_assert_msg(strcmp(t_, (want)) == 0, "\n  source: %s\n  got:\n%s  want:\n%s", (src), t_, \
                      (want));                                                              \
        free(t_);                                                                           \
    } while (0)

/* src round-trips and its printed text contains `part`. */
static void prints_containing(const char *src, const char *part) {
    char *t = round_trip_src(src);
    ck_assert_msg(strstr(t, part), "expected `%s` in:\n%s", part, t);
    free(t);
}

static const st_node *body(const char *src) {
    const st_program *p = parse_ok(cx, src);
    return p->defs[0].body;
}

/* ---- the examples ---- */

static bool has_suffix(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

START_TEST(examples_round_trip) {
    const char *dir = getenv("STRATA_EXAMPLES");
    ck_assert_msg(dir != NULL, "STRATA_EXAMPLES is not set (run through meson test)");
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s", dir);
    int count = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (!has_suffix(e->d_name, ".strata")) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        st_err err = {0};
        const st_program *p = st_load_program(cx, path, NULL, &err);
        ck_assert_msg(p != NULL, "%s:%d:%d: %s", path, err.loc.line, err.loc.col, err.message);
        free(round_trip(p, path));
        count++;
    }
    closedir(d);
    ck_assert_msg(count > 0, "no .strata files in %s", dir);
}
END_TEST

START_TEST(example_texts) {
    /* prefix_sum.strata without its comments */
    ck_assert_prints("def main(xs: [N]f32): [N]f32 =\n  xs |> scan(+, 0.0)",
                     "def main(xs: [N]f32): [N]f32 =\n  xs |> scan(+, 0.0)\n");
    /* an undeclared result is printed */
    ck_assert_prints("def main(xs: [N]f32, ys: [N]f32) = zip(xs, ys) |> map((x, y) => x * y) |> reduce(+, 0.0)",
                     "def main(xs: [N]f32, ys: [N]f32): f32 =\n"
                     "  zip(xs, ys) |> map((x, y) => x * y) |> reduce(+, 0.0)\n");
    ck_assert_prints("def main(is: [N]i32, H: i64): [H]i32 =\n"
                     "  reduce_by_index(replicate(H, 0), +, 0, is, replicate(N, 1))",
                     "def main(is: [N]i32, H: i64): [H]i32 =\n"
                     "  reduce_by_index(replicate(H, 0), +, 0, is, replicate(N, 1))\n");
    /* too long for one line: broken before every |> */
    ck_assert_prints("def main(as: [N]f32, bs: [N]f32): [N]f32 =\n"
                     "  zip(as, bs) |> scan((f, g) => (f.0 * g.0, g.0 * f.1 + g.1), (1.0, 0.0)) |> map(p => p.1)",
                     "def main(as: [N]f32, bs: [N]f32): [N]f32 =\n"
                     "  zip(as, bs)\n"
                     "    |> scan((f, g) => (f.0 * g.0, g.0 * f.1 + g.1), (1.0, 0.0))\n"
                     "    |> map(p => p.1)\n");
    /* several defs: one blank line between them */
    ck_assert_prints("def a(x: i32) = x\ndef b(y: f64): f64 = y",
                     "def a(x: i32): i32 =\n  x\n\ndef b(y: f64): f64 =\n  y\n");
}
END_TEST

/* ---- operators ---- */

START_TEST(negation_never_prints_a_comment) {
    ck_assert_prints("def main(x: i32): i32 = -(-x)", "def main(x: i32): i32 =\n  -(-x)\n");
    ck_assert_prints("def main(x: i32): i32 = - -x", "def main(x: i32): i32 =\n  -(-x)\n");
    ck_assert_prints("def main(x: i32): i32 = x - -1", "def main(x: i32): i32 =\n  x - -1\n");
    ck_assert_prints("def main(x: i32): i32 = -(-(-x))", "def main(x: i32): i32 =\n  -(-(-x))\n");
    prints_containing("def main(x: f64) = -(-x) - -(1.5f64) + -f64.inf", "-(-x) - -1.5 + -f64.inf");
    prints_containing("def main(x: i64) = (x - -9223372036854775808i64, -x - -x, -1i64 * -x)",
                      "(x - -9223372036854775808, -x - -x, -1 * -x)");
    prints_containing("def main(p: (i32, f32)) = (-p.0, -(p.1), -(p.0 - 1))", "(-p.0, -p.1, -(p.0 - 1))");
    prints_containing("def main(xs: [N]i32) = -(xs |> reduce(+, 0))", "-(xs |> reduce(+, 0))");
    prints_containing("def main(x: i32) = (f32(-x), i64(x) * -2i64, min(-1, x), max(-x, -(-x)))",
                      "(f32(-x), i64(x) * -2, min(-1, x), max(-x, -(-x)))");
}
END_TEST

START_TEST(precedence_parentheses) {
    prints_containing("def main(a: i32, b: i32, c: i32) = ((a + b) * c, a - (b - c), a - b - c, a / (b * c), (a << 1) + 2, a << (1 + 2), a % (b % c))",
                      "((a + b) * c, a - (b - c), a - b - c, a / (b * c), (a << 1) + 2, a << 1 + 2, a % (b % c))");
    prints_containing("def main(q: bool, r: bool, a: i32) = (!(q && r), (!q) || r, (q || r) && q, q & (a == 1), (q == r) == q, q == (r == q))",
                      "(!(q && r), !q || r, (q || r) && q, q & a == 1, q == r == q, q == (r == q))");
    prints_containing("def main(a: i32, b: i32) = ((a & b) == 0, (a & b) == (b | a), (a | b) ^ a, a | (b ^ a))",
                      "((a & b) == 0, (a & b) == (b | a), (a | b) ^ a, a | b ^ a)");
}
END_TEST

START_TEST(if_and_let_inside_expressions) {
    ck_assert_prints("def main(c: bool, x: i32) = (1 + (if c then 2 else 3)) * (if c then x else -x) - -1",
                     "def main(c: bool, x: i32): i32 =\n  (1 + (if c then 2 else 3)) * (if c then x else -x) - -1\n");
    ck_assert_prints("def main(xs: [N]f32) = xs |> map(x => let y = x * 2.0 in y + 1.0)",
                     "def main(xs: [N]f32): [N]f32 =\n"
                     "  xs |> map(x =>\n"
                     "    let y = x * 2.0\n"
                     "    in y + 1.0)\n");
    free(round_trip_src("def main(xs: [N]f32) = xs |> map(x => let y = x * 2.0 let (a, b) = (y, -y) in a + b)"));
    free(round_trip_src("def main(xs: [N]i32) = xs |> reduce((a, b) => let s = a + b in if s > 0 then s else -s, 0)"));
    free(round_trip_src("def main(c: bool, xs: [N]i32, ys: [N]i32) = ((if c then xs else ys) |> map(x => x), (let zs = xs in zs) |> reduce(+, 0))"));
    free(round_trip_src("def main(c: bool, x: i32) = if if c then x > 0 else x < 0 then if c then 1 else 2 else 3"));
    free(round_trip_src("def main(x: i32) = (let a = let b = x + 1 in b * 2 in a, let c = 1 in c)"));
    free(round_trip_src("def main(xs: [N]f32) = xs |> map(x => if x > 0.0 then let y = x in y else 0.0) |> map(x => x)"));
    free(round_trip_src("def main(x: i32) = !(if x > 0 then true else false) && (let b = x in b) > 2"));
}
END_TEST

START_TEST(long_pipelines) {
    const char *src =
        "def main(xss: [N][M]i32) = let s = xss |> map(row => row |> map(x => x * 1000 + 1) |> scan(+, 0) "
        "|> map(x => x - 12345678) |> reduce(max, i32.min)) |> scan(+, 0) in s |> map(x => let y = x * x in "
        "if y > 0 then y else -y) |> reduce(+, 0)";
    char *t = round_trip_src(src);
    ck_assert_msg(strstr(t, "\n    |> scan(+, 0)\n"), "a long pipeline is broken over lines:\n%s", t);
    free(t);
    /* pipelines inside arguments, and a pipeline whose data is a pipeline in parentheses */
    free(round_trip_src("def main(xs: [N]i32, ys: [N]i32) = zip(xs |> map(x => x + 1), ys |> scan(+, 0)) |> map((a, b) => a * b)"));
    free(round_trip_src("def main(xs: [N](i32, f32)) = ((xs |> unzip).0, (xs |> unzip).1 |> map(x => -x))"));
    free(round_trip_src("def main() = (-1 |> iterate(3, x => x * 2), (5 |> iterate(2, y => y + 1)) + 1)"));
    free(round_trip_src("def main(xs: [N]i32) = xs |> mapGlb(x => x + 1) |> toLocal |> mapSeq(x => -x) |> toGlobal"));
    free(round_trip_src("def main(xs: [N]i32) = (xs |> reduceSeq((acc, x) => acc + i64(x), 0i64), xs |> scanSeq((acc, x) => acc + f64(x), 0.0f64))"));
    /* 260 stages: more than the printer gathers in one pipeline (256) */
    st_buf b = {0};
    st_buf_puts(&b, "def main(xs: [N]i32) = xs");
    for (int i = 0; i < 260; i++) st_buf_puts(&b, " |> map(x => x + 1)");
    free(round_trip(parse_ok(cx, b.data), "a 260-stage pipeline"));
    st_buf_free(&b);
}
END_TEST

/* ---- literals ---- */

START_TEST(floats_round_trip_bit_exactly) {
    const char *src = "def main() = (0.1, 0.1f64, 1e-30, 1e-30f64, 3.4028235e38, 1.7976931348623157e308f64, "
                      "-0.0, -0.0f64, 1e-45, 5e-324f64, 16777217.0, 0.3f64, 123456789.0, 1.17549435e-38, "
                      "2.5e-10f64, 100.0, 1e16f64)";
    const st_node *n = body(src);
    free(round_trip_src(src)); /* same nodes again: same bits */
    const st_node *const *k = n->kids;
    ck_assert(k[0]->u.lit.f32 == 0.1f);
    ck_assert(k[1]->u.lit.f64 == 0.1);
    ck_assert(k[2]->u.lit.f32 == 1e-30f);
    ck_assert(k[3]->u.lit.f64 == 1e-30);
    ck_assert(k[4]->u.lit.f32 == FLT_MAX);
    ck_assert(k[5]->u.lit.f64 == DBL_MAX);
    ck_assert(k[6]->u.lit.f32 == 0.0f && signbit(k[6]->u.lit.f32));
    ck_assert(k[7]->u.lit.f64 == 0.0 && signbit(k[7]->u.lit.f64));
    ck_assert(k[8]->u.lit.f32 == 1e-45f); /* the smallest subnormal */
    ck_assert(k[9]->u.lit.f64 == 5e-324);
    ck_assert(k[10]->u.lit.f32 == 16777216.0f); /* rounded to f32 */
    ck_assert(k[12]->u.lit.f32 == 123456789.0f);
    ck_assert(k[13]->u.lit.f32 == FLT_MIN);
    /* the spelling of the simple ones */
    char *t = round_trip_src(src);
    ck_assert_msg(strstr(t, "(0.1, 0.1f64, 1e-30, 1e-30f64, "), "%s", t);
    ck_assert_msg(strstr(t, ", -0.0, -0.0f64, "), "%s", t);
    ck_assert_msg(strstr(t, ", 0.3f64, "), "%s", t);
    ck_assert_msg(strstr(t, ", 100.0, "), "%s", t);
    free(t);
}
END_TEST

START_TEST(infinities_and_nan) {
    const char *src = "def main() = (f32.inf, -f32.inf, f32.nan, f64.inf, -f64.inf, f64.nan, -f32.nan)";
    char *t = round_trip_src(src);
    ck_assert_msg(strstr(t, "(f32.inf, -f32.inf, f32.nan, f64.inf, -f64.inf, f64.nan, f32.nan)"), "%s", t);
    free(t);
    const st_node *n = body(src);
    ck_assert(isinf(n->kids[1]->u.lit.f32) && n->kids[1]->u.lit.f32 < 0);
    ck_assert(isnan(n->kids[5]->u.lit.f64));
    /* every NaN is one node */
    ck_assert_ptr_eq(n->kids[2], n->kids[6]);
    /* in operators too */
    prints_containing("def main(xs: [N]f32) = xs |> scan(max, -f32.inf) |> map(x => x * -f32.inf - f32.nan)",
                      "xs |> scan(max, -f32.inf) |> map(x => x * -f32.inf - f32.nan)");
}
END_TEST

START_TEST(integer_extremes_and_suffixes) {
    ck_assert_prints("def main() = (u64.max, i64.min, i32.min, i32.max, u32.max, 0u64, -1i64, 300u32, 7u64)",
                     "def main(): (u64, i64, i32, i32, u32, u64, i64, u32, u64) =\n"
                     "  (18446744073709551615u64, -9223372036854775808i64, -2147483648, 2147483647, "
                     "4294967295u32, 0u64, -1i64, 300u32, 7u64)\n");
    /* every type: the suffix is written unless the parser would infer it back:
     * the default type, or the type of the other operand */
    ck_assert_prints("def main(a: i32, b: u32, c: i64, d: u64, e: f32, f: f64, g: bool) =\n"
                     "  (a + 1, b + 1, c + 1, d + 1, e + 1.0, f + 1.0, g && true, 1i32, 2u32, 3i64, 4u64, 5f32, 6f64)",
                     "def main(a: i32, b: u32, c: i64, d: u64, e: f32, f: f64, g: bool): "
                     "(i32, u32, i64, u64, f32, f64, bool, i32, u32, i64, u64, f32, f64) =\n"
                     "  (a + 1, b + 1, c + 1, d + 1, e + 1.0, f + 1.0, g && true, 1, 2u32, 3i64, 4u64, 5.0, 6.0f64)\n");
    /* literals typed by a declared result keep their type */
    free(round_trip_src("def main(): (i64, [3]u32, f64) = (1, replicate(3, 2), 0.5)"));
    free(round_trip_src("def main(x: i64) = let n: i64 = 5 in (1 + x, x << 2, if x > 0 then 1 else x)"));
}
END_TEST

/* ---- types and sizes ---- */

START_TEST(sizes_and_facts) {
    ck_assert_prints("def main(xs: [N]f32): [N/256][256]f32 where N % 256 == 0 = xs |> split(256)",
                     "def main(xs: [N]f32): [N/256][256]f32 where N % 256 == 0 =\n  xs |> split(256)\n");
    /* facts about one size combine; the printed clause reads back the same */
    ck_assert_prints("def main(xs: [N]f32) where N % 4 == 0, N % 6 == 0 = xs |> split(12)",
                     "def main(xs: [N]f32): [N/12][12]f32 where N % 12 == 0 =\n  xs |> split(12)\n");
    free(round_trip_src("def main(H: i64, xs: [N]f32, ys: [M][N]f32) where N % 4 == 0, M % 6 == 0, H % 2 == 0 =\n"
                        "  (replicate(2 * N + 1, 0), replicate(H * M / 3, 1.0), xs |> split(4), ys |> transpose |> join,\n"
                        "   iota(N / 4 * 4), replicate(H / 2, true), xs |> split(2) |> split(2))"));
    free(round_trip_src("def main(xs: [N]f32) = let n = N / 2 let m = n * 2 + 1 in (replicate(m, 0), iota(n), n)"));
    free(round_trip_src("def main(K: i64, M: i64) = replicate(K * M, 0u32) |> split(K) |> transpose"));
}
END_TEST

START_TEST(tuples_of_tuples) {
    ck_assert_prints("def main(p: ((i32, f32), (bool, (i64, u32)))) = ((p.1.1.0, p.0), ((1, 2.5), (true, (3i64, 4u32))), p.1.1.1)",
                     "def main(p: ((i32, f32), (bool, (i64, u32)))): ((i64, (i32, f32)), ((i32, f32), (bool, (i64, u32))), u32) =\n"
                     "  ((p.1.1.0, p.0), ((1, 2.5), (true, (3i64, 4u32))), p.1.1.1)\n");
    free(round_trip_src("def main(xs: [N]i32, ys: [N]f32) = zip(xs, ys) |> scan((a, b) => (a.0 + b.0, max(a.1, b.1)), (0, -f32.inf)) |> unzip"));
    free(round_trip_src("def main(x: i32) = let (a, b) = (x, (x, 1.0)) let (c, d) = b in ((a, c), d).0.1"));
    free(round_trip_src("def main(x: i32) = (1, 2).1 + (x, x).0"));
}
END_TEST

START_TEST(design_programs) {
    free(round_trip_src("-- a map fused into a scan of pairs\n"
                        "def advanced(as: [N]i32) =\n"
                        "  let (bs, cs) = as |> map(a => (a - 1, a + 1)) |> unzip\n"
                        "  let (ds, es) = zip(bs, cs) |> scan((x, y) => (x.0 + y.0, x.1 + y.1), (0, 0)) |> unzip\n"
                        "  in (as, bs, cs, ds, es)\n"
                        "def hist(is: [N]i32, H: i64): [H]i32 =\n"
                        "  reduce_by_index(replicate(H, 0), +, 0, is, replicate(N, 1))\n"
                        "def main(xs: [N]f32): [N]f32 =\n"
                        "  xs |> scan(+, 0.0)\n"));
    free(round_trip_src("def main(xs: [N]i32): ([N]i32, i64) =\n"
                        "  let flags = xs |> map(x => if x > 0 then 1i64 else 0)\n"
                        "  let offsets = flags |> scan(+, 0)\n"
                        "  let idx = zip(xs, offsets) |> map((x, o) => if x > 0 then o - 1 else -1)\n"
                        "  in (scatter(replicate(N, 0), idx, xs), flags |> reduce(+, 0))\n"));
}
END_TEST

/* ---- nodes built through the API ---- */

START_TEST(print_built_nodes) {
    st_err err = {0};
    const st_type *i32 = st_type_scalar(cx, ST_I32);
    const st_node *x = st_var(cx, st_intern_cstr(cx, "x"), i32, NULL);
    const st_node *y = st_var(cx, st_intern_cstr(cx, "y"), i32, NULL);
    const st_node *m1 = st_lit_int(cx, ST_I32, -1);
    char *t;
    t = print_node(st_binary(cx, ST_OP_SUB, x, m1, &err));
    ck_assert_str_eq(t, "x - -1");
    free(t);
    t = print_node(st_unary(cx, ST_OP_NEG, st_unary(cx, ST_OP_NEG, x, &err), &err));
    ck_assert_str_eq(t, "-(-x)");
    free(t);
    t = print_node(st_binary(cx, ST_OP_SUB, x, st_binary(cx, ST_OP_SUB, y, x, &err), &err));
    ck_assert_str_eq(t, "x - (y - x)");
    free(t);
    t = print_node(st_binary(cx, ST_OP_MUL, st_binary(cx, ST_OP_ADD, x, y, &err), m1, &err));
    ck_assert_str_eq(t, "(x + y) * -1");
    free(t);
    /* negating a literal folds it: the printer could not tell -(1) from -1 */
    const st_node *neg1 = st_unary(cx, ST_OP_NEG, st_lit_int(cx, ST_I32, 1), &err);
    ck_assert_ptr_eq(neg1, m1);
    st_scalar z = {.bits = 0};
    z.f64 = -0.0;
    t = print_node(st_lit(cx, ST_F64, z));
    ck_assert_str_eq(t, "-0.0f64");
    free(t);
    t = print_node(st_opfn(cx, ST_OP_MAX, ST_F32, &err));
    ck_assert_str_eq(t, "max");
    free(t);
}
END_TEST

/* ---- scan and reduce with a fold, scatter of pairs ---- */

/* The neutral element of a fold form is typed on its own, so its suffix is
 * printed; in the 3-argument form the elements give it its type and the
 * suffix is left out. */
START_TEST(fold_forms_print_exactly) {
    ck_assert_prints("def main(xs: [N]i32) = xs |> scan(+, (acc, x) => acc + i64(x), 0i64)",
                     "def main(xs: [N]i32): [N]i64 =\n  xs |> scan(+, (acc, x) => acc + i64(x), 0i64)\n");
    ck_assert_prints("def main(xs: [N]i32) = xs |> scan(+, (acc, x) => acc + i64(x), (acc, x) => (acc, x > 0), 0i64)",
                     "def main(xs: [N]i32): [N](i64, bool) =\n"
                     "  xs |> scan(+, (acc, x) => acc + i64(x), (acc, x) => (acc, x > 0), 0i64)\n");
    ck_assert_prints("def main(xs: [N]i32) = xs |> reduce(+, (acc, x) => acc + f64(x), 0.0f64)",
                     "def main(xs: [N]i32): f64 =\n  xs |> reduce(+, (acc, x) => acc + f64(x), 0.0f64)\n");
    ck_assert_prints("def main(xs: [N]u64) = xs |> reduce(max, max, 7u64)",
                     "def main(xs: [N]u64): u64 =\n  xs |> reduce(max, max, 7u64)\n");
    /* the same neutral element, hinted by the elements in the 3-argument form */
    ck_assert_prints("def main(xs: [N]i64) = (xs |> scan(+, 0i64), xs |> scan(+, (acc, x) => acc + x, 0i64))",
                     "def main(xs: [N]i64): ([N]i64, [N]i64) =\n"
                     "  (xs |> scan(+, 0), xs |> scan(+, (acc, x) => acc + x, 0i64))\n");
    ck_assert_prints("def main(xs: [N]u32) = (xs |> reduce(+, 1u32), xs |> reduce(+, +, 1u32))",
                     "def main(xs: [N]u32): (u32, u32) =\n"
                     "  (xs |> reduce(+, 1), xs |> reduce(+, +, 1u32))\n");
    /* an unsuffixed neutral element of a fold form is an i32 and prints so */
    ck_assert_prints("def main(xs: [N]i32) = xs |> reduce(+, +, 1)",
                     "def main(xs: [N]i32): i32 =\n  xs |> reduce(+, +, 1)\n");
    /* tuples: every component keeps its suffix */
    const char *pairs = "def main(xs: [N]i64, ys: [N]u32) =\n"
                        "  (zip(xs, ys) |> reduce((a, b) => (a.0 + b.0, a.1 + b.1), (0i64, 0u32)),\n"
                        "   zip(xs, ys) |> reduce((a, b) => (a.0 + b.0, a.1 + b.1), (acc, p) => (acc.0 + p.0, acc.1 + p.1), (0i64, 0u32)))";
    prints_containing(pairs, "(zip(xs, ys) |> reduce((a, b) => (a.0 + b.0, a.1 + b.1), (0, 0)), ");
    prints_containing(pairs, "zip(xs, ys) |> reduce((a, b) => (a.0 + b.0, a.1 + b.1), (acc, p) => (acc.0 + p.0, acc.1 + p.1), (0i64, 0u32)))\n");
    ck_assert_prints("def main(xs: [N]i32) = xs |> scan(+, (acc, x) => acc - i64(x), -1i64)",
                     "def main(xs: [N]i32): [N]i64 =\n  xs |> scan(+, (acc, x) => acc - i64(x), -1i64)\n");
    /* scatter of pairs is a call, the pipeline form reads as the same call */
    ck_assert_prints("def main(xs: [N]i32) = zip(iota(N), xs) |> scatter(replicate(N, 0))",
                     "def main(xs: [N]i32): [N]i32 =\n  scatter(replicate(N, 0), zip(iota(N), xs))\n");
    ck_assert_ptr_eq(body("def main(xs: [N]i32) = zip(iota(N), xs) |> scatter(replicate(N, 0))"),
                     body("def main(xs: [N]i32) = scatter(replicate(N, 0), zip(iota(N), xs))"));
}
END_TEST

START_TEST(fold_forms_round_trip) {
    /* lambdas with let bodies in the fold and the post-function */
    free(round_trip_src("def main(xs: [N]i32) =\n"
                        "  xs |> scan((a, b) => a + b, (acc, x) => let y = i64(x) * 2i64 in acc + y,\n"
                        "             (acc, x) => let q = acc > 0i64 in (q, if q then x else -x), 0i64)"));
    /* an accumulator of arrays, a neutral element that is not a literal */
    free(round_trip_src("def main(xs: [N]i32) =\n"
                        "  (xs |> reduce((a, b) => zip(a, b) |> map((x, y) => x + y), (acc, x) => acc |> map(a => a + x), replicate(3, 0)),\n"
                        "   xs |> scan(+, (acc, x) => acc + i64(x), i64(N) * 2))"));
    /* literals inside the fold's body take their type from the accumulator */
    free(round_trip_src("def main(xs: [N]i32) = xs |> scan(+, (acc, x) => if x > 0 then acc + 1 else acc, 0u64)"));
    free(round_trip_src("def main(xs: [N]i32) = xs |> scan(+, (acc, x) => 5, (acc, x) => 7, 0i64)"));
    free(round_trip_src("def main(xs: [N]i32) = xs |> reduce(+, (acc, x) => (2 + 3) * acc, 1i64)"));
    /* a scan of pairs feeding scatter: the fused filter */
    free(round_trip_src("def main(xs: [N]i32) =\n"
                        "  let ivs = xs |> scan(+, (acc, x) => acc + (if x > 0 then 1i64 else 0),\n"
                        "                       (acc, x) => (if x > 0 then acc - 1 else -1, x), 0i64)\n"
                        "  in scatter(replicate(N, 0), ivs)"));
    free(round_trip_src("def main(is: [M]u32, vs: [M](i32, f64), dest: [N](i32, f64)) = scatter(dest, zip(is, vs))"));
    free(round_trip_src("def main(ivs: [M](i64, f32)) = ivs |> scatter(replicate(10, -0.0))"));
    /* nested: a fold form inside a fold form's lambdas, and in a long pipeline */
    free(round_trip_src("def main(xs: [N]i32) where N % 4 == 0 =\n"
                        "  xs |> split(4) |> map(row => row |> reduce(+, (acc, x) => acc + i64(x), 0i64))\n"
                        "     |> scan(+, (acc, s) => acc + f64(s), (acc, s) => (acc, s), 0.5f64) |> unzip"));
    char *t = round_trip_src("def main(xs: [N]i32) =\n"
                             "  xs |> map(x => x * 3) |> scan(+, (acc, x) => acc + i64(x) * 1000000, (acc, x) => (acc, x, acc - i64(x)), 0i64) |> unzip");
    ck_assert_msg(strstr(t, "\n    |> scan(+, (acc, x) => acc + i64(x) * 1000000, (acc, x) => (acc, x, acc - i64(x)), 0i64)\n"),
                  "a long pipeline with a 5-argument scan is broken over lines:\n%s", t);
    free(t);
}
END_TEST

START_TEST(print_built_fold_nodes) {
    st_err err = {0};
    const st_type *i32 = st_type_scalar(cx, ST_I32), *i64 = st_type_scalar(cx, ST_I64);
    const st_size *n = st_size_var(cx, NULL, st_intern_cstr(cx, "N"));
    const st_node *xs = st_var(cx, st_intern_cstr(cx, "xs"), st_type_array(cx, n, i32), NULL);
    const st_node *acc = st_var(cx, st_intern_cstr(cx, "acc"), i64, NULL);
    const st_node *x = st_var(cx, st_intern_cstr(cx, "x"), i32, NULL);
    const st_node *fold = st_lambda(cx, 2, (const st_node *[]){acc, x},
                                    st_binary(cx, ST_OP_ADD, acc, st_conv(cx, ST_I64, x, &err), &err), &err);
    const st_node *op = st_opfn(cx, ST_OP_ADD, ST_I64, &err);
    ck_assert(fold && op);
    const st_node *scan4 = st_prim_node(cx, ST_PRIM_SCAN, 4, (const st_node *[]){op, fold, st_lit_int(cx, ST_I64, 0), xs}, &err);
    ck_assert_msg(scan4 != NULL, "%s", err.message);
    char *t = print_node(scan4);
    ck_assert_str_eq(t, "xs |> scan(+, (acc, x) => acc + i64(x), 0i64)");
    free(t);
    const st_node *red = st_prim_node(cx, ST_PRIM_REDUCE, 4, (const st_node *[]){op, fold, st_lit_int(cx, ST_I64, 3), xs}, &err);
    ck_assert_msg(red != NULL, "%s", err.message);
    t = print_node(red);
    ck_assert_str_eq(t, "xs |> reduce(+, (acc, x) => acc + i64(x), 3i64)");
    free(t);
    /* scatter(dest, ivs) */
    const st_node *dest = st_var(cx, st_intern_cstr(cx, "dest"), st_type_array(cx, st_size_const(cx, 4), i32), NULL);
    const st_node *ivs = st_var(cx, st_intern_cstr(cx, "ivs"),
                                st_type_array(cx, n, st_type_tuple(cx, 2, (const st_type *[]){i64, i32})), NULL);
    const st_node *sc = st_prim_node(cx, ST_PRIM_SCATTER, 2, (const st_node *[]){dest, ivs}, &err);
    ck_assert_msg(sc != NULL, "%s", err.message);
    ck_assert_ptr_eq(sc->type, dest->type);
    t = print_node(sc);
    ck_assert_str_eq(t, "scatter(dest, ivs)");
    free(t);
}
END_TEST

int main(void) {
    Suite *s = suite_create("print");
    TCase *tc = tcase_create("print");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, examples_round_trip);
    tcase_add_test(tc, example_texts);
    tcase_add_test(tc, negation_never_prints_a_comment);
    tcase_add_test(tc, precedence_parentheses);
    tcase_add_test(tc, if_and_let_inside_expressions);
    tcase_add_test(tc, long_pipelines);
    tcase_add_test(tc, floats_round_trip_bit_exactly);
    tcase_add_test(tc, infinities_and_nan);
    tcase_add_test(tc, integer_extremes_and_suffixes);
    tcase_add_test(tc, sizes_and_facts);
    tcase_add_test(tc, tuples_of_tuples);
    tcase_add_test(tc, design_programs);
    tcase_add_test(tc, print_built_nodes);
    tcase_add_test(tc, fold_forms_print_exactly);
    tcase_add_test(tc, fold_forms_round_trip);
    tcase_add_test(tc, print_built_fold_nodes);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
