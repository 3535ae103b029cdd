/* tests/test_interp.c — the reference interpreter against hand-computed
 * results.
 *
 * The interpreter is the oracle every rewrite and every kernel is checked
 * against, so its own tests must not come from it: every expected value here
 * was worked out by hand (or, in the property tests, by a few lines of plain
 * C). Operators that are not commutative (subtraction, `a * 10 + b`, the
 * composition of affine maps) pin down the order of every fold; empty arrays
 * and singletons pin down the edges. */
#include "harness.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------------------------ */
/* Fixture: a fresh context and arena for every test                        */
/* ------------------------------------------------------------------------ */

static st_ctx *cx;
static st_arena *ar;

static void setup(void) {
    cx = st_ctx_new();
    ar = st_arena_new();
    ck_assert(cx != NULL && ar != NULL);
}

static void teardown(void) {
    st_arena_free(ar);
    st_ctx_free(cx);
}

/* ------------------------------------------------------------------------ */
/* Building inputs                                                          */
/* ------------------------------------------------------------------------ */

#define COUNT(T, ...) ((int64_t)(sizeof((T[]){__VA_ARGS__}) / sizeof(T)))

/* An array over a copy of data in the arena (never a NULL pointer, even when
 * empty, so that no memcpy in the library sees one). */
static st_value arr(st_scalar_kind k, const void *data, int64_t n) {
    size_t bytes = (size_t)n * st_scalar_size(k);
    void *copy = st_arena_alloc(ar, bytes);
    ck_assert(copy != NULL);
    if (bytes) memcpy(copy, data, bytes);
    return array_of(k, n, copy, ar);
}

#define I32S(...) arr(ST_I32, (const int32_t[]){__VA_ARGS__}, COUNT(int32_t, __VA_ARGS__))
#define I64S(...) arr(ST_I64, (const int64_t[]){__VA_ARGS__}, COUNT(int64_t, __VA_ARGS__))
#define U32S(...) arr(ST_U32, (const uint32_t[]){__VA_ARGS__}, COUNT(uint32_t, __VA_ARGS__))
#define U64S(...) arr(ST_U64, (const uint64_t[]){__VA_ARGS__}, COUNT(uint64_t, __VA_ARGS__))
#define F32S(...) arr(ST_F32, (const float[]){__VA_ARGS__}, COUNT(float, __VA_ARGS__))
#define EMPTY(k) arr((k), NULL, 0)

/* Scalars with the whole union cleared first, as ir.h asks. */
static st_scalar s_bool(bool x) { st_scalar s = {.bits = 0}; s.b = x; return s; }
static st_scalar s_i32(int32_t x) { st_scalar s = {.bits = 0}; s.i32 = x; return s; }
static st_scalar s_u32(uint32_t x) { st_scalar s = {.bits = 0}; s.u32 = x; return s; }
static st_scalar s_i64(int64_t x) { st_scalar s = {.bits = 0}; s.i64 = x; return s; }
static st_scalar s_u64(uint64_t x) { st_scalar s = {.bits = 0}; s.u64 = x; return s; }
static st_scalar s_f32(float x) { st_scalar s = {.bits = 0}; s.f32 = x; return s; }
static st_scalar s_f64(double x) { st_scalar s = {.bits = 0}; s.f64 = x; return s; }

static st_value v_i32(int32_t x) { return scalar_of(ST_I32, s_i32(x)); }
static st_value v_i64(int64_t x) { return scalar_of(ST_I64, s_i64(x)); }

/* ------------------------------------------------------------------------ */
/* Running programs                                                         */
/* ------------------------------------------------------------------------ */

static st_value run(const char *src, const st_value *args, uint32_t nargs) {
    return eval_ok(cx, ar, src, args, nargs);
}

#define RUN(src, ...) run((src), (const st_value[]){__VA_ARGS__}, (uint32_t)COUNT(st_value, __VA_ARGS__))

/* Size bindings as the harness makes them (sizes from the argument shapes,
 * integer parameters as themselves), for programs expected to fail. */
static size_t bind_env(const st_def *d, const st_value *args, st_binding *env) {
    size_t n = 0;
    for (uint32_t i = 0; i < d->nsizes; i++) {
        bool found = false;
        for (uint32_t k = 0; k < d->nparams && !found; k++) {
            const st_type *t = d->params[k]->type;
            for (uint32_t dim = 0; t->kind == ST_TYPE_ARRAY && !found; dim++, t = t->elem)
                if (t->size == d->sizes[i]->size) {
                    const st_value *v = &args[k];
                    while (v->kind == ST_VALUE_TUPLE) v = &v->u.items[0];
                    env[n++] = (st_binding){d->sizes[i]->u.name, v->u.a.dims[dim]};
                    found = true;
                }
        }
    }
    for (uint32_t k = 0; k < d->nparams; k++) {
        int64_t v;
        if (st_type_is_int(d->params[k]->type) && st_scalar_as_i64(args[k].scalar, args[k].u.s, &v))
            env[n++] = (st_binding){d->params[k]->u.name, v};
    }
    return n;
}

/* Run src expecting a runtime error: st_eval must return false (not crash)
 * with a user error whose message contains both `what` and `where` (the
 * offending expression as the printer writes it). */
static void eval_fails(const char *src, const st_value *args, uint32_t nargs, const char *what,
                       const char *where) {
    const st_program *p = parse_ok(cx, src);
    st_err err = {0};
    const st_def *d = st_program_entry(p, NULL, &err);
    ck_assert_msg(d != NULL, "%s", err.message);
    ck_assert_uint_eq(nargs, d->nparams);
    st_binding env[32];
    size_t nenv = bind_env(d, args, env);
    st_value out;
    bool ok = st_eval(cx, d, args, env, nenv, ar, &out, &err);
    ck_assert_msg(!ok, "expected a runtime error from:\n%s", src);
    ck_assert_msg(err.kind == ST_ERR_USER, "a runtime error is the user's, not internal: %s", err.message);
    ck_assert_msg(strstr(err.message, what) != NULL, "expected \"%s\" in \"%s\"", what, err.message);
    ck_assert_msg(strstr(err.message, where) != NULL, "expected \"%s\" in \"%s\"", where, err.message);
}

#define FAILS(src, what, where, ...) \
    eval_fails((src), (const st_value[]){__VA_ARGS__}, (uint32_t)COUNT(st_value, __VA_ARGS__), (what), (where))

/* ------------------------------------------------------------------------ */
/* Checking results                                                         */
/* ------------------------------------------------------------------------ */

/* A scalar as text, for failure messages; a ring of buffers so that one
 * message may format several. */
static const char *fmt(st_scalar_kind k, st_scalar s) {
    static char text[8][96];
    static int which;
    st_buf b = {0};
    st_scalar_format(k, s, &b);
    which = (which + 1) % 8;
    snprintf(text[which], sizeof text[which], "%s", b.data ? b.data : "?");
    st_buf_free(&b);
    return text[which];
}

/* Two scalars of kind k are the same value: bit for bit (so -0.0 and 0.0
 * differ), except that any NaN equals any NaN. */
static bool same_scalar(st_scalar_kind k, st_scalar a, st_scalar b) {
    switch (k) {
    case ST_BOOL: return a.b == b.b;
    case ST_I32: case ST_U32: return a.u32 == b.u32;
    case ST_F32: return (isnan(a.f32) && isnan(b.f32)) || memcmp(&a.f32, &b.f32, 4) == 0;
    case ST_F64: return (isnan(a.f64) && isnan(b.f64)) || memcmp(&a.f64, &b.f64, 8) == 0;
    default: return a.u64 == b.u64;
    }
}

static void check_scalar(const st_value *v, st_scalar_kind k, st_scalar want) {
    ck_assert_msg(v->kind == ST_VALUE_SCALAR, "expected a scalar, got value kind %d", v->kind);
    ck_assert_msg(v->scalar == k, "expected a %s, got a %s", st_scalar_name(k), st_scalar_name(v->scalar));
    ck_assert_msg(same_scalar(k, v->u.s, want), "expected %s, got %s", fmt(k, want), fmt(k, v->u.s));
}

static st_scalar load(st_scalar_kind k, const void *base, int64_t i) {
    const char *p = (const char *)base + (size_t)i * st_scalar_size(k);
    st_scalar s = {.bits = 0};
    if (k == ST_BOOL) s.b = *(const bool *)p;
    else memcpy(&s, p, st_scalar_size(k));
    return s;
}

/* v is an ARRAY leaf of kind k with these dimensions and elements (row-major). */
static void check_array(const st_value *v, st_scalar_kind k, uint32_t rank, const int64_t *dims,
                        const void *want) {
    ck_assert_msg(v->kind == ST_VALUE_ARRAY, "expected an array, got value kind %d", v->kind);
    ck_assert_msg(v->scalar == k, "expected %s elements, got %s", st_scalar_name(k), st_scalar_name(v->scalar));
    ck_assert_msg(v->n == rank, "expected rank %u, got %u", rank, v->n);
    int64_t count = 1;
    for (uint32_t d = 0; d < rank; d++) {
        ck_assert_msg(v->u.a.dims[d] == dims[d], "dimension %u: expected %lld, got %lld", d,
                      (long long)dims[d], (long long)v->u.a.dims[d]);
        count *= dims[d];
    }
    for (int64_t i = 0; i < count; i++) {
        st_scalar got = load(k, v->u.a.data, i), exp = load(k, want, i);
        ck_assert_msg(same_scalar(k, got, exp), "element %lld: expected %s, got %s", (long long)i,
                      fmt(k, exp), fmt(k, got));
    }
}

static void check_flat(const st_value *v, st_scalar_kind k, const void *want, int64_t n) {
    check_array(v, k, 1, &n, want);
}

#define WANT_I32(v, ...) check_flat(&(v), ST_I32, (const int32_t[]){__VA_ARGS__}, COUNT(int32_t, __VA_ARGS__))
#define WANT_I64(v, ...) check_flat(&(v), ST_I64, (const int64_t[]){__VA_ARGS__}, COUNT(int64_t, __VA_ARGS__))
#define WANT_F32(v, ...) check_flat(&(v), ST_F32, (const float[]){__VA_ARGS__}, COUNT(float, __VA_ARGS__))
#define WANT_F64(v, ...) check_flat(&(v), ST_F64, (const double[]){__VA_ARGS__}, COUNT(double, __VA_ARGS__))
#define WANT_BOOL(v, ...) check_flat(&(v), ST_BOOL, (const bool[]){__VA_ARGS__}, COUNT(bool, __VA_ARGS__))
#define WANT_EMPTY(v, k) check_flat(&(v), (k), NULL, 0)
#define WANT_2D_I32(v, rows, cols, ...) \
    check_array(&(v), ST_I32, 2, (const int64_t[]){(rows), (cols)}, (const int32_t[]){__VA_ARGS__})
#define WANT_2D_EMPTY(v, k, rows, cols) check_array(&(v), (k), 2, (const int64_t[]){(rows), (cols)}, NULL)

/* Component i of a TUPLE value. */
static const st_value *item(const st_value *v, uint32_t i) {
    ck_assert_msg(v->kind == ST_VALUE_TUPLE, "expected a tuple, got value kind %d", v->kind);
    ck_assert_msg(i < v->n, "the tuple has %u components, wanted #%u", v->n, i);
    return &v->u.items[i];
}

static void want_tuple_n(const st_value *v, uint32_t n) {
    ck_assert_msg(v->kind == ST_VALUE_TUPLE, "expected a tuple, got value kind %d", v->kind);
    ck_assert_uint_eq(v->n, n);
}

#define WANT_SCALAR(v, k, s) check_scalar(&(v), (k), (s))

/* ------------------------------------------------------------------------ */
/* map and its low-level forms                                              */
/* ------------------------------------------------------------------------ */

START_TEST(map_basic) {
    st_value r = RUN("def main(xs: [N]i32) = xs |> map(x => x * 2 + 1)", I32S(1, -2, 3, 0));
    WANT_I32(r, 3, -3, 7, 1);
    r = RUN("def main(xs: [N]i32) = xs |> map(x => x > 0)", I32S(1, -2, 0));
    WANT_BOOL(r, true, false, false);
    r = RUN("def main(xs: [N]i32) = xs |> map(x => f64(x) / 4.0)", I32S(1, -2));
    WANT_F64(r, 0.25, -0.5);
}
END_TEST

/* A map producing pairs gives a TUPLE of two arrays (arrays of tuples are
 * stored as tuples of arrays). */
START_TEST(map_to_tuples) {
    st_value r = RUN("def main(xs: [N]i32) = xs |> map(a => (a - 1, i64(a) * 2))", I32S(1, 2, 3));
    want_tuple_n(&r, 2);
    WANT_I32(*item(&r, 0), 0, 1, 2);
    WANT_I64(*item(&r, 1), 2, 4, 6);
}
END_TEST

/* A lambda of k parameters given a k-tuple destructures it; the order of the
 * components matters (subtraction). */
START_TEST(map_destructures_zip) {
    st_value r = RUN("def main(xs: [N]i32, ys: [N]i32) = zip(xs, ys) |> map((x, y) => x - y)",
                     I32S(10, 20, 30), I32S(1, 2, 3));
    WANT_I32(r, 9, 18, 27);
    r = RUN("def main(xs: [N]i32, ys: [N]i32, zs: [N]i32) = zip(xs, ys, zs) |> map((a, b, c) => a * b - c)",
            I32S(1, 2, 3), I32S(4, 5, 6), I32S(7, 8, 9));
    WANT_I32(r, -3, 2, 9);
    /* one parameter taking the whole tuple, projected */
    r = RUN("def main(xs: [N]i32, ys: [N]i32) = zip(xs, ys) |> map(p => p.1 * 100 + p.0)",
            I32S(1, 2), I32S(3, 4));
    WANT_I32(r, 301, 402);
}
END_TEST

/* mapSeq, mapGlb, mapWrg, mapLcl mean map; toGlobal, toLocal, toPrivate
 * mean the value itself. */
START_TEST(low_level_maps) {
    static const char *const maps[] = {"map", "mapSeq", "mapGlb", "mapWrg", "mapLcl"};
    char src[256];
    for (size_t i = 0; i < sizeof maps / sizeof *maps; i++) {
        snprintf(src, sizeof src, "def main(xs: [N]i32) = xs |> %s(x => x * 3 - 1)", maps[i]);
        st_value r = RUN(src, I32S(0, 1, -5));
        WANT_I32(r, -1, 2, -16);
    }
    static const char *const spaces[] = {"toGlobal", "toLocal", "toPrivate"};
    for (size_t i = 0; i < sizeof spaces / sizeof *spaces; i++) {
        snprintf(src, sizeof src, "def main(xs: [N]i32) = xs |> map(x => x + 1) |> %s", spaces[i]);
        st_value r = RUN(src, I32S(4, 5));
        WANT_I32(r, 5, 6);
    }
    /* the lowered shape of a block-wise map: work-groups over rows, local
     * work-items over a row, an intermediate in local memory */
    st_value r = RUN("def main(xs: [N]i32) where N % 2 == 0 =\n"
                     "  xs |> split(2) |> mapWrg(row => row |> mapLcl(x => x * 10) |> toLocal"
                     " |> mapLcl(x => x + 1) |> toGlobal) |> join",
                     I32S(1, 2, 3, 4));
    WANT_I32(r, 11, 21, 31, 41);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* reduce and scan: left folds from z                                       */
/* ------------------------------------------------------------------------ */

START_TEST(reduce_folds_left_from_z) {
    st_value r = RUN("def main(xs: [N]i32) = xs |> reduce(+, 100)", I32S(1, 2, 3, 4));
    WANT_SCALAR(r, ST_I32, s_i32(110)); /* z counted once */
    /* ((10 - 1) - 2) - 3 = 4; a right fold would give 1 - (2 - (3 - 10)) = -8 */
    r = RUN("def main(xs: [N]i32) = xs |> reduce(-, 10)", I32S(1, 2, 3));
    WANT_SCALAR(r, ST_I32, s_i32(4));
    /* digits in order: 123, not 321 */
    r = RUN("def main(xs: [N]i32) = xs |> reduce((a, b) => a * 10 + b, 0)", I32S(1, 2, 3));
    WANT_SCALAR(r, ST_I32, s_i32(123));
    r = RUN("def main(xs: [N]i32) = xs |> reduce(max, -1000)", I32S(-7, 3, -2));
    WANT_SCALAR(r, ST_I32, s_i32(3));
    r = RUN("def main(xs: [N]i32) = xs |> reduce(min, 1000)", I32S(-7, 3, -2));
    WANT_SCALAR(r, ST_I32, s_i32(-7));
    r = RUN("def main(xs: [N]f32) = xs |> reduce(+, 0.0)", F32S(0.5f, 0.25f, 2.0f));
    WANT_SCALAR(r, ST_F32, s_f32(2.75f));
    r = RUN("def main(xs: [N]i32) = xs |> reduce(*, 1)", I32S(2, -3, 4));
    WANT_SCALAR(r, ST_I32, s_i32(-24));
    r = RUN("def main(xs: [N]u32) = xs |> reduce(^, 0)", U32S(0xf0u, 0x0fu, 0xffu));
    WANT_SCALAR(r, ST_U32, s_u32(0));
}
END_TEST

START_TEST(reduce_over_tuples) {
    st_value r = RUN("def main(xs: [N]i32, ys: [N]i32) =\n"
                     "  zip(xs, ys) |> reduce((a, b) => (a.0 * 10 + b.0, max(a.1, b.1)), (0, -100))",
                     I32S(4, 5, 6), I32S(-3, 9, 2));
    want_tuple_n(&r, 2);
    WANT_SCALAR(*item(&r, 0), ST_I32, s_i32(456));
    WANT_SCALAR(*item(&r, 1), ST_I32, s_i32(9));
}
END_TEST

START_TEST(scan_inclusive_seeded) {
    st_value r = RUN("def main(xs: [N]i32) = xs |> scan(+, 10)", I32S(1, 2, 3));
    WANT_I32(r, 11, 13, 16);
    r = RUN("def main(xs: [N]i32) = xs |> scan(-, 0)", I32S(1, 2, 3));
    WANT_I32(r, -1, -3, -6);
    r = RUN("def main(xs: [N]i32) = xs |> scan((a, b) => a * 10 + b, 0)", I32S(1, 2, 3));
    WANT_I32(r, 1, 12, 123);
    r = RUN("def main(xs: [N]i32) = xs |> scan(max, -2147483648)", I32S(-5, -9, 4, 2, 7));
    WANT_I32(r, -5, -5, 4, 4, 7);
    r = RUN("def main(xs: [N]f32) = xs |> scan(+, 0.5)", F32S(1.0f, 0.25f));
    WANT_F32(r, 1.5f, 1.75f);
}
END_TEST

/* Composition of affine maps x ↦ a·x + b (linear_recurrence.strata) on
 * integers. Hand-computed for a = [2, 3, 1], b = [1, 1, 5]: x = 1, 4, 9, and
 * the composed slopes 2, 6, 6. Composing in the other order gives x = 1, 3, …,
 * so this fails if the operands of the scan operator are swapped. */
START_TEST(scan_affine_composition_order) {
    st_value r = RUN("def main(as: [N]i32, bs: [N]i32) =\n"
                     "  zip(as, bs) |> scan((f, g) => (f.0 * g.0, g.0 * f.1 + g.1), (1, 0)) |> unzip",
                     I32S(2, 3, 1), I32S(1, 1, 5));
    want_tuple_n(&r, 2);
    WANT_I32(*item(&r, 0), 2, 6, 6);
    WANT_I32(*item(&r, 1), 1, 4, 9);
}
END_TEST

START_TEST(scan_over_tuples) {
    st_value r = RUN("def main(xs: [N]i32, ys: [N]i64) =\n"
                     "  zip(xs, ys) |> scan((a, b) => (a.0 + b.0, a.1 - b.1), (0, 100i64))",
                     I32S(1, 2, 3), I64S(5, 6, 7));
    want_tuple_n(&r, 2);
    WANT_I32(*item(&r, 0), 1, 3, 6);
    WANT_I64(*item(&r, 1), 95, 89, 82);
}
END_TEST

/* reduceSeq and scanSeq fold into an accumulator of another type. */
START_TEST(seq_folds_change_type) {
    /* an i64 accumulator over i32 elements does not wrap at 2^31 */
    st_value r = RUN("def main(xs: [N]i32) = xs |> reduceSeq((acc, x) => acc + i64(x), 0i64)",
                     I32S(2147483647, 1, 2147483647));
    WANT_SCALAR(r, ST_I64, s_i64(4294967295LL));
    r = RUN("def main(xs: [N]i32) = xs |> scanSeq((acc, x) => acc * 0.5f64 + f64(x), 1.0f64)",
            I32S(1, 2, 3));
    WANT_F64(r, 1.5, 2.75, 4.375);
    /* a tuple accumulator: (count of positives, digits in order) */
    r = RUN("def main(xs: [N]i32) =\n"
            "  xs |> reduceSeq((acc, x) => (acc.0 + (if x > 0 then 1i64 else 0), acc.1 * 10 + x), (0i64, 0))",
            I32S(1, -2, 3));
    want_tuple_n(&r, 2);
    WANT_SCALAR(*item(&r, 0), ST_I64, s_i64(2));
    WANT_SCALAR(*item(&r, 1), ST_I32, s_i32(83)); /* (1*10 - 2)*10 + 3 */
    /* same-typed seq folds agree with reduce and scan */
    r = RUN("def main(xs: [N]i32) = xs |> scanSeq(-, 0)", I32S(1, 2, 3));
    WANT_I32(r, -1, -3, -6);
    r = RUN("def main(xs: [N]i32) = xs |> reduceSeq(-, 0)", I32S(1, 2, 3));
    WANT_SCALAR(r, ST_I32, s_i32(-6));
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Nested arrays: split, join, transpose, maps and folds over rows          */
/* ------------------------------------------------------------------------ */

START_TEST(split_and_join) {
    const char *split2 = "def main(xs: [N]i32) where N % 2 == 0 = xs |> split(2)";
    st_value r = RUN(split2, I32S(1, 2, 3, 4, 5, 6));
    WANT_2D_I32(r, 3, 2, 1, 2, 3, 4, 5, 6);
    r = RUN("def main(xs: [N]i32) = xs |> split(1)", I32S(7, 8));
    WANT_2D_I32(r, 2, 1, 7, 8);
    r = RUN("def main(xs: [N]i32) where N % 3 == 0 = xs |> split(3) |> join", I32S(1, 2, 3, 4, 5, 6));
    WANT_I32(r, 1, 2, 3, 4, 5, 6);
    /* a constant length: split(3) of [6] is [2][3] */
    r = RUN("def main(xs: [6]i32) = xs |> split(3) |> map(row => row |> get(2))", I32S(1, 2, 3, 4, 5, 6));
    WANT_I32(r, 3, 6);
}
END_TEST

START_TEST(maps_and_folds_over_rows) {
    /* sums of rows */
    st_value r = RUN("def main(xs: [N]i32) where N % 2 == 0 = xs |> split(2) |> map(row => row |> reduce(+, 0))",
                     I32S(1, 2, 3, 4, 5, 6));
    WANT_I32(r, 3, 7, 11);
    /* a segmented scan, non-commutative: each row restarts from z */
    r = RUN("def main(xs: [N]i32) where N % 3 == 0 = xs |> split(3) |> map(row => row |> scan(-, 100))",
            I32S(1, 2, 3, 4, 5, 6));
    WANT_2D_I32(r, 2, 3, 99, 97, 94, 96, 91, 85);
    /* a map of maps, then join */
    r = RUN("def main(xs: [N]i32) where N % 2 == 0 =\n"
            "  xs |> split(2) |> map(row => row |> map(x => x * 10)) |> join",
            I32S(1, 2, 3, 4));
    WANT_I32(r, 10, 20, 30, 40);
    /* a reduce over rows with an array accumulator: column sums */
    r = RUN("def main(xs: [N]i32) where N % 3 == 0 =\n"
            "  xs |> split(3) |> reduce((a, b) => zip(a, b) |> map((x, y) => x + y), replicate(3, 0))",
            I32S(1, 2, 3, 4, 5, 6));
    WANT_I32(r, 5, 7, 9);
    /* a scan over rows with an array accumulator: running element-wise
     * differences, non-commutative */
    r = RUN("def main(xs: [N]i32) where N % 2 == 0 =\n"
            "  xs |> split(2) |> scan((a, b) => zip(a, b) |> map((x, y) => x - y), replicate(2, 0))",
            I32S(1, 2, 3, 4, 5, 6));
    WANT_2D_I32(r, 3, 2, -1, -2, -4, -6, -9, -12);
    /* rows of pairs: split of a zip is a tuple of two [n/k][k] arrays */
    r = RUN("def main(xs: [N]i32, ys: [N]i32) where N % 2 == 0 =\n"
            "  zip(xs, ys) |> split(2) |> map(row => row |> reduce((a, b) => (a.0 - b.0, a.1 * b.1), (0, 1)))",
            I32S(1, 2, 3, 4), I32S(5, 6, 7, 8));
    want_tuple_n(&r, 2);
    WANT_I32(*item(&r, 0), -3, -7);
    WANT_I32(*item(&r, 1), 30, 56);
}
END_TEST

START_TEST(transpose_rows_and_columns) {
    st_value r = RUN("def main(xs: [N]i32) where N % 3 == 0 = xs |> split(3) |> transpose", I32S(1, 2, 3, 4, 5, 6));
    WANT_2D_I32(r, 3, 2, 1, 4, 2, 5, 3, 6);
    r = RUN("def main(xs: [N]i32) where N % 3 == 0 = xs |> split(3) |> transpose |> transpose |> join",
            I32S(1, 2, 3, 4, 5, 6));
    WANT_I32(r, 1, 2, 3, 4, 5, 6);
    /* column sums through transpose, in order: digits per column */
    r = RUN("def main(xs: [N]i32) where N % 4 == 0 =\n"
            "  xs |> split(4) |> transpose |> map(col => col |> reduce((a, b) => a * 10 + b, 0))",
            I32S(1, 2, 3, 4, 5, 6, 7, 8));
    WANT_I32(r, 15, 26, 37, 48);
    /* a single row becomes a column */
    r = RUN("def main(xs: [N]i32) = xs |> split(N) |> transpose", I32S(1, 2, 3));
    WANT_2D_I32(r, 3, 1, 1, 2, 3);
}
END_TEST

/* transpose of an array of tuples transposes every component */
START_TEST(transpose_of_tuples) {
    st_value r = RUN("def main(xs: [N]i32, ys: [N]i64) where N % 3 == 0 = zip(xs, ys) |> split(3) |> transpose",
                     I32S(1, 2, 3, 4, 5, 6), I64S(10, 20, 30, 40, 50, 60));
    want_tuple_n(&r, 2);
    WANT_2D_I32(*item(&r, 0), 3, 2, 1, 4, 2, 5, 3, 6);
    check_array(item(&r, 1), ST_I64, 2, (const int64_t[]){3, 2}, (const int64_t[]){10, 40, 20, 50, 30, 60});
}
END_TEST

/* ------------------------------------------------------------------------ */
/* zip, unzip, iota, replicate                                              */
/* ------------------------------------------------------------------------ */

START_TEST(zip_and_unzip) {
    st_value r = RUN("def main(xs: [N]i32, ys: [N]f32) = zip(xs, ys)", I32S(1, 2), F32S(0.5f, 1.5f));
    want_tuple_n(&r, 2);
    WANT_I32(*item(&r, 0), 1, 2);
    WANT_F32(*item(&r, 1), 0.5f, 1.5f);
    r = RUN("def main(xs: [N]i32, ys: [N]i32) = zip(xs, ys) |> unzip", I32S(1, 2), I32S(3, 4));
    want_tuple_n(&r, 2);
    WANT_I32(*item(&r, 0), 1, 2);
    WANT_I32(*item(&r, 1), 3, 4);
    /* unzip of a computed array of triples */
    r = RUN("def main(xs: [N]i32) = xs |> map(x => (x, x * x, -x)) |> unzip", I32S(2, 3));
    want_tuple_n(&r, 3);
    WANT_I32(*item(&r, 0), 2, 3);
    WANT_I32(*item(&r, 1), 4, 9);
    WANT_I32(*item(&r, 2), -2, -3);
}
END_TEST

START_TEST(iota_and_replicate) {
    st_value r = RUN("def main(xs: [N]i32) = iota(N)", I32S(9, 9, 9, 9));
    WANT_I64(r, 0, 1, 2, 3);
    r = RUN("def main(xs: [N]i32) = iota(N) |> map(i => i * i - 1)", I32S(0, 0, 0));
    WANT_I64(r, -1, 0, 3);
    r = RUN("def main(xs: [N]i32) = iota(N + 2)", I32S(0));
    WANT_I64(r, 0, 1, 2);
    r = RUN("def main(x: i32) = replicate(3, x)", v_i32(7));
    WANT_I32(r, 7, 7, 7);
    /* replicate of a tuple: a tuple of replicated arrays */
    r = RUN("def main(x: i32) = replicate(2, (x, 2.5f64))", v_i32(-1));
    want_tuple_n(&r, 2);
    WANT_I32(*item(&r, 0), -1, -1);
    WANT_F64(*item(&r, 1), 2.5, 2.5);
    /* replicate of an array: rows */
    r = RUN("def main(xs: [N]i32) = replicate(2, xs)", I32S(1, 2, 3));
    WANT_2D_I32(r, 2, 3, 1, 2, 3, 1, 2, 3);
    /* a scalar i64 parameter as a length */
    r = RUN("def main(H: i64) = replicate(H, 0u32)", v_i64(2));
    check_flat(&r, ST_U32, (const uint32_t[]){0, 0}, 2);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* scatter and reduce_by_index                                              */
/* ------------------------------------------------------------------------ */

START_TEST(scatter_semantics) {
    /* index 1 is written twice (last wins); -1, 5 and 100 are out of range */
    const char *src = "def main(is: [N]i32, vs: [N]i32) = scatter(replicate(5, 0), is, vs)";
    st_value r = RUN(src, I32S(1, -1, 5, 1, 3, 100), I32S(10, 20, 30, 40, 50, 60));
    WANT_I32(r, 0, 40, 0, 50, 0);
    /* the destination keeps what is not written */
    r = RUN("def main(dest: [M]i32, is: [N]i64, vs: [N]i32) = scatter(dest, is, vs)",
            I32S(7, 8, 9), I64S(2, 0, -9223372036854775807LL - 1), I32S(1, 2, 3));
    WANT_I32(r, 2, 8, 1);
    /* unsigned indices past the end, the largest included, are ignored */
    r = RUN("def main(dest: [M]i32, is: [N]u32, vs: [N]i32) = scatter(dest, is, vs)",
            I32S(7, 8, 9), U32S(4294967295u, 3, 1), I32S(1, 2, 3));
    WANT_I32(r, 7, 3, 9);
    r = RUN("def main(dest: [M]i32, is: [N]u64, vs: [N]i32) = scatter(dest, is, vs)",
            I32S(7, 8, 9), U64S(UINT64_MAX, 0, 3), I32S(1, 2, 3));
    WANT_I32(r, 2, 8, 9);
}
END_TEST

/* Indices exactly at the end and just past it, into a destination large
 * enough for the arena to give it a block of its own: a write one past the
 * end then leaves the heap block, where AddressSanitizer sees it (in the
 * arena's padding nothing would). */
START_TEST(scatter_boundary_on_a_large_destination) {
    enum { M = 8192 };
    const char *src = "def main(is: [N]i64, vs: [N]i32) = (scatter(replicate(8192, 0), is, vs),\n"
                      "  reduce_by_index(replicate(8192, 0), +, 0, is, vs))";
    st_value r = RUN(src, I64S(M, M + 1, M - 1, -1), I32S(5, 6, 7, 8));
    int32_t *want = st_arena_zalloc(ar, M * sizeof *want);
    ck_assert(want != NULL);
    want[M - 1] = 7;
    check_flat(item(&r, 0), ST_I32, want, M);
    check_flat(item(&r, 1), ST_I32, want, M);
}
END_TEST

START_TEST(scatter_of_tuples) {
    st_value r = RUN("def main(as: [M]i32, bs: [M]f32, is: [N]i32, cs: [N]i32, ds: [N]f32) =\n"
                     "  scatter(zip(as, bs), is, zip(cs, ds))",
                     I32S(1, 2, 3), F32S(1.0f, 2.0f, 3.0f), I32S(2, 7, 0), I32S(30, 70, 10),
                     F32S(0.5f, 0.25f, 0.125f));
    want_tuple_n(&r, 2);
    WANT_I32(*item(&r, 0), 10, 2, 30);
    WANT_F32(*item(&r, 1), 0.125f, 2.0f, 0.5f);
}
END_TEST

/* scatterDistinct (what filter-scatter and partition-scatter make): a
 * scatter, in both forms, while its places in bounds are distinct; a
 * place written twice is an error that names the element, where scatter
 * keeps the last write. */
START_TEST(scatter_distinct_semantics) {
    st_value r = RUN("def main(is: [N]i32, vs: [N]i32) = scatterDistinct(replicate(5, 0), is, vs)",
                     I32S(1, -1, 5, 4, 3, 100, -1), I32S(10, 20, 30, 40, 50, 60, 70));
    WANT_I32(r, 0, 10, 0, 50, 40);
    r = RUN("def main(is: [N]i64, vs: [N]i32) = scatterDistinct(replicate(3, 9), zip(is, vs))", I64S(2, 0, 3),
            I32S(1, 2, 3));
    WANT_I32(r, 2, 9, 1);
    /* out of bounds more than once is no place written */
    r = RUN("def main(is: [N]i32) = scatterDistinct(replicate(2, 0), is, is)", I32S(-1, 1, -1, 7, 7));
    WANT_I32(r, 0, 1);
    FAILS("def main(is: [N]i32, vs: [N]i32) = scatterDistinct(replicate(5, 0), is, vs)",
          "element 3 writes place 1, which an earlier element wrote", "scatterDistinct", I32S(1, -1, 0, 1),
          I32S(10, 20, 30, 40));
    FAILS("def main(is: [N]i64, vs: [N]i32) = scatterDistinct(replicate(5, 0), zip(is, vs))",
          "its indices are not distinct", "scatterDistinct", I64S(4, 4), I32S(1, 2));
}
END_TEST

START_TEST(reduce_by_index_semantics) {
    /* counts; -1 and 4 are out of range for 4 buckets */
    st_value r = RUN("def main(is: [N]i32) = reduce_by_index(replicate(4, 0), +, 0, is, replicate(N, 1))",
                     I32S(0, 1, 1, 3, -1, 4, 1));
    WANT_I32(r, 1, 3, 0, 1);
    /* folded into dest[i] (not z) in order: ((5·10+1)·10+3)·10+4 = 5134 */
    r = RUN("def main(is: [N]i32, vs: [N]i32) = reduce_by_index(replicate(2, 5), (a, b) => a * 10 + b, 0, is, vs)",
            I32S(0, 1, 0, 0), I32S(1, 2, 3, 4));
    WANT_I32(r, 5134, 52);
    r = RUN("def main(dest: [M]i32, is: [N]i64, vs: [N]i32) = reduce_by_index(dest, max, -2147483648, is, vs)",
            I32S(0, 0, 100), I64S(2, 0, 0, 1, 9), I32S(50, -4, 3, -8, 999));
    WANT_I32(r, 3, 0, 100);
    /* tuples: a (sum, product) per bucket */
    r = RUN("def main(is: [N]i32, vs: [N]i32) =\n"
            "  reduce_by_index(zip(replicate(2, 0), replicate(2, 1)), (a, b) => (a.0 + b.0, a.1 * b.1), (0, 1),\n"
            "                  is, zip(vs, vs))",
            I32S(1, 1, 0, 1), I32S(2, 3, 4, 5));
    want_tuple_n(&r, 2);
    WANT_I32(*item(&r, 0), 4, 10);
    WANT_I32(*item(&r, 1), 4, 30);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* iterate, get                                                             */
/* ------------------------------------------------------------------------ */

START_TEST(iterate_semantics) {
    /* 1 → 3 → 7 → 15 */
    st_value r = RUN("def main(x: i32) = x |> iterate(3, y => y * 2 + 1)", v_i32(1));
    WANT_SCALAR(r, ST_I32, s_i32(15));
    r = RUN("def main(x: i32) = x |> iterate(0, y => y * 2 + 1)", v_i32(1));
    WANT_SCALAR(r, ST_I32, s_i32(1));
    /* destructuring a pair: Fibonacci (0, 1) → … → (5, 8) after 5 steps */
    r = RUN("def main(k: i32) = (0, 1) |> iterate(k, (a, b) => (b, a + b))", v_i32(5));
    want_tuple_n(&r, 2);
    WANT_SCALAR(*item(&r, 0), ST_I32, s_i32(5));
    WANT_SCALAR(*item(&r, 1), ST_I32, s_i32(8));
    /* an array state: [1, 1, 1] → [1, 2, 3] → [1, 3, 6] */
    r = RUN("def main(xs: [N]i32) = xs |> iterate(2, ys => ys |> scan(+, 0))", I32S(1, 1, 1));
    WANT_I32(r, 1, 3, 6);
}
END_TEST

START_TEST(get_semantics) {
    st_value r = RUN("def main(xs: [N]i32, i: i32) = xs |> get(i)", I32S(4, 5, 6), v_i32(2));
    WANT_SCALAR(r, ST_I32, s_i32(6));
    r = RUN("def main(xs: [N]i32) = get(0, xs)", I32S(4, 5, 6));
    WANT_SCALAR(r, ST_I32, s_i32(4));
    /* an element of an array of pairs is a pair */
    r = RUN("def main(xs: [N]i32, ys: [N]f32, i: i64) = zip(xs, ys) |> get(i)", I32S(1, 2), F32S(0.5f, 0.75f),
            v_i64(1));
    want_tuple_n(&r, 2);
    WANT_SCALAR(*item(&r, 0), ST_I32, s_i32(2));
    WANT_SCALAR(*item(&r, 1), ST_F32, s_f32(0.75f));
    /* an element of an array of rows is a row */
    r = RUN("def main(xs: [N]i32) where N % 2 == 0 = xs |> split(2) |> get(1)", I32S(1, 2, 3, 4));
    WANT_I32(r, 3, 4);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* let, if, tuples                                                          */
/* ------------------------------------------------------------------------ */

START_TEST(let_and_if) {
    st_value r = RUN("def main(x: i32) =\n  let (a, b) = (x + 1, x * 2)\n  in a - b", v_i32(5));
    WANT_SCALAR(r, ST_I32, s_i32(-4));
    /* shadowing: the inner x is the outer one plus one */
    r = RUN("def main(x: i32) =\n  let x = x + 1\n  let x = x * 10\n  in x", v_i32(2));
    WANT_SCALAR(r, ST_I32, s_i32(30));
    /* destructuring an unzip of triples; the order of components matters */
    r = RUN("def main(xs: [N]i32) =\n"
            "  let (a, b, c) = xs |> map(x => (x, x + 1, x + 2)) |> unzip\n"
            "  in zip(a, b, c) |> map((p, q, s) => p * 100 + q * 10 + s)",
            I32S(1, 4));
    WANT_I32(r, 123, 456);
    r = RUN("def main(x: i32) = if x > 0 then x else -x", v_i32(-9));
    WANT_SCALAR(r, ST_I32, s_i32(9));
    r = RUN("def main(x: i32) = if x > 0 then x else -x", v_i32(9));
    WANT_SCALAR(r, ST_I32, s_i32(9));
    /* only the branch taken is evaluated: no division by zero */
    r = RUN("def main(x: i32, y: i32) = if y == 0 then 0 else x / y", v_i32(7), v_i32(0));
    WANT_SCALAR(r, ST_I32, s_i32(0));
    /* if choosing between arrays */
    r = RUN("def main(xs: [N]i32, c: bool) = if c then xs else xs |> map(x => -x)", I32S(1, -2),
            scalar_of(ST_BOOL, s_bool(false)));
    WANT_I32(r, -1, 2);
}
END_TEST

/* A tuple result is a TUPLE value; st_value_leaves flattens nested tuples in
 * order, one leaf per output file. */
START_TEST(tuple_results_and_leaves) {
    st_value r = RUN("def main(xs: [N]i32, x: i64) = ((xs, x), xs |> map(y => y > 1))", I32S(1, 2), v_i64(9));
    want_tuple_n(&r, 2);
    want_tuple_n(item(&r, 0), 2);
    st_value leaves[4];
    ck_assert_uint_eq(st_value_leaves(&r, leaves, 4), 3);
    WANT_I32(leaves[0], 1, 2);
    WANT_SCALAR(leaves[1], ST_I64, s_i64(9));
    WANT_BOOL(leaves[2], false, true);
    /* a result of arrays of pairs counts each component as a leaf */
    r = RUN("def main(xs: [N]i32) = (zip(xs, xs), xs)", I32S(3));
    ck_assert_uint_eq(st_value_leaves(&r, leaves, 4), 3);
    /* max bounds what is written, not what is counted */
    ck_assert_uint_eq(st_value_leaves(&r, leaves, 1), 3);
}
END_TEST

/* scatter and reduce_by_index write into a copy: reading the values from the
 * destination itself sees the original, not what was already written. */
START_TEST(scatter_does_not_alias_its_destination) {
    st_value r = RUN("def main(xs: [N]i32, is: [N]i32) = scatter(xs, is, xs)", I32S(1, 2, 3), I32S(1, 2, 0));
    WANT_I32(r, 3, 1, 2);
    r = RUN("def main(xs: [N]i32, is: [N]i32) = reduce_by_index(xs, (a, b) => a * 10 + b, 0, is, xs)",
            I32S(1, 2, 3), I32S(1, 1, 0));
    WANT_I32(r, 13, 212, 3); /* dest[1] = (2·10 + 1)·10 + 2; dest[0] = 1·10 + 3 */
    /* the input array is left as it was */
    st_value xs = I32S(5, 6);
    r = RUN("def main(xs: [N]i32) = (scatter(xs, replicate(N, 0), replicate(N, 9)), xs)", xs);
    WANT_I32(*item(&r, 0), 9, 6);
    WANT_I32(*item(&r, 1), 5, 6);
}
END_TEST

/* A rank-3 array: transpose swaps the outer two dimensions and keeps the rows
 * of the innermost one whole; join flattens one level. A[i][j][k] = 6i + 3j + k. */
START_TEST(rank_three_arrays) {
    const char *cube = "def main(xs: [N]i32) where N % 6 == 0 = xs |> split(6) |> map(r => r |> split(3))";
    st_value iota12 = I32S(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
    st_value r = RUN(cube, iota12);
    check_array(&r, ST_I32, 3, (const int64_t[]){2, 2, 3}, (const int32_t[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
    r = RUN("def main(xs: [N]i32) where N % 6 == 0 = xs |> split(6) |> map(r => r |> split(3)) |> transpose", iota12);
    check_array(&r, ST_I32, 3, (const int64_t[]){2, 2, 3}, (const int32_t[]){0, 1, 2, 6, 7, 8, 3, 4, 5, 9, 10, 11});
    r = RUN("def main(xs: [N]i32) where N % 6 == 0 = xs |> split(6) |> map(r => r |> split(3)) |> transpose |> join",
            iota12);
    WANT_2D_I32(r, 4, 3, 0, 1, 2, 6, 7, 8, 3, 4, 5, 9, 10, 11);
    /* a map over the planes of the transposed cube, reducing each to a row */
    r = RUN("def main(xs: [N]i32) where N % 6 == 0 =\n"
            "  xs |> split(6) |> map(r => r |> split(3)) |> transpose\n"
            "  |> map(plane => plane |> reduce((a, b) => zip(a, b) |> map((x, y) => x * 100 + y), replicate(3, 0)))",
            iota12);
    WANT_2D_I32(r, 2, 3, 6, 107, 208, 309, 410, 511);
}
END_TEST

/* Tuples of tuples: zip of a zip, destructured one level at a time. */
START_TEST(nested_tuples) {
    st_value r = RUN("def main(xs: [N]i32, ys: [N]i32, zs: [N]i32) =\n"
                     "  zip(zip(xs, ys), zs) |> map((p, z) => p.0 * p.1 - z)",
                     I32S(1, 2), I32S(3, 4), I32S(5, 6));
    WANT_I32(r, -2, 2);
    r = RUN("def main(xs: [N]i32, ys: [N]i32, zs: [N]i32) = zip(zip(xs, ys), zs) |> unzip",
            I32S(1, 2), I32S(3, 4), I32S(5, 6));
    want_tuple_n(&r, 2);
    want_tuple_n(item(&r, 0), 2);
    WANT_I32(*item(item(&r, 0), 1), 3, 4);
    WANT_I32(*item(&r, 1), 5, 6);
    r = RUN("def main(x: i32) = let (a, b) = ((x, x + 1), x + 2) in (b, a.1, a.0)", v_i32(1));
    want_tuple_n(&r, 3);
    WANT_SCALAR(*item(&r, 0), ST_I32, s_i32(3));
    WANT_SCALAR(*item(&r, 1), ST_I32, s_i32(2));
    WANT_SCALAR(*item(&r, 2), ST_I32, s_i32(1));
}
END_TEST

/* Lambdas see the variables around them: parameters, lets, an enclosing
 * lambda's parameter, and the size variables as i64. */
START_TEST(lambdas_capture_their_scope) {
    st_value r = RUN("def main(xs: [N]i32, k: i32) = let m = k * 2 in xs |> map(x => x * m + k)", I32S(1, 2),
                     v_i32(3));
    WANT_I32(r, 9, 15);
    /* each element of a row scaled by the row's first element */
    r = RUN("def main(xs: [N]i32) where N % 2 == 0 = xs |> split(2) |> map(row => row |> map(x => x * get(0, row))) |> join",
            I32S(2, 3, 4, 5));
    WANT_I32(r, 4, 6, 16, 20);
    /* the inner x shadows the outer one */
    r = RUN("def main(xs: [N]i32) = xs |> map(x => iota(2) |> map(x => x + 10) |> reduce(+, i64(x)))", I32S(1, 100));
    WANT_I64(r, 22, 121);
    r = RUN("def main(xs: [N]i32) = xs |> map(x => i64(x) + N)", I32S(1, 2, 3));
    WANT_I64(r, 4, 5, 6);
}
END_TEST

/* A reduction inside a function that reads nothing the function binds is
 * computed once and kept (ir/interp.c); it is computed again whenever what it
 * reads is bound anew: each row, each turn of a loop, each call. */
START_TEST(a_value_kept_is_computed_again_when_what_it_reads_changes) {
    /* the same at every element: kept */
    st_value r = RUN("def main(xs: [N]i32) = xs |> map(x => x * reduce(+, 0, xs))", I32S(1, 2, 3));
    WANT_I32(r, 6, 12, 18);
    /* each row's own maximum, kept within the row and no further */
    r = RUN("def main(xs: [N]i32) where N % 3 == 0 = xs |> split(3)"
            " |> map(row => row |> map(x => x - reduce(max, -1000, row))) |> join",
            I32S(1, 5, 2, 9, 0, 4, -3, -1, -2));
    WANT_I32(r, -4, 0, -3, 0, -9, -5, -2, 0, -1);
    /* the accumulator is bound anew each turn */
    r = RUN("def main(xs: [N]i32) = loop acc = xs for i < 3 do acc |> map(x => x + reduce(+, 0, acc))", I32S(1, 2));
    WANT_I32(r, 40, 41); /* (1, 2) -> (4, 5) -> (13, 14) -> (40, 41) */
    /* a scan kept and read at each element; a sum of a let inside the
     * function, which is that call's own */
    r = RUN("def main(xs: [N]i32) = xs |> map(x => get(i64(x) % N, scan(+, 0, xs)))", I32S(3, 1, 2));
    WANT_I32(r, 3, 4, 6);
    r = RUN("def main(xs: [N]i32) = xs |> map(x => let ys = xs |> map(y => y * x) in reduce(+, 0, ys))", I32S(1, 2, 3));
    WANT_I32(r, 6, 12, 18);
    /* a def's operator that reads a kept value: reduce inside reduce */
    r = RUN("def main(xs: [N]i32) = xs |> reduce((a, b) => a + b * reduce(max, 0, xs), 0)", I32S(1, 2, 3));
    check_scalar(&r, ST_I32, s_i32(18));
    /* at a size where computing it per element is a billion steps */
    enum { n = 100003 };
    int32_t *x = st_arena_alloc(ar, n * sizeof *x);
    int64_t sum = 0;
    for (int64_t i = 0; i < n; i++) sum += x[i] = (int32_t)((i * 7919) % 1000) - 500;
    r = RUN("def main(xs: [N]i32) = xs |> map(x => i64(x) * N - reduce(+, 0, xs |> map(y => i64(y))))",
            arr(ST_I32, x, n));
    ck_assert_int_eq(r.u.a.dims[0], n);
    for (int64_t i = 0; i < n; i++) ck_assert_int_eq(((const int64_t *)r.u.a.data)[i], (int64_t)x[i] * n - sum);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Empty arrays and singletons: every primitive                             */
/* ------------------------------------------------------------------------ */

START_TEST(every_primitive_on_empty_arrays) {
    st_value e = EMPTY(ST_I32);
    st_value r = RUN("def main(xs: [N]i32) = xs |> map(x => x + 1)", e);
    WANT_EMPTY(r, ST_I32);
    r = RUN("def main(xs: [N]i32) = xs |> mapSeq(x => f64(x))", e);
    WANT_EMPTY(r, ST_F64);
    r = RUN("def main(xs: [N]i32) = xs |> reduce(-, 5)", e);
    WANT_SCALAR(r, ST_I32, s_i32(5));
    r = RUN("def main(xs: [N]i32) = xs |> scan(-, 5)", e);
    WANT_EMPTY(r, ST_I32);
    r = RUN("def main(xs: [N]i32) = xs |> reduceSeq((acc, x) => acc + f64(x), 1.5f64)", e);
    WANT_SCALAR(r, ST_F64, s_f64(1.5));
    r = RUN("def main(xs: [N]i32) = xs |> scanSeq((acc, x) => acc + f64(x), 1.5f64)", e);
    WANT_EMPTY(r, ST_F64);
    r = RUN("def main(xs: [N]i32) where N % 4 == 0 = xs |> split(4)", e);
    WANT_2D_EMPTY(r, ST_I32, 0, 4);
    r = RUN("def main(xs: [N]i32) where N % 4 == 0 = xs |> split(4) |> join", e);
    WANT_EMPTY(r, ST_I32);
    r = RUN("def main(xs: [N]i32) where N % 4 == 0 = xs |> split(4) |> map(row => row |> reduce(+, 0))", e);
    WANT_EMPTY(r, ST_I32);
    /* transposing [0][4] gives four empty columns, and their sums are z */
    r = RUN("def main(xs: [N]i32) where N % 4 == 0 = xs |> split(4) |> transpose", e);
    WANT_2D_EMPTY(r, ST_I32, 4, 0);
    r = RUN("def main(xs: [N]i32) where N % 4 == 0 = xs |> split(4) |> transpose |> map(c => c |> reduce(+, 3))", e);
    WANT_I32(r, 3, 3, 3, 3);
    r = RUN("def main(xs: [N]i32, ys: [N]f32) = zip(xs, ys)", e, EMPTY(ST_F32));
    want_tuple_n(&r, 2);
    WANT_EMPTY(*item(&r, 0), ST_I32);
    WANT_EMPTY(*item(&r, 1), ST_F32);
    r = RUN("def main(xs: [N]i32, ys: [N]f32) = zip(xs, ys) |> unzip", e, EMPTY(ST_F32));
    want_tuple_n(&r, 2);
    WANT_EMPTY(*item(&r, 1), ST_F32);
    r = RUN("def main(xs: [N]i32) = iota(N)", e);
    WANT_EMPTY(r, ST_I64);
    r = RUN("def main(xs: [N]i32) = replicate(N, 7)", e);
    WANT_EMPTY(r, ST_I32);
    r = RUN("def main(is: [N]i32, vs: [N]i32) = scatter(replicate(3, 9), is, vs)", e, e);
    WANT_I32(r, 9, 9, 9);
    r = RUN("def main(dest: [N]i32, is: [M]i32, vs: [M]i32) = scatter(dest, is, vs)", e, I32S(0, -1), I32S(1, 2));
    WANT_EMPTY(r, ST_I32);
    r = RUN("def main(is: [N]i32, vs: [N]i32) = reduce_by_index(replicate(3, 9), +, 0, is, vs)", e, e);
    WANT_I32(r, 9, 9, 9);
    r = RUN("def main(dest: [N]i32, is: [M]i32) = reduce_by_index(dest, +, 0, is, replicate(M, 1))", e, I32S(0, 1));
    WANT_EMPTY(r, ST_I32);
    r = RUN("def main(xs: [N]i32) = xs |> iterate(3, ys => ys |> map(y => y * 2))", e);
    WANT_EMPTY(r, ST_I32);
    r = RUN("def main(xs: [N]i32) = xs |> toLocal |> mapLcl(x => x) |> toGlobal", e);
    WANT_EMPTY(r, ST_I32);
    r = RUN("def main(H: i64) = reduce_by_index(replicate(H, 0), +, 0, iota(3), replicate(3, 1))", v_i64(0));
    WANT_EMPTY(r, ST_I32);
}
END_TEST

START_TEST(every_primitive_on_singletons) {
    st_value one = I32S(-4);
    st_value r = RUN("def main(xs: [N]i32) = xs |> map(x => x * x)", one);
    WANT_I32(r, 16);
    r = RUN("def main(xs: [N]i32) = xs |> reduce(-, 10)", one);
    WANT_SCALAR(r, ST_I32, s_i32(14));
    r = RUN("def main(xs: [N]i32) = xs |> scan(-, 10)", one);
    WANT_I32(r, 14);
    r = RUN("def main(xs: [N]i32) = xs |> reduceSeq((a, x) => a - i64(x), 1i64)", one);
    WANT_SCALAR(r, ST_I64, s_i64(5));
    r = RUN("def main(xs: [N]i32) = xs |> scanSeq((a, x) => a - i64(x), 1i64)", one);
    WANT_I64(r, 5);
    r = RUN("def main(xs: [N]i32) = xs |> split(1)", one);
    WANT_2D_I32(r, 1, 1, -4);
    r = RUN("def main(xs: [N]i32) = xs |> split(1) |> transpose |> join", one);
    WANT_I32(r, -4);
    r = RUN("def main(xs: [N]i32) = zip(xs, iota(N)) |> map((x, i) => i64(x) + i)", one);
    WANT_I64(r, -4);
    r = RUN("def main(xs: [N]i32) = iota(N)", one);
    WANT_I64(r, 0);
    r = RUN("def main(xs: [N]i32) = replicate(N, xs)", one);
    WANT_2D_I32(r, 1, 1, -4);
    r = RUN("def main(xs: [N]i32) = scatter(xs, replicate(N, 0), replicate(N, 3))", one);
    WANT_I32(r, 3);
    r = RUN("def main(xs: [N]i32) = scatter(xs, replicate(N, 1), replicate(N, 3))", one);
    WANT_I32(r, -4);
    r = RUN("def main(xs: [N]i32) = reduce_by_index(xs, -, 0, replicate(N, 0), replicate(N, 3))", one);
    WANT_I32(r, -7);
    r = RUN("def main(xs: [N]i32) = xs |> iterate(1, ys => ys |> scan(+, 1))", one);
    WANT_I32(r, -3);
    r = RUN("def main(xs: [N]i32) = xs |> get(0)", one);
    WANT_SCALAR(r, ST_I32, s_i32(-4));
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Scalar operators                                                         */
/* ------------------------------------------------------------------------ */

/* `def main(x: T, y: T) = expr` on (x, y). */
static st_value op2(const char *type, const char *expr, st_value x, st_value y) {
    char *src = st_arena_alloc(ar, 256);
    ck_assert(src != NULL);
    snprintf(src, 256, "def main(x: %s, y: %s) = %s", type, type, expr);
    return RUN(src, x, y);
}


/* The scalar of kind k whose bits are v's low bits: how a table written in
 * int64_t reads in the case's own type. */
static st_scalar s_int(st_scalar_kind k, int64_t v) {
    switch (k) {
    case ST_BOOL: return s_bool(v != 0);
    case ST_I32: return s_i32((int32_t)(uint32_t)(uint64_t)v);
    case ST_U32: return s_u32((uint32_t)(uint64_t)v);
    case ST_I64: return s_i64(v);
    default: return s_u64((uint64_t)v);
    }
}

typedef struct int_case {
    const char *expr;
    int64_t x, y, want; /* read in the table's type; a comparison's want is 0 or 1 */
} int_case;

/* Evaluate every case on parameters of kind k and compare bit for bit. */
static void int_cases(st_scalar_kind k, const int_case *cases, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const int_case *c = &cases[i];
        st_value r = op2(st_scalar_name(k), c->expr, scalar_of(k, s_int(k, c->x)), scalar_of(k, s_int(k, c->y)));
        ck_assert_msg(r.kind == ST_VALUE_SCALAR, "%s: not a scalar", c->expr);
        st_scalar want = s_int(r.scalar, c->want);
        ck_assert_msg(same_scalar(r.scalar, r.u.s, want), "%s on %s x = %s, y = %lld: expected %s, got %s",
                      c->expr, st_scalar_name(k), fmt(k, s_int(k, c->x)), (long long)c->y,
                      fmt(r.scalar, want), fmt(r.scalar, r.u.s));
    }
}

#define INT_CASES(k, table) int_cases((k), (table), sizeof(table) / sizeof *(table))

START_TEST(i32_operators) {
    static const int_case cases[] = {
        /* wrap-around like C's fixed width */
        {"x + y", INT32_MAX, 1, INT32_MIN},
        {"x - y", INT32_MIN, 1, INT32_MAX},
        {"x * y", 65536, 65536, 0},
        {"x * y", 65537, 65537, 131073},
        {"x * y", INT32_MIN, -1, INT32_MIN},
        {"-x", INT32_MIN, 0, INT32_MIN},
        /* division truncates toward zero; the remainder takes the dividend's sign */
        {"x / y", -7, 2, -3},
        {"x % y", -7, 2, -1},
        {"x / y", 7, -2, -3},
        {"x % y", 7, -2, 1},
        {"x / y", INT32_MIN, -1, INT32_MIN},
        {"x % y", INT32_MIN, -1, 0},
        {"x / y", INT32_MIN, 1, INT32_MIN},
        /* bits */
        {"x & y", 12, 10, 8},
        {"x | y", 12, 10, 14},
        {"x ^ y", 12, 10, 6},
        {"x ^ y", -1, 5, -6},
        /* shifts: the count modulo 32 (OpenCL); >> arithmetic */
        {"x << y", 1, 31, INT32_MIN},
        {"x << y", 1, 32, 1},
        {"x << y", 1, 33, 2},
        {"x << y", 3, -1, INT32_MIN},
        {"x >> y", -8, 1, -4},
        {"x >> y", -1, 31, -1},
        {"x >> y", INT32_MIN, 31, -1},
        {"x >> y", -8, 33, -4},
        {"x >> y", 1024, 36, 64},
        {"x >> y", INT32_MAX, 30, 1},
        /* min, max and comparisons are signed */
        {"min(x, y)", -3, 2, -3},
        {"max(x, y)", -3, 2, 2},
        {"x < y", -1, 1, 1},
        {"x >= y", -1, 1, 0},
        {"x <= y", 5, 5, 1},
        {"x > y", INT32_MIN, INT32_MAX, 0},
        {"x == y", 5, 5, 1},
        {"x != y", 5, 5, 0},
        /* C's precedence and left associativity */
        {"x + y * 2", 1, 3, 7},
        {"x - y - 1", 10, 3, 6},
        {"x / y / 2", 100, 5, 10},
        {"x << 1 + y", 1, 2, 8},
        {"x | y ^ 3 & 5", 8, 6, 15},
        {"-x * y", 3, 4, -12},
    };
    INT_CASES(ST_I32, cases);
}
END_TEST

START_TEST(u32_operators) {
    static const int_case cases[] = {
        {"x - y", 0, 1, 4294967295LL},
        {"x + y", 4294967295LL, 1, 0},
        {"x * y", 65536, 65536, 0},
        {"-x", 1, 0, 4294967295LL},
        {"x / y", 4294967295LL, 2, 2147483647},
        {"x % y", 4294967295LL, 10, 5},
        /* unsigned comparisons, min and max */
        {"x > y", 4294967295LL, 1, 1},
        {"x < y", 2147483648LL, 1, 0},
        {"max(x, y)", 4294967295LL, 1, 4294967295LL},
        {"min(x, y)", 2147483648LL, 2147483647, 2147483647},
        /* >> is logical on unsigned */
        {"x >> y", 2147483648LL, 31, 1},
        {"x >> y", 4294967295LL, 4, 0x0fffffff},
        {"x >> y", 4294967295LL, 36, 0x0fffffff},
        {"x << y", 4294967295LL, 4, 0xfffffff0LL},
        {"x << y", 1, 32, 1},
    };
    INT_CASES(ST_U32, cases);
}
END_TEST

START_TEST(i64_operators) {
    static const int_case cases[] = {
        {"x + y", INT64_MAX, 1, INT64_MIN},
        {"x - y", INT64_MIN, 1, INT64_MAX},
        {"x * y", 4294967296LL, 4294967296LL, 0},
        {"x * y", 3037000500LL, 3037000500LL, -9223372036709301616LL},
        {"-x", INT64_MIN, 0, INT64_MIN},
        {"x / y", INT64_MIN, -1, INT64_MIN},
        {"x % y", INT64_MIN, -1, 0},
        {"x / y", -9, 4, -2},
        {"x % y", -9, 4, -1},
        {"x << y", 1, 63, INT64_MIN},
        {"x << y", 1, 64, 1},
        {"x << y", 1, 32, 4294967296LL},
        {"x >> y", -16, 2, -4},
        {"x >> y", INT64_MIN, 63, -1},
        {"x >> y", -16, 66, -4},
        {"x < y", -1, 0, 1},
        {"max(x, y)", INT64_MIN, -1, -1},
        {"x ^ y", -1, 0, -1},
    };
    INT_CASES(ST_I64, cases);
}
END_TEST

/* u64 parameters stay below 2^63 (the harness binds them as sizes); the large
 * values come from wrapping 0 - 1. */
START_TEST(u64_operators) {
    static const int_case cases[] = {
        {"x - y", 0, 1, -1},
        {"(x - y) / 2", 0, 1, INT64_MAX},
        {"(x - y) > y", 0, 1, 1},
        {"(x - y) >> 60", 0, 1, 15},
        {"(x - y) % 10", 0, 1, 5},
        {"max(x - y, y)", 0, 1, -1},
        {"min(x - y, y)", 0, 1, 1},
        {"x * y", 4294967296LL, 4294967296LL, 0},
        {"x << y", 1, 63, INT64_MIN},
        {"-x", 1, 0, -1},
    };
    INT_CASES(ST_U64, cases);
}
END_TEST

START_TEST(bool_operators) {
    static const int_case cases[] = {
        {"x && y", 1, 0, 0}, {"x && y", 1, 1, 1}, {"x || y", 0, 0, 0}, {"x || y", 0, 1, 1},
        {"x ^ y", 1, 1, 0},  {"x ^ y", 1, 0, 1},  {"x & y", 1, 0, 0},  {"x | y", 0, 1, 1},
        {"x == y", 0, 0, 1}, {"x != y", 0, 1, 1}, {"!x", 1, 0, 0},     {"!x && !y", 0, 0, 1},
        {"x || y && false", 1, 0, 1}, /* && binds tighter */
    };
    INT_CASES(ST_BOOL, cases);
}
END_TEST

typedef struct float_case {
    const char *expr;
    double x, y, want; /* a comparison's want is 0 or 1 */
} float_case;

static st_scalar s_float(st_scalar_kind k, double v) { return k == ST_F32 ? s_f32((float)v) : s_f64(v); }

static void float_cases(st_scalar_kind k, const float_case *cases, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const float_case *c = &cases[i];
        st_value r = op2(st_scalar_name(k), c->expr, scalar_of(k, s_float(k, c->x)), scalar_of(k, s_float(k, c->y)));
        ck_assert_msg(r.kind == ST_VALUE_SCALAR, "%s: not a scalar", c->expr);
        st_scalar want = r.scalar == ST_BOOL ? s_bool(c->want != 0) : s_float(r.scalar, c->want);
        ck_assert_msg(r.scalar == ST_BOOL || r.scalar == k, "%s: result is %s", c->expr, st_scalar_name(r.scalar));
        ck_assert_msg(same_scalar(r.scalar, r.u.s, want), "%s on %s x = %g, y = %g: expected %s, got %s", c->expr,
                      st_scalar_name(k), c->x, c->y, fmt(r.scalar, want), fmt(r.scalar, r.u.s));
    }
}

#define FLOAT_CASES(k, table) float_cases((k), (table), sizeof(table) / sizeof *(table))

/* f32 computes in f32: every operation rounds to single precision, so
 * 2^24 + 1 + 1 stays 2^24 (computing in double and rounding once would give
 * 2^24 + 2). */
START_TEST(f32_operators) {
    static const float_case cases[] = {
        {"x + y", 16777216.0, 1.0, 16777216.0},
        {"x + y + y", 16777216.0, 1.0, 16777216.0},
        {"(x + y) - x", 1e8, 1.0, 0.0},
        {"x * y", 1e30, 1e30, INFINITY},
        {"x / y", 1.0, 0.0, INFINITY},
        {"x / y", -1.0, 0.0, -INFINITY},
        {"x / y", 0.0, 0.0, NAN},
        {"x % y", 7.5, 2.0, 1.5},
        {"x % y", -7.5, 2.0, -1.5},
        {"x - y", 0.5, 0.25, 0.25},
        {"min(x, y)", -0.5, 2.0, -0.5},
        {"max(x, y)", -0.5, 2.0, 2.0},
        {"-x", 0.5, 0.0, -0.5},
        {"x < y", 1.0, 2.0, 1},
        {"x == y", NAN, NAN, 0},
        {"x != y", NAN, NAN, 1},
        {"x < y", NAN, 1.0, 0},
        {"x >= y", NAN, 1.0, 0},
    };
    FLOAT_CASES(ST_F32, cases);
}
END_TEST

START_TEST(f64_operators) {
    static const float_case cases[] = {
        {"x + y", 16777216.0, 1.0, 16777217.0},
        {"x + y + y", 16777216.0, 1.0, 16777218.0},
        {"(x + y) - x", 1e8, 1.0, 1.0},
        {"x + y", 9007199254740992.0, 1.0, 9007199254740992.0},
        {"x * y", 1e30, 1e30, 1e30 * 1e30}, /* finite in f64, inf in f32 */
        {"x / y", 1.0, 0.0, INFINITY},
        {"x % y", -7.5, 2.0, -1.5},
        {"x <= y", 2.0, 2.0, 1},
    };
    FLOAT_CASES(ST_F64, cases);
}
END_TEST

/* The width shows in folds as well: four 1s added to 2^24 in f32 and f64. */
/* sqrt, exp and log of floats as C's; abs of every kind, an integer's
 * minimum its own abs (its negation wraps, as -'s does), unsigned as is */
START_TEST(math_functions) {
    st_value r = RUN("def main(x: f32, y: f64) = (sqrt(x), exp(x), log(x), sqrt(y), exp(y), log(y), abs(-x), abs(y))",
                     scalar_of(ST_F32, s_f32(2.0f)), scalar_of(ST_F64, s_f64(-0.5)));
    want_tuple_n(&r, 8);
    check_scalar(item(&r, 0), ST_F32, s_f32(sqrtf(2.0f)));
    check_scalar(item(&r, 1), ST_F32, s_f32(expf(2.0f)));
    check_scalar(item(&r, 2), ST_F32, s_f32(logf(2.0f)));
    ck_assert(isnan(item(&r, 3)->u.s.f64));
    check_scalar(item(&r, 4), ST_F64, s_f64(exp(-0.5)));
    ck_assert(isnan(item(&r, 5)->u.s.f64));
    check_scalar(item(&r, 6), ST_F32, s_f32(2.0f));
    check_scalar(item(&r, 7), ST_F64, s_f64(0.5));
    r = RUN("def main(xs: [N]i32) = xs |> map(x => abs(x))", I32S(-7, 0, 7, INT32_MIN, INT32_MAX));
    WANT_I32(r, 7, 0, 7, INT32_MIN, INT32_MAX);
    r = RUN("def main(x: i32) = (abs(i8(x)), abs(i16(x)), abs(i64(x) - 3000000000), abs(u8(x)), abs(u32(x)))",
            v_i32(-128));
    want_tuple_n(&r, 5);
    ck_assert_int_eq(item(&r, 0)->u.s.i8, -128);
    ck_assert_int_eq(item(&r, 1)->u.s.i16, 128);
    ck_assert_int_eq(item(&r, 2)->u.s.i64, 3000000128);
    ck_assert_uint_eq(item(&r, 3)->u.s.u8, 128);
    ck_assert_uint_eq(item(&r, 4)->u.s.u32, (uint32_t)-128);
}
END_TEST

START_TEST(float_width_in_folds) {
    st_value r = RUN("def main(xs: [N]f32) = xs |> reduce(+, 16777216.0)", F32S(1));
    WANT_SCALAR(r, ST_F32, s_f32(16777216.0f));
    /* the ones are combined first (a tree), then the seed: 2^24 + 4 */
    r = RUN("def main(xs: [N]f32) = xs |> reduce(+, 16777216.0)", F32S(1, 1, 1, 1));
    WANT_SCALAR(r, ST_F32, s_f32(16777220.0f));
    r = RUN("def main(xs: [N]f32) = xs |> map(x => f64(x)) |> reduce(+, 16777216.0)", F32S(1, 1, 1, 1));
    WANT_SCALAR(r, ST_F64, s_f64(16777220.0));
    r = RUN("def main(x: f32) = 16777216.0f32 + x == 16777216.0", scalar_of(ST_F32, s_f32(1.0f)));
    WANT_SCALAR(r, ST_BOOL, s_bool(true));
    r = RUN("def main(x: f64) = 16777216.0f64 + x == 16777216.0", scalar_of(ST_F64, s_f64(1.0)));
    WANT_SCALAR(r, ST_BOOL, s_bool(false));
}
END_TEST

/* Floats are combined in a balanced tree (issue 46): a left fold of 10^6
 * times 0.1 in f32 is 100958.34, about 1% off; a tree is within a few ulps
 * of the exact 10^6 · f32(0.1) = 100000.0015, and so is each prefix of a
 * scan, exclusive or not, and a histogram's bucket. Integers fold as ever. */
START_TEST(float_folds_are_trees) {
    const double exact = 1e6 * (double)0.1f, ulp = 100000.0 * FLT_EPSILON;
    st_value n = scalar_of(ST_I64, (st_scalar){.i64 = 1000000});
    st_value r = RUN("def main(n: i64) = replicate(n, 0.1f32) |> reduce(+, 0.0)", n);
    ck_assert_msg(fabs(r.u.s.f32 - exact) <= 4 * ulp, "%.9g", r.u.s.f32);
    r = RUN("def main(n: i64) = let s = replicate(n, 0.1f32) |> scan(+, 0.0) in (s[n - 1], s[n / 2 - 1], s[0])", n);
    ck_assert_msg(fabs(item(&r, 0)->u.s.f32 - exact) <= 4 * ulp, "%.9g", item(&r, 0)->u.s.f32);
    ck_assert_msg(fabs(item(&r, 1)->u.s.f32 - exact / 2) <= 4 * ulp, "%.9g", item(&r, 1)->u.s.f32);
    ck_assert(item(&r, 2)->u.s.f32 == 0.1f);
    r = RUN("def main(n: i64) = let s = replicate(n, 0.1f32) |> exscan(+, 1.0) in (s[n - 1], s[0])", n);
    ck_assert_msg(fabs(item(&r, 0)->u.s.f32 - (exact + 1.0 - 0.1)) <= 4 * ulp, "%.9g", item(&r, 0)->u.s.f32);
    ck_assert(item(&r, 1)->u.s.f32 == 1.0f);
    r = RUN("def main(n: i64) = reduce_by_index(replicate(2, 0.0f32), +, 0.0, iota(n) |> map(i => i % 2), "
            "replicate(n, 0.1f32))",
            n);
    const float *h = r.u.a.data;
    ck_assert_msg(fabs(h[0] - exact / 2) <= 4 * ulp && fabs(h[1] - exact / 2) <= 4 * ulp, "%.9g %.9g", h[0], h[1]);
    /* pairs of a float and an integer: the tree too, the integer exact */
    r = RUN("def main(n: i64) = zip(replicate(n, 0.1f32), replicate(n, 3)) |> reduce((a, b) => (a.0 + b.0, a.1 + b.1), "
            "(0.0, 0))",
            n);
    ck_assert_msg(fabs(item(&r, 0)->u.s.f32 - exact) <= 4 * ulp, "%.9g", item(&r, 0)->u.s.f32);
    ck_assert_int_eq(item(&r, 1)->u.s.i32, 3000000);
}
END_TEST

/* `def main(x: FROM) = TO(x)` on x. */
static void conv(st_scalar_kind from, st_scalar x, st_scalar_kind to, st_scalar want) {
    char *src = st_arena_alloc(ar, 128);
    ck_assert(src != NULL);
    snprintf(src, 128, "def main(x: %s) = %s(x)", st_scalar_name(from), st_scalar_name(to));
    st_value r = RUN(src, scalar_of(from, x));
    ck_assert_msg(r.kind == ST_VALUE_SCALAR && r.scalar == to, "%s: wrong result kind", src);
    ck_assert_msg(same_scalar(to, r.u.s, want), "%s(%s %s): expected %s, got %s", st_scalar_name(to),
                  st_scalar_name(from), fmt(from, x), fmt(to, want), fmt(to, r.u.s));
}

START_TEST(float_to_int_truncates_and_saturates) {
    conv(ST_F64, s_f64(2.9), ST_I32, s_i32(2));
    conv(ST_F64, s_f64(-2.9), ST_I32, s_i32(-2));
    conv(ST_F64, s_f64(3e9), ST_I32, s_i32(INT32_MAX));
    conv(ST_F64, s_f64(-3e9), ST_I32, s_i32(INT32_MIN));
    conv(ST_F64, s_f64(2147483647.9), ST_I32, s_i32(INT32_MAX));
    conv(ST_F64, s_f64(-2147483648.9), ST_I32, s_i32(INT32_MIN));
    conv(ST_F64, s_f64(INFINITY), ST_I32, s_i32(INT32_MAX));
    conv(ST_F64, s_f64(-INFINITY), ST_I32, s_i32(INT32_MIN));
    conv(ST_F64, s_f64(NAN), ST_I32, s_i32(0));
    conv(ST_F64, s_f64(-1.5), ST_U32, s_u32(0));
    conv(ST_F64, s_f64(-0.5), ST_U32, s_u32(0));
    conv(ST_F64, s_f64(5e9), ST_U32, s_u32(UINT32_MAX));
    conv(ST_F64, s_f64(4294967295.5), ST_U32, s_u32(UINT32_MAX));
    conv(ST_F64, s_f64(NAN), ST_U32, s_u32(0));
    conv(ST_F64, s_f64(1e19), ST_I64, s_i64(INT64_MAX));
    conv(ST_F64, s_f64(-1e19), ST_I64, s_i64(INT64_MIN));
    conv(ST_F64, s_f64(-INFINITY), ST_I64, s_i64(INT64_MIN));
    conv(ST_F64, s_f64(-2.5), ST_I64, s_i64(-2));
    conv(ST_F64, s_f64(NAN), ST_I64, s_i64(0));
    conv(ST_F64, s_f64(-1.0), ST_U64, s_u64(0));
    conv(ST_F64, s_f64(1e19), ST_U64, s_u64(10000000000000000000ULL));
    conv(ST_F64, s_f64(2e19), ST_U64, s_u64(UINT64_MAX));
    conv(ST_F64, s_f64(INFINITY), ST_U64, s_u64(UINT64_MAX));
    conv(ST_F64, s_f64(NAN), ST_U64, s_u64(0));
    conv(ST_F32, s_f32(-2.75f), ST_I32, s_i32(-2));
    conv(ST_F32, s_f32(2147483648.0f), ST_I32, s_i32(INT32_MAX));
    conv(ST_F32, s_f32(NAN), ST_I32, s_i32(0));
    conv(ST_F32, s_f32(1e19f), ST_U64, s_u64(9999999980506447872ULL));
    conv(ST_F32, s_f32(-INFINITY), ST_U64, s_u64(0));
}
END_TEST

START_TEST(int_conversions_wrap) {
    conv(ST_I32, s_i32(-1), ST_U32, s_u32(UINT32_MAX));
    conv(ST_U32, s_u32(UINT32_MAX), ST_I32, s_i32(-1));
    conv(ST_I32, s_i32(-1), ST_I64, s_i64(-1));         /* sign-extends */
    conv(ST_I32, s_i32(-1), ST_U64, s_u64(UINT64_MAX)); /* sign-extends, then reinterprets */
    conv(ST_U32, s_u32(UINT32_MAX), ST_I64, s_i64(4294967295LL)); /* zero-extends */
    conv(ST_U32, s_u32(UINT32_MAX), ST_U64, s_u64(4294967295ULL));
    conv(ST_I64, s_i64(4294967297LL), ST_I32, s_i32(1)); /* keeps the low bits */
    conv(ST_I64, s_i64(-1), ST_U32, s_u32(UINT32_MAX));
    conv(ST_I64, s_i64(INT64_MIN), ST_I32, s_i32(0));
    conv(ST_I64, s_i64(-1), ST_U64, s_u64(UINT64_MAX));
    conv(ST_U64, s_u64(INT64_MAX), ST_I32, s_i32(-1));
}
END_TEST

START_TEST(conversions_to_and_from_floats_and_bools) {
    conv(ST_I32, s_i32(16777217), ST_F32, s_f32(16777216.0f));
    conv(ST_I32, s_i32(16777217), ST_F64, s_f64(16777217.0));
    conv(ST_I32, s_i32(-16777217), ST_F32, s_f32(-16777216.0f));
    conv(ST_U32, s_u32(UINT32_MAX), ST_F32, s_f32(4294967296.0f));
    conv(ST_I64, s_i64(INT64_MAX), ST_F64, s_f64(9223372036854775808.0));
    conv(ST_I64, s_i64(9007199254740993LL), ST_F64, s_f64(9007199254740992.0));
    /* rounded once, straight to f32: 2^53 + 2^29 + 1 is just above the
     * midpoint of 2^53 and 2^53 + 2^30 (going through f64 would land on the
     * midpoint and round to even, down to 2^53) */
    conv(ST_I64, s_i64(9007199791611905LL), ST_F32, s_f32(9007200328482816.0f));
    conv(ST_U64, s_u64(INT64_MAX), ST_F64, s_f64(9223372036854775808.0));
    conv(ST_F64, s_f64(1e40), ST_F32, s_f32(INFINITY));
    conv(ST_F64, s_f64(0.1), ST_F32, s_f32(0.1f));
    conv(ST_F64, s_f64(16777217.0), ST_F32, s_f32(16777216.0f));
    conv(ST_F32, s_f32(0.1f), ST_F64, s_f64((double)0.1f));
    conv(ST_I32, s_i32(2), ST_BOOL, s_bool(true));
    conv(ST_I32, s_i32(0), ST_BOOL, s_bool(false));
    conv(ST_I64, s_i64(4294967296LL), ST_BOOL, s_bool(true)); /* non-zero, though its low half is zero */
    conv(ST_U32, s_u32(0), ST_BOOL, s_bool(false));
    conv(ST_F64, s_f64(0.5), ST_BOOL, s_bool(true));
    conv(ST_F64, s_f64(-0.0), ST_BOOL, s_bool(false));
    conv(ST_BOOL, s_bool(true), ST_I32, s_i32(1));
    conv(ST_BOOL, s_bool(true), ST_F32, s_f32(1.0f));
    conv(ST_BOOL, s_bool(false), ST_U64, s_u64(0));
    conv(ST_BOOL, s_bool(true), ST_U64, s_u64(1));
}
END_TEST

/* && and || do not evaluate their right side when the left decides. */
START_TEST(logic_short_circuits) {
    st_value r = op2("i32", "y != 0 && x / y > 1", v_i32(7), v_i32(0));
    WANT_SCALAR(r, ST_BOOL, s_bool(false));
    r = op2("i32", "y == 0 || x / y > 1", v_i32(7), v_i32(0));
    WANT_SCALAR(r, ST_BOOL, s_bool(true));
    r = op2("i32", "y != 0 && x / y > 1", v_i32(7), v_i32(2));
    WANT_SCALAR(r, ST_BOOL, s_bool(true));
    /* the same guard inside a map over an array containing zeros */
    r = RUN("def main(xs: [N]i32) = xs |> map(x => x != 0 && 12 / x > 3)", I32S(0, 2, 6, 0));
    WANT_BOOL(r, false, true, false, false);
    /* without the guard first, the division is evaluated */
    FAILS("def main(x: i32, y: i32) = y == 0 && x / y > 1", "division by zero", "x / y", v_i32(7), v_i32(0));
    FAILS("def main(x: i32, y: i32) = x / y > 1 || true", "division by zero", "x / y", v_i32(7), v_i32(0));
}
END_TEST

/* ------------------------------------------------------------------------ */
/* scan and reduce with a fold (and a post-function), scatter of pairs      */
/* ------------------------------------------------------------------------ */

/* scan(op, fold, z, xs): element i is fold(…fold(fold(z, x0), x1)…, xi).
 * A fold that is not associative (digits in order) pins the order; the
 * operator only combines accumulators in a parallel version, so the
 * reference does not use it and changing it changes nothing. */
START_TEST(scanomap_folds_left_from_z) {
    st_value r = RUN("def main(xs: [N]i32) = xs |> scan(+, (acc, x) => acc * 10i64 + i64(x), 5i64)", I32S(1, 2, 3));
    WANT_I64(r, 51, 512, 5123);
    r = RUN("def main(xs: [N]i32) = xs |> scan(*, (acc, x) => acc * 10i64 + i64(x), 5i64)", I32S(1, 2, 3));
    WANT_I64(r, 51, 512, 5123);
    /* subtraction from z: 10 - 1 = 9, 9 - 2 = 7, 7 - 3 = 4 */
    r = RUN("def main(xs: [N]i32) = xs |> scan(+, -, 10)", I32S(1, 2, 3));
    WANT_I32(r, 9, 7, 4);
    /* the accumulator's type is z's: an f64 over i32 elements, halved each step */
    r = RUN("def main(xs: [N]i32) = xs |> scan(+, (acc, x) => acc * 0.5f64 + f64(x), 1.0f64)", I32S(1, 2, 3));
    WANT_F64(r, 1.5, 2.75, 4.375);
    /* an i64 accumulator over i32 elements does not wrap where an i32 would */
    r = RUN("def main(xs: [N]i32) = xs |> scan(+, (acc, x) => acc + i64(x), 0i64)", I32S(2147483647, 1, 2147483647));
    WANT_I64(r, 2147483647LL, 2147483648LL, 4294967295LL);
    /* a map fused in: the scan of map(x => x * x) */
    r = RUN("def main(xs: [N]i32) = xs |> scan(+, (acc, x) => acc + x * x, 0)", I32S(1, -2, 3));
    WANT_I32(r, 1, 5, 14);
    /* the fold reads the elements' components */
    r = RUN("def main(xs: [N]i32, ys: [N]i32) = zip(xs, ys) |> scan(+, (acc, p) => acc * 10 + p.0 - p.1, 0)",
            I32S(5, 7, 9), I32S(1, 2, 3));
    WANT_I32(r, 4, 45, 456);
}
END_TEST

START_TEST(scanomap_edges) {
    const char *src = "def main(xs: [N]i32) = xs |> scan(+, (acc, x) => acc * 10i64 - i64(x), 7i64)";
    st_value r = RUN(src, EMPTY(ST_I32));
    WANT_EMPTY(r, ST_I64);
    r = RUN(src, I32S(4));
    WANT_I64(r, 66);
    /* a tuple accumulator over an empty array: a tuple of empty arrays */
    r = RUN("def main(xs: [N]i32) = xs |> scan((a, b) => a, (acc, x) => (acc.0 + i64(x), acc.1), (0i64, true))",
            EMPTY(ST_I32));
    want_tuple_n(&r, 2);
    WANT_EMPTY(*item(&r, 0), ST_I64);
    WANT_EMPTY(*item(&r, 1), ST_BOOL);
    r = RUN("def main(xs: [N]i32) = xs |> scan((a, b) => a, (acc, x) => (acc.0 + i64(x), !acc.1), (0i64, true))",
            I32S(-9));
    want_tuple_n(&r, 2);
    WANT_I64(*item(&r, 0), -9);
    WANT_BOOL(*item(&r, 1), false);
}
END_TEST

/* A tuple accumulator: (how many positives so far, the running minimum). */
START_TEST(scanomap_tuple_accumulator) {
    st_value r = RUN("def main(xs: [N]i32) =\n"
                     "  xs |> scan((a, b) => (a.0 + b.0, min(a.1, b.1)),\n"
                     "             (acc, x) => (acc.0 + (if x > 0 then 1i64 else 0i64), min(acc.1, x)), (0i64, 1000))",
                     I32S(3, -2, 5, -7, 4));
    want_tuple_n(&r, 2);
    WANT_I64(*item(&r, 0), 1, 1, 2, 2, 3);
    WANT_I32(*item(&r, 1), 3, -2, -2, -7, -7);
    /* Fibonacci-like: (a, b) → (b, a + b + x); from (0, 1) over [1, 0, 2]:
     * (1, 2), (2, 3), (3, 7) */
    r = RUN("def main(xs: [N]i32) = xs |> scan((p, q) => p, (acc, x) => (acc.1, acc.0 + acc.1 + x), (0, 1))",
            I32S(1, 0, 2));
    want_tuple_n(&r, 2);
    WANT_I32(*item(&r, 0), 1, 2, 3);
    WANT_I32(*item(&r, 1), 2, 3, 7);
}
END_TEST

/* An array accumulator: each step maps the element into every slot. From
 * iota(2) = [0, 1] over [3, 4]: [3, 13], then [34, 134]. */
START_TEST(fold_forms_with_array_accumulators) {
    st_value r = RUN("def main(xs: [N]i32) =\n"
                     "  xs |> scan((a, b) => a, (acc, x) => acc |> map(a => a * 10 + i64(x)), iota(2))",
                     I32S(3, 4));
    check_array(&r, ST_I64, 2, (const int64_t[]){2, 2}, (const int64_t[]){3, 13, 34, 134});
    r = RUN("def main(xs: [N]i32) =\n"
            "  xs |> reduce((a, b) => a, (acc, x) => acc |> map(a => a * 10 + i64(x)), iota(2))",
            I32S(3, 4));
    WANT_I64(r, 34, 134);
    r = RUN("def main(xs: [N]i32) =\n"
            "  xs |> reduce((a, b) => a, (acc, x) => acc |> map(a => a * 10 + i64(x)), iota(2))",
            EMPTY(ST_I32));
    WANT_I64(r, 0, 1);
}
END_TEST

/* scan(op, fold, post, z, xs): element i is post(acc_i, x_i), acc_i the
 * fold up to and including x_i. */
START_TEST(maposcanomap_semantics) {
    /* acc = 11, 13, 16 (from z = 10); post = acc * 100 + x */
    st_value r = RUN("def main(xs: [N]i32) = xs |> scan(+, (acc, x) => acc + x, (acc, x) => acc * 100 + x, 10)",
                     I32S(1, 2, 3));
    WANT_I32(r, 1101, 1302, 1603);
    /* operators everywhere: acc = 1, 3, 6; post = acc + x = 2, 5, 9 */
    r = RUN("def main(xs: [N]i32) = xs |> scan(+, +, +, 0)", I32S(1, 2, 3));
    WANT_I32(r, 2, 5, 9);
    /* post = acc - x gives back the previous accumulator: z, then acc_0, … */
    r = RUN("def main(xs: [N]i32) = xs |> scan(+, +, -, 100)", I32S(1, 2, 3));
    WANT_I32(r, 100, 101, 103);
    /* the post-function's type is its own: f64 from an i64 accumulator */
    r = RUN("def main(xs: [N]i32) = xs |> scan(+, (acc, x) => acc + i64(x), (acc, x) => f64(acc) / 4.0f64, 0i64)",
            I32S(1, 2, -5));
    WANT_F64(r, 0.25, 0.75, -0.5);
    /* a non-associative fold, post reading both */
    r = RUN("def main(xs: [N]i32) = xs |> scan(+, (acc, x) => acc * 10 + x, (acc, x) => acc - x, 0)", I32S(1, 2, 3));
    WANT_I32(r, 0, 10, 120);
}
END_TEST

START_TEST(maposcanomap_tuples) {
    /* a post-function returning a tuple: a tuple of arrays */
    st_value r = RUN("def main(xs: [N]i32) = xs |> scan(+, (acc, x) => acc + i64(x), (acc, x) => (acc, x > 1), 0i64)",
                     I32S(1, 2, 3));
    want_tuple_n(&r, 2);
    WANT_I64(*item(&r, 0), 1, 3, 6);
    WANT_BOOL(*item(&r, 1), false, true, true);
    r = RUN("def main(xs: [N]i32) =\n"
            "  xs |> scan(+, (acc, x) => acc + i64(x), (acc, x) => (acc, x > 1), 0i64) |> map((a, b) => if b then a else -a)",
            I32S(1, 2, 3));
    WANT_I64(r, -1, 3, 6);
    /* a tuple accumulator and a tuple result: (running max, count) → (count, max - x) */
    r = RUN("def main(xs: [N]i32) =\n"
            "  xs |> scan((a, b) => a, (acc, x) => (max(acc.0, x), acc.1 + 1u32), (acc, x) => (acc.1, acc.0 - x, acc.0), (-100, 0u32))",
            I32S(4, 9, 2, 7));
    want_tuple_n(&r, 3);
    check_flat(item(&r, 0), ST_U32, (const uint32_t[]){1, 2, 3, 4}, 4);
    WANT_I32(*item(&r, 1), 0, 0, 7, 2);
    WANT_I32(*item(&r, 2), 4, 9, 9, 9);
    /* over pairs: the post sees the whole pair */
    r = RUN("def main(xs: [N]i32, ys: [N]i32) = zip(xs, ys) |> scan(+, (acc, p) => acc + p.0, (acc, p) => acc * p.1, 0)",
            I32S(1, 2, 3), I32S(10, 20, 30));
    WANT_I32(r, 10, 60, 180);
}
END_TEST

START_TEST(maposcanomap_edges) {
    const char *src = "def main(xs: [N]i32) = xs |> scan(+, (acc, x) => acc + i64(x), (acc, x) => (acc, x * 2, true), 5i64)";
    st_value r = RUN(src, EMPTY(ST_I32));
    want_tuple_n(&r, 3);
    WANT_EMPTY(*item(&r, 0), ST_I64);
    WANT_EMPTY(*item(&r, 1), ST_I32);
    WANT_EMPTY(*item(&r, 2), ST_BOOL);
    r = RUN(src, I32S(-3));
    want_tuple_n(&r, 3);
    WANT_I64(*item(&r, 0), 2);
    WANT_I32(*item(&r, 1), -6);
    WANT_BOOL(*item(&r, 2), true);
    r = RUN("def main(xs: [N]i32) = xs |> scan(+, +, -, 7)", EMPTY(ST_I32));
    WANT_EMPTY(r, ST_I32);
    r = RUN("def main(xs: [N]i32) = xs |> scan(+, +, -, 7)", I32S(5));
    WANT_I32(r, 7);
}
END_TEST

/* reduce(op, fold, z, xs): the last accumulator of the scan; z when empty. */
START_TEST(reduce_with_fold) {
    st_value r = RUN("def main(xs: [N]i32) = xs |> reduce(+, (acc, x) => acc * 10i64 + i64(x), 0i64)", I32S(1, 2, 3));
    WANT_SCALAR(r, ST_I64, s_i64(123));
    r = RUN("def main(xs: [N]i32) = xs |> reduce(max, (acc, x) => acc * 10i64 + i64(x), 0i64)", I32S(1, 2, 3));
    WANT_SCALAR(r, ST_I64, s_i64(123));
    r = RUN("def main(xs: [N]i32) = xs |> reduce(+, (acc, x) => acc * 10i64 + i64(x), 4i64)", EMPTY(ST_I32));
    WANT_SCALAR(r, ST_I64, s_i64(4));
    r = RUN("def main(xs: [N]i32) = xs |> reduce(+, (acc, x) => acc * 10i64 + i64(x), 4i64)", I32S(-2));
    WANT_SCALAR(r, ST_I64, s_i64(38));
    /* 0.25 + 0.5 + 1.0 + 1.5, exact */
    r = RUN("def main(xs: [N]i32) = xs |> reduce(+, (acc, x) => acc + f32(x) * 0.5, 0.25)", I32S(1, 2, 3));
    WANT_SCALAR(r, ST_F32, s_f32(3.25f));
    /* a tuple accumulator: (sum as i64, digits as i32) */
    r = RUN("def main(xs: [N]i32) =\n"
            "  xs |> reduce((a, b) => (a.0 + b.0, a.1), (acc, x) => (acc.0 + i64(x), acc.1 * 10 + x), (0i64, 0))",
            I32S(4, 5, 6));
    want_tuple_n(&r, 2);
    WANT_SCALAR(*item(&r, 0), ST_I64, s_i64(15));
    WANT_SCALAR(*item(&r, 1), ST_I32, s_i32(456));
    r = RUN("def main(xs: [N]i32) =\n"
            "  xs |> reduce((a, b) => (a.0 + b.0, a.1), (acc, x) => (acc.0 + i64(x), acc.1 * 10 + x), (9i64, 8))",
            EMPTY(ST_I32));
    want_tuple_n(&r, 2);
    WANT_SCALAR(*item(&r, 0), ST_I64, s_i64(9));
    WANT_SCALAR(*item(&r, 1), ST_I32, s_i32(8));
    /* over pairs into a scalar: a dot product of i32 pairs in i64 */
    r = RUN("def main(xs: [N]i32, ys: [N]i32) = zip(xs, ys) |> reduce(+, (acc, p) => acc + i64(p.0) * i64(p.1), 0i64)",
            I32S(100000, 3), I32S(100000, -4));
    WANT_SCALAR(r, ST_I64, s_i64(10000000000LL - 12));
}
END_TEST

/* The fold forms fail like the others, naming the expression. */
START_TEST(fold_forms_runtime_errors) {
    FAILS("def main(xs: [N]i32) = xs |> scan(+, (acc, x) => acc / x, 100)", "division by zero", "acc / x",
          I32S(5, 0, 1));
    FAILS("def main(xs: [N]i32) = xs |> scan(+, +, (acc, x) => x % acc, 0)", "division by zero", "x % acc",
          I32S(0, 1));
    FAILS("def main(xs: [N]i32) = xs |> reduce(+, (acc, x) => acc % x, 100)", "division by zero", "acc % x",
          I32S(3, 0));
    FAILS("def main(xs: [N]i32) = xs |> reduce(+, (acc, x) => acc + (xs |> get(x)), 0)", "out of range", "get(x)",
          I32S(1, 3));
}
END_TEST

/* scatter(dest, ivs): (index, value) pairs; out-of-range indices are
 * ignored, and of repeated ones the last write wins. */
START_TEST(scatter_pairs_semantics) {
    /* index 1 twice (40 wins); -1, 5 and 100 out of range */
    st_value r = RUN("def main(is: [N]i32, vs: [N]i32) = scatter(replicate(5, 0), zip(is, vs))",
                     I32S(1, -1, 5, 1, 3, 100), I32S(10, 20, 30, 40, 50, 60));
    WANT_I32(r, 0, 40, 0, 50, 0);
    /* the destination keeps what is not written; the extremes of i64 and u64 */
    r = RUN("def main(dest: [M]i32, is: [N]i64, vs: [N]i32) = scatter(dest, zip(is, vs))", I32S(7, 8, 9),
            I64S(2, 0, -9223372036854775807LL - 1, 9223372036854775807LL), I32S(1, 2, 3, 4));
    WANT_I32(r, 2, 8, 1);
    r = RUN("def main(dest: [M]i32, is: [N]u64, vs: [N]i32) = scatter(dest, zip(is, vs))", I32S(7, 8, 9),
            U64S(UINT64_MAX, 0, 3, 2, 2), I32S(1, 2, 3, 4, 5));
    WANT_I32(r, 2, 8, 5);
    r = RUN("def main(dest: [M]i32, is: [N]u32, vs: [N]i32) = scatter(dest, zip(is, vs))", I32S(7, 8, 9),
            U32S(4294967295u, 1, 1, 1), I32S(1, 2, 3, 4));
    WANT_I32(r, 7, 4, 9);
    /* pairs made by a map: reversal */
    r = RUN("def main(xs: [N]i32) = scatter(replicate(N, 0), iota(N) |> map(i => (N - 1 - i, xs |> get(i))))",
            I32S(1, 2, 3, 4));
    WANT_I32(r, 4, 3, 2, 1);
    /* the pipeline form and a parameter of pairs */
    r = RUN("def main(ivs: [N](i64, i32), dest: [M]i32) = ivs |> scatter(dest)",
            ((st_value){.kind = ST_VALUE_TUPLE, .n = 2,
                        .u.items = (const st_value[]){I64S(2, 2, 0, -1), I32S(5, 6, 7, 8)}}),
            I32S(0, 0, 0));
    WANT_I32(r, 7, 0, 6);
    /* values are tuples */
    r = RUN("def main(as: [M]i32, bs: [M]f32, is: [N]i32, cs: [N]i32, ds: [N]f32) =\n"
            "  scatter(zip(as, bs), zip(is, zip(cs, ds)))",
            I32S(1, 2, 3), F32S(1.0f, 2.0f, 3.0f), I32S(2, 7, 0, 2), I32S(30, 70, 10, 40), F32S(0.5f, 0.25f, 0.125f, 4.0f));
    want_tuple_n(&r, 2);
    WANT_I32(*item(&r, 0), 10, 2, 40);
    WANT_F32(*item(&r, 1), 0.125f, 2.0f, 4.0f);
}
END_TEST

START_TEST(scatter_pairs_edges) {
    /* no pairs: the destination as it was */
    st_value r = RUN("def main(is: [N]i32, vs: [N]i32) = scatter(replicate(3, 9), zip(is, vs))", EMPTY(ST_I32),
                     EMPTY(ST_I32));
    WANT_I32(r, 9, 9, 9);
    /* no destination: every index is out of range */
    r = RUN("def main(dest: [N]i32, is: [M]i32, vs: [M]i32) = scatter(dest, zip(is, vs))", EMPTY(ST_I32), I32S(0, -1),
            I32S(1, 2));
    WANT_EMPTY(r, ST_I32);
    /* one pair, in and out of range */
    r = RUN("def main(xs: [N]i32) = scatter(xs, zip(replicate(N, 0), replicate(N, 3)))", I32S(-4));
    WANT_I32(r, 3);
    r = RUN("def main(xs: [N]i32) = scatter(xs, zip(replicate(N, 1), replicate(N, 3)))", I32S(-4));
    WANT_I32(r, -4);
    /* into a copy: values read from the destination see the original */
    r = RUN("def main(xs: [N]i32, is: [N]i32) = scatter(xs, zip(is, xs))", I32S(1, 2, 3), I32S(1, 2, 0));
    WANT_I32(r, 3, 1, 2);
    st_value xs = I32S(5, 6);
    r = RUN("def main(xs: [N]i32) = (scatter(xs, zip(replicate(N, 0), replicate(N, 9))), xs)", xs);
    WANT_I32(*item(&r, 0), 9, 6);
    WANT_I32(*item(&r, 1), 5, 6);
}
END_TEST

/* The filter of examples/filter.strata written in one pass: a scan whose
 * post-function makes (index, value) pairs, into scatter. */
START_TEST(fused_filter) {
    const char *src = "def main(xs: [N]i32) =\n"
                      "  let ivs = xs |> scan(+, (acc, x) => acc + (if x > 0 then 1i64 else 0i64),\n"
                      "                       (acc, x) => (if x > 0 then acc - 1 else -1i64, x), 0i64)\n"
                      "  in scatter(replicate(N, 0), ivs)";
    st_value r = RUN(src, I32S(3, -1, 0, 5, -2, 7));
    WANT_I32(r, 3, 5, 7, 0, 0, 0);
    r = RUN(src, I32S(-3, 0));
    WANT_I32(r, 0, 0);
    r = RUN(src, I32S(9));
    WANT_I32(r, 9);
    r = RUN(src, EMPTY(ST_I32));
    WANT_EMPTY(r, ST_I32);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Runtime errors                                                           */
/* ------------------------------------------------------------------------ */

START_TEST(integer_division_by_zero_is_an_error) {
    static const char *const types[] = {"i32", "u32", "i64", "u64"};
    static const st_scalar_kind kinds[] = {ST_I32, ST_U32, ST_I64, ST_U64};
    char src[128];
    for (int t = 0; t < 4; t++) {
        snprintf(src, sizeof src, "def main(x: %s, y: %s) = x / y", types[t], types[t]);
        FAILS(src, "division by zero", "x / y", scalar_of(kinds[t], s_int(kinds[t], 7)), scalar_of(kinds[t], s_int(kinds[t], 0)));
        snprintf(src, sizeof src, "def main(x: %s, y: %s) = x %% y", types[t], types[t]);
        FAILS(src, "division by zero", "x % y", scalar_of(kinds[t], s_int(kinds[t], 7)), scalar_of(kinds[t], s_int(kinds[t], 0)));
    }
    /* deep inside a map: the message names the division */
    FAILS("def main(xs: [N]i32) = xs |> map(x => 10 % x + 1)", "division by zero", "10 % x", I32S(1, 0, 2));
    /* an operator used as a function */
    FAILS("def main(xs: [N]i32) = xs |> reduce(/, 100)", "division by zero", "/", I32S(5, 0));
    FAILS("def main(xs: [N]i32) = xs |> scan(%, 100)", "division by zero", "%", I32S(7, 0));
    FAILS("def main(is: [N]i32, vs: [N]i32) = reduce_by_index(replicate(2, 9), /, 1, is, vs)", "division by zero",
          "/", I32S(0, 1), I32S(3, 0));
}
END_TEST

START_TEST(get_out_of_range_is_an_error) {
    const char *src = "def main(xs: [N]i32, i: i32) = xs |> get(i)";
    FAILS(src, "out of range", "get(i)", I32S(1, 2, 3), v_i32(3));
    FAILS(src, "out of range", "get(i)", I32S(1, 2, 3), v_i32(-1));
    FAILS(src, "out of range", "get(i)", I32S(1, 2, 3), v_i32(INT32_MIN));
    FAILS(src, "out of range", "get(i)", EMPTY(ST_I32), v_i32(0));
    FAILS("def main(xs: [N]i32, i: u64) = xs |> get(i)", "out of range", "get(i)", I32S(1, 2, 3),
          scalar_of(ST_U64, s_u64(3)));
    /* an unsigned index too large for an i64 is out of range too, not wrapped to -1 */
    FAILS("def main(xs: [N]i32, i: u64) = xs |> get(i)", "out of range", "get(i)", I32S(1, 2, 3),
          scalar_of(ST_U64, s_u64(UINT64_MAX)));
    /* inside a map: the last element's neighbour */
    FAILS("def main(xs: [N]i32) = iota(N) |> map(i => xs |> get(i + 1))", "out of range", "get(i + 1)", I32S(1, 2, 3));
}
END_TEST

START_TEST(negative_iteration_count_is_an_error) {
    FAILS("def main(x: i32, k: i32) = x |> iterate(k, y => y + 1)", "negative", "iterate", v_i32(0), v_i32(-1));
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The examples, on small hand-computed inputs                              */
/* ------------------------------------------------------------------------ */

/* The text of examples/NAME.strata. */
static const char *example(const char *name) { return example_text(ar, name); }

/* st_eval does not trust its caller: lengths known only at run time are
 * checked where they are used. */
START_TEST(bad_runtime_lengths_are_errors) {
    /* the `where` fact is the caller's promise; broken, split reports it */
    FAILS("def main(xs: [N]i32) where N % 4 == 0 = xs |> split(4)", "chunk size does not divide", "split(4)",
          I32S(1, 2, 3, 4, 5, 6));
    /* a negative scalar used as a length */
    FAILS(example("histogram"), "negative", "H", I32S(0, 1), v_i64(-1));
    FAILS("def main(H: i64) = iota(H)", "negative", "H", v_i64(-3));
}
END_TEST

START_TEST(example_prefix_sum) {
    const char *src = example("prefix_sum");
    st_value r = RUN(src, F32S(1.0f, 2.0f, 3.5f, -1.0f));
    WANT_F32(r, 1.0f, 3.0f, 6.5f, 5.5f);
    r = RUN(src, F32S(0.25f));
    WANT_F32(r, 0.25f);
    r = RUN(src, EMPTY(ST_F32));
    WANT_EMPTY(r, ST_F32);
}
END_TEST

START_TEST(example_advanced) {
    st_value r = RUN(example("advanced"), I32S(1, 2, 3));
    st_value leaves[5];
    ck_assert_uint_eq(st_value_leaves(&r, leaves, 5), 5);
    WANT_I32(leaves[0], 1, 2, 3);  /* as */
    WANT_I32(leaves[1], 0, 1, 2);  /* bs = as - 1 */
    WANT_I32(leaves[2], 2, 3, 4);  /* cs = as + 1 */
    WANT_I32(leaves[3], 0, 1, 3);  /* ds = scan of bs */
    WANT_I32(leaves[4], 2, 5, 9);  /* es = scan of cs */
    r = RUN(example("advanced"), EMPTY(ST_I32));
    ck_assert_uint_eq(st_value_leaves(&r, leaves, 5), 5);
    for (int i = 0; i < 5; i++) WANT_EMPTY(leaves[i], ST_I32);
}
END_TEST

START_TEST(example_histogram) {
    const char *src = example("histogram");
    /* -1, 4 and 5 fall outside 4 buckets */
    st_value is = I32S(0, 2, 2, -1, 5, 1, 2, 4);
    st_value r = RUN(src, is, v_i64(4));
    WANT_I32(r, 1, 1, 3, 0);
    r = RUN(src, is, v_i64(6));
    WANT_I32(r, 1, 1, 3, 0, 1, 1);
    r = RUN(src, is, v_i64(0));
    WANT_EMPTY(r, ST_I32);
    r = RUN(src, EMPTY(ST_I32), v_i64(3));
    WANT_I32(r, 0, 0, 0);
}
END_TEST

START_TEST(example_filter) {
    const char *src = example("filter");
    st_value r = RUN(src, I32S(3, -1, 0, 5, -2, 7));
    WANT_I32(r, 3, 5, 7, 0, 0, 0);
    r = RUN(src, I32S(-3, 0));
    WANT_I32(r, 0, 0);
    r = RUN(src, I32S(9));
    WANT_I32(r, 9);
    r = RUN(src, EMPTY(ST_I32));
    WANT_EMPTY(r, ST_I32);
}
END_TEST

START_TEST(example_linear_recurrence) {
    /* x = 2·0 + 1 = 1, 3·1 + 1 = 4, 1·4 + 5 = 9, 0.5·9 + 2 = 6.5 */
    st_value r = RUN(example("linear_recurrence"), F32S(2.0f, 3.0f, 1.0f, 0.5f), F32S(1.0f, 1.0f, 5.0f, 2.0f));
    WANT_F32(r, 1.0f, 4.0f, 9.0f, 6.5f);
    r = RUN(example("linear_recurrence"), EMPTY(ST_F32), EMPTY(ST_F32));
    WANT_EMPTY(r, ST_F32);
}
END_TEST

START_TEST(example_dot) {
    st_value r = RUN(example("dot"), F32S(1.0f, 2.0f, 3.0f), F32S(4.0f, 5.0f, -6.0f));
    WANT_SCALAR(r, ST_F32, s_f32(-4.0f));
    r = RUN(example("dot"), EMPTY(ST_F32), EMPTY(ST_F32));
    WANT_SCALAR(r, ST_F32, s_f32(0.0f));
}
END_TEST

START_TEST(example_block_sums) {
    float xs[512];
    for (int i = 0; i < 512; i++) xs[i] = (float)i;
    /* 0 + … + 255 = 32640; 256 + … + 511 = 256·256 + 32640 = 98176 (exact in f32) */
    st_value r = RUN(example("block_sums"), arr(ST_F32, xs, 512));
    WANT_F32(r, 32640.0f, 98176.0f);
    r = RUN(example("block_sums"), EMPTY(ST_F32));
    WANT_EMPTY(r, ST_F32);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Properties: the interpreter equals a few lines of C on random inputs     */
/* ------------------------------------------------------------------------ */

static const int64_t sizes[] = {0, 1, 2, 7, 31, 256, 1000, 4099};
enum { NSIZES = sizeof sizes / sizeof *sizes };

static uint64_t next_random(uint64_t *state) { /* splitmix64 */
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* n i32 values in [lo, lo + span), or over the whole range when span is 0,
 * so that sums wrap. */
static int32_t *random_i32(uint64_t *state, int64_t n, int32_t lo, uint32_t span) {
    int32_t *xs = st_arena_alloc(ar, (size_t)n * sizeof *xs);
    ck_assert(xs != NULL);
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = next_random(state);
        xs[i] = span ? (int32_t)((int64_t)lo + (int64_t)(r % span)) : (int32_t)(uint32_t)r;
    }
    return xs;
}

static int32_t *alloc_i32(int64_t n) {
    int32_t *p = st_arena_alloc(ar, (size_t)n * sizeof *p);
    ck_assert(p != NULL);
    return p;
}

START_TEST(property_scan_add_wraps) {
    uint64_t state = 1;
    for (int s = 0; s < NSIZES; s++) {
        int64_t n = sizes[s];
        int32_t *xs = random_i32(&state, n, 0, 0), *want = alloc_i32(n);
        uint32_t acc = 0;
        for (int64_t i = 0; i < n; i++) want[i] = (int32_t)(acc += (uint32_t)xs[i]);
        st_value r = RUN("def main(xs: [N]i32) = xs |> scan(+, 0)", arr(ST_I32, xs, n));
        check_flat(&r, ST_I32, want, n);
    }
}
END_TEST

START_TEST(property_scan_max) {
    uint64_t state = 2;
    for (int s = 0; s < NSIZES; s++) {
        int64_t n = sizes[s];
        int32_t *xs = random_i32(&state, n, 0, 0), *want = alloc_i32(n);
        int32_t acc = INT32_MIN;
        for (int64_t i = 0; i < n; i++) want[i] = acc = xs[i] > acc ? xs[i] : acc;
        st_value r = RUN("def main(xs: [N]i32) = xs |> scan(max, -2147483648)", arr(ST_I32, xs, n));
        check_flat(&r, ST_I32, want, n);
    }
}
END_TEST

/* A non-commutative, non-associative fold: the interpreter must fold left. */
START_TEST(property_reduce_polynomial_hash) {
    uint64_t state = 3;
    for (int s = 0; s < NSIZES; s++) {
        int64_t n = sizes[s];
        int32_t *xs = random_i32(&state, n, 0, 0);
        uint32_t acc = 7;
        for (int64_t i = 0; i < n; i++) acc = acc * 31u + (uint32_t)xs[i];
        st_value r = RUN("def main(xs: [N]i32) = xs |> reduce((a, b) => a * 31 + b, 7)", arr(ST_I32, xs, n));
        WANT_SCALAR(r, ST_I32, s_i32((int32_t)acc));
    }
}
END_TEST

/* x[i] = a[i]·x[i−1] + b[i] on wrapping i32, as the affine-map scan. */
START_TEST(property_linear_recurrence_i32) {
    uint64_t state = 4;
    for (int s = 0; s < NSIZES; s++) {
        int64_t n = sizes[s];
        int32_t *as = random_i32(&state, n, -3, 7), *bs = random_i32(&state, n, 0, 0);
        int32_t *want = alloc_i32(n);
        uint32_t x = 0;
        for (int64_t i = 0; i < n; i++) want[i] = (int32_t)(x = (uint32_t)as[i] * x + (uint32_t)bs[i]);
        st_value r = RUN("def main(as: [N]i32, bs: [N]i32) =\n"
                         "  zip(as, bs) |> scan((f, g) => (f.0 * g.0, g.0 * f.1 + g.1), (1, 0)) |> map(p => p.1)",
                         arr(ST_I32, as, n), arr(ST_I32, bs, n));
        check_flat(&r, ST_I32, want, n);
    }
}
END_TEST

/* The histogram example: counts in 17 buckets, indices from -5 to 21. */
START_TEST(property_histogram_counts) {
    enum { H = 17 };
    const char *src = example("histogram");
    uint64_t state = 5;
    for (int s = 0; s < NSIZES; s++) {
        int64_t n = sizes[s];
        int32_t *is = random_i32(&state, n, -5, H + 10);
        int32_t want[H] = {0};
        for (int64_t i = 0; i < n; i++)
            if (is[i] >= 0 && is[i] < H) want[is[i]]++;
        st_value r = RUN(src, arr(ST_I32, is, n), v_i64(H));
        check_flat(&r, ST_I32, want, H);
    }
}
END_TEST

/* scatter: indices from -2 to n + 1 with repeats; the last write wins. */
START_TEST(property_scatter_last_write_wins) {
    uint64_t state = 6;
    for (int s = 0; s < NSIZES; s++) {
        int64_t n = sizes[s];
        int32_t *dest = random_i32(&state, n, 0, 0), *vs = random_i32(&state, n, 0, 0);
        int32_t *is = random_i32(&state, n, -2, (uint32_t)n + 4), *want = alloc_i32(n);
        if (n) memcpy(want, dest, (size_t)n * sizeof *want);
        for (int64_t i = 0; i < n; i++)
            if (is[i] >= 0 && is[i] < n) want[is[i]] = vs[i];
        st_value r = RUN("def main(dest: [N]i32, is: [N]i32, vs: [N]i32) = scatter(dest, is, vs)",
                         arr(ST_I32, dest, n), arr(ST_I32, is, n), arr(ST_I32, vs, n));
        check_flat(&r, ST_I32, want, n);
    }
}
END_TEST

/* The filter example: the positive elements in order, then zeros, and their
 * count. */
START_TEST(property_filter) {
    const char *src = example("filter");
    uint64_t state = 7;
    for (int s = 0; s < NSIZES; s++) {
        int64_t n = sizes[s];
        int32_t *xs = random_i32(&state, n, -50, 100), *want = alloc_i32(n);
        int64_t kept = 0;
        for (int64_t i = 0; i < n; i++)
            if (xs[i] > 0) want[kept++] = xs[i];
        for (int64_t i = kept; i < n; i++) want[i] = 0;
        st_value r = RUN(src, arr(ST_I32, xs, n));
        check_flat(&r, ST_I32, want, n);
    }
}
END_TEST

/* Properties: the fold forms and scatter of pairs against plain C, and
 * against the forms they stand for. */
START_TEST(property_fold_forms) {
    uint64_t state = 8;
    for (int s = 0; s < NSIZES; s++) {
        int64_t n = sizes[s];
        int32_t *xs = random_i32(&state, n, 0, 0);
        int64_t *acc = st_arena_alloc(ar, (size_t)(n ? n : 1) * sizeof *acc);
        int32_t *post = alloc_i32(n ? n : 1);
        uint64_t a = 3;
        for (int64_t i = 0; i < n; i++) {
            a = a * 3u + (uint64_t)(int64_t)xs[i]; /* wraps like i64 */
            acc[i] = (int64_t)a;
            post[i] = (int32_t)(uint32_t)((uint64_t)acc[i] ^ (uint64_t)(int64_t)xs[i]);
        }
        st_value in = arr(ST_I32, xs, n);
        st_value r = RUN("def main(xs: [N]i32) = xs |> scan(+, (acc, x) => acc * 3i64 + i64(x), 3i64)", in);
        check_flat(&r, ST_I64, acc, n);
        r = RUN("def main(xs: [N]i32) = xs |> scan(+, (acc, x) => acc * 3i64 + i64(x), (acc, x) => i32(acc ^ i64(x)), 3i64)", in);
        check_flat(&r, ST_I32, post, n);
        r = RUN("def main(xs: [N]i32) = xs |> reduce(+, (acc, x) => acc * 3i64 + i64(x), 3i64)", in);
        WANT_SCALAR(r, ST_I64, s_i64(n ? acc[n - 1] : 3));
    }
}
END_TEST

START_TEST(property_scatter_pairs_equal_scatter) {
    uint64_t state = 9;
    for (int s = 0; s < NSIZES; s++) {
        int64_t n = sizes[s];
        int32_t *dest = random_i32(&state, n, 0, 0), *vs = random_i32(&state, n, 0, 0);
        int32_t *is = random_i32(&state, n, -2, (uint32_t)n + 4), *want = alloc_i32(n ? n : 1);
        if (n) memcpy(want, dest, (size_t)n * sizeof *want);
        for (int64_t i = 0; i < n; i++)
            if (is[i] >= 0 && is[i] < n) want[is[i]] = vs[i];
        st_value r = RUN("def main(dest: [N]i32, is: [N]i32, vs: [N]i32) = (scatter(dest, zip(is, vs)), scatter(dest, is, vs))",
                         arr(ST_I32, dest, n), arr(ST_I32, is, n), arr(ST_I32, vs, n));
        check_flat(item(&r, 0), ST_I32, want, n);
        check_flat(item(&r, 1), ST_I32, want, n);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */

int main(void) {
    Suite *s = suite_create("interp");
    struct {
        const char *name;
        const TTest *tests[16];
    } groups[] = {
        {"primitives",
         {map_basic, map_to_tuples, map_destructures_zip, low_level_maps, reduce_folds_left_from_z,
          reduce_over_tuples, scan_inclusive_seeded, scan_affine_composition_order, scan_over_tuples,
          seq_folds_change_type, zip_and_unzip, iota_and_replicate, iterate_semantics, get_semantics}},
        {"nested",
         {split_and_join, maps_and_folds_over_rows, transpose_rows_and_columns, transpose_of_tuples,
          rank_three_arrays, a_value_kept_is_computed_again_when_what_it_reads_changes}},
        {"scatter",
         {scatter_semantics, scatter_of_tuples, scatter_distinct_semantics, reduce_by_index_semantics,
          scatter_does_not_alias_its_destination, scatter_boundary_on_a_large_destination}},
        {"expressions",
         {let_and_if, tuple_results_and_leaves, logic_short_circuits, nested_tuples, lambdas_capture_their_scope}},
        {"edges", {every_primitive_on_empty_arrays, every_primitive_on_singletons}},
        {"scalars",
         {i32_operators, u32_operators, i64_operators, u64_operators, bool_operators, f32_operators,
          f64_operators, math_functions, float_width_in_folds, float_folds_are_trees, float_to_int_truncates_and_saturates, int_conversions_wrap,
          conversions_to_and_from_floats_and_bools}},
        {"errors",
         {integer_division_by_zero_is_an_error, get_out_of_range_is_an_error,
          negative_iteration_count_is_an_error, bad_runtime_lengths_are_errors}},
        {"examples",
         {example_prefix_sum, example_advanced, example_histogram, example_filter, example_linear_recurrence,
          example_dot, example_block_sums}},
        {"fold forms",
         {scanomap_folds_left_from_z, scanomap_edges, scanomap_tuple_accumulator, fold_forms_with_array_accumulators,
          maposcanomap_semantics, maposcanomap_tuples, maposcanomap_edges, reduce_with_fold, fold_forms_runtime_errors,
          scatter_pairs_semantics, scatter_pairs_edges, fused_filter, property_fold_forms,
          property_scatter_pairs_equal_scatter}},
        {"properties",
         {property_scan_add_wraps, property_scan_max, property_reduce_polynomial_hash,
          property_linear_recurrence_i32, property_histogram_counts, property_scatter_last_write_wins,
          property_filter}},
    };
    for (size_t g = 0; g < sizeof groups / sizeof *groups; g++) {
        TCase *tc = tcase_create(groups[g].name);
        tcase_add_checked_fixture(tc, setup, teardown);
        for (size_t t = 0; t < 16 && groups[g].tests[t]; t++) tcase_add_test(tc, groups[g].tests[t]);
        suite_add_tcase(s, tc);
    }
    return run_suite(s);
}
