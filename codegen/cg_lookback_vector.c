/* codegen/cg_lookback_vector.c — scanLookback with LOAD = direct: the scan
 * pass in vector registers, for a plain scan and for a compaction. */
#include "cg_lookback.h"
#include "rewrite/rewrite.h"

/* ---- LOAD = direct, the scan pass in vector registers ----
 *
 * A plain scan (no scatter, no fold but a fused map's, no post-function
 * but a seed's: fold_of_a_map, post_of_a_seed) by a commutative operator
 * of one number, read from and written to contiguous memory, is
 * scanned W elements at a time in OpenCL vector types where the compiler
 * is clang (PoCL's; ST_VECTORS in the prelude): a vector is loaded, scanned
 * in log2 W steps (each combines it with itself shifted by 1, 2, 4, …
 * lanes, the identity z shifted in), the carry added, and stored by one
 * streaming store, which on a CPU writes the line without reading it
 * first. Elsewhere, and for a block at the array's end or a misaligned
 * one, the scalar loop (cg_lookback_direct.c) does it. */

static bool is_param(const st_node *n, const st_node *p) { return n->kind == ST_NODE_VAR && n->u.name == p->u.name; }

/* op(a, b) on vectors of W lanes of vector type vt, unsigned type uvt: the
 * scalar kernels' wrap-around for + and * on signed integers is unsigned
 * arithmetic of the same bits. */
static const char *vector_op(cg *g, const lookback *lb, st_binop b, const char *vt, const char *uvt, const char *x,
                             const char *y) {
    st_scalar_kind k = lb->acc->scalar;
    bool fl = st_scalar_is_float(k);
    switch (b) {
    case ST_OP_ADD: case ST_OP_MUL:
        if (fl || !st_scalar_is_signed(k)) return cg_str(g, "(%s %s %s)", x, b == ST_OP_ADD ? "+" : "*", y);
        return cg_str(g, "as_%s(as_%s(%s) %s as_%s(%s))", vt, uvt, x, b == ST_OP_ADD ? "+" : "*", uvt, y);
    case ST_OP_BAND: return cg_str(g, "(%s & %s)", x, y);
    case ST_OP_BOR: return cg_str(g, "(%s | %s)", x, y);
    case ST_OP_BXOR: return cg_str(g, "(%s ^ %s)", x, y);
    default: return cg_binop(g, b, k, x, y); /* min max fmin fmax take vectors */
    }
}

/* The C pointer to element 0 of a contiguous array value or place (NULL
 * when it is not one block of memory with unit stride). */
static const char *contiguous(const cg_mem *m) {
    int64_t stride;
    if (m->rank != 1 || m->space != CG_GLOBAL || m->kind == ST_BOOL || !st_size_is_const(m->strides[0], &stride) ||
        stride != 1)
        return NULL;
    return m->offset;
}

/* The vector loops' memory: input (the scan's array, or a partition's
 * first component) and the place p, both contiguous global arrays, as *xs
 * and C offsets of element 0, their buffers registered with the kernel; or
 * false, and the scalar loop does it. */
static bool contiguous_pair(cg *g, const lookback *lb, const st_node *input, const cg_place *p, cg_value *xs,
                            const char **in_off, const char **out_off) {
    /* a name (of memory, it is checked below): anything else, a map say,
     * is computed element by element, by the scalar loop */
    if (input->kind != ST_NODE_VAR) return false;
    *xs = cg_thread_value(g, input, lb->env);
    if (xs->kind != CG_ARRAY || xs->view->kind != CG_V_MEM) return false;
    *in_off = contiguous(&xs->view->mem);
    *out_off = contiguous(&p->mem);
    if (!*in_off || !*out_off) return false;
    if (xs->view->mem.buffer >= 0) cg_use_buffer(g, xs->view->mem.buffer, false);
    cg_use_buffer(g, p->mem.buffer, true);
    return true;
}

/* Declares lb_ahead: how far past the work-item's runs its group's next
 * block likely lies (STRATA_COMPUTE_UNITS blocks on), or 0 where that block
 * is not whole, for the vector loops' ST_PREFETCH (the prelude says why);
 * n: the array's end. */
static void block_ahead(cg *g, const lookback *lb, const char *n) {
    long long mw = (long long)(lb->m * lb->wg);
    cg_line(g, "const long lb_ahead = lb_base + (STRATA_COMPUTE_UNITS + 1L) * %lldL <= %s ? STRATA_COMPUTE_UNITS * %lldL : 0L;",
            mw, n, mw);
}

/* Is the post-function one the vector scan applies as it stores: none, the
 * identity, or a seed's, (a, x) => op(c, a) with c reading neither (what
 * rewrite/seeds.c makes of scan(op, c, xs))? *seed: c, or NULL. */
static bool post_of_a_seed(const lookback *lb, st_binop b, const st_node **seed) {
    *seed = NULL;
    const st_node *post = lb->post;
    if (!post) return true;
    if (post->kind != ST_NODE_LAMBDA || st_lambda_nparams(post) != 2) return false;
    const st_node *body = st_lambda_body(post), *a = post->kids[0], *x = post->kids[1];
    if (is_param(body, a)) return true;
    if (body->kind != ST_NODE_BINOP || body->u.binop != b) return false;
    const st_node *c = is_param(body->kids[1], a) ? body->kids[0] : is_param(body->kids[0], a) ? body->kids[1] : NULL;
    if (!c || st_occurs(c, a) || st_occurs(c, x)) return false;
    *seed = c;
    return true;
}

/* Is there no fold but the operator itself (what rewrite/seeds.c gives a
 * seeded scan that had none)? */
static bool fold_is_op(const lookback *lb, st_binop b) {
    st_binop fb;
    return !lb->fold || (st_fn_binop(lb->fold, &fb) && fb == b);
}

/* Is the scan's fold a map's, fold(a, y) = op(a, f(y)) with f(y) not
 * reading a, of elements as wide as the accumulator (a fused map: a scan of
 * map(f, xs))? Then lane q of the vector scan is f of lane q of the loaded
 * vector. Without a fold (fold_is_op), true when the elements are the
 * accumulators. */
static bool fold_of_a_map(const lookback *lb, st_binop b) {
    if (fold_is_op(lb, b)) return lb->elem == lb->acc;
    const st_node *fold = lb->fold, *body = st_lambda_body(fold);
    if (fold->kind != ST_NODE_LAMBDA || st_lambda_nparams(fold) != 2 || body->kind != ST_NODE_BINOP ||
        body->u.binop != b || !is_param(body->kids[0], fold->kids[0]) || st_occurs(body->kids[1], fold->kids[0]))
        return false;
    const st_type *e = lb->elem;
    return e->kind == ST_TYPE_SCALAR && e->scalar != ST_BOOL && st_scalar_size(e->scalar) == st_scalar_size(lb->acc->scalar);
}

/* Emits the vector scan of the work-item's runs, setting lb_vec, when the
 * scan is one it takes; the scalar loop runs where lb_vec is 0. n: the
 * array's end. */
void cg_lb_vector_scan_store(cg *g, const lookback *lb, const char *n, const cg_place *p, const cg_scatter *scatter) {
    cg_line(g, "int lb_vec = 0;");
    st_binop b;
    int64_t k = chains_of(lb), w = lanes_of(lb), run = lb->m / k;
    const st_node *seed;
    if (scatter || !cg_lb_commutative_op(lb, &b) || !fold_of_a_map(lb, b) || !post_of_a_seed(lb, b, &seed) || run % w ||
        p->tuple)
        return;
    /* 8- and 16-bit numbers: OpenCL has no vector of i8 by strata's name
     * (schar), and the scalar loop is what casts results back */
    if (st_scalar_size(lb->acc->scalar) < 4) return;
    cg_value xs;
    const char *in_off, *out_off;
    if (!contiguous_pair(g, lb, lb->xs, p, &xs, &in_off, &out_off)) return;
    st_scalar_kind sk = lb->acc->scalar;
    const char *t = lb->acc_c;
    const char *vt = cg_str(g, "%s%lld", t, (long long)w);
    const char *uvt = cg_str(g, "%s%lld", sk == ST_I32 ? "uint" : sk == ST_I64 ? "ulong" : t, (long long)w);
    cg_value z = cg_thread_value(g, lb->z, lb->env);
    const char *et = cg_ctype(g, lb->elem);
    cg_line(g, "#if ST_VECTORS");
    cg_line(g, "__global const %s *lb_src = %s + (%s) + lb_base + lb_l * %lldL;", et, xs.view->mem.base, in_off,
            (long long)lb->m);
    cg_line(g, "__global %s *lb_dst = %s + (%s) + lb_base + lb_l * %lldL;", t, p->mem.base, out_off, (long long)lb->m);
    cg_open(g, cg_str(g, "if (lb_full && (ulong)lb_dst %% %lld == 0) {", (long long)(w * (sk == ST_I64 || sk == ST_U64 || sk == ST_F64 ? 8 : 4))));
    block_ahead(g, lb, n);
    cg_line(g, "const %s lb_zv = (%s)(%s);", vt, vt, z.c);
    const char *stored = "lb_t";
    if (seed) { /* op(c, a) as it is stored; the carry stays a */
        cg_value c = cg_thread_value(g, seed, lb->env);
        cg_line(g, "const %s lb_sv = (%s)(%s);", vt, vt, c.c);
        stored = vector_op(g, lb, b, vt, uvt, "lb_sv", "lb_t");
    }
    for (int64_t c = 0; c < k; c++) {
        cg_line(g, "%s lb_cv%lld = (%s)(lb_p%lld);", vt, (long long)c, vt, (long long)c);
        cg_open(g, cg_str(g, "for (int lb_j = %lld; lb_j < %lld; lb_j += %lld) {", (long long)(c * run),
                          (long long)((c + 1) * run), (long long)w));
        /* a vector is 64 bytes, a cache line */
        cg_line(g, "ST_PREFETCH(lb_src + lb_ahead + lb_j);");
        if (!fold_is_op(lb, b)) { /* each lane's f(y): fold(z, y), z being op's neutral element */
            cg_line(g, "const %s%lld lb_y = vload%lld(0, lb_src + lb_j);", et, (long long)w, (long long)w);
            cg_line(g, "%s lb_t;", vt);
            cg_line(g, "#pragma unroll");
            cg_open(g, cg_str(g, "for (int lb_q = 0; lb_q < %lld; lb_q++) {", (long long)w));
            cg_value args[2] = {z, cg_scalar(lb->elem, "lb_y[lb_q]")};
            cg_value f = cg_apply(g, lb->fold, 2, args, lb->env);
            cg_line(g, "lb_t[lb_q] = %s;", f.c);
            cg_close(g);
        } else {
            cg_line(g, "%s lb_t = vload%lld(0, lb_src + lb_j);", vt, (long long)w);
        }
        for (int64_t d = 1; d < w; d *= 2) {
            const char *shifted = cg_str(g, "ST_LANES_UP%lld(%s, lb_t, lb_zv, %lld)", (long long)w, vt, (long long)d);
            cg_line(g, "lb_t = %s;", vector_op(g, lb, b, vt, uvt, shifted, "lb_t"));
        }
        cg_line(g, "lb_t = %s;", vector_op(g, lb, b, vt, uvt, cg_str(g, "lb_cv%lld", (long long)c), "lb_t"));
        cg_line(g, "ST_STREAM((__global %s *)(lb_dst + lb_j), %s);", vt, stored);
        cg_line(g, "lb_cv%lld = (%s)(lb_t.s%c);", (long long)c, vt, "0123456789abcdef"[w - 1]);
        cg_close(g);
    }
    cg_line(g, "ST_STREAM_END();");
    cg_line(g, "lb_vec = 1;");
    cg_close(g);
    cg_line(g, "#endif");
}

/* ---- LOAD = direct, a compaction by compress-stores ----
 *
 * A filter's fused pass (filter-scatter, then fuse-scan-scatter) scans a
 * count, acc + (if p(y) then 1 else 0), and scatters each element x to
 * (if (if p(x) then 1 else 0) == 1 then acc - 1 else -1, x): the kept ones
 * to consecutive places from its run's prefix, the others nowhere (-1 is no
 * place). A partition's (partition-scatter) scans the same count over
 * zip(xs, iota(n)) and sends the others to k + (i - acc): consecutive places
 * after the kept ones; a radix sort's split counts the set bits and sends
 * them after the clear ones. cg_is_compaction says which passes are these,
 * whatever form the places are written in. With AVX-512 (ST_COMPRESS) 16
 * elements are tested at a time into a mask (the fold from 0 is a lane's 0
 * or 1), and each side's lanes stored by a register compress (vpcompressd)
 * and one masked store, where the scalar loop stored every element through
 * a selected address: the second pass was most of a filter's time on PoCL.
 * (The compress straight to memory is slow on AMD's Zen 4, several times
 * the register form's time.) 32-bit elements, whole blocks; elsewhere the
 * scalar loop. */

enum { MAX_MOVED = 4 };

/* The arrays a compaction moves: its data, or the arrays the data zips. */
static uint32_t moved_arrays(const cg_compaction *c, const st_node **out) {
    if (!st_is_prim(c->data, ST_PRIM_ZIP)) return out[0] = c->data, 1;
    if (c->data->nkids > MAX_MOVED) return 0;
    for (uint32_t j = 0; j < c->data->nkids; j++) out[j] = c->data->kids[j];
    return c->data->nkids;
}

/* Is the pass a compaction (cg_is_compaction) of arrays of 32-bit scalars
 * into as many global arrays? */
static bool is_compaction(cg *g, const lookback *lb, const cg_place *p, const cg_scatter *scatter, cg_compaction *out) {
    st_binop b;
    if (!scatter || scatter->pass != CG_ALL || !lb->fold || !lb->post || !cg_lb_commutative_op(lb, &b) || b != ST_OP_ADD ||
        scatter->e->type->size != lb->xs->type->size ||
        !cg_is_compaction(g->cx, lb->fold, lb->z, lb->post, lb->xs, out))
        return false;
    const st_node *moved[MAX_MOVED];
    uint32_t m = moved_arrays(out, moved);
    if (!m || p->tuple != (m > 1) || (p->tuple && p->n != m)) return false;
    for (uint32_t j = 0; j < m; j++) {
        const st_type *t = moved[j]->type->elem;
        const cg_place *to = p->tuple ? &p->items[j] : p;
        if (to->tuple || !st_type_is_scalar(t, t->scalar) || st_scalar_size(t->scalar) != 4 || t->scalar == ST_BOOL ||
            to->mem.rank != 1 || to->mem.space != CG_GLOBAL || to->mem.kind != t->scalar)
            return false;
    }
    return true;
}

/* A start of a compaction's side, as a C expression of type long. */
static const char *start_of(cg *g, const lookback *lb, const cg_linear *l) {
    const char *c = cg_str(g, "%lldL", (long long)l->c);
    for (uint32_t i = 0; i < l->n; i++)
        c = cg_str(g, "%s + %lldL * (long)(%s)", c, (long long)l->coef[i], cg_thread_value(g, l->atom[i], lb->env).c);
    return c;
}

/* The element of xs (zips of the moved arrays and iotas) in lane lb_q:
 * moved array j's is lane lb_q of its vector lb_v<j>. */
static bool lane_element(cg *g, const lookback *lb, const st_node *xs, const st_node *const *moved, uint32_t m,
                         cg_value *out) {
    for (uint32_t j = 0; j < m; j++)
        if (xs == moved[j]) return *out = cg_scalar(xs->type->elem, cg_str(g, "lb_v%u[lb_q]", j)), true;
    if (st_is_prim(xs, ST_PRIM_IOTA))
        return *out = cg_scalar(xs->type->elem, cg_str(g, "(lb_base + lb_l * %lldL + lb_j + lb_q)", (long long)lb->m)), true;
    cg_value *items = cg_alloc(g, xs->nkids * sizeof *items);
    if (!items || !st_is_prim(xs, ST_PRIM_ZIP)) return false;
    for (uint32_t i = 0; i < xs->nkids; i++)
        if (!lane_element(g, lb, xs->kids[i], moved, m, &items[i])) return false;
    *out = (cg_value){.kind = CG_TUPLE, .type = xs->type->elem, .n = xs->nkids, .items = items};
    return true;
}

/* Emits the compress-store loop of the work-item's runs, setting lb_vec,
 * when is_compaction says so: each moved array j read by vectors from
 * lb_src<j> and stored by compress-stores to lb_dst<j>, one mask for all. */
void cg_lb_compaction_store(cg *g, const lookback *lb, const char *n, const cg_place *p, const cg_scatter *scatter) {
    int64_t k = chains_of(lb), run = lb->m / k;
    cg_compaction shape;
    if (!lb->direct || run % 16 || !is_compaction(g, lb, p, scatter, &shape)) return;
    bool pairs = shape.partition;
    const st_node *moved[MAX_MOVED];
    uint32_t m = moved_arrays(&shape, moved);
    cg_value xs[MAX_MOVED];
    const char *in_off[MAX_MOVED], *out_off[MAX_MOVED];
    for (uint32_t j = 0; j < m; j++)
        if (!contiguous_pair(g, lb, moved[j], p->tuple ? &p->items[j] : p, &xs[j], &in_off[j], &out_off[j])) return;
    cg_value elem; /* in the loop below: lane lb_q's element */
    if (!lane_element(g, lb, lb->xs, moved, m, &elem)) return;
    cg_line(g, "#if ST_COMPRESS");
    cg_open(g, "if (lb_full) {");
    block_ahead(g, lb, n);
    for (uint32_t j = 0; j < m; j++) {
        const char *tc = cg_ctype(g, xs[j].type->elem);
        cg_line(g, "__global const %s *lb_src%u = %s + (%s) + lb_base + lb_l * %lldL;", tc, j, xs[j].view->mem.base,
                in_off[j], (long long)lb->m);
        cg_line(g, "__global %s *lb_dst%u = %s + (%s);", tc, j, (p->tuple ? &p->items[j] : p)->mem.base, out_off[j]);
    }
    /* where each side starts, once for all runs */
    cg_line(g, "const long lb_kept = %s;", start_of(g, lb, &shape.kept));
    if (pairs) cg_line(g, "const long lb_rest = %s;", start_of(g, lb, &shape.others));
    for (int64_t c = 0; c < k; c++) {
        const char *first = cg_str(g, "(lb_base + lb_l * %lldL + %lldL)", (long long)lb->m, (long long)(c * run));
        /* lb_p<c> counts the kept ones before run c's element: the first
         * kept place is kept + lb_p<c>; the others' rest + (first index -
         * lb_p<c>) */
        cg_line(g, "long lb_at%lld = lb_kept + (long)lb_p%lld;", (long long)c, (long long)c);
        if (pairs)
            cg_line(g, "long lb_or%lld = lb_rest + (%s - (long)lb_p%lld);", (long long)c, first, (long long)c);
        cg_open(g, cg_str(g, "for (int lb_j = %lld; lb_j < %lld; lb_j += 16) {", (long long)(c * run),
                          (long long)((c + 1) * run)));
        for (uint32_t j = 0; j < m; j++) {
            cg_line(g, "ST_PREFETCH(lb_src%u + lb_ahead + lb_j);", j);
            cg_line(g, "const %s16 lb_v%u = vload16(0, lb_src%u + lb_j);", cg_ctype(g, xs[j].type->elem), j, j);
        }
        cg_line(g, "int16 lb_f;");
        cg_line(g, "#pragma unroll");
        cg_open(g, "for (int lb_q = 0; lb_q < 16; lb_q++) {");
        cg_value args[2] = {cg_scalar(lb->acc, "0"), elem};
        cg_value one = cg_apply(g, lb->fold, 2, args, lb->env);
        cg_line(g, "lb_f[lb_q] = (int)(%s);", one.c);
        cg_close(g);
        cg_line(g, "const ushort lb_m = ST_NONZERO_MASK(lb_f);");
        cg_line(g, "const uint lb_n = popcount((uint)lb_m);");
        for (uint32_t j = 0; j < m; j++) {
            cg_line(g, "ST_COMPRESS_STORE(lb_dst%u + lb_at%lld, lb_v%u, lb_m, lb_n);", j, (long long)c, j);
            if (pairs)
                cg_line(g, "ST_COMPRESS_STORE(lb_dst%u + lb_or%lld, lb_v%u, (ushort)~lb_m, 16u - lb_n);", j, (long long)c, j);
        }
        cg_line(g, "lb_at%lld += lb_n;", (long long)c);
        if (pairs) cg_line(g, "lb_or%lld += 16 - lb_n;", (long long)c);
        cg_close(g);
    }
    cg_line(g, "lb_vec = 1;");
    cg_close(g);
    cg_line(g, "#endif");
}
