/* codegen/runtime/cuda_cl.h — internal to the CUDA backend (cuda_device.c,
 * cuda_cl.c): the structs behind the OpenCL handles it hands out, and
 * the calls the two files share. cuda_cl.c says how the backend works. */
#ifndef STRATA_CUDA_CL_H
#define STRATA_CUDA_CL_H

#include "cl_api.h"
#include "cuda_lib.h"

typedef struct cu_context cu_context;

typedef struct cu_device {
    cu_context *c;
    CUdevice dev;
    int arch;                   /* 90 for compute capability 9.0 */
    int units, max_threads, shared_default, shared_optin;
    int l2_bytes;               /* its level-2 cache, which serves global atomics */
    size_t global_bytes;
    char name[256];
} cu_device;

struct cu_context {
    cuda_driver drv;
    cuda_nvrtc nvrtc;           /* loaded at the first build from source */
    CUcontext ctx;              /* the device's primary context */
    cu_device device;
    char detail[600];           /* the last failure in CUDA's or NVRTC's words */
};

typedef struct cu_queue {
    cu_context *c;
    CUstream stream;
    CUevent epoch;
    uint32_t live_events;       /* events handed out and not yet released */
} cu_queue;

typedef struct cu_mem {
    cu_context *c;
    CUdeviceptr ptr;
    size_t size;
} cu_mem;

typedef struct cu_program {
    cu_context *c;
    char *source;
    char *cubin;
    size_t cubin_len;
    CUmodule module;
    char *log;                  /* what the last build said */
} cu_program;

enum { ARG_VALUE, ARG_BUFFER, ARG_LOCAL };

typedef struct cu_arg {
    int kind;                   /* from the signature: VALUE or BUFFER; LOCAL once set so */
    size_t local_bytes;
    unsigned long long value;   /* what the launch passes: the bytes set, a device pointer, an offset */
} cu_arg;

typedef struct cu_kernel {
    cu_program *p;
    CUfunction f;
    uint32_t nargs;
    cu_arg *args;
} cu_kernel;

typedef struct cu_event {
    cu_queue *q;
    CUevent start, end;
} cu_event;

/* Record what CUDA said about a failed call (cu_detail gives it back) and
 * map it to an OpenCL code. */
cl_int cu_failed(cu_context *c, const char *call, CUresult rc, cl_int code);
const char *cu_detail(cl_context context);
/* The driver's calls act on the calling thread's current context. */
bool cu_current(cu_context *c);
/* A clGet*Info answer: `what` into value (of cap bytes), its size into *size_ret. */
cl_int cu_put_info(const void *what, size_t size, size_t cap, void *value, size_t *size_ret);

/* cuda_device.c: the device, the context and the queue */
cl_int cu_GetDeviceInfo(cl_device_id device, cl_device_info what, size_t cap, void *value, size_t *size_ret);
cl_int cu_ReleaseContext(cl_context context);
cl_int cu_ReleaseCommandQueue(cl_command_queue queue);
cl_int cu_GetCommandQueueInfo(cl_command_queue queue, cl_command_queue_info what, size_t cap, void *value,
                              size_t *size_ret);
cl_int cu_Finish(cl_command_queue queue);

#endif
