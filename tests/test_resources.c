/* tests/test_resources.c — processes and resources (issue 19): the children
 * of `strata explore` die with it, SIGTERM and SIGINT end it cleanly with
 * what is recorded intact, the reference interpreter keeps --timeout, and
 * neither a space nor an input file can take unbounded memory or time
 * before a word is said. Every strata run here has a watchdog: the bugs
 * these tests catch are hangs. */
#include "harness.h"
#include "run_strata.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static void sleep_s(double s) {
    struct timespec t = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&t, NULL);
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- children ---- */

/* The children of pid, as /proc lists them: how many (at most max) into kids. */
static int children_of(pid_t pid, pid_t *kids, int max) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
    FILE *f = fopen(path, "r");
    int n = 0, k;
    while (f && n < max && fscanf(f, "%d", &k) == 1) kids[n++] = k;
    if (f) fclose(f);
    return n;
}

/* A child of pid that has been there for `lasting` seconds (the one stuck
 * on the hanging variant or reference, not the short device probe), within
 * a minute. */
static pid_t child_lasting(pid_t pid, double lasting) {
    pid_t seen = 0;
    double since = 0;
    for (double until = now_s() + 60; now_s() < until; sleep_s(0.05)) {
        pid_t kids[16];
        int n = children_of(pid, kids, 16);
        bool still = false;
        for (int i = 0; i < n; i++) still |= kids[i] == seen;
        if (!still) {
            seen = n ? kids[0] : 0;
            since = now_s();
        } else if (now_s() - since >= lasting) {
            return seen;
        }
        int status;
        ck_assert_msg(waitpid(pid, &status, WNOHANG) == 0, "strata ended before a child of it lasted %g s", lasting);
    }
    ck_abort_msg("no child of strata lasted %g s within a minute", lasting);
    return 0;
}

/* Every descendant this process adopted (it is their subreaper) has ended
 * within limit_s; else they are killed and the test fails. */
static void no_descendants_within(double limit_s, pid_t suspect, const char *what) {
    for (double until = now_s() + limit_s;; sleep_s(0.05)) {
        int status;
        pid_t r = waitpid(-1, &status, WNOHANG);
        if (r < 0 && errno == ECHILD) return;
        if (now_s() > until) {
            if (suspect > 0) kill(suspect, SIGKILL);
            while (waitpid(-1, &status, 0) > 0) {
            }
            ck_abort_msg("%s: a child of strata (pid %d) outlived it by %.0f s", what, (int)suspect, limit_s);
        }
    }
}

/* ---- the fixture: a folder, the hanging plugin, a program of [N]i32 ---- */

static cli c;
static const char *program, *plugin, *hang_program, *cache;

static void setup(void) {
    cli_open(&c, "resources");
    /* orphans of the strata started here come to this process: whether
     * they outlive strata can be seen, and they can be cleaned up */
    ck_assert(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
    program = cli_file(&c, "scan", "def main(xs: [N]i32): [N]i32 = xs |> scan(+, 0)\n");
    /* its interpretation never ends: 2^40 steps an element */
    hang_program = cli_file(&c, "hang", "def main(xs: [N]i32): [N]i32 =\n"
                                         "  xs |> map(x => x |> iterate(1099511627776i64, y => (y * 3 + x) % 1001))\n");
    plugin = arena_text(c.a, "%s/plugin_hangs.so", env_path("STRATA_TEST_PLUGINS"));
    cache = arena_text(c.a, "%s/cache", c.dir);
}

static void teardown(void) { cli_close(&c); }

/* explore the scan program over space with the hanging plugin and the
 * time limit timeout, into out */
#define EXPLORE_HANGS(space, out, timeout)                                                                           \
    ARGS("explore", program, "--plugin", plugin, "--space", space, "--size", "N=64", "--runs", "7", "--out", out, \
         "--timeout", timeout, "--jobs", "1", "--cache", cache)

/* K = 1: the variant's kernel never ends; the reference is quick */
#define HANGS "first(scan, test-hang(K=1))"
#define HANGS_SECOND "first(scan, test-hang(K=[0..1]))"

/* ---- 8: children die with their parent ---- */

START_TEST(kill_9_of_explore_leaves_no_child_running) {
    const char *out = arena_text(c.a, "%s/o", c.dir);
    pid_t pid = strata_start(&c, EXPLORE_HANGS(HANGS, out, "300"));
    pid_t stuck = child_lasting(pid, 1.0); /* checking the variant that never ends */
    ck_assert(kill(pid, SIGKILL) == 0);
    int status;
    ck_assert(waitpid(pid, &status, 0) == pid);
    no_descendants_within(5, stuck, "kill -9 of strata explore");
}
END_TEST

/* The state letter of process pid (R, S, Z, …), or 0 when it is gone. */
static char state_of(pid_t pid) {
    char path[64], text[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) fclose(f);
    text[n] = 0;
    const char *end = strrchr(text, ')'); /* after the command's name, which may hold anything */
    return end && end[1] == ' ' ? end[2] : 0;
}

/* A child whose parent cannot kill it (stopped here with SIGSTOP) ends by
 * itself a few seconds past its deadline. */
START_TEST(a_child_ends_itself_past_its_deadline) {
    const char *out = arena_text(c.a, "%s/o", c.dir);
    pid_t pid = strata_start(&c, EXPLORE_HANGS(HANGS, out, "4"));
    pid_t stuck = child_lasting(pid, 2.0);
    ck_assert(kill(pid, SIGSTOP) == 0);
    double until = now_s() + 30;
    while (state_of(stuck) != 'Z' && state_of(stuck) != 0 && now_s() < until) sleep_s(0.1);
    char state = state_of(stuck);
    if (state != 'Z' && state != 0) kill(stuck, SIGKILL);
    kill(pid, SIGKILL);
    kill(pid, SIGCONT);
    int status;
    ck_assert(waitpid(pid, &status, 0) == pid);
    no_descendants_within(5, stuck, "strata killed");
    ck_assert_msg(state == 'Z' || state == 0, "the child was still running (%c) 30 s after its parent stopped", state);
}
END_TEST

/* SIGTERM while a variant hangs: strata kills its child, keeps every
 * record (the file is the very same), writes the reports over them, says
 * how far it got, and exits 143; the same command then goes on. */
START_TEST(sigterm_ends_explore_cleanly_and_keeps_the_records) {
    const char *out = arena_text(c.a, "%s/o", c.dir), *records = arena_text(c.a, "%s/results.jsonl", out);
    char *o, *e;
    /* first an exploration of both points, the hanging one cut at 3 s; then
     * its record dropped, as if that point were never finished */
    int rc = strata_within(&c, EXPLORE_HANGS(HANGS_SECOND, out, "3"), 120, &o, &e);
    ck_assert_msg(rc == 0, "%s", e);
    char *all = slurp_file(c.a, records, NULL);
    char *second = strstr(all, "\n{");
    ck_assert_msg(second != NULL, "two records expected:\n%s", all);
    second[1] = 0;
    ck_assert_has(all, "\"point\": 0");
    FILE *f = fopen(records, "w");
    ck_assert(f && fputs(all, f) >= 0 && fclose(f) == 0);
    unlink(arena_text(c.a, "%s/results.csv", out));

    pid_t pid = strata_start(&c, EXPLORE_HANGS(HANGS_SECOND, out, "300"));
    pid_t stuck = child_lasting(pid, 1.0);
    ck_assert(kill(pid, SIGTERM) == 0);
    int status = end_within(&c, pid, 30, "strata explore after SIGTERM", &o, &e);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 143, "status %d; stderr:\n%s", status, e);
    ck_assert_has(e, "interrupted by SIGTERM: 1 of 2 points recorded in");
    ck_assert_str_eq(slurp_file(c.a, records, NULL), all);
    ck_assert_has(slurp_file(c.a, arena_text(c.a, "%s/results.csv", out), NULL), "test-hang(K=0)");
    ck_assert_msg(kill(stuck, 0) != 0, "the child checking the hanging variant is still there");
    no_descendants_within(5, stuck, "SIGTERM of strata explore");

    rc = strata_within(&c, EXPLORE_HANGS(HANGS_SECOND, out, "3"), 120, &o, &e);
    ck_assert_msg(rc == 0, "%s", e);
    ck_assert_has(o, "points: 2 in this shard, 1 already recorded");
    ck_assert_has(o, "timeout 1");
}
END_TEST

/* SIGINT (^C) while the reference is computed: exit 130, no child left. */
START_TEST(sigint_while_the_reference_runs_exits_130) {
    const char *out = arena_text(c.a, "%s/o", c.dir);
    pid_t pid = strata_start(&c, ARGS("explore", hang_program, "--space", "parallel-scan(BS=[32, 64], BF=2, SE=1)", "--size",
                               "N=64", "--out", out, "--timeout", "300", "--cache", cache));
    pid_t stuck = child_lasting(pid, 1.0);
    ck_assert(kill(pid, SIGINT) == 0);
    char *o, *e;
    int status = end_within(&c, pid, 30, "strata explore after SIGINT", &o, &e);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 130, "status %d; stderr:\n%s", status, e);
    ck_assert_has(e, "interrupted by SIGINT");
    no_descendants_within(5, stuck, "SIGINT of strata explore");
}
END_TEST

/* ---- 10: the reference interpreter keeps --timeout ---- */

START_TEST(a_reference_past_the_time_limit_is_an_error) {
    const char *out = arena_text(c.a, "%s/o", c.dir);
    char *o, *e;
    int rc = strata_within(&c, ARGS("explore", hang_program, "--space", "parallel-scan(BS=[32, 64], BF=2, SE=1)", "--size",
                                    "N=64", "--out", out, "--timeout", "2", "--cache", cache),
                           120, &o, &e);
    ck_assert_int_eq(rc, 1);
    ck_assert_has(e, arena_text(c.a, "%s:1:5: error: the reference interpreter did not finish `main` within the time limit of 2 s",
                                hang_program));
    ck_assert_has(e, "--timeout");
    no_descendants_within(5, 0, "the reference past its time");
}
END_TEST

/* ---- 9: bounded spaces and files ---- */

START_TEST(a_space_too_large_is_refused_before_any_work) {
    const char *out = arena_text(c.a, "%s/o", c.dir);
    char *o, *e;
    int rc = strata_within(&c, ARGS("explore", program, "--space", "lookback(M=[1..65536], WG=[1..1024], LW=[1..1024])",
                                    "--size", "N=64", "--out", out, "--cache", cache),
                           60, &o, &e);
    ck_assert_int_eq(rc, 1);
    ck_assert_has(e, "the space has 68719476736 points, more than the limit of 1000000");
    ck_assert_has(e, "--max-points N");
    struct stat st;
    ck_assert_msg(stat(out, &st) != 0, "a refused exploration made %s", out);
    /* the limit is the flag's */
    rc = strata_within(&c, ARGS("explore", program, "--space", "parallel-scan(BS=[32, 64], BF=2, SE=[1, 2])", "--size",
                                "N=64", "--out", out, "--max-points", "3"),
                       60, &o, &e);
    ck_assert_int_eq(rc, 1);
    ck_assert_has(e, "the space has 4 points, more than the limit of 3");
    rc = strata_within(&c, ARGS("explore", program, "--space", "parallel-scan(BS=[32, 64, 128], BF=2, SE=[1, 2])", "--size",
                                "N=64", "--out", out, "--max-points", "2", "--shard", "0/2"),
                       60, &o, &e);
    ck_assert_int_eq(rc, 1);
    ck_assert_has(e, "the space has 6 points, 3 in this shard: more than the limit of 2");
    rc = strata_within(&c, ARGS("explore", program, "--space", "parallel-scan(BS=32, BF=2, SE=[3, 5])", "--size", "N=64",
                                "--out", out, "--max-points", "2", "--cache", cache),
                       120, &o, &e);
    ck_assert_msg(rc == 0, "%s", e);
    ck_assert_has(o, "points: 2 in this shard");
}
END_TEST

START_TEST(a_program_that_never_ends_is_refused) {
    char *o, *e;
    ck_assert_int_eq(strata_within(&c, ARGS("check", "/dev/zero"), 60, &o, &e), 1);
    ck_assert_has(e, "/dev/zero: error: is a character device, not a regular file");
    /* a regular file past the limit, grown sparse (nothing written) */
    const char *big = arena_text(c.a, "%s/big.strata", c.dir);
    FILE *f = fopen(big, "w");
    ck_assert(f != NULL && ftruncate(fileno(f), (off_t)17 << 20) == 0);
    fclose(f);
    ck_assert_int_eq(strata_within(&c, ARGS("check", big), 60, &o, &e), 1);
    ck_assert_has(e, "big.strata: error: is larger than 16 MiB, the most strata reads of a program");
}
END_TEST

/* A .npy header of shape (10^11,) int32 written to path, and then, when
 * sparse, that much data (of zeros, none written: a sparse file) */
static void write_huge_header(const char *npy, bool sparse) {
    char header[128];
    int n = snprintf(header, sizeof header, "{'descr': '<i4', 'fortran_order': False, 'shape': (100000000000,), }");
    while ((10 + n + 1) % 64) header[n++] = ' ';
    header[n++] = '\n';
    FILE *f = fopen(npy, "wb");
    if (!f) return;
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    fputc(n & 0xff, f);
    fputc(n >> 8, f);
    fwrite(header, 1, (size_t)n, f);
    fflush(f);
    if (sparse) ck_assert(ftruncate(fileno(f), (off_t)(10 + n) + (off_t)400000000000) == 0);
    fclose(f);
}

/* An .npy header alone must not make strata allocate without bound: the
 * file's size tells whether the data is there (a pipe, which would not
 * tell, is refused), and a shape past the limit is refused, naming it. */
START_TEST(an_npy_shape_past_the_limit_is_refused) {
    const char *npy = arena_text(c.a, "%s/huge.npy", c.dir), *input = arena_text(c.a, "xs=%s", npy);
    char *o, *e;
    write_huge_header(npy, false);
    ck_assert_int_eq(strata_within(&c, ARGS("eval", program, "--input", input), 60, &o, &e), 1);
    ck_assert_has(e, "is truncated: its shape needs 400000000000 bytes of data but it has 0");
    write_huge_header(npy, true);
    ck_assert_int_eq(strata_within(&c, ARGS("eval", program, "--input", input), 60, &o, &e), 1);
    ck_assert_has(e, "its shape needs 400000000000 bytes of data, more than 16 GiB, the most strata reads of a .npy file");
}
END_TEST

START_TEST(reading_a_file_stops_at_its_limit) {
    const char *path = arena_text(c.a, "%s/hundred", c.dir);
    char bytes[101];
    memset(bytes, 'x', sizeof bytes);
    st_err err = {0};
    size_t len;
    ck_assert(st_write_file(path, bytes, 100, &err));
    char *text = st_read_file_at_most(path, 100, "a test file", &len, &err);
    ck_assert_msg(text != NULL, "%s", err.message);
    ck_assert_uint_eq(len, 100);
    free(text);
    ck_assert(st_write_file(path, bytes, 101, &err));
    ck_assert_ptr_null(st_read_file_at_most(path, 100, "a test file", &len, &err));
    ck_assert_str_eq(err.message, "is larger than 100 bytes, the most strata reads of a test file");
    ck_assert_str_eq(err.loc.file, path);
    ck_assert_ptr_null(st_read_file_at_most("/dev/zero", 5000, "a test file", &len, &err));
    ck_assert_has(err.message, "is a character device, not a regular file");
}
END_TEST

static Suite *resources_suite(void) {
    Suite *s = suite_create("resources");
    TCase *proc = tcase_create("processes");
    tcase_set_timeout(proc, 600);
    tcase_add_checked_fixture(proc, setup, teardown);
    tcase_add_test(proc, kill_9_of_explore_leaves_no_child_running);
    tcase_add_test(proc, sigterm_ends_explore_cleanly_and_keeps_the_records);
    tcase_add_test(proc, sigint_while_the_reference_runs_exits_130);
    tcase_add_test(proc, a_child_ends_itself_past_its_deadline);
    tcase_add_test(proc, a_reference_past_the_time_limit_is_an_error);
    suite_add_tcase(s, proc);
    TCase *bounds = tcase_create("bounds");
    tcase_set_timeout(bounds, 600);
    tcase_add_checked_fixture(bounds, setup, teardown);
    tcase_add_test(bounds, a_space_too_large_is_refused_before_any_work);
    tcase_add_test(bounds, a_program_that_never_ends_is_refused);
    tcase_add_test(bounds, an_npy_shape_past_the_limit_is_refused);
    tcase_add_test(bounds, reading_a_file_stops_at_its_limit);
    suite_add_tcase(s, bounds);
    return s;
}

int main(void) { return run_suite(resources_suite()); }
