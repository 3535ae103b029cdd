/* codegen/cg_lookback.c — scanLookback(M, WG, LW, LOAD, op, [fold, [post,]] z, xs):
 * the single-pass scan with decoupled look-back, as one kernel.
 *
 * The seed is single-pass-scan-decoupled-lookback.txt. Each work-group of
 * WG work-items scans a block of M·WG elements:
 *
 *   1  its block number comes from an atomic ticket, so every lower number
 *      is held by a group that is already running (never one that waits to
 *      be scheduled behind us);
 *   2  the block is loaded coalesced (element k·WG + l by work-item l)
 *      through local memory into each work-item's registers (M <= 32: a
 *      tile of part of the block at a time, "held"), or into local memory
 *      whole (larger M), and
 *   3  each work-item folds its M consecutive elements in order;
 *   4  the group scans its work-items' totals in local memory (a Brent–
 *      Kung tree: 2·log2 WG steps, under 2·WG operations);
 *   5  the group publishes its aggregate (flag A; the first group publishes
 *      P), looks back over its predecessors until it meets an inclusive
 *      prefix (flag P), adding the aggregates it passes, and publishes its
 *      own inclusive prefix (P);
 *   6  each work-item adds its prefix to its elements, and the block is
 *      stored coalesced, back through local memory, through the post-
 *      function or the scatter when fusion put one there.
 *
 * Every element is read once and written once. With LOAD = 1 (direct) a
 * work-item reads its own M elements instead of staging them (2, 3): what
 * a CPU wants, where a group's work-items run in turn in one thread and
 * its M consecutive elements are consecutive in the cache. It folds them
 * in four runs side by side (each in vector-wide lanes when the operator
 * is commutative), work-item 0 scans the totals (4), and after the
 * look-back each work-item folds its elements again from its prefix and
 * stores them as it goes (6), reading them from the cache: a plain scan in
 * vector registers with streaming stores where the compiler is clang
 * (PoCL), any other in a scalar loop (whose fused scatter, if any, writes
 * without a branch: scatter_select).
 *
 * The look-back is done by one work-item and followed by a barrier
 * (LW = 1): that is right on every device, PoCL's included, whose
 * work-items are loops and not lock-step lanes. With LW > 1, LW work-items read LW predecessors at once and work-
 * item 0 combines them after a barrier: fewer round trips on a GPU.
 *
 * Memory ordering on OpenCL 1.2, which has no acquire or release: a 32-bit
 * accumulator is packed with its flag into one 64-bit word, written and
 * read by 64-bit atomics (cl_khr_int64_base_atomics), so a reader sees the
 * flag and its value together. Any other accumulator (64-bit, tuples) is
 * written before its flag with a global fence between, and read after the
 * flag with a fence between; aggregates and inclusive prefixes live in
 * separate arrays, so a value is never overwritten once its flag is up.
 *
 * A wait that could last forever is bounded: after STRATA_LOOKBACK_SPINS
 * reads of a flag that is still X the group records itself as the run's
 * fault (cg_fault.c) and goes on, and the glue turns that into an error
 * after the launch instead of a hang. The state (the ticket, the flags) is
 * zeroed by a kernel of its own before every launch. */
#include "cg.h"
#include "rewrite/rewrite.h"

#include <string.h>

/* The flags, as the kernels name them (LB_X LB_A LB_P, defined in the
 * prelude cg_glue.c writes): no value yet, the group's aggregate, its
 * inclusive prefix. */
typedef enum flag { FLAG_A, FLAG_P } flag;

typedef struct lookback {
    const st_node *e;
    int64_t m, wg, lw;
    bool direct;               /* LOAD = 1: no staging through local memory */
    bool held;                 /* LOAD = 0 and M <= HELD_M: a work-item's elements in registers */
    int64_t rows;              /* held: work-items staged at once (a divisor of WG) */
    int pad_shift;             /* a local array's element q is at q + (q >> pad_shift) (0: at q) */
    const st_node *op, *fold, *post, *z, *xs;
    const st_type *elem, *acc;
    const char *acc_c;
    bool packed;               /* flag and accumulator in one 64-bit word */
    const st_size *groups;     /* ⌈N / (M·WG)⌉ */
    const cg_binding *env;
    /* the state, in global memory */
    const cg_place *ctl;       /* [1]i32: the ticket */
    const cg_place *desc;      /* packed: [groups]u64 */
    const cg_place *flags;     /* else: [groups]i32 */
    const cg_place *aggregates, *prefixes; /* else: [groups]acc */
    const cg_place *sink;      /* LOAD = direct, a scatter: [groups·line]t, see sink_of */
    const cg_place *total;     /* where scanTotal of this scan lives, or NULL */
} lookback;

/* A scanTotal(s) waiting for s's kernel. */
struct cg_total {
    const st_node *scan, *at;
    const cg_place *place;
    bool written;
};

/* bytes of t's widest scalar */
static size_t widest_leaf(const st_type *t) {
    if (t->kind == ST_TYPE_SCALAR) return st_scalar_size(t->scalar);
    size_t most = 1;
    for (uint32_t k = 0; k < t->n; k++)
        if (widest_leaf(t->items[k]) > most) most = widest_leaf(t->items[k]);
    return most;
}

static bool fits_a_word(const st_type *t) {
    return t->kind == ST_TYPE_SCALAR &&
           (t->scalar == ST_I32 || t->scalar == ST_U32 || t->scalar == ST_F32 || t->scalar == ST_BOOL);
}

/* ---- the value of a C lvalue, applying functions ---- */

static cg_value at(cg *g, const st_type *t, const char *lvalue) { return cg_fields_of(g, t, lvalue); }

static void set(cg *g, const st_type *t, const char *lvalue, const cg_value *v) {
    cg_value to = at(g, t, lvalue);
    cg_assign(g, &to, v);
}

/* lvalue = op(a, b), both accumulators named by C lvalues */
static void combine(cg *g, const lookback *lb, const char *lvalue, const char *a, const char *b) {
    cg_value args[2] = {at(g, lb->acc, a), at(g, lb->acc, b)};
    cg_value r = cg_apply(g, lb->op, 2, args, lb->env);
    set(g, lb->acc, lvalue, &r);
}

static const char *buffer_of(cg *g, const cg_place *p) {
    cg_use_buffer(g, p->mem.buffer, true);
    return p->mem.base;
}

/* ---- publishing and reading a group's descriptor ---- */

/* The accumulator lvalue var to or from element idx of a state array. */
static void state_leaves(cg *g, const cg_place *p, const st_type *t, const char *var, const char *idx, bool load) {
    cg_exchange(g, cg_place_index(g, p, idx), t, var, load);
}

/* Group `lb_id` publishes value (a C lvalue) with flag. A group the test
 * hook STRATA_LOOKBACK_SILENT_GROUP names never publishes, as if lost. */
static void publish(cg *g, const lookback *lb, flag f, const char *value) {
    const char *name = f == FLAG_A ? "LB_A" : "LB_P";
    cg_open(g, "if (lb_id != STRATA_LOOKBACK_SILENT_GROUP) {");
    if (lb->packed) {
        cg_line(g, "atom_xchg(&%s[lb_id], ((ulong)%s << 32) | (ulong)%s);", buffer_of(g, lb->desc), name,
                cg_to_bits(g, lb->acc->scalar, value));
    } else {
        state_leaves(g, f == FLAG_A ? lb->aggregates : lb->prefixes, lb->acc, value, "lb_id", false);
        cg_line(g, "ST_DEVICE_FENCE();");
        cg_line(g, "atomic_xchg(&%s[lb_id], %s);", buffer_of(g, lb->flags), name);
    }
    cg_close(g);
}

/* Read group j's descriptor into the C variables flag and value (the value
 * only when the flag is not X). */
static void read_descriptor(cg *g, const lookback *lb, const char *j, const char *flag, const char *value) {
    if (lb->packed) {
        cg_line(g, "const ulong lb_word = atom_add(&%s[%s], 0UL);", buffer_of(g, lb->desc), j);
        cg_line(g, "%s = (int)(lb_word >> 32);", flag);
        cg_line(g, "%s = %s;", value, cg_from_bits(g, lb->acc->scalar, "(uint)lb_word"));
        return;
    }
    cg_line(g, "%s = atomic_add(&%s[%s], 0);", flag, buffer_of(g, lb->flags), j);
    cg_open(g, cg_str(g, "if (%s != LB_X) {", flag));
    cg_line(g, "ST_DEVICE_FENCE();");
    cg_open(g, cg_str(g, "if (%s == LB_P) {", flag));
    state_leaves(g, lb->prefixes, lb->acc, value, j, true);
    g->indent--;
    cg_line(g, "} else {");
    g->indent++;
    state_leaves(g, lb->aggregates, lb->acc, value, j, true);
    cg_close(g);
    cg_close(g);
}

/* The bounded wait: `if (++lb_spins > bound) { record the stall; then }`. */
static void give_up(cg *g, const char *then) {
    cg_open(g, "if (++lb_spins > STRATA_LOOKBACK_SPINS) {");
    cg_fault_of(g, &cg_lookback_algorithm, "lb_id");
    cg_line(g, "%s", then);
    cg_close(g);
}

/* ---- the phases ---- */

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

static int pad_shift(const lookback *lb) {
    int words = widest_leaf(lb->acc) > 4 || widest_leaf(lb->elem) > 4 ? 2 : 1;
    int best = 0, fewest = bank_conflicts(lb->m, 0, words);
    for (int shift = 8; shift >= (words == 1 ? 5 : 4); shift--) {
        int c = bank_conflicts(lb->m, shift, words);
        if (c < fewest) best = shift, fewest = c;
    }
    return best;
}

static void padded_index(cg *g, const lookback *lb) {
    if (lb->pad_shift) cg_line(g, "const int lb_pq = lb_q + (lb_q >> %d);", lb->pad_shift);
    else cg_line(g, "const int lb_pq = lb_q;");
}

/* elements of a local array of count values, padded */
static long long padded_length(const lookback *lb, int64_t count) {
    return (long long)(count + (lb->pad_shift ? (count - 1) >> lb->pad_shift : 0));
}

static void load_block(cg *g, const lookback *lb, const char *n) {
    cg_open(g, cg_str(g, "for (int lb_k = 0; lb_k < %lld; lb_k++) {", (long long)lb->m));
    cg_line(g, "const int lb_q = lb_k * %lld + lb_l;", (long long)lb->wg);
    padded_index(g, lb);
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
    if (!lb->held) padded_index(g, lb);
    *x_at = lb->held ? "lb_h[lb_j]" : "lb_x[lb_pq]";
    *v_at = cg_str(g, lb->held ? "%s[lb_j]" : "%s[lb_pq]", v);
}

/* Each work-item folds its M consecutive elements; v[j] is the fold up to
 * its element j. */
static void thread_scan(cg *g, const lookback *lb, const char *n, const char *v) {
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
static void group_scan(cg *g, const lookback *lb) {
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

static void block_aggregate(cg *g, const lookback *lb); /* LOAD = direct's, below */

/* LW = 1: work-item 0 walks back one predecessor at a time. */
static void look_back_one(cg *g, const lookback *lb) {
    cg_open(g, "if (lb_l == 0) {");
    cg_line(g, "%s lb_agg = lb_s[%lld];", lb->acc_c, (long long)lb->wg - 1);
    cg_value z = cg_thread_value(g, lb->z, lb->env);
    cg_line(g, "%s lb_pre;", lb->acc_c);
    set(g, lb->acc, "lb_pre", &z);
    cg_open(g, "if (lb_id == 0) {");
    publish(g, lb, FLAG_P, "lb_agg");
    g->indent--;
    cg_line(g, "} else {");
    g->indent++;
    publish(g, lb, FLAG_A, "lb_agg");
    cg_line(g, "long lb_j = lb_id - 1, lb_spins = 0;");
    cg_open(g, "for (;;) {");
    cg_line(g, "int lb_f;");
    cg_line(g, "%s lb_val;", lb->acc_c);
    read_descriptor(g, lb, "lb_j", "lb_f", "lb_val");
    cg_open(g, "if (lb_f == LB_X) {");
    if (lb->direct) {
        /* a CPU's threads are preempted: rather than wait for one that may
         * not run for milliseconds, fold its block (decoupled fallback) */
        cg_line(g, "if (++lb_spins <= STRATA_LOOKBACK_PATIENCE) continue;");
        block_aggregate(g, lb);
        cg_line(g, "lb_f = lb_j == 0 ? LB_P : LB_A; /* the first block's aggregate is its prefix */");
    } else {
        give_up(g, "break;");
        cg_line(g, "continue;");
    }
    cg_close(g);
    combine(g, lb, "lb_pre", "lb_val", "lb_pre");
    cg_line(g, "if (lb_f == LB_P) break;");
    cg_line(g, "lb_j--;");
    cg_line(g, "lb_spins = 0;");
    cg_close(g);
    cg_line(g, "%s lb_inc;", lb->acc_c);
    combine(g, lb, "lb_inc", "lb_pre", "lb_agg");
    publish(g, lb, FLAG_P, "lb_inc");
    cg_close(g);
    cg_line(g, "lb_prefix = lb_pre;");
    cg_close(g);
    cg_line(g, "barrier(CLK_LOCAL_MEM_FENCE);");
}

/* LW > 1: LW work-items each read one predecessor of a window, then
 * work-item 0 combines the window from the nearest back to the first P;
 * the loop's exit is read by the whole group after a barrier. */
static void look_back_wide(cg *g, const lookback *lb) {
    cg_value z = cg_thread_value(g, lb->z, lb->env);
    cg_line(g, "%s lb_agg = lb_s[%lld];", lb->acc_c, (long long)lb->wg - 1);
    cg_line(g, "%s lb_pre;", lb->acc_c);
    set(g, lb->acc, "lb_pre", &z);
    cg_open(g, "if (lb_id == 0) {");
    cg_open(g, "if (lb_l == 0) {");
    publish(g, lb, FLAG_P, "lb_agg");
    cg_line(g, "lb_prefix = lb_pre;");
    cg_close(g);
    g->indent--;
    cg_line(g, "} else {");
    g->indent++;
    cg_open(g, "if (lb_l == 0) {");
    publish(g, lb, FLAG_A, "lb_agg");
    cg_line(g, "lb_next = lb_id - 1;");
    cg_close(g);
    cg_line(g, "barrier(CLK_LOCAL_MEM_FENCE);");
    cg_open(g, "for (;;) {");
    cg_open(g, cg_str(g, "if (lb_l < %lld) {", (long long)lb->lw));
    cg_line(g, "const long lb_j = lb_next - lb_l;");
    cg_line(g, "int lb_f = LB_P;");
    cg_line(g, "%s lb_val;", lb->acc_c);
    set(g, lb->acc, "lb_val", &z);
    cg_open(g, "if (lb_j >= 0) {");
    cg_line(g, "long lb_spins = 0;");
    cg_open(g, "for (;;) {");
    read_descriptor(g, lb, "lb_j", "lb_f", "lb_val");
    cg_line(g, "if (lb_f != LB_X) break;");
    give_up(g, "lb_f = LB_P;");
    cg_line(g, "if (lb_f != LB_X) break;");
    cg_close(g);
    cg_close(g);
    cg_line(g, "lb_wf[lb_l] = lb_f;");
    cg_line(g, "lb_wv[lb_l] = lb_val;");
    cg_close(g);
    cg_line(g, "barrier(CLK_LOCAL_MEM_FENCE);");
    cg_open(g, "if (lb_l == 0) {");
    cg_line(g, "int lb_found = 0;");
    cg_open(g, cg_str(g, "for (int lb_w = 0; lb_w < %lld && !lb_found; lb_w++) {", (long long)lb->lw));
    combine(g, lb, "lb_pre", "lb_wv[lb_w]", "lb_pre");
    cg_line(g, "lb_found = lb_wf[lb_w] == LB_P;");
    cg_close(g);
    cg_line(g, "lb_more = !lb_found;");
    cg_line(g, "lb_next -= %lld;", (long long)lb->lw);
    cg_open(g, "if (lb_found) {");
    cg_line(g, "%s lb_inc;", lb->acc_c);
    combine(g, lb, "lb_inc", "lb_pre", "lb_agg");
    publish(g, lb, FLAG_P, "lb_inc");
    cg_line(g, "lb_prefix = lb_pre;");
    cg_close(g);
    cg_close(g);
    cg_line(g, "barrier(CLK_LOCAL_MEM_FENCE);");
    cg_line(g, "if (!lb_more) break;");
    cg_close(g);
    cg_close(g);
    cg_line(g, "barrier(CLK_LOCAL_MEM_FENCE);");
}

/* Each work-item's prefix (the group's, then its predecessors' in the
 * group) onto its elements. */
static void distribute(cg *g, const lookback *lb, const char *v) {
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
static const cg_place *sink_of(cg *g, const lookback *lb, const cg_place *p, const cg_scatter *scatter) {
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
static void store_one(cg *g, const lookback *lb, const cg_value *acc, const cg_value *x, const cg_place *p,
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
static void store_block(cg *g, const lookback *lb, const char *n, const char *v, const cg_place *p,
                        const cg_scatter *scatter) {
    cg_open(g, cg_str(g, "for (int lb_k = 0; lb_k < %lld; lb_k++) {", (long long)lb->m));
    cg_line(g, "const int lb_q = lb_k * %lld + lb_l;", (long long)lb->wg);
    padded_index(g, lb);
    cg_line(g, "const long lb_i = lb_base + lb_q;");
    cg_open(g, cg_str(g, "if (lb_full || lb_i < %s) {", n));
    cg_value acc = at(g, lb->acc, cg_str(g, "%s[lb_pq]", v)), x = at(g, lb->elem, "lb_x[lb_pq]");
    store_one(g, lb, &acc, &x, p, scatter);
    cg_close(g);
    cg_close(g);
}

/* ---- LOAD = local, held: each work-item's elements in registers ----
 *
 * A block of M·WG elements does not fit local memory at M = 32 and WG = 512
 * (64 KiB; NVIDIA's OpenCL gives a group 48), and the local path's block in
 * local memory is read and written three times more than the global one.
 * Held, a work-item keeps its M elements in registers (lb_h, and lb_hv for
 * the accumulators when they are not the elements), and the block passes
 * through a local tile in rounds: in round r the group loads elements
 * [r·R·M, (r+1)·R·M) of its block coalesced into the tile, and work-items
 * [r·R, (r+1)·R) take their M each (R = lb->rows); storing, the same
 * backwards. The tile is padded, as the local path's block is. */

/* Held up to M = 32 (32 registers of elements; more would spill at WG =
 * 1024, whose work-items have 64 registers each). The tile takes at most
 * 32 KiB: with the rest of a group's local memory, within the 48 KiB that
 * NVIDIA's OpenCL gives a group, and 6 groups of 256 in an H100's 228. */
enum { HELD_M = 32, HELD_TILE_BYTES = 32 << 10 };

static size_t value_bytes(const st_type *t) {
    if (t->kind == ST_TYPE_SCALAR) return st_scalar_size(t->scalar);
    size_t sum = 0;
    for (uint32_t k = 0; k < t->n; k++) sum += value_bytes(t->items[k]);
    return sum;
}

/* Work-items held per round: the most that divide WG and whose elements
 * fit the tile (their accumulators too, when those are not the elements). */
static int64_t rows_of(const lookback *lb, bool in_place) {
    size_t per_row = (size_t)lb->m * (value_bytes(lb->elem) + (in_place ? 0 : value_bytes(lb->acc)));
    for (int64_t rounds = 1; rounds <= lb->wg; rounds++)
        if (lb->wg % rounds == 0 && (size_t)(lb->wg / rounds) * per_row <= HELD_TILE_BYTES) return lb->wg / rounds;
    return 1;
}

/* `for each round {`, with lb_stage the first element of its part of the block */
static void round_begin(cg *g, const lookback *lb) {
    cg_line(g, "#pragma unroll 1"); /* a round is long enough; unrolled, they would only grow the code */
    cg_open(g, cg_str(g, "for (int lb_r = 0; lb_r < %lld; lb_r++) {", (long long)(lb->wg / lb->rows)));
    cg_line(g, "const long lb_stage = lb_base + (long)lb_r * %lldL;", (long long)(lb->rows * lb->m));
}

/* `for (…) { if (…) {`: the round's elements, element lb_i at tile index
 * lb_pq, each work-item taking every WG-th */
static void round_elements_begin(cg *g, const lookback *lb, const char *n, int unroll) {
    int64_t count = lb->rows * lb->m;
    if (unroll) cg_line(g, "#pragma unroll %d", unroll);
    cg_open(g, cg_str(g, "for (int lb_k = 0; lb_k < %lld; lb_k++) {", (long long)((count + lb->wg - 1) / lb->wg)));
    cg_line(g, "const int lb_q = lb_k * %lld + lb_l;", (long long)lb->wg);
    padded_index(g, lb);
    cg_line(g, "const long lb_i = lb_stage + lb_q;");
    const char *within = count % lb->wg ? cg_str(g, "lb_q < %lld && ", (long long)count) : "";
    cg_open(g, cg_str(g, "if (%s(lb_full || lb_i < %s)) {", within, n));
}

/* `if (this round holds lb_l) { for (…) {`: its elements, element lb_j at
 * tile index lb_pq */
static void round_own_begin(cg *g, const lookback *lb) {
    cg_open(g, cg_str(g, "if (lb_l / %lld == lb_r) {", (long long)lb->rows));
    cg_line(g, "#pragma unroll");
    cg_open(g, cg_str(g, "for (int lb_j = 0; lb_j < %lld; lb_j++) {", (long long)lb->m));
    cg_line(g, "const int lb_q = (lb_l - lb_r * %lld) * %lld + lb_j;", (long long)lb->rows, (long long)lb->m);
    padded_index(g, lb);
}

static void held_load(cg *g, const lookback *lb, const char *n) {
    round_begin(g, lb);
    round_elements_begin(g, lb, n, lb->wg / lb->rows > 1 ? 8 : 0);
    cg_value x = cg_element(g, lb->xs, lb->env, "lb_i");
    set(g, lb->elem, "lb_tile[lb_pq]", &x);
    cg_close(g);
    cg_close(g);
    cg_line(g, "barrier(CLK_LOCAL_MEM_FENCE);");
    round_own_begin(g, lb);
    cg_value staged = at(g, lb->elem, "lb_tile[lb_pq]");
    set(g, lb->elem, "lb_h[lb_j]", &staged);
    cg_close(g);
    cg_close(g);
    cg_line(g, "barrier(CLK_LOCAL_MEM_FENCE);");
    cg_close(g);
}

/* v: the accumulators held (lb_h in place, else lb_hv); u: their tile.
 * The stores go one at a time (unroll 1): the held elements of later
 * rounds are still live, and unrolled stores' addresses would spill them. */
static void held_store(cg *g, const lookback *lb, const char *n, const char *v, const char *u, const cg_place *p,
                       const cg_scatter *scatter) {
    round_begin(g, lb);
    round_own_begin(g, lb);
    cg_line(g, "%s[lb_pq] = %s[lb_j];", u, v);
    if (lb->post) cg_line(g, "lb_tile[lb_pq] = lb_h[lb_j];");
    cg_close(g);
    cg_close(g);
    cg_line(g, "barrier(CLK_LOCAL_MEM_FENCE);");
    round_elements_begin(g, lb, n, lb->wg / lb->rows > 1 ? 1 : 0);
    cg_value acc = at(g, lb->acc, cg_str(g, "%s[lb_pq]", u)), x = at(g, lb->elem, "lb_tile[lb_pq]");
    store_one(g, lb, &acc, &x, p, scatter);
    cg_close(g);
    cg_close(g);
    cg_line(g, "barrier(CLK_LOCAL_MEM_FENCE);");
    cg_close(g);
}

/* ---- LOAD = direct: each work-item reads its own M elements ---- */

/* A work-item's M elements as `chains` runs of M / chains, folded side by
 * side: a fold is a chain of dependent operations, and independent chains
 * keep a CPU's pipeline full (associativity is all this needs). */
static int64_t chains_of(const lookback *lb) { return lb->m % 4 == 0 ? 4 : lb->m % 2 == 0 ? 2 : 1; }

static bool is_param(const st_node *n, const st_node *p) { return n->kind == ST_NODE_VAR && n->u.name == p->u.name; }

/* Is the operator commutative as well as associative: + * min max & | ^
 * on one number, written bare or as a lambda of its two parameters? Then
 * a run may be folded in interleaved lanes (below). */
static bool commutative_op(const lookback *lb, st_binop *out) {
    if (lb->acc->kind != ST_TYPE_SCALAR || lb->acc->scalar == ST_BOOL) return false;
    st_binop b;
    if (!st_fn_binop(lb->op, &b)) return false;
    *out = b;
    return b == ST_OP_ADD || b == ST_OP_MUL || b == ST_OP_MIN || b == ST_OP_MAX || b == ST_OP_BAND ||
           b == ST_OP_BOR || b == ST_OP_BXOR;
}

static bool commutative(const lookback *lb) {
    st_binop b;
    return commutative_op(lb, &b);
}

/* Lanes of one 64-byte vector register (AVX-512; two of AVX2's). */
static int64_t lanes_of(const lookback *lb) {
    st_scalar_kind k = lb->acc->scalar;
    return k == ST_I64 || k == ST_U64 || k == ST_F64 ? 8 : 16;
}

/* Element j of run c of work-item lb_l, as lb_i and its value, inside
 * `if (lb_i < n)` (n NULL: in a whole block, no test); the caller closes
 * both blocks. */
static cg_value own_element(cg *g, const lookback *lb, const char *n, int64_t c) {
    int64_t run = lb->m / chains_of(lb);
    cg_open(g, "{");
    cg_line(g, "const long lb_i = lb_base + lb_l * %lld + %lld + lb_j;", (long long)lb->m, (long long)(c * run));
    cg_open(g, n ? cg_str(g, "if (lb_full || lb_i < %s) {", n) : "{");
    cg_value x = cg_element(g, lb->xs, lb->env, "lb_i");
    return cg_materialize(g, &x);
}

static void fold_into(cg *g, const lookback *lb, const char *acc, const cg_value *x) {
    cg_value args[2] = {at(g, lb->acc, acc), *x};
    cg_value r = cg_apply(g, lb->fold ? lb->fold : lb->op, 2, args, lb->env);
    set(g, lb->acc, acc, &r);
}

/* The fold of one run, the M / chains elements from C expression lo, into
 * the lvalue total; where n is given, the run may be cut short by the
 * array's end (lb_full says it is not). With a commutative operator in W
 * interleaved lanes lb_r<w>, lane w taking the elements w, w + W, …: W
 * independent folds of consecutive elements, written out one by one, that
 * LLVM's SLP vectoriser makes one vector fold (vpaddd, vaddps) for every
 * type, floats included, as it reorders nothing; the lanes are combined
 * after, a tree of neighbours, which is another order, hence commutative.
 * Else in order. */
static void reduce_run(cg *g, const lookback *lb, const char *lo, const char *n, const char *total) {
    /* two registers' worth: two chains of vector folds hide a float add's latency */
    long long run = (long long)(lb->m / chains_of(lb)), w = 2 * (long long)lanes_of(lb);
    cg_value z = cg_thread_value(g, lb->z, lb->env);
    cg_open(g, "{");
    cg_line(g, "const long lb_lo = %s;", lo);
    if (n) {
        cg_line(g, "const long lb_left = %s - lb_lo;", n);
        cg_line(g, "const int lb_n = lb_full ? %lld : lb_left <= 0 ? 0 : lb_left < %lldL ? (int)lb_left : %lld;", run,
                run, run);
    } else {
        cg_line(g, "const int lb_n = %lld;", run);
    }
    if (!commutative(lb)) {
        set(g, lb->acc, total, &z);
        cg_open(g, "for (int lb_e = 0; lb_e < lb_n; lb_e++) {");
        cg_value x = cg_element(g, lb->xs, lb->env, "lb_lo + lb_e");
        x = cg_materialize(g, &x);
        fold_into(g, lb, total, &x);
        cg_close(g);
        cg_close(g);
        return;
    }
    for (long long i = 0; i < w; i++) {
        cg_line(g, "%s lb_r%lld;", lb->acc_c, i);
        set(g, lb->acc, cg_str(g, "lb_r%lld", i), &z);
    }
    /* the loop vectoriser would take this loop instead, gathering each lane's elements */
    cg_line(g, "ST_SLP_ONLY");
    cg_open(g, cg_str(g, "for (int lb_e = 0; lb_e < lb_n / %lld * %lld; lb_e += %lld) {", w, w, w));
    for (long long i = 0; i < w; i++) {
        cg_value x = cg_element(g, lb->xs, lb->env, cg_str(g, "lb_lo + lb_e + %lld", i));
        x = cg_materialize(g, &x);
        fold_into(g, lb, cg_str(g, "lb_r%lld", i), &x);
    }
    cg_close(g);
    cg_open(g, cg_str(g, "for (int lb_e = lb_n / %lld * %lld; lb_e < lb_n; lb_e++) {", w, w));
    cg_value y = cg_element(g, lb->xs, lb->env, "lb_lo + lb_e");
    y = cg_materialize(g, &y);
    fold_into(g, lb, "lb_r0", &y);
    cg_close(g);
    for (long long h = w / 2; h >= 1; h /= 2)
        for (long long i = 0; i < h; i++)
            combine(g, lb, cg_str(g, "lb_r%lld", i), cg_str(g, "lb_r%lld", i), cg_str(g, "lb_r%lld", i + h));
    cg_line(g, "%s = lb_r0;", total);
    cg_close(g);
}

/* The aggregate of a predecessor, block lb_j, into lb_val, computed from its
 * elements by the folds its own group makes (each work-item's runs, then
 * the work-items in order), so that the value is the same to the bit. A
 * predecessor is never the last block: its runs are whole. */
static void block_aggregate(cg *g, const lookback *lb) {
    int64_t k = chains_of(lb), run = lb->m / k;
    cg_open(g, cg_str(g, "for (int lb_w = 0; lb_w < %lld; lb_w++) {", (long long)lb->wg));
    for (int64_t c = 0; c < k; c++) {
        const char *total = cg_str(g, "lb_fa%lld", (long long)c);
        cg_line(g, "%s %s;", lb->acc_c, total);
        reduce_run(g, lb, cg_str(g, "lb_j * %lldL + lb_w * %lldL + %lldL", (long long)(lb->m * lb->wg), (long long)lb->m,
                                 (long long)(c * run)), NULL, total);
    }
    for (int64_t c = 1; c < k; c++) combine(g, lb, "lb_fa0", "lb_fa0", cg_str(g, "lb_fa%lld", (long long)c));
    cg_open(g, "if (lb_w == 0) {");
    cg_line(g, "lb_val = lb_fa0;");
    g->indent--;
    cg_line(g, "} else {");
    g->indent++;
    combine(g, lb, "lb_val", "lb_val", "lb_fa0");
    cg_close(g);
    cg_close(g);
}

/* Each work-item folds its runs into their totals lb_a<c>, storing
 * nothing (on a CPU the second pass finds the elements in the cache), and
 * their combination, its total, into lb_s. */
static void thread_reduce(cg *g, const lookback *lb, const char *n) {
    int64_t k = chains_of(lb);
    bool lanes = commutative(lb);
    cg_value z = cg_thread_value(g, lb->z, lb->env);
    for (int64_t c = 0; c < k; c++) {
        cg_line(g, "%s lb_a%lld;", lb->acc_c, (long long)c);
        if (!lanes) set(g, lb->acc, cg_str(g, "lb_a%lld", (long long)c), &z);
    }
    if (lanes) {
        for (int64_t c = 0; c < k; c++)
            reduce_run(g, lb, cg_str(g, "lb_base + lb_l * %lldL + %lldL", (long long)lb->m, (long long)(c * (lb->m / k))),
                       n, cg_str(g, "lb_a%lld", (long long)c));
    } else {
        cg_open(g, cg_str(g, "for (int lb_j = 0; lb_j < %lld; lb_j++) {", (long long)(lb->m / k)));
        for (int64_t c = 0; c < k; c++) {
            cg_value x = own_element(g, lb, n, c);
            fold_into(g, lb, cg_str(g, "lb_a%lld", (long long)c), &x);
            cg_close(g);
            cg_close(g);
        }
        cg_close(g);
    }
    cg_line(g, "lb_s[lb_l] = lb_a0;");
    for (int64_t c = 1; c < k; c++) combine(g, lb, "lb_s[lb_l]", "lb_s[lb_l]", cg_str(g, "lb_a%lld", (long long)c));
    cg_line(g, "barrier(CLK_LOCAL_MEM_FENCE);");
}

/* ---- LOAD = direct, the scan pass in vector registers ----
 *
 * A plain scan (no scatter, no fold but a fused map's, no post-function
 * but a seed's: fold_of_a_map, post_of_a_seed) by a commutative operator
 * of one number, read from and written to contiguous memory, is
 * scanned W elements at a time in OpenCL vector types where the compiler
 * is clang (PoCL's; ST_VECTORS in the prelude): a vector is loaded, scanned
 * in log2 W steps (each combines it with itself shifted by 1, 2, 4, …
 * lanes, the identity z shifted in), the carry added, and stored by one
 * streaming store, which on a CPU writes the line without reading it
 * first. Elsewhere, and for a block at the array's end or a misaligned
 * one, the scalar loop below does it. */

/* op(a, b) on vectors of W lanes of vector type vt, unsigned type uvt: the
 * scalar kernels' wrap-around for + and * on signed integers is unsigned
 * arithmetic of the same bits. */
static const char *vector_op(cg *g, const lookback *lb, st_binop b, const char *vt, const char *uvt, const char *x,
                             const char *y) {
    st_scalar_kind k = lb->acc->scalar;
    bool fl = st_scalar_is_float(k);
    switch (b) {
    case ST_OP_ADD: case ST_OP_MUL:
        if (fl || !st_scalar_is_signed(k)) return cg_str(g, "(%s %s %s)", x, b == ST_OP_ADD ? "+" : "*", y);
        return cg_str(g, "as_%s(as_%s(%s) %s as_%s(%s))", vt, uvt, x, b == ST_OP_ADD ? "+" : "*", uvt, y);
    case ST_OP_BAND: return cg_str(g, "(%s & %s)", x, y);
    case ST_OP_BOR: return cg_str(g, "(%s | %s)", x, y);
    case ST_OP_BXOR: return cg_str(g, "(%s ^ %s)", x, y);
    default: return cg_binop(g, b, k, x, y); /* min max fmin fmax take vectors */
    }
}

/* The C pointer to element 0 of a contiguous array value or place (NULL
 * when it is not one block of memory with unit stride). */
static const char *contiguous(const cg_mem *m) {
    int64_t stride;
    if (m->rank != 1 || m->space != CG_GLOBAL || m->kind == ST_BOOL || !st_size_is_const(m->strides[0], &stride) ||
        stride != 1)
        return NULL;
    return m->offset;
}

/* The vector loops' memory: input (the scan's array, or a partition's
 * first component) and the place p, both contiguous global arrays, as *xs
 * and C offsets of element 0, their buffers registered with the kernel; or
 * false, and the scalar loop does it. */
static bool contiguous_pair(cg *g, const lookback *lb, const st_node *input, const cg_place *p, cg_value *xs,
                            const char **in_off, const char **out_off) {
    /* a name (of memory, it is checked below): anything else, a map say,
     * is computed element by element, by the scalar loop */
    if (input->kind != ST_NODE_VAR) return false;
    *xs = cg_thread_value(g, input, lb->env);
    if (xs->kind != CG_ARRAY || xs->view->kind != CG_V_MEM) return false;
    *in_off = contiguous(&xs->view->mem);
    *out_off = contiguous(&p->mem);
    if (!*in_off || !*out_off) return false;
    if (xs->view->mem.buffer >= 0) cg_use_buffer(g, xs->view->mem.buffer, false);
    cg_use_buffer(g, p->mem.buffer, true);
    return true;
}

/* Declares lb_ahead: how far past the work-item's runs its group's next
 * block likely lies (STRATA_COMPUTE_UNITS blocks on), or 0 where that block
 * is not whole, for the vector loops' ST_PREFETCH (the prelude says why);
 * n: the array's end. */
static void block_ahead(cg *g, const lookback *lb, const char *n) {
    long long mw = (long long)(lb->m * lb->wg);
    cg_line(g, "const long lb_ahead = lb_base + (STRATA_COMPUTE_UNITS + 1L) * %lldL <= %s ? STRATA_COMPUTE_UNITS * %lldL : 0L;",
            mw, n, mw);
}

/* Is the post-function one the vector scan applies as it stores: none, the
 * identity, or a seed's, (a, x) => op(c, a) with c reading neither (what
 * rewrite/seeds.c makes of scan(op, c, xs))? *seed: c, or NULL. */
static bool post_of_a_seed(const lookback *lb, st_binop b, const st_node **seed) {
    *seed = NULL;
    const st_node *post = lb->post;
    if (!post) return true;
    if (post->kind != ST_NODE_LAMBDA || st_lambda_nparams(post) != 2) return false;
    const st_node *body = st_lambda_body(post), *a = post->kids[0], *x = post->kids[1];
    if (is_param(body, a)) return true;
    if (body->kind != ST_NODE_BINOP || body->u.binop != b) return false;
    const st_node *c = is_param(body->kids[1], a) ? body->kids[0] : is_param(body->kids[0], a) ? body->kids[1] : NULL;
    if (!c || st_occurs(c, a) || st_occurs(c, x)) return false;
    *seed = c;
    return true;
}

/* Is there no fold but the operator itself (what rewrite/seeds.c gives a
 * seeded scan that had none)? */
static bool fold_is_op(const lookback *lb, st_binop b) {
    st_binop fb;
    return !lb->fold || (st_fn_binop(lb->fold, &fb) && fb == b);
}

/* Is the scan's fold a map's, fold(a, y) = op(a, f(y)) with f(y) not
 * reading a, of elements as wide as the accumulator (a fused map: a scan of
 * map(f, xs))? Then lane q of the vector scan is f of lane q of the loaded
 * vector. Without a fold (fold_is_op), true when the elements are the
 * accumulators. */
static bool fold_of_a_map(const lookback *lb, st_binop b) {
    if (fold_is_op(lb, b)) return lb->elem == lb->acc;
    const st_node *fold = lb->fold, *body = st_lambda_body(fold);
    if (fold->kind != ST_NODE_LAMBDA || st_lambda_nparams(fold) != 2 || body->kind != ST_NODE_BINOP ||
        body->u.binop != b || !is_param(body->kids[0], fold->kids[0]) || st_occurs(body->kids[1], fold->kids[0]))
        return false;
    const st_type *e = lb->elem;
    return e->kind == ST_TYPE_SCALAR && e->scalar != ST_BOOL && st_scalar_size(e->scalar) == st_scalar_size(lb->acc->scalar);
}

/* Emits the vector scan of the work-item's runs, setting lb_vec, when the
 * scan is one it takes; the scalar loop runs where lb_vec is 0. n: the
 * array's end. */
static void vector_scan_store(cg *g, const lookback *lb, const char *n, const cg_place *p, const cg_scatter *scatter) {
    cg_line(g, "int lb_vec = 0;");
    st_binop b;
    int64_t k = chains_of(lb), w = lanes_of(lb), run = lb->m / k;
    const st_node *seed;
    if (scatter || !commutative_op(lb, &b) || !fold_of_a_map(lb, b) || !post_of_a_seed(lb, b, &seed) || run % w ||
        p->tuple)
        return;
    /* 8- and 16-bit numbers: OpenCL has no vector of i8 by strata's name
     * (schar), and the scalar loop is what casts results back */
    if (st_scalar_size(lb->acc->scalar) < 4) return;
    cg_value xs;
    const char *in_off, *out_off;
    if (!contiguous_pair(g, lb, lb->xs, p, &xs, &in_off, &out_off)) return;
    st_scalar_kind sk = lb->acc->scalar;
    const char *t = lb->acc_c;
    const char *vt = cg_str(g, "%s%lld", t, (long long)w);
    const char *uvt = cg_str(g, "%s%lld", sk == ST_I32 ? "uint" : sk == ST_I64 ? "ulong" : t, (long long)w);
    cg_value z = cg_thread_value(g, lb->z, lb->env);
    const char *et = cg_ctype(g, lb->elem);
    cg_line(g, "#if ST_VECTORS");
    cg_line(g, "__global const %s *lb_src = %s + (%s) + lb_base + lb_l * %lldL;", et, xs.view->mem.base, in_off,
            (long long)lb->m);
    cg_line(g, "__global %s *lb_dst = %s + (%s) + lb_base + lb_l * %lldL;", t, p->mem.base, out_off, (long long)lb->m);
    cg_open(g, cg_str(g, "if (lb_full && (ulong)lb_dst %% %lld == 0) {", (long long)(w * (sk == ST_I64 || sk == ST_U64 || sk == ST_F64 ? 8 : 4))));
    block_ahead(g, lb, n);
    cg_line(g, "const %s lb_zv = (%s)(%s);", vt, vt, z.c);
    const char *stored = "lb_t";
    if (seed) { /* op(c, a) as it is stored; the carry stays a */
        cg_value c = cg_thread_value(g, seed, lb->env);
        cg_line(g, "const %s lb_sv = (%s)(%s);", vt, vt, c.c);
        stored = vector_op(g, lb, b, vt, uvt, "lb_sv", "lb_t");
    }
    for (int64_t c = 0; c < k; c++) {
        cg_line(g, "%s lb_cv%lld = (%s)(lb_p%lld);", vt, (long long)c, vt, (long long)c);
        cg_open(g, cg_str(g, "for (int lb_j = %lld; lb_j < %lld; lb_j += %lld) {", (long long)(c * run),
                          (long long)((c + 1) * run), (long long)w));
        /* a vector is 64 bytes, a cache line */
        cg_line(g, "ST_PREFETCH(lb_src + lb_ahead + lb_j);");
        if (!fold_is_op(lb, b)) { /* each lane's f(y): fold(z, y), z being op's neutral element */
            cg_line(g, "const %s%lld lb_y = vload%lld(0, lb_src + lb_j);", et, (long long)w, (long long)w);
            cg_line(g, "%s lb_t;", vt);
            cg_line(g, "#pragma unroll");
            cg_open(g, cg_str(g, "for (int lb_q = 0; lb_q < %lld; lb_q++) {", (long long)w));
            cg_value args[2] = {z, cg_scalar(lb->elem, "lb_y[lb_q]")};
            cg_value f = cg_apply(g, lb->fold, 2, args, lb->env);
            cg_line(g, "lb_t[lb_q] = %s;", f.c);
            cg_close(g);
        } else {
            cg_line(g, "%s lb_t = vload%lld(0, lb_src + lb_j);", vt, (long long)w);
        }
        for (int64_t d = 1; d < w; d *= 2) {
            const char *shifted = cg_str(g, "ST_LANES_UP%lld(%s, lb_t, lb_zv, %lld)", (long long)w, vt, (long long)d);
            cg_line(g, "lb_t = %s;", vector_op(g, lb, b, vt, uvt, shifted, "lb_t"));
        }
        cg_line(g, "lb_t = %s;", vector_op(g, lb, b, vt, uvt, cg_str(g, "lb_cv%lld", (long long)c), "lb_t"));
        cg_line(g, "ST_STREAM((__global %s *)(lb_dst + lb_j), %s);", vt, stored);
        cg_line(g, "lb_cv%lld = (%s)(lb_t.s%c);", (long long)c, vt, "0123456789abcdef"[w - 1]);
        cg_close(g);
    }
    cg_line(g, "ST_STREAM_END();");
    cg_line(g, "lb_vec = 1;");
    cg_close(g);
    cg_line(g, "#endif");
}

/* ---- LOAD = direct, a compaction by compress-stores ----
 *
 * A filter's fused pass (filter-scatter, then fuse-scan-scatter) scans a
 * count, acc + (if p(y) then 1 else 0), and scatters each element x to
 * (if (if p(x) then 1 else 0) == 1 then acc - 1 else -1, x): the kept ones
 * to consecutive places from its run's prefix, the others nowhere (-1 is no
 * place). A partition's (partition-scatter) scans the same count over
 * zip(xs, iota(n)) and sends the others to k + (i - acc): consecutive places
 * after the kept ones; a radix sort's split counts the set bits and sends
 * them after the clear ones. cg_is_compaction says which passes are these,
 * whatever form the places are written in. With AVX-512 (ST_COMPRESS) 16
 * elements are tested at a time into a mask (the fold from 0 is a lane's 0
 * or 1), and each side's lanes stored by a register compress (vpcompressd)
 * and one masked store, where the scalar loop stored every element through
 * a selected address: the second pass was most of a filter's time on PoCL.
 * (The compress straight to memory is slow on AMD's Zen 4, several times
 * the register form's time.) 32-bit elements, whole blocks; elsewhere the
 * scalar loop. */

enum { MAX_MOVED = 4 };

/* The arrays a compaction moves: its data, or the arrays the data zips. */
static uint32_t moved_arrays(const cg_compaction *c, const st_node **out) {
    if (!st_is_prim(c->data, ST_PRIM_ZIP)) return out[0] = c->data, 1;
    if (c->data->nkids > MAX_MOVED) return 0;
    for (uint32_t j = 0; j < c->data->nkids; j++) out[j] = c->data->kids[j];
    return c->data->nkids;
}

/* Is the pass a compaction (cg_is_compaction) of arrays of 32-bit scalars
 * into as many global arrays? */
static bool is_compaction(cg *g, const lookback *lb, const cg_place *p, const cg_scatter *scatter, cg_compaction *out) {
    st_binop b;
    if (!scatter || scatter->pass != CG_ALL || !lb->fold || !lb->post || !commutative_op(lb, &b) || b != ST_OP_ADD ||
        scatter->e->type->size != lb->xs->type->size ||
        !cg_is_compaction(g->cx, lb->fold, lb->z, lb->post, lb->xs, out))
        return false;
    const st_node *moved[MAX_MOVED];
    uint32_t m = moved_arrays(out, moved);
    if (!m || p->tuple != (m > 1) || (p->tuple && p->n != m)) return false;
    for (uint32_t j = 0; j < m; j++) {
        const st_type *t = moved[j]->type->elem;
        const cg_place *to = p->tuple ? &p->items[j] : p;
        if (to->tuple || !st_type_is_scalar(t, t->scalar) || st_scalar_size(t->scalar) != 4 || t->scalar == ST_BOOL ||
            to->mem.rank != 1 || to->mem.space != CG_GLOBAL || to->mem.kind != t->scalar)
            return false;
    }
    return true;
}

/* A start of a compaction's side, as a C expression of type long. */
static const char *start_of(cg *g, const lookback *lb, const cg_linear *l) {
    const char *c = cg_str(g, "%lldL", (long long)l->c);
    for (uint32_t i = 0; i < l->n; i++)
        c = cg_str(g, "%s + %lldL * (long)(%s)", c, (long long)l->coef[i], cg_thread_value(g, l->atom[i], lb->env).c);
    return c;
}

/* The element of xs (zips of the moved arrays and iotas) in lane lb_q:
 * moved array j's is lane lb_q of its vector lb_v<j>. */
static bool lane_element(cg *g, const lookback *lb, const st_node *xs, const st_node *const *moved, uint32_t m,
                         cg_value *out) {
    for (uint32_t j = 0; j < m; j++)
        if (xs == moved[j]) return *out = cg_scalar(xs->type->elem, cg_str(g, "lb_v%u[lb_q]", j)), true;
    if (st_is_prim(xs, ST_PRIM_IOTA))
        return *out = cg_scalar(xs->type->elem, cg_str(g, "(lb_base + lb_l * %lldL + lb_j + lb_q)", (long long)lb->m)), true;
    cg_value *items = cg_alloc(g, xs->nkids * sizeof *items);
    if (!items || !st_is_prim(xs, ST_PRIM_ZIP)) return false;
    for (uint32_t i = 0; i < xs->nkids; i++)
        if (!lane_element(g, lb, xs->kids[i], moved, m, &items[i])) return false;
    *out = (cg_value){.kind = CG_TUPLE, .type = xs->type->elem, .n = xs->nkids, .items = items};
    return true;
}

/* Emits the compress-store loop of the work-item's runs, setting lb_vec,
 * when is_compaction says so: each moved array j read by vectors from
 * lb_src<j> and stored by compress-stores to lb_dst<j>, one mask for all. */
static void compaction_store(cg *g, const lookback *lb, const char *n, const cg_place *p, const cg_scatter *scatter) {
    int64_t k = chains_of(lb), run = lb->m / k;
    cg_compaction shape;
    if (!lb->direct || run % 16 || !is_compaction(g, lb, p, scatter, &shape)) return;
    bool pairs = shape.partition;
    const st_node *moved[MAX_MOVED];
    uint32_t m = moved_arrays(&shape, moved);
    cg_value xs[MAX_MOVED];
    const char *in_off[MAX_MOVED], *out_off[MAX_MOVED];
    for (uint32_t j = 0; j < m; j++)
        if (!contiguous_pair(g, lb, moved[j], p->tuple ? &p->items[j] : p, &xs[j], &in_off[j], &out_off[j])) return;
    cg_value elem; /* in the loop below: lane lb_q's element */
    if (!lane_element(g, lb, lb->xs, moved, m, &elem)) return;
    cg_line(g, "#if ST_COMPRESS");
    cg_open(g, "if (lb_full) {");
    block_ahead(g, lb, n);
    for (uint32_t j = 0; j < m; j++) {
        const char *tc = cg_ctype(g, xs[j].type->elem);
        cg_line(g, "__global const %s *lb_src%u = %s + (%s) + lb_base + lb_l * %lldL;", tc, j, xs[j].view->mem.base,
                in_off[j], (long long)lb->m);
        cg_line(g, "__global %s *lb_dst%u = %s + (%s);", tc, j, (p->tuple ? &p->items[j] : p)->mem.base, out_off[j]);
    }
    /* where each side starts, once for all runs */
    cg_line(g, "const long lb_kept = %s;", start_of(g, lb, &shape.kept));
    if (pairs) cg_line(g, "const long lb_rest = %s;", start_of(g, lb, &shape.others));
    for (int64_t c = 0; c < k; c++) {
        const char *first = cg_str(g, "(lb_base + lb_l * %lldL + %lldL)", (long long)lb->m, (long long)(c * run));
        /* lb_p<c> counts the kept ones before run c's element: the first
         * kept place is kept + lb_p<c>; the others' rest + (first index -
         * lb_p<c>) */
        cg_line(g, "long lb_at%lld = lb_kept + (long)lb_p%lld;", (long long)c, (long long)c);
        if (pairs)
            cg_line(g, "long lb_or%lld = lb_rest + (%s - (long)lb_p%lld);", (long long)c, first, (long long)c);
        cg_open(g, cg_str(g, "for (int lb_j = %lld; lb_j < %lld; lb_j += 16) {", (long long)(c * run),
                          (long long)((c + 1) * run)));
        for (uint32_t j = 0; j < m; j++) {
            cg_line(g, "ST_PREFETCH(lb_src%u + lb_ahead + lb_j);", j);
            cg_line(g, "const %s16 lb_v%u = vload16(0, lb_src%u + lb_j);", cg_ctype(g, xs[j].type->elem), j, j);
        }
        cg_line(g, "int16 lb_f;");
        cg_line(g, "#pragma unroll");
        cg_open(g, "for (int lb_q = 0; lb_q < 16; lb_q++) {");
        cg_value args[2] = {cg_scalar(lb->acc, "0"), elem};
        cg_value one = cg_apply(g, lb->fold, 2, args, lb->env);
        cg_line(g, "lb_f[lb_q] = (int)(%s);", one.c);
        cg_close(g);
        cg_line(g, "const ushort lb_m = ST_NONZERO_MASK(lb_f);");
        cg_line(g, "const uint lb_n = popcount((uint)lb_m);");
        for (uint32_t j = 0; j < m; j++) {
            cg_line(g, "ST_COMPRESS_STORE(lb_dst%u + lb_at%lld, lb_v%u, lb_m, lb_n);", j, (long long)c, j);
            if (pairs)
                cg_line(g, "ST_COMPRESS_STORE(lb_dst%u + lb_or%lld, lb_v%u, (ushort)~lb_m, 16u - lb_n);", j, (long long)c, j);
        }
        cg_line(g, "lb_at%lld += lb_n;", (long long)c);
        if (pairs) cg_line(g, "lb_or%lld += 16 - lb_n;", (long long)c);
        cg_close(g);
    }
    cg_line(g, "lb_vec = 1;");
    cg_close(g);
    cg_line(g, "#endif");
}

/* The scalar loop of the scan pass: the runs side by side, each element
 * folded into its run's lb_p<c> and stored; n: the array's end, or NULL in a
 * whole block. */
static void scalar_scan_store(cg *g, const lookback *lb, const char *n, const cg_place *p, const cg_scatter *scatter) {
    int64_t k = chains_of(lb);
    cg_open(g, cg_str(g, "for (int lb_j = 0; lb_j < %lld; lb_j++) {", (long long)(lb->m / k)));
    for (int64_t c = 0; c < k; c++) {
        const char *acc = cg_str(g, "lb_p%lld", (long long)c);
        cg_value x = own_element(g, lb, n, c);
        fold_into(g, lb, acc, &x);
        cg_value y = at(g, lb->acc, acc);
        store_one(g, lb, &y, &x, p, scatter);
        cg_close(g);
        cg_close(g);
    }
    cg_close(g);
}

/* Each work-item folds its runs again, each from its prefix, and stores
 * each result as it goes. */
static void thread_scan_store(cg *g, const lookback *lb, const char *n, const cg_place *p, const cg_scatter *scatter) {
    int64_t k = chains_of(lb);
    cg_line(g, "%s lb_p0 = lb_prefix;", lb->acc_c);
    cg_open(g, "if (lb_l > 0) {");
    combine(g, lb, "lb_p0", "lb_p0", "lb_s[lb_l - 1]");
    cg_close(g);
    for (int64_t c = 1; c < k; c++) {
        cg_line(g, "%s lb_p%lld;", lb->acc_c, (long long)c);
        combine(g, lb, cg_str(g, "lb_p%lld", (long long)c), cg_str(g, "lb_p%lld", (long long)c - 1),
                cg_str(g, "lb_a%lld", (long long)c - 1));
    }
    vector_scan_store(g, lb, n, p, scatter);
    compaction_store(g, lb, n, p, scatter);
    /* a whole block's loop has no test of the array's end in it */
    cg_open(g, "if (!lb_vec && lb_full) {");
    scalar_scan_store(g, lb, NULL, p, scatter);
    g->indent--;
    cg_line(g, "} else if (!lb_vec) {");
    g->indent++;
    scalar_scan_store(g, lb, n, p, scatter);
    cg_close(g);
}

/* ---- the kernels ---- */

static bool state_new(cg *g, lookback *lb) {
    st_ctx *cx = g->cx;
    const st_type *i32 = st_type_scalar(cx, ST_I32);
    lb->ctl = cg_host_temp(g, st_type_array(cx, st_size_const(cx, 1), i32), "lookback_state");
    if (lb->packed) {
        lb->desc = cg_host_temp(g, st_type_array(cx, lb->groups, st_type_scalar(cx, ST_U64)), "lookback_descriptors");
        return lb->ctl && lb->desc;
    }
    const st_type *accs = st_type_array(cx, lb->groups, lb->acc);
    lb->flags = cg_host_temp(g, st_type_array(cx, lb->groups, i32), "lookback_flags");
    lb->aggregates = cg_host_temp(g, accs, "lookback_aggregates");
    lb->prefixes = cg_host_temp(g, accs, "lookback_prefixes");
    return lb->ctl && lb->flags && lb->aggregates && lb->prefixes;
}

/* ---- the scan's total, for scanTotal ---- */

static bool runs(const st_node *body, const st_node *s) {
    if (st_is_prim(body, ST_PRIM_SCAN_TOTAL)) return false;
    if (st_is_prim(body, ST_PRIM_SCAN_LOOKBACK) && st_alpha_equal(body, s)) return true;
    for (uint32_t i = 0; i < body->nkids; i++)
        if (runs(body->kids[i], s)) return true;
    return false;
}

bool cg_total_runs_in(const st_node *body, const st_node *e) {
    return st_is_prim(e->kids[0], ST_PRIM_SCAN_LOOKBACK) && runs(body, e->kids[0]);
}

void cg_total_later(cg *g, const st_node *e, const cg_place *p) {
    if (g->failed || !p) return;
    if (!cg_grow(g, (void **)&g->totals, g->ntotals, &g->captotals, sizeof *g->totals)) return;
    g->totals[g->ntotals++] = (struct cg_total){.scan = e->kids[0], .at = e, .place = p};
}

/* Where scan e writes its total (the first scanTotal of it not yet
 * written), or NULL. Up to bound names: the program's binders are renamed
 * at each place they print (st_def_canonical), so the scan inside
 * scanTotal and the one that runs bind other names. */
static const cg_place *total_of(cg *g, const st_node *e) {
    for (uint32_t i = 0; i < g->ntotals; i++)
        if (!g->totals[i].written && st_alpha_equal(g->totals[i].scan, e)) {
            g->totals[i].written = true;
            return g->totals[i].place;
        }
    return NULL;
}

/* scanTotal(s) into p where nothing else runs s, a look-back scan: s's
 * kernels, storing no element, only the total (a reduce's, as lookback
 * rewrites it); the descriptor's total_only. */
static void total_only(cg *g, const st_node *e, const cg_binding *env, const cg_place *p) {
    cg_total_later(g, e, p);
    cg_run_algorithm(g, &cg_lookback_algorithm, e->kids[0], env, NULL, NULL);
}

bool cg_totals_written(cg *g) {
    for (uint32_t i = 0; i < g->ntotals && !g->failed; i++)
        if (!g->totals[i].written)
            cg_fail(g, g->totals[i].at, "scanTotal of a look-back scan that the program does not run after it");
    return !g->failed;
}

/* The last group's inclusive prefix (its prefix and its aggregate) into
 * the total, once the look-back is done. */
static void write_total(cg *g, const lookback *lb) {
    if (!lb->total) return;
    cg_open(g, cg_str(g, "if (lb_l == 0 && lb_id == %s - 1) {", cg_size(g, lb->groups)));
    cg_line(g, "%s lb_total;", lb->acc_c);
    combine(g, lb, "lb_total", "lb_prefix", cg_str(g, "lb_s[%lld]", (long long)lb->wg - 1));
    cg_value v = at(g, lb->acc, "lb_total");
    cg_store(g, lb->total, &v);
    cg_close(g);
}

/* Before every launch: the ticket and every flag to 0 (X), and the total,
 * if any, to z (what it is when there is no group: an empty input), so
 * then one work-item more than there are groups. */
static void reset_kernel(cg *g, const lookback *lb) {
    st_err err = {0};
    const st_size *count = lb->total ? st_size_add(g->cx, lb->groups, st_size_const(g->cx, 1), &err) : lb->groups;
    if (!count) return (void)cg_fail(g, lb->e, "%s", err.message);
    cg_kernel_begin(g, CG_SHAPE_GLB, count, "lookback_reset", lb->e);
    g->k->alg = &cg_lookback_algorithm;
    g->k->what = "the look-back state of the next kernel, zeroed";
    g->level = CG_THREAD;
    const char *flags = buffer_of(g, lb->packed ? lb->desc : lb->flags);
    const char *ctl = buffer_of(g, lb->ctl);
    cg_open(g, cg_str(g, "for (long i = get_global_id(0); i < %s; i += get_global_size(0)) {", cg_size(g, count)));
    if (lb->total) {
        cg_line(g, "if (i < %s) %s[i] = 0;", cg_size(g, lb->groups), flags);
        cg_open(g, "if (i == 0) {");
        cg_value z = cg_thread_value(g, lb->z, lb->env);
        cg_store(g, lb->total, &z);
        cg_close(g);
    } else {
        cg_line(g, "%s[i] = 0;", flags);
    }
    cg_line(g, "if (i == 0) %s[0] = 0;", ctl);
    cg_close(g);
    cg_kernel_end(g);
}

static void scan_kernel(cg *g, lookback *lb, const cg_place *p, const cg_scatter *scatter) {
    st_ctx *cx = g->cx;
    cg_kernel_begin(g, CG_SHAPE_EXACT, lb->groups, "lookback", lb->e);
    g->k->alg = &cg_lookback_algorithm;
    cg_kernel *k = g->k;
    const st_size **lanes = cg_alloc(g, sizeof *lanes);
    if (!lanes) return;
    lanes[0] = st_size_const(cx, lb->wg);
    k->nlanes = 1;
    k->lanes = lanes;
    g->level = CG_THREAD;
    const char *elem_c = cg_ctype(g, lb->elem);
    long long mw = (long long)(lb->m * lb->wg);
    /* without a post-function an element is not read after it is folded:
     * a plain scan folds its block in place */
    bool in_place = !lb->post && lb->elem == lb->acc;
    const char *v = lb->held ? (in_place ? "lb_h" : "lb_hv") : in_place ? "lb_x" : "lb_v";
    cg_line(g, "__local long lb_id;");
    if (lb->held) {
        lb->rows = rows_of(lb, in_place);
        long long tile = padded_length(lb, lb->rows * lb->m);
        cg_line(g, "__local %s lb_tile[%lld];", elem_c, tile);
        if (!in_place) cg_line(g, "__local %s lb_tile_acc[%lld];", lb->acc_c, tile);
        cg_line(g, "%s lb_h[%lld];", elem_c, (long long)lb->m);
        if (!in_place) cg_line(g, "%s lb_hv[%lld];", lb->acc_c, (long long)lb->m);
    } else if (!lb->direct) {
        cg_line(g, "__local %s lb_x[%lld];", elem_c, padded_length(lb, lb->m * lb->wg));
        if (!in_place) cg_line(g, "__local %s lb_v[%lld];", lb->acc_c, padded_length(lb, lb->m * lb->wg));
    }
    cg_line(g, "__local %s lb_s[%lld];", lb->acc_c, (long long)lb->wg);
    cg_line(g, "__local %s lb_prefix;", lb->acc_c);
    if (lb->lw > 1) {
        cg_line(g, "__local int lb_wf[%lld];", (long long)lb->lw);
        cg_line(g, "__local %s lb_wv[%lld];", lb->acc_c, (long long)lb->lw);
        cg_line(g, "__local long lb_next;");
        cg_line(g, "__local int lb_more;");
    }
    cg_line(g, "const int lb_l = get_local_id(0);");
    cg_line(g, "if (lb_l == 0) lb_id = atomic_inc(&%s[0]);", buffer_of(g, lb->ctl));
    cg_line(g, "barrier(CLK_LOCAL_MEM_FENCE);");
    cg_line(g, "const long lb_base = lb_id * %lldL;", mw);
    const char *n = cg_size(g, lb->xs->type->size);
    /* a block without a tail, tested once: its loops run unguarded */
    cg_line(g, "const bool lb_full = lb_base + %lldL <= %s;", mw, n);
    if (lb->direct) {
        thread_reduce(g, lb, n);
    } else {
        if (lb->held) held_load(g, lb, n);
        else load_block(g, lb, n);
        thread_scan(g, lb, n, v);
    }
    group_scan(g, lb);
    if (lb->lw > 1) look_back_wide(g, lb);
    else look_back_one(g, lb);
    write_total(g, lb);
    if (!p) { /* a reduce's: the total is all it makes */
        cg_kernel_end(g);
        return;
    }
    if (lb->direct) {
        thread_scan_store(g, lb, n, p, scatter);
    } else {
        distribute(g, lb, v);
        if (lb->held) held_store(g, lb, n, v, in_place ? "lb_tile" : "lb_tile_acc", p, scatter);
        else store_block(g, lb, n, v, p, scatter);
    }
    cg_kernel_end(g);
}

/* scanLookback e into p: a kernel resetting its state, then the scan's
 * kernel. With scatter (a scatter of e's (index, value) pairs into p, whose
 * destination is in p already), each pair is written as it is stored.
 * Without p, its total alone (total_only). */
static void lookback_emit(cg *g, const st_node *e, const cg_binding *env, const cg_place *p, const cg_scatter *scatter) {
    const cg_place *total = g->failed ? NULL : total_of(g, e);
    if (g->failed || (!p && !total)) return;
    e = cg_host_hoist_args(g, e, ST_LOOKBACK_SIZES, &env);
    if (!e) return;
    lookback lb = {.e = e, .env = env, .total = total};
    int64_t sizes[ST_LOOKBACK_SIZES];
    if (!cg_leading_sizes(g, e, sizes)) return;
    lb.m = sizes[0];
    lb.wg = sizes[1];
    lb.lw = sizes[2];
    lb.direct = sizes[3] == 1;
    lb.held = !lb.direct && lb.m <= HELD_M;
    st_scan_form s;
    if (!st_fold_form_of(e, &s)) return (void)cg_fail(g, e, "a scanLookback of another form than a scan's");
    lb.op = s.op;
    lb.fold = s.fold;
    lb.post = s.post;
    lb.z = s.z;
    lb.xs = s.xs;
    lb.elem = lb.xs->type->elem;
    lb.acc = lb.z->type;
    if (!cg_is_plain(lb.acc) || !cg_is_plain(lb.elem)) {
        cg_fail(g, e, "scanLookback scans scalars and tuples of scalars; this one's elements or accumulator hold arrays");
        return;
    }
    if (lb.lw > lb.wg) {
        cg_fail(g, e, "scanLookback's LW (%lld) is more than its WG (%lld)", (long long)lb.lw, (long long)lb.wg);
        return;
    }
    lb.acc_c = cg_ctype(g, lb.acc);
    lb.packed = fits_a_word(lb.acc);
    lb.pad_shift = pad_shift(&lb);
    st_err serr = {0};
    const st_size *mw = st_size_const(g->cx, lb.m * lb.wg);
    lb.groups = st_size_div(g->cx, st_size_add(g->cx, lb.xs->type->size, st_size_const(g->cx, lb.m * lb.wg - 1), &serr),
                            mw, &serr);
    if (!lb.groups) {
        cg_fail(g, e, "the number of work-groups: %s", serr.message);
        return;
    }
    if (!state_new(g, &lb)) return;
    lb.sink = sink_of(g, &lb, p, scatter);
    reset_kernel(g, &lb);
    scan_kernel(g, &lb, p, scatter);
}

/* ---- the descriptor ---- */

/* The kernels' defines: the spin bound, the flags, and what the direct
 * load needs of the compiler. */
static const char *const prelude =
    "/* reads of a predecessor's flag before a look-back gives up and reports a stall */\n"
    "#ifndef STRATA_LOOKBACK_SPINS\n#define STRATA_LOOKBACK_SPINS (1L << 26)\n#endif\n"
    "/* a look-back's flags: no value yet, a group's aggregate, its inclusive prefix */\n"
    "#define LB_X 0\n#define LB_A 1\n#define LB_P 2\n"
    "/* a group that never publishes, to test that bound (-1: none) */\n"
    "#ifndef STRATA_LOOKBACK_SILENT_GROUP\n#define STRATA_LOOKBACK_SILENT_GROUP (-1L)\n#endif\n"
    "/* LOAD=direct, LW=1: reads of a predecessor's empty flag before folding its block\n"
    " * (longer than a block's fold, far shorter than a preempted thread's wait) */\n"
    "#ifndef STRATA_LOOKBACK_PATIENCE\n#define STRATA_LOOKBACK_PATIENCE 4096\n#endif\n"
    "/* clang's OpenCL (PoCL's): the direct look-back scans in vector types, stores them\n"
    " * bypassing the cache, and fences those stores (x86 orders them by nothing else) */\n"
    "#if defined(__clang__) && defined(__OPENCL_VERSION__)\n#define ST_VECTORS 1\n"
    "#define ST_STREAM(p, v) __builtin_nontemporal_store((v), (p))\n"
    "#else\n#define ST_VECTORS 0\n#define ST_STREAM(p, v) (*(p) = (v))\n#endif\n"
    "#if defined(__clang__) && defined(__OPENCL_VERSION__) && defined(__x86_64__)\n"
    "#define ST_STREAM_END() __builtin_ia32_sfence()\n"
    "#else\n#define ST_STREAM_END() ((void)0)\n#endif\n"
    "/* clang on x86 with AVX-512 (PoCL on such a CPU): a vector's chosen lanes stored\n"
    " * one after the other (vpcompressd), a compaction's store */\n"
    "#if defined(__clang__) && defined(__OPENCL_VERSION__) && defined(__AVX512F__)\n#define ST_COMPRESS 1\n"
    "typedef int st_v16si __attribute__((vector_size(64)));\n"
    "#define ST_COMPRESS_STORE(p, v, m, n) __builtin_ia32_storedqusi512_mask((int *)(ulong)(p), \\\n"
    "    __builtin_ia32_compresssi512_mask((st_v16si)(v), (st_v16si)(v), (m)), (ushort)((1u << (n)) - 1u))\n"
    "#define ST_NONZERO_MASK(f) ((ushort)__builtin_ia32_cmpd512_mask((st_v16si)(f), (st_v16si)(int16)(0), 4, (ushort)0xffff))\n"
    "#else\n#define ST_COMPRESS 0\n#endif\n"
    "/* a vector's lanes moved up by d, the lanes of z in: on AVX-512 one valignd (valignq\n"
    " * for 64-bit lanes). Written as a shuffle, or as the valign builtin on floats (LLVM\n"
    " * sees through it), LLVM makes it a vexpand, which took a scan on AMD's Zen 4 from\n"
    " * 3.0 to 4.5 ms at 2^24; asm keeps the instruction. */\n"
    "#if defined(__clang__) && defined(__OPENCL_VERSION__) && defined(__AVX512F__)\n"
    "#define ST_LANES_UP16(T, v, z, d) ({ T st_up_; \\\n"
    "    __asm__(\"valignd $%c3, %2, %1, %0\" : \"=v\"(st_up_) : \"v\"(v), \"v\"(z), \"i\"(16 - (d))); st_up_; })\n"
    "#define ST_LANES_UP8(T, v, z, d) ({ T st_up_; \\\n"
    "    __asm__(\"valignq $%c3, %2, %1, %0\" : \"=v\"(st_up_) : \"v\"(v), \"v\"(z), \"i\"(8 - (d))); st_up_; })\n"
    "#else\n#define ST_LANE_UP(i, d, w) ((i) < (d) ? (w) + (i) : (i) - (d))\n"
    "#define ST_LANES_UP8(T, v, z, d) __builtin_shufflevector((v), (z), ST_LANE_UP(0, d, 8), ST_LANE_UP(1, d, 8), \\\n"
    "    ST_LANE_UP(2, d, 8), ST_LANE_UP(3, d, 8), ST_LANE_UP(4, d, 8), ST_LANE_UP(5, d, 8), ST_LANE_UP(6, d, 8), \\\n"
    "    ST_LANE_UP(7, d, 8))\n"
    "#define ST_LANES_UP16(T, v, z, d) __builtin_shufflevector((v), (z), ST_LANE_UP(0, d, 16), ST_LANE_UP(1, d, 16), \\\n"
    "    ST_LANE_UP(2, d, 16), ST_LANE_UP(3, d, 16), ST_LANE_UP(4, d, 16), ST_LANE_UP(5, d, 16), \\\n"
    "    ST_LANE_UP(6, d, 16), ST_LANE_UP(7, d, 16), ST_LANE_UP(8, d, 16), ST_LANE_UP(9, d, 16), \\\n"
    "    ST_LANE_UP(10, d, 16), ST_LANE_UP(11, d, 16), ST_LANE_UP(12, d, 16), ST_LANE_UP(13, d, 16), \\\n"
    "    ST_LANE_UP(14, d, 16), ST_LANE_UP(15, d, 16))\n"
    "#endif\n"
    "/* a CPU's OpenCL (PoCL): while a direct look-back group scans its block from the cache\n"
    " * and streams it out, it prefetches the block it is likely to take next, so that the\n"
    " * reads of its next fold overlap these writes. STRATA_COMPUTE_UNITS groups run at\n"
    " * once (strata's runtime defines it), each taking the next free block as it ends, so\n"
    " * that block is this one's plus STRATA_COMPUTE_UNITS. */\n"
    "#ifndef STRATA_COMPUTE_UNITS\n#define STRATA_COMPUTE_UNITS 1\n#endif\n"
    "#if defined(__clang__) && defined(__OPENCL_VERSION__) && (defined(__x86_64__) || defined(__aarch64__))\n"
    "#define ST_PREFETCH(p) __builtin_prefetch(p)\n"
    "#else\n#define ST_PREFETCH(p) ((void)0)\n#endif\n"
    "/* before a loop whose body is a vector's worth of lanes: LLVM's loop vectoriser\n"
    " * leaves it to the SLP vectoriser */\n"
    "#if defined(__clang__)\n#define ST_SLP_ONLY _Pragma(\"clang loop vectorize(disable)\")\n"
    "#else\n#define ST_SLP_ONLY\n#endif\n";

static void stalled_glue(st_buf *out, const char *kernel) {
    st_buf_printf(out, "            snprintf(msg, msgcap, \"%s: work-group %%ld waited more than STRATA_LOOKBACK_SPINS reads for a \"\n"
                       "                     \"predecessor's flag and gave up, so the result is wrong (the device does not \"\n"
                       "                     \"run earlier work-groups alongside later ones)\", value);\n"
                       "            err = STRATA_LOOKBACK_STALLED;\n",
                  kernel);
}

const cg_algorithm cg_lookback_algorithm = {
    .prim = ST_PRIM_SCAN_LOOKBACK,
    .rule = "lookback",
    .rewrites = "scan",
    .emit = lookback_emit,
    .fuses_scatter = true,
    .int64_atomics = "/* the look-back packs a flag and a 32-bit value in one word */\n",
    .prelude = prelude,
    .fault_code = -9001,
    .fault_name = "STRATA_LOOKBACK_STALLED",
    .fault_when = "a look-back waited past its bound",
    .fault_contract = "a look-back that waits too long\n * STRATA_LOOKBACK_STALLED, ",
    .fault_glue = stalled_glue,
    .total_only = total_only,
};
