/* codegen/cg_host.c — kernel partitioning: the top of a def, between kernels.
 *
 * A top-level mapGlb or mapWrg is a kernel; any other computation runs in a
 * kernel of one work-item; views (split, zip, get, …) and cheap scalars are
 * kept as expressions and generated inside each kernel that reads them;
 * every intermediate is a global buffer. An intermediate that the def
 * returns as it is gets the output's buffer, so nothing is copied at the
 * end. */
#include "cg.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- buffers and kernel arguments ---- */

static int new_buffer(cg *g, cg_buffer_role role, const char *name, st_scalar_kind kind, const st_size *count) {
    if (!cg_grow(g, (void **)&g->buffers, g->nbuffers, &g->capbuffers, sizeof *g->buffers)) return 0;
    /* where what it holds is computed: the node being generated */
    st_loc at = st_node_loc(g->cx, g->at);
    g->buffers[g->nbuffers] =
        (cg_buffer){name, role, (int)cg_buffers_of(g, role), kind, count, NULL, .line = at.line, .col = at.col};
    return (int)g->nbuffers++;
}

uint32_t cg_buffers_of(const cg *g, cg_buffer_role role) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < g->nbuffers; i++) n += g->buffers[i].role == role;
    return n;
}

/* Give every leaf of p a host buffer of its own: in_xs, out0, t3_partials. */
static void bind_buffers(cg *g, const cg_place *p, cg_buffer_role role) {
    if (p->tuple) {
        for (uint32_t k = 0; k < p->n; k++) bind_buffers(g, &p->items[k], role);
        return;
    }
    cg_mem *m = (cg_mem *)&p->mem;
    const char *base = role == CG_BUF_INPUT    ? cg_str(g, "in_%s", m->base)
                       : role == CG_BUF_OUTPUT ? cg_str(g, "out%u", cg_buffers_of(g, CG_BUF_OUTPUT))
                       : role == CG_BUF_ALIAS  ? m->base
                                               : cg_str(g, "t%u_%s", g->nbuffers, m->base);
    /* a length known only at run time is allocated for its worst case */
    m->buffer = new_buffer(g, role, base, m->kind, cg_upper(g, cg_mem_elements(g, m)));
    m->base = base;
}

const cg_place *cg_host_temp(cg *g, const st_type *t, const char *hint) {
    const cg_place *p = cg_place_new(g, t, CG_GLOBAL, hint);
    if (p) bind_buffers(g, p, CG_BUF_TEMP);
    return p;
}

static uint32_t collect_leaves(const cg_place *p, const cg_mem **out, uint32_t n) {
    if (!p->tuple) {
        if (out) out[n] = &p->mem;
        return n + 1;
    }
    for (uint32_t i = 0; i < p->n; i++) n = collect_leaves(&p->items[i], out, n);
    return n;
}

const cg_mem **cg_place_leaves(cg *g, const cg_place *p, uint32_t *n) {
    *n = collect_leaves(p, NULL, 0);
    const cg_mem **m = cg_alloc(g, *n * sizeof *m);
    if (m) collect_leaves(p, m, 0);
    return m;
}

const cg_place *cg_host_temp_sized(cg *g, const st_type *elem, const char *count_c, const char *hint) {
    const cg_place *p = cg_host_temp(g, st_type_array(g->cx, st_size_const(g->cx, 1), elem), hint);
    uint32_t n;
    const cg_mem **leaves = p ? cg_place_leaves(g, p, &n) : NULL;
    for (uint32_t i = 0; leaves && i < n; i++) g->buffers[leaves[i]->buffer].count_c = count_c;
    return leaves ? p : NULL;
}

static void add_arg(cg *g, cg_arg arg) {
    cg_kernel *k = g->k;
    if (!k || !k->name) return; /* an operator function takes no arguments */
    for (uint32_t i = 0; i < k->nargs; i++)
        if (k->args[i].kind == arg.kind && arg.kind == CG_ARG_VALUE ? !strcmp(k->args[i].name, arg.name)
            : k->args[i].kind == arg.kind && k->args[i].index == arg.index && arg.kind != CG_ARG_LOCAL) {
            k->args[i].written |= arg.written;
            return;
        }
    cg_arg *grown = cg_alloc(g, (k->nargs + 1) * sizeof *grown);
    if (!grown) return;
    if (k->nargs) memcpy(grown, k->args, k->nargs * sizeof *grown);
    grown[k->nargs++] = arg;
    k->args = grown;
}

void cg_use_buffer(cg *g, int buffer, bool write) {
    add_arg(g, (cg_arg){.kind = CG_ARG_BUFFER, .index = buffer, .written = write});
}

/* Local memory is an argument: its size comes from the host, so it may
 * follow the program's sizes. */
void cg_add_local(cg *g, const char *name, st_scalar_kind kind, const st_size *count) {
    if (!g->k) return;
    add_arg(g, (cg_arg){.kind = CG_ARG_LOCAL, .index = (int)g->k->nargs, .elem = kind, .count = count, .name = name});
}

void cg_add_local_c(cg *g, const char *name, st_scalar_kind kind, const char *count_c) {
    if (!g->k) return;
    add_arg(g, (cg_arg){.kind = CG_ARG_LOCAL, .index = (int)g->k->nargs, .elem = kind, .count_c = count_c, .name = name});
}

void cg_use_value(cg *g, const char *name) { add_arg(g, (cg_arg){.kind = CG_ARG_VALUE, .name = name}); }

void cg_glue_value(cg *g, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    st_buf_printf(&g->glue_values, "    %s\n", line);
}

/* ---- kernels ---- */

/* The node's first line, for the kernels' and the glue's comments,
 * escaped (cg_put_escaped) as all outside text is. */
static const char *what_of(cg *g, const st_node *e) {
    st_buf b = {0}, line = {0};
    st_print_node(e, &b);
    const char *text = b.data ? b.data : "";
    size_t len = strcspn(text, "\n");
    cg_put_escaped(&line, text, len > 70 ? 70 : len);
    st_buf_puts(&line, len > 70 || text[len] ? " ..." : "");
    const char *r = cg_str(g, "%s", line.data ? line.data : "");
    st_buf_free(&b);
    st_buf_free(&line);
    return r;
}

void cg_kernel_begin(cg *g, cg_shape shape, const st_size *count, const char *hint, const st_node *e) {
    cg_kernel *k = cg_alloc(g, sizeof *k);
    g->k = &g->nowhere; /* out of memory: the text goes nowhere, g->failed says so */
    if (!k) return;
    if (!cg_grow(g, (void **)&g->kernels, g->nkernels, &g->capkernels, sizeof *g->kernels)) return;
    k->name = cg_str(g, "k%u_%s", g->nkernels, g->hint ? g->hint : hint);
    g->hint = NULL;
    k->what = what_of(g, e);
    k->shape = shape;
    k->count = count;
    g->kernels[g->nkernels++] = k;
    g->k = k;
    g->indent = 1;
    g->barrier_pending = false;
    g->slot = NULL;
    g->slots = NULL;
    k->repeated = g->loop_depth > 0;
    for (uint32_t i = 0; i < g->nscalars; i++) add_arg(g, (cg_arg){.kind = CG_ARG_SCALAR, .index = (int)i});
}

void cg_kernel_end(cg *g) {
    g->k = NULL;
    g->slot = NULL;
    g->slots = NULL;
    g->level = CG_HOST;
}

static void host_into(cg *g, const st_node *e, const cg_binding *env, const cg_place *p);

/* What runs before the kernel that reads it, in kernels of its own, into a
 * global buffer: mapGlb and mapWrg, and every primitive that makes kernels
 * of its own (cg_algorithms: a single-pass scan, subhistograms), so that whatever reads
 * one (a reduce, a tuple, a scalar expression) reads its result from
 * memory: the def in A-normal form for kernel-makers, in program order. */
static bool top_parallel(const st_node *e) {
    return e->kind == ST_NODE_PRIM &&
           (e->u.prim == ST_PRIM_MAP_GLB || e->u.prim == ST_PRIM_MAP_WRG || st_prim_makes_kernels(e->u.prim));
}

static const cg_place *top_place(cg *g, const st_type *t) { return cg_host_temp(g, t, "arg"); }

static const cg_stage top = {top_parallel, top_place, host_into};

const st_node *cg_host_hoist_args(cg *g, const st_node *e, uint32_t first, const cg_binding **env) {
    return cg_hoist_args_fusing(g, e, first, env, &top);
}

void cg_host_into(cg *g, const st_node *e, const cg_binding *env, const cg_place *p) { host_into(g, e, env, p); }

/* The elements a GPU work-item of a run kernel takes at once: 16 bytes of
 * the narrowest array it reads or writes, so that each array's share of
 * the run is one or more 128-bit loads or stores, which NVIDIA's memory
 * system serves at its full width, where one element a work-item leaves
 * it issuing four times the instructions for the same bytes. */
static int vector_run(const cg *g) {
    size_t narrowest = 16;
    for (uint32_t a = 0; a < g->k->nargs; a++)
        if (g->k->args[a].kind == CG_ARG_BUFFER) {
            size_t bytes = st_scalar_size(g->buffers[g->k->args[a].index].kind);
            if (bytes && bytes < narrowest) narrowest = bytes;
        }
    return (int)(16 / narrowest);
}

/* Each element's code, in a kernel of the glue's CG_SHAPE_GLB: each
 * work-item a run of consecutive elements, as many as the launch leaves
 * it, ⌈n / work-items⌉. On a GPU the glue launches a work-item per 16
 * bytes of the narrowest array (vector_run): a whole run is a loop of that
 * many, unrolled, over arrays the compiler is told are 16-byte aligned, so
 * that each array's part of it is 128-bit loads or stores, a warp's
 * neighbouring and coalesced; the last run, short, is the plain loop. On a CPU
 * (PoCL) groups of one, each a run of thousands (strata_map_run), a loop
 * the compiler vectorises along the run, through which memory streams.
 * One element a work-item there, PoCL vectorising a group's work-items as
 * one loop, reads and writes a group's few elements at a time, under a
 * mask, each group scheduled on its own. glb_begin starts the element's
 * code and gives its index (in [0, n)); glb_end puts it in its loop.
 *
 * Two kinds of element keep one a work-item on every device, under an
 * `if (i < n)`: one that loops itself (a chunk's fold: a run already, in
 * a group of one on a CPU), and one whose code divides its index by a
 * constant (a scan's propagate reads its block's prefix at i / BS): the
 * quotient is the group's (cg_thread.c's group_quotient), and the code is
 * written twice, for a group whose work-items are all before the end,
 * without the test `i < n`, and for the last group with it. PoCL
 * vectorises a group's work-items: under the test every read is masked,
 * and a read the whole group shares is gathered a lane at a time; without
 * it, one read. */
static cg_value glb_begin(cg *g, const st_size *n, st_buf *saved) {
    const char *i = cg_name(g, "i");
    *saved = cg_capture_begin(g);
    g->indent++;
    g->uniform_uses = 0;
    cg_value index = cg_ranged(cg_index_value(g, i), 0, n);
    index.group_first = "((long)get_group_id(0) * (long)get_local_size(0))";
    return index;
}

static void glb_end(cg *g, const st_size *n, const char *i, st_buf saved) {
    g->indent--;
    st_buf text = cg_capture_end(g, saved);
    const char *end = cg_size(g, n);
    if (g->uniform_uses) {
        cg_line(g, "const long %s = get_global_id(0);", i);
        cg_line(g, "if (((long)get_group_id(0) + 1) * (long)get_local_size(0) <= %s) { /* a whole group */", end);
        cg_emit_text(g, &text, 0, NULL, NULL);
        cg_line(g, "} else if (%s < %s) {", i, end);
    } else if (g->k->loops) {
        cg_line(g, "const long %s = get_global_id(0);", i);
        cg_line(g, "if (%s < %s) {", i, end);
    } else {
        g->k->runs = true;
        g->k->vec = vector_run(g);
        cg_line(g, "const long st_items = (long)get_global_size(0);");
        cg_line(g, "const long st_run = (%s + st_items - 1) / st_items;", end);
        cg_line(g, "const long st_lo = (long)get_global_id(0) * st_run;");
        cg_line(g, "const long st_hi = st_lo + st_run < %s ? st_lo + st_run : %s;", end, end);
        if (g->k->vec > 1) {
            cg_line(g, "if (st_run == %d && st_hi - st_lo == %d) { /* a GPU's run: 128-bit loads and stores */",
                    g->k->vec, g->k->vec);
            g->indent++;
            for (uint32_t a = 0; a < g->k->nargs; a++)
                if (g->k->args[a].kind == CG_ARG_BUFFER)
                    cg_line(g, "ST_ASSUME_ALIGNED16(%s);", g->buffers[g->k->args[a].index].name);
            cg_line(g, "const long st_v = (long)get_global_id(0) * %d;", g->k->vec);
            cg_line(g, "#pragma unroll");
            cg_line(g, "for (long %s = st_v; %s < st_v + %d; %s++) {", i, i, g->k->vec, i);
            cg_emit_text(g, &text, 1, NULL, NULL);
            cg_line(g, "}");
            g->indent--;
            cg_line(g, "} else");
        }
        cg_line(g, "for (long %s = st_lo; %s < st_hi; %s++) {", i, i, i);
    }
    cg_emit_text(g, &text, 0, NULL, NULL);
    cg_line(g, "}");
    st_buf_free(&text);
}

/* mapGlb(f, xs): the elements' code, glb_begin's runs. */
static void kernel_glb(cg *g, const st_node *e, const cg_binding *env, const cg_place *p, const char *hint) {
    e = cg_hoist_args(g, e, 0, &env, &top);
    cg_kernel_begin(g, CG_SHAPE_GLB, e->kids[1]->type->size, hint, e);
    g->level = CG_THREAD;
    cg_value xs = cg_thread_value(g, e->kids[1], env);
    st_buf saved;
    cg_value i = glb_begin(g, cg_length(&xs), &saved);
    cg_value x = cg_index_at(g, &xs, i);
    cg_scratch_enter(g, i.c, cg_length(&xs)); /* the kernel's end leaves it */
    cg_apply_into(g, e->kids[0], 1, &x, env, cg_place_index(g, p, i.c));
    glb_end(g, cg_length(&xs), i.c, saved);
    cg_kernel_end(g);
}

/* mapWrg(f, xs): one work-group per element.
 *
 * Where the blocks' count rounds up (⌈n/c⌉ blocks of c, a padded array's:
 * every element past n a padding), all blocks but the last are whole, and
 * there an element's test against the end (`if i < n then xs[i] else 0`)
 * always holds. Such tests, which the index's range decides in a whole
 * block (cg_range_below), read a flag; the group's code is then written
 * twice, for a whole block with the flag true and for the last with it
 * false, so that the compiler drops the tests from the first: a CPU's
 * (PoCL's) loops over a block then read memory without a mask, and
 * vectorise (which halved the time of [Pizzuti et al. 2022]'s block scan on
 * PoCL: docs/performance.md). The copies share the group's local memory; only one runs. */
static void kernel_wrg(cg *g, const st_node *e, const cg_binding *env, const cg_place *p, const char *hint) {
    e = cg_hoist_args(g, e, 0, &env, &top);
    cg_kernel_begin(g, CG_SHAPE_WRG, e->kids[1]->type->size, hint, e);
    g->level = CG_THREAD; /* views only: the element is read inside the group */
    cg_value xs = cg_thread_value(g, e->kids[1], env);
    g->level = CG_GROUP;
    const char *w = cg_name(g, "wg");
    cg_line(g, "long %s = get_group_id(0);", w);
    cg_value wv = cg_ranged(cg_index_value(g, w), 0, cg_length(&xs));
    const st_size *whole = st_size_whole_blocks(g->cx, cg_length(&xs));
    st_buf saved = {0};
    if (whole) {
        wv.hi_full = whole;
        g->whole = cg_name(g, "whole");
        g->whole_uses = 0;
        saved = cg_capture_begin(g);
    }
    cg_value x = cg_index_at(g, &xs, wv);
    cg_scratch_enter(g, w, cg_length(&xs)); /* the kernel's end leaves it */
    const st_node *f = e->kids[0];
    if (f->kind != ST_NODE_LAMBDA)
        cg_fail(g, f, "mapWrg needs a lambda");
    else
        cg_group_into(g, st_lambda_body(f), cg_bind_params(g, f, 1, &x, env), cg_place_index(g, p, w));
    if (whole) {
        st_buf text = cg_capture_end(g, saved);
        if (g->whole_uses) {
            cg_line(g, "if (%s < %s) { /* a whole block: every element before the end */", w, cg_size(g, whole));
            cg_emit_text(g, &text, 1, g->whole, "true");
            cg_line(g, "} else {");
            cg_emit_text(g, &text, 1, g->whole, "false");
            cg_line(g, "}");
        } else {
            cg_emit_text(g, &text, 0, NULL, NULL);
        }
        st_buf_free(&text);
        g->whole = NULL;
    }
    cg_kernel_end(g);
}

/* Anything else: one work-item does it. */
static void kernel_single(cg *g, const st_node *e, const cg_binding *env, const cg_place *p, const char *hint) {
    e = cg_hoist_inside(g, e, &env, &top);
    cg_kernel_begin(g, CG_SHAPE_SINGLE, NULL, hint, e);
    g->level = CG_THREAD;
    cg_line(g, "if (get_global_id(0) != 0) return;");
    cg_thread_into(g, e, env, p);
    cg_kernel_end(g);
}

/* An array that is already there, copied into its place in parallel. */
static void kernel_copy(cg *g, const st_node *e, const cg_binding *env, const cg_place *p, const char *hint) {
    /* a variable already computed into this very place (or its first
     * elements, a take of it) needs no kernel */
    const st_node *whole = e;
    while (st_is_prim(whole, ST_PRIM_TAKE)) whole = whole->kids[1];
    if (whole->kind == ST_NODE_VAR) {
        for (const cg_binding *b = env; b; b = b->next)
            if (b->name == whole->u.name) {
                if (b->place) {
                    cg_value v = cg_value_of_place(g, b->type, b->place);
                    /* the same buffer and offset: a take's elements are there */
                    if (cg_same_place(&v, p)) return;
                }
                break;
            }
    }
    cg_kernel_begin(g, CG_SHAPE_GLB, e->type->size, hint, e);
    g->level = CG_THREAD;
    cg_value v = cg_thread_value(g, e, env);
    st_buf saved;
    cg_value i = glb_begin(g, e->type->size, &saved);
    cg_value x = cg_index_at(g, &v, i);
    cg_store(g, cg_place_index(g, p, i.c), &x);
    glb_end(g, e->type->size, i.c, saved);
    cg_kernel_end(g);
}

/* One pass of scatter s->e's elements, one work-item each. */
static void scatter_kernel(cg *g, const cg_scatter *s, const cg_binding *env, const cg_place *p, const char *hint) {
    const st_node *e = s->e;
    cg_kernel_begin(g, CG_SHAPE_GLB, e->kids[1]->type->size, hint, e);
    g->level = CG_THREAD;
    cg_value is, vs;
    cg_scatter_sources(g, e, env, &is, &vs);
    st_buf saved;
    cg_value i = glb_begin(g, cg_length(&is), &saved);
    cg_scatter_step(g, s, env, p, &is, &vs, i.c);
    glb_end(g, cg_length(&is), i.c, saved);
    cg_kernel_end(g);
}

/* scatter(dest, …): dest into place, then the writes in parallel; where
 * indices may repeat (a scatter, not a scatterDistinct), a pass of claims
 * first, so that the last write in index order stays (cg_winners.c). A
 * scatter of the (index, value) pairs a kernel-making primitive makes whose
 * descriptor fuses scatters (a single-pass scan) is that primitive's
 * kernel, writing each pair as it stores; run once per pass. */
static void kernel_scatter(cg *g, const st_node *e, const cg_binding *env, const cg_place *p, const char *hint) {
    const st_node *pairs = e->nkids == 2 ? e->kids[1] : NULL;
    while (pairs && pairs->kind == ST_NODE_PRIM && pairs->u.prim == ST_PRIM_TO_GLOBAL) pairs = pairs->kids[0];
    /* a scratch destination is the place as it is: nothing is written first */
    bool fill = !st_is_prim(e->kids[0], ST_PRIM_SCRATCH);
    const cg_algorithm *a = pairs && pairs->kind == ST_NODE_PRIM ? cg_algorithm_of(pairs->u.prim) : NULL;
    if (a && a->fuses_scatter) {
        if (fill) host_into(g, e->kids[0], env, p);
        const cg_winners *w = cg_winners_new(g, e, pairs->type->size);
        if (w) cg_run_algorithm(g, a, pairs, env, p, &(cg_scatter){e, CG_CLAIM, w});
        cg_run_algorithm(g, a, pairs, env, p, &(cg_scatter){e, w ? CG_WON : CG_ALL, w});
        return;
    }
    e = cg_hoist_args(g, e, 1, &env, &top);
    if (fill) host_into(g, e->kids[0], env, p);
    const cg_winners *w = cg_winners_new(g, e, e->kids[1]->type->size);
    if (w) scatter_kernel(g, &(cg_scatter){e, CG_CLAIM, w}, env, p, "scatter_claims");
    scatter_kernel(g, &(cg_scatter){e, w ? CG_WON : CG_ALL, w}, env, p, hint);
}

/* ---- loops at the top ---- */

/* Glue text before the next kernel's launch. */
static void glue_mark(cg *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void glue_mark(cg *g, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char line[2048];
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (!cg_grow(g, (void **)&g->marks, g->nmarks, &g->capmarks, sizeof *g->marks)) return;
    g->marks[g->nmarks++] = (cg_glue_mark){g->nkernels, cg_str(g, "%s", line)};
}

/* A scalar (an i64 count, a bool condition) computed on the device and
 * read back into the glue's long `name`; `what` names it in the message.
 * A variable already in memory of its own is read where it is. */
static void read_back(cg *g, const st_node *e, const cg_binding *env, const char *name, const char *what) {
    const cg_place *p = NULL;
    const char *offset = "0";
    if (e->kind == ST_NODE_VAR)
        for (const cg_binding *b = env; b; b = b->next)
            if (b->name == e->u.name) {
                if (b->place && !b->place->tuple && b->place->mem.rank == 0 && b->place->mem.buffer >= 0 &&
                    b->place->mem.kind == e->type->scalar)
                    p = b->place, offset = b->place->mem.offset;
                break;
            }
    if (!p) {
        p = cg_host_temp(g, e->type, name);
        if (!p || p->tuple) return;
        host_into(g, e, env, p);
    }
    const char *ctype = e->type->scalar == ST_BOOL ? "unsigned char" : "long";
    glue_mark(g, "    {\n        %s v = 0;\n"
                 "        err = clEnqueueReadBuffer(queue, %s, CL_TRUE, %s, sizeof v, &v, 0, NULL, NULL);\n"
                 "        if (err != CL_SUCCESS) {\n            snprintf(msg, msgcap, \"reading %s\");\n"
                 "            goto done;\n        }\n        %s = (long)v;\n    }\n",
              ctype, p->mem.base, strcmp(offset, "0") ? cg_str(g, "sizeof v * (size_t)(%s)", offset) : "0", what, name);
}

/* ---- lengths known only at run time ---- */

/* The counts of the take and drop in e (outside functions, and outside
 * lets, whose bodies are met later, in their scope), each computed on the
 * device and read back into the glue once, before any kernel reads it, and
 * checked there against its array's length: a count outside 0..n is the
 * program's error, reported with where it stands, before anything reads
 * past an array. */
static void cut_counts(cg *g, const st_node *e, const cg_binding *env) {
    if (g->failed || e->kind == ST_NODE_LAMBDA || e->kind == ST_NODE_OPFN || e->kind == ST_NODE_LET) return;
    for (uint32_t i = 0; i < e->nkids; i++) cut_counts(g, e->kids[i], env);
    if (!st_is_prim(e, ST_PRIM_TAKE) && !st_is_prim(e, ST_PRIM_DROP)) return;
    const st_size *n = e->kids[1]->type->size, *k = e->type->size;
    st_err err = {0};
    if (st_is_prim(e, ST_PRIM_DROP) && !(k = st_size_sub(g->cx, n, k, &err))) return (void)cg_fail(g, e, "%s", err.message);
    /* nodes carry no place of their own: the def's, and the expression (a
     * format's text in the glue, so a % in it is doubled) */
    const char *printed = what_of(g, e);
    st_buf b = {0};
    for (const char *c = printed; *c; c++) st_buf_puts(&b, *c == '%' ? "%%" : (char[]){*c, 0});
    const char *what = cg_str(g, "%s in `%s` at %d:%d", b.data ? b.data : "", g->def->name, g->def->loc.line,
                              g->def->loc.col);
    st_buf_free(&b);
    if (st_size_is_exist(k)) {
        cg_exist *x = cg_exist_of(g, k);
        if (!x || x->counted) return;
        x->counted = true;
        cg_glue_value(g, "long %s = 0; /* the count of %s */", x->c, what);
        read_back(g, e->kids[0], env, x->c, cg_str(g, "the count of %s", what));
    }
    const char *kc = cg_size(g, k), *nc = cg_size(g, n);
    glue_mark(g, "    if ((long)(%s) < 0 || (long)(%s) > (long)(%s)) {\n"
                 "        snprintf(msg, msgcap, \"%s: the count is %%ld, outside 0..%%ld, the length of its array\",\n"
                 "                 (long)(%s), (long)(%s));\n"
                 "        err = STRATA_COUNT_OUT_OF_RANGE;\n        goto done;\n    }\n",
              kc, kc, nc, what, kc, nc);
}

/* The accumulator's names, f's parameters from `first` on (one, or one per
 * component of a tuple it destructures), read from place p. */
static const cg_binding *bind_acc(cg *g, const cg_binding *env, const st_node *f, uint32_t first, const st_type *t,
                                  const cg_place *p) {
    uint32_t k = st_lambda_nparams(f) - first;
    if (k == 1) return cg_bind_memory(g, env, f->kids[first]->u.name, t, p);
    if (!p->tuple || p->n != k || t->kind != ST_TYPE_TUPLE) {
        cg_fail(g, f, "a loop's pattern over an accumulator that is not a tuple");
        return env;
    }
    for (uint32_t i = 0; i < k; i++) env = cg_bind_memory(g, env, f->kids[first + i]->u.name, t->items[i], &p->items[i]);
    return env;
}

/* The accumulator's final value from place `from` into p, array by array. */
static void copy_out(cg *g, const st_type *t, const cg_place *from, const cg_binding *env, const cg_place *p) {
    if (from->tuple) {
        for (uint32_t i = 0; i < from->n && i < p->n; i++)
            copy_out(g, cg_component_type(g, t, i), &from->items[i], env, &p->items[i]);
        return;
    }
    const st_node *var = st_var(g->cx, st_fresh_name(g->cx, "acc"), t, NULL);
    if (!var) return (void)cg_fail(g, NULL, "out of memory");
    host_into(g, var, cg_bind_memory(g, env, var->u.name, t, from), p);
}

/* Whether every leaf of p is a whole global buffer laid out as the one of
 * `like` (a fresh temporary's): a handle a loop's turn can take. */
static bool whole_buffers(cg *g, const cg_place *p, const cg_place *like) {
    uint32_t n, nlike;
    const cg_mem **a = cg_place_leaves(g, p, &n), **b = cg_place_leaves(g, like, &nlike);
    if (!a || !b || n != nlike) return false;
    for (uint32_t i = 0; i < n; i++) {
        if (a[i]->buffer < 0 || a[i]->space != CG_GLOBAL || strcmp(a[i]->offset, "0") || a[i]->kind != b[i]->kind ||
            a[i]->rank != b[i]->rank)
            return false;
        for (uint32_t d = 0; d < a[i]->rank; d++)
            if (strcmp(cg_size(g, a[i]->dims[d]), cg_size(g, b[i]->dims[d])) ||
                strcmp(cg_size(g, a[i]->strides[d]), cg_size(g, b[i]->strides[d])))
                return false;
    }
    return true;
}

/* The place of e, a variable or a tuple of variables, where its memory is
 * whole buffers laid out as `like`; else NULL. */
static const cg_place *in_buffers(cg *g, const st_node *e, const cg_binding *env, const cg_place *like) {
    const cg_place *p = NULL;
    if (e->kind == ST_NODE_VAR) {
        for (const cg_binding *b = env; b && !p; b = b->next)
            if (b->name == e->u.name) {
                if (!b->place) return NULL;
                p = b->place;
            }
    } else if ((e->kind == ST_NODE_TUPLE || st_is_prim(e, ST_PRIM_ZIP)) && like->tuple && like->n == e->nkids) {
        /* a tuple of arrays, or a zip of them: an array of tuples is a tuple of arrays in memory */
        cg_place *t = cg_alloc(g, sizeof *t), *items = cg_alloc(g, e->nkids * sizeof *items);
        if (!t || !items) return NULL;
        for (uint32_t i = 0; i < e->nkids; i++) {
            const cg_place *item = in_buffers(g, e->kids[i], env, &like->items[i]);
            if (!item) return NULL;
            items[i] = *item;
        }
        *t = (cg_place){.tuple = true, .n = e->nkids, .items = items};
        p = t;
    }
    return p && whole_buffers(g, p, like) ? p : NULL;
}

/* Does a leaf of a lie in a buffer that a leaf of b lies in? */
static bool shares_a_buffer(cg *g, const cg_place *a, const cg_place *b) {
    uint32_t na, nb;
    const cg_mem **x = cg_place_leaves(g, a, &na), **y = cg_place_leaves(g, b, &nb);
    if (!x || !y) return true;
    for (uint32_t i = 0; i < na; i++)
        for (uint32_t j = 0; j < nb; j++)
            if (x[i]->buffer == y[j]->buffer) return true;
    return false;
}

/* A glue handle for every leaf of a value of type t ("loop0_acc",
 * "loop0_acc_1"): which buffer it names changes turn by turn. */
static const cg_place *loop_handles(cg *g, const st_type *t, const char *name) {
    const cg_place *p = cg_place_new(g, t, CG_GLOBAL, name);
    if (p) bind_buffers(g, p, CG_BUF_ALIAS);
    return p;
}

/* loop(n, (i, acc) => body, x) and while(acc => c, acc => body, x) over
 * arrays: the glue runs the body's kernels n times, or while the condition,
 * computed on the device by kernels of its own and read back, holds. The
 * accumulator is a set of handles, `acc` and `next`: each turn reads acc's
 * buffers and writes next's, then they move on, with nothing copied. The
 * first turn reads x where it is, when x is a variable of whole buffers
 * (the def's input, say), which no turn writes; the turns write two sets in
 * turn, the result's own buffers (p) and a spare, the first chosen by the
 * count's parity so that the last turn writes p. Only a loop of no turns
 * copies x into p; a while loop, whose count is not known ahead, writes p
 * first, and copies its last turn's result into p only when that count
 * was even. The count is the glue's own
 * arithmetic when it is a size expression, else computed and read back
 * once. */
static void host_loop(cg *g, const st_node *e, const cg_binding *env, const cg_place *p) {
    bool is_while = e->u.prim == ST_PRIM_WHILE;
    const st_node *f = e->kids[1], *c = e->kids[0];
    if (f->kind != ST_NODE_LAMBDA || (is_while && c->kind != ST_NODE_LAMBDA))
        return (void)cg_fail(g, e, "a loop whose body is not a lambda");
    const st_type *t = e->type;
    const char *lp = cg_str(g, "loop%u", g->nloops++);
    const cg_place *acc = loop_handles(g, t, cg_str(g, "%s_acc", lp)),
                   *next = loop_handles(g, t, cg_str(g, "%s_next", lp)), *spare = cg_host_temp(g, t, "turns");
    if (!acc || !next || !spare) return;
    bool into_p = whole_buffers(g, p, spare);
    const cg_place *first = in_buffers(g, e->kids[2], env, spare);
    if (first && into_p && shares_a_buffer(g, first, p)) first = NULL; /* no turn may write what the first reads */
    if (!first) {
        if (!(first = cg_host_temp(g, t, "init"))) return;
        host_into(g, e->kids[2], env, first);
    }
    const cg_place *last = into_p ? p : cg_host_temp(g, t, "turns");
    if (!last) return;
    cg_glue_value(g, "long %s_n = 0, %s_i = 0;", lp, lp);
    cg_glue_value(g, "(void)%s_n;", lp);
    cg_glue_value(g, "(void)%s_i;", lp);
    if (!is_while) {
        st_err serr = {0};
        const st_size *s = st_node_as_size(g->cx, c, &serr);
        if (s) glue_mark(g, "    %s_n = (long)(%s);\n", lp, cg_size(g, s));
        else read_back(g, c, env, cg_str(g, "%s_n", lp), "a loop's count");
    }
    /* the glue's handles, leaf by leaf (every place here has t's leaves) */
    uint32_t n;
    const cg_mem **h_acc = cg_place_leaves(g, acc, &n), **h_next = cg_place_leaves(g, next, &n), **h_first = cg_place_leaves(g, first, &n),
                 **h_last = cg_place_leaves(g, last, &n), **h_spare = cg_place_leaves(g, spare, &n);
    if (!h_acc || !h_next || !h_first || !h_last || !h_spare) return;
    /* the first turn writes `last` when the count is odd: the last turn does */
    for (uint32_t i = 0; i < n; i++)
        glue_mark(g, "    %s = %s;\n    %s = %s ? %s : %s;\n", h_acc[i]->base, h_first[i]->base, h_next[i]->base,
                  is_while ? "0" : cg_str(g, "((%s_n & 1) == 0)", lp), h_spare[i]->base, h_last[i]->base);
    if (!is_while) glue_mark(g, "    for (%s_i = 0; %s_i < %s_n; %s_i++) {\n", lp, lp, lp, lp);
    else glue_mark(g, "    for (;;) {\n");
    g->loop_depth++;
    const cg_binding *inner = env;
    if (is_while) {
        read_back(g, st_lambda_body(c), bind_acc(g, env, c, 0, t, acc), cg_str(g, "%s_n", lp), "a loop's condition");
        glue_mark(g, "    if (!%s_n) break;\n", lp);
        inner = bind_acc(g, env, f, 0, t, acc);
    } else {
        cg_binding *b = cg_alloc(g, sizeof *b);
        if (!b) return;
        *b = (cg_binding){.name = f->kids[0]->u.name, .value = cg_scalar(f->kids[0]->type, cg_str(g, "%s_i", lp)),
                          .glue_value = true, .next = env};
        inner = bind_acc(g, b, f, 1, t, acc);
    }
    host_into(g, st_lambda_body(f), inner, next);
    g->level = CG_HOST;
    for (uint32_t i = 0; i < n; i++)
        glue_mark(g, "    %s = %s;\n    %s = %s == %s ? %s : %s;\n", h_acc[i]->base, h_next[i]->base, h_next[i]->base,
                  h_next[i]->base, h_last[i]->base, h_spare[i]->base, h_last[i]->base);
    glue_mark(g, "    }\n");
    g->loop_depth--;
    /* the last turn wrote p, unless there was none (a for loop's count ≤ 0, a while loop's condition
       false at once) or a while loop's count was even */
    if (into_p) glue_mark(g, "    if (%s != %s) {\n", h_acc[0]->base, h_last[0]->base);
    copy_out(g, t, acc, env, p);
    if (into_p) glue_mark(g, "    }\n");
}

/* take, drop or concat whose arrays are computed (a scatter into a
 * filter's buffer): those computed first, into buffers of their own, so
 * that what is left is a view of them (cg_cut_view), with the same length
 * (take's length is made from its count, which stays). */
static const st_node *cut_hoisted(cg *g, const st_node *e, const cg_binding **env) {
    bool concat = st_is_prim(e, ST_PRIM_CONCAT);
    if (g->failed || (!concat && !st_is_prim(e, ST_PRIM_TAKE) && !st_is_prim(e, ST_PRIM_DROP)) || cg_is_view(e)) return e;
    for (uint32_t i = concat ? 0 : 1; i < e->nkids; i++) {
        const st_node *kid = cut_hoisted(g, e->kids[i], env);
        if (kid == e->kids[i]) continue;
        st_err err = {0};
        const st_node *r = st_replace_kid(g->cx, e, i, kid, &err);
        if (!r) return cg_fail(g, e, "%s", err.message), e;
        e = r;
    }
    return cg_hoist_args(g, e, concat ? 0 : 1, env, &top);
}

/* ---- the top ---- */

/* Is e take(k, xs) whose place, sized for the worst case, holds all of
 * xs? Then xs computed there leaves e's elements where they belong. */
static bool take_holds_all(cg *g, const st_node *e) {
    return st_is_prim(e, ST_PRIM_TAKE) && cg_upper(g, e->type->size) == e->kids[1]->type->size;
}

/* Where the def's result takes name as it is (or its first elements, a
 * take of it), the output's place: the intermediate is computed there and
 * needs no copy. */
static const cg_place *result_place(cg *g, const st_node *body, const char *name, const cg_place *p) {
    while (body->kind == ST_NODE_LET) {
        for (uint32_t i = 0; i < st_let_nvars(body); i++)
            if (body->kids[i]->u.name == name) return NULL; /* shadowed */
        body = st_let_body(body);
    }
    while (take_holds_all(g, body)) body = body->kids[1];
    if (body->kind == ST_NODE_VAR) return body->u.name == name ? p : NULL;
    if (body->kind == ST_NODE_TUPLE && p && p->tuple && p->n == body->nkids)
        for (uint32_t i = 0; i < body->nkids; i++) {
            const cg_place *r = result_place(g, body->kids[i], name, &p->items[i]);
            if (r) return r;
        }
    return NULL;
}

static const cg_place *let_place(cg *g, const st_node *e, const cg_place *out, const st_node *value) {
    uint32_t n = st_let_nvars(e);
    const cg_place *found[ST_MAX_KIDS];
    bool all = n <= ST_MAX_KIDS;
    for (uint32_t i = 0; i < n && all; i++) {
        found[i] = out ? result_place(g, st_let_body(e), e->kids[i]->u.name, out) : NULL;
        all = found[i] != NULL;
    }
    if (all && n == 1) return found[0];
    if (all) {
        cg_place *t = cg_alloc(g, sizeof *t);
        cg_place *items = cg_alloc(g, n * sizeof *items);
        if (!t || !items) return NULL;
        for (uint32_t i = 0; i < n; i++) items[i] = *found[i];
        *t = (cg_place){.tuple = true, .n = n, .items = items};
        return t;
    }
    return cg_host_temp(g, value->type, e->kids[0]->u.name);
}

static void host_let(cg *g, const st_node *e, const cg_binding *env, const cg_place *p, const cg_place *out) {
    const char *outer = g->hint; /* the let this one is the value of, if any */
    const st_node *value = st_let_value(e);
    cg_binding *b;
    cut_counts(g, value, env); /* a take or drop bound here is then a view */
    value = cut_hoisted(g, value, &env);
    if (cg_is_view(value)) {
        /* kept as an expression; each kernel that reads it generates it */
        uint32_t n = st_let_nvars(e);
        for (uint32_t i = 0; i < n; i++) {
            b = cg_alloc(g, sizeof *b);
            if (!b) return;
            *b = (cg_binding){.name = e->kids[i]->u.name, .deferred = true, .expr = value, .env = env,
                              .proj = n == 1 ? -1 : (int)i, .next = env};
            env = b;
        }
    } else {
        const cg_place *tp = let_place(g, e, out, value);
        if (!tp) return;
        g->hint = e->kids[0]->u.name;
        /* a scan's total, its scan run below: that scan's kernel writes it */
        if (st_is_prim(value, ST_PRIM_SCAN_TOTAL) && cg_total_runs_in(st_let_body(e), value)) cg_total_later(g, value, tp);
        else host_into(g, value, env, tp);
        g->hint = NULL;
        /* every name of the pattern reads its own part of the place, in
         * whichever kernel reads it */
        env = cg_bind_place(g, env, e, value->type, tp);
    }
    const st_node *body = st_let_body(e);
    g->hint = outer;
    if (body->kind == ST_NODE_LET) host_let(g, body, env, p, out);
    else host_into(g, body, env, p);
}

static void host_node_into(cg *g, const st_node *e, const cg_binding *env, const cg_place *p);

/* scanTotal(s) that no kernel of s writes: the kernels of s storing its
 * total alone where s's descriptor can (a reduce lookback took), any other
 * scan's fold in one work-item (what reduce-seq makes of a reduce). */
static void total_folded(cg *g, const st_node *e, const cg_binding *env, const cg_place *p) {
    const cg_algorithm *alg = cg_algorithm_at(e->kids[0]);
    if (alg && alg->total_only) return alg->total_only(g, e, env, p);
    st_scan_form f;
    if (!st_fold_form_of(e->kids[0], &f)) return (void)cg_fail(g, e, "scanTotal of a scan of another form than a scan's");
    st_err err = {0};
    const st_node *fold = st_prim_node(g->cx, ST_PRIM_REDUCE_SEQ, 3, (const st_node *[]){st_fold_step(&f), f.z, f.xs}, &err);
    if (!fold) return (void)cg_fail(g, e, "%s", err.message);
    host_into(g, fold, env, p);
}

static void host_into(cg *g, const st_node *e, const cg_binding *env, const cg_place *p) {
    const st_node *outer = cg_generating(g, e);
    host_node_into(g, e, env, p);
    g->at = outer;
}

/* x.i, x a tuple that a kernel-maker computes (partitionTiles' elements,
 * without its starts): it writes component i straight into p, the others
 * into buffers of their own, rather than all into buffers and component i
 * copied into p (in a radix sort's loop, a copy of the keys each turn). */
static bool component_of_kernels(cg *g, const st_node *e, const cg_binding *env, const cg_place *p) {
    const st_node *t = e->kind == ST_NODE_PROJ ? e->kids[0] : NULL;
    if (!t || t->kind != ST_NODE_PRIM || !cg_algorithm_of(t->u.prim) || t->type->kind != ST_TYPE_TUPLE) return false;
    cg_place *whole = cg_alloc(g, sizeof *whole), *items = cg_alloc(g, t->type->n * sizeof *items);
    if (!whole || !items) return true;
    for (uint32_t k = 0; k < t->type->n; k++) {
        const cg_place *q = k == e->u.index ? p : cg_host_temp(g, t->type->items[k], "part");
        if (!q) return true;
        items[k] = *q;
    }
    *whole = (cg_place){.tuple = true, .n = t->type->n, .items = items};
    host_into(g, t, env, whole);
    return true;
}

static void host_node_into(cg *g, const st_node *e, const cg_binding *env, const cg_place *p) {
    if (g->failed || !p) return;
    g->level = CG_HOST;
    if (e->kind == ST_NODE_LET) {
        host_let(g, e, env, p, p);
        return;
    }
    if (st_is_prim(e, ST_PRIM_SCAN_TOTAL)) { /* one not let-bound before its scan's kernel (host_let) */
        total_folded(g, e, env, p);
        return;
    }
    if (component_of_kernels(g, e, env, p)) return;
    cut_counts(g, e, env);
    e = cut_hoisted(g, e, &env);
    e = cg_hoist_kernels(g, e, &env, &top); /* what a rule put inside a map but is the same for every element */
    if (cg_into_view(g, e, env, p, host_into)) return;
    if (e->kind == ST_NODE_PRIM) {
        switch (e->u.prim) {
        case ST_PRIM_MAP_GLB: kernel_glb(g, e, env, p, "map"); return;
        case ST_PRIM_MAP_WRG: kernel_wrg(g, e, env, p, "blocks"); return;
        case ST_PRIM_MAP_LCL:
            cg_fail(g, e, "mapLcl outside a work-group; at the top a parallel map is mapGlb or mapWrg");
            return;
        case ST_PRIM_MAP:
            if (cg_is_view(e)) break; /* an index map: copied below like any view */
            cg_fail(g, e, "a map that was not lowered; apply lower-opencl (or map-glb, map-wrg) first");
            return;
        case ST_PRIM_SCATTER: case ST_PRIM_SCATTER_DISTINCT: kernel_scatter(g, e, env, p, "scatter"); return;
        case ST_PRIM_LOOP: case ST_PRIM_WHILE:
            /* a loop over arrays is the glue's; any other one work-item's, below */
            if (!st_is_array_loop(e)) break;
            host_loop(g, e, env, p);
            return;
        default: {
            const cg_algorithm *a = cg_algorithm_of(e->u.prim);
            if (!a) break;
            cg_run_algorithm(g, a, e, env, p, NULL);
            return;
        }
        }
    }
    if (e->type->kind == ST_TYPE_ARRAY && cg_is_view(e)) {
        kernel_copy(g, e, env, p, "copy");
        return;
    }
    kernel_single(g, e, env, p, e->kind == ST_NODE_PRIM ? st_prim_get(e->u.prim)->name : "seq");
}

bool cg_host(cg *g) {
    const st_def *d = g->def;
    const cg_binding *env = NULL;
    g->scalars = cg_alloc(g, (d->nparams + d->nsizes + 1) * sizeof *g->scalars);
    if (!g->scalars) return false;
    for (uint32_t i = 0; i < d->nparams; i++) {
        const st_node *p = d->params[i];
        if (p->type->kind == ST_TYPE_ARRAY) {
            const cg_place *place = cg_place_new(g, p->type, CG_GLOBAL, p->u.name);
            if (!place) return false;
            bind_buffers(g, place, CG_BUF_INPUT);
            env = cg_bind_memory(g, env, p->u.name, p->type, place);
        } else if (p->type->kind == ST_TYPE_SCALAR) {
            g->scalars[g->nscalars++] = (st_code_scalar){p->u.name, p->type->scalar};
            env = cg_bind(g, env, p->u.name, (cg_value){.kind = CG_SCALAR, .type = p->type,
                                                        .c = cg_str(g, p->type->scalar == ST_BOOL ? "(s_%s != 0)" : "s_%s", p->u.name)});
        } else {
            return cg_fail(g, p, "a tuple parameter; pass its components separately");
        }
    }
    for (uint32_t i = 0; i < d->nsizes; i++) {
        const st_node *s = d->sizes[i];
        g->scalars[g->nscalars++] = (st_code_scalar){s->u.name, ST_I64};
        env = cg_bind(g, env, s->u.name, (cg_value){.kind = CG_SCALAR, .type = s->type, .c = cg_str(g, "s_%s", s->u.name)});
    }
    /* the body's type, not d->result: its lengths known only at run time are
     * the body's own (the def's canonical form made them afresh) */
    const cg_place *out = cg_place_new(g, d->body->type, CG_GLOBAL, "out");
    if (!out) return false;
    bind_buffers(g, out, CG_BUF_OUTPUT);
    g->nlengths = st_code_lengths_of(d->body->type, NULL, 0);
    if (g->nlengths) {
        g->lengths = cg_alloc(g, g->nlengths * sizeof *g->lengths);
        if (!g->lengths) return false;
        st_code_lengths_of(d->body->type, g->lengths, g->nlengths);
        g->lengths_buffer = new_buffer(g, CG_BUF_OUTPUT, "out_lengths", ST_I64, st_size_const(g->cx, g->nlengths));
    }
    host_into(g, d->body, env, out);
    return cg_totals_written(g) && !g->failed;
}
