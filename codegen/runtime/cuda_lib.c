/* codegen/runtime/cuda_lib.c — NVRTC and the CUDA driver, loaded with
 * dlopen. */
#include "cuda_lib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first of names that dlopen finds (NULL-terminated); `env`, when set,
 * instead. Never unloaded (RTLD_NODELETE): the driver keeps threads of its
 * own after cuInit, and a second device opened loads it again for free. */
static void *open_first(const char *env, const char *const *names, char *why, size_t cap) {
    const char *own = getenv(env);
    const char *const own_names[] = {own, NULL}; /* here: a compound literal in the if would end with it */
    if (own && own[0]) names = own_names;
    for (const char *const *name = names; *name; name++) {
        void *h = dlopen(*name, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (h) return h;
        if (name == names) snprintf(why, cap, "%s", dlerror()); /* the first failure says most */
    }
    return NULL;
}

/* Look up each function of a table; the first one missing is the error. */
#define CUDA_LIB_LOOKUP(result, name, symbol, params)                        \
    if (ok && !(t->name = (result(*) params)dlsym(t->handle, symbol))) { \
        missing = symbol;                                                     \
        ok = false;                                                           \
    }

bool cuda_driver_load(cuda_driver *t, st_err *err) {
    memset(t, 0, sizeof *t);
    /* NVIDIA's container toolkit mounts the driver in /usr/local/nvidia */
    static const char *const names[] = {"libcuda.so.1", "libcuda.so", "/usr/local/nvidia/lib64/libcuda.so.1", NULL};
    char why[300] = "";
    if (!(t->handle = open_first("STRATA_LIBCUDA", names, why, sizeof why)))
        return st_fail(err, (st_loc){0},
                       "no CUDA driver here (%s); the CUDA backend needs an NVIDIA GPU and its driver "
                       "(STRATA_LIBCUDA=PATH names the library)", why);
    bool ok = true;
    const char *missing = NULL;
    CUDA_DRIVER_FUNCTIONS(CUDA_LIB_LOOKUP)
    /* CUDA 12.8 versioned the event timer; older drivers have only the first */
    void *v2 = dlsym(t->handle, "cuEventElapsedTime_v2");
    if (v2) t->cuEventElapsedTime = (CUresult(*)(float *, CUevent, CUevent))v2;
    if (!ok) {
        cuda_driver_unload(t);
        return st_fail(err, (st_loc){0}, "the CUDA driver here is too old: it has no %s", missing);
    }
    CUresult rc = t->cuInit(0);
    if (rc != 0) {
        char why[200];
        cuda_error_text(t, rc, why, sizeof why);
        cuda_driver_unload(t);
        return st_fail(err, (st_loc){0}, "the CUDA driver does not start (cuInit: %s)", why);
    }
    return true;
}

bool cuda_nvrtc_load(cuda_nvrtc *t, st_err *err) {
    memset(t, 0, sizeof *t);
    char home[512] = "";
    const char *cuda_home = getenv("CUDA_HOME");
    if (cuda_home && cuda_home[0]) snprintf(home, sizeof home, "%s/lib64/libnvrtc.so", cuda_home);
    const char *const names[] = {"libnvrtc.so",     "libnvrtc.so.13", "libnvrtc.so.12",
                                 home[0] ? home : "/usr/local/cuda/lib64/libnvrtc.so",
                                 "/usr/local/cuda/lib64/libnvrtc.so", NULL};
    char why[300] = "";
    if (!(t->handle = open_first("STRATA_NVRTC", names, why, sizeof why)))
        return st_fail(err, (st_loc){0},
                       "no NVRTC here (%s); the CUDA backend compiles kernels with the CUDA toolkit's NVRTC "
                       "(install it, or set CUDA_HOME, or STRATA_NVRTC=PATH)", why);
    bool ok = true;
    const char *missing = NULL;
    NVRTC_FUNCTIONS(CUDA_LIB_LOOKUP)
    if (!ok) {
        cuda_nvrtc_unload(t);
        return st_fail(err, (st_loc){0}, "the NVRTC here is too old: it has no %s", missing);
    }
    return true;
}

void cuda_driver_unload(cuda_driver *t) {
    if (t->handle) dlclose(t->handle);
    memset(t, 0, sizeof *t);
}

void cuda_nvrtc_unload(cuda_nvrtc *t) {
    if (t->handle) dlclose(t->handle);
    memset(t, 0, sizeof *t);
}

void cuda_error_text(const cuda_driver *d, CUresult rc, char *out, size_t cap) {
    const char *name = NULL, *text = NULL;
    if (d->cuGetErrorName) d->cuGetErrorName(rc, &name);
    if (d->cuGetErrorString) d->cuGetErrorString(rc, &text);
    snprintf(out, cap, "%s: %s", name ? name : "CUDA error", text ? text : "no description");
    if (!name) snprintf(out, cap, "CUDA error %d", rc);
}

/* NVRTC's whole log, malloc'ed ("" when it has none); NULL when out of memory. */
static char *whole_log(const cuda_nvrtc *n, nvrtcProgram prog) {
    size_t len = 0;
    if (n->nvrtcGetProgramLogSize(prog, &len) != 0) len = 0;
    char *log = calloc(1, len + 1);
    if (log && len > 1 && n->nvrtcGetProgramLog(prog, log) != 0) log[0] = 0;
    return log;
}

/* Whether ptxas said "Entry function 'K' uses too much shared data (0xN
 * bytes, 0xM max)", and then the error: a kernel's own (static) local
 * memory is limited to 48 KiB, as in NVIDIA's OpenCL. Said as the host glue
 * says a group's local memory is too much, so that one phrase names the
 * limit on every backend. */
static bool too_much_shared(const char *log, st_err *err) {
    const char *at = log ? strstr(log, "Entry function '") : NULL;
    for (; at; at = strstr(at + 1, "Entry function '")) {
        char name[128];
        unsigned long need, most;
        if (sscanf(at, "Entry function '%127[^']' uses too much shared data (0x%lx bytes, 0x%lx max)", name, &need,
                   &most) == 3) {
            st_fail(err, (st_loc){0},
                    "%s needs %lu bytes of local memory per work-group; CUDA gives a kernel's own local memory %lu "
                    "(choose a smaller block size: M or WG)", name, need, most);
            return true;
        }
    }
    return false;
}

/* NVRTC's log, as much as fits an error, after `prefix`. */
static bool compile_error(const cuda_nvrtc *n, nvrtcProgram prog, const char *prefix, st_err *err) {
    char *log = whole_log(n, prog);
    if (!too_much_shared(log, err)) st_fail(err, (st_loc){0}, "%s%s", prefix, log && log[0] ? log : " (NVRTC gave no log)");
    free(log);
    return false;
}

/* Create and compile `source` for `arch_option` (sm_XX: a CUBIN; compute_XX:
 * PTX alone), with ptxas' report in the log when `report`. */
static bool compile_for(const cuda_nvrtc *n, const char *source, const char *arch_option, bool report,
                        nvrtcProgram *prog, st_err *err) {
    *prog = NULL;
    nvrtcResult rc = n->nvrtcCreateProgram(prog, source, "kernels.cu", 0, NULL, NULL);
    if (rc != 0) return st_fail(err, (st_loc){0}, "NVRTC cannot take the kernels: %s", n->nvrtcGetErrorString(rc));
    /* -default-device: the helpers strata writes (st_add_int…) have no
     * __device__ of their own; --fmad=false: a*b+c rounds twice, as in the
     * interpreter (OpenCL's FP_CONTRACT OFF); 177: unused prelude helpers */
    const char *const options[] = {arch_option, "-default-device", "--fmad=false", "-diag-suppress=177",
                                   "--ptxas-options=-v"};
    int noptions = (int)(sizeof options / sizeof *options) - (report ? 0 : 1);
    rc = n->nvrtcCompileProgram(*prog, noptions, options);
    if (rc == 0) return true;
    char prefix[160];
    snprintf(prefix, sizeof prefix, "the generated kernels do not compile with NVRTC for %s (%s):\n", strchr(arch_option, '=') + 1,
             n->nvrtcGetErrorString(rc));
    compile_error(n, *prog, prefix, err);
    n->nvrtcDestroyProgram(prog);
    return false;
}

bool cuda_compile_ptx(const cuda_nvrtc *n, const char *source, int arch, char **ptx, st_err *err) {
    *ptx = NULL;
    char option[48];
    snprintf(option, sizeof option, "--gpu-architecture=compute_%d", arch);
    nvrtcProgram prog;
    if (!compile_for(n, source, option, false, &prog, err)) return false;
    size_t size = 0;
    bool ok = n->nvrtcGetPTXSize(prog, &size) == 0 && size && (*ptx = calloc(1, size + 1)) &&
              n->nvrtcGetPTX(prog, *ptx) == 0;
    if (!ok) {
        free(*ptx);
        *ptx = NULL;
        st_fail(err, (st_loc){0}, "NVRTC compiled the kernels for compute_%d but gave no PTX", arch);
    }
    n->nvrtcDestroyProgram(&prog);
    return ok;
}

bool cuda_compile(const cuda_nvrtc *n, const char *source, int arch, char **image, size_t *len, char **ptxas_log,
                  st_err *err) {
    *image = NULL;
    *len = 0;
    if (ptxas_log) *ptxas_log = NULL;
    char gpu[48];
    snprintf(gpu, sizeof gpu, "--gpu-architecture=sm_%d", arch);
    nvrtcProgram prog;
    if (!compile_for(n, source, gpu, ptxas_log != NULL, &prog, err)) return false;
    bool ok = true;
    size_t size = 0;
    if (ok && (n->nvrtcGetCUBINSize(prog, &size) != 0 || !size || !(*image = malloc(size)) ||
               n->nvrtcGetCUBIN(prog, *image) != 0)) {
        free(*image);
        *image = NULL;
        ok = st_fail(err, (st_loc){0}, "NVRTC compiled the kernels for sm_%d but gave no CUBIN", arch);
    }
    if (ok) *len = size;
    if (ok && ptxas_log && !(*ptxas_log = whole_log(n, prog))) {
        free(*image);
        *image = NULL;
        *len = 0;
        ok = st_fail(err, (st_loc){0}, "out of memory for NVRTC's log");
    }
    n->nvrtcDestroyProgram(&prog);
    return ok;
}
