/* codegen/runtime/build_cache.h — built OpenCL programs kept on disk
 * (internal to the runtime; see st_cl_set_cache in codegen/codegen.h). */
#ifndef STRATA_BUILD_CACHE_H
#define STRATA_BUILD_CACHE_H

#include "cl_api.h"

/* The key of a source built for a device with these options. */
void build_cache_key(const st_device_info *dev, const char *options, const char *source, char key[65]);
/* The program stored under key, created from its binary and built (NULL when
 * there is none or it does not load: the caller builds from source). */
cl_program build_cache_load(const cl_api *api, const char *dir, const char *key, cl_context context, cl_device_id device,
                            const char *options);
/* Store a built program's binary under key; failures are ignored (a cache
 * that cannot be written costs a build next time, nothing else). */
void build_cache_store(const cl_api *api, const char *dir, const char *key, cl_program program);

#endif
