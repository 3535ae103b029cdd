/* tests/test_smallint.c — the 8- and 16-bit integers i8 u8 i16 u16 (issue
 * 21): the interpreter's wrap-around on edge values, and the generated
 * OpenCL's (run on the device), against C computed here (C's integer
 * promotion, then the result cast back to the type; shifts modulo the
 * width); conversions; `.npy` files of each dtype through `strata eval`;
 * the u8 image histogram (examples/image_histogram.strata), u16 and i8
 * scans, i8 reductions and histograms whose buckets are u8 and u16 through
 * `strata run` under no strategy, the default and each rule that applies,
 * at N = 1, 7, 1000 and 1000003, against C; and the located errors. */
#include "run_strata.h"

#include <stdint.h>

static st_ctx *cx;
static st_arena *ar;

static void setup(void) {
    cx = st_ctx_new();
    ar = st_arena_new();
    ck_assert(cx && ar);
}

static void teardown(void) {
    st_arena_free(ar);
    st_ctx_free(cx);
}

static const int64_t SIZES[] = {1, 7, 1000, 1000003};

/* xorshift: the same inputs on every run */
static uint64_t next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* ------------------------------------------------------------------------ */
/* Running strata                                                           */
/* ------------------------------------------------------------------------ */

static const char *npy_of(cli *c, const char *name, st_scalar_kind k, int64_t n, const void *data) {
    const char *path = arena_text(c->a, "%s/%s.npy", c->dir, name);
    st_value v = array_of(k, n, (void *)data, c->a);
    st_err err = {0};
    ck_assert_msg(st_npy_write(path, &v, &err), "%s", err.message);
    return path;
}

/* `strata run PROG [-s strategy] --input a --input b --output DIR`
 * (strategy NULL: the default; b may be NULL), once; its first n results
 * read from DIR into got. */
static void run_results(cli *c, const char *prog, const char *strategy, const char *a, const char *b, st_value *got,
                        int n) {
    const char *out_dir = arena_text(c->a, "%s/out", c->dir);
    const char *args[16] = {"run", prog};
    int k = 2;
    if (strategy) {
        args[k++] = "-s";
        args[k++] = strategy;
    }
    args[k++] = "--input";
    args[k++] = a;
    if (b) {
        args[k++] = "--input";
        args[k++] = b;
    }
    args[k++] = "--output";
    args[k++] = out_dir;
    args[k] = NULL;
    char *out, *err;
    int rc = cli_strata(c, args, &out, &err);
    ck_assert_msg(rc == 0, "`%s` fails:\n%.3000s", strata_command_line(c->a, args), err);
    for (int i = 0; i < n; i++) got[i] = npy_read_ok(c->a, arena_text(c->a, "%s/%d.npy", out_dir, i));
}

/* The same for a program of one result. */
static st_value run_result(cli *c, const char *prog, const char *strategy, const char *a, const char *b) {
    st_value got;
    run_results(c, prog, strategy, a, b, &got, 1);
    return got;
}

static void same_bytes(const st_value *got, st_scalar_kind k, int64_t n, const void *want, const char *what) {
    ck_assert_msg(got->kind == ST_VALUE_ARRAY && got->scalar == k, "%s: not a [%lld]%s", what, (long long)n,
                  st_scalar_name(k));
    ck_assert_msg(got->u.a.dims[0] == n, "%s: %lld elements, not %lld", what, (long long)got->u.a.dims[0],
                  (long long)n);
    size_t w = st_scalar_size(k);
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(!memcmp((const char *)got->u.a.data + (size_t)i * w, (const char *)want + (size_t)i * w, w),
                      "%s: element %lld differs", what, (long long)i);
}

/* ------------------------------------------------------------------------ */
/* Wrap-around on edge values                                               */
/* ------------------------------------------------------------------------ */

enum { NOPS = 12, NEDGE = 12 };

/* The operators of the program below, in C: the operands promoted (to
 * int64, which holds every result), the result cast back to T's width. */
static int64_t c_op(int op, int64_t x, int64_t y, int w, bool sgn) {
    uint64_t m = (uint64_t)w - 1;
    int64_t r;
    switch (op) {
    case 0: r = x + y; break;
    case 1: r = x - y; break;
    case 2: r = (int64_t)((uint64_t)x * (uint64_t)y); break;
    case 3: r = x & y; break;
    case 4: r = x | y; break;
    case 5: r = x ^ y; break;
    case 6: r = (int64_t)((uint64_t)x << ((uint64_t)y & m)); break;
    case 7: r = x >> ((uint64_t)y & m); break; /* x sign- or zero-extended: arithmetic or logical */
    case 8: r = -x; break;
    case 9: return x < y;
    case 10: return x < y ? x : y;
    default: return x > y ? x : y;
    }
    /* back to w bits, sign-extended for a signed type */
    uint64_t bits = (uint64_t)r & ((UINT64_C(1) << w) - 1);
    if (sgn && (bits >> (w - 1))) return (int64_t)(bits | ~((UINT64_C(1) << w) - 1));
    return (int64_t)bits;
}

#define OPS_PROGRAM(T)                                                                                          \
    "def main(xs: [N]" T ", ys: [N]" T ") =\n"                                                                   \
    "  map((x, y) => (x + y, x - y, x * y, x & y, x | y, x ^ y, x << y, x >> y, -x, x < y, min(x, y), max(x, y)),\n" \
    "      zip(xs, ys))\n"
#define DIV_PROGRAM(T) "def main(xs: [N]" T ", ys: [N]" T ") =\n  map((x, y) => (x / y, x % y), zip(xs, ys))\n"

typedef struct kind_case {
    st_scalar_kind k;
    const char *name;
    int64_t edges[NEDGE];
} kind_case;

static const kind_case kinds[] = {
    {ST_U8, "u8", {0, 1, 2, 3, 7, 8, 100, 127, 128, 200, 254, 255}},
    {ST_I8, "i8", {-128, -127, -100, -2, -1, 0, 1, 2, 7, 8, 100, 127}},
    {ST_U16, "u16", {0, 1, 2, 15, 16, 255, 256, 32767, 32768, 40000, 65534, 65535}},
    {ST_I16, "i16", {-32768, -32767, -300, -2, -1, 0, 1, 2, 15, 16, 300, 32767}},
};

/* element p of kind k (bool or an 8- or 16-bit integer) as an int64 */
static int64_t load_int(st_scalar_kind k, const void *p) {
    switch (k) {
    case ST_BOOL: return *(const uint8_t *)p != 0;
    case ST_U8: return *(const uint8_t *)p;
    case ST_I8: return *(const int8_t *)p;
    case ST_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
    default: { int16_t v; memcpy(&v, p, 2); return v; }
    }
}

/* every pair of edges (ys != 0 when nonzero) as two arrays of kind k */
static int64_t pairs(const kind_case *kc, bool nonzero, void **xs, void **ys) {
    size_t w = st_scalar_size(kc->k);
    *xs = st_arena_alloc(ar, NEDGE * NEDGE * w);
    *ys = st_arena_alloc(ar, NEDGE * NEDGE * w);
    int64_t n = 0;
    for (int i = 0; i < NEDGE; i++)
        for (int j = 0; j < NEDGE; j++) {
            if (nonzero && kc->edges[j] == 0) continue;
            st_scalar a = {.i64 = kc->edges[i]}, b = {.i64 = kc->edges[j]};
            /* little-endian: the low bytes of the int64 are the value */
            memcpy((char *)*xs + (size_t)n * w, &a, w);
            memcpy((char *)*ys + (size_t)n * w, &b, w);
            n++;
        }
    return n;
}

static void check_ops(const st_value *r, const kind_case *kc, const void *xs, const void *ys, int64_t n, bool div,
                      const char *where) {
    size_t w = st_scalar_size(kc->k);
    bool sgn = st_scalar_is_signed(kc->k);
    int nops = div ? 2 : NOPS;
    ck_assert_int_eq(r->kind, ST_VALUE_TUPLE);
    for (int op = 0; op < nops; op++) {
        const st_value *a = &r->u.items[op];
        ck_assert_int_eq(a->u.a.dims[0], n);
        st_scalar_kind rk = !div && op == 9 ? ST_BOOL : kc->k;
        ck_assert_int_eq(a->scalar, rk);
        for (int64_t i = 0; i < n; i++) {
            int64_t x = load_int(kc->k, (const char *)xs + (size_t)i * w);
            int64_t y = load_int(kc->k, (const char *)ys + (size_t)i * w);
            int64_t want;
            if (div) { /* C's / and % on the promoted values (-128 / -1 is 128), cast back */
                int64_t q = op == 0 ? x / y : x % y;
                want = c_op(0, q, 0, (int)w * 8, sgn);
            } else {
                want = c_op(op, x, y, (int)w * 8, sgn);
            }
            int64_t got = load_int(rk, (const char *)a->u.a.data + (size_t)i * st_scalar_size(rk));
            ck_assert_msg(got == want, "%s %s: op %d of (%lld, %lld) gives %lld, C %lld", where, kc->name, op,
                          (long long)x, (long long)y, (long long)got, (long long)want);
        }
    }
}

START_TEST(interpreter_wraps_like_c) {
    const kind_case *kc = &kinds[_i];
    for (int div = 0; div < 2; div++) {
        void *xs, *ys;
        int64_t n = pairs(kc, div, &xs, &ys);
        const char *src = div ? (kc->k == ST_U8 ? DIV_PROGRAM("u8") : kc->k == ST_I8 ? DIV_PROGRAM("i8")
                                 : kc->k == ST_U16 ? DIV_PROGRAM("u16") : DIV_PROGRAM("i16"))
                              : (kc->k == ST_U8 ? OPS_PROGRAM("u8") : kc->k == ST_I8 ? OPS_PROGRAM("i8")
                                 : kc->k == ST_U16 ? OPS_PROGRAM("u16") : OPS_PROGRAM("i16"));
        st_value args[2] = {array_of(kc->k, n, xs, ar), array_of(kc->k, n, ys, ar)};
        st_value r = eval_ok(cx, ar, src, args, 2);
        check_ops(&r, kc, xs, ys, n, div, "the interpreter");
    }
}
END_TEST

/* the same programs as OpenCL, under no strategy and the default */
START_TEST(device_wraps_like_c) {
    const kind_case *kc = &kinds[_i];
    cli c;
    cli_open(&c, "smallint-ops");
    for (int div = 0; div < 2; div++) {
        void *xs, *ys;
        int64_t n = pairs(kc, div, &xs, &ys);
        const char *src = div ? arena_text(c.a, "def main(xs: [N]%s, ys: [N]%s) =\n  map((x, y) => (x / y, x %% y), zip(xs, ys))\n",
                                           kc->name, kc->name)
                              : arena_text(c.a, "def main(xs: [N]%s, ys: [N]%s) =\n  map((x, y) => (x + y, x - y, x * y, "
                                                "x & y, x | y, x ^ y, x << y, x >> y, -x, x < y, min(x, y), max(x, y)), zip(xs, ys))\n",
                                           kc->name, kc->name);
        const char *prog = cli_file(&c, "ops", src);
        const char *a = arena_text(c.a, "xs=%s", npy_of(&c, "xs", kc->k, n, xs));
        const char *b = arena_text(c.a, "ys=%s", npy_of(&c, "ys", kc->k, n, ys));
        static const char *const strategies[] = {"id", NULL};
        for (int s = 0; s < 2; s++) {
            st_value items[NOPS];
            int nops = div ? 2 : NOPS;
            run_results(&c, prog, strategies[s], a, b, items, nops);
            st_value r = {.kind = ST_VALUE_TUPLE, .n = (uint32_t)nops};
            r.u.items = items;
            check_ops(&r, kc, xs, ys, n, div, strategies[s] ? "the device under id" : "the device under the default");
        }
    }
    cli_close(&c);
}
END_TEST

/* literals, constants and conversions */
START_TEST(constants_and_conversions) {
    const char *src = "def main(x: i32, f: f32) =\n"
                      "  (u8.max, u8.min, i8.max, i8.min, u16.max, i16.min, 200u8 + 100u8, -128i8 / -1i8,\n"
                      "   u8(x), i8(x), u16(x), i16(x), u8(f), i8(f), i16(f), f32(i8(x)), i64(u8(x)), u32(i16(x)))\n";
    st_value args[2] = {scalar_of(ST_I32, (st_scalar){.i32 = -1}), scalar_of(ST_F32, (st_scalar){.f32 = 300.7f})};
    st_value r = eval_ok(cx, ar, src, args, 2);
    ck_assert_int_eq(r.kind, ST_VALUE_TUPLE);
    const st_value *v = r.u.items;
    ck_assert_uint_eq(v[0].u.s.u8, 255);
    ck_assert_uint_eq(v[1].u.s.u8, 0);
    ck_assert_int_eq(v[2].u.s.i8, 127);
    ck_assert_int_eq(v[3].u.s.i8, -128);
    ck_assert_uint_eq(v[4].u.s.u16, 65535);
    ck_assert_int_eq(v[5].u.s.i16, -32768);
    ck_assert_uint_eq(v[6].u.s.u8, 44);
    ck_assert_int_eq(v[7].u.s.i8, -128);
    ck_assert_uint_eq(v[8].u.s.u8, 255);      /* -1 wraps */
    ck_assert_int_eq(v[9].u.s.i8, -1);
    ck_assert_uint_eq(v[10].u.s.u16, 65535);
    ck_assert_int_eq(v[11].u.s.i16, -1);
    ck_assert_uint_eq(v[12].u.s.u8, 255);     /* 300.7 saturates */
    ck_assert_int_eq(v[13].u.s.i8, 127);
    ck_assert_int_eq(v[14].u.s.i16, 300);     /* truncates */
    ck_assert(v[15].u.s.f32 == -1.0f);
    ck_assert_int_eq(v[16].u.s.i64, 255);     /* zero-extends */
    ck_assert_uint_eq(v[17].u.s.u32, UINT32_MAX); /* sign-extends, then wraps */
}
END_TEST

START_TEST(division_by_zero_is_an_error) {
    const st_program *p = parse_ok(cx, "def main(x: u8, y: u8): u8 = x / y\n");
    st_err err = {0};
    const st_def *d = st_program_entry(p, NULL, &err);
    st_value args[2] = {scalar_of(ST_U8, (st_scalar){.u8 = 7}), scalar_of(ST_U8, (st_scalar){.u8 = 0})};
    st_value out;
    ck_assert(!st_eval(cx, d, args, NULL, 0, ar, &out, &err));
    ck_assert_has(err.message, "division by zero");
}
END_TEST

/* ------------------------------------------------------------------------ */
/* .npy files of each dtype                                                 */
/* ------------------------------------------------------------------------ */

/* each dtype read by `strata eval` and written back unchanged, and the
 * header names the dtype numpy does */
START_TEST(npy_round_trip_through_eval) {
    static const struct { st_scalar_kind k; const char *name, *descr; } dt[] = {
        {ST_U8, "u8", "'|u1'"}, {ST_I8, "i8", "'|i1'"}, {ST_U16, "u16", "'<u2'"}, {ST_I16, "i16", "'<i2'"}};
    cli c;
    cli_open(&c, "smallint-npy");
    for (size_t t = 0; t < sizeof dt / sizeof *dt; t++) {
        int64_t n = 300;
        size_t w = st_scalar_size(dt[t].k);
        unsigned char *data = st_arena_alloc(c.a, (size_t)n * w);
        uint64_t s = 7 + t;
        for (size_t i = 0; i < (size_t)n * w; i++) data[i] = (unsigned char)next(&s);
        const char *prog = cli_file(&c, "id", arena_text(c.a, "def main(xs: [N]%s): [N]%s = xs\n", dt[t].name, dt[t].name));
        const char *in = npy_of(&c, "in", dt[t].k, n, data);
        const char *out_dir = arena_text(c.a, "%s/eval", c.dir);
        char *out, *err;
        ck_assert_msg(cli_strata(&c, ARGS("eval", prog, "--input", arena_text(c.a, "xs=%s", in), "--output", out_dir),
                                 &out, &err) == 0, "%s", err);
        const char *path = arena_text(c.a, "%s/0.npy", out_dir);
        st_value v = npy_read_ok(c.a, path);
        same_bytes(&v, dt[t].k, n, data, dt[t].name);
        size_t len = 0;
        const char *bytes = slurp_file(c.a, path, &len);
        ck_assert_msg(len > 10 && strstr(bytes + 10, dt[t].descr), "%s: no %s", path, dt[t].descr); /* the header after the magic */
        /* and printed on standard output without --output */
        ck_assert_int_eq(cli_strata(&c, ARGS("eval", prog, "--input", arena_text(c.a, "xs=%s", in)), &out, &err), 0);
        ck_assert_has(out, arena_text(c.a, "[300]%s = [", dt[t].name));
    }
    cli_close(&c);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Histograms, scans and reductions on the device                           */
/* ------------------------------------------------------------------------ */

static const char *const HIST_STRATEGIES[] = {
    "id", NULL, "subhistogram",
    "subhistogram(MEM=global, ATOMIC=add)", "subhistogram(MEM=global, ATOMIC=cas)",
    "subhistogram(MEM=local, ATOMIC=add)", "subhistogram(MEM=local, ATOMIC=cas)",
};

static const char *name_of(const char *strategy) { return strategy ? strategy : "the default"; }

/* n pixels over all 256 grey levels, a third of them in one level (a
 * crowded bucket, as dark images have) */
static uint8_t *image(int64_t n, uint64_t seed) {
    uint8_t *img = st_arena_alloc(ar, (size_t)n);
    uint64_t s = seed * 2654435761u + 1;
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = next(&s);
        img[i] = r % 3 == 0 ? 17 : (uint8_t)(r >> 8);
    }
    return img;
}

START_TEST(image_histogram_equals_c) {
    int64_t n = SIZES[_i];
    cli c;
    cli_open(&c, "smallint-hist");
    const char *prog = cli_example(&c, "image_histogram");
    uint8_t *img = image(n, (uint64_t)n);
    uint32_t want[256] = {0};
    for (int64_t i = 0; i < n; i++) want[img[i]]++;
    const char *a = arena_text(c.a, "img=%s", npy_of(&c, "img", ST_U8, n, img));
    for (size_t s = 0; s < sizeof HIST_STRATEGIES / sizeof *HIST_STRATEGIES; s++) {
        st_value got = run_result(&c, prog, HIST_STRATEGIES[s], a, NULL);
        same_bytes(&got, ST_U32, 256, want, arena_text(c.a, "N=%lld, %s", (long long)n, name_of(HIST_STRATEGIES[s])));
    }
    cli_close(&c);
}
END_TEST

/* buckets of u8 (counts that wrap at 256) and of u16 (+ and min): no
 * atomic takes them, so a compare-and-swap on their 32-bit word or a lock */
static const char *const SMALL_BUCKET_STRATEGIES[] = {
    "id", NULL, "each(reduce_by_index, subhistogram(MEM=global, ATOMIC=cas))",
    "each(reduce_by_index, subhistogram(C=4, MEM=local, ATOMIC=cas))", "each(reduce_by_index, subhistogram(C=1, MEM=global))",
    "each(reduce_by_index, subhistogram(C=16, MEM=global, ATOMIC=xchg))",
};

START_TEST(small_buckets_equal_c) {
    int64_t n = SIZES[_i];
    cli c;
    cli_open(&c, "smallint-buckets");
    /* u8 counters of u8 pixels */
    const char *u8_prog = cli_file(&c, "u8", "def main(img: [N]u8): [256]u8 =\n"
                                             "  reduce_by_index(replicate(256, 0u8), +, 0u8, img, replicate(N, 1u8))\n");
    uint8_t *img = image(n, (uint64_t)n + 5);
    uint8_t want8[256] = {0};
    for (int64_t i = 0; i < n; i++) want8[img[i]]++;
    const char *a = arena_text(c.a, "img=%s", npy_of(&c, "img", ST_U8, n, img));
    /* u16 sums of u16 values into 37 buckets (an odd count: the last word is half a bucket's) and their minimum */
    const char *u16_prog = cli_file(&c, "u16", "def main(is: [N]i32, vs: [N]u16) =\n"
                                               "  (reduce_by_index(replicate(37, 0u16), +, 0u16, is, vs),\n"
                                               "   reduce_by_index(replicate(37, u16.max), min, u16.max, is, vs))\n");
    int32_t *is = st_arena_alloc(ar, (size_t)n * 4);
    uint16_t *vs = st_arena_alloc(ar, (size_t)n * 2);
    uint16_t sum[37] = {0}, least[37];
    for (int b = 0; b < 37; b++) least[b] = UINT16_MAX;
    uint64_t s = (uint64_t)n * 31 + 1;
    for (int64_t i = 0; i < n; i++) {
        is[i] = (int32_t)(next(&s) % 41) - 2; /* some out of bounds */
        vs[i] = (uint16_t)next(&s);
        if (is[i] >= 0 && is[i] < 37) {
            sum[is[i]] = (uint16_t)(sum[is[i]] + vs[i]);
            if (vs[i] < least[is[i]]) least[is[i]] = vs[i];
        }
    }
    const char *ia = arena_text(c.a, "is=%s", npy_of(&c, "is", ST_I32, n, is));
    const char *va = arena_text(c.a, "vs=%s", npy_of(&c, "vs", ST_U16, n, vs));
    for (size_t k = 0; k < sizeof SMALL_BUCKET_STRATEGIES / sizeof *SMALL_BUCKET_STRATEGIES; k++) {
        const char *st = SMALL_BUCKET_STRATEGIES[k];
        const char *what = arena_text(c.a, "N=%lld, %s", (long long)n, name_of(st));
        st_value got = run_result(&c, u8_prog, st, a, NULL);
        same_bytes(&got, ST_U8, 256, want8, arena_text(c.a, "u8 counts, %s", what));
        st_value both[2];
        run_results(&c, u16_prog, st, ia, va, both, 2);
        same_bytes(&both[0], ST_U16, 37, sum, arena_text(c.a, "u16 sums, %s", what));
        same_bytes(&both[1], ST_U16, 37, least, arena_text(c.a, "u16 minima, %s", what));
    }
    cli_close(&c);
}
END_TEST

/* the rule says at rewrite time what it cannot take: no hardware atomic
 * adds 8- or 16-bit numbers */
START_TEST(small_buckets_refuse_a_hardware_atomic) {
    cli c;
    cli_open(&c, "smallint-refuse");
    const char *prog = cli_file(&c, "u8", "def main(img: [N]u8): [256]u8 =\n"
                                          "  reduce_by_index(replicate(256, 0u8), +, 0u8, img, replicate(N, 1u8))\n");
    char *out, *err;
    ck_assert_int_eq(cli_strata(&c, ARGS("rewrite", prog, "-s", "subhistogram(ATOMIC=add)"), &out, &err), 1);
    ck_assert_has(err, "ATOMIC=add needs a hardware atomic, and this operator on u8 has none");
    ck_assert_has(err, "use cas or xchg");
    cli_close(&c);
}
END_TEST

static const char *const SCAN_STRATEGIES[] = {
    "id", NULL, "first(scan, parallel-scan(BS=256, BF=2, SE=4))", "first(scan, lookback(M=4, WG=64))",
    "first(scan, lookback(M=16, WG=32, LOAD=direct))",
};

/* a u16 sum and an i8 one (signed: the wrap-around of + on a signed type),
 * and a u8 max (the group scans' `c ? x : y` of u8 is an int in OpenCL C,
 * and max of a u8 and an int did not build) */
START_TEST(small_scans_equal_c) {
    int64_t n = SIZES[_i];
    cli c;
    cli_open(&c, "smallint-scan");
    const char *u16_prog = cli_file(&c, "scan16", "def main(xs: [N]u16): [N]u16 =\n  xs |> scan(+, 0u16)\n");
    const char *i8_prog = cli_file(&c, "scan8", "def main(xs: [N]i8): [N]i8 =\n  xs |> scan(+, 0i8)\n");
    const char *max8_prog = cli_file(&c, "max8", "def main(xs: [N]u8): [N]u8 =\n  xs |> scan(max, 0u8)\n");
    uint8_t *us = st_arena_alloc(ar, (size_t)n), *want_max = st_arena_alloc(ar, (size_t)n), most = 0;
    uint16_t *xs = st_arena_alloc(ar, (size_t)n * 2), *want = st_arena_alloc(ar, (size_t)n * 2);
    int8_t *bs = st_arena_alloc(ar, (size_t)n), *want8 = st_arena_alloc(ar, (size_t)n);
    uint64_t s = (uint64_t)n + 3;
    uint16_t acc = 0;
    int8_t acc8 = 0;
    for (int64_t i = 0; i < n; i++) {
        xs[i] = (uint16_t)next(&s);
        acc = (uint16_t)(acc + xs[i]);
        want[i] = acc;
        bs[i] = (int8_t)next(&s);
        acc8 = (int8_t)(acc8 + bs[i]);
        want8[i] = acc8;
        us[i] = (uint8_t)(next(&s) % 251);
        most = us[i] > most ? us[i] : most;
        want_max[i] = most;
    }
    const char *au = arena_text(c.a, "xs=%s", npy_of(&c, "us", ST_U8, n, us));
    const char *a = arena_text(c.a, "xs=%s", npy_of(&c, "xs", ST_U16, n, xs));
    const char *a8 = arena_text(c.a, "xs=%s", npy_of(&c, "bs", ST_I8, n, bs));
    for (size_t k = 0; k < sizeof SCAN_STRATEGIES / sizeof *SCAN_STRATEGIES; k++) {
        if (n >= 1000003 && !st_test_big((int)k)) continue;
        const char *what = arena_text(c.a, "N=%lld, %s", (long long)n, name_of(SCAN_STRATEGIES[k]));
        st_value got = run_result(&c, u16_prog, SCAN_STRATEGIES[k], a, NULL);
        same_bytes(&got, ST_U16, n, want, arena_text(c.a, "u16 %s", what));
        got = run_result(&c, i8_prog, SCAN_STRATEGIES[k], a8, NULL);
        same_bytes(&got, ST_I8, n, want8, arena_text(c.a, "i8 %s", what));
        got = run_result(&c, max8_prog, SCAN_STRATEGIES[k], au, NULL);
        same_bytes(&got, ST_U8, n, want_max, arena_text(c.a, "u8 max %s", what));
    }
    cli_close(&c);
}
END_TEST

START_TEST(i8_reduce_equals_c) {
    int64_t n = SIZES[_i];
    cli c;
    cli_open(&c, "smallint-reduce");
    const char *prog = cli_file(&c, "reduce", "def main(xs: [N]i8) =\n"
                                              "  (xs |> reduce(+, 0i8), xs |> reduce(min, i8.max), xs |> map(x => x * 3i8) |> reduce(^, 0i8))\n");
    int8_t *xs = st_arena_alloc(ar, (size_t)n);
    uint64_t s = (uint64_t)n + 11;
    int8_t sum = 0, least = INT8_MAX, x3 = 0;
    for (int64_t i = 0; i < n; i++) {
        xs[i] = (int8_t)next(&s);
        sum = (int8_t)(sum + xs[i]);
        if (xs[i] < least) least = xs[i];
        x3 = (int8_t)(x3 ^ (int8_t)(xs[i] * 3));
    }
    const char *a = arena_text(c.a, "xs=%s", npy_of(&c, "xs", ST_I8, n, xs));
    static const char *const strategies[] = {"id", NULL, "first(reduce, reduce-seq)", "try(each(any, try(fuse-map-reduce)))"};
    for (size_t k = 0; k < sizeof strategies / sizeof *strategies; k++) {
        const char *what = arena_text(c.a, "N=%lld, %s", (long long)n, name_of(strategies[k]));
        int8_t want[3] = {sum, least, x3};
        st_value got[3];
        run_results(&c, prog, strategies[k], a, NULL, got, 3);
        for (int j = 0; j < 3; j++) {
            ck_assert_msg(got[j].kind == ST_VALUE_SCALAR && got[j].scalar == ST_I8, "%s: not an i8", what);
            ck_assert_msg(got[j].u.s.i8 == want[j], "%s: result %d is %d, C %d", what, j, got[j].u.s.i8, want[j]);
        }
    }
    cli_close(&c);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Located errors                                                           */
/* ------------------------------------------------------------------------ */

START_TEST(literals_that_do_not_fit) {
    ck_assert_error(cx, "def main(x: u8): u8 = x + 300u8\n", 1, 27, "300 does not fit in u8 (0 to 255)");
    ck_assert_error(cx, "def main(x: i8): i8 = x + 128i8\n", 1, 27, "128 does not fit in i8 (-128 to 127)");
    ck_assert_error(cx, "def main(x: u16): u16 = x + -1u16\n", 1, 29, "-1 does not fit in u16 (0 to 65535)");
    ck_assert_error(cx, "def main(x: i16): i16 =\n  x + 40000i16\n", 2, 7, "40000 does not fit in i16 (-32768 to 32767)");
    /* an unsuffixed literal takes the other operand's type, and must fit it */
    ck_assert_error(cx, "def main(x: u8): u8 = x + 256\n", 1, 27, "256 does not fit in u8");
    ck_assert_error(cx, "def main(x: i8): i8 = x * -129\n", 1, 27, "-129 does not fit in i8");
    /* the edges themselves fit */
    parse_ok(cx, "def main(x: i8): i8 = x + -128i8 + 127i8\n");
    parse_ok(cx, "def main(x: u16): u16 = x + 65535u16 + 0u16\n");
}
END_TEST

START_TEST(mixed_types_and_bad_suffixes) {
    ck_assert_error(cx, "def main(x: u8, y: i32): u8 = x + y\n", 1, 35, "u8");
    ck_assert_error(cx, "def main(x: u8): u8 = x + 1u9\n", 1, 28, "a literal's suffix is one of i8 u8 i16 u16");
    ck_assert_error(cx, "def main(x: u8): u8 = x + 1.5u8\n", 1, 30, "cannot be u8");
    ck_assert_error(cx, "def main(x: u8): u8 = x + u8.pi\n", 1, 30, "`min` or `max`");
}
END_TEST

/* a type's name as a function is its conversion */
START_TEST(conversion_as_a_function) {
    uint8_t px[5] = {0, 1, 200, 255, 1};
    st_value args[1] = {array_of(ST_U8, 5, px, ar)};
    st_value r = eval_ok(cx, ar, "def main(img: [N]u8): [256]u32 =\n"
                                 "  reduce_by_index(replicate(256, 0u32), +, 0u32, map(i64, img), replicate(N, 1u32))\n",
                         args, 1);
    const uint32_t *h = r.u.a.data;
    ck_assert_uint_eq(h[0], 1);
    ck_assert_uint_eq(h[1], 2);
    ck_assert_uint_eq(h[200], 1);
    ck_assert_uint_eq(h[255], 1);
    ck_assert_error(cx, "def main(img: [N]u8) =\n  map(i64, zip(img, img))\n", 2, 7,
                    "map passes (u8, u8) to the conversion i64, which takes one number");
    ck_assert_error(cx, "def main(img: [N]u8) = reduce(u8, 0u8, img)\n", 1, 31,
                    "reduce passes 2 arguments to the conversion u8");
}
END_TEST

/* an input file of another dtype is refused, naming the file and the parameter */
START_TEST(input_of_another_dtype) {
    cli c;
    cli_open(&c, "smallint-dtype");
    int32_t data[3] = {1, 2, 3};
    uint16_t wide[3] = {1, 2, 3};
    const char *i4 = npy_of(&c, "i4", ST_I32, 3, data);
    const char *u2 = npy_of(&c, "u2", ST_U16, 3, wide);
    const char *prog = cli_example(&c, "image_histogram");
    char *out, *err;
    ck_assert_int_eq(cli_strata(&c, ARGS("eval", prog, "--input", arena_text(c.a, "img=%s", i4)), &out, &err), 1);
    ck_assert_has(err, arena_text(c.a, "%s: error: holds i32 values (dtype '<i4'), but `img` is [N]u8", i4));
    ck_assert_int_eq(cli_strata(&c, ARGS("run", prog, "--input", arena_text(c.a, "img=%s", u2)), &out, &err), 1);
    ck_assert_has(err, "holds u16 values (dtype '<u2'), but `img` is [N]u8");
    /* a scalar of a small type given as text that does not fit */
    const char *scalar = cli_file(&c, "scalar", "def main(x: u8): u8 = x + 1u8\n");
    ck_assert_int_eq(cli_strata(&c, ARGS("eval", scalar, "--input", "x=256"), &out, &err), 1);
    ck_assert_has(err, "256 does not fit in u8 (0 to 255)");
    ck_assert_int_eq(cli_strata(&c, ARGS("eval", scalar, "--input", "x=255"), &out, &err), 0);
    ck_assert_has(out, "u8 = 0");
    cli_close(&c);
}
END_TEST

/* the printer writes what the parser reads */
START_TEST(print_round_trip) {
    const char *src = "def main(x: u8, y: i16) =\n  (x + 7u8, y - -3i16, u8.max, i8.min, u16(x), i8(y))\n";
    const st_program *p = parse_ok(cx, src);
    st_buf b = {0};
    st_print_def(&p->defs[0], &b);
    const st_program *q = parse_ok(cx, b.data);
    st_buf c2 = {0};
    st_print_def(&q->defs[0], &c2);
    ck_assert_str_eq(b.data, c2.data);
    ck_assert_ptr_eq(p->defs[0].body, q->defs[0].body);
    st_buf_free(&b);
    st_buf_free(&c2);
}
END_TEST

int main(void) {
    Suite *s = suite_create("smallint");
    TCase *t = tcase_create("interp");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_loop_test(t, interpreter_wraps_like_c, 0, 4);
    tcase_add_test(t, constants_and_conversions);
    tcase_add_test(t, division_by_zero_is_an_error);
    tcase_add_test(t, print_round_trip);
    tcase_add_test(t, conversion_as_a_function);
    suite_add_tcase(s, t);
    TCase *e = tcase_create("errors");
    tcase_add_checked_fixture(e, setup, teardown);
    tcase_add_test(e, literals_that_do_not_fit);
    tcase_add_test(e, mixed_types_and_bad_suffixes);
    tcase_add_test(e, input_of_another_dtype);
    tcase_add_test(e, small_buckets_refuse_a_hardware_atomic);
    suite_add_tcase(s, e);
    TCase *d = tcase_create("device");
    tcase_add_checked_fixture(d, setup, teardown);
    tcase_set_timeout(d, 600);
    tcase_add_loop_test(d, device_wraps_like_c, 0, 4);
    tcase_add_test(d, npy_round_trip_through_eval);
    tcase_add_loop_test(d, image_histogram_equals_c, 0, 4);
    tcase_add_loop_test(d, small_buckets_equal_c, 0, 4);
    tcase_add_loop_test(d, small_scans_equal_c, 0, 4);
    tcase_add_loop_test(d, i8_reduce_equals_c, 0, 4);
    suite_add_tcase(s, d);
    return run_suite(s);
}
