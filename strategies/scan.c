/* strategies/scan.c — the scan rules of [Pizzuti et al. 2022] (listings 4–8).
 *
 * strata's scan is inclusive and seeded: scan(op, z, xs)[i] is z ⊕ x0 ⊕ … ⊕ xi,
 * z the neutral element of op (where strata knows op's, the rules that
 * start blocks from z take any other out first, as seeds-as-neutral does;
 * elsewhere a promise of the program, as in Futhark). The
 * paper's listings are for an exclusive scan, so where they hand a block the
 * scan of the blocks before it, these rules hand it the *exclusive* prefix
 * (z for the first block, else the inclusive prefix of the previous one).
 *
 * Every rule takes every form of scan: plain, with a fold (scanomap) and with
 * a post-function (maposcanomap), and exscans, which exscans-as-scans
 * makes scans of their shifted inputs (st_exscans_as_scans): one place
 * that knows exclusivity, rather than a variant of every rule. Block-local work folds elements with the
 * fold; partial results combine with the operator; the post-function runs
 * once, where the final accumulator of an element is known.
 *
 * The seeded scans a rule produces inside a block (the downsweep) are
 * scanSeq, not scan: they are sequential per thread, and `first(scan, …)`
 * then finds the rule's recursion point and nothing else. */
#include "rewrite/plugin.h"
#include "strategies.h"

#include <stdio.h>

/* ---- a scan, whatever its form (st_scan_form, in rewrite/plugin.h) ---- */

/* what a thread folds its own elements with */
static const st_node *stepper(const st_scan_form *p) { return p->fold ? p->fold : p->op; }

/* the scan (or reduction) of xs with p's operator and fold, accumulators out */
static const st_node *acc_scan(st_build *b, const st_scan_form *p, st_prim prim, const st_node *xs) {
    return p->fold ? ST_PRIM(b, prim, p->op, p->fold, p->z, xs) : ST_PRIM(b, prim, p->op, p->z, xs);
}

/* the output of an element whose final accumulator is acc */
static const st_node *finish(st_build *b, const st_scan_form *p, const st_node *acc, const st_node *x) {
    return p->post ? ST_CALL(b, p->post, acc, x) : acc;
}

/* z for i == 0, else prefixes[i - 1]: what comes before block i
 * (st_exclusive_at, which exscans are made of too) */
static const st_node *exclusive(st_build *b, const st_node *prefixes, const st_node *i, const st_node *z) {
    if (!prefixes || !i || !z) return NULL;
    st_err e = {0};
    return st_b_check(b, st_exclusive_at(b->cx, prefixes, i, z, &e), &e);
}

/* accs mapped through the post-function with the elements xs (if any) */
static const st_node *finish_all(st_build *b, const st_scan_form *p, const st_node *accs, const st_node *xs) {
    if (!p->post) return accs;
    const st_node *acc = st_b_var(b, "acc", st_elem_of(accs)), *x = st_b_var(b, "x", st_elem_of(xs));
    return ST_PRIM(b, ST_PRIM_MAP, ST_LAMBDA(b, finish(b, p, acc, x), acc, x), ST_PRIM(b, ST_PRIM_ZIP, accs, xs));
}

/* ---- conditions ---- */

static void size_text(const st_size *s, char *buf, size_t cap) {
    st_buf t = {0};
    st_size_print(s, &t);
    snprintf(buf, cap, "%s", t.data ? t.data : "?");
    st_buf_free(&t);
}

static bool divides(st_rw *rw, int64_t d, const st_size *n) {
    return st_size_divides(st_size_const(st_rw_ctx(rw), d), n);
}

static const st_node *not_a_scan(const char *rule, st_err *why) {
    return st_no_match(why, "%s rewrites a scan (an exscan once exscans-as-scans made it one)", rule);
}

/* the scan's length must be a multiple of k (the parameter `what`) */
static bool length_divisible(st_rw *rw, const st_scan_form *p, int64_t k, const char *what, const char *rule,
                             st_err *why) {
    if (divides(rw, k, p->xs->type->size)) return true;
    char len[96];
    size_text(p->xs->type->size, len, sizeof len);
    int64_t c;
    if (st_size_is_const(p->xs->type->size, &c))
        return st_reject(why, "%s: the scan's length %s is not a multiple of %s = %lld (pad-scan pads it)", rule, len, what, (long long)k);
    return st_reject(why, "%s: the scan's length %s is not known to be a multiple of %s = %lld; state it with `where … %% %lld == 0`, or pad with pad-scan",
                   rule, len, what, (long long)k, (long long)k);
}

/* ---- scan-then-propagate(BS): listing 4 ---- */

/* scan(op, z, xs) with BS | n becomes
 *   let blocks = xs |> split(BS)
 *   let scanned = blocks |> map(b => b |> scan(op, z))      each block on its own
 *   let prefixes = iota(n/BS) |> map(j => scanned |> get(j) |> get(BS - 1))
 *                  |> scan(op, z)                           the scan of the totals
 *   in zip(iota(n/BS), scanned) |> map((i, s) =>
 *        let p = (if i == 0 then z else prefixes |> get(i - 1)) in s |> map(y => op(p, y)))
 *      |> join
 * A block's total is the last element of its scan ([Pizzuti et al. 2022]'s listing
 * reduces the scanned chunks, which means the same: their last element), so
 * the totals cost no pass over the input of their own: the input is read
 * once by the block scans, and the scanned blocks once by the propagation,
 * 4n elements moved in all. The totals are no array of their own either:
 * their scan reads them out of the scanned blocks (an index map is a view). */
static const st_node *scan_then_propagate(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    st_scan_form p;
    if (!st_scan_form_of(e, &p)) return not_a_scan("scan-then-propagate", why);
    if (st_seed_not_neutral(e)) return st_with_seed_out(rw, e, args, why, scan_then_propagate);
    int64_t bs = args[0];
    if (!length_divisible(rw, &p, bs, "BS", "scan-then-propagate", why)) return NULL;
    st_build B = st_build_of(rw, why), *b = &B;
    const st_node *split = ST_PRIM(b, ST_PRIM_SPLIT, st_b_count(b, bs), p.xs);
    const st_node *blocks = st_b_bound(b, "blocks", split);

    const st_node *blk = st_b_var(b, "block", st_elem_of(blocks));
    const st_node *scanned_v = ST_PRIM(b, ST_PRIM_MAP, ST_LAMBDA(b, acc_scan(b, &p, ST_PRIM_SCAN, blk), blk), blocks);
    const st_node *scanned = st_b_bound(b, "scanned", scanned_v);
    const st_node *nb = scanned ? st_b_size(b, scanned->type->size) : NULL;
    const st_node *j = st_b_var(b, "j", st_type_scalar(b->cx, ST_I64));
    const st_node *last = ST_PRIM(b, ST_PRIM_GET, st_b_i64(b, bs - 1), ST_PRIM(b, ST_PRIM_GET, j, scanned));
    const st_node *sums = ST_PRIM(b, ST_PRIM_MAP, ST_LAMBDA(b, last, j), ST_PRIM(b, ST_PRIM_IOTA, nb));
    const st_node *prefixes_v = ST_PRIM(b, ST_PRIM_SCAN, p.op, p.z, sums);
    const st_node *prefixes = st_b_bound(b, "prefixes", prefixes_v);

    /* propagate: every element of block i combined with what comes before the block */
    const st_node *i = st_b_var(b, "i", st_type_scalar(b->cx, ST_I64));
    const st_node *s = st_b_var(b, "s", st_elem_of(scanned));
    const st_node *x = p.post ? st_b_var(b, "xs", st_elem_of(blocks)) : NULL;
    const st_node *pre = st_b_var(b, "prefix", p.z->type);
    const st_node *y = st_b_var(b, "y", p.z->type);
    const st_node *combined = ST_PRIM(b, ST_PRIM_MAP, ST_LAMBDA(b, ST_CALL(b, p.op, pre, y), y), s);
    const st_node *block_out = st_b_let(b, pre, exclusive(b, prefixes, i, p.z), finish_all(b, &p, combined, x));
    const st_node *per_block = p.post ? ST_PRIM(b, ST_PRIM_MAP, ST_LAMBDA(b, block_out, i, s, x),
                                             ST_PRIM(b, ST_PRIM_ZIP, ST_PRIM(b, ST_PRIM_IOTA, nb), scanned, blocks))
                                      : ST_PRIM(b, ST_PRIM_MAP, ST_LAMBDA(b, block_out, i, s),
                                             ST_PRIM(b, ST_PRIM_ZIP, ST_PRIM(b, ST_PRIM_IOTA, nb), scanned));
    const st_node *out = ST_PRIM(b, ST_PRIM_JOIN, per_block);
    return st_b_let(b, blocks, split, st_b_let(b, scanned, scanned_v, st_b_let(b, prefixes, prefixes_v, out)));
}

/* ---- brent-kung-step(BF): listing 5 ---- */

/* scan(op, z, xs) with BF | n becomes one layer of the tree around a scan of
 * n/BF elements, the recursion point:
 *   let groups = xs |> split(BF)
 *   let partials = groups |> map(g => g |> reduce(op, z))          upsweep
 *   let prefixes = partials |> scan(op, z)                          recursion point
 *   in zip(iota(n/BF), groups) |> map((i, g) =>                      downsweep
 *        g |> scanSeq(op, if i == 0 then z else prefixes |> get(i - 1)))
 *      |> join */
static const st_node *brent_kung_step(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    st_scan_form p;
    if (!st_scan_form_of(e, &p)) return not_a_scan("brent-kung-step", why);
    if (st_seed_not_neutral(e)) return st_with_seed_out(rw, e, args, why, brent_kung_step);
    int64_t bf = args[0];
    if (!length_divisible(rw, &p, bf, "BF", "brent-kung-step", why)) return NULL;
    st_build B = st_build_of(rw, why), *b = &B;
    const st_node *split = ST_PRIM(b, ST_PRIM_SPLIT, st_b_count(b, bf), p.xs);
    const st_node *groups = st_b_bound(b, "groups", split);
    const st_node *g = st_b_var(b, "g", st_elem_of(groups));
    const st_node *partials_v = ST_PRIM(b, ST_PRIM_MAP, ST_LAMBDA(b, acc_scan(b, &p, ST_PRIM_REDUCE, g), g), groups);
    const st_node *partials = st_b_bound(b, "partials", partials_v);
    const st_node *prefixes_v = ST_PRIM(b, ST_PRIM_SCAN, p.op, p.z, partials);
    const st_node *prefixes = st_b_bound(b, "prefixes", prefixes_v);

    const st_node *nb = partials ? st_b_size(b, partials->type->size) : NULL;
    const st_node *i = st_b_var(b, "i", st_type_scalar(b->cx, ST_I64));
    const st_node *g2 = st_b_var(b, "g", st_elem_of(groups));
    const st_node *down = ST_PRIM(b, ST_PRIM_SCAN_SEQ, stepper(&p), exclusive(b, prefixes, i, p.z), g2);
    const st_node *per_group = ST_PRIM(b, ST_PRIM_MAP, ST_LAMBDA(b, finish_all(b, &p, down, g2), i, g2),
                                    ST_PRIM(b, ST_PRIM_ZIP, ST_PRIM(b, ST_PRIM_IOTA, nb), groups));
    const st_node *out = ST_PRIM(b, ST_PRIM_JOIN, per_group);
    return st_b_let(b, groups, split, st_b_let(b, partials, partials_v, st_b_let(b, prefixes, prefixes_v, out)));
}

/* ---- sequential-scan: the sequential middle of listing 8 ---- */

static const st_node *sequential_scan(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    st_scan_form p;
    if (!st_scan_form_of(e, &p)) return not_a_scan("sequential-scan", why);
    st_build B = st_build_of(rw, why), *b = &B;
    return finish_all(b, &p, ST_PRIM(b, ST_PRIM_SCAN_SEQ, stepper(&p), p.z, p.xs), p.xs);
}

/* ---- pad-scan(BS): every length ---- */

/* A read of one element of the scan's input, index-fused: of a producer
 * (a map, a zip of maps) it computes that element only, not the whole
 * producer once per element. */
static const st_node *fused(st_build *b, const st_node *read) {
    if (!read) return NULL;
    st_err e = {0};
    const st_node *r = st_fuse_index(b->cx, st_rw_def(b->rw), read, &e);
    if (!r && !b->err->message[0]) *b->err = e;
    return r;
}

/* Element i of *xs, index-fused. When one element costs more than a read
 * (it is an element of a scan, a reduction), *xs is computed once into
 * memory instead: *input becomes a variable to bind it to (the caller lets
 * it around its result), *xs that variable. */
static const st_node *element_at(st_build *b, const st_node **xs, const st_node **input, const st_node *i) {
    const st_node *x = fused(b, ST_PRIM(b, ST_PRIM_GET, i, *xs));
    if (!x || st_is_view(x, true) || st_is_view_scalar(x)) return x; /* scalar lets: an exscan's shifted input */
    *input = st_b_bound(b, "input", *xs);
    *xs = *input;
    return ST_PRIM(b, ST_PRIM_GET, i, *input);
}

/* scan(op, z, xs) with n not a multiple of BS becomes a scan of m = ⌈n/BS⌉·BS
 * elements, the tail filled with z, of which the first n are kept:
 *   let padded = iota(m) |> map(i => if i < n then xs |> get(i) else z)
 *   let scanned = padded |> scan(op, z)
 *   in iota(n) |> map(i => scanned |> get(i))
 * The reads of xs are index-fused, so padded is a map of the index alone
 * (xs is let-bound first when an element of it costs more than a read):
 * a view (st_is_view), which lowering leaves unmaterialised and codegen
 * reads where the scan reads it, with the bounds test. The padding adds no
 * kernel and no buffer of its own.
 * With a fold the padding is of accumulators (fold(z, x) for an element,
 * z for the tail), so that the scan of them is a plain one. */
static const st_node *pad_scan(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    st_scan_form p;
    if (!st_scan_form_of(e, &p)) return not_a_scan("pad-scan", why);
    int64_t bs = args[0];
    const st_size *n = p.xs->type->size;
    if (divides(rw, bs, n))
        return st_reject(why, "pad-scan: the scan's length is already a multiple of BS = %lld; there is nothing to pad", (long long)bs), NULL;
    st_ctx *cx = st_rw_ctx(rw);
    st_err serr = {0};
    const st_size *k = st_size_const(cx, bs);
    const st_size *m = st_size_mul(cx, st_size_div(cx, st_size_add(cx, n, st_size_const(cx, bs - 1), &serr), k, &serr), k, &serr);
    if (!m) return *why = serr, NULL;
    st_build B = st_build_of(rw, why), *b = &B;
    const st_node *n_e = st_b_size(b, n), *m_e = st_b_size(b, m), *n_value = st_b_size_value(b, n);
    const st_node *i = st_b_var(b, "i", st_type_scalar(cx, ST_I64));
    const st_node *xs = p.xs, *input = NULL;
    const st_node *x = element_at(b, &xs, &input, i);
    const st_node *item = p.fold ? ST_CALL(b, p.fold, p.z, x) : x;
    const st_node *padded_v = ST_PRIM(b, ST_PRIM_MAP, ST_LAMBDA(b, st_b_if(b, st_b_binop(b, ST_OP_LT, i, n_value), item, p.z), i),
                                   ST_PRIM(b, ST_PRIM_IOTA, m_e));
    const st_node *padded = st_b_bound(b, "padded", padded_v);
    const st_node *scanned_v = ST_PRIM(b, ST_PRIM_SCAN, p.op, p.z, padded);
    const st_node *scanned = st_b_bound(b, "scanned", scanned_v);
    const st_node *j = st_b_var(b, "i", st_type_scalar(cx, ST_I64));
    const st_node *kept = finish(b, &p, ST_PRIM(b, ST_PRIM_GET, j, scanned), p.post ? fused(b, ST_PRIM(b, ST_PRIM_GET, j, xs)) : NULL);
    const st_node *out = ST_PRIM(b, ST_PRIM_MAP, ST_LAMBDA(b, kept, j), ST_PRIM(b, ST_PRIM_IOTA, n_e));
    const st_node *r = st_b_let(b, padded, padded_v, st_b_let(b, scanned, scanned_v, out));
    return input ? st_b_let(b, input, p.xs, r) : r;
}

/* ---- composites: strategies over the scan they are applied to ---- */

static const st_rule rule_brent_kung_step, rule_sequential_scan, rule_scan_then_propagate, rule_pad_scan,
    rule_brent_kung;

/* What a composite's strategy reads as (cx in scope): a ; b, first(scan, a),
 * a rule with its arguments. */
#define SEQ(a, b) st_s_seq(cx, (a), (b))
#define FIRST_SCAN(a) st_s_first(cx, ST_PRIM_SCAN, (a))
#define RULE(rule, ...) st_s_rule(cx, &(rule), (const int64_t[]){__VA_ARGS__})

/* BF^TD, or -1 on overflow */
static int64_t power(int64_t bf, int64_t td) {
    int64_t v = 1;
    for (int64_t i = 0; i < td; i++)
        if (__builtin_mul_overflow(v, bf, &v)) return -1;
    return v;
}

/* brent-kung(BF, TD), listing 6: TD steps, then the middle sequentially */
static const st_strategy *brent_kung(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    st_scan_form p;
    if (!st_scan_form_of(e, &p)) return not_a_scan("brent-kung", why), NULL;
    int64_t bf = args[0], td = args[1], tree = power(bf, td);
    char len[96];
    size_text(p.xs->type->size, len, sizeof len);
    if (tree < 0 || !divides(rw, tree, p.xs->type->size))
        return st_reject(why, "brent-kung: TD = %lld goes beyond the tree: BF^TD = %lld^%lld does not divide the scan's length %s",
                       (long long)td, (long long)bf, (long long)td, len), NULL;
    st_ctx *cx = st_rw_ctx(rw);
    return SEQ(st_s_iterate(cx, td, FIRST_SCAN(RULE(rule_brent_kung_step, bf))), FIRST_SCAN(RULE(rule_sequential_scan, 0)));
}

static bool brent_kung_check(const int64_t *args, st_err *why) {
    if (power(args[0], args[1]) < 0)
        return st_reject(why, "BF^TD = %lld^%lld overflows", (long long)args[0], (long long)args[1]);
    return true;
}

/* parallel-scan's tree depth, from TD or from SE, the length of the
 * sequential middle of each block: SE = BS / BF^TD. ([Pizzuti et al. 2022] writes
 * TD = log2(BS - SE), which is whole for few points of its own space,
 * BS in 32..512 and SE in 1..16; BS / BF^TD is the number of elements each
 * block scans sequentially, as in its listing 8: BS = 16, TD = 2, SE = 4.) */
static bool tree_depth(const int64_t *args, int64_t *td, st_err *why) {
    int64_t bs = args[0], bf = args[1];
    bool has_td = args[2] != ST_PARAM_UNSET, has_se = args[3] != ST_PARAM_UNSET;
    if (has_td == has_se) return st_reject(why, "give the tree's depth TD, or the length of the sequential middle SE = BS / BF^TD (one of them)");
    if (bs % bf != 0) return st_reject(why, "BS %% BF == 0 does not hold: BS = %lld, BF = %lld", (long long)bs, (long long)bf);
    if (has_td) {
        *td = args[2];
        int64_t t = power(bf, *td);
        if (t < 0 || bs % t != 0)
            return st_reject(why, "TD = %lld goes beyond the tree: BF^TD = %lld^%lld does not divide BS = %lld", (long long)*td, (long long)bf, (long long)*td, (long long)bs);
        return true;
    }
    int64_t se = args[3];
    if (se < 1 || se > bs || bs % se != 0)
        return st_reject(why, "SE = %lld is not a length of the sequential middle: SE must divide BS = %lld", (long long)se, (long long)bs);
    int64_t tree = bs / se;
    *td = 0;
    for (int64_t v = 1; v < tree && v <= INT64_MAX / bf; v *= bf) ++*td;
    if (power(bf, *td) != tree)
        return st_reject(why, "BS / SE = %lld is not a power of BF = %lld, so no tree depth TD gives SE = %lld", (long long)tree, (long long)bf, (long long)se);
    return true;
}

static bool parallel_scan_check(const int64_t *args, st_err *why) {
    int64_t td;
    return tree_depth(args, &td, why);
}

/* How many levels of parallel-scan a scan gets: the first, and one for the
 * scan of each level's block totals, until BS^levels >= 2^16 (at most 4), so
 * that what stays one work-item's sequential scan is at most n / 65536
 * elements (32 of 2^21, 2^12 of 2^28) and never n / BS: one work-item
 * walking millions of totals would cost a GPU hundreds of copies (the
 * README's measurements of parallel-scan's levels).
 * Each level adds a kernel, its block scans over BS times fewer elements
 * than the level above; its propagation is an element-wise map, computed
 * where the level above reads its prefixes (index fusion), no kernel. */
enum { NEST_REACH = 1 << 16, NEST_MOST = 4 };

static int64_t nest_levels(int64_t bs) {
    int64_t levels = 1, reach = bs;
    while (reach < NEST_REACH && levels < NEST_MOST && bs > 1) reach *= bs, levels++;
    return levels;
}

static const st_rule rule_parallel_scan_level, rule_parallel_scan;
static bool parallel_place(st_rw *rw, st_err *why);

/* A composite that starts blocks from the seed, on a scan whose seed
 * seeds-as-neutral would take out: that rule first (the scan stays a scan:
 * the composite's inputs, its seed among them, stand behind variables),
 * then the composite again. */
static const st_strategy *seed_out_first(st_rw *rw, const st_rule *composite, const int64_t *args, st_err *why) {
    const st_rule *seeds = st_registry_find(st_rw_registry(rw), "seeds-as-neutral");
    if (!seeds) return st_fail_internal(why, "%s: the rule seeds-as-neutral is not registered", composite->name), NULL;
    st_ctx *cx = st_rw_ctx(rw);
    const st_strategy *s = SEQ(st_s_rule(cx, seeds, NULL), st_s_rule(cx, composite, args));
    if (!s) st_fail_internal(why, "out of memory");
    return s;
}

/* One level of parallel-scan(BS, BF, TD), listing 7, padded first when BS
 * does not divide the scan's length */
static const st_strategy *one_level(st_rw *rw, const st_scan_form *p, int64_t bs, int64_t bf, int64_t td) {
    st_ctx *cx = st_rw_ctx(rw);
    const st_strategy *level = SEQ(FIRST_SCAN(RULE(rule_scan_then_propagate, bs)), FIRST_SCAN(RULE(rule_brent_kung, bf, td)));
    return divides(rw, bs, p->xs->type->size) ? level : SEQ(RULE(rule_pad_scan, bs), level);
}

/* A level below the first, on the scan of the block totals the level above
 * left: not for totals a constant number of which fits one block. */
static const st_strategy *parallel_scan_level(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    st_scan_form p;
    int64_t len;
    if (!st_scan_form_of(e, &p)) return not_a_scan("parallel-scan", why), NULL;
    if (!parallel_place(rw, why)) return NULL;
    if (st_seed_not_neutral(e)) return seed_out_first(rw, &rule_parallel_scan_level, args, why);
    if (st_size_is_const(p.xs->type->size, &len) && len <= args[0])
        return st_reject(why, "parallel-scan: %lld block totals fit one block; they stay sequential", (long long)len), NULL;
    return one_level(rw, &p, args[0], args[1], args[2]);
}

/* Where a scan runs once per work-item, parallel-scan's blocks would run one
 * after another, and each work-item would keep padded blocks of BS in
 * scratch (10^6 rows of 3 elements: gigabytes): two lambdas deep (the levels
 * are the host, a work-group, a work-item), or in the body of a loop that
 * one work-item runs (a loop inside a map, or a top-level loop over
 * scalars). */
static bool parallel_place(st_rw *rw, st_err *why) {
    if (st_rw_in_sequential_loop(rw))
        return st_reject(why, "parallel-scan: this scan is in the body of a loop that one work-item runs "
                       "(a loop inside a map, or over scalars), where its blocks would run one after another; "
                       "parallel-scan takes a scan at the top level of a def (the body of a top-level loop over arrays "
                       "counts) or one map deep");
    if (st_rw_lambda_depth(rw) >= 2)
        return st_reject(why, "parallel-scan: this scan is inside a map inside a map, so one work-item runs it, "
                       "where blocks run one after another and each keeps a padded block of BS; parallel-scan takes a "
                       "scan at the top level of a def or one map deep");
    return true;
}

/* parallel-scan(BS, BF, TD | SE), listing 7, for every length, and again on
 * the scan of the block totals while they may be many (nest_levels): after
 * a level's block scans became Brent-Kung trees, the first scan left is the
 * scan of its block totals, where the next level goes. */
static const st_strategy *parallel_scan(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    st_scan_form p;
    int64_t td = 0;
    if (!st_scan_form_of(e, &p)) return not_a_scan("parallel-scan", why), NULL;
    if (!parallel_place(rw, why) || !tree_depth(args, &td, why)) return NULL;
    st_ctx *cx = st_rw_ctx(rw);
    if (st_seed_not_neutral(e)) return seed_out_first(rw, &rule_parallel_scan, args, why);
    const st_strategy *s = one_level(rw, &p, args[0], args[1], td);
    for (int64_t l = nest_levels(args[0]); l > 1; l--)
        s = SEQ(s, st_s_try(cx, FIRST_SCAN(RULE(rule_parallel_scan_level, args[0], args[1], td))));
    return s;
}

/* ---- parallel-reduce(BS): a top-level reduction in chunks ---- */

/* The fold by step from z of xs's elements from `first` on, one for each
 * element j of iota(count): iota(count) |> reduce(op, (acc, j) =>
 * step(acc, xs[first + j]), z). A reduce with a fold, rather than
 * reduceSeq, because its accumulator's type (z's) is not its elements'
 * (the indices), which reduce's printed form reads back as, and
 * reduceSeq's does not. *input as element_at's. */
static const st_node *fold_from(st_build *b, const st_node *op, const st_node *step, const st_node *z, const st_node **xs,
                                const st_node **input, const st_node *first, const st_node *count) {
    const st_node *j = st_b_var(b, "j", st_type_scalar(b->cx, ST_I64)), *acc = st_b_var(b, "acc", z->type);
    const st_node *x = element_at(b, xs, input, st_b_binop(b, ST_OP_ADD, first, j));
    return ST_PRIM(b, ST_PRIM_REDUCE, op, ST_LAMBDA(b, ST_CALL(b, step, acc, x), acc, j), z, ST_PRIM(b, ST_PRIM_IOTA, count));
}

/* n in pieces of k: *m = n / k whole pieces, *whole = m·k elements in them,
 * *rest = n − whole after them. */
static bool in_pieces(st_ctx *cx, const st_size *n, int64_t k, const st_size **m, const st_size **whole,
                      const st_size **rest, st_err *err) {
    st_err serr = {0};
    *m = st_size_div(cx, n, st_size_const(cx, k), &serr);
    *whole = *m ? st_size_mul(cx, *m, st_size_const(cx, k), &serr) : NULL;
    *rest = *whole ? st_size_sub(cx, n, *whole, &serr) : NULL;
    if (!*rest) *err = serr;
    return *rest != NULL;
}

/* How many lanes a fold by op from z is folded in, 0 for none: where op is
 * associative and commutative on one float (+ * min max) and z its neutral
 * element, two 64-byte vector registers' worth (AVX-512's, four of AVX2's).
 * An integer's fold the compiler vectorises itself, its operations
 * reassociating exactly; a float's it may not reorder. */
static int64_t lanes_for(const st_node *op, const st_node *z) {
    st_binop o;
    if (z->type->kind != ST_TYPE_SCALAR || !st_scalar_is_float(z->type->scalar) || !st_fn_binop(op, &o)) return 0;
    if (o != ST_OP_ADD && o != ST_OP_MUL && o != ST_OP_MIN && o != ST_OP_MAX) return 0;
    return st_is_neutral_of(z, o) ? (st_scalar_size(z->type->scalar) == 8 ? 16 : 32) : 0;
}

/* The rows · W elements from `first` (NULL: from 0) folded in W interleaved
 * lanes: lane l takes the elements l, l + W, l + 2W, …, from z; then the
 * lanes by op:
 *   iota(rows) |> reduce((u, v) => zip(u, v) |> map((x, y) => op(x, y)),
 *                        (accs, k) => zip(accs, iota(W)) |> map((a, l) => step(a, xs[first + k * W + l])),
 *                        replicate(W, z))
 *   |> reduce(op, z)
 * A fold is a chain of dependent operations, and a CPU's compiler may not
 * reassociate a float's: in order, each element waits for the one before.
 * The lanes are independent chains, one vector's worth of them: the row of
 * accumulators is short, so codegen keeps it in registers and unrolls its
 * step, which the compiler makes vector operations. The order differs from
 * the chunk's, which op's commutativity allows (step keeps the fold's
 * promise, step(a, x) = op(a, f(x))). */
static const st_node *lanes_from(st_build *b, const st_node *op, const st_node *step, const st_node *z, const st_node **xs,
                                 const st_node **input, const st_node *first, const st_node *rows, int64_t w) {
    st_ctx *cx = b->cx;
    const st_type *t = z->type, *i64 = st_type_scalar(cx, ST_I64);
    const st_type *row = st_type_array(cx, st_size_const(cx, w), t);
    const st_node *u = st_b_var(b, "u", row), *v = st_b_var(b, "v", row), *x = st_b_var(b, "x", t),
                  *y = st_b_var(b, "y", t);
    const st_node *rows_op =
        ST_LAMBDA(b, ST_PRIM(b, ST_PRIM_MAP, ST_LAMBDA(b, ST_CALL(b, op, x, y), x, y), ST_PRIM(b, ST_PRIM_ZIP, u, v)), u, v);
    const st_node *accs = st_b_var(b, "accs", row), *k = st_b_var(b, "k", i64), *a = st_b_var(b, "a", t),
                  *l = st_b_var(b, "l", i64);
    const st_node *row_at = st_b_binop(b, ST_OP_MUL, k, st_b_i64(b, w));
    const st_node *at = st_b_binop(b, ST_OP_ADD, first ? st_b_binop(b, ST_OP_ADD, first, row_at) : row_at, l);
    const st_node *each = ST_LAMBDA(b, ST_CALL(b, step, a, element_at(b, xs, input, at)), a, l);
    const st_node *lanes = ST_PRIM(b, ST_PRIM_ZIP, accs, ST_PRIM(b, ST_PRIM_IOTA, st_b_count(b, w)));
    const st_node *fold = ST_LAMBDA(b, ST_PRIM(b, ST_PRIM_MAP, each, lanes), accs, k);
    const st_node *folded = ST_PRIM(b, ST_PRIM_REDUCE, rows_op, fold, ST_PRIM(b, ST_PRIM_REPLICATE, st_b_count(b, w), z),
                                  ST_PRIM(b, ST_PRIM_IOTA, rows));
    return ST_PRIM(b, ST_PRIM_REDUCE, op, z, folded);
}

/* The fold of xs (of length n) in chunks of BS, each folded in order by step
 * from z, then the partials and the tail (the n % BS elements after the
 * last whole chunk) by op:
 *   op(iota(n / BS) |> map(c => fold_from(c * BS, BS)) |> reduce(op, z),
 *      fold_from(n / BS * BS, n - n / BS * BS))
 * A reduce inside a map is one work-item's sequential fold. Whole chunks
 * only, so that a chunk's loop is a plain one over BS elements, with no
 * test of the end in it (a CPU's compiler vectorises it), and its reads of
 * xs need no check (c * BS + j lies below n / BS * BS). */
static const st_node *chunk_fold(st_build *b, const st_node *op, const st_node *step, const st_node *z, const st_node **xs,
                                 const st_node **input, int64_t bs) {
    st_ctx *cx = b->cx;
    const st_size *m, *whole, *rest;
    if (!in_pieces(cx, (*xs)->type->size, bs, &m, &whole, &rest, b->err)) return NULL;
    const st_node *c = st_b_var(b, "c", st_type_scalar(cx, ST_I64));
    const st_node *first = st_b_binop(b, ST_OP_MUL, c, st_b_i64(b, bs));
    int64_t w = lanes_for(op, z);
    const st_node *chunk = w && bs % w == 0 && bs > w ? lanes_from(b, op, step, z, xs, input, first, st_b_count(b, bs / w), w)
                                                      : fold_from(b, op, step, z, xs, input, first, st_b_count(b, bs));
    const st_node *partials = ST_PRIM(b, ST_PRIM_MAP, ST_LAMBDA(b, chunk, c), ST_PRIM(b, ST_PRIM_IOTA, st_b_size(b, m)));
    const st_node *tail = fold_from(b, op, step, z, xs, input, st_b_size_value(b, whole), st_b_size(b, rest));
    return ST_CALL(b, op, ST_PRIM(b, ST_PRIM_REDUCE, op, z, partials), tail);
}

/* The most elements of a row accumulator parallel-reduce takes: what a
 * work-item keeps in registers as it folds its chunk (a count per bit of
 * 32-bit keys) */
enum { SHORT_ROWS = 256 };

/* Is t made of arrays of constant lengths (and scalars), SHORT_ROWS
 * elements at most in all? */
static bool constant_elements(const st_type *t, int64_t *n) {
    int64_t len, each;
    switch (t->kind) {
    case ST_TYPE_SCALAR: *n = 1; return true;
    case ST_TYPE_ARRAY:
        return st_size_is_const(t->size, &len) && constant_elements(t->elem, &each) && each <= SHORT_ROWS &&
               len <= SHORT_ROWS && (*n = len * each, true);
    case ST_TYPE_TUPLE:
        *n = 0;
        for (uint32_t i = 0; i < t->n; i++) {
            if (!constant_elements(t->items[i], &each)) return false;
            *n += each;
        }
        return true;
    default: return false;
    }
}

static bool short_rows(const st_type *t) {
    int64_t total;
    return constant_elements(t, &total) && total <= SHORT_ROWS;
}

/* Is xs's length a constant of at most k (one chunk: nothing to share)? */
static bool at_most(const st_node *xs, int64_t k) {
    int64_t len;
    return st_size_is_const(xs->type->size, &len) && len <= k;
}

/* reduce(op, z, xs) or reduce(op, fold, z, xs) at the top level becomes
 * chunk_fold's form: the partials of whole chunks of BS (n / BS of them)
 * folded by one work-item at the end, then the tail. The chunks are
 * contiguous and their partials combined in order, the tail last, so op
 * need not commute; z is op's neutral element (an empty chunk, or tail, is
 * z). No let: the map of chunks is the reduce's input, which codegen
 * computes first, in parallel, wherever the reduce stands (an operand, a
 * branch); a let there would not be. For the same reason an input whose
 * elements cost more than a read (a scan's) is refused rather than bound. */
static const st_node *parallel_reduce(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    st_scan_form p;
    if (!st_is_prim(e, ST_PRIM_REDUCE) || !st_fold_form_of(e, &p)) return st_no_match(why, "parallel-reduce rewrites a reduce");
    int64_t bs = args[0];
    if (!st_at_top_level(rw, "parallel-reduce", "reduce", why)) return NULL;
    if (st_seed_not_neutral(e)) return st_with_seed_out(rw, e, args, why, parallel_reduce);
    if (!st_type_is_plain(p.z->type) && !short_rows(p.z->type))
        return st_reject(why, "parallel-reduce: the reduce's accumulator holds arrays that are not rows of a constant "
                         "length of at most %d elements in all; its chunks' partials are what one work-item each "
                         "keeps, so it takes scalars, tuples of scalars and such short rows only", SHORT_ROWS), NULL;
    if (at_most(p.xs, bs))
        return st_reject(why, "parallel-reduce: the reduce's length is a constant of at most BS = %lld, one chunk; "
                         "it stays one work-item's sequential fold", (long long)bs), NULL;
    st_build B = st_build_of(rw, why), *b = &B;
    const st_node *xs = p.xs, *input = NULL;
    const st_node *folded = chunk_fold(b, p.op, st_fold_step(&p), p.z, &xs, &input, bs);
    if (input)
        return st_reject(why, "parallel-reduce: an element of the reduce's input costs more than a read (the input is "
                         "a scan's or a reduction's result, not an array or a map of one); bind it with `let` first"), NULL;
    return folded;
}

/* ---- reduce-lanes: a float reduction in interleaved lanes, anywhere ----
 *
 * reduce(op, [fold,] z, xs) of n elements, op + * min max on one float and
 * z its neutral element, as its whole rows of W folded in W lanes
 * (lanes_from) and the n % W elements after them in order, combined by op:
 *   op(lanes_from(xs, n / W), iota(n - n / W * W) |> reduce(op, (acc, j) => step(acc, xs[n / W * W + j]), z))
 * Where a work-item folds a row of its own (map(row => reduce(+, 0.0,
 * row)), the partials of parallel-reduce's chunks), the fold is then
 * vector operations on a CPU. Anywhere: inside a lambda too. */
static const st_node *reduce_lanes(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    st_scan_form p;
    if (!st_is_prim(e, ST_PRIM_REDUCE) || !st_fold_form_of(e, &p)) return st_no_match(why, "reduce-lanes rewrites a reduce");
    int64_t w = lanes_for(p.op, p.z), len;
    if (!w)
        return st_reject(why, "reduce-lanes: the reduce's operator is not + * min max on one float, or its seed is not "
                         "the operator's neutral element; an integer's fold the compiler vectorises as it is"), NULL;
    const st_size *n = p.xs->type->size;
    if (st_size_is_const(n, &len) && len < 2 * w)
        return st_reject(why, "reduce-lanes: the reduce's length is a constant below %lld, two rows of its %lld lanes",
                         (long long)(2 * w), (long long)w), NULL;
    const st_size *rows, *whole, *rest;
    if (!in_pieces(st_rw_ctx(rw), n, w, &rows, &whole, &rest, why)) return NULL;
    st_build B = st_build_of(rw, why), *b = &B;
    const st_node *xs = p.xs, *input = NULL, *step = st_fold_step(&p);
    const st_node *lanes = lanes_from(b, p.op, step, p.z, &xs, &input, NULL, st_b_size(b, rows), w);
    const st_node *tail = fold_from(b, p.op, step, p.z, &xs, &input, st_b_size_value(b, whole), st_b_size(b, rest));
    if (input)
        return st_reject(why, "reduce-lanes: an element of the reduce's input costs more than a read (the input is a "
                         "scan's or a reduction's result, not an array or a map of one); bind it with `let` first"), NULL;
    return ST_CALL(b, p.op, lanes, tail);
}

/* ---- the table ---- */

#define BS_PARAM {.name = "BS", .doc = "the block size: elements per work-group", .min = 1, .max = 1 << 20}
#define BF_PARAM {.name = "BF", .doc = "the branching factor of the tree", .min = 2, .max = 1024}

static const st_rule rule_scan_then_propagate = {
    .name = "scan-then-propagate",
    .summary = "scan blocks of BS on their own, scan the block totals, add each block's prefix (listing 4)",
    .conditions = "the scan's length is a multiple of BS (from the sizes and the where clause); a seed other than the "
                  "operator's neutral element is taken out first, as seeds-as-neutral does (every block starts from "
                  "the seed); an exscan once exscans-as-scans made it the scan of its input shifted by one (a view)",
    .origin = "built-in",
    .nparams = 1,
    .params = {BS_PARAM},
    .apply = scan_then_propagate,
};

static const st_rule rule_brent_kung_step = {
    .name = "brent-kung-step",
    .summary = "one layer of a Brent-Kung tree: reduce groups of BF, scan the results, scan each group from its prefix (listing 5)",
    .conditions = "the scan's length is a multiple of BF (a seed taken out first, as for scan-then-propagate)",
    .origin = "built-in",
    .nparams = 1,
    .params = {BF_PARAM},
    .apply = brent_kung_step,
};

static const st_rule rule_sequential_scan = {
    .name = "sequential-scan",
    .summary = "a scan done by one thread in order (scanSeq)",
    .conditions = "none",
    .origin = "built-in",
    .apply = sequential_scan,
};

static const st_rule rule_brent_kung = {
    .name = "brent-kung",
    .summary = "TD layers of a Brent-Kung tree around a sequential middle (listing 6); TD = log_BF(length) is the full tree",
    .conditions = "BF^TD divides the scan's length; acts on the scan it is applied to, not on a scan in its input",
    .origin = "built-in",
    .nparams = 2,
    .params = {BF_PARAM, {.name = "TD", .doc = "the tree's depth", .min = 0, .max = 62}},
    .expand = brent_kung,
    .check = brent_kung_check,
};

static const st_rule rule_pad_scan = {
    .name = "pad-scan",
    .summary = "pad a scan's input with the neutral element to a multiple of BS, scan, and keep the first elements; "
               "the padded input is a view (read where the scan reads it, no kernel or buffer of its own)",
    .conditions = "the scan's length is not already a multiple of BS",
    .origin = "built-in",
    .nparams = 1,
    .params = {BS_PARAM},
    .apply = pad_scan,
};

/* a level of parallel-scan below the first, which parallel-scan applies to
 * the scan of its block totals: a name of its own, so that a trace tells
 * it from the rule a user wrote */
static const st_rule rule_parallel_scan_level = {
    .name = "parallel-scan-level",
    .summary = "one level of parallel-scan (BS, BF and the tree's depth TD) on the scan of a level's block totals: "
               "what parallel-scan applies below its first level",
    .conditions = "a scan of more block totals than fit one block (not a constant length of at most BS), placed as "
                  "parallel-scan takes one; a seed taken out first, as for scan-then-propagate",
    .origin = "built-in",
    .nparams = 3,
    .params = {BS_PARAM, BF_PARAM, {.name = "TD", .doc = "the tree's depth in a block", .min = 0, .max = 62}},
    .expand = parallel_scan_level,
};

static const st_rule rule_parallel_scan = {
    .name = "parallel-scan",
    .summary = "scan-then-propagate(BS) with a Brent-Kung tree of depth TD in each block (listing 7), for any length "
               "(padding when BS does not divide it); the tree's sequential middle scans SE = BS / BF^TD elements; "
               "the scan of the block totals gets the same again, nested until BS^levels >= 65536 (at most 4 levels)",
    .conditions = "BS % BF == 0; exactly one of TD and SE; a seed taken out first, as for scan-then-propagate; BF^TD divides BS (TD), or BS / SE is a power of BF (SE); "
                  "any length; at the top level (the body of a top-level loop over arrays counts) or one map deep, not in a map "
                  "inside a map nor in a loop that one work-item runs (one work-item's code); acts on "
                  "the scan it is applied to, not on a scan in its input (each(scan, …) takes those)",
    .origin = "built-in",
    .nparams = 4,
    .params = {BS_PARAM, BF_PARAM,
               {.name = "TD", .doc = "the tree's depth in a block", .min = 0, .max = 62, .optional = true},
               {.name = "SE", .doc = "elements of the sequential middle of a block: BS / BF^TD", .min = 1, .max = 1 << 20, .optional = true}},
    .expand = parallel_scan,
    .check = parallel_scan_check,
};

static const st_rule rule_reduce_lanes = {
    .name = "reduce-lanes",
    .summary = "a float reduce as its whole rows of 32 (16 for f64) folded in as many interleaved lanes, a row of "
               "accumulators the compiler makes vector operations, then the lanes and the tail (the N % 32 elements "
               "after the rows) in order",
    .conditions = "a reduce (anywhere, inside a lambda too) whose operator is + * min max on one float and whose seed "
                  "is its neutral element; its length not a constant below two rows of lanes; an element of its input "
                  "no more than a read",
    .origin = "built-in",
    .apply = reduce_lanes,
};

static const st_rule rule_parallel_reduce = {
    .name = "parallel-reduce",
    .summary = "a reduce as the reduce of the partial results of the whole chunks of BS elements, each folded in order "
               "by one work-item of its own, then the tail (the N % BS elements after them); a fused map "
               "(reduce(op, fold, z, xs)) is folded in the chunks",
    .conditions = "a reduce at the top level of a def (the body of a top-level loop over arrays counts), not inside a "
                  "lambda; its accumulator a scalar, a tuple of scalars or short rows (constant lengths, 256 elements in "
                  "all at most); its length not a constant of at most BS; an "
                  "element of its input no more than a read (an array, a view or a map of one, not a scan's result); "
                  "z is the operator's neutral element (which need not commute; a seed strata knows is not is taken out "
                  "first, as seeds-as-neutral does)",
    .origin = "built-in",
    .nparams = 1,
    .params = {{.name = "BS", .doc = "the chunk size: elements one work-item folds", .min = 1, .max = 1 << 24}},
    .apply = parallel_reduce,
};

bool st_register_scan_rules(st_registry *r, st_err *err) {
    const st_rule *rules[] = {&rule_scan_then_propagate, &rule_brent_kung_step, &rule_brent_kung,
                              &rule_sequential_scan, &rule_pad_scan, &rule_parallel_scan, &rule_parallel_scan_level,
                              &rule_parallel_reduce, &rule_reduce_lanes};
    for (size_t i = 0; i < sizeof rules / sizeof *rules; i++)
        if (!st_registry_add(r, rules[i], err)) return false;
    return true;
}
