/* ir/util.c — errors as values, growable strings, and name suggestions. */
#include "prim.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool st_grow(void *items_ptr, size_t elem, size_t n, size_t *cap, size_t first) {
    if (n < *cap) return true;
    size_t more = *cap ? 2 * *cap : first;
    void *items;
    memcpy(&items, items_ptr, sizeof items); /* the caller's pointer is of its element type */
    if (more > SIZE_MAX / elem || !(items = realloc(items, more * elem))) return false;
    memcpy(items_ptr, &items, sizeof items);
    *cap = more;
    return true;
}

void st_err_at(st_err *err, st_loc loc) {
    err->loc = loc;
    snprintf(err->file, sizeof err->file, "%s", loc.file ? loc.file : "");
}

const char *st_err_file(const st_err *err) { return err->file[0] ? err->file : NULL; }

bool st_err_in(const st_err *err, const char *file) { return file && err->file[0] && !strcmp(err->file, file); }

static void vfill(st_err *err, st_err_kind kind, st_loc loc, const char *fmt, va_list ap) {
    if (!err) return;
    err->kind = kind;
    st_err_at(err, loc);
    err->arg = -1;
    err->mismatch = false;
    vsnprintf(err->message, sizeof err->message, fmt, ap);
}

bool st_fail(st_err *err, st_loc loc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfill(err, ST_ERR_USER, loc, fmt, ap);
    va_end(ap);
    return false;
}

bool st_vfail(st_err *err, st_loc loc, const char *fmt, va_list ap) {
    vfill(err, ST_ERR_USER, loc, fmt, ap);
    return false;
}

bool st_fail_internal(st_err *err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfill(err, ST_ERR_INTERNAL, (st_loc){0}, fmt, ap);
    va_end(ap);
    return false;
}

static bool reserve(st_buf *b, size_t extra) {
    if (b->failed) return false;
    if (b->len + extra + 1 <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) {
        if (cap > SIZE_MAX / 2) { b->failed = true; return false; }
        cap *= 2;
    }
    char *d = realloc(b->data, cap);
    if (!d) { b->failed = true; return false; }
    b->data = d;
    b->cap = cap;
    return true;
}

void st_buf_put(st_buf *b, const char *s, size_t n) {
    if (!reserve(b, n)) return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

void st_buf_puts(st_buf *b, const char *s) { st_buf_put(b, s, strlen(s)); }

void st_buf_printf(st_buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !reserve(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void st_buf_free(st_buf *b) {
    free(b->data);
    *b = (st_buf){0};
}

void st_err_format(const st_err *err, const char *source, size_t source_len, st_buf *out) {
    const st_loc *l = &err->loc;
    const char *file = st_err_file(err);
    if (file && l->line > 0)
        st_buf_printf(out, "%s:%d:%d: error: %s\n", file, l->line, l->col, err->message);
    else if (file)
        st_buf_printf(out, "%s: error: %s\n", file, err->message);
    else
        st_buf_printf(out, "error: %s\n", err->message);
    if (!source || l->line <= 0) return;
    /* find the line (it may be the empty one after a final newline); show it
     * with tabs kept so that the caret lines up */
    size_t i = 0;
    int line = 1;
    for (; line < l->line && i < source_len; i++)
        if (source[i] == '\n') line++;
    if (line != l->line) return;
    size_t end = i;
    while (end < source_len && source[end] != '\n' && source[end] != '\r') end++;
    /* a long line is shown as a window around the column, so the caret stays in view */
    enum { WINDOW = 100 };
    size_t col = (size_t)(l->col > 0 ? l->col - 1 : 0), from = i, to = end;
    if (end - i > WINDOW) {
        from = i + (col > WINDOW / 2 ? col - WINDOW / 2 : 0);
        to = from + WINDOW < end ? from + WINDOW : end;
    }
    st_buf_puts(out, from > i ? "  …" : "  ");
    for (size_t k = from; k < to; k++) {
        unsigned char c = (unsigned char)source[k];
        char ch = (c == '\t' || (c >= 32 && c < 127) || c >= 128) ? (char)c : '?';
        st_buf_put(out, &ch, 1);
    }
    st_buf_puts(out, to < end ? "…\n  " : "\n  ");
    if (from > i) st_buf_puts(out, "…");
    for (size_t k = from; k < i + col && k < to; k++) st_buf_put(out, source[k] == '\t' ? "\t" : " ", 1);
    st_buf_puts(out, "^\n");
}

static size_t edit_distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64) return SIZE_MAX;
    size_t row[65];
    for (size_t j = 0; j <= lb; j++) row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            size_t best = diag + cost;
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

int st_closest_names(const char *name, const char *const *candidates, int ncandidates,
                     const char **out, int max) {
    /* plausible: at most a third of the longer name differs (at least 1) */
    size_t len = strlen(name);
    int count = 0;
    for (size_t d = 0; d <= len / 3 + 1 && count < max; d++) {
        for (int i = 0; i < ncandidates && count < max; i++) {
            size_t limit = (strlen(candidates[i]) > len ? strlen(candidates[i]) : len) / 3 + 1;
            size_t e = edit_distance(name, candidates[i]);
            if (e != d || e > limit) continue;
            bool dup = false;
            for (int k = 0; k < count; k++) dup |= strcmp(out[k], candidates[i]) == 0;
            if (!dup) out[count++] = candidates[i];
        }
    }
    return count;
}

/* a scalar, or a tuple of them: what one element of an index map may be */
static bool plain_type(const st_type *t) {
    if (t->kind == ST_TYPE_SCALAR) return true;
    if (t->kind != ST_TYPE_TUPLE) return false;
    for (uint32_t i = 0; i < t->n; i++)
        if (!plain_type(t->items[i])) return false;
    return true;
}

static bool view(const st_node *e, bool placed_is_memory, bool scalar_lets);

/* iota(n) |> map(i => body), body a scalar (or tuple of scalars) computed
 * from views: element i is body at i, computed where it is read, as a split
 * or a zip is. Its scalar lets name parts of the body once. */
static bool index_map(const st_node *e, bool placed_is_memory) {
    if (e->nkids != 2) return false;
    const st_node *f = e->kids[0], *xs = e->kids[1];
    if (xs->kind != ST_NODE_PRIM || xs->u.prim != ST_PRIM_IOTA || !view(xs, placed_is_memory, false)) return false;
    if (f->kind != ST_NODE_LAMBDA || st_lambda_nparams(f) != 1) return false;
    const st_node *body = st_lambda_body(f);
    /* what the body places in memory, it computes: no element's cost */
    return plain_type(body->type) && view(body, false, true);
}

static bool view(const st_node *e, bool placed_is_memory, bool scalar_lets) {
    switch (e->kind) {
    case ST_NODE_VAR: case ST_NODE_LIT: return true;
    case ST_NODE_TUPLE: case ST_NODE_PROJ: case ST_NODE_UNOP: case ST_NODE_BINOP: case ST_NODE_CONV: break;
    case ST_NODE_IF:
        /* choosing between arrays is a copy; an element may be a tuple */
        if (e->type->kind != ST_TYPE_SCALAR && !(scalar_lets && plain_type(e->type))) return false;
        break;
    case ST_NODE_LET:
        if (!scalar_lets || !plain_type(st_let_value(e)->type)) return false;
        break;
    case ST_NODE_PRIM:
        switch (st_prim_desc_of(e->u.prim)->view) {
        case ST_VIEW_PLACED: return placed_is_memory;
        case ST_VIEW_ALWAYS: break;
        case ST_VIEW_INDEX_MAP: return index_map(e, placed_is_memory);
        default: return false;
        }
        break;
    default: return false; /* lambda, operator */
    }
    for (uint32_t i = 0; i < e->nkids; i++)
        if (!view(e->kids[i], placed_is_memory, scalar_lets)) return false;
    return true;
}

bool st_is_view(const st_node *e, bool placed_is_memory) { return view(e, placed_is_memory, false); }

bool st_is_view_scalar(const st_node *e) { return plain_type(e->type) && view(e, false, true); }
