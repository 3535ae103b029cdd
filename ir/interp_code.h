/* ir/interp_code.h — internal to ir/: the register code of the
 * reference interpreter's fast path, which interp_compile.c makes of a
 * function and interp_fast.c runs. A value of a scalar or a tuple of
 * scalars is a list of slots, one for each scalar in it, in order. */
#ifndef STRATA_IR_INTERP_CODE_H
#define STRATA_IR_INTERP_CODE_H

#include "interp_fast.h"

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

#endif
