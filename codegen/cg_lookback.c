/* codegen/cg_lookback.c — scanLookback(M, WG, LW, LOAD, op, [fold, [post,]] z, xs):
 * the single-pass scan with decoupled look-back, as one kernel.
 *
 * The seed is single-pass-scan-decoupled-lookback.txt. Each work-group of
 * WG work-items scans a block of M·WG elements:
 *
 *   1  its block number comes from an atomic ticket, so every lower number
 *      is held by a group that is already running (never one that waits to
 *      be scheduled behind us);
 *   2  the block is loaded coalesced (element k·WG + l by work-item l)
 *      through local memory into each work-item's registers (M <= 32: a
 *      tile of part of the block at a time, "held"), or into local memory
 *      whole (larger M), and
 *   3  each work-item folds its M consecutive elements in order;
 *   4  the group scans its work-items' totals in local memory (a Brent–
 *      Kung tree: 2·log2 WG steps, under 2·WG operations);
 *   5  the group publishes its aggregate (flag A; the first group publishes
 *      P), looks back over its predecessors until it meets an inclusive
 *      prefix (flag P), adding the aggregates it passes, and publishes its
 *      own inclusive prefix (P);
 *   6  each work-item adds its prefix to its elements, and the block is
 *      stored coalesced, back through local memory, through the post-
 *      function or the scatter when fusion put one there.
 *
 * Every element is read once and written once. With LOAD = 1 (direct) a
 * work-item reads its own M elements instead of staging them (2, 3): what
 * a CPU wants, where a group's work-items run in turn in one thread and
 * its M consecutive elements are consecutive in the cache. It folds them
 * in four runs side by side (each in vector-wide lanes when the operator
 * is commutative), work-item 0 scans the totals (4), and after the
 * look-back each work-item folds its elements again from its prefix and
 * stores them as it goes (6), reading them from the cache: a plain scan in
 * vector registers with streaming stores where the compiler is clang
 * (PoCL), any other in a scalar loop (whose fused scatter, if any, writes
 * without a branch: scatter_select).
 *
 * The look-back is done by one work-item and followed by a barrier
 * (LW = 1): that is right on every device, PoCL's included, whose
 * work-items are loops and not lock-step lanes. With LW > 1, LW work-items read LW predecessors at once and work-
 * item 0 combines them after a barrier: fewer round trips on a GPU.
 *
 * Memory ordering on OpenCL 1.2, which has no acquire or release: a 32-bit
 * accumulator is packed with its flag into one 64-bit word, written and
 * read by 64-bit atomics (cl_khr_int64_base_atomics), so a reader sees the
 * flag and its value together. Any other accumulator (64-bit, tuples) is
 * written before its flag with a global fence between, and read after the
 * flag with a fence between; aggregates and inclusive prefixes live in
 * separate arrays, so a value is never overwritten once its flag is up.
 *
 * A wait that could last forever is bounded: after STRATA_LOOKBACK_SPINS
 * reads of a flag that is still X the group records itself as the run's
 * fault (cg_fault.c) and goes on, and the glue turns that into an error
 * after the launch instead of a hang. The state (the ticket, the flags) is
 * zeroed by a kernel of its own before every launch.
 *
 * The files: this one assembles the kernels (and the reset kernel before
 * them), keeps scanTotal's totals and holds the descriptor;
 * cg_lookback_phases.c emits the phases with LOAD = local and what every
 * load shares, cg_lookback_held.c the held variant, cg_lookback_look.c the
 * look-back, cg_lookback_direct.c LOAD = direct and cg_lookback_vector.c
 * its vector loops; cg_lookback.h holds what they share. */
#include "cg_lookback.h"
#include "rewrite/rewrite.h"

/* A scanTotal(s) waiting for s's kernel. */
struct cg_total {
    const st_node *scan, *at;
    const cg_place *place;
    bool written;
};

static bool fits_a_word(const st_type *t) {
    return t->kind == ST_TYPE_SCALAR &&
           (t->scalar == ST_I32 || t->scalar == ST_U32 || t->scalar == ST_F32 || t->scalar == ST_BOOL);
}

/* ---- the kernels ---- */

static bool state_new(cg *g, lookback *lb) {
    st_ctx *cx = g->cx;
    const st_type *i32 = st_type_scalar(cx, ST_I32);
    lb->ctl = cg_host_temp(g, st_type_array(cx, st_size_const(cx, 1), i32), "lookback_state");
    if (lb->packed) {
        lb->desc = cg_host_temp(g, st_type_array(cx, lb->groups, st_type_scalar(cx, ST_U64)), "lookback_descriptors");
        return lb->ctl && lb->desc;
    }
    const st_type *accs = st_type_array(cx, lb->groups, lb->acc);
    lb->flags = cg_host_temp(g, st_type_array(cx, lb->groups, i32), "lookback_flags");
    lb->aggregates = cg_host_temp(g, accs, "lookback_aggregates");
    lb->prefixes = cg_host_temp(g, accs, "lookback_prefixes");
    return lb->ctl && lb->flags && lb->aggregates && lb->prefixes;
}

/* ---- the scan's total, for scanTotal ---- */

static bool runs(const st_node *body, const st_node *s) {
    if (st_is_prim(body, ST_PRIM_SCAN_TOTAL)) return false;
    if (st_is_prim(body, ST_PRIM_SCAN_LOOKBACK) && st_alpha_equal(body, s)) return true;
    for (uint32_t i = 0; i < body->nkids; i++)
        if (runs(body->kids[i], s)) return true;
    return false;
}

bool cg_total_runs_in(const st_node *body, const st_node *e) {
    return st_is_prim(e->kids[0], ST_PRIM_SCAN_LOOKBACK) && runs(body, e->kids[0]);
}

void cg_total_later(cg *g, const st_node *e, const cg_place *p) {
    if (g->failed || !p) return;
    if (!cg_grow(g, (void **)&g->totals, g->ntotals, &g->captotals, sizeof *g->totals)) return;
    g->totals[g->ntotals++] = (struct cg_total){.scan = e->kids[0], .at = e, .place = p};
}

/* Where scan e writes its total (the first scanTotal of it not yet
 * written), or NULL. Up to bound names: the program's binders are renamed
 * at each place they print (st_def_canonical), so the scan inside
 * scanTotal and the one that runs bind other names. */
static const cg_place *total_of(cg *g, const st_node *e) {
    for (uint32_t i = 0; i < g->ntotals; i++)
        if (!g->totals[i].written && st_alpha_equal(g->totals[i].scan, e)) {
            g->totals[i].written = true;
            return g->totals[i].place;
        }
    return NULL;
}

/* scanTotal(s) into p where nothing else runs s, a look-back scan: s's
 * kernels, storing no element, only the total (a reduce's, as lookback
 * rewrites it); the descriptor's total_only. */
static void total_only(cg *g, const st_node *e, const cg_binding *env, const cg_place *p) {
    cg_total_later(g, e, p);
    cg_run_algorithm(g, &cg_lookback_algorithm, e->kids[0], env, NULL, NULL);
}

bool cg_totals_written(cg *g) {
    for (uint32_t i = 0; i < g->ntotals && !g->failed; i++)
        if (!g->totals[i].written)
            cg_fail(g, g->totals[i].at, "scanTotal of a look-back scan that the program does not run after it");
    return !g->failed;
}

/* The last group's inclusive prefix (its prefix and its aggregate) into
 * the total, once the look-back is done. */
static void write_total(cg *g, const lookback *lb) {
    if (!lb->total) return;
    cg_open(g, cg_str(g, "if (lb_l == 0 && lb_id == %s - 1) {", cg_size(g, lb->groups)));
    cg_line(g, "%s lb_total;", lb->acc_c);
    combine(g, lb, "lb_total", "lb_prefix", cg_str(g, "lb_s[%lld]", (long long)lb->wg - 1));
    cg_value v = at(g, lb->acc, "lb_total");
    cg_store(g, lb->total, &v);
    cg_close(g);
}

/* Before every launch: the ticket and every flag to 0 (X), and the total,
 * if any, to z (what it is when there is no group: an empty input), so
 * then one work-item more than there are groups. */
static void reset_kernel(cg *g, const lookback *lb) {
    st_err err = {0};
    const st_size *count = lb->total ? st_size_add(g->cx, lb->groups, st_size_const(g->cx, 1), &err) : lb->groups;
    if (!count) return (void)cg_fail(g, lb->e, "%s", err.message);
    cg_kernel_begin(g, CG_SHAPE_GLB, count, "lookback_reset", lb->e);
    g->k->alg = &cg_lookback_algorithm;
    g->k->what = "the look-back state of the next kernel, zeroed";
    g->level = CG_THREAD;
    const char *flags = buffer_of(g, lb->packed ? lb->desc : lb->flags);
    const char *ctl = buffer_of(g, lb->ctl);
    cg_open(g, cg_str(g, "for (long i = get_global_id(0); i < %s; i += get_global_size(0)) {", cg_size(g, count)));
    if (lb->total) {
        cg_line(g, "if (i < %s) %s[i] = 0;", cg_size(g, lb->groups), flags);
        cg_open(g, "if (i == 0) {");
        cg_value z = cg_thread_value(g, lb->z, lb->env);
        cg_store(g, lb->total, &z);
        cg_close(g);
    } else {
        cg_line(g, "%s[i] = 0;", flags);
    }
    cg_line(g, "if (i == 0) %s[0] = 0;", ctl);
    cg_close(g);
    cg_kernel_end(g);
}

static void scan_kernel(cg *g, lookback *lb, const cg_place *p, const cg_scatter *scatter) {
    st_ctx *cx = g->cx;
    cg_kernel_begin(g, CG_SHAPE_EXACT, lb->groups, "lookback", lb->e);
    g->k->alg = &cg_lookback_algorithm;
    cg_kernel *k = g->k;
    const st_size **lanes = cg_alloc(g, sizeof *lanes);
    if (!lanes) return;
    lanes[0] = st_size_const(cx, lb->wg);
    k->nlanes = 1;
    k->lanes = lanes;
    g->level = CG_THREAD;
    const char *elem_c = cg_ctype(g, lb->elem);
    long long mw = (long long)(lb->m * lb->wg);
    /* without a post-function an element is not read after it is folded:
     * a plain scan folds its block in place */
    bool in_place = !lb->post && lb->elem == lb->acc;
    const char *v = lb->held ? (in_place ? "lb_h" : "lb_hv") : in_place ? "lb_x" : "lb_v";
    cg_line(g, "__local long lb_id;");
    if (lb->held) {
        lb->rows = cg_lb_rows_of(lb, in_place);
        long long tile = cg_lb_padded_length(lb, lb->rows * lb->m);
        cg_line(g, "__local %s lb_tile[%lld];", elem_c, tile);
        if (!in_place) cg_line(g, "__local %s lb_tile_acc[%lld];", lb->acc_c, tile);
        cg_line(g, "%s lb_h[%lld];", elem_c, (long long)lb->m);
        if (!in_place) cg_line(g, "%s lb_hv[%lld];", lb->acc_c, (long long)lb->m);
    } else if (!lb->direct) {
        cg_line(g, "__local %s lb_x[%lld];", elem_c, cg_lb_padded_length(lb, lb->m * lb->wg));
        if (!in_place) cg_line(g, "__local %s lb_v[%lld];", lb->acc_c, cg_lb_padded_length(lb, lb->m * lb->wg));
    }
    cg_line(g, "__local %s lb_s[%lld];", lb->acc_c, (long long)lb->wg);
    cg_line(g, "__local %s lb_prefix;", lb->acc_c);
    if (lb->lw > 1) {
        cg_line(g, "__local int lb_wf[%lld];", (long long)lb->lw);
        cg_line(g, "__local %s lb_wv[%lld];", lb->acc_c, (long long)lb->lw);
        cg_line(g, "__local long lb_next;");
        cg_line(g, "__local int lb_more;");
    }
    cg_line(g, "const int lb_l = get_local_id(0);");
    cg_line(g, "if (lb_l == 0) lb_id = atomic_inc(&%s[0]);", buffer_of(g, lb->ctl));
    cg_line(g, "barrier(CLK_LOCAL_MEM_FENCE);");
    cg_line(g, "const long lb_base = lb_id * %lldL;", mw);
    const char *n = cg_size(g, lb->xs->type->size);
    /* a block without a tail, tested once: its loops run unguarded */
    cg_line(g, "const bool lb_full = lb_base + %lldL <= %s;", mw, n);
    if (lb->direct) {
        cg_lb_thread_reduce(g, lb, n);
    } else {
        if (lb->held) cg_lb_held_load(g, lb, n);
        else cg_lb_load_block(g, lb, n);
        cg_lb_thread_scan(g, lb, n, v);
    }
    cg_lb_group_scan(g, lb);
    cg_lb_look_back(g, lb);
    write_total(g, lb);
    if (!p) { /* a reduce's: the total is all it makes */
        cg_kernel_end(g);
        return;
    }
    if (lb->direct) {
        cg_lb_thread_scan_store(g, lb, n, p, scatter);
    } else {
        cg_lb_distribute(g, lb, v);
        if (lb->held) cg_lb_held_store(g, lb, n, v, in_place ? "lb_tile" : "lb_tile_acc", p, scatter);
        else cg_lb_store_block(g, lb, n, v, p, scatter);
    }
    cg_kernel_end(g);
}

/* scanLookback e into p: a kernel resetting its state, then the scan's
 * kernel. With scatter (a scatter of e's (index, value) pairs into p, whose
 * destination is in p already), each pair is written as it is stored.
 * Without p, its total alone (total_only). */
static void lookback_emit(cg *g, const st_node *e, const cg_binding *env, const cg_place *p, const cg_scatter *scatter) {
    const cg_place *total = g->failed ? NULL : total_of(g, e);
    if (g->failed || (!p && !total)) return;
    e = cg_host_hoist_args(g, e, ST_LOOKBACK_SIZES, &env);
    if (!e) return;
    lookback lb = {.e = e, .env = env, .total = total};
    int64_t sizes[ST_LOOKBACK_SIZES];
    if (!cg_leading_sizes(g, e, sizes)) return;
    lb.m = sizes[0];
    lb.wg = sizes[1];
    lb.lw = sizes[2];
    lb.direct = sizes[3] == 1;
    lb.held = !lb.direct && lb.m <= HELD_M;
    st_scan_form s;
    if (!st_fold_form_of(e, &s)) return (void)cg_fail(g, e, "a scanLookback of another form than a scan's");
    lb.op = s.op;
    lb.fold = s.fold;
    lb.post = s.post;
    lb.z = s.z;
    lb.xs = s.xs;
    lb.elem = lb.xs->type->elem;
    lb.acc = lb.z->type;
    if (!cg_is_plain(lb.acc) || !cg_is_plain(lb.elem)) {
        cg_fail(g, e, "scanLookback scans scalars and tuples of scalars; this one's elements or accumulator hold arrays");
        return;
    }
    if (lb.lw > lb.wg) {
        cg_fail(g, e, "scanLookback's LW (%lld) is more than its WG (%lld)", (long long)lb.lw, (long long)lb.wg);
        return;
    }
    lb.acc_c = cg_ctype(g, lb.acc);
    lb.packed = fits_a_word(lb.acc);
    lb.pad_shift = cg_lb_pad_shift(&lb);
    st_err serr = {0};
    const st_size *mw = st_size_const(g->cx, lb.m * lb.wg);
    lb.groups = st_size_div(g->cx, st_size_add(g->cx, lb.xs->type->size, st_size_const(g->cx, lb.m * lb.wg - 1), &serr),
                            mw, &serr);
    if (!lb.groups) {
        cg_fail(g, e, "the number of work-groups: %s", serr.message);
        return;
    }
    if (!state_new(g, &lb)) return;
    lb.sink = cg_lb_sink_of(g, &lb, p, scatter);
    reset_kernel(g, &lb);
    scan_kernel(g, &lb, p, scatter);
}

/* ---- the descriptor ---- */

/* The kernels' defines: the spin bound, the flags, and what the direct
 * load needs of the compiler. */
static const char *const prelude =
    "/* reads of a predecessor's flag before a look-back gives up and reports a stall */\n"
    "#ifndef STRATA_LOOKBACK_SPINS\n#define STRATA_LOOKBACK_SPINS (1L << 26)\n#endif\n"
    "/* a look-back's flags: no value yet, a group's aggregate, its inclusive prefix */\n"
    "#define LB_X 0\n#define LB_A 1\n#define LB_P 2\n"
    "/* a group that never publishes, to test that bound (-1: none) */\n"
    "#ifndef STRATA_LOOKBACK_SILENT_GROUP\n#define STRATA_LOOKBACK_SILENT_GROUP (-1L)\n#endif\n"
    "/* LOAD=direct, LW=1: reads of a predecessor's empty flag before folding its block\n"
    " * (longer than a block's fold, far shorter than a preempted thread's wait) */\n"
    "#ifndef STRATA_LOOKBACK_PATIENCE\n#define STRATA_LOOKBACK_PATIENCE 4096\n#endif\n"
    "/* clang's OpenCL (PoCL's): the direct look-back scans in vector types and stores them\n"
    " * bypassing the cache (ST_STREAM, the shared prelude's) */\n"
    "#if defined(__clang__) && defined(__OPENCL_VERSION__)\n#define ST_VECTORS 1\n"
    "#else\n#define ST_VECTORS 0\n#endif\n"
    "/* clang on x86 with AVX-512 (PoCL on such a CPU): a vector's chosen lanes stored\n"
    " * one after the other (vpcompressd), a compaction's store */\n"
    "#if defined(__clang__) && defined(__OPENCL_VERSION__) && defined(__AVX512F__)\n#define ST_COMPRESS 1\n"
    "typedef int st_v16si __attribute__((vector_size(64)));\n"
    "#define ST_COMPRESS_STORE(p, v, m, n) __builtin_ia32_storedqusi512_mask((int *)(ulong)(p), \\\n"
    "    __builtin_ia32_compresssi512_mask((st_v16si)(v), (st_v16si)(v), (m)), (ushort)((1u << (n)) - 1u))\n"
    "#define ST_NONZERO_MASK(f) ((ushort)__builtin_ia32_cmpd512_mask((st_v16si)(f), (st_v16si)(int16)(0), 4, (ushort)0xffff))\n"
    "#else\n#define ST_COMPRESS 0\n#endif\n"
    "/* a vector's lanes moved up by d, the lanes of z in: on AVX-512 one valignd (valignq\n"
    " * for 64-bit lanes). Written as a shuffle, or as the valign builtin on floats (LLVM\n"
    " * sees through it), LLVM makes it a vexpand, which took a scan on AMD's Zen 4 from\n"
    " * 3.0 to 4.5 ms at 2^24; asm keeps the instruction. */\n"
    "#if defined(__clang__) && defined(__OPENCL_VERSION__) && defined(__AVX512F__)\n"
    "#define ST_LANES_UP16(T, v, z, d) ({ T st_up_; \\\n"
    "    __asm__(\"valignd $%c3, %2, %1, %0\" : \"=v\"(st_up_) : \"v\"(v), \"v\"(z), \"i\"(16 - (d))); st_up_; })\n"
    "#define ST_LANES_UP8(T, v, z, d) ({ T st_up_; \\\n"
    "    __asm__(\"valignq $%c3, %2, %1, %0\" : \"=v\"(st_up_) : \"v\"(v), \"v\"(z), \"i\"(8 - (d))); st_up_; })\n"
    "#else\n#define ST_LANE_UP(i, d, w) ((i) < (d) ? (w) + (i) : (i) - (d))\n"
    "#define ST_LANES_UP8(T, v, z, d) __builtin_shufflevector((v), (z), ST_LANE_UP(0, d, 8), ST_LANE_UP(1, d, 8), \\\n"
    "    ST_LANE_UP(2, d, 8), ST_LANE_UP(3, d, 8), ST_LANE_UP(4, d, 8), ST_LANE_UP(5, d, 8), ST_LANE_UP(6, d, 8), \\\n"
    "    ST_LANE_UP(7, d, 8))\n"
    "#define ST_LANES_UP16(T, v, z, d) __builtin_shufflevector((v), (z), ST_LANE_UP(0, d, 16), ST_LANE_UP(1, d, 16), \\\n"
    "    ST_LANE_UP(2, d, 16), ST_LANE_UP(3, d, 16), ST_LANE_UP(4, d, 16), ST_LANE_UP(5, d, 16), \\\n"
    "    ST_LANE_UP(6, d, 16), ST_LANE_UP(7, d, 16), ST_LANE_UP(8, d, 16), ST_LANE_UP(9, d, 16), \\\n"
    "    ST_LANE_UP(10, d, 16), ST_LANE_UP(11, d, 16), ST_LANE_UP(12, d, 16), ST_LANE_UP(13, d, 16), \\\n"
    "    ST_LANE_UP(14, d, 16), ST_LANE_UP(15, d, 16))\n"
    "#endif\n"
    "/* a CPU's OpenCL (PoCL): while a direct look-back group scans its block from the cache\n"
    " * and streams it out, it prefetches the block it is likely to take next, so that the\n"
    " * reads of its next fold overlap these writes. STRATA_COMPUTE_UNITS groups run at\n"
    " * once (strata's runtime defines it), each taking the next free block as it ends, so\n"
    " * that block is this one's plus STRATA_COMPUTE_UNITS. */\n"
    "#ifndef STRATA_COMPUTE_UNITS\n#define STRATA_COMPUTE_UNITS 1\n#endif\n"
    "#if defined(__clang__) && defined(__OPENCL_VERSION__) && (defined(__x86_64__) || defined(__aarch64__))\n"
    "#define ST_PREFETCH(p) __builtin_prefetch(p)\n"
    "#else\n#define ST_PREFETCH(p) ((void)0)\n#endif\n"
    "/* before a loop whose body is a vector's worth of lanes: LLVM's loop vectoriser\n"
    " * leaves it to the SLP vectoriser */\n"
    "#if defined(__clang__)\n#define ST_SLP_ONLY _Pragma(\"clang loop vectorize(disable)\")\n"
    "#else\n#define ST_SLP_ONLY\n#endif\n";

static void stalled_glue(st_buf *out, const char *kernel) {
    st_buf_printf(out, "            snprintf(msg, msgcap, \"%s: work-group %%ld waited more than STRATA_LOOKBACK_SPINS reads for a \"\n"
                       "                     \"predecessor's flag and gave up, so the result is wrong (the device does not \"\n"
                       "                     \"run earlier work-groups alongside later ones)\", value);\n"
                       "            err = STRATA_LOOKBACK_STALLED;\n",
                  kernel);
}

const cg_algorithm cg_lookback_algorithm = {
    .prim = ST_PRIM_SCAN_LOOKBACK,
    .rule = "lookback",
    .rewrites = "scan",
    .emit = lookback_emit,
    .fuses_scatter = true,
    .int64_atomics = "/* the look-back packs a flag and a 32-bit value in one word */\n",
    .prelude = prelude,
    .fault_code = -9001,
    .fault_name = "STRATA_LOOKBACK_STALLED",
    .fault_when = "a look-back waited past its bound",
    .fault_contract = "a look-back that waits too long\n * STRATA_LOOKBACK_STALLED, ",
    .fault_glue = stalled_glue,
    .total_only = total_only,
};
