/* codegen/runtime/jit.c — C source compiled in memory by libtcc.
 *
 * The source is compiled with -nostdlib -nostdinc: there is no tcc include
 * directory or runtime library on the machine, and the glue should not reach
 * anything it is not given anyway. So it links only against the symbols the
 * caller lists, plus the helpers tcc's code generator itself emits calls to
 * (memset and memmove for initialisers and struct copies, and the unsigned
 * 64-bit <-> floating conversions), which the glue's author never sees. */
#include "jit.h"

#include <libtcc.h>
#include <stdlib.h>
#include <string.h>

struct st_jit {
    TCCState *tcc;
    st_buf messages; /* everything tcc reported, "; "-separated */
};

/* tcc reports through this instead of printing (the library never prints). */
static void on_message(void *opaque, const char *msg) {
    st_jit *jit = opaque;
    st_buf_printf(&jit->messages, "%s%s", jit->messages.len ? "; " : "", msg);
}

/* What libtcc1 would provide; gcc compiles these casts inline. */
static unsigned long long fixunsdfdi(double x) { return (unsigned long long)x; }
static unsigned long long fixunssfdi(float x) { return (unsigned long long)x; }
static double floatundidf(unsigned long long x) { return (double)x; }
static float floatundisf(unsigned long long x) { return (float)x; }

static const st_jit_symbol tcc_helpers[] = {
    {"memset", (const void *)memset},
    {"memmove", (const void *)memmove},
    {"memcpy", (const void *)memcpy},
    {"__fixunsdfdi", (const void *)fixunsdfdi},
    {"__fixunssfdi", (const void *)fixunssfdi},
    {"__floatundidf", (const void *)floatundidf},
    {"__floatundisf", (const void *)floatundisf},
};

static st_jit *fail(st_jit *jit, st_err *err, const char *what) {
    st_fail_internal(err, "the generated host glue %s: %s", what,
                     jit->messages.data ? jit->messages.data : "tcc gave no message");
    st_jit_free(jit);
    return NULL;
}

st_jit *st_jit_compile(const char *source, const char *unit, const st_jit_symbol *symbols, size_t nsymbols,
                       const char *entry, void **entry_address, st_err *err) {
    st_jit *jit = calloc(1, sizeof *jit);
    if (!jit || !(jit->tcc = tcc_new())) {
        free(jit);
        st_fail_internal(err, "out of memory starting libtcc");
        return NULL;
    }
    tcc_set_error_func(jit->tcc, jit, on_message);
    tcc_set_options(jit->tcc, "-nostdlib -nostdinc");
    tcc_set_output_type(jit->tcc, TCC_OUTPUT_MEMORY);
    tcc_define_symbol(jit->tcc, "STRATA_JIT", "1");
    if (tcc_compile_string(jit->tcc, source) < 0) return fail(jit, err, "does not compile");
    if (unit && tcc_compile_string(jit->tcc, unit) < 0) return fail(jit, err, "does not compile");
    for (size_t i = 0; i < sizeof tcc_helpers / sizeof *tcc_helpers; i++)
        tcc_add_symbol(jit->tcc, tcc_helpers[i].name, tcc_helpers[i].address);
    for (size_t i = 0; i < nsymbols; i++) tcc_add_symbol(jit->tcc, symbols[i].name, symbols[i].address);
    if (tcc_relocate(jit->tcc, TCC_RELOCATE_AUTO) < 0) return fail(jit, err, "does not link");
    *entry_address = tcc_get_symbol(jit->tcc, entry);
    if (!*entry_address) {
        st_fail_internal(err, "the generated host glue has no function `%s`", entry);
        st_jit_free(jit);
        return NULL;
    }
    return jit;
}

void *st_jit_lookup(st_jit *jit, const char *name) { return tcc_get_symbol(jit->tcc, name); }

void st_jit_free(st_jit *jit) {
    if (!jit) return;
    if (jit->tcc) tcc_delete(jit->tcc);
    st_buf_free(&jit->messages);
    free(jit);
}
