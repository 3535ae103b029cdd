/* ir/arena.c — a bump allocator with marks.
 *
 * Blocks form a list from the newest back to the oldest. An allocation too
 * big for a standard block gets a block of its own, so one large array never
 * wastes a chunk. Releasing to a mark frees the blocks made after it. */
#include "ir.h"

#include <stdlib.h>
#include <string.h>

enum { BLOCK_SIZE = 64 * 1024, ALIGN = 16 };

typedef struct block {
    struct block *prev;
    size_t cap, used;
    _Alignas(16) unsigned char data[];
} block;

struct st_arena {
    block *top;
};

st_arena *st_arena_new(void) { return calloc(1, sizeof(st_arena)); }

void st_arena_free(st_arena *a) {
    if (!a) return;
    for (block *b = a->top, *prev; b; b = prev) {
        prev = b->prev;
        free(b);
    }
    free(a);
}

static block *new_block(st_arena *a, size_t cap) {
    if (cap > SIZE_MAX - sizeof(block)) return NULL;
    block *b = malloc(sizeof(block) + cap);
    if (!b) return NULL;
    b->cap = cap;
    b->used = 0;
    b->prev = a->top;
    a->top = b;
    return b;
}

void *st_arena_alloc(st_arena *a, size_t size) {
    if (size > SIZE_MAX - ALIGN) return NULL;
    size = (size + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    if (size == 0) size = ALIGN;
    block *b = a->top;
    if (!b || b->cap - b->used < size) {
        b = new_block(a, size > BLOCK_SIZE / 4 ? size : BLOCK_SIZE);
        if (!b) return NULL;
    }
    void *p = b->data + b->used;
    b->used += size;
    return p;
}

void *st_arena_zalloc(st_arena *a, size_t size) {
    void *p = st_arena_alloc(a, size);
    if (p) memset(p, 0, size);
    return p;
}

st_arena_mark st_arena_get_mark(const st_arena *a) {
    return (st_arena_mark){a->top, a->top ? a->top->used : 0};
}

void st_arena_release(st_arena *a, st_arena_mark mark) {
    while (a->top && a->top != (block *)mark.block) {
        block *prev = a->top->prev;
        free(a->top);
        a->top = prev;
    }
    if (a->top) a->top->used = mark.used;
}
