/* explore/session.c — an exploration a point at a time, on request: what
 * `strata explore --serve` answers the autotuner with. The directory, its
 * records and the statuses are the driver's (workdir.c, variant.c); only
 * the order of the points is someone else's. */
#include "workdir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The point being evaluated, written before and removed after: a session
 * that finds it at its start knows that the process evaluating that point
 * died, and records it as a crash itself. So statuses and times are always
 * the server's; the client only names points. */
#define EVALUATING "serve-evaluating"

struct st_session {
    const st_explore_setup *s;
    char evaluating[4200]; /* DIR/EVALUATING (messages name DIR, which outlives the session) */
    const st_space *space;
    st_arena *a;         /* the inputs and the interpreter's result, for the whole session */
    bench bench;
    workdir dir;         /* done: the records found when it opened, sorted by point */
    st_records fresh;    /* and those recorded since, in order */
    st_device_info device;
};

/* The latest record of point, or NULL. */
static const st_record *recorded_of(const st_session *ss, uint64_t point) {
    for (size_t i = ss->fresh.count; i-- > 0;)
        if (ss->fresh.items[i].point == point) return &ss->fresh.items[i];
    return st_records_find(&ss->dir.done, point);
}

/* Journal rec, keep a copy, hand one back. */
static bool keep(st_session *ss, st_record *rec, st_record *out, st_err *err) {
    bool ok = workdir_append(&ss->dir, rec, err);
    st_record copy = {0};
    if (ok && !(st_record_copy(&copy, rec) && st_records_push(&ss->fresh, &copy))) {
        st_record_clear(&copy);
        ok = st_fail_internal(err, "out of memory");
    }
    if (ok) *out = *rec;
    else st_record_clear(rec);
    return ok;
}

/* The point's strategy text and dimension values; *admitted false (why in
 * v->message) when the space's constraints reject it. */
static bool point_of(const st_session *ss, uint64_t point, variant *v, uint32_t *which, bool *admitted, st_err *err) {
    uint64_t n = st_space_npoints(ss->space);
    if (point >= n)
        return st_fail(err, (st_loc){0}, "point %llu is not in the space: it has points 0 to %llu", (unsigned long long)point,
                       (unsigned long long)(n - 1));
    st_buf text = {0};
    st_err why = {0};
    if (!st_space_point(ss->space, point, which, &text, admitted, &why) || text.failed) {
        st_buf_free(&text);
        return *err = why, false;
    }
    v->point = point;
    v->strategy = text.data ? text.data : strdup("");
    if (!v->strategy) return st_fail_internal(err, "out of memory");
    if (!*admitted) {
        v->status = ST_STATUS_CONSTRAINT;
        snprintf(v->message, sizeof v->message, "%s", why.message);
    }
    return true;
}

/* Record point as a crash found outside a measurement: the process that
 * evaluated it died. */
static bool record_crash(st_session *ss, uint64_t point, const char *message, st_record *out, st_err *err) {
    memset(out, 0, sizeof *out);
    variant v = {0};
    uint32_t *which = calloc(st_space_ndims(ss->space) + 1, sizeof *which);
    st_record rec = {0};
    bool admitted;
    bool ok = which || st_fail_internal(err, "out of memory");
    ok = ok && point_of(ss, point, &v, which, &admitted, err);
    if (ok) {
        v.status = ST_STATUS_CRASH;
        snprintf(v.message, sizeof v.message, "%s", message);
        if (!record_of(ss->space, &v, which, &rec)) ok = st_fail_internal(err, "out of memory");
    }
    ok = ok && keep(ss, &rec, out, err);
    if (!ok) st_record_clear(&rec);
    free(v.strategy);
    free(which);
    return ok;
}

/* A point a previous session died evaluating: recorded as a crash (and
 * the mark removed) before anything else. A mark that names no point of
 * the space is refused, naming the file. */
static bool crashed_before(st_session *ss, st_err *err) {
    bool absent;
    size_t len;
    char *text = st_read_file_if_any(ss->evaluating, ST_FILE_MAX, "a file", &len, &absent, err);
    if (!text) return absent; /* absent: the last session ended between points */
    char *end;
    errno = 0;
    unsigned long long point = strtoull(text, &end, 10);
    bool whole = end != text && text[0] >= '0' && text[0] <= '9' && (*end == '\n' || !*end) && !errno;
    free(text);
    if (!whole || point >= st_space_npoints(ss->space))
        return st_fail(err, (st_loc){ss->dir.dir, 0, 0},
                       EVALUATING " names no point of the space (it names the point a session was evaluating when "
                       "it died: remove it if it is not this exploration's)");
    st_record rec;
    if (!record_crash(ss, point, "the strata process evaluating it died", &rec, err)) return false;
    st_record_clear(&rec);
    if (unlink(ss->evaluating) && errno != ENOENT)
        return st_fail(err, (st_loc){ss->dir.dir, 0, 0}, "cannot remove " EVALUATING ": %s", strerror(errno));
    return true;
}

st_session *st_session_open(const st_explore_setup *s, const st_space *space, const char *dir, st_device_info *device,
                            st_err *err) {
    if (!s->runs || !(s->timeout_s > 0) || !(s->build_timeout_s > 0))
        return st_fail_internal(err, "an exploration needs runs and time limits above 0"), NULL;
    st_session *ss = calloc(1, sizeof *ss);
    if (!ss || !(ss->a = st_arena_new())) {
        free(ss);
        return st_fail_internal(err, "out of memory"), NULL;
    }
    ss->s = s;
    ss->space = space;
    snprintf(ss->evaluating, sizeof ss->evaluating, "%s/" EVALUATING, dir);
    if (!space_well_formed(s, space, err) || !bench_open(&ss->bench, s, ss->a, err) || !bench_device(&ss->bench, &ss->device, err) ||
        !workdir_open(&ss->dir, s, space, &ss->device, dir, 0, 1, err) || !crashed_before(ss, err)) {
        workdir_free(&ss->dir);
        st_records_free(&ss->fresh);
        st_arena_free(ss->a);
        free(ss);
        return NULL;
    }
    if (device) *device = ss->device;
    return ss;
}

bool st_session_evaluate(st_session *ss, uint64_t point, bool again, st_record *out, bool *recorded, st_err *err) {
    memset(out, 0, sizeof *out);
    const st_record *old = again ? NULL : recorded_of(ss, point);
    *recorded = old != NULL;
    if (old) return st_record_copy(out, old) || st_fail_internal(err, "out of memory");
    variant v = {0};
    uint32_t *which = calloc(st_space_ndims(ss->space) + 1, sizeof *which);
    st_arena *a = st_arena_new(); /* this point's code */
    st_record figures = {0}, rec = {0};
    bool admitted = false;
    bool ok = (which && a) || st_fail_internal(err, "out of memory");
    ok = ok && point_of(ss, point, &v, which, &admitted, err);
    char mark[32];
    snprintf(mark, sizeof mark, "%llu\n", (unsigned long long)point);
    ok = ok && (!admitted || st_write_file(ss->evaluating, mark, strlen(mark), err));
    if (ok && admitted)
        ok = variant_measure(&ss->bench, a, &v, ss->s->build_timeout_s, ss->s->timeout_s, &figures, err);
    if (ok && !record_of(ss->space, &v, which, &rec)) ok = st_fail_internal(err, "out of memory");
    if (ok && v.status == ST_STATUS_OK) record_take_figures(&rec, &figures);
    ok = ok && keep(ss, &rec, out, err);
    if (ok && admitted && unlink(ss->evaluating))
        ok = st_fail(err, (st_loc){ss->dir.dir, 0, 0}, "cannot remove " EVALUATING ": %s", strerror(errno));
    if (!ok) st_record_clear(&rec);
    st_record_clear(&figures);
    free(v.strategy);
    free(which);
    st_arena_free(a);
    return ok;
}

bool st_session_close(st_session *ss, st_explore_summary *summary, st_err *err) {
    if (!ss) return true;
    st_explore_summary ignored = {0}, *sum = summary ? summary : &ignored;
    memset(sum, 0, sizeof *sum);
    sum->device = ss->device;
    bool ok = workdir_close(&ss->dir, ss->s, ss->space, sum, err);
    st_records_free(&ss->fresh);
    st_arena_free(ss->a);
    free(ss);
    st_explore_summary_free(&ignored);
    return ok;
}
