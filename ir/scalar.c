/* ir/scalar.c — scalar kinds: names, sizes, text I/O and operators. */
#include "scalar_ops.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[ST_SCALAR_KIND_COUNT] = {"bool", "i32", "u32", "i64", "u64", "f32",
                                                        "f64",  "i8",  "u8",  "i16", "u16"};
static const size_t sizes[ST_SCALAR_KIND_COUNT] = {1, 4, 4, 8, 8, 4, 8, 1, 1, 2, 2};

const char *st_scalar_name(st_scalar_kind k) { return names[k]; }
size_t st_scalar_size(st_scalar_kind k) { return sizes[k]; }

bool st_scalar_from_name(const char *name, size_t len, st_scalar_kind *out) {
    for (int k = 0; k < ST_SCALAR_KIND_COUNT; k++)
        if (strlen(names[k]) == len && memcmp(names[k], name, len) == 0)
            return (*out = (st_scalar_kind)k), true;
    return false;
}

bool st_scalar_is_int(st_scalar_kind k) { return (k >= ST_I32 && k <= ST_U64) || k >= ST_I8; }
bool st_scalar_is_signed(st_scalar_kind k) { return st_kind_signed(k); }

st_scalar_kind st_scalar_unsigned(st_scalar_kind k) {
    switch (sizes[k]) {
    case 1: return ST_U8;
    case 2: return ST_U16;
    case 4: return ST_U32;
    default: return ST_U64;
    }
}


void st_scalar_int_limits(st_scalar_kind k, uint64_t *max_pos, uint64_t *max_neg) {
    int w = st_kind_bits(k);
    uint64_t all = w == 64 ? UINT64_MAX : ((uint64_t)1 << w) - 1;
    if (st_scalar_is_signed(k)) {
        *max_pos = all >> 1;
        *max_neg = (all >> 1) + 1;
    } else {
        *max_pos = all;
        *max_neg = 0;
    }
}
bool st_scalar_is_float(st_scalar_kind k) { return k == ST_F32 || k == ST_F64; }

/* ---- conversions ---- */

double st_scalar_as_f64(st_scalar_kind k, st_scalar v) {
    switch (k) {
    case ST_BOOL: return v.b;
    case ST_I8: return v.i8;
    case ST_U8: return v.u8;
    case ST_I16: return v.i16;
    case ST_U16: return v.u16;
    case ST_I32: return v.i32;
    case ST_U32: return v.u32;
    case ST_I64: return (double)v.i64;
    case ST_U64: return (double)v.u64;
    case ST_F32: return v.f32;
    default: return v.f64;
    }
}

bool st_scalar_as_i64(st_scalar_kind k, st_scalar v, int64_t *out) {
    switch (k) {
    case ST_BOOL: *out = v.b; return true;
    case ST_I8: *out = v.i8; return true;
    case ST_U8: *out = v.u8; return true;
    case ST_I16: *out = v.i16; return true;
    case ST_U16: *out = v.u16; return true;
    case ST_I32: *out = v.i32; return true;
    case ST_U32: *out = v.u32; return true;
    case ST_I64: *out = v.i64; return true;
    case ST_U64: *out = (int64_t)v.u64; return v.u64 <= INT64_MAX;
    default: {
        double d = st_scalar_as_f64(k, v);
        if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return false;
        *out = (int64_t)d;
        return true;
    }
    }
}

static st_scalar float_to_int(st_scalar_kind to, double d) {
    if (st_kind_bits(to) < 32) { /* every narrow value is exact in a double: saturate, then truncate */
        uint64_t max_pos, max_neg;
        st_scalar_int_limits(to, &max_pos, &max_neg);
        double c = isnan(d) ? 0 : d < -(double)max_neg ? -(double)max_neg : d > (double)max_pos ? (double)max_pos : d;
        return st_from_bits(to, (uint64_t)(int64_t)c);
    }
    double lo, hi; /* hi is the first value past the range */
    switch (to) {
    case ST_I32: lo = -2147483648.0; hi = 2147483648.0; break;
    case ST_U32: lo = 0; hi = 4294967296.0; break;
    case ST_I64: lo = -9223372036854775808.0; hi = 9223372036854775808.0; break;
    default: lo = 0; hi = 18446744073709551616.0; break;
    }
    st_scalar r = {.bits = 0};
    if (isnan(d)) return r;
    bool low = d < lo, high = d >= hi;
    switch (to) {
    case ST_I32: r.i32 = low ? INT32_MIN : high ? INT32_MAX : (int32_t)d; break;
    case ST_U32: r.u32 = low ? 0 : high ? UINT32_MAX : (uint32_t)d; break;
    case ST_I64: r.i64 = low ? INT64_MIN : high ? INT64_MAX : (int64_t)d; break;
    default: r.u64 = low ? 0 : high ? UINT64_MAX : (uint64_t)d; break;
    }
    return r;
}

st_scalar st_scalar_convert(st_scalar_kind to, st_scalar_kind from, st_scalar a) {
    st_scalar r = {.bits = 0};
    if (to == from) return a;
    if (to == ST_BOOL) {
        r.b = st_scalar_is_float(from) ? st_scalar_as_f64(from, a) != 0.0 : st_int_bits(from, a) != 0;
        return r;
    }
    if (st_scalar_is_float(to)) {
        if (from == ST_U64) {
            if (to == ST_F32) r.f32 = (float)a.u64; else r.f64 = (double)a.u64;
        } else if (from == ST_I64) {
            if (to == ST_F32) r.f32 = (float)a.i64; else r.f64 = (double)a.i64;
        } else if (to == ST_F32) {
            r.f32 = (float)st_scalar_as_f64(from, a);
        } else {
            r.f64 = st_scalar_as_f64(from, a);
        }
        return r;
    }
    if (st_scalar_is_float(from)) return float_to_int(to, st_scalar_as_f64(from, a));
    return st_from_bits(to, st_int_bits(from, a));
}

/* ---- operators ---- */

st_scalar st_scalar_binop(st_binop op, st_scalar_kind k, st_scalar a, st_scalar b, bool *ok) {
    return st_scalar_binop_inline(op, k, a, b, ok);
}

bool st_binop_accepts(st_binop op, st_scalar_kind k) {
    switch (op) {
    case ST_OP_ADD: case ST_OP_SUB: case ST_OP_MUL: case ST_OP_DIV: case ST_OP_MOD:
    case ST_OP_LT: case ST_OP_LE: case ST_OP_GT: case ST_OP_GE:
    case ST_OP_MIN: case ST_OP_MAX: case ST_OP_POW:
        return k != ST_BOOL;
    case ST_OP_ATAN2: return st_scalar_is_float(k);
    case ST_OP_EQ: case ST_OP_NE: return true;
    case ST_OP_AND: case ST_OP_OR: return k == ST_BOOL;
    case ST_OP_BAND: case ST_OP_BOR: case ST_OP_BXOR: return !st_scalar_is_float(k);
    case ST_OP_SHL: case ST_OP_SHR: return st_scalar_is_int(k);
    default: return false;
    }
}

st_scalar_kind st_binop_result(st_binop op, st_scalar_kind k) {
    switch (op) {
    case ST_OP_EQ: case ST_OP_NE: case ST_OP_LT: case ST_OP_LE: case ST_OP_GT: case ST_OP_GE:
        return ST_BOOL;
    default: return k;
    }
}

/* The functions, by name, and what they compute in f32 and in f64 (C's
 * libm: the reference; a device's may differ by a few ulps, which the
 * check's magnitudes allow: ir/magnitude.c). */
typedef struct unop_function {
    const char *name;
    float (*f32)(float);
    double (*f64)(double);
} unop_function;

static const unop_function unop_functions[ST_UNOP_COUNT] = {
    [ST_OP_SQRT] = {"sqrt", sqrtf, sqrt},    [ST_OP_EXP] = {"exp", expf, exp},       [ST_OP_LOG] = {"log", logf, log},
    [ST_OP_ABS] = {"abs", fabsf, fabs},      [ST_OP_SIN] = {"sin", sinf, sin},       [ST_OP_COS] = {"cos", cosf, cos},
    [ST_OP_TAN] = {"tan", tanf, tan},        [ST_OP_ASIN] = {"asin", asinf, asin},   [ST_OP_ACOS] = {"acos", acosf, acos},
    [ST_OP_ATAN] = {"atan", atanf, atan},    [ST_OP_SINH] = {"sinh", sinhf, sinh},   [ST_OP_COSH] = {"cosh", coshf, cosh},
    [ST_OP_TANH] = {"tanh", tanhf, tanh},    [ST_OP_FLOOR] = {"floor", floorf, floor},
    [ST_OP_CEIL] = {"ceil", ceilf, ceil},    [ST_OP_ROUND] = {"round", roundf, round},
    [ST_OP_TRUNC] = {"trunc", truncf, trunc}, [ST_OP_ISNAN] = {"isnan", NULL, NULL}, [ST_OP_ISINF] = {"isinf", NULL, NULL},
    [ST_OP_BITS] = {"bits", NULL, NULL},
};

uint64_t st_scalar_order_key(st_scalar_kind k, st_scalar v) {
    unsigned width = 8u * (unsigned)st_scalar_size(k);
    uint64_t sign = (uint64_t)1 << (width - 1), all = width == 64 ? ~(uint64_t)0 : ((uint64_t)1 << width) - 1;
    uint64_t bits;
    switch (k) {
    case ST_F32: {
        uint32_t u;
        memcpy(&u, &v.f32, sizeof u);
        bits = u;
        break;
    }
    case ST_F64: memcpy(&bits, &v.f64, sizeof bits); break;
    default: bits = st_int_bits(k, v) & all; break;
    }
    if (st_scalar_is_float(k)) return bits ^ (bits & sign ? all : sign);
    return st_scalar_is_signed(k) ? bits ^ sign : bits;
}

const char *st_unop_function(st_unop op) { return op < ST_UNOP_COUNT ? unop_functions[op].name : NULL; }

bool st_unop_is_float_function(st_unop op) {
    return op == ST_OP_SQRT || op == ST_OP_EXP || op == ST_OP_LOG || (op >= ST_OP_SIN && op <= ST_OP_TRUNC);
}

bool st_unop_is_float_test(st_unop op) { return op == ST_OP_ISNAN || op == ST_OP_ISINF; }

st_scalar st_scalar_unop(st_unop op, st_scalar_kind k, st_scalar a) {
    st_scalar r = {.bits = 0};
    if (op == ST_OP_NOT) {
        r.b = !a.b;
        return r;
    }
    if (st_unop_is_float_function(op)) {
        if (k == ST_F32) r.f32 = unop_functions[op].f32(a.f32);
        else r.f64 = unop_functions[op].f64(a.f64);
        return r;
    }
    if (st_unop_is_float_test(op)) {
        double x = k == ST_F32 ? (double)a.f32 : a.f64;
        r.b = op == ST_OP_ISNAN ? isnan(x) : isinf(x);
        return r;
    }
    if (op == ST_OP_BITS) {
        /* a float's bytes read as its unsigned twin (a NaN's payload and
         * sign kept); an integer's, wrapped to its width */
        if (k == ST_F32) r.u32 = a.u32;
        else if (k == ST_F64) r.u64 = a.u64;
        else r = st_from_bits(st_scalar_unsigned(k), st_int_bits(k, a));
        return r;
    }
    if (op == ST_OP_ABS) {
        switch (k) {
        case ST_F32: r.f32 = fabsf(a.f32); return r;
        case ST_F64: r.f64 = fabs(a.f64); return r;
        default:
            if (!st_scalar_is_signed(k)) return a;
            /* negative: negated as - does, so the minimum stays itself */
            return (int64_t)st_int_bits(k, a) < 0 ? st_from_bits(k, 0 - st_int_bits(k, a)) : a;
        }
    }
    switch (k) {
    case ST_F32: r.f32 = -a.f32; return r;
    case ST_F64: r.f64 = -a.f64; return r;
    default: return st_from_bits(k, 0 - st_int_bits(k, a));
    }
}

/* ---- text ---- */

bool st_scalar_parse(st_scalar_kind k, const char *text, const char *what, st_scalar *out,
                     st_err *err) {
    st_scalar r = {.bits = 0};
    char *end = NULL;
    errno = 0;
    const char *p = text;
    while (*p == ' ') p++;
    if (k == ST_BOOL) {
        if (!strcmp(p, "true") || !strcmp(p, "1")) r.b = true;
        else if (strcmp(p, "false") && strcmp(p, "0"))
            return st_fail(err, (st_loc){0}, "%s: `%s` is not a bool (true, false, 1 or 0)", what, text);
        return (*out = r), true;
    }
    if (st_scalar_is_float(k)) {
        double d = k == ST_F32 ? strtof(p, &end) : strtod(p, &end);
        if (end == p || *end)
            return st_fail(err, (st_loc){0}, "%s: `%s` is not a number of type %s", what, text, names[k]);
        if (errno == ERANGE && isinf(d)) /* `inf` itself is fine; 1e999 is a mistake */
            return st_fail(err, (st_loc){0}, "%s: %s is out of the range of %s", what, text, names[k]);
        if (k == ST_F32) r.f32 = (float)d; else r.f64 = d;
        return (*out = r), true;
    }
    bool neg = *p == '-';
    if (!(*p >= '0' && *p <= '9') && !(neg && p[1] >= '0' && p[1] <= '9'))
        return st_fail(err, (st_loc){0}, "%s: `%s` is not an integer of type %s", what, text, names[k]);
    if (!st_scalar_is_signed(k) && neg)
        return st_fail(err, (st_loc){0}, "%s: %s is negative but %s is unsigned", what, text, names[k]);
    unsigned long long mag = strtoull(neg ? p + 1 : p, &end, 10);
    if (*end) return st_fail(err, (st_loc){0}, "%s: `%s` is not an integer of type %s", what, text, names[k]);
    uint64_t max_pos, max_neg;
    st_scalar_int_limits(k, &max_pos, &max_neg);
    if (errno == ERANGE || mag > (neg ? max_neg : max_pos)) {
        st_buf range = {0};
        st_scalar_range_text(k, &range);
        st_fail(err, (st_loc){0}, "%s: %s does not fit in %s (%s)", what, text, names[k], range.data ? range.data : "");
        st_buf_free(&range);
        return false;
    }
    *out = st_from_bits(k, neg ? 0 - (uint64_t)mag : (uint64_t)mag);
    return true;
}

void st_scalar_format(st_scalar_kind k, st_scalar v, st_buf *out) {
    switch (k) {
    case ST_BOOL: st_buf_puts(out, v.b ? "true" : "false"); return;
    case ST_I32: st_buf_printf(out, "%d", v.i32); return;
    case ST_U32: st_buf_printf(out, "%u", v.u32); return;
    case ST_I64: st_buf_printf(out, "%lld", (long long)v.i64); return;
    case ST_U64: st_buf_printf(out, "%llu", (unsigned long long)v.u64); return;
    case ST_I8: st_buf_printf(out, "%d", v.i8); return;
    case ST_U8: st_buf_printf(out, "%u", v.u8); return;
    case ST_I16: st_buf_printf(out, "%d", v.i16); return;
    case ST_U16: st_buf_printf(out, "%u", v.u16); return;
    default: break;
    }
    double d = k == ST_F32 ? v.f32 : v.f64;
    if (isnan(d)) return st_buf_puts(out, "nan");
    if (isinf(d)) return st_buf_puts(out, d < 0 ? "-inf" : "inf");
    /* the shortest %g that reads back to the same value */
    char text[64];
    for (int prec = k == ST_F32 ? 6 : 15; prec <= 17; prec++) {
        snprintf(text, sizeof text, "%.*g", prec, d);
        if (k == ST_F32 ? strtof(text, NULL) == v.f32 : strtod(text, NULL) == d) break;
    }
    st_buf_puts(out, text);
    if (!strpbrk(text, ".e")) st_buf_puts(out, ".0");
}

void st_scalar_range_text(st_scalar_kind k, st_buf *out) {
    uint64_t max_pos, max_neg;
    st_scalar_int_limits(k, &max_pos, &max_neg);
    st_buf_printf(out, "%s%llu to %llu", max_neg ? "-" : "", (unsigned long long)max_neg, (unsigned long long)max_pos);
}
