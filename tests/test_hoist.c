/* tests/test_hoist.c — hoist-invariant (strategies/hoist.c): what a function
 * computes the same for every element, bound once before it.
 *
 * The rewrite's text: what moves (a reduction reading none of the
 * function's variables, to the nearest place where all it reads is bound),
 * what stays (what reads the element, what may fail, what a shadowing
 * parameter makes another value), and the rule's refusal. Then every
 * program, through the rule alone, the rule and the defaults, on the
 * device: at N = 1, 7 and 1000 the interpreter gives the same before and
 * after the rule, and at those and the prime above 10^6 the device agrees
 * with the interpreter on the program as written (which the interpreter
 * runs in linear time too: it keeps such a value itself, ir/interp.c). */
#include "pipeline_fixture.h"
#include "rewrite/rewrite.h"
#include "strategies/strategies.h"

/* The rewritten def, its binders named by their place (hoisted, hoisted_2,
 * …), whatever names the context gave out before. */
static const char *hoisted(const char *src) {
    st_err err = {0};
    const st_def *d = st_def_canonical(cx, apply(def_of(src), "hoist-invariant", src), &err);
    ck_assert_msg(d != NULL, "%s: %s", src, err.message);
    return printed_def(d);
}

static st_err refused(const char *src) {
    st_err err = {0};
    const st_strategy *s = st_strategy_parse(cx, reg, "strategy", "hoist-invariant", &err);
    ck_assert(s != NULL);
    st_rw *rw = st_rw_new(cx, reg);
    const st_def *now = st_rewrite_def(rw, s, def_of(src), &err);
    st_rw_free(rw);
    ck_assert_msg(now == NULL, "%s: hoist-invariant applied:\n%s", src, now ? printed_def(now) : "");
    return err;
}

static int occurrences(const char *text, const char *what) {
    int n = 0;
    for (const char *p = strstr(text, what); p; p = strstr(p + 1, what)) n++;
    return n;
}

START_TEST(what_moves_and_where) {
    /* a normalisation: to the top of the def */
    const char *norm = hoisted("def main(xs: [N]f32): [N]f32 = xs |> map(x => x / reduce(+, 0.0, xs))");
    ck_assert_has(norm, "let hoisted = xs |> reduce(+, 0.0)\n");
    ck_assert_has(norm, "map(x => x / hoisted)");
    /* a row's maximum: into the row's function, not out of it */
    const char *rows = hoisted("def main(m: [R][C]f32): [R][C]f32 =\n"
                               "  m |> map(row => map(x => x - reduce(max, -f32.inf, row), row))");
    ck_assert_has(rows, "m |> map(row =>\n    let hoisted");
    ck_assert_has(rows, " = row |> reduce(max, -f32.inf)\n    in row |> map(x => x - hoisted");
    /* after a let it reads: into that let's body */
    const char *after = hoisted("def main(xs: [N]i32): [N]i32 =\n"
                                "  let s = scan(+, 0, xs) in s |> map(x => x * reduce(max, -2147483648, s))");
    ck_assert_has(after, "let s = xs |> scan(+, 0)\n");
    ck_assert_has(after, "let hoisted = s |> reduce(max, -2147483648)\n");
    /* a scanTotal (the user's, of their scan) */
    ck_assert_has(hoisted("def main(xs: [N]i32): [N]i32 = xs |> map(x => x * scanTotal(scan(+, 0, xs)))"),
                  "let hoisted = scanTotal(xs |> scan(+, 0))\n");
    /* out of a filter's predicate and out of a loop's body */
    ck_assert_has(hoisted("def main(xs: [N]i32): [?k]i32 = xs |> filter(x => x * i32(N) > reduce(+, 0, xs))"),
                  "let hoisted = xs |> reduce(+, 0)\n");
    ck_assert_has(hoisted("def main(xs: [N]i32): i32 = loop s = 0 for i < 3 do s + reduce(+, 0, xs)"),
                  "let hoisted = xs |> reduce(+, 0)\n");
    /* the largest such subexpression moves, and one written twice is bound once */
    const char *twice = hoisted("def main(xs: [N]i32): [N]i32 =\n"
                                "  xs |> map(x => x * (reduce(+, 0, xs) + 1) - (reduce(+, 0, xs) + 1))");
    ck_assert_int_eq(occurrences(twice, "let hoisted"), 1);
    ck_assert_has(twice, "(xs |> reduce(+, 0)) + 1\n");
    /* what a moved reduction repeats inside its own function moves next */
    const char *nested = hoisted("def main(xs: [N]i32, ys: [M]i32): [N]i32 =\n"
                                 "  xs |> map(x => x + reduce(+, 0, map(y => y * reduce(max, 0, ys), ys)))");
    ck_assert_int_eq(occurrences(nested, "let hoisted"), 2);
    ck_assert_has(nested, " = ys |> reduce(max, 0)\n"); /* the seed as written: no rule but hoist-invariant ran */
    ck_assert_has(nested, " = ys |> map(y => y * hoisted) |> reduce(+, 0)\n");
}
END_TEST

START_TEST(what_stays) {
    /* what may fail moves without the division: a map of no elements must
     * not divide by zero; the reduction alone moves */
    const char *div = hoisted("def main(xs: [N]i32): [N]i32 = xs |> map(x => x + 100 / reduce(+, 0, xs))");
    ck_assert_has(div, "let hoisted = xs |> reduce(+, 0)\n");
    ck_assert_has(div, "x + 100 / hoisted");
    /* a read of one element stays, the scan it reads moves */
    const char *get = hoisted("def main(xs: [N]i32, ys: [8]i32): [N]i32 = xs |> map(x => x + get(3, scan(+, 0, ys)))");
    ck_assert_has(get, " = ys |> scan(+, 0)\n  in xs |> map(x => x + (hoisted");
    ck_assert_has(get, " |> get(3)");
    /* reading the element, or a let inside the function: nothing moves */
    st_err e = refused("def main(xs: [N]i32): [N]i32 = xs |> map(x => reduce(+, 0, map(y => y * x, xs)))");
    ck_assert_has(e.message, "hoist-invariant: nothing inside a function here is computed the same for every element");
    refused("def main(xs: [N]i32): [N]i32 = xs |> map(x => let y = x + 1 in reduce(+, 0, map(z => z * y, xs)))");
    /* the parameter `xs` of the function is not the def's `xs` */
    refused("def main(xs: [N]i32, m: [R][N]i32): [R]i32 = m |> map(xs => reduce(+, 0, xs))");
    /* at a lambda itself: a let cannot stand in front of a function */
    st_err err = {0};
    const st_strategy *at_lambda = st_strategy_parse(cx, reg, "strategy", "first(lambda, hoist-invariant)", &err);
    ck_assert_msg(at_lambda != NULL, "%s", err.message);
    st_rw *rw = st_rw_new(cx, reg);
    ck_assert(st_rewrite_def(rw, at_lambda, def_of("def main(xs: [N]i32): [N]i32 = xs |> map(x => x + reduce(+, 0, xs))"),
                             &err) == NULL);
    st_rw_free(rw);
    ck_assert_has(err.message, "not a function");
    /* a few scalar operations, a map or a read cost per element what they did */
    refused("def main(xs: [N]i32, c: i32): [N]i32 = xs |> map(x => x * (c * c + 1))");
    refused("def main(xs: [N]i32, ys: [N]i32): [N]i32 = iota(N) |> map(i => get(i, xs) + get(i, map(y => y * 2, ys)))");
    /* a loop's count is checked when it runs: a loop inside the function
     * stays, the reduction in its body moves */
    ck_assert_has(hoisted("def main(xs: [N]i32, n: i32): [N]i32 =\n"
                          "  xs |> map(x => x + (loop s = 0 for i < n do s + reduce(+, 0, xs)))"),
                  "  let hoisted = xs |> reduce(+, 0)\n  in xs |> map(x => x + (loop s = 0 for i < i64(n) do s + hoisted))");
}
END_TEST

/* Normalisations, a row's shift, thresholds, a table read through a scan,
 * histograms shared by every element, in every type of interest. */
static const char *const programs[] = {
    "def main(xs: [N]f32): [N]f32 = xs |> map(x => x / reduce(+, 0.0, xs))",
    "def main(xs: [N]i32): [N]i32 = xs |> map(x => x - reduce(min, 2147483647, xs))",
    "def main(xs: [N]i32): [?k]i32 = xs |> filter(x => x * i32(N) > reduce(+, 0, xs))",
    "def main(xs: [N]i32, ys: [100]i32): [N]i32 = xs |> map(x => x - (ys |> scan(+, 0) |> reduce(max, -2147483648)))",
    "def main(xs: [N]i32): [N]i32 = xs |> scan(+, 0) |> map(s => s * 2 - reduce(+, 0, xs))",
    "def main(m: [R][C]f32): [R][C]f32 = m |> map(row => map(x => x - reduce(max, -f32.inf, row), row))",
    "def main(m: [R][C]i32): [R][C]i32 = m |> map(row => map(x => x * reduce(+, 0, row) + reduce(+, 0, row), row))",
    "def main(xs: [N]i32): [N]i32 =\n"
    "  let h = reduce_by_index(replicate(16, 0), +, 0, xs |> map(x => i64(x) % 16), replicate(N, 1))\n"
    "  in xs |> map(x => get((i64(x) % 16 + 16) % 16, h) + reduce(+, 0, h))",
    "def main(xs: [N]u8): [N]u32 = xs |> map(x => u32(x) + reduce(max, 0u32, xs |> map(y => u32(y))))",
    "def main(xs: [N]i32): i32 = loop s = 0 for i < 3 do s + reduce(+, 0, xs)",
    "def main(xs: [N]i32): [N]i32 = xs |> map(x => x * scanTotal(scan(+, 0, xs)))",
};
enum { NPROGRAMS = sizeof programs / sizeof *programs };

/* The CPU's default first: under the sanitizers the first alone runs the
 * prime above 10^6 (st_test_big), and this device runs by it. */
static const char *const strategies[] = {
    "the CPU's default",
    "hoist-invariant",
    "hoist-invariant ; try(each(top reduce, try(parallel-reduce(BS=256)))) ; "
    "try(each(top scan, try(lookback(M=16, WG=4))))",
    "the GPU's default",
};
enum { NSTRATEGIES = sizeof strategies / sizeof *strategies };

static const char *sizes_of(const char *src, int64_t n) {
    /* rows of n, as many as n up to 5: the program as written reads each
     * row once per element, R * C * C in the interpreter */
    if (strstr(src, "[R][C]"))
        return n > 1000 ? "R=1009 C=997" : text_of("R=%lld C=%lld", (long long)(n < 5 ? n : 5), (long long)n);
    return text_of("N=%lld", (long long)n);
}

START_TEST(every_strategy_keeps_the_values) {
    const char *src = programs[_i / NSTRATEGIES], *strategy = strategies[_i % NSTRATEGIES];
    if (strstr(strategy, "default")) strategy = st_default_strategy(strstr(strategy, "CPU") ? "CPU" : "GPU");
    const char *label = text_of("%s under %s", src, strategy);
    const st_def *orig = def_of(src), *moved = apply(orig, "hoist-invariant", label);
    st_code code = generated(lowered(apply(orig, strategy, label), label), label);
    st_exe *exe = built(&code, label);
    static const int64_t lengths[] = {1, 7, 1000, 1000003};
    for (size_t i = 0; i < sizeof lengths / sizeof *lengths; i++) {
        bool big = lengths[i] > 1000;
        if (big && !st_test_big(_i % NSTRATEGIES)) continue;
        const char *sets = sizes_of(src, lengths[i]);
        if (!big) same_in_the_interpreter(orig, moved, sets, 41 + i, label);
        agrees(exe, orig, sets, 41 + i, label);
    }
    st_exe_free(exe);
}
END_TEST

int main(void) {
    Suite *s = suite_create("hoist");
    TCase *tc = tcase_create("rewrite");
    tcase_add_checked_fixture(tc, rules_setup, rules_teardown);
    tcase_add_test(tc, what_moves_and_where);
    tcase_add_test(tc, what_stays);
    suite_add_tcase(s, tc);
    tc = tcase_create("device");
    tcase_add_checked_fixture(tc, rules_setup, pipeline_teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, every_strategy_keeps_the_values, 0, NPROGRAMS * NSTRATEGIES);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
