/* codegen/cg_range.c — where an integer lies, so that an index that cannot
 * leave its array goes unchecked, and a test it decides goes away.
 *
 * Every `get` is checked on the device (cg_fault.c) unless its index is
 * known to be in range. What rules build is: an element of iota(n) indexes
 * an array of n (a block, a row), a literal a block of known length,
 * max(i - 1, 0) the element before i. So a scalar carries an interval
 * [lo, hi): lo a number, hi a size. It comes from iota's elements, from
 * literals and from loops' indices, and goes through + - min max / %,
 * products by a constant and conversions; anything else forgets it. The
 * indices views compute carry it too (cg_view.c): an element of iota read
 * at block b of a split, lane l, step j lies below where that index does.
 *
 * hi ≥ 1 wherever such a value exists: an element of iota(n) is read only
 * when n ≥ 1, a literal c ≥ 0 has hi = c + 1, and each step below keeps
 * it. That is what lets max(x, 0) keep x's hi. Inside `if i < n then …`
 * i lies below n as well (a padded array read only where it has elements).
 *
 * In a mapWrg whose blocks' count rounds up, the block's index has a
 * second bound, hi_full, that holds in every block but the last (the whole
 * ones: cg_host.c's kernel_wrg); it goes through the same steps, and a test
 * `i < n` that it decides (a padded array's, in a whole block) reads the
 * kernel's flag for a whole block (cg_range_below). */
#include "cg.h"

cg_value cg_ranged(cg_value v, int64_t lo, const st_size *hi) {
    v.lo = lo;
    v.hi = hi;
    return v;
}

static bool is_integer(st_scalar_kind k) { return k == ST_I32 || k == ST_I64 || k == ST_U32 || k == ST_U64; }

static bool const_of(const st_size *s, int64_t *v) { return s && st_size_is_const(s, v); }

bool cg_range_constant(const cg_value *v, int64_t *c) {
    int64_t hi;
    if (v->kind != CG_SCALAR || !const_of(v->hi, &hi) || hi != v->lo + 1) return false;
    *c = v->lo;
    return true;
}

/* a ≤ b, surely; with `exists`, also where a is 1 or less (every hi is ≥ 1) */
static bool at_most(cg *g, const st_size *a, const st_size *b, bool exists) {
    int64_t x, y;
    if (a == b) return true;
    if (exists && const_of(a, &x) && x <= 1) return true;
    if (const_of(a, &x) && const_of(b, &y)) return x <= y;
    st_err e = {0};
    const st_size *d = st_size_sub(g->cx, b, a, &e);
    return (d && const_of(d, &x) && x >= 0) || st_size_rounds_up(g->cx, a, b) || st_size_rounds_down(g->cx, b, a);
}

void cg_range_literal(cg *g, cg_value *r, st_scalar_kind k, st_scalar v) {
    r->hi = NULL;
    int64_t x;
    switch (k) {
    case ST_I32: x = v.i32; break;
    case ST_U32: x = v.u32; break;
    case ST_I64: x = v.i64; break;
    case ST_U64: if (v.u64 > INT64_MAX) return; x = (int64_t)v.u64; break;
    default: return;
    }
    if (x < 0 || x == INT64_MAX) return;
    *r = cg_ranged(*r, x, st_size_const(g->cx, x + 1));
}

/* [lo, hi) of a op b from theirs (their his as given), or false */
static bool binop_range(cg *g, const st_type *t, st_binop op, const cg_value *a, const cg_value *b, int64_t *lo_out,
                        const st_size **hi_out) {
    if (t->kind != ST_TYPE_SCALAR || !is_integer(t->scalar)) return false;
    int64_t c;
    /* x & c, c ≥ 0 on either side, whatever x: [0, c + 1), a digit's bucket */
    if (op == ST_OP_BAND && ((cg_range_constant(b, &c) && c >= 0) || (cg_range_constant(a, &c) && c >= 0)) &&
        c < INT64_MAX) {
        *lo_out = 0;
        *hi_out = st_size_const(g->cx, c + 1);
        return true;
    }
    if (!a->hi || !b->hi) return false;
    st_err e = {0};
    int64_t lo;
    const st_size *hi = NULL;
    switch (op) {
    case ST_OP_ADD: /* [la + lb, ha + hb - 1) */
        if (__builtin_add_overflow(a->lo, b->lo, &lo)) return false;
        hi = st_size_sub(g->cx, st_size_add(g->cx, a->hi, b->hi, &e), st_size_const(g->cx, 1), &e);
        break;
    case ST_OP_MUL: /* of a ≥ 0 by a constant c ≥ 0 (either side): [la * c, (ha - 1) * c + 1), a
                       chunk's first index c * BS */
        if (!cg_range_constant(b, &c) || c < 0 || a->lo < 0) {
            if (!cg_range_constant(a, &c) || c < 0 || b->lo < 0) return false;
            const cg_value *t = a; /* the constant on the left */
            a = b, b = t;
        }
        if (__builtin_mul_overflow(a->lo, c, &lo)) return false;
        hi = st_size_sub(g->cx, a->hi, st_size_const(g->cx, 1), &e);
        if (hi) hi = st_size_mul(g->cx, hi, st_size_const(g->cx, c), &e);
        if (hi) hi = st_size_add(g->cx, hi, st_size_const(g->cx, 1), &e);
        /* a 32-bit product wraps where a length's bound would not */
        if (hi && st_scalar_size(t->scalar) < 8 && (!const_of(hi, &c) || c > INT32_MAX)) return false;
        break;
    case ST_OP_SUB: /* b ≥ 0 and at most c - 1: [la - (c - 1), ha) */
        if (b->lo < 0 || !const_of(b->hi, &c) || __builtin_sub_overflow(a->lo, c - 1, &lo)) return false;
        hi = a->hi;
        break;
    case ST_OP_MAX:
        lo = a->lo > b->lo ? a->lo : b->lo;
        hi = at_most(g, b->hi, a->hi, true) ? a->hi : at_most(g, a->hi, b->hi, true) ? b->hi : NULL;
        break;
    case ST_OP_MIN: /* below either */
        lo = a->lo < b->lo ? a->lo : b->lo;
        hi = at_most(g, b->hi, a->hi, false) ? b->hi : a->hi;
        break;
    case ST_OP_DIV: /* by c > 0, of a ≥ 0: [la / c, (ha - 1) / c + 1) */
        if (a->lo < 0 || !cg_range_constant(b, &c) || c < 1) return false;
        lo = a->lo / c;
        hi = st_size_sub(g->cx, a->hi, st_size_const(g->cx, 1), &e);
        hi = st_size_add(g->cx, st_size_div(g->cx, hi, st_size_const(g->cx, c), &e), st_size_const(g->cx, 1), &e);
        if (!hi) hi = a->hi; /* at most a */
        break;
    case ST_OP_MOD: /* by c > 0, of a ≥ 0: [0, c) */
        if (a->lo < 0 || !cg_range_constant(b, &c) || c < 1) return false;
        lo = 0;
        hi = st_size_const(g->cx, c);
        break;
    default: return false;
    }
    *lo_out = lo;
    *hi_out = hi;
    return hi != NULL;
}

/* v with hi replaced by hi_full where that is known */
static cg_value assuming_whole(cg_value v) {
    if (v.hi_full) v.hi = v.hi_full;
    return v;
}

void cg_range_binop(cg *g, cg_value *r, st_binop op, const cg_value *a, const cg_value *b) {
    r->hi = r->hi_full = NULL;
    int64_t lo, lo_full;
    const st_size *hi, *hi_full;
    if (!binop_range(g, r->type, op, a, b, &lo, &hi)) return;
    *r = cg_ranged(*r, lo, hi);
    /* the same in a whole block, where either side knows more there */
    cg_value af = assuming_whole(*a), bf = assuming_whole(*b);
    if ((a->hi_full || b->hi_full) && binop_range(g, r->type, op, &af, &bf, &lo_full, &hi_full) && hi_full != hi)
        r->hi_full = hi_full;
}

void cg_range_conv(cg_value *r, st_scalar_kind to, const cg_value *a) {
    r->hi = r->hi_full = NULL;
    int64_t c;
    if (!a->hi || !is_integer(to)) return;
    /* a narrower type keeps a range that fits it; an unsigned one needs lo ≥ 0 */
    if ((to == ST_I32 || to == ST_U32) && (!const_of(a->hi, &c) || c > INT32_MAX)) return;
    if ((to == ST_U32 || to == ST_U64) && a->lo < 0) return;
    if (to == ST_I32 && a->lo < INT32_MIN) return;
    *r = cg_ranged(*r, a->lo, a->hi);
    r->hi_full = a->hi_full;
}

/* A literal other than 0, or one negated. */
static bool nonzero_literal(const st_node *n) {
    if (n->kind == ST_NODE_UNOP && n->u.unop == ST_OP_NEG) n = n->kids[0];
    return n->kind == ST_NODE_LIT && n->u.lit.bits != 0;
}

bool cg_divides_by_zero(st_binop op, st_scalar_kind k, const st_node *divisor, const cg_value *d) {
    if ((op != ST_OP_DIV && op != ST_OP_MOD) || !st_scalar_is_int(k)) return false;
    if (divisor && nonzero_literal(divisor)) return false;
    return !(d && d->kind == CG_SCALAR && d->hi && d->lo >= 1); /* in [lo, hi) with lo ≥ 1 */
}

bool cg_in_range(cg *g, const cg_value *i, const st_size *length) {
    return i->kind == CG_SCALAR && i->hi && i->lo >= 0 && length && at_most(g, i->hi, length, false);
}

const cg_binding *cg_range_refine(cg *g, const st_node *cond, const cg_binding *env) {
    if (cond->kind != ST_NODE_BINOP || cond->u.binop != ST_OP_LT || cond->kids[0]->kind != ST_NODE_VAR) return env;
    const cg_binding *b = env;
    while (b && b->name != cond->kids[0]->u.name) b = b->next;
    if (!b || b->deferred || b->place || b->value.kind != CG_SCALAR || !b->value.hi || b->value.lo < 0) return env;
    st_err e = {0};
    const st_size *n = st_node_as_size(g->cx, cond->kids[1], &e);
    if (!n) return env;
    return cg_bind(g, env, b->name, cg_ranged(b->value, b->value.lo, n));
}

cg_value cg_range_index(cg *g, cg_value v, const cg_value *i, const st_size *length) {
    v = cg_ranged(v, 0, length);
    v.hi_full = NULL;
    v.group_first = i->group_first;
    if (!i->hi || !length) return v;
    if (i->lo >= 0) v.lo = i->lo;
    if (at_most(g, i->hi, length, false)) v.hi = i->hi;
    v.hi_full = i->hi_full; /* the element is i: below both */
    return v;
}

const char *cg_range_below(cg *g, const cg_value *a, const st_node *n, const char *test) {
    if (a->kind != CG_SCALAR || !a->hi) return NULL;
    st_err e = {0};
    const st_size *end = st_node_as_size(g->cx, n, &e);
    if (!end) return NULL;
    if (at_most(g, a->hi, end, false)) return "true";
    if (!g->whole || !a->hi_full || !at_most(g, a->hi_full, end, false)) return NULL;
    g->whole_uses++;
    return cg_str(g, "(%s || %s)", g->whole, test);
}

const cg_binding *cg_range_refine_not(cg *g, const st_node *cond, const cg_binding *env) {
    int64_t k;
    if (cond->kind != ST_NODE_BINOP || cond->u.binop != ST_OP_EQ || cond->kids[0]->kind != ST_NODE_VAR ||
        !st_int_literal(cond->kids[1], &k))
        return env;
    const cg_binding *b = env;
    while (b && b->name != cond->kids[0]->u.name) b = b->next;
    if (!b || b->deferred || b->place || b->value.kind != CG_SCALAR || !b->value.hi || b->value.lo != k ||
        k == INT64_MAX)
        return env;
    /* i ≠ lo: i ≥ lo + 1 (where i < lo + 1 it is empty, and nothing there runs) */
    return cg_bind(g, env, b->name, cg_ranged(b->value, b->value.lo + 1, b->value.hi));
}
