/* explore/merge.c — explorations of one space (shards on many machines)
 * merged into one directory, and an exploration's description read back. */
#include "workdir.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *arena_copy(st_arena *a, const char *s) {
    size_t n = strlen(s) + 1;
    char *d = st_arena_alloc(a, n);
    if (d) memcpy(d, s, n);
    return d;
}

static bool read_exploration(const char *dir, st_exploration *e, st_err *err);

bool st_exploration_read(const char *dir, st_exploration *e, st_err *err) {
    if (read_exploration(dir, e, err)) return true;
    st_exploration_free(e); /* a failure leaves nothing to free */
    return false;
}

static bool read_exploration(const char *dir, st_exploration *e, st_err *err) {
    memset(e, 0, sizeof *e);
    char path[4200];
    snprintf(path, sizeof path, "%s/explore.json", dir);
    size_t len;
    st_err why;
    char *text = st_read_file(path, &len, &why);
    if (!text)
        return st_fail(err, (st_loc){path, 0, 0}, "%s: is %s a directory that strata explore wrote?", why.message,
                       dir);
    if (!(e->arena = st_arena_new())) {
        free(text);
        return st_fail_internal(err, "out of memory");
    }
    e->json = st_json_parse(e->arena, path, text, len, err);
    free(text);
    if (!e->json) return false;
    const st_json *j = e->json, *inputs = st_json_get(j, "inputs");
    uint64_t seed = 0, runs = 0, warmups = 0;
    double tolerance = 0;
    e->program_name = st_json_get_string(j, "program_name");
    e->entry = st_json_get_string(j, "entry");
    e->space = st_json_get_string(j, "space");
    e->device = st_json_get_string(j, "device");
    /* the device of an exploration on another backend than the default is
     * named to st_cl_open as that backend's, or its export would look for it
     * among the default backend's devices */
    const st_backend *backend = st_backend_named(st_json_get_string(j, "backend"));
    if (e->device && backend) {
        size_t cap = strlen(backend->name) + 1 + strlen(e->device) + 1;
        char *spec = st_arena_zalloc(e->arena, cap);
        if (!spec) return st_fail_internal(err, "out of memory");
        e->device = st_backend_spec(backend, e->device, spec, cap);
    }
    if (!e->program_name || !e->entry || !e->space || !e->device || !inputs || inputs->kind != ST_JSON_ARRAY ||
        !st_json_get_number(j, "seed", NULL) || !st_json_get_number(j, "runs", NULL) ||
        !st_json_get_number(j, "warmups", NULL) || !st_json_get_number(j, "tolerance", &tolerance))
        return st_fail(err, (st_loc){path, 0, 0}, "not an exploration's description (a field is missing)");
    /* counts are whole numbers in range: a number read as one otherwise
     * would be converted to an integer it has no value in */
    if (!st_json_get_whole(j, "seed", UINT64_MAX, &seed) || !st_json_get_whole(j, "runs", ST_EXPLORE_MAX_RUNS, &runs) ||
        !runs || !st_json_get_whole(j, "warmups", ST_EXPLORE_MAX_RUNS, &warmups) || !(tolerance >= 0) ||
        inputs->len > UINT32_MAX)
        return st_fail(err, (st_loc){path, 0, 0},
                       "not an exploration's description (seed is no whole number, runs and warmups no whole numbers "
                       "up to %d, runs not above 0, or tolerance negative)", ST_EXPLORE_MAX_RUNS);
    /* the name export files the exploration under, in a folder of its own */
    if (!st_folder_name_check(e->program_name, (st_loc){dir, 0, 0}, "explore.json's \"program_name\"", err))
        return false; /* (named by dir, which outlives path) */
    const char **in = st_arena_zalloc(e->arena, (inputs->len + 1) * sizeof *in);
    if (!in) return st_fail_internal(err, "out of memory");
    for (size_t i = 0; i < inputs->len; i++)
        if (!(in[i] = inputs->items[i].kind == ST_JSON_STRING ? inputs->items[i].string : NULL))
            return st_fail(err, (st_loc){path, 0, 0}, "not an exploration's description (inputs are not text)");
    e->inputs = in;
    e->ninputs = (uint32_t)inputs->len;
    e->seed = seed;
    e->runs = (uint32_t)runs;
    e->warmups = (uint32_t)warmups;
    e->tolerance = tolerance;
    snprintf(path, sizeof path, "%s/program.strata", dir);
    char *src = st_read_file(path, &len, err);
    if (!src) return false;
    e->program_source = arena_copy(e->arena, src);
    free(src);
    return e->program_source || st_fail_internal(err, "out of memory");
}

void st_exploration_free(st_exploration *e) {
    st_arena_free(e->arena);
    memset(e, 0, sizeof *e);
}

/* The fields two explorations of one thing share, joined as text. */
static void identity(const st_json *j, st_buf *out) {
    /* "strata", the build: another generated other kernels, and timed them */
    static const char *const keys[] = {"strata", "program_sha256", "entry", "space", "device"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const char *v = st_json_get_string(j, keys[i]);
        st_buf_printf(out, "%s=%s\n", keys[i], v ? v : "?");
    }
    const st_json *inputs = st_json_get(j, "inputs");
    for (size_t i = 0; inputs && inputs->kind == ST_JSON_ARRAY && i < inputs->len; i++)
        st_buf_printf(out, "input=%s\n", inputs->items[i].kind == ST_JSON_STRING ? inputs->items[i].string : "?");
    double seed = -1;
    st_json_get_number(j, "seed", &seed);
    st_buf_printf(out, "seed=%.0f\n", seed);
    /* a plugin is its content: the same build, wherever it lies */
    const st_json *plugins = st_json_get(j, "plugins");
    for (size_t i = 0; plugins && plugins->kind == ST_JSON_ARRAY && i < plugins->len; i++) {
        const char *path = st_json_get_string(&plugins->items[i], "path"), *sha = st_json_get_string(&plugins->items[i], "sha256");
        const char *base = path && strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
        st_buf_printf(out, "plugin=%s (SHA-256 %.12s…)\n", base ? base : "?", sha ? sha : "?");
    }
}

/* The first line where two identities differ, for the message. */
static void first_difference(const char *a, const char *b, char *out, size_t cap) {
    while (*a && *a == *b) {
        const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
        if (!ea || !eb || ea - a != eb - b || memcmp(a, b, (size_t)(ea - a))) break;
        a = ea + 1;
        b = eb + 1;
    }
    size_t n = strcspn(a, "\n"), m = strcspn(b, "\n");
    snprintf(out, cap, "it has %.*s, this one %.*s", (int)(n > 200 ? 200 : n), a, (int)(m > 200 ? 200 : m), b);
}

bool explorations_agree(const st_json *was, const st_json *now, char *diff, size_t cap) {
    st_buf x = {0}, y = {0};
    identity(was, &x);
    identity(now, &y);
    bool same = x.data && y.data && !strcmp(x.data, y.data);
    if (!same) first_difference(x.data ? x.data : "", y.data ? y.data : "", diff, cap);
    st_buf_free(&x);
    st_buf_free(&y);
    return same;
}

/* Move the records of dir's results.jsonl to the end of all. */
static bool gather(const char *dir, st_records *all, st_err *err) {
    char path[4200];
    snprintf(path, sizeof path, "%s/results.jsonl", dir);
    st_records rs;
    size_t truncated;
    if (!st_records_read(path, &rs, &truncated, err)) return false;
    bool ok = true;
    for (size_t i = 0; ok && i < rs.count; i++) {
        if (!st_records_push(all, &rs.items[i])) ok = st_fail_internal(err, "out of memory");
        else memset(&rs.items[i], 0, sizeof rs.items[i]); /* moved */
    }
    st_records_free(&rs);
    return ok;
}

/* Is out one of the directories merged (the same folder, however named)? */
static bool among(const char *out, const char *const *dirs, uint32_t ndirs) {
    struct stat o, d;
    if (stat(out, &o) != 0) return false;
    for (uint32_t i = 0; i < ndirs; i++)
        if (stat(dirs[i], &d) == 0 && d.st_dev == o.st_dev && d.st_ino == o.st_ino) return true;
    return false;
}

/* The warnings of a merge, a line each; past the first few of a kind, a count. */
enum { WARNINGS_SHOWN = 10 };
static void warn(st_buf *w, size_t *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void warn(st_buf *w, size_t *n, const char *fmt, ...) {
    if ((*n)++ >= WARNINGS_SHOWN) return;
    va_list ap;
    va_start(ap, fmt);
    char line[700];
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    st_buf_printf(w, "%s\n", line);
}

/* Every point once. all is sorted by point, each point's records in the
 * order of the directories. Shards that disagree about a point (ok in one,
 * wrong_answer in another: a flaky variant, or a device that differs) keep
 * the failure: a variant that failed once is not to be exported. Records
 * of points the space does not have (edited, or of another strata) are
 * dropped. Both are said in sum->warnings. */
static void one_per_point(st_records *all, const st_space *space, st_buf *warnings) {
    uint64_t npoints = st_space_npoints(space);
    size_t kept = 0, outside = 0, disagree = 0;
    for (size_t i = 0; i < all->count;) {
        size_t end = i + 1;
        while (end < all->count && all->items[end].point == all->items[i].point) end++;
        st_record *keep = &all->items[i];
        if (keep->point >= npoints) {
            warn(warnings, &outside, "point %llu is outside the space (it has %llu points): its record is dropped",
                 (unsigned long long)keep->point, (unsigned long long)npoints);
            keep = NULL;
        }
        for (size_t k = i + 1; keep && k < end; k++) {
            const st_record *r = &all->items[k];
            if (r->status == keep->status) continue;
            warn(warnings, &disagree, "point %llu (%s): %s in one exploration, %s in another; kept %s",
                 (unsigned long long)keep->point, keep->strategy, st_status_name(keep->status),
                 st_status_name(r->status), keep->status == ST_STATUS_OK ? st_status_name(r->status)
                                                                           : st_status_name(keep->status));
            if (keep->status == ST_STATUS_OK) keep = &all->items[k];
        }
        for (size_t k = i; k < end; k++) {
            if (&all->items[k] == keep) all->items[kept++] = all->items[k];
            else st_record_clear(&all->items[k]);
        }
        i = end;
    }
    all->count = kept;
    if (outside > WARNINGS_SHOWN)
        st_buf_printf(warnings, "… %zu records outside the space in all\n", outside);
    if (disagree > WARNINGS_SHOWN)
        st_buf_printf(warnings, "… %zu points on which the explorations disagree in all\n", disagree);
}

bool st_merge(const char *const *dirs, uint32_t ndirs, const char *out, st_explore_summary *sum, st_err *err) {
    memset(sum, 0, sizeof *sum);
    if (!ndirs) return st_fail(err, (st_loc){0}, "nothing to merge");
    st_exploration first, other;
    if (!st_exploration_read(dirs[0], &first, err)) return false;
    st_records all = {0};
    st_space *space = NULL;
    bool ok = true;
    for (uint32_t d = 0; ok && d < ndirs; d++) {
        if (d && !(ok = st_exploration_read(dirs[d], &other, err))) break;
        char diff[600];
        if (d && !explorations_agree(first.json, other.json, diff, sizeof diff))
            ok = st_fail(err, (st_loc){dirs[d], 0, 0}, "explored something else than %s (%s)", dirs[0], diff);
        if (d) st_exploration_free(&other);
        ok = ok && gather(dirs[d], &all, err);
    }
    ok = ok && (space = st_space_parse("space", first.space, err));
    /* out is locked as explore locks it, and refused as explore refuses
     * it when it holds another exploration; when it holds this one and was
     * not merged, its records join the merge rather than being lost */
    char meta_path[4200];
    snprintf(meta_path, sizeof meta_path, "%s/explore.json", dirs[0]);
    size_t meta_len;
    char *meta = ok ? st_read_file(meta_path, &meta_len, err) : NULL;
    st_lock lock = {.fd = -1};
    bool held = false;
    ok = ok && meta && st_make_dirs(out, err) && workdir_lock(out, &lock, err) &&
         workdir_holds(out, meta, &held, err);
    if (ok && held && !among(out, dirs, ndirs)) ok = gather(out, &all, err);
    if (ok && !st_records_sort(&all)) ok = st_fail_internal(err, "out of memory");
    if (ok) one_per_point(&all, space, &sum->warnings);
    char path[4200];
    st_buf lines = {0};
    for (size_t i = 0; ok && i < all.count; i++) {
        st_record_to_json(&all.items[i], &lines);
        st_buf_puts(&lines, "\n");
        sum->counts[all.items[i].status]++;
    }
    if (ok && lines.failed) ok = st_fail_internal(err, "out of memory");
    /* the records first, explore.json last: a folder with an explore.json
     * is an exploration, and its records are whole */
    snprintf(path, sizeof path, "%s/results.jsonl", out);
    ok = ok && st_write_file(path, lines.data ? lines.data : "", lines.len, err);
    st_buf_free(&lines);
    snprintf(path, sizeof path, "%s/program.strata", out);
    ok = ok && st_write_file(path, first.program_source, strlen(first.program_source), err);
    snprintf(path, sizeof path, "%s/explore.json", out);
    ok = ok && st_write_file(path, meta, meta_len, err);
    free(meta);
    if (ok) {
        sum->points = all.count;
        snprintf(sum->device.name, sizeof sum->device.name, "%s", first.device);
        char csv[4200], svg[4200], title[600];
        snprintf(csv, sizeof csv, "%s/results.csv", out);
        snprintf(svg, sizeof svg, "%s/results.svg", out);
        snprintf(title, sizeof title, "%s on %s: GB/s", first.program_name, first.device);
        const st_record *best = st_records_best(&all);
        if (best && !st_record_copy(&sum->best, best)) ok = st_fail_internal(err, "out of memory");
        ok = st_records_write_csv(&all, space, csv, err) &&
             st_records_write_svg(&all, space, title, svg, &sum->chart, err);
    }
    st_lock_release(&lock);
    st_space_free(space);
    st_records_free(&all);
    st_exploration_free(&first);
    return ok;
}
