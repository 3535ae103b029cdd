/* rewrite/subst.c — what rules need to build IR safely: fresh variables,
 * capture-avoiding substitution, applying a function, counting uses.
 *
 * Variables are (name, type) pairs, so two binders of one name and type are
 * one node: scoping is lexical, and substitution must respect it. Every walk
 * here is memoised by node, because the IR is a DAG and a rewrite can share
 * one subtree in many places. */
#include "rewrite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ---- binders ---- */

/* The variables n binds over the kid at index i (none, for most). */
static bool binds_over(const st_node *n, uint32_t i, const st_node *var) {
    uint32_t k;
    switch (n->kind) {
    case ST_NODE_LET: /* the vars scope over the body only, not the value */
        k = st_let_nvars(n);
        if (i != n->nkids - 1) return false;
        break;
    case ST_NODE_LAMBDA:
        k = st_lambda_nparams(n);
        if (i != n->nkids - 1) return false;
        break;
    default: return false;
    }
    for (uint32_t j = 0; j < k; j++)
        if (n->kids[j] == var) return true;
    return false;
}

/* ---- uses ---- */

typedef struct uses {
    const st_node *var;
    st_ptrmap m; /* node -> count << 1 | under_lambda */
} uses;

static uintptr_t count(uses *u, const st_node *e) {
    if (e == u->var) return 2;
    if (e->nkids == 0) return 0;
    uintptr_t v;
    if (st_ptrmap_get(&u->m, e, &v)) return v;
    uintptr_t total = 0, under = 0;
    for (uint32_t i = 0; i < e->nkids; i++) {
        if (st_is_binder(e, i) || binds_over(e, i, u->var)) continue;
        uintptr_t c = count(u, e->kids[i]);
        total += c >> 1;
        under |= (c & 1) | (e->kind == ST_NODE_LAMBDA && c ? 1 : 0);
    }
    v = total << 1 | under;
    st_ptrmap_put(&u->m, e, v);
    return v;
}

uint32_t st_count_uses(const st_node *e, const st_node *var, bool *under_lambda) {
    uses u = {var, {0}};
    uintptr_t c = count(&u, e);
    st_ptrmap_free(&u.m);
    if (under_lambda) *under_lambda = c & 1;
    return (uint32_t)(c >> 1);
}

bool st_occurs(const st_node *e, const st_node *var) { return st_count_uses(e, var, NULL) > 0; }

/* ---- substitution ---- */

const st_node *st_fresh_var(st_ctx *cx, const char *base, const st_type *t) {
    const char *name = st_fresh_name(cx, base);
    return name ? st_var(cx, name, t, NULL) : NULL;
}

typedef struct subst {
    st_ctx *cx;
    const st_node *var, *repl;
    uses occ;   /* where var occurs, to stop early */
    st_ptrmap done;  /* node -> its substituted form */
    st_ptrmap repl_names; /* the variable names in repl, collected once */
    st_err *err;
} subst;

/* the base of a name, without a previous fresh suffix: acc_12 -> acc */
static void base_of(const char *name, char *out, size_t cap) {
    snprintf(out, cap, "%s", name);
    char *u = strrchr(out, '_');
    if (u && u[1]) {
        char *p = u + 1;
        while (*p >= '0' && *p <= '9') p++;
        if (!*p) *u = 0;
    }
}

static const st_node *sub(subst *s, const st_node *e);

/* Every variable name in e, into names (name -> 1). Names, not nodes: two
 * variables of one name but different types (or sizes) are different nodes,
 * yet a printed program tells them apart by scope alone. */
static void collect_names(const st_node *e, st_ptrmap *names, st_ptrmap *seen) {
    if (e->kind == ST_NODE_VAR) {
        st_ptrmap_put(names, e->u.name, 1);
        return;
    }
    uintptr_t v;
    if (st_ptrmap_get(seen, e, &v)) return;
    st_ptrmap_put(seen, e, 1);
    for (uint32_t i = 0; i < e->nkids; i++) collect_names(e->kids[i], names, seen);
}

/* A binder of e that would capture a variable of the replacement, or merely
 * share a name with one (and so capture it once printed), gets a fresh name
 * throughout its scope first. */
static const st_node *rename_capturing(subst *s, const st_node *e) {
    uint32_t k = e->kind == ST_NODE_LET ? st_let_nvars(e) : st_lambda_nparams(e);
    const st_node *kids[ST_MAX_KIDS];
    memcpy(kids, e->kids, e->nkids * sizeof *kids);
    bool renamed = false;
    for (uint32_t j = 0; j < k; j++) {
        uintptr_t clash;
        if (!st_ptrmap_get(&s->repl_names, kids[j]->u.name, &clash)) continue;
        char base[96];
        base_of(kids[j]->u.name, base, sizeof base);
        const char *name = st_fresh_name(s->cx, base);
        const st_node *fresh = name ? st_var(s->cx, name, kids[j]->type, kids[j]->size) : NULL; /* same value: same size */
        const st_node *body = fresh ? st_subst(s->cx, kids[e->nkids - 1], kids[j], fresh, s->err) : NULL;
        if (!body) return NULL;
        kids[j] = fresh;
        kids[e->nkids - 1] = body;
        renamed = true;
    }
    if (!renamed) return e;
    const st_node *r = e->kind == ST_NODE_LET ? st_let(s->cx, k, kids, kids[k], kids[k + 1], s->err)
                                              : st_lambda(s->cx, k, kids, kids[k], s->err);
    return st_node_placed_like(s->cx, r, e);
}

static const st_node *sub(subst *s, const st_node *e) {
    if (e == s->var) return s->repl;
    if (e->nkids == 0 || !(count(&s->occ, e) >> 1)) return e;
    uintptr_t v;
    if (st_ptrmap_get(&s->done, e, &v)) return (const st_node *)v;
    const st_node *n = e;
    if ((e->kind == ST_NODE_LET || e->kind == ST_NODE_LAMBDA) && !binds_over(e, e->nkids - 1, s->var))
        n = rename_capturing(s, e);
    if (!n) return NULL;
    const st_node *kids[ST_MAX_KIDS];
    for (uint32_t i = 0; i < n->nkids; i++) {
        if (st_is_binder(n, i) || binds_over(n, i, s->var)) kids[i] = n->kids[i];
        else if (!(kids[i] = sub(s, n->kids[i]))) return NULL;
    }
    const st_node *r = st_rebuild(s->cx, n, kids, s->err);
    if (r) st_ptrmap_put(&s->done, e, (uintptr_t)r);
    return r;
}

const st_node *st_subst(st_ctx *cx, const st_node *e, const st_node *var, const st_node *repl,
                        st_err *err) {
    if (repl->type != var->type) return st_fail_internal(err, "substituting a value of another type for `%s`", var->u.name), NULL;
    subst s = {cx, var, repl, {var, {0}}, {0}, {0}, err};
    st_ptrmap seen = {0};
    collect_names(repl, &s.repl_names, &seen);
    st_ptrmap_free(&seen);
    const st_node *r = sub(&s, e);
    st_ptrmap_free(&s.occ.m);
    st_ptrmap_free(&s.done);
    st_ptrmap_free(&s.repl_names);
    return r;
}

/* ---- application ---- */

const st_node *st_apply_fn(st_ctx *cx, const st_node *f, uint32_t nargs,
                           const st_node *const *args, st_err *err) {
    if (f->kind == ST_NODE_OPFN) {
        if (nargs != 2) return st_fail_internal(err, "an operator applied to %u arguments", nargs), NULL;
        return st_binary(cx, f->u.binop, args[0], args[1], err);
    }
    if (f->kind != ST_NODE_LAMBDA) return st_fail_internal(err, "applying something that is not a function"), NULL;
    uint32_t k = st_lambda_nparams(f);
    const st_node *binds[ST_MAX_KIDS], *fresh[ST_MAX_KIDS];
    const st_node *tuple_arg = NULL; /* one k-tuple for k parameters, not written as a tuple */
    if (k == nargs) {
        memcpy(binds, args, k * sizeof *binds);
    } else if (nargs == 1 && k > 1 && args[0]->type->kind == ST_TYPE_TUPLE && args[0]->type->n == k) {
        if (args[0]->kind == ST_NODE_TUPLE) memcpy(binds, args[0]->kids, k * sizeof *binds);
        else tuple_arg = args[0];
    } else {
        return st_fail_internal(err, "a function of %u parameters applied to %u arguments", k, nargs), NULL;
    }
    /* rename every parameter first, so that an argument mentioning a
     * variable named like a parameter is not captured */
    const st_node *body = st_lambda_body(f);
    for (uint32_t i = 0; i < k; i++) {
        char base[96];
        base_of(f->kids[i]->u.name, base, sizeof base);
        if (!(fresh[i] = st_fresh_var(cx, base, f->kids[i]->type)) || !(body = st_subst(cx, body, f->kids[i], fresh[i], err)))
            return NULL;
    }
    if (tuple_arg && tuple_arg->kind == ST_NODE_VAR) { /* a tuple variable: its components are projections */
        for (uint32_t i = 0; i < k && body; i++) {
            const st_node *component = st_proj(cx, tuple_arg, i, err);
            body = component ? st_subst(cx, body, fresh[i], component, err) : NULL;
        }
        return body;
    }
    if (tuple_arg) return st_let(cx, k, fresh, tuple_arg, body, err);
    /* a variable, a literal, or something used once outside any lambda is
     * substituted; anything else is computed once by a let */
    const st_node *lets[ST_MAX_KIDS], *values[ST_MAX_KIDS];
    uint32_t nlets = 0;
    for (uint32_t i = 0; i < k && body; i++) {
        bool under;
        uint32_t uses = st_count_uses(body, fresh[i], &under);
        const st_node *a = binds[i];
        if (a->kind == ST_NODE_VAR || a->kind == ST_NODE_LIT || uses == 0 || (uses == 1 && !under)) {
            body = st_subst(cx, body, fresh[i], a, err);
        } else {
            /* bound as the type checker would bind it (its size, if any) */
            const st_node *bound = st_let_var(cx, fresh[i]->u.name, a);
            body = st_subst(cx, body, fresh[i], bound, err);
            lets[nlets] = bound;
            values[nlets++] = a;
        }
    }
    while (body && nlets-- > 0) body = st_let(cx, 1, &lets[nlets], values[nlets], body, err);
    return body;
}

/* ---- equal up to bound names ---- */

typedef struct renaming {
    const char *a, *b;
    const struct renaming *next;
} renaming;

static bool alpha(const st_node *a, const st_node *b, const renaming *r) {
    if (a->kind != b->kind || a->type != b->type || a->nkids != b->nkids) return false;
    if (a->kind == ST_NODE_VAR) {
        for (const renaming *q = r; q; q = q->next)
            if (q->a == a->u.name || q->b == b->u.name) return q->a == a->u.name && q->b == b->u.name;
        return a == b; /* free in both */
    }
    if (!st_same_payload(a, b)) return false;
    if (a->nkids == 0) return a == b;
    bool binds = a->kind == ST_NODE_LET || a->kind == ST_NODE_LAMBDA;
    uint32_t nb = !binds ? 0 : a->kind == ST_NODE_LET ? st_let_nvars(a) : st_lambda_nparams(a);
    renaming inner[ST_MAX_KIDS];
    const renaming *in = r;
    for (uint32_t i = 0; i < nb && i < ST_MAX_KIDS; i++) {
        if (a->kids[i]->type != b->kids[i]->type) return false;
        inner[i] = (renaming){a->kids[i]->u.name, b->kids[i]->u.name, in};
        in = &inner[i];
    }
    for (uint32_t i = nb; i < a->nkids; i++) {
        /* a let's value is outside its pattern's scope, its body inside */
        bool scoped = binds && i == a->nkids - 1;
        if (!alpha(a->kids[i], b->kids[i], scoped ? in : r)) return false;
    }
    return true;
}

bool st_alpha_equal(const st_node *a, const st_node *b) { return a == b || (a && b && alpha(a, b, NULL)); }

/* ---- canonical names ---- */

typedef struct canon {
    st_ctx *cx;
    st_ptrmap used; /* interned name -> 1 */
    st_err *err;
} canon;

static const char *canon_name(canon *c, const char *old) {
    char base[96], name[112];
    base_of(old, base, sizeof base);
    uintptr_t v;
    snprintf(name, sizeof name, "%s", base);
    for (unsigned k = 2; st_ptrmap_get(&c->used, st_intern(c->cx, name, strlen(name)), &v); k++)
        snprintf(name, sizeof name, "%s_%u", base, k);
    const char *interned = st_intern(c->cx, name, strlen(name));
    if (!interned || !st_ptrmap_put(&c->used, interned, 1)) return st_fail_internal(c->err, "out of memory"), NULL;
    return interned;
}

/* e with its binders renamed in program order (a let's pattern, then its
 * value, then its body). A subtree shared in the DAG is renamed at each
 * place it occurs, as it prints. */
static const st_node *canon_node(canon *c, const st_node *e) {
    if (!e || e->nkids == 0) return e;
    const st_node *kids[ST_MAX_KIDS];
    memcpy(kids, e->kids, e->nkids * sizeof *kids);
    bool binder = e->kind == ST_NODE_LET || e->kind == ST_NODE_LAMBDA;
    if (!binder) {
        for (uint32_t i = 0; i < e->nkids; i++)
            if (!(kids[i] = canon_node(c, kids[i]))) return NULL;
        return st_rebuild(c->cx, e, kids, c->err);
    }
    uint32_t k = e->kind == ST_NODE_LET ? st_let_nvars(e) : st_lambda_nparams(e), body = e->nkids - 1;
    for (uint32_t j = 0; j < k; j++) { /* the pattern first, as it prints (it scopes over the body alone) */
        const char *name = canon_name(c, kids[j]->u.name);
        const st_node *now = name ? st_var(c->cx, name, kids[j]->type, kids[j]->size) : NULL;
        if (!now) return NULL;
        if (now != kids[j] && !(kids[body] = st_subst(c->cx, kids[body], kids[j], now, c->err))) return NULL;
        kids[j] = now;
    }
    if (e->kind == ST_NODE_LET && !(kids[k] = canon_node(c, kids[k]))) return NULL;
    if (!(kids[body] = canon_node(c, kids[body]))) return NULL;
    const st_node *r = e->kind == ST_NODE_LET ? st_let(c->cx, k, kids, kids[k], kids[body], c->err)
                                              : st_lambda(c->cx, k, kids, kids[body], c->err);
    return st_node_placed_like(c->cx, r, e);
}

const st_def *st_def_canonical(st_ctx *cx, const st_def *def, st_err *err) {
    canon c = {.cx = cx, .err = err};
    bool ok = true;
    for (uint32_t i = 0; ok && i < def->nparams; i++) ok = st_ptrmap_put(&c.used, def->params[i]->u.name, 1);
    for (uint32_t i = 0; ok && i < def->nsizes; i++) ok = st_ptrmap_put(&c.used, def->sizes[i]->u.name, 1);
    const st_node *body = ok ? canon_node(&c, def->body) : (st_fail_internal(err, "out of memory"), NULL);
    st_ptrmap_free(&c.used);
    if (!body) return NULL;
    if (body == def->body) return def;
    st_def *d = st_ctx_alloc(cx, sizeof *d);
    if (!d) return st_fail_internal(err, "out of memory"), NULL;
    *d = *def;
    d->body = body;
    return d;
}

/* ---- exclusive scans as scans of a shifted input ---- */

const st_node *st_exclusive_at(st_ctx *cx, const st_node *xs, const st_node *i, const st_node *z,
                               st_err *err) {
    const st_node *one = st_lit_int(cx, ST_I64, 1), *zero = st_lit_int(cx, ST_I64, 0);
    const st_node *prev = st_binary(cx, ST_OP_SUB, i, one, err);
    const st_node *before_i = prev ? st_binary(cx, ST_OP_MAX, prev, zero, err) : NULL;
    const st_node *read = before_i ? st_prim_node(cx, ST_PRIM_GET, 2, (const st_node *[]){before_i, xs}, err) : NULL;
    const st_node *p = read ? st_fresh_var(cx, "before", read->type) : NULL;
    const st_node *first = p ? st_binary(cx, ST_OP_EQ, i, zero, err) : NULL;
    const st_node *pick = first ? st_if(cx, first, z, p, err) : NULL;
    return pick ? st_let(cx, 1, &p, read, pick, err) : NULL;
}

typedef struct exscans {
    st_ctx *cx;
    const st_def *def;
    st_ptrmap done; /* node -> its rewrite */
    st_err *err;
} exscans;

/* exscan(op, z, xs) as the scan of xs shifted right (st_exscans_as_scans) */
static const st_node *shifted_scan(exscans *x, const st_node *e) {
    st_ctx *cx = x->cx;
    const st_node *op = e->kids[0], *z = e->kids[1], *xs = e->kids[2];
    const st_size *n = xs->type->size;
    int64_t len;
    const st_node *n_e = st_size_is_const(n, &len) ? st_lit_int(cx, ST_I64, len)
                         : x->def                  ? st_size_expr(cx, x->def, n, x->err)
                                                   : (st_fail_internal(x->err, "an exscan of a symbolic length outside a def"), NULL);
    const st_node *i = n_e ? st_fresh_var(cx, "i", st_type_scalar(cx, ST_I64)) : NULL;
    const st_node *item = i ? st_exclusive_at(cx, xs, i, z, x->err) : NULL;
    if (item) item = st_fuse_index(cx, x->def, item, x->err);
    const st_node *input = NULL;
    if (item && xs->kind != ST_NODE_VAR && !st_is_view_scalar(item)) {
        /* an element of xs costs more than a read (xs is a scan, a
         * reduction's rows): xs is computed once, into memory */
        const char *name = st_fresh_name(cx, "input");
        input = name ? st_let_var(cx, name, xs) : NULL;
        item = input ? st_exclusive_at(cx, input, i, z, x->err) : NULL;
    }
    const st_node *f = item ? st_lambda(cx, 1, &i, item, x->err) : NULL;
    const st_node *idx = f ? st_prim_node(cx, ST_PRIM_IOTA, 1, &n_e, x->err) : NULL;
    const st_node *shifted = idx ? st_prim_node(cx, ST_PRIM_MAP, 2, (const st_node *[]){f, idx}, x->err) : NULL;
    const st_node *scan = shifted ? st_prim_node(cx, ST_PRIM_SCAN, 3, (const st_node *[]){op, z, shifted}, x->err) : NULL;
    if (!scan && x->err->kind != ST_ERR_INTERNAL) { /* the exscan typed, so its scan must: a bug here */
        char inner[sizeof x->err->message];
        snprintf(inner, sizeof inner, "%s", x->err->message);
        st_fail_internal(x->err, "an exscan as a scan: %s", inner);
    }
    return scan && input ? st_let(cx, 1, &input, xs, scan, x->err) : scan;
}

static const st_node *desugar(exscans *x, const st_node *e) {
    if (!e || e->nkids == 0) return e;
    uintptr_t v;
    if (st_ptrmap_get(&x->done, e, &v)) return (const st_node *)v;
    const st_node *kids[ST_MAX_KIDS];
    for (uint32_t i = 0; i < e->nkids; i++)
        if (!(kids[i] = desugar(x, e->kids[i]))) return NULL;
    const st_node *r = st_rebuild(x->cx, e, kids, x->err);
    if (r && r->kind == ST_NODE_PRIM && r->u.prim == ST_PRIM_EXSCAN) {
        /* element 0 of the shifted input is z, so z op z must be z: a seed
         * strata knows is not op's neutral element comes out first, and
         * the exscan of the neutral element it leaves is shifted */
        const st_node *out = st_seed_taken_out(x->cx, r, x->err);
        r = out && out != r ? desugar(x, out) : out ? shifted_scan(x, r) : NULL;
        r = st_node_placed_like(x->cx, r, e);
    }
    if (r && !st_ptrmap_put(&x->done, e, (uintptr_t)r)) return st_fail_internal(x->err, "out of memory"), NULL;
    return r;
}

const st_node *st_exscans_as_scans(st_ctx *cx, const st_def *def, const st_node *e, st_err *err) {
    st_err inner = {0};
    exscans x = {.cx = cx, .def = def, .err = &inner};
    const st_node *r = desugar(&x, e);
    st_ptrmap_free(&x.done);
    if (!r && err) *err = inner;
    return r;
}
