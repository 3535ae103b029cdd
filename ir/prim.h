/* ir/prim.h — internal to ir/: a primitive's descriptor and what its typing
 * rule needs. One row of ir/prim.c's table per primitive holds its public
 * part (st_prim_info: name, forms, how it prints), its properties as columns
 * and its typing hook; the hooks live by family in ir/prim_*.c, the table
 * names them, and every query reads a column rather than switching on the
 * primitive. */
#ifndef STRATA_IR_PRIM_H
#define STRATA_IR_PRIM_H

#include "ir.h"

/* A typing rule: the type of p applied to a[0..n-1] (n one of p's arities,
 * every value argument not a function) into *out; a[0] (or whichever part a
 * later error should point at) on success, NULL with err filled (err->arg
 * the offending argument) on failure. */
typedef const st_node *st_prim_type_fn(st_ctx *cx, st_prim p, uint32_t n, const st_node *const *a,
                                       const st_type **out, st_err *err);

/* The fold a primitive is, for st_fold_form_of: none, one in scan's forms
 * (op, [fold, [post,]] z, xs), or a sequential one (fold, z, xs). */
typedef enum st_fold_kind { ST_FOLD_NONE, ST_FOLD_OP, ST_FOLD_SEQ } st_fold_kind;

/* What st_prim_expect gives a function argument, from the data's element e
 * (or the data itself, d) and the accumulator acc. */
typedef enum st_prim_funs {
    ST_FUNS_COMBINE,   /* (e, e) -> e: reduce_by_index's operator */
    ST_FUNS_ELEMENT,   /* e -> ?: a map's function */
    ST_FUNS_PREDICATE, /* e -> bool: filter's, partition's */
    ST_FUNS_SCAN,      /* op (acc, acc) -> acc, fold (acc, e) -> acc, post (acc, e) -> ? */
    ST_FUNS_SEQ_FOLD,  /* (acc, e) -> acc */
    ST_FUNS_STATE,     /* d -> d: iterate's function */
    ST_FUNS_WHILE,     /* a while loop's condition d -> bool, then its body d -> d */
    ST_FUNS_COUNTED    /* (i64, d) -> d: a counted loop's body */
} st_prim_funs;

/* Whether a primitive is a view (st_is_view): a way of seeing its
 * arguments, each element computed where it is read. */
typedef enum st_prim_view {
    ST_VIEW_NONE,      /* it computes an array (a map in general, a fold, a scatter …) */
    ST_VIEW_ALWAYS,    /* split, join, zip, unzip, transpose, iota, replicate, get … */
    ST_VIEW_PLACED,    /* an address-space annotation: a view unless it places in memory */
    ST_VIEW_INDEX_MAP  /* a map: when it maps iota to a scalar computed from views */
} st_prim_view;

typedef struct st_prim_desc {
    st_prim_info info;        /* what the rest of strata reads (ir/nodes.h) */
    st_prim after;            /* with nsizes > 0: the primitive it is after its leading sizes */
    uint32_t nsizes;          /* its leading literal sizes (st_prim_after_sizes) */
    bool makes_kernels;       /* st_prim_makes_kernels */
    bool sizes_at_run_time;   /* st_prim_sizes_at_run_time */
    bool whole_array;         /* works over a whole array it is given (st_is_array_loop) */
    bool dest_first;          /* its data argument is the first after its sizes, not the last */
    bool innermost;           /* its functions work on its destination's innermost elements */
    st_fold_kind fold;        /* st_fold_form_of */
    st_prim_funs funs;        /* st_prim_expect */
    st_prim_view view;        /* st_is_view */
    st_prim_type_fn *type;    /* its typing rule */
} st_prim_desc;

const st_prim_desc *st_prim_desc_of(st_prim p);

/* The typing rules, by family. */
st_prim_type_fn st_type_map, st_type_iterate, st_type_loop, st_type_while;              /* prim_maps.c */
st_prim_type_fn st_type_split, st_type_join, st_type_zip, st_type_unzip, st_type_iota,
    st_type_replicate, st_type_transpose, st_type_get, st_type_placed;                 /* prim_layout.c */
st_prim_type_fn st_type_fold, st_type_scan_total, st_type_after_sizes, st_type_scatter,
    st_type_by_index;                                                                    /* prim_folds.c */
st_prim_type_fn st_type_filter, st_type_take, st_type_concat;                           /* prim_cuts.c */
st_prim_type_fn st_type_partition_by, st_type_sort, st_type_sort_by_key;               /* prim_sorts.c */

/* What the rules share (ir/prim_check.c, ir/node.c). */
const st_node *st_prim_check(st_ctx *cx, st_prim p, uint32_t n, const st_node *const *a, const st_type **out,
                             st_err *err); /* arity, value arguments, then the rule */
typedef struct st_tname { char s[160]; } st_tname;
st_tname st_type_text(const st_type *t);
st_tname st_size_text(const st_size *s);
__attribute__((format(printf, 3, 4))) const st_node *st_fail_arg(st_err *err, int arg, const char *fmt, ...);
const char *st_prim_name(st_prim p);
/* Does a function of type f take `params`? A function expected to take one
 * tuple may take its components as separate parameters instead. */
bool st_fun_takes(const st_type *f, const st_type *const *params, int np);
const st_node *st_fun_mismatch(const st_node *f, st_prim p, int arg, const st_type *const *params, int np,
                               st_err *err);
const st_node *st_need_array(const st_node *a, st_prim p, int arg, const char *what, st_err *err);
/* A length argument: an integer expression that is a size, not negative. */
const st_size *st_length_arg(st_ctx *cx, st_prim p, const st_node *n, int arg, st_err *err);

#endif
