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
