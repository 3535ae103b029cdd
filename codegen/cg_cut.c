/* codegen/cg_cut.c — lengths known only at run time.
 *
 * take(k, xs) has the length ?k, an existential size (ir.h): its value is
 * the count k, which a kernel computes. The glue reads it back into a long
 * of its own before any kernel that needs it is launched (cg_host.c), and
 * every kernel that mentions ?k takes that long as a parameter, so a size
 * with existentials is C text like any other (cg_size). Its C name is the
 * existential's place in the order they are met (ex_0, ex_1, …), not its
 * name in the context, so that one program is one kernel text.
 *
 * take, drop and concat copy nothing: take is its source with a shorter
 * length, drop its source shifted by the count, concat a view that picks
 * from one side or the other. Memory for an array of such a length is
 * allocated for its worst case (st_size_upper), before anything runs. */
#include "cg.h"

#include <string.h>

/* g->sized: the def with one more size variable per existential, so that
 * st_size_expr writes a size mentioning them. */
static void resize_def(cg *g) {
    const st_def *d = g->def;
    st_def *sized = cg_alloc(g, sizeof *sized);
    const st_node **sizes = cg_alloc(g, (d->nsizes + g->nexists + 1) * sizeof *sizes);
    if (!sized || !sizes) return;
    *sized = *d;
    memcpy(sizes, d->sizes, d->nsizes * sizeof *sizes);
    const st_type *i64 = st_type_scalar(g->cx, ST_I64);
    for (uint32_t i = 0; i < g->nexists; i++) {
        const st_node *v = st_var(g->cx, g->exists[i].var, i64, NULL);
        if (!v) return (void)cg_fail(g, NULL, "out of memory");
        sizes[d->nsizes + i] = v;
    }
    sized->nsizes = d->nsizes + g->nexists;
    sized->sizes = sizes;
    g->sized = sized;
}

cg_exist *cg_exist_of(cg *g, const st_size *exist) {
    for (uint32_t i = 0; i < g->nexists; i++)
        if (g->exists[i].size == exist) return &g->exists[i];
    if (!cg_grow(g, (void **)&g->exists, g->nexists, &g->capexists, sizeof *g->exists)) return NULL;
    cg_exist *x = &g->exists[g->nexists++];
    /* `?` begins no name a program can write: the variable is none of its sizes */
    *x = (cg_exist){.size = exist, .c = cg_str(g, "ex_%u", g->nexists - 1),
                    .var = st_intern_cstr(g->cx, cg_str(g, "?%u", g->nexists - 1))};
    if (!x->var) return cg_fail(g, NULL, "out of memory"), NULL;
    resize_def(g);
    return x;
}

typedef struct exists_of {
    const st_size *items[ST_MAX_KIDS];
    uint32_t n;
} exists_of;

static void note(const st_size *exist, void *data) {
    exists_of *e = data;
    if (e->n < ST_MAX_KIDS) e->items[e->n++] = exist;
}

const st_size *cg_exist_sized(cg *g, const st_size *s) {
    if (!st_size_has_exist(s)) return s;
    exists_of found = {.n = 0};
    st_size_each_exist(s, note, &found);
    const st_size *to[ST_MAX_KIDS];
    for (uint32_t i = 0; i < found.n; i++) {
        const cg_exist *x = cg_exist_of(g, found.items[i]);
        if (!x) return s;
        to[i] = st_size_var(g->cx, NULL, x->var);
    }
    st_err err = {0};
    const st_size *r = st_size_replace_exist(g->cx, s, found.items, to, found.n, &err);
    if (!r) return cg_fail(g, NULL, "%s", err.message), s;
    return r;
}

const char *cg_exist_var_c(cg *g, const char *name) {
    if (!name || name[0] != '?') return NULL;
    for (uint32_t i = 0; i < g->nexists; i++)
        if (g->exists[i].var == name) {
            cg_use_value(g, g->exists[i].c);
            return g->exists[i].c;
        }
    return NULL;
}

const st_size *cg_upper(cg *g, const st_size *s) {
    if (!s || !st_size_has_exist(s)) return s;
    st_err err = {0};
    const st_size *r = st_size_upper(g->cx, s, &err);
    if (!r) return cg_fail(g, NULL, "%s", err.message), s;
    return r;
}

bool cg_cut_view(const st_node *e) {
    if (e->kind != ST_NODE_PRIM) return false;
    switch (e->u.prim) {
    case ST_PRIM_TAKE: case ST_PRIM_DROP: return cg_is_view(e->kids[1]);
    case ST_PRIM_CONCAT: return cg_is_view(e->kids[0]) && cg_is_view(e->kids[1]);
    default: return false;
    }
}

static void must_be_counted(const st_size *exist, void *data) {
    cg *g = ((void **)data)[0];
    const st_node *e = ((void **)data)[1];
    const cg_exist *x = cg_exist_of(g, exist);
    if (x && !x->counted)
        cg_fail(g, e, "%s's count is computed by the host between kernels: take and drop stand at the top of a "
                      "def or of a loop's body there, not inside a function", st_prim_get(e->u.prim)->name);
}

cg_value cg_cut_value(cg *g, const st_node *e, const cg_binding *env) {
    const st_type *t = e->type;
    if (e->u.prim == ST_PRIM_CONCAT) {
        cg_value a = cg_thread_value(g, e->kids[0], env), b = cg_thread_value(g, e->kids[1], env);
        return cg_concat(g, t, &a, &b);
    }
    st_size_each_exist(t->size, must_be_counted, (void *[]){g, (void *)e});
    cg_value xs = cg_thread_value(g, e->kids[1], env);
    if (e->u.prim == ST_PRIM_TAKE) return cg_take(g, t, &xs);
    st_err err = {0};
    const st_size *k = st_size_sub(g->cx, e->kids[1]->type->size, t->size, &err); /* n - (n - ?k) */
    if (!k) return cg_fail(g, e, "%s", err.message), xs;
    return cg_drop(g, t, cg_size(g, k), &xs);
}
