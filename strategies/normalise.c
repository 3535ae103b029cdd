/* strategies/normalise.c — the normal forms the parallel rules take, as
 * rules of their own:
 *
 *   seeds-as-neutral   every scan, exscan and reduce seeded by other than its
 *                      operator's neutral element (where strata knows it) as
 *                      one seeded by it, the seed applied after; every
 *                      reduce_by_index's z the neutral element
 *                      (st_seeds_as_neutral, rewrite/seeds.c)
 *   exscans-as-scans   every exscan as the inclusive scan of its input
 *                      shifted right by one, a view (st_exscans_as_scans)
 *
 * The default strategies begin with both, and lower-opencl applies both
 * first, so that codegen never meets an exscan and a strategy of the user's
 * need not name them. A rule that starts each block from the seed takes a
 * seed that seeds-as-neutral would take out out of its node first
 * (st_with_seed_out), or refuses it (st_takes_seed), rather than add it
 * once a block; exscans-as-scans takes an exscan's out too. Both apply to the whole expression they are given,
 * and to one in normal form without change (so `-s id` is the identity and
 * these are what changes a program before any parallel rule). */
#include "rewrite/plugin.h"
#include "strategies.h"

static const st_node *seeds_as_neutral(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    return st_seeds_as_neutral(st_rw_ctx(rw), e, why);
}

static const st_node *exscans_as_scans(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    return st_exscans_as_scans(st_rw_ctx(rw), st_rw_def(rw), e, why);
}

/* fn on the node of e's primitive that seeds-as-neutral left of e in t (t
 * is e with its seed taken out: that node under a let of the seed, an
 * operation applying it, a map applying it), t rebuilt around the result. */
static const st_node *at_plain(st_rw *rw, const st_node *t, st_prim prim, const int64_t *args, st_err *why,
                               st_rule_apply fn) {
    if (st_is_prim(t, prim)) return fn(rw, t, args, why);
    uint32_t i = t->kind == ST_NODE_LET                              ? t->nkids - 1
                 : t->kind == ST_NODE_BINOP || st_is_prim(t, ST_PRIM_MAP) ? 1
                                                                  : t->nkids;
    if (i >= t->nkids) return st_fail_internal(why, "a seed taken out left no %s", st_prim_get(prim)->name), NULL;
    const st_node *k = at_plain(rw, t->kids[i], prim, args, why, fn);
    if (!k) return NULL;
    st_err inner = {0};
    const st_node *r = st_replace_kid(st_rw_ctx(rw), t, i, k, &inner);
    if (!r) st_fail_internal(why, "rebuilding around a seed taken out: %s", inner.message);
    return r;
}

const st_node *st_with_seed_out(st_rw *rw, const st_node *e, const int64_t *args, st_err *why, st_rule_apply fn) {
    if (!st_seed_not_neutral(e)) return fn(rw, e, args, why);
    const st_node *t = st_seed_taken_out(st_rw_ctx(rw), e, why);
    return t ? at_plain(rw, t, e->u.prim, args, why, fn) : NULL;
}

bool st_takes_seed(const char *rule, const char *what, const st_node *e, st_err *why) {
    if (!st_seed_not_neutral(e)) return true;
    return st_reject(why, "%s: this %s's seed is not its operator's neutral element, and %s starts every block from "
                     "the seed; seeds-as-neutral takes it out first (the default strategies begin with it)",
                     rule, what, rule);
}

const st_node *st_normal_form(st_rw *rw, const st_node *e, st_err *why) {
    const st_node *r = seeds_as_neutral(rw, e, NULL, why);
    return r ? exscans_as_scans(rw, r, NULL, why) : NULL;
}

static const st_rule normalise_rules[] = {
    {.name = "seeds-as-neutral",
     .summary = "every scan, exscan and reduce seeded by other than its operator's neutral element (+ * & | ^ min max "
                "&& || on one number) as one seeded by it, the seed applied after (a post-function, an operation on "
                "the result); every reduce_by_index's z its neutral element (it reads none)",
     .conditions = "none: applies to any expression, and to one without such a seed without change; the default "
                   "strategies and lower-opencl begin with it",
     .origin = "built-in",
     .apply = seeds_as_neutral},
    {.name = "exscans-as-scans",
     .summary = "every exscan as the inclusive scan of its input shifted right by one, the seed in front: a view read "
                "where the scan reads it, no pass of its own; every scan rule then takes it (a seed other than the "
                "operator's neutral element comes out first, as seeds-as-neutral takes it out)",
     .conditions = "none: applies to any expression, and to one without an exscan without change; the default "
                   "strategies and lower-opencl begin with it",
     .origin = "built-in",
     .apply = exscans_as_scans},
};

bool st_register_normalise_rules(st_registry *r, st_err *err) {
    for (size_t i = 0; i < sizeof normalise_rules / sizeof *normalise_rules; i++)
        if (!st_registry_add(r, &normalise_rules[i], err)) return false;
    return true;
}
