/* codegen/runtime/jit.h — internal to the runtime: C source compiled in
 * memory by libtcc, the way the runtime runs the generated host glue. */
#ifndef STRATA_CODEGEN_JIT_H
#define STRATA_CODEGEN_JIT_H

#include "ir/ir.h"

typedef struct st_jit st_jit;

/* A function the compiled code may call: the only way it reaches the world
 * (it is compiled with -nostdlib -nostdinc, so it sees no libc either). */
typedef struct st_jit_symbol {
    const char *name;
    const void *address;
} st_jit_symbol;

/* Compile `source` with the macro STRATA_JIT defined, and `unit` (NULL:
 * none) as a second translation unit beside it, link them against
 * `symbols` (and the few helpers tcc's own code generation calls), and look
 * up `entry`. A source that does not compile or link, or lacks `entry`, is an
 * internal error (the source is generated, so it is a strata bug) carrying
 * tcc's message. */
st_jit *st_jit_compile(const char *source, const char *unit, const st_jit_symbol *symbols, size_t nsymbols,
                       const char *entry, void **entry_address, st_err *err);
/* Another function of the compiled code, or NULL where it has none. */
void *st_jit_lookup(st_jit *jit, const char *name);
void st_jit_free(st_jit *jit);

#endif
