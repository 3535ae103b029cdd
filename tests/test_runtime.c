/* tests/test_runtime.c — the OpenCL runtime: opening a device, building a
 * program with its glue JIT-compiled by libtcc, uploading inputs, running,
 * timing and reading results back.
 *
 * The code generator is not needed: each test writes an st_code by hand, an
 * OpenCL kernel and a host glue of the shape the generator emits (the glue
 * contract at the top of codegen/codegen.h). Results are checked against a
 * computed expectation and the reference interpreter. PoCL is installed
 * wherever these tests run. */
#include "codegen/codegen.h"
#include "harness.h"

#include <ctype.h>

/* The glue's prelude: self-contained under the JIT (compiled with -nostdlib
 * -nostdinc, so every type, constant and prototype it uses is spelled out;
 * the values are OpenCL's), the real headers when compiled as an exported .c
 * file. */
#define GLUE_PRELUDE                                                                                          \
    "#ifdef STRATA_JIT\n"                                                                                     \
    "typedef unsigned long size_t;\n"                                                                         \
    "typedef int cl_int;\n"                                                                                   \
    "typedef unsigned int cl_uint;\n"                                                                         \
    "typedef long cl_long;\n"                                                                                 \
    "typedef unsigned long cl_ulong;\n"                                                                       \
    "typedef float cl_float;\n"                                                                               \
    "typedef cl_ulong cl_mem_flags;\n"                                                                        \
    "typedef cl_uint cl_device_info;\n"                                                                       \
    "typedef cl_uint cl_command_queue_info;\n"                                                                \
    "typedef cl_uint cl_kernel_work_group_info;\n"                                                            \
    "typedef struct _cl_context *cl_context;\n"                                                               \
    "typedef struct _cl_command_queue *cl_command_queue;\n"                                                   \
    "typedef struct _cl_device_id *cl_device_id;\n"                                                           \
    "typedef struct _cl_kernel *cl_kernel;\n"                                                                 \
    "typedef struct _cl_mem *cl_mem;\n"                                                                       \
    "typedef struct _cl_event *cl_event;\n"                                                                   \
    "#define NULL ((void *)0)\n"                                                                              \
    "#define CL_SUCCESS 0\n"                                                                                  \
    "#define CL_MEM_READ_WRITE (1 << 0)\n"                                                                    \
    "#define CL_DEVICE_MAX_WORK_GROUP_SIZE 0x1004\n"                                                          \
    "#define CL_QUEUE_DEVICE 0x1091\n"                                                                        \
    "#define CL_KERNEL_WORK_GROUP_SIZE 0x11B0\n"                                                              \
    "cl_mem clCreateBuffer(cl_context, cl_mem_flags, size_t, void *, cl_int *);\n"                            \
    "cl_int clReleaseMemObject(cl_mem);\n"                                                                    \
    "cl_int clSetKernelArg(cl_kernel, cl_uint, size_t, const void *);\n"                                      \
    "cl_int clEnqueueNDRangeKernel(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *,\n"   \
    "                              const size_t *, cl_uint, const cl_event *, cl_event *);\n"                 \
    "cl_int clGetKernelWorkGroupInfo(cl_kernel, cl_device_id, cl_kernel_work_group_info, size_t, void *,\n"   \
    "                                size_t *);\n"                                                            \
    "cl_int clGetCommandQueueInfo(cl_command_queue, cl_command_queue_info, size_t, void *, size_t *);\n"      \
    "cl_int clGetDeviceInfo(cl_device_id, cl_device_info, size_t, void *, size_t *);\n"                       \
    "cl_int clEnqueueCopyBuffer(cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint,\n"         \
    "                           const cl_event *, cl_event *);\n"                                             \
    "cl_int clEnqueueFillBuffer(cl_command_queue, cl_mem, const void *, size_t, size_t, size_t, cl_uint,\n"   \
    "                           const cl_event *, cl_event *);\n"                                             \
    "cl_int clReleaseEvent(cl_event);\n"                                                                      \
    "cl_int clFinish(cl_command_queue);\n"                                                                    \
    "int snprintf(char *, size_t, const char *, ...);\n"                                                      \
    "#else\n"                                                                                                 \
    "#define CL_TARGET_OPENCL_VERSION 120\n"                                                                  \
    "#include <CL/cl.h>\n"                                                                                    \
    "#include <stdio.h>\n"                                                                                    \
    "#endif\n"

#define GLUE_SIGNATURE                                                                                        \
    "int strata_run(cl_context ctx, cl_command_queue queue, cl_kernel *kernels, cl_mem *inputs,\n"            \
    "               cl_mem *outputs, const void *const *scalars, cl_event *events, char *msg,\n"              \
    "               size_t msgcap)\n"

/* ---- y = a * x + 1 over [N]f32 ------------------------------------------ */

static const char *const map_src = "def main(xs: [N]f32, a: f32): [N]f32 = xs |> map(x => a * x + 1.0)\n";

/* FP_CONTRACT OFF: no fused multiply-add, so the result is bit-exact */
static const char *const map_kernel =
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "kernel void k_map(global const float *xs, global float *ys, float a, long n) {\n"
    "    long i = get_global_id(0);\n"
    "    if (i < n) ys[i] = a * xs[i] + 1.0f;\n"
    "}\n";

/* %zu: the work-group size the glue asks for */
static const char *const map_glue_fmt =
    GLUE_PRELUDE GLUE_SIGNATURE
    "{\n"
    "    (void)ctx;\n"
    "    cl_float a = *(const cl_float *)scalars[0];\n"
    "    cl_long n = *(const cl_long *)scalars[1];\n"
    "    if (n == 0) {\n"
    "        events[0] = NULL; /* nothing to do */\n"
    "        return CL_SUCCESS;\n"
    "    }\n"
    "    size_t local = %zu;\n"
    "    size_t global = ((size_t)n + local - 1) / local * local;\n"
    "    cl_int rc = clSetKernelArg(kernels[0], 0, sizeof(cl_mem), &inputs[0]);\n"
    "    if (rc == CL_SUCCESS) rc = clSetKernelArg(kernels[0], 1, sizeof(cl_mem), &outputs[0]);\n"
    "    if (rc == CL_SUCCESS) rc = clSetKernelArg(kernels[0], 2, sizeof a, &a);\n"
    "    if (rc == CL_SUCCESS) rc = clSetKernelArg(kernels[0], 3, sizeof n, &n);\n"
    "    if (rc != CL_SUCCESS) {\n"
    "        snprintf(msg, msgcap, \"binding the arguments of k_map\");\n"
    "        return rc;\n"
    "    }\n"
    "    rc = clEnqueueNDRangeKernel(queue, kernels[0], 1, NULL, &global, &local, 0, NULL, &events[0]);\n"
    "    if (rc != CL_SUCCESS) {\n"
    "        snprintf(msg, msgcap, \"launching k_map with work-groups of %%zu\", local);\n"
    "        return rc;\n"
    "    }\n"
    "    return CL_SUCCESS;\n"
    "}\n";

static const char *const map_names[] = {"k_map"};

static const st_def *def_of(st_ctx *cx, const char *src) {
    st_err err = {0};
    const st_def *d = st_program_entry(parse_ok(cx, src), NULL, &err);
    ck_assert_msg(d != NULL, "%s", err.message);
    return d;
}

/* The st_code for map_src (or a def of the same signature and an [N]f32
 * leaf as result) with a glue launching work-groups of `local`. */
static st_code map_code(st_ctx *cx, st_arena *a, const char *src, size_t local) {
    const st_def *d = def_of(cx, src);
    const st_size *n = d->params[0]->type->size;
    st_code c = {0};
    c.def = d;
    c.opencl = map_kernel;
    char *glue = st_arena_alloc(a, strlen(map_glue_fmt) + 32);
    sprintf(glue, map_glue_fmt, local);
    c.host = glue;
    c.nkernels = 1;
    c.kernel_names = map_names;
    st_code_array *in = st_arena_alloc(a, sizeof *in), *out = st_arena_alloc(a, sizeof *out);
    *in = (st_code_array){ST_F32, n};
    *out = (st_code_array){ST_F32, n};
    c.ninputs = 1;
    c.inputs = in;
    st_code_scalar *sc = st_arena_alloc(a, 2 * sizeof *sc);
    sc[0] = (st_code_scalar){d->params[1]->u.name, ST_F32};
    sc[1] = (st_code_scalar){d->sizes[0]->u.name, ST_I64};
    c.nscalars = 2;
    c.scalars = sc;
    c.noutputs = 1;
    c.outputs = out;
    return c;
}

static st_cl *open_ok(const char *spec) {
    st_err err = {0};
    st_cl *cl = st_cl_open(spec, &err);
    ck_assert_msg(cl != NULL, "st_cl_open(%s): %s", spec ? spec : "NULL", err.message);
    return cl;
}

static st_exe *build_ok(st_cl *cl, const st_code *c) {
    st_err err = {0};
    st_exe *exe = st_exe_build(cl, c, &err);
    ck_assert_msg(exe != NULL, "st_exe_build: %s", err.message);
    return exe;
}

/* Inputs for map_src: xs[i] some floats, a = 1.5. */
static void map_inputs(st_ctx *cx, st_arena *a, const st_def *d, int64_t n, st_value *args, st_binding *env) {
    (void)cx;
    float *xs = st_arena_alloc(a, (size_t)(n ? n : 1) * sizeof *xs);
    for (int64_t i = 0; i < n; i++) xs[i] = (float)(i % 1013) * 0.25f - 100.0f;
    args[0] = array_of(ST_F32, n, xs, a);
    args[1] = scalar_of(ST_F32, (st_scalar){.f32 = 1.5f});
    env[0] = (st_binding){d->sizes[0]->u.name, n};
}

static void check_map_result(const st_value *r, const st_value *args, int64_t n) {
    ck_assert_int_eq(r->kind, ST_VALUE_ARRAY);
    ck_assert_int_eq(r->scalar, ST_F32);
    ck_assert_uint_eq(r->n, 1);
    ck_assert_int_eq(r->u.a.dims[0], n);
    const float *xs = args[0].u.a.data, *ys = r->u.a.data;
    float a = args[1].u.s.f32;
    for (int64_t i = 0; i < n; i++) {
        float want = a * xs[i] + 1.0f;
        ck_assert_msg(ys[i] == want, "element %lld of %lld: %g, want %g", (long long)i, (long long)n, ys[i], want);
    }
}

/* Both values' leaves hold the same bytes. */
static void ck_assert_same_value(const st_value *x, const st_value *y) {
    st_value lx[8], ly[8];
    size_t n = st_value_leaves(x, lx, 8);
    ck_assert_uint_eq(n, st_value_leaves(y, ly, 8));
    for (size_t i = 0; i < n && i < 8; i++) {
        ck_assert_int_eq(lx[i].kind, ly[i].kind);
        ck_assert_int_eq(lx[i].scalar, ly[i].scalar);
        if (lx[i].kind == ST_VALUE_SCALAR) {
            ck_assert(!memcmp(&lx[i].u.s, &ly[i].u.s, st_scalar_size(lx[i].scalar)));
            continue;
        }
        ck_assert_uint_eq(lx[i].n, ly[i].n);
        size_t count = 1;
        for (uint32_t d = 0; d < lx[i].n; d++) {
            ck_assert_int_eq(lx[i].u.a.dims[d], ly[i].u.a.dims[d]);
            count *= (size_t)lx[i].u.a.dims[d];
        }
        ck_assert_msg(!memcmp(lx[i].u.a.data, ly[i].u.a.data, count * st_scalar_size(lx[i].scalar)),
                      "leaf %zu differs from the interpreter's", i);
    }
}

static const int64_t lengths[] = {0, 1, 7, 1000, 65536, 1000003};

/* The run and failure tests: a context, an arena and the default device,
 * fresh for each test. */
static st_ctx *cx;
static st_arena *a;
static st_cl *cl;

static void device_setup(void) {
    cx = st_ctx_new();
    a = st_arena_new();
    ck_assert(cx != NULL && a != NULL);
    cl = open_ok(NULL);
}

static void device_teardown(void) {
    st_cl_close(cl);
    st_arena_free(a);
    st_ctx_free(cx);
}

START_TEST(map_matches_expectation_and_interpreter) {
    int64_t n = lengths[_i];
    st_code c = map_code(cx, a, map_src, 64);
    st_exe *exe = build_ok(cl, &c);
    st_value args[2];
    st_binding env[1];
    map_inputs(cx, a, c.def, n, args, env);
    st_err err = {0};
    st_launch *l = st_launch_new(exe, args, env, 1, &err);
    ck_assert_msg(l != NULL, "st_launch_new: %s", err.message);
    double ms = -1;
    ck_assert_msg(st_launch_run(l, &ms, &err), "st_launch_run: %s", err.message);
    ck_assert(ms >= 0);
    if (n == 0) ck_assert(ms == 0); /* no launch, no time */
    st_value r;
    ck_assert_msg(st_launch_read(l, a, &r, &err), "st_launch_read: %s", err.message);
    check_map_result(&r, args, n);
    st_value want;
    ck_assert_msg(st_eval(cx, c.def, args, env, 1, a, &want, &err), "st_eval: %s", err.message);
    ck_assert_same_value(&r, &want);
    ck_assert_uint_eq(st_launch_bytes(l), 2 * (uint64_t)n * sizeof(float));
    st_launch_free(l);
    st_exe_free(exe);
}
END_TEST

START_TEST(repeated_runs_and_timing) {
    st_code c = map_code(cx, a, map_src, 128);
    st_exe *exe = build_ok(cl, &c);
    st_err err = {0};
    /* two launches of one exe, each run several times */
    for (int k = 0; k < 2; k++) {
        int64_t n = k ? 4096 : 100000;
        st_value args[2];
        st_binding env[1];
        map_inputs(cx, a, c.def, n, args, env);
        args[1].u.s.f32 = k ? -2.0f : 0.5f;
        st_launch *l = st_launch_new(exe, args, env, 1, &err);
        ck_assert_msg(l != NULL, "%s", err.message);
        for (int run = 0; run < 4; run++) {
            double ms = -1;
            /* NULL: the time is optional */
            ck_assert_msg(st_launch_run(l, run == 3 ? NULL : &ms, &err), "run %d: %s", run, err.message);
            if (run < 3) ck_assert_msg(ms > 0 && ms < 60000, "ms = %g", ms);
        }
        st_value r;
        ck_assert_msg(st_launch_read(l, a, &r, &err), "%s", err.message);
        check_map_result(&r, args, n);
        st_launch_free(l);
    }
    st_exe_free(exe);
}
END_TEST

/* A glue that creates two temporaries of n floats and one of 16 bytes,
 * writes the first two's handles into its output's first 16 bytes and
 * releases all three. */
static const char *const handles_glue =
    GLUE_PRELUDE GLUE_SIGNATURE
    "{\n"
    "    (void)kernels; (void)inputs; (void)msgcap;\n"
    "    cl_long n = *(const cl_long *)scalars[1];\n"
    "    cl_int rc = CL_SUCCESS;\n"
    "    cl_mem t = clCreateBuffer(ctx, CL_MEM_READ_WRITE, (size_t)n * 4, NULL, &rc);\n"
    "    cl_mem u = clCreateBuffer(ctx, CL_MEM_READ_WRITE, (size_t)n * 4, NULL, &rc);\n"
    "    cl_mem v = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 16, NULL, &rc);\n"
    "    cl_ulong handles[2] = {(cl_ulong)t, (cl_ulong)u};\n"
    "    if (!t || !u || !v) { snprintf(msg, msgcap, \"no temporaries\"); return -5; }\n"
    "    rc = clEnqueueFillBuffer(queue, outputs[0], handles, sizeof handles, 0, sizeof handles, 0, NULL, NULL);\n"
    "    clFinish(queue);\n"
    "    clReleaseMemObject(t);\n"
    "    clReleaseMemObject(u);\n"
    "    clReleaseMemObject(v);\n"
    "    events[0] = NULL;\n"
    "    return rc;\n"
    "}\n";

/* The handles handles_glue wrote in a run of l. */
static void handles_of(st_launch *l, uint64_t out[2]) {
    st_err err = {0};
    double ms;
    ck_assert_msg(st_launch_run(l, &ms, &err), "%s", err.message);
    st_value r;
    ck_assert_msg(st_launch_read(l, a, &r, &err), "%s", err.message);
    memcpy(out, r.u.a.data, 2 * sizeof *out);
}

/* The glue's temporaries come back from the executable's pool from one run
 * to the next (codegen/runtime/buffer_pool.h): the same handles, two of one
 * size apart; a launch of other sizes gets buffers of its own, and then the
 * first sizes' again work. */
START_TEST(temporaries_are_kept_from_run_to_run) {
    st_code c = map_code(cx, a, map_src, 64);
    c.host = handles_glue;
    st_exe *exe = build_ok(cl, &c);
    st_err err = {0};
    uint64_t first[2], again[2];
    for (int k = 0; k < 3; k++) {
        int64_t n = k == 1 ? 5000 : 1000;
        st_value args[2];
        st_binding env[1];
        map_inputs(cx, a, c.def, n, args, env);
        st_launch *l = st_launch_new(exe, args, env, 1, &err);
        ck_assert_msg(l != NULL, "%s", err.message);
        handles_of(l, first);
        ck_assert(first[0] && first[1] && first[0] != first[1]);
        for (int run = 0; run < 3; run++) {
            handles_of(l, again);
            ck_assert_msg(again[0] == first[0] && again[1] == first[1], "launch %d, run %d: new temporaries", k, run);
        }
        st_launch_free(l);
    }
    st_exe_free(exe);
}
END_TEST

START_TEST(read_before_run_fails) {
    st_code c = map_code(cx, a, map_src, 64);
    st_exe *exe = build_ok(cl, &c);
    st_value args[2];
    st_binding env[1];
    map_inputs(cx, a, c.def, 10, args, env);
    st_err err = {0};
    st_launch *l = st_launch_new(exe, args, env, 1, &err);
    ck_assert(l != NULL);
    st_value r;
    ck_assert(!st_launch_read(l, a, &r, &err));
    ck_assert_int_eq(err.kind, ST_ERR_INTERNAL);
    st_launch_free(l);
    st_exe_free(exe);
}
END_TEST

START_TEST(two_dimensional_result) {
    /* the same kernel and glue; the result [N/4][4]f32 keeps its dims */
    static const char *const src =
        "def main(xs: [N]f32, a: f32): [N/4][4]f32 where N % 4 == 0 = xs |> map(x => a * x + 1.0) |> split(4)\n";
    st_code c = map_code(cx, a, src, 64);
    st_exe *exe = build_ok(cl, &c);
    st_value args[2];
    st_binding env[1];
    map_inputs(cx, a, c.def, 12, args, env);
    st_err err = {0};
    st_launch *l = st_launch_new(exe, args, env, 1, &err);
    ck_assert_msg(l != NULL, "%s", err.message);
    ck_assert_msg(st_launch_run(l, NULL, &err), "%s", err.message);
    st_value r, want;
    ck_assert_msg(st_launch_read(l, a, &r, &err), "%s", err.message);
    ck_assert_int_eq(r.kind, ST_VALUE_ARRAY);
    ck_assert_uint_eq(r.n, 2);
    ck_assert_int_eq(r.u.a.dims[0], 3);
    ck_assert_int_eq(r.u.a.dims[1], 4);
    ck_assert_msg(st_eval(cx, c.def, args, env, 1, a, &want, &err), "%s", err.message);
    ck_assert_same_value(&r, &want);
    st_launch_free(l);
    st_exe_free(exe);
}
END_TEST

/* ---- a tuple result: two arrays (one of bool) and a scalar -------------- */

static const char *const tuple_src =
    "def main(xs: [N]i32): ([N]i32, [N]bool, i32) =\n"
    "  (xs |> map(x => x + 1), xs |> map(x => x > 0), xs |> reduce(+, 0))\n";

static const char *const tuple_kernels =
    "kernel void k_elems(global const int *xs, global int *ys, global uchar *flags, long n) {\n"
    "    long i = get_global_id(0);\n"
    "    if (i < n) {\n"
    "        ys[i] = xs[i] + 1;\n"
    "        flags[i] = xs[i] > 0;\n"
    "    }\n"
    "}\n"
    "kernel void k_sum(global const int *xs, global int *sum, long n) {\n"
    "    int s = 0;\n"
    "    for (long i = 0; i < n; i++) s += xs[i];\n"
    "    sum[0] += s;\n"
    "}\n";

/* Exercises what generated glue does besides launching: asking the kernel's
 * work-group limit through the queue's device, an intermediate buffer
 * filled, copied into an output and released, and a launch with nothing to
 * do (events[0] NULL when N is 0). */
static const char *const tuple_glue =
    GLUE_PRELUDE GLUE_SIGNATURE
    "{\n"
    "    cl_long n = *(const cl_long *)scalars[0];\n"
    "    cl_device_id dev;\n"
    "    size_t limit = 0, one = 1;\n"
    "    cl_int rc = clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL);\n"
    "    if (rc == CL_SUCCESS) rc = clGetKernelWorkGroupInfo(kernels[0], dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof limit, &limit, NULL);\n"
    "    if (rc != CL_SUCCESS) { snprintf(msg, msgcap, \"asking the work-group size of k_elems\"); return rc; }\n"
    "    size_t local = limit < 256 ? limit : 256;\n"
    "    size_t global = ((size_t)n + local - 1) / local * local;\n"
    "    events[0] = NULL;\n"
    "    if (n > 0) {\n"
    "        rc = clSetKernelArg(kernels[0], 0, sizeof(cl_mem), &inputs[0]);\n"
    "        if (rc == CL_SUCCESS) rc = clSetKernelArg(kernels[0], 1, sizeof(cl_mem), &outputs[0]);\n"
    "        if (rc == CL_SUCCESS) rc = clSetKernelArg(kernels[0], 2, sizeof(cl_mem), &outputs[1]);\n"
    "        if (rc == CL_SUCCESS) rc = clSetKernelArg(kernels[0], 3, sizeof n, &n);\n"
    "        if (rc == CL_SUCCESS) rc = clEnqueueNDRangeKernel(queue, kernels[0], 1, NULL, &global, &local, 0, NULL, &events[0]);\n"
    "        if (rc != CL_SUCCESS) { snprintf(msg, msgcap, \"launching k_elems\"); return rc; }\n"
    "    }\n"
    "    cl_mem tmp = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(cl_int), NULL, &rc);\n"
    "    if (rc != CL_SUCCESS) { snprintf(msg, msgcap, \"allocating the sum\"); return rc; }\n"
    "    cl_int zero = 0;\n"
    "    rc = clEnqueueFillBuffer(queue, tmp, &zero, sizeof zero, 0, sizeof zero, 0, NULL, NULL);\n"
    "    if (rc == CL_SUCCESS) rc = clSetKernelArg(kernels[1], 0, sizeof(cl_mem), &inputs[0]);\n"
    "    if (rc == CL_SUCCESS) rc = clSetKernelArg(kernels[1], 1, sizeof(cl_mem), &tmp);\n"
    "    if (rc == CL_SUCCESS) rc = clSetKernelArg(kernels[1], 2, sizeof n, &n);\n"
    "    if (rc == CL_SUCCESS) rc = clEnqueueNDRangeKernel(queue, kernels[1], 1, NULL, &one, &one, 0, NULL, &events[1]);\n"
    "    if (rc == CL_SUCCESS) rc = clEnqueueCopyBuffer(queue, tmp, outputs[2], 0, 0, sizeof(cl_int), 0, NULL, NULL);\n"
    "    clReleaseMemObject(tmp); /* OpenCL keeps it until the queued commands are done */\n"
    "    if (rc != CL_SUCCESS) { snprintf(msg, msgcap, \"summing\"); return rc; }\n"
    "    return CL_SUCCESS;\n"
    "}\n";

static const char *const tuple_names[] = {"k_elems", "k_sum"};

static st_code tuple_code(st_ctx *cx, st_arena *a) {
    const st_def *d = def_of(cx, tuple_src);
    const st_size *n = d->params[0]->type->size;
    st_code c = {0};
    c.def = d;
    c.opencl = tuple_kernels;
    c.host = tuple_glue;
    c.nkernels = 2;
    c.kernel_names = tuple_names;
    st_code_array *in = st_arena_alloc(a, sizeof *in), *out = st_arena_alloc(a, 3 * sizeof *out);
    *in = (st_code_array){ST_I32, n};
    out[0] = (st_code_array){ST_I32, n};
    out[1] = (st_code_array){ST_BOOL, n};
    out[2] = (st_code_array){ST_I32, st_size_const(cx, 1)};
    c.ninputs = 1;
    c.inputs = in;
    st_code_scalar *sc = st_arena_alloc(a, sizeof *sc);
    sc[0] = (st_code_scalar){d->sizes[0]->u.name, ST_I64};
    c.nscalars = 1;
    c.scalars = sc;
    c.noutputs = 3;
    c.outputs = out;
    return c;
}

START_TEST(tuple_result) {
    int64_t n = lengths[_i];
    st_code c = tuple_code(cx, a);
    st_exe *exe = build_ok(cl, &c);
    int32_t *xs = st_arena_alloc(a, (size_t)(n ? n : 1) * sizeof *xs);
    int32_t sum = 0;
    for (int64_t i = 0; i < n; i++) sum += xs[i] = (int32_t)(i % 11) - 5;
    st_value args[1] = {array_of(ST_I32, n, xs, a)};
    st_binding env[1] = {{c.def->sizes[0]->u.name, n}};
    st_err err = {0};
    st_launch *l = st_launch_new(exe, args, env, 1, &err);
    ck_assert_msg(l != NULL, "%s", err.message);
    /* inputs read plus outputs written: xs, ys, the flags, the sum */
    ck_assert_uint_eq(st_launch_bytes(l), (uint64_t)n * (4 + 4 + 1) + 4);
    double ms = -1;
    ck_assert_msg(st_launch_run(l, &ms, &err), "%s", err.message);
    ck_assert(ms > 0); /* k_sum runs even on no elements */
    st_value r, want;
    ck_assert_msg(st_launch_read(l, a, &r, &err), "%s", err.message);
    ck_assert_int_eq(r.kind, ST_VALUE_TUPLE);
    ck_assert_uint_eq(r.n, 3);
    const st_value *ys = &r.u.items[0], *flags = &r.u.items[1], *s = &r.u.items[2];
    ck_assert_int_eq(ys->kind, ST_VALUE_ARRAY);
    ck_assert_int_eq(flags->scalar, ST_BOOL);
    ck_assert_int_eq(s->kind, ST_VALUE_SCALAR);
    ck_assert_int_eq(s->u.s.i32, sum);
    for (int64_t i = 0; i < n; i++) {
        ck_assert_int_eq(((int32_t *)ys->u.a.data)[i], xs[i] + 1);
        ck_assert_int_eq(((bool *)flags->u.a.data)[i], xs[i] > 0);
    }
    ck_assert_msg(st_eval(cx, c.def, args, env, 1, a, &want, &err), "%s", err.message);
    ck_assert_same_value(&r, &want);
    st_launch_free(l);
    st_exe_free(exe);
}
END_TEST

/* ---- a scalar parameter that is a size, and a run with no launch -------- */

START_TEST(size_parameter_and_no_launch) {
    static const char *const src = "def main(xs: [N]f32, H: i64): [H]f32 = replicate(H, 2.5)\n";
    /* no kernel runs: the glue fills the output; scalars are H, then N */
    static const char *const glue =
        GLUE_PRELUDE GLUE_SIGNATURE
        "{\n"
        "    (void)ctx; (void)kernels; (void)inputs;\n"
        "    cl_long h = *(const cl_long *)scalars[0], n = *(const cl_long *)scalars[1];\n"
        "    cl_float v = 2.5f;\n"
        "    events[0] = NULL;\n"
        "    if (n != 5) { snprintf(msg, msgcap, \"N is %ld, not 5\", n); return -30; }\n"
        "    if (h == 0) return CL_SUCCESS;\n"
        "    cl_int rc = clEnqueueFillBuffer(queue, outputs[0], &v, sizeof v, 0, (size_t)h * sizeof v, 0, NULL, NULL);\n"
        "    if (rc != CL_SUCCESS) snprintf(msg, msgcap, \"filling\");\n"
        "    return rc;\n"
        "}\n";
    const st_def *d = def_of(cx, src);
    st_code c = {0};
    c.def = d;
    c.opencl = "kernel void unused(global int *x) { x[0] = 0; }\n";
    c.host = glue;
    st_code_array in = {ST_F32, d->params[0]->type->size}, out = {ST_F32, d->result->size};
    st_code_scalar sc[2] = {{d->params[1]->u.name, ST_I64}, {d->sizes[0]->u.name, ST_I64}};
    c.ninputs = 1;
    c.inputs = &in;
    c.nscalars = 2;
    c.scalars = sc;
    c.noutputs = 1;
    c.outputs = &out;
    st_exe *exe = build_ok(cl, &c);
    float xs[5] = {0};
    st_value args[2] = {array_of(ST_F32, 5, xs, a), scalar_of(ST_I64, (st_scalar){.i64 = 300})};
    st_binding env[2] = {{d->sizes[0]->u.name, 5}, {d->params[1]->u.name, 300}};
    st_err err = {0};
    st_launch *l = st_launch_new(exe, args, env, 2, &err);
    ck_assert_msg(l != NULL, "%s", err.message);
    ck_assert_uint_eq(st_launch_bytes(l), 5 * 4 + 300 * 4);
    double ms = -1;
    ck_assert_msg(st_launch_run(l, &ms, &err), "%s", err.message);
    ck_assert(ms == 0); /* no event, no time */
    st_value r, want;
    ck_assert_msg(st_launch_read(l, a, &r, &err), "%s", err.message);
    ck_assert_int_eq(r.u.a.dims[0], 300);
    ck_assert_msg(st_eval(cx, d, args, env, 2, a, &want, &err), "%s", err.message);
    ck_assert_same_value(&r, &want);
    st_launch_free(l);
    st_exe_free(exe);
}
END_TEST

/* ---- failures ------------------------------------------------------------ */

START_TEST(kernel_that_does_not_build) {
    st_code c = map_code(cx, a, map_src, 64);
    c.opencl = "kernel void k_map(global float *ys) {\n    ys[0] = undeclared_thing;\n}\n";
    st_err err = {0};
    ck_assert(st_exe_build(cl, &c, &err) == NULL);
    ck_assert_int_eq(err.kind, ST_ERR_USER);
    ck_assert_has(err.message, "the generated kernels do not build on ");
    ck_assert_has(err.message, st_cl_device(cl)->name);
    ck_assert_has(err.message, "undeclared_thing");
}
END_TEST

START_TEST(kernel_name_missing) {
    st_code c = map_code(cx, a, map_src, 64);
    static const char *const names[] = {"k_nope"};
    c.kernel_names = names;
    st_err err = {0};
    ck_assert(st_exe_build(cl, &c, &err) == NULL);
    ck_assert_int_eq(err.kind, ST_ERR_INTERNAL);
    ck_assert_has(err.message, "k_nope");
    ck_assert_has(err.message, "CL_INVALID_KERNEL_NAME");
}
END_TEST

/* A glue is generated, so one that is broken is strata's bug: internal. */
static void glue_fails(const char *host, const char *part) {
    st_code c = map_code(cx, a, map_src, 64);
    c.host = host;
    st_err err = {0};
    ck_assert(st_exe_build(cl, &c, &err) == NULL);
    ck_assert_int_eq(err.kind, ST_ERR_INTERNAL);
    ck_assert_has(err.message, part);
}

START_TEST(glue_that_does_not_compile) {
    glue_fails(GLUE_PRELUDE "int strata_run(void) { return missing_variable; }\n", "missing_variable");
    glue_fails(GLUE_PRELUDE "int strata_run(void) { return missing_variable; }\n", "does not compile");
}
END_TEST

START_TEST(glue_reaches_only_what_it_is_given) {
    /* no libc beyond snprintf: printf does not link */
    glue_fails("int printf(const char *, ...);\nint strata_run(void) { return printf(\"hi\"); }\n",
               "undefined symbol 'printf'");
    glue_fails("int other(void) { return 0; }\n", "no function `strata_run`");
}
END_TEST

START_TEST(glue_uses_what_tcc_calls_behind_its_back) {
    /* initialisers, struct copies and unsigned<->double conversions make tcc
     * call memset, memmove and its own helpers; they link */
    static const char *const glue =
        GLUE_PRELUDE
        "struct big { long a[16]; };\n"
        "static struct big id(struct big b) { return b; }\n"
        GLUE_SIGNATURE
        "{\n"
        "    (void)ctx; (void)queue; (void)kernels; (void)inputs; (void)outputs; (void)scalars; (void)msg; (void)msgcap;\n"
        "    size_t dims[8] = {1};\n"
        "    struct big b = {{0}}, c = id(b);\n"
        "    double d = (double)(cl_ulong)dims[0];\n"
        "    cl_ulong u = (cl_ulong)(d * 2.0) + (cl_ulong)(float)d;\n"
        "    events[0] = NULL;\n"
        "    return (int)(u - 3 + (cl_ulong)c.a[5]);\n"
        "}\n";
    st_code c = map_code(cx, a, map_src, 64);
    c.host = glue;
    st_exe *exe = build_ok(cl, &c);
    st_value args[2];
    st_binding env[1];
    map_inputs(cx, a, c.def, 3, args, env);
    st_err err = {0};
    st_launch *l = st_launch_new(exe, args, env, 1, &err);
    ck_assert(l != NULL);
    ck_assert_msg(st_launch_run(l, NULL, &err), "%s", err.message);
    st_launch_free(l);
    st_exe_free(exe);
}
END_TEST

START_TEST(work_group_too_large) {
    /* PoCL allows work-groups up to 4096 */
    st_code c = map_code(cx, a, map_src, 8192);
    ck_assert_uint_lt(st_cl_device(cl)->max_work_group, 8192);
    st_exe *exe = build_ok(cl, &c);
    st_value args[2];
    st_binding env[1];
    map_inputs(cx, a, c.def, 10000, args, env);
    st_err err = {0};
    st_launch *l = st_launch_new(exe, args, env, 1, &err);
    ck_assert(l != NULL);
    double ms = -1;
    ck_assert(!st_launch_run(l, &ms, &err));
    ck_assert_int_eq(err.kind, ST_ERR_USER);
    ck_assert_has(err.message, "running on ");
    ck_assert_has(err.message, st_cl_device(cl)->name);
    ck_assert_has(err.message, "launching k_map with work-groups of 8192");
    ck_assert_has(err.message, "(CL_INVALID_WORK_GROUP_SIZE)");
    ck_assert(ms == 0);
    /* the launch is still usable: nothing was left behind */
    ck_assert(!st_launch_run(l, NULL, &err));
    st_launch_free(l);
    st_exe_free(exe);
}
END_TEST

/* ---- choosing a device -------------------------------------------------- */

START_TEST(default_device_is_pocl) {
    /* the first GPU, else the first device; here PoCL is the only platform */
    st_device_info *list;
    size_t n;
    st_err err = {0};
    ck_assert(st_devices_list(&list, &n, &err));
    size_t want = 0;
    for (size_t i = n; i-- > 0;)
        if (!strcmp(list[i].type, "GPU")) want = i;
    st_cl *cl = open_ok(NULL);
    ck_assert_str_eq(st_cl_device(cl)->name, list[want].name);
    ck_assert_uint_eq(st_cl_device(cl)->index, want);
    if (n == 1) ck_assert_has(st_cl_device(cl)->platform, "Portable Computing Language");
    st_cl_close(cl);
    free(list);
}
END_TEST

START_TEST(device_by_index_and_name) {
    st_cl *cl = open_ok("0");
    ck_assert_uint_eq(st_cl_device(cl)->index, 0);
    st_cl_close(cl);
    /* any case, a part of the platform's name or the device's */
    cl = open_ok("portable COMPUTING");
    ck_assert_has(st_cl_device(cl)->platform, "Portable Computing Language");
    st_cl_close(cl);
    /* PoCL's device is "pthread-…" or "cpu-…" by version: its first word, upper-cased */
    cl = open_ok("portable");
    char word[64];
    size_t n = strcspn(st_cl_device(cl)->name, "-");
    snprintf(word, sizeof word, "%.*s", (int)(n < 60 ? n : 60), st_cl_device(cl)->name);
    char expect[64];
    snprintf(expect, sizeof expect, "%s", word);
    for (char *c = word; *c; c++) *c = (char)toupper((unsigned char)*c);
    st_cl_close(cl);
    cl = open_ok(word);
    ck_assert_has(st_cl_device(cl)->name, expect);
    st_cl_close(cl);
}
END_TEST

START_TEST(device_index_out_of_range) {
    st_err err = {0};
    ck_assert(st_cl_open("99", &err) == NULL);
    ck_assert_int_eq(err.kind, ST_ERR_USER);
    ck_assert_has(err.message, "there is no OpenCL device 99");
    /* the range, and what is in it */
    ck_assert_msg(strstr(err.message, "numbered 0 to ") || strstr(err.message, "the only device is 0"), "%s", err.message);
    ck_assert_has(err.message, "Portable Computing Language");
    ck_assert(st_cl_open("99999999999999999999999", &err) == NULL);
    ck_assert_has(err.message, "there is no OpenCL device 9999");
}
END_TEST

START_TEST(device_name_unknown) {
    st_err err = {0};
    ck_assert(st_cl_open("no-such-device", &err) == NULL);
    ck_assert_int_eq(err.kind, ST_ERR_USER);
    ck_assert_has(err.message, "no OpenCL device matches `no-such-device`; the devices are: 0: ");
    ck_assert_has(err.message, "Portable Computing Language");
}
END_TEST

int main(void) {
    Suite *s = suite_create("runtime");
    TCase *dev = tcase_create("devices");
    tcase_set_timeout(dev, 120);
    tcase_add_test(dev, default_device_is_pocl);
    tcase_add_test(dev, device_by_index_and_name);
    tcase_add_test(dev, device_index_out_of_range);
    tcase_add_test(dev, device_name_unknown);
    suite_add_tcase(s, dev);
    TCase *run = tcase_create("run");
    tcase_set_timeout(run, 600);
    tcase_add_checked_fixture(run, device_setup, device_teardown);
    tcase_add_loop_test(run, map_matches_expectation_and_interpreter, 0, sizeof lengths / sizeof *lengths);
    tcase_add_loop_test(run, tuple_result, 0, sizeof lengths / sizeof *lengths);
    tcase_add_test(run, repeated_runs_and_timing);
    tcase_add_test(run, read_before_run_fails);
    tcase_add_test(run, temporaries_are_kept_from_run_to_run);
    tcase_add_test(run, two_dimensional_result);
    tcase_add_test(run, size_parameter_and_no_launch);
    suite_add_tcase(s, run);
    TCase *fail = tcase_create("failures");
    tcase_set_timeout(fail, 300);
    tcase_add_checked_fixture(fail, device_setup, device_teardown);
    tcase_add_test(fail, kernel_that_does_not_build);
    tcase_add_test(fail, kernel_name_missing);
    tcase_add_test(fail, glue_that_does_not_compile);
    tcase_add_test(fail, glue_reaches_only_what_it_is_given);
    tcase_add_test(fail, glue_uses_what_tcc_calls_behind_its_back);
    tcase_add_test(fail, work_group_too_large);
    suite_add_tcase(s, fail);
    return run_suite(s);
}
