/* ir/prim.c — the primitive table: one descriptor per primitive (its name,
 * argument forms, how it prints, its properties as columns and its typing
 * rule, which lives with its family in ir/prim_*.c), and the queries that
 * read it. docs/architecture.md ("Adding a primitive") lists the rest. */
#include "prim.h"

#include <stdio.h>
#include <string.h>

/* Each form is one letter per argument: 'd' data, 'n' neutral, 'f' function.
 * scan and reduce take an optional fold (and scan a post-function) between
 * the operator and the neutral element; scatter takes its indices and values
 * as two arrays or as one array of pairs. A column left out is false, none
 * or 0 (ir/prim.h says what each means). */
static const st_prim_desc table[ST_PRIM_COUNT] = {
    [ST_PRIM_MAP] = {.info = {.name = "map", .forms = {"fd"}, .pipeline = true},
        .funs = ST_FUNS_ELEMENT, .whole_array = true, .view = ST_VIEW_INDEX_MAP, .type = st_type_map},
    [ST_PRIM_REDUCE] = {.info = {.name = "reduce", .forms = {"fnd", "ffnd"}, .pipeline = true},
        .fold = ST_FOLD_OP, .funs = ST_FUNS_SCAN, .whole_array = true, .type = st_type_fold},
    [ST_PRIM_SCAN] = {.info = {.name = "scan", .forms = {"fnd", "ffnd", "fffnd"}, .pipeline = true},
        .fold = ST_FOLD_OP, .funs = ST_FUNS_SCAN, .whole_array = true, .type = st_type_fold},
    [ST_PRIM_SPLIT] = {.info = {.name = "split", .forms = {"dd"}, .pipeline = true},
        .view = ST_VIEW_ALWAYS, .type = st_type_split},
    [ST_PRIM_JOIN] = {.info = {.name = "join", .forms = {"d"}, .pipeline = true},
        .view = ST_VIEW_ALWAYS, .type = st_type_join},
    [ST_PRIM_ZIP] = {.info = {.name = "zip", .forms = {"dd"}, .variadic = true},
        .view = ST_VIEW_ALWAYS, .type = st_type_zip},
    [ST_PRIM_UNZIP] = {.info = {.name = "unzip", .forms = {"d"}, .pipeline = true},
        .view = ST_VIEW_ALWAYS, .type = st_type_unzip},
    [ST_PRIM_IOTA] = {.info = {.name = "iota", .forms = {"d"}},
        .view = ST_VIEW_ALWAYS, .type = st_type_iota},
    [ST_PRIM_REPLICATE] = {.info = {.name = "replicate", .forms = {"dd"}},
        .view = ST_VIEW_ALWAYS, .type = st_type_replicate},
    [ST_PRIM_TRANSPOSE] = {.info = {.name = "transpose", .forms = {"d"}, .pipeline = true},
        .view = ST_VIEW_ALWAYS, .type = st_type_transpose},
    [ST_PRIM_SCATTER] = {.info = {.name = "scatter", .forms = {"ddd", "dd"}},
        .whole_array = true, .type = st_type_scatter},
    [ST_PRIM_REDUCE_BY_INDEX] = {.info = {.name = "reduce_by_index", .forms = {"dfndd"}},
        .dest_first = true, .whole_array = true, .type = st_type_by_index},
    [ST_PRIM_ITERATE] = {.info = {.name = "iterate", .forms = {"dfd"}, .pipeline = true},
        .funs = ST_FUNS_STATE, .type = st_type_iterate},
    [ST_PRIM_GET] = {.info = {.name = "get", .forms = {"dd"}, .pipeline = true},
        .view = ST_VIEW_ALWAYS, .type = st_type_get},
    [ST_PRIM_MAP_SEQ] = {.info = {.name = "mapSeq", .forms = {"fd"}, .pipeline = true, .low_level = true},
        .funs = ST_FUNS_ELEMENT, .whole_array = true, .type = st_type_map},
    [ST_PRIM_REDUCE_SEQ] = {.info = {.name = "reduceSeq", .forms = {"fnd"}, .pipeline = true, .low_level = true},
        .fold = ST_FOLD_SEQ, .funs = ST_FUNS_SEQ_FOLD, .whole_array = true, .type = st_type_fold},
    [ST_PRIM_SCAN_SEQ] = {.info = {.name = "scanSeq", .forms = {"fnd"}, .pipeline = true, .low_level = true},
        .fold = ST_FOLD_SEQ, .funs = ST_FUNS_SEQ_FOLD, .whole_array = true, .type = st_type_fold},
    [ST_PRIM_MAP_GLB] = {.info = {.name = "mapGlb", .forms = {"fd"}, .pipeline = true, .low_level = true},
        .funs = ST_FUNS_ELEMENT, .whole_array = true, .type = st_type_map},
    [ST_PRIM_MAP_WRG] = {.info = {.name = "mapWrg", .forms = {"fd"}, .pipeline = true, .low_level = true},
        .funs = ST_FUNS_ELEMENT, .whole_array = true, .type = st_type_map},
    [ST_PRIM_MAP_LCL] = {.info = {.name = "mapLcl", .forms = {"fd"}, .pipeline = true, .low_level = true},
        .funs = ST_FUNS_ELEMENT, .type = st_type_map},
    [ST_PRIM_TO_GLOBAL] = {.info = {.name = "toGlobal", .forms = {"d"}, .pipeline = true, .low_level = true},
        .view = ST_VIEW_PLACED, .type = st_type_placed},
    [ST_PRIM_TO_LOCAL] = {.info = {.name = "toLocal", .forms = {"d"}, .pipeline = true, .low_level = true},
        .view = ST_VIEW_PLACED, .type = st_type_placed},
    [ST_PRIM_TO_PRIVATE] = {.info = {.name = "toPrivate", .forms = {"d"}, .pipeline = true, .low_level = true},
        .view = ST_VIEW_PLACED, .type = st_type_placed},
    [ST_PRIM_SCAN_LOOKBACK] = {.info = {.name = "scanLookback", .forms = {"ddddfnd", "ddddffnd", "ddddfffnd"}, .pipeline = true, .low_level = true},
        .after = ST_PRIM_SCAN, .nsizes = ST_LOOKBACK_SIZES, .makes_kernels = true, .fold = ST_FOLD_OP, .whole_array = true, .type = st_type_after_sizes},
    [ST_PRIM_SUBHISTOGRAMS] = {.info = {.name = "subhistograms", .forms = {"ddddfndd"}, .low_level = true},
        .after = ST_PRIM_REDUCE_BY_INDEX, .nsizes = ST_HIST_SIZES, .makes_kernels = true, .dest_first = true, .whole_array = true, .type = st_type_after_sizes},
    [ST_PRIM_REDUCE_BY_INDEX_2D] = {.info = {.name = "reduce_by_index_2d", .forms = {"dfndd"}},
        .dest_first = true, .innermost = true, .whole_array = true, .type = st_type_by_index},
    [ST_PRIM_SCATTER_2D] = {.info = {.name = "scatter_2d", .forms = {"ddd"}},
        .whole_array = true, .type = st_type_by_index},
    [ST_PRIM_EXSCAN] = {.info = {.name = "exscan", .forms = {"fnd"}, .pipeline = true},
        .funs = ST_FUNS_SCAN, .whole_array = true, .type = st_type_fold},
    [ST_PRIM_LOOP] = {.info = {.name = "loop", .forms = {"dfd"}},
        .funs = ST_FUNS_COUNTED, .type = st_type_loop},
    [ST_PRIM_WHILE] = {.info = {.name = "while", .forms = {"ffd"}},
        .funs = ST_FUNS_WHILE, .type = st_type_while},
    [ST_PRIM_FILTER] = {.info = {.name = "filter", .forms = {"fd"}, .pipeline = true},
        .funs = ST_FUNS_PREDICATE, .sizes_at_run_time = true, .whole_array = true, .type = st_type_filter},
    [ST_PRIM_PARTITION] = {.info = {.name = "partition", .forms = {"fd"}, .pipeline = true},
        .funs = ST_FUNS_PREDICATE, .sizes_at_run_time = true, .whole_array = true, .type = st_type_filter},
    [ST_PRIM_TAKE] = {.info = {.name = "take", .forms = {"dd"}},
        .sizes_at_run_time = true, .type = st_type_take},
    [ST_PRIM_DROP] = {.info = {.name = "drop", .forms = {"dd"}},
        .sizes_at_run_time = true, .type = st_type_take},
    [ST_PRIM_CONCAT] = {.info = {.name = "concat", .forms = {"dd"}},
        .sizes_at_run_time = true, .whole_array = true, .type = st_type_concat},
    [ST_PRIM_SCAN_TOTAL] = {.info = {.name = "scanTotal", .forms = {"d"}, .low_level = true},
        .whole_array = true, .type = st_type_scan_total},
    [ST_PRIM_SCRATCH] = {.info = {.name = "scratch", .forms = {"dd"}, .low_level = true},
        .view = ST_VIEW_ALWAYS, .type = st_type_replicate},
    [ST_PRIM_SCATTER_DISTINCT] = {.info = {.name = "scatterDistinct", .forms = {"ddd", "dd"}, .low_level = true},
        .whole_array = true, .type = st_type_scatter},
    [ST_PRIM_PARTITION_BY] = {.info = {.name = "partition_by", .forms = {"dfd"}, .pipeline = true},
        .funs = ST_FUNS_ELEMENT, .whole_array = true, .type = st_type_partition_by},
    [ST_PRIM_PARTITION_TILES] = {.info = {.name = "partitionTiles", .forms = {"dddfd"}, .pipeline = true, .low_level = true},
        .after = ST_PRIM_PARTITION_BY, .nsizes = ST_PARTITION_TILES_SIZES, .makes_kernels = true, .funs = ST_FUNS_ELEMENT,
        .whole_array = true, .type = st_type_after_sizes},
    [ST_PRIM_SORT] = {.info = {.name = "sort", .forms = {"d"}, .pipeline = true},
        .whole_array = true, .type = st_type_sort},
    [ST_PRIM_SORT_BY_KEY] = {.info = {.name = "sort_by_key", .forms = {"dd"}},
        .whole_array = true, .type = st_type_sort_by_key},
};

const st_prim_desc *st_prim_desc_of(st_prim p) { return &table[p]; }

const st_prim_info *st_prim_get(st_prim p) { return &table[p].info; }

bool st_prim_from_name(const char *name, size_t len, st_prim *out) {
    for (int p = 0; p < ST_PRIM_COUNT; p++)
        if (strlen(table[p].info.name) == len && memcmp(table[p].info.name, name, len) == 0)
            return (*out = (st_prim)p), true;
    return false;
}

/* The form of p with nargs arguments, or NULL. */
static const char *form(st_prim p, uint32_t nargs) {
    for (int i = 0; i < 3 && table[p].info.forms[i]; i++) {
        size_t len = strlen(table[p].info.forms[i]);
        if (len == nargs || (table[p].info.variadic && nargs >= len)) return table[p].info.forms[i];
    }
    return NULL;
}

bool st_prim_takes(st_prim p, uint32_t nargs) { return form(p, nargs) != NULL && nargs <= 64; }

void st_prim_describe_arity(st_prim p, char *buf, size_t cap) {
    size_t len = 0, arity[3];
    int n = 0;
    while (n < 3 && table[p].info.forms[n]) {
        arity[n] = strlen(table[p].info.forms[n]);
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
    if (table[p].info.variadic && len < cap) snprintf(buf + len, cap - len, " or more");
}

st_arg_role st_prim_arg_role(st_prim p, int arg, uint32_t nargs) {
    const char *f = form(p, nargs);
    if (!f) return ST_ARG_DATA;
    size_t n = strlen(f);
    char r = (size_t)arg < n ? f[arg] : f[n - 1]; /* a variadic form repeats its last */
    return r == 'f' ? ST_ARG_FUN : r == 'n' ? ST_ARG_NEUTRAL : ST_ARG_DATA;
}

st_prim st_prim_after_sizes(st_prim p, uint32_t *nsizes) {
    *nsizes = table[p].nsizes;
    return table[p].nsizes ? table[p].after : p;
}

bool st_prim_makes_kernels(st_prim p) { return table[p].makes_kernels; }

bool st_fold_form_of(const st_node *e, st_scan_form *f) {
    if (!e || e->kind != ST_NODE_PRIM) return false;
    const st_prim_desc *d = &table[e->u.prim];
    if (d->fold == ST_FOLD_SEQ) {
        if (e->nkids != 3) return false;
        *f = (st_scan_form){NULL, e->kids[0], NULL, e->kids[1], e->kids[2]};
        return true;
    }
    if (d->fold != ST_FOLD_OP) return false;
    uint32_t first = d->nsizes;
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

bool st_prim_sizes_at_run_time(st_prim p) { return table[p].sizes_at_run_time; }

static bool turns_work(const st_node *loop);

/* a loop (counted or while): its turns run in the node's place */
static bool is_loop(st_prim p) { return table[p].funs == ST_FUNS_COUNTED || table[p].funs == ST_FUNS_WHILE; }

/* Does e, outside the lambdas in it (whose work is per element), do work
 * over a whole array? A nested loop's turns count: they run in e's. */
static bool whole_array_work(const st_node *e) {
    if (e->kind == ST_NODE_LAMBDA) return false;
    if (e->kind == ST_NODE_PRIM) {
        /* a map, a fold, a scatter, a filter given a whole array does work over
         * all of it (kernels when it is at the top); get names a part of it,
         * zip, take, transpose see it another way */
        if (table[e->u.prim].whole_array)
            for (uint32_t i = 0; i < e->nkids; i++)
                if (e->kids[i]->kind != ST_NODE_LAMBDA && e->kids[i]->type->kind == ST_TYPE_ARRAY) return true;
        if (is_loop(e->u.prim)) return turns_work(e) || whole_array_work(e->kids[2]);
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
    return e->kind == ST_NODE_PRIM && is_loop(e->u.prim) && (has_array(e->type) || turns_work(e));
}

int st_prim_data_arg(st_prim p, uint32_t nargs) {
    /* reduce_by_index's destination (after subhistograms' sizes), else the
     * last: iterate's x, scan's xs, … */
    return table[p].dest_first ? (int)table[p].nsizes : (int)nargs - 1;
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
