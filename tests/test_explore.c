/* tests/test_explore.c — the exploration driver (explore/driver.c and its
 * children, records.c, merge.c) and `strata explore`.
 *
 *   records   results.jsonl lines and files read back, without a device
 *   planted   st_explore in-process with a registry holding a planted rule
 *             `planted(K)` whose K picks what the scan becomes: 0 the scan
 *             itself (correct), 1 a wrong last element, 2 a kernel that never
 *             ends, 3 a read far out of bounds (the process dies), 4 a kernel
 *             that passes its check but is too slow to time. Each must come
 *             out as its status, and the exploration must go on past it.
 *             Then resuming, refusing another exploration's dir (another
 *             build's too), shards and merging.
 *   cli       the real binary ($STRATA) on examples/prefix_sum.strata
 *
 * Devices: whatever OpenCL gives (PoCL on the CPU here): sizes are small and
 * every exploration shares one build cache in the suite's scratch folder. */
#include "harness.h"
#include "run_strata.h"

#include "explore/explore.h"
#include "strategies/strategies.h"

#include <time.h>

/* ---- fixture: a scratch folder and an arena per test ---- */

static char root[64], dir[128], cache[128];
static st_arena *ar;

static void setup(void) {
    ar = st_arena_new();
    ck_assert(ar != NULL);
    snprintf(dir, sizeof dir, "%s/test-XXXXXX", root);
    ck_assert_msg(mkdtemp(dir) != NULL, "mkdtemp failed");
}

/* ---- files ---- */

/* dir/name, in the arena. */
static const char *in_dir(const char *name) { return arena_text(ar, "%s/%s", dir, name); }

static bool exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

/* d/name's text (NUL-terminated, in the arena); fails the test when absent. */
static char *file_of(const char *d, const char *name) {
    return slurp_file(ar, arena_text(ar, "%s/%s", d, name), NULL);
}

static void write_text(const char *path, const char *text, size_t len) {
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    ck_assert(fwrite(text, 1, len, f) == len);
    fclose(f);
}

static int count_lines(const char *text) {
    int n = 0;
    for (; *text; text++) n += *text == '\n';
    return n;
}

static bool starts_with(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }

/* One line of a JSON-lines text as JSON (line counts from 0). */
static const st_json *json_line(const char *text, int line) {
    for (int i = 0; i < line; i++) {
        text = strchr(text, '\n');
        ck_assert(text != NULL);
        text++;
    }
    size_t len = strcspn(text, "\n");
    st_err err = {0};
    const st_json *j = st_json_parse(ar, "line", text, len, &err);
    ck_assert_msg(j != NULL, "line %d is not JSON: %s\n%.*s", line + 1, err.message, (int)len, text);
    return j;
}

/* A whole text as one JSON value. */
static const st_json *json_of(const char *text) {
    st_err err = {0};
    const st_json *j = st_json_parse(ar, "text", text, strlen(text), &err);
    ck_assert_msg(j != NULL, "not JSON: %s\n%.2000s", err.message, text);
    return j;
}

/* ---- records: a directory's results.jsonl ---- */

static st_records recs;

static void teardown(void) {
    st_records_free(&recs);
    scratch_remove(dir);
    st_arena_free(ar);
}

/* d's records into recs, each read whole (none cut short). */
static void read_records(const char *d) {
    st_records_free(&recs);
    size_t truncated = 9;
    st_err err = {0};
    const char *path = arena_text(ar, "%s/results.jsonl", d);
    ck_assert_msg(st_records_read(path, &recs, &truncated, &err), "%s", err.message);
    ck_assert_uint_eq(truncated, 0);
}

static const st_record *record_at(uint64_t point) {
    const st_record *found = NULL;
    for (size_t i = 0; i < recs.count; i++)
        if (recs.items[i].point == point) {
            ck_assert_msg(!found, "point %llu is recorded twice", (unsigned long long)point);
            found = &recs.items[i];
        }
    ck_assert_msg(found != NULL, "point %llu is not recorded", (unsigned long long)point);
    return found;
}

/* recs holds exactly the points 0 … n-1, each once. */
static void points_are_0_to(uint64_t n) {
    ck_assert_uint_eq(recs.count, n);
    for (uint64_t p = 0; p < n; p++) record_at(p);
}

static void status_is(uint64_t point, st_status want) {
    const st_record *r = record_at(point);
    ck_assert_msg(r->status == want, "point %llu (%s) is %s, not %s: %s", (unsigned long long)point, r->strategy,
                  st_status_name(r->status), st_status_name(want), r->message);
}

/* ====================================================================== */
/* records, without a device                                              */
/* ====================================================================== */

START_TEST(status_names_read_back) {
    static const char *const names[] = {"ok", "constraint", "rule_error", "build_error", "launch_error",
                                        "wrong_answer", "timeout", "crash"};
    ck_assert_int_eq(ST_STATUS_CRASH + 1, 8);
    for (int s = 0; s <= ST_STATUS_CRASH; s++) {
        ck_assert_str_eq(st_status_name((st_status)s), names[s]);
        st_status back = ST_STATUS_OK;
        ck_assert(st_status_parse(names[s], &back));
        ck_assert_int_eq(back, s);
    }
    st_status untouched = ST_STATUS_TIMEOUT;
    ck_assert(!st_status_parse("hang", &untouched));
    ck_assert(!st_status_parse("OK", &untouched));
    ck_assert(!st_status_parse("", &untouched));
    ck_assert_int_eq(untouched, ST_STATUS_TIMEOUT);
}
END_TEST

static char *dup_text(const char *s) {
    char *d = strdup(s);
    ck_assert(d != NULL);
    return d;
}

/* An ok record with every field set, and awkward text in its strings. */
static void sample_record(st_record *r) {
    memset(r, 0, sizeof *r);
    r->point = 12345678901ULL;
    r->strategy = dup_text("parallel-scan(BS=64, BF=2, SE=4) ; try(x)");
    r->nvalues = 2;
    r->values = calloc(2, sizeof *r->values);
    ck_assert(r->values != NULL);
    r->values[0] = dup_text("64");
    r->values[1] = dup_text("global");
    r->status = ST_STATUS_OK;
    r->message = dup_text("a \"quoted\" word,\ta tab and a\nnewline");
    r->build_ms = 1234.5;
    r->nsamples = 3;
    r->samples_ms = calloc(3, sizeof *r->samples_ms);
    ck_assert(r->samples_ms != NULL);
    r->samples_ms[0] = 0.1;
    r->samples_ms[1] = 2.25;
    r->samples_ms[2] = 1e-7;
    r->median_ms = 0.1, r->min_ms = 1e-7, r->max_ms = 2.25;
    r->bytes = 1ULL << 40;
    r->gb_per_s = 10995.1162778;
    memset(r->kernels_sha256, 'a', 64);
}

static st_record from_text(const char *text) {
    st_err err = {0};
    const st_json *j = st_json_parse(ar, "record", text, strlen(text), &err);
    ck_assert_msg(j != NULL, "%s\n%s", err.message, text);
    st_record r;
    ck_assert_msg(st_record_from_json(j, &r, &err), "%s\n%s", err.message, text);
    return r;
}

START_TEST(record_json_round_trip_keeps_every_field) {
    st_record r, back;
    sample_record(&r);
    st_buf a = {0}, b = {0};
    st_record_to_json(&r, &a);
    ck_assert(!a.failed && a.data);
    ck_assert_msg(!strchr(a.data, '\n'), "a record must be one line:\n%s", a.data);
    back = from_text(a.data);
    ck_assert_uint_eq(back.point, r.point);
    ck_assert_str_eq(back.strategy, r.strategy);
    ck_assert_uint_eq(back.nvalues, 2);
    ck_assert_str_eq(back.values[0], "64");
    ck_assert_str_eq(back.values[1], "global");
    ck_assert_int_eq(back.status, ST_STATUS_OK);
    ck_assert_str_eq(back.message, r.message);
    ck_assert(back.build_ms == r.build_ms);
    ck_assert_uint_eq(back.nsamples, 3);
    for (int i = 0; i < 3; i++) ck_assert(back.samples_ms[i] == r.samples_ms[i]);
    ck_assert(back.median_ms == r.median_ms && back.min_ms == r.min_ms && back.max_ms == r.max_ms);
    ck_assert_uint_eq(back.bytes, r.bytes);
    ck_assert(back.gb_per_s == r.gb_per_s);
    ck_assert_str_eq(back.kernels_sha256, r.kernels_sha256);
    st_record_to_json(&back, &b); /* and again: the same text */
    ck_assert_str_eq(a.data, b.data);
    /* a copy is deep and equal */
    st_record copy = {0};
    ck_assert(st_record_copy(&copy, &r));
    ck_assert(copy.strategy != r.strategy && copy.samples_ms != r.samples_ms);
    st_buf c = {0};
    st_record_to_json(&copy, &c);
    ck_assert_str_eq(a.data, c.data);
    st_buf_free(&a);
    st_buf_free(&b);
    st_buf_free(&c);
    st_record_clear(&r);
    st_record_clear(&back);
    st_record_clear(&copy);
}
END_TEST

START_TEST(record_from_json_needs_point_strategy_values_status) {
    static const char *const bad[] = {
        "[1, 2]",
        "{\"strategy\": \"s\", \"values\": [], \"status\": \"ok\"}",
        "{\"point\": 1, \"values\": [], \"status\": \"ok\"}",
        "{\"point\": 1, \"strategy\": \"s\", \"status\": \"ok\"}",
        "{\"point\": 1, \"strategy\": \"s\", \"values\": []}",
        "{\"point\": 1, \"strategy\": \"s\", \"values\": [], \"status\": \"fine\"}",
        "{\"point\": -1, \"strategy\": \"s\", \"values\": [], \"status\": \"ok\"}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        st_err err = {0};
        const st_json *j = st_json_parse(ar, "record", bad[i], strlen(bad[i]), &err);
        ck_assert(j != NULL);
        st_record r;
        ck_assert_msg(!st_record_from_json(j, &r, &err), "accepted %s", bad[i]);
        ck_assert_has(err.message, "not a record");
    }
    st_record r = from_text("{\"point\": 3, \"strategy\": \"s\", \"values\": [\"a\", 7], \"status\": \"timeout\"}");
    ck_assert_uint_eq(r.point, 3);
    ck_assert_int_eq(r.status, ST_STATUS_TIMEOUT);
    ck_assert_str_eq(r.values[1], "7");
    ck_assert_str_eq(r.message, "");
    st_record_clear(&r);
}
END_TEST

/* Three lines of records, as the driver writes them. */
static const char *three_records(void) {
    st_buf b = {0};
    for (int i = 0; i < 3; i++) {
        st_record r;
        sample_record(&r);
        r.point = (uint64_t)i;
        st_record_to_json(&r, &b);
        st_buf_puts(&b, "\n");
        st_record_clear(&r);
    }
    const char *s = arena_text(ar, "%s", b.data);
    st_buf_free(&b);
    return s;
}

START_TEST(records_read_leaves_out_a_cut_last_line) {
    const char *text = three_records(), *third = strchr(strchr(text, '\n') + 1, '\n') + 1;
    const char *path = in_dir("results.jsonl");
    size_t cuts[] = {1, strlen(third) / 2, strlen(third) - 2};
    for (size_t c = 0; c < sizeof cuts / sizeof *cuts; c++) {
        write_text(path, text, (size_t)(third - text) + cuts[c]);
        size_t truncated = 0;
        st_err err = {0};
        ck_assert_msg(st_records_read(path, &recs, &truncated, &err), "cut at %zu: %s", cuts[c], err.message);
        ck_assert_uint_eq(recs.count, 2);
        ck_assert_uint_eq(truncated, 1);
        ck_assert_uint_eq(recs.items[1].point, 1);
        st_records_free(&recs);
    }
    write_text(path, text, strlen(text)); /* whole: all three, none cut */
    read_records(dir);
    ck_assert_uint_eq(recs.count, 3);
}
END_TEST

START_TEST(records_read_names_a_bad_middle_line) {
    const char *text = three_records(), *second = strchr(text, '\n') + 1;
    const char *path = in_dir("results.jsonl");
    /* line 2 cut short but followed by line 3: not an interruption */
    const char *third = strchr(second, '\n') + 1;
    const char *bad = arena_text(ar, "%.*s%.*s\n%s", (int)(second - text), text, (int)((third - second) / 2), second,
                                 third);
    write_text(path, bad, strlen(bad));
    size_t truncated = 0;
    st_err err = {0};
    ck_assert(!st_records_read(path, &recs, &truncated, &err));
    ck_assert_int_eq(err.loc.line, 2);
    ck_assert_str_eq(err.loc.file, path);
    ck_assert_uint_eq(recs.count, 0);
    /* JSON that is not a record, on line 3 of 4 */
    bad = arena_text(ar, "%.*s{\"point\": 2}\n%s", (int)(third - text), text, second);
    write_text(path, bad, strlen(bad));
    ck_assert(!st_records_read(path, &recs, &truncated, &err));
    ck_assert_int_eq(err.loc.line, 3);
    ck_assert_has(err.message, "not a record");
}
END_TEST

/* ---- hostile: numbers outside their types, found by the fuzzers ---- */

/* Issue 19: a point of 1e300 or bytes of -5 were converted to uint64_t,
 * which is undefined (tests/fuzz_records.c). A point is a whole number in
 * range or the line is no record; bytes that are no count are 0. */
START_TEST(record_numbers_outside_their_types) {
    static const char *const bad[] = {"1e300", "18446744073709551616", "0.5", "-0.5", "-1e300"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *text = arena_text(ar, "{\"point\": %s, \"strategy\": \"s\", \"values\": [], \"status\": \"ok\"}", bad[i]);
        st_err err = {0};
        st_record r;
        ck_assert_msg(!st_record_from_json(json_of(text), &r, &err), "accepted %s", text);
        ck_assert_has(err.message, "not a record");
    }
    const char *bytes[] = {"-5", "1e300", "0.5", "\"8\""};
    for (size_t i = 0; i < sizeof bytes / sizeof *bytes; i++) {
        st_record r = from_text(arena_text(
            ar, "{\"point\": 1, \"strategy\": \"s\", \"values\": [1e300], \"status\": \"ok\", \"bytes\": %s}", bytes[i]));
        ck_assert_msg(r.bytes == 0, "bytes %s read as %llu", bytes[i], (unsigned long long)r.bytes);
        st_record_clear(&r);
    }
    st_record r = from_text("{\"point\": 2, \"strategy\": \"s\", \"values\": [], \"status\": \"ok\", \"bytes\": 4096}");
    ck_assert_uint_eq(r.bytes, 4096);
    st_record_clear(&r);
}
END_TEST

/* explore.json as a resumed exploration, merge and export read it. */
static const char *exploration_with(const char *counts) {
    return arena_text(ar, "{\"program_name\": \"p\", \"entry\": \"main\", \"space\": \"s\", \"device\": \"d\", "
                          "\"inputs\": [\"N=8\"], %s}", counts);
}

/* Issue 19: seed, runs and warmups of 1e300 or -1 were converted to
 * integers, which is undefined (tests/fuzz_explore.c); runs of 4e9 would
 * time a variant for ever. Counts are whole numbers in range, or the
 * description is refused, naming its file. */
START_TEST(exploration_counts_outside_their_types) {
    const char *good = "\"seed\": 18446744073709549568, \"runs\": 7, \"warmups\": 0, \"tolerance\": 8";
    static const char program[] = "def main(xs: [N]f32): [N]f32 = xs\n";
    write_text(in_dir("program.strata"), program, strlen(program));
    const char *text = exploration_with(good);
    write_text(in_dir("explore.json"), text, strlen(text));
    st_exploration e;
    st_err err = {0};
    ck_assert_msg(st_exploration_read(dir, &e, &err), "%s", err.message);
    ck_assert(e.seed == UINT64_C(18446744073709549568) && e.runs == 7 && e.warmups == 0 && e.ninputs == 1);
    st_exploration_free(&e);
    static const char *const bad[] = {
        "\"seed\": 1e300, \"runs\": 7, \"warmups\": 2, \"tolerance\": 0",
        "\"seed\": -1, \"runs\": 7, \"warmups\": 2, \"tolerance\": 0",
        "\"seed\": 1, \"runs\": -1, \"warmups\": 2, \"tolerance\": 0",
        "\"seed\": 1, \"runs\": 4e9, \"warmups\": 2, \"tolerance\": 0",
        "\"seed\": 1, \"runs\": 0, \"warmups\": 2, \"tolerance\": 0",
        "\"seed\": 1, \"runs\": 7.5, \"warmups\": 2, \"tolerance\": 0",
        "\"seed\": 1, \"runs\": 7, \"warmups\": -2, \"tolerance\": 0",
        "\"seed\": 1, \"runs\": 7, \"warmups\": 2, \"tolerance\": -1",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        text = exploration_with(bad[i]);
        write_text(in_dir("explore.json"), text, strlen(text));
        memset(&err, 0, sizeof err);
        ck_assert_msg(!st_exploration_read(dir, &e, &err), "accepted %s", text);
        ck_assert_has(err.message, "not an exploration's description");
        ck_assert_has(err.loc.file ? err.loc.file : "", "explore.json");
    }
}
END_TEST

/* ---- serve: the requests of `strata explore --serve` ---- */

static st_serve_request request_ok(const char *line, uint64_t npoints) {
    st_serve_request req;
    st_err err = {0};
    ck_assert_msg(st_serve_request_parse(ar, line, strlen(line), npoints, &req, &err), "%s: %s", line, err.message);
    return req;
}

static void request_fails(const char *line, uint64_t npoints, const char *part) {
    st_serve_request req;
    st_err err = {0};
    ck_assert_msg(!st_serve_request_parse(ar, line, strlen(line), npoints, &req, &err), "accepted %s", line);
    ck_assert_has(err.message, part);
}

/* The protocol's parsing, apart from the CLI (issue 19: the fuzzers reach
 * it); a point of 1e300 or -1 is refused before it is converted, which was
 * undefined in cli/serve.c. */
START_TEST(serve_requests) {
    st_serve_request r = request_ok("{\"point\": 3}", 25);
    ck_assert(r.point == 3 && !r.again);
    r = request_ok("{\"point\": 24, \"again\": true}", 25);
    ck_assert(r.point == 24 && r.again);
    r = request_ok("{\"point\": 18446744073709549568}", UINT64_MAX);
    ck_assert(r.point == UINT64_C(18446744073709549568));
    request_fails("{\"point\": 3", 25, "not a JSON line");
    request_fails("[3]", 25, "a request is");
    request_fails("{\"point\": -1}", 25, "a request is");
    request_fails("{\"point\": 1e300}", UINT64_MAX, "a request is");
    request_fails("{\"point\": 18446744073709551616}", UINT64_MAX, "a request is");
    request_fails("{\"point\": 2.5}", 25, "a request is");
    request_fails("{\"point\": 25}", 25, "points 0 to 24");
    request_fails("{\"point\": 1, \"again\": 1}", 25, "\"again\"");
    /* a client names points only (issue 19): no statuses, no times */
    request_fails("{\"point\": 0, \"status\": \"ok\"}", 25, "nothing else");
    request_fails("{\"point\": 0, \"status\": \"ok\", \"ms\": 0}", 25, "nothing else");
}
END_TEST

START_TEST(records_read_takes_a_missing_file_as_none) {
    size_t truncated = 5;
    st_err err = {0};
    ck_assert(st_records_read(in_dir("nothing-here.jsonl"), &recs, &truncated, &err));
    ck_assert_uint_eq(recs.count, 0);
    ck_assert_uint_eq(truncated, 0);
    ck_assert(st_records_best(&recs) == NULL);
}
END_TEST

/* ====================================================================== */
/* planted: st_explore in-process                                         */
/* ====================================================================== */

/* What the scan becomes for each K of planted(K). Each is a def body over
 * xs: [N]i32; the interpreter runs the original program, so only the
 * device ever sees these. */
enum { PLANT_OK, PLANT_WRONG, PLANT_HANG, PLANT_OUT_OF_RANGE, PLANT_SLOW };
static const char *const planted_bodies[] = {
    [PLANT_OK] = NULL, /* the scan as it is */
    /* every element right but the last */
    [PLANT_WRONG] = "let s = xs |> scan(+, 0) in iota(N) |> map(i => if i == N - 1 then get(i, s) + 1 else get(i, s))",
    /* 2^40 steps per element */
    [PLANT_HANG] = "xs |> map(x => x |> iterate(1099511627776i64, y => (y * 3 + x) % 1001))",
    /* 2^45 elements past xs: 128 TiB, no mapped address, were indices not
     * checked on the device (issue 19: they are) */
    [PLANT_OUT_OF_RANGE] = "xs |> map(x => x + get(35184372088832i64, xs))",
    /* right (the iterate's result, under 1001, divided by 1000 N is 0, which
     * no compiler can tell), but about 2 s a run on two cores: checked once
     * in time, never timed ten times in 3 s */
    [PLANT_SLOW] = "let s = xs |> scan(+, 0) in iota(N) |> map(i => get(i, s) + "
                   "(get(i, s) |> iterate(200000i64, y => (y * 3 + 1) % 1001)) / i32(N * 1000))",
};

static const st_node *planted_apply(st_rw *rw, const st_node *e, const int64_t *args, st_err *why) {
    if (e->kind != ST_NODE_PRIM || e->u.prim != ST_PRIM_SCAN) {
        st_fail(why, (st_loc){0}, "planted rewrites a scan");
        why->mismatch = true;
        return NULL;
    }
    const char *body = planted_bodies[args[0]];
    if (!body) return e;
    st_ctx *cx = st_rw_ctx(rw);
    char text[512];
    snprintf(text, sizeof text, "def planted(xs: [N]i32): [N]i32 = %s\n", body);
    const st_program *t = st_parse_program(cx, "planted", text, strlen(text), why);
    if (!t) return NULL;
    const st_def *d = &t->defs[0];
    const st_node *xs = e->kids[e->nkids - 1];
    if (xs->type != d->params[0]->type) return st_fail(why, (st_loc){0}, "planted needs a scan of [N]i32"), NULL;
    return st_subst(cx, d->body, d->params[0], xs, why);
}

static const st_rule planted_rule = {
    .name = "planted",
    .summary = "a scan made into what K says: correct, wrong, hanging, indexing out of range or slow",
    .conditions = "a scan of [N]i32",
    .origin = "tests/test_explore.c",
    .nparams = 1,
    .params = {{.name = "K", .doc = "0 ok, 1 wrong, 2 hang, 3 an index out of range, 4 slow", .min = 0, .max = 4}},
    .apply = planted_apply,
};

#define PROGRAM "def main(xs: [N]i32): [N]i32 = xs |> scan(+, 0)\n"
#define GRID "parallel-scan(BS=[32, 64], BF=2, SE=[1, 2])" /* 4 points, all ok */
#define NO_BUILDS "parallel-scan(BS=32, BF=2, SE=[3, 5])"   /* 2 points, both constraints: fast */

static struct {
    st_ctx *cx;
    st_registry *reg;
    st_explore_setup setup;
    uint64_t written; /* records written by the last st_explore (progress) */
    uint64_t check_total;
    uint64_t batch, batches; /* the last batch reported, and of how many */
} lab;

static const char *const lab_inputs[] = {"N=4096"};

static void lab_setup(void) {
    setup();
    st_err err = {0};
    ck_assert((lab.cx = st_ctx_new()) && (lab.reg = st_registry_new()));
    ck_assert_msg(st_register_builtin_rules(lab.reg, &err), "%s", err.message);
    ck_assert_msg(st_registry_add(lab.reg, &planted_rule, &err), "%s", err.message);
    const st_program *p = parse_ok(lab.cx, PROGRAM);
    lab.setup = (st_explore_setup){.cx = lab.cx, .program = p, .def = entry_ok(p), .reg = lab.reg,
                                   .program_path = "test.strata", .program_source = PROGRAM,
                                   .program_name = "scan_i32", .inputs = lab_inputs, .ninputs = 1, .seed = 1,
                                   .device = NULL, .cache_dir = cache, .runs = 7, .warmups = 2, .tolerance = ST_TOLERANCE,
                                   .timeout_s = 60, .build_timeout_s = 60, .jobs = 2};
}

static void lab_teardown(void) {
    st_registry_free(lab.reg);
    st_ctx_free(lab.cx);
    memset(&lab, 0, sizeof lab);
    teardown();
}

static void count_progress(void *data, const st_explore_progress *p) {
    (void)data;
    ck_assert(p->done <= p->total);
    ck_assert(p->batch >= 1 && p->batch <= p->batches);
    lab.batch = p->batch;
    lab.batches = p->batches;
    if (!strcmp(p->phase, "check")) lab.check_total = p->total;
    else if (p->last) lab.written++;
}

/* Explore the space text into d: st_explore's answer. */
static bool explore_into(const char *space_text, const char *d, uint32_t shard, uint32_t nshards,
                         st_explore_summary *sum, st_err *err) {
    st_err perr = {0};
    st_space *space = st_space_parse("space", space_text, &perr);
    ck_assert_msg(space != NULL, "%s: %s", space_text, perr.message);
    lab.written = lab.check_total = 0;
    bool ok = st_explore(&lab.setup, space, d, shard, nshards, count_progress, NULL, sum, err);
    st_space_free(space);
    return ok;
}

static void explore_ok(const char *space_text, const char *d, uint32_t shard, uint32_t nshards,
                       st_explore_summary *sum) {
    st_err err = {0};
    ck_assert_msg(explore_into(space_text, d, shard, nshards, sum, &err), "exploring %s: %s:%d:%d: %s", space_text,
                  err.loc.file ? err.loc.file : "", err.loc.line, err.loc.col, err.message);
}

START_TEST(wrong_answer_is_recorded_and_never_best) {
    st_explore_summary sum;
    explore_ok("planted(K=[1, 0])", dir, 0, 1, &sum);
    read_records(dir);
    points_are_0_to(2);
    status_is(0, ST_STATUS_WRONG_ANSWER);
    status_is(1, ST_STATUS_OK);
    const st_record *wrong = record_at(0);
    ck_assert_str_eq(wrong->strategy, "planted(K=1)");
    ck_assert_has(wrong->message, "differs at element 4095"); /* the last one: every element is compared */
    ck_assert_uint_eq(wrong->nsamples, 0);
    ck_assert_uint_eq(record_at(1)->nsamples, 7);
    ck_assert_uint_eq(sum.counts[ST_STATUS_OK], 1);
    ck_assert_uint_eq(sum.counts[ST_STATUS_WRONG_ANSWER], 1);
    ck_assert_msg(sum.best.strategy != NULL, "no best");
    ck_assert_str_eq(sum.best.strategy, "planted(K=0)");
    const st_record *best = st_records_best(&recs);
    ck_assert(best && best->point == 1);
    const char *csv = file_of(dir, "results.csv");
    ck_assert_has(csv, "\n0,planted(K=1),1,wrong_answer,");
    ck_assert_has(csv, "\n1,planted(K=0),0,ok,");
    st_explore_summary_free(&sum);
}
END_TEST

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

START_TEST(hang_while_checking_is_a_timeout_and_the_rest_goes_on) {
    lab.setup.build_timeout_s = 15; /* the correct points build in about 1 s */
    lab.setup.timeout_s = 3;
    st_explore_summary sum;
    double t0 = now_s();
    explore_ok("planted(K=[2, 0, 1])", dir, 0, 1, &sum);
    double took = now_s() - t0;
    ck_assert_msg(took < 60, "a hang held the exploration for %.0f s", took);
    read_records(dir);
    points_are_0_to(3);
    status_is(0, ST_STATUS_TIMEOUT);
    status_is(1, ST_STATUS_OK);
    status_is(2, ST_STATUS_WRONG_ANSWER);
    ck_assert_has(record_at(0)->message, "time limit");
    ck_assert_str_eq(sum.best.strategy, "planted(K=0)");
    ck_assert_uint_eq(sum.counts[ST_STATUS_TIMEOUT], 1);
    st_explore_summary_free(&sum);
}
END_TEST

START_TEST(hang_while_timing_is_a_timeout) {
    lab.setup.build_timeout_s = 30; /* one run of the slow variant fits */
    lab.setup.timeout_s = 3;        /* nine do not */
    st_explore_summary sum;
    explore_ok("planted(K=[4, 0])", dir, 0, 1, &sum);
    read_records(dir);
    points_are_0_to(2);
    status_is(0, ST_STATUS_TIMEOUT);
    status_is(1, ST_STATUS_OK);
    ck_assert_has(record_at(0)->message, "time limit of 3 s");
    ck_assert_str_eq(sum.best.strategy, "planted(K=0)");
    st_explore_summary_free(&sum);
}
END_TEST

/* An index out of range in a kernel is caught on the device and the point
 * fails with the interpreter's words: never garbage read, never a crash. */
START_TEST(an_index_out_of_range_is_a_launch_error) {
    st_explore_summary sum;
    explore_ok("planted(K=[3, 0])", dir, 0, 1, &sum);
    read_records(dir);
    points_are_0_to(2);
    status_is(0, ST_STATUS_LAUNCH_ERROR);
    status_is(1, ST_STATUS_OK);
    ck_assert_has(record_at(0)->message, "index 35184372088832 out of range for an array of length 4096");
    ck_assert_str_eq(sum.best.strategy, "planted(K=0)");
    st_explore_summary_free(&sum);
}
END_TEST

/* A shard's points are made into code, checked and timed a batch at a
 * time (memory does not grow with the space): the same records, each point
 * once, in two batches of at most 3; a resumed run does only what is left. */
START_TEST(a_space_is_explored_a_batch_at_a_time) {
    lab.setup.batch = 3;
    st_explore_summary sum;
    explore_ok(GRID, dir, 0, 1, &sum);
    ck_assert_uint_eq(sum.points, 4);
    ck_assert_uint_eq(sum.counts[ST_STATUS_OK], 4);
    ck_assert_uint_eq(lab.written, 4);
    ck_assert_uint_eq(lab.batches, 2);
    ck_assert_uint_eq(lab.batch, 2);
    read_records(dir);
    points_are_0_to(4);
    st_explore_summary_free(&sum);
    /* points 1 and 2 lost: one batch of 2 */
    const char *path = arena_text(ar, "%s/results.jsonl", dir);
    char *text = (char *)slurp_file(ar, path, NULL);
    st_buf kept = {0};
    for (char *line = text, *end; (end = strchr(line, '\n')); line = end + 1)
        if (strncmp(line, "{\"point\": 1,", 12) && strncmp(line, "{\"point\": 2,", 12))
            st_buf_put(&kept, line, (size_t)(end - line + 1));
    ck_assert(st_write_file(path, kept.data, kept.len, NULL));
    st_buf_free(&kept);
    explore_ok(GRID, dir, 0, 1, &sum);
    ck_assert_uint_eq(sum.skipped, 2);
    ck_assert_uint_eq(lab.written, 2);
    ck_assert_uint_eq(lab.batches, 1);
    read_records(dir);
    points_are_0_to(4);
    st_explore_summary_free(&sum);
}
END_TEST

START_TEST(every_file_of_an_exploration_is_written) {
    st_explore_summary sum;
    explore_ok(GRID, dir, 0, 1, &sum);
    ck_assert_uint_eq(sum.points, 4);
    ck_assert_uint_eq(sum.skipped, 0);
    ck_assert_uint_eq(sum.counts[ST_STATUS_OK], 4);
    ck_assert_uint_eq(lab.written, 4);
    ck_assert(sum.chart);
    ck_assert(sum.device.name[0]);
    ck_assert_str_eq(file_of(dir, "program.strata"), PROGRAM);
    const st_json *meta = json_of(file_of(dir, "explore.json"));
    ck_assert_str_eq(st_json_get_string(meta, "space"), GRID);
    ck_assert_str_eq(st_json_get_string(meta, "entry"), "main");
    ck_assert_str_eq(st_json_get_string(meta, "device"), sum.device.name);
    read_records(dir);
    points_are_0_to(4);
    static const char *const values[4][2] = {{"32", "1"}, {"32", "2"}, {"64", "1"}, {"64", "2"}};
    for (uint64_t p = 0; p < 4; p++) {
        const st_record *r = record_at(p);
        status_is(p, ST_STATUS_OK);
        ck_assert_uint_eq(r->nvalues, 2);
        ck_assert_str_eq(r->values[0], values[p][0]);
        ck_assert_str_eq(r->values[1], values[p][1]);
        ck_assert_str_eq(r->strategy, arena_text(ar, "parallel-scan(BS=%s, BF=2, SE=%s)", values[p][0], values[p][1]));
        ck_assert_uint_eq(r->nsamples, 7);
        ck_assert(r->min_ms <= r->median_ms && r->median_ms <= r->max_ms && r->min_ms > 0);
        ck_assert_uint_eq(r->bytes, 2 * 4096 * 4);
        ck_assert_uint_eq(strlen(r->kernels_sha256), 64);
    }
    ck_assert_str_eq(sum.best.strategy, st_records_best(&recs)->strategy);
    const char *csv = file_of(dir, "results.csv");
    ck_assert_int_eq(count_lines(csv), 5);
    ck_assert(starts_with(csv, "point,strategy,BS,SE,status,median_ms,"));
    ck_assert(starts_with(file_of(dir, "results.svg"), "<?xml"));
    st_explore_summary_free(&sum);
}
END_TEST

/* Keep the first `lines` whole lines of path and half of the next. */
static void cut_records(const char *path, int lines) {
    size_t len;
    char *text = slurp_file(ar, path, &len);
    const char *end = text;
    for (int i = 0; i < lines; i++) end = strchr(end, '\n') + 1;
    size_t next = strcspn(end, "\n");
    ck_assert(next > 10);
    write_text(path, text, (size_t)(end - text) + next / 2);
}

START_TEST(resume_redoes_only_the_points_not_recorded) {
    st_explore_summary sum;
    explore_ok(GRID, dir, 0, 1, &sum);
    st_explore_summary_free(&sum);
    const char *path = in_dir("results.jsonl");
    const char *before = file_of(dir, "results.jsonl");
    cut_records(path, 2);
    explore_ok(GRID, dir, 0, 1, &sum);
    ck_assert_uint_eq(sum.points, 4);
    ck_assert_uint_eq(sum.skipped, 2);
    ck_assert_uint_eq(lab.written, 2);
    ck_assert_uint_eq(lab.check_total, 2);
    ck_assert_uint_eq(sum.counts[ST_STATUS_OK], 4);
    const char *after = file_of(dir, "results.jsonl");
    ck_assert_int_eq(count_lines(after), 4);
    size_t two = (size_t)(strchr(strchr(before, '\n') + 1, '\n') + 1 - before);
    ck_assert_msg(!strncmp(before, after, two), "the records kept were rewritten");
    for (int i = 0; i < 4; i++) json_line(after, i); /* nothing of the cut line is left */
    read_records(dir);
    points_are_0_to(4);
    for (uint64_t p = 0; p < 4; p++) status_is(p, ST_STATUS_OK);
    ck_assert_uint_eq(recs.items[2].point, 2);
    ck_assert_uint_eq(recs.items[3].point, 3);
    ck_assert_int_eq(count_lines(file_of(dir, "results.csv")), 5);
    st_explore_summary_free(&sum);
}
END_TEST

START_TEST(a_finished_exploration_appends_nothing) {
    st_explore_summary sum;
    explore_ok(GRID, dir, 0, 1, &sum);
    st_explore_summary_free(&sum);
    const char *before = file_of(dir, "results.jsonl");
    explore_ok(GRID, dir, 0, 1, &sum);
    ck_assert_uint_eq(sum.points, 4);
    ck_assert_uint_eq(sum.skipped, 4);
    ck_assert_uint_eq(lab.written, 0);
    ck_assert_uint_eq(sum.counts[ST_STATUS_OK], 4);
    ck_assert_msg(sum.best.strategy != NULL, "the best of the records read back is the best");
    ck_assert_str_eq(file_of(dir, "results.jsonl"), before);
    st_explore_summary_free(&sum);
}
END_TEST

/* st_explore into d fails with a message holding each of parts. */
static void explore_refused(const char *space_text, const char *d, const char *part1, const char *part2) {
    st_explore_summary sum;
    st_err err = {0};
    ck_assert_msg(!explore_into(space_text, d, 0, 1, &sum, &err), "%s into %s was not refused", space_text, d);
    st_explore_summary_free(&sum);
    ck_assert_has(err.message, part1);
    if (part2) ck_assert_has(err.message, part2);
}

START_TEST(a_dir_of_another_exploration_is_refused) {
    st_explore_summary sum;
    explore_ok(NO_BUILDS, dir, 0, 1, &sum);
    st_explore_summary_free(&sum);
    const char *records = file_of(dir, "results.jsonl"), *meta = file_of(dir, "explore.json");
    ck_assert_int_eq(count_lines(records), 2);
    explore_refused("parallel-scan(BS=32, BF=2, SE=[3, 7])", dir, "another exploration", "SE=[3, 7]");
    lab.setup.seed = 2;
    explore_refused(NO_BUILDS, dir, "another exploration", "seed");
    lab.setup.seed = 1;
    static const char *const other_size[] = {"N=2048"};
    lab.setup.inputs = other_size;
    explore_refused(NO_BUILDS, dir, "another exploration", "N=2048");
    lab.setup.inputs = lab_inputs;
    ck_assert_str_eq(file_of(dir, "results.jsonl"), records);
    ck_assert_str_eq(file_of(dir, "explore.json"), meta);
    /* made by another build of strata: its kernels came from other code */
    const char *build = strstr(meta, "\"strata\": \""), *end = build ? strchr(build + 11, '"') : NULL;
    ck_assert_msg(end != NULL, "explore.json names no build:\n%s", meta);
    const char *older = arena_text(ar, "%.*s\"strata\": \"0.0.9-older\"%s", (int)(build - meta), meta, end + 1);
    write_text(in_dir("explore.json"), older, strlen(older));
    explore_refused(NO_BUILDS, dir, "another exploration", "strata=0.0.9-older");
    ck_assert_str_eq(file_of(dir, "results.jsonl"), records);
    write_text(in_dir("explore.json"), meta, strlen(meta));
    explore_ok(NO_BUILDS, dir, 0, 1, &sum); /* the same one again is welcome */
    ck_assert_uint_eq(sum.skipped, 2);
    st_explore_summary_free(&sum);
}
END_TEST

START_TEST(a_shard_that_does_not_exist_is_refused) {
    st_explore_summary sum;
    st_err err = {0};
    ck_assert(!explore_into(NO_BUILDS, dir, 2, 2, &sum, &err));
    ck_assert_has(err.message, "shard");
    st_explore_summary_free(&sum);
    ck_assert(!explore_into(NO_BUILDS, dir, 0, 0, &sum, &err));
    st_explore_summary_free(&sum);
    ck_assert(!exists(in_dir("results.jsonl")));
}
END_TEST

static void merge_ok(const char *const *dirs, uint32_t n, const char *out, st_explore_summary *sum) {
    st_err err = {0};
    ck_assert_msg(st_merge(dirs, n, out, sum, &err), "merging: %s", err.message);
}

START_TEST(shards_merge_into_one_exploration) {
    const char *d0 = in_dir("shard0"), *d1 = in_dir("shard1"), *all = in_dir("all");
    st_explore_summary sum;
    explore_ok(GRID, d0, 0, 2, &sum);
    ck_assert_uint_eq(sum.points, 2);
    st_explore_summary_free(&sum);
    read_records(d0);
    ck_assert_uint_eq(recs.count, 2);
    record_at(0);
    record_at(2);
    explore_ok(GRID, d1, 1, 2, &sum);
    ck_assert_uint_eq(sum.points, 2);
    st_explore_summary_free(&sum);
    read_records(d1);
    ck_assert_uint_eq(recs.count, 2);
    record_at(1);
    record_at(3);

    merge_ok((const char *const[]){d0, d1}, 2, all, &sum);
    ck_assert_uint_eq(sum.points, 4);
    ck_assert_uint_eq(sum.counts[ST_STATUS_OK], 4);
    read_records(all);
    points_are_0_to(4);
    for (uint64_t p = 0; p < 4; p++) status_is(p, ST_STATUS_OK);
    ck_assert_msg(sum.best.strategy != NULL, "no best");
    ck_assert_str_eq(sum.best.strategy, st_records_best(&recs)->strategy);
    ck_assert(sum.chart);
    ck_assert_str_eq(file_of(all, "program.strata"), PROGRAM);
    ck_assert_str_eq(st_json_get_string(json_of(file_of(all, "explore.json")), "space"), GRID);
    const char *csv = file_of(all, "results.csv");
    ck_assert_int_eq(count_lines(csv), 5);
    ck_assert(starts_with(csv, "point,strategy,BS,SE,status,median_ms,min_ms,max_ms,gb_per_s,runs,build_ms,"
                               "kernels_sha256,message\n"));
    for (int p = 0; p < 4; p++) /* rows by point */
        ck_assert_has(csv, arena_text(ar, "\n%d,\"parallel-scan(BS=%d, BF=2, SE=%d)\",%d,%d,ok,", p, p < 2 ? 32 : 64,
                                      p % 2 + 1, p < 2 ? 32 : 64, p % 2 + 1));
    ck_assert(starts_with(file_of(all, "results.svg"), "<?xml"));
    st_explore_summary_free(&sum);

    /* a point in two dirs is merged once, the first record of it winning */
    const char *again = in_dir("again");
    merge_ok((const char *const[]){all, d1, d0}, 3, again, &sum);
    ck_assert_uint_eq(sum.points, 4);
    st_explore_summary_free(&sum);
    ck_assert_str_eq(file_of(again, "results.jsonl"), file_of(all, "results.jsonl"));
}
END_TEST

START_TEST(merge_refuses_another_exploration) {
    const char *a = in_dir("a"), *b = in_dir("b"), *c = in_dir("c"), *out = in_dir("out");
    st_explore_summary sum;
    explore_ok(NO_BUILDS, a, 0, 1, &sum);
    st_explore_summary_free(&sum);
    explore_ok("parallel-scan(BS=32, BF=2, SE=[3, 7])", b, 0, 1, &sum);
    st_explore_summary_free(&sum);
    lab.setup.seed = 7;
    explore_ok(NO_BUILDS, c, 0, 1, &sum);
    st_explore_summary_free(&sum);
    st_err err = {0};
    ck_assert(!st_merge((const char *const[]){a, b}, 2, out, &sum, &err));
    st_explore_summary_free(&sum);
    ck_assert_has(err.message, "space");
    ck_assert_has(err.loc.file ? err.loc.file : err.message, b);
    ck_assert(!exists(arena_text(ar, "%s/results.jsonl", out)));
    memset(&err, 0, sizeof err);
    ck_assert(!st_merge((const char *const[]){a, c}, 2, out, &sum, &err));
    st_explore_summary_free(&sum);
    ck_assert_has(err.loc.file ? err.loc.file : err.message, c);
    ck_assert(!exists(arena_text(ar, "%s/results.jsonl", out)));
}
END_TEST

/* A dir that is not an exploration, next to one that is: refused by name
 * (and, under LeakSanitizer, without leaking what was read of it). */
START_TEST(merge_refuses_a_dir_that_is_not_an_exploration) {
    const char *a = in_dir("a"), *broken = in_dir("broken"), *empty = in_dir("empty"), *out = in_dir("out");
    st_explore_summary sum;
    explore_ok(NO_BUILDS, a, 0, 1, &sum);
    st_explore_summary_free(&sum);
    ck_assert(mkdir(broken, 0700) == 0 && mkdir(empty, 0700) == 0);
    write_text(arena_text(ar, "%s/explore.json", broken), "{\"space\": ", 10);
    st_err err = {0};
    ck_assert(!st_merge((const char *const[]){a, broken}, 2, out, &sum, &err));
    st_explore_summary_free(&sum);
    ck_assert_has(err.loc.file ? err.loc.file : "", broken);
    memset(&err, 0, sizeof err);
    ck_assert(!st_merge((const char *const[]){a, empty}, 2, out, &sum, &err));
    st_explore_summary_free(&sum);
    ck_assert_has(err.message, empty);
    memset(&err, 0, sizeof err);
    ck_assert(!st_merge(NULL, 0, out, &sum, &err));
    st_explore_summary_free(&sum);
}
END_TEST

/* An out that holds another exploration is refused, as explore refuses
 * it, and keeps what it holds. */
START_TEST(merge_refuses_an_out_of_another_exploration) {
    const char *a = in_dir("a"), *c = in_dir("c");
    st_explore_summary sum;
    explore_ok(NO_BUILDS, a, 0, 1, &sum);
    st_explore_summary_free(&sum);
    lab.setup.seed = 7;
    explore_ok(NO_BUILDS, c, 0, 1, &sum);
    st_explore_summary_free(&sum);
    const char *records = file_of(c, "results.jsonl"), *meta = file_of(c, "explore.json");
    st_err err = {0};
    ck_assert_msg(!st_merge((const char *const[]){a}, 1, c, &sum, &err), "merged over another exploration");
    st_explore_summary_free(&sum);
    ck_assert_has(err.message, "another exploration");
    ck_assert_has(err.message, "seed");
    ck_assert_str_eq(err.loc.file, c);
    ck_assert_str_eq(file_of(c, "results.jsonl"), records);
    ck_assert_str_eq(file_of(c, "explore.json"), meta);
}
END_TEST

/* An out that holds this exploration already keeps its records: merged
 * with the others, not replaced by them. */
START_TEST(merge_into_a_shard_of_the_same_exploration_keeps_its_records) {
    const char *d0 = in_dir("shard0"), *d1 = in_dir("shard1");
    st_explore_summary sum;
    explore_ok(NO_BUILDS, d0, 0, 2, &sum);
    st_explore_summary_free(&sum);
    explore_ok(NO_BUILDS, d1, 1, 2, &sum);
    st_explore_summary_free(&sum);
    merge_ok((const char *const[]){d0}, 1, d1, &sum);
    ck_assert_uint_eq(sum.points, 2);
    st_explore_summary_free(&sum);
    read_records(d1);
    points_are_0_to(2);
}
END_TEST

/* Write rs as d's results.jsonl. */
static void write_records(const char *d, const st_records *rs) {
    st_buf b = {0};
    for (size_t i = 0; i < rs->count; i++) {
        st_record_to_json(&rs->items[i], &b);
        st_buf_puts(&b, "\n");
    }
    write_text(arena_text(ar, "%s/results.jsonl", d), b.data, b.len);
    st_buf_free(&b);
}

/* Shards that disagree about a point (ok in one, wrong_answer in the
 * other) keep the failure and say so; a record of a point the space does
 * not have is dropped, with a warning. */
START_TEST(merge_keeps_a_failure_over_ok_and_drops_points_outside_the_space) {
    const char *a = in_dir("a"), *b = in_dir("b"), *out = in_dir("out");
    st_explore_summary sum;
    explore_ok("planted(K=[0, 1])", a, 0, 1, &sum); /* point 0 ok, point 1 wrong */
    st_explore_summary_free(&sum);
    ck_assert(mkdir(b, 0700) == 0);
    write_text(arena_text(ar, "%s/explore.json", b), file_of(a, "explore.json"), strlen(file_of(a, "explore.json")));
    write_text(arena_text(ar, "%s/program.strata", b), PROGRAM, strlen(PROGRAM));
    read_records(a);
    st_record *r0 = (st_record *)record_at(0), *r1 = (st_record *)record_at(1);
    ck_assert(r0->status == ST_STATUS_OK && r1->status == ST_STATUS_WRONG_ANSWER);
    r0->status = ST_STATUS_WRONG_ANSWER; /* b: the other way round */
    r1->status = ST_STATUS_OK;
    r1->median_ms = 0.001;
    st_record outside = {0};
    ck_assert(st_record_copy(&outside, r1));
    outside.point = 7;
    ck_assert(st_records_push(&recs, &outside));
    write_records(b, &recs);

    merge_ok((const char *const[]){a, b}, 2, out, &sum);
    const char *w = sum.warnings.data ? sum.warnings.data : "";
    ck_assert_has(w, "point 0 (planted(K=0)): ok in one exploration, wrong_answer in another; kept wrong_answer");
    ck_assert_has(w, "point 1 (planted(K=1)): wrong_answer in one exploration, ok in another; kept wrong_answer");
    ck_assert_has(w, "point 7 is outside the space (it has 2 points)");
    ck_assert_uint_eq(sum.points, 2);
    ck_assert_uint_eq(sum.counts[ST_STATUS_WRONG_ANSWER], 2);
    ck_assert_msg(sum.best.strategy == NULL, "a variant that failed in a shard is the best: %s", sum.best.strategy);
    st_explore_summary_free(&sum);
    read_records(out);
    points_are_0_to(2);
    status_is(0, ST_STATUS_WRONG_ANSWER);
    status_is(1, ST_STATUS_WRONG_ANSWER);
}
END_TEST

/* ====================================================================== */
/* cli: `strata explore`                                                  */
/* ====================================================================== */

static char *out_text, *err_text;

/* Run strata explore with args (NULL-terminated); its exit status. */
static int strata(const char *const *args) {
    return strata_spawn(ar, dir, environ, args, &out_text, &err_text);
}

static const char *prefix_sum(void) {
    const char *d = getenv("STRATA_EXAMPLES");
    ck_assert_msg(d != NULL, "STRATA_EXAMPLES is not set (run through meson test)");
    return arena_text(ar, "%s/prefix_sum.strata", d);
}

#define CLI_GRID "parallel-scan(BS=[32, 64], BF=2, SE=[1, 2])"

/* strata explore prefix_sum --space SPACE --out OUT with small settings. */
static int explore_cli(const char *space, const char *out) {
    return strata(ARGS("explore", prefix_sum(), "--space", space, "--size", "N=5000", "--runs", "7", "--out", out,
                       "--cache", cache, "--jobs", "2"));
}

static void explore_cli_ok(const char *space, const char *out) {
    int rc = explore_cli(space, out);
    ck_assert_msg(rc == 0, "exit %d\nstdout:\n%.2000s\nstderr:\n%.3000s", rc, out_text, err_text);
}

START_TEST(cli_explore_writes_records_csv_and_chart) {
    const char *out = in_dir("out");
    explore_cli_ok(CLI_GRID, out);
    ck_assert_has(out_text, "points: 4 in this shard, 0 already recorded\n");
    ck_assert_has(out_text, "status: ok 4\n");
    ck_assert_has(out_text, "best: parallel-scan(");
    ck_assert_has(out_text, "records: ");
    const char *jsonl = file_of(out, "results.jsonl");
    ck_assert_int_eq(count_lines(jsonl), 4);
    double best_ms = 1e300;
    const char *best = NULL;
    for (int i = 0; i < 4; i++) {
        const st_json *j = json_line(jsonl, i);
        ck_assert_str_eq(st_json_get_string(j, "status"), "ok");
        const st_json *samples = st_json_get(j, "samples_ms");
        ck_assert(samples && samples->kind == ST_JSON_ARRAY);
        ck_assert_uint_eq(samples->len, 7);
        double median;
        ck_assert(st_json_get_number(j, "median_ms", &median));
        if (median < best_ms) best_ms = median, best = st_json_get_string(j, "strategy");
    }
    ck_assert_has(out_text, arena_text(ar, "best: %s\n", best)); /* the best is the fastest */
    read_records(out);
    points_are_0_to(4);
    ck_assert_str_eq(file_of(out, "program.strata"), example_text(ar, "prefix_sum"));
    const st_json *meta = json_of(file_of(out, "explore.json"));
    ck_assert_str_eq(st_json_get_string(meta, "space"), CLI_GRID);
    ck_assert_str_eq(st_json_get_string(meta, "program_name"), "prefix_sum");
    const char *csv = file_of(out, "results.csv");
    ck_assert_int_eq(count_lines(csv), 5);
    ck_assert(starts_with(csv, "point,strategy,BS,SE,status,median_ms,min_ms,max_ms,gb_per_s,runs,"));
    const char *svg = file_of(out, "results.svg");
    ck_assert(starts_with(svg, "<?xml"));
    ck_assert_has(svg, "BS");
    ck_assert_has(svg, "SE");
    ck_assert_has(svg, "</svg>");
}
END_TEST

START_TEST(cli_rerun_of_a_finished_exploration_redoes_nothing) {
    const char *out = in_dir("out");
    explore_cli_ok(CLI_GRID, out);
    const char *before = file_of(out, "results.jsonl");
    explore_cli_ok(CLI_GRID, out);
    ck_assert_has(out_text, "4 already recorded");
    ck_assert_has(out_text, "status: ok 4\n");
    ck_assert_has(out_text, "best: parallel-scan(");
    ck_assert_str_eq(file_of(out, "results.jsonl"), before);
}
END_TEST

START_TEST(cli_constraints_are_recorded_not_run) {
    const char *out = in_dir("out");
    explore_cli_ok("parallel-scan(BS=[32, 48], BF=2, SE=[1, 3]) where BS != 48 || SE != 1", out);
    ck_assert_has(out_text, "status: ok 2 constraint 2\n");
    read_records(out);
    points_are_0_to(4);
    status_is(0, ST_STATUS_OK);
    status_is(1, ST_STATUS_CONSTRAINT); /* the rule: SE = 3 does not divide BS = 32 */
    status_is(2, ST_STATUS_CONSTRAINT); /* the where */
    status_is(3, ST_STATUS_OK);
    ck_assert_has(record_at(1)->message, "SE");
    ck_assert_has(record_at(2)->message, "BS != 48 || SE != 1");
    ck_assert_uint_eq(record_at(2)->nsamples, 0);
    ck_assert_str_eq(record_at(2)->kernels_sha256, "");
    const char *csv = file_of(out, "results.csv");
    ck_assert_has(csv, "\n2,\"parallel-scan(BS=48, BF=2, SE=1)\",48,1,constraint,");
    ck_assert_has(file_of(out, "results.svg"), "constraint");
}
END_TEST

typedef struct bad_case {
    const char *what;
    const char *args[16];
    const char *expect;
} bad_case;

START_TEST(cli_bad_input_is_a_message_and_exit_1) {
    const char *ps = prefix_sum(), *out = in_dir("out");
    const bad_case cases[] = {
        {"no space", {"--out", out, "--size", "N=64"}, "--space SPACE is needed"},
        {"no out", {"--space", "parallel-scan(BS=32, BF=2, SE=1)", "--size", "N=64"}, "--out DIR is needed"},
        {"space syntax", {"--space", "parallel-scan(BS=[32,, 64], BF=2, SE=1)", "--out", out, "--size", "N=64"},
         "space:1:22: error:"},
        {"unknown rule", {"--space", "nosuchrule(BS=[32, 64])", "--out", out, "--size", "N=64"}, "nosuchrule"},
        {"shard past the end", {"--space", NO_BUILDS, "--out", out, "--size", "N=64", "--shard", "2/2"}, "--shard"},
        {"shard not I/N", {"--space", NO_BUILDS, "--out", out, "--size", "N=64", "--shard", "x"}, "--shard"},
        {"too few runs", {"--space", NO_BUILDS, "--out", out, "--size", "N=64", "--runs", "3"}, "--runs"},
        {"no jobs", {"--space", NO_BUILDS, "--out", out, "--size", "N=64", "--jobs", "0"}, "--jobs"},
        {"no such device", {"--space", NO_BUILDS, "--out", out, "--size", "N=64", "--device", "nosuchdevice"},
         "nosuchdevice"},
        {"no size", {"--space", NO_BUILDS, "--out", out}, "--size N="},
    };
    faults f = {0};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *args[24] = {"explore", ps, "--cache", cache};
        int n = 4;
        for (int k = 0; cases[i].args[k]; k++) args[n++] = cases[i].args[k];
        int rc = strata(args);
        if (rc != 1) fault(&f, "%s: exit %d, not 1\nstderr: %.500s", cases[i].what, rc, err_text);
        if (!strstr(err_text, cases[i].expect))
            fault(&f, "%s: no `%s` in stderr:\n%.500s", cases[i].what, cases[i].expect, err_text);
        if (!strstr(err_text, "error"))
            fault(&f, "%s: the message does not say error:\n%.500s", cases[i].what, err_text);
        if (out_text[0]) fault(&f, "%s: stdout is not empty:\n%.500s", cases[i].what, out_text);
        if (exists(arena_text(ar, "%s/results.jsonl", out))) fault(&f, "%s: records were written", cases[i].what);
        scratch_remove(out);
    }
    no_faults(&f);
}
END_TEST

/* A strategy that cannot be read fails every point alike: one error located
 * in the space, not a list of constraints. */
START_TEST(cli_malformed_strategy_is_one_error_not_constraints) {
    const char *out = in_dir("out");
    int rc = explore_cli("parallel-scan(BS=[32, 64], BF=2, SE=1", out);
    ck_assert_msg(rc == 1, "exit %d\nstderr:\n%.2000s", rc, err_text);
    ck_assert_has(err_text, "space:1:");
    ck_assert_has(err_text, "expected");
    ck_assert_msg(!strstr(err_text, "constraint"), "%s", err_text);
    ck_assert_str_eq(out_text, "");
    ck_assert(!exists(arena_text(ar, "%s/results.jsonl", out)));
}
END_TEST

/* After that error the user fixes the space and runs again into the same
 * --out: the failed run must not have claimed the folder. */
START_TEST(cli_failed_space_leaves_out_dir_free) {
    const char *out = in_dir("out");
    ck_assert_int_eq(explore_cli("parallel-scan(BS=[32, 64], BF=2, SE=1", out), 1);
    int rc = explore_cli("parallel-scan(BS=[32, 64], BF=2, SE=1)", out);
    ck_assert_msg(rc == 0, "exit %d after a failed run into the same --out\nstderr:\n%.2000s", rc, err_text);
    read_records(out);
    points_are_0_to(2);
}
END_TEST

/* A `strata explore --serve` into out, left waiting for requests: it holds
 * out's lock until *to_it is closed. Its pid. */
static pid_t serving(const char *out, int *to_it) {
    const char *bin = getenv("STRATA");
    ck_assert(bin != NULL);
    int in[2], back[2];
    ck_assert(pipe(in) == 0 && pipe(back) == 0);
    const char *argv[] = {bin, "explore", prefix_sum(), "--space", CLI_GRID, "--size", "N=5000", "--runs", "7",
                          "--out", out, "--cache", cache, "--serve", NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, back[1], 1);
    posix_spawn_file_actions_addclose(&fa, in[1]);
    posix_spawn_file_actions_addclose(&fa, back[0]);
    pid_t pid;
    ck_assert(posix_spawn(&pid, bin, &fa, NULL, (char *const *)argv, environ) == 0);
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    close(back[1]);
    char hello[64] = {0}; /* its first line comes once the folder is its own */
    ck_assert_msg(read(back[0], hello, sizeof hello - 1) > 0 && strstr(hello, "strata_serve"), "no hello: %s", hello);
    close(back[0]);
    *to_it = in[1];
    return pid;
}

/* Two strata into one folder: the second is refused, naming the first
 * (its pid and command), and writes nothing there. */
START_TEST(cli_a_folder_in_use_is_refused_naming_its_holder) {
    const char *out = in_dir("out"), *other = in_dir("other");
    int to_it;
    pid_t pid = serving(out, &to_it);
    int rc = explore_cli(CLI_GRID, out);
    const char *explore_err = err_text;
    explore_cli_ok(NO_BUILDS, other);
    int merge_rc = strata(ARGS("merge", other, "--out", out));
    const char *merge_err = err_text;
    size_t recorded; /* the server made the records' file, and wrote none */
    slurp_file(ar, arena_text(ar, "%s/results.jsonl", out), &recorded);
    close(to_it); /* the server ends, and with it the lock */
    int status;
    ck_assert(waitpid(pid, &status, 0) == pid);
    ck_assert_msg(rc == 1, "a second exploration into a folder in use: exit %d\n%.2000s", rc, explore_err);
    ck_assert_has(explore_err, arena_text(ar, "%s: error: in use by another strata (pid %ld: ", out, (long)pid));
    ck_assert_has(explore_err, "--serve");
    ck_assert_msg(merge_rc == 1, "a merge into a folder in use: exit %d\n%.2000s", merge_rc, merge_err);
    ck_assert_has(merge_err, "in use by another strata");
    ck_assert_msg(!recorded, "the refused ones wrote records into the folder in use");
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the server: status %d", status);
    explore_cli_ok(CLI_GRID, out); /* free again */
    read_records(out);
    points_are_0_to(4);
}
END_TEST

/* The build cache's entries in d, as paths. */
static int cache_entries(const char *d, const char **paths, int cap) {
    int n = 0;
    DIR *h = opendir(d);
    for (struct dirent *e; h && (e = readdir(h)) && n < cap;)
        if (strstr(e->d_name, ".bin") && e->d_name[0] != '.') paths[n++] = arena_text(ar, "%s/%s", d, e->d_name);
    if (h) closedir(h);
    return n;
}

/* A cut or damaged entry of the build cache is dropped and built again:
 * before, PoCL crashed deserialising it, on every run, for good. */
START_TEST(cli_a_damaged_build_cache_entry_is_built_again) {
    const char *own = in_dir("cache"), *paths[16];
    const char *one = "parallel-scan(BS=32, BF=2, SE=[1, 2])";
    const char *args[] = {"explore", prefix_sum(), "--space", one, "--size", "N=5000", "--runs", "7", "--out", NULL,
                          "--cache", own, NULL};
    const char *outs[] = {in_dir("first"), in_dir("cut"), in_dir("flipped")};
    for (int round = 0; round < 3; round++) {
        int n = cache_entries(own, paths, 16);
        if (round) ck_assert_int_gt(n, 0);
        for (int i = 0; i < n; i++) {
            size_t len;
            char *text = slurp_file(ar, paths[i], &len);
            ck_assert_msg(starts_with(text, "strata-build-cache-entry 2 "), "%s: no header", paths[i]);
            if (round == 1) ck_assert(truncate(paths[i], (off_t)len / 2) == 0); /* cut at half */
            if (round == 2) {                                                    /* one byte changed */
                text[len / 2] ^= 0x5a;
                write_text(paths[i], text, len);
            }
        }
        args[9] = outs[round];
        int rc = strata(args);
        ck_assert_msg(rc == 0, "round %d: exit %d\n%.3000s", round, rc, err_text);
        read_records(outs[round]);
        status_is(0, ST_STATUS_OK);
        status_is(1, ST_STATUS_OK);
    }
    /* and the entries are whole again */
    int n = cache_entries(own, paths, 16);
    ck_assert_int_gt(n, 0);
    for (int i = 0; i < n; i++) {
        size_t len;
        char *text = slurp_file(ar, paths[i], &len);
        unsigned long long want;
        ck_assert(sscanf(text, "strata-build-cache-entry 2 %llu ", &want) == 1);
        ck_assert_uint_eq(len - (size_t)(strchr(text, '\n') + 1 - text), want);
    }
}
END_TEST

/* ====================================================================== */

static Suite *explore_suite(void) {
    Suite *s = suite_create("explore");
    TCase *tc = tcase_create("records");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, status_names_read_back);
    tcase_add_test(tc, record_json_round_trip_keeps_every_field);
    tcase_add_test(tc, record_from_json_needs_point_strategy_values_status);
    tcase_add_test(tc, records_read_leaves_out_a_cut_last_line);
    tcase_add_test(tc, records_read_names_a_bad_middle_line);
    tcase_add_test(tc, records_read_takes_a_missing_file_as_none);
    suite_add_tcase(s, tc);

    tc = tcase_create("hostile");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, record_numbers_outside_their_types);
    tcase_add_test(tc, exploration_counts_outside_their_types);
    tcase_add_test(tc, serve_requests);
    suite_add_tcase(s, tc);

    tc = tcase_create("planted");
    tcase_add_checked_fixture(tc, lab_setup, lab_teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, wrong_answer_is_recorded_and_never_best);
    tcase_add_test(tc, hang_while_checking_is_a_timeout_and_the_rest_goes_on);
    tcase_add_test(tc, hang_while_timing_is_a_timeout);
    tcase_add_test(tc, an_index_out_of_range_is_a_launch_error);
    tcase_add_test(tc, every_file_of_an_exploration_is_written);
    tcase_add_test(tc, a_space_is_explored_a_batch_at_a_time);
    tcase_add_test(tc, resume_redoes_only_the_points_not_recorded);
    tcase_add_test(tc, a_finished_exploration_appends_nothing);
    tcase_add_test(tc, a_dir_of_another_exploration_is_refused);
    tcase_add_test(tc, a_shard_that_does_not_exist_is_refused);
    tcase_add_test(tc, shards_merge_into_one_exploration);
    tcase_add_test(tc, merge_refuses_another_exploration);
    tcase_add_test(tc, merge_refuses_a_dir_that_is_not_an_exploration);
    tcase_add_test(tc, merge_refuses_an_out_of_another_exploration);
    tcase_add_test(tc, merge_into_a_shard_of_the_same_exploration_keeps_its_records);
    tcase_add_test(tc, merge_keeps_a_failure_over_ok_and_drops_points_outside_the_space);
    suite_add_tcase(s, tc);

    tc = tcase_create("cli");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, cli_explore_writes_records_csv_and_chart);
    tcase_add_test(tc, cli_rerun_of_a_finished_exploration_redoes_nothing);
    tcase_add_test(tc, cli_constraints_are_recorded_not_run);
    tcase_add_test(tc, cli_bad_input_is_a_message_and_exit_1);
    tcase_add_test(tc, cli_malformed_strategy_is_one_error_not_constraints);
    tcase_add_test(tc, cli_failed_space_leaves_out_dir_free);
    tcase_add_test(tc, cli_a_folder_in_use_is_refused_naming_its_holder);
    tcase_add_test(tc, cli_a_damaged_build_cache_entry_is_built_again);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    scratch_make(root, sizeof root, "explore");
    snprintf(cache, sizeof cache, "%s/cache", root);
    int rc = run_suite(explore_suite());
    scratch_remove(root);
    return rc;
}
