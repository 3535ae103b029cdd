/* tests/test_exscan.c — the exclusive scan exscan(op, ne, xs), Futhark's:
 * element 0 is ne, element i ne op x0 op … op x_{i-1}.
 *
 * The interpreter against exclusive scans computed here in C; then the
 * whole pipeline on the default device (PoCL on CI) against the same C
 * references, at N = 1, 7, 1000 and 1000003, for + on i32, + on f32 (whole
 * numbers, so every association gives the same sum), the affine maps of
 * examples/linear_recurrence.strata (not commutative; i32, which wraps) and
 * a pair (+, max): under no strategy (the lowering alone), the default
 * strategies of a CPU and a GPU, and every scan rule (scan-then-propagate,
 * brent-kung-step and brent-kung after the padding they need, sequential-
 * scan, pad-scan, parallel-scan, lookback in both of its loads), the fusions
 * (a map into the exscan, the exscan into a map, into a map beside its own
 * input, into a scatter: the compaction of examples/exscan_scatter.strata)
 * and segmented-scan on rows. Around it: a rewritten exscan prints and
 * parses back to the same text, the example runs, and bad exscans are
 * refused at their line and column. */
#include "pipeline_fixture.h"
#include "rewrite/rewrite.h"

/* ------------------------------------------------------------------------ */
/* Programs and their references in C                                       */
/* ------------------------------------------------------------------------ */

typedef enum prog { I32_ADD, F32_ADD, AFFINE, PAIR, NPROGS } prog;

static const char *const PROGRAMS[NPROGS] = {
    [I32_ADD] = "def main(xs: [N]i32): [N]i32 =\n  xs |> exscan(+, 0)\n",
    [F32_ADD] = "def main(xs: [N]f32): [N]f32 =\n  xs |> exscan(+, 0.0)\n",
    [AFFINE] = "def main(as: [N]i32, bs: [N]i32) =\n"
               "  zip(as, bs) |> exscan((f, g) => (f.0 * g.0, g.0 * f.1 + g.1), (1, 0)) |> unzip\n",
    [PAIR] = "def main(xs: [N]i32, ys: [N]i32) =\n"
             "  zip(xs, ys) |> exscan((p, q) => (p.0 + q.0, max(p.1, q.1)), (0, -2147483648)) |> unzip\n",
};
static const char *const PROG_NAMES[NPROGS] = {"+ on i32", "+ on f32", "affine maps on i32", "(+, max) on pairs"};

static uint64_t next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* n seeded values in [lo, lo + span) */
static int32_t *ints(int64_t n, int32_t lo, uint32_t span, uint64_t seed) {
    int32_t *v = st_arena_alloc(ar, (size_t)(n ? n : 1) * sizeof *v);
    ck_assert(v != NULL);
    uint64_t s = seed * 2654435761u + 7;
    for (int64_t i = 0; i < n; i++) v[i] = lo + (int32_t)(next(&s) % span);
    return v;
}

/* A program's inputs and the outputs C computes for them. */
typedef struct io {
    int nargs, nouts;
    st_value args[2];
    st_scalar_kind out_kind[2];
    void *want[2];
} io;

static io io_of(prog p, int64_t n, uint64_t seed) {
    io r = {0};
    size_t cells = (size_t)(n ? n : 1);
    if (p == I32_ADD) {
        int32_t *xs = ints(n, -1000, 2000, seed), *out = st_arena_alloc(ar, cells * sizeof *out);
        uint32_t acc = 0; /* wraps as the device's i32 does */
        for (int64_t i = 0; i < n; i++) out[i] = (int32_t)acc, acc += (uint32_t)xs[i];
        r.nargs = 1, r.args[0] = array_of(ST_I32, n, xs, ar);
        r.nouts = 1, r.out_kind[0] = ST_I32, r.want[0] = out;
    } else if (p == F32_ADD) {
        int32_t *is = ints(n, -8, 17, seed);
        float *xs = st_arena_alloc(ar, cells * sizeof *xs), *out = st_arena_alloc(ar, cells * sizeof *out);
        double acc = 0; /* |sums| < 2^24: exact in f32 whatever the order */
        for (int64_t i = 0; i < n; i++) xs[i] = (float)is[i], out[i] = (float)acc, acc += is[i];
        r.nargs = 1, r.args[0] = array_of(ST_F32, n, xs, ar);
        r.nouts = 1, r.out_kind[0] = ST_F32, r.want[0] = out;
    } else if (p == AFFINE) {
        int32_t *as = ints(n, -3, 7, seed), *bs = ints(n, -100, 200, seed + 1);
        int32_t *o0 = st_arena_alloc(ar, cells * sizeof *o0), *o1 = st_arena_alloc(ar, cells * sizeof *o1);
        uint32_t f0 = 1, f1 = 0; /* the map so far: x -> f0·x + f1 */
        for (int64_t i = 0; i < n; i++) {
            o0[i] = (int32_t)f0, o1[i] = (int32_t)f1;
            uint32_t g0 = (uint32_t)as[i], g1 = (uint32_t)bs[i];
            f1 = g0 * f1 + g1; /* f then g */
            f0 = f0 * g0;
        }
        r.nargs = 2, r.args[0] = array_of(ST_I32, n, as, ar), r.args[1] = array_of(ST_I32, n, bs, ar);
        r.nouts = 2, r.out_kind[0] = r.out_kind[1] = ST_I32, r.want[0] = o0, r.want[1] = o1;
    } else {
        int32_t *xs = ints(n, -1000, 2000, seed), *ys = ints(n, -1000000, 2000000, seed + 1);
        int32_t *o0 = st_arena_alloc(ar, cells * sizeof *o0), *o1 = st_arena_alloc(ar, cells * sizeof *o1);
        uint32_t sum = 0;
        int32_t most = INT32_MIN;
        for (int64_t i = 0; i < n; i++) {
            o0[i] = (int32_t)sum, o1[i] = most;
            sum += (uint32_t)xs[i];
            most = ys[i] > most ? ys[i] : most;
        }
        r.nargs = 2, r.args[0] = array_of(ST_I32, n, xs, ar), r.args[1] = array_of(ST_I32, n, ys, ar);
        r.nouts = 2, r.out_kind[0] = r.out_kind[1] = ST_I32, r.want[0] = o0, r.want[1] = o1;
    }
    return r;
}

/* Output k of got (a tuple's component, or got itself) equals want[0..n). */
static void same_output(const st_value *got, int k, int nouts, st_scalar_kind kind, const void *want, int64_t n,
                        const char *label) {
    const st_value *v = nouts > 1 ? &got->u.items[k] : got;
    ck_assert_msg(v->kind == ST_VALUE_ARRAY && v->scalar == kind, "%s: output %d is not a %s array", label, k,
                  st_scalar_name(kind));
    ck_assert_msg(v->u.a.dims[0] == n, "%s: output %d has %lld elements, not %lld", label, k,
                  (long long)v->u.a.dims[0], (long long)n);
    size_t size = st_scalar_size(kind);
    for (int64_t i = 0; i < n; i++) {
        const char *g = (const char *)v->u.a.data + (size_t)i * size, *w = (const char *)want + (size_t)i * size;
        if (memcmp(g, w, size) == 0) continue;
        if (kind == ST_F32)
            ck_abort_msg("%s: output %d, element %lld of %lld: %g, C says %g", label, k, (long long)i, (long long)n,
                         (double)*(const float *)g, (double)*(const float *)w);
        ck_abort_msg("%s: output %d, element %lld of %lld: %d, C says %d", label, k, (long long)i, (long long)n,
                     *(const int32_t *)g, *(const int32_t *)w);
    }
}

static void same_outputs(const st_value *got, const io *r, int64_t n, const char *label) {
    for (int k = 0; k < r->nouts; k++) same_output(got, k, r->nouts, r->out_kind[k], r->want[k], n, label);
}

static st_binding size_n(int64_t n) { return (st_binding){st_intern_cstr(cx, "N"), n}; }

/* ------------------------------------------------------------------------ */
/* The interpreter                                                          */
/* ------------------------------------------------------------------------ */

START_TEST(interpreter_agrees_with_c) {
    const int64_t lengths[] = {0, 1, 2, 7, 1000, 4099};
    for (prog p = I32_ADD; p < NPROGS; p++) {
        const st_def *d = def_of(PROGRAMS[p]);
        for (size_t l = 0; l < sizeof lengths / sizeof *lengths; l++) {
            int64_t n = lengths[l];
            io r = io_of(p, n, 11 + (uint64_t)n);
            st_binding env = size_n(n);
            st_value got;
            st_err err = {0};
            const char *label = text_of("the interpreter, %s, N = %lld", PROG_NAMES[p], (long long)n);
            ck_assert_msg(st_eval(cx, d, r.args, &env, 1, ar, &got, &err), "%s: %s", label, err.message);
            same_outputs(&got, &r, n, label);
        }
    }
}
END_TEST

/* By hand: the exclusive prefix sums of 3 1 4 1 5, and of nothing. */
START_TEST(interpreter_by_hand) {
    const st_def *d = def_of(PROGRAMS[I32_ADD]);
    st_value got;
    st_err err = {0};
    st_binding env = size_n(5);
    ck_assert(st_eval(cx, d, (st_value[]){array_of(ST_I32, 5, (int32_t[]){3, 1, 4, 1, 5}, ar)}, &env, 1, ar, &got,
                      &err));
    same_output(&got, 0, 1, ST_I32, (int32_t[]){0, 3, 4, 8, 9}, 5, "3 1 4 1 5");
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The device                                                               */
/* ------------------------------------------------------------------------ */

static const int64_t SIZES[] = {1, 7, 1000, 1000003};
enum { NSIZES = sizeof SIZES / sizeof *SIZES };

/* d rewritten by strategy (NULL: none), lowered, built; run at every size
 * against C. */
static void runs_everywhere(const st_def *d, prog p, const char *strategy, const char *what) {
    const char *label = text_of("%s, %s", what, strategy ? strategy : "no strategy");
    const st_def *now = lowered(apply(d, strategy, label), label);
    st_code code = generated(now, label);
    st_exe *exe = built(&code, label);
    for (int s = 0; s < NSIZES; s++) {
        int64_t n = SIZES[s];
        st_arena_mark mark = st_arena_get_mark(ar);
        io r = io_of(p, n, 5 + (uint64_t)s);
        st_binding env = size_n(n);
        st_err err = {0};
        const char *at = text_of("%s, N = %lld", label, (long long)n);
        st_launch *l = st_launch_new(exe, r.args, &env, 1, &err);
        ck_assert_msg(l != NULL, "%s: %s", at, err.message);
        ck_assert_msg(st_launch_run(l, NULL, &err), "%s: %s", at, err.message);
        st_value got;
        ck_assert_msg(st_launch_read(l, ar, &got, &err), "%s: %s", at, err.message);
        same_outputs(&got, &r, n, at);
        st_launch_free(l);
        st_arena_release(ar, mark);
    }
    st_exe_free(exe);
}

/* Each scan rule, applied at the scan (under an unzip in two programs)
 * that exscans-as-scans made of the exscan (AS_SCAN); the rules that need a
 * length they divide get it from pad-scan first. */
#define AS_SCAN "exscans-as-scans ; "
static const char *const STRATEGIES[] = {
    NULL,
    AS_SCAN "first(scan, pad-scan(BS=256)) ; first(scan, scan-then-propagate(BS=256))",
    AS_SCAN "first(scan, pad-scan(BS=2)) ; first(scan, brent-kung-step(BF=2))",
    AS_SCAN "first(scan, pad-scan(BS=8)) ; first(scan, brent-kung(BF=2, TD=3))",
    AS_SCAN "first(scan, sequential-scan)",
    AS_SCAN "first(scan, pad-scan(BS=256))",
    AS_SCAN "first(scan, parallel-scan(BS=256, BF=2, SE=4))",
    AS_SCAN "first(scan, parallel-scan(BS=16, BF=2, TD=2))",
    AS_SCAN "first(scan, lookback(M=12, WG=256, LW=32))",
    AS_SCAN "first(scan, lookback(M=16384, WG=1, LOAD=direct))",
    AS_SCAN "first(scan, lookback(M=3, WG=5, LW=5, LOAD=direct))",
    "DEFAULT-CPU",
    "DEFAULT-GPU",
};
enum { NSTRATEGIES = sizeof STRATEGIES / sizeof *STRATEGIES };

static const char *strategy_text(const char *s) {
    if (s && !strcmp(s, "DEFAULT-CPU")) return st_default_strategy("CPU");
    if (s && !strcmp(s, "DEFAULT-GPU")) return st_default_strategy("GPU");
    return s;
}

START_TEST(every_rule_on_the_device) {
    const char *strategy = strategy_text(STRATEGIES[_i]);
    for (prog p = I32_ADD; p < NPROGS; p++) runs_everywhere(def_of(PROGRAMS[p]), p, strategy, PROG_NAMES[p]);
}
END_TEST

/* No exscan is left for codegen: exscans-as-scans makes each a scan, and
 * lower-opencl applies it first (id changes nothing). */
START_TEST(a_rewrite_leaves_no_exscan) {
    const st_def *d = def_of(PROGRAMS[PAIR]);
    ck_assert_int_eq(d->body->kind, ST_NODE_PRIM);
    ck_assert_int_eq(d->body->u.prim, ST_PRIM_UNZIP);
    ck_assert_int_eq(d->body->kids[0]->u.prim, ST_PRIM_EXSCAN);
    ck_assert_ptr_eq(apply(d, "id", "id")->body, d->body);
    ck_assert(strstr(printed_def(lowered(apply(d, "id", "id"), "id")), "exscan") == NULL);
    const st_def *now = apply(d, "exscans-as-scans", "exscans-as-scans");
    ck_assert_int_eq(now->body->kids[0]->u.prim, ST_PRIM_SCAN);
    ck_assert_has(printed_def(now), "scan(");
    ck_assert(strstr(printed_def(now), "exscan") == NULL);
    /* the shifted input is read where the scan reads: an exscan costs the
     * kernels the inclusive scan costs, under every strategy */
    for (int s = 0; s < NSTRATEGIES; s++) {
        const char *strategy = strategy_text(STRATEGIES[s]), *label = STRATEGIES[s] ? STRATEGIES[s] : "no strategy";
        st_code ex = generated(lowered(apply(def_of(PROGRAMS[I32_ADD]), strategy, label), label), label);
        st_code in = generated(lowered(apply(def_of("def main(xs: [N]i32): [N]i32 = xs |> scan(+, 0)"), strategy, label),
                                       label), label);
        ck_assert_msg(ex.nkernels == in.nkernels, "%s: the exscan takes %u kernels, the scan %u", label, ex.nkernels,
                      in.nkernels);
    }
}
END_TEST

/* ---- the fusions ---- */

typedef struct fused_case {
    const char *src, *strategy;
    prog ref;       /* whose C reference: I32_ADD computes exclusive sums of xs */
    int how;        /* 0: the exclusive sums of 3x - 1; 1: 2a + 1 of them; 2: inclusive sums */
} fused_case;

static const fused_case FUSED[] = {
    {"def main(xs: [N]i32): [N]i32 =\n  xs |> map(x => x * 3 - 1) |> exscan(+, 0)\n", AS_SCAN "fuse-map-scan", I32_ADD, 0},
    {"def main(xs: [N]i32): [N]i32 =\n  xs |> exscan(+, 0) |> map(a => a * 2 + 1)\n", AS_SCAN "fuse-scan-map", I32_ADD, 1},
    {"def main(xs: [N]i32): [N]i32 =\n  zip(xs, xs |> exscan(+, 0)) |> map((x, a) => a + x)\n", AS_SCAN "fuse-scan-map", I32_ADD, 2},
    {"def main(xs: [N]i32): [N]i32 =\n  zip(xs, xs |> exscan(+, 0)) |> map((x, a) => a + x)\n",
     AS_SCAN "fuse-scan-map ; lookback(M=12, WG=256, LW=32)", I32_ADD, 2},
};
enum { NFUSED = sizeof FUSED / sizeof *FUSED };

START_TEST(fusions_on_the_device) {
    const fused_case *c = &FUSED[_i];
    const st_def *d = def_of(c->src), *now = apply(d, c->strategy, c->strategy);
    ck_assert_msg(count_of(printed_def(now), "scan(") <= 1 && count_of(printed_def(now), "map(") <= 2,
                  "%s did not fuse:\n%s", c->strategy, printed_def(now));
    const char *label = text_of("%s on %s", c->strategy, c->src);
    st_code code = generated(lowered(now, label), label);
    st_exe *exe = built(&code, label);
    for (int s = 0; s < NSIZES; s++) {
        int64_t n = SIZES[s];
        st_arena_mark mark = st_arena_get_mark(ar);
        int32_t *xs = ints(n, -1000, 2000, 3 + (uint64_t)s), *want = st_arena_alloc(ar, (size_t)(n ? n : 1) * 4);
        uint32_t acc = 0;
        for (int64_t i = 0; i < n; i++) {
            uint32_t x = c->how == 0 ? (uint32_t)xs[i] * 3u - 1u : (uint32_t)xs[i];
            want[i] = (int32_t)(c->how == 1 ? acc * 2u + 1u : c->how == 2 ? acc + x : acc);
            acc += x;
        }
        st_value arg = array_of(ST_I32, n, xs, ar), got;
        st_binding env = size_n(n);
        st_err err = {0};
        st_launch *l = st_launch_new(exe, &arg, &env, 1, &err);
        ck_assert_msg(l && st_launch_run(l, NULL, &err) && st_launch_read(l, ar, &got, &err), "%s: %s", label,
                      err.message);
        same_output(&got, 0, 1, ST_I32, want, n, text_of("%s, N = %lld", label, (long long)n));
        st_launch_free(l);
        st_arena_release(ar, mark);
    }
    st_exe_free(exe);
}
END_TEST

/* ---- the example: compaction through a scatter ---- */

#define COMPACTION_FUSED AS_SCAN "try(each(any, try(fuse-scan-map))) ; try(each(any, try(fuse-scan-scatter)))"

static const char *const EXAMPLE_STRATEGIES[] = {NULL, "DEFAULT-CPU", "DEFAULT-GPU", COMPACTION_FUSED,
                                                 COMPACTION_FUSED " ; try(each(top scan, try(lookback(M=12, WG=256, LW=32))))",
                                                 AS_SCAN "try(each(scan, parallel-scan(BS=256, BF=2, SE=4)))"};
enum { NEXAMPLE_STRATEGIES = sizeof EXAMPLE_STRATEGIES / sizeof *EXAMPLE_STRATEGIES };

START_TEST(the_example_compacts_on_the_device) {
    const char *strategy = strategy_text(EXAMPLE_STRATEGIES[_i]);
    const st_def *d = example_def("exscan_scatter");
    const char *label = text_of("exscan_scatter.strata, %s", strategy ? strategy : "no strategy");
    const st_def *now = apply(d, strategy, label);
    if (EXAMPLE_STRATEGIES[_i] && !strncmp(EXAMPLE_STRATEGIES[_i], COMPACTION_FUSED, strlen(COMPACTION_FUSED))) {
        /* the offsets' map and the scatter are in the scan: a scatter of pairs */
        const char *text = printed_def(now);
        ck_assert_msg(strstr(text, "scatterDistinct(replicate(N, 0), zip(") != NULL, "not fused:\n%s", text);
    }
    st_code code = generated(lowered(now, label), label);
    st_exe *exe = built(&code, label);
    for (int s = 0; s < NSIZES; s++) {
        int64_t n = SIZES[s];
        st_arena_mark mark = st_arena_get_mark(ar);
        int32_t *xs = ints(n, -50, 100, 9 + (uint64_t)s), *want = st_arena_alloc(ar, (size_t)(n ? n : 1) * 4);
        int64_t count = 0;
        for (int64_t i = 0; i < n; i++) want[i] = 0;
        for (int64_t i = 0; i < n; i++)
            if (xs[i] > 0) want[count++] = xs[i];
        st_value arg = array_of(ST_I32, n, xs, ar), got;
        st_binding env = size_n(n);
        st_err err = {0};
        const char *at = text_of("%s, N = %lld", label, (long long)n);
        st_launch *l = st_launch_new(exe, &arg, &env, 1, &err);
        ck_assert_msg(l && st_launch_run(l, NULL, &err) && st_launch_read(l, ar, &got, &err), "%s: %s", at,
                      err.message);
        ck_assert_int_eq(got.kind, ST_VALUE_TUPLE);
        same_output(&got, 0, 2, ST_I32, want, n, at);
        ck_assert_msg(got.u.items[1].kind == ST_VALUE_SCALAR && got.u.items[1].u.s.i64 == count,
                      "%s: the count is %lld, C says %lld", at, (long long)got.u.items[1].u.s.i64, (long long)count);
        st_launch_free(l);
        st_arena_release(ar, mark);
    }
    st_exe_free(exe);
}
END_TEST

/* ---- a fused scatter whose indices leave the result ----
 *
 * Kept elements go to 2·o − 3 (odd slots; the first kept one to −1, the
 * late ones past N), dropped ones to −o − 1: both ends of the bounds test
 * that a direct look-back makes a select of the address (the slot, or a
 * sink) rather than a branch, at every size, against C and the
 * interpreter. */

#define FUSE_ALL "try(each(any, try(fuse-map-scan))) ; try(each(any, try(fuse-scan-map))) ; try(each(any, try(fuse-scan-scatter)))"

static const char *const SPILL_PROGRAM =
    "def main(xs: [N]i32): [N]i32 =\n"
    "  let flags = xs |> map(x => if x > 0 then 1i64 else 0)\n"
    "  let offsets = flags |> scan(+, 0)\n"
    "  let idx = zip(xs, offsets) |> map((x, o) => if x > 0 then 2 * o - 3 else 0 - o - 1)\n"
    "  in scatter(replicate(N, 0), idx, xs)\n";

static const char *const SPILL_STRATEGIES[] = {NULL, "DEFAULT-CPU", "DEFAULT-GPU",
                                               FUSE_ALL " ; first(top scan, lookback(M=16, WG=1, LOAD=direct))",
                                               FUSE_ALL " ; first(top scan, lookback(M=3, WG=5, LW=5, LOAD=direct))",
                                               FUSE_ALL " ; first(top scan, lookback(M=12, WG=256, LW=32))"};
enum { NSPILL_STRATEGIES = sizeof SPILL_STRATEGIES / sizeof *SPILL_STRATEGIES };

START_TEST(a_fused_scatter_drops_what_falls_outside) {
    const char *strategy = strategy_text(SPILL_STRATEGIES[_i]);
    const st_def *d = def_of(SPILL_PROGRAM);
    const char *label = text_of("indices outside, %s", strategy ? strategy : "no strategy");
    const st_def *now = apply(d, strategy, label);
    if (strategy) ck_assert_has(printed_def(now), "scatter(replicate(N, 0), xs |> scanLookback(");
    st_code code = generated(lowered(now, label), label);
    st_exe *exe = built(&code, label);
    for (int s = 0; s < NSIZES; s++) {
        int64_t n = SIZES[s];
        st_arena_mark mark = st_arena_get_mark(ar);
        int32_t *xs = ints(n, -50, 100, 31 + (uint64_t)s), *want = st_arena_alloc(ar, (size_t)n * 4);
        int64_t kept = 0;
        for (int64_t i = 0; i < n; i++) want[i] = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t at = xs[i] > 0 ? 2 * ++kept - 3 : -kept - 1;
            if (at >= 0 && at < n) want[at] = xs[i];
        }
        st_value arg = array_of(ST_I32, n, xs, ar), got, interp;
        st_binding env = size_n(n);
        st_err err = {0};
        const char *at = text_of("%s, N = %lld", label, (long long)n);
        st_launch *l = st_launch_new(exe, &arg, &env, 1, &err);
        ck_assert_msg(l && st_launch_run(l, NULL, &err) && st_launch_read(l, ar, &got, &err), "%s: %s", at,
                      err.message);
        same_output(&got, 0, 1, ST_I32, want, n, at);
        ck_assert_msg(st_eval(cx, d, &arg, &env, 1, ar, &interp, &err), "%s: %s", at, err.message);
        same_output(&interp, 0, 1, ST_I32, want, n, text_of("the interpreter, N = %lld", (long long)n));
        st_launch_free(l);
        st_arena_release(ar, mark);
    }
    st_exe_free(exe);
}
END_TEST

/* ---- rows: segmented-scan ---- */

START_TEST(segmented_scan_on_rows) {
    const st_def *d = def_of("def main(xs: [R][C]i32): [R][C]i32 =\n  xs |> map(r => r |> exscan(+, 0))\n");
    const char *strategies[] = {AS_SCAN "segmented-scan(WG=256)", AS_SCAN "segmented-scan(WG=4)", NULL, st_default_strategy("CPU")};
    const int64_t shapes[][2] = {{1, 1}, {7, 7}, {1000, 1000}, {1, 1000003}, {3, 7}};
    for (size_t k = 0; k < sizeof strategies / sizeof *strategies; k++) {
        const char *label = strategies[k] ? strategies[k] : "no strategy";
        const st_def *now = apply(d, strategies[k], label);
        if (strategies[k]) ck_assert_has(printed_def(now), "prefixes"); /* each row's scan cooperates */
        st_code code = generated(lowered(now, label), label);
        st_exe *exe = built(&code, label);
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
            int64_t rows = shapes[s][0], cols = shapes[s][1], n = rows * cols;
            st_arena_mark mark = st_arena_get_mark(ar);
            int32_t *xs = ints(n, -1000, 2000, 21 + s), *want = st_arena_alloc(ar, (size_t)n * 4);
            for (int64_t r = 0; r < rows; r++) {
                uint32_t acc = 0;
                for (int64_t c = 0; c < cols; c++) want[r * cols + c] = (int32_t)acc, acc += (uint32_t)xs[r * cols + c];
            }
            st_value arg = array_of(ST_I32, n, xs, ar), got;
            int64_t *dims = st_arena_alloc(ar, 2 * sizeof *dims);
            dims[0] = rows, dims[1] = cols;
            arg.n = 2, arg.u.a.dims = dims;
            st_binding env[2] = {{st_intern_cstr(cx, "R"), rows}, {st_intern_cstr(cx, "C"), cols}};
            st_err err = {0};
            const char *at = text_of("%s, %lld rows of %lld", label, (long long)rows, (long long)cols);
            st_launch *l = st_launch_new(exe, &arg, env, 2, &err);
            ck_assert_msg(l && st_launch_run(l, NULL, &err) && st_launch_read(l, ar, &got, &err), "%s: %s", at,
                          err.message);
            ck_assert_msg(got.n == 2 && memcmp(got.u.a.data, want, (size_t)n * 4) == 0, "%s: the rows differ from C's",
                          at);
            st_launch_free(l);
            st_arena_release(ar, mark);
        }
        st_exe_free(exe);
    }
}
END_TEST

/* ---- the CUDA backend: the same kernels; compiled by NVRTC where it is
 * (the device tests run through CUDA with STRATA_TEST_DEVICE=cuda) ---- */

START_TEST(cuda_kernels_for_exscans) {
    st_code probe = {.cuda = "extern \"C\" __global__ void k(int *x) { x[0] = 1; }\n"};
    st_err err = {0};
    bool nvrtc = st_cuda_compile_check(&probe, 90, NULL, &err);
    if (!nvrtc) fprintf(stderr, "exscan: NVRTC checks skipped: %s\n", err.message);
    const char *strategies[] = {NULL, AS_SCAN "first(scan, lookback(M=12, WG=256, LW=32))", st_default_strategy("GPU"),
                                AS_SCAN "first(scan, parallel-scan(BS=256, BF=2, SE=4))"};
    for (size_t k = 0; k < sizeof strategies / sizeof *strategies; k++)
        for (prog p = I32_ADD; p <= PAIR; p++) {
            const char *label = text_of("%s, %s", PROG_NAMES[p], strategies[k] ? strategies[k] : "no strategy");
            st_code code = generated(lowered(apply(def_of(PROGRAMS[p]), strategies[k], label), label), label);
            ck_assert_msg(code.cuda != NULL, "%s: no CUDA source", label);
            for (uint32_t i = 0; i < code.nkernels; i++)
                ck_assert_msg(kernel_declared(code.cuda, code.kernel_names[i]), "%s: no CUDA kernel %s", label,
                              code.kernel_names[i]);
            if (nvrtc) ck_assert_msg(st_cuda_compile_check(&code, 90, NULL, &err), "%s: %s", label, err.message);
        }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Printing and errors                                                      */
/* ------------------------------------------------------------------------ */

static const char *reprinted(const char *text) {
    const st_program *p = parse_ok(cx, text);
    st_buf b = {0};
    st_print_program(p, &b);
    const char *s = text_of("%s", b.data ? b.data : "");
    st_buf_free(&b);
    return s;
}

START_TEST(exscan_prints_and_parses_back) {
    /* as written, in pipeline form */
    const char *once = reprinted(PROGRAMS[AFFINE]);
    ck_assert_has(once, "|> exscan((f, g) =>");
    ck_assert_str_eq(reprinted(once), once);
    ck_assert_str_eq(reprinted("def main(xs: [N]i32): [N]i32 = exscan(+, 0, xs)"), reprinted(PROGRAMS[I32_ADD]));
    /* rewritten by every rule: the text reads back to itself, and to the same IR */
    for (int s = 1; s < NSTRATEGIES; s++)
        for (prog p = I32_ADD; p < NPROGS; p++) {
            const st_def *now = apply(def_of(PROGRAMS[p]), strategy_text(STRATEGIES[s]), PROG_NAMES[p]);
            const char *text = printed_def(now);
            const st_def *back = def_of(text);
            ck_assert_msg(back->body == now->body, "%s, %s: parsed back to another program:\n%s", PROG_NAMES[p],
                          STRATEGIES[s], text);
            ck_assert_str_eq(printed_def(back), text);
        }
}
END_TEST

START_TEST(bad_exscans_are_refused_where_they_are) {
    ck_assert_error(cx, "def main(xs: [N]i32) =\n  xs |> exscan(+)\n", 2, 9, "exscan takes 3 arguments, but was given 2");
    ck_assert_error(cx, "def main(xs: [N]i32) =\n  exscan(+, (a, x) => a + x, 0, xs)\n", 2, 3,
                    "exscan takes 3 arguments, but was given 4");
    ck_assert_error(cx, "def main(xs: [N]i32) =\n  xs |> exscan(+, 0.0)\n", 2, 19,
                    "exscan's neutral element has type f32, but the elements are i32");
    ck_assert_error(cx, "def main(xs: [N]i32) =\n  xs |> exscan((a, b) => a < b, 0)\n", 2, 16, "exscan's");
    ck_assert_error(cx, "def main(x: i32) =\n  x |> exscan(+, 0)\n", 2, 3, "exscan needs an array");
}
END_TEST

int main(void) {
    Suite *s = suite_create("exscan");
    TCase *tc = tcase_create("interpreter, printing, errors");
    tcase_add_checked_fixture(tc, rules_setup, rules_teardown);
    tcase_set_timeout(tc, 240); /* every rule's program generated; sanitizers are slow */
    tcase_add_test(tc, interpreter_agrees_with_c);
    tcase_add_test(tc, interpreter_by_hand);
    tcase_add_test(tc, exscan_prints_and_parses_back);
    tcase_add_test(tc, bad_exscans_are_refused_where_they_are);
    tcase_add_test(tc, cuda_kernels_for_exscans);
    suite_add_tcase(s, tc);
    tc = tcase_create("device");
    tcase_add_checked_fixture(tc, rules_setup, pipeline_teardown);
    tcase_set_timeout(tc, 600); /* a million elements through PoCL, one work-item walking them under sequential-scan */
    tcase_add_loop_test(tc, every_rule_on_the_device, 0, NSTRATEGIES);
    tcase_add_test(tc, a_rewrite_leaves_no_exscan);
    tcase_add_loop_test(tc, fusions_on_the_device, 0, NFUSED);
    tcase_add_loop_test(tc, the_example_compacts_on_the_device, 0, NEXAMPLE_STRATEGIES);
    tcase_add_loop_test(tc, a_fused_scatter_drops_what_falls_outside, 0, NSPILL_STRATEGIES);
    tcase_add_test(tc, segmented_scan_on_rows);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
