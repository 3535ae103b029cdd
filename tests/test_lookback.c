/* tests/test_lookback.c — the single-pass scan with decoupled look-back
 * (strategies/lookback.c, codegen/cg_lookback.c) on the device: every scan
 * example, fused or not, against the interpreter at many lengths and
 * parameters; a stress of hundreds of launches; the bounded wait reported
 * instead of a hang; the state reset between launches; and the command
 * line's refusals. */
#include "lookback_cases.h"
#include "pipeline_fixture.h"
#include "consumer_cases.h"
#include "run_strata.h"

#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Every scan example, against the interpreter                              */
/* ------------------------------------------------------------------------ */

static const int64_t example_lengths[] = {1, 7, 1000, 65536, 1000003};

START_TEST(examples_through_lookback_equal_the_interpreter) {
    const example_case *c = &example_cases[_i];
    const char *label = text_of("%s under %s", c->program, c->strategy);
    const st_def *orig = example_def(c->program);
    st_code code = generated(lowered(apply(orig, c->strategy, label), label), label);
    ck_assert_msg(count_of(code.opencl, "/* scanLookback:") == 1, "%s: no single-pass kernel:\n%s", label, code.opencl);
    if (c->kernels)
        ck_assert_msg(code.nkernels == c->kernels, "%s: %u kernels, expected %u:\n%s", label, code.nkernels, c->kernels,
                      code.opencl);
    st_exe *exe = built(&code, label);
    for (size_t i = 0; i < sizeof example_lengths / sizeof *example_lengths; i++)
        if (st_test_length(example_lengths[i], _i))
            agrees(exe, orig, text_of("N=%lld%s", (long long)example_lengths[i], c->scalars), 11 + i, label);
    st_exe_free(exe);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Stress: hundreds of launches of random lengths and parameters            */
/* ------------------------------------------------------------------------ */

static uint64_t next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

START_TEST(hundreds_of_random_launches_agree) {
    static const char *const programs[] = {"prefix_sum", "advanced", "linear_recurrence"};
    static const int64_t wgs[] = {1, 2, 3, 8, 32, 64, 100, 256};
    uint64_t seed = 0x9e3779b97f4a7c15u;
    int launches = 0;
    for (int v = 0; v < 12; v++) {
        int64_t m = 1 + (int64_t)(next(&seed) % 24), wg = wgs[next(&seed) % 8];
        int64_t lw = 1 + (int64_t)(next(&seed) % (uint64_t)wg);
        if (lw > 32) lw = 32;
        const char *load = next(&seed) % 2 ? "direct" : "local";
        const char *program = programs[v % 3];
        const char *strategy = text_of("first(scan, lookback(M=%lld, WG=%lld, LW=%lld, LOAD=%s))", (long long)m,
                                       (long long)wg, (long long)lw, load);
        const char *label = text_of("%s under %s", program, strategy);
        const st_def *orig = example_def(program);
        st_code code = generated(lowered(apply(orig, strategy, label), label), label);
        st_exe *exe = built(&code, label);
        for (int k = 0; k < 25; k++, launches++) {
            /* mostly short (a block or a few, the tail at every offset), some long */
            uint64_t r = next(&seed);
            int64_t n = r % 4 == 0 ? (int64_t)(next(&seed) % 300000) : (int64_t)(next(&seed) % (uint64_t)(3 * m * wg + 2));
            agrees(exe, orig, text_of("N=%lld", (long long)n), next(&seed), label);
        }
        st_exe_free(exe);
    }
    ck_assert_int_eq(launches, 300);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The bounded wait, and the state between launches                         */
/* ------------------------------------------------------------------------ */

/* A launch of d on prefix inputs of length n (seeded). */
static st_launch *launch_of(st_exe *exe, const st_def *d, int64_t n, st_arena *a, st_expected *want) {
    st_inputs *in = st_inputs_new(cx, d, a);
    st_err err = {0};
    ck_assert(st_inputs_set(in, text_of("N=%lld", (long long)n), &err));
    ck_assert(st_inputs_generate(in, 5, &err));
    const st_value *args;
    const st_binding *env;
    size_t nenv;
    ck_assert(st_inputs_finish(in, &args, &env, &nenv, &err));
    if (want) ck_assert_msg(st_eval_expected(cx, d, args, env, nenv, a, want, &err), "%s", err.message);
    st_launch *l = st_launch_new(exe, args, env, nenv, &err);
    ck_assert_msg(l != NULL, "%s", err.message);
    return l;
}

/* A group that never publishes (the kernel's test hook) leaves its
 * successors waiting: after STRATA_LOOKBACK_SPINS reads they give up, and
 * the run is an error that names the first to, not a hang. Both protocols.
 * Which group gives up first is the scheduler's: every group after the lost
 * one waits on it, and on a loaded machine even a group before it may
 * exhaust its reads while its own predecessor's thread is descheduled (CI
 * saw group 1 give up). Only group 0, which has no predecessor, never
 * waits. The bound is high enough (2^20 reads) to make that rare, and low
 * enough that the ~30 waiting groups give up within a second. */
START_TEST(a_lost_predecessor_is_an_error_not_a_hang) {
    static const char *const programs[] = {"prefix_sum", "advanced"};
    static const char *const strategies[] = {LB("M=4, WG=8"), LB("M=4, WG=8, LW=4, LOAD=direct")};
    for (int p = 0; p < 2; p++)
        for (int s = 0; s < 2; s++) {
            const char *label = text_of("%s under %s", programs[p], strategies[s]);
            const st_def *orig = example_def(programs[p]);
            st_code code = generated(lowered(apply(orig, strategies[s], label), label), label);
            /* the test hook in both texts: a CUDA device ($STRATA_TEST_DEVICE) builds code.cuda */
            const char *hook = "#define STRATA_LOOKBACK_SPINS (1L << 20)\n#define STRATA_LOOKBACK_SILENT_GROUP 2L\n";
            code.opencl = text_of("%s%s", hook, code.opencl);
            if (code.cuda) code.cuda = text_of("%s%s", hook, code.cuda);
            st_exe *exe = built(&code, label);
            st_arena *a = st_arena_new();
            st_launch *l = launch_of(exe, orig, 1000, a, NULL);
            st_err err = {0};
            ck_assert_msg(!st_launch_run(l, NULL, &err), "%s: a lost group went unnoticed", label);
            const char *at = strstr(err.message, "work-group ");
            int group = -1;
            ck_assert_msg(at && sscanf(at, "work-group %d waited more than STRATA_LOOKBACK_SPINS reads", &group) == 1,
                          "%s: %s", label, err.message);
            ck_assert_msg(group >= 1, "%s: group %d, which has no predecessor, gave up: %s", label, group, err.message);
            ck_assert_has(err.message, "waited more than STRATA_LOOKBACK_SPINS reads for a predecessor's flag");
            ck_assert_has(err.message, "STRATA_LOOKBACK_STALLED");
            st_launch_free(l);
            st_arena_free(a);
            st_exe_free(exe);
        }
}
END_TEST

/* LOAD=direct with LW=1 does not wait for a predecessor that does not
 * publish (a CPU thread preempted, or a group lost): after
 * STRATA_LOOKBACK_PATIENCE reads of its empty flag it folds that block
 * itself. With group 0 or 2 silent and no patience at all, every look-back
 * that finds an empty flag folds, and the results are still right. */
START_TEST(a_lost_predecessor_is_folded_on_a_cpu) {
    static const char *const programs[] = {"prefix_sum", "advanced", "linear_recurrence"};
    static const char *const strategies[] = {LB("M=4, WG=8, LOAD=direct"), LB("M=64, WG=1, LOAD=direct"),
                                             LB("M=7, WG=3, LOAD=direct")};
    for (int p = 0; p < 3; p++)
        for (int s = 0; s < 6; s++) {
            const char *label = text_of("%s under %s, group %d silent", programs[p], strategies[s % 3], s / 3 * 2);
            const st_def *orig = example_def(programs[p]);
            st_code code = generated(lowered(apply(orig, strategies[s % 3], label), label), label);
            code.opencl = text_of("#define STRATA_LOOKBACK_PATIENCE 0\n#define STRATA_LOOKBACK_SILENT_GROUP %dL\n%s",
                                  s / 3 * 2, code.opencl);
            st_exe *exe = built(&code, label);
            agrees(exe, orig, "N=1000", 41, label);
            agrees(exe, orig, "N=100003", 42, label);
            st_exe_free(exe);
        }
}
END_TEST

/* One launch run again and again gives the same, right, result: the
 * ticket and the flags start from zero each time. */
START_TEST(the_state_is_reset_between_launches) {
    const st_def *orig = example_def("prefix_sum");
    const char *label = "prefix_sum, run five times";
    st_code code = generated(lowered(apply(orig, LB("M=4, WG=16"), label), label), label);
    st_exe *exe = built(&code, label);
    st_arena *a = st_arena_new();
    st_expected want;
    st_launch *l = launch_of(exe, orig, 100003, a, &want);
    for (int run = 0; run < 5; run++) {
        st_err err = {0};
        st_value got;
        ck_assert_msg(st_launch_run(l, NULL, &err), "run %d: %s", run, err.message);
        ck_assert_msg(st_launch_read(l, a, &got, &err), "run %d: %s", run, err.message);
        ck_assert_msg(st_expected_agree(&got, &want, ST_TOLERANCE, &err), "run %d: %s", run, err.message);
    }
    double samples[4];
    st_err err = {0};
    ck_assert_msg(st_launch_time(l, 1, 4, samples, NULL, &err), "%s", err.message);
    st_launch_free(l);
    st_arena_free(a);
    st_exe_free(exe);
}
END_TEST

/* Only a top-level scan is a kernel of its own. */
START_TEST(a_single_pass_scan_inside_a_map_is_refused) {
    const st_def *d = def_of("def main(xs: [N][64]i32): [N][64]i32 =\n"
                             "  xs |> map(row => row |> scanLookback(4, 16, 1, 0, +, 0))\n");
    st_code code;
    st_err err = {0};
    ck_assert(!st_codegen(cx, lowered(d, "nested"), ar, &code, &err));
    ck_assert_has(err.message, "scanLookback");
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The command line                                                         */
/* ------------------------------------------------------------------------ */

START_TEST(run_rewrite_and_check_take_the_rule) {
    cli c;
    cli_open(&c, "lookback");
    char *out, *err;
    int rc = cli_strata(&c, ARGS("rewrite", cli_example(&c, "prefix_sum"), "-s", "lookback(M=8, WG=128, LOAD=direct)"), &out, &err);
    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_has(out, "xs |> scanLookback(8, 128, 1, 1, +, 0.0)");
    /* what it prints reads back */
    rc = cli_strata(&c, ARGS("run", cli_file(&c, "printed", out), "--size", "N=65537", "--check"), &out, &err);
    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_has(err, "check: the results equal the interpreter's");
    rc = cli_strata(&c, ARGS("run", cli_example(&c, "filter"), "-s", FUSED LB("M=4, WG=64, LW=8"), "--size", "N=99991", "--check"),
                &out, &err);
    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_has(err, "check: the results equal the interpreter's");
    cli_close(&c);
}
END_TEST

START_TEST(bad_parameters_and_programs_are_refused_with_a_place) {
    cli c;
    cli_open(&c, "lookback");
    char *out, *err;
    const char *ps = cli_example(&c, "prefix_sum");
    ck_assert_int_eq(cli_strata(&c, ARGS("run", ps, "-s", "lookback(M=8, WG=64, LOAD=nowhere)", "--size", "N=10"), &out, &err), 1);
    ck_assert_has(err, "strategy:1:27: error: LOAD is one of local, direct, not `nowhere`");
    ck_assert_int_eq(cli_strata(&c, ARGS("run", ps, "-s", "lookback(M=8, WG=16, LW=32)", "--size", "N=10"), &out, &err), 1);
    ck_assert_has(err, "LW = 32 work-items cannot read predecessors in a group of WG = 16");
    ck_assert_int_eq(cli_strata(&c, ARGS("run", ps, "-s", "lookback(M=0, WG=16)", "--size", "N=10"), &out, &err), 1);
    ck_assert_has(err, "M");
    /* local memory the device does not have: refused before the launch */
    ck_assert_int_eq(cli_strata(&c, ARGS("run", ps, "-s", "lookback(M=2048, WG=1024)", "--size", "N=1000"), &out, &err), 1);
    ck_assert_has(err, "bytes of local memory per work-group");
    /* by hand, with a size that is not a literal */
    const char *bad = cli_file(&c, "bad", "def main(xs: [N]f32): [N]f32 =\n  xs |> scanLookback(N, 8, 1, 0, +, 0.0)\n");
    ck_assert_int_eq(cli_strata(&c, ARGS("check", bad), &out, &err), 1);
    ck_assert_has(err, "bad.strata:2:22: error: scanLookback's M, the elements per work-item, must be a literal");
    cli_close(&c);
}
END_TEST

/* The look-back's space explores like [Pizzuti et al. 2022]'s, names and all. */
START_TEST(the_lookback_space_explores) {
    cli c;
    cli_open(&c, "lookback");
    char *csv = cli_explored(&c, ARGS("explore", cli_example(&c, "prefix_sum"), "--space",
                                      "lookback(M=[4, 64], WG=[16, 64], LOAD=[local, direct])", "--out",
                                      arena_text(c.a, "%s/explored", c.dir), "--size", "N=100003", "--runs", "7",
                                      "--cache", "none"));
    ck_assert_int_eq(count_of(csv, ",ok,"), 8);
    ck_assert_has(csv, "direct");
    cli_close(&c);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The CPU's shape: lanes and vector registers                              */
/* ------------------------------------------------------------------------ */

/* LOAD=direct folds a commutative operator's runs in vector-wide lanes and,
 * on PoCL, scans a plain scan in vector registers with streaming stores
 * (M = 64: four runs of 16, one vector of 4-byte lanes each; M = 24: runs
 * that are no whole number of vectors, the scalar loop). Every type the
 * vectors take, every operator, seeds, lengths that end mid-vector and
 * mid-run. */
static const char *const vector_scans[] = {
    "def main(xs: [N]i32): [N]i32 = xs |> scan(+, 0)",
    "def main(xs: [N]u32): [N]u32 = xs |> scan(^, 0)",
    "def main(xs: [N]i64): [N]i64 = xs |> scan((a, b) => b + a, 0)",
    "def main(xs: [N]f32): [N]f32 = xs |> scan(+, 0.0)",
    "def main(xs: [N]f64): [N]f64 = xs |> scan(+, 0.0)",
    "def main(xs: [N]i32): [N]i32 = xs |> scan(*, 1)",
    "def main(xs: [N]i32): [N]i32 = xs |> scan((a, b) => max(a, b), -2147483648)",
    "def main(xs: [N]f32): [N]f32 = xs |> scan((a, b) => min(a, b), f32.inf)",
    "def main(xs: [N]u32): [N]u32 = xs |> scan(|, 0)",
    /* a scan of a fused map, fold(a, y) = op(a, f(y)): each lane's f(y) in
     * the vector loop; of other elements than its accumulators; and a fold
     * of another shape (op(a, y) then more), which the scalar loop takes */
    "def main(xs: [N]i32): [N]i32 = xs |> scan(+, (a, y) => a + (y * 3 + 1), 0)",
    "def main(xs: [N]f32): [N]f32 = xs |> scan(max, (a, y) => max(a, y * 2.0 - 1.0), -f32.inf)",
    "def main(xs: [N]i32): [N]f32 = xs |> scan(+, (a, y) => a + f32(y % 7), 0.0)",
    "def main(xs: [N]i32): [N]i32 = xs |> scan(+, (a, y) => a + y * 3 + 1, 0)",
    /* seeds that are not the neutral element (rewrite/seeds.c puts them in
     * a post-function, (a, x) => op(z, a)): applied to each vector stored,
     * a literal, an expression of a size, beside a fused map's fold */
    "def main(xs: [N]i32): [N]i32 = xs |> scan(+, 5)",
    "def main(xs: [N]i64): [N]i64 = xs |> scan(+, N * 3)",
    "def main(xs: [N]f32): [N]f32 = xs |> scan(max, f32(N) - 100.0)",
    "def main(xs: [N]u32): [N]u32 = xs |> scan(^, 12345u32)",
    "def main(xs: [N]i32): [N]i32 = xs |> scan(+, (a, y) => a + (y * 3 + 1), 7)",
    /* a map the strategy leaves unfused: read element by element, the
     * scalar loop (codegen refused it: a map in one work-item's code) */
    "def main(xs: [N]i32): [N]i32 = xs |> map(x => x * 3) |> scan(+, 0)",
};

/* The OpenCL vector type of a vector_scans program's results: 64 bytes. */
static const char *vector_type_of(const char *src) {
    static const char *const types[][2] = {{"[N]i32", "int16"}, {"[N]u32", "uint16"}, {"[N]i64", "long8"},
                                           {"[N]f32", "float16"}, {"[N]f64", "double8"}};
    const char *result = strstr(src, "): ");
    for (size_t i = 0; result && i < sizeof types / sizeof *types; i++)
        if (strstr(result, types[i][0])) return types[i][1];
    ck_abort_msg("no vector type for %s", src);
    return NULL;
}

START_TEST(the_cpu_shape_in_vectors_equals_the_interpreter) {
    static const int64_t lengths[] = {1, 7, 64, 1009, 65536, 1000003};
    static const char *const strategies[] = {LB("M=64, WG=1, LOAD=direct"), LB("M=64, WG=3, LOAD=direct"),
                                             LB("M=24, WG=2, LOAD=direct")};
    const char *src = vector_scans[_i / 3], *strategy = strategies[_i % 3];
    const char *label = text_of("%s under %s", src, strategy);
    const st_def *orig = def_of(src);
    st_code code = generated(lowered(apply(orig, strategy, label), label), label);
    bool whole_vectors = strstr(strategy, "M=64") != NULL && !strstr(src, "a + y * 3 + 1") && !strstr(src, "map(");
    ck_assert_msg((count_of(code.opencl, "ST_STREAM((__global") > 0) == whole_vectors, "%s: %s vector scan", label,
                  whole_vectors ? "no" : "a");
    /* each of the four runs' vector loops prefetches the block ahead, a
     * line a vector, and shifts its lanes by ST_LANES_UP (valign on
     * AVX-512), log2(lanes) times */
    bool wide = strstr(src, "i64") || strstr(src, "f64");
    ck_assert_int_eq(count_of(code.opencl, "ST_PREFETCH(lb_src + lb_ahead + lb_j);"), whole_vectors ? 4 : 0);
    const char *shift = text_of("ST_LANES_UP%d(%s, lb_t, lb_zv, ", wide ? 8 : 16, vector_type_of(src));
    ck_assert_int_eq(count_of(code.opencl, shift), whole_vectors ? 4 * (wide ? 3 : 4) : 0);
    ck_assert(!strstr(code.opencl, "__builtin_shufflevector(lb_t"));
    st_exe *exe = built(&code, label);
    for (size_t i = 0; i < sizeof lengths / sizeof *lengths; i++)
        if (st_test_length(lengths[i], _i)) agrees(exe, orig, text_of("N=%lld", (long long)lengths[i]), 31 + i, label);
    st_exe_free(exe);
}
END_TEST

/* Rows as elements (issue 46): each element of the scan a row's sum, read
 * at a row index times M. The index of the vector loop's lanes and of its
 * tail, a sum, was pasted in front of `* s_M` unbracketed: wrong from the
 * first whole vector on (element 32 under M=64, 4096 under the CPU's
 * default). */
START_TEST(rows_as_elements_equal_the_interpreter) {
    static const char *const strategies[] = {LB("M=64, WG=1, LOAD=direct"), LB("M=24, WG=2, LOAD=direct"), NULL};
    static const int64_t lengths[] = {1, 7, 1000, 5000};
    const char *src = "def main(xss: [N][M]i32): [N]i32 = xss |> map(row => reduce(+, 0, row)) |> scan(+, 0)";
    const char *strategy = strategies[_i] ? strategies[_i] : st_default_strategy("CPU");
    const char *label = text_of("rows as elements under %s", strategy);
    const st_def *orig = def_of(src);
    st_code code = generated(lowered(apply(orig, strategy, label), label), label);
    st_exe *exe = built(&code, label);
    for (size_t i = 0; i < sizeof lengths / sizeof *lengths; i++)
        agrees(exe, orig, text_of("N=%lld M=3", (long long)lengths[i]), 41 + i, label);
    st_exe_free(exe);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* A scan read by something other than a let                                */
/* ------------------------------------------------------------------------ */

#define NSCAN_STRATEGIES (sizeof scan_strategies / sizeof *scan_strategies)

START_TEST(a_scan_read_directly_equals_the_interpreter) {
    const consumer_case *c = &scan_consumers[_i / NSCAN_STRATEGIES];
    const char *strategy = scan_strategies[_i % NSCAN_STRATEGIES];
    /* parallel-scan's own steps may find the outer of two scans and refuse
     * (issue 18, item 2); a refusal at rewrite time is a next choice, never
     * a wrong program */
    bool refusal_ok = !strcmp(c->what, "another scan") && strstr(strategy, "parallel-scan");
    consumer_agrees(c, strategy, refusal_ok);
}
END_TEST

static Suite *lookback_suite(void) {
    Suite *s = suite_create("lookback");
    TCase *ex = tcase_create("examples");
    tcase_set_timeout(ex, 600);
    tcase_add_checked_fixture(ex, rules_setup, pipeline_teardown);
    tcase_add_loop_test(ex, examples_through_lookback_equal_the_interpreter, 0,
                        (int)(sizeof example_cases / sizeof *example_cases));
    tcase_add_test(ex, hundreds_of_random_launches_agree);
    tcase_add_test(ex, a_lost_predecessor_is_an_error_not_a_hang);
    tcase_add_test(ex, the_state_is_reset_between_launches);
    tcase_add_test(ex, a_single_pass_scan_inside_a_map_is_refused);
    suite_add_tcase(s, ex);
    TCase *ve = tcase_create("vectors");
    tcase_set_timeout(ve, 600);
    tcase_add_checked_fixture(ve, rules_setup, pipeline_teardown);
    tcase_add_loop_test(ve, the_cpu_shape_in_vectors_equals_the_interpreter, 0,
                        (int)(3 * sizeof vector_scans / sizeof *vector_scans));
    tcase_add_test(ve, a_lost_predecessor_is_folded_on_a_cpu);
    tcase_add_loop_test(ve, rows_as_elements_equal_the_interpreter, 0, 3);
    suite_add_tcase(s, ve);
    TCase *co = tcase_create("consumers");
    tcase_set_timeout(co, 600);
    tcase_add_checked_fixture(co, rules_setup, pipeline_teardown);
    tcase_add_loop_test(co, a_scan_read_directly_equals_the_interpreter, 0,
                        (int)(NSCAN_STRATEGIES * (sizeof scan_consumers / sizeof *scan_consumers)));
    suite_add_tcase(s, co);
    TCase *cl = tcase_create("cli");
    tcase_set_timeout(cl, 600);
    tcase_add_test(cl, run_rewrite_and_check_take_the_rule);
    tcase_add_test(cl, bad_parameters_and_programs_are_refused_with_a_place);
    tcase_add_test(cl, the_lookback_space_explores);
    suite_add_tcase(s, cl);
    return s;
}

int main(void) { return run_suite(lookback_suite()); }
