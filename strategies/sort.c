/* strategies/sort.c — sorting as a loop of stable multi-way splits.
 *
 *   radix-sort(BITS)      sort(xs)
 *                         -> loop ks = xs for d < D do partition_by(2^BITS, k => digit(k, d), ks).0
 *                         sort_by_key(ks, vs)
 *                         -> loop kv = (ks, vs) for d < D do
 *                              unzip(partition_by(2^BITS, p => digit(p.0, d), zip(kv.0, kv.1)).0)
 *   partition-tiles(TILE, WG)
 *                         partition_by(k, f, xs) -> partitionTiles(TILE, WG, k, f, xs)
 *
 * A least-significant-digit radix sort: each turn groups the keys by one
 * digit of BITS bits, stably, so that after the last turn they are ordered
 * by all of them (Onesweep's structure, Adinets and Merrill 2022: 8-bit
 * digits, D = ⌈width / BITS⌉ turns). A digit is read off the key's
 * order key (st_scalar_order_key, which the interpreter's sort uses): an
 * unsigned integer as it is, a signed one with its sign bit flipped, a
 * float's bits flipped so that their unsigned order is the float's.
 *
 * partitionTiles is what codegen/cg_partition.c makes kernels of: each
 * work-item counts the buckets of its tile of TILE elements, the counts are
 * scanned bucket by bucket across the tiles, and each work-item scatters
 * its tile's elements to their places: stable, as a tile's elements keep
 * their order and tiles theirs. */
#include "rewrite/plugin.h"
#include "strategies.h"

static const st_node *lit(st_build *b, st_scalar_kind k, int64_t v) { return st_lit_int(b->cx, k, v); }

static st_scalar_kind signed_of(size_t bytes) {
    return bytes == 1 ? ST_I8 : bytes == 2 ? ST_I16 : bytes == 4 ? ST_I32 : ST_I64;
}

/* The order key of k (st_scalar_order_key's), an unsigned integer of k's width. */
static const st_node *order_key(st_build *b, const st_node *k) {
    st_scalar_kind t = k->type->scalar, u = st_scalar_unsigned(t), s = signed_of(st_scalar_size(t));
    int width = 8 * (int)st_scalar_size(t);
    const st_node *sign = lit(b, u, (int64_t)((uint64_t)1 << (width - 1)));
    if (!st_scalar_is_float(t)) return st_scalar_is_signed(t) ? st_b_binop(b, ST_OP_BXOR, st_b_conv(b, u, k), sign) : k;
    st_err e = {0};
    const st_node *bits = st_b_check(b, st_unary(b->cx, ST_OP_BITS, k, &e), &e);
    /* every bit where the sign is set (an arithmetic shift of the sign), the sign alone where it is not */
    const st_node *spread = st_b_conv(b, u, st_b_binop(b, ST_OP_SHR, st_b_conv(b, s, bits), lit(b, s, width - 1)));
    return st_b_binop(b, ST_OP_BXOR, bits, st_b_binop(b, ST_OP_BOR, spread, sign));
}

/* k => digit d of k's order key, BITS bits wide, as an i64 */
static const st_node *digit_fn(st_build *b, const st_type *elem, bool pair, const st_node *d, int64_t bits) {
    const st_node *x = st_b_var(b, pair ? "kv" : "k", elem), *k = pair ? st_b_proj(b, x, 0) : x;
    if (!k) return NULL;
    const st_node *key = order_key(b, k);
    if (!key) return NULL;
    st_scalar_kind u = key->type->scalar;
    const st_node *shift = st_b_conv(b, u, st_b_binop(b, ST_OP_MUL, d, st_b_i64(b, bits)));
    const st_node *dig = st_b_binop(b, ST_OP_BAND, st_b_binop(b, ST_OP_SHR, key, shift), lit(b, u, (1 << bits) - 1));
    return ST_LAMBDA(b, st_b_conv(b, ST_I64, dig), x);
}

static const st_node *radix_sort(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    bool kv = st_is_prim(e, ST_PRIM_SORT_BY_KEY);
    if (!kv && !st_is_prim(e, ST_PRIM_SORT)) return st_no_match(why, "radix-sort rewrites a sort or a sort_by_key");
    int64_t bits = args[0] == ST_PARAM_UNSET ? 8 : args[0];
    st_build B = st_build_of(rw, why), *b = &B;
    const st_type *key = e->kids[0]->type->elem;
    int64_t width = 8 * (int64_t)st_scalar_size(key->scalar), turns = (width + bits - 1) / bits;
    const st_node *state = kv ? st_b_var(b, "kv", e->type) : st_b_var(b, "ks", e->type);
    const st_node *d = st_b_var(b, "d", st_type_scalar(b->cx, ST_I64));
    const st_node *data = kv ? ST_PRIM(b, ST_PRIM_ZIP, st_b_proj(b, state, 0), st_b_proj(b, state, 1)) : state;
    if (!data) return NULL;
    const st_node *f = digit_fn(b, data->type->elem, kv, d, bits);
    const st_node *grouped = st_b_proj(b, ST_PRIM(b, ST_PRIM_PARTITION_BY, st_b_count(b, (int64_t)1 << bits), f, data), 0);
    const st_node *body = kv ? ST_PRIM(b, ST_PRIM_UNZIP, grouped) : grouped;
    const st_node *init = kv ? ST_TUPLE(b, e->kids[0], e->kids[1]) : e->kids[0];
    return ST_PRIM(b, ST_PRIM_LOOP, st_b_i64(b, turns), ST_LAMBDA(b, body, d, state), init);
}

static const st_rule rule_radix_sort = {
    .name = "radix-sort",
    .summary = "sort and sort_by_key as a least-significant-digit radix sort: a loop of D = ceil(width / BITS) "
               "turns, each a stable partition_by of the keys (with their values) into 2^BITS buckets by one digit "
               "of their order key (a signed key's sign bit flipped, a float's bits flipped so that their unsigned "
               "order is the float's), the lowest digit first",
    .conditions = "a sort or sort_by_key, anywhere (codegen makes kernels of a partition_by at the top level of a "
                  "def; one inside a lambda runs in one work-item)",
    .origin = "built-in",
    .nparams = 1,
    .params = {{.name = "BITS", .doc = "bits of the key per turn (left out: 8, Onesweep's)", .min = 1, .max = 8,
                .optional = true}},
    .apply = radix_sort,
};

static const st_node *partition_tiles(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    if (!st_is_prim(e, ST_PRIM_PARTITION_BY)) return st_no_match(why, "partition-tiles rewrites a partition_by");
    if (!st_at_top_level(rw, "partition-tiles", "partition_by", why)) return NULL;
    if (!st_type_is_plain(e->kids[2]->type->elem))
        return st_reject(why, "partition-tiles moves elements that are scalars or tuples of scalars, and these "
                              "elements hold arrays (rows)"), NULL;
    st_build B = st_build_of(rw, why);
    int64_t tile = args[0] == ST_PARAM_UNSET ? 0 : args[0], wg = args[1] == ST_PARAM_UNSET ? 0 : args[1];
    return ST_PRIM(&B, ST_PRIM_PARTITION_TILES, st_b_count(&B, tile), st_b_count(&B, wg), e->kids[0], e->kids[1],
                   e->kids[2]);
}

static const st_rule rule_partition_tiles = {
    .name = "partition-tiles",
    .summary = "partition_by in tiles, a work-item each: every tile's buckets counted, the counts scanned bucket by "
               "bucket across the tiles (each bucket's start, then each tile's place in it), then every tile's "
               "elements scattered to their places, in order",
    .conditions = "a partition_by at the top level of a def (the body of a top-level loop over arrays counts) whose "
                  "elements are scalars or tuples of scalars",
    .origin = "built-in",
    .nparams = 2,
    .params = {{.name = "TILE",
                .doc = "elements per work-item (left out: the device's choice when the program runs, from its "
                       "length and compute units)",
                .min = 1, .max = 1 << 30, .optional = true},
               {.name = "WG",
                .doc = "work-items per group (left out: 1 on a CPU, each tile a group of its own, whose scatter "
                       "goes through write-combining lines; 64 on a GPU)",
                .min = 1, .max = 1024, .optional = true}},
    .apply = partition_tiles,
};

bool st_register_sort_rules(st_registry *r, st_err *err) {
    return st_registry_add(r, &rule_radix_sort, err) && st_registry_add(r, &rule_partition_tiles, err);
}

/* ---- what lower-opencl applies ---- */

/* e with every sort and sort_by_key made a radix sort of 8-bit digits,
 * and every partition_by at the top level (not inside a lambda, but inside
 * the body of a top-level loop) made partitionTiles with the device's
 * tile: codegen's forms of them. One inside a lambda runs in a work-item
 * (cg_partition_into). */
static const st_node *sorts_as_partitions(st_build *b, const st_node *e, bool inside) {
    if (e->nkids == 0) return e;
    bool loop = st_is_prim(e, ST_PRIM_LOOP) || st_is_prim(e, ST_PRIM_WHILE);
    const st_node *kids[ST_MAX_KIDS];
    bool changed = false;
    for (uint32_t i = 0; i < e->nkids; i++) {
        bool lambda = e->kids[i]->kind == ST_NODE_LAMBDA;
        kids[i] = st_is_binder(e, i) ? e->kids[i] : sorts_as_partitions(b, e->kids[i], inside || (lambda && !loop));
        if (!kids[i]) return NULL;
        changed |= kids[i] != e->kids[i];
    }
    if (changed) {
        st_err inner = {0};
        if (!(e = st_b_check(b, st_rebuild(b->cx, e, kids, &inner), &inner))) return NULL;
    }
    const int64_t unset[2] = {ST_PARAM_UNSET, ST_PARAM_UNSET};
    st_err why = {0};
    const st_node *r = NULL;
    if (st_is_prim(e, ST_PRIM_SORT) || st_is_prim(e, ST_PRIM_SORT_BY_KEY)) {
        r = radix_sort(b->rw, e, unset, &why);
        if (r) return sorts_as_partitions(b, r, inside); /* its partition_by */
    } else if (st_is_prim(e, ST_PRIM_PARTITION_BY) && !inside) {
        r = partition_tiles(b->rw, e, unset, &why);
    }
    if (r) return r;
    if (why.kind == ST_ERR_INTERNAL) return *b->err = why, NULL;
    return e;
}

const st_node *st_sorts_as_partitions(st_build *b, const st_node *e) { return sorts_as_partitions(b, e, false); }
