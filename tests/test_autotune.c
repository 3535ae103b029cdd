/* tests/test_autotune.c — the autotuner (explore/autotune.py) and what it
 * stands on, `strata explore --serve`, on the default device (PoCL on CI).
 *
 *   serve       the greeting, a point evaluated and then answered from its
 *               record, measured again (the record replaced), constraints,
 *               bad requests answered with an error and the session going
 *               on, a client's own status or time refused; a point a dead
 *               strata was evaluating recorded as `crash` by the next; the
 *               directory is the driver's and exports
 *   autotune    each sampler finds a validated point on a small space; its
 *               files have the driver's format and export; a study killed
 *               mid-way resumes from its database; two directories share
 *               one study and merge; a plugin rule that crashes is a crash;
 *               a strata process that dies is recorded as `crash` and
 *               replaced
 *
 * The suite needs the project's virtual environment with optuna, which
 * ./dev.sh test makes (.venv). */
#include "explore/explore.h"
#include "harness.h"
#include "run_strata.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern char **environ;

typedef struct fixture {
    st_arena *a;
    char dir[256];
    const char *program, *out, *cache;
} fixture;

static void setup(fixture *f) {
    f->a = st_arena_new();
    scratch_make(f->dir, sizeof f->dir, "autotune");
    f->program = arena_text(f->a, "%s/prefix_sum.strata", getenv("STRATA_EXAMPLES"));
    f->out = arena_text(f->a, "%s/explored", f->dir);
    f->cache = arena_text(f->a, "%s/cache", f->dir);
}

static void teardown(fixture *f) {
    scratch_remove(f->dir);
    st_arena_free(f->a);
}

/* The lines of text, as parsed JSON objects. */
static const st_json *line_json(fixture *f, const char *text, int index) {
    const char *p = text;
    for (int i = 0; i < index && p; i++) p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL;
    ck_assert_msg(p && *p, "no line %d in:\n%.2000s", index + 1, text);
    size_t len = strcspn(p, "\n");
    st_err err = {0};
    const st_json *j = st_json_parse(f->a, "answer", p, len, &err);
    ck_assert_msg(j != NULL, "line %d is not JSON (%s): %.*s", index + 1, err.message, (int)len, p);
    return j;
}

static const char *file_of(fixture *f, const char *name) {
    const char *text = slurp_file(f->a, arena_text(f->a, "%s/%s", f->out, name), NULL);
    ck_assert_msg(text != NULL, "%s/%s was not written", f->out, name);
    return text;
}

/* The records in DIR as a reader of the driver's files sees them. */
static st_records records_of(fixture *f) {
    st_records rs;
    size_t truncated;
    st_err err = {0};
    ck_assert_msg(st_records_read(arena_text(f->a, "%s/results.jsonl", f->out), &rs, &truncated, &err), "%s",
                  err.message);
    ck_assert_uint_eq(truncated, 0);
    return rs;
}

static void exports(fixture *f) {
    char *out, *err;
    int rc = strata_spawn(f->a, f->dir, environ,
                          ARGS("export", f->out, "--into", arena_text(f->a, "%s/results", f->dir), "--top", "2",
                               "--cache", f->cache),
                          &out, &err);
    ck_assert_msg(rc == 0, "export failed:\n%.3000s", err);
    ck_assert_has(out, "kernels: ");
}

/* ------------------------------------------------------------------------ */
/* strata explore --serve                                                   */
/* ------------------------------------------------------------------------ */

#define SMALL_SPACE "parallel-scan(BS=[32, 64, 128], BF=2, SE=[2, 4])"

static int serve(fixture *f, const char *space, const char *requests, char **out, char **err) {
    const char *input = arena_text(f->a, "%s/requests", f->dir);
    FILE *in = fopen(input, "w");
    ck_assert(in != NULL);
    fputs(requests, in);
    fclose(in);
    return program_spawn_with_input(f->a, f->dir, environ, env_path("STRATA"),
                                    ARGS("explore", f->program, "--space", space, "--size", "N=3001", "--runs", "7",
                                         "--out", f->out, "--cache", f->cache, "--serve"),
                                    input, out, err);
}

START_TEST(serve_answers_each_point_with_its_record) {
    fixture f;
    setup(&f);
    char *out, *err;
    /* a line longer than any request (a peer that never ends its line must
     * not grow strata): refused, and the session goes on */
    char *long_line = st_arena_zalloc(f.a, 2 * ST_SERVE_REQUEST_MAX);
    memset(long_line, ' ', 2 * ST_SERVE_REQUEST_MAX - 1);
    long_line[0] = '{';
    int rc = serve(&f, SMALL_SPACE, arena_text(f.a, "%s%s\n{\"point\": 3, \"again\": true}\n",
                   "{\"point\": 3}\n"                      /* BS=64, SE=4 */
                   "{\"point\": 3}\n"                      /* answered from its record */
                   "\n"                                    /* (blank lines are skipped) */
                   "{\"point\": 6}\n"                      /* not in the space */
                   "not json\n"
                   "{\"pointe\": 1}\n"
                   "{\"point\": 1.5}\n"
                   "{\"point\": 0, \"status\": \"ok\", \"median_ms\": 0}\n" /* a client names points only */
                   "{\"point\": 0, \"status\": \"crash\", \"message\": \"it died\"}\n"
                   "{\"point\": 3, \"again\": true}\n", long_line),
                   &out, &err);
    ck_assert_msg(rc == 0, "serve failed:\n%.3000s", err);
    /* the greeting: device, points, dimensions and their values */
    const st_json *hello = line_json(&f, out, 0);
    double n;
    ck_assert(st_json_get_number(hello, "strata_serve", &n) && n == 1);
    ck_assert(st_json_get_number(hello, "points", &n) && n == 6);
    ck_assert(st_json_get_string(hello, "device") != NULL);
    const st_json *dims = st_json_get(hello, "dims");
    ck_assert(dims && dims->kind == ST_JSON_ARRAY && dims->len == 2);
    ck_assert_str_eq(st_json_get_string(&dims->items[0], "name"), "BS");
    const st_json *bs = st_json_get(&dims->items[0], "values");
    ck_assert(bs && bs->len == 3 && bs->items[2].number == 128);
    /* a point measured, then answered from its record */
    const st_json *first = line_json(&f, out, 1), *second = line_json(&f, out, 2);
    ck_assert(!st_json_get(first, "recorded")->boolean);
    ck_assert(st_json_get(second, "recorded")->boolean);
    const st_json *rec = st_json_get(first, "record");
    ck_assert_str_eq(st_json_get_string(rec, "strategy"), "parallel-scan(BS=64, BF=2, SE=4)");
    ck_assert_str_eq(st_json_get_string(rec, "status"), "ok");
    const st_json *samples = st_json_get(rec, "samples_ms");
    ck_assert(samples && samples->kind == ST_JSON_ARRAY && samples->len == 7);
    double m1, m2;
    ck_assert(st_json_get_number(rec, "median_ms", &m1) && m1 > 0);
    ck_assert(st_json_get_number(st_json_get(second, "record"), "median_ms", &m2) && m1 == m2);
    /* bad requests: an error each, and the session goes on */
    ck_assert_has(st_json_get_string(line_json(&f, out, 3), "error"), "point 6 is not in the space: it has points 0 to 5");
    ck_assert_has(st_json_get_string(line_json(&f, out, 4), "error"), "not a JSON line");
    ck_assert_has(st_json_get_string(line_json(&f, out, 5), "error"), "a request is {\"point\": P}");
    ck_assert_has(st_json_get_string(line_json(&f, out, 6), "error"), "a request is {\"point\": P}");
    /* statuses and times are strata's: a client's own are refused, and recorded nowhere */
    ck_assert_has(st_json_get_string(line_json(&f, out, 7), "error"), "a request names a point, and nothing else");
    ck_assert_has(st_json_get_string(line_json(&f, out, 8), "error"), "a request names a point, and nothing else");
    /* measured again: a new record, which replaces the first */
    const st_json *again = line_json(&f, out, 9);
    ck_assert(!st_json_get(again, "recorded")->boolean);
    ck_assert_str_eq(st_json_get_string(st_json_get(again, "record"), "status"), "ok");
    ck_assert_has(st_json_get_string(line_json(&f, out, 10), "error"), "a request is a line of at most 4096 bytes");
    again = line_json(&f, out, 11);
    ck_assert_str_eq(st_json_get_string(st_json_get(again, "record"), "status"), "ok");
    ck_assert_has(err, "serve: 1 points recorded in");
    /* the driver's files */
    st_records rs = records_of(&f);
    ck_assert_uint_eq(rs.count, 1);
    const st_record *r3 = NULL;
    for (size_t i = 0; i < rs.count; i++)
        if (rs.items[i].point == 3) r3 = &rs.items[i];
    ck_assert(r3 != NULL);
    double again_ms;
    ck_assert(st_json_get_number(st_json_get(again, "record"), "median_ms", &again_ms));
    ck_assert(r3->median_ms == again_ms);
    st_records_free(&rs);
    ck_assert_has(file_of(&f, "results.csv"), "point,strategy,BS,SE,status");
    ck_assert_has(file_of(&f, "explore.json"), "\"space\": \"" SMALL_SPACE "\"");
    file_of(&f, "results.svg");
    exports(&f);
    /* a second session resumes: the recorded point is answered, not redone */
    rc = serve(&f, SMALL_SPACE, "{\"point\": 3}\n", &out, &err);
    ck_assert_msg(rc == 0, "%.3000s", err);
    ck_assert(st_json_get(line_json(&f, out, 1), "recorded")->boolean);
    teardown(&f);
}
END_TEST

/* The point a strata died evaluating (its mark left in the directory) is
 * recorded as `crash` by the next session, before anything else, and a
 * mark naming no point of the space is refused by name. */
START_TEST(serve_records_the_point_a_dead_strata_was_evaluating_as_a_crash) {
    fixture f;
    setup(&f);
    ck_assert(mkdir(f.out, 0700) == 0);
    const char *mark = arena_text(f.a, "%s/serve-evaluating", f.out);
    ck_assert(st_write_file(mark, "2\n", 2, NULL));
    char *out, *err;
    int rc = serve(&f, SMALL_SPACE, "{\"point\": 2}\n", &out, &err);
    ck_assert_msg(rc == 0, "%.3000s", err);
    const st_json *answer = line_json(&f, out, 1), *rec = st_json_get(answer, "record");
    ck_assert(st_json_get(answer, "recorded")->boolean);
    ck_assert_str_eq(st_json_get_string(rec, "status"), "crash");
    ck_assert_has(st_json_get_string(rec, "message"), "the strata process evaluating it died");
    ck_assert_int_ne(access(mark, F_OK), 0);
    ck_assert(st_write_file(mark, "6\n", 2, NULL)); /* the space has points 0 to 5 */
    rc = serve(&f, SMALL_SPACE, "{\"point\": 3}\n", &out, &err);
    ck_assert_int_eq(rc, 1);
    ck_assert_has(err, arena_text(f.a, "%s: error: serve-evaluating names no point of the space", f.out));
    teardown(&f);
}
END_TEST

START_TEST(serve_records_constraints_and_refuses_what_it_cannot_do) {
    fixture f;
    setup(&f);
    char *out, *err;
    int rc = serve(&f, "parallel-scan(BS=[32, 64], BF=2, SE=[2, 4]) where BS > 32", "{\"point\": 1}\n{\"point\": 2}\n",
                   &out, &err);
    ck_assert_msg(rc == 0, "%.3000s", err);
    const st_json *rejected = st_json_get(line_json(&f, out, 1), "record");
    ck_assert_str_eq(st_json_get_string(rejected, "status"), "constraint");
    ck_assert_has(st_json_get_string(rejected, "message"), "BS > 32");
    ck_assert_str_eq(st_json_get_string(st_json_get(line_json(&f, out, 2), "record"), "status"), "ok");
    /* one point at a time: no shards, no jobs */
    rc = strata_spawn(f.a, f.dir, environ,
                      ARGS("explore", f.program, "--space", SMALL_SPACE, "--size", "N=10", "--out",
                           arena_text(f.a, "%s/other", f.dir), "--serve", "--jobs", "2"),
                      &out, &err);
    ck_assert_int_eq(rc, 1);
    ck_assert_has(err, "--serve evaluates one point at a time");
    /* a space that does not parse is refused before the directory is touched */
    rc = strata_spawn(f.a, f.dir, environ,
                      ARGS("explore", f.program, "--space", "parallel-scan(BS=[32, 64], BF=2, SE=2", "--size", "N=10",
                           "--out", arena_text(f.a, "%s/other", f.dir), "--serve"),
                      &out, &err);
    ck_assert_int_eq(rc, 1);
    ck_assert_str_eq(out, "");
    struct stat st;
    ck_assert_int_ne(stat(arena_text(f.a, "%s/other", f.dir), &st), 0);
    teardown(&f);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* explore/autotune.py                                                      */
/* ------------------------------------------------------------------------ */

/* The autotuner's arguments after the script and the program. */
static int autotune(fixture *f, const char *const *extra, char **out, char **err) {
    const char *argv[48] = {env_path("STRATA_AUTOTUNE"), f->program, "--out", f->out, "--size", "N=3001",
                            "--runs", "7", "--cache", f->cache, "--strata", env_path("STRATA")};
    int n = 12;
    for (const char *const *e = extra; *e; e++) argv[n++] = *e;
    argv[n] = NULL;
    return program_spawn(f->a, f->dir, environ, env_path("STRATA_PYTHON"), argv, out, err);
}

static const char *const samplers[] = {"tpe", "cmaes", "random"};

START_TEST(each_sampler_finds_a_validated_point_in_the_drivers_format) {
    fixture f;
    setup(&f);
    char *out, *err;
    int rc = autotune(&f, ARGS("--space", SMALL_SPACE, "--sampler", samplers[_i], "--trials", "5", "--sampler-seed", "3"),
                      &out, &err);
    ck_assert_msg(rc == 0, "autotune (%s) failed (exit %d):\n%.2000s\n%.2000s", samplers[_i], rc, out, err);
    ck_assert_has(out, arena_text(f.a, "sampler %s", samplers[_i]));
    ck_assert_has(out, "[5/5] ");
    ck_assert_has(out, "best: parallel-scan(BS=");
    ck_assert_has(out, "measured again: median ");
    /* what it found ran correctly, and the files are the driver's */
    st_records rs = records_of(&f);
    ck_assert_uint_ge(rs.count, 1);
    ck_assert_ptr_nonnull(st_records_best(&rs));
    for (size_t i = 0; i < rs.count; i++) {
        ck_assert_uint_lt(rs.items[i].point, 6);
        ck_assert(rs.items[i].status == ST_STATUS_OK);
        ck_assert_uint_eq(rs.items[i].nsamples, 7);
    }
    st_records_free(&rs);
    ck_assert_has(file_of(&f, "results.csv"), "point,strategy,BS,SE,status,median_ms");
    file_of(&f, "results.svg");
    ck_assert_has(file_of(&f, "explore.json"), "\"strata_explore\": 1");
    const char *summary = file_of(&f, "autotune.json");
    ck_assert_has(summary, arena_text(f.a, "\"sampler\": \"%s\"", samplers[_i]));
    ck_assert_has(summary, "\"trials\": 5");
    file_of(&f, "study.db");
    exports(&f);
    teardown(&f);
}
END_TEST

/* A budget in minutes instead of evaluations: the study stops on time. */
START_TEST(a_budget_in_minutes_ends_the_study) {
    fixture f;
    setup(&f);
    char *out, *err;
    int rc = autotune(&f, ARGS("--space", SMALL_SPACE, "--minutes", "0.1", "--sampler", "tpe", "--sampler-seed", "1"), &out,
                      &err);
    ck_assert_msg(rc == 0, "autotune failed (exit %d):\n%.2000s\n%.2000s", rc, out, err);
    ck_assert_has(out, "[1/?] ");
    ck_assert_has(out, "best: parallel-scan(BS=");
    /* (that it ended at all is the point: without a budget it would not) */
    ck_assert_has(file_of(&f, "autotune.json"), "\"trials\": ");
    teardown(&f);
}
END_TEST

static size_t lines_in(const char *path) {
    FILE *fp = fopen(path, "r");
    size_t n = 0;
    for (int c; fp && (c = fgetc(fp)) != EOF;) n += c == '\n';
    if (fp) fclose(fp);
    return n;
}

#define BIG_SPACE "parallel-scan(BS=[16..512 pow2], BF=2, SE=[1..16 pow2])"

/* argv (argv[0] a path) started in a process group of its own, so that a
 * test can kill it and its children at once; standard input /dev/null,
 * its output in DIR/NAME.out and DIR/NAME.err. */
static pid_t spawn_in_group(fixture *f, const char *const *argv, const char *name) {
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, arena_text(f->a, "%s/%s.out", f->dir, name), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
    posix_spawn_file_actions_addopen(&fa, 2, arena_text(f->a, "%s/%s.err", f->dir, name), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
    pid_t pid;
    ck_assert_int_eq(posix_spawn(&pid, argv[0], &fa, &at, (char *const *)argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    return pid;
}

/* A study on BIG_SPACE started and left running, in a process group of its
 * own: its output goes to DIR/tune.out and tune.err. Returns its pid once
 * `records` points are in results.jsonl. */
static pid_t tune_in_background(fixture *f, const char *trials, const char *seed, size_t records) {
    const char *argv[] = {env_path("STRATA_PYTHON"), env_path("STRATA_AUTOTUNE"), f->program, "--out", f->out,
                          "--size", "N=3001", "--runs", "7", "--cache", f->cache, "--strata", env_path("STRATA"),
                          "--space", BIG_SPACE, "--trials", trials, "--sampler", "random", "--sampler-seed", seed, NULL};
    pid_t pid = spawn_in_group(f, argv, "tune");
    const char *path = arena_text(f->a, "%s/results.jsonl", f->out);
    for (int waited = 0; lines_in(path) < records && waited < 3000; waited++)
        nanosleep(&(struct timespec){0, 100000000}, NULL);
    ck_assert_msg(lines_in(path) >= records, "the study recorded %zu points in 300 s:\n%s", lines_in(path),
                  slurp_file(f->a, arena_text(f->a, "%s/tune.err", f->dir), NULL));
    return pid;
}

START_TEST(a_killed_study_resumes_from_its_database) {
    fixture f;
    setup(&f);
    /* a long study, killed (all of its process group) once three points are recorded */
    pid_t pid = tune_in_background(&f, "40", "5", 3);
    kill(-pid, SIGKILL);
    int status;
    ck_assert(waitpid(pid, &status, 0) == pid);
    ck_assert(WIFSIGNALED(status));
    size_t before = lines_in(arena_text(f.a, "%s/results.jsonl", f.out));
    /* the same command, a smaller budget: it goes on from the study */
    char *out, *err;
    int rc = autotune(&f, ARGS("--space", BIG_SPACE, "--trials", "6", "--sampler", "random", "--sampler-seed", "5"),
                      &out, &err);
    ck_assert_msg(rc == 0, "the resumed study failed (exit %d):\n%.2000s\n%.2000s", rc, out, err);
    ck_assert_has(out, "resumed with ");
    ck_assert_has(out, "best: parallel-scan(");
    /* six, or seven where the kill left a trial running that no record says whose it was
     * (killed between optuna's ask and the trial's first attribute): its worker's death is
     * found by its heartbeat only, at the end, and its point evaluated once more */
    const char *summary = file_of(&f, "autotune.json");
    ck_assert_msg(strstr(summary, "\"trials\": 6,") || strstr(summary, "\"trials\": 7,"), "%s", summary);
    /* the records of the first run are still there, and not one line is cut */
    st_records rs = records_of(&f);
    ck_assert_uint_ge(rs.count, before > 6 ? 6 : before);
    st_records_free(&rs);
    teardown(&f);
}
END_TEST

/* Two machines, one study: each tunes into its own directory against one
 * database (here one after the other, as machines taking turns), the
 * second goes on from the first's trials, and `strata merge` joins the two
 * directories into one that exports. */
START_TEST(two_directories_share_one_study_and_merge) {
    fixture f;
    setup(&f);
    const char *storage = arena_text(f.a, "sqlite:///%s/shared.db", f.dir);
    const char *first = arena_text(f.a, "%s/machine-a", f.dir), *second = arena_text(f.a, "%s/machine-b", f.dir);
    char *out, *err;
    f.out = first;
    int rc = autotune(&f, ARGS("--space", SMALL_SPACE, "--storage", storage, "--study", "shared", "--trials", "3",
                               "--sampler", "random", "--sampler-seed", "2"),
                      &out, &err);
    ck_assert_msg(rc == 0, "the first machine failed (exit %d):\n%.2000s\n%.2000s", rc, out, err);
    f.out = second;
    rc = autotune(&f, ARGS("--space", SMALL_SPACE, "--storage", storage, "--study", "shared", "--trials", "6",
                           "--sampler", "random", "--sampler-seed", "3"),
                  &out, &err);
    ck_assert_msg(rc == 0, "the second machine failed (exit %d):\n%.2000s\n%.2000s", rc, out, err);
    ck_assert_has(out, "resumed with 3 trials");
    ck_assert_has(out, "[6/6] ");
    ck_assert_has(file_of(&f, "autotune.json"), "\"trials\": 6");
    /* the database is the shared one, not a study.db of the directory */
    struct stat st;
    ck_assert_int_ne(stat(arena_text(f.a, "%s/study.db", second), &st), 0);
    const char *merged = arena_text(f.a, "%s/merged", f.dir);
    rc = strata_spawn(f.a, f.dir, environ, ARGS("merge", first, second, "--out", merged), &out, &err);
    ck_assert_msg(rc == 0, "merge failed:\n%.3000s", err);
    f.out = merged;
    st_records rs = records_of(&f);
    ck_assert_uint_ge(rs.count, 2);
    st_records_free(&rs);
    exports(&f);
    teardown(&f);
}
END_TEST

/* A plugin rule that aborts at K = 2 would kill strata in the middle of a
 * rewrite: strata makes each point into code in a child first when plugins
 * are loaded, so the point is a crash and the session goes on. */
START_TEST(a_plugin_rule_that_crashes_is_a_crash_and_not_the_end) {
    fixture f;
    setup(&f);
    const char *plugin = arena_text(f.a, "%s/plugin_crashes.so", env_path("STRATA_TEST_PLUGINS"));
    char *out, *err;
    int rc = autotune(&f, ARGS("--space", "first(scan, test-crash(K=[0..3]))", "--plugin", plugin, "--trials", "8",
                               "--sampler", "random", "--sampler-seed", "1"),
                      &out, &err);
    ck_assert_msg(rc == 0, "autotune failed (exit %d):\n%.2000s\n%.2000s", rc, out, err);
    ck_assert_ptr_null(strstr(err, "the strata process died"));
    ck_assert_has(out, "crash ");
    st_records rs = records_of(&f);
    const st_record *two = NULL;
    for (size_t i = 0; i < rs.count; i++)
        if (rs.items[i].point == 2) two = &rs.items[i];
    ck_assert(two != NULL);
    ck_assert(two->status == ST_STATUS_CRASH);
    ck_assert_has(two->message, "rewriting and generating code: the process running it was killed by signal 6");
    st_records_free(&rs);
    teardown(&f);
}
END_TEST

/* The pid of the `strata explore … --serve` process writing into dir, or 0. */
static pid_t serving_strata(const char *dir) {
    DIR *proc = opendir("/proc");
    pid_t found = 0;
    for (struct dirent *e; proc && !found && (e = readdir(proc));) {
        char path[300], cmd[8192];
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
        FILE *fp = fopen(path, "rb");
        if (!fp) continue;
        size_t n = fread(cmd, 1, sizeof cmd - 1, fp);
        fclose(fp);
        cmd[n] = 0;
        bool serve = false, here = false, explore = false;
        for (size_t i = 0; i < n; i += strlen(cmd + i) + 1) {
            serve |= !strcmp(cmd + i, "--serve");
            here |= !strcmp(cmd + i, dir);
            explore |= !strcmp(cmd + i, "explore");
        }
        if (serve && here && explore) found = (pid_t)atoi(e->d_name);
    }
    if (proc) closedir(proc);
    return found;
}

/* The strata process itself dies (killed from outside): the autotuner
 * records the point it was evaluating as a crash, starts another strata and
 * finishes its budget. */
START_TEST(a_strata_that_dies_is_recorded_as_crash_and_replaced) {
    fixture f;
    setup(&f);
    pid_t pid = tune_in_background(&f, "8", "4", 1);
    /* killed while it evaluates a point (its mark is there), not between two */
    const char *mark = arena_text(f.a, "%s/serve-evaluating", f.out);
    for (int waited = 0; access(mark, F_OK) && waited < 3000; waited++) nanosleep(&(struct timespec){0, 10000000}, NULL);
    pid_t strata = serving_strata(f.out);
    ck_assert_msg(strata > 0, "no `strata explore --serve` for %s", f.out);
    kill(strata, SIGKILL);
    int status;
    ck_assert(waitpid(pid, &status, 0) == pid);
    const char *out = slurp_file(f.a, arena_text(f.a, "%s/tune.out", f.dir), NULL),
               *err = slurp_file(f.a, arena_text(f.a, "%s/tune.err", f.dir), NULL);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "autotune failed:\n%.2000s\n%.2000s", out, err);
    ck_assert_has(err, "the strata process died (killed by signal 9) evaluating point ");
    ck_assert_has(err, "starting another, which records the point as a crash");
    ck_assert_has(out, "[8/8] ");
    ck_assert_has(file_of(&f, "autotune.json"), "\"trials\": 8");
    st_records rs = records_of(&f);
    bool crashed = false;
    for (size_t i = 0; i < rs.count; i++)
        crashed |= rs.items[i].status == ST_STATUS_CRASH &&
                   strstr(rs.items[i].message, "the strata process evaluating it died") != NULL;
    st_records_free(&rs);
    ck_assert_msg(crashed, "no point was recorded as the crash");
    teardown(&f);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Workers of one study that die                                            */
/* ------------------------------------------------------------------------ */

/* One point: every trial of every worker draws it. */
#define ONE_POINT "parallel-scan(BS=32, BF=2, SE=2)"

/* The arguments of a worker of study `shared` in storage, tuning ONE_POINT
 * into DIR/NAME (after the Python that runs it, argv[0]); a point takes
 * long enough (150 runs of 2^16) to be killed in. */
static const char **worker_args(fixture *f, const char *storage, const char *heartbeat, const char *name) {
    const char *args[] = {env_path("STRATA_PYTHON"), env_path("STRATA_AUTOTUNE"), f->program, "--out",
                          arena_text(f->a, "%s/%s", f->dir, name), "--size", "N=65536", "--runs", "150", "--cache",
                          f->cache, "--strata", env_path("STRATA"), "--space", ONE_POINT, "--trials", "2", "--sampler",
                          "random", "--storage", storage, "--study", "shared", "--heartbeat", heartbeat, NULL};
    const char **argv = st_arena_alloc(f->a, sizeof args);
    memcpy(argv, args, sizeof args);
    return argv;
}

/* That worker started in a process group of its own (its output in
 * DIR/NAME.out and .err). */
static pid_t start_worker(fixture *f, const char *storage, const char *heartbeat, const char *name) {
    return spawn_in_group(f, worker_args(f, storage, heartbeat, name), name);
}

typedef struct storage_kind {
    const char *name, *scheme, *file, *heartbeat; /* the URL: SCHEME + the test's folder + / + FILE */
    bool elsewhere; /* the killed worker made to look as if it ran on another machine */
} storage_kind;

/* (SQLite's heartbeat is slower, so that the second worker starts within
 * the grace period and waits, as the did, rather than finding the
 * trial failed already) */
static const storage_kind storages[] = {
    {"journal", "journal:", "study.log", "1", true},
    {"sqlite", "sqlite:///", "study.db", "3", true},
    {"journal", "journal:", "study.log", "1", false},
};

/* The study's storage, opened by optuna in a script given the URL as argv[1]. */
#define OPEN_STORAGE                                                                                                   \
    "import sys, optuna\n"                                                                                             \
    "optuna.logging.set_verbosity(optuna.logging.WARNING)\n"                                                           \
    "url = sys.argv[1]\n"                                                                                              \
    "storage = optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend(url[8:])) "                   \
    "if url.startswith('journal:') else optuna.storages.RDBStorage(url)\n"

/* A worker killed (kill -9 of its process group: the autotuner and its
 * strata) while its strata evaluates a point leaves its trial running. A
 * second worker whose trial draws that point waited for it forever; now
 * it sees the first's heartbeat stop, fails its trial and evaluates the
 * point itself: the study ends with the killed trial failed and the point
 * evaluated by a finished one. */
START_TEST(a_worker_killed_mid_point_is_not_waited_for) {
    const storage_kind *kind = &storages[_i];
    fixture f;
    setup(&f);
    const char *storage = arena_text(f.a, "%s%s/%s", kind->scheme, f.dir, kind->file);
    pid_t first = start_worker(&f, storage, kind->heartbeat, "first");
    const char *mark = arena_text(f.a, "%s/first/serve-evaluating", f.dir);
    int status;
    for (int waited = 0; access(mark, F_OK) != 0; waited++) {
        ck_assert_msg(waitpid(first, &status, WNOHANG) == 0, "the first worker ended before it evaluated a point:\n%s",
                      slurp_file(f.a, arena_text(f.a, "%s/first.err", f.dir), NULL));
        ck_assert_msg(waited < 30000, "the first worker evaluated no point in 300 s");
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    kill(-first, SIGKILL);
    ck_assert(waitpid(first, &status, 0) == first);
    char *out, *err;
    if (kind->elsewhere) { /* another machine's worker: only its heartbeat can say it is gone */
        const char *move = OPEN_STORAGE "for t in optuna.load_study(study_name='shared', storage=storage).trials:\n"
                                        "    storage.set_trial_user_attr(t._trial_id, 'worker', 'elsewhere/pid:[1]/1')\n";
        int rc = program_spawn(f.a, f.dir, environ, env_path("STRATA_PYTHON"), ARGS("-c", move, storage), &out, &err);
        ck_assert_msg(rc == 0, "moving the killed worker elsewhere failed:\n%s", err);
    }
    /* the second, under a watchdog: the bug was a wait without end */
    cli c = {.a = f.a};
    snprintf(c.dir, sizeof c.dir, "%s", f.dir);
    const char **second = worker_args(&f, storage, kind->heartbeat, "second");
    status = end_within(&c, program_start(f.dir, environ, second[0], second + 1, "/dev/null"), 300,
                        "the second worker", &out, &err);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the second worker failed:\n%.2000s\n%.2000s", out, err);
    ck_assert_has(out, "best: " ONE_POINT " (point 0");
    if (!kind->elsewhere) /* on this machine, a process gone needs no heartbeat */
        ck_assert_has(err, "autotune: trial 1, which was evaluating point 0, lost its worker (its process on this "
                           "machine is gone): it is failed, and its point evaluated again");
    else if (!strcmp(kind->name, "journal")) /* (a journal's heartbeat is judged while waiting, always) */
        ck_assert_has(err, "autotune: trial 1, which was evaluating point 0, lost its worker (its heartbeat stopped): it "
                           "is failed, and trial 2 evaluates the point");
    /* the study, as optuna reads it: the killed trial failed, the point evaluated by a finished trial */
    const char *script = OPEN_STORAGE "for t in optuna.load_study(study_name='shared', storage=storage).trials:\n"
                                      "    print(t.number, t.state.name, t.user_attrs.get('point'), "
                                      "'reused_from' in t.user_attrs)\n";
    int rc = program_spawn(f.a, f.dir, environ, env_path("STRATA_PYTHON"), ARGS("-c", script, storage), &out, &err);
    ck_assert_msg(rc == 0, "reading the study failed:\n%s", err);
    ck_assert_msg(!strncmp(out, "0 FAIL 0 False\n", 15), "the killed worker's trial is not failed:\n%s", out);
    ck_assert_msg(strstr(out, "COMPLETE 0 False\n") != NULL, "no finished trial evaluated the point:\n%s", out);
    ck_assert_ptr_null(strstr(out, "RUNNING"));
    teardown(&f);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Bad input: a message that names the thing and the fix, exit 1          */
/* ------------------------------------------------------------------------ */

/* autotune with args fails with status 1 and a message holding `says`,
 * never a Python traceback. */
static char *refused(fixture *f, const char *const *args, const char *says) {
    char *out, *err;
    int rc = autotune(f, args, &out, &err);
    ck_assert_msg(rc == 1, "autotune %s: exit %d\n%.2000s\n%.2000s", args[1], rc, out, err);
    ck_assert_msg(!strstr(err, "Traceback"), "autotune %s gave a traceback:\n%.3000s", args[1], err);
    ck_assert_has(err, says);
    return err;
}

START_TEST(bad_storages_spaces_and_stratas_are_refused_with_a_message) {
    fixture f;
    setup(&f);
    const char *missing = arena_text(f.a, "journal:%s/no/such/folder/study.log", f.dir);
    refused(&f, ARGS("--space", SMALL_SPACE, "--storage", missing),
            arena_text(f.a, "the folder %s/no/such/folder does not exist; make it", f.dir));
    const char *journal = arena_text(f.a, "%s/study.log", f.dir);
    const char *damaged = "{\"op_code\": 0}\nnot json\n", *cut = "{\"op_code\": 0}\n{\"op_co";
    ck_assert(st_write_file(journal, damaged, strlen(damaged), NULL));
    refused(&f, ARGS("--space", SMALL_SPACE, "--storage", arena_text(f.a, "journal:%s", journal)),
            arena_text(f.a, "the journal %s cannot be used: line 2 is not a line of optuna's journal", journal));
    ck_assert(st_write_file(journal, cut, strlen(cut), NULL));
    refused(&f, ARGS("--space", SMALL_SPACE, "--storage", arena_text(f.a, "journal:%s", journal)),
            "its last line, line 2, is cut short (a worker killed while it wrote?); remove that line");
    refused(&f, ARGS("--space", SMALL_SPACE, "--storage", "nosuchdb://somewhere/study"),
            "--storage nosuchdb://somewhere/study: not a storage autotune can use");
    refused(&f, ARGS("--space", "parallel-scan(BS=[32, ", "--trials", "1"), "autotune: strata stopped before serving");
    refused(&f, ARGS("--space", SMALL_SPACE, "--strata", "/no/such/strata"),
            "autotune: cannot run strata (/no/such/strata): No such file or directory");
    /* a study of one space, then another space on it */
    char *out, *err;
    const char *storage = arena_text(f.a, "sqlite:///%s/shared.db", f.dir);
    int rc = autotune(&f, ARGS("--space", ONE_POINT, "--storage", storage, "--trials", "1"), &out, &err);
    ck_assert_msg(rc == 0, "the first study failed:\n%.2000s", err);
    f.out = arena_text(f.a, "%s/other", f.dir);
    err = refused(&f, ARGS("--space", SMALL_SPACE, "--storage", storage), "autotune: the study `strata` in ");
    ck_assert_has(err, "is of another space (`" ONE_POINT "`); this one is `" SMALL_SPACE "`");
    teardown(&f);
}
END_TEST

static Suite *autotune_suite(void) {
    Suite *s = suite_create("autotune");
    TCase *sv = tcase_create("serve");
    tcase_set_timeout(sv, 600);
    tcase_add_test(sv, serve_answers_each_point_with_its_record);
    tcase_add_test(sv, serve_records_constraints_and_refuses_what_it_cannot_do);
    tcase_add_test(sv, serve_records_the_point_a_dead_strata_was_evaluating_as_a_crash);
    suite_add_tcase(s, sv);
    TCase *at = tcase_create("autotune");
    tcase_set_timeout(at, 600);
    tcase_add_loop_test(at, each_sampler_finds_a_validated_point_in_the_drivers_format, 0,
                        (int)(sizeof samplers / sizeof *samplers));
    tcase_add_test(at, a_budget_in_minutes_ends_the_study);
    tcase_add_test(at, a_killed_study_resumes_from_its_database);
    tcase_add_test(at, two_directories_share_one_study_and_merge);
    tcase_add_test(at, a_plugin_rule_that_crashes_is_a_crash_and_not_the_end);
    tcase_add_test(at, a_strata_that_dies_is_recorded_as_crash_and_replaced);
    suite_add_tcase(s, at);
    TCase *workers = tcase_create("workers");
    tcase_set_timeout(workers, 600);
    tcase_add_loop_test(workers, a_worker_killed_mid_point_is_not_waited_for, 0,
                        (int)(sizeof storages / sizeof *storages));
    tcase_add_test(workers, bad_storages_spaces_and_stratas_are_refused_with_a_message);
    suite_add_tcase(s, workers);
    return s;
}

int main(void) {
    const char *python = getenv("STRATA_PYTHON");
    if (python && access(python, X_OK) != 0) {
        fprintf(stderr, "test_autotune: %s is missing: the autotuner's virtual environment is made by ./dev.sh test "
                        "(or ./dev.sh autotune)\n", python);
        return EXIT_FAILURE;
    }
    return run_suite(autotune_suite());
}
