/* tests/shapes.h — the program shapes of the shapes suite (issue 18): the
 * text of programs in strata's surface syntax, built from a producer, a
 * consumer of its scan, an element type and a nesting, and a small group of
 * programs the product does not make (rows as elements, histograms). Each
 * program comes in two forms: plain, and with the fact `N % 256 == 0`, which
 * lets parallel-scan(BS=256) run without padding. N is always the length
 * under test; M (rows of a nested program) and K (a row's length) are
 * small. */
#ifndef STRATA_TESTS_SHAPES_H
#define STRATA_TESTS_SHAPES_H

#include "harness.h"

typedef enum producer { P_VAR, P_MAP, P_ZIP_OF_MAPS, P_IOTA, P_SCAN, P_SCAN_IN_MAP, P_ROW_REDUCE, P_ROTATE, N_PRODUCERS } producer;
typedef enum consumer { C_NONE, C_LET, C_REDUCE, C_MAP, C_SCATTER, C_ZIP, C_EXSCAN, N_CONSUMERS } consumer;
typedef enum elem { E_I32, E_F32, E_I64, E_TUPLE, E_U8, E_I16, N_ELEMS } elem;
typedef enum nesting { TOP, IN_MAP, IN_LOOP, N_NESTINGS } nesting;

static const char *const producer_names[] = {"var", "map", "zip-of-maps", "iota", "scan", "scan-in-map", "row-reduce",
                                             "rotate"};
static const char *const consumer_names[] = {"none", "let", "reduce", "map", "scatter", "zip", "exscan"};
static const char *const nesting_names[] = {"top", "in-map", "in-loop"};

enum { N_SHAPES = N_PRODUCERS * N_CONSUMERS * N_ELEMS * N_NESTINGS };

/* How an element type is written. In the expressions x is an element, y
 * an element of the scan's result, I an i64 (iota's). A tuple is (i32, f32):
 * its arrays are xs (i32) and ys (f32). Operators stay away from floating
 * subtraction (inputs are in [0, 1)), so floats agree within a relative
 * tolerance whatever the order of the sums; integers wrap alike on both
 * sides, so long sums need no care. */
typedef struct elem_syntax {
    const char *name, *type;
    bool tuple;              /* made of two arrays, xs and ys (see arrays_of) */
    const char *op, *zero;   /* the scan: operator, neutral element (typed: it seeds replicate too) */
    const char *f;           /* a map of elements: x => f */
    const char *g;           /* a second map, of ys (zip of maps of scalars): y => g */
    const char *rop, *rzero; /* the reduce consumer */
    const char *post;        /* the map consumer: y => post */
} elem_syntax;

static const elem_syntax elem_syntaxes[] = {
    {"i32", "i32", false, "+", "0", "x * 3 - 1", "y * 2 + 1", "+", "0", "y % 10"},
    {"f32", "f32", false, "+", "0.0", "x * 0.5 + 0.25", "y * 2.0", "max", "0.0", "y * 2.0"},
    {"i64", "i64", false, "+", "0i64", "x * 3 - 1", "y * 2 + 1", "+", "0i64", "y % 10"},
    {"(i32,f32)", "(i32, f32)", true, "(a, b) => (a.0 + b.0, a.1 + b.1)", "(0, 0.0)", "(x.0 * 3 - 1, x.1 * 0.5 + 0.25)",
     NULL, "(a, b) => (a.0 + b.0, max(a.1, b.1))", "(0, 0.0)", "(y.0 % 10, y.1 * 2.0)"},
    /* the small integers wrap: a long sum of u8 is its sum modulo 256 on both sides */
    {"u8", "u8", false, "+", "0u8", "x * 3 + 1", "y * 2 + 1", "max", "0u8", "y % 10"},
    {"i16", "i16", false, "+", "0i16", "x * 3 - 1", "y * 2 + 1", "+", "0i16", "y % 10"},
};

/* One program: `def main(PARAMS) [where N % 256 == 0] =\n  BODY`. */
typedef struct program {
    const char *label;  /* "map|reduce|f32|top": what the failure messages name */
    const char *params, *body;
    const char *extra;  /* sizes and scalars besides N, as st_inputs_set reads them: "M=3 K=3" */
    bool scan;          /* has a scan (the scan strategies apply) */
    bool histogram;     /* has a reduce_by_index (subhistogram applies) */
    bool scalar_sizes;  /* N (and M) are scalar parameters, not sizes of arrays: `--input`, not `--size` */
} program;

/* The text of p, with the fact that 256 divides N or without. */
static inline const char *program_text(st_arena *a, const program *p, bool facts) {
    return arena_text(a, "def main(%s)%s =\n  %s\n", p->params, facts ? " where N % 256 == 0" : "", p->body);
}

/* ------------------------------------------------------------------------ */
/* The product: producer × consumer × element type × nesting               */
/* ------------------------------------------------------------------------ */

/* The arrays a producer reads, as the body sees them (top level): their
 * names and types. A nested program takes each with an outer [M] and maps
 * over them (see nest). */
typedef struct arrays {
    int n;
    const char *name[2], *type[2];
} arrays;

static inline arrays arrays_of(st_arena *a, producer p, const elem_syntax *e) {
    bool tuple = e->tuple;
    bool rows = p == P_SCAN_IN_MAP || p == P_ROW_REDUCE;
    const char *dims = rows ? "[N][K]" : "[N]";
    const char *x = rows ? "xss" : "xs", *y = rows ? "yss" : "ys";
    arrays r = {0};
    if (p == P_IOTA) return r;
    r.name[r.n] = x;
    r.type[r.n++] = arena_text(a, "%s%s", dims, tuple ? "i32" : e->type);
    if (tuple || p == P_ZIP_OF_MAPS) {
        r.name[r.n] = y;
        r.type[r.n++] = arena_text(a, "%s%s", dims, tuple ? "f32" : e->type);
    }
    return r;
}

/* The producer's array of N elements. */
static inline const char *producer_text(st_arena *a, producer p, const elem_syntax *e, nesting n) {
    bool tuple = e->tuple;
    const char *base = tuple ? "zip(xs, ys)" : "xs";
    const char *row_scan = arena_text(a, "scan(%s, %s) |> reduce(%s, %s)", e->op, e->zero, e->op, e->zero);
    const char *row_sum = arena_text(a, "reduce(%s, %s)", e->op, e->zero);
    /* iota's element i (and the row r, nested, so rows differ) */
    const char *i = n != IN_MAP ? "(i % 13)" : "((i + r) % 13)";
    switch (p) {
    case P_VAR: return base;
    case P_MAP: return arena_text(a, "%s |> map(x => %s)", base, e->f);
    case P_ZIP_OF_MAPS:
        /* the tuple's f, a component at a time */
        if (tuple) return "zip(xs |> map(x => x * 3 - 1), ys |> map(y => y * 0.5 + 0.25))";
        return arena_text(a, "zip(xs |> map(x => %s), ys |> map(y => %s)) |> map((a, b) => a + b)", e->f, e->g);
    case P_IOTA:
        if (tuple) return arena_text(a, "iota(N) |> map(i => (i32%s, f32%s))", i, i);
        if (!strcmp(e->type, "i64")) return arena_text(a, "iota(N) |> map(i => %s)", i);
        return arena_text(a, "iota(N) |> map(i => %s%s)", e->type, i);
    case P_SCAN: return arena_text(a, "%s |> scan(%s, %s)", base, e->op, e->zero);
    case P_SCAN_IN_MAP:
        if (tuple) return arena_text(a, "zip(xss, yss) |> map((ra, rb) => zip(ra, rb) |> %s)", row_scan);
        return arena_text(a, "xss |> map(row => row |> %s)", row_scan);
    /* rows as elements: each element of the scan is read from K of
     * memory, at a row's index times K */
    case P_ROW_REDUCE:
        if (tuple) return arena_text(a, "zip(xss, yss) |> map((ra, rb) => zip(ra, rb) |> %s)", row_sum);
        return arena_text(a, "xss |> map(row => row |> %s)", row_sum);
    /* an index map whose index wraps around: element i is f of element (i + N / 3 - 2) mod N */
    case P_ROTATE: return arena_text(a, "rotate(N / 3 - 2, %s |> map(x => %s))", base, e->f);
    default: return NULL;
    }
}

/* The scan of the producer, and what consumes it. */
static inline const char *consumer_text(st_arena *a, consumer c, const elem_syntax *e, const char *prod) {
    if (!prod) return NULL;
    const char *scan = arena_text(a, "%s |> scan(%s, %s)", prod, e->op, e->zero);
    switch (c) {
    case C_NONE: return scan;
    case C_LET: return arena_text(a, "let sc = %s in sc", scan);
    case C_REDUCE: return arena_text(a, "%s |> reduce(%s, %s)", scan, e->rop, e->rzero);
    case C_MAP: return arena_text(a, "%s |> map(y => %s)", scan, e->post);
    /* a permutation (the reverse), so no two elements race for a place */
    case C_SCATTER:
        return arena_text(a, "let sc = %s in scatter(replicate(N, %s), iota(N) |> map(i => N - 1 - i), sc)", scan,
                          e->zero);
    case C_ZIP: return arena_text(a, "zip(%s, iota(N))", scan);
    /* the exclusive scan instead of the scan */
    case C_EXSCAN: return arena_text(a, "%s |> exscan(%s, %s)", prod, e->op, e->zero);
    default: return NULL;
    }
}

/* The parameters, and the body inside a map over M rows when nested: each
 * array xs comes as mxs: [M][N]t, the body sees one row of each. In a
 * loop, the body is a top-level loop's, computed again each of two turns
 * (its accumulator, of any type the consumer makes, a scalar or a tuple
 * of them too, in buffers that take turns). */
static inline void nest(st_arena *a, producer p, const elem_syntax *e, nesting n, const char *inner, program *out) {
    arrays ar = arrays_of(a, p, e);
    if (n == IN_LOOP) {
        inner = arena_text(a, "loop acc = (%s) for t < 2 do (%s)", inner, inner);
        n = TOP;
    }
    if (p == P_IOTA) {
        out->params = n == TOP ? "N: i64" : "M: i64, N: i64";
        out->body = n == TOP ? inner : arena_text(a, "iota(M) |> map(r => %s)", inner);
        return;
    }
    const char *pre = n == TOP ? "" : "m", *outer = n == TOP ? "" : "[M]";
    out->params = arena_text(a, "%s%s: %s%s", pre, ar.name[0], outer, ar.type[0]);
    if (ar.n == 2) out->params = arena_text(a, "%s, %s%s: %s%s", out->params, pre, ar.name[1], outer, ar.type[1]);
    if (n == TOP) out->body = inner;
    else if (ar.n == 1) out->body = arena_text(a, "m%s |> map(%s => %s)", ar.name[0], ar.name[0], inner);
    else
        out->body = arena_text(a, "zip(m%s, m%s) |> map((%s, %s) => %s)", ar.name[0], ar.name[1], ar.name[0],
                               ar.name[1], inner);
}

/* Shape i of the product, in the order producer, consumer, element, nesting
 * (the nesting varies fastest). */
static inline void shape_parts(int i, producer *p, consumer *c, elem *el, nesting *n) {
    *n = (nesting)(i % N_NESTINGS);
    *el = (elem)(i / N_NESTINGS % N_ELEMS);
    *c = (consumer)(i / (N_NESTINGS * N_ELEMS) % N_CONSUMERS);
    *p = (producer)(i / (N_NESTINGS * N_ELEMS * N_CONSUMERS));
}

/* "map|reduce|f32|top": what the failure messages name */
static inline void shape_label(int i, char *label, size_t cap) {
    producer p;
    consumer c;
    elem el;
    nesting n;
    shape_parts(i, &p, &c, &el, &n);
    snprintf(label, cap, "%s|%s|%s|%s", producer_names[p], consumer_names[c], elem_syntaxes[el].name, nesting_names[n]);
}

static inline program shape_at(st_arena *a, int i) {
    producer p;
    consumer c;
    elem el;
    nesting n;
    shape_parts(i, &p, &c, &el, &n);
    const elem_syntax *e = &elem_syntaxes[el];
    program out = {0};
    char label[128];
    shape_label(i, label, sizeof label);
    out.label = arena_text(a, "%s", label);
    nest(a, p, e, n, consumer_text(a, c, e, producer_text(a, p, e, n)), &out);
    out.extra = arena_text(a, "%s%s", n == IN_MAP ? " M=3" : "", p == P_SCAN_IN_MAP || p == P_ROW_REDUCE ? " K=3" : "");
    out.scan = true;
    out.scalar_sizes = p == P_IOTA;
    return out;
}

/* ------------------------------------------------------------------------ */
/* Beside the product: rows as elements, histograms                        */
/* ------------------------------------------------------------------------ */

/* a row-wise sum, the operator of scans and histograms of rows */
#define ROW_ADD "(a, b) => zip(a, b) |> map((x, y) => x + y)"
/* an index of [0, H) from an i32 of [-50, 50) */
#define BUCKET "xs |> map(x => i64(x + 50) % H)"

static const program extra_programs[] = {
    /* rows [N][K] as the elements of a scan */
    {"rows:var|none|[K]i32|top", "xss: [N][K]i32", "xss |> scan(" ROW_ADD ", replicate(K, 0))", " K=3", true, false,
     false},
    {"rows:map|none|[K]i32|top", "xss: [N][K]i32",
     "xss |> map(r => r |> map(x => x * 3 - 1)) |> scan(" ROW_ADD ", replicate(K, 0))", " K=3", true, false, false},
    {"rows:var|let|[K]f32|top", "xss: [N][K]f32",
     "let sc = xss |> scan((a, b) => zip(a, b) |> map((x, y) => x + y), replicate(K, 0.0)) in sc", " K=3", true,
     false, false},
    {"rows:var|reduce|[K]i32|top", "xss: [N][K]i32",
     "xss |> scan(" ROW_ADD ", replicate(K, 0)) |> reduce(" ROW_ADD ", replicate(K, 0))", " K=3", true, false, false},
    {"rows:var|map|[K]i32|top", "xss: [N][K]i32", "xss |> scan(" ROW_ADD ", replicate(K, 0)) |> map(r => r |> reduce(+, 0))",
     " K=3", true, false, false},
    /* a tuple that holds a row */
    {"rows:var|none|([K]i32,f32)|top", "xss: [N][K]i32, ys: [N]f32",
     "zip(xss, ys) |> scan((a, b) => (zip(a.0, b.0) |> map((x, y) => x + y), a.1 + b.1), (replicate(K, 0), 0.0))",
     " K=3", true, false, false},
    /* rows as the elements every other kernel-making rule reads: a
     * reduction (parallel-reduce), a histogram's values (subhistogram), a
     * filter's (filter-scatter) */
    {"rows:row-reduce|reduce|i32|top", "xss: [N][K]i32", "xss |> map(row => reduce(+, 0, row)) |> reduce(max, i32.min)",
     " K=3", false, false, false},
    {"rows:row-reduce|reduce|f32|top", "xss: [N][K]f32", "xss |> map(row => reduce(+, 0.0, row)) |> reduce(+, 0.0)",
     " K=3", false, false, false},
    {"rows:row-reduce|hist|i32|top", "is: [N]i64, xss: [N][K]i32, H: i64",
     "reduce_by_index(replicate(H, 0), +, 0, is, xss |> map(row => reduce(+, 0, row)))", " K=3 H=37", false, true,
     false},
    {"rows:row-reduce|filter|i32|top", "xss: [N][K]i32", "xss |> map(row => reduce(+, 0, row)) |> filter(x => x > 0)",
     " K=3", false, false, false},
    /* histograms: plain, of mapped indices, of f32 values, of a scan's values,
     * of rows, one per row of a map */
    {"hist:var|i32|top", "is: [N]i64, H: i64", "reduce_by_index(replicate(H, 0), +, 0, is, replicate(N, 1))", " H=37",
     false, true, false},
    {"hist:mapped-indices|i32|top", "xs: [N]i32, H: i64",
     "reduce_by_index(replicate(H, 0), +, 0, " BUCKET ", replicate(N, 1))", " H=37", false, true, false},
    {"hist:mapped-indices|f32|top", "xs: [N]i32, vs: [N]f32, H: i64",
     "reduce_by_index(replicate(H, 0.0), +, 0.0, " BUCKET ", vs)", " H=37", false, true, false},
    {"hist:scan-values|i32|top", "is: [N]i64, xs: [N]i32, H: i64",
     "reduce_by_index(replicate(H, 0), +, 0, is, xs |> scan(+, 0))", " H=37", true, true, false},
    {"hist:rows|[K]i32|top", "is: [N]i64, xss: [N][K]i32, H: i64",
     "reduce_by_index(replicate(H, replicate(K, 0)), " ROW_ADD ", replicate(K, 0), is, xss)", " K=3 H=37", false,
     true, false},
    {"hist:var|i32|in-map", "iss: [M][N]i64, H: i64",
     "iss |> map(is => reduce_by_index(replicate(H, 0), +, 0, is, replicate(N, 1)))", " M=3 H=37", false, true, false},
    {"hist:mapped-indices|i32|in-map", "mxs: [M][N]i32, H: i64",
     "mxs |> map(xs => reduce_by_index(replicate(H, 0), +, 0, " BUCKET ", replicate(N, 1)))", " M=3 H=37", false, true,
     false},
    /* the language of issue 21: u8 pixels as indices, a 2-D histogram, loops
     * at the top and in a map, a function as the scan's operator, a slice */
    {"hist:u8-indices|u32|top", "img: [N]u8", "reduce_by_index(replicate(256, 0u32), +, 0u32, img, replicate(N, 1u32))",
     "", false, true, false},
    {"hist2d:pairs|i32|top", "xs: [N]i32, H: i64",
     "reduce_by_index_2d(replicate(H, replicate(H, 0)), +, 0, zip(xs |> map(x => i64(x) % H), iota(N) |> map(i => i % H)), "
     "replicate(N, 1))",
     " H=7", false, true, false},
    {"loop:scan|i32|top", "xs: [N]i32, k: i64", "loop ys = xs for i < k do ys |> scan(+, 0) |> map(y => y % 1000)", " k=3",
     true, false, false},
    {"loop:in-map|f32|in-map", "xs: [N]f32, k: i64", "xs |> map(x => loop y = x for i < k do y * 0.5 + x) |> scan(max, 0.0)",
     " k=4", true, false, false},
    {"slice:max-scan|i32|top", "xs: [N]i32", "xs[0:N] |> map(x => x * 3 - 1) |> scan((a, b) => max(a, b) + 0, i32.min)", "",
     true, false, false},
};

enum { N_EXTRA = (int)(sizeof extra_programs / sizeof *extra_programs), N_PROGRAMS = N_SHAPES + N_EXTRA };

/* What program i has, without writing it (no arena: the suite counts its
 * cases before any test runs). */
static inline bool program_has_scan(int i) { return i < N_SHAPES || extra_programs[i - N_SHAPES].scan; }
static inline bool program_has_histogram(int i) { return i >= N_SHAPES && extra_programs[i - N_SHAPES].histogram; }

/* Does program i's label hold text (no arena: as program_has_scan)? */
static inline bool program_label_holds(int i, const char *text) {
    if (i >= N_SHAPES) return strstr(extra_programs[i - N_SHAPES].label, text) != NULL;
    char label[128];
    shape_label(i, label, sizeof label);
    return strstr(label, text) != NULL;
}

/* Program i: the product's shapes, then the others. */
static inline program program_at(st_arena *a, int i) {
    return i < N_SHAPES ? shape_at(a, i) : extra_programs[i - N_SHAPES];
}

#endif
