/* ir/arena.c — a bump allocator with marks.
 *
 * Blocks form a list from the newest back to the oldest. An allocation too
 * big for a standard block gets a block of its own, so one large array never
 * wastes a chunk. Releasing to a mark gives back the blocks made after it:
 * standard ones to a free list, which the next blocks come from. The
 * interpreter marks and releases around every element; without the list, an
 * element that crossed a block boundary malloc'ed and freed a block each time
 * (under AddressSanitizer, half of a test's time). */
#include "ir.h"

#include <stdlib.h>
#include <string.h>

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
/* a block on the free list is poisoned: reading memory released to a mark
 * is still reported, as when the block was freed */
#define POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

enum { BLOCK_SIZE = 64 * 1024, ALIGN = 16 };

typedef struct block {
    struct block *prev;
    size_t cap, used;
    _Alignas(16) unsigned char data[];
} block;

struct st_arena {
    block *top;
    block *free; /* standard blocks given back by releases, linked by prev */
};

st_arena *st_arena_new(void) { return calloc(1, sizeof(st_arena)); }

static void free_blocks(block *b) {
    for (block *prev; b; b = prev) {
        prev = b->prev;
        free(b);
    }
}

void st_arena_free(st_arena *a) {
    if (!a) return;
    free_blocks(a->top);
    for (block *b = a->free; b; b = b->prev) UNPOISON(b->data, b->cap);
    free_blocks(a->free);
    free(a);
}

static block *new_block(st_arena *a, size_t cap) {
    if (cap > SIZE_MAX - sizeof(block)) return NULL;
    block *b;
    if (cap == BLOCK_SIZE && a->free) {
        b = a->free;
        a->free = b->prev;
        UNPOISON(b->data, b->cap);
    } else if (!(b = malloc(sizeof(block) + cap))) {
        return NULL;
    }
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
        block *b = a->top;
        a->top = b->prev;
        if (b->cap == BLOCK_SIZE) {
            POISON(b->data, b->cap);
            b->prev = a->free;
            a->free = b;
        } else {
            free(b);
        }
    }
    if (a->top) a->top->used = mark.used;
}
