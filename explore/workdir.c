/* explore/workdir.c — an exploration's directory: claimed, journaled,
 * reported (see workdir.h). */
#include "workdir.h"

#include "build_id.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* explore.json: what was explored, where, how; the first lines are what a
 * resumed or merged exploration must agree on. */
static bool describe(const st_explore_setup *s, const st_space *space, const st_device_info *dev, uint32_t shard,
                     uint32_t nshards, st_buf *b, st_err *err) {
    char sha[65];
    st_sha256_hex(s->program_source, strlen(s->program_source), sha);
    st_buf_puts(b, "{\n  \"strata_explore\": 1");
    describe_field(b, "strata", STRATA_BUILD);
    describe_field(b, "program_sha256", sha);
    describe_field(b, "entry", s->def->name);
    describe_field(b, "space", st_space_text(space));
    st_buf_puts(b, ",\n  \"inputs\": [");
    for (uint32_t i = 0; i < s->ninputs; i++) {
        st_buf_puts(b, i ? ", " : "");
        st_json_put_string(b, s->inputs[i]);
    }
    st_buf_printf(b, "],\n  \"seed\": %llu", (unsigned long long)s->seed);
    describe_device(b, dev);
    if (!describe_plugins(b, s->reg, err)) return false;
    describe_field(b, "program", s->program_path);
    describe_field(b, "program_name", s->program_name);
    st_buf_puts(b, ",\n  \"dims\": [");
    for (uint32_t d = 0; d < st_space_ndims(space); d++) {
        st_buf_puts(b, d ? ", " : "");
        st_json_put_string(b, st_space_dim_at(space, d)->name);
    }
    st_buf_printf(b, "],\n  \"runs\": %u,\n  \"warmups\": %u,\n  \"tolerance\": ", s->runs, s->warmups);
    st_json_put_number(b, s->tolerance);
    st_buf_printf(b, ",\n  \"shard\": \"%u/%u\"\n}\n", shard, nshards);
    return true;
}

/* Write explore.json and program.strata, or check that dir holds this very
 * exploration already. */
static bool claim_dir(const char *dir, const char *meta, const st_explore_setup *s, st_err *err) {
    bool held;
    if (!workdir_holds(dir, meta, &held, err)) return false;
    char path[4200];
    /* program.strata first: explore.json is what makes the folder an
     * exploration, so it comes last (and an older strata killed between
     * the two left a folder that gets its program now: the same text, by
     * its SHA-256 in explore.json) */
    workdir_path(dir, "program.strata", path, sizeof path);
    struct stat st;
    if (held && stat(path, &st) == 0) return true;
    if (!st_write_file(path, s->program_source, strlen(s->program_source), err)) return false;
    if (held) return true;
    workdir_path(dir, "explore.json", path, sizeof path);
    return st_write_file(path, meta, strlen(meta), err);
}

/* Cut a last line left unfinished by an interruption, so that appending
 * starts on a line of its own. */
static bool drop_partial_line(const char *path, st_err *err) {
    size_t len;
    bool absent;
    char *text = st_read_file_if_any(path, ST_FILE_MAX, "a file", &len, &absent, err);
    if (!text) return absent; /* absent: no records yet */
    size_t keep = len;
    while (keep && text[keep - 1] != '\n') keep--;
    free(text);
    if (keep != len && truncate(path, (off_t)keep) != 0)
        return st_fail(err, (st_loc){path, 0, 0}, "cannot cut its unfinished last line: %s", strerror(errno));
    return true;
}

/* ---- records ---- */

static bool journal_append(workdir *j, const st_record *r, st_err *err) {
    st_buf b = {0};
    st_record_to_json(r, &b);
    st_buf_puts(&b, "\n");
    if (b.failed) return st_buf_free(&b), st_fail_internal(err, "out of memory");
    /* one write() of the whole line, O_APPEND: a line never interleaves
     * with another writer's, and one cut short (a full disk, a kill) is
     * the last line, which the next open cuts off */
    ssize_t n;
    do n = write(j->journal, b.data, b.len);
    while (n < 0 && errno == EINTR);
    bool whole = n >= 0 && (size_t)n == b.len;
    int why = n < 0 ? errno : ENOSPC;
    st_buf_free(&b);
    if (!whole) return st_fail(err, (st_loc){j->records, 0, 0}, "cannot append a record: %s", strerror(why));
    fsync(j->journal); /* a record written is a variant not redone */
    return true;
}

/* The record of v, its dimension values taken from which[]. */
bool record_of(const st_space *space, const variant *v, const uint32_t *which, st_record *r) {
    memset(r, 0, sizeof *r);
    r->point = v->point;
    r->strategy = strdup(v->strategy);
    r->message = strdup(v->message);
    r->status = v->status;
    r->build_ms = v->build_ms;
    snprintf(r->kernels_sha256, sizeof r->kernels_sha256, "%s", v->sha);
    uint32_t nd = st_space_ndims(space);
    r->values = calloc(nd + 1, sizeof *r->values);
    bool ok = r->strategy && r->message && r->values;
    for (uint32_t d = 0; ok && d < nd; d++) {
        ok = (r->values[d] = strdup(st_space_dim_at(space, d)->values[which[d]])) != NULL;
        r->nvalues += ok;
    }
    return ok;
}


bool workdir_open(workdir *w, const st_explore_setup *s, const st_space *space, const st_device_info *dev,
                  const char *dir, uint32_t shard, uint32_t nshards, st_err *err) {
    memset(w, 0, sizeof *w);
    w->dir = dir;
    w->journal = -1;
    w->lock.fd = -1;
    workdir_path(dir, "results.jsonl", w->records, sizeof w->records);
    st_buf meta = {0};
    size_t truncated = 0;
    /* (the name results/ will file it under: refused before any file is written) */
    bool ok = st_folder_name_check(s->program_name, (st_loc){s->program_path, 0, 0},
                                   "the program's name (its file's name up to the first `.`)", err) &&
              st_make_dirs(dir, err) && workdir_lock(dir, &w->lock, err) &&
              describe(s, space, dev, shard, nshards, &meta, err) &&
              claim_dir(dir, meta.data ? meta.data : "", s, err) && drop_partial_line(w->records, err) &&
              st_records_read(w->records, &w->done, &truncated, err);
    st_buf_free(&meta);
    if (ok && !st_records_sort(&w->done)) ok = st_fail_internal(err, "out of memory");
    if (ok && (w->journal = st_open_regular(w->records, O_WRONLY | O_APPEND | O_CREAT, NULL, err)) < 0) ok = false;
    return ok;
}

bool workdir_append(workdir *w, const st_record *r, st_err *err) { return journal_append(w, r, err); }

static void tally(const st_records *rs, st_explore_summary *sum) {
    memset(sum->counts, 0, sizeof sum->counts);
    for (size_t i = 0; i < rs->count; i++) sum->counts[rs->items[i].status]++;
}

bool workdir_close(workdir *w, const st_explore_setup *s, const st_space *space, st_explore_summary *sum,
                   st_err *err) {
    if (w->journal >= 0) close(w->journal);
    w->journal = -1;
    st_records_free(&w->done);
    /* the reports cover every record in dir, resumed ones included */
    size_t truncated;
    bool ok = st_records_read(w->records, &w->done, &truncated, err);
    if (ok) {
        tally(&w->done, sum);
        const st_record *best = st_records_best(&w->done);
        if (best) st_record_copy(&sum->best, best);
        char csv[4200], svg[4200], title[600];
        workdir_path(w->dir, "results.csv", csv, sizeof csv);
        workdir_path(w->dir, "results.svg", svg, sizeof svg);
        snprintf(title, sizeof title, "%s on %s: GB/s", s->program_name, sum->device.name);
        ok = st_records_write_csv(&w->done, space, csv, err) &&
             st_records_write_svg(&w->done, space, title, svg, &sum->chart, err);
    }
    st_records_free(&w->done);
    st_lock_release(&w->lock);
    return ok;
}

void workdir_free(workdir *w) {
    if (!w->dir) return; /* never opened */
    if (w->journal >= 0) close(w->journal);
    w->journal = -1;
    st_records_free(&w->done);
    st_lock_release(&w->lock);
}

/* A space whose strategy text is not well-formed fails every point alike:
 * find out from its first point, before the directory is claimed, so that
 * the corrected command can use the same --out. */
bool space_well_formed(const st_explore_setup *s, const st_space *space, st_err *err) {
    st_buf text = {0};
    bool admitted;
    st_err why = {0};
    if (!st_space_point(space, 0, NULL, &text, &admitted, &why) || text.failed) {
        st_buf_free(&text);
        return *err = why, false;
    }
    const st_strategy *parsed = st_strategy_parse(s->cx, s->reg, "space", text.data ? text.data : "", &why);
    st_buf_free(&text);
    if (parsed || why.arg >= 0) return true;
    *err = why;
    if (why.loc.line) err->loc.col = st_space_column(space, 0, why.loc.col);
    return false;
}

