/* tests/test_honest.c — output that does not lie (issue 19, items 12–15):
 *
 *   index    a `get` out of range on the device is an error that names the
 *            index, the length and the expression, as the interpreter's is,
 *            never garbage with exit 0 or a crash; an index in range still
 *            reads; the indices rules make (iota's elements, max(i - 1, 0))
 *            go unchecked
 *   views    (issue 46) a get through a view (a slice, an array literal,
 *            iota, replicate, zip, join, a split's row) is checked against
 *            the view's own length, at the user's line and column; one that
 *            cannot leave it is not checked
 *   sizes    (issue 46) a size the glue or a kernel computes that overflows
 *            64 bits (k · k at k = 2^32), a buffer whose bytes do (8 · k · k
 *            at k = 2^31), and one larger than the device allocates, are
 *            refused with a sentence, the values and the place, exit 1,
 *            before anything is allocated (the result's too, which the
 *            runtime allocates, at the def): never a buffer of the wrapped
 *            size that a kernel writes past; at the edges of 64 bits the
 *            checks (compiled by libtcc) are exact
 *   division (issue 46) an integer divided by zero on the device (/ and %,
 *            an operator passed as a function) is an error at the
 *            division's line and column; MIN / -1 wraps and MIN % -1 is 0,
 *            as in the interpreter; a && b and a || b check b only where a
 *            does not decide; a divisor known to be nonzero is not checked
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

/* ---- views ---- */

/* strata run PROG ARGS…: exit 1, and stderr has the place (PROG:LINE:COL, or a prefix of it) and the message */
static void fails_at(const char *prog, const char *const *args, const char *place, const char *message) {
    const char *argv[16] = {"run", prog};
    int n = 2;
    for (; *args; args++) argv[n++] = *args;
    argv[n] = NULL;
    char *out, *err;
    int rc = cli_strata(&c, argv, &out, &err);
    ck_assert_msg(rc == 1, "%s: exit %d\n%s%s", strata_command_line(c.a, argv), rc, out, err);
    ck_assert_has(err, arena_text(c.a, "%s:%s", prog, place));
    ck_assert_has(err, "error: running on ");
    ck_assert_has(err, message);
}

/* strata run PROG ARGS… --check: exit 0 */
static void agrees(const char *prog, const char *const *args) {
    const char *argv[16] = {"run", prog};
    int n = 2;
    for (; *args; args++) argv[n++] = *args;
    argv[n++] = "--check";
    argv[n] = NULL;
    char *out, *err;
    int rc = cli_strata(&c, argv, &out, &err);
    ck_assert_msg(rc == 0, "%s: exit %d\n%s%s", strata_command_line(c.a, argv), rc, out, err);
    ck_assert_has(err, "check: the results equal the interpreter's");
}

/* The slice: indices 2, 3, -1 and -2 read past the view into xs;
 * the view's own length, 2, is what they are checked against. */
START_TEST(slice_read_is_checked_against_the_slice) {
    const int64_t xs[] = {100, 101, 102, 103, 104, 105, 106, 107, 108, 109}, bad[] = {0, 1, 2, 3, -1, -2}, good[] = {1, 0};
    const char *prog = cli_file(&c, "slice", "def main(xs: [N]i64, is: [M]i64): [M]i64 =\n"
                                             "  let s = xs[2:4] in map(i => s[i], is)\n");
    const char *in = arena_text(c.a, "xs=%s", npy("xs", ST_I64, 10, xs));
    fails_at(prog, ARGS("--input", in, "--input", arena_text(c.a, "is=%s", npy("bad", ST_I64, 6, bad))), "2:32:",
             "index 2 out of range for an array of length 2");
    agrees(prog, ARGS("--input", in, "--input", arena_text(c.a, "is=%s", npy("good", ST_I64, 2, good))));
}
END_TEST

/* An array literal, iota and replicate indexed out of their lengths: errors at the index; in range, read. */
START_TEST(literal_iota_replicate_are_checked) {
    const char *lit = cli_file(&c, "lit", "def main(k: i64): i32 =\n  [10, 20, 30][k]\n");
    fails_at(lit, ARGS("--input", "k=-1"), "2:15:", "index -1 out of range for an array of length 3");
    fails_at(lit, ARGS("--input", "k=3"), "2:15:", "index 3 out of range for an array of length 3");
    agrees(lit, ARGS("--input", "k=1"));
    const char *iota = cli_file(&c, "iota", "def main(k: i64): i64 =\n  iota(5)[k]\n");
    fails_at(iota, ARGS("--input", "k=7"), "2:10:", "index 7 out of range for an array of length 5");
    agrees(iota, ARGS("--input", "k=4"));
    const char *rep = cli_file(&c, "rep", "def main(k: i64): i32 =\n  replicate(5, 7)[k]\n");
    fails_at(rep, ARGS("--input", "k=7"), "2:18:", "index 7 out of range for an array of length 5");
    agrees(rep, ARGS("--input", "k=0"));
    /* a map whose function reads no element still reads its array's length */
    const char *ignoring = cli_file(&c, "ignoring", "def main(k: i64): i32 =\n  map(x => 5, iota(3))[k]\n");
    fails_at(ignoring, ARGS("--input", "k=3"), "2:23:", "index 3 out of range for an array of length 3");
}
END_TEST

/* zip, join and a split's row: each against its own length, not the longer array behind it. */
START_TEST(zip_join_split_are_checked) {
    const char *zip = cli_file(&c, "zip", "def main(k: i64): (i64, i32) =\n  zip(iota(3), replicate(3, 1))[k]\n");
    fails_at(zip, ARGS("--input", "k=3"), "2:32:", "index 3 out of range for an array of length 3");
    agrees(zip, ARGS("--input", "k=2"));
    const char *join = cli_file(&c, "join", "def main(k: i64): i64 =\n"
                                            "  join(map(i => map(j => i * 10 + j, iota(3)), iota(2)))[k]\n");
    fails_at(join, ARGS("--input", "k=6"), "2:57:", "index 6 out of range for an array of length 6");
    fails_at(join, ARGS("--input", "k=-3"), "2:57:", "index -3 out of range for an array of length 6");
    agrees(join, ARGS("--input", "k=5"));
    /* element 2 of row 0 of a split by 2 is in the array (at 2), not in the row */
    const char *split = cli_file(&c, "split", "def main(r: i64, c: i64): i64 =\n  split(2, iota(6))[r][c]\n");
    fails_at(split, ARGS("--input", "r=0", "--input", "c=2"), "2:23:", "index 2 out of range for an array of length 2");
    fails_at(split, ARGS("--input", "r=3", "--input", "c=0"), "2:23:", "index 3 out of range for an array of length 3");
    agrees(split, ARGS("--input", "r=2", "--input", "c=1"));
}
END_TEST

/* What cannot leave its view is not checked: a literal read at i % 3, a
 * slice read at an element of iota of its own length. */
START_TEST(views_in_range_go_unchecked) {
    const char *prog = cli_file(&c, "unchecked", "def main(xs: [N]i32): [N]i32 =\n"
                                                  "  iota(N) |> map(i => [10, 20, 30][i % 3] + (xs |> get(i)))\n");
    const char *dir = arena_text(c.a, "%s/unchecked", c.dir);
    char *out, *err;
    int rc = cli_strata(&c, ARGS("run", prog, "--size", "N=100", "--check", "--emit", dir), &out, &err);
    ck_assert_msg(rc == 0, "exit %d\n%s", rc, err);
    const char *kernels = slurp_file(c.a, arena_text(c.a, "%s/kernels.cl", dir), NULL);
    const char *check = strstr(kernels, "st_fault(");
    ck_assert_msg(!check, "an index in range is checked:\n%.600s", check ? check : "");
}
END_TEST

/* ---- division ---- */

#define DIVIDE(OP) "def main(xs: [N]i32, ys: [N]i32): [N]i32 =\n  map2((x, y) => x " OP " y, xs, ys)\n"

START_TEST(division_by_zero_is_an_error) {
    const int32_t xs[] = {7, 8, 9, 10}, zero[] = {1, 2, 0, 3}, nonzero[] = {1, 2, 5, -3};
    const char *in = arena_text(c.a, "xs=%s", npy("xs", ST_I32, 4, xs));
    const char *with_zero = arena_text(c.a, "ys=%s", npy("zero", ST_I32, 4, zero));
    const char *without = arena_text(c.a, "ys=%s", npy("nonzero", ST_I32, 4, nonzero));
    const char *div = cli_file(&c, "div", DIVIDE("/")), *mod = cli_file(&c, "mod", DIVIDE("%"));
    fails_at(div, ARGS("--input", in, "--input", with_zero), "2:20:", "division by zero in `x / y` (in def main)");
    fails_at(mod, ARGS("--input", in, "--input", with_zero), "2:20:", "division by zero in `x % y` (in def main)");
    agrees(div, ARGS("--input", in, "--input", without));
    agrees(mod, ARGS("--input", in, "--input", without));
    /* an operator passed as a function */
    const char *reduce = cli_file(&c, "reduce", "def main(ys: [N]i32): i32 =\n  reduce(/, 1000, ys)\n");
    fails_at(reduce, ARGS("--input", with_zero), "2:3:", "division by zero in");
    /* unsigned and 8-bit divisions, in one work-item */
    const char *u8 = cli_file(&c, "u8", "def main(x: u8, y: u8): u8 =\n  x / y\n");
    fails_at(u8, ARGS("--input", "x=5", "--input", "y=0"), "2:5:", "division by zero in `x / y`");
}
END_TEST

/* MIN / -1 overflows, undefined in C: the interpreter wraps it (MIN) and
 * MIN % -1 is 0; the device does the same, for each width. */
START_TEST(min_over_minus_one_wraps) {
    const int32_t mins[] = {INT32_MIN, INT32_MIN, 7}, minus[] = {-1, -1, -1};
    const int64_t lmins[] = {INT64_MIN, 5}, lminus[] = {-1, -1};
    const char *in = arena_text(c.a, "xs=%s", npy("mins", ST_I32, 3, mins));
    const char *ys = arena_text(c.a, "ys=%s", npy("minus", ST_I32, 3, minus));
    for (int op = 0; op < 2; op++) {
        const char *prog = cli_file(&c, op ? "mod" : "div", op ? DIVIDE("%") : DIVIDE("/"));
        const char *dir = arena_text(c.a, "%s/min%d", c.dir, op);
        char *out, *err;
        int rc = cli_strata(&c, ARGS("run", prog, "--input", in, "--input", ys, "--check", "--output", dir), &out, &err);
        ck_assert_msg(rc == 0, "exit %d\n%s", rc, err);
        st_value r = npy_read_ok(c.a, arena_text(c.a, "%s/0.npy", dir));
        const int32_t *got = r.u.a.data;
        ck_assert_int_eq(got[0], op ? 0 : INT32_MIN);
        ck_assert_int_eq(got[2], op ? 0 : -7);
    }
    const char *wide = cli_file(&c, "wide", "def main(xs: [N]i64, ys: [N]i64): [N]i64 =\n"
                                            "  map2((x, y) => x / y + x % y, xs, ys)\n");
    agrees(wide, ARGS("--input", arena_text(c.a, "xs=%s", npy("lmins", ST_I64, 2, lmins)), "--input",
                      arena_text(c.a, "ys=%s", npy("lminus", ST_I64, 2, lminus))));
    const char *narrow = cli_file(&c, "narrow", "def main(x: i8, y: i8): (i8, i8) =\n  (x / y, x % y)\n");
    agrees(narrow, ARGS("--input", "x=-128", "--input", "y=-1"));
}
END_TEST

/* `y != 0 && x / y > 1` divides only where y is not 0, as the interpreter
 * does; so does an if; a divisor known to be nonzero (a literal, i + 1 of
 * an index) is not checked. */
START_TEST(division_guarded_or_known_nonzero) {
    const int32_t xs[] = {7, 8, 9, 10}, zero[] = {1, 2, 0, 3};
    const char *in = arena_text(c.a, "xs=%s", npy("xs", ST_I32, 4, xs));
    const char *ys = arena_text(c.a, "ys=%s", npy("zero", ST_I32, 4, zero));
    const char *both = cli_file(&c, "both", "def main(xs: [N]i32, ys: [N]i32): [N]bool =\n"
                                          "  map2((x, y) => y != 0 && x / y > 1, xs, ys)\n");
    const char *either = cli_file(&c, "either", "def main(xs: [N]i32, ys: [N]i32): [N]bool =\n"
                                        "  map2((x, y) => y == 0 || x % y == 1, xs, ys)\n");
    const char *branch = cli_file(&c, "branch", "def main(xs: [N]i32, ys: [N]i32): [N]i32 =\n"
                                                "  map2((x, y) => if y == 0 then 0 else x / y, xs, ys)\n");
    agrees(both, ARGS("--input", in, "--input", ys));
    agrees(either, ARGS("--input", in, "--input", ys));
    agrees(branch, ARGS("--input", in, "--input", ys));
    const char *known = cli_file(&c, "known", "def main(xs: [N]i32): [N]i64 =\n"
                                              "  iota(N) |> map(i => i64(xs[i] / 2) + i64(xs[i] % -3) + i64(xs[i]) / (i + 1))\n");
    const char *dir = arena_text(c.a, "%s/known", c.dir);
    char *out, *err;
    int rc = cli_strata(&c, ARGS("run", known, "--input", in, "--check", "--emit", dir), &out, &err);
    ck_assert_msg(rc == 0, "exit %d\n%s", rc, err);
    const char *kernels = slurp_file(c.a, arena_text(c.a, "%s/kernels.cl", dir), NULL);
    const char *check = strstr(kernels, "st_fault(");
    ck_assert_msg(!check, "a divisor known to be nonzero is checked:\n%.600s", check ? check : "");
}
END_TEST

/* ---- sizes ---- */

#define SQUARES "def main(k: i64): i64 =\n" \
                "  let m = map(i => map(j => i * j, iota(k)), iota(k)) in reduce(+, 0i64, join(m))\n"

START_TEST(sizes_that_overflow_are_refused) {
    const char *prog = cli_file(&c, "squares", SQUARES);
    /* the issue's: 8 · k · k bytes wrapped to 1, and the kernel wrote past them */
    fails_at(prog, ARGS("--input", "k=2147483648", "-s", "lower-opencl"), "2:3:",
             "4611686018427387904 elements of 8 bytes overflow 64 bits (STRATA_SIZE_OVERFLOW)");
    /* k · k itself wraps (to 0), under the default strategy */
    fails_at(prog, ARGS("--input", "k=4294967296"), "2:",
             "overflows 64 bits at k = 4294967296 (STRATA_SIZE_OVERFLOW)");
    /* at the edge: 3037000500² is past 2^63 - 1, 3037000499² is not (but its 8 bytes each are) */
    fails_at(prog, ARGS("--input", "k=3037000500", "-s", "lower-opencl"), "2:",
             "the size k * k in `main` overflows 64 bits at k = 3037000500 (STRATA_SIZE_OVERFLOW)");
    fails_at(prog, ARGS("--input", "k=3037000499", "-s", "lower-opencl"), "2:3:",
             "9223372030926249001 elements of 8 bytes overflow 64 bits");
    /* 2 PiB: more than any device allocates in one buffer */
    fails_at(prog, ARGS("--input", "k=16777216", "-s", "lower-opencl"), "2:3:", "(CL_DEVICE_MAX_MEM_ALLOC_SIZE)");
    agrees(prog, ARGS("--input", "k=100", "-s", "lower-opencl"));
    /* the same of the result, which the runtime allocates: refused at the def */
    const char *result = cli_file(&c, "result", "def main(k: i64): [k][k]i64 =\n"
                                                "  map(i => map(j => i * j, iota(k)), iota(k))\n");
    static const struct {
        const char *k, *message;
    } results[] = {{"k=4294967296", "an array of length k*k: size arithmetic overflows 64 bits"},
                   {"k=2147483648", "an array of k*k = 4611686018427387904 i64 is too large for a buffer"},
                   {"k=16777216", "in one buffer (CL_DEVICE_MAX_MEM_ALLOC_SIZE)"}};
    for (size_t i = 0; i < sizeof results / sizeof *results; i++) {
        char *out, *err;
        int rc = cli_strata(&c, ARGS("run", result, "--input", results[i].k), &out, &err);
        ck_assert_msg(rc == 1, "%s: exit %d\n%s", results[i].k, rc, err);
        ck_assert_has(err, arena_text(c.a, "%s:1:5: error: ", result));
        ck_assert_has(err, results[i].message);
    }
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
    TCase *views = tcase(s, "views");
    tcase_add_test(views, slice_read_is_checked_against_the_slice);
    tcase_add_test(views, literal_iota_replicate_are_checked);
    tcase_add_test(views, zip_join_split_are_checked);
    tcase_add_test(views, views_in_range_go_unchecked);
    tcase_add_test(tcase(s, "sizes"), sizes_that_overflow_are_refused);
    TCase *division = tcase(s, "division");
    tcase_add_test(division, division_by_zero_is_an_error);
    tcase_add_test(division, min_over_minus_one_wraps);
    tcase_add_test(division, division_guarded_or_known_nonzero);
    tcase_add_test(tcase(s, "stdout"), full_disk_is_an_error);
    tcase_add_test(tcase(s, "caller"), exported_strata_run_refuses_bad_arguments);
    TCase *nesting = tcase(s, "nesting");
    tcase_add_test(nesting, deep_expressions_build);
    tcase_add_test(nesting, deep_blocks_are_refused_with_the_limit);
    return run_suite(s);
}
