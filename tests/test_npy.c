/* tests/test_npy.c — .npy reading and writing (ir/npy.c).
 *
 * numpy is not at hand, so the files read here are built byte by byte from
 * the format's definition: "\x93NUMPY", major, minor, the header length (2
 * bytes little-endian in 1.0, 4 in 2.0 and 3.0), a Python dict literal padded
 * with spaces and ended by '\n', then the data in C order. Every malformed
 * input is tried both from memory (st_npy_read_mem) and from a file
 * (st_npy_read), which reads in its own way. */
#include "harness.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>

static st_arena *arena;
static char dir[64];

/* The folder is made and removed by the runner's own process (an unchecked
 * fixture), not by the tests, which a failing check ends at once. */
static void make_dir(void) { scratch_make(dir, sizeof dir, "npy"); }
static void remove_dir(void) { scratch_remove(dir); }

static void setup(void) {
    arena = st_arena_new();
    ck_assert_ptr_nonnull(arena);
}

static void teardown(void) { st_arena_free(arena); }

/* ck_assert that the message mentions `part` */
#define ck_has(msg, part) \
    ck_assert_msg(strstr((msg), (part)) != NULL, "expected \"%s\" in \"%s\"", (part), (msg))

/* ---- files ---- */

/* A path in the test directory (one buffer per call, a few kept alive). */
static const char *path_in(const char *name) {
    static char paths[8][128];
    static int slot;
    char *p = paths[slot++ % 8];
    snprintf(p, sizeof paths[0], "%s/%s", dir, name);
    return p;
}

static const char *write_bytes(const char *name, const void *bytes, size_t len) {
    const char *p = path_in(name);
    FILE *f = fopen(p, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(bytes, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
    return p;
}

/* The whole file, malloc'ed (the caller frees it). */
static unsigned char *slurp(const char *p, size_t *len) {
    FILE *f = fopen(p, "rb");
    ck_assert_ptr_nonnull(f);
    static unsigned char tmp[1 << 16];
    *len = fread(tmp, 1, sizeof tmp, f);
    fclose(f);
    unsigned char *out = malloc(*len ? *len : 1);
    ck_assert_ptr_nonnull(out);
    memcpy(out, tmp, *len);
    return out;
}

/* ---- building .npy bytes by hand ---- */

typedef struct npy {
    unsigned char b[4096];
    size_t len;
} npy;

/* Version `major`.0, the header `dict` padded to a multiple of 64 as numpy
 * does, then `n` bytes of data. */
static npy build(int major, const char *dict, const void *data, size_t n) {
    npy out = {.len = 0};
    size_t pre = major == 1 ? 10 : 12;
    size_t text = strlen(dict) + 1;
    size_t hlen = (pre + text + 63) / 64 * 64 - pre;
    ck_assert_uint_le(pre + hlen + n, sizeof out.b);
    memcpy(out.b, "\x93NUMPY", 6);
    out.b[6] = (unsigned char)major;
    out.b[7] = 0;
    for (size_t i = 0; i < pre - 8; i++) out.b[8 + i] = (unsigned char)(hlen >> (8 * i));
    memcpy(out.b + pre, dict, text - 1);
    memset(out.b + pre + text - 1, ' ', hlen - text);
    out.b[pre + hlen - 1] = '\n';
    if (n) memcpy(out.b + pre + hlen, data, n);
    out.len = pre + hlen + n;
    return out;
}

/* A format 1.0 header for dtype `descr` and shape text `shape` ("(3,)"). */
static npy build1(const char *descr, const char *shape, const void *data, size_t n) {
    char dict[512];
    snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr,
             shape);
    return build(1, dict, data, n);
}

/* ---- reading ---- */

static st_value read_mem_ok(const npy *f) {
    st_value v;
    st_err err = {0};
    ck_assert_msg(st_npy_read_mem(arena, "mem.npy", f->b, f->len, &v, &err), "read_mem: %s",
                  err.message);
    return v;
}

static st_value read_file_ok(const char *p) {
    st_value v;
    st_err err = {0};
    ck_assert_msg(st_npy_read(arena, p, &v, &err), "read %s: %s", p, err.message);
    return v;
}

static void same_value(const st_value *a, const st_value *b);

/* Both readers accept the bytes, and agree. */
static st_value read_ok(const npy *f) {
    st_value m = read_mem_ok(f);
    st_value v = read_file_ok(write_bytes("ok.npy", f->b, f->len));
    same_value(&m, &v);
    return m;
}

/* Both readers refuse the bytes with a message mentioning `part`, located
 * at the file (line 0) and not crashing on the way. */
static void read_fails(const void *bytes, size_t len, const char *part) {
    st_value v;
    st_err err = {0};
    ck_assert_msg(!st_npy_read_mem(arena, "mem.npy", bytes, len, &v, &err),
                  "read_mem accepted it (want \"%s\")", part);
    ck_has(err.message, part);
    ck_assert_str_eq(err.loc.file, "mem.npy");
    ck_assert_int_eq(err.loc.line, 0);

    const char *p = write_bytes("bad.npy", bytes, len);
    memset(&err, 0, sizeof err);
    ck_assert_msg(!st_npy_read(arena, p, &v, &err), "read accepted it (want \"%s\")", part);
    ck_has(err.message, part);
    ck_assert_str_eq(err.loc.file, p);
}

static void npy_fails(const npy *f, const char *part) { read_fails(f->b, f->len, part); }

/* ---- values ---- */

static size_t value_bytes(const st_value *v) {
    if (v->kind == ST_VALUE_SCALAR) return st_scalar_size(v->scalar);
    size_t count = 1;
    for (uint32_t i = 0; i < v->n; i++) count *= (size_t)v->u.a.dims[i];
    return count * st_scalar_size(v->scalar);
}

static void same_value(const st_value *a, const st_value *b) {
    ck_assert_int_eq(a->kind, b->kind);
    ck_assert_int_eq(a->scalar, b->scalar);
    if (a->kind == ST_VALUE_SCALAR) {
        /* compare as stored in a file: bools as one byte */
        unsigned char x[8] = {0}, y[8] = {0};
        memcpy(x, &a->u.s, st_scalar_size(a->scalar));
        memcpy(y, &b->u.s, st_scalar_size(b->scalar));
        if (a->scalar == ST_BOOL) x[0] = a->u.s.b, y[0] = b->u.s.b;
        ck_assert_mem_eq(x, y, sizeof x);
        return;
    }
    ck_assert_uint_eq(a->n, b->n);
    for (uint32_t i = 0; i < a->n; i++) ck_assert_int_eq(a->u.a.dims[i], b->u.a.dims[i]);
    if (value_bytes(a)) ck_assert_mem_eq(a->u.a.data, b->u.a.data, value_bytes(a));
}

static st_value array2(st_scalar_kind k, int64_t rows, int64_t cols, void *data) {
    st_value v = array_of(k, rows, data, arena);
    int64_t *dims = st_arena_alloc(arena, 2 * sizeof *dims);
    dims[0] = rows;
    dims[1] = cols;
    v.n = 2;
    v.u.a.dims = dims;
    return v;
}

/* Write v, check the layout every written file must have (header `dict`,
 * space padding, '\n', data on a multiple of 64), read it back through both
 * readers and compare. */
static void round_trip(const char *name, const st_value *v, const char *dict) {
    const char *p = path_in(name);
    st_err err = {0};
    ck_assert_msg(st_npy_write(p, v, &err), "write: %s", err.message);
    size_t len;
    unsigned char *bytes = slurp(p, &len);
    ck_assert_uint_ge(len, 10);
    ck_assert_mem_eq(bytes, "\x93NUMPY\x01\x00", 8);
    size_t hlen = (size_t)bytes[8] | (size_t)bytes[9] << 8;
    ck_assert_uint_eq((10 + hlen) % 64, 0);
    ck_assert_uint_eq(len, 10 + hlen + value_bytes(v));
    ck_assert_int_eq(bytes[10 + hlen - 1], '\n');
    size_t n = strlen(dict);
    ck_assert_msg(n < hlen && memcmp(bytes + 10, dict, n) == 0, "header is \"%.*s\", want \"%s\"",
                  (int)hlen, (const char *)bytes + 10, dict);
    for (size_t i = 10 + n; i < 10 + hlen - 1; i++) ck_assert_int_eq(bytes[i], ' ');

    st_value back = read_file_ok(p);
    same_value(v, &back);
    st_value mem;
    ck_assert_msg(st_npy_read_mem(arena, p, bytes, len, &mem, &err), "%s", err.message);
    same_value(v, &mem);
    free(bytes);
}

/* ------------------------------------------------------------------------ */
/* Writing and reading back                                                 */
/* ------------------------------------------------------------------------ */

START_TEST(dtype_names) {
    ck_assert_str_eq(st_npy_dtype(ST_BOOL), "|b1");
    ck_assert_str_eq(st_npy_dtype(ST_I32), "<i4");
    ck_assert_str_eq(st_npy_dtype(ST_U32), "<u4");
    ck_assert_str_eq(st_npy_dtype(ST_I64), "<i8");
    ck_assert_str_eq(st_npy_dtype(ST_U64), "<u8");
    ck_assert_str_eq(st_npy_dtype(ST_F32), "<f4");
    ck_assert_str_eq(st_npy_dtype(ST_F64), "<f8");
}
END_TEST

START_TEST(exact_header_bytes) {
    float xs[3] = {1.0f, 2.0f, 3.0f};
    st_value v = array_of(ST_F32, 3, xs, arena);
    const char *p = path_in("f.npy");
    st_err err = {0};
    ck_assert_msg(st_npy_write(p, &v, &err), "%s", err.message);
    size_t len;
    unsigned char *b = slurp(p, &len);
    /* 10 + 57 header characters + '\n' = 68, padded to 128; then 12 bytes */
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
    ck_assert_uint_eq(strlen(dict), 57);
    ck_assert_uint_eq(len, 140);
    ck_assert_mem_eq(b, "\x93NUMPY\x01\x00\x76\x00", 10); /* header length 118 */
    ck_assert_mem_eq(b + 10, dict, 57);
    for (int i = 67; i < 127; i++) ck_assert_int_eq(b[i], ' ');
    ck_assert_int_eq(b[127], '\n');
    /* 1.0f, 2.0f, 3.0f little-endian */
    static const unsigned char data[12] = {0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40};
    ck_assert_mem_eq(b + 128, data, 12);
    free(b);
}
END_TEST

START_TEST(rank1_every_dtype) {
    bool b[] = {true, false, true, true};
    int32_t i32[] = {-1, 0, INT32_MAX, INT32_MIN};
    uint32_t u32[] = {0, UINT32_MAX, 7};
    int64_t i64[] = {INT64_MIN, -5, INT64_MAX};
    uint64_t u64[] = {UINT64_MAX, 0, 1, UINT64_C(1) << 63, 42};
    float f32[] = {1.5f, -0.0f, INFINITY, NAN, 1e-45f};
    double f64[] = {0.1, -INFINITY, NAN, 1e308, 5e-324, -0.0};
    int8_t i8[] = {INT8_MIN, -1, 0, INT8_MAX};
    uint8_t u8[] = {0, 1, 200, UINT8_MAX};
    int16_t i16[] = {INT16_MIN, -300, INT16_MAX};
    uint16_t u16[] = {UINT16_MAX, 0, 40000};
    st_value vs[] = {
        array_of(ST_BOOL, 4, b, arena), array_of(ST_I32, 4, i32, arena),
        array_of(ST_U32, 3, u32, arena), array_of(ST_I64, 3, i64, arena),
        array_of(ST_U64, 5, u64, arena), array_of(ST_F32, 5, f32, arena),
        array_of(ST_F64, 6, f64, arena), array_of(ST_I8, 4, i8, arena),
        array_of(ST_U8, 4, u8, arena), array_of(ST_I16, 3, i16, arena),
        array_of(ST_U16, 3, u16, arena),
    };
    const char *dicts[] = {
        "{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }",
        "{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }",
        "{'descr': '<u4', 'fortran_order': False, 'shape': (3,), }",
        "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }",
        "{'descr': '<u8', 'fortran_order': False, 'shape': (5,), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (6,), }",
        "{'descr': '|i1', 'fortran_order': False, 'shape': (4,), }",
        "{'descr': '|u1', 'fortran_order': False, 'shape': (4,), }",
        "{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }",
        "{'descr': '<u2', 'fortran_order': False, 'shape': (3,), }",
    };
    for (int k = 0; k < ST_SCALAR_KIND_COUNT; k++) {
        char name[32];
        snprintf(name, sizeof name, "r1_%d.npy", k);
        round_trip(name, &vs[k], dicts[k]);
    }
}
END_TEST

START_TEST(rank0_every_dtype) {
    st_scalar s[ST_SCALAR_KIND_COUNT];
    memset(s, 0, sizeof s);
    s[ST_BOOL].b = true;
    s[ST_I32].i32 = -123456;
    s[ST_U32].u32 = 4000000000u;
    s[ST_I64].i64 = -(INT64_C(1) << 40) - 3;
    s[ST_U64].u64 = UINT64_MAX - 1;
    s[ST_F32].f32 = -2.5f;
    s[ST_F64].f64 = 1.0 / 3.0;
    s[ST_I8].i8 = -128;
    s[ST_U8].u8 = 255;
    s[ST_I16].i16 = -12345;
    s[ST_U16].u16 = 65000;
    for (int k = 0; k < ST_SCALAR_KIND_COUNT; k++) {
        st_value v = scalar_of((st_scalar_kind)k, s[k]);
        char name[32], dict[128];
        snprintf(name, sizeof name, "r0_%d.npy", k);
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (), }",
                 st_npy_dtype((st_scalar_kind)k));
        round_trip(name, &v, dict);
    }
}
END_TEST

START_TEST(rank0_false) {
    st_value v = scalar_of(ST_BOOL, (st_scalar){.b = false});
    round_trip("false.npy", &v, "{'descr': '|b1', 'fortran_order': False, 'shape': (), }");
}
END_TEST

START_TEST(rank2_every_dtype) {
    /* one 2x3 pattern of bytes per dtype: distinct elements, row-major */
    static unsigned char data[ST_SCALAR_KIND_COUNT][6 * 8];
    for (int k = 0; k < ST_SCALAR_KIND_COUNT; k++) {
        size_t size = st_scalar_size((st_scalar_kind)k);
        for (size_t i = 0; i < 6 * size; i++) data[k][i] = (unsigned char)(i * 37 + k);
        if (k == ST_BOOL)
            for (size_t i = 0; i < 6; i++) data[k][i] = i % 2;
        st_value v = array2((st_scalar_kind)k, 2, 3, data[k]);
        char name[32], dict[128];
        snprintf(name, sizeof name, "r2_%d.npy", k);
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (2, 3), }",
                 st_npy_dtype((st_scalar_kind)k));
        round_trip(name, &v, dict);
    }
}
END_TEST

START_TEST(empty_shapes) {
    float none[1] = {0};
    st_value v = array_of(ST_F32, 0, none, arena);
    round_trip("empty.npy", &v, "{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }");
    /* long dimensions make headers of other lengths; the data still starts at 64k */
    st_value w = array2(ST_I64, 0, INT64_C(123456789012345), none);
    round_trip("wide.npy", &w,
               "{'descr': '<i8', 'fortran_order': False, 'shape': (0, 123456789012345), }");
    st_value t = array2(ST_F64, 1234567, 0, none);
    round_trip("tall.npy", &t, "{'descr': '<f8', 'fortran_order': False, 'shape': (1234567, 0), }");
}
END_TEST

START_TEST(write_errors) {
    float xs[1] = {1};
    st_value v = array_of(ST_F32, 1, xs, arena);
    st_err err = {0};
    char p[128];
    snprintf(p, sizeof p, "%s/no/such/dir/x.npy", dir);
    ck_assert(!st_npy_write(p, &v, &err));
    ck_has(err.message, "No such file or directory");
    ck_assert_str_eq(err.loc.file, p);
    /* a tuple is several files: the caller's mistake, not the user's */
    st_value items[2] = {v, v};
    st_value t = {.kind = ST_VALUE_TUPLE, .n = 2, .u.items = items};
    memset(&err, 0, sizeof err);
    ck_assert(!st_npy_write(path_in("tuple.npy"), &t, &err));
    ck_assert_int_eq(err.kind, ST_ERR_INTERNAL);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Reading hand-made files                                                  */
/* ------------------------------------------------------------------------ */

START_TEST(read_version_2_and_3) {
    int32_t xs[2] = {5, -6};
    const char *dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }";
    for (int major = 2; major <= 3; major++) {
        npy f = build(major, dict, xs, sizeof xs);
        ck_assert_uint_eq(f.len % 64, 8); /* 12-byte prelude, so the pad differs from 1.0 */
        st_value v = read_ok(&f);
        ck_assert_int_eq(v.kind, ST_VALUE_ARRAY);
        ck_assert_int_eq(v.scalar, ST_I32);
        ck_assert_uint_eq(v.n, 1);
        ck_assert_int_eq(v.u.a.dims[0], 2);
        ck_assert_int_eq(((int32_t *)v.u.a.data)[0], 5);
        ck_assert_int_eq(((int32_t *)v.u.a.data)[1], -6);
    }
}
END_TEST

START_TEST(read_bools_normalised) {
    unsigned char bytes[4] = {2, 0, 255, 1};
    npy f = build1("|b1", "(4,)", bytes, 4);
    st_value v = read_ok(&f);
    ck_assert_int_eq(v.scalar, ST_BOOL);
    static const unsigned char want[4] = {1, 0, 1, 1};
    ck_assert_mem_eq(v.u.a.data, want, 4);
    /* a scalar bool stored as 2 */
    npy s = build1("|b1", "()", bytes, 1);
    st_value t = read_ok(&s);
    ck_assert_int_eq(t.kind, ST_VALUE_SCALAR);
    ck_assert(t.u.s.b);
    ck_assert_uint_eq(t.u.s.bits, 1);
    /* numpy may write bools as '<b1' or 'b1' too */
    npy l = build1("<b1", "(4,)", bytes, 4);
    ck_assert_mem_eq(read_ok(&l).u.a.data, want, 4);
    npy bare = build1("b1", "(4,)", bytes, 4);
    ck_assert_mem_eq(read_ok(&bare).u.a.data, want, 4);
}
END_TEST

START_TEST(read_empty_and_scalars) {
    npy f = build1("<f8", "(0,)", NULL, 0);
    st_value v = read_ok(&f);
    ck_assert_int_eq(v.kind, ST_VALUE_ARRAY);
    ck_assert_uint_eq(v.n, 1);
    ck_assert_int_eq(v.u.a.dims[0], 0);
    /* (0, 5) has no data either */
    npy g = build1("<i4", "(0, 5)", NULL, 0);
    st_value w = read_ok(&g);
    ck_assert_uint_eq(w.n, 2);
    ck_assert_int_eq(w.u.a.dims[1], 5);
    /* a scalar: shape () holds one element */
    int64_t x = -77;
    npy s = build1("<i8", "()", &x, sizeof x);
    st_value t = read_ok(&s);
    ck_assert_int_eq(t.kind, ST_VALUE_SCALAR);
    ck_assert_int_eq(t.u.s.i64, -77);
    double d = 2.25;
    npy sd = build1("<f8", "()", &d, sizeof d);
    ck_assert_double_eq(read_ok(&sd).u.s.f64, 2.25);
}
END_TEST

START_TEST(read_header_variants) {
    float xs[3] = {1, 2, 3};
    /* keys in another order, double quotes, no trailing comma, a Python 2 long */
    const char *dicts[] = {
        "{'shape': (3,), 'fortran_order': False, 'descr': '<f4'}",
        "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (3,)}",
        "{'descr':'<f4','fortran_order':False,'shape':(3,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (3L,), }",
        "{'descr': '<f4', 'shape': (3,), }", /* no fortran_order: C order */
    };
    for (size_t i = 0; i < sizeof dicts / sizeof *dicts; i++) {
        npy f = build(1, dicts[i], xs, sizeof xs);
        st_value v = read_ok(&f);
        ck_assert_int_eq(v.u.a.dims[0], 3);
        ck_assert_mem_eq(v.u.a.data, xs, sizeof xs);
    }
    /* Fortran order is harmless for one dimension */
    npy f = build(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (3,), }", xs, sizeof xs);
    ck_assert_mem_eq(read_ok(&f).u.a.data, xs, sizeof xs);
    /* an unpadded header (older writers) is still a header */
    npy u = {.len = 0};
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }\n";
    size_t n = strlen(dict);
    memcpy(u.b, "\x93NUMPY\x01\x00", 8);
    u.b[8] = (unsigned char)n;
    memcpy(u.b + 10, dict, n);
    memcpy(u.b + 10 + n, xs, sizeof xs);
    u.len = 10 + n + sizeof xs;
    ck_assert_mem_eq(read_ok(&u).u.a.data, xs, sizeof xs);
}
END_TEST

START_TEST(read_rank3) {
    uint32_t xs[24];
    for (int i = 0; i < 24; i++) xs[i] = (uint32_t)i * 1000003u;
    npy f = build1("<u4", "(2, 3, 4)", xs, sizeof xs);
    st_value v = read_ok(&f);
    ck_assert_uint_eq(v.n, 3);
    ck_assert_int_eq(v.u.a.dims[0], 2);
    ck_assert_int_eq(v.u.a.dims[1], 3);
    ck_assert_int_eq(v.u.a.dims[2], 4);
    ck_assert_mem_eq(v.u.a.data, xs, sizeof xs);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

START_TEST(missing_file) {
    st_value v;
    st_err err = {0};
    char p[128];
    snprintf(p, sizeof p, "%s/absent.npy", dir);
    ck_assert(!st_npy_read(arena, p, &v, &err));
    ck_has(err.message, "No such file or directory");
    ck_assert_str_eq(err.loc.file, p);
    ck_assert_int_eq(err.loc.line, 0);
    ck_assert_int_eq(err.kind, ST_ERR_USER);
}
END_TEST

START_TEST(directory_not_file) {
    st_value v;
    st_err err = {0};
    ck_assert(!st_npy_read(arena, dir, &v, &err));
    ck_assert_msg(err.message[0] != 0, "no message");
    ck_has(err.message, "directory");
}
END_TEST

START_TEST(empty_file) { read_fails("", 0, "not a valid .npy file"); }
END_TEST

START_TEST(wrong_magic) {
    npy f = build1("<f4", "(0,)", NULL, 0);
    f.b[5] = 'Z';
    npy_fails(&f, "magic");
    f.b[5] = 'Y';
    f.b[0] = 0x94;
    npy_fails(&f, "magic");
    read_fails("NUMPY\x01\x00\x10\x00", 9, "magic");
    /* a text file */
    const char *csv = "1.0,2.0,3.0\n4.0,5.0,6.0\n";
    read_fails(csv, strlen(csv), "magic");
}
END_TEST

START_TEST(binary_garbage) {
    unsigned char junk[300];
    uint64_t x = 0x9e3779b97f4a7c15u;
    for (size_t i = 0; i < sizeof junk; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        junk[i] = (unsigned char)x;
    }
    read_fails(junk, sizeof junk, "not a valid .npy file");
    /* garbage behind a good prelude: the header says nothing we know */
    memcpy(junk, "\x93NUMPY\x01\x00\x80\x00", 10);
    read_fails(junk, sizeof junk, "descr");
    /* and with a 4-byte length that points past the end */
    memcpy(junk, "\x93NUMPY\x02\x00\xff\xff\x00\x00", 12);
    read_fails(junk, sizeof junk, "cut short");
}
END_TEST

START_TEST(unknown_version) {
    npy f = build1("<f4", "(0,)", NULL, 0);
    f.b[6] = 4;
    npy_fails(&f, "version 4.0");
    f.b[6] = 0;
    npy_fails(&f, "version");
}
END_TEST

START_TEST(truncated_header) {
    npy f = build1("<f4", "(3,)", "\0\0\0\0\0\0\0\0\0\0\0\0", 12);
    read_fails(f.b, 40, "cut short");  /* header length 118, 30 bytes of it */
    read_fails(f.b, 127, "cut short"); /* all but the final '\n' */
    read_fails(f.b, 9, "not a valid .npy file"); /* not even the length */
    npy g = build(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }", NULL, 0);
    read_fails(g.b, 11, "cut short"); /* a 2.0 prelude needs 12 bytes */
    read_fails(g.b, 12, "cut short");
    read_fails(g.b, 60, "cut short");
    /* an absurd header length */
    g.b[11] = 0x7f;
    npy_fails(&g, "implausibly long");
}
END_TEST

START_TEST(truncated_data) {
    float xs[3] = {1, 2, 3};
    npy f = build1("<f4", "(3,)", xs, sizeof xs);
    f.len -= 4;
    npy_fails(&f, "truncated");
    npy_fails(&f, "12 bytes");
    f.len -= 8;
    npy_fails(&f, "truncated"); /* no data at all */
    int64_t x = 1;
    npy s = build1("<i8", "()", &x, 5);
    npy_fails(&s, "truncated");
    npy r2 = build1("<f8", "(2, 2)", xs, 12);
    npy_fails(&r2, "needs 32 bytes");
}
END_TEST

/* A header that promises far more than the file holds is "truncated", and is
 * found out before any buffer of the promised size is allocated (a 4 EiB
 * malloc fails, or aborts under AddressSanitizer). */
START_TEST(huge_shape_small_file) {
    npy f = build1("<f4", "(1152921504606846976,)", "abcd", 4);
    npy_fails(&f, "truncated");
}
END_TEST

START_TEST(trailing_bytes) {
    float xs[4] = {1, 2, 3, 4};
    npy f = build1("<f4", "(3,)", xs, sizeof xs);
    npy_fails(&f, "after the data");
    npy s = build1("<i4", "()", xs, 8);
    npy_fails(&s, "after the data");
    npy e = build1("<i4", "(0,)", xs, 1);
    npy_fails(&e, "after the data");
}
END_TEST

START_TEST(big_endian) {
    float xs[3] = {1, 2, 3};
    npy f = build1(">f4", "(3,)", xs, sizeof xs);
    npy_fails(&f, "big-endian");
    npy_fails(&f, "'>f4'");
    npy g = build1(">i8", "(0,)", NULL, 0);
    npy_fails(&g, "big-endian");
    npy h = build1(">i2", "(1,)", xs, 2);
    npy_fails(&h, "big-endian");
}
END_TEST

/* one byte has no order: '>u1' and '<i1' read as '|u1' and '|i1' */
START_TEST(bytes_any_order) {
    unsigned char xs[3] = {1, 200, 255};
    npy f = build1(">u1", "(3,)", xs, 3);
    st_value v = read_ok(&f);
    ck_assert_int_eq(v.scalar, ST_U8);
    ck_assert_mem_eq(v.u.a.data, xs, 3);
    npy g = build1("<i1", "(3,)", xs, 3);
    st_value w = read_ok(&g);
    ck_assert_int_eq(w.scalar, ST_I8);
    ck_assert_int_eq(((const int8_t *)w.u.a.data)[1], -56);
}
END_TEST

START_TEST(fortran_order_2d) {
    float xs[6] = {1, 2, 3, 4, 5, 6};
    npy f = build(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", xs, sizeof xs);
    npy_fails(&f, "Fortran order");
    npy g = build(1, "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2, 3), }", xs, sizeof xs);
    npy_fails(&g, "fortran_order");
}
END_TEST

START_TEST(unsupported_dtypes) {
    unsigned char zeros[16] = {0};
    npy f2 = build1("<f2", "(2,)", zeros, 4);
    npy_fails(&f2, "float16");
    npy_fails(&f2, "'<f2'");
    npy f16 = build1("<f16", "(1,)", zeros, 16);
    npy_fails(&f16, "unsupported");
    npy c8 = build1("<c8", "(1,)", zeros, 8);
    npy_fails(&c8, "complex64");
    npy str = build1("<U5", "(1,)", zeros, 16);
    npy_fails(&str, "unsupported");
    npy longer = build1("<U1000000", "(0,)", NULL, 0);
    npy_fails(&longer, "descr");
    /* every unsupported message lists what is read */
    npy_fails(&f2, "float32");
    /* a structured dtype is a list, not a string */
    npy rec = build(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", zeros,
                    4);
    npy_fails(&rec, "descr");
}
END_TEST

START_TEST(bad_headers) {
    npy a = build(1, "{'fortran_order': False, 'shape': (1,), }", "abcd", 4);
    npy_fails(&a, "descr");
    npy b = build(1, "{'descr': '<f4', 'fortran_order': False, }", "abcd", 4);
    npy_fails(&b, "shape");
    npy c = build1("<f4", "(1, x)", "abcd", 4);
    npy_fails(&c, "whole numbers");
    npy d = build1("<f4", "(-1,)", "abcd", 4);
    npy_fails(&d, "whole numbers");
    npy e = build1("<f4", "(1", "abcd", 4);
    npy_fails(&e, "whole numbers");
    npy g = build1("<f4", "[1]", "abcd", 4);
    npy_fails(&g, "shape");
    npy h = build1("<f4", "(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)", "abcd", 4);
    npy_fails(&h, "too many dimensions");
    /* a NUL inside the header ends the text the keys are looked for in */
    npy n = build1("<f4", "(1,)", "abcd", 4);
    n.b[11] = 0;
    npy_fails(&n, "descr");
}
END_TEST

/* Issue 19, item 16: numpy keeps the last of a repeated key and strata
 * kept the first, so the two read other arrays from one file: refused,
 * naming the key, in either quoting. */
START_TEST(duplicate_keys) {
    float xs[2] = {1, 2};
    npy shape = build(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'shape': (2,), }", xs, sizeof xs);
    npy_fails(&shape, "'shape' more than once");
    npy descr = build(1, "{'descr': '<f4', \"descr\": '<i4', 'fortran_order': False, 'shape': (2,), }", xs, sizeof xs);
    npy_fails(&descr, "'descr' more than once");
    npy order = build(1, "{'descr': '<f4', 'fortran_order': False, 'fortran_order' : True, 'shape': (2,), }", xs,
                      sizeof xs);
    npy_fails(&order, "'fortran_order' more than once");
    /* a key's name inside a value is no second key */
    npy fine = build(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'note': 'shape'}", xs, sizeof xs);
    ck_assert_int_eq(read_ok(&fine).u.a.dims[0], 2);
}
END_TEST

START_TEST(shape_overflow) {
    /* a dimension that is no int64 */
    npy a = build1("<f4", "(99999999999999999999,)", NULL, 0);
    npy_fails(&a, "too large");
    npy a2 = build1("<f4", "(9223372036854775808,)", NULL, 0);
    npy_fails(&a2, "too large");
    /* dimensions whose product is no int64: 2^32 · 2^32 */
    npy b = build1("<i4", "(4294967296, 4294967296)", NULL, 0);
    npy_fails(&b, "too large");
    /* a count that fits but whose bytes do not: 2^61 · 8 */
    npy c = build1("<f8", "(2305843009213693952,)", NULL, 0);
    npy_fails(&c, "too large");
    /* a zero dimension makes the others harmless */
    npy d = build1("<f8", "(0, 4611686018427387904)", NULL, 0);
    ck_assert_int_eq(read_ok(&d).u.a.dims[1], INT64_C(1) << 62);
}
END_TEST

int main(void) {
    Suite *s = suite_create("npy");
    struct {
        const char *name;
        const TTest *tests[24];
    } groups[] = {
        {"write",
         {dtype_names, exact_header_bytes, rank1_every_dtype, rank0_every_dtype, rank0_false,
          rank2_every_dtype, empty_shapes, write_errors}},
        {"read",
         {read_version_2_and_3, read_bools_normalised, read_empty_and_scalars,
          read_header_variants, read_rank3}},
        {"errors",
         {missing_file, directory_not_file, empty_file, wrong_magic, binary_garbage,
          unknown_version, truncated_header, truncated_data, huge_shape_small_file,
          trailing_bytes, big_endian, bytes_any_order, fortran_order_2d, unsupported_dtypes, bad_headers,
          shape_overflow, duplicate_keys}},
    };
    for (size_t g = 0; g < sizeof groups / sizeof *groups; g++) {
        TCase *tc = tcase_create(groups[g].name);
        tcase_add_unchecked_fixture(tc, make_dir, remove_dir);
        tcase_add_checked_fixture(tc, setup, teardown);
        for (size_t i = 0; i < 24 && groups[g].tests[i]; i++)
            tcase_add_test(tc, groups[g].tests[i]);
        suite_add_tcase(s, tc);
    }
    return run_suite(s);
}
