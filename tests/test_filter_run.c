/* tests/test_filter_run.c — lengths known only at run time on the device:
 * take(k, xs): [?k]t, drop(k, xs): [n - ?k]t and concat(xs, ys), written by
 * hand as the filter and partition rules write them.
 *
 * The count k is computed on the device (how many elements lie below a
 * threshold c: xs is a permutation of 0..N-1, so k is c), read back by the
 * glue and checked there. Each program runs on the default device (PoCL on
 * CI) against references computed here in C, and against the interpreter,
 * at N = 1, 7, 1000 and 1000003 with k = 0, 1, N, N/2 and a prime: map,
 * scan (the look-back of the default strategy over [?k]), reduce and
 * reduce_by_index over a prefix, concat, outputs of run-time length (their
 * lengths too), a top-level loop that takes a prefix each turn, and the
 * form the filter rule makes (take(k, scatter(…))); under no strategy, the
 * defaults and each rule that applies. Around it: cuts of cuts, a count
 * outside 0..N is the glue's error with a sentence, the CLI prints and
 * writes results of their actual length and counts their bytes, the
 * exported host.c states the contract of the lengths' output, and filter
 * is still refused by codegen, at the def. Then filters and partitions
 * whose input has a length known only at run time, rewritten by their
 * rules. */
#include "pipeline_fixture.h"
#include "run_strata.h"

/* ------------------------------------------------------------------------ */
/* Programs and their references in C                                       */
/* ------------------------------------------------------------------------ */

#define COUNT_BELOW_C "  let k = xs |> map(x => if x < c then 1i64 else 0i64) |> reduce(+, 0i64)\n"

typedef enum prog { CUTS, LOOP, FILTER, NPROGS } prog;

static const char *const PROGRAMS[NPROGS] = {
    /* every consumer over a prefix and a suffix, and both joined again */
    [CUTS] = "def main(xs: [N]i32, c: i32) =\n" COUNT_BELOW_C
             "  let ys = take(k, xs)\n"
             "  in (ys |> map(y => y * 2), drop(k, xs) |> scan(+, 0), concat(ys, xs), ys |> reduce(+, 0),\n"
             "      reduce_by_index(replicate(16, 0), +, 0, ys |> map(y => i64(y & 15)), ys))\n",
    /* each turn, what lies below c moves to the end, one larger */
    [LOOP] = "def main(xs: [N]i32, c: i32) =\n"
             "  loop acc = xs for i < 3 do\n"
             "    let k = acc |> map(x => if x < c then 1i64 else 0i64) |> reduce(+, 0i64)\n"
             "    in concat(drop(k, acc), take(k, acc) |> map(y => y + 1))\n",
    /* what the filter rule makes of filter(x => x < c, xs) */
    [FILTER] = "def main(xs: [N]i32, c: i32) =\n"
               "  let flags = xs |> map(x => if x < c then 1i64 else 0i64)\n"
               "  let offsets = flags |> scan(+, 0i64)\n"
               "  let k = flags |> reduce(+, 0i64)\n"
               "  let idx = zip(xs, offsets) |> map((x, o) => if x < c then o - 1 else -1)\n"
               "  in take(k, scatter(replicate(N, 0), idx, xs))\n",
};
static const char *const PROG_NAMES[NPROGS] = {"take, drop and concat", "a loop taking a prefix",
                                               "a filter by hand"};
enum { NOUTS = 5 };

static uint64_t next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A permutation of 0..n-1 whose first elements are those below c (so
 * take(k, xs) keeps exactly them, as a filter's buffer would), each part
 * shuffled. */
static int32_t *permutation(int64_t n, int64_t c, uint64_t seed) {
    int32_t *v = st_arena_alloc(ar, (size_t)(n ? n : 1) * sizeof *v);
    ck_assert(v != NULL);
    for (int64_t i = 0; i < n; i++) v[i] = (int32_t)i;
    uint64_t s = seed * 2654435761u + 7;
    for (int64_t i = c - 1; i > 0; i--) {
        int64_t j = (int64_t)(next(&s) % (uint64_t)(i + 1));
        int32_t t = v[i];
        v[i] = v[j], v[j] = t;
    }
    for (int64_t i = n - 1; i > c; i--) {
        int64_t j = c + (int64_t)(next(&s) % (uint64_t)(i - c + 1));
        int32_t t = v[i];
        v[i] = v[j], v[j] = t;
    }
    return v;
}

/* What C says: each output's elements and its length. */
typedef struct want {
    int nouts;
    int64_t len[NOUTS];
    const int32_t *data[NOUTS];
    bool scalar[NOUTS];
} want;

static int32_t *cells(int64_t n) {
    int32_t *v = st_arena_alloc(ar, (size_t)(n ? n : 1) * sizeof *v);
    ck_assert(v != NULL);
    return v;
}

static want reference(prog p, const int32_t *xs, int64_t n, int32_t c) {
    want w = {0};
    if (p == CUTS) {
        int64_t k = 0;
        for (int64_t i = 0; i < n; i++) k += xs[i] < c;
        int32_t *doubled = cells(k), *sums = cells(n - k), *joined = cells(k + n), *total = cells(1), *hist = cells(16);
        uint32_t acc = 0, sum = 0;
        for (int64_t i = 0; i < k; i++) doubled[i] = xs[i] * 2, joined[i] = xs[i], sum += (uint32_t)xs[i];
        for (int64_t i = 0; i < n - k; i++) acc += (uint32_t)xs[k + i], sums[i] = (int32_t)acc;
        for (int64_t i = 0; i < n; i++) joined[k + i] = xs[i];
        for (int b = 0; b < 16; b++) hist[b] = 0;
        for (int64_t i = 0; i < k; i++) hist[xs[i] & 15] = (int32_t)((uint32_t)hist[xs[i] & 15] + (uint32_t)xs[i]); /* wraps */
        total[0] = (int32_t)sum;
        w.nouts = 5;
        const int64_t lens[] = {k, n - k, k + n, 1, 16};
        const int32_t *data[] = {doubled, sums, joined, total, hist};
        for (int o = 0; o < 5; o++) w.len[o] = lens[o], w.data[o] = data[o], w.scalar[o] = o == 3;
        return w;
    }
    if (p == FILTER) {
        int32_t *kept = cells(n);
        int64_t k = 0;
        for (int64_t i = 0; i < n; i++)
            if (xs[i] < c) kept[k++] = xs[i];
        w.nouts = 1;
        w.len[0] = k;
        w.data[0] = kept;
        return w;
    }
    int32_t *acc = cells(n), *nxt = cells(n);
    memcpy(acc, xs, (size_t)n * sizeof *acc);
    for (int turn = 0; turn < 3; turn++) {
        int64_t k = 0;
        for (int64_t i = 0; i < n; i++) k += acc[i] < c;
        /* what the program says: drop(k) then take(k) + 1, whatever the order of acc */
        for (int64_t i = 0; i < n - k; i++) nxt[i] = acc[k + i];
        for (int64_t i = 0; i < k; i++) nxt[n - k + i] = acc[i] + 1;
        int32_t *t = acc;
        acc = nxt, nxt = t;
    }
    w.nouts = 1;
    w.len[0] = n;
    w.data[0] = acc;
    return w;
}

static void same_as_c(const st_value *got, const want *w, const char *label) {
    for (int o = 0; o < w->nouts; o++) {
        const st_value *v = w->nouts > 1 ? &got->u.items[o] : got;
        if (w->scalar[o]) {
            ck_assert_msg(v->kind == ST_VALUE_SCALAR && v->u.s.i32 == w->data[o][0], "%s: output %d is %d, C says %d",
                          label, o, v->u.s.i32, w->data[o][0]);
            continue;
        }
        ck_assert_msg(v->kind == ST_VALUE_ARRAY && v->scalar == ST_I32, "%s: output %d is not an i32 array", label, o);
        ck_assert_msg(v->u.a.dims[0] == w->len[o], "%s: output %d has %lld elements, C says %lld", label, o,
                      (long long)v->u.a.dims[0], (long long)w->len[o]);
        const int32_t *g = v->u.a.data;
        for (int64_t i = 0; i < w->len[o]; i++)
            ck_assert_msg(g[i] == w->data[o][i], "%s: output %d, element %lld of %lld: %d, C says %d", label, o,
                          (long long)i, (long long)w->len[o], g[i], w->data[o][i]);
    }
}

static const int64_t SIZES[] = {1, 7, 1000, 1000003};
enum { NSIZES = sizeof SIZES / sizeof *SIZES };

/* The counts tried at length n: none, one, all, half and a prime below n. */
static int counts_at(int64_t n, int64_t *out) {
    int64_t prime = n >= 1000003 ? 999983 : n >= 1000 ? 997 : n >= 7 ? 5 : 0;
    const int64_t all[] = {0, 1, n, n / 2, prime};
    int m = 0;
    for (int i = 0; i < 5; i++) {
        bool seen = false;
        for (int j = 0; j < m; j++) seen |= out[j] == all[i];
        if (!seen && all[i] <= n) out[m++] = all[i];
    }
    return m;
}

/* ------------------------------------------------------------------------ */
/* The interpreter                                                          */
/* ------------------------------------------------------------------------ */

static st_value args_of(const int32_t *xs, int64_t n, int32_t c, st_value *args) {
    args[0] = array_of(ST_I32, n, (void *)xs, ar);
    args[1] = scalar_of(ST_I32, (st_scalar){.i32 = c});
    return args[0];
}

static st_binding size_n(int64_t n) { return (st_binding){st_intern_cstr(cx, "N"), n}; }

START_TEST(interpreter_agrees_with_c) {
    for (prog p = CUTS; p < NPROGS; p++) {
        const st_def *d = def_of(PROGRAMS[p]);
        const int64_t lengths[] = {0, 1, 7, 1000};
        for (size_t l = 0; l < sizeof lengths / sizeof *lengths; l++) {
            int64_t n = lengths[l], counts[5];
            for (int ci = 0, nc = counts_at(n, counts); ci < nc; ci++) {
                /* a filter keeps what lies below c wherever it is */
                const int32_t *xs = permutation(n, p == FILTER ? 0 : counts[ci], 3 + (uint64_t)n);
                st_value args[2], got;
                args_of(xs, n, (int32_t)counts[ci], args);
                st_binding env = size_n(n);
                st_err err = {0};
                const char *label = text_of("the interpreter, %s, N = %lld, k = %lld", PROG_NAMES[p], (long long)n,
                                            (long long)counts[ci]);
                ck_assert_msg(st_eval(cx, d, args, &env, 1, ar, &got, &err), "%s: %s", label, err.message);
                want w = reference(p, xs, n, (int32_t)counts[ci]);
                same_as_c(&got, &w, label);
            }
        }
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The device                                                               */
/* ------------------------------------------------------------------------ */

static const char *const STRATEGIES[] = {
    NULL,
    "DEFAULT-CPU",
    "DEFAULT-GPU",
    "try(each(any, try(fuse-map-reduce)))",
    "try(each(scan, try(lookback(M=12, WG=256, LW=32))))",
    "try(each(scan, try(lookback(M=16384, WG=1, LOAD=direct))))",
    "try(each(scan, try(parallel-scan(BS=256, BF=2, SE=4))))",
    "try(each(scan, try(sequential-scan)))",
    "try(each(reduce_by_index, try(subhistogram)))",
};
enum { NSTRATEGIES = sizeof STRATEGIES / sizeof *STRATEGIES };

static const char *strategy_text(const char *s) {
    if (s && !strcmp(s, "DEFAULT-CPU")) return st_default_strategy("CPU");
    if (s && !strcmp(s, "DEFAULT-GPU")) return st_default_strategy("GPU");
    return s;
}

/* d rewritten by strategy, lowered, built; run at every size and count
 * against C, and against the interpreter up to 1000 elements. */
static void runs_everywhere(prog p, const char *strategy, bool big) {
    const st_def *d = def_of(PROGRAMS[p]);
    const char *label = text_of("%s, %s", PROG_NAMES[p], strategy ? strategy : "no strategy");
    st_code code = generated(lowered(apply(d, strategy, label), label), label);
    ck_assert_msg(code.nlengths == (p == LOOP ? 0u : 1u), "%s: %u lengths reported", label, code.nlengths);
    st_exe *exe = built(&code, label);
    for (int s = 0; s < NSIZES; s++) {
        int64_t n = SIZES[s], counts[5];
        if (n >= 1000003 && !big) continue;
        for (int ci = 0, nc = counts_at(n, counts); ci < nc; ci++) {
            /* under the sanitizers (st_test_big(1) false) the prime above
             * 10^6 keeps half alone: each count took 10 s of CI's limit
             * there, and the plain build runs them all */
            if (n >= 1000003 && counts[ci] != n / 2 && !st_test_big(1)) continue;
            st_arena_mark mark = st_arena_get_mark(ar);
            int32_t c = (int32_t)counts[ci];
            const int32_t *xs = permutation(n, p == FILTER ? 0 : c, 5 + (uint64_t)s);
            st_value args[2], got, ref;
            args_of(xs, n, c, args);
            st_binding env = size_n(n);
            st_err err = {0};
            const char *at = text_of("%s, N = %lld, k = %d", label, (long long)n, c);
            st_launch *l = st_launch_new(exe, args, &env, 1, &err);
            ck_assert_msg(l != NULL, "%s: %s", at, err.message);
            ck_assert_msg(st_launch_run(l, NULL, &err), "%s: %s", at, err.message);
            ck_assert_msg(st_launch_read(l, ar, &got, &err), "%s: %s", at, err.message);
            want w = reference(p, xs, n, c);
            same_as_c(&got, &w, at);
            /* the bytes moved: the input, and what each output holds, not its worst case */
            uint64_t bytes = (uint64_t)n * 4;
            for (int o = 0; o < w.nouts; o++) bytes += (uint64_t)w.len[o] * 4;
            ck_assert_msg(st_launch_bytes(l) == bytes, "%s: %llu bytes counted, %llu moved", at,
                          (unsigned long long)st_launch_bytes(l), (unsigned long long)bytes);
            if (n <= 1000) {
                ck_assert_msg(st_eval(cx, d, args, &env, 1, ar, &ref, &err), "%s: %s", at, err.message);
                ck_assert_msg(st_value_agree(&got, &ref, 0, &err), "%s: the interpreter disagrees: %s", at, err.message);
            }
            st_launch_free(l);
            st_arena_release(ar, mark);
        }
    }
    st_exe_free(exe);
}

/* Every strategy at 1, 7 and 1000; the prime above 10^6 under no strategy
 * and the CPU's default (which this device runs by), and under every other
 * strategy with STRATA_TESTS_ALL=1: the others take minutes on PoCL at that
 * length, and CI stays under its limit. */
START_TEST(every_rule_on_the_device) {
    const char *strategy = strategy_text(STRATEGIES[_i]);
    bool big = st_test_big(_i) && (_i < 2 || st_tests_all());
    for (prog p = CUTS; p < NPROGS; p++) runs_everywhere(p, strategy, big);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Filters of arrays of run-time length                                     */
/* ------------------------------------------------------------------------ */

/* Each program keeps what lies below c, and of it what d divides, in some
 * shape whose inner result has a length known only at run time; the rules
 * rewrite the outer filter or partition over it (a buffer of the worst
 * case, the scan and scatter over the actual length). */
typedef enum cut_prog { FILTER_FILTER, FILTER_TAKE, PARTITION_FILTER, PARTITION_DROP, FILTER_CONCAT, LOOP_FILTER, NCUT_PROGS } cut_prog;

static const char *const CUT_PROGRAMS[NCUT_PROGS] = {
    [FILTER_FILTER] = "def main(xs: [N]i32, c: i32, d: i32) =\n"
                      "  filter(x => x % d == 0, filter(x => x < c, xs))\n",
    [FILTER_TAKE] = "def main(xs: [N]i32, c: i32, d: i32) =\n" COUNT_BELOW_C
                    "  in filter(x => x % d == 0, take(k, xs))\n",
    [PARTITION_FILTER] = "def main(xs: [N]i32, c: i32, d: i32) =\n"
                         "  partition(x => x % d == 0, filter(x => x < c, xs))\n",
    [PARTITION_DROP] = "def main(xs: [N]i32, c: i32, d: i32) =\n" COUNT_BELOW_C
                       "  in partition(x => x % d == 0, drop(k, xs))\n",
    [FILTER_CONCAT] = "def main(xs: [N]i32, c: i32, d: i32) =\n"
                      "  filter(x => x % d == 0, concat(filter(x => x < c, xs), xs))\n",
    [LOOP_FILTER] = "def main(xs: [N]i32, c: i32, d: i32) =\n"
                    "  loop acc = xs for i < 2 do\n"
                    "    let s = filter(x => x < c, acc) |> filter(x => x % d == 0) |> reduce(+, 0)\n"
                    "    in acc |> map(x => x + s)\n",
};
static const char *const CUT_NAMES[NCUT_PROGS] = {"filter of a filter", "filter of a take", "partition of a filter",
                                                  "partition of a drop", "filter of a concat", "filters in a loop"};

/* xs's elements below c, then of those the ones d divides (into kept) and
 * the others (into rest); their counts */
static void split_below(const int32_t *xs, int64_t n, int32_t c, int32_t d, int32_t *kept, int64_t *nk, int32_t *rest,
                        int64_t *nr) {
    *nk = *nr = 0;
    for (int64_t i = 0; i < n; i++)
        if (xs[i] < c) {
            if (xs[i] % d == 0) kept[(*nk)++] = xs[i];
            else if (rest) rest[(*nr)++] = xs[i];
        }
}

static want cut_reference(cut_prog p, const int32_t *xs, int64_t n, int32_t c, int32_t d) {
    want w = {.nouts = 1};
    int32_t *kept = cells(2 * n), *rest = cells(n);
    int64_t nk, nr;
    switch (p) {
    case FILTER_FILTER:
    case FILTER_TAKE: /* xs's first k are those below c */
        split_below(xs, n, c, d, kept, &nk, NULL, &nr);
        break;
    case PARTITION_FILTER:
        split_below(xs, n, c, d, kept, &nk, rest, &nr);
        w.nouts = 2, w.len[1] = nr, w.data[1] = rest;
        break;
    case PARTITION_DROP: /* xs's first k are those below c, and dropped */
        split_below(xs + c, n - c, INT32_MAX, d, kept, &nk, rest, &nr);
        w.nouts = 2, w.len[1] = nr, w.data[1] = rest;
        break;
    case FILTER_CONCAT: {
        int32_t *joined = cells(2 * n);
        int64_t m = 0;
        for (int64_t i = 0; i < n; i++)
            if (xs[i] < c) joined[m++] = xs[i];
        memcpy(joined + m, xs, (size_t)n * sizeof *xs);
        split_below(joined, m + n, INT32_MAX, d, kept, &nk, NULL, &nr); /* n < 2^31: all below */
        break;
    }
    default: {
        memcpy(kept, xs, (size_t)n * sizeof *xs);
        for (int turn = 0; turn < 2; turn++) {
            uint32_t s = 0;
            for (int64_t i = 0; i < n; i++)
                if (kept[i] < c && kept[i] % d == 0) s += (uint32_t)kept[i];
            for (int64_t i = 0; i < n; i++) kept[i] = (int32_t)((uint32_t)kept[i] + s);
        }
        nk = n;
    }
    }
    w.len[0] = nk, w.data[0] = kept;
    return w;
}

static const char *const CUT_STRATEGIES[] = {NULL, "DEFAULT-CPU", "try(each(scan, try(lookback(M=16384, WG=1, LOAD=direct))))"};

/* Each shape under no strategy, the default and the look-back, at lengths
 * 0, 1, 7, 1000 (and 1000003 once per shape, under the default), with
 * none, all, half and a third kept: against C, and the interpreter up to
 * 1000. */
START_TEST(filters_of_run_time_lengths_on_the_device) {
    const char *strategy = strategy_text(CUT_STRATEGIES[_i]);
    const int64_t lengths[] = {0, 1, 7, 1000, 1000003};
    for (cut_prog p = FILTER_FILTER; p < NCUT_PROGS; p++) {
        const st_def *d = def_of(CUT_PROGRAMS[p]);
        const char *label = text_of("%s, %s", CUT_NAMES[p], strategy ? strategy : "no strategy");
        st_code code = generated(lowered(apply(d, strategy, label), label), label);
        st_exe *exe = built(&code, label);
        for (size_t li = 0; li < sizeof lengths / sizeof *lengths; li++) {
            int64_t n = lengths[li];
            bool big = n > 1000;
            /* the prime above 10^6 under the default strategy alone: the
             * others run it slowly on PoCL, and the small lengths test them */
            if (big && (_i != 1 || !st_test_big(0))) continue;
            /* (c, d): none kept, all kept, half below c and every other, all below c and a third */
            const int32_t cases[][2] = {{0, 2}, {(int32_t)n, 1}, {(int32_t)(n / 2), 2}, {(int32_t)n, 3}};
            for (size_t ci = big ? 2 : 0; ci < (big ? 3 : sizeof cases / sizeof *cases); ci++) {
                st_arena_mark mark = st_arena_get_mark(ar);
                int32_t c = cases[ci][0], dv = cases[ci][1];
                const int32_t *xs = permutation(n, c, 11 + (uint64_t)n);
                st_value args[3], got, ref;
                args_of(xs, n, c, args);
                args[2] = scalar_of(ST_I32, (st_scalar){.i32 = dv});
                st_binding env = size_n(n);
                st_err err = {0};
                const char *at = text_of("%s, N = %lld, c = %d, d = %d", label, (long long)n, c, dv);
                st_launch *l = st_launch_new(exe, args, &env, 1, &err);
                ck_assert_msg(l != NULL, "%s: %s", at, err.message);
                ck_assert_msg(st_launch_run(l, NULL, &err), "%s: %s", at, err.message);
                ck_assert_msg(st_launch_read(l, ar, &got, &err), "%s: %s", at, err.message);
                want w = cut_reference(p, xs, n, c, dv);
                same_as_c(&got, &w, at);
                if (n <= 1000) {
                    ck_assert_msg(st_eval(cx, d, args, &env, 1, ar, &ref, &err), "%s: %s", at, err.message);
                    ck_assert_msg(st_value_agree(&got, &ref, 0, &err), "%s: the interpreter disagrees: %s", at, err.message);
                }
                st_launch_free(l);
                st_arena_release(ar, mark);
            }
        }
        st_exe_free(exe);
    }
}
END_TEST

/* The look-back of the default strategy runs over the suffix's length, and
 * sums one. */
START_TEST(the_default_scans_by_lookback) {
    const st_def *now = apply(def_of(PROGRAMS[CUTS]), st_default_strategy("CPU"), "default");
    const char *text = printed_def(now);
    ck_assert_msg(strstr(text, "scanLookback") != NULL, "no look-back:\n%s", text);
    st_code code = generated(lowered(now, "default"), "default");
    ck_assert_has(code.opencl, "long ex_0"); /* the kernels take the count */
    ck_assert_has(code.host, "long ex_0 = 0;");
    /* the sum of a filter's survivors, which parallel-reduce refuses (its
     * length is known only at run time), is a look-back's total rather
     * than one work-item's fold */
    const char *sum = printed_def(lowered(apply(def_of(CUT_PROGRAMS[LOOP_FILTER]), st_default_strategy("CPU"), "default"), "default"));
    ck_assert_msg(!strstr(sum, "reduceSeq"), "a fold in one work-item:\n%s", sum);
    ck_assert_has(sum, "scanTotal(");
}
END_TEST

/* A compaction's fused pass (a count of p, each kept element scattered to
 * its count's place, the others nowhere or, a partition, after the kept
 * ones or before them; the places written as an if or as arithmetic; the
 * elements one array or several zipped) stores by compress-stores where the
 * device's compiler has AVX-512 (ST_COMPRESS); a near miss keeps the scalar
 * loop. Both agree with the interpreter at lengths of whole blocks, of a
 * tail, and tiny ones. A scatter is such a pass where its places are known
 * distinct: a filter's and a partition's (scatterDistinct, which their rules
 * make), and the hand-written ones below written so (the interpreter checks
 * that they are); a user's scatter claims its places first. */
/* a radix sort's split by bit 3 of xs, up to the place of (i, k), o the set
 * ones up to it */
#define SPLIT_BY_BIT_3                                                                        \
    "  let zeros = xs |> map(k => i64(1u32 - ((k >> 3u32) & 1u32))) |> reduce(+, 0i64)\n"      \
    "  let ones = zip(iota(N), xs) |> map((i, k) => i64((k >> 3u32) & 1u32)) |> scan(+, 0i64)\n" \
    "  let places = zip(zip(iota(N), xs), ones) |> map((ik, o) =>\n"                           \
    "    let (i, k) = ik\n"                                                                     \
    "    let set = i64((k >> 3u32) & 1u32)\n"

START_TEST(compactions_store_compressed) {
    static const struct {
        const char *src;
        bool compressed;
    } cases[] = {
        {"def main(xs: [N]i32): [?k]i32 = filter(x => x > 0, xs)", true},
        {"def main(xs: [N]f32): [?k]f32 = filter(x => x < 0.25, xs)", true},
        {"def main(xs: [N]u32): [N]u32 =\n"
         "  let flags = xs |> map(x => if x % 3u32 == 0u32 then 1i64 else 0)\n"
         "  let offsets = flags |> scan(+, 0)\n"
         "  let idx = zip(xs, offsets) |> map((x, o) => if x % 3u32 == 0u32 then o - 1 else -1)\n"
         "  in scatterDistinct(replicate(N, 7u32), idx, xs)",
         true},
        /* partitions: the others after the kept, each side in its order */
        {"def main(xs: [N]i32): ([?k]i32, [N - ?k]i32) = xs |> partition(x => x % 3 == 0)", true},
        {"def main(xs: [N]f32): ([?k]f32, [N - ?k]f32) = xs |> partition(x => x < 0.75)", true},
        {"def main(xs: [N]u32): [N]u32 =\n"
         "  let (clear, set) = xs |> partition(x => ((x >> 3u32) & 1u32) == 0u32)\n"
         "  in concat(clear, set)",
         true},
        /* a radix sort's split, the places arithmetic: the set bits
         * counted, and sent after the clear ones (zeros of them) */
        {"def main(xs: [N]u32): [N]u32 =\n"
         SPLIT_BY_BIT_3
         "    in (i - o) + set * (zeros + o - 1 - (i - o)))\n"
         "  in scatterDistinct(scratch(N, 0u32), places, xs)",
         true},
        /* the same split by an if, the index first */
        {"def main(xs: [N]i32): [N]i32 =\n"
         "  let zeros = xs |> map(k => if k % 2 == 0 then 1i64 else 0) |> reduce(+, 0i64)\n"
         "  let odd = xs |> map(k => if k % 2 == 0 then 0i64 else 1) |> scan(+, 0i64)\n"
         "  let places = zip(zip(iota(N), xs), odd) |> map((ik, o) =>\n"
         "    let (i, k) = ik in if k % 2 == 0 then i - o else o - 1 + zeros)\n"
         "  in scatterDistinct(scratch(N, 0), places, xs)",
         true},
        /* key-value: the pairs moved, each array by its own compress-stores */
        {"def main(xs: [N]u32, ys: [N]i32): ([N]u32, [N]i32) =\n"
         SPLIT_BY_BIT_3
         "    in (i - o) + set * (zeros + o - 1 - (i - o)))\n"
         "  in scatterDistinct(scratch(N, (0u32, 0)), places, zip(xs, ys)) |> unzip",
         true},
        {"def main(ks: [N]u32, vs: [N]f32) =\n"
         "  let (a, b) = zip(ks, vs) |> partition((k, v) => k % 3u32 == 0u32)\n"
         "  in concat(a, b) |> unzip",
         true},
        /* the classic idiom by hand: flags, their exscan as each kept
         * element's offset, and the count (exscan-as-inclusive) */
        {"def main(xs: [N]i32) =\n"
         "  let flags = xs |> map(x => if x > 0 then 1i64 else 0)\n"
         "  let offsets = flags |> exscan(+, 0)\n"
         "  let count = flags |> reduce(+, 0)\n"
         "  let idx = zip(flags, offsets) |> map((f, o) => if f == 1 then o else -1)\n"
         "  in (scatterDistinct(replicate(N, 0), idx, xs), count)",
         true},
        /* the same, the exscan of the map written inline, the values a pair */
        {"def main(ks: [N]u32, vs: [N]f32): ([N]u32, [N]f32) =\n"
         "  let offsets = ks |> map(k => if k % 5u32 < 2u32 then 1i64 else 0) |> exscan(+, 0)\n"
         "  let idx = zip(ks, offsets) |> map((k, o) => if k % 5u32 < 2u32 then o else -1)\n"
         "  in scatterDistinct(replicate(N, (0u32, 0.0)), idx, zip(ks, vs)) |> unzip",
         true},
        /* the clear ones reversed: a permutation, not a compaction */
        {"def main(xs: [N]u32): [N]u32 =\n"
         SPLIT_BY_BIT_3
         "    in (zeros - 1 - (i - o)) + set * (zeros + o - 1 - (zeros - 1 - (i - o))))\n"
         "  in scatterDistinct(scratch(N, 0u32), places, xs)",
         false},
        /* counted and placed by two predicates: not a compaction */
        {"def main(xs: [N]i32): [N]i32 =\n"
         "  let flags = xs |> map(x => if x > 0 then 1i64 else 0)\n"
         "  let offsets = flags |> scan(+, 0)\n"
         "  let idx = zip(xs, offsets) |> map((x, o) => if x > 1 then o - 1 else -1)\n"
         "  in scatterDistinct(replicate(N, 0), idx, xs)",
         false},
        /* a compaction's or a split's places by a user's scatter: distinct,
         * but nothing says so, so it claims its places first and writes
         * where it won (cg_winners.c), one element at a time */
        {"def main(xs: [N]u32): [N]u32 =\n"
         "  let flags = xs |> map(x => if x % 3u32 == 0u32 then 1i64 else 0)\n"
         "  let offsets = flags |> scan(+, 0)\n"
         "  let idx = zip(xs, offsets) |> map((x, o) => if x % 3u32 == 0u32 then o - 1 else -1)\n"
         "  in scatter(replicate(N, 7u32), idx, xs)",
         false},
        {"def main(xs: [N]u32): [N]u32 =\n"
         SPLIT_BY_BIT_3
         "    in (i - o) + set * (zeros + o - 1 - (i - o)))\n"
         "  in scatter(scratch(N, 0u32), places, xs)",
         false},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const char *label = text_of("compaction %zu", c);
        const st_def *orig = def_of(cases[c].src);
        st_code code = generated(lowered(apply(orig, st_default_strategy("CPU"), label), label), label);
        bool compressed = strstr(code.opencl, "ST_COMPRESS_STORE(lb") != NULL;
        ck_assert_msg(compressed == cases[c].compressed, "%s: compress-stores %s:\n%s", label,
                      compressed ? "where they must not be" : "missing", code.opencl);
        st_exe *exe = built(&code, label);
        static const char *const sizes[] = {"N=0", "N=1", "N=7", "N=1000", "N=65536", "N=65553", "N=1000003"};
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) agrees(exe, orig, sizes[k], 71 + k, label);
        st_exe_free(exe);
    }
}
END_TEST

/* A count outside 0..N: the glue's error, with a sentence, before any
 * kernel reads past an array. */
START_TEST(a_count_out_of_range_is_the_glues_error) {
    const char *srcs[] = {
        "def main(xs: [N]i32, c: i64) =\n  let k = (xs |> map(x => 1i64) |> reduce(+, 0i64)) + c\n"
        "  in take(k, xs) |> map(y => y * 2)\n",
        "def main(xs: [N]i32, c: i64) =\n  let k = (xs |> map(x => 1i64) |> reduce(+, 0i64)) + c\n"
        "  in drop(k, xs) |> scan(+, 0)\n",
    };
    for (size_t i = 0; i < sizeof srcs / sizeof *srcs; i++) {
        const st_def *d = def_of(srcs[i]);
        st_code code = generated(lowered(apply(d, st_default_strategy("CPU"), "default"), "default"), "default");
        st_exe *exe = built(&code, srcs[i]);
        const int64_t extras[] = {1, -8, 0};
        for (size_t e = 0; e < 3; e++) {
            int64_t n = 7;
            st_value args[2] = {array_of(ST_I32, n, permutation(n, 0, 1), ar),
                                scalar_of(ST_I64, (st_scalar){.i64 = extras[e]})};
            st_binding env = size_n(n);
            st_err err = {0};
            st_launch *l = st_launch_new(exe, args, &env, 1, &err);
            ck_assert_msg(l != NULL, "%s", err.message);
            bool ran = st_launch_run(l, NULL, &err);
            if (extras[e] == 0) {
                ck_assert_msg(ran, "%s", err.message);
            } else {
                ck_assert_msg(!ran, "a count of %lld ran", (long long)(n + extras[e]));
                ck_assert_has(err.message, "STRATA_COUNT_OUT_OF_RANGE");
                ck_assert_has(err.message, text_of("the count is %lld, outside 0..7", (long long)(n + extras[e])));
                ck_assert_has(err.message, i == 0 ? "take(k, xs) in `main` at 1:5" : "drop(k, xs) in `main` at 1:5");
            }
            st_launch_free(l);
        }
        st_exe_free(exe);
    }
}
END_TEST

/* A cut of a cut, and cuts of zips: each count read back in turn, the
 * second over the first's length. */
START_TEST(cuts_of_cuts_and_of_zips) {
    const char *src = "def main(xs: [N]i32) =\n"
                      "  let k1 = xs |> map(x => if x > 0 then 1i64 else 0i64) |> reduce(+, 0i64)\n"
                      "  let ys = take(k1, xs)\n"
                      "  let k2 = ys |> map(x => if x > 20 then 1i64 else 0i64) |> reduce(+, 0i64)\n"
                      "  let zs = drop(k2, ys)\n"
                      "  in (zs |> scan(+, 0), zip(zs, zs) |> map((a, b) => a * b),\n"
                      "      concat(zip(ys, ys), zip(xs, xs)) |> unzip)\n";
    const st_def *d = def_of(src);
    const char *strategies[] = {NULL, st_default_strategy("CPU")};
    for (size_t s = 0; s < 2; s++) {
        const char *label = strategies[s] ? "default" : "no strategy";
        st_code code = generated(lowered(apply(d, strategies[s], label), label), label);
        ck_assert_uint_eq(code.nlengths, 2); /* ?k1 and ?k2 */
        st_exe *exe = built(&code, label);
        agrees(exe, d, "N=1", 1, label);
        agrees(exe, d, "N=7", 2, label);
        agrees(exe, d, "N=1000", 3, label);
        st_exe_free(exe);
    }
}
END_TEST

/* concat of arrays of arrays: refused, at the concat, saying why */
START_TEST(concat_of_rows_is_refused) {
    const st_def *d = def_of("def main(xs: [N][M]i32) =\n  let k = xs |> map(r => 1i64) |> reduce(+, 0i64)\n"
                             "  in concat(take(k, xs), xs)\n");
    st_code code;
    st_err err = {0};
    ck_assert(!st_codegen(cx, lowered(d, "rows"), ar, &code, &err));
    ck_assert_has(err.message, "concat of arrays whose elements are arrays");
    ck_assert_int_eq(err.loc.line, 3);
    ck_assert_int_eq(err.loc.col, 6);
}
END_TEST

/* lower-opencl makes a filter its rule's scan and scatter; one that reaches
 * codegen unlowered is refused at the filter, by name */
START_TEST(filter_is_refused_at_the_def) {
    const st_def *d = def_of("def main(xs: [N]i32) =\n  xs |> filter(x => x > 0)\n");
    st_code code;
    st_err err = {0};
    ck_assert(st_codegen(cx, lowered(d, "filter"), ar, &code, &err));
    ck_assert(!st_codegen(cx, d, ar, &code, &err));
    ck_assert_has(err.message, "a filter is left that no rule made a scan and a scatter");
    ck_assert_int_eq(err.loc.line, 2);
    ck_assert_int_eq(err.loc.col, 9);
}
END_TEST

/* A partition of a concat, whose length no iota writes: partition-scatter
 * refuses it, at the partition, and says why. */
START_TEST(a_partition_of_a_concat_is_refused_where_it_stands) {
    const st_def *d = def_of("def main(xs: [N]i32) =\n  let ys = xs |> filter(x => x > 0)\n"
                             "  in partition(x => x < 5, concat(ys, xs))\n");
    st_err err = {0};
    st_rw *rw = st_rw_new(cx, reg);
    const st_strategy *s = st_strategy_parse(cx, reg, "strategy", "partition-scatter", &err);
    ck_assert_msg(s != NULL, "%s", err.message);
    const st_node *part = d->body;
    while (part->kind == ST_NODE_LET) part = st_let_body(part);
    ck_assert(st_rewrite(rw, s, part, &err) == NULL);
    st_rw_free(rw);
    ck_assert_has(err.message, "not a take or a drop of an array of its worst-case length");
    ck_assert_int_eq(err.loc.line, 3);
    ck_assert_int_eq(err.loc.col, 6);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The command line and the exported glue                                   */
/* ------------------------------------------------------------------------ */

/* `strata run` prints each result at its length, --output writes that
 * many elements, --check compares them (lengths too), --time counts the
 * bytes of the actual lengths. */
START_TEST(strata_run_shows_the_actual_lengths) {
    cli c;
    cli_open(&c, "filter_run");
    const char *prog = cli_file(&c, "cuts", PROGRAMS[CUTS]);
    const char *xs = arena_text(c.a, "%s/xs.npy", c.dir), *out_dir = arena_text(c.a, "%s/out", c.dir);
    int32_t *data = permutation(1000, 300, 2);
    st_value v = array_of(ST_I32, 1000, data, ar);
    st_err err = {0};
    ck_assert_msg(st_npy_write(xs, &v, &err), "%s", err.message);
    char *out, *errs;
    const char *in = arena_text(c.a, "xs=%s", xs);
    int rc = cli_strata(&c, (const char *[]){"run", prog, "--input", in, "--input", "c=300", "--check", "--time",
                                             "--runs", "2", NULL},
                        &out, &errs);
    ck_assert_msg(rc == 0, "%s", errs);
    ck_assert_has(errs, "the results equal the interpreter's");
    ck_assert_has(out, "0: [300]i32 = [");
    ck_assert_has(out, "1: [700]i32 = [");
    ck_assert_has(out, "2: [1300]i32 = [");
    ck_assert_has(out, text_of("(%d bytes read and written)", 4 * (1000 + 300 + 700 + 1300 + 1 + 16)));
    rc = cli_strata(&c, (const char *[]){"run", prog, "--input", in, "--input", "c=300", "--output", out_dir, NULL},
                    &out, &errs);
    ck_assert_msg(rc == 0, "%s", errs);
    st_value got = npy_read_ok(c.a, arena_text(c.a, "%s/0.npy", out_dir));
    ck_assert_int_eq(got.u.a.dims[0], 300);
    got = npy_read_ok(c.a, arena_text(c.a, "%s/1.npy", out_dir));
    ck_assert_int_eq(got.u.a.dims[0], 700);
    cli_close(&c);
}
END_TEST

/* The exported host.c says where the lengths are, allocates the worst
 * case and checks the lengths' output like any other. */
START_TEST(the_exported_glue_states_the_lengths_contract) {
    st_code code = generated(lowered(def_of(PROGRAMS[CUTS]), "none"), "none");
    ck_assert_uint_eq(code.nlengths, 1);
    ck_assert_uint_eq(code.noutputs, 5);
    ck_assert_has(code.host, "outputs: 6 buffers");
    ck_assert_has(code.host, "the last output, out_lengths, holds 1 longs");
    ck_assert_has(code.host, "clEnqueueWriteBuffer(queue, out_lengths, CL_TRUE, 0, sizeof lengths, lengths");
    ck_assert_has(code.host, "outputs[5] holds %lu bytes");
    ck_assert_has(code.host, "STRATA_COUNT_OUT_OF_RANGE");
    /* the outputs of run-time length are their worst case, over the def's sizes */
    for (uint32_t i = 0; i < code.noutputs; i++) ck_assert(!st_size_has_exist(code.outputs[i].length));
}
END_TEST

/* The exported host.c, compiled as a user compiles it, called by
 * tests/strata_run_caller.c: the length comes back in the output after the
 * others, and outputs smaller than their worst case are refused. */
START_TEST(the_exported_glue_keeps_its_contract) {
    cli c;
    cli_open(&c, "filter_run_caller");
    const char *cc = getenv("STRATA_CC");
    ck_assert_msg(cc != NULL, "no C compiler (STRATA_CC)");
    const char *dir = arena_text(c.a, "%s/emitted", c.dir);
    const char *prog = cli_file(&c, "positive_plus_one",
                                "def main(xs: [N]f32) =\n"
                                "  let k = xs |> map(x => if x > 0.0 then 1i64 else 0i64) |> reduce(+, 0i64)\n"
                                "  in take(k, xs) |> map(x => x + 1.0)\n");
    char *out, *err;
    int rc = cli_strata(&c, (const char *[]){"run", prog, "--size", "N=3", "--emit", dir, NULL}, &out, &err);
    ck_assert_msg(rc == 0, "exit %d\n%s", rc, err);
    const char *host = slurp_file(c.a, arena_text(c.a, "%s/host.c", dir), NULL);
    /* the kernels' names, in the order the header gives */
    const char *order = strstr(host, "in this order:");
    ck_assert(order != NULL);
    order += strlen("in this order:");
    const char *args[24] = {arena_text(c.a, "%s/kernels.cl", dir), "lengths"};
    int nargs = 2;
    while (*order == ' ' && nargs < 22) {
        size_t len = strcspn(order + 1, " \n");
        char *name = st_arena_alloc(c.a, len + 1);
        memcpy(name, order + 1, len);
        name[len] = 0;
        args[nargs++] = name;
        order += 1 + len;
    }
    args[nargs] = NULL;
    ck_assert_int_gt(nargs, 2);
    const char *caller = arena_text(c.a, "%s/caller", c.dir), *log = arena_text(c.a, "%s/cc.log", c.dir);
    int status = system(arena_text(c.a, "'%s' -std=c17 -Wall -Wextra -Werror -g '%s/host.c' '%s/strata_run_caller.c' -o '%s' "
                                        "-lOpenCL > '%s' 2>&1",
                                   cc, dir, getenv("STRATA_TESTS"), caller, log));
    ck_assert_msg(status == 0, "cannot build the caller:\n%s", slurp_file(c.a, log, NULL));
    rc = program_spawn(c.a, c.dir, environ, caller, args, &out, &err);
    ck_assert_msg(rc == 0, "exit %d\n%s%s", rc, out, err);
    ck_assert_int_eq(count_of(out, "ok  "), 5);
    cli_close(&c);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* CUDA: the same kernels and glue through NVRTC, where it is               */
/* ------------------------------------------------------------------------ */

START_TEST(cuda_kernels_for_cuts) {
    st_code probe = {.cuda = "extern \"C\" __global__ void k(int *x) { x[0] = 1; }\n"};
    st_err err = {0};
    bool nvrtc = st_cuda_compile_check(&probe, 90, NULL, &err);
    if (!nvrtc) fprintf(stderr, "filter-run: NVRTC checks skipped: %s\n", err.message);
    for (int s = 0; s < NSTRATEGIES; s++)
        for (prog p = CUTS; p < NPROGS; p++) {
            const char *label = text_of("%s, %s", PROG_NAMES[p], STRATEGIES[s] ? STRATEGIES[s] : "no strategy");
            st_code code = generated(lowered(apply(def_of(PROGRAMS[p]), strategy_text(STRATEGIES[s]), label), label), label);
            ck_assert_msg(code.cuda != NULL, "%s: no CUDA source", label);
            for (uint32_t i = 0; i < code.nkernels; i++)
                ck_assert_msg(kernel_declared(code.cuda, code.kernel_names[i]), "%s: no CUDA kernel %s", label,
                              code.kernel_names[i]);
            if (nvrtc) ck_assert_msg(st_cuda_compile_check(&code, 90, NULL, &err), "%s: %s", label, err.message);
        }
    for (size_t s = 0; s < sizeof CUT_STRATEGIES / sizeof *CUT_STRATEGIES; s++)
        for (cut_prog p = FILTER_FILTER; p < NCUT_PROGS; p++) {
            const char *strategy = strategy_text(CUT_STRATEGIES[s]);
            const char *label = text_of("%s, %s", CUT_NAMES[p], strategy ? strategy : "no strategy");
            st_code code = generated(lowered(apply(def_of(CUT_PROGRAMS[p]), strategy, label), label), label);
            ck_assert_msg(code.cuda != NULL, "%s: no CUDA source", label);
            if (nvrtc) ck_assert_msg(st_cuda_compile_check(&code, 90, NULL, &err), "%s: %s", label, err.message);
        }
}
END_TEST

int main(void) {
    Suite *s = suite_create("filter-run");
    TCase *tc = tcase_create("interpreter, glue, errors");
    tcase_add_checked_fixture(tc, rules_setup, pipeline_teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, interpreter_agrees_with_c);
    tcase_add_test(tc, the_default_scans_by_lookback);
    tcase_add_test(tc, compactions_store_compressed);
    tcase_add_test(tc, filter_is_refused_at_the_def);
    tcase_add_test(tc, a_partition_of_a_concat_is_refused_where_it_stands);
    tcase_add_test(tc, cuts_of_cuts_and_of_zips);
    tcase_add_test(tc, concat_of_rows_is_refused);
    tcase_add_test(tc, the_exported_glue_states_the_lengths_contract);
    tcase_add_test(tc, cuda_kernels_for_cuts);
    tcase_add_test(tc, a_count_out_of_range_is_the_glues_error);
    tcase_add_test(tc, strata_run_shows_the_actual_lengths);
    tcase_add_test(tc, the_exported_glue_keeps_its_contract);
    suite_add_tcase(s, tc);
    tc = tcase_create("device");
    tcase_add_checked_fixture(tc, rules_setup, pipeline_teardown);
    tcase_set_timeout(tc, 900); /* a million elements through PoCL at five counts, three programs */
    tcase_add_loop_test(tc, every_rule_on_the_device, 0, NSTRATEGIES);
    suite_add_tcase(s, tc);
    tc = tcase_create("filters of run-time lengths");
    tcase_add_checked_fixture(tc, rules_setup, pipeline_teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, filters_of_run_time_lengths_on_the_device, 0,
                        (int)(sizeof CUT_STRATEGIES / sizeof *CUT_STRATEGIES));
    suite_add_tcase(s, tc);
    return run_suite(s);
}
