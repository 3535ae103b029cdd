/* tests/test_interp_fast.c — the interpreter's compiled fast path
 * (ir/interp_fast.c) against its generic path, bit for bit.
 *
 * Programs made from templates (maps, reductions, scans, exscans,
 * histograms, scatters; tuples and zips, captured scalars and arrays, lets,
 * ifs, && and ||, conversions, shifts, divisions that may be by zero) over
 * every scalar kind, at N = 1, 7, 1000 and, for some, 1000003, on inputs
 * with the edge values of each kind (0, ±1, the extremes, NaN, infinities,
 * -0), run by st_eval_with with the fast path and with it off
 * (st_eval_options.generic): the results must be the same bits, or both
 * runs must fail with the same message (a division by zero, an index out
 * of range, a scatterDistinct's repeated place: each at its node). */
#include "harness.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>

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

static const st_scalar_kind all_kinds[] = {ST_I8, ST_I16, ST_I32, ST_I64, ST_U8, ST_U16, ST_U32, ST_U64, ST_F32, ST_F64};
enum { NKINDS = sizeof all_kinds / sizeof *all_kinds };

/* splitmix64 */
static uint64_t next(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A value of kind k: mostly small, sometimes an edge of the kind. */
static st_scalar random_scalar(st_scalar_kind k, uint64_t *state) {
    uint64_t r = next(state);
    st_scalar v = {.bits = 0};
    unsigned pick = (unsigned)(r % 16);
    r >>= 8;
    if (k == ST_F32 || k == ST_F64) {
        double d = pick == 0 ? 0.0 : pick == 1 ? -0.0 : pick == 2 ? INFINITY : pick == 3 ? -INFINITY : pick == 4 ? NAN
                 : pick == 5 ? 1e30 : ((double)(r % 2000000) - 1000000.0) / 4096.0;
        if (k == ST_F32) v.f32 = (float)d;
        else v.f64 = d;
        return v;
    }
    uint64_t max_pos, max_neg;
    st_scalar_int_limits(k, &max_pos, &max_neg);
    uint64_t bits;
    switch (pick) {
    case 0: bits = 0; break;
    case 1: bits = 1; break;
    case 2: bits = (uint64_t)-1; break;
    case 3: bits = max_pos; break;
    case 4: bits = max_neg ? (uint64_t)0 - max_neg : 0; break;
    default: bits = (r % 200) - (st_scalar_is_signed(k) ? 100 : 0); break;
    }
    memcpy(&v, &bits, st_scalar_size(k)); /* its low bytes: wrapped to k's width */
    return v;
}

static st_value random_array(st_scalar_kind k, int64_t n, uint64_t *state) {
    size_t size = st_scalar_size(k);
    char *data = st_arena_alloc(ar, (size_t)(n ? n : 1) * size);
    ck_assert(data != NULL);
    for (int64_t i = 0; i < n; i++) {
        st_scalar v = random_scalar(k, state);
        memcpy(data + (size_t)i * size, &v, size); /* little-endian, as the library is */
    }
    return array_of(k, n, data, ar);
}

/* indices in [-2, H + 2): some out of bounds, which reduce_by_index and scatter skip */
static st_value random_indices(int64_t n, int64_t h, uint64_t *state) {
    int32_t *data = st_arena_alloc(ar, (size_t)(n ? n : 1) * sizeof *data);
    ck_assert(data != NULL);
    for (int64_t i = 0; i < n; i++) data[i] = (int32_t)(next(state) % (uint64_t)(h + 4)) - 2;
    return array_of(ST_I32, n, data, ar);
}

/* template with $T the kind's name, $0 $1 $3 its literals */
static const char *instantiate(const char *tmpl, st_scalar_kind k) {
    const char *name = st_scalar_name(k);
    bool flt = k == ST_F32 || k == ST_F64;
    st_buf b = {0};
    for (const char *p = tmpl; *p; p++) {
        if (*p == '$' && p[1] == 'T') {
            st_buf_puts(&b, name);
            p++;
        } else if (*p == '$' && (p[1] == '0' || p[1] == '1' || p[1] == '3')) {
            st_buf_printf(&b, "%c%s%s", p[1], flt ? ".0" : "", name);
            p++;
        } else {
            st_buf_printf(&b, "%c", *p);
        }
    }
    const char *text = arena_text(ar, "%s", b.data);
    st_buf_free(&b);
    return text;
}

/* The leaves of two results, the same bits? */
static void same_bits(const st_value *a, const st_value *b, const char *at) {
    ck_assert_msg(a->kind == b->kind && a->n == b->n && a->scalar == b->scalar, "%s: shapes differ", at);
    if (a->kind == ST_VALUE_TUPLE) {
        for (uint32_t i = 0; i < a->n; i++) same_bits(&a->u.items[i], &b->u.items[i], at);
        return;
    }
    size_t size = st_scalar_size(a->scalar);
    if (a->kind == ST_VALUE_SCALAR) {
        ck_assert_msg(memcmp(&a->u.s, &b->u.s, size) == 0, "%s: the scalar results differ: %016llx and %016llx", at,
                      (unsigned long long)a->u.s.u64, (unsigned long long)b->u.s.u64);
        return;
    }
    int64_t n = 1;
    for (uint32_t i = 0; i < a->n; i++) {
        ck_assert_msg(a->u.a.dims[i] == b->u.a.dims[i], "%s: lengths differ", at);
        n *= a->u.a.dims[i];
    }
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(memcmp((char *)a->u.a.data + (size_t)i * size, (char *)b->u.a.data + (size_t)i * size, size) == 0,
                      "%s: element %lld differs", at, (long long)i);
}

enum { H = 37 };

/* the sizes: N, and h (a parameter, H) */
static size_t bind(const st_def *d, int64_t n, st_binding *env) {
    size_t nenv = 0;
    for (uint32_t i = 0; i < d->nsizes; i++) env[nenv++] = (st_binding){d->sizes[i]->u.name, n};
    env[nenv++] = (st_binding){d->params[4]->u.name, H};
    return nenv;
}

/* The template on kind k at n elements, fast and generic; returns whether
 * both failed (with the same message). Parameters: xs, ys: [N]$T, is:
 * [N]i32, c: $T, h: i64 (H). */
static bool compare(const char *tmpl, st_scalar_kind k, int64_t n, uint64_t seed) {
    const char *src = instantiate(
        arena_text(ar, "def main(xs: [N]$T, ys: [N]$T, is: [N]i32, c: $T, h: i64): %s", tmpl), k);
    const st_program *p = parse_ok(cx, src);
    st_err err = {0};
    const st_def *d = st_program_entry(p, NULL, &err);
    ck_assert_msg(d != NULL, "%s", err.message);
    uint64_t state = seed;
    st_value args[5] = {random_array(k, n, &state), random_array(k, n, &state), random_indices(n, H, &state),
                        scalar_of(k, random_scalar(k, &state)), scalar_of(ST_I64, (st_scalar){.i64 = H})};
    st_binding env[2];
    size_t nenv = bind(d, n, env);
    const char *at = arena_text(ar, "%s at N = %lld, seed %llu", src, (long long)n, (unsigned long long)seed);
    st_value fast, generic;
    st_err ef = {0}, eg = {0};
    st_eval_options off = {.generic = true};
    bool okf = st_eval_with(cx, d, args, env, nenv, ar, NULL, &fast, &ef);
    bool okg = st_eval_with(cx, d, args, env, nenv, ar, &off, &generic, &eg);
    ck_assert_msg(okf == okg, "%s: fast %s, generic %s", at, okf ? "succeeds" : ef.message, okg ? "succeeds" : eg.message);
    if (!okf) {
        ck_assert_msg(ef.kind == eg.kind && strcmp(ef.message, eg.message) == 0 && ef.loc.line == eg.loc.line &&
                          ef.loc.col == eg.loc.col,
                      "%s: fast fails with \"%s\", generic with \"%s\"", at, ef.message, eg.message);
        return true;
    }
    same_bits(&fast, &generic, at);
    return false;
}

/* Each template on every kind it applies to at 1, 7, 1000 (several seeds:
 * edge values come and go), and on big_kinds at 1000003. */
typedef struct tmpl {
    const char *text;
    bool ints_only;
    bool big; /* also at N = 1000003 for i32 and f32 */
} tmpl;

static void run_templates(const tmpl *ts, size_t nt) {
    static const int64_t sizes[] = {1, 7, 1000};
    for (size_t t = 0; t < nt; t++) {
        int runs = 0, failures = 0;
        for (int ki = 0; ki < NKINDS; ki++) {
            st_scalar_kind k = all_kinds[ki];
            if (ts[t].ints_only && (k == ST_F32 || k == ST_F64)) continue;
            for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
                for (uint64_t seed = 1; seed <= 3; seed++) {
                    st_arena_mark m = st_arena_get_mark(ar);
                    failures += compare(ts[t].text, k, sizes[s], seed * 1000 + t);
                    runs++;
                    st_arena_release(ar, m);
                }
            if (ts[t].big && (k == ST_I32 || k == ST_F32) && st_test_big((int)t)) {
                st_arena_mark m = st_arena_get_mark(ar);
                ck_assert_msg(!compare(ts[t].text, k, 1000003, 7), "%s fails at N = 1000003", ts[t].text);
                st_arena_release(ar, m);
            }
        }
        /* most runs compute something: the test is not of errors alone */
        ck_assert_msg(failures * 2 < runs, "%s: %d of %d runs fail", ts[t].text, failures, runs);
    }
}

static const tmpl maps[] = {
    {"[N]$T = xs |> map(x => x * c + $3 - x / ($1 + c))", false, true},
    {"[N]($T, $T) = zip(xs, ys) |> map((x, y) => if x < y then (x - y, x) else (min(x, y) + c, max(x, c)))", false, false},
    {"[N]$T = zip(xs, ys) |> map((x, y) => let p = (x, (y, c)) in p.1.0 * p.0 + (if p.1.1 > x && y != $0 || x == c then p.1.1 else $3))",
     false, false},
    {"[N]$T = iota(N) |> map(i => xs[(i * 7) % N] + ys[N - 1 - i])", false, false},
    {"[N](f64, i32, u8, $T, bool) = zip(xs, ys) |> map((x, y) => (f64(x) * 0.5f64 + f64(y), i32(x) + 1, u8(y), x % (y + $1), !(x >= y) || f32(x) < 2.5f32))",
     false, false},
    {"[N]$T = zip(xs, ys) |> map((x, y) => ((x << y) | (x >> $3)) ^ (y & c))", true, false},
    {"[N]$T = xs |> map(x => $3 / x)", false, false},
    {"[N]$T = xs |> map(x => xs[(i64(x) % N + N) % N] - ys[(i64(x) & 7) % N])", true, false},
    {"[N]$T = xs |> map(x => -abs(x) + (if x == c then $1 else $0))", false, false},
};

static const tmpl folds[] = {
    {"$T = xs |> reduce(+, c)", false, true},
    {"[N]$T = xs |> scan(+, $0)", false, true},
    {"[N]$T = xs |> exscan(max, c)", false, false},
    {"($T, $T) = zip(xs, ys) |> reduce((a, b) => (a.0 + b.0, min(a.1, b.1)), ($0, c))", false, true},
    {"[N]($T, $T) = zip(xs, ys) |> scan((a, b) => (a.0 * b.0 + a.1, a.1 - b.1), ($1, $0))", false, false},
    {"$T = xs |> reduce((a, b) => a + b / c, $0)", false, false},
    {"[N]$T = xs |> scan((a, b) => let s = a + b in if s > c then s - c else s, $0)", false, true},
    {"[N]$T = ys |> map(y => y * $3) |> scan(*, $1)", false, false},
    {"$T = xs |> reduce((a, b) => a + xs[(i64(b) % N + N) % N], $0)", true, false},
};

static const tmpl hists[] = {
    {"[h]$T = reduce_by_index(replicate(h, c), +, $0, is, xs)", false, true},
    {"[h]$T = reduce_by_index(replicate(h, $0), max, $0, is, xs)", false, false},
    {"[h]($T, $T) = reduce_by_index(replicate(h, ($0, c)), (a, b) => (a.0 + b.0, a.1 * b.1), ($0, $1), is, zip(xs, ys))",
     false, true},
    {"[h]$T = reduce_by_index(replicate(h, $0), (a, b) => a / (b | $1), $1, is, xs)", true, false},
    {"[h]$T = scatter(replicate(h, c), is, xs)", false, false},
    {"[h]($T, $T) = scatter(replicate(h, ($0, c)), is, zip(xs, ys))", false, false},
    {"[N]$T = scatterDistinct(replicate(N, c), iota(N) |> map(i => (i * 7) % N), xs)", false, false},
};

START_TEST(maps_agree) {
    run_templates(maps, sizeof maps / sizeof *maps);
}
END_TEST

START_TEST(folds_agree) {
    run_templates(folds, sizeof folds / sizeof *folds);
}
END_TEST

START_TEST(histograms_and_scatters_agree) {
    run_templates(hists, sizeof hists / sizeof *hists);
}
END_TEST

/* The errors the fast path raises are the generic path's, and some are
 * raised at all: a division by zero in a map, in a fold's operator and in
 * a histogram's, an index out of range, a repeated place. */
START_TEST(errors_are_the_same) {
    struct {
        const char *text;
        st_scalar_kind k;
        int64_t n;
        const char *what;
    } cases[] = {
        {"[N]$T = xs |> map(x => $3 / (x - x))", ST_I32, 1000, "division by zero"},
        {"$T = xs |> reduce((a, b) => a + b % (b - b), $0)", ST_U16, 7, "division by zero"},
        {"[h]$T = reduce_by_index(replicate(h, $0), (a, b) => a / (b - b), $1, iota(N) |> map(i => i32(i % 5)), xs)",
         ST_I64, 1000, "division by zero"},
        {"[N]$T = iota(N) |> map(i => xs[i + 1])", ST_F32, 7, "out of range for an array of length 7"},
        {"[N]$T = scatterDistinct(replicate(N, c), iota(N) |> map(i => (i * 7) % N), xs)", ST_I8, 7, "not distinct"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ck_assert_msg(compare(cases[i].text, cases[i].k, cases[i].n, 1), "%s does not fail", cases[i].text);
        /* and the message is the one expected */
        const char *src = instantiate(
            arena_text(ar, "def main(xs: [N]$T, ys: [N]$T, is: [N]i32, c: $T, h: i64): %s", cases[i].text), cases[i].k);
        const st_def *d = st_program_entry(parse_ok(cx, src), NULL, &(st_err){0});
        uint64_t state = 5;
        st_value args[5] = {random_array(cases[i].k, cases[i].n, &state), random_array(cases[i].k, cases[i].n, &state),
                            random_indices(cases[i].n, H, &state), scalar_of(cases[i].k, random_scalar(cases[i].k, &state)),
                            scalar_of(ST_I64, (st_scalar){.i64 = H})};
        st_binding env[2];
        size_t nenv = bind(d, cases[i].n, env);
        st_err err = {0};
        st_value out;
        ck_assert(!st_eval_with(cx, d, args, env, nenv, ar, NULL, &out, &err));
        ck_assert_msg(strstr(err.message, cases[i].what) != NULL, "%s: \"%s\"", src, err.message);
        ck_assert_msg(err.loc.line == 1 && err.loc.col > 1, "%s: not located: %d:%d", src, err.loc.line, err.loc.col);
    }
}
END_TEST

int main(void) {
    Suite *s = suite_create("interp_fast");
    TCase *tc = tcase_create("fast against generic");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, maps_agree);
    tcase_add_test(tc, folds_agree);
    tcase_add_test(tc, histograms_and_scatters_agree);
    tcase_add_test(tc, errors_are_the_same);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
