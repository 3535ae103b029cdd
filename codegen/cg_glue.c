/* codegen/cg_glue.c — the two texts a program becomes: the OpenCL C of its
 * kernels and the host glue in C that allocates, binds and launches them.
 * The glue reads the same in strata's libtcc JIT (-DSTRATA_JIT, with a
 * prelude of its own, as libtcc has no system headers) and as an exported
 * file compiled against <CL/cl.h>. */
#include "cg.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const host_ctype[ST_SCALAR_KIND_COUNT] = {
    [ST_BOOL] = "unsigned char", [ST_I32] = "int", [ST_U32] = "unsigned int", [ST_I64] = "long",
    [ST_U64] = "unsigned long", [ST_F32] = "float", [ST_F64] = "double", [ST_I8] = "signed char",
    [ST_U8] = "unsigned char", [ST_I16] = "short", [ST_U16] = "unsigned short"};

/* An exact-shaped kernel is named after the primitive that made it (its descriptor's). */
static const char *shape_name(const cg_kernel *k) {
    switch (k->shape) {
    case CG_SHAPE_SINGLE: return "one work-item";
    case CG_SHAPE_GLB: return "mapGlb";
    case CG_SHAPE_WRG: return "mapWrg";
    case CG_SHAPE_EXACT: break;
    }
    return k->alg ? st_prim_get(k->alg->prim)->name : "exact";
}

/* " of \"PATH\"", the program's file: a path is anyone's text (a directory
 * named `*\/` and C code), so it is escaped, as in a string literal. */
static void program_path(const cg *g, st_buf *out) {
    const char *file = g->def->loc.file;
    if (!file) return;
    st_buf_puts(out, " of \"");
    cg_put_escaped(out, file, strlen(file));
    st_buf_puts(out, "\"");
}

/* ---- the kernels ---- */

/* One kernel: its signature and body, in OpenCL C, or (cuda) in CUDA C++,
 * where buffers are plain pointers (and the only pointers: cuda_cl.c tells
 * them by their `*`), a __local parameter an offset NAME_at into the
 * launch's dynamic shared memory that the body turns back into NAME, and
 * the body's own __local made CUDA's (cg_cuda_translate). */
static void kernel_text(cg *g, const cg_kernel *k, bool cuda, st_buf *out) {
    /* A kernel launched with groups of exactly W work-items says so, as
     * OpenCL's and CUDA's guides write it: the compiler then gives it no more
     * registers than W of them can have. CUDA's asks for 1024 threads per
     * multiprocessor at least (so ≤ 64 registers: half of an H100's warps). */
    int64_t w = 0;
    bool exact = k->shape == CG_SHAPE_EXACT && k->nlanes == 1 && st_size_is_const(k->lanes[0], &w) && w >= 1 &&
                 w <= 1024;
    st_buf_printf(out, "/* %s: %s */\n", shape_name(k), k->what);
    if (cuda && exact)
        st_buf_printf(out, "extern \"C\" __global__ void __launch_bounds__(%lld, %lld) %s(", (long long)w,
                      (long long)(1024 / w), k->name);
    else if (cuda)
        st_buf_printf(out, "extern \"C\" __global__ void %s(", k->name);
    else if (exact)
        st_buf_printf(out, "__kernel __attribute__((reqd_work_group_size(%lld, 1, 1))) void %s(", (long long)w, k->name);
    else
        st_buf_printf(out, "__kernel void %s(", k->name);
    st_buf locals = {0};
    for (uint32_t i = 0; i < k->nargs; i++) {
        const cg_arg *a = &k->args[i];
        const char *sep = i ? ",\n        " : "";
        switch (a->kind) {
        case CG_ARG_SCALAR: {
            const st_code_scalar *s = &g->scalars[a->index];
            st_buf_printf(out, "%s%s s_%s", sep, cg_mem_ctype(s->kind), s->name);
            break;
        }
        case CG_ARG_BUFFER: {
            /* restrict only where nothing is written: memory that work-items
             * share across a barrier must not be cached past it. A run
             * kernel has no barrier: its outputs are restrict too, so that
             * a run's stores to two of them may be reordered into vectors */
            const cg_buffer *b = &g->buffers[a->index];
            const char *space = cuda ? "" : "__global ", *restrict_ = cuda ? "__restrict__" : "restrict";
            bool restricted = !a->written || k->vec > 1;
            st_buf_printf(out, "%s%s%s%s *%s%s%s%s", sep, space, a->written ? "" : "const ", cg_mem_ctype(b->kind),
                          restricted ? restrict_ : "", restricted ? " " : "", k->vec > 1 ? "ST_ALIGNED16 " : "",
                          b->name);
            break;
        }
        case CG_ARG_LOCAL: {
            const char *t = cg_mem_ctype(a->elem);
            if (!cuda) {
                st_buf_printf(out, "%s__local %s *ST_LOCAL_RESTRICT %s", sep, t, a->name);
                break;
            }
            st_buf_printf(out, "%sunsigned long long %s_at", sep, a->name);
            st_buf_printf(&locals, "    %s *%s = (%s *)(strata_shared + %s_at);\n", t, a->name, t, a->name);
            break;
        }
        case CG_ARG_VALUE: st_buf_printf(out, "%slong %s", sep, a->name); break;
        }
    }
    st_buf_puts(out, ") {\n");
    if (locals.data) st_buf_puts(out, locals.data);
    st_buf_free(&locals);
    if (cuda)
        cg_cuda_translate(k->body.data ? k->body.data : "", out);
    else
        st_buf_puts(out, k->body.data ? k->body.data : "");
    st_buf_puts(out, "}\n\n");
}

/* The kernels in OpenCL C, or (cuda) the same kernels in CUDA C++ for NVRTC:
 * a header of extensions or the CUDA prelude, then the same defines, helper
 * functions, types and kernels (cg_cuda.c says what changes for CUDA). */
static const char *kernels_text(cg *g, bool cuda) {
    st_buf out = {0};
    st_buf_printf(&out, "/* %s generated by strata for `%s`", cuda ? "CUDA C++ (NVRTC)" : "OpenCL C 1.2", g->def->name);
    program_path(g, &out);
    st_buf_printf(&out, ". */\n");
    if (cuda) {
        st_buf_puts(&out, cg_cuda_prelude());
    } else {
        if (g->uses_f64) st_buf_puts(&out, "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
        bool base = g->uses_atomics64;
        for (uint32_t i = 0; cg_algorithms[i]; i++)
            if (cg_uses_algorithm(g, i) && cg_algorithms[i]->int64_atomics) {
                st_buf_puts(&out, cg_algorithms[i]->int64_atomics);
                base = true;
            }
        if (base) st_buf_puts(&out, "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n");
        if (g->uses_atomics64) st_buf_puts(&out, "#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable\n");
        st_buf_puts(&out, "#pragma OPENCL FP_CONTRACT OFF\n");
    }
    for (uint32_t i = 0; cg_algorithms[i]; i++)
        if (cg_uses_algorithm(g, i) && cg_algorithms[i]->prelude) st_buf_puts(&out, cg_algorithms[i]->prelude);
    st_buf_puts(&out, cg_prelude());
    st_buf_puts(&out, cg_fault_prelude(g));
    st_buf_puts(&out, "\n");
    if (g->types.data) st_buf_printf(&out, "%s\n", g->types.data);
    if (g->funcs.data && cuda) cg_cuda_translate(g->funcs.data, &out);
    if (g->funcs.data && !cuda) st_buf_puts(&out, g->funcs.data);
    for (uint32_t i = 0; i < g->nkernels; i++) kernel_text(g, g->kernels[i], cuda, &out);
    const char *r = cg_str(g, "%s", out.data ? out.data : "");
    if (out.failed) cg_fail(g, NULL, "out of memory");
    st_buf_free(&out);
    return r;
}

const char *cg_opencl(cg *g) { return kernels_text(g, false); }
const char *cg_cuda(cg *g) { return kernels_text(g, true); }

/* ---- the glue ---- */

static const char *glue_prelude =
    "#ifdef STRATA_JIT\n"
    "/* compiled by strata's libtcc, which has no system headers */\n"
    "typedef unsigned long size_t;\n"
    "typedef int cl_int;\n"
    "typedef unsigned int cl_uint;\n"
    "typedef unsigned long cl_ulong;\n"
    "typedef cl_ulong cl_mem_flags;\n"
    "typedef struct _cl_context *cl_context;\n"
    "typedef struct _cl_command_queue *cl_command_queue;\n"
    "typedef struct _cl_kernel *cl_kernel;\n"
    "typedef struct _cl_mem *cl_mem;\n"
    "typedef struct _cl_event *cl_event;\n"
    "typedef struct _cl_device_id *cl_device_id;\n"
    "#define NULL ((void *)0)\n"
    "#define CL_SUCCESS 0\n"
    "#define CL_TRUE 1\n"
    "#define CL_OUT_OF_RESOURCES -5\n"
    "#define CL_INVALID_VALUE -30\n"
    "#define CL_INVALID_MEM_OBJECT -38\n"
    "#define CL_INVALID_KERNEL -48\n"
    "#define CL_INVALID_BUFFER_SIZE -61\n"
    "#define CL_MEM_SIZE 0x1102\n"
    "#define CL_INVALID_WORK_GROUP_SIZE -54\n"
    "#define CL_MEM_READ_WRITE (1 << 0)\n"
    "#define CL_DEVICE_TYPE 0x1000\n"
    "#define CL_DEVICE_TYPE_CPU (1 << 1)\n"
    "#define CL_DEVICE_MAX_COMPUTE_UNITS 0x1002\n"
    "#define CL_DEVICE_MAX_WORK_GROUP_SIZE 0x1004\n"
    "#define CL_DEVICE_LOCAL_MEM_SIZE 0x1023\n"
    "#define CL_DEVICE_GLOBAL_MEM_CACHE_SIZE 0x101E\n"
    "#define CL_DEVICE_MAX_MEM_ALLOC_SIZE 0x1010\n"
    "#define CL_QUEUE_DEVICE 0x1091\n"
    "#define CL_KERNEL_WORK_GROUP_SIZE 0x11B0\n"
    "#define CL_KERNEL_LOCAL_MEM_SIZE 0x11B2\n"
    "#define CL_KERNEL_PRIVATE_MEM_SIZE 0x11B4\n"
    "cl_mem clCreateBuffer(cl_context, cl_mem_flags, size_t, void *, cl_int *);\n"
    "cl_int clReleaseMemObject(cl_mem);\n"
    "cl_int clSetKernelArg(cl_kernel, cl_uint, size_t, const void *);\n"
    "cl_int clEnqueueNDRangeKernel(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *,\n"
    "                              const size_t *, cl_uint, const cl_event *, cl_event *);\n"
    "cl_int clGetKernelWorkGroupInfo(cl_kernel, cl_device_id, cl_uint, size_t, void *, size_t *);\n"
    "cl_int clGetCommandQueueInfo(cl_command_queue, cl_uint, size_t, void *, size_t *);\n"
    "cl_int clGetDeviceInfo(cl_device_id, cl_uint, size_t, void *, size_t *);\n"
    "cl_int clEnqueueReadBuffer(cl_command_queue, cl_mem, cl_uint, size_t, size_t, void *, cl_uint,\n"
    "                           const cl_event *, cl_event *);\n"
    "cl_int clGetMemObjectInfo(cl_mem, cl_uint, size_t, void *, size_t *);\n"
    "cl_int clReleaseEvent(cl_event);\n"
    "cl_int clEnqueueWriteBuffer(cl_command_queue, cl_mem, cl_uint, size_t, size_t, const void *, cl_uint,\n"
    "                            const cl_event *, cl_event *);\n"
    "cl_int clEnqueueFillBuffer(cl_command_queue, cl_mem, const void *, size_t, size_t, size_t, cl_uint,\n"
    "                           const cl_event *, cl_event *);\n"
    "int snprintf(char *, size_t, const char *, ...);\n"
    "#else\n"
    "#define CL_TARGET_OPENCL_VERSION 120\n"
    "#include <CL/cl.h>\n"
    "#include <stdio.h>\n"
    "#endif\n"
    "\n";

/* after the descriptors' fault codes */
static const char *glue_prelude_rest =
    "/* what strata_run returns when a kernel indexed an array out of its range */\n"
    "#define STRATA_INDEX_OUT_OF_RANGE (-9002)\n"
    "/* what strata_run returns when take's or drop's count lies outside 0..the length of its array */\n"
    "#define STRATA_COUNT_OUT_OF_RANGE (-9003)\n"
    "/* what strata_run returns when a kernel divided an integer by zero (/ or %) */\n"
    "#define STRATA_DIVISION_BY_ZERO (-9004)\n"
    "/* what strata_run returns when a size, or a buffer's bytes or a launch's work-items, overflow 64 bits */\n"
    "#define STRATA_SIZE_OVERFLOW (-9005)\n"
    "#define STRATA_CPU_GROUP_PRIVATE ((cl_ulong)1 << 18)\n"
    "\n"
    "static inline long st_div_long(long a, long b) { return b == 0 ? 0 : a / b; }\n"
    "static inline long st_mod_long(long a, long b) { return b == 0 ? 0 : a % b; }\n"
    "\n"
    "/* The work-group size for a kernel: `want`, or what the device allows. */\n"
    "static inline size_t strata_group(cl_command_queue queue, cl_kernel kernel, size_t want) {\n"
    "    cl_device_id device;\n"
    "    size_t most = 0;\n"
    "    if (clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof device, &device, NULL) == CL_SUCCESS)\n"
    "        clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof most, &most, NULL);\n"
    "    return most && most < want ? most : want;\n"
    "}\n"
    "\n"
    "/* What the device is and has: a CPU or not, compute units, bytes of local memory and of its\n"
    "   global memory cache (0 where it does not say). */\n"
    "static inline long strata_compute_units(cl_command_queue queue) {\n"
    "    cl_device_id device;\n"
    "    cl_uint units = 1;\n"
    "    if (clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof device, &device, NULL) == CL_SUCCESS)\n"
    "        clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);\n"
    "    return units ? (long)units : 1;\n"
    "}\n"
    "/* one of the device's cl_ulong properties (the type, a size); 0 where it does not say */\n"
    "static inline cl_ulong strata_device_ulong(cl_command_queue queue, cl_uint what) {\n"
    "    cl_device_id device;\n"
    "    cl_ulong value = 0;\n"
    "    if (clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof device, &device, NULL) != CL_SUCCESS ||\n"
    "        clGetDeviceInfo(device, what, sizeof value, &value, NULL) != CL_SUCCESS)\n"
    "        value = 0;\n"
    "    return value;\n"
    "}\n"
    "static inline long strata_is_cpu(cl_command_queue queue) {\n"
    "    return (strata_device_ulong(queue, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_CPU) != 0;\n"
    "}\n"
    "static inline long strata_local_memory(cl_command_queue queue) {\n"
    "    return (long)strata_device_ulong(queue, CL_DEVICE_LOCAL_MEM_SIZE);\n"
    "}\n"
    "static inline long strata_global_cache(cl_command_queue queue) {\n"
    "    return (long)strata_device_ulong(queue, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE);\n"
    "}\n"
    "\n"
    "/* The run of consecutive elements a work-item of a map takes on a CPU: eight runs a\n"
    "   compute unit, so that a unit the machine's other work slows leaves its share to the\n"
    "   others (and a short map of costly elements still reaches every unit), each at most\n"
    "   16384 long and at least 64, a loop the compiler vectorises; a multiple of 64. */\n"
    "static inline size_t strata_map_run(cl_command_queue queue, size_t n) {\n"
    "    size_t units = (size_t)strata_compute_units(queue), run = n / (8 * (units ? units : 1));\n"
    "    run = run < 64 ? 64 : run > 16384 ? 16384 : run;\n"
    "    return run / 64 * 64;\n"
    "}\n"
    "\n"
    "/* A mapWrg launch: as many work-items per group as its widest mapLcl, or as\n"
    "   many as the device allows this kernel (its registers) when that is fewer:\n"
    "   every mapLcl is a loop strided by the group's size, so fewer work-items\n"
    "   compute the same. Local memory cannot shrink: too much is refused with a\n"
    "   reason before the launch. */\n"
    "static inline cl_int strata_fits(cl_command_queue queue, cl_kernel kernel, const char *name, size_t *group,\n"
    "                                 cl_ulong local_bytes, char *msg, size_t msgcap) {\n"
    "    cl_device_id device;\n"
    "    size_t most = 0, device_most = 0;\n"
    "    cl_ulong local_mem = 0, static_local = 0, private_mem = 0;\n"
    "    if (clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof device, &device, NULL) != CL_SUCCESS)\n"
    "        return CL_SUCCESS;\n"
    "    clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof most, &most, NULL);\n"
    "    clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof static_local, &static_local, NULL);\n"
    "    clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof device_most, &device_most, NULL);\n"
    "    clGetDeviceInfo(device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local_mem, &local_mem, NULL);\n"
    "    if (device_most && *group > device_most) *group = device_most;\n"
    "    if (most && *group > most) *group = most;\n"
    "    /* on a CPU a group's work-items are one thread's loop, and their private\n"
    "       arrays share its stack: a group of 4096 with rows of a block each\n"
    "       overflows it, so the group keeps within STRATA_CPU_GROUP_PRIVATE */\n"
    "    clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof private_mem, &private_mem, NULL);\n"
    "    if (private_mem && strata_is_cpu(queue) && *group * private_mem > STRATA_CPU_GROUP_PRIVATE)\n"
    "        *group = STRATA_CPU_GROUP_PRIVATE / private_mem ? STRATA_CPU_GROUP_PRIVATE / private_mem : 1;\n"
    "    /* the kernel's own figure counts the __local arguments already set */\n"
    "    if (static_local > local_bytes) local_bytes = static_local;\n"
    "    if (local_mem && local_bytes > local_mem) {\n"
    "        snprintf(msg, msgcap, \"%s needs %lu bytes of local memory per work-group; the device has %lu \"\n"
    "                 \"(choose a smaller block size)\", name, (unsigned long)local_bytes, (unsigned long)local_mem);\n"
    "        return CL_OUT_OF_RESOURCES;\n"
    "    }\n"
    "    return CL_SUCCESS;\n"
    "}\n\n";

/* global = n groups of `group` work-items, refused where a size_t cannot count them */
static void items_checked(const cg_kernel *k, st_buf *out) {
    st_buf_printf(out, "        global = strata_items(n, group, &bad);\n"
                       "        if (bad) {\n"
                       "            snprintf(msg, msgcap, \"launching %s: %%lu groups of %%lu work-items overflow 64 bits\",\n"
                       "                     (unsigned long)n, (unsigned long)group);\n"
                       "            err = STRATA_SIZE_OVERFLOW;\n"
                       "            goto done;\n"
                       "        }\n", k->name);
}

static void launch_text(cg *g, uint32_t index, const cg_kernel *k, st_buf *out) {
    st_buf_printf(out, "    /* %s — %s: %s */\n", k->name, shape_name(k), k->what);
    const char *count = k->shape == CG_SHAPE_SINGLE ? "1" : k->count_c ? k->count_c : cg_size(g, k->count);
    st_buf_printf(out, "    n = (size_t)(%s);\n", count);
    if (k->count_c) /* the glue's own values' arithmetic (a descriptor's), checked as it goes */
        st_buf_printf(out, "    if (bad) {\n"
                           "        snprintf(msg, msgcap, \"launching %s: its count of work-items overflows 64 bits\");\n"
                           "        err = STRATA_SIZE_OVERFLOW;\n"
                           "        goto done;\n"
                           "    }\n", k->name);
    st_buf_puts(out, "    if (n > 0) {\n");
    st_buf_puts(out, "        local_bytes = 0;\n");
    for (uint32_t i = 0; i < k->nargs; i++) {
        const cg_arg *a = &k->args[i];
        switch (a->kind) {
        case CG_ARG_SCALAR: {
            const st_code_scalar *s = &g->scalars[a->index];
            st_buf_printf(out, "        err = clSetKernelArg(kernels[%u], %u, %zu, scalars[%d]);\n", index, i,
                          st_scalar_size(s->kind), a->index);
            break;
        }
        case CG_ARG_BUFFER:
            st_buf_printf(out, "        err = clSetKernelArg(kernels[%u], %u, sizeof(cl_mem), &%s);\n", index, i,
                          g->buffers[a->index].name);
            break;
        case CG_ARG_VALUE:
            st_buf_printf(out, "        err = clSetKernelArg(kernels[%u], %u, sizeof(long), &%s);\n", index, i, a->name);
            break;
        case CG_ARG_LOCAL:
            st_buf_printf(out, "        bytes = strata_bytes(%s, %zu, 0, &bad);\n",
                          a->count_c ? a->count_c : cg_size(g, a->count), st_scalar_size(a->elem));
            st_buf_printf(out, "        if (bad) {\n"
                               "            snprintf(msg, msgcap, \"%s: its local memory %s overflows 64 bits\");\n"
                               "            err = STRATA_SIZE_OVERFLOW;\n"
                               "            goto done;\n"
                               "        }\n", k->name, a->name);
            st_buf_printf(out, "        local_bytes = strata_sum(local_bytes, bytes ? bytes : 1);\n");
            st_buf_printf(out, "        err = clSetKernelArg(kernels[%u], %u, bytes ? bytes : 1, NULL);\n", index, i);
            break;
        }
        st_buf_printf(out, "        if (err != CL_SUCCESS) {\n"
                           "            snprintf(msg, msgcap, \"setting argument %u of %s\");\n"
                           "            goto done;\n        }\n", i, k->name);
    }
    switch (k->shape) {
    case CG_SHAPE_SINGLE: st_buf_puts(out, "        group = 1;\n        global = 1;\n"); break;
    case CG_SHAPE_GLB:
        /* a CPU's OpenCL (PoCL) runs a group's work-items as one loop, which it
           vectorises: each lane a work-item. Where each work-item loops over
           its own chunk or row, a lane each makes gathers, and the work-items'
           accumulators spill (docs/performance.md has a fold of 32-counter
           rows both ways); a group of one keeps the work-item's loop,
           vectorised along it */
        st_buf_printf(out, "        group = %sstrata_group(queue, kernels[%u], 256);\n"
                           "        global = (n + group - 1) / group * group;\n",
                      k->loops || k->runs ? "strata_is_cpu(queue) ? 1 : " : "", index);
        if (k->runs)
            st_buf_puts(out, "        if (strata_is_cpu(queue)) { /* each work-item a run (cg_host.c) */\n"
                             "            size_t run = strata_map_run(queue, n);\n"
                             "            global = (n + run - 1) / run;\n"
                             "        }\n");
        if (k->runs && k->vec > 1)
            st_buf_printf(out, "        else /* a run of %d, 16 bytes of its narrowest array (cg_host.c) */\n"
                               "            global = ((n + %d - 1) / %d + group - 1) / group * group;\n",
                          k->vec, k->vec, k->vec);
        break;
    case CG_SHAPE_WRG:
        /* as many work-items as the widest mapLcl inside; on a CPU one, unless
           a parameter chose them (lanes_c): there a group's work-items are
           one thread's loop around each stretch between barriers, every
           live value kept per work-item across them, so a group of one
           runs the same mapLcl loops as plain loops, several times faster
           (docs/performance.md has the figures) */
        st_buf_puts(out, "        group = 1;\n");
        if (k->lanes_c) st_buf_printf(out, "        group = (size_t)(%s);\n", k->lanes_c);
        if (!k->lanes_c && k->nlanes) st_buf_puts(out, "        if (!strata_is_cpu(queue)) {\n");
        for (uint32_t i = 0; i < k->nlanes; i++)
            st_buf_printf(out, "%s        if ((size_t)(%s) > group) group = (size_t)(%s);\n",
                          k->lanes_c ? "" : "    ", cg_size(g, k->lanes[i]), cg_size(g, k->lanes[i]));
        if (!k->lanes_c && k->nlanes) st_buf_puts(out, "        }\n");
        st_buf_printf(out, "        err = strata_fits(queue, kernels[%u], \"%s\", &group, local_bytes, msg, msgcap);\n"
                           "        if (err != CL_SUCCESS) goto done;\n", index, k->name);
        items_checked(k, out);
        break;
    case CG_SHAPE_EXACT: {
        /* the kernel's local arrays are sized for exactly this many */
        const char *want = cg_size(g, k->lanes[0]);
        st_buf_printf(out, "        group = (size_t)(%s);\n"
                           "        err = strata_fits(queue, kernels[%u], \"%s\", &group, local_bytes, msg, msgcap);\n"
                           "        if (err != CL_SUCCESS) goto done;\n"
                           "        if (group < (size_t)(%s)) {\n"
                           "            snprintf(msg, msgcap, \"%s needs work-groups of %%lu work-items; the device runs at most %%lu of it \"\n"
                           "                     \"(choose a smaller WG)\", (unsigned long)(%s), (unsigned long)group);\n"
                           "            err = CL_INVALID_WORK_GROUP_SIZE;\n"
                           "            goto done;\n"
                           "        }\n", want, index, k->name, want, k->name, want);
        items_checked(k, out);
        break;
    }
    }
    if (k->repeated) /* a loop's: the last turn's event is kept, and the first's where first_events asks (a
                        timing spans the first launch to the last) */
        st_buf_printf(out, "        if (events[%u]) {\n"
                           "            if (first_events && !first_events[%u]) first_events[%u] = events[%u];\n"
                           "            else clReleaseEvent(events[%u]);\n"
                           "            events[%u] = NULL;\n        }\n",
                      index, index, index, index, index, index);
    st_buf_printf(out, "        err = clEnqueueNDRangeKernel(queue, kernels[%u], 1, NULL, &global, &group, 0, NULL, &events[%u]);\n"
                       "        if (err != CL_SUCCESS) {\n"
                       "            snprintf(msg, msgcap, \"launching %s (%%lu work-items in groups of %%lu)\",\n"
                       "                     (unsigned long)global, (unsigned long)group);\n"
                       "            goto done;\n        }\n",
                  index, index, k->name);
    st_buf_puts(out, "    }\n\n");
}

typedef struct named {
    const char *name;
    bool found;
} named;

static void find_name(const char *name, void *data) {
    named *n = data;
    if (!strcmp(name, n->name)) n->found = true;
}

/* Is scalar `name` a size: a size variable, or a parameter that an input's
 * or output's length is counted in (a count of buckets, say)? */
static bool is_size(const cg *g, const char *name) {
    for (uint32_t i = 0; i < g->def->nsizes; i++)
        if (!strcmp(g->def->sizes[i]->u.name, name)) return true;
    named n = {name, false};
    for (uint32_t i = 0; i < g->nbuffers && !n.found; i++)
        if (cg_is_argument(&g->buffers[i]) && g->buffers[i].count) st_size_each_var(g->buffers[i].count, find_name, &n);
    return n.found;
}

/* The start of strata_run: it trusts nothing its caller gives it (the
 * contract at the top of the file). A NULL where an array or a value is
 * needed, a negative size, a buffer smaller than the sizes say or a kernel
 * missing is refused with CL_INVALID_VALUE, CL_INVALID_BUFFER_SIZE,
 * CL_INVALID_MEM_OBJECT or CL_INVALID_KERNEL and a sentence, before anything
 * is read or launched; no msg to write it in (NULL, or msgcap 0) is
 * CL_INVALID_VALUE alone. The scalars are read once checked; the buffers
 * (buffers_checked) once the sizes are. */
static void arguments_checked(cg *g, st_buf *out) {
    st_buf_puts(out, "    int bad = 0; /* a size's arithmetic overflowed (strata_mul …) */\n"
                     "    (void)bad;\n"
                     "    if (!msg || msgcap == 0) return CL_INVALID_VALUE;\n"
                     "    msg[0] = 0;\n"
                     "    if (!kernels || !events) {\n"
                     "        snprintf(msg, msgcap, \"strata_run: kernels and events must not be NULL\");\n"
                     "        return CL_INVALID_VALUE;\n"
                     "    }\n");
    const struct {
        const char *array;
        uint32_t n;
    } arrays[] = {{"inputs", cg_buffers_of(g, CG_BUF_INPUT)}, {"outputs", cg_buffers_of(g, CG_BUF_OUTPUT)},
                  {"scalars", g->nscalars}};
    for (size_t a = 0; a < sizeof arrays / sizeof *arrays; a++) {
        if (!arrays[a].n) continue;
        st_buf_printf(out, "    if (!%s) {\n"
                           "        snprintf(msg, msgcap, \"strata_run: %s must not be NULL (it holds %u)\");\n"
                           "        return CL_INVALID_VALUE;\n"
                           "    }\n"
                           "    for (int i = 0; i < %u; i++)\n"
                           "        if (!%s[i]) {\n"
                           "            snprintf(msg, msgcap, \"strata_run: %s[%%d] is NULL\", i);\n"
                           "            return CL_INVALID_VALUE;\n"
                           "        }\n",
                      arrays[a].array, arrays[a].array, arrays[a].n, arrays[a].n, arrays[a].array, arrays[a].array);
    }
    st_buf_printf(out, "    for (int i = 0; i < %u; i++)\n"
                       "        if (!kernels[i]) {\n"
                       "            snprintf(msg, msgcap, \"strata_run: kernels[%%d] is NULL\", i);\n"
                       "            return CL_INVALID_KERNEL;\n"
                       "        }\n",
                  g->nkernels);
    for (uint32_t i = 0; i < g->nscalars; i++) {
        const st_code_scalar *s = &g->scalars[i];
        st_buf_printf(out, "    const %s s_%s = *(const %s *)scalars[%u];\n    (void)s_%s;\n", host_ctype[s->kind],
                      s->name, host_ctype[s->kind], i, s->name);
        if (is_size(g, s->name))
            st_buf_printf(out, "    if (s_%s < 0) {\n"
                               "        snprintf(msg, msgcap, \"strata_run: the size %s is %%ld; a size is 0 or more\", (long)s_%s);\n"
                               "        return CL_INVALID_VALUE;\n"
                               "    }\n",
                          s->name, s->name, s->name);
    }
}

/* Every input and output at least as large as its elements (the
 * runtime's outputs have a guard region after them: larger is fine), once
 * the sizes are known not to overflow (cg_sizes_checked). */
static void buffers_checked(cg *g, st_buf *out) {
    for (uint32_t i = 0; i < g->nbuffers; i++) {
        const cg_buffer *b = &g->buffers[i];
        if (!cg_is_argument(b)) continue;
        const char *array = b->role == CG_BUF_INPUT ? "inputs" : "outputs";
        size_t elem = st_scalar_size(b->kind);
        st_buf_printf(out, "    {\n"
                           "        size_t have = 0;\n"
                           "        unsigned long count = (unsigned long)(%s);\n"
                           "        if (clGetMemObjectInfo(%s[%d], CL_MEM_SIZE, sizeof have, &have, NULL) != CL_SUCCESS) {\n"
                           "            snprintf(msg, msgcap, \"strata_run: %s[%d] is not a buffer\");\n"
                           "            return CL_INVALID_MEM_OBJECT;\n"
                           "        }\n"
                           "        if (count > (unsigned long)-1 / %zu || have < count * %zu) {\n"
                           "            snprintf(msg, msgcap, \"strata_run: %s[%d] holds %%lu bytes; %%lu elements of %zu bytes need more\",\n"
                           "                     (unsigned long)have, count);\n"
                           "            return CL_INVALID_BUFFER_SIZE;\n"
                           "        }\n"
                           "    }\n",
                      b->count_c ? b->count_c : cg_size(g, b->count), array, b->index, array, b->index, elem, elem,
                      array, b->index, elem);
    }
}

static void glue_body(cg *g, st_buf *out);

void cg_glue_call(st_buf *out, const char *what, const char *call_fmt, ...) {
    va_list ap, again;
    va_start(ap, call_fmt);
    va_copy(again, ap);
    int len = vsnprintf(NULL, 0, call_fmt, ap);
    char *call = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (call) vsnprintf(call, (size_t)len + 1, call_fmt, again);
    else out->failed = true;
    va_end(again);
    va_end(ap);
    st_buf_printf(out, "        err = %s;\n        if (err != CL_SUCCESS) {\n            snprintf(msg, msgcap, \"%s\");\n"
                       "            goto done;\n        }\n", call ? call : "", what);
    free(call);
}

/* The result's lengths known only at run time, into the output after the
 * others once everything has run (the contract at the top of the file). */
static void lengths_text(cg *g, st_buf *out) {
    if (g->lengths_buffer < 0) return;
    st_buf_printf(out, "    {\n        long lengths[%u] = {", g->nlengths);
    for (uint32_t i = 0; i < g->nlengths; i++) st_buf_printf(out, "%s(long)(%s)", i ? ", " : "", cg_size(g, g->lengths[i]));
    st_buf_puts(out, "};\n");
    cg_glue_call(out, "writing the result's lengths",
                 "clEnqueueWriteBuffer(queue, %s, CL_TRUE, 0, sizeof lengths, lengths, 0, NULL, NULL)",
                 g->buffers[g->lengths_buffer].name);
    st_buf_puts(out, "    }\n");
}

const char *cg_glue(cg *g) {
    st_buf out = {0};
    st_buf_printf(&out, "/* Host glue generated by strata for `%s`", g->def->name);
    program_path(g, &out);
    st_buf_printf(&out, ".\n *\n * int strata_run(context, queue, kernels, inputs, outputs, scalars, events, msg, msgcap)\n"
                        " *   kernels: %u, created from the .cl file in this order:", g->nkernels);
    for (uint32_t i = 0; i < g->nkernels; i++) st_buf_printf(&out, " %s", g->kernels[i]->name);
    st_buf_printf(&out, "\n *   inputs:  %u buffers; outputs: %u buffers; scalars:", cg_buffers_of(g, CG_BUF_INPUT),
                  cg_buffers_of(g, CG_BUF_OUTPUT));
    for (uint32_t i = 0; i < g->nscalars; i++)
        st_buf_printf(&out, " %s (%s)", g->scalars[i].name, st_scalar_name(g->scalars[i].kind));
    if (g->lengths_buffer >= 0)
        st_buf_printf(&out, "\n *   the last output, %s, holds %u longs: the result's lengths known only at run\n"
                            " *     time (each earlier output is allocated for its worst case and holds that many\n"
                            " *     elements; its first ones, as many as its length says, are the result), written\n"
                            " *     once everything has run, in the order:",
                      g->buffers[g->lengths_buffer].name, g->nlengths);
    for (uint32_t i = 0; i < g->nlengths; i++) {
        st_buf lb = {0};
        st_size_print(g->lengths[i], &lb);
        st_buf_puts(&out, " ");
        if (lb.data) cg_put_escaped(&out, lb.data, strlen(lb.data));
        st_buf_free(&lb);
    }
    st_buf_printf(&out, "\n *   events:  %u, one per kernel, its last launch's (NULL when it had nothing to do)\n"
                        " * Returns CL_SUCCESS, or an OpenCL error with a sentence in msg.\n"
                        " *\n"
                        " * strata_run_timed(…, events, first_events, msg, msgcap) is the same, and where\n"
                        " * first_events is not NULL (as many slots as events) it also keeps there the\n"
                        " * first launch's event of each kernel that a loop launches again (NULL for the\n"
                        " * others), the caller's to release: a timing from the first launch to the last.\n"
                        " *\n"
                        " * It checks what it is given before it reads or launches anything:\n"
                        " *   msg NULL or msgcap 0: CL_INVALID_VALUE, and nothing is written;\n"
                        " *   kernels, events, inputs, outputs or scalars NULL, or any of their entries\n"
                        " *     (events' entries are written, not read): CL_INVALID_VALUE (a NULL kernel:\n"
                        " *     CL_INVALID_KERNEL);\n"
                        " *   a size below 0: CL_INVALID_VALUE;\n"
                        " *   an input or output that is not a buffer: CL_INVALID_MEM_OBJECT; one smaller\n"
                        " *     (CL_MEM_SIZE) than its elements for these sizes: CL_INVALID_BUFFER_SIZE;\n"
                        " * each with a sentence in msg (cut to msgcap bytes, always terminated). What it\n"
                        " * cannot check is the caller's: kernels made from this program's .cl file in the\n"
                        " * order above on the queue's device, scalars pointing to values of their types,\n"
                        " * and arrays of at least the counts above. A kernel that finds an index out of\n"
                        " * range returns STRATA_INDEX_OUT_OF_RANGE, ",
                  g->nkernels);
    /* every descriptor's fault, used or not: the contract and the codes are
     * the same in every glue, so a caller names them whatever program it runs */
    for (uint32_t i = 0; cg_algorithms[i]; i++)
        if (cg_algorithms[i]->fault_contract) st_buf_puts(&out, cg_algorithms[i]->fault_contract);
    st_buf_puts(&out, "a take or drop whose count lies outside 0..the length\n"
                      " * of its array STRATA_COUNT_OUT_OF_RANGE, an integer divided by zero\n"
                      " * STRATA_DIVISION_BY_ZERO (all below), with a sentence in msg.\n */\n");
    st_buf_puts(&out, glue_prelude);
    for (uint32_t i = 0; cg_algorithms[i]; i++)
        if (cg_algorithms[i]->fault_name)
            st_buf_printf(&out, "/* what strata_run returns when %s */\n#define %s (%d)\n", cg_algorithms[i]->fault_when,
                          cg_algorithms[i]->fault_name, cg_algorithms[i]->fault_code);
    st_buf_puts(&out, glue_prelude_rest);
    st_buf_puts(&out, cg_sizes_prelude());
    for (uint32_t i = 0; cg_algorithms[i]; i++)
        if (cg_uses_algorithm(g, i) && cg_algorithms[i]->glue_prelude) cg_algorithms[i]->glue_prelude(&out);
    st_buf_puts(&out, "int strata_run_timed(cl_context context, cl_command_queue queue, cl_kernel *kernels, cl_mem *inputs,\n"
                      "                     cl_mem *outputs, const void *const *scalars, cl_event *events,\n"
                      "                     cl_event *first_events, char *msg, size_t msgcap) {\n");
    arguments_checked(g, &out);
    /* the rest first, so that every size it computes is noted before the
     * sizes are checked, ahead of it (cg_sizes.c) */
    st_buf rest = {0};
    glue_body(g, &rest);
    cg_sizes_checked(g, &out);
    if (rest.data) st_buf_puts(&out, rest.data);
    if (rest.failed) out.failed = true;
    st_buf_free(&rest);
    st_buf_puts(&out, "int strata_run(cl_context context, cl_command_queue queue, cl_kernel *kernels, cl_mem *inputs,\n"
                      "               cl_mem *outputs, const void *const *scalars, cl_event *events, char *msg,\n"
                      "               size_t msgcap) {\n"
                      "    return strata_run_timed(context, queue, kernels, inputs, outputs, scalars, events, NULL, msg, msgcap);\n"
                      "}\n");
    const char *r = cg_str(g, "%s", out.data ? out.data : "");
    if (out.failed) cg_fail(g, NULL, "out of memory");
    st_buf_free(&out);
    return r;
}

/* strata_run after its arguments and sizes are checked: the buffers given,
 * then the temporaries, the launches and what the kernels found wrong. */
static void glue_body(cg *g, st_buf *outp) {
    st_buf out = *outp;
    buffers_checked(g, &out);
    st_buf_puts(&out, "    cl_int err = CL_SUCCESS;\n    size_t n, bytes, group, global;\n    cl_ulong local_bytes;\n"
                      "    cl_ulong max_alloc = strata_device_ulong(queue, CL_DEVICE_MAX_MEM_ALLOC_SIZE);\n"
                      "    (void)bytes;\n    (void)local_bytes;\n    (void)max_alloc;\n    (void)context;\n");
    for (uint32_t i = 0; i < g->nbuffers; i++) {
        const cg_buffer *b = &g->buffers[i];
        if (!cg_is_argument(b))
            st_buf_printf(&out, "    cl_mem %s = NULL;\n", b->name);
        else
            st_buf_printf(&out, "    cl_mem %s = %s[%d];\n    (void)%s;\n", b->name,
                          b->role == CG_BUF_INPUT ? "inputs" : "outputs", b->index, b->name);
    }
    st_buf_printf(&out, "    for (int i = 0; i < %u; i++) events[i] = NULL;\n", g->nkernels);
    st_buf_printf(&out, "    if (first_events)\n        for (int i = 0; i < %u; i++) first_events[i] = NULL;\n\n", g->nkernels);
    if (g->glue_values.data) st_buf_printf(&out, "%s\n", g->glue_values.data);
    for (uint32_t i = 0; i < g->nbuffers; i++) {
        const cg_buffer *b = &g->buffers[i];
        if (b->role != CG_BUF_TEMP) continue;
        const char *count = b->count_c ? b->count_c : cg_size(g, b->count);
        /* LINE:COL: first, the error's place (runtime.c's st_launch_run) */
        char at[48] = "";
        if (b->line > 0) snprintf(at, sizeof at, "%d:%d: ", b->line, b->col);
        /* whole 32-bit words where elements are narrower, which an atomic
         * compare-and-swap on a narrow element takes */
        st_buf_printf(&out, "    bytes = strata_bytes(%s, %zu, %d, &bad);\n"
                            "    if (bad) {\n"
                            "        snprintf(msg, msgcap, \"%sallocating %s: %%ld elements of %zu bytes overflow 64 bits\",\n"
                            "                 (long)(%s));\n"
                            "        err = STRATA_SIZE_OVERFLOW;\n"
                            "        goto done;\n"
                            "    }\n"
                            "    if (max_alloc && bytes > max_alloc) {\n"
                            "        snprintf(msg, msgcap, \"%sallocating %%lu bytes for %s: the device allocates at most %%lu bytes \"\n"
                            "                 \"in one buffer (CL_DEVICE_MAX_MEM_ALLOC_SIZE)\", (unsigned long)bytes, (unsigned long)max_alloc);\n"
                            "        err = CL_INVALID_BUFFER_SIZE;\n"
                            "        goto done;\n"
                            "    }\n"
                            "    %s = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes ? bytes : 1, NULL, &err);\n"
                            "    if (err != CL_SUCCESS) {\n"
                            "        snprintf(msg, msgcap, \"allocating %%lu bytes for %s\", (unsigned long)bytes);\n"
                            "        goto done;\n    }\n",
                      count, st_scalar_size(b->kind), st_scalar_size(b->kind) < 4, at, b->name, st_scalar_size(b->kind), count,
                      at, b->name, b->name, b->name);
    }
    cg_fault_zero(g, &out);
    st_buf_puts(&out, "\n");
    uint32_t m = 0;
    for (uint32_t i = 0; i <= g->nkernels; i++) {
        for (; m < g->nmarks && g->marks[m].before == i; m++) st_buf_puts(&out, g->marks[m].text);
        if (i < g->nkernels) launch_text(g, i, g->kernels[i], &out);
    }
    cg_fault_glue(g, &out);
    lengths_text(g, &out);
    st_buf_puts(&out, "done:\n");
    for (uint32_t i = 0; i < g->nbuffers; i++)
        if (g->buffers[i].role == CG_BUF_TEMP)
            st_buf_printf(&out, "    if (%s) clReleaseMemObject(%s);\n", g->buffers[i].name, g->buffers[i].name);
    st_buf_puts(&out, "    return err;\n}\n\n");
    *outp = out;
}
