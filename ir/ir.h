/* ir/ir.h — the public interface of strata's IR stage.
 *
 * Everything a later stage (rewrite, strategies, codegen, explore) needs to
 * read, build, check, print and run programs: ir/nodes.h (what a rewrite
 * rule sees, which a plugin gets alone) and the rest:
 *
 *   context & arena   one st_ctx owns every size, type and node; nothing is
 *                     freed one by one, st_ctx_free releases it all
 *   errors            values (st_err) carrying a location and a message
 *   sizes             symbolic array lengths in a normal form
 *   types, nodes      immutable and hash-consed: equal trees are equal pointers
 *   programs          parsed and type-checked from the surface syntax, printed
 *                     back to it
 *   values            runtime arrays for the reference interpreter and .npy I/O
 *
 * The library never prints and never exits: every fallible call returns a
 * failure (NULL or false) and fills an st_err the caller passed in.
 */
#ifndef STRATA_IR_H
#define STRATA_IR_H

#include "ir/nodes.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------------ */
/* Growable arrays, pointer maps, messages, files, locks                    */
/* ------------------------------------------------------------------------ */

/* Room for one more element in a growable array: *items_ptr (the address
 * of the array's pointer) holds n elements of elem bytes in room for *cap;
 * when full it doubles (from `first`). false when out of memory, the array
 * as it was. */
bool st_grow(void *items_ptr, size_t elem, size_t n, size_t *cap, size_t first);

/* A map from pointers (nodes, interned names) to words, for walks over the
 * IR: it is a DAG, so a walk memoises by node. Zeroed is empty; keys are
 * never NULL. st_ptrmap_put returns false when out of memory. */
typedef struct st_ptrmap {
    const void **keys;
    uintptr_t *vals;
    size_t cap, count;
} st_ptrmap;

bool st_ptrmap_get(const st_ptrmap *m, const void *key, uintptr_t *val);
bool st_ptrmap_put(st_ptrmap *m, const void *key, uintptr_t val);
void st_ptrmap_free(st_ptrmap *m);

/* "FILE:LINE:COL: error: MESSAGE", then, when the source text is given and
 * the error has a line, that line and a caret under the column. */
void st_err_format(const st_err *err, const char *source, size_t source_len, st_buf *out);

/* The up to `max` names of `candidates` closest to `name` by edit distance,
 * close enough to be a plausible typo; returns how many were written. */
int st_closest_names(const char *name, const char *const *candidates, int ncandidates,
                     const char **out, int max);

/* Files (ir/files.c). Opening one to read (or to append to): path opened
 * with open(2)'s flags (O_RDONLY; O_WRONLY | O_APPEND | O_CREAT, …; close
 * on exec) only if it is a regular file: a FIFO, a device, a socket or a
 * folder at path is refused with a message naming it, never waited on (it
 * is opened without blocking and its descriptor's fstat decides, so
 * nothing can be put there between a check and the open). The descriptor,
 * or -1; *absent (when given) tells that path does not exist (an error all
 * the same, for callers to whom an absent file means something). Every
 * reader of a file strata did not make itself this run goes through it.
 *
 * Reading: the whole file NUL-terminated (malloc'ed; *len its bytes) or
 * NULL with a message naming it; st_read_file_at_most refuses a file of
 * more than max bytes with a message naming the limit and what the file is
 * (`kind`: "a program"), st_read_file is it with ST_FILE_MAX, "a file", and
 * st_read_file_if_any is it with *absent as st_open_regular sets it. */
int st_open_regular(const char *path, int flags, bool *absent, st_err *err);
char *st_read_file(const char *path, size_t *len, st_err *err);
char *st_read_file_at_most(const char *path, size_t max, const char *kind, size_t *len, st_err *err);
char *st_read_file_if_any(const char *path, size_t max, const char *kind, size_t *len, bool *absent, st_err *err);
#define ST_FILE_MAX ((size_t)1 << 30)
#define ST_PROGRAM_FILE_MAX ((size_t)16 << 20)
/* Writing (ir/files.c): a fresh file beside path, synced, renamed over
 * path: a reader, a crash or a full disk sees the old file or the new one,
 * never part of one. A directory made with its parents (an existing one is
 * fine). */
bool st_write_file(const char *path, const char *text, size_t len, st_err *err);
bool st_make_dirs(const char *path, st_err *err);
/* A folder of files replaced as a set: st_folder_fresh makes an empty
 * folder beside path (".NAME.XXXXXX", its name into tmp), the caller fills
 * it (st_write_file), st_folder_replace puts it at path in one step and
 * removes the old files, so that a reader or a kill -9 sees the old set or
 * the new one; st_folder_discard removes a fresh folder given up on. */
bool st_folder_fresh(const char *path, char *tmp, size_t cap, st_err *err);
bool st_folder_replace(const char *tmp, const char *path, st_err *err);
void st_folder_discard(const char *tmp);
/* What writes of path killed before their rename left beside it (its
 * ".NAME.XXXXXX" files or folders) removed. Only for a caller that holds
 * the lock every writer of path takes, or another writer's file would go. */
void st_remove_leftovers(const char *path);

/* A lock on a file (created when missing) that ends when released or when
 * the process ends, however it ends; the children a holder forks do not
 * hold it. wait: block until it is free; else fail at once with a message
 * naming the holder (its pid and command, which the holder writes into the
 * file). */
typedef struct st_lock {
    int fd;
} st_lock;
bool st_lock_take(st_lock *l, const char *path, bool wait, st_err *err);
void st_lock_release(st_lock *l);

/* ------------------------------------------------------------------------ */
/* Arena                                                                    */
/* ------------------------------------------------------------------------ */

/* A bump allocator. Marks let a loop release what one iteration allocated. */
typedef struct st_arena st_arena;
typedef struct st_arena_mark {
    void *block;
    size_t used;
} st_arena_mark;

st_arena *st_arena_new(void);
void st_arena_free(st_arena *a);
void *st_arena_alloc(st_arena *a, size_t size);         /* 16-aligned, NULL if out of memory */
void *st_arena_zalloc(st_arena *a, size_t size);        /* zeroed */
st_arena_mark st_arena_get_mark(const st_arena *a);
void st_arena_release(st_arena *a, st_arena_mark mark); /* free all allocated after mark */

/* ------------------------------------------------------------------------ */
/* Context                                                                  */
/* ------------------------------------------------------------------------ */

st_ctx *st_ctx_new(void); /* NULL if out of memory */
void st_ctx_free(st_ctx *cx);

/* ------------------------------------------------------------------------ */
/* Programs                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct st_program {
    const char *file;
    uint32_t ndefs;
    const st_def *defs;
} st_program;

/* Parse and type-check a whole source text. Syntax and type errors come back
 * located in `file`. The source need not be NUL-terminated. */
const st_program *st_parse_program(st_ctx *cx, const char *file, const char *src, size_t len,
                                   st_err *err);
/* Read a file and parse it; *text receives the source (malloc'ed, for error
 * display; the caller frees it) when text is not NULL. */
const st_program *st_load_program(st_ctx *cx, const char *path, char **text, st_err *err);
/* The def `name`, or when name is NULL `main` (or the only def there is). */
const st_def *st_program_entry(const st_program *p, const char *name, st_err *err);

/* The index variable of an array literal or a slice (`iota(n) |> map(i =>
 * …)`, elab.c builds them, print.c writes them back as `[x, y]` and
 * `xs[a:b]`): the first of i, i_1, i_2, … that none of parts mentions, into
 * buf. */
void st_index_name(const st_node *const *parts, uint32_t n, char *buf, size_t cap);

/* Surface syntax. print → parse → print gives the same text. */
void st_print_program(const st_program *p, st_buf *out);
void st_print_def(const st_def *d, st_buf *out);
/* `def main(xs: [N]f32): [N]f32 where N % 256 == 0`: the def without its body. */
void st_print_signature(const st_def *d, st_buf *out);

/* ------------------------------------------------------------------------ */
/* Values                                                                   */
/* ------------------------------------------------------------------------ */

/* A runtime value. Arrays of tuples are stored as tuples of arrays (zip and
 * unzip cost nothing); an array of arrays of scalars is one row-major buffer
 * with `rank` dimensions. So a value is a tree of tuples whose leaves are
 * scalars or flat arrays. */
typedef enum st_value_kind { ST_VALUE_SCALAR, ST_VALUE_ARRAY, ST_VALUE_TUPLE } st_value_kind;

typedef struct st_value st_value;
struct st_value {
    st_value_kind kind;
    st_scalar_kind scalar; /* SCALAR, ARRAY */
    uint32_t n;            /* ARRAY: rank (>= 1); TUPLE: components */
    union {
        st_scalar s;                /* SCALAR */
        struct {
            const int64_t *dims;    /* n dimensions, outermost first */
            void *data;             /* row-major, st_scalar_size bytes per element */
        } a;                        /* ARRAY */
        const st_value *items;      /* TUPLE */
    } u;
};

/* A SCALAR value. */
st_value st_value_scalar(st_scalar_kind k, st_scalar s);
/* A TUPLE value of n items (not copied). */
st_value st_value_tuple(uint32_t n, const st_value *items);
/* Elements along the outer dimension of an ARRAY, or of a TUPLE of arrays. */
int64_t st_value_length(const st_value *v);
/* A value with fresh zeroed storage shaped like type t with its sizes
 * evaluated in env. */
bool st_value_alloc(st_arena *a, const st_type *t, const st_binding *env, size_t nenv,
                    st_value *out, st_err *err);
/* The leaves of a value of type t, in order: what a program's result is
 * written as, one file per leaf. Returns the number of leaves; at most max
 * are written to out. */
size_t st_value_leaves(const st_value *v, st_value *out, size_t max);
/* Fill the leaves of v with pseudo-random values from a seeded generator:
 * signed integers in [-50, 50), unsigned in [0, 100), floats in [0, 1), bools
 * half true. */
void st_value_fill_random(st_value *v, uint64_t seed);
/* Does got agree with want? The same leaves and shapes; integers and bools
 * equal; floats within rtol·|want| (and the type's least normal number, for
 * flushed subnormals), NaN matching NaN. On disagreement *err says where,
 * leaf and element. */
bool st_value_agree(const st_value *got, const st_value *want, double rtol, st_err *err);

/* ------------------------------------------------------------------------ */
/* .npy files                                                               */
/* ------------------------------------------------------------------------ */

/* Read a .npy file (format 1.0, 2.0 or 3.0, little-endian, C order) of the
 * dtypes b1 i4 u4 i8 u8 f4 f8 into an ARRAY (or SCALAR for shape ()) value. */
bool st_npy_read(st_arena *a, const char *path, st_value *out, st_err *err);
bool st_npy_read_mem(st_arena *a, const char *what, const void *bytes, size_t len, st_value *out,
                     st_err *err);
/* Write a SCALAR or ARRAY value as .npy (format 1.0). */
bool st_npy_write(const char *path, const st_value *v, st_err *err);
const char *st_npy_dtype(st_scalar_kind k); /* "<f4" */

/* ------------------------------------------------------------------------ */
/* Inputs and the reference interpreter                                     */
/* ------------------------------------------------------------------------ */

/* The arguments of one call of a def, built from NAME=VALUE pairs as the
 * command line gives them, and the size bindings they imply. */
typedef struct st_inputs st_inputs;

st_inputs *st_inputs_new(st_ctx *cx, const st_def *def, st_arena *a);
/* `text` is "NAME=VALUE": a scalar parameter takes VALUE as a number, an
 * array parameter a .npy path. A size variable (`N=1000`) fixes its value for
 * arrays generated by st_inputs_generate. */
bool st_inputs_set(st_inputs *in, const char *text, st_err *err);
/* Fill every array parameter not given with seeded random values, its length
 * from the sizes fixed so far; fails naming any size still unknown. */
bool st_inputs_generate(st_inputs *in, uint64_t seed, st_err *err);
/* Check that everything is given, lengths agree, and facts hold; then the
 * argument values (in parameter order) and the size bindings. */
bool st_inputs_finish(st_inputs *in, const st_value **args, const st_binding **env, size_t *nenv,
                      st_err *err);

/* Run def on args with sizes env; *result is allocated in arena a. Runtime
 * errors (division by zero, an index out of range, memory) are reported, not
 * crashed on. */
bool st_eval(st_ctx *cx, const st_def *def, const st_value *args, const st_binding *env,
             size_t nenv, st_arena *a, st_value *result, st_err *err);
/* st_eval with options (NULL: the defaults). generic: every primitive by
 * the interpreter's generic path, its compiled fast path (ir/interp_fast.c)
 * off: what the fast path is checked against, bit for bit. */
typedef struct st_eval_options {
    bool generic;
} st_eval_options;
bool st_eval_with(st_ctx *cx, const st_def *def, const st_value *args, const st_binding *env,
                  size_t nenv, st_arena *a, const st_eval_options *opts, st_value *result, st_err *err);

/* ------------------------------------------------------------------------ */
/* The reference a device is checked against                                */
/* ------------------------------------------------------------------------ */

/* The interpreter's result of a def and, beside each of its floats, the
 * scale of the rounding error a correct implementation in any order may
 * make: (1 + √c)·m, m the magnitude of what it was computed from (for a
 * sum Σ|x|) and c the count of roundings it went through (ir/magnitude.c).
 * scale has value's shape, its float leaves f64 (its others value's own). */
typedef struct st_expected {
    st_value value, scale;
} st_expected;

bool st_eval_expected(st_ctx *cx, const st_def *def, const st_value *args, const st_binding *env, size_t nenv,
                      st_arena *a, st_expected *out, st_err *err);

/* How far a float may be from the reference: tolerance·ε·scale, ε its
 * type's (2^-23 for f32, 2^-52 for f64); room for the order of operations
 * of any tree or loop a rule makes, and for the few ulps of a device's
 * division, sqrt, exp and log (docs/checking.md). */
#define ST_TOLERANCE 8.0

/* Does got agree with the reference? As st_value_agree, but a float within
 * tolerance·ε·scale of the reference's value (an infinite bound where the
 * scale is not a number). */
bool st_expected_agree(const st_value *got, const st_expected *want, double tolerance, st_err *err);

#endif
