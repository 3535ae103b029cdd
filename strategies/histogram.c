/* strategies/histogram.c — histograms in subhistograms.
 *
 *   subhistogram(C, MEM, ATOMIC)   reduce_by_index(dest, op, z, is, vs)
 *                               -> subhistograms(C, MEM, ATOMIC, dest, op, z, is, vs)
 *
 * The seed is histogram-subhistogramming.txt. Work-items update the
 * histogram with atomic operations; C of them cooperate on each
 * subhistogram, trading collisions (few subhistograms) against the work of
 * making and combining many, and the subhistograms are then reduced into
 * the destination. codegen/cg_histogram.c makes the kernels; a map that
 * computes the indices or values runs inside them.
 *
 * Left out, a parameter takes the thesis' choice, made when the program
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
#include "rewrite/plugin.h"
#include "strategies.h"

#include <stdio.h>

static const char *const MEM_NAMES[] = {"global", "local", NULL};
static const char *const ATOMIC_NAMES[] = {"add", "cas", "xchg", NULL};

static const st_node *subhistogram(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    if (e->kind != ST_NODE_PRIM || e->u.prim != ST_PRIM_REDUCE_BY_INDEX)
        return st_no_match(why, "%s", "subhistogram rewrites a reduce_by_index");
    const st_node *dest = e->kids[0], *op = e->kids[1];
    const st_type *t = dest->type->elem;
    if (!st_at_top_level(rw, "subhistogram", "reduce_by_index", why)) return NULL;
    if (!st_type_is_plain(t))
        return st_fail(why, (st_loc){0}, "subhistogram keeps buckets of scalars and tuples of scalars, and these "
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
        return st_fail(why, (st_loc){0}, "subhistogram: ATOMIC=add needs a hardware atomic, and this operator on %s has "
                                         "none (the hardware adds, takes min and max, ands, ors and xors integers); "
                                         "use cas or xchg", type), NULL;
    if (atomic == ST_HIST_CAS && !st_hist_cas_fits(t))
        return st_fail(why, (st_loc){0}, "subhistogram: ATOMIC=cas needs values of one 32- or 64-bit number, not %s; "
                                         "use xchg (a lock per bucket)", type), NULL;
    st_build B = st_build_of(rw, why), *bd = &B;
    return ST_PRIM(bd, ST_PRIM_SUBHISTOGRAMS, st_b_count(bd, c), st_b_count(bd, mem), st_b_count(bd, atomic), dest, op,
                   e->kids[2], e->kids[3], e->kids[4]);
}

static const st_rule rule_subhistogram = {
    .name = "subhistogram",
    .summary = "reduce_by_index in subhistograms: C work-items cooperate on each, in global or local memory, updated "
               "by a hardware atomic, a compare-and-swap loop or a lock, then reduced into the destination; left out, "
               "C, MEM and ATOMIC take the thesis' heuristic (C = H global, min(H, B) local; local where it fits)",
    .conditions = "a reduce_by_index at the top level of a def (not inside a map; the body of a top-level loop over arrays counts) whose buckets are scalars or tuples "
                  "of scalars and whose operator is associative and commutative; add needs + min max & | ^ on "
                  "integers, cas one 32- or 64-bit number",
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

bool st_register_histogram_rules(st_registry *r, st_err *err) { return st_registry_add(r, &rule_subhistogram, err); }
