/* codegen/runtime/cl_api.h — internal to codegen/ (the runtime, and the
 * backends' descriptors in backend.c): the part of the OpenCL API that the
 * runtime and the generated glue call, as a table, so that one runtime
 * and one glue serve both backends: OpenCL itself (cl_api_opencl), and CUDA
 * (cuda_cl.c), which implements these calls over the CUDA driver API and
 * NVRTC. Each entry has the OpenCL function's own type. */
#ifndef STRATA_CL_API_H
#define STRATA_CL_API_H

#define CL_TARGET_OPENCL_VERSION 120
#include "codegen/codegen.h"

#include <CL/cl.h>

/* X(name) for each function the table holds: clNAME in OpenCL. */
#define CL_API_FUNCTIONS(X)                                                                                   \
    X(CreateBuffer) X(ReleaseMemObject) X(EnqueueReadBuffer) X(EnqueueWriteBuffer) X(EnqueueCopyBuffer)         \
    X(EnqueueFillBuffer) X(CreateProgramWithSource) X(CreateProgramWithBinary) X(BuildProgram)                \
    X(GetProgramBuildInfo) X(GetProgramInfo) X(ReleaseProgram) X(CreateKernel) X(ReleaseKernel) X(SetKernelArg) \
    X(GetKernelWorkGroupInfo) X(EnqueueNDRangeKernel) X(GetCommandQueueInfo) X(GetDeviceInfo) X(Finish)        \
    X(GetEventProfilingInfo) X(ReleaseEvent) X(ReleaseCommandQueue) X(ReleaseContext) X(GetMemObjectInfo)

typedef struct cl_api {
#define CL_API_FIELD(name) __typeof__(cl##name) *name;
    CL_API_FUNCTIONS(CL_API_FIELD)
#undef CL_API_FIELD
    /* What went wrong in the last failed call on this context, beyond its
     * error code (CUDA's own error, NVRTC's), or NULL; may be NULL. */
    const char *(*detail)(cl_context context);
} cl_api;

/* OpenCL's own functions. */
extern const cl_api cl_api_opencl;

/* The backends' descriptors (backend.c). */
extern const st_backend cl_backend_opencl, cl_backend_cuda;

/* ---- the CUDA backend (cuda_device.c, cuda_cl.c) ---- */

/* Open CUDA device `ordinal`: its primary context and a stream, as the
 * handles cl_api_cuda takes. */
bool cuda_open(uint32_t ordinal, cl_context *context, cl_device_id *device, cl_command_queue *queue, st_err *err);
extern const cl_api cl_api_cuda;

#endif
