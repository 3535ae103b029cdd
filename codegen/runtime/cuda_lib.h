/* codegen/runtime/cuda_lib.h — internal to the runtime: NVRTC and the CUDA
 * driver, loaded when a CUDA device is asked for (dlopen), so that strata builds
 * and runs without CUDA and needs neither its headers nor its libraries
 * to be present at build time. Only what strata calls is declared, with
 * the driver API's stable ABI (handles are pointers, results ints). */
#ifndef STRATA_CUDA_LIB_H
#define STRATA_CUDA_LIB_H

#include "ir/ir.h"

typedef int CUresult;               /* 0: CUDA_SUCCESS */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef int nvrtcResult;            /* 0: NVRTC_SUCCESS */
typedef struct _nvrtcProgram *nvrtcProgram;

/* The attributes strata reads (cuda.h's CUdevice_attribute, CUfunction_attribute). */
enum {
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
    CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
    CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_INVALID_VALUE = 1,
};

/* X(result, name, symbol, parameters) for each driver function: `symbol`
 * is the versioned name cuda.h maps `name` to. */
#define CUDA_DRIVER_FUNCTIONS(X)                                                                     \
    X(CUresult, cuInit, "cuInit", (unsigned flags))                                                  \
    X(CUresult, cuDriverGetVersion, "cuDriverGetVersion", (int *version))                            \
    X(CUresult, cuDeviceGetCount, "cuDeviceGetCount", (int *count))                                  \
    X(CUresult, cuDeviceGet, "cuDeviceGet", (CUdevice * device, int ordinal))                        \
    X(CUresult, cuDeviceGetName, "cuDeviceGetName", (char *name, int len, CUdevice dev))             \
    X(CUresult, cuDeviceGetAttribute, "cuDeviceGetAttribute", (int *value, int attribute, CUdevice dev)) \
    X(CUresult, cuDeviceTotalMem, "cuDeviceTotalMem_v2", (size_t * bytes, CUdevice dev))             \
    X(CUresult, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (CUcontext * ctx, CUdevice dev)) \
    X(CUresult, cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", (CUdevice dev))           \
    X(CUresult, cuCtxSetCurrent, "cuCtxSetCurrent", (CUcontext ctx))                                 \
    X(CUresult, cuCtxSynchronize, "cuCtxSynchronize", (void))                                        \
    X(CUresult, cuGetErrorName, "cuGetErrorName", (CUresult error, const char **name))               \
    X(CUresult, cuGetErrorString, "cuGetErrorString", (CUresult error, const char **text))           \
    X(CUresult, cuMemAlloc, "cuMemAlloc_v2", (CUdeviceptr * ptr, size_t bytes))                      \
    X(CUresult, cuMemFree, "cuMemFree_v2", (CUdeviceptr ptr))                                        \
    X(CUresult, cuMemcpyHtoD, "cuMemcpyHtoD_v2", (CUdeviceptr dst, const void *src, size_t bytes))   \
    X(CUresult, cuMemcpyDtoH, "cuMemcpyDtoH_v2", (void *dst, CUdeviceptr src, size_t bytes))         \
    X(CUresult, cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2",                                           \
      (CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream))                             \
    X(CUresult, cuMemsetD8Async, "cuMemsetD8Async", (CUdeviceptr dst, unsigned char v, size_t n, CUstream stream)) \
    X(CUresult, cuMemsetD32Async, "cuMemsetD32Async", (CUdeviceptr dst, unsigned v, size_t n, CUstream stream)) \
    X(CUresult, cuStreamCreate, "cuStreamCreate", (CUstream * stream, unsigned flags))               \
    X(CUresult, cuStreamDestroy, "cuStreamDestroy_v2", (CUstream stream))                            \
    X(CUresult, cuStreamSynchronize, "cuStreamSynchronize", (CUstream stream))                       \
    X(CUresult, cuEventCreate, "cuEventCreate", (CUevent * event, unsigned flags))                   \
    X(CUresult, cuEventDestroy, "cuEventDestroy_v2", (CUevent event))                                \
    X(CUresult, cuEventRecord, "cuEventRecord", (CUevent event, CUstream stream))                    \
    X(CUresult, cuEventSynchronize, "cuEventSynchronize", (CUevent event))                           \
    X(CUresult, cuEventElapsedTime, "cuEventElapsedTime", (float *ms, CUevent start, CUevent end))   \
    X(CUresult, cuModuleLoadData, "cuModuleLoadData", (CUmodule * module, const void *image))        \
    X(CUresult, cuModuleUnload, "cuModuleUnload", (CUmodule module))                                 \
    X(CUresult, cuModuleGetFunction, "cuModuleGetFunction", (CUfunction * f, CUmodule module, const char *name)) \
    X(CUresult, cuFuncGetAttribute, "cuFuncGetAttribute", (int *value, int attribute, CUfunction f)) \
    X(CUresult, cuFuncSetAttribute, "cuFuncSetAttribute", (CUfunction f, int attribute, int value))  \
    X(CUresult, cuLaunchKernel, "cuLaunchKernel",                                                    \
      (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,  \
       unsigned shared_bytes, CUstream stream, void **params, void **extra))

#define NVRTC_FUNCTIONS(X)                                                                           \
    X(nvrtcResult, nvrtcVersion, "nvrtcVersion", (int *major, int *minor))                           \
    X(const char *, nvrtcGetErrorString, "nvrtcGetErrorString", (nvrtcResult result))                \
    X(nvrtcResult, nvrtcCreateProgram, "nvrtcCreateProgram",                                         \
      (nvrtcProgram * prog, const char *src, const char *name, int nheaders, const char *const *headers, \
       const char *const *include_names))                                                            \
    X(nvrtcResult, nvrtcDestroyProgram, "nvrtcDestroyProgram", (nvrtcProgram * prog))                \
    X(nvrtcResult, nvrtcCompileProgram, "nvrtcCompileProgram",                                       \
      (nvrtcProgram prog, int noptions, const char *const *options))                                 \
    X(nvrtcResult, nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize", (nvrtcProgram prog, size_t *size)) \
    X(nvrtcResult, nvrtcGetProgramLog, "nvrtcGetProgramLog", (nvrtcProgram prog, char *log))         \
    X(nvrtcResult, nvrtcGetCUBINSize, "nvrtcGetCUBINSize", (nvrtcProgram prog, size_t *size))        \
    X(nvrtcResult, nvrtcGetCUBIN, "nvrtcGetCUBIN", (nvrtcProgram prog, char *cubin))                 \
    X(nvrtcResult, nvrtcGetPTXSize, "nvrtcGetPTXSize", (nvrtcProgram prog, size_t *size))            \
    X(nvrtcResult, nvrtcGetPTX, "nvrtcGetPTX", (nvrtcProgram prog, char *ptx))

#define CUDA_LIB_FIELD(result, name, symbol, params) result(*name) params;

typedef struct cuda_driver {
    void *handle;
    CUDA_DRIVER_FUNCTIONS(CUDA_LIB_FIELD)
} cuda_driver;

typedef struct cuda_nvrtc {
    void *handle;
    NVRTC_FUNCTIONS(CUDA_LIB_FIELD)
} cuda_nvrtc;

/* Load the driver (libcuda.so.1; $STRATA_LIBCUDA names another) and call
 * cuInit; the error says what is missing and how to get it. */
bool cuda_driver_load(cuda_driver *d, st_err *err);
/* Load NVRTC (libnvrtc.so, from CUDA_HOME or /usr/local/cuda too;
 * $STRATA_NVRTC names another). */
bool cuda_nvrtc_load(cuda_nvrtc *n, st_err *err);
void cuda_driver_unload(cuda_driver *d);
void cuda_nvrtc_unload(cuda_nvrtc *n);

/* "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered" */
void cuda_error_text(const cuda_driver *d, CUresult rc, char *out, size_t cap);

/* Compile CUDA C++ (strata's kernels.cu) for sm_<arch> (90 for an H100)
 * into a CUBIN (malloc'ed, *image and *len). A failure is an error with
 * the head of NVRTC's log, which names the line. With ptxas_log, ptxas
 * reports each kernel's resources (--ptxas-options=-v) and *ptxas_log is
 * NVRTC's whole log (malloc'ed, "" when it has none). */
bool cuda_compile(const cuda_nvrtc *n, const char *source, int arch, char **image, size_t *len, char **ptxas_log,
                  st_err *err);
/* Compile it for compute_<arch> into PTX (malloc'ed, *ptx), as cuda_compile
 * would before ptxas: what the kernels load and store, instruction by
 * instruction. */
bool cuda_compile_ptx(const cuda_nvrtc *n, const char *source, int arch, char **ptx, st_err *err);

#endif
