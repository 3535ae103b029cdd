/* tests/test_reduce.c — the rules parallel-reduce(BS) (strategies/scan.c)
 * and lookback on a reduce (strategies/lookback.c: the total of a look-back
 * scan that stores nothing), which the GPU's default strategy applies to
 * every top-level reduction.
 *
 * Each program (a sum of i32 and of f32, a sum and a count of a zip, a
 * product of 2x2 matrices and "the first non-zero", neither of which
 * commutes) runs in the interpreter before and after the rule (chunks of
 * 1024, and of 3, which leaves a tail almost everywhere)
 * and the default strategies of a CPU and a GPU, at N = 0, 1, 7, 1000,
 * 4099 and 1000003, against a reference computed here in C. Around it:
 * what the rule refuses and why, the shape it gives (a fused map folded in
 * the chunks), and on PoCL the programs and the partition radix sort under
 * no strategy, the rule and the default strategy against the interpreter. */
#include "pipeline_fixture.h"

/* ------------------------------------------------------------------------ */
/* Programs and their references in C                                       */
/* ------------------------------------------------------------------------ */

static int32_t in_int(int64_t j) { return (int32_t)((j * 37 + 11) % 101 - 50); }
/* sixteenths: every sum of a million of them is exact in f32, in any order */
static float in_f32(int64_t j) { return (float)((j * 13 + 5) % 17) / 16.0f; }
/* zero but for a few places in the second half: the first non-zero is
 * found late, past chunk boundaries */
static int32_t in_sparse(int64_t j, int64_t n) { return j >= n / 2 && j % 5 == 3 ? (int32_t)(j % 97) + 1 : 0; }

typedef enum { SUM_I32, SUM_F32, SUM_COUNT, MATRICES, FIRST_NONZERO } kind;

typedef struct rcase {
    const char *name, *src;
    kind k;
} rcase;

static const rcase CASES[] = {
    {"sum i32", "def main(xs: [N]i32): i32 = xs |> reduce(+, 0)", SUM_I32},
    {"sum f32", "def main(xs: [N]f32): f32 = xs |> reduce(+, 0.0)", SUM_F32},
    {"sum and count of a zip",
     "def main(xs: [N]i32, ys: [N]f32) =\n"
     "  zip(xs, ys) |> map((x, y) => (x, if y < 0.5 then 1i64 else 0i64))\n"
     "  |> reduce((a, b) => (a.0 + b.0, a.1 + b.1), (0, 0i64))\n",
     SUM_COUNT},
    {"2x2 matrix product",
     "def main(xs: [N]u32) =\n"
     "  xs |> map(x => (x, 1u32, 1u32, 0u32))\n"
     "  |> reduce((a, b) => (a.0 * b.0 + a.1 * b.2, a.0 * b.1 + a.1 * b.3, a.2 * b.0 + a.3 * b.2, a.2 * b.1 + a.3 * b.3),\n"
     "            (1u32, 0u32, 0u32, 1u32))\n",
     MATRICES},
    /* in a branch: where no let could stand, the chunks still run first */
    {"first non-zero",
     "def main(xs: [N]i32): i32 = if N > 0 then xs |> reduce((a, b) => if a != 0 then a else b, 0) else 0", FIRST_NONZERO},
};
enum { NCASES = sizeof CASES / sizeof *CASES };

static const int64_t SIZES[] = {0, 1, 7, 1000, 4099, 1000003};
enum { NSIZES = sizeof SIZES / sizeof *SIZES };

#define RULE_1024 "try(each(any, try(fuse-map-reduce))) ; each(top reduce, parallel-reduce(BS=1024))"
#define RULE_3 "try(each(any, try(fuse-map-reduce))) ; each(top reduce, parallel-reduce(BS=3))"

static const char *strategy_of(int s) {
    switch (s) {
    case 0: return RULE_1024;
    case 1: return RULE_3;
    case 2: return st_default_strategy("CPU");
    default: return st_default_strategy("GPU");
    }
}
enum { NSTRATEGIES = 4 };

#define SCALAR(K, field, v) scalar_of((K), (st_scalar){.field = (v)})

/* the case's arguments at N = n, and its result computed here */
static st_value inputs_and_reference(const rcase *c, int64_t n, st_value *args) {
    switch (c->k) {
    case SUM_I32: {
        int32_t *xs = room(n, sizeof *xs), sum = 0;
        for (int64_t j = 0; j < n; j++) sum += xs[j] = in_int(j);
        args[0] = array_of(ST_I32, n, xs, ar);
        return SCALAR(ST_I32, i32, sum);
    }
    case SUM_F32: {
        float *xs = room(n, sizeof *xs), sum = 0;
        for (int64_t j = 0; j < n; j++) sum += xs[j] = in_f32(j);
        args[0] = array_of(ST_F32, n, xs, ar);
        return SCALAR(ST_F32, f32, sum);
    }
    case SUM_COUNT: {
        int32_t *xs = room(n, sizeof *xs), sum = 0;
        float *ys = room(n, sizeof *ys);
        int64_t count = 0;
        for (int64_t j = 0; j < n; j++) { /* every x is summed, the ys below one half counted */
            sum += xs[j] = in_int(j), ys[j] = in_f32(j * 7);
            count += ys[j] < 0.5f;
        }
        args[0] = array_of(ST_I32, n, xs, ar), args[1] = array_of(ST_F32, n, ys, ar);
        st_value parts[2] = {SCALAR(ST_I32, i32, sum), SCALAR(ST_I64, i64, count)};
        return tuple_of(2, parts);
    }
    case MATRICES: {
        uint32_t *xs = room(n, sizeof *xs), m[4] = {1, 0, 0, 1};
        for (int64_t j = 0; j < n; j++) {
            xs[j] = (uint32_t)(j * 2654435761u) >> 7;
            uint32_t b[4] = {xs[j], 1, 1, 0};
            uint32_t r[4] = {m[0] * b[0] + m[1] * b[2], m[0] * b[1] + m[1] * b[3], m[2] * b[0] + m[3] * b[2],
                             m[2] * b[1] + m[3] * b[3]};
            memcpy(m, r, sizeof m);
        }
        args[0] = array_of(ST_U32, n, xs, ar);
        st_value parts[4];
        for (int k = 0; k < 4; k++) parts[k] = SCALAR(ST_U32, u32, m[k]);
        return tuple_of(4, parts);
    }
    default: {
        int32_t *xs = room(n, sizeof *xs), first = 0;
        for (int64_t j = 0; j < n; j++)
            if ((xs[j] = in_sparse(j, n)) != 0 && first == 0) first = xs[j];
        args[0] = array_of(ST_I32, n, xs, ar);
        return SCALAR(ST_I32, i32, first);
    }
    }
}

/* d run by the interpreter on args at N = n agrees with want */
/* ------------------------------------------------------------------------ */
/* The rule keeps the result                                                */
/* ------------------------------------------------------------------------ */

START_TEST(the_rule_keeps_the_interpreters_result) {
    const rcase *c = &CASES[_i / NSTRATEGIES];
    int s = _i % NSTRATEGIES;
    const st_def *orig = def_of(c->src);
    const char *label = text_of("%s under %s", c->name, strategy_of(s));
    const st_def *now = apply(orig, strategy_of(s), label);
    /* the CPU's default folds a reduce in chunks (strategies/defaults.c says why), the GPU's makes it a
       look-back's total */
    ck_assert_msg(!strstr(printed_def(now), "iota(N / ") == (s == 3), "%s:\n%s", label, printed_def(now));
    ck_assert_msg(!strstr(printed_def(now), "scanTotal(") == (s != 3), "%s:\n%s", label, printed_def(now));
    for (int z = 0; z < NSIZES; z++) {
        int64_t n = SIZES[z];
        if (n > 10000 && s != 0) continue; /* the interpreter is slow: the big size once per case */
        st_value args[2];
        st_value want = inputs_and_reference(c, n, args);
        if (s == 0) interpreted(orig, args, n, &want, c->name); /* once per case */
        interpreted(now, args, n, &want, label);
    }
}
END_TEST

/* A rewritten program prints, parses back and prints the same. */
START_TEST(rewritten_programs_print_and_parse_back) {
    const rcase *c = &CASES[_i];
    const char *once = printed_def(apply(def_of(c->src), RULE_1024, c->name));
    st_ctx *fresh = st_ctx_new();
    st_err err = {0};
    const st_program *again = st_parse_program(fresh, "printed", once, strlen(once), &err);
    ck_assert_msg(again != NULL, "%s: the printed program does not parse: %d:%d: %s\n%s", c->name, err.loc.line,
                  err.loc.col, err.message, once);
    st_buf twice = {0};
    st_print_def(entry_ok(again), &twice);
    ck_assert_str_eq(twice.data, once);
    st_buf_free(&twice);
    st_ctx_free(fresh);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The shape                                                                */
/* ------------------------------------------------------------------------ */

/* whole chunks of BS folded in order, the partials reduced, then the tail
 * (the elements after the last whole chunk), the fused map applied in each
 * fold: no map over the input is left */
START_TEST(the_chunks_fold_the_fused_map) {
    const char *text = printed_def(apply(def_of(CASES[2].src), RULE_1024, "rule"));
    ck_assert_has(text, "iota(N / 1024)\n");
    ck_assert_has(text, "|> map(c => iota(1024) |> reduce((a, b) => (a.0 + b.0, a.1 + b.1), (acc");
    ck_assert_has(text, "xs |> get(c * 1024 + j)");
    ck_assert_has(text, "iota(N - 1024 * (N / 1024)) |> reduce(");
    ck_assert_has(text, "xs |> get(1024 * (N / 1024) + j");
    ck_assert_msg(!strstr(text, "zip(xs, ys) |> map(") && !strstr(text, " < N then") && count_of(text, "reduce(") == 3,
                  "%s", text);
    /* the default strategies: chunks of 16384 on a CPU, a look-back's total on a GPU */
    const char *cpu = printed_def(apply(def_of(CASES[0].src), st_default_strategy("CPU"), "CPU"));
    ck_assert_has(cpu, "iota(N / 16384)\n    |> map(c");
    ck_assert_has(cpu, " => iota(16384) |> reduce(");
    ck_assert_int_eq(count_of(cpu, "reduce("), 3);
    /* a float's sum (+ commutes; the compiler may not reorder it) in 32 interleaved lanes: a
     * row the chunk's 512 rows of 32 elements are added to, then its lanes added up */
    const char *f32 = printed_def(apply(def_of(CASES[1].src), st_default_strategy("CPU"), "CPU"));
    ck_assert_has(f32, " => iota(512)\n      |> reduce((u, v) => zip(u, v) |> map((x");
    ck_assert_has(f32, "(accs, k) => zip(accs, iota(32)) |> map((a");
    ck_assert_has(f32, " * 16384 + k * 32 + l))), replicate(32, 0.0))\n      |> reduce(+, 0.0))");
    ck_assert_int_eq(count_of(f32, "reduce("), 6); /* (the tail's in lanes too: reduce-lanes) */
    /* f64: 16 lanes; min's neutral element starts them */
    const char *f64 = printed_def(apply(def_of("def main(xs: [N]f64): f64 = reduce(min, f64.inf, xs)"),
                                        st_default_strategy("CPU"), "CPU"));
    ck_assert_has(f64, "iota(1024)\n      |> reduce(");
    ck_assert_has(f64, "replicate(16, f64.inf)");
    const char *gpu = printed_def(apply(def_of(CASES[0].src), st_default_strategy("GPU"), "GPU"));
    ck_assert_has(gpu, "scanTotal(xs |> scanLookback(32, 128, 32, 0, +, 0))");
    ck_assert_int_eq(count_of(gpu, "reduce("), 0);
}
END_TEST

/* A chunk's reads need no check (c * BS + j lies below N / BS * BS), and a
 * chunk's work-item loops: on a CPU in a group of its own */
START_TEST(a_chunk_reads_unchecked_in_a_group_of_one_on_a_cpu) {
    const st_def *d = def_of(CASES[0].src);
    st_code code = generated(lowered(apply(d, RULE_1024, "rule"), "rule"), "rule");
    const char *first = strstr(code.opencl, "__kernel"), *second = first ? strstr(first + 1, "__kernel") : NULL;
    ck_assert_msg(first && second, "%s", code.opencl);
    const char *fault = strstr(first, "st_fault(");
    ck_assert_msg(!fault || fault > second, "the chunks' kernel checks its reads:\n%s", code.opencl);
    ck_assert_has(code.host, "group = strata_is_cpu(queue) ? 1 : strata_group(queue, kernels[0], 256);");
}
END_TEST

/* a partition's count (read before its scan, so not that scan's total) is
 * a look-back of its own under the GPU's default, inside the loop the host
 * runs: two look-back kernels a turn */
START_TEST(the_radix_sorts_count_is_a_lookback) {
    const st_def *d = example_def("radix_sort_partition");
    const char *text = printed_def(apply(d, st_default_strategy("GPU"), "radix"));
    ck_assert_has(text, "scanTotal(ks |> scanLookback(32, 128, 32, 0, +, (acc");
    ck_assert_int_eq(count_of(text, "scanLookback("), 2);
    ck_assert_int_eq(count_of(text, "reduce("), 0);
    int64_t n = 4099;
    uint32_t *xs = room(n, sizeof *xs), *sorted = room(n, sizeof *sorted);
    for (int64_t j = 0; j < n; j++) xs[j] = (uint32_t)(j * 2654435761u) ^ 0x9e3779b9u;
    memcpy(sorted, xs, (size_t)n * sizeof *xs);
    for (int64_t i = 1; i < n; i++) /* insertion sort: the reference */
        for (int64_t j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
            uint32_t t = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = t;
        }
    st_value args[1] = {array_of(ST_U32, n, xs, ar)}, want = array_of(ST_U32, n, sorted, ar);
    interpreted(apply(d, "try(each(partition, try(partition-scatter))) ; try(each(any, try(concat-split))) ; "
                         "each(top reduce, parallel-reduce(BS=1000))", "radix"),
                args, n, &want, "radix_sort_partition, parallel-reduce(BS=1000)");
}
END_TEST

/* ------------------------------------------------------------------------ */
/* What the rule refuses                                                    */
/* ------------------------------------------------------------------------ */

static st_err refusal(const char *src, const char *strategy) {
    st_err err = {0};
    const st_strategy *s = st_strategy_parse(cx, reg, "strategy", strategy, &err);
    ck_assert_msg(s != NULL, "%s", err.message);
    st_rw *rw = st_rw_new(cx, reg);
    const st_def *now = st_rewrite_def(rw, s, def_of(src), &err);
    st_rw_free(rw);
    ck_assert_msg(now == NULL, "`%s` applied to\n%s\ngiving\n%s", strategy, src, now ? printed_def(now) : "");
    return err;
}

START_TEST(what_the_rule_refuses_and_why) {
    /* a reduce per row: inside a map's function */
    ck_assert_has(refusal("def main(xs: [N][M]i32) = xs |> map(r => r |> reduce(+, 0))", "first(reduce, parallel-reduce(BS=64))").message,
                  "parallel-reduce: this reduce is inside a lambda");
    /* an accumulator of arrays that are not short rows of a constant length */
    ck_assert_has(refusal("def main(xs: [N][M]i32) = xs |> reduce((a, b) => zip(a, b) |> map((x, y) => x + y), replicate(M, 0))",
                          "first(reduce, parallel-reduce(BS=64))").message,
                  "the reduce's accumulator holds arrays that are not rows of a constant length of at most 256");
    ck_assert_has(refusal("def main(xs: [N][300]i32) = xs |> reduce((a, b) => zip(a, b) |> map((x, y) => x + y), replicate(300, 0))",
                          "first(reduce, parallel-reduce(BS=64))").message,
                  "the reduce's accumulator holds arrays that are not rows of a constant length of at most 256");
    /* one chunk */
    ck_assert_has(refusal("def main(xs: [N]i32) = xs[0:50] |> reduce(+, 0)", "first(reduce, parallel-reduce(BS=64))").message,
                  "a constant of at most BS = 64, one chunk");
    /* an input that is a scan's result: each chunk would scan again */
    ck_assert_has(refusal("def main(xs: [N]i32) = xs |> scan(+, 0) |> reduce(^, 0)", "first(reduce, parallel-reduce(BS=64))").message,
                  "an element of the reduce's input costs more than a read");
    /* not a reduce */
    st_err err = refusal("def main(xs: [N]i32) = xs |> scan(+, 0)", "parallel-reduce(BS=64)");
    ck_assert(err.mismatch);
    ck_assert_has(err.message, "parallel-reduce rewrites a reduce");
    /* lookback on a reduce: the same place and the same accumulators */
    ck_assert_has(refusal("def main(xs: [N][M]i32) = xs |> map(r => r |> reduce(+, 0))",
                          "first(reduce, lookback(M=32, WG=128, LW=32))").message,
                  "lookback: this reduce is inside a lambda");
    ck_assert_has(refusal("def main(xs: [N][4]i32) = xs |> reduce((a, b) => zip(a, b) |> map((x, y) => x + y), replicate(4, 0))",
                          "first(reduce, lookback(M=32, WG=128, LW=32))").message,
                  "lookback folds scalars and tuples of scalars, and this reduce's elements or accumulator hold arrays");
    /* the default strategy leaves a refused one to lowering */
    const char *rows = printed_def(apply(def_of("def main(xs: [N][M]i32) = xs |> map(r => r |> reduce(+, 0))"),
                                         st_default_strategy("CPU"), "rows"));
    ck_assert_msg(!strstr(rows, "partials"), "%s", rows);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* On the device (PoCL)                                                     */
/* ------------------------------------------------------------------------ */

/* the GPU's default strategy, which has the rule (run here on PoCL) */
/* none, the chunks, the GPU's default (a look-back's total), a look-back
 * of odd shape (groups of 3 work-items of 5 elements, a window of 2), and
 * the CPU's default (chunks of 16384, the tail beside them at 1000003) */
static const char *device_strategy(int s) {
    return s == 0   ? NULL
           : s == 1 ? RULE_1024
           : s == 2 ? st_default_strategy("GPU")
           : s == 3 ? "try(each(any, try(fuse-map-reduce))) ; each(top reduce, lookback(M=5, WG=3, LW=2))"
                    : st_default_strategy("CPU");
}
enum { NDEVICE = 5 };

START_TEST(the_device_equals_the_interpreter) {
    const rcase *c = &CASES[_i / NDEVICE];
    int s = _i % NDEVICE;
    const char *label = text_of("%s under %s", c->name, s == 0 ? "no strategy" : s == 1 ? "the rule" : device_strategy(s));
    const st_def *orig = def_of(c->src);
    st_code code = generated(lowered(apply(orig, device_strategy(s), label), label), label);
    st_exe *exe = built(&code, label);
    const int64_t sizes[] = {1, 7, 1000, 1000003};
    for (int z = 0; z < 4; z++) {
        if (sizes[z] > 10000 && !st_test_big(s)) continue;
        agrees(exe, orig, text_of("N=%lld", (long long)sizes[z]), 5, label);
    }
    st_exe_free(exe);
}
END_TEST

/* A fold of short rows (32 counters per bit of u32 keys; the maxima of 4
 * columns with a count beside) in chunks of 1024 and of 3, and under the
 * GPU's default (which takes it so, the look-back taking no rows), agrees
 * with the interpreter, and on PoCL with the chunks' rows private */
static const char *const ROW_FOLDS[] = {
    "def main(xs: [N]u32): [32]i64 =\n"
    "  xs |> map(k => iota(32) |> map(d => i64((k >> u32(d)) & 1u32)))\n"
    "     |> reduce((a, b) => zip(a, b) |> map((x, y) => x + y), replicate(32, 0i64))",
    "def main(xss: [N][4]i32) =\n"
    "  xss |> map(r => (r, 1i64))\n"
    "      |> reduce((a, b) => (zip(a.0, b.0) |> map((x, y) => max(x, y)), a.1 + b.1), (replicate(4, -2147483648), 0i64))",
};

START_TEST(short_rows_fold_in_chunks) {
    const char *strategies[] = {"try(each(any, try(fuse-map-reduce))) ; first(reduce, parallel-reduce(BS=1024))",
                                "try(each(any, try(fuse-map-reduce))) ; first(reduce, parallel-reduce(BS=3))",
                                st_default_strategy("GPU")};
    for (size_t p = 0; p < sizeof ROW_FOLDS / sizeof *ROW_FOLDS; p++)
        for (size_t s = 0; s < 3; s++) {
            const char *label = text_of("row fold %zu under %s", p, strategies[s]);
            const st_def *orig = def_of(ROW_FOLDS[p]), *now = apply(orig, strategies[s], label);
            ck_assert_msg(strstr(printed_def(now), "iota(N / "), "%s: not in chunks:\n%s", label, printed_def(now));
            const int64_t sizes[] = {0, 1, 7, 1000, 4099};
            for (int z = 0; z < 5; z++)
                same_in_the_interpreter(orig, now, text_of("N=%lld", (long long)sizes[z]), 11 + (uint64_t)z, label);
        }
}
END_TEST

START_TEST(short_rows_fold_in_chunks_on_the_device) {
    for (size_t p = 0; p < sizeof ROW_FOLDS / sizeof *ROW_FOLDS; p++) {
        const char *label = text_of("row fold %zu under the GPU's default", p);
        const st_def *orig = def_of(ROW_FOLDS[p]);
        st_code code = generated(lowered(apply(orig, st_default_strategy("GPU"), label), label), label);
        ck_assert_msg(!strstr(code.opencl, "_acc["), "%s: a chunk's row in a host buffer:\n%s", label, code.opencl);
        st_exe *exe = built(&code, label);
        const int64_t sizes[] = {1, 7, 1000, 1000003};
        for (int z = 0; z < 4; z++) agrees(exe, orig, text_of("N=%lld", (long long)sizes[z]), 9, label);
        st_exe_free(exe);
    }
}
END_TEST

/* reduce-lanes: float reductions anywhere (a row's inside a map, a top-level
 * one, a fused map's, f64's min) in interleaved lanes, their rows and tail
 * right at row lengths around the lanes' (1, 31, 32, 63, 64, 65, 1000); and
 * what it refuses, at rewrite time, saying why */
static const char *const LANE_FOLDS[] = {
    "def main(xss: [N][M]f32): [N]f32 = xss |> map(row => reduce(+, 0.0, row))",
    "def main(xss: [N][M]f64): [N]f64 = xss |> map(row => reduce(min, f64.inf, row))",
    "def main(xs: [M]f32, ys: [M]f32): f32 = zip(xs, ys) |> map((x, y) => x * y) |> reduce(+, 0.0)",
    "def main(xss: [N][M]f32): [N]f32 = xss |> map(row => row |> map(x => x * 0.5) |> reduce(max, -f32.inf))",
};
#define LANES "try(each(any, try(fuse-map-reduce))) ; each(reduce, reduce-lanes)"

/* A float rewrite that reorders keeps the result within the oracle's
 * bound: now, in the interpreter, against orig's expected value. */
static void close_in_the_interpreter(const st_def *orig, const st_def *now, const char *sets, uint64_t seed,
                                     const char *label) {
    seeded in = seeded_inputs(orig, sets, seed, label);
    st_err err = {0};
    st_expected want;
    st_value got;
    ck_assert_msg(st_eval_expected(cx, orig, in.args, in.env, in.nenv, in.a, &want, &err), "%s, %s: %s", label, sets,
                  err.message);
    ck_assert_msg(st_eval(cx, now, in.args, in.env, in.nenv, in.a, &got, &err), "%s rewritten, %s: %s", label, sets,
                  err.message);
    ck_assert_msg(st_expected_agree(&got, &want, ST_TOLERANCE, &err), "%s, %s: %s\n%s", label, sets, err.message,
                  printed_def(now));
    st_arena_free(in.a);
}

START_TEST(float_folds_in_lanes_keep_their_results) {
    const int64_t ms[] = {1, 31, 32, 63, 64, 65, 1000};
    for (size_t p = 0; p < sizeof LANE_FOLDS / sizeof *LANE_FOLDS; p++) {
        const char *label = text_of("lane fold %zu", p);
        const st_def *orig = def_of(LANE_FOLDS[p]), *now = apply(orig, LANES, label);
        ck_assert_msg(strstr(printed_def(now), "zip(accs") && strstr(printed_def(now), "), replicate("),
                      "%s: not in lanes:\n%s", label, printed_def(now));
        st_code code = generated(lowered(now, label), label);
        st_exe *exe = built(&code, label);
        const char *rows = p == 2 ? "" : "N=7 "; /* (the dot product has no N) */
        for (size_t m = 0; m < sizeof ms / sizeof *ms; m++) {
            const char *sizes = text_of("%sM=%lld", rows, (long long)ms[m]);
            close_in_the_interpreter(orig, now, sizes, 5 + m, label);
            agrees(exe, orig, sizes, 5 + m, label);
        }
        agrees(exe, orig, text_of("%sM=1000003", p == 2 ? "" : "N=3 "), 4, label);
        st_exe_free(exe);
    }
    /* the CPU's default takes a row's sum so, and keeps the result */
    const st_def *rows = def_of(LANE_FOLDS[0]);
    ck_assert_has(printed_def(apply(rows, st_default_strategy("CPU"), "rows")), "iota(32)) |> map((a");
    /* refused: integers, a seed that is not neutral, a short constant length, a tuple */
    const char *const refused[][2] = {
        {"def main(xs: [N]i32): i32 = reduce(+, 0, xs)", "is not + * min max on one float"},
        {"def main(xs: [N][3]f32): [N]f32 = xs |> map(r => reduce(+, 0.0, r))", "is a constant below 64"},
        {"def main(xs: [N]f32): (f32, f32) = zip(xs, xs) |> reduce((a, b) => (a.0 + b.0, a.1 + b.1), (0.0, 0.0))",
         "is not + * min max on one float"},
    };
    for (size_t r = 0; r < sizeof refused / sizeof *refused; r++)
        ck_assert_has(refusal(refused[r][0], "first(reduce, reduce-lanes)").message, refused[r][1]);
}
END_TEST

START_TEST(the_partition_radix_sort_counts_by_lookback) {
    const st_def *orig = example_def("radix_sort_partition");
    const char *label = "radix_sort_partition under the GPU's default strategy";
    const st_def *now = lowered(apply(orig, st_default_strategy("GPU"), label), label);
    ck_assert_has(printed_def(now), "scanTotal(ks |> scanLookback(");
    st_code code = generated(now, label);
    st_exe *exe = built(&code, label);
    const int64_t sizes[] = {1, 7, 1000, 70001};
    for (int z = 0; z < 4; z++) agrees(exe, orig, text_of("N=%lld", (long long)sizes[z]), 3, label);
    st_exe_free(exe);
}
END_TEST

static Suite *reduce_suite(void) {
    Suite *s = suite_create("reduce");
    TCase *rules = tcase_create("rules");
    tcase_set_timeout(rules, 600);
    tcase_add_checked_fixture(rules, rules_setup, rules_teardown);
    tcase_add_loop_test(rules, the_rule_keeps_the_interpreters_result, 0, NCASES * NSTRATEGIES);
    tcase_add_loop_test(rules, rewritten_programs_print_and_parse_back, 0, NCASES);
    tcase_add_test(rules, the_chunks_fold_the_fused_map);
    tcase_add_test(rules, a_chunk_reads_unchecked_in_a_group_of_one_on_a_cpu);
    tcase_add_test(rules, the_radix_sorts_count_is_a_lookback);
    tcase_add_test(rules, what_the_rule_refuses_and_why);
    tcase_add_test(rules, short_rows_fold_in_chunks);
    suite_add_tcase(s, rules);
    TCase *dev = tcase_create("device");
    tcase_set_timeout(dev, 600);
    tcase_add_checked_fixture(dev, rules_setup, pipeline_teardown);
    tcase_add_loop_test(dev, the_device_equals_the_interpreter, 0, NCASES * NDEVICE);
    tcase_add_test(dev, the_partition_radix_sort_counts_by_lookback);
    tcase_add_test(dev, short_rows_fold_in_chunks_on_the_device);
    tcase_add_test(dev, float_folds_in_lanes_keep_their_results);
    suite_add_tcase(s, dev);
    return s;
}

int main(void) { return run_suite(reduce_suite()); }
