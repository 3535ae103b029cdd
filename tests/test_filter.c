/* tests/test_filter.c — lengths known only at run time (issue 22, the IR
 * half): filter, partition, take, drop and concat; their existential sizes
 * (`?k`) typed, printed and read back; their refusals, each at its place;
 * the interpreter against references computed here in C at N = 1, 7, 1000
 * and 1000003, under no strategy and the default one, with predicates
 * keeping all, none, half and a prime-ish pattern; partition's stability;
 * take and drop at their edges and beyond; an LSD radix sort of u32 keys as
 * a loop of partitions, against qsort; and codegen's clean refusal until the
 * rules exist. */
#include "codegen/codegen.h"
#include "rules_fixture.h"
#include "strategies/strategies.h"

static const int64_t sizes[] = {1, 7, 1000, 1000003};
enum { NSIZES = sizeof sizes / sizeof *sizes };

static int32_t in_i32(int64_t j) { return (int32_t)((j * 37 + 11) % 101) - 50; }
static uint32_t in_u32(int64_t j) { return (uint32_t)(j * 2654435761u) ^ 0x9e3779b9u; }

static void *room(int64_t n, size_t elem) {
    void *p = st_arena_alloc(ar, (size_t)(n ? n : 1) * elem);
    ck_assert(p != NULL);
    return p;
}

static st_value i32_input(int64_t n) {
    int32_t *xs = room(n, sizeof *xs);
    for (int64_t j = 0; j < n; j++) xs[j] = in_i32(j);
    return array_of(ST_I32, n, xs, ar);
}

/* The def of src rewritten by the strategy (NULL: itself). */
static const st_def *under(const char *src, const char *strategy) {
    const st_def *d = entry_ok(parse_ok(cx, src));
    if (!strategy) return d;
    st_err err = {0};
    const st_strategy *s = st_strategy_parse(cx, reg, "strategy", strategy, &err);
    ck_assert_msg(s != NULL, "%s", err.message);
    st_rw *rw = st_rw_new(cx, reg);
    const st_def *now = st_rewrite_def(rw, s, d, &err);
    st_rw_free(rw);
    ck_assert_msg(now != NULL, "`%s` does not apply: %s", strategy, err.message);
    return now;
}

static st_value run(const st_def *d, const st_value *args, int64_t n) {
    st_binding env[1] = {{d->sizes[0]->u.name, n}};
    st_value out;
    st_err err = {0};
    ck_assert_msg(st_eval(cx, d, args, env, 1, ar, &out, &err), "eval: %s", err.message);
    return out;
}

static void same_i32(const st_value *v, const int32_t *want, int64_t n, const char *what) {
    ck_assert_msg(v->kind == ST_VALUE_ARRAY && v->scalar == ST_I32, "%s: not an i32 array", what);
    ck_assert_msg(v->u.a.dims[0] == n, "%s: length %lld, expected %lld", what, (long long)v->u.a.dims[0], (long long)n);
    const int32_t *got = v->u.a.data;
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(got[i] == want[i], "%s: element %lld is %d, expected %d", what, (long long)i, got[i], want[i]);
}

static const char *const strategies_[] = {NULL, "default"};

/* ------------------------------------------------------------------------ */
/* filter and partition through the interpreter                             */
/* ------------------------------------------------------------------------ */

typedef struct pred {
    const char *text; /* the predicate as strata writes it */
    bool (*keep)(int32_t x);
} pred;

static bool keep_all(int32_t x) { return x >= -50; }
static bool keep_none(int32_t x) { return x > 100; }
static bool keep_half(int32_t x) { return x % 2 == 0; }
static bool keep_primeish(int32_t x) { return x > 0 && x % 2 != 0 && x % 3 != 0 && x % 5 != 0; }

static const pred preds[] = {
    {"x => x >= -50", keep_all},
    {"x => x > 100", keep_none},
    {"x => x % 2 == 0", keep_half},
    {"x => x > 0 && x % 2 != 0 && x % 3 != 0 && x % 5 != 0", keep_primeish},
};
enum { NPREDS = sizeof preds / sizeof *preds };

START_TEST(filter_and_partition_equal_c) {
    const pred *p = &preds[_i % NPREDS];
    int64_t n = sizes[(_i / NPREDS) % NSIZES];
    const char *strategy = strategies_[_i / (NPREDS * NSIZES)];
    if (n >= 1000003 && !st_test_big(_i / (NPREDS * NSIZES))) return;
    if (strategy) strategy = st_default_strategy("cpu");
    const char *src = text_of("def main(xs: [N]i32) =\n"
                              "  let ys = xs |> filter(%s)\n"
                              "  let (a, b) = xs |> partition(%s)\n"
                              "  in (ys, ys |> map(y => y * 2), ys |> reduce(+, 0), a, b, concat(a, b), zip(ys, a) |> map((u, v) => u - v))\n",
                              p->text, p->text);
    st_value xs = i32_input(n);
    st_value out = run(under(src, strategy), &xs, n);
    const int32_t *x = xs.u.a.data;
    int32_t *kept = room(n, sizeof *kept), *twice = room(n, sizeof *twice), *rest = room(n, sizeof *rest);
    int32_t *both = room(n, sizeof *both), *zero = room(n, sizeof *zero);
    int64_t k = 0, r = 0;
    int32_t sum = 0;
    for (int64_t i = 0; i < n; i++) {
        if (p->keep(x[i])) {
            twice[k] = x[i] * 2;
            zero[k] = 0;
            sum += x[i];
            kept[k++] = x[i];
        } else {
            rest[r++] = x[i];
        }
    }
    memcpy(both, kept, (size_t)k * sizeof *both);
    memcpy(both + k, rest, (size_t)r * sizeof *both);
    ck_assert_uint_eq(out.n, 7);
    same_i32(&out.u.items[0], kept, k, "filter");
    same_i32(&out.u.items[1], twice, k, "map of filter");
    ck_assert_int_eq(out.u.items[2].u.s.i32, sum);
    same_i32(&out.u.items[3], kept, k, "partition's first");
    same_i32(&out.u.items[4], rest, r, "partition's second (stable)");
    same_i32(&out.u.items[5], both, n, "concat of a partition");
    same_i32(&out.u.items[6], zero, k, "zip of filter and partition's first");
}
END_TEST

/* A filtered array flows into scan, exscan, and as indices and values into
 * reduce_by_index and scatter, whose destinations keep their lengths. */
START_TEST(filtered_arrays_flow_into_scans_and_histograms) {
    const char *src = "def main(xs: [N]i32) =\n"
                      "  let ys = xs |> filter(x => x > 0)\n"
                      "  let is = ys |> map(y => i64(y % 10))\n"
                      "  in (ys |> scan(+, 0), ys |> exscan(+, 0), reduce_by_index(replicate(10, 0), +, 0, is, ys),\n"
                      "      scatter(replicate(N, 0), is, ys))\n";
    for (int s = 0; s < NSIZES; s++) {
        int64_t n = sizes[s];
        st_value xs = i32_input(n);
        st_value out = run(under(src, NULL), &xs, n);
        const int32_t *x = xs.u.a.data;
        int32_t *inc = room(n, sizeof *inc), *exc = room(n, sizeof *exc), hist[10] = {0};
        int32_t *dest = room(n, sizeof *dest);
        memset(dest, 0, (size_t)n * sizeof *dest);
        int64_t k = 0;
        int32_t acc = 0;
        for (int64_t i = 0; i < n; i++) {
            if (x[i] <= 0) continue;
            exc[k] = acc;
            acc += x[i];
            inc[k++] = acc;
            hist[x[i] % 10] += x[i];
            if (x[i] % 10 < n) dest[x[i] % 10] = x[i];
        }
        same_i32(&out.u.items[0], inc, k, "scan of filter");
        same_i32(&out.u.items[1], exc, k, "exscan of filter");
        same_i32(&out.u.items[2], hist, 10, "reduce_by_index of filter");
        same_i32(&out.u.items[3], dest, n, "scatter of filter");
    }
}
END_TEST

/* A stable partition of (key, position) pairs by the key's bit keeps each
 * side in the order of positions. */
START_TEST(partition_is_stable) {
    const char *src = "def main(ks: [N]i32) =\n"
                      "  let (a, b) = zip(ks, iota(N)) |> partition((k, i) => k % 3 == 0)\n"
                      "  in (unzip(a).1, unzip(b).1)\n";
    int64_t n = 1000;
    st_value xs = i32_input(n);
    st_value out = run(under(src, NULL), &xs, n);
    for (int j = 0; j < 2; j++) {
        const st_value *pos = &out.u.items[j];
        const int64_t *p = pos->u.a.data;
        for (int64_t i = 1; i < pos->u.a.dims[0]; i++) ck_assert_int_lt(p[i - 1], p[i]);
    }
    ck_assert_int_eq(out.u.items[0].u.a.dims[0] + out.u.items[1].u.a.dims[0], n);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* take and drop                                                            */
/* ------------------------------------------------------------------------ */

START_TEST(take_and_drop_at_their_edges) {
    const char *src = "def main(xs: [N]i32, k: i64) =\n  let t = take(k, xs)\n  in (t, drop(k, xs), concat(t, drop(k, xs)))\n";
    for (int s = 0; s < NSIZES; s++) {
        int64_t n = sizes[s];
        int64_t ks[] = {0, n / 2, n};
        for (int c = 0; c < 3; c++) {
            st_value args[2] = {i32_input(n), st_value_scalar(ST_I64, (st_scalar){.i64 = ks[c]})};
            st_value out = eval_ok(cx, ar, src, args, 2);
            const int32_t *x = args[0].u.a.data;
            same_i32(&out.u.items[0], x, ks[c], "take");
            same_i32(&out.u.items[1], x + ks[c], n - ks[c], "drop");
            same_i32(&out.u.items[2], x, n, "concat(take, drop)");
        }
    }
}
END_TEST

START_TEST(take_beyond_the_length_is_a_run_time_error) {
    const char *src = "def main(xs: [N]i32, k: i64) =\n  take(k, xs)\n";
    const st_def *d = entry_ok(parse_ok(cx, src));
    int64_t bad[] = {-1, 8};
    for (int c = 0; c < 2; c++) {
        st_value args[2] = {i32_input(7), st_value_scalar(ST_I64, (st_scalar){.i64 = bad[c]})};
        st_binding env[2] = {{d->sizes[0]->u.name, 7}, {d->params[1]->u.name, bad[c]}};
        st_value out;
        st_err err = {0};
        ck_assert(!st_eval(cx, d, args, env, 2, ar, &out, &err));
        ck_assert_int_eq(err.loc.line, 2); /* at the take, not at the def */
        ck_assert_int_eq(err.loc.col, 3);
        ck_assert_has(err.message, text_of("k = %lld is outside 0 .. n = 7", (long long)bad[c]));
    }
}
END_TEST

/* Two counts of one name are one variable, so take gives both one ?k: the
 * interpreter finds the lengths disagree and says so rather than reading
 * beyond an array. */
START_TEST(a_shadowed_count_is_refused_when_it_runs) {
    const char *src = "def main(xs: [N]i32) =\n  let k = reduce(+, 0i64, map(x => 1i64, xs))\n  let a = take(k, xs)\n"
                      "  let k = reduce(+, 0i64, map(x => 0i64, xs))\n  let b = take(k, xs)\n  in (map(x => x + 1, a), b)\n";
    const st_def *d = entry_ok(parse_ok(cx, src));
    st_value xs = i32_input(5), out;
    st_binding env[1] = {{d->sizes[0]->u.name, 5}};
    st_err err = {0};
    ck_assert(!st_eval(cx, d, &xs, env, 1, ar, &out, &err));
    ck_assert_has(err.message, "lengths known only at run time disagree (0 and 5)");
}
END_TEST

/* ------------------------------------------------------------------------ */
/* A radix sort as a loop of partitions                                     */
/* ------------------------------------------------------------------------ */

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

START_TEST(radix_sort_by_partitions_equals_qsort) {
    const char *src = "def main(xs: [N]u32): [N]u32 =\n"
                      "  loop ks = xs for i < 32 do\n"
                      "    let (a, b) = ks |> partition(k => ((k >> u32(i)) & 1u32) == 0u32)\n"
                      "    in concat(a, b)\n";
    int64_t ns[] = {1, 7, 1000};
    for (int s = 0; s < 3; s++) {
        int64_t n = ns[s];
        uint32_t *xs = room(n, sizeof *xs), *want = room(n, sizeof *want);
        for (int64_t j = 0; j < n; j++) xs[j] = want[j] = in_u32(j);
        qsort(want, (size_t)n, sizeof *want, cmp_u32);
        st_value arg = array_of(ST_U32, n, xs, ar);
        st_value out = run(under(src, NULL), &arg, n);
        ck_assert_int_eq(out.u.a.dims[0], n);
        ck_assert(memcmp(out.u.a.data, want, (size_t)n * sizeof *want) == 0);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Types, printing, refusals                                                */
/* ------------------------------------------------------------------------ */

/* The result type of src's def, read in a context of its own (the names of
 * existentials are the first free ones there). */
static const char *result_of(const char *src) {
    st_ctx *own = st_ctx_new();
    st_buf b = {0};
    st_type_print(entry_ok(parse_ok(own, src))->result, &b);
    const char *s = text_of("%s", b.data);
    st_buf_free(&b);
    st_ctx_free(own);
    return s;
}

START_TEST(types_are_existential) {
    ck_assert_str_eq(result_of("def main(xs: [N]i32) = filter(x => x > 0, xs)\n"), "[?k]i32");
    ck_assert_str_eq(result_of("def main(xs: [N]i32) = partition(x => x > 0, xs)\n"), "([?k]i32, [N - ?k]i32)");
    ck_assert_str_eq(result_of("def main(xs: [N]i32) = let (a, b) = partition(x => x > 0, xs) in concat(a, b)\n"), "[N]i32");
    ck_assert_str_eq(result_of("def main(xs: [N]i32, k: i64) = concat(take(k, xs), drop(k, xs))\n"), "[N]i32");
    ck_assert_str_eq(result_of("def main(xs: [N]i32) = take(N / 2, xs)\n"), "[N/2]i32");
    /* a count that is no size: take's own existential, drop's complement */
    ck_assert_str_eq(result_of("def main(xs: [N]i32) =\n  let m = reduce(+, 0i64, map(x => i64(x & 1), xs))\n  in (take(m, xs), drop(m, xs))\n"),
                     "([?m]i32, [N - ?m]i32)");
    ck_assert_str_eq(result_of("def main(xs: [N]i32) =\n  take(reduce(+, 0i64, map(x => i64(x & 1), xs)), xs)\n"), "[?k]i32");
    /* filter and partition of one predicate and array have one length */
    ck_assert_str_eq(result_of("def main(xs: [N]i32) = zip(filter(x => x > 0, xs), partition(x => x > 0, xs).0)\n"),
                     "[?k](i32, i32)");
    ck_assert_str_eq(result_of("def main(xs: [N]i32): ([?m]i32, i32) =\n  let ys = filter(x => x > 0, xs)\n  in (ys, reduce(+, 0, ys))\n"),
                     "([?k]i32, i32)");
    /* a declared `?m` that is a whole length stands for any length: a
     * partition declared as the issue writes it (it was refused: "declares
     * its result as ([?k]i32, [?m]i32), but its body has type ([?k]i32,
     * [N - ?k]i32)"), and a length known before the run, as in Futhark */
    ck_assert_str_eq(result_of("def main(xs: [N]i32): ([?k]i32, [?m]i32) = partition(x => x > 0, xs)\n"),
                     "([?k]i32, [N - ?k]i32)");
    ck_assert_str_eq(result_of("def main(xs: [N]i32): [?m]i32 = map(x => x + 1, xs)\n"), "[N]i32");
}
END_TEST

START_TEST(the_bound_and_the_upper_bound) {
    const st_def *d = entry_ok(parse_ok(cx, "def main(xs: [N]i32) = partition(x => x > 0, xs)\n"));
    const st_size *k = d->result->items[0]->size, *rest = d->result->items[1]->size, *n = d->sizes[0]->size;
    ck_assert(st_size_is_exist(k));
    ck_assert(!st_size_is_exist(rest) && st_size_has_exist(rest) && !st_size_has_exist(n));
    ck_assert_ptr_eq(st_size_exist_bound(k), n);
    st_err err = {0};
    ck_assert_ptr_eq(st_size_upper(cx, k, &err), n);
    ck_assert_ptr_eq(st_size_upper(cx, rest, &err), n);
    /* bound, the size evaluates */
    st_binding env[2] = {{d->sizes[0]->u.name, 10}, {st_size_exist_name(k), 3}};
    int64_t v;
    ck_assert(st_size_eval(rest, env, 2, &v, &err));
    ck_assert_int_eq(v, 7);
    ck_assert(!st_size_eval(rest, env, 1, &v, &err));
    /* one existential for one expression, built again */
    const st_def *again = entry_ok(parse_ok(cx, "def main(xs: [N]i32) = partition(x => x > 0, xs)\n"));
    ck_assert_ptr_eq(again->result, d->result);
}
END_TEST

START_TEST(print_parses_back) {
    const char *srcs[] = {
        "def main(xs: [N]i32): [?k]i32 =\n  xs |> filter(x => x > 0)\n",
        "def main(xs: [N]i32): ([?k]i32, [N - ?k]i32) =\n  xs |> partition(x => x % 2 == 0)\n",
        "def main(xs: [N]i32, k: i64): ([k]i32, [N - k]i32, [N]i32) =\n  (take(k, xs), drop(k, xs), concat(take(k, xs), drop(k, xs)))\n",
        "def main(xs: [N]i32): ([?m]i32, [N - ?m]i32) =\n  let m = xs |> map(x => i64(x & 1)) |> reduce(+, 0i64)\n  in (take(m, xs), drop(m, xs))\n",
        /* a filter as the rules rebuild it: the count bound to k, ?k named after it */
        "def main(xs: [N]i32): [?k]i32 =\n  let k = xs |> map(x => i64(x > 0)) |> reduce(+, 0)\n  in take(k, xs)\n",
        "def main(xs: [N]u32): [N]u32 =\n  loop ks = xs for i < 32 do\n    let (a, b) = ks |> partition(k => (k >> u32(i) & 1) == 0)\n    in concat(a, b)\n",
    };
    for (size_t i = 0; i < sizeof srcs / sizeof *srcs; i++) {
        /* in a context of its own, as `strata print` and `strata check` read a file */
        st_buf a = {0}, b = {0}, c = {0};
        st_ctx *one = st_ctx_new(), *other = st_ctx_new();
        st_print_program(parse_ok(one, srcs[i]), &a);
        st_print_program(parse_ok(other, a.data), &b);
        ck_assert_str_eq(a.data, b.data);
        /* and again in the same context: the same IR, so the same names */
        st_print_program(parse_ok(one, a.data), &c);
        ck_assert_str_eq(a.data, c.data);
        st_ctx_free(one);
        st_ctx_free(other);
        st_buf_free(&a);
        st_buf_free(&b);
        st_buf_free(&c);
    }
}
END_TEST

/* How a rewrite rebuilds a filter: `let k = <count> in take(k, res)`, k a
 * variable standing for the filter's own ?k; it prints and keeps its type. */
START_TEST(a_rebuilt_filter_keeps_its_length) {
    const st_def *d = entry_ok(parse_ok(cx, "def main(xs: [N]i32) = filter(x => x > 0, xs)\n"));
    const st_size *k = d->result->size;
    st_err err = {0};
    const st_type *i64 = st_type_scalar(cx, ST_I64);
    const st_node *var = st_var(cx, st_size_exist_name(k), i64, k);
    ck_assert_str_eq(st_size_exist_name(k), "k");
    const st_node *count = st_lit_int(cx, ST_I64, 3);
    const st_node *args[2] = {var, d->params[0]};
    const st_node *take = st_prim_node(cx, ST_PRIM_TAKE, 2, args, &err);
    ck_assert_msg(take != NULL, "%s", err.message);
    ck_assert_ptr_eq(take->type, d->result);
    const st_node *let = st_let(cx, 1, &var, count, take, &err);
    ck_assert_msg(let != NULL, "%s", err.message);
    ck_assert_ptr_eq(let->type, d->result);
    st_buf b = {0};
    st_print_node(let, &b);
    ck_assert_str_eq(b.data, "let k = 3i64\nin take(k, xs)");
    st_buf_free(&b);
}
END_TEST

START_TEST(refusals_are_located) {
    ck_assert_error(cx, "def main(xs: [N]i32) =\n  xs |> map(x => reduce(+, 0, filter(y => y > x, xs)))\n", 2, 31,
                    "filter makes a length known only at run time");
    ck_assert_error(cx, "def main(xs: [N]i32) =\n  xs |> map(x => take(1, xs))\n", 2, 18, "not inside a lambda");
    ck_assert_error(cx, "def main(xs: [N]i32) =\n  let a = filter(x => x > 0, xs)\n  let b = filter(x => x < 0, xs)\n  in zip(a, b)\n",
                    4, 13, "zip needs arrays of one length, but [?k]i32 and [?k_1]i32 differ in length");
    ck_assert_error(cx, "def main(xs: [N]i32) =\n  let a = filter(x => x > 0, xs)\n  in zip(a, xs)\n", 3, 13,
                    "[?k]i32 and [N]i32 differ in length");
    ck_assert_error(cx, "def main(xs: [N]i32) =\n  take(1.5, xs)\n", 2, 8, "take's count must be an i64, but it has type f32");
    ck_assert_error(cx, "def main(xs: [N]i32): [N]i32 =\n  filter(x => x > 0, xs)\n", 1, 23,
                    "declares its result as [N]i32, but its body has type [?k]i32");
    ck_assert_error(cx, "def main(xs: [?k]i32) =\n  xs\n", 1, 15, "may be written only in a def's declared result");
    /* one `?m` is one length */
    ck_assert_error(cx, "def main(xs: [N]i32): ([?m]i32, [?m]i32) =\n  partition(x => x > 0, xs)\n", 1, 23,
                    "but its body has type ([?k]i32, [N - ?k]i32)");
    ck_assert_error(cx, "def main(xs: [N]i32) =\n  filter(x => x + 1, xs)\n", 2, 10, "predicate must return bool");
    /* in a loop whose body is inside a map, not at the top (a scalar loop at the top takes one) */
    ck_assert_error(cx, "def main(xs: [N]i32) =\n  xs |> map(y => loop s = 0 for i < 3 do s + reduce(+, 0, filter(x => x > y, xs)))\n",
                    2, 59, "not inside a lambda");
    ck_assert_error(cx, "def main(xs: [N]i32, ys: [N]f32) =\n  concat(xs, ys)\n", 2, 14, "concat needs arrays of one element type");
    ck_assert_error(cx, "def main(xs: [N]i32) =\n  loop ys = xs for i < 3 do filter(x => x > 0, ys)\n", 2, 29,
                    "a loop's accumulator keeps its type");
}
END_TEST

/* The default strategy leaves codegen a program it takes: the filter's
 * rule and the cut's code (the filter-rules and filter-run suites run it). */
START_TEST(codegen_takes_a_filter_under_the_default) {
    const st_def *d = under("def main(xs: [N]i32) =\n  xs |> filter(x => x > 0)\n", st_default_strategy("cpu"));
    st_code code;
    st_err err = {0};
    ck_assert_msg(st_codegen(cx, d, ar, &code, &err), "%d:%d: %s", err.loc.line, err.loc.col, err.message);
}
END_TEST

static Suite *filter_suite(void) {
    Suite *s = suite_create("filter");
    TCase *tc = tcase_create("filter");
    tcase_add_checked_fixture(tc, rules_setup, rules_teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, filter_and_partition_equal_c, 0, NPREDS * NSIZES * 2);
    tcase_add_test(tc, filtered_arrays_flow_into_scans_and_histograms);
    tcase_add_test(tc, partition_is_stable);
    tcase_add_test(tc, take_and_drop_at_their_edges);
    tcase_add_test(tc, take_beyond_the_length_is_a_run_time_error);
    tcase_add_test(tc, a_shadowed_count_is_refused_when_it_runs);
    tcase_add_test(tc, radix_sort_by_partitions_equals_qsort);
    tcase_add_test(tc, types_are_existential);
    tcase_add_test(tc, the_bound_and_the_upper_bound);
    tcase_add_test(tc, print_parses_back);
    tcase_add_test(tc, a_rebuilt_filter_keeps_its_length);
    tcase_add_test(tc, refusals_are_located);
    tcase_add_test(tc, codegen_takes_a_filter_under_the_default);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(filter_suite()); }
