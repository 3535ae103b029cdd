/* ir/interp_compile.c — the compiler of the reference interpreter's fast
 * path (interp_fast.h, interp_code.h).
 *
 * A function's body, made of literals, variables, tuples and their
 * projections, unary and binary operators, conversions, if, let and get
 * from a captured array, becomes a list of instructions over numbered
 * slots of raw scalars: a tuple is its parts' lists one after the other,
 * a projection a part of its list, a variable the list of what bound it.
 * The parameters take the first slots; literals and the free variables
 * (what the function captures from where it runs) have slots filled once a
 * run. A slot is written by one instruction, or by one of an if's two
 * branches, so a variable can name a slot with no copy. Instructions run in
 * the order eval() would evaluate the nodes, if and && || jumping over what
 * it would not evaluate, so that a division by zero or an index out of
 * range stops at the same node.
 *
 * The operators are scalar_inline.h's, which scalar.c's are too: the usual
 * (operator, kind) pairs each have an instruction of their own, which the
 * compiler folds to the one operation; the rest call st_scalar_binop. */
#include "interp_code.h"

#include "scalar_ops.h"

#include <stdlib.h>
#include <string.h>

st_fast *st_fast_new(void) {
    st_fast *F = calloc(1, sizeof *F);
    if (F && !(F->a = st_arena_new())) {
        free(F);
        return NULL;
    }
    return F;
}

void st_fast_free(st_fast *F) {
    if (!F) return;
    st_ptrmap_free(&F->compiled);
    st_arena_free(F->a);
    free(F);
}

/* ---- the compiler ---- */

/* scalars in a value of type t, with their kinds into kinds (room for
 * MAX_WIDTH); 0 when it holds an array or is too wide */
static uint32_t flat_kinds(const st_type *t, st_scalar_kind *kinds, uint32_t at) {
    if (t->kind == ST_TYPE_SCALAR) {
        if (at >= MAX_WIDTH) return 0;
        if (kinds) kinds[at] = t->scalar;
        return 1;
    }
    if (t->kind != ST_TYPE_TUPLE) return 0;
    uint32_t w = 0;
    for (uint32_t i = 0; i < t->n; i++) {
        uint32_t wi = flat_kinds(t->items[i], kinds, at + w);
        if (!wi) return 0;
        w += wi;
    }
    return w;
}
static uint32_t width_of(const st_type *t) { return flat_kinds(t, NULL, 0); }

typedef struct scope_entry {
    const st_node *var;
    uint32_t slots[MAX_WIDTH];
    uint32_t width;
} scope_entry;

typedef struct compiler {
    instr code[MAX_CODE];
    uint32_t ncode, nslots, nleaves;
    konst consts[MAX_CODE];
    uint32_t nconsts;
    capture caps[MAX_CODE];
    uint32_t ncaps;
    scope_entry *scope; /* the innermost last */
    size_t nscope, capscope;
} compiler;

static bool emit(compiler *C, instr in) {
    if (C->ncode >= MAX_CODE) return false;
    C->code[C->ncode++] = in;
    return true;
}

static uint32_t fresh(compiler *C, uint32_t n) {
    uint32_t s = C->nslots;
    C->nslots += n;
    return s;
}

static bool push(compiler *C, const st_node *var, const uint32_t *slots, uint32_t width) {
    if (!st_grow(&C->scope, sizeof *C->scope, C->nscope, &C->capscope, 8)) return false;
    scope_entry *e = &C->scope[C->nscope++];
    e->var = var;
    e->width = width;
    memcpy(e->slots, slots, width * sizeof *slots);
    return true;
}

static const scope_entry *bound(const compiler *C, const st_node *var) {
    for (size_t i = C->nscope; i-- > 0;)
        if (C->scope[i].var == var) return &C->scope[i];
    return NULL;
}

/* the capture of var, made on first sight */
static const capture *captured(compiler *C, const st_node *var, bool array) {
    for (uint32_t i = 0; i < C->ncaps; i++)
        if (C->caps[i].var == var) return C->caps[i].array == array ? &C->caps[i] : NULL;
    if (array && var->type->kind != ST_TYPE_ARRAY) return NULL;
    uint32_t w = width_of(array ? var->type->elem : var->type);
    if (!w || C->ncaps >= MAX_CODE) return NULL;
    capture *c = &C->caps[C->ncaps++];
    *c = (capture){.var = var, .width = w, .array = array};
    if (array) {
        c->leaf = C->nleaves;
        C->nleaves += w;
    } else {
        c->slot = fresh(C, w);
    }
    return c;
}

static bool compile(compiler *C, const st_node *n, uint32_t *out);

/* the slots of n, which is a scalar */
static bool compile1(compiler *C, const st_node *n, uint32_t *slot) {
    return n->type->kind == ST_TYPE_SCALAR && compile(C, n, slot);
}

static bool compile_binop(compiler *C, const st_node *n, uint32_t *out) {
    st_scalar_kind k = n->kids[0]->type->scalar;
    uint32_t x, y;
    if (!compile1(C, n->kids[0], &x)) return false;
    st_binop op = n->u.binop;
    if (op == ST_OP_AND || op == ST_OP_OR) { /* the right side only when the left does not decide */
        uint32_t d = fresh(C, 1), jump;
        if (!emit(C, (instr){.op = OP_MOV, .d = d, .a = x})) return false;
        jump = C->ncode;
        if (!emit(C, (instr){.op = op == ST_OP_AND ? OP_JMPF : OP_JMPT, .a = d}) || !compile1(C, n->kids[1], &y) ||
            !emit(C, (instr){.op = BIN_OP(op, k), .kind = (uint8_t)k, .d = d, .a = d, .b = y, .node = n}))
            return false;
        C->code[jump].d = C->ncode;
        *out = d;
        return true;
    }
    if (!compile1(C, n->kids[1], &y)) return false;
    *out = fresh(C, 1);
    return emit(C, (instr){.op = BIN_OP(op, k), .kind = (uint8_t)k, .d = *out, .a = x, .b = y, .node = n});
}

/* get(i, xs) of an array the function captures */
static bool compile_get(compiler *C, const st_node *n, uint32_t *out) {
    const st_node *idx = n->kids[0], *arr = n->kids[1];
    if (arr->kind != ST_NODE_VAR || bound(C, arr) || !st_type_is_int(idx->type)) return false;
    uint32_t i;
    if (!compile1(C, idx, &i)) return false;
    const capture *c = captured(C, arr, true);
    if (!c) return false;
    uint32_t d = fresh(C, c->width);
    for (uint32_t j = 0; j < c->width; j++) out[j] = d + j;
    return emit(C, (instr){.op = OP_GET, .from = (uint8_t)idx->type->scalar, .width = (uint8_t)c->width, .d = d, .a = i,
                           .b = c->leaf, .node = n});
}

static bool compile(compiler *C, const st_node *n, uint32_t *out) {
    uint32_t w = width_of(n->type);
    if (!w) return false;
    switch (n->kind) {
    case ST_NODE_LIT:
        if (C->nconsts >= MAX_CODE) return false;
        *out = fresh(C, 1);
        C->consts[C->nconsts++] = (konst){*out, n->u.lit};
        return true;
    case ST_NODE_VAR: {
        const scope_entry *e = bound(C, n);
        if (e) return memcpy(out, e->slots, w * sizeof *out), true;
        const capture *c = captured(C, n, false);
        if (!c) return false;
        for (uint32_t j = 0; j < w; j++) out[j] = c->slot + j;
        return true;
    }
    case ST_NODE_TUPLE:
        for (uint32_t i = 0, at = 0; i < n->nkids; i++) {
            if (!compile(C, n->kids[i], out + at)) return false;
            at += width_of(n->kids[i]->type);
        }
        return true;
    case ST_NODE_PROJ: {
        uint32_t all[MAX_WIDTH], at = 0;
        const st_type *t = n->kids[0]->type;
        if (t->kind != ST_TYPE_TUPLE || !compile(C, n->kids[0], all)) return false;
        for (uint32_t i = 0; i < n->u.index; i++) at += width_of(t->items[i]);
        memcpy(out, all + at, w * sizeof *out);
        return true;
    }
    case ST_NODE_UNOP: {
        uint32_t x;
        if (!compile1(C, n->kids[0], &x)) return false;
        *out = fresh(C, 1);
        return emit(C, (instr){.op = OP_UN, .kind = (uint8_t)n->kids[0]->type->scalar, .sub = (uint8_t)n->u.unop,
                               .d = *out, .a = x});
    }
    case ST_NODE_BINOP: return compile_binop(C, n, out);
    case ST_NODE_CONV: {
        uint32_t x;
        if (!compile1(C, n->kids[0], &x)) return false;
        *out = fresh(C, 1);
        return emit(C, (instr){.op = OP_CONV, .kind = (uint8_t)n->u.conv, .from = (uint8_t)n->kids[0]->type->scalar,
                               .d = *out, .a = x});
    }
    case ST_NODE_IF: {
        uint32_t c, branch[MAX_WIDTH], d = fresh(C, w), to_else, to_end;
        if (!compile1(C, n->kids[0], &c)) return false;
        to_else = C->ncode;
        if (!emit(C, (instr){.op = OP_JMPF, .a = c}) || !compile(C, n->kids[1], branch)) return false;
        for (uint32_t j = 0; j < w; j++)
            if (!emit(C, (instr){.op = OP_MOV, .d = d + j, .a = branch[j]})) return false;
        to_end = C->ncode;
        if (!emit(C, (instr){.op = OP_JMP})) return false;
        C->code[to_else].d = C->ncode;
        if (!compile(C, n->kids[2], branch)) return false;
        for (uint32_t j = 0; j < w; j++)
            if (!emit(C, (instr){.op = OP_MOV, .d = d + j, .a = branch[j]})) return false;
        C->code[to_end].d = C->ncode;
        for (uint32_t j = 0; j < w; j++) out[j] = d + j;
        return true;
    }
    case ST_NODE_LET: {
        const st_node *value = st_let_value(n);
        uint32_t v[MAX_WIDTH], k = st_let_nvars(n), at = 0;
        size_t mark = C->nscope;
        if (!width_of(value->type) || !compile(C, value, v)) return false;
        for (uint32_t i = 0; i < k; i++) {
            uint32_t wi = width_of(n->kids[i]->type);
            if (!wi || !push(C, n->kids[i], v + at, wi)) return false;
            at += wi;
        }
        bool ok = compile(C, st_let_body(n), out);
        C->nscope = mark;
        return ok;
    }
    case ST_NODE_PRIM: return n->u.prim == ST_PRIM_GET && compile_get(C, n, out);
    default: return false;
    }
}

static void *keep(st_fast *F, const void *p, size_t bytes) {
    void *q = st_arena_alloc(F->a, bytes ? bytes : 1);
    if (q && bytes) memcpy(q, p, bytes);
    return q;
}

/* fn into a st_fast_fn in F's arena; NULL when not taken (*oom: for want of memory) */
static st_fast_fn *build(st_fast *F, compiler *C, const st_node *fn, bool *oom) {
    st_fast_fn f = {0};
    st_scalar_kind in_kinds[2 * MAX_WIDTH], out_kinds[MAX_WIDTH];
    uint32_t outs[MAX_WIDTH];
    if (fn->kind == ST_NODE_OPFN) {
        st_scalar_kind k = fn->type->items[0]->scalar;
        f.nparams = 2;
        f.nin = 2;
        in_kinds[0] = in_kinds[1] = k;
        C->nslots = 2;
        outs[0] = fresh(C, 1);
        f.nout = 1;
        out_kinds[0] = st_binop_result(fn->u.binop, k);
        if (!emit(C, (instr){.op = BIN_OP(fn->u.binop, k), .kind = (uint8_t)k, .d = outs[0], .a = 0, .b = 1, .node = fn}))
            return NULL;
    } else if (fn->kind == ST_NODE_LAMBDA) {
        f.nparams = st_lambda_nparams(fn);
        for (uint32_t i = 0; i < f.nparams; i++) {
            const st_node *p = fn->kids[i];
            uint32_t w = f.nin < MAX_WIDTH ? flat_kinds(p->type, in_kinds + f.nin, 0) : 0, slots[MAX_WIDTH];
            if (!w || f.nin + w > MAX_WIDTH) return NULL;
            for (uint32_t j = 0; j < w; j++) slots[j] = f.nin + j;
            if (!push(C, p, slots, w)) return (*oom = true), NULL;
            f.nin += w;
        }
        C->nslots = f.nin;
        const st_node *body = st_lambda_body(fn);
        f.nout = flat_kinds(body->type, out_kinds, 0);
        if (!f.nout || !compile(C, body, outs)) return NULL;
    } else {
        return NULL;
    }
    if (!emit(C, (instr){.op = OP_END})) return NULL;
    f.nslots = C->nslots;
    f.nleaves = C->nleaves;
    f.nconsts = C->nconsts;
    f.ncaps = C->ncaps;
    st_fast_fn *r = st_arena_alloc(F->a, sizeof *r);
    if (!r) return (*oom = true), NULL;
    *r = f;
    r->in_kinds = keep(F, in_kinds, f.nin * sizeof *in_kinds);
    r->out_kinds = keep(F, out_kinds, f.nout * sizeof *out_kinds);
    r->outs = keep(F, outs, f.nout * sizeof *outs);
    r->code = keep(F, C->code, C->ncode * sizeof *C->code);
    r->consts = keep(F, C->consts, C->nconsts * sizeof *C->consts);
    r->caps = keep(F, C->caps, C->ncaps * sizeof *C->caps);
    if (!r->in_kinds || !r->out_kinds || !r->outs || !r->code || !r->consts || !r->caps) return (*oom = true), NULL;
    if (C->ncode == 2 && r->code[0].op >= OP_BIN && r->code[0].a == 0 && r->code[0].b == 1 && f.nin == 2 && f.nout == 1 &&
        r->outs[0] == r->code[0].d)
        r->direct = &r->code[0];
    return r;
}

const st_fast_fn *st_fast_compile(st_fast *F, const st_node *fn) {
    uintptr_t v;
    if (st_ptrmap_get(&F->compiled, fn, &v)) return v == 1 ? NULL : (const st_fast_fn *)v;
    compiler *C = calloc(1, sizeof *C);
    if (!C) return NULL;
    bool oom = false;
    st_fast_fn *f = build(F, C, fn, &oom);
    free(C->scope);
    free(C);
    if (oom) return NULL; /* not remembered: it may be taken another time */
    return st_ptrmap_put(&F->compiled, fn, f ? (uintptr_t)f : 1) ? f : NULL;
}
