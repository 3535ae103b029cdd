/* tests/harness.h — what the Check suites share: programs from strings,
 * typed arrays in and out of the interpreter, and the suite runner. */
#ifndef STRATA_TESTS_HARNESS_H
#define STRATA_TESTS_HARNESS_H

#include "ir/ir.h"

#include <check.h>
#include <stdarg.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* Check's ck_assert_msg, on which every ck_assert_* is built, records a
 * "mark point" for each assertion that holds: a message down the test's
 * pipe, which the runner reads back with a memmove of what is left after
 * each. A suite that checks a million elements one assertion each spent
 * minutes there under ASan (three quarters of the filter suite's time).
 * The same assertion without the mark point: a failure reads as before;
 * a crash names the test, not the last assertion that held before it
 * (the sanitizers print the stack). */
#undef ck_assert_msg
#define ck_assert_msg(expr, ...) \
    ((expr) ? (void)0 : _ck_assert_failed(__FILE__, __LINE__, "Assertion '" #expr "' failed", ##__VA_ARGS__))

#define ck_assert_has(text, part) \
    ck_assert_msg(strstr((text), (part)) != NULL, "expected \"%s\" in:\n%s", (part), (text))

/* A scratch folder /tmp/strata-NAME-XXXXXX for a whole suite. The runner
 * makes it before the tests and removes it after: a failing check ends a
 * test's process at once, so a test cannot be trusted to clean up. */
/* How many times part occurs in text (overlaps counted). */
static inline int count_of(const char *text, const char *part) {
    int n = 0;
    for (const char *p = strstr(text, part); p; p = strstr(p + 1, part)) n++;
    return n;
}

static inline void scratch_make(char *dir, size_t cap, const char *name) {
    snprintf(dir, cap, "/tmp/strata-%s-XXXXXX", name);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        exit(EXIT_FAILURE);
    }
}

/* Remove a file, or a folder and everything in it. */
static inline void scratch_remove(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (!S_ISDIR(st.st_mode)) {
        unlink(path);
        return;
    }
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char sub[1024];
        size_t lp = strlen(path), ln = strlen(e->d_name);
        if (lp + ln + 2 > sizeof sub) continue;
        memcpy(sub, path, lp);
        sub[lp] = '/';
        memcpy(sub + lp + 1, e->d_name, ln + 1);
        scratch_remove(sub);
    }
    if (d) closedir(d);
    rmdir(path);
}

/* A path meson test puts in the environment (tests/meson.build); the test
 * fails when it is not there. */
static inline const char *env_path(const char *name) {
    const char *v = getenv(name);
    ck_assert_msg(v != NULL, "%s is not set (run through meson test)", name);
    return v;
}

/* STRATA_TESTS_ALL=1: the whole of the suites that sample by default. */
static inline bool st_tests_all(void) {
    const char *v = getenv("STRATA_TESTS_ALL");
    return v && !strcmp(v, "1");
}

/* Does the strategy at `index` of a suite's list run the large sizes (the
 * prime above 10^6)? Every one does in a plain build. In a sanitizer build,
 * several times slower (CI's second pass), only the first does, unless
 * STRATA_TESTS_ALL=1: memory errors show at small sizes as well, and the
 * plain build runs every size under every strategy. */
static inline bool st_test_big(int index) {
#if defined(__SANITIZE_ADDRESS__)
    return index == 0 || st_tests_all();
#else
    (void)index;
    return true;
#endif
}

/* Does a check at length n run for case `index` of its suite's list?
 * Every length in a plain build; in a sanitizer build those above 10^5
 * only where st_test_big says (the first case), so that CI's second pass
 * keeps within its time: the sanitizers see the same code at 1000. */
static inline bool st_test_length(int64_t n, int index) { return n <= 100000 || st_test_big(index); }

/* Parse and check src; fail the test with the error if it does not. */
static inline const st_program *parse_ok(st_ctx *cx, const char *src) {
    st_err err = {0};
    const st_program *p = st_parse_program(cx, "test.strata", src, strlen(src), &err);
    ck_assert_msg(p != NULL, "%s:%d:%d: %s\n--- in ---\n%s", err.loc.file, err.loc.line, err.loc.col,
                  err.message, src);
    return p;
}

/* Parse src expecting an error; returns it. */
static inline st_err parse_fails(st_ctx *cx, const char *src) {
    st_err err = {0};
    const st_program *p = st_parse_program(cx, "test.strata", src, strlen(src), &err);
    ck_assert_msg(p == NULL, "expected an error from:\n%s", src);
    return err;
}

/* Assert that src fails at line:col with a message containing `part`. */
#define ck_assert_error(cx, src, line_, col_, part)                                               \
    do {                                                                                          \
        st_err e_ = parse_fails((cx), (src));                                                     \
        ck_assert_msg(e_.loc.line == (line_) && e_.loc.col == (col_),                             \
                      "expected the error at %d:%d, got %d:%d: %s", (line_), (col_), e_.loc.line, \
                      e_.loc.col, e_.message);                                                    \
        ck_assert_msg(strstr(e_.message, (part)) != NULL, "expected \"%s\" in \"%s\"", (part),     \
                      e_.message);                                                                \
    } while (0)

/* The text of examples/NAME.strata (from $STRATA_EXAMPLES, which meson test
 * sets), kept in arena a. */
static inline const char *example_text(st_arena *a, const char *name) {
    const char *dir = getenv("STRATA_EXAMPLES");
    ck_assert_msg(dir != NULL, "STRATA_EXAMPLES is not set; run the suite through meson test");
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.strata", dir, name);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    ck_assert(fseek(f, 0, SEEK_END) == 0);
    long len = ftell(f);
    ck_assert(len >= 0 && fseek(f, 0, SEEK_SET) == 0);
    char *text = st_arena_alloc(a, (size_t)len + 1);
    ck_assert(text != NULL);
    ck_assert(fread(text, 1, (size_t)len, f) == (size_t)len);
    fclose(f);
    text[len] = 0;
    return text;
}

/* A one-dimensional array value over `data` (not copied). */
static inline st_value array_of(st_scalar_kind k, int64_t n, void *data, st_arena *a) {
    int64_t *dims = st_arena_alloc(a, sizeof *dims);
    dims[0] = n;
    st_value v;
    memset(&v, 0, sizeof v);
    v.kind = ST_VALUE_ARRAY;
    v.scalar = k;
    v.n = 1;
    v.u.a.dims = dims;
    v.u.a.data = data;
    return v;
}

static inline st_value scalar_of(st_scalar_kind k, st_scalar s) { return st_value_scalar(k, s); }

/* Run the def `main` (or the only def) of src on args through the inputs
 * binder, as the CLI does; fails the test on any error. */
static inline st_value eval_ok(st_ctx *cx, st_arena *a, const char *src, const st_value *args,
                               uint32_t nargs) {
    const st_program *p = parse_ok(cx, src);
    st_err err = {0};
    const st_def *d = st_program_entry(p, NULL, &err);
    ck_assert_msg(d != NULL, "%s", err.message);
    ck_assert_uint_eq(nargs, d->nparams);
    /* bind sizes from the argument shapes the way st_inputs does */
    st_binding env[32];
    size_t nenv = 0;
    for (uint32_t i = 0; i < d->nsizes; i++) {
        for (uint32_t k = 0; k < d->nparams; k++) {
            const st_type *t = d->params[k]->type;
            for (uint32_t dim = 0; t->kind == ST_TYPE_ARRAY; dim++, t = t->elem)
                if (t->size == d->sizes[i]->size) {
                    const st_value *v = &args[k];
                    while (v->kind == ST_VALUE_TUPLE) v = &v->u.items[0];
                    env[nenv++] = (st_binding){d->sizes[i]->u.name, v->u.a.dims[dim]};
                    k = d->nparams;
                    break;
                }
        }
    }
    for (uint32_t k = 0; k < d->nparams; k++)
        if (st_type_is_int(d->params[k]->type)) {
            int64_t v;
            ck_assert(st_scalar_as_i64(args[k].scalar, args[k].u.s, &v));
            env[nenv++] = (st_binding){d->params[k]->u.name, v};
        }
    st_value out;
    ck_assert_msg(st_eval(cx, d, args, env, nenv, a, &out, &err), "eval failed: %s", err.message);
    return out;
}

/* printf into the arena a. */
__attribute__((format(printf, 2, 3))) static inline const char *arena_text(st_arena *a, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = st_arena_alloc(a, (size_t)n + 1);
    ck_assert(s != NULL);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* The entry def (main, or the only one). */
static inline const st_def *entry_ok(const st_program *p) {
    st_err err = {0};
    const st_def *d = st_program_entry(p, NULL, &err);
    ck_assert_msg(d != NULL, "%s", err.message);
    return d;
}

/* Failures collected across many cases, so that one broken case does not
 * hide the others; the first few are kept, one per line. */
typedef struct faults {
    int n;
    st_buf text;
} faults;

__attribute__((format(printf, 2, 3))) static inline void fault(faults *f, const char *fmt, ...) {
    char line[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (f->n++ < 12) {
        st_buf_puts(&f->text, line);
        st_buf_puts(&f->text, "\n");
    }
}

static inline void no_faults(faults *f) {
    ck_assert_msg(f->n == 0, "%d failure(s); the first:\n%s", f->n, f->text.data ? f->text.data : "");
    st_buf_free(&f->text);
}

/* The whole file, NUL-terminated, in the arena (len may be NULL). */
static inline char *slurp_file(st_arena *a, const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot read %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = st_arena_alloc(a, (size_t)n + 1);
    ck_assert(fread(s, 1, (size_t)n, f) == (size_t)n);
    s[n] = 0;
    fclose(f);
    if (len) *len = (size_t)n;
    return s;
}

/* The first place a C file (.c, .h) of the project's folder `folder`
 * names word, in any case, the files named in except (NULL-terminated)
 * aside: "FOLDER/FILE:LINE: …" in a, or NULL; *files: how many it read. */
static inline const char *source_mention(st_arena *a, const char *folder, const char *word, const char *const *except,
                                         int *files) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/../%s", getenv("STRATA_TESTS"), folder);
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot list %s", dir);
    const char *found = NULL;
    *files = 0;
    for (struct dirent *e; !found && (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n < 3 || e->d_name[n - 2] != '.' || (e->d_name[n - 1] != 'c' && e->d_name[n - 1] != 'h')) continue;
        bool skip = false;
        for (const char *const *x = except; x && *x; x++) skip = skip || !strcmp(*x, e->d_name);
        if (skip) continue;
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        const char *text = slurp_file(a, path, NULL);
        (*files)++;
        int line = 1;
        for (const char *c = text; *c && !found; c++) {
            if (*c == '\n') line++;
            if (!strncasecmp(c, word, strlen(word))) {
                char *at = st_arena_alloc(a, 4600);
                snprintf(at, 4600, "%s/%s:%d: %.60s", folder, e->d_name, line, c);
                found = at;
            }
        }
    }
    closedir(d);
    return found;
}

static inline st_value npy_read_ok(st_arena *a, const char *path) {
    st_value v;
    st_err err = {0};
    ck_assert_msg(st_npy_read(a, path, &v, &err), "%s: %s", path, err.message);
    return v;
}

/* Run a suite; the exit status tells meson. */
static inline int run_suite(Suite *s) {
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
