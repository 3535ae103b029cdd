/* tests/test_run.c — `strata run` as a user meets it: the real binary
 * ($STRATA) run without a shell on the OpenCL device the machine has (PoCL
 * on the CPU here), its stdout, stderr and exit status captured. Exit 0 is
 * success (a device line and the check's verdict on stderr), 1 a user error
 * with a message on stderr and nothing on stdout, 2 an internal error
 * (nothing here may produce it), and a signal is never right. Results are
 * compared with what `strata eval` (the reference interpreter) writes. */
#include "harness.h"
#include "run_strata.h"

#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* ---- fixture: a scratch folder and an arena per test ---- */

/* Each test's folder lies in one root that main removes at the end, so
 * that a failed test (whose checked teardown never runs) leaves nothing. */
static char root[64], dir[128];
static st_arena *ar;

static void setup(void) {
    ar = st_arena_new();
    ck_assert(ar != NULL);
    snprintf(dir, sizeof dir, "%s/test-XXXXXX", root);
    ck_assert_msg(mkdtemp(dir) != NULL, "mkdtemp failed");
}

static void teardown(void) {
    scratch_remove(dir);
    st_arena_free(ar);
}

/* ---- files ---- */

static char *arena_printf(const char *fmt, const char *a, const char *b) {
    size_t n = strlen(fmt) + strlen(a) + strlen(b) + 1;
    char *s = st_arena_alloc(ar, n);
    snprintf(s, n, fmt, a, b);
    return s;
}

/* dir/name, in the arena. */
static const char *path_of(const char *name) { return arena_printf("%s/%s", dir, name); }

/* "NAME=VALUE" in the arena. */
static const char *pair(const char *name, const char *value) { return arena_printf("%s=%s", name, value); }

static const char *example(const char *name) {
    const char *d = getenv("STRATA_EXAMPLES");
    ck_assert_msg(d != NULL, "STRATA_EXAMPLES is not set (run through meson test)");
    return arena_printf("%s/%s.strata", d, name);
}

static const char *write_text(const char *name, const char *text) {
    const char *p = path_of(name);
    FILE *f = fopen(p, "wb");
    ck_assert_msg(f != NULL, "cannot write %s", p);
    ck_assert(fwrite(text, 1, strlen(text), f) == strlen(text));
    fclose(f);
    return p;
}

static char *slurp(const char *path, size_t *len) { return slurp_file(ar, path, len); }

static const char *write_npy(const char *name, st_scalar_kind k, int64_t n, const void *data) {
    const char *p = path_of(name);
    st_value v = array_of(k, n, (void *)data, ar);
    st_err err = {0};
    ck_assert_msg(st_npy_write(p, &v, &err), "%s", err.message);
    return p;
}

static st_value read_npy(const char *path) { return npy_read_ok(ar, path); }

static bool exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

/* DIR/I.npy */
static const char *result_file(const char *d, int i) {
    char name[32];
    snprintf(name, sizeof name, "%d.npy", i);
    return arena_printf("%s/%s", d, name);
}

/* The number of result files DIR/0.npy, DIR/1.npy, … (in a row). */
static int count_results(const char *d) {
    int n = 0;
    while (exists(result_file(d, n))) n++;
    return n;
}

/* The two folders hold the same results, byte for byte (integer programs:
 * the device must compute exactly what the interpreter does). */
static void same_bytes(const char *a, const char *b) {
    int n = count_results(a);
    ck_assert_msg(n > 0, "no results in %s", a);
    ck_assert_int_eq(n, count_results(b));
    for (int i = 0; i < n; i++) {
        size_t la, lb;
        const char *x = slurp(result_file(a, i), &la), *y = slurp(result_file(b, i), &lb);
        ck_assert_msg(la == lb && memcmp(x, y, la) == 0, "%s and %s differ", result_file(a, i), result_file(b, i));
    }
}

/* One value as a double: element i of an array, or the scalar. */
static double element(const st_value *v, int64_t i) {
    if (v->kind == ST_VALUE_SCALAR) return st_scalar_as_f64(v->scalar, v->u.s);
    st_scalar s;
    memset(&s, 0, sizeof s);
    memcpy(&s, (const char *)v->u.a.data + (size_t)i * st_scalar_size(v->scalar), st_scalar_size(v->scalar));
    return st_scalar_as_f64(v->scalar, s);
}

static int64_t count_elements(const st_value *v) {
    if (v->kind == ST_VALUE_SCALAR) return 1;
    int64_t n = 1;
    for (uint32_t d = 0; d < v->n; d++) n *= v->u.a.dims[d];
    return n;
}

/* Floats may be summed in another order on the device: equal within 1e-3
 * of max(1, |want|), the same shapes and element types. */
static void close_values(const st_value *got, const st_value *want, const char *what) {
    ck_assert_msg(got->kind == want->kind && got->scalar == want->scalar && got->n == want->n,
                  "%s: different kinds of values", what);
    if (got->kind == ST_VALUE_ARRAY)
        for (uint32_t d = 0; d < got->n; d++) ck_assert_int_eq(got->u.a.dims[d], want->u.a.dims[d]);
    for (int64_t i = 0, n = count_elements(got); i < n; i++) {
        double g = element(got, i), w = element(want, i);
        ck_assert_msg(fabs(g - w) <= 1e-3 * fmax(1.0, fabs(w)), "%s: element %lld is %.9g, expected %.9g", what,
                      (long long)i, g, w);
    }
}

static void same_within_tolerance(const char *a, const char *b) {
    int n = count_results(a);
    ck_assert_msg(n > 0, "no results in %s", a);
    ck_assert_int_eq(n, count_results(b));
    for (int i = 0; i < n; i++) {
        st_value x = read_npy(result_file(a, i)), y = read_npy(result_file(b, i));
        close_values(&x, &y, result_file(a, i));
    }
}

/* ---- running strata ---- */

static const char *describe(const char *const *args) { return strata_command_line(ar, args); }

static int run_in(char *const *env, const char *const *args, char **out, char **err) {
    return strata_spawn(ar, dir, env, args, out, err);
}

static int run(const char *const *args, char **out, char **err) { return run_in(environ, args, out, err); }


/* Succeeds; returns stdout, and stderr in *err_out (may be NULL). A run
 * always names the device it ran on. */
static char *run_ok(const char *const *args, char **err_out) {
    char *out, *err;
    int rc = run(args, &out, &err);
    ck_assert_msg(rc == 0, "`%.500s` exited %d\nstdout:\n%.2000s\nstderr:\n%.3000s", describe(args), rc, out, err);
    if (!strcmp(args[0], "run") && strcmp(args[1], "--help")) ck_assert_has(err, "device ");
    if (err_out) *err_out = err;
    return out;
}

/* `strata run` with --check succeeds and says the check passed. */
static char *run_checked(const char *const *args) {
    char *err, *out = run_ok(args, &err);
    ck_assert_msg(strstr(err, "check: the results equal the interpreter's") != NULL,
                  "`%.500s`: no passed check on stderr:\n%.3000s", describe(args), err);
    return out;
}

/* Fails as a user error (exit 1, not 2) with a message on stderr that
 * contains `part` (when not NULL) and nothing on stdout; returns stderr. */
static char *fails_in(char *const *env, const char *const *args, const char *part) {
    char *out, *err;
    int rc = run_in(env, args, &out, &err);
    ck_assert_msg(rc == 1, "`%.500s` exited %d, expected 1\nstdout:\n%.2000s\nstderr:\n%.3000s", describe(args), rc,
                  out, err);
    ck_assert_msg(strstr(err, "error") != NULL, "`%.500s` failed without an error message:\n%.3000s", describe(args),
                  err);
    ck_assert_msg(out[0] == 0, "`%.500s` failed but wrote to stdout:\n%.2000s\nstderr:\n%.3000s", describe(args), out,
                  err);
    if (part)
        ck_assert_msg(strstr(err, part) != NULL, "`%.500s`: expected \"%s\" in stderr:\n%.3000s", describe(args), part,
                      err);
    return err;
}

static char *fails(const char *const *args, const char *part) { return fails_in(environ, args, part); }

/* The environment with NAME=VALUE set (replacing any NAME=) and the names
 * in `drop` removed. */
static char *const *env_with(const char *setting, const char *const *drop) {
    size_t n = 0;
    while (environ[n]) n++;
    char **env = st_arena_alloc(ar, (n + 2) * sizeof *env);
    size_t k = 0, len = strchr(setting, '=') - setting + 1;
    for (size_t i = 0; i < n; i++) {
        bool skip = strncmp(environ[i], setting, len) == 0;
        for (const char *const *d = drop; *d; d++)
            if (!strncmp(environ[i], *d, strlen(*d)) && environ[i][strlen(*d)] == '=') skip = true;
        if (!skip) env[k++] = environ[i];
    }
    env[k++] = (char *)setting;
    env[k] = NULL;
    return env;
}

/* ---- success ---- */

START_TEST(prefix_sum_check_passes) {
    char *err, *out = run_ok(ARGS("run", example("prefix_sum"), "--size", "N=1000", "--check"), &err);
    ck_assert_has(err, "check: the results equal the interpreter's");
    ck_assert_has(out, "0: [1000]f32 = [");
    /* without --check there is no verdict */
    run_ok(ARGS("run", example("prefix_sum"), "--size", "N=1000"), &err);
    ck_assert_msg(!strstr(err, "check:"), "a check without --check:\n%s", err);
}
END_TEST

START_TEST(output_f32_equals_eval) {
    /* with no strategy, and with a parallel scan (which adds in another order) */
    const char *a = path_of("run"), *b = path_of("eval");
    run_ok(ARGS("run", example("prefix_sum"), "--size", "N=1000", "--output", a), NULL);
    run_ok(ARGS("eval", example("prefix_sum"), "--size", "N=1000", "--output", b), NULL);
    ck_assert_int_eq(count_results(a), 1);
    same_within_tolerance(a, b);

    const char *c = path_of("ps"), *d = path_of("ps-eval");
    run_ok(ARGS("run", example("prefix_sum"), "-s", "parallel-scan(BS=256, BF=2, SE=4)", "--size", "N=100003",
                "--output", c),
           NULL);
    run_ok(ARGS("eval", example("prefix_sum"), "--size", "N=100003", "--output", d), NULL);
    same_within_tolerance(c, d);
    st_value v = read_npy(result_file(c, 0));
    ck_assert_int_eq(v.u.a.dims[0], 100003);

    /* a scalar result */
    const char *e = path_of("dot"), *f = path_of("dot-eval");
    run_ok(ARGS("run", example("dot"), "--size", "N=4097", "--output", e), NULL);
    run_ok(ARGS("eval", example("dot"), "--size", "N=4097", "--output", f), NULL);
    same_within_tolerance(e, f);
}
END_TEST

START_TEST(output_int_equals_eval_exactly) {
    const char *a = path_of("adv"), *b = path_of("adv-eval");
    run_ok(ARGS("run", example("advanced"), "--size", "N=1000", "--output", a), NULL);
    run_ok(ARGS("eval", example("advanced"), "--size", "N=1000", "--output", b), NULL);
    same_bytes(a, b);

    const char *c = path_of("filter"), *d = path_of("filter-eval");
    run_ok(ARGS("run", example("filter"), "--size", "N=3000", "--output", c, "-s",
                "first(let, fuse-map-scan) ; first(let, fuse-scan-map) ; first(let, fuse-scan-scatter)"),
           NULL);
    run_ok(ARGS("eval", example("filter"), "--size", "N=3000", "--output", d), NULL);
    same_bytes(c, d);

    const char *e = path_of("hist"), *f = path_of("hist-eval");
    run_ok(ARGS("run", example("histogram"), "--size", "N=5000", "--input", "H=64", "--output", e), NULL);
    run_ok(ARGS("eval", example("histogram"), "--size", "N=5000", "--input", "H=64", "--output", f), NULL);
    same_bytes(e, f);

    const char *g = path_of("adv-ps"), *h = path_of("adv-ps-eval");
    run_ok(ARGS("run", example("advanced"), "--size", "N=777", "-s", "first(scan, parallel-scan(BS=64, BF=4, TD=2))",
                "--output", g),
           NULL);
    run_ok(ARGS("eval", example("advanced"), "--size", "N=777", "--output", h), NULL);
    same_bytes(g, h);
}
END_TEST

START_TEST(several_outputs) {
    const char *d = path_of("out");
    char *out = run_ok(ARGS("run", example("advanced"), "--size", "N=100", "--output", d), NULL);
    for (int i = 0; i < 5; i++) {
        ck_assert_has(out, result_file(d, i)); /* it says where each went */
        st_value v = read_npy(result_file(d, i));
        ck_assert_int_eq(v.kind, ST_VALUE_ARRAY);
        ck_assert_int_eq(v.scalar, ST_I32);
        ck_assert_int_eq(v.u.a.dims[0], 100);
    }
    ck_assert(!exists(result_file(d, 5)));
    /* the results are consistent: bs = as - 1, cs = as + 1, ds a scan of bs */
    st_value as = read_npy(result_file(d, 0)), bs = read_npy(result_file(d, 1)), cs = read_npy(result_file(d, 2)),
             ds = read_npy(result_file(d, 3));
    const int32_t *pa = as.u.a.data, *pb = bs.u.a.data, *pc = cs.u.a.data, *pd = ds.u.a.data;
    int32_t sum = 0;
    for (int i = 0; i < 100; i++) {
        ck_assert_int_eq(pb[i], pa[i] - 1);
        ck_assert_int_eq(pc[i], pa[i] + 1);
        sum += pb[i];
        ck_assert_int_eq(pd[i], sum);
    }
    /* nested output folders are made */
    const char *deep = path_of("a/b/c");
    run_ok(ARGS("run", example("advanced"), "--size", "N=10", "--output", deep), NULL);
    ck_assert_int_eq(count_results(deep), 5);
}
END_TEST

START_TEST(input_file_like_generated) {
    /* advanced returns its input: its 0.npy is the generated array, which,
     * given back with --input, must give the same results */
    const char *gen = path_of("gen"), *given = path_of("given");
    run_ok(ARGS("run", example("advanced"), "--size", "N=1000", "--seed", "3", "--output", gen), NULL);
    run_ok(ARGS("run", example("advanced"), "--input", pair("as", result_file(gen, 0)), "--output", given), NULL);
    same_bytes(gen, given);

    /* an f32 input of our own, checked against a prefix sum done here */
    enum { N = 2000 };
    static float xs[N];
    for (int i = 0; i < N; i++) xs[i] = (float)((i * 37) % 101) / 8.0f - 3.0f;
    const char *xs_path = write_npy("xs.npy", ST_F32, N, xs);
    const char *d = path_of("out"), *e = path_of("eval");
    run_checked(ARGS("run", example("prefix_sum"), "--input", pair("xs", xs_path), "--output", d, "--check"));
    run_ok(ARGS("eval", example("prefix_sum"), "--input", pair("xs", xs_path), "--output", e), NULL);
    same_within_tolerance(d, e);
    st_value v = read_npy(result_file(d, 0));
    ck_assert_int_eq(v.scalar, ST_F32);
    ck_assert_int_eq(v.u.a.dims[0], N);
    double sum = 0;
    for (int i = 0; i < N; i++) {
        sum += xs[i];
        double got = ((const float *)v.u.a.data)[i];
        ck_assert_msg(fabs(got - sum) <= 1e-3 * fmax(1.0, fabs(sum)), "element %d is %g, expected %g", i, got, sum);
    }
}
END_TEST

START_TEST(seed_decides_generated_inputs) {
    const char *a = path_of("a"), *b = path_of("b"), *c = path_of("c"), *e = path_of("e");
    run_ok(ARGS("run", example("advanced"), "--size", "N=500", "--seed", "7", "--output", a), NULL);
    run_ok(ARGS("run", example("advanced"), "--size", "N=500", "--seed", "7", "--output", b), NULL);
    run_ok(ARGS("run", example("advanced"), "--size", "N=500", "--seed", "8", "--output", c), NULL);
    run_ok(ARGS("eval", example("advanced"), "--size", "N=500", "--seed", "7", "--output", e), NULL);
    same_bytes(a, b);
    same_bytes(a, e);
    size_t la, lc;
    const char *x = slurp(result_file(a, 0), &la), *y = slurp(result_file(c, 0), &lc);
    ck_assert_msg(la != lc || memcmp(x, y, la) != 0, "--seed 7 and --seed 8 generated the same input");
}
END_TEST

START_TEST(parallel_scan_strategies) {
    char *err;
    char *out = run_checked(
        ARGS("run", example("prefix_sum"), "-s", "parallel-scan(BS=256, BF=2, SE=4)", "--size", "N=100000", "--check"));
    ck_assert_has(out, "0: [100000]f32");
    /* the long option, and a strategy that leaves several kernels */
    run_ok(ARGS("run", example("prefix_sum"), "--strategy", "parallel-scan(BS=256, BF=2, SE=4)", "--size", "N=4096",
                "--check"),
           &err);
    const char *k = strstr(err, "; ");
    unsigned kernels = 0;
    ck_assert_msg(k && sscanf(k, "; %u kernels", &kernels) == 1, "no kernel count in:\n%s", err);
    ck_assert_uint_gt(kernels, 1);
    /* scans of pairs (an operator that does not commute), lengths that need padding */
    const char *lengths[] = {"N=1", "N=255", "N=1000", "N=4096", "N=20011"};
    for (size_t i = 0; i < sizeof lengths / sizeof *lengths; i++) {
        run_checked(ARGS("run", example("linear_recurrence"), "-s", "first(scan, parallel-scan(BS=256, BF=2, SE=4))",
                         "--size", lengths[i], "--check"));
        run_checked(ARGS("run", example("advanced"), "-s", "first(scan, parallel-scan(BS=64, BF=4, TD=2))", "--size",
                         lengths[i], "--check"));
        run_checked(ARGS("run", example("prefix_sum"), "-s", "parallel-scan(BS=8, BF=2, TD=3)", "--size", lengths[i],
                        "--check"));
    }
}
END_TEST

/* The --time line: "time: median M ms, min A ms, max B ms over K runs; G GB/s …" */
static void check_time_line(const char *out, int runs) {
    const char *line = strstr(out, "time: ");
    ck_assert_msg(line != NULL, "no time line in:\n%s", out);
    ck_assert_msg(line == out || line[-1] == '\n', "the time line does not start a line:\n%s", out);
    double median, lo, hi, gbs;
    int k = 0;
    int got = sscanf(line, "time: median %lf ms, min %lf ms, max %lf ms over %d runs; %lf GB/s", &median, &lo, &hi,
                     &k, &gbs);
    ck_assert_msg(got == 5, "the time line is not in the expected shape:\n%s", line);
    ck_assert_int_eq(k, runs);
    ck_assert_msg(lo >= 0 && lo <= median && median <= hi, "min %g, median %g, max %g are out of order", lo, median,
                  hi);
    ck_assert_msg(gbs >= 0 && isfinite(gbs), "GB/s is %g", gbs);
}

START_TEST(time_line_shape) {
    char *out = run_ok(ARGS("run", example("prefix_sum"), "--size", "N=100000", "--time", "--runs", "5"), NULL);
    ck_assert_has(out, "0: [100000]f32"); /* the results are still shown */
    check_time_line(out, 5);
    out = run_ok(ARGS("run", example("prefix_sum"), "--size", "N=1000", "--time"), NULL); /* default: 10 runs */
    check_time_line(out, 10);
    out = run_ok(ARGS("run", example("advanced"), "-s", "first(scan, parallel-scan(BS=64, BF=4, TD=2))", "--size",
                      "N=5000", "--time", "--runs", "1", "--check"),
                 NULL);
    check_time_line(out, 1);
    /* with --output the results go to files and the time to stdout */
    const char *d = path_of("out");
    out = run_ok(ARGS("run", example("dot"), "--size", "N=1000", "--time", "--runs", "3", "--output", d), NULL);
    check_time_line(out, 3);
    ck_assert(exists(result_file(d, 0)));
}
END_TEST

/* -v with --time: each kernel's median and share, one line each, in the
 * order the glue launches them; the shares of a program without a loop are
 * parts of the whole */
START_TEST(verbose_time_lists_each_kernel) {
    const char *d = path_of("kernels");
    char *out = run_ok(ARGS("run", example("prefix_sum"), "-s", "first(scan, parallel-scan(BS=64, BF=2, SE=4))", "--size",
                            "N=100000", "--time", "--runs", "3", "-v", "--emit", d),
                       NULL);
    check_time_line(out, 3);
    const char *list = strstr(out, "kernels (median of each; a kernel in a loop: its last turn):\n");
    ck_assert_msg(list != NULL, "no kernel list in:\n%s", out);
    /* every kernel of the emitted .cl, each on a line of its own */
    const char *cl = slurp(arena_printf("%s/%s", d, "kernels.cl"), NULL);
    int kernels = 0;
    double shares = 0;
    for (const char *k = strstr(cl, "__kernel "); k; k = strstr(k + 1, "__kernel ")) {
        const char *name = strstr(k, " k");
        while (name && !(name[1] == 'k' && name[2] >= '0' && name[2] <= '9')) name = strstr(name + 1, " k");
        ck_assert(name != NULL);
        char want[64];
        size_t len = strcspn(name + 1, "(");
        snprintf(want, sizeof want, "\n  %.*s ", (int)len, name + 1);
        const char *line = strstr(list, want);
        ck_assert_msg(line != NULL, "kernel %s is not listed:\n%s", want + 3, list);
        double ms = -1, share = -1;
        ck_assert_msg(sscanf(line + strlen(want), " %lf ms %lf %%", &ms, &share) == 2 && ms >= 0 && share >= 0,
                      "%s", line);
        shares += share;
        kernels++;
    }
    ck_assert_msg(kernels >= 2, "%d kernels in the .cl", kernels);
    ck_assert_msg(shares <= 100.5, "the shares add up to %g %%:\n%s", shares, list);
    /* without -v, no list */
    out = run_ok(ARGS("run", example("prefix_sum"), "--size", "N=1000", "--time", "--runs", "2"), NULL);
    ck_assert_msg(!strstr(out, "kernels (median"), "%s", out);
}
END_TEST

START_TEST(emit_writes_program_kernels_host) {
    const char *d = path_of("emit");
    char *out = run_ok(ARGS("run", example("prefix_sum"), "-s", "parallel-scan(BS=256, BF=2, SE=4)", "--size",
                            "N=1000", "--emit", d, "--check"),
                       NULL);
    const char *prog = arena_printf("%s/%s", d, "program.strata");
    const char *cl = arena_printf("%s/%s", d, "kernels.cl");
    const char *host = arena_printf("%s/%s", d, "host.c");
    ck_assert_has(out, prog);
    ck_assert_has(out, cl);
    ck_assert_has(out, host);
    ck_assert_has(slurp(cl, NULL), "__kernel");
    ck_assert_has(slurp(host, NULL), "strata_run");
    ck_assert_has(slurp(prog, NULL), "def main(");
    /* the lowered program is a program: check accepts it, and it runs again */
    ck_assert_str_eq(run_ok(ARGS("check", prog), NULL), "def main(xs: [N]f32): [N]f32\n");
    run_checked(ARGS("run", prog, "--size", "N=1000", "--check"));
    /* every example's lowered program is accepted, with its signature */
    const char *names[] = {"advanced", "block_sums", "dot", "filter", "histogram", "linear_recurrence"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const char *e = path_of(names[i]);
        if (!strcmp(names[i], "histogram"))
            run_ok(ARGS("run", example(names[i]), "--size", "N=512", "--input", "H=8", "--emit", e), NULL);
        else
            run_ok(ARGS("run", example(names[i]), "--size", "N=512", "--emit", e), NULL);
        char *sig = run_ok(ARGS("check", example(names[i])), NULL);
        ck_assert_str_eq(run_ok(ARGS("check", arena_printf("%s/%s", e, "program.strata")), NULL), sig);
    }
}
END_TEST

/* ---- padding ---- */

/* How many kernels `run --emit` wrote to d/kernels.cl. */
static unsigned kernels_in(const char *d) {
    unsigned n = 0;
    for (const char *c = slurp(arena_printf("%s/%s", d, "kernels.cl"), NULL); (c = strstr(c, "__kernel")); c++) n++;
    return n;
}

/* The glue sizes each local argument before it adds it up (`bytes =
 * strata_bytes(…);`, then `local_bytes = strata_sum(local_bytes, bytes …)`): none of those sizes may
 * follow N, or a kernel's local memory grows with N and fails on large
 * inputs. */
static void local_memory_is_constant(const char *d, const char *label) {
    const char *host = slurp(arena_printf("%s/%s", d, "host.c"), NULL);
    unsigned locals = 0;
    for (const char *c = host; (c = strstr(c, "local_bytes = strata_sum(local_bytes, bytes")); c++, locals++) {
        const char *line = c;
        while (line > host && strncmp(line, "bytes = ", 8)) line--;
        char size[256];
        snprintf(size, sizeof size, "%.*s", (int)strcspn(line, "\n"), line);
        ck_assert_msg(line > host, "%s: a local argument with no size before it", label);
        ck_assert_msg(!strstr(size, "s_N"), "%s: local memory grows with N: %s", label, size);
    }
    ck_assert_msg(locals > 0, "%s: no local memory at all: not the work-group scan", label);
}

START_TEST(pad_scan_adds_no_kernel) {
    /* a mapped input (and a zip of two) padded to BS must launch no more
     * kernels than the same scan of a let-bound map whose length BS
     * divides: the padding is read where the scan reads it, the map with
     * it, and keeping the first N elements is the scan's last step */
    const char *padded = write_text("padded.strata", "def main(xs: [N]i32): [N]i32 =\n"
                                                     "  xs |> map(x => x * 3 - 1) |> scan(+, 0)\n");
    const char *zipped = write_text("zipped.strata", "def main(xs: [N]i32, ys: [N]f32): [N]f32 =\n"
                                                     "  zip(xs |> map(x => f32(x)), ys |> map(y => y * 2.0))\n"
                                                     "    |> map((a, b) => a + b) |> scan(+, 0.0)\n");
    const char *whole = write_text("whole.strata", "def main(xs: [N]i32): [N]i32 where N % 64 == 0 =\n"
                                                   "  let ys = xs |> map(x => x * 3 - 1)\n"
                                                   "  in ys |> scan(+, 0)\n");
    const char *s = "parallel-scan(BS=64, BF=2, SE=4)", *first = "first(scan, parallel-scan(BS=64, BF=2, SE=4))";
    const char *base = path_of("whole");
    run_checked(ARGS("run", whole, "-s", first, "--size", "N=1024", "--emit", base, "--check"));
    unsigned want = kernels_in(base);
    const char *lengths[] = {"N=1", "N=7", "N=1000", "N=1009"};
    for (size_t i = 0; i < sizeof lengths / sizeof *lengths; i++) {
        const char *d = path_of(arena_printf("%s%s", "padded-", lengths[i] + 2));
        run_checked(ARGS("run", padded, "-s", s, "--size", lengths[i], "--emit", d, "--check"));
        ck_assert_msg(kernels_in(d) <= want, "%s: %u kernels with padding, %u without", lengths[i], kernels_in(d), want);
        local_memory_is_constant(d, lengths[i]);
        const char *z = path_of(arena_printf("%s%s", "zipped-", lengths[i] + 2));
        run_checked(ARGS("run", zipped, "-s", s, "--size", lengths[i], "--emit", z, "--check"));
        ck_assert_msg(kernels_in(z) <= want, "zip, %s: %u kernels with padding, %u without", lengths[i], kernels_in(z),
                      want);
        local_memory_is_constant(z, lengths[i]);
    }
    /* the let-bound map is a kernel of its own; neither the map in the
     * pipeline, nor the padding, nor keeping the first N elements is */
    const char *cl = slurp(arena_printf("%s/%s", path_of("padded-1009"), "kernels.cl"), NULL);
    ck_assert_msg(!strstr(cl, "_padded("), "a kernel computes the padded input:\n%s", cl);
    ck_assert_msg(kernels_in(path_of("padded-1009")) < want, "%u kernels with padding, %u without:\n%s",
                  kernels_in(path_of("padded-1009")), want, cl);
}
END_TEST

/* The first word of device 0's name in `strata devices` ("pthread" for PoCL). */
static const char *device_word(void) {
    char *out = run_ok(ARGS("devices"), NULL);
    const char *p = strstr(out, "device 0: ");
    ck_assert_msg(p != NULL, "no device 0 in:\n%s", out);
    p += strlen("device 0: ");
    size_t n = strcspn(p, " -\n(");
    ck_assert_uint_gt(n, 2);
    char *w = st_arena_alloc(ar, n + 1);
    memcpy(w, p, n);
    w[n] = 0;
    return w;
}

START_TEST(device_by_index_and_name) {
    char *err;
    run_ok(ARGS("run", example("prefix_sum"), "--size", "N=1000", "--device", "0", "--check"), &err);
    ck_assert_has(err, "device 0: ");
    const char *word = device_word();
    run_ok(ARGS("run", example("prefix_sum"), "--size", "N=1000", "--device", word, "--check"), &err);
    ck_assert_has(err, word);
    ck_assert_has(err, "check: the results equal");
    /* PoCL's CPU device is called pthread-…: where it is there, it is found */
    if (strstr(run_ok(ARGS("devices"), NULL), "pthread"))
        run_checked(ARGS("run", example("prefix_sum"), "--size", "N=1000", "--device", "pthread", "--check"));
}
END_TEST

START_TEST(entry_picks_a_def) {
    const char *p = write_text("two.strata", "def main(xs: [N]i32): [N]i32 = xs\n"
                                             "def second(xs: [N]i32): [N]i32 = xs |> scan(+, 0)\n");
    const int32_t xs[] = {1, 2, 3, 4, 5};
    const char *in = write_npy("xs.npy", ST_I32, 5, xs);
    const char *d = path_of("out");
    run_checked(ARGS("run", p, "--entry", "second", "--input", pair("xs", in), "--output", d, "--check"));
    st_value v = read_npy(result_file(d, 0));
    const int32_t want[] = {1, 3, 6, 10, 15};
    ck_assert_int_eq(v.u.a.dims[0], 5);
    ck_assert_mem_eq(v.u.a.data, want, sizeof want);
    fails(ARGS("run", p, "--entry", "third", "--input", pair("xs", in)), "third");
}
END_TEST

START_TEST(check_passes_on_every_example) {
    run_checked(ARGS("run", example("prefix_sum"), "--size", "N=1000", "--check"));
    run_checked(ARGS("run", example("dot"), "--size", "N=1000", "--check"));
    run_checked(ARGS("run", example("block_sums"), "--size", "N=2560", "--check"));
    run_checked(ARGS("run", example("histogram"), "--size", "N=1000", "--input", "H=64", "--check"));
    run_checked(ARGS("run", example("filter"), "--size", "N=1000", "--check"));
    run_checked(ARGS("run", example("linear_recurrence"), "--size", "N=1000", "--check"));
    run_checked(ARGS("run", example("advanced"), "--size", "N=1000", "--check"));
}
END_TEST

START_TEST(check_passes_on_edge_sizes) {
    const char *names[] = {"prefix_sum", "dot", "filter", "linear_recurrence", "advanced"};
    const char *sizes[] = {"N=0", "N=1", "N=2", "N=257", "N=65536", "N=65537"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++)
            run_checked(ARGS("run", example(names[i]), "--size", sizes[k], "--check"));
    /* beyond one block of block sums: the default's second level scans them */
    run_checked(ARGS("run", example("prefix_sum"), "--size", "N=1048579", "--check"));
    run_checked(ARGS("run", example("block_sums"), "--size", "N=0", "--check"));
    run_checked(ARGS("run", example("block_sums"), "--size", "N=256", "--check"));
    run_checked(ARGS("run", example("histogram"), "--size", "N=0", "--input", "H=5", "--check"));
    run_checked(ARGS("run", example("histogram"), "--size", "N=100", "--input", "H=0", "--check"));
    run_checked(ARGS("run", example("histogram"), "--size", "N=100000", "--input", "H=1", "--check"));
}
END_TEST

/* Valid programs that `strata eval` ran and `run` refused (issue 46, item
 * 14): an unzip of an index map of pairs ("unzip of an array that is not a
 * zip") and a scatter_2d on a (B + 1) x (B + 1) grid, whose flattened
 * length (B + 1)² split by B + 1 was "not a multiple", exit 2. Under -s id
 * and the default. */
START_TEST(what_eval_runs_run_runs) {
    const char *unzip = write_text("unzip.strata", "def main(xs: [n]i32): ([n]i64, [n]i32) =\n"
                                                   "  iota(n) |> map(i => (i, xs[i] - 1)) |> unzip\n");
    const char *grid = write_text("grid.strata", "def main(B: i64): [B + 1][B + 1]i32 =\n"
                                                 "  scatter_2d(replicate(B + 1, replicate(B + 1, 0i32)), [(0i64, 0i64)], [1])\n");
    const char *ns[] = {"n=1", "n=7", "n=1000", "n=1000003"}, *bs[] = {"B=1", "B=8", "B=1000"};
    for (int id = 0; id < 2; id++) {
        for (size_t k = 0; k < sizeof ns / sizeof *ns; k++)
            run_checked(id ? ARGS("run", unzip, "-s", "id", "--size", ns[k], "--check")
                           : ARGS("run", unzip, "--size", ns[k], "--check"));
        for (size_t k = 0; k < sizeof bs / sizeof *bs; k++)
            run_checked(id ? ARGS("run", grid, "-s", "id", "--input", bs[k], "--check")
                           : ARGS("run", grid, "--input", bs[k], "--check"));
    }
    ck_assert_has(run_ok(ARGS("run", grid, "--input", "B=8"), NULL), "0: [9][9]i32 = [1, 0, 0, 0, 0, 0, 0, 0, …, 0, 0]");
}
END_TEST

/* Issue 46, item 7: a scatter of a million elements into 4 places, whose
 * check failed on some seeds (the device kept any write of a place, the
 * interpreter the last): the same on every seed now. */
START_TEST(check_passes_on_a_scatter_of_repeated_indices) {
    const char *prog = write_text("repeated.strata", "def main(xs: [N]i32): [4]i64 =\n"
                                                      "  scatter(replicate(4, -1i64), map(x => i64(x) & 3, xs), iota(N))\n");
    const char *seeds[] = {"1", "2", "3"};
    for (size_t i = 0; i < sizeof seeds / sizeof *seeds; i++)
        run_checked(ARGS("run", prog, "--size", "N=1000000", "--seed", seeds[i], "--check"));
}
END_TEST

/* ---- errors ---- */

START_TEST(missing_program) {
    const char *p = path_of("nope.strata");
    char *err = fails(ARGS("run", p, "--size", "N=10"), p);
    ck_assert_has(err, "cannot read");
    fails(ARGS("run", path_of("."), "--size", "N=10"), NULL); /* a folder */
}
END_TEST

START_TEST(syntax_error_located) {
    const char *p = write_text("bad.strata", "def main(xs: [N]f32): [N]f32 =\n  xs |> scan(+, 0.0 0.0)\n");
    char *err = fails(ARGS("run", p, "--size", "N=10"), arena_printf("%s%s", p, ":2:21: error:"));
    ck_assert_has(err, "xs |> scan(+, 0.0 0.0)"); /* the line, with a caret */
    ck_assert_has(err, "^");
    const char *t = write_text("type.strata", "def main(xs: [N]f32): [N]i32 =\n  xs |> scan(+, 0.0)\n");
    fails(ARGS("run", t, "--size", "N=10"), arena_printf("%s%s", t, ":1:"));
}
END_TEST

START_TEST(strategy_syntax_error_located) {
    char *err = fails(ARGS("run", example("prefix_sum"), "--size", "N=100", "-s", "parallel-scan(BS=256 BF=2)"),
                      "strategy:1:22:");
    ck_assert_has(err, "parallel-scan(BS=256 BF=2)");
    ck_assert_has(err, "\n                       ^"); /* under BF, after the two spaces of the quote */
    fails(ARGS("run", example("prefix_sum"), "--size", "N=100", "-s", "parallel-scan(BS=256, BF=2, SE=4"),
          "strategy:1:33:");
    fails(ARGS("run", example("prefix_sum"), "--size", "N=100", "-s", ""), "empty");
    fails(ARGS("run", example("prefix_sum"), "--size", "N=100", "-s", "parallel-scan(BS=0, BF=2, SE=4)"), "BS");
    fails(ARGS("run", example("prefix_sum"), "--size", "N=100", "-s", "parallel-scan(BS=256, BF=2)"), NULL);
}
END_TEST

START_TEST(strategy_does_not_apply) {
    char *err = fails(ARGS("run", example("dot"), "--size", "N=100", "-s", "parallel-scan(BS=256, BF=2, SE=4)"),
                      "does not apply");
    ck_assert_has(err, "scan");
    fails(ARGS("run", example("prefix_sum"), "--size", "N=100", "-s", "scan-then-propagate(BS=128)"),
          "does not apply");
    fails(ARGS("run", example("prefix_sum"), "--size", "N=100", "-s", "first(let, fuse-map-scan)"), "does not apply");
}
END_TEST

START_TEST(unknown_rule) {
    char *err = fails(ARGS("run", example("prefix_sum"), "--size", "N=100", "-s", "no-such-rule"), "no-such-rule");
    ck_assert_has(err, "unknown rule");
    ck_assert_has(err, "strata strategies");
    fails(ARGS("run", example("prefix_sum"), "--size", "N=100", "-s", "first(scan, no-such-rule)"), "unknown rule");
}
END_TEST

START_TEST(no_such_device) {
    char *err = fails(ARGS("run", example("prefix_sum"), "--size", "N=100", "--device", "99"), "99");
    ck_assert_has(err, "device");
    ck_assert_has(err, "0"); /* it says which there are */
    err = fails(ARGS("run", example("prefix_sum"), "--size", "N=100", "--device", "no-such-device"), "no-such-device");
    ck_assert_has(err, "0: "); /* and names them */
    fails(ARGS("run", example("prefix_sum"), "--size", "N=100", "--device", "-1"), NULL);
}
END_TEST

START_TEST(no_opencl_platform) {
    const char *empty = path_of("no-vendors");
    ck_assert_int_eq(mkdir(empty, 0700), 0);
    /* the ocl-icd loader reads its vendors from OCL_ICD_VENDORS, and would
     * take OCL_ICD_FILENAMES too: point it at nothing */
    char *const *env = env_with(arena_printf("OCL_ICD_VENDORS=%s%s", empty, ""), ARGS("OCL_ICD_FILENAMES"));
    char *err = fails_in(env, ARGS("run", example("prefix_sum"), "--size", "N=100"), "no OpenCL platform");
    ck_assert_has(err, "install"); /* how to get one */
    err = fails_in(env, ARGS("run", example("prefix_sum"), "--size", "N=100", "--device", "0"), "no OpenCL platform");
}
END_TEST

START_TEST(work_group_wider_than_the_device) {
    /* rows of 5000 are mapLcl'ed by as many work-items as the device allows
     * (PoCL 4096, GPUs 1024), each taking several elements */
    const char *prog = write_text("rows.strata", "def main(xss: [N][M]i32) = xss |> map(xs => xs |> map(x => x * 3 + 1))\n");
    run_checked(ARGS("run", prog, "-s", "id", "--size", "N=3", "--size", "M=5000", "--check"));
}
END_TEST

START_TEST(local_memory_too_large) {
    /* blocks of 2^20 need 8 MiB of local memory; no device has that much */
    char *err = fails(ARGS("run", example("prefix_sum"), "--size", "N=100000", "-s",
                           "parallel-scan(BS=1048576, BF=2, SE=1024)"),
                      "bytes of local memory per work-group");
    ck_assert_has(err, "CL_OUT_OF_RESOURCES");
}
END_TEST

START_TEST(bad_runs) {
    fails(ARGS("run", example("prefix_sum"), "--size", "N=100", "--time", "--runs", "0"), "--runs");
    fails(ARGS("run", example("prefix_sum"), "--size", "N=100", "--time", "--runs", "abc"), "--runs");
    fails(ARGS("run", example("prefix_sum"), "--size", "N=100", "--time", "--runs", "-3"), "--runs");
    /* and nothing is written where results were asked for */
    const char *d = path_of("out");
    fails(ARGS("run", example("prefix_sum"), "--size", "N=100", "--time", "--runs", "0", "--output", d), "--runs");
    ck_assert_msg(!exists(result_file(d, 0)), "--runs 0 failed but wrote %s", result_file(d, 0));
}
END_TEST

START_TEST(missing_input_size) {
    char *err = fails(ARGS("run", example("prefix_sum")), "xs");
    ck_assert_has(err, "--size");
    fails(ARGS("run", example("histogram"), "--size", "N=10"), "H");
    fails(ARGS("run", example("prefix_sum"), "--size", "M=10"), "M");
    fails(ARGS("run", example("prefix_sum"), "--size", "N=-1"), "N");
    fails(ARGS("run", example("block_sums"), "--size", "N=1000"), "256");
}
END_TEST

START_TEST(negative_scalar_size) {
    /* H is a scalar parameter and a size: a negative one is the user's
     * mistake, named as such (as `strata eval` does: "the array length H is
     * negative (-1)"), before anything is built */
    char *err = fails(ARGS("run", example("histogram"), "--size", "N=10", "--input", "H=-1"), "negative");
    ck_assert_has(err, "H");
    fails(ARGS("run", example("histogram"), "--size", "N=10", "--input", "H=abc"), "H");
}
END_TEST

START_TEST(input_of_wrong_dtype) {
    const int32_t xs[] = {1, 2, 3};
    const char *p = write_npy("xs.npy", ST_I32, 3, xs);
    char *err = fails(ARGS("run", example("prefix_sum"), "--input", pair("xs", p)), "i32");
    ck_assert_has(err, "f32");
    ck_assert_has(err, p);
    fails(ARGS("run", example("prefix_sum"), "--input", pair("xs", path_of("none.npy"))), "none.npy");
    const char *junk = write_text("junk.npy", "not an npy file at all");
    fails(ARGS("run", example("prefix_sum"), "--input", pair("xs", junk)), "junk.npy");
}
END_TEST

START_TEST(output_into_a_file) {
    const char *f = write_text("taken", "keep me\n");
    fails(ARGS("run", example("prefix_sum"), "--size", "N=10", "--output", f), "not a directory");
    ck_assert_str_eq(slurp(f, NULL), "keep me\n");
    fails(ARGS("run", example("prefix_sum"), "--size", "N=10", "--output", path_of("taken/sub")), "taken/sub");
}
END_TEST

START_TEST(emit_into_unwritable_path) {
    const char *f = write_text("taken", "keep me\n");
    fails(ARGS("run", example("prefix_sum"), "--size", "N=10", "--emit", f), "not a directory");
    ck_assert_str_eq(slurp(f, NULL), "keep me\n");
    fails(ARGS("run", example("prefix_sum"), "--size", "N=10", "--emit", path_of("taken/sub")), "cannot create");
    fails(ARGS("run", example("prefix_sum"), "--size", "N=10", "--emit", "/proc/strata-emit"), "/proc/strata-emit");
}
END_TEST

START_TEST(usage_errors) {
    char *err = fails(ARGS("run", example("prefix_sum"), "--size", "N=10", "--bogus"), "--bogus");
    ck_assert_has(err, "strata run --help");
    fails(ARGS("run"), "PROG");
    fails(ARGS("run", example("prefix_sum"), "--size", "N=10", "-s"), "--strategy");
    fails(ARGS("run", example("prefix_sum"), "extra", "--size", "N=10"), "extra");
    fails(ARGS("run", example("prefix_sum"), "--size", "N=10", "--time", "--time"), "--time");
    fails(ARGS("run", example("prefix_sum"), "--size", "N=10", "--seed", "x"), "--seed");
}
END_TEST

/* ---- help ---- */

START_TEST(run_help_documents_every_option) {
    char *out = run_ok(ARGS("run", "--help"), NULL);
    const char *options[] = {"-s,",   "--strategy", "--input", "--size", "--seed",  "--output", "--device",
                             "--check", "--time",   "--runs",  "--emit", "--entry", "--help"};
    for (size_t i = 0; i < sizeof options / sizeof *options; i++) ck_assert_has(out, options[i]);
    ck_assert_has(out, "usage: strata run PROG");
    ck_assert_has(out, "strata devices");
    out = run_ok(ARGS("--help"), NULL);
    ck_assert_has(out, "\n  run ");
    ck_assert_has(run_ok(ARGS("help", "run"), NULL), "--emit");
}
END_TEST

static TCase *tcase(Suite *s, const char *name) {
    TCase *tc = tcase_create(name);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    suite_add_tcase(s, tc);
    return tc;
}

int main(void) {
    Suite *s = suite_create("run");
    TCase *ok = tcase(s, "success");
    tcase_add_test(ok, prefix_sum_check_passes);
    tcase_add_test(ok, pad_scan_adds_no_kernel);
    tcase_add_test(ok, output_f32_equals_eval);
    tcase_add_test(ok, output_int_equals_eval_exactly);
    tcase_add_test(ok, several_outputs);
    tcase_add_test(ok, input_file_like_generated);
    tcase_add_test(ok, seed_decides_generated_inputs);
    tcase_add_test(ok, parallel_scan_strategies);
    tcase_add_test(ok, time_line_shape);
    tcase_add_test(ok, verbose_time_lists_each_kernel);
    tcase_add_test(ok, emit_writes_program_kernels_host);
    tcase_add_test(ok, device_by_index_and_name);
    tcase_add_test(ok, entry_picks_a_def);
    tcase_add_test(ok, check_passes_on_every_example);
    tcase_add_test(ok, check_passes_on_edge_sizes);
    tcase_add_test(ok, what_eval_runs_run_runs);
    tcase_add_test(ok, check_passes_on_a_scatter_of_repeated_indices);

    TCase *errors = tcase(s, "errors");
    tcase_add_test(errors, missing_program);
    tcase_add_test(errors, syntax_error_located);
    tcase_add_test(errors, strategy_syntax_error_located);
    tcase_add_test(errors, strategy_does_not_apply);
    tcase_add_test(errors, unknown_rule);
    tcase_add_test(errors, no_such_device);
    tcase_add_test(errors, no_opencl_platform);
    tcase_add_test(errors, work_group_wider_than_the_device);
    tcase_add_test(errors, local_memory_too_large);
    tcase_add_test(errors, bad_runs);
    tcase_add_test(errors, missing_input_size);
    tcase_add_test(errors, negative_scalar_size);
    tcase_add_test(errors, input_of_wrong_dtype);
    tcase_add_test(errors, output_into_a_file);
    tcase_add_test(errors, emit_into_unwritable_path);
    tcase_add_test(errors, usage_errors);

    TCase *help = tcase(s, "help");
    tcase_add_test(help, run_help_documents_every_option);

    scratch_make(root, sizeof root, "run");
    int rc = run_suite(s);
    scratch_remove(root);
    return rc;
}
