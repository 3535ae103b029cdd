/* tests/test_inputs.c — binding NAME=VALUE inputs to a def's parameters:
 * scalars from text, arrays from .npy files, sizes read off lengths and
 * checked against each other and the where clause, generated arrays, and
 * the messages a user sees when any of that goes wrong. */
#include "harness.h"

#include <dirent.h>
#include <stdio.h>
#include <unistd.h>

/* ---- fixture: a context, an arena and a scratch folder per test ---- */

/* The .npy files of all tests go to one folder that main removes at the
 * end, so that a failed test (whose checked teardown never runs) leaves
 * nothing behind; names are unique within a test, and tests run in turn. */
static st_ctx *cx;
static st_arena *ar;
static char dir[64];
static char written[32][256]; /* the files this test wrote */
static int nwritten;

static void setup(void) {
    cx = st_ctx_new();
    ar = st_arena_new();
    ck_assert(cx && ar);
    nwritten = 0;
}

static void teardown(void) {
    for (int i = 0; i < nwritten; i++) unlink(written[i]);
    st_arena_free(ar);
    st_ctx_free(cx);
}

/* ---- helpers ---- */

/* The entry def of src (main, or the only def). */
static const st_def *def_of(const char *src) {
    st_err err = {0};
    const st_def *d = st_program_entry(parse_ok(cx, src), NULL, &err);
    ck_assert_msg(d != NULL, "%s", err.message);
    return d;
}

static st_inputs *inputs_for(const char *src) {
    st_inputs *in = st_inputs_new(cx, def_of(src), ar);
    ck_assert(in != NULL);
    return in;
}

/* Write an array of `rank` dimensions to name.npy in the scratch folder;
 * returns its path (valid until teardown). */
static const char *write_npy(const char *name, st_scalar_kind k, uint32_t rank, const int64_t *dims,
                             const void *data) {
    ck_assert_int_lt(nwritten, 32);
    char *path = written[nwritten++];
    snprintf(path, sizeof written[0], "%s/%s.npy", dir, name);
    st_value v = {.kind = ST_VALUE_ARRAY, .scalar = k, .n = rank};
    v.u.a.dims = dims;
    v.u.a.data = (void *)data;
    st_err err = {0};
    ck_assert_msg(st_npy_write(path, &v, &err), "%s", err.message);
    return path;
}

static const char *write_1d(const char *name, st_scalar_kind k, int64_t n, const void *data) {
    int64_t *dims = st_arena_alloc(ar, sizeof *dims);
    dims[0] = n;
    return write_npy(name, k, 1, dims, data);
}

/* "name=value" in the arena, for st_inputs_set. */
static const char *pair(const char *name, const char *value) {
    size_t n = strlen(name) + strlen(value) + 2;
    char *s = st_arena_alloc(ar, n);
    snprintf(s, n, "%s=%s", name, value);
    return s;
}

static void set_ok(st_inputs *in, const char *text) {
    st_err err = {0};
    ck_assert_msg(st_inputs_set(in, text, &err), "set %s: %s", text, err.message);
}

/* Setting fails with a user error (never an internal one); returns it. */
static st_err set_fails(st_inputs *in, const char *text) {
    st_err err = {0};
    ck_assert_msg(!st_inputs_set(in, text, &err), "expected `%s` to be refused", text);
    ck_assert_msg(err.kind == ST_ERR_USER, "internal error for `%s`: %s", text, err.message);
    ck_assert_msg(err.message[0] != 0, "empty message for `%s`", text);
    return err;
}

typedef struct bound_inputs {
    const st_value *args;
    const st_binding *env;
    size_t nenv;
} bound_inputs;

static bound_inputs finish_ok(st_inputs *in) {
    bound_inputs b = {0};
    st_err err = {0};
    ck_assert_msg(st_inputs_finish(in, &b.args, &b.env, &b.nenv, &err), "finish: %s", err.message);
    return b;
}

static st_err finish_fails(st_inputs *in) {
    bound_inputs b = {0};
    st_err err = {0};
    ck_assert_msg(!st_inputs_finish(in, &b.args, &b.env, &b.nenv, &err), "expected finish to fail");
    ck_assert_msg(err.kind == ST_ERR_USER, "internal error: %s", err.message);
    ck_assert(err.message[0] != 0);
    return err;
}

static st_err generate_fails(st_inputs *in, uint64_t seed) {
    st_err err = {0};
    ck_assert_msg(!st_inputs_generate(in, seed, &err), "expected generate to fail");
    ck_assert_msg(err.kind == ST_ERR_USER, "internal error: %s", err.message);
    ck_assert(err.message[0] != 0);
    return err;
}

/* The value bound to a size name, failing the test when it is not bound. */
static int64_t bound_size(bound_inputs b, const char *name) {
    for (size_t i = 0; i < b.nenv; i++)
        if (!strcmp(b.env[i].name, name)) return b.env[i].value;
    ck_abort_msg("size `%s` is not bound", name);
    return -1;
}

/* The error message with the file it names, as the CLI would show both. */
static const char *full_message(const st_err *e) {
    size_t n = strlen(e->message) + (e->loc.file ? strlen(e->loc.file) : 0) + 4;
    char *s = st_arena_alloc(ar, n);
    snprintf(s, n, "%s: %s", e->loc.file ? e->loc.file : "", e->message);
    return s;
}

static const char *prefix_sum = "def main(xs: [N]f32): [N]f32 = xs |> scan(+, 0.0)\n";
static const char *dot = "def main(xs: [N]f32, ys: [N]f32): f32 = zip(xs, ys) |> map((x, y) => x * y) |> reduce(+, 0.0)\n";
static const char *block_sums = "def main(xs: [N]f32): [N/256]f32 where N % 256 == 0 =\n"
                                "  xs |> split(256) |> map(row => row |> reduce(+, 0.0))\n";

/* ---- scalars ---- */

START_TEST(scalar_size_parameter) {
    /* an integer parameter is a value and, since it may be used as a size, a binding */
    st_inputs *in = inputs_for("def main(H: i64): [H]i32 = replicate(H, 7)\n");
    set_ok(in, "H=4096");
    bound_inputs b = finish_ok(in);
    ck_assert_int_eq(b.args[0].kind, ST_VALUE_SCALAR);
    ck_assert_int_eq(b.args[0].scalar, ST_I64);
    ck_assert_int_eq(b.args[0].u.s.i64, 4096);
    ck_assert_int_eq(bound_size(b, "H"), 4096);
}
END_TEST

START_TEST(scalar_bools) {
    const char *src = "def main(a: bool, b: bool): bool = a && !b\n";
    const char *yes[] = {"true", "1"}, *no[] = {"false", "0"};
    for (int i = 0; i < 2; i++) {
        st_inputs *in = inputs_for(src);
        set_ok(in, pair("a", yes[i]));
        set_ok(in, pair("b", no[i]));
        bound_inputs b = finish_ok(in);
        ck_assert_int_eq(b.args[0].scalar, ST_BOOL);
        ck_assert(b.args[0].u.s.b);
        ck_assert(!b.args[1].u.s.b);
    }
    st_err e = set_fails(inputs_for(src), "a=yes");
    ck_assert_has(e.message, "`a`");
    ck_assert_has(e.message, "yes");
}
END_TEST

START_TEST(scalar_floats) {
    st_inputs *in = inputs_for("def main(x: f32, y: f64): f64 = f64(x) + y\n");
    set_ok(in, "x=2.5");
    set_ok(in, "y=-1e300");
    bound_inputs b = finish_ok(in);
    ck_assert(b.args[0].u.s.f32 == 2.5f);
    ck_assert(b.args[1].u.s.f64 == -1e300);
}
END_TEST

START_TEST(scalar_not_a_number) {
    const char *src = "def main(H: i64, x: f32): f32 = x\n";
    const char *bad[] = {"H=abc", "H=12x", "H=", "H=1.5", "x=abc", "x=", "x=2.5.1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        st_err e = set_fails(inputs_for(src), bad[i]);
        /* the message names the parameter the value was meant for */
        ck_assert_has(e.message, bad[i][0] == 'H' ? "`H`" : "`x`");
    }
}
END_TEST

START_TEST(scalar_i32_range) {
    const char *src = "def main(x: i32): i32 = x\n";
    const char *fits[] = {"2147483647", "-2147483648", "0"};
    for (size_t i = 0; i < 3; i++) {
        st_inputs *in = inputs_for(src);
        set_ok(in, pair("x", fits[i]));
        bound_inputs b = finish_ok(in);
        ck_assert_int_eq(b.args[0].u.s.i32, (int32_t)strtoll(fits[i], NULL, 10));
    }
    const char *out[] = {"2147483648", "-2147483649", "3000000000", "99999999999999999999999"};
    for (size_t i = 0; i < 4; i++) {
        st_err e = set_fails(inputs_for(src), pair("x", out[i]));
        ck_assert_has(e.message, "`x`");
        ck_assert_has(e.message, "i32");
    }
}
END_TEST

START_TEST(scalar_unsigned_range) {
    const char *src = "def main(x: u32): u32 = x\n";
    st_inputs *in = inputs_for(src);
    set_ok(in, "x=4294967295");
    ck_assert_uint_eq(finish_ok(in).args[0].u.s.u32, 4294967295u);
    ck_assert_has(set_fails(inputs_for(src), "x=4294967296").message, "u32");
    ck_assert_has(set_fails(inputs_for(src), "x=-1").message, "`x`");
}
END_TEST

START_TEST(scalar_u64_not_a_size) {
    /* x is an ordinary u64 value that no type uses as a size; every u64 must
     * be accepted, including those above INT64_MAX */
    st_inputs *in = inputs_for("def main(x: u64): u64 = x / 2u64\n");
    set_ok(in, "x=18446744073709551615");
    bound_inputs b = finish_ok(in);
    ck_assert(b.args[0].u.s.u64 == UINT64_MAX);
}
END_TEST

START_TEST(scalar_negative_not_a_size) {
    /* a negative integer is a fine value when no type uses it as a length */
    st_inputs *in = inputs_for("def main(x: i64, y: i32): i64 = x * i64(y)\n");
    set_ok(in, "x=-5");
    set_ok(in, "y=-2147483648");
    bound_inputs b = finish_ok(in);
    ck_assert_int_eq(b.args[0].u.s.i64, -5);
    ck_assert_int_eq(b.args[1].u.s.i32, INT32_MIN);
}
END_TEST

/* ---- arrays from .npy files ---- */

START_TEST(array_from_npy) {
    float xs[] = {1, 2, 3, 4};
    st_inputs *in = inputs_for(prefix_sum);
    set_ok(in, pair("xs", write_1d("xs", ST_F32, 4, xs)));
    bound_inputs b = finish_ok(in);
    ck_assert_int_eq(b.args[0].kind, ST_VALUE_ARRAY);
    ck_assert_int_eq(b.args[0].scalar, ST_F32);
    ck_assert_uint_eq(b.args[0].n, 1);
    ck_assert_int_eq(b.args[0].u.a.dims[0], 4);
    ck_assert_mem_eq(b.args[0].u.a.data, xs, sizeof xs);
    ck_assert_int_eq(bound_size(b, "N"), 4);
    /* and what was bound runs */
    st_value out;
    st_err err = {0};
    const st_def *d = def_of(prefix_sum);
    ck_assert_msg(st_eval(cx, d, b.args, b.env, b.nenv, ar, &out, &err), "%s", err.message);
    const float want[] = {1, 3, 6, 10};
    ck_assert_mem_eq(out.u.a.data, want, sizeof want);
}
END_TEST

START_TEST(array_two_dimensions) {
    int32_t m[] = {1, 2, 3, 4, 5, 6};
    int64_t *dims = st_arena_alloc(ar, 2 * sizeof *dims);
    dims[0] = 2, dims[1] = 3;
    st_inputs *in = inputs_for("def main(m: [R][C]i32): i32 = m |> map(r => r |> reduce(+, 0)) |> reduce(+, 0)\n");
    set_ok(in, pair("m", write_npy("m", ST_I32, 2, dims, m)));
    bound_inputs b = finish_ok(in);
    ck_assert_int_eq(bound_size(b, "R"), 2);
    ck_assert_int_eq(bound_size(b, "C"), 3);
}
END_TEST

START_TEST(array_of_bools) {
    bool bs[] = {true, false, true};
    st_inputs *in = inputs_for("def main(bs: [N]bool): [N]bool = bs |> map(b => !b)\n");
    set_ok(in, pair("bs", write_1d("bs", ST_BOOL, 3, bs)));
    bound_inputs b = finish_ok(in);
    ck_assert_int_eq(b.args[0].scalar, ST_BOOL);
    ck_assert_mem_eq(b.args[0].u.a.data, bs, sizeof bs);
}
END_TEST

START_TEST(array_wrong_dtype) {
    int32_t xs[] = {1, 2, 3, 4};
    const char *path = write_1d("ints", ST_I32, 4, xs);
    st_err e = set_fails(inputs_for(prefix_sum), pair("xs", path));
    const char *msg = full_message(&e);
    ck_assert_has(msg, path);     /* the file */
    ck_assert_has(msg, "<i4");    /* its dtype */
    ck_assert_has(msg, "`xs`");   /* the parameter */
    ck_assert_has(msg, "[N]f32"); /* and its type */
}
END_TEST

START_TEST(array_wrong_rank) {
    float m[] = {1, 2, 3, 4};
    int64_t *dims = st_arena_alloc(ar, 2 * sizeof *dims);
    dims[0] = 2, dims[1] = 2;
    const char *path = write_npy("matrix", ST_F32, 2, dims, m);
    st_err e = set_fails(inputs_for(prefix_sum), pair("xs", path));
    const char *msg = full_message(&e);
    ck_assert_has(msg, path);
    ck_assert_has(msg, "2 dimensions");
    ck_assert_has(msg, "[N]f32");
    /* and a one-dimensional file for a two-dimensional parameter */
    float v[] = {1, 2};
    e = set_fails(inputs_for("def main(m: [R][C]f32): f32 = 0.0\n"), pair("m", write_1d("vector", ST_F32, 2, v)));
    ck_assert_has(full_message(&e), "1 dimension");
    ck_assert_has(full_message(&e), "[R][C]f32");
}
END_TEST

START_TEST(array_missing_or_bad_file) {
    st_err e = set_fails(inputs_for(prefix_sum), "xs=/nonexistent/strata/xs.npy");
    ck_assert_has(full_message(&e), "/nonexistent/strata/xs.npy");
    /* a tuple-typed array cannot come from one file: said so, not crashed on */
    float xs[] = {1, 2};
    e = set_fails(inputs_for("def main(ps: [N](i32, f32)): i32 = 0\n"), pair("ps", write_1d("ps", ST_F32, 2, xs)));
    ck_assert_has(e.message, "`ps`");
}
END_TEST

START_TEST(shared_size_lengths_disagree) {
    float xs[] = {1, 2, 3, 4}, ys[] = {1, 2, 3, 4, 5};
    st_inputs *in = inputs_for(dot);
    set_ok(in, pair("xs", write_1d("xs", ST_F32, 4, xs)));
    set_ok(in, pair("ys", write_1d("ys", ST_F32, 5, ys)));
    st_err e = finish_fails(in);
    /* both arrays and both lengths, so the user knows which to fix */
    ck_assert_has(e.message, "`xs`");
    ck_assert_has(e.message, "`ys`");
    ck_assert_has(e.message, "4");
    ck_assert_has(e.message, "5");
}
END_TEST

START_TEST(length_disagrees_with_scalar_size) {
    int32_t xs[10] = {0};
    /* the scalar before and after the array: the order must not matter */
    const char *srcs[] = {"def main(xs: [H]i32, H: i64): i32 = xs |> reduce(+, 0)\n",
                          "def main(H: i64, xs: [H]i32): i32 = xs |> reduce(+, 0)\n"};
    for (int i = 0; i < 2; i++) {
        st_inputs *in = inputs_for(srcs[i]);
        set_ok(in, pair("xs", write_1d(i ? "b" : "a", ST_I32, 10, xs)));
        set_ok(in, "H=4");
        st_err e = finish_fails(in);
        ck_assert_has(e.message, "`xs`");
        ck_assert_has(e.message, "10");
        ck_assert_has(e.message, "H");
        ck_assert_has(e.message, "4");
    }
}
END_TEST

START_TEST(length_disagrees_with_given_size) {
    float xs[] = {1, 2, 3};
    st_inputs *in = inputs_for(prefix_sum);
    set_ok(in, "N=4");
    set_ok(in, pair("xs", write_1d("xs", ST_F32, 3, xs)));
    st_err e = finish_fails(in);
    ck_assert_has(e.message, "`xs`");
    ck_assert_has(e.message, "3");
    ck_assert_has(e.message, "N");
    ck_assert_has(e.message, "4");
}
END_TEST

START_TEST(compound_size_checked) {
    /* ys's length is 2*N: not a variable to learn, but still checked */
    const char *src = "def main(xs: [N]f32, ys: [2*N]f32): f32 = 0.0\n";
    float xs[3] = {0}, ys[7] = {0};
    st_inputs *in = inputs_for(src);
    set_ok(in, pair("xs", write_1d("xs", ST_F32, 3, xs)));
    set_ok(in, pair("ys", write_1d("ys", ST_F32, 7, ys)));
    st_err e = finish_fails(in);
    ck_assert_has(e.message, "`ys`");
    ck_assert_has(e.message, "7");
    ck_assert_has(e.message, "2*N");
    ck_assert_has(e.message, "6");
    /* and generated with the length the expression gives */
    in = inputs_for(src);
    set_ok(in, "N=3");
    ck_assert_msg(st_inputs_generate(in, 1, &e), "%s", e.message);
    bound_inputs b = finish_ok(in);
    ck_assert_int_eq(b.args[1].u.a.dims[0], 6);
}
END_TEST

START_TEST(where_fact_violated) {
    static float xs[300];
    st_inputs *in = inputs_for(block_sums);
    set_ok(in, pair("xs", write_1d("xs", ST_F32, 300, xs)));
    st_err e = finish_fails(in);
    ck_assert_has(e.message, "300");
    ck_assert_has(e.message, "256");
    ck_assert_has(e.message, "N");
    /* a fixed size is checked before anything is generated */
    in = inputs_for(block_sums);
    set_ok(in, "N=100");
    e = generate_fails(in, 1);
    ck_assert_has(e.message, "100");
    ck_assert_has(e.message, "256");
}
END_TEST

START_TEST(where_fact_holds) {
    static float xs[512];
    for (int i = 0; i < 512; i++) xs[i] = 1;
    st_inputs *in = inputs_for(block_sums);
    set_ok(in, pair("xs", write_1d("xs", ST_F32, 512, xs)));
    bound_inputs b = finish_ok(in);
    ck_assert_int_eq(bound_size(b, "N"), 512);
    st_value out;
    st_err err = {0};
    ck_assert_msg(st_eval(cx, def_of(block_sums), b.args, b.env, b.nenv, ar, &out, &err), "%s", err.message);
    const float want[] = {256, 256};
    ck_assert_int_eq(out.u.a.dims[0], 2);
    ck_assert_mem_eq(out.u.a.data, want, sizeof want);
}
END_TEST

START_TEST(missing_inputs) {
    float xs[] = {1, 2};
    st_inputs *in = inputs_for(dot);
    set_ok(in, pair("xs", write_1d("xs", ST_F32, 2, xs)));
    st_err e = finish_fails(in);
    /* it says which input and how to give it */
    ck_assert_has(e.message, "`ys`");
    ck_assert_has(e.message, "--input ys=");
    /* a scalar is asked for as a value */
    in = inputs_for("def main(is: [N]i32, H: i64): [H]i32 = reduce_by_index(replicate(H, 0), +, 0, is, replicate(N, 1))\n");
    set_ok(in, "N=8");
    ck_assert(st_inputs_generate(in, 1, &e));
    e = finish_fails(in);
    ck_assert_has(e.message, "`H`");
    ck_assert_has(e.message, "--input H=");
}
END_TEST

START_TEST(unknown_name) {
    st_err e = set_fails(inputs_for(dot), "zs=1");
    ck_assert_has(e.message, "`zs`");
    /* the names it does have, parameters and sizes */
    ck_assert_has(e.message, "xs");
    ck_assert_has(e.message, "ys");
    ck_assert_has(e.message, "N");
}
END_TEST

START_TEST(bad_pair_syntax) {
    const char *bad[] = {"xs", "=1", ""};
    for (int i = 0; i < 3; i++) ck_assert_has(set_fails(inputs_for(dot), bad[i]).message, "NAME=VALUE");
}
END_TEST

/* Issue 19, item 16: "N=5 " was refused while "N= 5" was taken; white
 * space around the name and the value is dropped on both sides alike. */
START_TEST(white_space_around_name_and_value) {
    const char *sizes[] = {"N=5 ", "N= 5", " N=5", "N =5", "\tN = 5\n"};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        st_inputs *in = inputs_for(prefix_sum);
        set_ok(in, sizes[i]);
        ck_assert(st_inputs_generate(in, 1, &(st_err){0}));
        ck_assert_int_eq(bound_size(finish_ok(in), "N"), 5);
    }
    st_inputs *in = inputs_for("def main(H: i64): i64 = H\n");
    set_ok(in, " H = 3 ");
    ck_assert_int_eq(finish_ok(in).args[0].u.s.i64, 3);
    float xs[] = {1, 2, 3};
    in = inputs_for(prefix_sum);
    char spaced[4200];
    snprintf(spaced, sizeof spaced, " xs = %s ", write_1d("xs", ST_F32, 3, xs));
    set_ok(in, spaced);
    ck_assert_int_eq(bound_size(finish_ok(in), "N"), 3);
    /* a name of white space only is no name */
    ck_assert_has(set_fails(inputs_for(prefix_sum), " =5").message, "NAME=VALUE");
}
END_TEST

START_TEST(given_twice) {
    float xs[] = {1, 2};
    const char *path = write_1d("xs", ST_F32, 2, xs);
    st_inputs *in = inputs_for(prefix_sum);
    set_ok(in, pair("xs", path));
    ck_assert_has(set_fails(in, pair("xs", path)).message, "twice");
    in = inputs_for(prefix_sum);
    set_ok(in, "N=4");
    ck_assert_has(set_fails(in, "N=4").message, "twice");
    in = inputs_for("def main(H: i64): i64 = H\n");
    set_ok(in, "H=1");
    ck_assert_has(set_fails(in, "H=2").message, "twice");
}
END_TEST

/* ---- generated arrays ---- */

/* Generate prefix_sum's xs for N=n from a seed, in a fresh binder. */
static const st_value *generated(int64_t n, uint64_t seed) {
    st_inputs *in = inputs_for(prefix_sum);
    char text[64];
    snprintf(text, sizeof text, "N=%lld", (long long)n);
    set_ok(in, text);
    st_err err = {0};
    ck_assert_msg(st_inputs_generate(in, seed, &err), "%s", err.message);
    bound_inputs b = finish_ok(in);
    ck_assert_int_eq(bound_size(b, "N"), n);
    return &b.args[0];
}

START_TEST(generate_fills_arrays) {
    const st_value *a = generated(1000, 7), *b = generated(1000, 7), *c = generated(1000, 8);
    ck_assert_int_eq(a->kind, ST_VALUE_ARRAY);
    ck_assert_int_eq(a->u.a.dims[0], 1000);
    const float *x = a->u.a.data;
    bool all_same = true;
    for (int i = 0; i < 1000; i++) {
        ck_assert_msg(x[i] >= 0 && x[i] < 1, "xs[%d] = %g is outside [0, 1)", i, x[i]);
        all_same &= x[i] == x[0];
    }
    ck_assert_msg(!all_same, "generated values are all equal");
    ck_assert_msg(!memcmp(a->u.a.data, b->u.a.data, 1000 * sizeof(float)), "one seed gave two arrays");
    ck_assert_msg(memcmp(a->u.a.data, c->u.a.data, 1000 * sizeof(float)), "two seeds gave one array");
}
END_TEST

START_TEST(generate_every_scalar_kind) {
    /* the documented ranges: signed in [-50, 50), unsigned in [0, 100),
     * floats in [0, 1), bools about half true */
    st_inputs *in = inputs_for("def main(a: [N]bool, b: [N]i32, c: [N]u32, d: [N]i64, e: [N]u64, f: [N]f32,"
                               " g: [N]f64): i32 = 0\n");
    set_ok(in, "N=2000");
    st_err err = {0};
    ck_assert_msg(st_inputs_generate(in, 11, &err), "%s", err.message);
    bound_inputs bi = finish_ok(in);
    int trues = 0;
    for (int i = 0; i < 2000; i++) {
        unsigned char a = ((const unsigned char *)bi.args[0].u.a.data)[i];
        ck_assert_msg(a == 0 || a == 1, "bool byte %u", a);
        trues += a;
        int32_t b = ((const int32_t *)bi.args[1].u.a.data)[i];
        uint32_t c = ((const uint32_t *)bi.args[2].u.a.data)[i];
        int64_t d = ((const int64_t *)bi.args[3].u.a.data)[i];
        uint64_t e = ((const uint64_t *)bi.args[4].u.a.data)[i];
        float f = ((const float *)bi.args[5].u.a.data)[i];
        double g = ((const double *)bi.args[6].u.a.data)[i];
        ck_assert(b >= -50 && b < 50);
        ck_assert(c < 100);
        ck_assert(d >= -50 && d < 50);
        ck_assert(e < 100);
        ck_assert(f >= 0 && f < 1);
        ck_assert(g >= 0 && g < 1);
    }
    ck_assert_msg(trues > 800 && trues < 1200, "%d of 2000 bools are true", trues);
    /* two parameters of one type get different data */
    ck_assert(memcmp(bi.args[1].u.a.data, bi.args[3].u.a.data, 4 * 2000) != 0);
}
END_TEST

START_TEST(generate_two_dimensions) {
    st_inputs *in = inputs_for("def main(m: [R][C]i32): i32 = 0\n");
    set_ok(in, "R=3");
    set_ok(in, "C=4");
    st_err err = {0};
    ck_assert_msg(st_inputs_generate(in, 1, &err), "%s", err.message);
    bound_inputs b = finish_ok(in);
    ck_assert_uint_eq(b.args[0].n, 2);
    ck_assert_int_eq(b.args[0].u.a.dims[0], 3);
    ck_assert_int_eq(b.args[0].u.a.dims[1], 4);
}
END_TEST

/* An array of tuples is a tuple of arrays, each of the length its type
 * says; the size is read off them (it was read off the tuple as if it were
 * an array: `xs` had length 4294967297). */
START_TEST(generate_an_array_of_tuples) {
    st_inputs *in = inputs_for("def main(xs: [N](i32, f32), m: [R][C](i64, bool)): i32 = 0\n");
    set_ok(in, "N=7");
    set_ok(in, "R=2");
    set_ok(in, "C=5");
    st_err err = {0};
    ck_assert_msg(st_inputs_generate(in, 1, &err), "%s", err.message);
    bound_inputs b = finish_ok(in);
    ck_assert_int_eq(bound_size(b, "N"), 7);
    ck_assert_int_eq(b.args[0].kind, ST_VALUE_TUPLE);
    ck_assert_uint_eq(b.args[0].n, 2);
    for (uint32_t k = 0; k < 2; k++) {
        ck_assert_int_eq(b.args[0].u.items[k].u.a.dims[0], 7);
        ck_assert_uint_eq(b.args[1].u.items[k].n, 2);
        ck_assert_int_eq(b.args[1].u.items[k].u.a.dims[0], 2);
        ck_assert_int_eq(b.args[1].u.items[k].u.a.dims[1], 5);
    }
}
END_TEST

START_TEST(generate_empty) {
    ck_assert_int_eq(generated(0, 1)->u.a.dims[0], 0);
}
END_TEST

START_TEST(generate_from_a_given_array) {
    /* ys takes its length from xs; xs stays as given */
    float xs[] = {1, 2, 3};
    st_inputs *in = inputs_for(dot);
    set_ok(in, pair("xs", write_1d("xs", ST_F32, 3, xs)));
    st_err err = {0};
    ck_assert_msg(st_inputs_generate(in, 3, &err), "%s", err.message);
    bound_inputs b = finish_ok(in);
    ck_assert_mem_eq(b.args[0].u.a.data, xs, sizeof xs);
    ck_assert_int_eq(b.args[1].u.a.dims[0], 3);
}
END_TEST

START_TEST(generate_with_scalar_size) {
    st_inputs *in = inputs_for("def main(H: i64, xs: [H]i32): i32 = xs |> reduce(+, 0)\n");
    set_ok(in, "H=5");
    st_err err = {0};
    ck_assert_msg(st_inputs_generate(in, 1, &err), "%s", err.message);
    bound_inputs b = finish_ok(in);
    ck_assert_int_eq(b.args[1].u.a.dims[0], 5);
    const int32_t *v = b.args[1].u.a.data;
    for (int i = 0; i < 5; i++) ck_assert(v[i] >= -50 && v[i] < 50);
}
END_TEST

START_TEST(generate_without_size) {
    st_err e = generate_fails(inputs_for(prefix_sum), 1);
    ck_assert_has(e.message, "`xs`");
    ck_assert_has(e.message, "N");
    ck_assert_has(e.message, "--size");
}
END_TEST

START_TEST(negative_size) {
    st_err e = set_fails(inputs_for(prefix_sum), "N=-5");
    ck_assert_has(e.message, "N");
    ck_assert_has(e.message, "negative");
    ck_assert_has(set_fails(inputs_for(prefix_sum), "N=ten").message, "`N`");
    /* a negative scalar used as a length: refused when generating, not crashed on */
    st_inputs *in = inputs_for("def main(xs: [H]i32, H: i64): i32 = xs |> reduce(+, 0)\n");
    set_ok(in, "H=-1");
    ck_assert_has(generate_fails(in, 1).message, "negative");
}
END_TEST

START_TEST(huge_size) {
    /* a size whose bytes overflow is refused before any allocation */
    st_inputs *in = inputs_for(prefix_sum);
    set_ok(in, "N=4611686018427387904");
    st_err err = {0};
    ck_assert(!st_inputs_generate(in, 1, &err));
    ck_assert(err.message[0] != 0);
}
END_TEST

int main(void) {
    Suite *s = suite_create("inputs");
    TCase *scalars = tcase_create("scalars");
    tcase_add_checked_fixture(scalars, setup, teardown);
    tcase_add_test(scalars, scalar_size_parameter);
    tcase_add_test(scalars, scalar_bools);
    tcase_add_test(scalars, scalar_floats);
    tcase_add_test(scalars, scalar_not_a_number);
    tcase_add_test(scalars, scalar_i32_range);
    tcase_add_test(scalars, scalar_unsigned_range);
    tcase_add_test(scalars, scalar_u64_not_a_size);
    tcase_add_test(scalars, scalar_negative_not_a_size);
    suite_add_tcase(s, scalars);

    TCase *arrays = tcase_create("arrays");
    tcase_add_checked_fixture(arrays, setup, teardown);
    tcase_add_test(arrays, array_from_npy);
    tcase_add_test(arrays, array_two_dimensions);
    tcase_add_test(arrays, array_of_bools);
    tcase_add_test(arrays, array_wrong_dtype);
    tcase_add_test(arrays, array_wrong_rank);
    tcase_add_test(arrays, array_missing_or_bad_file);
    suite_add_tcase(s, arrays);

    TCase *sizes = tcase_create("sizes");
    tcase_add_checked_fixture(sizes, setup, teardown);
    tcase_add_test(sizes, shared_size_lengths_disagree);
    tcase_add_test(sizes, length_disagrees_with_scalar_size);
    tcase_add_test(sizes, length_disagrees_with_given_size);
    tcase_add_test(sizes, compound_size_checked);
    tcase_add_test(sizes, where_fact_violated);
    tcase_add_test(sizes, where_fact_holds);
    tcase_add_test(sizes, negative_size);
    tcase_add_test(sizes, huge_size);
    suite_add_tcase(s, sizes);

    TCase *names = tcase_create("names");
    tcase_add_checked_fixture(names, setup, teardown);
    tcase_add_test(names, missing_inputs);
    tcase_add_test(names, unknown_name);
    tcase_add_test(names, bad_pair_syntax);
    tcase_add_test(names, given_twice);
    tcase_add_test(names, white_space_around_name_and_value);
    suite_add_tcase(s, names);

    TCase *gen = tcase_create("generate");
    tcase_add_checked_fixture(gen, setup, teardown);
    tcase_add_test(gen, generate_fills_arrays);
    tcase_add_test(gen, generate_every_scalar_kind);
    tcase_add_test(gen, generate_two_dimensions);
    tcase_add_test(gen, generate_an_array_of_tuples);
    tcase_add_test(gen, generate_empty);
    tcase_add_test(gen, generate_from_a_given_array);
    tcase_add_test(gen, generate_with_scalar_size);
    tcase_add_test(gen, generate_without_size);
    suite_add_tcase(s, gen);
    scratch_make(dir, sizeof dir, "inputs");
    int rc = run_suite(s);
    scratch_remove(dir);
    return rc;
}
