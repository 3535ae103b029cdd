/* codegen/cg_group.c — what a work-group does, inside a mapWrg's function.
 *
 * Every work-item of the group runs this code. mapLcl is a loop strided by
 * the group's size, then a barrier; sequential work that produces memory is
 * done by work-item 0, then a barrier; scalars are computed by every
 * work-item (cheaper than sharing them). A barrier is emitted lazily, right
 * before the next step, so none trails at the end of a kernel. */
#include "cg.h"

void cg_group_sync(cg *g) {
    if (!g->barrier_pending) return;
    cg_line(g, "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);");
    g->barrier_pending = false;
}

static void lanes(cg *g, const st_size *n) {
    cg_kernel *k = g->k;
    for (uint32_t i = 0; i < k->nlanes; i++)
        if (k->lanes[i] == n) return;
    const st_size **grown = cg_alloc(g, (k->nlanes + 1) * sizeof *grown);
    if (!grown) return;
    for (uint32_t i = 0; i < k->nlanes; i++) grown[i] = k->lanes[i];
    grown[k->nlanes++] = n;
    k->lanes = grown;
}

/* for (l = local id; l < n; l += local size) { body(l) } then a barrier */
static const char *lanes_begin(cg *g, const st_size *n, cg_scratch_saved *saved) {
    cg_group_sync(g);
    lanes(g, n);
    const char *l = cg_name(g, "l");
    cg_line(g, "for (long %s = get_local_id(0); %s < %s; %s += get_local_size(0)) {", l, l, cg_size(g, n), l);
    g->indent++;
    g->level = CG_THREAD;
    /* each lane its own scratch, within its group's; without a group's
     * slot (a kernel not of mapWrg) a lane's would be shared, so none */
    *saved = (cg_scratch_saved){g->slot, g->slots};
    if (g->slot) *saved = cg_scratch_enter(g, l, n);
    return l;
}

static void lanes_end(cg *g, cg_scratch_saved saved) {
    cg_scratch_leave(g, saved);
    g->level = CG_GROUP;
    g->indent--;
    cg_line(g, "}");
    g->barrier_pending = true;
}

/* What the group runs before sequential work: its mapLcls, into local memory. */
static bool group_parallel(const st_node *e) {
    return e->kind == ST_NODE_PRIM && (e->u.prim == ST_PRIM_MAP_LCL || e->u.prim == ST_PRIM_MAP);
}

static const cg_place *group_place(cg *g, const st_type *t) { return cg_temp(g, t, NULL, CG_LOCAL, "arg"); }

static const cg_stage group = {group_parallel, group_place, cg_group_into};

static void map_lcl(cg *g, const st_node *e, const cg_binding *env, const cg_place *p) {
    e = cg_hoist_args(g, e, 1, &env, &group); /* what the lanes read is there before they start */
    cg_value xs = cg_thread_value(g, e->kids[1], env);
    cg_scratch_saved saved;
    const char *l = lanes_begin(g, cg_length(&xs), &saved);
    cg_value x = cg_index_in(g, &xs, l);
    cg_apply_into(g, e->kids[0], 1, &x, env, cg_place_index(g, p, l));
    lanes_end(g, saved);
}

/* An array already there (a view, a variable) copied in parallel. */
static void copy_lcl(cg *g, const st_node *e, const cg_binding *env, const cg_place *p) {
    cg_value v = cg_thread_value(g, e, env);
    if (cg_same_place(&v, p)) return;
    cg_scratch_saved saved;
    const char *l = lanes_begin(g, cg_length(&v), &saved);
    cg_value x = cg_index_in(g, &v, l);
    cg_store(g, cg_place_index(g, p, l), &x);
    lanes_end(g, saved);
}

/* Sequential work with a result in memory: work-item 0 does it. */
static void by_one(cg *g, const st_node *e, const cg_binding *env, const cg_place *p) {
    e = cg_hoist_inside(g, e, &env, &group);
    cg_group_sync(g);
    cg_line(g, "if (get_local_id(0) == 0) {");
    g->indent++;
    g->level = CG_THREAD;
    cg_thread_into(g, e, env, p);
    g->level = CG_GROUP;
    g->indent--;
    cg_line(g, "}");
    g->barrier_pending = true;
}

static void group_let(cg *g, const st_node *e, const cg_binding *env, const cg_place *p) {
    const st_node *value = st_let_value(e);
    cg_value v;
    if (value->type->kind != ST_TYPE_ARRAY && value->type->kind != ST_TYPE_TUPLE) {
        value = cg_hoist(g, value, &env, &group);
        cg_group_sync(g); /* it may read what the last step wrote */
        v = cg_thread_value(g, value, env);
        v = cg_materialize(g, &v);
    } else if (cg_is_view(value)) {
        cg_group_sync(g);
        v = cg_thread_value(g, value, env);
        if (v.kind != CG_ARRAY) v = cg_materialize(g, &v);
    } else {
        cg_space space = CG_LOCAL;
        const st_node *inner = value;
        if (inner->kind == ST_NODE_PRIM && inner->u.prim == ST_PRIM_TO_PRIVATE) space = CG_PRIVATE;
        if (inner->kind == ST_NODE_PRIM && inner->u.prim == ST_PRIM_TO_GLOBAL) space = CG_GLOBAL;
        if (space == CG_GLOBAL) {
            cg_fail(g, value, "toGlobal inside a work-group: use toLocal, or compute it in a kernel of its own");
            return;
        }
        if (space == CG_PRIVATE) {
            /* every work-item its own copy */
            cg_group_sync(g);
            g->level = CG_THREAD;
            /* the group's scratch slot is not each work-item's own */
            cg_scratch_saved saved = {g->slot, g->slots};
            g->slot = NULL;
            v = cg_thread_value(g, value, env);
            cg_scratch_leave(g, saved);
            g->level = CG_GROUP;
        } else {
            const cg_place *lp = cg_temp(g, value->type, value, CG_LOCAL, e->kids[0]->u.name);
            if (!lp) return;
            cg_group_into(g, value, env, lp);
            v = cg_value_of_place(g, value->type, lp);
        }
    }
    cg_group_into(g, st_let_body(e), cg_bind_pattern(g, env, e, v), p);
}

static void group_into(cg *g, const st_node *e, const cg_binding *env, const cg_place *p);

void cg_group_into(cg *g, const st_node *e, const cg_binding *env, const cg_place *p) {
    const st_node *outer = cg_generating(g, e);
    group_into(g, e, env, p);
    g->at = outer;
}

static void group_into(cg *g, const st_node *e, const cg_binding *env, const cg_place *p) {
    if (g->failed || !p) return;
    if (e->kind == ST_NODE_LET) {
        group_let(g, e, env, p);
        return;
    }
    if (e->kind == ST_NODE_IF && e->type->kind == ST_TYPE_ARRAY) {
        /* the condition is the same for the whole group, so barriers inside
         * the branches are reached by every work-item */
        const st_node *cond = cg_hoist(g, e->kids[0], &env, &group);
        cg_group_sync(g);
        cg_value c = cg_thread_value(g, cond, env);
        cg_line(g, "%s", cg_if(g, c.c));
        g->indent++;
        cg_group_into(g, e->kids[1], env, p);
        cg_group_sync(g);
        g->indent--;
        cg_line(g, "} else {");
        g->indent++;
        cg_group_into(g, e->kids[2], env, p);
        cg_group_sync(g);
        g->indent--;
        cg_line(g, "}");
        return;
    }
    if (e->kind == ST_NODE_PRIM) {
        switch (e->u.prim) {
        case ST_PRIM_MAP_LCL: case ST_PRIM_MAP: map_lcl(g, e, env, p); return;
        case ST_PRIM_MAP_WRG: case ST_PRIM_MAP_GLB:
            cg_fail(g, e, "%s inside a work-group; inside mapWrg the parallel map is mapLcl",
                    st_prim_get(e->u.prim)->name);
            return;
        default: break;
        }
    }
    if (cg_into_view(g, e, env, p, cg_group_into)) return;
    if (e->type->kind == ST_TYPE_ARRAY && cg_is_view(e)) {
        copy_lcl(g, e, env, p);
        return;
    }
    by_one(g, e, env, p);
}
