/* codegen/runtime/build_cache.c — built OpenCL programs kept on disk, one
 * file per key: the device's binary as clGetProgramInfo gives it, behind a
 * line with its length and SHA-256 (see ENTRY_MAGIC). Explorations build
 * the same kernels again in each child process that times them, and a second
 * exploration of a space builds nothing; drivers' own caches (PoCL's kcache,
 * NVIDIA's ComputeCache) differ per vendor and may be off. */
#include "build_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static void path_of(const char *dir, const char *key, char *out, size_t cap) {
    snprintf(out, cap, "%s/%s.bin", dir, key);
}

/* An entry is a header line, then the binary:
 *   "strata-build-cache-entry 2 LENGTH SHA256\n" BYTES
 * A file cut short (a full disk, a kill before the rename of an older
 * strata) or damaged would crash the driver that deserialises it, so its
 * length and hash are checked before the driver sees a byte. */
#define ENTRY_MAGIC "strata-build-cache-entry 2"

/* The binary of an entry whose header agrees with its bytes (NULL else). */
static const unsigned char *entry_binary(const char *text, size_t len, size_t *size) {
    const char *nl = memchr(text, '\n', len < 200 ? len : 200);
    if (!nl) return NULL;
    char head[200];
    memcpy(head, text, (size_t)(nl - text));
    head[nl - text] = 0;
    char want[65], got[65];
    unsigned long long n;
    int used = 0;
    if (sscanf(head, ENTRY_MAGIC " %llu %64[0-9a-f]%n", &n, want, &used) != 2 || head[used] || strlen(want) != 64)
        return NULL;
    const unsigned char *bytes = (const unsigned char *)nl + 1;
    size_t have = len - (size_t)(nl + 1 - text);
    if (n == 0 || n != have) return NULL;
    st_sha256_hex(bytes, have, got);
    if (strcmp(want, got)) return NULL;
    *size = have;
    return bytes;
}

cl_program build_cache_load(const cl_api *api, const char *dir, const char *key, cl_context context, cl_device_id device,
                            const char *options) {
    char path[4200];
    path_of(dir, key, path, sizeof path);
    size_t len = 0;
    st_err missing;
    /* missing, or not a regular file (a FIFO is refused, never waited on):
     * built again, and the entry written whole over it */
    char *text = st_read_file(path, &len, &missing);
    if (!text) return NULL;
    size_t size = 0;
    const unsigned char *binary = entry_binary(text, len, &size);
    cl_program program = NULL;
    if (binary) {
        cl_int status, rc;
        program = api->CreateProgramWithBinary(context, 1, &device, &size, &binary, &status, &rc);
        if (program && (rc != CL_SUCCESS || status != CL_SUCCESS ||
                        api->BuildProgram(program, 1, &device, options, NULL, NULL) != CL_SUCCESS)) {
            api->ReleaseProgram(program);
            program = NULL;
        }
    }
    free(text);
    /* damaged, or stale (another driver version wrote it): build it again */
    if (!program) unlink(path);
    return program;
}

void build_cache_store(const cl_api *api, const char *dir, const char *key, cl_program program) {
    size_t size = 0;
    if (api->GetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS || !size) return;
    unsigned char *bytes = malloc(size);
    if (!bytes) return;
    unsigned char *binaries[1] = {bytes};
    st_buf entry = {0};
    st_err ignored;
    if (api->GetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof binaries, binaries, NULL) == CL_SUCCESS &&
        st_make_dirs(dir, &ignored)) {
        char sha[65], path[4200];
        st_sha256_hex(bytes, size, sha);
        st_buf_printf(&entry, ENTRY_MAGIC " %llu %s\n", (unsigned long long)size, sha);
        st_buf_put(&entry, (const char *)bytes, size);
        path_of(dir, key, path, sizeof path);
        /* written aside and renamed: builds in parallel processes may store
         * the same key, and a reader must never see half a file */
        if (!entry.failed) st_write_file(path, entry.data, entry.len, &ignored);
    }
    st_buf_free(&entry);
    free(bytes);
}
