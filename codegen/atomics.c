/* codegen/atomics.c — the device capabilities of a histogram's atomics
 * (codegen/atomics.h says who reads them and why the type checker does not). */
#include "atomics.h"

static bool is_param(const st_node *n, const st_node *p) { return n->kind == ST_NODE_VAR && n->u.name == p->u.name; }

bool st_hist_hardware_op(const st_node *op, const st_type *t, st_binop *out) {
    if (t->kind != ST_TYPE_SCALAR || !(t->scalar == ST_I32 || t->scalar == ST_U32 || t->scalar == ST_I64 || t->scalar == ST_U64))
        return false;
    st_binop b;
    if (op->kind == ST_NODE_OPFN) {
        b = op->u.binop;
    } else if (op->kind == ST_NODE_LAMBDA && st_lambda_nparams(op) == 2 && st_lambda_body(op)->kind == ST_NODE_BINOP) {
        const st_node *body = st_lambda_body(op);
        bool in_order = is_param(body->kids[0], op->kids[0]) && is_param(body->kids[1], op->kids[1]);
        bool swapped = is_param(body->kids[0], op->kids[1]) && is_param(body->kids[1], op->kids[0]);
        if (!in_order && !swapped) return false;
        b = body->u.binop;
    } else {
        return false;
    }
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
