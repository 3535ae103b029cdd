/* codegen/cg_lookback.h — internal to the look-back scan (cg_lookback*.c):
 * what its files share. cg_lookback.c says how the scan works and which file
 * emits which part of its kernel. */
#ifndef STRATA_CG_LOOKBACK_H
#define STRATA_CG_LOOKBACK_H

#include "cg.h"

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
    const cg_place *sink;      /* LOAD = direct, a scatter: [groups·line]t, see cg_lb_sink_of */
    const cg_place *total;     /* where scanTotal of this scan lives, or NULL */
} lookback;

/* Held up to M = 32 (32 registers of elements; more would spill at WG =
 * 1024, whose work-items have 64 registers each). */
enum { HELD_M = 32 };

/* ---- the value of a C lvalue, applying functions ---- */

static inline cg_value at(cg *g, const st_type *t, const char *lvalue) { return cg_fields_of(g, t, lvalue); }

static inline void set(cg *g, const st_type *t, const char *lvalue, const cg_value *v) {
    cg_value to = at(g, t, lvalue);
    cg_assign(g, &to, v);
}

/* lvalue = op(a, b), both accumulators named by C lvalues */
static inline void combine(cg *g, const lookback *lb, const char *lvalue, const char *a, const char *b) {
    cg_value args[2] = {at(g, lb->acc, a), at(g, lb->acc, b)};
    cg_value r = cg_apply(g, lb->op, 2, args, lb->env);
    set(g, lb->acc, lvalue, &r);
}

static inline const char *buffer_of(cg *g, const cg_place *p) {
    cg_use_buffer(g, p->mem.buffer, true);
    return p->mem.base;
}

/* A work-item's M elements as `chains` runs of M / chains, folded side by
 * side: a fold is a chain of dependent operations, and independent chains
 * keep a CPU's pipeline full (associativity is all this needs). */
static inline int64_t chains_of(const lookback *lb) { return lb->m % 4 == 0 ? 4 : lb->m % 2 == 0 ? 2 : 1; }

/* Lanes of one 64-byte vector register (AVX-512; two of AVX2's). */
static inline int64_t lanes_of(const lookback *lb) {
    st_scalar_kind k = lb->acc->scalar;
    return k == ST_I64 || k == ST_U64 || k == ST_F64 ? 8 : 16;
}

/* ---- cg_lookback_phases.c: LOAD = local's block in local memory, and what
 * every load shares (the group's scan, storing an element) ---- */

int cg_lb_pad_shift(const lookback *lb);
long long cg_lb_padded_length(const lookback *lb, int64_t count);
void cg_lb_padded_index(cg *g, const lookback *lb);
void cg_lb_load_block(cg *g, const lookback *lb, const char *n);
void cg_lb_thread_scan(cg *g, const lookback *lb, const char *n, const char *v);
void cg_lb_group_scan(cg *g, const lookback *lb);
void cg_lb_distribute(cg *g, const lookback *lb, const char *v);
const cg_place *cg_lb_sink_of(cg *g, const lookback *lb, const cg_place *p, const cg_scatter *scatter);
void cg_lb_store_one(cg *g, const lookback *lb, const cg_value *acc, const cg_value *x, const cg_place *p,
                     const cg_scatter *scatter);
void cg_lb_store_block(cg *g, const lookback *lb, const char *n, const char *v, const cg_place *p,
                       const cg_scatter *scatter);

/* ---- cg_lookback_look.c: the look-back itself ---- */

/* The group publishes its aggregate, looks back over its predecessors for
 * its prefix (lb_prefix), and publishes its inclusive prefix: LW = 1 by
 * work-item 0, else LW work-items at once. */
void cg_lb_look_back(cg *g, const lookback *lb);

/* ---- cg_lookback_held.c: LOAD = local, held in registers ---- */

int64_t cg_lb_rows_of(const lookback *lb, bool in_place);
void cg_lb_held_load(cg *g, const lookback *lb, const char *n);
void cg_lb_held_store(cg *g, const lookback *lb, const char *n, const char *v, const char *u, const cg_place *p,
                      const cg_scatter *scatter);

/* ---- cg_lookback_direct.c: LOAD = direct ---- */

bool cg_lb_commutative_op(const lookback *lb, st_binop *out);
void cg_lb_block_aggregate(cg *g, const lookback *lb);
void cg_lb_thread_reduce(cg *g, const lookback *lb, const char *n);
void cg_lb_thread_scan_store(cg *g, const lookback *lb, const char *n, const cg_place *p, const cg_scatter *scatter);

/* ---- cg_lookback_vector.c: LOAD = direct's scan pass in vector registers ---- */

void cg_lb_vector_scan_store(cg *g, const lookback *lb, const char *n, const cg_place *p, const cg_scatter *scatter);
void cg_lb_compaction_store(cg *g, const lookback *lb, const char *n, const cg_place *p, const cg_scatter *scatter);

#endif
