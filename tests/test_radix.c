/* tests/test_radix.c — the radix sorts written in strata
 * (examples/radix_sort.strata, and radix_sort_kv.strata with values carried
 * along): 32 stable one-bit splits in a loop at the top level, each a
 * reduction of the bit (how many are clear), a scan of it (how many set
 * ones up to each element), a map of places and a scatter. Their results
 * are sorts: the keys equal the C library's qsort of them, and the values
 * follow their keys stably (qsort of (key, input position) pairs). The
 * interpreter against C at small lengths (it walks 32 turns of trees); the
 * device (PoCL on CI) against C at N = 1, 7, 1000 and 1000003, under no
 * strategy, the defaults of a CPU and a GPU, and each rule that applies to
 * them (look-back in its shapes, parallel-scan, the fusions alone). Keys
 * are random u32 of all 32 bits, with runs of equal keys, so that
 * stability shows. Then: the default makes each turn one fused look-back
 * pass, the examples run and check through the command line, and bad sorts
 * are refused at their line and column. */
#include "pipeline_fixture.h"
#include "run_strata.h"

/* ------------------------------------------------------------------------ */
/* Inputs and the references in C                                           */
/* ------------------------------------------------------------------------ */

static uint32_t next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (uint32_t)(*s >> 32);
}

/* n keys: two of three random over all 32 bits, the third from 32 values
 * (their top and bottom bits only), so that many keys are equal */
static uint32_t *keys_of(int64_t n, uint64_t seed) {
    uint32_t *ks = room(n, sizeof *ks);
    uint64_t s = seed * 2654435761u + 88172645463325252ull;
    for (int64_t j = 0; j < n; j++) {
        uint32_t r = next(&s);
        ks[j] = j % 3 == 2 ? r & 0xc0000007u : r;
    }
    return ks;
}

/* values of both signs, each its position's own: which one went where shows */
static int32_t value_at(int64_t j) { return (int32_t)(j * 7919 % 2000003) - 1000001; }

typedef struct keyed {
    uint32_t key;
    int64_t at; /* the input position */
} keyed;

static int by_key_then_position(const void *a, const void *b) {
    const keyed *p = a, *q = b;
    if (p->key != q->key) return (p->key > q->key) - (p->key < q->key);
    return (p->at > q->at) - (p->at < q->at);
}

/* The keys sorted, and the values moved with them, stably, by qsort. */
static void sorted_in_c(int64_t n, const uint32_t *ks, const int32_t *vs, uint32_t *out_k, int32_t *out_v) {
    keyed *ps = room(n, sizeof *ps);
    for (int64_t j = 0; j < n; j++) ps[j] = (keyed){ks[j], j};
    qsort(ps, (size_t)n, sizeof *ps, by_key_then_position);
    for (int64_t j = 0; j < n; j++) {
        out_k[j] = ps[j].key;
        if (out_v) out_v[j] = vs[ps[j].at];
    }
}

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

typedef struct sort_case {
    const char *example; /* examples/NAME.strata */
    bool kv;             /* values carried along */
} sort_case;

static const sort_case cases[] = {{"radix_sort", false}, {"radix_sort_kv", true}};
#define NCASES ((int)(sizeof cases / sizeof *cases))

/* A case's inputs at n elements, and the sort C makes of them. */
typedef struct io {
    st_value args[2];
    uint32_t nargs;
    st_value want;
} io;

static io io_of(const sort_case *c, int64_t n, uint64_t seed) {
    io r = {0};
    uint32_t *ks = keys_of(n, seed), *out_k = room(n, sizeof *out_k);
    int32_t *vs = NULL, *out_v = NULL;
    r.args[r.nargs++] = array_of(ST_U32, n, ks, ar);
    if (c->kv) {
        vs = room(n, sizeof *vs);
        out_v = room(n, sizeof *out_v);
        for (int64_t j = 0; j < n; j++) vs[j] = value_at(j);
        r.args[r.nargs++] = array_of(ST_I32, n, vs, ar);
    }
    sorted_in_c(n, ks, vs, out_k, out_v);
    r.want = array_of(ST_U32, n, out_k, ar);
    if (c->kv) r.want = pair_of(r.want, array_of(ST_I32, n, out_v, ar));
    return r;
}

static void agrees_with_c(const st_value *got, const st_value *want, const char *what) {
    st_err err = {0};
    ck_assert_msg(st_value_agree(got, want, 0, &err), "%s: %s", what, err.message);
}

/* ------------------------------------------------------------------------ */
/* The interpreter against C                                                */
/* ------------------------------------------------------------------------ */

START_TEST(the_interpreter_sorts_as_c_does) {
    const sort_case *c = &cases[_i];
    const st_def *d = example_def(c->example);
    const int64_t lengths[] = {0, 1, 2, 7, 1000};
    for (size_t l = 0; l < sizeof lengths / sizeof *lengths; l++) {
        int64_t n = lengths[l];
        io r = io_of(c, n, 3 + (uint64_t)n);
        st_binding env = {st_intern_cstr(cx, "N"), n};
        st_value got;
        st_err err = {0};
        ck_assert_msg(st_eval(cx, d, r.args, &env, 1, ar, &got, &err), "%s: %s", c->example, err.message);
        agrees_with_c(&got, &r.want, text_of("%s, N=%lld, the interpreter", c->example, (long long)n));
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The device against C                                                     */
/* ------------------------------------------------------------------------ */

/* NULL: none (the lowering alone); "CPU" and "GPU": those defaults */
static const char *const strategies[] = {
    NULL,
    "CPU",
    "GPU",
    "try(each(any, try(fuse-map-scan))) ; try(each(top scan, lookback(M=16384, WG=1, LOAD=direct)))",
    "try(each(any, try(fuse-map-scan))) ; try(each(top scan, lookback(M=12, WG=256, LW=32)))",
    "try(each(any, try(fuse-map-scan))) ; try(each(top scan, lookback(M=64, WG=64, LOAD=local)))",
    "try(each(scan, parallel-scan(BS=256, BF=2, SE=4)))",
    "try(each(any, try(fuse-map-scan))) ; try(each(scan, parallel-scan(BS=64, BF=4, SE=4)))",
    "try(each(any, try(fuse-map-scan))) ; try(each(any, try(fuse-scan-map))) ; try(each(any, try(fuse-scan-scatter)))",
};
#define NSTRATEGIES ((int)(sizeof strategies / sizeof *strategies))

static const int64_t sizes[] = {1, 7, 1000, 1000003};
#define NSIZES ((int)(sizeof sizes / sizeof *sizes))

static const char *strategy_text(int s) {
    const char *t = strategies[s];
    if (t && (!strcmp(t, "CPU") || !strcmp(t, "GPU"))) return st_default_strategy(t);
    return t;
}

START_TEST(the_device_sorts_as_c_does) {
    const sort_case *c = &cases[_i / NSTRATEGIES];
    const char *strategy = strategy_text(_i % NSTRATEGIES);
    const char *label = text_of("%s under %s", c->example, strategy ? strategy : "no strategy");
    const st_def *d = example_def(c->example);
    st_code code = generated(lowered(apply(d, strategy, label), label), label);
    st_err build_err = {0};
    st_exe *exe = st_exe_build(device(), &code, &build_err);
    /* a GPU's 48 KiB of a kernel's own local memory hold no tile of M=64,
       WG=64 of (index, key) pairs: the device's refusal, said as such */
    if (!exe && strstr(build_err.message, "bytes of local memory per work-group")) {
        fprintf(stderr, "%s: not on this device: %s\n", label, build_err.message);
        return;
    }
    ck_assert_msg(exe != NULL, "%s: st_exe_build fails: %s", label, build_err.message);
    for (int z = 0; z < NSIZES; z++) {
        int64_t n = sizes[z];
        if (n >= 1000003 && !st_test_big(_i % NSTRATEGIES)) continue;
        io r = io_of(c, n, 5 + (uint64_t)n);
        st_binding env = {st_intern_cstr(cx, "N"), n};
        st_err err = {0};
        st_launch *l = st_launch_new(exe, r.args, &env, 1, &err);
        ck_assert_msg(l != NULL, "%s: st_launch_new: %s", label, err.message);
        ck_assert_msg(st_launch_run(l, NULL, &err), "%s, N=%lld: %s", label, (long long)n, err.message);
        st_value got;
        ck_assert_msg(st_launch_read(l, ar, &got, &err), "%s: st_launch_read: %s", label, err.message);
        agrees_with_c(&got, &r.want, text_of("%s, N=%lld, the device", label, (long long)n));
        st_launch_free(l);
    }
    st_exe_free(exe);
}
END_TEST

/* Under the default each turn is a reduction of the bit and one look-back
 * pass: the bits' map, their scan, the map of places and the scatter fused,
 * no array of counts or places between them; the host runs the turn 32
 * times. */
START_TEST(the_default_makes_a_turn_one_pass) {
    for (int i = 0; i < NCASES; i++) {
        const st_def *d = example_def(cases[i].example);
        const st_def *low = lowered(apply(d, st_default_strategy("CPU"), "default"), "default");
        const char *text = printed_def(low);
        ck_assert_has(text, " for d < 32 do");
        ck_assert_has(text, "reduceSeq(");
        ck_assert_msg(count_of(text, "scanLookback(") == 1, "%s: not one look-back pass a turn:\n%s", cases[i].example,
                      text);
        ck_assert_msg(!strstr(text, "let ones") && !strstr(text, "let places"),
                      "%s: counts or places are arrays of their own:\n%s", cases[i].example, text);
        ck_assert_has(generated(low, "default").host, "for (loop0_i = 0; loop0_i < loop0_n; loop0_i++) {");
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The examples, through the command line                                   */
/* ------------------------------------------------------------------------ */

START_TEST(the_examples_run_and_check) {
    cli c;
    cli_open(&c, "radix");
    for (int i = 0; i < NCASES; i++) {
        const char *prog = cli_example(&c, cases[i].example);
        char *out, *err;
        int rc = cli_strata(&c, ARGS("run", prog, "--size", "N=1000", "--check"), &out, &err);
        ck_assert_msg(rc == 0, "%s: exit %d\n%s\n%s", prog, rc, out, err);
        ck_assert_has(err, "check: the results equal the interpreter's");
    }
    cli_close(&c);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Located errors                                                           */
/* ------------------------------------------------------------------------ */

START_TEST(bad_sorts_are_refused_at_their_place) {
    /* the pairs scattered are not the destination's */
    ck_assert_error(cx,
                    "def main(xs: [N]u32, ys: [N]i32): ([N]u32, [N]i32) =\n"
                    "  scatter(replicate(N, (0u32, 0)), iota(N), zip(xs, xs)) |> unzip\n",
                    2, 45, "scatter's values have type (u32, u32), but the destination holds (u32, i32)");
    /* the keys scattered are not the destination's */
    ck_assert_error(cx,
                    "def main(xs: [N]u32): [N]u32 =\n"
                    "  loop ks = xs for d < 32 do scatter(replicate(N, 0u32), iota(N), ks |> map(k => i32(k)))\n",
                    2, 73, "scatter's values have type i32, but the destination holds u32");
    /* counters of a third bucket that the elements do not have */
    ck_assert_error(cx,
                    "def main(xs: [N]u32): [N]i64 =\n"
                    "  xs |> map(k => (1i64, 0i64)) |> exscan((p, q) => (p.0 + q.0, p.1 + q.1), (0i64, 0i64, 0i64)) |> map(c => c.0)\n",
                    2, 76, "exscan's neutral element has type (i64, i64, i64), but the elements are (i64, i64)");
    /* keys and values from one array */
    ck_assert_error(cx,
                    "def main(xs: [N]u32, ys: [N]i32): ([N]u32, [N]i32) =\n"
                    "  loop (ks, vs) = xs for d < 32 do (ks, vs)\n",
                    2, 3, "the pattern has 2 names, but the loop's initial value has type [N]u32");
    /* a turn that changes the keys' length */
    ck_assert_error(cx,
                    "def main(xs: [N]u32): [N]u32 =\n"
                    "  loop ks = xs for d < 32 do scatter(replicate(N + 1, 0u32), iota(N), ks)\n",
                    2, 30, "the loop's body has type [N + 1]u32, but its accumulator has type [N]u32");
}
END_TEST

static Suite *radix_suite(void) {
    Suite *s = suite_create("radix");
    TCase *lang = tcase_create("language");
    tcase_add_checked_fixture(lang, rules_setup, rules_teardown);
    tcase_set_timeout(lang, 600);
    tcase_add_loop_test(lang, the_interpreter_sorts_as_c_does, 0, NCASES);
    tcase_add_test(lang, bad_sorts_are_refused_at_their_place);
    suite_add_tcase(s, lang);
    TCase *dev = tcase_create("device");
    tcase_set_timeout(dev, 600);
    tcase_add_checked_fixture(dev, rules_setup, pipeline_teardown);
    tcase_add_loop_test(dev, the_device_sorts_as_c_does, 0, NCASES * NSTRATEGIES);
    tcase_add_test(dev, the_default_makes_a_turn_one_pass);
    tcase_add_test(dev, the_examples_run_and_check);
    suite_add_tcase(s, dev);
    return s;
}

int main(void) { return run_suite(radix_suite()); }
