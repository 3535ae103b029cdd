/* ir/value.h — internal to ir/: element access on runtime values, shared by
 * the interpreter, the input binder and the .npy reader. */
#ifndef STRATA_IR_VALUE_H
#define STRATA_IR_VALUE_H

#include "ir.h"

enum { ST_MAX_RANK = 16 };

/* Elements in one ARRAY leaf (false on overflow); its size in bytes. */
bool st_leaf_count(const st_value *v, int64_t *count);
size_t st_leaf_bytes(const st_value *v);
/* Bytes of one element along the outer dimension of an ARRAY leaf. */
size_t st_row_bytes(const st_value *v);
/* Element i (not checked) as a view into v; tuples need an items array from a. */
bool st_value_elem(st_arena *a, const st_value *v, int64_t i, st_value *out, st_err *err);
/* Copy v into element i of dst (shapes agree, as types guarantee). */
void st_value_store(st_value *dst, int64_t i, const st_value *v);
/* Fresh zeroed storage for `rows` elements shaped like the elements of the
 * array (or tuple of arrays) like. */
bool st_value_alloc_rows(st_arena *a, const st_value *like, int64_t rows, st_value *out, st_err *err);
/* Copy src into dst's storage (same shape). */
void st_value_copy_into(st_value *dst, const st_value *src);
/* A deep copy of v in a: its dimensions, elements and tuples, so that it
 * outlives whatever arena v's parts were in. */
bool st_value_clone(st_arena *a, const st_value *v, st_value *out, st_err *err);

#endif
