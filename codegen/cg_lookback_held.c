/* codegen/cg_lookback_held.c — scanLookback with LOAD = local and M <= HELD_M:
 * each work-item's elements in registers.
 *
 * A block of M·WG elements does not fit local memory at M = 32 and WG = 512
 * (64 KiB; NVIDIA's OpenCL gives a group 48), and the local path's block in
 * local memory is read and written three times more than the global one.
 * Held, a work-item keeps its M elements in registers (lb_h, and lb_hv for
 * the accumulators when they are not the elements), and the block passes
 * through a local tile in rounds: in round r the group loads elements
 * [r·R·M, (r+1)·R·M) of its block coalesced into the tile, and work-items
 * [r·R, (r+1)·R) take their M each (R = lb->rows); storing, the same
 * backwards. The tile is padded, as the local path's block is. */
#include "cg_lookback.h"

/* The tile takes at most 32 KiB: with the rest of a group's local memory,
 * within the 48 KiB that NVIDIA's OpenCL gives a group, and 6 groups of 256
 * in an H100's 228. */
enum { HELD_TILE_BYTES = 32 << 10 };

/* Work-items held per round: the most that divide WG and whose elements
 * fit the tile (their accumulators too, when those are not the elements). */
int64_t cg_lb_rows_of(const lookback *lb, bool in_place) {
    size_t per_row = (size_t)lb->m * (cg_plain_bytes(lb->elem) + (in_place ? 0 : cg_plain_bytes(lb->acc)));
    for (int64_t rounds = 1; rounds <= lb->wg; rounds++)
        if (lb->wg % rounds == 0 && (size_t)(lb->wg / rounds) * per_row <= HELD_TILE_BYTES) return lb->wg / rounds;
    return 1;
}

/* `for each round {`, with lb_stage the first element of its part of the block */
static void round_begin(cg *g, const lookback *lb) {
    cg_line(g, "#pragma unroll 1"); /* a round is long enough; unrolled, they would only grow the code */
    cg_open(g, cg_str(g, "for (int lb_r = 0; lb_r < %lld; lb_r++) {", (long long)(lb->wg / lb->rows)));
    cg_line(g, "const long lb_stage = lb_base + (long)lb_r * %lldL;", (long long)(lb->rows * lb->m));
}

/* `for (…) { if (…) {`: the round's elements, element lb_i at tile index
 * lb_pq, each work-item taking every WG-th */
static void round_elements_begin(cg *g, const lookback *lb, const char *n, int unroll) {
    int64_t count = lb->rows * lb->m;
    if (unroll) cg_line(g, "#pragma unroll %d", unroll);
    cg_open(g, cg_str(g, "for (int lb_k = 0; lb_k < %lld; lb_k++) {", (long long)((count + lb->wg - 1) / lb->wg)));
    cg_line(g, "const int lb_q = lb_k * %lld + lb_l;", (long long)lb->wg);
    cg_lb_padded_index(g, lb);
    cg_line(g, "const long lb_i = lb_stage + lb_q;");
    const char *within = count % lb->wg ? cg_str(g, "lb_q < %lld && ", (long long)count) : "";
    cg_open(g, cg_str(g, "if (%s(lb_full || lb_i < %s)) {", within, n));
}

/* `if (this round holds lb_l) { for (…) {`: its elements, element lb_j at
 * tile index lb_pq */
static void round_own_begin(cg *g, const lookback *lb) {
    cg_open(g, cg_str(g, "if (lb_l / %lld == lb_r) {", (long long)lb->rows));
    cg_line(g, "#pragma unroll");
    cg_open(g, cg_str(g, "for (int lb_j = 0; lb_j < %lld; lb_j++) {", (long long)lb->m));
    cg_line(g, "const int lb_q = (lb_l - lb_r * %lld) * %lld + lb_j;", (long long)lb->rows, (long long)lb->m);
    cg_lb_padded_index(g, lb);
}

void cg_lb_held_load(cg *g, const lookback *lb, const char *n) {
    round_begin(g, lb);
    round_elements_begin(g, lb, n, lb->wg / lb->rows > 1 ? 8 : 0);
    cg_value x = cg_element(g, lb->xs, lb->env, "lb_i");
    set(g, lb->elem, "lb_tile[lb_pq]", &x);
    cg_close(g);
    cg_close(g);
    cg_line(g, "barrier(CLK_LOCAL_MEM_FENCE);");
    round_own_begin(g, lb);
    cg_value staged = at(g, lb->elem, "lb_tile[lb_pq]");
    set(g, lb->elem, "lb_h[lb_j]", &staged);
    cg_close(g);
    cg_close(g);
    cg_line(g, "barrier(CLK_LOCAL_MEM_FENCE);");
    cg_close(g);
}

/* v: the accumulators held (lb_h in place, else lb_hv); u: their tile.
 * The stores go one at a time (unroll 1): the held elements of later
 * rounds are still live, and unrolled stores' addresses would spill them. */
void cg_lb_held_store(cg *g, const lookback *lb, const char *n, const char *v, const char *u, const cg_place *p,
                       const cg_scatter *scatter) {
    round_begin(g, lb);
    round_own_begin(g, lb);
    cg_line(g, "%s[lb_pq] = %s[lb_j];", u, v);
    if (lb->post) cg_line(g, "lb_tile[lb_pq] = lb_h[lb_j];");
    cg_close(g);
    cg_close(g);
    cg_line(g, "barrier(CLK_LOCAL_MEM_FENCE);");
    round_elements_begin(g, lb, n, lb->wg / lb->rows > 1 ? 1 : 0);
    cg_value acc = at(g, lb->acc, cg_str(g, "%s[lb_pq]", u)), x = at(g, lb->elem, "lb_tile[lb_pq]");
    cg_lb_store_one(g, lb, &acc, &x, p, scatter);
    cg_close(g);
    cg_close(g);
    cg_line(g, "barrier(CLK_LOCAL_MEM_FENCE);");
    cg_close(g);
}
