/* tests/plugins/bad.c — plugins strata must refuse, one per BAD_* macro
 * (tests/meson.build builds each as its own module), and, with none, a
 * good one whose rule the suite uses.
 *
 *   BAD_NO_SYMBOLS    a shared module, but not a strata plugin
 *   BAD_WRONG_ABI     built for another plugin ABI
 *   BAD_OTHER_LAYOUT  the right ABI number, structs of other sizes
 *   BAD_CLASH         a rule named like a built-in one
 *   BAD_HALF_CLASH    one good rule, then a clash: neither may stay
 *   BAD_IGNORES_CLASH a clash whose refusal the register function ignores
 *   BAD_NO_RULES      a register function that adds nothing
 *   BAD_REFUSES       a register function that fails, saying why
 *   BAD_UNDEFINED     needs a function strata does not have
 *   BAD_CRASHES       loads, but its rule test-crash(K) kills the process
 *                     at K = 2 (the autotuner's suite: a strata that dies)
 *   BAD_CRASHES_REGISTERING  dies of SIGSEGV in its register function
 *   BAD_HANGS         loads, and its rule test-hang(K) makes a scan of
 *                     [N]i32 a kernel that never ends at K = 1 (2^40 steps
 *                     an element), while the program's reference is quick
 *                     (the resources suite: children killed with strata) */
#include "rewrite/plugin.h"

#ifdef BAD_CRASHES_REGISTERING
#include <signal.h>
#endif

#ifdef BAD_NO_SYMBOLS
int not_a_plugin(void);
int not_a_plugin(void) { return 42; }
#else

/* scan(op, z, xs) → scanSeq(op, z, xs): a rule that is right, for the good
 * rule of BAD_HALF_CLASH */
static const st_node *to_seq(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    st_scan_form s;
    if (!st_scan_form_of(e, &s) || s.fold) return st_no_match(why, "%s", "needs a plain scan");
    st_build B = st_build_of(rw, why), *b = &B;
    return ST_PRIM(b, ST_PRIM_SCAN_SEQ, s.op, s.z, s.xs);
}

/* (each kind uses some of these) */
static const char *const places[] = {"global", "local", NULL};
__attribute__((unused)) static const st_rule good = {
    .name = "test-good-rule",
    .summary = "a plain scan done sequentially",
    .nparams = 1,
    .params = {{.name = "WHERE", .doc = "a named parameter (ignored)", .names = places, .has_default = true, .def = 0}},
    .apply = to_seq};
__attribute__((unused)) static const st_rule clash = {.name = "parallel-scan", .summary = "takes a built-in's name", .apply = to_seq};

#ifdef BAD_UNDEFINED
void st_no_such_function(void);
#endif

#ifdef BAD_CRASHES
#include <stdlib.h>
static const st_node *crash_at_2(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    if (args[0] == 2) abort();
    return to_seq(rw, e, args, why);
}
static const st_rule crasher = {.name = "test-crash", .summary = "a plain scan done sequentially, but K = 2 aborts",
                                .nparams = 1, .params = {{.name = "K", .min = 0, .max = 3}}, .apply = crash_at_2};
#endif

#ifdef BAD_HANGS
static const st_node *hang_at_1(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    if (e->kind != ST_NODE_PRIM || e->u.prim != ST_PRIM_SCAN) return st_no_match(why, "%s", "needs a scan");
    if (args[0] != 1) return e;
    /* xs |> map(x => x |> iterate(1099511627776i64, y => (y * 3 + x) % 1001)) */
    const st_node *xs = e->kids[e->nkids - 1];
    if (!st_type_is_scalar(st_elem_of(xs), ST_I32)) return st_no_match(why, "%s", "needs a scan of [N]i32");
    st_build b = st_build_of(rw, why);
    const st_type *i32 = st_elem_of(xs);
    const st_node *x = st_b_var(&b, "x", i32), *y = st_b_var(&b, "y", i32);
    const st_node *three = st_lit_int(b.cx, ST_I32, 3), *mod = st_lit_int(b.cx, ST_I32, 1001);
    const st_node *step = st_b_binop(&b, ST_OP_MOD, st_b_binop(&b, ST_OP_ADD, st_b_binop(&b, ST_OP_MUL, y, three), x), mod);
    const st_node *turns = ST_PRIM(&b, ST_PRIM_ITERATE, st_b_i64(&b, 1099511627776), ST_LAMBDA(&b, step, y), x);
    return ST_PRIM(&b, ST_PRIM_MAP, ST_LAMBDA(&b, turns, x), xs);
}
static const st_rule hanger = {.name = "test-hang", .summary = "a scan of [N]i32 as it is, but at K = 1 a kernel that never ends",
                               .nparams = 1, .params = {{.name = "K", .min = 0, .max = 1}}, .apply = hang_at_1};
#endif

static bool register_rules(st_plugin *plugin, st_err *err) {
#if defined BAD_CLASH
    return st_plugin_add_rule(plugin, &clash, err);
#elif defined BAD_HALF_CLASH
    return st_plugin_add_rule(plugin, &good, err) && st_plugin_add_rule(plugin, &clash, err);
#elif defined BAD_IGNORES_CLASH
    st_plugin_add_rule(plugin, &clash, err);
    return st_plugin_add_rule(plugin, &good, err);
#elif defined BAD_NO_RULES
    (void)plugin, (void)err;
    return true;
#elif defined BAD_REFUSES
    (void)plugin;
    return st_fail(err, (st_loc){0}, "this plugin needs a GPU with 128 KiB of local memory");
#elif defined BAD_CRASHES
    return st_plugin_add_rule(plugin, &crasher, err);
#elif defined BAD_HANGS
    return st_plugin_add_rule(plugin, &hanger, err);
#elif defined BAD_CRASHES_REGISTERING
    /* the signal a wild pointer gives, raised: a null store would be
     * caught first by the undefined-behaviour sanitizer */
    raise(SIGSEGV);
    return st_plugin_add_rule(plugin, &good, err);
#elif defined BAD_UNDEFINED
    st_no_such_function();
    return st_plugin_add_rule(plugin, &good, err);
#else
    return st_plugin_add_rule(plugin, &good, err);
#endif
}

#if defined BAD_WRONG_ABI || defined BAD_OTHER_LAYOUT
/* ST_PLUGIN by hand, with other values */
#ifdef BAD_WRONG_ABI
__attribute__((visibility("default"))) const st_plugin_abi strata_plugin_abi = {ST_PLUGIN_ABI + 1000, sizeof(st_rule), sizeof(st_node), sizeof(st_err), sizeof(st_strategy)};
#else
__attribute__((visibility("default"))) const st_plugin_abi strata_plugin_abi = {ST_PLUGIN_ABI, sizeof(st_rule) + 8, sizeof(st_node), sizeof(st_err), sizeof(st_strategy)};
#endif
__attribute__((visibility("default"))) bool strata_plugin_register(st_plugin *plugin, st_err *err);
bool strata_plugin_register(st_plugin *plugin, st_err *err) { return register_rules(plugin, err); }
#else
ST_PLUGIN(register_rules)
#endif

#endif
