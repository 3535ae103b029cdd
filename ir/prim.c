/* ir/prim.c — the primitive table: names, argument forms, how they print.
 * Adding a primitive means a row here, its typing rule in node.c and its
 * meaning in interp.c. */
#include "ir.h"

#include <stdio.h>
#include <string.h>

/* Each form is one letter per argument: 'd' data, 'n' neutral, 'f' function.
 * scan and reduce take an optional fold (and scan a post-function) between
 * the operator and the neutral element; scatter takes its indices and values
 * as two arrays or as one array of pairs. */
static const st_prim_info table[ST_PRIM_COUNT] = {
    [ST_PRIM_MAP] = {"map", {"fd"}, false, true, false},
    [ST_PRIM_REDUCE] = {"reduce", {"fnd", "ffnd"}, false, true, false},
    [ST_PRIM_SCAN] = {"scan", {"fnd", "ffnd", "fffnd"}, false, true, false},
    [ST_PRIM_SPLIT] = {"split", {"dd"}, false, true, false},
    [ST_PRIM_JOIN] = {"join", {"d"}, false, true, false},
    [ST_PRIM_ZIP] = {"zip", {"dd"}, true, false, false},
    [ST_PRIM_UNZIP] = {"unzip", {"d"}, false, true, false},
    [ST_PRIM_IOTA] = {"iota", {"d"}, false, false, false},
    [ST_PRIM_REPLICATE] = {"replicate", {"dd"}, false, false, false},
    [ST_PRIM_TRANSPOSE] = {"transpose", {"d"}, false, true, false},
    [ST_PRIM_SCATTER] = {"scatter", {"ddd", "dd"}, false, false, false},
    [ST_PRIM_REDUCE_BY_INDEX] = {"reduce_by_index", {"dfndd"}, false, false, false},
    [ST_PRIM_ITERATE] = {"iterate", {"dfd"}, false, true, false},
    [ST_PRIM_GET] = {"get", {"dd"}, false, true, false},
    [ST_PRIM_MAP_SEQ] = {"mapSeq", {"fd"}, false, true, true},
    [ST_PRIM_REDUCE_SEQ] = {"reduceSeq", {"fnd"}, false, true, true},
    [ST_PRIM_SCAN_SEQ] = {"scanSeq", {"fnd"}, false, true, true},
    [ST_PRIM_MAP_GLB] = {"mapGlb", {"fd"}, false, true, true},
    [ST_PRIM_MAP_WRG] = {"mapWrg", {"fd"}, false, true, true},
    [ST_PRIM_MAP_LCL] = {"mapLcl", {"fd"}, false, true, true},
    [ST_PRIM_TO_GLOBAL] = {"toGlobal", {"d"}, false, true, true},
    [ST_PRIM_TO_LOCAL] = {"toLocal", {"d"}, false, true, true},
    [ST_PRIM_TO_PRIVATE] = {"toPrivate", {"d"}, false, true, true},
    [ST_PRIM_SCAN_LOOKBACK] = {"scanLookback", {"ddddfnd", "ddddffnd", "ddddfffnd"}, false, true, true},
    [ST_PRIM_SUBHISTOGRAMS] = {"subhistograms", {"ddddfndd"}, false, false, true},
    [ST_PRIM_REDUCE_BY_INDEX_2D] = {"reduce_by_index_2d", {"dfndd"}, false, false, false},
    [ST_PRIM_SCATTER_2D] = {"scatter_2d", {"ddd"}, false, false, false},
    [ST_PRIM_EXSCAN] = {"exscan", {"fnd"}, false, true, false},
    [ST_PRIM_LOOP] = {"loop", {"dfd"}, false, false, false},
    [ST_PRIM_WHILE] = {"while", {"ffd"}, false, false, false},
    [ST_PRIM_FILTER] = {"filter", {"fd"}, false, true, false},
    [ST_PRIM_PARTITION] = {"partition", {"fd"}, false, true, false},
    [ST_PRIM_TAKE] = {"take", {"dd"}, false, false, false},
    [ST_PRIM_DROP] = {"drop", {"dd"}, false, false, false},
    [ST_PRIM_CONCAT] = {"concat", {"dd"}, false, false, false},
    [ST_PRIM_SCAN_TOTAL] = {"scanTotal", {"d"}, false, false, true},
    [ST_PRIM_SCRATCH] = {"scratch", {"dd"}, false, false, true},
    [ST_PRIM_SCATTER_DISTINCT] = {"scatterDistinct", {"ddd", "dd"}, false, false, true},
};

const st_prim_info *st_prim_get(st_prim p) { return &table[p]; }

bool st_prim_from_name(const char *name, size_t len, st_prim *out) {
    for (int p = 0; p < ST_PRIM_COUNT; p++)
        if (strlen(table[p].name) == len && memcmp(table[p].name, name, len) == 0)
            return (*out = (st_prim)p), true;
    return false;
}

/* The form of p with nargs arguments, or NULL. */
static const char *form(st_prim p, uint32_t nargs) {
    for (int i = 0; i < 3 && table[p].forms[i]; i++) {
        size_t len = strlen(table[p].forms[i]);
        if (len == nargs || (table[p].variadic && nargs >= len)) return table[p].forms[i];
    }
    return NULL;
}

bool st_prim_takes(st_prim p, uint32_t nargs) { return form(p, nargs) != NULL && nargs <= 64; }

void st_prim_describe_arity(st_prim p, char *buf, size_t cap) {
    size_t len = 0, arity[3];
    int n = 0;
    while (n < 3 && table[p].forms[n]) {
        arity[n] = strlen(table[p].forms[n]);
        n++;
    }
    for (int i = 1; i < n; i++) /* ascending: "2 or 3" */
        for (int j = i; j > 0 && arity[j] < arity[j - 1]; j--) {
            size_t t = arity[j];
            arity[j] = arity[j - 1];
            arity[j - 1] = t;
        }
    for (int i = 0; i < n && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%zu", i == 0 ? "" : i == n - 1 ? " or " : ", ", arity[i]);
    if (table[p].variadic && len < cap) snprintf(buf + len, cap - len, " or more");
}

st_arg_role st_prim_arg_role(st_prim p, int arg, uint32_t nargs) {
    const char *f = form(p, nargs);
    if (!f) return ST_ARG_DATA;
    size_t n = strlen(f);
    char r = (size_t)arg < n ? f[arg] : f[n - 1]; /* a variadic form repeats its last */
    return r == 'f' ? ST_ARG_FUN : r == 'n' ? ST_ARG_NEUTRAL : ST_ARG_DATA;
}

st_prim st_prim_after_sizes(st_prim p, uint32_t *nsizes) {
    switch (p) {
    case ST_PRIM_SCAN_LOOKBACK: *nsizes = ST_LOOKBACK_SIZES; return ST_PRIM_SCAN;
    case ST_PRIM_SUBHISTOGRAMS: *nsizes = ST_HIST_SIZES; return ST_PRIM_REDUCE_BY_INDEX;
    default: *nsizes = 0; return p;
    }
}

bool st_prim_makes_kernels(st_prim p) {
    switch (p) {
    case ST_PRIM_SCAN_LOOKBACK: case ST_PRIM_SUBHISTOGRAMS: return true;
    default: return false;
    }
}

bool st_fold_form_of(const st_node *e, st_scan_form *f) {
    if (!e || e->kind != ST_NODE_PRIM) return false;
    uint32_t first = 0;
    switch (e->u.prim) {
    case ST_PRIM_SCAN: case ST_PRIM_REDUCE: break;
    case ST_PRIM_SCAN_SEQ: case ST_PRIM_REDUCE_SEQ:
        if (e->nkids != 3) return false;
        *f = (st_scan_form){NULL, e->kids[0], NULL, e->kids[1], e->kids[2]};
        return true;
    case ST_PRIM_SCAN_LOOKBACK: first = ST_LOOKBACK_SIZES; break;
    default: return false;
    }
    if (e->nkids < first + 3 || e->nkids > first + 5) return false;
    const st_node *const *k = e->kids + first;
    uint32_t n = e->nkids - first;
    *f = (st_scan_form){k[0], n >= 4 ? k[1] : NULL, n == 5 ? k[2] : NULL, k[n - 2], k[n - 1]};
    return true;
}

/* an array anywhere in t */
static bool has_array(const st_type *t) {
    if (t->kind == ST_TYPE_ARRAY) return true;
    for (uint32_t i = 0; t->kind == ST_TYPE_TUPLE && i < t->n; i++)
        if (has_array(t->items[i])) return true;
    return false;
}

bool st_prim_sizes_at_run_time(st_prim p) {
    switch (p) {
    case ST_PRIM_FILTER: case ST_PRIM_PARTITION: case ST_PRIM_TAKE: case ST_PRIM_DROP: case ST_PRIM_CONCAT: return true;
    default: return false;
    }
}

/* Does p, given a whole array, do work over all of it (a map, a fold, a
 * scatter, a filter: kernels when it is at the top), rather than name a
 * part of it (get) or see it another way (zip, take, transpose: views)? */
static bool works_over_arrays(st_prim p) {
    switch (p) {
    case ST_PRIM_MAP: case ST_PRIM_REDUCE: case ST_PRIM_SCAN: case ST_PRIM_EXSCAN: case ST_PRIM_FILTER:
    case ST_PRIM_PARTITION: case ST_PRIM_SCATTER: case ST_PRIM_SCATTER_DISTINCT: case ST_PRIM_SCATTER_2D:
    case ST_PRIM_REDUCE_BY_INDEX: case ST_PRIM_REDUCE_BY_INDEX_2D: case ST_PRIM_CONCAT:
    case ST_PRIM_MAP_GLB: case ST_PRIM_MAP_WRG: case ST_PRIM_SCAN_LOOKBACK: case ST_PRIM_SUBHISTOGRAMS:
    case ST_PRIM_SCAN_TOTAL: case ST_PRIM_MAP_SEQ: case ST_PRIM_REDUCE_SEQ: case ST_PRIM_SCAN_SEQ:
        return true;
    default: return false;
    }
}

static bool turns_work(const st_node *loop);

/* Does e, outside the lambdas in it (whose work is per element), do work
 * over a whole array? A nested loop's turns count: they run in e's. */
static bool whole_array_work(const st_node *e) {
    if (e->kind == ST_NODE_LAMBDA) return false;
    if (e->kind == ST_NODE_PRIM) {
        if (works_over_arrays(e->u.prim))
            for (uint32_t i = 0; i < e->nkids; i++)
                if (e->kids[i]->kind != ST_NODE_LAMBDA && e->kids[i]->type->kind == ST_TYPE_ARRAY) return true;
        if (e->u.prim == ST_PRIM_LOOP || e->u.prim == ST_PRIM_WHILE) return turns_work(e) || whole_array_work(e->kids[2]);
    }
    for (uint32_t i = 0; i < e->nkids; i++)
        if (whole_array_work(e->kids[i])) return true;
    return false;
}

/* Does a loop's count or condition, or its body, work over a whole array? */
static bool turns_work(const st_node *loop) {
    for (uint32_t i = 0; i < 2; i++) {
        const st_node *k = loop->kids[i];
        if (whole_array_work(k->kind == ST_NODE_LAMBDA ? st_lambda_body(k) : k)) return true;
    }
    return false;
}

bool st_is_array_loop(const st_node *e) {
    return e->kind == ST_NODE_PRIM && (e->u.prim == ST_PRIM_LOOP || e->u.prim == ST_PRIM_WHILE) &&
           (has_array(e->type) || turns_work(e));
}

int st_prim_data_arg(st_prim p, uint32_t nargs) {
    switch (p) {
    case ST_PRIM_REDUCE_BY_INDEX: case ST_PRIM_REDUCE_BY_INDEX_2D: return 0;
    case ST_PRIM_SUBHISTOGRAMS: return ST_HIST_SIZES; /* the destination */
    default: return (int)nargs - 1; /* the last: iterate's x, scan's xs, … */
    }
}

static const char *const binop_names[ST_BINOP_COUNT] = {
    "+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||",
    "&", "|", "^", "<<", ">>", "min", "max", "**", "atan2"};

const char *st_binop_name(st_binop op) { return binop_names[op]; }

bool st_binop_is_call(st_binop op) { return op == ST_OP_MIN || op == ST_OP_MAX || op == ST_OP_ATAN2; }

int st_binop_precedence(st_binop op) {
    switch (op) {
    case ST_OP_OR: return 1;
    case ST_OP_AND: return 2;
    case ST_OP_BOR: return 3;
    case ST_OP_BXOR: return 4;
    case ST_OP_BAND: return 5;
    case ST_OP_EQ: case ST_OP_NE: return 6;
    case ST_OP_LT: case ST_OP_LE: case ST_OP_GT: case ST_OP_GE: return 7;
    case ST_OP_SHL: case ST_OP_SHR: return 8;
    case ST_OP_ADD: case ST_OP_SUB: return 9;
    case ST_OP_MUL: case ST_OP_DIV: case ST_OP_MOD: return 10;
    case ST_OP_POW: return 11;
    default: return 0; /* min, max and atan2 are calls */
    }
}
