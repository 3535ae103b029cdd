/* ir/ast.h — internal to ir/: the located syntax tree the parser produces and
 * the type checker (elab.c) turns into IR nodes. It lives in a scratch arena
 * that is freed once the program is checked; only IR nodes outlive it. */
#ifndef STRATA_IR_AST_H
#define STRATA_IR_AST_H

#include "ir.h"

typedef enum ast_kind {
    A_INT,    /* magnitude, negative, suffix */
    A_FLOAT,  /* text (without suffix), negative, suffix; special: inf, nan */
    A_BOOL,   /* bval */
    A_NAME,   /* name */
    A_TUPLE,  /* kids */
    A_PROJ,   /* kids[0], index */
    A_UNOP,   /* unop, kids[0] */
    A_BINOP,  /* binop, kids[0..1]; loc is the operator's */
    A_CALL,   /* name(kids...); loc is the name's */
    A_OPREF,  /* a bare operator passed as a function: binop */
    A_LAMBDA, /* names[0..nnames) with optional annots, kids[0] = body */
    A_LET,    /* names (a pattern), annot (single name only), kids[0] value, kids[1] body */
    A_IF,     /* kids: cond, then, else */
    A_ARRAY,  /* an array literal [kids...]; loc is the `[` */
    A_INDEX,  /* kids[0][kids[1]]: get; loc is the `[` */
    A_SLICE,  /* kids[0][kids[1]:kids[2]], a bound NULL when left out; loc is the `[` */
    A_LOOP    /* names: the accumulator's pattern (tuple_pattern as A_LET's); bval: a while loop;
                 for: kids init, A_NAME index, count, body; while: kids init, cond, body */
} ast_kind;

typedef struct ast_type ast_type;
typedef struct ast ast;

struct ast {
    ast_kind kind;
    st_loc loc;
    const char *name; /* interned */
    uint64_t magnitude;
    bool negative, has_suffix, bval;
    st_scalar_kind suffix;
    const char *text;       /* A_FLOAT: digits to convert once the type is known */
    st_binop binop;
    st_unop unop;
    uint32_t index;
    uint32_t nkids;
    ast **kids;
    uint32_t depth;         /* of the tree below, bounded by the parser */
    uint32_t nnames;
    const char **names;     /* A_LAMBDA parameters, A_LET pattern */
    st_loc *name_locs;
    ast_type **annots;      /* one per name, NULL when not annotated */
    bool tuple_pattern;     /* A_LET: written `let (a, b) = …` */
};

typedef enum { T_SCALAR, T_TUPLE, T_ARRAY } ast_type_kind;

struct ast_type {
    ast_type_kind kind;
    st_loc loc;
    st_scalar_kind scalar;
    ast *size;          /* T_ARRAY */
    ast_type *elem;     /* T_ARRAY */
    uint32_t n;
    ast_type **items;   /* T_TUPLE */
};

typedef struct ast_param {
    const char *name;
    st_loc loc;
    ast_type *type;
} ast_param;

typedef struct ast_fact {
    const char *name;
    st_loc loc;
    int64_t divisor;
} ast_fact;

typedef struct ast_def {
    const char *name;
    st_loc loc;
    uint32_t nparams;
    ast_param *params;
    ast_type *result; /* NULL when not declared */
    uint32_t nfacts;
    ast_fact *facts;
    ast *body;
} ast_def;

typedef struct ast_program {
    uint32_t ndefs;
    ast_def *defs;
} ast_program;

/* Parse a whole source into `scratch`; names are interned in cx. */
bool st_ast_parse(st_ctx *cx, st_arena *scratch, const char *file, const char *src, size_t len,
                  ast_program *out, st_err *err);

/* Type-check a parsed program into IR. */
const st_program *st_ast_elaborate(st_ctx *cx, const char *file, const ast_program *p,
                                   st_err *err);

#endif
