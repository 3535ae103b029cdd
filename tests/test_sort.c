/* tests/test_sort.c — the primitives sort, sort_by_key and partition_by
 * (ir/prim_sorts.c, ir/interp.c, strategies/sort.c, codegen/cg_partition.c),
 * each result checked bit for bit against a reference in C: qsort of
 * (key, input position) pairs by a comparison of its own (a float's order
 * from its value, its sign and NaN-ness, not from the order key the
 * implementation uses), so that stability is checked apart from the
 * interpreter; the interpreter is checked against the same reference.
 *
 *   language   the interpreter against C: sort and sort_by_key of every key
 *              type (u8 … u64, i8 … i64, f32, f64: floats with -0.0, +0.0,
 *              ±inf, NaNs of both signs and payloads, denormals), the values
 *              i32 carrying their input position (stability shows) and a
 *              tuple of values; at N = 0, 1, 7, 1000 (and 1000003 for u32,
 *              f32 and i64 key-value); inputs random, all keys equal, already
 *              sorted, reversed, few distinct keys
 *   device     the same on the device (PoCL on CI) under the CPU's default,
 *              the GPU's default launched as on a GPU (the glue's
 *              strata_is_cpu answering 0), radix-sort(BITS = 1, 4, 5, 8:
 *              5 leaves the last digit short) and partition-tiles(TILE = 1,
 *              3, 1024, left out); against C and the interpreter
 *   partition  partition_by directly: buckets out of range on both sides
 *              (clamped), k = 1, k = 65536, functions returning u64 and i8,
 *              tuples as elements, the starts; partition_by, sort and
 *              sort_by_key inside a map (each row in one work-item), and
 *              sort_by_key of rows as values
 *   errors     through the command line: bad k, a float bucket, sorts of
 *              bools and tuples, keys and values of different lengths, each
 *              refused at FILE:LINE:COL with exit 1 by check and by run
 *
 * A plain `meson test sort` runs a sample: every program under the CPU's
 * default, the GPU's on a key of each width and family, each other
 * strategy on one or a few programs chosen to cover the key widths and
 * digit counts, and the prime length for a few.
 * STRATA_SORT_FULL=1 (or STRATA_TESTS_ALL=1) runs the whole product (every
 * program under every strategy, the prime under each), e.g.
 *   STRATA_SORT_FULL=1 meson test -C build sort -t 0
 * It leaves out a top-level partition whose G x k table of counts (G =
 * N / TILE tiles, k buckets) would pass 64 MiB: TILE = 1 and 3 at the prime
 * length, k = 65536 under TILE = 1 and 3 (the table is what partition-tiles
 * costs; such a strategy is the user's to choose, not the default's). */
#include "pipeline_fixture.h"
#include "run_strata.h"

#include <math.h>

static bool full_run(void) {
    const char *v = getenv("STRATA_SORT_FULL");
    return (v && !strcmp(v, "1")) || st_tests_all();
}

/* ------------------------------------------------------------------------ */
/* Keys: bit patterns, and the order sort must give them                    */
/* ------------------------------------------------------------------------ */

static const st_scalar_kind key_kinds[] = {ST_U8, ST_U16, ST_U32, ST_U64, ST_I8,
                                           ST_I16, ST_I32, ST_I64, ST_F32, ST_F64};
#define NKINDS ((int)(sizeof key_kinds / sizeof *key_kinds))

static unsigned width_of(st_scalar_kind k) { return 8u * (unsigned)st_scalar_size(k); }

static uint64_t mask_of(st_scalar_kind k) {
    unsigned w = width_of(k);
    return w == 64 ? ~(uint64_t)0 : ((uint64_t)1 << w) - 1;
}

/* element j of an array of kind k, its bits zero-extended */
static uint64_t bits_at(st_scalar_kind k, const void *data, int64_t j) {
    const unsigned char *p = (const unsigned char *)data + (size_t)j * st_scalar_size(k);
    switch (st_scalar_size(k)) {
    case 1: return *p;
    case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
    case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: { uint64_t v; memcpy(&v, p, 8); return v; }
    }
}

static void put_bits(st_scalar_kind k, void *data, int64_t j, uint64_t bits) {
    unsigned char *p = (unsigned char *)data + (size_t)j * st_scalar_size(k);
    switch (st_scalar_size(k)) {
    case 1: *p = (unsigned char)bits; break;
    case 2: { uint16_t v = (uint16_t)bits; memcpy(p, &v, 2); break; }
    case 4: { uint32_t v = (uint32_t)bits; memcpy(p, &v, 4); break; }
    default: memcpy(p, &bits, 8); break;
    }
}

static int64_t as_signed(st_scalar_kind k, uint64_t bits) {
    unsigned shift = 64 - width_of(k);
    return (int64_t)(bits << shift) >> shift;
}

static int sign_of(int64_t d) { return (d > 0) - (d < 0); }

/* sort's order of two floats given by their bits, from what they are:
 * -nan < -inf < … < -0.0 < +0.0 < … < +inf < nan; NaNs of one sign by
 * their payloads, away from zero the further out (as their bits order
 * them: the order is a total one, so that a sort is one answer) */
static int float_cmp(st_scalar_kind k, uint64_t a, uint64_t b) {
    double x, y;
    if (k == ST_F32) {
        float fx, fy;
        uint32_t ua = (uint32_t)a, ub = (uint32_t)b;
        memcpy(&fx, &ua, 4);
        memcpy(&fy, &ub, 4);
        x = fx, y = fy;
    } else {
        memcpy(&x, &a, 8);
        memcpy(&y, &b, 8);
    }
    int rx = isnan(x) ? (signbit(x) ? 0 : 2) : 1, ry = isnan(y) ? (signbit(y) ? 0 : 2) : 1;
    if (rx != ry) return rx - ry;
    if (rx != 1) { /* two NaNs of one sign */
        uint64_t payload = mask_of(k) >> 1, pa = a & payload, pb = b & payload;
        int c = (pa > pb) - (pa < pb);
        return rx == 0 ? -c : c;
    }
    if (x < y) return -1;
    if (x > y) return 1;
    return (signbit(y) != 0) - (signbit(x) != 0); /* -0.0 before +0.0 */
}

static int key_cmp(st_scalar_kind k, uint64_t a, uint64_t b) {
    if (st_scalar_is_float(k)) return float_cmp(k, a, b);
    if (st_scalar_is_signed(k)) {
        int64_t x = as_signed(k, a), y = as_signed(k, b);
        return (x > y) - (x < y);
    }
    return (a > b) - (a < b);
}

typedef struct keyed {
    st_scalar_kind kind;
    uint64_t bits;
    int64_t at; /* the input position */
} keyed;

static int by_key_then_position(const void *a, const void *b) {
    const keyed *p = a, *q = b;
    int c = key_cmp(p->kind, p->bits, q->bits);
    return c ? c : sign_of(p->at - q->at);
}

/* The stable order of n keys: order[j] is the input position of the j-th. */
static int64_t *order_in_c(st_scalar_kind k, int64_t n, const void *keys) {
    keyed *ps = malloc((size_t)(n ? n : 1) * sizeof *ps);
    ck_assert(ps != NULL);
    for (int64_t j = 0; j < n; j++) ps[j] = (keyed){k, bits_at(k, keys, j), j};
    qsort(ps, (size_t)n, sizeof *ps, by_key_then_position);
    int64_t *order = room(n, sizeof *order);
    for (int64_t j = 0; j < n; j++) order[j] = ps[j].at;
    free(ps);
    return order;
}

/* xs's elements in the order `order` gives, a new array */
static void *gathered(st_scalar_kind k, int64_t n, const void *xs, const int64_t *order) {
    void *out = room(n, st_scalar_size(k));
    for (int64_t j = 0; j < n; j++) put_bits(k, out, j, bits_at(k, xs, order[j]));
    return out;
}

/* ------------------------------------------------------------------------ */
/* Inputs                                                                   */
/* ------------------------------------------------------------------------ */

static uint64_t next64(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* The bit patterns a sort must place right. The first five make the few
 * distinct keys of FEW (for floats both zeros and a NaN of each sign). */
static const uint64_t f32_specials[] = {
    0x80000000, 0x00000000, 0x7fc00000, 0xffc00000, 0x3f800000, /* -0 +0 nan -nan 1 */
    0x7f800000, 0xff800000,                                     /* ±inf */
    0x7f800001, 0xff812345, 0x7fffffff, 0xffffffff,             /* signalling and other payloads */
    0x00000001, 0x80000001, 0x007fffff, 0x807fffff, 0x00400000, /* denormals */
    0x00800000, 0x80800000, 0x7f7fffff, 0xff7fffff, 0xbf800000, /* least normal, ±max, -1 */
};
static const uint64_t f64_specials[] = {
    0x8000000000000000, 0x0000000000000000, 0x7ff8000000000000, 0xfff8000000000000, 0x3ff0000000000000,
    0x7ff0000000000000, 0xfff0000000000000,
    0x7ff0000000000001, 0xfff0000000012345, 0x7fffffffffffffff, 0xffffffffffffffff,
    0x0000000000000001, 0x8000000000000001, 0x000fffffffffffff, 0x800fffffffffffff, 0x0008000000000000,
    0x0010000000000000, 0x8010000000000000, 0x7fefffffffffffff, 0xffefffffffffffff, 0xbff0000000000000,
};
/* integers: 0, 1, all ones (-1, or the largest), the sign bit (the least
 * signed), the largest signed, alternate bits (masked to the width) */
static const uint64_t int_specials[] = {0, 1, ~(uint64_t)0, 1ull << 63, ~(uint64_t)0 >> 1, 0x5555555555555555ull, 2};

static const uint64_t *specials_of(st_scalar_kind k, size_t *n) {
    if (k == ST_F32) return *n = sizeof f32_specials / sizeof *f32_specials, f32_specials;
    if (k == ST_F64) return *n = sizeof f64_specials / sizeof *f64_specials, f64_specials;
    return *n = sizeof int_specials / sizeof *int_specials, int_specials;
}

static uint64_t special(st_scalar_kind k, size_t i) {
    size_t n;
    const uint64_t *s = specials_of(k, &n);
    uint64_t v = s[i % n];
    unsigned w = width_of(k);
    /* the sign bit and the largest signed at the key's own width */
    if (!st_scalar_is_float(k) && v == 1ull << 63) v = 1ull << (w - 1);
    if (!st_scalar_is_float(k) && v == ~(uint64_t)0 >> 1) v = mask_of(k) >> 1;
    return v & mask_of(k);
}

typedef enum input_kind { RANDOM, EQUAL, SORTED, REVERSED, FEW, NINPUTS } input_kind;
static const char *const input_names[] = {"random", "all equal", "sorted", "reversed", "few distinct"};

/* n keys of kind k: RANDOM, one in three a special pattern and the rest
 * random bits (floats: NaNs and denormals among them); EQUAL, one key;
 * SORTED and REVERSED, RANDOM's in order and backwards; FEW, five keys. */
static void *keys_of(st_scalar_kind k, int64_t n, input_kind kind, uint64_t seed) {
    void *ks = room(n, st_scalar_size(k));
    uint64_t s = seed * 2654435761u + 88172645463325252ull, one = next64(&s) & mask_of(k);
    for (int64_t j = 0; j < n; j++) {
        uint64_t r = next64(&s), v;
        switch (kind) {
        case EQUAL: v = one; break;
        case FEW: v = special(k, r % 5); break;
        default: v = j % 3 == 1 ? special(k, (size_t)(r >> 8)) : r & mask_of(k); break;
        }
        put_bits(k, ks, j, v);
    }
    if (kind == SORTED || kind == REVERSED) {
        int64_t *order = order_in_c(k, n, ks);
        void *in_order = gathered(k, n, ks, order);
        for (int64_t j = 0; j < n; j++)
            put_bits(k, ks, j, bits_at(k, in_order, kind == SORTED ? j : n - 1 - j));
    }
    return ks;
}

/* values: each its input position, so that where each went shows */
static int32_t *positions(int64_t n) {
    int32_t *vs = room(n, sizeof *vs);
    for (int64_t j = 0; j < n; j++) vs[j] = (int32_t)j;
    return vs;
}

/* ------------------------------------------------------------------------ */
/* Results compared bit for bit                                             */
/* ------------------------------------------------------------------------ */

/* got and want: the same leaves, shapes and bits (st_value_agree would let
 * -0.0 pass for +0.0, one NaN for another, a flushed denormal for zero) */
static void same_bits(const st_value *got, const st_value *want, const char *label) {
    st_value g[8], w[8];
    size_t ng = st_value_leaves(got, g, 8), nw = st_value_leaves(want, w, 8);
    ck_assert_msg(ng == nw, "%s: %zu leaves, not %zu", label, ng, nw);
    for (size_t i = 0; i < ng; i++) {
        ck_assert_msg(g[i].kind == ST_VALUE_ARRAY && w[i].kind == ST_VALUE_ARRAY, "%s: leaf %zu is not an array",
                      label, i);
        ck_assert_msg(g[i].scalar == w[i].scalar && g[i].n == w[i].n, "%s: leaf %zu is [%u-d]%s, not [%u-d]%s", label,
                      i, g[i].n, st_scalar_name(g[i].scalar), w[i].n, st_scalar_name(w[i].scalar));
        int64_t count = 1;
        for (uint32_t d = 0; d < g[i].n; d++) {
            ck_assert_msg(g[i].u.a.dims[d] == w[i].u.a.dims[d], "%s: leaf %zu's dimension %u is %lld, not %lld", label,
                          i, d, (long long)g[i].u.a.dims[d], (long long)w[i].u.a.dims[d]);
            count *= g[i].u.a.dims[d];
        }
        st_scalar_kind k = g[i].scalar;
        if (!count || !memcmp(g[i].u.a.data, w[i].u.a.data, (size_t)count * st_scalar_size(k))) continue;
        for (int64_t j = 0; j < count; j++) {
            uint64_t a = bits_at(k, g[i].u.a.data, j), b = bits_at(k, w[i].u.a.data, j);
            ck_assert_msg(a == b, "%s: leaf %zu (%s), element %lld of %lld: bits 0x%llx, not 0x%llx", label, i,
                          st_scalar_name(k), (long long)j, (long long)count, (unsigned long long)a,
                          (unsigned long long)b);
        }
    }
}

static st_value grid_of(st_scalar_kind k, int64_t rows, int64_t cols, void *data) {
    st_value v = array_of(k, rows, data, ar);
    int64_t *dims = room(2, sizeof *dims);
    dims[0] = rows, dims[1] = cols;
    v.n = 2;
    v.u.a.dims = dims;
    return v;
}

/* ------------------------------------------------------------------------ */
/* The sorts: programs, inputs and what C makes of them                     */
/* ------------------------------------------------------------------------ */

typedef enum form { SORT, KV, KV_TUPLE } form;

typedef struct sort_prog {
    form form;
    st_scalar_kind key;
} sort_prog;

/* sort of each key type, sort_by_key of each with i32 values, and of two
 * with a tuple of values (the position and an f64 of any bits) */
static sort_prog sort_prog_at(int i) {
    if (i < NKINDS) return (sort_prog){SORT, key_kinds[i]};
    if (i < 2 * NKINDS) return (sort_prog){KV, key_kinds[i - NKINDS]};
    return (sort_prog){KV_TUPLE, i == 2 * NKINDS ? ST_F64 : ST_I16};
}
#define NSORTS (2 * NKINDS + 2)

static const char *sort_src(sort_prog p) {
    const char *t = st_scalar_name(p.key);
    switch (p.form) {
    case SORT: return text_of("def main(xs: [N]%s): [N]%s = sort(xs)", t, t);
    case KV: return text_of("def main(ks: [N]%s, vs: [N]i32): ([N]%s, [N]i32) = sort_by_key(ks, vs)", t, t);
    default:
        return text_of("def main(ks: [N]%s, vs: [N]i32, ws: [N]f64): ([N]%s, [N](i32, f64)) =\n"
                       "  sort_by_key(ks, zip(vs, ws))",
                       t, t);
    }
}

static const char *sort_name(sort_prog p) {
    static const char *const forms[] = {"sort", "sort_by_key", "sort_by_key with tuple values"};
    return text_of("%s of %s", forms[p.form], st_scalar_name(p.key));
}

/* A program's inputs at n, and the result C gives. */
typedef struct io {
    st_value args[3];
    st_value want;
} io;

static io sort_io(sort_prog p, int64_t n, input_kind kind, uint64_t seed) {
    io r;
    memset(&r, 0, sizeof r);
    void *ks = keys_of(p.key, n, kind, seed);
    int64_t *order = order_in_c(p.key, n, ks);
    r.args[0] = array_of(p.key, n, ks, ar);
    st_value sorted = array_of(p.key, n, gathered(p.key, n, ks, order), ar);
    if (p.form == SORT) {
        r.want = sorted;
        return r;
    }
    int32_t *vs = positions(n);
    r.args[1] = array_of(ST_I32, n, vs, ar);
    st_value moved = array_of(ST_I32, n, gathered(ST_I32, n, vs, order), ar);
    if (p.form == KV) {
        r.want = tuple_of(2, (st_value[]){sorted, moved});
        return r;
    }
    void *ws = keys_of(ST_F64, n, RANDOM, seed + 1);
    r.args[2] = array_of(ST_F64, n, ws, ar);
    st_value values = tuple_of(2, (st_value[]){moved, array_of(ST_F64, n, gathered(ST_F64, n, ws, order), ar)});
    r.want = tuple_of(2, (st_value[]){sorted, values});
    return r;
}

static const int64_t lengths[] = {0, 1, 7, 1000, 1000003};
#define NLENGTHS ((int)(sizeof lengths / sizeof *lengths))
#define PRIME 1000003

/* Does the plain run take the prime for this program? u32 and f32 sorts,
 * i64 keys with values: a 32-bit key of each family and a 64-bit one. */
static bool prime_for(sort_prog p) {
    return full_run() || (p.form == SORT && (p.key == ST_U32 || p.key == ST_F32)) ||
           (p.form == KV && p.key == ST_I64);
}

/* d run by the interpreter on args at N = n, or M too (rows) */
static st_value interpreted_result(const st_def *d, const st_value *args, int64_t n, int64_t m, const char *label) {
    st_binding env[2] = {{st_intern_cstr(cx, "N"), n}, {st_intern_cstr(cx, "M"), m}};
    st_value got;
    st_err err = {0};
    ck_assert_msg(st_eval(cx, d, args, env, m >= 0 ? 2 : 1, ar, &got, &err), "%s: the interpreter fails: %s", label,
                  err.message);
    return got;
}

START_TEST(the_interpreter_sorts_as_c_does) {
    sort_prog p = sort_prog_at(_i);
    const st_def *d = def_of(sort_src(p));
    for (int l = 0; l < NLENGTHS; l++) {
        int64_t n = lengths[l];
        if (n == PRIME && !prime_for(p)) continue;
        for (int kind = 0; kind < NINPUTS; kind++) {
            if (n == PRIME && !full_run() && kind != RANDOM && kind != FEW) continue;
            const char *label = text_of("%s, N=%lld, %s, the interpreter", sort_name(p), (long long)n,
                                        input_names[kind]);
            io r = sort_io(p, n, (input_kind)kind, 7 + (uint64_t)(l * NINPUTS + kind));
            st_value got = interpreted_result(d, r.args, n, -1, label);
            same_bits(&got, &r.want, label);
        }
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Strategies                                                               */
/* ------------------------------------------------------------------------ */

typedef struct strategy {
    const char *name;
    const char *text;   /* NULL: the CPU's or the GPU's default */
    bool gpu;           /* the GPU's default, launched as on a GPU */
    int bits;           /* radix-sort's BITS, 0 for none */
    int tile;           /* partition-tiles' TILE: -1 none, 0 left out */
} strategy;

#define RADIX(b) "try(each(any, try(radix-sort(BITS=" #b "))))"
#define TILES(t) "try(each(any, try(radix-sort))) ; try(each(any, try(partition-tiles" t ")))"

static const strategy strategies[] = {
    {"the CPU's default", NULL, false, 0, -1},
    {"the GPU's default, launched as on a GPU", NULL, true, 0, -1},
    {"radix-sort(BITS=1)", RADIX(1), false, 1, -1},
    {"radix-sort(BITS=4)", RADIX(4), false, 4, -1},
    {"radix-sort(BITS=5)", RADIX(5), false, 5, -1},
    {"radix-sort(BITS=8)", RADIX(8), false, 8, -1},
    {"partition-tiles(TILE=1)", TILES("(TILE=1)"), false, 0, 1},
    {"partition-tiles(TILE=3)", TILES("(TILE=3)"), false, 0, 3},
    {"partition-tiles(TILE=1024)", TILES("(TILE=1024)"), false, 0, 1024},
    {"partition-tiles", TILES(""), false, 0, 0},
};
#define NSTRATEGIES ((int)(sizeof strategies / sizeof *strategies))

/* The plain run's sample of the strategies: the CPU's default runs every
 * program, the GPU's a key of each width and family, each other one or two
 * (radix-sort(BITS=5) keys of every width, whose last digit is short:
 * 8 = 5 + 3, 16 = 15 + 1, 32 = 30 + 2, 64 = 60 + 4). */
static const struct {
    int strategy;
    form form;
    st_scalar_kind key;
} sampled[] = {
    {2, KV, ST_F32},    {3, SORT, ST_F64},   {4, SORT, ST_I8},     {4, SORT, ST_F32},
    {4, KV, ST_U64},    {4, KV, ST_U16},     {4, KV_TUPLE, ST_I16}, {5, SORT, ST_U16},
    {6, KV, ST_I32},    {7, SORT, ST_I64},   {7, KV_TUPLE, ST_F64}, {8, SORT, ST_U32},
    {9, KV, ST_U32},
};

static bool in_sample(int s, sort_prog p) {
    if (full_run() || s == 0) return true;
    if (s == 1) /* the GPU's launches: a key of each width and family */
        return (p.form == SORT && (p.key == ST_U8 || p.key == ST_I16 || p.key == ST_U32 || p.key == ST_F32)) ||
               (p.form == KV && (p.key == ST_I8 || p.key == ST_I64 || p.key == ST_F64)) || p.form == KV_TUPLE;
    for (size_t i = 0; i < sizeof sampled / sizeof *sampled; i++)
        if (sampled[i].strategy == s && sampled[i].form == p.form && sampled[i].key == p.key) return true;
    return false;
}

/* d under strategy s, lowered: the rules that s names fired (radix-sort's
 * digits and turns, partition-tiles' tile), and its code (as a GPU
 * launches it, for the GPU's default) */
static st_code code_under(const st_def *d, const strategy *s, int width, const char *label) {
    const char *text = s->text ? s->text : st_default_strategy(s->gpu ? "GPU" : "CPU");
    const st_def *now = apply(d, text, label);
    if (s->bits) {
        const char *printed = printed_def(now);
        ck_assert_msg(strstr(printed, text_of("partition_by(%d, ", 1 << s->bits)) &&
                          strstr(printed, text_of(" for d < %d do", (width + s->bits - 1) / s->bits)),
                      "%s: radix-sort(BITS=%d) did not fire:\n%s", label, s->bits, printed);
    }
    if (s->tile >= 0) ck_assert_has(printed_def(now), text_of("partitionTiles(%d, ", s->tile));
    st_code code = generated(lowered(now, label), label);
    return s->gpu ? as_on_a_gpu(code, label) : code;
}

/* The counts' table partition-tiles makes of n elements in k buckets at
 * the strategy's tile, in bytes (0 where the glue chooses the tile). */
static double table_bytes(const strategy *s, int64_t n, int64_t k) {
    if (s->tile <= 0) return 0;
    return (double)((n + s->tile - 1) / s->tile) * (double)k * 8;
}
#define TABLE_LIMIT (64.0 * 1024 * 1024)

/* exe on args at N = n (M = m, if m >= 0): its result */
static st_value launched(st_exe *exe, const st_value *args, int64_t n, int64_t m, const char *label) {
    st_binding env[2] = {{st_intern_cstr(cx, "N"), n}, {st_intern_cstr(cx, "M"), m}};
    st_err err = {0};
    st_launch *l = st_launch_new(exe, args, env, m >= 0 ? 2 : 1, &err);
    ck_assert_msg(l != NULL, "%s: st_launch_new: %s", label, err.message);
    ck_assert_msg(st_launch_run(l, NULL, &err), "%s: st_launch_run: %s", label, err.message);
    st_value got;
    ck_assert_msg(st_launch_read(l, ar, &got, &err), "%s: st_launch_read: %s", label, err.message);
    st_launch_free(l);
    return got;
}

START_TEST(the_device_sorts_as_c_does) {
    sort_prog p = sort_prog_at(_i / NSTRATEGIES);
    int si = _i % NSTRATEGIES;
    const strategy *s = &strategies[si];
    if (!in_sample(si, p)) return;
    const char *what = text_of("%s under %s", sort_name(p), s->name);
    const st_def *d = def_of(sort_src(p));
    st_code code = code_under(d, s, (int)width_of(p.key), what);
    st_exe *exe = built(&code, what);
    int bits = s->bits ? s->bits : 8;
    for (int l = 0; l < NLENGTHS; l++) {
        int64_t n = lengths[l];
        /* the prime: under the defaults and TILE=1024 (977 tiles) in the plain run */
        if (n == PRIME && (!prime_for(p) || !(full_run() || si < 2 || si == 8))) continue;
        if (n == PRIME && !st_test_big(si)) continue;
        if (table_bytes(s, n, 1 << bits) > TABLE_LIMIT) continue;
        for (int kind = 0; kind < NINPUTS; kind++) {
            /* at the prime in the plain run: random keys and few distinct (the long runs of equal ones) */
            if (n == PRIME && !full_run() && kind != RANDOM && kind != FEW) continue;
            const char *label = text_of("%s, N=%lld, %s", what, (long long)n, input_names[kind]);
            io r = sort_io(p, n, (input_kind)kind, 11 + (uint64_t)(l * NINPUTS + kind));
            st_value got = launched(exe, r.args, n, -1, label);
            same_bits(&got, &r.want, text_of("%s, the device against C", label));
            if (n < PRIME) {
                st_value ref = interpreted_result(d, r.args, n, -1, label);
                same_bits(&got, &ref, text_of("%s, the device against the interpreter", label));
            }
        }
    }
    st_exe_free(exe);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* partition_by directly                                                    */
/* ------------------------------------------------------------------------ */

/* A top-level partition_by: its elements (one array, or a pair zipped),
 * k, and the bucket C computes for an element (before the clamp). */
typedef struct part_prog {
    const char *name, *src;
    int64_t k;
    st_scalar_kind kind, second; /* the elements' kinds (second: ST_BOOL for none) */
    int64_t lo, hi;              /* first component in [lo, hi) where lo < hi, else any bits */
    int64_t (*bucket)(uint64_t bits);
} part_prog;

static int64_t minus_two(uint64_t b) { return (int32_t)(uint32_t)b - 2; }
static int64_t zero(uint64_t b) { return (void)b, 0; }
static int64_t twice_less(uint64_t b) { return (int64_t)(uint16_t)b * 2 - 30000; }
static int64_t low_byte_signed(uint64_t b) { return (int8_t)(uint8_t)b; }
static int64_t mod_nine(uint64_t b) { return (int32_t)(uint32_t)b % 9; }
/* bits(x) of an i64: unsigned, so a negative x is past every bucket */
static int64_t all_bits(uint64_t b) { return (int64_t)(b > INT64_MAX ? INT64_MAX : b); }

static const part_prog part_progs[] = {
    {"buckets out of range on both sides", "def main(xs: [N]i32): ([N]i32, [5]i64) = xs |> partition_by(5, x => x - 2)",
     5, ST_I32, ST_BOOL, -10, 20, minus_two},
    {"one bucket", "def main(xs: [N]f32): ([N]f32, [1]i64) = xs |> partition_by(1, x => bits(x))", 1, ST_F32, ST_BOOL,
     0, 0, zero},
    {"65536 buckets",
     "def main(xs: [N]u16): ([N]u16, [65536]i64) = xs |> partition_by(65536, x => i32(x) * 2 - 30000)", 65536, ST_U16,
     ST_BOOL, 0, 0, twice_less},
    {"a u64 bucket", "def main(xs: [N]i64): ([N]i64, [16]i64) = xs |> partition_by(16, x => bits(x))", 16, ST_I64,
     ST_BOOL, -20, 20, all_bits},
    {"an i8 bucket", "def main(xs: [N]i32): ([N]i32, [100]i64) = xs |> partition_by(100, x => i8(x))", 100, ST_I32,
     ST_BOOL, 0, 0, low_byte_signed},
    {"tuples",
     "def main(xs: [N]i32, ys: [N]f64): ([N](i32, f64), [7]i64) = zip(xs, ys) |> partition_by(7, (x, y) => x % 9)",
     7, ST_I32, ST_F64, 0, 0, mod_nine},
};
#define NPARTS ((int)(sizeof part_progs / sizeof *part_progs))

/* elements of kind k: keys_of's RANDOM, or where lo < hi each in [lo, hi)
 * (an i64 every other one: the rest any bits, half of them negative) */
static void *elements_of(st_scalar_kind k, int64_t n, int64_t lo, int64_t hi, uint64_t seed) {
    void *xs = keys_of(k, n, RANDOM, seed);
    if (lo >= hi) return xs;
    uint64_t s = seed + 99;
    for (int64_t j = 0; j < n; j++)
        if (j % 2 == 0 || k != ST_I64) put_bits(k, xs, j, (uint64_t)(lo + (int64_t)(next64(&s) % (uint64_t)(hi - lo))));
    return xs;
}

/* The partition C makes: elements grouped by clamped bucket, in order, and
 * the buckets' starts. */
static io part_io(const part_prog *p, int64_t n, uint64_t seed) {
    io r;
    memset(&r, 0, sizeof r);
    void *xs = elements_of(p->kind, n, p->lo, p->hi, seed);
    r.args[0] = array_of(p->kind, n, xs, ar);
    int64_t *bucket = room(n, sizeof *bucket), *starts = room(p->k, sizeof *starts), *order = room(n, sizeof *order);
    memset(starts, 0, (size_t)p->k * sizeof *starts);
    for (int64_t j = 0; j < n; j++) {
        int64_t b = p->bucket(bits_at(p->kind, xs, j));
        bucket[j] = b < 0 ? 0 : b >= p->k ? p->k - 1 : b;
        starts[bucket[j]]++;
    }
    int64_t *next = room(p->k, sizeof *next);
    for (int64_t b = 0, sum = 0; b < p->k; b++) next[b] = sum, sum += starts[b], starts[b] = next[b];
    for (int64_t j = 0; j < n; j++) order[next[bucket[j]]++] = j;
    st_value grouped = array_of(p->kind, n, gathered(p->kind, n, xs, order), ar);
    if (p->second != ST_BOOL) {
        void *ys = keys_of(p->second, n, RANDOM, seed + 1);
        r.args[1] = array_of(p->second, n, ys, ar);
        grouped = tuple_of(2, (st_value[]){grouped, array_of(p->second, n, gathered(p->second, n, ys, order), ar)});
    }
    r.want = tuple_of(2, (st_value[]){grouped, array_of(ST_I64, p->k, starts, ar)});
    return r;
}

START_TEST(the_interpreter_partitions_as_c_does) {
    const part_prog *p = &part_progs[_i];
    const st_def *d = def_of(p->src);
    for (int l = 0; l < NLENGTHS; l++) {
        const char *label = text_of("%s, N=%lld, the interpreter", p->name, (long long)lengths[l]);
        io r = part_io(p, lengths[l], 3 + (uint64_t)l);
        st_value got = interpreted_result(d, r.args, lengths[l], -1, label);
        same_bits(&got, &r.want, label);
    }
}
END_TEST

/* partition_by's strategies: the defaults and partition-tiles alone */
static const strategy part_strategies[] = {
    {"the CPU's default", NULL, false, 0, -1},
    {"the GPU's default, launched as on a GPU", NULL, true, 0, -1},
    {"partition-tiles(TILE=1)", "try(each(any, try(partition-tiles(TILE=1))))", false, 0, 1},
    {"partition-tiles(TILE=3)", "try(each(any, try(partition-tiles(TILE=3))))", false, 0, 3},
    {"partition-tiles(TILE=1024)", "try(each(any, try(partition-tiles(TILE=1024))))", false, 0, 1024},
    {"partition-tiles", "try(each(any, try(partition-tiles)))", false, 0, 0},
};
#define NPART_STRATEGIES ((int)(sizeof part_strategies / sizeof *part_strategies))

/* the plain run's: both defaults on every program, each tile on one: 1 on
 * buckets out of range, 3 on tuples, 1024 on 65536 buckets, the device's on
 * a u64 bucket */
static bool part_in_sample(int s, int p) {
    static const int tiled[] = {0, 5, 2, 3};
    return full_run() || s < 2 || tiled[s - 2] == p;
}

START_TEST(the_device_partitions_as_c_does) {
    const part_prog *p = &part_progs[_i / NPART_STRATEGIES];
    int si = _i % NPART_STRATEGIES;
    const strategy *s = &part_strategies[si];
    if (!part_in_sample(si, _i / NPART_STRATEGIES)) return;
    const char *what = text_of("%s under %s", p->name, s->name);
    const st_def *d = def_of(p->src);
    st_code code = code_under(d, s, 0, what);
    ck_assert_has(code.opencl, "partition_scatter");
    st_exe *exe = built(&code, what);
    for (int l = 0; l < NLENGTHS; l++) {
        int64_t n = lengths[l];
        if (n == PRIME && !(full_run() || (si == 0 && p->k <= 16))) continue;
        if (n == PRIME && !st_test_big(si)) continue;
        if (table_bytes(s, n, p->k) > TABLE_LIMIT) continue;
        const char *label = text_of("%s, N=%lld", what, (long long)n);
        io r = part_io(p, n, 5 + (uint64_t)l);
        st_value got = launched(exe, r.args, n, -1, label);
        same_bits(&got, &r.want, text_of("%s, the device against C", label));
    }
    st_exe_free(exe);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Inside a map: each row in one work-item                                  */
/* ------------------------------------------------------------------------ */

typedef enum row_form { ROW_SORT, ROW_KV, ROW_PARTITION, ROW_VALUES } row_form;

typedef struct row_prog {
    const char *src;
    row_form form;
    st_scalar_kind kind;
} row_prog;

static const row_prog row_progs[] = {
    {"def main(xss: [N][M]i32): [N][M]i32 = xss |> map(row => sort(row))", ROW_SORT, ST_I32},
    {"def main(xss: [N][M]u8): [N][M]u8 = xss |> map(row => sort(row))", ROW_SORT, ST_U8},
    {"def main(xss: [N][M]f64): [N][M]f64 = xss |> map(row => sort(row))", ROW_SORT, ST_F64},
    {"def main(xss: [N][M]f32, vss: [N][M]i32): ([N][M]f32, [N][M]i32) =\n"
     "  map2((ks, vs) => sort_by_key(ks, vs), xss, vss) |> unzip",
     ROW_KV, ST_F32},
    /* x / 8 of x in [-50, 50): below 0 and past 3 */
    {"def main(xss: [N][M]i32): ([N][M]i32, [N][4]i64) = xss |> map(row => partition_by(4, x => x / 8, row)) |> unzip",
     ROW_PARTITION, ST_I32},
    /* rows as values, at the top level: elements that hold arrays, which
       partition-tiles leaves to one work-item */
    {"def main(ks: [N]i16, vss: [N][M]i32): ([N]i16, [N][M]i32) = sort_by_key(ks, vss)", ROW_VALUES, ST_I16},
};
#define NROWS ((int)(sizeof row_progs / sizeof *row_progs))

static const int64_t row_shapes[][2] = {{0, 5}, {1, 1}, {3, 7}, {5, 1000}, {100, 33}};
#define NROW_SHAPES ((int)(sizeof row_shapes / sizeof *row_shapes))

/* rows x cols inputs for a row program, and C's result: each row sorted
 * (or partitioned) on its own */
static io rows_io(const row_prog *p, int64_t rows, int64_t cols, uint64_t seed) {
    io r;
    memset(&r, 0, sizeof r);
    int64_t n = rows * cols;
    if (p->form == ROW_VALUES) { /* a key a row, the values each their own place */
        void *ks = keys_of(p->kind, rows, seed % 2 ? FEW : RANDOM, seed);
        int32_t *vss = positions(n), *moved = room(n, sizeof *moved);
        int64_t *order = order_in_c(p->kind, rows, ks);
        for (int64_t i = 0; i < rows; i++) memcpy(moved + i * cols, vss + order[i] * cols, (size_t)cols * sizeof *vss);
        r.args[0] = array_of(p->kind, rows, ks, ar);
        r.args[1] = grid_of(ST_I32, rows, cols, vss);
        r.want = tuple_of(2, (st_value[]){array_of(p->kind, rows, gathered(p->kind, rows, ks, order), ar),
                                          grid_of(ST_I32, rows, cols, moved)});
        return r;
    }
    size_t w = st_scalar_size(p->kind);
    unsigned char *xs = p->form == ROW_PARTITION ? elements_of(p->kind, n, -50, 50, seed)
                                                 : keys_of(p->kind, n, seed % 2 ? FEW : RANDOM, seed);
    int32_t *vs = positions(cols), *all_vs = room(n, sizeof *all_vs);
    for (int64_t i = 0; i < rows; i++) memcpy(all_vs + i * cols, vs, (size_t)cols * sizeof *vs);
    unsigned char *out = room(n, w);
    int32_t *out_vs = room(n, sizeof *out_vs);
    int64_t *starts = room(rows * 4, sizeof *starts);
    for (int64_t i = 0; i < rows; i++) {
        const unsigned char *row = xs + (size_t)(i * cols) * w;
        int64_t *order;
        if (p->form == ROW_PARTITION) {
            int64_t count[4] = {0}, next[4];
            order = room(cols, sizeof *order);
            for (int64_t j = 0; j < cols; j++) {
                int64_t b = (int32_t)bits_at(p->kind, row, j) / 8;
                count[b < 0 ? 0 : b > 3 ? 3 : b]++;
            }
            for (int b = 0, sum = 0; b < 4; b++) next[b] = sum, starts[i * 4 + b] = sum, sum += (int)count[b];
            for (int64_t j = 0; j < cols; j++) {
                int64_t b = (int32_t)bits_at(p->kind, row, j) / 8;
                order[next[b < 0 ? 0 : b > 3 ? 3 : b]++] = j;
            }
        } else {
            order = order_in_c(p->kind, cols, row);
        }
        memcpy(out + (size_t)(i * cols) * w, gathered(p->kind, cols, row, order), (size_t)cols * w);
        memcpy(out_vs + i * cols, gathered(ST_I32, cols, vs, order), (size_t)cols * sizeof *vs);
    }
    r.args[0] = grid_of(p->kind, rows, cols, xs);
    r.args[1] = grid_of(ST_I32, rows, cols, all_vs);
    st_value sorted = grid_of(p->kind, rows, cols, out);
    r.want = p->form == ROW_SORT ? sorted
             : p->form == ROW_KV ? tuple_of(2, (st_value[]){sorted, grid_of(ST_I32, rows, cols, out_vs)})
                                 : tuple_of(2, (st_value[]){sorted, grid_of(ST_I64, rows, 4, starts)});
    return r;
}

/* the defaults, and radix-sort's 5-bit digits in a loop inside the lambda */
static const int row_strategies[] = {0, 1, 4};
#define NROW_STRATEGIES ((int)(sizeof row_strategies / sizeof *row_strategies))

/* the plain run's: the CPU's default on every program, the GPU's on f64
 * rows, partitions and row values, 5-bit digits on i32 and u8 rows (two
 * turns, the second of 3 bits) */
static bool row_in_sample(int s, const row_prog *p) {
    if (s == 2 && p->form == ROW_PARTITION) return false; /* nothing to sort */
    if (full_run() || s == 0) return true;
    if (s == 1) return p->kind == ST_F64 || p->form == ROW_PARTITION || p->form == ROW_VALUES;
    return p->form == ROW_SORT && (p->kind == ST_I32 || p->kind == ST_U8);
}

START_TEST(each_row_sorts_in_one_work_item) {
    const row_prog *p = &row_progs[_i / NROW_STRATEGIES];
    const strategy *s = &strategies[row_strategies[_i % NROW_STRATEGIES]];
    if (!row_in_sample(_i % NROW_STRATEGIES, p)) return;
    const char *what = text_of("%s under %s", p->src, s->name);
    const st_def *d = def_of(p->src);
    st_code code = code_under(d, s, (int)width_of(p->kind), what);
    ck_assert_msg(!strstr(code.opencl, "partition_count"), "%s: rows partitioned by kernels of their own:\n%s", what,
                  code.opencl);
    st_exe *exe = built(&code, what);
    for (int z = 0; z < NROW_SHAPES; z++) {
        int64_t rows = row_shapes[z][0], cols = row_shapes[z][1];
        const char *label = text_of("%s, N=%lld, M=%lld", what, (long long)rows, (long long)cols);
        io r = rows_io(p, rows, cols, 13 + (uint64_t)z);
        st_value got = launched(exe, r.args, rows, cols, label);
        same_bits(&got, &r.want, text_of("%s, the device against C", label));
        st_value ref = interpreted_result(d, r.args, rows, cols, label);
        same_bits(&ref, &r.want, text_of("%s, the interpreter against C", label));
    }
    st_exe_free(exe);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Located errors, through the command line                                 */
/* ------------------------------------------------------------------------ */

START_TEST(bad_sorts_are_refused_at_their_place) {
    static const struct {
        const char *src;
        int line, col;
        const char *message;
    } cases[] = {
        {"def main(xs: [N]i32): ([N]i32, [0]i64) =\n  xs |> partition_by(0, x => x)\n", 2, 22,
         "partition_by's count of buckets k must be a literal from 1 to 65536"},
        {"def main(xs: [N]i32): ([N]i32, [65537]i64) =\n  xs |> partition_by(65537, x => x)\n", 2, 22,
         "partition_by's count of buckets k must be a literal from 1 to 65536"},
        {"def main(xs: [N]i32, k: i64): ([N]i32, [k]i64) =\n  xs |> partition_by(k, x => x)\n", 2, 22,
         "partition_by's count of buckets k must be a literal from 1 to 65536"},
        {"def main(xs: [N]f32): ([N]f32, [4]i64) =\n  xs |> partition_by(4, x => x * 2.0)\n", 2, 25,
         "partition_by's function gives an element's bucket, an integer from 0 to k - 1, but it returns f32"},
        {"def main(xs: [N]bool): [N]bool =\n  sort(xs)\n", 2, 8,
         "sort needs an array of numbers (integers or floats), but this has type [N]bool"},
        {"def main(xs: [N]i32, ys: [N]f32): [N](i32, f32) =\n  sort(zip(xs, ys))\n", 2, 8,
         "sort needs an array of numbers (integers or floats), but this has type [N](i32, f32)"},
        {"def main(ks: [N]i32, vs: [M]f32): ([N]i32, [M]f32) =\n  sort_by_key(ks, vs)\n", 2, 19,
         "sort_by_key needs as many values as keys, but [N]i32 and [M]f32 differ in length"},
    };
    cli c;
    cli_open(&c, "sort");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *path = cli_file(&c, text_of("bad%zu", i), cases[i].src);
        const char *want = text_of("%s:%d:%d: error: %s", path, cases[i].line, cases[i].col, cases[i].message);
        /* check refuses it, and so does run, before any device */
        const char *const *commands[] = {ARGS("check", path), ARGS("run", path)};
        for (size_t k = 0; k < 2; k++) {
            char *out, *err;
            int rc = cli_strata(&c, commands[k], &out, &err);
            ck_assert_msg(rc == 1, "%s: exit %d, not 1\n%s", strata_command_line(c.a, commands[k]), rc, err);
            ck_assert_msg(strstr(err, want) != NULL, "%s: expected \"%s\" in:\n%s",
                          strata_command_line(c.a, commands[k]), want, err);
        }
    }
    cli_close(&c);
}
END_TEST

/* The examples run and check through the command line. */
START_TEST(the_examples_run_and_check) {
    static const char *const examples[] = {"sort", "sort_by_key", "partition_by"};
    cli c;
    cli_open(&c, "sort");
    for (size_t i = 0; i < sizeof examples / sizeof *examples; i++) {
        const char *prog = cli_example(&c, examples[i]);
        char *out, *err;
        int rc = cli_strata(&c, ARGS("run", prog, "--size", "N=1000", "--check"), &out, &err);
        ck_assert_msg(rc == 0, "%s: exit %d\n%s\n%s", prog, rc, out, err);
        ck_assert_has(err, "check: the results equal the interpreter's");
    }
    cli_close(&c);
}
END_TEST

static Suite *sort_suite(void) {
    Suite *s = suite_create("sort");
    TCase *lang = tcase_create("language");
    tcase_add_checked_fixture(lang, rules_setup, rules_teardown);
    tcase_set_timeout(lang, 600);
    tcase_add_loop_test(lang, the_interpreter_sorts_as_c_does, 0, NSORTS);
    tcase_add_loop_test(lang, the_interpreter_partitions_as_c_does, 0, NPARTS);
    tcase_add_test(lang, bad_sorts_are_refused_at_their_place);
    suite_add_tcase(s, lang);
    TCase *dev = tcase_create("device");
    tcase_set_timeout(dev, 600);
    tcase_add_checked_fixture(dev, rules_setup, pipeline_teardown);
    tcase_add_loop_test(dev, the_device_sorts_as_c_does, 0, NSORTS * NSTRATEGIES);
    tcase_add_loop_test(dev, the_device_partitions_as_c_does, 0, NPARTS * NPART_STRATEGIES);
    tcase_add_loop_test(dev, each_row_sorts_in_one_work_item, 0, NROWS * NROW_STRATEGIES);
    tcase_add_test(dev, the_examples_run_and_check);
    suite_add_tcase(s, dev);
    return s;
}

int main(void) { return run_suite(sort_suite()); }
