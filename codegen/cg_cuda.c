/* codegen/cg_cuda.c — the same kernels as CUDA C++, for NVRTC.
 *
 * strata generates one set of kernels. For CUDA they are not rewritten:
 * their bodies stay OpenCL C, and a prelude maps OpenCL's built-ins (work-
 * item ids, barriers, fences, atomics, as_type, saturating conversions) to
 * CUDA's. Two things a prelude cannot do are done to the text here:
 *
 *   - `__local` means two things in OpenCL C: a variable in local memory
 *     (CUDA's `__shared__`) and, before a `*`, a pointer into it (CUDA's
 *     generic pointers need no qualifier).
 *   - A `__local T *` kernel parameter (local memory sized by the host at
 *     launch) has no CUDA counterpart: a kernel has one dynamic shared array.
 *     Such a parameter becomes an offset into it, which the CUDA runtime
 *     (cuda_cl.c) assigns when it launches, and the body gets the pointer
 *     back under the parameter's name.
 *
 * kernel_text (cg_glue.c) writes both signatures; the runtime recognises
 * buffer parameters by their `*` (cuda_cl.c parses the signatures): only
 * buffers are pointers in a CUDA signature. */
#include "cg.h"

#include <string.h>

const char *cg_cuda_prelude(void) {
    return "/* OpenCL C's built-ins in CUDA (strata's prelude for NVRTC) */\n"
           "typedef unsigned char uchar;\n"
           "typedef unsigned short ushort;\n"
           "typedef unsigned int uint;\n"
           "typedef unsigned long ulong;\n"
           "#define __kernel extern \"C\" __global__\n"
           "#define __global\n"
           "#define restrict __restrict__\n"
           "#define CLK_LOCAL_MEM_FENCE 1\n"
           "#define CLK_GLOBAL_MEM_FENCE 2\n"
           "#define INT_MIN (-2147483647 - 1)\n"
           "#define INT_MAX 2147483647\n"
           "#define LONG_MIN (-9223372036854775807L - 1L)\n"
           "#define LONG_MAX 9223372036854775807L\n"
           "#define INFINITY __int_as_float(0x7f800000)\n"
           "#define NAN __int_as_float(0x7fffffff)\n"
           "/* the local memory that OpenCL's local kernel parameters point into */\n"
           "extern __shared__ __align__(16) unsigned char strata_shared[];\n"
           "#define ST_DIM(v) (d == 0 ? (v).x : d == 1 ? (v).y : (v).z)\n"
           "static __device__ inline size_t get_local_id(uint d) { return ST_DIM(threadIdx); }\n"
           "static __device__ inline size_t get_group_id(uint d) { return ST_DIM(blockIdx); }\n"
           "static __device__ inline size_t get_local_size(uint d) { return ST_DIM(blockDim); }\n"
           "static __device__ inline size_t get_num_groups(uint d) { return ST_DIM(gridDim); }\n"
           "static __device__ inline size_t get_global_id(uint d) { return get_group_id(d) * get_local_size(d) + get_local_id(d); }\n"
           "static __device__ inline size_t get_global_size(uint d) { return get_num_groups(d) * get_local_size(d); }\n"
           "#undef ST_DIM\n"
           "/* a barrier orders local and global memory for the group, as __syncthreads does */\n"
           "static __device__ inline void barrier(int flags) { (void)flags; __syncthreads(); }\n"
           "static __device__ inline void mem_fence(int flags) {\n"
           "    if (flags & CLK_GLOBAL_MEM_FENCE) __threadfence(); else __threadfence_block();\n"
           "}\n"
           "/* as_type: the same bits as another type of the same size */\n"
           "template <class To, class From> static __device__ inline To st_as(From x) {\n"
           "    static_assert(sizeof(To) == sizeof(From), \"as_type between types of one size\");\n"
           "    To r;\n"
           "    memcpy(&r, &x, sizeof r);\n"
           "    return r;\n"
           "}\n"
           "#define as_int(x) st_as<int>(x)\n"
           "#define as_uint(x) st_as<uint>(x)\n"
           "#define as_float(x) st_as<float>(x)\n"
           "#define as_long(x) st_as<long>(x)\n"
           "#define as_ulong(x) st_as<ulong>(x)\n"
           "#define as_double(x) st_as<double>(x)\n"
           "/* float to integer, saturating and NaN to 0: what PTX's cvt.rzi does */\n"
           "#define ST_CONVERT(T, F, D)                                                       \\\n"
           "    static __device__ inline T convert_##T##_sat(float x) { return (T)F(x); }  \\\n"
           "    static __device__ inline T convert_##T##_sat(double x) { return (T)D(x); }\n"
           "ST_CONVERT(int, __float2int_rz, __double2int_rz)\n"
           "ST_CONVERT(uint, __float2uint_rz, __double2uint_rz)\n"
           "ST_CONVERT(long, __float2ll_rz, __double2ll_rz)\n"
           "ST_CONVERT(ulong, __float2ull_rz, __double2ull_rz)\n"
           "/* to 8 and 16 bits: saturate to the range through int (NaN is 0 there too) */\n"
           "#define ST_CONVERT_NARROW(N, T, LO, HI)                                           \\\n"
           "    static __device__ inline T convert_##N##_sat(double x) { return (T)(x != x ? 0 : x < LO ? LO : x > HI ? HI : (int)x); } \\\n"
           "    static __device__ inline T convert_##N##_sat(float x) { return convert_##N##_sat((double)x); }\n"
           "ST_CONVERT_NARROW(char, signed char, -128, 127)\n"
           "ST_CONVERT_NARROW(uchar, unsigned char, 0, 255)\n"
           "ST_CONVERT_NARROW(short, short, -32768, 32767)\n"
           "ST_CONVERT_NARROW(ushort, unsigned short, 0, 65535)\n"
           "/* OpenCL's atomics (atomic_* for 32 bits, atom_* for 64) on CUDA's; W is\n"
           " * the word CUDA's atomic takes (a sign does not change +, -, &, |, ^, xchg\n"
           " * or cas), S the one min and max compare as */\n"
           "#define ST_ATOMIC(T, W, S)                                                                        \\\n"
           "    static __device__ inline T st_atomic_add(volatile T *p, T v) { return (T)atomicAdd((W *)p, (W)v); } \\\n"
           "    static __device__ inline T st_atomic_sub(volatile T *p, T v) { return (T)atomicAdd((W *)p, (W)0 - (W)v); } \\\n"
           "    static __device__ inline T st_atomic_xchg(volatile T *p, T v) { return (T)atomicExch((W *)p, (W)v); } \\\n"
           "    static __device__ inline T st_atomic_cmpxchg(volatile T *p, T c, T v) { return (T)atomicCAS((W *)p, (W)c, (W)v); } \\\n"
           "    static __device__ inline T st_atomic_min(volatile T *p, T v) { return (T)atomicMin((S *)p, (S)v); } \\\n"
           "    static __device__ inline T st_atomic_max(volatile T *p, T v) { return (T)atomicMax((S *)p, (S)v); } \\\n"
           "    static __device__ inline T st_atomic_and(volatile T *p, T v) { return (T)atomicAnd((W *)p, (W)v); } \\\n"
           "    static __device__ inline T st_atomic_or(volatile T *p, T v) { return (T)atomicOr((W *)p, (W)v); } \\\n"
           "    static __device__ inline T st_atomic_xor(volatile T *p, T v) { return (T)atomicXor((W *)p, (W)v); } \\\n"
           "    static __device__ inline T st_atomic_inc(volatile T *p) { return (T)atomicAdd((W *)p, (W)1); } \\\n"
           "    static __device__ inline T st_atomic_dec(volatile T *p) { return (T)atomicAdd((W *)p, (W)0 - (W)1); }\n"
           "ST_ATOMIC(int, unsigned int, int)\n"
           "ST_ATOMIC(uint, unsigned int, unsigned int)\n"
           "ST_ATOMIC(long, unsigned long long, long long)\n"
           "ST_ATOMIC(ulong, unsigned long long, unsigned long long)\n"
           "static __device__ inline float st_atomic_xchg(volatile float *p, float v) { return atomicExch((float *)p, v); }\n"
           "#define atomic_add st_atomic_add\n"
           "#define atomic_sub st_atomic_sub\n"
           "#define atomic_xchg st_atomic_xchg\n"
           "#define atomic_cmpxchg st_atomic_cmpxchg\n"
           "#define atomic_min st_atomic_min\n"
           "#define atomic_max st_atomic_max\n"
           "#define atomic_and st_atomic_and\n"
           "#define atomic_or st_atomic_or\n"
           "#define atomic_xor st_atomic_xor\n"
           "#define atomic_inc st_atomic_inc\n"
           "#define atomic_dec st_atomic_dec\n"
           "#define atom_add st_atomic_add\n"
           "#define atom_sub st_atomic_sub\n"
           "#define atom_xchg st_atomic_xchg\n"
           "#define atom_cmpxchg st_atomic_cmpxchg\n"
           "#define atom_min st_atomic_min\n"
           "#define atom_max st_atomic_max\n"
           "#define atom_and st_atomic_and\n"
           "#define atom_or st_atomic_or\n"
           "#define atom_xor st_atomic_xor\n"
           "#define atom_inc st_atomic_inc\n"
           "#define atom_dec st_atomic_dec\n";
}

static bool ident_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* OpenCL C as strata writes it, with each `__local` made CUDA's: dropped
 * before a pointer's `*` (after the type's words), else `__shared__`. */
void cg_cuda_translate(const char *text, st_buf *out) {
    static const char word[] = "__local";
    const size_t n = sizeof word - 1;
    const char *p = text;
    for (const char *at; (at = strstr(p, word));) {
        bool whole = (at == text || !ident_char(at[-1])) && !ident_char(at[n]);
        st_buf_put(out, p, (size_t)(at - p) + (whole ? 0 : n));
        p = at + n;
        if (!whole) continue;
        const char *q = p;
        while (*q == ' ' || ident_char(*q)) q++; /* the type: `uint`, `volatile uint`, `tuple3` */
        if (*q == '*')
            p += *p == ' '; /* a pointer: no qualifier, and no doubled space */
        else
            st_buf_puts(out, "__shared__");
    }
    st_buf_puts(out, p);
}
