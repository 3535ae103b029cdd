/* tests/test_honest.c — output that does not lie (issue 19, items 12–15):
 *
 *   index    a `get` out of range on the device is an error that names the
 *            index, the length and the expression, as the interpreter's is,
 *            never garbage with exit 0 or a crash; an index in range still
 *            reads; the indices rules make (iota's elements, max(i - 1, 0))
 *            go unchecked
 *   stdout   a command whose standard output cannot be written (/dev/full)
 *            fails and says why
 *   caller   the exported strata_run, compiled with the system C compiler
 *            and called with each bad argument, refuses each with its code
 *            and a sentence (tests/strata_run_caller.c)
 *   nesting  300 nested additions, fused maps or chained ifs build and
 *            run; blocks that cannot be flattened, 300 deep, are refused
 *            before the device's compiler, with the limit
 */
#include "harness.h"
#include "run_strata.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

static cli c;

static void setup(void) { cli_open(&c, "honest"); }
static void teardown(void) { cli_close(&c); }

/* a .npy file in c's folder */
static const char *npy(const char *name, st_scalar_kind k, int64_t n, const void *data) {
    const char *path = arena_text(c.a, "%s/%s.npy", c.dir, name);
    st_value v = array_of(k, n, (void *)data, c.a);
    st_err err = {0};
    ck_assert_msg(st_npy_write(path, &v, &err), "%s", err.message);
    return path;
}

/* ---- index ---- */

#define ONE_GET "def main(xs: [N]f32, k: i64): f32 =\n  xs |> get(k)\n"
#define MANY_GETS "def main(xs: [N]f32, ks: [M]i64): [M]f32 =\n  ks |> map(k => xs |> get(k))\n"

START_TEST(out_of_range_get_is_an_error) {
    const float xs[] = {10, 20, 30};
    const char *prog = cli_file(&c, "get", ONE_GET), *in = arena_text(c.a, "xs=%s", npy("xs", ST_F32, 3, xs));
    static const char *const ks[] = {"1000000", "-1000000", "3", "-1"};
    for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) {
        char *out, *err;
        int rc = cli_strata(&c, ARGS("run", prog, "--input", in, "--input", arena_text(c.a, "k=%s", ks[i])), &out, &err);
        ck_assert_msg(rc == 1, "k = %s: exit %d\n%s%s", ks[i], rc, out, err);
        ck_assert_has(err, arena_text(c.a, "index %s out of range for an array of length 3", ks[i]));
        ck_assert_has(err, "in `xs |> get(k)` (in def main)");
    }
}
END_TEST

START_TEST(in_range_get_reads) {
    const float xs[] = {10, 20, 30};
    const char *prog = cli_file(&c, "get", ONE_GET), *in = arena_text(c.a, "xs=%s", npy("xs", ST_F32, 3, xs));
    for (int k = 0; k < 3; k++) {
        const char *dir = arena_text(c.a, "%s/out%d", c.dir, k);
        char *out, *err;
        int rc = cli_strata(&c, ARGS("run", prog, "--input", in, "--input", arena_text(c.a, "k=%d", k), "--output", dir,
                                     "--check"),
                            &out, &err);
        ck_assert_msg(rc == 0, "k = %d: exit %d\n%s", k, rc, err);
        st_value r = npy_read_ok(c.a, arena_text(c.a, "%s/0.npy", dir));
        ck_assert_msg(r.kind == ST_VALUE_SCALAR && r.u.s.f32 == xs[k], "k = %d: not xs[k]", k);
    }
}
END_TEST

/* In a parallel kernel: one bad index among good ones is the one reported. */
START_TEST(out_of_range_in_a_parallel_map) {
    const float xs[] = {10, 20, 30};
    const int64_t good[] = {2, 0, 1, 1}, bad[] = {2, 0, 7, 1};
    const char *prog = cli_file(&c, "gets", MANY_GETS), *in = arena_text(c.a, "xs=%s", npy("xs", ST_F32, 3, xs));
    char *out, *err;
    int rc = cli_strata(&c, ARGS("run", prog, "--input", in, "--input", arena_text(c.a, "ks=%s", npy("good", ST_I64, 4, good)),
                                 "--check"),
                        &out, &err);
    ck_assert_msg(rc == 0, "exit %d\n%s", rc, err);
    rc = cli_strata(&c, ARGS("run", prog, "--input", in, "--input", arena_text(c.a, "ks=%s", npy("bad", ST_I64, 4, bad))),
                    &out, &err);
    ck_assert_msg(rc == 1, "exit %d\n%s%s", rc, out, err);
    ck_assert_has(err, "index 7 out of range for an array of length 3 in `xs |> get(k)`");
}
END_TEST

/* What rules build reads through indices known to be in range: the kernels
 * of a parallel scan carry no check; the program's own get carries one. */
START_TEST(indices_rules_make_go_unchecked) {
    const char *dir = arena_text(c.a, "%s/scan", c.dir);
    char *out, *err;
    int rc = cli_strata(&c, ARGS("run", cli_example(&c, "prefix_sum"), "-s", "first(scan, parallel-scan(BS=16, BF=2, SE=4))",
                                 "--size", "N=1000", "--check", "--emit", dir),
                        &out, &err);
    ck_assert_msg(rc == 0, "exit %d\n%s", rc, err);
    const char *kernels = slurp_file(c.a, arena_text(c.a, "%s/kernels.cl", dir), NULL);
    const char *check = strstr(kernels, "st_fault(");
    ck_assert_msg(!check, "a rule's index is checked:\n%.600s", check ? check : "");
    dir = arena_text(c.a, "%s/get", c.dir);
    rc = cli_strata(&c, ARGS("run", cli_file(&c, "get", ONE_GET), "--size", "N=3", "--input", "k=1", "--emit", dir), &out, &err);
    ck_assert_msg(rc == 0, "exit %d\n%s", rc, err);
    ck_assert_msg(strstr(slurp_file(c.a, arena_text(c.a, "%s/kernels.cl", dir), NULL), "st_fault("),
                  "the program's own get is not checked");
    /* a product's range is the factor's times the constant: i * 2 can leave an array of N (an error when
       it runs), and an i32 product can wrap where its bound would not */
    const char *twice = "def main(xs: [N]f32): [N]f32 =\n  iota(N) |> map(i => xs |> get(i * 2))\n";
    rc = cli_strata(&c, ARGS("run", cli_file(&c, "twice", twice), "--size", "N=10"), &out, &err);
    ck_assert_msg(rc == 1, "exit %d\n%s%s", rc, out, err);
    ck_assert_has(err, "index 10 out of range for an array of length 10");
    /* a let is read in one branch only, but the interpreter reads it first: a checked read stays where the
       let is (cg_thread.c's let_value), and its fault is reported although the branch never runs there */
    const char *unread = "def main(xs: [N]f32): [N]f32 =\n"
                         "  iota(N) |> map(i => let x = xs |> get(i * 2) in if i < N / 2 then x else 0.0)\n";
    rc = cli_strata(&c, ARGS("run", cli_file(&c, "unread", unread), "--size", "N=10"), &out, &err);
    ck_assert_msg(rc == 1, "exit %d\n%s%s", rc, out, err);
    ck_assert_has(err, "index 10 out of range for an array of length 10");
    const char *wraps = "def main(xs: [N]f32): [N]f32 =\n  iota(N) |> map(i => xs |> get(i32(i % 2) * 1073741824 * 4))\n";
    dir = arena_text(c.a, "%s/wraps", c.dir);
    rc = cli_strata(&c, ARGS("run", cli_file(&c, "wraps", wraps), "--size", "N=10", "--emit", dir), &out, &err);
    ck_assert_msg(strstr(slurp_file(c.a, arena_text(c.a, "%s/kernels.cl", dir), NULL), "st_fault("),
                  "an i32 product that may wrap is not checked");
}
END_TEST

/* ---- stdout ---- */

/* strata args with its standard output on /dev/full: its exit status, *err its stderr */
static int to_full_disk(const char *const *args, char **err) {
    const char *argv[16] = {env_path("STRATA")};
    int argc = 1;
    for (const char *const *a = args; *a; a++) argv[argc++] = *a;
    const char *err_path = arena_text(c.a, "%s/.stderr", c.dir);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/full", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid;
    ck_assert(posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ) == 0);
    posix_spawn_file_actions_destroy(&fa);
    int status;
    ck_assert(waitpid(pid, &status, 0) == pid);
    *err = slurp_file(c.a, err_path, NULL);
    ck_assert_msg(WIFEXITED(status), "strata %s was killed\n%s", args[0], *err);
    return WEXITSTATUS(status);
}

START_TEST(full_disk_is_an_error) {
    if (access("/dev/full", W_OK) != 0) return; /* not Linux: nothing to write to */
    const char *prog = cli_example(&c, "prefix_sum");
    const char *const *commands[] = {
        ARGS("eval", prog, "--size", "N=8"),
        ARGS("print", prog),
        ARGS("rewrite", prog, "-s", "first(scan, parallel-scan(BS=4, BF=2, SE=2))"),
        ARGS("strategies"),
        ARGS("check", prog),
        ARGS("--help"),
    };
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
        char *err;
        int rc = to_full_disk(commands[i], &err);
        ck_assert_msg(rc == 1, "strata %s > /dev/full: exit %d\n%s", commands[i][0], rc, err);
        ck_assert_has(err, "strata: error: writing standard output: No space left on device");
    }
}
END_TEST

/* ---- caller ---- */

static const char *find_cc(void) {
    const char *cc = getenv("STRATA_CC");
    if (cc && access(cc, X_OK) == 0) return cc;
    return access("/usr/bin/cc", X_OK) == 0 ? "/usr/bin/cc" : NULL;
}

START_TEST(exported_strata_run_refuses_bad_arguments) {
    const char *cc = find_cc();
    ck_assert_msg(cc != NULL, "no C compiler (STRATA_CC)");
    const char *dir = arena_text(c.a, "%s/emitted", c.dir);
    char *out, *err;
    const char *prog = cli_file(&c, "plus_one", "def main(xs: [N]f32): [N]f32 =\n  xs |> map(x => x + 1.0)\n");
    int rc = cli_strata(&c, ARGS("run", prog, "--size", "N=3", "--emit", dir), &out, &err);
    ck_assert_msg(rc == 0, "exit %d\n%s", rc, err);
    const char *host = slurp_file(c.a, arena_text(c.a, "%s/host.c", dir), NULL);
    ck_assert_msg(strstr(host, "It checks what it is given"), "host.c's header has no contract for strata_run");
    /* the caller, with the sanitizers in a sanitizer build, and the glue built
     * as a user builds it: warnings are errors */
    const char *caller = arena_text(c.a, "%s/caller", c.dir);
#if defined(__SANITIZE_ADDRESS__)
    const char *sanitize = "-fsanitize=address,undefined -fno-sanitize-recover=undefined";
#else
    const char *sanitize = "";
#endif
    const char *log = arena_text(c.a, "%s/cc.log", c.dir);
    int status = system(arena_text(c.a, "'%s' -std=c17 -Wall -Wextra -Werror -g %s '%s/host.c' '%s/strata_run_caller.c' -o '%s' "
                                        "-lOpenCL > '%s' 2>&1",
                                   cc, sanitize, dir, env_path("STRATA_TESTS"), caller, log));
    ck_assert_msg(status == 0, "cannot build the caller:\n%s", slurp_file(c.a, log, NULL));
    /* PoCL's own allocations outlive the caller: leaks are not what this
     * checks (the rest of the environment PoCL needs: PATH for its linker) */
    size_t nenv = 0;
    while (environ[nenv]) nenv++;
    char **env = st_arena_alloc(c.a, (nenv + 2) * sizeof *env);
    size_t k = 0;
    for (size_t i = 0; i < nenv; i++)
        if (strncmp(environ[i], "ASAN_OPTIONS=", 13)) env[k++] = environ[i];
    env[k++] = "ASAN_OPTIONS=detect_leaks=0";
    env[k] = NULL;
    rc = program_spawn(c.a, c.dir, env, caller, ARGS(arena_text(c.a, "%s/kernels.cl", dir)), &out, &err);
    ck_assert_msg(rc == 0, "exit %d\n%s%s", rc, out, err);
    ck_assert_int_eq(count_of(out, "ok  "), 17);
}
END_TEST

/* ---- nesting ---- */

/* def main(xs: [N]f32): [N]f32 = xs |> map(x => BODY) with BODY n deep */
static const char *deep(const char *open, const char *middle, const char *close, int n) {
    st_buf b = {0};
    st_buf_puts(&b, "def main(xs: [N]f32): [N]f32 =\n  xs |> map(x => ");
    for (int i = 0; i < n; i++) st_buf_printf(&b, open, i, i);
    st_buf_puts(&b, middle);
    for (int i = 0; i < n; i++) st_buf_puts(&b, close);
    st_buf_puts(&b, ")\n");
    const char *s = arena_text(c.a, "%s", b.data);
    st_buf_free(&b);
    return s;
}

START_TEST(deep_expressions_build) {
    st_buf maps = {0};
    st_buf_puts(&maps, "def main(xs: [N]f32): [N]f32 =\n  xs");
    for (int i = 0; i < 300; i++) st_buf_puts(&maps, " |> map(x => x + 1.0)");
    st_buf_puts(&maps, "\n");
    st_buf thens = {0};
    st_buf_puts(&thens, "def main(xs: [N]f32): [N]f32 =\n  xs |> map(x => ");
    for (int i = 0; i < 300; i++) st_buf_printf(&thens, "if x > %d.0 then ", i / 10 - 15);
    st_buf_puts(&thens, "x");
    for (int i = 0; i < 300; i++) st_buf_printf(&thens, " else %d.0", i);
    st_buf_puts(&thens, ")\n");
    const char *sources[] = {
        deep("(", "x", " + 1.0)", 300),                       /* 300 additions */
        arena_text(c.a, "%s", maps.data),                      /* 300 maps, fused into one */
        deep("if x < %d.0 then %d.0 else ", "x", "", 300),    /* an else-if chain of 300 */
        arena_text(c.a, "%s", thens.data),                     /* 300 ifs down the then-branches */
    };
    st_buf_free(&maps);
    st_buf_free(&thens);
    for (size_t i = 0; i < sizeof sources / sizeof *sources; i++) {
        char *out, *err;
        int rc = cli_strata(&c, ARGS("run", cli_file(&c, arena_text(c.a, "deep%zu", i), sources[i]), "--size", "N=64",
                                     "--check"),
                            &out, &err);
        ck_assert_msg(rc == 0, "program %zu: exit %d\n%s", i, rc, err);
        ck_assert_has(err, "check: the results equal the interpreter's");
    }
}
END_TEST

/* Blocks in blocks that cannot be flattened (ifs of arrays, 300 deep, in a
 * work-group) are refused before the device's compiler, with the limit. */
START_TEST(deep_blocks_are_refused_with_the_limit) {
    st_buf b = {0};
    st_buf_puts(&b, "def main(xss: [M][N]f32, k: i64): [M][N]f32 =\n  xss |> map(row => ");
    for (int i = 0; i < 300; i++) st_buf_printf(&b, "if k < %d then row |> map(x => x + %d.0) else ", i, i);
    st_buf_puts(&b, "row)\n");
    const char *prog = cli_file(&c, "ifs", arena_text(c.a, "%s", b.data));
    st_buf_free(&b);
    char *out, *err;
    int rc = cli_strata(&c, ARGS("run", prog, "--size", "N=4", "--size", "M=2", "--input", "k=1"), &out, &err);
    ck_assert_msg(rc == 1, "exit %d\n%s", rc, err);
    ck_assert_has(err, "ifs.strata:1:5: error: cannot generate OpenCL for `main`");
    ck_assert_has(err, "deep; OpenCL C compilers accept 256");
    ck_assert_msg(!strstr(err, "bracket nesting level exceeded"), "the device's compiler was reached:\n%s", err);
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
    Suite *s = suite_create("honest");
    TCase *index = tcase(s, "index");
    tcase_add_test(index, out_of_range_get_is_an_error);
    tcase_add_test(index, in_range_get_reads);
    tcase_add_test(index, out_of_range_in_a_parallel_map);
    tcase_add_test(index, indices_rules_make_go_unchecked);
    tcase_add_test(tcase(s, "stdout"), full_disk_is_an_error);
    tcase_add_test(tcase(s, "caller"), exported_strata_run_refuses_bad_arguments);
    TCase *nesting = tcase(s, "nesting");
    tcase_add_test(nesting, deep_expressions_build);
    tcase_add_test(nesting, deep_blocks_are_refused_with_the_limit);
    return run_suite(s);
}
