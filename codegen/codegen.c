/* codegen/codegen.c — st_codegen: a lowered def to kernels and glue. */
#include "cg.h"
#include "rewrite/rewrite.h"

#include <string.h>

static st_code_array *arrays_of(cg *g, cg_buffer_role role, uint32_t *n) {
    *n = cg_buffers_of(g, role);
    st_code_array *out = cg_alloc(g, (*n + 1) * sizeof *out);
    if (!out) return NULL;
    for (uint32_t i = 0; i < g->nbuffers; i++) {
        const cg_buffer *b = &g->buffers[i];
        if (b->role == role) out[b->index] = (st_code_array){b->kind, b->count};
    }
    return out;
}

static void release(cg *g) {
    for (uint32_t i = 0; i < g->nkernels; i++) st_buf_free(&g->kernels[i]->body);
    st_buf_free(&g->nowhere.body);
    st_buf_free(&g->types);
    st_buf_free(&g->funcs);
    st_buf_free(&g->glue_values);
}

bool st_codegen(st_ctx *cx, const st_def *def, st_arena *a, st_code *out, st_err *err) {
    memset(out, 0, sizeof *out);
    /* the names in the kernels are the program's, not the context's history:
     * one program, one kernel text, one SHA-256, one build */
    const st_def *named = st_def_canonical(cx, def, err);
    if (!named) return false;
    cg g = {.cx = cx, .a = a, .def = named, .err = err, .level = CG_HOST};
    bool ok = cg_host(&g);
    const char *opencl = ok ? cg_opencl(&g) : NULL;
    const char *cuda = ok ? cg_cuda(&g) : NULL;
    const char *host = ok && !g.failed ? cg_glue(&g) : NULL;
    ok = ok && !g.failed;
    if (ok) {
        const char **names = cg_alloc(&g, (g.nkernels + 1) * sizeof *names);
        for (uint32_t i = 0; names && i < g.nkernels; i++) names[i] = g.kernels[i]->name;
        out->def = def;
        out->opencl = opencl;
        out->cuda = cuda;
        out->host = host;
        out->nkernels = g.nkernels;
        out->kernel_names = names;
        out->nlaunches = g.nkernels;
        out->inputs = arrays_of(&g, CG_BUF_INPUT, &out->ninputs);
        out->outputs = arrays_of(&g, CG_BUF_OUTPUT, &out->noutputs);
        out->nscalars = g.nscalars;
        out->scalars = g.scalars;
        ok = !g.failed && names;
    }
    release(&g);
    return ok;
}
