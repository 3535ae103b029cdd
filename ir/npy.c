/* ir/npy.c — NumPy's .npy format: one array per file.
 *
 * A file is the magic "\x93NUMPY", a version (1.0: 2-byte header length;
 * 2.0 and 3.0: 4-byte), a header that is a Python dict literal
 * {'descr': '<f4', 'fortran_order': False, 'shape': (1000,), } padded to 64
 * bytes with a final newline, then the data in C order. We read the dtypes
 * strata has (b1 i4 u4 i8 u8 f4 f8, little-endian) and write version 1.0. */
#include "scalar_ops.h"
#include "value.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct {
    const char *code;
    st_scalar_kind kind;
} dtypes[] = {{"b1", ST_BOOL}, {"i4", ST_I32}, {"u4", ST_U32}, {"i8", ST_I64},
              {"u8", ST_U64},  {"f4", ST_F32}, {"f8", ST_F64}, {"i1", ST_I8},
              {"u1", ST_U8},   {"i2", ST_I16}, {"u2", ST_U16}};

const char *st_npy_dtype(st_scalar_kind k) {
    static const char *const names[ST_SCALAR_KIND_COUNT] = {"|b1", "<i4", "<u4", "<i8", "<u8", "<f4",
                                                             "<f8", "|i1", "|u1", "<i2", "<u2"};
    return names[k];
}

/* numpy's name for a dtype code, for messages */
static const char *numpy_name(const char *code) {
    static const struct { const char *code, *name; } names[] = {
        {"b1", "bool"}, {"i1", "int8"}, {"u1", "uint8"}, {"i2", "int16"}, {"u2", "uint16"},
        {"i4", "int32"}, {"u4", "uint32"}, {"i8", "int64"}, {"u8", "uint64"}, {"f2", "float16"},
        {"f4", "float32"}, {"f8", "float64"}, {"c8", "complex64"}, {"c16", "complex128"}};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(names[i].code, code)) return names[i].name;
    return NULL;
}

typedef struct header {
    st_scalar_kind kind;
    uint32_t rank;
    int64_t dims[ST_MAX_RANK];
    size_t data_offset;
} header;

static bool bad(st_err *err, const char *what, const char *why) {
    return st_fail(err, (st_loc){what, 0, 0}, "not a valid .npy file: %s", why);
}

/* The value of 'key' in the header dict: a pointer just after "'key':". */
static const char *find_key(const char *h, const char *key) {
    char pattern[32];
    snprintf(pattern, sizeof pattern, "'%s'", key);
    const char *p = strstr(h, pattern);
    if (!p) {
        snprintf(pattern, sizeof pattern, "\"%s\"", key);
        p = strstr(h, pattern);
    }
    if (!p) return NULL;
    p += strlen(pattern);
    while (*p == ' ') p++;
    if (*p != ':') return NULL;
    p++;
    while (*p == ' ') p++;
    return p;
}

/* Whether 'key' (or "key") is a key of the header dict more than once:
 * numpy keeps the last of a repeated key, and a reader keeping the first
 * would read another array than numpy does, so such a header is refused. */
static bool repeated_key(const char *h, const char *key) {
    int seen = 0;
    for (int quote = 0; quote < 2; quote++) {
        char pattern[32];
        snprintf(pattern, sizeof pattern, quote ? "\"%s\"" : "'%s'", key);
        for (const char *p = strstr(h, pattern); p; p = strstr(p + 1, pattern)) {
            const char *q = p + strlen(pattern);
            while (*q == ' ') q++;
            seen += *q == ':';
        }
    }
    return seen > 1;
}

static bool parse_header(const char *what, const unsigned char *bytes, size_t len, header *h,
                         st_err *err) {
    if (len < 10 || memcmp(bytes, "\x93NUMPY", 6) != 0)
        return bad(err, what, "it does not start with the .npy magic \\x93NUMPY");
    unsigned major = bytes[6];
    size_t hlen, start;
    if (major == 1) {
        hlen = (size_t)bytes[8] | (size_t)bytes[9] << 8;
        start = 10;
    } else if (major == 2 || major == 3) {
        if (len < 12) return bad(err, what, "the header is cut short");
        hlen = (size_t)bytes[8] | (size_t)bytes[9] << 8 | (size_t)bytes[10] << 16 | (size_t)bytes[11] << 24;
        start = 12;
    } else {
        char why[64];
        snprintf(why, sizeof why, "format version %u.%u is not one strata reads (1.0, 2.0, 3.0)", major, bytes[7]);
        return bad(err, what, why);
    }
    if (hlen > 1 << 20) return bad(err, what, "the header is implausibly long");
    if (len < start + hlen) return bad(err, what, "the header is cut short");
    char *text = malloc(hlen + 1);
    if (!text) return st_fail_internal(err, "out of memory");
    memcpy(text, bytes + start, hlen);
    text[hlen] = 0;
    bool ok = false;
    const char *p;
    char code[8] = "", order = 0;
    static const char *const keys[] = {"descr", "fortran_order", "shape"};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
        if (repeated_key(text, keys[k])) {
            st_fail(err, (st_loc){what, 0, 0}, "not a valid .npy file: the header gives '%s' more than once", keys[k]);
            goto done;
        }
    /* descr */
    if (!(p = find_key(text, "descr")) || (*p != '\'' && *p != '"')) {
        bad(err, what, "the header has no 'descr'");
        goto done;
    }
    {
        char quote = *p++;
        size_t n = 0;
        order = *p;
        if (order == '<' || order == '>' || order == '|' || order == '=') p++;
        else order = '|';
        while (*p && *p != quote && n + 1 < sizeof code) code[n++] = *p++;
        code[n] = 0;
        if (*p != quote) {
            bad(err, what, "the header's 'descr' is not a simple dtype");
            goto done;
        }
    }
    {
        bool known = false;
        for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++)
            if (!strcmp(dtypes[i].code, code)) {
                h->kind = dtypes[i].kind;
                known = true;
            }
        if (!known) {
            const char *name = numpy_name(code);
            st_fail(err, (st_loc){what, 0, 0}, "holds %s values (dtype '%c%s'); strata reads bool, int8, uint8, int16, uint16, int32, uint32, int64, uint64, float32 and float64",
                    name ? name : "unsupported", order, code);
            goto done;
        }
        if (order == '>' && st_scalar_size(h->kind) > 1) { /* one byte has no order */
            st_fail(err, (st_loc){what, 0, 0}, "is big-endian (dtype '>%s'); save it little-endian, e.g. with arr.astype('<%s')", code, code);
            goto done;
        }
    }
    /* fortran_order */
    bool fortran = false;
    if ((p = find_key(text, "fortran_order"))) {
        if (!strncmp(p, "True", 4)) fortran = true;
        else if (strncmp(p, "False", 5)) {
            bad(err, what, "the header's 'fortran_order' is neither True nor False");
            goto done;
        }
    }
    /* shape */
    if (!(p = find_key(text, "shape")) || *p != '(') {
        bad(err, what, "the header has no 'shape'");
        goto done;
    }
    p++;
    h->rank = 0;
    for (;;) {
        while (*p == ' ') p++;
        if (*p == ')') break;
        if (*p < '0' || *p > '9') {
            bad(err, what, "the header's 'shape' is not a tuple of whole numbers");
            goto done;
        }
        int64_t d = 0;
        while (*p >= '0' && *p <= '9') {
            if (d > (INT64_MAX - (*p - '0')) / 10) {
                bad(err, what, "a dimension in 'shape' is too large");
                goto done;
            }
            d = d * 10 + (*p++ - '0');
        }
        if (*p == 'L') p++; /* Python 2 longs */
        if (h->rank == ST_MAX_RANK) {
            bad(err, what, "the array has too many dimensions");
            goto done;
        }
        h->dims[h->rank++] = d;
        while (*p == ' ') p++;
        if (*p == ',') p++;
        else if (*p != ')') {
            bad(err, what, "the header's 'shape' is not a tuple of whole numbers");
            goto done;
        }
    }
    if (fortran && h->rank > 1) {
        st_fail(err, (st_loc){what, 0, 0}, "is stored in Fortran order; save it in C order (np.ascontiguousarray)");
        goto done;
    }
    h->data_offset = start + hlen;
    ok = true;
done:
    free(text);
    return ok;
}

enum { NPY_DATA_MAX_GIB = 16 };
#define NPY_DATA_MAX ((size_t)NPY_DATA_MAX_GIB << 30)

/* The bytes of data the header's shape describes. */
static bool data_bytes(const char *what, const header *h, size_t *bytes, st_err *err) {
    size_t count = 1;
    for (uint32_t i = 0; i < h->rank; i++)
        if (__builtin_mul_overflow(count, (size_t)h->dims[i], &count)) return bad(err, what, "its shape is too large");
    if (__builtin_mul_overflow(count, st_scalar_size(h->kind), bytes)) return bad(err, what, "its shape is too large");
    return true;
}

static bool truncated(st_err *err, const char *what, size_t need, size_t have) {
    return st_fail(err, (st_loc){what, 0, 0}, "is truncated: its shape needs %zu bytes of data but it has %zu", need, have);
}

/* Storage for the array the header describes; its data is known to be there. */
static bool make_value(st_arena *a, const char *what, const header *h, st_value *out, size_t *bytes,
                       st_err *err) {
    memset(out, 0, sizeof *out);
    out->scalar = h->kind;
    if (h->rank == 0) {
        out->kind = ST_VALUE_SCALAR;
        *bytes = st_scalar_size(h->kind);
        return true;
    }
    out->kind = ST_VALUE_ARRAY;
    out->n = h->rank;
    int64_t *dims = st_arena_alloc(a, h->rank * sizeof *dims);
    if (!dims) return st_fail_internal(err, "out of memory");
    memcpy(dims, h->dims, h->rank * sizeof *dims);
    out->u.a.dims = dims;
    int64_t count;
    if (!st_leaf_count(out, &count) || __builtin_mul_overflow((size_t)count, st_scalar_size(h->kind), bytes))
        return bad(err, what, "its shape is too large");
    out->u.a.data = st_arena_alloc(a, *bytes ? *bytes : 1);
    if (!out->u.a.data)
        return st_fail(err, (st_loc){what, 0, 0}, "out of memory reading %lld elements", (long long)count);
    return true;
}

/* bools are stored as bytes; anything not zero is true */
static void normalise(st_value *v, size_t bytes) {
    if (v->scalar != ST_BOOL) return;
    unsigned char *d = v->kind == ST_VALUE_SCALAR ? (unsigned char *)&v->u.s : v->u.a.data;
    for (size_t i = 0; i < bytes; i++) d[i] = d[i] != 0;
}

static bool load_data(st_value *v, const unsigned char *src, size_t bytes) {
    if (v->kind == ST_VALUE_SCALAR) {
        v->u.s = st_scalar_load(v->scalar, src);
        return true;
    }
    memcpy(v->u.a.data, src, bytes);
    normalise(v, bytes);
    return true;
}

bool st_npy_read_mem(st_arena *a, const char *what, const void *bytes, size_t len, st_value *out,
                     st_err *err) {
    header h;
    size_t need;
    if (!parse_header(what, bytes, len, &h, err) || !data_bytes(what, &h, &need, err)) return false;
    size_t have = len - h.data_offset;
    if (have < need) return truncated(err, what, need, have);
    if (!make_value(a, what, &h, out, &need, err)) return false;
    if (have > need)
        return st_fail(err, (st_loc){what, 0, 0}, "has %zu bytes after the data its shape describes", have - need);
    return load_data(out, (const unsigned char *)bytes + h.data_offset, need);
}

bool st_npy_read(st_arena *a, const char *path, st_value *out, st_err *err) {
    int fd = st_open_regular(path, O_RDONLY, NULL, err);
    struct stat st;
    FILE *f = fd >= 0 && fstat(fd, &st) == 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        if (fd >= 0) close(fd);
        return fd < 0 ? false : st_fail(err, (st_loc){path, 0, 0}, "cannot read: %s", strerror(errno));
    }
    bool ok = false;
    unsigned char *head = NULL;
    /* the prelude tells the header's length; then header, then data straight into place */
    unsigned char pre[12];
    size_t got = fread(pre, 1, sizeof pre, f);
    size_t hlen = 0, start = 10;
    if (got >= 10 && !memcmp(pre, "\x93NUMPY", 6)) {
        if (pre[6] == 1) hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
        else if (got == 12) {
            hlen = (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
            start = 12;
        }
    }
    if (hlen > 1 << 20) hlen = 0;
    head = malloc(start + hlen);
    if (!head) {
        st_fail_internal(err, "out of memory");
        goto done;
    }
    memcpy(head, pre, got < start + hlen ? got : start + hlen);
    size_t more = start + hlen > got ? fread(head + got, 1, start + hlen - got, f) : 0;
    size_t head_len = got + more;
    header h;
    if (!parse_header(path, head, head_len > start + hlen ? start + hlen : head_len, &h, err)) goto done;
    size_t need;
    if (!data_bytes(path, &h, &need, err)) goto done;
    /* the file's size says whether the data is all there, before any allocation */
    size_t have_total = (uint64_t)st.st_size > h.data_offset ? (size_t)st.st_size - h.data_offset : 0;
    if (have_total < need) {
        truncated(err, path, need, have_total);
        goto done;
    }
    /* the data is allocated before it is read: however large the file */
    if (need > NPY_DATA_MAX) {
        st_fail(err, (st_loc){path, 0, 0}, "its shape needs %zu bytes of data, more than %d GiB, the most strata reads of a .npy file",
                need, NPY_DATA_MAX_GIB);
        goto done;
    }
    if (!make_value(a, path, &h, out, &need, err)) goto done;
    /* bytes read beyond the header already (a short header in a 12-byte prelude) */
    size_t extra = got > h.data_offset ? got - h.data_offset : 0;
    unsigned char *dst = out->kind == ST_VALUE_SCALAR ? (unsigned char *)&out->u.s : out->u.a.data;
    if (out->kind == ST_VALUE_SCALAR) out->u.s.bits = 0;
    if (extra > need) {
        st_fail(err, (st_loc){path, 0, 0}, "has %zu bytes after the data its shape describes", extra - need);
        goto done;
    }
    memcpy(dst, pre + h.data_offset, extra);
    size_t have = extra + fread(dst + extra, 1, need - extra, f);
    if (ferror(f)) {
        st_fail(err, (st_loc){path, 0, 0}, "cannot read: %s", strerror(errno));
        goto done;
    }
    if (have < need) {
        truncated(err, path, need, have);
        goto done;
    }
    unsigned char probe;
    if (fread(&probe, 1, 1, f) == 1) {
        st_fail(err, (st_loc){path, 0, 0}, "has bytes after the data its shape describes");
        goto done;
    }
    if (out->kind == ST_VALUE_SCALAR) {
        st_scalar s = st_scalar_load(out->scalar, dst);
        out->u.s = s;
    }
    normalise(out, need);
    ok = true;
done:
    free(head);
    fclose(f);
    return ok;
}

bool st_npy_write(const char *path, const st_value *v, st_err *err) {
    if (v->kind == ST_VALUE_TUPLE) return st_fail_internal(err, "a tuple is several .npy files, not one");
    char dict[512];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", st_npy_dtype(v->scalar));
    uint32_t rank = v->kind == ST_VALUE_ARRAY ? v->n : 0;
    for (uint32_t i = 0; i < rank; i++)
        n += snprintf(dict + n, sizeof dict - (size_t)n, "%lld%s", (long long)v->u.a.dims[i], rank == 1 ? "," : i + 1 < rank ? ", " : "");
    n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
    /* pad with spaces so that the data starts on a multiple of 64 bytes */
    size_t total = 10 + (size_t)n + 1;
    size_t padded = (total + 63) / 64 * 64;
    unsigned char head[600];
    memcpy(head, "\x93NUMPY\x01\x00", 8);
    size_t hlen = padded - 10;
    head[8] = (unsigned char)(hlen & 0xff);
    head[9] = (unsigned char)(hlen >> 8);
    memcpy(head + 10, dict, (size_t)n);
    memset(head + 10 + n, ' ', padded - total);
    head[padded - 1] = '\n';

    /* a FIFO or a device at path is refused, not waited on */
    int fd = st_open_regular(path, O_WRONLY | O_CREAT | O_TRUNC, NULL, err);
    if (fd < 0) return false;
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        close(fd);
        return st_fail(err, (st_loc){path, 0, 0}, "cannot write: %s", strerror(errno));
    }
    bool ok = fwrite(head, 1, padded, f) == padded;
    if (v->kind == ST_VALUE_SCALAR) {
        unsigned char buf[8];
        st_scalar_store(v->scalar, buf, v->u.s);
        ok = ok && fwrite(buf, 1, st_scalar_size(v->scalar), f) == st_scalar_size(v->scalar);
    } else {
        size_t bytes = st_leaf_bytes(v);
        ok = ok && fwrite(v->u.a.data, 1, bytes, f) == bytes;
    }
    if (fclose(f) != 0) ok = false;
    if (!ok) return st_fail(err, (st_loc){path, 0, 0}, "cannot write: %s", strerror(errno));
    return true;
}
