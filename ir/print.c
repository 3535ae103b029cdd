/* ir/print.c — IR back to the surface syntax.
 *
 * The printer writes what the parser reads, so print → parse gives the same
 * nodes and print → parse → print the same text. It decides the layout:
 * pipeline primitives as `xs |> scan(+, 0)`, each `let` on its own line,
 * long pipelines broken before every `|>`.
 *
 * A literal is written without its type suffix where the parser would infer
 * that type back: i32 and f32 anywhere, and any type next to a non-literal
 * operand or branch, or as the neutral element of its array's element type.
 * These "hints" mirror the type checker's rules (elab.c) exactly; printing a
 * suffix is always safe, leaving one out only where the rule says so. */
#include "ir.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Binding strength of what is printed: a context asks for at least this much
 * and anything weaker is parenthesised. */
enum {
    P_OPEN = 0,    /* lambda, let, if: extend as far right as they can */
    P_PIPE = 1,    /* x |> f */
    P_BINARY = 2,  /* + the precedence levels 1..11 (C's, and **) → 2..12 */
    P_UNARY = 13,
    P_POSTFIX = 14 /* projection, calls, names, literals */
};

enum { LINE_WIDTH = 88 };

static void node(const st_node *n, int prec, int indent, const st_type *hint, st_buf *out);

/* Could the printed n be a literal-only expression, whose type the parser
 * takes from its context? (elab.c: is_weak_literal) */
static bool grounded(const st_node *n) {
    switch (n->kind) {
    case ST_NODE_LIT: return false;
    case ST_NODE_UNOP: return n->u.unop != ST_OP_NEG || grounded(n->kids[0]);
    case ST_NODE_BINOP:
        if (st_binop_is_call(n->u.binop) || n->type != n->kids[0]->type) return true;
        return grounded(n->kids[0]) || grounded(n->kids[1]);
    default: return true;
    }
}

/* The type the parser will give an unsuffixed literal at kid i of parent,
 * whose own hint is parent_hint; NULL when it falls back to i32 / f32. */
static const st_type *kid_hint(const st_node *parent, const st_type *parent_hint, uint32_t i) {
    const st_node *kid = parent->kids[i];
    switch (parent->kind) {
    case ST_NODE_BINOP: /* the non-literal operand is checked first and types the literal */
        return kid->kind == ST_NODE_LIT && grounded(parent->kids[1 - i]) ? kid->type : NULL;
    case ST_NODE_IF:
        return i > 0 && kid->kind == ST_NODE_LIT && grounded(parent->kids[3 - i]) ? kid->type : NULL;
    case ST_NODE_TUPLE:
        return parent_hint && parent_hint->kind == ST_TYPE_TUPLE && parent_hint->n == parent->nkids
                   ? parent_hint->items[i] : NULL;
    case ST_NODE_PRIM: {
        if (st_prim_arg_role(parent->u.prim, (int)i, parent->nkids) != ST_ARG_NEUTRAL) return NULL;
        /* what the type checker expects of the neutral element (NULL when free) */
        const st_type *types[ST_MAX_KIDS], *params[2], *result;
        int np;
        for (uint32_t k = 0; k < parent->nkids && k < 64; k++) types[k] = parent->kids[k]->type;
        if (!st_prim_expect(NULL, parent->u.prim, (int)i, types, (int)parent->nkids, params, &np, &result, NULL))
            return NULL;
        return params[0];
    }
    default: return NULL;
    }
}

static void newline(int indent, st_buf *out) {
    st_buf_puts(out, "\n");
    for (int i = 0; i < indent; i++) st_buf_puts(out, " ");
}

static void literal(const st_node *n, const st_type *hint, st_buf *out) {
    st_scalar_kind k = n->type->scalar;
    st_scalar v = n->u.lit;
    if (st_scalar_is_float(k)) {
        double d = k == ST_F32 ? v.f32 : v.f64;
        if (isnan(d) || isinf(d)) {
            st_buf_printf(out, "%s%s.%s", d < 0 ? "-" : "", st_scalar_name(k), isnan(d) ? "nan" : "inf");
            return;
        }
    }
    st_scalar_format(k, v, out);
    /* an i32 or f32 too where the context would give the literal another
     * type (reduceSeq's neutral element, typed from the elements, of an
     * accumulator that is not one) */
    bool defaulted = k == ST_I32 || k == ST_F32 || k == ST_BOOL;
    if (n->type != hint && k != ST_BOOL && (!defaulted || hint)) st_buf_puts(out, st_scalar_name(k));
}

static bool is_negative_literal(const st_node *n) {
    if (n->kind != ST_NODE_LIT) return false;
    st_scalar_kind k = n->type->scalar;
    return (st_scalar_is_int(k) && st_scalar_is_signed(k) && st_scalar_as_f64(k, n->u.lit) < 0) ||
           (k == ST_F32 && signbit(n->u.lit.f32)) || (k == ST_F64 && signbit(n->u.lit.f64));
}

/* (kid_0, …, kid_n-1) of parent */
static void args(const st_node *parent, const st_type *hint, uint32_t n, int indent, st_buf *out) {
    st_buf_puts(out, "(");
    for (uint32_t i = 0; i < n; i++) {
        if (i) st_buf_puts(out, ", ");
        node(parent->kids[i], P_OPEN, indent, kid_hint(parent, hint, i), out);
    }
    st_buf_puts(out, ")");
}

static void lambda(const st_node *n, int indent, st_buf *out) {
    uint32_t k = st_lambda_nparams(n);
    if (k != 1) st_buf_puts(out, "(");
    for (uint32_t i = 0; i < k; i++) {
        if (i) st_buf_puts(out, ", ");
        st_buf_puts(out, n->kids[i]->u.name);
    }
    st_buf_puts(out, k != 1 ? ") =>" : " =>");
    const st_node *body = st_lambda_body(n);
    if (body->kind == ST_NODE_LET) {
        newline(indent + 2, out);
        node(body, P_OPEN, indent + 2, NULL, out);
    } else {
        st_buf_puts(out, " ");
        node(body, P_OPEN, indent, NULL, out);
    }
}

static void let(const st_node *n, int indent, st_buf *out) {
    for (;;) {
        uint32_t k = st_let_nvars(n);
        st_buf_puts(out, "let ");
        if (k > 1) st_buf_puts(out, "(");
        for (uint32_t i = 0; i < k; i++) {
            if (i) st_buf_puts(out, ", ");
            st_buf_puts(out, n->kids[i]->u.name);
        }
        st_buf_puts(out, k > 1 ? ") =" : " =");
        const st_node *value = st_let_value(n);
        if (value->kind == ST_NODE_LET) { /* a let sequence of its own: on its lines, deeper */
            newline(indent + 2, out);
            node(value, P_OPEN, indent + 2, NULL, out);
        } else {
            st_buf_puts(out, " ");
            node(value, P_OPEN, indent, NULL, out);
        }
        newline(indent, out);
        n = st_let_body(n);
        if (n->kind != ST_NODE_LET) break;
    }
    st_buf_puts(out, "in ");
    node(n, P_OPEN, indent, NULL, out);
}

static bool is_sugar(const st_node *n);

/* The stages of a pipeline, innermost data first: xs |> f(a) |> g. */
static void pipeline(const st_node *n, int indent, st_buf *out) {
    const st_node *stages[256];
    int count = 0;
    const st_node *data = n;
    while (count < 256 && data->kind == ST_NODE_PRIM && st_prim_get(data->u.prim)->pipeline && !(count && is_sugar(data))) {
        stages[count++] = data;
        data = data->kids[data->nkids - 1];
    }
    /* flat first; broken over lines if long or already multi-line */
    st_buf flat = {0};
    node(data, P_PIPE + 1, indent, NULL, &flat);
    for (int i = count; i-- > 0;) {
        const st_prim_info *info = st_prim_get(stages[i]->u.prim);
        st_buf_printf(&flat, " |> %s", info->name);
        if (stages[i]->nkids > 1) args(stages[i], NULL, stages[i]->nkids - 1, indent, &flat);
    }
    size_t first_line = flat.data ? strcspn(flat.data, "\n") : 0;
    bool fits = first_line == flat.len && first_line + (size_t)indent <= LINE_WIDTH;
    if (count < 2 || fits) {
        if (flat.data) st_buf_put(out, flat.data, flat.len);
        st_buf_free(&flat);
        return;
    }
    st_buf_free(&flat);
    node(data, P_PIPE + 1, indent, NULL, out);
    for (int i = count; i-- > 0;) {
        newline(indent + 2, out);
        const st_prim_info *info = st_prim_get(stages[i]->u.prim);
        st_buf_printf(out, "|> %s", info->name);
        if (stages[i]->nkids > 1) args(stages[i], NULL, stages[i]->nkids - 1, indent + 2, out);
    }
}

/* ---- array literals and slices: the index maps elab.c builds for them ---- */

static bool mentions(const st_node *n, const char *name) {
    if (n->kind == ST_NODE_VAR) return !strcmp(n->u.name, name);
    for (uint32_t i = 0; i < n->nkids; i++)
        if (mentions(n->kids[i], name)) return true;
    return false;
}

void st_index_name(const st_node *const *parts, uint32_t n, char *buf, size_t cap) {
    snprintf(buf, cap, "i");
    for (unsigned k = 1;; k++) {
        bool used = false;
        for (uint32_t j = 0; j < n && !used; j++) used = mentions(parts[j], buf);
        if (!used) return;
        snprintf(buf, cap, "i_%u", k);
    }
}

/* map(i => body, iota(len)): the index variable, or NULL */
static const st_node *index_map(const st_node *n, const st_node **body, const st_node **len) {
    if (n->kind != ST_NODE_PRIM || n->u.prim != ST_PRIM_MAP || n->nkids != 2) return NULL;
    const st_node *f = n->kids[0], *it = n->kids[1];
    if (f->kind != ST_NODE_LAMBDA || st_lambda_nparams(f) != 1 || it->kind != ST_NODE_PRIM ||
        it->u.prim != ST_PRIM_IOTA)
        return NULL;
    *body = st_lambda_body(f);
    *len = it->kids[0];
    return f->kids[0];
}

static bool is_index_name(const st_node *i, const st_node *const *parts, uint32_t n) {
    char buf[32];
    st_index_name(parts, n, buf, sizeof buf);
    return !strcmp(buf, i->u.name);
}

/* An i64 expression the type checker reads as a size (elab.c slice_bound). */
static bool sizeish(const st_node *n) {
    switch (n->kind) {
    case ST_NODE_LIT: return st_type_is_int(n->type);
    case ST_NODE_VAR: return n->size != NULL;
    case ST_NODE_CONV: return st_type_is_int(n->kids[0]->type) && sizeish(n->kids[0]);
    case ST_NODE_BINOP: return n->u.binop <= ST_OP_MOD && sizeish(n->kids[0]) && sizeish(n->kids[1]);
    default: return false;
    }
}

/* xs[lo:hi]: map(i => get(i + lo, xs), iota(hi - lo)), or get(i, xs) and
 * iota(hi) from 0 (*lo NULL then) */
static bool as_slice(const st_node *n, const st_node **xs, const st_node **lo, const st_node **hi) {
    const st_node *body, *len, *i = index_map(n, &body, &len);
    if (!i || body->kind != ST_NODE_PRIM || body->u.prim != ST_PRIM_GET || body->nkids != 2) return false;
    const st_node *idx = body->kids[0];
    *xs = body->kids[1];
    if (idx == i) {
        *lo = NULL;
        *hi = len;
    } else if (idx->kind == ST_NODE_BINOP && idx->u.binop == ST_OP_ADD && idx->kids[0] == i &&
               len->kind == ST_NODE_BINOP && len->u.binop == ST_OP_SUB && len->kids[1] == idx->kids[1]) {
        *lo = idx->kids[1];
        *hi = len->kids[0];
        if ((*lo)->kind == ST_NODE_LIT && (*lo)->u.lit.i64 == 0) return false; /* the checker builds get(i, xs) */
    } else {
        return false;
    }
    const st_node *parts[3] = {*xs, *lo ? *lo : *hi, *hi};
    return (!*lo || sizeish(*lo)) && sizeish(*hi) && (*hi)->type->kind == ST_TYPE_SCALAR && (*hi)->type->scalar == ST_I64 &&
           (!*lo || (*lo)->type->scalar == ST_I64) && is_index_name(i, parts, 3) && !mentions(*xs, i->u.name);
}

/* the items of a select tree over [lo, hi) (elab.c select_tree) */
static bool select_items(const st_node *t, const st_node *i, int64_t lo, int64_t hi, const st_node **items) {
    if (hi - lo == 1) return (items[lo] = t), true;
    int64_t mid = lo + (hi - lo) / 2;
    if (t->kind != ST_NODE_IF) return false;
    const st_node *c = t->kids[0];
    return c->kind == ST_NODE_BINOP && c->u.binop == ST_OP_LT && c->kids[0] == i && c->kids[1]->kind == ST_NODE_LIT &&
           c->kids[1]->u.lit.i64 == mid && select_items(t->kids[1], i, lo, mid, items) &&
           select_items(t->kids[2], i, mid, hi, items);
}

enum { MAX_LITERAL = 65536 };

/* [x, y, z]: map(i => if i < 1 then x else …, iota(3)); the items malloc'ed */
static const st_node **as_literal(const st_node *n, uint32_t *count) {
    const st_node *body, *len, *i = index_map(n, &body, &len);
    if (!i || len->kind != ST_NODE_LIT || len->type->scalar != ST_I64 || len->u.lit.i64 < 1 ||
        len->u.lit.i64 > MAX_LITERAL || !st_type_is_plain(body->type))
        return NULL;
    uint32_t k = (uint32_t)len->u.lit.i64;
    const st_node **items = malloc(k * sizeof *items);
    if (!items) return NULL;
    if (!select_items(body, i, 0, k, items) || !is_index_name(i, items, k)) {
        free(items);
        return NULL;
    }
    *count = k;
    return items;
}

static bool is_sugar(const st_node *n) {
    const st_node *xs, *lo, *hi;
    uint32_t k;
    const st_node **items = as_literal(n, &k);
    free(items);
    return items || as_slice(n, &xs, &lo, &hi);
}

/* Prints n as `[…]` or `xs[a:b]` when it has their shape. */
static bool sugar(const st_node *n, int indent, st_buf *out) {
    const st_node *xs, *lo, *hi;
    uint32_t k;
    const st_node **items = as_literal(n, &k);
    if (items) {
        /* the first item the checker types on its own types the others */
        uint32_t first = 0;
        while (first < k && !grounded(items[first])) first++;
        const st_type *t = items[0]->type;
        st_buf_puts(out, "[");
        for (uint32_t j = 0; j < k; j++) {
            if (j) st_buf_puts(out, ", ");
            node(items[j], P_OPEN, indent, j == (first == k ? 0 : first) ? NULL : t, out);
        }
        st_buf_puts(out, "]");
        free(items);
        return true;
    }
    if (!as_slice(n, &xs, &lo, &hi)) return false;
    node(xs, P_POSTFIX, indent, NULL, out);
    st_buf_puts(out, "[");
    if (lo) node(lo, P_OPEN, indent, lo->type, out); /* the checker reads a bound as an i64 */
    else st_buf_puts(out, "0");
    st_buf_puts(out, ":");
    node(hi, P_OPEN, indent, hi->type, out);
    st_buf_puts(out, "]");
    return true;
}

/* How far the last line of out goes. */
static size_t column(const st_buf *out) {
    if (!out->data) return 0;
    const char *nl = strrchr(out->data, '\n');
    return out->len - (size_t)(nl ? nl + 1 - out->data : 0);
}

/* The accumulator's pattern: a lambda's parameters from the first-th on. */
static void pattern(const st_node *f, uint32_t first, st_buf *out) {
    uint32_t k = st_lambda_nparams(f) - first;
    if (k != 1) st_buf_puts(out, "(");
    for (uint32_t i = 0; i < k; i++) st_buf_printf(out, "%s%s", i ? ", " : "", f->kids[first + i]->u.name);
    if (k != 1) st_buf_puts(out, ")");
}

/* loop(n, (i, acc) => body, x): `loop acc = x for i < n do body`;
 * while(acc => c, acc => body, x): `loop acc = x while c do body`. The
 * initial value takes the loop's hint, the body the accumulator's type, as
 * the type checker gives them. */
static void loop(const st_node *n, const st_type *hint, int indent, st_buf *out) {
    bool is_while = n->u.prim == ST_PRIM_WHILE;
    const st_node *f = n->kids[1];
    st_buf_puts(out, "loop ");
    pattern(f, is_while ? 0 : 1, out);
    st_buf_puts(out, " = ");
    node(n->kids[2], P_PIPE, indent, hint, out);
    if (is_while) {
        st_buf_puts(out, " while ");
        node(st_lambda_body(n->kids[0]), P_PIPE, indent, NULL, out);
    } else {
        st_buf_printf(out, " for %s < ", f->kids[0]->u.name);
        node(n->kids[0], P_PIPE, indent, n->kids[0]->type, out);
    }
    st_buf_puts(out, " do");
    /* the body on the line, or below and deeper when it is a let or the
     * line would be long */
    const st_node *body = st_lambda_body(f);
    st_buf flat = {0};
    node(body, P_OPEN, indent, n->type, &flat);
    size_t first = flat.data ? strcspn(flat.data, "\n") : 0;
    if (body->kind == ST_NODE_LET || column(out) + 1 + first > LINE_WIDTH) {
        newline(indent + 2, out);
        node(body, P_OPEN, indent + 2, n->type, out);
    } else {
        st_buf_puts(out, " ");
        if (flat.data) st_buf_put(out, flat.data, flat.len);
    }
    st_buf_free(&flat);
}

static bool is_loop(const st_node *n) {
    return n->kind == ST_NODE_PRIM && (n->u.prim == ST_PRIM_LOOP || n->u.prim == ST_PRIM_WHILE) &&
           n->kids[1]->kind == ST_NODE_LAMBDA && (n->u.prim == ST_PRIM_LOOP || n->kids[0]->kind == ST_NODE_LAMBDA);
}

static int strength(const st_node *n) {
    switch (n->kind) {
    case ST_NODE_LIT: return is_negative_literal(n) ? P_UNARY : P_POSTFIX;
    case ST_NODE_UNOP: return st_unop_function(n->u.unop) ? P_POSTFIX : P_UNARY;
    case ST_NODE_BINOP:
        return st_binop_is_call(n->u.binop) ? P_POSTFIX : P_BINARY - 1 + st_binop_precedence(n->u.binop);
    case ST_NODE_IF: case ST_NODE_LET: case ST_NODE_LAMBDA: return P_OPEN;
    case ST_NODE_PRIM:
        if (is_loop(n)) return P_OPEN;
        return st_prim_get(n->u.prim)->pipeline && !is_sugar(n) ? P_PIPE : P_POSTFIX;
    default: return P_POSTFIX;
    }
}

static void node(const st_node *n, int prec, int indent, const st_type *hint, st_buf *out) {
    bool parens = strength(n) < prec;
    if (parens) st_buf_puts(out, "(");
    switch (n->kind) {
    case ST_NODE_LIT: literal(n, hint, out); break;
    case ST_NODE_VAR: st_buf_puts(out, n->u.name); break;
    case ST_NODE_TUPLE: args(n, hint, n->nkids, indent, out); break;
    case ST_NODE_PROJ:
        node(n->kids[0], P_POSTFIX, indent, NULL, out);
        st_buf_printf(out, ".%u", n->u.index);
        break;
    case ST_NODE_UNOP: {
        if (st_unop_function(n->u.unop)) {
            st_buf_puts(out, st_unop_function(n->u.unop));
            args(n, NULL, 1, indent, out);
            break;
        }
        st_buf_puts(out, n->u.unop == ST_OP_NEG ? "-" : "!");
        /* `--` would start a comment */
        const st_node *x = n->kids[0];
        bool minus = n->u.unop == ST_OP_NEG && ((x->kind == ST_NODE_UNOP && x->u.unop == ST_OP_NEG) || is_negative_literal(x));
        node(x, minus ? P_POSTFIX + 1 : P_UNARY, indent, NULL, out);
        break;
    }
    case ST_NODE_BINOP:
        if (st_binop_is_call(n->u.binop)) {
            st_buf_puts(out, st_binop_name(n->u.binop));
            args(n, NULL, 2, indent, out);
        } else {
            /* the side an operator groups to takes its own strength: ** the right */
            int p = P_BINARY - 1 + st_binop_precedence(n->u.binop), right = n->u.binop == ST_OP_POW;
            node(n->kids[0], p + right, indent, kid_hint(n, NULL, 0), out);
            st_buf_printf(out, " %s ", st_binop_name(n->u.binop));
            node(n->kids[1], p + !right, indent, kid_hint(n, NULL, 1), out);
        }
        break;
    case ST_NODE_CONV:
        st_buf_puts(out, st_scalar_name(n->u.conv));
        args(n, NULL, 1, indent, out);
        break;
    case ST_NODE_IF:
        st_buf_puts(out, "if ");
        node(n->kids[0], P_OPEN, indent, NULL, out);
        st_buf_puts(out, " then ");
        node(n->kids[1], P_OPEN, indent, kid_hint(n, NULL, 1), out);
        st_buf_puts(out, " else ");
        node(n->kids[2], P_OPEN, indent, kid_hint(n, NULL, 2), out);
        break;
    case ST_NODE_LET: let(n, indent, out); break;
    case ST_NODE_LAMBDA: lambda(n, indent, out); break;
    case ST_NODE_OPFN: st_buf_puts(out, st_binop_name(n->u.binop)); break;
    case ST_NODE_PRIM:
        if (sugar(n, indent, out)) break;
        if (is_loop(n)) {
            loop(n, hint, indent, out);
        } else if (st_prim_get(n->u.prim)->pipeline) {
            pipeline(n, indent, out);
        } else {
            st_buf_puts(out, st_prim_get(n->u.prim)->name);
            args(n, NULL, n->nkids, indent, out);
        }
        break;
    }
    if (parens) st_buf_puts(out, ")");
}

void st_print_node(const st_node *n, st_buf *out) { node(n, P_OPEN, 0, NULL, out); }

void st_print_signature(const st_def *d, st_buf *out) {
    st_buf_printf(out, "def %s(", d->name);
    for (uint32_t i = 0; i < d->nparams; i++) {
        if (i) st_buf_puts(out, ", ");
        st_buf_printf(out, "%s: ", d->params[i]->u.name);
        st_type_print(d->params[i]->type, out);
    }
    st_buf_puts(out, "): ");
    st_type_print(d->result, out);
    for (uint32_t i = 0; i < d->facts->n; i++)
        st_buf_printf(out, "%s%s %% %lld == 0", i ? ", " : " where ", d->facts->items[i].name,
                      (long long)d->facts->items[i].divisor);
}

void st_print_def(const st_def *d, st_buf *out) {
    st_print_signature(d, out);
    st_buf_puts(out, " =");
    newline(2, out);
    node(d->body, P_OPEN, 2, NULL, out);
    st_buf_puts(out, "\n");
}

void st_print_program(const st_program *p, st_buf *out) {
    for (uint32_t i = 0; i < p->ndefs; i++) {
        if (i) st_buf_puts(out, "\n");
        st_print_def(&p->defs[i], out);
    }
}
