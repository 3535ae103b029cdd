/* tests/test_checking.c — the float oracle of `strata run --check` and
 * `strata explore` (issue 46, items 4 and 5; docs/checking.md), through
 * the real binary on the OpenCL device: correct variants of float sums and
 * scans pass where a left fold in f32 was the reference (it sticks at 2^24,
 * and cancels where the values' mean is zero), and a rule that is wrong on
 * purpose (tests/plugins/wrong.c) fails whatever the magnitude of its
 * results, where a tolerance absolute below 1 let all zeros through. */
#include "run_strata.h"

#include <math.h>

#define NORMALISE "def main(xs: [N]f32): [N]f32 = let s = reduce(+, 0.0, xs) in xs |> map(x => x / s)\n"

static const char *wrong_plugin(cli *c) { return arena_text(c->a, "%s/plugin_wrong.so", env_path("STRATA_TEST_PLUGINS")); }

/* n values of f32 from a seeded generator into c's folder as NAME.npy:
 * normal(0, sigma) (Box-Muller) when sigma > 0, else uniform in [-1, 1). */
static const char *floats_file(cli *c, const char *name, int64_t n, double sigma) {
    uint64_t state = 12345;
    float *data = st_arena_alloc(c->a, (size_t)n * sizeof *data);
    int64_t *dims = st_arena_alloc(c->a, sizeof *dims);
    ck_assert(data && dims);
    for (int64_t i = 0; i < n; i++) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        double u = ((double)(state >> 11) + 0.5) / 9007199254740992.0;
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        double v = ((double)(state >> 11) + 0.5) / 9007199254740992.0;
        data[i] = sigma > 0 ? (float)(sigma * sqrt(-2 * log(u)) * cos(6.283185307179586 * v)) : (float)(2 * u - 1);
    }
    dims[0] = n;
    st_value x = {.kind = ST_VALUE_ARRAY, .scalar = ST_F32, .n = 1, .u.a = {.dims = dims, .data = data}};
    const char *path = arena_text(c->a, "%s/%s.npy", c->dir, name);
    st_err err = {0};
    ck_assert_msg(st_npy_write(path, &x, &err), "%s", err.message);
    return path;
}

/* ---- correct variants pass ---- */

/* A scan of 10^6 normal(0, 100) values, and a sum and a scan of values of
 * mean zero: under the default for the device, the look-back read directly
 * (a long chain of block prefixes), parallel-scan, and one work-item's left
 * fold (-s id). */
START_TEST(float_scans_and_sums_of_any_sign_pass) {
    cli c;
    cli_open(&c, "checking");
    const char *scan = cli_file(&c, "scan", "def main(xs: [N]f32): [N]f32 = xs |> scan(+, 0.0)\n");
    const char *sum = cli_file(&c, "sum", "def main(xs: [N]f32): f32 = xs |> reduce(+, 0.0)\n");
    const char *inputs[] = {arena_text(c.a, "xs=%s", floats_file(&c, "normal", 1000000, 100.0)),
                            arena_text(c.a, "xs=%s", floats_file(&c, "mean-zero", 1000003, 0))};
    static const char *const strategies[] = {NULL, "id", "first(scan, lookback(M=64, WG=1, LOAD=direct))",
                                             "each(scan, parallel-scan(BS=256, BF=2, SE=4))"};
    for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++)
        for (size_t s = 0; s < sizeof strategies / sizeof *strategies; s++) {
            const char *prog = s < 2 && i == 1 ? sum : scan; /* the sum where no scan rule applies */
            char *out, *err;
            int rc = strategies[s] ? cli_strata(&c, ARGS("run", prog, "--input", inputs[i], "--check", "-s", strategies[s]), &out, &err)
                                   : cli_strata(&c, ARGS("run", prog, "--input", inputs[i], "--check"), &out, &err);
            ck_assert_msg(rc == 0 && strstr(err, "check: the results equal"), "%s, %s under %s: %s", prog, inputs[i],
                          strategies[s] ? strategies[s] : "the default", err);
        }
    cli_close(&c);
}
END_TEST

/* 2^25 ones summed: a left fold in f32 sticks at 2^24, half the sum (the
 * reference did, so every correct variant failed); the reference's tree
 * is exact. In a plain build alone: the interpreter's 2^25 elements take
 * minutes under the sanitizers. */
START_TEST(a_sum_past_2_to_the_24_passes) {
    if (!st_test_big(1)) return;
    cli c;
    cli_open(&c, "checking");
    const char *prog = cli_file(&c, "ones", "def main(xs: [N]u8): f32 = xs |> map(x => 1.0f32) |> reduce(+, 0.0)\n");
    char *out, *err;
    int rc = cli_strata(&c, ARGS("run", prog, "--size", "N=33554432", "--check"), &out, &err);
    ck_assert_msg(rc == 0 && strstr(err, "check: the results equal") && strstr(out, "33554432"), "%s%s", out, err);
    cli_close(&c);
}
END_TEST

/* ---- wrong answers fail ---- */

/* x / Σx of 1000 and of 10^5 values, about 2e-3 and 2e-5: all zeros, and
 * 12.5% off, fail; the rule at BY = 40, a factor that rounds to 1, passes. */
START_TEST(a_wrong_answer_of_any_magnitude_fails_check) {
    cli c;
    cli_open(&c, "checking");
    const char *prog = cli_file(&c, "normalise", NORMALISE), *plugin = wrong_plugin(&c);
    static const char *const sizes[] = {"N=1000", "N=100000"};
    static const struct {
        const char *by;
        bool right;
    } cases[] = {{"0", false}, {"3", false}, {"40", true}};
    for (size_t n = 0; n < sizeof sizes / sizeof *sizes; n++)
        for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
            const char *strategy = arena_text(c.a, "first(map, test-wrong-floats(BY=%s))", cases[k].by);
            char *out, *err;
            int rc = cli_strata(&c, ARGS("run", prog, "--size", sizes[n], "--check", "--plugin", plugin, "-s", strategy),
                                &out, &err);
            if (cases[k].right)
                ck_assert_msg(rc == 0 && strstr(err, "check: the results equal"), "%s at %s: %s", strategy, sizes[n], err);
            else
                ck_assert_msg(rc == 1 && strstr(err, "check: the device disagrees with the interpreter") &&
                                  strstr(err, "(within "),
                              "%s at %s: exit %d\n%s", strategy, sizes[n], rc, err);
        }
    cli_close(&c);
}
END_TEST

/* The same rule as a space: its wrong points are recorded wrong_answer,
 * the right one ok and best. */
START_TEST(an_exploration_records_wrong_answers) {
    cli c;
    cli_open(&c, "checking");
    const char *prog = cli_file(&c, "normalise", NORMALISE), *dir = arena_text(c.a, "%s/out", c.dir);
    char *csv = cli_explored(&c, ARGS("explore", prog, "--size", "N=100000", "--plugin", wrong_plugin(&c), "--out", dir,
                                      "--space", "first(map, test-wrong-floats(BY=[0, 3, 40]))", "--runs", "7"));
    static const char *const rows[] = {"BY=0))\",0,wrong_answer", "BY=3))\",3,wrong_answer", "BY=40))\",40,ok"};
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) ck_assert_msg(strstr(csv, rows[i]), "no %s in\n%s", rows[i], csv);
    cli_close(&c);
}
END_TEST

static Suite *checking_suite(void) {
    Suite *s = suite_create("checking");
    TCase *t = tcase_create("floats");
    tcase_set_timeout(t, 600);
    tcase_add_test(t, float_scans_and_sums_of_any_sign_pass);
    tcase_add_test(t, a_sum_past_2_to_the_24_passes);
    tcase_add_test(t, a_wrong_answer_of_any_magnitude_fails_check);
    tcase_add_test(t, an_exploration_records_wrong_answers);
    suite_add_tcase(s, t);
    return s;
}

int main(void) { return run_suite(checking_suite()); }
