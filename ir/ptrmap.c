/* ir/ptrmap.c — a pointer-keyed map with open addressing, the memo of the
 * walks in rewrite/ (substitution, use counts, index fusion). */
#include "ir.h"

#include <stdlib.h>

/* Pointers are aligned, so their low bits say little: drop them, then
 * spread the rest with a Fibonacci multiply. */
static size_t slot_of(const void *const *keys, size_t cap, const void *key) {
    size_t i = (size_t)(((uintptr_t)key >> 4) * 0x9e3779b97f4a7c15ULL) & (cap - 1);
    while (keys[i] && keys[i] != key) i = (i + 1) & (cap - 1);
    return i;
}

bool st_ptrmap_get(const st_ptrmap *m, const void *key, uintptr_t *val) {
    if (!m->cap) return false;
    size_t i = slot_of(m->keys, m->cap, key);
    if (!m->keys[i]) return false;
    *val = m->vals[i];
    return true;
}

/* Twice the capacity, every entry moved to its new slot. */
static bool grow(st_ptrmap *m) {
    size_t cap = m->cap ? 2 * m->cap : 64;
    const void **keys = calloc(cap, sizeof *keys);
    uintptr_t *vals = calloc(cap, sizeof *vals);
    if (!keys || !vals) return free(keys), free(vals), false;
    for (size_t j = 0; j < m->cap; j++) {
        if (!m->keys[j]) continue;
        size_t s = slot_of(keys, cap, m->keys[j]);
        keys[s] = m->keys[j], vals[s] = m->vals[j];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys, m->vals = vals, m->cap = cap;
    return true;
}

bool st_ptrmap_put(st_ptrmap *m, const void *key, uintptr_t val) {
    if (2 * (m->count + 1) > m->cap && !grow(m)) return false;
    size_t i = slot_of(m->keys, m->cap, key);
    if (!m->keys[i]) m->count++;
    m->keys[i] = key;
    m->vals[i] = val;
    return true;
}

void st_ptrmap_free(st_ptrmap *m) {
    free(m->keys);
    free(m->vals);
    m->keys = NULL, m->vals = NULL, m->cap = 0, m->count = 0;
}
