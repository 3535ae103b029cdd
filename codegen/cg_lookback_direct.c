/* codegen/cg_lookback_direct.c — scanLookback with LOAD = direct: each
 * work-item reads its own M elements, folds them in runs side by side, and
 * after the look-back folds them again from its prefix, storing each result
 * as it goes (the scalar loop; cg_lookback_vector.c's vector loops where
 * they apply). */
#include "cg_lookback.h"

/* Is the operator commutative as well as associative: + * min max & | ^
 * on one number, written bare or as a lambda of its two parameters? Then
 * a run may be folded in interleaved lanes (below). */
bool cg_lb_commutative_op(const lookback *lb, st_binop *out) {
    if (lb->acc->kind != ST_TYPE_SCALAR || lb->acc->scalar == ST_BOOL) return false;
    st_binop b;
    if (!st_fn_binop(lb->op, &b)) return false;
    *out = b;
    return b == ST_OP_ADD || b == ST_OP_MUL || b == ST_OP_MIN || b == ST_OP_MAX || b == ST_OP_BAND ||
           b == ST_OP_BOR || b == ST_OP_BXOR;
}

static bool commutative(const lookback *lb) {
    st_binop b;
    return cg_lb_commutative_op(lb, &b);
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
void cg_lb_block_aggregate(cg *g, const lookback *lb) {
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
void cg_lb_thread_reduce(cg *g, const lookback *lb, const char *n) {
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
        cg_lb_store_one(g, lb, &y, &x, p, scatter);
        cg_close(g);
        cg_close(g);
    }
    cg_close(g);
}

/* Each work-item folds its runs again, each from its prefix, and stores
 * each result as it goes. */
void cg_lb_thread_scan_store(cg *g, const lookback *lb, const char *n, const cg_place *p, const cg_scatter *scatter) {
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
    cg_lb_vector_scan_store(g, lb, n, p, scatter);
    cg_lb_compaction_store(g, lb, n, p, scatter);
    /* a whole block's loop has no test of the array's end in it */
    cg_open(g, "if (!lb_vec && lb_full) {");
    scalar_scan_store(g, lb, NULL, p, scatter);
    g->indent--;
    cg_line(g, "} else if (!lb_vec) {");
    g->indent++;
    scalar_scan_store(g, lb, n, p, scatter);
    cg_close(g);
}
