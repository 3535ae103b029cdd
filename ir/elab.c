/* ir/elab.c — the type checker: located syntax tree to typed IR.
 *
 * The typing rules themselves live in the node constructors (node.c, and a
 * primitive's in its family's file, prim_*.c, named by its row in prim.c); this
 * file resolves names, infers what the constructors cannot (the parameter
 * types of lambdas, the type of an unsuffixed literal from its context) and
 * turns a constructor's complaint into an error at the right place.
 *
 * Literals: an unsuffixed integer takes the integer type its context needs
 * (the other operand of an operator, the elements of the array a neutral
 * element belongs to, the declared type), else i32; an unsuffixed float
 * likewise among f32 and f64, else f32. An integer never becomes a float. */
#include "ast.h"
#include "ctx.h"
#include "scalar_ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct binding {
    const char *name;
    const st_node *var;
} binding;

/* A size name of a def being inlined and the caller's size it stands for
 * (NULL: an integer parameter whose argument is no size). */
typedef struct size_bind {
    const char *name;
    const st_size *size;
} size_bind;

typedef struct elab {
    st_ctx *cx;
    st_arena *scratch; /* arrays of one node's parts: off the stack, so deep
                          programs keep the recursion's frames small */
    const char *file;
    st_err *err;
    binding *scope;
    size_t n, cap;
    const st_facts *facts;
    const char **size_names;
    uint32_t nsize_names;
    /* functions of one's own: every def's body is inlined where it is called */
    const ast_program *prog;
    const st_def *top;        /* the def being checked: inlined sizes are written in its */
    size_t base;              /* names are looked up in scope[base..n): a body sees its own only */
    const ast_def **stack;    /* the defs being elaborated, the checked one first */
    uint32_t depth;
    const size_bind *binds;   /* while inlining: the callee's sizes */
    uint32_t nbinds;
    bool inlining;
    uint32_t inlined;         /* calls inlined so far in this program, bounded */
    uint32_t in_lambda;       /* inside a lambda: no filter, partition, take, drop,
                                 concat here */
    bool in_result;           /* reading a declared result, where `?k` may be written */
    st_bound *bounds;         /* the checked def's slice bounds left to run time */
    uint32_t nbounds, capbounds;
} elab;

static const st_node *expr(elab *e, const ast *a, const st_type *hint);

typedef struct names {
    const char **items;
    uint32_t n;
    st_loc *locs;
} names;
static bool collect_type_sizes(elab *e, const ast_def *d, const ast_type *t, names *implicit);

/* n pointers of scratch, or NULL with an error */
static void *parts(elab *e, uint32_t n) {
    void *p = st_arena_zalloc(e->scratch, (n ? n : 1) * sizeof(void *));
    if (!p) st_fail_internal(e->err, "out of memory");
    return p;
}

/* ---- helpers ---- */

static bool push_var(elab *e, const char *name, const st_node *var) {
    if (!st_grow(&e->scope, sizeof *e->scope, e->n, &e->cap, 32)) return st_fail_internal(e->err, "out of memory");
    e->scope[e->n++] = (binding){name, var};
    return true;
}

static const st_node *lookup(const elab *e, const char *name) {
    for (size_t i = e->n; i-- > e->base;)
        if (e->scope[i].name == name) return e->scope[i].var;
    return NULL;
}

/* A constructor failed: place its message at the argument it blames. */
static const st_node *relocate(elab *e, const st_err *inner, st_loc fallback,
                               const ast *const *args, uint32_t nargs) {
    *e->err = *inner;
    if (inner->kind == ST_ERR_USER)
        st_err_at(e->err, inner->arg >= 0 && (uint32_t)inner->arg < nargs ? args[inner->arg]->loc : fallback);
    e->err->arg = -1;
    return NULL;
}

/* An expression of unsuffixed literals only (`2`, `-1.5`, `(2 + 3)`), whose
 * type the other side of an operator decides. */
static bool is_weak_literal(const ast *a) {
    switch (a->kind) {
    case A_INT: case A_FLOAT: return !a->has_suffix;
    case A_UNOP: return a->unop == ST_OP_NEG && is_weak_literal(a->kids[0]);
    case A_BINOP:
        return st_binop_result(a->binop, ST_I32) == ST_I32 && is_weak_literal(a->kids[0]) &&
               is_weak_literal(a->kids[1]);
    default: return false;
    }
}

static const char *known_functions[] = {
    "map", "reduce", "scan", "split", "join", "zip", "unzip", "iota", "replicate", "transpose",
    "scatter", "reduce_by_index", "scatter_2d", "reduce_by_index_2d", "iterate", "get", "mapSeq", "reduceSeq", "scanSeq", "mapGlb",
    "mapWrg", "mapLcl", "toGlobal", "toLocal", "toPrivate", "min", "max", "rotate", "map2", "map3",
    "bool", "i32", "u32", "i64", "u64", "f32", "f64"};

static void suggest(const char *name, const char **cands, int ncands, char *out, size_t cap) {
    const char *close[3];
    int k = st_closest_names(name, cands, ncands, close, 3);
    out[0] = 0;
    if (!k) return;
    size_t len = (size_t)snprintf(out, cap, "; did you mean ");
    for (int i = 0; i < k && len < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s`%s`", i == 0 ? "" : i == k - 1 ? " or " : ", ", close[i]);
    if (len < cap) snprintf(out + len, cap - len, "?");
}

/* The names a lambda or a let pattern binds must differ. */
static bool distinct_names(elab *e, const ast *a, const char *what) {
    for (uint32_t i = 0; i < a->nnames; i++)
        for (uint32_t j = 0; j < i; j++)
            if (a->names[j] == a->names[i])
                return st_fail(e->err, a->name_locs[i], "`%s` is %s twice", a->names[i], what);
    return true;
}

/* ---- literals ---- */

static const st_node *int_literal(elab *e, const ast *a, const st_type *hint) {
    st_scalar_kind k = ST_I32;
    if (a->has_suffix) k = a->suffix;
    else if (hint && st_type_is_int(hint)) k = hint->scalar;
    uint64_t max_pos, max_neg;
    st_scalar_int_limits(k, &max_pos, &max_neg);
    if (a->magnitude > (a->negative ? max_neg : max_pos)) {
        st_buf range = {0};
        st_scalar_range_text(k, &range);
        st_fail(e->err, a->loc, "%s%llu does not fit in %s (%s)", a->negative ? "-" : "",
                (unsigned long long)a->magnitude, st_scalar_name(k), range.data ? range.data : "");
        st_buf_free(&range);
        return NULL;
    }
    uint64_t bits = a->negative ? 0 - a->magnitude : a->magnitude;
    /* the bits truncated to k's width: a conversion from u64 does exactly that */
    return st_lit(e->cx, k, st_scalar_convert(k, ST_U64, (st_scalar){.u64 = bits}));
}

static const st_node *float_literal(elab *e, const ast *a, const st_type *hint) {
    st_scalar_kind k = ST_F32;
    if (a->has_suffix) k = a->suffix;
    else if (hint && hint->kind == ST_TYPE_SCALAR && st_scalar_is_float(hint->scalar)) k = hint->scalar;
    st_scalar v = {.bits = 0};
    double d;
    if (!strcmp(a->text, "inf")) d = INFINITY;
    else if (!strcmp(a->text, "nan")) d = NAN;
    else d = k == ST_F32 ? strtof(a->text, NULL) : strtod(a->text, NULL);
    if (a->negative) d = -d;
    if (k == ST_F32) v.f32 = (float)d;
    else v.f64 = d;
    if (isinf(k == ST_F32 ? v.f32 : v.f64) && strcmp(a->text, "inf"))
        return st_fail(e->err, a->loc, "%s is out of the range of %s", a->text, st_scalar_name(k)), NULL;
    return st_lit(e->cx, k, v);
}

/* ---- sizes and types ---- */

static bool is_size_name(const elab *e, const char *name) {
    for (uint32_t i = 0; i < e->nsize_names; i++)
        if (e->size_names[i] == name) return true;
    return false;
}

/* A size name inside an inlined def: the caller's size it was bound to. */
static const st_size *bound_size(elab *e, const ast *a) {
    for (uint32_t i = 0; i < e->nbinds; i++) {
        if (e->binds[i].name != a->name) continue;
        if (e->binds[i].size) return e->binds[i].size;
        return st_fail(e->err, a->loc, "`%s` is used as a size in `%s`, but the argument given for it is not a size (a literal, a size or an integer parameter, or arithmetic of those)",
                       a->name, e->stack[e->depth - 1]->name), NULL;
    }
    return st_fail(e->err, a->loc, "unknown size `%s` in `%s`", a->name, e->stack[e->depth - 1]->name), NULL;
}

static const st_size *size_expr(elab *e, const ast *a) {
    st_err inner = {0};
    const st_size *l, *r, *s = NULL;
    switch (a->kind) {
    case A_INT:
        if (a->has_suffix && !st_scalar_is_int(a->suffix)) break;
        if (a->magnitude > (a->negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX))
            return st_fail(e->err, a->loc, "the number %s%llu is too large for a size", a->negative ? "-" : "",
                           (unsigned long long)a->magnitude), NULL;
        return st_size_const(e->cx, a->negative ? (int64_t)(0 - a->magnitude) : (int64_t)a->magnitude);
    case A_NAME:
        if (a->name[0] == '?') {
            if (!e->in_result)
                return st_fail(e->err, a->loc, "`%s` is a length known only at run time; it may be written only in a def's declared result", a->name), NULL;
            s = st_size_exist_written_new(e->cx, a->name, &inner);
            break;
        }
        if (e->inlining) return bound_size(e, a);
        if (is_size_name(e, a->name)) return st_size_var(e->cx, e->facts, a->name);
        st_fail(e->err, a->loc, "unknown size `%s`; sizes are named in the parameters' types (`xs: [%s]f32`) or are integer parameters",
                a->name, a->name);
        return NULL;
    case A_UNOP:
        if (a->unop != ST_OP_NEG || !(l = size_expr(e, a->kids[0]))) break;
        s = st_size_sub(e->cx, st_size_const(e->cx, 0), l, &inner);
        break;
    case A_BINOP:
        if (a->binop > ST_OP_MOD) break;
        if (!(l = size_expr(e, a->kids[0])) || !(r = size_expr(e, a->kids[1]))) return NULL;
        switch (a->binop) {
        case ST_OP_ADD: s = st_size_add(e->cx, l, r, &inner); break;
        case ST_OP_SUB: s = st_size_sub(e->cx, l, r, &inner); break;
        case ST_OP_MUL: s = st_size_mul(e->cx, l, r, &inner); break;
        case ST_OP_DIV: s = st_size_div(e->cx, l, r, &inner); break;
        default: s = st_size_mod(e->cx, l, r, &inner); break;
        }
        break;
    case A_CALL:
        if ((strcmp(a->name, "pow") && strcmp(a->name, "log")) || a->nkids != 2) break;
        if (!(l = size_expr(e, a->kids[0])) || !(r = size_expr(e, a->kids[1]))) return NULL;
        s = a->name[0] == 'p' ? st_size_pow(e->cx, l, r, &inner) : st_size_log(e->cx, l, r, &inner);
        break;
    default: break;
    }
    if (s) return s;
    if (inner.message[0]) {
        *e->err = inner;
        st_err_at(e->err, a->loc);
        return NULL;
    }
    st_fail(e->err, a->loc, "an array length is made of whole numbers, size names, + - * / %%, pow(b, e) and log(b, x)");
    return NULL;
}

static const st_type *type_expr(elab *e, const ast_type *t) {
    switch (t->kind) {
    case T_SCALAR: return st_type_scalar(e->cx, t->scalar);
    case T_ARRAY: {
        const st_size *s = size_expr(e, t->size);
        int64_t v;
        if (s && st_size_is_const(s, &v) && v < 0)
            return st_fail(e->err, t->size->loc, "an array length cannot be negative (%lld)", (long long)v), NULL;
        const st_type *elem = s ? type_expr(e, t->elem) : NULL;
        return elem ? st_type_array(e->cx, s, elem) : NULL;
    }
    default: {
        if (t->n > ST_MAX_KIDS) return st_fail(e->err, t->loc, "a tuple has at most %d components", ST_MAX_KIDS), NULL;
        const st_type **items = parts(e, t->n);
        if (!items) return NULL;
        for (uint32_t i = 0; i < t->n; i++)
            if (!(items[i] = type_expr(e, t->items[i]))) return NULL;
        return st_type_tuple(e->cx, t->n, items);
    }
    }
}

/* A def's declared result, where `?k` may stand for a length known only at run time. */
static const st_type *result_type(elab *e, const ast_type *t) {
    e->in_result = true;
    const st_type *r = type_expr(e, t);
    e->in_result = false;
    return r;
}

enum { MAX_WRITTEN = 64 };

typedef struct exist_map {
    const st_size *from[MAX_WRITTEN], *to[MAX_WRITTEN];
    size_t n;
    /* a `?name` that is a whole length, standing for one of got's that is
     * no existential of its own (partition's [N - ?k]) */
    const st_size *whole_from[MAX_WRITTEN], *whole_to[MAX_WRITTEN];
    size_t nwhole;
    const st_size *list[MAX_WRITTEN];
    size_t nlist;
} exist_map;

static void list_exist(const st_size *x, void *data) {
    exist_map *m = data;
    if (m->nlist < MAX_WRITTEN) m->list[m->nlist++] = x;
}

static bool mapped(const st_size *const *xs, size_t n, const st_size *x) {
    for (size_t i = 0; i < n; i++)
        if (xs[i] == x) return true;
    return false;
}

/* The length a `?name` written as a whole length stands for, or NULL. */
static const st_size *whole_of(const exist_map *m, const st_size *written) {
    for (size_t i = 0; i < m->nwhole; i++)
        if (m->whole_from[i] == written) return m->whole_to[i];
    return NULL;
}

/* want with each `?name` written in it replaced by the existential of got at
 * the same place (the same one wherever the name is written again), so that
 * `[?k]i32` declares the result of a filter. A `?name` that is a whole
 * length, where got's has no existential left to stand for, stands for
 * got's length whatever it is: `([?k]t, [?m]t)` declares a partition's
 * `([?k]t, [N - ?k]t)`. Where the shapes differ, want stays as it is and the
 * comparison after reports it. */
static const st_type *fill_written(elab *e, const st_type *want, const st_type *got, exist_map *m) {
    if (want->kind != got->kind) return want;
    if (want->kind == ST_TYPE_TUPLE) {
        if (want->n != got->n) return want;
        const st_type **items = parts(e, want->n);
        if (!items) return NULL;
        for (uint32_t i = 0; i < want->n; i++)
            if (!(items[i] = fill_written(e, want->items[i], got->items[i], m))) return NULL;
        return st_type_tuple(e->cx, want->n, items);
    }
    if (want->kind != ST_TYPE_ARRAY) return want;
    const st_type *elem = fill_written(e, want->elem, got->elem, m);
    if (!elem) return NULL;
    const st_size *size = want->size;
    if (st_size_has_exist(size)) {
        const st_size *written[MAX_WRITTEN];
        size_t nw;
        m->nlist = 0;
        st_size_each_exist(size, list_exist, m);
        nw = m->nlist;
        memcpy(written, m->list, nw * sizeof *written);
        m->nlist = 0;
        st_size_each_exist(got->size, list_exist, m);
        size_t next = 0;
        for (size_t i = 0; i < nw && m->n < MAX_WRITTEN; i++) {
            if (mapped(m->from, m->n, written[i])) continue;
            while (next < m->nlist && (st_size_exist_written(m->list[next]) || mapped(m->to, m->n, m->list[next]))) next++;
            if (next == m->nlist) break;
            m->from[m->n] = written[i];
            m->to[m->n++] = m->list[next++];
        }
        if (nw == 1 && size == written[0] && !mapped(m->from, m->n, size)) {
            const st_size *whole = whole_of(m, size);
            if (!whole && m->nwhole < MAX_WRITTEN) {
                m->whole_from[m->nwhole] = size;
                m->whole_to[m->nwhole++] = whole = got->size;
            }
            return st_type_array(e->cx, whole ? whole : size, elem);
        }
        st_err inner = {0};
        size = st_size_replace_exist(e->cx, size, m->from, m->to, m->n, &inner);
        if (!size) return NULL;
    }
    return st_type_array(e->cx, size, elem);
}

/* The declared result, its `?name`s standing for got's existentials. */
static const st_type *declared_for(elab *e, const st_type *declared, const st_type *got) {
    exist_map m = {0};
    const st_type *t = fill_written(e, declared, got, &m);
    return t ? t : declared;
}

static bool expect_type(elab *e, const st_type *want, const st_type *got, st_loc at, const char *what) {
    if (want == got) return true;
    st_buf w = {0}, g = {0};
    st_type_print(want, &w);
    st_type_print(got, &g);
    st_fail(e->err, at, "%s has type %s, but %s was declared", what, g.data ? g.data : "?", w.data ? w.data : "?");
    st_buf_free(&w);
    st_buf_free(&g);
    return false;
}

/* ---- functions of one's own ----
 *
 * The IR has no calls: a def called from another (`f(a, b)`) or passed to a
 * primitive (`scan(f, 0)`) is elaborated again in that place from its syntax,
 * its parameters bound to the arguments and its sizes to the arguments'
 * lengths, so rules see the body itself. Every def is also checked once on
 * its own (st_ast_elaborate), which is where errors in its body are found. */

enum { MAX_INLINED = 100000 }; /* a chain of defs each calling the next twice is exponential */

static const ast_def *find_def(const elab *e, const char *name) {
    for (uint32_t i = 0; e->prog && i < e->prog->ndefs; i++)
        if (e->prog->defs[i].name == name) return &e->prog->defs[i];
    return NULL;
}

/* d is about to be elaborated inside the defs on the stack: refuse a cycle,
 * naming it. */
static bool enter_def(elab *e, const ast_def *d, st_loc at) {
    for (uint32_t i = 0; i < e->depth; i++) {
        if (e->stack[i] != d) continue;
        st_buf b = {0};
        for (uint32_t j = i; j < e->depth; j++) st_buf_printf(&b, "%s -> ", e->stack[j]->name);
        st_buf_puts(&b, d->name);
        st_fail(e->err, at, "`%s` is recursive (%s); functions are inlined where they are used, so no def may call itself, directly or through others",
                d->name, b.data ? b.data : "");
        st_buf_free(&b);
        return false;
    }
    if (++e->inlined > MAX_INLINED)
        return st_fail(e->err, at, "more than %d calls of functions to inline; the program would be too large", MAX_INLINED);
    e->stack[e->depth++] = d;
    return true;
}

static const char *type_text(const st_type *t, st_buf *b) {
    st_type_print(t, b);
    return b->data ? b->data : "?";
}

/* Bind the sizes named by d's parameter type t to those of the argument's
 * type got: `[n]t` given `[N-2]t` binds n := N-2. */
static bool bind_lengths(elab *e, const ast_def *d, const ast_type *t, const st_type *got, size_bind *binds,
                         uint32_t nimplicit, st_loc at, uint32_t argno) {
    if (t->kind == T_ARRAY && got->kind == ST_TYPE_ARRAY) {
        for (uint32_t i = 0; t->size->kind == A_NAME && i < nimplicit; i++) {
            if (binds[i].name != t->size->name) continue;
            if (binds[i].size && binds[i].size != got->size) {
                st_buf w = {0}, g = {0};
                st_size_print(binds[i].size, &w);
                st_size_print(got->size, &g);
                st_fail(e->err, at, "argument %u of `%s` has length %s, but `%s`'s size `%s` is already %s", argno, d->name,
                        g.data ? g.data : "?", d->name, binds[i].name, w.data ? w.data : "?");
                st_buf_free(&w);
                st_buf_free(&g);
                return false;
            }
            binds[i].size = got->size;
        }
        return bind_lengths(e, d, t->elem, got->elem, binds, nimplicit, at, argno);
    }
    if (t->kind == T_TUPLE && got->kind == ST_TYPE_TUPLE && got->n == t->n)
        for (uint32_t i = 0; i < t->n; i++)
            if (!bind_lengths(e, d, t->items[i], got->items[i], binds, nimplicit, at, argno)) return false;
    return true;
}

/* The caller's state, saved while a def's body is elaborated in its place. */
typedef struct frame {
    size_t base, n;
    const size_bind *binds;
    uint32_t nbinds;
    bool inlining;
} frame;

/* Start elaborating d given arguments of `types` (args: their nodes, NULL
 * when d is a function passed to a primitive): its sizes bound, its
 * parameters' types checked against the arguments', and its size names in
 * scope as values. On success the caller's state is in *saved and the
 * parameter types in ptypes; leave_def restores it. */
static bool enter_body(elab *e, const ast_def *d, const st_type *const *types, const st_node *const *args,
                       const st_loc *locs, const st_type **ptypes, frame *saved) {
    *saved = (frame){e->base, e->n, e->binds, e->nbinds, e->inlining};
    names implicit = {0};
    for (uint32_t i = 0; i < d->nparams; i++)
        if (!collect_type_sizes(e, d, d->params[i].type, &implicit)) return false;
    size_bind *binds = st_arena_zalloc(e->scratch, (implicit.n + d->nparams + 1) * sizeof *binds);
    if (!binds) return st_fail_internal(e->err, "out of memory");
    uint32_t nb = implicit.n;
    for (uint32_t i = 0; i < nb; i++) binds[i].name = implicit.items[i];
    for (uint32_t i = 0; i < d->nparams; i++) {
        if (!bind_lengths(e, d, d->params[i].type, types[i], binds, implicit.n, locs[i], i + 1)) return false;
        const ast_type *t = d->params[i].type;
        if (t->kind == T_SCALAR && st_scalar_is_int(t->scalar))
            binds[nb++] = (size_bind){d->params[i].name, args && types[i] == st_type_scalar(e->cx, t->scalar) ? st_node_as_size(e->cx, args[i], NULL) : NULL};
    }
    for (uint32_t i = 0; i < d->nfacts; i++)
        for (uint32_t k = 0; k < nb; k++) {
            if (binds[k].name != d->facts[i].name || !binds[k].size) continue;
            if (!st_size_divides(st_size_const(e->cx, d->facts[i].divisor), binds[k].size)) {
                st_buf b = {0};
                st_size_print(binds[k].size, &b);
                st_fail(e->err, locs[0], "`%s` needs %s %% %lld == 0 (line %d), but %s is %s here, not known to be a multiple of %lld",
                        d->name, binds[k].name, (long long)d->facts[i].divisor, d->facts[i].loc.line, binds[k].name,
                        b.data ? b.data : "?", (long long)d->facts[i].divisor);
                st_buf_free(&b);
                return false;
            }
        }
    e->binds = binds;
    e->nbinds = nb;
    e->inlining = true;
    for (uint32_t i = 0; i < d->nparams; i++) {
        if (!(ptypes[i] = type_expr(e, d->params[i].type))) return false;
        if (ptypes[i] != types[i]) {
            st_buf w = {0}, g = {0};
            st_fail(e->err, locs[i], "argument %u of `%s` has type %s, but its parameter `%s` is %s", i + 1, d->name,
                    type_text(types[i], &g), d->params[i].name, type_text(ptypes[i], &w));
            st_buf_free(&w);
            st_buf_free(&g);
            return false;
        }
    }
    e->base = e->n;
    /* the sizes are i64 values in the body, as in any def */
    for (uint32_t i = 0; i < implicit.n; i++) {
        st_err quiet = {0};
        const st_node *v = binds[i].size ? st_size_expr(e->cx, e->top, binds[i].size, &quiet) : NULL;
        if (v && !push_var(e, binds[i].name, v)) return false;
    }
    return true;
}

static void leave_body(elab *e, const frame *saved) {
    e->base = saved->base;
    e->n = saved->n;
    e->binds = saved->binds;
    e->nbinds = saved->nbinds;
    e->inlining = saved->inlining;
    e->depth--;
}

/* d's body, its parameters bound (pushed already); checked against its
 * declared result. */
static const st_node *def_body(elab *e, const ast_def *d, st_loc at) {
    const st_type *declared = NULL;
    if (d->result && !(declared = result_type(e, d->result))) return NULL;
    const st_node *body = expr(e, d->body, declared);
    if (body && declared) declared = declared_for(e, declared, body->type);
    if (!body || !declared || body->type == declared) return body;
    st_buf w = {0}, g = {0};
    st_fail(e->err, at, "`%s` returns %s here, but declares %s", d->name, type_text(body->type, &g), type_text(declared, &w));
    st_buf_free(&w);
    st_buf_free(&g);
    return NULL;
}

/* Does a, or the body of a def it calls, bind `name` (a let, a lambda's
 * parameter, a loop's variables or index)? A caller's variable of that
 * name put in for a parameter there would be taken for the inner one. */
static bool binds_name(const elab *e, const ast *a, const char *name, uint32_t depth) {
    if (!a || depth > 64) return depth > 64; /* deeper than any def nests: assume so */
    if (a->kind == A_LAMBDA || a->kind == A_LET || a->kind == A_LOOP)
        for (uint32_t i = 0; i < a->nnames; i++)
            if (a->names[i] == name) return true;
    if (a->kind == A_LOOP && !a->bval && a->nkids > 1 && a->kids[1] && a->kids[1]->kind == A_NAME && a->kids[1]->name == name)
        return true;
    if (a->kind == A_CALL) {
        const ast_def *d = find_def(e, a->name);
        if (d && binds_name(e, d->body, name, depth + 1)) return true;
    }
    for (uint32_t i = 0; i < a->nkids; i++)
        if (binds_name(e, a->kids[i], name, depth + 1)) return true;
    return false;
}

/* An argument cheap enough to stand in for its parameter wherever it is
 * used: a literal, or a variable (or a part of one) that nothing in the
 * callee binds again (there it would be captured); any other is bound once
 * by a let, under a fresh name. */
static bool is_trivial(const elab *e, const ast_def *callee, const st_node *n) {
    while (n->kind == ST_NODE_PROJ) n = n->kids[0];
    if (n->kind == ST_NODE_VAR) return !binds_name(e, callee->body, n->u.name, 0);
    return n->kind == ST_NODE_LIT;
}

/* f(a, b): let (x', y') = (a, b) in f's body, under fresh names, so that
 * nothing in the arguments is captured; variables and literals are put in
 * directly. */
static const st_node *inline_call(elab *e, const ast_def *d, const ast *a) {
    uint32_t n = a->nkids;
    if (n != d->nparams)
        return st_fail(e->err, a->loc, "`%s` takes %u argument%s, but was given %u", d->name, d->nparams,
                       d->nparams == 1 ? "" : "s", n), NULL;
    const st_node **args = parts(e, n), **lets = parts(e, n), **vals = parts(e, n);
    const st_type **types = parts(e, n), **ptypes = parts(e, n);
    st_loc *locs = st_arena_zalloc(e->scratch, (n ? n : 1) * sizeof *locs);
    if (!args || !lets || !vals || !types || !ptypes || !locs) return st_fail_internal(e->err, "out of memory"), NULL;
    for (uint32_t i = 0; i < n; i++) {
        const ast_type *t = d->params[i].type;
        bool plain = t->kind == T_SCALAR || (t->kind == T_TUPLE);
        for (uint32_t k = 0; plain && t->kind == T_TUPLE && k < t->n; k++) plain = t->items[k]->kind == T_SCALAR;
        /* a scalar parameter's type is the hint for an unsuffixed literal
         * (and names no size, so it needs no binding yet) */
        const st_type *want = plain ? type_expr(e, t) : NULL;
        if (plain && !want) return NULL;
        if (!(args[i] = expr(e, a->kids[i], want))) return NULL;
        types[i] = args[i]->type;
        locs[i] = a->kids[i]->loc;
    }
    if (!enter_def(e, d, a->loc)) return NULL;
    frame saved;
    const st_node *body = NULL;
    uint32_t nlets = 0;
    if (enter_body(e, d, types, args, locs, ptypes, &saved)) {
        bool ok = true;
        for (uint32_t i = 0; i < n && ok; i++) {
            const st_node *v = args[i];
            if (!is_trivial(e, d, v)) {
                const char *fresh = st_fresh_name(e->cx, d->params[i].name);
                v = fresh ? st_let_var(e->cx, fresh, args[i]) : NULL;
                if (!v) ok = st_fail_internal(e->err, "out of memory");
                else lets[nlets] = v, vals[nlets++] = args[i];
            }
            ok = ok && push_var(e, d->params[i].name, v);
        }
        e->in_lambda++;
        body = ok ? def_body(e, d, a->loc) : NULL;
        e->in_lambda--;
    }
    leave_body(e, &saved);
    if (!body || nlets == 0) return body;
    st_err inner = {0};
    const st_node *value = nlets == 1 ? vals[0] : st_tuple(e->cx, nlets, vals, &inner);
    const st_node *n2 = value ? st_let(e->cx, nlets, lets, value, body, &inner) : NULL;
    return n2 ? n2 : relocate(e, &inner, a->loc, NULL, 0);
}

/* `scan(f, 0)`, `map(g)`: d as a lambda over the parameters the primitive
 * passes (one tuple may be taken apart, as by a lambda). */
static const st_node *def_as_function(elab *e, const ast_def *d, const ast *a, const st_type *const *params,
                                      int np, const char *prim) {
    uint32_t k = d->nparams;
    const st_type **types = parts(e, k ? k : 1), **ptypes = parts(e, k ? k : 1);
    const st_node **vars = parts(e, k ? k : 1);
    st_loc *locs = st_arena_zalloc(e->scratch, (k ? k : 1) * sizeof *locs);
    if (!types || !ptypes || !vars || !locs) return st_fail_internal(e->err, "out of memory"), NULL;
    if ((int)k == np) {
        for (uint32_t i = 0; i < k; i++) types[i] = params[i];
    } else if (np == 1 && params[0]->kind == ST_TYPE_TUPLE && params[0]->n == k && k > 1) {
        for (uint32_t i = 0; i < k; i++) types[i] = params[0]->items[i];
    } else {
        st_buf b = {0};
        for (int i = 0; i < np; i++) {
            if (i) st_buf_puts(&b, ", ");
            st_type_print(params[i], &b);
        }
        st_fail(e->err, a->loc, "`%s` takes %u argument%s, but %s passes %d (%s)", d->name, k, k == 1 ? "" : "s", prim, np,
                b.data ? b.data : "");
        st_buf_free(&b);
        return NULL;
    }
    for (uint32_t i = 0; i < k; i++) locs[i] = a->loc;
    if (!enter_def(e, d, a->loc)) return NULL;
    frame saved;
    const st_node *body = NULL;
    if (enter_body(e, d, types, NULL, locs, ptypes, &saved)) {
        bool ok = true;
        for (uint32_t i = 0; i < k && ok; i++) {
            vars[i] = st_var(e->cx, d->params[i].name, types[i], NULL);
            ok = vars[i] && push_var(e, d->params[i].name, vars[i]);
        }
        body = ok ? def_body(e, d, a->loc) : NULL;
    }
    leave_body(e, &saved);
    if (!body) return NULL;
    st_err inner = {0};
    const st_node *n = st_lambda(e->cx, k, vars, body, &inner);
    return n ? n : relocate(e, &inner, a->loc, NULL, 0);
}

/* ---- functions (the arguments of primitives) ---- */

/* `map2(+, xs, ys)`, `zip(xs, ys) |> map(atan2)`: an operator given where
 * the function takes one pair of scalars of one type, as the lambda
 * `(a, b) => a op b`, which takes the pair apart. */
static const st_node *opfn_of_pair(elab *e, st_binop op, st_loc loc, const st_type *pair) {
    const st_type *t = pair->items[0];
    const st_node *vars[2] = {st_var(e->cx, st_fresh_name(e->cx, "a"), t, NULL),
                              st_var(e->cx, st_fresh_name(e->cx, "b"), t, NULL)};
    if (!vars[0] || !vars[1]) return st_fail_internal(e->err, "out of memory"), NULL;
    st_err inner = {0};
    const st_node *body = st_binary(e->cx, op, vars[0], vars[1], &inner);
    const st_node *n = body ? st_lambda(e->cx, 2, vars, body, &inner) : NULL;
    return n ? n : relocate(e, &inner, loc, NULL, 0);
}

static const st_node *opfn(elab *e, st_binop op, st_loc loc, const st_type *const *params, int np,
                           const char *prim) {
    if (np == 1 && params[0]->kind == ST_TYPE_TUPLE && params[0]->n == 2 && params[0]->items[0] == params[0]->items[1] &&
        params[0]->items[0]->kind == ST_TYPE_SCALAR)
        return opfn_of_pair(e, op, loc, params[0]);
    if (np != 2 || params[0] != params[1] || params[0]->kind != ST_TYPE_SCALAR) {
        st_buf b = {0};
        for (int i = 0; i < np; i++) {
            if (i) st_buf_puts(&b, ", ");
            st_type_print(params[i], &b);
        }
        st_fail(e->err, loc, "`%s` combines two scalars of one type, but %s's function here takes (%s); write a lambda",
                st_binop_name(op), prim, b.data ? b.data : "");
        st_buf_free(&b);
        return NULL;
    }
    st_err inner = {0};
    const st_node *n = st_opfn(e->cx, op, params[0]->scalar, &inner);
    return n ? n : relocate(e, &inner, loc, NULL, 0);
}

__attribute__((noinline)) static const st_node *arity_error(elab *e, const ast *a, const st_type *const *params,
                                                            int np, const char *prim) {
    st_buf b = {0};
    for (int i = 0; i < np; i++) {
        if (i) st_buf_puts(&b, ", ");
        st_type_print(params[i], &b);
    }
    st_fail(e->err, a->loc, "this lambda takes %u parameter%s, but %s passes %d (%s)", a->nnames,
            a->nnames == 1 ? "" : "s", prim, np, b.data ? b.data : "");
    st_buf_free(&b);
    return NULL;
}

static const st_node *lambda(elab *e, const ast *a, const st_type *const *params, int np,
                             const st_type *result_hint, const char *prim) {
    uint32_t k = a->nnames;
    if (k > 63) return st_fail(e->err, a->loc, "a lambda has at most 63 parameters"), NULL;
    const st_type **types = parts(e, k);
    const st_node **vars = parts(e, k);
    if (!types || !vars) return NULL;
    if ((int)k == np) {
        for (uint32_t i = 0; i < k; i++) types[i] = params[i];
    } else if (np == 1 && params[0]->kind == ST_TYPE_TUPLE && params[0]->n == k && k > 1) {
        for (uint32_t i = 0; i < k; i++) types[i] = params[0]->items[i];
    } else {
        return arity_error(e, a, params, np, prim);
    }
    size_t mark = e->n;
    if (!distinct_names(e, a, "a parameter named")) return NULL;
    for (uint32_t i = 0; i < k; i++) {
        if (a->annots[i]) {
            const st_type *t = type_expr(e, a->annots[i]);
            if (!t || !expect_type(e, t, types[i], a->name_locs[i], "this parameter")) return NULL;
        }
        vars[i] = st_var(e->cx, a->names[i], types[i], NULL);
        if (!vars[i] || !push_var(e, a->names[i], vars[i])) return NULL;
    }
    e->in_lambda++;
    const st_node *body = expr(e, a->kids[0], result_hint);
    e->in_lambda--;
    e->n = mark;
    if (!body) return NULL;
    st_err inner = {0};
    const st_node *n = st_lambda(e->cx, k, vars, body, &inner);
    return n ? n : relocate(e, &inner, a->loc, NULL, 0);
}

/* x => op(x), or x => k(x) (a conversion) where op is ST_UNOP_COUNT: a
 * built-in function of one argument passed by its name. */
static const st_node *builtin_lambda(elab *e, st_loc loc, const st_type *param, st_unop op, st_scalar_kind k) {
    const st_node *x = st_var(e->cx, st_fresh_name(e->cx, "x"), param, NULL);
    st_err inner = {0};
    const st_node *body = !x ? NULL : op == ST_UNOP_COUNT ? st_conv(e->cx, k, x, &inner) : st_unary(e->cx, op, x, &inner);
    const st_node *n = body ? st_lambda(e->cx, 1, &x, body, &inner) : NULL;
    return n ? n : relocate(e, &inner, loc, NULL, 0);
}

/* A type's name as a function is its conversion: map(i64, pixels) is
 * map(x => i64(x), pixels), which is how it prints. */
static const st_node *conversion_fn(elab *e, st_scalar_kind k, st_loc loc, const st_type *const *params, int np,
                                    const char *prim) {
    if (np != 1)
        return st_fail(e->err, loc, "%s passes %d arguments to the conversion %s, which takes one number", prim, np,
                       st_scalar_name(k)), NULL;
    if (params[0]->kind != ST_TYPE_SCALAR) {
        st_buf t = {0};
        st_type_print(params[0], &t);
        st_fail(e->err, loc, "%s passes %s to the conversion %s, which takes one number", prim, t.data ? t.data : "?",
                st_scalar_name(k));
        st_buf_free(&t);
        return NULL;
    }
    return builtin_lambda(e, loc, params[0], ST_UNOP_COUNT, k);
}

/* A function unop's name as a function: map(sqrt, xs) is map(x => sqrt(x), xs). */
static const st_node *unop_fn(elab *e, st_unop op, st_loc loc, const st_type *const *params, int np, const char *prim) {
    if (np != 1)
        return st_fail(e->err, loc, "%s passes %d arguments to %s, which takes one", prim, np, st_unop_function(op)), NULL;
    return builtin_lambda(e, loc, params[0], op, ST_BOOL);
}

static const st_node *unknown_function(elab *e, const ast *a);

static const st_node *function(elab *e, const ast *a, const st_type *const *params, int np,
                               const st_type *result_hint, const char *prim) {
    st_scalar_kind k;
    if (a->kind == A_NAME && !lookup(e, a->name) && st_scalar_from_name(a->name, strlen(a->name), &k))
        return conversion_fn(e, k, a->loc, params, np, prim);
    if (a->kind == A_LAMBDA) return lambda(e, a, params, np, result_hint, prim);
    if (a->kind == A_OPREF) return opfn(e, a->binop, a->loc, params, np, prim);
    if (a->kind == A_NAME && !lookup(e, a->name) && (!strcmp(a->name, "min") || !strcmp(a->name, "max")))
        return opfn(e, a->name[1] == 'i' ? ST_OP_MIN : ST_OP_MAX, a->loc, params, np, prim);
    const ast_def *d = a->kind == A_NAME && !lookup(e, a->name) ? find_def(e, a->name) : NULL;
    if (d) return def_as_function(e, d, a, params, np, prim);
    if (a->kind == A_NAME && !lookup(e, a->name)) {
        /* a built-in function by its name: map(sqrt, xs) is map(x => sqrt(x), xs) */
        if (!strcmp(a->name, "atan2")) return opfn(e, ST_OP_ATAN2, a->loc, params, np, prim);
        for (st_unop op = ST_OP_SQRT; op < ST_UNOP_COUNT; op++)
            if (!strcmp(a->name, st_unop_function(op))) return unop_fn(e, op, a->loc, params, np, prim);
        return unknown_function(e, a);
    }
    st_fail(e->err, a->loc, "%s expects a function here: a lambda like `x => x + 1` or an operator like `+`", prim);
    return NULL;
}

/* ---- calls ---- */

static const st_node *prim_call(elab *e, st_prim p, const ast *a, const st_type *hint) {
    const st_prim_info *info = st_prim_get(p);
    uint32_t n = a->nkids;
    if (e->in_lambda && st_prim_sizes_at_run_time(p))
        return st_fail(e->err, a->loc, "%s makes a length known only at run time, which is allowed only at the top of a def "
                                       "or of a loop's body there, not inside a lambda (each element would have a length of its own)",
                       info->name), NULL;
    if (!st_prim_takes(p, n)) {
        char arity[48];
        st_prim_describe_arity(p, arity, sizeof arity);
        st_fail(e->err, a->loc, "%s takes %s argument%s, but was given %u", info->name, arity,
                strcmp(arity, "1") ? "s" : "", n);
        return NULL;
    }
    const st_node **args = parts(e, n);
    const st_type **types = parts(e, n);
    if (!args || !types) return NULL;
    /* data first, then neutral elements (typed from the data), then functions */
    for (int pass = 0; pass < 3; pass++)
        for (uint32_t i = 0; i < n; i++) {
            st_arg_role role = st_prim_arg_role(p, (int)i, n);
            if ((int)role != pass) continue;
            const st_type *params[2], *result = NULL;
            int np = 0;
            const st_type *want = NULL;
            if (role != ST_ARG_DATA) {
                st_err inner = {0};
                if (!st_prim_expect(e->cx, p, (int)i, types, (int)n, params, &np, &result, &inner))
                    return relocate(e, &inner, a->loc, (const ast *const *)a->kids, n);
                want = params[0];
            } else if ((p == ST_PRIM_REPLICATE || p == ST_PRIM_SCRATCH) && i == 1 && hint && hint->kind == ST_TYPE_ARRAY) {
                want = hint->elem;
            } else if ((p == ST_PRIM_TAKE || p == ST_PRIM_DROP) && i == 0) {
                want = st_type_scalar(e->cx, ST_I64); /* a count, as a loop's */
            }
            if (role == ST_ARG_FUN) {
                args[i] = function(e, a->kids[i], params, np, result, info->name);
            } else {
                args[i] = expr(e, a->kids[i], want);
            }
            if (!args[i]) return NULL;
            types[i] = args[i]->type;
        }
    st_err inner = {0};
    const st_node *node = st_prim_node(e->cx, p, n, args, &inner);
    return node ? node : relocate(e, &inner, a->loc, (const ast *const *)a->kids, n);
}

static const st_node *binop(elab *e, st_binop op, const ast *l, const ast *r, st_loc loc,
                            const st_type *hint) {
    bool same_type = st_binop_result(op, ST_I32) == ST_I32; /* arithmetic keeps the operands' type */
    const st_type *operand_hint = same_type ? hint : NULL;
    const st_node *ln, *rn;
    if (is_weak_literal(l) && !is_weak_literal(r)) {
        rn = expr(e, r, operand_hint);
        ln = rn ? expr(e, l, rn->type) : NULL;
    } else {
        ln = expr(e, l, operand_hint);
        rn = ln ? expr(e, r, ln->type) : NULL;
    }
    if (!ln || !rn) return NULL;
    st_err inner = {0};
    const st_node *n = st_binary(e->cx, op, ln, rn, &inner);
    const ast *operands[2] = {l, r};
    return n ? n : relocate(e, &inner, loc, operands, 2);
}

static const st_node *rotate(elab *e, const ast *a);
static const st_node *with_update(elab *e, const ast *a);

__attribute__((noinline)) static const st_node *unknown_function(elab *e, const ast *a) {
    char hint_text[128];
    const char *cands[256];
    int nc = 0;
    for (size_t i = 0; i < sizeof known_functions / sizeof *known_functions; i++) cands[nc++] = known_functions[i];
    for (st_unop op = ST_OP_SQRT; op < ST_UNOP_COUNT; op++) cands[nc++] = st_unop_function(op);
    cands[nc++] = "atan2";
    for (uint32_t i = 0; e->prog && i < e->prog->ndefs && nc < 256; i++) cands[nc++] = e->prog->defs[i].name;
    suggest(a->name, cands, nc, hint_text, sizeof hint_text);
    st_fail(e->err, a->loc, "unknown function `%s`%s", a->name, hint_text);
    return NULL;
}

static const st_node *call(elab *e, const ast *a, const st_type *hint) {
    st_prim p;
    st_scalar_kind k;
    if (st_prim_from_name(a->name, strlen(a->name), &p)) return prim_call(e, p, a, hint);
    if (st_scalar_from_name(a->name, strlen(a->name), &k)) {
        if (a->nkids != 1) return st_fail(e->err, a->loc, "%s(…) converts one value, but was given %u", a->name, a->nkids), NULL;
        const st_node *x = expr(e, a->kids[0], NULL);
        if (!x) return NULL;
        st_err inner = {0};
        const st_node *n = st_conv(e->cx, k, x, &inner);
        return n ? n : relocate(e, &inner, a->loc, (const ast *const *)a->kids, 1);
    }
    if (!strcmp(a->name, "min") || !strcmp(a->name, "max")) {
        if (a->nkids != 2) return st_fail(e->err, a->loc, "%s takes 2 arguments, but was given %u", a->name, a->nkids), NULL;
        return binop(e, a->name[1] == 'i' ? ST_OP_MIN : ST_OP_MAX, a->kids[0], a->kids[1], a->loc, hint);
    }
    const ast_def *d = find_def(e, a->name);
    if (d) return inline_call(e, d, a);
    /* atan2, as sqrt below: after the program's own defs */
    if (!strcmp(a->name, "atan2")) {
        if (a->nkids != 2) return st_fail(e->err, a->loc, "atan2 takes 2 arguments, but was given %u", a->nkids), NULL;
        return binop(e, ST_OP_ATAN2, a->kids[0], a->kids[1], a->loc, hint);
    }
    /* sqrt, exp, log, abs, sin … isinf: after the program's own defs, so
     * that a def of one of these names written before they existed keeps
     * its meaning */
    for (st_unop op = ST_OP_SQRT; op < ST_UNOP_COUNT; op++) {
        if (strcmp(a->name, st_unop_function(op))) continue;
        if (a->nkids != 1) return st_fail(e->err, a->loc, "%s takes 1 argument, but was given %u", a->name, a->nkids), NULL;
        /* the result's type is the operand's where the function keeps it:
         * bits(1) under a u64 hint is still the bits of an i32 */
        bool keeps_type = st_unop_is_float_function(op) || op == ST_OP_ABS;
        const st_node *x = expr(e, a->kids[0], keeps_type ? hint : NULL);
        if (!x) return NULL;
        st_err inner = {0};
        const st_node *n = st_unary(e->cx, op, x, &inner);
        return n ? n : relocate(e, &inner, a->loc, (const ast *const *)a->kids, 1);
    }
    if (!strcmp(a->name, "rotate")) return rotate(e, a);
    if (!strcmp(a->name, "#with")) return with_update(e, a);
    /* map2(f, xs, ys) and map3(f, xs, ys, zs), Futhark's: f over the
     * arrays' elements side by side, a map of their zip */
    uint32_t arrays = !strcmp(a->name, "map2") ? 2 : !strcmp(a->name, "map3") ? 3 : 0;
    if (arrays) {
        if (a->nkids != arrays + 1)
            return st_fail(e->err, a->loc, "%s takes a function and %u arrays, but was given %u arguments", a->name,
                           arrays, a->nkids), NULL;
        ast zipped = *a, mapped = *a;
        zipped.name = "zip";
        zipped.kids = a->kids + 1;
        zipped.nkids = arrays;
        ast *kids[2] = {a->kids[0], &zipped};
        mapped.name = "map";
        mapped.kids = kids;
        mapped.nkids = 2;
        const st_node *n = prim_call(e, ST_PRIM_MAP, &mapped, hint);
        /* the zip's refusal is the user's map2's */
        if (!n && !strncmp(e->err->message, "zip ", 4)) {
            char said[sizeof e->err->message - 8];
            snprintf(said, sizeof said, "%s", e->err->message + 4);
            snprintf(e->err->message, sizeof e->err->message, "%.4s %s", a->name, said);
        }
        return n;
    }
    return unknown_function(e, a);
}

/* ---- array literals and slices ----
 *
 * Both are index maps, `iota(n) |> map(i => …)`, which every pass already
 * takes as a view (no memory: codegen reads them as index arithmetic, a
 * slice as an offset): `xs[a:b]` is `iota(b - a) |> map(i => xs |> get(i +
 * a))` and `[x, y, z]` is `iota(3) |> map(i => if i < 1 then x else if i <
 * 2 then y else z)`, a balanced tree of ifs. The printer writes these shapes
 * back as `xs[a:b]` and `[x, y, z]`. The index variable is named so that
 * nothing it spans mentions it (the same name for the same parts, so a
 * printed program reads back to the same IR). */

static const st_node *index_var(elab *e, const st_node *const *parts_, uint32_t n) {
    char buf[32];
    st_index_name(parts_, n, buf, sizeof buf);
    const char *name = st_intern_cstr(e->cx, buf);
    if (!name) return st_fail_internal(e->err, "out of memory"), NULL;
    return st_var(e->cx, name, st_type_scalar(e->cx, ST_I64), NULL);
}

static const st_node *index_map(elab *e, const st_node *i, const st_node *body, const st_node *len, st_loc at) {
    st_err inner = {0};
    const st_node *f = st_lambda(e->cx, 1, &i, body, &inner);
    const st_node *iota = f ? st_prim_node(e->cx, ST_PRIM_IOTA, 1, &len, &inner) : NULL;
    const st_node *args[2] = {f, iota};
    const st_node *n = iota ? st_prim_node(e->cx, ST_PRIM_MAP, 2, args, &inner) : NULL;
    return n ? n : relocate(e, &inner, at, NULL, 0);
}

/* items[lo..hi) chosen by i: the tree the printer reads back (ir/print.c) */
static const st_node *select_tree(st_ctx *cx, const st_node *i, const st_node *const *items, uint32_t lo, uint32_t hi,
                                  st_err *err) {
    if (hi - lo == 1) return items[lo];
    uint32_t mid = lo + (hi - lo) / 2;
    const st_node *c = st_binary(cx, ST_OP_LT, i, st_lit_int(cx, ST_I64, mid), err);
    const st_node *l = c ? select_tree(cx, i, items, lo, mid, err) : NULL;
    const st_node *r = l ? select_tree(cx, i, items, mid, hi, err) : NULL;
    return r ? st_if(cx, c, l, r, err) : NULL;
}

/* rows[lo..hi) end to end: a balanced tree of concats, so that an element
 * is found through log2 of the rows' count tests, not through one a row */
static const st_node *rows_joined(st_ctx *cx, const st_node *const *rows, uint32_t lo, uint32_t hi, st_err *err) {
    if (hi - lo == 1) return rows[lo];
    uint32_t mid = lo + (hi - lo) / 2;
    const st_node *l = rows_joined(cx, rows, lo, mid, err);
    const st_node *r = l ? rows_joined(cx, rows, mid, hi, err) : NULL;
    const st_node *args[2] = {l, r};
    return r ? st_prim_node(cx, ST_PRIM_CONCAT, 2, args, err) : NULL;
}

/* [[1, 2], [3, 4]], [xs, ys], [[[…]]]: rows of one array type [m]t, end to
 * end and split into rows of m again, `concat(…) |> split(m)`, so that
 * every pass reads it as views of its rows (items[first] is elaborated). */
static const st_node *array_of_arrays(elab *e, const ast *a, const st_node **items, uint32_t first,
                                      const st_type *want) {
    uint32_t n = a->nkids;
    const st_type *t = items[first]->type;
    for (uint32_t k = 0; k < n; k++) {
        if (k != first && !(items[k] = expr(e, a->kids[k], want ? want : t))) return NULL;
        if (items[k]->type != t) {
            st_buf w = {0}, g = {0};
            st_fail(e->err, a->kids[k]->loc, "the rows of an array literal have one type: row %u is %s, but row %u is %s",
                    first + 1, type_text(t, &w), k + 1, type_text(items[k]->type, &g));
            st_buf_free(&w);
            st_buf_free(&g);
            return NULL;
        }
    }
    /* rows of rows ([d1][d2]…t) are joined into one dimension first: a
     * concat chooses scalars and tuples, not arrays, element by element;
     * the splits then restore d_L, …, d1 */
    st_err inner = {0};
    const st_size *dims[ST_MAX_KIDS];
    uint32_t levels = 0;
    for (const st_type *r = t; r->kind == ST_TYPE_ARRAY; r = r->elem) {
        if (levels == ST_MAX_KIDS) return st_fail(e->err, a->loc, "an array literal nested too deeply"), NULL;
        dims[levels++] = r->size;
    }
    for (uint32_t k = 0; k < n; k++)
        for (uint32_t l = 1; l < levels && items[k]; l++) items[k] = st_prim_node(e->cx, ST_PRIM_JOIN, 1, &items[k], &inner);
    const st_node *r = NULL;
    for (uint32_t k = 0; k < n; k++)
        if (!items[k]) return relocate(e, &inner, a->loc, NULL, 0);
    r = rows_joined(e->cx, items, 0, n, &inner);
    for (uint32_t l = levels; r && l-- > 0;) {
        const st_node *m = st_size_expr(e->cx, e->top, dims[l], &inner);
        const st_node *args[2] = {m, r};
        r = m ? st_prim_node(e->cx, ST_PRIM_SPLIT, 2, args, &inner) : NULL;
    }
    return r ? r : relocate(e, &inner, a->loc, NULL, 0);
}

static const st_node *array_literal(elab *e, const ast *a, const st_type *hint) {
    uint32_t n = a->nkids;
    const st_type *want = hint && hint->kind == ST_TYPE_ARRAY ? hint->elem : NULL;
    if (n == 0) {
        int64_t len;
        if (!want || want->kind != ST_TYPE_SCALAR || !st_size_is_const(hint->size, &len) || len != 0)
            return st_fail(e->err, a->loc, "an empty array literal `[]` has no element type here; write replicate(0, 0) (or 0i64, 0.0, …) for an empty array"), NULL;
        const st_node *args[2] = {st_lit_int(e->cx, ST_I64, 0), st_lit(e->cx, want->scalar, (st_scalar){.bits = 0})};
        st_err inner = {0};
        const st_node *r = st_prim_node(e->cx, ST_PRIM_REPLICATE, 2, args, &inner);
        return r ? r : relocate(e, &inner, a->loc, NULL, 0);
    }
    const st_node **items = parts(e, n);
    if (!items) return NULL;
    /* an element of known type first: it types the unsuffixed literals */
    uint32_t first = 0;
    while (first < n && is_weak_literal(a->kids[first])) first++;
    if (first == n) first = 0;
    if (!(items[first] = expr(e, a->kids[first], want))) return NULL;
    const st_type *t = items[first]->type;
    if (t->kind == ST_TYPE_ARRAY) return array_of_arrays(e, a, items, first, want);
    if (!st_type_is_plain(t)) {
        st_buf b = {0};
        st_fail(e->err, a->kids[first]->loc, "an array literal's elements are scalars or tuples of scalars, but this has type %s",
                type_text(t, &b));
        st_buf_free(&b);
        return NULL;
    }
    for (uint32_t k = 0; k < n; k++) {
        if (k != first && !(items[k] = expr(e, a->kids[k], t))) return NULL;
        if (items[k]->type != t) {
            st_buf w = {0}, g = {0};
            st_fail(e->err, a->kids[k]->loc, "the elements of an array literal have one type: element %u is %s, but element %u is %s",
                    first + 1, type_text(t, &w), k + 1, type_text(items[k]->type, &g));
            st_buf_free(&w);
            st_buf_free(&g);
            return NULL;
        }
    }
    const st_node *i = index_var(e, items, n);
    if (!i) return NULL;
    st_err inner = {0};
    const st_node *body = select_tree(e->cx, i, items, 0, n, &inner);
    if (!body) return relocate(e, &inner, a->loc, NULL, 0);
    return index_map(e, i, body, st_lit_int(e->cx, ST_I64, n), a->loc);
}

/* lo <= hi: refused now when the sizes decide it is false, else left to
 * the inputs (st_inputs_finish) when they do not decide it. */
static bool need(elab *e, const st_size *lo, const st_size *hi, st_loc at, const char *what) {
    st_err inner = {0};
    const st_size *d = st_size_sub(e->cx, hi, lo, &inner);
    int64_t v;
    if (!d) return *e->err = inner, st_err_at(e->err, at), false;
    if (st_size_is_const(d, &v)) return v >= 0 || st_fail(e->err, at, "%s is out of range", what);
    if (e->nbounds == e->capbounds) {
        uint32_t cap = e->capbounds ? 2 * e->capbounds : 8;
        st_bound *b = st_ctx_alloc(e->cx, cap * sizeof *b);
        if (!b) return st_fail_internal(e->err, "out of memory");
        if (e->nbounds) memcpy(b, e->bounds, e->nbounds * sizeof *b);
        e->bounds = b;
        e->capbounds = cap;
    }
    e->bounds[e->nbounds++] = (st_bound){lo, hi, at, what};
    return true;
}

static const st_node *slice_bound(elab *e, const ast *a, const st_size **size) {
    const st_node *x = expr(e, a, st_type_scalar(e->cx, ST_I64));
    if (!x) return NULL;
    st_err inner = {0};
    if (st_type_is_int(x->type) && x->type->scalar != ST_I64 && !(x = st_conv(e->cx, ST_I64, x, &inner)))
        return relocate(e, &inner, a->loc, NULL, 0);
    if (!st_type_is_int(x->type) || !(*size = st_node_as_size(e->cx, x, NULL)))
        return st_fail(e->err, a->loc, "a slice's bounds are sizes: whole numbers, size variables, integer parameters and + - * / %% of those"), NULL;
    return x;
}

/* v where it is a variable or a literal, else a fresh variable named
 * from base that bound_around binds to it: a computed value used in each
 * element of an index map is computed once. */
static const st_node *once(elab *e, const st_node *v, const char *base) {
    if (v->kind == ST_NODE_VAR || v->kind == ST_NODE_LIT) return v;
    const char *fresh = st_fresh_name(e->cx, base);
    const st_node *var = fresh ? st_let_var(e->cx, fresh, v) : NULL;
    if (!var) st_fail_internal(e->err, "out of memory");
    return var;
}

/* `let var = value in body` where once made var for value; body alone
 * where var is value itself. */
static const st_node *bound_around(elab *e, const st_node *var, const st_node *value, const st_node *body, st_loc at) {
    if (!body || var == value) return body;
    st_err inner = {0};
    const st_node *n = st_let(e->cx, 1, &var, value, body, &inner);
    return n ? n : relocate(e, &inner, at, NULL, 0);
}

/* "the slice LO:HI<of>N", interned: what a bound's check names */
static const char *slice_text(elab *e, const st_size *lo, const st_size *hi, const char *of, const st_size *n) {
    st_buf w = {0};
    st_buf_puts(&w, "the slice ");
    st_size_print(lo, &w);
    st_buf_puts(&w, ":");
    st_size_print(hi, &w);
    st_buf_puts(&w, of);
    st_size_print(n, &w);
    const char *what = w.data ? st_intern_cstr(e->cx, w.data) : NULL;
    st_buf_free(&w);
    if (!what) st_fail_internal(e->err, "out of memory");
    return what;
}

static const st_node *slice(elab *e, const ast *a) {
    const st_node *xs = expr(e, a->kids[0], NULL);
    if (!xs) return NULL;
    if (xs->type->kind != ST_TYPE_ARRAY) {
        st_buf b = {0};
        st_fail(e->err, a->loc, "only an array can be sliced, but this has type %s", type_text(xs->type, &b));
        st_buf_free(&b);
        return NULL;
    }
    const st_size *n = xs->type->size, *slo = st_size_const(e->cx, 0), *shi = n;
    const st_node *lo = st_lit_int(e->cx, ST_I64, 0), *hi;
    if (a->kids[1] && !(lo = slice_bound(e, a->kids[1], &slo))) return NULL;
    if (a->kids[2]) {
        if (!(hi = slice_bound(e, a->kids[2], &shi))) return NULL;
    } else {
        st_err inner = {0};
        if (!(hi = st_size_expr(e->cx, e->top, n, &inner))) return relocate(e, &inner, a->loc, NULL, 0);
    }
    const char *what = slice_text(e, slo, shi, " of an array of ", n);
    if (!what) return NULL;
    if (!need(e, st_size_const(e->cx, 0), slo, a->loc, what) || !need(e, slo, shi, a->loc, what) ||
        !need(e, shi, n, a->loc, what))
        return NULL;
    const st_node *spans[3] = {xs, lo, hi};
    const st_node *i = index_var(e, spans, 3);
    if (!i) return NULL;
    /* a computed array is bound once, not computed again for each element */
    const st_node *bound = xs;
    if (!(xs = once(e, bound, "sliced"))) return NULL;
    bool from0 = lo->kind == ST_NODE_LIT && lo->u.lit.i64 == 0;
    st_err inner = {0};
    const st_node *idx = from0 ? i : st_binary(e->cx, ST_OP_ADD, i, lo, &inner);
    const st_node *gargs[2] = {idx, xs};
    const st_node *get = idx ? st_prim_node(e->cx, ST_PRIM_GET, 2, gargs, &inner) : NULL;
    const st_node *len = from0 ? hi : st_binary(e->cx, ST_OP_SUB, hi, lo, &inner);
    if (!get || !len) return relocate(e, &inner, a->loc, NULL, 0);
    return bound_around(e, xs, bound, index_map(e, i, get, len, a->loc), a->loc);
}

/* rotate(k, xs), Futhark's: element i is xs[(i + k) mod n], k of either
 * sign, an index map like a slice (`iota(n) |> map(i => xs |> get(((i + k)
 * % n + n) % n))`); xs and k bound once where they are computed. */
static const st_node *rotate(elab *e, const ast *a) {
    if (a->nkids != 2) return st_fail(e->err, a->loc, "rotate takes 2 arguments, but was given %u", a->nkids), NULL;
    const st_node *k = expr(e, a->kids[0], st_type_scalar(e->cx, ST_I64));
    const st_node *xs = k ? expr(e, a->kids[1], NULL) : NULL;
    if (!xs) return NULL;
    st_err inner = {0};
    if (!st_type_is_int(k->type))
        return st_fail(e->err, a->kids[0]->loc, "rotate's count is an integer, but this has type %s",
                       st_scalar_name(k->type->kind == ST_TYPE_SCALAR ? k->type->scalar : ST_BOOL)), NULL;
    if (k->type->scalar != ST_I64 && !(k = st_conv(e->cx, ST_I64, k, &inner))) return relocate(e, &inner, a->loc, NULL, 0);
    if (xs->type->kind != ST_TYPE_ARRAY) {
        st_buf b = {0};
        st_fail(e->err, a->kids[1]->loc, "rotate rotates an array, but this has type %s", type_text(xs->type, &b));
        st_buf_free(&b);
        return NULL;
    }
    const st_node *values[2] = {xs, k}, *vars[2] = {once(e, xs, "rotated"), once(e, k, "count")};
    if (!vars[0] || !vars[1]) return NULL;
    const st_node *n = st_size_expr(e->cx, e->top, xs->type->size, &inner);
    const st_node *i = n ? index_var(e, vars, 2) : NULL;
    if (!i) return n ? NULL : relocate(e, &inner, a->loc, NULL, 0);
    const st_node *sum = st_binary(e->cx, ST_OP_ADD, i, vars[1], &inner);
    const st_node *m1 = sum ? st_binary(e->cx, ST_OP_MOD, sum, n, &inner) : NULL;
    const st_node *up = m1 ? st_binary(e->cx, ST_OP_ADD, m1, n, &inner) : NULL;
    const st_node *idx = up ? st_binary(e->cx, ST_OP_MOD, up, n, &inner) : NULL;
    const st_node *gargs[2] = {idx, vars[0]};
    const st_node *get = idx ? st_prim_node(e->cx, ST_PRIM_GET, 2, gargs, &inner) : NULL;
    if (!get) return relocate(e, &inner, a->loc, NULL, 0);
    const st_node *r = bound_around(e, vars[1], values[1], index_map(e, i, get, n, a->loc), a->loc);
    return bound_around(e, vars[0], values[0], r, a->loc);
}

/* `xs with [i] = v` and `xs with [lo:hi] = ys` (parse.c makes them calls
 * of `#with`): a scatter into xs, `scatter(xs, [iota(n)[i]], [v])`, whose
 * index goes through a get of iota(n), so that an index outside xs is an
 * error at run time where it is read (a scatter leaves such an index
 * alone), and `scatter(xs, iota(hi - lo) |> map(k => k + lo), ys)`, whose
 * bounds are sizes, checked as a slice's are. */
static const st_node *with_update(elab *e, const ast *a) {
    const st_node *xs = expr(e, a->kids[0], NULL);
    if (!xs) return NULL;
    if (xs->type->kind != ST_TYPE_ARRAY) {
        st_buf b = {0};
        st_fail(e->err, a->kids[0]->loc, "`with` updates an array, but this has type %s", type_text(xs->type, &b));
        st_buf_free(&b);
        return NULL;
    }
    st_err inner = {0};
    const st_size *n = xs->type->size;
    const st_node *len = st_size_expr(e->cx, e->top, n, &inner);
    if (!len) return relocate(e, &inner, a->loc, NULL, 0);
    const st_node *is, *vs;
    const ast *value = a->kids[a->nkids - 1];
    if (a->nkids == 3) {
        const st_node *i = expr(e, a->kids[1], st_type_scalar(e->cx, ST_I64));
        const st_node *v = i ? expr(e, value, xs->type->elem) : NULL;
        if (!v) return NULL;
        if (!st_type_is_int(i->type))
            return st_fail(e->err, a->kids[1]->loc, "the index of `with` is an integer, but this has type %s",
                           st_scalar_name(i->type->kind == ST_TYPE_SCALAR ? i->type->scalar : ST_BOOL)), NULL;
        if (i->type->scalar != ST_I64 && !(i = st_conv(e->cx, ST_I64, i, &inner))) return relocate(e, &inner, a->loc, NULL, 0);
        if (v->type != xs->type->elem) {
            st_buf w = {0}, g = {0};
            st_fail(e->err, value->loc, "the value `with` writes has type %s, but the array's elements are %s",
                    type_text(v->type, &g), type_text(xs->type->elem, &w));
            st_buf_free(&w);
            st_buf_free(&g);
            return NULL;
        }
        const st_node *one = st_lit_int(e->cx, ST_I64, 1);
        const st_node *iota = st_prim_node(e->cx, ST_PRIM_IOTA, 1, &len, &inner);
        const st_node *gargs[2] = {i, iota};
        const st_node *checked = iota ? st_prim_node(e->cx, ST_PRIM_GET, 2, gargs, &inner) : NULL;
        const st_node *iargs[2] = {one, checked}, *vargs[2] = {one, v};
        is = checked ? st_prim_node(e->cx, ST_PRIM_REPLICATE, 2, iargs, &inner) : NULL;
        vs = is ? st_prim_node(e->cx, ST_PRIM_REPLICATE, 2, vargs, &inner) : NULL;
    } else {
        const st_size *slo, *shi;
        const st_node *lo = slice_bound(e, a->kids[1], &slo), *hi = lo ? slice_bound(e, a->kids[2], &shi) : NULL;
        const st_node *ys = hi ? expr(e, value, xs->type) : NULL;
        if (!ys) return NULL;
        const char *what = slice_text(e, slo, shi, " that `with` writes in an array of ", n);
        if (!what) return NULL;
        if (!need(e, st_size_const(e->cx, 0), slo, a->loc, what) || !need(e, slo, shi, a->loc, what) ||
            !need(e, shi, n, a->loc, what))
            return NULL;
        const st_size *m = st_size_sub(e->cx, shi, slo, &inner);
        if (!m) return relocate(e, &inner, a->loc, NULL, 0);
        if (ys->type->kind != ST_TYPE_ARRAY || ys->type->elem != xs->type->elem || ys->type->size != m) {
            st_buf w = {0}, g = {0};
            st_buf_puts(&w, "[");
            st_size_print(m, &w);
            st_buf_puts(&w, "]");
            type_text(xs->type->elem, &w);
            st_fail(e->err, value->loc, "`with [lo:hi]` writes %s, but this has type %s", w.data ? w.data : "?",
                    type_text(ys->type, &g));
            st_buf_free(&w);
            st_buf_free(&g);
            return NULL;
        }
        const st_node *spans[2] = {lo, hi};
        const st_node *k = index_var(e, spans, 2);
        if (!k) return NULL;
        const st_node *body = st_binary(e->cx, ST_OP_ADD, k, lo, &inner);
        const st_node *count = body ? st_size_expr(e->cx, e->top, m, &inner) : NULL;
        if (!count) return relocate(e, &inner, a->loc, NULL, 0);
        is = index_map(e, k, body, count, a->loc);
        vs = ys;
    }
    const st_node *sargs[3] = {xs, is, vs};
    const st_node *r = is && vs ? st_prim_node(e->cx, ST_PRIM_SCATTER, 3, sargs, &inner) : NULL;
    return r ? r : relocate(e, &inner, a->loc, NULL, 0);
}

static const st_node *subscript(elab *e, const ast *a) {
    const st_node *xs = expr(e, a->kids[0], NULL);
    const st_node *i = xs ? expr(e, a->kids[1], st_type_scalar(e->cx, ST_I64)) : NULL;
    if (!i) return NULL;
    const st_node *args[2] = {i, xs};
    st_err inner = {0};
    const st_node *n = st_prim_node(e->cx, ST_PRIM_GET, 2, args, &inner);
    const ast *locs[2] = {a->kids[1], a->kids[0]};
    return n ? n : relocate(e, &inner, a->loc, locs, 2);
}

/* ---- expressions ---- */

__attribute__((noinline)) static const st_node *unknown_name(elab *e, const ast *a);

static const st_node *name(elab *e, const ast *a) {
    if (a->name[0] == '?')
        return st_fail(e->err, a->loc, "`%s` is a length known only at run time; it may be written only in a def's declared result", a->name), NULL;
    const st_node *v = lookup(e, a->name);
    return v ? v : unknown_name(e, a);
}

static const st_node *unknown_name(elab *e, const ast *a) {
    st_prim p;
    if (st_prim_from_name(a->name, strlen(a->name), &p))
        return st_fail(e->err, a->loc, "`%s` is a primitive; call it, as in `%s(…)` or `xs |> %s`", a->name, a->name, a->name), NULL;
    if (!strcmp(a->name, "min") || !strcmp(a->name, "max"))
        return st_fail(e->err, a->loc, "`%s` is a function; call it as %s(a, b), or pass it to reduce or scan", a->name, a->name), NULL;
    const char *cands[256];
    int nc = 0;
    for (size_t i = e->n; i-- > e->base && nc < 256;) cands[nc++] = e->scope[i].name;
    char hint_text[128];
    suggest(a->name, cands, nc, hint_text, sizeof hint_text);
    st_fail(e->err, a->loc, "unknown name `%s`%s", a->name, hint_text);
    return NULL;
}


/* Whether a `let` or `loop` pattern of k names fits a value of type t (one
 * name takes any value; (a, b, …) a tuple of as many); else an error at
 * the pattern naming what (the value, the loop's initial value). */
static bool pattern_fits(elab *e, const ast *a, const st_type *t, const char *what) {
    uint32_t k = a->nnames;
    if (!a->tuple_pattern || k <= 1 || (t->kind == ST_TYPE_TUPLE && t->n == k)) return true;
    st_buf b = {0};
    st_type_print(t, &b);
    st_fail(e->err, a->loc, "the pattern has %u names, but %s has type %s", k, what, b.data ? b.data : "?");
    st_buf_free(&b);
    return false;
}
static const st_node *let(elab *e, const ast *a, const st_type *hint) {
    const st_type *annot = NULL;
    if (a->annots[0] && !(annot = type_expr(e, a->annots[0]))) return NULL;
    const st_node *value = expr(e, a->kids[0], annot);
    if (!value) return NULL;
    if (annot && !expect_type(e, annot, value->type, a->name_locs[0], "the value bound here")) return NULL;
    uint32_t k = a->nnames;
    if (k > 62) return st_fail(e->err, a->loc, "a pattern has at most 62 names"), NULL;
    const st_type *t = value->type;
    if (!pattern_fits(e, a, t, "the value")) return NULL;
    const st_node **vars = parts(e, k);
    if (!vars) return NULL;
    size_t mark = e->n;
    if (!distinct_names(e, a, "bound")) return NULL;
    for (uint32_t i = 0; i < k; i++) {
        const st_type *vt = k == 1 ? t : t->items[i];
        const st_node *part = k == 1 ? value : value->kind == ST_NODE_TUPLE ? value->kids[i] : NULL;
        vars[i] = part ? st_let_var(e->cx, a->names[i], part) : st_var(e->cx, a->names[i], vt, NULL);
        if (!vars[i] || !push_var(e, a->names[i], vars[i])) return NULL;
    }
    const st_node *body = expr(e, a->kids[1], hint);
    e->n = mark;
    if (!body) return NULL;
    st_err inner = {0};
    const st_node *n = st_let(e->cx, k, vars, value, body, &inner);
    return n ? n : relocate(e, &inner, a->loc, NULL, 0);
}

/* ---- loops ---- */

/* "the loop's X has type T, but …": a message naming two types */
static bool type_clash(elab *e, st_loc at, const char *fmt, const st_type *got, const st_type *want) {
    st_buf g = {0}, w = {0};
    st_type_print(got, &g);
    st_type_print(want, &w);
    st_fail(e->err, at, fmt, g.data ? g.data : "?", w.data ? w.data : "?");
    st_buf_free(&g);
    st_buf_free(&w);
    return false;
}

/* The accumulator's variables, pushed in scope: one per name of the pattern. */
static bool loop_vars(elab *e, const ast *a, const st_type *t, const st_node **vars) {
    uint32_t k = a->nnames;
    if (!pattern_fits(e, a, t, "the loop's initial value")) return false;
    if (!distinct_names(e, a, "bound")) return false;
    for (uint32_t i = 0; i < k; i++) {
        /* not st_let_var: the accumulator changes, so it stands for no size */
        vars[i] = st_var(e->cx, a->names[i], k == 1 ? t : t->items[i], NULL);
        if (!vars[i] || !push_var(e, a->names[i], vars[i])) return false;
    }
    return true;
}

/* The body (or condition) of a loop, in the accumulator's scope (and the index's). */
static const st_node *loop_part(elab *e, const ast *a, const ast *part, const st_type *t, const st_node **vars,
                                const st_node *index, const st_type *want, bool cond) {
    size_t mark = e->n;
    if (index && !push_var(e, index->u.name, index)) return NULL;
    if (!loop_vars(e, a, t, vars)) return NULL;
    const st_node *n = expr(e, part, want);
    e->n = mark;
    if (!n) return NULL;
    if (n->type != want) {
        if (cond)
            return type_clash(e, part->loc, "the loop's condition has type %s, but it must be %s", n->type, want), NULL;
        return type_clash(e, part->loc,
                          "the loop's body has type %s, but its accumulator has type %s: a loop's accumulator keeps "
                          "its type and its sizes from one iteration to the next",
                          n->type, want), NULL;
    }
    return n;
}

static const st_node *loop_rest(elab *e, const ast *a, const st_type *t, const st_node **vars, const st_node **cvars,
                                const st_node *init);

/* loop acc = init for i < n do body: loop(n, (i, acc) => body, init); a
 * tuple pattern `(a, b)` is one parameter destructured by a let, because
 * the function takes the index besides.
 * loop acc = init while c do body: while(acc => c, acc => body, init); a
 * tuple pattern is the lambdas' own destructuring. */
static const st_node *loop(elab *e, const ast *a, const st_type *hint) {
    uint32_t k = a->nnames;
    if (k > 62) return st_fail(e->err, a->loc, "a pattern has at most 62 names"), NULL;
    const st_node *init = expr(e, a->kids[0], hint);
    if (!init) return NULL;
    const st_type *t = init->type;
    const st_node **vars = parts(e, k), **cvars = parts(e, k);
    if (!vars || !cvars) return NULL;
    /* a filter in the body makes the loop one over arrays (st_is_array_loop),
     * which the glue runs turn by turn: its lengths are the turn's */
    return loop_rest(e, a, t, vars, cvars, init);
}

static const st_node *loop_rest(elab *e, const ast *a, const st_type *t, const st_node **vars, const st_node **cvars,
                                const st_node *init) {
    st_ctx *cx = e->cx;
    uint32_t k = a->nnames;
    const st_type *i64 = st_type_scalar(cx, ST_I64);
    st_err inner = {0};
    const st_node *args[3];
    if (a->bval) { /* while */
        const st_node *c = loop_part(e, a, a->kids[1], t, cvars, NULL, st_type_scalar(cx, ST_BOOL), true);
        const st_node *body = c ? loop_part(e, a, a->kids[2], t, vars, NULL, t, false) : NULL;
        if (!body) return NULL;
        if (!(args[0] = st_lambda(cx, k, cvars, c, &inner)) || !(args[1] = st_lambda(cx, k, vars, body, &inner)))
            return relocate(e, &inner, a->loc, NULL, 0);
        args[2] = init;
        const st_node *n = st_prim_node(cx, ST_PRIM_WHILE, 3, args, &inner);
        return n ? n : relocate(e, &inner, a->loc, NULL, 0);
    }
    const ast *iname = a->kids[1], *count = a->kids[2];
    const st_node *n = expr(e, count, i64);
    if (!n) return NULL;
    if (!st_type_is_int(n->type))
        return type_clash(e, count->loc, "the loop's count has type %s, but it must be an integer (%s)", n->type, i64), NULL;
    if (n->type != i64 && !(n = st_conv(cx, ST_I64, n, &inner))) return relocate(e, &inner, count->loc, NULL, 0);
    for (uint32_t j = 0; j < k; j++)
        if (a->names[j] == iname->name)
            return st_fail(e->err, iname->loc, "`%s` is both the loop's index and its accumulator", iname->name), NULL;
    const st_node *index = st_var(cx, iname->name, i64, NULL);
    if (!index) return st_fail_internal(e->err, "out of memory"), NULL;
    const st_node *body = loop_part(e, a, a->kids[3], t, vars, index, t, false);
    if (!body) return NULL;
    const st_node *acc = vars[0];
    if (k > 1) { /* (i, acc) => let (a, b) = acc in body */
        acc = st_var(cx, st_fresh_name(cx, "acc"), t, NULL);
        if (!acc || !(body = st_let(cx, k, vars, acc, body, &inner))) return relocate(e, &inner, a->loc, NULL, 0);
    }
    const st_node *params[2] = {index, acc};
    if (!(args[1] = st_lambda(cx, 2, params, body, &inner))) return relocate(e, &inner, a->loc, NULL, 0);
    args[0] = n;
    args[2] = init;
    const st_node *r = st_prim_node(cx, ST_PRIM_LOOP, 3, args, &inner);
    return r ? r : relocate(e, &inner, a->loc, NULL, 0);
}

static const st_node *unplaced_expr(elab *e, const ast *a, const st_type *hint) {
    st_err inner = {0};
    const st_node *n = NULL;
    switch (a->kind) {
    case A_INT: return int_literal(e, a, hint);
    case A_FLOAT: return float_literal(e, a, hint);
    case A_BOOL: return st_lit(e->cx, ST_BOOL, (st_scalar){.b = a->bval});
    case A_NAME: return name(e, a);
    case A_TUPLE: {
        if (a->nkids > ST_MAX_KIDS) return st_fail(e->err, a->loc, "a tuple has at most %d components", ST_MAX_KIDS), NULL;
        const st_node **items = parts(e, a->nkids);
        if (!items) return NULL;
        for (uint32_t i = 0; i < a->nkids; i++) {
            const st_type *h = hint && hint->kind == ST_TYPE_TUPLE && hint->n == a->nkids ? hint->items[i] : NULL;
            if (!(items[i] = expr(e, a->kids[i], h))) return NULL;
        }
        n = st_tuple(e->cx, a->nkids, items, &inner);
        break;
    }
    case A_PROJ: {
        const st_node *t = expr(e, a->kids[0], NULL);
        if (!t) return NULL;
        n = st_proj(e->cx, t, a->index, &inner);
        if (!n) return relocate(e, &inner, a->loc, NULL, 0);
        return n;
    }
    case A_UNOP: {
        const st_node *x = expr(e, a->kids[0], a->unop == ST_OP_NEG ? hint : NULL);
        if (!x) return NULL;
        n = st_unary(e->cx, a->unop, x, &inner);
        break;
    }
    case A_BINOP: return binop(e, a->binop, a->kids[0], a->kids[1], a->loc, hint);
    case A_CALL: return call(e, a, hint);
    case A_OPREF:
        return st_fail(e->err, a->loc, "`%s` on its own is a function, which is only accepted where one is expected (map, reduce, scan, …)",
                       st_binop_name(a->binop)), NULL;
    case A_LAMBDA:
        return st_fail(e->err, a->loc, "a lambda is only accepted as the function of a primitive such as map, reduce or scan"), NULL;
    case A_LET: return let(e, a, hint);
    case A_ARRAY: return array_literal(e, a, hint);
    case A_SLICE: return slice(e, a);
    case A_INDEX: return subscript(e, a);
    case A_LOOP: return loop(e, a, hint);
    case A_IF: {
        const st_node *c = expr(e, a->kids[0], NULL), *t, *f;
        if (!c) return NULL;
        if (is_weak_literal(a->kids[1]) && !is_weak_literal(a->kids[2])) {
            f = expr(e, a->kids[2], hint);
            t = f ? expr(e, a->kids[1], f->type) : NULL;
        } else {
            t = expr(e, a->kids[1], hint);
            f = t ? expr(e, a->kids[2], t->type) : NULL;
        }
        if (!t || !f) return NULL;
        n = st_if(e->cx, c, t, f, &inner);
        break;
    }
    }
    return n ? n : relocate(e, &inner, a->loc, (const ast *const *)a->kids, a->nkids);
}

/* The node of a, placed at a's place in the source, with the nodes made for
 * it alone (an array literal's, a slice's) that its kids did not place. */
static const st_node *expr(elab *e, const ast *a, const st_type *hint) {
    return st_node_place(e->cx, unplaced_expr(e, a, hint), a->loc);
}

/* ---- definitions ---- */

static bool add_name(elab *e, names *ns, const char *name, st_loc loc) {
    for (uint32_t i = 0; i < ns->n; i++)
        if (ns->items[i] == name) return true;
    const char **items = st_ctx_alloc(e->cx, (ns->n + 1) * sizeof *items);
    st_loc *locs = st_ctx_alloc(e->cx, (ns->n + 1) * sizeof *locs);
    if (!items || !locs) return st_fail_internal(e->err, "out of memory");
    if (ns->n) {
        memcpy(items, ns->items, ns->n * sizeof *items);
        memcpy(locs, ns->locs, ns->n * sizeof *locs);
    }
    items[ns->n] = name;
    locs[ns->n++] = loc;
    ns->items = items;
    ns->locs = locs;
    return true;
}

static const ast_param *find_param(const ast_def *d, const char *name) {
    for (uint32_t i = 0; i < d->nparams; i++)
        if (d->params[i].name == name) return &d->params[i];
    return NULL;
}

/* The names in a parameter's array lengths: integer parameters, or else new
 * (implicit) size variables. */
static bool collect_sizes(elab *e, const ast_def *d, const ast *a, names *implicit) {
    if (!a) return true;
    if (a->kind == A_NAME) {
        const ast_param *prm = find_param(d, a->name);
        if (!prm) return add_name(e, implicit, a->name, a->loc);
        if (prm->type->kind == T_SCALAR && st_scalar_is_int(prm->type->scalar)) return true;
        return st_fail(e->err, a->loc, "`%s` is a parameter but not an integer, so it cannot be an array length", a->name);
    }
    for (uint32_t i = 0; i < a->nkids; i++)
        if (!collect_sizes(e, d, a->kids[i], implicit)) return false;
    return true;
}

static bool collect_type_sizes(elab *e, const ast_def *d, const ast_type *t, names *implicit) {
    switch (t->kind) {
    case T_SCALAR: return true;
    case T_ARRAY: return collect_sizes(e, d, t->size, implicit) && collect_type_sizes(e, d, t->elem, implicit);
    default:
        for (uint32_t i = 0; i < t->n; i++)
            if (!collect_type_sizes(e, d, t->items[i], implicit)) return false;
        return true;
    }
}

/* Is `name` the whole length of some array in t, so that it can be read off
 * the argument when the program runs? */
static bool binds(const ast_type *t, const char *name) {
    switch (t->kind) {
    case T_SCALAR: return false;
    case T_ARRAY: return (t->size->kind == A_NAME && t->size->name == name) || binds(t->elem, name);
    default:
        for (uint32_t i = 0; i < t->n; i++)
            if (binds(t->items[i], name)) return true;
        return false;
    }
}

static bool def(elab *e, const ast_def *d, st_def *out) {
    e->top = out;
    e->base = 0;
    e->bounds = NULL;
    e->nbounds = e->capbounds = 0;
    out->name = d->name;
    out->loc = d->loc;
    for (uint32_t i = 0; i < d->nparams; i++)
        for (uint32_t j = 0; j < i; j++)
            if (d->params[i].name == d->params[j].name)
                return st_fail(e->err, d->params[i].loc, "the parameter `%s` is declared twice", d->params[i].name);

    names implicit = {0};
    for (uint32_t i = 0; i < d->nparams; i++)
        if (!collect_type_sizes(e, d, d->params[i].type, &implicit)) return false;
    for (uint32_t i = 0; i < implicit.n; i++) {
        bool bound = false;
        for (uint32_t k = 0; k < d->nparams && !bound; k++) bound = binds(d->params[k].type, implicit.items[i]);
        if (!bound)
            return st_fail(e->err, implicit.locs[i], "the size `%s` is never the whole length of a parameter (as in `[%s]f32`), so its value would be unknown when the program runs",
                           implicit.items[i], implicit.items[i]);
    }
    /* the names usable in types: implicit sizes and integer parameters */
    names sizes = implicit;
    for (uint32_t i = 0; i < d->nparams; i++)
        if (d->params[i].type->kind == T_SCALAR && st_scalar_is_int(d->params[i].type->scalar) &&
            !add_name(e, &sizes, d->params[i].name, d->params[i].loc))
            return false;
    e->size_names = sizes.items;
    e->nsize_names = sizes.n;

    const st_facts *facts = st_ctx_alloc(e->cx, sizeof(st_facts));
    if (!facts) return st_fail_internal(e->err, "out of memory");
    *(st_facts *)facts = (st_facts){0, NULL};
    for (uint32_t i = 0; i < d->nfacts; i++) {
        const ast_fact *f = &d->facts[i];
        if (!is_size_name(e, f->name))
            return st_fail(e->err, f->loc, "`%s` is not a size of `%s`; a where clause states facts about the sizes in the parameters' types",
                           f->name, d->name);
        if (f->divisor == 1) continue;
        if (!(facts = st_facts_add(e->cx, facts, f->name, f->divisor)))
            return st_fail(e->err, f->loc, "the facts about `%s` combine to a divisor too large", f->name);
    }
    e->facts = facts;
    out->facts = facts;

    const st_node **sizes_v = st_ctx_alloc(e->cx, (implicit.n ? implicit.n : 1) * sizeof *sizes_v);
    const st_node **params = st_ctx_alloc(e->cx, (d->nparams ? d->nparams : 1) * sizeof *params);
    if (!sizes_v || !params) return st_fail_internal(e->err, "out of memory");
    e->n = 0;
    const st_type *i64 = st_type_scalar(e->cx, ST_I64);
    for (uint32_t i = 0; i < implicit.n; i++) {
        sizes_v[i] = st_var(e->cx, implicit.items[i], i64, st_size_var(e->cx, facts, implicit.items[i]));
        if (!sizes_v[i] || !push_var(e, implicit.items[i], sizes_v[i])) return false;
    }
    for (uint32_t i = 0; i < d->nparams; i++) {
        const st_type *t = type_expr(e, d->params[i].type);
        if (!t) return false;
        const st_size *size = st_type_is_int(t) ? st_size_var(e->cx, facts, d->params[i].name) : NULL;
        params[i] = st_var(e->cx, d->params[i].name, t, size);
        if (!params[i] || !push_var(e, d->params[i].name, params[i])) return false;
    }
    out->nsizes = implicit.n;
    out->sizes = sizes_v;
    out->nparams = d->nparams;
    out->params = params;

    const st_type *declared = NULL;
    if (d->result && !(declared = result_type(e, d->result))) return false;
    const st_node *body = expr(e, d->body, declared);
    if (!body) return false;
    if (declared) declared = declared_for(e, declared, body->type);
    if (declared && declared != body->type) {
        st_buf w = {0}, g = {0};
        st_type_print(declared, &w);
        st_type_print(body->type, &g);
        st_fail(e->err, d->result->loc, "`%s` declares its result as %s, but its body has type %s", d->name,
                w.data ? w.data : "?", g.data ? g.data : "?");
        st_buf_free(&w);
        st_buf_free(&g);
        return false;
    }
    out->declared_result = declared != NULL;
    out->nbounds = e->nbounds;
    out->bounds = e->bounds;
    out->result = body->type;
    out->body = body;
    return true;
}

/* A def may not take the name of a primitive, a type (its conversion) or
 * min/max: a call of the name means the built-in wherever it is written,
 * and rules write min and max into rewritten programs, which would print
 * as calls of the def. sqrt, exp, log, abs, map2 and map3 came later and
 * yield to a def of the name instead (the call's lookup), so that programs
 * written before them keep their meaning; no rule writes them. */
static bool name_is_free(const ast_def *d, st_err *err) {
    st_prim p;
    st_scalar_kind k;
    size_t len = strlen(d->name);
    if (st_prim_from_name(d->name, len, &p))
        return st_fail(err, d->loc, "`%s` is a primitive of the language, and every call of the name means it; "
                                    "give the def another name", d->name);
    if (st_scalar_from_name(d->name, len, &k))
        return st_fail(err, d->loc, "`%s` is a type, and %s(x) its conversion; give the def another name", d->name, d->name);
    if (!strcmp(d->name, "min") || !strcmp(d->name, "max"))
        return st_fail(err, d->loc, "`%s` is a built-in function (rewrite rules write it too, so a def of the name would "
                                    "change what a rewritten program means); give the def another name", d->name);
    return true;
}

const st_program *st_ast_elaborate(st_ctx *cx, const char *file, const ast_program *p,
                                   st_err *err) {
    st_program *prog = st_ctx_alloc(cx, sizeof *prog);
    st_def *defs = st_ctx_alloc(cx, p->ndefs * sizeof *defs);
    if (!prog || !defs) return st_fail_internal(err, "out of memory"), NULL;
    memset(defs, 0, p->ndefs * sizeof *defs);
    elab e = {.cx = cx, .scratch = st_arena_new(), .file = file, .err = err, .prog = p};
    bool ok = e.scratch != NULL || st_fail_internal(err, "out of memory");
    e.stack = ok ? st_arena_zalloc(e.scratch, (p->ndefs + 1) * sizeof *e.stack) : NULL;
    ok = ok && (e.stack || st_fail_internal(err, "out of memory"));
    for (uint32_t i = 0; i < p->ndefs && ok; i++) {
        for (uint32_t j = 0; j < i && ok; j++)
            if (p->defs[j].name == p->defs[i].name)
                ok = st_fail(err, p->defs[i].loc, "`%s` is defined twice (first at line %d)", p->defs[i].name, p->defs[j].loc.line);
        ok = ok && name_is_free(&p->defs[i], err);
        e.stack[0] = &p->defs[i];
        e.depth = 1;
        ok = ok && def(&e, &p->defs[i], &defs[i]);
    }
    free(e.scope);
    st_arena_free(e.scratch);
    if (!ok) return NULL;
    prog->file = st_intern_cstr(cx, file);
    prog->ndefs = p->ndefs;
    prog->defs = defs;
    return prog;
}
