/* codegen/cg_c.c — C types, literals and scalar operators, with the
 * interpreter's meaning: integer division by zero gives 0 (the interpreter
 * stops with an error instead; a kernel cannot), float-to-integer
 * conversions saturate, shifts take the count modulo the width. */
#include "cg.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const scalar_ctype[ST_SCALAR_KIND_COUNT] = {
    [ST_BOOL] = "bool", [ST_I32] = "int", [ST_U32] = "uint", [ST_I64] = "long",
    [ST_U64] = "ulong", [ST_F32] = "float", [ST_F64] = "double", [ST_I8] = "schar",
    [ST_U8] = "uchar", [ST_I16] = "short", [ST_U16] = "ushort"};

/* i8 is `schar` (the prelude's signed char: OpenCL's `char` is signed, CUDA's
 * follows the host), but OpenCL's built-ins name it `char`: convert_char_sat */
static const char *builtin_name(st_scalar_kind k) { return k == ST_I8 ? "char" : scalar_ctype[k]; }

/* 8- and 16-bit integers: C promotes them to int before any operator, so
 * an operator's result is cast back to the type (that is the wrap-around);
 * + - * << are done on uint, where ushort * ushort cannot overflow. */
static bool narrow(st_scalar_kind k) { return k >= ST_I8; }

/* OpenCL keeps bool out of buffers and kernel arguments: one byte there. */
const char *cg_mem_ctype(st_scalar_kind k) { return k == ST_BOOL ? "uchar" : scalar_ctype[k]; }

bool cg_is_plain(const st_type *t) { return st_type_is_plain(t); }

size_t cg_plain_bytes(const st_type *t) {
    if (t->kind == ST_TYPE_SCALAR) return st_scalar_size(t->scalar);
    size_t sum = 0;
    for (uint32_t k = 0; k < t->n; k++) sum += cg_plain_bytes(t->items[k]);
    return sum;
}

/* Tuples become structs, one typedef per tuple type (types are
 * hash-consed, so the pointer is the identity). */
const char *cg_ctype(cg *g, const st_type *t) {
    if (t->kind == ST_TYPE_SCALAR) {
        if (t->scalar == ST_F64) g->uses_f64 = true;
        return scalar_ctype[t->scalar];
    }
    if (t->kind != ST_TYPE_TUPLE) {
        cg_fail(g, NULL, "an array or function type has no C scalar type");
        return "int";
    }
    for (uint32_t i = 0; i < g->ntuples; i++)
        if (g->tuples[i] == t) return cg_str(g, "tuple%u", i);
    const char **fields = cg_alloc(g, t->n * sizeof *fields);
    if (!fields) return "int";
    for (uint32_t i = 0; i < t->n; i++) fields[i] = cg_ctype(g, t->items[i]);
    if (!cg_grow(g, (void **)&g->tuples, g->ntuples, &g->captuples, sizeof *g->tuples)) return "int";
    uint32_t id = g->ntuples++;
    g->tuples[id] = t;
    st_buf_printf(&g->types, "typedef struct {");
    for (uint32_t i = 0; i < t->n; i++) st_buf_printf(&g->types, " %s f%u;", fields[i], i);
    st_buf_printf(&g->types, " } tuple%u;\n", id);
    /* OpenCL C 1.2 compilers differ on compound literals; a function is safe */
    st_buf_printf(&g->types, "static inline tuple%u make_tuple%u(", id, id);
    for (uint32_t i = 0; i < t->n; i++) st_buf_printf(&g->types, "%s%s f%u", i ? ", " : "", fields[i], i);
    st_buf_printf(&g->types, ") {\n    tuple%u r;\n", id);
    for (uint32_t i = 0; i < t->n; i++) st_buf_printf(&g->types, "    r.f%u = f%u;\n", i, i);
    st_buf_printf(&g->types, "    return r;\n}\n");
    return cg_str(g, "tuple%u", id);
}

const char *cg_literal(cg *g, st_scalar_kind k, st_scalar v) {
    switch (k) {
    case ST_BOOL: return v.b ? "true" : "false";
    case ST_I32: return v.i32 == INT32_MIN ? "(-2147483647 - 1)" : v.i32 < 0 ? cg_str(g, "(%" PRId32 ")", v.i32) : cg_str(g, "%" PRId32, v.i32);
    case ST_U32: return cg_str(g, "%" PRIu32 "u", v.u32);
    case ST_I64: return v.i64 == INT64_MIN ? "(-9223372036854775807L - 1L)" : v.i64 < 0 ? cg_str(g, "(%" PRId64 "L)", v.i64) : cg_str(g, "%" PRId64 "L", v.i64);
    case ST_U64: return cg_str(g, "%" PRIu64 "UL", v.u64);
    case ST_I8: case ST_U8: case ST_I16: case ST_U16: {
        int64_t x = (int64_t)st_scalar_as_f64(k, v);
        return cg_str(g, x < 0 ? "((%s)(%" PRId64 "))" : "((%s)%" PRId64 ")", scalar_ctype[k], x);
    }
    case ST_F32:
    case ST_F64: {
        double d = k == ST_F32 ? v.f32 : v.f64;
        if (k == ST_F64) g->uses_f64 = true;
        const char *cast = k == ST_F32 ? "" : "(double)";
        if (isnan(d)) return cg_str(g, "%sNAN", cast);
        if (isinf(d)) return cg_str(g, d < 0 ? "(-%sINFINITY)" : "%sINFINITY", cast);
        char text[64];
        snprintf(text, sizeof text, k == ST_F32 ? "%.9g" : "%.17g", d);
        bool plain = !strpbrk(text, ".e");
        return cg_str(g, d < 0 ? "(%s%s%s)" : "%s%s%s", text, plain ? ".0" : "", k == ST_F32 ? "f" : "");
    }
    default: return "0";
    }
}

static const char *const c_op[ST_BINOP_COUNT] = {
    [ST_OP_ADD] = "+", [ST_OP_SUB] = "-", [ST_OP_MUL] = "*", [ST_OP_DIV] = "/", [ST_OP_MOD] = "%",
    [ST_OP_EQ] = "==", [ST_OP_NE] = "!=", [ST_OP_LT] = "<", [ST_OP_LE] = "<=", [ST_OP_GT] = ">",
    [ST_OP_GE] = ">=", [ST_OP_AND] = "&&", [ST_OP_OR] = "||", [ST_OP_BAND] = "&",
    [ST_OP_BOR] = "|", [ST_OP_BXOR] = "^", [ST_OP_SHL] = "<<", [ST_OP_SHR] = ">>"};

static const char *narrow_binop(cg *g, st_binop op, st_scalar_kind k, const char *a, const char *b) {
    const char *t = scalar_ctype[k];
    int mask = (int)st_scalar_size(k) * 8 - 1;
    switch (op) {
    case ST_OP_MIN: case ST_OP_MAX: /* each operand cast: `c ? x : y` of uchars is an int, and max(uchar, int) is ambiguous */
        return cg_str(g, "((%s)%s((%s)(%s), (%s)(%s)))", t, op == ST_OP_MIN ? "min" : "max", t, a, t, b);
    case ST_OP_DIV: case ST_OP_MOD:
        return cg_str(g, "st_%s_%s(%s, %s)", op == ST_OP_DIV ? "div" : "mod", t, a, b);
    case ST_OP_ADD: case ST_OP_SUB: case ST_OP_MUL: case ST_OP_BAND: case ST_OP_BOR: case ST_OP_BXOR:
        return cg_str(g, "((%s)((uint)%s %s (uint)%s))", t, a, c_op[op], b);
    case ST_OP_SHL: return cg_str(g, "((%s)((uint)%s << (%s & %d)))", t, a, b, mask);
    case ST_OP_SHR: /* an int keeps the sign for an arithmetic shift, a uint zero-fills */
        return cg_str(g, "((%s)((%s)%s >> (%s & %d)))", t, st_scalar_is_signed(k) ? "int" : "uint", a, b, mask);
    default: return cg_str(g, "(%s %s %s)", a, c_op[op], b); /* comparisons: promoted values compare alike */
    }
}

const char *cg_binop(cg *g, st_binop op, st_scalar_kind k, const char *a, const char *b) {
    bool fl = st_scalar_is_float(k);
    /* overloaded for float and double in OpenCL C and in CUDA alike */
    if (op == ST_OP_ATAN2 || (op == ST_OP_POW && fl)) return cg_str(g, "%s(%s, %s)", op == ST_OP_POW ? "pow" : "atan2", a, b);
    /* an integer's power wraps, as the interpreter's does: the narrow ones
     * through int or uint, whose low bits are theirs */
    if (op == ST_OP_POW) {
        bool sgn = st_scalar_is_signed(k), wide = st_scalar_size(k) == 8;
        const char *via = wide ? (sgn ? "long" : "ulong") : (sgn ? "int" : "uint");
        if (narrow(k)) return cg_str(g, "((%s)st_pow_%s((%s)%s, (%s)%s))", scalar_ctype[k], via, via, a, via, b);
        return cg_str(g, "st_pow_%s(%s, %s)", via, a, b);
    }
    if (narrow(k)) return narrow_binop(g, op, k, a, b);
    switch (op) {
    case ST_OP_MIN: return cg_str(g, "%s(%s, %s)", fl ? "fmin" : "min", a, b);
    case ST_OP_MAX: return cg_str(g, "%s(%s, %s)", fl ? "fmax" : "max", a, b);
    case ST_OP_DIV:
    case ST_OP_MOD:
        if (fl) return op == ST_OP_DIV ? cg_str(g, "(%s / %s)", a, b) : cg_str(g, "fmod(%s, %s)", a, b);
        return cg_str(g, "st_%s_%s(%s, %s)", op == ST_OP_DIV ? "div" : "mod", scalar_ctype[k], a, b);
    case ST_OP_BXOR:
        if (k == ST_BOOL) return cg_str(g, "(%s != %s)", a, b);
        return cg_str(g, "(%s ^ %s)", a, b);
    case ST_OP_ADD: case ST_OP_SUB: case ST_OP_MUL:
        /* signed overflow wraps, as in the interpreter, not undefined as in C */
        if (k == ST_I32 || k == ST_I64)
            return cg_str(g, "st_%s_%s(%s, %s)", op == ST_OP_ADD ? "add" : op == ST_OP_SUB ? "sub" : "mul",
                          scalar_ctype[k], a, b);
        return cg_str(g, "(%s %s %s)", a, c_op[op], b);
    default: return cg_str(g, "(%s %s %s)", a, c_op[op], b);
    }
}

const char *cg_unop(cg *g, st_unop op, st_scalar_kind k, const char *a) {
    bool fl = k == ST_F32 || k == ST_F64;
    switch (op) {
    /* overloaded for float and double in OpenCL C and in CUDA alike; isnan
     * and isinf give an int in OpenCL C, a bool in CUDA */
    case ST_OP_ISNAN: case ST_OP_ISINF: return cg_str(g, "(%s(%s) != 0)", st_unop_function(op), a);
    /* a float's as_uint or as_ulong (which the CUDA prelude maps); an
     * integer's cast to its unsigned type, which is its two's complement
     * bits whatever C type its text has (a narrow one's promoted int) */
    case ST_OP_BITS:
        if (fl) return cg_to_bits(g, k, a);
        return cg_str(g, "((%s)(%s))", scalar_ctype[st_scalar_unsigned(k)], a);
    case ST_OP_ABS:
        if (fl) return cg_str(g, "fabs(%s)", a);
        if (k == ST_I32 || k == ST_I64) return cg_str(g, "st_abs_%s(%s)", scalar_ctype[k], a);
        if (narrow(k) && st_scalar_is_signed(k)) return cg_str(g, "((%s)st_abs_int((int)%s))", scalar_ctype[k], a);
        return a; /* unsigned */
    default:
        if (st_unop_is_float_function(op)) return cg_str(g, "%s(%s)", st_unop_function(op), a);
        break;
    }
    if (op == ST_OP_NEG && (k == ST_I32 || k == ST_I64)) return cg_str(g, "st_neg_%s(%s)", scalar_ctype[k], a);
    if (op == ST_OP_NEG && narrow(k)) return cg_str(g, "((%s)(0u - (uint)%s))", scalar_ctype[k], a);
    return cg_str(g, op == ST_OP_NOT ? "(!%s)" : "(-%s)", a);
}

const char *cg_conv(cg *g, st_scalar_kind to, st_scalar_kind from, const char *a) {
    if (to == from) return a;
    if (to == ST_F64) g->uses_f64 = true;
    if (to == ST_BOOL) return cg_str(g, "(%s != 0)", a);
    if (st_scalar_is_float(from) && !st_scalar_is_float(to))
        return cg_str(g, "convert_%s_sat(%s)", builtin_name(to), a);
    return cg_str(g, "((%s)%s)", scalar_ctype[to], a);
}

/* Integer division and modulo as the interpreter defines them, without the
 * traps of C: x / 0 is 0 here, and MIN / -1 wraps. */
const char *cg_prelude(void) {
    return "/* a fence all work-groups observe: NVIDIA's OpenCL makes mem_fence a work-group's\n"
           " * (membar.cta), too weak for a look-back's descriptor or a lock in global memory (an\n"
           " * H200 gave wrong scans with it); PTX's membar.gl is the device's, CUDA's __threadfence */\n"
           "#if defined(__OPENCL_VERSION__) && defined(cl_nv_pragma_unroll)\n"
           "#define ST_DEVICE_FENCE() asm(\"membar.gl;\")\n"
           "#else\n"
           "#define ST_DEVICE_FENCE() mem_fence(CLK_GLOBAL_MEM_FENCE)\n"
           "#endif\n"
           "/* a local array's parameter: restrict where a CPU's OpenCL (PoCL) runs a group's work-items\n"
           " * as loops of one function, so that the array is reached through that parameter alone and\n"
           " * the compiler may vectorise a loop that writes one and reads another; not on a GPU, whose\n"
           " * work-items are threads that write it across barriers, which restrict lets a compiler\n"
           " * read past */\n"
           "#if defined(__OPENCL_VERSION__) && (defined(__x86_64__) || defined(__aarch64__))\n"
           "#define ST_LOCAL_RESTRICT restrict\n"
           "#else\n"
           "#define ST_LOCAL_RESTRICT\n"
           "#endif\n"
           "/* a run kernel's arrays: every buffer starts at least 16-byte aligned (OpenCL's base\n"
           " * address alignment, CUDA's allocations), which the compiler is told so that a GPU\n"
           " * work-item's run of consecutive elements loads and stores as 128-bit vectors: by an\n"
           " * attribute of the parameter in clang's OpenCL C, by an assumption in CUDA's */\n"
           "#if defined(__CUDACC__)\n"
           "#define ST_ALIGNED16\n"
           "#define ST_ASSUME_ALIGNED16(p) ((p) = (decltype(p))__builtin_assume_aligned((p), 16))\n"
           "#elif defined(__clang__)\n"
           "#define ST_ALIGNED16 __attribute__((align_value(16)))\n"
           "#define ST_ASSUME_ALIGNED16(p) ((void)0)\n"
           "#else\n"
           "#define ST_ALIGNED16\n"
           "#define ST_ASSUME_ALIGNED16(p) ((void)0)\n"
           "#endif\n"
           "/* a store that bypasses the cache (clang's OpenCL, PoCL's: a whole line written needs\n"
           " * no read of it first), and the fence after such stores (x86 orders them by nothing\n"
           " * else); elsewhere a plain store */\n"
           "#if defined(__clang__) && defined(__OPENCL_VERSION__)\n"
           "#define ST_STREAM(p, v) __builtin_nontemporal_store((v), (p))\n"
           "#else\n"
           "#define ST_STREAM(p, v) (*(p) = (v))\n"
           "#endif\n"
           "#if defined(__clang__) && defined(__OPENCL_VERSION__) && defined(__x86_64__)\n"
           "#define ST_STREAM_END() __builtin_ia32_sfence()\n"
           "#else\n"
           "#define ST_STREAM_END() ((void)0)\n"
           "#endif\n"
           "#define ST_DIVMOD(T, MIN)                                                       \\\n"
           "    static inline T st_div_##T(T a, T b) { return b == 0 ? 0 : (b == -1 && a == MIN) ? a : a / b; } \\\n"
           "    static inline T st_mod_##T(T a, T b) { return b == 0 || b == -1 ? 0 : a % b; }\n"
           "/* signed + - * wrap around, as strata's interpreter says; in C they are undefined */\n"
           "#define ST_WRAP(T, U)                                                            \\\n"
           "    static inline T st_add_##T(T a, T b) { return (T)((U)a + (U)b); }          \\\n"
           "    static inline T st_sub_##T(T a, T b) { return (T)((U)a - (U)b); }          \\\n"
           "    static inline T st_mul_##T(T a, T b) { return (T)((U)a * (U)b); }          \\\n"
           "    static inline T st_neg_##T(T a) { return (T)(0 - (U)a); }                 \\\n"
           "    static inline T st_abs_##T(T a) { return a < 0 ? st_neg_##T(a) : a; }\n"
           "ST_WRAP(int, uint)\n"
           "ST_WRAP(long, ulong)\n"
           "/* a ** b on integers, wrapping, by squaring; a negative power 1 / a^|b| toward zero */\n"
           "#define ST_POW(T, U, NEG)                                                        \\\n"
           "    static inline T st_pow_##T(T a, T b) {                                      \\\n"
           "        if (NEG(b)) return a == 1 ? (T)1 : a == (T)-1 ? ((b & 1) ? (T)-1 : (T)1) : (T)0; \\\n"
           "        U x = (U)a, e = (U)b, r = 1;                                            \\\n"
           "        for (; e; e >>= 1, x *= x)                                              \\\n"
           "            if (e & 1) r *= x;                                                  \\\n"
           "        return (T)r;                                                            \\\n"
           "    }\n"
           "#define ST_NEGATIVE(b) ((b) < 0)\n"
           "#define ST_NEVER(b) 0\n"
           "ST_POW(int, uint, ST_NEGATIVE)\n"
           "ST_POW(long, ulong, ST_NEGATIVE)\n"
           "ST_POW(uint, uint, ST_NEVER)\n"
           "ST_POW(ulong, ulong, ST_NEVER)\n"
           "ST_DIVMOD(int, INT_MIN)\n"
           "ST_DIVMOD(long, LONG_MIN)\n"
           "static inline uint st_div_uint(uint a, uint b) { return b == 0 ? 0 : a / b; }\n"
           "static inline uint st_mod_uint(uint a, uint b) { return b == 0 ? 0 : a % b; }\n"
           "static inline ulong st_div_ulong(ulong a, ulong b) { return b == 0 ? 0 : a / b; }\n"
           "static inline ulong st_mod_ulong(ulong a, ulong b) { return b == 0 ? 0 : a % b; }\n"
           "/* 8- and 16-bit integers: i8 is schar, signed in OpenCL C and in CUDA alike */\n"
           "#ifdef __CUDACC__\ntypedef signed char schar;\n#else\ntypedef char schar;\n#endif\n"
           "/* promoted to int, MIN / -1 does not trap, and the cast back wraps it */\n"
           "#define ST_DIVMOD_NARROW(T)                                                      \\\n"
           "    static inline T st_div_##T(T a, T b) { return b == 0 ? (T)0 : (T)(a / b); } \\\n"
           "    static inline T st_mod_##T(T a, T b) { return b == 0 ? (T)0 : (T)(a % b); }\n"
           "ST_DIVMOD_NARROW(schar)\n"
           "ST_DIVMOD_NARROW(uchar)\n"
           "ST_DIVMOD_NARROW(short)\n"
           "ST_DIVMOD_NARROW(ushort)\n"
           "/* where byte `off` of a 32-bit word starts, for SIZE bytes at it */\n"
           "#if defined(__ENDIAN_LITTLE__) || defined(__CUDACC__)\n#define ST_BYTE_SHIFT(off, size) ((off) * 8u)\n"
           "#else\n#define ST_BYTE_SHIFT(off, size) ((4u - (size) - (off)) * 8u)\n#endif\n";
}

/* ---- sizes ---- */

/* st_size_expr writes a size with literals, size variables (and integer
 * parameters, converted to i64), + - * / %. The same text reads in a kernel
 * (the scalars are its arguments) and in the glue (they are its locals). */
static const char *size_node(cg *g, const st_node *n) {
    switch (n->kind) {
    case ST_NODE_LIT: return cg_str(g, "%" PRId64 "L", n->u.lit.i64);
    case ST_NODE_VAR: {
        const char *exist = cg_exist_var_c(g, n->u.name); /* a length known only at run time */
        return exist ? exist : cg_str(g, "s_%s", n->u.name);
    }
    case ST_NODE_CONV: return cg_str(g, "((long)%s)", size_node(g, n->kids[0]));
    case ST_NODE_BINOP: {
        const char *a = size_node(g, n->kids[0]), *b = size_node(g, n->kids[1]);
        bool by_const = n->kids[1]->kind == ST_NODE_LIT;
        switch (n->u.binop) {
        case ST_OP_ADD: return cg_str(g, "(%s + %s)", a, b);
        case ST_OP_SUB: return cg_str(g, "(%s - %s)", a, b);
        case ST_OP_MUL: return cg_str(g, "(%s * %s)", a, b);
        case ST_OP_DIV: return by_const ? cg_str(g, "(%s / %s)", a, b) : cg_str(g, "st_div_long(%s, %s)", a, b);
        case ST_OP_MOD: return by_const ? cg_str(g, "(%s %% %s)", a, b) : cg_str(g, "st_mod_long(%s, %s)", a, b);
        default: break;
        }
        break;
    }
    default: break;
    }
    cg_fail(g, n, "a size expression it cannot write");
    return "0L";
}

const char *cg_size(cg *g, const st_size *s) {
    int64_t v;
    if (st_size_is_const(s, &v)) return cg_str(g, "%" PRId64 "L", v);
    cg_size_note(g, s); /* checked in the glue before anything runs */
    st_err e = {0};
    s = cg_exist_sized(g, s);
    const st_node *n = st_size_expr(g->cx, g->sized ? g->sized : g->def, s, &e);
    if (!n) {
        cg_fail(g, NULL, "%s", e.message);
        return "0L";
    }
    return size_node(g, n);
}

/* A scalar as the bits of the unsigned word of its size (bool as a uint),
 * for atomics that move words, and back. */
const char *cg_to_bits(cg *g, st_scalar_kind k, const char *x) {
    switch (k) {
    case ST_F32: case ST_I32: return cg_str(g, "as_uint(%s)", x);
    case ST_F64: case ST_I64: return cg_str(g, "as_ulong(%s)", x);
    case ST_BOOL: return cg_str(g, "(uint)(%s)", x);
    default: return x;
    }
}

const char *cg_from_bits(cg *g, st_scalar_kind k, const char *w) {
    switch (k) {
    case ST_F32: return cg_str(g, "as_float(%s)", w);
    case ST_I32: return cg_str(g, "as_int(%s)", w);
    case ST_F64: return cg_str(g, "as_double(%s)", w);
    case ST_I64: return cg_str(g, "as_long(%s)", w);
    case ST_BOOL: return cg_str(g, "(%s != 0u)", w);
    default: return w;
    }
}
