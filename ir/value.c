/* ir/value.c — runtime values: allocation by type, leaves, random filling,
 * the element access the interpreter is built on, and comparison. */
#include "value.h"
#include "scalar_ops.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

st_value st_value_scalar(st_scalar_kind k, st_scalar s) {
    st_value v;
    memset(&v, 0, sizeof v);
    v.kind = ST_VALUE_SCALAR;
    v.scalar = k;
    v.u.s = s;
    return v;
}

st_value st_value_tuple(uint32_t n, const st_value *items) {
    return (st_value){.kind = ST_VALUE_TUPLE, .n = n, .u.items = items};
}

int64_t st_value_length(const st_value *v) {
    switch (v->kind) {
    case ST_VALUE_ARRAY: return v->u.a.dims[0];
    case ST_VALUE_TUPLE: return v->n ? st_value_length(&v->u.items[0]) : 0;
    default: return 0;
    }
}

/* elements of one leaf, and its size in bytes */
bool st_leaf_count(const st_value *v, int64_t *count) {
    int64_t c = 1;
    for (uint32_t i = 0; i < v->n; i++)
        if (__builtin_mul_overflow(c, v->u.a.dims[i], &c)) return false;
    *count = c;
    return true;
}

size_t st_leaf_bytes(const st_value *v) {
    int64_t c;
    st_leaf_count(v, &c);
    return (size_t)c * st_scalar_size(v->scalar);
}

/* Storage for type t under `nouter` enclosing dimensions `outer`. */
static bool alloc_shaped(st_arena *a, const st_type *t, const int64_t *outer, uint32_t nouter,
                         const st_binding *env, size_t nenv, st_value *out, st_err *err) {
    switch (t->kind) {
    case ST_TYPE_SCALAR: {
        memset(out, 0, sizeof *out);
        out->scalar = t->scalar;
        if (nouter == 0) {
            out->kind = ST_VALUE_SCALAR;
            return true;
        }
        out->kind = ST_VALUE_ARRAY;
        out->n = nouter;
        int64_t *dims = st_arena_alloc(a, nouter * sizeof *dims);
        if (!dims) return st_fail_internal(err, "out of memory");
        memcpy(dims, outer, nouter * sizeof *dims);
        out->u.a.dims = dims;
        int64_t count;
        size_t bytes;
        if (!st_leaf_count(out, &count) ||
            __builtin_mul_overflow((size_t)count, st_scalar_size(t->scalar), &bytes))
            return st_fail(err, (st_loc){0}, "an array of %s would be larger than memory can address", st_scalar_name(t->scalar));
        out->u.a.data = st_arena_zalloc(a, bytes);
        if (!out->u.a.data)
            return st_fail(err, (st_loc){0}, "out of memory: an array of %lld %s values needs %.1f GiB",
                           (long long)count, st_scalar_name(t->scalar), (double)bytes / (1024.0 * 1024 * 1024));
        return true;
    }
    case ST_TYPE_ARRAY: {
        if (nouter >= ST_MAX_RANK) return st_fail(err, (st_loc){0}, "arrays of more than %d dimensions are not supported", ST_MAX_RANK);
        int64_t dims[ST_MAX_RANK];
        if (nouter) memcpy(dims, outer, nouter * sizeof *dims);
        if (!st_size_eval(t->size, env, nenv, &dims[nouter], err)) return false;
        if (dims[nouter] < 0) {
            st_buf b = {0};
            st_size_print(t->size, &b);
            st_fail(err, (st_loc){0}, "the array length %s is negative (%lld)", b.data ? b.data : "?", (long long)dims[nouter]);
            st_buf_free(&b);
            return false;
        }
        return alloc_shaped(a, t->elem, dims, nouter + 1, env, nenv, out, err);
    }
    case ST_TYPE_TUPLE: {
        st_value *items = st_arena_alloc(a, t->n * sizeof *items);
        if (!items) return st_fail_internal(err, "out of memory");
        for (uint32_t i = 0; i < t->n; i++)
            if (!alloc_shaped(a, t->items[i], outer, nouter, env, nenv, &items[i], err)) return false;
        *out = st_value_tuple(t->n, items);
        return true;
    }
    default: return st_fail_internal(err, "a function has no runtime value");
    }
}

bool st_value_alloc(st_arena *a, const st_type *t, const st_binding *env, size_t nenv,
                    st_value *out, st_err *err) {
    return alloc_shaped(a, t, NULL, 0, env, nenv, out, err);
}

bool st_value_alloc_rows(st_arena *a, const st_value *like, int64_t rows, st_value *out, st_err *err) {
    *out = *like;
    if (like->kind == ST_VALUE_TUPLE) {
        st_value *items = st_arena_alloc(a, (like->n ? like->n : 1) * sizeof *items);
        if (!items) return st_fail_internal(err, "out of memory");
        for (uint32_t i = 0; i < like->n; i++)
            if (!st_value_alloc_rows(a, &like->u.items[i], rows, &items[i], err)) return false;
        out->u.items = items;
        return true;
    }
    if (like->kind != ST_VALUE_ARRAY) return st_fail_internal(err, "rows of a scalar");
    int64_t *dims = st_arena_alloc(a, like->n * sizeof *dims);
    if (!dims) return st_fail_internal(err, "out of memory");
    memcpy(dims, like->u.a.dims, like->n * sizeof *dims);
    dims[0] = rows;
    out->u.a.dims = dims;
    size_t bytes = (size_t)rows * st_row_bytes(like);
    out->u.a.data = st_arena_zalloc(a, bytes ? bytes : 1);
    return out->u.a.data || st_fail_internal(err, "out of memory");
}

size_t st_value_leaves(const st_value *v, st_value *out, size_t max) {
    if (v->kind != ST_VALUE_TUPLE) {
        if (max) out[0] = *v;
        return 1;
    }
    size_t n = 0;
    for (uint32_t i = 0; i < v->n; i++)
        n += st_value_leaves(&v->u.items[i], out + (n < max ? n : max), n < max ? max - n : 0);
    return n;
}

/* splitmix64: small, fast, and the same sequence everywhere */
static uint64_t next_random(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static st_scalar random_scalar(st_scalar_kind k, uint64_t *state) {
    uint64_t r = next_random(state);
    st_scalar v = {.bits = 0};
    switch (k) {
    case ST_BOOL: v.b = r & 1; break;
    case ST_I32: v.i32 = (int32_t)(r % 100) - 50; break;
    case ST_U32: v.u32 = (uint32_t)(r % 100); break;
    case ST_I64: v.i64 = (int64_t)(r % 100) - 50; break;
    case ST_U64: v.u64 = r % 100; break;
    case ST_I8: v.i8 = (int8_t)((int)(r % 100) - 50); break;
    case ST_U8: v.u8 = (uint8_t)(r % 100); break;
    case ST_I16: v.i16 = (int16_t)((int)(r % 100) - 50); break;
    case ST_U16: v.u16 = (uint16_t)(r % 100); break;
    case ST_F32: v.f32 = (float)(r >> 40) / (float)(1 << 24); break;
    default: v.f64 = (double)(r >> 11) / 9007199254740992.0; break;
    }
    return v;
}

static void fill(st_value *v, uint64_t *state) {
    switch (v->kind) {
    case ST_VALUE_SCALAR: v->u.s = random_scalar(v->scalar, state); return;
    case ST_VALUE_TUPLE:
        for (uint32_t i = 0; i < v->n; i++) fill((st_value *)&v->u.items[i], state);
        return;
    default: {
        int64_t count;
        st_leaf_count(v, &count);
        size_t size = st_scalar_size(v->scalar);
        for (int64_t i = 0; i < count; i++)
            st_scalar_store(v->scalar, (char *)v->u.a.data + (size_t)i * size, random_scalar(v->scalar, state));
    }
    }
}

void st_value_fill_random(st_value *v, uint64_t seed) {
    uint64_t state = seed;
    fill(v, &state);
}

/* ---- element access ---- */

size_t st_row_bytes(const st_value *v) {
    size_t n = st_scalar_size(v->scalar);
    for (uint32_t i = 1; i < v->n; i++) n *= (size_t)v->u.a.dims[i];
    return n;
}

bool st_value_elem(st_arena *a, const st_value *v, int64_t i, st_value *out, st_err *err) {
    switch (v->kind) {
    case ST_VALUE_ARRAY:
        memset(out, 0, sizeof *out);
        out->scalar = v->scalar;
        if (v->n == 1) {
            out->kind = ST_VALUE_SCALAR;
            out->u.s = st_scalar_load(v->scalar, (char *)v->u.a.data + (size_t)i * st_scalar_size(v->scalar));
        } else {
            out->kind = ST_VALUE_ARRAY;
            out->n = v->n - 1;
            out->u.a.dims = v->u.a.dims + 1;
            out->u.a.data = (char *)v->u.a.data + (size_t)i * st_row_bytes(v);
        }
        return true;
    case ST_VALUE_TUPLE: {
        st_value *items = st_arena_alloc(a, v->n * sizeof *items);
        if (!items) return st_fail_internal(err, "out of memory");
        for (uint32_t k = 0; k < v->n; k++)
            if (!st_value_elem(a, &v->u.items[k], i, &items[k], err)) return false;
        *out = st_value_tuple(v->n, items);
        return true;
    }
    default: return st_fail_internal(err, "indexing a scalar");
    }
}

void st_value_store(st_value *dst, int64_t i, const st_value *v) {
    switch (dst->kind) {
    case ST_VALUE_ARRAY:
        if (dst->n == 1) {
            st_scalar_store(dst->scalar, (char *)dst->u.a.data + (size_t)i * st_scalar_size(dst->scalar), v->u.s);
        } else {
            size_t row = st_row_bytes(dst);
            memmove((char *)dst->u.a.data + (size_t)i * row, v->u.a.data, row);
        }
        return;
    case ST_VALUE_TUPLE:
        for (uint32_t k = 0; k < dst->n; k++) st_value_store((st_value *)&dst->u.items[k], i, &v->u.items[k]);
        return;
    default: return;
    }
}

void st_value_copy_into(st_value *dst, const st_value *src) {
    switch (dst->kind) {
    case ST_VALUE_SCALAR: dst->u.s = src->u.s; return;
    case ST_VALUE_ARRAY: memmove(dst->u.a.data, src->u.a.data, st_leaf_bytes(dst)); return;
    case ST_VALUE_TUPLE:
        for (uint32_t k = 0; k < dst->n; k++) st_value_copy_into((st_value *)&dst->u.items[k], &src->u.items[k]);
        return;
    }
}

bool st_value_clone(st_arena *a, const st_value *v, st_value *out, st_err *err) {
    *out = *v;
    switch (v->kind) {
    case ST_VALUE_SCALAR: return true;
    case ST_VALUE_ARRAY: {
        size_t bytes = st_leaf_bytes(v);
        int64_t *dims = st_arena_alloc(a, v->n * sizeof *dims);
        void *data = st_arena_alloc(a, bytes ? bytes : 1);
        if (!dims || !data) return st_fail_internal(err, "out of memory");
        memcpy(dims, v->u.a.dims, v->n * sizeof *dims);
        if (bytes) memcpy(data, v->u.a.data, bytes);
        out->u.a.dims = dims;
        out->u.a.data = data;
        return true;
    }
    case ST_VALUE_TUPLE: {
        st_value *items = st_arena_alloc(a, (v->n ? v->n : 1) * sizeof *items);
        if (!items) return st_fail_internal(err, "out of memory");
        for (uint32_t k = 0; k < v->n; k++)
            if (!st_value_clone(a, &v->u.items[k], &items[k], err)) return false;
        out->u.items = items;
        return true;
    }
    }
    return true;
}

/* ---- comparison ---- */

/* How a leaf's floats may differ: within rel times the scale leaf's
 * element, or without one, times the reference's magnitude. */
typedef struct leaf_bound {
    const st_value *scale; /* NULL: |want| */
    double rel;
} leaf_bound;

/* Kind k's least normal number: a device may flush a subnormal result to zero. */
static double least_normal(st_scalar_kind k) { return k == ST_F32 ? FLT_MIN : DBL_MIN; }

static double scale_at(const leaf_bound *b, int64_t i, double want) {
    if (!b->scale) return fabs(want);
    const st_value *s = b->scale;
    double m = s->kind == ST_VALUE_ARRAY ? ((const double *)s->u.a.data)[i] : s->u.s.f64;
    return isnan(m) ? INFINITY : m;
}

static bool leaf_agree(size_t leaf, const st_value *got, const st_value *want, const leaf_bound *bound, st_err *err) {
    if (got->kind != want->kind || got->scalar != want->scalar || got->n != want->n)
        return st_fail(err, (st_loc){0}, "result %zu has another type than the reference's", leaf);
    int64_t count = 1;
    if (got->kind == ST_VALUE_ARRAY)
        for (uint32_t i = 0; i < got->n; i++) {
            if (got->u.a.dims[i] != want->u.a.dims[i])
                return st_fail(err, (st_loc){0}, "result %zu has %lld elements along dimension %u where the reference has %lld",
                               leaf, (long long)got->u.a.dims[i], i, (long long)want->u.a.dims[i]);
            count *= got->u.a.dims[i];
        }
    size_t size = st_scalar_size(got->scalar);
    const char *g = got->kind == ST_VALUE_ARRAY ? got->u.a.data : (const char *)&got->u.s;
    const char *w = want->kind == ST_VALUE_ARRAY ? want->u.a.data : (const char *)&want->u.s;
    for (int64_t i = 0; i < count; i++) {
        st_scalar a = {.bits = 0}, b = {.bits = 0};
        memcpy(&a, g + (size_t)i * size, size);
        memcpy(&b, w + (size_t)i * size, size);
        bool same;
        double allowed = 0;
        if (got->scalar == ST_BOOL) {
            same = (a.bits & 0xff) == (b.bits & 0xff);
        } else if (st_scalar_is_float(got->scalar)) {
            double x = st_scalar_as_f64(got->scalar, a), y = st_scalar_as_f64(got->scalar, b);
            allowed = bound->rel * scale_at(bound, i, y) + least_normal(got->scalar);
            same = (isnan(x) && isnan(y)) || x == y || fabs(x - y) <= allowed;
        } else {
            same = a.bits == b.bits;
        }
        if (same) continue;
        st_buf ta = {0}, tb = {0};
        st_scalar_format(got->scalar, a, &ta);
        st_scalar_format(got->scalar, b, &tb);
        if (st_scalar_is_float(got->scalar))
            st_fail(err, (st_loc){0}, "result %zu differs at element %lld: %s where the reference has %s (within %.3g)", leaf,
                    (long long)i, ta.data ? ta.data : "?", tb.data ? tb.data : "?", allowed);
        else
            st_fail(err, (st_loc){0}, "result %zu differs at element %lld: %s where the reference has %s", leaf,
                    (long long)i, ta.data ? ta.data : "?", tb.data ? tb.data : "?");
        st_buf_free(&ta);
        st_buf_free(&tb);
        return false;
    }
    return true;
}

/* got's leaves against want's, each with its bound (the scale's leaves,
 * when there is a scale) */
static bool leaves_agree(const st_value *got, const st_value *want, const st_value *scale, double rel, double rel64,
                         st_err *err) {
    size_t n = st_value_leaves(got, NULL, 0);
    if (n != st_value_leaves(want, NULL, 0)) return st_fail(err, (st_loc){0}, "the results have another number of parts than the reference");
    st_value *lg = malloc(3 * n * sizeof *lg);
    if (!lg) return st_fail_internal(err, "out of memory");
    st_value *lw = lg + n, *ls = lw + n;
    st_value_leaves(got, lg, n);
    st_value_leaves(want, lw, n);
    if (scale) st_value_leaves(scale, ls, n);
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        leaf_bound b = {scale ? &ls[i] : NULL, lw[i].scalar == ST_F64 ? rel64 : rel};
        ok = leaf_agree(i, &lg[i], &lw[i], &b, err);
    }
    free(lg);
    return ok;
}

bool st_value_agree(const st_value *got, const st_value *want, double rtol, st_err *err) {
    return leaves_agree(got, want, NULL, rtol, rtol, err);
}

bool st_expected_agree(const st_value *got, const st_expected *want, double tolerance, st_err *err) {
    return leaves_agree(got, &want->value, &want->scale, tolerance * FLT_EPSILON, tolerance * DBL_EPSILON, err);
}
