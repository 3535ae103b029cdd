/* codegen/hist_plan.c — what subhistograms(C, MEM, ATOMIC) does on a
 * device, chosen when the program runs (H is often known only then).
 *
 * One text serves twice: the library compiles it (st_hist_plan_choose, so
 * tests ask what a CPU or a GPU gets without one), and the generated glue
 * carries it as C (st_hist_plan_source), so an exported host.c computes the
 * same without strata. The seed is histogram-subhistogramming.txt; left
 * out (C = 0), the choices are:
 *
 *   B      256 work-items a group; on a CPU, whose work-items of a group run
 *          in turn in one thread, 1: each work-item owns its subhistograms
 *          and updates them without atomics.
 *   local  where MEM allows and a subhistogram fits in local memory: ⌈B/C⌉
 *          subhistograms a group, C = min(H, B) ([Hellfritsch 2018], §4.3.2). On a
 *          CPU the one work-item keeps up to 4, used by turns by consecutive
 *          elements, while they fit in 16 KiB (half of a level-1 cache):
 *          consecutive hits on one bucket otherwise wait on each other
 *          (a store, then a load of the same counter), the CPU's form of
 *          [Hellfritsch 2018]'s collision, and the copies break that chain.
 *   global C = H ([Hellfritsch 2018]'s heuristic: work-efficient, T/H·H + N work, and
 *          collision-free for uniform indices), except on a GPU that says
 *          its cache, where [Hellfritsch 2018]'s own model allows more
 *          subhistograms: work T/C·H + N stays O(N) while S·H ≤ N, and
 *          [Hellfritsch 2018]'s data (appendix A, + in global memory, 16384 and 61440
 *          buckets) shows that what must also hold is that the
 *          subhistograms stay in the cache that serves the atomics (on its
 *          GTX 780 Ti, about 30 720 work-items and a 1.5 MB L2: C = 4096 of
 *          61440 buckets, about 1.8 MB of subhistograms, is several times
 *          slower than C = H, while C = 4096 of 16384 buckets and C = 16384
 *          of 61440, about 0.5 MB, are near the best). So
 *          S = min(N/H, cache/4 / (H·bytes)) when that is more than T/H:
 *          fewer work-items per counter where few buckets are hit (every
 *          index equal: C = H put 54 000 work-items of an H200 on one
 *          counter), no more work, the same cache. The cache is what the
 *          driver calls its global memory cache; strata's CUDA backend
 *          answers with the L2 (cuda_device.c).
 *
 * At most 256 MiB of global subhistograms: more work-items to each when
 * they would take more.
 *
 * H is the program's (a parameter, as large as a caller says): H·bytes is
 * taken at most as the largest long, and every quotient rounded up is
 * a / b + (a % b != 0), so that nothing here overflows whatever H and N
 * are, and the counts it gives (S·H, hpb·H: at most the bytes above, or H)
 * are what the glue multiplies, checked (cg_sizes.c). */
#include "codegen.h"

typedef st_hist_plan strata_hist_plan;

#define FIELD_TEXT(name) " long " #name ";"
/* the code, and the code as text after the glue's own struct (comments are
 * gone by the time it is a string: say things outside) */
#define BOTH(...)                                                                                              \
    __VA_ARGS__                                                                                                \
    static const char source[] = "typedef struct strata_hist_plan {" ST_HIST_PLAN_FIELDS(FIELD_TEXT)          \
        " } strata_hist_plan;\n" #__VA_ARGS__ "\n";

BOTH(static inline long strata_hist_ceil(long a, long b) { return a / b + (a % b != 0); }
     static inline void strata_hist_choose(strata_hist_plan *p) {
    long room, by_work, by_cache, want, hb;
    /* the bytes of one histogram, H·bytes, or the most a long holds where that is more */
    hb = p->H > (long)(~0UL >> 1) / p->bytes ? (long)(~0UL >> 1) : p->H * p->bytes;
    p->B = p->cpu && !p->C ? 1 : 256;
    p->Cl = p->C ? p->C : p->H < p->B ? p->H : p->B;
    if (p->Cl < 1) p->Cl = 1;
    if (p->Cl > p->B) p->Cl = p->B;
    p->hpb = strata_hist_ceil(p->B, p->Cl);
    if (p->cpu && !p->C)
        for (p->hpb = 1; p->hpb < 4 && hb <= 16384 / (2 * p->hpb);) p->hpb *= 2;
    room = p->H > 0 ? p->local_bytes / hb : 0;
    if (p->hpb > room) p->hpb = room;
    p->local = p->may_local && p->hpb >= 1;
    if (p->local) p->Cl = strata_hist_ceil(p->B, p->hpb);
    p->G = strata_hist_ceil(p->N, p->B);
    if (p->G > 4 * p->units) p->G = 4 * p->units;
    p->T = p->N > 2048 * p->units ? 2048 * p->units : strata_hist_ceil(p->N, 256) * 256;
    if (p->T > 2048 * p->units) p->T = 2048 * p->units;
    p->Cg = p->C ? p->C : p->H;
    if (p->Cg < 1) p->Cg = 1;
    if (!p->C && !p->cpu && p->H > 0 && p->cache_bytes > 0) {
        by_work = p->N / p->H;
        by_cache = p->cache_bytes / 4 / hb;
        want = by_work < by_cache ? by_work : by_cache;
        if (want > strata_hist_ceil(p->T, p->Cg)) p->Cg = strata_hist_ceil(p->T, want);
    }
    p->S = strata_hist_ceil(p->T, p->Cg);
    if (p->S < 1) p->S = 1;
    want = p->H > 0 ? (256L << 20) / hb : 1;
    if (want < 1) want = 1;
    if (p->S > want) {
        p->S = want;
        p->Cg = strata_hist_ceil(p->T, p->S);
    }
    p->nsub = p->N == 0 || p->H == 0 ? 0 : p->local ? p->G : p->S - 1;
})

void st_hist_plan_choose(st_hist_plan *p) { strata_hist_choose(p); }

const char *st_hist_plan_source(void) { return source; }
