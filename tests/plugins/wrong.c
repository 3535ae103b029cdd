/* tests/plugins/wrong.c — a rule that is wrong on purpose, by as much as
 * its parameter says, so that the checks of `strata run --check` and
 * `strata explore` can be seen to catch a wrong answer of any magnitude
 * (issue 46): test-wrong-floats(BY) multiplies what a map of f32 makes by
 * 1 + 2^-BY, and at BY = 0 by 0 (all zeros). At BY = 40 the factor rounds
 * to 1 in f32: that point is right. */
#include "rewrite/plugin.h"

static const st_node *wrong_floats(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    if (!st_is_prim(e, ST_PRIM_MAP) || e->kids[0]->kind != ST_NODE_LAMBDA || st_lambda_nparams(e->kids[0]) != 1 ||
        !st_type_is_scalar(e->type->elem, ST_F32))
        return st_no_match(why, "%s", "needs a map of one parameter that makes f32");
    st_build B = st_build_of(rw, why), *b = &B;
    const st_node *f = e->kids[0];
    float factor = args[0] == 0 ? 0.0f : (float)(1.0 + 1.0 / (double)(1LL << args[0]));
    const st_node *body = st_b_binop(b, ST_OP_MUL, st_lambda_body(f), st_lit(b->cx, ST_F32, (st_scalar){.f32 = factor}));
    return ST_PRIM(b, ST_PRIM_MAP, ST_LAMBDA(b, body, f->kids[0]), e->kids[1]);
}

static const st_rule wrong = {
    .name = "test-wrong-floats",
    .summary = "a map of f32 whose results are multiplied by 1 + 2^-BY (by 0 at BY = 0): wrong on purpose",
    .nparams = 1,
    .params = {{.name = "BY", .doc = "how wrong: 0 all zeros, 40 right", .min = 0, .max = 40}},
    .apply = wrong_floats};

static bool register_rules(st_plugin *plugin, st_err *err) { return st_plugin_add_rule(plugin, &wrong, err); }

ST_PLUGIN(register_rules)
