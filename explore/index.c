/* explore/index.c — results/index.json: which exported variant a device
 * runs for a program. The "devices" section is the record of exports; the
 * "vendors" and "default" sections (by device type: GPU, CPU, …) are
 * derived from it on every write, so that a device never explored still
 * gets a variant tuned on a device of its kind. */
#include "index.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool st_folder_name_check(const char *name, st_loc where, const char *what, st_err *err) {
    size_t n = name ? strlen(name) : 0;
    bool ok = n >= 1 && n <= ST_FOLDER_NAME_MAX && name[0] != '-';
    for (size_t i = 0; ok && i < n; i++) {
        char c = name[i];
        ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    }
    if (ok) return true;
    st_buf shown = {0}; /* the name as JSON writes it: a control character must not reach a terminal */
    st_json_put_string(&shown, name ? name : "");
    st_fail(err, where, "%s is %.200s, which cannot name a folder: a name here is 1 to %d of the letters A-Z and a-z, "
                        "the digits 0-9, `_` and `-`, and does not start with `-`",
            what, shown.data ? shown.data : "\"\"", ST_FOLDER_NAME_MAX);
    st_buf_free(&shown);
    return false;
}

void st_device_slug(const char *name, char *out, size_t cap) {
    size_t n = 0;
    bool dash = false;
    for (const char *p = name; *p && n + 2 < cap && n < 64; p++) {
        char c = *p;
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
            if (dash && n) out[n++] = '-';
            out[n++] = c;
            dash = false;
        } else {
            dash = true;
        }
    }
    if (!n && cap > 7) n = (size_t)snprintf(out, cap, "device"); /* (export checks the result all the same) */
    out[n < cap ? n : cap - 1] = 0;
}

void st_device_key(const st_device_info *dev, char *out, size_t cap) {
    st_device_slug(dev->name, out, cap);
    size_t n = strlen(out);
    if (n < cap) snprintf(out + n, cap - n, "%s", st_device_backend(dev)->folder_suffix);
}

/* One exported variant, as the index lists it. */
typedef st_results_entry entry;

typedef struct entries {
    entry *items;
    size_t count;
} entries;

static const char *str(const st_json *j, const char *key) {
    const char *s = st_json_get_string(j, key);
    return s ? s : "";
}

/* The entries of an index (none when there is no file). */
static bool read_index(const char *into, const char *path, st_arena *a, entries *out, st_err *err) {
    memset(out, 0, sizeof *out);
    size_t len;
    bool absent;
    char *text = st_read_file_if_any(path, ST_FILE_MAX, "a file", &len, &absent, err);
    if (!text && !absent) return false;
    if (!text) { /* no index yet: room for the one entry to add */
        out->items = st_arena_zalloc(a, sizeof *out->items);
        return out->items || st_fail_internal(err, "out of memory");
    }
    const st_json *j = st_json_parse(a, path, text, len, err);
    free(text);
    if (!j) return false;
    const st_json *devices = st_json_get(j, "devices");
    if (!devices || devices->kind != ST_JSON_OBJECT)
        return st_fail(err, (st_loc){path, 0, 0}, "not an index of strata's results (it has no \"devices\")");
    size_t total = 0;
    for (size_t d = 0; d < devices->len; d++) {
        const st_json *programs = st_json_get(&devices->items[d], "programs");
        total += programs && programs->kind == ST_JSON_OBJECT ? programs->len : 0;
    }
    out->items = st_arena_zalloc(a, (total + 2) * sizeof *out->items); /* + room for one more */
    if (!out->items) return st_fail_internal(err, "out of memory");
    for (size_t d = 0; d < devices->len; d++) {
        const st_json *dev = &devices->items[d], *programs = st_json_get(dev, "programs");
        /* (these messages name `into`: path is the caller's buffer, gone when it reports) */
        if (!st_folder_name_check(devices->keys[d], (st_loc){into, 0, 0}, "index.json's key of \"devices\"", err))
            return false;
        for (size_t p = 0; programs && programs->kind == ST_JSON_OBJECT && p < programs->len; p++) {
            const st_json *e = &programs->items[p];
            if (!st_folder_name_check(programs->keys[p], (st_loc){into, 0, 0}, "index.json's key of \"programs\"", err))
                return false;
            entry *x = &out->items[out->count++];
            *x = (entry){.device_key = devices->keys[d], .device = str(dev, "name"), .vendor = str(dev, "vendor"),
                         .type = str(dev, "type"), .program = programs->keys[p], .strategy = str(e, "strategy"),
                         .path = str(e, "path")};
            /* where the export is, relative to the index: its device's and program's folders */
            size_t kl = strlen(x->device_key);
            if (strncmp(x->path, x->device_key, kl) || x->path[kl] != '/' || strcmp(x->path + kl + 1, x->program))
                return st_fail(err, (st_loc){into, 0, 0}, "index.json's \"path\" of %s on %s is not \"%s/%s\"",
                               x->program, x->device_key, x->device_key, x->program);
            st_json_get_number(e, "gb_per_s", &x->gb_per_s);
            st_json_get_number(e, "median_ms", &x->median_ms);
        }
    }
    return true;
}


/* The fastest export of a program on a device of this type (and vendor,
 * when given): a GPU's variant never stands in for a CPU, nor the other
 * way round, whose best strategies differ by an order of magnitude. */
static const entry *fastest(const entries *es, const char *program, const char *type, const char *vendor) {
    const entry *best = NULL;
    for (size_t i = 0; i < es->count; i++) {
        const entry *e = &es->items[i];
        if (strcmp(e->program, program) || strcmp(e->type, type) || (vendor && strcmp(e->vendor, vendor))) continue;
        if (!best || e->gb_per_s > best->gb_per_s) best = e;
    }
    return best;
}

static bool first_of(const entries *es, size_t i, bool (*same)(const entry *, const entry *)) {
    for (size_t k = 0; k < i; k++)
        if (same(&es->items[k], &es->items[i])) return false;
    return true;
}
static bool same_device(const entry *a, const entry *b) { return !strcmp(a->device_key, b->device_key); }
static bool same_vendor(const entry *a, const entry *b) { return !strcmp(a->vendor, b->vendor); }
static bool same_program(const entry *a, const entry *b) { return !strcmp(a->program, b->program); }
static bool same_type(const entry *a, const entry *b) { return !strcmp(a->type, b->type); }
static bool same_type_vendor(const entry *a, const entry *b) { return same_type(a, b) && same_vendor(a, b); }

/* {program: path of its fastest export} over the devices of e's type (and
 * vendor, when by_vendor). */
static void write_choices(const entries *es, const entry *e, bool by_vendor, st_buf *b) {
    st_buf_puts(b, "{");
    bool first = true;
    for (size_t k = 0; k < es->count; k++) {
        const entry *p = &es->items[k];
        bool mine = same_type(p, e) && (!by_vendor || same_vendor(p, e));
        bool seen = false; /* this program listed already */
        for (size_t j = 0; mine && j < k && !seen; j++)
            seen = same_program(&es->items[j], p) && same_type(&es->items[j], e) &&
                   (!by_vendor || same_vendor(&es->items[j], e));
        if (!mine || seen) continue;
        st_json_put_key(b, first ? "" : ", ", p->program);
        first = false;
        st_json_put_string(b, fastest(es, p->program, e->type, by_vendor ? e->vendor : NULL)->path);
    }
    st_buf_puts(b, "}");
}

/* sep "key": "value" */
static void put_string_member(st_buf *b, const char *sep, const char *key, const char *value) {
    st_json_put_key(b, sep, key);
    st_json_put_string(b, value);
}

static void write_index(const entries *es, st_buf *b) {
    st_buf_puts(b, "{\n  \"strata_results\": 1,\n  \"devices\": {");
    bool first_dev = true;
    for (size_t i = 0; i < es->count; i++) {
        const entry *d = &es->items[i];
        if (!first_of(es, i, same_device)) continue;
        st_buf_puts(b, first_dev ? "\n" : ",\n");
        first_dev = false;
        st_json_put_key(b, "    ", d->device_key);
        put_string_member(b, "{", "name", d->device);
        put_string_member(b, ", ", "vendor", d->vendor);
        put_string_member(b, ", ", "type", d->type);
        st_buf_puts(b, ", \"programs\": {");
        bool first_prog = true;
        for (size_t k = i; k < es->count; k++) {
            const entry *e = &es->items[k];
            if (!same_device(e, d)) continue;
            st_buf_puts(b, first_prog ? "\n" : ",\n");
            first_prog = false;
            st_json_put_key(b, "      ", e->program);
            put_string_member(b, "{", "strategy", e->strategy);
            put_string_member(b, ", ", "path", e->path);
            st_json_put_key(b, ", ", "median_ms");
            st_json_put_number(b, e->median_ms);
            st_json_put_key(b, ", ", "gb_per_s");
            st_json_put_number(b, e->gb_per_s);
            st_buf_puts(b, "}");
        }
        st_buf_puts(b, "\n    }}");
    }
    /* derived: by device type, then vendor */
    st_buf_puts(b, "\n  },\n  \"vendors\": {");
    for (size_t i = 0, types = 0; i < es->count; i++) {
        const entry *t = &es->items[i];
        if (!first_of(es, i, same_type)) continue;
        st_json_put_key(b, types++ ? ",\n    " : "\n    ", t->type);
        st_buf_puts(b, "{");
        for (size_t k = i, vendors = 0; k < es->count; k++)
            if (same_type(&es->items[k], t) && first_of(es, k, same_type_vendor)) {
                st_json_put_key(b, vendors++ ? ",\n      " : "\n      ", es->items[k].vendor);
                write_choices(es, &es->items[k], true, b);
            }
        st_buf_puts(b, "\n    }");
    }
    st_buf_puts(b, "\n  },\n  \"default\": {");
    for (size_t i = 0, types = 0; i < es->count; i++)
        if (first_of(es, i, same_type)) {
            st_json_put_key(b, types++ ? ",\n    " : "\n    ", es->items[i].type);
            write_choices(es, &es->items[i], false, b);
        }
    st_buf_puts(b, "\n  }\n}\n");
}

bool index_lock(const char *into, st_lock *lock, st_err *err) {
    char lock_file[4200];
    snprintf(lock_file, sizeof lock_file, "%s/.index.lock", into);
    return st_make_dirs(into, err) && st_lock_take(lock, lock_file, true, err);
}

bool index_add(const char *into, const st_device_info *dev, const char *program, const char *strategy,
               const char *path, double median_ms, double gb_per_s, st_err *err) {
    char file[4200], key[128];
    snprintf(file, sizeof file, "%s/index.json", into);
    st_device_key(dev, key, sizeof key);
    /* read, add, write under the lock: two exports into one folder (of
     * different programs, say) both land, one after the other */
    st_remove_leftovers(file); /* of writers killed while they held it */
    st_arena *a = st_arena_new();
    entries es;
    bool ok = a ? read_index(into, file, a, &es, err) : st_fail_internal(err, "out of memory");
    if (ok) {
        entry now = {.device_key = key, .device = dev->name, .vendor = dev->vendor, .type = dev->type,
                     .program = program, .strategy = strategy, .path = path, .gb_per_s = gb_per_s,
                     .median_ms = median_ms};
        size_t i = 0;
        while (i < es.count && !(same_device(&es.items[i], &now) && same_program(&es.items[i], &now))) i++;
        if (i == es.count) es.count++;
        es.items[i] = now;
        st_buf b = {0};
        write_index(&es, &b);
        ok = !b.failed ? st_write_file(file, b.data, b.len, err) : st_fail_internal(err, "out of memory");
        st_buf_free(&b);
    }
    st_arena_free(a);
    return ok;
}

bool st_results_lookup(const char *into, const st_device_info *dev, const char *program, bool *found,
                       st_buf *strategy, st_buf *from, st_err *err) {
    *found = false;
    char file[4200], key[128];
    snprintf(file, sizeof file, "%s/index.json", into);
    st_device_key(dev, key, sizeof key);
    st_arena *a = st_arena_new();
    entries es;
    if (!a) return st_fail_internal(err, "out of memory");
    bool ok = read_index(into, file, a, &es, err);
    const entry *hit = NULL;
    const char *how = "";
    for (size_t i = 0; ok && i < es.count && !hit; i++)
        if (!strcmp(es.items[i].device_key, key) && !strcmp(es.items[i].program, program)) hit = &es.items[i];
    if (ok && !hit && (hit = fastest(&es, program, dev->type, dev->vendor)))
        how = ", the best of its vendor's devices of its type";
    if (ok && !hit && (hit = fastest(&es, program, dev->type, NULL)))
        how = ", the default for its type: no export for this device or vendor";
    if (hit) {
        *found = true;
        st_buf_puts(strategy, hit->strategy);
        st_buf_printf(from, "%s/%s, exported for %s%s", into, hit->path, hit->device, how);
    }
    st_arena_free(a);
    return ok;
}

/* The date of an export's record, "" when there is none or it says none:
 * a listing shows what is there, and a folder someone removed by hand is a
 * gap in it, not a reason to show nothing. A record that is there and
 * cannot be read (not a regular file, say) is an error. */
static bool exported_at(const char *into, const entry *e, st_arena *a, const char **when, st_err *err) {
    char file[4400];
    snprintf(file, sizeof file, "%s/%s/record.json", into, e->path);
    *when = "";
    size_t len;
    bool absent;
    st_err why = {0};
    char *text = st_read_file_if_any(file, 64u << 20, "a record", &len, &absent, &why);
    if (!text && !absent) return *err = why, false;
    if (!text) return true;
    const st_json *j = st_json_parse(a, file, text, len, &why);
    free(text);
    const char *at = j ? st_json_get_string(j, "exported_at") : NULL;
    if (at) *when = at;
    return true;
}

bool st_results_list(const char *into, st_arena *a, st_results_entry **out, size_t *n, st_err *err) {
    char file[4200];
    snprintf(file, sizeof file, "%s/index.json", into);
    if (access(file, F_OK) != 0)
        return st_fail(err, (st_loc){into, 0, 0}, "holds no index.json: nothing was exported into it (strata export "
                                                  "DIR --into %s writes one)", into);
    entries es;
    if (!read_index(into, file, a, &es, err)) return false;
    for (size_t i = 0; i < es.count; i++)
        if (!exported_at(into, &es.items[i], a, &es.items[i].exported_at, err)) return false;
    *out = es.items;
    *n = es.count;
    return true;
}
