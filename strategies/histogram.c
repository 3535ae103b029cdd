/* strategies/histogram.c — histograms in subhistograms.
 *
 *   subhistogram(C, MEM, ATOMIC)   reduce_by_index(dest, op, z, is, vs)
 *                               -> subhistograms(C, MEM, ATOMIC, dest, op, z, is, vs)
 *                               reduce_by_index_2d(dest, op, z, is, vs)
 *                               -> split(m, subhistograms(…, join(dest), op, z, map(flat, is), vs))
 *   flatten-2d                  reduce_by_index_2d / scatter_2d, dest [n][m]t
 *                               -> split(m, reduce_by_index / scatter over join(dest) at r*m + c)
 *
 * The seed is histogram-subhistogramming.txt. Work-items update the
 * histogram with atomic operations; C of them cooperate on each
 * subhistogram, trading collisions (few subhistograms) against the work of
 * making and combining many, and the subhistograms are then reduced into
 * the destination. codegen/cg_histogram.c makes the kernels; a map that
 * computes the indices or values runs inside them.
 *
 * Left out, a parameter takes [Hellfritsch 2018]'s choice, made when the program
 * runs (H is often known only then; codegen/hist_plan.c): C = H in global
 * memory (fewer on a GPU whose cache holds more subhistograms, at no more
 * work) and min(H, B) in local memory (B the work-group's size; a CPU's
 * group is one work-item owning its subhistograms); MEM local where the
 * subhistograms fit, else global; ATOMIC the one the operator allows — a
 * hardware atomic for + min max & | ^ on integers, a compare-and-swap loop
 * for any other operator on one number, a lock per bucket for the rest
 * (tuples included).
 *
 * As reduce_by_index requires, the operator must be associative and
 * commutative: atomic updates land in any order. */
#include "codegen/atomics.h" /* the rule refuses what the device cannot do */
#include "rewrite/plugin.h"
#include "strategies.h"

#include <stdio.h>

static const char *const MEM_NAMES[] = {"global", "local", NULL};
static const char *const ATOMIC_NAMES[] = {"add", "cas", "xchg", NULL};

/* ---- the 2-D forms ---- */

/* Is e a reduce_by_index_2d or scatter_2d? */
static bool is_2d(const st_node *e) {
    return e->kind == ST_NODE_PRIM && (e->u.prim == ST_PRIM_REDUCE_BY_INDEX_2D || e->u.prim == ST_PRIM_SCATTER_2D);
}

/* (r, c) => if 0 <= r < n && 0 <= c < m then r*m + c else -1, on a pair of
 * any integer types: the flat index of a pair, out of range (so ignored)
 * where either coordinate is. */
static const st_node *flat_index(st_build *b, const st_type *pair, const st_size *n, const st_size *m) {
    const st_node *p = st_b_var(b, "p", pair), *coord[2];
    for (uint32_t i = 0; i < 2; i++) coord[i] = st_b_conv(b, ST_I64, st_b_proj(b, p, i));
    const st_node *nv = st_b_size_value(b, n), *mv = st_b_size_value(b, m), *zero = st_b_i64(b, 0);
    const st_node *in_r = st_b_binop(b, ST_OP_AND, st_b_binop(b, ST_OP_GE, coord[0], zero), st_b_binop(b, ST_OP_LT, coord[0], nv));
    const st_node *in_c = st_b_binop(b, ST_OP_AND, st_b_binop(b, ST_OP_GE, coord[1], zero), st_b_binop(b, ST_OP_LT, coord[1], mv));
    const st_node *at = st_b_binop(b, ST_OP_ADD, st_b_binop(b, ST_OP_MUL, coord[0], mv), coord[1]);
    return ST_LAMBDA(b, st_b_if(b, st_b_binop(b, ST_OP_AND, in_r, in_c), at, st_b_i64(b, -1)), p);
}

const st_node *st_flatten_2d(st_build *b, const st_node *e) {
    const st_node *dest = e->kids[0];
    const st_size *n = dest->type->size, *m = dest->type->elem->size;
    int64_t mv;
    if (st_size_is_const(m, &mv) && mv == 0) return dest; /* no column: every pair is out of bounds */
    bool hist = e->u.prim == ST_PRIM_REDUCE_BY_INDEX_2D;
    const st_node *is = e->kids[hist ? 3 : 1], *vs = e->kids[hist ? 4 : 2];
    const st_node *flat_is = ST_PRIM(b, ST_PRIM_MAP, flat_index(b, is->type->elem, n, m), is);
    const st_node *flat_dest = ST_PRIM(b, ST_PRIM_JOIN, dest);
    const st_node *flat = hist ? ST_PRIM(b, ST_PRIM_REDUCE_BY_INDEX, flat_dest, e->kids[1], e->kids[2], flat_is, vs)
                               : ST_PRIM(b, ST_PRIM_SCATTER, flat_dest, flat_is, vs);
    const st_node *out = ST_PRIM(b, ST_PRIM_SPLIT, st_b_size(b, m), flat);
    if (out && out->type != e->type)
        return st_fail_internal(b->err, "flatten-2d: the flattened form has another type than the 2-D one"), NULL;
    return out;
}

static const st_node *flatten_2d(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    if (!is_2d(e)) return st_no_match(why, "flatten-2d rewrites a reduce_by_index_2d or scatter_2d");
    st_build B = st_build_of(rw, why);
    return st_flatten_2d(&B, e);
}

/* ---- subhistogram ---- */

/* A 1-D reduce_by_index at the top level in subhistograms. */
static const st_node *subhistograms(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    const st_node *dest = e->kids[0], *op = e->kids[1];
    const st_type *t = dest->type->elem;
    if (!st_type_is_plain(t))
        return st_reject(why, "subhistogram keeps buckets of scalars and tuples of scalars, and these "
                       "buckets hold arrays (rows)"), NULL;
    int64_t c = args[0] == ST_PARAM_UNSET ? 0 : args[0];
    int64_t mem = args[1] == ST_PARAM_UNSET ? ST_HIST_MEM_AUTO : args[1] == 0 ? ST_HIST_MEM_GLOBAL : ST_HIST_MEM_LOCAL;
    int64_t atomic = args[2] == ST_PARAM_UNSET ? (int64_t)st_hist_atomic_for(op, t) : args[2] + 1;
    st_buf name = {0};
    st_type_print(t, &name);
    char type[96];
    snprintf(type, sizeof type, "%s", name.data ? name.data : "?");
    st_buf_free(&name);
    st_binop b;
    if (atomic == ST_HIST_ADD && !st_hist_hardware_op(op, t, &b))
        return st_reject(why, "subhistogram: ATOMIC=add needs a hardware atomic, and this operator on %s has "
                                         "none (the hardware adds, takes min and max, ands, ors and xors 32- and 64-bit integers); "
                                         "use cas or xchg", type), NULL;
    if (atomic == ST_HIST_CAS && !st_hist_cas_fits(t))
        return st_reject(why, "subhistogram: ATOMIC=cas needs values of one number, not %s; "
                                         "use xchg (a lock per bucket)", type), NULL;
    st_build B = st_build_of(rw, why), *bd = &B;
    return ST_PRIM(bd, ST_PRIM_SUBHISTOGRAMS, st_b_count(bd, c), st_b_count(bd, mem), st_b_count(bd, atomic), dest, op,
                   e->kids[2], e->kids[3], e->kids[4]);
}

/* reduce_by_index, or reduce_by_index_2d as the 1-D one over its flattened
 * destination (st_flatten_2d), so that each C, MEM and ATOMIC serves both. */
static const st_node *subhistogram(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    bool two = e->kind == ST_NODE_PRIM && e->u.prim == ST_PRIM_REDUCE_BY_INDEX_2D;
    if (!two && (e->kind != ST_NODE_PRIM || e->u.prim != ST_PRIM_REDUCE_BY_INDEX))
        return st_no_match(why, "subhistogram rewrites a reduce_by_index or reduce_by_index_2d");
    const char *name = two ? "reduce_by_index_2d" : "reduce_by_index";
    if (!st_at_top_level(rw, "subhistogram", name, why)) return NULL;
    /* every subhistogram starts from z, where the meaning reads none: the
     * neutral element where strata knows it */
    if (!(e = st_seed_taken_out(st_rw_ctx(rw), e, why))) return NULL;
    if (!two) return subhistograms(rw, e, args, why);
    st_build B = st_build_of(rw, why);
    const st_node *flat = st_flatten_2d(&B, e);
    if (!flat || flat->kind != ST_NODE_PRIM || flat->u.prim != ST_PRIM_SPLIT) return flat; /* no column: the destination */
    const st_node *sub = subhistograms(rw, flat->kids[1], args, why);
    return sub ? ST_PRIM(&B, ST_PRIM_SPLIT, flat->kids[0], sub) : NULL;
}

static const st_rule rule_subhistogram = {
    .name = "subhistogram",
    .summary = "reduce_by_index in subhistograms: C work-items cooperate on each, in global or local memory, updated "
               "by a hardware atomic, a compare-and-swap loop or a lock, then reduced into the destination; left out, "
               "C, MEM and ATOMIC take Hellfritsch 2018's heuristic (C = H global, min(H, B) local; local where it fits)",
    .conditions = "a reduce_by_index, or a reduce_by_index_2d (as the 1-D one over its flattened destination at r*m + c), "
                  "at the top level of a def (not inside a map; the body of a top-level loop over arrays counts) "
                  "whose buckets are scalars or tuples "
                  "of scalars and whose operator is associative and commutative; add needs + min max & | ^ on "
                  "32- and 64-bit integers, cas one number (8- and 16-bit ones through their 32-bit word)",
    .origin = "built-in",
    .nparams = 3,
    .params = {{.name = "C", .doc = "work-items per subhistogram (left out: H in global memory, min(H, B) in local)",
                .min = 1, .max = 1 << 30, .optional = true},
               {.name = "MEM", .doc = "where the subhistograms live (left out: local where they fit, else global)",
                .optional = true, .names = MEM_NAMES},
               {.name = "ATOMIC", .doc = "how a bucket is updated (left out: what the operator allows)",
                .optional = true, .names = ATOMIC_NAMES}},
    .apply = subhistogram,
};

static const st_rule rule_flatten_2d = {
    .name = "flatten-2d",
    .summary = "reduce_by_index_2d and scatter_2d as their 1-D forms over the flattened destination: "
               "split(m, reduce_by_index(join(dest), op, z, map(flat, is), vs)), flat(r, c) = r*m + c when "
               "0 <= r < n and 0 <= c < m, else -1 (ignored); lower-opencl applies it to every one left",
    .conditions = "a reduce_by_index_2d or scatter_2d, anywhere",
    .origin = "built-in",
    .apply = flatten_2d,
};

bool st_register_histogram_rules(st_registry *r, st_err *err) {
    return st_registry_add(r, &rule_subhistogram, err) && st_registry_add(r, &rule_flatten_2d, err);
}
