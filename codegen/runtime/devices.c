/* codegen/runtime/devices.c — the OpenCL platforms and devices of this
 * machine. */
#define CL_TARGET_OPENCL_VERSION 120
#include "cl_api.h"

#include <CL/cl.h>
#include <stdlib.h>
#include <string.h>

#ifndef CL_PLATFORM_NOT_FOUND_KHR
#define CL_PLATFORM_NOT_FOUND_KHR -1001
#endif

static void platform_text(cl_platform_id p, cl_platform_info what, char *buf, size_t cap) {
    if (clGetPlatformInfo(p, what, cap, buf, NULL) != CL_SUCCESS) buf[0] = 0;
    buf[cap - 1] = 0;
}

static void device_text(cl_device_id d, cl_device_info what, char *buf, size_t cap) {
    if (clGetDeviceInfo(d, what, cap, buf, NULL) != CL_SUCCESS) buf[0] = 0;
    buf[cap - 1] = 0;
}

static const char *type_name(cl_device_type t) {
    if (t & CL_DEVICE_TYPE_GPU) return "GPU";
    if (t & CL_DEVICE_TYPE_CPU) return "CPU";
    if (t & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
    return "other";
}

bool st_devices_list(st_device_info **out, size_t *count, st_err *err) {
    *out = NULL;
    *count = 0;
    cl_uint np = 0;
    cl_int rc = clGetPlatformIDs(0, NULL, &np);
    if (rc == CL_PLATFORM_NOT_FOUND_KHR || (rc == CL_SUCCESS && np == 0))
        return st_fail(err, (st_loc){0}, "no OpenCL platform found; install an OpenCL driver (on Debian, pocl-opencl-icd runs OpenCL on the CPU)");
    if (rc != CL_SUCCESS) return st_fail_internal(err, "clGetPlatformIDs failed (%d)", rc);
    cl_platform_id *platforms = calloc(np, sizeof *platforms);
    if (!platforms) return st_fail_internal(err, "out of memory");
    clGetPlatformIDs(np, platforms, NULL);
    size_t n = 0, cap = 0;
    st_device_info *list = NULL;
    for (cl_uint p = 0; p < np; p++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0) continue;
        cl_device_id *devs = calloc(nd, sizeof *devs);
        if (!devs || n + nd > SIZE_MAX / 2) {
            free(devs);
            continue;
        }
        clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, nd, devs, NULL);
        if (n + nd > cap) {
            cap = (n + nd) * 2;
            st_device_info *bigger = realloc(list, cap * sizeof *list);
            if (!bigger) {
                free(devs);
                break;
            }
            list = bigger;
        }
        for (cl_uint d = 0; d < nd; d++) {
            st_device_info *info = &list[n];
            memset(info, 0, sizeof *info);
            info->backend = &cl_backend_opencl;
            info->index = (uint32_t)n;
            info->platform_index = p;
            info->device_index = d;
            platform_text(platforms[p], CL_PLATFORM_NAME, info->platform, sizeof info->platform);
            platform_text(platforms[p], CL_PLATFORM_VERSION, info->platform_version, sizeof info->platform_version);
            device_text(devs[d], CL_DEVICE_NAME, info->name, sizeof info->name);
            device_text(devs[d], CL_DEVICE_VENDOR, info->vendor, sizeof info->vendor);
            device_text(devs[d], CL_DEVICE_VERSION, info->version, sizeof info->version);
            device_text(devs[d], CL_DRIVER_VERSION, info->driver, sizeof info->driver);
            cl_device_type type = 0;
            cl_uint units = 0;
            cl_ulong global = 0, local = 0, max_alloc = 0;
            size_t wg = 0;
            clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof type, &type, NULL);
            clGetDeviceInfo(devs[d], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);
            clGetDeviceInfo(devs[d], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof global, &global, NULL);
            clGetDeviceInfo(devs[d], CL_DEVICE_LOCAL_MEM_SIZE, sizeof local, &local, NULL);
            clGetDeviceInfo(devs[d], CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL);
            clGetDeviceInfo(devs[d], CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
            info->type = type_name(type);
            info->compute_units = units;
            info->global_mem_bytes = global;
            info->local_mem_bytes = local;
            info->max_alloc_bytes = max_alloc;
            info->max_work_group = wg;
            n++;
        }
        free(devs);
    }
    free(platforms);
    if (n == 0) {
        free(list);
        return st_fail(err, (st_loc){0}, "the OpenCL platforms here have no devices");
    }
    *out = list;
    *count = n;
    return true;
}
