/* strategies/filter.c — filter and partition as flags, a scan and a scatter
 * of distinct places (scatterDistinct).
 *
 *   filter-scatter      filter(p, xs)
 *                    -> let flags = xs |> map(x => if p(x) then 1i64 else 0i64)
 *                       let offsets = flags |> scan(+, 0i64)
 *                       let k = flags |> reduce(+, 0i64)
 *                       let idx = zip(flags, offsets) |> map((f, o) => if f == 1i64 then o - 1i64 else -1i64)
 *                       let res = scatterDistinct(scratch(n, zero), idx, xs)
 *                       in take(k, res)
 *   partition-scatter   partition(p, xs)
 *                    -> the same flags, offsets and k, then one scatterDistinct into one buffer of n:
 *                       a kept element at o - 1, a dropped one at k + (i - o), i its index;
 *                       in (take(k, buf), drop(k, buf))
 *   concat-split        concat(take(k, b), drop(k, b)) -> b
 *   reduce-as-scan-total  let k = reduce(…) in …s… -> let k = scanTotal(s) in …s…,
 *                       s a look-back scan of the same fold run after it
 *   exscan-as-inclusive exscan(+, z, xs) -> scan(+, +, (acc, x) => acc - x, z, xs)
 *                       for integers (and ^): the compaction idiom written
 *                       by hand, flags and their exscan, made one pass
 *
 * The seed is scan-scatter-fusion.txt: the result is over-allocated (a
 * buffer of n, the worst case), so that nothing waits for the count before
 * the scatter, and the count is the flags' sum, a reduction beside the scan
 * rather than a read of the scan's last element (which would be a second
 * use of the offsets, the hindrance the post discusses). The default
 * strategy's fusions then make flags, scan, index map and scatter one
 * look-back kernel, and reduce-as-scan-total (below) the count that
 * kernel's total. A filter's buffer is scratch (nothing written first on
 * the device): take(k, ·) reads places 0..k-1 alone, and the kept elements
 * fill exactly those. A partition's is not: its count places the dropped
 * elements, so it is read before the scatter, and stays a reduction.
 *
 * k is a variable whose size is the filter's own existential (?k), so the
 * take has the filter's type exactly and nothing around it changes; the
 * interpreter binds ?k when the take runs. The scan is inclusive (a kept
 * element's place is its offset minus one): a rule's output is not made
 * of exscans, which every rewrite turns into scans at its start only. */
#include "rewrite/plugin.h"
#include "strategies.h"

#include <stdio.h>

/* The zero of a scalar or a tuple of scalars: what the buffer past the
 * kept elements holds (never read through the take). */
static const st_node *zero_of(st_build *b, const st_type *t) {
    if (t->kind == ST_TYPE_SCALAR) return st_lit(b->cx, t->scalar, (st_scalar){.bits = 0});
    const st_node *items[ST_MAX_KIDS];
    for (uint32_t i = 0; i < t->n && i < ST_MAX_KIDS; i++) items[i] = zero_of(b, t->items[i]);
    return st_b_tuple_n(b, t->n, items);
}

/* Can the rule build a buffer for xs: elements of scalars or tuples of
 * scalars, and a length the def's sizes write (replicate and iota need
 * it)? False with the reason. */
static bool fits(const char *rule, const st_node *xs, st_err *why) {
    if (!st_type_is_plain(xs->type->elem))
        return st_reject(why, "%s: the elements are arrays (rows); the scatter's buffer holds scalars and "
                       "tuples of scalars only", rule);
    return true;
}

static const st_node *innermost(const st_node *e);
static const st_node *with_innermost(st_build *b, const st_node *v, const st_node *body);

/* The input a rule reads: xs, or where xs is a chain of lets (an inner
 * filter or partition its rule rewrote) the chain's innermost body, the
 * chain in *lets to be put around the result, so that the inner one runs
 * once and its count is in scope. Not when a name the chain binds is read
 * by p (a let the user wrote, which would capture it). An inner filter is
 * let-bound the same way. */
static const st_node *unwrapped(st_build *b, const st_node *p, const st_node *xs, const st_node **lets) {
    if (st_is_prim(xs, ST_PRIM_FILTER)) {
        /* an inner filter not rewritten yet (the outer one first): bound
         * once, for the flags and the scatter both read it */
        const st_node *in = st_b_bound(b, "kept", xs);
        *lets = in ? st_b_let(b, in, xs, in) : NULL;
        return *lets ? in : xs;
    }
    if (xs->kind != ST_NODE_LET) return xs;
    for (const st_node *v = xs; v->kind == ST_NODE_LET; v = st_let_body(v))
        for (uint32_t i = 0; i < st_let_nvars(v); i++)
            if (st_occurs(p, v->kids[i])) return xs;
    *lets = xs;
    return innermost(xs);
}

static const st_node *rewrapped(st_build *b, const st_node *lets, const st_node *r) {
    return lets && r ? with_innermost(b, lets, r) : r;
}

/* The length of the buffer for xs: its length, or for one known only at
 * run time its worst case (its bound), of which the scatter fills the
 * first places alone. */
static const st_size *worst_case(st_build *b, const st_node *xs) {
    const st_size *n = xs->type->size;
    if (!st_size_has_exist(n)) return n;
    st_err e = {0};
    const st_size *upper = st_size_upper(b->cx, n, &e);
    if (!upper && !b->err->message[0]) *b->err = e;
    return upper;
}

/* How a partition numbers its input's elements, and which part of its
 * buffer (as long as the input's worst case) holds them. */
typedef struct numbering {
    const st_node *indices; /* an element's index in the source: iota over it */
    const st_node *take;    /* xs = take(m, src): m, the buffer cut as xs is; else NULL */
    const st_node *drop;    /* xs = drop(d, src): d, the buffer's places d.. hold xs; else NULL */
} numbering;

/* iota over xs's length, for a partition's places. For a length known
 * only at run time, xs is take(k, src) (a filter's rewritten result, or
 * the user's take) and this take(k, iota over src): the same k of an array
 * of the same length, so of xs's length, also as the program reads back
 * (where k is an i64 the take alone makes a length of); or drop(d, src)
 * and this drop(d, iota over src), whose elements are their indices in
 * src, so the parts are written at d.. of the buffer (a kept element at d
 * + its offset - 1, the others where they would be without the shift: k +
 * (i - offset), i counted from src's start), and drop(d, ·) cuts it as xs
 * is cut. src is as long as xs's worst case, the buffer the partition
 * scatters into. False with the reason for any other length. */
static bool numbered(st_build *b, const st_node *xs, numbering *out, st_err *why) {
    *out = (numbering){0};
    const st_size *n = xs->type->size;
    if (!st_size_has_exist(n)) {
        out->indices = ST_PRIM(b, ST_PRIM_IOTA, st_b_size(b, n));
        return out->indices != NULL;
    }
    bool cut = st_is_prim(xs, ST_PRIM_TAKE) || st_is_prim(xs, ST_PRIM_DROP);
    if (cut && xs->kids[1]->type->size == worst_case(b, xs) && !st_size_has_exist(xs->kids[1]->type->size)) {
        const st_node *iota = ST_PRIM(b, ST_PRIM_IOTA, st_b_size(b, xs->kids[1]->type->size));
        const st_node *indices = ST_PRIM(b, xs->u.prim, xs->kids[0], iota);
        if (indices && indices->type->size == n) {
            out->indices = indices;
            *(st_is_prim(xs, ST_PRIM_TAKE) ? &out->take : &out->drop) = xs->kids[0];
            return true;
        }
    }
    return st_reject(why, "partition-scatter: the input's length is known only at run time, and the input is not a "
                     "take or a drop of an array of its worst-case length (a filter's result, or take(k, xs) or "
                     "drop(k, xs) of the def's array): its elements' places need iota over that length"), false;
}

/* The parts filter and partition share: flags, their inclusive scan and
 * their sum, bound by lets around what `rest` builds from them. */
typedef struct counted {
    const st_node *flags, *offsets, *k; /* the let-bound variables */
    const st_node *flags_v, *offsets_v, *k_v; /* their values */
} counted;

static void count_kept(st_build *b, const st_node *p, const st_node *xs, const st_size *exist, counted *c) {
    const st_type *i64 = st_type_scalar(b->cx, ST_I64);
    const st_node *x = st_b_var(b, "x", xs->type->elem), *one = st_b_i64(b, 1), *zero = st_b_i64(b, 0);
    c->flags_v = ST_PRIM(b, ST_PRIM_MAP, ST_LAMBDA(b, st_b_if(b, ST_CALL(b, p, x), one, zero), x), xs);
    c->flags = st_b_bound(b, "flags", c->flags_v);
    st_err e = {0};
    const st_node *plus = st_b_check(b, st_opfn(b->cx, ST_OP_ADD, ST_I64, &e), &e);
    c->offsets_v = ST_PRIM(b, ST_PRIM_SCAN, plus, zero, c->flags);
    c->offsets = st_b_bound(b, "offsets", c->offsets_v);
    c->k_v = ST_PRIM(b, ST_PRIM_REDUCE, plus, zero, c->flags);
    /* named as the existential it stands for (a name fresh in the context
     * when the filter was made), so the program prints `let k = …` with a
     * result `[?k]t` and reads back as the same text */
    c->k = st_var(b->cx, st_size_exist_name(exist), i64, exist);
}

/* let flags = … in let offsets = … in let k = … in body */
static const st_node *around(st_build *b, const counted *c, const st_node *body) {
    return st_b_let(b, c->flags, c->flags_v, st_b_let(b, c->offsets, c->offsets_v, st_b_let(b, c->k, c->k_v, body)));
}

/* let idx = places in let buf = scatter(scratch(n, zero), idx, xs) in (what of buf); num a
 * partition's numbering of xs (NULL: a filter's) */
static const st_node *scattered(st_build *b, const st_node *places, const st_node *xs, const numbering *num,
                                const counted *c) {
    const st_node *idx = st_b_bound(b, "idx", places);
    /* a scratch buffer (nothing written first): a filter's is read only
     * through take(k, ·), whose places 0..k-1 the kept elements fill, and a
     * partition's every place is written, its scatter a permutation (of an
     * input of run-time length, of the places take(m, ·) or drop(d, ·) below keeps).
     * The places are distinct (each kept element's count of the kept ones up
     * to it, each dropped one's of the dropped ones, on two sides of k; a
     * filter's dropped ones nowhere), so no order of the writes matters:
     * scatterDistinct says so, and codegen looks for no last writer */
    const st_node *dest = ST_PRIM(b, ST_PRIM_SCRATCH, st_b_size(b, worst_case(b, xs)), zero_of(b, xs->type->elem));
    const st_node *buf_v = ST_PRIM(b, ST_PRIM_SCATTER_DISTINCT, dest, idx, xs);
    /* a partition's dropped part runs to the input's end: of a buffer of the
     * worst case, the part the input's numbering covers */
    if (num && num->take) buf_v = ST_PRIM(b, ST_PRIM_TAKE, num->take, buf_v);
    if (num && num->drop) buf_v = ST_PRIM(b, ST_PRIM_DROP, num->drop, buf_v);
    const st_node *buf = st_b_bound(b, num ? "buf" : "res", buf_v);
    const st_node *kept = ST_PRIM(b, ST_PRIM_TAKE, c->k, buf);
    const st_node *out = num ? ST_TUPLE(b, kept, ST_PRIM(b, ST_PRIM_DROP, c->k, buf)) : kept;
    return around(b, c, st_b_let(b, idx, places, st_b_let(b, buf, buf_v, out)));
}

static const st_node *filter_scatter(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    if (!st_is_prim(e, ST_PRIM_FILTER)) return st_no_match(why, "filter-scatter rewrites a filter");
    const st_node *p = e->kids[0], *xs = e->kids[1];
    if (!fits("filter-scatter", xs, why)) return NULL;
    st_build B = st_build_of(rw, why), *b = &B;
    const st_node *lets = NULL;
    xs = unwrapped(b, p, xs, &lets);
    counted c;
    count_kept(b, p, xs, e->type->size, &c);
    /* (f, o) => if f == 1 then o - 1 else -1: a dropped element's index is
     * out of bounds, which scatter ignores */
    const st_type *i64 = st_type_scalar(b->cx, ST_I64);
    const st_node *data = ST_PRIM(b, ST_PRIM_ZIP, c.flags, c.offsets);
    const st_node *f = st_b_var(b, "f", i64), *o = st_b_var(b, "o", i64), *one = st_b_i64(b, 1);
    const st_node *place = st_b_if(b, st_b_binop(b, ST_OP_EQ, f, one), st_b_binop(b, ST_OP_SUB, o, one), st_b_i64(b, -1));
    const st_node *places = ST_PRIM(b, ST_PRIM_MAP, ST_LAMBDA(b, place, f, o), data);
    return rewrapped(b, lets, scattered(b, places, xs, NULL, &c));
}

static const st_node *partition_scatter(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    if (!st_is_prim(e, ST_PRIM_PARTITION)) return st_no_match(why, "partition-scatter rewrites a partition");
    const st_node *p = e->kids[0], *xs = e->kids[1];
    if (!fits("partition-scatter", xs, why)) return NULL;
    st_build B = st_build_of(rw, why), *b = &B;
    const st_node *lets = NULL;
    xs = unwrapped(b, p, xs, &lets);
    numbering num;
    if (!numbered(b, xs, &num, why)) return NULL;
    counted c;
    count_kept(b, p, xs, e->type->items[0]->size, &c);
    /* (i, f, o) => if f == 1 then o - 1 else k + (i - o): the kept ones
     * before k in order, the dropped ones after it in order (i + 1 - o of
     * them up to element i, itself included, so it goes to k + (i + 1 - o) - 1);
     * of a drop(d, src), i counts from src's start and the kept ones go d on */
    const st_node *data = ST_PRIM(b, ST_PRIM_ZIP, num.indices, c.flags, c.offsets);
    const st_type *i64 = st_type_scalar(b->cx, ST_I64);
    const st_node *i = st_b_var(b, "i", i64), *f = st_b_var(b, "f", i64), *o = st_b_var(b, "o", i64), *one = st_b_i64(b, 1);
    const st_node *kept_at = st_b_binop(b, ST_OP_SUB, o, one);
    if (num.drop) kept_at = st_b_binop(b, ST_OP_ADD, num.drop, kept_at);
    const st_node *place = st_b_if(b, st_b_binop(b, ST_OP_EQ, f, one), kept_at,
                                   st_b_binop(b, ST_OP_ADD, c.k, st_b_binop(b, ST_OP_SUB, i, o)));
    const st_node *places = ST_PRIM(b, ST_PRIM_MAP, ST_LAMBDA(b, place, i, f, o), data);
    return rewrapped(b, lets, scattered(b, places, xs, &num, &c));
}

/* ---- concat-split ---- */

/* Are t and d take(k, b) and drop(k, b), the same k and the same b? *whole is b. */
static bool cut_of(const st_node *t, const st_node *d, const st_node **whole) {
    if (!st_is_prim(t, ST_PRIM_TAKE) || !st_is_prim(d, ST_PRIM_DROP) || t->kids[0] != d->kids[0] || t->kids[1] != d->kids[1])
        return false;
    *whole = t->kids[1];
    return true;
}

/* Is e concat(take(k, b), drop(k, b))? */
static bool rejoins(const st_node *e, const st_node **whole) {
    return st_is_prim(e, ST_PRIM_CONCAT) && cut_of(e->kids[0], e->kids[1], whole);
}

/* The innermost body of a chain of lets. */
static const st_node *innermost(const st_node *e) {
    while (e->kind == ST_NODE_LET) e = st_let_body(e);
    return e;
}

/* v's chain of lets with its innermost body replaced by body. */
static const st_node *with_innermost(st_build *b, const st_node *v, const st_node *body) {
    if (v->kind != ST_NODE_LET) return body;
    const st_node *kids[ST_MAX_KIDS];
    memcpy(kids, v->kids, v->nkids * sizeof *kids);
    kids[v->nkids - 1] = with_innermost(b, st_let_body(v), body);
    if (!kids[v->nkids - 1]) return NULL;
    st_err inner = {0};
    return st_b_check(b, st_rebuild(b->cx, v, kids, &inner), &inner);
}

/* e with the one node `from` replaced by `to` (hash-consed: every
 * occurrence of the same tree). */
static const st_node *replace_node(st_build *b, const st_node *e, const st_node *from, const st_node *to) {
    if (e == from) return to;
    if (e->nkids == 0) return e;
    const st_node *kids[ST_MAX_KIDS];
    bool changed = false;
    for (uint32_t i = 0; i < e->nkids; i++) {
        kids[i] = st_is_binder(e, i) ? e->kids[i] : replace_node(b, e->kids[i], from, to);
        if (!kids[i]) return NULL;
        changed |= kids[i] != e->kids[i];
    }
    if (!changed) return e;
    st_err inner = {0};
    return st_b_check(b, st_rebuild(b->cx, e, kids, &inner), &inner);
}

/* concat(take(k, b), drop(k, b)) is b; so is concat(z, o) in the body of
 * `let (z, o) = V` when V (through its lets) ends in (take(k, b), drop(k,
 * b)) and z and o are used there alone: what a partition-scatter followed
 * by a concat looks like. V's lets then hold the body (their names are
 * fresh, so nothing in the body is captured). */
static const st_node *concat_split(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    const st_node *whole;
    if (rejoins(e, &whole)) return whole;
    const char *shape = "concat-split rewrites concat(take(k, b), drop(k, b)), or `let (z, o) = …(take(k, b), drop(k, b)) "
                        "in …concat(z, o)…`";
    if (e->kind != ST_NODE_LET || st_let_nvars(e) != 2) return st_no_match(why, "%s", shape);
    const st_node *value = st_let_value(e), *end = innermost(value), *z = e->kids[0], *o = e->kids[1];
    if (end->kind != ST_NODE_TUPLE || end->nkids != 2 || !cut_of(end->kids[0], end->kids[1], &whole))
        return st_no_match(why, "%s", shape);
    st_build B = st_build_of(rw, why), *b = &B;
    const st_node *concat = ST_PRIM(b, ST_PRIM_CONCAT, z, o), *body = st_let_body(e);
    if (st_count_uses(body, z, NULL) != 1 || st_count_uses(body, o, NULL) != 1 || st_count_uses(body, concat, NULL) != 1)
        return st_reject(why, "concat-split: `%s` and `%s` are used elsewhere than in concat(%s, %s), so the "
                       "two parts are needed apart", z->u.name, o->u.name, z->u.name, o->u.name), NULL;
    /* every binder of V is fresh (a rule made it), else the body could be captured */
    for (const st_node *v = value; v->kind == ST_NODE_LET; v = st_let_body(v))
        for (uint32_t i = 0; i < st_let_nvars(v); i++)
            if (st_occurs(body, v->kids[i]))
                return st_reject(why, "concat-split: the body reads `%s`, a name the partition binds", v->kids[i]->u.name), NULL;
    return with_innermost(b, value, replace_node(b, body, concat, whole));
}

/* ---- reduce-as-scan-total ---- */

/* The look-back scan a top-level let value runs (itself, or the pairs a
 * scatter writes), or NULL. */
static const st_node *scan_run_by(const st_node *v) {
    while (st_is_prim(v, ST_PRIM_TO_GLOBAL)) v = v->kids[0];
    if (st_is_scatter(v) && v->nkids == 2) v = v->kids[1];
    while (st_is_prim(v, ST_PRIM_TO_GLOBAL)) v = v->kids[0];
    return st_is_prim(v, ST_PRIM_SCAN_LOOKBACK) ? v : NULL;
}

/* Does scan s fold what reduce r folds: the same step (up to bound
 * names), neutral element and input? Then r's result is s's total. */
static bool folds_alike(const st_node *r, const st_node *s) {
    st_scan_form fr, fs;
    if (!st_fold_form_of(r, &fr) || !st_fold_form_of(s, &fs)) return false;
    return fr.xs == fs.xs && st_alpha_equal(fr.z, fs.z) && st_alpha_equal(st_fold_step(&fr), st_fold_step(&fs));
}

/* `let k = reduce(…) in body` where body's chain of lets runs a look-back
 * scan folding alike, k unread until it has run: k is that scan's total
 * (its last group's inclusive prefix), so the reduction's own pass over the
 * input goes. What filter-scatter's count becomes once its scan is a
 * look-back scan. */
static const st_node *reduce_as_scan_total(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    const char *shape = "reduce-as-scan-total rewrites `let k = reduce(…) in …` followed by a look-back scan of the same "
                        "fold, neutral element and input";
    if (e->kind != ST_NODE_LET || st_let_nvars(e) != 1) return st_no_match(why, "%s", shape);
    const st_node *k = e->kids[0], *r = st_let_value(e);
    if (!st_is_prim(r, ST_PRIM_REDUCE) && !st_is_prim(r, ST_PRIM_REDUCE_SEQ)) return st_no_match(why, "%s", shape);
    if (!st_at_top_level(rw, "reduce-as-scan-total", "reduce", why)) return NULL;
    bool read = false; /* k read by a value before the scan's */
    for (const st_node *at = st_let_body(e);; at = st_let_body(at)) {
        const st_node *v = at->kind == ST_NODE_LET ? st_let_value(at) : at;
        /* a tuple's parts run in turn: the scan may be one (a compaction
         * returned with its count) */
        uint32_t nparts = v->kind == ST_NODE_TUPLE ? v->nkids : 1;
        for (uint32_t i = 0; i < nparts; i++) {
            const st_node *part = v->kind == ST_NODE_TUPLE ? v->kids[i] : v, *s = scan_run_by(part);
            if (s && folds_alike(r, s) && !st_occurs(s, k)) {
                if (read)
                    return st_fail(why, (st_loc){0}, "reduce-as-scan-total: `%s` is read before the look-back scan of "
                                   "the same fold has run", k->u.name), NULL;
                st_build B = st_build_of(rw, why), *b = &B;
                const st_node *total = ST_PRIM(b, ST_PRIM_SCAN_TOTAL, s);
                return total ? st_b_let(b, k, total, st_let_body(e)) : NULL;
            }
            read |= st_occurs(part, k);
        }
        if (at->kind != ST_NODE_LET) break;
    }
    return st_fail(why, (st_loc){0}, "reduce-as-scan-total: no look-back scan of the same fold, neutral element and input "
                   "follows `%s` (apply lookback to the scan first)", k->u.name), NULL;
}

/* ---- exscan-as-inclusive ---- */

/* Is e the literal integer v? */
static bool is_int(const st_node *e, int64_t v) {
    int64_t got;
    return st_int_literal(e, &got) && got == v;
}

/* max(i - 1, 0): how st_exclusive_at reads the element before i */
static bool is_index_before(const st_node *e, const st_node *i) {
    return e->kind == ST_NODE_BINOP && e->u.binop == ST_OP_MAX && is_int(e->kids[1], 0) &&
           e->kids[0]->kind == ST_NODE_BINOP && e->kids[0]->u.binop == ST_OP_SUB && e->kids[0]->kids[0] == i &&
           is_int(e->kids[0]->kids[1], 1);
}

/* a read of an array at index i */
static bool is_get_at(const st_node *e, const st_node *i) { return st_is_prim(e, ST_PRIM_GET) && e->kids[0] == i; }

/* The first node of e (outside its binders) that `is` says is one, given
 * i, or NULL. */
static const st_node *first_node(const st_node *e, bool (*is)(const st_node *, const st_node *), const st_node *i) {
    if (is(e, i)) return e;
    for (uint32_t k = 0; k < e->nkids; k++) {
        const st_node *found = st_is_binder(e, k) ? NULL : first_node(e->kids[k], is, i);
        if (found) return found;
    }
    return NULL;
}

/* What an exscan became by exscans-as-scans (st_exscans_as_scans)
 * reads: shifted is map(i => let before = R(max(i - 1, 0)) in if i == 0
 * then z else before, iota(n)), and the unshifted input is R(i) for each i:
 * xs itself where R reads xs's element, else that map. NULL when shifted is
 * not of that form. */
static const st_node *unshifted(st_build *b, const st_node *shifted, const st_node *z) {
    if (!st_is_prim(shifted, ST_PRIM_MAP) || !st_is_prim(shifted->kids[1], ST_PRIM_IOTA)) return NULL;
    const st_node *f = shifted->kids[0];
    if (f->kind != ST_NODE_LAMBDA || st_lambda_nparams(f) != 1) return NULL;
    const st_node *i = f->kids[0], *item = st_lambda_body(f);
    if (item->kind != ST_NODE_LET || st_let_nvars(item) != 1) return NULL;
    const st_node *pick = st_let_body(item), *before = item->kids[0];
    if (pick->kind != ST_NODE_IF || pick->kids[1] != z || pick->kids[2] != before) return NULL;
    const st_node *first = pick->kids[0];
    if (first->kind != ST_NODE_BINOP || first->u.binop != ST_OP_EQ || first->kids[0] != i || !is_int(first->kids[1], 0))
        return NULL;
    const st_node *read = st_let_value(item), *at = first_node(read, is_index_before, i);
    if (!at) return NULL;
    const st_node *element = replace_node(b, read, at, i);
    if (!element) return NULL;
    /* R reads i only as the index of one array X: a map of X (xs's map,
     * which the rewrite fused into the shifted read), or X itself */
    const st_node *get = first_node(element, is_get_at, i);
    if (get && !st_occurs(get->kids[1], i)) {
        const st_node *x = st_b_var(b, "x", st_elem_of(get->kids[1]));
        const st_node *of_x = x ? replace_node(b, element, get, x) : NULL;
        if (of_x && !st_occurs(of_x, i))
            return of_x == x ? get->kids[1] : ST_PRIM(b, ST_PRIM_MAP, ST_LAMBDA(b, of_x, x), get->kids[1]);
    }
    return ST_PRIM(b, ST_PRIM_MAP, ST_LAMBDA(b, element, i), shifted->kids[1]);
}

/* An exscan of integers under + (or ^), which the rewrite made the scan of
 * its input shifted right, as the inclusive scan less each element:
 *   scan(op, z, shifted xs) -> scan(op, op, (acc, x) => acc - x, z, xs)
 * exact for integers, whose + wraps (^ is its own inverse: acc ^ x). The
 * scan then reads its input element by element, as its other consumers do:
 * a compaction's flags (exscan_scatter.strata) fuse into every use and the
 * whole is one look-back pass that stores by compress-stores, where the
 * shifted input read each element's neighbour and kept the flags in
 * memory. */
static const st_node *exscan_as_inclusive(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    (void)args;
    const char *shape = "exscan-as-inclusive rewrites an exscan (a scan of its input shifted right, as strata reads "
                        "exscans)";
    st_scan_form p;
    if (!st_is_prim(e, ST_PRIM_SCAN) || !st_fold_form_of(e, &p) || p.fold || p.post) return st_no_match(why, "%s", shape);
    st_build B = st_build_of(rw, why), *b = &B;
    const st_node *xs = unshifted(b, p.xs, p.z);
    if (!xs) return st_no_match(why, "%s", shape);
    const st_node *op = p.op;
    bool invertible = op->kind == ST_NODE_OPFN && (op->u.binop == ST_OP_ADD || op->u.binop == ST_OP_BXOR) &&
                      st_type_is_int(p.z->type);
    if (!invertible)
        return st_reject(why, "exscan-as-inclusive: the exscan's operator is not + or ^ on integers, so the inclusive "
                         "scan's element cannot be taken back out of it exactly"), NULL;
    if (!st_at_top_level(rw, "exscan-as-inclusive", "exscan", why)) return NULL;
    const st_node *acc = st_b_var(b, "acc", p.z->type), *x = st_b_var(b, "x", st_elem_of(xs));
    const st_node *less = st_b_binop(b, op->u.binop == ST_OP_ADD ? ST_OP_SUB : ST_OP_BXOR, acc, x);
    return ST_PRIM(b, ST_PRIM_SCAN, op, op, ST_LAMBDA(b, less, acc, x), p.z, xs);
}

/* ---- all of them, for lower-opencl ---- */

/* e with every filter and partition rewritten (inner ones first) and every
 * concat of a partition's parts made its buffer, where the rules' conditions
 * hold; what they refuse is left for codegen to report. */
const st_node *st_filters_as_scatters(st_build *b, const st_node *e) {
    if (e->nkids == 0) return e;
    const st_node *kids[ST_MAX_KIDS];
    bool changed = false;
    for (uint32_t i = 0; i < e->nkids; i++) {
        kids[i] = st_is_binder(e, i) ? e->kids[i] : st_filters_as_scatters(b, e->kids[i]);
        if (!kids[i]) return NULL;
        changed |= kids[i] != e->kids[i];
    }
    if (changed) {
        st_err inner = {0};
        if (!(e = st_b_check(b, st_rebuild(b->cx, e, kids, &inner), &inner))) return NULL;
    }
    st_rule_apply rule = st_is_prim(e, ST_PRIM_FILTER) ? filter_scatter
                         : st_is_prim(e, ST_PRIM_PARTITION) ? partition_scatter
                         : st_is_prim(e, ST_PRIM_CONCAT) || e->kind == ST_NODE_LET ? concat_split : NULL;
    if (!rule) return e;
    st_err why = {0};
    const st_node *r = rule(b->rw, e, NULL, &why);
    if (r) return r;
    if (why.kind == ST_ERR_INTERNAL) return *b->err = why, NULL;
    return e;
}

/* ---- the table ---- */

static const st_rule filter_rules[] = {
    {.name = "filter-scatter",
     .summary = "filter(p, xs) as flags of p, their inclusive scan into a scatter of distinct places (scatterDistinct: "
                "kept element at its offset - 1, the others ignored) into a scratch buffer of n, and take(k, buffer) "
                "with k the flags' sum (the scan-scatter post's filter)",
     .conditions = "a filter whose elements are scalars or tuples of scalars (not rows); an input of a length known "
                   "only at run time (a filter's, a take's) gets a buffer of its worst case",
     .origin = "built-in",
     .apply = filter_scatter},
    {.name = "partition-scatter",
     .summary = "partition(p, xs) as one scan of flags and one scatter of distinct places (scatterDistinct) into one "
                "buffer of n, stable: a kept element at its offset - 1, a dropped one at k + (i - offset); then "
                "(take(k, buf), drop(k, buf)), k the flags' sum",
     .conditions = "a partition whose elements are scalars or tuples of scalars (not rows), and whose input's length "
                   "is written with the def's sizes, or is take(k, src) with src as long as the input's worst case (a "
                   "filter's result, a take of the def's array)",
     .origin = "built-in",
     .apply = partition_scatter},
    {.name = "reduce-as-scan-total",
     .summary = "let k = reduce(…) as let k = scanTotal(s), s a look-back scan run after it with the same fold, "
                "neutral element and input: its kernel writes its total (the last group's inclusive prefix), so the "
                "reduction makes no pass of its own (a filter's count)",
     .conditions = "a let of a reduce at the top level; a look-back scan (alone or a scatter's pairs) as the value of a "
                   "let of the chain after it or a part of a tuple there, with the same fold step (up to names), "
                   "neutral element and input, not reading k, and k read nowhere before it",
     .origin = "built-in",
     .apply = reduce_as_scan_total},
    {.name = "exscan-as-inclusive",
     .summary = "exscan(op, z, xs) as scan(op, op, (acc, x) => acc - x, z, xs): the inclusive scan less each element, "
                "which reads xs element by element (no neighbour), so a compaction's flags fuse into the scan",
     .conditions = "an exscan (strata reads one as the scan of its input shifted right) at the top level of a def, "
                   "whose operator is + or ^ on integers (exact: + wraps, ^ is its own inverse)",
     .origin = "built-in",
     .apply = exscan_as_inclusive},
    {.name = "concat-split",
     .summary = "concat(take(k, b), drop(k, b)) as b: a partition followed by a concat costs nothing more (so an LSD "
                "radix sort as a loop of partitions is one pass per digit)",
     .conditions = "the same k and the same b in both; or `let (z, o) = …(take(k, b), drop(k, b)) in …concat(z, o)…` "
                   "(what partition-scatter makes) with z and o used in that concat alone",
     .origin = "built-in",
     .apply = concat_split},
};

bool st_register_filter_rules(st_registry *r, st_err *err) {
    for (size_t i = 0; i < sizeof filter_rules / sizeof *filter_rules; i++)
        if (!st_registry_add(r, &filter_rules[i], err)) return false;
    return true;
}
