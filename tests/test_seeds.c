/* tests/test_seeds.c — scans, exscans, reduces and histograms seeded by a
 * value other than their operator's neutral element (rewrite/seeds.c).
 *
 * scan(+, 5, xs) is 5 + x0 + … + xi to the interpreter; the parallel rules
 * start every block from the seed, so before st_seeds_as_neutral the
 * look-back added it once a block and lane and `strata run` answered wrong;
 * now the rule seeds-as-neutral takes the seed out, and the rules that
 * start blocks from the seed refuse one it would take out.
 * Each program runs through every strategy that takes it, on the device,
 * at N = 1, 7, 1000 and 1000003 against the interpreter; the rewrite keeps
 * what a neutral seed had (no post-function, no map), takes a seed that is
 * an expression once, and leaves an operator whose neutral element strata
 * does not know as the program's promise. */
#include "pipeline_fixture.h"
#include "rewrite/rewrite.h"
#include "strategies/strategies.h"

/* Seeds: a literal, a parameter, an expression; every operator with a
 * neutral element, on ints and floats; the scan's three forms. */
static const char *const programs[] = {
    "def main(xs: [N]i32): [N]i32 = xs |> scan(+, 5)",
    "def main(xs: [N]i32, s: i32): [N]i32 = xs |> scan(+, s)",
    "def main(xs: [N]i32, s: i32): [N]i32 = xs |> scan(+, s * 2 - 1)",
    "def main(xs: [N]i32): [N]i32 = xs |> map(x => x * 3) |> scan(+, -7)",
    "def main(xs: [N]i32): [N]i32 = xs |> scan((a, b) => max(a, b), 0)",
    "def main(xs: [N]i32): [N]i32 = xs |> scan(min, 100)",
    "def main(xs: [N]u32): [N]u32 = xs |> scan(|, 1u32)",
    "def main(xs: [N]i32): [N]i32 = xs |> scan(^, 12345)",
    "def main(xs: [N]f32): [N]f32 = xs |> map(x => x - 0.5) |> scan(max, 0.0)",
    "def main(xs: [N]f32): [N]f32 = xs |> scan(+, 2.5)",
    "def main(xs: [N]i64): [N]i64 = xs |> exscan(+, 9i64)",
    "def main(xs: [N]i32): i32 = xs |> reduce(+, 5)",
    "def main(xs: [N]i32): i32 = xs |> reduce(max, 3)",
    "def main(xs: [N]i32): i32 = xs |> map(x => x % 5) |> reduce(+, -11)",
    "def main(is: [N]i32): [16]i32 = reduce_by_index(replicate(16, 0), +, 3, is |> map(i => i % 16), replicate(N, 1))",
};
enum { NPROGRAMS = sizeof programs / sizeof *programs };

/* A strategy at the top of the def (the rule takes the seed out of its
 * node first), after seeds-as-neutral (a scan stays a scan, a reduce's
 * seed leaves it an operand), or everywhere; and the defaults `strata run`
 * takes on a CPU and a GPU, which begin with seeds-as-neutral. */
static const char *const strategies[] = {
    NULL, /* the lowering alone: sequential */
    "first(scan, lookback(M=64, WG=4))",
    "seeds-as-neutral ; first(scan, lookback(M=16384, WG=1, LOAD=direct))",
    "first(scan, parallel-scan(BS=256, BF=2, SE=4))",
    "first(reduce, lookback(M=16, WG=8))",
    "seeds-as-neutral ; first(reduce, parallel-reduce(BS=1024))",
    "first(reduce, parallel-reduce(BS=1024))",
    "try(each(reduce_by_index, try(subhistogram)))",
    "the CPU's default",
    "the GPU's default",
};
enum { NSTRATEGIES = sizeof strategies / sizeof *strategies };

static const int64_t lengths[] = {1, 7, 1000, 1000003};

START_TEST(every_strategy_keeps_the_seed) {
    const char *src = programs[_i / NSTRATEGIES], *strategy = strategies[_i % NSTRATEGIES];
    bool by_default = strategy && strstr(strategy, "default");
    if (by_default) strategy = st_default_strategy(strstr(strategy, "CPU") ? "CPU" : "GPU");
    const char *label = text_of("%s under %s", src, strategy ? strategy : "the lowering alone");
    const st_def *orig = def_of(src);
    /* a strategy for what the program is not (a scan rule on a reduce)
     * does not apply: nothing to run (the defaults apply to everything) */
    if (strategy && !by_default) {
        st_err err = {0};
        const st_strategy *s = st_strategy_parse(cx, reg, "strategy", strategy, &err);
        ck_assert_msg(s != NULL, "%s: %s", label, err.message);
        st_rw *rw = st_rw_new(cx, reg);
        const st_def *now = st_rewrite_def(rw, s, orig, &err);
        st_rw_free(rw);
        if (!now) return;
    }
    st_code code = generated(lowered(apply(orig, strategy, label), label), label);
    st_exe *exe = built(&code, label);
    const char *sets = strstr(src, "s: i32") ? "s=-4" : NULL;
    for (size_t i = 0; i < sizeof lengths / sizeof *lengths; i++) {
        if (!st_test_length(lengths[i], _i)) continue;
        const char *n = text_of("N=%lld", (long long)lengths[i]);
        agrees(exe, orig, sets ? text_of("%s %s", n, sets) : n, 17 + i, label);
    }
    st_exe_free(exe);
}
END_TEST

/* The rewrite's text: a neutral seed is left alone; another becomes the
 * neutral element with the seed in a post-function (a scan), an operand
 * (a reduce) or nowhere (reduce_by_index); an expression is let-bound; an
 * operator of tuples keeps its seed. */
static const char *rewritten(const char *src) { return printed_def(apply(def_of(src), "seeds-as-neutral", src)); }

START_TEST(the_rewrite_takes_out_only_what_it_must) {
    ck_assert_has(rewritten("def main(xs: [N]i32): [N]i32 = xs |> scan(+, 0)"), "scan(+, 0)");
    ck_assert_has(rewritten("def main(xs: [N]i32): [N]i32 = xs |> scan(min, 2147483647)"), "scan(min, 2147483647)");
    ck_assert_has(rewritten("def main(xs: [N]f32): [N]f32 = xs |> scan(+, -0.0)"), "scan(+, -0.0)");
    /* the post-function's parameters are fresh names (a_3) */
    const char *plus = rewritten("def main(xs: [N]i32): [N]i32 = xs |> scan(+, 5)");
    ck_assert_has(plus, "scan(+, +, (a");
    ck_assert_has(plus, "=> 5 + a");
    const char *most = rewritten("def main(xs: [N]f32): [N]f32 = xs |> scan(max, 0.0)");
    ck_assert_has(most, "scan(max, max, (a");
    ck_assert_has(most, "=> max(0.0, a");
    ck_assert_has(most, "-f32.inf)");
    ck_assert_has(rewritten("def main(xs: [N]i64) = scanTotal(xs |> scan(max, 0i64))"),
                  "max(0, scanTotal(xs |> scan(max, -9223372036854775808)))");
    ck_assert_has(rewritten("def main(xs: [N]i32): i32 = xs |> reduce(*, 3)"), "3 * (xs |> reduce(*, 1))");
    const char *bound = rewritten("def main(xs: [N]i32, s: i32): [N]i32 = xs |> scan(+, s * 2)");
    ck_assert_has(bound, "let seed");
    ck_assert_has(bound, " = s * 2\n");
    ck_assert_has(rewritten("def main(is: [N]i32): [4]i32 = reduce_by_index(replicate(4, 0), +, 3, is, replicate(N, 1))"),
                  "reduce_by_index(replicate(4, 0), +, 0, is, replicate(N, 1))");
    ck_assert_has(rewritten("def main(xs: [N]i32, ys: [N]i32) =\n"
                            "  zip(xs, ys) |> scan((p, q) => (p.0 + q.0, p.1 + q.1), (1, 2)) |> unzip"),
                  "(1, 2)");
}
END_TEST

/* Without seeds-as-neutral, a rule that starts every block from the seed
 * takes a seed it would take out out of its own node first (rather than
 * add it once a block: every_strategy_keeps_the_seed runs them), or, where
 * its node holds the scan, refuses it and says what to apply;
 * exscans-as-scans takes an exscan's out (its shifted input starts with the
 * seed). */
START_TEST(rules_take_a_seed_left_in_out) {
    static const struct {
        const char *src, *strategy, *has;
    } taken[] = {
        {"def main(xs: [N]i32): [N]i32 = xs |> scan(+, 5)", "first(scan, lookback(M=64, WG=4))", "=> 5 + a"},
        {"def main(xs: [N]i32): [N]i32 = xs |> scan(+, 5)", "first(scan, parallel-scan(BS=256, BF=2, SE=4))", "5 + ("},
        {"def main(xs: [N]i32): [N]i32 = xs |> scan(+, 5)", "first(scan, scan-then-propagate(BS=1))", "=> 5 + a"},
        {"def main(xs: [N]i32, s: i32): [N]i32 where N % 2 == 0 = xs |> scan(+, s * 2)", "first(scan, brent-kung-step(BF=2))",
         "let seed"},
        {"def main(xs: [N]i32): i32 = xs |> reduce(+, 5)", "first(reduce, lookback(M=16, WG=8))", "5 + scanTotal("},
        {"def main(xs: [N]i32): i32 = xs |> reduce(max, 3)", "first(reduce, parallel-reduce(BS=1024))", "max(3, "},
        {"def main(xs: [N]i64): [N]i64 = xs |> exscan(+, 9i64)", "exscans-as-scans", "=> 9 + "},
    };
    for (size_t i = 0; i < sizeof taken / sizeof *taken; i++)
        ck_assert_has(printed_def(apply(def_of(taken[i].src), taken[i].strategy, taken[i].strategy)), taken[i].has);
    static const struct {
        const char *src, *strategy, *rule;
    } refused[] = {
        {"def main(xs: [R][C]i32): [R][C]i32 = xs |> map(r => r |> scan(+, 1))", "segmented-scan(WG=4)", "segmented-scan"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        st_err err = {0};
        const st_strategy *s = st_strategy_parse(cx, reg, "strategy", refused[i].strategy, &err);
        ck_assert_msg(s != NULL, "%s: %s", refused[i].strategy, err.message);
        st_rw *rw = st_rw_new(cx, reg);
        const st_def *now = st_rewrite_def(rw, s, def_of(refused[i].src), &err);
        st_rw_free(rw);
        ck_assert_msg(!now, "%s applied to %s", refused[i].strategy, refused[i].src);
        ck_assert_int_eq(err.kind, ST_ERR_USER);
        ck_assert_msg(strstr(err.message, refused[i].rule) && strstr(err.message, "seeds-as-neutral"),
                      "%s on %s: %s", refused[i].strategy, refused[i].src, err.message);
        ck_assert_int_gt(err.loc.line, 0);
    }
}
END_TEST

int main(void) {
    Suite *s = suite_create("seeds");
    TCase *tc = tcase_create("rewrite");
    tcase_add_checked_fixture(tc, rules_setup, rules_teardown);
    tcase_add_test(tc, the_rewrite_takes_out_only_what_it_must);
    tcase_add_test(tc, rules_take_a_seed_left_in_out);
    suite_add_tcase(s, tc);
    tc = tcase_create("device");
    tcase_add_checked_fixture(tc, rules_setup, pipeline_teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, every_strategy_keeps_the_seed, 0, NPROGRAMS * NSTRATEGIES);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
