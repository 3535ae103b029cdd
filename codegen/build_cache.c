/* codegen/build_cache.c — built OpenCL programs kept on disk, one file per
 * key: the device's binary as clGetProgramInfo gives it. Explorations build
 * the same kernels again in each child process that times them, and a second
 * exploration of a space builds nothing; drivers' own caches (PoCL's kcache,
 * NVIDIA's ComputeCache) differ per vendor and may be off. */
#include "build_cache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void build_cache_key(const st_device_info *dev, const char *options, const char *source, char key[65]) {
    st_buf b = {0};
    /* the driver version decides the binary as much as the source does */
    st_buf_printf(&b, "strata-build-cache 1\n%s\n%s\n%s\n%s\n%s\n%s\n", dev->platform, dev->platform_version, dev->name,
                  dev->version, dev->driver, options);
    st_buf_puts(&b, source);
    st_sha256_hex(b.data ? b.data : "", b.len, key);
    st_buf_free(&b);
}

static void path_of(const char *dir, const char *key, const char *suffix, char *out, size_t cap) {
    snprintf(out, cap, "%s/%s.bin%s", dir, key, suffix);
}

cl_program build_cache_load(const cl_api *api, const char *dir, const char *key, cl_context context, cl_device_id device,
                            const char *options) {
    char path[4200];
    path_of(dir, key, "", path, sizeof path);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char *bytes = NULL;
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (size > 0 && fseek(f, 0, SEEK_SET) == 0 && (bytes = malloc((size_t)size)) &&
        fread(bytes, 1, (size_t)size, f) != (size_t)size) {
        free(bytes);
        bytes = NULL;
    }
    fclose(f);
    if (!bytes) return NULL;
    size_t len = (size_t)size;
    cl_int status, rc;
    const unsigned char *binary = bytes;
    cl_program program = api->CreateProgramWithBinary(context, 1, &device, &len, &binary, &status, &rc);
    free(bytes);
    if (program && (rc != CL_SUCCESS || status != CL_SUCCESS ||
                    api->BuildProgram(program, 1, &device, options, NULL, NULL) != CL_SUCCESS)) {
        api->ReleaseProgram(program);
        program = NULL;
    }
    if (!program) unlink(path); /* stale (another driver version wrote it): build it again */
    return program;
}

static bool make_dir(const char *dir) {
    char buf[4096];
    size_t len = strlen(dir);
    if (!len || len >= sizeof buf) return false;
    memcpy(buf, dir, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (buf[i] != '/' && buf[i]) continue;
        char c = buf[i];
        buf[i] = 0;
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) return false;
        buf[i] = c;
    }
    return true;
}

void build_cache_store(const cl_api *api, const char *dir, const char *key, cl_program program) {
    size_t size = 0;
    if (api->GetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS || !size) return;
    unsigned char *bytes = malloc(size);
    if (!bytes) return;
    unsigned char *binaries[1] = {bytes};
    char path[4200], tmp[4300];
    path_of(dir, key, "", path, sizeof path);
    /* write aside, then rename: builds in parallel processes may store the
     * same key, and a reader must never see half a file */
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = NULL;
    if (api->GetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof binaries, binaries, NULL) == CL_SUCCESS &&
        make_dir(dir) && (f = fopen(tmp, "wb"))) {
        bool ok = fwrite(bytes, 1, size, f) == size;
        ok = fclose(f) == 0 && ok;
        if (!ok || rename(tmp, path) != 0) unlink(tmp);
    }
    free(bytes);
}
