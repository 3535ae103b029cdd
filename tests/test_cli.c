/* tests/test_cli.c — the `strata` command as a user meets it: the real
 * binary ($STRATA) run without a shell, its stdout, stderr and exit status
 * captured. Exit 0 is success, 1 a user error with a message on stderr, 2 an
 * internal error (nothing here may produce it), and a signal is never right. */
#include "harness.h"
#include "run_strata.h"
#include "rewrite/rewrite.h"
#include "strategies/strategies.h"

#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <time.h>
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
    snprintf(dir, sizeof dir, "%s/test-XXXXXX", root); /* mkdtemp fills in the X's */
    ck_assert_msg(mkdtemp(dir) != NULL, "mkdtemp failed");
}

static void teardown(void) {
    scratch_remove(dir);
    st_arena_free(ar);
}

/* ---- files ---- */

/* dir/name, in the arena. */
static const char *path_of(const char *name) {
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = st_arena_alloc(ar, n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static const char *write_bytes(const char *name, const void *bytes, size_t len) {
    const char *p = path_of(name);
    FILE *f = fopen(p, "wb");
    ck_assert_msg(f != NULL, "cannot write %s", p);
    ck_assert(fwrite(bytes, 1, len, f) == len);
    fclose(f);
    return p;
}

static const char *write_text(const char *name, const char *text) {
    return write_bytes(name, text, strlen(text));
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

static const char *example(const char *name) {
    const char *d = getenv("STRATA_EXAMPLES");
    ck_assert_msg(d != NULL, "STRATA_EXAMPLES is not set (run through meson test)");
    size_t n = strlen(d) + strlen(name) + 2;
    char *p = st_arena_alloc(ar, n);
    snprintf(p, n, "%s/%s", d, name);
    return p;
}

/* "NAME=VALUE" in the arena. */
static const char *pair(const char *name, const char *value) {
    size_t n = strlen(name) + strlen(value) + 2;
    char *s = st_arena_alloc(ar, n);
    snprintf(s, n, "%s=%s", name, value);
    return s;
}

/* ---- running strata ---- */

static const char *describe(const char *const *args) { return strata_command_line(ar, args); }

static int run(const char *const *args, char **out, char **err) { return strata_spawn(ar, dir, environ, args, out, err); }


/* Succeeds with nothing on stderr; returns stdout. */
static char *expect_ok(const char *const *args) {
    char *out, *err;
    int rc = run(args, &out, &err);
    ck_assert_msg(rc == 0, "`%s` exited %d\nstderr:\n%s", describe(args), rc, err);
    ck_assert_msg(err[0] == 0, "`%s` succeeded but wrote to stderr:\n%s", describe(args), err);
    return out;
}

/* Fails as a user error (exit 1, not 2) with a message on stderr that
 * contains `part` (when not NULL) and nothing on stdout; returns stderr. */
static char *expect_user_error(const char *const *args, const char *part) {
    char *out, *err;
    int rc = run(args, &out, &err);
    ck_assert_msg(rc == 1, "`%s` exited %d, expected 1\nstdout:\n%s\nstderr:\n%s", describe(args), rc, out, err);
    ck_assert_msg(err[0] != 0, "`%s` failed without a message", describe(args));
    ck_assert_msg(out[0] == 0, "`%s` failed but wrote to stdout:\n%s", describe(args), out);
    if (part) ck_assert_has(err, part);
    return err;
}

/* ---- help and version ---- */

static const char *const commands[] = {"check", "print", "eval", "devices"};

START_TEST(no_arguments) {
    /* no command is a usage error: the overview goes to stderr, exit 1 */
    static const char *const none[] = {NULL};
    char *out, *err;
    int rc = run(none, &out, &err);
    ck_assert_int_eq(rc, 1);
    ck_assert_has(err, "usage");
    for (size_t i = 0; i < 4; i++) ck_assert_has(err, commands[i]);
}
END_TEST

START_TEST(top_level_help) {
    const char *forms[] = {"--help", "-h", "help"};
    for (int i = 0; i < 3; i++) {
        char *out = expect_ok(ARGS(forms[i]));
        ck_assert_has(out, "usage: strata");
        for (size_t c = 0; c < 4; c++) ck_assert_has(out, commands[c]);
    }
}
END_TEST

START_TEST(version) {
    char *out = expect_ok(ARGS("--version"));
    int major, minor, patch;
    ck_assert_msg(sscanf(out, "strata %d.%d.%d", &major, &minor, &patch) == 3, "version is `%s`", out);
    ck_assert_msg(strstr(out, " (build ") && strstr(out, ")\n"), "no build in `%s`", out);
}
END_TEST

START_TEST(help_for_a_command) {
    char *out = expect_ok(ARGS("help", "eval"));
    ck_assert_has(out, "usage: strata eval");
    ck_assert_has(out, "--input");
    ck_assert_has(out, "--output");
    ck_assert_has(out, "--size");
}
END_TEST

START_TEST(command_help) {
    for (size_t i = 0; i < 4; i++) {
        char want[64];
        snprintf(want, sizeof want, "usage: strata %s", commands[i]);
        ck_assert_has(expect_ok(ARGS(commands[i], "--help")), want);
        ck_assert_has(expect_ok(ARGS(commands[i], "-h")), want);
        ck_assert_has(expect_ok(ARGS("help", commands[i])), want);
    }
    /* --help wins wherever it is, even among arguments that would be wrong */
    ck_assert_has(expect_ok(ARGS("eval", "/nonexistent.strata", "--help")), "usage: strata eval");
}
END_TEST

/* ---- check and print ---- */

/* The examples folder's *.strata, full paths; returns how many. */
static int list_examples(const char **out, int max) {
    const char *d = getenv("STRATA_EXAMPLES");
    ck_assert_msg(d != NULL, "STRATA_EXAMPLES is not set (run through meson test)");
    DIR *dp = opendir(d);
    ck_assert_msg(dp != NULL, "cannot open %s", d);
    int n = 0;
    for (struct dirent *e; (e = readdir(dp)) && n < max;) {
        size_t len = strlen(e->d_name);
        if (len > 7 && !strcmp(e->d_name + len - 7, ".strata")) out[n++] = example(e->d_name);
    }
    closedir(dp);
    ck_assert_msg(n > 0, "no examples in %s", d);
    return n;
}

START_TEST(check_every_example) {
    const char *files[64];
    int n = list_examples(files, 64);
    for (int i = 0; i < n; i++) ck_assert_has(expect_ok(ARGS("check", files[i])), "def main(");
}
END_TEST

START_TEST(check_entry) {
    const char *p = write_text("two.strata", "def main(xs: [N]i32): [N]i32 = xs\n"
                                             "def second(x: f32): f32 = x * 2.0\n");
    char *all = expect_ok(ARGS("check", p));
    ck_assert_has(all, "def main(xs: [N]i32): [N]i32");
    ck_assert_has(all, "def second(x: f32): f32");
    char *one = expect_ok(ARGS("check", p, "--entry", "second"));
    ck_assert_has(one, "def second(");
    ck_assert_msg(!strstr(one, "def main("), "--entry second printed main too:\n%s", one);
    ck_assert_has(expect_ok(ARGS("check", "--entry=second", p)), "def second(");
}
END_TEST

START_TEST(print_parses_again) {
    const char *files[64];
    int n = list_examples(files, 64);
    for (int i = 0; i < n; i++) {
        char *printed = expect_ok(ARGS("print", files[i]));
        ck_assert_has(printed, "def main(");
        const char *again = write_text("printed.strata", printed);
        ck_assert_has(expect_ok(ARGS("check", again)), "def main(");
        /* and printing is a fixed point: what strata printed it prints the same */
        char *twice = expect_ok(ARGS("print", again));
        ck_assert_msg(!strcmp(printed, twice), "%s: print is not stable:\n%s\n--- then ---\n%s", files[i], printed,
                      twice);
    }
}
END_TEST

/* `-s id` is the identity: no pass runs before the strategy (the normal
 * forms are rules of their own, seeds-as-neutral and exscans-as-scans,
 * which the default strategies and lower-opencl begin with), so rewrite
 * prints what print does, for every example and for programs with a seed
 * to take out, an exscan and a scanTotal; and `run -s id` runs them,
 * lower-opencl making them what codegen takes. */
START_TEST(rewrite_id_is_the_identity) {
    const char *files[80];
    int n = list_examples(files, 64);
    files[n++] = write_text("seeded.strata", "def main(xs: [N]i32): [N]i32 = xs |> scan(+, 5)\n"
                                             "def total(xs: [N]i32): i32 = xs |> reduce(max, 3)\n");
    files[n++] = write_text("exclusive.strata", "def main(xs: [N]i64): [N]i64 = xs |> exscan(+, 9i64)\n");
    files[n++] = write_text("total.strata", "def main(xs: [N]i64): i64 = scanTotal(xs |> scan(max, 0i64))\n");
    for (int i = 0; i < n; i++) {
        char *printed = expect_ok(ARGS("print", files[i]));
        char *rewritten = expect_ok(ARGS("rewrite", files[i], "-s", "id"));
        ck_assert_msg(!strcmp(printed, rewritten), "%s: -s id changed the program:\n%s\n--- became ---\n%s", files[i],
                      printed, rewritten);
    }
    for (int i = n - 3; i < n; i++) {
        const char *const *args = ARGS("run", files[i], "-s", "id", "--size", "N=1000", "--check");
        char *out, *err;
        ck_assert_msg(run(args, &out, &err) == 0, "`%s` failed:\n%s", describe(args), err);
        ck_assert_has(err, "check: the results equal");
    }
}
END_TEST

START_TEST(print_keeps_where_clause) {
    /* the clause is part of the program: without it, split(256) would not check */
    char *printed = expect_ok(ARGS("print", example("block_sums.strata")));
    ck_assert_has(printed, "where N % 256 == 0");
}
END_TEST

/* ---- eval ---- */

/* v is a one-dimensional array of n_ elements of scalar kind sk */
#define ck_assert_array(v, sk, n_)                                                                \
    do {                                                                                          \
        ck_assert_int_eq((v).kind, ST_VALUE_ARRAY);                                               \
        ck_assert_int_eq((v).scalar, (sk));                                                       \
        ck_assert_uint_eq((v).n, 1);                                                              \
        ck_assert_int_eq((v).u.a.dims[0], (n_));                                                  \
    } while (0)

START_TEST(eval_prefix_sum) {
    const float xs[] = {1, 2, 3, 4}, want[] = {1, 3, 6, 10};
    const char *out_dir = path_of("out");
    char *out = expect_ok(ARGS("eval", example("prefix_sum.strata"), "--input",
                               pair("xs", write_npy("xs.npy", ST_F32, 4, xs)), "--output", out_dir));
    ck_assert_has(out, "0.npy"); /* it says where the results went */
    st_value r = read_npy(path_of("out/0.npy"));
    ck_assert_array(r, ST_F32, 4);
    ck_assert_mem_eq(r.u.a.data, want, sizeof want);
    ck_assert(!exists(path_of("out/1.npy")));
}
END_TEST

START_TEST(eval_advanced_five_results) {
    const int32_t as[] = {1, 2, 3, 4};
    /* (as, as - 1, as + 1, their prefix sums) */
    const int32_t want[5][4] = {{1, 2, 3, 4}, {0, 1, 2, 3}, {2, 3, 4, 5}, {0, 1, 3, 6}, {2, 5, 9, 14}};
    expect_ok(ARGS("eval", example("advanced.strata"), "--output", path_of("out"), "--input",
                   pair("as", write_npy("as.npy", ST_I32, 4, as))));
    for (int i = 0; i < 5; i++) {
        char name[32];
        snprintf(name, sizeof name, "out/%d.npy", i);
        st_value r = read_npy(path_of(name));
        ck_assert_array(r, ST_I32, 4);
        ck_assert_msg(!memcmp(r.u.a.data, want[i], sizeof want[i]), "result %d differs", i);
    }
    ck_assert(!exists(path_of("out/5.npy")));
}
END_TEST

START_TEST(eval_histogram_scalar_input) {
    const int32_t is[] = {0, 1, 1, 3, 7, -1, 2, 1}, want[] = {1, 3, 1, 1};
    expect_ok(ARGS("eval", example("histogram.strata"), "--input", pair("is", write_npy("is.npy", ST_I32, 8, is)),
                   "--input", "H=4", "--output", path_of("out")));
    st_value r = read_npy(path_of("out/0.npy"));
    ck_assert_array(r, ST_I32, 4);
    ck_assert_mem_eq(r.u.a.data, want, sizeof want);
}
END_TEST

START_TEST(eval_scalar_result) {
    const float xs[] = {1, 2, 3}, ys[] = {4, 5, 6};
    expect_ok(ARGS("eval", example("dot.strata"), "--input", pair("xs", write_npy("xs.npy", ST_F32, 3, xs)),
                   "--input", pair("ys", write_npy("ys.npy", ST_F32, 3, ys)), "--output", path_of("out")));
    st_value r = read_npy(path_of("out/0.npy"));
    ck_assert_int_eq(r.kind, ST_VALUE_SCALAR);
    ck_assert_int_eq(r.scalar, ST_F32);
    ck_assert(r.u.s.f32 == 32.0f);
}
END_TEST

START_TEST(eval_tuple_of_array_and_scalar) {
    const int32_t xs[] = {3, -1, 0, 5, -2, 7}, sums[] = {3, 2, 2, 7, 5, 12};
    const char *prog = write_text("pair.strata", "def main(xs: [N]i32) = (xs |> scan(+, 0), xs |> map(x => i64(x)) |> reduce(+, 0))\n");
    expect_ok(ARGS("eval", prog, "--input", pair("xs", write_npy("xs.npy", ST_I32, 6, xs)), "--output", path_of("out")));
    st_value r0 = read_npy(path_of("out/0.npy")), r1 = read_npy(path_of("out/1.npy"));
    ck_assert_array(r0, ST_I32, 6);
    ck_assert_mem_eq(r0.u.a.data, sums, sizeof sums);
    ck_assert_int_eq(r1.kind, ST_VALUE_SCALAR);
    ck_assert_int_eq(r1.scalar, ST_I64);
    ck_assert_int_eq(r1.u.s.i64, 12);
}
END_TEST

START_TEST(eval_two_dimensional_results) {
    /* nested results are one row-major .npy; a transposed view is written in
     * its own order, not the order of the array it views */
    const float xs[] = {1, 2, 3, 4, 5, 6}, transposed[] = {1, 4, 2, 5, 3, 6};
    const char *in = pair("xs", write_npy("xs.npy", ST_F32, 6, xs));
    const char *split = write_text("split.strata", "def main(xs: [N]f32): [N/2][2]f32 where N % 2 == 0 = xs |> split(2)\n");
    const char *tr = write_text("tr.strata",
                                "def main(xs: [N]f32): [N/2][2]f32 where N % 2 == 0 = xs |> split(N/2) |> transpose\n");
    expect_ok(ARGS("eval", split, "--input", in, "--output", path_of("s")));
    expect_ok(ARGS("eval", tr, "--input", in, "--output", path_of("t")));
    st_value s = read_npy(path_of("s/0.npy")), t = read_npy(path_of("t/0.npy"));
    ck_assert_uint_eq(s.n, 2);
    ck_assert_int_eq(s.u.a.dims[0], 3);
    ck_assert_int_eq(s.u.a.dims[1], 2);
    ck_assert_mem_eq(s.u.a.data, xs, sizeof xs);
    ck_assert_uint_eq(t.n, 2);
    ck_assert_int_eq(t.u.a.dims[0], 3);
    ck_assert_int_eq(t.u.a.dims[1], 2);
    ck_assert_mem_eq(t.u.a.data, transposed, sizeof transposed);
}
END_TEST

START_TEST(eval_empty_array) {
    static const float none[1];
    expect_ok(ARGS("eval", example("prefix_sum.strata"), "--input", pair("xs", write_npy("xs.npy", ST_F32, 0, none)),
                   "--output", path_of("out")));
    ck_assert_array(read_npy(path_of("out/0.npy")), ST_F32, 0);
}
END_TEST

START_TEST(eval_nested_output_dir) {
    const float xs[] = {2};
    expect_ok(ARGS("eval", example("prefix_sum.strata"), "--input", pair("xs", write_npy("xs.npy", ST_F32, 1, xs)),
                   "--output", path_of("a/b/c")));
    ck_assert_array(read_npy(path_of("a/b/c/0.npy")), ST_F32, 1);
}
END_TEST

START_TEST(eval_summary_without_output) {
    const float xs[] = {1, 2, 3, 4};
    char *out = expect_ok(ARGS("eval", example("prefix_sum.strata"), "--input",
                               pair("xs", write_npy("xs.npy", ST_F32, 4, xs))));
    ck_assert_has(out, "[4]f32");
    ck_assert_has(out, "10");
}
END_TEST

/* block_sums on a generated input of 512 elements, results in dir/name. */
static st_value generated_block_sums(const char *name, const char *seed) {
    expect_ok(ARGS("eval", example("block_sums.strata"), "--size", "N=512", "--seed", seed, "--output", path_of(name)));
    char file[64];
    snprintf(file, sizeof file, "%s/0.npy", name);
    return read_npy(path_of(file));
}

START_TEST(eval_generated_inputs) {
    st_value a = generated_block_sums("a", "5"), b = generated_block_sums("b", "5"), c = generated_block_sums("c", "6");
    ck_assert_array(a, ST_F32, 2);
    const float *s = a.u.a.data;
    /* each is a sum of 256 values in [0, 1): far from both ends */
    for (int i = 0; i < 2; i++) ck_assert_msg(s[i] > 64 && s[i] < 192, "block sum %d is %g", i, s[i]);
    ck_assert_msg(!memcmp(a.u.a.data, b.u.a.data, 2 * sizeof(float)), "one seed, two results");
    ck_assert_msg(memcmp(a.u.a.data, c.u.a.data, 2 * sizeof(float)), "two seeds, one result");
    /* --size alone (default seed) works too */
    ck_assert_has(expect_ok(ARGS("eval", example("prefix_sum.strata"), "--size", "N=7")), "[7]f32");
    /* a careless space on either side is dropped alike (issue 19, item 16:
     * "N=7 " was refused while "N= 7" was taken) */
    ck_assert_has(expect_ok(ARGS("eval", example("prefix_sum.strata"), "--size", "N=7 ")), "[7]f32");
    ck_assert_has(expect_ok(ARGS("eval", example("prefix_sum.strata"), "--size", " N = 7")), "[7]f32");
}
END_TEST

/* ---- errors in programs ---- */

/* stderr's lines: "FILE:LINE:COL: error: …", the source line, a caret under
 * COL. Checks the shape, the place, and that the caret is under COL. */
static void check_located_error(const char *err, const char *file, int want_line, int want_col,
                                const char *source_line) {
    char head[512];
    snprintf(head, sizeof head, "%s:%d:", file, want_line);
    ck_assert_msg(!strncmp(err, head, strlen(head)), "expected `%s…` at the start of:\n%s", head, err);
    int col = 0, used = 0;
    ck_assert_msg(sscanf(err + strlen(head), "%d: error: %n", &col, &used) == 1 && used > 0,
                  "no `COL: error:` in:\n%s", err);
    const char *nl1 = strchr(err, '\n');
    ck_assert_msg(nl1 != NULL && nl1[1], "no source line after:\n%s", err);
    const char *nl2 = strchr(nl1 + 1, '\n');
    ck_assert_msg(nl2 != NULL && nl2[1], "no caret line in:\n%s", err);
    /* the second line shows the source line */
    size_t shown_len = (size_t)(nl2 - nl1 - 1);
    char shown[512];
    snprintf(shown, sizeof shown, "%.*s", (int)shown_len, nl1 + 1);
    const char *src = strstr(shown, source_line);
    ck_assert_msg(src != NULL, "the source line `%s` is not shown:\n%s", source_line, err);
    ck_assert_msg(col == want_col, "the error is at column %d, expected %d:\n%s", col, want_col, err);
    /* the third line: blanks, then the caret under column col */
    size_t caret_at = (size_t)(src - shown) + (size_t)col - 1;
    const char *caret = nl2 + 1;
    for (size_t i = 0; i < caret_at; i++)
        ck_assert_msg(caret[i] == ' ' || caret[i] == '\t', "the caret line has `%c` before the caret:\n%s", caret[i], err);
    ck_assert_msg(caret[caret_at] == '^', "the caret is not under column %d:\n%s", col, err);
}

START_TEST(type_error_located) {
    const char *p = write_text("bad.strata", "-- a scan seeded with an i32 over f32s\n"
                                             "def main(xs: [N]f32): [N]f32 =\n"
                                             "  xs |> scan(+, 0)\n");
    /* at the neutral element, the `0` */
    check_located_error(expect_user_error(ARGS("check", p), "error:"), p, 3, 17, "  xs |> scan(+, 0)");
    /* the same through print and eval, which load programs the same way */
    check_located_error(expect_user_error(ARGS("print", p), NULL), p, 3, 17, "  xs |> scan(+, 0)");
    check_located_error(expect_user_error(ARGS("eval", p, "--size", "N=4"), NULL), p, 3, 17, "  xs |> scan(+, 0)");
}
END_TEST

START_TEST(declared_result_type_error) {
    const char *p = write_text("bad.strata", "def main(xs: [N]f32): [N]i32 =\n  xs |> scan(+, 0.0)\n");
    char *err = expect_user_error(ARGS("check", p), "[N]i32");
    check_located_error(err, p, 1, 23, "def main(xs: [N]f32): [N]i32 ="); /* at the declared type */
}
END_TEST

START_TEST(syntax_error_located) {
    /* at the second `0.0`, where a `,` or `)` should be */
    const char *p = write_text("bad.strata", "def main(xs: [N]f32): [N]f32 =\n  xs |> scan(+, 0.0 0.0)\n");
    check_located_error(expect_user_error(ARGS("check", p), NULL), p, 2, 21, "  xs |> scan(+, 0.0 0.0)");
    /* a tab before the error: the caret line keeps it, so the caret lines up */
    p = write_text("tab.strata", "def main(xs: [N]f32): [N]f32 =\n\txs |> scan(+, 0)\n");
    check_located_error(expect_user_error(ARGS("check", p), NULL), p, 2, 16, "\txs |> scan(+, 0)");
}
END_TEST

START_TEST(runtime_error) {
    /* a division by zero in the interpreter is the user's, reported, not crashed on */
    const char *p = write_text("div.strata", "def main(x: i32): i32 = 10 / x\n");
    expect_user_error(ARGS("eval", p, "--input", "x=0"), "division by zero");
    ck_assert_has(expect_ok(ARGS("eval", p, "--input", "x=3")), "3");
}
END_TEST

/* ---- usage errors ---- */

START_TEST(missing_program) {
    for (int i = 0; i < 3; i++) expect_user_error(ARGS(commands[i]), "PROG");
}
END_TEST

START_TEST(unknown_command) {
    char *err = expect_user_error(ARGS("chek", "x.strata"), "unknown command");
    ck_assert_has(err, "`chek`");
    ck_assert_has(err, "did you mean `check`");
    ck_assert_has(expect_user_error(ARGS("evl"), NULL), "`eval`");
    expect_user_error(ARGS("frobnicate"), "unknown command `frobnicate`");
    /* an option where the command should be */
    expect_user_error(ARGS("--frob"), "--frob");
}
END_TEST

START_TEST(unknown_option) {
    const char *prog = example("prefix_sum.strata");
    expect_user_error(ARGS("check", prog, "--frob"), "--frob");
    expect_user_error(ARGS("eval", prog, "--inputs", "xs=a.npy"), "--inputs");
    expect_user_error(ARGS("devices", "--entry", "main"), "--entry");
}
END_TEST

START_TEST(option_missing_value) {
    const char *prog = example("prefix_sum.strata");
    const char *opts[] = {"--input", "--size", "--seed", "--output", "--entry"};
    for (int i = 0; i < 5; i++) expect_user_error(ARGS("eval", prog, opts[i]), opts[i]);
    expect_user_error(ARGS("check", prog, "--entry"), "--entry");
}
END_TEST

START_TEST(unexpected_argument) {
    const char *prog = example("prefix_sum.strata");
    expect_user_error(ARGS("check", prog, "extra.strata"), "extra.strata");
    expect_user_error(ARGS("eval", prog, "--size", "N=4", "more"), "more");
    expect_user_error(ARGS("devices", "now"), "now");
}
END_TEST

START_TEST(option_given_twice) {
    expect_user_error(ARGS("eval", example("prefix_sum.strata"), "--size", "N=4", "--output", path_of("a"), "--output",
                           path_of("b")),
                      "--output");
    ck_assert(!exists(path_of("a")) && !exists(path_of("b")));
}
END_TEST

/* ---- bad programs never crash ---- */

/* A deterministic generator, so that a failure reproduces. */
static uint64_t next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* check on a bad program: exit 0 or 1 (never 2, never a signal); a failure
 * names the file. */
static void check_survives(const char *p) {
    char *out, *err;
    int rc = run(ARGS("check", p), &out, &err);
    ck_assert_msg(rc == 0 || rc == 1, "check of %s exited %d:\n%s", slurp(p, NULL), rc, err);
    if (rc == 1) ck_assert_msg(!strncmp(err, p, strlen(p)), "the message does not name the file:\n%s", err);
    else ck_assert_has(out, "def ");
}

START_TEST(garbage_program) {
    uint64_t s = 0x5eed;
    for (int i = 0; i < 20; i++) {
        unsigned char bytes[600];
        size_t n = 1 + next(&s) % sizeof bytes;
        for (size_t k = 0; k < n; k++) bytes[k] = (unsigned char)next(&s);
        const char *p = write_bytes("garbage.strata", bytes, n);
        char *out, *err;
        ck_assert_int_eq(run(ARGS("check", p), &out, &err), 1);
        ck_assert_has(err, p);
        expect_user_error(ARGS("eval", p, "--size", "N=3"), p);
    }
}
END_TEST

START_TEST(token_soup) {
    /* plausible tokens in random order: gets past the lexer into the parser
     * and the type checker */
    static const char *const tokens[] = {
        "def", "main", "(", ")", "xs", ":", "[N]", "f32", "i32", "i64", "=", "|>", "=>", ",", "scan", "map",
        "reduce", "split", "join", "zip", "unzip", "iota", "replicate", "transpose", "scatter", "reduce_by_index",
        "iterate", "let", "in", "if", "then", "else", "where", "N", "%", "==", "+", "-", "*", "/", "0", "1", "256",
        "0.0", "-1i64", "2.5f64", "(x, y)", ".0", ".1", "\n", "--", "x", "y", "min", "max", "&&", "!", "<<", "[",
        "]", "true", "0u32", "99999999999999999999", "[N/256]", "[H]", "H"};
    uint64_t s = 0xfeed;
    for (int i = 0; i < 150; i++) {
        st_buf b = {0};
        st_buf_puts(&b, "def main(xs: [N]i32, H: i64): [N]i32 =");
        int n = 1 + (int)(next(&s) % 30);
        for (int k = 0; k < n; k++) st_buf_printf(&b, " %s", tokens[next(&s) % (sizeof tokens / sizeof *tokens)]);
        st_buf_puts(&b, "\n");
        check_survives(write_text("soup.strata", b.data));
        st_buf_free(&b);
    }
}
END_TEST

START_TEST(truncated_programs) {
    /* every prefix of two examples: cut inside tokens, lets, lambdas, tuples */
    const char *names[] = {"advanced.strata", "filter.strata"};
    for (int e = 0; e < 2; e++) {
        size_t len;
        char *text = slurp(example(names[e]), &len);
        for (size_t cut = 0; cut < len; cut++) check_survives(write_bytes("cut.strata", text, cut));
    }
}
END_TEST

START_TEST(empty_program) {
    const char *p = write_text("empty.strata", "");
    expect_user_error(ARGS("check", p), p);
    expect_user_error(ARGS("eval", p), p);
    expect_user_error(ARGS("check", write_text("comment.strata", "-- nothing here\n")), NULL);
}
END_TEST

START_TEST(program_is_a_directory) {
    expect_user_error(ARGS("check", dir), dir);
    expect_user_error(ARGS("print", dir), dir);
    expect_user_error(ARGS("eval", dir, "--size", "N=4"), dir);
}
END_TEST

START_TEST(program_missing) {
    const char *p = path_of("nonexistent.strata");
    expect_user_error(ARGS("check", p), p);
    expect_user_error(ARGS("print", p), p);
    expect_user_error(ARGS("eval", p), p);
}
END_TEST

START_TEST(entry_missing) {
    const char *prog = example("dot.strata");
    ck_assert_has(expect_user_error(ARGS("check", prog, "--entry", "nope"), "`nope`"), "main");
    expect_user_error(ARGS("print", prog, "--entry", "nope"), "`nope`");
    expect_user_error(ARGS("eval", prog, "--entry", "nope", "--size", "N=4"), "`nope`");
    /* without --entry, a file of several defs and no main asks for one */
    const char *two = write_text("two.strata", "def a(x: i32): i32 = x\ndef b(x: i32): i32 = x\n");
    expect_user_error(ARGS("eval", two, "--input", "x=1"), "--entry");
}
END_TEST

/* ---- bad inputs never crash ---- */

static const char *prefix_sum_with(const char *npy_path, char **err) {
    char *out;
    int rc = run(ARGS("eval", example("prefix_sum.strata"), "--input", pair("xs", npy_path), "--output", path_of("out")),
                 &out, err);
    ck_assert_msg(rc == 1, "eval with %s exited %d:\n%s", npy_path, rc, *err);
    ck_assert_has(*err, npy_path); /* the message names the file */
    ck_assert(!exists(path_of("out/0.npy")));
    return *err;
}

/* A version 1.0 .npy file with header {dict, } and data_bytes zero bytes. */
static const char *raw_npy(const char *name, const char *dict, size_t data_bytes) {
    char head[256];
    int n = snprintf(head + 10, sizeof head - 10, "{%s, }", dict);
    size_t total = (10 + (size_t)n + 1 + 63) / 64 * 64; /* numpy pads to 64 bytes */
    ck_assert(total <= sizeof head);
    memcpy(head, "\x93NUMPY\x01\x00", 8);
    head[8] = (char)((total - 10) & 0xff);
    head[9] = (char)((total - 10) >> 8);
    memset(head + 10 + n, ' ', total - 10 - (size_t)n);
    head[total - 1] = '\n';
    char buf[512] = {0};
    memcpy(buf, head, total);
    ck_assert(total + data_bytes <= sizeof buf);
    return write_bytes(name, buf, total + data_bytes);
}

START_TEST(garbage_npy) {
    char *err;
    const char junk[] = "this is not a numpy file at all, just some text\n";
    prefix_sum_with(write_bytes("junk.npy", junk, sizeof junk - 1), &err);
    /* a valid magic and a header that is noise */
    unsigned char bytes[200] = "\x93NUMPY\x01\x00\x76\x00";
    uint64_t s = 0xbad;
    for (size_t i = 10; i < sizeof bytes; i++) bytes[i] = (unsigned char)next(&s);
    prefix_sum_with(write_bytes("noise.npy", bytes, sizeof bytes), &err);
    /* well-formed headers that strata refuses: a dtype it has no type for,
     * big-endian data, a shape that is not numbers, no shape at all */
    ck_assert_has(prefix_sum_with(raw_npy("half.npy", "'descr': '<f2', 'fortran_order': False, 'shape': (2,)", 4), &err),
                  "f2");
    ck_assert_has(prefix_sum_with(raw_npy("big.npy", "'descr': '>f4', 'fortran_order': False, 'shape': (2,)", 8), &err),
                  "big-endian");
    prefix_sum_with(raw_npy("shape.npy", "'descr': '<f4', 'fortran_order': False, 'shape': (two,)", 8), &err);
    prefix_sum_with(raw_npy("noshape.npy", "'descr': '<f4', 'fortran_order': False", 8), &err);
    prefix_sum_with(raw_npy("neg.npy", "'descr': '<f4', 'fortran_order': False, 'shape': (-2,)", 8), &err);
    /* a shape whose bytes overflow, with no data behind it */
    prefix_sum_with(raw_npy("huge.npy", "'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904,)", 0),
                    &err);
    /* too much data for its shape */
    prefix_sum_with(raw_npy("long.npy", "'descr': '<f4', 'fortran_order': False, 'shape': (2,)", 12), &err);
}
END_TEST

START_TEST(truncated_npy) {
    static float xs[64];
    size_t len;
    char *whole = slurp(write_npy("whole.npy", ST_F32, 64, xs), &len);
    /* every cut: in the magic, the header, the data */
    for (size_t cut = 1; cut < len; cut += cut < 140 ? 1 : 37) {
        char *err;
        prefix_sum_with(write_bytes("cut.npy", whole, cut), &err);
    }
    char *err;
    ck_assert_has(prefix_sum_with(write_bytes("cut.npy", whole, len - 4), &err), "truncated");
}
END_TEST

START_TEST(empty_npy) {
    char *err;
    prefix_sum_with(write_bytes("empty.npy", "", 0), &err);
}
END_TEST

START_TEST(npy_is_a_directory) {
    char *err;
    const char *d = path_of("folder.npy");
    ck_assert(mkdir(d, 0700) == 0);
    prefix_sum_with(d, &err);
}
END_TEST

START_TEST(npy_missing) {
    char *err;
    prefix_sum_with(path_of("nowhere.npy"), &err);
}
END_TEST

START_TEST(npy_wrong_dtype) {
    const int32_t xs[] = {1, 2};
    char *err;
    const char *p = write_npy("ints.npy", ST_I32, 2, xs);
    prefix_sum_with(p, &err);
    ck_assert_has(err, "<i4");
    ck_assert_has(err, "[N]f32");
}
END_TEST

START_TEST(bad_scalar_and_size_values) {
    const char *hist = example("histogram.strata"), *ps = example("prefix_sum.strata");
    expect_user_error(ARGS("eval", hist, "--size", "N=4", "--input", "H=many"), "`H`");
    expect_user_error(ARGS("eval", ps, "--size", "N=-1"), "negative");
    expect_user_error(ARGS("eval", ps, "--size", "N=lots"), "`N`");
    expect_user_error(ARGS("eval", ps, "--size", "M=4"), "`M`");
    expect_user_error(ARGS("eval", ps, "--seed", "abc"), "--seed");
    expect_user_error(ARGS("eval", ps, "--input", "xs"), "NAME=VALUE");
    expect_user_error(ARGS("eval", ps), "--input xs=");
    expect_user_error(ARGS("eval", example("block_sums.strata"), "--size", "N=100"), "256");
    expect_user_error(ARGS("eval", hist, "--size", "N=4", "--input", "H=-1"), "negative");
    /* a length whose bytes do not fit in memory at all */
    expect_user_error(ARGS("eval", ps, "--size", "N=4611686018427387904"), NULL);
}
END_TEST

START_TEST(output_is_a_file) {
    const char *f = write_text("taken", "not a folder\n");
    expect_user_error(ARGS("eval", example("prefix_sum.strata"), "--size", "N=4", "--output", f), f);
    ck_assert_str_eq(slurp(f, NULL), "not a folder\n"); /* left alone */
    /* and below a file */
    char sub[256];
    snprintf(sub, sizeof sub, "%s/sub", f);
    expect_user_error(ARGS("eval", example("prefix_sum.strata"), "--size", "N=4", "--output", sub), f);
    expect_user_error(ARGS("eval", example("prefix_sum.strata"), "--size", "N=4", "--output", ""), NULL);
}
END_TEST

/* ---- strategies and rewrite ---- */

/* The built-in rules, as the library registers them. */
static st_registry *builtin_rules(void) {
    st_registry *reg = st_registry_new();
    st_err err = {0};
    ck_assert(reg != NULL);
    ck_assert_msg(st_register_builtin_rules(reg, &err), "%s", err.message);
    return reg;
}

/* "name" or "name(P1, P2, …)", as `strata strategies` heads a rule. */
static const char *rule_header(const st_rule *r) {
    st_buf b = {0};
    st_buf_puts(&b, r->name);
    for (uint32_t k = 0; k < r->nparams; k++) st_buf_printf(&b, "%s%s", k ? ", " : "(", r->params[k].name);
    if (r->nparams) st_buf_puts(&b, ")");
    char *s = st_arena_alloc(ar, b.len + 1);
    memcpy(s, b.data, b.len + 1);
    st_buf_free(&b);
    return s;
}

/* The same in backquotes, as `strata strategies --markdown` writes it. */
static const char *rule_header_code(const st_rule *r) { return arena_text(ar, "`%s`", rule_header(r)); }

/* The line of text that starts with `start` (at the start of a line), or NULL. */
static const char *line_starting(const char *text, const char *start) {
    size_t n = strlen(start);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (!strncmp(p, start, n)) return p;
    return NULL;
}

START_TEST(strategies_lists_every_rule) {
    char *out = expect_ok(ARGS("strategies"));
    /* the rules of DESIGN.md, with their parameters */
    static const char *const design[] = {"scan-then-propagate(BS)", "brent-kung-step(BF)", "brent-kung(BF, TD)",
                                         "parallel-scan(BS, BF, TD, SE)", "fuse-map-scan", "fuse-scan-scan",
                                         "fuse-scan-map", "fuse-scan-scatter", "sequential-scan", "pad-scan(BS)"};
    for (size_t i = 0; i < sizeof design / sizeof *design; i++)
        ck_assert_msg(line_starting(out, design[i]), "`%s` is not listed:\n%s", design[i], out);
    /* every registered rule: its header, each parameter with its range, and its conditions */
    st_registry *reg = builtin_rules();
    size_t n = st_registry_count(reg);
    ck_assert_uint_ge(n, 10);
    for (size_t i = 0; i < n; i++) {
        const st_rule *r = st_registry_at(reg, i);
        const char *head = line_starting(out, rule_header(r));
        ck_assert_msg(head != NULL, "rule `%s` is not listed as `%s`:\n%s", r->name, rule_header(r), out);
        /* its block runs to the next blank line */
        const char *end = strstr(head, "\n\n");
        ck_assert_msg(end != NULL, "the block of `%s` does not end with a blank line", r->name);
        char *block = st_arena_alloc(ar, (size_t)(end - head) + 1);
        memcpy(block, head, (size_t)(end - head));
        block[end - head] = 0;
        ck_assert_msg(strstr(block, "\n    when: "), "rule `%s` has no `when:` line:\n%s", r->name, block);
        ck_assert_has(block, r->summary);
        for (uint32_t k = 0; k < r->nparams; k++) {
            char want[128];
            const st_param *pm = &r->params[k];
            if (st_param_nnames(pm)) /* a named parameter lists its names */
                snprintf(want, sizeof want, "%s | %s", pm->names[0], pm->names[1]);
            else
                snprintf(want, sizeof want, "%lld to %lld", (long long)pm->min, (long long)pm->max);
            ck_assert_msg(strstr(block, want), "`%s`'s parameter %s: no `%s` in:\n%s", r->name, r->params[k].name, want, block);
            snprintf(want, sizeof want, "\n    %s ", r->params[k].name);
            ck_assert_msg(strstr(block, want), "`%s`'s parameter %s has no line:\n%s", r->name, r->params[k].name, block);
        }
    }
    ck_assert_int_eq(count_of(out, "    when: "), (int)n);
    st_registry_free(reg);
    /* the combinators and the patterns */
    ck_assert_has(out, "first(pattern, s)");
    ck_assert_has(out, "<+");
    ck_assert_has(out, "patterns:");
    /* it takes no arguments */
    expect_user_error(ARGS("strategies", "extra"), "extra");
    expect_user_error(ARGS("strategies", "--trace"), "--trace");
    ck_assert_has(expect_ok(ARGS("strategies", "--help")), "usage: strata strategies");
    /* --default: a device type's default strategy, exactly, alone; which -s takes */
    for (int d = 0; d < 2; d++) {
        char *one = expect_ok(ARGS("strategies", "--default", d ? "gpu" : "CPU"));
        char want[4096];
        snprintf(want, sizeof want, "%s\n", st_default_strategy(d ? "GPU" : "CPU"));
        ck_assert_str_eq(one, want);
    }
    expect_user_error(ARGS("strategies", "--default", "tpu"), "--default is cpu or gpu, not `tpu`");
    expect_user_error(ARGS("strategies", "--default"), "--default");
}
END_TEST

/* docs/rules.md is what `strata strategies --markdown` prints: a rule whose
 * summary, conditions or parameters change without the page fails here. */
START_TEST(rules_page_is_the_rules_markdown) {
    const char *docs = getenv("STRATA_DOCS");
    ck_assert_msg(docs != NULL, "STRATA_DOCS is not set (run through meson test)");
    char *out = expect_ok(ARGS("strategies", "--markdown"));
    char *page = slurp(arena_text(ar, "%s/rules.md", docs), NULL);
    if (strcmp(out, page)) {
        size_t line = 1, start = 0; /* the first line that differs */
        for (size_t i = 0; out[i] && out[i] == page[i]; i++)
            if (out[i] == '\n') line++, start = i + 1;
        ck_abort_msg("docs/rules.md differs from `strata strategies --markdown` at line %zu "
                     "(remake it: build/strata strategies --markdown > docs/rules.md):\n"
                     "the rules say: %.*s\nthe page says: %.*s",
                     line, (int)strcspn(out + start, "\n"), out + start, (int)strcspn(page + start, "\n"), page + start);
    }
    /* every rule has a row, and every parameter a row */
    st_registry *reg = builtin_rules();
    for (size_t i = 0; i < st_registry_count(reg); i++) {
        const st_rule *r = st_registry_at(reg, i);
        ck_assert_has(out, arena_text(ar, "| %s | %s | ", rule_header_code(r), r->expand ? "composite" : "rule"));
        for (uint32_t k = 0; k < r->nparams; k++)
            ck_assert_has(out, arena_text(ar, "| `%s` | `%s` | ", r->name, r->params[k].name));
    }
    st_registry_free(reg);
    /* the combinators, as the plain list has them */
    ck_assert_has(out, "first(pattern, s)");
}
END_TEST

START_TEST(rewrite_and_strategies_in_help) {
    char *out = expect_ok(ARGS("--help"));
    ck_assert_has(out, "rewrite");
    ck_assert_has(out, "strategies");
    out = expect_ok(ARGS("rewrite", "--help"));
    ck_assert_has(out, "usage: strata rewrite");
    ck_assert_has(out, "-s, --strategy");
    ck_assert_has(out, "--trace");
    ck_assert_has(out, "--entry");
    ck_assert_has(expect_ok(ARGS("help", "rewrite")), "usage: strata rewrite");
}
END_TEST

static const char *const PS = "parallel-scan(BS=16, BF=2, TD=2)";

/* Rewrite prog with strategy into dir/name; the output checks and prints
 * back to itself. Returns the path. */
static const char *rewritten(const char *prog, const char *strategy, const char *name) {
    char *out = expect_ok(ARGS("rewrite", prog, "-s", strategy));
    ck_assert_has(out, "def main(");
    const char *p = write_text(name, out);
    ck_assert_has(expect_ok(ARGS("check", p)), "def main(");
    char *again = expect_ok(ARGS("print", p));
    ck_assert_msg(!strcmp(out, again), "`rewrite -s '%s'` printed what does not print back to itself:\n%s\n--- then ---\n%s",
                  strategy, out, again);
    return p;
}

/* eval prog on a generated input: dir/name/0.npy */
static st_value eval_generated(const char *prog, const char *size, const char *seed, const char *name) {
    expect_ok(ARGS("eval", prog, "--size", size, "--seed", seed, "--output", path_of(name)));
    char file[96], second[96];
    snprintf(file, sizeof file, "%s/0.npy", name);
    snprintf(second, sizeof second, "%s/1.npy", name);
    ck_assert_msg(!exists(path_of(second)), "%s has more than one result", prog);
    return read_npy(path_of(file));
}

START_TEST(rewrite_parallel_scan_f32) {
    const char *prog = example("prefix_sum.strata");
    const char *p = rewritten(prog, PS, "rewritten.strata");
    ck_assert_str_eq(expect_ok(ARGS("check", p)), "def main(xs: [N]f32): [N]f32\n");
    st_value a = eval_generated(prog, "N=1000", "3", "a"), b = eval_generated(p, "N=1000", "3", "b");
    ck_assert_array(a, ST_F32, 1000);
    ck_assert_array(b, ST_F32, 1000);
    /* f32 sums in another order: equal up to rounding (the sums reach about
     * 500; one element, in [0, 1), more or less would show) */
    const float *x = a.u.a.data, *y = b.u.a.data;
    for (int i = 0; i < 1000; i++)
        ck_assert_msg(fabsf(x[i] - y[i]) <= 1e-3f, "element %d: %.9g (original) and %.9g (rewritten)", i, x[i], y[i]);
    ck_assert_msg(x[999] > 300.0f && x[999] < 700.0f, "the sum of 1000 values in [0, 1) is %g", x[999]);
}
END_TEST

/* The same on i32, where the results must be equal bit for bit, on lengths
 * below, at and around the block size too. */
START_TEST(rewrite_parallel_scan_i32_exact) {
    const char *prog = write_text("ps32.strata", "def main(xs: [N]i32): [N]i32 =\n  xs |> scan(+, 0)\n");
    static const char *const strategies[] = {"parallel-scan(BS=16, BF=2, TD=2)", "parallel-scan(BS=8, BF=2, SE=2)",
                                             "parallel-scan(BS=16, BF=4, TD=2)", "sequential-scan",
                                             "pad-scan(BS=16) ; first(scan, scan-then-propagate(BS=16))"};
    static const char *const sizes[] = {"N=1000", "N=0", "N=1", "N=15", "N=16", "N=17", "N=33"};
    for (size_t s = 0; s < sizeof strategies / sizeof *strategies; s++) {
        const char *p = rewritten(prog, strategies[s], "r.strata");
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
            char an[32], bn[32];
            snprintf(an, sizeof an, "a%zu_%zu", s, k);
            snprintf(bn, sizeof bn, "b%zu_%zu", s, k);
            st_value a = eval_generated(prog, sizes[k], "3", an), b = eval_generated(p, sizes[k], "3", bn);
            int64_t n = atoi(sizes[k] + 2);
            ck_assert_array(a, ST_I32, n);
            ck_assert_array(b, ST_I32, n);
            ck_assert_msg(!n || !memcmp(a.u.a.data, b.u.a.data, (size_t)n * 4), "`%s` changed the result at %s",
                          strategies[s], sizes[k]);
        }
    }
}
END_TEST

/* The fusion rules write the new forms; what they print evaluates alike. */
START_TEST(rewrite_fusions_print_new_forms) {
    const char *ms = write_text("ms.strata", "def main(xs: [N]i32): [N]i64 =\n  xs |> map(x => i64(x) * 2) |> scan(+, 0)\n");
    const char *p = rewritten(ms, "fuse-map-scan", "fused.strata");
    char *text = slurp(p, NULL);
    ck_assert_msg(strstr(text, "|> scan(") && strstr(text, "0i64)") && !strstr(text, "map("),
                  "fuse-map-scan wrote:\n%s", text);
    st_value a = eval_generated(ms, "N=100", "3", "a"), b = eval_generated(p, "N=100", "3", "b");
    ck_assert_array(b, ST_I64, 100);
    ck_assert_mem_eq(a.u.a.data, b.u.a.data, 100 * 8);
    const char *sm = write_text("sm.strata", "def main(xs: [N]i32): [N]bool =\n  xs |> scan(+, 0) |> map(y => y > 2)\n");
    p = rewritten(sm, "fuse-scan-map", "fused2.strata");
    a = eval_generated(sm, "N=100", "4", "c");
    b = eval_generated(p, "N=100", "4", "d");
    ck_assert_array(b, ST_BOOL, 100);
    ck_assert_mem_eq(a.u.a.data, b.u.a.data, 100);
}
END_TEST

START_TEST(rewrite_strategy_option_forms) {
    const char *prog = example("prefix_sum.strata");
    char *one = expect_ok(ARGS("rewrite", prog, "-s", PS));
    ck_assert_str_eq(expect_ok(ARGS("rewrite", prog, "--strategy", PS)), one);
    char eq[128];
    snprintf(eq, sizeof eq, "--strategy=%s", PS);
    ck_assert_str_eq(expect_ok(ARGS("rewrite", prog, eq)), one);
    ck_assert_str_eq(expect_ok(ARGS("rewrite", "-s", PS, prog)), one);
    ck_assert_str_eq(expect_ok(ARGS("rewrite", "--entry", "main", "--strategy", PS, prog)), one);
    /* positional arguments and spaces in the strategy */
    ck_assert_str_eq(expect_ok(ARGS("rewrite", prog, "-s", "parallel-scan(16,2,2)")), one);
    ck_assert_str_eq(expect_ok(ARGS("rewrite", prog, "-s", "  parallel-scan ( BS = 16 , BF = 2 , TD = 2 )  ")), one);
    expect_user_error(ARGS("rewrite", prog, "-s", PS, "--strategy", PS), "given twice");
    expect_user_error(ARGS("rewrite", prog, "-s"), "needs a value");
    expect_user_error(ARGS("rewrite", prog, "-s", PS, "extra"), "extra");
}
END_TEST

/* The number at the start of a trace line, and where the rule's name starts. */
static int trace_number(const char *line, int *name_col) {
    int n = -1, used = 0;
    if (sscanf(line, "%d%n", &n, &used) != 1) return -1;
    int col = used;
    while (line[col] == ' ') col++;
    *name_col = col;
    return n;
}

START_TEST(rewrite_trace) {
    const char *prog = example("prefix_sum.strata");
    char *plain = expect_ok(ARGS("rewrite", prog, "-s", PS));
    char *out, *err;
    ck_assert_int_eq(run(ARGS("rewrite", prog, "-s", PS, "--trace"), &out, &err), 0);
    ck_assert_str_eq(out, plain); /* the trace goes to stderr only */
    st_registry *reg = builtin_rules();
    /* numbered 1, 2, 3, … , one rule per line */
    static const char *const names[] = {"parallel-scan(BS=16, BF=2, TD=2)", "pad-scan(BS=16)", "scan-then-propagate(BS=16)",
                                        "brent-kung(BF=2, TD=2)", "brent-kung-step(BF=2)", "sequential-scan"};
    int line_of[6] = {0}, col_of[6] = {0}, lines = 0, steps = 0;
    for (char *line = err; *line;) {
        char *nl = strchr(line, '\n');
        ck_assert_msg(nl != NULL, "a trace line without its newline:\n%s", err);
        *nl = 0;
        int col, n = trace_number(line, &col);
        ck_assert_msg(n == lines + 1, "trace line %d is numbered %d:\n%s", lines + 1, n, line);
        lines++;
        /* the rule is a registered one */
        char name[80];
        ck_assert(sscanf(line + col, "%79[A-Za-z0-9_-]", name) == 1);
        ck_assert_msg(st_registry_find(reg, name) != NULL, "the trace names `%s`, which is no rule:\n%s", name, line);
        /* the scan, or the start of a long one (the nested levels' scans of totals) */
        ck_assert_msg(strstr(line, " at ") && (strstr(line, "scan(+, 0.0)") || strstr(line, "…")),
                      "no `at` and the scan in:\n%s", line);
        for (int i = 0; i < 6; i++)
            if (!strncmp(line + col, names[i], strlen(names[i])) && !line_of[i]) line_of[i] = n, col_of[i] = col;
        if (!strncmp(line + col, "brent-kung-step(BF=2)", 21)) steps++;
        line = nl + 1;
    }
    st_registry_free(reg);
    for (int i = 0; i < 6; i++) ck_assert_msg(line_of[i] > 0, "`%s` is not in the trace:\n%s", names[i], err);
    /* composites first, their parts after them and indented deeper */
    ck_assert_int_eq(line_of[0], 1);
    ck_assert_int_lt(line_of[0], line_of[1]);
    ck_assert_int_lt(line_of[1], line_of[2]);
    ck_assert_int_lt(line_of[2], line_of[3]);
    ck_assert_int_lt(line_of[3], line_of[4]);
    ck_assert_int_lt(col_of[0], col_of[1]);
    ck_assert_int_lt(col_of[3], col_of[4]);
    ck_assert_int_eq(steps, 2 * 4); /* TD = 2 layers, at each of the 4 levels that BS = 16 nests to */
    /* a branch that failed leaves nothing in the trace: try's rule did not
     * apply at the let, first's did at the scan */
    const char *let = write_text("let.strata", "def main(xs: [N]f32): [N]f32 =\n  let ys = xs |> scan(+, 0.0)\n  in ys\n");
    ck_assert_int_eq(run(ARGS("rewrite", let, "--trace", "-s", "try(sequential-scan) ; first(scan, sequential-scan)"), &out, &err), 0);
    ck_assert_has(out, "scanSeq(+, 0.0)");
    ck_assert_msg(count_of(err, "\n") == 1 && strstr(err, "sequential-scan") && trace_number(err, &(int){0}) == 1,
                  "expected one trace line:\n%s", err);
    /* a strategy that fails traces nothing, only the error */
    err = expect_user_error(ARGS("rewrite", let, "--trace", "-s", "first(scan, sequential-scan) ; fail"), "does not apply");
    ck_assert_msg(!strstr(err, "  1  "), "a failed strategy printed a trace:\n%s", err);
}
END_TEST

START_TEST(rewrite_does_not_apply) {
    const char *let = write_text("let.strata", "def main(xs: [N]f32): [N]f32 =\n  let ys = xs |> scan(+, 0.0)\n  in ys\n");
    /* a rule applies at the body, which is a let: the hint says how to reach in */
    char *err = expect_user_error(ARGS("rewrite", let, "-s", PS), "does not apply");
    ck_assert_has(err, let);
    ck_assert_has(err, "`main`");
    ck_assert_has(err, "parallel-scan rewrites a scan");
    ck_assert_has(err, "first(scan, …)");
    err = expect_user_error(ARGS("rewrite", let, "-s", "fuse-map-scan"), "does not apply");
    ck_assert_has(err, "first(scan, …)");
    /* the shape fits but the condition fails: the reason */
    err = expect_user_error(ARGS("rewrite", example("prefix_sum.strata"), "-s", "scan-then-propagate(BS=16)"),
                            "does not apply");
    ck_assert_has(err, "multiple of BS = 16");
    err = expect_user_error(ARGS("rewrite", example("prefix_sum.strata"), "-s", "first(scan, brent-kung(BF=2, TD=3))"),
                            "does not apply");
    ck_assert_has(err, "brent-kung");
    /* nothing to rewrite */
    expect_user_error(ARGS("rewrite", example("dot.strata"), "-s", "first(scan, sequential-scan)"), "there is no scan");
    expect_user_error(ARGS("rewrite", example("prefix_sum.strata"), "-s", "fail"), "does not apply");
    /* the other defs are left, --entry picks the one rewritten */
    const char *two = write_text("two.strata", "def helper(x: i32): i32 = x + 1\n"
                                               "def main(xs: [N]i32): [N]i32 = xs |> scan(+, 0)\n");
    char *out = expect_ok(ARGS("rewrite", two, "-s", "sequential-scan"));
    ck_assert_has(out, "def helper(x: i32): i32 =\n  x + 1\n");
    ck_assert_has(out, "xs |> scanSeq(+, 0)");
    expect_user_error(ARGS("rewrite", two, "--entry", "helper", "-s", "sequential-scan"), "`helper`");
    expect_user_error(ARGS("rewrite", two, "--entry", "nope", "-s", "sequential-scan"), "`nope`");
}
END_TEST

START_TEST(rewrite_unknown_rule) {
    const char *prog = example("prefix_sum.strata");
    const char *s = "try(paralel-scan(BS=16, BF=2, TD=2))";
    char *err = expect_user_error(ARGS("rewrite", prog, "-s", s), "unknown rule `paralel-scan`");
    ck_assert_has(err, "did you mean `parallel-scan`");
    check_located_error(err, "strategy", 1, 5, s);
    s = "scan-then-propagate(BS=16) ; frist(scan, brent-kung(BF=2, TD=4))";
    err = expect_user_error(ARGS("rewrite", prog, "-s", s), "unknown rule `frist`");
    ck_assert_has(err, "did you mean `first`");
    check_located_error(err, "strategy", 1, 30, s);
    s = "sequental-scan";
    check_located_error(expect_user_error(ARGS("rewrite", prog, "-s", s), "did you mean `sequential-scan`"), "strategy",
                        1, 1, s);
    /* nothing close: no guess, still located */
    s = "id ; qqqqqqqq";
    err = expect_user_error(ARGS("rewrite", prog, "-s", s), "unknown rule `qqqqqqqq`");
    ck_assert_msg(!strstr(err, "did you mean"), "a guess for qqqqqqqq:\n%s", err);
    check_located_error(err, "strategy", 1, 6, s);
    /* an unknown pattern, an unknown parameter */
    s = "first(scna, sequential-scan)";
    check_located_error(expect_user_error(ARGS("rewrite", prog, "-s", s), "`scna` is not a pattern"), "strategy", 1, 7, s);
    s = "parallel-scan(BS=16, BX=2, TD=2)";
    err = expect_user_error(ARGS("rewrite", prog, "-s", s), "no parameter `BX`");
    ck_assert_has(err, "BS, BF, TD, SE");
    check_located_error(err, "strategy", 1, 22, s);
}
END_TEST

START_TEST(rewrite_parameter_out_of_range) {
    const char *prog = example("prefix_sum.strata");
    struct { const char *s; int col; const char *part; } cases[] = {
        {"parallel-scan(BS=16, BF=1, TD=2)", 25, "2 to 1024"},
        {"parallel-scan(BS=0, BF=2, TD=2)", 18, "1 to 1048576"},
        {"parallel-scan(BS=1048577, BF=2, TD=2)", 18, "1 to 1048576"},
        {"parallel-scan(BS=-16, BF=2, TD=2)", 18, "out of range"},
        {"parallel-scan(BS=16, BF=2, TD=63)", 31, "0 to 62"},
        {"try(scan-then-propagate(BS=0))", 28, "out of range"},
        {"parallel-scan(BS=99999999999999999999, BF=2, TD=2)", 18, "too large"},
        {"parallel-scan(BS=16, BF=2, TD=2, SE=4)", 1, "one of them"},
        {"parallel-scan(BS=16, BF=3, TD=1)", 1, "BS % BF"},
        {"parallel-scan(BS=16, BF=2, TD=5)", 1, "TD = 5"},
        {"scan-then-propagate", 1, "needs its parameter BS"},
        {"parallel-scan(BS=16, BS=16, BF=2, TD=2)", 25, "given twice"},
        {"sequential-scan(1)", 17, "no arguments"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *err = expect_user_error(ARGS("rewrite", prog, "-s", cases[i].s), cases[i].part);
        check_located_error(err, "strategy", 1, cases[i].col, cases[i].s);
    }
    ck_assert_has(expect_user_error(ARGS("rewrite", prog, "-s", cases[0].s), "out of range"), "BF = 1");
}
END_TEST

/* iterate's count out of range: located at the count, as a parameter is */
START_TEST(rewrite_iterate_count_located) {
    const char *prog = example("prefix_sum.strata");
    check_located_error(expect_user_error(ARGS("rewrite", prog, "-s", "iterate(-1, id)"), "0 to 1000000"), "strategy", 1, 9,
                        "iterate(-1, id)");
    check_located_error(expect_user_error(ARGS("rewrite", prog, "-s", "id ; iterate(1000001, id)"), "0 to 1000000"),
                        "strategy", 1, 14, "id ; iterate(1000001, id)");
}
END_TEST

START_TEST(rewrite_missing_or_empty_strategy) {
    const char *prog = example("prefix_sum.strata");
    char *err = expect_user_error(ARGS("rewrite", prog), "-s STRATEGY");
    ck_assert_has(err, "strata strategies");
    expect_user_error(ARGS("rewrite", "-s", PS), "PROG");
    expect_user_error(ARGS("rewrite"), "PROG");
    const char *empty[] = {"", "   ", "\t\n "};
    for (int i = 0; i < 3; i++) expect_user_error(ARGS("rewrite", prog, "-s", empty[i]), "empty");
    /* a bad program is reported as such, strategy or not */
    const char *bad = write_text("bad.strata", "def main(xs: [N]f32): [N]f32 =\n  xs |> scan(+, 0)\n");
    check_located_error(expect_user_error(ARGS("rewrite", bad, "-s", PS), NULL), bad, 2, 17, "  xs |> scan(+, 0)");
    expect_user_error(ARGS("rewrite", path_of("none.strata"), "-s", PS), path_of("none.strata"));
}
END_TEST

/* Truncated and malformed strategies: located errors, never a crash. */
START_TEST(rewrite_malformed_strategies) {
    const char *prog = example("prefix_sum.strata");
    static const char *const bad[] = {
        "try(", ")", "(", "id ;", "id <+", "; id", "<+ id", "id id", "scan-then-propagate(BS=16",
        "scan-then-propagate(BS=)", "scan-then-propagate(=16)", "scan-then-propagate(BS 16)", "parallel-scan(,)",
        "first(scan)", "first(, id)", "first(scan, )", "iterate(id)", "iterate(2 id)", "iterate(2, )", "try()",
        "repeat", "topdown(id", "((id)", "(id))", "id;;id", "16", "BS=16", "-", "parallel-scan(BS=16,)",
        "parallel-scan(BS=1-6)", "parallel-scan(BS=0x10)", "parallel-scan(BS=16.0)", "try(id))", "<", "+",
        "scan-then-propagate(BS=16)(BS=16)", "first(scan, first(scan, first(scan, ",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *err = expect_user_error(ARGS("rewrite", prog, "-s", bad[i]), NULL);
        ck_assert_msg(!strncmp(err, "strategy:1:", 11), "`%s`: the error is not located in the strategy:\n%s", bad[i], err);
    }
    /* deep nesting is refused, not recursed into */
    st_buf b = {0};
    for (int i = 0; i < 1000; i++) st_buf_puts(&b, "try(");
    st_buf_puts(&b, "id");
    for (int i = 0; i < 1000; i++) st_buf_puts(&b, ")");
    expect_user_error(ARGS("rewrite", prog, "-s", b.data), "nested too deeply");
    st_buf_free(&b);
}
END_TEST

/* Random bytes (no NUL: they travel in argv) as a strategy. */
START_TEST(rewrite_garbage_strategy) {
    const char *prog = example("prefix_sum.strata");
    uint64_t s = 0x57a7;
    for (int i = 0; i < 60; i++) {
        char bytes[200];
        size_t n = 1 + next(&s) % (sizeof bytes - 1);
        for (size_t k = 0; k < n; k++) {
            bytes[k] = (char)(1 + next(&s) % 255);
        }
        bytes[n] = 0;
        char *out, *err;
        int rc = run(ARGS("rewrite", prog, "-s", bytes), &out, &err);
        ck_assert_msg(rc == 1, "a garbage strategy exited %d:\n%s", rc, err);
        ck_assert_msg(!strncmp(err, "strategy:1:", 11) || strstr(err, "empty"), "not located:\n%s", err);
        ck_assert_msg(out[0] == 0, "a garbage strategy printed:\n%s", out);
    }
    static const char *const fixed[] = {"\xff\xfe", "\x01", "parallel-scan(BS=\xc3\xa9)", "\xe2\x80\x9c" "id" "\xe2\x80\x9d",
                                        "id \x7f", "first(\xff, id)"};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        ck_assert_has(expect_user_error(ARGS("rewrite", prog, "-s", fixed[i]), NULL), "strategy:1:");
}
END_TEST

/* Strategy tokens in random order: each run ends with 0 (and output that
 * checks again) or 1 (with a message), never a crash or an internal error. */
START_TEST(rewrite_strategy_soup) {
    static const char *const tokens[] = {
        "(", ")", ";", "<+", ",", "try(", "repeat(", "topdown(", "bottomup(", "all(", "one(", "first(scan,",
        "each(scan,", "first(map,", "iterate(2,", "id", "fail", "sequential-scan", "pad-scan(BS=16)",
        "scan-then-propagate(BS=16)", "brent-kung-step(BF=2)", "brent-kung(BF=2, TD=2)", PS, "fuse-map-scan",
        "fuse-scan-map", "BS=16", "16", "=", "scan"};
    const char *progs[] = {example("prefix_sum.strata"), example("advanced.strata"), example("filter.strata")};
    uint64_t s = 0x50a9;
    for (int i = 0; i < 60; i++) {
        st_buf b = {0};
        int n = 1 + (int)(next(&s) % 8);
        for (int k = 0; k < n; k++) st_buf_printf(&b, "%s ", tokens[next(&s) % (sizeof tokens / sizeof *tokens)]);
        const char *prog = progs[next(&s) % 3];
        char *out, *err;
        int rc = run(ARGS("rewrite", prog, "-s", b.data), &out, &err);
        ck_assert_msg(rc == 0 || rc == 1, "`%s` on %s exited %d:\n%s", b.data, prog, rc, err);
        if (rc == 0) ck_assert_has(expect_ok(ARGS("check", write_text("soup.strata", out))), "def main(");
        else ck_assert_msg(err[0] && !out[0], "`%s`: exit 1 without a message, or with output", b.data);
        st_buf_free(&b);
    }
}
END_TEST

/* Run $STRATA with a deadline: the exit status, or -1 when it had to be
 * killed after `seconds`. Messages name the run by `what` (the arguments
 * may be too long for one). */
static int run_for(const char *const *args, const char *what, int seconds, char **err) {
    const char *bin = getenv("STRATA");
    ck_assert_msg(bin != NULL, "STRATA is not set (run through meson test)");
    const char *argv[64] = {bin};
    int argc = 1;
    for (const char *const *a = args; *a && argc < 63; a++) argv[argc++] = *a;
    const char *err_path = path_of(".stderr");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid;
    int rc = posix_spawn(&pid, bin, &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    ck_assert_msg(rc == 0, "cannot start %s: %s", bin, strerror(rc));
    int status = 0;
    for (int waited = 0;; waited++) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) break;
        if (waited >= seconds * 10) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            *err = slurp(err_path, NULL);
            return -1;
        }
        nanosleep(&(struct timespec){0, 100000000}, NULL);
    }
    *err = slurp(err_path, NULL);
    ck_assert_msg(!WIFSIGNALED(status), "%s: strata was killed by signal %d\nstderr:\n%.2000s", what,
                  WIFSIGNALED(status) ? WTERMSIG(status) : 0, *err);
    ck_assert_msg(!strstr(*err, "Sanitizer") && !strstr(*err, "runtime error:"), "%s: strata tripped a sanitizer:\n%.3000s",
                  what, *err);
    return WEXITSTATUS(status);
}

/* A long chain of `;` or `<+` is not nested, so it is not refused as too
 * deep; it must still not overflow the stack when applied. */
START_TEST(rewrite_long_strategy_chains) {
    const char *prog = example("prefix_sum.strata");
    const char *sep[] = {";", "<+"};
    const char *unit[] = {"id", "fail"};
    for (int k = 0; k < 2; k++) {
        st_buf b = {0};
        st_buf_puts(&b, unit[k]);
        for (int i = 1; i < 15000; i++) st_buf_printf(&b, "%s%s", sep[k], unit[k]);
        char *err, what[64];
        snprintf(what, sizeof what, "a chain of 15000 `%s`", sep[k]);
        int rc = run_for(ARGS("rewrite", prog, "-s", b.data), what, 60, &err); /* fails the test on a signal */
        ck_assert_msg(rc == 0 || rc == 1, "%s exited %d:\n%.2000s", what, rc, err);
        if (rc == 1) ck_assert_msg(err[0] != 0, "no message");
        st_buf_free(&b);
    }
}
END_TEST

/* DESIGN.md: a repeat of a rule that always applies is stopped and reported
 * instead of hanging. parallel-scan leaves a scan of the block sums behind,
 * so first(scan, parallel-scan) always applies again. */
START_TEST(rewrite_endless_repeat_is_reported) {
    char *err;
    int rc = run_for(ARGS("rewrite", example("prefix_sum.strata"), "-s", "repeat(first(scan, parallel-scan(BS=16, BF=2, TD=2)))"),
                     "repeat(first(scan, parallel-scan(…)))", 30, &err);
    ck_assert_msg(rc != -1, "`repeat(first(scan, parallel-scan(…)))` still ran after 30 s");
    ck_assert_msg(rc == 1, "exited %d:\n%s", rc, err);
}
END_TEST

/* What rewrite prints parses again (the CLI checks it and calls a failure a
 * bug, exit 2): also for a deep result. */
START_TEST(rewrite_deep_result_parses_again) {
    char *out, *err;
    int rc = run(ARGS("rewrite", example("prefix_sum.strata"), "-s", "iterate(150, first(scan, parallel-scan(BS=16, BF=2, TD=2)))"),
                 &out, &err);
    ck_assert_msg(rc == 0 || rc == 1, "exited %d:\n%s", rc, err);
    if (rc == 0) ck_assert_has(expect_ok(ARGS("check", write_text("deep.strata", out))), "def main(");
}
END_TEST

/* ---- the device compiler's noise ---- */

/* A scan of rows: its kernels compare in `if`s, which codegen once wrote
 * `if ((x == 0L))`. PoCL's clang warned about them (-Wparentheses-equality)
 * and printed "14 warnings generated." on strata's standard error. Built
 * afresh (PoCL's kernel cache off), the run says nothing of the kind. */
START_TEST(the_device_compiler_says_nothing_of_a_good_build) {
    const char *program = write_text("rows.strata", "def main(xss: [N][K]i32) =\n"
                                                    "  xss |> scan((a, b) => zip(a, b) |> map((x, y) => x + y), "
                                                    "replicate(K, 0))\n");
    size_t n = 0;
    while (environ[n]) n++;
    char **env = st_arena_alloc(ar, (n + 2) * sizeof *env);
    memcpy(env, environ, n * sizeof *env);
    env[n] = "POCL_KERNEL_CACHE=0";
    env[n + 1] = NULL;
    char *out, *err;
    const char *const *args = ARGS("run", program, "--size", "N=1000", "--size", "K=3", "--results", path_of("none"));
    int rc = strata_spawn(ar, dir, env, args, &out, &err);
    ck_assert_msg(rc == 0, "`%s` exited %d\n%s", describe(args), rc, err);
    ck_assert_msg(!strstr(err, "warning") && !strstr(err, "generated."), "`%s` let the device compiler speak:\n%s",
                  describe(args), err);
}
END_TEST

static TCase *tcase(Suite *s, const char *name) {
    TCase *tc = tcase_create(name);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return tc;
}

int main(void) {
    Suite *s = suite_create("cli");
    TCase *help = tcase(s, "help");
    tcase_add_test(help, no_arguments);
    tcase_add_test(help, top_level_help);
    tcase_add_test(help, version);
    tcase_add_test(help, help_for_a_command);
    tcase_add_test(help, command_help);

    TCase *programs = tcase(s, "programs");
    tcase_add_test(programs, check_every_example);
    tcase_add_test(programs, check_entry);
    tcase_add_test(programs, print_parses_again);
    tcase_add_test(programs, print_keeps_where_clause);
    tcase_add_test(programs, rewrite_id_is_the_identity);
    tcase_add_test(programs, type_error_located);
    tcase_add_test(programs, declared_result_type_error);
    tcase_add_test(programs, syntax_error_located);

    TCase *eval = tcase(s, "eval");
    tcase_add_test(eval, eval_prefix_sum);
    tcase_add_test(eval, eval_advanced_five_results);
    tcase_add_test(eval, eval_histogram_scalar_input);
    tcase_add_test(eval, eval_scalar_result);
    tcase_add_test(eval, eval_tuple_of_array_and_scalar);
    tcase_add_test(eval, eval_two_dimensional_results);
    tcase_add_test(eval, eval_empty_array);
    tcase_add_test(eval, eval_nested_output_dir);
    tcase_add_test(eval, eval_summary_without_output);
    tcase_add_test(eval, eval_generated_inputs);
    tcase_add_test(eval, runtime_error);

    TCase *usage = tcase(s, "usage");
    tcase_add_test(usage, missing_program);
    tcase_add_test(usage, unknown_command);
    tcase_add_test(usage, unknown_option);
    tcase_add_test(usage, option_missing_value);
    tcase_add_test(usage, unexpected_argument);
    tcase_add_test(usage, option_given_twice);

    TCase *robust = tcase(s, "robustness");
    tcase_add_test(robust, garbage_program);
    tcase_add_test(robust, token_soup);
    tcase_add_test(robust, truncated_programs);
    tcase_add_test(robust, empty_program);
    tcase_add_test(robust, program_is_a_directory);
    tcase_add_test(robust, program_missing);
    tcase_add_test(robust, entry_missing);
    tcase_add_test(robust, garbage_npy);
    tcase_add_test(robust, truncated_npy);
    tcase_add_test(robust, empty_npy);
    tcase_add_test(robust, npy_is_a_directory);
    tcase_add_test(robust, npy_missing);
    tcase_add_test(robust, npy_wrong_dtype);
    tcase_add_test(robust, bad_scalar_and_size_values);
    tcase_add_test(robust, output_is_a_file);
    TCase *rewrite = tcase(s, "rewrite");
    tcase_add_test(rewrite, strategies_lists_every_rule);
    tcase_add_test(rewrite, rules_page_is_the_rules_markdown);
    tcase_add_test(rewrite, rewrite_and_strategies_in_help);
    tcase_add_test(rewrite, rewrite_parallel_scan_f32);
    tcase_add_test(rewrite, rewrite_parallel_scan_i32_exact);
    tcase_add_test(rewrite, rewrite_fusions_print_new_forms);
    tcase_add_test(rewrite, rewrite_strategy_option_forms);
    tcase_add_test(rewrite, rewrite_trace);
    tcase_add_test(rewrite, rewrite_does_not_apply);
    tcase_add_test(rewrite, rewrite_unknown_rule);
    tcase_add_test(rewrite, rewrite_parameter_out_of_range);
    tcase_add_test(rewrite, rewrite_iterate_count_located);
    tcase_add_test(rewrite, rewrite_missing_or_empty_strategy);
    tcase_add_test(rewrite, rewrite_malformed_strategies);
    tcase_add_test(rewrite, rewrite_garbage_strategy);
    tcase_add_test(rewrite, rewrite_strategy_soup);
    tcase_add_test(rewrite, rewrite_long_strategy_chains);
    tcase_add_test(rewrite, rewrite_endless_repeat_is_reported);
    tcase_add_test(rewrite, rewrite_deep_result_parses_again);
    TCase *device = tcase(s, "device compiler");
    tcase_add_test(device, the_device_compiler_says_nothing_of_a_good_build);
    scratch_make(root, sizeof root, "cli");
    int rc = run_suite(s);
    scratch_remove(root);
    return rc;
}
