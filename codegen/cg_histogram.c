/* codegen/cg_histogram.c — subhistograms(C, MEM, ATOMIC, dest, op, z, is, vs):
 * reduce_by_index with work-items cooperating on subhistograms.
 *
 * The seed is histogram-subhistogramming.txt. The destination is copied
 * into the output first; then, chosen when the program runs (H, the number
 * of buckets, is often known only then):
 *
 *   local   each work-group keeps ⌈B / C⌉ subhistograms in local memory
 *           (B its work-items, C of them per subhistogram), as many as fit:
 *           it fills them with z, updates them atomically as it reads its
 *           share of the elements, and reduces them into one subhistogram
 *           of its own in global memory;
 *   global  T work-items (as many as keep the device busy, at most N), C
 *           of them per subhistogram: the first subhistogram is the output
 *           itself, the others global arrays filled with z first.
 *
 * What a device gets (B, C, how many subhistograms, local or global) is
 * codegen/hist_plan.c's, which the glue carries: on a CPU, whose
 * work-items of a group run in turn in one thread, the heuristic (C left
 * out) gives each work-group a single work-item owning up to 4
 * subhistograms, updated without atomics, four elements at a time; a C
 * that is given asks for cooperation, and gets groups of 256.
 *
 * Local memory is used when MEM allows it and one subhistogram fits (else
 * global, whatever MEM says: never a failed launch), and then a last
 * kernel reduces the global subhistograms into the output, bucket by
 * bucket. Left out, C is [Hellfritsch 2018]'s heuristic: min(H, B) in local memory,
 * H in global memory, fewer on a GPU whose cache holds more subhistograms.
 *
 * A bucket is updated by the hardware (atomic_add, _min, _max, _and, _or,
 * _xor on 32-bit integers, atom_… on 64-bit ones), by a compare-and-swap
 * loop on one 32- or 64-bit word (any operator on one number), or under a
 * lock of its own (any value, tuples included): the lock is taken by an
 * exchange inside a loop that every work-item leaves only when it has done
 * its update, which is safe where work-items run in lock-step as well as
 * where they run in turn (PoCL); the value is read and written through
 * volatile pointers, between fences, so no cache keeps an old one.
 *
 * A map that makes the indices or the values is computed where each
 * element is read (cg_element), inside the kernels. */
#include "atomics.h"
#include "cg.h"

#include <string.h>

typedef struct hist {
    const st_node *e, *op, *z, *is, *vs;
    const st_type *t;          /* a bucket's value */
    int64_t c, mem, atomic;
    st_binop hw;               /* ADD: the hardware's operation */
    const cg_binding *env;
    const char *v;             /* the prefix of the glue's values: hist0_H, … */
    const cg_place *out;       /* the destination, already in the output */
    const cg_place *subs;      /* the global subhistograms after the first */
    const cg_place *locks;     /* XCHG: a lock per bucket of every global subhistogram */
} hist;

/* a glue value of this histogram's, by name: hist0_H */
static const char *val(cg *g, const hist *h, const char *name) {
    const char *v = cg_str(g, "%s_%s", h->v, name);
    cg_use_value(g, v);
    return v;
}

/* The elements the kernels walk: the plan's N, or where the length is known
 * only at run time (the plan, made before anything runs, is for its worst
 * case), that length, which the glue holds by the time they run. */
static const char *elements(cg *g, const hist *h) {
    return st_size_has_exist(h->is->type->size) ? cg_size(g, h->is->type->size) : val(g, h, "N");
}

/* ---- the update of one bucket ---- */

static const char *hw_name(st_binop b) {
    switch (b) {
    case ST_OP_ADD: return "add";
    case ST_OP_MIN: return "min";
    case ST_OP_MAX: return "max";
    case ST_OP_BAND: return "and";
    case ST_OP_BOR: return "or";
    default: return "xor";
    }
}

static bool wide(st_scalar_kind k) { return k == ST_I64 || k == ST_U64 || k == ST_F64; }
/* 8- and 16-bit buckets, which no atomic of OpenCL's takes */
static bool narrow(st_scalar_kind k) { return st_scalar_is_int(k) && st_scalar_size(k) < 4; }

static const char *space_name(cg_space s) { return s == CG_LOCAL ? "__local" : "__global"; }

/* A compare-and-swap on an 8- or 16-bit bucket: on the aligned 32-bit word
 * that holds it, the other bytes put back as they were read (a neighbour's
 * update in between fails the swap, which then tries again). The bucket
 * never straddles two words: it is aligned to its own size. Temporary
 * buffers and local arrays of such buckets are rounded up to whole words
 * (cg_glue.c, add_local), so the word stays inside them. The output (the
 * first global subhistogram) is the caller's: its last word may reach up
 * to 3 bytes past its end, which strata's runtime allocates as part of the
 * guard region after every output (runtime.c) and the swap writes back
 * unchanged; a program calling exported glue allocates such an output in
 * whole 32-bit words. */
static void narrow_cas(cg *g, const hist *h, const cg_mem *m, const char *addr, const cg_value *v) {
    st_scalar_kind k = m->kind;
    const char *sp = space_name(m->space), *t = cg_ctype(g, h->t);
    const char *ut = st_scalar_size(k) == 1 ? "uchar" : "ushort";
    cg_open(g, "{");
    cg_line(g, "const size_t hs_a = (size_t)(%s), hs_off = hs_a & 3;", addr);
    cg_line(g, "volatile %s uint *hs_p = (volatile %s uint *)(hs_a - hs_off);", sp, sp);
    cg_line(g, "const uint hs_sh = ST_BYTE_SHIFT((uint)hs_off, %zuu), hs_mask = (uint)(%s)~0u << hs_sh;",
            st_scalar_size(k), ut);
    cg_line(g, "uint hs_old = *hs_p, hs_seen;");
    cg_open(g, "do {");
    cg_line(g, "hs_seen = hs_old;");
    cg_value args[2] = {cg_scalar(h->t, cg_str(g, "((%s)(%s)(hs_seen >> hs_sh))", t, ut)), *v};
    cg_value r = cg_apply(g, h->op, 2, args, h->env);
    r = cg_materialize(g, &r);
    cg_line(g, "hs_old = atomic_cmpxchg(hs_p, hs_seen, (hs_seen & ~hs_mask) | ((uint)(%s)%s << hs_sh));", ut, r.c);
    g->indent--;
    cg_line(g, "} while (hs_old != hs_seen);");
    cg_close(g);
}

/* op(bucket, v) into the bucket: element `at` of place, whose lock (XCHG)
 * is element `lock_at` of locks. */
static void atomic_update(cg *g, const hist *h, const cg_place *place, const char *at, const cg_place *locks,
                          const char *lock_at, const cg_value *v) {
    const cg_place *q = cg_place_index(g, place, at);
    if (h->atomic != ST_HIST_XCHG) {
        const cg_mem *m = &q->mem;
        if (m->buffer >= 0) cg_use_buffer(g, m->buffer, true);
        st_scalar_kind k = m->kind;
        if (wide(k)) g->uses_atomics64 = true;
        const char *addr = cg_str(g, "&%s[%s]", m->base, m->offset);
        if (h->atomic == ST_HIST_ADD) {
            cg_line(g, "%s_%s(%s, %s);", wide(k) ? "atom" : "atomic", hw_name(h->hw), addr, v->c);
            return;
        }
        if (narrow(k)) {
            narrow_cas(g, h, m, addr, v);
            return;
        }
        const char *word = wide(k) ? "ulong" : "uint";
        cg_open(g, "{");
        cg_line(g, "volatile %s %s *hs_p = (volatile %s %s *)%s;", space_name(m->space), word, space_name(m->space),
                word, addr);
        cg_line(g, "%s hs_old = *hs_p, hs_seen;", word);
        cg_open(g, "do {");
        cg_line(g, "hs_seen = hs_old;");
        cg_value args[2] = {cg_scalar(h->t, cg_from_bits(g, k, "hs_seen")), *v};
        cg_value r = cg_apply(g, h->op, 2, args, h->env);
        r = cg_materialize(g, &r);
        cg_line(g, "hs_old = %s(hs_p, hs_seen, %s);", wide(k) ? "atom_cmpxchg" : "atomic_cmpxchg", cg_to_bits(g, k, r.c));
        g->indent--;
        cg_line(g, "} while (hs_old != hs_seen);");
        cg_close(g);
        return;
    }
    const cg_place *lq = cg_place_index(g, locks, lock_at);
    if (lq->mem.buffer >= 0) cg_use_buffer(g, lq->mem.buffer, true);
    const char *lock = cg_str(g, "&%s[%s]", lq->mem.base, lq->mem.offset);
    /* a lock in global memory: other groups take it too, a fence of the device's (cg_prelude) */
    const char *fence = q->tuple || q->mem.space != CG_LOCAL ? "ST_DEVICE_FENCE()" : "mem_fence(CLK_LOCAL_MEM_FENCE)";
    if (lq->mem.space == CG_LOCAL) fence = "mem_fence(CLK_LOCAL_MEM_FENCE)";
    const char *ct = cg_ctype(g, h->t);
    cg_open(g, "{");
    cg_line(g, "int hs_done = 0;");
    cg_open(g, "while (!hs_done) {");
    cg_open(g, cg_str(g, "if (atomic_xchg(%s, 1) == 0) {", lock));
    cg_line(g, "%s;", fence);
    cg_line(g, "%s hs_cur, hs_new;", ct);
    cg_exchange(g, q, h->t, "hs_cur", true);
    cg_value args[2] = {cg_fields_of(g, h->t, "hs_cur"), *v};
    cg_value r = cg_apply(g, h->op, 2, args, h->env);
    cg_value to = cg_fields_of(g, h->t, "hs_new");
    cg_assign(g, &to, &r);
    cg_exchange(g, q, h->t, "hs_new", false);
    cg_line(g, "%s;", fence);
    cg_line(g, "atomic_xchg(%s, 0);", lock);
    cg_line(g, "hs_done = 1;");
    cg_close(g);
    cg_close(g);
    cg_close(g);
}

/* op(bucket, v) into the bucket, atomically unless the subhistogram is the
 * work-item's own (`exclusive`, a C expression: C = 1), where a plain
 * read, op and write do: [Hellfritsch 2018]'s data-parallel extreme, without an
 * atomic operation. */
static void plain_update(cg *g, const hist *h, const cg_place *place, const char *at, const cg_value *v) {
    const cg_place *q = cg_place_index(g, place, at);
    cg_value cur = cg_value_of_place(g, h->t, q);
    cg_value args[2] = {cg_materialize(g, &cur), *v};
    cg_value r = cg_apply(g, h->op, 2, args, h->env);
    cg_store(g, q, &r);
}

static void update(cg *g, const hist *h, const cg_place *place, const char *at, const cg_place *locks,
                   const char *lock_at, const cg_value *v, const char *exclusive) {
    cg_open(g, cg_if(g, exclusive));
    plain_update(g, h, place, at, v);
    g->indent--;
    cg_line(g, "} else {");
    g->indent++;
    atomic_update(g, h, place, at, locks, lock_at, v);
    cg_close(g);
}

/* `for (i = …) {` over the elements of work-item t of T: on a GPU every
 * T-th from t, so that neighbours read neighbours (coalesced); on a CPU,
 * whose work-items of a group run in turn in one thread, a chunk of its
 * own, read in order. */
static void elements_begin(cg *g, const hist *h, const char *t, const char *threads) {
    const char *n = elements(g, h), *cpu = val(g, h, "cpu");
    cg_line(g, "const long hs_t = %s, hs_threads = %s, hs_chunk = (%s + hs_threads - 1) / hs_threads;", t, threads, n);
    cg_line(g, "const long hs_first = %s ? hs_t * hs_chunk : hs_t, hs_step = %s ? 1 : hs_threads;", cpu, cpu);
    cg_line(g, "const long hs_end = %s && hs_first + hs_chunk < %s ? hs_first + hs_chunk : %s;", cpu, n, n);
    cg_open(g, "for (long i = hs_first; i < hs_end; i += hs_step) {");
}

/* Element i's index, declared as `at`, and its value. */
static cg_value index_and_value(cg *g, const hist *h, const char *i, const char *at) {
    cg_value idx = cg_element(g, h->is, h->env, i);
    cg_line(g, "const long %s = (long)(%s);", at, idx.c);
    cg_value v = cg_element(g, h->vs, h->env, i);
    return cg_materialize(g, &v);
}

/* Element i's index and value, and `if (the index is a bucket) {`: one
 * unsigned comparison (the count of buckets is not negative), where
 * `hs_at >= 0 && hs_at < H` took two branches an element on a CPU, and the
 * histogram loop there is bound by its branches and memory operations. */
static cg_value element(cg *g, const hist *h, const char *i, const char *buckets) {
    cg_value v = index_and_value(g, h, i, "hs_at");
    cg_open(g, cg_str(g, "if ((ulong)hs_at < (ulong)(%s)) {", buckets));
    return v;
}

/* ---- the kernels ---- */

/* Bucket b: first, then op with bucket b of subhistograms from .. to-1 of
 * subs (each H long), in order, into `into`. */
static void fold_buckets(cg *g, const hist *h, const cg_place *first, const cg_place *subs, const char *from,
                         const char *to, const cg_place *into) {
    cg_line(g, "%s hs_acc;", cg_ctype(g, h->t));
    cg_value start = cg_value_of_place(g, h->t, first);
    cg_value acc = cg_fields_of(g, h->t, "hs_acc");
    cg_assign(g, &acc, &start);
    cg_open(g, cg_str(g, "for (long s = %s; s < %s; s++) {", from, to));
    cg_value args[2] = {acc, cg_value_of_place(g, h->t, cg_place_index(g, subs, cg_str(g, "s * %s + b", val(g, h, "H"))))};
    cg_value r = cg_apply(g, h->op, 2, args, h->env);
    cg_assign(g, &acc, &r);
    cg_close(g);
    cg_store(g, into, &acc);
}

/* narrow buckets: whole 32-bit words of them (narrow_cas) */
static void add_local(cg *g, const cg_place *p, const char *count_c) {
    uint32_t n;
    const cg_mem **leaves = cg_place_leaves(g, p, &n);
    for (uint32_t i = 0; leaves && i < n; i++)
        cg_add_local_c(g, leaves[i]->base, leaves[i]->kind,
                       narrow(leaves[i]->kind) ? cg_str(g, "(strata_add(%s, 3, &bad) / 4 * 4)", count_c) : count_c);
}

/* The glue's choices, made when the program runs: codegen/hist_plan.c,
 * which the glue carries, fills the plan; its fields become glue values
 * (hist0_H, hist0_S, …). */
static void choose(cg *g, const hist *h, const char *n, const char *buckets) {
    const char *v = h->v;
    size_t bytes = cg_plain_bytes(h->t);
    if (h->atomic == ST_HIST_XCHG) bytes += 4; /* its lock */
    cg_glue_value(g, "/* %s: subhistograms(C=%lld, MEM=%s, ATOMIC=%s) */", v, (long long)h->c,
                  h->mem == ST_HIST_MEM_GLOBAL ? "global" : h->mem == ST_HIST_MEM_LOCAL ? "local" : "auto",
                  h->atomic == ST_HIST_ADD ? "add" : h->atomic == ST_HIST_CAS ? "cas" : "xchg");
    cg_glue_value(g, "strata_hist_plan %s_p = {0};", v);
    cg_glue_value(g, "%s_p.N = (long)(%s); %s_p.H = (long)(%s); %s_p.bytes = %zu; %s_p.C = %lld; %s_p.may_local = %d;",
                  v, n, v, buckets, v, bytes, v, (long long)h->c, v, h->mem != ST_HIST_MEM_GLOBAL);
    cg_glue_value(g, "%s_p.cpu = strata_is_cpu(queue); %s_p.units = strata_compute_units(queue);", v, v);
    cg_glue_value(g, "%s_p.local_bytes = strata_local_memory(queue); %s_p.cache_bytes = strata_global_cache(queue);", v,
                  v);
    cg_glue_value(g, "strata_hist_choose(&%s_p);", v);
#define GLUE_FIELD(name) cg_glue_value(g, "long %s_" #name " = %s_p." #name "; (void)%s_" #name ";", v, v, v);
    ST_HIST_PLAN_FIELDS(GLUE_FIELD)
#undef GLUE_FIELD
}

static void init_kernel(cg *g, const hist *h) {
    const char *v = h->v;
    cg_kernel_begin(g, CG_SHAPE_GLB, NULL, "hist_init", h->e);
    g->k->count_c = cg_str(g, "(%s_local ? 0 : strata_mul(%s_S, %s_H, &bad))", v, v, v);
    g->k->what = "the global subhistograms filled with the neutral element, their locks opened";
    g->level = CG_THREAD;
    const char *all = cg_str(g, "%s * %s", val(g, h, "S"), val(g, h, "H"));
    cg_open(g, cg_str(g, "for (long i = get_global_id(0); i < %s; i += get_global_size(0)) {", all));
    cg_open(g, cg_str(g, "if (i < %s * %s) {", val(g, h, "nsub"), val(g, h, "H")));
    cg_value z = cg_thread_value(g, h->z, h->env);
    cg_store(g, cg_place_index(g, h->subs, "i"), &z);
    cg_close(g);
    if (h->locks) {
        const cg_place *l = cg_place_index(g, h->locks, "i");
        cg_use_buffer(g, l->mem.buffer, true);
        cg_line(g, "%s[%s] = 0;", l->mem.base, l->mem.offset);
    }
    cg_close(g);
    cg_kernel_end(g);
}

static void global_kernel(cg *g, const hist *h) {
    const char *v = h->v;
    cg_kernel_begin(g, CG_SHAPE_GLB, NULL, "hist_global", h->e);
    g->k->count_c = cg_str(g, "(%s_local ? 0 : %s_T)", v, v);
    g->level = CG_THREAD;
    const char *H = val(g, h, "H");
    const char *T = val(g, h, "T"), *C = val(g, h, "Cg");
    /* T work-items, whatever the launch rounds up to: work-item t has
     * subhistogram t / C < S, its own when C = 1 */
    cg_line(g, "if (get_global_id(0) >= %s) return;", T);
    cg_line(g, "const long hs_s = get_global_id(0) / %s;", C);
    const char *own = cg_str(g, "%s == 1", C);
    elements_begin(g, h, "get_global_id(0)", T);
    cg_value x = element(g, h, "i", H);
    cg_open(g, "if (hs_s == 0) {");
    update(g, h, h->out, "hs_at", h->locks, "hs_at", &x, own);
    g->indent--;
    cg_line(g, "} else {");
    g->indent++;
    update(g, h, h->subs, cg_str(g, "(hs_s - 1) * %s + hs_at", H), h->locks, cg_str(g, "hs_s * %s + hs_at", H), &x,
           own);
    cg_close(g);
    cg_close(g);
    cg_close(g);
    cg_kernel_end(g);
}

/* Four elements from i, unrolled so that their four independent updates
 * overlap, element j into the subhistogram at offset[j]. With `runs` (one
 * subhistogram, hpb = 1), four hits on one bucket are one update of their
 * fold: consecutive hits on one counter otherwise wait on each other's
 * store and load, which copies of it (hpb > 1) cannot break where H is
 * large: the single-bucket dataset runs several times faster so, and
 * spread indices pay one comparison in four elements (the first with the
 * last, almost never equal there), lost in the noise of their time. The
 * copies' loop goes without it: there it cost more than it saved
 * (docs/performance.md). CUB's histogram folds runs of one bin for the
 * same reason. */
static void own_four(cg *g, const hist *h, const cg_place *lh, const char *const offset[4], bool runs) {
    const char *H = val(g, h, "H");
    cg_value v[4];
    if (!runs) {
        for (int j = 0; j < 4; j++) {
            cg_open(g, "{");
            cg_line(g, "const long hs_i = i + %d;", j);
            cg_value x = element(g, h, "hs_i", H);
            plain_update(g, h, lh, cg_str(g, "%s + hs_at", offset[j]), &x);
            cg_close(g);
            cg_close(g);
        }
        return;
    }
    for (int j = 0; j < 4; j++) v[j] = index_and_value(g, h, cg_str(g, "i + %d", j), cg_str(g, "hs_a%d", j));
    cg_open(g, "if (hs_a0 == hs_a3 && ((hs_a0 ^ hs_a1) | (hs_a0 ^ hs_a2)) == 0) { /* one bucket: one update */");
    cg_value ab[2] = {v[0], v[1]}, cd[2] = {v[2], v[3]};
    cg_value pair[2] = {cg_apply(g, h->op, 2, ab, h->env), cg_apply(g, h->op, 2, cd, h->env)};
    pair[0] = cg_materialize(g, &pair[0]);
    pair[1] = cg_materialize(g, &pair[1]);
    cg_value all = cg_apply(g, h->op, 2, pair, h->env);
    all = cg_materialize(g, &all);
    cg_open(g, cg_str(g, "if ((ulong)hs_a0 < (ulong)(%s)) {", H));
    plain_update(g, h, lh, "hs_a0", &all);
    cg_close(g);
    g->indent--;
    cg_line(g, "} else {");
    g->indent++;
    for (int j = 0; j < 4; j++) {
        cg_open(g, cg_str(g, "if ((ulong)hs_a%d < (ulong)(%s)) {", j, H));
        plain_update(g, h, lh, cg_str(g, "%s + hs_a%d", offset[j], j), &v[j]);
        cg_close(g);
    }
    cg_close(g);
}

/* A group of one work-item (a CPU's, C left out) owns the group's hpb
 * subhistograms and its chunk of the elements, four at a time (own_four),
 * element j of the four into subhistogram j % hpb, updated without
 * atomics: each of the four has its own counter where hpb = 4 (see
 * hist_plan.c). */
static void own_elements(cg *g, const hist *h, const cg_place *lh) {
    const char *H = val(g, h, "H"), *n = elements(g, h), *hpb = val(g, h, "hpb");
    static const char *const copies[4] = {"0", "hs_o1", "hs_o2", "hs_o3"}, *const one[4] = {"0", "0", "0", "0"};
    cg_line(g, "const long hs_chunk = (%s + get_num_groups(0) - 1) / get_num_groups(0);", n);
    cg_line(g, "const long hs_first = get_group_id(0) * hs_chunk;");
    cg_line(g, "const long hs_end = hs_first + hs_chunk < %s ? hs_first + hs_chunk : %s;", n, n);
    cg_line(g, "long i = hs_first;");
    cg_open(g, cg_str(g, "if (%s == 1) {", hpb));
    cg_open(g, "for (; i + 4 <= hs_end; i += 4) {");
    own_four(g, h, lh, one, true);
    cg_close(g);
    g->indent--;
    cg_line(g, "} else {");
    g->indent++;
    cg_line(g, "const long hs_o1 = 1 %% %s * %s, hs_o2 = 2 %% %s * %s, hs_o3 = 3 %% %s * %s;", hpb, H, hpb, H, hpb, H);
    cg_open(g, "for (; i + 4 <= hs_end; i += 4) {");
    own_four(g, h, lh, copies, false);
    cg_close(g);
    cg_close(g);
    cg_open(g, "for (; i < hs_end; i++) {");
    cg_value x = element(g, h, "i", H);
    plain_update(g, h, lh, "hs_at", &x);
    cg_close(g);
    cg_close(g);
}

static void local_kernel(cg *g, const hist *h) {
    const char *v = h->v;
    cg_kernel_begin(g, CG_SHAPE_WRG, NULL, "hist_local", h->e);
    cg_kernel *k = g->k;
    k->count_c = cg_str(g, "(%s_local ? %s_G : 0)", v, v);
    k->lanes_c = cg_str(g, "%s_B", v);
    g->level = CG_THREAD;
    const char *H = val(g, h, "H"), *all = cg_str(g, "%s * %s", val(g, h, "hpb"), H);
    const char *count_c = cg_str(g, "strata_mul(%s_hpb, %s_H, &bad)", v, v);
    /* the subhistograms, and their locks, in local memory */
    const cg_place *lh = cg_place_new(g, st_type_array(g->cx, st_size_const(g->cx, 1), h->t), CG_LOCAL, "hs_sub");
    const cg_place *ll = h->atomic == ST_HIST_XCHG
                             ? cg_place_new(g, st_type_array(g->cx, st_size_const(g->cx, 1), st_type_scalar(g->cx, ST_I32)),
                                            CG_LOCAL, "hs_lock")
                             : NULL;
    if (!lh) return;
    add_local(g, lh, count_c);
    if (ll) add_local(g, ll, count_c);
    cg_line(g, "const long hs_l = get_local_id(0), hs_b = get_local_size(0);");
    cg_open(g, cg_str(g, "for (long i = hs_l; i < %s; i += hs_b) {", all));
    cg_value z = cg_thread_value(g, h->z, h->env);
    cg_store(g, cg_place_index(g, lh, "i"), &z);
    if (ll) cg_line(g, "%s[i] = 0;", cg_place_index(g, ll, "i")->mem.base);
    cg_close(g);
    cg_line(g, "barrier(CLK_LOCAL_MEM_FENCE);");
    cg_open(g, "if (hs_b == 1) {");
    own_elements(g, h, lh);
    g->indent--;
    cg_line(g, "} else {");
    g->indent++;
    cg_line(g, "const long hs_s = hs_l / %s; /* its subhistogram */", val(g, h, "Cl"));
    elements_begin(g, h, "get_group_id(0) * hs_b + hs_l", "get_num_groups(0) * hs_b");
    cg_value x = element(g, h, "i", H);
    update(g, h, lh, cg_str(g, "hs_s * %s + hs_at", H), ll, cg_str(g, "hs_s * %s + hs_at", H), &x,
           cg_str(g, "%s == 1", val(g, h, "Cl")));
    cg_close(g);
    cg_close(g);
    cg_close(g);
    cg_line(g, "barrier(CLK_LOCAL_MEM_FENCE);");
    /* the group's subhistograms into one of its own in global memory */
    cg_open(g, cg_str(g, "for (long b = hs_l; b < %s; b += hs_b) {", H));
    fold_buckets(g, h, cg_place_index(g, lh, "b"), lh, "1", val(g, h, "hpb"),
                 cg_place_index(g, h->subs, cg_str(g, "get_group_id(0) * %s + b", H)));
    cg_close(g);
    cg_kernel_end(g);
}

/* The global subhistograms into the output, bucket by bucket, in order. */
static void final_kernel(cg *g, const hist *h) {
    const char *v = h->v;
    cg_kernel_begin(g, CG_SHAPE_GLB, NULL, "hist_reduce", h->e);
    g->k->count_c = cg_str(g, "(%s_nsub > 0 ? %s_H : 0)", v, v);
    g->k->what = "the subhistograms reduced into the output";
    g->level = CG_THREAD;
    const char *H = val(g, h, "H");
    cg_open(g, cg_str(g, "for (long b = get_global_id(0); b < %s; b += get_global_size(0)) {", H));
    const cg_place *out = cg_place_index(g, h->out, "b");
    fold_buckets(g, h, out, h->subs, "0", val(g, h, "nsub"), out);
    cg_close(g);
    cg_kernel_end(g);
}

/* subhistograms e into p: its destination first, then the kernels. */
static void histogram_emit(cg *g, const st_node *e, const cg_binding *env, const cg_place *p, const cg_scatter *scatter) {
    (void)scatter;
    e = cg_host_hoist_args(g, e, ST_HIST_SIZES + 1, &env); /* the indices and values, unless fusible */
    if (!e) return;
    cg_host_into(g, e->kids[ST_HIST_SIZES], env, p);       /* the destination */
    if (g->failed || !p) return;
    hist h = {.e = e, .env = env, .out = p};
    int64_t sizes[ST_HIST_SIZES];
    if (!cg_leading_sizes(g, e, sizes)) return;
    h.c = sizes[0];
    h.mem = sizes[1];
    h.atomic = sizes[2];
    const st_node *const *kids = e->kids + ST_HIST_SIZES;
    h.op = kids[1];
    h.z = kids[2];
    h.is = kids[3];
    h.vs = kids[4];
    h.t = kids[0]->type->elem;
    if (!cg_is_plain(h.t)) {
        cg_fail(g, e, "subhistograms keeps buckets of scalars and tuples of scalars; these hold arrays");
        return;
    }
    if (h.atomic == ST_HIST_AUTO) h.atomic = st_hist_atomic_for(h.op, h.t);
    if ((h.atomic == ST_HIST_ADD && !st_hist_hardware_op(h.op, h.t, &h.hw)) ||
        (h.atomic == ST_HIST_CAS && !st_hist_cas_fits(h.t))) {
        /* a hand-written subhistograms: the rule refuses these itself */
        st_buf type = {0};
        st_type_print(h.t, &type);
        if (h.atomic == ST_HIST_ADD)
            cg_fail(g, e, "subhistograms' ATOMIC is 1 (a hardware atomic), but its operator on %s has none: "
                          "the hardware adds, takes min and max, and ands, ors and xors 32- and 64-bit integers; "
                          "ATOMIC 2 (compare-and-swap) or 3 (a lock) takes it", type.data ? type.data : "?");
        else
            cg_fail(g, e, "subhistograms' ATOMIC is 2 (compare-and-swap), which needs one number, but the "
                          "values are %s; ATOMIC 3 (a lock) takes any", type.data ? type.data : "?");
        st_buf_free(&type);
        return;
    }
    h.v = cg_name(g, "hist");
    choose(g, &h, cg_size(g, cg_upper(g, h.is->type->size)), cg_size(g, kids[0]->type->size));
    h.subs = cg_host_temp_sized(g, h.t, cg_str(g, "strata_mul(%s_nsub, %s_H, &bad)", h.v, h.v), "subhistograms");
    if (h.atomic == ST_HIST_XCHG)
        h.locks = cg_host_temp_sized(g, st_type_scalar(g->cx, ST_I32), cg_str(g, "strata_mul(%s_S, %s_H, &bad)", h.v, h.v), "locks");
    if (!h.subs || (h.atomic == ST_HIST_XCHG && !h.locks)) return;
    init_kernel(g, &h); /* global memory may be the fallback of local */
    global_kernel(g, &h);
    if (h.mem != ST_HIST_MEM_GLOBAL) local_kernel(g, &h);
    final_kernel(g, &h);
}

/* ---- the descriptor ---- */

static void plan_glue(st_buf *out) {
    st_buf_puts(out, "\n/* subhistograms' choices; commented in strata's codegen/hist_plan.c */\n");
    st_buf_puts(out, st_hist_plan_source());
}

const cg_algorithm cg_histogram_algorithm = {
    .prim = ST_PRIM_SUBHISTOGRAMS,
    .rule = "subhistogram",
    .rewrites = "reduce_by_index",
    .emit = histogram_emit,
    .glue_prelude = plan_glue,
};
