/* tests/test_syntax.c — every construct of the surface syntax parses and
 * means what DESIGN.md's "Surface syntax" says, and bad text fails with a
 * located, readable error (never a crash: the suites run under ASan).
 *
 * Most tests read a program and compare its entry's body, rendered as an
 * S-expression by sexp() below, with a hand-written expectation. The
 * rendering shows node kinds, operator and primitive names, argument order
 * and the type of every literal (`1:i64`), so one string pins all of them. */
#include "harness.h"

#include <math.h>
#include <stdio.h>

static st_ctx *cx;

static void setup(void) { cx = st_ctx_new(); }
static void teardown(void) { st_ctx_free(cx); }

/* ---- helpers ---- */

static const st_def *entry(const char *src) {
    const st_program *p = parse_ok(cx, src);
    st_err err = {0};
    const st_def *d = st_program_entry(p, NULL, &err);
    ck_assert_msg(d != NULL, "%s", err.message);
    return d;
}

static const st_node *body(const char *src) { return entry(src)->body; }

static void sexp_into(const st_node *n, st_buf *b);

static void sexp_list(const char *head, const st_node *const *kids, uint32_t n, st_buf *b) {
    st_buf_printf(b, "(%s", head);
    for (uint32_t i = 0; i < n; i++) {
        st_buf_puts(b, " ");
        sexp_into(kids[i], b);
    }
    st_buf_puts(b, ")");
}

/* Parameter or pattern names of a LAMBDA or LET as "(a b)". */
static void sexp_names(const st_node *const *vars, uint32_t n, st_buf *b) {
    st_buf_puts(b, "(");
    for (uint32_t i = 0; i < n; i++) st_buf_printf(b, "%s%s", i ? " " : "", vars[i]->u.name);
    st_buf_puts(b, ")");
}

static void sexp_into(const st_node *n, st_buf *b) {
    switch (n->kind) {
    case ST_NODE_LIT:
        st_scalar_format(n->type->scalar, n->u.lit, b);
        st_buf_printf(b, ":%s", st_scalar_name(n->type->scalar));
        return;
    case ST_NODE_VAR: st_buf_puts(b, n->u.name); return;
    case ST_NODE_TUPLE: sexp_list("tuple", n->kids, n->nkids, b); return;
    case ST_NODE_PROJ: {
        char head[16];
        snprintf(head, sizeof head, ".%u", n->u.index);
        sexp_list(head, n->kids, 1, b);
        return;
    }
    case ST_NODE_UNOP: sexp_list(n->u.unop == ST_OP_NEG ? "neg" : "not", n->kids, 1, b); return;
    case ST_NODE_BINOP: sexp_list(st_binop_name(n->u.binop), n->kids, 2, b); return;
    case ST_NODE_CONV: sexp_list(st_scalar_name(n->u.conv), n->kids, 1, b); return;
    case ST_NODE_IF: sexp_list("if", n->kids, 3, b); return;
    case ST_NODE_LET:
        st_buf_puts(b, "(let ");
        sexp_names(n->kids, st_let_nvars(n), b);
        st_buf_puts(b, " ");
        sexp_into(st_let_value(n), b);
        st_buf_puts(b, " ");
        sexp_into(st_let_body(n), b);
        st_buf_puts(b, ")");
        return;
    case ST_NODE_LAMBDA:
        st_buf_puts(b, "(fn ");
        sexp_names(n->kids, st_lambda_nparams(n), b);
        st_buf_puts(b, " ");
        sexp_into(st_lambda_body(n), b);
        st_buf_puts(b, ")");
        return;
    case ST_NODE_OPFN: st_buf_puts(b, st_binop_name(n->u.binop)); return;
    case ST_NODE_PRIM: sexp_list(st_prim_get(n->u.prim)->name, n->kids, n->nkids, b); return;
    }
}

/* Assert that the entry body of src renders as `want`. */
#define ck_assert_sexp(src, want)                                                          \
    do {                                                                                   \
        st_buf b_ = {0};                                                                   \
        sexp_into(body(src), &b_);                                                         \
        ck_assert_msg(b_.data && strcmp(b_.data, (want)) == 0,                             \
                      "\n  source: %s\n  got:    %s\n  want:   %s", (src), b_.data, (want)); \
        st_buf_free(&b_);                                                                  \
    } while (0)

static const char *type_str(const st_type *t) {
    static char text[256];
    st_buf b = {0};
    st_type_print(t, &b);
    snprintf(text, sizeof text, "%s", b.data ? b.data : "");
    st_buf_free(&b);
    return text;
}

/* Line and column of the first occurrence of `needle` in src, which must be
 * unique (a needle may run past the token to make it so): where an error
 * about the token at its start has to point. */
static st_loc loc_of(const char *src, const char *needle) {
    const char *at = strstr(src, needle);
    ck_assert_msg(at != NULL, "test bug: `%s` is not in the source", needle);
    ck_assert_msg(strstr(at + 1, needle) == NULL, "test bug: `%s` is not unique", needle);
    st_loc l = {"test.strata", 1, 1};
    for (const char *p = src; p < at; p++) {
        if (*p == '\n') l.line++, l.col = 1;
        else l.col++;
    }
    return l;
}

#define ck_assert_error_at(src, needle, part)                                              \
    do {                                                                                   \
        st_loc l_ = loc_of((src), (needle));                                               \
        ck_assert_error(cx, (src), l_.line, l_.col, (part));                               \
    } while (0)

/* A source of `n` copies of `piece` between `head` and `tail` (malloc'ed). */
static char *repeat(const char *head, const char *piece, int n, const char *tail) {
    size_t hl = strlen(head), pl = strlen(piece), tl = strlen(tail);
    char *s = malloc(hl + pl * (size_t)n + tl + 1);
    ck_assert_ptr_nonnull(s);
    memcpy(s, head, hl);
    for (int i = 0; i < n; i++) memcpy(s + hl + pl * (size_t)i, piece, pl);
    memcpy(s + hl + pl * (size_t)n, tail, tl + 1);
    return s;
}

/* Parse a long generated source; on failure report the error, never the
 * source (Check cannot carry a message that long). */
static const st_program *parse_long(const char *src, st_err *err) {
    *err = (st_err){0};
    return st_parse_program(cx, "test.strata", src, strlen(src), err);
}

/* ---- literals ---- */

START_TEST(literal_suffixes) {
    ck_assert_sexp("def main() = (1, 2u32, 3i64, 4u64, 5f32, 6f64, 7i32)",
                   "(tuple 1:i32 2:u32 3:i64 4:u64 5.0:f32 6.0:f64 7:i32)");
    ck_assert_sexp("def main() = (2.5, 2.5f32, 2.5f64, true, false)",
                   "(tuple 2.5:f32 2.5:f32 2.5:f64 true:bool false:bool)");
    /* an integer spelt with a float suffix is a float, exactly */
    const st_node *n = body("def main() = 16777217f64");
    ck_assert_int_eq(n->kind, ST_NODE_LIT);
    ck_assert(n->u.lit.f64 == 16777217.0);
}
END_TEST

START_TEST(float_exponents) {
    ck_assert_sexp("def main() = (1.5e3, 2e-3f64, 1E10, 2.5e+2f32, 7e0, 1.25E-1f64)",
                   "(tuple 1500.0:f32 0.002:f64 1e+10:f32 250.0:f32 7.0:f32 0.125:f64)");
    const st_node *n = body("def main() = 1e-30");
    ck_assert(n->u.lit.f32 == 1e-30f);
    n = body("def main() = 0.1f64");
    ck_assert(n->u.lit.f64 == 0.1);
    n = body("def main() = 0.1");
    ck_assert(n->u.lit.f32 == 0.1f); /* rounded once, to the nearest float */
}
END_TEST

START_TEST(negative_literals) {
    /* the minus is part of the literal: -2147483648 fits in i32 */
    ck_assert_sexp("def main() = (-2147483648, -1i64, -2.5, - 7, -(3), -9223372036854775808i64)",
                   "(tuple -2147483648:i32 -1:i64 -2.5:f32 -7:i32 -3:i32 -9223372036854775808:i64)");
    const st_node *z = body("def main() = -0.0");
    ck_assert_int_eq(z->kind, ST_NODE_LIT);
    ck_assert(z->u.lit.f32 == 0.0f && signbit(z->u.lit.f32));
    /* negating a negative literal gives the positive literal, not a node */
    ck_assert_sexp("def main() = -(-5)", "5:i32");
    ck_assert_sexp("def main() = - -5", "5:i32");
}
END_TEST

START_TEST(type_constants) {
    ck_assert_sexp("def main() = (f32.inf, -f32.inf, f64.inf, i32.min, i32.max, u32.max, i64.min, u64.max, u64.min)",
                   "(tuple inf:f32 -inf:f32 inf:f64 -2147483648:i32 2147483647:i32 4294967295:u32 "
                   "-9223372036854775808:i64 18446744073709551615:u64 0:u64)");
    const st_node *n = body("def main() = (f32.nan, f64.nan)");
    ck_assert(isnan(n->kids[0]->u.lit.f32));
    ck_assert(isnan(n->kids[1]->u.lit.f64));
    ck_assert_str_eq(type_str(n->type), "(f32, f64)");
}
END_TEST

START_TEST(literal_types_from_context) {
    ck_assert_sexp("def main(x: i64) = x + 1", "(+ x 1:i64)");
    ck_assert_sexp("def main(x: i64) = 1 + x", "(+ 1:i64 x)");
    ck_assert_sexp("def main(x: u32) = x < 7", "(< x 7:u32)");
    ck_assert_sexp("def main(x: f64) = x * 2.0", "(* x 2.0:f64)");
    ck_assert_sexp("def main(xs: [N]u64) = xs |> scan(+, 0)", "(scan + 0:u64 xs)");
    ck_assert_sexp("def main(xs: [N]f64) = xs |> reduce(+, 0.5)", "(reduce + 0.5:f64 xs)");
    ck_assert_sexp("def main(): u64 = 7", "7:u64");
    ck_assert_sexp("def main(): (i64, f64) = (1, 2.0)", "(tuple 1:i64 2.0:f64)");
    ck_assert_sexp("def main() = let y = 1 in let z = 1.5 in (y, z)",
                   "(let (y) 1:i32 (let (z) 1.5:f32 (tuple y z)))");
    /* the neutral element of a scan over pairs takes the pair's types */
    ck_assert_sexp("def main(xs: [N]i64, ys: [N]f64) = zip(xs, ys) |> scan((a, b) => (a.0 + b.0, a.1 + b.1), (0, 0.0))",
                   "(scan (fn (a b) (tuple (+ (.0 a) (.0 b)) (+ (.1 a) (.1 b)))) (tuple 0:i64 0.0:f64) (zip xs ys))");
}
END_TEST

/* ---- names, comments, tuples ---- */

START_TEST(comments) {
    const char *src =
        "-- a comment before anything\n"
        "def main(x: i32) = -- after the `=`\n"
        "  -- a line of its own\n"
        "  x + 1 -- after code\n"
        "-- at the end, without a newline";
    ck_assert_sexp(src, "(+ x 1:i32)");
    /* `--` starts a comment even right after an operand: x--1 is x */
    ck_assert_sexp("def main(x: i32) = x--1\n", "x");
    ck_assert_sexp("def main(x: i32) = x - -1", "(- x -1:i32)");
}
END_TEST

START_TEST(identifiers) {
    const st_def *d = entry("def main(x_1: i32, _y: i32, a2b3: i32, N_2: i64) = x_1 + _y + a2b3");
    ck_assert_uint_eq(d->nparams, 4);
    ck_assert_str_eq(d->params[0]->u.name, "x_1");
    ck_assert_str_eq(d->params[1]->u.name, "_y");
    ck_assert_str_eq(d->params[2]->u.name, "a2b3");
    ck_assert_str_eq(d->params[3]->u.name, "N_2");
    ck_assert_sexp("def main(x_1: i32, _y: i32, a2b3: i32) = x_1 + _y + a2b3", "(+ (+ x_1 _y) a2b3)");
    /* keywords are not names; a name may start with a keyword */
    ck_assert_sexp("def main(iffy: i32, lets: i32, into: i32) = iffy + lets + into",
                   "(+ (+ iffy lets) into)");
}
END_TEST

START_TEST(tuples_and_projections) {
    /* p.0.1 projects twice: the lexer must not read `0.1` as a float */
    ck_assert_sexp("def main(p: ((i32, f32), bool)) = (p.0.1, p.1, p.0)",
                   "(tuple (.1 (.0 p)) (.1 p) (.0 p))");
    const st_node *n = body("def main(p: ((i32, f32), bool)) = p.0.1");
    ck_assert_str_eq(type_str(n->type), "f32");
    ck_assert_sexp("def main() = (1, (2, 3)).1.0", "(.0 (.1 (tuple 1:i32 (tuple 2:i32 3:i32))))");
    ck_assert_sexp("def main(p: (i32, i32)) = p . 1", "(.1 p)");
    ck_assert_sexp("def main() = ((1, 2.5), (true, (4u64, 5)))",
                   "(tuple (tuple 1:i32 2.5:f32) (tuple true:bool (tuple 4:u64 5:i32)))");
    /* parentheses around one expression make no tuple */
    ck_assert_sexp("def main(x: i32) = ((x))", "x");
}
END_TEST

/* ---- operators ---- */

START_TEST(precedence_is_c) {
    const char *head = "def main(a: i32, b: i32, c: i32, q: bool, r: bool, s: bool) = ";
    static const struct { const char *expr, *want; } cases[] = {
        {"a + b * c", "(+ a (* b c))"},
        {"a * b + c", "(+ (* a b) c)"},
        {"a - b - c", "(- (- a b) c)"},
        {"a / b * c", "(* (/ a b) c)"},
        {"a % b / c", "(/ (% a b) c)"},
        {"(a + b) * c", "(* (+ a b) c)"},
        {"a - (b - c)", "(- a (- b c))"},
        {"q & b == c", "(& q (== b c))"},
        {"a << 1 + 2", "(<< a (+ 1:i32 2:i32))"},
        {"a >> 1 & 3", "(& (>> a 1:i32) 3:i32)"},
        {"a | b ^ c & a", "(| a (^ b (& c a)))"},
        {"q || r && s", "(|| q (&& r s))"},
        {"q && r || s", "(|| (&& q r) s)"},
        {"a < b == q", "(== (< a b) q)"},
        {"a + b < c * 2", "(< (+ a b) (* c 2:i32))"},
        {"a <= b != (c >= a)", "(!= (<= a b) (>= c a))"},
        {"a == b == q", "(== (== a b) q)"},
        {"q & r | s ^ q", "(| (& q r) (^ s q))"},
        {"a << b >> c", "(>> (<< a b) c)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char src[256];
        snprintf(src, sizeof src, "%s%s", head, cases[i].expr);
        ck_assert_sexp(src, cases[i].want);
    }
}
END_TEST

START_TEST(unary_operators) {
    const char *head = "def main(a: i32, b: i32, p: (i32, i32), q: bool, r: bool) = ";
    static const struct { const char *expr, *want; } cases[] = {
        {"-a * b", "(* (neg a) b)"},
        {"-(a * b)", "(neg (* a b))"},
        {"- -a", "(neg (neg a))"},
        {"-(-a)", "(neg (neg a))"},
        {"-p.0", "(neg (.0 p))"},
        {"!q && r", "(&& (not q) r)"},
        {"!(q && r)", "(not (&& q r))"},
        {"!!q", "(not (not q))"},
        {"a -1", "(- a 1:i32)"}, /* binary: a minus after an operand subtracts */
        {"a * -1", "(* a -1:i32)"},
        {"a - -2147483648", "(- a -2147483648:i32)"},
        {"-1 + a", "(+ -1:i32 a)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char src[256];
        snprintf(src, sizeof src, "%s%s", head, cases[i].expr);
        ck_assert_sexp(src, cases[i].want);
    }
}
END_TEST

START_TEST(min_max_and_conversions) {
    ck_assert_sexp("def main(a: i32, b: i32) = min(a, b) + max(b, 1)", "(+ (min a b) (max b 1:i32))");
    /* bare min/max are the binary functions */
    const st_node *n = body("def main(xs: [N]i32) = xs |> reduce(min, i32.max)");
    ck_assert_sexp("def main(xs: [N]i32) = xs |> reduce(min, i32.max)", "(reduce min 2147483647:i32 xs)");
    ck_assert_int_eq(n->kids[0]->kind, ST_NODE_OPFN);
    ck_assert_int_eq(n->kids[0]->u.binop, ST_OP_MIN);
    ck_assert_str_eq(type_str(n->kids[0]->type), "(i32, i32) -> i32");
    ck_assert_sexp("def main(xs: [N]f32) = xs |> scan(max, -f32.inf)", "(scan max -inf:f32 xs)");
    /* conversions are calls named by the type */
    n = body("def main(a: i32) = i64(a)");
    ck_assert_int_eq(n->kind, ST_NODE_CONV);
    ck_assert_int_eq(n->u.conv, ST_I64);
    ck_assert_str_eq(type_str(n->type), "i64");
    ck_assert_sexp("def main(a: i32) = f32(a) * 2.0 + f32(u64(a))", "(+ (* (f32 a) 2.0:f32) (f32 (u64 a)))");
    ck_assert_sexp("def main(a: f64) = (bool(a), i32(a), u32(a), f64(a))",
                   "(tuple (bool a) (i32 a) (u32 a) (f64 a))");
}
END_TEST

START_TEST(if_then_else) {
    ck_assert_sexp("def main(a: i32) = if a > 0 then a else -a", "(if (> a 0:i32) a (neg a))");
    ck_assert_sexp("def main(a: i32, q: bool) = if q then if a > 0 then 1 else 2 else 3",
                   "(if q (if (> a 0:i32) 1:i32 2:i32) 3:i32)");
    /* the else branch extends as far right as it can */
    ck_assert_sexp("def main(a: i32, q: bool) = if q then a else a + 1", "(if q a (+ a 1:i32))");
    ck_assert_sexp("def main(a: i32, q: bool) = (if q then a else a) + 1", "(+ (if q a a) 1:i32)");
    /* a literal branch takes the other branch's type */
    ck_assert_sexp("def main(x: i64, q: bool) = if q then 1 else x", "(if q 1:i64 x)");
}
END_TEST

/* ---- functions ---- */

START_TEST(lambdas) {
    ck_assert_sexp("def main(xs: [N]i32) = xs |> map(x => x + 1)", "(map (fn (x) (+ x 1:i32)) xs)");
    ck_assert_sexp("def main(xs: [N]i32) = xs |> map((x) => x + 1)", "(map (fn (x) (+ x 1:i32)) xs)");
    ck_assert_sexp("def main(xs: [N]i32) = xs |> map((x: i32) => x * 2)", "(map (fn (x) (* x 2:i32)) xs)");
    ck_assert_sexp("def main(xs: [N]i32) = xs |> reduce((a, b) => a + b, 0)", "(reduce (fn (a b) (+ a b)) 0:i32 xs)");
    ck_assert_sexp("def main(xs: [N]f32) = xs |> scan((a: f32, b: f32) => max(a, b), 0.0)",
                   "(scan (fn (a b) (max a b)) 0.0:f32 xs)");
    const st_node *n = body("def main(xs: [N]i32) = xs |> map(x => x > 0)");
    ck_assert_str_eq(type_str(n->kids[0]->type), "(i32) -> bool");
    ck_assert_str_eq(type_str(n->type), "[N]bool");
    /* a lambda body may be a let, and parameters shadow outer names */
    ck_assert_sexp("def main(xs: [N]i32, x: i32) = xs |> map(x => let y = x * x in y - x)",
                   "(map (fn (x) (let (y) (* x x) (- y x))) xs)");
}
END_TEST

START_TEST(lambda_destructures_zip) {
    const char *src = "def main(xs: [N]f32, ys: [N]f32) = zip(xs, ys) |> map((x, y) => x * y)";
    ck_assert_sexp(src, "(map (fn (x y) (* x y)) (zip xs ys))");
    const st_node *n = body(src);
    const st_node *f = n->kids[0];
    ck_assert_uint_eq(st_lambda_nparams(f), 2);
    ck_assert_str_eq(type_str(f->type), "(f32, f32) -> f32");
    ck_assert_str_eq(type_str(n->kids[1]->type), "[N](f32, f32)");
    ck_assert_str_eq(type_str(n->type), "[N]f32");
    /* three arrays, three parameters; and one parameter takes the tuple */
    ck_assert_sexp("def main(a: [N]i32, b: [N]i32, c: [N]i32) = zip(a, b, c) |> map((x, y, z) => x + y * z)",
                   "(map (fn (x y z) (+ x (* y z))) (zip a b c))");
    ck_assert_sexp("def main(a: [N]i32, b: [N]i32) = zip(a, b) |> map(p => p.1)", "(map (fn (p) (.1 p)) (zip a b))");
}
END_TEST

/* ---- let ---- */

START_TEST(let_sequences_and_patterns) {
    ck_assert_sexp("def main(x: i32) = let a = x + 1 let b = a * 2 in b - a",
                   "(let (a) (+ x 1:i32) (let (b) (* a 2:i32) (- b a)))");
    ck_assert_sexp("def main(x: i32) =\n  let (a, b) = (x, 1)\n  in a + b",
                   "(let (a b) (tuple x 1:i32) (+ a b))");
    ck_assert_sexp("def main(xs: [N]i32) = let (ys, zs) = zip(xs, xs) |> unzip in zs",
                   "(let (ys zs) (unzip (zip xs xs)) zs)");
    /* the value of a let may itself be a let */
    ck_assert_sexp("def main() = let a = let b = 1 in b + 1 in a", "(let (a) (let (b) 1:i32 (+ b 1:i32)) a)");
    const st_node *n = body("def main(x: i32) = let (a, b) = (x, 2.5) in a");
    ck_assert_uint_eq(st_let_nvars(n), 2);
    ck_assert_str_eq(type_str(n->kids[1]->type), "f32");
}
END_TEST

START_TEST(let_with_annotation) {
    const st_def *d = entry("def main(xs: [N]f32) = let ys: [N]f32 = xs in ys");
    ck_assert_int_eq(d->body->kind, ST_NODE_LET);
    ck_assert_ptr_eq(d->body->kids[0]->type, d->params[0]->type);
    /* the annotation types an unsuffixed literal */
    ck_assert_sexp("def main() = let n: i64 = 5 in n", "(let (n) 5:i64 n)");
    ck_assert_sexp("def main() = let p: (u32, f64) = (1, 2.0) in p", "(let (p) (tuple 1:u32 2.0:f64) p)");
    const char *bad = "def main(xs: [N]f32) = let ys: [N]i32 = xs in ys";
    ck_assert_error_at(bad, "ys:", "[N]i32");
}
END_TEST

/* ---- pipelines ---- */

START_TEST(pipelines) {
    /* x |> f(a) is f(a, x); a bare name after |> is a call with x alone */
    ck_assert_sexp("def main(xs: [N](i32, f32)) = xs |> unzip", "(unzip xs)");
    ck_assert_sexp("def main(xs: [N]f32) where N % 4 == 0 = xs |> split(4) |> join", "(join (split 4:i32 xs))");
    ck_assert_sexp("def main(x: f32, K: i64) = x |> replicate(K)", "(replicate K x)");
    ck_assert_sexp("def main(xs: [N]i32, k: i64) = xs |> get(k)", "(get k xs)");
    ck_assert_sexp("def main(xs: [N]i32) = xs |> map(x => x * 2) |> reduce(+, 0)",
                   "(reduce + 0:i32 (map (fn (x) (* x 2:i32)) xs))");
    ck_assert_sexp("def main(xs: [N]f32) = xs |> map(x => x |> iterate(3, y => y * 2.0))",
                   "(map (fn (x) (iterate 3:i32 (fn (y) (* y 2.0:f32)) x)) xs)");
    /* any call may be piped into, conversions and min/max too */
    ck_assert_sexp("def main(x: i32) = x |> i64", "(i64 x)");
    ck_assert_sexp("def main(x: i32) = x |> min(3)", "(min 3:i32 x)");
    /* |> binds loosest: the whole sum is the data */
    ck_assert_sexp("def main(x: i32, y: i32) = x + y |> replicate(2)", "(replicate 2:i32 (+ x y))");
}
END_TEST

START_TEST(multi_line_pipelines) {
    const char *src =
        "def main(xs: [N]f32): f32 =\n"
        "  xs\n"
        "    -- double first\n"
        "    |> map(x => x * 2.0)\n"
        "\n"
        "    |> scan(+, 0.0)   -- then a prefix sum\n"
        "    |> reduce(max, -f32.inf)\n";
    ck_assert_sexp(src, "(reduce max -inf:f32 (scan + 0.0:f32 (map (fn (x) (* x 2.0:f32)) xs)))");
    /* the advanced example of DESIGN.md, with pipelines inside lets */
    const char *adv =
        "def advanced(as: [N]i32) =\n"
        "  let (bs, cs) = as |> map(a => (a - 1, a + 1)) |> unzip\n"
        "  let (ds, es) = zip(bs, cs) |> scan((x, y) => (x.0 + y.0, x.1 + y.1), (0, 0)) |> unzip\n"
        "  in (as, bs, cs, ds, es)\n";
    ck_assert_sexp(adv,
                   "(let (bs cs) (unzip (map (fn (a) (tuple (- a 1:i32) (+ a 1:i32))) as)) "
                   "(let (ds es) (unzip (scan (fn (x y) (tuple (+ (.0 x) (.0 y)) (+ (.1 x) (.1 y)))) "
                   "(tuple 0:i32 0:i32) (zip bs cs))) (tuple as bs cs ds es)))");
}
END_TEST

START_TEST(primitives_argument_order) {
    ck_assert_sexp("def main(is: [N]i32, H: i64) = reduce_by_index(replicate(H, 0), +, 0, is, replicate(N, 1))",
                   "(reduce_by_index (replicate H 0:i32) + 0:i32 is (replicate N 1:i32))");
    ck_assert_sexp("def main(xs: [N]i32, is: [N]i64) = scatter(replicate(N, 0), is, xs)",
                   "(scatter (replicate N 0:i32) is xs)");
    ck_assert_sexp("def main(xs: [N][M]f32) = xs |> transpose", "(transpose xs)");
    const st_node *n = body("def main(xs: [N]f32) = iota(N)");
    ck_assert_str_eq(type_str(n->type), "[N]i64");
    /* size variables are i64 values */
    ck_assert_str_eq(type_str(body("def main(xs: [N]f32) = N")->type), "i64");
}
END_TEST

/* ---- definitions ---- */

START_TEST(several_defs_and_entry) {
    const char *src =
        "def helper(x: i32) = x + 1\n"
        "def main(xs: [N]f32) = xs\n"
        "def other(y: f64): f64 = y * 2.0\n";
    const st_program *p = parse_ok(cx, src);
    ck_assert_uint_eq(p->ndefs, 3);
    ck_assert_str_eq(p->defs[0].name, "helper");
    ck_assert_str_eq(p->defs[1].name, "main");
    ck_assert_str_eq(p->defs[2].name, "other");
    ck_assert_int_eq(p->defs[2].loc.line, 3);
    ck_assert_int_eq(p->defs[2].loc.col, 5);
    ck_assert(p->defs[2].declared_result);
    ck_assert(!p->defs[1].declared_result);
    st_err err = {0};
    ck_assert_ptr_eq(st_program_entry(p, NULL, &err), &p->defs[1]);
    ck_assert_ptr_eq(st_program_entry(p, "other", &err), &p->defs[2]);
    ck_assert_ptr_eq(st_program_entry(p, "helper", &err), &p->defs[0]);
    ck_assert_ptr_null(st_program_entry(p, "nope", &err));
    ck_assert_msg(strstr(err.message, "nope") && strstr(err.message, "helper") && strstr(err.message, "other"),
                  "the message names the wanted def and those there are: %s", err.message);

    /* the only def is the entry whatever its name */
    const st_program *one = parse_ok(cx, "def solo(x: i32) = x");
    ck_assert_ptr_eq(st_program_entry(one, NULL, &err), &one->defs[0]);

    /* several defs and no main: the user must pick */
    const st_program *two = parse_ok(cx, "def a(x: i32) = x\ndef b(x: i32) = x\n");
    err = (st_err){0};
    ck_assert_ptr_null(st_program_entry(two, NULL, &err));
    ck_assert_msg(strstr(err.message, "main") && strstr(err.message, "--entry"), "%s", err.message);
    ck_assert_int_eq(err.kind, ST_ERR_USER);
}
END_TEST

START_TEST(where_clauses) {
    const st_def *d = entry("def main(xs: [N]f32, ys: [M]f32, H: i64): [N/256]f32 where N % 256 == 0, M % 2 == 0, H % 8 == 0 =\n"
                            "  xs |> split(256) |> map(r => r |> reduce(+, 0.0))");
    ck_assert_uint_eq(d->facts->n, 3);
    ck_assert_int_eq(st_facts_divisor(d->facts, st_intern_cstr(cx, "N")), 256);
    ck_assert_int_eq(st_facts_divisor(d->facts, st_intern_cstr(cx, "M")), 2);
    ck_assert_int_eq(st_facts_divisor(d->facts, st_intern_cstr(cx, "H")), 8);
    ck_assert_uint_eq(d->nsizes, 2);
    ck_assert_str_eq(d->sizes[0]->u.name, "N");
    ck_assert_str_eq(d->sizes[1]->u.name, "M");
    ck_assert_str_eq(type_str(d->result), "[N/256]f32");
    /* two facts about one size combine */
    d = entry("def main(xs: [N]f32) where N % 4 == 0, N % 6 == 0 = xs |> split(12)");
    ck_assert_int_eq(st_facts_divisor(d->facts, st_intern_cstr(cx, "N")), 12);
    ck_assert_str_eq(type_str(d->body->type), "[N/12][12]f32");
    /* no where clause: an empty list, never NULL */
    d = entry("def main(xs: [N]f32) = xs");
    ck_assert_ptr_nonnull(d->facts);
    ck_assert_uint_eq(d->facts->n, 0);
}
END_TEST

/* ---- syntax errors ---- */

START_TEST(error_unexpected_character) {
    const char *src = "def main(x: i32) =\n  x @ 1";
    ck_assert_error_at(src, "@", "unexpected character `@`");
    st_err e = parse_fails(cx, src);
    ck_assert_str_eq(e.loc.file, "test.strata");
    ck_assert_int_eq(e.kind, ST_ERR_USER);
    ck_assert_error_at("def main(x: i32) = x $ 1", "$", "`$`");
    ck_assert_error_at("def main(x: i32) = x; x", ";", "`;`");
}
END_TEST

START_TEST(error_lines_and_columns) {
    /* CR LF line ends count as one line; a tab is one column */
    ck_assert_error(cx, "def main(x: i32) =\r\n  x @\r\n", 2, 5, "`@`");
    ck_assert_error(cx, "def main(x: i32) =\n\tx @\n", 2, 4, "`@`");
    ck_assert_error(cx, "-- comment\n\n-- comment\ndef main(x: i32) =\n  x +\n\n  $", 7, 3, "`$`");
    /* the column of a negative literal is its minus */
    ck_assert_error(cx, "def main() =\n  (1, - 1u32)", 2, 7, "u32");
}
END_TEST

START_TEST(error_binary_byte) {
    ck_assert_error(cx, "def main(x: i32) =\n  x\x01", 2, 4, "0x01");
    ck_assert_error(cx, "def main(x: i32) = \xff", 1, 20, "0xff");
    /* a NUL inside the text is a byte like any other, not the end */
    static const char with_nul[] = "def main(x: i32) = x\0 + 1";
    st_err err = {0};
    const st_program *p = st_parse_program(cx, "test.strata", with_nul, sizeof with_nul - 1, &err);
    ck_assert_ptr_null(p);
    ck_assert_int_eq(err.loc.line, 1);
    ck_assert_int_eq(err.loc.col, 21);
    ck_assert_msg(strstr(err.message, "0x00"), "%s", err.message);
}
END_TEST

START_TEST(error_missing_paren) {
    ck_assert_error(cx, "def main(x: i32) =\n  (x + 1\n", 3, 1, "`)`");
    ck_assert_error(cx, "def main(x: i32) =\n  (x + 1\n", 3, 1, "end of the file");
    ck_assert_error_at("def main(x: i32) = (x, 1 in x", "in x", "`)`");
    ck_assert_error(cx, "def main(x: i32) = max(x, 1 + 2", 1, 32, "`,` or `)`");
    ck_assert_error_at("def main(x: i32 = x", "= x", "`)`");
}
END_TEST

START_TEST(error_missing_in) {
    ck_assert_error(cx, "def main(x: i32) =\n  let y = x + 1\n  y\n", 3, 3, "`in`");
    ck_assert_error(cx, "def main(x: i32) =\n  let y = x + 1\n", 3, 1, "`in`");
    ck_assert_error_at("def main(x: i32) = let (a, b = (1, 2) in a", "= (1", "`)`");
}
END_TEST

START_TEST(error_bad_literal_suffix) {
    ck_assert_error_at("def main(x: i32) = 12abc", "abc", "`abc` cannot follow a number");
    ck_assert_error_at("def main(x: f32) = 2.5i32", "i32", "cannot be i32");
    ck_assert_error_at("def main(x: i32) = x + 1e5u64", "u64", "cannot be u64");
    ck_assert_error_at("def main(x: i32) = 1f16", "f16", "`f16`");
    ck_assert_error_at("def main(x: i32) = 1bool", "bool", "`bool`");
    /* after a dot only a component number: p.0x is not p.0 then x */
    ck_assert_error_at("def main(p: (i32, i32)) = p.0x", "x", "`x`");
    ck_assert_error_at("def main(x: f32) = f32.max", "max", "`inf`, `nan` or `pi`");
    ck_assert_error_at("def main(x: i32) = i32.inf", "inf", "`min` or `max`");
}
END_TEST

START_TEST(error_literal_too_large) {
    ck_assert_error_at("def main() = 99999999999999999999", "99999999999999999999", "too large");
    ck_assert_error_at("def main() = 18446744073709551616u64", "18446744073709551616u64", "too large");
    /* the largest u64 is fine */
    ck_assert_sexp("def main() = 18446744073709551615u64", "18446744073709551615:u64");
}
END_TEST

/* A literal's range is checked as written: `-128i8` is one literal and
 * fits, `-(128i8)` negates the literal 128i8, which does not (it was read
 * as -128i8 and accepted). At every width's edges, suffixed and typed by
 * context. */
START_TEST(error_literal_range_at_every_width) {
    static const struct {
        const char *type, *min, *max, *over, *under;
    } w[] = {
        {"i8", "-128", "127", "128", "-129"},
        {"u8", "0", "255", "256", "-1"},
        {"i16", "-32768", "32767", "32768", "-32769"},
        {"u16", "0", "65535", "65536", "-1"},
        {"i32", "-2147483648", "2147483647", "2147483648", "-2147483649"},
        {"u32", "0", "4294967295", "4294967296", "-1"},
        {"i64", "-9223372036854775808", "9223372036854775807", "9223372036854775808", "-9223372036854775809"},
        {"u64", "0", "18446744073709551615", NULL, "-1"},
    };
    char src[256], needle[64];
    for (size_t i = 0; i < sizeof w / sizeof *w; i++) {
        const char *t = w[i].type;
        /* the edges fit, suffixed and from the context */
        snprintf(src, sizeof src, "def main(x: %s) = (%s%s, %s%s, x + %s, x + %s)", t, w[i].min, t, w[i].max, t, w[i].min,
                 w[i].max);
        (void)body(src);
        /* one past them does not */
        if (w[i].over) {
            snprintf(src, sizeof src, "def main(x: %s) = x + %s%s", t, w[i].over, t);
            snprintf(needle, sizeof needle, "%s%s", w[i].over, t);
            ck_assert_error_at(src, needle, "does not fit");
            snprintf(src, sizeof src, "def main(x: %s) = x + %s", t, w[i].over);
            ck_assert_error_at(src, w[i].over, "does not fit");
        }
        snprintf(src, sizeof src, "def main(x: %s) = x + %s%s", t, w[i].under, t);
        snprintf(needle, sizeof needle, "%s%s", w[i].under, t);
        ck_assert_error_at(src, needle, "does not fit");
        snprintf(src, sizeof src, "def main(x: %s) = x + %s", t, w[i].under);
        ck_assert_error_at(src, w[i].under, "does not fit");
        /* a signed minimum negated in parentheses: its magnitude is a literal of its own, out of range */
        if (w[i].min[0] == '-') {
            snprintf(src, sizeof src, "def main(x: %s) = x + -(%s%s)", t, w[i].min + 1, t);
            snprintf(needle, sizeof needle, "%s%s", w[i].min + 1, t);
            ck_assert_error_at(src, needle, "does not fit");
            snprintf(src, sizeof src, "def main(x: %s) = x + -((%s))", t, w[i].min + 1);
            ck_assert_error_at(src, w[i].min + 1, "does not fit");
        }
    }
    /* the message names the literal and the range */
    ck_assert_error_at("def main() = -(128i8)", "128i8", "128 does not fit in i8 (-128 to 127)");
    ck_assert_error_at("def main() = -(2147483648)", "2147483648", "2147483648 does not fit in i32");
    /* a negated literal that fits is still a literal, and unsigned negation wraps as `-x` does */
    ck_assert_sexp("def main() = (-(127i8), -(0u8), -(1u8), -(-128i8))", "(tuple -127:i8 0:u8 255:u8 -128:i8)");
}
END_TEST

START_TEST(error_empty_files) {
    ck_assert_error(cx, "", 1, 1, "defines nothing");
    ck_assert_error(cx, "-- only a comment\n-- and another", 1, 1, "defines nothing");
    ck_assert_error(cx, "\n\n   \t\n", 1, 1, "defines nothing");
}
END_TEST

START_TEST(error_def_shape) {
    ck_assert_error_at("def main(a: i32): i32 b", "b", "`=`");
    ck_assert_error_at("def main(a: i32) b", "b", "`=`");
    ck_assert_error(cx, "def main(x: i32) = x\n)", 2, 1, "`def`");
    ck_assert_error_at("def main(x: i32) = x\nlet y = 1", "let y", "`def`");
    ck_assert_error_at("def main(x: i32) = x 7", "7", "`def`");
    ck_assert_error_at("def (x: i32) = x", "(", "name");
    ck_assert_error_at("def main(x i32) = x", "i32", "`:`");
    ck_assert_error_at("def main(x: i33) = x", "i33", "a type");
    ck_assert_error_at("main(x: i32) = x", "main", "`def`");
    ck_assert_error(cx, "def main(x: i32) = ()", 1, 21, "an expression");
    ck_assert_error_at("def main(x: i32) = if x > 0 1 else 2", "1 else", "`then`");
    ck_assert_error(cx, "def main(x: i32) = if x > 0 then 1", 1, 35, "`else`");
    ck_assert_error_at("def main(xs: [N]f32) where N == 2 = xs", "==", "`%`");
    ck_assert_error_at("def main(xs: [N]f32) where N % 2 == 1 = xs", "1 =", "`0`");
    ck_assert_error_at("def main(xs: [N]f32) where N % 0 == 0 = xs", "0 ==", "divisor");
    /* an operator alone where an expression belongs */
    ck_assert_error_at("def main(x: i32) = x + * 2", "*", "operator");
}
END_TEST

START_TEST(error_nested_too_deeply) {
    /* deep nesting is an error, not a stack overflow */
    char *src = repeat("def main(x: i32) = ", "(", 10000, "x");
    st_err e;
    ck_assert_ptr_null(parse_long(src, &e));
    ck_assert_msg(strstr(e.message, "nested too deeply"), "%s", e.message);
    ck_assert_int_eq(e.loc.line, 1);
    ck_assert_int_eq(e.kind, ST_ERR_USER);
    free(src);
    src = repeat("def main(x: i32) = ", "- ", 10000, "x"); /* "--" would be a comment */
    ck_assert_ptr_null(parse_long(src, &e));
    ck_assert_msg(strstr(e.message, "nested too deeply"), "%s", e.message);
    free(src);
    src = repeat("def main(xs: ", "[1]", 10000, "f32) = xs");
    ck_assert_ptr_null(parse_long(src, &e));
    ck_assert_msg(strstr(e.message, "nested too deeply"), "%s", e.message);
    free(src);
    /* moderate nesting is fine */
    char *ok = repeat("def main(x: i32) = ", "(", 100, "x");
    size_t len = strlen(ok);
    char *closed = malloc(len + 101);
    memcpy(closed, ok, len);
    memset(closed + len, ')', 100);
    closed[len + 100] = 0;
    ck_assert_sexp(closed, "x");
    free(ok);
    free(closed);
}
END_TEST

/* Long flat chains build deep left-nested trees without any bracket:
 * 100000 terms of a sum, 10000 pipeline stages, 100000 projections. The
 * answer may be a program or an error, but never a crash. */
static void parses_or_fails_cleanly(const char *src) {
    st_err err;
    mark_point();
    const st_program *p = parse_long(src, &err);
    ck_assert_msg(p != NULL || (err.message[0] && err.loc.line >= 1), "an unlocated failure: %s", err.message);
}

START_TEST(long_sum_does_not_crash) {
    char *src = repeat("def main(x: i32) = x", " + 1", 100000, "\n");
    parses_or_fails_cleanly(src);
    free(src);
}
END_TEST

START_TEST(long_pipeline_does_not_crash) {
    char *src = repeat("def main(xs: [N]i32) = xs", " |> map(x => x)", 10000, "\n");
    parses_or_fails_cleanly(src);
    free(src);
}
END_TEST

START_TEST(long_projection_chain_does_not_crash) {
    char *src = repeat("def main(x: i32) = x", ".0", 100000, "\n");
    parses_or_fails_cleanly(src);
    free(src);
}
END_TEST

/* Programs just under any sensible depth limit (990 levels) must be read,
 * checked and printed back, or refused with a message; the passes after
 * the parser recurse over the tree, so this is where a limit set too high
 * for their stack frames shows (under ASan frames are several KiB). */
static void deep_program_survives(const char *src) {
    st_err err;
    mark_point(); /* a crash is then reported "after" the parse below */
    const st_program *p = parse_long(src, &err);
    if (!p) {
        ck_assert_msg(err.message[0] && err.loc.line >= 1, "an unlocated failure: %s", err.message);
        return;
    }
    st_buf b = {0};
    st_print_program(p, &b);
    ck_assert(!b.failed && b.data);
    const st_program *q = parse_long(b.data, &err);
    st_buf_free(&b);
    ck_assert_msg(q != NULL, "the printed program does not read back: %s", err.message);
    ck_assert_ptr_eq(q->defs[0].body, p->defs[0].body);
}

enum { DEEP = 990 };

START_TEST(deepest_sum_survives) {
    char *src = repeat("def main(x: i32) = x", " + 1", DEEP, "\n");
    deep_program_survives(src);
    free(src);
}
END_TEST

START_TEST(deepest_pipeline_survives) {
    char *src = repeat("def main(xs: [N]i32) = xs", " |> map(x => x)", DEEP, "\n");
    deep_program_survives(src);
    free(src);
}
END_TEST

START_TEST(deepest_let_sequence_survives) {
    char *src = repeat("def main(x: i32) =\n", "  let x = x + 1\n", DEEP, "  in x\n");
    deep_program_survives(src);
    free(src);
}
END_TEST

START_TEST(deepest_calls_survive) {
    char *head = repeat("def main(x: i32) = ", "min(x, ", DEEP, "x");
    char *src = repeat(head, ")", DEEP, "\n");
    deep_program_survives(src);
    free(head);
    free(src);
}
END_TEST

START_TEST(deepest_if_chain_survives) {
    char *src = repeat("def main(x: i32) = ", "if x > 0 then x else ", DEEP, "x\n");
    deep_program_survives(src);
    free(src);
}
END_TEST

/* A flat sequence of lets is not nesting from the user's point of view, and
 * a printed rewritten program may have many: 300 of them must parse. */
START_TEST(long_let_sequence_parses) {
    char *src = repeat("def main(x: i32) =\n", "  let x = x + 1\n", 300, "  in x\n");
    st_err err;
    const st_program *p = parse_long(src, &err);
    free(src);
    ck_assert_msg(p != NULL, "%d:%d: %s", err.loc.line, err.loc.col, err.message);
    ck_assert_int_eq(p->defs[0].body->kind, ST_NODE_LET);
}
END_TEST

START_TEST(error_pipe_needs_a_name) {
    ck_assert_error(cx, "def main(xs: [N]i32) = xs |> 3", 1, 30, "after `|>`");
    ck_assert_error(cx, "def main(xs: [N]i32) = xs |> (x)", 1, 30, "after `|>`"); /* a lambda there is a let */
    ck_assert_error(cx, "def main(xs: [N]i32) = xs |>", 1, 29, "after `|>`");
    ck_assert_error_at("def main(xs: [N]i32) = xs |> |> map(x => x)", "|> map", "after `|>`");
}
END_TEST

int main(void) {
    Suite *s = suite_create("syntax");
    TCase *ok = tcase_create("constructs");
    tcase_add_checked_fixture(ok, setup, teardown);
    tcase_add_test(ok, literal_suffixes);
    tcase_add_test(ok, float_exponents);
    tcase_add_test(ok, negative_literals);
    tcase_add_test(ok, type_constants);
    tcase_add_test(ok, literal_types_from_context);
    tcase_add_test(ok, comments);
    tcase_add_test(ok, identifiers);
    tcase_add_test(ok, tuples_and_projections);
    tcase_add_test(ok, precedence_is_c);
    tcase_add_test(ok, unary_operators);
    tcase_add_test(ok, min_max_and_conversions);
    tcase_add_test(ok, if_then_else);
    tcase_add_test(ok, lambdas);
    tcase_add_test(ok, lambda_destructures_zip);
    tcase_add_test(ok, let_sequences_and_patterns);
    tcase_add_test(ok, let_with_annotation);
    tcase_add_test(ok, pipelines);
    tcase_add_test(ok, multi_line_pipelines);
    tcase_add_test(ok, primitives_argument_order);
    tcase_add_test(ok, several_defs_and_entry);
    tcase_add_test(ok, where_clauses);
    suite_add_tcase(s, ok);

    TCase *bad = tcase_create("errors");
    tcase_add_checked_fixture(bad, setup, teardown);
    tcase_add_test(bad, error_unexpected_character);
    tcase_add_test(bad, error_lines_and_columns);
    tcase_add_test(bad, error_binary_byte);
    tcase_add_test(bad, error_missing_paren);
    tcase_add_test(bad, error_missing_in);
    tcase_add_test(bad, error_bad_literal_suffix);
    tcase_add_test(bad, error_literal_too_large);
    tcase_add_test(bad, error_literal_range_at_every_width);
    tcase_add_test(bad, error_empty_files);
    tcase_add_test(bad, error_def_shape);
    tcase_add_test(bad, error_nested_too_deeply);
    tcase_add_test(bad, error_pipe_needs_a_name);
    suite_add_tcase(s, bad);

    TCase *deep = tcase_create("deep");
    tcase_add_checked_fixture(deep, setup, teardown);
    tcase_set_timeout(deep, 60);
    tcase_add_test(deep, long_sum_does_not_crash);
    tcase_add_test(deep, long_pipeline_does_not_crash);
    tcase_add_test(deep, long_projection_chain_does_not_crash);
    tcase_add_test(deep, long_let_sequence_parses);
    tcase_add_test(deep, deepest_sum_survives);
    tcase_add_test(deep, deepest_pipeline_survives);
    tcase_add_test(deep, deepest_let_sequence_survives);
    tcase_add_test(deep, deepest_calls_survive);
    tcase_add_test(deep, deepest_if_chain_survives);
    suite_add_tcase(s, deep);
    return run_suite(s);
}
