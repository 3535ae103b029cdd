/* plugins/reduce_then_scan.c — an example plugin: reduce-then-scan(BS), the
 * three-kernel scan of the single-pass scan report's §2.1.
 *
 *   1. reduce each block of BS elements to its total        (N/BS totals)
 *   2. scan the totals                                       (a scan of N/BS)
 *   3. scan each block again, starting from the total of
 *      the blocks before it                                  (N elements)
 *
 * It reads the input twice and writes it once (3N accesses against the 4N of
 * scan-then-propagate, which writes the scanned blocks and reads them back).
 * It is built from primitives strata has (split, map, reduce, scan, scanSeq,
 * zip, iota, join), so codegen compiles what it produces unchanged, and any
 * strategy can refine the scan of the totals it leaves:
 *
 *   strata run prog.strata --plugin build/reduce_then_scan.so -s 'reduce-then-scan(BS=1024)'
 *   strata run prog.strata --plugin build/reduce_then_scan.so \
 *       -s 'reduce-then-scan(BS=4096) ; first(scan, reduce-then-scan(BS=256))'
 *
 * Build it out of the tree with
 *   cc -shared -fPIC -O2 $(pkg-config --cflags strata) reduce_then_scan.c -o reduce_then_scan.so
 * docs/writing-a-rule.md walks through this file. */
#include "rewrite/plugin.h"

/* ---- reduce-then-scan-step(BS): the scheme, for BS | N ---- */

/* z for i == 0, else prefixes[i - 1]: the total of the blocks before block i */
static const st_node *exclusive(st_build *b, const st_node *prefixes, const st_node *i, const st_node *z) {
    return st_b_if(b, st_b_binop(b, ST_OP_EQ, i, st_b_i64(b, 0)), z,
                   ST_PRIM(b, ST_PRIM_GET, st_b_binop(b, ST_OP_SUB, i, st_b_i64(b, 1)), prefixes));
}

/* scan(op, z, xs), BS | n, becomes
 *   let blocks = xs |> split(BS)
 *   let totals = blocks |> map(blk => blk |> reduce(op, z))
 *   let prefixes = totals |> scan(op, z)
 *   in zip(iota(n / BS), blocks)
 *        |> map((i, blk) => blk |> scanSeq(op, if i == 0 then z else prefixes |> get(i - 1)))
 *        |> join
 * With a fold (a map fused into the scan) a block is reduced and scanned
 * with the fold; with a post-function, each output goes through it. */
static const st_node *reduce_then_scan_step(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    st_scan_form s;
    if (!st_scan_form_of(e, &s)) return st_no_match(why, "%s", "reduce-then-scan-step rewrites a scan");
    int64_t bs = args[0];
    st_ctx *cx = st_rw_ctx(rw);
    if (!st_size_divides(st_size_const(cx, bs), s.xs->type->size))
        return st_fail(why, (st_loc){0}, "reduce-then-scan-step: the scan's length is not known to be a multiple of BS = %lld (reduce-then-scan pads it)",
                       (long long)bs), NULL;

    st_build B = st_build_of(rw, why), *b = &B;
    const st_node *split = ST_PRIM(b, ST_PRIM_SPLIT, st_b_count(b, bs), s.xs);
    const st_node *blocks = st_b_bound(b, "blocks", split);

    /* 1. each block's total */
    const st_node *blk = st_b_var(b, "blk", st_elem_of(blocks));
    const st_node *total = s.fold ? ST_PRIM(b, ST_PRIM_REDUCE, s.op, s.fold, s.z, blk) : ST_PRIM(b, ST_PRIM_REDUCE, s.op, s.z, blk);
    const st_node *totals_v = ST_PRIM(b, ST_PRIM_MAP, ST_LAMBDA(b, total, blk), blocks);
    const st_node *totals = st_b_bound(b, "totals", totals_v);

    /* 2. the scan of the totals: an abstract scan, for the rest of the strategy */
    const st_node *prefixes_v = ST_PRIM(b, ST_PRIM_SCAN, s.op, s.z, totals);
    const st_node *prefixes = st_b_bound(b, "prefixes", prefixes_v);

    /* 3. each block scanned from its prefix, one thread per block */
    const st_node *i = st_b_var(b, "i", st_type_scalar(cx, ST_I64));
    const st_node *blk2 = st_b_var(b, "blk", st_elem_of(blocks));
    const st_node *accs = ST_PRIM(b, ST_PRIM_SCAN_SEQ, s.fold ? s.fold : s.op, exclusive(b, prefixes, i, s.z), blk2);
    const st_node *scanned = accs;
    if (s.post) { /* post(acc, x) for each element and its accumulator */
        const st_node *acc = st_b_var(b, "acc", s.z->type), *x = st_b_var(b, "x", st_elem_of(blk2));
        scanned = ST_PRIM(b, ST_PRIM_MAP, ST_LAMBDA(b, ST_CALL(b, s.post, acc, x), acc, x), ST_PRIM(b, ST_PRIM_ZIP, accs, blk2));
    }
    const st_node *nblocks = totals ? st_b_size(b, totals->type->size) : NULL;
    const st_node *per_block = ST_PRIM(b, ST_PRIM_MAP, ST_LAMBDA(b, scanned, i, blk2),
                                       ST_PRIM(b, ST_PRIM_ZIP, ST_PRIM(b, ST_PRIM_IOTA, nblocks), blocks));
    const st_node *out = ST_PRIM(b, ST_PRIM_JOIN, per_block);
    return st_b_let(b, blocks, split, st_b_let(b, totals, totals_v, st_b_let(b, prefixes, prefixes_v, out)));
}

static const st_rule rule_step = {
    .name = "reduce-then-scan-step",
    .summary = "reduce each block of BS, scan the block totals, scan each block from its prefix (single-pass report, §2.1)",
    .conditions = "the scan's length is a multiple of BS",
    .nparams = 1,
    .params = {{.name = "BS", .doc = "the block size: elements per thread in the first and last kernels", .min = 1, .max = 1 << 20}},
    .apply = reduce_then_scan_step,
};

/* ---- reduce-then-scan(BS): any length ---- */

/* The step, after the built-in pad-scan(BS) when BS does not divide the
 * length: a composite finds the rules it builds on by name. */
static const st_node *reduce_then_scan(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    st_scan_form s;
    if (!st_scan_form_of(e, &s)) return st_no_match(why, "%s", "reduce-then-scan rewrites a scan");
    st_ctx *cx = st_rw_ctx(rw);
    const st_rule *pad = st_registry_find(st_rw_registry(rw), "pad-scan");
    const st_rule *step = st_registry_find(st_rw_registry(rw), "reduce-then-scan-step");
    if (!pad || !step) return st_fail_internal(why, "reduce-then-scan needs the rules pad-scan and reduce-then-scan-step"), NULL;
    const st_strategy *then = st_s_at(cx, ST_S_FIRST, st_pattern_of(ST_PRIM_SCAN), st_s_rule(cx, step, args));
    const st_strategy *all = st_size_divides(st_size_const(cx, args[0]), s.xs->type->size)
                                 ? then
                                 : st_s_binary(cx, ST_S_SEQ, st_s_rule(cx, pad, args), then);
    return all ? st_rewrite_node(rw, all, e, why) : (st_fail_internal(why, "out of memory"), NULL);
}

static const st_rule rule_reduce_then_scan = {
    .name = "reduce-then-scan",
    .summary = "the three-kernel scan of the single-pass report (§2.1) for any length: reduce-then-scan-step(BS), padding with pad-scan(BS) first when BS does not divide the length",
    .conditions = "none",
    .nparams = 1,
    .params = {{.name = "BS", .doc = "the block size: elements per thread in the first and last kernels", .min = 1, .max = 1 << 20}},
    .apply = reduce_then_scan,
};

/* ---- registration ---- */

static bool register_rules(st_plugin *plugin, st_err *err) {
    return st_plugin_add_rule(plugin, &rule_reduce_then_scan, err) && st_plugin_add_rule(plugin, &rule_step, err);
}

ST_PLUGIN(register_rules)
