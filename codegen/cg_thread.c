/* codegen/cg_thread.c — what one work-item does: scalar C, loops for the
 * sequential primitives, private arrays. High-level map, scan and reduce
 * mean the same as their sequential forms here. */
#include "cg.h"
#include "rewrite/rewrite.h"

#include <string.h>

/* ---- scope ---- */

const cg_binding *cg_bind(cg *g, const cg_binding *env, const char *name, cg_value v) {
    cg_binding *b = cg_alloc(g, sizeof *b);
    if (!b) return env;
    *b = (cg_binding){.name = name, .value = v, .proj = -1, .next = env};
    return b;
}

const cg_binding *cg_bind_pattern(cg *g, const cg_binding *env, const st_node *let, cg_value v) {
    uint32_t n = st_let_nvars(let);
    if (n == 1) return cg_bind(g, env, let->kids[0]->u.name, v);
    if (v.kind != CG_TUPLE || v.n != n) {
        cg_fail(g, let, "a pattern over a value that is not a tuple");
        return env;
    }
    for (uint32_t i = 0; i < n; i++) env = cg_bind(g, env, let->kids[i]->u.name, v.items[i]);
    return env;
}

const cg_binding *cg_bind_memory(cg *g, const cg_binding *env, const char *name, const st_type *t,
                                 const cg_place *place) {
    cg_binding *b = cg_alloc(g, sizeof *b);
    if (!b) return env;
    *b = (cg_binding){.name = name, .proj = -1, .place = place, .type = t, .next = env};
    return b;
}

const cg_binding *cg_bind_place(cg *g, const cg_binding *env, const st_node *let, const st_type *t,
                                const cg_place *place) {
    uint32_t n = st_let_nvars(let);
    if (n == 1) return cg_bind_memory(g, env, let->kids[0]->u.name, t, place);
    if (!place->tuple || place->n != n || t->kind != ST_TYPE_TUPLE) {
        cg_fail(g, let, "a pattern over a value that is not a tuple");
        return env;
    }
    for (uint32_t i = 0; i < n; i++) env = cg_bind_memory(g, env, let->kids[i]->u.name, t->items[i], &place->items[i]);
    return env;
}

cg_value cg_lookup(cg *g, const st_node *var, const cg_binding *env) {
    for (const cg_binding *b = env; b; b = b->next) {
        if (b->name != var->u.name) continue;
        if (b->place) return cg_value_of_place(g, b->type, b->place);
        if (!b->deferred) {
            if (b->glue_value) cg_use_value(g, b->value.c);
            return b->value;
        }
        cg_value v = cg_thread_value(g, b->expr, b->env);
        if (b->proj < 0) return v;
        if (v.kind == CG_TUPLE && (uint32_t)b->proj < v.n) return v.items[b->proj];
        cg_fail(g, var, "a pattern over a value that is not a tuple");
        return v;
    }
    cg_fail(g, var, "the variable `%s` is not in scope", var->u.name);
    return cg_scalar(var->type, "0");
}

/* ---- what needs memory ---- */

static void declare_leaves(cg *g, const cg_place *p, bool private_) {
    if (p->tuple) {
        for (uint32_t k = 0; k < p->n; k++) declare_leaves(g, &p->items[k], private_);
        return;
    }
    const cg_mem *m = &p->mem;
    const st_size *count = cg_mem_elements(g, m);
    if (private_) {
        int64_t n;
        st_size_is_const(count, &n);
        cg_line(g, "%s %s[%lld];", cg_mem_ctype(m->kind), m->base, (long long)(n > 0 ? n : 1));
    } else {
        cg_add_local(g, m->base, m->kind, count);
    }
}

static bool constant_length(const st_type *t, int64_t *elems) {
    *elems = 1;
    for (; t->kind == ST_TYPE_ARRAY; t = t->elem) {
        int64_t n;
        if (!st_size_is_const(t->size, &n) || __builtin_mul_overflow(*elems, n, elems)) return false;
    }
    if (t->kind == ST_TYPE_TUPLE)
        for (uint32_t i = 0; i < t->n; i++) {
            int64_t e;
            if (!constant_length(t->items[i], &e)) return false;
        }
    return true;
}

cg_scratch_saved cg_scratch_enter(cg *g, const char *slot, const st_size *n) {
    cg_scratch_saved saved = {g->slot, g->slots};
    if (!g->slot) {
        g->slot = slot;
        g->slots = n;
        return saved;
    }
    st_err e = {0};
    const st_size *slots = st_size_mul(g->cx, g->slots, n, &e);
    if (!slots) {
        cg_fail(g, NULL, "%s", e.message);
        return saved;
    }
    g->slot = cg_str(g, "(%s * %s + %s)", g->slot, cg_size(g, n), slot); /* whole, as an index is multiplied */
    g->slots = slots;
    return saved;
}

void cg_scratch_leave(cg *g, cg_scratch_saved saved) {
    g->slot = saved.slot;
    g->slots = saved.slots;
}

/* Memory of a work-item's own in global memory: its slot of a buffer with
 * one t per slot. What private memory cannot hold (a row of symbolic
 * length, one too long for registers) lives here; it costs global
 * traffic, but the work-item is the only one to touch it. */
static const cg_place *scratch(cg *g, const st_type *t, const char *hint) {
    const st_type *all = st_type_array(g->cx, g->slots, t);
    if (!all) {
        cg_fail(g, NULL, "out of memory");
        return NULL;
    }
    const cg_place *p = cg_host_temp(g, all, hint);
    return p ? cg_place_index(g, p, g->slot) : NULL;
}

/* The most elements of a private array: more and it goes to scratch (or
 * is refused where there is none). */
enum { PRIVATE_MAX = 16384 };
/* ... and in a kernel of one work-item, where a host buffer serves as well
 * for anything longer than a few vectors */
enum { PRIVATE_SINGLE_MAX = 256 };
/* The most elements of a row accumulator whose step is unrolled */
enum { ROW_UNROLL_MAX = 64 };

const cg_place *cg_temp(cg *g, const st_type *t, const st_node *at, cg_space space, const char *hint) {
    bool parallel = g->k->shape != CG_SHAPE_SINGLE && g->level != CG_HOST;
    int64_t elems;
    if (parallel && g->slot && (space == CG_GLOBAL || (space == CG_PRIVATE && (!constant_length(t, &elems) ||
                                                                                 elems > PRIVATE_MAX))))
        return scratch(g, t, cg_str(g, "scratch_%s", hint));
    /* a work-group's array of symbolic length: local memory would grow with
     * the sizes past what any device has, so the group's slot of scratch */
    if (space == CG_LOCAL && g->level == CG_GROUP && g->slot && !constant_length(t, &elems))
        return scratch(g, t, cg_str(g, "scratch_%s", hint));
    if (space == CG_GLOBAL || (space == CG_PRIVATE && g->k->shape == CG_SHAPE_SINGLE &&
                               (!constant_length(t, &elems) || elems > PRIVATE_SINGLE_MAX))) {
        /* one work-item: a buffer of the host's is as private as it gets, and
         * may be as long as the sizes say; a short row of constant length
         * stays private (a row-valued reduction's accumulator: in registers,
         * where the compiler vectorises the steps, rather than stored and
         * loaded through global memory at every element) */
        if (parallel)
            cg_fail(g, at, "toGlobal inside a parallel kernel: each work-item would need its own buffer");
        return cg_host_temp(g, t, hint);
    }
    const cg_place *p = cg_place_new(g, t, space, cg_name(g, space == CG_LOCAL ? "l" : "p"));
    if (!p) return NULL;
    if (space == CG_PRIVATE && !constant_length(t, &elems)) {
        st_buf b = {0};
        st_type_print(t, &b);
        cg_fail(g, at, "an array of type %s inside one work-item needs a constant length; "
                       "split it into blocks of constant size, fuse it into its consumer (fuse-map-reduce, "
                       "fuse-map-scan), or let lower-opencl map it onto a work-group", b.data ? b.data : "?");
        st_buf_free(&b);
        return p;
    }
    if (space == CG_PRIVATE && elems > PRIVATE_MAX) {
        cg_fail(g, at, "a private array of %lld elements is too large for one work-item", (long long)elems);
        return p;
    }
    declare_leaves(g, p, space == CG_PRIVATE);
    return p;
}

/* The memory an address-space annotation puts its value in, by primitive
 * (the others put nothing anywhere: `placed` false). */
typedef struct placement {
    bool placed;
    cg_space space;
} placement;

static const placement placements[ST_PRIM_COUNT] = {
    [ST_PRIM_TO_GLOBAL] = {true, CG_GLOBAL},
    [ST_PRIM_TO_LOCAL] = {true, CG_LOCAL},
    [ST_PRIM_TO_PRIVATE] = {true, CG_PRIVATE},
};

/* The memory a let-bound array goes to: what its annotation says, else
 * what the level has. */
static cg_space space_of(cg *g, const st_node **value) {
    const st_node *v = *value;
    if (v->kind == ST_NODE_PRIM && placements[v->u.prim].placed) {
        *value = v->kids[0];
        return placements[v->u.prim].space;
    }
    return g->level == CG_GROUP ? CG_LOCAL : g->level == CG_HOST ? CG_GLOBAL : CG_PRIVATE;
}

/* ---- statements with their own text: branches ---- */

/* Generate into a separate text, so that a branch with no statements can
 * be a ?: and one with statements an if. */
static cg_value declare(cg *g, const st_type *t) {
    if (t->kind == ST_TYPE_SCALAR) {
        const char *x = cg_name(g, "x");
        cg_line(g, "%s %s;", cg_ctype(g, t), x);
        return cg_scalar(t, x);
    }
    cg_value *items = cg_alloc(g, t->n * sizeof *items);
    if (!items) return cg_scalar(t, "0");
    for (uint32_t k = 0; k < t->n; k++) items[k] = declare(g, t->items[k]);
    return (cg_value){.kind = CG_TUPLE, .type = t, .n = t->n, .items = items};
}

static cg_value ternary(cg *g, const char *c, const cg_value *a, const cg_value *b) {
    /* after a failure a branch may be a placeholder of another shape */
    if (g->failed || a->kind != b->kind || (a->kind == CG_TUPLE && a->n != b->n)) return *a;
    if (a->kind == CG_SCALAR) return cg_scalar(a->type, cg_str(g, "(%s ? %s : %s)", c, a->c, b->c));
    cg_value *items = cg_alloc(g, a->n * sizeof *items);
    if (!items) return *a;
    for (uint32_t k = 0; k < a->n; k++) items[k] = ternary(g, c, &a->items[k], &b->items[k]);
    return (cg_value){.kind = CG_TUPLE, .type = a->type, .n = a->n, .items = items};
}

/* An if in a branch of an if, and another in a branch of that one, …: an
 * else-if chain, or the same down the then-branches. As blocks in blocks a
 * chain of 300 nests braces 300 deep, past what a device's compiler takes
 * (cg_bracket_depth); from CHAIN_FROM ifs on it is one `do { … } while (0)`
 * of steps, each leaving it with its value. */
enum { CHAIN_FROM = 16 };

static bool chain_goes_then(const st_node *e) {
    return e->kids[1]->kind == ST_NODE_IF && e->kids[2]->kind != ST_NODE_IF;
}

static int chain_length(const st_node *e) {
    int n = 0;
    for (; e->kind == ST_NODE_IF && cg_is_plain(e->type) && n < CHAIN_FROM; n++) e = e->kids[chain_goes_then(e) ? 1 : 2];
    return n;
}

static cg_value if_chain(cg *g, const st_node *e, const cg_binding *env) {
    cg_value r = declare(g, e->type);
    cg_open(g, "do {");
    for (; e->kind == ST_NODE_IF && cg_is_plain(e->type); e = e->kids[chain_goes_then(e) ? 1 : 2]) {
        bool then = chain_goes_then(e); /* the chain goes on when the condition holds */
        cg_value c0 = cg_thread_value(g, e->kids[0], env);
        cg_value c = cg_materialize(g, &c0);
        const cg_binding *holds = cg_range_refine(g, e->kids[0], env);
        cg_open(g, then ? cg_str(g, "if (!%s) {", c.c) : cg_if(g, c.c));
        cg_value leaf = cg_thread_value(g, e->kids[then ? 2 : 1], then ? env : holds);
        cg_assign(g, &r, &leaf);
        cg_line(g, "break;");
        cg_close(g);
        if (then) env = holds;
    }
    cg_value last = cg_thread_value(g, e, env);
    cg_assign(g, &r, &last);
    g->indent--;
    cg_line(g, "} while (0);");
    return r;
}

/* An array literal is an index map choosing among its elements by a
 * balanced tree of ifs on the index (elab.c select_tree): a kernel holds
 * its elements as code, which device compilers take in time superlinear
 * in their number (slow at a few thousand on PoCL, far slower at 10^5).
 * Past MAX_LITERAL it is refused, at the literal, with its size. */
enum { MAX_LITERAL = 8192 };

static bool selects_on(const st_node *e, const st_node **i) {
    if (e->kind != ST_NODE_IF) return false;
    const st_node *c = e->kids[0];
    if (c->kind != ST_NODE_BINOP || c->u.binop != ST_OP_LT || c->kids[0]->kind != ST_NODE_VAR ||
        c->kids[1]->kind != ST_NODE_LIT || (*i && c->kids[0] != *i))
        return false;
    *i = c->kids[0];
    return true;
}

/* The choices of the tree of ifs on one index that e is, up to `cap` */
static uint64_t choices(const st_node *e, const st_node *i, uint64_t cap) {
    if (!selects_on(e, &i)) return 1;
    uint64_t a = choices(e->kids[1], i, cap);
    return a >= cap ? a : a + choices(e->kids[2], i, cap - a);
}

static cg_value if_value(cg *g, const st_node *e, const cg_binding *env) {
    const st_node *i = NULL;
    uint64_t n = selects_on(e, &i) ? choices(e, i, MAX_LITERAL + 1) : 1;
    if (n > MAX_LITERAL) {
        n = choices(e, i, UINT64_MAX);
        cg_fail(g, e, "an array literal of %llu elements: a kernel holds one of at most %d, as code; "
                      "pass the array as an input (a .npy file) instead",
                (unsigned long long)n, MAX_LITERAL);
        return cg_scalar(e->type, "0");
    }
    if (chain_length(e) >= CHAIN_FROM) return if_chain(g, e, env);
    cg_value c0 = cg_thread_value(g, e->kids[0], env);
    cg_value c = cg_materialize(g, &c0);
    st_buf saved = cg_capture_begin(g);
    g->indent++;
    cg_value a = cg_thread_value(g, e->kids[1], cg_range_refine(g, e->kids[0], env));
    st_buf ta = cg_capture_end(g, saved);
    saved = cg_capture_begin(g);
    cg_value b = cg_thread_value(g, e->kids[2], cg_range_refine_not(g, e->kids[0], env));
    g->indent--;
    st_buf tb = cg_capture_end(g, saved);
    return cg_choose(g, c.c, e->type, &a, &ta, &b, &tb);
}

cg_value cg_choose(cg *g, const char *c, const st_type *t, const cg_value *a, st_buf *ta, const cg_value *b,
                   st_buf *tb) {
    cg_value r;
    if (!ta->len && !tb->len) {
        r = ternary(g, c, a, b);
    } else {
        r = declare(g, t);
        cg_line(g, "%s", cg_if(g, c));
        cg_emit_text(g, ta, 0, NULL, NULL);
        g->indent++;
        cg_assign(g, &r, a);
        g->indent--;
        cg_line(g, "} else {");
        cg_emit_text(g, tb, 0, NULL, NULL);
        g->indent++;
        cg_assign(g, &r, b);
        g->indent--;
        cg_line(g, "}");
    }
    st_buf_free(ta);
    st_buf_free(tb);
    return r;
}

/* ---- sequential primitives ---- */

/* A loop of n turns; *saved keeps what loop_end restores. A kernel whose
 * work-items loop (their loops' turns multiplied, a row of lanes folded
 * over a chunk counting all of its turns) runs in groups of one on a CPU. */
static const char *loop_begin(cg *g, const st_size *n, int64_t *saved) {
    const char *j = cg_name(g, "j");
    int64_t c;
    if (st_size_is_const(n, &c) && (c <= 16 || c <= g->unroll_rows)) cg_line(g, "#pragma unroll");
    *saved = g->loop_turns;
    bool known = st_size_is_const(n, &c);
    int64_t outer = g->loop_turns ? g->loop_turns : 1;
    g->loop_turns = known && c <= INT32_MAX && outer <= INT32_MAX ? outer * (c > 0 ? c : 1) : INT64_MAX;
    if (g->k && g->loop_turns > ROW_UNROLL_MAX) g->k->loops = true;
    cg_line(g, "for (long %s = 0; %s < %s; %s++) {", j, j, cg_size(g, n), j);
    g->indent++;
    return j;
}

static void loop_end(cg *g, int64_t saved) {
    g->indent--;
    cg_line(g, "}");
    g->loop_turns = saved;
}

/* An accumulator: private variables for scalars and tuples of scalars;
 * for anything holding arrays, private memory, which each step computes
 * into a fresh array and then copies over (the step may read the old). */
typedef struct accumulator {
    cg_value value;
    const cg_place *place; /* NULL: variables */
} accumulator;

static accumulator acc_new(cg *g, const cg_value *z, const st_node *at) {
    if (cg_is_plain(z->type)) return (accumulator){cg_variables(g, z), NULL};
    const cg_place *p = cg_temp(g, z->type, at, CG_PRIVATE, "acc");
    if (!p) return (accumulator){*z, NULL};
    cg_store(g, p, z);
    return (accumulator){cg_value_of_place(g, z->type, p), p};
}

/* Does e compute element j of its result from element j of a alone: a
 * itself, a map to scalars (or tuples of them) over a or over a zip with a
 * as one component (a read nowhere else), or an if or let around such,
 * their conditions and values not reading a? Then a step f(a, …) = e may
 * write its result over a in place (element j read into variables before
 * it is written, by the same loop turn), rather than into a fresh array
 * copied back at every element. Not a map to rows: row j of the result,
 * written element by element, may read row j of a in another order. */
static bool elementwise(const st_node *e, const st_node *a) {
    if (e == a) return true;
    if (e->kind == ST_NODE_IF) return !st_occurs(e->kids[0], a) && elementwise(e->kids[1], a) && elementwise(e->kids[2], a);
    if (e->kind == ST_NODE_LET) return !st_occurs(st_let_value(e), a) && elementwise(st_let_body(e), a);
    if (!st_is_prim(e, ST_PRIM_MAP) && !st_is_prim(e, ST_PRIM_MAP_SEQ)) return false;
    if (!st_type_is_plain(e->type->elem)) return false;
    const st_node *fn = e->kids[0], *data = e->kids[1];
    if (st_occurs(fn, a)) return false;
    if (data == a) return true;
    if (!st_is_prim(data, ST_PRIM_ZIP)) return false;
    uint32_t found = 0;
    for (uint32_t i = 0; i < data->nkids; i++) {
        if (data->kids[i] == a) found++;
        else if (st_occurs(data->kids[i], a)) return false;
    }
    return found == 1;
}

static bool steps_elementwise(const st_node *f) {
    return f->kind == ST_NODE_LAMBDA && st_lambda_nparams(f) >= 1 && elementwise(st_lambda_body(f), f->kids[0]);
}

static void acc_step(cg *g, accumulator *acc, const st_node *f, uint32_t nargs, const cg_value *args,
                     const cg_binding *env, const st_node *at) {
    if (!acc->place) {
        cg_value r = cg_apply(g, f, nargs, args, env);
        cg_assign(g, &acc->value, &r);
        return;
    }
    if (steps_elementwise(f)) {
        /* a short row's loops unrolled: every element at a constant index,
         * the compiler keeps the row in (vector) registers across the
         * elements folded, where a loop left it in memory, each step a
         * store and a load of the whole row (a 32-counter fold runs several
         * times faster unrolled: docs/performance.md) */
        int64_t elems, saved = g->unroll_rows;
        if (constant_length(acc->value.type, &elems) && elems <= ROW_UNROLL_MAX) g->unroll_rows = elems;
        cg_apply_into(g, f, nargs, args, env, acc->place);
        g->unroll_rows = saved;
        return;
    }
    const cg_place *next = cg_temp(g, acc->value.type, at, CG_PRIVATE, "next");
    if (!next) return;
    cg_apply_into(g, f, nargs, args, env, next);
    cg_value v = cg_value_of_place(g, acc->value.type, next);
    cg_store(g, acc->place, &v);
}

/* reduce(op, z, xs), reduce(op, fold, z, xs), reduceSeq(f, z, xs): a fold. */
static cg_value fold(cg *g, const st_node *e, const cg_binding *env) {
    st_scan_form s;
    if (!st_fold_form_of(e, &s)) return cg_fail(g, e, "a fold of something not a reduce"), cg_scalar(e->type, "0");
    const st_node *f = st_fold_step(&s);
    cg_value z = cg_thread_value(g, s.z, env);
    cg_value xs = cg_thread_value(g, s.xs, env);
    accumulator acc = acc_new(g, &z, e);
    int64_t turns;
    const char *j = loop_begin(g, cg_length(&xs), &turns);
    cg_value args[2] = {acc.value, cg_index_in(g, &xs, j)};
    acc_step(g, &acc, f, 2, args, env, e);
    loop_end(g, turns);
    return acc.value;
}

/* scan(op, z, xs), scan(op, fold, z, xs), scanSeq(f, z, xs) and
 * scan(op, fold, post, z, xs): inclusive, element j from the fold up to j. */
static void scan_into(cg *g, const st_node *e, const cg_binding *env, const cg_place *p) {
    st_scan_form s;
    if (!st_fold_form_of(e, &s)) return (void)cg_fail(g, e, "a scan of something not a scan");
    const st_node *f = st_fold_step(&s), *post = s.post;
    cg_value z = cg_thread_value(g, s.z, env);
    cg_value xs = cg_thread_value(g, s.xs, env);
    accumulator acc = acc_new(g, &z, e);
    int64_t turns;
    const char *j = loop_begin(g, cg_length(&xs), &turns);
    cg_value x0 = cg_index_in(g, &xs, j);
    cg_value x = cg_materialize(g, &x0);
    cg_value args[2] = {acc.value, x};
    acc_step(g, &acc, f, 2, args, env, e);
    const cg_place *slot = cg_place_index(g, p, j);
    if (post) {
        cg_value pargs[2] = {acc.value, x};
        cg_apply_into(g, post, 2, pargs, env, slot);
    } else {
        cg_store(g, slot, &acc.value);
    }
    loop_end(g, turns);
}

static void map_into(cg *g, const st_node *e, const cg_binding *env, const cg_place *p) {
    cg_value xs = cg_thread_value(g, e->kids[1], env);
    int64_t turns;
    const char *j = loop_begin(g, cg_length(&xs), &turns);
    cg_value x = cg_index_in(g, &xs, j);
    cg_apply_into(g, e->kids[0], 1, &x, env, cg_place_index(g, p, j));
    loop_end(g, turns);
}

/* The arrays a scatter or reduce_by_index reads: indices and values, or
 * (index, value) pairs in both. */
void cg_scatter_sources(cg *g, const st_node *e, const cg_binding *env, cg_value *is, cg_value *vs) {
    bool hist = e->u.prim == ST_PRIM_REDUCE_BY_INDEX, pairs = e->nkids == 2;
    *is = cg_thread_value(g, e->kids[pairs ? 1 : hist ? 3 : 1], env);
    *vs = pairs ? *is : cg_thread_value(g, e->kids[hist ? 4 : 2], env);
}

/* Element j of a scatter or reduce_by_index: an index out of bounds is
 * ignored, as the interpreter does. */
void cg_scatter_step(cg *g, const cg_scatter *s, const cg_binding *env, const cg_place *p, const cg_value *is,
                     const cg_value *vs, const char *j) {
    cg_value i = cg_index_in(g, is, j), v = cg_index_in(g, vs, j);
    if (s->e->nkids == 2) {
        if (i.kind != CG_TUPLE || i.n != 2) {
            cg_fail(g, s->e, "scatter over pairs that are not pairs");
            return;
        }
        v = i.items[1];
        i = i.items[0];
    }
    cg_scatter_write(g, s, env, p, &i, &v, j);
}

void cg_scatter_write(cg *g, const cg_scatter *s, const cg_binding *env, const cg_place *p, const cg_value *i,
                      const cg_value *value, const char *j) {
    const st_node *e = s->e;
    cg_value v = *value;
    const char *idx = cg_name(g, "at");
    cg_line(g, "long %s = (long)%s;", idx, i->c);
    cg_open(g, cg_str(g, "if (%s >= 0 && %s < %s) {", idx, idx, cg_size(g, e->type->size)));
    if (s->pass == CG_CLAIM) {
        cg_winners_claim(g, s->winners, idx, j);
        cg_close(g);
        return;
    }
    if (s->pass == CG_WON) cg_open(g, cg_str(g, "if (%s) {", cg_winners_won(g, s->winners, idx, j)));
    const cg_place *slot = cg_place_index(g, p, idx);
    if (e->u.prim == ST_PRIM_REDUCE_BY_INDEX) {
        cg_value old = cg_value_of_place(g, e->type->elem, slot);
        cg_value args[2] = {cg_materialize(g, &old), cg_materialize(g, &v)};
        v = cg_apply(g, e->kids[1], 2, args, env);
    }
    cg_store(g, slot, &v);
    if (s->pass == CG_WON) cg_close(g);
    cg_close(g);
}

/* scatter(dest, is, vs), scatter(dest, ivs), reduce_by_index(dest, f, z, is, vs):
 * the destination first, then each element in order (so of a repeated
 * index the last write stays, as in the interpreter). */
static void scatter_into(cg *g, const st_node *e, const cg_binding *env, const cg_place *p) {
    cg_thread_into(g, e->kids[0], env, p);
    cg_value is, vs;
    cg_scatter_sources(g, e, env, &is, &vs);
    int64_t turns;
    const char *j = loop_begin(g, cg_length(&is), &turns);
    cg_scatter_step(g, &(cg_scatter){.e = e, .pass = CG_ALL}, env, p, &is, &vs, j);
    loop_end(g, turns);
}

/* iterate(k, f, x): f applied k times. */
static cg_value iterate(cg *g, const st_node *e, const cg_binding *env) {
    cg_value k = cg_thread_value(g, e->kids[0], env);
    cg_value x = cg_thread_value(g, e->kids[2], env);
    accumulator acc = acc_new(g, &x, e);
    const char *t = cg_name(g, "t");
    cg_line(g, "for (long %s = 0; %s < (long)%s; %s++) {", t, t, k.c, t);
    g->indent++;
    acc_step(g, &acc, e->kids[1], 1, &acc.value, env, e);
    g->indent--;
    cg_line(g, "}");
    return acc.value;
}

/* loop(n, f, x): a C for loop over the index, the accumulator in private
 * variables (or private memory when it holds arrays);
 * while(c, f, x): the condition computed at the top of each turn. */
static cg_value loop(cg *g, const st_node *e, const cg_binding *env) {
    bool is_while = e->u.prim == ST_PRIM_WHILE;
    cg_value n = is_while ? (cg_value){0} : cg_thread_value(g, e->kids[0], env);
    cg_value x = cg_thread_value(g, e->kids[2], env);
    accumulator acc = acc_new(g, &x, e);
    const char *i = cg_name(g, "i");
    if (is_while) cg_line(g, "for (;;) {");
    else cg_line(g, "for (long %s = 0; %s < (long)%s; %s++) {", i, i, n.c, i);
    g->indent++;
    if (is_while) {
        cg_value c = cg_apply(g, e->kids[0], 1, &acc.value, env);
        cg_line(g, "if (!(%s)) break;", c.c);
        acc_step(g, &acc, e->kids[1], 1, &acc.value, env, e);
    } else {
        cg_value args[2] = {cg_scalar(e->kids[0]->type, i), acc.value};
        acc_step(g, &acc, e->kids[1], 2, args, env, e);
    }
    g->indent--;
    cg_line(g, "}");
    return acc.value;
}

static bool parallel_map(const st_node *e) {
    return e->kind == ST_NODE_PRIM &&
           (e->u.prim == ST_PRIM_MAP_GLB || e->u.prim == ST_PRIM_MAP_WRG || e->u.prim == ST_PRIM_MAP_LCL);
}

/* ---- values ---- */

/* A primitive's value in one work-item, by primitive: the views (split,
 * join, transpose, zip, unzip, iota, replicate, take, drop, concat, an
 * index map) as index arithmetic on what they see, the folds and loops as
 * loops; a primitive with none here is computed into a private array. */
static cg_value split_value(cg *g, const st_node *e, const cg_binding *env) {
    cg_value xs = cg_thread_value(g, e->kids[1], env);
    return cg_split(g, e->type, e->type->elem->size, &xs);
}

static cg_value join_value(cg *g, const st_node *e, const cg_binding *env) {
    cg_value xs = cg_thread_value(g, e->kids[0], env);
    return cg_join(g, e->type, &xs);
}

static cg_value transpose_value(cg *g, const st_node *e, const cg_binding *env) {
    cg_value xs = cg_thread_value(g, e->kids[0], env);
    return cg_transpose(g, e->type, &xs);
}

static cg_value zip_value(cg *g, const st_node *e, const cg_binding *env) {
    cg_value *items = cg_alloc(g, e->nkids * sizeof *items);
    if (!items) return cg_scalar(e->type, "0");
    for (uint32_t i = 0; i < e->nkids; i++) items[i] = cg_thread_value(g, e->kids[i], env);
    return cg_zip(g, e->type, e->nkids, items);
}

static cg_value unzip_value(cg *g, const st_node *e, const cg_binding *env) {
    cg_value xs = cg_thread_value(g, e->kids[0], env);
    return cg_unzip(g, e->type, &xs);
}

static cg_value iota_value(cg *g, const st_node *e, const cg_binding *env) {
    (void)env;
    return cg_iota(g, e->type);
}

/* replicate(n, x), and scratch(n, x), whose elements are never written */
static cg_value replicate_value(cg *g, const st_node *e, const cg_binding *env) {
    cg_value x = cg_thread_value(g, e->kids[1], env);
    return cg_replicate(g, e->type, &x);
}

static cg_value get_value(cg *g, const st_node *e, const cg_binding *env) {
    cg_value i = cg_thread_value(g, e->kids[0], env);
    cg_value xs = cg_thread_value(g, e->kids[1], env);
    const char *at = cg_str(g, "(long)%s", i.c);
    /* checked on the device unless it cannot leave the array (cg_range.c) */
    const st_size *n = xs.kind == CG_ARRAY ? cg_length(&xs) : NULL;
    if (n && !cg_in_range(g, &i, n)) return cg_index(g, &xs, cg_checked_index(g, at, n, e));
    return cg_index_at(g, &xs, cg_renamed(i, at));
}

/* a scan's total where no kernel of its scan writes it (cg_hoist takes a
 * look-back's): the fold of its input, in this work-item, post-function
 * aside; it was computed as a temporary of itself, without end */
static cg_value scan_total_value(cg *g, const st_node *e, const cg_binding *env) { return fold(g, e->kids[0], env); }

/* toGlobal, toLocal, toPrivate: the value computed into that memory */
static cg_value placed_value(cg *g, const st_node *e, const cg_binding *env) {
    const st_node *inner = e;
    cg_space space = space_of(g, &inner);
    if (cg_is_view(inner) || inner->type->kind != ST_TYPE_ARRAY) return cg_thread_value(g, inner, env);
    const cg_place *p = cg_temp(g, e->type, e, space, "tmp");
    if (!p) return cg_scalar(e->type, "0");
    cg_thread_into(g, inner, env, p);
    return cg_value_of_place(g, e->type, p);
}

/* any primitive with no value of its own: an array computed in place */
static cg_value computed_value(cg *g, const st_node *e, const cg_binding *env) {
    const st_type *t = e->type;
    if (parallel_map(e)) {
        cg_fail(g, e, "%s inside one work-item's sequential code; a parallel map must be directly "
                      "inside mapWrg (mapLcl) or at the top (mapGlb, mapWrg)", st_prim_get(e->u.prim)->name);
        return cg_scalar(t, "0");
    }
    /* a private array, as lowering's toPrivate */
    const cg_place *p = cg_temp(g, t, e, CG_PRIVATE, "tmp");
    if (!p) return cg_scalar(t, "0");
    cg_thread_into(g, e, env, p);
    return cg_value_of_place(g, t, p);
}

static cg_value map_value(cg *g, const st_node *e, const cg_binding *env) {
    if (!cg_is_view(e)) return computed_value(g, e, env); /* any other map is computed */
    cg_value xs = cg_thread_value(g, e->kids[1], env); /* an index map: each element where it is read */
    return cg_map_view(g, e->type, e->kids[0], env, &xs);
}

/* The parts of a primitive that a view writes straight into a place, by
 * primitive (cg_into_view). */
static bool join_into(cg *g, const st_node *e, const cg_binding *env, const cg_place *p, cg_into_fn into) {
    /* [a·b] written as [a][b]: the rows of what is joined land in place */
    into(g, e->kids[0], env, cg_place_split(g, p, e->kids[0]->type->elem->size));
    return true;
}

static bool split_into(cg *g, const st_node *e, const cg_binding *env, const cg_place *p, cg_into_fn into) {
    const cg_place *flat = cg_place_join(g, p);
    if (!flat) return false;
    into(g, e->kids[1], env, flat);
    return true;
}

static bool transpose_into(cg *g, const st_node *e, const cg_binding *env, const cg_place *p, cg_into_fn into) {
    into(g, e->kids[0], env, cg_place_transpose(g, p));
    return true;
}

static bool zip_into(cg *g, const st_node *e, const cg_binding *env, const cg_place *p, cg_into_fn into) {
    if (!p->tuple || p->n != e->nkids) return false;
    for (uint32_t i = 0; i < e->nkids; i++) into(g, e->kids[i], env, &p->items[i]);
    return true;
}

/* unzip (the same tuple of arrays) and the address-space annotations */
static bool same_into(cg *g, const st_node *e, const cg_binding *env, const cg_place *p, cg_into_fn into) {
    into(g, e->kids[0], env, p);
    return true;
}

/* How one work-item generates each primitive: its value (NULL: computed
 * into a private array), how it writes into a place (NULL: its value,
 * stored), and the parts a view of it writes into a place (NULL: none). */
typedef struct thread_prim {
    cg_value (*value)(cg *g, const st_node *e, const cg_binding *env);
    void (*into)(cg *g, const st_node *e, const cg_binding *env, const cg_place *p);
    bool (*view_into)(cg *g, const st_node *e, const cg_binding *env, const cg_place *p, cg_into_fn into);
} thread_prim;

static const thread_prim thread_prims[ST_PRIM_COUNT] = {
    [ST_PRIM_MAP] = {.value = map_value, .into = map_into},
    [ST_PRIM_MAP_SEQ] = {.into = map_into},
    [ST_PRIM_SCAN] = {.into = scan_into},
    [ST_PRIM_SCAN_SEQ] = {.into = scan_into},
    [ST_PRIM_SCATTER] = {.into = scatter_into},
    [ST_PRIM_SCATTER_DISTINCT] = {.into = scatter_into},
    [ST_PRIM_REDUCE_BY_INDEX] = {.into = scatter_into},
    [ST_PRIM_PARTITION_BY] = {.into = cg_partition_into},
    [ST_PRIM_SPLIT] = {.value = split_value, .view_into = split_into},
    [ST_PRIM_JOIN] = {.value = join_value, .view_into = join_into},
    [ST_PRIM_TRANSPOSE] = {.value = transpose_value, .view_into = transpose_into},
    [ST_PRIM_ZIP] = {.value = zip_value, .view_into = zip_into},
    [ST_PRIM_UNZIP] = {.value = unzip_value, .view_into = same_into},
    [ST_PRIM_IOTA] = {.value = iota_value},
    [ST_PRIM_TAKE] = {.value = cg_cut_value},
    [ST_PRIM_DROP] = {.value = cg_cut_value},
    [ST_PRIM_CONCAT] = {.value = cg_cut_value},
    [ST_PRIM_REPLICATE] = {.value = replicate_value},
    [ST_PRIM_SCRATCH] = {.value = replicate_value},
    [ST_PRIM_GET] = {.value = get_value},
    [ST_PRIM_REDUCE] = {.value = fold},
    [ST_PRIM_REDUCE_SEQ] = {.value = fold},
    [ST_PRIM_SCAN_TOTAL] = {.value = scan_total_value},
    [ST_PRIM_ITERATE] = {.value = iterate},
    [ST_PRIM_LOOP] = {.value = loop},
    [ST_PRIM_WHILE] = {.value = loop},
    [ST_PRIM_TO_GLOBAL] = {.value = placed_value, .view_into = same_into},
    [ST_PRIM_TO_LOCAL] = {.value = placed_value, .view_into = same_into},
    [ST_PRIM_TO_PRIVATE] = {.value = placed_value, .view_into = same_into},
};

static cg_value prim_value(cg *g, const st_node *e, const cg_binding *env) {
    cg_value (*value)(cg *, const st_node *, const cg_binding *) = thread_prims[e->u.prim].value;
    return (value ? value : computed_value)(g, e, env);
}

/* `let x = v in if c then a else b` where only one branch reads x: the
 * let inside that branch, or NULL. */
static const st_node *let_in_branch(cg *g, const st_node *e) {
    const st_node *body = st_let_body(e), *x = e->kids[0];
    if (st_let_nvars(e) != 1 || body->kind != ST_NODE_IF || st_occurs(body->kids[0], x)) return NULL;
    bool in_then = st_occurs(body->kids[1], x), in_else = st_occurs(body->kids[2], x);
    if (in_then == in_else) return NULL;
    uint32_t k = in_then ? 1 : 2;
    st_err err = {0};
    const st_node *branch = st_let(g->cx, 1, &x, st_let_value(e), body->kids[k], &err);
    return branch ? st_replace_kid(g->cx, body, k, branch, &err) : NULL;
}

/* A let is generated where it is: its value once, into a variable. But a
 * scalar that one branch of the if after it alone reads, and that cannot
 * fault (an expression: no statements, no index checked), is generated in
 * that branch, where the branch's test holds. The scan tree's down-sweep
 * reads the element before its own, `let before = xs[max(i - 1, 0)] in if
 * i == 0 then z else before`: in the else branch i ≥ 1, the max() goes
 * (cg_range.c) and the read is xs[i - 1], affine in the loop's index and
 * under the loop's own test, where a CPU's compiler had gathered xs at
 * max(i - 1, 0) a lane at a time ([Pizzuti et al. 2022]'s block scan on
 * PoCL gained a third: docs/performance.md). */
static cg_value let_value(cg *g, const st_node *e, const cg_binding *env, bool into, const cg_place *p) {
    const st_node *value = st_let_value(e);
    cg_value v;
    if (value->type->kind != ST_TYPE_ARRAY || cg_is_view(value)) {
        const st_node *sunk = into ? NULL : let_in_branch(g, e);
        if (!sunk) {
            v = cg_thread_value(g, value, env);
        } else { /* generated apart, to see whether it is an expression that cannot fault */
            st_buf saved = cg_capture_begin(g);
            uint32_t sites = g->nsites;
            v = cg_thread_value(g, value, env);
            st_buf text = cg_capture_end(g, saved);
            bool sinks = v.kind == CG_SCALAR && !text.len && g->nsites == sites;
            cg_emit_text(g, &text, 0, NULL, NULL);
            st_buf_free(&text);
            if (sinks) return cg_thread_value(g, sunk, env);
        }
        if (v.kind != CG_ARRAY) v = cg_materialize(g, &v);
    } else {
        cg_space space = space_of(g, &value);
        const cg_place *tp = cg_temp(g, value->type, value, space, e->kids[0]->u.name);
        if (!tp) return cg_scalar(e->type, "0");
        cg_thread_into(g, value, env, tp);
        v = cg_value_of_place(g, value->type, tp);
    }
    env = cg_bind_pattern(g, env, e, v);
    if (into) {
        cg_thread_into(g, st_let_body(e), env, p);
        return v;
    }
    return cg_thread_value(g, st_let_body(e), env);
}

/* A mapGlb's index i over a constant c (the block of a scan's propagate,
 * whose block prefix it reads): where the work-group's size divides c, the
 * group's first index over c, the same for the whole group; so a CPU's
 * OpenCL, vectorising a group's work-items, reads the block's prefix once,
 * where it gathered it a lane at a time (with the whole groups of
 * kernel_glb, [Pizzuti et al. 2022]'s propagate on PoCL runs at a copy's
 * speed: docs/performance.md). */
static const char *group_quotient(cg *g, const cg_value *a, const cg_value *b, const char *quotient) {
    int64_t c;
    if (!a->group_first || a->lo < 0 || !cg_range_constant(b, &c) || c < 1) return NULL;
    g->uniform_uses++;
    return cg_str(g, "(%lldL %% (long)get_local_size(0) == 0 ? %s : %s)", (long long)c,
                  cg_binop(g, ST_OP_DIV, a->type->scalar, a->group_first, b->c), quotient);
}

/* a && b, a || b: b is evaluated only where a does not decide, as the
 * interpreter does, so that what b checks (an index, a divisor) is checked
 * only there: `k < n && xs[k] > 0` reads nothing at k = n. */
static cg_value short_circuit(cg *g, const st_node *e, const cg_binding *env) {
    cg_value a = cg_thread_value(g, e->kids[0], env);
    st_buf saved = cg_capture_begin(g);
    g->indent++;
    cg_value b = cg_thread_value(g, e->kids[1], env);
    g->indent--;
    st_buf tb = cg_capture_end(g, saved);
    cg_value r;
    if (!tb.len) {
        r = cg_scalar(e->type, cg_binop(g, e->u.binop, ST_BOOL, a.c, b.c));
    } else {
        r = declare(g, e->type);
        cg_assign(g, &r, &a);
        cg_line(g, "if (%s%s) {", e->u.binop == ST_OP_AND ? "" : "!", r.c);
        cg_emit_text(g, &tb, 0, NULL, NULL);
        g->indent++;
        cg_assign(g, &r, &b);
        g->indent--;
        cg_line(g, "}");
    }
    st_buf_free(&tb);
    return r;
}

/* Brackets nested deeper than this in one expression go through a variable. */
enum { FLAT_DEPTH = 64 };

/* v with every scalar whose C text nests brackets too deep in a variable of
 * its own: a chain of 300 additions (or of fused maps) is then statements of
 * at most FLAT_DEPTH, not one expression the device's compiler refuses. */
static cg_value flat(cg *g, cg_value v) {
    if (v.kind == CG_SCALAR && v.c && strlen(v.c) > FLAT_DEPTH && cg_bracket_depth(v.c) > FLAT_DEPTH) {
        const char *x = cg_name(g, "x");
        cg_line(g, "%s %s = %s;", cg_ctype(g, v.type), x, v.c);
        return cg_renamed(v, x);
    }
    if (v.kind == CG_TUPLE) {
        cg_value *items = cg_alloc(g, v.n * sizeof *items);
        if (!items) return v;
        for (uint32_t k = 0; k < v.n; k++) items[k] = flat(g, v.items[k]);
        v.items = items;
    }
    return v;
}

static cg_value thread_value(cg *g, const st_node *e, const cg_binding *env);

cg_value cg_thread_value(cg *g, const st_node *e, const cg_binding *env) {
    cg_value v = thread_value(g, e, env);
    return g->failed ? v : flat(g, v);
}

static cg_value thread_value_of(cg *g, const st_node *e, const cg_binding *env);

/* thread_value_of(e), with e the node being generated */
static cg_value thread_value(cg *g, const st_node *e, const cg_binding *env) {
    const st_node *outer = cg_generating(g, e);
    cg_value v = thread_value_of(g, e, env);
    g->at = outer;
    return v;
}

static cg_value thread_value_of(cg *g, const st_node *e, const cg_binding *env) {
    if (g->failed) return cg_scalar(e->type, "0");
    switch (e->kind) {
    case ST_NODE_LIT: {
        cg_value r = cg_scalar(e->type, cg_literal(g, e->type->scalar, e->u.lit));
        cg_range_literal(g, &r, e->type->scalar, e->u.lit);
        return r;
    }
    case ST_NODE_VAR: return cg_lookup(g, e, env);
    case ST_NODE_TUPLE: {
        cg_value *items = cg_alloc(g, e->nkids * sizeof *items);
        if (!items) return cg_scalar(e->type, "0");
        for (uint32_t i = 0; i < e->nkids; i++) items[i] = cg_thread_value(g, e->kids[i], env);
        return (cg_value){.kind = CG_TUPLE, .type = e->type, .n = e->nkids, .items = items};
    }
    case ST_NODE_PROJ: {
        cg_value t = cg_thread_value(g, e->kids[0], env);
        if (t.kind == CG_TUPLE && e->u.index < t.n) return t.items[e->u.index];
        cg_fail(g, e, "a projection of a value that is not a tuple");
        return cg_scalar(e->type, "0");
    }
    case ST_NODE_UNOP: {
        cg_value a = cg_thread_value(g, e->kids[0], env);
        return cg_scalar(e->type, cg_unop(g, e->u.unop, a.type->scalar, a.c));
    }
    case ST_NODE_BINOP: {
        if (e->u.binop == ST_OP_AND || e->u.binop == ST_OP_OR) return short_circuit(g, e, env);
        cg_value a = cg_thread_value(g, e->kids[0], env);
        cg_value b = cg_thread_value(g, e->kids[1], env);
        if (cg_divides_by_zero(e->u.binop, a.type->scalar, e->kids[1], &b)) {
            b = cg_materialize(g, &b);
            cg_checked_divisor(g, b.c, e);
        }
        cg_value r = cg_scalar(e->type, cg_binop(g, e->u.binop, a.type->scalar, a.c, b.c));
        /* i < n that i's range decides (a padded array's test) */
        const char *known = e->u.binop == ST_OP_LT ? cg_range_below(g, &a, e->kids[1], r.c) : NULL;
        if (known) return cg_scalar(e->type, known);
        /* max(a, c) where a ≥ c already (in a branch where a test says so) */
        int64_t c;
        if (e->u.binop == ST_OP_MAX && a.kind == CG_SCALAR && a.hi && cg_range_constant(&b, &c) && a.lo >= c) return a;
        const char *same = e->u.binop == ST_OP_DIV ? group_quotient(g, &a, &b, r.c) : NULL;
        if (same) r.c = same;
        cg_range_binop(g, &r, e->u.binop, &a, &b);
        return r;
    }
    case ST_NODE_CONV: {
        cg_value a = cg_thread_value(g, e->kids[0], env);
        cg_value r = cg_scalar(e->type, cg_conv(g, e->u.conv, a.type->scalar, a.c));
        cg_range_conv(&r, e->u.conv, &a);
        return r;
    }
    case ST_NODE_IF:
        if (cg_is_plain(e->type)) return if_value(g, e, env);
        break;
    case ST_NODE_LET: return let_value(g, e, env, false, NULL);
    case ST_NODE_PRIM: return prim_value(g, e, env);
    default:
        cg_fail(g, e, "a function where a value is needed");
        return cg_scalar(e->type, "0");
    }
    /* an if whose value holds arrays: computed into private memory */
    const cg_place *p = cg_temp(g, e->type, e, CG_PRIVATE, "tmp");
    if (!p) return cg_scalar(e->type, "0");
    cg_thread_into(g, e, env, p);
    return cg_value_of_place(g, e->type, p);
}

/* ---- into a place ---- */

bool cg_into_view(cg *g, const st_node *e, const cg_binding *env, const cg_place *p, cg_into_fn into) {
    /* a view as a whole is read where it is copied; its parts need nothing */
    if (e->kind != ST_NODE_TUPLE && (e->type->kind == ST_TYPE_SCALAR || cg_is_view(e))) return false;
    if (e->kind == ST_NODE_TUPLE && p->tuple && p->n == e->nkids) {
        for (uint32_t i = 0; i < e->nkids; i++) into(g, e->kids[i], env, &p->items[i]);
        return true;
    }
    if (e->kind != ST_NODE_PRIM || !thread_prims[e->u.prim].view_into) return false;
    return thread_prims[e->u.prim].view_into(g, e, env, p, into);
}

static void thread_into(cg *g, const st_node *e, const cg_binding *env, const cg_place *p);

void cg_thread_into(cg *g, const st_node *e, const cg_binding *env, const cg_place *p) {
    const st_node *outer = cg_generating(g, e);
    thread_into(g, e, env, p);
    g->at = outer;
}

static void thread_into(cg *g, const st_node *e, const cg_binding *env, const cg_place *p) {
    if (g->failed || !p) return;
    if (e->kind == ST_NODE_LET) {
        let_value(g, e, env, true, p);
        return;
    }
    if (e->kind == ST_NODE_IF && !cg_is_plain(e->type)) {
        cg_value c = cg_thread_value(g, e->kids[0], env);
        cg_line(g, "%s", cg_if(g, c.c));
        g->indent++;
        cg_thread_into(g, e->kids[1], cg_range_refine(g, e->kids[0], env), p);
        g->indent--;
        cg_line(g, "} else {");
        g->indent++;
        cg_thread_into(g, e->kids[2], env, p);
        g->indent--;
        cg_line(g, "}");
        return;
    }
    if (cg_into_view(g, e, env, p, cg_thread_into)) return;
    if (e->kind == ST_NODE_PRIM && thread_prims[e->u.prim].into) {
        thread_prims[e->u.prim].into(g, e, env, p);
        return;
    }
    const cg_algorithm *a = e->kind == ST_NODE_PRIM ? cg_algorithm_of(e->u.prim) : NULL;
    if (a) {
        cg_fail(g, e, "%s makes kernels of its own, so it runs at the top of a program, not inside a map or a "
                      "work-group; apply %s to a top-level %s", st_prim_get(e->u.prim)->name, a->rule, a->rewrites);
        return;
    }
    if (e->kind == ST_NODE_PRIM && !thread_prims[e->u.prim].value && !parallel_map(e)) {
        /* its value would be computed into a place, which is this */
        cg_fail(g, e, "%s is left inside a work-item, where codegen has no code for it; a rule makes it "
                      "something that runs there (`strata strategies` lists them)", st_prim_get(e->u.prim)->name);
        return;
    }
    cg_value v = cg_thread_value(g, e, env);
    cg_store(g, p, &v);
}
