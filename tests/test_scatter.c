/* tests/test_scatter.c — a scatter's repeated index on the device (issue 46,
 * item 7): the last write in index order stays, as in the interpreter,
 * under every strategy that runs a scatter (none, the CPU's default, the
 * GPU's, and the look-back with the scatter fused into its scan, in each of
 * its loads), at lengths 1, 7, 1000 and the prime 1000003 and several
 * seeds, exactly; an index out of bounds is still skipped. And what codegen
 * makes of it: a pass of claims (cg_winners.c) for a scatter whose indices
 * may repeat, none for a scatterDistinct (a filter's, a partition's), its
 * winners 32-bit where the scatter's length allows and 64-bit past it.
 * (scatter_2d: tests/test_2d.c; the interpreter's scatterDistinct:
 * tests/test_interp.c; `strata run --check` on the issue's program:
 * tests/test_run.c.) */
#include "pipeline_fixture.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Programs and strategies                                                  */
/* ------------------------------------------------------------------------ */

/* The issue's: a million elements into 4 places. */
#define ISSUE "def main(xs: [N]i32): [4]i64 =\n  scatter(replicate(4, -1i64), map(x => i64(x) & 3, xs), iota(N))\n"
/* computed values; places 0..4 of x % 8 in [-7, 7], the rest out of bounds */
#define OUT_OF_BOUNDS "def main(xs: [N]i32): [5]i32 =\n  scatter(replicate(5, 7), xs |> map(x => i64(x % 8)), xs |> map(x => x * 3))\n"
/* (index, value) pairs */
#define PAIRS "def main(xs: [N]i32): [6]i32 =\n  scatter(replicate(6, 0), xs |> map(x => (i64(x % 9) - 1, x)))\n"
/* tuples of values: each place's index and element come from one writer */
#define TUPLES                                                                                        \
    "def main(xs: [N]i32): ([5]i64, [5]i32) =\n"                                                      \
    "  scatter(replicate(5, (-1i64, 0)), xs |> map(x => i64(x & 7) - 2), zip(iota(N), xs)) |> unzip\n"
/* a scatter a turn of a loop at the top (the glue's), into the last turn's */
#define LOOPED                                                                                        \
    "def main(xs: [N]i32): [8]i32 =\n"                                                                \
    "  loop acc = replicate(8, 0) for d < 3 do\n"                                                     \
    "    scatter(acc, xs |> map(x => i64((x >> i32(d)) & 7)), xs |> map(x => x + i32(d)))\n"
/* indices that are a scan (the count of odd elements so far, 20 places of
 * which 16 in bounds), which fuse-scan-scatter puts in the scan's kernel */
/* examples/exscan_scatter.strata with a scatter where it says scatterDistinct */
#define COMPACTION \
    "def main(xs: [N]i32) =\n"                                                           \
    "  let flags = xs |> map(x => if x > 0 then 1i64 else 0)\n"                           \
    "  let offsets = flags |> exscan(+, 0)\n"                                              \
    "  let count = flags |> reduce(+, 0)\n"                                                \
    "  let idx = zip(flags, offsets) |> map((f, o) => if f == 1 then o else -1)\n"        \
    "  in (scatter(replicate(N, 0), idx, xs), count)\n"
#define SCANNED                                                                                       \
    "def main(xs: [N]i32): [16]i32 =\n"                                                               \
    "  let c = xs |> map(x => i64(x & 1)) |> scan(+, 0i64)\n"                                         \
    "  in scatter(replicate(16, -7), c |> map(k => k % 20 - 2), xs)\n"

#define FUSE "try(each(any, try(fuse-map-scan))) ; try(each(any, try(fuse-scan-map))) ; try(each(any, try(fuse-scan-scatter))) ; "

typedef struct device_case {
    const char *what, *src;
    const char *strategy; /* "CPU", "GPU": that default; else the strategy's text */
} device_case;

static const device_case device_cases[] = {
    {"the issue's", ISSUE, "id"},
    {"the issue's", ISSUE, "CPU"},
    {"the issue's", ISSUE, "GPU"},
    {"out of bounds", OUT_OF_BOUNDS, "id"},
    {"out of bounds", OUT_OF_BOUNDS, "CPU"},
    {"out of bounds", OUT_OF_BOUNDS, "GPU"},
    {"pairs", PAIRS, "id"},
    {"pairs", PAIRS, "GPU"},
    {"tuples", TUPLES, "id"},
    {"tuples", TUPLES, "CPU"},
    {"looped", LOOPED, "id"},
    {"looped", LOOPED, "CPU"},
    {"scanned", SCANNED, "id"},
    {"scanned", SCANNED, "CPU"},
    {"scanned", SCANNED, "GPU"},
    /* the look-back's loads: held in registers, a block in local memory, direct */
    {"scanned", SCANNED, FUSE "each(top scan, lookback(M=4, WG=4))"},
    {"scanned", SCANNED, FUSE "each(top scan, lookback(M=64, WG=4))"},
    {"scanned", SCANNED, FUSE "each(top scan, lookback(M=16, WG=1, LOAD=direct))"},
    {"scanned", SCANNED, FUSE "each(top scan, lookback(M=12, WG=256, LW=32))"},
};

static const int64_t lengths[] = {1, 7, 1000, 1000003};
static const uint64_t seeds[] = {1, 2, 3};

static const char *strategy_text(const char *s) {
    return !strcmp(s, "CPU") || !strcmp(s, "GPU") ? st_default_strategy(s) : s;
}

/* ------------------------------------------------------------------------ */
/* On the device                                                            */
/* ------------------------------------------------------------------------ */

/* exe at N = n on orig's inputs of this seed: NULL when it equals the
 * interpreter exactly, else what went wrong. */
static const char *disagrees(st_exe *exe, const st_def *orig, int64_t n, uint64_t seed) {
    st_arena *a = st_arena_new();
    st_inputs *in = st_inputs_new(cx, orig, a);
    ck_assert(a != NULL && in != NULL);
    st_err err = {0};
    const st_value *args;
    const st_binding *env;
    size_t nenv;
    ck_assert_msg(st_inputs_set(in, text_of("N=%lld", (long long)n), &err) && st_inputs_generate(in, seed, &err) &&
                      st_inputs_finish(in, &args, &env, &nenv, &err),
                  "the inputs: %s", err.message);
    st_value want, got;
    const char *why = NULL;
    st_launch *l = NULL;
    if (!st_eval(cx, orig, args, env, nenv, a, &want, &err))
        why = text_of("the interpreter fails: %s", err.message);
    else if (!(l = st_launch_new(exe, args, env, nenv, &err)) || !st_launch_run(l, NULL, &err) ||
             !st_launch_read(l, a, &got, &err))
        why = text_of("the run fails: %s", err.message);
    else if (!st_value_agree(&got, &want, 0, &err))
        why = text_of("%s", err.message);
    st_launch_free(l);
    st_arena_free(a);
    return why;
}

START_TEST(the_last_write_stays_as_in_the_interpreter) {
    const device_case *c = &device_cases[_i];
    const char *label = text_of("%s under %s", c->what, c->strategy);
    fprintf(stderr, "scatter %d: %s\n", _i, label);
    const st_def *orig = def_of(c->src);
    const st_def *now = apply(orig, strategy_text(c->strategy), label);
    if (strstr(c->strategy, "lookback"))
        ck_assert_msg(strstr(printed_def(now), "scatter(replicate(16, -7), xs |> scanLookback("),
                      "%s: the scatter is not fused into the look-back:\n%s", label, printed_def(now));
    st_code code = generated(lowered(now, label), label);
    st_exe *exe = built(&code, label);
    faults f = {0};
    for (size_t k = 0; k < sizeof lengths / sizeof *lengths; k++)
        for (size_t s = 0; s < sizeof seeds / sizeof *seeds; s++) {
            const char *why = disagrees(exe, orig, lengths[k], seeds[s]);
            if (why) fault(&f, "%s, N=%lld, seed %llu: %s", label, (long long)lengths[k], (unsigned long long)seeds[s], why);
        }
    st_exe_free(exe);
    no_faults(&f);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* What codegen makes                                                       */
/* ------------------------------------------------------------------------ */

static st_code code_of(const char *src, const char *strategy, const char *label) {
    return generated(lowered(apply(def_of(src), strategy ? strategy_text(strategy) : NULL, label), label), label);
}

/* kernels whose name holds part */
static int kernels_named(const st_code *code, const char *part) {
    int n = 0;
    for (uint32_t i = 0; i < code->nkernels; i++) n += strstr(code->kernel_names[i], part) != NULL;
    return n;
}

/* look-back kernels that scan (not their state's resets) */
static int scans_of(const st_code *code) {
    int n = 0;
    for (uint32_t i = 0; i < code->nkernels; i++) {
        size_t len = strlen(code->kernel_names[i]);
        n += len > 9 && !strcmp(code->kernel_names[i] + len - 9, "_lookback");
    }
    return n;
}

/* A user's scatter claims its places in a pass of its own, after its
 * winners are reset; a fused scan runs once to claim and once to write. */
START_TEST(a_scatter_claims_before_it_writes) {
    st_code code = code_of(ISSUE, "id", "the issue's");
    ck_assert_int_eq(kernels_named(&code, "winners_reset"), 1);
    ck_assert_int_eq(kernels_named(&code, "scatter_claims"), 1);
    ck_assert_has(code.opencl, "atomic_max(");
    code = code_of(SCANNED, FUSE "each(top scan, lookback(M=4, WG=4))", "scanned");
    ck_assert_int_eq(kernels_named(&code, "winners_reset"), 1);
    ck_assert_int_eq(scans_of(&code), 2);
    /* the fused scan's compaction shape (a radix sort's, a compaction's)
     * is no promise: a user's compaction claims too */
    code = code_of(COMPACTION, st_default_strategy("CPU"), "a compaction");
    ck_assert_int_eq(kernels_named(&code, "winners_reset"), 1);
    /* the example says its places are distinct */
    code = generated(lowered(apply(example_def("exscan_scatter"), st_default_strategy("CPU"), "exscan_scatter"), "x"), "x");
    ck_assert_int_eq(kernels_named(&code, "winners_reset"), 0);
}
END_TEST

/* filter-scatter and partition-scatter know their places are distinct and
 * say so (scatterDistinct), through the fusions and the look-back: one
 * pass, no winners. */
START_TEST(a_scatter_of_distinct_places_writes_at_once) {
    static const char *const progs[] = {
        "def main(xs: [N]i32): [?k]i32 =\n  filter(x => x > 0, xs)\n",
        "def main(xs: [N]i32): ([?k]i32, [N - ?k]i32) =\n  partition(x => x > 0, xs)\n",
    };
    static const char *const strategies[] = {"filter-scatter", "partition-scatter", "CPU", "GPU"};
    for (int p = 0; p < 2; p++)
        for (int s = 0; s < 4; s++) {
            if (s < 2 && s != p) continue;
            const char *label = text_of("%s under %s", progs[p], strategies[s]);
            const st_def *now = apply(def_of(progs[p]), strategy_text(strategies[s]), label);
            ck_assert_msg(count_of(printed_def(now), "scatterDistinct(") == 1 && !strstr(printed_def(now), "scatter("),
                          "%s:\n%s", label, printed_def(now));
            st_code code = generated(lowered(now, label), label);
            ck_assert_msg(kernels_named(&code, "winners") == 0 && kernels_named(&code, "claims") == 0, "%s", label);
            /* the scan that places them runs once (a partition's count, on a GPU, a look-back of its own) */
            if (s >= 2) ck_assert_int_eq(scans_of(&code), 1 + (p && s == 3));
        }
}
END_TEST

/* 32-bit winners where the scatter's length is known to allow them; a
 * length known only when it runs tests itself, 64-bit atomics where it
 * would not fit; a length past 2^31 64-bit alone. */
START_TEST(the_winners_are_as_wide_as_the_length_needs) {
    st_code code = code_of("def main(xs: [1000]i32): [4]i64 =\n"
                           "  scatter(replicate(4, -1i64), map(x => i64(x) & 3, xs), iota(1000))\n", "id", "1000");
    ck_assert_has(code.opencl, "__global int *t");
    ck_assert_has(code.opencl, "atomic_max(");
    ck_assert(!strstr(code.opencl, "atom_max(") && !strstr(code.opencl, "cl_khr_int64_extended_atomics"));
    code = code_of(ISSUE, "id", "N");
    ck_assert_has(code.opencl, "atomic_max(");
    ck_assert_has(code.opencl, "atom_max(");
    ck_assert_has(code.opencl, "<= 2147483648L)");
    ck_assert_has(code.opencl, "#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable");
    code = code_of("def main(xs: [4]i64): [4]i64 =\n"
                   "  scatter(xs, iota(4294967296i64) |> map(i => i & 3), iota(4294967296i64))\n", "id", "2^32");
    ck_assert_has(code.opencl, "atom_max(");
    ck_assert(!strstr(code.opencl, "atomic_max(") && !strstr(code.opencl, "2147483648L"));
    /* a scatter of one element has nothing to decide */
    code = code_of("def main(xs: [1]i32): [4]i32 =\n  scatter(replicate(4, 0), map(x => i64(x) & 3, xs), xs)\n", "id", "one");
    ck_assert_int_eq(kernels_named(&code, "winners"), 0);
}
END_TEST

static Suite *scatter_suite(void) {
    Suite *s = suite_create("scatter");
    TCase *dev = tcase_create("device");
    tcase_set_timeout(dev, 300);
    tcase_add_checked_fixture(dev, rules_setup, pipeline_teardown);
    tcase_add_loop_test(dev, the_last_write_stays_as_in_the_interpreter, 0,
                        (int)(sizeof device_cases / sizeof *device_cases));
    suite_add_tcase(s, dev);
    TCase *cg = tcase_create("codegen");
    tcase_add_checked_fixture(cg, rules_setup, rules_teardown);
    tcase_add_test(cg, a_scatter_claims_before_it_writes);
    tcase_add_test(cg, a_scatter_of_distinct_places_writes_at_once);
    tcase_add_test(cg, the_winners_are_as_wide_as_the_length_needs);
    suite_add_tcase(s, cg);
    return s;
}

int main(void) { return run_suite(scatter_suite()); }
