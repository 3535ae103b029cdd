/* codegen/runtime/cuda_device.c — the CUDA backend's devices: listing
 * them, opening one (its primary context and a stream), what
 * clGetDeviceInfo and clGetCommandQueueInfo ask of it, and failures in
 * CUDA's words. */
#include "cuda_cl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- failures ---- */

/* Record what CUDA said about a failed call and map it to an OpenCL code. */
cl_int cu_failed(cu_context *c, const char *call, CUresult rc, cl_int code) {
    char why[300];
    cuda_error_text(&c->drv, rc, why, sizeof why);
    snprintf(c->detail, sizeof c->detail, "%s: %s", call, why);
    return rc == CUDA_ERROR_OUT_OF_MEMORY ? CL_MEM_OBJECT_ALLOCATION_FAILURE : code;
}

const char *cu_detail(cl_context context) {
    cu_context *c = (cu_context *)context;
    return c && c->detail[0] ? c->detail : NULL;
}

/* The driver's calls act on the calling thread's current context. */
bool cu_current(cu_context *c) { return c->drv.cuCtxSetCurrent(c->ctx) == 0; }

cl_int cu_put_info(const void *what, size_t size, size_t cap, void *value, size_t *size_ret) {
    if (size_ret) *size_ret = size;
    if (!value) return CL_SUCCESS;
    if (cap < size) return CL_INVALID_VALUE;
    memcpy(value, what, size);
    return CL_SUCCESS;
}

/* ---- devices ---- */

static void read_device(const cuda_driver *d, CUdevice dev, cu_device *out) {
    int major = 0, minor = 0;
    d->cuDeviceGetName(out->name, sizeof out->name - 1, dev);
    d->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    d->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    d->cuDeviceGetAttribute(&out->units, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
    d->cuDeviceGetAttribute(&out->l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev);
    d->cuDeviceGetAttribute(&out->max_threads, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, dev);
    d->cuDeviceGetAttribute(&out->shared_default, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, dev);
    d->cuDeviceGetAttribute(&out->shared_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev);
    if (out->shared_optin < out->shared_default) out->shared_optin = out->shared_default;
    d->cuDeviceTotalMem(&out->global_bytes, dev);
    out->dev = dev;
    out->arch = major * 10 + minor;
}

static void describe(const cuda_driver *d, const cu_device *cd, uint32_t index, st_device_info *info) {
    int version = 0;
    d->cuDriverGetVersion(&version);
    memset(info, 0, sizeof *info);
    info->index = index;
    info->device_index = index;
    info->backend = &cl_backend_cuda;
    snprintf(info->platform, sizeof info->platform, "CUDA");
    snprintf(info->platform_version, sizeof info->platform_version, "CUDA %d.%d", version / 1000, version % 1000 / 10);
    snprintf(info->name, sizeof info->name, "%s", cd->name);
    snprintf(info->vendor, sizeof info->vendor, "NVIDIA Corporation");
    snprintf(info->version, sizeof info->version, "CUDA compute capability %d.%d", cd->arch / 10, cd->arch % 10);
    snprintf(info->driver, sizeof info->driver, "CUDA driver %d.%d", version / 1000, version % 1000 / 10);
    info->type = "GPU";
    info->compute_units = (uint32_t)cd->units;
    info->global_mem_bytes = cd->global_bytes;
    info->local_mem_bytes = (uint64_t)cd->shared_optin;
    info->max_alloc_bytes = cd->global_bytes; /* cuMemAlloc takes all of it in one piece */
    info->max_work_group = (size_t)cd->max_threads;
}

bool st_cuda_devices_list(st_device_info **out, size_t *count, st_err *err) {
    *out = NULL;
    *count = 0;
    cuda_driver d;
    if (!cuda_driver_load(&d, err)) return false;
    int n = 0;
    CUresult rc = d.cuDeviceGetCount(&n);
    st_device_info *list = rc == 0 && n > 0 ? calloc((size_t)n, sizeof *list) : NULL;
    for (int i = 0; list && i < n; i++) {
        CUdevice dev;
        cu_device cd = {0};
        if (d.cuDeviceGet(&dev, i) == 0) read_device(&d, dev, &cd);
        describe(&d, &cd, (uint32_t)i, &list[i]);
    }
    cuda_driver_unload(&d);
    if (!list)
        return rc == 0 && n == 0 ? st_fail(err, (st_loc){0}, "the CUDA driver here sees no GPU")
                                 : st_fail_internal(err, "cannot list the CUDA devices");
    *out = list;
    *count = (size_t)n;
    return true;
}

bool cuda_open(uint32_t ordinal, cl_context *context, cl_device_id *device, cl_command_queue *queue, st_err *err) {
    cu_context *c = calloc(1, sizeof *c);
    cu_queue *q = calloc(1, sizeof *q);
    if (!c || !q) {
        free(c);
        free(q);
        return st_fail_internal(err, "out of memory");
    }
    if (!cuda_driver_load(&c->drv, err)) {
        free(c);
        free(q);
        return false;
    }
    CUdevice dev;
    CUresult rc = c->drv.cuDeviceGet(&dev, (int)ordinal);
    const char *call = "cuDeviceGet";
    if (rc == 0) {
        read_device(&c->drv, dev, &c->device);
        c->device.c = c;
        call = "cuDevicePrimaryCtxRetain";
        rc = c->drv.cuDevicePrimaryCtxRetain(&c->ctx, dev);
    }
    if (rc == 0 && (call = "cuCtxSetCurrent", rc = c->drv.cuCtxSetCurrent(c->ctx)) == 0 &&
        (call = "cuStreamCreate", rc = c->drv.cuStreamCreate(&q->stream, 0)) == 0)
        call = "cuEventCreate", rc = c->drv.cuEventCreate(&q->epoch, 0);
    if (rc != 0) {
        char why[300];
        cuda_error_text(&c->drv, rc, why, sizeof why);
        st_fail(err, (st_loc){0}, "cannot open the CUDA device %u (%s: %s)", ordinal, call, why);
        if (q->stream) c->drv.cuStreamDestroy(q->stream);
        if (c->ctx) c->drv.cuDevicePrimaryCtxRelease(dev);
        cuda_driver_unload(&c->drv);
        free(c);
        free(q);
        return false;
    }
    q->c = c;
    *context = (cl_context)c;
    *device = (cl_device_id)&c->device;
    *queue = (cl_command_queue)q;
    return true;
}

cl_int cu_GetDeviceInfo(cl_device_id device, cl_device_info what, size_t cap, void *value, size_t *size_ret) {
    const cu_device *d = (const cu_device *)device;
    switch (what) {
    case CL_DEVICE_TYPE: {
        cl_device_type t = CL_DEVICE_TYPE_GPU;
        return cu_put_info(&t, sizeof t, cap, value, size_ret);
    }
    case CL_DEVICE_MAX_COMPUTE_UNITS: {
        cl_uint u = (cl_uint)d->units;
        return cu_put_info(&u, sizeof u, cap, value, size_ret);
    }
    case CL_DEVICE_MAX_WORK_GROUP_SIZE: {
        size_t s = (size_t)d->max_threads;
        return cu_put_info(&s, sizeof s, cap, value, size_ret);
    }
    case CL_DEVICE_LOCAL_MEM_SIZE: { /* a launch opts in to more than the default 48 KiB */
        cl_ulong b = (cl_ulong)d->shared_optin;
        return cu_put_info(&b, sizeof b, cap, value, size_ret);
    }
    case CL_DEVICE_GLOBAL_MEM_CACHE_SIZE: { /* the L2, where global atomics are done */
        cl_ulong b = (cl_ulong)d->l2_bytes;
        return cu_put_info(&b, sizeof b, cap, value, size_ret);
    }
    case CL_DEVICE_GLOBAL_MEM_SIZE: case CL_DEVICE_MAX_MEM_ALLOC_SIZE: { /* cuMemAlloc takes all of it in one piece */
        cl_ulong b = d->global_bytes;
        return cu_put_info(&b, sizeof b, cap, value, size_ret);
    }
    case CL_DEVICE_NAME: return cu_put_info(d->name, strlen(d->name) + 1, cap, value, size_ret);
    default: return CL_INVALID_VALUE;
    }
}

/* ---- the context and the queue ---- */

cl_int cu_ReleaseContext(cl_context context) {
    cu_context *c = (cu_context *)context;
    if (!c) return CL_INVALID_CONTEXT;
    c->drv.cuDevicePrimaryCtxRelease(c->device.dev);
    if (c->nvrtc.handle) cuda_nvrtc_unload(&c->nvrtc);
    cuda_driver_unload(&c->drv);
    free(c);
    return CL_SUCCESS;
}

cl_int cu_ReleaseCommandQueue(cl_command_queue queue) {
    cu_queue *q = (cu_queue *)queue;
    if (!q) return CL_INVALID_COMMAND_QUEUE;
    cu_current(q->c);
    q->c->drv.cuStreamSynchronize(q->stream);
    q->c->drv.cuEventDestroy(q->epoch);
    q->c->drv.cuStreamDestroy(q->stream);
    free(q);
    return CL_SUCCESS;
}

cl_int cu_GetCommandQueueInfo(cl_command_queue queue, cl_command_queue_info what, size_t cap, void *value,
                                     size_t *size_ret) {
    cu_queue *q = (cu_queue *)queue;
    if (what == CL_QUEUE_DEVICE) {
        cl_device_id d = (cl_device_id)&q->c->device;
        return cu_put_info(&d, sizeof d, cap, value, size_ret);
    }
    if (what == CL_QUEUE_CONTEXT) {
        cl_context c = (cl_context)q->c;
        return cu_put_info(&c, sizeof c, cap, value, size_ret);
    }
    return CL_INVALID_VALUE;
}

cl_int cu_Finish(cl_command_queue queue) {
    cu_queue *q = (cu_queue *)queue;
    CUresult rc = cu_current(q->c) ? q->c->drv.cuStreamSynchronize(q->stream) : 1;
    return rc == 0 ? CL_SUCCESS : cu_failed(q->c, "cuStreamSynchronize", rc, CL_OUT_OF_RESOURCES);
}
