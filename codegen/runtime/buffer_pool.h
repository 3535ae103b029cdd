/* codegen/runtime/buffer_pool.h — internal to the runtime: the glue's
 * temporary buffers, kept by an executable from one run to the next.
 *
 * Why: the glue creates its temporaries at the start of every run and
 * releases them at its end. PoCL's CPU device backs a buffer with
 * posix_memalign(128, size), and glibc cannot place the next run's aligned
 * request in the chunk the last run freed (it needs the alignment's slack
 * on top), so each run's temporaries landed on fresh pages, faulted in by
 * the first kernel that wrote them: a parallel scan's block scans ran
 * several times slower whenever their pages were new, and a benchmark's
 * ratio to a copy changed from run to run with it (docs/performance.md).
 * Kept, the same buffers serve every run.
 *
 * How: the runtime compiles the glue with two more functions in a second
 * unit (st_buffer_pool_glue), clCreateBuffer and clReleaseMemObject, that
 * call st_buffer_pool_create and st_buffer_pool_release on the
 * executable's own pool; the glue's text, and so an exported host.c, is
 * unchanged. A release only marks the buffer idle; a create takes an idle
 * one of the same flags and size, and, where there is none, first releases
 * the idle ones (another binding's sizes), so the pool holds at most what
 * one run uses. Its contents are a previous run's: the glue writes every
 * temporary before it reads it, as OpenCL promises no contents either.
 * A pool serves one run at a time, as an executable does. */
#ifndef STRATA_CODEGEN_BUFFER_POOL_H
#define STRATA_CODEGEN_BUFFER_POOL_H

#include "cl_api.h"

enum { ST_BUFFER_POOL_SLOTS = 64 };

typedef struct st_pooled_buffer {
    cl_mem mem;
    cl_mem_flags flags;
    size_t size;
    bool busy;
} st_pooled_buffer;

typedef struct st_buffer_pool {
    const cl_api *api;
    st_pooled_buffer slot[ST_BUFFER_POOL_SLOTS];
    uint32_t n;
} st_buffer_pool;

/* The glue's clCreateBuffer and clReleaseMemObject on the pool `pool`. */
cl_mem st_buffer_pool_create(void *pool, cl_context context, cl_mem_flags flags, size_t size, void *host,
                             cl_int *err);
cl_int st_buffer_pool_release(void *pool, cl_mem mem);

/* Releases every buffer the pool keeps; the pool is empty after. */
void st_buffer_pool_drain(st_buffer_pool *pool);

/* The second unit the glue is compiled with: the two OpenCL functions over
 * the pool the runtime binds as `strata_buffer_pool`. */
extern const char st_buffer_pool_glue[];

#endif
