/* tests/run_strata.h — running the `strata` executable from a test, as a user
 * would: the CLI suites share it. */
#ifndef STRATA_TESTS_RUN_STRATA_H
#define STRATA_TESTS_RUN_STRATA_H

#include "explore/explore.h"
#include "harness.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

/* The command line, for failure messages. */
static inline const char *strata_command_line(st_arena *a, const char *const *args) {
    st_buf b = {0};
    st_buf_puts(&b, "strata");
    for (const char *const *arg = args; *arg; arg++) st_buf_printf(&b, " %s", *arg);
    char *s = st_arena_alloc(a, b.len + 1);
    memcpy(s, b.data, b.len + 1);
    st_buf_free(&b);
    return s;
}

/* Start bin with args (NULL-terminated, without argv[0]), standard input
 * from the file input, in the environment env; stdout and stderr go to
 * DIR/.stdout and DIR/.stderr (files, not pipes: no deadlock on large
 * output). Returns its process id: program_end waits for it. */
static inline pid_t program_start(const char *dir, char *const *env, const char *bin, const char *const *args,
                                  const char *input) {
    const char *argv[64] = {bin};
    int argc = 1;
    for (const char *const *arg = args; *arg; arg++) {
        ck_assert_int_lt(argc, 63);
        argv[argc++] = *arg;
    }
    char out_path[512], err_path[512];
    snprintf(out_path, sizeof out_path, "%s/.stdout", dir);
    snprintf(err_path, sizeof err_path, "%s/.stderr", dir);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, input, O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid;
    int rc = posix_spawn(&pid, bin, &fa, NULL, (char *const *)argv, env);
    posix_spawn_file_actions_destroy(&fa);
    ck_assert_msg(rc == 0, "cannot start %s: %s", bin, strerror(rc));
    return pid;
}

/* Wait for pid (from program_start in dir): its wait status; its output
 * into *out and *err. */
static inline int program_end(st_arena *a, const char *dir, pid_t pid, char **out, char **err) {
    int status;
    ck_assert(waitpid(pid, &status, 0) == pid);
    const char *out_path = arena_text(a, "%s/.stdout", dir), *err_path = arena_text(a, "%s/.stderr", dir);
    *out = slurp_file(a, out_path, NULL);
    *err = slurp_file(a, err_path, NULL);
    unlink(out_path);
    unlink(err_path);
    return status;
}

/* Run bin ($STRATA for strata_spawn) as program_start does and wait for it.
 * Returns the exit status; dying on a signal, or a sanitizer's report,
 * fails the test (in a sanitizer build a memory error exits 1, which would
 * pass for a user error). */
static inline int program_spawn_with_input(st_arena *a, const char *dir, char *const *env, const char *bin,
                                           const char *const *args, const char *input, char **out, char **err) {
    int status = program_end(a, dir, program_start(dir, env, bin, args, input), out, err);
    /* (messages cut short: Check gives up on one that is too long) */
    ck_assert_msg(!WIFSIGNALED(status), "`%.500s` was killed by signal %d\nstderr:\n%.3000s",
                  strata_command_line(a, args), WIFSIGNALED(status) ? WTERMSIG(status) : 0, *err);
    ck_assert_msg(!strstr(*err, "Sanitizer") && !strstr(*err, "runtime error:"), "`%.500s` tripped a sanitizer:\n%.3000s",
                  strata_command_line(a, args), *err);
    return WEXITSTATUS(status);
}

static inline int program_spawn(st_arena *a, const char *dir, char *const *env, const char *bin, const char *const *args,
                                char **out, char **err) {
    return program_spawn_with_input(a, dir, env, bin, args, "/dev/null", out, err);
}

static inline int strata_spawn(st_arena *a, const char *dir, char *const *env, const char *const *args, char **out,
                               char **err) {
    const char *bin = getenv("STRATA");
    ck_assert_msg(bin != NULL, "STRATA is not set (run through meson test)");
    return program_spawn(a, dir, env, bin, args, out, err);
}

/* A test that runs the strata executable: an arena and a scratch folder it
 * runs in, made by cli_open and removed by cli_close. */
typedef struct cli {
    st_arena *a;
    char dir[256];
} cli;

static inline void cli_open(cli *c, const char *name) {
    c->a = st_arena_new();
    ck_assert(c->a != NULL);
    scratch_make(c->dir, sizeof c->dir, name);
}

static inline void cli_close(cli *c) {
    scratch_remove(c->dir);
    st_arena_free(c->a);
}

extern char **environ;

/* strata args in c's folder: its exit status, *out and *err its output */
static inline int cli_strata(cli *c, const char *const *args, char **out, char **err) {
    return strata_spawn(c->a, c->dir, environ, args, out, err);
}

/* ---- strata under a watchdog: for tests of bugs that were hangs ---- */

static inline double watchdog_now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Wait for pid (from program_start in c's folder) at most limit_s seconds;
 * past it, kill it and fail, saying `what`. Its wait status; its output in
 * *out and *err. A sanitizer's report fails the test. */
static inline int end_within(cli *c, pid_t pid, double limit_s, const char *what, char **out, char **err) {
    int status;
    for (double until = watchdog_now_s() + limit_s;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) break;
        if (watchdog_now_s() > until) {
            kill(pid, SIGKILL);
            program_end(c->a, c->dir, pid, out, err);
            ck_abort_msg("%s: still running after %.0f s; stderr:\n%.2000s", what, limit_s, *err);
        }
        nanosleep(&(struct timespec){0, 50000000}, NULL);
    }
    *out = slurp_file(c->a, arena_text(c->a, "%s/.stdout", c->dir), NULL);
    *err = slurp_file(c->a, arena_text(c->a, "%s/.stderr", c->dir), NULL);
    ck_assert_msg(!strstr(*err, "Sanitizer") && !strstr(*err, "runtime error:"), "%s tripped a sanitizer:\n%.3000s", what,
                  *err);
    return status;
}

/* Start strata with args in c's folder (standard input /dev/null). */
static inline pid_t strata_start(cli *c, const char *const *args) {
    const char *bin = getenv("STRATA");
    ck_assert_msg(bin != NULL, "STRATA is not set (run through meson test)");
    return program_start(c->dir, environ, bin, args, "/dev/null");
}

/* strata args in c's folder, which must end within limit_s: its exit
 * status (a signal fails the test). */
static inline int strata_within(cli *c, const char *const *args, double limit_s, char **out, char **err) {
    int status = end_within(c, strata_start(c, args), limit_s, strata_command_line(c->a, args), out, err);
    ck_assert_msg(WIFEXITED(status), "`%s` was killed by signal %d; stderr:\n%.2000s", strata_command_line(c->a, args),
                  WTERMSIG(status), *err);
    return WEXITSTATUS(status);
}

/* examples/NAME.strata */
static inline const char *cli_example(cli *c, const char *name) {
    return arena_text(c->a, "%s/%s.strata", getenv("STRATA_EXAMPLES"), name);
}

/* text written to c's folder as NAME.strata: its path */
static inline const char *cli_file(cli *c, const char *name, const char *text) {
    const char *path = arena_text(c->a, "%s/%s.strata", c->dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_msg(f != NULL, "%s", path);
    fputs(text, f);
    ck_assert(fclose(f) == 0);
    return path;
}

/* `strata explore` run with args, which give its --out DIR, in c's
 * folder: it succeeds, and DIR/results.csv is its report. */
static inline char *cli_explored(cli *c, const char *const *args) {
    const char *out_dir = NULL;
    for (size_t i = 0; args[i]; i++)
        if (!strcmp(args[i], "--out") && args[i + 1]) out_dir = args[i + 1];
    ck_assert_msg(out_dir != NULL, "cli_explored needs --out");
    char *out, *err;
    int rc = cli_strata(c, args, &out, &err);
    ck_assert_msg(rc == 0, "%s", err);
    return slurp_file(c->a, arena_text(c->a, "%s/results.csv", out_dir), NULL);
}

/* Where `strata export --into results` files a program's kernels for the
 * device the tests run on (the first: CI has PoCL alone). */
static inline const char *export_folder(st_arena *a, const char *results, const char *program) {
    st_device_info *list;
    size_t n;
    st_err e = {0};
    ck_assert_msg(st_devices_list(&list, &n, &e), "%s", e.message);
    char slug[128];
    st_device_slug(list[0].name, slug, sizeof slug);
    free(list);
    return arena_text(a, "%s/%s/%s", results, slug, program);
}

/* A NULL-terminated argument list: run(ARGS("check", path), &out, &err). */
#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

#endif
