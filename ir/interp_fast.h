/* ir/interp_fast.h — internal to ir/: the reference interpreter's fast
 * path. A function of scalars (a lambda or an operator) is compiled once to
 * a small register code over raw scalars; map, reduce, scan and
 * reduce_by_index / scatter over arrays of scalars (or zips of them) then
 * run it straight over the arrays' data, with no value built and no
 * variable looked up per element. It computes exactly what the generic
 * path of interp.c does (the same operations in the same order, floats
 * combined in the same tree); anything it does not take, it declines, and
 * the generic path runs. */
#ifndef STRATA_IR_INTERP_FAST_H
#define STRATA_IR_INTERP_FAST_H

#include "ir.h"

/* The functions compiled so far in one st_eval, by node. */
typedef struct st_fast st_fast;
typedef struct st_fast_fn st_fast_fn;

st_fast *st_fast_new(void); /* NULL if out of memory */
void st_fast_free(st_fast *F);

/* fn (a lambda or an operator) compiled, or NULL where the compiler does
 * not take it (which is remembered) or memory ran out. */
const st_fast_fn *st_fast_compile(st_fast *F, const st_node *fn);

/* Where a compiled function's free variables get their values: the
 * interpreter's innermost binding of var now; false when it has none. */
typedef struct st_fast_scope {
    bool (*lookup)(void *ctx, const st_node *var, st_value *out);
    void *ctx;
} st_fast_scope;

typedef enum st_fast_status {
    ST_FAST_DONE,     /* the result is written */
    ST_FAST_DECLINED, /* nothing done: run the generic path */
    ST_FAST_FAULT     /* a run-time error, in the fault */
} st_fast_status;

typedef enum st_fast_fault_kind {
    ST_FAST_DIV_ZERO, /* at node */
    ST_FAST_INDEX,    /* at node (a get): index of index_kind out of 0 .. length */
    ST_FAST_DISTINCT, /* scatterDistinct: element elem writes place again */
    ST_FAST_MEMORY
} st_fast_fault_kind;

typedef struct st_fast_fault {
    st_fast_fault_kind kind;
    const st_node *node;
    st_scalar_kind index_kind;
    st_scalar index;
    int64_t length, elem, place;
} st_fast_fault;

/* replicate's and scratch's: every element of out (allocated) is v, a
 * scalar or a tuple of scalars. */
st_fast_status st_fast_fill(st_value *out, const st_value *v);

/* map(f, xs) into out (allocated, of xs's length). */
st_fast_status st_fast_map(const st_fast_fn *f, const st_fast_scope *sc, const st_value *xs, st_value *out,
                           st_fast_fault *fault);

/* A reduce or scan as interp.c's fold: step(acc, x) from z, post(next, x)
 * to the output when there is one; tree: floats combined in interp.c's
 * tree (tree_reduce, tree_scan) rather than left to right. out: a reduce's
 * accumulator (allocated of z's type), or a scan's array (of xs's length). */
typedef struct st_fast_fold {
    const st_fast_fn *step, *post;
    const st_value *z, *xs;
    bool keep, exclusive, tree;
} st_fast_fold;
st_fast_status st_fast_fold_run(const st_fast_fold *fo, const st_fast_scope *sc, st_value *out,
                                st_fast_fault *fault);

/* scatter(flat, is, vs) or, with op, reduce_by_index; flat is the
 * destination (its dims[0] elements, or dims[0] * dims[1] for the 2-D
 * forms, whose indices are (row, column) pairs), already holding its
 * initial values. distinct: scatterDistinct's check; tree: a float
 * histogram's buckets combined as interp.c's tree_histogram does. */
typedef struct st_fast_scatter {
    const st_fast_fn *op;
    st_value *flat;
    const st_value *is, *vs;
    int64_t dims[2];
    bool two, distinct, tree;
} st_fast_scatter;
st_fast_status st_fast_scatter_run(const st_fast_scatter *sc_, const st_fast_scope *sc, st_fast_fault *fault);

#endif
