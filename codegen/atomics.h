/* codegen/atomics.h — the device capabilities a histogram's atomics depend
 * on: which reduce_by_index operators a device does as one hardware atomic,
 * and when a compare-and-swap loop fits; and the word a scatter's claims
 * take.
 *
 * codegen writes the atomics from these answers. The subhistogram rule
 * (strategies/histogram.c) is the one place above codegen/ that reads them:
 * a rule's condition holds every limit of what codegen can run, so the rule
 * refuses, at rewrite time, an ATOMIC the device cannot do. The type checker
 * does not: ATOMIC does not change what a program means (the interpreter
 * ignores it), so a hand-written subhistograms with an ATOMIC its operator
 * lacks is a valid program that codegen refuses at its line:col. */
#ifndef ST_ATOMICS_H
#define ST_ATOMICS_H

#include "ir/ir.h"

/* The hardware atomic of a reduce_by_index operator on values of type t:
 * + min max & | ^ (written bare or as a lambda of its two parameters) on
 * one 32- or 64-bit integer; false otherwise, and then *out is untouched. */
bool st_hist_hardware_op(const st_node *op, const st_type *t, st_binop *out);
/* A compare-and-swap loop works on one 32- or 64-bit scalar. */
bool st_hist_cas_fits(const st_type *t);
/* ATOMIC = auto made definite: add where the hardware has it, else cas
 * where one word holds the value, else xchg. */
st_hist_atomic st_hist_atomic_for(const st_node *op, const st_type *t);

/* A scatter's claims (codegen/cg_winners.c) are an atomic max of an element
 * index: on a 32-bit int where the scatter has at most this many elements
 * (atomic_max, core in OpenCL 1.1 and on every device, atomicMax in CUDA),
 * else on a 64-bit long (atom_max: cl_khr_int64_extended_atomics, which
 * strata's devices have, as the look-back's 64-bit words need its base
 * atomics; CUDA's atomicMax on long long). */
#define ST_CLAIM_NARROW_MOST (INT64_C(1) << 31)

#endif
