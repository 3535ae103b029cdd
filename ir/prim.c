/* ir/prim.c — the primitive table: names, arguments, how they print.
 * Adding a primitive means a row here, its typing rule in node.c and its
 * meaning in interp.c. */
#include "ir.h"

#include <string.h>

static const st_prim_info table[ST_PRIM_COUNT] = {
    [ST_PRIM_MAP] = {"map", 2, 2, "fd", true, false},
    [ST_PRIM_REDUCE] = {"reduce", 3, 3, "fnd", true, false},
    [ST_PRIM_SCAN] = {"scan", 3, 3, "fnd", true, false},
    [ST_PRIM_SPLIT] = {"split", 2, 2, "dd", true, false},
    [ST_PRIM_JOIN] = {"join", 1, 1, "d", true, false},
    [ST_PRIM_ZIP] = {"zip", 2, -1, "d", false, false},
    [ST_PRIM_UNZIP] = {"unzip", 1, 1, "d", true, false},
    [ST_PRIM_IOTA] = {"iota", 1, 1, "d", false, false},
    [ST_PRIM_REPLICATE] = {"replicate", 2, 2, "dd", false, false},
    [ST_PRIM_TRANSPOSE] = {"transpose", 1, 1, "d", true, false},
    [ST_PRIM_SCATTER] = {"scatter", 3, 3, "ddd", false, false},
    [ST_PRIM_REDUCE_BY_INDEX] = {"reduce_by_index", 5, 5, "dfndd", false, false},
    [ST_PRIM_ITERATE] = {"iterate", 3, 3, "dfd", true, false},
    [ST_PRIM_GET] = {"get", 2, 2, "dd", true, false},
    [ST_PRIM_MAP_SEQ] = {"mapSeq", 2, 2, "fd", true, true},
    [ST_PRIM_REDUCE_SEQ] = {"reduceSeq", 3, 3, "fnd", true, true},
    [ST_PRIM_SCAN_SEQ] = {"scanSeq", 3, 3, "fnd", true, true},
    [ST_PRIM_MAP_GLB] = {"mapGlb", 2, 2, "fd", true, true},
    [ST_PRIM_MAP_WRG] = {"mapWrg", 2, 2, "fd", true, true},
    [ST_PRIM_MAP_LCL] = {"mapLcl", 2, 2, "fd", true, true},
    [ST_PRIM_TO_GLOBAL] = {"toGlobal", 1, 1, "d", true, true},
    [ST_PRIM_TO_LOCAL] = {"toLocal", 1, 1, "d", true, true},
    [ST_PRIM_TO_PRIVATE] = {"toPrivate", 1, 1, "d", true, true},
};

const st_prim_info *st_prim_get(st_prim p) { return &table[p]; }

bool st_prim_from_name(const char *name, size_t len, st_prim *out) {
    for (int p = 0; p < ST_PRIM_COUNT; p++)
        if (strlen(table[p].name) == len && memcmp(table[p].name, name, len) == 0)
            return (*out = (st_prim)p), true;
    return false;
}

st_arg_role st_prim_arg_role(st_prim p, int arg) {
    const char *roles = table[p].roles;
    size_t n = strlen(roles);
    char r = (size_t)arg < n ? roles[arg] : roles[n - 1]; /* the last role repeats (zip) */
    return r == 'f' ? ST_ARG_FUN : r == 'n' ? ST_ARG_NEUTRAL : ST_ARG_DATA;
}

int st_prim_data_arg(st_prim p) {
    switch (p) {
    case ST_PRIM_REDUCE_BY_INDEX: return 0;
    default: return table[p].max_args - 1; /* the last: iterate's x, scan's xs, … */
    }
}

static const char *const binop_names[ST_BINOP_COUNT] = {
    "+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||",
    "&", "|", "^", "<<", ">>", "min", "max"};

const char *st_binop_name(st_binop op) { return binop_names[op]; }

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
    default: return 0; /* min and max are calls */
    }
}
