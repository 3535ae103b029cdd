/* codegen/backend.c — the backends, one descriptor each: what the layers
 * above codegen/ ask of a backend (its name, its kernels' file and text,
 * its devices' folder, its help), so that none of them tests which it is.
 * How each opens a device and runs kernels is the runtime's
 * (runtime/runtime.c). */
#include "runtime/cl_api.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

const st_backend cl_backend_opencl = {
    .name = "opencl",
    .kernel_file = "kernels.cl",
    .kernels_at = offsetof(st_code, opencl),
    .folder_suffix = "",
    .lists = "the OpenCL platforms",
};

const st_backend cl_backend_cuda = {
    .name = "cuda",
    .kernel_file = "kernels.cu",
    .kernels_at = offsetof(st_code, cuda),
    .folder_suffix = "-cuda",
    .runs = "the same kernels compiled by NVRTC, run by the CUDA driver",
    .lists = "the CUDA devices",
    .about_run = "--backend cuda runs the same kernels through CUDA: kernels.cu is kernels.cl behind a prelude that maps\n"
                 "OpenCL's built-ins to CUDA's, compiled by NVRTC for the GPU's architecture and launched by the driver.",
    .about_devices = "With --backend cuda, the CUDA devices instead: what `--backend cuda --device D` picks from (CUDA 0 is\n"
                     "also `--device cuda:0`). The CUDA backend loads the driver (libcuda.so.1) and NVRTC when asked for.",
};

static const st_backend *const backends[] = {&cl_backend_opencl, &cl_backend_cuda};

const st_backend *const *st_backends(size_t *count) {
    if (count) *count = sizeof backends / sizeof *backends;
    return backends;
}

const st_backend *st_backend_named(const char *name) {
    for (size_t i = 0; name && i < sizeof backends / sizeof *backends; i++)
        if (!strcmp(backends[i]->name, name)) return backends[i];
    return NULL;
}

const st_backend *st_device_backend(const st_device_info *dev) { return dev->backend ? dev->backend : backends[0]; }

const st_backend *st_backend_of_spec(const char *spec, const char **rest) {
    *rest = spec;
    /* (the default backend's devices are named without its name) */
    for (size_t i = 1; spec && i < sizeof backends / sizeof *backends; i++) {
        size_t n = strlen(backends[i]->name);
        if (strncasecmp(spec, backends[i]->name, n) || (spec[n] && spec[n] != ':')) continue;
        *rest = spec[n] ? spec + n + 1 : "";
        return backends[i];
    }
    return backends[0];
}

const char *st_backend_spec(const st_backend *b, const char *device, char *buf, size_t cap) {
    const char *rest;
    if (b == backends[0] || (device && st_backend_of_spec(device, &rest) == b)) return device;
    snprintf(buf, cap, device ? "%s:%s" : "%s", b->name, device);
    return buf;
}

const char *st_backend_kernels(const st_backend *b, const st_code *code) {
    const char *text;
    memcpy(&text, (const char *)code + b->kernels_at, sizeof text);
    return text;
}

void st_backend_set_kernels(const st_backend *b, st_code *code, const char *text) {
    memcpy((char *)code + b->kernels_at, &text, sizeof text);
}
