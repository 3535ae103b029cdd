/* ir/scalar_inline.h — internal to ir/: the meaning of loading, storing and
 * combining scalars, as inline functions. scalar.c's st_scalar_binop,
 * st_scalar_load and st_scalar_store are these; the interpreter's compiled
 * functions (interp_fast.c) call them with a constant operator and kind,
 * which the compiler folds to the one operation, so that both compute the
 * same thing from the same text. */
#ifndef STRATA_IR_SCALAR_INLINE_H
#define STRATA_IR_SCALAR_INLINE_H

#include "ir.h"

#include <math.h>
#include <string.h>

#define ST_INLINE static inline __attribute__((always_inline))

/* bits of a kind */
ST_INLINE int st_kind_bits(st_scalar_kind k) {
    switch (k) {
    case ST_BOOL: case ST_I8: case ST_U8: return 8;
    case ST_I16: case ST_U16: return 16;
    case ST_I32: case ST_U32: case ST_F32: return 32;
    default: return 64;
    }
}

ST_INLINE bool st_kind_signed(st_scalar_kind k) { return k == ST_I32 || k == ST_I64 || k == ST_I8 || k == ST_I16; }

ST_INLINE st_scalar st_scalar_load(st_scalar_kind k, const void *p) {
    st_scalar v = {.bits = 0};
    switch (k) {
    case ST_BOOL: v.b = *(const unsigned char *)p != 0; break;
    case ST_I8: case ST_U8: memcpy(&v, p, 1); break;
    case ST_I16: case ST_U16: memcpy(&v, p, 2); break;
    case ST_I32: case ST_U32: case ST_F32: memcpy(&v, p, 4); break;
    default: memcpy(&v, p, 8); break;
    }
    return v;
}

ST_INLINE void st_scalar_store(st_scalar_kind k, void *p, st_scalar v) {
    switch (k) {
    case ST_BOOL: *(unsigned char *)p = v.b ? 1 : 0; break;
    case ST_I8: case ST_U8: memcpy(p, &v, 1); break;
    case ST_I16: case ST_U16: memcpy(p, &v, 2); break;
    case ST_I32: case ST_U32: case ST_F32: memcpy(p, &v, 4); break;
    default: memcpy(p, &v, 8); break;
    }
}

/* the value as raw 64 bits, sign- or zero-extended: what integer conversion wraps from */
ST_INLINE uint64_t st_int_bits(st_scalar_kind k, st_scalar v) {
    switch (k) {
    case ST_BOOL: return v.b;
    case ST_I8: return (uint64_t)(int64_t)v.i8;
    case ST_U8: return v.u8;
    case ST_I16: return (uint64_t)(int64_t)v.i16;
    case ST_U16: return v.u16;
    case ST_I32: return (uint64_t)(int64_t)v.i32;
    case ST_U32: return v.u32;
    default: return v.u64;
    }
}

ST_INLINE st_scalar st_from_bits(st_scalar_kind k, uint64_t bits) {
    st_scalar r = {.bits = 0};
    switch (k) {
    case ST_BOOL: r.b = bits != 0; break;
    case ST_I8: r.i8 = (int8_t)(uint8_t)bits; break;
    case ST_U8: r.u8 = (uint8_t)bits; break;
    case ST_I16: r.i16 = (int16_t)(uint16_t)bits; break;
    case ST_U16: r.u16 = (uint16_t)bits; break;
    case ST_I32: r.i32 = (int32_t)(uint32_t)bits; break;
    case ST_U32: r.u32 = (uint32_t)bits; break;
    case ST_I64: r.i64 = (int64_t)bits; break;
    default: r.u64 = bits; break;
    }
    return r;
}

/* x ** y on an integer type's bits, wrapping as * does: by squaring, modulo
 * 2^64 (the type's own width keeps the low bits). A negative y (signed):
 * 1 / x^|y| rounded toward zero, 0 unless x is 1 or -1 (0 ** -1 too). */
static inline uint64_t st_int_pow(uint64_t x, uint64_t y, bool negative_y) {
    if (negative_y) return x == 1 ? 1 : x == UINT64_MAX ? ((y & 1) ? UINT64_MAX : 1) : 0;
    uint64_t r = 1;
    for (; y; y >>= 1, x *= x)
        if (y & 1) r *= x;
    return r;
}

ST_INLINE st_scalar st_int_binop(st_binop op, st_scalar_kind k, st_scalar a, st_scalar b, bool *ok) {
    uint64_t x = st_int_bits(k, a), y = st_int_bits(k, b);
    bool sgn = st_kind_signed(k);
    int64_t sx = (int64_t)x, sy = (int64_t)y; /* sign-extended for signed kinds */
    int w = st_kind_bits(k);
    st_scalar r = {.bits = 0};
    int cmp = sgn ? (sx < sy ? -1 : sx > sy) : (x < y ? -1 : x > y);
    switch (op) {
    case ST_OP_ADD: return st_from_bits(k, x + y);
    case ST_OP_SUB: return st_from_bits(k, x - y);
    case ST_OP_MUL: return st_from_bits(k, x * y);
    case ST_OP_DIV:
    case ST_OP_MOD: {
        if (y == 0) return *ok = false, r;
        int64_t min = w == 32 ? INT32_MIN : INT64_MIN;
        if (sgn) {
            if (sx == min && sy == -1) return st_from_bits(k, op == ST_OP_DIV ? x : 0);
            return st_from_bits(k, (uint64_t)(op == ST_OP_DIV ? sx / sy : sx % sy));
        }
        return st_from_bits(k, op == ST_OP_DIV ? x / y : x % y);
    }
    case ST_OP_EQ: r.b = x == y; return r;
    case ST_OP_NE: r.b = x != y; return r;
    case ST_OP_LT: r.b = cmp < 0; return r;
    case ST_OP_LE: r.b = cmp <= 0; return r;
    case ST_OP_GT: r.b = cmp > 0; return r;
    case ST_OP_GE: r.b = cmp >= 0; return r;
    case ST_OP_BAND: return st_from_bits(k, x & y);
    case ST_OP_BOR: return st_from_bits(k, x | y);
    case ST_OP_BXOR: return st_from_bits(k, x ^ y);
    case ST_OP_SHL: return st_from_bits(k, x << (y & (uint64_t)(w - 1)));
    case ST_OP_SHR: {
        unsigned s = (unsigned)(y & (uint64_t)(w - 1));
        if (!sgn) return st_from_bits(k, x >> s); /* x is zero-extended */
        /* arithmetic shift without relying on implementation-defined >> */
        uint64_t shifted = x >> s;
        if (sx < 0 && s) shifted |= ~(UINT64_MAX >> s);
        return st_from_bits(k, shifted);
    }
    case ST_OP_MIN: return cmp <= 0 ? a : b;
    case ST_OP_MAX: return cmp >= 0 ? a : b;
    case ST_OP_POW: return st_from_bits(k, st_int_pow(sgn ? (uint64_t)sx : x, y, sgn && sy < 0));
    default: return r;
    }
}

#define ST_FLOAT_BINOP(T, field, fmodf_, fminf_, fmaxf_, powf_, atan2f_)                \
    ST_INLINE st_scalar st_##field##_binop(st_binop op, T x, T y) {                     \
        st_scalar r = {.bits = 0};                                                      \
        switch (op) {                                                                   \
        case ST_OP_ADD: r.field = x + y; break;                                         \
        case ST_OP_SUB: r.field = x - y; break;                                         \
        case ST_OP_MUL: r.field = x * y; break;                                         \
        case ST_OP_DIV: r.field = x / y; break;                                         \
        case ST_OP_MOD: r.field = fmodf_(x, y); break;                                  \
        case ST_OP_MIN: r.field = fminf_(x, y); break;                                  \
        case ST_OP_MAX: r.field = fmaxf_(x, y); break;                                  \
        case ST_OP_POW: r.field = powf_(x, y); break;                                   \
        case ST_OP_ATAN2: r.field = atan2f_(x, y); break;                               \
        case ST_OP_EQ: r.b = x == y; break;                                             \
        case ST_OP_NE: r.b = x != y; break;                                             \
        case ST_OP_LT: r.b = x < y; break;                                              \
        case ST_OP_LE: r.b = x <= y; break;                                             \
        case ST_OP_GT: r.b = x > y; break;                                              \
        case ST_OP_GE: r.b = x >= y; break;                                             \
        default: break;                                                                 \
        }                                                                               \
        return r;                                                                       \
    }
ST_FLOAT_BINOP(float, f32, fmodf, fminf, fmaxf, powf, atan2f)
ST_FLOAT_BINOP(double, f64, fmod, fmin, fmax, pow, atan2)
#undef ST_FLOAT_BINOP

/* *ok is set false (and the result is 0) on an integer division by zero. */
ST_INLINE st_scalar st_scalar_binop_inline(st_binop op, st_scalar_kind k, st_scalar a, st_scalar b, bool *ok) {
    st_scalar r = {.bits = 0};
    switch (k) {
    case ST_F32: return st_f32_binop(op, a.f32, b.f32);
    case ST_F64: return st_f64_binop(op, a.f64, b.f64);
    case ST_BOOL:
        switch (op) {
        case ST_OP_EQ: r.b = a.b == b.b; break;
        case ST_OP_NE: case ST_OP_BXOR: r.b = a.b != b.b; break;
        case ST_OP_AND: case ST_OP_BAND: r.b = a.b && b.b; break;
        case ST_OP_OR: case ST_OP_BOR: r.b = a.b || b.b; break;
        default: break;
        }
        return r;
    default: return st_int_binop(op, k, a, b, ok);
    }
}

#endif
