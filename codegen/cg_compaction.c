/* codegen/cg_compaction.c — is a look-back pass a compaction?
 *
 * A compaction counts the elements that pass a test and scatters each to a
 * place that is linear in its count: the kept ones to consecutive places
 * from a start, in order, and the others nowhere (a filter) or to
 * consecutive places from another start (a partition, whose elements carry
 * their index). The look-back's compress-store loop (cg_lookback_vector.c) writes
 * such a pass 16 elements at a time, where its scatter is a scatterDistinct
 * (a plain scatter claims each place for its last writer first, and writes
 * one element at a time: cg_winners.c).
 *
 * Users write the place in more than one form: filter-scatter's and
 * partition-scatter's `if`, and the branch-free arithmetic of a radix sort's
 * split, `(i - o) + set * (zeros + o - 1 - (i - o))`. So the place is not
 * matched against a pattern: it is evaluated twice, once assuming the
 * element is kept and once that it is not, into a linear form over the
 * values it reads (atoms), and each form is checked to be what a compaction
 * needs. Integer + and - and products by constants wrap in two's
 * complement, where linear identities hold, so the forms are exact. */
#include "cg.h"
#include "rewrite/rewrite.h"

#include <string.h>

/* What the element's count says: `ind` (the count's step for this element,
 * a 0 or a 1) is 1 exactly when `kept`; `test`, where the step is an `if`
 * (else NULL), is the boolean that makes it 1 (0 when `negated`). */
typedef struct assumption {
    st_ctx *cx;
    const st_node *ind, *test;
    bool negated, kept;
    const st_node *xs, *x, *data; /* the elements, one of them, the array moved */
} assumption;

enum { MAX_DEPTH = 64 };

/* The array a projection of the element x reads (xs, or a leaf of the zips
 * xs is), or NULL. */
static const st_node *leaf_of(const st_node *xs, const st_node *x, const st_node *e) {
    if (e == x) return xs;
    if (e->kind != ST_NODE_PROJ) return NULL;
    const st_node *zipped = leaf_of(xs, x, e->kids[0]);
    return zipped && st_is_prim(zipped, ST_PRIM_ZIP) && e->u.index < zipped->nkids ? zipped->kids[e->u.index] : NULL;
}

/* Do a and b compute the same? Fusion may zip an array in twice, so that
 * the count tests x.0 and the place x.1.1: any two reads of one array are
 * the same. Otherwise the same operations on the same. */
static bool same(const assumption *as, const st_node *a, const st_node *b, int depth) {
    if (a == b) return true;
    if (depth > MAX_DEPTH || a->kind != b->kind || a->nkids != b->nkids || a->type != b->type) return false;
    switch (a->kind) {
    case ST_NODE_PROJ: {
        const st_node *read = leaf_of(as->xs, as->x, a);
        if (read && read == leaf_of(as->xs, as->x, b)) return true; /* one array's element, however reached */
        if (a->u.index != b->u.index) return false;
        break;
    }
    case ST_NODE_UNOP:
        if (a->u.unop != b->u.unop) return false;
        break;
    case ST_NODE_BINOP:
        if (a->u.binop != b->u.binop) return false;
        break;
    case ST_NODE_CONV: case ST_NODE_IF: case ST_NODE_TUPLE: break; /* a conversion's target is its type */
    default: return false;
    }
    for (uint32_t i = 0; i < a->nkids; i++)
        if (!same(as, a->kids[i], b->kids[i], depth + 1)) return false;
    return true;
}

/* out = ka·a + kb·b, false on overflow or too many atoms */
static bool combine(cg_linear *out, const cg_linear *a, int64_t ka, const cg_linear *b, int64_t kb) {
    cg_linear r = {0};
    int64_t ca, cb;
    if (__builtin_mul_overflow(a->c, ka, &ca) || __builtin_mul_overflow(b->c, kb, &cb) ||
        __builtin_add_overflow(ca, cb, &r.c))
        return false;
    const cg_linear *side[2] = {a, b};
    int64_t k[2] = {ka, kb};
    for (int s = 0; s < 2; s++)
        for (uint32_t i = 0; i < side[s]->n; i++) {
            int64_t term;
            if (__builtin_mul_overflow(side[s]->coef[i], k[s], &term) ||
                !cg_linear_add(&r, side[s]->atom[i], term))
                return false;
        }
    *out = r;
    return true;
}

static bool linear(const assumption *as, const st_node *e, cg_linear *out, int depth);

/* The truth of a condition under the assumption: 1, 0, or -1 unknown. */
static int truth(const assumption *as, const st_node *c, int depth) {
    if (as->test && same(as, c, as->test, depth)) return as->kept != as->negated;
    if (c->kind == ST_NODE_UNOP && c->u.unop == ST_OP_NOT) {
        int t = truth(as, c->kids[0], depth + 1);
        return t < 0 ? t : !t;
    }
    if (c->kind == ST_NODE_BINOP && (c->u.binop == ST_OP_EQ || c->u.binop == ST_OP_NE) &&
        st_type_is_scalar(c->kids[0]->type, c->kids[0]->type->scalar) && st_scalar_is_int(c->kids[0]->type->scalar)) {
        cg_linear a, b, d;
        if (!linear(as, c->kids[0], &a, depth + 1) || !linear(as, c->kids[1], &b, depth + 1) || !combine(&d, &a, 1, &b, -1))
            return -1;
        if (d.n) return -1;
        return (d.c == 0) == (c->u.binop == ST_OP_EQ);
    }
    return -1;
}

/* A let's body with its variables replaced by what they name (a tuple's
 * by its components). */
static const st_node *let_body(st_ctx *cx, const st_node *let) {
    uint32_t k = st_let_nvars(let);
    const st_node *value = let->kids[k], *body = let->kids[k + 1];
    st_err err = {0};
    for (uint32_t i = 0; i < k && body; i++) {
        const st_node *part = k == 1 ? value : st_proj(cx, value, i, &err);
        body = part ? st_subst(cx, body, let->kids[i], part, &err) : NULL;
    }
    return body;
}

static bool linear(const assumption *as, const st_node *e, cg_linear *out, int depth) {
    memset(out, 0, sizeof *out);
    if (depth > MAX_DEPTH || e->type->kind != ST_TYPE_SCALAR || !st_scalar_is_int(e->type->scalar)) return false;
    if (same(as, e, as->ind, depth)) return out->c = as->kept, true;
    int64_t v;
    if (st_int_literal(e, &v)) return out->c = v, true;
    cg_linear a, b;
    switch (e->kind) {
    case ST_NODE_BINOP:
        if (e->u.binop != ST_OP_ADD && e->u.binop != ST_OP_SUB && e->u.binop != ST_OP_MUL) break;
        if (!linear(as, e->kids[0], &a, depth + 1) || !linear(as, e->kids[1], &b, depth + 1)) return false;
        if (e->u.binop == ST_OP_MUL) {
            if (a.n && b.n) break; /* a product of two values: an atom */
            cg_linear zero = {0};
            return a.n ? combine(out, &a, b.c, &zero, 0) : combine(out, &b, a.c, &zero, 0);
        }
        return combine(out, &a, 1, &b, e->u.binop == ST_OP_ADD ? 1 : -1);
    case ST_NODE_UNOP:
        if (e->u.unop != ST_OP_NEG) break;
        if (!linear(as, e->kids[0], &a, depth + 1)) return false;
        cg_linear zero = {0};
        return combine(out, &a, -1, &zero, 0);
    case ST_NODE_IF: {
        int t = truth(as, e->kids[0], depth + 1);
        if (t < 0) return false;
        return linear(as, e->kids[t ? 1 : 2], out, depth + 1);
    }
    case ST_NODE_LET: {
        const st_node *body = let_body(as->cx, e);
        return body && linear(as, body, out, depth + 1);
    }
    case ST_NODE_CONV:
        /* a constant converted to i64 (wider or as wide): still that constant */
        if (e->type->scalar == ST_I64 && st_type_is_scalar(e->kids[0]->type, e->kids[0]->type->scalar) &&
            st_scalar_is_int(e->kids[0]->type->scalar) && linear(as, e->kids[0], &a, depth + 1) && !a.n &&
            (st_scalar_is_signed(e->kids[0]->type->scalar) || a.c >= 0))
            return out->c = a.c, true;
        break;
    default: break;
    }
    return cg_linear_add(out, e, 1);
}

bool cg_linear_add(cg_linear *l, const st_node *atom, int64_t coef) {
    for (uint32_t i = 0; i < l->n; i++)
        if (l->atom[i] == atom) {
            if (__builtin_add_overflow(l->coef[i], coef, &l->coef[i])) return false;
            if (l->coef[i] == 0) {
                l->atom[i] = l->atom[l->n - 1];
                l->coef[i] = l->coef[--l->n];
            }
            return true;
        }
    if (coef == 0) return true;
    if (l->n == CG_LINEAR_MAX) return false;
    l->atom[l->n] = atom;
    l->coef[l->n++] = coef;
    return true;
}

/* The coefficient of atom in l, removed from it. */
static int64_t take_atom(cg_linear *l, const st_node *atom) {
    for (uint32_t i = 0; i < l->n; i++)
        if (l->atom[i] == atom) {
            int64_t k = l->coef[i];
            l->atom[i] = l->atom[l->n - 1];
            l->coef[i] = l->coef[--l->n];
            return k;
        }
    return 0;
}

/* A start: what is left reads neither the element nor its count. */
static bool is_start(const cg_linear *l, const st_node *x, const st_node *acc) {
    for (uint32_t i = 0; i < l->n; i++)
        if (st_occurs(l->atom[i], x) || st_occurs(l->atom[i], acc)) return false;
    return true;
}

/* The count's step, acc + s: s, and its test when s is `if t then 1 else
 * 0` (or `then 0 else 1`: negated); s must be a 0 or a 1 (that, or a
 * conversion of `v & 1`). */
static bool count_step(const st_node *fold, const st_node **step, const st_node **test, bool *negated) {
    const st_node *count = st_lambda_body(fold);
    if (count->kind != ST_NODE_BINOP || count->u.binop != ST_OP_ADD || count->kids[0] != fold->kids[0]) return false;
    const st_node *s = count->kids[1];
    int64_t one, zero;
    *step = s;
    *test = NULL;
    if (s->kind == ST_NODE_IF && st_int_literal(s->kids[1], &one) && st_int_literal(s->kids[2], &zero) &&
        ((one == 1 && zero == 0) || (one == 0 && zero == 1))) {
        *test = s->kids[0];
        *negated = one == 0;
        return true;
    }
    const st_node *bits = s->kind == ST_NODE_CONV ? s->kids[0] : s;
    return bits->kind == ST_NODE_BINOP && bits->u.binop == ST_OP_BAND &&
           ((st_int_literal(bits->kids[1], &one) && one == 1) || (st_int_literal(bits->kids[0], &one) && one == 1)) &&
           s->type->kind == ST_TYPE_SCALAR && st_scalar_is_int(s->type->scalar);
}

/* Are the leaves of xs's zips each the data, an array the data zips, or an
 * iota? The first iota's element, a projection of x, in *index. */
static bool leaves_ok(st_ctx *cx, const st_node *xs, const st_node *data, const st_node *x, const st_node **index) {
    if (xs == data) return true;
    if (st_is_prim(data, ST_PRIM_ZIP))
        for (uint32_t j = 0; j < data->nkids; j++)
            if (xs == data->kids[j]) return true;
    if (st_is_prim(xs, ST_PRIM_IOTA)) {
        if (!*index) *index = x;
        return true;
    }
    if (!st_is_prim(xs, ST_PRIM_ZIP)) return false;
    st_err err = {0};
    for (uint32_t i = 0; i < xs->nkids; i++) {
        const st_node *part = st_proj(cx, x, i, &err);
        if (!part || !leaves_ok(cx, xs->kids[i], data, part, index)) return false;
    }
    return true;
}

bool cg_is_compaction(st_ctx *cx, const st_node *fold, const st_node *z, const st_node *post, const st_node *xs,
                      cg_compaction *out) {
    memset(out, 0, sizeof *out);
    int64_t from;
    if (!st_int_literal(z, &from) || from != 0 || st_lambda_nparams(fold) != 2 || st_lambda_nparams(post) != 2) return false;
    const st_node *step, *test;
    bool negated = false;
    if (!count_step(fold, &step, &test, &negated)) return false;
    const st_node *pair = st_lambda_body(post), *acc = post->kids[0], *x = post->kids[1];
    if (pair->kind != ST_NODE_TUPLE || pair->nkids != 2) return false;
    /* the value moved: the data's element (xs's, or one array's of the
     * zips xs is, or a zip of arrays; the others the data again or iotas: a
     * partition's index) */
    const st_node *index = NULL;
    if (!(out->data = leaf_of(xs, x, pair->kids[1])) || !leaves_ok(cx, xs, out->data, x, &index))
        return false;
    if (st_is_prim(out->data, ST_PRIM_ZIP))
        for (uint32_t j = 0; j < out->data->nkids; j++)
            if (st_is_prim(out->data->kids[j], ST_PRIM_ZIP)) return false;
    /* the count's step and test, of this element */
    st_err err = {0};
    assumption as = {.cx = cx, .ind = st_subst(cx, step, fold->kids[1], x, &err), .negated = negated,
                     .xs = xs, .x = x, .data = out->data};
    if (!as.ind || (test && !(as.test = st_subst(cx, test, fold->kids[1], x, &err)))) return false;
    const st_node *place = pair->kids[0];
    /* kept: start + (acc - 1), acc the count with this element */
    as.kept = true;
    if (!linear(&as, place, &out->kept, 0) || take_atom(&out->kept, acc) != 1 || !is_start(&out->kept, x, acc) ||
        __builtin_add_overflow(out->kept.c, 1, &out->kept.c))
        return false;
    /* the others: nowhere (a negative constant), or start + (i - acc) */
    as.kept = false;
    if (!linear(&as, place, &out->others, 0)) return false;
    if (out->others.n == 0 && out->others.c < 0) return true;
    out->partition = true;
    return index && take_atom(&out->others, index) == 1 && take_atom(&out->others, acc) == -1 &&
           is_start(&out->others, x, acc);
}
