/* codegen/cg_lookback_look.c — the look-back of scanLookback's kernel
 * (step 5 in cg_lookback.c): a group publishes its aggregate, reads its
 * predecessors' descriptors back to the first inclusive prefix, and
 * publishes its own. cg_lookback.c's header says how the memory is ordered
 * and how a wait is bounded. */
#include "cg_lookback.h"

/* The flags, as the kernels name them (LB_X LB_A LB_P, defined in the
 * prelude cg_glue.c writes): no value yet, the group's aggregate, its
 * inclusive prefix. */
typedef enum flag { FLAG_A, FLAG_P } flag;

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
        cg_lb_block_aggregate(g, lb);
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

void cg_lb_look_back(cg *g, const lookback *lb) {
    if (lb->lw > 1) look_back_wide(g, lb);
    else look_back_one(g, lb);
}
