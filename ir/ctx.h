/* ir/ctx.h — internal to ir/: the context's tables and the hashing helpers
 * that size.c, type.c and node.c share to hash-cons their values. */
#ifndef STRATA_IR_CTX_H
#define STRATA_IR_CTX_H

#include "ir.h"

/* An open-addressing set of pointers with their hashes. */
typedef struct st_table {
    uint32_t *hashes;
    const void **items;
    size_t cap, count;
} st_table;

typedef bool (*st_table_eq)(const void *item, const void *key);

const void *st_table_find(const st_table *t, uint32_t hash, st_table_eq eq, const void *key);
bool st_table_insert(st_table *t, uint32_t hash, const void *item);

struct st_ctx;
/* Hash-consing: the item of t equal to probe, or else the copy `make`
 * builds of it in the context (deep, its hash field set; NULL when out of
 * memory), inserted. NULL when out of memory. */
typedef void *(*st_table_make)(struct st_ctx *cx, const void *probe, uint32_t hash);
const void *st_ctx_intern(struct st_ctx *cx, st_table *t, uint32_t hash, st_table_eq eq, const void *probe,
                          st_table_make make);

struct st_ctx {
    st_arena *arena;
    st_table strings, sizes, types, nodes;
    /* the places of nodes (st_node_loc), beside the nodes rather than in
     * them, a place being no part of a node's identity: node -> const st_loc *
     * in the arena, one shared by the nodes one st_node_place placed */
    st_ptrmap places;
    uint64_t fresh; /* counter behind st_fresh_name */
};

static inline uint32_t st_hash_mix(uint32_t h, uint64_t v) {
    /* a 64-bit finaliser folded into the running hash */
    v ^= v >> 33;
    v *= 0xff51afd7ed558ccdULL;
    v ^= v >> 33;
    h ^= (uint32_t)v + 0x9e3779b9u + (h << 6) + (h >> 2);
    return h;
}

static inline uint32_t st_hash_ptr(uint32_t h, const void *p) {
    return st_hash_mix(h, (uint64_t)(uintptr_t)p);
}

#endif
