/* tests/test_histogram.c — reduce_by_index in subhistograms
 * (strategies/histogram.c, codegen/cg_histogram.c): the rule keeps the
 * interpreter's results; on the device, + on i32 and f32, max on f32
 * (compare-and-swap) and an arg-min of (value, index) pairs (a lock), under
 * global and local memory and several cooperation levels, equal the
 * interpreter over uniform, skewed, single-bucket, partly out-of-bounds
 * indices and runs of one bucket, N = 0, H = 0 and H > N; local memory that does not fit falls
 * back to global; a map of indices runs inside the kernels; and the
 * command line's refusals. */
#include "histogram_programs.h"
#include "pipeline_fixture.h"
#include "consumer_cases.h"
#include "run_strata.h"

#include <math.h>

/* ------------------------------------------------------------------------ */
/* Programs and inputs                                                      */
/* ------------------------------------------------------------------------ */

typedef enum dist { UNIFORM, SKEWED, SINGLE, OUT_OF_BOUNDS, RUNS, NDISTS } dist;
static const char *const dist_names[NDISTS] = {"uniform", "skewed", "one bucket", "partly out of bounds",
                                               "runs of one bucket, some out of bounds"};

static uint64_t next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static double unit(uint64_t *s) { return (double)(next(s) >> 11) / 9007199254740992.0; }

/* n indices into h buckets, drawn from d */
static int64_t *indices(int64_t n, int64_t h, dist d, uint64_t seed) {
    int64_t *is = st_arena_alloc(ar, (size_t)(n ? n : 1) * sizeof *is);
    uint64_t s = seed * 2654435761u + 1;
    for (int64_t i = 0; i < n; i++) {
        double u = unit(&s);
        switch (d) {
        case UNIFORM: is[i] = h ? (int64_t)(u * (double)h) : 0; break;
        case SKEWED: is[i] = h ? (int64_t)(u * u * u * (double)h) : 0; break; /* crowded near 0 */
        case SINGLE: is[i] = h / 2; break;
        case RUNS: /* runs of 1 to 20 (a CPU's loop folds eight equal in one update), one in 8 out of bounds */
            if (i == 0 || u < 0.1) {
                uint64_t r = next(&s);
                is[i] = r % 8 == 0 ? h + (int64_t)(r % 3) : h ? (int64_t)(r % (uint64_t)h) : 0;
            } else {
                is[i] = is[i - 1];
            }
            break;
        default: /* a quarter out of bounds, on both sides */
            is[i] = u < 0.125 ? -1 - (int64_t)(next(&s) % 100) : u < 0.25 ? h + (int64_t)(next(&s) % 100)
                                                                            : (h ? (int64_t)(u * (double)h) % h : 0);
        }
    }
    return is;
}

static const char *npy_of(const char *dir, const char *name, st_scalar_kind k, int64_t n, void *data) {
    const char *path = text_of("%s/%s.npy", dir, name);
    st_value v = array_of(k, n, data, ar);
    st_err err = {0};
    ck_assert_msg(st_npy_write(path, &v, &err), "%s", err.message);
    return path;
}

static bool has_param(const st_def *d, const char *name) {
    for (uint32_t i = 0; i < d->nparams; i++)
        if (!strcmp(d->params[i]->u.name, name)) return true;
    return false;
}

/* The arguments of d for n elements, h buckets and distribution dist. */
static st_inputs *inputs_of(const st_def *d, const char *dir, int64_t n, int64_t h, dist dd, uint64_t seed,
                            st_arena *a) {
    st_inputs *in = st_inputs_new(cx, d, a);
    st_err err = {0};
    int64_t *is = indices(n, h, dd, seed);
    float *vs = st_arena_alloc(ar, (size_t)(n ? n : 1) * sizeof *vs);
    uint64_t s = seed + 99;
    for (int64_t i = 0; i < n; i++) vs[i] = (float)(unit(&s) * 100.0 - 50.0);
    if (has_param(d, "is")) {
        ck_assert(st_inputs_set(in, text_of("is=%s", npy_of(dir, "is", ST_I64, n, is)), &err));
    } else { /* MAPPED_INDICES: the values make the indices, is[i] / h of the way up */
        for (int64_t i = 0; i < n; i++) vs[i] = h ? ((float)is[i] + 0.5f) / (float)h : 0.5f;
    }
    if (has_param(d, "vs")) ck_assert(st_inputs_set(in, text_of("vs=%s", npy_of(dir, "vs", ST_F32, n, vs)), &err));
    ck_assert_msg(st_inputs_set(in, text_of("H=%lld", (long long)h), &err), "%s", err.message);
    return in;
}

typedef struct shape {
    int64_t n, h;
} shape;

/* N and H: many buckets and few, H > N, N = 0, H = 0 */
static const shape shapes[] = {{100003, 16}, {100003, 4096}, {20011, 65536}, {1000, 70000}, {0, 16}, {1000, 0}, {7, 3}};

/* d and its rewrite `now`, for every shape and distribution: the
 * interpreter agrees with itself (the rule), and exe with the interpreter. */
static void agrees_everywhere(const st_def *d, const st_def *now, st_exe *exe, const char *label) {
    char dir[256];
    scratch_make(dir, sizeof dir, "histogram");
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++)
        for (dist dd = UNIFORM; dd < NDISTS; dd++) {
            const char *what = text_of("%s, N=%lld, H=%lld, %s", label, (long long)shapes[k].n,
                                       (long long)shapes[k].h, dist_names[dd]);
            st_arena *a = st_arena_new();
            st_inputs *in = inputs_of(d, dir, shapes[k].n, shapes[k].h, dd, 3 + k * 10 + dd, a);
            st_err err = {0};
            const st_value *args;
            const st_binding *env;
            size_t nenv;
            ck_assert_msg(st_inputs_finish(in, &args, &env, &nenv, &err), "%s: %s", what, err.message);
            st_expected want;
            st_value rewritten, got;
            ck_assert_msg(st_eval_expected(cx, d, args, env, nenv, a, &want, &err), "%s: %s", what, err.message);
            ck_assert_msg(st_eval(cx, now, args, env, nenv, a, &rewritten, &err), "%s: %s", what, err.message);
            ck_assert_msg(st_value_agree(&rewritten, &want.value, 0, &err), "%s: the rule changed the result: %s", what,
                          err.message);
            if (exe) {
                st_launch *l = st_launch_new(exe, args, env, nenv, &err);
                ck_assert_msg(l != NULL, "%s: %s", what, err.message);
                ck_assert_msg(st_launch_run(l, NULL, &err), "%s: %s", what, err.message);
                ck_assert_msg(st_launch_read(l, a, &got, &err), "%s: %s", what, err.message);
                ck_assert_msg(st_expected_agree(&got, &want, ST_TOLERANCE, &err), "%s: the device disagrees: %s", what,
                              err.message);
                st_launch_free(l);
            }
            st_arena_free(a);
        }
    scratch_remove(dir);
}

/* ------------------------------------------------------------------------ */
/* Every operator under every choice, on the device                         */
/* ------------------------------------------------------------------------ */

START_TEST(histograms_equal_the_interpreter) {
    const hist_case *c = &hist_cases[_i];
    const char *label = text_of("%s under %s", c->what, c->strategy);
    const st_def *d = def_of(c->src);
    const st_def *now = apply(d, c->strategy, label);
    st_code code = generated(lowered(now, label), label);
    /* the map of indices is not a kernel of its own */
    for (uint32_t k = 0; k < code.nkernels; k++)
        ck_assert_msg(!strstr(code.kernel_names[k], "_map"), "%s: a kernel %s:\n%s", label, code.kernel_names[k],
                      code.opencl);
    st_exe *exe = built(&code, label);
    agrees_everywhere(d, now, exe, label);
    st_exe_free(exe);
}
END_TEST

/* The atomic each operator gets when ATOMIC is left out. */
START_TEST(the_operator_picks_the_atomic) {
    static const struct {
        const char *src, *want;
    } cases[] = {{ADD_I32, "subhistograms(0, 0, 1,"}, {ADD_F32, "subhistograms(0, 0, 2,"},
                 {MAX_F32, "subhistograms(0, 0, 2,"}, {ARGMIN, "subhistograms(0, 0, 3,"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const st_def *now = apply(def_of(cases[i].src), "subhistogram", "auto");
        ck_assert_has(printed_def(now), cases[i].want);
    }
    /* C and MEM as given */
    ck_assert_has(printed_def(apply(def_of(ADD_I32), "subhistogram(C=9, MEM=local, ATOMIC=xchg)", "given")),
                  "subhistograms(9, 2, 3,");
}
END_TEST

/* Subhistograms that do not fit in local memory: global memory instead,
 * chosen when the program runs, and the right answer. */
START_TEST(local_memory_that_does_not_fit_falls_back) {
    const st_def *d = def_of(ADD_I32);
    const char *label = "+ on i32, MEM=local, H beyond local memory";
    const st_def *now = apply(d, "subhistogram(MEM=local)", label);
    st_code code = generated(lowered(now, label), label);
    st_exe *exe = built(&code, label);
    const st_device_info *info = st_cl_device(device());
    int64_t h = (int64_t)(info->local_mem_bytes / 4) + 1000; /* one i32 subhistogram is too much */
    char dir[256];
    scratch_make(dir, sizeof dir, "histogram");
    st_arena *a = st_arena_new();
    st_inputs *in = inputs_of(d, dir, 50000, h, UNIFORM, 5, a);
    st_err err = {0};
    const st_value *args;
    const st_binding *env;
    size_t nenv;
    ck_assert(st_inputs_finish(in, &args, &env, &nenv, &err));
    st_value want, got;
    ck_assert(st_eval(cx, d, args, env, nenv, a, &want, &err));
    st_launch *l = st_launch_new(exe, args, env, nenv, &err);
    ck_assert_msg(l && st_launch_run(l, NULL, &err), "H=%lld: %s", (long long)h, err.message);
    ck_assert(st_launch_read(l, a, &got, &err));
    ck_assert_msg(st_value_agree(&got, &want, 0, &err), "%s", err.message);
    st_launch_free(l);
    st_arena_free(a);
    scratch_remove(dir);
    st_exe_free(exe);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The command line                                                         */
/* ------------------------------------------------------------------------ */

START_TEST(run_and_rewrite_take_the_rule) {
    cli c;
    cli_open(&c, "histogram");
    char *out, *err;
    int rc = cli_strata(&c, ARGS("run", cli_example(&c, "histogram"), "-s", "subhistogram(C=8, MEM=local)", "--size",
                                 "N=100003", "--input", "H=256", "--check"),
                        &out, &err);
    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_has(err, "check: the results equal the interpreter's");
    rc = cli_strata(&c, ARGS("rewrite", cli_example(&c, "histogram"), "-s", "subhistogram(MEM=global)"), &out, &err);
    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_has(out, "subhistograms(0, 1, 1, replicate(H, 0), +, 0, is, replicate(N, 1))");
    cli_close(&c);
}
END_TEST

START_TEST(bad_parameters_are_refused_with_a_place) {
    cli c;
    cli_open(&c, "histogram");
    char *out, *err;
    const char *hist = cli_example(&c, "histogram");
    ck_assert_int_eq(cli_strata(&c, ARGS("rewrite", hist, "-s", "subhistogram(MEM=shared)"), &out, &err), 1);
    ck_assert_has(err, "strategy:1:18: error: MEM is one of global, local, not `shared`");
    ck_assert_int_eq(cli_strata(&c, ARGS("rewrite", hist, "-s", "subhistogram(C=0)"), &out, &err), 1);
    ck_assert_has(err, "C");
    const char *mx = cli_file(&c, "max", MAX_F32);
    ck_assert_int_eq(cli_strata(&c, ARGS("rewrite", mx, "-s", "subhistogram(ATOMIC=add)"), &out, &err), 1);
    ck_assert_has(err, "ATOMIC=add needs a hardware atomic, and this operator on f32 has none");
    const char *am = cli_file(&c, "argmin", ARGMIN);
    ck_assert_int_eq(cli_strata(&c, ARGS("rewrite", am, "-s", "subhistogram(ATOMIC=cas)"), &out, &err), 1);
    ck_assert_has(err, "ATOMIC=cas needs values of one number");
    /* by hand, with the primitive's own checks */
    const char *bad = cli_file(&c, "bad",
                              "def main(is: [N]i64, vs: [N]f32, H: i64): [H]f32 =\n"
                              "  subhistograms(0, 0, 1, replicate(H, 0.0), max, 0.0, is, vs)\n");
    /* ATOMIC is the device's concern: the program is valid and means what
     * the interpreter says, and codegen refuses it at its place */
    ck_assert_int_eq(cli_strata(&c, ARGS("check", bad), &out, &err), 0);
    ck_assert_int_eq(cli_strata(&c, ARGS("eval", bad, "--size", "N=3", "--input", "H=2"), &out, &err), 0);
    ck_assert_int_eq(cli_strata(&c, ARGS("run", bad, "-s", "id", "--size", "N=3", "--input", "H=2"), &out, &err), 1);
    ck_assert_has(err, "bad.strata:2:3: error: ");
    ck_assert_has(err, "subhistograms' ATOMIC is 1 (a hardware atomic), but its operator on f32 has none");
    const char *nested = cli_file(&c, "nested",
                                 "def main(is: [N][8]i64): [N][4]i32 =\n"
                                 "  is |> map(row => subhistograms(0, 0, 0, replicate(4, 0), +, 0, row, replicate(8, 1)))\n");
    ck_assert_int_eq(cli_strata(&c, ARGS("run", nested, "--size", "N=3"), &out, &err), 1);
    ck_assert_has(err, "subhistograms makes kernels of its own");
    cli_close(&c);
}
END_TEST

/* The space of [Hellfritsch 2018]'s parameters explores. */
START_TEST(the_histogram_space_explores) {
    cli c;
    cli_open(&c, "histogram");
    char *csv = cli_explored(&c, ARGS("explore", cli_example(&c, "histogram"), "--space",
                                      "subhistogram(C=[1, 16, 256], MEM=[global, local])", "--out",
                                      arena_text(c.a, "%s/explored", c.dir), "--size", "N=100003", "--input", "H=256",
                                      "--runs", "7", "--cache", "none"));
    ck_assert_int_eq(count_of(csv, ",ok,"), 6);
    cli_close(&c);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The plan a device gets (codegen/hist_plan.c), without the device          */
/* ------------------------------------------------------------------------ */

/* PoCL on these machines: 2 compute units, its local memory, a CPU */
static st_hist_plan on_cpu(long n, long h, long c) {
    st_hist_plan p = {.N = n, .H = h, .bytes = 4, .C = c, .may_local = 1, .cpu = 1, .units = 2,
                      .local_bytes = 4 << 20, .cache_bytes = 32 << 10};
    st_hist_plan_choose(&p);
    return p;
}

/* an H200 through CUDA: 132 units, 227 KiB of shared memory a block, and
 * the L2 (cache_bytes 0: a GPU that does not say its cache) */
static st_hist_plan on_gpu(long n, long h, long c, long cache) {
    st_hist_plan p = {.N = n, .H = h, .bytes = 4, .C = c, .may_local = 1, .cpu = 0, .units = 132,
                      .local_bytes = 227 << 10, .cache_bytes = cache};
    st_hist_plan_choose(&p);
    return p;
}

/* A CPU: groups of one work-item, each owning its subhistograms in local
 * memory (no atomics), 4 of them while they fit in 16 KiB, 2, then 1; a
 * given C asks for cooperation and gets groups of 256. */
START_TEST(a_cpu_gets_its_own_subhistograms) {
    long hs[] = {16, 256, 1024, 2048, 4096, 65536};
    long copies[] = {4, 4, 4, 2, 1, 1};
    for (size_t k = 0; k < sizeof hs / sizeof *hs; k++) {
        st_hist_plan p = on_cpu(20000000, hs[k], 0);
        ck_assert_msg(p.B == 1 && p.local == 1 && p.Cl == 1, "H=%ld: B=%ld local=%ld Cl=%ld", hs[k], p.B, p.local, p.Cl);
        ck_assert_msg(p.hpb == copies[k], "H=%ld: %ld subhistograms a work-item, not %ld", hs[k], p.hpb, copies[k]);
        ck_assert_int_eq(p.G, 8); /* 4 a compute unit: the machine's other work may take one */
        ck_assert_int_eq(p.nsub, 8);
    }
    st_hist_plan p = on_cpu(20000000, 16, 16);
    ck_assert(p.B == 256 && p.local == 1 && p.Cl == 16 && p.hpb == 16);
    p = on_cpu(20000000, 1 << 21, 0); /* 8 MiB of buckets: global memory, C = H */
    ck_assert(!p.local && p.Cg == 1 << 21 && p.S == 1 && p.nsub == 0);
}
END_TEST

/* A GPU: local memory with C = min(H, B) where a subhistogram fits; else
 * global, C = H where the cache is not known ([Hellfritsch 2018]), and where it is,
 * as many subhistograms as keep S·H <= N and them within a quarter of it
 * (the 50 MiB L2 of an H100 or H200: 50 of 65536 buckets, 5407 work-items
 * a counter rather than 54068); a given C is kept. */
START_TEST(a_gpu_gets_the_thesis_and_its_cache) {
    const long l2 = 50L << 20, n = 20000000;
    st_hist_plan p = on_gpu(n, 16, 0, l2);
    ck_assert(p.B == 256 && p.local == 1 && p.Cl == 16 && p.hpb == 16 && p.G == 528);
    p = on_gpu(n, 4096, 0, l2);
    ck_assert(p.local == 1 && p.Cl == 256 && p.hpb == 1);
    p = on_gpu(n, 65536, 0, 0);
    ck_assert_msg(!p.local && p.T == 270336 && p.Cg == 65536 && p.S == 5, "Cg=%ld S=%ld", p.Cg, p.S);
    p = on_gpu(n, 65536, 0, l2);
    ck_assert_msg(!p.local && p.S == 50 && p.Cg == 5407 && p.nsub == 49, "Cg=%ld S=%ld", p.Cg, p.S);
    ck_assert(p.S * p.H <= p.N && p.S * p.H * p.bytes <= l2 / 4);
    p = on_gpu(100000, 65536, 0, l2); /* N/H = 1: more subhistograms would be more work */
    ck_assert_msg(!p.local && p.Cg == 65536 && p.S == 2, "Cg=%ld S=%ld", p.Cg, p.S);
    p = on_gpu(n, 1 << 20, 0, l2); /* 4 MiB a subhistogram: 3 fit in a quarter of the L2 */
    ck_assert_msg(p.S == 3, "S=%ld", p.S);
    p = on_gpu(n, 65536, 1024, l2);
    ck_assert(!p.local && p.Cg == 1024 && p.S == 264);
    p = on_gpu(n, 65536, 0, l2);
    p.may_local = 0;
    st_hist_plan_choose(&p);
    ck_assert(!p.local && p.Cg == 5407);
}
END_TEST

/* H is the caller's (a parameter) and N an input's length: at the largest
 * longs the plan's arithmetic does not overflow (the sanitizer build would
 * say so), and what the glue multiplies stays within what it allocates:
 * S·H·bytes within 256 MiB or one histogram, hpb·H·bytes within the
 * group's local memory (issue 46). */
START_TEST(huge_counts_do_not_overflow_the_plan) {
    const long most = 0x7fffffffffffffffL;
    const long hs[] = {most, most / 4, most / 4 + 1, 1L << 40, 3}, ns[] = {most, most - 255, 1L << 40, 0};
    for (size_t i = 0; i < sizeof hs / sizeof *hs; i++)
        for (size_t j = 0; j < sizeof ns / sizeof *ns; j++)
            for (int gpu = 0; gpu < 2; gpu++) {
                st_hist_plan p = gpu ? on_gpu(ns[j], hs[i], 0, 50L << 20) : on_cpu(ns[j], hs[i], 0);
                ck_assert_msg(p.S >= 1 && p.S <= (256L << 20) / 4 + 1 && p.T >= 0 && p.G >= 0 && p.Cg >= 1,
                              "H=%ld N=%ld: S=%ld T=%ld G=%ld Cg=%ld", hs[i], ns[j], p.S, p.T, p.G, p.Cg);
                ck_assert_msg(p.S == 1 || p.S <= (256L << 20) / p.bytes / hs[i], "H=%ld N=%ld: S=%ld", hs[i], ns[j], p.S);
                ck_assert_msg(p.hpb == 0 || p.hpb <= p.local_bytes / p.bytes / hs[i], "H=%ld: hpb=%ld", hs[i], p.hpb);
            }
}
END_TEST

/* The glue runs the same code: the plan's text is in every histogram's glue. */
START_TEST(the_glue_carries_the_plan) {
    const char *src = st_hist_plan_source();
    ck_assert_ptr_nonnull(strstr(src, "typedef struct strata_hist_plan { long N; long H;"));
    ck_assert_ptr_nonnull(strstr(src, "static inline void strata_hist_choose(strata_hist_plan *p)"));
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Subhistograms read by something other than a let                         */
/* ------------------------------------------------------------------------ */

#define NHIST_STRATEGIES (sizeof hist_strategies / sizeof *hist_strategies)

START_TEST(subhistograms_read_directly_equal_the_interpreter) {
    consumer_agrees(&hist_consumers[_i / NHIST_STRATEGIES], hist_strategies[_i % NHIST_STRATEGIES], false);
}
END_TEST

static Suite *histogram_suite(void) {
    Suite *s = suite_create("histogram");
    TCase *dev = tcase_create("device");
    tcase_set_timeout(dev, 600);
    tcase_add_checked_fixture(dev, rules_setup, pipeline_teardown);
    tcase_add_loop_test(dev, histograms_equal_the_interpreter, 0, (int)(sizeof hist_cases / sizeof *hist_cases));
    tcase_add_test(dev, the_operator_picks_the_atomic);
    tcase_add_test(dev, local_memory_that_does_not_fit_falls_back);
    tcase_add_loop_test(dev, subhistograms_read_directly_equal_the_interpreter, 0,
                        (int)(NHIST_STRATEGIES * (sizeof hist_consumers / sizeof *hist_consumers)));
    suite_add_tcase(s, dev);
    TCase *plan = tcase_create("plan");
    tcase_add_test(plan, a_cpu_gets_its_own_subhistograms);
    tcase_add_test(plan, a_gpu_gets_the_thesis_and_its_cache);
    tcase_add_test(plan, the_glue_carries_the_plan);
    tcase_add_test(plan, huge_counts_do_not_overflow_the_plan);
    suite_add_tcase(s, plan);
    TCase *cl = tcase_create("cli");
    tcase_set_timeout(cl, 600);
    tcase_add_test(cl, run_and_rewrite_take_the_rule);
    tcase_add_test(cl, bad_parameters_are_refused_with_a_place);
    tcase_add_test(cl, the_histogram_space_explores);
    suite_add_tcase(s, cl);
    return s;
}

int main(void) { return run_suite(histogram_suite()); }
