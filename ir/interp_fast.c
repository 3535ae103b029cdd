/* ir/interp_fast.c — the runners of the reference interpreter's fast path
 * (interp_fast.h): map, fold and scatter over arrays whose elements are
 * scalars or tuples of scalars (their leaves flat arrays), running a
 * function interp_compile.c compiled (interp_code.h) and reading and
 * writing the leaves' data directly. Floats are combined in the tree
 * interp.c uses (TREE_LEAF elements folded left to right, halves first;
 * a scan's pairs), step for step. */
#include "interp_code.h"

#include "scalar_ops.h"

#include <stdlib.h>
#include <string.h>

/* ---- running compiled code ---- */

/* a flat array of scalars: an array leaf of rank 1 */
typedef struct leaf {
    char *data;
    size_t size;
    st_scalar_kind kind;
    int64_t len;
} leaf;

/* The leaves of v (arrays of rank 1, or tuples of such), at most max;
 * false when one is not. */
static bool leaves_of(const st_value *v, leaf *out, uint32_t max, uint32_t *n) {
    if (v->kind == ST_VALUE_TUPLE) {
        for (uint32_t i = 0; i < v->n; i++)
            if (!leaves_of(&v->u.items[i], out, max, n)) return false;
        return true;
    }
    if (v->kind != ST_VALUE_ARRAY || v->n != 1 || *n >= max) return false;
    out[(*n)++] = (leaf){v->u.a.data, st_scalar_size(v->scalar), v->scalar, v->u.a.dims[0]};
    return true;
}

/* The scalars of v (a scalar, or tuples of them), at most max */
static bool scalars_of(const st_value *v, st_scalar *s, st_scalar_kind *k, uint32_t max, uint32_t *n) {
    if (v->kind == ST_VALUE_TUPLE) {
        for (uint32_t i = 0; i < v->n; i++)
            if (!scalars_of(&v->u.items[i], s, k, max, n)) return false;
        return true;
    }
    if (v->kind != ST_VALUE_SCALAR || *n >= max) return false;
    k[*n] = v->scalar;
    s[(*n)++] = v->u.s;
    return true;
}

static void scalars_into(st_value *v, const st_scalar *s, uint32_t *at) {
    if (v->kind == ST_VALUE_TUPLE) {
        for (uint32_t i = 0; i < v->n; i++) scalars_into((st_value *)&v->u.items[i], s, at);
        return;
    }
    v->u.s = s[(*at)++];
}

static bool kinds_match(const leaf *l, uint32_t n, const st_scalar_kind *k) {
    for (uint32_t i = 0; i < n; i++)
        if (l[i].kind != k[i]) return false;
    return true;
}

static inline void load_elem(const leaf *l, uint32_t n, int64_t i, st_scalar *s) {
    for (uint32_t j = 0; j < n; j++) s[j] = st_scalar_load(l[j].kind, l[j].data + (size_t)i * l[j].size);
}

static inline void store_elem(const leaf *l, uint32_t n, int64_t i, const st_scalar *s) {
    for (uint32_t j = 0; j < n; j++) st_scalar_store(l[j].kind, l[j].data + (size_t)i * l[j].size, s[j]);
}

/* One run of a function: its slots, with the literals and what it
 * captures filled in, and the arrays it reads. */
typedef struct frame {
    const st_fast_fn *f;
    st_scalar *s;
    leaf *arrays;
} frame;

static void frame_close(frame *fr) {
    free(fr->s);
    free(fr->arrays);
    fr->s = NULL;
    fr->arrays = NULL;
}

static st_fast_status frame_open(frame *fr, const st_fast_fn *f, const st_fast_scope *sc, st_fast_fault *fault) {
    *fr = (frame){.f = f};
    fr->s = calloc((size_t)f->nslots + 1, sizeof *fr->s);
    fr->arrays = calloc((size_t)f->nleaves + 1, sizeof *fr->arrays);
    if (!fr->s || !fr->arrays) {
        frame_close(fr);
        return fault->kind = ST_FAST_MEMORY, ST_FAST_FAULT;
    }
    for (uint32_t i = 0; i < f->nconsts; i++) fr->s[f->consts[i].slot] = f->consts[i].v;
    for (uint32_t i = 0; i < f->ncaps; i++) {
        const capture *c = &f->caps[i];
        st_value v;
        st_scalar_kind kinds[MAX_WIDTH];
        uint32_t n = 0;
        bool ok = sc->lookup(sc->ctx, c->var, &v);
        if (ok && c->array) ok = leaves_of(&v, fr->arrays + c->leaf, c->width, &n) && n == c->width;
        else if (ok) ok = scalars_of(&v, fr->s + c->slot, kinds, c->width, &n) && n == c->width;
        if (!ok) { /* the generic path says what is wrong */
            frame_close(fr);
            return ST_FAST_DECLINED;
        }
    }
    return ST_FAST_DONE;
}

/* The ordinary operations, each an instruction of its own: the compiler
 * makes each case the one operation (st_scalar_binop_inline with constants).
 * Not a float's + or *: a compiler may swap their operands, which changes
 * which NaN comes out of two (x86 keeps the first one's sign and payload),
 * so they go through st_scalar_binop, the generic path's very code. */
#define HOT_INT(X, k) X(ST_OP_ADD, k) X(ST_OP_SUB, k) X(ST_OP_MUL, k) X(ST_OP_EQ, k) X(ST_OP_NE, k) X(ST_OP_LT, k) \
    X(ST_OP_LE, k) X(ST_OP_GT, k) X(ST_OP_GE, k) X(ST_OP_BAND, k) X(ST_OP_BOR, k) X(ST_OP_BXOR, k) X(ST_OP_SHL, k) \
    X(ST_OP_SHR, k) X(ST_OP_MIN, k) X(ST_OP_MAX, k)
#define HOT_FLOAT(X, k) X(ST_OP_SUB, k) X(ST_OP_DIV, k) X(ST_OP_EQ, k) X(ST_OP_NE, k) \
    X(ST_OP_LT, k) X(ST_OP_LE, k) X(ST_OP_GT, k) X(ST_OP_GE, k)
#define HOT_CASE(op, k)                                                       \
    case BIN_OP(op, k):                                                       \
        s[in->d] = st_scalar_binop_inline(op, k, s[in->a], s[in->b], &ok);  \
        break;

static bool get(const instr *in, st_scalar *s, const leaf *arrays, st_fast_fault *fault) {
    const leaf *l = arrays + in->b;
    int64_t i;
    if (!st_scalar_as_i64(in->from, s[in->a], &i) || i < 0 || i >= l->len) {
        *fault = (st_fast_fault){.kind = ST_FAST_INDEX, .node = in->node, .index_kind = in->from, .index = s[in->a],
                                 .length = l->len};
        return false;
    }
    load_elem(l, in->width, i, s + in->d);
    return true;
}

/* f's code on the slots s (its parameters in place); false on a fault */
static bool run(const st_fast_fn *f, st_scalar *s, const leaf *arrays, st_fast_fault *fault) {
    const instr *code = f->code;
    bool ok = true;
    for (uint32_t pc = 0;;) {
        const instr *in = &code[pc++];
        switch (in->op) {
        case OP_END: return true;
        case OP_MOV: s[in->d] = s[in->a]; break;
        case OP_JMP: pc = in->d; break;
        case OP_JMPF: if (!s[in->a].b) pc = in->d; break;
        case OP_JMPT: if (s[in->a].b) pc = in->d; break;
        case OP_UN: s[in->d] = st_scalar_unop((st_unop)in->sub, (st_scalar_kind)in->kind, s[in->a]); break;
        case OP_CONV:
            s[in->d] = st_scalar_convert((st_scalar_kind)in->kind, (st_scalar_kind)in->from, s[in->a]);
            break;
        case OP_GET:
            if (!get(in, s, arrays, fault)) return false;
            break;
        HOT_INT(HOT_CASE, ST_I32)
        HOT_INT(HOT_CASE, ST_U32)
        HOT_INT(HOT_CASE, ST_I64)
        HOT_INT(HOT_CASE, ST_U64)
        HOT_FLOAT(HOT_CASE, ST_F32)
        HOT_FLOAT(HOT_CASE, ST_F64)
        default: {
            unsigned c = in->op - OP_BIN;
            s[in->d] = st_scalar_binop((st_binop)(c / KINDS), (st_scalar_kind)(c % KINDS), s[in->a], s[in->b], &ok);
            if (!ok) {
                *fault = (st_fast_fault){.kind = ST_FAST_DIV_ZERO, .node = in->node};
                return false;
            }
        }
        }
    }
}

/* out = f(in): in the parameters' scalars, out the result's (either may be
 * the same storage as the other) */
static inline bool call(frame *fr, const st_scalar *in, st_scalar *out, st_fast_fault *fault) {
    const st_fast_fn *f = fr->f;
    memcpy(fr->s, in, f->nin * sizeof *in);
    if (!run(f, fr->s, fr->arrays, fault)) return false;
    for (uint32_t j = 0; j < f->nout; j++) out[j] = fr->s[f->outs[j]];
    return true;
}

/* out = f(x, y), each of w scalars (f a combining operator: 2w in, w out) */
static inline bool call2(frame *fr, const st_scalar *x, const st_scalar *y, st_scalar *out, st_fast_fault *fault) {
    const st_fast_fn *f = fr->f;
    if (f->direct) {
        unsigned c = f->direct->op - OP_BIN;
        bool ok = true;
        out[0] = st_scalar_binop((st_binop)(c / KINDS), (st_scalar_kind)(c % KINDS), x[0], y[0], &ok);
        if (!ok) *fault = (st_fast_fault){.kind = ST_FAST_DIV_ZERO, .node = f->direct->node};
        return ok;
    }
    uint32_t w = f->nout;
    st_scalar *s = fr->s;
    for (uint32_t j = 0; j < w; j++) s[j] = x[j];
    for (uint32_t j = 0; j < w; j++) s[w + j] = y[j];
    if (!run(f, s, fr->arrays, fault)) return false;
    for (uint32_t j = 0; j < w; j++) out[j] = s[f->outs[j]];
    return true;
}

/* ---- replicate ---- */

st_fast_status st_fast_fill(st_value *out, const st_value *v) {
    leaf res[MAX_LEAVES];
    st_scalar x[MAX_WIDTH];
    st_scalar_kind kinds[MAX_WIDTH];
    uint32_t nres = 0, nx = 0;
    if (!leaves_of(out, res, MAX_LEAVES, &nres) || !scalars_of(v, x, kinds, MAX_WIDTH, &nx) || nx != nres ||
        !kinds_match(res, nres, kinds))
        return ST_FAST_DECLINED;
    int64_t len = st_value_length(out);
    for (int64_t i = 0; i < len; i++) store_elem(res, nres, i, x);
    return ST_FAST_DONE;
}

/* ---- map ---- */

st_fast_status st_fast_map(const st_fast_fn *f, const st_fast_scope *sc, const st_value *xs, st_value *out,
                           st_fast_fault *fault) {
    leaf in[MAX_LEAVES], res[MAX_LEAVES];
    uint32_t nin = 0, nres = 0;
    /* one parameter takes the element; k parameters its k components */
    if (!leaves_of(xs, in, MAX_LEAVES, &nin) || !leaves_of(out, res, MAX_LEAVES, &nres)) return ST_FAST_DECLINED;
    if (f->nparams != 1 && (xs->kind != ST_VALUE_TUPLE || xs->n != f->nparams)) return ST_FAST_DECLINED;
    if (nin != f->nin || nres != f->nout || !kinds_match(in, nin, f->in_kinds) || !kinds_match(res, nres, f->out_kinds))
        return ST_FAST_DECLINED;
    frame fr;
    st_fast_status st = frame_open(&fr, f, sc, fault);
    if (st != ST_FAST_DONE) return st;
    int64_t len = st_value_length(xs);
    st_scalar *s = fr.s;
    for (int64_t i = 0; i < len; i++) {
        load_elem(in, nin, i, s);
        if (!run(f, s, fr.arrays, fault)) {
            st = ST_FAST_FAULT;
            break;
        }
        for (uint32_t j = 0; j < nres; j++)
            st_scalar_store(res[j].kind, res[j].data + (size_t)i * res[j].size, s[f->outs[j]]);
    }
    frame_close(&fr);
    return st;
}

/* ---- floats in a tree, as interp.c's tree_reduce and tree_scan ---- */

/* Element i of what a tree combines: xs[order[i]], or xs[i] without an order. */
static inline void tree_elem(const leaf *xs, uint32_t w, const int64_t *order, int64_t i, st_scalar *out) {
    load_elem(xs, w, order ? order[i] : i, out);
}

/* acc = elements [lo, hi) of xs (lo < hi) combined, halves first */
static bool tree_reduce(frame *fr, const leaf *xs, const int64_t *order, int64_t lo, int64_t hi, st_scalar *acc,
                        st_fast_fault *fault) {
    uint32_t w = fr->f->nout;
    st_scalar x[MAX_WIDTH], y[MAX_WIDTH];
    if (hi - lo <= TREE_LEAF) {
        tree_elem(xs, w, order, lo, acc);
        for (int64_t i = lo + 1; i < hi; i++) {
            tree_elem(xs, w, order, i, y);
            if (!call2(fr, acc, y, acc, fault)) return false;
        }
        return true;
    }
    int64_t mid = lo + (hi - lo) / 2;
    return tree_reduce(fr, xs, order, lo, mid, x, fault) && tree_reduce(fr, xs, order, mid, hi, y, fault) &&
           call2(fr, x, y, acc, fault);
}

/* the inclusive scan of v's n elements (w scalars each), in place, in the tree of interp.c's tree_scan */
static bool tree_scan(frame *fr, st_scalar *v, int64_t n, st_fast_fault *fault) {
    uint32_t w = fr->f->nout;
#define ELEM(p, i) ((p) + (size_t)(i) * w)
    if (n <= TREE_LEAF) {
        for (int64_t i = 1; i < n; i++)
            if (!call2(fr, ELEM(v, i - 1), ELEM(v, i), ELEM(v, i), fault)) return false;
        return true;
    }
    int64_t half = n / 2;
    st_scalar *pairs = malloc((size_t)half * w * sizeof *pairs);
    if (!pairs) return (fault->kind = ST_FAST_MEMORY), false;
    bool ok = true;
    for (int64_t j = 0; ok && j < half; j++) ok = call2(fr, ELEM(v, 2 * j), ELEM(v, 2 * j + 1), ELEM(pairs, j), fault);
    ok = ok && tree_scan(fr, pairs, half, fault);
    for (int64_t j = 0; ok && j < half; j++) {
        if (j > 0) ok = call2(fr, ELEM(pairs, j - 1), ELEM(v, 2 * j), ELEM(v, 2 * j), fault);
        for (uint32_t k = 0; k < w; k++) ELEM(v, 2 * j + 1)[k] = ELEM(pairs, j)[k];
    }
    if (ok && n % 2) ok = call2(fr, ELEM(pairs, half - 1), ELEM(v, n - 1), ELEM(v, n - 1), fault);
#undef ELEM
    free(pairs);
    return ok;
}

/* reduce, scan or exscan of floats, as interp.c's tree_fold */
static bool tree_fold(frame *fr, const st_fast_fold *fo, const st_scalar *z, const leaf *xs, const leaf *res,
                      st_value *out, st_fast_fault *fault) {
    uint32_t w = fr->f->nout;
    int64_t len = st_value_length(fo->xs);
    st_scalar args[2 * MAX_WIDTH];
    if (!fo->keep) {
        memcpy(args, z, w * sizeof *args);
        if (len) {
            if (!tree_reduce(fr, xs, NULL, 0, len, args + w, fault) || !call(fr, args, args, fault)) return false;
        }
        uint32_t at = 0;
        scalars_into(out, args, &at);
        return true;
    }
    if (len == 0) return true;
    st_scalar *prefixes = malloc((size_t)len * w * sizeof *prefixes);
    if (!prefixes) return (fault->kind = ST_FAST_MEMORY), false;
    for (int64_t i = 0; i < len; i++) load_elem(xs, w, i, prefixes + (size_t)i * w);
    memcpy(args, z, w * sizeof *args);
    memcpy(args + w, prefixes, w * sizeof *args);
    bool ok = call(fr, args, prefixes, fault) && tree_scan(fr, prefixes, len, fault);
    if (ok && fo->exclusive) { /* element i is the prefix before it */
        store_elem(res, w, 0, z);
        for (int64_t i = 1; i < len; i++) store_elem(res, w, i, prefixes + (size_t)(i - 1) * w);
    } else if (ok) {
        for (int64_t i = 0; i < len; i++) store_elem(res, w, i, prefixes + (size_t)i * w);
    }
    free(prefixes);
    return ok;
}

/* ---- fold ---- */

/* Does f take (acc, x) of these kinds, and give back an acc (give: the
 * kinds of what it gives, NULL for any)? */
static bool takes(const st_fast_fn *f, const st_scalar_kind *acc, uint32_t wa, const leaf *xs, uint32_t wx,
                  const st_scalar_kind *give, uint32_t wg) {
    if (f->nparams != 2 || f->nin != wa + wx || memcmp(f->in_kinds, acc, wa * sizeof *acc) != 0 ||
        !kinds_match(xs, wx, f->in_kinds + wa))
        return false;
    return !give || (f->nout == wg && memcmp(f->out_kinds, give, wg * sizeof *give) == 0);
}

st_fast_status st_fast_fold_run(const st_fast_fold *fo, const st_fast_scope *sc, st_value *out,
                                st_fast_fault *fault) {
    leaf xs[MAX_LEAVES], res[MAX_LEAVES];
    st_scalar acc[MAX_WIDTH], next[MAX_WIDTH];
    st_scalar_kind kinds[MAX_WIDTH];
    uint32_t wx = 0, wa = 0, nres = 0;
    const st_fast_fn *step = fo->step, *post = fo->post;
    if (!leaves_of(fo->xs, xs, MAX_LEAVES, &wx) || !scalars_of(fo->z, acc, kinds, MAX_WIDTH, &wa)) return ST_FAST_DECLINED;
    if (!takes(step, kinds, wa, xs, wx, kinds, wa) || (post && !takes(post, kinds, wa, xs, wx, NULL, 0)))
        return ST_FAST_DECLINED;
    if (fo->keep) {
        const st_fast_fn *last = post ? post : step;
        if (!leaves_of(out, res, MAX_LEAVES, &nres) || nres != (fo->exclusive ? wa : last->nout) ||
            !kinds_match(res, nres, fo->exclusive ? kinds : last->out_kinds))
            return ST_FAST_DECLINED;
    } else {
        st_scalar s[MAX_WIDTH];
        st_scalar_kind k[MAX_WIDTH];
        if (!scalars_of(out, s, k, MAX_WIDTH, &nres) || nres != wa) return ST_FAST_DECLINED;
    }
    if (fo->tree && (post || wx != wa)) return ST_FAST_DECLINED;
    frame fs, fp = {0};
    st_fast_status st = frame_open(&fs, step, sc, fault);
    if (st != ST_FAST_DONE) return st;
    if (post && (st = frame_open(&fp, post, sc, fault)) != ST_FAST_DONE) {
        frame_close(&fs);
        return st;
    }
    if (fo->tree) {
        st = tree_fold(&fs, fo, acc, xs, res, out, fault) ? ST_FAST_DONE : ST_FAST_FAULT;
        frame_close(&fs);
        frame_close(&fp);
        return st;
    }
    int64_t len = st_value_length(fo->xs);
    st_scalar *s = fs.s, *sp = fp.s;
    memcpy(s, acc, wa * sizeof *s);
    for (int64_t i = 0; i < len; i++) {
        if (fo->exclusive) store_elem(res, wa, i, s);
        load_elem(xs, wx, i, s + wa);
        if (!run(step, s, fs.arrays, fault)) {
            st = ST_FAST_FAULT;
            break;
        }
        for (uint32_t j = 0; j < wa; j++) next[j] = s[step->outs[j]];
        if (post) {
            memcpy(sp, next, wa * sizeof *sp);
            memcpy(sp + wa, s + wa, wx * sizeof *sp);
            if (!run(post, sp, fp.arrays, fault)) {
                st = ST_FAST_FAULT;
                break;
            }
            if (fo->keep && !fo->exclusive)
                for (uint32_t j = 0; j < nres; j++)
                    st_scalar_store(res[j].kind, res[j].data + (size_t)i * res[j].size, sp[post->outs[j]]);
        } else if (fo->keep && !fo->exclusive) {
            store_elem(res, wa, i, next);
        }
        memcpy(s, next, wa * sizeof *s);
    }
    if (st == ST_FAST_DONE && !fo->keep) {
        uint32_t at = 0;
        scalars_into(out, s, &at);
    }
    frame_close(&fs);
    frame_close(&fp);
    return st;
}

/* ---- scatter and reduce_by_index ---- */

/* as interp.c's flat_index: element i's place, false when out of bounds */
static inline bool place_of(const leaf *is, bool two, const int64_t *dims, int64_t i, int64_t *out) {
    st_scalar r = st_scalar_load(is[0].kind, is[0].data + (size_t)i * is[0].size);
    if (!two) return st_scalar_as_i64(is[0].kind, r, out) && *out >= 0 && *out < dims[0];
    st_scalar c = st_scalar_load(is[1].kind, is[1].data + (size_t)i * is[1].size);
    int64_t ri, ci;
    if (!st_scalar_as_i64(is[0].kind, r, &ri) || !st_scalar_as_i64(is[1].kind, c, &ci)) return false;
    if (ri < 0 || ri >= dims[0] || ci < 0 || ci >= dims[1]) return false;
    *out = ri * dims[1] + ci;
    return true;
}

/* as interp.c's tree_histogram */
static bool tree_histogram(frame *fr, const st_fast_scatter *h, const leaf *flat, const leaf *is, const leaf *vs,
                           st_fast_fault *fault) {
    uint32_t w = fr->f->nout;
    int64_t len = st_value_length(h->is), buckets = flat[0].len;
    int64_t *bucket = malloc((size_t)(len ? len : 1) * sizeof *bucket);
    int64_t *start = calloc((size_t)buckets + 1, sizeof *start);
    int64_t *order = malloc((size_t)(len ? len : 1) * sizeof *order);
    bool ok = bucket && start && order;
    if (!ok) fault->kind = ST_FAST_MEMORY;
    for (int64_t i = 0; ok && i < len; i++) {
        if (!place_of(is, h->two, h->dims, i, &bucket[i])) bucket[i] = -1;
        if (bucket[i] >= 0) start[bucket[i] + 1]++;
    }
    for (int64_t b = 0; ok && b < buckets; b++) start[b + 1] += start[b];
    for (int64_t i = 0, *next = start; ok && i < len; i++)
        if (bucket[i] >= 0) order[next[bucket[i]]++] = i;
    st_scalar args[2 * MAX_WIDTH];
    for (int64_t b = 0; ok && b < buckets; b++) {
        int64_t lo = b ? start[b - 1] : 0, hi = start[b];
        if (lo == hi) continue;
        load_elem(flat, w, b, args);
        ok = tree_reduce(fr, vs, order, lo, hi, args + w, fault) && call(fr, args, args, fault);
        if (ok) store_elem(flat, w, b, args);
    }
    free(bucket);
    free(start);
    free(order);
    return ok;
}

st_fast_status st_fast_scatter_run(const st_fast_scatter *h, const st_fast_scope *sc, st_fast_fault *fault) {
    leaf flat[MAX_LEAVES], is[2], vs[MAX_LEAVES];
    uint32_t nflat = 0, nis = 0, nvs = 0;
    if (!leaves_of(h->flat, flat, MAX_LEAVES, &nflat) || !leaves_of(h->is, is, 2, &nis) ||
        !leaves_of(h->vs, vs, MAX_LEAVES, &nvs))
        return ST_FAST_DECLINED;
    if (nis != (h->two ? 2u : 1u) || nvs != nflat) return ST_FAST_DECLINED;
    for (uint32_t j = 0; j < nis; j++)
        if (!st_scalar_is_int(is[j].kind)) return ST_FAST_DECLINED;
    for (uint32_t j = 0; j < nflat; j++)
        if (flat[j].kind != vs[j].kind) return ST_FAST_DECLINED;
    st_scalar_kind kinds[MAX_WIDTH];
    for (uint32_t j = 0; j < nflat; j++) kinds[j] = flat[j].kind;
    if (h->op && !takes(h->op, kinds, nflat, vs, nvs, kinds, nflat)) return ST_FAST_DECLINED;
    if (h->tree && !h->op) return ST_FAST_DECLINED;
    frame fr = {0};
    st_fast_status st = ST_FAST_DONE;
    if (h->op && (st = frame_open(&fr, h->op, sc, fault)) != ST_FAST_DONE) return st;
    if (h->tree) {
        st = tree_histogram(&fr, h, flat, is, vs, fault) ? ST_FAST_DONE : ST_FAST_FAULT;
        frame_close(&fr);
        return st;
    }
    int64_t len = st_value_length(h->is), places = h->dims[0] * (h->two ? h->dims[1] : 1);
    uint8_t *written = NULL;
    if (h->distinct && !(written = calloc((size_t)(places / 8 + 1), 1))) {
        frame_close(&fr);
        return fault->kind = ST_FAST_MEMORY, ST_FAST_FAULT;
    }
    st_scalar *s = fr.s;
    for (int64_t i = 0; i < len; i++) {
        int64_t idx;
        if (!place_of(is, h->two, h->dims, i, &idx)) continue; /* out of bounds: ignored */
        if (written && (written[idx / 8] >> (idx % 8) & 1)) {
            *fault = (st_fast_fault){.kind = ST_FAST_DISTINCT, .elem = i, .place = idx};
            st = ST_FAST_FAULT;
            break;
        }
        if (written) written[idx / 8] |= (uint8_t)(1u << (idx % 8));
        if (!h->op) {
            for (uint32_t j = 0; j < nflat; j++)
                st_scalar_store(flat[j].kind, flat[j].data + (size_t)idx * flat[j].size,
                                st_scalar_load(vs[j].kind, vs[j].data + (size_t)i * vs[j].size));
            continue;
        }
        load_elem(flat, nflat, idx, s);
        load_elem(vs, nvs, i, s + nflat);
        if (!run(h->op, s, fr.arrays, fault)) {
            st = ST_FAST_FAULT;
            break;
        }
        for (uint32_t j = 0; j < nflat; j++)
            st_scalar_store(flat[j].kind, flat[j].data + (size_t)idx * flat[j].size, s[h->op->outs[j]]);
    }
    free(written);
    frame_close(&fr);
    return st;
}
