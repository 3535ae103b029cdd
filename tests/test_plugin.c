/* tests/test_plugin.c — rules from shared modules (rewrite/plugin.h).
 *
 *   load        the example plugin (plugins/kogge_stone.c) loads, its
 *               rules carry its path, and a good test module loads too
 *   refusals    a missing file, a directory, a file that is not a module, a
 *               module that is not a plugin, other ABIs, clashing names (all
 *               or nothing), no rules, a failing register function, an
 *               undefined symbol, a plugin given twice: each refused with a
 *               message that says so, the registry left as it was
 *   examples    every example scan program through kogge-stone-scan and
 *               reduce-then-scan equals the interpreter on the default
 *               device (PoCL on CI), for lengths 1, 7, 1000, 65536 and
 *               1000003, under several BS and compositions, the fused forms
 *               (scanomap, maposcanomap) too; the Kogge-Stone scan equals
 *               prefix sums computed in C on the device, and the
 *               interpreter's own result on many tiny and prime lengths
 *   cli         --plugin on every command, `strata strategies` naming the
 *               origin, the refusals as a user sees them (exit 1)
 *   explore     a space over a plugin rule explored, recorded with the
 *               plugin's SHA-256, exported, resumed and exported only with it
 *   out of tree a plugin built in a temporary folder against an installation
 *               (meson install --destdir) with only the installed headers and
 *               the pkg-config file, loaded by the installed strata */
#define _XOPEN_SOURCE 700 /* realpath */
#include "explore/explore.h"
#include "pipeline_fixture.h"
#include "run_strata.h"

#include <elf.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>


static const char *test_module_in(st_arena *a, const char *kind) {
    return arena_text(a, "%s/plugin_%s.so", env_path("STRATA_TEST_PLUGINS"), kind);
}
#define test_module(kind) test_module_in(ar, kind)

static void load_ok(const char *path) {
    st_err err = {0};
    ck_assert_msg(st_registry_load_plugin(reg, path, &err), "%s: %s", path, err.message);
}

/* ------------------------------------------------------------------------ */
/* Loading                                                                  */
/* ------------------------------------------------------------------------ */

START_TEST(example_plugin_loads_with_its_origin) {
    size_t before = st_registry_count(reg);
    ck_assert_ptr_null(st_registry_find(reg, "kogge-stone"));
    load_ok(env_path("STRATA_PLUGIN"));
    ck_assert_uint_eq(st_registry_count(reg), before + 3);
    char abs[PATH_MAX];
    ck_assert(realpath(env_path("STRATA_PLUGIN"), abs) != NULL);
    ck_assert_uint_eq(st_registry_plugin_count(reg), 1);
    ck_assert_str_eq(st_registry_plugin_path(reg, 0), abs);
    ck_assert_ptr_null(st_registry_plugin_path(reg, 1));
    const char *names[] = {"kogge-stone", "kogge-stone-scan", "reduce-then-scan"};
    for (size_t i = 0; i < 3; i++) {
        const st_rule *r = st_registry_find(reg, names[i]);
        ck_assert_msg(r != NULL, "%s is not registered", names[i]);
        ck_assert_str_eq(r->origin, abs);
        ck_assert_uint_eq(r->nparams, i == 0 ? 0 : 1);
        if (i) ck_assert_str_eq(r->params[0].name, "BS");
    }
    /* the built-ins keep theirs */
    ck_assert_str_eq(st_registry_find(reg, "parallel-scan")->origin, "built-in");
    /* and the rule is used by name in a strategy, its parameters checked */
    st_err err = {0};
    ck_assert(st_strategy_parse(cx, reg, "s", "first(scan, kogge-stone-scan(BS=256))", &err) != NULL);
    ck_assert(st_strategy_parse(cx, reg, "s", "kogge-stone-scan(BS=0)", &err) == NULL);
    ck_assert_has(err.message, "BS");
}
END_TEST

START_TEST(good_test_module_loads_next_to_the_example) {
    load_ok(env_path("STRATA_PLUGIN"));
    load_ok(test_module("good"));
    ck_assert_uint_eq(st_registry_plugin_count(reg), 2);
    ck_assert_has(st_registry_find(reg, "test-good-rule")->origin, "plugin_good.so");
}
END_TEST

/* A parameter that takes names (MEM=global|local): written by name, printed
 * back by name, its value the name's index. */
START_TEST(named_parameters_read_and_print_by_name) {
    load_ok(test_module("good"));
    st_err err = {0};
    const st_strategy *s = st_strategy_parse(cx, reg, "s", "first(scan, test-good-rule(WHERE=local))", &err);
    ck_assert_msg(s != NULL, "%s", err.message);
    ck_assert_int_eq(s->a->args[0], 1);
    st_buf b = {0};
    st_strategy_print(s, &b);
    ck_assert_str_eq(b.data, "first(scan, test-good-rule(WHERE=local))");
    st_buf_free(&b);
    s = st_strategy_parse(cx, reg, "s", "test-good-rule", &err);
    ck_assert(s != NULL);
    ck_assert_int_eq(s->args[0], 0); /* the default, global */
    ck_assert(st_strategy_parse(cx, reg, "s", "test-good-rule(WHERE=shared)", &err) == NULL);
    ck_assert_has(err.message, "WHERE is one of global, local, not `shared`");
    ck_assert_int_eq(err.loc.col, 22);
    ck_assert_int_lt(err.arg, 0); /* a typo, not a point an exploration skips */
    ck_assert(st_strategy_parse(cx, reg, "s", "test-good-rule(WHERE=1)", &err) == NULL);
    ck_assert_has(err.message, "WHERE takes a name (global, local), not `1`");
    /* and the program rewrites and runs */
    const st_def *orig = example_def("prefix_sum");
    const st_def *now = apply(orig, "test-good-rule(WHERE=local)", "named");
    ck_assert_ptr_ne(now, orig);
}
END_TEST

/* Named parameters declared badly are refused like any bad declaration. */
static const char *const twice[] = {"a", "a", NULL}, *const unreadable[] = {"1x", NULL};
static const st_node *never(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)rw, (void)args, (void)why;
    return e;
}

START_TEST(badly_named_parameters_are_refused) {
    st_rule r = {.name = "named", .summary = "", .nparams = 1, .apply = never,
                 .params = {{.name = "P", .names = twice}}};
    st_err err = {0};
    ck_assert(!st_registry_add(reg, &r, &err));
    ck_assert_has(err.message, "takes the name `a` twice");
    r.params[0].names = unreadable;
    ck_assert(!st_registry_add(reg, &r, &err));
    ck_assert_has(err.message, "the strategy language cannot read");
    r.params[0].names = (const char *const[]){"x", "y", NULL};
    r.params[0].has_default = true;
    r.params[0].def = 2;
    ck_assert(!st_registry_add(reg, &r, &err));
    ck_assert_has(err.message, "badly");
    r.params[0].def = 1;
    ck_assert_msg(st_registry_add(reg, &r, &err), "%s", err.message);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Refusals                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct refusal {
    const char *module; /* a test module's kind, or a path when it has a '/' */
    const char *says;   /* in the message */
} refusal;

static const refusal refusals[] = {
    {"no_symbols", "not a strata plugin: it has no `strata_plugin_abi` symbol"},
    {"wrong_abi", "built for plugin ABI 1004, and this strata speaks ABI 4"},
    {"other_layout", "st_rule is"},
    {"clash", "a rule named `parallel-scan` exists already (from built-in)"},
    {"half_clash", "a rule named `parallel-scan` exists already"},
    {"ignores_clash", "a rule named `parallel-scan` exists already"},
    {"no_rules", "registered no rule"},
    {"refuses", "registration failed: this plugin needs a GPU with 128 KiB of local memory"},
    {"undefined", "st_no_such_function"},
    {"/no/such/plugin.so", "No such file or directory"},
    {"/tmp", "is a directory, not a regular file"},
};

START_TEST(each_refusal_leaves_the_registry_as_it_was) {
    const refusal *r = &refusals[_i];
    const char *path = strchr(r->module, '/') ? r->module : test_module(r->module);
    size_t before = st_registry_count(reg);
    st_err err = {0};
    ck_assert_msg(!st_registry_load_plugin(reg, path, &err), "%s was loaded", path);
    ck_assert_has(err.message, r->says);
    ck_assert_str_eq(err.loc.file, path); /* the message names the file */
    ck_assert_uint_eq(st_registry_count(reg), before);
    ck_assert_uint_eq(st_registry_plugin_count(reg), 0);
    ck_assert_ptr_null(st_registry_find(reg, "test-good-rule")); /* all or nothing */
    ck_assert_str_eq(st_registry_find(reg, "parallel-scan")->origin, "built-in");
    /* and a good plugin still loads after it */
    load_ok(env_path("STRATA_PLUGIN"));
}
END_TEST

START_TEST(a_file_that_is_not_a_module_is_refused) {
    char dir[256];
    scratch_make(dir, sizeof dir, "plugin-text");
    const char *path = text_of("%s/rule.so", dir);
    FILE *f = fopen(path, "w");
    ck_assert(f != NULL);
    fputs("this is not an ELF file\n", f);
    fclose(f);
    st_err err = {0};
    bool loaded = st_registry_load_plugin(reg, path, &err);
    scratch_remove(dir);
    ck_assert(!loaded);
    ck_assert_has(err.message, "cannot load the plugin");
}
END_TEST

START_TEST(a_plugin_given_twice_is_refused) {
    load_ok(env_path("STRATA_PLUGIN"));
    size_t before = st_registry_count(reg);
    st_err err = {0};
    /* by another path to the same file, too */
    char abs[PATH_MAX];
    ck_assert(realpath(env_path("STRATA_PLUGIN"), abs) != NULL);
    ck_assert(!st_registry_load_plugin(reg, abs, &err));
    ck_assert_has(err.message, "loaded already");
    ck_assert_uint_eq(st_registry_count(reg), before);
    ck_assert(!st_registry_load_plugin(reg, "", &err));
    ck_assert_has(err.message, "--plugin needs the path");
}
END_TEST

/* ------------------------------------------------------------------------ */
/* What a plugin's rule returns                                             */
/* ------------------------------------------------------------------------ */

/* What test-bad-result(K) (tests/plugins/bad_results.c) does wrong at each
 * K from 1 to 6, as strata says it of prefix_sum's scan of [N]f32. */
static const struct {
    int k;
    const char *says;
} broken_results[] = {
    {1, "returned an expression of type ([N]f32, [N]f32) in place of one of type [N]f32 (a rule never changes a type)"},
    {2, "failed with an error in the rule itself, not in the program: a rule built an ill-typed expression: "
        "scanSeq takes 3 arguments, but was given 2"},
    {3, "returned a cyclic expression: a let in it is inside itself"},
    {4, "returned an expression that uses the variable `ghost`, which is not bound there"},
    {5, "returned an expression with a `scanSeq` in it that is a copy of one of the context's nodes, not the node itself"},
    {6, "returned an expression with a `scan` in it that was not made in the context of the rewrite"},
};

/* A broken result is the rule's error (ST_ERR_RULE), which ends the
 * rewrite: no try, <+ or traversal moves past it as past a rule that does
 * not apply. */
START_TEST(a_broken_result_is_the_rules_error_and_ends_the_rewrite) {
    const char *module = test_module("bad_results");
    load_ok(module);
    char abs[PATH_MAX];
    ck_assert(realpath(module, abs) != NULL);
    static const char src[] = "def main(xs: [N]f32): [N]f32 = xs |> scan(+, 0.0)";
    st_err err = {0};
    const st_program *p = st_parse_program(cx, "p.strata", src, strlen(src), &err);
    ck_assert_msg(p != NULL, "%s", err.message);
    const char *const strategies[] = {"test-bad-result(K=1)", "try(test-bad-result(K=1))", "test-bad-result(K=1) <+ id",
                                      "topdown(test-bad-result(K=1))", "test-bad-composite(K=1)"};
    for (size_t i = 0; i < sizeof strategies / sizeof *strategies; i++) {
        const st_strategy *st = st_strategy_parse(cx, reg, "s", strategies[i], &err);
        ck_assert_msg(st != NULL, "%s", err.message);
        st_rw *rw = st_rw_new(cx, reg);
        st_err why = {0};
        ck_assert_msg(st_rewrite_def(rw, st, &p->defs[0], &why) == NULL, "`%s` rewrote", strategies[i]);
        st_rw_free(rw);
        ck_assert_msg(why.kind == ST_ERR_RULE, "`%s`: kind %d: %s", strategies[i], why.kind, why.message);
        ck_assert_has(why.message, text_of("the rule test-bad-result(K=1) of the plugin %s %s", abs, broken_results[0].says));
        /* placed at the node the rule was given */
        ck_assert_int_eq(why.loc.line, 1);
        ck_assert_int_eq(why.loc.col, 38);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The examples through the plugin's rule, on the device                    */
/* ------------------------------------------------------------------------ */

typedef struct example_case {
    const char *program;
    const char *strategy;
} example_case;

#define RTS(bs) "first(scan, reduce-then-scan(BS=" #bs "))"
#define KSS(bs) "first(scan, kogge-stone-scan(BS=" #bs "))"
static const example_case example_cases[] = {
    {"prefix_sum", "kogge-stone-scan(BS=256)"},
    {"prefix_sum", "kogge-stone-scan(BS=7)"},
    {"prefix_sum", "kogge-stone-scan(BS=1)"},
    {"prefix_sum", "kogge-stone-scan(BS=1024) ; first(scan, kogge-stone-scan(BS=32))"},
    {"prefix_sum", "kogge-stone-scan(BS=64) ; first(scan, parallel-scan(BS=64, BF=2, SE=4))"},
    {"advanced", KSS(64)},
    {"advanced", KSS(13)},
    {"linear_recurrence", KSS(128)},
    {"linear_recurrence", KSS(3)},
    {"filter", "first(let, fuse-map-scan) ; " KSS(100)},
    {"filter", "first(let, fuse-map-scan) ; first(let, fuse-scan-map) ; first(let, fuse-scan-scatter) ; " KSS(64)},
    {"prefix_sum", "reduce-then-scan(BS=256)"},
    {"prefix_sum", "reduce-then-scan(BS=7)"},
    {"prefix_sum", "reduce-then-scan(BS=1)"},
    /* a hierarchy: the scan of the totals by the rule again */
    {"prefix_sum", "reduce-then-scan(BS=1024) ; first(scan, reduce-then-scan(BS=32))"},
    /* and by a built-in rule */
    {"prefix_sum", "reduce-then-scan(BS=512) ; first(scan, parallel-scan(BS=64, BF=2, SE=4))"},
    {"advanced", RTS(64)},
    {"advanced", RTS(13)},
    {"linear_recurrence", RTS(128)},
    {"linear_recurrence", RTS(3)},
    {"filter", RTS(256)},
    /* the fused forms: a fold (scanomap), then a post-function and a scatter */
    {"filter", "first(let, fuse-map-scan) ; " RTS(100)},
    {"filter", "first(let, fuse-map-scan) ; first(let, fuse-scan-map) ; first(let, fuse-scan-scatter) ; " RTS(64)},
};

static const int64_t example_lengths[] = {1, 7, 1000, 65536, 1000003};

START_TEST(examples_through_the_plugin_equal_the_interpreter) {
    load_ok(env_path("STRATA_PLUGIN"));
    const example_case *c = &example_cases[_i];
    const char *label = text_of("%s under %s", c->program, c->strategy);
    const st_def *orig = example_def(c->program);
    const st_def *now = apply(orig, c->strategy, label);
    st_code code = generated(lowered(now, label), label);
    ck_assert_uint_ge(code.nkernels, 3); /* the blocks, the scan of their totals, the rest */
    st_exe *exe = built(&code, label);
    for (size_t i = 0; i < sizeof example_lengths / sizeof *example_lengths; i++)
        if (st_test_length(example_lengths[i], _i))
            agrees(exe, orig, text_of("N=%lld", (long long)example_lengths[i]), 7 + i, label);
    st_exe_free(exe);
}
END_TEST

/* ---- the Kogge-Stone scan against C ---- */

static const char *const ks_strategies[] = {
    "kogge-stone-scan(BS=256)",
    "kogge-stone-scan(BS=7)",
    "kogge-stone-scan(BS=1)",
    "kogge-stone-scan(BS=1024) ; first(scan, kogge-stone-scan(BS=32))",
    "kogge-stone-scan(BS=64) ; first(scan, parallel-scan(BS=64, BF=2, SE=4))",
};

/* Seeded xs of n elements through exe and through the interpreter: both
 * give the inclusive sums C computes (wrapping, as i32 does on the device). */
static void sums_equal_c(st_exe *exe, const st_def *orig, int64_t n, uint64_t seed, const char *label) {
    st_inputs *in = st_inputs_new(cx, orig, ar);
    st_err err = {0};
    const st_value *args;
    const st_binding *env;
    size_t nenv;
    ck_assert_msg(in && st_inputs_set(in, text_of("N=%lld", (long long)n), &err) && st_inputs_generate(in, seed, &err) &&
                      st_inputs_finish(in, &args, &env, &nenv, &err), "%s: %s", label, err.message);
    const int32_t *xs = args[0].u.a.data;
    int32_t *want = st_arena_alloc(ar, (size_t)n * sizeof *want);
    uint32_t acc = 0;
    for (int64_t i = 0; i < n; i++) want[i] = (int32_t)(acc += (uint32_t)xs[i]);
    st_value interp, got;
    ck_assert_msg(st_eval(cx, orig, args, env, nenv, ar, &interp, &err), "%s: %s", label, err.message);
    st_launch *l = st_launch_new(exe, args, env, nenv, &err);
    ck_assert_msg(l && st_launch_run(l, NULL, &err) && st_launch_read(l, ar, &got, &err), "%s: %s", label, err.message);
    st_launch_free(l);
    const st_value *outs[] = {&interp, &got};
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(outs[k]->u.a.dims[0], n);
        const int32_t *v = outs[k]->u.a.data;
        for (int64_t i = 0; i < n; i++)
            ck_assert_msg(v[i] == want[i], "%s, N=%lld: the %s gives %d at %lld, C %d", label, (long long)n,
                          k ? "device" : "interpreter", v[i], (long long)i, want[i]);
    }
}

START_TEST(kogge_stone_sums_equal_c) {
    load_ok(env_path("STRATA_PLUGIN"));
    const char *strategy = ks_strategies[_i];
    const st_def *orig = example_def("prefix_sum_i32");
    st_exe *exe = built((st_code[]){generated(lowered(apply(orig, strategy, strategy), strategy), strategy)}, strategy);
    static const int64_t lengths[] = {1, 7, 1000, 1000003};
    for (size_t i = 0; i < sizeof lengths / sizeof *lengths; i++)
        if (st_test_length(lengths[i], _i)) sums_equal_c(exe, orig, lengths[i], 11 + i, strategy);
    st_exe_free(exe);
}
END_TEST

/* The rewritten program gives the interpreter's result on random inputs of
 * many lengths, tiny and prime ones among them, for operators that do not
 * commute (affine maps), pairs, and the fused forms. */
START_TEST(kogge_stone_keeps_the_interpreters_result) {
    load_ok(env_path("STRATA_PLUGIN"));
    static const example_case cases[] = {
        {"prefix_sum_i32", "kogge-stone-scan(BS=8)"},
        {"prefix_sum_i32", "kogge-stone-scan(BS=5) ; first(scan, kogge-stone-scan(BS=3))"},
        {"linear_recurrence", KSS(4)},
        {"advanced", KSS(16)},
        {"filter", "first(let, fuse-map-scan) ; first(let, fuse-scan-map) ; first(let, fuse-scan-scatter) ; " KSS(6)},
    };
    static const int64_t lengths[] = {1, 2, 3, 4, 5, 7, 8, 13, 31, 64, 97, 257, 1009};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const st_def *orig = example_def(cases[c].program), *now = apply(orig, cases[c].strategy, cases[c].strategy);
        for (size_t i = 0; i < sizeof lengths / sizeof *lengths; i++) {
            st_inputs *in = st_inputs_new(cx, orig, ar);
            st_err err = {0};
            const st_value *args;
            const st_binding *env;
            size_t nenv;
            st_expected want;
            st_value got;
            ck_assert_msg(in && st_inputs_set(in, text_of("N=%lld", (long long)lengths[i]), &err) &&
                              st_inputs_generate(in, 3 + i, &err) && st_inputs_finish(in, &args, &env, &nenv, &err) &&
                              st_eval_expected(cx, orig, args, env, nenv, ar, &want, &err) &&
                              st_eval(cx, now, args, env, nenv, ar, &got, &err),
                          "%s: %s", cases[c].strategy, err.message);
            ck_assert_msg(st_expected_agree(&got, &want, ST_TOLERANCE, &err), "%s under %s, N=%lld: %s", cases[c].program,
                          cases[c].strategy, (long long)lengths[i], err.message);
        }
    }
}
END_TEST

/* The rule's own condition: one block's scan, a constant length, and it
 * says so; on a constant length at the top level each step is a kernel. */
START_TEST(kogge_stone_states_its_condition) {
    load_ok(env_path("STRATA_PLUGIN"));
    const st_def *orig = example_def("prefix_sum");
    st_err err = {0};
    const st_strategy *s = st_strategy_parse(cx, reg, "s", "kogge-stone", &err);
    ck_assert(s != NULL);
    st_rw *rw = st_rw_new(cx, reg);
    ck_assert(st_rewrite_def(rw, s, orig, &err) == NULL);
    st_rw_free(rw);
    ck_assert_has(err.message, "not a constant");
    ck_assert_has(err.message, "kogge-stone-scan");
    const st_def *fixed = def_of("def main(xs: [1000]i32): [1000]i32 = xs |> scan(+, 0)\n");
    const st_def *now = apply(fixed, "kogge-stone", "fixed");
    st_code code = generated(lowered(now, "fixed"), "fixed");
    ck_assert_uint_eq(code.nkernels, 10); /* ceil(log2 1000) steps */
    st_exe *exe = built(&code, "fixed");
    agrees(exe, fixed, "", 1, "fixed");
    st_exe_free(exe);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The command line                                                         */
/* ------------------------------------------------------------------------ */

/* The CLI's scratch, with the program and the plugin the tests run. */
typedef struct plugin_cli {
    cli c;
    const char *program, *plugin;
} plugin_cli;

static void cli_setup(plugin_cli *p) {
    cli_open(&p->c, "plugin");
    p->program = arena_text(p->c.a, "%s/prefix_sum.strata", getenv("STRATA_EXAMPLES"));
    p->plugin = env_path("STRATA_PLUGIN");
}

static void cli_teardown(plugin_cli *p) { cli_close(&p->c); }

static int strata(plugin_cli *p, const char *const *args, char **out, char **err) {
    return cli_strata(&p->c, args, out, err);
}

START_TEST(strategies_lists_plugin_rules_with_their_origin) {
    plugin_cli c;
    cli_setup(&c);
    char *out, *err, abs[PATH_MAX];
    ck_assert(realpath(c.plugin, abs) != NULL);
    ck_assert_int_eq(strata(&c, ARGS("strategies", "--plugin", c.plugin), &out, &err), 0);
    ck_assert_has(out, arena_text(c.c.a, "reduce-then-scan(BS)    [%s]", abs));
    ck_assert_has(out, arena_text(c.c.a, "kogge-stone-scan(BS)    [%s]", abs));
    ck_assert_has(out, arena_text(c.c.a, "kogge-stone    [%s]", abs));
    ck_assert_has(out, "parallel-scan(BS, BF, TD, SE)    [built-in]");
    ck_assert_int_eq(strata(&c, ARGS("strategies"), &out, &err), 0);
    ck_assert_ptr_null(strstr(out, "reduce-then-scan"));
    ck_assert_int_eq(strata(&c, ARGS("strategies", "--plugin", test_module_in(c.c.a, "good")), &out, &err), 0);
    ck_assert_has(out, "WHERE a named parameter (ignored); global | local, default global");
    /* --markdown: a plugin's rules in a section of their own, only when it is loaded */
    ck_assert_int_eq(strata(&c, ARGS("strategies", "--markdown", "--plugin", c.plugin), &out, &err), 0);
    ck_assert_has(out, arena_text(c.c.a, "## Rules of the plugin `%s`", abs));
    ck_assert_has(out, "| `kogge-stone-scan(BS)` | composite | ");
    ck_assert_has(out, "| `parallel-scan(BS, BF, TD, SE)` | composite | ");
    ck_assert_int_eq(strata(&c, ARGS("strategies", "--markdown"), &out, &err), 0);
    ck_assert_ptr_null(strstr(out, "kogge-stone"));
    ck_assert_ptr_null(strstr(out, "## Rules of the plugin"));
    cli_teardown(&c);
}
END_TEST

START_TEST(rewrite_and_run_use_plugin_rules) {
    plugin_cli c;
    cli_setup(&c);
    char *out, *err;
    ck_assert_int_eq(strata(&c, ARGS("rewrite", c.program, "-s", "reduce-then-scan(BS=64)"), &out, &err), 1);
    ck_assert_has(err, "unknown rule `reduce-then-scan`");
    ck_assert_has(err, "--plugin");
    int rc = strata(&c, ARGS("rewrite", c.program, "--plugin", c.plugin, "-s", "reduce-then-scan(BS=64)", "--trace"), &out, &err);
    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_has(out, "reduce(+, 0.0)");
    ck_assert_has(out, "scanSeq(+,");
    ck_assert_has(err, "reduce-then-scan(BS=64)");
    ck_assert_has(err, "pad-scan(BS=64)");
    ck_assert_has(err, "brent-kung-step(BF=64)"); /* what the composite is made of */
    rc = strata(&c, ARGS("run", c.program, "--plugin", c.plugin, "-s", "reduce-then-scan(BS=100)", "--size", "N=4099", "--check"),
                &out, &err);
    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_has(err, "check: the results equal the interpreter's");
    cli_teardown(&c);
}
END_TEST

/* Every command takes --plugin, says so in its help, and refuses a bad one. */
START_TEST(every_command_takes_plugin_and_refuses_a_bad_one) {
    plugin_cli c;
    cli_setup(&c);
    const char *bad = test_module_in(c.c.a, "wrong_abi"), *out_dir = arena_text(c.c.a, "%s/o", c.c.dir);
    const char *const *commands[] = {
        ARGS("check", c.program, "--plugin", bad),
        ARGS("print", c.program, "--plugin", bad),
        ARGS("eval", c.program, "--size", "N=10", "--plugin", bad),
        ARGS("rewrite", c.program, "-s", "id", "--plugin", bad),
        ARGS("run", c.program, "--size", "N=10", "--plugin", bad),
        ARGS("explore", c.program, "--space", "id", "--out", out_dir, "--plugin", bad),
        ARGS("merge", out_dir, "--out", out_dir, "--plugin", bad),
        ARGS("export", out_dir, "--plugin", bad),
        ARGS("strategies", "--plugin", bad),
        ARGS("devices", "--plugin", bad),
    };
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
        char *out, *err;
        ck_assert_msg(strata(&c, commands[i], &out, &err) == 1, "%s: exit status", commands[i][0]);
        ck_assert_has(err, "plugin_wrong_abi.so: error: the plugin was built for plugin ABI 1004");
        ck_assert_int_eq(strata(&c, ARGS(commands[i][0], "--help"), &out, &err), 0);
        ck_assert_has(out, "--plugin PATH.so");
    }
    /* nothing was written */
    struct stat st;
    ck_assert_int_ne(stat(out_dir, &st), 0);
    /* and each refusal reads as it should from the command line */
    for (size_t i = 0; i < sizeof refusals / sizeof *refusals; i++) {
        const char *path = strchr(refusals[i].module, '/') ? refusals[i].module : test_module_in(c.c.a, refusals[i].module);
        char *out, *err;
        ck_assert_int_eq(strata(&c, ARGS("strategies", "--plugin", path), &out, &err), 1);
        ck_assert_has(err, refusals[i].says);
    }
    char *out, *err;
    ck_assert_int_eq(strata(&c, ARGS("strategies", "--plugin", c.plugin, "--plugin", c.plugin), &out, &err), 1);
    ck_assert_has(err, "loaded already");
    ck_assert_int_eq(strata(&c, ARGS("strategies", "--plugin"), &out, &err), 1);
    ck_assert_has(err, "`--plugin` needs a value");
    cli_teardown(&c);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Exploring with a plugin rule                                             */
/* ------------------------------------------------------------------------ */

START_TEST(a_plugin_rule_is_explored_and_exported_like_a_built_in) {
    plugin_cli c;
    cli_setup(&c);
    const char *dir = arena_text(c.c.a, "%s/explored", c.c.dir), *results = arena_text(c.c.a, "%s/results", c.c.dir),
               *cache = arena_text(c.c.a, "%s/cache", c.c.dir);
    const char *space = "reduce-then-scan(BS=[16, 64, 256])";
    char *out, *err;
    /* without the plugin the space does not parse, and nothing is written */
    ck_assert_int_eq(strata(&c, ARGS("explore", c.program, "--space", space, "--size", "N=3001", "--out", dir), &out, &err), 1);
    ck_assert_has(err, "unknown rule `reduce-then-scan`");
    int rc = strata(&c, ARGS("explore", c.program, "--plugin", c.plugin, "--space", space, "--size", "N=3001", "--runs", "7",
                             "--out", dir, "--cache", cache),
                    &out, &err);
    ck_assert_msg(rc == 0, "explore failed:\n%s", err);
    ck_assert_has(out, "status: ok 3");
    ck_assert_has(out, "best: reduce-then-scan(BS=");
    /* explore.json names the plugin and its content */
    char abs[PATH_MAX], sha[65];
    ck_assert(realpath(c.plugin, abs) != NULL);
    size_t len;
    char *module = slurp_file(c.c.a, abs, &len);
    ck_assert(module != NULL);
    st_sha256_hex(module, len, sha);
    const char *meta = slurp_file(c.c.a, arena_text(c.c.a, "%s/explore.json", dir), NULL);
    ck_assert_has(meta, arena_text(c.c.a, "\"plugins\": [{\"path\": \"%s\", \"sha256\": \"%s\"}]", abs, sha));
    /* resumed with it: nothing to redo; with another plugin as well: another exploration */
    rc = strata(&c, ARGS("explore", c.program, "--plugin", c.plugin, "--space", space, "--size", "N=3001", "--runs", "7",
                         "--out", dir, "--cache", cache),
                &out, &err);
    ck_assert_msg(rc == 0, "resume failed:\n%s", err);
    rc = strata(&c, ARGS("explore", c.program, "--plugin", c.plugin, "--plugin", test_module_in(c.c.a, "good"), "--space", space,
                         "--size", "N=3001", "--out", dir, "--cache", cache),
                &out, &err);
    ck_assert_int_eq(rc, 1);
    ck_assert_has(err, "another exploration");
    ck_assert_has(err, "plugin=plugin_good.so");
    /* export needs the plugin, and says which */
    ck_assert_int_eq(strata(&c, ARGS("export", dir, "--into", results, "--cache", cache), &out, &err), 1);
    ck_assert_has(err, arena_text(c.c.a, "give it with --plugin %s", abs));
    rc = strata(&c, ARGS("export", dir, "--into", results, "--cache", cache, "--plugin", c.plugin), &out, &err);
    ck_assert_msg(rc == 0, "export failed:\n%s", err);
    ck_assert_has(out, "best of 3: reduce-then-scan(BS=");
    const char *record = slurp_file(c.c.a, arena_text(c.c.a, "%s/record.json", export_folder(c.c.a, results, "prefix_sum")), NULL);
    ck_assert(record != NULL);
    ck_assert_has(record, arena_text(c.c.a, "\"sha256\": \"%s\"", sha));
    /* run without -s uses the export when it has the plugin, else warns and uses the default */
    rc = strata(&c, ARGS("run", c.program, "--plugin", c.plugin, "--results", results, "--size", "N=500", "--check"), &out, &err);
    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_has(err, "strategy: reduce-then-scan(BS=");
    rc = strata(&c, ARGS("run", c.program, "--results", results, "--size", "N=500", "--check"), &out, &err);
    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_has(err, "give it with --plugin");
    ck_assert_has(err, "(the default for a ");
    cli_teardown(&c);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* A plugin built out of the tree                                           */
/* ------------------------------------------------------------------------ */

/* What a plugin author writes, with nothing of strata's tree at hand. */
static const char *const outside_source =
    "#include <rewrite/plugin.h>\n"
    "\n"
    "/* scan(op, z, xs) -> scanSeq(op, z, xs), for plain scans */\n"
    "static const st_node *to_seq(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {\n"
    "    (void)args;\n"
    "    st_scan_form s;\n"
    "    if (!st_scan_form_of(e, &s) || s.fold) return st_no_match(why, \"%s\", \"outside-seq rewrites a plain scan\");\n"
    "    st_build B = st_build_of(rw, why), *b = &B;\n"
    "    return ST_PRIM(b, ST_PRIM_SCAN_SEQ, s.op, s.z, s.xs);\n"
    "}\n"
    "\n"
    "static const st_rule rule = {.name = \"outside-seq\", .summary = \"a scan in one thread, from outside\",\n"
    "                             .conditions = \"a plain scan\", .apply = to_seq};\n"
    "\n"
    "static bool register_rules(st_plugin *p, st_err *err) { return st_plugin_add_rule(p, &rule, err); }\n"
    "\n"
    "ST_PLUGIN(register_rules)\n";

START_TEST(a_plugin_built_out_of_tree_loads_and_works) {
    plugin_cli c;
    cli_setup(&c);
    const char *stage = arena_text(c.c.a, "%s/stage", c.c.dir), *src = arena_text(c.c.a, "%s/src", c.c.dir);
    ck_assert_int_eq(mkdir(src, 0755), 0);
    FILE *f = fopen(arena_text(c.c.a, "%s/outside.c", src), "w");
    ck_assert(f != NULL);
    fputs(outside_source, f);
    fclose(f);
    const char *prefix = env_path("STRATA_PREFIX"), *libdir = env_path("STRATA_LIBDIR");
    const char *lib = libdir[0] == '/' ? libdir : arena_text(c.c.a, "%s/%s", prefix, libdir);
    /* install into a stage, build the plugin against it alone (pkg-config
     * with the stage as its sysroot), and load it into the installed strata */
    const char *script = arena_text(c.c.a,
        "set -e\n"
        "'%s' install -C '%s' --no-rebuild --destdir '%s' >'%s/install.log' 2>&1 || { cat '%s/install.log'; exit 3; }\n"
        "export PKG_CONFIG_PATH='%s%s/pkgconfig' PKG_CONFIG_SYSROOT_DIR='%s' PKG_CONFIG_LIBDIR=\n"
        "cd '%s'\n"
        "flags=$(pkg-config --cflags strata)\n"
        "echo \"cflags: $flags\"\n"
        "'%s' -std=c17 -Wall -Wextra -Werror -shared -fPIC $flags outside.c -o outside.so\n"
        "exec 2>&1\n"
        "'%s%s/bin/strata' strategies --plugin ./outside.so | grep -A1 '^outside-seq'\n"
        "'%s%s/bin/strata' run '%s' --plugin ./outside.so -s outside-seq --size N=1001 --check\n",
        env_path("STRATA_MESON"), env_path("STRATA_BUILD_ROOT"), stage, c.c.dir, c.c.dir, stage, lib, stage, src,
        env_path("STRATA_CC"), stage, prefix, stage, prefix, c.program);
    const char *sh = arena_text(c.c.a, "%s/outside.sh", c.c.dir);
    f = fopen(sh, "w");
    ck_assert(f != NULL);
    fputs(script, f);
    fclose(f);
    char *out, *err;
    int rc = program_spawn(c.c.a, c.c.dir, environ, "/bin/sh", ARGS(sh), &out, &err);
    ck_assert_msg(rc == 0, "the out-of-tree plugin failed (exit %d):\n%.1500s\n%.1500s", rc, out, err);
    ck_assert_has(out, arena_text(c.c.a, "cflags: -I%s%s/include/strata", stage, prefix));
    ck_assert_has(out, arena_text(c.c.a, "outside-seq    [%s/outside.so]", src));
    ck_assert_has(out, "check: the results equal the interpreter's");
    /* only what a plugin author gets was installed for it: the ABI's headers */
    struct stat st;
    ck_assert_int_eq(stat(arena_text(c.c.a, "%s%s/include/strata/rewrite/plugin.h", stage, prefix), &st), 0);
    ck_assert_int_eq(stat(arena_text(c.c.a, "%s%s/include/strata/ir/nodes.h", stage, prefix), &st), 0);
    ck_assert_int_ne(stat(arena_text(c.c.a, "%s%s/include/strata/rewrite/rewrite.h", stage, prefix), &st), 0);
    ck_assert_int_ne(stat(arena_text(c.c.a, "%s%s/include/strata/ir/ir.h", stage, prefix), &st), 0);
    ck_assert_int_eq(stat(arena_text(c.c.a, "%s%s/strata/plugins/kogge_stone.so", stage, lib), &st), 0);
    cli_teardown(&c);
}
END_TEST

/* A process that dies making or running a point is a crash, and the
 * exploration goes on: here a plugin's rule that aborts at K = 2 (with a
 * plugin loaded, each point is made into code in a child first). */
START_TEST(a_point_whose_process_dies_is_a_crash_and_the_rest_goes_on) {
    plugin_cli c;
    cli_setup(&c);
    const char *dir = arena_text(c.c.a, "%s/explored", c.c.dir), *cache = arena_text(c.c.a, "%s/cache", c.c.dir);
    char *out, *err;
    int rc = strata(&c, ARGS("explore", c.program, "--plugin", test_module_in(c.c.a, "crashes"), "--space",
                             "test-crash(K=[2, 0])", "--size", "N=4096", "--out", dir, "--cache", cache),
                    &out, &err);
    ck_assert_msg(rc == 0, "explore failed:\n%s", err);
    ck_assert_has(out, "best: test-crash(K=0)");
    const char *records = slurp_file(c.c.a, arena_text(c.c.a, "%s/results.jsonl", dir), NULL);
    ck_assert_has(records, "\"strategy\": \"test-crash(K=2)\"");
    ck_assert_has(records, "\"status\": \"crash\"");
    ck_assert_has(records, "the process running it");
    ck_assert_has(records, "\"status\": \"ok\"");
    cli_teardown(&c);
}
END_TEST

/* What a plugin's rule returns that cannot stand in place of its node is
 * an error of the user's plugin (exit 1) naming the rule, its arguments and
 * its plugin, never a crash or "a bug in strata": rewrite and run, the rule
 * applied alone, inside try and inside a composite of the plugin's. */
START_TEST(a_broken_result_names_the_rule_from_the_command_line) {
    plugin_cli c;
    cli_setup(&c);
    const char *module = test_module_in(c.c.a, "bad_results");
    char abs[PATH_MAX];
    ck_assert(realpath(module, abs) != NULL);
    const char *k = arena_text(c.c.a, "%d", broken_results[_i].k);
    const char *const strategies[] = {arena_text(c.c.a, "test-bad-result(K=%s)", k),
                                      arena_text(c.c.a, "try(first(scan, test-bad-composite(K=%s)))", k)};
    const char *named = arena_text(c.c.a, "prefix_sum.strata:4:9: error: the rule test-bad-result(K=%s) of the plugin %s %s",
                                   k, abs, broken_results[_i].says);
    for (size_t i = 0; i < 2; i++) {
        char *out, *err;
        int rc = strata(&c, ARGS("rewrite", c.program, "--plugin", module, "-s", strategies[i]), &out, &err);
        ck_assert_msg(rc == 1, "`%s`: exit %d\n%s", strategies[i], rc, err);
        ck_assert_has(err, named);
        ck_assert_str_eq(out, "");
        ck_assert_ptr_null(strstr(err, "bug in strata"));
        rc = strata(&c, ARGS("run", c.program, "--plugin", module, "-s", strategies[i], "--size", "N=100"), &out, &err);
        ck_assert_msg(rc == 1, "`%s`: exit %d\n%s", strategies[i], rc, err);
        ck_assert_has(err, named);
    }
    cli_teardown(&c);
}
END_TEST

static const char *line_starting(st_arena *a, const char *text, const char *start) {
    const char *at = strstr(text, arena_text(a, "\n%s", start));
    ck_assert_msg(at != NULL, "no line starting `%s` in\n%s", start, text);
    at++;
    return arena_text(a, "%.*s", (int)strcspn(at, "\n"), at);
}

/* One bad point is a status, and the rest are explored: over K, the rule's
 * broken results are rule_error naming the rule and what was wrong, its
 * crash a crash and its hang a timeout of rewriting that point, a result
 * that differs when made again (in the check's process) a rule_error, and
 * K = 0 is explored, timed and exported as ok. No rule runs in strata's own
 * process: K = 3 changes a node of the context it runs in. */
START_TEST(a_point_whose_rule_breaks_its_contract_is_recorded_and_the_rest_goes_on) {
    plugin_cli c;
    cli_setup(&c);
    const char *module = test_module_in(c.c.a, "bad_results");
    const char *dir = arena_text(c.c.a, "%s/explored", c.c.dir), *cache = arena_text(c.c.a, "%s/cache", c.c.dir);
    setenv("STRATA_TEST_RAN", arena_text(c.c.a, "%s/ran", c.c.dir), 1); /* K = 9's memory */
    char *out, *err;
    int rc = strata(&c, ARGS("explore", c.program, "--plugin", module, "--space", "test-bad-result(K=[0..9])", "--size",
                             "N=1000", "--timeout", "10", "--jobs", "2", "--out", dir, "--cache", cache),
                    &out, &err);
    ck_assert_msg(rc == 0, "explore failed:\n%s", err);
    ck_assert_has(out, "status: ok 1 rule_error 7 timeout 1 crash 1");
    ck_assert_has(out, "best: test-bad-result(K=0)");
    const char *csv = slurp_file(c.c.a, arena_text(c.c.a, "%s/results.csv", dir), NULL);
    const char *records = slurp_file(c.c.a, arena_text(c.c.a, "%s/results.jsonl", dir), NULL);
    ck_assert_has(line_starting(c.c.a, csv, "0,test-bad-result(K=0),0,ok,"), "");
    for (size_t i = 0; i < sizeof broken_results / sizeof *broken_results; i++) {
        int k = broken_results[i].k;
        const char *line = line_starting(c.c.a, csv, arena_text(c.c.a, "%d,test-bad-result(K=%d),%d,rule_error,", k, k, k));
        ck_assert_has(line, arena_text(c.c.a, "the rule test-bad-result(K=%d) of the plugin ", k));
        ck_assert_has(line, broken_results[i].says);
    }
    ck_assert_has(line_starting(c.c.a, csv, "7,test-bad-result(K=7),7,crash,"),
                  "rewriting and generating code: the process running it was killed by signal 11");
    ck_assert_has(line_starting(c.c.a, csv, "8,test-bad-result(K=8),8,timeout,"),
                  "rewriting and generating code: killed at its time limit of 10 s");
    ck_assert_has(line_starting(c.c.a, csv, "9,test-bad-result(K=9),9,rule_error,"),
                  "made into code again, this point gave other kernels than the first time: a rule that is not deterministic");
    ck_assert_has(records, "\"strategy\": \"test-bad-result(K=4)\", \"values\": [4], \"status\": \"rule_error\", "
                           "\"message\": \"the rule test-bad-result(K=4) of the plugin ");
    /* and the good point is exported with its code */
    const char *results = arena_text(c.c.a, "%s/results", c.c.dir);
    rc = strata(&c, ARGS("export", dir, "--into", results, "--plugin", module, "--cache", cache), &out, &err);
    ck_assert_msg(rc == 0, "export failed:\n%s", err);
    ck_assert_has(out, "test-bad-result(K=0)");
    cli_teardown(&c);
}
END_TEST

/* A plugin that dies while it registers its rules ends strata with its
 * signal, as before, but not without a word: the line names the plugin. */
/* The names of a set, sorted, one a line (for comparing sets). */
typedef struct names {
    const char *items[1024];
    size_t n;
} names;

static int by_name(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static void names_add(st_arena *a, names *s, const char *name, size_t len) {
    ck_assert_msg(s->n < sizeof s->items / sizeof *s->items, "more than %zu names", sizeof s->items / sizeof *s->items);
    char *copy = st_arena_alloc(a, len + 1);
    memcpy(copy, name, len);
    copy[len] = 0;
    s->items[s->n++] = copy;
}

/* What one set has that the other has not, as "+name -name …" (empty: the same). */
static const char *names_differ(st_arena *a, names *x, names *y) {
    qsort(x->items, x->n, sizeof *x->items, by_name);
    qsort(y->items, y->n, sizeof *y->items, by_name);
    st_buf d = {0};
    st_buf_puts(&d, "");
    for (size_t i = 0, j = 0; i < x->n || j < y->n;) {
        int c = i == x->n ? 1 : j == y->n ? -1 : strcmp(x->items[i], y->items[j]);
        if (c < 0) st_buf_printf(&d, " +%s", x->items[i++]);
        else if (c > 0) st_buf_printf(&d, " -%s", y->items[j++]);
        else i++, j++;
    }
    const char *text = arena_text(a, "%s", d.data);
    st_buf_free(&d);
    return text;
}

/* The functions the plugin ABI declares: rewrite/plugin.h and what it
 * includes of strata's (ir/nodes.h), as the compiler sees them (GCC's
 * -aux-info lists each declaration with its file; the inline helpers are
 * definitions, in the plugin itself, not the executable's). */
static void abi_functions(st_arena *a, names *out) {
    const char *root = arena_text(a, "%s/..", env_path("STRATA_TESTS"));
    char dir[64];
    scratch_make(dir, sizeof dir, "abi");
    const char *src = arena_text(a, "%s/abi.c", dir), *aux = arena_text(a, "%s/abi.aux", dir);
    FILE *f = fopen(src, "w");
    ck_assert(f != NULL);
    fputs("#include \"rewrite/plugin.h\"\n", f);
    fclose(f);
    int rc = system(arena_text(a, "'%s' -std=c17 -D_POSIX_C_SOURCE=200809L -I'%s' -fsyntax-only -aux-info '%s' '%s'",
                               env_path("STRATA_CC"), root, aux, src));
    ck_assert_msg(rc == 0, "%s -aux-info (GCC's) failed on rewrite/plugin.h", env_path("STRATA_CC"));
    const char *prefix = arena_text(a, "/* %s/", root);
    for (const char *line = slurp_file(a, aux, NULL); *line;) {
        const char *end = strchr(line, '\n');
        if (!end) end = line + strlen(line);
        const char *decl = strstr(line, "C */ extern ");
        if (!strncmp(line, prefix, strlen(prefix)) && decl && decl < end) {
            const char *paren = strstr(decl, " (");
            ck_assert_msg(paren && paren < end, "no function in: %.*s", (int)(end - line), line);
            const char *name = paren;
            while (name > decl && (name[-1] == '_' || (name[-1] >= 'a' && name[-1] <= 'z') ||
                                   (name[-1] >= 'A' && name[-1] <= 'Z') || (name[-1] >= '0' && name[-1] <= '9')))
                name--;
            names_add(a, out, name, (size_t)(paren - name));
        }
        line = *end ? end + 1 : end;
    }
    scratch_remove(dir);
}

/* The names cli/plugin-abi.map makes global. */
static void map_names(st_arena *a, names *out) {
    const char *map = slurp_file(a, arena_text(a, "%s/../cli/plugin-abi.map", env_path("STRATA_TESTS")), NULL);
    const char *at = strstr(map, "global:"), *end = at ? strstr(at, "local:") : NULL;
    ck_assert_msg(at && end, "cli/plugin-abi.map has no global: and local: lists");
    for (at += strlen("global:"); at < end;) {
        while (at < end && (*at == ' ' || *at == '\n')) at++;
        const char *semi = strchr(at, ';');
        if (at == end || !semi || semi > end) break;
        names_add(a, out, at, (size_t)(semi - at));
        at = semi + 1;
    }
}

/* The names the strata executable defines for the plugins it loads
 * (.dynsym): exactly the functions of the plugin ABI (rewrite/plugin.h
 * with ir/nodes.h), which cli/plugin-abi.map lists, and nothing beside
 * them (the library's other functions, the CLI's, codegen's, libtcc's), so
 * a plugin sees the ABI only and its names cannot collide with strata's.
 * libc's stdio streams and environ are defined there by copy relocations,
 * and so are the sanitizers' flags under them (__asan_…): libc's and the
 * compiler's names, not strata's. */
START_TEST(the_executable_exports_the_plugin_abi_only) {
    st_arena *a = st_arena_new();
    size_t len;
    char *elf = slurp_file(a, getenv("STRATA"), &len);
    ck_assert(elf && len > sizeof(Elf64_Ehdr));
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)elf;
    ck_assert(!memcmp(eh->e_ident, ELFMAG, SELFMAG) && eh->e_ident[EI_CLASS] == ELFCLASS64);
    ck_assert(eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr) <= len);
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(elf + eh->e_shoff);
    static const char *const libc_copies[] = {"stdin", "stdout", "stderr", "environ"};
    static names exported, declared, listed;
    exported.n = declared.n = listed.n = 0;
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_DYNSYM) continue;
        const char *strings = elf + sh[sh[i].sh_link].sh_offset;
        const Elf64_Sym *sym = (const Elf64_Sym *)(elf + sh[i].sh_offset);
        for (size_t k = 0; k < sh[i].sh_size / sizeof *sym; k++) {
            int bind = ELF64_ST_BIND(sym[k].st_info);
            if (sym[k].st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK) || !sym[k].st_name) continue;
            const char *name = strings + sym[k].st_name;
            bool libc = !strncmp(name, "__", 2); /* the implementation's reserved names */
            for (size_t c = 0; c < sizeof libc_copies / sizeof *libc_copies; c++) libc |= !strcmp(name, libc_copies[c]);
            if (!libc) names_add(a, &exported, name, strlen(name));
        }
    }
    abi_functions(a, &declared);
    map_names(a, &listed);
    /* (a header that lost its functions, or a reader that found none) */
    ck_assert_uint_gt(declared.n, 100);
    const char *d = names_differ(a, &listed, &declared);
    ck_assert_msg(!*d, "cli/plugin-abi.map (+) and the functions rewrite/plugin.h and ir/nodes.h declare (-) "
                       "differ:%s", d);
    d = names_differ(a, &exported, &declared);
    ck_assert_msg(!*d, "the executable exports (+) other names than the plugin ABI's functions (-):%s", d);
    st_arena_free(a);
}
END_TEST

START_TEST(a_plugin_that_crashes_while_loading_is_named) {
    plugin_cli c;
    cli_setup(&c);
    const char *module = test_module_in(c.c.a, "crashes_registering");
    char *out, *err;
    pid_t pid = program_start(c.c.dir, environ, env_path("STRATA"), ARGS("strategies", "--plugin", module), "/dev/null");
    int status = program_end(c.c.a, c.c.dir, pid, &out, &err);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "status %d; stderr:\n%s", status, err);
    ck_assert_has(err, arena_text(c.c.a, "the plugin %s crashed strata while it was being loaded", module));
    /* a plugin that loads and crashes later is not blamed on loading */
    pid = program_start(c.c.dir, environ, env_path("STRATA"), ARGS("strategies", "--plugin", test_module_in(c.c.a, "crashes")),
                        "/dev/null");
    ck_assert_int_eq(program_end(c.c.a, c.c.dir, pid, &out, &err), 0);
    ck_assert_ptr_null(strstr(err, "crashed"));
    cli_teardown(&c);
}
END_TEST

static Suite *plugin_suite(void) {
    Suite *s = suite_create("plugin");
    TCase *load = tcase_create("load");
    tcase_add_checked_fixture(load, rules_setup, rules_teardown);
    tcase_add_test(load, example_plugin_loads_with_its_origin);
    tcase_add_test(load, the_executable_exports_the_plugin_abi_only);
    tcase_add_test(load, good_test_module_loads_next_to_the_example);
    tcase_add_test(load, named_parameters_read_and_print_by_name);
    tcase_add_test(load, badly_named_parameters_are_refused);
    suite_add_tcase(s, load);

    TCase *refuse = tcase_create("refusals");
    tcase_add_checked_fixture(refuse, rules_setup, rules_teardown);
    tcase_add_loop_test(refuse, each_refusal_leaves_the_registry_as_it_was, 0, (int)(sizeof refusals / sizeof *refusals));
    tcase_add_test(refuse, a_file_that_is_not_a_module_is_refused);
    tcase_add_test(refuse, a_plugin_given_twice_is_refused);
    tcase_add_test(refuse, a_broken_result_is_the_rules_error_and_ends_the_rewrite);
    suite_add_tcase(s, refuse);

    TCase *ex = tcase_create("examples");
    tcase_set_timeout(ex, 600);
    tcase_add_checked_fixture(ex, rules_setup, pipeline_teardown);
    tcase_add_loop_test(ex, examples_through_the_plugin_equal_the_interpreter, 0,
                        (int)(sizeof example_cases / sizeof *example_cases));
    tcase_add_loop_test(ex, kogge_stone_sums_equal_c, 0, (int)(sizeof ks_strategies / sizeof *ks_strategies));
    tcase_add_test(ex, kogge_stone_keeps_the_interpreters_result);
    tcase_add_test(ex, kogge_stone_states_its_condition);
    suite_add_tcase(s, ex);

    TCase *cl = tcase_create("cli");
    tcase_set_timeout(cl, 600);
    tcase_add_test(cl, strategies_lists_plugin_rules_with_their_origin);
    tcase_add_test(cl, rewrite_and_run_use_plugin_rules);
    tcase_add_test(cl, every_command_takes_plugin_and_refuses_a_bad_one);
    tcase_add_test(cl, a_plugin_rule_is_explored_and_exported_like_a_built_in);
    tcase_add_test(cl, a_plugin_built_out_of_tree_loads_and_works);
    tcase_add_test(cl, a_plugin_that_crashes_while_loading_is_named);
    tcase_add_test(cl, a_point_whose_process_dies_is_a_crash_and_the_rest_goes_on);
    tcase_add_loop_test(cl, a_broken_result_names_the_rule_from_the_command_line, 0,
                        (int)(sizeof broken_results / sizeof *broken_results));
    tcase_add_test(cl, a_point_whose_rule_breaks_its_contract_is_recorded_and_the_rest_goes_on);
    suite_add_tcase(s, cl);
    return s;
}

int main(void) { return run_suite(plugin_suite()); }
