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

enum { MAX_LENGTHS = 256 }; /* a type holds fewer arrays: its depth is bounded */

typedef struct lengths_of {
    const st_size *seen[MAX_LENGTHS];
    uint32_t n;
} lengths_of;

static void note_length(const st_size *exist, void *data) {
    lengths_of *l = data;
    for (uint32_t i = 0; i < l->n; i++)
        if (l->seen[i] == exist) return;
    if (l->n < MAX_LENGTHS) l->seen[l->n++] = exist;
}

static void lengths_in(const st_type *t, lengths_of *l) {
    if (t->kind == ST_TYPE_ARRAY) {
        st_size_each_exist(t->size, note_length, l);
        lengths_in(t->elem, l);
    } else if (t->kind == ST_TYPE_TUPLE) {
        for (uint32_t i = 0; i < t->n; i++) lengths_in(t->items[i], l);
    }
}

uint32_t st_code_lengths_of(const st_type *t, const st_size **out, uint32_t cap) {
    lengths_of l = {.n = 0};
    lengths_in(t, &l);
    for (uint32_t i = 0; i < l.n && i < cap; i++) out[i] = l.seen[i];
    return l.n;
}

static void release(cg *g) {
    for (uint32_t i = 0; i < g->nkernels; i++) st_buf_free(&g->kernels[i]->body);
    st_buf_free(&g->nowhere.body);
    st_buf_free(&g->types);
    st_buf_free(&g->funcs);
    st_buf_free(&g->glue_values);
}

/* Expressions are flattened into variables where they nest deep
 * (cg_thread.c), but blocks cannot be: an if inside an if inside … 250
 * deep is a kernel the device's compiler refuses. It is refused here, with
 * the limit, instead of as a build log. */
static bool shallow_enough(cg *g) {
    for (uint32_t i = 0; i < g->nkernels; i++) {
        const cg_kernel *k = g->kernels[i];
        int depth = 1 + cg_bracket_depth(k->body.data ? k->body.data : "");
        if (depth > CG_MAX_BRACKETS)
            return cg_fail(g, NULL, "kernel %s (%s) nests blocks and brackets %d deep; OpenCL C compilers accept "
                                    "%d: nest fewer ifs (or maps of arrays) inside one another",
                           k->name, k->what, depth, CG_MAX_BRACKETS);
    }
    int depth = cg_bracket_depth(g->funcs.data ? g->funcs.data : "");
    if (depth > CG_MAX_BRACKETS)
        return cg_fail(g, NULL, "a function of the kernels nests blocks and brackets %d deep; OpenCL C compilers "
                                "accept %d: nest fewer ifs inside one another", depth, CG_MAX_BRACKETS);
    return true;
}

/* The first filter or partition in e (NULL when none): their rules (into
 * take, drop and the scan that counts) come first, in lower-opencl. */
static const st_node *run_time_sized(const st_node *e) {
    if (st_is_prim(e, ST_PRIM_FILTER) || st_is_prim(e, ST_PRIM_PARTITION)) return e;
    bool loop = e->kind == ST_NODE_PRIM && (e->u.prim == ST_PRIM_LOOP || e->u.prim == ST_PRIM_WHILE);
    for (uint32_t i = 0; i < e->nkids; i++) {
        /* never inside a lambda (the type checker refuses them there), but in a loop's body */
        if (e->kids[i]->kind == ST_NODE_LAMBDA && !loop) continue;
        const st_node *found = run_time_sized(e->kids[i]);
        if (found) return found;
    }
    return NULL;
}

bool st_codegen(st_ctx *cx, const st_def *def, st_arena *a, st_code *out, st_err *err) {
    memset(out, 0, sizeof *out);
    const st_node *cut = run_time_sized(def->body);
    if (cut)
        return st_fail(err, st_node_loc_or(cx, cut, def->loc), "a %s is left that no rule made a scan and a scatter (%s-scatter refuses elements that are rows, "
                                      "and a partition of an input of run-time length other than a take or a drop, such "
                                      "as of a concat; `strata rewrite -s %s-scatter` says why); `strata eval` runs the program "
                                      "on the interpreter",
                       st_prim_get(cut->u.prim)->name, st_prim_get(cut->u.prim)->name, st_prim_get(cut->u.prim)->name);
    /* the names in the kernels are the program's, not the context's history:
     * one program, one kernel text, one SHA-256, one build */
    const st_def *named = st_def_canonical(cx, def, err);
    if (!named) return false;
    cg g = {.cx = cx, .a = a, .def = named, .err = err, .level = CG_HOST, .lengths_buffer = -1};
    bool ok = cg_host(&g) && shallow_enough(&g);
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
        out->inputs = arrays_of(&g, CG_BUF_INPUT, &out->ninputs);
        out->outputs = arrays_of(&g, CG_BUF_OUTPUT, &out->noutputs);
        out->nlengths = g.nlengths;
        if (g.lengths_buffer >= 0) out->noutputs--; /* the last, the lengths, is not a leaf of the result */
        out->nscalars = g.nscalars;
        out->scalars = g.scalars;
        ok = !g.failed && names;
    }
    release(&g);
    return ok;
}
