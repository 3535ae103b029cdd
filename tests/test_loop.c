/* tests/test_loop.c — loops (`loop acc = x for i < n do body`, `loop acc =
 * x while c do body`): for and while, tuple accumulators, a loop inside a
 * map (a C loop in each work-item), loops at the top level whose bodies are
 * maps and scans (the glue runs the body's kernels each turn, the
 * accumulator in buffers that take turns), a count computed on the device;
 * the interpreter and the device (PoCL) against references computed here in
 * C, under no strategy, the defaults and the scan rules that apply, at
 * N = 1, 7, 1000 and 1000003; print and parse again; and the located errors
 * of the construct. */
#include "pipeline_fixture.h"
#include "run_strata.h"

/* ------------------------------------------------------------------------ */
/* Programs and their references in C                                       */
/* ------------------------------------------------------------------------ */

/* The inputs every program draws from: deterministic, of both signs. */
static int32_t in_i32(int64_t j) { return (int32_t)((j * 37 + 11) % 101) - 50; }
static uint32_t in_u32(int64_t j) { return (uint32_t)(j * 2654435761u) ^ 0x9e3779b9u; }
static float in_f32(int64_t j) { return (float)((j * 13 + 5) % 17) - 8.0f; }

typedef struct loop_case {
    const char *name;
    const char *src;
    int64_t k;                        /* the scalar k, when the program has one */
    bool has_scan;                    /* the scan rules apply */
    const char *lowered_has;          /* a part of the lowered program, as a sanity check */
    /* the inputs for n elements, and the reference result for them */
    void (*inputs)(int64_t n, st_value *args, uint32_t *nargs);
    st_value (*reference)(int64_t n, int64_t k, const st_value *args);
    bool needs_rules;                 /* a filter: codegen takes it after its rule only */
} loop_case;

static st_value pair_of(st_value a, st_value b) {
    st_value *items = room(2, sizeof *items);
    items[0] = a;
    items[1] = b;
    st_value v;
    memset(&v, 0, sizeof v);
    v.kind = ST_VALUE_TUPLE;
    v.n = 2;
    v.u.items = items;
    return v;
}

static void inputs_f32(int64_t n, st_value *args, uint32_t *nargs) {
    float *xs = room(n, sizeof *xs);
    for (int64_t j = 0; j < n; j++) xs[j] = in_f32(j);
    args[0] = array_of(ST_F32, n, xs, ar);
    *nargs = 1;
}

static void inputs_i32(int64_t n, st_value *args, uint32_t *nargs) {
    int32_t *xs = room(n, sizeof *xs);
    for (int64_t j = 0; j < n; j++) xs[j] = in_i32(j);
    args[0] = array_of(ST_I32, n, xs, ar);
    *nargs = 1;
}

static void inputs_u32(int64_t n, st_value *args, uint32_t *nargs) {
    uint32_t *xs = room(n, sizeof *xs);
    for (int64_t j = 0; j < n; j++) xs[j] = in_u32(j);
    args[0] = array_of(ST_U32, n, xs, ar);
    *nargs = 1;
}

static void inputs_u32_pair(int64_t n, st_value *args, uint32_t *nargs) {
    uint32_t *xs = room(n, sizeof *xs), *ys = room(n, sizeof *ys);
    for (int64_t j = 0; j < n; j++) {
        xs[j] = in_u32(j);
        ys[j] = in_u32(j + 7) >> 3;
    }
    args[0] = array_of(ST_U32, n, xs, ar);
    args[1] = array_of(ST_U32, n, ys, ar);
    *nargs = 2;
}

/* 1: each element iterates y = 0.5·y + i, k times (a for loop in a map) */
static st_value ref_affine(int64_t n, int64_t k, const st_value *args) {
    const float *xs = args[0].u.a.data;
    float *out = room(n, sizeof *out);
    for (int64_t j = 0; j < n; j++) {
        float y = xs[j];
        for (int64_t i = 0; i < k; i++) y = 0.5f * y + (float)i;
        out[j] = y;
    }
    return array_of(ST_F32, n, out, ar);
}

/* 2: the Collatz steps from (x & 127) + 1 (a while loop of a pair, in a map) */
static st_value ref_collatz(int64_t n, int64_t k, const st_value *args) {
    (void)k;
    const int32_t *xs = args[0].u.a.data;
    int32_t *out = room(n, sizeof *out);
    for (int64_t j = 0; j < n; j++) {
        int32_t a = (xs[j] & 127) + 1, b = 0;
        while (a != 1) {
            a = a % 2 == 0 ? a / 2 : 3 * a + 1;
            b++;
        }
        out[j] = b;
    }
    return array_of(ST_I32, n, out, ar);
}

/* 3: k turns of a map and an inclusive scan over the whole array (top level) */
static st_value ref_map_scan(int64_t n, int64_t k, const st_value *args) {
    uint32_t *ys = room(n, sizeof *ys);
    memcpy(ys, args[0].u.a.data, (size_t)n * sizeof *ys);
    for (int64_t i = 0; i < k; i++) {
        uint32_t acc = 0;
        for (int64_t j = 0; j < n; j++) {
            acc += ys[j] * 3u + (uint32_t)i;
            ys[j] = acc;
        }
    }
    return array_of(ST_U32, n, ys, ar);
}

/* 4: a pair of arrays while the largest of the first is above 0 (top level;
 * the condition a reduction computed on the device each turn) */
static st_value ref_while_pair(int64_t n, int64_t k, const st_value *args) {
    (void)k;
    int32_t *a = room(n, sizeof *a), *b = room(n, sizeof *b);
    memcpy(a, args[0].u.a.data, (size_t)n * sizeof *a);
    memset(b, 0, (size_t)n * sizeof *b);
    for (;;) {
        int32_t most = 0;
        for (int64_t j = 0; j < n; j++) most = a[j] > most ? a[j] : most;
        if (!(most > 0)) break;
        for (int64_t j = 0; j < n; j++) {
            b[j] += a[j] > 0 ? 1 : 0;
            a[j] -= 7;
        }
    }
    return pair_of(array_of(ST_I32, n, a, ar), array_of(ST_I32, n, b, ar));
}

/* 5: (a, b) -> (b, a + b + i), k times (top level, a tuple pattern) */
static st_value ref_fib(int64_t n, int64_t k, const st_value *args) {
    uint32_t *a = room(n, sizeof *a), *b = room(n, sizeof *b);
    memcpy(a, args[0].u.a.data, (size_t)n * sizeof *a);
    memcpy(b, args[1].u.a.data, (size_t)n * sizeof *b);
    for (int64_t i = 0; i < k; i++)
        for (int64_t j = 0; j < n; j++) {
            uint32_t t = a[j] + b[j] + (uint32_t)i;
            a[j] = b[j];
            b[j] = t;
        }
    return pair_of(array_of(ST_U32, n, a, ar), array_of(ST_U32, n, b, ar));
}

/* 6: a count that is no size expression: computed on the device, read back */
static st_value ref_count(int64_t n, int64_t k, const st_value *args) {
    uint32_t *ys = room(n, sizeof *ys);
    const uint32_t *xs = args[0].u.a.data;
    int64_t turns = k * (k - 1) / 2;
    for (int64_t j = 0; j < n; j++) ys[j] = xs[j] + (uint32_t)turns * 5u;
    return array_of(ST_U32, n, ys, ar);
}

/* 7: an array accumulator in a map: private memory, a fresh array each turn */
static st_value ref_rows(int64_t n, int64_t k, const st_value *args) {
    (void)k;
    const int32_t *xs = args[0].u.a.data;
    int32_t *out = room(n, sizeof *out);
    for (int64_t j = 0; j < n; j++) {
        int32_t r[4] = {xs[j], xs[j], xs[j], xs[j]};
        for (int32_t i = 0; i < 3; i++) {
            int32_t acc = 0;
            for (int q = 0; q < 4; q++) {
                acc += r[q] * 2 + i;
                r[q] = acc;
            }
        }
        out[j] = r[0] + r[1] + r[2] + r[3];
    }
    return array_of(ST_I32, n, out, ar);
}

/* 8: a loop at the top inside another's body, its count the outer index's */
static st_value ref_nested(int64_t n, int64_t k, const st_value *args) {
    uint32_t *a = room(n, sizeof *a), *c = room(n, sizeof *c);
    memcpy(a, args[0].u.a.data, (size_t)n * sizeof *a);
    for (int64_t i = 0; i < k; i++) {
        memcpy(c, a, (size_t)n * sizeof *c);
        for (int64_t j = 0; j < i + 1; j++) {
            uint32_t acc = 0;
            for (int64_t q = 0; q < n; q++) {
                acc += c[q] + (uint32_t)j;
                c[q] = acc;
            }
        }
        for (int64_t q = 0; q < n; q++) a[q] = (a[q] ^ c[q]) % 1000u;
    }
    return array_of(ST_U32, n, a, ar);
}

/* 9: an array and a scalar: while the count is below 5 and some element above 0 */
static st_value ref_mixed(int64_t n, int64_t k, const st_value *args) {
    (void)k;
    int32_t *a = room(n, sizeof *a), *s = room(1, sizeof *s);
    memcpy(a, args[0].u.a.data, (size_t)n * sizeof *a);
    int32_t turns = 0;
    for (;;) {
        int32_t most = 0;
        for (int64_t j = 0; j < n; j++) most = a[j] > most ? a[j] : most;
        if (!(turns < 5 && most > 0)) break;
        int32_t acc = 0;
        for (int64_t j = 0; j < n; j++) {
            acc += a[j] - 3;
            a[j] = acc;
        }
        turns++;
    }
    *s = turns;
    return pair_of(array_of(ST_I32, n, a, ar), scalar_of(ST_I32, (st_scalar){.i32 = turns}));
}

/* 10: a scalar accumulator over a whole-array reduction each turn (top level) */
static st_value ref_scalar_reduce(int64_t n, int64_t k, const st_value *args) {
    const uint32_t *xs = args[0].u.a.data;
    uint32_t s = 0;
    for (int64_t i = 0; i < k; i++) {
        uint32_t sum = 0;
        for (int64_t j = 0; j < n; j++) sum += xs[j] ^ (uint32_t)i;
        s = s * 3u + sum;
    }
    return scalar_of(ST_U32, (st_scalar){.u32 = s});
}

/* 11: a scalar accumulator over the largest prefix sum each turn (top level) */
static st_value ref_scalar_scan(int64_t n, int64_t k, const st_value *args) {
    const uint32_t *xs = args[0].u.a.data;
    uint32_t s = 0;
    for (int64_t i = 0; i < k; i++) {
        uint32_t acc = 0, most = 0;
        for (int64_t j = 0; j < n; j++) {
            acc += xs[j] + (uint32_t)i;
            most = acc > most ? acc : most;
        }
        s += most;
    }
    return scalar_of(ST_U32, (st_scalar){.u32 = s});
}

/* 12: a scalar accumulator over the sum of a filter's survivors each turn (top level) */
static st_value ref_scalar_filter(int64_t n, int64_t k, const st_value *args) {
    const int32_t *xs = args[0].u.a.data;
    int32_t s = 0;
    for (int64_t i = 0; i < k; i++)
        for (int64_t j = 0; j < n; j++)
            if (xs[j] > (int32_t)i * 10 - 20) s += xs[j];
    return scalar_of(ST_I32, (st_scalar){.i32 = s});
}

/* 13: a pair of scalars in a while loop, a reduction each turn (top level) */
static st_value ref_scalar_while(int64_t n, int64_t k, const st_value *args) {
    const uint32_t *xs = args[0].u.a.data;
    uint32_t s = 0;
    for (int64_t i = 0; i < k; i++) {
        uint32_t most = 0;
        for (int64_t j = 0; j < n; j++) most = (xs[j] >> i) > most ? xs[j] >> i : most;
        s += most;
    }
    return scalar_of(ST_U32, (st_scalar){.u32 = s});
}

/* 14: a reduction in one branch of a scalar loop's body (top level) */
static st_value ref_scalar_branch(int64_t n, int64_t k, const st_value *args) {
    const int32_t *xs = args[0].u.a.data;
    uint32_t s = 0;
    for (int64_t i = 0; i < k; i++) {
        if (i % 2 != 0) {
            s -= 1;
            continue;
        }
        for (int64_t j = 0; j < n; j++) s += (uint32_t)(xs[j] ^ (int32_t)i);
    }
    return scalar_of(ST_I32, (st_scalar){.i32 = (int32_t)s});
}

static const loop_case cases[] = {
    {"affine in a map",
     "def main(xs: [N]f32, k: i64): [N]f32 =\n"
     "  xs |> map(x => loop y = x for i < k do 0.5 * y + f32(i))\n",
     5, false, "mapGlb", inputs_f32, ref_affine, false},
    {"collatz in a map",
     "def main(xs: [N]i32): [N]i32 =\n"
     "  xs |> map(x =>\n"
     "    let (a, b) = loop (a, b) = ((x & 127) + 1, 0) while a != 1 do\n"
     "      (if a % 2 == 0 then a / 2 else 3 * a + 1, b + 1)\n"
     "    in b)\n",
     0, false, "mapGlb", inputs_i32, ref_collatz, false},
    {"map and scan at the top",
     "def main(xs: [N]u32, k: i64): [N]u32 =\n"
     "  loop ys = xs for i < k do ys |> map(y => y * 3 + u32(i)) |> scan(+, 0)\n",
     3, true, "loop ys = ", inputs_u32, ref_map_scan, false},
    {"while over a pair at the top",
     "def main(xs: [N]i32): ([N]i32, [N]i32) =\n"
     "  loop (a, b) = (xs, replicate(N, 0)) while reduce(max, 0, a) > 0 do\n"
     "    (a |> map(x => x - 7), zip(a, b) |> map((x, y) => y + (if x > 0 then 1 else 0)))\n",
     0, false, "mapGlb", inputs_i32, ref_while_pair, false},
    {"tuple pattern at the top",
     "def main(xs: [N]u32, ys: [N]u32, k: i64): ([N]u32, [N]u32) =\n"
     "  loop (a, b) = (xs, ys) for i < k do (b, zip(a, b) |> map((x, y) => x + y + u32(i)))\n",
     4, false, "mapGlb", inputs_u32_pair, ref_fib, false},
    {"a count read back",
     "def main(xs: [N]u32, k: i64): [N]u32 =\n"
     "  loop ys = xs for i < (iota(k) |> reduce(+, 0)) do ys |> map(y => y + 5)\n",
     4, false, "mapGlb", inputs_u32, ref_count, false},
    {"an array accumulator in a map",
     "def main(xs: [N]i32): [N]i32 =\n"
     "  xs |> map(x => loop r = replicate(4, x) for i < 3 do r |> map(y => y * 2 + i32(i)) |> scan(+, 0))\n"
     "     |> map(r => r |> reduce(+, 0))\n",
     0, false, "mapGlb", inputs_i32, ref_rows, false},
    {"no turns at the top",
     "def main(xs: [N]u32, k: i64): [N]u32 =\n"
     "  loop ys = xs for i < k do ys |> map(y => y * 3 + u32(i)) |> scan(+, 0)\n",
     0, true, "loop ys = ", inputs_u32, ref_map_scan, false},
    {"nested at the top",
     "def main(xs: [N]u32, k: i64): [N]u32 =\n"
     "  loop a = xs for i < k do\n"
     "    let b = loop c = a for j < i + 1 do c |> map(x => x + u32(j)) |> scan(+, 0)\n"
     "    in zip(a, b) |> map((x, y) => (x ^ y) % 1000)\n",
     3, true, "loop c = a for j < i + 1 do", inputs_u32, ref_nested, false},
    {"an array and a scalar at the top",
     "def main(xs: [N]i32): ([N]i32, i32) =\n"
     "  loop (a, s) = (xs, 0) while s < 5 && reduce(max, 0, a) > 0 do (a |> map(x => x - 3) |> scan(+, 0), s + 1)\n",
     0, true, "loop (a, s) = (xs, 0) while", inputs_i32, ref_mixed, false},
    /* a scalar accumulator whose body works over whole arrays runs at the
     * top too, its kernels parallel: not in one work-item */
    {"a scalar over reductions at the top",
     "def main(xs: [N]u32, k: i64): u32 =\n"
     "  loop s = 0 for i < k do s * 3 + reduce(+, 0, xs |> map(x => x ^ u32(i)))\n",
     4, false, "loop s = 0u32 for i < k do", inputs_u32, ref_scalar_reduce, false},
    {"a scalar over scans at the top",
     "def main(xs: [N]u32, k: i64): u32 =\n"
     "  loop s = 0 for i < k do s + (xs |> map(x => x + u32(i)) |> scan(+, 0) |> reduce(max, 0))\n",
     3, true, "loop s = 0u32 for i < k do", inputs_u32, ref_scalar_scan, false},
    {"a filter in a scalar loop at the top",
     "def main(xs: [N]i32, k: i64): i32 =\n"
     "  loop s = 0 for i < k do s + reduce(+, 0, filter(x => x > i32(i) * 10 - 20, xs))\n",
     5, false, "loop s = 0 for i < k do", inputs_i32, ref_scalar_filter, true},
    {"scalars in a while loop at the top",
     "def main(xs: [N]u32, k: i64): u32 =\n"
     "  let (s, j) = loop (s, j) = (0u32, 0i64) while j < k do (s + reduce(max, 0, xs |> map(x => x >> u32(j))), j + 1)\n"
     "  in s\n",
     4, false, "while j < k do", inputs_u32, ref_scalar_while, false},
    {"a reduction in a branch of a scalar loop at the top",
     "def main(xs: [N]i32, k: i64): i32 =\n"
     "  loop s = 0 for i < k do if i % 2 == 0 then s + reduce(+, 0, xs |> map(x => x ^ i32(i))) else s - 1\n",
     5, false, "loop s = 0 for i < k do", inputs_i32, ref_scalar_branch, false},
};
#define NCASES ((int)(sizeof cases / sizeof *cases))

static const int64_t sizes[] = {1, 7, 1000, 1000003};
#define NSIZES ((int)(sizeof sizes / sizeof *sizes))

/* The strategies every program runs under (NULL: none, lowering only), and
 * the scan rules, for the programs with a scan. */
static const char *const common_strategies[] = {NULL, "CPU", "GPU"};
/* (lookback after fuse-map-scan, as the defaults do: a look-back that reads
 * an unfused mapGlb fails in codegen with or without a loop around it) */
static const char *const scan_strategies[] = {
    "try(each(any, try(fuse-map-scan))) ; try(each(top scan, lookback(M=16384, WG=1, LOAD=direct)))",
    "try(each(any, try(fuse-map-scan))) ; try(each(top scan, lookback(M=12, WG=256, LW=32)))",
    "try(each(any, try(fuse-map-scan))) ; try(each(top scan, lookback(M=64, WG=64, LOAD=local)))",
    "try(each(scan, parallel-scan(BS=256, BF=2, SE=4)))",
    "try(each(any, try(fuse-map-scan))) ; try(each(scan, parallel-scan(BS=64, BF=4, SE=4)))",
};
#define NCOMMON ((int)(sizeof common_strategies / sizeof *common_strategies))
#define NSCAN ((int)(sizeof scan_strategies / sizeof *scan_strategies))
#define NSTRATEGIES (NCOMMON + NSCAN)

/* "CPU" and "GPU" name the defaults for those devices */
static const char *strategy_text(int s) {
    const char *t = s < NCOMMON ? common_strategies[s] : scan_strategies[s - NCOMMON];
    if (t && (!strcmp(t, "CPU") || !strcmp(t, "GPU"))) return st_default_strategy(t);
    return t;
}

/* The arguments and size bindings of case c at n elements. */
static void arguments(const loop_case *c, const st_def *d, int64_t n, st_value *args, st_binding *env, size_t *nenv) {
    uint32_t nargs = 0;
    c->inputs(n, args, &nargs);
    *nenv = 0;
    env[(*nenv)++] = (st_binding){st_intern_cstr(cx, "N"), n};
    for (uint32_t i = 0; i < d->nparams; i++)
        if (!strcmp(d->params[i]->u.name, "k")) {
            args[nargs++] = scalar_of(ST_I64, (st_scalar){.i64 = c->k});
            env[(*nenv)++] = (st_binding){st_intern_cstr(cx, "k"), c->k};
        }
    ck_assert_uint_eq(nargs, d->nparams);
}

static void agrees_with_c(const st_value *got, const st_value *want, const char *what) {
    st_err err = {0};
    ck_assert_msg(st_value_agree(got, want, 1e-5, &err), "%s: %s", what, err.message);
}

/* ------------------------------------------------------------------------ */
/* The interpreter against C                                                */
/* ------------------------------------------------------------------------ */

START_TEST(the_interpreter_equals_c) {
    const loop_case *c = &cases[_i];
    const st_def *d = def_of(c->src);
    for (int s = 0; s < NSIZES; s++) {
        if (sizes[s] > 1000 && _i == 1) continue; /* Collatz at 10^6 in a tree walker: slow, and no news */
        st_value args[4];
        st_binding env[4];
        size_t nenv;
        arguments(c, d, sizes[s], args, env, &nenv);
        st_value got;
        st_err err = {0};
        ck_assert_msg(st_eval(cx, d, args, env, nenv, ar, &got, &err), "%s: %s", c->name, err.message);
        st_value want = c->reference(sizes[s], c->k, args);
        agrees_with_c(&got, &want, text_of("%s, N=%lld, the interpreter", c->name, (long long)sizes[s]));
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The device against C                                                     */
/* ------------------------------------------------------------------------ */

START_TEST(the_device_equals_c) {
    const loop_case *c = &cases[_i / NSTRATEGIES];
    int s = _i % NSTRATEGIES;
    if (s >= NCOMMON && !c->has_scan) return; /* the scan rules: for the programs with a scan */
    if (s == 0 && c->needs_rules) return;     /* lowering alone leaves a filter codegen refuses */
    const char *strategy = strategy_text(s);
    const char *label = text_of("%s under %s", c->name, strategy ? strategy : "no strategy");
    const st_def *d = def_of(c->src);
    const st_def *low = lowered(apply(d, strategy, label), label);
    ck_assert_msg(strstr(printed_def(low), c->lowered_has), "%s: lowered:\n%s", label, printed_def(low));
    st_code code = generated(low, label);
    st_exe *exe = built(&code, label);
    for (int z = 0; z < NSIZES; z++) {
        st_value args[4];
        st_binding env[4];
        size_t nenv;
        arguments(c, d, sizes[z], args, env, &nenv);
        st_err err = {0};
        st_launch *l = st_launch_new(exe, args, env, nenv, &err);
        ck_assert_msg(l != NULL, "%s: st_launch_new: %s", label, err.message);
        ck_assert_msg(st_launch_run(l, NULL, &err), "%s, N=%lld: %s", label, (long long)sizes[z], err.message);
        st_value got;
        ck_assert_msg(st_launch_read(l, ar, &got, &err), "%s: st_launch_read: %s", label, err.message);
        st_value want = c->reference(sizes[z], c->k, args);
        agrees_with_c(&got, &want, text_of("%s, N=%lld, the device", label, (long long)sizes[z]));
        st_launch_free(l);
    }
    st_exe_free(exe);
}
END_TEST

/* A top-level loop's body runs at the top: its scan becomes a look-back
 * under the default, its kernels are launched by the glue each turn, the
 * accumulator's buffers taking turns with nothing copied. */
START_TEST(a_top_level_loop_keeps_its_kernels_at_the_top) {
    const st_def *d = def_of(cases[2].src);
    const st_def *low = lowered(apply(d, st_default_strategy("CPU"), "default"), "default");
    const char *text = printed_def(low);
    ck_assert_has(text, "loop ys = xs for i < k do");
    ck_assert_has(text, "scanLookback(");
    st_code code = generated(low, "default");
    ck_assert_has(code.host, "for (loop0_i = 0; loop0_i < loop0_n; loop0_i++) {");
    /* no copies: the first turn reads the input where it is, the turns
     * write the output and a spare in turn, the last the output; only a
     * loop of no turns copies the input */
    ck_assert_has(code.host, "loop0_acc = in_xs;");
    ck_assert_has(code.host, "loop0_next = ((loop0_n & 1) == 0) ? ");
    ck_assert_has(code.host, "loop0_next = loop0_next == out0 ? ");
    ck_assert_has(code.host, "if (loop0_acc != out0) {");
    /* a while loop writes the output first: a copy after it only when its count was even */
    st_code w = generated(lowered(apply(def_of(cases[3].src), st_default_strategy("CPU"), "while"), "while"), "while");
    ck_assert_has(w.host, "loop0_next = 0 ? ");
    ck_assert_has(w.host, "if (loop0_acc != out0) {");
    /* with nothing launched before the loop, a timing still spans every turn: the first turn's events kept */
    ck_assert_has(code.host, "if (first_events && !first_events[");
    ck_assert_has(code.host, "clReleaseEvent(events[");
    /* parallel-scan takes the scan in the body as a top-level one */
    const st_def *ps = apply(d, "each(scan, parallel-scan(BS=256, BF=2, SE=4))", "parallel-scan");
    ck_assert_has(printed_def(lowered(ps, "parallel-scan")), "mapWrg(");
}
END_TEST

/* Loops of every count, none and negative included, odd and even (which
 * decides whether the last turn writes the result or a copy follows), for
 * and while, their first value read in place (an input, a tuple of one) or
 * computed first, one array or a pair, agree with the interpreter on PoCL. */
START_TEST(loops_of_every_count_write_their_result) {
    static const char *const progs[] = {
        "def main(xs: [N]i32, k: i64): [N]i32 =\n  loop a = xs for i < k do a |> map(x => x * 3 - i32(i))\n",
        "def main(xs: [N]i32, k: i64): ([N]i32, [N]i32) =\n"
        "  loop (a, b) = (xs, xs |> map(x => x % 5)) for i < k do (b, zip(a, b) |> map((x, y) => x + y))\n",
        "def main(xs: [N]i32, k: i64): [N]i32 =\n"
        "  let (a, j) = loop (a, j) = (xs, 0i64) while j < k do (a |> map(x => x * 3 - i32(j)), j + 1) in a\n",
        "def main(xs: [N]u32, ys: [N]u32, k: i64): ([N]u32, [N]u32) =\n"
        "  let (a, b, j) = loop (a, b, j) = (xs, ys, 0i64) while j < k do (b, zip(a, b) |> map((x, y) => x ^ y), j + 1)\n"
        "  in (a, b)\n",
        /* an array of pairs: its buffers a tuple of arrays, copied out part by part */
        "def main(xs: [N]i32, k: i64): [N](i32, i64) =\n"
        "  loop ps = zip(xs, iota(N)) for i < k do ps |> map((x, j) => (x * 3 - i32(j), j + i))\n",
    };
    for (size_t p = 0; p < sizeof progs / sizeof *progs; p++) {
        const char *label = text_of("loop %zu under the CPU's default", p);
        const st_def *orig = def_of(progs[p]);
        st_code code = generated(lowered(apply(orig, st_default_strategy("CPU"), label), label), label);
        st_exe *exe = built(&code, label);
        for (int k = -1; k <= 5; k++)
            for (int n = 0; n < 2; n++)
                agrees(exe, orig, text_of("N=%d k=%d", n ? 1009 : 1, k), 7 + (uint64_t)k, label);
        st_exe_free(exe);
    }
}
END_TEST

/* A loop that one work-item runs (inside a map) keeps its scan: the rules
 * that would make it parallel say why not. A scalar loop at the top whose
 * body works over whole arrays is not such a loop; one that only reads
 * elements is. */
START_TEST(a_scan_in_a_loop_in_a_map_is_refused_with_the_reason) {
    const st_def *d = def_of("def main(xs: [N]i32): [N]i32 =\n"
                             "  xs |> map(x => loop y = x for i < 3 do (iota(4) |> map(j => i32(j) + y) |> scan(+, 0) |> reduce(+, 0)))\n");
    struct {
        const char *strategy, *says;
    } refusals[] = {
        {"first(scan, parallel-scan(BS=256, BF=2, SE=4))", "in the body of a loop that one work-item runs"},
        {"first(scan, lookback(M=16384, WG=1, LOAD=direct))", "the body of a loop that one work-item runs"},
    };
    for (size_t r = 0; r < sizeof refusals / sizeof *refusals; r++) {
        st_err err = {0};
        const st_strategy *s = st_strategy_parse(cx, reg, "strategy", refusals[r].strategy, &err);
        ck_assert_msg(s != NULL, "%s", err.message);
        st_rw *rw = st_rw_new(cx, reg);
        const st_def *now = st_rewrite_def(rw, s, d, &err);
        st_rw_free(rw);
        ck_assert_msg(now == NULL, "%s applied to a scan in a loop in a map", refusals[r].strategy);
        ck_assert_has(err.message, refusals[r].says);
    }
    /* a scalar loop at the top whose body works over whole arrays is the
     * top's: the scan rules take its scan, the glue runs its turns (a body
     * that reads i: hoist-invariant would take one that does not out of
     * the loop, which then only adds) */
    const st_def *top = def_of("def main(xs: [N]i32): i32 =\n"
                               "  loop s = 0 for i < 3 do s + (xs |> map(x => x - i32(i)) |> scan(+, 0) |> reduce(max, 0))\n");
    ck_assert_has(printed_def(lowered(apply(top, "first(scan, parallel-scan(BS=256, BF=2, SE=4))", "parallel-scan"),
                                      "parallel-scan")),
                  "mapWrg(");
    const char *def = st_default_strategy("CPU");
    const st_def *low = lowered(apply(top, def, "default"), "default");
    ck_assert_has(printed_def(low), "scanLookback(");
    st_code code = generated(low, "default");
    ck_assert_has(code.host, "for (loop0_i = 0; loop0_i < loop0_n; loop0_i++) {");
    st_exe *exe = built(&code, "a scalar loop at the top");
    agrees(exe, top, "N=1000", 1, "a scalar loop at the top");
    st_exe_free(exe);
    /* one that only reads elements stays in one work-item: a kernel a turn would cost more */
    const st_def *reads = def_of("def main(xs: [N]i32): i32 =\n  loop s = 0 for i < N do s + xs[i]\n");
    st_code one = generated(lowered(apply(reads, def, "default"), "default"), "default");
    ck_assert_msg(!strstr(one.host, "loop0_i"), "a loop of gets runs in the glue:\n%s", one.host);
    ck_assert_has(one.opencl, "for (");
    exe = built(&one, "a loop of gets");
    agrees(exe, reads, "N=1000", 1, "a loop of gets");
    st_exe_free(exe);
}
END_TEST

/* A producer outside a loop is not fused into its body: there it would be
 * computed again every turn. What is inside the body fuses there. */
START_TEST(fusion_does_not_cross_into_a_loop) {
    const st_def *d = def_of("def main(xs: [N]i32, k: i64): [N]i32 =\n"
                             "  let ys = xs |> map(x => x * 2)\n"
                             "  in loop a = xs for i < k do ys |> scan(+, 0) |> map(y => y + get(0, a))\n");
    st_err err = {0};
    const st_strategy *s = st_strategy_parse(cx, reg, "strategy", "first(let, fuse-map-scan)", &err);
    ck_assert_msg(s != NULL, "%s", err.message);
    st_rw *rw = st_rw_new(cx, reg);
    ck_assert(st_rewrite_def(rw, s, d, &err) == NULL);
    st_rw_free(rw);
    ck_assert_has(err.message, "once per turn of a loop");
    /* the body's own scan and map fuse, inside it */
    const st_def *fused = apply(d, "try(each(any, try(fuse-scan-map)))", "fuse-scan-map");
    const char *text = printed_def(fused);
    ck_assert_has(text, "let ys = xs |> map(x => x * 2)");
    ck_assert_msg(!strstr(text, "|> map(y =>"), "the body's map was not fused into its scan:\n%s", text);
    st_code code = generated(lowered(fused, "fused"), "fused");
    st_exe *exe = built(&code, "fused");
    agrees(exe, d, "N=1000 k=3", 1, "fused");
    st_exe_free(exe);
}
END_TEST

/* A loop whose body's total does not change from turn to turn (a reduce
 * of a scan of a view, as the look-back makes it a scanTotal of its scan):
 * the scan goes out of the loop with its total, which takes the scan itself
 * (codegen once made it scanTotal of a variable and refused its own
 * program), under each device type's default, at lengths around a block. */
START_TEST(a_loop_invariant_total_leaves_the_loop_with_its_scan) {
    const char *src = "def main(xs: [N]i32) =\n"
                      "  loop acc = (rotate(N / 3 - 2, xs |> map(x => x * 3 - 1)) |> scan(+, 0) |> reduce(+, 0)) for t < 2 do\n"
                      "    ((xs |> map(x => x * 3))[1:N] |> scan(+, 0) |> reduce(+, 0)) + acc % 7";
    const st_def *d = def_of(src);
    for (int gpu = 0; gpu < 2; gpu++) {
        const char *label = gpu ? "a loop-invariant total under the GPU default" : "a loop-invariant total under the CPU default";
        st_code code = generated(lowered(apply(d, st_default_strategy(gpu ? "GPU" : "CPU"), label), label), label);
        st_exe *exe = built(&code, label);
        static const char *const sizes[] = {"N=1", "N=7", "N=1000", "N=16385"};
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) agrees(exe, d, sizes[k], 3 + k, label);
        st_exe_free(exe);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Print and parse again                                                    */
/* ------------------------------------------------------------------------ */

START_TEST(print_parses_back_to_the_same_program) {
    const loop_case *c = &cases[_i];
    const st_def *d = def_of(c->src);
    const char *printed = printed_def(d);
    ck_assert_has(printed, "loop ");
    const st_def *again = def_of(printed);
    ck_assert_msg(again->body == d->body, "%s: printed and parsed again, the program differs:\n%s\n--- from ---\n%s",
                  c->name, printed, c->src);
    ck_assert_str_eq(printed_def(again), printed);
}
END_TEST

START_TEST(nested_loops_and_literals_print_back) {
    const char *srcs[] = {
        "def main(x: i64, n: i64): i64 =\n  loop a = 1i64 for i < n do loop b = a while b < 100i64 do b * 2 + i\n",
        "def main(x: u32): (u32, f64) =\n  loop (a, b) = (x, 0.5f64) for i < 3 do (a + 1, b * 2.0)\n",
        "def main(x: i32): i32 =\n  let y = loop y = x for i < 3 do let z = y + 1 in z * 2\n  in y + (loop q = 0 for j < 2 do q + 1)\n",
    };
    for (size_t i = 0; i < sizeof srcs / sizeof *srcs; i++) {
        const st_def *d = def_of(srcs[i]);
        const char *printed = printed_def(d);
        const st_def *again = def_of(printed);
        ck_assert_msg(again->body == d->body, "printed and parsed again, the program differs:\n%s", printed);
        ck_assert_str_eq(printed_def(again), printed);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Located errors                                                           */
/* ------------------------------------------------------------------------ */

START_TEST(bad_loops_are_refused_at_their_place) {
    /* the accumulator changes size: both sizes named */
    ck_assert_error(cx, "def main(xs: [N]i32): [N]i32 =\n  loop ys = xs for i < 3 do replicate(2 * N, 0)\n", 2, 29,
                    "the loop's body has type [2*N]i32, but its accumulator has type [N]i32");
    ck_assert_error(cx, "def main(xs: [N]i32): [N]i32 =\n  loop ys = xs for i < 3 do iota(N + 1) |> map(j => i32(j))\n", 2, 44,
                    "the loop's body has type [N + 1]i32, but its accumulator has type [N]i32");
    /* the condition is not a bool */
    ck_assert_error(cx, "def main(x: i32): i32 =\n  loop y = x while y + 1 do y + 1\n", 2, 22,
                    "the loop's condition has type i32, but it must be bool");
    /* the index outside the loop */
    ck_assert_error(cx, "def main(x: i32): i32 =\n  (loop y = x for i < 3 do y + i32(i)) + i32(i)\n", 2, 46,
                    "unknown name `i`");
    /* the count is not an integer */
    ck_assert_error(cx, "def main(x: i32): i32 =\n  loop y = x for i < 2.5 do y + 1\n", 2, 22,
                    "the loop's count has type f32, but it must be an integer");
    /* the body's type is not the accumulator's */
    ck_assert_error(cx, "def main(x: i32): i32 =\n  loop y = x for i < 3 do f32(y)\n", 2, 27,
                    "the loop's body has type f32, but its accumulator has type i32");
    ck_assert_error(cx, "def main(x: bool): bool =\n  loop y = x while y do 1\n", 2, 25,
                    "the loop's body has type i32, but its accumulator has type bool");
    /* a pattern of the wrong arity, the index named as the accumulator */
    ck_assert_error(cx, "def main(x: i32): i32 =\n  loop (a, b) = x for i < 2 do (a, b)\n", 2, 3,
                    "the pattern has 2 names, but the loop's initial value has type i32");
    ck_assert_error(cx, "def main(x: i32): i32 =\n  loop y = x for y < 2 do y\n", 2, 18,
                    "`y` is both the loop's index and its accumulator");
    /* syntax */
    ck_assert_error(cx, "def main(x: i32): i32 =\n  loop y = x for i < 2 y\n", 2, 24, "expected `do` before the loop's body");
    ck_assert_error(cx, "def main(x: i32): i32 =\n  loop y = x until y < 2 do y\n", 2, 14,
                    "expected `for` or `while` after the loop's initial value");
    ck_assert_error(cx, "def main(x: i32): i32 =\n  loop y = x for i do y\n", 2, 20, "expected `<` after the loop's index");
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The example, through the command line                                    */
/* ------------------------------------------------------------------------ */

START_TEST(the_example_runs_and_checks) {
    char dir[256];
    scratch_make(dir, sizeof dir, "loop");
    const char *prog = text_of("%s/loop_recurrence.strata", getenv("STRATA_EXAMPLES"));
    for (int s = 0; s < 2; s++) {
        const char *args_default[] = {"run", prog, "--size", "N=1000", "--input", "k=4", "--check", NULL};
        const char *args_none[] = {"run", prog, "--size", "N=1000", "--input", "k=4", "--check", "-s", "id", NULL};
        char *out, *err;
        int rc = strata_spawn(ar, dir, environ, s ? args_none : args_default, &out, &err);
        ck_assert_msg(rc == 0, "exit %d\n%s\n%s", rc, out, err);
        ck_assert_has(err, "check: the results equal the interpreter's");
    }
    scratch_remove(dir);
}
END_TEST

static Suite *loop_suite(void) {
    Suite *s = suite_create("loop");
    TCase *lang = tcase_create("language");
    tcase_add_checked_fixture(lang, rules_setup, rules_teardown);
    tcase_set_timeout(lang, 600);
    tcase_add_loop_test(lang, the_interpreter_equals_c, 0, NCASES);
    tcase_add_loop_test(lang, print_parses_back_to_the_same_program, 0, NCASES);
    tcase_add_test(lang, nested_loops_and_literals_print_back);
    tcase_add_test(lang, bad_loops_are_refused_at_their_place);
    suite_add_tcase(s, lang);
    TCase *dev = tcase_create("device");
    tcase_set_timeout(dev, 600);
    tcase_add_checked_fixture(dev, rules_setup, pipeline_teardown);
    tcase_add_loop_test(dev, the_device_equals_c, 0, NCASES * NSTRATEGIES);
    tcase_add_test(dev, a_top_level_loop_keeps_its_kernels_at_the_top);
    tcase_add_test(dev, loops_of_every_count_write_their_result);
    tcase_add_test(dev, a_scan_in_a_loop_in_a_map_is_refused_with_the_reason);
    tcase_add_test(dev, fusion_does_not_cross_into_a_loop);
    tcase_add_test(dev, a_loop_invariant_total_leaves_the_loop_with_its_scan);
    tcase_add_test(dev, the_example_runs_and_checks);
    suite_add_tcase(s, dev);
    return s;
}

int main(void) { return run_suite(loop_suite()); }
