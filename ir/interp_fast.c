/* ir/interp_fast.c — the reference interpreter's fast path (interp_fast.h).
 *
 * The compiler: a function's body, made of literals, variables, tuples and
 * their projections, unary and binary operators, conversions, if, let and
 * get from a captured array, becomes a list of instructions over numbered
 * slots of raw scalars. A value of a scalar or a tuple of scalars is a list
 * of slots, one for each scalar in it, in order: a tuple is its parts'
 * lists one after the other, a projection a part of its list, a variable
 * the list of what bound it. The parameters take the first slots; literals
 * and the free variables (what the function captures from where it runs)
 * have slots filled once a run. A slot is written by one instruction, or
 * by one of an if's two branches, so a variable can name a slot with no
 * copy. Instructions run in the order eval() would evaluate the nodes, if
 * and && || jumping over what it would not evaluate, so that a division by
 * zero or an index out of range stops at the same node.
 *
 * The operators are scalar_inline.h's, which scalar.c's are too: the usual
 * (operator, kind) pairs each have an instruction of their own, which the
 * compiler folds to the one operation; the rest call st_scalar_binop.
 *
 * The runners: map, fold and scatter over arrays whose elements are
 * scalars or tuples of scalars (their leaves flat arrays), reading and
 * writing the leaves' data directly. Floats are combined in the tree
 * interp.c uses (TREE_LEAF elements folded left to right, halves first;
 * a scan's pairs), step for step. */
#include "interp_fast.h"

#include "scalar_ops.h"

#include <stdlib.h>
#include <string.h>

enum {
    MAX_WIDTH = 64,    /* scalars in one value of a compiled function */
    MAX_CODE = 4096,   /* instructions of one function */
    MAX_LEAVES = 64,   /* leaves of an array a runner reads or writes */
    TREE_LEAF = 8      /* as interp.c's */
};

enum { OP_END, OP_MOV, OP_JMP, OP_JMPF, OP_JMPT, OP_UN, OP_CONV, OP_GET, OP_BIN };
#define KINDS ST_SCALAR_KIND_COUNT
#define BIN_OP(op, k) (OP_BIN + (unsigned)(op) * KINDS + (unsigned)(k))

typedef struct instr {
    unsigned op;
    uint8_t kind, from, sub, width; /* result kind; CONV: source kind, GET: the index's; UN: the unop; GET: scalars */
    uint32_t d, a, b;               /* slots; JMP*: d the target; GET: b the first leaf of the array */
    const st_node *node;            /* where a fault is */
} instr;

typedef struct konst {
    uint32_t slot;
    st_scalar v;
} konst;

/* a free variable: its scalars into slots [slot, slot + width), or an
 * array's leaves into the leaf table from `leaf` */
typedef struct capture {
    const st_node *var;
    uint32_t slot, leaf, width;
    bool array;
} capture;

struct st_fast_fn {
    uint32_t nparams;   /* as apply() counts them: an operator has 2 */
    uint32_t nin, nout; /* the parameters' scalars (slots 0 .. nin - 1), the result's */
    st_scalar_kind *in_kinds, *out_kinds;
    uint32_t *outs;
    uint32_t nslots, nleaves;
    instr *code;
    konst *consts;
    uint32_t nconsts;
    capture *caps;
    uint32_t ncaps;
    const instr *direct; /* the function is this one operator on its two scalars: called straight */
};

struct st_fast {
    st_arena *a;
    st_ptrmap compiled; /* node -> st_fast_fn *, or 1: declined */
};

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

/* ---- running compiled code ---- */

/* a flat array of scalars: an array leaf of rank 1 */
typedef struct leaf {
    char *data;
    size_t size;
    st_scalar_kind kind;
    int64_t len;
} leaf;

/* The leaves of v (arrays of rank 1, or tuples of such), at most max;
 * false when one is not. */
static bool leaves_of(const st_value *v, leaf *out, uint32_t max, uint32_t *n) {
    if (v->kind == ST_VALUE_TUPLE) {
        for (uint32_t i = 0; i < v->n; i++)
            if (!leaves_of(&v->u.items[i], out, max, n)) return false;
        return true;
    }
    if (v->kind != ST_VALUE_ARRAY || v->n != 1 || *n >= max) return false;
    out[(*n)++] = (leaf){v->u.a.data, st_scalar_size(v->scalar), v->scalar, v->u.a.dims[0]};
    return true;
}

/* The scalars of v (a scalar, or tuples of them), at most max */
static bool scalars_of(const st_value *v, st_scalar *s, st_scalar_kind *k, uint32_t max, uint32_t *n) {
    if (v->kind == ST_VALUE_TUPLE) {
        for (uint32_t i = 0; i < v->n; i++)
            if (!scalars_of(&v->u.items[i], s, k, max, n)) return false;
        return true;
    }
    if (v->kind != ST_VALUE_SCALAR || *n >= max) return false;
    k[*n] = v->scalar;
    s[(*n)++] = v->u.s;
    return true;
}

static void scalars_into(st_value *v, const st_scalar *s, uint32_t *at) {
    if (v->kind == ST_VALUE_TUPLE) {
        for (uint32_t i = 0; i < v->n; i++) scalars_into((st_value *)&v->u.items[i], s, at);
        return;
    }
    v->u.s = s[(*at)++];
}

static bool kinds_match(const leaf *l, uint32_t n, const st_scalar_kind *k) {
    for (uint32_t i = 0; i < n; i++)
        if (l[i].kind != k[i]) return false;
    return true;
}

static inline void load_elem(const leaf *l, uint32_t n, int64_t i, st_scalar *s) {
    for (uint32_t j = 0; j < n; j++) s[j] = st_scalar_load(l[j].kind, l[j].data + (size_t)i * l[j].size);
}

static inline void store_elem(const leaf *l, uint32_t n, int64_t i, const st_scalar *s) {
    for (uint32_t j = 0; j < n; j++) st_scalar_store(l[j].kind, l[j].data + (size_t)i * l[j].size, s[j]);
}

/* One run of a function: its slots, with the literals and what it
 * captures filled in, and the arrays it reads. */
typedef struct frame {
    const st_fast_fn *f;
    st_scalar *s;
    leaf *arrays;
} frame;

static void frame_close(frame *fr) {
    free(fr->s);
    free(fr->arrays);
    fr->s = NULL;
    fr->arrays = NULL;
}

static st_fast_status frame_open(frame *fr, const st_fast_fn *f, const st_fast_scope *sc, st_fast_fault *fault) {
    *fr = (frame){.f = f};
    fr->s = calloc((size_t)f->nslots + 1, sizeof *fr->s);
    fr->arrays = calloc((size_t)f->nleaves + 1, sizeof *fr->arrays);
    if (!fr->s || !fr->arrays) {
        frame_close(fr);
        return fault->kind = ST_FAST_MEMORY, ST_FAST_FAULT;
    }
    for (uint32_t i = 0; i < f->nconsts; i++) fr->s[f->consts[i].slot] = f->consts[i].v;
    for (uint32_t i = 0; i < f->ncaps; i++) {
        const capture *c = &f->caps[i];
        st_value v;
        st_scalar_kind kinds[MAX_WIDTH];
        uint32_t n = 0;
        bool ok = sc->lookup(sc->ctx, c->var, &v);
        if (ok && c->array) ok = leaves_of(&v, fr->arrays + c->leaf, c->width, &n) && n == c->width;
        else if (ok) ok = scalars_of(&v, fr->s + c->slot, kinds, c->width, &n) && n == c->width;
        if (!ok) { /* the generic path says what is wrong */
            frame_close(fr);
            return ST_FAST_DECLINED;
        }
    }
    return ST_FAST_DONE;
}

/* The ordinary operations, each an instruction of its own: the compiler
 * makes each case the one operation (st_scalar_binop_inline with constants).
 * Not a float's + or *: a compiler may swap their operands, which changes
 * which NaN comes out of two (x86 keeps the first one's sign and payload),
 * so they go through st_scalar_binop, the generic path's very code. */
#define HOT_INT(X, k) X(ST_OP_ADD, k) X(ST_OP_SUB, k) X(ST_OP_MUL, k) X(ST_OP_EQ, k) X(ST_OP_NE, k) X(ST_OP_LT, k) \
    X(ST_OP_LE, k) X(ST_OP_GT, k) X(ST_OP_GE, k) X(ST_OP_BAND, k) X(ST_OP_BOR, k) X(ST_OP_BXOR, k) X(ST_OP_SHL, k) \
    X(ST_OP_SHR, k) X(ST_OP_MIN, k) X(ST_OP_MAX, k)
#define HOT_FLOAT(X, k) X(ST_OP_SUB, k) X(ST_OP_DIV, k) X(ST_OP_EQ, k) X(ST_OP_NE, k) \
    X(ST_OP_LT, k) X(ST_OP_LE, k) X(ST_OP_GT, k) X(ST_OP_GE, k)
#define HOT_CASE(op, k)                                                       \
    case BIN_OP(op, k):                                                       \
        s[in->d] = st_scalar_binop_inline(op, k, s[in->a], s[in->b], &ok);  \
        break;

static bool get(const instr *in, st_scalar *s, const leaf *arrays, st_fast_fault *fault) {
    const leaf *l = arrays + in->b;
    int64_t i;
    if (!st_scalar_as_i64(in->from, s[in->a], &i) || i < 0 || i >= l->len) {
        *fault = (st_fast_fault){.kind = ST_FAST_INDEX, .node = in->node, .index_kind = in->from, .index = s[in->a],
                                 .length = l->len};
        return false;
    }
    load_elem(l, in->width, i, s + in->d);
    return true;
}

/* f's code on the slots s (its parameters in place); false on a fault */
static bool run(const st_fast_fn *f, st_scalar *s, const leaf *arrays, st_fast_fault *fault) {
    const instr *code = f->code;
    bool ok = true;
    for (uint32_t pc = 0;;) {
        const instr *in = &code[pc++];
        switch (in->op) {
        case OP_END: return true;
        case OP_MOV: s[in->d] = s[in->a]; break;
        case OP_JMP: pc = in->d; break;
        case OP_JMPF: if (!s[in->a].b) pc = in->d; break;
        case OP_JMPT: if (s[in->a].b) pc = in->d; break;
        case OP_UN: s[in->d] = st_scalar_unop((st_unop)in->sub, (st_scalar_kind)in->kind, s[in->a]); break;
        case OP_CONV:
            s[in->d] = st_scalar_convert((st_scalar_kind)in->kind, (st_scalar_kind)in->from, s[in->a]);
            break;
        case OP_GET:
            if (!get(in, s, arrays, fault)) return false;
            break;
        HOT_INT(HOT_CASE, ST_I32)
        HOT_INT(HOT_CASE, ST_U32)
        HOT_INT(HOT_CASE, ST_I64)
        HOT_INT(HOT_CASE, ST_U64)
        HOT_FLOAT(HOT_CASE, ST_F32)
        HOT_FLOAT(HOT_CASE, ST_F64)
        default: {
            unsigned c = in->op - OP_BIN;
            s[in->d] = st_scalar_binop((st_binop)(c / KINDS), (st_scalar_kind)(c % KINDS), s[in->a], s[in->b], &ok);
            if (!ok) {
                *fault = (st_fast_fault){.kind = ST_FAST_DIV_ZERO, .node = in->node};
                return false;
            }
        }
        }
    }
}

/* out = f(in): in the parameters' scalars, out the result's (either may be
 * the same storage as the other) */
static inline bool call(frame *fr, const st_scalar *in, st_scalar *out, st_fast_fault *fault) {
    const st_fast_fn *f = fr->f;
    memcpy(fr->s, in, f->nin * sizeof *in);
    if (!run(f, fr->s, fr->arrays, fault)) return false;
    for (uint32_t j = 0; j < f->nout; j++) out[j] = fr->s[f->outs[j]];
    return true;
}

/* out = f(x, y), each of w scalars (f a combining operator: 2w in, w out) */
static inline bool call2(frame *fr, const st_scalar *x, const st_scalar *y, st_scalar *out, st_fast_fault *fault) {
    const st_fast_fn *f = fr->f;
    if (f->direct) {
        unsigned c = f->direct->op - OP_BIN;
        bool ok = true;
        out[0] = st_scalar_binop((st_binop)(c / KINDS), (st_scalar_kind)(c % KINDS), x[0], y[0], &ok);
        if (!ok) *fault = (st_fast_fault){.kind = ST_FAST_DIV_ZERO, .node = f->direct->node};
        return ok;
    }
    uint32_t w = f->nout;
    st_scalar *s = fr->s;
    for (uint32_t j = 0; j < w; j++) s[j] = x[j];
    for (uint32_t j = 0; j < w; j++) s[w + j] = y[j];
    if (!run(f, s, fr->arrays, fault)) return false;
    for (uint32_t j = 0; j < w; j++) out[j] = s[f->outs[j]];
    return true;
}

/* ---- replicate ---- */

st_fast_status st_fast_fill(st_value *out, const st_value *v) {
    leaf res[MAX_LEAVES];
    st_scalar x[MAX_WIDTH];
    st_scalar_kind kinds[MAX_WIDTH];
    uint32_t nres = 0, nx = 0;
    if (!leaves_of(out, res, MAX_LEAVES, &nres) || !scalars_of(v, x, kinds, MAX_WIDTH, &nx) || nx != nres ||
        !kinds_match(res, nres, kinds))
        return ST_FAST_DECLINED;
    int64_t len = st_value_length(out);
    for (int64_t i = 0; i < len; i++) store_elem(res, nres, i, x);
    return ST_FAST_DONE;
}

/* ---- map ---- */

st_fast_status st_fast_map(const st_fast_fn *f, const st_fast_scope *sc, const st_value *xs, st_value *out,
                           st_fast_fault *fault) {
    leaf in[MAX_LEAVES], res[MAX_LEAVES];
    uint32_t nin = 0, nres = 0;
    /* one parameter takes the element; k parameters its k components */
    if (!leaves_of(xs, in, MAX_LEAVES, &nin) || !leaves_of(out, res, MAX_LEAVES, &nres)) return ST_FAST_DECLINED;
    if (f->nparams != 1 && (xs->kind != ST_VALUE_TUPLE || xs->n != f->nparams)) return ST_FAST_DECLINED;
    if (nin != f->nin || nres != f->nout || !kinds_match(in, nin, f->in_kinds) || !kinds_match(res, nres, f->out_kinds))
        return ST_FAST_DECLINED;
    frame fr;
    st_fast_status st = frame_open(&fr, f, sc, fault);
    if (st != ST_FAST_DONE) return st;
    int64_t len = st_value_length(xs);
    st_scalar *s = fr.s;
    for (int64_t i = 0; i < len; i++) {
        load_elem(in, nin, i, s);
        if (!run(f, s, fr.arrays, fault)) {
            st = ST_FAST_FAULT;
            break;
        }
        for (uint32_t j = 0; j < nres; j++)
            st_scalar_store(res[j].kind, res[j].data + (size_t)i * res[j].size, s[f->outs[j]]);
    }
    frame_close(&fr);
    return st;
}

/* ---- floats in a tree, as interp.c's tree_reduce and tree_scan ---- */

/* Element i of what a tree combines: xs[order[i]], or xs[i] without an order. */
static inline void tree_elem(const leaf *xs, uint32_t w, const int64_t *order, int64_t i, st_scalar *out) {
    load_elem(xs, w, order ? order[i] : i, out);
}

/* acc = elements [lo, hi) of xs (lo < hi) combined, halves first */
static bool tree_reduce(frame *fr, const leaf *xs, const int64_t *order, int64_t lo, int64_t hi, st_scalar *acc,
                        st_fast_fault *fault) {
    uint32_t w = fr->f->nout;
    st_scalar x[MAX_WIDTH], y[MAX_WIDTH];
    if (hi - lo <= TREE_LEAF) {
        tree_elem(xs, w, order, lo, acc);
        for (int64_t i = lo + 1; i < hi; i++) {
            tree_elem(xs, w, order, i, y);
            if (!call2(fr, acc, y, acc, fault)) return false;
        }
        return true;
    }
    int64_t mid = lo + (hi - lo) / 2;
    return tree_reduce(fr, xs, order, lo, mid, x, fault) && tree_reduce(fr, xs, order, mid, hi, y, fault) &&
           call2(fr, x, y, acc, fault);
}

/* the inclusive scan of v's n elements (w scalars each), in place, in the tree of interp.c's tree_scan */
static bool tree_scan(frame *fr, st_scalar *v, int64_t n, st_fast_fault *fault) {
    uint32_t w = fr->f->nout;
#define ELEM(p, i) ((p) + (size_t)(i) * w)
    if (n <= TREE_LEAF) {
        for (int64_t i = 1; i < n; i++)
            if (!call2(fr, ELEM(v, i - 1), ELEM(v, i), ELEM(v, i), fault)) return false;
        return true;
    }
    int64_t half = n / 2;
    st_scalar *pairs = malloc((size_t)half * w * sizeof *pairs);
    if (!pairs) return (fault->kind = ST_FAST_MEMORY), false;
    bool ok = true;
    for (int64_t j = 0; ok && j < half; j++) ok = call2(fr, ELEM(v, 2 * j), ELEM(v, 2 * j + 1), ELEM(pairs, j), fault);
    ok = ok && tree_scan(fr, pairs, half, fault);
    for (int64_t j = 0; ok && j < half; j++) {
        if (j > 0) ok = call2(fr, ELEM(pairs, j - 1), ELEM(v, 2 * j), ELEM(v, 2 * j), fault);
        for (uint32_t k = 0; k < w; k++) ELEM(v, 2 * j + 1)[k] = ELEM(pairs, j)[k];
    }
    if (ok && n % 2) ok = call2(fr, ELEM(pairs, half - 1), ELEM(v, n - 1), ELEM(v, n - 1), fault);
#undef ELEM
    free(pairs);
    return ok;
}

/* reduce, scan or exscan of floats, as interp.c's tree_fold */
static bool tree_fold(frame *fr, const st_fast_fold *fo, const st_scalar *z, const leaf *xs, const leaf *res,
                      st_value *out, st_fast_fault *fault) {
    uint32_t w = fr->f->nout;
    int64_t len = st_value_length(fo->xs);
    st_scalar args[2 * MAX_WIDTH];
    if (!fo->keep) {
        memcpy(args, z, w * sizeof *args);
        if (len) {
            if (!tree_reduce(fr, xs, NULL, 0, len, args + w, fault) || !call(fr, args, args, fault)) return false;
        }
        uint32_t at = 0;
        scalars_into(out, args, &at);
        return true;
    }
    if (len == 0) return true;
    st_scalar *prefixes = malloc((size_t)len * w * sizeof *prefixes);
    if (!prefixes) return (fault->kind = ST_FAST_MEMORY), false;
    for (int64_t i = 0; i < len; i++) load_elem(xs, w, i, prefixes + (size_t)i * w);
    memcpy(args, z, w * sizeof *args);
    memcpy(args + w, prefixes, w * sizeof *args);
    bool ok = call(fr, args, prefixes, fault) && tree_scan(fr, prefixes, len, fault);
    if (ok && fo->exclusive) { /* element i is the prefix before it */
        store_elem(res, w, 0, z);
        for (int64_t i = 1; i < len; i++) store_elem(res, w, i, prefixes + (size_t)(i - 1) * w);
    } else if (ok) {
        for (int64_t i = 0; i < len; i++) store_elem(res, w, i, prefixes + (size_t)i * w);
    }
    free(prefixes);
    return ok;
}

/* ---- fold ---- */

/* Does f take (acc, x) of these kinds, and give back an acc (give: the
 * kinds of what it gives, NULL for any)? */
static bool takes(const st_fast_fn *f, const st_scalar_kind *acc, uint32_t wa, const leaf *xs, uint32_t wx,
                  const st_scalar_kind *give, uint32_t wg) {
    if (f->nparams != 2 || f->nin != wa + wx || memcmp(f->in_kinds, acc, wa * sizeof *acc) != 0 ||
        !kinds_match(xs, wx, f->in_kinds + wa))
        return false;
    return !give || (f->nout == wg && memcmp(f->out_kinds, give, wg * sizeof *give) == 0);
}

st_fast_status st_fast_fold_run(const st_fast_fold *fo, const st_fast_scope *sc, st_value *out,
                                st_fast_fault *fault) {
    leaf xs[MAX_LEAVES], res[MAX_LEAVES];
    st_scalar acc[MAX_WIDTH], next[MAX_WIDTH];
    st_scalar_kind kinds[MAX_WIDTH];
    uint32_t wx = 0, wa = 0, nres = 0;
    const st_fast_fn *step = fo->step, *post = fo->post;
    if (!leaves_of(fo->xs, xs, MAX_LEAVES, &wx) || !scalars_of(fo->z, acc, kinds, MAX_WIDTH, &wa)) return ST_FAST_DECLINED;
    if (!takes(step, kinds, wa, xs, wx, kinds, wa) || (post && !takes(post, kinds, wa, xs, wx, NULL, 0)))
        return ST_FAST_DECLINED;
    if (fo->keep) {
        const st_fast_fn *last = post ? post : step;
        if (!leaves_of(out, res, MAX_LEAVES, &nres) || nres != (fo->exclusive ? wa : last->nout) ||
            !kinds_match(res, nres, fo->exclusive ? kinds : last->out_kinds))
            return ST_FAST_DECLINED;
    } else {
        st_scalar s[MAX_WIDTH];
        st_scalar_kind k[MAX_WIDTH];
        if (!scalars_of(out, s, k, MAX_WIDTH, &nres) || nres != wa) return ST_FAST_DECLINED;
    }
    if (fo->tree && (post || wx != wa)) return ST_FAST_DECLINED;
    frame fs, fp = {0};
    st_fast_status st = frame_open(&fs, step, sc, fault);
    if (st != ST_FAST_DONE) return st;
    if (post && (st = frame_open(&fp, post, sc, fault)) != ST_FAST_DONE) {
        frame_close(&fs);
        return st;
    }
    if (fo->tree) {
        st = tree_fold(&fs, fo, acc, xs, res, out, fault) ? ST_FAST_DONE : ST_FAST_FAULT;
        frame_close(&fs);
        frame_close(&fp);
        return st;
    }
    int64_t len = st_value_length(fo->xs);
    st_scalar *s = fs.s, *sp = fp.s;
    memcpy(s, acc, wa * sizeof *s);
    for (int64_t i = 0; i < len; i++) {
        if (fo->exclusive) store_elem(res, wa, i, s);
        load_elem(xs, wx, i, s + wa);
        if (!run(step, s, fs.arrays, fault)) {
            st = ST_FAST_FAULT;
            break;
        }
        for (uint32_t j = 0; j < wa; j++) next[j] = s[step->outs[j]];
        if (post) {
            memcpy(sp, next, wa * sizeof *sp);
            memcpy(sp + wa, s + wa, wx * sizeof *sp);
            if (!run(post, sp, fp.arrays, fault)) {
                st = ST_FAST_FAULT;
                break;
            }
            if (fo->keep && !fo->exclusive)
                for (uint32_t j = 0; j < nres; j++)
                    st_scalar_store(res[j].kind, res[j].data + (size_t)i * res[j].size, sp[post->outs[j]]);
        } else if (fo->keep && !fo->exclusive) {
            store_elem(res, wa, i, next);
        }
        memcpy(s, next, wa * sizeof *s);
    }
    if (st == ST_FAST_DONE && !fo->keep) {
        uint32_t at = 0;
        scalars_into(out, s, &at);
    }
    frame_close(&fs);
    frame_close(&fp);
    return st;
}

/* ---- scatter and reduce_by_index ---- */

/* as interp.c's flat_index: element i's place, false when out of bounds */
static inline bool place_of(const leaf *is, bool two, const int64_t *dims, int64_t i, int64_t *out) {
    st_scalar r = st_scalar_load(is[0].kind, is[0].data + (size_t)i * is[0].size);
    if (!two) return st_scalar_as_i64(is[0].kind, r, out) && *out >= 0 && *out < dims[0];
    st_scalar c = st_scalar_load(is[1].kind, is[1].data + (size_t)i * is[1].size);
    int64_t ri, ci;
    if (!st_scalar_as_i64(is[0].kind, r, &ri) || !st_scalar_as_i64(is[1].kind, c, &ci)) return false;
    if (ri < 0 || ri >= dims[0] || ci < 0 || ci >= dims[1]) return false;
    *out = ri * dims[1] + ci;
    return true;
}

/* as interp.c's tree_histogram */
static bool tree_histogram(frame *fr, const st_fast_scatter *h, const leaf *flat, const leaf *is, const leaf *vs,
                           st_fast_fault *fault) {
    uint32_t w = fr->f->nout;
    int64_t len = st_value_length(h->is), buckets = flat[0].len;
    int64_t *bucket = malloc((size_t)(len ? len : 1) * sizeof *bucket);
    int64_t *start = calloc((size_t)buckets + 1, sizeof *start);
    int64_t *order = malloc((size_t)(len ? len : 1) * sizeof *order);
    bool ok = bucket && start && order;
    if (!ok) fault->kind = ST_FAST_MEMORY;
    for (int64_t i = 0; ok && i < len; i++) {
        if (!place_of(is, h->two, h->dims, i, &bucket[i])) bucket[i] = -1;
        if (bucket[i] >= 0) start[bucket[i] + 1]++;
    }
    for (int64_t b = 0; ok && b < buckets; b++) start[b + 1] += start[b];
    for (int64_t i = 0, *next = start; ok && i < len; i++)
        if (bucket[i] >= 0) order[next[bucket[i]]++] = i;
    st_scalar args[2 * MAX_WIDTH];
    for (int64_t b = 0; ok && b < buckets; b++) {
        int64_t lo = b ? start[b - 1] : 0, hi = start[b];
        if (lo == hi) continue;
        load_elem(flat, w, b, args);
        ok = tree_reduce(fr, vs, order, lo, hi, args + w, fault) && call(fr, args, args, fault);
        if (ok) store_elem(flat, w, b, args);
    }
    free(bucket);
    free(start);
    free(order);
    return ok;
}

st_fast_status st_fast_scatter_run(const st_fast_scatter *h, const st_fast_scope *sc, st_fast_fault *fault) {
    leaf flat[MAX_LEAVES], is[2], vs[MAX_LEAVES];
    uint32_t nflat = 0, nis = 0, nvs = 0;
    if (!leaves_of(h->flat, flat, MAX_LEAVES, &nflat) || !leaves_of(h->is, is, 2, &nis) ||
        !leaves_of(h->vs, vs, MAX_LEAVES, &nvs))
        return ST_FAST_DECLINED;
    if (nis != (h->two ? 2u : 1u) || nvs != nflat) return ST_FAST_DECLINED;
    for (uint32_t j = 0; j < nis; j++)
        if (!st_scalar_is_int(is[j].kind)) return ST_FAST_DECLINED;
    for (uint32_t j = 0; j < nflat; j++)
        if (flat[j].kind != vs[j].kind) return ST_FAST_DECLINED;
    st_scalar_kind kinds[MAX_WIDTH];
    for (uint32_t j = 0; j < nflat; j++) kinds[j] = flat[j].kind;
    if (h->op && !takes(h->op, kinds, nflat, vs, nvs, kinds, nflat)) return ST_FAST_DECLINED;
    if (h->tree && !h->op) return ST_FAST_DECLINED;
    frame fr = {0};
    st_fast_status st = ST_FAST_DONE;
    if (h->op && (st = frame_open(&fr, h->op, sc, fault)) != ST_FAST_DONE) return st;
    if (h->tree) {
        st = tree_histogram(&fr, h, flat, is, vs, fault) ? ST_FAST_DONE : ST_FAST_FAULT;
        frame_close(&fr);
        return st;
    }
    int64_t len = st_value_length(h->is), places = h->dims[0] * (h->two ? h->dims[1] : 1);
    uint8_t *written = NULL;
    if (h->distinct && !(written = calloc((size_t)(places / 8 + 1), 1))) {
        frame_close(&fr);
        return fault->kind = ST_FAST_MEMORY, ST_FAST_FAULT;
    }
    st_scalar *s = fr.s;
    for (int64_t i = 0; i < len; i++) {
        int64_t idx;
        if (!place_of(is, h->two, h->dims, i, &idx)) continue; /* out of bounds: ignored */
        if (written && (written[idx / 8] >> (idx % 8) & 1)) {
            *fault = (st_fast_fault){.kind = ST_FAST_DISTINCT, .elem = i, .place = idx};
            st = ST_FAST_FAULT;
            break;
        }
        if (written) written[idx / 8] |= (uint8_t)(1u << (idx % 8));
        if (!h->op) {
            for (uint32_t j = 0; j < nflat; j++)
                st_scalar_store(flat[j].kind, flat[j].data + (size_t)idx * flat[j].size,
                                st_scalar_load(vs[j].kind, vs[j].data + (size_t)i * vs[j].size));
            continue;
        }
        load_elem(flat, nflat, idx, s);
        load_elem(vs, nvs, i, s + nflat);
        if (!run(h->op, s, fr.arrays, fault)) {
            st = ST_FAST_FAULT;
            break;
        }
        for (uint32_t j = 0; j < nflat; j++)
            st_scalar_store(flat[j].kind, flat[j].data + (size_t)idx * flat[j].size, s[h->op->outs[j]]);
    }
    free(written);
    frame_close(&fr);
    return st;
}
