/* tests/consumer_cases.h — kernel-makers read by something other than a
 * `let`: a scan made a single-pass scan (or a parallel scan), and a
 * reduce_by_index made subhistograms, read directly by a reduce, a map, a
 * zip returned as a tuple, a scatter, another scan, or a tuple. Codegen
 * computes such a node once, into a global buffer, before whatever reads it
 * (codegen/cg_host.c); these cases check that every one of them runs and
 * equals the interpreter. The look-back suite runs the scan cases, the
 * histogram suite the reduce_by_index ones.
 * Included after pipeline_fixture.h by one test file each. */
#ifndef STRATA_TESTS_CONSUMER_CASES_H
#define STRATA_TESTS_CONSUMER_CASES_H

#include <stdint.h>

typedef struct consumer_case {
    const char *what;
    const char *program;
    bool in_a_map; /* the kernel-maker is inside a map (reading nothing of its element, and of a small input,
                      since the interpreter computes it once per element): a rule may refuse it there at
                      rewrite time; if it does not, codegen computes it once, before the map */
} consumer_case;

/* Scans of a variable, so that the scan's own producer is not in question. */
static const consumer_case scan_consumers[] = {
    {"a reduce", "def main(xs: [N]i32): i32 =\n  xs |> scan(+, 0) |> reduce(^, 0)\n", false},
    {"a map", "def main(xs: [N]i32): [N]i32 =\n  xs |> scan(+, 0) |> map(x => x * 3 + 1)\n", false},
    {"a zip", "def main(xs: [N]i32) =\n  zip(xs, xs |> scan(+, 0))\n", false},
    /* the scan decides which indices are written (each at most once) */
    {"a scatter",
     "def main(xs: [N]i32): [N]i32 =\n"
     "  scatter(replicate(N, 0), zip(iota(N), xs |> scan(+, 0)) |> map((i, s) => if s % 2 == 0 then N - 1 - i else -1), xs)\n", false},
    {"a scatter of its values",
     "def main(xs: [N]i32): [N]i32 =\n  scatter(replicate(N, 7), iota(N) |> map(i => N - 1 - i), xs |> scan(+, 0))\n", false},
    {"another scan", "def main(xs: [N]i32): [N]i32 =\n  xs |> scan(+, 0) |> scan(max, -2147483648)\n", false},
    {"a tuple", "def main(xs: [N]i32) =\n  (xs |> scan(+, 0), xs |> map(x => x - 1) |> reduce(+, 0))\n", false},
    {"a tuple of consumers",
     "def main(xs: [N]i32) =\n  (xs |> scan(+, 0) |> reduce(max, -2147483648), xs |> scan(min, 2147483647) |> map(x => x ^ 5))\n", false},
    {"a scalar expression",
     "def main(xs: [N]i32): i32 =\n  (xs |> scan(+, 0) |> reduce(+, 0)) * 3 - (xs |> scan(^, 0) |> reduce(|, 0))\n", false},
    {"a map of its zip with the input",
     "def main(xs: [N]i32): [N]i32 =\n  zip(xs, xs |> scan(+, 0)) |> map((a, b) => a * b - 1)\n", false},
    {"a zip with another scan",
     "def main(xs: [N]i32): [N]i32 =\n  zip(xs |> scan(+, 0), xs |> scan(max, -2147483648)) |> map((a, b) => a - b)\n", false},
    {"a reduce_by_index",
     "def main(xs: [N]i32): [16]i32 =\n"
     "  reduce_by_index(replicate(16, 0), +, 0, xs |> scan(+, 0) |> map(s => i64(s) % 16), xs)\n", false},
    {"an if", "def main(xs: [N]i32): i32 =\n  if N > 3 then xs |> scan(+, 0) |> reduce(^, 0) else 7\n", false},
    {"a map that reads all of it",
     "def main(xs: [N]i32, ys: [100]i32): [N]i32 =\n  xs |> map(x => x - (ys |> scan(+, 0) |> reduce(max, -2147483648)))\n", true},
};

/* What the look-back suite applies to each: both loads of the single-pass
 * scan, [Pizzuti et al. 2022]'s parallel scan, and the single-pass scan after fusion. */
static const char *const scan_strategies[] = {
    "each(scan, lookback(M=4, WG=4))",
    "each(scan, lookback(M=16, WG=1, LOAD=direct))",
    "each(scan, parallel-scan(BS=64, BF=2, SE=4))",
    /* a map that reads the scan fused into it, where it is the scan's only reader */
    "try(each(map, try(fuse-scan-map))) ; each(scan, lookback(M=4, WG=4))",
};

#define HIST(consumer) "reduce_by_index(replicate(16, 0), +, 0, is |> map(i => i64(i) % 16), is)" consumer

static const consumer_case hist_consumers[] = {
    {"a reduce", "def main(is: [N]i32): i32 =\n  " HIST(" |> reduce(+, 0)") "\n", false},
    {"a map", "def main(is: [N]i32): [16]i32 =\n  " HIST(" |> map(c => c * 2 - 1)") "\n", false},
    {"a zip", "def main(is: [N]i32) =\n  zip(iota(16), " HIST("") ")\n", false},
    {"a scatter", "def main(is: [N]i32): [16]i32 =\n  scatter(replicate(16, 0), iota(16) |> map(i => 15 - i), " HIST("") ")\n", false},
    {"a scan", "def main(is: [N]i32): [16]i32 =\n  " HIST(" |> scan(+, 0)") "\n", false},
    {"a tuple", "def main(is: [N]i32) =\n  (" HIST("") ", is |> reduce(+, 0))\n", false},
    {"a reduce_by_index",
     "def main(is: [N]i32): [4]i32 =\n"
     "  reduce_by_index(replicate(4, 0), +, 0, iota(16) |> map(i => i % 4), " HIST("") ")\n", false},
    {"a map that reads all of it",
     "def main(xs: [N]i32, is: [100]i32): [N]i32 =\n  xs |> map(x => x + get((i64(x) % 16 + 16) % 16, " HIST("") "))\n", true},
};

static const char *const hist_strategies[] = {
    "each(reduce_by_index, subhistogram)",
    "each(reduce_by_index, subhistogram) ; try(each(scan, lookback(M=4, WG=4)))",
    /* padding a scan of subhistograms puts them inside a map */
    "try(each(scan, parallel-scan(BS=64, BF=2, SE=4))) ; each(reduce_by_index, subhistogram)",
};

static const int64_t consumer_lengths[] = {1, 7, 1000, 1000003};

/* The program under the strategy, lowered, generated, built and run at
 * every length against the interpreter. The rewrite may be refused (a rule's
 * condition, at rewrite time) only where refusal_ok or the case is in a map;
 * codegen never refuses. */
static inline void consumer_agrees(const consumer_case *c, const char *strategy, bool refusal_ok) {
    const char *label = text_of("%s reading it, under %s", c->what, strategy);
    const st_def *orig = def_of(c->program);
    st_err err = {0};
    const st_strategy *s = st_strategy_parse(cx, reg, "strategy", strategy, &err);
    ck_assert_msg(s != NULL, "%s: does not parse: %s", label, err.message);
    st_rw *rw = st_rw_new(cx, reg);
    ck_assert(rw != NULL);
    const st_def *now = st_rewrite_def(rw, s, orig, &err);
    st_rw_free(rw);
    if (!now) {
        ck_assert_msg(refusal_ok || c->in_a_map, "%s: the strategy does not apply: %s", label, err.message);
        return;
    }
    st_code code = generated(lowered(now, label), label);
    st_exe *exe = built(&code, label);
    for (size_t i = 0; i < sizeof consumer_lengths / sizeof *consumer_lengths; i++) {
        /* a program whose every element reads all of a table runs the
         * prime above 10^6 in a plain build alone (st_test_big): under the
         * sanitizers it took 25 s of CI's limit, and memory errors show at
         * the small lengths as well */
        if (consumer_lengths[i] > 1000 && c->in_a_map && !st_test_big(1)) continue;
        agrees(exe, orig, text_of("N=%lld", (long long)consumer_lengths[i]), 31 + i, label);
    }
    st_exe_free(exe);
}

#endif
