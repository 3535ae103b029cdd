/* rewrite/fuse.c — index fusion: reading one element of a producer reads
 * only what that element needs.
 *
 * `get(i, map(f, xs))` evaluated as written computes the whole map to keep
 * one element; inside a map over i (what pad-scan builds) that is the whole
 * producer once per element. Fused, it is f(get(i, xs)), and likewise
 * through zip (a tuple of reads), iota (the index), replicate (the value),
 * join (row i / m, element i % m), a row of a split (one flat index) and a
 * row of a transpose (the element with the indices swapped).
 *
 * Every step replaces a read of a producer with reads of what the producer
 * reads, so the element is the same value the unfused read gives, and the
 * work never grows: f runs once where the map ran it n times.
 *
 * A read out of range is an error (the interpreter's), and stays one: each
 * step keeps a read whose index is checked against the length of the array
 * the program indexes, the view's own, not the longer one behind it. A map
 * or a zip reads its input at the same index, which that read checks (a map
 * whose function reads no element is not fused); a read of iota or
 * replicate stays as it is, a view codegen checks, and the index into a
 * join or a split's row is checked where it is (`iota(n) |> get(i)`, the
 * index once checked). Codegen emits no test where cg_range.c proves an
 * index in range. */
#include "rewrite.h"

#include <stdlib.h>
#include <string.h>

/* ---- a node-keyed memo: the IR is a DAG, and equal subtrees fuse alike ---- */

typedef struct fuser {
    st_ctx *cx;
    const st_def *def; /* its sizes are in scope; NULL: symbolic row lengths stay unfused */
    st_err *err;
    st_ptrmap done; /* node -> its fused form */
    bool oom;
    const st_node *read; /* the read being fused: the reads and checks it becomes stand where it stood */
} fuser;

static const st_node *memo_get(const fuser *f, const st_node *k) {
    uintptr_t v;
    return st_ptrmap_get(&f->done, k, &v) ? (const st_node *)v : NULL;
}

static void memo_put(fuser *f, const st_node *k, const st_node *v) {
    if (!st_ptrmap_put(&f->done, k, (uintptr_t)v)) f->oom = true;
}

/* ---- the depth of what runs ---- */

static bool is_checked_index(const st_node *e) { return st_is_prim(e, ST_PRIM_GET) && st_is_prim(e->kids[1], ST_PRIM_IOTA); }

/* the length of a checked index is a bound to compare with, not work */
static uint32_t cost_depth(const st_node *e, st_ptrmap *memo, bool *oom) {
    if (is_checked_index(e)) return cost_depth(e->kids[0], memo, oom);
    if (e->nkids == 0) return e->depth;
    uintptr_t v;
    if (st_ptrmap_get(memo, e, &v)) return (uint32_t)v;
    uint32_t d = 0;
    for (uint32_t k = 0; k < e->nkids; k++) {
        uint32_t dk = cost_depth(e->kids[k], memo, oom);
        if (dk > d) d = dk;
    }
    if (!st_ptrmap_put(memo, e, d + 1)) *oom = true;
    return d + 1;
}

uint32_t st_cost_depth(const st_node *e) {
    /* out of memory: the plain depth, never less */
    st_ptrmap memo = {0};
    bool oom = false;
    uint32_t d = cost_depth(e, &memo, &oom);
    st_ptrmap_free(&memo);
    return oom ? e->depth : d;
}

/* ---- fusion ---- */

/* An index expression cheap enough to repeat (a zip reads it once per
 * component, a join twice): arithmetic over variables and reads. */
static bool cheap(const st_node *i) {
    return i->type->kind == ST_TYPE_SCALAR && st_is_view(i, false) && (i->depth <= 8 || st_cost_depth(i) <= 8);
}

/* A read this cheap may be repeated wherever the array is read (see
 * inline_reads): arithmetic and reads, no loop, a bounded expression. */
enum { CHEAP_READ_DEPTH = 24 };

static const st_node *as_i64(fuser *f, const st_node *i) {
    return st_type_is_scalar(i->type, ST_I64) ? i : st_conv(f->cx, ST_I64, i, f->err);
}

/* The length s as an i64 value, or NULL (quietly) when the def's sizes
 * cannot write it. */
static const st_node *length_value(fuser *f, const st_size *s) {
    int64_t v;
    if (st_size_is_const(s, &v)) return st_lit_int(f->cx, ST_I64, v);
    if (!f->def) return NULL;
    st_err quiet = {0};
    return st_size_expr(f->cx, f->def, s, &quiet);
}

static const st_node *fuse(fuser *f, const st_node *e);
static const st_node *fuse_get(fuser *f, const st_node *i, const st_node *xs);

/* i checked against n (i64): `iota(n) |> get(i)`, whose value is i where
 * i is in [0, n) and which is an error elsewhere. An index checked already
 * against the same length is itself; NULL (quietly) where the def's sizes
 * cannot write n. */
static const st_node *checked(fuser *f, const st_node *i, const st_size *n) {
    if (is_checked_index(i) && i->kids[1]->type->size == n) return i;
    const st_node *len = length_value(f, n), *wide = len ? as_i64(f, i) : NULL;
    const st_node *iota = wide ? st_prim_node(f->cx, ST_PRIM_IOTA, 1, &len, f->err) : NULL;
    const st_node *args[2] = {wide, iota};
    const st_node *r = iota ? st_prim_node(f->cx, ST_PRIM_GET, 2, args, f->err) : NULL;
    return st_node_placed_like(f->cx, r, f->read);
}

/* `let j = i in body(j)` when i is too costly to repeat: with is the
 * variable to use, *var the binding (NULL when i is used as it is). */
static const st_node *shared_index(fuser *f, const st_node *i, const st_node **var) {
    *var = NULL;
    if (cheap(i)) return i;
    const char *name = st_fresh_name(f->cx, "j");
    *var = name ? st_let_var(f->cx, name, i) : NULL;
    if (!*var) st_fail_internal(f->err, "out of memory");
    return *var;
}

static const st_node *bind_index(fuser *f, const st_node *var, const st_node *i, const st_node *body) {
    if (!body || !var) return body;
    return st_let(f->cx, 1, &var, i, body, f->err);
}

/* fn applied to x. A lambda's body is bound to x under the lambda's own
 * parameter names (substituted when x is a variable or a literal or read
 * once), never fresh ones: x is outside the scope of the parameters, so
 * nothing is captured, and fusing one program twice gives one program. */
static const st_node *apply(fuser *f, const st_node *fn, const st_node *x) {
    if (fn->kind != ST_NODE_LAMBDA) return st_apply_fn(f->cx, fn, 1, &x, f->err);
    uint32_t k = st_lambda_nparams(fn);
    const st_node *body = st_lambda_body(fn);
    if (k == 1) {
        bool under;
        uint32_t uses = st_count_uses(body, fn->kids[0], &under);
        if (x->kind == ST_NODE_VAR || x->kind == ST_NODE_LIT || uses == 0 || (uses == 1 && !under))
            return st_subst(f->cx, body, fn->kids[0], x, f->err);
    }
    if (k > 1 && k <= 64 && x->kind == ST_NODE_TUPLE && x->nkids == k) {
        /* a tuple written out: each component substituted as above, the
         * rest bound together, when no component reads a parameter's name
         * (one substitution would then rewrite another's argument) */
        for (uint32_t p = 0; p < k; p++)
            for (uint32_t a = 0; a < k; a++)
                if (st_occurs(x->kids[a], fn->kids[p])) return st_let(f->cx, k, fn->kids, x, body, f->err);
        const st_node *params[ST_MAX_KIDS], *args[ST_MAX_KIDS];
        uint32_t kept = 0;
        for (uint32_t p = 0; p < k && body; p++) {
            bool under;
            uint32_t uses = st_count_uses(body, fn->kids[p], &under);
            const st_node *a = x->kids[p];
            if (a->kind == ST_NODE_VAR || a->kind == ST_NODE_LIT || uses == 0 || (uses == 1 && !under)) {
                body = st_subst(f->cx, body, fn->kids[p], a, f->err);
            } else {
                params[kept] = fn->kids[p];
                args[kept++] = a;
            }
        }
        if (!body || kept == 0) return body;
        const st_node *value = kept == 1 ? args[0] : st_tuple(f->cx, kept, args, f->err);
        return value ? st_let(f->cx, kept, params, value, body, f->err) : NULL;
    }
    /* one parameter, or k of them taking one k-tuple's components */
    return st_let(f->cx, k, fn->kids, x, body, f->err);
}

/* A lambda whose body reads none of its parameters. */
static bool ignores_parameters(const st_node *fn) {
    if (fn->kind != ST_NODE_LAMBDA) return false;
    for (uint32_t k = 0; k < st_lambda_nparams(fn); k++)
        if (st_occurs(st_lambda_body(fn), fn->kids[k])) return false;
    return true;
}

/* element i of xs, both fused already: what reads only that element */
static const st_node *fused_read(fuser *f, const st_node *i, const st_node *xs) {
    if ((st_is_prim(xs, ST_PRIM_MAP) || st_is_prim(xs, ST_PRIM_MAP_SEQ)) && xs->nkids == 2) {
        /* a function that reads no parameter would drop the read of its
         * element, and with it the check of i: the map's own read keeps it */
        if (ignores_parameters(xs->kids[0])) return NULL;
        const st_node *x = fuse_get(f, i, xs->kids[1]);
        const st_node *r = x ? apply(f, xs->kids[0], x) : NULL;
        return r ? fuse(f, r) : NULL; /* the function's body may read an element of x */
    }
    if (st_is_prim(xs, ST_PRIM_ZIP) && xs->nkids >= 2 && xs->nkids <= 64) {
        const st_node *var, *j = shared_index(f, i, &var), *items[ST_MAX_KIDS];
        if (!j) return NULL;
        for (uint32_t k = 0; k < xs->nkids; k++)
            if (!(items[k] = fuse_get(f, j, xs->kids[k]))) return NULL;
        return bind_index(f, var, i, st_tuple(f->cx, xs->nkids, items, f->err));
    }
    if (xs->kind == ST_NODE_LET) {
        /* element i of `let v = e in body` is `let v = e in body[i]`, unless
         * the index reads a variable of the same name (which v would capture) */
        for (uint32_t k = 0; k < st_let_nvars(xs); k++)
            if (st_occurs(i, xs->kids[k])) return NULL;
        const st_node *inner = fuse_get(f, i, st_let_body(xs));
        return inner ? st_let(f->cx, st_let_nvars(xs), xs->kids, st_let_value(xs), inner, f->err) : NULL;
    }
    /* element i of iota(n) is i checked against n: the read itself */
    if (st_is_prim(xs, ST_PRIM_IOTA)) return NULL;
    /* element i of replicate(n, x) is x, once i is checked against n: the
     * read itself, which codegen reads as a view (no memory) */
    if (st_is_prim(xs, ST_PRIM_REPLICATE) || st_is_prim(xs, ST_PRIM_SCRATCH)) return NULL;
    if (st_is_prim(xs, ST_PRIM_JOIN)) {
        /* of rows a variable, rows[j / m][j % m] is this read again (below),
         * which codegen checks against n·m as it is */
        const st_node *rows = xs->kids[0], *m = length_value(f, rows->type->elem->size);
        if (!m || rows->kind == ST_NODE_VAR) return NULL;
        /* j in [0, n·m) is row j / m < n and element j % m < m: checked
         * once, against the join's length */
        const st_node *wide = checked(f, i, xs->type->size);
        if (!wide) return NULL;
        /* named by what it spans, as an index map's variable is (elab.c):
         * one program fuses to one program, whatever fused before */
        char name[32];
        const st_node *spans[3] = {wide, rows, m};
        st_index_name(spans, 3, name, sizeof name);
        const char *interned = st_intern_cstr(f->cx, name);
        const st_node *var = interned ? st_let_var(f->cx, interned, wide) : NULL, *j = var;
        if (!j) return st_fail_internal(f->err, "out of memory"), NULL;
        const st_node *row_i = st_binary(f->cx, ST_OP_DIV, j, m, f->err);
        const st_node *col = row_i ? st_binary(f->cx, ST_OP_MOD, j, m, f->err) : NULL;
        const st_node *row = col ? fuse_get(f, row_i, rows) : NULL;
        return bind_index(f, var, wide, row ? fuse_get(f, col, row) : NULL);
    }
    if (st_is_prim(xs, ST_PRIM_GET) && st_is_prim(xs->kids[1], ST_PRIM_SPLIT)) {
        /* element i of row r of split(k, ys) is ys[r·k + i], with r checked
         * against the rows' count and i against k (r·k + i alone may be in
         * ys where i is not in its row) */
        const st_size *rows = xs->kids[1]->type->size;
        const st_node *k = length_value(f, xs->type->size);
        if (!k) return NULL;
        const st_node *r = checked(f, xs->kids[0], rows), *c = r ? checked(f, i, xs->type->size) : NULL;
        const st_node *start = r ? st_binary(f->cx, ST_OP_MUL, r, k, f->err) : NULL;
        const st_node *at = start && c ? st_binary(f->cx, ST_OP_ADD, start, c, f->err) : NULL;
        return at ? fuse_get(f, at, xs->kids[1]->kids[1]) : NULL;
    }
    if (st_is_prim(xs, ST_PRIM_GET) && xs->kids[1]->kind == ST_NODE_VAR) {
        /* rows[j / m][j % m], rows of m, is join(rows)[j]: one index, where
         * two left a compiler to see that they add up to j again (PoCL
         * gathered a scan's propagation instead of loading it in vectors) */
        const st_node *r = xs->kids[0];
        bool split_j = i->kind == ST_NODE_BINOP && i->u.binop == ST_OP_MOD && r->kind == ST_NODE_BINOP &&
                       r->u.binop == ST_OP_DIV && r->kids[0] == i->kids[0] && r->kids[1] == i->kids[1] &&
                       i->kids[1] == length_value(f, xs->type->size);
        if (!split_j) return NULL;
        const st_node *rows = xs->kids[1];
        const st_node *joined = st_prim_node(f->cx, ST_PRIM_JOIN, 1, &rows, f->err);
        const st_node *args[2] = {i->kids[0], joined};
        return joined ? st_prim_node(f->cx, ST_PRIM_GET, 2, args, f->err) : NULL;
    }
    if (st_is_prim(xs, ST_PRIM_GET) && st_is_prim(xs->kids[1], ST_PRIM_TRANSPOSE)) {
        /* transpose(ys)[r][i] is ys[i][r] */
        const st_node *row = fuse_get(f, i, xs->kids[1]->kids[0]);
        return row ? fuse_get(f, xs->kids[0], row) : NULL;
    }
    return NULL;
}

/* get(i, xs) fused where it can be; its type is always the read's own */
static const st_node *fuse_get(fuser *f, const st_node *i, const st_node *xs) {
    const st_node *args[2] = {i, xs};
    const st_node *plain = st_prim_node(f->cx, ST_PRIM_GET, 2, args, f->err);
    if (!plain) return NULL;
    st_node_placed_like(f->cx, plain, f->read);
    if (f->err->message[0]) return NULL;
    const st_node *r = fused_read(f, i, xs);
    if (f->err->message[0]) return NULL;
    /* a form the read's type does not come back from (a zip the
     * constructors laid out otherwise) stays a read of the whole */
    return r && r->type == plain->type ? r : plain;
}

/* How many reads `get(_, var)` of the free var there are in e. */
static uint32_t reads_of(const st_node *e, const st_node *var) {
    if (e->kind == ST_NODE_LAMBDA)
        for (uint32_t k = 0; k < st_lambda_nparams(e); k++)
            if (e->kids[k] == var) return 0;
    uint32_t n = st_is_prim(e, ST_PRIM_GET) && e->kids[1] == var, last = e->nkids;
    if (e->kind == ST_NODE_LET)
        for (uint32_t k = 0; k < st_let_nvars(e); k++)
            if (e->kids[k] == var) last = e->nkids - 1; /* the body sees another var */
    for (uint32_t k = 0; k < last; k++)
        if (!st_is_binder(e, k)) n += reads_of(e->kids[k], var);
    return n;
}

/* `let xs = value in body` where body only reads elements of xs, and an
 * element of value costs a few operations and reads (no loop): each read
 * becomes that element, and xs is never stored. So the copy that keeps the
 * first n elements of a padded scan (iota(n) |> map(i => scanned |> get(i)))
 * reads the scan's last step element by element, and is that step's kernel,
 * not a kernel after it. The lets value is made of are floated out first
 * (each computed once, as before), when body does not see their names. */
static const st_node *inline_reads(fuser *f, const st_node *let) {
    if (st_let_nvars(let) != 1) return NULL;
    const st_node *var = let->kids[0], *value = st_let_value(let), *body = st_let_body(let);
    if (var->type->kind != ST_TYPE_ARRAY) return NULL;
    enum { MAX_CHAIN = 64 }; /* lets around the value; a longer chain is left as it is */
    const st_node *chain[MAX_CHAIN];
    uint32_t n = 0;
    for (; value->kind == ST_NODE_LET; value = st_let_body(value)) {
        if (n == MAX_CHAIN) return NULL;
        for (uint32_t k = 0; k < st_let_nvars(value); k++)
            if (st_occurs(body, value->kids[k]) || value->kids[k]->u.name == var->u.name) return NULL;
        chain[n++] = value;
    }
    uint32_t uses = st_count_uses(body, var, NULL);
    if (uses == 0 || reads_of(body, var) != uses) return NULL;
    const st_node *k = st_fresh_var(f->cx, "k", st_type_scalar(f->cx, ST_I64));
    const st_node *read = k ? fuse_get(f, k, value) : NULL;
    if (f->err->message[0]) return NULL;
    if (!read || (read->depth > CHEAP_READ_DEPTH && st_cost_depth(read) > CHEAP_READ_DEPTH) || !st_is_view_scalar(read) ||
        reads_of(read, var))
        return NULL;
    const st_node *r = st_subst(f->cx, body, var, value, f->err);
    r = r ? fuse(f, r) : NULL;
    while (r && n-- > 0) r = st_let(f->cx, st_let_nvars(chain[n]), chain[n]->kids, st_let_value(chain[n]), r, f->err);
    return r;
}

static const st_node *fuse(fuser *f, const st_node *e) {
    if (e->kind == ST_NODE_LIT || e->kind == ST_NODE_VAR || e->kind == ST_NODE_OPFN) return e;
    const st_node *done = memo_get(f, e);
    if (done) return done;
    const st_node *k[ST_MAX_KIDS];
    bool changed = false;
    for (uint32_t j = 0; j < e->nkids; j++) {
        k[j] = st_is_binder(e, j) ? e->kids[j] : fuse(f, e->kids[j]);
        if (!k[j]) return NULL;
        changed |= k[j] != e->kids[j];
    }
    const st_node *r = changed ? st_rebuild(f->cx, e, k, f->err) : e;
    /* what a read becomes stands where it stood: a check made here (of an
     * index into a view) names the user's line and column */
    if (r && st_is_prim(r, ST_PRIM_GET)) {
        const st_node *outer = f->read;
        f->read = r;
        r = fuse_get(f, r->kids[0], r->kids[1]);
        st_node_placed_like(f->cx, r, f->read);
        f->read = outer;
    }
    if (r && r->kind == ST_NODE_LET) {
        const st_node *inlined = inline_reads(f, r);
        if (f->err->message[0]) r = NULL;
        else if (inlined) r = inlined;
    }
    if (r) memo_put(f, e, r);
    return r;
}

const st_node *st_fuse_index(st_ctx *cx, const st_def *def, const st_node *e, st_err *err) {
    /* errors of its own, so that "not fusible" (a NULL with no message)
     * is told apart from a failure whatever err held before */
    st_err inner = {0};
    fuser f = {.cx = cx, .def = def, .err = &inner};
    const st_node *r = fuse(&f, e);
    st_ptrmap_free(&f.done);
    if (r && f.oom) return st_fail_internal(err, "out of memory"), NULL;
    if (!r && !inner.message[0]) st_fail_internal(&inner, "index fusion built nothing");
    if (!r && err) *err = inner;
    return r;
}
