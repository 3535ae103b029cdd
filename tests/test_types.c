/* tests/test_types.c — the type checker: ill-typed programs fail at the
 * argument that is wrong, with a message that says what was expected and
 * what was found; well-typed programs get the types DESIGN.md promises
 * (sizes included). */
#include "harness.h"
#include "ir/prim.h"

#include <stdio.h>

static st_ctx *cx;

static void setup(void) { cx = st_ctx_new(); }
static void teardown(void) { st_ctx_free(cx); }

/* ---- helpers ---- */

/* Where an error about a token must point: the token is the only
 * occurrence of `needle` in src. A needle may run past the token to be
 * unique, and may start with context up to a backquote: "else `0" is the 0
 * after the else. */
static st_loc loc_of(const char *src, const char *needle) {
    const char *mark = strchr(needle, '`');
    int skip = mark ? (int)(mark - needle) : 0;
    char text[256];
    snprintf(text, sizeof text, "%.*s%s", skip, needle, mark ? mark + 1 : needle);
    const char *at = strstr(src, text);
    ck_assert_msg(at != NULL, "test bug: `%s` is not in the source", text);
    ck_assert_msg(strstr(at + 1, text) == NULL, "test bug: `%s` is not unique", text);
    st_loc l = {"test.strata", 1, 1};
    for (const char *p = src; p < at + skip; p++) {
        if (*p == '\n') l.line++, l.col = 1;
        else l.col++;
    }
    return l;
}

/* src fails at the token starting with `needle`, with a message containing
 * every one of the parts (a NULL-terminated list). */
static void fails_at(const char *src, const char *needle, const char *const *parts) {
    st_loc l = loc_of(src, needle);
    st_err e = parse_fails(cx, src);
    ck_assert_msg(e.kind == ST_ERR_USER, "not a user error: %s", e.message);
    ck_assert_msg(e.loc.line == l.line && e.loc.col == l.col,
                  "\n  %s\n  expected the error at `%s` (%d:%d), got %d:%d: %s", src, needle, l.line,
                  l.col, e.loc.line, e.loc.col, e.message);
    for (; *parts; parts++)
        ck_assert_msg(strstr(e.message, *parts), "\n  %s\n  expected \"%s\" in \"%s\"", src, *parts,
                      e.message);
}

#define FAILS_AT(src, needle, ...) fails_at((src), (needle), (const char *const[]){__VA_ARGS__, NULL})

/* src fails with a message containing every one of the parts, wherever. */
static void fails_with(const char *src, const char *const *parts) {
    st_err e = parse_fails(cx, src);
    ck_assert_msg(e.kind == ST_ERR_USER && e.loc.line >= 1, "unlocated or internal: %s", e.message);
    for (; *parts; parts++)
        ck_assert_msg(strstr(e.message, *parts), "\n  %s\n  expected \"%s\" in \"%s\"", src, *parts,
                      e.message);
}

#define FAILS_WITH(src, ...) fails_with((src), (const char *const[]){__VA_ARGS__, NULL})

static const st_def *checks(const char *src) {
    const st_program *p = parse_ok(cx, src);
    st_err err = {0};
    const st_def *d = st_program_entry(p, NULL, &err);
    ck_assert_msg(d != NULL, "%s", err.message);
    return d;
}

static const char *type_str(const st_type *t) {
    static char text[256];
    st_buf b = {0};
    st_type_print(t, &b);
    snprintf(text, sizeof text, "%s", b.data ? b.data : "");
    st_buf_free(&b);
    return text;
}

/* src type-checks and its entry's result type prints as `want`. */
#define ck_assert_result(src, want) ck_assert_str_eq(type_str(checks(src)->result), (want))

/* ---- the primitive table ---- */

/* Every primitive has a full row: a name that parses back to it, a form, a
 * typing rule; one that is another after sizes names that other, whose
 * fold and data argument it shares past them. A primitive added to the enum
 * without its row fails here, not in the middle of a rewrite. */
START_TEST(every_primitive_has_a_row) {
    for (int p = 0; p < ST_PRIM_COUNT; p++) {
        const st_prim_desc *d = st_prim_desc_of((st_prim)p);
        ck_assert_msg(d->info.name && d->info.forms[0], "primitive %d has no row in ir/prim.c", p);
        st_prim back;
        ck_assert_msg(st_prim_from_name(d->info.name, strlen(d->info.name), &back) && back == (st_prim)p,
                      "%s does not parse back to itself", d->info.name);
        ck_assert_msg(d->type != NULL, "%s has no typing rule", d->info.name);
        uint32_t nsizes;
        st_prim base = st_prim_after_sizes((st_prim)p, &nsizes);
        ck_assert_msg(nsizes == 0 ? base == (st_prim)p : base != (st_prim)p && d->makes_kernels,
                      "%s: its sizes and the primitive after them disagree", d->info.name);
        const st_prim_desc *b = st_prim_desc_of(base);
        ck_assert_msg(!nsizes || (b->dest_first == d->dest_first && (d->fold == ST_FOLD_NONE) == (b->fold == ST_FOLD_NONE)),
                      "%s reads its arguments unlike %s after its sizes", d->info.name, b->info.name);
    }
}
END_TEST

/* ---- arrays and sizes ---- */

START_TEST(zip_of_different_lengths) {
    FAILS_AT("def main(xs: [N]f32, ys: [M]f32) = zip(xs, ys)", "ys)", "zip", "N", "M");
    FAILS_AT("def main(xs: [N]f32, ys: [N]f32, zs: [N+1]f32) = zip(xs, ys, zs)", "zs)", "N + 1");
    ck_assert_result("def main(xs: [N]f32, ys: [N]i32) = zip(xs, ys)", "[N](f32, i32)");
}
END_TEST

START_TEST(split_needs_a_divisor) {
    FAILS_AT("def main(xs: [1000]f32) = xs |> split(256)", "xs |>", "256", "1000");
    /* with a symbolic length the message says how to state the fact */
    FAILS_AT("def main(xs: [N]f32) = xs |> split(256)", "xs |>", "256", "N", "where");
    FAILS_AT("def main(xs: [N]f32) where N % 128 == 0 = xs |> split(256)", "xs |>", "256");
    FAILS_AT("def main(xs: [N]f32) = xs |> split(0)", "0)", "split(0)");
    FAILS_AT("def main(xs: [N]f32) = xs |> split(1.5)", "1.5", "integer");
    ck_assert_result("def main(xs: [N]f32) where N % 256 == 0 = xs |> split(256)", "[N/256][256]f32");
    ck_assert_result("def main(xs: [1024]f32) = xs |> split(256)", "[4][256]f32");
    /* a fact for a multiple is enough */
    ck_assert_result("def main(xs: [N]f32) where N % 512 == 0 = xs |> split(256)", "[N/256][256]f32");
}
END_TEST

START_TEST(sizes_from_parameters) {
    /* a size variable bound by no parameter: only in the result type */
    FAILS_AT("def main(xs: [N]f32): [M]f32 = xs", "M]", "M");
    FAILS_AT("def main(x: f32) = replicate(K, x)", "K,", "K");
    /* N only inside an expression is never a whole length */
    FAILS_AT("def main(xs: [N*2]f32) = xs", "N*2", "N", "length");
    /* a parameter that is not an integer cannot be a length */
    FAILS_AT("def main(x: f32, xs: [x]f32) = xs", "x]", "not an integer");
    /* where states facts about sizes only */
    FAILS_AT("def main(xs: [N]f32, y: i32, z: f32): [N]f32 where z % 2 == 0 = xs", "z % 2", "`z`", "size");
    FAILS_AT("def main(xs: [N]f32): [N]f32 where M % 2 == 0 = xs", "M %", "`M`");
    /* integer parameters are sizes, also through a conversion */
    ck_assert_result("def main(H: i32): [H]f32 = replicate(i64(H), 0.0)", "[H]f32");
    ck_assert_result("def main(H: i64, xs: [N]f32) = replicate(H * N / 4, 0)", "[H*N/4]i32");
    ck_assert_result("def main(xs: [N]f32) = let n = N / 2 in replicate(n, 0)", "[N/2]i32");
    ck_assert_result("def main(xs: [N]f32) = (iota(N), replicate(N + 1, true))", "([N]i64, [N + 1]bool)");
    ck_assert_result("def main(K: i64, M: i64) = replicate(K * M, 0u32) |> split(K)", "[M][K]u32");
}
END_TEST

START_TEST(replicate_needs_a_size) {
    /* a length computed by a reduction is not known before the run */
    FAILS_AT("def main(xs: [N]i64) = let n = xs |> reduce(+, 0) in replicate(n, 0)", "n, 0)", "replicate", "size");
    FAILS_AT("def main(xs: [N]i64, k: i64) = replicate(xs |> get(k), 1)", "get(k)", "size");
    FAILS_AT("def main(x: f32) = replicate(x, 1)", "x, 1", "integer", "f32");
    FAILS_AT("def main() = replicate(-3, 1)", "-3", "negative");
}
END_TEST

START_TEST(join_split_transpose) {
    ck_assert_result("def main(xs: [N]f32): [N]f32 where N % 256 == 0 = xs |> split(256) |> join", "[N]f32");
    ck_assert_result("def main(xs: [N][M]f32): [M][N]f32 = xs |> transpose", "[M][N]f32");
    ck_assert_result("def main(xs: [N][M]f32): [N*M]f32 = xs |> join", "[M*N]f32");
    ck_assert_result("def main(xs: [N]f32) where N % 8 == 0 = xs |> split(2) |> split(4)", "[N/8][4][2]f32");
    FAILS_AT("def main(xs: [N]f32) = xs |> transpose", "xs |>", "array of arrays", "[N]f32");
    FAILS_AT("def main(xs: [N]f32) = xs |> join", "xs |>", "array of arrays");
    FAILS_AT("def main(xs: [N]f32) = xs |> unzip", "xs |>", "tuples");
}
END_TEST

/* ---- scalar operators ---- */

START_TEST(operator_operand_types) {
    /* the operand that does not fit is blamed (st_binary says which) */
    FAILS_AT("def main(x: i32) = x + 1.0", "1.0", "`+`", "i32", "f32");
    FAILS_AT("def main(x: i32, y: i64) = x * y", "* `y", "`*`", "i32", "i64");
    FAILS_AT("def main(x: i32, y: i32) = x && y", "x &&", "`&&`", "bool", "i32");
    FAILS_AT("def main(x: f32) = x << 1.0", "x <<", "`<<`", "integers", "f32");
    FAILS_AT("def main(x: f64, y: f64) = x & y", "x &", "`&`", "f64");
    FAILS_AT("def main(q: bool) = q + q", "q +", "`+`", "bool");
    FAILS_AT("def main(x: f32) = if x > 0.0 && x then 1 else 2", "&& `x", "`&&`", "bool", "f32");
}
END_TEST

START_TEST(unary_operand_types) {
    FAILS_AT("def main(x: i32) = !x", "!`x", "`!`", "bool", "i32");
}
END_TEST

START_TEST(literal_never_becomes_float) {
    FAILS_AT("def main(xs: [N]f32) = xs |> scan(+, 0)", "0)", "neutral", "i32", "f32");
    FAILS_WITH("def main(x: f32) = x + 1", "`+`", "f32", "i32"); /* where: operator_operand_types */
    FAILS_AT("def main(x: f32): f32 = if x > 0.0 then x else 0", "else `0", "branches");
    /* the declared result is wrong: the error is at the declared type */
    FAILS_AT("def main(): f32 = 1", "f32", "f32", "i32");
}
END_TEST

START_TEST(literal_range) {
    ck_assert_result("def main() = 300u32", "u32");
    ck_assert_result("def main() = (4294967295u32, -2147483648, 2147483647)", "(u32, i32, i32)");
    FAILS_AT("def main() = (1, -1u32)", "-1u32", "-1", "u32");
    FAILS_AT("def main() = 3000000000", "3000000000", "3000000000", "i32");
    FAILS_AT("def main() = 4294967296u32", "4294967296u32", "u32");
    FAILS_AT("def main() = -2147483649", "-2147483649", "i32");
    FAILS_AT("def main() = 9223372036854775808i64", "9223372036854775808i64", "i64");
    /* the context decides the type, and so the range */
    ck_assert_result("def main(): i64 = 3000000000", "i64");
    ck_assert_result("def main(x: i64) = x + 3000000000", "i64");
    FAILS_AT("def main(x: u32) = x + -1", "-1", "u32");
}
END_TEST

/* An unsuffixed literal takes the integer type its context needs: the
 * other operand, wherever the literal sits in that operand. */
START_TEST(literals_typed_through_expressions) {
    ck_assert_result("def main(x: i64) = x * (2 + 3)", "i64");
    ck_assert_result("def main(x: i64) = 1 + 2 * x", "i64");
    ck_assert_result("def main(x: i64) = (2 + 3) * x", "i64");
    ck_assert_result("def main(x: i64) = 2 * 3 * x", "i64");
    ck_assert_result("def main(x: i64) = 1 + 2 == x", "bool");
    ck_assert_result("def main(x: f64) = 0.5 * 2.0 * x", "f64");
}
END_TEST

/* ---- functions ---- */

START_TEST(errors_on_later_lines) {
    const char *src =
        "def main(xs: [N]f32) =\n"
        "  let ys = xs |> map(x => x * 2.0)\n"
        "  in ys |> scan(+, 0)\n";
    FAILS_AT(src, "+, `0)", "neutral");
    const char *two =
        "def ok(x: i32) = x\n"
        "\n"
        "def main(xs: [N]f32,\n"
        "         ys: [M]f32) =\n"
        "  zip(xs,\n"
        "      ys)\n";
    FAILS_AT(two, "ys)", "zip");
}
END_TEST

START_TEST(neutral_element_type) {
    FAILS_AT("def main(xs: [N]i32) = xs |> reduce(+, 0.0)", "0.0", "neutral", "f32", "i32");
    FAILS_AT("def main(xs: [N]i32) = xs |> reduce(+, (0, 0))", "(0, 0)", "neutral", "(i32, i32)");
    FAILS_AT("def main(xs: [N]i32, ys: [N]i32) = zip(xs, ys) |> scan((a, b) => (a.0 + b.0, a.1 + b.1), 0)",
             "0)", "neutral", "(i32, i32)");
    FAILS_AT("def main(is: [N]i32, H: i64) = reduce_by_index(replicate(H, 0), +, 0.0, is, replicate(N, 1))",
             "0.0", "neutral", "f32", "i32");
}
END_TEST

START_TEST(operator_result_type) {
    FAILS_AT("def main(xs: [N]i32) = xs |> scan(<, 0)", "<", "return", "i32", "bool");
    FAILS_AT("def main(xs: [N]i32) = xs |> reduce((a, b) => a == b, 0)", "(a, b)", "return", "bool");
    FAILS_AT("def main(xs: [N]f32) = xs |> scan(&, 0.0)", "&", "`&`", "f32");
}
END_TEST

/* reduce_by_index's operator returning the wrong type: the message should
 * say so, as scan's does, not that the parameters are wrong. */
START_TEST(reduce_by_index_operator_result) {
    FAILS_AT("def main(is: [N]i32, H: i64) = reduce_by_index(replicate(H, 0), (a, b) => a < b, 0, is, replicate(N, 1))",
             "(a, b)", "return", "bool");
}
END_TEST

START_TEST(declared_result_type) {
    const char *src = "def main(xs: [N]f32): [N]i32 =\n  xs |> scan(+, 0.0)";
    FAILS_AT(src, "[N]i32", "[N]i32", "[N]f32");
    FAILS_AT("def main(xs: [N]f32): [N]f32 where N % 2 == 0 = xs |> split(2)", "[N]f32 where", "[N/2][2]f32");
    FAILS_AT("def main(x: i32): (i32, f32) = (x, x)", "(i32, f32)", "(i32, f32)", "(i32, i32)");
}
END_TEST

START_TEST(unknown_names) {
    FAILS_AT("def main(xs: [N]f32) = ys |> scan(+, 0.0)", "ys", "unknown name `ys`", "did you mean `xs`");
    FAILS_AT("def main(values: [N]f32) = valeus |> map(v => v)", "valeus", "did you mean `values`");
    FAILS_AT("def main(xs: [N]f32) = xs |> map(elem => elme * 2.0)", "elme", "did you mean `elem`");
    FAILS_AT("def main(xs: [N]f32) = qqqqq", "qqqqq", "unknown name `qqqqq`");
    FAILS_AT("def main(xs: [N]f32) = xs |> scna(+, 0.0)", "scna", "unknown function `scna`", "did you mean `scan`");
    FAILS_AT("def main(xs: [N]f32) = reduce_by_idx(xs)", "reduce_by_idx", "`reduce_by_index`");
    FAILS_AT("def main(xs: [N]f32) = foo(xs)", "foo", "unknown function `foo`");
    /* a primitive named without a call */
    FAILS_AT("def main(xs: [N]f32) = (xs, map)", "map", "`map`", "primitive");
    /* a let name is out of scope after its body */
    FAILS_AT("def main(x: i32) = (let y = x in y, y)", "y)", "unknown name `y`");
}
END_TEST

START_TEST(lambda_arity) {
    FAILS_AT("def main(xs: [N]f32) = xs |> map((a, b) => a)", "(a, b)", "2 parameters", "map", "1");
    FAILS_AT("def main(xs: [N]f32) = xs |> reduce(x => x, 0.0)", "x =>", "1 parameter", "reduce", "2");
    FAILS_AT("def main(xs: [N]i32, ys: [N]i32) = zip(xs, ys) |> map((a, b, c) => a)", "(a, b, c)", "3 parameters");
    FAILS_AT("def main(xs: [N]f32) = xs |> map((x: i32) => x)", "x: i32", "f32", "i32");
    FAILS_AT("def main(xs: [N]f32) = xs |> reduce((a, a) => a, 0.0)", "a) =>", "`a`", "twice");
}
END_TEST

START_TEST(function_versus_value) {
    /* a value where a function is expected */
    FAILS_AT("def main(xs: [N]f32) = xs |> map(1)", "1)", "map", "function");
    FAILS_AT("def main(xs: [N]f32, f: f32) = xs |> map(f)", "f)", "function");
    FAILS_AT("def main(xs: [N]f32) = xs |> reduce(min(1.0, 2.0), 0.0)", "min(", "function");
    /* a function where a value is expected */
    FAILS_AT("def main(xs: [N]f32) = replicate(N, +)", "+", "function");
    FAILS_AT("def main(xs: [N]f32) = let f = (x: f32) => x in f", "(x: f32)", "lambda");
    FAILS_AT("def main(xs: [N]f32) = (xs, x => x)", "x =>", "lambda");
    FAILS_AT("def main(xs: [N]f32) = min", "min", "`min`", "function");
    /* an operator that cannot combine the elements */
    FAILS_AT("def main(xs: [N](f32, f32)) = xs |> reduce(+, (0.0, 0.0))", "+", "`+`", "lambda");
}
END_TEST

START_TEST(argument_counts) {
    FAILS_AT("def main(xs: [N]f32) = xs |> scan(+, 0.0, xs, xs, xs)", "scan", "scan", "3, 4 or 5", "6");
    /* four arguments are a scan with a fold: the second must be a function */
    FAILS_AT("def main(xs: [N]f32) = xs |> scan(+, 1.0, 0.0)", "1.0", "scan", "function");
    FAILS_AT("def main(xs: [N]f32) = map(xs)", "map", "map", "2", "1");
    FAILS_AT("def main(x: i32) = i64(x, x)", "i64", "one value");
    FAILS_AT("def main(x: i32) = min(x)", "min", "2 arguments");
}
END_TEST

START_TEST(duplicates) {
    FAILS_AT("def main(xs: [N]f32, ys: [N]f32, xs: [N]f32) = xs", "xs: [N]f32) =", "`xs`", "twice");
    FAILS_AT("def f(x: i32) = x\ndef g(x: i32) = x\ndef f(y: i32) = y\n", "f(y", "`f`", "twice", "line 1");
    FAILS_AT("def main(x: i32) = let (a, a) = (x, x) in a", "a) =", "`a`", "twice");
}
END_TEST

START_TEST(if_types) {
    FAILS_AT("def main(c: bool) = if c then 1 else 2.0", "2.0", "branches", "i32", "f32");
    FAILS_AT("def main(c: bool, xs: [N]f32, ys: [M]f32) = if c then xs else ys", "else `ys",
             "[N]f32", "[M]f32");
    FAILS_AT("def main(x: i32) = if x then 1 else 2", "x then", "condition", "bool", "i32");
    ck_assert_result("def main(x: i64, c: bool) = if c then 1 else x", "i64");
}
END_TEST

START_TEST(projections) {
    FAILS_AT("def main(p: (i32, f32)) = p.2", ".2", "`.2`", "out of range", "2 components");
    FAILS_AT("def main(x: i32) = x.0", ".0", "`.0`", "tuple", "i32");
    FAILS_AT("def main(xs: [N](i32, f32)) = xs.1", ".1", "tuple", "[N](i32, f32)");
    ck_assert_result("def main(p: ((i32, f32), bool)) = (p.0.1, p.1)", "(f32, bool)");
}
END_TEST

START_TEST(scatter_and_histogram) {
    FAILS_AT("def main(xs: [N]i32, is: [N]f32) = scatter(replicate(N, 0), is, xs)", "is, xs", "integer indices", "[N]f32");
    FAILS_AT("def main(xs: [N]i32, is: [M]i64) = scatter(replicate(N, 0), is, xs)", "xs)", "as many values as indices");
    FAILS_AT("def main(xs: [N]f32, is: [N]i64) = scatter(replicate(N, 0), is, xs)", "xs)", "f32", "i32");
    FAILS_AT("def main(is: [N]i32, vs: [N]f32, H: i64) = reduce_by_index(replicate(H, 0), +, 0, is, vs)",
             "vs)", "values", "f32", "i32");
    FAILS_AT("def main(is: [N]f64, H: i64) = reduce_by_index(replicate(H, 0), +, 0, is, replicate(N, 1))",
             "is, rep", "integer indices");
    ck_assert_result("def main(is: [N]i32, H: i64): [H]i32 = reduce_by_index(replicate(H, 0), +, 0, is, replicate(N, 1))",
                     "[H]i32");
    ck_assert_result("def main(is: [N]u64, vs: [N]f64, H: i64) = reduce_by_index(replicate(H, 0.0f64), max, -f64.inf, is, vs)",
                     "[H]f64");
}
END_TEST

START_TEST(let_patterns) {
    FAILS_AT("def main(x: i32) = let (a, b) = (1, 2, 3) in a", "let", "2 names", "(i32, i32, i32)");
    FAILS_AT("def main(x: i32) = let (a, b, c) = x in a", "let", "3 names", "i32");
    FAILS_AT("def main(xs: [N]f32) = let (a, b) = xs in a", "let", "[N]f32");
    FAILS_AT("def main(xs: [N]f32) = let ys: [N]i32 = xs in ys", "ys:", "[N]f32", "[N]i32");
    ck_assert_result("def main(xs: [N]f32) = let (a, b) = (xs, 1) in (b, a)", "(i32, [N]f32)");
    ck_assert_result("def main(xs: [N](f32, i64)) = let (a, b) = xs |> unzip in zip(b, a)", "[N](i64, f32)");
}
END_TEST

/* ---- scan and reduce with a fold (and a post-function), scatter of pairs ----
 *
 * In scan(op, fold, z, xs), scan(op, fold, post, z, xs) and
 * reduce(op, fold, z, xs) the accumulator's type A is z's, typed on its own
 * (no hint from the elements); op: (A, A) -> A, fold: (A, T) -> A,
 * post: (A, T) -> B. scatter(dest, ivs) takes [n](I, T) pairs, I an integer. */

START_TEST(fold_forms_well_typed) {
    ck_assert_result("def main(xs: [N]i32) = xs |> scan(+, (acc, x) => acc + i64(x), 0i64)", "[N]i64");
    ck_assert_result("def main(xs: [N]i32) = xs |> scan(+, (acc, x) => acc + i64(x), (acc, x) => (acc, x > 0), 0i64)",
                     "[N](i64, bool)");
    ck_assert_result("def main(xs: [N]i32) = xs |> scan(+, (acc, x) => acc + i64(x), (acc, x) => f64(acc) * 0.5f64, 0i64)",
                     "[N]f64");
    ck_assert_result("def main(xs: [N]i32) = xs |> reduce(+, (acc, x) => acc + f32(x), 0.0)", "f32");
    /* operators as fold and post where A = T */
    ck_assert_result("def main(xs: [N]i32) = xs |> scan(+, max, +, 0)", "[N]i32");
    ck_assert_result("def main(xs: [N]u32) = xs |> reduce(+, +, 0u32)", "u32");
    /* a tuple accumulator over scalar elements; tuple elements into a scalar */
    ck_assert_result("def main(xs: [N]i32) =\n"
                     "  xs |> scan((a, b) => (a.0 + b.0, max(a.1, b.1)), (acc, x) => (acc.0 + 1i64, max(acc.1, x)), (0i64, -100))",
                     "[N](i64, i32)");
    ck_assert_result("def main(xs: [N]i32, ys: [N]f32) = zip(xs, ys) |> reduce(+, (acc, p) => acc + f64(p.1) * f64(p.0), 0.0f64)",
                     "f64");
    /* an array accumulator: the result of reduce is [3]i32, of scan [N][3]i32 */
    ck_assert_result("def main(xs: [N]i32) =\n"
                     "  xs |> reduce((a, b) => zip(a, b) |> map((x, y) => x + y), (acc, x) => acc |> map(a => a + x), replicate(3, 0))",
                     "[3]i32");
    ck_assert_result("def main(xs: [N]i32) =\n"
                     "  xs |> scan((a, b) => zip(a, b) |> map((x, y) => x + y), (acc, x) => acc |> map(a => a + x), replicate(3, 0))",
                     "[N][3]i32");
    /* the declared result checks against the post-function's type */
    ck_assert_result("def main(xs: [N]i32): [N]bool = xs |> scan(+, +, (acc, x) => acc > x, 0)", "[N]bool");
    FAILS_AT("def main(xs: [N]i32): [N]i32 = xs |> scan(+, +, (acc, x) => acc > x, 0)", "[N]i32 =", "[N]bool");
}
END_TEST

/* The neutral element of the fold forms gets no hint from the elements: an
 * unsuffixed 0 is an i32 there, while the 3-argument form makes it an i64. */
START_TEST(fold_forms_neutral_typed_alone) {
    ck_assert_result("def main(xs: [N]i64) = xs |> scan(+, 0)", "[N]i64");
    ck_assert_result("def main(xs: [N]i64) = xs |> reduce(+, 0)", "i64");
    ck_assert_result("def main(xs: [N]i64) = xs |> scan(+, (acc, x) => acc + x, 0i64)", "[N]i64");
    ck_assert_result("def main(xs: [N]i64) = xs |> scan(+, (acc, x) => acc + i32(x), 0)", "[N]i32");
    /* acc is an i32, x an i64: the fold's `+` is wrong, at its right operand */
    FAILS_AT("def main(xs: [N]i64) = xs |> scan(+, (acc, x) => acc + x, 0)", "+ `x,", "`+`", "i32", "i64");
    FAILS_AT("def main(xs: [N]i64) = xs |> reduce(+, (acc, x) => acc + x, 0)", "+ `x,", "`+`", "i32", "i64");
    FAILS_AT("def main(xs: [N]f64) = xs |> reduce(+, (acc, x) => acc + x, 0.0)", "+ `x,", "f32", "f64");
    /* the operator is typed from the neutral element, not from the elements */
    FAILS_AT("def main(xs: [N]i32) = xs |> scan((a: i32, b: i32) => a + b, (acc, x) => acc + i64(x), 0i64)",
             "a: i32", "i64", "i32");
}
END_TEST

START_TEST(fold_parameter_types) {
    /* the fold takes (A, T): the accumulator first, then the element */
    FAILS_AT("def main(xs: [N]i32) = xs |> scan(+, (acc: i32, x) => acc + x, 0i64)", "acc: i32", "i64", "i32");
    FAILS_AT("def main(xs: [N]i32) = xs |> scan(+, (acc, x: i64) => acc + x, 0i64)", "x: i64", "i32", "i64");
    FAILS_AT("def main(xs: [N]i32) = xs |> reduce(+, (x: i32, acc: i64) => acc, 0i64)", "x: i32", "i64", "i32");
    FAILS_AT("def main(xs: [N]i32) = xs |> scan(+, (acc, x) => acc + i64(x), (x: i32, acc: i64) => acc, 0i64)",
             "x: i32, acc", "i64", "i32");
    /* an operator as the fold needs A = T */
    FAILS_AT("def main(xs: [N]i32) = xs |> scan(+, +, 0i64)", "(+, `+", "`+`", "(i64, i32)", "lambda");
    FAILS_AT("def main(xs: [N]i32) = xs |> reduce(+, max, 0u32)", "max", "`max`", "(u32, i32)");
    /* the fold takes two parameters; it is not given the element's components */
    FAILS_AT("def main(xs: [N]i32) = xs |> scan(+, acc => acc, 0i64)", "acc =>", "1 parameter", "scan", "2",
             "(i64, i32)");
    FAILS_AT("def main(xs: [N]i32, ys: [N]i32) = zip(xs, ys) |> reduce(+, (acc, x, y) => acc + x + y, 0)",
             "(acc, x, y)", "3 parameters", "reduce", "(i32, (i32, i32))");
    /* a value where the fold should be */
    FAILS_AT("def main(xs: [N]i32) = xs |> reduce(+, 1, 0)", "1, 0", "reduce", "function");
    FAILS_AT("def main(xs: [N]i32, k: i64) = xs |> scan(+, k, 0i64)", "k, 0", "scan", "function");
}
END_TEST

START_TEST(fold_must_return_the_accumulator) {
    FAILS_AT("def main(xs: [N]i32) = xs |> scan(+, (acc, x) => x, 0i64)", "(acc, x) => x", "fold must return", "i64",
             "i32");
    FAILS_AT("def main(xs: [N]i32) = xs |> reduce(+, (acc, x) => acc > 0i64, 0i64)", "(acc, x)", "fold must return",
             "i64", "bool");
    FAILS_AT("def main(xs: [N]i32) = xs |> scan(+, (acc, x) => x, (acc, x) => acc, 0i64)", "(acc, x) => x,",
             "fold must return", "i64", "i32");
    FAILS_AT("def main(xs: [N]i32) =\n"
             "  xs |> scan((a, b) => (a.0 + b.0, a.1 + b.1), (acc, x) => (acc.0, x), (0i64, 0i64))",
             "(acc, x)", "fold must return", "(i64, i64)", "(i64, i32)");
    /* and the operator must return the accumulator too */
    FAILS_AT("def main(xs: [N]i32) = xs |> scan((a, b) => a > b, (acc, x) => acc + i64(x), 0i64)", "(a, b)",
             "operator must return", "i64", "bool");
    FAILS_AT("def main(xs: [N]i32) = xs |> reduce(<, (acc, x) => acc + i64(x), 0i64)", "<", "operator must return",
             "bool");
    /* a post-function may return anything: no such error for it */
    ck_assert_result("def main(xs: [N]i32) = xs |> scan(+, (acc, x) => acc + i64(x), (acc, x) => x, 0i64)", "[N]i32");
}
END_TEST

START_TEST(post_function_errors) {
    FAILS_AT("def main(xs: [N]i32) = xs |> scan(+, (acc, x) => acc + i64(x), a => a, 0i64)", "a => a",
             "1 parameter", "scan", "2", "(i64, i32)");
    FAILS_AT("def main(xs: [N]i32) = xs |> scan(+, (acc, x) => acc + i64(x), (a, b, c) => a, 0i64)", "(a, b, c)",
             "3 parameters", "2");
    FAILS_AT("def main(xs: [N]i32) = xs |> scan(+, (acc, x) => acc + i64(x), 3, 0i64)", "3, 0i64", "scan", "function");
    FAILS_AT("def main(xs: [N]i32) = xs |> scan(+, (acc, x) => acc + i64(x), +, 0i64)", "+, 0i64", "`+`",
             "(i64, i32)");
    FAILS_AT("def main(xs: [N]i32) = xs |> scan(+, (acc, x) => acc + i64(x), (a, x: f32) => a, 0i64)", "x: f32",
             "i32", "f32");
    /* a post-function of the right arity whose body is wrong: at the body */
    FAILS_AT("def main(xs: [N]i32) = xs |> scan(+, (acc, x) => acc + i64(x), (a, x) => a + x, 0i64)", "a + `x,",
             "`+`", "i64", "i32");
}
END_TEST

START_TEST(scatter_pairs_types) {
    FAILS_AT("def main(xs: [N]i32, fs: [N]f32) = scatter(replicate(N, 0), zip(fs, xs))", "zip", "(index, value) pairs",
             "[N](f32, i32)");
    FAILS_AT("def main(xs: [N]i32, is: [N]bool) = scatter(replicate(N, 0), zip(is, xs))", "zip", "pairs",
             "[N](bool, i32)");
    /* the values must be the destination's elements */
    FAILS_AT("def main(xs: [N]i32, is: [N]u32) = scatter(replicate(N, 0.0), zip(is, xs))", "zip", "pairs", "f32",
             "[N](u32, i32)");
    FAILS_AT("def main(xs: [N]i32, is: [N]u32) = scatter(replicate(N, 0), zip(xs, is))", "zip", "pairs",
             "[N](i32, u32)");
    /* not pairs */
    FAILS_AT("def main(xs: [N]i32, is: [N]u32) = scatter(replicate(N, 0), zip(is, xs, xs))", "zip", "pairs",
             "[N](u32, i32, i32)");
    FAILS_AT("def main(xs: [N]i32) = scatter(replicate(N, 0), xs)", "xs)", "pairs", "[N]i32");
    FAILS_AT("def main(xs: [N]i32, is: [N]u32) = scatter(replicate(N, 0), (is, xs))", "(is, xs)", "pairs",
             "([N]u32, [N]i32)");
    FAILS_AT("def main(p: (i64, i32)) = scatter(replicate(3, 0), p)", "p)", "pairs", "(i64, i32)");
    FAILS_AT("def main(xs: [N]i32, is: [N]u32) = scatter(3, zip(is, xs))", "3,", "destination", "i32");
    /* pairs given where three arguments expect indices */
    FAILS_AT("def main(xs: [N]i32) = scatter(replicate(N, 0), zip(iota(N), xs), xs)", "zip", "integer indices",
             "[N](i64, i32)");
    FAILS_AT("def main(xs: [N]i32) = scatter(replicate(N, 0))", "scatter", "scatter takes", "given 1");
    FAILS_AT("def main(xs: [N]i32) = scatter(replicate(N, 0), zip(iota(N), xs), xs, xs)", "scatter", "scatter takes",
             "given 4");
    /* any integer type indexes; the pairs need not be as many as the destination */
    ck_assert_result("def main(vs: [N]f32, is: [N]u32) = scatter(replicate(4, 0.0), zip(is, vs))", "[4]f32");
    ck_assert_result("def main(xs: [N]i32, is: [M]u64) = scatter(replicate(N, 0), zip(is, replicate(M, 1)))", "[N]i32");
    ck_assert_result("def main(ivs: [M](i32, i32), dest: [N]i32) = ivs |> scatter(dest)", "[N]i32");
    ck_assert_result("def main(xs: [N](i64, (i32, f32))) = scatter(zip(replicate(4, 0), replicate(4, 0.0)), xs)",
                     "[4](i32, f32)");
}
END_TEST

START_TEST(fold_form_argument_counts) {
    FAILS_AT("def main(xs: [N]i32) = scan(+, (acc, x) => acc + i64(x), (a, x) => x, 0i64, xs, xs)", "scan",
             "scan takes 3, 4 or 5 arguments", "given 6");
    FAILS_AT("def main(xs: [N]i32) = xs |> scan(+, (acc, x) => acc + i64(x), (a, x) => x, 0i64, xs)", "scan",
             "3, 4 or 5", "6");
    FAILS_AT("def main(xs: [N]i32) = xs |> scan(+)", "scan", "3, 4 or 5", "given 2");
    FAILS_AT("def main(xs: [N]i32) = xs |> reduce(+, (acc, x) => acc + i64(x), (a, x) => x, 0i64)", "reduce",
             "reduce takes 3 or 4 arguments", "given 5");
    FAILS_AT("def main(xs: [N]i32) = xs |> reduce(+)", "reduce", "3 or 4", "given 2");
}
END_TEST

/* ---- well-typed programs from DESIGN.md ---- */

START_TEST(design_programs) {
    ck_assert_result("def main(xs: [N]f32): [N]f32 =\n  xs |> scan(+, 0.0)", "[N]f32");
    ck_assert_result("def advanced(as: [N]i32) =\n"
                     "  let (bs, cs) = as |> map(a => (a - 1, a + 1)) |> unzip\n"
                     "  let (ds, es) = zip(bs, cs) |> scan((x, y) => (x.0 + y.0, x.1 + y.1), (0, 0)) |> unzip\n"
                     "  in (as, bs, cs, ds, es)",
                     "([N]i32, [N]i32, [N]i32, [N]i32, [N]i32)");
    ck_assert_result("def hist(is: [N]i32, H: i64): [H]i32 =\n"
                     "  reduce_by_index(replicate(H, 0), +, 0, is, replicate(N, 1))",
                     "[H]i32");
    ck_assert_result("def main(xs: [N]f32, ys: [N]f32) = zip(xs, ys) |> map((x, y) => x * y) |> reduce(+, 0.0)", "f32");
    ck_assert_result("def main(xs: [N]f32): [N/256]f32 where N % 256 == 0 =\n"
                     "  xs |> split(256) |> map(row => row |> reduce(+, 0.0))",
                     "[N/256]f32");
    /* size variables are i64 values */
    ck_assert_result("def main(xs: [N]f32) = iota(N) |> map(i => f32(i) + 0.5)", "[N]f32");
    ck_assert_result("def main(xs: [N]i32) = xs |> iterate(3, ys => ys |> map(y => y * 2))", "[N]i32");
    ck_assert_result("def main(xs: [N]i32) = xs |> reduceSeq((acc, x) => acc + i64(x), 0i64)", "i64");
}
END_TEST

int main(void) {
    Suite *s = suite_create("types");
    TCase *tc = tcase_create("types");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, zip_of_different_lengths);
    tcase_add_test(tc, split_needs_a_divisor);
    tcase_add_test(tc, sizes_from_parameters);
    tcase_add_test(tc, replicate_needs_a_size);
    tcase_add_test(tc, join_split_transpose);
    tcase_add_test(tc, operator_operand_types);
    tcase_add_test(tc, unary_operand_types);
    tcase_add_test(tc, literal_never_becomes_float);
    tcase_add_test(tc, literal_range);
    tcase_add_test(tc, literals_typed_through_expressions);
    tcase_add_test(tc, errors_on_later_lines);
    tcase_add_test(tc, neutral_element_type);
    tcase_add_test(tc, operator_result_type);
    tcase_add_test(tc, reduce_by_index_operator_result);
    tcase_add_test(tc, declared_result_type);
    tcase_add_test(tc, unknown_names);
    tcase_add_test(tc, lambda_arity);
    tcase_add_test(tc, function_versus_value);
    tcase_add_test(tc, argument_counts);
    tcase_add_test(tc, duplicates);
    tcase_add_test(tc, if_types);
    tcase_add_test(tc, projections);
    tcase_add_test(tc, scatter_and_histogram);
    tcase_add_test(tc, let_patterns);
    tcase_add_test(tc, design_programs);
    tcase_add_test(tc, fold_forms_well_typed);
    tcase_add_test(tc, fold_forms_neutral_typed_alone);
    tcase_add_test(tc, fold_parameter_types);
    tcase_add_test(tc, fold_must_return_the_accumulator);
    tcase_add_test(tc, post_function_errors);
    tcase_add_test(tc, scatter_pairs_types);
    tcase_add_test(tc, fold_form_argument_counts);
    tcase_add_test(tc, every_primitive_has_a_row);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
