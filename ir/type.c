/* ir/type.c — hash-consed types. */
#include "ctx.h"

#include <string.h>

static uint32_t hash_type(const st_type *t) {
    uint32_t h = st_hash_mix(0x7e9u, t->kind);
    h = st_hash_mix(h, t->scalar);
    h = st_hash_ptr(h, t->size);
    h = st_hash_ptr(h, t->elem);
    for (uint32_t i = 0; i < t->n; i++) h = st_hash_ptr(h, t->items[i]);
    return h;
}

static bool eq_type(const void *item, const void *key) {
    const st_type *x = item, *y = key;
    if (x->kind != y->kind || x->scalar != y->scalar || x->size != y->size ||
        x->elem != y->elem || x->n != y->n)
        return false;
    for (uint32_t i = 0; i < x->n; i++)
        if (x->items[i] != y->items[i]) return false;
    return true;
}

static void *copy_type(st_ctx *cx, const void *p, uint32_t h) {
    const st_type *probe = p;
    st_type *t = st_ctx_copy(cx, probe, sizeof *t);
    if (!t) return NULL;
    t->hash = h;
    if (t->n && !(t->items = st_ctx_copy(cx, probe->items, t->n * sizeof *t->items))) return NULL;
    return t;
}

static const st_type *intern(st_ctx *cx, const st_type *probe) {
    return st_ctx_intern(cx, &cx->types, hash_type(probe), eq_type, probe, copy_type);
}

const st_type *st_type_scalar(st_ctx *cx, st_scalar_kind k) {
    return intern(cx, &(st_type){.kind = ST_TYPE_SCALAR, .scalar = k});
}

const st_type *st_type_tuple(st_ctx *cx, uint32_t n, const st_type *const *items) {
    for (uint32_t i = 0; i < n; i++)
        if (!items[i]) return NULL;
    return intern(cx, &(st_type){.kind = ST_TYPE_TUPLE, .n = n, .items = items});
}

const st_type *st_type_array(st_ctx *cx, const st_size *size, const st_type *elem) {
    if (!size || !elem) return NULL;
    return intern(cx, &(st_type){.kind = ST_TYPE_ARRAY, .size = size, .elem = elem});
}

const st_type *st_type_fun(st_ctx *cx, uint32_t nparams, const st_type *const *params,
                           const st_type *result) {
    if (!result) return NULL;
    for (uint32_t i = 0; i < nparams; i++)
        if (!params[i]) return NULL;
    return intern(cx, &(st_type){.kind = ST_TYPE_FUN, .n = nparams, .items = params, .elem = result});
}

bool st_type_is_scalar(const st_type *t, st_scalar_kind k) {
    return t->kind == ST_TYPE_SCALAR && t->scalar == k;
}

bool st_type_is_int(const st_type *t) {
    return t->kind == ST_TYPE_SCALAR && st_scalar_is_int(t->scalar);
}

bool st_type_holds_arrays(const st_type *t) {
    if (t->kind == ST_TYPE_ARRAY) return true;
    if (t->kind != ST_TYPE_TUPLE || t->n == 0) return false;
    for (uint32_t i = 0; i < t->n; i++)
        if (!st_type_holds_arrays(t->items[i])) return false;
    return true;
}

bool st_type_holds_float(const st_type *t) {
    switch (t->kind) {
    case ST_TYPE_SCALAR: return st_scalar_is_float(t->scalar);
    case ST_TYPE_ARRAY: return st_type_holds_float(t->elem);
    case ST_TYPE_TUPLE:
        for (uint32_t i = 0; i < t->n; i++)
            if (st_type_holds_float(t->items[i])) return true;
        return false;
    default: return false;
    }
}

bool st_type_is_plain(const st_type *t) {
    if (t->kind == ST_TYPE_SCALAR) return true;
    if (t->kind != ST_TYPE_TUPLE) return false;
    for (uint32_t i = 0; i < t->n; i++)
        if (!st_type_is_plain(t->items[i])) return false;
    return true;
}

void st_type_print(const st_type *t, st_buf *out) {
    switch (t->kind) {
    case ST_TYPE_SCALAR: st_buf_puts(out, st_scalar_name(t->scalar)); return;
    case ST_TYPE_ARRAY:
        st_buf_puts(out, "[");
        st_size_print(t->size, out);
        st_buf_puts(out, "]");
        st_type_print(t->elem, out);
        return;
    case ST_TYPE_TUPLE:
    case ST_TYPE_FUN:
        st_buf_puts(out, "(");
        for (uint32_t i = 0; i < t->n; i++) {
            if (i) st_buf_puts(out, ", ");
            st_type_print(t->items[i], out);
        }
        st_buf_puts(out, t->kind == ST_TYPE_TUPLE && t->n == 1 ? ",)" : ")");
        if (t->kind == ST_TYPE_FUN) {
            st_buf_puts(out, " -> ");
            st_type_print(t->elem, out);
        }
        return;
    }
}
