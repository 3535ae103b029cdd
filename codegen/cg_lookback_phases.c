/* codegen/cg_lookback_phases.c — the phases of scanLookback's kernel with
 * LOAD = local (steps 2, 3, 4 and 6 in cg_lookback.c): the block through
 * local memory, padded against bank conflicts, each work-item's fold, the
 * group's scan of their totals (every load's), the prefixes onto the
 * elements, and an element stored (every load's: through the post-function
 * or a fused scatter). */
#include "cg_lookback.h"

/* bytes of t's widest scalar */
static size_t widest_leaf(const st_type *t) {
    if (t->kind == ST_TYPE_SCALAR) return st_scalar_size(t->scalar);
    size_t most = 1;
    for (uint32_t k = 0; k < t->n; k++)
        if (widest_leaf(t->items[k]) > most) most = widest_leaf(t->items[k]);
    return most;
}

/* Local arrays are padded: element q at lb_pq = q + (q >> shift), a value
 * of padding every 2^shift. Work-item l reading element l·M + j of an
 * unpadded array meets gcd(M, 32) of its warp in one bank (a 16-way
 * conflict at M = 16, 32-way at 32; none at an odd M). The shift is the
 * one that leaves the fewest work-items of a warp in one bank (counted
 * here), the least padding first. For 4-byte values and M < 64 that is no
 * conflict at an odd M (no padding) or a power of two (a value every 32),
 * and two work-items to a bank at any other even M (4-way unpadded at M =
 * 12, 8-way at 24); a division by 32·o, o the odd part of M, would reach
 * one, at the price of registers for every index. A shift of 5 or more
 * keeps the coalesced reads k·WG + l conflict-free. */
static int bank_conflicts(int64_t m, int shift, int words) {
    const int lanes = words == 1 ? 32 : 16; /* 8-byte values: half a warp at a time */
    int worst = 1;
    for (int64_t j = 0; j < m && j < 64; j++) {
        int count[32] = {0};
        for (int64_t l = 0; l < lanes; l++) {
            int64_t q = l * m + j, p = shift ? q + (q >> shift) : q;
            for (int w = 0; w < words; w++)
                if (++count[(p * words + w) % 32] > worst) worst = count[(p * words + w) % 32];
        }
    }
    return worst;
}

int cg_lb_pad_shift(const lookback *lb) {
    int words = widest_leaf(lb->acc) > 4 || widest_leaf(lb->elem) > 4 ? 2 : 1;
    int best = 0, fewest = bank_conflicts(lb->m, 0, words);
    for (int shift = 8; shift >= (words == 1 ? 5 : 4); shift--) {
        int c = bank_conflicts(lb->m, shift, words);
        if (c < fewest) best = shift, fewest = c;
    }
    return best;
}

void cg_lb_padded_index(cg *g, const lookback *lb) {
    if (lb->pad_shift) cg_line(g, "const int lb_pq = lb_q + (lb_q >> %d);", lb->pad_shift);
    else cg_line(g, "const int lb_pq = lb_q;");
}

/* elements of a local array of count values, padded */
long long cg_lb_padded_length(const lookback *lb, int64_t count) {
    return (long long)(count + (lb->pad_shift ? (count - 1) >> lb->pad_shift : 0));
}

void cg_lb_load_block(cg *g, const lookback *lb, const char *n) {
    cg_open(g, cg_str(g, "for (int lb_k = 0; lb_k < %lld; lb_k++) {", (long long)lb->m));
    cg_line(g, "const int lb_q = lb_k * %lld + lb_l;", (long long)lb->wg);
    cg_lb_padded_index(g, lb);
    cg_line(g, "const long lb_i = lb_base + lb_q;");
    cg_open(g, cg_str(g, "if (lb_full || lb_i < %s) {", n));
    cg_value x = cg_element(g, lb->xs, lb->env, "lb_i");
    set(g, lb->elem, "lb_x[lb_pq]", &x);
    cg_close(g);
    cg_close(g);
    cg_line(g, "barrier(CLK_LOCAL_MEM_FENCE);");
}

/* Element j of work-item lb_l's M: its value x and its accumulator v, as
 * lvalues; `for (int lb_j …) {` is open. Held, they are registers, and
 * the loop is unrolled so that they stay registers; else they are in local
 * memory (v may be x itself), padded. */
static void own_begin(cg *g, const lookback *lb, const char *v, const char **x_at, const char **v_at) {
    if (lb->held) cg_line(g, "#pragma unroll");
    cg_open(g, cg_str(g, "for (int lb_j = 0; lb_j < %lld; lb_j++) {", (long long)lb->m));
    cg_line(g, "const int lb_q = lb_l * %lld + lb_j;", (long long)lb->m);
    if (!lb->held) cg_lb_padded_index(g, lb);
    *x_at = lb->held ? "lb_h[lb_j]" : "lb_x[lb_pq]";
    *v_at = cg_str(g, lb->held ? "%s[lb_j]" : "%s[lb_pq]", v);
}

/* Each work-item folds its M consecutive elements; v[j] is the fold up to
 * its element j. */
void cg_lb_thread_scan(cg *g, const lookback *lb, const char *n, const char *v) {
    cg_value z = cg_thread_value(g, lb->z, lb->env);
    cg_line(g, "%s lb_acc;", lb->acc_c);
    set(g, lb->acc, "lb_acc", &z);
    const char *x_at, *v_at;
    own_begin(g, lb, v, &x_at, &v_at);
    cg_open(g, cg_str(g, "if (lb_full || lb_base + lb_q < %s) {", n));
    cg_value args[2] = {at(g, lb->acc, "lb_acc"), at(g, lb->elem, x_at)};
    cg_value r = cg_apply(g, lb->fold ? lb->fold : lb->op, 2, args, lb->env);
    set(g, lb->acc, "lb_acc", &r);
    cg_close(g);
    cg_line(g, "%s = lb_acc;", v_at);
    cg_close(g);
    cg_line(g, "lb_s[lb_l] = lb_acc;");
    cg_line(g, "barrier(CLK_LOCAL_MEM_FENCE);");
}

/* One sweep of the Brent–Kung tree: for each distance of `loop`, the
 * work-items whose element lb_at (the end of a 2d-element subtree, moved
 * on by `shift`) lies in the group add their left neighbour's into it. */
static void sweep(cg *g, const lookback *lb, const char *loop, const char *shift) {
    cg_open(g, loop);
    cg_line(g, "const int lb_at = (lb_l + 1) * 2 * lb_d - 1%s;", shift);
    cg_open(g, cg_str(g, "if (lb_at < %lld) {", (long long)lb->wg));
    combine(g, lb, "lb_s[lb_at]", "lb_s[lb_at - lb_d]", "lb_s[lb_at]");
    cg_close(g);
    cg_line(g, "barrier(CLK_LOCAL_MEM_FENCE);");
    cg_close(g);
}

/* The group's scan of its WG totals in lb_s, inclusive. LOAD = local: the
 * Brent–Kung tree, work-efficient and parallel: an up-sweep of log2(WG)
 * steps leaves at every (2d·k − 1) the total of its 2d-element subtree, a
 * down-sweep adds each left neighbour's prefix into the rest; under 2·WG
 * operations in all (Hillis–Steele did WG·log2 WG) and a barrier per step.
 * Any WG: a step's elements past the end are skipped. Operands keep their
 * order (lb_s[at − d] is left of lb_s[at]). */
void cg_lb_group_scan(cg *g, const lookback *lb) {
    if (lb->direct) {
        cg_open(g, "if (lb_l == 0) {");
        cg_open(g, cg_str(g, "for (int lb_d = 1; lb_d < %lld; lb_d++) {", (long long)lb->wg));
        combine(g, lb, "lb_s[lb_d]", "lb_s[lb_d - 1]", "lb_s[lb_d]");
        cg_close(g);
        cg_close(g);
        cg_line(g, "barrier(CLK_LOCAL_MEM_FENCE);");
        return;
    }
    sweep(g, lb, cg_str(g, "for (int lb_d = 1; lb_d < %lld; lb_d <<= 1) {", (long long)lb->wg), "");
    int64_t top = 1; /* the largest power of two below WG */
    while (top * 2 < lb->wg) top *= 2;
    sweep(g, lb, cg_str(g, "for (int lb_d = %lld; lb_d >= 1; lb_d >>= 1) {", (long long)(top / 2)), " + lb_d");
}

/* Each work-item's prefix (the group's, then its predecessors' in the
 * group) onto its elements. */
void cg_lb_distribute(cg *g, const lookback *lb, const char *v) {
    cg_line(g, "%s lb_p = lb_prefix;", lb->acc_c);
    cg_open(g, "if (lb_l > 0) {");
    combine(g, lb, "lb_p", "lb_p", "lb_s[lb_l - 1]");
    cg_close(g);
    const char *x_at, *v_at;
    own_begin(g, lb, v, &x_at, &v_at);
    combine(g, lb, v_at, "lb_p", v_at);
    cg_close(g);
    if (!lb->held) cg_line(g, "barrier(CLK_LOCAL_MEM_FENCE);");
}

/* LOAD = direct: a scatter's write without a branch. Whether an element is
 * written is its predicate's (a filter keeps what it keeps, in no order a
 * branch predictor learns), so the guard of an index out of bounds is a
 * select of the address instead: the slot, or the group's sink, a line of
 * scratch memory of its own that nobody reads. Taken for a scatter (not a
 * reduce_by_index, which reads its slot) into one array of numbers in
 * global memory, as it writes all its elements or those that won their
 * places (below); the sink is per group so that no two cores write one
 * line. */
const cg_place *cg_lb_sink_of(cg *g, const lookback *lb, const cg_place *p, const cg_scatter *scatter) {
    if (!lb->direct || !scatter || scatter->pass == CG_CLAIM || !st_is_scatter(scatter->e) || p->tuple ||
        p->mem.space != CG_GLOBAL || p->mem.rank != 1 || p->mem.buffer < 0 || p->mem.kind == ST_BOOL)
        return NULL;
    st_err err = {0};
    int64_t line = 64 / (int64_t)st_scalar_size(p->mem.kind);
    const st_size *slots = st_size_mul(g->cx, lb->groups, st_size_const(g->cx, line), &err);
    if (!slots) return NULL;
    return cg_host_temp(g, st_type_array(g->cx, slots, st_type_scalar(g->cx, p->mem.kind)), "lookback_sink");
}

static void scatter_select(cg *g, const lookback *lb, const cg_scatter *scatter, const cg_place *p, const cg_value *i,
                           const cg_value *v) {
    const char *at = cg_name(g, "at"), *in = cg_name(g, "in"), *to = cg_name(g, "to");
    const cg_place *slot = cg_place_index(g, p, at);
    const char *t = cg_ctype(g, st_type_scalar(g->cx, p->mem.kind));
    int64_t line = 64 / (int64_t)st_scalar_size(p->mem.kind);
    cg_line(g, "const long %s = (long)%s;", at, i->c);
    cg_line(g, "const bool %s = (ulong)%s < (ulong)%s;", in, at, cg_size(g, scatter->e->type->size));
    cg_line(g, "__global %s *%s = %s ? %s + (%s) : %s + lb_id * %lldL;", t, to, in, buffer_of(g, p), slot->mem.offset,
            buffer_of(g, lb->sink), (long long)line);
    if (scatter->pass != CG_WON) {
        cg_line(g, "*%s = %s;", to, v->c);
        return;
    }
    /* of those that won: a test that holds for every element where no place
     * is written twice (a permutation, a compaction), and so is predicted,
     * where the address made from the winner's read would wait for that
     * read; the winner read at 0 out of bounds, and `|`, so that the read
     * needs no branch of its own */
    const char *won = cg_winners_won(g, scatter->winners, cg_str(g, "(%s ? %s : 0L)", in, at), "lb_i");
    cg_line(g, "if (!%s | (%s)) *%s = %s;", in, won, to, v->c);
}

/* Element lb_i of the result, from its accumulator and its element:
 * through the post-function, into p or as a scatter's (index, value) pair. */
void cg_lb_store_one(cg *g, const lookback *lb, const cg_value *acc, const cg_value *x, const cg_place *p,
                      const cg_scatter *scatter) {
    cg_value y = *acc;
    if (lb->post) {
        cg_value args[2] = {*acc, *x};
        y = cg_apply(g, lb->post, 2, args, lb->env);
    }
    if (!scatter) {
        cg_store(g, cg_place_index(g, p, "lb_i"), &y);
    } else if (y.kind != CG_TUPLE || y.n != 2) {
        cg_fail(g, scatter->e, "scatter over pairs that are not pairs");
    } else if (lb->sink && y.items[1].kind == CG_SCALAR) {
        scatter_select(g, lb, scatter, p, &y.items[0], &y.items[1]);
    } else {
        cg_scatter_write(g, scatter, lb->env, p, &y.items[0], &y.items[1], "lb_i");
    }
}

/* The block out, coalesced, from local memory. */
void cg_lb_store_block(cg *g, const lookback *lb, const char *n, const char *v, const cg_place *p,
                        const cg_scatter *scatter) {
    cg_open(g, cg_str(g, "for (int lb_k = 0; lb_k < %lld; lb_k++) {", (long long)lb->m));
    cg_line(g, "const int lb_q = lb_k * %lld + lb_l;", (long long)lb->wg);
    cg_lb_padded_index(g, lb);
    cg_line(g, "const long lb_i = lb_base + lb_q;");
    cg_open(g, cg_str(g, "if (lb_full || lb_i < %s) {", n));
    cg_value acc = at(g, lb->acc, cg_str(g, "%s[lb_pq]", v)), x = at(g, lb->elem, "lb_x[lb_pq]");
    cg_lb_store_one(g, lb, &acc, &x, p, scatter);
    cg_close(g);
    cg_close(g);
}
