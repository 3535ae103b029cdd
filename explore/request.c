/* explore/request.c — one request line of `strata explore --serve` read
 * into what it asks for, apart from the CLI that answers it, so that the
 * protocol's parsing can be tested and fuzzed on its own (tests/fuzz_serve.c). */
#include "explore.h"

#include <stdio.h>

bool st_serve_request_parse(st_arena *a, const char *line, size_t len, uint64_t npoints, st_serve_request *out,
                            st_err *err) {
    *out = (st_serve_request){0};
    st_err why = {0};
    const st_json *j = st_json_parse(a, "request", line, len, &why);
    if (!j) return st_fail(err, (st_loc){"request", 0, 0}, "not a JSON line: %s", why.message);
    uint64_t point;
    const st_json *again = st_json_get(j, "again");
    if (j->kind != ST_JSON_OBJECT || !st_json_get_whole(j, "point", UINT64_MAX, &point))
        return st_fail(err, (st_loc){"request", 0, 0},
                       "a request is {\"point\": P} with P a whole number, optionally with \"again\": true");
    if (point >= npoints)
        return st_fail(err, (st_loc){"request", 0, 0}, "point %llu is not in the space: it has points 0 to %llu",
                       (unsigned long long)point, (unsigned long long)npoints - 1);
    if (again && again->kind != ST_JSON_BOOL)
        return st_fail(err, (st_loc){"request", 0, 0}, "\"again\" is true or false");
    /* statuses and times are the server's own: a client that could send
     * them could make any point the best (issue 19) */
    if (j->len != 1 + (again != NULL))
        return st_fail(err, (st_loc){"request", 0, 0},
                       "a request names a point, and nothing else: the statuses and times recorded are strata's own "
                       "(a request is {\"point\": P}, optionally with \"again\": true)");
    out->point = point;
    out->again = again && again->boolean;
    return true;
}
