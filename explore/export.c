/* explore/export.c — `strata export`: the best variants of an exploration
 * measured again, and the fastest written where `strata run` and users find
 * it: results/<device>/<program>/ and results/index.json. */
#include "index.h"
#include "strategies/strategies.h"
#include "variant.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int by_median(const void *a, const void *b) {
    const st_record *x = *(const st_record *const *)a, *y = *(const st_record *const *)b;
    return (x->median_ms > y->median_ms) - (x->median_ms < y->median_ms);
}

static bool write_in(const char *dir, const char *name, const char *text, st_err *err) {
    char path[4600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return st_write_file(path, text, strlen(text), err);
}

/* record.json: everything needed to trust and reproduce the export. */
static void describe_export(const st_exploration *e, const st_device_info *dev, const st_space *space,
                            const st_record *best, const variant *v, st_buf *b) {
    char sha[65], host_sha[65], program_sha[65], when[32];
    st_sha256_hex(v->code.opencl, strlen(v->code.opencl), sha);
    st_sha256_hex(v->code.host, strlen(v->code.host), host_sha);
    st_sha256_hex(e->program_source, strlen(e->program_source), program_sha);
    time_t now = time(NULL);
    struct tm tm;
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    st_buf_puts(b, "{\n  \"strata_export\": 1");
    describe_field(b, "program", e->program_name);
    describe_field(b, "entry", e->entry);
    describe_field(b, "program_sha256", program_sha);
    describe_device(b, dev);
    st_buf_puts(b, ",\n  \"inputs\": [");
    for (uint32_t i = 0; i < e->ninputs; i++) {
        st_buf_puts(b, i ? ", " : "");
        st_json_put_string(b, e->inputs[i]);
    }
    st_buf_printf(b, "],\n  \"seed\": %llu", (unsigned long long)e->seed);
    describe_field(b, "space", e->space);
    describe_field(b, "strategy", best->strategy);
    /* the plugins whose rules the strategy may use, as the exploration recorded them */
    describe_recorded_plugins(b, e->json);
    st_buf_puts(b, ",\n  \"parameters\": {");
    for (uint32_t d = 0; d < st_space_ndims(space) && d < best->nvalues; d++) {
        st_buf_puts(b, d ? ", " : "");
        st_json_put_string(b, st_space_dim_at(space, d)->name);
        st_buf_puts(b, ": ");
        st_json_put_space_value(b, best->values[d]);
    }
    st_buf_puts(b, "}");
    st_record_figures_to_json(best, ",\n  ", b);
    st_json_put_key(b, ",\n  ", "tolerance");
    st_json_put_number(b, e->tolerance);
    describe_field(b, "kernels", "kernels.cl");
    describe_field(b, "kernels_sha256", sha);
    describe_field(b, "host", "host.c");
    describe_field(b, "host_sha256", host_sha);
    describe_field(b, "exported_at", when);
    st_buf_puts(b, "\n}\n");
}

/* The ok records of rs, fastest first (pointers into rs; free the array). */
static const st_record **ranked(const st_records *rs, size_t *n) {
    const st_record **order = calloc(rs->count + 1, sizeof *order);
    *n = 0;
    for (size_t i = 0; order && i < rs->count; i++)
        if (rs->items[i].status == ST_STATUS_OK) order[(*n)++] = &rs->items[i];
    if (order) qsort(order, *n, sizeof *order, by_median);
    return order;
}

typedef struct exporting {
    st_exploration e;
    st_records records;
    st_space *space;
    st_ctx *cx;
    st_arena *arena;
    const st_record **order;
    variant *vs;
    size_t nvs;
} exporting;

static void finish(exporting *x) {
    for (size_t i = 0; i < x->nvs; i++) free(x->vs[i].strategy);
    free(x->vs);
    free(x->order);
    st_space_free(x->space);
    st_records_free(&x->records);
    st_arena_free(x->arena);
    st_ctx_free(x->cx);
    st_exploration_free(&x->e);
}

/* A record names its point and that point's strategy: the strategy is the
 * space's own at that point, or the records are not this exploration's (a
 * record edited by hand would otherwise export a strategy from outside the
 * space under the exploration's name). */
static bool record_in_space(const st_space *space, const st_record *r, const char *path, st_err *err) {
    if (r->point >= st_space_npoints(space))
        return st_fail(err, (st_loc){path, 0, 0}, "the record of point %llu names no point of the space (it has %llu)",
                       (unsigned long long)r->point, (unsigned long long)st_space_npoints(space));
    st_buf text = {0};
    bool admitted;
    st_err why = {0};
    if (!st_space_point(space, r->point, NULL, &text, &admitted, &why)) {
        st_buf_free(&text);
        return st_fail_internal(err, "out of memory");
    }
    bool same = text.data && !strcmp(text.data, r->strategy);
    if (!same)
        st_fail(err, (st_loc){path, 0, 0}, "the record of point %llu says `%s`, but the space's point %llu is `%s`",
                (unsigned long long)r->point, r->strategy, (unsigned long long)r->point, text.data ? text.data : "");
    st_buf_free(&text);
    return same;
}

bool st_export(const st_export_setup *s, const st_registry *reg, st_export_result *out, st_err *err) {
    memset(out, 0, sizeof *out);
    exporting x = {0};
    char path[4200];
    size_t truncated, nok = 0;
    bool ok = st_exploration_read(s->dir, &x.e, err) && plugins_loaded(x.e.json, reg, err);
    snprintf(path, sizeof path, "%s/results.jsonl", s->dir);
    ok = ok && st_records_read(path, &x.records, &truncated, err) &&
         (x.space = st_space_parse("space", x.e.space, err)) != NULL;
    if (ok && !(x.cx = st_ctx_new())) ok = st_fail_internal(err, "out of memory");
    if (ok && !(x.arena = st_arena_new())) ok = st_fail_internal(err, "out of memory");
    if (ok && !(x.order = ranked(&x.records, &nok))) ok = st_fail_internal(err, "out of memory");
    if (ok && !nok) ok = st_fail(err, (st_loc){path, 0, 0}, "no variant of this exploration ran correctly: nothing to export");
    const st_program *program = NULL;
    const st_def *def = NULL;
    char program_file[4200];
    snprintf(program_file, sizeof program_file, "%s/program.strata", s->dir);
    /* named as the exploration named it: the kernels' text (their first
     * line names the program) and so their SHA-256 and build are the ones
     * explored */
    const char *explored_as = st_json_get_string(x.e.json, "program");
    if (ok) program = st_parse_program(x.cx, explored_as ? explored_as : program_file, x.e.program_source,
                                       strlen(x.e.program_source), err);
    if (ok && program) def = st_program_entry(program, x.e.entry, err);
    ok = ok && def;
    /* the exploration's own conditions, on its device (named: an index
     * may differ from machine to machine) */
    st_explore_setup setup = {.cx = x.cx, .program = program, .def = def, .reg = reg, .program_path = program_file,
                              .program_source = x.e.program_source, .program_name = x.e.program_name,
                              .inputs = x.e.inputs, .ninputs = x.e.ninputs, .seed = x.e.seed, .device = x.e.device,
                              .cache_dir = s->cache_dir, .runs = x.e.runs, .warmups = x.e.warmups, .tolerance = x.e.tolerance,
                              .timeout_s = s->timeout_s, .build_timeout_s = s->timeout_s, .jobs = 1};
    bench b;
    ok = ok && bench_open(&b, &setup, x.arena, err);
    size_t top = nok < s->top ? nok : s->top;
    if (ok && !(x.vs = calloc(top + 1, sizeof *x.vs))) ok = st_fail_internal(err, "out of memory");
    variant *winner = NULL;
    for (size_t i = 0; ok && i < top; i++) {
        variant *v = &x.vs[x.nvs++];
        v->point = x.order[i]->point;
        if (!(ok = record_in_space(x.space, x.order[i], path, err))) break;
        if (!(v->strategy = strdup(x.order[i]->strategy))) {
            ok = st_fail_internal(err, "out of memory");
            break;
        }
        st_record figures = {0};
        if (!(ok = variant_measure(&b, x.arena, v, s->timeout_s, s->timeout_s, &figures, err))) break;
        out->measured++;
        if (v->status == ST_STATUS_OK && (!winner || figures.median_ms < out->best.median_ms)) {
            /* the explored record with the figures of now */
            if (!st_record_copy(&out->best, x.order[i])) ok = st_fail_internal(err, "out of memory");
            record_take_figures(&out->best, &figures);
            winner = v;
        }
        st_record_clear(&figures);
    }
    if (ok && !winner)
        ok = st_fail(err, (st_loc){0}, "none of the %zu best variants ran correctly again (the first: %s)", top,
                     x.vs[0].message);
    ok = ok && bench_device(&b, &out->device, err);
    if (ok) {
        char slug[128], rel[400];
        st_device_key(&out->device, slug, sizeof slug);
        /* (the program's name was checked as explore.json was read) */
        ok = st_folder_name_check(slug, (st_loc){0}, "the device's folder", err);
        snprintf(out->program_name, sizeof out->program_name, "%s", x.e.program_name);
        snprintf(rel, sizeof rel, "%s/%s", slug, x.e.program_name);
        snprintf(out->path, sizeof out->path, "%s/%s", s->into, rel);
        st_buf record = {0};
        describe_export(&x.e, &out->device, x.space, &out->best, winner, &record);
        /* the kernels as every backend starts from them, and as the device's
         * backend runs them where that is another text */
        const st_backend *first = st_backends(NULL)[0], *backend = st_device_backend(&out->device);
        /* the files as a set: written into a fresh folder beside the export's,
         * which then replaces it whole (kernels never beside another
         * export's record, after a kill or a full disk), then the index */
        char device_dir[4200], fresh[4400];
        snprintf(device_dir, sizeof device_dir, "%s/%s", s->into, slug);
        st_lock lock = {-1};
        bool locked = ok && index_lock(s->into, &lock, err);
        if (locked) st_remove_leftovers(out->path); /* of exports killed while they held the lock */
        bool made = locked && st_make_dirs(device_dir, err) && st_folder_fresh(out->path, fresh, sizeof fresh, err);
        ok = made && write_in(fresh, first->kernel_file, st_backend_kernels(first, &winner->code), err) &&
             (backend == first ||
              write_in(fresh, backend->kernel_file, st_backend_kernels(backend, &winner->code), err)) &&
             write_in(fresh, "host.c", winner->code.host, err) &&
             write_in(fresh, "program.strata", winner->program, err) &&
             write_in(fresh, "record.json", record.data ? record.data : "", err) &&
             st_folder_replace(fresh, out->path, err);
        if (made && !ok) st_folder_discard(fresh);
        ok = ok && index_add(s->into, &out->device, x.e.program_name, out->best.strategy, rel, out->best.median_ms,
                             out->best.gb_per_s, err);
        st_lock_release(&lock);
        st_buf_free(&record);
    }
    finish(&x);
    return ok;
}

void st_export_result_free(st_export_result *r) { st_record_clear(&r->best); }
