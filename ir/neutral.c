/* ir/neutral.c — the neutral elements of the operators strata knows: where
 * seeds are taken out (rewrite/seeds.c, seeds-as-neutral), and where a
 * chunk is folded in lanes that each start from the neutral element
 * (strategies/scan.c, parallel-reduce). */
#include "ir.h"

#include <string.h>

/* An integer of kind k with value v (two's complement bits for a signed one). */
static st_scalar int_of(st_scalar_kind k, int64_t v) {
    st_scalar s;
    memset(&s, 0, sizeof s);
    switch (k) {
    case ST_I8: s.i8 = (int8_t)v; break;
    case ST_U8: s.u8 = (uint8_t)v; break;
    case ST_I16: s.i16 = (int16_t)v; break;
    case ST_U16: s.u16 = (uint16_t)v; break;
    case ST_I32: s.i32 = (int32_t)v; break;
    case ST_U32: s.u32 = (uint32_t)v; break;
    case ST_U64: s.u64 = (uint64_t)v; break;
    default: s.i64 = v; break;
    }
    return s;
}

bool st_binop_neutral(st_binop b, st_scalar_kind k, st_scalar *out) {
    memset(out, 0, sizeof *out);
    bool fl = st_scalar_is_float(k), in = st_scalar_is_int(k), boolean = k == ST_BOOL;
    uint64_t max_pos = 0, max_neg = 0;
    if (in) st_scalar_int_limits(k, &max_pos, &max_neg);
    switch (b) {
    case ST_OP_ADD: return fl || in; /* 0, 0.0 */
    case ST_OP_BOR: case ST_OP_BXOR: return in;
    case ST_OP_OR: return boolean; /* false */
    case ST_OP_AND:
        out->b = true;
        return boolean;
    case ST_OP_MUL:
        if (k == ST_F32) out->f32 = 1.0f;
        else if (k == ST_F64) out->f64 = 1.0;
        else *out = int_of(k, 1);
        return fl || in;
    case ST_OP_BAND: *out = int_of(k, -1); return in;
    case ST_OP_MIN: case ST_OP_MAX: {
        bool up = b == ST_OP_MIN; /* min's neutral is the largest value */
        if (k == ST_F32) out->f32 = up ? __builtin_inff() : -__builtin_inff();
        else if (k == ST_F64) out->f64 = up ? __builtin_inf() : -__builtin_inf();
        else *out = int_of(k, up ? (int64_t)max_pos : max_neg ? (int64_t)(0 - max_neg) : 0);
        return fl || in;
    }
    default: return false;
    }
}

bool st_is_scalar_literal(const st_node *z, st_scalar_kind k, st_scalar e) {
    if (z->kind != ST_NODE_LIT) return false;
    if (k == ST_F32) return z->u.lit.f32 == e.f32;
    if (k == ST_F64) return z->u.lit.f64 == e.f64;
    return z->u.lit.bits == e.bits;
}

bool st_is_neutral_of(const st_node *z, st_binop b) {
    st_scalar e;
    return z->type && z->type->kind == ST_TYPE_SCALAR && st_binop_neutral(b, z->type->scalar, &e) &&
           st_is_scalar_literal(z, z->type->scalar, e);
}
