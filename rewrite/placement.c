/* rewrite/placement.c — where the node a rule is given runs: once per
 * program, once per element (inside a lambda), or as one work-item's
 * sequential steps (inside a loop that one work-item runs). Read off the
 * path the traversals took to the node (st_rw_path), with what codegen does
 * with loops: a top-level loop over arrays runs its body (and condition)
 * once per turn at the top of the def, between kernels (codegen/cg_host.c),
 * so its functions are no lambdas here (a scan in them is a top-level
 * scan); any other loop's functions are lambdas, and one work-item's
 * sequential steps. The engine only keeps the path; the rules that care ask
 * here. */
#include "rewrite.h"

static bool is_loop(const st_node *e) {
    return e->kind == ST_NODE_PRIM && (e->u.prim == ST_PRIM_LOOP || e->u.prim == ST_PRIM_WHILE);
}

typedef struct placement {
    int lambdas;   /* the lambdas around the node that run it once per element */
    int seq_loops; /* the loops around it that one work-item runs */
} placement;

static placement place(const st_rw *rw) {
    size_t n;
    const st_node *const *path = st_rw_path(rw, &n);
    placement p = {0};
    for (size_t k = 0; k < n; k++) {
        if (path[k]->kind != ST_NODE_LAMBDA) continue;
        const st_node *loop = k > 0 && is_loop(path[k - 1]) ? path[k - 1] : NULL;
        if (loop && p.lambdas == 0 && st_is_array_loop(loop)) continue; /* runs at the top, between kernels */
        p.lambdas++;
        p.seq_loops += loop != NULL;
    }
    return p;
}

bool st_rw_under_lambda(const st_rw *rw) { return place(rw).lambdas > 0; }
int st_rw_lambda_depth(const st_rw *rw) { return place(rw).lambdas; }
bool st_rw_in_sequential_loop(const st_rw *rw) { return place(rw).seq_loops > 0; }
