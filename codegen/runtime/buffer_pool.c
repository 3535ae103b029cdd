/* codegen/runtime/buffer_pool.c — the glue's temporaries kept from run to run
 * (buffer_pool.h says why and how). */
#include "buffer_pool.h"

/* Types spelled out as the glue's own STRATA_JIT prelude spells them, so
 * that the unit needs none of its declarations. */
const char st_buffer_pool_glue[] =
    "extern char strata_buffer_pool[];\n"
    "struct _cl_mem *st_buffer_pool_create(void *, struct _cl_context *, unsigned long, unsigned long, void *,\n"
    "                                      int *);\n"
    "int st_buffer_pool_release(void *, struct _cl_mem *);\n"
    "struct _cl_mem *clCreateBuffer(struct _cl_context *context, unsigned long flags, unsigned long size,\n"
    "                               void *host, int *err) {\n"
    "    return st_buffer_pool_create(strata_buffer_pool, context, flags, size, host, err);\n"
    "}\n"
    "int clReleaseMemObject(struct _cl_mem *mem) { return st_buffer_pool_release(strata_buffer_pool, mem); }\n";

/* Releases the idle buffers, keeping the busy ones in order. */
static void release_idle(st_buffer_pool *pool) {
    uint32_t kept = 0;
    for (uint32_t i = 0; i < pool->n; i++) {
        if (pool->slot[i].busy)
            pool->slot[kept++] = pool->slot[i];
        else
            pool->api->ReleaseMemObject(pool->slot[i].mem);
    }
    pool->n = kept;
}

cl_mem st_buffer_pool_create(void *p, cl_context context, cl_mem_flags flags, size_t size, void *host,
                             cl_int *err) {
    st_buffer_pool *pool = p;
    if (host) return pool->api->CreateBuffer(context, flags, size, host, err); /* the caller's memory */
    for (uint32_t i = 0; i < pool->n; i++) {
        st_pooled_buffer *s = &pool->slot[i];
        if (!s->busy && s->flags == flags && s->size == size) {
            s->busy = true;
            if (err) *err = CL_SUCCESS;
            return s->mem;
        }
    }
    release_idle(pool);
    cl_mem mem = pool->api->CreateBuffer(context, flags, size, NULL, err);
    if (mem && pool->n < ST_BUFFER_POOL_SLOTS)
        pool->slot[pool->n++] = (st_pooled_buffer){.mem = mem, .flags = flags, .size = size, .busy = true};
    return mem;
}

cl_int st_buffer_pool_release(void *p, cl_mem mem) {
    st_buffer_pool *pool = p;
    for (uint32_t i = 0; i < pool->n; i++)
        if (pool->slot[i].mem == mem && pool->slot[i].busy) {
            pool->slot[i].busy = false;
            return CL_SUCCESS;
        }
    return pool->api->ReleaseMemObject(mem); /* one it did not keep (a full pool's) */
}

void st_buffer_pool_drain(st_buffer_pool *pool) {
    for (uint32_t i = 0; i < pool->n; i++) pool->slot[i].busy = false;
    release_idle(pool);
}
