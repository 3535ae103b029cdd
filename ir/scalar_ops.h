/* ir/scalar_ops.h — internal to ir/: the meaning of scalar operators, shared
 * by the interpreter and anything that folds constants. Integer arithmetic
 * wraps like C's fixed-width unsigned types; shifts take their count modulo
 * the width, as OpenCL C does; float arithmetic is done in the type's own
 * width; conversions to integers truncate and saturate, NaN becoming 0. */
#ifndef STRATA_IR_SCALAR_OPS_H
#define STRATA_IR_SCALAR_OPS_H

#include "scalar_inline.h"

/* *ok is set false (and the result is 0) on an integer division by zero. */
st_scalar st_scalar_binop(st_binop op, st_scalar_kind k, st_scalar a, st_scalar b, bool *ok);
st_scalar st_scalar_unop(st_unop op, st_scalar_kind k, st_scalar a);
st_scalar st_scalar_convert(st_scalar_kind to, st_scalar_kind from, st_scalar a);
/* Is op defined on scalars of kind k? Which kind does it produce? */
bool st_binop_accepts(st_binop op, st_scalar_kind k);
st_scalar_kind st_binop_result(st_binop op, st_scalar_kind k);

/* The unsigned key whose order is sort's order of numbers of kind k: an
 * unsigned integer itself; a signed one with its sign bit flipped; a float's
 * bits with the sign bit flipped where it is clear and every bit flipped
 * where it is set, so that -nan < -inf < … < -0 < +0 < … < inf < nan.
 * strategies/sort.c's radix-sort builds the same from its digits. */
uint64_t st_scalar_order_key(st_scalar_kind k, st_scalar v);

/* st_scalar_load and st_scalar_store, which read and write one scalar at
 * p, a buffer element of kind k, are in scalar_inline.h. */

#endif
