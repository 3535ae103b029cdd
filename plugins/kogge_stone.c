/* plugins/kogge_stone.c — an example plugin: the Kogge–Stone scan, a rule
 * strata does not have.
 *
 *   kogge-stone          a scan of a constant length n (one block) in
 *                        ⌈log2 n⌉ steps: at step d every element adds the
 *                        one 2^d places before it. Depth log2 n, work
 *                        n·log2 n: twice the steps of the Brent-Kung tree
 *                        (up and down) are one here, for more work.
 *   kogge-stone-scan(BS) scan-then-propagate(BS) with a Kogge–Stone scan
 *                        in each block, for any length: the in-block
 *                        algorithm beside parallel-scan's Brent-Kung tree.
 *   reduce-then-scan(BS) the three-kernel scan of [Nicolaisen-Persson]'s
 *                        §2.1 in one line: brent-kung-step with BF = BS.
 *
 * It is built from primitives strata has (map, iota, get, zip, let), so
 * codegen compiles what it produces unchanged: inside a block each step is
 * a map of the work-group over local memory, with a barrier between steps.
 *
 *   strata run prog.strata --plugin build/kogge_stone.so -s 'kogge-stone-scan(BS=256)' --check
 *   strata explore prog.strata --plugin build/kogge_stone.so --out out/ks \
 *       --space 'kogge-stone-scan(BS=[32..512 pow2]) ; first(scan, kogge-stone-scan(BS=[32..512 pow2]))'
 *
 * Build it out of the tree with
 *   cc -shared -fPIC -O2 $(pkg-config --cflags strata) kogge_stone.c -o kogge_stone.so
 * docs/writing-a-rule.md walks through this file. */
#include "rewrite/plugin.h"

/* ---- kogge-stone: one block's scan in log2 steps ---- */

/* Longer scans than this are not one block's: each step would be a pass
 * over all of it. */
enum { KS_MOST = 1 << 16 };

/* One step: element i combined with the one d places before it, if any.
 *   zip(iota(n), prev) |> map((i, x) => if i >= d then op(prev[max(i - d, 0)], x) else x)
 * The read before i is clamped, so it is in bounds whichever branch is
 * taken. A map over the elements, not over the index alone: each step is
 * computed once, into memory (a map of iota would be a view, and k steps
 * read through would cost 2^k reads an element). */
static const st_node *step(st_build *b, const st_node *op, const st_node *prev, int64_t n, int64_t d) {
    const st_node *i = st_b_var(b, "i", st_type_scalar(b->cx, ST_I64)), *x = st_b_var(b, "x", st_elem_of(prev));
    const st_node *back = st_b_binop(b, ST_OP_MAX, st_b_binop(b, ST_OP_SUB, i, st_b_i64(b, d)), st_b_i64(b, 0));
    const st_node *sum = ST_CALL(b, op, ST_PRIM(b, ST_PRIM_GET, back, prev), x);
    const st_node *body = st_b_if(b, st_b_binop(b, ST_OP_GE, i, st_b_i64(b, d)), sum, x);
    return ST_PRIM(b, ST_PRIM_MAP, ST_LAMBDA(b, body, i, x), ST_PRIM(b, ST_PRIM_ZIP, ST_PRIM(b, ST_PRIM_IOTA, st_b_count(b, n)), prev));
}

/* xs's elements as accumulators: through the fold (a map fused into the
 * scan) when there is one. */
static const st_node *accumulators(st_build *b, const st_scan_form *s) {
    if (!s->fold) return s->xs;
    const st_node *x = st_b_var(b, "x", st_elem_of(s->xs));
    return ST_PRIM(b, ST_PRIM_MAP, ST_LAMBDA(b, ST_CALL(b, s->fold, s->z, x), x), s->xs);
}

/* the outputs: each accumulator through the post-function, if any */
static const st_node *outputs(st_build *b, const st_scan_form *s, const st_node *accs) {
    if (!s->post) return accs;
    const st_node *acc = st_b_var(b, "acc", st_elem_of(accs)), *x = st_b_var(b, "x", st_elem_of(s->xs));
    return ST_PRIM(b, ST_PRIM_MAP, ST_LAMBDA(b, ST_CALL(b, s->post, acc, x), acc, x), ST_PRIM(b, ST_PRIM_ZIP, accs, s->xs));
}

/* scan(op, z, xs) of a constant length n becomes
 *   let step_1 = xs |> (one step, d = 1)
 *   let step_2 = step_1 |> (one step, d = 2)
 *   …
 *   in step_k                                         2^k >= n
 * Element i of step_k combines the 2^k elements up to i (fewer at the
 * start): xs[0] ⊕ … ⊕ xs[i], z being op's neutral element. */
static const st_node *kogge_stone(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    st_scan_form s;
    int64_t n;
    if (!st_scan_form_of(e, &s)) return st_no_match(why, "kogge-stone rewrites a scan");
    if (!st_size_is_const(s.xs->type->size, &n) || n > KS_MOST)
        return st_reject(why, "kogge-stone: the scan's length is not a constant of at most %d (one block's scan: "
                       "apply it inside scan-then-propagate, or use kogge-stone-scan)", KS_MOST), NULL;
    st_build B = st_build_of(rw, why), *b = &B;
    const st_node *vars[18], *values[18];
    const st_node *layer = accumulators(b, &s);
    int k = 0;
    for (int64_t d = 1; d < n; d *= 2, k++) {
        values[k] = step(b, s.op, layer, n, d);
        layer = vars[k] = st_b_bound(b, "step", values[k]);
    }
    const st_node *out = outputs(b, &s, layer);
    while (k-- > 0) out = st_b_let(b, vars[k], values[k], out);
    return out;
}

/* ---- composites: strategies over the scan they are applied to ---- */

/* A built-in rule, found by name (a plugin sees strata's rules through the
 * registry), with its arguments. */
static const st_strategy *builtin(st_rw *rw, const char *name, const int64_t *args, st_err *why) {
    const st_rule *r = st_registry_find(st_rw_registry(rw), name);
    if (!r) return st_fail_internal(why, "the built-in rule %s is missing", name), NULL;
    return st_s_rule(st_rw_ctx(rw), r, args);
}

/* s, after pad-scan(BS) when BS does not divide the length of the scan f */
static const st_strategy *padded(st_rw *rw, const st_scan_form *f, int64_t bs, const st_strategy *s, st_err *why) {
    if (!s || st_size_divides(st_size_const(st_rw_ctx(rw), bs), f->xs->type->size)) return s;
    return st_s_seq(st_rw_ctx(rw), builtin(rw, "pad-scan", &bs, why), s);
}

static const st_rule rule_kogge_stone;

/* kogge-stone-scan(BS) = [pad-scan(BS) ;] first(scan, scan-then-propagate(BS)) ; first(scan, kogge-stone) */
static const st_strategy *kogge_stone_scan(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    st_ctx *cx = st_rw_ctx(rw);
    st_scan_form f;
    if (!st_scan_form_of(e, &f)) return st_no_match(why, "kogge-stone-scan rewrites a scan"), NULL;
    const st_strategy *blocks = st_s_first(cx, ST_PRIM_SCAN, builtin(rw, "scan-then-propagate", args, why));
    return padded(rw, &f, args[0], st_s_seq(cx, blocks, st_s_first(cx, ST_PRIM_SCAN, st_s_rule(cx, &rule_kogge_stone, NULL))), why);
}

/* reduce-then-scan(BS) = [pad-scan(BS) ;] brent-kung-step(BF = BS): reduce
 * each block, scan the block totals, scan each block from its prefix */
static const st_strategy *reduce_then_scan(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    st_scan_form f;
    if (!st_scan_form_of(e, &f)) return st_no_match(why, "reduce-then-scan rewrites a scan"), NULL;
    return padded(rw, &f, args[0], st_s_first(st_rw_ctx(rw), ST_PRIM_SCAN, builtin(rw, "brent-kung-step", args, why)), why);
}

/* ---- the rules ---- */

static const st_rule rule_kogge_stone = {
    .name = "kogge-stone",
    .summary = "a scan of one block in ceil(log2 n) steps, each element adding the one 2^d before it (Kogge-Stone: "
               "depth log2 n, work n log2 n)",
    .conditions = "the scan's length is a constant of at most 65536 (a block's scan: inside scan-then-propagate)",
    .apply = kogge_stone,
};

/* a composite over a scan of any length, in blocks of BS */
#define BLOCKED(rule_name, text, fn)                                                                               \
    {.name = rule_name, .summary = text, .conditions = "any length; acts on the scan it is applied to", .nparams = 1, \
     .params = {{.name = "BS", .doc = "the block size", .min = 1, .max = 1 << 20}}, .expand = fn}

static const st_rule rule_kogge_stone_scan = BLOCKED("kogge-stone-scan",
    "scan-then-propagate(BS) with a Kogge-Stone scan in each block, padding with pad-scan(BS) first when BS does not "
    "divide the length; the scan of the block totals is left to the rest of the strategy", kogge_stone_scan);

static const st_rule rule_reduce_then_scan = BLOCKED("reduce-then-scan",
    "the three-kernel scan of the single-pass report (§2.1): brent-kung-step(BF=BS), padding with pad-scan(BS) first "
    "when BS does not divide the length", reduce_then_scan);

static bool register_rules(st_plugin *plugin, st_err *err) {
    return st_plugin_add_rule(plugin, &rule_kogge_stone, err) && st_plugin_add_rule(plugin, &rule_kogge_stone_scan, err) &&
           st_plugin_add_rule(plugin, &rule_reduce_then_scan, err);
}

ST_PLUGIN(register_rules)
