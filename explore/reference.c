/* explore/reference.c — the interpreter's result, which every variant is
 * checked against, computed in a child process under the variants' time
 * limit: a reference that is slow at the size given (the interpreter is
 * far slower than a kernel) is then a located error, not a wait without
 * output. The value comes back through the pipe in a form of this very
 * program: the child is a fork of the parent. */
#include "variant.h"

#include <string.h>

/* ---- the value as bytes: kind, scalar kind, n, then its content ---- */

static void put_value(st_buf *b, const st_value *v) {
    uint32_t head[3] = {(uint32_t)v->kind, (uint32_t)v->scalar, v->n};
    st_buf_put(b, (const char *)head, sizeof head);
    if (v->kind == ST_VALUE_SCALAR) {
        st_buf_put(b, (const char *)&v->u.s, sizeof v->u.s);
    } else if (v->kind == ST_VALUE_ARRAY) {
        size_t count = 1;
        for (uint32_t d = 0; d < v->n; d++) count *= (size_t)v->u.a.dims[d];
        st_buf_put(b, (const char *)v->u.a.dims, v->n * sizeof *v->u.a.dims);
        st_buf_put(b, (const char *)v->u.a.data, count * st_scalar_size(v->scalar));
    } else {
        for (uint32_t i = 0; i < v->n; i++) put_value(b, &v->u.items[i]);
    }
}

typedef struct reader {
    const char *at, *end;
} reader;

static const void *take(reader *r, size_t n) {
    if ((size_t)(r->end - r->at) < n) return NULL;
    const void *p = r->at;
    r->at += n;
    return p;
}

/* The value put_value wrote, into arena a; false when the bytes are not one. */
static bool get_value(reader *r, st_arena *a, st_value *v, int depth) {
    const void *at = take(r, 3 * sizeof(uint32_t));
    uint32_t head[3]; /* copied: the bytes are not aligned */
    if (!at || depth > 64) return false;
    memcpy(head, at, sizeof head);
    if (head[0] > ST_VALUE_TUPLE) return false;
    memset(v, 0, sizeof *v);
    v->kind = (st_value_kind)head[0];
    v->scalar = (st_scalar_kind)head[1];
    v->n = head[2];
    if (v->kind == ST_VALUE_SCALAR) {
        const void *s = take(r, sizeof v->u.s);
        if (!s) return false;
        memcpy(&v->u.s, s, sizeof v->u.s);
        return true;
    }
    if (v->kind == ST_VALUE_ARRAY) {
        const void *dims = take(r, v->n * sizeof(int64_t));
        int64_t *d = st_arena_alloc(a, v->n * sizeof *d + 1);
        if (!dims || !d) return false;
        memcpy(d, dims, v->n * sizeof *d);
        size_t count = 1;
        for (uint32_t i = 0; i < v->n; i++) count *= (size_t)d[i];
        size_t bytes = count * st_scalar_size(v->scalar);
        const void *data = take(r, bytes);
        void *copy = st_arena_alloc(a, bytes + 1);
        if (!data || !copy) return false;
        memcpy(copy, data, bytes);
        v->u.a.dims = d;
        v->u.a.data = copy;
        return true;
    }
    st_value *items = st_arena_alloc(a, v->n * sizeof *items + 1);
    if (!items) return false;
    for (uint32_t i = 0; i < v->n; i++)
        if (!get_value(r, a, &items[i], depth + 1)) return false;
    v->u.items = items;
    return true;
}

/* ---- the child ---- */

/* It writes 'V' and the value, or 'E' and the st_err the interpreter gave. */
static void reference_child(void *data, int fd) {
    const bench *b = data;
    const st_explore_setup *s = b->setup;
    st_arena *a = st_arena_new();
    st_err err = {0};
    st_expected want;
    st_buf out = {0};
    if (!a) {
        st_fail_internal(&err, "out of memory");
    } else if (st_eval_expected(s->cx, s->def, b->args, b->env, b->nenv, a, &want, &err)) {
        st_buf_put(&out, "V", 1);
        put_value(&out, &want.value);
        put_value(&out, &want.scale);
    }
    if (!out.len || out.failed) {
        st_buf_free(&out);
        st_buf_put(&out, "E", 1);
        st_buf_put(&out, (const char *)&err, sizeof err);
    }
    child_write(fd, out.data, out.len);
    st_buf_free(&out);
    st_arena_free(a);
}

bool bench_reference(bench *b, st_arena *a, st_err *err) {
    const st_explore_setup *s = b->setup;
    child c;
    if (!child_start(&c, reference_child, b, s->timeout_s, err)) return false;
    if (!child_finish(&c, s->stop)) {
        st_buf_free(&c.out);
        return st_fail(err, (st_loc){0}, ST_EXPLORE_INTERRUPTED);
    }
    bool ok = false;
    reader r = {c.out.data, c.out.data + c.out.len};
    if (c.end == CHILD_TIMED_OUT) {
        st_fail(err, (st_loc){s->def->loc.file, s->def->loc.line, s->def->loc.col},
                "the reference interpreter did not finish `%s` within the time limit of %g s: give smaller sizes, or "
                "a longer --timeout", s->def->name, s->timeout_s);
    } else if (c.end == CHILD_EXITED && c.exit_code == 0 && c.out.len == 1 + sizeof *err && c.out.data[0] == 'E') {
        memcpy(err, c.out.data + 1, sizeof *err);
        /* a location's pointer made in the child means nothing here (its
         * copy, err->file, is what is shown) */
        if (err->loc.file != s->def->loc.file && (!s->program || err->loc.file != s->program->file)) err->loc.file = NULL;
    } else if (c.end == CHILD_EXITED && c.exit_code == 0 && take(&r, 1) && c.out.data[0] == 'V' &&
               get_value(&r, a, &b->want.value, 0) && get_value(&r, a, &b->want.scale, 0) && r.at == r.end) {
        ok = true;
    } else {
        char how[160];
        child_describe(&c, how, sizeof how);
        st_fail_internal(err, "the reference interpreter's process %s", how);
    }
    st_buf_free(&c.out);
    return ok;
}
