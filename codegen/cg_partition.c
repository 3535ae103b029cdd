/* codegen/cg_partition.c — partition_by(k, f, xs): xs grouped by bucket,
 * stably, and each bucket's start.
 *
 * partitionTiles(TILE, WG, k, f, xs) at the top of a def makes four kernels.
 * The elements are cut into G tiles of T consecutive ones, a work-item
 * each (T is TILE, or where TILE is 0 the glue's choice when the program
 * runs: on a CPU a few tiles per compute unit, so that each core walks long
 * runs in order; on a GPU many more, each work-item a tile; WG work-items
 * a group, left out one on a CPU and 64 on a GPU):
 *
 *   count    work-item t counts its tile's elements per bucket, into row t
 *            of a G x k table;
 *   columns  work-item b walks column b of the table: each tile's count
 *            becomes the number of bucket-b elements in the tiles before it,
 *            and the column's total goes to the starts;
 *   starts   one work-item makes the totals the buckets' starts (an
 *            exclusive scan of k numbers): the second result;
 *   scatter  work-item t adds the starts to its row, then walks its tile
 *            again, each element to its bucket's next place; on a CPU
 *            through a line per bucket in local memory, each full line
 *            written out by one store (combining_scatter).
 *
 * Each tile's elements keep their order, and the tiles theirs, so the
 * partition is stable. The function is computed where each element is read,
 * in the two passes over it, as is a map that makes the elements
 * (cg_element). An element's bucket is clamped into [0, k), as the
 * interpreter's. Inside a lambda, partition_by runs in one work-item
 * (cg_partition_into): the same counts, scan and scatter, sequentially. */
#include "cg.h"

typedef struct part {
    const st_node *e, *f, *xs;
    const cg_binding *env;
    int64_t tile, wg, k;
    const char *v;         /* the prefix of the glue's values: part0_G, … */
    const cg_place *out;   /* the grouped elements */
    const cg_place *starts; /* the buckets' starts, [k]i64 */
    const cg_place *table; /* G x k counts, i64 */
} part;

/* a glue value of this partition's, by name: part0_G */
static const char *val(cg *g, const part *h, const char *name) {
    const char *v = cg_str(g, "%s_%s", h->v, name);
    cg_use_value(g, v);
    return v;
}

/* element i of an i64 array in memory, as an lvalue */
static const char *slot(cg *g, const cg_place *p, const char *i) {
    const cg_mem *m = &cg_place_index(g, p, i)->mem;
    if (m->buffer >= 0) cg_use_buffer(g, m->buffer, true);
    return cg_str(g, "%s[%s]", m->base, m->offset);
}

/* Element i of xs, declared, and `const long bucket_var = …;`, its bucket
 * in [0, k). */
static cg_value element_and_bucket(cg *g, const part *h, const char *i, const char *bucket_var) {
    cg_value x = cg_element(g, h->xs, h->env, i);
    x = cg_materialize(g, &x);
    cg_value b = cg_apply(g, h->f, 1, &x, h->env);
    st_scalar_kind kind = h->f->type->elem->scalar;
    const char *last = cg_str(g, "%lldL", (long long)(h->k - 1));
    if (cg_in_range(g, &b, st_size_const(g->cx, h->k))) /* a digit, `& 255`: a bucket already */
        cg_line(g, "const long %s = (long)(%s);", bucket_var, b.c);
    else if (st_scalar_is_signed(kind))
        cg_line(g, "const long %s = min(max((long)(%s), 0L), %s);", bucket_var, b.c, last);
    else
        cg_line(g, "const long %s = (long)min((ulong)(%s), (ulong)%s);", bucket_var, b.c, last);
    return x;
}

/* ---- the kernels ---- */

/* `for (long i = …) {` over the elements of tile t (declared before) */
static void tile_begin(cg *g, const part *h) {
    const char *n = cg_size(g, h->xs->type->size), *T = val(g, h, "T");
    cg_line(g, "const long pb_first = pb_t * %s, pb_end = min(pb_first + %s, (long)(%s));", T, T, n);
    cg_open(g, "for (long i = pb_first; i < pb_end; i++) {");
}

/* the tile's work-item, or return: G of them, whatever the launch rounds to */
static void tile_of_work_item(cg *g, const part *h) {
    cg_line(g, "const long pb_t = get_global_id(0);");
    cg_line(g, "if (pb_t >= %s) return;", val(g, h, "G"));
}

static void begin(cg *g, const part *h, const char *name, const char *what, const char *groups) {
    cg_kernel_begin(g, CG_SHAPE_WRG, NULL, name, h->e);
    g->k->count_c = groups;
    g->k->lanes_c = cg_str(g, "%s_L", h->v);
    g->k->what = what;
    g->level = CG_THREAD;
}

static void count_kernel(cg *g, const part *h) {
    begin(g, h, "partition_count", "each tile's elements counted by bucket", cg_str(g, "%s_groups", h->v));
    tile_of_work_item(g, h);
    const char *row = cg_str(g, "pb_t * %lldL", (long long)h->k);
    cg_open(g, cg_str(g, "for (long b = 0; b < %lldL; b++) {", (long long)h->k));
    cg_line(g, "%s = 0;", slot(g, h->table, cg_str(g, "%s + b", row)));
    cg_close(g);
    tile_begin(g, h);
    element_and_bucket(g, h, "i", "pb_b");
    cg_line(g, "%s++;", slot(g, h->table, cg_str(g, "%s + pb_b", row)));
    cg_close(g);
    cg_kernel_end(g);
}

static void columns_kernel(cg *g, const part *h) {
    begin(g, h, "partition_columns", "each tile's place within each bucket, and each bucket's total",
          cg_str(g, "%s_kgroups", h->v));
    cg_line(g, "const long b = get_global_id(0);");
    cg_line(g, "if (b >= %lldL) return;", (long long)h->k);
    cg_line(g, "long pb_sum = 0;");
    cg_open(g, cg_str(g, "for (long t = 0; t < %s; t++) {", val(g, h, "G")));
    const char *c = slot(g, h->table, cg_str(g, "t * %lldL + b", (long long)h->k));
    cg_line(g, "const long pb_c = %s;", c);
    cg_line(g, "%s = pb_sum;", c);
    cg_line(g, "pb_sum += pb_c;");
    cg_close(g);
    cg_line(g, "%s = pb_sum;", slot(g, h->starts, "b"));
    cg_kernel_end(g);
}

static void starts_kernel(cg *g, const part *h) {
    begin(g, h, "partition_starts", "the buckets' starts", "1");
    cg_line(g, "if (get_global_id(0) != 0) return;");
    cg_line(g, "long pb_sum = 0;");
    cg_open(g, cg_str(g, "for (long b = 0; b < %lldL; b++) {", (long long)h->k));
    const char *s = slot(g, h->starts, "b");
    cg_line(g, "const long pb_c = %s;", s);
    cg_line(g, "%s = pb_sum;", s);
    cg_line(g, "pb_sum += pb_c;");
    cg_close(g);
    cg_kernel_end(g);
}

/* ---- the scatter through write-combining buffers (a CPU's) ---- */

/* Elements of a line: a buffer's run per bucket, written out whole. */
enum { LINE = 16 };

/* Whether each bucket's line of every leaf fits a CPU's cache beside the
 * rest: the buffers are k lines of each leaf. */
static bool combines(const part *h) { return h->k <= 256 && (size_t)h->k * LINE * cg_plain_bytes(h->xs->type->elem) <= 65536; }

/* the OpenCL C vector type of LINE elements of a leaf */
static const char *line_type(cg *g, st_scalar_kind k) {
    return cg_str(g, "%s%d", k == ST_I8 ? "char" : cg_mem_ctype(k), LINE);
}

/* Each leaf's line at `line` of out from the buffers' line of bucket pb_b. */
static void stream_line(cg *g, const cg_place *out, const cg_place *wc, const char *line) {
    uint32_t n, nw;
    const cg_mem **o = cg_place_leaves(g, cg_place_index(g, out, line), &n),
                 **w = cg_place_leaves(g, cg_place_index(g, wc, cg_str(g, "pb_b * %d", LINE)), &nw);
    for (uint32_t i = 0; o && w && i < n && i < nw; i++) {
        if (o[i]->buffer >= 0) cg_use_buffer(g, o[i]->buffer, true);
        cg_line(g, "ST_STREAM((__global %s *)&%s[%s], vload%d(0, &%s[%s]));", line_type(g, o[i]->kind), o[i]->base,
                o[i]->offset, LINE, w[i]->base, w[i]->offset);
    }
}

/* Is every leaf's line at `line` of out aligned to a whole vector? */
static const char *aligned(cg *g, const cg_place *out, const char *line) {
    uint32_t n;
    const cg_mem **o = cg_place_leaves(g, cg_place_index(g, out, line), &n);
    const char *all = "1";
    for (uint32_t i = 0; o && i < n; i++)
        all = cg_str(g, "%s && ((ulong)&%s[%s] %% %zu == 0)", all, o[i]->base, o[i]->offset,
                     LINE * st_scalar_size(o[i]->kind));
    return all;
}

/* out[q] = the buffered element of place q, for q from `from` below `to` */
static void drain(cg *g, const part *h, const cg_place *wc, const char *from, const char *to) {
    const st_type *t = h->xs->type->elem;
    cg_open(g, cg_str(g, "for (long pb_q = %s; pb_q < %s; pb_q++) {", from, to));
    cg_value x = cg_value_of_place(g, t, cg_place_index(g, wc, cg_str(g, "pb_b * %d + (pb_q & %d)", LINE, LINE - 1)));
    cg_store(g, cg_place_index(g, h->out, "pb_q"), &x);
    cg_close(g);
}

static void add_local(cg *g, const cg_place *p, const char *count_c) {
    uint32_t n;
    const cg_mem **leaves = cg_place_leaves(g, p, &n);
    for (uint32_t i = 0; leaves && i < n; i++) cg_add_local_c(g, leaves[i]->base, leaves[i]->kind, count_c);
}

/* Each element into its bucket's line in local memory (a CPU's group of
 * one: a cache-resident buffer), and each line, once full and wholly this
 * tile's, to memory by one store that bypasses the cache: 256 buckets'
 * scattered stores otherwise read each line before writing it and keep
 * 256 streams' pages in the TLB. A line shared with another tile or
 * bucket, or misaligned, is written element by element. */
static void combining_scatter(cg *g, const part *h, const char *row) {
    const char *v = h->v, *lines = cg_str(g, "(%s_wc ? %lld : 1)", v, (long long)(h->k * LINE));
    const cg_place *wc = cg_place_new(g, st_type_array(g->cx, st_size_const(g->cx, 1), h->xs->type->elem), CG_LOCAL, "pb_wc");
    const st_type *longs = st_type_array(g->cx, st_size_const(g->cx, 1), st_type_scalar(g->cx, ST_I64));
    const cg_place *lo = cg_place_new(g, longs, CG_LOCAL, "pb_lo"), *cur = cg_place_new(g, longs, CG_LOCAL, "pb_cur");
    if (!wc || !lo || !cur) return;
    add_local(g, wc, lines);
    const char *k_or_1 = cg_str(g, "(%s_wc ? %lld : 1)", v, (long long)h->k);
    add_local(g, lo, k_or_1);
    add_local(g, cur, k_or_1);
    /* each bucket's first place and its next one, this tile's: in local
     * memory, next to the lines, rather than in the table's row */
    const char *lo_b = cg_str(g, "%s[pb_b]", lo->mem.base), *cursor = cg_str(g, "%s[pb_b]", cur->mem.base);
    cg_open(g, cg_str(g, "for (long b = 0; b < %lldL; b++) {", (long long)h->k));
    cg_line(g, "%s[b] = %s[b] = %s;", lo->mem.base, cur->mem.base, slot(g, h->table, cg_str(g, "%s + b", row)));
    cg_close(g);
    tile_begin(g, h);
    cg_value x = element_and_bucket(g, h, "i", "pb_b");
    cg_line(g, "const long pb_at = %s++;", cursor);
    cg_store(g, cg_place_index(g, wc, cg_str(g, "pb_b * %d + (pb_at & %d)", LINE, LINE - 1)), &x);
    cg_open(g, cg_str(g, "if ((pb_at & %d) == %d) { /* the line is full */", LINE - 1, LINE - 1));
    cg_line(g, "const long pb_from = pb_at - %d;", LINE - 1);
    cg_open(g, cg_str(g, "if (pb_from >= %s && %s) {", lo_b, aligned(g, h->out, "pb_from")));
    stream_line(g, h->out, wc, "pb_from");
    g->indent--;
    cg_line(g, "} else {");
    g->indent++;
    drain(g, h, wc, cg_str(g, "max(pb_from, %s)", lo_b), "pb_at + 1");
    cg_close(g);
    cg_close(g);
    cg_close(g);
    /* each bucket's last line, part full */
    cg_open(g, cg_str(g, "for (long pb_b = 0; pb_b < %lldL; pb_b++) {", (long long)h->k));
    cg_line(g, "const long pb_end = %s;", cursor);
    drain(g, h, wc, cg_str(g, "max(%s, pb_end & ~%dL)", lo_b, LINE - 1), "pb_end");
    cg_close(g);
    cg_line(g, "ST_STREAM_END();");
}

static void scatter_kernel(cg *g, const part *h) {
    begin(g, h, "partition_scatter", "each tile's elements to their places", cg_str(g, "%s_groups", h->v));
    tile_of_work_item(g, h);
    const char *row = cg_str(g, "pb_t * %lldL", (long long)h->k);
    /* the row becomes each bucket's next place for this tile's elements */
    cg_open(g, cg_str(g, "for (long b = 0; b < %lldL; b++) {", (long long)h->k));
    cg_line(g, "%s += %s;", slot(g, h->table, cg_str(g, "%s + b", row)), slot(g, h->starts, "b"));
    cg_close(g);
    if (combines(h)) {
        /* a CPU's OpenCL: the glue says whether the device is one */
        cg_line(g, "#if defined(__OPENCL_VERSION__) && (defined(__x86_64__) || defined(__aarch64__))");
        cg_open(g, cg_str(g, "if (%s) {", val(g, h, "wc")));
        combining_scatter(g, h, row);
        cg_line(g, "return;");
        cg_close(g);
        cg_line(g, "#endif");
    }
    tile_begin(g, h);
    cg_value x = element_and_bucket(g, h, "i", "pb_b");
    cg_line(g, "const long pb_at = %s++;", slot(g, h->table, cg_str(g, "%s + pb_b", row)));
    cg_store(g, cg_place_index(g, h->out, "pb_at"), &x);
    cg_close(g);
    cg_kernel_end(g);
}

/* The glue's choices: the tile T (TILE, or the device's), G tiles, L
 * work-items a group (one on a CPU, whose groups' work-items run in turn in
 * one thread: each tile its own group, so that the cores share them). */
static void choose(cg *g, const part *h) {
    const char *v = h->v, *n = cg_size(g, cg_upper(g, h->xs->type->size));
    cg_glue_value(g, "/* %s: partitionTiles(TILE=%lld, WG=%lld), %lld buckets */", v, (long long)h->tile, (long long)h->wg,
                  (long long)h->k);
    cg_glue_value(g, "long %s_N = (long)(%s), %s_T = %lld;", v, n, v, (long long)h->tile);
    cg_glue_value(g, "if (%s_T <= 0) { long units = strata_compute_units(queue) > 0 ? strata_compute_units(queue) : 1; "
                     "long tiles = strata_is_cpu(queue) ? 4 * units : 256 * units; %s_T = (%s_N + tiles - 1) / tiles; "
                     "if (%s_T < 1024) %s_T = 1024; }",
                  v, v, v, v, v);
    cg_glue_value(g, "long %s_G = (%s_N + %s_T - 1) / %s_T; if (%s_G < 1) %s_G = 1;", v, v, v, v, v, v);
    cg_glue_value(g, "long %s_L = %lld > 0 ? %lld : strata_is_cpu(queue) ? 1 : 64;", v, (long long)h->wg, (long long)h->wg);
    /* the lines are a group's: one work-item's only where the group is one */
    cg_glue_value(g, "long %s_wc = strata_is_cpu(queue) && %s_L == 1 && %d;", v, v, combines(h));
    cg_glue_value(g, "long %s_groups = (%s_G + %s_L - 1) / %s_L, %s_kgroups = (%lldL + %s_L - 1) / %s_L;", v, v, v, v, v,
                  (long long)h->k, v, v);
    cg_glue_value(g, "(void)%s_groups; (void)%s_kgroups;", v, v);
}

static void partition_emit(cg *g, const st_node *e, const cg_binding *env, const cg_place *p, const cg_scatter *scatter) {
    (void)scatter;
    e = cg_host_hoist_args(g, e, ST_PARTITION_TILES_SIZES + 2, &env); /* the elements, unless fusible */
    if (!e || g->failed || !p) return;
    int64_t sizes[ST_PARTITION_TILES_SIZES];
    if (!cg_leading_sizes(g, e, sizes)) return;
    part h = {.e = e, .env = env, .tile = sizes[0], .wg = sizes[1], .f = e->kids[ST_PARTITION_TILES_SIZES + 1],
              .xs = e->kids[ST_PARTITION_TILES_SIZES + 2]};
    if (!p->tuple || p->n != 2) {
        cg_fail(g, e, "partitionTiles writes a pair of arrays (the elements, the starts)");
        return;
    }
    st_size_is_const(e->type->items[1]->size, &h.k);
    h.out = &p->items[0];
    h.starts = &p->items[1];
    h.v = cg_name(g, "part");
    choose(g, &h);
    h.table = cg_host_temp_sized(g, st_type_scalar(g->cx, ST_I64), cg_str(g, "strata_mul(%s_G, %lld, &bad)", h.v,
                                                                          (long long)h.k), "bucket_counts");
    if (!h.table) return;
    count_kernel(g, &h);
    columns_kernel(g, &h);
    starts_kernel(g, &h);
    scatter_kernel(g, &h);
}

const cg_algorithm cg_partition_algorithm = {
    .prim = ST_PRIM_PARTITION_TILES,
    .rule = "partition-tiles",
    .rewrites = "partition_by",
    .emit = partition_emit,
};

/* ---- inside a work-item ---- */

void cg_partition_into(cg *g, const st_node *e, const cg_binding *env, const cg_place *p) {
    if (!p->tuple || p->n != 2) {
        cg_fail(g, e, "partition_by writes a pair of arrays (the elements, the starts)");
        return;
    }
    part h = {.e = e, .env = env, .f = e->kids[1], .xs = e->kids[2], .out = &p->items[0], .starts = &p->items[1]};
    st_size_is_const(e->type->items[1]->size, &h.k);
    const char *n = cg_size(g, h.xs->type->size), *i = cg_name(g, "pb_i"), *b = cg_name(g, "pb_b");
    const char *bucket = cg_name(g, "pb_bucket"), *sum = cg_name(g, "pb_sum"), *k = cg_str(g, "%lldL", (long long)h.k);
    const char *at_b = slot(g, h.starts, b), *at_bucket = slot(g, h.starts, bucket);
    cg_line(g, "for (long %s = 0; %s < %s; %s++) %s = 0;", b, b, k, b, at_b);
    cg_open(g, cg_str(g, "for (long %s = 0; %s < (long)(%s); %s++) {", i, i, n, i));
    element_and_bucket(g, &h, i, bucket);
    cg_line(g, "%s++;", at_bucket);
    cg_close(g);
    cg_line(g, "long %s = 0;", sum);
    cg_open(g, cg_str(g, "for (long %s = 0; %s < %s; %s++) {", b, b, k, b));
    cg_line(g, "const long pb_c = %s;", at_b);
    cg_line(g, "%s = %s;", at_b, sum);
    cg_line(g, "%s += pb_c;", sum);
    cg_close(g);
    cg_open(g, cg_str(g, "for (long %s = 0; %s < (long)(%s); %s++) {", i, i, n, i));
    cg_value x = element_and_bucket(g, &h, i, bucket);
    const char *at = cg_name(g, "pb_at");
    cg_line(g, "const long %s = %s++;", at, at_bucket);
    cg_store(g, cg_place_index(g, h.out, at), &x);
    cg_close(g);
    /* each start moved to the next bucket as its elements were placed: back by one */
    cg_line(g, "for (long %s = %s - 1; %s > 0; %s--) %s = %s;", b, k, b, b, at_b, slot(g, h.starts, cg_str(g, "%s - 1", b)));
    cg_line(g, "%s = 0;", slot(g, h.starts, "0"));
}
