/* explore/records.c — one record per explored point: its JSON line, the
 * results.jsonl file read back (tolerating a last line cut short), the CSV
 * and the chart over all of them. */
#include "explore.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const status_names[] = {"ok", "constraint", "rule_error", "build_error", "launch_error", "wrong_answer",
                                           "timeout", "crash"};

const char *st_status_name(st_status s) {
    return (unsigned)s <= ST_STATUS_CRASH ? status_names[s] : "?";
}

bool st_status_parse(const char *name, st_status *out) {
    for (int i = 0; i <= ST_STATUS_CRASH; i++)
        if (!strcmp(status_names[i], name)) {
            *out = (st_status)i;
            return true;
        }
    return false;
}

void st_record_clear(st_record *r) {
    free(r->strategy);
    free(r->message);
    for (uint32_t i = 0; i < r->nvalues; i++) free(r->values[i]);
    free(r->values);
    free(r->samples_ms);
    memset(r, 0, sizeof *r);
}

static void put_key(st_buf *b, const char *key) {
    st_json_put_key(b, b->len && b->data[b->len - 1] != '{' ? ", " : "", key);
}

static void put_number(st_buf *b, const char *key, double v) {
    put_key(b, key);
    st_json_put_number(b, v);
}

void st_record_figures_to_json(const st_record *r, const char *sep, st_buf *b) {
    const struct { const char *key; double value; } figures[] = {
        {"median_ms", r->median_ms}, {"min_ms", r->min_ms}, {"max_ms", r->max_ms},
        {"gb_per_s", r->gb_per_s},   {"bytes", (double)r->bytes}};
    for (size_t i = 0; i < sizeof figures / sizeof *figures; i++) {
        st_json_put_key(b, sep, figures[i].key);
        st_json_put_number(b, figures[i].value);
    }
    st_json_put_key(b, sep, "samples_ms");
    st_buf_puts(b, "[");
    for (uint32_t i = 0; i < r->nsamples; i++) {
        st_buf_puts(b, i ? ", " : "");
        st_json_put_number(b, r->samples_ms[i]);
    }
    st_buf_puts(b, "]");
}

void st_record_to_json(const st_record *r, st_buf *b) {
    st_buf_puts(b, "{");
    put_number(b, "point", (double)r->point);
    put_key(b, "strategy");
    st_json_put_string(b, r->strategy ? r->strategy : "");
    put_key(b, "values");
    st_buf_puts(b, "[");
    for (uint32_t i = 0; i < r->nvalues; i++) {
        st_buf_puts(b, i ? ", " : "");
        st_json_put_space_value(b, r->values[i]);
    }
    st_buf_puts(b, "]");
    put_key(b, "status");
    st_json_put_string(b, st_status_name(r->status));
    put_key(b, "message");
    st_json_put_string(b, r->message ? r->message : "");
    put_number(b, "build_ms", r->build_ms);
    if (r->status == ST_STATUS_OK) st_record_figures_to_json(r, ", ", b);
    put_key(b, "kernels_sha256");
    st_json_put_string(b, r->kernels_sha256);
    st_buf_puts(b, "}");
}

static char *dup_or_fail(const char *s, bool *ok) {
    char *d = strdup(s ? s : "");
    if (!d) *ok = false;
    return d;
}

bool st_record_from_json(const st_json *j, st_record *r, st_err *err) {
    memset(r, 0, sizeof *r);
    const char *status = st_json_get_string(j, "status");
    const st_json *values = st_json_get(j, "values");
    if (!j || j->kind != ST_JSON_OBJECT || !st_json_get_whole(j, "point", UINT64_MAX, &r->point) || !status ||
        !st_status_parse(status, &r->status) || !st_json_get_string(j, "strategy") || !values ||
        values->kind != ST_JSON_ARRAY)
        return st_fail(err, (st_loc){0}, "not a record of strata explore (it needs point, strategy, values and status)");
    bool ok = true;
    r->strategy = dup_or_fail(st_json_get_string(j, "strategy"), &ok);
    r->message = dup_or_fail(st_json_get_string(j, "message"), &ok);
    r->values = calloc(values->len + 1, sizeof *r->values);
    ok = ok && r->values;
    for (size_t i = 0; ok && i < values->len; i++) {
        const st_json *v = &values->items[i];
        char num[64];
        if (v->kind == ST_JSON_NUMBER) snprintf(num, sizeof num, "%.0f", v->number);
        r->values[i] = dup_or_fail(v->kind == ST_JSON_NUMBER ? num : v->kind == ST_JSON_STRING ? v->string : "?", &ok);
        r->nvalues++;
    }
    st_json_get_number(j, "build_ms", &r->build_ms);
    st_json_get_number(j, "median_ms", &r->median_ms);
    st_json_get_number(j, "min_ms", &r->min_ms);
    st_json_get_number(j, "max_ms", &r->max_ms);
    st_json_get_number(j, "gb_per_s", &r->gb_per_s);
    st_json_get_whole(j, "bytes", UINT64_MAX, &r->bytes); /* left 0 when it is no count */
    const st_json *samples = st_json_get(j, "samples_ms");
    if (ok && samples && samples->kind == ST_JSON_ARRAY) {
        r->samples_ms = calloc(samples->len + 1, sizeof *r->samples_ms);
        ok = r->samples_ms != NULL;
        for (size_t i = 0; ok && i < samples->len; i++)
            r->samples_ms[r->nsamples++] = samples->items[i].kind == ST_JSON_NUMBER ? samples->items[i].number : NAN;
    }
    const char *sha = st_json_get_string(j, "kernels_sha256");
    snprintf(r->kernels_sha256, sizeof r->kernels_sha256, "%s", sha ? sha : "");
    if (!ok) {
        st_record_clear(r);
        return st_fail_internal(err, "out of memory");
    }
    return true;
}

bool st_record_copy(st_record *dst, const st_record *src) {
    st_record_clear(dst);
    st_buf b = {0};
    st_record_to_json(src, &b); /* through its JSON: one place knows the fields */
    st_arena *a = st_arena_new();
    st_err err = {0};
    const st_json *j = a && b.data && !b.failed ? st_json_parse(a, "record", b.data, b.len, &err) : NULL;
    bool ok = j && st_record_from_json(j, dst, &err);
    st_arena_free(a);
    st_buf_free(&b);
    return ok;
}

bool st_records_push(st_records *rs, st_record *r) {
    if (!st_grow(&rs->items, sizeof *rs->items, rs->count, &rs->cap, 64)) return false;
    rs->items[rs->count++] = *r;
    return true;
}

static const st_record **ordered(const st_records *rs);

/* A point recorded twice (measured again, by the autotuner) is its last
 * record: drop the earlier ones, keeping file order. */
static bool latest_only(st_records *rs) {
    const st_record **order = ordered(rs); /* by point, then by place */
    if (!order) return false;
    bool *dropped = calloc(rs->count + 1, sizeof *dropped);
    if (!dropped) return free(order), false;
    size_t ndropped = 0;
    for (size_t i = 0; i + 1 < rs->count; i++)
        if (order[i]->point == order[i + 1]->point) {
            dropped[order[i] - rs->items] = true;
            ndropped++;
        }
    free(order);
    size_t kept = 0;
    for (size_t i = 0; ndropped && i < rs->count; i++) {
        if (dropped[i]) st_record_clear(&rs->items[i]);
        else rs->items[kept++] = rs->items[i];
    }
    if (ndropped) rs->count = kept;
    free(dropped);
    return true;
}

bool st_records_read(const char *path, st_records *out, size_t *truncated, st_err *err) {
    memset(out, 0, sizeof *out);
    *truncated = 0;
    bool absent;
    st_err why = {0};
    int fd = st_open_regular(path, O_RDONLY, &absent, &why);
    if (fd < 0) {
        if (absent) return true; /* no records yet */
        *err = why;
        return false;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return st_fail_internal(err, "out of memory reading %s", path);
    }
    st_arena *a = st_arena_new();
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int lineno = 0;
    bool ok = a != NULL;
    if (!a) st_fail_internal(err, "out of memory");
    while (ok && (n = getline(&line, &cap, f)) > 0) {
        lineno++;
        bool complete = line[n - 1] == '\n';
        size_t len = (size_t)n - complete;
        if (!len) continue;
        st_err why = {0};
        const st_json *j = st_json_parse(a, path, line, len, &why);
        st_record r;
        if (j && st_record_from_json(j, &r, &why)) {
            if (!st_records_push(out, &r)) {
                st_record_clear(&r);
                ok = st_fail_internal(err, "out of memory");
            }
            continue;
        }
        if (!complete) { /* the last line, cut short by an interruption */
            (*truncated)++;
            break;
        }
        ok = st_fail(err, (st_loc){path, lineno, 0}, "a bad record: %s", why.message);
    }
    free(line);
    fclose(f);
    st_arena_free(a);
    if (ok && !latest_only(out)) ok = st_fail_internal(err, "out of memory");
    if (!ok) st_records_free(out);
    return ok;
}

void st_records_free(st_records *rs) {
    for (size_t i = 0; i < rs->count; i++) st_record_clear(&rs->items[i]);
    free(rs->items);
    memset(rs, 0, sizeof *rs);
}

const st_record *st_records_best(const st_records *rs) {
    const st_record *best = NULL;
    for (size_t i = 0; i < rs->count; i++) {
        const st_record *r = &rs->items[i];
        if (r->status == ST_STATUS_OK && (!best || r->median_ms < best->median_ms)) best = r;
    }
    return best;
}

/* ---- CSV ---- */

static void csv_field(st_buf *b, const char *s) {
    if (!strpbrk(s, ",\"\n\r")) {
        st_buf_puts(b, s);
        return;
    }
    st_buf_puts(b, "\"");
    for (; *s; s++) {
        if (*s == '"') st_buf_puts(b, "\"");
        st_buf_put(b, s, 1);
    }
    st_buf_puts(b, "\"");
}

/* By point, then by place in the array: stable. */
static int by_point(const void *a, const void *b) {
    const st_record *x = *(const st_record *const *)a, *y = *(const st_record *const *)b;
    if (x->point != y->point) return (x->point > y->point) - (x->point < y->point);
    return (x > y) - (x < y);
}

/* The records ordered by point (pointers into rs; free the array). */
static const st_record **ordered(const st_records *rs) {
    const st_record **order = calloc(rs->count + 1, sizeof *order);
    if (!order) return NULL;
    for (size_t i = 0; i < rs->count; i++) order[i] = &rs->items[i];
    qsort(order, rs->count, sizeof *order, by_point);
    return order;
}

bool st_records_sort(st_records *rs) {
    const st_record **order = ordered(rs);
    st_record *items = calloc(rs->count + 1, sizeof *items);
    if (!order || !items) {
        free(order);
        free(items);
        return false;
    }
    for (size_t i = 0; i < rs->count; i++) items[i] = *order[i];
    free(order);
    free(rs->items);
    rs->items = items;
    rs->cap = rs->count + 1;
    return true;
}

const st_record *st_records_find(const st_records *rs, uint64_t point) {
    size_t lo = 0, hi = rs->count; /* the first record whose point is not below */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rs->items[mid].point < point) lo = mid + 1;
        else hi = mid;
    }
    return lo < rs->count && rs->items[lo].point == point ? &rs->items[lo] : NULL;
}

bool st_records_write_csv(const st_records *rs, const st_space *space, const char *path, st_err *err) {
    const st_record **order = ordered(rs);
    if (!order) return st_fail_internal(err, "out of memory");
    st_buf b = {0};
    st_buf_puts(&b, "point,strategy");
    for (uint32_t d = 0; d < st_space_ndims(space); d++) {
        st_buf_puts(&b, ",");
        csv_field(&b, st_space_dim_at(space, d)->name);
    }
    st_buf_puts(&b, ",status,median_ms,min_ms,max_ms,gb_per_s,runs,build_ms,kernels_sha256,message\n");
    for (size_t i = 0; i < rs->count; i++) {
        const st_record *r = order[i];
        st_buf_printf(&b, "%llu,", (unsigned long long)r->point);
        csv_field(&b, r->strategy);
        for (uint32_t d = 0; d < st_space_ndims(space); d++) {
            st_buf_puts(&b, ",");
            csv_field(&b, d < r->nvalues ? r->values[d] : "");
        }
        st_buf_printf(&b, ",%s,", st_status_name(r->status));
        if (r->status == ST_STATUS_OK)
            st_buf_printf(&b, "%.6g,%.6g,%.6g,%.6g,%u,", r->median_ms, r->min_ms, r->max_ms, r->gb_per_s, r->nsamples);
        else
            st_buf_puts(&b, ",,,,,");
        st_buf_printf(&b, "%.1f,%s,", r->build_ms, r->kernels_sha256);
        csv_field(&b, r->message ? r->message : "");
        st_buf_puts(&b, "\n");
    }
    free(order);
    bool ok = b.failed ? st_fail_internal(err, "out of memory") : st_write_file(path, b.data ? b.data : "", b.len, err);
    st_buf_free(&b);
    return ok;
}

/* ---- the chart ---- */

/* The position of a record's value in dimension d (-1 when not found). */
static int value_index(const st_space_dim *dim, const st_record *r, uint32_t d) {
    if (d >= r->nvalues) return -1;
    for (uint32_t i = 0; i < dim->nvalues; i++)
        if (!strcmp(dim->values[i], r->values[d])) return (int)i;
    return -1;
}

bool st_records_write_svg(const st_records *rs, const st_space *space, const char *title, const char *path,
                          bool *written, st_err *err) {
    *written = false;
    uint32_t nd = st_space_ndims(space);
    if (!nd) return true;
    /* the two dimensions with the most values, in the space's order */
    uint32_t x = 0, y = UINT32_MAX;
    for (uint32_t d = 1; d < nd; d++)
        if (st_space_dim_at(space, d)->nvalues > st_space_dim_at(space, x)->nvalues) x = d;
    for (uint32_t d = 0; d < nd; d++)
        if (d != x && (y == UINT32_MAX || st_space_dim_at(space, d)->nvalues > st_space_dim_at(space, y)->nvalues))
            y = d;
    if (y != UINT32_MAX && y < x) { /* keep the space's order: the earlier one across */
        uint32_t t = x;
        x = y;
        y = t;
    }
    const st_space_dim *dx = st_space_dim_at(space, x), *dy = y == UINT32_MAX ? NULL : st_space_dim_at(space, y);
    uint32_t nx = dx->nvalues, ny = dy ? dy->nvalues : 1;
    if ((uint64_t)nx * ny > 10000) return true; /* too many cells to show */
    double *values = malloc((size_t)nx * ny * sizeof *values);
    const char **notes = calloc((size_t)nx * ny, sizeof *notes);
    if (!values || !notes) {
        free(values);
        free(notes);
        return st_fail_internal(err, "out of memory");
    }
    for (size_t i = 0; i < (size_t)nx * ny; i++) values[i] = NAN;
    for (size_t i = 0; i < rs->count; i++) {
        const st_record *r = &rs->items[i];
        int ix = value_index(dx, r, x), iy = dy ? value_index(dy, r, y) : 0;
        if (ix < 0 || iy < 0) continue;
        size_t cell = (size_t)iy * nx + (size_t)ix;
        if (r->status == ST_STATUS_OK) {
            if (isnan(values[cell]) || r->gb_per_s > values[cell]) values[cell] = r->gb_per_s;
        } else if (!notes[cell]) {
            notes[cell] = st_status_name(r->status);
        }
    }
    st_chart c = {.title = title, .unit = "GB/s", .x_name = dx->name, .nx = nx, .x_labels = dx->values,
                  .y_name = dy ? dy->name : NULL, .ny = ny, .y_labels = dy ? dy->values : NULL, .values = values,
                  .notes = notes};
    st_buf b = {0};
    bool ok = dy ? st_svg_heatmap(&c, &b, err) : st_svg_bars(&c, &b, err);
    free(values);
    free(notes);
    if (ok && b.failed) ok = st_fail_internal(err, "out of memory");
    if (ok) *written = ok = st_write_file(path, b.data ? b.data : "", b.len, err);
    st_buf_free(&b);
    return ok;
}
