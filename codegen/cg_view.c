/* codegen/cg_view.c — arrays as views over strided memory, and places to
 * write them. Nothing here copies: a split, join or transpose of memory is
 * the same memory with other strides; of anything else, a view that does the
 * index arithmetic when an element is read. Arrays of tuples in memory are
 * zips (the constructors push zip outward), so their unzip is free; an index
 * map making tuples unzips into a map per component. */
#include "cg.h"

#include <string.h>

/* ---- index arithmetic as text ---- */

static bool is_zero(const char *c) { return !strcmp(c, "0") || !strcmp(c, "0L"); }
static bool is_one(const st_size *s) {
    int64_t v;
    return st_size_is_const(s, &v) && v == 1;
}

/* What an index's text holds outside brackets: nothing but one term (a
 * name, a number, a call, an element, a parenthesised whole), or terms
 * joined by + and - only, or any other operator. Indices come as text from
 * many places (a loop's "lb_lo + lb_e + 3", a rule's expression), so the
 * composition below brackets what it must rather than trusting each caller. */
typedef enum index_form { ONE_TERM, A_SUM, OTHER } index_form;

static index_form form_of(const char *c) {
    index_form f = ONE_TERM;
    int depth = 0;
    bool after_term = false; /* a + or - here is binary, not a sign */
    for (const char *p = c; *p; p++) {
        char ch = *p;
        if (ch == '(' || ch == '[') depth++;
        else if (ch == ')' || ch == ']') depth--, after_term = true;
        else if (depth > 0 || ch == ' ') continue;
        else if ((ch == '+' || ch == '-') && after_term) f = f == OTHER ? OTHER : A_SUM, after_term = false;
        else if (strchr("*/%<>=!&|^?:,~+-", ch)) return OTHER; /* a sign too, to be safe */
        else after_term = true;
    }
    return f;
}

static const char *bracketed(cg *g, const char *c, index_form most) {
    return form_of(c) <= most ? c : cg_str(g, "(%s)", c);
}

static const char *times(cg *g, const char *i, const st_size *stride) {
    int64_t v;
    if (st_size_is_const(stride, &v) && v == 0) return "0";
    if (is_one(stride)) return i;
    return cg_str(g, "%s * %s", bracketed(g, i, ONE_TERM), cg_size(g, stride));
}

static const char *plus(cg *g, const char *a, const char *b) {
    if (is_zero(a)) return b;
    if (is_zero(b)) return a;
    return cg_str(g, "%s + %s", bracketed(g, a, A_SUM), bracketed(g, b, A_SUM));
}

/* Indices as values: the text above, with where it lies (cg_range.c) where
 * both sides say, so that an element of an iota read through views (a group
 * of a block of a split) lies where its index does. */
cg_value cg_index_value(cg *g, const char *c) { return cg_scalar(st_type_scalar(g->cx, ST_I64), c); }

static cg_value index_const(cg *g, int64_t c) {
    return cg_ranged(cg_index_value(g, cg_str(g, "%lldL", (long long)c)), c, st_size_const(g->cx, c + 1));
}

static cg_value index_times(cg *g, const cg_value *i, const st_size *stride) {
    cg_value r = cg_index_value(g, cg_str(g, "(%s)", times(g, i->c, stride)));
    int64_t c;
    if (st_size_is_const(stride, &c) && c >= 0) {
        cg_value k = index_const(g, c);
        cg_range_binop(g, &r, ST_OP_MUL, i, &k);
    }
    return r;
}

static cg_value index_plus(cg *g, const cg_value *a, const cg_value *b) {
    if (is_zero(a->c) && !a->hi) return *b; /* "0": a drop's or take's start */
    if (is_zero(b->c) && !b->hi) return *a;
    cg_value r = cg_index_value(g, plus(g, a->c, b->c));
    cg_range_binop(g, &r, ST_OP_ADD, a, b);
    return r;
}

/* i / k and i % k, the row and the column of a join */
static cg_value index_divmod(cg *g, const cg_value *i, const st_size *k, bool div) {
    cg_value r = cg_index_value(g, cg_str(g, div ? "(%s) / %s" : "(%s) %% %s", i->c, cg_size(g, k)));
    int64_t c;
    if (st_size_is_const(k, &c) && c > 0) {
        cg_value kv = index_const(g, c);
        cg_range_binop(g, &r, div ? ST_OP_DIV : ST_OP_MOD, i, &kv);
    }
    return r;
}

static const st_size *size_mul(cg *g, const st_size *a, const st_size *b) {
    st_err e = {0};
    const st_size *r = st_size_mul(g->cx, a, b, &e);
    if (!r) {
        cg_fail(g, NULL, "%s", e.message);
        return a;
    }
    return r;
}

static const st_type *array_type(cg *g, const st_size *n, const st_type *elem) {
    const st_type *t = st_type_array(g->cx, n, elem);
    if (!t) cg_fail(g, NULL, "out of memory");
    return t ? t : elem;
}

const st_type *cg_component_type(cg *g, const st_type *t, uint32_t k) {
    if (t->kind == ST_TYPE_ARRAY) return array_type(g, t->size, cg_component_type(g, t->elem, k));
    return t->kind == ST_TYPE_TUPLE && k < t->n ? t->items[k] : t;
}

static cg_view *new_view(cg *g, cg_view_kind kind, const st_type *t) {
    cg_view *v = cg_alloc(g, sizeof *v);
    if (!v) {
        static const cg_view dummy;
        return (cg_view *)&dummy; /* never written: g->failed stops the run */
    }
    v->kind = kind;
    v->type = t;
    return v;
}

cg_value cg_array(const st_type *t, const cg_view *v) {
    return (cg_value){.kind = CG_ARRAY, .type = t, .view = v};
}

const st_size *cg_length(const cg_value *arr) { return arr->type->size; }

/* ---- memory ---- */

const cg_view *cg_view_mem(cg *g, const st_type *t, const cg_mem *m) {
    cg_view *v = new_view(g, CG_V_MEM, t);
    if (v->type == t) v->mem = *m;
    return v;
}

static const char *mem_read(cg *g, const cg_mem *m) {
    if (m->buffer >= 0) cg_use_buffer(g, m->buffer, false);
    const char *at = cg_str(g, "%s[%s]", m->base, m->offset);
    return m->kind == ST_BOOL ? cg_str(g, "(%s != 0)", at) : at;
}

static cg_mem mem_index(cg *g, const cg_mem *m, const char *i) {
    cg_mem r = *m;
    r.offset = plus(g, m->offset, times(g, i, m->strides[0]));
    r.rank = m->rank - 1;
    memmove(r.dims, m->dims + 1, r.rank * sizeof r.dims[0]);
    memmove(r.strides, m->strides + 1, r.rank * sizeof r.strides[0]);
    return r;
}

static cg_value mem_value(cg *g, const st_type *t, const cg_mem *m) {
    if (m->rank == 0) return cg_scalar(t, mem_read(g, m));
    return cg_array(t, cg_view_mem(g, t, m));
}

/* ---- places ---- */

cg_value cg_value_of_place(cg *g, const st_type *t, const cg_place *p) {
    if (!p->tuple) return mem_value(g, t, &p->mem);
    cg_value *items = cg_alloc(g, p->n * sizeof *items);
    if (!items) return cg_scalar(t, "0");
    for (uint32_t i = 0; i < p->n; i++) items[i] = cg_value_of_place(g, cg_component_type(g, t, i), &p->items[i]);
    if (t->kind == ST_TYPE_TUPLE) return (cg_value){.kind = CG_TUPLE, .type = t, .n = p->n, .items = items};
    return cg_zip(g, t, p->n, items);
}

/* Leaves in the order of st_value_leaves: a tuple's components in turn,
 * an array of tuples as one array per component. */
static bool place_build(cg *g, const st_type *t, cg_space space, const char *base, uint32_t *leaf,
                        cg_place *out) {
    uint32_t rank = 0;
    const st_type *e = t;
    const st_size *dims[CG_MAX_RANK];
    while (e->kind == ST_TYPE_ARRAY) {
        if (rank == CG_MAX_RANK) return cg_fail(g, NULL, "arrays nested deeper than %d", CG_MAX_RANK);
        dims[rank++] = e->size;
        e = e->elem;
    }
    if (e->kind == ST_TYPE_TUPLE) {
        out->tuple = true;
        out->n = e->n;
        cg_place *items = cg_alloc(g, e->n * sizeof *items);
        if (!items) return false;
        out->items = items;
        for (uint32_t i = 0; i < e->n; i++)
            if (!place_build(g, cg_component_type(g, t, i), space, base, leaf, &items[i])) return false;
        return true;
    }
    if (e->kind != ST_TYPE_SCALAR) return cg_fail(g, NULL, "a function cannot be stored");
    cg_mem *m = &out->mem;
    m->base = *leaf == 0 ? base : cg_str(g, "%s_%u", base, *leaf);
    (*leaf)++;
    m->buffer = -1;
    m->space = space;
    m->kind = e->scalar;
    m->offset = "0";
    m->rank = rank;
    const st_size *stride = st_size_const(g->cx, 1);
    for (uint32_t i = rank; i-- > 0;) {
        m->dims[i] = dims[i];
        m->strides[i] = stride;
        stride = size_mul(g, stride, dims[i]);
    }
    return true;
}

const st_size *cg_mem_elements(cg *g, const cg_mem *m) {
    const st_size *count = st_size_const(g->cx, 1);
    for (uint32_t i = 0; i < m->rank; i++) count = size_mul(g, count, m->dims[i]);
    return count;
}

const cg_place *cg_place_new(cg *g, const st_type *t, cg_space space, const char *base) {
    cg_place *p = cg_alloc(g, sizeof *p);
    uint32_t leaf = 0;
    if (!p || !place_build(g, t, space, base, &leaf, p)) return NULL;
    return p;
}

static cg_place *place_copy(cg *g, const cg_place *p) {
    cg_place *r = cg_alloc(g, sizeof *r);
    if (!r) return NULL;
    *r = *p;
    if (p->tuple) {
        cg_place *items = cg_alloc(g, p->n * sizeof *items);
        if (!items) return NULL;
        memcpy(items, p->items, p->n * sizeof *items);
        r->items = items;
    }
    return r;
}

const cg_place *cg_place_index(cg *g, const cg_place *p, const char *i) {
    cg_place *r = place_copy(g, p);
    if (!r) return p;
    if (!p->tuple) {
        r->mem = mem_index(g, &p->mem, i);
        return r;
    }
    for (uint32_t k = 0; k < p->n; k++) ((cg_place *)r->items)[k] = *cg_place_index(g, &p->items[k], i);
    return r;
}

static bool mem_split(cg *g, cg_mem *m, const st_size *inner) {
    if (m->rank == 0 || m->rank == CG_MAX_RANK) return false;
    st_err e = {0};
    const st_size *outer = st_size_div(g->cx, m->dims[0], inner, &e);
    if (!outer) return false;
    memmove(m->dims + 1, m->dims, m->rank * sizeof m->dims[0]);
    memmove(m->strides + 1, m->strides, m->rank * sizeof m->strides[0]);
    m->rank++;
    m->dims[0] = outer;
    m->dims[1] = inner;
    m->strides[0] = size_mul(g, inner, m->strides[1]);
    return true;
}

/* [a][b] with stride0 = b·stride1 is [a·b] with stride1; otherwise the
 * rows are not one after the other and a join must be a view. */
static bool mem_join(cg *g, cg_mem *m) {
    if (m->rank < 2 || size_mul(g, m->dims[1], m->strides[1]) != m->strides[0]) return false;
    m->dims[1] = size_mul(g, m->dims[0], m->dims[1]);
    m->rank--;
    memmove(m->dims, m->dims + 1, m->rank * sizeof m->dims[0]);
    memmove(m->strides, m->strides + 1, m->rank * sizeof m->strides[0]);
    return true;
}

static void mem_transpose(cg_mem *m) {
    const st_size *d = m->dims[0], *s = m->strides[0];
    m->dims[0] = m->dims[1];
    m->strides[0] = m->strides[1];
    m->dims[1] = d;
    m->strides[1] = s;
}

const cg_place *cg_place_split(cg *g, const cg_place *p, const st_size *inner) {
    cg_place *r = place_copy(g, p);
    if (!r) return p;
    if (!p->tuple) {
        if (!mem_split(g, &r->mem, inner)) cg_fail(g, NULL, "cannot split a place");
        return r;
    }
    for (uint32_t k = 0; k < p->n; k++) ((cg_place *)r->items)[k] = *cg_place_split(g, &p->items[k], inner);
    return r;
}

const cg_place *cg_place_join(cg *g, const cg_place *p) {
    cg_place *r = place_copy(g, p);
    if (!r) return NULL;
    if (!p->tuple) return mem_join(g, &r->mem) ? r : NULL;
    for (uint32_t k = 0; k < p->n; k++) {
        const cg_place *item = cg_place_join(g, &p->items[k]);
        if (!item) return NULL;
        ((cg_place *)r->items)[k] = *item;
    }
    return r;
}

const cg_place *cg_place_transpose(cg *g, const cg_place *p) {
    cg_place *r = place_copy(g, p);
    if (!r) return p;
    if (!p->tuple) {
        if (r->mem.rank >= 2) mem_transpose(&r->mem);
        return r;
    }
    for (uint32_t k = 0; k < p->n; k++) ((cg_place *)r->items)[k] = *cg_place_transpose(g, &p->items[k]);
    return r;
}

/* ---- views ---- */

static cg_value view_index(cg *g, const cg_view *v, cg_value i);

/* Both sides are generated and one is chosen, so that the element stays an
 * expression; each side's index is kept inside its own array (a side that
 * is a computed view may read memory in statements of its own). A side
 * that needs statements (a checked read, a computed view) runs only when
 * it is chosen: the other side's element 0 may not exist (an empty tail),
 * and its check would report a read the program never makes. */
static cg_value concat_index(cg *g, const cg_view *v, const st_type *elem, const char *i) {
    const char *a = cg_size(g, v->k);
    const char *first = cg_str(g, "((%s) < %s)", i, a);
    st_buf saved = cg_capture_begin(g);
    g->indent++;
    cg_value x = view_index(g, v->items[0], cg_index_value(g, cg_str(g, "(%s ? (%s) : 0)", first, i)));
    st_buf tx = cg_capture_end(g, saved);
    saved = cg_capture_begin(g);
    cg_value y = view_index(g, v->items[1], cg_index_value(g, cg_str(g, "(%s ? 0 : (%s) - %s)", first, i, a)));
    g->indent--;
    st_buf ty = cg_capture_end(g, saved);
    if (x.kind == CG_ARRAY || y.kind == CG_ARRAY) {
        st_buf_free(&tx);
        st_buf_free(&ty);
        cg_fail(g, NULL, "concat of arrays whose elements are arrays: only scalars and tuples of them can be chosen "
                         "element by element");
        return x;
    }
    return cg_choose(g, first, elem, &x, &tx, &y, &ty);
}

cg_value cg_index_at(cg *g, const cg_value *arr, cg_value i) {
    if (arr->kind != CG_ARRAY || !arr->view) {
        cg_fail(g, NULL, "indexing a value that is not an array");
        return *arr;
    }
    return view_index(g, arr->view, i);
}

cg_value cg_index(cg *g, const cg_value *arr, const char *i) { return cg_index_at(g, arr, cg_index_value(g, i)); }

cg_value cg_index_in(cg *g, const cg_value *arr, const char *i) {
    const st_size *n = arr->kind == CG_ARRAY ? cg_length(arr) : NULL;
    cg_value at = cg_index_value(g, i);
    return cg_index_at(g, arr, n ? cg_ranged(at, 0, n) : at);
}

static cg_value view_index(cg *g, const cg_view *v, cg_value i) {
    const st_type *elem = v->type->kind == ST_TYPE_ARRAY ? v->type->elem : v->type;
    switch (v->kind) {
    case CG_V_MEM: {
        cg_mem m = mem_index(g, &v->mem, i.c);
        return mem_value(g, elem, &m);
    }
    case CG_V_ZIP: {
        cg_value *items = cg_alloc(g, v->n * sizeof *items);
        if (!items) return cg_scalar(elem, "0");
        for (uint32_t k = 0; k < v->n; k++) items[k] = view_index(g, v->items[k], i);
        if (elem->kind == ST_TYPE_TUPLE) return (cg_value){.kind = CG_TUPLE, .type = elem, .n = v->n, .items = items};
        return cg_zip(g, elem, v->n, items);
    }
    case CG_V_SHIFT: return view_index(g, v->inner, index_plus(g, &v->start, &i));
    case CG_V_JOIN: {
        cg_value row = view_index(g, v->inner, index_divmod(g, &i, v->k, true));
        return cg_index_at(g, &row, index_divmod(g, &i, v->k, false));
    }
    case CG_V_SPLIT: {
        cg_view *s = new_view(g, CG_V_SHIFT, elem);
        s->inner = v->inner;
        s->start = index_times(g, &i, v->k);
        return cg_array(elem, s);
    }
    case CG_V_TRANSPOSE: {
        cg_view *c = new_view(g, CG_V_COLUMN, elem);
        c->inner = v->inner;
        c->start = i;
        return cg_array(elem, c);
    }
    case CG_V_COLUMN: {
        cg_value row = view_index(g, v->inner, i);
        return cg_index_at(g, &row, v->start);
    }
    case CG_V_IOTA: /* i is an index of the iota: it lies in [0, length), and where i does */
        return cg_range_index(g, cg_scalar(elem, cg_str(g, "((long)(%s))", i.c)), &i, v->type->size);
    case CG_V_REPLICATE: return v->elem;
    case CG_V_MAP: {
        cg_value x = view_index(g, v->inner, i);
        return cg_apply(g, v->fn, 1, &x, v->env);
    }
    case CG_V_CONCAT: return concat_index(g, v, elem, i.c);
    }
    return cg_scalar(elem, "0");
}

/* Each view constructor distributes over a zip, so a zip stays outermost. */
static cg_value zip_map(cg *g, const st_type *t, const cg_value *arr,
                        cg_value (*fn)(cg *, const st_type *, const cg_value *)) {
    const cg_view *z = arr->view;
    cg_value *items = cg_alloc(g, z->n * sizeof *items);
    if (!items) return *arr;
    for (uint32_t k = 0; k < z->n; k++) {
        cg_value item = cg_array(z->items[k]->type, z->items[k]);
        items[k] = fn(g, cg_component_type(g, t, k), &item);
    }
    return cg_zip(g, t, z->n, items);
}

cg_value cg_split(cg *g, const st_type *t, const st_size *k, const cg_value *arr) {
    if (g->failed || arr->kind != CG_ARRAY || !arr->view) return *arr; /* after an error: anything */
    const cg_view *v = arr->view;
    if (v->kind == CG_V_ZIP) {
        cg_value *items = cg_alloc(g, v->n * sizeof *items);
        if (!items) return *arr;
        for (uint32_t j = 0; j < v->n; j++) {
            cg_value item = cg_array(v->items[j]->type, v->items[j]);
            items[j] = cg_split(g, cg_component_type(g, t, j), k, &item);
        }
        return cg_zip(g, t, v->n, items);
    }
    if (v->kind == CG_V_MEM) {
        cg_mem m = v->mem;
        if (mem_split(g, &m, k)) return cg_array(t, cg_view_mem(g, t, &m));
    }
    cg_view *s = new_view(g, CG_V_SPLIT, t);
    s->inner = v;
    s->k = k;
    return cg_array(t, s);
}

cg_value cg_join(cg *g, const st_type *t, const cg_value *arr) {
    if (g->failed || arr->kind != CG_ARRAY || !arr->view) return *arr; /* after an error: anything */
    const cg_view *v = arr->view;
    if (v->kind == CG_V_ZIP) return zip_map(g, t, arr, cg_join);
    if (v->kind == CG_V_MEM) {
        cg_mem m = v->mem;
        if (mem_join(g, &m)) return cg_array(t, cg_view_mem(g, t, &m));
    }
    if (v->kind == CG_V_SPLIT) return cg_array(t, v->inner); /* join(split(k, x)) is x */
    cg_view *j = new_view(g, CG_V_JOIN, t);
    j->inner = v;
    j->k = arr->type->elem->size;
    return cg_array(t, j);
}

cg_value cg_transpose(cg *g, const st_type *t, const cg_value *arr) {
    if (g->failed || arr->kind != CG_ARRAY || !arr->view) return *arr; /* after an error: anything */
    const cg_view *v = arr->view;
    if (v->kind == CG_V_ZIP) return zip_map(g, t, arr, cg_transpose);
    if (v->kind == CG_V_MEM && v->mem.rank >= 2) {
        cg_mem m = v->mem;
        mem_transpose(&m);
        return cg_array(t, cg_view_mem(g, t, &m));
    }
    if (v->kind == CG_V_TRANSPOSE) return cg_array(t, v->inner);
    cg_view *r = new_view(g, CG_V_TRANSPOSE, t);
    r->inner = v;
    return cg_array(t, r);
}

cg_value cg_zip(cg *g, const st_type *t, uint32_t n, const cg_value *arrs) {
    cg_view *z = new_view(g, CG_V_ZIP, t);
    for (uint32_t k = 0; k < n; k++)
        if (arrs[k].kind != CG_ARRAY || !arrs[k].view) {
            cg_fail(g, NULL, "zip of a value that is not an array");
            return arrs[k];
        }
    const cg_view **items = cg_alloc(g, n * sizeof *items);
    if (!items) return cg_array(t, z);
    for (uint32_t k = 0; k < n; k++) items[k] = arrs[k].view;
    z->n = n;
    z->items = items;
    return cg_array(t, z);
}

/* Component k of an array of tuples that is no zip (an index map making
 * tuples, or a view of one): the map `x => x.k` over it, read where it is
 * read, as the array itself would be. */
static cg_value component_view(cg *g, const st_type *t, const cg_value *arr, uint32_t k) {
    st_err e = {0};
    const char *name = st_fresh_name(g->cx, "x");
    const st_node *x = name ? st_var(g->cx, name, arr->type->elem, NULL) : NULL;
    const st_node *body = x ? st_proj(g->cx, x, k, &e) : NULL;
    const st_node *fn = body ? st_lambda(g->cx, 1, &x, body, &e) : NULL;
    if (!fn) {
        cg_fail(g, NULL, "%s", e.message[0] ? e.message : "out of memory");
        return *arr;
    }
    return cg_map_view(g, t, fn, NULL, arr);
}

cg_value cg_unzip(cg *g, const st_type *t, const cg_value *arr) {
    if (g->failed || arr->kind != CG_ARRAY || !arr->view) return *arr; /* after an error: anything */
    const cg_view *v = arr->view;
    if (v->kind != CG_V_ZIP && (t->kind != ST_TYPE_TUPLE || arr->type->elem->kind != ST_TYPE_TUPLE)) {
        cg_fail(g, NULL, "unzip of an array whose elements are not tuples");
        return *arr;
    }
    uint32_t n = v->kind == CG_V_ZIP ? v->n : t->n;
    cg_value *items = cg_alloc(g, n * sizeof *items);
    if (!items) return *arr;
    for (uint32_t k = 0; k < n; k++)
        items[k] = v->kind == CG_V_ZIP ? cg_array(t->items[k], v->items[k]) : component_view(g, t->items[k], arr, k);
    return (cg_value){.kind = CG_TUPLE, .type = t, .n = n, .items = items};
}

/* A prefix of memory is that memory with a shorter first dimension, so an
 * output seen through take is still the output's memory (cg_same_place). */
cg_value cg_take(cg *g, const st_type *t, const cg_value *arr) {
    return cg_drop(g, t, "0", arr);
}

cg_value cg_drop(cg *g, const st_type *t, const char *start, const cg_value *arr) {
    if (g->failed || arr->kind != CG_ARRAY || !arr->view) return *arr; /* after an error: anything */
    const cg_view *v = arr->view;
    start = is_zero(start) ? "0" : cg_str(g, "(%s)", start);
    if (v->kind == CG_V_ZIP) {
        cg_value *items = cg_alloc(g, v->n * sizeof *items);
        if (!items) return *arr;
        for (uint32_t k = 0; k < v->n; k++) {
            cg_value item = cg_array(v->items[k]->type, v->items[k]);
            items[k] = cg_drop(g, cg_component_type(g, t, k), start, &item);
        }
        return cg_zip(g, t, v->n, items);
    }
    if (v->kind == CG_V_MEM && v->mem.rank >= 1) {
        cg_mem m = v->mem;
        m.offset = plus(g, m.offset, is_zero(start) ? "0" : times(g, start, m.strides[0]));
        m.dims[0] = t->size;
        return cg_array(t, cg_view_mem(g, t, &m));
    }
    cg_view *s = new_view(g, CG_V_SHIFT, t);
    s->inner = v;
    s->start = cg_index_value(g, start);
    return cg_array(t, s);
}

cg_value cg_concat(cg *g, const st_type *t, const cg_value *a, const cg_value *b) {
    if (g->failed || a->kind != CG_ARRAY || !a->view || b->kind != CG_ARRAY || !b->view) return *a;
    if (a->view->kind == CG_V_ZIP && b->view->kind == CG_V_ZIP && a->view->n == b->view->n) {
        cg_value *items = cg_alloc(g, a->view->n * sizeof *items);
        if (!items) return *a;
        for (uint32_t k = 0; k < a->view->n; k++) {
            cg_value x = cg_array(a->view->items[k]->type, a->view->items[k]);
            cg_value y = cg_array(b->view->items[k]->type, b->view->items[k]);
            items[k] = cg_concat(g, cg_component_type(g, t, k), &x, &y);
        }
        return cg_zip(g, t, a->view->n, items);
    }
    cg_view *c = new_view(g, CG_V_CONCAT, t);
    const cg_view **items = cg_alloc(g, 2 * sizeof *items);
    if (!items) return *a;
    items[0] = a->view;
    items[1] = b->view;
    c->n = 2;
    c->items = items;
    c->k = cg_length(a);
    return cg_array(t, c);
}

cg_value cg_iota(cg *g, const st_type *t) { return cg_array(t, new_view(g, CG_V_IOTA, t)); }

cg_value cg_map_view(cg *g, const st_type *t, const st_node *fn, const cg_binding *env, const cg_value *xs) {
    if (g->failed || xs->kind != CG_ARRAY || !xs->view) return *xs; /* after an error: anything */
    cg_view *m = new_view(g, CG_V_MAP, t);
    m->inner = xs->view;
    m->fn = fn;
    m->env = env;
    return cg_array(t, m);
}

cg_value cg_replicate(cg *g, const st_type *t, const cg_value *elem) {
    if (elem->kind == CG_TUPLE) {
        cg_value *items = cg_alloc(g, elem->n * sizeof *items);
        if (!items) return *elem;
        for (uint32_t k = 0; k < elem->n; k++) items[k] = cg_replicate(g, cg_component_type(g, t, k), &elem->items[k]);
        return cg_zip(g, t, elem->n, items);
    }
    if (elem->kind == CG_ARRAY && elem->view->kind == CG_V_ZIP) {
        const cg_view *z = elem->view;
        cg_value *items = cg_alloc(g, z->n * sizeof *items);
        if (!items) return *elem;
        for (uint32_t k = 0; k < z->n; k++) {
            cg_value item = cg_array(z->items[k]->type, z->items[k]);
            items[k] = cg_replicate(g, cg_component_type(g, t, k), &item);
        }
        return cg_zip(g, t, z->n, items);
    }
    cg_view *r = new_view(g, CG_V_REPLICATE, t);
    r->elem = *elem;
    return cg_array(t, r);
}


/* ---- reading and writing ---- */

static bool same_mem(const cg_mem *a, const cg_mem *b) {
    if (strcmp(a->base, b->base) || strcmp(a->offset, b->offset) || a->rank != b->rank) return false;
    for (uint32_t i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i] || a->strides[i] != b->strides[i]) return false;
    return true;
}

bool cg_same_place(const cg_value *v, const cg_place *p) {
    if (v->kind != CG_ARRAY) return false;
    const cg_view *w = v->view;
    if (!p->tuple) return w->kind == CG_V_MEM && same_mem(&w->mem, &p->mem);
    if (w->kind != CG_V_ZIP || w->n != p->n) return false;
    for (uint32_t k = 0; k < p->n; k++) {
        cg_value item = cg_array(w->items[k]->type, w->items[k]);
        if (!cg_same_place(&item, &p->items[k])) return false;
    }
    return true;
}

void cg_store(cg *g, const cg_place *p, const cg_value *v) {
    if (g->failed) return;
    switch (v->kind) {
    case CG_SCALAR:
        if (p->tuple || p->mem.rank) {
            cg_fail(g, NULL, "a scalar stored to an array");
            return;
        }
        if (p->mem.buffer >= 0) cg_use_buffer(g, p->mem.buffer, true);
        cg_line(g, p->mem.kind == ST_BOOL ? "%s[%s] = (uchar)%s;" : "%s[%s] = %s;", p->mem.base, p->mem.offset, v->c);
        return;
    case CG_TUPLE:
        if (!p->tuple || p->n != v->n) {
            cg_fail(g, NULL, "a tuple stored to a place of another shape");
            return;
        }
        for (uint32_t k = 0; k < v->n; k++) cg_store(g, &p->items[k], &v->items[k]);
        return;
    case CG_ARRAY: {
        if (cg_same_place(v, p)) return;
        const char *j = cg_name(g, "j");
        cg_line(g, "for (long %s = 0; %s < %s; %s++) {", j, j, cg_size(g, cg_length(v)), j);
        g->indent++;
        cg_value e = cg_index_in(g, v, j);
        cg_store(g, cg_place_index(g, p, j), &e);
        g->indent--;
        cg_line(g, "}");
        return;
    }
    }
}

static bool simple(const char *c) {
    for (const char *s = c; *s; s++)
        if (!(*s == '_' || *s == '.' || (*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
            return false;
    return true;
}

cg_value cg_materialize(cg *g, const cg_value *v) {
    if (v->kind == CG_SCALAR) {
        if (simple(v->c)) return *v;
        const char *x = cg_name(g, "x");
        cg_line(g, "%s %s = %s;", cg_ctype(g, v->type), x, v->c);
        return cg_renamed(*v, x);
    }
    if (v->kind == CG_TUPLE) {
        cg_value *items = cg_alloc(g, v->n * sizeof *items);
        if (!items) return *v;
        for (uint32_t k = 0; k < v->n; k++) items[k] = cg_materialize(g, &v->items[k]);
        return (cg_value){.kind = CG_TUPLE, .type = v->type, .n = v->n, .items = items};
    }
    return *v;
}

/* Every component in a fresh variable, so that assigning a tuple
 * accumulator from a value that reads it (a swap, say) reads the old one. */
static cg_value snapshot(cg *g, const cg_value *v) {
    if (v->kind == CG_SCALAR) {
        const char *x = cg_name(g, "x");
        cg_line(g, "%s %s = %s;", cg_ctype(g, v->type), x, v->c);
        return cg_scalar(v->type, x);
    }
    cg_value *items = cg_alloc(g, v->n * sizeof *items);
    if (!items) return *v;
    for (uint32_t k = 0; k < v->n; k++) items[k] = snapshot(g, &v->items[k]);
    return (cg_value){.kind = CG_TUPLE, .type = v->type, .n = v->n, .items = items};
}

static void assign(cg *g, const cg_value *to, const cg_value *v) {
    if (to->kind == CG_SCALAR && v->kind == CG_SCALAR) {
        if (strcmp(to->c, v->c)) cg_line(g, "%s = %s;", to->c, v->c);
    } else if (to->kind == CG_TUPLE && v->kind == CG_TUPLE && to->n == v->n) {
        for (uint32_t k = 0; k < v->n; k++) assign(g, &to->items[k], &v->items[k]);
    } else {
        cg_fail(g, NULL, "an accumulator that is not a scalar or a tuple of scalars");
    }
}

void cg_assign(cg *g, const cg_value *to, const cg_value *v) {
    if (v->kind == CG_TUPLE) {
        cg_value now = snapshot(g, v);
        assign(g, to, &now);
    } else {
        assign(g, to, v);
    }
}

/* Fresh variables holding v: an accumulator to assign to. */
cg_value cg_variables(cg *g, const cg_value *v) { return snapshot(g, v); }

void cg_exchange(cg *g, const cg_place *p, const st_type *t, const char *var, bool load) {
    if (p->tuple) {
        for (uint32_t k = 0; k < p->n; k++) cg_exchange(g, &p->items[k], t->items[k], cg_str(g, "%s.f%u", var, k), load);
        return;
    }
    const cg_mem *m = &p->mem;
    if (m->buffer >= 0) cg_use_buffer(g, m->buffer, !load);
    const char *space = m->space == CG_GLOBAL ? "__global" : m->space == CG_LOCAL ? "__local" : "__private";
    const char *at = cg_str(g, "((volatile %s %s *)%s)[%s]", space, cg_mem_ctype(m->kind), m->base, m->offset);
    if (load) cg_line(g, "%s = %s;", var, m->kind == ST_BOOL ? cg_str(g, "(%s != 0)", at) : at);
    else cg_line(g, "%s = %s;", at, var);
}
