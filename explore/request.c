/* explore/request.c — one request line of `strata explore --serve` read
 * into what it asks for, apart from the CLI that answers it, so that the
 * protocol's parsing can be tested and fuzzed on its own (tests/fuzz_serve.c). */
#include "explore.h"

#include <stdio.h>

bool st_serve_request_parse(st_arena *a, const char *line, size_t len, uint64_t npoints, st_serve_request *out,
                            st_err *err) {
    *out = (st_serve_request){.message = ""};
    st_err why = {0};
    const st_json *j = st_json_parse(a, "request", line, len, &why);
    if (!j) return st_fail(err, (st_loc){"request", 0, 0}, "not a JSON line: %s", why.message);
    uint64_t point;
    const st_json *again = st_json_get(j, "again"), *status = st_json_get(j, "status");
    const char *message = st_json_get_string(j, "message");
    if (j->kind != ST_JSON_OBJECT || !st_json_get_whole(j, "point", UINT64_MAX, &point))
        return st_fail(err, (st_loc){"request", 0, 0},
                       "a request is {\"point\": P} with P a whole number, optionally with \"again\": true, or "
                       "\"status\" and \"message\"");
    if (point >= npoints)
        return st_fail(err, (st_loc){"request", 0, 0}, "point %llu is not in the space: it has points 0 to %llu",
                       (unsigned long long)point, (unsigned long long)npoints - 1);
    if (again && again->kind != ST_JSON_BOOL)
        return st_fail(err, (st_loc){"request", 0, 0}, "\"again\" is true or false");
    if (status && (status->kind != ST_JSON_STRING || !st_status_parse(status->string, &out->status)))
        return st_fail(err, (st_loc){"request", 0, 0},
                       "\"status\" is one of ok, constraint, build_error, launch_error, wrong_answer, timeout, crash");
    out->point = point;
    out->again = again && again->boolean;
    out->record = status != NULL;
    if (message) out->message = message;
    return true;
}
