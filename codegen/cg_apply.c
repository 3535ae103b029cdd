/* codegen/cg_apply.c — applying a function: an operator becomes the
 * operation, a lambda its body with the parameters bound; an operator
 * lambda of scalars and tuples that reads nothing but its parameters is
 * emitted once as a C function and called. */
#include "cg.h"

#include <string.h>


static bool closed_scalar(const st_node *e, const st_node *const *bound, uint32_t nbound) {
    switch (e->kind) {
    case ST_NODE_LIT: return true;
    case ST_NODE_VAR:
        for (uint32_t i = 0; i < nbound; i++)
            if (bound[i]->u.name == e->u.name) return true;
        return false;
    case ST_NODE_BINOP:
        /* a divisor that may be 0 is checked, which a C function of its own
         * cannot record (the fault words are the kernel's) */
        if (cg_divides_by_zero(e->u.binop, e->kids[0]->type->scalar, e->kids[1], NULL)) return false;
        __attribute__((fallthrough));
    case ST_NODE_TUPLE: case ST_NODE_PROJ: case ST_NODE_UNOP: case ST_NODE_CONV:
    case ST_NODE_IF:
        for (uint32_t i = 0; i < e->nkids; i++)
            if (!closed_scalar(e->kids[i], bound, nbound)) return false;
        return e->type->kind == ST_TYPE_SCALAR || e->type->kind == ST_TYPE_TUPLE;
    case ST_NODE_LET: {
        if (nbound + e->nkids > 64 || !closed_scalar(st_let_value(e), bound, nbound)) return false;
        const st_node *more[64];
        memcpy(more, bound, nbound * sizeof *more);
        for (uint32_t i = 0; i < st_let_nvars(e); i++) more[nbound + i] = e->kids[i];
        return closed_scalar(st_let_body(e), more, nbound + st_let_nvars(e));
    }
    default: return false;
    }
}

/* An operator lambda of scalars and tuples that reads nothing but its
 * parameters becomes a C function, once per program: the kernels then read
 * as `acc = op1(acc, x)`. */
static bool wants_function(const st_node *f) {
    if (f->kind != ST_NODE_LAMBDA || st_lambda_nparams(f) > 16 || !cg_is_plain(f->type->elem)) return false;
    for (uint32_t i = 0; i < st_lambda_nparams(f); i++)
        if (!cg_is_plain(f->kids[i]->type)) return false;
    return closed_scalar(st_lambda_body(f), f->kids, st_lambda_nparams(f));
}

const char *cg_tuple_literal(cg *g, const cg_value *v) {
    if (v->kind == CG_SCALAR) return v->c;
    const char *ctype = cg_ctype(g, v->type);
    st_buf b = {0};
    st_buf_printf(&b, "make_%s(", ctype);
    for (uint32_t k = 0; k < v->n; k++) st_buf_printf(&b, "%s%s", k ? ", " : "", cg_tuple_literal(g, &v->items[k]));
    st_buf_puts(&b, ")");
    const char *r = cg_str(g, "%s", b.data ? b.data : "");
    st_buf_free(&b);
    return r;
}

cg_value cg_fields_of(cg *g, const st_type *t, const char *c) {
    if (t->kind == ST_TYPE_SCALAR) return cg_scalar(t, c);
    cg_value *items = cg_alloc(g, t->n * sizeof *items);
    if (!items) return cg_scalar(t, c);
    for (uint32_t k = 0; k < t->n; k++) items[k] = cg_fields_of(g, t->items[k], cg_str(g, "%s.f%u", c, k));
    return (cg_value){.kind = CG_TUPLE, .type = t, .n = t->n, .items = items};
}

static const char *function_for(cg *g, const st_node *f) {
    for (uint32_t i = 0; i < g->nfuncs; i++)
        if (g->funcs_of[i] == f) return cg_str(g, "op%u", i);
    if (!cg_grow(g, (void **)&g->funcs_of, g->nfuncs, &g->capfuncs, sizeof *g->funcs_of)) return "op";
    uint32_t id = g->nfuncs++;
    g->funcs_of[id] = f;
    /* the body goes to its own text, at its own indent, in its own scope */
    cg_kernel *saved = g->k, fn = {.shape = CG_SHAPE_SINGLE};
    int indent = g->indent;
    cg_level level = g->level;
    g->k = &fn;
    g->indent = 1;
    g->level = CG_THREAD;
    const cg_binding *env = NULL;
    st_buf head = {0};
    st_buf_printf(&head, "static %s op%u(", cg_ctype(g, f->type->elem), id);
    for (uint32_t i = 0; i < st_lambda_nparams(f); i++) {
        const st_node *p = f->kids[i];
        const char *name = cg_str(g, "v_%s", p->u.name);
        st_buf_printf(&head, "%s%s %s", i ? ", " : "", cg_ctype(g, p->type), name);
        env = cg_bind(g, env, p->u.name, p->type->kind == ST_TYPE_TUPLE ? cg_fields_of(g, p->type, name) : cg_scalar(p->type, name));
    }
    cg_value r = cg_thread_value(g, st_lambda_body(f), env);
    cg_line(g, "return %s;", cg_tuple_literal(g, &r));
    st_buf_printf(&g->funcs, "%s) {\n%s}\n\n", head.data, fn.body.data ? fn.body.data : "");
    st_buf_free(&head);
    st_buf_free(&fn.body);
    g->k = saved;
    g->indent = indent;
    g->level = level;
    return cg_str(g, "op%u", id);
}

/* Bind a lambda's parameters to args (a k-parameter lambda given one
 * k-tuple takes its components); the scope its body is generated in. */
const cg_binding *cg_bind_params(cg *g, const st_node *f, uint32_t nargs, const cg_value *args,
                                 const cg_binding *env) {
    uint32_t k = st_lambda_nparams(f);
    if (k != nargs) {
        if (nargs == 1 && args[0].kind == CG_TUPLE && args[0].n == k) return cg_bind_params(g, f, k, args[0].items, env);
        cg_fail(g, f, "a function of %u parameters applied to %u arguments", k, nargs);
        return env;
    }
    for (uint32_t i = 0; i < k; i++) env = cg_bind(g, env, f->kids[i]->u.name, cg_materialize(g, &args[i]));
    return env;
}

cg_value cg_apply(cg *g, const st_node *f, uint32_t nargs, const cg_value *args, const cg_binding *env) {
    if (f->kind == ST_NODE_OPFN) {
        if (nargs != 2 || args[0].kind != CG_SCALAR || args[1].kind != CG_SCALAR) {
            cg_fail(g, f, "an operator applied to other than two scalars");
            return cg_scalar(f->type->elem, "0");
        }
        cg_value d = args[1];
        if (cg_divides_by_zero(f->u.binop, args[0].type->scalar, NULL, &d)) {
            d = cg_materialize(g, &d);
            cg_checked_divisor(g, d.c, f);
        }
        return cg_scalar(f->type->elem, cg_binop(g, f->u.binop, args[0].type->scalar, args[0].c, d.c));
    }
    if (f->kind != ST_NODE_LAMBDA) {
        cg_fail(g, f, "a function argument that is not a lambda or an operator");
        return cg_scalar(f->type, "0");
    }
    if (wants_function(f) && st_lambda_nparams(f) == nargs) {
        const char *name = function_for(g, f);
        st_buf b = {0};
        st_buf_printf(&b, "%s(", name);
        for (uint32_t i = 0; i < nargs; i++) st_buf_printf(&b, "%s%s", i ? ", " : "", cg_tuple_literal(g, &args[i]));
        st_buf_puts(&b, ")");
        const char *call = cg_str(g, "%s", b.data ? b.data : "");
        st_buf_free(&b);
        const st_type *rt = f->type->elem;
        if (rt->kind == ST_TYPE_SCALAR) return cg_scalar(rt, call);
        const char *r = cg_name(g, "r");
        cg_line(g, "%s %s = %s;", cg_ctype(g, rt), r, call);
        return cg_fields_of(g, rt, r);
    }
    return cg_thread_value(g, st_lambda_body(f), cg_bind_params(g, f, nargs, args, env));
}

void cg_apply_into(cg *g, const st_node *f, uint32_t nargs, const cg_value *args, const cg_binding *env,
                       const cg_place *p) {
    if (f->kind == ST_NODE_LAMBDA && f->type->elem->kind == ST_TYPE_ARRAY) {
        cg_thread_into(g, st_lambda_body(f), cg_bind_params(g, f, nargs, args, env), p);
        return;
    }
    cg_value v = cg_apply(g, f, nargs, args, env);
    cg_store(g, p, &v);
}

