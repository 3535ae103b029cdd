/* tests/state_check.c — what tests/kill-9.sh asserts after each kill: the
 * files strata keeps read back whole. Exit 0 when they do, else 1 with a
 * line saying what is wrong.
 *
 *   state_check json FILE…            each parses as JSON
 *   state_check records FILE          every line complete, each a record, no point twice;
 *                                     prints how many
 *   state_check index FILE PROGRAM…   parses as strata's index and lists each program
 *   state_check export DIR…           an exported folder's files are one set: record.json
 *                                     names the SHA-256 of the kernels.cl and host.c beside it */
#include "codegen/codegen.h"
#include "explore/explore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad(const char *path, const char *what) {
    fprintf(stderr, "state_check: %s: %s\n", path, what);
    return 1;
}

static const st_json *parsed(st_arena *a, const char *path, char **text, size_t *len, st_err *err) {
    *text = st_read_file(path, len, err);
    return *text ? st_json_parse(a, path, *text, *len, err) : NULL;
}

static int check_json(st_arena *a, const char *path) {
    char *text;
    size_t len;
    st_err err = {0};
    const st_json *j = parsed(a, path, &text, &len, &err);
    free(text);
    return j ? 0 : bad(path, err.message);
}

static int check_records(st_arena *a, const char *path) {
    size_t len;
    st_err err = {0};
    char *text = st_read_file(path, &len, &err);
    if (!text) return bad(path, err.message);
    if (len && text[len - 1] != '\n') return free(text), bad(path, "its last line is not complete");
    size_t count = 0, cap = 64;
    double *points = malloc(cap * sizeof *points);
    int rc = 0;
    for (char *line = text; !rc && line < text + len;) {
        char *end = strchr(line, '\n');
        st_record r;
        const st_json *j = st_json_parse(a, path, line, (size_t)(end - line), &err);
        if (!j || !st_record_from_json(j, &r, &err)) {
            rc = bad(path, err.message);
            break;
        }
        for (size_t i = 0; i < count; i++)
            if (points[i] == (double)r.point) rc = bad(path, "a point is recorded twice");
        if (count == cap) points = realloc(points, (cap *= 2) * sizeof *points);
        points[count++] = (double)r.point;
        st_record_clear(&r);
        line = end + 1;
    }
    if (!rc) printf("%zu\n", count);
    free(points);
    free(text);
    return rc;
}

static int check_index(st_arena *a, const char *path, char **programs, int n) {
    char *text;
    size_t len;
    st_err err = {0};
    const st_json *j = parsed(a, path, &text, &len, &err);
    free(text);
    if (!j) return bad(path, err.message);
    const st_json *devices = st_json_get(j, "devices");
    if (!devices || devices->kind != ST_JSON_OBJECT) return bad(path, "no \"devices\"");
    for (int p = 0; p < n; p++) {
        bool found = false;
        for (size_t d = 0; d < devices->len && !found; d++)
            found = st_json_get(st_json_get(&devices->items[d], "programs"), programs[p]) != NULL;
        if (!found) return fprintf(stderr, "state_check: %s: %s is not listed\n", path, programs[p]), 1;
    }
    return 0;
}

/* DIR/NAME's SHA-256 is the one record.json gives under key */
static int same_sha(const char *dir, const st_json *record, const char *name, const char *key) {
    char path[4200], sha[65];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t len;
    st_err err = {0};
    char *text = st_read_file(path, &len, &err);
    if (!text) return bad(path, err.message);
    st_sha256_hex(text, len, sha);
    free(text);
    const char *want = st_json_get_string(record, key);
    if (!want || strcmp(want, sha)) return bad(path, "is not the file record.json describes: the export is not one set");
    return 0;
}

static int check_export(st_arena *a, const char *dir) {
    char path[4200], *text;
    size_t len;
    st_err err = {0};
    snprintf(path, sizeof path, "%s/record.json", dir);
    const st_json *j = parsed(a, path, &text, &len, &err);
    free(text);
    if (!j) return bad(path, err.message);
    return same_sha(dir, j, "kernels.cl", "kernels_sha256") | same_sha(dir, j, "host.c", "host_sha256");
}

int main(int argc, char **argv) {
    if (argc < 3) return fprintf(stderr, "usage: state_check json|records|index|export FILE …\n"), 2;
    st_arena *a = st_arena_new();
    int rc = 0;
    if (!strcmp(argv[1], "json"))
        for (int i = 2; i < argc; i++) rc |= check_json(a, argv[i]);
    else if (!strcmp(argv[1], "records"))
        rc = check_records(a, argv[2]);
    else if (!strcmp(argv[1], "export"))
        for (int i = 2; i < argc; i++) rc |= check_export(a, argv[i]);
    else if (!strcmp(argv[1], "index"))
        rc = check_index(a, argv[2], argv + 3, argc - 3);
    else
        rc = 2;
    st_arena_free(a);
    return rc;
}
