/* tests/test_lang.c — functions of one's own, array literals and slices
 * (ir/parse.c, ir/elab.c, ir/print.c): programs calling defs (nested, in a
 * pipeline, as the operator of scan, reduce, map and reduce_by_index,
 * through two levels, over arrays of any length), array literals and
 * slices, each run through the interpreter and on the device (PoCL) under
 * no strategy, the default, and the scan rules where a scan is there,
 * against references computed here in C at N = 1, 7, 1000 and 1000003;
 * print → parse round trips; and the located errors: recursion, arity,
 * argument types, slices out of range (statically and against the inputs),
 * mixed literals. */
#include "pipeline_fixture.h"
#include "strategies/strategies.h"

#include <inttypes.h>
#include <math.h>

/* ------------------------------------------------------------------------ */
/* References in C                                                          */
/* ------------------------------------------------------------------------ */

/* The result a reference fills: up to 4 leaves of int64 results, converted
 * to the leaf's kind when compared. */
typedef struct ref {
    uint32_t nleaves;
    st_scalar_kind kind[4];
    int64_t len[4];
    int64_t *data[4];
} ref;

static int32_t x_at(const st_value *xs, int64_t i) { return ((const int32_t *)xs->u.a.data)[i]; }

static void leaf(ref *r, st_scalar_kind k, int64_t len) {
    r->kind[r->nleaves] = k;
    r->len[r->nleaves] = len;
    r->data[r->nleaves] = st_arena_alloc(ar, (size_t)(len ? len : 1) * sizeof(int64_t));
    r->nleaves++;
}

/* the C of each program below, on xs of length n */
static void ref_calls(const st_value *xs, int64_t n, ref *r) { /* 2x + 3 */
    leaf(r, ST_I32, n);
    for (int64_t i = 0; i < n; i++) r->data[0][i] = (int32_t)(2u * (uint32_t)x_at(xs, i) + 3u);
}

static void ref_pairs(const st_value *xs, int64_t n, ref *r) { /* prefix sums and counts */
    leaf(r, ST_I32, n);
    leaf(r, ST_I32, n);
    int32_t s = 0;
    for (int64_t i = 0; i < n; i++) {
        s = (int32_t)((uint32_t)s + (uint32_t)x_at(xs, i));
        r->data[0][i] = s;
        r->data[1][i] = i + 1;
    }
}

static void ref_maxplus(const st_value *xs, int64_t n, ref *r) { /* running max of x + 1 */
    leaf(r, ST_I32, n);
    int32_t m = INT32_MIN;
    for (int64_t i = 0; i < n; i++) {
        int32_t v = x_at(xs, i) + 1;
        m = v > m ? v : m;
        r->data[0][i] = m;
    }
}

static void ref_reduce(const st_value *xs, int64_t n, ref *r) { /* (max, sum of squares) */
    leaf(r, ST_I32, 1);
    leaf(r, ST_I32, 1);
    int32_t m = INT32_MIN, s = 0;
    for (int64_t i = 0; i < n; i++) {
        m = x_at(xs, i) > m ? x_at(xs, i) : m;
        s = (int32_t)((uint32_t)s + (uint32_t)(x_at(xs, i) * x_at(xs, i)));
    }
    r->data[0][0] = m;
    r->data[1][0] = s;
}

static void ref_hist(const st_value *xs, int64_t n, ref *r) { /* 8 buckets by x % 8, negatives dropped */
    leaf(r, ST_I32, 8);
    for (int64_t k = 0; k < 8; k++) r->data[0][k] = 0;
    for (int64_t i = 0; i < n; i++)
        if (x_at(xs, i) % 8 >= 0) r->data[0][x_at(xs, i) % 8] += x_at(xs, i);
}

static void ref_sizes(const st_value *xs, int64_t n, ref *r) { /* sum of xs + n, of xs[1:] + n - 1 */
    leaf(r, ST_I32, 1);
    leaf(r, ST_I32, 1);
    int32_t s = 0;
    for (int64_t i = 0; i < n; i++) s += x_at(xs, i);
    r->data[0][0] = s + (int32_t)n;
    r->data[1][0] = s - x_at(xs, 0) + (int32_t)(n - 1);
}

static void ref_stencil(const st_value *xs, int64_t n, ref *r) { /* 1 2 1 over the interior */
    leaf(r, ST_I32, n - 2);
    for (int64_t i = 0; i + 2 < n; i++) r->data[0][i] = x_at(xs, i) + 2 * x_at(xs, i + 1) + x_at(xs, i + 2);
}

static void ref_weights(const st_value *xs, int64_t n, ref *r) { /* x * w[i % 5] */
    static const int32_t w[5] = {3, -1, 4, 1, -5};
    leaf(r, ST_I32, n);
    for (int64_t i = 0; i < n; i++) r->data[0][i] = x_at(xs, i) * w[i % 5];
}

static void ref_tail_scan(const st_value *xs, int64_t n, ref *r) { /* scan of xs[1:] */
    leaf(r, ST_I32, n - 1);
    int32_t s = 0;
    for (int64_t i = 1; i < n; i++) r->data[0][i - 1] = s = (int32_t)((uint32_t)s + (uint32_t)x_at(xs, i));
}

static void ref_positive_pairs(const st_value *xs, int64_t n, ref *r) { /* examples/function_scan */
    leaf(r, ST_I32, n);
    leaf(r, ST_I32, n);
    int32_t s = 0, c = 0;
    for (int64_t i = 0; i < n; i++) {
        if (x_at(xs, i) > 0) s += x_at(xs, i), c++;
        r->data[0][i] = s;
        r->data[1][i] = c;
    }
}

static void ref_literal_hist(const st_value *xs, int64_t n, ref *r) { /* a literal's counts */
    (void)xs, (void)n;
    static const int32_t is[6] = {0, 1, 1, 3, 2, 1}, vs[6] = {1, 2, 3, 4, 5, 6};
    leaf(r, ST_I32, 4);
    for (int k = 0; k < 4; k++) r->data[0][k] = 0;
    for (int k = 0; k < 6; k++) r->data[0][is[k]] += vs[k];
}

/* ------------------------------------------------------------------------ */
/* The programs                                                             */
/* ------------------------------------------------------------------------ */

enum { SCAN = 1 }; /* the scan rules apply */

typedef struct lang_case {
    const char *what, *src;
    void (*ref)(const st_value *xs, int64_t n, ref *r);
    int64_t min_n; /* the shortest N the program's slices allow */
    int flags;
} lang_case;

static const lang_case cases[] = {
    {"nested calls in a pipeline",
     "def add(x: i32, y: i32): i32 = x + y\n"
     "def twice(x: i32): i32 = add(x, x)\n"
     "def main(xs: [N]i32): [N]i32 = xs |> map(x => twice(x) |> add(3))\n",
     ref_calls, 1, 0},
    {"a function of pairs as the scan operator",
     "def add_pairs(a: (i32, i32), b: (i32, i32)): (i32, i32) = (a.0 + b.0, a.1 + b.1)\n"
     "def main(xs: [N]i32): ([N]i32, [N]i32) = xs |> map(x => (x, 1)) |> scan(add_pairs, (0, 0)) |> unzip\n",
     ref_pairs, 1, SCAN},
    {"an operator passed through two levels, and map(g)",
     "def mx(a: i32, b: i32): i32 = max(a, b)\n"
     "def op(a: i32, b: i32): i32 = mx(b, a)\n"
     "def inc(x: i32): i32 = x + 1\n"
     "def main(xs: [N]i32): [N]i32 = xs |> map(inc) |> scan(op, i32.min)\n",
     ref_maxplus, 1, SCAN},
    {"functions as reduce operators",
     "def mx(a: i32, b: i32): i32 = max(a, b)\n"
     "def plus(a: i32, b: i32): i32 = a + b\n"
     "def sq(x: i32): i32 = x * x\n"
     "def main(xs: [N]i32): (i32, i32) = (reduce(mx, i32.min, xs), xs |> map(sq) |> reduce(plus, 0))\n",
     ref_reduce, 1, 0},
    {"a function as reduce_by_index's operator",
     "def plus(a: i32, b: i32): i32 = a + b\n"
     "def bucket(x: i32): i64 = i64(x % 8)\n"
     "def main(xs: [N]i32): [8]i32 = reduce_by_index(replicate(8, 0), plus, 0, xs |> map(bucket), xs)\n",
     ref_hist, 1, 0},
    {"a def over arrays of any length",
     "def total(ys: [n]i32): i32 = reduce(+, 0, ys) + i32(n)\n"
     "def main(xs: [N]i32): (i32, i32) = (total(xs), total(xs[1:]))\n",
     ref_sizes, 1, 0},
    {"a 3-tap stencil: slices and a literal",
     "def main(xs: [N]i32): [N - 2]i32 =\n"
     "  let w = [1, 2, 1]\n"
     "  in zip(xs[0:N - 2], xs[1:N - 1], xs[2:]) |> map((a, b, c) => a * w[0] + b * w[1] + c * w[2])\n",
     ref_stencil, 2, 0},
    {"a literal read at computed indices",
     "def main(xs: [N]i32): [N]i32 =\n"
     "  let w = [3, -1, 4, 1, -5]\n"
     "  in zip(xs, iota(N)) |> map((x, i) => x * w[i % 5])\n",
     ref_weights, 1, 0},
    {"a scan of a slice",
     "def main(xs: [N]i32): [N - 1]i32 = xs[1:N] |> scan(+, 0)\n", ref_tail_scan, 1, SCAN},
    {"literals as reduce_by_index's indices and values",
     "def main(xs: [N]i32): [4]i32 = reduce_by_index(replicate(4, 0), +, 0, [0i64, 1, 1, 3, 2, 1], [1, 2, 3, 4, 5, 6])\n",
     ref_literal_hist, 1, 0},
    {"examples/function_scan.strata", "@function_scan", ref_positive_pairs, 1, SCAN},
};
enum { NCASES = sizeof cases / sizeof *cases };

static const int64_t lengths[] = {1, 7, 1000, 1000003};

/* The reference as a value shaped like the result. */
static st_value ref_value(const ref *r) {
    st_value leaves[4];
    for (uint32_t k = 0; k < r->nleaves; k++) {
        size_t sz = st_scalar_size(r->kind[k]);
        char *data = st_arena_alloc(ar, (size_t)(r->len[k] ? r->len[k] : 1) * sz);
        for (int64_t i = 0; i < r->len[k]; i++) {
            st_scalar s = {.bits = 0};
            if (r->kind[k] == ST_I32) s.i32 = (int32_t)r->data[k][i];
            else s.i64 = r->data[k][i];
            memcpy(data + (size_t)i * sz, &s, sz);
        }
        leaves[k] = array_of(r->kind[k], r->len[k], data, ar);
    }
    if (r->nleaves == 1) return leaves[0];
    st_value *items = st_arena_alloc(ar, r->nleaves * sizeof *items);
    memcpy(items, leaves, r->nleaves * sizeof *items);
    st_value t;
    memset(&t, 0, sizeof t);
    t.kind = ST_VALUE_TUPLE;
    t.n = r->nleaves;
    t.u.items = items;
    return t;
}

/* A scalar result of one element: the reference's one-element leaf. */
static st_value scalars_as_arrays(const st_value *v) {
    if (v->kind == ST_VALUE_SCALAR) {
        char *data = st_arena_alloc(ar, 8);
        memcpy(data, &v->u.s, st_scalar_size(v->scalar));
        return array_of(v->scalar, 1, data, ar);
    }
    if (v->kind != ST_VALUE_TUPLE) return *v;
    st_value *items = st_arena_alloc(ar, v->n * sizeof *items);
    for (uint32_t i = 0; i < v->n; i++) items[i] = scalars_as_arrays(&v->u.items[i]);
    st_value t = *v;
    t.u.items = items;
    return t;
}

static void equals_c(const st_value *got, const ref *r, const char *label) {
    st_value g = scalars_as_arrays(got), want = ref_value(r);
    st_err err = {0};
    ck_assert_msg(st_value_agree(&g, &want, 0, &err), "%s: differs from C: %s", label, err.message);
}

/* seeded inputs of length n for d: the arguments and sizes */
static bool inputs(const st_def *d, int64_t n, st_arena *a, const st_value **args, const st_binding **env,
                   size_t *nenv, st_err *err) {
    st_inputs *in = st_inputs_new(cx, d, a);
    return st_inputs_set(in, text_of("N=%lld", (long long)n), err) && st_inputs_generate(in, (uint64_t)n + 5, err) &&
           st_inputs_finish(in, args, env, nenv, err);
}

/* the case under strategy (NULL: none) at every length, on the device and
 * in the interpreter, against C */
/* a case's text: its own, or examples/NAME.strata for "@NAME" */
static const char *source_of(const lang_case *c) { return c->src[0] == '@' ? example_text(ar, c->src + 1) : c->src; }

static void case_agrees(const lang_case *c, const char *strategy) {
    const char *label = text_of("%s under %s", c->what, strategy ? strategy : "no strategy");
    const st_def *orig = def_of(source_of(c));
    st_code code = generated(lowered(apply(orig, strategy, label), label), label);
    st_exe *exe = built(&code, label);
    for (size_t i = 0; i < sizeof lengths / sizeof *lengths; i++) {
        int64_t n = lengths[i];
        const char *at = text_of("%s, N = %lld", label, (long long)n);
        st_arena *a = st_arena_new();
        const st_value *args;
        const st_binding *env;
        size_t nenv;
        st_err err = {0};
        bool ok = inputs(orig, n, a, &args, &env, &nenv, &err);
        if (n < c->min_n) { /* the slices' bounds refuse the inputs, at the slice */
            ck_assert_msg(!ok && err.loc.line > 0 && strstr(err.message, "out of range"), "%s: %s", at,
                          ok ? "accepted" : err.message);
            st_arena_free(a);
            continue;
        }
        ck_assert_msg(ok, "%s: %s", at, err.message);
        ref r = {0};
        c->ref(&args[0], n, &r);
        st_value want, got;
        ck_assert_msg(st_eval(cx, orig, args, env, nenv, a, &want, &err), "%s: the interpreter: %s", at, err.message);
        equals_c(&want, &r, text_of("%s, the interpreter", at));
        st_launch *l = st_launch_new(exe, args, env, nenv, &err);
        ck_assert_msg(l != NULL, "%s: st_launch_new: %s", at, err.message);
        ck_assert_msg(st_launch_run(l, NULL, &err), "%s: st_launch_run: %s", at, err.message);
        ck_assert_msg(st_launch_read(l, a, &got, &err), "%s: st_launch_read: %s", at, err.message);
        equals_c(&got, &r, text_of("%s, the device", at));
        st_launch_free(l);
        st_arena_free(a);
    }
    st_exe_free(exe);
}

/* none, the default for the device, and the scan rules */
enum { NSTRATEGIES = 4 };
static const char *strategy_of(int k) {
    switch (k) {
    case 0: return NULL;
    case 1: return st_default_strategy(st_cl_device(device())->type);
    case 2: return "first(scan, lookback(M=8, WG=128, LOAD=direct))";
    default: return "first(scan, parallel-scan(BS=256, BF=2, SE=4))";
    }
}

START_TEST(each_program_equals_c_under_each_strategy) {
    const lang_case *c = &cases[_i / NSTRATEGIES];
    int k = _i % NSTRATEGIES;
    if (k >= 2 && !(c->flags & SCAN)) return;
    case_agrees(c, strategy_of(k));
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Printing                                                                 */
/* ------------------------------------------------------------------------ */

static const char *printed(const st_program *p) {
    st_buf b = {0};
    st_print_program(p, &b);
    const char *s = text_of("%s", b.data ? b.data : "");
    st_buf_free(&b);
    return s;
}

START_TEST(every_program_prints_and_reads_back_the_same) {
    for (int i = 0; i < NCASES; i++) {
        const st_program *p = parse_ok(cx, source_of(&cases[i]));
        const char *once = printed(p);
        const st_program *q = parse_ok(cx, once);
        ck_assert_uint_eq(p->ndefs, q->ndefs);
        for (uint32_t k = 0; k < p->ndefs; k++) {
            ck_assert_msg(p->defs[k].body == q->defs[k].body, "%s: def %s reads back otherwise:\n%s", cases[i].what,
                          p->defs[k].name, once);
            ck_assert_uint_eq(p->defs[k].nbounds, q->defs[k].nbounds);
        }
        ck_assert_str_eq(printed(q), once);
    }
}
END_TEST

START_TEST(literals_and_slices_print_as_written) {
    const st_program *p = parse_ok(cx, cases[6].src);
    const char *s = printed(p);
    ck_assert_has(s, "[1, 2, 1]");
    ck_assert_has(s, "xs[1:N - 1]");
    ck_assert_has(s, "xs[2:N]");
    p = parse_ok(cx, "def main(k: i64) = ([1i64, 2, k], [(1, 2.5f64), (3, 4.0)], [true])\n");
    s = printed(p);
    ck_assert_has(s, "[1, 2, k]"); /* k types the literals */
    ck_assert_has(s, "[(1, 2.5f64), (3, 4.0)]");
    ck_assert_has(s, "[true]");
    /* an index variable of the program's own is not captured */
    p = parse_ok(cx, "def main(xs: [N]i64): [N][2]i64 = xs |> map(i => [i, i + 1])\n");
    ck_assert_ptr_eq(parse_ok(cx, printed(p))->defs[0].body, p->defs[0].body);
    st_arena *a = st_arena_new();
    int64_t data[3] = {5, 6, 7};
    st_value arg = array_of(ST_I64, 3, data, a);
    st_value v = eval_ok(cx, a, "def main(xs: [N]i64): [N][2]i64 = xs |> map(i => [i, i + 1])\n", &arg, 1);
    ck_assert_int_eq(((int64_t *)v.u.a.data)[2], 6);
    ck_assert_int_eq(((int64_t *)v.u.a.data)[5], 8);
    st_arena_free(a);
}
END_TEST

START_TEST(a_call_is_inlined_and_run_picks_main) {
    const st_program *p = parse_ok(cx, cases[0].src);
    ck_assert_uint_eq(p->ndefs, 3);
    const st_def *m = entry_ok(p);
    ck_assert_str_eq(m->name, "main");
    const char *s = printed_def(m);
    ck_assert_msg(!strstr(s, "add(") && !strstr(s, "twice("), "not inlined:\n%s", s);
    /* a helper taking scalars is a def like any: its own entry when named */
    st_err err = {0};
    const st_def *add = st_program_entry(p, "add", &err);
    ck_assert(add != NULL);
    ck_assert_str_eq(printed_def(add), "def add(x: i32, y: i32): i32 =\n  x + y\n");
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Errors, each at its place                                                */
/* ------------------------------------------------------------------------ */

START_TEST(bad_programs_are_refused_at_their_place) {
    ck_assert_error(cx, "def f(x: i32): i32 = f(x)\n", 1, 22, "`f` is recursive (f -> f)");
    ck_assert_error(cx,
                    "def f(x: i32): i32 = g(x) + 1\n"
                    "def g(x: i32): i32 = f(x)\n"
                    "def main(xs: [N]i32): [N]i32 = xs |> map(f)\n",
                    2, 22, "(f -> g -> f)");
    ck_assert_error(cx,
                    "def main(xs: [N]i32): [N]i32 = xs |> scan(f, 0)\n"
                    "def f(x: i32, y: i32): i32 = g(x, y)\n"
                    "def g(x: i32, y: i32): i32 = f(y, x)\n",
                    3, 30, "(f -> g -> f)");
    ck_assert_error(cx,
                    "def f(x: i32, y: i32): i32 = x\n"
                    "def main(xs: [N]i32): [N]i32 = xs |> map(x => f(x, 1, 2))\n",
                    2, 47, "`f` takes 2 arguments, but was given 3");
    ck_assert_error(cx,
                    "def f(x: i32, y: i32): i32 = x\n"
                    "def main(xs: [N]i32): [N]i32 = xs |> map(x => f(x, 1.5))\n",
                    2, 52, "argument 2 of `f` has type f32, but its parameter `y` is i32");
    ck_assert_error(cx,
                    "def f(x: i32, y: i32): i32 = x\n"
                    "def main(xs: [N]f32): [N]f32 = xs |> scan(f, 0.0)\n",
                    2, 43, "argument 1 of `f` has type f32");
    ck_assert_error(cx,
                    "def f(x: i32): i32 = x\n"
                    "def main(xs: [N]i32): [N]i32 = xs |> scan(f, 0)\n",
                    2, 43, "`f` takes 1 argument, but scan passes 2");
    ck_assert_error(cx,
                    "def f(ys: [n]i32, zs: [n]i32): i32 = 0\n"
                    "def main(xs: [N]i32, ws: [M]i32): i32 = f(xs, ws)\n",
                    2, 47, "argument 2 of `f` has length M, but `f`'s size `n` is already N");
    ck_assert_error(cx, "def main(xs: [N]i32): [N + 1]i32 = xs[0:N+1]\n", 1, 38,
                    "the slice 0:N + 1 of an array of N is out of range");
    ck_assert_error(cx, "def main(xs: [N]i32) = xs[3:2]\n", 1, 26, "the slice 3:2 of an array of N is out of range");
    ck_assert_error(cx, "def main(xs: [N]i32, k: i32) = xs[0:k + xs[0]]\n", 1, 39, "a slice's bounds are sizes");
    ck_assert_error(cx, "def main(x: i32) = x[0:1]\n", 1, 21, "only an array can be sliced");
    ck_assert_error(cx, "def main(xs: [N]i32) = [1, 2.0, 3]\n", 1, 28,
                    "the elements of an array literal have one type: element 1 is i32, but element 2 is f32");
    ck_assert_error(cx, "def main(xs: [N]i32) = [xs, 3]\n", 1, 29, "the rows of an array literal have one type: row 1 is [N]i32, but row 2 is i32");
    ck_assert_error(cx, "def main(xs: [N]i32) = []\n", 1, 24, "an empty array literal");
    ck_assert_error(cx, "def main(xs: [N]i32) = [1, 2\n", 2, 1, "`,` or `]` in an array literal");
}
END_TEST

START_TEST(a_slice_beyond_the_inputs_is_refused_at_the_slice) {
    const st_def *d = def_of("def main(xs: [N]i32, M: i64): [M]i32 =\n  xs[0:M]\n");
    ck_assert_uint_eq(d->nbounds, 2); /* 0 <= M and M <= N */
    st_arena *a = st_arena_new();
    st_inputs *in = st_inputs_new(cx, d, a);
    st_err err = {0};
    ck_assert(st_inputs_set(in, "N=7", &err) && st_inputs_set(in, "M=8", &err) && st_inputs_generate(in, 1, &err));
    const st_value *args;
    const st_binding *env;
    size_t nenv;
    ck_assert(!st_inputs_finish(in, &args, &env, &nenv, &err));
    ck_assert_int_eq(err.loc.line, 2);
    ck_assert_int_eq(err.loc.col, 5);
    ck_assert_has(err.message, "the slice 0:M of an array of N is out of range with N = 7, M = 8");
    in = st_inputs_new(cx, d, a);
    ck_assert(st_inputs_set(in, "N=7", &err) && st_inputs_set(in, "M=7", &err) && st_inputs_generate(in, 1, &err));
    ck_assert_msg(st_inputs_finish(in, &args, &env, &nenv, &err), "%s", err.message);
    st_arena_free(a);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* sqrt, exp, log and abs                                                   */
/* ------------------------------------------------------------------------ */

/* Programs with the math functions (an L2 normalisation, a softmax, abs of
 * every width), map2 and map3, and lambdas after |>; the device agrees with the interpreter (floats within 10^-3)
 * under each strategy at N = 1, 7, 1000 and 1000003, and each prints and
 * reads back as itself. Their values are the interpreter suite's. */
static const char *const math_programs[] = {
    "def main(xs: [N]f32): [N]f32 = xs |> map(x => x / sqrt(reduce(+, 0.0, xs |> map(y => y * y))))",
    "def main(xs: [N]f32): [N]f32 =\n"
    "  let m = reduce(max, -f32.inf, xs)\n"
    "  let e = xs |> map(x => exp(x - m))\n"
    "  in e |> map(v => v / reduce(+, 0.0, e))",
    "def main(xs: [N]i32, ys: [N]i8, zs: [N]f64): ([N]i32, [N]i8, [N]f64, [N]f32, f64) =\n"
    "  (xs |> map(x => abs(x) - abs(-3)), ys |> map(y => abs(y)),\n"
    "   zs |> map(z => exp(z / 1000000.0) + log(abs(z) + 1.0)),\n"
    "   xs |> map(x => sqrt(f32(abs(x) % 1000))) |> scan(+, 0.0), zs |> map(z => abs(z)) |> reduce(max, 0.0))",
    "def main(xs: [N]u16): [N]u32 = xs |> map(x => u32(abs(x)) + u32(sqrt(f64(x)))) |> scan(+, 0u32)",
    /* map2 and map3, a map of a zip: with a def, a lambda, in a pipeline */
    "def axpy(x: f32, y: f32): f32 = 2.0 * x + y\n"
    "def main(xs: [N]f32, ys: [N]f32, zs: [N]i32): ([N]f32, [N]f32, [N]i32) =\n"
    "  (map2(axpy, xs, ys), ys |> map2((x, y) => x * y, xs) |> scan(+, 0.0),\n"
    "   map3((x, y, z) => i32(x) + i32(y) * z, xs, ys, zs))",
    /* an anonymous function after |>: a let of what flows in (its parts, of a tuple) */
    "def main(xs: [N]f32, ys: [N]i32): (f32, i32) =\n"
    "  (xs |> map(x => x * 0.5) |> (v => reduce(+, 0.0, v) / f32(N) + v[0]),\n"
    "   zip(ys, ys |> map(y => y * 3)) |> unzip |> ((a, b) => reduce(+, 0, a) - reduce(max, 0, b)))",
    /* the trigonometric, hyperbolic and rounding functions, atan2, pi */
    "def main(xs: [N]f32, ys: [N]f64): ([N]f32, [N]f64, f32) =\n"
    "  (xs |> map(x => sin(x * 10.0) * cos(x) + tan(x * 0.5) + atan(x) + tanh(x) + sinh(x) + cosh(x)\n"
    "                 + asin(x * 0.5) + acos(x * 0.5) + atan2(x, 3.0) + f32.pi),\n"
    "   ys |> map(y => sin(y) + atan2(1.0, y) + floor(y * 100.0) + ceil(y * 3.0) + round(y * 8.0) + trunc(y * -7.0) + f64.pi),\n"
    "   xs |> map(x => cos(x * f32.pi)) |> reduce(+, 0.0))",
    /* ** of integers (wrapping, negative powers) and floats; hexadecimal and binary literals; the tests */
    "def main(ks: [N]i32, bs: [N]u8, ls: [N]i64, xs: [N]f32): ([N]i32, [N]u8, [N]i64, [N]f32, [N]bool) =\n"
    "  (ks |> map(k => k ** 3 + (k % 4) ** (k % 3 - 1) + 0x10 + 0b11 + 2 ** 3 ** 2 - (2 ** 3) ** 2),\n"
    "   bs |> map(b => b ** 3u8 + 0xffu8), ls |> map(l => l ** 7 - 3i64 ** 41),\n"
    "   xs |> map(x => abs(x) ** 0.5 + 2.0 ** x), xs |> map(x => isnan(x / 0.0 - x / 0.0) || isinf(x * 1e38) || x > 0.5))",
    /* rotate, and array literals of arrays (literal rows, computed rows, three levels) */
    "def main(xs: [N]i32): ([N]i32, [N]i32, [3][2]i32, [2][2][2]f32, [2][N]i32) =\n"
    "  (rotate(3, xs), rotate(-1 - N, xs) |> map(x => x * 2), [[1, 2], [3, 4], [xs[0], 6]],\n"
    "   [[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, f32(N)]]], [xs, rotate(1, xs)])",
    "def main(xs: [N]f32): [N]f32 =\n"
    "  let w = [[0.25, 0.5], [0.5, 0.25]] in xs |> map(x => x * w[0][1] + w[1][0] * w[i64(x > 0.5)][1])",
    /* in-place updates, Futhark's `with`: in a loop, of a slice, chained */
    "def main(xs: [N]i32): ([N]i32, [N]i32) =\n"
    "  (loop a = xs for i < 3 do a with [i * 2 % N] = a[i % N] * 2 + i32(i),\n"
    "   xs with [N / 2:N] = (xs[0:N - N / 2] |> map(x => x + 1)) with [N - 1] = 7)",
    /* a built-in function by its name */
    "def main(xs: [N]f32, ys: [N]f64): ([N]f32, f64) = (xs |> map(cos), map2((y, z) => atan2(y, z * 0.5), ys, ys) |> map(floor) |> reduce(max, -f64.inf))",
    /* an operator by its name where a function of a pair goes: map2's, a map over a zip's */
    "def main(xs: [N]f32, ys: [N]f32, ks: [N]i32): ([N]f32, [N]f32, [N]bool, [N]i32) =\n"
    "  (map2(+, xs, ys), zip(xs, ys) |> map(atan2), map2(<, ks, ks |> map(k => k % 7)), map2(min, ks, rotate(1, ks)))",
    /* bits of every width, computed and of literals (-0.0, the infinities;
     * a NaN's exponent and that its mantissa is not 0, as a NaN's sign
     * and payload are the device's own), in a map, a reduce and a scan */
    "def main(xs: [N]f32, ys: [N]f64, ks: [N]i32, ls: [N]i64, bs: [N]i8, us: [N]u8, hs: [N]i16, ws: [N]u16):\n"
    "    ([N]u32, [N]u64, [N]u32, [N]u64, [N]u8, [N]u8, [N]u16, [N]u16, [6]u32, [5]u64, [N]u32, u32, [N]u32, (u32, u64, u8)) =\n"
    "  (xs |> map(bits), ys |> map(y => bits(-y + 0.25f64)), ks |> map(bits), ls |> map(l => bits(l - 3i64)),\n"
    "   bs |> map(bits), us |> map(bits), hs |> map(h => bits(h - 7i16)), ws |> map(bits),\n"
    "   [0.0, -0.0, f32.inf, -f32.inf, 1.0, -2.5] |> map(bits),\n"
    "   [0.0f64, -0.0f64, f64.inf, -f64.inf, f64.nan] |> map(v => bits(v) & 0xfff0000000000000u64),\n"
    "   xs |> map(x => let n = (x - x) / (x - x) in (bits(n) & 0x7f800000u32) + min(bits(n) & 0x7fffffu32, 1u32)),\n"
    "   xs |> map(x => bits(x) >> 16u32) |> reduce(+, 0u32), ks |> map(k => bits(k) & 0xffu32) |> scan(+, 0u32),\n"
    "   (bits(-0.0), bits(f64.inf), bits(-1i8)))",
};
enum { NMATH = sizeof math_programs / sizeof *math_programs };

/* each with what it computes once bound once (as written, a sum per
 * element: a quadratic kernel at 10^6) */
enum { NMATH_STRATEGIES = 3 };
static const char *math_strategy(int k) {
    switch (k) {
    case 0: return st_default_strategy("CPU");
    case 1: return st_default_strategy("GPU");
    default: return "try(hoist-invariant) ; try(first(scan, lookback(M=8, WG=128, LOAD=direct)))";
    }
}

START_TEST(math_functions_agree_on_the_device) {
    const char *src = math_programs[_i / NMATH_STRATEGIES];
    const char *strategy = math_strategy(_i % NMATH_STRATEGIES);
    const char *label = text_of("%s under %s", src, strategy ? strategy : "no strategy");
    const st_program *p = parse_ok(cx, src);
    const char *once = printed(p);
    const st_program *q = parse_ok(cx, once);
    ck_assert_msg(q->defs[q->ndefs - 1].body == p->defs[p->ndefs - 1].body, "%s reads back otherwise:\n%s", src, once);
    const st_def *orig = def_of(src);
    st_code code = generated(lowered(apply(orig, strategy, label), label), label);
    st_exe *exe = built(&code, label);
    for (size_t i = 0; i < sizeof lengths / sizeof *lengths; i++) {
        if (lengths[i] > 1000 && !st_test_big(_i % NMATH_STRATEGIES)) continue;
        agrees(exe, orig, text_of("N=%lld", (long long)lengths[i]), 61 + i, label);
    }
    st_exe_free(exe);
}
END_TEST

/* What the interpreter gives for the new functions and operators: C's
 * libm for the floats; ** of integers wraps and rounds a negative power
 * toward zero; ** groups to the right. */
START_TEST(math_functions_have_their_values) {
    static const struct {
        const char *expr;
        int64_t want;
    } ints[] = {
        {"2 ** 3 ** 2", 512},       {"(2 ** 3) ** 2", 64},  {"(0 - 2) ** 3", -8},        {"2 ** (0 - 1)", 0},
        {"(0 - 1) ** (0 - 3)", -1}, {"1 ** (0 - 5)", 1},    {"0 ** (0 - 1)", 0},         {"0 ** 0", 1},
        {"i32(200u8 ** 2u8)", 64},  {"0xff + 0b1010", 265}, {"i32(0xFFu8)", 255},        {"i32(65536 ** 2)", 0},
        {"i32(floor(-1.5))", -2},   {"i32(round(2.5))", 3}, {"i32(round(0.0 - 2.5))", -3}, {"i32(trunc(-1.7))", -1},
        {"i32(ceil(1.2))", 2},      {"if isnan(f32.nan) && isinf(f64.inf) && !isnan(1.0) then 1 else 0", 1},
    };
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
        const char *src = text_of("def main(x: i32): i32 = x + %s\n", ints[i].expr);
        st_value arg = st_value_scalar(ST_I32, (st_scalar){.i32 = 0});
        st_value r = eval_ok(cx, ar, src, &arg, 1);
        ck_assert_msg(r.u.s.i32 == ints[i].want, "%s: %d, not %lld", ints[i].expr, r.u.s.i32, (long long)ints[i].want);
    }
    /* 3 ** 41 modulo 2^64, as a two's complement i64 */
    uint64_t p = 1;
    for (int k = 0; k < 41; k++) p *= 3;
    st_value arg = st_value_scalar(ST_I64, (st_scalar){.i64 = 0});
    st_value r = eval_ok(cx, ar, "def main(x: i64): i64 = x + 3i64 ** 41\n", &arg, 1);
    ck_assert_int_eq(r.u.s.i64, (int64_t)p);
    static const struct {
        const char *expr;
        double want;
    } floats[] = {
        {"sin(0.5)", 0.479425538604203},  {"cos(0.5)", 0.8775825618903728}, {"tan(0.5)", 0.5463024898437905},
        {"asin(0.5)", 0.5235987755982989}, {"acos(0.5)", 1.0471975511965979}, {"atan(0.5)", 0.4636476090008061},
        {"sinh(0.5)", 0.5210953054937474}, {"cosh(0.5)", 1.1276259652063807}, {"tanh(0.5)", 0.46211715726000974},
        {"atan2(1.0, 0.0 - 1.0)", 2.356194490192345}, {"2.0 ** 0.5", 1.4142135623730951}, {"f64.pi", 3.141592653589793},
    };
    for (size_t i = 0; i < sizeof floats / sizeof *floats; i++) {
        const char *src = text_of("def main(x: f64): f64 = x + %s\n", floats[i].expr);
        st_value a = st_value_scalar(ST_F64, (st_scalar){.f64 = 0});
        st_value v = eval_ok(cx, ar, src, &a, 1);
        ck_assert_msg(fabs(v.u.s.f64 - floats[i].want) <= 1e-15, "%s: %.17g, not %.17g", floats[i].expr, v.u.s.f64,
                      floats[i].want);
    }
}
END_TEST

/* bits(x) is x's bit pattern as the unsigned integer of its size: IEEE
 * 754's for a float (-0.0's sign, the infinities' exponents, a NaN's),
 * two's complement for an integer; of a literal as of a computed value. */
START_TEST(bits_is_the_unsigned_integer_of_its_size) {
    static const struct {
        const char *expr, *type;
        uint64_t want;
    } cases[] = {
        {"bits(1.0f32)", "u32", 0x3f800000u},
        {"bits(-0.0)", "u32", 0x80000000u},
        {"bits(-f32(x))", "u32", 0x80000000u},
        {"bits(f32.inf)", "u32", 0x7f800000u},
        {"bits(-f32.inf)", "u32", 0xff800000u},
        {"bits(f32(x) - 2.5)", "u32", 0xc0200000u},
        {"bits(f32.nan) & 0x7f800000u32", "u32", 0x7f800000u},
        /* 0/0's sign and payload are the machine's: its exponent is all ones, its mantissa not 0 */
        {"(bits(f32(x) / f32(x)) & 0x7f800000u32) + min(bits(f32(x) / f32(x)) & 0x7fffffu32, 1u32)", "u32", 0x7f800001u},
        {"bits(1.0f64)", "u64", 0x3ff0000000000000u},
        {"bits(-f64(x))", "u64", 0x8000000000000000u},
        {"bits(-0.0f64)", "u64", 0x8000000000000000u},
        {"bits(-f64.inf)", "u64", 0xfff0000000000000u},
        {"(bits(f64(x) / f64(x)) & 0x7ff0000000000000u64) + min(bits(f64(x) / f64(x)) & 0xfffffffffffffu64, 1u64)", "u64",
         0x7ff0000000000001u},
        {"bits(-1i8)", "u8", 0xff},
        {"bits(i8(x) - 127i8 - 1i8)", "u8", 0x80},
        {"bits(200u8)", "u8", 200},
        {"bits(-2i16)", "u16", 0xfffe},
        {"bits(u16(x) + 65535u16)", "u16", 0xffff},
        {"bits(x - 1)", "u32", 0xffffffffu},
        {"bits(x + 2147483647)", "u32", 0x7fffffffu},
        {"bits(4000000000u32)", "u32", 4000000000u},
        {"bits(i64(x) - 1i64)", "u64", UINT64_MAX},
        {"bits(i64(x) - 9223372036854775807i64 - 1i64)", "u64", 0x8000000000000000u},
        {"bits(18446744073709551615u64)", "u64", UINT64_MAX},
        /* by its name, in a map: bits(1.0) + bits(-0.0) */
        {"reduce(+, 0u32, [1.0, -0.0] |> map(bits))", "u32", 0xbf800000u},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *src = text_of("def main(x: i32) = %s\n", cases[i].expr);
        const st_program *p = parse_ok(cx, src);
        const st_type *t = p->defs[0].result;
        ck_assert_msg(t->kind == ST_TYPE_SCALAR && !strcmp(st_scalar_name(t->scalar), cases[i].type), "%s: not a %s",
                      cases[i].expr, cases[i].type);
        st_value arg = st_value_scalar(ST_I32, (st_scalar){.i32 = 0});
        st_value r = eval_ok(cx, ar, src, &arg, 1);
        size_t size = st_scalar_size(r.scalar);
        uint64_t got = size == 1 ? r.u.s.u8 : size == 2 ? r.u.s.u16 : size == 4 ? r.u.s.u32 : r.u.s.u64;
        ck_assert_msg(got == cases[i].want, "%s: %#" PRIx64 ", not %#" PRIx64, cases[i].expr, got, cases[i].want);
        /* as written, and read back as itself */
        const char *once = printed(p);
        ck_assert_msg(parse_ok(cx, once)->defs[0].body == p->defs[0].body, "%s reads back otherwise:\n%s", src, once);
    }
    ck_assert_has(printed(parse_ok(cx, "def main(x: f32) = (bits(x), bits(1.0f32), bits(-0.0f64))\n")),
                  "(bits(x), bits(1.0), bits(-0.0f64))");
    ck_assert_error(cx, "def main(b: bool) = bits(b)\n", 1, 26, "bits needs a number, but this has type bool");
    ck_assert_error(cx, "def main(bs: [N]bool) = map(bits, bs)\n", 1, 29, "bits needs a number, but this has type bool");
    ck_assert_error(cx, "def main(xs: [N]f32) = bits(xs)\n", 1, 29, "bits needs a number, but this has type [N]f32");
    ck_assert_error(cx, "def main(x: f32) = bits(x, x)\n", 1, 20, "bits takes 1 argument, but was given 2");
}
END_TEST

START_TEST(math_functions_are_refused_at_their_place) {
    ck_assert_error(cx, "def main(xs: [N]i32) = xs |> map(x => sqrt(x))\n", 1, 44,
                    "sqrt needs a float (f32 or f64), but this has type i32: convert it first, as f32(x)");
    ck_assert_error(cx, "def main(xs: [N]i32) = log(xs)\n", 1, 28, "log needs a float (f32 or f64), but this has type [N]i32");
    ck_assert_error(cx, "def main(b: bool) = abs(b)\n", 1, 25, "abs needs a number, but this has type bool");
    ck_assert_error(cx, "def main(x: i32) = sin(x)\n", 1, 24, "sin needs a float (f32 or f64), but this has type i32");
    ck_assert_error(cx, "def main(x: i64) = isnan(x)\n", 1, 26, "isnan needs a float (f32 or f64), but this has type i64");
    ck_assert_error(cx, "def main(x: i32) = atan2(x, x)\n", 1, 26,
                    "`atan2` needs floats (f32 or f64), but its left operand has type i32");
    ck_assert_error(cx, "def main(x: f32) = atan2(x)\n", 1, 20, "atan2 takes 2 arguments, but was given 1");
    ck_assert_error(cx, "def main(b: bool) = b ** b\n", 1, 21, "`**` needs numbers, but its left operand has type bool");
    ck_assert_error(cx, "def main(x: i32) = x + 0x\n", 1, 26, "a hexadecimal literal needs digits after `0x`");
    ck_assert_error(cx, "def main(x: i32) = x + 0b102\n", 1, 28, "`2` is not a binary digit");
    ck_assert_error(cx, "def main(x: i32) = x + 0xffz\n", 1, 28, "`z` cannot follow a hexadecimal literal");
    ck_assert_error(cx, "def main(x: f32) = x + f32.tau\n", 1, 28, "`inf`, `nan` or `pi`");
    ck_assert_error(cx, "def main(xs: [N]f32) = map(cosine, xs)\n", 1, 28, "unknown function `cosine`; did you mean");
    ck_assert_error(cx, "def main(x: i32) = [[1, 2], [3]]\n", 1, 29,
                    "the rows of an array literal have one type: row 1 is [2]i32, but row 2 is [1]i32");
    ck_assert_error(cx, "def main(xs: [N]i32, ys: [M]i32) = [xs, ys]\n", 1, 41, "row 1 is [N]i32, but row 2 is [M]i32");
    ck_assert_error(cx, "def main(x: i32) = rotate(1.5, [1, 2])\n", 1, 27, "rotate's count is an integer, but this has type f32");
    ck_assert_error(cx, "def main(x: i32) = rotate(1, x)\n", 1, 30, "rotate rotates an array, but this has type i32");
    ck_assert_error(cx, "def main(x: i32) = rotate(1)\n", 1, 20, "rotate takes 2 arguments, but was given 1");
    ck_assert_error(cx, "def main(x: i64) = [1, 2, 3] with [1] = 2.0\n", 1, 41,
                    "the value `with` writes has type f32, but the array's elements are i32");
    ck_assert_error(cx, "def main(x: i64) = [1, 2, 3] with [1:3] = [8]\n", 1, 43, "`with [lo:hi]` writes [2]i32, but this has type [1]i32");
    ck_assert_error(cx, "def main(x: i64) = x with [0] = 1\n", 1, 20, "`with` updates an array, but this has type i64");
    ck_assert_error(cx, "def main(x: i64) = [1, 2, 3] with [2:4] = [8, 9]\n", 1, 30,
                    "the slice 2:4 that `with` writes in an array of 3 is out of range");
    ck_assert_error(cx, "def main(x: i64) = [1, 2, 3] with [1.0] = 2\n", 1, 36, "the index of `with` is an integer, but this has type f32");
    ck_assert_error(cx, "def main(x: i64) = [1, 2, 3] with [1 = 2\n", 1, 38, "`]` after the index of `with`");
    {
        /* an index outside the array is an error where it is read, as xs[i] is (a scatter alone would skip it) */
        const st_program *w = parse_ok(cx, "def main(x: i64): [3]i32 = [1, 2, 3] with [x] = 7\n");
        const st_value arg = st_value_scalar(ST_I64, (st_scalar){.i64 = 3});
        const st_binding env = {"x", 3};
        st_value r;
        st_err err = {0};
        ck_assert(!st_eval(cx, &w->defs[0], &arg, &env, 1, ar, &r, &err));
        ck_assert_msg(strstr(err.message, "index 3 out of range for an array of length 3"), "%s", err.message);
    }
    ck_assert_error(cx, "def main(xs: [N]i32) = map(sin, xs)\n", 1, 28, "sin needs a float (f32 or f64), but this has type i32");
    ck_assert_error(cx, "def main(xs: [N]f32) = reduce(sin, 0.0, xs)\n", 1, 31, "reduce passes 2 arguments to sin, which takes one");
    ck_assert_error(cx, "def main(x: f32) = exp(x, x)\n", 1, 20, "exp takes 1 argument, but was given 2");
    ck_assert_error(cx, "def main(xs: [N]i32) = map2((x, y) => x + y, xs)\n", 1, 24,
                    "map2 takes a function and 2 arrays, but was given 2 arguments");
    ck_assert_error(cx, "def main(xs: [N]i32, ys: [M]i32) = map2((x, y) => x + y, xs, ys)\n", 1, 62,
                    "map2 needs arrays of one length, but [N]i32 and [M]i32 differ in length");
    ck_assert_error(cx, "def main(xs: [N]i32, ys: [N]f32): [N]f32 = map2(+, xs, ys)\n", 1, 49,
                    "`+` combines two scalars of one type, but map's function here takes ((i32, f32)); write a lambda");
    /* a lambda after |>: bare or in parentheses, the same let */
    const st_program *bare = parse_ok(cx, "def main(xs: [N]i32) = xs |> ys => reduce(+, 0, ys) |> (s => s * 2)\n");
    const st_program *paren = parse_ok(cx, "def main(xs: [N]i32) =\n  let ys = xs in let s = reduce(+, 0, ys) in s * 2\n");
    ck_assert_msg(bare->defs[0].body == paren->defs[0].body, "%s", printed(bare));
    ck_assert_error(cx, "def main(xs: [N]i32) = xs |> ((a: [N]i32, b) => a)\n", 1, 35,
                    "a lambda after `|>` of several parameters takes them without types");
    ck_assert_error(cx, "def main(xs: [N]i32) = xs |> ((a, b) => a)\n", 1, 31, "the pattern has 2 names, but the value has type [N]i32");
    ck_assert_error(cx, "def main(xs: [N]i32) = xs |> ((ys: [N]f32) => 0)\n", 1, 32,
                    "the value bound here has type [N]i32, but [N]f32 was declared");
    ck_assert_error(cx, "def main(xs: [N]i32) = xs |> (ys => ys\n", 2, 1, "expected `)` after the lambda");
    ck_assert_error(cx, "def main(xs: [N]i32) = xs |> 3\n", 1, 30, "a function after `|>`, as in `|> map(f)`, `|> unzip` or `|> (ys => …)`");
    /* a def of the name is the program's own: it keeps its meaning */
    const st_program *p = parse_ok(cx, "def abs(x: i32): i32 = x + 1\ndef main(x: i32) = abs(x)\n");
    const st_value arg = st_value_scalar(ST_I32, (st_scalar){.i32 = -5});
    st_value r;
    st_err err = {0};
    const st_def *m = &p->defs[1];
    ck_assert_msg(st_eval(cx, m, &arg, NULL, 0, ar, &r, &err), "%s", err.message);
    ck_assert_int_eq(r.u.s.i32, -4);
}
END_TEST

/* A def named like a primitive, a type or min/max was accepted and every
 * call of the name took the built-in: refused at the def's name. sqrt,
 * exp, log, abs, map2, map3 yield to the def instead. */
START_TEST(a_def_named_like_a_builtin_is_refused_or_wins) {
    ck_assert_error(cx, "def min(x: i32, y: i32): i32 = x * 1000 + y\ndef main(a: i32, b: i32): i32 = min(a, b)\n", 1, 5,
                    "`min` is a built-in function");
    ck_assert_error(cx, "def main(a: i32): i32 = a\ndef max(x: i32, y: i32): i32 = x\n", 2, 5, "`max` is a built-in function");
    ck_assert_error(cx, "def i32(x: i32): i32 = x + 100\ndef main(a: i32): i32 = i32(a)\n", 1, 5,
                    "`i32` is a type, and i32(x) its conversion");
    ck_assert_error(cx, "def  bool(x: i32): bool = x > 0\ndef main(a: i32) = bool(a)\n", 1, 6, "`bool` is a type");
    ck_assert_error(cx, "def map(x: i32): i32 = x + 100\ndef main(a: i32): i32 = map(a)\n", 1, 5,
                    "`map` is a primitive of the language");
    const char *prims[] = {"reduce", "scan", "zip", "unzip", "iota", "get", "filter", "take", "concat", "exscan",
                           "toLocal", "mapSeq", "scatter_2d", "u8", "f64"};
    for (size_t i = 0; i < sizeof prims / sizeof *prims; i++) {
        char src[128];
        snprintf(src, sizeof src, "def %s(x: i32): i32 = x\ndef main(a: i32): i32 = a\n", prims[i]);
        st_err e = parse_fails(cx, src);
        ck_assert_msg(e.loc.line == 1 && e.loc.col == 5 && strstr(e.message, prims[i]), "%s: %d:%d %s", prims[i],
                      e.loc.line, e.loc.col, e.message);
    }
    /* the later functions: the def is the program's own, every call means it */
    const char *later[] = {"sqrt", "exp", "log", "abs", "map2", "map3", "sin", "floor", "isnan", "bits", "atan2"};
    for (size_t i = 0; i < sizeof later / sizeof *later; i++) {
        char src[160];
        snprintf(src, sizeof src, "def %s(x: i32): i32 = x + 100\ndef main(a: i32): i32 = %s(a) + (a |> %s)\n", later[i],
                 later[i], later[i]);
        const st_program *p = parse_ok(cx, src);
        const st_value arg = st_value_scalar(ST_I32, (st_scalar){.i32 = 3});
        st_value r;
        st_err err = {0};
        ck_assert_msg(st_eval(cx, &p->defs[1], &arg, NULL, 0, ar, &r, &err), "%s: %s", later[i], err.message);
        ck_assert_int_eq(r.u.s.i32, 206);
    }
}
END_TEST

/* A def's body binding the name of a variable its caller passes: the
 * caller's variable was put in for the parameter as it was, and the
 * callee's let (or lambda parameter, or loop variable) of that name took
 * it over: g(x) with `let x = 1.5 in p + x` gave x's 1.5 twice. Each of
 * these reads the caller's x where it says p; the printed program reads
 * back to the same. */
START_TEST(an_inlined_body_does_not_capture_the_callers_variables) {
    static const struct {
        const char *src;
        float want;
    } cases[] = {
        {"def g(p: f32): f32 = let x = 1.5f32 in p + x\ndef main(x: f32): f32 = g(x)\n", 6.5f},
        {"def g(p: f32): f32 = reduce(+, 0.0, [1.0, 2.0] |> map(x => x * p))\ndef main(x: f32): f32 = g(x)\n", 15.0f},
        {"def g(p: f32): f32 = loop x = p for i < 2 do x + p\ndef main(x: f32): f32 = g(x)\n", 15.0f},
        {"def h(q: f32): f32 = let x = 2.0f32 in q * x\ndef g(p: f32): f32 = h(p) + p\n"
         "def main(x: f32): f32 = g(x)\n", 15.0f},
        {"def g(p: (f32, f32)): f32 = let x = (1.0f32, 1.0f32) in p.0 + x.1\ndef main(x: (f32, f32)): f32 = g(x)\n", 6.0f},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const st_program *p = parse_ok(cx, cases[i].src);
        const st_def *m = &p->defs[p->ndefs - 1];
        st_value arg = st_value_scalar(ST_F32, (st_scalar){.f32 = 5.0f});
        if (m->params[0]->type->kind == ST_TYPE_TUPLE) {
            st_value *items = st_arena_alloc(ar, 2 * sizeof *items);
            items[0] = items[1] = arg;
            arg = st_value_tuple(2, items);
        }
        st_value r;
        st_err err = {0};
        ck_assert_msg(st_eval(cx, m, &arg, NULL, 0, ar, &r, &err), "case %zu: %s", i, err.message);
        ck_assert_msg(r.u.s.f32 == cases[i].want, "case %zu: %g, not %g", i, (double)r.u.s.f32, (double)cases[i].want);
        /* printed, the program reads back to the same meaning */
        st_buf out = {0};
        st_print_def(m, &out);
        const st_program *again = parse_ok(cx, out.data);
        ck_assert_msg(st_eval(cx, &again->defs[0], &arg, NULL, 0, ar, &r, &err), "case %zu printed: %s\n%s", i,
                      err.message, out.data);
        ck_assert_msg(r.u.s.f32 == cases[i].want, "case %zu printed: %g\n%s", i, (double)r.u.s.f32, out.data);
        st_buf_free(&out);
    }
}
END_TEST

static Suite *lang_suite(void) {
    Suite *s = suite_create("lang");
    TCase *dev = tcase_create("device");
    tcase_set_timeout(dev, 900);
    tcase_add_checked_fixture(dev, rules_setup, pipeline_teardown);
    tcase_add_loop_test(dev, each_program_equals_c_under_each_strategy, 0, NCASES * NSTRATEGIES);
    tcase_add_loop_test(dev, math_functions_agree_on_the_device, 0, NMATH * NMATH_STRATEGIES);
    suite_add_tcase(s, dev);
    TCase *syn = tcase_create("syntax");
    tcase_add_checked_fixture(syn, rules_setup, pipeline_teardown);
    tcase_add_test(syn, every_program_prints_and_reads_back_the_same);
    tcase_add_test(syn, literals_and_slices_print_as_written);
    tcase_add_test(syn, a_call_is_inlined_and_run_picks_main);
    tcase_add_test(syn, bad_programs_are_refused_at_their_place);
    tcase_add_test(syn, a_slice_beyond_the_inputs_is_refused_at_the_slice);
    tcase_add_test(syn, math_functions_have_their_values);
    tcase_add_test(syn, bits_is_the_unsigned_integer_of_its_size);
    tcase_add_test(syn, math_functions_are_refused_at_their_place);
    tcase_add_test(syn, a_def_named_like_a_builtin_is_refused_or_wins);
    tcase_add_test(syn, an_inlined_body_does_not_capture_the_callers_variables);
    suite_add_tcase(s, syn);
    return s;
}

int main(void) { return run_suite(lang_suite()); }
