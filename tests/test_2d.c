/* tests/test_2d.c — reduce_by_index_2d and scatter_2d (issue 21): the
 * interpreter, and on the device (PoCL on CI) + on i32 (i64 and i32 pairs),
 * max on f32 and a scatter, under no strategy, the default, flatten-2d and subhistogram over MEM, ATOMIC and C, each
 * against a 2-D histogram or scatter computed here in C, at k = 1, 7, 1000
 * and 1000003 pairs with out-of-bounds ones mixed in (negative, = n, = m);
 * the printer's round trip; the type checker's located refusals; the
 * command line and examples/histogram_2d.strata. */
#include "pipeline_fixture.h"
#include "run_strata.h"

#include <math.h>

/* ------------------------------------------------------------------------ */
/* Programs, inputs and the reference                                       */
/* ------------------------------------------------------------------------ */

#define HIST_2D                                                                                    \
    "def main(rs: [N]i64, cs: [N]i64, vs: [N]i32, R: i64, C: i64): [R][C]i32 =\n"                 \
    "  reduce_by_index_2d(replicate(R, replicate(C, 0)), +, 0, zip(rs, cs), vs)\n"
/* (i32, i32) pairs, as 1-D reduce_by_index takes i32 indices */
#define HIST_2D_I32                                                                                \
    "def main(rs: [N]i32, cs: [N]i32, vs: [N]i32, R: i64, C: i64): [R][C]i32 =\n"                 \
    "  reduce_by_index_2d(replicate(R, replicate(C, 0)), +, 0, zip(rs, cs), vs)\n"
/* max on f32: no hardware atomic, a compare-and-swap */
#define MAX_2D                                                                                     \
    "def main(rs: [N]i64, cs: [N]i64, vs: [N]f32, R: i64, C: i64): [R][C]f32 =\n"                 \
    "  reduce_by_index_2d(replicate(R, replicate(C, -f32.inf)), max, -f32.inf, zip(rs, cs), vs)\n"
#define SCATTER_2D                                                                                 \
    "def main(rs: [N]i64, cs: [N]i64, vs: [N]i32, R: i64, C: i64): [R][C]i32 =\n"                 \
    "  scatter_2d(replicate(R, replicate(C, -1)), zip(rs, cs), vs)\n"

typedef struct program {
    const char *what, *src;
    bool scatter, narrow, fmax; /* scatter_2d; (i32, i32) pairs; max on f32 */
    int64_t n, m;         /* the grid */
} program;

/* A histogram of few buckets (collisions), a scatter on a grid with a cell
 * for each of 1000003 pairs (its pairs in bounds distinct), and one on the
 * histogram's grid, whose pairs repeat: the last write of a cell in index
 * order stays, on the device as in the interpreter (issue 46). */
static const program hist = {"reduce_by_index_2d", HIST_2D, false, false, false, 13, 37};
static const program hist_i32 = {"reduce_by_index_2d of (i32, i32)", HIST_2D_I32, false, true, false, 13, 37};
static const program hist_max = {"reduce_by_index_2d by max on f32", MAX_2D, false, false, true, 13, 37};
static const program scatter = {"scatter_2d", SCATTER_2D, true, false, false, 1009, 1013};
static const program scatter_repeated = {"scatter_2d of repeated pairs", SCATTER_2D, true, false, false, 13, 37};

static const int64_t sizes[] = {1, 7, 1000, 1000003};
#define NSIZES (sizeof sizes / sizeof *sizes)

static uint64_t mix(uint64_t x) {
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

typedef struct pairs {
    int64_t k;
    int64_t *rs, *cs;
    int32_t *vs;
    int32_t *want; /* the n x m result, row-major */
    float *fs, *fwant; /* max on f32: its values and result */
} pairs;

/* k pairs for p's grid: in bounds, uniform for a histogram and distinct
 * cells (i * 7919 mod n*m) for a scatter; every fourth out of bounds in one
 * coordinate or both, negative, = n, = m or beyond. */
static pairs pairs_of(const program *p, int64_t k) {
    pairs s = {.k = k};
    size_t cells = (size_t)(p->n * p->m);
    s.rs = st_arena_alloc(ar, (size_t)k * sizeof *s.rs);
    s.cs = st_arena_alloc(ar, (size_t)k * sizeof *s.cs);
    s.vs = st_arena_alloc(ar, (size_t)k * sizeof *s.vs);
    s.want = st_arena_alloc(ar, cells * sizeof *s.want);
    s.fs = st_arena_alloc(ar, (size_t)k * sizeof *s.fs);
    s.fwant = st_arena_alloc(ar, cells * sizeof *s.fwant);
    ck_assert(s.rs && s.cs && s.vs && s.want && s.fs && s.fwant);
    for (int64_t i = 0; i < k; i++) {
        uint64_t h = mix((uint64_t)i + 17);
        int64_t cell = p->scatter ? (i * 7919) % (int64_t)cells : (int64_t)(h % cells);
        int64_t r = cell / p->m, c = cell % p->m;
        if (i % 4 == 3) switch ((i / 4) % 6) {
            case 0: r = -1; break;
            case 1: r = p->n; break;
            case 2: c = p->m; break;
            case 3: c = -1 - (int64_t)(h % 50); break;
            case 4: r = p->n + (int64_t)(h % 50), c = p->m; break;
            default: r = -(int64_t)(h % 1000) - 1, c = -1; break;
            }
        s.rs[i] = r;
        s.cs[i] = c;
        s.vs[i] = (int32_t)(h >> 40) % 201 - 100;
        s.fs[i] = (float)s.vs[i] * 0.25f;
    }
    /* the reference, in C */
    for (size_t j = 0; j < cells; j++) s.want[j] = p->scatter ? -1 : 0, s.fwant[j] = -INFINITY;
    for (int64_t i = 0; i < k; i++) {
        if (s.rs[i] < 0 || s.rs[i] >= p->n || s.cs[i] < 0 || s.cs[i] >= p->m) continue;
        int32_t *at = &s.want[s.rs[i] * p->m + s.cs[i]];
        float *fat = &s.fwant[s.rs[i] * p->m + s.cs[i]];
        *fat = *fat > s.fs[i] ? *fat : s.fs[i];
        *at = p->scatter ? s.vs[i] : (int32_t)((uint32_t)*at + (uint32_t)s.vs[i]);
    }
    return s;
}

static const char *npy_of(const char *dir, const char *name, st_scalar_kind kind, int64_t n, void *data) {
    const char *path = text_of("%s/%s.npy", dir, name);
    st_value v = array_of(kind, n, data, ar);
    st_err err = {0};
    ck_assert_msg(st_npy_write(path, &v, &err), "%s", err.message);
    return path;
}

/* The arguments of d for the pairs s, through .npy files in dir. */
static void inputs_of(const program *p, const st_def *d, const pairs *s, const char *dir, st_arena *a,
                      const st_value **args, const st_binding **env, size_t *nenv) {
    st_inputs *in = st_inputs_new(cx, d, a);
    ck_assert(in != NULL);
    st_err err = {0};
    void *rs = s->rs, *cs = s->cs;
    if (p->narrow) {
        int32_t *r32 = st_arena_alloc(ar, (size_t)s->k * sizeof *r32), *c32 = st_arena_alloc(ar, (size_t)s->k * sizeof *c32);
        for (int64_t i = 0; i < s->k; i++) r32[i] = (int32_t)s->rs[i], c32[i] = (int32_t)s->cs[i];
        rs = r32, cs = c32;
    }
    st_scalar_kind ik = p->narrow ? ST_I32 : ST_I64;
    const char *sets[] = {text_of("rs=%s", npy_of(dir, "rs", ik, s->k, rs)), text_of("cs=%s", npy_of(dir, "cs", ik, s->k, cs)),
                          p->fmax ? text_of("vs=%s", npy_of(dir, "vs", ST_F32, s->k, s->fs))
                                  : text_of("vs=%s", npy_of(dir, "vs", ST_I32, s->k, s->vs)),
                          text_of("R=%lld", (long long)p->n), text_of("C=%lld", (long long)p->m)};
    for (size_t i = 0; i < sizeof sets / sizeof *sets; i++)
        ck_assert_msg(st_inputs_set(in, sets[i], &err), "%s: %s", sets[i], err.message);
    ck_assert_msg(st_inputs_finish(in, args, env, nenv, &err), "%s", err.message);
}

/* got is p's n x m grid and equals the reference, cell for cell. */
static void equals_reference(const program *p, const pairs *s, const st_value *got, const char *label) {
    st_scalar_kind want_kind = p->fmax ? ST_F32 : ST_I32;
    ck_assert_msg(got->kind == ST_VALUE_ARRAY && got->n == 2 && got->scalar == want_kind, "%s: not the [n][m] grid", label);
    ck_assert_msg(got->u.a.dims[0] == p->n && got->u.a.dims[1] == p->m, "%s: a [%lld][%lld] grid, not [%lld][%lld]",
                  label, (long long)got->u.a.dims[0], (long long)got->u.a.dims[1], (long long)p->n, (long long)p->m);
    if (p->fmax) { /* max is exact */
        const float *g = got->u.a.data;
        for (int64_t j = 0; j < p->n * p->m; j++)
            ck_assert_msg(g[j] == s->fwant[j], "%s, k=%lld: cell (%lld, %lld) is %g, not %g", label, (long long)s->k,
                          (long long)(j / p->m), (long long)(j % p->m), (double)g[j], (double)s->fwant[j]);
        return;
    }
    const int32_t *g = got->u.a.data;
    for (int64_t j = 0; j < p->n * p->m; j++)
        ck_assert_msg(g[j] == s->want[j], "%s, k=%lld: cell (%lld, %lld) is %d, not %d", label, (long long)s->k,
                      (long long)(j / p->m), (long long)(j % p->m), g[j], s->want[j]);
}

/* ------------------------------------------------------------------------ */
/* The interpreter                                                          */
/* ------------------------------------------------------------------------ */

static void interpreter_agrees(const program *p) {
    const st_def *d = def_of(p->src);
    char dir[256];
    scratch_make(dir, sizeof dir, "twod");
    for (size_t i = 0; i < NSIZES; i++) {
        pairs s = pairs_of(p, sizes[i]);
        st_arena *a = st_arena_new();
        const st_value *args;
        const st_binding *env;
        size_t nenv;
        inputs_of(p, d, &s, dir, a, &args, &env, &nenv);
        st_value got;
        st_err err = {0};
        ck_assert_msg(st_eval(cx, d, args, env, nenv, a, &got, &err), "%s: %s", p->what, err.message);
        equals_reference(p, &s, &got, text_of("%s in the interpreter", p->what));
        st_arena_free(a);
    }
    scratch_remove(dir);
}

START_TEST(the_interpreter_equals_c) {
    interpreter_agrees(&hist);
    interpreter_agrees(&hist_i32);
    interpreter_agrees(&hist_max);
    interpreter_agrees(&scatter);
    interpreter_agrees(&scatter_repeated);
}
END_TEST

/* A repeated pair: the interpreter's scatter keeps the last write (as 1-D
 * scatter's), its histogram combines them all. */
START_TEST(the_interpreter_on_repeated_pairs) {
    int64_t rs[] = {1, 1, 0, 2}, cs[] = {2, 2, 0, 0};
    int32_t vs[] = {5, 9, 4, 6};
    st_value args[] = {array_of(ST_I64, 4, rs, ar), array_of(ST_I64, 4, cs, ar), array_of(ST_I32, 4, vs, ar)};
    const char *src = "def main(rs: [N]i64, cs: [N]i64, vs: [N]i32): ([2][3]i32, [2][3]i32) =\n"
                      "  (scatter_2d(replicate(2, replicate(3, 0)), zip(rs, cs), vs),\n"
                      "   reduce_by_index_2d(replicate(2, replicate(3, 0)), +, 0, zip(rs, cs), vs))\n";
    st_value got = eval_ok(cx, ar, src, args, 3);
    const int32_t *sc = got.u.items[0].u.a.data, *hi = got.u.items[1].u.a.data;
    const int32_t want_sc[] = {4, 0, 0, 0, 0, 9}, want_hi[] = {4, 0, 0, 0, 0, 14};
    for (int j = 0; j < 6; j++) {
        ck_assert_int_eq(sc[j], want_sc[j]);
        ck_assert_int_eq(hi[j], want_hi[j]);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* On the device, under every strategy that applies                         */
/* ------------------------------------------------------------------------ */

typedef struct device_case {
    const program *p;
    const char *strategy; /* NULL: none; "default": the device's default */
} device_case;

#define SUB(params) "each(reduce_by_index_2d, subhistogram(" params "))"
static const device_case device_cases[] = {
    {&hist, NULL},
    {&hist, "default"},
    {&hist, "each(reduce_by_index_2d, flatten-2d)"},
    {&hist, "each(reduce_by_index_2d, subhistogram)"},
    {&hist, SUB("MEM=global, ATOMIC=add")},
    {&hist, SUB("MEM=local, ATOMIC=add")},
    {&hist, SUB("MEM=global, ATOMIC=cas")},
    {&hist, SUB("MEM=local, ATOMIC=cas")},
    {&hist, SUB("C=1, MEM=global, ATOMIC=add")},
    {&hist, SUB("C=1, MEM=local, ATOMIC=cas")},
    {&hist, SUB("C=16, MEM=global, ATOMIC=cas")},
    {&hist, SUB("C=16, MEM=local, ATOMIC=add")},
    {&hist, SUB("C=256, MEM=global, ATOMIC=add")},
    {&hist, SUB("C=256, MEM=local, ATOMIC=cas")},
    {&hist_i32, NULL},
    {&hist_i32, "default"},
    {&hist_max, NULL},
    {&hist_max, "default"},
    {&hist_max, SUB("MEM=global, ATOMIC=cas")},
    {&hist_max, SUB("C=16, MEM=local, ATOMIC=cas")},
    {&scatter, NULL},
    {&scatter, "default"},
    {&scatter, "each(scatter_2d, flatten-2d)"},
    {&scatter_repeated, NULL},
    {&scatter_repeated, "default"},
    {&scatter_repeated, "GPU"},
    {&scatter_repeated, "each(scatter_2d, flatten-2d)"},
};

START_TEST(the_device_equals_c) {
    const device_case *c = &device_cases[_i];
    const program *p = c->p;
    /* "default": the device's; "GPU": a GPU's, run here */
    const char *strategy = c->strategy && !strcmp(c->strategy, "default") ? st_default_strategy(st_cl_device(device())->type)
                           : c->strategy && !strcmp(c->strategy, "GPU") ? st_default_strategy("GPU")
                                                                        : c->strategy;
    const char *label = text_of("%s under %s", p->what, c->strategy ? c->strategy : "no strategy");
    const st_def *d = def_of(p->src);
    const st_def *now = apply(d, strategy, label);
    if (c->strategy && strstr(c->strategy, "subhistogram"))
        ck_assert_msg(strstr(printed_def(now), "subhistograms("), "%s: no subhistograms in\n%s", label, printed_def(now));
    st_code code = generated(lowered(now, label), label);
    st_exe *exe = built(&code, label);
    char dir[256];
    scratch_make(dir, sizeof dir, "twod");
    for (size_t i = 0; i < NSIZES; i++) {
        pairs s = pairs_of(p, sizes[i]);
        st_arena *a = st_arena_new();
        const st_value *args;
        const st_binding *env;
        size_t nenv;
        inputs_of(p, d, &s, dir, a, &args, &env, &nenv);
        st_err err = {0};
        st_value got;
        st_launch *l = st_launch_new(exe, args, env, nenv, &err);
        ck_assert_msg(l != NULL, "%s: %s", label, err.message);
        ck_assert_msg(st_launch_run(l, NULL, &err), "%s, k=%lld: %s", label, (long long)sizes[i], err.message);
        ck_assert_msg(st_launch_read(l, a, &got, &err), "%s: %s", label, err.message);
        equals_reference(p, &s, &got, label);
        st_launch_free(l);
        st_arena_free(a);
    }
    scratch_remove(dir);
    st_exe_free(exe);
}
END_TEST

/* The default strategy puts the 2-D histogram in subhistograms, as a 1-D one. */
START_TEST(the_default_takes_subhistogram) {
    for (int gpu = 0; gpu < 2; gpu++) {
        const st_def *now = apply(def_of(HIST_2D), st_default_strategy(gpu ? "GPU" : "CPU"), "default");
        ck_assert_has(printed_def(now), "subhistograms(0, 0, 1, replicate(R, replicate(C, 0)) |> join, +, 0, ");
        ck_assert_has(printed_def(now), "|> split(C)");
    }
    /* and leaves a scatter_2d to lowering */
    ck_assert_has(printed_def(apply(def_of(SCATTER_2D), st_default_strategy("CPU"), "default")), "scatter_2d(");
}
END_TEST

/* subhistogram keeps its condition for the 2-D form: at the top level only. */
START_TEST(subhistogram_inside_a_map_fails_cleanly) {
    const st_def *d = def_of("def main(rs: [M][N]i64, cs: [M][N]i64): [M][3][4]i32 =\n"
                             "  zip(rs, cs) |> map((r, c) => reduce_by_index_2d(replicate(3, replicate(4, 0)), +, 0, zip(r, c), replicate(N, 1)))\n");
    const st_strategy *s = st_strategy_parse(cx, reg, "strategy", "each(reduce_by_index_2d, subhistogram)", &(st_err){0});
    ck_assert(s != NULL);
    st_rw *rw = st_rw_new(cx, reg);
    st_err err = {0};
    ck_assert(st_rewrite_def(rw, s, d, &err) == NULL);
    st_rw_free(rw);
    ck_assert_has(err.message, "top level");
    /* while lowering alone runs it, a histogram a row, sequentially in each work-item */
    st_code code = generated(lowered(d, "inside a map"), "inside a map");
    st_exe *exe = built(&code, "inside a map");
    agrees(exe, d, "M=5 N=300", 7, "a 2-D histogram a row");
    st_exe_free(exe);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Print and parse                                                          */
/* ------------------------------------------------------------------------ */

static void round_trips(const char *src) {
    const st_program *p = parse_ok(cx, src);
    st_buf b = {0};
    st_print_program(p, &b);
    const char *text = text_of("%s", b.data);
    st_buf_free(&b);
    const st_program *q = parse_ok(cx, text);
    ck_assert_msg(q->defs[0].body == p->defs[0].body, "reads back as other nodes:\n%s", text);
    ck_assert_ptr_eq(q->defs[0].result, p->defs[0].result);
}

START_TEST(print_and_parse_round_trip) {
    round_trips(HIST_2D);
    round_trips(HIST_2D_I32);
    round_trips(SCATTER_2D);
    ck_assert_has(printed_def(def_of(HIST_2D)), "reduce_by_index_2d(replicate(R, replicate(C, 0)), +, 0, zip(rs, cs), vs)");
    ck_assert_has(printed_def(def_of(SCATTER_2D)), "scatter_2d(replicate(R, replicate(C, -1)), zip(rs, cs), vs)");
    /* the rewritten programs read back too */
    const char *strategies[] = {"each(reduce_by_index_2d, flatten-2d)", SUB("C=16, MEM=local, ATOMIC=cas")};
    for (size_t i = 0; i < 2; i++) round_trips(printed_def(apply(def_of(HIST_2D), strategies[i], strategies[i])));
    round_trips(printed_def(apply(def_of(SCATTER_2D), "each(scatter_2d, flatten-2d)", "flatten")));
    round_trips(printed_def(lowered(def_of(HIST_2D), "lowered")));
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Located errors                                                           */
/* ------------------------------------------------------------------------ */

START_TEST(bad_input_is_refused_where_it_is) {
    /* the destination is not 2-D */
    ck_assert_error(cx, "def main(rs: [N]i64, cs: [N]i64, vs: [N]i32): [4]i32 =\n"
                        "  reduce_by_index_2d(replicate(4, 0), +, 0, zip(rs, cs), vs)\n",
                    2, 22, "reduce_by_index_2d needs a destination of two dimensions, [n][m]t, but this has type [4]i32");
    ck_assert_error(cx, "def main(rs: [N]i64, cs: [N]i64, vs: [N]i32): [4]i32 =\n"
                        "  scatter_2d(replicate(4, 0), zip(rs, cs), vs)\n",
                    2, 14, "scatter_2d needs a destination of two dimensions, [n][m]t, but this has type [4]i32");
    /* the indices are not pairs of integers */
    ck_assert_error(cx, "def main(rs: [N]i64, vs: [N]i32): [3][4]i32 =\n"
                        "  reduce_by_index_2d(replicate(3, replicate(4, 0)), +, 0, rs, vs)\n",
                    2, 59, "reduce_by_index_2d needs an array of (row, column) pairs of integers, like zip(rs, cs), but this has type [N]i64");
    ck_assert_error(cx, "def main(xs: [N]f32, vs: [N]i32): [3][4]i32 =\n"
                        "  scatter_2d(replicate(3, replicate(4, 0)), zip(xs, xs), vs)\n",
                    2, 45, "scatter_2d needs an array of (row, column) pairs of integers, like zip(rs, cs), but this has type [N](f32, f32)");
    ck_assert_error(cx, "def main(rs: [N]i64, vs: [N]i32): [3][4]i32 =\n"
                        "  scatter_2d(replicate(3, replicate(4, 0)), zip(rs, rs, rs), vs)\n",
                    2, 45, "but this has type [N](i64, i64, i64)");
    /* the values are not the destination's elements */
    ck_assert_error(cx, "def main(rs: [N]i64, cs: [N]i64, vs: [N]f32): [3][4]i32 =\n"
                        "  reduce_by_index_2d(replicate(3, replicate(4, 0)), +, 0, zip(rs, cs), vs)\n",
                    2, 72, "reduce_by_index_2d's values have type f32, but the destination holds i32");
    ck_assert_error(cx, "def main(rs: [N]i64, cs: [N]i64, vs: [N]f32): [3][4]i32 =\n"
                        "  scatter_2d(replicate(3, replicate(4, 0)), zip(rs, cs), vs)\n",
                    2, 58, "scatter_2d's values have type f32, but the destination holds i32");
    /* as many values as pairs */
    ck_assert_error(cx, "def main(rs: [N]i64, cs: [N]i64, vs: [M]i32): [3][4]i32 =\n"
                        "  reduce_by_index_2d(replicate(3, replicate(4, 0)), +, 0, zip(rs, cs), vs)\n",
                    2, 72, "reduce_by_index_2d needs as many values as indices, but there are N indices and M values");
    ck_assert_error(cx, "def main(rs: [N]i64, cs: [N]i64, vs: [M]i32): [3][4]i32 =\n"
                        "  scatter_2d(replicate(3, replicate(4, 0)), zip(rs, cs), vs)\n",
                    2, 58, "scatter_2d needs as many values as indices, but there are N indices and M values");
    /* the operator on the innermost element */
    ck_assert_error(cx, "def main(rs: [N]i64, cs: [N]i64, vs: [N]i32): [3][4]i32 =\n"
                        "  reduce_by_index_2d(replicate(3, replicate(4, 0)), (a, b) => a < b, 0, zip(rs, cs), vs)\n",
                    2, 53, "i32");
    /* i32 pairs, and mixed widths, are indices too */
    parse_ok(cx, HIST_2D_I32);
    parse_ok(cx, "def main(rs: [N]i32, cs: [N]u64, vs: [N]f32): [3][4]f32 =\n"
                 "  scatter_2d(replicate(3, replicate(4, 0.0)), zip(rs, cs), vs)\n");
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The command line                                                         */
/* ------------------------------------------------------------------------ */

START_TEST(the_example_runs) {
    cli c;
    cli_open(&c, "twod");
    char *out, *err;
    const char *ex = cli_example(&c, "histogram_2d");
    const char *runs[] = {"id", NULL, "each(reduce_by_index_2d, subhistogram(C=4, MEM=local, ATOMIC=cas))"};
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        int rc = runs[i] ? cli_strata(&c, ARGS("run", ex, "-s", runs[i], "--size", "N=100003", "--input", "H=16", "--check"), &out, &err)
                         : cli_strata(&c, ARGS("run", ex, "--size", "N=100003", "--input", "H=16", "--check"), &out, &err);
        ck_assert_msg(rc == 0, "%s: %s", runs[i] ? runs[i] : "default", err);
        ck_assert_has(err, "check: the results equal the interpreter's");
        ck_assert_has(out, "[16][16]i32");
    }
    ck_assert_int_eq(cli_strata(&c, ARGS("rewrite", ex, "-s", "each(reduce_by_index_2d, subhistogram(MEM=global))"), &out, &err), 0);
    ck_assert_has(out, "subhistograms(0, 1, 1, replicate(H, replicate(H, 0)) |> join, +, 0, ");
    ck_assert_int_eq(cli_strata(&c, ARGS("strategies"), &out, &err), 0);
    ck_assert_has(out, "flatten-2d");
    ck_assert_has(out, "reduce_by_index_2d");
    const char *bad = cli_file(&c, "bad", "def main(rs: [N]i64, vs: [N]i32): [3][4]i32 =\n"
                                          "  reduce_by_index_2d(replicate(3, replicate(4, 0)), +, 0, rs, vs)\n");
    ck_assert_int_eq(cli_strata(&c, ARGS("check", bad), &out, &err), 1);
    ck_assert_has(err, "bad.strata:2:59: error: reduce_by_index_2d needs an array of (row, column) pairs");
    cli_close(&c);
}
END_TEST

static Suite *twod_suite(void) {
    Suite *s = suite_create("2d");
    TCase *ir = tcase_create("ir");
    tcase_set_timeout(ir, 600);
    tcase_add_checked_fixture(ir, rules_setup, pipeline_teardown);
    tcase_add_test(ir, the_interpreter_equals_c);
    tcase_add_test(ir, the_interpreter_on_repeated_pairs);
    tcase_add_test(ir, print_and_parse_round_trip);
    tcase_add_test(ir, bad_input_is_refused_where_it_is);
    tcase_add_test(ir, the_default_takes_subhistogram);
    suite_add_tcase(s, ir);
    TCase *dev = tcase_create("device");
    tcase_set_timeout(dev, 600);
    tcase_add_checked_fixture(dev, rules_setup, pipeline_teardown);
    tcase_add_loop_test(dev, the_device_equals_c, 0, (int)(sizeof device_cases / sizeof *device_cases));
    tcase_add_test(dev, subhistogram_inside_a_map_fails_cleanly);
    suite_add_tcase(s, dev);
    TCase *cl = tcase_create("cli");
    tcase_set_timeout(cl, 600);
    tcase_add_test(cl, the_example_runs);
    suite_add_tcase(s, cl);
    return s;
}

int main(void) { return run_suite(twod_suite()); }
