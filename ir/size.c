/* ir/size.c — symbolic sizes in a normal form.
 *
 * A size is a polynomial: a sum of terms coef·monomial with integer
 * coefficients, the monomials made of atoms raised to positive powers. Atoms
 * are what does not simplify further:
 *
 *   VAR   N            a size variable with no divisibility fact
 *   EXACT ⟨N/d⟩        N under the fact d | N, so that N = d·⟨N/d⟩
 *   DIV   floor(p/q)   MOD p % q   POW pow(p, q)   LOG floor(log_p q)
 *   EXIST ?k           a length known only at run time (what filter keeps),
 *                      named by the nodes that make it and carrying its bound
 *
 * Terms are sorted (higher degree first, then structurally), equal monomials
 * merged and zero terms dropped; then the polynomial is hash-consed, so equal
 * sizes are equal pointers. Coefficient arithmetic is checked for overflow.
 */
#include "ctx.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_FACTORS = 8, MAX_TERMS = 64, MAX_EXPAND = 16 };

typedef enum { S_POLY, S_VAR, S_EXACT, S_DIV, S_MOD, S_POW, S_LOG, S_EXIST } size_kind;

typedef struct factor {
    const st_size *atom;
    uint32_t exp;
} factor;

typedef struct term {
    int64_t coef;
    uint32_t nf;
    const factor *f;
} term;

struct st_size {
    size_kind kind;
    uint32_t hash;
    uint32_t nterms;      /* POLY */
    const term *terms;    /* POLY */
    const char *name;     /* VAR, EXACT */
    int64_t d;            /* EXACT */
    const st_size *a, *b; /* DIV MOD POW LOG: polynomials */
    /* EXIST: what makes it (its identity; both NULL for a `?name` written in a
     * declared result, whose identity is its name), its worst-case length
     * (NULL for a written one), and the polynomial 1·?k itself */
    const void *origin[2];
    const st_size *bound, *self;
};

/* ---- structural order (deterministic, independent of creation order) ---- */

static int cmp_poly(const st_size *p, const st_size *q);

static int cmp_i64(int64_t a, int64_t b) { return a < b ? -1 : a > b; }

static int cmp_atom(const st_size *x, const st_size *y) {
    if (x == y) return 0;
    if (x->kind != y->kind) return cmp_i64(x->kind, y->kind);
    switch (x->kind) {
    case S_VAR:
    case S_EXIST: return strcmp(x->name, y->name);
    case S_EXACT: {
        int c = strcmp(x->name, y->name);
        return c ? c : cmp_i64(x->d, y->d);
    }
    default: {
        int c = cmp_poly(x->a, y->a);
        return c ? c : cmp_poly(x->b, y->b);
    }
    }
}

static uint32_t degree(const term *t) {
    uint32_t d = 0;
    for (uint32_t i = 0; i < t->nf; i++) d += t->f[i].exp;
    return d;
}

static int cmp_mono(const term *s, const term *t) {
    uint32_t ds = degree(s), dt = degree(t);
    if (ds != dt) return ds > dt ? -1 : 1;
    for (uint32_t i = 0; i < s->nf && i < t->nf; i++) {
        int c = cmp_atom(s->f[i].atom, t->f[i].atom);
        if (c) return c;
        if (s->f[i].exp != t->f[i].exp) return s->f[i].exp > t->f[i].exp ? -1 : 1;
    }
    return cmp_i64(s->nf, t->nf);
}

static int cmp_poly(const st_size *p, const st_size *q) {
    if (p == q) return 0;
    if (p->nterms != q->nterms) return cmp_i64(p->nterms, q->nterms);
    for (uint32_t i = 0; i < p->nterms; i++) {
        int c = cmp_mono(&p->terms[i], &q->terms[i]);
        if (c) return c;
        c = cmp_i64(p->terms[i].coef, q->terms[i].coef);
        if (c) return c;
    }
    return 0;
}

/* ---- hash-consing ---- */

static uint32_t hash_size(const st_size *s) {
    uint32_t h = st_hash_mix(0x5123u, s->kind);
    switch (s->kind) {
    case S_POLY:
        for (uint32_t i = 0; i < s->nterms; i++) {
            h = st_hash_mix(h, (uint64_t)s->terms[i].coef);
            for (uint32_t k = 0; k < s->terms[i].nf; k++) {
                h = st_hash_ptr(h, s->terms[i].f[k].atom);
                h = st_hash_mix(h, s->terms[i].f[k].exp);
            }
            h = st_hash_mix(h, 0xffff);
        }
        return h;
    case S_VAR: return st_hash_ptr(h, s->name);
    case S_EXACT: return st_hash_mix(st_hash_ptr(h, s->name), (uint64_t)s->d);
    case S_EXIST:
        if (!s->origin[0] && !s->origin[1]) return st_hash_ptr(h, s->name);
        return st_hash_ptr(st_hash_ptr(st_hash_ptr(h, s->origin[0]), s->origin[1]), s->bound);
    default: return st_hash_ptr(st_hash_ptr(h, s->a), s->b);
    }
}

static bool eq_size(const void *item, const void *key) {
    const st_size *x = item, *y = key;
    if (x->kind != y->kind) return false;
    switch (x->kind) {
    case S_POLY:
        if (x->nterms != y->nterms) return false;
        for (uint32_t i = 0; i < x->nterms; i++) {
            const term *s = &x->terms[i], *t = &y->terms[i];
            if (s->coef != t->coef || s->nf != t->nf) return false;
            for (uint32_t k = 0; k < s->nf; k++)
                if (s->f[k].atom != t->f[k].atom || s->f[k].exp != t->f[k].exp) return false;
        }
        return true;
    case S_VAR: return x->name == y->name;
    case S_EXACT: return x->name == y->name && x->d == y->d;
    case S_EXIST:
        if (x->origin[0] != y->origin[0] || x->origin[1] != y->origin[1] || x->bound != y->bound) return false;
        return x->origin[0] || x->origin[1] || x->name == y->name;
    default: return x->a == y->a && x->b == y->b;
    }
}

static void *copy_size(st_ctx *cx, const void *p, uint32_t h) {
    const st_size *probe = p;
    st_size *s = st_ctx_copy(cx, probe, sizeof *s);
    if (!s) return NULL;
    s->hash = h;
    if (s->kind == S_POLY && s->nterms) {
        term *ts = st_ctx_copy(cx, probe->terms, s->nterms * sizeof *ts);
        if (!ts) return NULL;
        for (uint32_t i = 0; i < s->nterms; i++) /* the probe's factors may live on a stack */
            if (!(ts[i].f = st_ctx_copy(cx, ts[i].f, ts[i].nf * sizeof *ts[i].f)) && ts[i].nf) return NULL;
        s->terms = ts;
    }
    return s;
}

static const st_size *intern(st_ctx *cx, const st_size *probe, st_err *err) {
    const st_size *s = st_ctx_intern(cx, &cx->sizes, hash_size(probe), eq_size, probe, copy_size);
    return s ? s : (st_fail_internal(err, "out of memory while building a size"), NULL);
}

/* ---- a polynomial under construction ---- */

typedef struct bterm {
    int64_t coef;
    uint32_t nf;
    factor f[MAX_FACTORS];
} bterm;

typedef struct builder {
    bterm t[MAX_TERMS];
    uint32_t n;
    bool overflow, too_big;
} builder;

/* field by field: a factor's padding is whatever the copy it came from held */
static bool same_monomial(const factor *f, const factor *g, uint32_t nf) {
    for (uint32_t i = 0; i < nf; i++)
        if (f[i].atom != g[i].atom || f[i].exp != g[i].exp) return false;
    return true;
}

static void b_add_term(builder *b, int64_t coef, const factor *f, uint32_t nf) {
    if (coef == 0) return;
    if (nf > MAX_FACTORS) { b->too_big = true; return; }
    /* merge with an equal monomial */
    for (uint32_t i = 0; i < b->n; i++) {
        if (b->t[i].nf != nf || !same_monomial(b->t[i].f, f, nf)) continue;
        if (__builtin_add_overflow(b->t[i].coef, coef, &b->t[i].coef)) b->overflow = true;
        return;
    }
    if (b->n == MAX_TERMS) { b->too_big = true; return; }
    b->t[b->n].coef = coef;
    b->t[b->n].nf = nf;
    if (nf) memcpy(b->t[b->n].f, f, nf * sizeof *f);
    b->n++;
}

static void b_add_poly(builder *b, const st_size *p, int64_t scale) {
    for (uint32_t i = 0; i < p->nterms; i++) {
        int64_t c;
        if (__builtin_mul_overflow(p->terms[i].coef, scale, &c)) b->overflow = true;
        b_add_term(b, c, p->terms[i].f, p->terms[i].nf);
    }
}

static int cmp_bterm(const void *x, const void *y) {
    const bterm *s = x, *t = y;
    term ts = {s->coef, s->nf, s->f}, tt = {t->coef, t->nf, t->f};
    return cmp_mono(&ts, &tt);
}

static bool check_builder(const builder *b, st_err *err) {
    if (b->overflow) return st_fail(err, (st_loc){0}, "size arithmetic overflows 64 bits");
    if (b->too_big)
        return st_fail(err, (st_loc){0}, "size expression is too complex (more than %d terms)",
                       MAX_TERMS);
    return true;
}

static const st_size *b_finish(st_ctx *cx, builder *b, st_err *err) {
    if (!check_builder(b, err)) return NULL;
    term ts[MAX_TERMS];
    uint32_t n = 0;
    for (uint32_t i = 0; i < b->n; i++)
        if (b->t[i].coef != 0) b->t[n++] = b->t[i];
    b->n = n;
    qsort(b->t, b->n, sizeof b->t[0], cmp_bterm);
    for (uint32_t i = 0; i < b->n; i++) ts[i] = (term){b->t[i].coef, b->t[i].nf, b->t[i].f};
    st_size probe = {.kind = S_POLY, .nterms = b->n, .terms = ts};
    return intern(cx, &probe, err);
}

static const st_size *poly_of_atom(st_ctx *cx, const st_size *atom, int64_t coef, st_err *err) {
    if (!atom) return NULL;
    builder b = {0};
    factor f = {atom, 1};
    b_add_term(&b, coef, &f, 1);
    return b_finish(cx, &b, err);
}

static const st_size *make_atom(st_ctx *cx, size_kind kind, const st_size *a, const st_size *b,
                                st_err *err) {
    st_size probe = {.kind = kind, .a = a, .b = b};
    return poly_of_atom(cx, intern(cx, &probe, err), 1, err);
}

/* ---- queries ---- */

bool st_size_is_const(const st_size *s, int64_t *value) {
    if (s->nterms == 0) return (void)(value && (*value = 0)), true;
    if (s->nterms == 1 && s->terms[0].nf == 0) return (void)(value && (*value = s->terms[0].coef)), true;
    return false;
}

uint32_t st_size_hash(const st_size *s) { return s->hash; }

/* c is one of b's divisors by a constant: the normal form of c·⌊(a + c - 1)/c⌋
 * is whatever it is (⌊(N + 3)/3⌋ is ⌊N/3⌋ + 1), so it is built and compared */
/* c·floor(a / c) == b for the constant divisor c of one of b's division
 * atoms (up: of a + c - 1)? */
static bool rounds_to(st_ctx *cx, const st_size *a, const st_size *b, bool up) {
    for (uint32_t t = 0; t < b->nterms; t++)
        for (uint32_t f = 0; f < b->terms[t].nf; f++) {
            const st_size *atom = b->terms[t].f[f].atom;
            int64_t c;
            if (atom->kind != S_DIV || !st_size_is_const(atom->b, &c) || c < 1) continue;
            st_err e = {0};
            const st_size *k = st_size_const(cx, c);
            const st_size *q = up ? st_size_add(cx, a, st_size_const(cx, c - 1), &e) : a;
            if (q) q = st_size_div(cx, q, k, &e);
            if (q && st_size_mul(cx, k, q, &e) == b) return true;
        }
    return false;
}

bool st_size_rounds_up(st_ctx *cx, const st_size *a, const st_size *b) { return rounds_to(cx, a, b, true); }

bool st_size_rounds_down(st_ctx *cx, const st_size *a, const st_size *b) { return rounds_to(cx, a, b, false); }

const st_size *st_size_whole_blocks(st_ctx *cx, const st_size *s) {
    if (s->kind != S_POLY || s->nterms != 1 || s->terms[0].coef != 1 || s->terms[0].nf != 1 ||
        s->terms[0].f[0].exp != 1)
        return NULL;
    const st_size *atom = s->terms[0].f[0].atom;
    int64_t c;
    if (atom->kind != S_DIV || !st_size_is_const(atom->b, &c) || c < 2) return NULL;
    st_err e = {0};
    const st_size *a = st_size_sub(cx, atom->a, st_size_const(cx, c - 1), &e);
    return a ? st_size_div(cx, a, atom->b, &e) : NULL;
}

/* Does the one-term polynomial m (coef, monomial) divide term t? If so the
 * quotient goes to *q. */
static bool term_divides(const term *m, const term *t, bterm *q) {
    if (m->coef == 0 || t->coef % m->coef != 0) return false;
    q->coef = t->coef / m->coef;
    q->nf = 0;
    uint32_t j = 0;
    for (uint32_t i = 0; i < t->nf; i++) {
        factor f = t->f[i];
        if (j < m->nf && m->f[j].atom == f.atom) {
            if (m->f[j].exp > f.exp) return false;
            f.exp -= m->f[j].exp;
            j++;
        }
        if (f.exp) q->f[q->nf++] = f;
    }
    return j == m->nf;
}

static bool mono_mul(const term *s, const term *t, factor *out, uint32_t *nout);

enum { MAX_DIVISION_STEPS = 4 * MAX_TERMS };

/* Exact division of a by the polynomial d of several terms, the quotient
 * into *q: long division by d's leading term (normal forms lead with their
 * greatest monomial, degree first, and the order is one of monomials, so
 * the leading term of q·d is q's times d's). d divides a exactly iff the
 * remainder comes to nothing; a leading term d's does not divide, a
 * coefficient it does not divide in the integers, or a step past the
 * bound say no (sound: only "yes" is ever acted on). Atoms are taken as
 * variables of their own, so (B + 1)·(B + 1) is known to be a multiple of
 * B + 1 and (N + 1)·(N + 2) of N + 2. */
static bool poly_divides(const st_size *d, const st_size *a, builder *q) {
    builder r = {0};
    b_add_poly(&r, a, 1);
    const term *lead = &d->terms[0];
    for (int step = 0; step < MAX_DIVISION_STEPS; step++) {
        if (r.overflow || r.too_big || q->overflow || q->too_big) return false;
        uint32_t n = 0;
        for (uint32_t i = 0; i < r.n; i++)
            if (r.t[i].coef != 0) r.t[n++] = r.t[i];
        r.n = n;
        if (n == 0) return true;
        uint32_t m = 0;
        for (uint32_t i = 1; i < n; i++) {
            term ti = {r.t[i].coef, r.t[i].nf, r.t[i].f}, tm = {r.t[m].coef, r.t[m].nf, r.t[m].f};
            if (cmp_mono(&ti, &tm) < 0) m = i;
        }
        term top = {r.t[m].coef, r.t[m].nf, r.t[m].f};
        bterm t;
        if (!term_divides(lead, &top, &t)) return false;
        b_add_term(q, t.coef, t.f, t.nf);
        term tt = {t.coef, t.nf, t.f};
        for (uint32_t j = 0; j < d->nterms; j++) {
            factor f[MAX_FACTORS];
            uint32_t nf;
            int64_t c;
            if (__builtin_mul_overflow(t.coef, d->terms[j].coef, &c) || c == INT64_MIN || !mono_mul(&tt, &d->terms[j], f, &nf))
                return false;
            b_add_term(&r, -c, f, nf);
        }
    }
    return false;
}

bool st_size_divides(const st_size *d, const st_size *s) {
    if (d == s) return true;
    if (d->nterms == 0) return false;
    if (d->nterms > 1) {
        builder q = {0};
        return poly_divides(d, s, &q);
    }
    bterm q;
    for (uint32_t i = 0; i < s->nterms; i++)
        if (!term_divides(&d->terms[0], &s->terms[i], &q)) return false;
    return true;
}

static void each_var(const st_size *s, void (*fn)(const char *, void *), void *data) {
    switch (s->kind) {
    case S_POLY:
        for (uint32_t i = 0; i < s->nterms; i++)
            for (uint32_t k = 0; k < s->terms[i].nf; k++) each_var(s->terms[i].f[k].atom, fn, data);
        break;
    case S_VAR:
    case S_EXACT: fn(s->name, data); break;
    case S_EXIST: break;
    default:
        each_var(s->a, fn, data);
        each_var(s->b, fn, data);
    }
}

void st_size_each_var(const st_size *s, void (*fn)(const char *name, void *data), void *data) {
    each_var(s, fn, data);
}

/* Each existential once in a polynomial (a bound's own are the bound's). */
static void each_exist(const st_size *s, void (*fn)(const st_size *, void *), void *data,
                       const st_size **seen, uint32_t *nseen) {
    for (uint32_t i = 0; i < s->nterms; i++)
        for (uint32_t k = 0; k < s->terms[i].nf; k++) {
            const st_size *a = s->terms[i].f[k].atom;
            if (a->kind != S_EXIST) {
                if (a->kind != S_VAR && a->kind != S_EXACT) {
                    each_exist(a->a, fn, data, seen, nseen);
                    each_exist(a->b, fn, data, seen, nseen);
                }
                continue;
            }
            bool before = false;
            for (uint32_t j = 0; j < *nseen && !before; j++) before = seen[j] == a;
            if (before) continue;
            if (*nseen < MAX_TERMS * MAX_FACTORS) seen[(*nseen)++] = a;
            fn(a->self, data);
        }
}

void st_size_each_exist(const st_size *s, void (*fn)(const st_size *exist, void *data), void *data) {
    const st_size *seen[MAX_TERMS * MAX_FACTORS];
    uint32_t nseen = 0;
    each_exist(s, fn, data, seen, &nseen);
}

static void note_exist(const st_size *e, void *data) {
    (void)e;
    *(bool *)data = true;
}

bool st_size_has_exist(const st_size *s) {
    bool any = false;
    st_size_each_exist(s, note_exist, &any);
    return any;
}

/* The atom of a size that is exactly one existential, else NULL. */
static const st_size *exist_atom(const st_size *s) {
    if (!s || s->kind != S_POLY || s->nterms != 1 || s->terms[0].coef != 1 || s->terms[0].nf != 1 ||
        s->terms[0].f[0].exp != 1 || s->terms[0].f[0].atom->kind != S_EXIST)
        return NULL;
    return s->terms[0].f[0].atom;
}

bool st_size_is_exist(const st_size *s) { return exist_atom(s) != NULL; }

const st_size *st_size_exist_bound(const st_size *exist) {
    const st_size *a = exist_atom(exist);
    return a ? a->bound : NULL;
}

const char *st_size_exist_name(const st_size *exist) {
    const st_size *a = exist_atom(exist);
    return a ? a->name : NULL;
}

bool st_size_exist_written(const st_size *exist) {
    const st_size *a = exist_atom(exist);
    return a && !a->origin[0] && !a->origin[1];
}

/* The atom, interned, with the polynomial 1·atom kept in it; named `base`
 * itself when `exact`, else the first name free in the context. */
static const st_size *exist_poly(st_ctx *cx, st_size *probe, const char *base, bool exact, st_err *err) {
    uint32_t h = hash_size(probe);
    const st_size *found = st_table_find(&cx->sizes, h, eq_size, probe);
    if (found) return found->self;
    st_size *s = st_ctx_alloc(cx, sizeof *s);
    /* a name nothing in the context has used: the binding an interpreter
     * or host code gives the length (fresh only when first made, so equal
     * expressions share it) */
    const char *name = probe->name ? probe->name : exact ? st_intern_cstr(cx, base) : st_fresh_name(cx, base);
    if (!s || !name) return st_fail_internal(err, "out of memory while building a size"), NULL;
    *s = *probe;
    s->name = name;
    s->hash = h;
    if (!st_table_insert(&cx->sizes, h, s)) return st_fail_internal(err, "out of memory"), NULL;
    s->self = poly_of_atom(cx, s, 1, err);
    return s->self;
}

const st_size *st_size_exist(st_ctx *cx, const void *origin0, const void *origin1, const st_size *bound,
                             const char *base, st_err *err) {
    if (!bound || (!origin0 && !origin1)) return st_fail_internal(err, "an existential size needs an origin and a bound"), NULL;
    st_size probe = {.kind = S_EXIST, .origin = {origin0, origin1}, .bound = bound};
    return exist_poly(cx, &probe, base && base[0] ? base : "k", false, err);
}

const st_size *st_size_exist_named(st_ctx *cx, const void *origin0, const void *origin1, const st_size *bound,
                                   const char *name, st_err *err) {
    if (!bound || !name || (!origin0 && !origin1)) return st_fail_internal(err, "an existential size needs an origin, a bound and a name"), NULL;
    st_size probe = {.kind = S_EXIST, .origin = {origin0, origin1}, .bound = bound};
    return exist_poly(cx, &probe, name, true, err);
}

const st_size *st_size_exist_written_new(st_ctx *cx, const char *name, st_err *err) {
    st_size probe = {.kind = S_EXIST, .name = name};
    return exist_poly(cx, &probe, NULL, false, err);
}

static const st_size *replace_in(st_ctx *cx, const st_size *s, const st_size *const *from,
                                 const st_size *const *to, size_t n, st_err *err);

/* An atom with the existentials inside it replaced. */
static const st_size *replace_atom(st_ctx *cx, const st_size *a, const st_size *const *from,
                                   const st_size *const *to, size_t n, st_err *err) {
    const st_size *x, *y;
    switch (a->kind) {
    case S_EXIST:
        for (size_t i = 0; i < n; i++)
            if (from[i] == a->self) return to[i];
        return a->self;
    case S_VAR: case S_EXACT: return poly_of_atom(cx, a, 1, err);
    default:
        if (!(x = replace_in(cx, a->a, from, to, n, err)) || !(y = replace_in(cx, a->b, from, to, n, err))) return NULL;
        switch (a->kind) {
        case S_DIV: return st_size_div(cx, x, y, err);
        case S_MOD: return st_size_mod(cx, x, y, err);
        case S_POW: return st_size_pow(cx, x, y, err);
        default: return st_size_log(cx, x, y, err);
        }
    }
}

static const st_size *replace_in(st_ctx *cx, const st_size *s, const st_size *const *from,
                                 const st_size *const *to, size_t n, st_err *err) {
    const st_size *sum = st_size_const(cx, 0);
    for (uint32_t i = 0; i < s->nterms && sum; i++) {
        const st_size *t = st_size_const(cx, s->terms[i].coef);
        for (uint32_t k = 0; k < s->terms[i].nf && t; k++) {
            const st_size *a = replace_atom(cx, s->terms[i].f[k].atom, from, to, n, err);
            for (uint32_t e = 0; e < s->terms[i].f[k].exp && t && a; e++) t = st_size_mul(cx, t, a, err);
            if (!a) t = NULL;
        }
        sum = t ? st_size_add(cx, sum, t, err) : NULL;
    }
    return sum;
}

const st_size *st_size_replace_exist(st_ctx *cx, const st_size *s, const st_size *const *from,
                                     const st_size *const *to, size_t n, st_err *err) {
    return replace_in(cx, s, from, to, n, err);
}

static bool atom_has_exist(const st_size *a) {
    if (a->kind == S_EXIST) return true;
    if (a->kind == S_VAR || a->kind == S_EXACT) return false;
    return st_size_has_exist(a->a) || st_size_has_exist(a->b);
}

/* The largest value an atom can take: an existential's bound; a quotient
 * by a divisor free of them, its numerator's largest over the divisor
 * ((?k + 15) / 16 for a number of blocks); any other atom itself. */
static const st_size *atom_upper(st_ctx *cx, const st_size *a, st_err *err) {
    if (a->kind == S_EXIST)
        return a->bound ? st_size_upper(cx, a->bound, err)
                        : (st_fail(err, (st_loc){0}, "the length ?%s has no bound", a->name), NULL);
    if (a->kind == S_DIV && st_size_has_exist(a->a) && !st_size_has_exist(a->b)) {
        const st_size *x = st_size_upper(cx, a->a, err);
        return x ? st_size_div(cx, x, a->b, err) : NULL;
    }
    return poly_of_atom(cx, a, 1, err);
}

/* The largest value s can take: each existential at its bound where its
 * term counts up, at 0 where it counts down (N - ?k is at most N; sizes
 * are never negative, so a term that counts down is at most 0). */
const st_size *st_size_upper(st_ctx *cx, const st_size *s, st_err *err) {
    const st_size *sum = st_size_const(cx, 0);
    for (uint32_t i = 0; i < s->nterms && sum; i++) {
        const term *t = &s->terms[i];
        bool exist = false;
        for (uint32_t k = 0; k < t->nf; k++) exist |= atom_has_exist(t->f[k].atom);
        if (exist && t->coef < 0) continue;
        const st_size *prod = st_size_const(cx, t->coef);
        for (uint32_t k = 0; k < t->nf && prod; k++) {
            const st_size *a = t->f[k].atom;
            const st_size *x = atom_upper(cx, a, err);
            for (uint32_t e = 0; e < t->f[k].exp && prod && x; e++) prod = st_size_mul(cx, prod, x, err);
            if (!x) prod = NULL;
        }
        sum = prod ? st_size_add(cx, sum, prod, err) : NULL;
    }
    return sum;
}

/* ---- facts ---- */

static uint64_t magnitude(int64_t a) { return a < 0 ? 0 - (uint64_t)a : (uint64_t)a; }

/* The gcd of |a| and |b|, capped at INT64_MAX (only gcd(INT64_MIN, 0 or
 * INT64_MIN) would exceed it; 2^62 stands in, which still divides both). */
static int64_t gcd64(int64_t a, int64_t b) {
    uint64_t x = magnitude(a), y = magnitude(b);
    while (y) {
        uint64_t t = x % y;
        x = y;
        y = t;
    }
    return x > INT64_MAX ? (int64_t)1 << 62 : (int64_t)x;
}

/* base^exp for exp >= 0, false on overflow. */
static bool ipow(int64_t base, int64_t exp, int64_t *out) {
    int64_t v = 1;
    if (base == 0 || base == 1) return (*out = exp == 0 ? 1 : base), true;
    if (base == -1) return (*out = exp % 2 ? -1 : 1), true;
    for (int64_t i = 0; i < exp; i++) /* |base| >= 2: at most 63 steps before overflow */
        if (__builtin_mul_overflow(v, base, &v)) return false;
    *out = v;
    return true;
}

int64_t st_facts_divisor(const st_facts *facts, const char *name) {
    if (facts)
        for (uint32_t i = 0; i < facts->n; i++)
            if (facts->items[i].name == name) return facts->items[i].divisor;
    return 1;
}

const st_facts *st_facts_add(st_ctx *cx, const st_facts *facts, const char *name,
                             int64_t divisor) {
    uint32_t n = facts ? facts->n : 0;
    st_facts *out = st_ctx_alloc(cx, sizeof *out);
    st_fact *items = st_ctx_alloc(cx, (n + 1) * sizeof *items);
    if (!out || !items) return NULL;
    uint32_t k = 0;
    int64_t d = divisor;
    for (uint32_t i = 0; i < n; i++) {
        if (facts->items[i].name != name) {
            items[k++] = facts->items[i];
            continue;
        }
        int64_t g = gcd64(facts->items[i].divisor, d);
        if (__builtin_mul_overflow(facts->items[i].divisor / g, d, &d)) return NULL;
    }
    if (d >= 2) items[k++] = (st_fact){name, d};
    out->n = k;
    out->items = items;
    return out;
}

/* ---- constructors ---- */

const st_size *st_size_const(st_ctx *cx, int64_t value) {
    builder b = {0};
    b_add_term(&b, value, NULL, 0);
    return b_finish(cx, &b, NULL);
}

const st_size *st_size_var(st_ctx *cx, const st_facts *facts, const char *name) {
    int64_t d = st_facts_divisor(facts, name);
    st_size probe = {.kind = d > 1 ? S_EXACT : S_VAR, .name = name, .d = d > 1 ? d : 0};
    return poly_of_atom(cx, intern(cx, &probe, NULL), d, NULL);
}

const st_size *st_size_add(st_ctx *cx, const st_size *a, const st_size *b, st_err *err) {
    builder bd = {0};
    b_add_poly(&bd, a, 1);
    b_add_poly(&bd, b, 1);
    return b_finish(cx, &bd, err);
}

const st_size *st_size_sub(st_ctx *cx, const st_size *a, const st_size *b, st_err *err) {
    builder bd = {0};
    b_add_poly(&bd, a, 1);
    b_add_poly(&bd, b, -1);
    return b_finish(cx, &bd, err);
}

/* the product of two monomials: a sorted merge adding exponents */
static bool mono_mul(const term *s, const term *t, factor *out, uint32_t *nout) {
    uint32_t i = 0, j = 0, n = 0;
    while (i < s->nf || j < t->nf) {
        if (n == MAX_FACTORS) return false;
        int c = i == s->nf ? 1 : j == t->nf ? -1 : cmp_atom(s->f[i].atom, t->f[j].atom);
        if (c < 0) out[n++] = s->f[i++];
        else if (c > 0) out[n++] = t->f[j++];
        else {
            out[n] = s->f[i++];
            out[n++].exp += t->f[j++].exp;
        }
    }
    *nout = n;
    return true;
}

const st_size *st_size_mul(st_ctx *cx, const st_size *a, const st_size *b, st_err *err) {
    builder bd = {0};
    for (uint32_t i = 0; i < a->nterms; i++)
        for (uint32_t j = 0; j < b->nterms; j++) {
            factor f[MAX_FACTORS];
            uint32_t nf;
            int64_t c;
            if (__builtin_mul_overflow(a->terms[i].coef, b->terms[j].coef, &c)) bd.overflow = true;
            if (!mono_mul(&a->terms[i], &b->terms[j], f, &nf)) bd.too_big = true;
            else b_add_term(&bd, c, f, nf);
        }
    return b_finish(cx, &bd, err);
}

static int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

static int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

/* The gcd of all coefficients of p and of c. */
static int64_t content_gcd(const st_size *p, int64_t c) {
    int64_t g = c;
    for (uint32_t i = 0; i < p->nterms; i++) g = gcd64(g, p->terms[i].coef);
    return g;
}

/* For floor((r + k)/c) and (r + k) % c with c > 0 and r not constant: the
 * constant k may be taken modulo c, the rest of it moving into the quotient
 * (*q, when given): (N + 300)/256 is 1 + (N + 44)/256. Finishes r. */
static const st_size *reduce_constant(st_ctx *cx, builder *r, int64_t c, const st_size **q,
                                      st_err *err) {
    bool constant_only = true;
    for (uint32_t i = 0; i < r->n; i++) constant_only &= r->t[i].nf == 0;
    if (c > 1 && !constant_only)
        for (uint32_t i = 0; i < r->n; i++) {
            if (r->t[i].nf != 0) continue;
            int64_t k = r->t[i].coef, whole = floor_div(k, c);
            r->t[i].coef = floor_mod(k, c);
            if (q && whole && !(*q = st_size_add(cx, *q, st_size_const(cx, whole), err))) return NULL;
        }
    return b_finish(cx, r, err);
}

static const st_size *scale_down(st_ctx *cx, const st_size *p, int64_t g, st_err *err) {
    builder bd = {0};
    for (uint32_t i = 0; i < p->nterms; i++)
        b_add_term(&bd, p->terms[i].coef / g, p->terms[i].f, p->terms[i].nf);
    return b_finish(cx, &bd, err);
}

const st_size *st_size_div(st_ctx *cx, const st_size *a, const st_size *b, st_err *err) {
    int64_t c, k;
    if (st_size_is_const(b, &c)) {
        if (c == 0) return st_fail(err, (st_loc){0}, "size divided by zero"), NULL;
        if (c == -1 && st_size_is_const(a, &k) && k == INT64_MIN)
            return st_fail(err, (st_loc){0}, "size arithmetic overflows 64 bits"), NULL;
        if (st_size_is_const(a, &k)) return st_size_const(cx, floor_div(k, c));
        /* floor((c·q + r)/c) = q + floor(r/c): the terms c divides come out */
        builder q = {0}, r = {0};
        for (uint32_t i = 0; i < a->nterms; i++) {
            const term *t = &a->terms[i];
            if (t->coef % c == 0) b_add_term(&q, t->coef / c, t->f, t->nf);
            else b_add_term(&r, t->coef, t->f, t->nf);
        }
        const st_size *qs = b_finish(cx, &q, err), *rs;
        if (!qs || !(rs = reduce_constant(cx, &r, c, &qs, err))) return NULL;
        if (rs->nterms == 0) return qs;
        if (st_size_is_const(rs, &k)) return st_size_add(cx, qs, st_size_const(cx, floor_div(k, c)), err);
        /* floor(r/c) = floor((r/g)/(c/g)) when g divides r and c */
        int64_t g = content_gcd(rs, c);
        if (c < 0) g = -g;
        if (g != 1) {
            rs = scale_down(cx, rs, g, err);
            if (!rs) return NULL;
            c /= g;
        }
        const st_size *rest = c == 1 ? rs : make_atom(cx, S_DIV, rs, st_size_const(cx, c), err);
        return rest ? st_size_add(cx, qs, rest, err) : NULL;
    }
    if (a->nterms == 0) return a;
    if (b->nterms == 1 && st_size_divides(b, a)) {
        builder q = {0};
        bterm t;
        for (uint32_t i = 0; i < a->nterms; i++) {
            term_divides(&b->terms[0], &a->terms[i], &t);
            b_add_term(&q, t.coef, t.f, t.nf);
        }
        return b_finish(cx, &q, err);
    }
    if (b->nterms > 1) {
        builder q = {0};
        if (a == b) return st_size_const(cx, 1);
        if (poly_divides(b, a, &q)) return b_finish(cx, &q, err);
    }
    return make_atom(cx, S_DIV, a, b, err);
}

const st_size *st_size_mod(st_ctx *cx, const st_size *a, const st_size *b, st_err *err) {
    int64_t c, k;
    if (st_size_is_const(b, &c)) {
        if (c == 0) return st_fail(err, (st_loc){0}, "size taken modulo zero"), NULL;
        if (st_size_is_const(a, &k)) return st_size_const(cx, c == -1 ? 0 : floor_mod(k, c));
        builder r = {0};
        for (uint32_t i = 0; i < a->nterms; i++)
            if (a->terms[i].coef % c != 0)
                b_add_term(&r, a->terms[i].coef, a->terms[i].f, a->terms[i].nf);
        const st_size *rs = reduce_constant(cx, &r, c, NULL, err);
        if (!rs) return NULL;
        if (st_size_is_const(rs, &k)) return st_size_const(cx, floor_mod(k, c));
        /* r mod c = g·((r/g) mod (c/g)) */
        int64_t g = content_gcd(rs, c);
        if (c < 0) g = -g;
        if (g != 1) {
            rs = scale_down(cx, rs, g, err);
            if (!rs) return NULL;
            const st_size *m = make_atom(cx, S_MOD, rs, st_size_const(cx, c / g), err);
            return m ? st_size_mul(cx, m, st_size_const(cx, g), err) : NULL;
        }
        return make_atom(cx, S_MOD, rs, b, err);
    }
    if (st_size_divides(b, a)) return st_size_const(cx, 0);
    return make_atom(cx, S_MOD, a, b, err);
}

const st_size *st_size_pow(st_ctx *cx, const st_size *base, const st_size *exp, st_err *err) {
    int64_t e, bv;
    if (st_size_is_const(exp, &e)) {
        if (e < 0) return st_fail(err, (st_loc){0}, "size raised to a negative power %lld", (long long)e), NULL;
        const st_size *r = st_size_const(cx, 1);
        if (e == 0) return r;
        if (st_size_is_const(base, &bv)) {
            int64_t v;
            if (!ipow(bv, e, &v)) return st_fail(err, (st_loc){0}, "size arithmetic overflows 64 bits"), NULL;
            return st_size_const(cx, v);
        }
        if (e <= MAX_EXPAND) {
            for (int64_t i = 0; i < e && r; i++) r = st_size_mul(cx, r, base, err);
            return r;
        }
    }
    if (st_size_is_const(base, &bv) && bv == 1) return base;
    return make_atom(cx, S_POW, base, exp, err);
}

static bool const_log(int64_t b, int64_t x, int64_t *out) {
    int64_t k = 0;
    while (x >= b) {
        x /= b;
        k++;
    }
    *out = k;
    return true;
}

const st_size *st_size_log(st_ctx *cx, const st_size *base, const st_size *x, st_err *err) {
    int64_t b, v;
    if (!st_size_is_const(base, &b) || b < 2)
        return st_fail(err, (st_loc){0}, "the base of a logarithm must be a constant of at least 2"), NULL;
    if (st_size_is_const(x, &v)) {
        if (v <= 0) return st_fail(err, (st_loc){0}, "logarithm of %lld, which is not positive", (long long)v), NULL;
        int64_t k;
        const_log(b, v, &k);
        return st_size_const(cx, k);
    }
    const st_size *e;
    if (st_size_is_power_of(cx, x, b, &e, err)) return e;
    return make_atom(cx, S_LOG, base, x, err);
}

bool st_size_is_power_of(st_ctx *cx, const st_size *s, int64_t base, const st_size **exp,
                         st_err *err) {
    int64_t v, k = 0;
    if (base < 2) return false;
    if (st_size_is_const(s, &v)) {
        if (v < 1) return false;
        while (v % base == 0) {
            v /= base;
            k++;
        }
        if (v != 1) return false;
        *exp = st_size_const(cx, k);
        return *exp != NULL;
    }
    /* c·pow(base, e) with c a whole power of base */
    if (s->nterms != 1 || s->terms[0].nf != 1 || s->terms[0].f[0].exp != 1) return false;
    const st_size *atom = s->terms[0].f[0].atom;
    int64_t bv;
    if (atom->kind != S_POW || !st_size_is_const(atom->a, &bv) || bv != base) return false;
    const st_size *ck;
    if (!st_size_is_power_of(cx, st_size_const(cx, s->terms[0].coef), base, &ck, err)) return false;
    *exp = st_size_add(cx, atom->b, ck, err);
    return *exp != NULL;
}

/* ---- evaluation and substitution ---- */

static bool lookup(const char *name, const st_binding *env, size_t nenv, int64_t *out,
                   st_err *err) {
    for (size_t i = 0; i < nenv; i++)
        if (env[i].name == name) return (*out = env[i].value), true;
    return st_fail(err, (st_loc){0}, "size `%s` has no value", name);
}

static bool eval_poly(const st_size *s, const st_binding *env, size_t nenv, int64_t *out,
                      st_err *err);

static bool eval_atom(const st_size *s, const st_binding *env, size_t nenv, int64_t *out,
                      st_err *err) {
    int64_t a = 0, b = 0;
    switch (s->kind) {
    case S_VAR: return lookup(s->name, env, nenv, out, err);
    case S_EXIST:
        for (size_t i = 0; i < nenv; i++)
            if (env[i].name == s->name) return (*out = env[i].value), true;
        return st_fail(err, (st_loc){0}, "the length ?%s is not known yet", s->name);
    case S_EXACT:
        if (!lookup(s->name, env, nenv, &a, err)) return false;
        if (a % s->d != 0)
            return st_fail(err, (st_loc){0}, "%s = %lld is not a multiple of %lld, as the where clause requires",
                           s->name, (long long)a, (long long)s->d);
        return (*out = a / s->d), true;
    default: break;
    }
    if (!eval_poly(s->a, env, nenv, &a, err) || !eval_poly(s->b, env, nenv, &b, err)) return false;
    switch (s->kind) {
    case S_DIV:
    case S_MOD:
        if (b == 0) return st_fail(err, (st_loc){0}, "size divided by zero");
        if (b == -1) {
            if (s->kind == S_MOD) return (*out = 0), true;
            if (a == INT64_MIN) return st_fail(err, (st_loc){0}, "size arithmetic overflows 64 bits");
            return (*out = -a), true;
        }
        *out = s->kind == S_DIV ? floor_div(a, b) : floor_mod(a, b);
        return true;
    case S_POW: {
        if (b < 0) return st_fail(err, (st_loc){0}, "size raised to a negative power");
        return ipow(a, b, out) || st_fail(err, (st_loc){0}, "size arithmetic overflows 64 bits");
    }
    case S_LOG:
        if (b <= 0) return st_fail(err, (st_loc){0}, "logarithm of %lld, which is not positive", (long long)b);
        return const_log(a, b, out);
    default: return st_fail_internal(err, "bad size atom");
    }
}

static bool eval_poly(const st_size *s, const st_binding *env, size_t nenv, int64_t *out,
                      st_err *err) {
    int64_t sum = 0;
    for (uint32_t i = 0; i < s->nterms; i++) {
        int64_t t = s->terms[i].coef;
        for (uint32_t k = 0; k < s->terms[i].nf; k++) {
            int64_t v;
            if (!eval_atom(s->terms[i].f[k].atom, env, nenv, &v, err)) return false;
            for (uint32_t e = 0; e < s->terms[i].f[k].exp; e++)
                if (__builtin_mul_overflow(t, v, &t)) return st_fail(err, (st_loc){0}, "size arithmetic overflows 64 bits");
        }
        if (__builtin_add_overflow(sum, t, &sum)) return st_fail(err, (st_loc){0}, "size arithmetic overflows 64 bits");
    }
    *out = sum;
    return true;
}

bool st_size_eval(const st_size *s, const st_binding *env, size_t nenv, int64_t *out,
                  st_err *err) {
    return eval_poly(s, env, nenv, out, err);
}

static const st_size *subst_atom(st_ctx *cx, const st_size *s, const st_binding *env,
                                 size_t nenv, st_err *err) {
    int64_t v;
    switch (s->kind) {
    case S_VAR:
    case S_EXIST:
    case S_EXACT:
        for (size_t i = 0; i < nenv; i++)
            if (env[i].name == s->name) {
                if (!eval_atom(s, env, nenv, &v, err)) return NULL;
                return st_size_const(cx, v);
            }
        return poly_of_atom(cx, s, 1, err);
    default: break;
    }
    const st_size *a = st_size_subst(cx, s->a, env, nenv, err);
    const st_size *b = a ? st_size_subst(cx, s->b, env, nenv, err) : NULL;
    if (!b) return NULL;
    switch (s->kind) {
    case S_DIV: return st_size_div(cx, a, b, err);
    case S_MOD: return st_size_mod(cx, a, b, err);
    case S_POW: return st_size_pow(cx, a, b, err);
    default: return st_size_log(cx, a, b, err);
    }
}

const st_size *st_size_subst(st_ctx *cx, const st_size *s, const st_binding *env, size_t nenv,
                             st_err *err) {
    const st_size *sum = st_size_const(cx, 0);
    for (uint32_t i = 0; i < s->nterms && sum; i++) {
        const st_size *t = st_size_const(cx, s->terms[i].coef);
        for (uint32_t k = 0; k < s->terms[i].nf && t; k++) {
            const st_size *a = subst_atom(cx, s->terms[i].f[k].atom, env, nenv, err);
            for (uint32_t e = 0; e < s->terms[i].f[k].exp && t && a; e++) t = st_size_mul(cx, t, a, err);
            if (!a) t = NULL;
        }
        sum = t ? st_size_add(cx, sum, t, err) : NULL;
    }
    return sum;
}

/* ---- printing ---- */

static void print_poly(const st_size *s, st_buf *out);

/* A polynomial that prints as one operand of * or /: a constant, or a lone
 * variable or call. */
static bool is_simple(const st_size *p) {
    if (p->nterms == 0) return true;
    if (p->nterms != 1) return false;
    const term *t = &p->terms[0];
    if (t->nf == 0) return t->coef >= 0;
    if (t->coef != 1 || t->nf != 1 || t->f[0].exp != 1) return false;
    size_kind k = t->f[0].atom->kind;
    return k == S_VAR || k == S_EXIST || k == S_POW || k == S_LOG;
}

static void print_operand(const st_size *p, st_buf *out) {
    if (is_simple(p)) return print_poly(p, out);
    st_buf_puts(out, "(");
    print_poly(p, out);
    st_buf_puts(out, ")");
}

/* An atom as a factor of a product; `alone` when nothing else is multiplied
 * with it (then a division needs no parentheses). */
static void print_atom(const st_size *a, bool alone, st_buf *out) {
    switch (a->kind) {
    case S_VAR:
    case S_EXACT: st_buf_puts(out, a->name); return;
    case S_EXIST: /* a written one's name has its `?` already */
        st_buf_printf(out, "%s%s", a->origin[0] || a->origin[1] ? "?" : "", a->name);
        return;
    case S_POW:
    case S_LOG:
        st_buf_puts(out, a->kind == S_POW ? "pow(" : "log(");
        print_poly(a->a, out);
        st_buf_puts(out, ", ");
        print_poly(a->b, out);
        st_buf_puts(out, ")");
        return;
    default:
        if (!alone) st_buf_puts(out, "(");
        if (a->a->nterms > 1) print_operand(a->a, out);
        else print_poly(a->a, out);
        st_buf_puts(out, a->kind == S_DIV ? "/" : " % ");
        print_operand(a->b, out);
        if (!alone) st_buf_puts(out, ")");
    }
}

/* |coef|·monomial. EXACT atoms ⟨N/d⟩ print as N with d moved into one
 * denominator, reduced against the coefficient: 768·⟨N/768⟩ prints as N and
 * 3·⟨N/768⟩ as N/256, both of which parse back to the same normal form. */
static void print_term(const term *t, uint64_t coef, bool negated, st_buf *out) {
    int64_t den = 1;
    bool overflow = false;
    for (uint32_t i = 0; i < t->nf; i++)
        if (t->f[i].atom->kind == S_EXACT)
            for (uint32_t e = 0; e < t->f[i].exp; e++)
                overflow |= __builtin_mul_overflow(den, t->f[i].atom->d, &den);
    if (overflow) den = 1; /* cannot happen for sizes that were built; keep printing */
    uint64_t g = (uint64_t)gcd64((int64_t)coef, den); /* coef may be 2^63: |INT64_MIN| */
    uint64_t num = coef / g;
    den /= (int64_t)g;
    bool first = true;
    if (num != 1 || t->nf == 0) {
        st_buf_printf(out, "%llu", (unsigned long long)num);
        first = false;
    }
    uint32_t count = 0;
    for (uint32_t i = 0; i < t->nf; i++) count += t->f[i].exp;
    /* a lone division needs no parentheses, unless a unary minus precedes it */
    bool alone = count == 1 && first && den == 1 && !negated;
    for (uint32_t i = 0; i < t->nf; i++)
        for (uint32_t e = 0; e < t->f[i].exp; e++) {
            if (!first) st_buf_puts(out, "*");
            print_atom(t->f[i].atom, alone, out);
            first = false;
        }
    if (den != 1) st_buf_printf(out, "/%lld", (long long)den);
}

/* Terms in normal-form order, except that the first positive one leads:
 * N - 2*M rather than -2*M + N. */
static void print_poly(const st_size *s, st_buf *out) {
    if (s->nterms == 0) {
        st_buf_puts(out, "0");
        return;
    }
    uint32_t lead = 0;
    while (lead < s->nterms && s->terms[lead].coef < 0) lead++;
    if (lead == s->nterms) lead = 0;
    for (uint32_t k = 0; k < s->nterms; k++) {
        uint32_t i = k == 0 ? lead : k <= lead ? k - 1 : k;
        int64_t c = s->terms[i].coef;
        if (k == 0) {
            if (c < 0) st_buf_puts(out, "-");
        } else {
            st_buf_puts(out, c < 0 ? " - " : " + ");
        }
        print_term(&s->terms[i], magnitude(c), k == 0 && c < 0, out);
    }
}

void st_size_print(const st_size *s, st_buf *out) { print_poly(s, out); }

/* ---- sizes as expressions ---- */

/* The variable that stands for size variable `name` in def, as an i64. */
static const st_node *size_var_node(st_ctx *cx, const st_def *def, const char *name, st_err *err) {
    for (uint32_t i = 0; def && i < def->nsizes; i++)
        if (def->sizes[i]->u.name == name) return def->sizes[i];
    for (uint32_t i = 0; def && i < def->nparams; i++)
        if (def->params[i]->u.name == name && def->params[i]->size)
            return def->params[i]->type->scalar == ST_I64 ? def->params[i] : st_conv(cx, ST_I64, def->params[i], err);
    return st_fail_internal(err, "the size `%s` has no variable in scope", name), NULL;
}

static const st_node *poly_expr(st_ctx *cx, const st_def *def, const st_size *s, st_err *err);

static const st_node *atom_expr(st_ctx *cx, const st_def *def, const st_size *a, st_err *err) {
    const st_node *x, *y;
    switch (a->kind) {
    case S_VAR: return size_var_node(cx, def, a->name, err);
    case S_EXACT:
        x = size_var_node(cx, def, a->name, err);
        return x ? st_binary(cx, ST_OP_DIV, x, st_lit_int(cx, ST_I64, a->d), err) : NULL;
    case S_DIV:
    case S_MOD:
        x = poly_expr(cx, def, a->a, err);
        y = x ? poly_expr(cx, def, a->b, err) : NULL;
        return y ? st_binary(cx, a->kind == S_DIV ? ST_OP_DIV : ST_OP_MOD, x, y, err) : NULL;
    case S_EXIST:
        return st_fail(err, (st_loc){0}, "the length ?%s is known only at run time and has no expression", a->name), NULL;
    default:
        return st_fail(err, (st_loc){0}, "a size with pow or log cannot be written as an expression"), NULL;
    }
}

/* A term as a user writes it: an exact quotient's divisor is moved out and
 * reduced against the coefficient (768·⟨N/768⟩ is N, 3·⟨N/768⟩ is N / 256),
 * as the printer does. */
static const st_node *term_expr(st_ctx *cx, const st_def *def, const term *t, uint64_t coef, st_err *err) {
    int64_t den = 1;
    for (uint32_t k = 0; k < t->nf; k++)
        if (t->f[k].atom->kind == S_EXACT)
            for (uint32_t e = 0; e < t->f[k].exp; e++)
                if (__builtin_mul_overflow(den, t->f[k].atom->d, &den)) return st_fail(err, (st_loc){0}, "size arithmetic overflows 64 bits"), NULL;
    uint64_t g = (uint64_t)gcd64((int64_t)coef, den);
    uint64_t num = coef / g;
    den /= (int64_t)g;
    const st_node *prod = t->nf == 0 || num != 1 ? st_lit_int(cx, ST_I64, (int64_t)num) : NULL;
    for (uint32_t k = 0; k < t->nf; k++)
        for (uint32_t e = 0; e < t->f[k].exp; e++) {
            const st_size *a = t->f[k].atom;
            const st_node *x = a->kind == S_EXACT ? size_var_node(cx, def, a->name, err) : atom_expr(cx, def, a, err);
            if (!x) return NULL;
            prod = prod ? st_binary(cx, ST_OP_MUL, prod, x, err) : x;
            if (!prod) return NULL;
        }
    return den == 1 ? prod : st_binary(cx, ST_OP_DIV, prod, st_lit_int(cx, ST_I64, den), err);
}

static const st_node *poly_expr(st_ctx *cx, const st_def *def, const st_size *s, st_err *err) {
    const st_node *sum = NULL;
    for (uint32_t i = 0; i < s->nterms; i++) {
        const term *t = &s->terms[i];
        bool negative = t->coef < 0 && sum;
        /* a negative term is its magnitude subtracted (from 0 when it comes first) */
        const st_node *x = term_expr(cx, def, t, magnitude(t->coef), err);
        if (!x) return NULL;
        if (t->coef < 0 && !sum) x = st_binary(cx, ST_OP_SUB, st_lit_int(cx, ST_I64, 0), x, err);
        sum = !sum ? x : st_binary(cx, negative ? ST_OP_SUB : ST_OP_ADD, sum, x, err);
        if (!sum) return NULL;
    }
    return sum ? sum : st_lit_int(cx, ST_I64, 0);
}

const st_node *st_size_expr(st_ctx *cx, const st_def *def, const st_size *s, st_err *err) {
    return poly_expr(cx, def, s, err);
}
