/* codegen/cg_winners.c — a scatter's last write in index order, on the device.
 *
 * The interpreter runs a scatter's elements in order, so of two that write
 * one place the later one's value stays. A kernel's writes land in any
 * order, so a scatter whose indices may repeat (a user's scatter) runs its
 * elements twice: first each element in bounds claims its place, an
 * atomic max of its index into the place's winner (-1 before any claim),
 * then each writes where it is the winner. The elements' indices and
 * values are computed again in the second pass (a fused scan runs again),
 * which costs less than keeping them in memory between the passes.
 *
 * A scatterDistinct, whose rule knows no two elements write one place
 * (filter-scatter's, partition-scatter's), writes in one pass, as does a
 * scatter that one work-item runs in order (cg_thread.c). Codegen does not
 * guess distinctness from the shape of the indices: the IR says it.
 *
 * The winners are element indices: 32-bit words where the scatter has at
 * most 2^31 elements, 64-bit ones past that (cl_khr_int64_extended_atomics;
 * CUDA's atomicMax on long long). A count known only when the program runs
 * (N) allocates 64-bit words and each kernel tests the count, using the
 * first half of the buffer as 32-bit words where it allows: what is
 * touched is what the count needs. A claim reads its place first and
 * leaves the atomic out where a later element holds it already: many
 * elements writing few places mostly read. */
#include "atomics.h"
#include "cg.h"

#include <stdint.h>

struct cg_winners {
    const cg_place *place;      /* [n] of the destination's places, fresh (offset 0) */
    int width;                  /* bytes of a winner, 4 or 8; 0: chosen by `sources` when the kernels run */
    const st_size *sources;     /* the scatter's elements */
};

/* the largest count of elements whose indices fit 32 bits */
static const int64_t narrow_most = ST_CLAIM_NARROW_MOST;

static const char *base_of(cg *g, const cg_winners *w, bool write) {
    cg_use_buffer(g, w->place->mem.buffer, write);
    return w->place->mem.base;
}

/* In a kernel, when width is 0: is the count small enough for 32 bits? */
static const char *narrow_now(cg *g, const cg_winners *w) {
    return cg_str(g, "((long)(%s) <= %lldL)", cg_size(g, w->sources), (long long)narrow_most);
}

/* The winners as words of `width` bytes, to write or only to read: the
 * 32-bit ones of a buffer of 64-bit words (width 0) are its first half. */
static const char *words(cg *g, const cg_winners *w, int width, bool write) {
    const char *base = base_of(g, w, write);
    if (width != 4 || w->width == 4) return base;
    return cg_str(g, "((__global %sint *)%s)", write ? "" : "const ", base);
}

/* The statement for each width the kernels may use, under the test of the
 * count when it decides at run time. */
static void per_width(cg *g, const cg_winners *w, const char *narrow, const char *wide) {
    if (w->width) return cg_line(g, "%s", w->width == 4 ? narrow : wide);
    cg_open(g, cg_str(g, "if (%s) {", narrow_now(g, w)));
    cg_line(g, "%s", narrow);
    g->indent--;
    cg_line(g, "} else {");
    g->indent++;
    cg_line(g, "%s", wide);
    cg_close(g);
}

const cg_winners *cg_winners_new(cg *g, const st_node *e, const st_size *sources) {
    if (g->failed || !st_is_prim(e, ST_PRIM_SCATTER)) return NULL;
    int64_t count;
    const st_size *most = cg_upper(g, sources);
    bool known = most && st_size_is_const(most, &count);
    if (g->failed || (known && count <= 1)) return NULL;
    cg_winners *w = cg_alloc(g, sizeof *w);
    if (!w) return NULL;
    w->sources = sources;
    w->width = !known ? 0 : count <= narrow_most ? 4 : 8;
    st_scalar_kind k = w->width == 4 ? ST_I32 : ST_I64;
    if (w->width != 4) g->uses_atomics64 = true;
    const st_size *places = e->type->size;
    w->place = cg_host_temp(g, st_type_array(g->cx, places, st_type_scalar(g->cx, k)), "winners");
    if (!w->place) return NULL;
    cg_kernel_begin(g, CG_SHAPE_GLB, places, "winners_reset", e);
    g->k->what = "a scatter's winners, none yet (-1)";
    g->level = CG_THREAD;
    const char *n = cg_size(g, places);
    cg_open(g, cg_str(g, "for (long i = get_global_id(0); i < %s; i += get_global_size(0)) {", n));
    per_width(g, w, cg_str(g, "%s[i] = -1;", words(g, w, 4, true)), cg_str(g, "%s[i] = -1L;", words(g, w, 8, true)));
    cg_close(g);
    cg_kernel_end(g);
    return w;
}

void cg_winners_claim(cg *g, const cg_winners *w, const char *at, const char *j) {
    /* a place's winner only grows: a stale read below j costs an atomic
     * more, one at or above it is still so */
    const char *p = cg_name(g, "win");
    per_width(g, w,
              cg_str(g, "{ volatile __global int *%s = %s + %s; if (*%s < (int)(%s)) atomic_max(%s, (int)(%s)); }", p,
                     words(g, w, 4, true), at, p, j, p, j),
              cg_str(g, "{ volatile __global long *%s = %s + %s; if (*%s < (long)(%s)) atom_max(%s, (long)(%s)); }", p,
                     words(g, w, 8, true), at, p, j, p, j));
}

const char *cg_winners_won(cg *g, const cg_winners *w, const char *at, const char *j) {
    const char *narrow = cg_str(g, "(long)%s[%s]", words(g, w, 4, false), at);
    const char *wide = cg_str(g, "%s[%s]", words(g, w, 8, false), at);
    const char *now = w->width == 4   ? narrow
                      : w->width == 8 ? wide
                                      : cg_str(g, "(%s ? %s : %s)", narrow_now(g, w), narrow, wide);
    return cg_str(g, "%s == (long)(%s)", now, j);
}
