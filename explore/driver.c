/* explore/driver.c — `strata explore`: the points of a space, a batch at a
 * time (ST_EXPLORE_BATCH), made into code, built and checked in parallel,
 * then timed one at a time, each in its own process, its record appended to
 * results.jsonl as soon as it is known. Building and checking run `jobs` at
 * a time; timing runs alone. A batch's code is freed before the next one is
 * made, so memory does not grow with the space. */
#include "workdir.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the exploration ---- */

typedef struct pending {
    variant v;
    uint32_t *which;
} pending;

typedef struct run {
    const st_explore_setup *s;
    const st_space *space;
    bench bench;
    pending *items;      /* this batch's */
    size_t count;
    uint64_t batch, batches;
    workdir dir;
    st_explore_progress_fn progress;
    void *progress_data;
    st_record best;      /* the best ok record so far */
    double started;      /* the exploration */
    double phase_started;/* this phase: what the ETA extrapolates from */
} run;

static void report(run *r, const char *phase, uint64_t done, uint64_t total, const st_record *last) {
    if (!r->progress) return;
    double now = child_now(), in_phase = now - r->phase_started;
    if (!done) r->phase_started = now, in_phase = 0;
    st_explore_progress p = {.phase = phase, .done = done, .total = total, .batch = r->batch, .batches = r->batches,
                             .elapsed_s = now - r->started,
                             .eta_s = done ? in_phase / (double)done * (double)(total - done) : -1, .last = last,
                             .best = r->best.strategy ? &r->best : NULL};
    r->progress(r->progress_data, &p);
}

/* Has the caller asked the exploration to stop (its SIGINT or SIGTERM)? */
static bool stopped(const run *r) { return r->s->stop && *r->s->stop; }

static bool interrupted(st_err *err) { return st_fail(err, (st_loc){0}, ST_EXPLORE_INTERRUPTED); }

static void consider_best(run *r, const st_record *rec) {
    if (rec->status == ST_STATUS_OK && (!r->best.strategy || rec->median_ms < r->best.median_ms))
        st_record_copy(&r->best, rec);
}

/* Variants with the same kernel source share one build and check: the
 * first of each group (its leader) runs, the others take its outcome.
 * leader[i] is i for a leader and for a variant without code. */
typedef struct by_source {
    const char *sha;
    size_t i;
} by_source;

static int compare_sources(const void *a, const void *b) {
    const by_source *x = a, *y = b;
    int c = strcmp(x->sha, y->sha);
    return c ? c : (x->i > y->i) - (x->i < y->i);
}

static bool group_by_source(const run *r, size_t *leader, size_t *members) {
    by_source *order = calloc(r->count + 1, sizeof *order);
    if (!order) return false;
    size_t n = 0;
    for (size_t i = 0; i < r->count; i++) {
        leader[i] = i;
        members[i] = 0;
        if (r->items[i].v.have_code) order[n++] = (by_source){r->items[i].v.sha, i};
    }
    qsort(order, n, sizeof *order, compare_sources);
    for (size_t k = 0; k < n; k++) {
        size_t first = k && !strcmp(order[k - 1].sha, order[k].sha) ? leader[order[k - 1].i] : order[k].i;
        leader[order[k].i] = first;
        members[first]++;
    }
    free(order);
    return true;
}

/* Build and check each distinct kernel source once, `jobs` at a time. */
static bool check_all(run *r, st_err *err) {
    size_t running = 0, next = 0, done = 0, total = 0;
    size_t *leader = calloc(r->count + 1, sizeof *leader), *members = calloc(r->count + 1, sizeof *members);
    child *slots = calloc(r->s->jobs, sizeof *slots);
    variant_job *jobs = calloc(r->s->jobs, sizeof *jobs);
    size_t *item_of = calloc(r->s->jobs, sizeof *item_of); /* which item each slot checks */
    bool ok = leader && members && slots && jobs && item_of && group_by_source(r, leader, members);
    if (!ok) st_fail_internal(err, "out of memory");
    for (size_t i = 0; ok && i < r->count; i++) total += members[i];
    for (uint32_t k = 0; ok && k < r->s->jobs; k++) slots[k].end = CHILD_EXITED; /* free */
    report(r, "check", 0, total, NULL);
    while (ok && (next < r->count || running)) {
        if (stopped(r)) { /* the children are killed below */
            ok = interrupted(err);
            break;
        }
        for (uint32_t k = 0; k < r->s->jobs && next < r->count; k++) { /* fill the free slots */
            if (slots[k].end == CHILD_RUNNING) continue;
            while (next < r->count && !(r->items[next].v.have_code && leader[next] == next)) next++;
            if (next == r->count) break;
            item_of[k] = next;
            jobs[k] = (variant_job){&r->bench, &r->items[next++].v};
            if (!(ok = child_start(&slots[k], variant_check_child, &jobs[k], r->s->build_timeout_s, err))) break;
            running++;
        }
        int k = running ? child_wait(slots, r->s->jobs, 0.5) : -1;
        if (k < 0 || stopped(r)) continue; /* an end an interrupt may have caused is no outcome */
        running--;
        variant *v = jobs[k].variant;
        char message[480]; /* room for what goes before it */
        variant_outcome(&slots[k], &v->status, message, sizeof message, NULL);
        snprintf(v->message, sizeof v->message, "%s%s", v->status == ST_STATUS_TIMEOUT ? "building and checking: " : "",
                 message);
        v->build_ms = (child_now() - slots[k].started) * 1e3;
        st_buf_free(&slots[k].out);
        done += members[item_of[k]];
        report(r, "check", done, total, NULL);
    }
    for (uint32_t k = 0; slots && k < r->s->jobs; k++) { /* after a failure: nothing may outlive the driver */
        child_kill(&slots[k]);
        st_buf_free(&slots[k].out);
    }
    for (size_t i = 0; ok && i < r->count; i++) { /* the others of each group take its outcome */
        variant *w = &r->items[i].v, *l = &r->items[leader[i]].v;
        if (l == w) continue;
        w->status = l->status;
        w->build_ms = l->build_ms;
        memcpy(w->message, l->message, sizeof w->message);
    }
    free(leader);
    free(members);
    free(slots);
    free(jobs);
    free(item_of);
    return ok;
}

/* Time each checked variant alone on the device; record every point. */
static bool time_all(run *r, st_err *err) {
    report(r, "time", 0, r->count, NULL);
    for (size_t i = 0; i < r->count; i++) {
        variant *v = &r->items[i].v;
        st_record rec;
        if (stopped(r)) return interrupted(err);
        if (v->status == ST_STATUS_OK) {
            st_record figures = {0};
            if (!variant_in_child(&r->bench, v, variant_time_child, r->s->timeout_s, &figures, err)) return false;
            if (stopped(r)) { /* its end may be the interrupt's doing: not recorded */
                st_record_clear(&figures);
                return interrupted(err);
            }
            if (!record_of(r->space, v, r->items[i].which, &rec)) {
                st_record_clear(&figures);
                st_record_clear(&rec);
                return st_fail_internal(err, "out of memory");
            }
            record_take_figures(&rec, &figures);
        } else if (!record_of(r->space, v, r->items[i].which, &rec)) {
            st_record_clear(&rec);
            return st_fail_internal(err, "out of memory");
        }
        bool ok = workdir_append(&r->dir, &rec, err);
        consider_best(r, &rec);
        report(r, "time", i + 1, r->count, &rec);
        st_record_clear(&rec);
        if (!ok) return false;
    }
    return true;
}


/* The points of this shard from the from'th (counted in the shard) not
 * recorded yet, up to `batch` of them, made into code (in a); *next is
 * where the next batch starts. */
static bool prepare_points(run *r, const st_records *done, uint32_t shard, uint32_t nshards, uint64_t from,
                           uint64_t batch, uint64_t *next, st_arena *a, st_explore_summary *sum, st_err *err) {
    uint64_t npoints = st_space_npoints(r->space);
    uint32_t nd = st_space_ndims(r->space);
    size_t cap = 0;
    uint64_t p = shard + from * nshards;
    for (; p < npoints && r->count < batch; p += nshards) {
        if (stopped(r)) return interrupted(err);
        sum->points++;
        if (st_records_find(done, p)) {
            sum->skipped++;
            continue;
        }
        if (!st_grow(&r->items, sizeof *r->items, r->count, &cap, 64)) return st_fail_internal(err, "out of memory");
        pending *pe = &r->items[r->count];
        memset(pe, 0, sizeof *pe);
        pe->which = st_arena_alloc(a, (nd + 1) * sizeof *pe->which);
        if (!pe->which) return st_fail_internal(err, "out of memory");
        st_buf text = {0};
        bool admitted;
        st_err why = {0};
        if (!st_space_point(r->space, p, pe->which, &text, &admitted, &why) || text.failed) {
            st_buf_free(&text);
            return *err = why, false;
        }
        r->count++;
        pe->v.point = p;
        pe->v.strategy = text.data ? text.data : strdup("");
        if (!pe->v.strategy) return st_fail_internal(err, "out of memory");
        if (!admitted) {
            pe->v.status = ST_STATUS_CONSTRAINT;
            snprintf(pe->v.message, sizeof pe->v.message, "%s", why.message);
            continue;
        }
        if (!variant_prepare(&r->bench, a, &pe->v, &why)) {
            *err = why;
            if (why.loc.line) err->loc.col = st_space_column(r->space, p, why.loc.col);
            return false;
        }
    }
    *next = p < npoints ? (p - shard) / nshards : st_space_shard_points(r->space, shard, nshards);
    return true;
}

/* This batch's points and the arena of their code given back. */
static void drop_batch(run *r, st_arena **a) {
    for (size_t i = 0; i < r->count; i++) free(r->items[i].v.strategy);
    r->count = 0;
    st_arena_free(*a);
    *a = NULL;
}

/* Every point of the shard not recorded yet, a batch at a time. */
static bool explore_batches(run *r, uint32_t shard, uint32_t nshards, st_explore_summary *sum, st_err *err) {
    uint64_t batch = r->s->batch ? r->s->batch : ST_EXPLORE_BATCH, mine = st_space_shard_points(r->space, shard, nshards);
    uint64_t missing = 0; /* the points to do, for the count of batches */
    for (uint64_t p = shard; p < st_space_npoints(r->space); p += nshards) missing += !st_records_find(&r->dir.done, p);
    r->batches = (missing + batch - 1) / batch;
    bool ok = true;
    for (uint64_t from = 0; ok && from < mine;) {
        st_arena *a = st_arena_new();
        if (!a) return st_fail_internal(err, "out of memory");
        ok = prepare_points(r, &r->dir.done, shard, nshards, from, batch, &from, a, sum, err);
        if (ok && r->count) {
            r->batch++;
            ok = check_all(r, err) && time_all(r, err);
        }
        drop_batch(r, &a);
    }
    return ok;
}

/* Counted before anything is done: a space too large for one exploration
 * (its records, its time) is refused at once, with what to do. */
static bool shard_fits(const st_explore_setup *s, const st_space *space, uint32_t shard, uint32_t nshards, st_err *err) {
    uint64_t all = st_space_npoints(space), max = s->max_points ? s->max_points : ST_EXPLORE_MAX_POINTS;
    uint64_t mine = st_space_shard_points(space, shard, nshards);
    if (mine <= max) return true;
    if (nshards > 1)
        return st_fail(err, (st_loc){0},
                       "the space has %" PRIu64 " points, %" PRIu64 " in this shard: more than the limit of %" PRIu64
                       " for one exploration; narrow its ranges, use more shards, or raise the limit with --max-points N",
                       all, mine, max);
    return st_fail(err, (st_loc){0},
                   "the space has %" PRIu64 " points, more than the limit of %" PRIu64
                   " for one exploration; narrow its ranges, split it with --shard I/N, or raise the limit with --max-points N",
                   all, max);
}

bool st_explore(const st_explore_setup *s, const st_space *space, const char *dir, uint32_t shard, uint32_t nshards,
                st_explore_progress_fn progress, void *progress_data, st_explore_summary *sum, st_err *err) {
    memset(sum, 0, sizeof *sum);
    if (!nshards || shard >= nshards) return st_fail(err, (st_loc){0}, "shard %u of %u does not exist", shard, nshards);
    if (!shard_fits(s, space, shard, nshards, err)) return false;
    if (!s->runs || !s->jobs || s->jobs > CHILD_MAX || !(s->timeout_s > 0) || !(s->build_timeout_s > 0))
        return st_fail_internal(err, "an exploration needs runs, time limits above 0 and 1 to %d jobs", CHILD_MAX);
    run r = {.s = s, .space = space, .progress = progress, .progress_data = progress_data, .started = child_now()};
    st_arena *a = st_arena_new();
    bool ok = a || st_fail_internal(err, "out of memory");
    ok = ok && space_well_formed(s, space, err) && bench_open(&r.bench, s, a, err) && bench_device(&r.bench, &sum->device, err) &&
         workdir_open(&r.dir, s, space, &sum->device, dir, shard, nshards, err);
    for (size_t i = 0; ok && i < r.dir.done.count; i++) consider_best(&r, &r.dir.done.items[i]);
    bool opened = ok;
    ok = ok && explore_batches(&r, shard, nshards, sum, err);
    if (!ok && opened && stopped(&r)) { /* stopped: the reports and counts over what is recorded */
        st_err why = {0};
        if (!workdir_close(&r.dir, s, space, sum, &why)) *err = why;
    } else {
        ok = ok ? workdir_close(&r.dir, s, space, sum, err) : (workdir_free(&r.dir), false);
    }
    free(r.items);
    st_record_clear(&r.best);
    st_arena_free(a);
    return ok;
}

void st_explore_summary_free(st_explore_summary *s) {
    st_record_clear(&s->best);
    st_buf_free(&s->warnings);
}
