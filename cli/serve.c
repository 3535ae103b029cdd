/* cli/serve.c — `strata explore --serve`: an exploration a point at a time,
 * asked for on standard input and answered on standard output, a JSON line
 * each. The autotuner (explore/autotune.py) drives it; the protocol is in
 * `strata explore --help` and at the top of autotune.py. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One JSON line out, flushed: the other end waits for it. */
static void answer(st_buf *b) {
    fputs(b->data ? b->data : "{}", stdout);
    fputc('\n', stdout);
    fflush(stdout);
    st_buf_free(b);
}

static void answer_error(const char *message) {
    st_buf b = {0};
    st_buf_puts(&b, "{\"error\": ");
    st_json_put_string(&b, message);
    st_buf_puts(&b, "}");
    answer(&b);
}

/* The first line: the device and the space, each dimension with its values. */
static void hello(const st_device_info *dev, const st_space *space) {
    st_buf b = {0};
    st_buf_puts(&b, "{\"strata_serve\": 1, \"device\": ");
    st_json_put_string(&b, dev->name);
    st_buf_printf(&b, ", \"points\": %llu, \"space\": ", (unsigned long long)st_space_npoints(space));
    st_json_put_string(&b, st_space_text(space));
    st_buf_puts(&b, ", \"dims\": [");
    for (uint32_t d = 0; d < st_space_ndims(space); d++) {
        const st_space_dim *dim = st_space_dim_at(space, d);
        st_buf_puts(&b, d ? ", {\"name\": " : "{\"name\": ");
        st_json_put_string(&b, dim->name);
        st_buf_puts(&b, ", \"values\": [");
        for (uint32_t v = 0; v < dim->nvalues; v++) {
            st_buf_puts(&b, v ? ", " : "");
            st_json_put_space_value(&b, dim->values[v]);
        }
        st_buf_puts(&b, "]}");
    }
    st_buf_puts(&b, "]}");
    answer(&b);
}

/* One request (st_serve_request_parse: a client names points and nothing
 * else; statuses and times are the server's, and a point whose strata died
 * is recorded as `crash` by the next session, explore/session.c); a bad one
 * is answered with an error and the session goes on. false only for what
 * ends the session (the directory). */
static bool serve_one(st_session *ss, const st_space *space, const char *line, size_t len, st_err *err) {
    st_arena *a = st_arena_new();
    if (!a) return st_fail_internal(err, "out of memory");
    st_serve_request req;
    st_err bad = {0};
    if (!st_serve_request_parse(a, line, len, st_space_npoints(space), &req, &bad)) {
        answer_error(bad.message);
        st_arena_free(a);
        return true;
    }
    st_record rec;
    bool recorded = false;
    bool ok = st_session_evaluate(ss, req.point, req.again, &rec, &recorded, err);
    st_arena_free(a);
    if (!ok) return false;
    st_buf b = {0};
    st_buf_printf(&b, "{\"recorded\": %s, \"record\": ", recorded ? "true" : "false");
    st_record_to_json(&rec, &b);
    st_buf_puts(&b, "}");
    answer(&b);
    st_record_clear(&rec);
    return true;
}

/* `strata explore --serve`: the session's points asked for on standard
 * input, answered on standard output, a JSON line each; the summary on
 * standard error at the end of the input. */
bool serve_points(const st_explore_setup *setup, const st_space *space, const char *dir, st_err *err) {
    st_device_info dev;
    st_session *ss = st_session_open(setup, space, dir, &dev, err);
    if (!ss) return false;
    hello(&dev, space);
    /* a request is a short line: one longer than any request is answered
     * with an error and skipped, never read whole (a peer that never sends
     * a newline must not grow strata without bound) */
    char line[ST_SERVE_REQUEST_MAX + 1];
    size_t len = 0;
    bool ok = true, too_long = false;
    for (int c; ok && (c = getchar()) != EOF;) {
        if (c != '\n') {
            if (len < ST_SERVE_REQUEST_MAX) line[len++] = (char)c;
            else too_long = true;
            continue;
        }
        if (too_long) {
            char bad[160];
            snprintf(bad, sizeof bad, "a request is a line of at most %d bytes", ST_SERVE_REQUEST_MAX);
            answer_error(bad);
        } else if (len) {
            ok = serve_one(ss, space, line, len, err);
        }
        len = 0;
        too_long = false;
    }
    if (ok && len && !too_long) ok = serve_one(ss, space, line, len, err); /* a last line without its newline */
    st_explore_summary sum = {0};
    ok = st_session_close(ss, &sum, err) && ok;
    uint64_t recorded = 0;
    for (int s = 0; s <= ST_STATUS_CRASH; s++) recorded += sum.counts[s];
    if (ok)
        fprintf(stderr, "serve: %llu points recorded in %s (results.jsonl, results.csv%s)\n", (unsigned long long)recorded,
                dir, sum.chart ? ", results.svg" : "");
    st_explore_summary_free(&sum);
    return ok;
}

