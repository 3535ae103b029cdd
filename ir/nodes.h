/* ir/nodes.h — strata's IR as a rewrite rule sees it: the part of ir/ir.h
 * that rewrite/plugin.h gives a plugin, and nothing of the rest (files,
 * locks, arenas, programs as files, values, .npy, inputs, the interpreter).
 *
 *   errors            values (st_err) carrying a location and a message
 *   strings           growable (st_buf), for a rule's texts
 *   context           one st_ctx owns every size, type and node; interned names
 *   sizes             symbolic array lengths in a normal form
 *   types, nodes      immutable and hash-consed: equal trees are equal pointers
 *   defs              what a rule reads of the def it rewrites
 *
 * Every function declared here is exported to plugins (cli/plugin-abi.map,
 * checked by the plugin suite). The library never prints and never exits:
 * every fallible call returns a failure (NULL or false) and fills an st_err
 * the caller passed in. */
#ifndef STRATA_IR_NODES_H
#define STRATA_IR_NODES_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

/* A place in a source file. line and col count from 1; line 0 means "no
 * particular place" (an error about a whole file or a command-line value). */
typedef struct st_loc {
    const char *file;
    int line, col;
} st_loc;

typedef enum st_err_kind {
    ST_ERR_USER,     /* bad input: syntax, types, sizes, files, values */
    ST_ERR_INTERNAL, /* out of memory or a broken invariant: exit code 2 */
    ST_ERR_RULE      /* a plugin's rule broke the contract of a rule (what it
                        returned cannot stand where its node stood, or it failed
                        with an internal error of its own): exit code 1, the
                        plugin being the user's, the message naming the rule.
                        It ends a rewrite as an internal error does: no `try`
                        or `<+` moves past it */
} st_err_kind;

typedef struct st_err {
    st_err_kind kind;
    st_loc loc;
    int arg;       /* node constructors: index of the offending argument, else -1 */
    bool mismatch; /* rewrite rules: the expression is not of the rule's shape (as
                      opposed to a shape that fits and a condition that fails) */
    char message[512];
    /* loc.file copied when the error is made: the name often lives in a
     * caller's buffer that is gone by the time the error is shown, and the
     * copy travels with the error (st_err_file, st_err_format read it) */
    char file[256];
} st_err;
/* The file the error names (its own copy of loc.file), or NULL; whether
 * that is `file` (a NULL file: never). */
const char *st_err_file(const st_err *err);
bool st_err_in(const st_err *err, const char *file);
/* Place err at loc, copying its file's name. */
void st_err_at(st_err *err, st_loc loc);

/* Fill *err (when err is not NULL) and return false, so that a failing
 * function can end with `return st_fail(err, loc, "...", ...);`. */
bool st_fail(st_err *err, st_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bool st_fail_internal(st_err *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* st_fail with the arguments of a variadic caller of its own. */
bool st_vfail(st_err *err, st_loc loc, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

/* ------------------------------------------------------------------------ */
/* Growable strings                                                         */
/* ------------------------------------------------------------------------ */

typedef struct st_buf {
    char *data; /* always NUL-terminated once anything was written */
    size_t len, cap;
    bool failed; /* an allocation failed; the text is truncated */
} st_buf;

void st_buf_printf(st_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void st_buf_put(st_buf *b, const char *s, size_t n);
void st_buf_puts(st_buf *b, const char *s);
void st_buf_free(st_buf *b);

/* ------------------------------------------------------------------------ */
/* Context                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct st_ctx st_ctx;

void *st_ctx_alloc(st_ctx *cx, size_t size); /* lives as long as the context */
/* A copy of size bytes at p, living as long as the context; NULL when out
 * of memory (or size is 0). */
void *st_ctx_copy(st_ctx *cx, const void *p, size_t size);
/* Interned strings: equal names are equal pointers. */
const char *st_intern(st_ctx *cx, const char *s, size_t len);
const char *st_intern_cstr(st_ctx *cx, const char *s);
/* A name not interned before in this context (so it captures nothing that was
 * parsed or built in it), made from base: "chunk" while that is unused, then
 * "chunk_1", "chunk_2"… */
const char *st_fresh_name(st_ctx *cx, const char *base);

/* ------------------------------------------------------------------------ */
/* Scalars                                                                  */
/* ------------------------------------------------------------------------ */

typedef enum st_scalar_kind {
    ST_BOOL,
    ST_I32,
    ST_U32,
    ST_I64,
    ST_U64,
    ST_F32,
    ST_F64,
    /* the narrow integers come last, so the kinds above keep their numbers */
    ST_I8,
    ST_U8,
    ST_I16,
    ST_U16,
    ST_SCALAR_KIND_COUNT
} st_scalar_kind;

typedef union st_scalar {
    bool b;
    int8_t i8;
    uint8_t u8;
    int16_t i16;
    uint16_t u16;
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    float f32;
    double f64;
    uint64_t bits; /* for hashing and comparison; set the whole union to 0 first */
} st_scalar;

const char *st_scalar_name(st_scalar_kind k);       /* "f32" */
bool st_scalar_from_name(const char *name, size_t len, st_scalar_kind *out);
size_t st_scalar_size(st_scalar_kind k);             /* bytes: 1 for bool */
bool st_scalar_is_int(st_scalar_kind k);             /* i8 u8 i16 u16 i32 u32 i64 u64 */
bool st_scalar_is_signed(st_scalar_kind k);
/* The unsigned integer kind of k's size (u32 for f32, u8 for bool): what
 * `bits` gives. */
st_scalar_kind st_scalar_unsigned(st_scalar_kind k);
bool st_scalar_is_float(st_scalar_kind k);
/* An integer kind's range as magnitudes: the largest value, and the largest
 * magnitude of a negative value (0 for an unsigned kind). */
void st_scalar_int_limits(st_scalar_kind k, uint64_t *max_pos, uint64_t *max_neg);
/* "0 to 255", "-128 to 127": for messages about values that do not fit */
void st_scalar_range_text(st_scalar_kind k, st_buf *out);
/* Reads a scalar from text ("42", "-1", "2.5", "true"); fails with a message
 * naming `what` when the text is not a value of kind k. */
bool st_scalar_parse(st_scalar_kind k, const char *text, const char *what, st_scalar *out,
                     st_err *err);
/* Writes a value so that st_scalar_parse reads back the same bits
 * (floats with enough digits; "inf", "-inf", "nan"). */
void st_scalar_format(st_scalar_kind k, st_scalar v, st_buf *out);
/* The scalar as a double / as an int64 (for indices and sizes). */
double st_scalar_as_f64(st_scalar_kind k, st_scalar v);
bool st_scalar_as_i64(st_scalar_kind k, st_scalar v, int64_t *out); /* false if out of range */

/* ------------------------------------------------------------------------ */
/* Symbolic sizes                                                           */
/* ------------------------------------------------------------------------ */

/* An array length: a polynomial with integer coefficients over atoms (size
 * variables, and floor division, modulo, powers and logarithms that do not
 * simplify). Sizes are hash-consed in normal form, so two sizes are equal
 * exactly when their pointers are.
 *
 * Divisibility facts (`where N % 256 == 0`) enter when a variable is made:
 * under that fact the variable N is the polynomial 256·⟨N/256⟩, where ⟨N/256⟩
 * is an exact-quotient atom. Then N/256*256 and N have the same normal form
 * and every later operation on sizes needs no facts. */
typedef struct st_size st_size;

typedef struct st_fact {
    const char *name; /* interned */
    int64_t divisor;  /* name % divisor == 0; divisor >= 2 */
} st_fact;

typedef struct st_facts {
    uint32_t n;
    const st_fact *items;
} st_facts;

/* A new fact list: `facts` plus name % divisor == 0 (merged by lcm when the
 * name already has one). NULL on overflow or out of memory. */
const st_facts *st_facts_add(st_ctx *cx, const st_facts *facts, const char *name,
                             int64_t divisor);
int64_t st_facts_divisor(const st_facts *facts, const char *name); /* 1 when none */

const st_size *st_size_const(st_ctx *cx, int64_t value);
/* The size variable `name` (interned) under `facts` (may be NULL). */
const st_size *st_size_var(st_ctx *cx, const st_facts *facts, const char *name);
/* Arithmetic in normal form. NULL with *err filled on overflow, a division by
 * zero, or a power or logarithm that is not defined. */
const st_size *st_size_add(st_ctx *cx, const st_size *a, const st_size *b, st_err *err);
const st_size *st_size_sub(st_ctx *cx, const st_size *a, const st_size *b, st_err *err);
const st_size *st_size_mul(st_ctx *cx, const st_size *a, const st_size *b, st_err *err);
const st_size *st_size_div(st_ctx *cx, const st_size *a, const st_size *b, st_err *err); /* floor */
const st_size *st_size_mod(st_ctx *cx, const st_size *a, const st_size *b, st_err *err);
const st_size *st_size_pow(st_ctx *cx, const st_size *base, const st_size *exp, st_err *err);
const st_size *st_size_log(st_ctx *cx, const st_size *base, const st_size *x, st_err *err); /* floor */

bool st_size_is_const(const st_size *s, int64_t *value);
/* True when b is a rounded up to a multiple of a constant c ≥ 1,
 * c·floor((a + c - 1) / c), so that a ≤ b (a padded length and its data). */
bool st_size_rounds_up(st_ctx *cx, const st_size *a, const st_size *b);
/* True when b is a rounded down to a multiple of a constant c ≥ 1,
 * c·floor(a / c), so that b ≤ a (the whole chunks of a length). */
bool st_size_rounds_down(st_ctx *cx, const st_size *a, const st_size *b);
/* s = ⌈a/c⌉, written ⌊(a + c − 1)/c⌋ for a constant c > 1 (the blocks of c
 * that cover a): ⌊a/c⌋, those a fills whole; NULL for any other form. */
const st_size *st_size_whole_blocks(st_ctx *cx, const st_size *s);
/* True when d provably divides s for every value of the variables. */
bool st_size_divides(const st_size *d, const st_size *s);
/* True when s is provably a whole power of `base` (a constant >= 2); *exp is
 * then log_base(s). */
bool st_size_is_power_of(st_ctx *cx, const st_size *s, int64_t base, const st_size **exp,
                         st_err *err);
/* Calls fn once per size variable occurring in s. */
void st_size_each_var(const st_size *s, void (*fn)(const char *name, void *data), void *data);
uint32_t st_size_hash(const st_size *s);

/* Existential sizes: a length known only at run time, such as what
 * filter(p, xs) keeps, printed `?k`. One is an atom of the polynomial like a
 * variable, so `N - ?k` and `?k + ?m` are sizes too. It is pure: its
 * identity is the pair of pointers that make it (filter: its predicate and
 * array nodes; take and drop: the count node and the source's length), so
 * the same expression built twice has the same size. It carries its bound,
 * the worst-case length (the length of the array it was cut from), which is
 * what memory is allocated for; and a name, unique in the context, made when
 * the existential is first built (st_fresh_name of `base`, "k" when NULL):
 * the name an interpreter or host code binds its value to in st_binding
 * arrays (so st_size_eval evaluates a size mentioning it once it is bound),
 * and a valid C identifier. An existential is passed around as the size 1·?k
 * (st_size_is_exist); a size mentioning it is evaluated, printed and compared
 * like any other. */
const st_size *st_size_exist(st_ctx *cx, const void *origin0, const void *origin1, const st_size *bound,
                             const char *base, st_err *err);
/* The same, named `name` itself rather than a fresh name: take(k, xs) of a
 * variable k that is no size names its ?k after k, whose value it is, so a
 * program a rule rebuilt as `let k = <count> in take(k, res)` (k made by
 * st_var with the filter's existential as its size and that existential's
 * name) prints `[?k]t` and reads back to `[?k]t`. */
const st_size *st_size_exist_named(st_ctx *cx, const void *origin0, const void *origin1, const st_size *bound,
                                   const char *name, st_err *err);
/* `?name` written in a declared result (name interned with its `?`): no
 * origin, no bound; the type checker matches it with a body's existential. */
const st_size *st_size_exist_written_new(st_ctx *cx, const char *name, st_err *err);
bool st_size_is_exist(const st_size *s);        /* exactly one existential, 1·?k */
bool st_size_exist_written(const st_size *exist); /* one of st_size_exist_written_new's */
const st_size *st_size_exist_bound(const st_size *exist); /* its worst case; NULL if written */
const char *st_size_exist_name(const st_size *exist);     /* interned, without the `?` */
bool st_size_has_exist(const st_size *s);
/* Calls fn once per existential in s (each as 1·?k), bounds not entered. */
void st_size_each_exist(const st_size *s, void (*fn)(const st_size *exist, void *data), void *data);
/* s with each existential from[i] (1·?k) replaced by the size to[i]. */
const st_size *st_size_replace_exist(st_ctx *cx, const st_size *s, const st_size *const *from,
                                     const st_size *const *to, size_t n, st_err *err);
/* The largest value s can take: each existential at (the upper bound of) its
 * bound where its term's coefficient is positive, at 0 where negative (N -
 * ?k is at most N). What codegen allocates for. */
const st_size *st_size_upper(st_ctx *cx, const st_size *s, st_err *err);

/* Concrete values of size variables, for evaluation at run time. */
typedef struct st_binding {
    const char *name; /* interned */
    int64_t value;
} st_binding;

bool st_size_eval(const st_size *s, const st_binding *env, size_t nenv, int64_t *out,
                  st_err *err);
/* Replace variables by concrete values (the program specialised to a size). */
const st_size *st_size_subst(st_ctx *cx, const st_size *s, const st_binding *env, size_t nenv,
                             st_err *err);

/* The size as surface syntax (`N/256`, `2*N + 1`, `pow(2, K)`); the parser
 * reads it back to the same normal form under the same facts. */
void st_size_print(const st_size *s, st_buf *out);

/* ------------------------------------------------------------------------ */
/* Types                                                                    */
/* ------------------------------------------------------------------------ */

typedef enum st_type_kind {
    ST_TYPE_SCALAR,
    ST_TYPE_TUPLE,
    ST_TYPE_ARRAY,
    ST_TYPE_FUN /* the type of a lambda or operator argument; never a value */
} st_type_kind;

typedef struct st_type st_type;
struct st_type {
    st_type_kind kind;
    uint32_t hash;
    st_scalar_kind scalar;          /* SCALAR */
    const st_size *size;            /* ARRAY: the length */
    const st_type *elem;            /* ARRAY: the element; FUN: the result */
    uint32_t n;                     /* TUPLE: components; FUN: parameters */
    const st_type *const *items;    /* TUPLE components; FUN parameter types */
};

const st_type *st_type_scalar(st_ctx *cx, st_scalar_kind k);
const st_type *st_type_tuple(st_ctx *cx, uint32_t n, const st_type *const *items);
const st_type *st_type_array(st_ctx *cx, const st_size *size, const st_type *elem);
const st_type *st_type_fun(st_ctx *cx, uint32_t nparams, const st_type *const *params,
                           const st_type *result);
bool st_type_is_scalar(const st_type *t, st_scalar_kind k);
bool st_type_is_int(const st_type *t); /* an integer scalar */
/* a scalar or a tuple of scalars: what fits a register or a C struct, no array inside */
bool st_type_is_plain(const st_type *t);
/* an array, or a tuple of arrays (what unzip gives): a value that needs memory */
bool st_type_holds_arrays(const st_type *t);
/* Is there an f32 or f64 anywhere in t (its elements, its components)? */
bool st_type_holds_float(const st_type *t);
void st_type_print(const st_type *t, st_buf *out); /* "[N](i32, f32)" */

/* ------------------------------------------------------------------------ */
/* Expression nodes                                                         */
/* ------------------------------------------------------------------------ */

typedef enum st_binop {
    ST_OP_ADD, ST_OP_SUB, ST_OP_MUL, ST_OP_DIV, ST_OP_MOD,
    ST_OP_EQ, ST_OP_NE, ST_OP_LT, ST_OP_LE, ST_OP_GT, ST_OP_GE,
    ST_OP_AND, ST_OP_OR,
    ST_OP_BAND, ST_OP_BOR, ST_OP_BXOR, ST_OP_SHL, ST_OP_SHR,
    ST_OP_MIN, ST_OP_MAX,
    ST_OP_POW,   /* a ** b: numbers; an integer's negative power is 1 / a^|b| toward zero */
    ST_OP_ATAN2, /* atan2(y, x): floats */
    ST_BINOP_COUNT
} st_binop;

/* - and !, then the functions: `sqrt`, `exp`, `log` (floats), `abs`
 * (numbers; an integer's minimum is its own abs, as its negation wraps),
 * the trigonometric and hyperbolic functions and the roundings to an
 * integral value (floats to floats of the same type), the tests
 * `isnan` and `isinf` (floats to bool), and `bits` (numbers to the unsigned
 * integer of their size holding their bit pattern: f32 to u32 and f64 to u64
 * as IEEE 754 lays them out, i8 to u8 … i64 to u64 as two's complement; what
 * a radix sort of floats orders, once flipped). */
typedef enum st_unop {
    ST_OP_NEG, ST_OP_NOT, ST_OP_SQRT, ST_OP_EXP, ST_OP_LOG, ST_OP_ABS,
    ST_OP_SIN, ST_OP_COS, ST_OP_TAN, ST_OP_ASIN, ST_OP_ACOS, ST_OP_ATAN, ST_OP_SINH, ST_OP_COSH, ST_OP_TANH,
    ST_OP_FLOOR, ST_OP_CEIL, ST_OP_ROUND, ST_OP_TRUNC,
    ST_OP_ISNAN, ST_OP_ISINF,
    ST_OP_BITS,
    ST_UNOP_COUNT
} st_unop;
/* The name a function unop is called by (`sqrt`), or NULL for - and !. */
const char *st_unop_function(st_unop op);
/* A function of a float to a float of its type (sqrt … trunc, not abs). */
bool st_unop_is_float_function(st_unop op);
/* isnan and isinf: a float to a bool. */
bool st_unop_is_float_test(st_unop op);

const char *st_binop_name(st_binop op); /* "+", "&&", "min" */
/* Is it written as a call, `min(a, b)`, rather than between its operands? */
bool st_binop_is_call(st_binop op);
/* C's precedence, 1 (||) to 10 (* / %), and 11 for **, which groups to the
 * right; 0 for min, max and atan2, which are calls. */
int st_binop_precedence(st_binop op);

/* The primitives. The table in ir/prim.c says, for each, its surface name,
 * the forms of its arguments and whether it is written in pipeline form
 * (`xs |> scan(+, 0)`). Arguments are in surface order: the array (data)
 * argument comes last. */
typedef enum st_prim {
    /* high level */
    ST_PRIM_MAP,             /* map(f, xs) */
    ST_PRIM_REDUCE,          /* reduce(op, z, xs): a left fold from z
                                reduce(op, fold, z, xs): fold each element in, fold(a, x) = op(a, f(x)) */
    ST_PRIM_SCAN,            /* scan(op, z, xs): inclusive, seeded by z
                                scan(op, fold, z, xs): "scanomap", the scan of map(f, xs) with
                                  fold(a, x) = op(a, f(x)) reading xs directly
                                scan(op, fold, post, z, xs): "maposcanomap", element i is
                                  post(acc_i, x_i), acc_i the fold up to and including x_i */
    ST_PRIM_SPLIT,           /* split(k, xs): [n]t -> [n/k][k]t, k | n */
    ST_PRIM_JOIN,            /* join(xs): [a][b]t -> [a*b]t */
    ST_PRIM_ZIP,             /* zip(xs, ys, ...) */
    ST_PRIM_UNZIP,           /* unzip(xs) */
    ST_PRIM_IOTA,            /* iota(n): [n]i64 */
    ST_PRIM_REPLICATE,       /* replicate(n, x) */
    ST_PRIM_TRANSPOSE,       /* transpose(xs): [a][b]t -> [b][a]t */
    ST_PRIM_SCATTER,         /* scatter(dest, is, vs), or scatter(dest, ivs) from (index, value)
                                pairs: a map into the destination, which a scan can feed */
    ST_PRIM_REDUCE_BY_INDEX, /* reduce_by_index(dest, f, z, is, vs) */
    ST_PRIM_ITERATE,         /* iterate(k, f, x): f applied k times, f: t -> t */
    ST_PRIM_GET,             /* get(i, xs): the i-th element */
    /* low level: the OpenCL mapping; same meaning as their high-level forms */
    ST_PRIM_MAP_SEQ,
    ST_PRIM_REDUCE_SEQ,      /* reduceSeq(f, z, xs): f: (a, t) -> a, a fold */
    ST_PRIM_SCAN_SEQ,        /* scanSeq(f, z, xs):   f: (a, t) -> a, [n]a */
    ST_PRIM_MAP_GLB,
    ST_PRIM_MAP_WRG,
    ST_PRIM_MAP_LCL,
    ST_PRIM_TO_GLOBAL,       /* address-space annotations: the value itself */
    ST_PRIM_TO_LOCAL,
    ST_PRIM_TO_PRIVATE,
    ST_PRIM_SCAN_LOOKBACK,   /* scanLookback(M, WG, LW, LOAD, op, [fold, [post,]] z, xs): a scan in
                                every form of scan's, as one kernel with decoupled look-back
                                (codegen/cg_lookback.c): M elements per work-item, WG work-items
                                per group, LW work-items reading predecessors at once, LOAD 0 to
                                load and store through local memory, 1 to have each work-item
                                read and write its own elements; all literals (appended here so
                                that plugins built against the values before it keep their
                                meaning) */
    ST_PRIM_SUBHISTOGRAMS,   /* subhistograms(C, MEM, ATOMIC, dest, op, z, is, vs): reduce_by_index
                                (its operator associative and commutative) computed in subhistograms
                                (codegen/cg_histogram.c): C work-items cooperate on each (0: the
                                thesis' heuristic), MEM 0 local when it fits else global, 1 global,
                                2 local, ATOMIC 0 what the operator allows, 1 a hardware atomic,
                                2 a compare-and-swap loop, 3 a lock; all literals */
    ST_PRIM_REDUCE_BY_INDEX_2D, /* reduce_by_index_2d(dest, f, z, is, vs): dest [n][m]t, is [k](int, int)
                                pairs (row, column), vs [k]t; a pair out of bounds in either
                                coordinate is ignored. lower-opencl (st_flatten_2d) makes it the
                                1-D one over join(dest) at r*m + c */
    ST_PRIM_SCATTER_2D,      /* scatter_2d(dest, is, vs): likewise, a scatter */
    ST_PRIM_EXSCAN,          /* exscan(op, z, xs): exclusive, Futhark's: element 0 is z, element i
                                z op x0 op … op x_{i-1}; z the neutral element of op. The
                                interpreter runs it as it is; every rewrite first makes it the
                                scan of its input shifted right by one (st_exscans_as_scans in
                                rewrite/rewrite.h), so every scan rule and codegen take it.
                                Only this plain form: Futhark has no other, and the fused
                                forms (a fold, a post-function) arise on the scan it becomes */
    ST_PRIM_LOOP,            /* loop(n, f, x): `loop acc = x for i < n do body`, f = (i, acc) => body,
                                f: (i64, t) -> t applied for i = 0 .. n-1; the final acc */
    ST_PRIM_WHILE,           /* while(c, f, x): `loop acc = x while c do body`, c: t -> bool,
                                f: t -> t applied while c holds; the final acc. Both are
                                written only as loops (the printer's and parser's form) */
    /* lengths known only at run time (existential sizes, st_size_exist); each
     * only at the top of a def or of a top-level loop's body, never in a lambda */
    ST_PRIM_FILTER,          /* filter(p, xs): p: t -> bool, xs: [n]t -> [?k]t, the elements
                                satisfying p in order; ?k made from (p, xs), bound n */
    ST_PRIM_PARTITION,       /* partition(p, xs): ([?k]t, [n - ?k]t), stable: those satisfying p
                                first (filter's ?k), then the rest */
    ST_PRIM_TAKE,            /* take(k, xs): the first k, [?k]t, k an i64 with 0 <= k <= n at run
                                time; ?k made from (k, n), bound n, or the size k denotes when it
                                denotes one (st_node_as_size: a size expression, or a variable
                                whose `size` is an existential) */
    ST_PRIM_DROP,            /* drop(k, xs): all but the first k, [n - ?k]t, take's ?k */
    ST_PRIM_CONCAT,          /* concat(xs, ys): [a]t, [b]t -> [a + b]t */
    ST_PRIM_SCAN_TOTAL,      /* scanTotal(s): s a scan, scanSeq or scanLookback of any form, the fold of all
                                of its input from its z (its z when the input is empty): the
                                total its inclusive scan reaches, whatever its post-function
                                writes. s is not computed for it: a look-back scan s that the
                                program runs writes its total (its last group's inclusive
                                prefix) where scanTotal(s) lives, as part of its one kernel
                                (codegen/cg_lookback.c); any other is s's fold in one work-item.
                                The rule reduce-as-scan-total makes it */
    ST_PRIM_SCRATCH,         /* scratch(n, x): replicate(n, x) to the interpreter; codegen allocates it
                                and writes nothing, so on the device an element not written before
                                it is read is unspecified. A rule makes it only where every
                                element the program observes is written first (filter-scatter's
                                buffer: the kept ones, the places 0..k-1, before take(k, ·)) */
    ST_PRIM_SCATTER_DISTINCT, /* scatterDistinct(dest, is, vs), scatterDistinct(dest, ivs): a scatter whose
                                indices in bounds are distinct, so that no order of its writes
                                matters. A plain scatter's repeated index keeps its last write in
                                index order, on the device too, which costs codegen a pass that
                                finds each place's last writer; this one writes as its elements
                                come. A rule makes it where it knows the indices are distinct
                                (filter-scatter's and partition-scatter's places, counted by a scan
                                of flags); the interpreter checks that they are, and fails where
                                two elements write one place */
    ST_PRIM_PARTITION_BY,    /* partition_by(k, f, xs): ([n]t, [k]i64), xs grouped by bucket f(x) in
                                [0, k) (an integer; one below 0 counts as 0, one above k - 1 as
                                k - 1), stable within a bucket, and each bucket's first place:
                                element b of the second is how many elements have a bucket below
                                b. k is a literal from 1 to ST_PARTITION_BY_MAX_BUCKETS */
    ST_PRIM_PARTITION_TILES, /* partitionTiles(TILE, WG, k, f, xs): partition_by in tiles of TILE
                                elements a work-item, WG work-items a group (each 0: the device's
                                choice when the program runs), each
                                tile's buckets counted, the counts scanned bucket by bucket, then
                                each tile's elements scattered to their places
                                (codegen/cg_partition.c); the rule partition-tiles makes it */
    ST_PRIM_SORT,            /* sort(xs): xs's numbers in ascending order, stable; floats by their
                                bits (st_scalar_order_key): -nan < -inf < … < -0 < +0 < … < inf < nan */
    ST_PRIM_SORT_BY_KEY,     /* sort_by_key(ks, vs): (ks sorted as sort does, vs in the same order),
                                stable: equal keys keep their values' order */
    ST_PRIM_COUNT
} st_prim;

/* scanLookback's leading sizes (M, WG, LW, LOAD); what follows them is a scan's. */
enum { ST_LOOKBACK_SIZES = 4 };
/* subhistograms' leading sizes (C, MEM, ATOMIC) and their values; what
 * follows them is a reduce_by_index's. */
enum { ST_HIST_SIZES = 3 };
/* partitionTiles' leading sizes (TILE, WG); what follows them is a partition_by's.
 * partition_by's most buckets: a work-item's counts, one per bucket, stay
 * in its cache. */
enum { ST_PARTITION_TILES_SIZES = 2, ST_PARTITION_BY_MAX_BUCKETS = 65536 };
/* A primitive that is another after leading literal sizes, its choices
 * (scanLookback a scan, subhistograms a reduce_by_index): that other, with
 * the count in *nsizes; any other primitive is itself, with 0. The type
 * checker, the interpreter and codegen read such a primitive as its other
 * after the sizes. */
st_prim st_prim_after_sizes(st_prim p, uint32_t *nsizes);
/* Does p make kernels of its own (scanLookback, subhistograms)? Such a node
 * is not an expression a kernel can evaluate: it runs only at the top of a
 * def, between kernels, and whatever reads it reads its result from memory. */
bool st_prim_makes_kernels(st_prim p);
/* filter, partition, take, drop, concat: the primitives whose results may
 * have lengths known only at run time, allowed only at the top of a def or
 * of a top-level loop's body (each element of a map would have its own). */
bool st_prim_sizes_at_run_time(st_prim p);
typedef enum st_hist_mem { ST_HIST_MEM_AUTO, ST_HIST_MEM_GLOBAL, ST_HIST_MEM_LOCAL } st_hist_mem;
typedef enum st_hist_atomic { ST_HIST_AUTO, ST_HIST_ADD, ST_HIST_CAS, ST_HIST_XCHG } st_hist_atomic;

/* How the type checker treats an argument of a primitive. */
typedef enum st_arg_role {
    ST_ARG_DATA,    /* checked first, needs nothing from the others */
    ST_ARG_NEUTRAL, /* a value whose expected type may follow from the data */
    ST_ARG_FUN      /* a lambda or operator whose parameter types follow from the rest */
} st_arg_role;

typedef struct st_prim_info {
    const char *name;
    const char *forms[3]; /* the roles of each accepted form, one letter per argument:
                             'd' data, 'n' neutral, 'f' function; NULL-terminated */
    bool variadic;        /* the last argument of the form repeats (zip) */
    bool pipeline;        /* printed as `last |> name(rest)` */
    bool low_level;
} st_prim_info;

const st_prim_info *st_prim_get(st_prim p);
bool st_prim_from_name(const char *name, size_t len, st_prim *out);
/* Does p accept nargs arguments? Its arities in words ("3, 4 or 5"). */
bool st_prim_takes(st_prim p, uint32_t nargs);
void st_prim_describe_arity(st_prim p, char *buf, size_t cap);
st_arg_role st_prim_arg_role(st_prim p, int arg, uint32_t nargs);
/* The argument whose (element) type a primitive's neutral element and
 * function parameters follow: the destination of reduce_by_index, else the
 * last argument. */
int st_prim_data_arg(st_prim p, uint32_t nargs);

typedef enum st_node_kind {
    ST_NODE_LIT,    /* a typed scalar literal */
    ST_NODE_VAR,    /* a variable: name, type, and the size it stands for if any */
    ST_NODE_TUPLE,  /* kids: the components */
    ST_NODE_PROJ,   /* kids[0].index */
    ST_NODE_UNOP,   /* kids: [a] */
    ST_NODE_BINOP,  /* kids: [a, b]; also min and max */
    ST_NODE_CONV,   /* kids: [a]; conversion to the scalar type `conv` */
    ST_NODE_IF,     /* kids: [cond, then, else] */
    ST_NODE_LET,    /* kids: [var_1 .. var_k, value, body]; k > 1 destructures a tuple */
    ST_NODE_LAMBDA, /* kids: [param_1 .. param_k, body] */
    ST_NODE_OPFN,   /* an operator used as a binary function: `+` on a scalar type */
    ST_NODE_PRIM    /* kids: the arguments in surface order */
} st_node_kind;

typedef struct st_node st_node;
struct st_node {
    st_node_kind kind;
    uint32_t hash;
    const st_type *type; /* every node is typed; lambdas and OPFN have FUN types */
    union {
        st_scalar lit;      /* LIT (its kind is type->scalar) */
        const char *name;   /* VAR, interned */
        st_binop binop;     /* BINOP, OPFN */
        st_unop unop;       /* UNOP */
        uint32_t index;     /* PROJ */
        st_scalar_kind conv;/* CONV */
        st_prim prim;       /* PRIM */
    } u;
    /* VAR of integer type whose value is known to be this size (a size
     * variable, an integer parameter used as a size, a let-bound size
     * expression); NULL otherwise. Part of the variable's identity. */
    const st_size *size;
    uint32_t depth; /* of the tree below, leaves 1: what every recursive pass costs */
    uint32_t nkids;
    const st_node *kids[];
};

/* The deepest expression the parser reads back (and so the deepest a
 * rewrite may produce: what strata prints, it must read). */
enum { ST_MAX_DEPTH = 1000 };

/* Node constructors. Each computes the node's type from its parts and fails
 * (NULL, *err filled, err->arg the offending argument) when they do not fit:
 * this is the one place where the typing rules live. */
const st_node *st_lit(st_ctx *cx, st_scalar_kind k, st_scalar value);
const st_node *st_lit_int(st_ctx *cx, st_scalar_kind k, int64_t value);
const st_node *st_var(st_ctx *cx, const char *name, const st_type *type, const st_size *size);
/* The variable `let name = value` binds: value's type, and the size it
 * stands for when value is an integer size expression (so that
 * `let n = N / 2 in replicate(n, 0)` types). The type checker and every
 * rewrite bind through this, so a printed program reads back the same. */
const st_node *st_let_var(st_ctx *cx, const char *name, const st_node *value);
const st_node *st_tuple(st_ctx *cx, uint32_t n, const st_node *const *items, st_err *err);
const st_node *st_proj(st_ctx *cx, const st_node *tuple, uint32_t index, st_err *err);
const st_node *st_unary(st_ctx *cx, st_unop op, const st_node *a, st_err *err);
const st_node *st_binary(st_ctx *cx, st_binop op, const st_node *a, const st_node *b,
                        st_err *err);
const st_node *st_conv(st_ctx *cx, st_scalar_kind to, const st_node *a, st_err *err);
const st_node *st_if(st_ctx *cx, const st_node *c, const st_node *a, const st_node *b,
                     st_err *err);
const st_node *st_let(st_ctx *cx, uint32_t nvars, const st_node *const *vars,
                      const st_node *value, const st_node *body, st_err *err);
const st_node *st_lambda(st_ctx *cx, uint32_t nparams, const st_node *const *params,
                         const st_node *body, st_err *err);
const st_node *st_opfn(st_ctx *cx, st_binop op, st_scalar_kind k, st_err *err);
/* The binary operator the function f is: an operator used as a function (`+`),
 * or a lambda of two parameters applying one to them in either order
 * (`(a, b) => b + a`); false for any other function. */
bool st_fn_binop(const st_node *f, st_binop *out);
/* ir/neutral.c: the neutral element of b on kind k, when it has one strata
 * knows (+ * & | ^ min max on numbers, && || on bools); whether z is the
 * literal e (a float by value: 0.0 and -0.0 alike); whether z is the
 * literal neutral element of b. */
bool st_binop_neutral(st_binop b, st_scalar_kind k, st_scalar *out);
bool st_is_scalar_literal(const st_node *z, st_scalar_kind k, st_scalar e);
bool st_is_neutral_of(const st_node *z, st_binop b);
/* Is n an integer literal (not a bool)? Its value in *v. */
bool st_int_literal(const st_node *n, int64_t *v);
const st_node *st_prim_node(st_ctx *cx, st_prim p, uint32_t nargs, const st_node *const *args,
                            st_err *err);

/* What a primitive expects of argument `arg` once the arguments it depends
 * on are typed (`types[i]` NULL for those not typed yet; data first, then
 * neutral elements, then functions): for a neutral argument its type in
 * params[0] (NULL when it is free, as with a fold; *nparams 0); for a
 * function argument its parameter types and, in *result, the type it must
 * return (NULL when any). A function given one tuple may be a lambda with one
 * parameter per component. */
bool st_prim_expect(st_ctx *cx, st_prim p, int arg, const st_type *const *types, int ntypes,
                    const st_type **params, int *nparams, const st_type **result, st_err *err);

/* Where a node was written, for messages: the place of the expression the
 * type checker made it from, or, for a node a rewrite made, the place of
 * the node it replaced; (st_loc){0} when it has none. Places are kept in
 * the context beside the nodes, not in them (a place is no part of a
 * node's identity): a subtree written at two places is one node, placed
 * where it was met first. */
st_loc st_node_loc(const st_ctx *cx, const st_node *n);
/* n's place, or fallback (a def's) when it has none. */
st_loc st_node_loc_or(const st_ctx *cx, const st_node *n, st_loc fallback);
/* Give n, and the nodes below it that have no place yet, the place loc
 * (a node with a place keeps it, and so do the nodes below it: what a
 * rewrite kept of its input). Returns n; a loc of line 0 does nothing. */
const st_node *st_node_place(st_ctx *cx, const st_node *n, st_loc loc);
/* st_node_place(cx, n, st_node_loc(cx, old)): n made to replace old (NULL
 * n or old: n unchanged). */
const st_node *st_node_placed_like(st_ctx *cx, const st_node *n, const st_node *old);

/* The most kids a node has (a primitive's arguments, a let's or lambda's
 * variables): the constructors refuse more, so an array of ST_MAX_KIDS on
 * the stack holds any node's kids. */
#define ST_MAX_KIDS 64

/* n with its kids replaced (same count, same types), through the constructor
 * of its kind: how traversals rebuild the path above a rewritten node. */
const st_node *st_rebuild(st_ctx *cx, const st_node *n, const st_node *const *kids, st_err *err);
/* n with kid i alone replaced by kid (of the same type), through st_rebuild. */
const st_node *st_replace_kid(st_ctx *cx, const st_node *n, uint32_t i, const st_node *kid, st_err *err);
/* Is n a node cx made, as its constructors made it: the one node cx holds
 * for n's contents (kind, type, payload, kids), its hash and depth those of
 * its contents? What a rule returns is checked with this (rewrite/result.c),
 * so the message says what went wrong: NULL when n is cx's, else why not,
 * to follow "the node": "was changed after it was built", "is a copy of one
 * of the context's nodes, …" or "was not made in the context …". Reads n
 * and its kids' fields, nothing deeper. */
const char *st_node_not_own(const st_ctx *cx, const st_node *n);
/* Do x and y, of one kind, carry the same payload (a literal's bits, a
 * variable's name, an operator, a projection's index, a conversion, a
 * primitive)? Kids and types are not compared. */
bool st_same_payload(const st_node *x, const st_node *y);

/* The size an integer expression denotes (literals, size variables, integer
 * parameters, let-bound sizes, and + - * / % and integer conversions of
 * those), or NULL when it is not one. */
const st_size *st_node_as_size(st_ctx *cx, const st_node *e, st_err *err);

/* Is e a view: built only from variables, literals, tuples and projections,
 * scalar operators (a scalar `if` among them), split, join, zip, unzip,
 * transpose, iota, replicate and get, and index maps: `iota(n) |> map(i =>
 * body)` with body a scalar or tuple of scalars built from those (and
 * scalar lets), such as the padding `if i < n then xs |> get(i) else z`
 * that pad-scan makes? Codegen reads a view as index
 * arithmetic over what it views; it needs no memory of its own. With
 * placed_is_memory, toGlobal/toLocal/toPrivate(x) counts as memory already
 * there (as lowering sees it); without, as a request for memory (as codegen
 * does), so not a view. */
bool st_is_view(const st_node *e, bool placed_is_memory);

/* Is e a scalar (or a tuple of scalars) computed from views alone, scalar
 * lets among them, and nothing placed (toLocal(x) is a computation here):
 * what one element costs when it costs no loop and no memory of its own. */
bool st_is_view_scalar(const st_node *e);

/* Is e a loop (loop or while) over arrays: an array anywhere in its
 * accumulator (`(xs, 0)` too, its scalar then in memory of one element), or
 * a body, count or condition that works over a whole array outside its
 * lambdas (`acc + reduce(+, 0, xs)`: a map, fold, scan, scatter or filter,
 * not a get)? At the top of a def such a loop runs there: lowering keeps
 * its body at the host's level, codegen has the glue run the body's
 * kernels each turn (a scalar accumulator in memory of one element), and
 * the rewrite engine counts its body as the top level. Any other loop runs
 * in one work-item: a loop that only reads elements (`acc + xs[i]`) is
 * cheaper there than a kernel a turn. */
bool st_is_array_loop(const st_node *e);

/* Is n (which may be NULL) the primitive p? */
static inline bool st_is_prim(const st_node *n, st_prim p) {
    return n && n->kind == ST_NODE_PRIM && n->u.prim == p;
}

/* Is n a 1-D scatter, plain or of distinct indices (scatterDistinct)? */
static inline bool st_is_scatter(const st_node *n) {
    return st_is_prim(n, ST_PRIM_SCATTER) || st_is_prim(n, ST_PRIM_SCATTER_DISTINCT);
}

/* A scan or a reduce in any of its forms, decoded in one place:
 *   scan, reduce  (op, z, xs), (op, fold, z, xs); scan also (op, fold, post, z, xs)
 *   scanSeq, reduceSeq  (f, z, xs), f a fold: fold = f, op NULL
 *   scanLookback  the scan's form after its leading sizes
 * fold(acc, x) folds an element into the accumulator (op(acc, f(x)) where a
 * map was fused in), op combines two accumulators, post(acc, x) makes the
 * element written; fold and post NULL when absent. */
typedef struct st_scan_form {
    const st_node *op, *fold, *post, *z, *xs;
} st_scan_form;

/* e's parts when it is one of the primitives above; false otherwise. */
bool st_fold_form_of(const st_node *e, st_scan_form *f);
/* What folds one element into the accumulator: the fold, else the operator. */
static inline const st_node *st_fold_step(const st_scan_form *f) { return f->fold ? f->fold : f->op; }

/* Is kid i of n a variable n binds (a let's pattern, a lambda's parameter)?
 * Traversals pass over those: they are names, not expressions. */
static inline bool st_is_binder(const st_node *n, uint32_t i) {
    return (n->kind == ST_NODE_LET && i + 2 < n->nkids) || (n->kind == ST_NODE_LAMBDA && i + 1 < n->nkids);
}

static inline const st_node *st_let_value(const st_node *n) { return n->kids[n->nkids - 2]; }
static inline const st_node *st_let_body(const st_node *n) { return n->kids[n->nkids - 1]; }
static inline uint32_t st_let_nvars(const st_node *n) { return n->nkids - 2; }
static inline const st_node *st_lambda_body(const st_node *n) { return n->kids[n->nkids - 1]; }
static inline uint32_t st_lambda_nparams(const st_node *n) { return n->nkids - 1; }

/* ------------------------------------------------------------------------ */
/* Defs                                                                     */
/* ------------------------------------------------------------------------ */

/* A condition on sizes that the type checker could not decide, checked
 * against the inputs (st_inputs_finish): lo <= hi, as a slice needs
 * (`xs[a:b]`: 0 <= a <= b <= length). `what` names it, loc places it. */
typedef struct st_bound {
    const st_size *lo, *hi;
    st_loc loc;
    const char *what;
} st_bound;

typedef struct st_def {
    const char *name;
    st_loc loc;
    uint32_t nparams;
    const st_node *const *params;   /* VAR nodes, in order */
    uint32_t nsizes;
    const st_node *const *sizes;    /* implicit size variables (VAR, i64), bound from
                                       array lengths, in order of first appearance */
    const st_facts *facts;          /* the `where` clause; never NULL */
    bool declared_result;           /* the source wrote `: type` */
    const st_type *result;
    const st_node *body;
    uint32_t nbounds;               /* the slices' bounds left to check at run time */
    const st_bound *bounds;
} st_def;

/* An i64 expression denoting size s inside def (its size variables and
 * integer parameters in scope): `N / 256`, `2 * N + 1`. NULL with *err when
 * s uses pow or log, which expressions cannot write. */
const st_node *st_size_expr(st_ctx *cx, const st_def *def, const st_size *s, st_err *err);

/* The node in the surface syntax. */
void st_print_node(const st_node *n, st_buf *out);

#endif
