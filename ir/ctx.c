/* ir/ctx.c — the context: its arena, interned strings and hash-cons tables. */
#include "ctx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const void *st_table_find(const st_table *t, uint32_t hash, st_table_eq eq, const void *key) {
    if (!t->cap) return NULL;
    for (size_t i = hash & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        if (!t->items[i]) return NULL;
        if (t->hashes[i] == hash && eq(t->items[i], key)) return t->items[i];
    }
}

static void put(st_table *t, uint32_t hash, const void *item) {
    size_t i = hash & (t->cap - 1);
    while (t->items[i]) i = (i + 1) & (t->cap - 1);
    t->items[i] = item;
    t->hashes[i] = hash;
    t->count++;
}

bool st_table_insert(st_table *t, uint32_t hash, const void *item) {
    if ((t->count + 1) * 2 > t->cap) {
        st_table bigger = {0};
        bigger.cap = t->cap ? t->cap * 2 : 256;
        bigger.items = calloc(bigger.cap, sizeof *bigger.items);
        bigger.hashes = calloc(bigger.cap, sizeof *bigger.hashes);
        if (!bigger.items || !bigger.hashes) {
            free(bigger.items);
            free(bigger.hashes);
            return false;
        }
        for (size_t i = 0; i < t->cap; i++)
            if (t->items[i]) put(&bigger, t->hashes[i], t->items[i]);
        free(t->items);
        free(t->hashes);
        *t = bigger;
    }
    put(t, hash, item);
    return true;
}

static void table_free(st_table *t) {
    free(t->items);
    free(t->hashes);
}

st_ctx *st_ctx_new(void) {
    st_ctx *cx = calloc(1, sizeof *cx);
    if (!cx) return NULL;
    cx->arena = st_arena_new();
    if (!cx->arena) {
        free(cx);
        return NULL;
    }
    return cx;
}

void st_ctx_free(st_ctx *cx) {
    if (!cx) return;
    table_free(&cx->strings);
    table_free(&cx->sizes);
    table_free(&cx->types);
    table_free(&cx->nodes);
    st_ptrmap_free(&cx->places);
    st_arena_free(cx->arena);
    free(cx);
}

void *st_ctx_alloc(st_ctx *cx, size_t size) { return st_arena_alloc(cx->arena, size); }

const void *st_ctx_intern(st_ctx *cx, st_table *t, uint32_t hash, st_table_eq eq, const void *probe,
                          st_table_make make) {
    const void *found = st_table_find(t, hash, eq, probe);
    if (found) return found;
    void *made = make(cx, probe, hash);
    return made && st_table_insert(t, hash, made) ? made : NULL;
}

void *st_ctx_copy(st_ctx *cx, const void *p, size_t size) {
    void *copy = size ? st_ctx_alloc(cx, size) : NULL;
    if (copy) memcpy(copy, p, size);
    return copy;
}

typedef struct { const char *s; size_t len; } str_key;

static bool str_eq(const void *item, const void *key) {
    const str_key *k = key;
    const char *s = item;
    return strncmp(s, k->s, k->len) == 0 && s[k->len] == 0;
}

static uint32_t str_hash(const char *s, size_t len) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static const char *lookup(st_ctx *cx, const char *s, size_t len) {
    str_key k = {s, len};
    return st_table_find(&cx->strings, str_hash(s, len), str_eq, &k);
}

const char *st_intern(st_ctx *cx, const char *s, size_t len) {
    const char *found = lookup(cx, s, len);
    if (found) return found;
    char *copy = st_ctx_alloc(cx, len + 1);
    if (!copy) return NULL;
    memcpy(copy, s, len);
    copy[len] = 0;
    if (!st_table_insert(&cx->strings, str_hash(s, len), copy)) return NULL;
    return copy;
}

const char *st_intern_cstr(st_ctx *cx, const char *s) { return st_intern(cx, s, strlen(s)); }

const char *st_fresh_name(st_ctx *cx, const char *base) {
    char name[96];
    /* the base itself, while nothing in this context has used it */
    size_t len = strlen(base);
    if (len < 64 && !lookup(cx, base, len)) return st_intern(cx, base, len);
    for (;;) {
        int n = snprintf(name, sizeof name, "%.64s_%llu", base, (unsigned long long)++cx->fresh);
        if (!lookup(cx, name, (size_t)n)) return st_intern(cx, name, (size_t)n);
    }
}

/* ---- the places of nodes ---- */

static const st_loc *place_of(const st_ctx *cx, const st_node *n) {
    uintptr_t v;
    return cx && n && st_ptrmap_get(&cx->places, n, &v) ? (const st_loc *)v : NULL;
}

st_loc st_node_loc(const st_ctx *cx, const st_node *n) {
    const st_loc *at = place_of(cx, n);
    return at ? *at : (st_loc){0};
}

st_loc st_node_loc_or(const st_ctx *cx, const st_node *n, st_loc fallback) {
    const st_loc *at = place_of(cx, n);
    return at ? *at : fallback;
}

/* n and the nodes below it without a place placed at *at; a node with one
 * keeps it, and so do the nodes below it (written by the user, or placed by
 * an earlier rewrite). Out of memory leaves nodes without: a place only
 * makes messages better. */
static void place(st_ctx *cx, const st_node *n, const st_loc *at) {
    if (place_of(cx, n) || !st_ptrmap_put(&cx->places, n, (uintptr_t)at)) return;
    for (uint32_t i = 0; i < n->nkids; i++) place(cx, n->kids[i], at);
}

const st_node *st_node_place(st_ctx *cx, const st_node *n, st_loc loc) {
    if (!cx || !n || loc.line <= 0 || place_of(cx, n)) return n;
    st_loc *at = st_ctx_alloc(cx, sizeof *at);
    if (at) *at = loc, place(cx, n, at);
    return n;
}

const st_node *st_node_placed_like(st_ctx *cx, const st_node *n, const st_node *old) {
    const st_loc *at = place_of(cx, old);
    if (at && n) place(cx, n, at);
    return n;
}
