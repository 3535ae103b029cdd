/* ir/program.c — from source text (or a file) to a checked program. */
#include "ast.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const st_program *st_parse_program(st_ctx *cx, const char *file, const char *src, size_t len,
                                   st_err *err) {
    st_arena *scratch = st_arena_new();
    if (!scratch) return st_fail_internal(err, "out of memory"), NULL;
    const char *name = st_intern_cstr(cx, file);
    ast_program ap;
    const st_program *p = NULL;
    if (name && st_ast_parse(cx, scratch, name, src, len, &ap, err))
        p = st_ast_elaborate(cx, name, &ap, err);
    st_arena_free(scratch);
    return p;
}

/* "16 MiB", "1 GiB": a limit as people read it. */
static void size_text(size_t bytes, char *out, size_t cap) {
    if (bytes >= ((size_t)1 << 30) && bytes % ((size_t)1 << 30) == 0) snprintf(out, cap, "%zu GiB", bytes >> 30);
    else if (bytes >= ((size_t)1 << 20) && bytes % ((size_t)1 << 20) == 0) snprintf(out, cap, "%zu MiB", bytes >> 20);
    else snprintf(out, cap, "%zu bytes", bytes);
}

static char *too_large(const char *path, size_t max, const char *kind, st_err *err) {
    char limit[32];
    size_text(max, limit, sizeof limit);
    st_fail(err, (st_loc){path, 0, 0}, "is larger than %s, the most strata reads of %s", limit, kind);
    return NULL;
}

char *st_read_file_at_most(const char *path, size_t max, const char *kind, size_t *len, st_err *err) {
    struct stat st;
    if (stat(path, &st) != 0)
        return st_fail(err, (st_loc){path, 0, 0}, "cannot read the file: %s", strerror(errno)), NULL;
    if (S_ISDIR(st.st_mode)) return st_fail(err, (st_loc){path, 0, 0}, "is a directory, not a file"), NULL;
    /* a regular file's size is known before reading; a pipe or a device
     * (which may never end) is read up to the limit and no further */
    if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > max) return too_large(path, max, kind, err);
    FILE *f = fopen(path, "rb");
    if (!f) return st_fail(err, (st_loc){path, 0, 0}, "cannot read the file: %s", strerror(errno)), NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    bool over = false;
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n < cap) continue;
        if (n > max) {
            over = true;
            break;
        }
        size_t next = cap > max / 2 ? max + 1 : 2 * cap; /* one byte past the limit tells a longer file */
        char *bigger = realloc(buf, next + 1);
        if (!bigger) free(buf);
        buf = bigger;
        cap = next;
    }
    over = over || n > max; /* a limit below the first buffer's size */
    bool failed = ferror(f);
    fclose(f);
    if (over) {
        free(buf);
        return too_large(path, max, kind, err);
    }
    if (!buf) return st_fail_internal(err, "out of memory reading %s", path), NULL;
    if (failed) {
        free(buf);
        return st_fail(err, (st_loc){path, 0, 0}, "cannot read the file"), NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

char *st_read_file(const char *path, size_t *len, st_err *err) {
    return st_read_file_at_most(path, ST_FILE_MAX, "a file", len, err);
}

bool st_make_dirs(const char *path, st_err *err) {
    char buf[4096];
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof buf) return st_fail(err, (st_loc){0}, "bad directory name `%s`", path);
    memcpy(buf, path, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (buf[i] != '/' && buf[i] != 0) continue;
        char c = buf[i];
        buf[i] = 0;
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return st_fail(err, (st_loc){path, 0, 0}, "cannot create the directory: %s", strerror(errno));
        buf[i] = c;
    }
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return st_fail(err, (st_loc){path, 0, 0}, "is not a directory");
    return true;
}

const st_program *st_load_program(st_ctx *cx, const char *path, char **text, st_err *err) {
    size_t len;
    char *src = st_read_file_at_most(path, ST_PROGRAM_FILE_MAX, "a program", &len, err);
    if (!src) return NULL;
    const st_program *p = st_parse_program(cx, path, src, len, err);
    if (text) *text = src;
    else free(src);
    return p;
}

const st_def *st_program_entry(const st_program *p, const char *name, st_err *err) {
    const char *want = name ? name : "main";
    for (uint32_t i = 0; i < p->ndefs; i++)
        if (!strcmp(p->defs[i].name, want)) return &p->defs[i];
    if (!name && p->ndefs == 1) return &p->defs[0];
    st_buf b = {0};
    for (uint32_t i = 0; i < p->ndefs; i++) st_buf_printf(&b, "%s`%s`", i ? ", " : "", p->defs[i].name);
    st_fail(err, (st_loc){p->file, 0, 0}, "there is no def `%s`%s; the file defines %s", want,
            name ? "" : " (pick one with --entry NAME)", b.data ? b.data : "nothing");
    st_buf_free(&b);
    return NULL;
}
