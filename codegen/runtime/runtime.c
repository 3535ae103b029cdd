/* codegen/runtime/runtime.c — the OpenCL runtime: a device opened with a
 * profiling queue (st_cl), a generated program built on it with its glue
 * compiled by libtcc (st_exe), and one binding of inputs uploaded, run,
 * timed and read back (st_launch).
 *
 * The launch sequence lives in the generated glue (see the top of
 * codegen.h); this file only owns buffers: the inputs and outputs, in the
 * st_value layout (arrays of tuples are tuples of arrays, bool one byte per
 * element), which is also the layout the kernels use.
 *
 * Lifetimes: an st_exe uses its st_cl and its st_code (and so the arena and
 * context they live in); an st_launch uses its st_exe. Each must outlive what
 * was made from it. */
#include "buffer_pool.h"
#include "build_cache.h"
#include "codegen/cg.h"
#include "cl_api.h"
#include "jit.h"

#include <CL/cl.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CL_PLATFORM_NOT_FOUND_KHR
#define CL_PLATFORM_NOT_FOUND_KHR -1001
#endif

/* The glue's entry point; codegen.h describes its contract. */
typedef int (*strata_run_fn)(cl_context ctx, cl_command_queue queue, cl_kernel *kernels,
                             cl_mem *inputs, cl_mem *outputs, const void *const *scalars,
                             cl_event *events, char *msg, size_t msgcap);
/* strata_run_timed, which strata's glue has beside it: the same, keeping the
 * first launch's event too of each kernel a loop launches again, so that a
 * timing spans every turn. */
typedef int (*strata_run_timed_fn)(cl_context ctx, cl_command_queue queue, cl_kernel *kernels,
                                   cl_mem *inputs, cl_mem *outputs, const void *const *scalars,
                                   cl_event *events, cl_event *first_events, char *msg, size_t msgcap);

/* The OpenCL error codes by name (OpenCL 1.2, plus the ICD loader's). */
static const char *cl_error_name(cl_int rc) {
#define E(code) \
    case code: return #code;
    switch (rc) {
        E(CL_SUCCESS) E(CL_DEVICE_NOT_FOUND) E(CL_DEVICE_NOT_AVAILABLE) E(CL_COMPILER_NOT_AVAILABLE)
        E(CL_MEM_OBJECT_ALLOCATION_FAILURE) E(CL_OUT_OF_RESOURCES) E(CL_OUT_OF_HOST_MEMORY)
        E(CL_PROFILING_INFO_NOT_AVAILABLE) E(CL_MEM_COPY_OVERLAP) E(CL_IMAGE_FORMAT_MISMATCH)
        E(CL_IMAGE_FORMAT_NOT_SUPPORTED) E(CL_BUILD_PROGRAM_FAILURE) E(CL_MAP_FAILURE)
        E(CL_MISALIGNED_SUB_BUFFER_OFFSET) E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
        E(CL_COMPILE_PROGRAM_FAILURE) E(CL_LINKER_NOT_AVAILABLE) E(CL_LINK_PROGRAM_FAILURE)
        E(CL_DEVICE_PARTITION_FAILED) E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
        E(CL_INVALID_VALUE) E(CL_INVALID_DEVICE_TYPE) E(CL_INVALID_PLATFORM) E(CL_INVALID_DEVICE)
        E(CL_INVALID_CONTEXT) E(CL_INVALID_QUEUE_PROPERTIES) E(CL_INVALID_COMMAND_QUEUE)
        E(CL_INVALID_HOST_PTR) E(CL_INVALID_MEM_OBJECT) E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
        E(CL_INVALID_IMAGE_SIZE) E(CL_INVALID_SAMPLER) E(CL_INVALID_BINARY)
        E(CL_INVALID_BUILD_OPTIONS) E(CL_INVALID_PROGRAM) E(CL_INVALID_PROGRAM_EXECUTABLE)
        E(CL_INVALID_KERNEL_NAME) E(CL_INVALID_KERNEL_DEFINITION) E(CL_INVALID_KERNEL)
        E(CL_INVALID_ARG_INDEX) E(CL_INVALID_ARG_VALUE) E(CL_INVALID_ARG_SIZE)
        E(CL_INVALID_KERNEL_ARGS) E(CL_INVALID_WORK_DIMENSION) E(CL_INVALID_WORK_GROUP_SIZE)
        E(CL_INVALID_WORK_ITEM_SIZE) E(CL_INVALID_GLOBAL_OFFSET) E(CL_INVALID_EVENT_WAIT_LIST)
        E(CL_INVALID_EVENT) E(CL_INVALID_OPERATION) E(CL_INVALID_GL_OBJECT)
        E(CL_INVALID_BUFFER_SIZE) E(CL_INVALID_MIP_LEVEL) E(CL_INVALID_GLOBAL_WORK_SIZE)
        E(CL_INVALID_PROPERTY) E(CL_INVALID_IMAGE_DESCRIPTOR) E(CL_INVALID_COMPILER_OPTIONS)
        E(CL_INVALID_LINKER_OPTIONS) E(CL_INVALID_DEVICE_PARTITION_COUNT)
        E(CL_PLATFORM_NOT_FOUND_KHR)
    case -9002: return "STRATA_INDEX_OUT_OF_RANGE"; /* the glue's own (cg_glue.c) */
    case -9003: return "STRATA_COUNT_OUT_OF_RANGE";
    case -9004: return "STRATA_DIVISION_BY_ZERO";
    case -9005: return "STRATA_SIZE_OVERFLOW";
    default: break;
    }
    const char *fault = cg_fault_name(rc); /* a kernel-making primitive's (cg.h) */
    return fault ? fault : "an unknown OpenCL error";
#undef E
}

/* ------------------------------------------------------------------------ */
/* The device                                                               */
/* ------------------------------------------------------------------------ */

struct st_cl {
    const cl_api *api;    /* OpenCL's functions, or the CUDA backend's */
    st_device_info info;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    char *cache;          /* the build cache's directory, or NULL */
};

/* An error code, and for the CUDA backend what CUDA or NVRTC said. */
static const char *error_text(const st_cl *cl, cl_int rc, char *buf, size_t cap) {
    const char *more = cl->api->detail ? cl->api->detail(cl->context) : NULL;
    if (!more) return cl_error_name(rc);
    snprintf(buf, cap, "%s; %s", cl_error_name(rc), more);
    return buf;
}

static bool contains_nocase(const char *text, const char *part) {
    size_t n = strlen(part);
    for (; *text; text++) {
        size_t i = 0;
        while (i < n && text[i] && tolower((unsigned char)text[i]) == tolower((unsigned char)part[i])) i++;
        if (i == n) return true;
    }
    return n == 0;
}

/* "0: NAME (PLATFORM), 1: …": what a user picks from. */
static void list_devices(const st_device_info *list, size_t n, st_buf *out) {
    for (size_t i = 0; i < n; i++)
        st_buf_printf(out, "%s%zu: %s (%s)", i ? ", " : "", i, list[i].name, list[i].platform);
}

/* The index into list that spec names (see st_cl_open), or SIZE_MAX with
 * *err filled. */
static size_t choose(const st_device_info *list, size_t n, const char *spec, const char *kind, st_err *err) {
    if (!spec || !*spec) {
        for (size_t i = 0; i < n; i++)
            if (!strcmp(list[i].type, "GPU")) return i;
        return 0;
    }
    size_t digits = strspn(spec, "0123456789");
    if (!spec[digits]) {
        /* 9 digits say any index there can be; more would overflow */
        unsigned long long i = digits <= 9 ? strtoull(spec, NULL, 10) : ~0ULL;
        if (i < n) return (size_t)i;
    } else {
        for (size_t i = 0; i < n; i++)
            if (contains_nocase(list[i].name, spec) || contains_nocase(list[i].platform, spec)) return i;
    }
    st_buf b = {0};
    list_devices(list, n, &b);
    if (!spec[digits] && n == 1)
        st_fail(err, (st_loc){0}, "there is no %s device %s: the only device is 0 (%s)", kind, spec, b.data ? b.data + 3 : "");
    else if (!spec[digits])
        st_fail(err, (st_loc){0}, "there is no %s device %s: the devices are numbered 0 to %zu (%s)", kind, spec,
                n - 1, b.data ? b.data : "");
    else
        st_fail(err, (st_loc){0}, "no %s device matches `%s`; the devices are: %s", kind, spec, b.data ? b.data : "");
    st_buf_free(&b);
    return SIZE_MAX;
}

/* The cl_device_id behind a listed device: the listing's platform and device
 * indices are positions in clGetPlatformIDs and clGetDeviceIDs, which are
 * stable within a process. */
static bool device_id(const st_device_info *info, cl_platform_id *platform, cl_device_id *device, st_err *err) {
    cl_uint np = 0, nd = 0;
    cl_platform_id *platforms = NULL;
    cl_device_id *devices = NULL;
    bool ok = false;
    if (clGetPlatformIDs(0, NULL, &np) == CL_SUCCESS && info->platform_index < np &&
        (platforms = calloc(np, sizeof *platforms)) && clGetPlatformIDs(np, platforms, NULL) == CL_SUCCESS &&
        clGetDeviceIDs(platforms[info->platform_index], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) == CL_SUCCESS &&
        info->device_index < nd && (devices = calloc(nd, sizeof *devices)) &&
        clGetDeviceIDs(platforms[info->platform_index], CL_DEVICE_TYPE_ALL, nd, devices, NULL) == CL_SUCCESS) {
        *platform = platforms[info->platform_index];
        *device = devices[info->device_index];
        ok = true;
    }
    free(platforms);
    free(devices);
    return ok || st_fail_internal(err, "the OpenCL device %u (%s) went away", info->index, info->name);
}

/* The OpenCL device of cl->info: a context and a profiling, in-order queue. */
static bool open_opencl(st_cl *cl, st_err *err) {
    cl_platform_id platform = NULL;
    if (!device_id(&cl->info, &platform, &cl->device, err)) return false;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform, 0};
    cl_int rc;
    cl->context = clCreateContext(props, 1, &cl->device, NULL, NULL, &rc);
    if (cl->context)
        cl->queue = clCreateCommandQueue(cl->context, cl->device, CL_QUEUE_PROFILING_ENABLE, &rc);
    if (!cl->queue)
        return st_fail(err, (st_loc){0}, "cannot open the OpenCL device %s (%s)", cl->info.name, cl_error_name(rc));
    return true;
}

/* What the runtime does differently for each backend. */
typedef struct backend_runtime {
    const st_backend *backend;
    const char *label; /* how an error names its devices */
    bool (*list)(st_device_info **out, size_t *count, st_err *err);
    const cl_api *api;
    bool (*open)(st_cl *cl, st_err *err); /* its context and queue on cl->info's device */
} backend_runtime;

static bool open_cuda(st_cl *cl, st_err *err) {
    return cuda_open(cl->info.device_index, &cl->context, &cl->device, &cl->queue, err);
}

static const backend_runtime runtimes[] = {
    {&cl_backend_opencl, "OpenCL", st_devices_list, &cl_api_opencl, open_opencl},
    {&cl_backend_cuda, "CUDA", st_cuda_devices_list, &cl_api_cuda, open_cuda},
};

static const backend_runtime *runtime_of(const st_backend *b) {
    for (size_t i = 1; i < sizeof runtimes / sizeof *runtimes; i++)
        if (runtimes[i].backend == b) return &runtimes[i];
    return &runtimes[0];
}

bool st_backend_devices(const st_backend *b, st_device_info **out, size_t *count, st_err *err) {
    return runtime_of(b)->list(out, count, err);
}

st_cl *st_cl_open(const char *spec, st_err *err) {
    const char *rest = NULL;
    const backend_runtime *r = runtime_of(st_backend_of_spec(spec, &rest));
    st_device_info *list;
    size_t n;
    if (!r->list(&list, &n, err)) return NULL;
    size_t i = choose(list, n, rest, r->label, err);
    st_cl *cl = i == SIZE_MAX ? NULL : calloc(1, sizeof *cl);
    if (i != SIZE_MAX && !cl) st_fail_internal(err, "out of memory");
    if (cl) cl->info = list[i];
    free(list);
    if (!cl) return NULL;
    cl->info.backend = r->backend;
    cl->api = r->api;
    if (!r->open(cl, err)) {
        st_cl_close(cl);
        return NULL;
    }
    return cl;
}

void st_cl_close(st_cl *cl) {
    if (!cl) return;
    free(cl->cache);
    if (cl->queue) cl->api->ReleaseCommandQueue(cl->queue);
    if (cl->context) cl->api->ReleaseContext(cl->context);
    free(cl);
}

const st_device_info *st_cl_device(const st_cl *cl) { return &cl->info; }

void st_cl_set_cache(st_cl *cl, const char *dir) {
    free(cl->cache);
    cl->cache = dir && dir[0] ? strdup(dir) : NULL;
}

bool st_default_cache_dir(char *buf, size_t cap) {
    const char *own = getenv("STRATA_CACHE"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n = own && own[0] ? snprintf(buf, cap, "%s", own)
            : xdg && xdg[0] ? snprintf(buf, cap, "%s/strata", xdg)
            : home && home[0] ? snprintf(buf, cap, "%s/.cache/strata", home)
            : -1;
    return n > 0 && (size_t)n < cap;
}

/* ------------------------------------------------------------------------ */
/* A program built for the device                                           */
/* ------------------------------------------------------------------------ */

struct st_exe {
    st_cl *cl;
    const st_code *code;
    cl_program program;
    cl_kernel *kernels;
    st_jit *jit;
    strata_run_fn run;
    strata_run_timed_fn run_timed; /* NULL: a glue without it (one written by hand) */
    bool cached;          /* the program came from the build cache */
    st_buffer_pool pool;  /* the glue's temporaries, from one run to the next (buffer_pool.h) */
};

/* What the glue may call: the OpenCL it needs, from the device's backend,
 * and snprintf for its message. Its clCreateBuffer and clReleaseMemObject
 * are the buffer pool's (st_buffer_pool_glue, linked beside it), which
 * reach this executable's own pool as `strata_buffer_pool`. */
#define GLUE_SYMBOLS(X)                                                                                     \
    X(SetKernelArg) X(EnqueueNDRangeKernel) X(GetKernelWorkGroupInfo)                                     \
    X(GetCommandQueueInfo) X(GetDeviceInfo) X(EnqueueCopyBuffer) X(EnqueueReadBuffer) X(EnqueueWriteBuffer) \
    X(EnqueueFillBuffer) X(ReleaseEvent) X(Finish) X(GetMemObjectInfo)
#define GLUE_SYMBOL_COUNT(name) +1
enum { GLUE_NSYMBOLS = 0 GLUE_SYMBOLS(GLUE_SYMBOL_COUNT) + 4 }; /* + snprintf and the pool's three */
#undef GLUE_SYMBOL_COUNT

static size_t glue_symbols(st_exe *exe, st_jit_symbol out[GLUE_NSYMBOLS]) {
    size_t n = 0;
#define GLUE_SYMBOL(name) out[n++] = (st_jit_symbol){"cl" #name, (const void *)exe->cl->api->name};
    GLUE_SYMBOLS(GLUE_SYMBOL)
#undef GLUE_SYMBOL
    out[n++] = (st_jit_symbol){"snprintf", (const void *)snprintf};
    out[n++] = (st_jit_symbol){"st_buffer_pool_create", (const void *)st_buffer_pool_create};
    out[n++] = (st_jit_symbol){"st_buffer_pool_release", (const void *)st_buffer_pool_release};
    out[n++] = (st_jit_symbol){"strata_buffer_pool", (const void *)&exe->pool};
    return n;
}

/* One line of a build log as shown: drivers compile from a temporary file
 * (PoCL: "error: /root/.cache/pocl/kcache/tempfile_oJnBVZ.cl:2:11: …"), whose
 * path means nothing to a user and eats the message's room, so a "*.cl:"
 * token becomes "kernels.cl:". */
static void put_log_line(st_buf *b, const char *line, size_t n) {
    st_buf_put(b, "\n", 1);
    for (size_t i = 0; i + 4 <= n; i++)
        if (!memcmp(line + i, ".cl:", 4)) {
            size_t start = i;
            while (start > 0 && line[start - 1] != ' ') start--;
            st_buf_put(b, line, start);
            st_buf_puts(b, "kernels");
            line += i;
            n -= i;
            break;
        }
    st_buf_put(b, line, n);
}

static bool has_error(const char *line, size_t n) {
    for (size_t i = 0; i + 5 <= n; i++)
        if (!memcmp(line + i, "error", 5)) return true;
    return false;
}

/* An excerpt of the build log after `prefix`, as much as fits in an st_err
 * (a log can be megabytes; the error is one message): up to 20 lines, only
 * those that say "error" when some do (warnings would crowd them out), blank
 * lines dropped, what is left out counted. */
static void build_error(st_exe *exe, const char *prefix, st_err *err) {
    size_t len = 0;
    char *log = NULL;
    const cl_api *api = exe->cl->api;
    if (api->GetProgramBuildInfo(exe->program, exe->cl->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &len) == CL_SUCCESS &&
        len > 0 && (log = calloc(1, len + 1)))
        api->GetProgramBuildInfo(exe->program, exe->cl->device, CL_PROGRAM_BUILD_LOG, len, log, NULL);
    bool errors_only = log && has_error(log, strlen(log));
    st_buf b = {0};
    st_buf_puts(&b, prefix);
    size_t room = sizeof err->message - 40, shown = 0, left = 0; /* 40: the "(N more lines)" note */
    for (const char *line = log, *end; line && *line; line = *end ? end + 1 : end) {
        end = line + strcspn(line, "\n");
        size_t n = (size_t)(end - line);
        while (n && (line[n - 1] == '\r' || line[n - 1] == ' ')) n--;
        if (!n) continue;
        size_t before = b.len;
        if (shown < 20 && (!errors_only || has_error(line, n))) put_log_line(&b, line, n);
        if (b.len > before && b.len < room) {
            shown++;
            continue;
        }
        b.len = before; /* did not fit, or not an error: take it back */
        if (b.data) b.data[before] = 0;
        left++;
    }
    if (!shown) st_buf_puts(&b, " (the build log is empty)");
    if (left) st_buf_printf(&b, "\n(%zu more lines of build log)", left);
    st_fail(err, (st_loc){0}, "%s", b.data ? b.data : prefix);
    st_buf_free(&b);
    free(log);
}

st_exe *st_exe_build(st_cl *cl, const st_code *code, st_err *err) {
    st_exe *exe = calloc(1, sizeof *exe);
    if (!exe || !(exe->kernels = calloc(code->nkernels + 1, sizeof *exe->kernels))) {
        free(exe);
        st_fail_internal(err, "out of memory");
        return NULL;
    }
    exe->cl = cl;
    exe->code = code;
    const cl_api *api = cl->api;
    const char *name = cl->info.name;
    /* the work-groups the device runs at once, for a direct look-back's
     * prefetch. -w (OpenCL's own option): no warnings, since PoCL's clang
     * prints its "N warnings generated." on the process's standard error,
     * where the library never writes; the generated code is meant to have
     * none (cg_if), and a build that fails shows its log's errors. */
    char options[64];
    snprintf(options, sizeof options, "-cl-std=CL1.2 -w -DSTRATA_COMPUTE_UNITS=%u",
             cl->info.compute_units ? cl->info.compute_units : 1u);
    cl_int rc = CL_SUCCESS;
    const char *source = st_backend_kernels(st_device_backend(&cl->info), code);
    char key[65];
    build_cache_key(&cl->info, options, source, key);
    if (cl->cache) exe->program = build_cache_load(api, cl->cache, key, cl->context, cl->device, options);
    exe->cached = exe->program != NULL;
    if (!exe->program) exe->program = api->CreateProgramWithSource(cl->context, 1, &source, NULL, &rc);
    if (!exe->program) {
        st_fail(err, (st_loc){0}, "cannot load the generated kernels on %s (%s)", name, cl_error_name(rc));
        goto fail;
    }
    if (!exe->cached) rc = api->BuildProgram(exe->program, 1, &cl->device, options, NULL, NULL);
    if (rc == CL_SUCCESS && !exe->cached && cl->cache) build_cache_store(api, cl->cache, key, exe->program);
    if (rc != CL_SUCCESS) {
        char prefix[400];
        if (rc == CL_BUILD_PROGRAM_FAILURE)
            snprintf(prefix, sizeof prefix, "the generated kernels do not build on %s:", name);
        else
            snprintf(prefix, sizeof prefix, "the generated kernels do not build on %s (%s):", name, cl_error_name(rc));
        build_error(exe, prefix, err);
        goto fail;
    }
    for (uint32_t i = 0; i < code->nkernels; i++) {
        exe->kernels[i] = api->CreateKernel(exe->program, code->kernel_names[i], &rc);
        if (!exe->kernels[i]) {
            st_fail_internal(err, "the generated kernels have no kernel `%s` (%s)", code->kernel_names[i], cl_error_name(rc));
            goto fail;
        }
    }
    void *entry;
    st_jit_symbol symbols[GLUE_NSYMBOLS];
    exe->pool.api = api;
    exe->jit = st_jit_compile(code->host, st_buffer_pool_glue, symbols, glue_symbols(exe, symbols), "strata_run",
                              &entry, err);
    if (!exe->jit) goto fail;
    /* tcc hands out a data pointer; POSIX guarantees it converts to a function */
    exe->run = (strata_run_fn)entry;
    exe->run_timed = (strata_run_timed_fn)st_jit_lookup(exe->jit, "strata_run_timed");
    return exe;
fail:
    st_exe_free(exe);
    return NULL;
}

void st_exe_free(st_exe *exe) {
    if (!exe) return;
    st_jit_free(exe->jit);
    if (exe->pool.api) st_buffer_pool_drain(&exe->pool);
    for (uint32_t i = 0; i < exe->code->nkernels; i++)
        if (exe->kernels[i]) exe->cl->api->ReleaseKernel(exe->kernels[i]);
    free(exe->kernels);
    if (exe->program) exe->cl->api->ReleaseProgram(exe->program);
    free(exe);
}

/* ------------------------------------------------------------------------ */
/* One set of inputs                                                        */
/* ------------------------------------------------------------------------ */

struct st_launch {
    st_exe *exe;
    st_binding *env;      /* a copy: the result's shape is evaluated in it later */
    size_t nenv;
    cl_mem *inputs, *outputs;
    int64_t *out_counts;  /* elements of each output */
    st_scalar *scalars;   /* the values scalar_ptrs point to */
    const void **scalar_ptrs;
    cl_event *events;     /* each kernel's last launch's, then (from nkernels on) a loop's kernel's first */
    double *kernel_ms;    /* the last run's time of each kernel; < 0: it did not run */
    uint64_t bytes;
    uint64_t in_bytes;    /* of the inputs alone */
    /* lengths known only at run time (st_code.nlengths): env and the values
     * the glue reported, bound to the def's existentials, after a run */
    st_binding *run_env;
    size_t nrun_env;
    bool ran;
};

/* Evaluate an element count and its bytes; sizes are checked here once so the
 * rest can multiply freely. */
static bool count_of(const st_size *length, st_scalar_kind k, const st_binding *env, size_t nenv,
                     int64_t *count, size_t *bytes, st_err *err) {
    st_err inner = {0};
    bool known = st_size_eval(length, env, nenv, count, &inner);
    if (known && *count >= 0 && !__builtin_mul_overflow((size_t)*count, st_scalar_size(k), bytes)) return true;
    st_buf b = {0};
    st_size_print(length, &b);
    if (!known) {
        st_fail(err, (st_loc){0}, "an array of length %s: %s", b.data ? b.data : "?", inner.message);
        if (err) err->kind = inner.kind;
    } else if (*count < 0)
        st_fail(err, (st_loc){0}, "the array length %s is negative (%lld)", b.data ? b.data : "?", (long long)*count);
    else
        st_fail(err, (st_loc){0}, "an array of %s = %lld %s is too large for a buffer", b.data ? b.data : "?",
                (long long)*count, st_scalar_name(k));
    st_buf_free(&b);
    return false;
}

/* A device buffer of `bytes` (at least 1: OpenCL has no empty buffers),
 * filled from host when host is not NULL. */
static cl_mem new_buffer(st_launch *l, size_t bytes, const void *host, st_err *err) {
    cl_int rc;
    const st_cl *cl = l->exe->cl;
    char why[700];
    if (cl->info.max_alloc_bytes && bytes > cl->info.max_alloc_bytes) {
        st_fail(err, (st_loc){0}, "cannot allocate %zu bytes on %s: it allocates at most %llu bytes in one buffer "
                                  "(CL_DEVICE_MAX_MEM_ALLOC_SIZE)",
                bytes, cl->info.name, (unsigned long long)cl->info.max_alloc_bytes);
        return NULL;
    }
    cl_mem m = cl->api->CreateBuffer(cl->context, CL_MEM_READ_WRITE | (host && bytes ? CL_MEM_COPY_HOST_PTR : 0),
                              bytes ? bytes : 1, host && bytes ? (void *)host : NULL, &rc);
    if (!m)
        st_fail(err, (st_loc){0}, "cannot allocate %zu bytes on %s (%s)", bytes, cl->info.name,
                error_text(cl, rc, why, sizeof why));
    return m;
}

/* Every output buffer ends in a guard region of this many bytes of this
 * pattern, so that a kernel writing past an output's end is caught when the
 * results are read (a variant an exploration must never export). */
enum { GUARD_BYTES = 4096, GUARD_PATTERN = 0xA5 };

static cl_mem new_output(st_launch *l, size_t bytes, st_err *err) {
    if (bytes > SIZE_MAX - GUARD_BYTES) {
        st_fail(err, (st_loc){0}, "an output of %zu bytes is more than a buffer can hold", bytes);
        return NULL;
    }
    cl_mem m = new_buffer(l, bytes + GUARD_BYTES, NULL, err);
    unsigned char guard[GUARD_BYTES];
    memset(guard, GUARD_PATTERN, sizeof guard);
    const cl_api *api = l->exe->cl->api;
    cl_int rc = m ? api->EnqueueWriteBuffer(l->exe->cl->queue, m, CL_TRUE, bytes, sizeof guard, guard, 0, NULL, NULL)
                  : CL_SUCCESS;
    if (rc != CL_SUCCESS) {
        api->ReleaseMemObject(m);
        st_fail(err, (st_loc){0}, "cannot fill an output's guard region on %s (%s)", l->exe->cl->info.name,
                cl_error_name(rc));
        return NULL;
    }
    return m;
}

/* Did a kernel write into output i's guard region? */
static bool guard_intact(st_launch *l, uint32_t i, size_t bytes, st_err *err) {
    unsigned char guard[GUARD_BYTES];
    cl_int rc = l->exe->cl->api->EnqueueReadBuffer(l->exe->cl->queue, l->outputs[i], CL_TRUE, bytes, sizeof guard,
                                                   guard, 0, NULL, NULL);
    if (rc != CL_SUCCESS)
        return st_fail(err, (st_loc){0}, "reading output %u's guard region from %s (%s)", i, l->exe->cl->info.name,
                       cl_error_name(rc));
    for (size_t k = 0; k < sizeof guard; k++)
        if (guard[k] != GUARD_PATTERN)
            return st_fail(err, (st_loc){0},
                           "the kernels wrote past the end of output %u (%zu bytes): byte %zu after its end changed",
                           i, bytes, k);
    return true;
}

/* Upload the array leaves of every parameter, in order. */
static bool upload_inputs(st_launch *l, const st_value *args, st_err *err) {
    const st_code *code = l->exe->code;
    uint32_t next = 0;
    for (uint32_t p = 0; p < code->def->nparams; p++) {
        if (args[p].kind == ST_VALUE_SCALAR) continue; /* passed among the scalars */
        size_t n = st_value_leaves(&args[p], NULL, 0);
        st_value *leaves = calloc(n, sizeof *leaves);
        if (!leaves) return st_fail_internal(err, "out of memory");
        st_value_leaves(&args[p], leaves, n);
        for (size_t i = 0; i < n; i++, next++) {
            int64_t want = 0, have = 1;
            size_t bytes = 0;
            for (uint32_t d = 0; leaves[i].kind == ST_VALUE_ARRAY && d < leaves[i].n; d++) have *= leaves[i].u.a.dims[d];
            if (next >= code->ninputs || leaves[i].kind != ST_VALUE_ARRAY || leaves[i].scalar != code->inputs[next].kind ||
                !count_of(code->inputs[next].length, code->inputs[next].kind, l->env, l->nenv, &want, &bytes, err) ||
                want != have) {
                free(leaves);
                return st_fail_internal(err, "input %u (of `%s`) does not match the generated code's inputs", next,
                                        code->def->params[p]->u.name);
            }
            l->inputs[next] = new_buffer(l, bytes, leaves[i].u.a.data, err);
            l->bytes += bytes;
            if (!l->inputs[next]) {
                free(leaves);
                return false;
            }
        }
        free(leaves);
    }
    if (next != code->ninputs)
        return st_fail_internal(err, "the parameters have %u array leaves, the generated code %u", next, code->ninputs);
    return true;
}

/* The scalar code->scalars[i]: a scalar parameter, else a size variable. */
static bool bind_scalar(st_launch *l, uint32_t i, const st_value *args, st_err *err) {
    const st_code *code = l->exe->code;
    const st_code_scalar *s = &code->scalars[i];
    for (uint32_t p = 0; p < code->def->nparams; p++)
        if (!strcmp(code->def->params[p]->u.name, s->name)) {
            if (args[p].kind != ST_VALUE_SCALAR || args[p].scalar != s->kind)
                return st_fail_internal(err, "the generated code takes `%s` as a %s scalar", s->name, st_scalar_name(s->kind));
            l->scalars[i] = args[p].u.s;
            return true;
        }
    for (size_t e = 0; e < l->nenv; e++)
        if (!strcmp(l->env[e].name, s->name)) {
            int64_t v = l->env[e].value;
            st_scalar *out = &l->scalars[i];
            switch (s->kind) { /* sizes are i64; the rest is the generator's business */
            case ST_I32: out->i32 = (int32_t)v; break;
            case ST_U32: out->u32 = (uint32_t)v; break;
            case ST_U64: out->u64 = (uint64_t)v; break;
            case ST_I64: out->i64 = v; break;
            default: return st_fail_internal(err, "the size `%s` cannot be a %s", s->name, st_scalar_name(s->kind));
            }
            return true;
        }
    return st_fail_internal(err, "the generated code needs `%s`, which is neither a parameter nor a size", s->name);
}

st_launch *st_launch_new(st_exe *exe, const st_value *args, const st_binding *env, size_t nenv, st_err *err) {
    const st_code *code = exe->code;
    st_launch *l = calloc(1, sizeof *l);
    if (!l) {
        st_fail_internal(err, "out of memory");
        return NULL;
    }
    l->exe = exe;
    l->nenv = nenv;
    /* + 1 everywhere: calloc(0) may be NULL, which would read as a failure */
    l->env = calloc(nenv + 1, sizeof *l->env);
    l->inputs = calloc(code->ninputs + 1, sizeof *l->inputs);
    l->outputs = calloc(code->noutputs + 1, sizeof *l->outputs);
    l->out_counts = calloc(code->noutputs + 1, sizeof *l->out_counts);
    l->scalars = calloc(code->nscalars + 1, sizeof *l->scalars);
    l->scalar_ptrs = calloc(code->nscalars + 1, sizeof *l->scalar_ptrs);
    l->events = calloc(2 * (size_t)code->nkernels + 1, sizeof *l->events);
    l->kernel_ms = calloc(code->nkernels + 1, sizeof *l->kernel_ms);
    if (!l->env || !l->inputs || !l->outputs || !l->out_counts || !l->scalars || !l->scalar_ptrs || !l->events ||
        !l->kernel_ms) {
        st_fail_internal(err, "out of memory");
        goto fail;
    }
    if (nenv) memcpy(l->env, env, nenv * sizeof *env);
    if (!upload_inputs(l, args, err)) goto fail;
    for (uint32_t i = 0; i < code->nscalars; i++) {
        if (!bind_scalar(l, i, args, err)) goto fail;
        l->scalar_ptrs[i] = &l->scalars[i]; /* every member of st_scalar starts at its start */
    }
    l->in_bytes = l->bytes;
    for (uint32_t i = 0; i < code->noutputs; i++) {
        size_t bytes = 0;
        if (!count_of(code->outputs[i].length, code->outputs[i].kind, env, nenv, &l->out_counts[i], &bytes, err) ||
            !(l->outputs[i] = new_output(l, bytes, err))) {
            if (err && !err->loc.line) st_err_at(err, code->def->loc); /* the def's result */
            goto fail;
        }
        l->bytes += bytes;
    }
    if (code->nlengths && !(l->outputs[code->noutputs] = new_buffer(l, code->nlengths * sizeof(int64_t), NULL, err)))
        goto fail;
    return l;
fail:
    st_launch_free(l);
    return NULL;
}

/* What a result of the def holds: its body's type, whose lengths known
 * only at run time are those st_code_lengths_of lists. */
static const st_type *result_type(const st_code *code) {
    return code->nlengths ? code->def->body->type : code->def->result;
}

/* The elements of each leaf of a value of type t (st_value_leaves order). */
static bool leaf_counts(const st_type *t, int64_t outer, const st_binding *env, size_t nenv, int64_t *out, uint32_t *n,
                        uint32_t cap, st_err *err) {
    if (t->kind == ST_TYPE_TUPLE) {
        for (uint32_t i = 0; i < t->n; i++)
            if (!leaf_counts(t->items[i], outer, env, nenv, out, n, cap, err)) return false;
        return true;
    }
    if (t->kind == ST_TYPE_ARRAY) {
        int64_t len = 0;
        if (!st_size_eval(t->size, env, nenv, &len, err)) return false;
        return leaf_counts(t->elem, outer * len, env, nenv, out, n, cap, err);
    }
    if (*n < cap) out[*n] = outer;
    (*n)++;
    return true;
}

/* The largest the existential may be, given env: its bound; where that is
 * itself a length not among the result's (a filter of a filter: the inner
 * one's count stays on the device), the bound's bound. False when no
 * bound can be evaluated (the glue checked the counts already). */
static bool largest_of(const st_size *exist, const st_binding *env, size_t nenv, int64_t *most) {
    for (const st_size *bound = st_size_exist_bound(exist); bound; bound = st_size_exist_bound(bound)) {
        st_err ignored = {0};
        if (st_size_eval(bound, env, nenv, most, &ignored)) return true;
    }
    return false;
}

/* After a run: the result's lengths known only at run time, from the
 * output the glue wrote them to, bound to the def's existentials (their
 * order is st_code_lengths_of's), each within its worst case; the bytes
 * moved count what the outputs hold, not what was allocated. */
static bool read_lengths(st_launch *l, st_err *err) {
    const st_code *code = l->exe->code;
    if (!code->nlengths) return true;
    int64_t *values = calloc(code->nlengths, sizeof *values);
    const st_size **exists = calloc(code->nlengths, sizeof *exists);
    int64_t *counts = calloc(code->noutputs + 1, sizeof *counts);
    st_binding *env = realloc(l->run_env, (l->nenv + code->nlengths) * sizeof *env);
    if (env) l->run_env = env;
    bool ok = values && exists && counts && env;
    if (!ok) st_fail_internal(err, "out of memory");
    cl_int rc = !ok ? CL_SUCCESS
                    : l->exe->cl->api->EnqueueReadBuffer(l->exe->cl->queue, l->outputs[code->noutputs], CL_TRUE, 0,
                                                         code->nlengths * sizeof *values, values, 0, NULL, NULL);
    if (ok && rc != CL_SUCCESS)
        ok = st_fail(err, (st_loc){0}, "reading the result's lengths from %s (%s)", l->exe->cl->info.name,
                     cl_error_name(rc));
    if (ok && st_code_lengths_of(result_type(code), exists, code->nlengths) != code->nlengths)
        ok = st_fail_internal(err, "the result's type has not the %u lengths the generated code reports", code->nlengths);
    if (ok) {
        memcpy(env, l->env, l->nenv * sizeof *env);
        for (uint32_t i = 0; i < code->nlengths; i++) {
            int64_t most = INT64_MAX;
            if (!largest_of(exists[i], env, l->nenv + i, &most)) most = INT64_MAX;
            if (values[i] < 0 || values[i] > most) {
                ok = st_fail_internal(err, "the glue reports the length %lld, outside 0..%lld", (long long)values[i],
                                      (long long)most);
                break;
            }
            env[l->nenv + i] = (st_binding){st_size_exist_name(exists[i]), values[i]};
        }
        l->nrun_env = l->nenv + code->nlengths;
    }
    uint32_t n = 0;
    if (ok) ok = leaf_counts(result_type(code), 1, env, l->nrun_env, counts, &n, code->noutputs, err);
    if (ok) {
        l->bytes = l->in_bytes;
        for (uint32_t i = 0; i < n && i < code->noutputs; i++)
            l->bytes += (uint64_t)counts[i] * st_scalar_size(code->outputs[i].kind);
    }
    free(values);
    free(exists);
    free(counts);
    return ok;
}

static void release_events(st_launch *l) {
    for (uint32_t i = 0; i < 2 * l->exe->code->nkernels; i++)
        if (l->events[i]) {
            l->exe->cl->api->ReleaseEvent(l->events[i]);
            l->events[i] = NULL;
        }
}

/* A fault's message from the glue begins with the line and column of what
 * faulted (cg_fault.c): that becomes the error's place, in the program's
 * file, as the interpreter's error has it, and the rest is the message. */
static const char *fault_place(const char *msg, const st_def *def, st_loc *at) {
    int line = 0, col = 0, used = 0;
    if (sscanf(msg, "%9d:%9d: %n", &line, &col, &used) != 2 || used == 0 || line <= 0 || col <= 0) return msg;
    *at = (st_loc){def->loc.file, line, col};
    return msg + used;
}

bool st_launch_run(st_launch *l, double *ms, st_err *err) {
    st_cl *cl = l->exe->cl;
    char msg[256] = "";
    if (ms) *ms = 0;
    cl_int rc = l->exe->run_timed ? l->exe->run_timed(cl->context, cl->queue, l->exe->kernels, l->inputs, l->outputs,
                                                      l->scalar_ptrs, l->events, l->events + l->exe->code->nkernels,
                                                      msg, sizeof msg)
                                  : l->exe->run(cl->context, cl->queue, l->exe->kernels, l->inputs, l->outputs,
                                                l->scalar_ptrs, l->events, msg, sizeof msg);
    cl_int done = cl->api->Finish(cl->queue); /* also after a failure: nothing may still use the buffers */
    if (rc != CL_SUCCESS || done != CL_SUCCESS) {
        release_events(l);
        char why[700];
        if (rc != CL_SUCCESS) {
            st_loc at = {0};
            const char *text = fault_place(msg, l->exe->code->def, &at);
            return st_fail(err, at, "running on %s: %s (%s)", cl->info.name, text[0] ? text : "the host glue failed",
                           error_text(cl, rc, why, sizeof why));
        }
        return st_fail(err, (st_loc){0}, "running on %s: the kernels failed (%s)", cl->info.name,
                       error_text(cl, done, why, sizeof why));
    }
    l->ran = true;
    if (!read_lengths(l, err)) {
        release_events(l);
        return false;
    }
    /* from the first kernel's start to the last one's end, in nanoseconds (a kernel in a loop: from its
       first launch; its own time, its last launch's) */
    cl_ulong first = ~(cl_ulong)0, last = 0;
    uint32_t nk = l->exe->code->nkernels;
    for (uint32_t i = 0; i < 2 * nk; i++) {
        cl_ulong start, end;
        if (i < nk) l->kernel_ms[i] = -1;
        if (!l->events[i]) continue;
        rc = cl->api->GetEventProfilingInfo(l->events[i], CL_PROFILING_COMMAND_START, sizeof start, &start, NULL);
        if (rc == CL_SUCCESS)
            rc = cl->api->GetEventProfilingInfo(l->events[i], CL_PROFILING_COMMAND_END, sizeof end, &end, NULL);
        if (rc != CL_SUCCESS) {
            release_events(l);
            return st_fail(err, (st_loc){0}, "timing on %s: no profiling information (%s)", cl->info.name, cl_error_name(rc));
        }
        if (start < first) first = start;
        if (end > last) last = end;
        if (i < nk) l->kernel_ms[i] = end > start ? (double)(end - start) / 1e6 : 0;
    }
    release_events(l);
    if (ms && last > first) *ms = (double)(last - first) / 1e6;
    return true;
}

bool st_launch_time(st_launch *l, uint32_t warmups, uint32_t runs, double *samples_ms, double *kernel_samples_ms,
                    st_err *err) {
    uint32_t nk = l->exe->code->nkernels;
    for (uint32_t i = 0; i < warmups; i++) /* first touch of buffers, caches, lazy compilation */
        if (!st_launch_run(l, NULL, err)) return false;
    for (uint32_t i = 0; i < runs; i++) {
        if (!st_launch_run(l, &samples_ms[i], err)) return false;
        if (kernel_samples_ms) memcpy(kernel_samples_ms + (size_t)i * nk, l->kernel_ms, nk * sizeof *l->kernel_ms);
    }
    return true;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

st_timing st_timing_of(const double *samples_ms, size_t n) {
    st_timing t = {0};
    double *sorted = n ? malloc(n * sizeof *sorted) : NULL;
    if (!sorted) return t;
    memcpy(sorted, samples_ms, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, by_value);
    t.median_ms = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    t.min_ms = sorted[0];
    t.max_ms = sorted[n - 1];
    free(sorted);
    return t;
}

/* Fill the leaves of v (shaped by st_value_alloc) from the output buffers,
 * counting them in *next. */
static bool read_leaves(st_launch *l, st_value *v, uint32_t *next, st_err *err) {
    const st_code *code = l->exe->code;
    if (v->kind == ST_VALUE_TUPLE) {
        for (uint32_t i = 0; i < v->n; i++)
            if (!read_leaves(l, (st_value *)&v->u.items[i], next, err)) return false;
        return true;
    }
    uint32_t i = (*next)++;
    int64_t count = 1;
    for (uint32_t d = 0; v->kind == ST_VALUE_ARRAY && d < v->n; d++) count *= v->u.a.dims[d];
    /* a length known only at run time: the first `count` of its worst case */
    if (i >= code->noutputs || code->outputs[i].kind != v->scalar ||
        (code->nlengths ? l->out_counts[i] < count : l->out_counts[i] != count))
        return st_fail_internal(err, "output %u of the generated code does not match the result type", i);
    size_t size = st_scalar_size(v->scalar), bytes = (size_t)count * size;
    st_scalar scalar = {.bits = 0};
    void *dst = v->kind == ST_VALUE_ARRAY ? v->u.a.data : (void *)&scalar;
    cl_int rc = bytes ? l->exe->cl->api->EnqueueReadBuffer(l->exe->cl->queue, l->outputs[i], CL_TRUE, 0, bytes, dst, 0,
                                                           NULL, NULL)
                      : CL_SUCCESS;
    if (rc != CL_SUCCESS)
        return st_fail(err, (st_loc){0}, "reading the results from %s (%s)", l->exe->cl->info.name, cl_error_name(rc));
    if (!guard_intact(l, i, (size_t)l->out_counts[i] * size, err)) return false;
    if (v->scalar == ST_BOOL) { /* a kernel may write any nonzero byte for true; C's bool is 0 or 1 */
        unsigned char *b = dst;
        for (size_t k = 0; k < bytes; k++) b[k] = b[k] != 0;
    }
    if (v->kind == ST_VALUE_SCALAR) v->u.s = scalar; /* the members start at the union's start */
    return true;
}

bool st_launch_read(st_launch *l, st_arena *a, st_value *result, st_err *err) {
    if (!l->ran) return st_fail_internal(err, "st_launch_read before a successful st_launch_run");
    const st_code *code = l->exe->code;
    if (!st_value_alloc(a, result_type(code), code->nlengths ? l->run_env : l->env,
                        code->nlengths ? l->nrun_env : l->nenv, result, err))
        return false;
    uint32_t n = 0;
    if (!read_leaves(l, result, &n, err)) return false;
    if (n != l->exe->code->noutputs)
        return st_fail_internal(err, "the result has %u leaves, the generated code %u outputs", n, l->exe->code->noutputs);
    return true;
}

uint64_t st_launch_bytes(const st_launch *l) { return l->bytes; }

void st_launch_free(st_launch *l) {
    if (!l) return;
    const st_code *code = l->exe->code;
    if (l->events) release_events(l);
    for (uint32_t i = 0; l->inputs && i < code->ninputs; i++)
        if (l->inputs[i]) l->exe->cl->api->ReleaseMemObject(l->inputs[i]);
    for (uint32_t i = 0; l->outputs && i < code->noutputs + (code->nlengths > 0); i++)
        if (l->outputs[i]) l->exe->cl->api->ReleaseMemObject(l->outputs[i]);
    free(l->env);
    free(l->run_env);
    free(l->inputs);
    free(l->outputs);
    free(l->out_counts);
    free(l->scalars);
    free(l->scalar_ptrs);
    free(l->events);
    free(l->kernel_ms);
    free(l);
}

const cl_api cl_api_opencl = {
#define CL_API_OPENCL(name) .name = cl##name,
    CL_API_FUNCTIONS(CL_API_OPENCL)
#undef CL_API_OPENCL
    .detail = NULL,
};
