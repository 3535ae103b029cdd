/* ir/interp.c — the reference interpreter: the meaning of every primitive.
 *
 * It is the oracle every rewrite and every generated kernel is checked
 * against, so it is written for obviousness: sequential, left to right.
 * reduce and scan fold from their neutral element (so a scan seeded with a
 * prefix, as the rewrite rules produce, means what it says); scatter and
 * reduce_by_index (and their 2-D forms, at r*m + c of each (r, c) pair) skip
 * indices outside the destination, and for repeated
 * indices scatter's last write wins (codegen makes the device's the same);
 * scatterDistinct, whose rule promises distinct indices, fails on one.
 *
 * filter, partition, take and drop bind the existential length they make
 * (?k) in the interpreter's size environment when they run, so that every
 * later value whose type mentions it is allocated at its actual length; in
 * a loop it is bound again each turn.
 *
 * Memory: values live in the caller's arena. A loop over elements sets a mark
 * before each iteration and releases it once the result is copied out, so a
 * map over a million rows does not keep a million temporaries.
 *
 * Kept values: a reduction, scan, histogram or scatter inside a function
 * that reads nothing the function binds (xs |> map(x => x / reduce(+, 0.0,
 * xs))) has the same value at every call. It is computed once and kept,
 * in an arena of its own, for as long as every variable it reads has the
 * binding it had then and no length known only at run time was bound
 * since; without this the interpreter, the oracle of --check, took a time
 * quadratic in N on such programs, as written. */
#include "interp_fast.h"
#include "scalar_ops.h"
#include "value.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct slot {
    const st_node *var;
    st_value value;
    uint64_t serial; /* which binding: a count of binds, unique in one st_eval */
} slot;

/* A value kept for node: valid while each of vars still resolves to the
 * binding of serials[i] (0: to none) and env_serial is the interpreter's. */
typedef struct kept {
    const st_node *node;
    const st_node **vars;
    uint64_t *serials;
    uint32_t nvars;
    uint64_t env_serial;
    st_value value;
} kept;

typedef struct interp {
    st_ctx *cx;
    st_arena *a;
    st_err *err;
    const st_def *def;
    st_binding *env; /* the def's sizes, then the existentials bound so far */
    size_t nenv, capenv;
    uint64_t env_serial; /* bumped each time a length is bound */
    slot *vars;
    size_t n, cap;
    uint64_t serial;  /* binds so far */
    size_t fn_base;   /* the first slot the innermost function application bound; SIZE_MAX outside any */
    st_arena *kept_in; /* kept values and what describes them, made at the first */
    kept *keeps;
    size_t nkeeps, capkeeps;
    st_fast *fast; /* the compiled functions; NULL: the generic path only */
} interp;

static bool eval(interp *I, const st_node *n, st_value *out);

/* What went wrong, at n's line in the source (or the def's), and n itself. */
__attribute__((format(printf, 3, 4))) static bool runtime_error(interp *I, const st_node *n, const char *fmt, ...) {
    char what[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    st_buf b = {0};
    st_print_node(n, &b);
    const char *text = b.data ? b.data : "?";
    st_fail(I->err, st_node_loc_or(I->cx, n, I->def->loc), "%s in `%.*s%s` (in def %s)", what, 120, text,
            b.len > 120 ? "…" : "", I->def->name);
    st_buf_free(&b);
    return false;
}

static bool bind(interp *I, const st_node *var, const st_value *v) {
    if (!st_grow(&I->vars, sizeof *I->vars, I->n, &I->cap, 64)) return st_fail_internal(I->err, "out of memory");
    I->vars[I->n++] = (slot){var, *v, ++I->serial};
    return true;
}

/* The existential `exist` (1·?k) is `value` from now on. */
static bool bind_size(interp *I, const st_size *exist, int64_t value) {
    const char *name = st_size_exist_name(exist);
    I->env_serial++;
    for (size_t i = 0; i < I->nenv; i++)
        if (I->env[i].name == name) return (I->env[i].value = value), true;
    if (I->nenv == I->capenv) {
        size_t cap = I->capenv ? I->capenv * 2 : 16;
        st_binding *e = realloc(I->env, cap * sizeof *e);
        if (!e) return st_fail_internal(I->err, "out of memory");
        I->env = e;
        I->capenv = cap;
    }
    I->env[I->nenv++] = (st_binding){name, value};
    return true;
}

/* Lengths the types say are equal are equal in values, except where a
 * length known only at run time was rebound in between (a count shadowed by
 * another of its name, take(k, xs) of both): refused here rather than read or
 * written out of bounds. */
static bool same_length(interp *I, const st_node *n, int64_t a, int64_t b) {
    if (a == b) return true;
    return runtime_error(I, n, "lengths known only at run time disagree (%lld and %lld)", (long long)a, (long long)b);
}

static bool alloc(interp *I, const st_type *t, st_value *out) {
    return st_value_alloc(I->a, t, I->env, I->nenv, out, I->err);
}

/* ---- the fast path (interp_fast.h) ---- */

static const slot *slot_of(const interp *I, const st_node *var);

static bool lookup_var(void *ctx, const st_node *var, st_value *out) {
    const slot *s = slot_of(ctx, var);
    if (s) *out = s->value;
    return s != NULL;
}

/* fn compiled, or NULL where the generic path runs it */
static const st_fast_fn *fast_fn(interp *I, const st_node *fn) {
    return I->fast ? st_fast_compile(I->fast, fn) : NULL;
}

static bool index_error(interp *I, const st_node *n, st_scalar_kind k, st_scalar index, int64_t len);
static bool distinct_error(interp *I, const st_node *n, int64_t elem, int64_t place);

/* Did the fast path do it (*ok: and succeed)? A fault is reported as the
 * generic path reports it; n: the primitive that ran. */
static bool fast_did(interp *I, const st_node *n, st_fast_status st, const st_fast_fault *f, bool *ok) {
    if (st == ST_FAST_DECLINED) return false;
    *ok = st == ST_FAST_DONE;
    if (st == ST_FAST_FAULT) switch (f->kind) {
        case ST_FAST_DIV_ZERO: runtime_error(I, f->node, "division by zero"); break;
        case ST_FAST_INDEX: index_error(I, f->node, f->index_kind, f->index, f->length); break;
        case ST_FAST_DISTINCT: distinct_error(I, n, f->elem, f->place); break;
        default: st_fail_internal(I->err, "out of memory"); break;
        }
    return true;
}

/* ---- functions ---- */

/* Apply a lambda or operator to nargs arguments; a lambda of k parameters
 * given one k-tuple takes its components. */
static bool apply(interp *I, const st_node *f, const st_value *args, int nargs, st_value *out) {
    if (f->kind == ST_NODE_OPFN) {
        bool ok = true;
        st_scalar_kind k = f->type->items[0]->scalar;
        *out = st_value_scalar(st_binop_result(f->u.binop, k), st_scalar_binop(f->u.binop, k, args[0].u.s, args[1].u.s, &ok));
        return ok || runtime_error(I, f, "division by zero");
    }
    uint32_t np = st_lambda_nparams(f);
    size_t mark = I->n, outer_base = I->fn_base;
    bool ok = true;
    if ((int)np == nargs) {
        for (uint32_t i = 0; i < np && ok; i++) ok = bind(I, f->kids[i], &args[i]);
    } else {
        for (uint32_t i = 0; i < np && ok; i++) ok = bind(I, f->kids[i], &args[0].u.items[i]);
    }
    I->fn_base = mark;
    ok = ok && eval(I, st_lambda_body(f), out);
    I->fn_base = outer_base;
    I->n = mark;
    return ok;
}

/* ---- primitives ---- */

static bool map(interp *I, const st_node *n, const st_value *xs, st_value *out) {
    if (!alloc(I, n->type, out)) return false;
    int64_t len = st_value_length(xs);
    if (!same_length(I, n, st_value_length(out), len)) return false;
    const st_fast_fn *f = fast_fn(I, n->kids[0]);
    st_fast_scope sc = {lookup_var, I};
    st_fast_fault fault;
    bool ok;
    if (f && fast_did(I, n, st_fast_map(f, &sc, xs, out, &fault), &fault, &ok)) return ok;
    for (int64_t i = 0; i < len; i++) {
        st_arena_mark m = st_arena_get_mark(I->a);
        st_value x, r;
        if (!st_value_elem(I->a, xs, i, &x, I->err) || !apply(I, n->kids[0], &x, 1, &r)) return false;
        st_value_store(out, i, &r);
        st_arena_release(I->a, m);
    }
    return true;
}

/* ---- floats: combined in a balanced tree ----
 *
 * A reduction or scan whose elements hold a float combines them in a
 * balanced tree rather than left to right: its rounding error then grows
 * with log n, not n (a left fold of 2^26 ones in f32 sticks at 2^24), so the
 * reference stays within the bound a check allows any correct order of
 * (st_expected_agree). The operator is associative, as every parallel rule
 * assumes, so the value is the fold's up to rounding: z ⊕ (x0 ⊕ … ⊕ xn-1).
 * Integers keep the left fold, exact in any order. */

enum { TREE_LEAF = 8 }; /* elements a leaf of the tree folds left to right */

/* into = op(x, y) */
static bool combine(interp *I, const st_node *op, const st_value *x, const st_value *y, st_value *into) {
    st_arena_mark m = st_arena_get_mark(I->a);
    st_value args[2] = {*x, *y}, r;
    if (!apply(I, op, args, 2, &r)) return false;
    st_value_copy_into(into, &r);
    st_arena_release(I->a, m);
    return true;
}

/* Element i of what a tree combines: xs[order[i]], or xs[i] without an order. */
static bool tree_elem(interp *I, const st_value *xs, const int64_t *order, int64_t i, st_value *out) {
    return st_value_elem(I->a, xs, order ? order[i] : i, out, I->err);
}

/* acc = elements [lo, hi) of xs (lo < hi) combined by op, halves first;
 * acc is storage of type t, the accumulator's. */
static bool tree_reduce(interp *I, const st_node *op, const st_type *t, const st_value *xs, const int64_t *order,
                        int64_t lo, int64_t hi, st_value *acc) {
    st_arena_mark m = st_arena_get_mark(I->a);
    st_value x, left, right;
    bool ok;
    if (hi - lo <= TREE_LEAF) {
        ok = tree_elem(I, xs, order, lo, &x);
        if (ok) st_value_copy_into(acc, &x);
        for (int64_t i = lo + 1; ok && i < hi; i++) ok = tree_elem(I, xs, order, i, &x) && combine(I, op, acc, &x, acc);
    } else {
        int64_t mid = lo + (hi - lo) / 2;
        ok = alloc(I, t, &left) && alloc(I, t, &right) && tree_reduce(I, op, t, xs, order, lo, mid, &left) &&
             tree_reduce(I, op, t, xs, order, mid, hi, &right) && combine(I, op, &left, &right, acc);
    }
    st_arena_release(I->a, m);
    return ok;
}

/* The inclusive scan of v's n elements by op, in place, each prefix a tree
 * of depth about 2 log2 n: neighbours are combined in pairs, the pairs
 * scanned (so), and each element is its pair's prefix, or the prefix of
 * the pair before it combined with it. */
static bool tree_scan(interp *I, const st_node *op, st_value *v, int64_t n) {
    st_arena_mark m = st_arena_get_mark(I->a);
    st_value x, y, pairs;
    bool ok = true;
    if (n <= TREE_LEAF) {
        for (int64_t i = 1; ok && i < n; i++) {
            st_arena_mark e = st_arena_get_mark(I->a);
            ok = st_value_elem(I->a, v, i - 1, &x, I->err) && st_value_elem(I->a, v, i, &y, I->err) &&
                 combine(I, op, &x, &y, &y);
            if (ok) st_value_store(v, i, &y); /* y is a copy where elements are scalars */
            st_arena_release(I->a, e);
        }
        st_arena_release(I->a, m);
        return ok;
    }
    int64_t half = n / 2;
    ok = st_value_alloc_rows(I->a, v, half, &pairs, I->err);
    for (int64_t j = 0; ok && j < half; j++) {
        st_arena_mark e = st_arena_get_mark(I->a);
        ok = st_value_elem(I->a, v, 2 * j, &x, I->err) && st_value_elem(I->a, v, 2 * j + 1, &y, I->err) &&
             combine(I, op, &x, &y, &y);
        if (ok) st_value_store(&pairs, j, &y);
        st_arena_release(I->a, e);
    }
    ok = ok && tree_scan(I, op, &pairs, half);
    for (int64_t j = 0; ok && j < half; j++) {
        st_arena_mark e = st_arena_get_mark(I->a);
        if (j > 0) {
            ok = st_value_elem(I->a, &pairs, j - 1, &x, I->err) && st_value_elem(I->a, v, 2 * j, &y, I->err) &&
                 combine(I, op, &x, &y, &y);
            if (ok) st_value_store(v, 2 * j, &y);
        }
        ok = ok && st_value_elem(I->a, &pairs, j, &y, I->err);
        if (ok) st_value_store(v, 2 * j + 1, &y);
        st_arena_release(I->a, e);
    }
    if (ok && n % 2) {
        ok = st_value_elem(I->a, &pairs, half - 1, &x, I->err) && st_value_elem(I->a, v, n - 1, &y, I->err) &&
             combine(I, op, &x, &y, &y);
        if (ok) st_value_store(v, n - 1, &y);
    }
    st_arena_release(I->a, m);
    return ok;
}

/* reduce, scan or exscan (op, z, xs) of elements that hold a float */
static bool tree_fold(interp *I, const st_node *n, const st_node *op, const st_type *t, const st_value *z,
                      const st_value *xs, bool keep, st_value *out) {
    int64_t len = st_value_length(xs);
    if (!keep) {
        if (!alloc(I, t, out)) return false;
        st_value_copy_into(out, z);
        st_value all;
        return len == 0 || (alloc(I, t, &all) && tree_reduce(I, op, t, xs, NULL, 0, len, &all) && combine(I, op, z, &all, out));
    }
    if (!alloc(I, n->type, out) || !same_length(I, n, st_value_length(out), len)) return false;
    if (len == 0) return true;
    bool exclusive = n->u.prim == ST_PRIM_EXSCAN;
    st_value prefixes = *out, first;
    if (exclusive && !st_value_alloc_rows(I->a, out, len, &prefixes, I->err)) return false;
    st_value_copy_into(&prefixes, xs);
    if (!st_value_elem(I->a, &prefixes, 0, &first, I->err) || !combine(I, op, z, &first, &first)) return false;
    st_value_store(&prefixes, 0, &first);
    if (!tree_scan(I, op, &prefixes, len)) return false;
    if (exclusive) { /* element i is the prefix before it */
        st_value_store(out, 0, z);
        for (int64_t i = 1; i < len; i++) {
            st_arena_mark e = st_arena_get_mark(I->a);
            st_value x;
            if (!st_value_elem(I->a, &prefixes, i - 1, &x, I->err)) return false;
            st_value_store(out, i, &x);
            st_arena_release(I->a, e);
        }
    }
    return true;
}

/* reduce and scan in every form, folding from z left to right: with the
 * operator itself, or with the fold when there is one (the operator is then
 * only what a parallel version combines partial results with); a scan's
 * post-function maps each accumulator and its element to the output. */
/* keep: every accumulator into *out (a scan), else the last (a reduction);
 * an exscan keeps each accumulator before its element is folded in */
static bool fold(interp *I, const st_node *n, const st_value *a, bool keep, st_value *out) {
    bool exclusive = n->u.prim == ST_PRIM_EXSCAN;
    uint32_t skip; /* scanLookback is a scan after its sizes */
    st_prim_after_sizes(n->u.prim, &skip);
    uint32_t k = n->nkids - skip;
    const st_node *const *kids = n->kids + skip;
    a += skip;
    bool seq = n->u.prim == ST_PRIM_REDUCE_SEQ || n->u.prim == ST_PRIM_SCAN_SEQ;
    const st_node *step = seq || k == 3 ? kids[0] : kids[1];
    const st_node *post = k == 5 ? kids[2] : NULL;
    const st_value *z = &a[k - 2], *xs = &a[k - 1];
    bool tree = !seq && k == 3 && st_type_holds_float(kids[1]->type);
    const st_fast_fn *fstep = fast_fn(I, step), *fpost = post ? fast_fn(I, post) : NULL;
    if (fstep && (!post || fpost)) {
        st_fast_fold fo = {fstep, fpost, z, xs, keep, exclusive, tree};
        st_fast_scope sc = {lookup_var, I};
        st_fast_fault fault;
        st_value into;
        bool ok;
        if (!alloc(I, keep ? n->type : kids[k - 2]->type, &into)) return false;
        if (keep && !same_length(I, n, st_value_length(&into), st_value_length(xs))) return false;
        if (fast_did(I, n, st_fast_fold_run(&fo, &sc, &into, &fault), &fault, &ok)) return (*out = into), ok;
    }
    if (tree) return tree_fold(I, n, step, kids[1]->type, z, xs, keep, out);
    st_value acc, next;
    if (!alloc(I, kids[k - 2]->type, &acc) || !alloc(I, kids[k - 2]->type, &next)) return false;
    if (keep && !alloc(I, n->type, out)) return false;
    st_value_copy_into(&acc, z);
    int64_t len = st_value_length(xs);
    if (keep && !same_length(I, n, st_value_length(out), len)) return false;
    for (int64_t i = 0; i < len; i++) {
        st_arena_mark m = st_arena_get_mark(I->a);
        st_value args[2], r;
        if (exclusive) st_value_store(out, i, &acc);
        args[0] = acc;
        if (!st_value_elem(I->a, xs, i, &args[1], I->err) || !apply(I, step, args, 2, &r)) return false;
        st_value_copy_into(&next, &r);
        if (post) {
            args[0] = next;
            if (!apply(I, post, args, 2, &r)) return false;
        }
        if (keep && !exclusive) st_value_store(out, i, &r);
        st_arena_release(I->a, m);
        st_value t = acc;
        acc = next;
        next = t;
    }
    if (!keep) *out = acc;
    return true;
}

static st_value map_leaves(const st_value *v, void *data, st_value (*fn)(const st_value *, void *));

/* The state of an operation applied to every leaf of a value: split and join
 * reshape the outer dimensions, transpose copies. */
typedef struct leaf_op {
    st_arena *a;
    int64_t k; /* split: the chunk size; join and transpose: 0 */
    bool failed;
} leaf_op;

static st_value reshape_leaf(const st_value *v, void *data) {
    leaf_op *r = data;
    st_value out = *v;
    int64_t *dims = st_arena_alloc(r->a, (v->n + 1) * sizeof *dims);
    if (!dims) {
        r->failed = true;
        return out;
    }
    if (r->k) { /* [n]… → [n/k][k]… */
        dims[0] = v->u.a.dims[0] / r->k;
        dims[1] = r->k;
        memcpy(dims + 2, v->u.a.dims + 1, (v->n - 1) * sizeof *dims);
        out.n = v->n + 1;
    } else { /* [a][b]… → [a*b]… */
        dims[0] = v->u.a.dims[0] * v->u.a.dims[1];
        memcpy(dims + 1, v->u.a.dims + 2, (v->n - 2) * sizeof *dims);
        out.n = v->n - 1;
    }
    out.u.a.dims = dims;
    return out;
}

static st_value transpose_leaf(const st_value *v, void *data) {
    leaf_op *t = data;
    st_value out = *v;
    int64_t rows = v->u.a.dims[0], cols = v->u.a.dims[1];
    int64_t *dims = st_arena_alloc(t->a, v->n * sizeof *dims);
    size_t inner = st_scalar_size(v->scalar);
    for (uint32_t i = 2; i < v->n; i++) inner *= (size_t)v->u.a.dims[i];
    char *data_out = st_arena_alloc(t->a, st_leaf_bytes(v));
    if (!dims || !data_out) {
        t->failed = true;
        return out;
    }
    memcpy(dims, v->u.a.dims, v->n * sizeof *dims);
    dims[0] = cols;
    dims[1] = rows;
    const char *src = v->u.a.data;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++)
            memcpy(data_out + ((size_t)c * (size_t)rows + (size_t)r) * inner, src + ((size_t)r * (size_t)cols + (size_t)c) * inner, inner);
    out.u.a.dims = dims;
    out.u.a.data = data_out;
    return out;
}

static st_value map_leaves(const st_value *v, void *data, st_value (*fn)(const st_value *, void *)) {
    if (v->kind != ST_VALUE_TUPLE) return fn(v, data);
    st_value out = *v;
    leaf_op *any = data;
    st_value *items = st_arena_alloc(any->a, v->n * sizeof *items);
    if (!items) {
        any->failed = true;
        return out;
    }
    for (uint32_t i = 0; i < v->n; i++) items[i] = map_leaves(&v->u.items[i], data, fn);
    out.u.items = items;
    return out;
}

static bool index_of(const st_value *v, int64_t *out) {
    return st_scalar_as_i64(v->scalar, v->u.s, out);
}

/* v ([n][m]…, or a tuple of such) seen as [n*m]…, sharing its storage: the
 * 2-D scatter and reduce_by_index write it at r*m + c. */
static bool flat_view(st_arena *a, const st_value *v, st_value *out, st_err *err) {
    *out = *v;
    if (v->kind == ST_VALUE_TUPLE) {
        st_value *items = st_arena_alloc(a, v->n * sizeof *items);
        if (!items) return st_fail_internal(err, "out of memory");
        for (uint32_t i = 0; i < v->n; i++)
            if (!flat_view(a, &v->u.items[i], &items[i], err)) return false;
        out->u.items = items;
        return true;
    }
    int64_t *dims = st_arena_alloc(a, (v->n - 1) * sizeof *dims);
    if (!dims) return st_fail_internal(err, "out of memory");
    dims[0] = v->u.a.dims[0] * v->u.a.dims[1];
    for (uint32_t i = 2; i < v->n; i++) dims[i - 1] = v->u.a.dims[i];
    out->n = v->n - 1;
    out->u.a.dims = dims;
    return true;
}

/* The flat index of element i's index: its integer, or for the 2-D forms
 * r*m + c of its (row, column) pair; false when out of bounds, so ignored.
 * dims: the destination's n (and m). */
static bool flat_index(const st_value *iv, bool two, const int64_t *dims, int64_t *out) {
    if (!two) return index_of(iv, out) && *out >= 0 && *out < dims[0];
    int64_t r, c;
    if (!index_of(&iv->u.items[0], &r) || !index_of(&iv->u.items[1], &c)) return false;
    if (r < 0 || r >= dims[0] || c < 0 || c >= dims[1]) return false;
    *out = r * dims[1] + c;
    return true;
}

/* loop(n, f, x), while(c, f, x) and iterate(k, f, x): the accumulator
 * through the steps, in two buffers that take turns (a step may read the
 * old while it makes the new); loop's f takes the index too. A while loop
 * that never ends is the program's, as it would be on the device: the
 * interpreter runs it as long as it is asked to. */
static bool loop(interp *I, const st_node *n, const st_value *a, st_value *out) {
    bool is_while = n->u.prim == ST_PRIM_WHILE, indexed = n->u.prim == ST_PRIM_LOOP;
    int64_t count = 0;
    if (!is_while && !index_of(&a[0], &count)) return runtime_error(I, n, "a loop count out of range");
    if (!indexed && !is_while && count < 0) return runtime_error(I, n, "a negative iteration count");
    st_value cur, next;
    if (!alloc(I, n->type, &cur) || !alloc(I, n->type, &next)) return false;
    st_value_copy_into(&cur, &a[2]);
    for (int64_t i = 0; is_while || i < count; i++) {
        st_arena_mark m = st_arena_get_mark(I->a);
        st_value r;
        if (is_while) {
            st_value c;
            if (!apply(I, n->kids[0], &cur, 1, &c)) return false;
            if (!c.u.s.b) break;
            if (!apply(I, n->kids[1], &cur, 1, &r)) return false;
        } else if (indexed) {
            st_value args[2] = {st_value_scalar(ST_I64, (st_scalar){.i64 = i}), cur};
            if (!apply(I, n->kids[1], args, 2, &r)) return false;
        } else if (!apply(I, n->kids[1], &cur, 1, &r)) {
            return false;
        }
        st_value_copy_into(&next, &r);
        st_arena_release(I->a, m);
        st_value t = cur;
        cur = next;
        next = t;
    }
    *out = cur;
    return true;
}

/* reduce_by_index of values that hold a float: each bucket's values, in
 * index order, combined in a tree (as tree_reduce), then into the bucket.
 * The values are grouped by bucket first, stably, by counting. */
static bool tree_histogram(interp *I, const st_node *op, const st_type *t, st_value *flat, const st_value *is,
                           const st_value *vs, bool two, const int64_t dims[2]) {
    int64_t len = st_value_length(is), buckets = st_value_length(flat);
    int64_t *bucket = malloc((size_t)(len ? len : 1) * sizeof *bucket);
    int64_t *start = calloc((size_t)buckets + 1, sizeof *start);
    int64_t *order = malloc((size_t)(len ? len : 1) * sizeof *order);
    bool ok = bucket && start && order;
    if (!ok) st_fail_internal(I->err, "out of memory");
    for (int64_t i = 0; ok && i < len; i++) {
        st_arena_mark m = st_arena_get_mark(I->a);
        st_value iv;
        ok = st_value_elem(I->a, is, i, &iv, I->err);
        if (ok && !flat_index(&iv, two, dims, &bucket[i])) bucket[i] = -1; /* out of bounds: ignored */
        if (ok && bucket[i] >= 0) start[bucket[i] + 1]++;
        st_arena_release(I->a, m);
    }
    for (int64_t b = 0; ok && b < buckets; b++) start[b + 1] += start[b];
    for (int64_t i = 0, *next = start; ok && i < len; i++)
        if (bucket[i] >= 0) order[next[bucket[i]]++] = i;
    /* next moved each bucket's start to its end: bucket b is [end(b-1), end(b)) */
    for (int64_t b = 0; ok && b < buckets; b++) {
        int64_t lo = b ? start[b - 1] : 0, hi = start[b];
        if (lo == hi) continue;
        st_arena_mark m = st_arena_get_mark(I->a);
        st_value all, into;
        ok = alloc(I, t, &all) && tree_reduce(I, op, t, vs, order, lo, hi, &all) &&
             st_value_elem(I->a, flat, b, &into, I->err) && combine(I, op, &into, &all, &into);
        if (ok) st_value_store(flat, b, &into);
        st_arena_release(I->a, m);
    }
    free(bucket);
    free(start);
    free(order);
    return ok;
}

static bool distinct_error(interp *I, const st_node *n, int64_t elem, int64_t place) {
    return runtime_error(I, n, "scatterDistinct: element %lld writes place %lld, which an earlier element wrote: "
                         "its indices are not distinct (scatter keeps the last write of a place)",
                         (long long)elem, (long long)place);
}

static bool scatter(interp *I, const st_node *n, const st_value *a, st_value *out) {
    uint32_t skip; /* subhistograms is a reduce_by_index after its sizes */
    st_prim p = st_prim_after_sizes(n->u.prim, &skip);
    bool hist = p == ST_PRIM_REDUCE_BY_INDEX || p == ST_PRIM_REDUCE_BY_INDEX_2D;
    bool two = p == ST_PRIM_REDUCE_BY_INDEX_2D || p == ST_PRIM_SCATTER_2D;
    const st_node *const *kids = n->kids + skip;
    a += skip;
    const st_value *dest = &a[0], *is, *vs;
    if (n->nkids == 2) { /* scatter(dest, ivs): the pairs are a tuple of two arrays */
        is = &a[1].u.items[0];
        vs = &a[1].u.items[1];
    } else {
        is = &a[hist ? 3 : 1];
        vs = &a[hist ? 4 : 2];
    }
    if (!alloc(I, n->type, out)) return false;
    st_value_copy_into(out, dest);
    /* the destination's outer dimensions: of any leaf, all alike */
    const st_value *leaf = out;
    while (leaf->kind == ST_VALUE_TUPLE) leaf = &leaf->u.items[0];
    int64_t dims[2] = {leaf->u.a.dims[0], two ? leaf->u.a.dims[1] : 0}, len = st_value_length(is);
    if (!same_length(I, n, st_value_length(vs), len)) return false;
    st_value flat = *out;
    if (two && !flat_view(I->a, out, &flat, I->err)) return false;
    const st_fast_fn *fop = hist ? fast_fn(I, kids[1]) : NULL;
    bool tree = hist && st_type_holds_float(kids[2]->type);
    if (I->fast && (!hist || fop)) {
        st_fast_scatter h = {fop, &flat, is, vs, {dims[0], dims[1]}, two, p == ST_PRIM_SCATTER_DISTINCT, tree};
        st_fast_scope sc = {lookup_var, I};
        st_fast_fault fault;
        bool ok;
        if (fast_did(I, n, st_fast_scatter_run(&h, &sc, &fault), &fault, &ok)) return ok;
    }
    if (tree) return tree_histogram(I, kids[1], kids[2]->type, &flat, is, vs, two, dims);
    /* scatterDistinct promises distinct places: each one written is marked */
    uint8_t *written = NULL;
    if (p == ST_PRIM_SCATTER_DISTINCT) {
        int64_t places = dims[0] * (two ? dims[1] : 1);
        if (!(written = st_arena_alloc(I->a, (size_t)(places / 8 + 1)))) return st_fail_internal(I->err, "out of memory");
        memset(written, 0, (size_t)(places / 8 + 1));
    }
    for (int64_t i = 0; i < len; i++) {
        st_arena_mark mark = st_arena_get_mark(I->a);
        st_value iv, v;
        int64_t idx;
        if (!st_value_elem(I->a, is, i, &iv, I->err)) return false;
        if (!flat_index(&iv, two, dims, &idx)) { /* out of bounds: ignored */
            st_arena_release(I->a, mark);
            continue;
        }
        if (written && (written[idx / 8] >> (idx % 8) & 1)) return distinct_error(I, n, i, idx);
        if (written) written[idx / 8] |= (uint8_t)(1u << (idx % 8));
        if (!st_value_elem(I->a, vs, i, &v, I->err)) return false;
        if (hist) {
            st_value args[2], r;
            if (!st_value_elem(I->a, &flat, idx, &args[0], I->err)) return false;
            args[1] = v;
            if (!apply(I, kids[1], args, 2, &r)) return false;
            st_value_store(&flat, idx, &r);
        } else {
            st_value_store(&flat, idx, &v);
        }
        st_arena_release(I->a, mark);
    }
    return true;
}

/* Copy elements [from, from + count) of src to dst from element at. */
static bool copy_elems(interp *I, st_value *dst, int64_t at, const st_value *src, int64_t from, int64_t count) {
    for (int64_t i = 0; i < count; i++) {
        st_arena_mark m = st_arena_get_mark(I->a);
        st_value x;
        if (!st_value_elem(I->a, src, from + i, &x, I->err)) return false;
        st_value_store(dst, at + i, &x);
        st_arena_release(I->a, m);
    }
    return true;
}

/* filter(p, xs) and partition(p, xs): p over every element, the count kept
 * bound as ?k, then the kept elements in order (and for partition the rest
 * after them, in order). */
static bool filter(interp *I, const st_node *n, const st_value *xs, st_value *out) {
    int64_t len = st_value_length(xs), kept = 0;
    bool *keep = st_arena_alloc(I->a, (size_t)(len ? len : 1));
    if (!keep) return st_fail_internal(I->err, "out of memory");
    for (int64_t i = 0; i < len; i++) {
        st_arena_mark m = st_arena_get_mark(I->a);
        st_value x, r;
        if (!st_value_elem(I->a, xs, i, &x, I->err) || !apply(I, n->kids[0], &x, 1, &r)) return false;
        keep[i] = r.u.s.b;
        kept += keep[i];
        st_arena_release(I->a, m);
    }
    bool part = n->u.prim == ST_PRIM_PARTITION;
    const st_type *kept_type = part ? n->type->items[0] : n->type;
    if (!bind_size(I, kept_type->size, kept) || !alloc(I, n->type, out)) return false;
    st_value *yes = part ? (st_value *)&out->u.items[0] : out, *no = part ? (st_value *)&out->u.items[1] : NULL;
    int64_t j = 0, k = 0;
    for (int64_t i = 0; i < len; i++) {
        if (!keep[i] && !no) continue;
        if (!copy_elems(I, keep[i] ? yes : no, keep[i] ? j++ : k++, xs, i, 1)) return false;
    }
    return true;
}

/* ---- partition_by, sort, sort_by_key ---- */

/* An element's bucket of k from its function's integer value: below 0 it
 * counts as 0, above k - 1 as k - 1 (as codegen/cg_partition.c does). */
static int64_t bucket_of(const st_value *v, int64_t k) {
    if (st_scalar_is_signed(v->scalar)) {
        int64_t b = 0;
        st_scalar_as_i64(v->scalar, v->u.s, &b);
        return b < 0 ? 0 : b >= k ? k - 1 : b;
    }
    uint64_t u = st_scalar_order_key(v->scalar, v->u.s); /* an unsigned number's key is itself */
    return u >= (uint64_t)k ? k - 1 : (int64_t)u;
}

/* The elements of xs in the order `order` gives (order[j]: the element
 * that goes to place j), into out, allocated of xs's type. */
static bool gather(interp *I, const st_type *t, const st_value *xs, const int64_t *order, st_value *out) {
    if (!alloc(I, t, out)) return false;
    int64_t n = st_value_length(xs);
    for (int64_t j = 0; j < n; j++)
        if (!copy_elems(I, out, j, xs, order[j], 1)) return false;
    return true;
}

/* partition_by(k, f, xs), and partitionTiles after its size: a counting
 * sort, stable, of xs by bucket; the second result each bucket's start. */
static bool partition_by(interp *I, const st_node *n, const st_value *a, st_value *out) {
    uint32_t skip;
    st_prim_after_sizes(n->u.prim, &skip);
    const st_node *f = n->kids[skip + 1];
    const st_value *xs = &a[skip + 2];
    int64_t k = 1, len = st_value_length(xs);
    st_size_is_const(n->type->items[1]->size, &k); /* a literal, as the type checker required */
    int64_t *bucket = st_arena_alloc(I->a, (size_t)(len ? len : 1) * sizeof *bucket);
    int64_t *start = st_arena_alloc(I->a, (size_t)k * sizeof *start), *order = st_arena_alloc(I->a, (size_t)(len ? len : 1) * sizeof *order);
    if (!bucket || !start || !order) return st_fail_internal(I->err, "out of memory");
    memset(start, 0, (size_t)k * sizeof *start);
    for (int64_t i = 0; i < len; i++) {
        st_arena_mark m = st_arena_get_mark(I->a);
        st_value x, r;
        if (!st_value_elem(I->a, xs, i, &x, I->err) || !apply(I, f, &x, 1, &r)) return false;
        bucket[i] = bucket_of(&r, k);
        start[bucket[i]]++;
        st_arena_release(I->a, m);
    }
    for (int64_t b = 0, sum = 0; b < k; b++) {
        int64_t c = start[b];
        start[b] = sum;
        sum += c;
    }
    for (int64_t i = 0; i < len; i++) order[start[bucket[i]]++] = i;
    if (!alloc(I, n->type, out)) return false;
    st_value *items = (st_value *)out->u.items, *offsets = &items[1];
    int64_t *offs = offsets->u.a.data;
    for (int64_t b = 0; b < k; b++) offs[b] = b == 0 ? 0 : start[b - 1]; /* each cursor stopped at the next start */
    return gather(I, n->type->items[0], xs, order, &items[0]);
}

/* The stable order of n keys (order[j]: the index of the j-th smallest):
 * an LSD radix sort of the indices, a byte a pass, skipping the bytes all
 * keys share. */
static int64_t *stable_order(interp *I, const uint64_t *keys, int64_t n) {
    size_t bytes = (size_t)(n ? n : 1) * sizeof(int64_t);
    int64_t *order = st_arena_alloc(I->a, bytes), *other = st_arena_alloc(I->a, bytes);
    if (!order || !other) return st_fail_internal(I->err, "out of memory"), NULL;
    for (int64_t i = 0; i < n; i++) order[i] = i;
    uint64_t any = 0, all = ~(uint64_t)0;
    for (int64_t i = 0; i < n; i++) any |= keys[i], all &= keys[i];
    for (unsigned shift = 0; shift < 64; shift += 8) {
        if ((((any ^ all) >> shift) & 0xff) == 0) continue; /* every key has this byte */
        int64_t count[257] = {0};
        for (int64_t i = 0; i < n; i++) count[((keys[i] >> shift) & 0xff) + 1]++;
        for (int d = 0; d < 256; d++) count[d + 1] += count[d];
        for (int64_t j = 0; j < n; j++) other[count[(keys[order[j]] >> shift) & 0xff]++] = order[j];
        int64_t *t = order;
        order = other;
        other = t;
    }
    return order;
}

/* sort(xs) and sort_by_key(ks, vs): by st_scalar_order_key, stable. */
static bool sort(interp *I, const st_node *n, const st_value *a, st_value *out) {
    const st_value *ks = &a[0];
    int64_t len = st_value_length(ks);
    size_t size = st_scalar_size(ks->scalar);
    uint64_t *keys = st_arena_alloc(I->a, (size_t)(len ? len : 1) * sizeof *keys);
    if (!keys) return st_fail_internal(I->err, "out of memory");
    for (int64_t i = 0; i < len; i++)
        keys[i] = st_scalar_order_key(ks->scalar, st_scalar_load(ks->scalar, (const char *)ks->u.a.data + (size_t)i * size));
    const int64_t *order = stable_order(I, keys, len);
    if (!order) return false;
    if (n->u.prim == ST_PRIM_SORT) return gather(I, n->type, ks, order, out);
    if (!alloc(I, n->type, out)) return false;
    st_value *items = (st_value *)out->u.items;
    return gather(I, n->type->items[0], ks, order, &items[0]) && gather(I, n->type->items[1], &a[1], order, &items[1]);
}

/* take(k, xs), drop(k, xs): k checked against xs's length, then bound as
 * the ?k it stands for when it stands for one. */
static bool take_drop(interp *I, const st_node *n, const st_value *a, st_value *out) {
    int64_t k, len = st_value_length(&a[1]);
    bool take = n->u.prim == ST_PRIM_TAKE;
    if (!index_of(&a[0], &k) || k < 0 || k > len) {
        st_buf b = {0};
        st_scalar_format(a[0].scalar, a[0].u.s, &b);
        runtime_error(I, n, "%s's count k = %s is outside 0 .. n = %lld, the length of the array", take ? "take" : "drop",
                      b.data ? b.data : "?", (long long)len);
        st_buf_free(&b);
        return false;
    }
    /* the length k stands for, read off the node's type (as the type checker
     * made it, and as a rebuild kept it): take's, or n less drop's */
    const st_size *s = take ? n->type->size : st_size_sub(I->cx, n->kids[1]->type->size, n->type->size, I->err);
    if (!s) return false;
    if (st_size_is_exist(s) && !bind_size(I, s, k)) return false;
    if (!alloc(I, n->type, out)) return false;
    return take ? copy_elems(I, out, 0, &a[1], 0, k) : copy_elems(I, out, 0, &a[1], k, len - k);
}

static bool concat(interp *I, const st_node *n, const st_value *a, st_value *out) {
    int64_t la = st_value_length(&a[0]), lb = st_value_length(&a[1]);
    if (!alloc(I, n->type, out) || !same_length(I, n, st_value_length(out), la + lb)) return false;
    return copy_elems(I, out, 0, &a[0], 0, la) && copy_elems(I, out, la, &a[1], 0, lb);
}

/* scanTotal(s): s's fold over its input alone (what its post-function
 * writes does not matter), so s is not evaluated. */
static bool scan_total(interp *I, const st_node *n, st_value *out) {
    const st_node *s = n->kids[0];
    st_value *a = st_arena_alloc(I->a, s->nkids * sizeof *a);
    if (!a) return st_fail_internal(I->err, "out of memory");
    for (uint32_t i = 0; i < s->nkids; i++)
        if (st_prim_arg_role(s->u.prim, (int)i, s->nkids) != ST_ARG_FUN && !eval(I, s->kids[i], &a[i])) return false;
    return fold(I, s, a, false, out);
}

static bool index_error(interp *I, const st_node *n, st_scalar_kind k, st_scalar index, int64_t len) {
    st_buf b = {0};
    st_scalar_format(k, index, &b);
    runtime_error(I, n, "index %s out of range for an array of length %lld", b.data ? b.data : "?", (long long)len);
    st_buf_free(&b);
    return false;
}

static bool prim(interp *I, const st_node *n, st_value *out) {
    if (n->u.prim == ST_PRIM_SCAN_TOTAL) return scan_total(I, n, out);
    /* in the arena, so that a deep nest of primitives keeps small frames */
    st_value *a = st_arena_alloc(I->a, n->nkids * sizeof *a);
    if (!a) return st_fail_internal(I->err, "out of memory");
    st_prim p = n->u.prim;
    for (uint32_t i = 0; i < n->nkids; i++)
        if (st_prim_arg_role(p, (int)i, n->nkids) != ST_ARG_FUN && !eval(I, n->kids[i], &a[i])) return false;
    switch (p) {
    case ST_PRIM_MAP: case ST_PRIM_MAP_SEQ: case ST_PRIM_MAP_GLB: case ST_PRIM_MAP_WRG: case ST_PRIM_MAP_LCL:
        return map(I, n, &a[1], out);
    case ST_PRIM_REDUCE: case ST_PRIM_REDUCE_SEQ: return fold(I, n, a, false, out);
    case ST_PRIM_SCAN: case ST_PRIM_SCAN_SEQ: case ST_PRIM_SCAN_LOOKBACK: case ST_PRIM_EXSCAN:
        return fold(I, n, a, true, out);
    case ST_PRIM_SPLIT:
    case ST_PRIM_JOIN: {
        leaf_op r = {I->a, 0, false};
        if (p == ST_PRIM_SPLIT) {
            if (!index_of(&a[0], &r.k) || r.k <= 0) return runtime_error(I, n, "a chunk size that is not positive");
            if (st_value_length(&a[1]) % r.k != 0) return runtime_error(I, n, "a length that the chunk size does not divide");
        }
        *out = map_leaves(&a[p == ST_PRIM_SPLIT ? 1 : 0], &r, reshape_leaf);
        return !r.failed || st_fail_internal(I->err, "out of memory");
    }
    case ST_PRIM_ZIP: {
        st_value *items = st_arena_alloc(I->a, n->nkids * sizeof *items);
        if (!items) return st_fail_internal(I->err, "out of memory");
        memcpy(items, a, n->nkids * sizeof *items);
        for (uint32_t i = 1; i < n->nkids; i++)
            if (!same_length(I, n, st_value_length(&a[0]), st_value_length(&a[i]))) return false;
        *out = st_value_tuple(n->nkids, items);
        return true;
    }
    case ST_PRIM_UNZIP: case ST_PRIM_TO_GLOBAL: case ST_PRIM_TO_LOCAL: case ST_PRIM_TO_PRIVATE:
        *out = a[0];
        return true;
    case ST_PRIM_IOTA: {
        if (!alloc(I, n->type, out)) return false;
        int64_t *d = out->u.a.data;
        for (int64_t i = 0; i < out->u.a.dims[0]; i++) d[i] = i;
        return true;
    }
    case ST_PRIM_REPLICATE: case ST_PRIM_SCRATCH: {
        if (!alloc(I, n->type, out)) return false;
        if (I->fast && st_fast_fill(out, &a[1]) == ST_FAST_DONE) return true;
        for (int64_t i = 0; i < st_value_length(out); i++) st_value_store(out, i, &a[1]);
        return true;
    }
    case ST_PRIM_TRANSPOSE: {
        leaf_op t = {I->a, 0, false};
        *out = map_leaves(&a[0], &t, transpose_leaf);
        return !t.failed || st_fail_internal(I->err, "out of memory");
    }
    case ST_PRIM_SCATTER: case ST_PRIM_SCATTER_DISTINCT: case ST_PRIM_REDUCE_BY_INDEX: case ST_PRIM_SUBHISTOGRAMS:
    case ST_PRIM_SCATTER_2D: case ST_PRIM_REDUCE_BY_INDEX_2D: return scatter(I, n, a, out);
    case ST_PRIM_ITERATE: case ST_PRIM_LOOP: case ST_PRIM_WHILE: return loop(I, n, a, out);
    case ST_PRIM_GET: {
        int64_t i, len = st_value_length(&a[1]);
        if (!index_of(&a[0], &i) || i < 0 || i >= len) return index_error(I, n, a[0].scalar, a[0].u.s, len);
        return st_value_elem(I->a, &a[1], i, out, I->err);
    }
    case ST_PRIM_FILTER: case ST_PRIM_PARTITION: return filter(I, n, &a[1], out);
    case ST_PRIM_TAKE: case ST_PRIM_DROP: return take_drop(I, n, a, out);
    case ST_PRIM_CONCAT: return concat(I, n, a, out);
    case ST_PRIM_PARTITION_BY: case ST_PRIM_PARTITION_TILES: return partition_by(I, n, a, out);
    case ST_PRIM_SORT: case ST_PRIM_SORT_BY_KEY: return sort(I, n, a, out);
    default: return st_fail_internal(I->err, "no meaning for %s", st_prim_get(p)->name);
    }
}

/* ---- values kept across a function's calls ---- */

/* Is n worth keeping: a whole-array computation, not a view or a scalar
 * step? filter, partition, take and drop are not kept: they bind their
 * lengths as they run. */
static bool keepable(const st_node *n) {
    switch (n->u.prim) {
    case ST_PRIM_REDUCE: case ST_PRIM_SCAN: case ST_PRIM_EXSCAN: case ST_PRIM_SCAN_TOTAL:
    case ST_PRIM_REDUCE_BY_INDEX: case ST_PRIM_REDUCE_BY_INDEX_2D:
    case ST_PRIM_SCATTER: case ST_PRIM_SCATTER_DISTINCT: case ST_PRIM_SCATTER_2D: return true;
    default: return false;
    }
}

/* The slot var resolves to now (the innermost of its name), or NULL. */
static const slot *slot_of(const interp *I, const st_node *var) {
    for (size_t i = I->n; i-- > 0;)
        if (I->vars[i].var == var) return &I->vars[i];
    return NULL;
}

enum { MAX_KEPT_VARS = 64, MAX_KEPT_WALK = 4096 };

/* Every variable n mentions, bound inside it or not, into vars (at most
 * MAX_KEPT_VARS, distinct); false when there are more, or n is too large
 * to walk, and it is not kept. Those bound inside it resolve to no slot
 * when it is looked up, as when it was kept. */
static bool mentions(const st_node *n, const st_node **vars, uint32_t *nvars, int *budget) {
    if (--*budget < 0) return false;
    if (n->kind == ST_NODE_VAR) {
        for (uint32_t i = 0; i < *nvars; i++)
            if (vars[i] == n) return true;
        if (*nvars == MAX_KEPT_VARS) return false;
        vars[(*nvars)++] = n;
        return true;
    }
    for (uint32_t i = 0; i < n->nkids; i++)
        if (!mentions(n->kids[i], vars, nvars, budget)) return false;
    return true;
}

/* n by prim(), or its kept value when nothing it reads was bound again. */
static bool prim_kept(interp *I, const st_node *n, st_value *out) {
    if (I->fn_base == SIZE_MAX || !keepable(n)) return prim(I, n, out);
    kept *k = NULL;
    for (size_t i = 0; i < I->nkeeps && !k; i++)
        if (I->keeps[i].node == n) k = &I->keeps[i];
    const st_node *found[MAX_KEPT_VARS];
    uint32_t nfound = 0;
    if (!k) {
        int budget = MAX_KEPT_WALK;
        if (!mentions(n, found, &nfound, &budget)) return prim(I, n, out);
    }
    const st_node *const *vars = k ? k->vars : found;
    uint32_t nvars = k ? k->nvars : nfound;
    /* what it reads must be bound outside the innermost function, or it is
     * that call's own */
    bool valid = k && k->env_serial == I->env_serial;
    for (uint32_t i = 0; i < nvars; i++) {
        const slot *s = slot_of(I, vars[i]);
        if (s && (size_t)(s - I->vars) >= I->fn_base) return prim(I, n, out);
        if (k && k->serials[i] != (s ? s->serial : 0)) valid = false;
    }
    if (valid) return (*out = k->value), true;
    if (!I->kept_in && !(I->kept_in = st_arena_new())) return st_fail_internal(I->err, "out of memory");
    if (!k) {
        if (!st_grow(&I->keeps, sizeof *I->keeps, I->nkeeps, &I->capkeeps, 8)) return st_fail_internal(I->err, "out of memory");
        k = &I->keeps[I->nkeeps++];
        *k = (kept){.node = n, .nvars = nvars};
        k->vars = st_arena_alloc(I->kept_in, (nvars ? nvars : 1) * sizeof *k->vars);
        k->serials = st_arena_alloc(I->kept_in, (nvars ? nvars : 1) * sizeof *k->serials);
        if (!k->vars || !k->serials) return st_fail_internal(I->err, "out of memory");
        memcpy(k->vars, found, nvars * sizeof *k->vars);
    }
    for (uint32_t i = 0; i < nvars; i++) {
        const slot *s = slot_of(I, k->vars[i]);
        k->serials[i] = s ? s->serial : 0;
    }
    /* computed in the kept arena, which no mark of the caller's releases;
     * an earlier value stays there, as something may still read it */
    size_t at = (size_t)(k - I->keeps); /* keeps may grow while n runs */
    k->env_serial = UINT64_MAX;         /* not valid while (or if) it fails */
    st_arena *caller = I->a;
    I->a = I->kept_in;
    bool ok = prim(I, n, out);
    I->a = caller;
    if (!ok) return false;
    I->keeps[at].value = *out;
    I->keeps[at].env_serial = I->env_serial;
    return true;
}

/* ---- expressions ---- */

static bool eval(interp *I, const st_node *n, st_value *out) {
    switch (n->kind) {
    case ST_NODE_LIT: *out = st_value_scalar(n->type->scalar, n->u.lit); return true;
    case ST_NODE_VAR:
        for (size_t i = I->n; i-- > 0;)
            if (I->vars[i].var == n) return (*out = I->vars[i].value), true;
        return st_fail_internal(I->err, "variable `%s` has no value", n->u.name);
    case ST_NODE_TUPLE: {
        st_value *items = st_arena_alloc(I->a, n->nkids * sizeof *items);
        if (!items) return st_fail_internal(I->err, "out of memory");
        for (uint32_t i = 0; i < n->nkids; i++)
            if (!eval(I, n->kids[i], &items[i])) return false;
        *out = st_value_tuple(n->nkids, items);
        return true;
    }
    case ST_NODE_PROJ: {
        st_value t;
        if (!eval(I, n->kids[0], &t)) return false;
        *out = t.u.items[n->u.index];
        return true;
    }
    case ST_NODE_UNOP: {
        st_value x;
        if (!eval(I, n->kids[0], &x)) return false;
        *out = st_value_scalar(n->type->scalar, st_scalar_unop(n->u.unop, x.scalar, x.u.s));
        return true;
    }
    case ST_NODE_BINOP: {
        st_value x, y;
        if (!eval(I, n->kids[0], &x)) return false;
        /* && and || do not evaluate their right side when the left decides */
        if ((n->u.binop == ST_OP_AND && !x.u.s.b) || (n->u.binop == ST_OP_OR && x.u.s.b)) return (*out = x), true;
        if (!eval(I, n->kids[1], &y)) return false;
        bool ok = true;
        *out = st_value_scalar(n->type->scalar, st_scalar_binop(n->u.binop, x.scalar, x.u.s, y.u.s, &ok));
        return ok || runtime_error(I, n, "division by zero");
    }
    case ST_NODE_CONV: {
        st_value x;
        if (!eval(I, n->kids[0], &x)) return false;
        *out = st_value_scalar(n->u.conv, st_scalar_convert(n->u.conv, x.scalar, x.u.s));
        return true;
    }
    case ST_NODE_IF: {
        st_value c;
        if (!eval(I, n->kids[0], &c)) return false;
        return eval(I, n->kids[c.u.s.b ? 1 : 2], out);
    }
    case ST_NODE_LET: {
        st_value v;
        if (!eval(I, st_let_value(n), &v)) return false;
        size_t mark = I->n;
        uint32_t k = st_let_nvars(n);
        bool ok = true;
        for (uint32_t i = 0; i < k && ok; i++) ok = bind(I, n->kids[i], k == 1 ? &v : &v.u.items[i]);
        ok = ok && eval(I, st_let_body(n), out);
        I->n = mark;
        return ok;
    }
    case ST_NODE_PRIM: return prim_kept(I, n, out);
    default: return st_fail_internal(I->err, "a function is not a value");
    }
}

bool st_eval(st_ctx *cx, const st_def *def, const st_value *args, const st_binding *env,
             size_t nenv, st_arena *a, st_value *result, st_err *err) {
    return st_eval_with(cx, def, args, env, nenv, a, NULL, result, err);
}

bool st_eval_with(st_ctx *cx, const st_def *def, const st_value *args, const st_binding *env,
                  size_t nenv, st_arena *a, const st_eval_options *opts, st_value *result, st_err *err) {
    interp I = {.cx = cx, .a = a, .err = err, .def = def, .nenv = nenv, .capenv = nenv, .fn_base = SIZE_MAX};
    bool ok = true;
    I.env = malloc((nenv ? nenv : 1) * sizeof *I.env);
    if (!I.env) return st_fail_internal(err, "out of memory");
    if (!(opts && opts->generic) && !(I.fast = st_fast_new())) {
        free(I.env);
        return st_fail_internal(err, "out of memory");
    }
    if (nenv) memcpy(I.env, env, nenv * sizeof *env);
    /* the size variables are i64 values in the body */
    for (uint32_t i = 0; i < def->nsizes && ok; i++) {
        st_value v = st_value_scalar(ST_I64, (st_scalar){.bits = 0});
        size_t k = 0;
        while (k < nenv && env[k].name != def->sizes[i]->u.name) k++;
        if (k == nenv) ok = st_fail_internal(err, "size `%s` has no value", def->sizes[i]->u.name);
        else v.u.s.i64 = env[k].value;
        ok = ok && bind(&I, def->sizes[i], &v);
    }
    for (uint32_t i = 0; i < def->nparams && ok; i++) ok = bind(&I, def->params[i], &args[i]);
    ok = ok && eval(&I, def->body, result);
    /* the result may be, or hold, a kept value */
    if (ok && I.kept_in) ok = st_value_clone(a, result, result, err);
    st_arena_free(I.kept_in);
    st_fast_free(I.fast);
    free(I.keeps);
    free(I.vars);
    free(I.env);
    return ok;
}
