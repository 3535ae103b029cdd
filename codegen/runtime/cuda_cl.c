/* codegen/runtime/cuda_cl.c — the CUDA backend: the OpenCL calls of
 * cl_api.h done with the CUDA driver API, the kernels compiled by NVRTC.
 *
 * The runtime and the generated glue stay as they are: they call OpenCL
 * functions through a table, and for a CUDA device the table holds these
 * (and cuda_device.c's, for the device, the context and the queue).
 * Each OpenCL handle is a struct of cuda_cl.h:
 *
 *   cl_context        cu_context: the loaded driver and NVRTC, the device's
 *                     primary context, the last failure in words
 *   cl_device_id      its cu_device
 *   cl_command_queue  cu_queue: one stream, and the epoch events are timed from
 *   cl_mem            cu_mem: a device allocation
 *   cl_program        cu_program: the CUDA source (cg_cuda.c) and its CUBIN
 *   cl_kernel         cu_kernel: a function and its arguments as set
 *   cl_event          cu_event: CUDA events before and after a launch
 *
 * Kernel arguments: OpenCL sets a buffer by its cl_mem and CUDA takes the
 * device pointer, so the kernel must know which parameters are buffers. It
 * reads its own signature, which cg_glue.c writes with buffers, and only
 * buffers, as pointers. A __local argument (set with a NULL value and a
 * size) is an offset into the launch's dynamic shared memory, assigned at
 * the launch in the order of the arguments.
 *
 * Timing: OpenCL gives each launch's start and end in nanoseconds; CUDA
 * gives the time between two events. Each launch's events are timed from
 * an epoch event recorded before the first launch made while no event is
 * alive, so the times within one run of a program stay small and exact
 * (the runtime releases a run's events before the next run). */
#include "cuda_cl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The binary form of a program, for strata's build cache: this tag, the
 * source's length (8 bytes), the source, the CUBIN. The source comes along
 * because the kernels' signatures are read from it. */
static const char binary_tag[16] = "strata-cuda 1\n";

/* ---- events ---- */

/* Events around one command, when the caller asks for one: the first made
 * while none is alive records the epoch they are all timed from. */
static cl_int event_begin(cu_queue *q, cl_event *event, cu_event **out) {
    *out = NULL;
    if (!event) return CL_SUCCESS;
    cu_event *e = calloc(1, sizeof *e);
    if (!e) return CL_OUT_OF_HOST_MEMORY;
    const cuda_driver *d = &q->c->drv;
    CUresult rc = d->cuEventCreate(&e->start, 0);
    if (rc == 0) rc = d->cuEventCreate(&e->end, 0);
    if (rc == 0 && q->live_events == 0) rc = d->cuEventRecord(q->epoch, q->stream);
    if (rc == 0) rc = d->cuEventRecord(e->start, q->stream);
    if (rc != 0) {
        if (e->start) d->cuEventDestroy(e->start);
        if (e->end) d->cuEventDestroy(e->end);
        free(e);
        return cu_failed(q->c, "cuEventRecord", rc, CL_OUT_OF_RESOURCES);
    }
    e->q = q;
    q->live_events++;
    *out = e;
    return CL_SUCCESS;
}

static cl_int cu_ReleaseEvent(cl_event event);

/* After the command: its end recorded and the event handed out, or, when
 * the command failed, no event. */
static void event_end(cu_event *e, cl_event *event, CUresult rc) {
    if (!e) return;
    if (rc == 0) rc = e->q->c->drv.cuEventRecord(e->end, e->q->stream);
    if (rc == 0) {
        *event = (cl_event)e;
    } else {
        cu_ReleaseEvent((cl_event)e);
        *event = NULL;
    }
}

static cl_int cu_ReleaseEvent(cl_event event) {
    cu_event *e = (cu_event *)event;
    if (!e) return CL_INVALID_EVENT;
    e->q->c->drv.cuEventDestroy(e->start);
    e->q->c->drv.cuEventDestroy(e->end);
    e->q->live_events--;
    free(e);
    return CL_SUCCESS;
}

static cl_int cu_GetEventProfilingInfo(cl_event event, cl_profiling_info what, size_t cap, void *value,
                                       size_t *size_ret) {
    cu_event *e = (cu_event *)event;
    if (what != CL_PROFILING_COMMAND_START && what != CL_PROFILING_COMMAND_END) return CL_PROFILING_INFO_NOT_AVAILABLE;
    const cuda_driver *d = &e->q->c->drv;
    float ms = 0;
    CUresult rc = d->cuEventSynchronize(e->end);
    if (rc == 0) rc = d->cuEventElapsedTime(&ms, e->q->epoch, what == CL_PROFILING_COMMAND_START ? e->start : e->end);
    if (rc != 0) return cu_failed(e->q->c, "cuEventElapsedTime", rc, CL_PROFILING_INFO_NOT_AVAILABLE);
    cl_ulong ns = ms > 0 ? (cl_ulong)((double)ms * 1e6) : 0;
    return cu_put_info(&ns, sizeof ns, cap, value, size_ret);
}

/* ---- buffers ---- */

static cl_mem cu_CreateBuffer(cl_context context, cl_mem_flags flags, size_t size, void *host, cl_int *errcode) {
    cu_context *c = (cu_context *)context;
    cu_mem *m = calloc(1, sizeof *m);
    CUresult rc = !m ? CUDA_ERROR_OUT_OF_MEMORY : cu_current(c) ? c->drv.cuMemAlloc(&m->ptr, size ? size : 1) : 1;
    if (rc == 0 && (flags & CL_MEM_COPY_HOST_PTR) && host) rc = c->drv.cuMemcpyHtoD(m->ptr, host, size);
    if (rc != 0) {
        if (m && m->ptr) c->drv.cuMemFree(m->ptr);
        free(m);
        if (errcode) *errcode = cu_failed(c, "cuMemAlloc", rc, CL_MEM_OBJECT_ALLOCATION_FAILURE);
        return NULL;
    }
    m->c = c;
    m->size = size;
    if (errcode) *errcode = CL_SUCCESS;
    return (cl_mem)m;
}

static cl_int cu_ReleaseMemObject(cl_mem mem) {
    cu_mem *m = (cu_mem *)mem;
    if (!m) return CL_INVALID_MEM_OBJECT;
    /* kernels still queued may use it, as OpenCL allows: wait for them */
    CUresult rc = cu_current(m->c) ? m->c->drv.cuCtxSynchronize() : 1;
    if (rc == 0) rc = m->c->drv.cuMemFree(m->ptr);
    cl_int out = rc == 0 ? CL_SUCCESS : cu_failed(m->c, "cuMemFree", rc, CL_INVALID_MEM_OBJECT);
    free(m);
    return out;
}

/* Only what the glue asks: a buffer's size. */
static cl_int cu_GetMemObjectInfo(cl_mem mem, cl_mem_info what, size_t cap, void *value, size_t *size_ret) {
    cu_mem *m = (cu_mem *)mem;
    if (!m) return CL_INVALID_MEM_OBJECT;
    if (what != CL_MEM_SIZE) return CL_INVALID_VALUE;
    size_t size = m->size;
    return cu_put_info(&size, sizeof size, cap, value, size_ret);
}

static bool in_bounds(const cu_mem *m, size_t offset, size_t size) { return offset <= m->size && size <= m->size - offset; }

/* Reads and writes wait for the queue, as a blocking OpenCL call would
 * after the commands before it; non-blocking ones are done as blocking.
 * One of to_host (a read) and from_host (a write) is given. */
static cl_int transfer(cl_command_queue queue, cl_mem mem, size_t offset, size_t size, void *to_host,
                       const void *from_host, cl_event *event) {
    cu_queue *q = (cu_queue *)queue;
    cu_mem *m = (cu_mem *)mem;
    if (!in_bounds(m, offset, size)) return CL_INVALID_VALUE;
    cu_event *e;
    cl_int out = cu_current(q->c) ? event_begin(q, event, &e) : CL_INVALID_CONTEXT;
    if (out != CL_SUCCESS) return out;
    const cuda_driver *d = &q->c->drv;
    CUresult rc = d->cuStreamSynchronize(q->stream);
    if (rc == 0)
        rc = to_host ? d->cuMemcpyDtoH(to_host, m->ptr + offset, size) : d->cuMemcpyHtoD(m->ptr + offset, from_host, size);
    event_end(e, event, rc);
    return rc == 0 ? CL_SUCCESS : cu_failed(q->c, to_host ? "cuMemcpyDtoH" : "cuMemcpyHtoD", rc, CL_OUT_OF_RESOURCES);
}

static cl_int cu_EnqueueReadBuffer(cl_command_queue queue, cl_mem mem, cl_bool blocking, size_t offset, size_t size,
                                   void *host, cl_uint nwait, const cl_event *wait, cl_event *event) {
    (void)blocking, (void)nwait, (void)wait;
    return transfer(queue, mem, offset, size, host, NULL, event);
}

static cl_int cu_EnqueueWriteBuffer(cl_command_queue queue, cl_mem mem, cl_bool blocking, size_t offset, size_t size,
                                    const void *host, cl_uint nwait, const cl_event *wait, cl_event *event) {
    (void)blocking, (void)nwait, (void)wait;
    return transfer(queue, mem, offset, size, NULL, host, event);
}

static cl_int cu_EnqueueCopyBuffer(cl_command_queue queue, cl_mem from, cl_mem to, size_t from_offset,
                                   size_t to_offset, size_t size, cl_uint nwait, const cl_event *wait, cl_event *event) {
    (void)nwait, (void)wait;
    cu_queue *q = (cu_queue *)queue;
    cu_mem *a = (cu_mem *)from, *b = (cu_mem *)to;
    if (!in_bounds(a, from_offset, size) || !in_bounds(b, to_offset, size)) return CL_INVALID_VALUE;
    cu_event *e;
    cl_int out = cu_current(q->c) ? event_begin(q, event, &e) : CL_INVALID_CONTEXT;
    if (out != CL_SUCCESS) return out;
    CUresult rc = q->c->drv.cuMemcpyDtoDAsync(b->ptr + to_offset, a->ptr + from_offset, size, q->stream);
    event_end(e, event, rc);
    return rc == 0 ? CL_SUCCESS : cu_failed(q->c, "cuMemcpyDtoDAsync", rc, CL_OUT_OF_RESOURCES);
}

/* A pattern of one byte, or of whole equal 4-byte words, is a driver
 * memset; anything else is filled on the host and copied. */
static cl_int cu_EnqueueFillBuffer(cl_command_queue queue, cl_mem mem, const void *pattern, size_t psize,
                                   size_t offset, size_t size, cl_uint nwait, const cl_event *wait, cl_event *event) {
    (void)nwait, (void)wait;
    cu_queue *q = (cu_queue *)queue;
    cu_mem *m = (cu_mem *)mem;
    if (!psize || size % psize || offset % psize || !in_bounds(m, offset, size)) return CL_INVALID_VALUE;
    const unsigned char *p = pattern;
    bool bytes = true, words = psize % 4 == 0;
    for (size_t i = 1; i < psize; i++) bytes = bytes && p[i] == p[0];
    for (size_t i = 4; words && i < psize; i++) words = p[i] == p[i % 4];
    cu_event *e;
    cl_int out = cu_current(q->c) ? event_begin(q, event, &e) : CL_INVALID_CONTEXT;
    if (out != CL_SUCCESS) return out;
    const cuda_driver *d = &q->c->drv;
    CUresult rc;
    if (bytes) {
        rc = d->cuMemsetD8Async(m->ptr + offset, p[0], size, q->stream);
    } else if (words) {
        unsigned w;
        memcpy(&w, p, 4);
        rc = d->cuMemsetD32Async(m->ptr + offset, w, size / 4, q->stream);
    } else {
        unsigned char *host = malloc(size ? size : 1);
        for (size_t i = 0; host && i < size; i += psize) memcpy(host + i, p, psize);
        rc = !host ? CUDA_ERROR_OUT_OF_MEMORY : d->cuStreamSynchronize(q->stream);
        if (rc == 0) rc = d->cuMemcpyHtoD(m->ptr + offset, host, size);
        free(host);
    }
    event_end(e, event, rc);
    return rc == 0 ? CL_SUCCESS : cu_failed(q->c, "cuMemset", rc, CL_OUT_OF_RESOURCES);
}

/* ---- programs ---- */

static cl_program cu_CreateProgramWithSource(cl_context context, cl_uint count, const char **strings,
                                             const size_t *lengths, cl_int *errcode) {
    cu_program *p = count == 1 && strings && strings[0] ? calloc(1, sizeof *p) : NULL;
    size_t n = p ? (lengths && lengths[0] ? lengths[0] : strlen(strings[0])) : 0;
    if (p && (p->source = malloc(n + 1))) {
        memcpy(p->source, strings[0], n);
        p->source[n] = 0;
        p->c = (cu_context *)context;
        if (errcode) *errcode = CL_SUCCESS;
        return (cl_program)p;
    }
    free(p);
    if (errcode) *errcode = count == 1 ? CL_OUT_OF_HOST_MEMORY : CL_INVALID_VALUE;
    return NULL;
}

static cl_program cu_CreateProgramWithBinary(cl_context context, cl_uint ndevices, const cl_device_id *devices,
                                             const size_t *lengths, const unsigned char **binaries, cl_int *status,
                                             cl_int *errcode) {
    (void)devices;
    cu_program *p = NULL;
    uint64_t source_len = 0;
    size_t len = ndevices == 1 ? lengths[0] : 0;
    const unsigned char *b = ndevices == 1 ? binaries[0] : NULL;
    bool ok = b && len >= sizeof binary_tag + 8 && !memcmp(b, binary_tag, sizeof binary_tag);
    if (ok) memcpy(&source_len, b + sizeof binary_tag, 8);
    ok = ok && source_len < len - sizeof binary_tag - 8;
    size_t at = sizeof binary_tag + 8 + (size_t)source_len;
    if (ok && (p = calloc(1, sizeof *p)) && (p->source = malloc((size_t)source_len + 1)) &&
        (p->cubin = malloc(len - at))) {
        memcpy(p->source, b + sizeof binary_tag + 8, (size_t)source_len);
        p->source[source_len] = 0;
        memcpy(p->cubin, b + at, len - at);
        p->cubin_len = len - at;
        p->c = (cu_context *)context;
        if (status) status[0] = CL_SUCCESS;
        if (errcode) *errcode = CL_SUCCESS;
        return (cl_program)p;
    }
    if (p) free(p->source);
    free(p);
    if (status && ndevices == 1) status[0] = CL_INVALID_BINARY;
    if (errcode) *errcode = ok ? CL_OUT_OF_HOST_MEMORY : CL_INVALID_BINARY;
    return NULL;
}

static void set_log(cu_program *p, const char *text) {
    free(p->log);
    p->log = strdup(text);
}

/* Compile the source (unless the program came with its CUBIN) and load it. */
static cl_int cu_BuildProgram(cl_program program, cl_uint ndevices, const cl_device_id *devices, const char *options,
                              void (*notify)(cl_program, void *), void *user) {
    (void)ndevices, (void)devices, (void)options, (void)notify, (void)user;
    cu_program *p = (cu_program *)program;
    cu_context *c = p->c;
    st_err err = {0};
    if (!p->cubin) {
        if ((!c->nvrtc.handle && !cuda_nvrtc_load(&c->nvrtc, &err)) ||
            !cuda_compile(&c->nvrtc, p->source, c->device.arch, &p->cubin, &p->cubin_len, NULL, &err)) {
            set_log(p, err.message);
            snprintf(c->detail, sizeof c->detail, "%s", err.message);
            return c->nvrtc.handle ? CL_BUILD_PROGRAM_FAILURE : CL_COMPILER_NOT_AVAILABLE;
        }
    }
    if (p->module) return CL_SUCCESS;
    CUresult rc = cu_current(c) ? c->drv.cuModuleLoadData(&p->module, p->cubin) : 1;
    if (rc != 0) {
        cl_int code = cu_failed(c, "cuModuleLoadData", rc, CL_BUILD_PROGRAM_FAILURE);
        set_log(p, c->detail);
        return code;
    }
    set_log(p, "");
    return CL_SUCCESS;
}

static cl_int cu_GetProgramBuildInfo(cl_program program, cl_device_id device, cl_program_build_info what, size_t cap,
                                     void *value, size_t *size_ret) {
    (void)device;
    cu_program *p = (cu_program *)program;
    if (what != CL_PROGRAM_BUILD_LOG) return CL_INVALID_VALUE;
    const char *log = p->log ? p->log : "";
    return cu_put_info(log, strlen(log) + 1, cap, value, size_ret);
}

static cl_int cu_GetProgramInfo(cl_program program, cl_program_info what, size_t cap, void *value, size_t *size_ret) {
    cu_program *p = (cu_program *)program;
    if (!p->cubin) return CL_INVALID_PROGRAM_EXECUTABLE;
    size_t source_len = strlen(p->source), size = sizeof binary_tag + 8 + source_len + p->cubin_len;
    if (what == CL_PROGRAM_BINARY_SIZES) return cu_put_info(&size, sizeof size, cap, value, size_ret);
    if (what != CL_PROGRAM_BINARIES) return CL_INVALID_VALUE;
    if (size_ret) *size_ret = sizeof(unsigned char *);
    if (!value) return CL_SUCCESS;
    if (cap < sizeof(unsigned char *)) return CL_INVALID_VALUE;
    unsigned char *out = *(unsigned char **)value;
    uint64_t n = source_len;
    memcpy(out, binary_tag, sizeof binary_tag);
    memcpy(out + sizeof binary_tag, &n, 8);
    memcpy(out + sizeof binary_tag + 8, p->source, source_len);
    memcpy(out + sizeof binary_tag + 8 + source_len, p->cubin, p->cubin_len);
    return CL_SUCCESS;
}

static cl_int cu_ReleaseProgram(cl_program program) {
    cu_program *p = (cu_program *)program;
    if (!p) return CL_INVALID_PROGRAM;
    if (p->module && cu_current(p->c)) p->c->drv.cuModuleUnload(p->module);
    free(p->source);
    free(p->cubin);
    free(p->log);
    free(p);
    return CL_SUCCESS;
}

/* ---- kernels ---- */

/* The kinds of the parameters of kernel `name` in the source: a parameter
 * with a `*` is a buffer (cg_cuda.c writes no other pointer). The name may
 * follow launch bounds (cg_glue.c). */
static bool read_signature(const char *source, const char *name, cu_kernel *k) {
    size_t n = strlen(name);
    const char *at = source;
    for (; (at = strstr(at, "__global__ void ")); at++) {
        at += strlen("__global__ void ");
        if (!strncmp(at, "__launch_bounds__(", strlen("__launch_bounds__(")) && strstr(at, ") "))
            at = strstr(at, ") ") + 2;
        if (!strncmp(at, name, n) && at[n] == '(') break;
    }
    if (!at) return false;
    const char *p = at + n + 1, *end = strchr(p, ')');
    if (!end) return false;
    k->nargs = 0;
    for (const char *q = p; q < end; q++) k->nargs += *q == ',';
    if (end > p) k->nargs++;
    k->args = calloc(k->nargs + 1, sizeof *k->args);
    if (!k->args) return false;
    for (uint32_t i = 0; i < k->nargs; i++) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *stop = comma ? comma : end;
        k->args[i].kind = memchr(p, '*', (size_t)(stop - p)) ? ARG_BUFFER : ARG_VALUE;
        p = stop + 1;
    }
    return true;
}

static cl_kernel cu_CreateKernel(cl_program program, const char *name, cl_int *errcode) {
    cu_program *p = (cu_program *)program;
    cu_kernel *k = calloc(1, sizeof *k);
    cl_int rc = !k ? CL_OUT_OF_HOST_MEMORY : !p->module ? CL_INVALID_PROGRAM_EXECUTABLE : CL_SUCCESS;
    if (rc == CL_SUCCESS && !read_signature(p->source, name, k)) rc = CL_INVALID_KERNEL_NAME;
    if (rc == CL_SUCCESS && cu_current(p->c)) {
        CUresult r = p->c->drv.cuModuleGetFunction(&k->f, p->module, name);
        if (r != 0) rc = cu_failed(p->c, "cuModuleGetFunction", r, CL_INVALID_KERNEL_NAME);
    }
    if (errcode) *errcode = rc;
    if (rc != CL_SUCCESS) {
        if (k) free(k->args);
        free(k);
        return NULL;
    }
    k->p = p;
    return (cl_kernel)k;
}

static cl_int cu_ReleaseKernel(cl_kernel kernel) {
    cu_kernel *k = (cu_kernel *)kernel;
    if (!k) return CL_INVALID_KERNEL;
    free(k->args);
    free(k);
    return CL_SUCCESS;
}

static cl_int cu_SetKernelArg(cl_kernel kernel, cl_uint index, size_t size, const void *value) {
    cu_kernel *k = (cu_kernel *)kernel;
    if (index >= k->nargs) return CL_INVALID_ARG_INDEX;
    cu_arg *a = &k->args[index];
    if (a->kind == ARG_BUFFER) {
        if (size != sizeof(cl_mem) || !value) return CL_INVALID_ARG_SIZE;
        const cu_mem *m = *(const cu_mem *const *)value;
        a->value = m ? m->ptr : 0;
        return CL_SUCCESS;
    }
    if (!value) { /* local memory of `size` bytes */
        if (!size) return CL_INVALID_ARG_SIZE;
        a->kind = ARG_LOCAL;
        a->local_bytes = size;
        return CL_SUCCESS;
    }
    if (size == 0 || size > sizeof a->value) return CL_INVALID_ARG_SIZE;
    a->kind = ARG_VALUE;
    a->value = 0;
    memcpy(&a->value, value, size);
    return CL_SUCCESS;
}

/* The dynamic shared memory the set __local arguments take, 16-aligned. */
static size_t local_bytes(const cu_kernel *k) {
    size_t total = 0;
    for (uint32_t i = 0; i < k->nargs; i++)
        if (k->args[i].kind == ARG_LOCAL) total = (total + 15) / 16 * 16 + k->args[i].local_bytes;
    return total;
}

static cl_int cu_GetKernelWorkGroupInfo(cl_kernel kernel, cl_device_id device, cl_kernel_work_group_info what,
                                        size_t cap, void *value, size_t *size_ret) {
    (void)device;
    cu_kernel *k = (cu_kernel *)kernel;
    const cuda_driver *d = &k->p->c->drv;
    int v = 0;
    if (what == CL_KERNEL_WORK_GROUP_SIZE) {
        d->cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k->f);
        size_t s = v > 0 ? (size_t)v : 1;
        return cu_put_info(&s, sizeof s, cap, value, size_ret);
    }
    if (what == CL_KERNEL_LOCAL_MEM_SIZE) { /* its own shared memory and the __local arguments set */
        d->cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k->f);
        cl_ulong b = (cl_ulong)(v > 0 ? v : 0) + local_bytes(k);
        return cu_put_info(&b, sizeof b, cap, value, size_ret);
    }
    return CL_INVALID_VALUE;
}

static cl_int cu_EnqueueNDRangeKernel(cl_command_queue queue, cl_kernel kernel, cl_uint dims, const size_t *offset,
                                      const size_t *global, const size_t *local, cl_uint nwait, const cl_event *wait,
                                      cl_event *event) {
    (void)nwait, (void)wait;
    cu_queue *q = (cu_queue *)queue;
    cu_kernel *k = (cu_kernel *)kernel;
    const cuda_driver *d = &q->c->drv;
    if (dims != 1 || (offset && offset[0])) return CL_INVALID_WORK_DIMENSION;
    if (!local || !local[0] || global[0] % local[0] || local[0] > (size_t)q->c->device.max_threads)
        return CL_INVALID_WORK_GROUP_SIZE;
    size_t groups = global[0] / local[0];
    if (groups > 0x7fffffff) return CL_INVALID_GLOBAL_WORK_SIZE;
    /* the __local arguments' offsets into the dynamic shared memory */
    void **params = calloc(k->nargs + 1, sizeof *params);
    if (!params) return CL_OUT_OF_HOST_MEMORY;
    size_t shared = 0;
    for (uint32_t i = 0; i < k->nargs; i++) {
        cu_arg *a = &k->args[i];
        if (a->kind == ARG_LOCAL) {
            shared = (shared + 15) / 16 * 16;
            a->value = shared;
            shared += a->local_bytes;
        }
        params[i] = &a->value;
    }
    int own = 0;
    d->cuFuncGetAttribute(&own, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k->f);
    cl_int out = CL_SUCCESS;
    CUresult rc = cu_current(q->c) ? 0 : 1;
    if (rc == 0 && shared + (size_t)own > (size_t)q->c->device.shared_optin) out = CL_OUT_OF_RESOURCES;
    /* more than the default 48 KiB of shared memory is opted in to per function */
    if (rc == 0 && out == CL_SUCCESS && shared + (size_t)own > (size_t)q->c->device.shared_default)
        rc = d->cuFuncSetAttribute(k->f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)shared);
    cu_event *e = NULL;
    if (rc == 0 && out == CL_SUCCESS) out = event_begin(q, event, &e);
    if (rc == 0 && out == CL_SUCCESS) {
        rc = d->cuLaunchKernel(k->f, (unsigned)groups, 1, 1, (unsigned)local[0], 1, 1, (unsigned)shared, q->stream,
                               params, NULL);
        event_end(e, event, rc);
    }
    free(params);
    if (rc != 0) return cu_failed(q->c, "cuLaunchKernel", rc, CL_OUT_OF_RESOURCES);
    return out;
}

bool st_cuda_compile_check(const st_code *code, int arch, size_t *cubin_bytes, st_err *err) {
    cuda_nvrtc n;
    if (!cuda_nvrtc_load(&n, err)) return false;
    char *image = NULL;
    size_t len = 0;
    bool ok = cuda_compile(&n, code->cuda, arch, &image, &len, NULL, err);
    free(image);
    cuda_nvrtc_unload(&n);
    if (cubin_bytes) *cubin_bytes = len;
    return ok;
}

const cl_api cl_api_cuda = {
#define CL_API_CUDA(name) .name = cu_##name,
    CL_API_FUNCTIONS(CL_API_CUDA)
#undef CL_API_CUDA
    .detail = cu_detail,
};
