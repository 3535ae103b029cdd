/* codegen/codegen.h — the public interface of strata's codegen stage.
 *
 * For now: the OpenCL runtime's view of the machine. Lowering, kernel
 * emission and the libtcc host glue join this header as they arrive. */
#ifndef STRATA_CODEGEN_H
#define STRATA_CODEGEN_H

#include "ir/ir.h"

typedef struct st_device_info {
    uint32_t index;          /* across all platforms, in listing order */
    uint32_t platform_index, device_index;
    char platform[128];      /* "Portable Computing Language" */
    char platform_version[128];
    char name[256];          /* "pthread-skylake-avx512-…" */
    char vendor[128];
    char version[128];       /* "OpenCL 3.0 PoCL …" */
    char driver[128];
    const char *type;        /* "GPU", "CPU", "accelerator", "other" */
    uint32_t compute_units;
    uint64_t global_mem_bytes, local_mem_bytes;
    size_t max_work_group;
} st_device_info;

/* Every OpenCL device of every platform. *out is malloc'ed (free it); a
 * machine without any OpenCL platform is an error that says how to get one. */
bool st_devices_list(st_device_info **out, size_t *count, st_err *err);

#endif
