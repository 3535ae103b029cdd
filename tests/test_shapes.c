/* tests/test_shapes.c — the acceptance test of issue 18: every program shape
 * of tests/shapes.h, run on the default device under every strategy that
 * applies to it, at lengths 1, 7, 1000 and the prime 1000003, equals the
 * interpreter; or the strategy is refused at rewrite time (a rule's
 * condition said no), which skips the case. Refusal after a successful
 * rewrite (lowering, codegen, build, launch), a wrong result, a crash or a
 * hang is a failure that names the shape, the strategy and the length.
 *
 * By default a fixed sample of 15 (program, strategy) pairs runs,
 * each at the four lengths, so CI stays fast; STRATA_SHAPES_ALL=1 runs the
 * whole product (STRATA_SHAPES_SHARD=k/n: its k-th of n parts;
 * STRATA_SHAPES_STRATEGY=TEXT: only the strategies whose name holds TEXT;
 * STRATA_SHAPES_PROGRAM=TEXT,…: only the programs whose label holds each). One Check test per pair (so a crash takes only its own
 * pair down); each prints its case line first, so the log of a pair that
 * died names it. A second test case runs build/strata: plain `strata run`
 * (no -s) succeeds wherever `strata run -s id` does. */
#include "pipeline_fixture.h"
#include "run_strata.h"
#include "shapes.h"

/* ------------------------------------------------------------------------ */
/* Strategies and lengths                                                   */
/* ------------------------------------------------------------------------ */

typedef enum strategy_kind {
    S_ID, S_DEFAULT_CPU, S_DEFAULT_GPU, S_PSCAN_PAD, S_PSCAN_EXACT, S_LOOKBACK, S_LOOKBACK_DIRECT, S_SUBHIST, N_STRATEGIES
} strategy_kind;

typedef struct strategy_case {
    const char *name, *text; /* text NULL: the default strategy for default_for's device type */
    bool facts;              /* the program's form with `where N % 256 == 0`, run at multiples of 256 */
    const char *default_for;
} strategy_case;

#define PSCAN "each(scan, parallel-scan(BS=256, BF=2, SE=4))"

static const strategy_case strategies[] = {
    {"id", "id", false, NULL},
    {"default for a CPU", NULL, false, "CPU"},
    {"default for a GPU", NULL, false, "GPU"}, /* its kernels run on the test device too */
    {"parallel-scan, padded", PSCAN, false, NULL},
    {"parallel-scan, N % 256 == 0", PSCAN, true, NULL},
    {"lookback", "each(scan, lookback(M=4, WG=4))", false, NULL},
    /* the CPU's form: one work-item's run read directly, in vectors */
    {"lookback, direct", "each(scan, lookback(M=64, WG=1, LOAD=direct))", false, NULL},
    {"subhistogram", "each(reduce_by_index, subhistogram)", false, NULL},
};

/* The lengths under test, and for the exact form the multiple of 256 next
 * to each (7 → 7 blocks, the prime → the multiple above 10^6). */
static const int64_t lengths[] = {1, 7, 1000, 1000003};
static const int64_t exact_lengths[] = {256, 1792, 1024, 1000192};
enum { N_LENGTHS = (int)(sizeof lengths / sizeof *lengths) };

/* The strategies that are about something the program has: the scan rules
 * on programs with a scan, subhistogram on those with a reduce_by_index
 * (elsewhere each() matches nothing and the run is id's again). */
static bool applies(int program, strategy_kind s) {
    switch (s) {
    case S_PSCAN_PAD:
    case S_PSCAN_EXACT:
    case S_LOOKBACK:
    case S_LOOKBACK_DIRECT: return program_has_scan(program);
    case S_SUBHIST: return program_has_histogram(program);
    default: return true;
    }
}

/* ------------------------------------------------------------------------ */
/* Which pairs run                                                          */
/* ------------------------------------------------------------------------ */

/* The default sample: 15 pairs × 4 lengths = 60 runs, most from the
 * product, a few from the rows and histograms beside it (so subhistogram is
 * in the sample: only those have a reduce_by_index). */
enum { SAMPLE_PRODUCT = 11, SAMPLE_EXTRA = 4 };

typedef struct pair {
    int program;
    strategy_kind strategy;
} pair;

static bool run_all(void) {
    const char *v = getenv("STRATA_SHAPES_ALL");
    return v && !strcmp(v, "1");
}

/* STRATA_SHAPES_STRATEGY=TEXT keeps the strategies whose name holds TEXT
 * ("default" for both defaults): the whole product of one change. */
static bool chosen(strategy_kind s) {
    const char *v = getenv("STRATA_SHAPES_STRATEGY");
    return !v || !*v || strstr(strategies[s].name, v);
}

/* STRATA_SHAPES_PROGRAM=TEXT,… keeps the programs whose label holds each
 * TEXT ("in-loop", "|reduce|,in-loop"): the whole product of one shape's
 * change. */
static bool program_chosen(int i) {
    const char *v = getenv("STRATA_SHAPES_PROGRAM");
    char text[128];
    for (const char *at = v; at && *at;) {
        size_t len = strcspn(at, ",");
        snprintf(text, sizeof text, "%.*s", (int)(len < sizeof text ? len : sizeof text - 1), at);
        if (!program_label_holds(i, text)) return false;
        at += len + (at[len] == ',');
    }
    return true;
}

/* The applicable pairs of programs [from, to), program by program (pairs
 * may be NULL: count only). */
static int pairs_of(int from, int to, pair *pairs) {
    int n = 0;
    for (int i = from; i < to; i++)
        for (int s = 0; s < N_STRATEGIES && program_chosen(i); s++)
            if (applies(i, (strategy_kind)s) && chosen((strategy_kind)s)) {
                if (pairs) pairs[n] = (pair){i, (strategy_kind)s};
                n++;
            }
    return n;
}

/* The k-th sampled of total: a fixed stride near total / golden ratio,
 * coprime to total, so the sample spreads over producers, consumers, types
 * and strategies alike and is the same on every run. */
static int gcd(int a, int b) { return b ? gcd(b, a % b) : a; }

static int sampled(int k, int total) {
    int stride = (int)(total * 0.6180339887);
    while (gcd(stride, total) != 1) stride++;
    return (int)((total / 3 + (int64_t)k * stride) % total);
}

/* The whole product in shards, for machines with time and cores to spare:
 * STRATA_SHAPES_SHARD=k/n runs the k-th of n contiguous parts (1 ≤ k ≤ n);
 * the pairs [*from, *to) of total. */
static void shard(int total, int *from, int *to) {
    const char *v = getenv("STRATA_SHAPES_SHARD");
    int k = 1, n = 1;
    if (v && (sscanf(v, "%d/%d", &k, &n) != 2 || n < 1 || k < 1 || k > n)) k = n = 1;
    *from = (int)((int64_t)(k - 1) * total / n);
    *to = (int)((int64_t)k * total / n);
}

static int pair_count(void) {
    if (!run_all()) return SAMPLE_PRODUCT + SAMPLE_EXTRA;
    int from, to;
    shard(pairs_of(0, N_PROGRAMS, NULL), &from, &to);
    return to - from;
}

/* Case k: the k-th pair of the whole product (of its shard), or of the sample. */
static pair pair_at(int k) {
    int from = 0, to = N_PROGRAMS;
    if (!run_all()) {
        bool extra = k >= SAMPLE_PRODUCT;
        from = extra ? N_SHAPES : 0;
        to = extra ? N_PROGRAMS : N_SHAPES;
        k -= extra ? SAMPLE_PRODUCT : 0;
    }
    int total = pairs_of(from, to, NULL);
    pair *pairs = st_arena_alloc(ar, (size_t)total * sizeof *pairs);
    pairs_of(from, to, pairs);
    if (!run_all()) return pairs[sampled(k, total)];
    int first, last;
    shard(total, &first, &last);
    return pairs[first + k];
}

/* ------------------------------------------------------------------------ */
/* The pipeline, with verdicts instead of assertions                        */
/* ------------------------------------------------------------------------ */

/* The first line of a message, cut to a length a CI log line can carry
 * (and Check's message, which holds a few of them and the program, too). */
static const char *short_message(const char *m) {
    enum { MAX = 200 };
    size_t n = strcspn(m, "\n");
    return text_of("%.*s%s", (int)(n > MAX ? MAX : n), m, n > MAX ? "…" : "");
}

/* d rewritten by the strategy, or NULL with the rule's reason in *err. */
static const st_def *rewritten(const st_def *d, const char *strategy, st_err *err) {
    const st_strategy *s = st_strategy_parse(cx, reg, "strategy", strategy, err);
    ck_assert_msg(s != NULL, "`%s` does not parse: %s", strategy, err->message);
    st_rw *rw = st_rw_new(cx, reg);
    ck_assert(rw != NULL);
    const st_def *now = st_rewrite_def(rw, s, d, err);
    st_rw_free(rw);
    return now;
}

/* The executable of a rewritten def: lowered, generated, built. NULL with
 * the step and its message in *why when a step refuses. */
static st_exe *executable_of(const st_def *d, const char **why) {
    st_err err = {0};
    st_rw *rw = st_rw_new(cx, reg);
    const st_def *low = st_rewrite_def(rw, st_default_lowering(cx, reg), d, &err);
    st_rw_free(rw);
    if (!low) {
        *why = text_of("lower-opencl refuses: %s", short_message(err.message));
        return NULL;
    }
    /* the executable keeps a pointer to its code: it lives in the arena */
    st_code *code = st_arena_alloc(ar, sizeof *code);
    ck_assert(code != NULL);
    if (!st_codegen(cx, low, ar, code, &err)) {
        *why = text_of("codegen refuses: %s", short_message(err.message));
        return NULL;
    }
    st_exe *exe = st_exe_build(device(), code, &err);
    if (!exe) *why = text_of("the build fails: %s", short_message(err.message));
    return exe;
}

/* Run exe and the interpreter on seeded inputs of orig with `sets`: NULL
 * when they agree, else what went wrong. */
static const char *run_disagrees(st_exe *exe, const st_def *orig, const char *sets) {
    st_arena *a = st_arena_new();
    st_inputs *in = st_inputs_new(cx, orig, a);
    ck_assert(a != NULL && in != NULL);
    st_err err = {0};
    char buf[256];
    snprintf(buf, sizeof buf, "%s", sets);
    char *save = NULL;
    for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
        ck_assert_msg(st_inputs_set(in, tok, &err), "the test's inputs: %s: %s", tok, err.message);
    const st_value *args;
    const st_binding *env;
    size_t nenv;
    ck_assert_msg(st_inputs_generate(in, 7, &err) && st_inputs_finish(in, &args, &env, &nenv, &err),
                  "the test's inputs, %s: %s", sets, err.message);
    st_expected want;
    st_value got;
    const char *why = NULL;
    st_launch *l = NULL;
    if (!st_eval_expected(cx, orig, args, env, nenv, a, &want, &err))
        why = text_of("the interpreter fails: %s", short_message(err.message));
    else if (!(l = st_launch_new(exe, args, env, nenv, &err)))
        why = text_of("the launch is refused: %s", short_message(err.message));
    else if (!st_launch_run(l, NULL, &err))
        why = text_of("the run fails: %s", short_message(err.message));
    else if (!st_launch_read(l, a, &got, &err))
        why = text_of("reading the results fails: %s", short_message(err.message));
    else if (!st_expected_agree(&got, &want, ST_TOLERANCE, &err))
        why = text_of("wrong result: %s", short_message(err.message));
    st_launch_free(l);
    st_arena_free(a);
    return why;
}

/* ------------------------------------------------------------------------ */
/* The property                                                             */
/* ------------------------------------------------------------------------ */

START_TEST(every_shape_runs_as_the_interpreter_says) {
    pair pc = pair_at(_i);
    program p = program_at(ar, pc.program);
    const strategy_case *s = &strategies[pc.strategy];
    const char *text = s->text ? s->text : st_default_strategy(s->default_for);
    const char *src = program_text(ar, &p, s->facts);
    const char *label = text_of("%s under %s", p.label, s->name);
    fprintf(stderr, "shapes %d: %s\n", _i, label);
    const st_def *orig = def_of(src);
    st_err err = {0};
    const st_def *rw = rewritten(orig, text, &err);
    if (!rw) {
        /* a rule's condition said no: the one outcome that is not a run */
        fprintf(stderr, "SKIP %s, every N: %s\n", label, short_message(err.message));
        return;
    }
    const char *why = NULL;
    st_exe *exe = executable_of(rw, &why);
    faults f = {0};
    if (!exe) fault(&f, "FAIL %s, every N: %s", label, why);
    for (int k = 0; exe && k < N_LENGTHS; k++) {
        int64_t n = s->facts ? exact_lengths[k] : lengths[k];
        why = run_disagrees(exe, orig, text_of("N=%lld%s", (long long)n, p.extra));
        if (why) fault(&f, "FAIL %s, N=%lld: %s", label, (long long)n, why);
    }
    if (exe) st_exe_free(exe);
    if (f.n) st_buf_printf(&f.text, "--- program ---\n%s--- strategy ---\n%s\n", src, text);
    no_faults(&f);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* strata run without -s, wherever -s id runs                               */
/* ------------------------------------------------------------------------ */

/* Shapes the issue names (a map or a scan into a scan, a consumer other
 * than let, a scan or a histogram inside a map) and plain ones. */
static const char *const cli_programs[] = {
    "var|none|i32|top",    "map|none|f32|top",           "scan|none|i32|top",
    "map|reduce|i32|top",  "zip-of-maps|scatter|(i32,f32)|top", "var|let|i64|in-map",
    "rows:var|none|[K]i32|top", "hist:var|i32|in-map",
};

/* The program labelled so. */
static program program_named(const char *label) {
    for (int i = 0; i < N_PROGRAMS; i++) {
        program p = program_at(ar, i);
        if (!strcmp(p.label, label)) return p;
    }
    ck_abort_msg("no program is labelled %s", label);
    return (program){0};
}

/* NAME=VALUE pairs as strata run's options: sizes of arrays by --size,
 * scalar parameters (H, and N and M where they are) by --input. */
static void size_args(const program *p, const char *sets, const char **argv, int *argc) {
    char *buf = (char *)text_of("%s", sets), *save = NULL;
    for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        bool scalar = tok[0] == 'H' || p->scalar_sizes;
        argv[(*argc)++] = scalar ? "--input" : "--size";
        argv[(*argc)++] = tok;
    }
}

/* strata run PROG [-s STRATEGY] --check at one length: its exit status. */
static int cli_run(cli *c, const program *p, const char *path, const char *strategy, int64_t n, char **err) {
    const char *argv[24] = {"run", path, "--check", "--results", arena_text(c->a, "%s/no-results", c->dir)};
    int argc = 5;
    if (strategy) {
        argv[argc++] = "-s";
        argv[argc++] = strategy;
    }
    size_args(p, text_of("N=%lld%s", (long long)n, p->extra), argv, &argc);
    argv[argc] = NULL;
    char *out;
    return cli_strata(c, argv, &out, err);
}

/* Without -s strata takes the exported best variant, else the default
 * strategy; --results points at an empty folder so it is the default. */
START_TEST(plain_run_succeeds_wherever_id_does) {
    cli c;
    cli_open(&c, "shapes");
    faults f = {0};
    for (size_t i = 0; i < sizeof cli_programs / sizeof *cli_programs; i++) {
        program p = program_named(cli_programs[i]);
        const char *path = cli_file(&c, text_of("p%zu", i), program_text(ar, &p, false));
        /* the first length that breaks is enough: the message stays short */
        for (int k = 0; k < N_LENGTHS; k++) {
            char *err;
            if (cli_run(&c, &p, path, "id", lengths[k], &err) != 0) continue;
            if (cli_run(&c, &p, path, NULL, lengths[k], &err) == 0) continue;
            const char *e = strstr(err, "error");
            /* the program in the log; Check's message holds only the lines */
            fprintf(stderr, "FAIL %s under plain `strata run`, N=%lld:\n%s", p.label, (long long)lengths[k],
                    program_text(ar, &p, false));
            fault(&f, "FAIL %s, N=%lld: `strata run -s id` succeeds, `strata run` fails: %s", p.label,
                  (long long)lengths[k], short_message(e ? e : err));
            break;
        }
    }
    cli_close(&c);
    no_faults(&f);
}
END_TEST

static Suite *shapes_suite(void) {
    Suite *s = suite_create("shapes");
    TCase *runs = tcase_create("runs");
    /* the whole product's pairs are many but each is short; a hang is one
     * pair's timeout, not the suite's */
    tcase_set_timeout(runs, 300);
    tcase_add_checked_fixture(runs, rules_setup, pipeline_teardown);
    tcase_add_loop_test(runs, every_shape_runs_as_the_interpreter_says, 0, pair_count());
    suite_add_tcase(s, runs);
    TCase *cl = tcase_create("cli");
    tcase_set_timeout(cl, 600);
    tcase_add_checked_fixture(cl, rules_setup, rules_teardown);
    tcase_add_test(cl, plain_run_succeeds_wherever_id_does);
    suite_add_tcase(s, cl);
    return s;
}

int main(void) { return run_suite(shapes_suite()); }
