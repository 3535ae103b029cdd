/* codegen/cg.h — internal to codegen/: the kernel generator's shared state.
 *
 * Code follows the IR. The generator walks a lowered def at three levels:
 *
 *   host    between kernels (cg_host.c): a top-level mapGlb or mapWrg is a
 *           kernel, any other computation a one-work-item kernel, views are
 *           kept as expressions, every intermediate is a global buffer
 *   group   inside a mapWrg's function (cg_group.c): run by all work-items
 *           of a work-group; mapLcl is a strided loop then a barrier,
 *           sequential work is done by work-item 0, arrays live in local
 *           memory
 *   thread  inside one work-item (cg_thread.c): loops, scalar C, private
 *           arrays
 *
 * Values are C text, never copies: a scalar is a C expression, an array a
 * view (cg_view.c) that turns an index into an element — split, join, zip,
 * unzip, transpose, iota, replicate and get compile to index arithmetic over
 * strided memory. Results are written in destination-passing style: an
 * expression is generated *into* a place, so `mapWrg(...) |> join` writes its
 * blocks straight into the flat buffer the join is stored to.
 */
#ifndef STRATA_CODEGEN_CG_H
#define STRATA_CODEGEN_CG_H

#include "codegen.h"

/* ---- memory and values ---- */

typedef enum cg_space { CG_GLOBAL, CG_LOCAL, CG_PRIVATE } cg_space;

enum { CG_MAX_RANK = 8 };

/* A strided block of scalars: element (i0, i1, …) is at
 * base[offset + i0*stride0 + i1*stride1 + …]. rank 0 is one scalar. */
typedef struct cg_mem {
    const char *base;      /* the C name of the pointer or array */
    int buffer;            /* the host buffer it is, or -1 (local, private) */
    cg_space space;
    st_scalar_kind kind;
    const char *offset;    /* C expression, in elements */
    uint32_t rank;
    const st_size *dims[CG_MAX_RANK];
    const st_size *strides[CG_MAX_RANK];
} cg_mem;

/* A place to write a value of some type: memory for each scalar leaf, a
 * tuple of places for a tuple or an array of tuples (arrays of tuples are
 * stored as tuples of arrays, as the interpreter does). */
typedef struct cg_place cg_place;
struct cg_place {
    bool tuple;
    cg_mem mem;                 /* !tuple */
    uint32_t n;                 /* tuple */
    const cg_place *items;
};

typedef struct cg_view cg_view;

/* A value during generation. */
typedef enum cg_value_kind { CG_SCALAR, CG_TUPLE, CG_ARRAY } cg_value_kind;
typedef struct cg_value {
    cg_value_kind kind;
    const st_type *type;
    const char *c;              /* SCALAR: a C expression without side effects */
    uint32_t n;                 /* TUPLE */
    const struct cg_value *items;
    const cg_view *view;        /* ARRAY */
    /* SCALAR, an integer known to lie in [lo, hi) where hi is not NULL
     * (cg_range.c): an index that needs no check */
    int64_t lo;
    const st_size *hi;
    /* and below hi_full, where not NULL, in a whole block of a mapWrg
     * (cg_host.c's kernel_wrg: where g->whole says so) */
    const st_size *hi_full;
    /* SCALAR, where not NULL: the value is this C text (the index of its
     * work-group's first work-item) plus the work-item's local id, a
     * mapGlb's index, so that its quotient by a multiple of the group's
     * size is the same in the whole group (cg_thread.c) */
    const char *group_first;
} cg_value;

typedef enum cg_view_kind {
    CG_V_MEM,       /* strided memory */
    CG_V_ZIP,       /* element i is the tuple (or zip) of items' elements i */
    CG_V_SHIFT,     /* element i is inner[start + i] (a block of a split) */
    CG_V_JOIN,      /* [a][b]t as [a*b]t */
    CG_V_SPLIT,     /* [n]t as [n/k][k]t */
    CG_V_TRANSPOSE, /* [a][b]t as [b][a]t */
    CG_V_COLUMN,    /* element j is inner[j][col] */
    CG_V_IOTA,      /* element i is i */
    CG_V_REPLICATE, /* every element is `elem` */
    CG_V_MAP,       /* element i is fn(inner[i]), computed where it is read (an index map) */
    CG_V_CONCAT     /* element i is items[0][i] below length k, else items[1][i - k] */
} cg_view_kind;

struct cg_view {
    cg_view_kind kind;
    const st_type *type;        /* the array type */
    cg_mem mem;                 /* MEM */
    uint32_t n;                 /* ZIP */
    const cg_view *const *items;
    const cg_view *inner;       /* SHIFT JOIN SPLIT TRANSPOSE COLUMN */
    cg_value start;             /* SHIFT: the first element; COLUMN: the column (an index) */
    const st_size *k;           /* SPLIT: the block length; JOIN: the inner length; CONCAT: the first's */
    cg_value elem;              /* REPLICATE */
    const st_node *fn;          /* MAP: the function, */
    const struct cg_binding *env; /*   in the scope it was made in */
};

static inline cg_value cg_scalar(const st_type *t, const char *c) {
    return (cg_value){.kind = CG_SCALAR, .type = t, .c = c};
}

/* ---- the generator ---- */

typedef enum cg_level { CG_HOST, CG_GROUP, CG_THREAD } cg_level;

/* A name in scope: a value, or at host level an expression kept to be
 * generated in each kernel that reads it (a view or a cheap scalar). */
typedef struct cg_binding cg_binding;
struct cg_binding {
    const char *name;
    bool deferred;
    cg_value value;             /* !deferred */
    const st_node *expr;        /* deferred: generated in the reader's kernel, */
    const cg_binding *env;      /*   in the scope it was bound in, */
    int proj;                   /*   component proj of it, or -1 */
    const cg_place *place;      /* at host level: memory read afresh in each kernel */
    const st_type *type;        /*   of this type (so the kernel takes the buffer) */
    const cg_binding *next;
    bool glue_value;            /* !deferred: value.c is a value of the glue's (a top-level
                                   loop's index), which a kernel that reads it takes (cg_use_value) */
};

/* What one kernel launch needs from the host. */
/* VALUE: a `long` the glue computes when the program runs (cg_glue_value). */
typedef enum cg_arg_kind { CG_ARG_BUFFER, CG_ARG_SCALAR, CG_ARG_LOCAL, CG_ARG_VALUE } cg_arg_kind;
typedef struct cg_arg {
    cg_arg_kind kind;
    int index;                  /* BUFFER: the host buffer; SCALAR: st_code.scalars */
    st_scalar_kind elem;        /* LOCAL: element type */
    const st_size *count;       /* LOCAL: elements, */
    const char *count_c;        /*   or a C expression of the glue's, when not NULL */
    const char *name;           /* LOCAL, VALUE: the parameter */
    bool written;               /* BUFFER: the kernel stores to it */
} cg_arg;

typedef enum cg_shape {
    CG_SHAPE_SINGLE, /* one work-item */
    CG_SHAPE_GLB,    /* `count` work-items (rounded up to whole groups) */
    CG_SHAPE_WRG,    /* `count` work-groups of the largest of `lanes` work-items */
    CG_SHAPE_EXACT   /* `count` work-groups of exactly lanes[0] work-items, or a refusal */
} cg_shape;

typedef struct cg_kernel {
    const char *name;
    const char *what;           /* one line for the glue's comments and messages */
    cg_shape shape;
    const st_size *count;
    const char *count_c;        /* the count as a C expression of the glue's, when not NULL */
    uint32_t nlanes;
    const st_size **lanes;
    const char *lanes_c;        /* WRG: the work-items as a C expression of the glue's, when not NULL */
    uint32_t nargs;
    cg_arg *args;
    st_buf body;
    bool repeated;              /* launched in a top-level loop: each launch releases the last's event */
    bool loops;                 /* a work-item loops over more than a row's few elements (a chunk, a
                                   row of run-time length): on a CPU a group of one (cg_glue.c says why) */
    bool runs;                  /* a mapGlb whose work-items each take a run of consecutive elements,
                                   as many as the launch leaves them (cg_host.c): on a CPU a group of
                                   one each and strata_map_run's runs, elsewhere `vec` each */
    int vec;                    /* runs: the elements a GPU work-item takes, 16 bytes of the kernel's
                                   narrowest array, loaded and stored as 128-bit vectors (cg_host.c) */
    const struct cg_algorithm *alg; /* the kernel-making primitive that made it, or NULL (its own to set) */
} cg_kernel;

/* Glue statements placed before the launch of kernel `before` (nkernels:
 * after the last): a top-level loop's head and tail around its kernels. */
typedef struct cg_glue_mark {
    uint32_t before;
    const char *text;
} cg_glue_mark;

/* ALIAS: a handle of the glue's that names, turn by turn, another role's
 * buffer (a top-level loop's accumulator): declared, never allocated or
 * released. */
typedef enum cg_buffer_role { CG_BUF_INPUT, CG_BUF_OUTPUT, CG_BUF_TEMP, CG_BUF_ALIAS } cg_buffer_role;
typedef struct cg_buffer {
    const char *name;
    cg_buffer_role role;
    int index;                  /* within its role */
    st_scalar_kind kind;
    const st_size *count;
    const char *count_c;        /* the count as a C expression of the glue's, when not NULL */
    int line, col;              /* the place in the program of what it holds (line 0: none known) */
} cg_buffer;

/* An input or an output: strata_run's caller hands it over. */
static inline bool cg_is_argument(const cg_buffer *b) { return b->role == CG_BUF_INPUT || b->role == CG_BUF_OUTPUT; }

/* A place in the kernels that can record a fault (cg_fault.c). */
typedef enum cg_fault_kind {
    CG_FAULT_INDEX,    /* an index out of range: the value is the index */
    CG_FAULT_DIVISION, /* an integer divided by zero (/ or %) */
    CG_FAULT_ALGORITHM /* a kernel-making primitive's own fault (its descriptor's fault_glue) */
} cg_fault_kind;
typedef struct cg_fault_site {
    cg_fault_kind kind;
    const cg_kernel *kernel;    /* the kernel it is in */
    const char *length_c;       /* INDEX: the array's length, a C expression over the scalars */
    const char *what;           /* INDEX, DIVISION: the expression, printed; ALGORITHM: the kernel's name */
    const struct cg_algorithm *alg; /* ALGORITHM: whose fault */
    int line, col;              /* INDEX, DIVISION: where it stands in the program (line 0: nowhere known) */
} cg_fault_site;

/* A size some text computes, with the place of what was being generated
 * when it was first written (cg_sizes.c checks each in the glue). */
typedef struct cg_noted_size {
    const st_node *expr;        /* over the def's sizes and integer parameters */
    int line, col;
} cg_noted_size;

typedef struct cg {
    st_ctx *cx;
    st_arena *a;
    const st_def *def;
    st_err *err;
    bool failed;
    const st_node *at;          /* the innermost node being generated: where cg_fail places an
                                   error that names no node (set by cg_generating) */

    /* the program */
    uint32_t nbuffers, capbuffers;
    cg_buffer *buffers;
    uint32_t nkernels, capkernels;
    cg_kernel **kernels;
    uint32_t nscalars;
    st_code_scalar *scalars;
    st_buf types;               /* struct typedefs of tuples */
    st_buf funcs;               /* operator lambdas as C functions */
    uint32_t ntuples, captuples;
    const st_type **tuples;
    uint32_t nfuncs, capfuncs;
    const st_node **funcs_of;
    bool uses_f64;
    bool uses_atomics64;        /* 64-bit atomics, base and extended */
    uint32_t algorithms;        /* the kernel-making primitives used: bit i for cg_algorithms[i] */
    st_buf glue_values;         /* statements computing the glue's values, before anything is allocated */
    const cg_place *faults;     /* the fault words (cg_fault.c), once a kernel can record one */
    uint32_t nsites, capsites;
    cg_fault_site *sites;
    uint32_t nsizes, capsizes;
    cg_noted_size *sizes;       /* every size a kernel or the glue computes (cg_sizes.c) */
    uint32_t nmarks, capmarks;
    cg_glue_mark *marks;        /* top-level loops (cg_host.c), in order */
    uint32_t ntotals, captotals;
    struct cg_total *totals;    /* scanTotal(s) met before s's kernel (cg_lookback.c) */
    uint32_t nloops, loop_depth;
    int64_t loop_turns;         /* the turns of one work-item's loops around what is being
                                   generated (cg_thread.c); 0 outside any */
    int64_t unroll_rows;        /* a row accumulator's elements while its step is generated
                                   (cg_thread.c): its loops unrolled, so it lives in registers */
    /* lengths known only at run time (cg_cut.c): each existential met, in
     * order, with the glue's long that holds it once counted */
    uint32_t nexists, capexists;
    struct cg_exist *exists;
    const st_def *sized;        /* the def with a size variable standing for each */
    uint32_t nlengths;          /* those in the result's type (st_code_lengths_of), */
    const st_size **lengths;
    int lengths_buffer;         /*   written to this output at the end (-1: none) */

    /* the kernel being generated */
    cg_kernel *k;
    cg_kernel nowhere;          /* where text goes when a kernel could not be made */
    cg_level level;
    int indent;
    bool barrier_pending;       /* group level: a barrier before the next step */
    uint32_t fresh;             /* C names */
    const char *hint;           /* the name the next kernel is for (a let's) */
    /* Where a work-item of a parallel kernel keeps an array too long (or of
     * a length not known) for private memory: its slot of a global scratch
     * buffer of `slots` slots, one per iteration of the parallel loops
     * around it. NULL where no such loop is open (cg_scratch_enter). */
    const char *slot;
    const st_size *slots;
    /* While a mapWrg's group is generated whose blocks' count rounds up
     * (kernel_wrg): the C name of the flag that says the group's block is
     * whole, which an element's test against the end reads (cg_range.c),
     * and how many did */
    const char *whole;
    uint32_t whole_uses;
    uint32_t uniform_uses;      /* quotients of a group_first value made the same in a group */
} cg;

/* ---- cg.c: errors, text, names ---- */
bool cg_fail(cg *g, const st_node *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* e is generated from now on; returns the node generated before, which the
 * caller puts back (g->at = outer) when e is done. */
static inline const st_node *cg_generating(cg *g, const st_node *e) {
    const st_node *outer = g->at;
    g->at = e;
    return outer;
}
const char *cg_str(cg *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *cg_name(cg *g, const char *base);  /* a fresh C identifier */
/* `if (COND) {` for a condition expr: without the parentheses that wrap
 * all of expr, so that an equality is not written `if ((a == b))`, which
 * clang warns about (-Wparentheses-equality) and PoCL's build then reports
 * on the process's stderr ("N warnings generated."). */
const char *cg_if(cg *g, const char *expr);
/* Text from outside the generator (a program's path, a printed node) as
 * generated C, OpenCL C and CUDA may carry it: the inside of a C string
 * literal, printable ASCII only, that is also safe in a comment. The one
 * way such text enters generated code (docs/security.md). */
void cg_put_escaped(st_buf *b, const char *text, size_t len);
void cg_line(cg *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The text the current kernel gets between cg_capture_begin and
 * cg_capture_end, kept apart rather than emitted; cg_emit_text emits it,
 * each line `indent` levels deeper and each `name` in it replaced by `with`
 * (a flag's value in one copy of the text), name and with NULL for none. */
st_buf cg_capture_begin(cg *g);
st_buf cg_capture_end(cg *g, st_buf saved);
void cg_emit_text(cg *g, const st_buf *text, int indent, const char *name, const char *with);
/* The leading literal sizes of e (st_prim_after_sizes) into out. */
bool cg_leading_sizes(cg *g, const st_node *e, int64_t *out);
/* A line that opens a block (`for (…) {`), and the `}` that closes it. */
void cg_open(cg *g, const char *line);
void cg_close(cg *g);
/* Room for one more of n items of `size` bytes in *items, whose room is
 * *cap (doubled from 8; arena memory: the old array is left where it is);
 * false when out of memory (g->failed says so). */
bool cg_grow(cg *g, void **items, uint32_t n, uint32_t *cap, size_t size);
void *cg_alloc(cg *g, size_t size);
/* How deep brackets nest in C text c: ( [ { alike, as a C compiler counts
 * them (clang, and so PoCL, stops at 256). */
int cg_bracket_depth(const char *c);
enum { CG_MAX_BRACKETS = 256 };

/* ---- cg_c.c: C types, literals and scalar operators ---- */
const char *cg_ctype(cg *g, const st_type *t);     /* private C type of a scalar or tuple */
const char *cg_mem_ctype(st_scalar_kind k);        /* element type in memory */
bool cg_is_plain(const st_type *t);                /* a scalar or a tuple of them: it has a C type */
size_t cg_plain_bytes(const st_type *t);           /* bytes of a plain value in memory, leaf by leaf */
const char *cg_literal(cg *g, st_scalar_kind k, st_scalar v);
const char *cg_binop(cg *g, st_binop op, st_scalar_kind k, const char *a, const char *b);
const char *cg_unop(cg *g, st_unop op, st_scalar_kind k, const char *a);
const char *cg_conv(cg *g, st_scalar_kind to, st_scalar_kind from, const char *a);
const char *cg_prelude(void);                      /* helper functions every kernel file has */
/* A scalar as the bits of the unsigned word of its size (uint, ulong; bool
 * as a uint), for atomics that move words; and a word back to the scalar. */
const char *cg_to_bits(cg *g, st_scalar_kind k, const char *x);
const char *cg_from_bits(cg *g, st_scalar_kind k, const char *w);
/* A size as C text over the scalars s_NAME (kernels and glue alike). */
const char *cg_size(cg *g, const st_size *s);

/* ---- cg_cut.c: lengths known only at run time (take, drop, concat) ---- */
typedef struct cg_exist {
    const st_size *size;        /* 1·?k */
    const char *c;              /* ex_N: the glue's long, and a kernel's parameter */
    const char *var;            /* ?N: the size variable standing for it in g->sized */
    bool counted;               /* the glue computes it before any kernel reads it */
} cg_exist;
/* The existential ?k (1·?k), registered on first sight. */
cg_exist *cg_exist_of(cg *g, const st_size *exist);
/* s with each existential replaced by its size variable (?N) of g->sized,
 * so that st_size_expr writes it; the C name of a ?N variable (NULL when
 * name is none), which the current kernel then takes as a parameter. */
const st_size *cg_exist_sized(cg *g, const st_size *s);
const char *cg_exist_var_c(cg *g, const char *name);
/* take(k, xs), drop(k, xs), concat(xs, ys) whose arrays are views: a view
 * too, once the glue holds k (cg_host.c counts it before). */
bool cg_cut_view(const st_node *e);
cg_value cg_cut_value(cg *g, const st_node *e, const cg_binding *env);
/* An existential's worst case for memory (st_size_upper), s itself when it has none. */
const st_size *cg_upper(cg *g, const st_size *s);

/* ---- cg_view.c: views, places, reading and writing ---- */
const cg_view *cg_view_mem(cg *g, const st_type *t, const cg_mem *m);
cg_value cg_value_of_place(cg *g, const st_type *t, const cg_place *p);
/* [n][m](a, b) → [n][m]a for k = 0: the type of the k-th part of a place of
 * type t (a tuple's component, an array of tuples' array of it). */
const st_type *cg_component_type(cg *g, const st_type *t, uint32_t k);
cg_value cg_array(const st_type *t, const cg_view *v);
cg_value cg_index(cg *g, const cg_value *arr, const char *i);  /* element i of an array */
/* element i of an array, i an index that carries where it lies (a loop's:
 * cg_index_in), so that what the element is computed from knows it too */
cg_value cg_index_at(cg *g, const cg_value *arr, cg_value i);
/* an index: C text of type long, its range not known (cg_ranged gives it one) */
cg_value cg_index_value(cg *g, const char *c);
/* element i of an array, i a loop's index over its length */
cg_value cg_index_in(cg *g, const cg_value *arr, const char *i);
const st_size *cg_length(const cg_value *arr);
cg_value cg_split(cg *g, const st_type *t, const st_size *k, const cg_value *arr);
cg_value cg_join(cg *g, const st_type *t, const cg_value *arr);
cg_value cg_transpose(cg *g, const st_type *t, const cg_value *arr);
cg_value cg_zip(cg *g, const st_type *t, uint32_t n, const cg_value *arrs);
cg_value cg_unzip(cg *g, const st_type *t, const cg_value *arr);
cg_value cg_iota(cg *g, const st_type *t);
cg_value cg_replicate(cg *g, const st_type *t, const cg_value *elem);
/* The first length(t) elements of arr, all but the first `start` (a C
 * expression), and arr then b. */
cg_value cg_take(cg *g, const st_type *t, const cg_value *arr);
cg_value cg_drop(cg *g, const st_type *t, const char *start, const cg_value *arr);
cg_value cg_concat(cg *g, const st_type *t, const cg_value *a, const cg_value *b);
/* fn over xs, each element computed where it is read (st_is_view's index
 * maps): no loop and no memory of its own. */
cg_value cg_map_view(cg *g, const st_type *t, const st_node *fn, const struct cg_binding *env, const cg_value *xs);
/* A place of type t in fresh memory (private arrays, local arguments, host buffers). */
const cg_place *cg_place_new(cg *g, const st_type *t, cg_space space, const char *base);
const st_size *cg_mem_elements(cg *g, const cg_mem *m); /* the product of its dims */
const cg_place *cg_place_index(cg *g, const cg_place *p, const char *i);
const cg_place *cg_place_split(cg *g, const cg_place *p, const st_size *inner); /* [a*b] as [a][b] */
const cg_place *cg_place_join(cg *g, const cg_place *p);  /* [a][b] as [a*b], NULL if not contiguous */
const cg_place *cg_place_transpose(cg *g, const cg_place *p);
/* Is v exactly the memory of p (nothing to copy)? */
bool cg_same_place(const cg_value *v, const cg_place *p);
/* Between the C lvalue var (of t's C type) and p, a place indexed down to
 * one element, leaf by leaf: loaded through a volatile pointer (memory that
 * other work-items write, read afresh) or stored through one. */
void cg_exchange(cg *g, const cg_place *p, const st_type *t, const char *var, bool load);
/* Emit the statements that store v into p (a loop for arrays). */
void cg_store(cg *g, const cg_place *p, const cg_value *v);
/* A scalar or tuple value in fresh private variables (so it is read once). */
cg_value cg_materialize(cg *g, const cg_value *v);
void cg_assign(cg *g, const cg_value *to, const cg_value *v); /* to: from cg_variables */
cg_value cg_variables(cg *g, const cg_value *v);

/* ---- cg_range.c: where an integer lies, to leave out index checks ---- */
/* v known to lie in [lo, hi) */
cg_value cg_ranged(cg_value v, int64_t lo, const st_size *hi);
/* Is v known to be exactly one integer (a literal's range)? Then *c is it. */
bool cg_range_constant(const cg_value *v, int64_t *c);
/* v, its C text now `c` (a variable it was put in): its range kept */
static inline cg_value cg_renamed(cg_value v, const char *c) {
    v.c = c;
    return v;
}
/* i as an element of an array of `length` indexed at i (an iota's): within
 * i's range where that is known and tighter, else [0, length) */
cg_value cg_range_index(cg *g, cg_value v, const cg_value *i, const st_size *length);
/* `a < n`, n the node of a size, as C text where the range of a decides it
 * (a padded array's test, in a whole block): "true", or a test that reads
 * g->whole; NULL where it does not */
const char *cg_range_below(cg *g, const cg_value *a, const st_node *n, const char *test);
/* The range of a literal, of `a op b` and of a conversion, set in r (left unknown where not known). */
void cg_range_literal(cg *g, cg_value *r, st_scalar_kind k, st_scalar v);
void cg_range_binop(cg *g, cg_value *r, st_binop op, const cg_value *a, const cg_value *b);
void cg_range_conv(cg_value *r, st_scalar_kind to, const cg_value *a);
/* env for the branch where cond holds: `i < n` puts i below n */
const cg_binding *cg_range_refine(cg *g, const st_node *cond, const cg_binding *env);
/* env for the branch where cond fails: `i == lo` puts i above lo */
const cg_binding *cg_range_refine_not(cg *g, const st_node *cond, const cg_binding *env);
/* Might `a op d` divide an integer by zero: op is / or % of integers of kind
 * k, and the divisor (its node, when there is one, and its value d, when
 * known) is neither a nonzero literal nor in a range above 0? */
bool cg_divides_by_zero(st_binop op, st_scalar_kind k, const st_node *divisor, const cg_value *d);
/* Is i surely an index of an array of this length? */
bool cg_in_range(cg *g, const cg_value *i, const st_size *length);

/* ---- cg_winners.c: a scatter's last write in index order ---- */
/* How a scatter's elements write (cg_winners.c says why): all of them as
 * they come (CG_ALL: a scatterDistinct, a reduce_by_index, one work-item
 * running them in order), or in two passes over them, each element in
 * bounds first claiming its place (CG_CLAIM: the largest element index
 * that writes a place is its winner), then writing where it won (CG_WON). */
typedef enum cg_pass { CG_ALL, CG_CLAIM, CG_WON } cg_pass;
typedef struct cg_winners cg_winners;
typedef struct cg_scatter {
    const st_node *e;           /* the scatter (or reduce_by_index) */
    cg_pass pass;
    const cg_winners *winners;  /* CG_CLAIM and CG_WON: cg_winners_new's */
} cg_scatter;
/* The winners of scatter e, a scatter whose indices may repeat, of
 * `sources` elements: a global buffer of one per place, and the kernel
 * that sets them all to none (-1). NULL where e's places are distinct (a
 * scatterDistinct, a reduce_by_index) or it has at most one element:
 * then every element writes as it comes. */
const cg_winners *cg_winners_new(cg *g, const st_node *e, const st_size *sources);
/* In a kernel, element j (a C long) claims place `at` (a C long in bounds). */
void cg_winners_claim(cg *g, const cg_winners *w, const char *at, const char *j);
/* In a kernel after the claims: does element j hold place `at`? C text. */
const char *cg_winners_won(cg *g, const cg_winners *w, const char *at, const char *j);

/* ---- cg_thread.c: one work-item ---- */
cg_value cg_thread_value(cg *g, const st_node *e, const cg_binding *env);
/* c ? a : b (of type t, scalars or tuples of them), each side generated
 * into a text of its own captured one level in (ta, tb): one expression
 * where neither side has statements, else an if/else into variables, each
 * side's statements run only where it is chosen. Frees ta and tb. */
cg_value cg_choose(cg *g, const char *c, const st_type *t, const cg_value *a, st_buf *ta, const cg_value *b,
                   st_buf *tb);
void cg_thread_into(cg *g, const st_node *e, const cg_binding *env, const cg_place *p);
/* ---- cg_apply.c: functions ---- */
/* The scope a lambda's body is generated in: its parameters bound to args
 * (a k-parameter lambda given one k-tuple takes its components). */
const cg_binding *cg_bind_params(cg *g, const st_node *f, uint32_t nargs, const cg_value *args,
                                 const cg_binding *env);
cg_value cg_apply(cg *g, const st_node *f, uint32_t nargs, const cg_value *args, const cg_binding *env);
void cg_apply_into(cg *g, const st_node *f, uint32_t nargs, const cg_value *args, const cg_binding *env,
                   const cg_place *p);
cg_value cg_lookup(cg *g, const st_node *var, const cg_binding *env);
/* A scalar or tuple as one C expression (make_tupleK(…) for a tuple), and
 * back: the fields of a C lvalue or expression c of type t as a value. */
const char *cg_tuple_literal(cg *g, const cg_value *v);
cg_value cg_fields_of(cg *g, const st_type *t, const char *c);
const cg_binding *cg_bind(cg *g, const cg_binding *env, const char *name, cg_value v);
const cg_binding *cg_bind_pattern(cg *g, const cg_binding *env, const st_node *let, cg_value v);
/* name to the memory of place, read afresh (so registered with the kernel
 * that reads it) at each use. */
const cg_binding *cg_bind_memory(cg *g, const cg_binding *env, const char *name, const st_type *t,
                                 const cg_place *place);
/* The names of let's pattern to the parts of place (which holds a value of type t). */
const cg_binding *cg_bind_place(cg *g, const cg_binding *env, const st_node *let, const st_type *t,
                                const cg_place *place);
/* A view is generated where it is read; anything else is computed into memory. */
static inline bool cg_is_view(const st_node *e) { return st_is_view(e, false) || cg_cut_view(e); }
/* scatter and reduce_by_index, shared by the sequential loop and the kernels */
void cg_scatter_sources(cg *g, const st_node *e, const cg_binding *env, cg_value *is, cg_value *vs);
/* Element j (a C long) of s->e's sources, written as s says. */
void cg_scatter_step(cg *g, const cg_scatter *s, const cg_binding *env, const cg_place *p, const cg_value *is,
                     const cg_value *vs, const char *j);
/* One write of s->e (a scatter or reduce_by_index into p) by its element j
 * (a C long): value v at index i, ignored when i is out of bounds; in the
 * pass s says (a claim writes nothing into p). */
void cg_scatter_write(cg *g, const cg_scatter *s, const cg_binding *env, const cg_place *p, const cg_value *i,
                      const cg_value *v, const char *j);
/* The code generated next runs once per slot (a C expression) of n: a
 * parallel loop's iteration, nested in the slots open before. Returns what
 * to give cg_scratch_leave when the loop closes. */
typedef struct cg_scratch_saved {
    const char *slot;
    const st_size *slots;
} cg_scratch_saved;
cg_scratch_saved cg_scratch_enter(cg *g, const char *slot, const st_size *n);
void cg_scratch_leave(cg *g, cg_scratch_saved saved);
/* The place an address-space annotation or the level asks for, sized by t. */
const cg_place *cg_temp(cg *g, const st_type *t, const st_node *at, cg_space space, const char *hint);

typedef void (*cg_into_fn)(cg *g, const st_node *e, const cg_binding *env, const cg_place *p);
/* Output views: a join, split, transpose, zip, unzip, tuple or address-space
 * annotation around a computation generates its argument into the same
 * memory seen another way; a tuple goes part by part. False when e is none
 * of them, is a view as a whole, or the place cannot be seen that way. */
bool cg_into_view(cg *g, const st_node *e, const cg_binding *env, const cg_place *p, cg_into_fn into);

/* ---- cg_hoist.c: parallel work out of sequential work ---- */
typedef struct cg_stage {
    bool (*parallel)(const st_node *e);                  /* a map this level runs in parallel */
    const cg_place *(*place)(cg *g, const st_type *t);   /* memory for what it computes */
    cg_into_fn into;                                     /* how this level computes it */
} cg_stage;
/* e with every such map it holds (outside functions) computed first, into
 * a place of the stage's, and read through a variable bound in *env. */
const st_node *cg_hoist(cg *g, const st_node *e, const cg_binding **env, const cg_stage *st);
/* The same inside e, leaving e itself to run where it is. */
const st_node *cg_hoist_inside(cg *g, const st_node *e, const cg_binding **env, const cg_stage *st);
/* The arguments of e from `first` on that are arrays and not views,
 * computed first: what a parallel loop reads must be there before it starts. */
const st_node *cg_hoist_args(cg *g, const st_node *e, uint32_t first, const cg_binding **env, const cg_stage *st);
/* The same, leaving a fusible map (map or mapGlb of a lambda over a view,
 * its elements scalars or tuples) to be computed element by element where
 * it is read, by cg_element: a map before a kernel-making primitive
 * (cg_algorithms) runs inside its kernel. */
const st_node *cg_hoist_args_fusing(cg *g, const st_node *e, uint32_t first, const cg_binding **env,
                                    const cg_stage *st);
/* Every node of e inside a function (a lambda, at any depth) that makes
 * kernels of its own (st_prim_makes_kernels) and reads nothing bound within
 * e: the same value for every element, so computed once, first, by the
 * stage (the top of the def), and read through a variable. What a rule put
 * inside a map (a padded scan's producer, a reduce_by_index that a map
 * reads) thus runs where it can. One that reads a name bound within e is
 * left where it is. */
const st_node *cg_hoist_kernels(cg *g, const st_node *e, const cg_binding **env, const cg_stage *st);
bool cg_fusible_map(const st_node *e);
/* Element i of e, a view or a fusible map, in the current kernel. */
cg_value cg_element(cg *g, const st_node *e, const cg_binding *env, const char *i);

/* ---- cg_group.c: a work-group ---- */
void cg_group_into(cg *g, const st_node *e, const cg_binding *env, const cg_place *p);
void cg_group_sync(cg *g);

/* ---- cg_host.c: kernels ---- */
bool cg_host(cg *g);
void cg_kernel_begin(cg *g, cg_shape shape, const st_size *count, const char *hint, const st_node *e);
void cg_kernel_end(cg *g);
/* e's array arguments from `first` on that are not views or fusible maps,
 * computed into global buffers by kernels of their own first. */
const st_node *cg_host_hoist_args(cg *g, const st_node *e, uint32_t first, const cg_binding **env);
/* e into p at the top of a def, in kernels of its own where it needs them. */
void cg_host_into(cg *g, const st_node *e, const cg_binding *env, const cg_place *p);
uint32_t cg_buffers_of(const cg *g, cg_buffer_role role); /* how many have this role */
void cg_use_buffer(cg *g, int buffer, bool write); /* the current kernel reads or writes it */
const cg_place *cg_host_temp(cg *g, const st_type *t, const char *hint); /* global buffers */
/* The memory of each scalar leaf of p, in order (st_value_leaves'), *n
 * of them; NULL when out of memory. */
const cg_mem **cg_place_leaves(cg *g, const cg_place *p, uint32_t *n);
/* global buffers of count_c elems each (count_c a glue expression) */
const cg_place *cg_host_temp_sized(cg *g, const st_type *elem, const char *count_c, const char *hint);
void cg_add_local(cg *g, const char *name, st_scalar_kind kind, const st_size *count);
/* Local memory of count_c elements, a C expression of the glue's. */
void cg_add_local_c(cg *g, const char *name, st_scalar_kind kind, const char *count_c);
/* The current kernel takes the glue's value `name` (a long) as a parameter. */
void cg_use_value(cg *g, const char *name);
/* A statement of the glue's, run before anything is allocated: where it
 * computes values (`long NAME = …;`) from the sizes and the device. */
void cg_glue_value(cg *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- kernel-making primitives: a descriptor each ---- */
/* A primitive that makes kernels of its own (st_prim_makes_kernels) is
 * generated by a file of its own, which owns its descriptor: what it emits
 * and what the shared text needs for it. The shared code (cg_host.c,
 * cg_thread.c, cg_glue.c, cg_fault.c, runtime.c) reads only the table,
 * cg_algorithms, and names no such primitive. */
typedef struct cg_algorithm {
    st_prim prim;               /* the primitive it generates; an exact-shaped kernel of it is named after it */
    const char *rule;           /* the rule that makes it, and what that rule rewrites: */
    const char *rewrites;       /*   the refusal where it appears inside a kernel */
    /* e into p at the top of a def: its kernels. With scatter (fuses_scatter
     * only: a scatter of e's (index, value) pairs into p, whose destination
     * is in p already), each pair is written by e's own kernel, in the pass
     * scatter->pass says (the caller runs e once per pass). */
    void (*emit)(cg *g, const st_node *e, const cg_binding *env, const cg_place *p, const cg_scatter *scatter);
    bool fuses_scatter;
    /* where its kernels are used, text the shared parts carry once: */
    const char *int64_atomics;  /* OpenCL: why it needs 64-bit base atomics (a comment line), or NULL */
    const char *prelude;        /* kernels.cl and kernels.cu: its defines, before the shared prelude */
    void (*glue_prelude)(st_buf *out); /* host.c: what strata_run calls, before it, or NULL */
    /* after the launches: a fault its kernels record (cg_fault_of), which
     * strata_run returns as fault_name, fault_code, defined in every glue */
    int fault_code;
    const char *fault_name;
    const char *fault_when;     /* "what strata_run returns when …" */
    const char *fault_contract; /* its clause in the glue's contract, as wrapped there */
    /* the glue's lines for a fault of kernel `kernel`: msg and err (value: the recorded value) */
    void (*fault_glue)(st_buf *out, const char *kernel);
    /* scanTotal of its node where nothing else runs it: its kernels storing
     * the total alone, no copy of the whole; NULL: a
     * scanTotal of it is no different from any other's */
    void (*total_only)(cg *g, const st_node *e, const cg_binding *env, const cg_place *p);
} cg_algorithm;

/* ---- cg_lookback.c: a scan's total ---- */
/* scanTotal(s) into p: no kernel of its own; s's look-back kernel, which
 * the program runs after it (cg_total_runs_in), writes its total there. */
void cg_total_later(cg *g, const st_node *e, const cg_place *p);
/* Does body run the look-back scan of scanTotal e (up to bound names),
 * outside a scanTotal? */
bool cg_total_runs_in(const st_node *body, const st_node *e);
/* After the def: false (and g failed) when a scanTotal's scan never ran. */
bool cg_totals_written(cg *g);

extern const cg_algorithm cg_lookback_algorithm;  /* cg_lookback.c: scanLookback, the single-pass scan */
extern const cg_algorithm cg_histogram_algorithm; /* cg_histogram.c: subhistograms */
extern const cg_algorithm cg_partition_algorithm; /* cg_partition.c: partitionTiles */
/* partition_by inside a work-item, into p (its elements, its starts): sequentially */
void cg_partition_into(cg *g, const st_node *e, const cg_binding *env, const cg_place *p);
/* Every descriptor, NULL-terminated (cg.c). */
extern const cg_algorithm *const cg_algorithms[];
/* The descriptor of primitive p, or NULL when it makes no kernels of its own. */
const cg_algorithm *cg_algorithm_of(st_prim p);
/* The descriptor of e's primitive, or NULL (e no primitive, or none that
 * makes kernels of its own). */
const cg_algorithm *cg_algorithm_at(const st_node *e);
/* Is descriptor i of cg_algorithms used by the program? */
bool cg_uses_algorithm(const cg *g, uint32_t i);
/* e (a kernel-making primitive of descriptor a) into p at the top, with
 * the texts a needs marked used. */
void cg_run_algorithm(cg *g, const cg_algorithm *a, const st_node *e, const cg_binding *env, const cg_place *p,
                      const cg_scatter *scatter);
/* The name of a fault code a descriptor defines, or NULL. */
const char *cg_fault_name(int code);

/* ---- cg_fault.c: what a kernel finds wrong, reported by the glue ---- */
/* i (a C expression), checked against length: the name of a variable
 * holding it, 0 when it is out of range, which is then recorded as a fault
 * of the expression at (get) that the glue reports after the launch. */
const char *cg_checked_index(cg *g, const char *i, const st_size *length, const st_node *at);
/* d (a C expression, an integer divisor not known to be nonzero) checked:
 * where it is 0, a fault of the division at (a / or %, or the operator
 * applied) that the glue reports after the launch. */
void cg_checked_divisor(cg *g, const char *d, const st_node *at);
/* The current kernel records a's fault, with `value` (a C expression;
 * one site a kernel). */
void cg_fault_of(cg *g, const cg_algorithm *a, const char *value);
const char *cg_fault_prelude(const cg *g);            /* the kernels' st_fault, where one is used */
void cg_fault_zero(const cg *g, st_buf *out);         /* glue: the words zeroed, before the launches */
void cg_fault_glue(const cg *g, st_buf *out);         /* glue: after the last launch, what they recorded */

/* ---- cg_sizes.c: the sizes, checked in the glue before anything is allocated ---- */
void cg_size_note(cg *g, const st_size *s);           /* a text computes s (cg_size calls it) */
const char *cg_sizes_prelude(void);                   /* glue: strata_add … strata_bytes, strata_items, strata_sum */
/* glue: each noted size computed with every operation checked (the glue's
 * `int bad`, its scalars s_NAME read), returning STRATA_SIZE_OVERFLOW with
 * a sentence where one overflows */
void cg_sizes_checked(cg *g, st_buf *out);

/* ---- cg_compaction.c: is a look-back pass a compaction ---- */
enum { CG_LINEAR_MAX = 8 };
/* c + the sum of coef[i] * atom[i]: an i64 value, linear in the values it reads */
typedef struct cg_linear {
    int64_t c;
    uint32_t n;
    const st_node *atom[CG_LINEAR_MAX];
    int64_t coef[CG_LINEAR_MAX];
} cg_linear;
/* l += coef * atom; false when there is no room or it overflows */
bool cg_linear_add(cg_linear *l, const st_node *atom, int64_t coef);
/* A pass that counts the elements a test keeps and sends each kept one's
 * data to kept + (the kept ones before it) and each other one's nowhere (a
 * filter) or to others + (i - the kept ones before it) (a partition). The
 * elements are the data's, or zips whose leaves are the data and iotas (i).
 * Both starts read neither the element nor its count. */
typedef struct cg_compaction {
    const st_node *data; /* the array moved, or a zip of the arrays moved */
    bool partition;
    cg_linear kept, others;
} cg_compaction;
/* Is the scan of xs by fold from z, scattered by post ((acc, x) => (place,
 * value)), a compaction? */
bool cg_is_compaction(st_ctx *cx, const st_node *fold, const st_node *z, const st_node *post, const st_node *xs,
                      cg_compaction *out);

/* ---- cg_glue.c: the host glue ---- */
const char *cg_glue(cg *g);
/* glue, in a block: `err = CALL;` (call_fmt's text), and when it fails the
 * sentence `what` in msg and on to the end */
void cg_glue_call(st_buf *out, const char *what, const char *call_fmt, ...) __attribute__((format(printf, 3, 4)));
const char *cg_opencl(cg *g);
const char *cg_cuda(cg *g);                         /* the same kernels in CUDA C++ */

/* ---- cg_cuda.c: what the CUDA text changes ---- */
const char *cg_cuda_prelude(void);                  /* OpenCL's built-ins in CUDA */
void cg_cuda_translate(const char *opencl, st_buf *out); /* each __local made CUDA's */

#endif
