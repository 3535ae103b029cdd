/* codegen/atomics.c — the device capabilities of a histogram's atomics
 * (codegen/atomics.h says who reads them and why the type checker does not). */
#include "atomics.h"

bool st_hist_hardware_op(const st_node *op, const st_type *t, st_binop *out) {
    if (t->kind != ST_TYPE_SCALAR || !(t->scalar == ST_I32 || t->scalar == ST_U32 || t->scalar == ST_I64 || t->scalar == ST_U64))
        return false;
    st_binop b;
    if (!st_fn_binop(op, &b)) return false;
    switch (b) {
    case ST_OP_ADD: case ST_OP_MIN: case ST_OP_MAX: case ST_OP_BAND: case ST_OP_BOR: case ST_OP_BXOR:
        *out = b;
        return true;
    default: return false;
    }
}

bool st_hist_cas_fits(const st_type *t) {
    return t->kind == ST_TYPE_SCALAR && t->scalar != ST_BOOL;
}

st_hist_atomic st_hist_atomic_for(const st_node *op, const st_type *t) {
    st_binop b;
    if (st_hist_hardware_op(op, t, &b)) return ST_HIST_ADD;
    return st_hist_cas_fits(t) ? ST_HIST_CAS : ST_HIST_XCHG;
}
